"""The generic web page (static/generic.html) in a real browser: Debian's Chromium driven by
Playwright plays the tests' toy game (tests/toy_game.py, TOY-1..TOY-4), which has no page of
its own, to its end screen at 1440x900 (mouse and keys 1-9) and 390x844 (touch): nothing
scrolls sideways, the choices are in view, a reload finds the same game, "New game" ends an
unfinished one, and the rematch starts another. Without Chromium this test fails and says so."""

from __future__ import annotations

import re

import pytest

from tests.test_browser import ARGS, CHROMIUM, require_chromium, server_url  # noqa: F401 - the fixture

pytestmark = pytest.mark.browser

SIZES = {"desktop": {"width": 1440, "height": 900}, "phone": {"width": 390, "height": 844}}


def _settled(page) -> str:
    page.wait_for_function("['your_turn', 'over', 'error'].includes(document.body.dataset.status) "
                           "&& !document.body.classList.contains('busy')", timeout=60_000)
    return page.evaluate("document.body.dataset.status")


def _stored(page) -> dict:
    return page.evaluate("JSON.parse(sessionStorage.getItem('ripmarket.generic.toy'))")


def _gone(page, server_url: str, game: dict) -> int:
    """The status of GET for ``game`` (its id and token) now."""
    return page.evaluate("""async ([url, g]) => (await fetch(url + '/api/toy/games/' + g.id,
                              {headers: {'X-Seat-Token': g.token}})).status""", [server_url, game])


def check_layout(page, where: str) -> None:
    width, inner, height = page.evaluate(
        "[document.scrollingElement.scrollWidth, window.innerWidth, window.innerHeight]")
    assert width <= inner, f"{where}: the page scrolls sideways ({width} > {inner})"
    buttons = page.locator("#choices button")
    assert buttons.count() >= 1, f"{where}: no choices shown on your turn"
    box = buttons.first.bounding_box()
    assert box and box["x"] >= 0 and box["x"] + box["width"] <= inner, f"{where}: a choice is cut off sideways"
    assert box["y"] >= 0 and box["y"] + box["height"] <= height, f"{where}: the first choice is out of view"


def play(page, size: str, stop_after: int | None = None) -> int:
    """Decide until the end (or ``stop_after`` decisions): a click, key 1-9 or a tap in turn."""
    phone, n = size == "phone", 0
    while _settled(page) == "your_turn":
        if stop_after is not None and n >= stop_after:
            break
        check_layout(page, f"{size}, decision {n}")
        decision = int(page.evaluate("document.body.dataset.decision"))
        buttons = page.locator("#choices button")
        k = n % buttons.count()
        if phone:
            buttons.nth(k).tap()
        elif n % 2:
            page.keyboard.press(str(k + 1))
        else:
            buttons.nth(k).click()
        page.wait_for_function(f"Number(document.body.dataset.decision) > {decision}", timeout=60_000)
        n += 1
        assert n <= 16, "the toy game lasts at most 16 decisions"
    return n


@pytest.mark.parametrize("size", list(SIZES))
def test_play_the_toy_game_on_the_generic_page(server_url, size):  # noqa: F811
    require_chromium()
    from playwright.sync_api import sync_playwright

    phone = size == "phone"
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            context = browser.new_context(viewport=SIZES[size], has_touch=phone, is_mobile=phone)
            page = context.new_page()
            problems: list[str] = []
            page.on("pageerror", lambda exc: problems.append(f"page error: {exc}"))
            page.goto(server_url + "/toy")
            assert _settled(page) == "your_turn"
            assert page.locator("#title").inner_text() == "Pairs"
            seats = page.locator("#seats .gseat")
            assert seats.count() == 3 and page.locator("#seats .gseat.you").count() == 1
            assert "toy-" in seats.nth(1).inner_text()  # the bots are named, with their level
            assert page.locator("#choices button .key").first.inner_text() == "1"  # key 1 takes it
            assert re.search(r"play a [1-8]$", page.locator("#choices button").first.inner_text())  # TOY-2
            # The game's page plugin (GameSpec.web, tests/toy_web/table.js) drew its own parts.
            assert page.locator("#seats .gseat .toy-pips").nth(2).inner_text() == "ooo"
            assert page.locator("#choices button .toy-big").first.inner_text() in "12345678"
            assert page.locator("#toy-banner").inner_text() == "Pairs for 3"

            # Two decisions, then a reload: the same game at the same decision.
            play(page, size, stop_after=2)
            first = _stored(page)
            decision = page.evaluate("document.body.dataset.decision")
            assert page.locator("#moves li").count() >= 1
            page.reload()
            assert _settled(page) == "your_turn"
            assert page.evaluate("document.body.dataset.gameId") == first["id"] and _stored(page) == first
            assert page.evaluate("document.body.dataset.decision") == decision

            # "New game" ends the unfinished one (DELETE) and starts another.
            page.locator("#new-game").click()
            page.wait_for_function(f"document.body.dataset.gameId && document.body.dataset.gameId !== '{first['id']}'")
            assert _gone(page, server_url, first) == 404
            second = _stored(page)

            # Play it to its end screen: the standings and the rematch.
            play(page, size)
            assert _settled(page) == "over"
            assert page.locator("#end").is_visible() and page.locator("#standings tr").count() == 3
            assert page.locator("#endline").inner_text().startswith(("You won", "You lost"))
            assert page.locator("#choices button").count() == 0
            width, inner = page.evaluate("[document.scrollingElement.scrollWidth, window.innerWidth]")
            assert width <= inner, f"{size}, end screen: the page scrolls sideways"
            rematch = page.locator("#rematch")
            rematch.scroll_into_view_if_needed()
            rematch.tap() if phone else rematch.click()
            page.wait_for_function(f"document.body.dataset.gameId !== '{second['id']}'")
            assert _settled(page) == "your_turn" and page.locator("#end").is_hidden()
            assert _stored(page)["id"] != second["id"]
            assert _gone(page, server_url, second) == 404
            assert not problems, problems
        finally:
            browser.close()


def test_the_page_draws_public_cards_and_your_hand_with_their_texts(server_url):  # noqa: F811
    """The toy game describes no cards; a description that has them (a market, a hand with
    counts and texts, seat flags) is drawn from the table description alone."""
    require_chromium()
    import json

    from playwright.sync_api import sync_playwright

    def with_cards(route):
        response = route.fetch()
        view = response.json()
        view["table"]["table"] = [{"name": "Market", "cards": [{"slot": 1, "text": "Sword: +2 attack"}]}]
        view["table"]["hand"] = [{"name": "Potion", "count": 2, "text": "heal 3 HP", "zone": "hand"}]
        view["table"]["seats"][0]["flags"] = ["first player"]
        route.fulfill(response=response, body=json.dumps(view))

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            page = browser.new_context(viewport=SIZES["phone"]).new_page()
            page.route("**/api/toy/games", with_cards)
            page.goto(server_url + "/toy")
            assert _settled(page) == "your_turn"
            assert page.locator("#zones .zone h2").inner_text() == "Market"
            assert page.locator("#zones .gcard").inner_text() == "1. Sword: +2 attack"
            assert page.locator("#hand-panel").is_visible()
            assert page.locator("#hand .gcard").inner_text().replace("\n", "") == "2xPotion: heal 3 HP"
            assert "first player" in page.locator("#seats .gseat").first.inner_text()
            page.evaluate("sessionStorage.clear()")
        finally:
            browser.close()
