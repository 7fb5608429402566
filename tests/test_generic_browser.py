"""The generic web page (static/generic.html) in a real browser: Debian's Chromium driven by
Playwright plays the tests' toy game (tests/toy_game.py, TOY-1..TOY-4), which has no page of
its own, at 390x844 (touch) and 1440x900 (mouse and keys): the set-up screen (player count,
seat, a bot per other seat, a practice seed; Start is never enabled before it works), the
cold start's words, a refused start, prompts that stay true while the bots play, the recent
moves by turn, keys for every choice with a cue when they do not fit, choices that show the
table cards they name, and the layout rules (nothing scrolls sideways; your seat, the
choices and your hand in view with nothing over them; the width used on a laptop). A reload
finds the same game, "New game" ends an unfinished one and goes back to the set-up screen,
the rematch starts another with the same settings. A closed tab's beacon marks its game
away, and past the grace the game no longer counts (a reload's beacon does not end it).
Without Chromium this test fails and says so."""

from __future__ import annotations

import json
import re

import pytest

from tests.pagekit import (  # noqa: F401
    check_end,
    SIZES,
    browser_page,
    check_layout,
    decide,
    end_game,
    in_view,
    open_game,
    page_server,
    play,
    settled,
    stored,
)

pytestmark = pytest.mark.browser

STAGE = "Compiling Pairs's rules engine (the first start after an install takes up to a minute)"


def _gone(page, page_server: str, game: dict) -> int:
    """The status of GET for ``game`` (its id and token) now."""
    return page.evaluate("""async ([url, g]) => (await fetch(url + '/api/toy/games/' + g.id,
                              {headers: {'X-Seat-Token': g.token}})).status""", [page_server, game])


def _close(browser, page) -> None:
    """End the tab's game (the server keeps at most 4 per client), then the browser."""
    try:
        page.unroute_all(behavior="ignoreErrors")
        end_game(page)
    finally:
        browser.close()


def _patch_new_game(page, change) -> None:
    """Every new game's first view (POST /api/toy/games) passes through ``change(view)``."""
    def route(r):
        if r.request.method != "POST":
            return r.continue_()
        response = r.fetch()
        view = response.json()
        if response.ok:
            change(view)
        r.fulfill(response=response, body=json.dumps(view))

    page.route("**/api/toy/games", route)


@pytest.mark.parametrize("size", list(SIZES))
def test_play_the_toy_game_on_the_generic_page(page_server, size):  # noqa: F811
    from playwright.sync_api import sync_playwright

    phone = size == "phone"
    with sync_playwright() as p:
        browser, page = browser_page(p, size)
        problems = page.problems
        try:
            # A tab without a game shows the set-up screen, filled from GET /api/toy/bots.
            page.goto(page_server + "/toy")
            assert settled(page) == "setup" and page.locator("#setup").is_visible()
            assert page.locator("#game").is_hidden() and page.locator("#new-game").is_hidden()
            assert page.locator("#players option").all_inner_texts() == ["2 players", "3 players", "4 players"]
            assert page.locator("#players").input_value() == "3"  # the game's default count
            opponents = page.locator("#opponents select")
            assert opponents.count() == 2  # one per other seat
            assert [opponents.nth(k).input_value() for k in range(2)] == ["toy-high", "toy-low"]  # the default line-up
            assert "toy-high - Easy" in opponents.first.locator("option").all_inner_texts()  # with its level
            assert page.locator("#variants").is_hidden()  # the toy game offers no rule variants
            page.locator("#players").select_option("4")
            page.locator("#seat").select_option("2")
            assert opponents.count() == 3
            assert [opponents.nth(k).get_attribute("data-seat") for k in range(3)] == ["0", "1", "3"]
            width, inner = page.evaluate("[document.scrollingElement.scrollWidth, window.innerWidth]")
            assert width <= inner, f"{size}, set-up: the page scrolls sideways"
            assert open_game(page, page_server, "toy", players=4, seat=2, opponents=["toy-low"], seed=12) == "your_turn"
            assert page.locator("#title").inner_text() == "Pairs"
            seats = page.locator("#seats .gseat")
            assert seats.count() == 4 and page.locator("#seats .gseat.you").get_attribute("data-seat") == "2"
            assert "toy-low, Beginner" in seats.nth(0).inner_text()  # the bots are named, with their level
            assert "practice" in page.locator("#status").inner_text()  # a chosen seed
            assert page.locator("#choices button .key").first.inner_text() == "1"  # key 1 takes it
            assert re.search(r"play a [1-8]$", page.locator("#choices button").first.inner_text())  # TOY-2
            # The game's page plugin (GameSpec.web, tests/toy_web/table.js) drew its own parts.
            assert page.locator("#seats .gseat .toy-pips").nth(2).inner_text() == "ooo"
            assert page.locator("#choices button .toy-big").first.inner_text() in "12345678"
            assert page.locator("#toy-banner").inner_text() == "Pairs for 4"
            if not phone:  # a laptop's width is used: the game is not in a third of the screen
                assert page.locator("#play").bounding_box()["width"] >= 0.95 * SIZES[size]["width"]
                assert page.locator("#board").bounding_box()["width"] >= 0.55 * SIZES[size]["width"]

            # Two decisions, then a reload: the same game at the same decision.
            play(page, size, stop_after=2)
            first = stored(page, "toy")
            decision = page.evaluate("document.body.dataset.decision")
            assert page.locator("#moves li").count() >= 1
            page.reload()
            assert settled(page) == "your_turn"
            assert page.evaluate("document.body.dataset.gameId") == first["id"] and stored(page, "toy") == first
            assert page.evaluate("document.body.dataset.decision") == decision

            # "New game" ends the unfinished one (DELETE) and goes back to the set-up screen,
            # which keeps the last settings.
            page.locator("#new-game").click()
            assert settled(page) == "setup" and stored(page, "toy") is None
            assert _gone(page, page_server, first) == 404
            assert page.locator("#players").input_value() == "4" and page.locator("#seat").input_value() == "2"
            assert page.locator("#seed").input_value() == "12"
            start = page.locator("#start")
            start.tap() if phone else start.click()
            assert settled(page) == "your_turn"
            second = stored(page, "toy")
            assert second["id"] != first["id"]

            # Play it to its end screen: the standings and the rematch.
            play(page, size)
            assert settled(page) == "over"
            assert page.locator("#end").is_visible() and page.locator("#standings tr").count() == 4
            assert page.locator("#endline").inner_text().startswith(("You won", "You lost"))
            assert page.locator("#choices button").count() == 0
            width, inner = page.evaluate("[document.scrollingElement.scrollWidth, window.innerWidth]")
            assert width <= inner, f"{size}, end screen: the page scrolls sideways"
            rematch = page.locator("#rematch")
            check_end(page, f"{size}, end screen")  # "Play again" in view without scrolling
            rematch.tap() if phone else rematch.click()
            page.wait_for_function(f"document.body.dataset.gameId && document.body.dataset.gameId !== '{second['id']}'")
            assert settled(page) == "your_turn" and page.locator("#end").is_hidden()
            assert stored(page, "toy")["id"] != second["id"]
            assert _gone(page, page_server, second) == 404
            # the same settings: four seats, you at seat 2, the practice seed
            assert page.locator("#seats .gseat").count() == 4
            assert page.locator("#seats .gseat.you").get_attribute("data-seat") == "2"
            assert "practice" in page.locator("#status").inner_text()
            assert not problems, problems
        finally:
            _close(browser, page)


def test_start_tapped_at_once_starts_a_game(page_server):  # noqa: F811
    """The defect: at 390x844 a tap on Start in the first seconds after load did nothing.
    Start is disabled and says "Loading..." until the set-up is read; then a tap starts."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser, page = browser_page(p, "phone")
        try:
            page.goto(page_server + "/toy")
            page.locator("#start").tap()  # at once
            assert settled(page) == "your_turn"

            held = []
            page.route("**/api/toy/bots", lambda r: held.append(r))  # the set-up's options are slow to come
            page.evaluate("sessionStorage.clear()")
            page.goto(page_server + "/toy")
            page.wait_for_function("document.querySelector('#start') !== null")
            start = page.locator("#start")
            assert start.is_disabled() and start.inner_text() == "Loading..."
            assert page.evaluate("document.body.dataset.status") == "loading"
            start.tap(force=True)  # a tap now does nothing, and nothing breaks
            assert page.evaluate("document.body.dataset.status") == "loading"
            page.wait_for_function("document.readyState === 'complete'")
            assert held, "the page did not ask for its set-up"
            held[0].continue_()
            page.unroute("**/api/toy/bots")
            page.wait_for_function("!document.getElementById('start').disabled")
            assert start.inner_text() == "Start game"
            start.tap()
            assert settled(page) == "your_turn"
            assert not page.problems, page.problems
        finally:
            _close(browser, page)


def test_cold_start_and_a_refused_start(page_server):  # noqa: F811
    """While the game is made the page says what the server loads for it (GET
    /api/toy/status), not a bare spinner; a refused start (429) shows the server's words and
    keeps the form."""
    from playwright.sync_api import sync_playwright

    loading = {"ready": False, "stage": STAGE, "done": 0, "total": 1, "elapsed": 3.2, "error": None,
               "parts": [{"name": "toy engine", "game": "toy", "what": "Pairs's rules engine", "ready": False}]}
    with sync_playwright() as p:
        browser, page = browser_page(p, "phone")
        try:
            page.route("**/api/toy/status*", lambda r: r.fulfill(json=loading))
            page.goto(page_server + "/toy")
            assert settled(page) == "setup"
            page.wait_for_function("!document.getElementById('server-line').hidden")
            assert STAGE in page.locator("#server-line").inner_text()  # said on the set-up screen too

            # A refused start: the server's plain words, the form kept as it was.
            detail = "too many games from your address: at most 4 at a time; end one of them first"
            page.route("**/api/toy/games", lambda r: r.fulfill(status=429, json={"detail": detail},
                                                               headers={"Retry-After": "30"}))
            page.locator("#players").select_option("2")
            page.locator("#start").tap()
            page.wait_for_function("!document.getElementById('error').hidden")
            assert settled(page) == "setup" and page.locator("#error").inner_text() == detail
            assert page.locator("#setup").is_visible() and page.locator("#players").input_value() == "2"
            page.unroute("**/api/toy/games")

            # The cold start: the game's POST waits while the server compiles.
            held = []
            page.route("**/api/toy/games", lambda r: held.append(r))
            page.locator("#start").tap()
            page.wait_for_function("document.getElementById('loading-text').textContent.includes('Compiling')")
            assert page.evaluate("document.body.dataset.status") == "loading"
            assert page.locator("#loading").is_visible() and page.locator("#setup").is_hidden()
            assert STAGE in page.locator("#loading-text").inner_text()
            assert page.locator("#loading-parts li").all_inner_texts() == ["Pairs's rules engine: loading"]
            assert page.locator("#error").is_hidden()  # the refusal's words are gone
            held[0].continue_()
            page.unroute("**/api/toy/games")
            assert settled(page) == "your_turn" and page.locator("#loading").is_hidden()
            assert page.locator("#seats .gseat").count() == 2
            assert not page.problems, page.problems
        finally:
            _close(browser, page)


def test_prompt_while_the_bots_play_and_moves_by_turn(page_server):  # noqa: F811
    """From your decision until the next one the prompt says the bots play (never a stale
    "Your decision"); the recent moves come under their turn's heading, yours marked."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser, page = browser_page(p, "desktop")
        try:
            assert open_game(page, page_server, "toy", players=3, seed=5) == "your_turn"
            assert page.locator("#prompt").inner_text().startswith("Your decision")
            held = []
            page.route("**/actions", lambda r: held.append(r))
            text = page.locator("#choices button").first.inner_text()
            page.locator("#choices button").first.click()
            page.wait_for_function("document.body.dataset.status === 'waiting'")
            prompt = page.locator("#prompt").inner_text()
            assert "bots are playing" in prompt and "Your decision" not in prompt
            assert re.sub(r"^\d+", "", text.split("\n")[-1]).strip()[-9:] in prompt  # what you chose
            assert "Your decision" not in page.locator("#status").inner_text()
            assert page.locator("#choices button:disabled").count() == page.locator("#choices button").count()
            page.wait_for_timeout(200)
            assert held
            held[0].continue_()
            page.unroute("**/actions")
            assert settled(page) == "your_turn"
            heads = page.locator("#moves h3").all_inner_texts()
            assert heads and all(re.fullmatch(r"Turn \d+", h) for h in heads), heads
            assert len(heads) == len(set(heads)) >= 2  # your turn and the bots' after it
            mine = page.locator("#moves li.mine")
            assert mine.count() >= 1 and mine.first.inner_text().startswith("you: ")
            assert page.locator("#moves .turn-group").first.locator("li.mine").count() >= 1  # yours came first
            assert not page.problems, page.problems
        finally:
            _close(browser, page)


def test_a_choice_the_server_cannot_take_is_explained_in_a_players_words(page_server):  # noqa: F811
    """No answer (the server stopped): the page says it cannot reach the server and that the
    game is kept, and the same choice goes through once it answers. A choice that came too
    late (the game moved on in another tab): the page says so and shows where the game
    stands. A game removed from the server: the page says so and offers the set-up screen.
    None of them shows the API's words (HTTP verbs, paths, field names)."""
    from playwright.sync_api import sync_playwright

    api_words = re.compile(r"POST|GET|/api/|decision_number|TypeError|HTTP")
    with sync_playwright() as p:
        browser, page = browser_page(p, "desktop")
        try:
            assert open_game(page, page_server, "toy", players=3, seed=5) == "your_turn"
            decision = int(page.evaluate("document.body.dataset.decision"))
            # 1. no answer at all
            page.route("**/actions", lambda r: r.abort("connectionrefused"))
            page.locator("#choices button").first.click()
            assert settled(page) == "your_turn"
            error = page.locator("#error").inner_text()
            assert error.startswith("Cannot reach the server") and "kept" in error and not api_words.search(error)
            assert int(page.evaluate("document.body.dataset.decision")) == decision  # nothing was played
            page.unroute("**/actions")
            page.locator("#choices button").first.click()  # the server is back: the choice is taken
            assert settled(page) in ("your_turn", "over") and page.locator("#error").is_hidden()
            assert int(page.evaluate("document.body.dataset.decision")) > decision
            # a server in trouble (500 to the choice and to reading the game): the game is kept
            decision = int(page.evaluate("document.body.dataset.decision"))
            page.route("**/api/toy/games/**", lambda r: r.fulfill(status=500, body="{}"))
            page.locator("#choices button").first.click()
            assert settled(page) == "your_turn" and stored(page, "toy") is not None
            error = page.locator("#error").inner_text()
            assert "Nothing is lost" in error and "HTTP 500" in error, error
            page.unroute("**/api/toy/games/**")
            assert int(page.evaluate("document.body.dataset.decision")) == decision
            # 2. the game moved on elsewhere: another tab answers this decision first
            game, n = stored(page, "toy"), int(page.evaluate("document.body.dataset.decision"))
            action = int(page.locator("#choices button").first.get_attribute("data-action"))
            status = page.evaluate("""async ([url, g, a, n]) => (await fetch(url + '/api/toy/games/' + g.id + '/actions',
                {method: 'POST', headers: {'X-Seat-Token': g.token, 'Content-Type': 'application/json'},
                 body: JSON.stringify({action: a, decision_number: n})})).status""", [page_server, game, action, n])
            assert status == 200
            page.locator("#choices button").first.click()
            assert settled(page) in ("your_turn", "over")
            error = page.locator("#error").inner_text()
            assert ("moved on" in error or "already over" in error) and not api_words.search(error), error
            assert int(page.evaluate("document.body.dataset.decision")) > n  # where the game stands now
            # 3. the game is removed from the server while the page shows it
            assert open_game(page, page_server, "toy", players=3, seed=5) == "your_turn"  # a new one
            game = stored(page, "toy")
            page.evaluate("""async ([url, g]) => fetch(url + '/api/toy/games/' + g.id,
                {method: 'DELETE', headers: {'X-Seat-Token': g.token}})""", [page_server, game])
            page.locator("#choices button").first.click()
            assert settled(page) == "setup" and page.locator("#setup").is_visible()
            error = page.locator("#error").inner_text()
            assert "no longer on the server" in error and not api_words.search(error), error
            assert stored(page, "toy") is None
            assert not page.problems, page.problems
        finally:
            _close(browser, page)


@pytest.mark.parametrize("size", list(SIZES))
def test_keys_for_every_choice_and_a_cue_for_the_ones_out_of_view(page_server, size):  # noqa: F811
    """Keys 1-9, then 0, then a-z; a choices box too small for them scrolls and says how
    many are out of its view. The toy game has at most two choices, so the first view is
    given twelve (each takes the game's first legal action)."""
    from playwright.sync_api import sync_playwright

    def twelve(view):
        first = view["table"]["choices"][0]
        view["table"]["choices"] = [{"action": first["action"], "text": f"{first['text']} (way {k + 1})"}
                                    for k in range(12)]

    with sync_playwright() as p:
        browser, page = browser_page(p, size)
        try:
            _patch_new_game(page, twelve)
            assert open_game(page, page_server, "toy") == "your_turn"
            keys = page.locator("#choices button .key").all_inner_texts()
            assert keys == list("1234567890ab")
            check_layout(page, f"{size}, twelve choices")  # the cue when they do not fit
            if size == "phone":
                cue = page.locator("#choices-more")
                assert cue.is_visible() and re.search(r"\d+ more below", cue.inner_text())
                page.locator("#choices button").last.scroll_into_view_if_needed()
                page.wait_for_function("/more above/.test(document.getElementById('choices-more').textContent)")
            decide(page, 11, "key")  # "b", the twelfth
            assert settled(page) in ("your_turn", "over")
            assert page.locator("#moves li.mine").count() >= 1
            assert not page.problems, page.problems
        finally:
            _close(browser, page)


@pytest.mark.parametrize("size", list(SIZES))
def test_the_page_draws_public_cards_and_your_hand_with_their_texts(page_server, size):  # noqa: F811
    """The toy game describes no cards; a description that has them (a market, a hand with
    counts and texts, seat flags, choices naming the cards by ``refs``) is drawn from the
    table description alone: a choice shows the cards it names, which are marked on the
    table."""
    from playwright.sync_api import sync_playwright

    def with_cards(view):
        t = view["table"]
        t["table"] = [{"name": "Market", "cards": [{"slot": 1, "text": "Sword: +2 attack"},
                                                   {"slot": 2, "text": "Shield: block 2 damage"},
                                                   {"slot": 3, "text": "Lantern: see a hidden card"}]}]
        t["hand"] = [{"name": "Potion", "count": 2, "text": "heal 3 HP", "zone": "hand"}]
        t["seats"][0]["flags"] = ["first player"]
        # a crowded table (ten seats, yours near the end): your seat stays in view
        t["seats"] += [{**t["seats"][-1], "seat": q, "name": f"player {q}", "deciding": False}
                       for q in range(len(t["seats"]), 10)]
        for s in t["seats"]:
            s["you"] = s["seat"] == 8
        t["choices"][0]["refs"] = [{"zone": "Market", "slot": 2}, {"zone": "hand", "slot": 0}]

    with sync_playwright() as p:
        browser, page = browser_page(p, size)
        try:
            _patch_new_game(page, with_cards)
            assert open_game(page, page_server, "toy") == "your_turn"
            assert page.locator("#zones .zone h2").inner_text() == "Market"
            assert page.locator("#zones .gcard").first.inner_text() == "1. Sword: +2 attack"
            assert page.locator("#hand-panel").is_visible()
            assert page.locator("#hand .gcard").inner_text().replace("\n", "") == "2xPotion: heal 3 HP"
            assert "first player" in page.locator("#seats .gseat").first.inner_text()
            assert page.locator("#seats .gseat").count() == 10
            assert page.locator("#seats .gseat.you").get_attribute("data-seat") == "8"
            refs = page.locator("#choices button").first.locator(".ref")
            assert refs.all_inner_texts() == ["Market 2Shield: block 2 damage", "handPotion: heal 3 HP"] or \
                [t.replace("\n", " ") for t in refs.all_inner_texts()] == \
                ["Market 2 Shield: block 2 damage", "hand Potion: heal 3 HP"]
            in_view(page, "#choices button .ref", f"{size}, the card a choice names", first=True)
            marked = page.locator("#zones .gcard.referenced")
            assert marked.count() == 1 and marked.get_attribute("data-slot") == "2"
            assert page.locator("#hand .gcard.referenced").count() == 1
            page.locator("#choices button").first.focus()
            assert "ref-focus" in marked.get_attribute("class")
            check_layout(page, f"{size}, cards on the table")
            assert not page.problems, page.problems
        finally:
            _close(browser, page)


def test_the_set_up_screen_offers_the_games_variants(page_server):  # noqa: F811
    """The variants a game states (``setup_fields``, with the values each player count
    allows and the rules' defaults, from GET /api/{game}/bots) are offered on the set-up
    screen and sent as ``rules``. The toy game states none, so its listing is given some;
    the server refuses them (they are not the toy game's) and the page says so."""
    from playwright.sync_api import sync_playwright

    fields = {"pair_bonus": {"type": "integer", "minimum": 0, "maximum": 5, "description": "points for a pair"},
              "deal": {"enum": ["open", "closed"], "description": "how the cards are dealt"},
              "long_game": {"type": "boolean", "description": "two decks (3-4 players)"},
              "max_turns": {"type": "integer", "minimum": 1, "maximum": 1000, "description": "1-1000"}}

    def with_variants(route):
        response = route.fetch()
        listing = response.json()
        listing["setup_fields"] = fields
        listing["setup_values"] = {"2": {"long_game": [False]}, "3": {}, "4": {}}
        listing["setup_defaults"] = {str(p): {"pair_bonus": 3, "deal": "open", "long_game": False, "max_turns": None}
                                     for p in (2, 3, 4)}
        route.fulfill(response=response, body=json.dumps(listing))

    sent = []

    def refuse(route):
        sent.append(route.request.post_data_json)
        route.fulfill(status=422, json={"detail": "rules: pair_bonus is not a field of Pairs' rules"})

    with sync_playwright() as p:
        browser, page = browser_page(p, "desktop")
        try:
            page.route("**/api/toy/bots", with_variants)
            page.route("**/api/toy/games", refuse)
            page.goto(page_server + "/toy")
            assert settled(page) == "setup"
            assert page.locator("#setup-title").inner_text() == "Set up a game of Pairs"
            page.locator("#variants summary").click()
            bonus = page.locator("#rule-pair_bonus")
            assert bonus.locator("option").all_inner_texts() == ["default (3)", "0", "1", "2", "3", "4", "5"]
            assert page.locator("#rule-deal option").all_inner_texts() == ["default (open)", "open", "closed"]
            assert page.locator("#rule-max_turns").get_attribute("type") == "number"  # too many values for a list
            assert page.locator("#rule-max_turns").get_attribute("placeholder") == "default (rulebook)"
            page.locator("#players").select_option("2")
            assert page.locator("#rule-long_game").is_disabled()  # one value only at 2 players
            page.locator("#players").select_option("3")
            assert page.locator("#rule-long_game option").all_inner_texts() == ["default (no)", "yes", "no"]
            bonus.select_option("5")
            page.locator("#rule-deal").select_option("closed")
            page.locator("#rule-long_game").select_option("true")
            page.locator("#rule-max_turns").fill("40")
            page.locator("#start").click()
            page.wait_for_function("!document.getElementById('error').hidden")
            assert settled(page) == "setup"
            assert page.locator("#error").inner_text() == "rules: pair_bonus is not a field of Pairs' rules"
            assert sent == [{"players": 3, "seat": 0, "opponents": ["toy-high", "toy-low"],
                             "rules": {"pair_bonus": 5, "deal": "closed", "long_game": True, "max_turns": 40}}]
            assert bonus.input_value() == "5" and page.locator("#rule-max_turns").input_value() == "40"  # kept
            assert not page.problems, page.problems
        finally:
            _close(browser, page)


def test_a_story_line_names_its_mover_once(page_server):  # noqa: F811
    """Story lines (``view.recent``) in the games' three shapes: one that already begins with
    the mover's label is shown as it is, one that begins with the seat's bare name gets the
    label in its place (your own seat's name gets "(you)"), any other is "who: text"."""
    from playwright.sync_api import sync_playwright

    def with_story(view):
        names = [s["name"] for s in view["table"]["seats"]]
        me = view["seat"]
        bot = next(q for q in range(len(names)) if q != me)
        who = f"{names[bot]} ({view['controllers'][bot]})"
        view["recent"] = [
            {"seat": me, "who": "you", "kind": "play", "text": f"{names[me]} plays a 3", "turn": 1},
            {"seat": bot, "who": who, "kind": "play", "text": f"{who} plays a 5", "turn": 1},
            {"seat": bot, "who": who, "kind": "draw", "text": f"{names[bot]} draws a card", "turn": 1},
            {"seat": bot, "who": who, "kind": "score", "text": "scores 5", "turn": 1},
            {"seat": -1, "who": "the table", "kind": "over", "text": "the deck is empty", "turn": 1},
        ]
        view["_expected"] = [f"{names[me]} (you) plays a 3", f"{who} plays a 5", f"{who} draws a card",
                             f"{who}: scores 5", "the deck is empty"]

    expected = {}

    def patch(view):
        with_story(view)
        expected["lines"] = view.pop("_expected")

    with sync_playwright() as p:
        browser, page = browser_page(p, "desktop")
        try:
            _patch_new_game(page, patch)
            assert open_game(page, page_server, "toy") == "your_turn"
            assert page.locator("#moves li").all_inner_texts() == expected["lines"]
            assert page.locator("#moves li.mine").count() == 1
            end_game(page)
        finally:
            browser.close()


@pytest.fixture(scope="module")
def tight_server():
    """A server that lets one client keep two live games at once."""
    from tests.pagekit import serve

    yield from serve(max_games_per_client=2)


def test_a_person_is_never_locked_out_by_their_own_games(tight_server):
    """Two tabs start games and are closed (their games stay live); the third tab's start is
    refused (429) in plain words, with a button that ends this browser's previous games (of
    every game; the browser keeps them in localStorage) and starts the game."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser, page = browser_page(p, "phone")
        try:
            context = page.context
            old = []
            for _ in range(2):
                tab = context.new_page()
                assert open_game(tab, tight_server, "toy") == "your_turn"
                old.append(stored(tab, "toy"))
                tab.close()  # closed without ending its game
            page.goto(tight_server + "/toy")
            assert settled(page) == "setup"
            page.locator("#start").tap()
            page.wait_for_function("!document.getElementById('error').hidden")
            assert settled(page) == "setup"
            assert "live games" in page.locator("#error").inner_text()  # the server's plain words
            button = page.locator("#end-previous")
            assert button.is_visible() and button.inner_text() == "End my previous games and start"
            button.tap()
            page.wait_for_function("document.body.dataset.status === 'your_turn'", timeout=60_000)
            assert page.locator("#error").is_hidden()
            for g in old:
                assert _gone(page, tight_server, g) == 404
            assert len(page.evaluate("JSON.parse(localStorage.getItem('ripmarket.my-games'))")) == 1
            assert not page.problems, page.problems
        finally:
            browser.close()


def test_a_closed_tabs_game_stops_counting_after_a_short_grace():
    """Issue 39, item 2: a tab that goes away sends the server a beacon (pagehide). A reload
    sends it too and resumes the same game at once, which clears the mark (or, when the
    resume reaches the server first, the beacon names the page before the reload and is
    ignored): the game lives on long past the grace. Two tabs closed: the server marks
    their games away, and once the grace is over they no longer count, so the third game
    starts without the "End my previous games" button (the limit is two). The server's clock is skewed forward instead
    of waiting for the grace."""
    import time

    from playwright.sync_api import sync_playwright

    from ripmarket_env.app.server import create_app
    from tests.pagekit import serve

    skew = [0.0]
    app = create_app(max_games=8, max_games_per_client=2, away_seconds=10, clock=lambda: time.time() + skew[0])
    manager = app.state.games
    beacons, pages = [], []
    mark = manager.away
    manager.away = lambda game, game_id, token, page=None: (
        beacons.append(game_id), pages.append(page), mark(game, game_id, token, page))[2]

    def away_since(g: dict):
        return manager._live[g["id"]].away_since

    def wait_for_beacon(g: dict) -> None:
        deadline = time.monotonic() + 20
        while g["id"] not in beacons:
            assert time.monotonic() < deadline, f"no beacon for game {g['id']} reached the server"
            time.sleep(0.05)

    server = serve(app=app)
    base = next(server)
    with sync_playwright() as p:
        browser, page = browser_page(p, "desktop")
        try:
            context = page.context
            closed = []
            for k in range(2):
                tab = context.new_page()
                assert open_game(tab, base, "toy") == "your_turn"
                g = stored(tab, "toy")
                if k == 0:  # a reload: the beacon goes, the page resumes the same game and clears the mark
                    tab.reload()
                    assert settled(tab) == "your_turn" and stored(tab, "toy") == g
                    wait_for_beacon(g)
                    assert away_since(g) is None
                    skew[0] += 60  # long past the grace: the game still plays
                    assert _gone(tab, base, g) == 200
                    beacons.clear()
                closed.append(g)
                tab.close(run_before_unload=True)  # fires pagehide: the page sends its beacon
                wait_for_beacon(g)
                assert away_since(g) is not None  # the server marked the game away
            assert manager.client_games("127.0.0.1") == 2  # still counted within the grace
            skew[0] += 11
            page.goto(base + "/toy")
            assert settled(page) == "setup"
            page.locator("#start").click()
            assert settled(page) == "your_turn", page.locator("#error").inner_text()
            assert page.locator("#end-previous").count() == 0 and page.locator("#error").is_hidden()
            for g in closed:
                assert _gone(page, base, g) == 410
                assert manager.store.get("toy", g["id"]).end_reason.startswith("tab closed")
            assert pages and all(isinstance(x, str) and x for x in pages)  # every beacon names its page
            assert not page.problems, page.problems
        finally:
            browser.close()
            next(server, None)
