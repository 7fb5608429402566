"""The JSON API of `ripmarket serve`, through R.I.P. Market's routes (the older
``/api/games...`` paths, its aliases): games, errors, hidden information, secret seeds, the
limits (per client, in all, expiry), the store across restarts, duplicate answers, request
guards, concurrent games, the lobby and the stateless bot endpoint. A game's view is the one
session's (``TableSession.view``): the table description under ``table`` (its choices, your
hand, the seats), the story since your decision under ``recent``, the result once over."""

from __future__ import annotations

import json
import random
import threading
import time

import numpy as np
import pytest
from fastapi.testclient import TestClient

from ripmarket_env.games.ripmarket import Engine, RulesConfig
from ripmarket_env import replay
from ripmarket_env.app.server import create_app


BASE = "http://127.0.0.1"


def make_client(peer: str = "127.0.0.1", **kwargs) -> TestClient:
    """A client of a new app, talking from address ``peer`` (the client a limit counts)."""
    return TestClient(create_app(**kwargs), base_url=BASE, client=(peer, 50000))


@pytest.fixture(scope="module")
def client():
    with make_client(max_games=64, max_games_per_client=64) as c:
        yield c


def new_game(client, **body):
    body = {"players": 3, "seat": 0, "opponents": ["greedy", "survivor"], "seed": 7, **body}
    body = {k: v for k, v in body.items() if v is not None}
    r = client.post("/api/games", json=body)
    assert r.status_code == 201, r.text
    return r.json()


def tok(g) -> dict:
    return {"X-Seat-Token": g["seat_token"]}


def read(client, g):
    r = client.get(f"/api/games/{g['game_id']}", headers=tok(g))
    assert r.status_code == 200, r.text
    return r.json()


def answer(client, g, state, action):
    return client.post(f"/api/games/{g['game_id']}/actions", headers=tok(g),
                       json={"action": action, "decision_number": state["decision_number"]})


def play_out(client, g, rng: random.Random, limit: int = 400, state: dict | None = None) -> dict:
    state = state or g
    for _ in range(limit):
        if state["over"]:
            return state
        assert state["your_turn"]
        a = rng.choice(state["table"]["choices"])["action"]
        r = answer(client, g, state, a)
        assert r.status_code == 200, r.text
        state = r.json()
    raise AssertionError("the game did not end")


def detail(r) -> str:
    body = r.json()
    assert set(body) == {"detail"} and isinstance(body["detail"], str)
    return body["detail"]


# ------------------------------------------------------------------ happy path
def test_create_read_act_record(client, tmp_path):
    g = new_game(client, players=3, seat=1, seed=11)
    assert g["game_id"] and g["seat_token"] and g["game_id"] != g["seat_token"]
    assert len(g["seat_token"]) >= 24
    assert g["seat"] == 1 and g["players"] == 3 and g["seed"] == 11 and g["practice"] is True
    assert g["controllers"] == ["greedy", "you", "survivor"] and g["game"] == "ripmarket"
    assert g["your_turn"] and g["table"]["actor"] == 1 and g["table"]["prompt"].startswith("Your decision")
    assert g["table"]["choices"] and all(a["text"] for a in g["table"]["choices"])
    assert g["table"]["hand"] and all(c["text"] for c in g["table"]["hand"])  # the hand comes with card texts
    assert len(g["table"]["seats"]) == 3 and len(g["table"]["extra"]["market"]) == 3
    state = read(client, g)
    assert state["table"]["choices"] == g["table"]["choices"]

    r = client.get(f"/api/games/{g['game_id']}/record", headers=tok(g))
    assert r.status_code == 409 and "not over yet" in detail(r)

    final = play_out(client, g, random.Random(3))
    assert final["result"] is not None and final["table"]["choices"] == [] and not final["your_turn"]
    assert final["table"]["extra"]["last_round"]["lines"], "the last resolved round is reported"
    assert final["result"]["you_won"] == (1 in final["result"]["winners"])
    r = client.get(f"/api/games/{g['game_id']}/record", headers=tok(g))
    assert r.status_code == 200
    lines = [json.loads(x) for x in r.text.splitlines()]
    assert lines[0]["format"] == "ripmarket-record" and lines[0]["seed"] == 11 and lines[0]["practice"] is True
    assert lines[-1]["end"]["lines"] == len(lines) - 1  # the end marker (record version 3)
    assert lines[-2]["result"]["winners"] == final["result"]["winners"]
    path = tmp_path / "g.jsonl"
    path.write_text(r.text)
    assert bool(replay(path).terminated[0])

    r = answer(client, g, final, 0)
    assert r.status_code == 409 and "the game is over" in detail(r)


def test_rules_and_page(client):
    g = new_game(client, players=4, opponents=["random"], rules={"tie_rule": "earliest", "start_hp": 1})
    assert g["rules"]["tie_rule"] == "earliest" and g["rules"]["start_hp"] == 1
    assert g["table"]["extra"]["max_hp"] == 1 and all(s["counters"]["HP"] == "1/1" for s in g["table"]["seats"])
    assert g["controllers"] == ["you", "random", "random", "random"]
    page = client.get("/ripmarket")  # R.I.P. Market's page is the one page, with its plugin
    assert page.status_code == 200 and "text/html" in page.headers["content-type"]
    assert "/static/generic.js" in page.text and "/static/style.css" in page.text
    plugin = client.get("/plugins/ripmarket.js")
    assert plugin.status_code == 200 and 'RipmarketTable.register("ripmarket"' in plugin.text
    for name in ("generic.js", "style.css", "lobby.html"):
        assert client.get(f"/static/{name}").status_code == 200
    for gone in ("app.js", "index.html"):
        assert client.get(f"/static/{gone}").status_code == 404
    schema = client.get("/openapi.json").json()
    for path in ("/api/games", "/api/games/{game_id}", "/api/games/{game_id}/actions",
                 "/api/games/{game_id}/record", "/api/bots/{name}/act"):
        assert path in schema["paths"]
    for model in ("CreateRipmarketGame", "GameView", "GameCreated", "ActionIn", "RipmarketBotActIn", "BotActOut", "Problem"):
        assert model in schema["components"]["schemas"]


SECOND_EDITION_VARIANTS = {"ghost_phase": "in_turn", "no_survivor": "share_win", "deflect_target": "any",
                           "opening_bonus": "first_half", "token_tie": "earliest", "grace_round": False}


def test_second_edition_rule_variants(client, tmp_path):
    """The rule variants of the second edition (R-1.3, R-3.3, R-8.2, R-8.3, R-8.6, R-9.2) reach the
    game's rules, its view and its record, which replays under them."""
    g = new_game(client, players=4, seed=5, opponents=["random"], rules=SECOND_EDITION_VARIANTS)
    assert {k: g["rules"][k] for k in SECOND_EDITION_VARIANTS} == SECOND_EDITION_VARIANTS
    session = client.app.state.games.open("ripmarket", g["game_id"], g["seat_token"]).session
    assert session.rules == RulesConfig(num_players=4, **SECOND_EDITION_VARIANTS)
    assert session.rules != RulesConfig(num_players=4)  # not the defaults
    play_out(client, g, random.Random(5))
    r = client.get(f"/api/games/{g['game_id']}/record", headers=tok(g))
    path = tmp_path / "variants.jsonl"
    path.write_text(r.text)
    eng = replay(path)
    assert bool(eng.terminated[0]) and eng.rules == session.rules


def test_the_lobby_lists_every_game_from_the_catalog(client):
    """``/`` is the lobby: its script reads ``GET /api/catalog`` (no list of games of its
    own), which names every registered game with its title, player counts and page."""
    from ripmarket_env.games import registry

    page = client.get("/")
    assert page.status_code == 200 and "text/html" in page.headers["content-type"]
    assert "/api/catalog" in page.text
    assert not [g for g in registry() if g in page.text]  # not a hard-coded list
    games = client.get("/api/catalog").json()["games"]
    assert [g["id"] for g in games] == list(registry())
    for g in games:
        spec = registry()[g["id"]]
        assert g["title"] == spec.title and g["page"] == f"/{g['id']}"
        assert spec.min_players <= min(g["player_counts"]) <= max(g["player_counts"]) <= spec.max_players
        assert client.get(g["page"]).status_code == 200


def test_setup_offers_every_rule_variant_with_allowed_values(client):
    """The create body's schema has a choice for each rule variant with named values,
    exactly the values RulesConfig allows (R-1.3, R-3.3, R-8.2, R-8.3, R-8.6, R-9.2): what a
    set-up screen reads to offer them."""
    from ripmarket_env.games.ripmarket import config as C

    allowed = {"tie_rule": C.TIE_RULES, "ghost_phase": C.GHOST_PHASES, "no_survivor": C.NO_SURVIVOR,
               "deflect_target": C.DEFLECT_TARGETS, "opening_bonus": C.OPENING_BONUS, "token_tie": C.TOKEN_TIES}
    comp = client.get("/openapi.json").json()["components"]["schemas"]
    props = comp["RipmarketRules"]["properties"]
    for field, values in allowed.items():
        options = next(x for x in props[field]["anyOf"] if "enum" in x)["enum"]
        assert set(options) == set(values), field
    assert any(x.get("type") == "boolean" for x in props["grace_round"]["anyOf"])


# ------------------------------------------------------------------ errors
@pytest.mark.parametrize(
    "body, status, message",
    [
        ({"players": 11, "opponents": ["greedy"]}, 422, "players: input should be less than or equal to 10"),
        ({"players": 1, "opponents": ["greedy"]}, 422, "players: input should be greater than or equal to 2"),
        ({"players": "3", "opponents": ["greedy"]}, 422, "players: input should be a valid integer"),
        ({"players": True, "opponents": ["greedy"]}, 422, "players: input should be a valid integer, not a boolean"),
        ({"players": 2.5, "opponents": ["greedy"]}, 422, "players: input should be a valid integer, got a number with a fractional part"),
        ({"players": None, "opponents": ["greedy"]}, 422, "players: input should be a valid integer"),
        ({"players": 3, "opponents": []}, 422, "opponents: list should have at least 1 item"),
        ({"players": 3, "opponents": ["bogus"]}, 422, "unknown bot 'bogus' for R.I.P. Market; allowed: greedy"),
        ({"players": 3, "seat": 3, "opponents": ["greedy"]}, 422, "seat: 3 is not a seat of a 3-player game; allowed: 0 to 2"),
        ({"players": 3, "seat": -1, "opponents": ["greedy"]}, 422, "seat: input should be greater than or equal to 0"),
        ({"players": 3, "opponents": ["greedy", "greedy", "greedy"]}, 422, "3 bots named for 2 other seat(s)"),
        ({"players": 3, "opponents": ["greedy"], "seed": -5}, 422, "seed: input should be greater than or equal to 0"),
        ({"players": 3, "opponents": ["greedy"], "color": "red"}, 422, "color: unknown field"),
        ({"players": 3, "opponents": ["greedy"], "rules": {"tie_rule": "coin"}}, 422, "rules.tie_rule: input should be 'all' or 'earliest'"),
        ({"players": 3, "opponents": ["greedy"], "rules": {"start_hp": 0}}, 422, "rules.start_hp: input should be greater than or equal to 1"),
        ({"players": 3, "opponents": ["greedy"], "rules": {"hand_size": 7}}, 422, "rules.hand_size: input should be less than or equal to 6"),
        ({"players": 3, "opponents": ["greedy"], "rules": {"epilogue": True}}, 422, "epilogue"),
        ({"players": 3, "opponents": ["greedy"], "rules": {"num_players": 3}}, 422, "rules.num_players: unknown field"),
        ({"players": 3, "opponents": ["greedy"], "rules": {"ghost_phase": "last"}}, 422, "rules.ghost_phase: input should be 'in_turn' or 'first'"),
        ({"players": 3, "opponents": ["greedy"], "rules": {"no_survivor": "nobody"}}, 422, "rules.no_survivor: input should be 'sudden_death' or 'share_win'"),
        ({"players": 3, "opponents": ["greedy"], "rules": {"deflect_target": "self"}}, 422, "rules.deflect_target: input should be 'any', 'not_weaker' or 'stronger'"),
        ({"players": 3, "opponents": ["greedy"], "rules": {"opening_bonus": "all"}}, 422, "rules.opening_bonus: input should be 'none', 'first_player' or 'first_half'"),
        ({"players": 3, "opponents": ["greedy"], "rules": {"token_tie": 1}}, 422, "rules.token_tie: input should be 'earliest' or 'latest'"),
        ({"players": 3, "opponents": ["greedy"], "rules": {"grace_round": "no"}}, 422, "rules.grace_round: input should be a valid boolean"),
    ],
)
def test_create_errors(client, body, status, message):
    before = len(client.app.state.games)
    r = client.post("/api/games", json=body)
    assert r.status_code == status, r.text
    assert message in detail(r)
    assert len(client.app.state.games) == before  # nothing was created


def test_integral_floats_are_integers(client):
    """JSON Schema's integer admits 3.0: the server takes it as 3 (and 7.0 as seed 7)."""
    g = new_game(client, players=3.0, seat=1.0, seed=7.0, rules={"hand_size": 3.0})
    assert g["players"] == 3 and g["seat"] == 1 and g["seed"] == 7 and g["rules"]["hand_size"] == 3


def test_malformed_json(client):
    for raw in (b"{not json", b"[1, 2", b""):
        r = client.post("/api/games", content=raw, headers={"content-type": "application/json"})
        assert r.status_code == 422
        text = detail(r)
        assert "not valid JSON" in text or "required but missing" in text
        assert 'Expected a JSON object {"players": a player count of the game' in text
    r = client.post("/api/games", json=[1, 2])
    assert r.status_code == 422 and "Expected a JSON object" in detail(r)


def test_game_errors_leave_the_game_unchanged(client):
    g = new_game(client, players=4, opponents=["shark"], seed=21)
    gid, tok = g["game_id"], g["seat_token"]
    before = read(client, g)
    legal = [a["action"] for a in before["table"]["choices"]]
    illegal = next(a for a in range(57) if a not in legal)

    h = {"X-Seat-Token": tok}
    r = client.get("/api/games/no-such-game", headers=h)
    assert r.status_code == 404 and "no game of R.I.P. Market with id 'no-such-game'" in detail(r)
    assert "POST /api/ripmarket/games" in detail(r)
    r = client.get(f"/api/games/{gid}", headers={"X-Seat-Token": "wrong"})
    assert r.status_code == 403 and "the seat token does not match" in detail(r)
    r = client.get(f"/api/games/{gid}")
    assert r.status_code == 422 and "header parameter 'X-Seat-Token': required but missing" in detail(r)
    r = client.get(f"/api/games/{gid}", params={"token": tok})
    assert r.status_code == 400 and "goes in the X-Seat-Token header, not in the URL" in detail(r)
    r = client.get(f"/api/games/{gid}/record", headers={"X-Seat-Token": "wrong"})
    assert r.status_code == 403

    act = f"/api/games/{gid}/actions"
    n = before["decision_number"]
    cases = [
        ({"action": legal[0], "decision_number": n}, {"X-Seat-Token": "wrong"}, 403, "the seat token does not match"),
        ({"action": legal[0], "decision_number": n}, {}, 422, "header parameter 'X-Seat-Token': required but missing"),
        ({"action": illegal, "decision_number": n}, h, 409, f"action {illegal} is not legal now"),
        ({"action": 57, "decision_number": n}, h, 409, "action 57 is out of range (actions are 0 to 56)"),
        ({"action": -1, "decision_number": n}, h, 422, "action: input should be greater than or equal to 0"),
        ({"action": "1", "decision_number": n}, h, 422, "action: input should be a valid integer"),
        ({"action": 1.5, "decision_number": n}, h, 422, "action: input should be a valid integer"),
        ({"decision_number": n}, h, 422, "action: required but missing"),
        ({"action": legal[0]}, h, 422, "decision_number: required but missing"),
        ({"action": legal[0], "decision_number": n + 1}, h, 409, f"decision_number {n + 1} is not the pending decision {n}"),
        ({"action": legal[0], "decision_number": n, "token": tok}, h, 422, "token: unknown field"),
    ]
    for body, headers, status, message in cases:
        r = client.post(act, json=body, headers=headers)
        assert r.status_code == status, (body, r.text)
        assert message in detail(r), (body, detail(r))
        if status in (409, 422) and isinstance(body.get("action"), int) and "decision_number" not in message \
                and body["action"] >= 0:
            assert "legal" in detail(r)  # says what is allowed
        assert read(client, g) == before, f"{body} changed the game"
    r = client.post("/api/games/no-such-game/actions", json={"action": legal[0], "decision_number": n}, headers=h)
    assert r.status_code == 404
    r = client.post(act, content=b'{"action": ', headers={"content-type": "application/json", **h})
    assert r.status_code == 422 and "not valid JSON" in detail(r) and '{"action": <a legal action' in detail(r)
    assert read(client, g) == before
    # the illegal-action message lists the legal actions with their descriptions
    r = client.post(act, json={"action": illegal, "decision_number": n}, headers=h)
    for a in before["table"]["choices"]:
        assert f"{a['action']} ({a['text']})" in detail(r)


def test_delete(client):
    g = new_game(client)
    r = client.delete(f"/api/games/{g['game_id']}", headers={"X-Seat-Token": "nope"})
    assert r.status_code == 403
    r = client.delete(f"/api/games/{g['game_id']}", headers=tok(g))
    assert r.status_code == 204
    r = client.get(f"/api/games/{g['game_id']}", headers=tok(g))
    assert r.status_code == 404


# ------------------------------------------------------------------ hidden information
def test_a_seat_never_sees_other_hidden_cards(client):
    """R-12.3: other seats' hands are counts only; their face-down cards stay unnamed (in
    the seats, the rule card and the story) until revealed; your hands are exactly yours."""
    seen_hidden_face_down = False
    for seed in range(12):
        g = new_game(client, players=5, seat=2, opponents=["trickster"], seed=seed)
        manager = client.app.state.games
        session = manager.open("ripmarket", g["game_id"], g["seat_token"]).session
        db = session.engine.cards
        rng = random.Random(seed)
        state = g
        while not state["over"]:
            text = json.dumps(state)
            r = session.state
            t = state["table"]
            for s, x in zip(t["seats"], t["extra"]["seats"]):
                assert set(s["counters"]) >= {"hand", "shadow"} and s["counters"]["hand"] == int(r["hand_n"][s["seat"]])
                q = s["seat"]
                if q != 2 and x["played"] is not None and x["played"]["face_down"]:
                    assert x["played"]["name"] is None and x["played"]["text"] is None
                    assert s["counters"]["played"].startswith("face-down")
                    seen_hidden_face_down = True
                    hidden = db.living[int(r["played"][q])].name
                    for line in state["recent"]:
                        if line["seat"] == q and "face-down" in line["text"]:
                            assert hidden not in line["text"]
                    assert t["extra"]["rule"]["card"] != hidden or any(
                        e.kind == "reveal" and e.seat == q for e in session.history)
            mine = {(c["name"], c["zone"]): c["count"] for c in t["hand"] if c["zone"] == "hand"}
            assert mine == {(f"{db.living[d].name} ({db.living[d].value})", "hand"): int(n)
                            for d, n in enumerate(r["hand"][2]) if n > 0}
            shadow = sum(c["count"] for c in t["hand"] if c["zone"] == "Shadow hand")
            assert shadow == int(r["shadow_hand"][2].sum())
            if state is not g:  # only the creation answer carries the token
                assert "seat_token" not in text and g["seat_token"] not in text
            a = rng.choice(t["choices"])["action"]
            state = answer(client, g, state, a).json()
        if seen_hidden_face_down:
            break
    assert seen_hidden_face_down, "no face-down card of another seat was seen"


def test_view_shows_no_more_than_the_seat_observation(client):
    """What the view says about every seat is also in that seat's own observation (R-12.3)."""
    from ripmarket_env.games.ripmarket.observation import named_view

    checked_played = 0
    for seed in range(6):
        g = new_game(client, players=4, seat=3, opponents=["trickster", "greedy"], seed=seed)
        session = client.app.state.games.open("ripmarket", g["game_id"], g["seat_token"]).session
        eng = session.engine
        names = {c.name for c in eng.cards.living}
        rng = random.Random(seed)
        state = g
        while not state["over"]:
            nv = named_view(eng.observe([3])[0], eng.obs_layout)
            for s, x in zip(state["table"]["seats"], state["table"]["extra"]["seats"]):
                rel = (s["seat"] - 3) % 4
                assert round(float(nv["hand_size"][rel][0]) * 10) == s["counters"]["hand"]
                assert bool(nv["alive"][rel][0]) == x["alive"] == ("Ghost" not in s["flags"])
                onehot = nv["played"][rel]
                if x["played"] is None:
                    assert not onehot.any()
                elif x["played"]["name"] is None:  # hidden here: hidden in the observation too
                    assert not onehot.any() and nv["face_down"][rel][0] == 1
                else:
                    assert x["played"]["name"] in names
                    assert {eng.cards.living[d].name for d in np.flatnonzero(onehot)} == {x["played"]["name"]}
                    checked_played += 1
                shadows = sorted(c["name"] for c in x["haunted_by"])
                counts = np.rint(nv["attached"][rel] * 3).astype(int)
                assert shadows == sorted(eng.cards.shadow[d].name for d, n in enumerate(counts) for _ in range(n))
            a = rng.choice(state["table"]["choices"])["action"]
            state = answer(client, g, state, a).json()
    assert checked_played > 0


# ------------------------------------------------------------------ capacity and threads
def test_game_cap_gives_429():
    with make_client(max_games=2, idle_seconds=600) as c:
        a = new_game(c)
        new_game(c, seed=8)
        r = c.post("/api/games", json={"players": 3, "opponents": ["greedy"]})
        assert r.status_code == 429
        text = detail(r)
        assert "maximum of 2 live games" in text and "--max-games 2" in text and "retry in" in text
        assert 1 <= int(r.headers["Retry-After"]) <= 600
        # a finished game makes room at once, and stays readable
        play_out(c, a, random.Random(1))
        assert len(c.app.state.games) == 1
        r = c.post("/api/games", json={"players": 3, "opponents": ["greedy"]})
        assert r.status_code == 201, r.text
        assert len(c.app.state.games) == 2
        assert read(c, a)["over"]


def test_two_games_interleaved_in_threads(tmp_path):
    with make_client(max_games=4) as c:
        games = [new_game(c, players=3, seat=q, seed=30 + q, opponents=["greedy", "shark"]) for q in range(2)]
        turn = threading.Condition()
        order = {"next": 0}
        errors: list[BaseException] = []
        finals: dict[int, dict] = {}

        def run(i: int) -> None:
            g = games[i]
            rng = random.Random(i)
            state = g
            try:
                for _ in range(400):
                    with turn:  # strict alternation while both games are running
                        turn.wait_for(lambda: order["next"] == i or len(finals) == 1, timeout=120)
                    if state["over"]:
                        break
                    a = rng.choice(state["table"]["choices"])["action"]
                    r = answer(c, g, state, a)
                    assert r.status_code == 200, r.text
                    state = r.json()
                    with turn:
                        order["next"] = 1 - i
                        turn.notify_all()
                finals[i] = state
            except BaseException as exc:  # pragma: no cover - reported below
                errors.append(exc)
            finally:
                with turn:
                    finals.setdefault(i, state)
                    order["next"] = 1 - i
                    turn.notify_all()

        threads = [threading.Thread(target=run, args=(i,)) for i in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=600)
        assert not errors, errors
        for i, g in enumerate(games):
            assert finals[i]["over"]
            r = c.get(f"/api/games/{g['game_id']}/record", headers=tok(g))
            path = tmp_path / f"{i}.jsonl"
            path.write_text(r.text)
            assert bool(replay(path).terminated[0])  # each game is exactly its own record

        # 12 copies of one answer at once: exactly one is applied, the others refused
        g = new_game(c, players=4, opponents=["random"], seed=40)
        state = read(c, g)
        a = state["table"]["choices"][0]["action"]
        codes = []
        start = threading.Barrier(12)

        def hit():
            start.wait(timeout=60)
            r = answer(c, g, state, a)
            codes.append((r.status_code, r.json()))

        ts = [threading.Thread(target=hit) for _ in range(12)]
        for t in ts:
            t.start()
        for t in ts:
            t.join(timeout=300)
        assert sorted(code for code, _ in codes) == [200] + [409] * 11, codes
        assert all("already answered" in body["detail"] for code, body in codes if code == 409)
        # a decision number ahead of the pending one is one that has not come yet
        later = read(c, g)
        r = answer(c, g, {**later, "decision_number": later["decision_number"] + 5}, a)
        assert r.status_code == 409 and "has not come yet" in r.json()["detail"], r.text
        assert read(c, g) == later  # the game was not changed
        session = c.app.state.games.open("ripmarket", g["game_id"], g["seat_token"]).session
        steps = [line for line in session.recorder.lines if "step" in line]
        assert sum(1 for s in steps if s["seat"] == 0) == 1


# ------------------------------------------------------------------ the serve command
def test_serve_command(tmp_path):
    """`ripmarket serve` listens on loopback by default and serves the page and the API."""
    import os
    import socket
    import subprocess
    import sys
    import time
    from pathlib import Path

    import httpx
    from typer.testing import CliRunner

    from ripmarket_env.app.cli import app

    for args, message in ((["--max-games", "0"], "--max-games 0 is not allowed"),
                          (["--max-games-per-client", "0"], "--max-games-per-client 0 is not allowed"),
                          (["--idle-timeout", "0"], "--idle-timeout 0 is not allowed"),
                          (["--max-game-age", "inf"], "--max-game-age inf is not allowed"),
                          (["--port", "70000"], "--port 70000 is not allowed")):
        result = CliRunner().invoke(app, ["serve", *args])
        assert result.exit_code == 2 and message in result.output
    bad = tmp_path / "not-a-db.sqlite3"
    bad.write_bytes(b"this is not SQLite" * 100)
    result = CliRunner().invoke(app, ["serve", "--db", str(bad)])
    assert result.exit_code == 2 and "is not a usable game store" in result.output

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    root = Path(__file__).resolve().parents[1]
    proc = subprocess.Popen([sys.executable, "-m", "ripmarket_env.app.cli", "serve", "--port", str(port), "--max-games", "3",
                             "--db", str(tmp_path / "games.sqlite3")],
                            cwd=root, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=dict(os.environ))
    try:
        deadline = time.monotonic() + 300
        while True:
            assert proc.poll() is None, proc.stdout.read().decode()
            try:
                r = httpx.get(f"http://127.0.0.1:{port}/api/bots", timeout=5)
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline, "the server did not start"
                time.sleep(0.3)
        assert r.status_code == 200 and r.json()["bots"]
        page = httpx.get(f"http://127.0.0.1:{port}/", timeout=5)  # the lobby, listing every game
        assert page.status_code == 200 and "/api/catalog" in page.text
        catalog = httpx.get(f"http://127.0.0.1:{port}/api/catalog", timeout=5).json()["games"]
        assert "R.I.P. Market" in [g["title"] for g in catalog]
        assert httpx.get(f"http://127.0.0.1:{port}/ripmarket", timeout=5).status_code == 200
        r = httpx.get(f"http://127.0.0.1:{port}/api/bots", headers={"Host": "attacker.example"}, timeout=5)
        assert r.status_code == 400 and "Host header" in r.json()["detail"]  # DNS rebinding
        g = httpx.post(f"http://127.0.0.1:{port}/api/games", json={"players": 2, "opponents": ["greedy"]},
                       timeout=60).json()
        r = httpx.get(f"http://localhost:{port}/api/games/{g['game_id']}", headers=tok(g), timeout=5)
        assert r.status_code == 200
    finally:
        proc.terminate()
        out = proc.communicate(timeout=60)[0].decode()
    assert f"/api/games/{g['game_id']} HTTP/1.1\" 200" in out  # the access log is on...
    assert g["seat_token"] not in out  # ...and never shows a seat token
    assert (tmp_path / "games.sqlite3").stat().st_size > 0


# ------------------------------------------------------------------ bots
def observation(players: int = 4, seed: int = 3):
    eng = Engine(RulesConfig(num_players=players))
    eng.reset([seed])
    seat = int(eng.current_player()[0])
    return eng.observe([seat])[0], eng.legal_mask()[0].astype(int)


def test_bot_endpoint(client):
    info = client.get("/api/bots").json()
    import agents

    # the list offers the bots that play these cards: every shipped bot (the first edition's
    # stages of ppo-6p, which could not, are retired)
    assert [b["name"] for b in info["bots"]] == agents.names() and info["unavailable"] == []
    obs, mask = observation()
    assert info["observation_size"] == obs.size and info["num_actions"] == mask.size
    for name in agents.names():
        r = client.post(f"/api/bots/{name}/act", json={"observation": obs.tolist(), "action_mask": mask.tolist()})
        assert r.status_code == 200, r.text
        out = r.json()
        assert mask[out["action"]] == 1 and out["description"]
    body = {"observation": obs.tolist(), "action_mask": mask.tolist(), "seed": 3}
    assert client.post("/api/bots/random/act", json=body).json() == client.post("/api/bots/random/act", json=body).json()


def test_bots_that_cannot_play_these_cards_are_not_offered(client):
    """A newcomer never picks a bot that is then refused: the page's list, the schema's
    names and the games offer only the bots of the cards in play (every shipped bot plays
    the packaged cards); a name that is no bot gets a one-line 422 and creates no game."""
    import agents

    offered = {b["name"] for b in client.get("/api/bots").json()["bots"]}
    schema = client.get("/openapi.json").json()["components"]["schemas"]["CreateRipmarketGame"]
    enum = set(schema["properties"]["opponents"]["items"]["enum"])
    assert enum == offered == set(agents.names()) and "ppo-6p" in offered
    assert not any(n.startswith("ppo-6p-stage") for n in offered)  # the first edition's stages are retired
    before = len(client.app.state.games)
    r = client.post("/api/games", json={"players": 3, "opponents": ["ppo-6p-stage4"], "seed": 1})
    assert r.status_code == 422, r.text
    assert len(client.app.state.games) == before


def test_the_default_opponent_is_the_bot_for_every_table(client):
    """/api/bots names the setup's default opponents: ppo-lookahead, the trained bot for
    2-10 players with its lookahead, offered with a plain difficulty; a game seats it at
    every size."""
    listing = client.get("/api/bots").json()
    assert listing["default_opponents"] == ["ppo-lookahead"]
    for name, level in (("ppo-lookahead", "Hardest"), ("ppo", "Hard")):
        bot = next(b for b in listing["bots"] if b["name"] == name)
        assert bot["level"].startswith(level + ":") and "2-10 players" in bot["level"]
    for players in (2, 7, 10):
        r = client.post("/api/games", json={"players": players, "opponents": ["ppo-lookahead"], "seed": 4})
        assert r.status_code == 201, r.text
        assert r.json()["controllers"] == ["you"] + ["ppo-lookahead"] * (players - 1)


def test_bot_choices_follow_the_cards():
    """The server offers the bots that can play the cards in play: with the packaged second
    edition every shipped bot; the one session refuses a bot it is told cannot play (a
    second-edition bot with --cards first-edition), naming the reason, and seats the
    heuristics there."""
    from agents.policy import card_conflict
    from ripmarket_env.app.server.kinds import kinds
    from ripmarket_env.app.session import SetupError, TableSession
    from ripmarket_env.games.ripmarket.cards.loader import load_cards

    first = load_cards("first-edition")
    assert kinds()["ripmarket"].unavailable() == {}
    why = card_conflict("ppo-6p", first)
    assert "second edition's cards" in why and "first edition" in why and not card_conflict("greedy", first)
    with pytest.raises(SetupError, match="bot 'ppo-6p' cannot play these cards: .*second edition"):
        TableSession("ripmarket", 3, 0, ["ppo-6p"], seed=1, engine_kwargs={"cards": first}, refused={"ppo-6p": why})
    s = TableSession("ripmarket", 3, 0, ["greedy"], seed=1, engine_kwargs={"cards": first}, refused={"ppo-6p": why})
    assert s.controllers == ["you", "greedy", "greedy"]


@pytest.mark.parametrize(
    "change, status, message",
    [
        (lambda o, m: (o[:-1], m), 422, "observation has 1126 values; expected exactly 1127"),
        (lambda o, m: (o, m + [0]), 422, "action_mask has 58 values; expected exactly 57"),
        (lambda o, m: (o, [2] + m[1:]), 422, "action_mask[0] is 2; allowed: 0 or 1"),
        (lambda o, m: (o, [-1] + m[1:]), 422, "action_mask[0] is -1; allowed: 0 or 1"),
        (lambda o, m: (o, [0] * len(m)), 422, "action_mask has no 1"),
        (lambda o, m: (["x"] + o[1:], m), 422, "invalid request: observation[0]: input should be a number (got 'x')."),
        (lambda o, m: (o[:3] + [None] + o[4:], m), 422, "observation[3]: input should be a number (got null)."),
        (lambda o, m: (o, [0.5] + m[1:]), 422, "action_mask[0]: input should be an integer or true or false (got 0.5)."),
        (lambda o, m: (["INF"] + o[1:], m), 422, "observation[0] is inf; allowed: finite numbers"),
        (lambda o, m: (["NAN"] + o[1:], m), 422, "observation[0] is nan; allowed: finite numbers"),
    ],
)
def test_bot_endpoint_errors(client, change, status, message):
    obs, mask = observation()
    o, m = change(obs.tolist(), mask.tolist())
    raw = json.dumps({"observation": o, "action_mask": m})  # "INF"/"NAN" become the JSON literals 1e400/NaN
    raw = raw.replace('"INF"', "1e400").replace('"NAN"', "NaN")
    r = client.post("/api/bots/greedy/act", content=raw.encode(), headers={"content-type": "application/json"})
    assert r.status_code == status, r.text
    assert message in detail(r)


def test_bot_endpoint_unknown_bot_and_bad_json(client):
    obs, mask = observation()
    r = client.post("/api/bots/nobody/act", json={"observation": obs.tolist(), "action_mask": mask.tolist()})
    assert r.status_code == 404
    assert "unknown bot 'nobody' for R.I.P. Market; allowed: " in detail(r) and "greedy" in detail(r)
    r = client.post("/api/bots/greedy/act", content=b"{{", headers={"content-type": "application/json"})
    assert r.status_code == 422 and "not valid JSON" in detail(r) and '"observation": [' in detail(r)
    r = client.post("/api/bots/greedy/act", json={"observation": obs.tolist()})
    assert r.status_code == 422 and "action_mask: required but missing" in detail(r)


# ------------------------------------------------------------------ seeds (issue 19, 1)
def test_a_running_game_never_shows_its_secret_seed(client, tmp_path):
    g = new_game(client, seed=None, players=4, opponents=["shark", "greedy"])
    session = client.app.state.games.open("ripmarket", g["game_id"], g["seat_token"]).session
    assert session.seed.bit_length() > 64  # far beyond a searchable 32-bit space
    secret = str(session.seed)
    assert g["seed"] is None and g["practice"] is False
    state = g
    rng = random.Random(5)
    while not state["over"]:
        assert state["seed"] is None and secret not in json.dumps(state)
        state = answer(client, g, state, rng.choice(state["table"]["choices"])["action"]).json()
    assert state["seed"] == session.seed  # revealed once the game is over...
    record = client.get(f"/api/games/{g['game_id']}/record", headers=tok(g)).text
    head = json.loads(record.splitlines()[0])
    assert head["seed"] == session.seed and head["practice"] is False  # ...and in the record
    path = tmp_path / "secret.jsonl"
    path.write_text(record)
    assert bool(replay(path).terminated[0])


def test_secret_seeds_differ_and_a_chosen_seed_is_practice(client):
    seen = {client.app.state.games.open("ripmarket", g["game_id"], g["seat_token"]).session.seed
            for g in (new_game(client, seed=None) for _ in range(3))}
    assert len(seen) == 3
    g = new_game(client, seed=123)
    assert g["practice"] is True and g["seed"] == 123  # the client knows it anyway


# ------------------------------------------------------------------ limits (issue 19, 2)
def test_64_requests_no_longer_lock_everyone_out():
    """The attack of issue 19: one client sends 64 POST /api/games. It gets its 4 games and
    then 429s that say when to retry; other clients still start and finish games."""
    app = create_app(max_games=64, max_games_per_client=4, idle_seconds=900)
    attacker = TestClient(app, base_url=BASE, client=("127.0.0.66", 40000))
    codes = [attacker.post("/api/games", json={"players": 2, "opponents": ["greedy"]}) for _ in range(64)]
    assert [r.status_code for r in codes].count(201) == 4
    refused = [r for r in codes if r.status_code == 429]
    assert len(refused) == 60
    for r in refused[:3]:
        assert 1 <= int(r.headers["Retry-After"]) <= 900
        text = detail(r)
        assert "you already have 4 live games" in text and "--max-games-per-client 4" in text and "retry in" in text
    for k in range(3):  # other clients keep playing, whole games
        other = TestClient(app, base_url=BASE, client=(f"127.0.0.{10 + k}", 40000))
        final = play_out(other, new_game(other, players=2, opponents=["greedy"], seed=k), random.Random(k))
        assert final["result"] is not None


def test_idle_games_expire_and_reading_does_not_keep_them_alive(tmp_path):
    now = [1000.0]
    c = make_client(max_games=2, max_games_per_client=2, idle_seconds=60, max_age_seconds=300,
                    keep_seconds=3600, clock=lambda: now[0])
    a = new_game(c)
    for _ in range(5):  # a reader polls game a every 20 s: it still expires 60 s after its last answer
        now[0] += 20
        r = c.get(f"/api/games/{a['game_id']}", headers=tok(a))
        if r.status_code != 200:
            break
    assert r.status_code == 410, r.text
    assert "has expired: no decision was answered for 60 s" in detail(r) and "--idle-timeout 60" in detail(r)
    # game b, answered every 50 s, lives on until the maximum age
    b = new_game(c, seed=8, players=6, opponents=["survivor"], rules={"start_hp": 9})
    start = now[0]
    state = b
    while True:
        now[0] += 50
        r = answer(c, b, state, state["table"]["choices"][0]["action"])
        if r.status_code != 200:
            break
        state = r.json()
        if state["over"]:
            pytest.fail("the game ended before its maximum age; make it longer")
    assert r.status_code == 410 and "maximum game age of 5 min (ripmarket serve --max-game-age 300)" in detail(r)
    assert now[0] - start > 300
    # both slots are free again
    assert len(c.app.state.games) == 0
    new_game(c), new_game(c, seed=9)


def test_retry_after_says_when_a_slot_frees_up():
    now = [0.0]
    c = make_client(max_games=1, idle_seconds=100, clock=lambda: now[0])
    new_game(c)
    now[0] = 30.0
    r = c.post("/api/games", json={"players": 2, "opponents": ["greedy"]})
    assert r.status_code == 429 and r.headers["Retry-After"] == "70"
    now[0] = 101.0
    new_game(c, players=2, opponents=["greedy"])  # the idle game expired; its slot is free


# ------------------------------------------------------------------ store (issue 19, 6)
def test_games_and_records_survive_a_restart(tmp_path):
    db = tmp_path / "games.sqlite3"
    now = [5000.0]
    c1 = make_client(db=db, clock=lambda: now[0], keep_seconds=3600)
    live = new_game(c1, players=4, seed=None, opponents=["shark", "ppo-6p", "greedy"])
    state = live
    for _ in range(3):
        state = answer(c1, live, state, state["table"]["choices"][0]["action"]).json()
    done = new_game(c1, players=2, opponents=["greedy"], seed=3)
    final = play_out(c1, done, random.Random(2))
    before_live, record = read(c1, live), c1.get(f"/api/games/{done['game_id']}/record", headers=tok(done)).text
    secret = c1.app.state.games.open("ripmarket", live["game_id"], live["seat_token"]).session.seed
    c1.app.state.games.store.close()
    del c1  # the server stops; a new one opens the same file

    c2 = make_client(db=db, clock=lambda: now[0], keep_seconds=3600)
    assert read(c2, live) == before_live  # the live game is back exactly
    assert read(c2, done) == final
    assert c2.get(f"/api/games/{done['game_id']}/record", headers=tok(done)).text == record
    assert c2.get(f"/api/games/{live['game_id']}", headers={"X-Seat-Token": "x" * 32}).status_code == 403
    end = play_out(c2, live, random.Random(4), limit=1000, state=read(c2, live))
    assert end["seed"] == secret
    path = tmp_path / "restarted.jsonl"
    path.write_text(c2.get(f"/api/games/{live['game_id']}/record", headers=tok(live)).text)
    assert bool(replay(path).terminated[0])  # the record spans the restart and replays
    # finished games stay fetchable for keep_seconds after they end, then are gone
    now[0] += 3000
    assert read(c2, done)["over"]
    now[0] += 700
    c2.app.state.games.sweep()
    r = c2.get(f"/api/games/{done['game_id']}", headers=tok(done))
    assert r.status_code == 404 and "kept for 60 min after they end" in detail(r)
    raw = db.read_bytes()
    assert live["seat_token"].encode() not in raw  # tokens are stored as digests only


# ------------------------------------------------------------------ guards (issue 19, 10)
def test_host_header_body_size_and_echo_are_checked(client):
    r = client.get("/api/bots", headers={"Host": "rebound.attacker.example"})
    assert r.status_code == 400 and "is not a name of this server" in detail(r)
    assert client.get("/api/bots", headers={"Host": "localhost:8000"}).status_code == 200
    assert client.get("/api/bots", headers={"Host": "[::1]:8000"}).status_code == 200
    huge = json.dumps({"players": 3, "opponents": ["x" * 10_000_000]}).encode()
    r = client.post("/api/games", content=huge, headers={"content-type": "application/json"})
    assert r.status_code == 413 and "larger than 65,536 bytes" in detail(r) and len(r.content) < 500
    r = client.post("/api/games", json={"players": "p" * 50_000, "opponents": ["greedy"]})
    assert r.status_code == 422 and len(r.content) < 1000 and "50,002 characters" in detail(r)
    obs, mask = observation()
    r = client.post("/api/bots/" + "b" * 30 + "/act", json={"observation": obs.tolist(), "action_mask": mask.tolist()})
    assert r.status_code == 404 and len(r.content) < 1000


def test_openapi_states_ranges_and_lengths(client):
    schema = client.get("/openapi.json").json()
    comp = schema["components"]["schemas"]
    obs, mask = observation()
    o = comp["RipmarketBotActIn"]["properties"]["observation"]
    assert o["minItems"] == o["maxItems"] == obs.size == len(o["prefixItems"])
    from ripmarket_env.games.ripmarket.observation import observation_bounds
    from ripmarket_env.games.ripmarket.cards.loader import default_cards

    low, high = observation_bounds(default_cards())
    assert [x["minimum"] for x in o["prefixItems"]] == low.tolist()
    assert [x["maximum"] for x in o["prefixItems"]] == high.tolist()
    m = comp["RipmarketBotActIn"]["properties"]["action_mask"]
    assert m["minItems"] == m["maxItems"] == mask.size
    act = comp["ActionIn"]["properties"]
    assert act["action"]["minimum"] == 0 and "decision_number" in comp["ActionIn"]["required"]
    assert comp["RipmarketRules"]["properties"]["start_hp"]["anyOf"][0]["maximum"] == 9
    params = schema["paths"]["/api/games/{game_id}"]["get"]["parameters"]
    assert {p["name"]: p["in"] for p in params} == {"game_id": "path", "X-Seat-Token": "header", "X-Page-Id": "header"}
    page = next(p for p in params if p["name"] == "X-Page-Id")
    assert page["required"] is False and page["schema"]["anyOf"][0]["maxLength"] == 64


# ------------------------------------------------------------------ bot endpoint (issue 19, 3 and 5)
@pytest.mark.parametrize(
    "index, raw, message",
    [
        (0, "3.4e38", "outside its feature's bounds; allowed: 0 to 1"),  # finite double, inf as float32
        (0, "1e300", "outside its feature's bounds"),
        (0, "1000000.0", "outside its feature's bounds"),  # int16 overflow in search
        (0, "-0.5", "outside its feature's bounds"),
        (0, "9" * 400, "observation[0] is an integer of about 401 digits"),  # a 400-digit integer, by its size
        (5, "-" + "9" * 400, "observation[5] is an integer of about 401 digits"),
        (0, "1e400", "observation[0] is inf; allowed: finite numbers"),
    ],
)
def test_bot_endpoint_refuses_numbers_outside_the_observation_space(client, index, raw, message):
    obs, mask = observation()
    o = [json.dumps(float(x)) for x in obs.tolist()]
    o[index] = raw
    body = '{"observation": [' + ", ".join(o) + '], "action_mask": ' + json.dumps(mask.tolist()) + "}"
    for name in ("greedy", "search", "ppo-6p"):
        r = client.post(f"/api/bots/{name}/act", content=body.encode(), headers={"content-type": "application/json"})
        assert r.status_code == 422, r.text
        assert message in detail(r) and len(r.content) < 1000


def test_bot_endpoint_fuzz_never_500(client):
    """Random in-bounds, boundary and out-of-bounds observations for every bot: 200 or 422,
    never a server error (the test client raises on one)."""
    import agents
    from ripmarket_env.games.ripmarket.cards.loader import default_cards
    from ripmarket_env.games.ripmarket.observation import observation_bounds

    low, high = observation_bounds(default_cards())
    rng = np.random.default_rng(19)
    codes = []
    for name in agents.names():
        for k in range(4):
            obs = [rng.uniform(low, high), np.where(rng.random(low.size) < .5, low, high),
                   rng.uniform(low - 2, high + 2), np.where(rng.random(low.size) < .9, 0, high)][k].astype(np.float64)
            mask = rng.random(57) < 0.3
            mask[rng.integers(57)] = True
            r = client.post(f"/api/bots/{name}/act", json={"observation": obs.tolist(),
                                                           "action_mask": mask.astype(int).tolist()})
            codes.append(r.status_code)
            assert r.status_code in (200, 422), r.text  # every shipped bot plays the packaged cards
            if r.status_code == 200:
                assert mask[r.json()["action"]]
            else:
                assert k == 2  # only the out-of-bounds one is refused
    assert codes.count(200) == 3 * len(agents.names())


def test_bots_are_built_once_and_answer_like_fresh_ones(client):
    import agents
    from agents import policy

    obs, mask = observation(players=6, seed=5)
    for name in ("ppo-6p", "greedy", "random", "search", "ppo-lookahead"):
        for seed in (0, 7):
            r = client.post(f"/api/bots/{name}/act",
                            json={"observation": obs.tolist(), "action_mask": mask.tolist(), "seed": seed})
            fresh = agents.make(name, seed=seed).act(obs, mask.astype(bool))
            assert r.json()["action"] == fresh, (name, seed)
    pooled = client.app.state.bots._bots
    assert {"ppo-6p", "greedy", "random", "search", "ppo-lookahead"} <= {name for _, name in pooled}
    # the shipped network is loaded once and shared by every agent made from it
    a, b = agents.make("ppo-6p", seed=1), agents.make("ppo-6p", seed=2)
    assert a.policy is b.policy and pooled[("ripmarket", "ppo-6p")].policy is a.policy
    assert len([k for k in policy._policy_cache if k[0].endswith("ppo-6p.zip")]) == 1


# ------------------------------------------------------------------ explaining the game
def test_view_explains_rounds_moves_and_the_result(client):
    """The bots' difficulty labels, the story since your decision (your own move first), the
    active rule card's text, the latest round's result and how each player finished."""
    bots = client.get("/api/bots").json()["bots"]
    assert all(b["level"] for b in bots) and {b["name"]: b["level"] for b in bots}["random"].startswith("Beginner")
    g = new_game(client, players=4, seat=0, opponents=["greedy", "trickster", "hoarder"], seed=5)
    assert all(g["levels"][1:]) and g["levels"][0] == ""
    rng = random.Random(4)
    state = g
    rounds = set()
    while not state["over"]:
        choice = rng.choice(state["table"]["choices"])
        state = answer(client, g, state, choice["action"]).json()
        recent = state["recent"]
        assert recent and recent[0]["seat"] == 0  # your own move first
        assert state["table"]["extra"]["rule"]["text"] and state["table"]["info"][0].startswith("Rule: ")
        assert "(only choice)" not in json.dumps(state)
        last = state["table"]["extra"]["last_round"]
        if last is not None and last["round"] not in rounds:  # a round resolved since: the story told it
            rounds.add(last["round"])
            assert last["lines"][0]["kind"] in ("scores", "sudden_death", "grace")
            assert any(m["kind"] == "resolve" for m in recent)  # told in the story too
    assert len(rounds) >= 2
    res = state["result"]
    assert [x["place"] for x in res["standings"]] == sorted(x["place"] for x in res["standings"])
    dead = [x for x in res["standings"] if x["how"].startswith("died")]
    assert dead and all(x["how"].startswith("died in round ") for x in dead)
    assert all(x["level"] for x in res["standings"] if x["seat"] != 0)
    assert res["end"]


def test_status_says_what_is_loading_and_warm_up_finishes():
    with TestClient(create_app(max_games=2), base_url=BASE) as c:
        s = c.get("/api/status").json()
        assert set(s) == {"ready", "stage", "loading", "done", "total", "elapsed", "error", "parts"}
        assert s["total"] == len(s["parts"]) >= 1 and s["stage"] is None and s["error"] is None
        new_game(c, players=3, opponents=["greedy"])
        assert c.get("/api/status").json()["ready"] is True
        warm = c.app.state.warmup
        thread = warm.start()
        seen = set()
        deadline = time.monotonic() + 240
        while thread.is_alive():
            assert time.monotonic() < deadline, "the warm-up did not finish"
            st = c.get("/api/status").json()
            if st["stage"]:
                seen.add(st["stage"])
            time.sleep(0.05)
        end = c.get("/api/status").json()
        assert end["ready"] and end["done"] == end["total"] and end["stage"] is None and end["error"] is None
        assert all(p["ready"] for p in end["parts"])
        from ripmarket_env.games import ids, registry

        games = {spec.title for spec in registry().values()}  # every registered game is served, the toy game too
        assert all(any(f" {g}'s " in x for g in games) and ("bot (" in x or "rules engine" in x)
                   for x in seen), seen
        assert {p["game"] for p in end["parts"]} == set(ids()) >= {"ripmarket", "rune-market", "black-market"}


def test_rune_market_games_keep_the_servers_limits():
    """The Rune Market's web games follow the same limits as R.I.P. Market's (issue 19, 2):
    a client that starts too many gets 429 with Retry-After while another client still
    starts one; a game nobody answers expires even while it is read."""
    now = [1000.0]
    app = create_app(max_games=8, max_games_per_client=2, idle_seconds=60, max_age_seconds=600, clock=lambda: now[0])
    attacker = TestClient(app, base_url=BASE, client=("127.0.0.77", 40000))
    body = {"players": 2, "seat": 0, "opponents": ["rm-banker"]}
    made = [attacker.post("/api/rune-market/games", json=body) for _ in range(5)]
    assert [r.status_code for r in made].count(201) == 2
    refused = [r for r in made if r.status_code == 429]
    assert len(refused) == 3 and 1 <= int(refused[0].headers["Retry-After"]) <= 60
    assert "--max-games-per-client 2" in detail(refused[0])
    other = TestClient(app, base_url=BASE, client=("127.0.0.78", 40000))
    assert other.post("/api/rune-market/games", json=body).status_code == 201
    g = made[0].json()
    for _ in range(4):  # reading every 20 s does not keep the game alive
        now[0] += 20
        r = attacker.get(f"/api/rune-market/games/{g['game_id']}", headers={"X-Seat-Token": g["seat_token"]})
    assert r.status_code == 410  # expired, like every game
    assert attacker.post("/api/rune-market/games", json=body).status_code == 201  # its slot is free again


# ------------------------------------------------------------------ issue 39
def test_forwarded_for_headers_do_not_make_new_clients():
    """Issue 39: a client is the connection's peer address. Behind ``ripmarket serve``'s
    uvicorn options (``proxy_headers=False`` without ``--trust-proxy``), 64 creates from
    one address with made-up X-Forwarded-For values count as one client: 4 games, 60
    refusals, and the server's 8 slots are not all taken, so another address still plays."""
    import socket

    import httpx
    import uvicorn

    from ripmarket_env.app.cli import uvicorn_options

    app = create_app(max_games=8, max_games_per_client=4)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    opts = uvicorn_options("127.0.0.1", port)
    assert opts["proxy_headers"] is False
    server = uvicorn.Server(uvicorn.Config(app, **{**opts, "log_level": "warning"}))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        for _ in range(200):
            if server.started:
                break
            time.sleep(0.05)
        url = f"http://127.0.0.1:{port}"
        with httpx.Client(base_url=url, timeout=60) as attacker:
            codes = [attacker.post("/api/games", json={"players": 2, "opponents": ["random"]},
                                   headers={"X-Forwarded-For": f"203.0.113.{k}"}).status_code for k in range(64)]
        assert codes.count(201) == 4 and codes.count(429) == 60
        other = httpx.Client(base_url=url, timeout=60, transport=httpx.HTTPTransport(local_address="127.0.0.2"))
        with other:
            r = other.post("/api/games", json={"players": 2, "opponents": ["random"]}, headers={"Host": "127.0.0.1"})
        assert r.status_code == 201, r.text
    finally:
        server.should_exit = True
        thread.join(10)


def test_the_game_limit_counts_every_game_together():
    """Issue 39: the per-client limit holds across games (each game's routes had their own
    count, so a client could hold 4 of each): a 5th live game of any game is refused with
    a plain sentence saying how to end one; ending one frees its slot."""
    c = make_client("127.0.0.90", max_games=64, max_games_per_client=4)
    made = [c.post("/api/games", json={"players": 2, "opponents": ["random"]}),
            c.post("/api/black-market/games", json={"players": 2, "opponents": ["random"]}),
            c.post("/api/rune-market/games", json={"players": 2, "opponents": ["random"]}),
            c.post("/api/ripmarket/games", json={"players": 2, "opponents": ["random"]})]
    assert [r.status_code for r in made] == [201] * 4
    for path in ("/api/games", "/api/black-market/games", "/api/rune-market/games"):
        r = c.post(path, json={"players": 2, "opponents": ["random"]})
        assert r.status_code == 429 and int(r.headers["Retry-After"]) >= 1
        text = detail(r)
        assert "you already have 4 live games" in text and "End my previous game" in text and "DELETE" in text
    g = made[1].json()
    assert c.delete(f"/api/black-market/games/{g['game_id']}", headers=tok(g)).status_code == 204
    assert c.post("/api/rune-market/games", json={"players": 2, "opponents": ["random"]}).status_code == 201


def test_bot_endpoint_has_a_per_client_budget():
    """Issue 39: the stateless bot endpoint of every game counts each client's calls; past
    the budget it answers 429 with Retry-After, other clients still get answers."""
    app = create_app(bot_calls=3, bot_seconds=60)
    obs, mask = observation()
    body = {"observation": obs.tolist(), "action_mask": mask.tolist()}
    busy = TestClient(app, base_url=BASE, client=("127.0.0.91", 40000))
    codes = [busy.post("/api/bots/random/act", json=body).status_code for _ in range(3)]
    r = busy.post("/api/ripmarket/bots/random/act", json=body)
    assert codes == [200] * 3 and r.status_code == 429
    assert 1 <= int(r.headers["Retry-After"]) <= 60 and "--bot-calls 3" in detail(r)
    other = TestClient(app, base_url=BASE, client=("127.0.0.92", 40000))
    assert other.post("/api/bots/random/act", json=body).status_code == 200


def test_bad_settings_answer_422_not_500(client):
    """Issue 39: settings the rules config refuses (10 players cannot each be dealt 6 cards
    from the Living Deck, R-1.3) answer one line, and no game is made."""
    before = len(client.app.state.games)
    r = client.post("/api/games", json={"players": 10, "opponents": ["random"], "rules": {"hand_size": 6}})
    assert r.status_code == 422 and "too few for a 10-player game" in detail(r) and "\n" not in detail(r)
    assert len(client.app.state.games) == before


def test_a_store_of_version_1_is_migrated_to_the_table_keyed_by_game(tmp_path):
    """A store file written before the table was keyed by game (version 1: R.I.P. Market's
    games only) opens as it is: its rows become the default game's, the same token opens
    them, and another game's path does not."""
    import sqlite3

    from ripmarket_env.app.server.store import token_digest

    db = tmp_path / "v1.sqlite3"
    with sqlite3.connect(db) as con:
        con.executescript("""
            CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
            INSERT INTO meta VALUES ('schema', '1');
            CREATE TABLE games (game_id TEXT PRIMARY KEY, token_hash TEXT NOT NULL, client TEXT NOT NULL,
                players INTEGER NOT NULL, seat INTEGER NOT NULL, opponents TEXT NOT NULL, seed TEXT NOT NULL,
                practice INTEGER NOT NULL, rules TEXT NOT NULL, steps TEXT NOT NULL, status TEXT NOT NULL,
                created REAL NOT NULL, last_action REAL NOT NULL, ended REAL, end_reason TEXT, record TEXT,
                final_view TEXT);
            CREATE TABLE rune_games (game_id TEXT PRIMARY KEY);""")
        con.execute("INSERT INTO games VALUES ('old-game', ?, '127.0.0.1', 2, 0, '[\"greedy\"]', '5', 1, '{}', "
                    "'[]', 'live', ?, ?, NULL, NULL, NULL, NULL)", (token_digest("old-token"), time.time(), time.time()))
    c = make_client(db=db)
    h = {"X-Seat-Token": "old-token"}
    r = c.get("/api/games/old-game", headers=h)
    assert r.status_code == 200, r.text
    assert r.json()["game"] == "ripmarket" and r.json()["seed"] == 5 and r.json()["practice"] is True
    assert c.get("/api/ripmarket/games/old-game", headers=h).json() == r.json()
    assert c.get("/api/black-market/games/old-game", headers=h).status_code == 404
    with sqlite3.connect(db) as con:
        assert con.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()[0] == "2"
        assert con.execute("SELECT game FROM games").fetchall() == [("ripmarket",)]
