"""The Rune Market's web page in a real browser (Debian's Chromium, Playwright): pick the
game on the set-up page, play a whole 4-player game against the bots with the mouse, and
get every block decision at once, under the red banner, with the first choice focused.
Fails (not skipped) without Chromium, like tests/test_browser.py."""

from __future__ import annotations

import random

import pytest

from tests.test_browser import ARGS, CHROMIUM, require_chromium, server_url  # noqa: F401  (the server fixture)

pytestmark = pytest.mark.browser


def test_play_a_whole_rune_market_game_with_block_decisions(server_url):  # noqa: F811
    require_chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = browser.new_context(viewport={"width": 1280, "height": 860}).new_page()
        problems: list[str] = []
        page.on("pageerror", lambda exc: problems.append(f"page error: {exc}"))
        page.goto(server_url + "/")
        page.click("#pick-rune")  # the game is chosen on the set-up page
        page.wait_for_selector("#setup button#start")
        page.select_option("#players", "4")
        page.select_option("#seat", "0")
        page.click("#start")
        rng = random.Random(3)
        blocks = decisions = 0
        while True:
            page.wait_for_function("['deciding', 'blocking', 'over'].includes(document.body.dataset.status)"
                                   " && !document.querySelector('#choices button:disabled')", timeout=60_000)
            status = page.evaluate("document.body.dataset.status")
            if status == "over":
                break
            buttons = page.locator("#choices button")
            assert buttons.count() > 0
            if status == "blocking":
                blocks += 1
                prompt = page.locator("#prompt")
                assert prompt.get_attribute("class") == "block" and prompt.is_visible()
                assert prompt.inner_text().startswith("BLOCK?")
                assert " attacks P0" in page.locator("#recent li").last.inner_text()
                assert page.evaluate("document.activeElement === document.querySelector('#choices button')")
                assert buttons.last.inner_text().endswith("let the attack through (do not block)")
            else:
                assert page.locator("#prompt").get_attribute("class") == ""
            before = page.evaluate("document.body.dataset.status + document.querySelector('#recent').textContent"
                                   " + document.querySelector('#table').textContent")
            buttons.nth(rng.randrange(buttons.count())).click()
            page.wait_for_function(
                "(b) => document.body.dataset.status + document.querySelector('#recent').textContent"
                " + document.querySelector('#table').textContent !== b || document.body.dataset.status === 'over'",
                arg=before, timeout=60_000)
            decisions += 1
            assert decisions < 2000
        assert blocks > 0, "no bot attacked the person in this game"
        assert page.locator("#result").inner_text().startswith("Game over:")
        assert page.evaluate("document.scrollingElement.scrollWidth <= window.innerWidth")
        assert not problems, problems
        browser.close()
