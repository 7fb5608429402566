"""The generic web page (static/generic.html) in a real browser: Debian's Chromium driven by
Playwright plays the tests' toy game (tests/toy_game.py, TOY-1..TOY-4), which has no page of
its own, to its end screen at 1440x900 (mouse and keys 1-9) and 390x844 (touch): nothing
scrolls sideways, the choices are in view, a reload finds the same game, "New game" ends an
unfinished one, and the rematch starts another. Without Chromium this test fails and says so."""

from __future__ import annotations

import re

import pytest

from tests.pagekit import SIZES, browser_page, check_layout, open_game, page_server, play, settled, stored  # noqa: F401

pytestmark = pytest.mark.browser


def _gone(page, page_server: str, game: dict) -> int:
    """The status of GET for ``game`` (its id and token) now."""
    return page.evaluate("""async ([url, g]) => (await fetch(url + '/api/toy/games/' + g.id,
                              {headers: {'X-Seat-Token': g.token}})).status""", [page_server, game])


@pytest.mark.parametrize("size", list(SIZES))
def test_play_the_toy_game_on_the_generic_page(page_server, size):  # noqa: F811
    from playwright.sync_api import sync_playwright

    phone = size == "phone"
    with sync_playwright() as p:
        browser, page = browser_page(p, size)
        problems = page.problems
        try:
            page.goto(page_server + "/toy")
            assert settled(page) == "your_turn"
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
            first = stored(page, "toy")
            decision = page.evaluate("document.body.dataset.decision")
            assert page.locator("#moves li").count() >= 1
            page.reload()
            assert settled(page) == "your_turn"
            assert page.evaluate("document.body.dataset.gameId") == first["id"] and stored(page, "toy") == first
            assert page.evaluate("document.body.dataset.decision") == decision

            # "New game" ends the unfinished one (DELETE) and starts another.
            page.locator("#new-game").click()
            page.wait_for_function(f"document.body.dataset.gameId && document.body.dataset.gameId !== '{first['id']}'")
            assert _gone(page, page_server, first) == 404
            second = stored(page, "toy")

            # Play it to its end screen: the standings and the rematch.
            play(page, size)
            assert settled(page) == "over"
            assert page.locator("#end").is_visible() and page.locator("#standings tr").count() == 3
            assert page.locator("#endline").inner_text().startswith(("You won", "You lost"))
            assert page.locator("#choices button").count() == 0
            width, inner = page.evaluate("[document.scrollingElement.scrollWidth, window.innerWidth]")
            assert width <= inner, f"{size}, end screen: the page scrolls sideways"
            rematch = page.locator("#rematch")
            rematch.scroll_into_view_if_needed()
            rematch.tap() if phone else rematch.click()
            page.wait_for_function(f"document.body.dataset.gameId !== '{second['id']}'")
            assert settled(page) == "your_turn" and page.locator("#end").is_hidden()
            assert stored(page, "toy")["id"] != second["id"]
            assert _gone(page, page_server, second) == 404
            assert not problems, problems
        finally:
            browser.close()


def test_the_page_draws_public_cards_and_your_hand_with_their_texts(page_server):  # noqa: F811
    """The toy game describes no cards; a description that has them (a market, a hand with
    counts and texts, seat flags) is drawn from the table description alone."""
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
        browser, page = browser_page(p, "phone")
        try:
            page.route("**/api/toy/games", with_cards)
            page.goto(page_server + "/toy")
            assert settled(page) == "your_turn"
            assert page.locator("#zones .zone h2").inner_text() == "Market"
            assert page.locator("#zones .gcard").inner_text() == "1. Sword: +2 attack"
            assert page.locator("#hand-panel").is_visible()
            assert page.locator("#hand .gcard").inner_text().replace("\n", "") == "2xPotion: heal 3 HP"
            assert "first player" in page.locator("#seats .gseat").first.inner_text()
            page.evaluate("sessionStorage.clear()")
        finally:
            browser.close()
