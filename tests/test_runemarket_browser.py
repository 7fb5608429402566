"""The Rune Market on the one web page (static/generic.html + its plugin
games/runemarket/web/table.js) in a real browser: Debian's Chromium driven by Playwright plays a
whole 4-player game against the bots to its end screen at 390x844 (touch) and 1440x900 (mouse
and keys), with ``pagekit.check_layout`` at every decision (nothing scrolls sideways; your seat,
your hand and your choices are in view). The table shows the Market and its card texts on the
cards, your hand with each card's use on the card (never "Number 1: Number 1: ..."); a block
decision (RM-5.7) comes under its red prompt with at least two choices, since one whose only
option is to let the attack through is taken for you and told in the story (RM-5.9); a reload
resumes the same game at the same decision; the rematch starts another. Without Chromium this
test fails and says so."""

from __future__ import annotations

import re

import agents

import pytest

from tests.pagekit import check_end, SIZES, browser_page, check_layout, open_game, page_server, play, settled, stored  # noqa: F401

pytestmark = pytest.mark.browser

GAME = "rune-market"
#: A practice game in which the cycling picks (decision n takes choice n mod count) meet block
#: decisions, two of them with one option only (found with TableSession, the page's session).
SEED = 0


def _rune_checks(page, where: str, seen: dict) -> None:
    """At a decision: pagekit's layout checks, the Rune Market's own table, and the block
    decision asked only with a choice to make."""
    check_layout(page, where)
    body = page.locator("#game").inner_text()
    assert not re.search(r"\b(Number \d+): \1", body), f"{where}: a card's name is doubled"
    assert not re.search(r"\b1 Runes\b", body), f"{where}: '1 Runes'"
    assert "decides:" not in body and "choose_card" not in body, f"{where}: the engine's phase names"
    assert page.locator("#seats .gseat").count() == 4 and page.locator("#seats .gseat.you").count() == 1
    assert not any("your turn" in t for t in page.locator("#seats .gseat:not(.you)").all_inner_texts())
    market = page.locator("#zones .zone").filter(has=page.locator("h2", has_text="Market"))
    assert "Red Runes: 1 Rune Point" in market.inner_text() or "Red Rune: 1 Rune Point" in market.inner_text()
    for text in page.locator("#hand .gcard").all_inner_texts():  # every hand card carries its text
        assert re.search(r"(Number \d+: pay \d+, attack with it|Theft: Steal|Shelter: Holds)", text), text
    prompt = page.locator("#prompt").inner_text()
    choices = page.locator("#choices button").count()
    if prompt.startswith("BLOCK?"):
        seen["blocks"] += 1
        assert choices >= 2, f"{where}: a block decision with one option was asked"
        assert "rm-block" in (page.locator("#prompt").get_attribute("class") or "")
        assert page.locator("#choices button").last.inner_text().endswith("Let the attack through (do not block)")
    seen["moves"] += page.locator("#moves li").all_inner_texts()


@pytest.mark.parametrize("size", list(SIZES))
def test_play_a_whole_rune_market_game_on_the_one_page(page_server, size):  # noqa: F811
    from playwright.sync_api import sync_playwright

    phone = size == "phone"
    seen = {"blocks": 0, "moves": []}

    def check(page, where):
        _rune_checks(page, where, seen)

    with sync_playwright() as p:
        browser, page = browser_page(p, size)
        try:
            assert open_game(page, page_server, GAME, players=4, seat=0, seed=SEED) == "your_turn"
            assert page.locator("#title").inner_text() == "The Rune Market"
            bots = page.locator("#seats .gseat:not(.you) .gname").all_inner_texts()
            default = agents.default_bot(GAME)  # the page seats the game's default opponent, labelled by its level
            level = agents.game_agents(GAME).level(default).split(":")[0]
            assert bots and all(b.endswith(f"({default}, {level})") for b in bots), bots

            # Two decisions, then a reload: the same game at the same decision.
            play(page, size, stop_after=2, check=check)
            first = stored(page, GAME)
            decision = page.evaluate("document.body.dataset.decision")
            page.reload()
            assert settled(page) == "your_turn"
            assert page.evaluate("document.body.dataset.gameId") == first["id"] and stored(page, GAME) == first
            assert page.evaluate("document.body.dataset.decision") == decision

            # On to the end screen (the picks go on where they left off).
            n = play(page, size, pick=lambda page, n, count: (n + 2) % count, check=check)
            assert n > 10 and settled(page) == "over"  # a whole game, however quickly the bots end it
            assert seen["blocks"] > 0, "no bot attacked the person"
            told = [m for m in seen["moves"] if "(your only option)" in m]
            assert any(m.startswith("You let the attack through") for m in told), told  # RM-5.9, taken for you
            assert not any(re.match(r"(P\d \(rm-[\w-]+\)|you): ", m) for m in seen["moves"])  # who is not said twice
            assert page.locator("#end").is_visible() and page.locator("#standings tr").count() == 4
            assert page.locator("#endline").inner_text().startswith(("You won", "You lost"))
            rows = page.locator("#standings tr").all_inner_texts()
            assert all(re.search(r"\d+ Runes?: (won|lost)", r) for r in rows), rows
            assert page.locator("#choices button").count() == 0
            width, inner = page.evaluate("[document.scrollingElement.scrollWidth, window.innerWidth]")
            assert width <= inner, f"{size}, end screen: the page scrolls sideways"

            # The rematch starts another game.
            second = stored(page, GAME)
            rematch = page.locator("#rematch")
            check_end(page, f"{size}, end screen")  # "Play again" in view without scrolling
            rematch.tap() if phone else rematch.click()
            page.wait_for_function(f"document.body.dataset.gameId !== '{second['id']}'")
            assert settled(page) == "your_turn" and page.locator("#end").is_hidden()
            assert stored(page, GAME)["id"] != second["id"]
            check(page, f"{size}, the rematch")
            assert not page.problems, page.problems
        finally:
            page.evaluate("sessionStorage.clear()")
            browser.close()
