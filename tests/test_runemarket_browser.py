"""The Rune Market's web page in a real browser (Debian's Chromium, Playwright): pick the
game on the set-up page and play a whole 4-player game against the bots, at a phone's
(390x844) and a desktop's (1440x900) viewport (there against rm-search and two styles). At every decision nothing scrolls
sideways and your hand and every choice are inside the viewport; the table is drawn
(every seat's Shelters, scores and hand sizes, the Market); a block decision comes at
once under the red banner with the first choice focused; keys 1-9 answer; a card's text
shows on hover and tap; the game ends on a standings table. The bots' moves are played
back one at a time (at a fast speed here) in a banner with a result line in words, the
choices held back meanwhile: some decision is preceded by at least two different result
lines. Fails (not skipped) without Chromium, like tests/test_browser.py."""

from __future__ import annotations

import random

import pytest

from tests.test_browser import ARGS, CHROMIUM, require_chromium, server_url  # noqa: F401  (the server fixture)

pytestmark = pytest.mark.browser

# Every hand card and choice button, and the block banner, lie inside the viewport; the
# page is no wider than the viewport.
IN_VIEW = """() => {
  const W = window.innerWidth, H = window.innerHeight, out = [];
  if (document.scrollingElement.scrollWidth > W) out.push('page scrolls sideways: ' + document.scrollingElement.scrollWidth);
  for (const sel of ['#hand .card', '#choices button', '#prompt.block']) {
    for (const e of document.querySelectorAll(sel)) {
      const r = e.getBoundingClientRect();
      if (r.left < 0 || r.top < 0 || r.right > W + 0.5 || r.bottom > H + 0.5)
        out.push(sel + ' outside the viewport: ' + [r.left, r.top, r.right, r.bottom].map(Math.round));
    }
  }
  return out;
}"""


# Every bot move the banner showed, with whether choices were on offer meanwhile; a fast
# playback speed (the header's select reads localStorage "rune.speed").
WATCH_BANNER = """
localStorage.setItem('rune.speed', '40');
window.__banners = [];
document.addEventListener('DOMContentLoaded', () => {
  new MutationObserver(() => {
    const b = document.getElementById('banner');
    if (b && !b.hidden && b.textContent)
      window.__banners.push([b.querySelector('.banner-result').textContent,
                             document.querySelectorAll('#choices button').length]);
  }).observe(document.body, {subtree: true, childList: true, attributes: true, attributeFilter: ['hidden']});
});
"""


def _play(page, server_url, rng, opponents):  # noqa: F811
    page.add_init_script(WATCH_BANNER)
    page.goto(server_url + "/")
    page.click("#pick-rune")  # the game is chosen on the set-up page
    page.wait_for_selector("#setup button#start")
    assert page.evaluate(IN_VIEW) == []
    page.select_option("#players", "4")
    page.select_option("#seat", "0")
    page.select_option("#opponents", opponents)
    page.click("#start")
    blocks = decisions = 0
    tapped = False
    most = 0  # the most different result lines played back before one decision
    while True:
        page.wait_for_function("['deciding', 'blocking', 'over'].includes(document.body.dataset.status)"
                               " && !document.querySelector('#choices button:disabled')", timeout=60_000)
        status = page.evaluate("document.body.dataset.status")
        shown = page.evaluate("window.__banners.splice(0)")
        assert all(n == 0 for _, n in shown), "choices were offered while bot moves played back"
        assert page.locator("#banner").is_hidden()
        most = max(most, len({t for t, _ in shown}))
        assert page.evaluate(IN_VIEW) == []
        assert page.locator("#seats .seat").count() == 4 and page.locator("#seats .seat.you").count() == 1
        assert "Market" in page.locator("#market").inner_text()
        bots = page.locator("#seats .seat:not(.you) .level")
        assert bots.count() == 3 and all(bots.nth(i).inner_text().split(":")[0] in ("Beginner", "Easy", "Hard",
                                                                                  "Hardest") for i in range(3))
        if status == "over":
            break
        buttons = page.locator("#choices button")
        n = buttons.count()
        assert n > 0
        assert [buttons.nth(i).locator("kbd").inner_text() for i in range(min(n, 9))] == [str(i + 1) for i in
                                                                                        range(min(n, 9))]
        if status == "blocking":
            blocks += 1
            prompt = page.locator("#prompt")
            assert prompt.get_attribute("class") == "block" and prompt.is_visible()
            assert prompt.inner_text().startswith("BLOCK?")
            assert " attacks you with a Number " in page.locator("#recent li").last.inner_text()
            assert page.evaluate("document.activeElement === document.querySelector('#choices button')")
            assert buttons.last.inner_text().endswith("let the attack through (do not block)")
        else:
            assert page.locator("#prompt").get_attribute("class") == ""
        cards = page.locator("#hand .card")
        if not tapped and cards.count():  # a card's text: on hover (title) and on tap
            assert ": " in cards.first.get_attribute("title")
            cards.first.click()
            assert page.locator("#cardinfo").inner_text() == cards.first.get_attribute("title")
            tapped = True
        before = page.evaluate("document.querySelector('#game').innerText")
        k = rng.randrange(n)
        if k < 9 and decisions % 2:
            page.keyboard.press(str(k + 1))  # keys 1-9 answer too
        else:
            buttons.nth(k).click()
        page.wait_for_function("(b) => document.querySelector('#game').innerText !== b", arg=before, timeout=60_000)
        decisions += 1
        assert decisions < 2000
    rows = page.locator("#result table tr")
    assert page.locator("#result h2").inner_text().startswith("Game over:")
    assert rows.count() == 5 and page.locator("#result tr.you").count() == 1  # a header and the four seats
    assert page.locator("#result td").first.inner_text().startswith("1")
    assert tapped
    return blocks, most


@pytest.mark.parametrize("size,opponents", [((390, 844), "rm-banker,rm-raider,rm-bandit"),
                                            ((1440, 900), "rm-search,rm-banker,rm-raider")], ids=["phone", "desktop"])
def test_play_a_whole_rune_market_game_in_view_with_block_decisions(server_url, size, opponents):  # noqa: F811
    require_chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = browser.new_context(viewport={"width": size[0], "height": size[1]}).new_page()
        problems: list[str] = []
        page.on("pageerror", lambda exc: problems.append(f"page error: {exc}"))
        page.on("response", lambda r: problems.append(f"HTTP {r.status}: {r.url}")
                if r.status >= 400 and not r.url.endswith("/favicon.ico") else None)  # the R.I.P. page has no icon
        blocks, most = _play(page, server_url, random.Random(3), opponents)
        assert blocks > 0, "no bot attacked the person in this game"
        assert most >= 2, "the bots' moves were not played back one at a time"
        assert not problems, problems
        browser.close()
