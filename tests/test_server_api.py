"""The JSON API of `ripmarket serve`: games, errors, hidden information, the game cap,
concurrent games and the stateless bot endpoint."""

from __future__ import annotations

import json
import random
import threading
import time

import numpy as np
import pytest
from fastapi.testclient import TestClient

from ripmarket_env.engine import Engine, RulesConfig
from ripmarket_env.record import replay
from ripmarket_env.server import create_app


@pytest.fixture(scope="module")
def client():
    with TestClient(create_app(max_games=16)) as c:
        yield c


def new_game(client, **body):
    body = {"players": 3, "seat": 0, "opponents": ["greedy", "survivor"], "seed": 7, **body}
    r = client.post("/api/games", json=body)
    assert r.status_code == 201, r.text
    return r.json()


def read(client, g):
    r = client.get(f"/api/games/{g['game_id']}", params={"token": g["seat_token"]})
    assert r.status_code == 200, r.text
    return r.json()


def play_out(client, g, rng: random.Random, limit: int = 400) -> dict:
    state = g
    for _ in range(limit):
        if state["status"] == "over":
            return state
        assert state["status"] == "your_turn"
        a = rng.choice(state["legal_actions"])["action"]
        r = client.post(f"/api/games/{g['game_id']}/actions", json={"token": g["seat_token"], "action": a})
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
    assert g["seat"] == 1 and g["players"] == 3 and g["seed"] == 11
    assert g["controllers"] == ["greedy", "you", "survivor"]
    assert g["status"] == "your_turn" and g["decision"]["seat"] == 1
    assert g["legal_actions"] and all(a["label"] and a["text"] for a in g["legal_actions"])
    assert all(c["text"] for c in g["hand"])  # the hand comes with card texts
    assert len(g["table"]["seats"]) == 3 and len(g["table"]["market"]) == 3
    state = read(client, g)
    assert state["legal_actions"] == g["legal_actions"]

    r = client.get(f"/api/games/{g['game_id']}/record", params={"token": g["seat_token"]})
    assert r.status_code == 409 and "not over yet" in detail(r)

    final = play_out(client, g, random.Random(3))
    assert final["result"] is not None and final["legal_actions"] == []
    assert final["rounds"], "resolved rounds are reported"
    assert final["result"]["you_won"] == (1 in final["result"]["winners"])
    r = client.get(f"/api/games/{g['game_id']}/record", params={"token": g["seat_token"]})
    assert r.status_code == 200
    lines = [json.loads(x) for x in r.text.splitlines()]
    assert lines[0]["format"] == "ripmarket-record" and lines[0]["seed"] == 11
    assert lines[-1]["result"]["winners"] == final["result"]["winners"]
    path = tmp_path / "g.jsonl"
    path.write_text(r.text)
    assert bool(replay(path).terminated[0])

    r = client.post(f"/api/games/{g['game_id']}/actions", json={"token": g["seat_token"], "action": 0})
    assert r.status_code == 409 and "the game is over" in detail(r)


def test_rules_and_page(client):
    g = new_game(client, players=4, opponents=["random"], rules={"tie_rule": "earliest", "start_hp": 1})
    assert g["rules"]["tie_rule"] == "earliest" and g["rules"]["start_hp"] == 1
    assert all(s["max_hp"] == 1 for s in g["table"]["seats"])
    assert g["controllers"] == ["you", "random", "random", "random"]
    page = client.get("/")
    assert page.status_code == 200 and "text/html" in page.headers["content-type"]
    assert "/static/app.js" in page.text and "/static/style.css" in page.text
    for name in ("app.js", "style.css", "index.html"):
        assert client.get(f"/static/{name}").status_code == 200
    schema = client.get("/openapi.json").json()
    for path in ("/api/games", "/api/games/{game_id}", "/api/games/{game_id}/actions",
                 "/api/games/{game_id}/record", "/api/bots/{name}/act"):
        assert path in schema["paths"]
    for model in ("CreateGame", "GameView", "GameCreated", "ActionIn", "BotActIn", "BotActOut", "Problem"):
        assert model in schema["components"]["schemas"]


# ------------------------------------------------------------------ errors
@pytest.mark.parametrize(
    "body, status, message",
    [
        ({"players": 11, "opponents": ["greedy"]}, 422, "players: input should be less than or equal to 10"),
        ({"players": 1, "opponents": ["greedy"]}, 422, "players: input should be greater than or equal to 2"),
        ({"players": "3", "opponents": ["greedy"]}, 422, "players: input should be a valid integer"),
        ({"opponents": ["greedy"]}, 422, "players: required but missing"),
        ({"players": 3, "opponents": []}, 422, "opponents: list should have at least 1 item"),
        ({"players": 3, "opponents": ["bogus"]}, 422, "unknown bot 'bogus'; allowed: greedy"),
        ({"players": 3, "seat": 3, "opponents": ["greedy"]}, 422, "seat: 3 is not a seat of a 3-player game; allowed: 0 to 2"),
        ({"players": 3, "seat": -1, "opponents": ["greedy"]}, 422, "seat: input should be greater than or equal to 0"),
        ({"players": 3, "opponents": ["greedy", "greedy", "greedy"]}, 422, "3 opponents given for 2 other seat(s)"),
        ({"players": 3, "opponents": ["greedy"], "seed": -5}, 422, "seed: input should be greater than or equal to 0"),
        ({"players": 3, "opponents": ["greedy"], "color": "red"}, 422, "color: unknown field"),
        ({"players": 3, "opponents": ["greedy"], "rules": {"tie_rule": "coin"}}, 422, "rules.tie_rule: input should be 'all' or 'earliest'"),
        ({"players": 3, "opponents": ["greedy"], "rules": {"start_hp": 0}}, 422, "start_hp=0 is not allowed; allowed: null or an integer from 1 to 9"),
        ({"players": 3, "opponents": ["greedy"], "rules": {"epilogue": True}}, 422, "epilogue"),
        ({"players": 3, "opponents": ["greedy"], "rules": {"num_players": 3}}, 422, "rules.num_players: unknown field"),
    ],
)
def test_create_errors(client, body, status, message):
    before = len(client.app.state.games)
    r = client.post("/api/games", json=body)
    assert r.status_code == status, r.text
    assert message in detail(r)
    assert len(client.app.state.games) == before  # nothing was created


def test_malformed_json(client):
    for raw in (b"{not json", b"[1, 2", b""):
        r = client.post("/api/games", content=raw, headers={"content-type": "application/json"})
        assert r.status_code == 422
        text = detail(r)
        assert "not valid JSON" in text or "required but missing" in text
        assert 'Expected a JSON object {"players": 2-10' in text
    r = client.post("/api/games", json=[1, 2])
    assert r.status_code == 422 and "Expected a JSON object" in detail(r)


def test_game_errors_leave_the_game_unchanged(client):
    g = new_game(client, players=4, opponents=["shark"], seed=21)
    gid, tok = g["game_id"], g["seat_token"]
    before = read(client, g)
    legal = [a["action"] for a in before["legal_actions"]]
    illegal = next(a for a in range(57) if a not in legal)

    r = client.get("/api/games/no-such-game", params={"token": tok})
    assert r.status_code == 404 and "no game with id 'no-such-game'" in detail(r)
    assert "POST /api/games" in detail(r)
    r = client.get(f"/api/games/{gid}", params={"token": "wrong"})
    assert r.status_code == 403 and "the token does not match" in detail(r)
    r = client.get(f"/api/games/{gid}")
    assert r.status_code == 422 and "query parameter 'token': required but missing" in detail(r)
    r = client.get(f"/api/games/{gid}/record", params={"token": "wrong"})
    assert r.status_code == 403

    act = f"/api/games/{gid}/actions"
    cases = [
        ({"token": "wrong", "action": legal[0]}, 403, "the token does not match"),
        ({"token": tok, "action": illegal}, 409, f"action {illegal} is not legal now"),
        ({"token": tok, "action": 57}, 422, "action 57 is out of range (actions are 0 to 56)"),
        ({"token": tok, "action": -1}, 422, "action -1 is out of range"),
        ({"token": tok, "action": "1"}, 422, "action: input should be a valid integer"),
        ({"token": tok, "action": 1.5}, 422, "action: input should be a valid integer"),
        ({"token": tok}, 422, "action: required but missing"),
        ({"action": legal[0]}, 422, "token: required but missing"),
        ({"token": tok, "action": legal[0], "extra": 1}, 422, "extra: unknown field"),
    ]
    for body, status, message in cases:
        r = client.post(act, json=body)
        assert r.status_code == status, (body, r.text)
        assert message in detail(r), (body, detail(r))
        if status in (409, 422) and "action" in body and isinstance(body["action"], int):
            assert "legal" in detail(r)  # says what is allowed
        assert read(client, g) == before, f"{body} changed the game"
    r = client.post(f"/api/games/no-such-game/actions", json={"token": tok, "action": legal[0]})
    assert r.status_code == 404
    r = client.post(act, content=b'{"token": ', headers={"content-type": "application/json"})
    assert r.status_code == 422 and "not valid JSON" in detail(r) and '{"token": "<seat_token>"' in detail(r)
    assert read(client, g) == before
    # the illegal-action message lists the legal actions with their descriptions
    r = client.post(act, json={"token": tok, "action": illegal})
    for a in before["legal_actions"]:
        assert f"{a['action']} ({a['text']})" in detail(r)


def test_delete(client):
    g = new_game(client)
    r = client.delete(f"/api/games/{g['game_id']}", params={"token": "nope"})
    assert r.status_code == 403
    r = client.delete(f"/api/games/{g['game_id']}", params={"token": g["seat_token"]})
    assert r.status_code == 204
    r = client.get(f"/api/games/{g['game_id']}", params={"token": g["seat_token"]})
    assert r.status_code == 404


# ------------------------------------------------------------------ hidden information
def test_a_seat_never_sees_other_hidden_cards(client):
    """Other seats' hands are counts only; their face-down cards stay hidden until revealed."""
    seen_hidden_face_down = False
    for seed in range(12):
        g = new_game(client, players=5, seat=2, opponents=["trickster"], seed=seed)
        manager = client.app.state.games
        session = manager.get(g["game_id"], g["seat_token"]).session
        rng = random.Random(seed)
        state = g
        while state["status"] != "over":
            text = json.dumps(state)
            r = session.state
            for s in state["table"]["seats"]:
                assert set(s) >= {"hand_count", "shadow_count"}
                assert "hand" not in s and "shadow_hand" not in s
                q = s["seat"]
                if q != 2 and s["played"] is not None and s["played"]["face_down"]:
                    assert s["played"]["card"] is None
                    seen_hidden_face_down = True
                    hidden = session.db.living[int(r["played"][q])].name
                    for e in state["log"] + [x for x in state["recent"] if x["type"] == "event"]:
                        if e["seat"] == q and "face-down" in e["text"]:
                            assert hidden not in e["text"]
                    assert state["active_rule"]["card"] != hidden or any(
                        e["kind"] == "reveal" and e["seat"] == q for e in state["log"])
            mine = {c["design"]: c["count"] for c in state["hand"]}
            assert mine == {d: int(n) for d, n in enumerate(r["hand"][2]) if n > 0}
            mine_shadow = {c["design"]: c["count"] for c in state["shadow_hand"]}
            assert mine_shadow == {d: int(n) for d, n in enumerate(r["shadow_hand"][2]) if n > 0}
            if state is not g:  # only the creation answer carries the token
                assert "seat_token" not in text and g["seat_token"] not in text
            a = rng.choice(state["legal_actions"])["action"]
            state = client.post(f"/api/games/{g['game_id']}/actions",
                                json={"token": g["seat_token"], "action": a}).json()
        if seen_hidden_face_down:
            break
    assert seen_hidden_face_down, "no face-down card of another seat was seen"


def test_view_shows_no_more_than_the_seat_observation(client):
    """What the view says about every seat is also in that seat's own observation (R-12.3)."""
    from ripmarket_env.engine.observation import named_view

    checked_played = 0
    for seed in range(6):
        g = new_game(client, players=4, seat=3, opponents=["trickster", "greedy"], seed=seed)
        session = client.app.state.games.get(g["game_id"], g["seat_token"]).session
        eng = session.engine
        rng = random.Random(seed)
        state = g
        while state["status"] != "over":
            nv = named_view(eng.observe([3])[0], eng.obs_layout)
            for s in state["table"]["seats"]:
                rel = (s["seat"] - 3) % 4
                assert round(float(nv["hand_size"][rel][0]) * 10) == s["hand_count"]
                assert bool(nv["alive"][rel][0]) == s["alive"]
                onehot = nv["played"][rel]
                if s["played"] is None:
                    assert not onehot.any()
                elif s["played"]["card"] is None:  # hidden here: hidden in the observation too
                    assert not onehot.any() and nv["face_down"][rel][0] == 1
                else:
                    assert onehot[s["played"]["card"]["design"]] == 1
                    checked_played += 1
                shadows = sorted(c["design"] for c in s["haunted_by"])
                counts = np.rint(nv["attached"][rel] * 3).astype(int)
                assert shadows == sorted(d for d, n in enumerate(counts) for _ in range(n))
            a = rng.choice(state["legal_actions"])["action"]
            state = client.post(f"/api/games/{g['game_id']}/actions",
                                json={"token": g["seat_token"], "action": a}).json()
    assert checked_played > 0


# ------------------------------------------------------------------ capacity and threads
def test_game_cap_gives_429():
    with TestClient(create_app(max_games=2)) as c:
        a = new_game(c)
        new_game(c, seed=8)
        r = c.post("/api/games", json={"players": 3, "opponents": ["greedy"]})
        assert r.status_code == 429
        text = detail(r)
        assert "maximum of 2 games" in text and "--max-games 2" in text and "try again later" in text
        # a finished game makes room
        play_out(c, a, random.Random(1))
        r = c.post("/api/games", json={"players": 3, "opponents": ["greedy"]})
        assert r.status_code == 201, r.text
        assert len(c.app.state.games) == 2


def test_two_games_interleaved_in_threads(tmp_path):
    with TestClient(create_app(max_games=4)) as c:
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
                    if state["status"] == "over":
                        break
                    a = rng.choice(state["legal_actions"])["action"]
                    r = c.post(f"/api/games/{g['game_id']}/actions", json={"token": g["seat_token"], "action": a})
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
            assert finals[i]["status"] == "over"
            r = c.get(f"/api/games/{g['game_id']}/record", params={"token": g["seat_token"]})
            path = tmp_path / f"{i}.jsonl"
            path.write_text(r.text)
            assert bool(replay(path).terminated[0])  # each game is exactly its own record

        # many requests on one game at once: the lock keeps it consistent
        g = new_game(c, players=4, opponents=["random"], seed=40)
        state = read(c, g)
        a = state["legal_actions"][0]["action"]
        codes = []

        def hit():
            r = c.post(f"/api/games/{g['game_id']}/actions", json={"token": g["seat_token"], "action": a})
            codes.append(r.status_code)

        ts = [threading.Thread(target=hit) for _ in range(6)]
        for t in ts:
            t.start()
        for t in ts:
            t.join(timeout=300)
        assert codes.count(200) >= 1 and set(codes) <= {200, 409}
        session = c.app.state.games.get(g["game_id"], g["seat_token"]).session
        steps = [line for line in session.recorder.lines if "step" in line]
        assert sum(1 for s in steps if s["seat"] == 0) == codes.count(200)


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

    from ripmarket_env.cli import app

    for args, message in ((["--max-games", "0"], "--max-games 0 is not allowed"),
                          (["--port", "70000"], "--port 70000 is not allowed")):
        result = CliRunner().invoke(app, ["serve", *args])
        assert result.exit_code == 2 and message in result.output

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    root = Path(__file__).resolve().parents[1]
    proc = subprocess.Popen([sys.executable, "-m", "ripmarket_env.cli", "serve", "--port", str(port), "--max-games", "3"],
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
        page = httpx.get(f"http://127.0.0.1:{port}/", timeout=5)
        assert page.status_code == 200 and "R.I.P. Market" in page.text
    finally:
        proc.terminate()
        proc.wait(timeout=60)


# ------------------------------------------------------------------ bots
def observation(players: int = 4, seed: int = 3):
    eng = Engine(RulesConfig(num_players=players))
    eng.reset([seed])
    seat = int(eng.current_player()[0])
    return eng.observe([seat])[0], eng.legal_mask()[0].astype(int)


def test_bot_endpoint(client):
    info = client.get("/api/bots").json()
    import agents

    assert [b["name"] for b in info["bots"]] == agents.names()
    obs, mask = observation()
    assert info["observation_size"] == obs.size and info["num_actions"] == mask.size
    for name in agents.names():
        r = client.post(f"/api/bots/{name}/act", json={"observation": obs.tolist(), "action_mask": mask.tolist()})
        assert r.status_code == 200, r.text
        out = r.json()
        assert mask[out["action"]] == 1 and out["description"]
    body = {"observation": obs.tolist(), "action_mask": mask.tolist(), "seed": 3}
    assert client.post("/api/bots/random/act", json=body).json() == client.post("/api/bots/random/act", json=body).json()


@pytest.mark.parametrize(
    "change, status, message",
    [
        (lambda o, m: (o[:-1], m), 422, "observation has 1126 values; expected exactly 1127"),
        (lambda o, m: (o, m + [0]), 422, "action_mask has 58 values; expected exactly 57"),
        (lambda o, m: (o, [2] + m[1:]), 422, "action_mask[0] is 2; allowed: 0 or 1"),
        (lambda o, m: (o, [-1] + m[1:]), 422, "action_mask[0] is -1; allowed: 0 or 1"),
        (lambda o, m: (o, [0] * len(m)), 422, "action_mask has no 1"),
        (lambda o, m: (["x"] + o[1:], m), 422, "observation.0"),
        (lambda o, m: (o, [0.5] + m[1:]), 422, "action_mask.0"),
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
    assert "unknown bot 'nobody'; allowed: " in detail(r) and "greedy" in detail(r)
    r = client.post("/api/bots/greedy/act", content=b"{{", headers={"content-type": "application/json"})
    assert r.status_code == 422 and "not valid JSON" in detail(r) and '"observation": [' in detail(r)
    r = client.post("/api/bots/greedy/act", json={"observation": obs.tolist()})
    assert r.status_code == 422 and "action_mask: required but missing" in detail(r)


# ------------------------------------------------------------------ explaining the game
def test_view_explains_rounds_moves_and_the_result(client):
    bots = client.get("/api/bots").json()["bots"]
    assert all(b["level"] for b in bots) and {b["name"]: b["level"] for b in bots}["random"].startswith("Beginner")
    g = new_game(client, players=4, seat=0, opponents=["greedy", "trickster", "hoarder"], seed=5)
    assert all(s["level"] for s in g["table"]["seats"] if not s["is_you"])
    assert g["table"]["seats"][0]["level"] == ""
    rng = random.Random(4)
    state = g
    while state["status"] != "over":
        before = len(state["rounds"])
        a = rng.choice(state["legal_actions"])["action"]
        state = client.post(f"/api/games/{g['game_id']}/actions", json={"token": g["seat_token"], "action": a}).json()
        recent = state["recent"]
        assert recent and recent[0]["type"] == "event" and recent[0]["seat"] == 0  # your own move first
        assert [x["index"] for x in recent if x["type"] == "round"] == list(range(before, len(state["rounds"])))
        assert state["active_rule"]["text"]
        assert "(only choice)" not in json.dumps(state)
    for r in state["rounds"]:
        assert r["story"] and r["rule_text"]
        hurt = {s["seat"] for s in r["seats"] if s["damage"] > 0}
        assert hurt == {x["seat"] for x in r["story"] if x["kind"] == "damage"}
        for s in r["seats"]:
            assert s["hp_lost"] >= s["damage"] or s["hp"] == 0
    res = state["result"]
    assert [x["place"] for x in res["standings"]] == sorted(x["place"] for x in res["standings"])
    dead = [x for x in res["standings"] if not x["alive"]]
    assert dead and all(x["died_round"] and x["how"] for x in dead)
    assert res["end"].startswith("Game over")


def test_status_says_what_is_loading_and_warm_up_finishes():
    with TestClient(create_app(max_games=2)) as c:
        s = c.get("/api/status").json()
        assert set(s) == {"ready", "stage", "done", "total", "elapsed", "error"}
        assert s["total"] >= 1 and s["stage"] is None and s["error"] is None
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
        assert all(("Loading the" in x and "bot" in x) or "rules engine" in x for x in seen)
