"""R.I.P. Market on the one web page in a real browser: Debian's Chromium driven by
Playwright plays whole games against the bots through the generic page and the game's
plugin (``games/ripmarket/web/table.js``), by click and keys at 1440x900 and by touch at
390x844, through the Ghost phase to the end screen. At every decision: nothing scrolls
sideways, your seat, hand and choices are in view (``pagekit.check_layout``), every seat
shows its HP bar out of the start HP, a Ghost's seat is drawn as one, and the Market card
or seat a choice names (its ``refs``) is on the page and covered by nothing (no banner over
the Market). A reload resumes the game; the rematch starts another. The lobby (``/``)
lists every game and links to its page.

Without Chromium this test fails and says how to install it (it is not skipped).
"""

from __future__ import annotations

import json

import pytest

from tests.pagekit import check_end, SIZES, browser_page, check_layout, open_game, page_server, play, settled, stored  # noqa: F401

pytestmark = pytest.mark.browser

#: practice seeds where always taking the first choice (the lowest card) loses all HP early
#: and leaves Ghost decisions, Market choices and a target choice to take (4 players vs greedy)
SEEDS = {"desktop": 31, "phone": 18}


def _uncovered(page, selector: str) -> bool:
    """``selector``'s element, scrolled into view, is what the page shows at its centre
    (no banner or panel drawn over it)."""
    return page.evaluate("""(sel) => {
        const e = document.querySelector(sel);
        if (!e) return false;
        e.scrollIntoView({block: 'center', inline: 'nearest'});
        const r = e.getBoundingClientRect();
        const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
        return !!hit && (hit === e || e.contains(hit));
    }""", selector)


def _check_table(page, where: str, seen: dict) -> None:
    """``check_layout`` and R.I.P. Market's own drawing at one decision."""
    check_layout(page, where)
    seats = page.locator("#seats .gseat")
    n = seats.count()
    assert page.locator("#seats .gseat .rip-hp").count() == n, f"{where}: not every seat has its HP bar"
    for q in range(n):
        box = seats.nth(q)
        hp = box.locator(".rip-hp").inner_text()
        assert hp.startswith("HP "), f"{where}: {hp}"
        ghost = box.get_attribute("data-alive") == "0"
        assert ghost == ("rip-ghost" in (box.get_attribute("class") or "")), where
        if ghost:
            assert "Ghost" in box.inner_text()
    mine = page.locator("#seats .gseat.you")
    prompt = page.locator("#prompt").inner_text()
    if mine.get_attribute("data-alive") == "0":
        seen["ghost"] += 1
        assert prompt.startswith("You are a Ghost. "), f"{where}: {prompt}"
    assert page.locator("#rip-rule").is_visible() and "Rule card" in page.locator("#rip-rule").inner_text()
    assert page.locator('#zones .zone[data-zone="Market"] .gcard[data-slot]').count() >= 1
    # every Market card or seat a choice names is drawn, and nothing covers it
    buttons = page.locator("#choices button[data-refs]")
    for k in range(buttons.count()):
        for ref in json.loads(buttons.nth(k).get_attribute("data-refs")):
            if ref["zone"] == "seats":
                sel = f'#seats .gseat[data-seat="{ref["slot"]}"]'
                seen["seat"] += 1
            else:
                sel = f'#zones .zone[data-zone="{ref["zone"]}"] .gcard[data-slot="{ref["slot"]}"]'
                seen["market"] += 1
            assert _uncovered(page, sel), f"{where}: {sel} is covered or missing"
    page.evaluate("window.scrollTo(0, 0)")


@pytest.mark.parametrize("size", list(SIZES))
def test_play_ripmarket_through_the_ghost_phase_to_the_end(page_server, size):  # noqa: F811
    from playwright.sync_api import sync_playwright

    phone = size == "phone"
    with sync_playwright() as p:
        browser, page = browser_page(p, size)
        try:
            assert open_game(page, page_server, "ripmarket", players=4, opponents=["greedy"],
                             seed=SEEDS[size]) == "your_turn"
            assert page.locator("#title").inner_text() == "R.I.P. Market"
            seats = page.locator("#seats .gseat")
            assert seats.count() == 4 and page.locator("#seats .gseat.you").count() == 1
            assert "greedy, Easy" in seats.nth(1).inner_text()  # the bot and its difficulty
            assert page.locator("#hand .gcard").count() >= 1
            assert "HP 2/2" in seats.nth(0).inner_text()

            seen = {"ghost": 0, "market": 0, "seat": 0}
            check = lambda pg, where: _check_table(pg, where, seen)  # noqa: E731
            first = play(page, size, pick=lambda pg, n, count: 0, stop_after=2, check=check)
            game = stored(page, "ripmarket")
            decision = page.evaluate("document.body.dataset.decision")
            page.reload()  # a reload resumes the same game at the same decision
            assert settled(page) == "your_turn"
            assert stored(page, "ripmarket") == game and page.evaluate("document.body.dataset.gameId") == game["id"]
            assert page.evaluate("document.body.dataset.decision") == decision
            assert page.locator("#seats .gseat .rip-played").count() >= 1  # the bots' cards of this round

            rest = play(page, size, pick=lambda pg, n, count: 0, check=check)
            assert first + rest >= 6
            assert seen["ghost"] >= 2 and seen["market"] >= 1 and seen["seat"] >= 1, seen
            assert settled(page) == "over"
            assert page.locator("#end").is_visible() and page.locator("#standings tr").count() == 4
            assert page.locator("#endline").inner_text().startswith(("You won", "You lost"))
            standings = page.locator("#standings").inner_text()
            assert "died in round" in standings  # how each player died
            assert page.locator("#choices button").count() == 0
            assert page.locator("#seats .gseat.you.rip-ghost").count() == 1
            width, inner = page.evaluate("[document.scrollingElement.scrollWidth, window.innerWidth]")
            assert width <= inner, f"{size}, end screen: the page scrolls sideways"

            rematch = page.locator("#rematch")
            check_end(page, f"{size}, end screen")  # "Play again" in view without scrolling
            rematch.tap() if phone else rematch.click()
            page.wait_for_function(f"document.body.dataset.gameId && document.body.dataset.gameId !== '{game['id']}'",
                                   timeout=180_000)
            assert settled(page, timeout=180_000) in ("your_turn", "setup")
            assert stored(page, "ripmarket") is None or stored(page, "ripmarket")["id"] != game["id"]
            assert not page.problems, page.problems
        finally:
            browser.close()


def test_the_lobby_links_every_game(page_server):  # noqa: F811
    """``/`` lists every registered game (read from GET /api/catalog) with its player counts
    (a range, or each count where there are gaps), and its link opens that game's page."""
    from playwright.sync_api import sync_playwright

    from ripmarket_env.games import registry

    with sync_playwright() as p:
        browser, page = browser_page(p, "phone")
        try:
            page.goto(page_server + "/")
            page.wait_for_function("document.body.dataset.status === 'ready'")
            links = page.locator("#games a")
            assert [links.nth(k).get_attribute("data-game") for k in range(links.count())] == list(registry())
            rip = page.locator('#games a[data-game="ripmarket"]')
            assert "R.I.P. Market" in rip.inner_text() and "2-10 players" in rip.inner_text()
            bm = page.locator('#games a[data-game="black-market"]')  # counts with gaps are named each
            assert "2, 4 or 6 players" in bm.inner_text() and "2-6" not in bm.inner_text()
            width, inner = page.evaluate("[document.scrollingElement.scrollWidth, window.innerWidth]")
            assert width <= inner
            rip.tap()
            page.wait_for_url(page_server + "/ripmarket")
            assert settled(page, timeout=180_000) in ("your_turn", "setup")
            assert not page.problems, page.problems
            page.evaluate("sessionStorage.clear()")
        finally:
            browser.close()
