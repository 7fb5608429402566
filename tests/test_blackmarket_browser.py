"""Black Market's web page in a real browser (Debian's Chromium, Playwright): pick the game
on the main page's set-up, then play a whole game against the bots to the end screen, at
1440x900 with the mouse and keys and at 390x844 by touch, checking at every decision that
nothing scrolls sideways and that your hand and your choices are inside the window. Fails
(not skipped) without Chromium, like tests/test_browser.py."""

from __future__ import annotations

import random

import pytest

from tests.test_browser import ARGS, CHROMIUM, SIZES, check_card_tip, check_layout, require_chromium, server_url  # noqa: F401

pytestmark = pytest.mark.browser

# Watches the banner over the board: every bot move it showed, one at a time.
WATCH_BANNER = """
window.__moves = [];
document.addEventListener('DOMContentLoaded', () => {
  new MutationObserver(() => {
    const b = document.getElementById('banner');
    if (b && !b.hidden && b.textContent) window.__moves.push(b.textContent);
  }).observe(document.body, {subtree: true, childList: true, attributes: true, attributeFilter: ['hidden']});
});
"""


def _settled(page) -> str:
    page.wait_for_function("['your_turn', 'over'].includes(document.body.dataset.status)"
                           " && !document.body.classList.contains('busy')", timeout=120_000)
    return page.evaluate("document.body.dataset.status")


def _play(browser, server_url: str, size: str, players: int, mode: str, seed: int) -> None:  # noqa: F811
    phone = size == "phone"
    context = browser.new_context(viewport=SIZES[size], has_touch=phone, is_mobile=phone)
    page = context.new_page()
    problems: list[str] = []
    page.on("pageerror", lambda exc: problems.append(f"page error: {exc}"))
    page.on("console", lambda m: problems.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
    page.add_init_script(WATCH_BANNER)
    page.add_init_script("localStorage.setItem('blackmarket.speed', '60')")  # bot moves one at a time, quickly

    # While the engine is not loaded yet, the set-up says what is loading.
    page.route("**/api/black-market/status*", lambda route: route.fulfill(
        json={"ready": False, "stage": "Compiling the Black Market engine"}))
    page.goto(server_url + "/")
    (page.tap if phone else page.click)("#pick-bm")  # the game is chosen on the set-up page
    page.wait_for_selector("#opponents select", state="attached")
    page.select_option("#players", str(players))
    page.select_option("#mode", mode)
    page.select_option("#seat", "1")
    selects = page.locator("#opponents select")
    assert selects.count() == players - 1
    assert "(Medium: blocks what you could buy)" in selects.first.inner_text()  # bots with a difficulty
    page.fill("#seed", str(seed))
    page.evaluate("window.__stages = []; new MutationObserver(() => window.__stages.push("
                  "document.getElementById('loading-text').textContent)).observe("
                  "document.getElementById('loading-text'), {childList: true})")
    # The new game's POST is held until the page has shown the stage: otherwise, when the
    # engine is already compiled in this server, the game can be ready before the status
    # answer arrives, and the page rightly never shows a loading stage.
    held = []
    page.route("**/api/black-market/games", lambda route: held.append(route)
               if route.request.method == "POST" else route.continue_())
    (page.tap if phone else page.click)("#start")
    page.wait_for_function("window.__stages.some(t => t.includes('Compiling the Black Market engine'))",
                           timeout=120_000)
    page.unroute("**/api/black-market/status*")
    for _ in range(600):  # the POST reaches the route handler during Playwright's dispatch
        if held:
            break
        page.wait_for_timeout(50)
    assert len(held) == 1, f"expected the one new-game request to be held, got {len(held)}"
    held[0].continue_()
    page.unroute("**/api/black-market/games")
    status = _settled(page)
    assert page.locator("#loading").is_hidden()

    rng = random.Random(seed)
    decisions = keys = tips = 0
    while status != "over":
        assert decisions < 400, "the game did not end within 400 decisions"
        check_layout(page, f"{size}, decision {decisions}")
        # The map: six slots, each a card (or an empty slot) with the side it faces.
        assert page.locator("#map .bm-slot").count() == 6
        assert page.locator("#map .bm-card").count() == 6
        # The dice (two, or three with Third Die) and every seat with hand size and points.
        assert page.locator("#dice .die").count() >= 1
        seats = page.locator(".bm-seat")
        assert seats.count() == players and page.locator(".bm-seat.you").count() == 1
        for q in range(players):
            seat = page.locator(f".bm-seat[data-seat='{q}']")
            assert "pt" in seat.inner_text() and "in hand" in seat.inner_text()
            if q != 1:  # seats named by their bot, with a difficulty label
                assert seat.locator(".level").count() == 1
        assert page.locator("#hand .bm-hand-card").count() == 3
        # Card text on hover (mouse) or tap (touch): a map card or a card in hand.
        if tips < 4:
            cards = page.locator("#map .bm-card.has-tip, #hand .bm-hand-card").all()
            card = rng.choice(cards)
            check_card_tip(page, card, phone, f"{size}, decision {decisions}, after showing a card")
            tips += 1
        choices = page.locator("#choices button.choice")
        n = choices.count()
        assert n >= 1  # BM-12.3: one option is the engine's unless only the hand made it single
        before = page.evaluate("document.body.dataset.decision")
        if not phone and n <= 9 and rng.random() < 0.5:  # the keys 1-9 choose
            page.keyboard.press(str(rng.randrange(n) + 1))
            keys += 1
        elif phone:
            choices.nth(rng.randrange(n)).tap()
        else:
            choices.nth(rng.randrange(n)).click()
        decisions += 1
        page.wait_for_function("(b) => document.body.dataset.decision !== b", arg=before, timeout=120_000)
        status = _settled(page)

    # The end screen: who won, standings of every seat with points, the record to download.
    result = page.locator("#result")
    assert result.is_visible()
    text = result.inner_text()
    assert "Game over after" in text and ("wins" in text or "loses" in text or "You finish" in text)
    assert page.locator("#result .standings tbody tr").count() == players
    assert page.locator("#result a[download]").count() == 1
    assert page.locator("#choices button.choice").count() == 0
    assert page.evaluate("document.scrollingElement.scrollWidth <= window.innerWidth")
    assert decisions >= 3 and tips >= 3
    if not phone:
        assert keys >= 1
    moves = page.evaluate("window.__moves")
    assert len(moves) >= 3 and all(": " in m for m in moves), "the bots' moves were not shown one at a time"
    assert not problems, problems
    context.close()


@pytest.mark.parametrize("size,players,mode,seed", [("desktop", 4, "teams", 5), ("phone", 6, "ffa", 8)])
def test_play_a_whole_black_market_game(server_url, size, players, mode, seed):  # noqa: F811
    require_chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            _play(browser, server_url, size, players, mode, seed)
        finally:
            browser.close()
