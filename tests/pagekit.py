"""What every browser test of the one web page shares: the server, Chromium, the two window
sizes, and the moves of a person at the page (open a game, wait for it to settle, decide,
check that what a decision needs is in view). Every game is played on the same page
(``static/generic.html`` + the game's plugin), so every game's browser test is written with
these helpers and only asserts what its own table shows. ``open_game`` starts a game the
way a person does, through the page's set-up screen; ``end_game`` ends it ("New game").

Without Chromium a browser test fails and says how to install it (it is not skipped).
"""

from __future__ import annotations

import os
import re
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


def serve(app=None, **app_kwargs):
    """Run ``app`` (default: ``create_app(**app_kwargs)``) on a free loopback port in a
    thread; yields its URL."""
    import uvicorn

    from ripmarket_env.app.server import create_app

    port = _free_port()
    app = app if app is not None else create_app(**{"max_games": 8, **app_kwargs})
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="off"))
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
    """Open ``game``'s page and start a game with these settings through its set-up screen
    (the game's defaults for what is not given: the default line-up, the rulebook); the
    page's status once settled. With no setting given, a game this tab already plays
    resumes. ``opponents``: a bot per other seat in seat order (a shorter list is repeated);
    ``rules``: the game's setup variants by name."""
    page.goto(f"{base}/{game}")
    status = settled(page)
    given = players is not None or seat != 0 or opponents or rules or seed is not None
    if status != "setup":
        if not given:
            return status
        page.locator("#new-game").click()  # ends this tab's game, back to the set-up screen
        status = settled(page)
    assert status == "setup", f"{game}: the set-up screen did not show ({status}): {page.locator('#error').inner_text()}"
    if players is not None:
        page.locator("#players").select_option(str(players))
    page.locator("#seat").select_option(str(seat))
    if opponents:
        selects = page.locator("#opponents select")
        for k in range(selects.count()):
            selects.nth(k).select_option(opponents[k % len(opponents)])
    if rules and not page.evaluate("document.getElementById('variants').open"):
        page.locator("#variants summary").click()  # the variants are folded away until asked for
    for name, value in (rules or {}).items():
        control = page.locator(f"#setup [data-rule='{name}']")
        assert control.count() == 1, f"{game}: the set-up screen offers no rule variant {name!r}"
        text = str(value).lower() if isinstance(value, bool) else str(value)
        if control.evaluate("e => e.tagName") == "SELECT":
            control.select_option(text)
        else:
            control.fill(text)
    if seed is not None:
        page.locator("#seed").fill(str(seed))
    page.locator("#start").click()
    status = settled(page)
    assert status != "setup", f"{game}: the game did not start: {page.locator('#error').inner_text()}"
    return status


def end_game(page) -> None:
    """End this tab's game the way a person does ("New game": DELETE, back to the set-up
    screen), so the server's per-client limit is not used up by a test's earlier games."""
    if page.locator("#new-game").is_visible() and not page.locator("#new-game").is_disabled():
        page.locator("#new-game").click()
        assert settled(page) == "setup"


def in_view(page, selector: str, where: str, first: bool = False) -> None:
    """``selector`` (its first match when ``first``) is shown, inside the window."""
    width, height = page.evaluate("[window.innerWidth, window.innerHeight]")
    loc = page.locator(selector)
    box = (loc.first if first else loc).bounding_box()
    assert box is not None, f"{where}: {selector} is not shown"
    assert box["x"] >= -0.5 and box["x"] + box["width"] <= width + 0.5, f"{where}: {selector} sticks out sideways {box}"
    assert box["y"] >= -0.5 and box["y"] + box["height"] <= height + 0.5, f"{where}: {selector} is outside the window {box}"


def uncovered(page, selector: str, where: str) -> None:
    """Nothing (a banner, a toast, another panel) lies over the middle of ``selector``'s
    first match: the element found there is it or inside it."""
    hit = page.locator(selector).first.evaluate("""e => { const r = e.getBoundingClientRect();
        const at = document.elementFromPoint(r.left + r.width / 2, r.top + Math.min(r.height / 2, 12));
        return at === null ? 'nothing' : (e.contains(at) ? '' : (at.id || at.className || at.tagName)); }""")
    assert not hit, f"{where}: {selector} is covered by {hit}"


def _cut_off(page, selector: str) -> bool:
    """``selector``'s text is cut short (an ellipsis or hidden overflow)."""
    return page.locator(selector).evaluate("e => e.scrollWidth > e.clientWidth + 1")


def _words_broken(page, selector: str) -> list[str]:
    """The words of ``selector``'s matches that wrap in the middle (a word's text spread
    over more than one line box; the parts of a hyphenated word count as words, since a
    line may break after a hyphen)."""
    return page.evaluate("""(sel) => { const out = [];
        for (const e of document.querySelectorAll(sel)) {
            const walk = document.createTreeWalker(e, NodeFilter.SHOW_TEXT);
            for (let n = walk.nextNode(); n; n = walk.nextNode()) {
                for (const m of n.textContent.matchAll(/[^\\s-]+/g)) {
                    const r = document.createRange(); r.setStart(n, m.index); r.setEnd(n, m.index + m[0].length);
                    const tops = new Set([...r.getClientRects()].map(q => Math.round(q.top)));
                    if (tops.size > 1) out.push(m[0]);
                }
            }
        }
        return out; }""", selector)


def check_end(page, where: str) -> None:
    """At the end screen, without scrolling anything: the result line and "Play again" are
    inside the window with nothing over them, the title and status are not cut short, no
    word of the standings wraps in its middle, and nothing scrolls sideways."""
    width, inner = page.evaluate("[document.scrollingElement.scrollWidth, window.innerWidth]")
    assert width <= inner, f"{where}: the page is {width} px wide in a {inner} px window"
    for selector in ("#endline", "#rematch"):
        in_view(page, selector, where)
    uncovered(page, "#rematch", where)
    for selector in (".topbar h1", "#status"):
        assert not _cut_off(page, selector), f"{where}: {selector} is cut short: {page.locator(selector).inner_text()!r}"
    broken = _words_broken(page, "#end table")
    assert not broken, f"{where}: the standings break words in the middle: {broken}"


def check_layout(page, where: str) -> None:
    """At a decision: nothing scrolls sideways; the title and status line are not cut short;
    your choices (the box and the first of them, with the table cards it names), your seat
    and your hand (when the game shows one) are inside the window, with nothing over them;
    a choices box that scrolls says how many choices are out of its view."""
    width, inner = page.evaluate("[document.scrollingElement.scrollWidth, window.innerWidth]")
    assert width <= inner, f"{where}: the page is {width} px wide in a {inner} px window"
    for selector in (".topbar h1", "#status"):
        assert not _cut_off(page, selector), f"{where}: {selector} is cut short: {page.locator(selector).inner_text()!r}"
    assert page.locator("#choices button").count() >= 1, f"{where}: no choices shown on your turn"
    in_view(page, "#choices", where)
    in_view(page, "#choices button", where, first=True)
    in_view(page, "#seats .gseat.you", where)
    if page.locator("#choices button").first.locator(".ref").count():  # the cards the first choice names
        in_view(page, "#choices button >> nth=0 >> .ref", where, first=True)
    for selector in ("#choices button", "#seats .gseat.you"):
        uncovered(page, selector, where)
    if page.locator("#hand-panel").is_visible():
        in_view(page, "#hand-panel", where)
    hidden = page.evaluate("""() => { const box = document.getElementById('choices'), r = box.getBoundingClientRect();
        return [...box.querySelectorAll('button')].filter(b => { const q = b.getBoundingClientRect();
            return q.bottom > r.bottom + 1 || q.top < r.top - 1; }).length; }""")
    if hidden:
        cue = page.locator("#choices-more")
        assert cue.is_visible() and sum(map(int, re.findall(r"\d+", cue.inner_text()))) == hidden, \
            f"{where}: {hidden} choices are out of the choices box's view with no cue"


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
