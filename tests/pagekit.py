"""What every browser test of the one web page shares: the server, Chromium, the two window
sizes, and the moves of a person at the page (open a game, wait for it to settle, decide,
check that what a decision needs is in view). Every game is played on the same page
(``static/generic.html`` + the game's plugin), so every game's browser test is written with
these helpers and only asserts what its own table shows.

Without Chromium a browser test fails and says how to install it (it is not skipped).
"""

from __future__ import annotations

import json
import os
import socket
import threading
import time

import pytest

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--no-first-run", "--disable-sync"]
SIZES = {"desktop": {"width": 1440, "height": 900}, "phone": {"width": 390, "height": 844}}


def require_chromium() -> None:
    """Fail (not skip) when Debian's Chromium is missing, saying how to install it."""
    if not (os.path.exists(CHROMIUM) and os.access(CHROMIUM, os.X_OK)):
        pytest.fail(f"{CHROMIUM} is not installed: run `make browser-deps` (apt-get install -y chromium)",
                    pytrace=False)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve(**app_kwargs):
    """Run ``create_app(**app_kwargs)`` on a free loopback port in a thread; yields its URL."""
    import uvicorn

    from ripmarket_env.app.server import create_app

    port = _free_port()
    server = uvicorn.Server(uvicorn.Config(create_app(**{"max_games": 8, **app_kwargs}), host="127.0.0.1",
                                           port=port, log_level="warning", lifespan="off"))
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


@pytest.fixture(scope="module")
def page_server():
    """The server of a browser test module (its URL)."""
    yield from serve()


def browser_page(p, size: str):
    """``(browser, page)``: Chromium at ``size`` ("phone": touch, 390x844; "desktop":
    1440x900); page errors are collected in ``page.problems``."""
    require_chromium()
    phone = size == "phone"
    browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
    context = browser.new_context(viewport=SIZES[size], has_touch=phone, is_mobile=phone)
    page = context.new_page()
    page.problems = []
    page.on("pageerror", lambda exc: page.problems.append(f"page error: {exc}"))
    return browser, page


def settled(page, timeout: float = 120_000) -> str:
    """Wait until the page waits for the person (``your_turn``, ``over``, ``setup`` or
    ``error``) and nothing is in flight; its status."""
    page.wait_for_function("['your_turn', 'over', 'setup', 'error'].includes(document.body.dataset.status) "
                           "&& !document.body.classList.contains('busy')", timeout=timeout)
    return page.evaluate("document.body.dataset.status")


def stored(page, game: str) -> dict | None:
    """The game this tab plays (its id and seat token), as the page keeps it."""
    return page.evaluate(f"JSON.parse(sessionStorage.getItem('ripmarket.generic.{game}'))")


def open_game(page, base: str, game: str, players: int | None = None, seat: int = 0,
              opponents: list[str] | None = None, rules: dict | None = None, seed: int | None = None) -> str:
    """Open ``game``'s page and start a game with these settings (the game's defaults for
    what is not given); the page's status once settled."""
    page.goto(f"{base}/{game}")
    status = settled(page)
    body = {k: v for k, v in {"players": players, "seat": seat, "opponents": opponents, "rules": rules,
                              "seed": seed}.items() if v is not None}
    if body == {"seat": 0} and status != "setup":
        return status
    made = page.evaluate("""async ([url, game, body, old]) => {
        if (old && old.id) await fetch(`${url}/api/${game}/games/${old.id}`,
                                       {method: 'DELETE', headers: {'X-Seat-Token': old.token}});
        const r = await fetch(`${url}/api/${game}/games`, {method: 'POST',
            headers: {'Content-Type': 'application/json'}, body: JSON.stringify(body)});
        return [r.status, await r.json()];
    }""", [base, game, body, stored(page, game)])
    assert made[0] == 201, f"could not start {game} with {json.dumps(body)}: {made[1]}"
    page.evaluate(f"sessionStorage.setItem('ripmarket.generic.{game}', "
                  f"JSON.stringify({{id: {json.dumps(made[1]['game_id'])}, token: {json.dumps(made[1]['seat_token'])}}}))")
    page.reload()
    return settled(page)


def in_view(page, selector: str, where: str, first: bool = False) -> None:
    """``selector`` (its first match when ``first``) is shown, inside the window."""
    width, height = page.evaluate("[window.innerWidth, window.innerHeight]")
    loc = page.locator(selector)
    box = (loc.first if first else loc).bounding_box()
    assert box is not None, f"{where}: {selector} is not shown"
    assert box["x"] >= -0.5 and box["x"] + box["width"] <= width + 0.5, f"{where}: {selector} sticks out sideways {box}"
    assert box["y"] >= -0.5 and box["y"] + box["height"] <= height + 0.5, f"{where}: {selector} is outside the window {box}"


def check_layout(page, where: str) -> None:
    """At a decision: nothing scrolls sideways, and your choices (the first of them at least),
    your seat and your hand (when the game shows one) are inside the window."""
    width, inner = page.evaluate("[document.scrollingElement.scrollWidth, window.innerWidth]")
    assert width <= inner, f"{where}: the page is {width} px wide in a {inner} px window"
    assert page.locator("#choices button").count() >= 1, f"{where}: no choices shown on your turn"
    in_view(page, "#choices button", where, first=True)
    in_view(page, "#seats .gseat.you", where)
    if page.locator("#hand-panel").is_visible():
        in_view(page, "#hand-panel", where)


def decide(page, k: int, how: str) -> None:
    """Take choice ``k`` (0-based) by ``how``: "click", "tap" or "key" (its key label)."""
    decision = int(page.evaluate("document.body.dataset.decision"))
    button = page.locator("#choices button").nth(k)
    if how == "key":
        key = button.locator(".key").inner_text().strip()
        assert key, f"choice {k + 1} has no key"
        page.keyboard.press(key)
    elif how == "tap":
        button.tap()
    else:
        button.click()
    page.wait_for_function(f"Number(document.body.dataset.decision) > {decision} "
                           "|| document.body.dataset.status === 'over'", timeout=120_000)


def play(page, size: str, pick=None, stop_after: int | None = None, limit: int = 2_000, check=check_layout) -> int:
    """Decide until the game is over (or ``stop_after`` decisions): ``pick(page, n, count)``
    chooses the index (default: cycle through the choices); a tap on a phone, else a click
    and a key in turn; ``check`` runs at every decision. The number of decisions taken."""
    n = 0
    while settled(page) == "your_turn":
        if stop_after is not None and n >= stop_after:
            break
        if check is not None:
            check(page, f"{size}, decision {n}")
        count = page.locator("#choices button").count()
        k = pick(page, n, count) if pick else n % count
        how = "tap" if size == "phone" else ("key" if n % 2 and k < 9 else "click")
        decide(page, k, how)
        n += 1
        assert n <= limit, f"more than {limit} decisions"
    return n
