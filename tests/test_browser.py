"""The web page in a real browser: Debian's Chromium driven by Playwright plays whole games
against the bots, with the mouse and keys at 1440x900 and by touch at 390x844, checking at
every decision that nothing scrolls sideways and that your hand and choices are in view.

`make test` installs Chromium first (`make browser-deps`); without it this test fails
and says so (it is not skipped).
"""

from __future__ import annotations

import os
import random
import re
import shutil
import socket
import threading
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.browser

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--no-first-run", "--disable-sync"]
ROOT = Path(__file__).resolve().parents[1]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server_url():
    import uvicorn

    from ripmarket_env.app.server import create_app

    port = _free_port()
    server = uvicorn.Server(uvicorn.Config(create_app(max_games=8), host="127.0.0.1", port=port,
                                           log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not server.started:
        assert thread.is_alive(), "the server thread stopped"
        assert time.monotonic() < deadline, "the server did not start"
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(timeout=30)


def require_chromium() -> None:
    """Fail (not skip) when Debian's Chromium is missing, saying how to install it."""
    if not (os.path.exists(CHROMIUM) and os.access(CHROMIUM, os.X_OK)):
        pytest.fail(f"{CHROMIUM} is not installed: run `make browser-deps` (apt-get install -y chromium)",
                    pytrace=False)


def _settled(page) -> str:
    page.wait_for_function(
        "['your_turn', 'over'].includes(document.body.dataset.status) && !document.body.classList.contains('busy')",
        timeout=300_000,
    )
    return page.evaluate("document.body.dataset.status")


# Watches the banner over the board: every bot move and round result it showed.
WATCH_BANNER = """
window.__banners = [];
document.addEventListener('DOMContentLoaded', () => {
  new MutationObserver(() => {
    const b = document.getElementById('banner');
    if (b && !b.hidden && b.textContent) window.__banners.push([b.className, b.textContent]);
  }).observe(document.body, {subtree: true, childList: true, attributes: true, attributeFilter: ['hidden']});
});
"""

# Scroll an element into the middle of the window; true if a click at its centre reaches it
# (nothing covers it).
UNCOVERED = """(el) => {
  el.scrollIntoView({block: 'center'});
  const r = el.getBoundingClientRect();
  const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
  return !!hit && (hit === el || el.contains(hit));
}"""

SIZES = {"desktop": {"width": 1440, "height": 900}, "phone": {"width": 390, "height": 844}}


def check_layout(page, where: str) -> None:
    """Nothing scrolls sideways, and your hand and your choices are inside the window."""
    width, inner_w, inner_h = page.evaluate(
        "[document.scrollingElement.scrollWidth, window.innerWidth, window.innerHeight]")
    assert width <= inner_w, f"{where}: the page is {width} px wide in a {inner_w} px window"
    for sel in ("#choices", ".hand-area"):
        box = page.locator(sel).bounding_box()
        assert box is not None, f"{where}: {sel} is not shown"
        assert box["x"] >= 0 and box["x"] + box["width"] <= inner_w + 0.5, f"{where}: {sel} sticks out sideways {box}"
        assert box["y"] >= 0 and box["y"] + box["height"] <= inner_h + 0.5, f"{where}: {sel} is outside the window {box}"


def check_card_tip(page, card, phone: bool, where: str, force: bool = False) -> None:
    """Tap (phone) or hover (mouse) ``card``: the tip names it and shows its text; Escape
    closes it and the layout still fits (``where`` names the moment in a failure)."""
    name = card.get_attribute("data-tip-name")
    if phone:
        card.tap(force=force)
    else:
        card.hover(force=force)
    page.wait_for_function("!document.getElementById('tip').hidden")
    tip = page.locator("#tip").inner_text()
    assert name in tip and card.get_attribute("data-tip-text") in tip
    page.keyboard.press("Escape")
    page.mouse.move(2, 2)
    check_layout(page, where)


def test_play_a_whole_game_with_the_mouse_at_desktop_size(server_url, tmp_path):
    require_chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            play_game(browser, server_url, tmp_path, "desktop")
        finally:
            browser.close()


def test_play_a_whole_game_by_touch_at_phone_size(server_url, tmp_path):
    require_chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            play_game(browser, server_url, tmp_path, "phone")
        finally:
            browser.close()


def play_game(browser, server_url: str, tmp_path: Path, size: str) -> None:
    phone = size == "phone"
    context = browser.new_context(viewport=SIZES[size], has_touch=phone, is_mobile=phone)
    page = context.new_page()
    problems: list[str] = []
    page.on("pageerror", lambda exc: problems.append(f"page error: {exc}"))
    page.on("console", lambda msg: problems.append(f"console {msg.type}: {msg.text}") if msg.type == "error" else None)
    page.add_init_script(WATCH_BANNER)

    # While the server is still loading, the page says what it loads.
    page.route("**/api/status", lambda route: route.fulfill(
        json={"ready": False, "stage": "Compiling the rules engine", "done": 0, "total": 3, "elapsed": 4.0,
              "error": None}))
    page.goto(server_url + "/")
    page.wait_for_function("document.getElementById('status').textContent.includes('Compiling the rules engine')")
    page.unroute("**/api/status")
    page.evaluate("localStorage.setItem('ripmarket.speed', '150')")  # bot moves shown one at a time, quickly
    page.reload()

    # Set up: 4 players (3 on the phone), you in seat 1, bots from the registry, named with a difficulty.
    page.wait_for_selector("#opponents select", state="attached")
    players = 3 if phone else 4
    page.select_option("#players", str(players))
    page.select_option("#seat", "1")
    selects = page.locator("#opponents select")
    assert selects.count() == players - 1
    # every seat offers the trained bot for every table first, labelled with its difficulty
    assert [selects.nth(i).input_value() for i in range(players - 1)] == ["ppo-lookahead"] * (players - 1)
    assert "ppo-lookahead (Hardest)" in selects.first.inner_text()
    bots = ["greedy", "survivor", "shark"][: players - 1]
    for i, bot in enumerate(bots):
        selects.nth(i).select_option(bot)
    assert "(Easy)" in page.locator("#opponents select").first.inner_text()
    page.fill("#seed", "17")
    if phone:
        page.tap("#start")
    else:
        page.click("#start")
    status = _settled(page)

    rng = random.Random(17)
    clicks = table_clicks = keys = tips = 0
    mid_game = None
    while status != "over":
        assert clicks < 300, "the game did not end within 300 decisions"
        check_layout(page, f"{size}, decision {clicks}")
        seats = page.locator("#ring .seat")
        assert seats.count() == players and page.locator("#ring .seat.you").count() == 1
        for q, bot in zip([0, 2, 3], bots):  # seats named by their bot, with a difficulty label
            seat = page.locator(f"#ring .seat[data-seat='{q}']")
            assert bot in seat.inner_text() and seat.locator(".level").count() == 1
        for card in page.locator("#hand .hand-card").all():
            legal = "legal" in (card.get_attribute("class") or "")
            assert card.is_enabled() == legal
        if mid_game is None and page.locator("#rounds .round-summary").count() >= 1 and page.locator(
                "#hand .hand-card.legal, #ring .seat.targetable").count():
            mid_game = tmp_path / f"web-{size}-mid-game.png"  # a decision with legal pieces lit up
            page.keyboard.press("Escape")  # close the round result to show the table
            page.screenshot(path=str(mid_game))
        # Card text on hover (mouse) or tap (touch): a Market card, a played card, a card in hand.
        cards = page.locator("#center .market-slot .card, #ring .played .card:not(.back), #hand .card").all()
        rng.shuffle(cards)
        card = next((c for c in cards if c.evaluate(UNCOVERED)), None)  # a person scrolls to see the rest
        if tips < 6 and card is not None:
            check_card_tip(page, card, phone, f"{size}, decision {clicks}, after showing a card", force=True)
            tips += 1
        choices = page.locator("#choices button.choice")
        n = choices.count()
        assert n >= 1  # one option only for a hand of one design
        listed = [int(choices.nth(i).get_attribute("data-action")) for i in range(n)]
        on_table = page.locator("#board [data-action].legal, #hand [data-action].legal, #shadow-hand [data-action].legal")
        table_actions = sorted({int(x.get_attribute("data-action")) for x in on_table.all()})
        assert set(table_actions) <= set(listed)
        roll = rng.random()
        if not phone and table_actions and roll < 0.4:  # click the card, Market slot, deck or seat itself
            a = rng.choice(table_actions)
            target = page.locator(f"#game [data-action='{a}'].legal:not(.choice)").first
            if not target.evaluate(UNCOVERED):  # the last round's result lies over it: close it first
                page.locator("#banner.round-result button", has_text="Continue").click()
            target.click()
            table_clicks += 1
        elif roll < 0.7 and n <= 9:  # the keys 1-9 choose
            page.keyboard.press(str(rng.randrange(n) + 1))
            keys += 1
        elif phone:
            choices.nth(rng.randrange(n)).tap()
        else:
            choices.nth(rng.randrange(n)).click()
        clicks += 1
        status = _settled(page)

    # The end screen: standings with places, elimination rounds and how each player died.
    result = page.locator("#result")
    assert result.is_visible()
    text = result.inner_text()
    assert "Game over after" in text and ("You win" in text or "You finish" in text or "You share" in text)
    rows = page.locator("#result .standings tbody tr")
    assert rows.count() == players
    assert re.search(r"out in round \d+", text) and re.search(r"took \d damage: |lost \d HP: ", text)
    assert "reward" not in text.lower() and "+0." not in text and "-0." not in text
    assert page.locator("#result a[download]").count() == 1
    assert page.locator("#shadow-hand .hand-card").count() == 0  # the dealt Shadow hand is gone
    assert page.locator("#rounds .round-summary").count() >= 1
    assert page.locator("#choices button.choice").count() == 0
    assert clicks >= 3 and keys >= 1 and tips >= 3
    if not phone:
        assert table_clicks >= 1
    banners = page.evaluate("window.__banners")
    moves = {t for c, t in banners if "move" in c}
    assert len(moves) >= 3, "the bots' moves were not shown one at a time"
    assert any("round-result" in c and "Scores" not in t and "result" in t for c, t in banners)
    assert not problems, problems
    # no horizontal scroll on the end screen either
    assert page.evaluate("document.scrollingElement.scrollWidth <= window.innerWidth")

    shot = tmp_path / f"web-{size}.png"
    page.screenshot(path=str(shot))
    assert shot.stat().st_size > 10_000
    if os.environ.get("RIPMARKET_SCREENSHOT") == "1":
        out = ROOT / "docs" / "img" / ("web.png" if not phone else "web-phone.png")
        out.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(mid_game or shot, out)
    context.close()
