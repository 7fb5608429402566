"""Black Market on the one web page (static/generic.html + the game's plugin
games/blackmarket/web/table.js) in a real browser (Debian's Chromium, Playwright, the shared
tests/pagekit.py): whole games to the end screen at 390x844 by touch and at 1440x900 by
mouse and keys. At every decision nothing scrolls sideways, your seat, hand and choices are
in view (``pagekit.check_layout``), every choice that acts on a map slot names that slot's
card as the Map shows it (BM-4.1: a die acts on the slot of its number), your own seat is
never "their turn", and hand sizes read "1 card"/"N cards". A reload resumes the game, the
end screen shows every seat's place, side and points, and the rematch starts another game.
Fails (not skipped) without Chromium."""

from __future__ import annotations

import re

import pytest

from tests.pagekit import check_end, check_layout, decide, open_game, page_server, play, settled, stored, browser_page  # noqa: F401

pytestmark = pytest.mark.browser

GAME = "black-market"
SLOT = re.compile(r"slot (\d): (.+?) \(")


def _view(page, base: str) -> dict:
    """The game the page shows, as the server gives it to this seat (a GET changes nothing)."""
    return page.evaluate("""async ([url, g]) => (await fetch(`${url}/api/black-market/games/${g.id}`,
                              {headers: {'X-Seat-Token': g.token}})).json()""", [base, stored(page, GAME)])


def check_table(page, where: str, base: str) -> None:
    """``check_layout``, then what Black Market's table must show at each decision."""
    check_layout(page, where)
    v = _view(page, base)
    assert int(page.evaluate("document.body.dataset.decision")) == v["decision_number"]
    players = v["players"]
    # The Map: six slots, each drawn with its colour by the plugin; the dice above it.
    cards = page.locator("#zones .zone .gcard")
    assert page.locator("#zones .zone h2").first.inner_text() == "Map" and cards.count() == 6, where
    shown = {k + 1: cards.nth(k).inner_text() for k in range(6)}
    assert all(shown[k].startswith(f"{k}. ") for k in shown), shown
    assert page.locator("#zones .bm-card").count() == 6
    dice = page.locator("#zones .bm-die")
    assert dice.count() >= 2 and page.locator("#zones .bm-dice .who").inner_text() == "your dice", where
    # each die shows as many pips as its value, every pip inside its die (no page style of
    # the same name may reshape them)
    for die in dice.all():
        inside = die.evaluate("""d => { const r = d.getBoundingClientRect();
            return [...d.children].filter(c => c.className).map(c => { const q = c.getBoundingClientRect();
                return q.left >= r.left && q.right <= r.right && q.top >= r.top && q.bottom <= r.bottom
                       && q.width > 0; }); }""")
        assert len(inside) == int(die.get_attribute("data-value")) and all(inside), (where, die.get_attribute("title"))
    # Every seat: side, points, hand size in words; yours is never "their turn".
    assert page.locator("#seats .gseat").count() == players
    for q in range(players):
        text = page.locator(f"#seats .gseat[data-seat='{q}']").inner_text()
        assert f"side {'AB'[q % 2]}" in text and "points:" in text, (where, text)
        assert re.search(r"hand: (1 card|\d+ cards)\b", text) and not re.search(r"\b1 cards", text), (where, text)
    you = page.locator("#seats .gseat.you").inner_text()
    assert "their turn" not in you and "rolls the dice" not in you and "your dice" in you, (where, you)
    # Every choice that acts on a slot or a die names the slot's card, as the Map shows it,
    # in its own text (so it reads right where the Map is out of view), and refers to it.
    buttons = page.locator("#choices button")
    assert buttons.count() == len(v["table"]["choices"]) >= 2  # BM-12.3: one option is not asked
    for k, ch in enumerate(v["table"]["choices"]):
        text = buttons.nth(k).inner_text()
        assert ch["text"] in text, (where, text)
        named = SLOT.search(text)
        if ch.get("refs"):
            slot = ch["refs"][0]["slot"]
            assert named and int(named.group(1)) == slot, (where, text)
            card = named.group(2)
            assert shown[slot].startswith(f"{slot}. {card}") or \
                (card == "an unseen card" and shown[slot].startswith(f"{slot}. unseen card")), (where, text, shown[slot])
        else:
            assert not named, (where, text)


def _end_screen(page, size: str, players: int) -> None:
    assert settled(page) == "over"
    assert page.locator("#end").is_visible() and page.locator("#choices button").count() == 0
    assert page.locator("#endline").inner_text().startswith(("You won", "You lost"))
    rows = page.locator("#standings tr")
    assert rows.count() == players
    texts = [rows.nth(k).inner_text() for k in range(players)]
    assert re.match(r"1st", texts[0]) and sum("you" in t.split("\t")[1] for t in texts) == 1, texts
    assert all(re.search(r"\d+ points?: (won|lost)", t) for t in texts), texts
    width, inner = page.evaluate("[document.scrollingElement.scrollWidth, window.innerWidth]")
    assert width <= inner, f"{size}, end screen: the page scrolls sideways"


@pytest.mark.parametrize("size,players,mode,seat,seed", [("phone", 4, "teams", 1, 5), ("desktop", 6, "ffa", 0, 8)])
def test_play_whole_black_market_games_on_the_one_page(page_server, size, players, mode, seat, seed):  # noqa: F811
    from playwright.sync_api import sync_playwright

    phone = size == "phone"
    with sync_playwright() as p:
        browser, page = browser_page(p, size)
        try:
            status = open_game(page, page_server, GAME, players=players, seat=seat, rules={"mode": mode}, seed=seed,
                               opponents=["bm-builder", "bm-denier", "bm-rusher"][: players - 1])
            assert status == "your_turn" and page.locator("#title").inner_text() == "Black Market"
            flags = [page.locator(f"#seats .gseat[data-seat='{q}'] .flags").inner_text() for q in range(players)]
            mates = [q for q in range(players) if "your teammate" in flags[q]]
            assert mates == ([q for q in range(players) if q != seat and q % 2 == seat % 2] if mode == "teams" else [])

            def check(pg, where):
                check_table(pg, where, page_server)

            # Two decisions, then a reload: the same game at the same decision.
            play(page, size, stop_after=2, check=check)
            first = stored(page, GAME)
            decision = page.evaluate("document.body.dataset.decision")
            page.reload()
            assert settled(page) == "your_turn"
            assert stored(page, GAME) == first and page.evaluate("document.body.dataset.gameId") == first["id"]
            assert page.evaluate("document.body.dataset.decision") == decision
            assert page.locator("#moves li").count() >= 1

            # On to the end screen, with the standings.
            n = play(page, size, check=check)
            assert n >= 3
            _end_screen(page, size, players)

            # The rematch starts another game.
            rematch = page.locator("#rematch")
            check_end(page, f"{size}, end screen")  # "Play again" in view without scrolling
            rematch.tap() if phone else rematch.click()
            page.wait_for_function(f"document.body.dataset.gameId !== '{first['id']}'")
            assert settled(page) in ("your_turn", "over") and page.locator("#end").is_hidden()
            assert stored(page, GAME)["id"] != first["id"]
            assert not page.problems, page.problems
        finally:
            browser.close()
