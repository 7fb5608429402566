"""The web page in a real browser: Debian's Chromium driven by Playwright plays a whole
3-player game against the bots with the mouse.

`make test` installs Chromium first (`make browser-deps`); without it this test fails
and says so (it is not skipped).
"""

from __future__ import annotations

import os
import random
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


def test_play_a_whole_game_with_the_mouse(server_url, tmp_path):
    require_chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            play_game(browser, server_url, tmp_path)
        finally:
            browser.close()


def play_game(browser, server_url: str, tmp_path: Path) -> None:
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    problems: list[str] = []
    page.on("pageerror", lambda exc: problems.append(f"page error: {exc}"))
    page.on("console", lambda msg: problems.append(f"console {msg.type}: {msg.text}") if msg.type == "error" else None)
    page.goto(server_url + "/")

    # Set up: 3 players, you in seat 1, one bot per other seat from the registry.
    page.wait_for_selector("#opponents select", state="attached")
    page.select_option("#players", "3")
    page.select_option("#seat", "1")
    selects = page.locator("#opponents select")
    assert selects.count() == 2
    selects.nth(0).select_option("greedy")
    selects.nth(1).select_option("survivor")
    page.fill("#seed", "17")
    page.click("#start")
    status = _settled(page)

    rng = random.Random(17)
    clicks = 0
    table_clicks = 0
    mid_game = None
    while status != "over":
        assert clicks < 300, "the game did not end within 300 clicks"
        if mid_game is None and page.locator("#rounds .round-summary").count() >= 1 and page.locator(
                "#hand .hand-card.legal, #ring .seat.targetable").count():
            mid_game = tmp_path / "web-mid-game.png"  # a decision with legal pieces lit up
            page.screenshot(path=str(mid_game), full_page=True)
        # The table draws every seat; legal pieces are enabled, the others disabled.
        assert page.locator("#ring .seat").count() == 3
        assert page.locator("#ring .seat.you").count() == 1
        for card in page.locator("#hand .hand-card").all():
            legal = "legal" in (card.get_attribute("class") or "")
            assert card.is_enabled() == legal
        choices = page.locator("#choices button.choice")
        n = choices.count()
        assert n >= 2  # one-option decisions are taken by the engine
        listed = sorted(int(choices.nth(i).get_attribute("data-action")) for i in range(n))
        on_table = page.locator("#board [data-action]:enabled, #hand [data-action]:enabled, #shadow-hand [data-action]:enabled")
        table_actions = sorted({int(x.get_attribute("data-action")) for x in on_table.all()})
        assert set(table_actions) <= set(listed)
        if table_actions and rng.random() < 0.6:  # click the card, Market slot, deck or seat itself
            a = rng.choice(table_actions)
            page.locator(f"#game [data-action='{a}']:enabled:not(.choice)").first.click()
            table_clicks += 1
        else:
            choices.nth(rng.randrange(n)).click()
        clicks += 1
        status = _settled(page)

    result = page.locator("#result")
    assert result.is_visible()
    text = result.inner_text()
    assert "Game over after" in text and ("You win" in text or "You lose" in text or "You share" in text)
    assert page.locator("#result a[download]").count() == 1
    assert page.locator("#rounds .round-summary").count() >= 1
    assert page.locator("#choices button.choice").count() == 0
    assert clicks >= 3 and table_clicks >= 1
    assert not problems, problems

    shot = tmp_path / "web.png"
    page.screenshot(path=str(shot), full_page=True)
    assert shot.stat().st_size > 10_000
    if os.environ.get("RIPMARKET_SCREENSHOT") == "1":
        out = ROOT / "docs" / "img" / "web.png"
        out.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(mid_game or shot, out)
    page.close()
