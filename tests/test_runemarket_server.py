"""The Rune Market on the web server (``/api/rune-market/games``, the routes every game has, loopback test client): a game
played to the end over HTTP with the block decision handed over at once, and bad
requests answered with one-line errors that leave the game as it was."""

from __future__ import annotations

import json

import numpy as np
from fastapi.testclient import TestClient

from ripmarket_env.app.server import create_app


def _client():
    return TestClient(create_app(max_games=4), base_url="http://127.0.0.1")


def test_a_game_over_http_with_block_decisions():
    c = _client()
    r = c.post("/api/rune-market/games", json={"players": 4, "seat": 0, "seed": 0})
    assert r.status_code == 201, r.text
    v = r.json()
    gid, h = v["game_id"], {"X-Seat-Token": v["seat_token"]}
    assert "seat_token" not in c.get(f"/api/rune-market/games/{gid}", headers=h).json()
    rng = np.random.default_rng(0)
    blocks = 0
    while not v["over"]:
        assert v["your_turn"] and v["choices"]
        if v["blocking"]:  # RM-5.7: asked during a bot's turn, before anything else happens
            blocks += 1
            assert v["prompt"].startswith("BLOCK?") and " attacks P0" in v["recent"][-1]
            assert v["choices"][-1]["text"] == "let the attack through (do not block)"
        assert "    hand:" in v["table"] and v["table"].count("    hand:") == 1  # your hand only
        c_ = v["choices"][rng.integers(len(v["choices"]))]
        v = c.post(f"/api/rune-market/games/{gid}/actions", headers=h,
                   json={"action": c_["action"], "decision_number": v["decision_number"]}).json()
    assert blocks > 0 and v["result"]["winners"]
    r = c.post(f"/api/rune-market/games/{gid}/actions", headers=h, json={"action": 0, "decision_number": 0})
    assert r.status_code == 409 and "over" in r.json()["detail"]


def test_bad_requests_change_nothing():
    c = _client()
    v = c.post("/api/rune-market/games", json={"players": 3, "seat": 1, "seed": 5}).json()
    gid, h = v["game_id"], {"X-Seat-Token": v["seat_token"]}
    before = c.get(f"/api/rune-market/games/{gid}", headers=h).json()
    legal = {ch["action"] for ch in v["choices"]}
    bad = next(a for a in range(50) if a not in legal)
    for body, code, needle in (
        ({"action": bad, "decision_number": v["decision_number"]}, 409, "not legal now"),
        ({"action": v["choices"][0]["action"], "decision_number": v["decision_number"] + 1}, 409, "decision_number"),
        ({"action": "x", "decision_number": 0}, 422, ""),
    ):
        r = c.post(f"/api/rune-market/games/{gid}/actions", headers=h, json=body)
        assert r.status_code == code, r.text
        assert needle in r.json()["detail"] if needle else "detail" in r.json()
    assert c.get(f"/api/rune-market/games/{gid}", headers=h).json() == before
    assert c.get(f"/api/rune-market/games/{gid}", headers={"X-Seat-Token": "nope"}).status_code == 403
    assert c.get("/api/rune-market/games/none", headers=h).status_code == 404
    r = c.post("/api/rune-market/games", json={"players": 4, "seat": 0, "opponents": ["greedy"]})
    assert r.status_code == 422 and "unknown bot 'greedy'" in r.json()["detail"]
    r = c.post("/api/rune-market/games", json={"players": 3, "seat": 4})
    assert r.status_code == 422 and "seat" in r.json()["detail"]
    assert c.get("/rune-market").status_code == 200 and "The Rune Market" in c.get("/rune-market").text
    assert 'href="/rune-market"' in c.get("/").text  # the game is picked at set-up
    assert c.get(f"/api/rune-market/games/{gid}", headers=h).json() == before


def _play(c, gid, h, v, n, rng):
    """Answer ``n`` decisions with random legal choices; the last view."""
    for _ in range(n):
        ch = v["choices"][rng.integers(len(v["choices"]))]
        v = c.post(f"/api/rune-market/games/{gid}/actions", headers=h,
                   json={"action": ch["action"], "decision_number": v["decision_number"]}).json()
    return v


def test_a_restarted_server_resumes_the_game_with_the_same_token_and_state(tmp_path):
    db = tmp_path / "games.sqlite3"
    now = [1000.0]
    c1 = TestClient(create_app(db=db, clock=lambda: now[0]), base_url="http://127.0.0.1")
    v = c1.post("/api/rune-market/games", json={"players": 4, "seat": 1, "seed": 3}).json()
    gid, h = v["game_id"], {"X-Seat-Token": v["seat_token"]}
    v = _play(c1, gid, h, v, 5, np.random.default_rng(1))
    before = c1.get(f"/api/rune-market/games/{gid}", headers=h).json()
    assert before["decision_number"] > 5  # the bots' decisions count too
    c2 = TestClient(create_app(db=db, clock=lambda: now[0]), base_url="http://127.0.0.1")  # the restart
    after = c2.get(f"/api/rune-market/games/{gid}", headers=h).json()
    assert after == before  # same decision number, table, choices, prompt and recent events
    assert c2.get(f"/api/rune-market/games/{gid}", headers={"X-Seat-Token": "nope"}).status_code == 403
    stale = c2.post(f"/api/rune-market/games/{gid}/actions", headers=h,
                    json={"action": after["choices"][0]["action"], "decision_number": after["decision_number"] - 1})
    assert stale.status_code == 409
    rng = np.random.default_rng(2)
    v = after
    while not v["over"]:
        v = _play(c2, gid, h, v, 1, rng)
    assert v["result"]["winners"]
    c3 = TestClient(create_app(db=db, clock=lambda: now[0]), base_url="http://127.0.0.1")
    assert c3.get(f"/api/rune-market/games/{gid}", headers=h).json()["result"] == v["result"]  # finished games too


def test_expiry_holds_across_a_restart(tmp_path):
    db = tmp_path / "games.sqlite3"
    now = [1000.0]
    c1 = TestClient(create_app(db=db, idle_seconds=60, clock=lambda: now[0]), base_url="http://127.0.0.1")
    v = c1.post("/api/rune-market/games", json={"players": 2, "seat": 0, "seed": 4, "opponents": ["rm-banker"]}).json()
    gid, h = v["game_id"], {"X-Seat-Token": v["seat_token"]}
    now[0] += 61
    c2 = TestClient(create_app(db=db, idle_seconds=60, clock=lambda: now[0]), base_url="http://127.0.0.1")
    r = c2.get(f"/api/rune-market/games/{gid}", headers=h)
    assert r.status_code == 410 and "no decision was answered" in r.json()["detail"]
    c3 = TestClient(create_app(db=db, idle_seconds=60, clock=lambda: now[0]), base_url="http://127.0.0.1")
    assert c3.get(f"/api/rune-market/games/{gid}", headers=h).status_code == 410  # expired for good
    assert c3.delete(f"/api/rune-market/games/{gid}", headers=h).status_code == 204  # and can be dropped
    assert c3.get(f"/api/rune-market/games/{gid}", headers=h).status_code == 404


def test_a_corrupt_stored_game_gets_a_clear_error_and_the_server_goes_on(tmp_path):
    import sqlite3

    db = tmp_path / "games.sqlite3"
    c1 = TestClient(create_app(db=db), base_url="http://127.0.0.1")
    made = [c1.post("/api/rune-market/games", json={"players": 3, "seat": 0, "seed": s}).json() for s in (1, 2, 3)]
    with sqlite3.connect(db) as con:
        con.execute("UPDATE games SET steps = '[1, 2' WHERE game_id = ?", (made[0]["game_id"],))
        con.execute("UPDATE games SET steps = '[49, 49, 49]' WHERE game_id = ?", (made[1]["game_id"],))
    c2 = TestClient(create_app(db=db), base_url="http://127.0.0.1")  # starts despite the bad rows
    for g, needle in ((made[0], "unreadable"), (made[1], "could not be brought back")):
        r = c2.get(f"/api/rune-market/games/{g['game_id']}", headers={"X-Seat-Token": g["seat_token"]})
        assert r.status_code == 410 and needle in r.json()["detail"] and "POST /api/rune-market/games" in r.json()["detail"], r.text
        r = c2.post(f"/api/rune-market/games/{g['game_id']}/actions", headers={"X-Seat-Token": g["seat_token"]},
                    json={"action": 0, "decision_number": 0})
        assert r.status_code == 410
    good = made[2]
    r = c2.get(f"/api/rune-market/games/{good['game_id']}", headers={"X-Seat-Token": good["seat_token"]})
    assert r.status_code == 200 and r.json()["decision_number"] == good["decision_number"]
    assert c2.post("/api/rune-market/games", json={"players": 2, "seat": 0, "seed": 9}).status_code == 201


def test_the_board_data_shows_the_table_and_only_your_hand():
    """RM-8.4: the structured table names every public fact; the other hands only by size."""
    c = _client()
    v = c.post("/api/rune-market/games", json={"players": 4, "seat": 2, "seed": 11}).json()
    gid, h = v["game_id"], {"X-Seat-Token": v["seat_token"]}
    v = _play(c, gid, h, v, 12, np.random.default_rng(4))
    b = v["board"]
    assert [s["seat"] for s in b["seats"]] == [0, 1, 2, 3] and [s["you"] for s in b["seats"]] == [0, 0, 1, 0]
    assert all(set(s) >= {"score", "hand_size", "shelters", "loose", "level"} for s in b["seats"])
    assert all("hand" not in s for s in b["seats"])  # no seat carries its cards
    assert len(b["hand"]) == b["seats"][2]["hand_size"] and all(c_["text"] for c_ in b["hand"])
    table = v["table"]
    for s in b["seats"]:
        line = next(ln for ln in table.splitlines() if ln[1:].startswith(f"P{s['seat']}:"))
        assert line[1:].startswith(f"P{s['seat']}: {s['score']} Runes") and f"hand {s['hand_size']} " in line
        for sh in s["shelters"]:
            if sh["present"]:
                assert f"{sh['colour'].capitalize()} Shelter [{sh['runes']} inside]" in line
    runes_on_tables = sum(s["score"] for s in b["seats"])
    assert b["market"]["red"] + b["market"]["blue"] + runes_on_tables == 20  # every Rune is somewhere once
    assert b["seats"][1]["level"].startswith("Easy") and b["seats"][2]["level"] == ""
    mine = v["table"].split("    hand: ")[1].splitlines()[0]
    assert sorted(mine.replace(" x", "*").split(", ")) == sorted(
        f"{n}*{k}" if k > 1 else n for n, k in
        {c_["name"]: sum(x["name"] == c_["name"] for x in b["hand"]) for c_ in b["hand"]}.items()) or not b["hand"]
    while not v["over"]:
        v = _play(c, gid, h, v, 1, np.random.default_rng(5))
    st = v["result"]["standings"]
    assert [e["place"] for e in st] == sorted(e["place"] for e in st) and st[0]["place"] == 1
    assert {e["seat"] for e in st if e["winner"]} == set(v["result"]["winners"])
    assert [e["score"] for e in st] == sorted((e["score"] for e in st), reverse=True)


def test_every_rune_market_bot_has_a_difficulty_label():
    bots = _client().get("/api/rune-market/bots").json()
    import agents

    assert {b["name"] for b in bots["bots"]} == set(agents.names("rune-market"))
    assert all(b["level"].split(":")[0] in ("Beginner", "Easy", "Hard", "Hardest") for b in bots["bots"])
    assert bots["default_opponents"] == ["rm-banker", "rm-raider", "rm-bandit"]


def test_a_chosen_seed_is_practice_and_a_finished_game_has_its_record_and_can_be_dropped():
    """Issue 39: a Rune Market game with a chosen seed is marked practice in its view and
    its record, like every game's; a secret-seed game is not and hides its seed while it
    runs; its record is served once it is over; every game can be ended (DELETE)."""
    c = _client()
    v = c.post("/api/rune-market/games", json={"players": 2, "seat": 0, "seed": 6}).json()
    assert v["practice"] is True and v["seed"] == 6
    secret = c.post("/api/rune-market/games", json={"players": 2, "seat": 0}).json()
    assert secret["practice"] is False and secret["seed"] is None
    hs = {"X-Seat-Token": secret["seat_token"]}
    assert c.delete(f"/api/rune-market/games/{secret['game_id']}", headers=hs).status_code == 204  # a live game
    assert c.get(f"/api/rune-market/games/{secret['game_id']}", headers=hs).status_code == 404
    gid, h = v["game_id"], {"X-Seat-Token": v["seat_token"]}
    assert c.get(f"/api/rune-market/games/{gid}/record", headers=h).status_code == 409  # not before the end
    rng = np.random.default_rng(6)
    while not v["over"]:
        v = _play(c, gid, h, v, 1, rng)
    r = c.get(f"/api/rune-market/games/{gid}/record", headers=h)
    assert r.status_code == 200 and r.headers["content-type"].startswith("application/x-ndjson")
    head = json.loads(r.text.splitlines()[0])
    assert head["game"] == "rune-market" and head["practice"] is True
    assert c.delete(f"/api/rune-market/games/{gid}", headers=h).status_code == 204  # a finished game too
    assert c.get(f"/api/rune-market/games/{gid}/record", headers=h).status_code == 404


def test_the_create_schema_states_what_the_server_accepts():
    """Issue 39: no seat 5 with players omitted (the default is 4 players); the opponents'
    maxItems is that of the player count; the server refuses what the schema refuses."""
    c = _client()
    schema = c.get("/openapi.json").json()["components"]["schemas"]["CreateRuneMarketGame"]
    assert schema["properties"]["opponents"]["maxItems"] == 5
    branches = {b["properties"]["players"]["const"]: b for b in schema["oneOf"]}
    assert "required" not in branches[4] and all(branches[p]["required"] == ["players"] for p in (2, 3, 5, 6))
    assert branches[4]["properties"]["seat"]["maximum"] == 3 and branches[3]["properties"]["opponents"]["maxItems"] == 2
    r = c.post("/api/rune-market/games", json={"seat": 5})
    assert r.status_code == 422 and "seat: 5 is not a seat of a 4-player game" in r.json()["detail"]
    r = c.post("/api/rune-market/games", json={"players": 3, "opponents": ["random"] * 3})
    assert r.status_code == 422 and "3 bots named for 2 other seat(s)" in r.json()["detail"]


def test_a_stored_game_with_impossible_settings_answers_410(tmp_path):
    import sqlite3

    db = tmp_path / "games.sqlite3"
    c1 = TestClient(create_app(db=db), base_url="http://127.0.0.1")
    g = c1.post("/api/rune-market/games", json={"players": 3, "seat": 0, "seed": 1}).json()
    with sqlite3.connect(db) as con:
        con.execute("UPDATE games SET players = 9, seed = '-4' WHERE game_id = ?", (g["game_id"],))
    c2 = TestClient(create_app(db=db), base_url="http://127.0.0.1")
    r = c2.get(f"/api/rune-market/games/{g['game_id']}", headers={"X-Seat-Token": g["seat_token"]})
    assert r.status_code == 410 and "players=9 is not allowed" in r.json()["detail"]


def test_moves_tell_each_bots_move_in_words_and_keep_hidden_cards_hidden():
    """Issue 18: the view's ``moves`` tell what each seat did since your decision, one
    sentence a move (purchases with the cards paid, attacks with their block or not,
    thefts, Bandits, interest); RM-5.2, RM-5.9, RM-8.4: another seat's drawn or stolen
    card is never named to you, a "no block" is explained only to its defender, and a
    bot's single-option move reads like any other."""
    import re

    c = _client()
    seen: list[dict] = []
    for seed in (3, 8):
        v = c.post("/api/rune-market/games", json={"players": 4, "seat": 1, "seed": seed,
                                            "opponents": ["rm-raider", "rm-banker", "rm-bandit"]}).json()
        gid, h = v["game_id"], {"X-Seat-Token": v["seat_token"]}
        rng = np.random.default_rng(seed)
        while True:
            assert set(v["moves"][0]) == {"seat", "who", "kind", "text", "minor"} if v["moves"] else True
            seen += v["moves"]
            if v["over"]:
                break
            v = _play(c, gid, h, v, 1, rng)
    texts = [m["text"] for m in seen]
    bots = [m for m in seen if m["seat"] not in (1, -1)]
    assert all(m["who"] == f"P{m['seat']} ({'rm-raider rm-banker rm-bandit'.split()[[0, 2, 3].index(m['seat'])]})"
               for m in bots)
    assert any(re.search(r"buys a (Red|Blue) Rune with Number \d+( \+ Number \d+)* \(\d+\)$", t) for t in texts)
    assert any(re.search(r"attacks .* with a Number \d+; .* blocks it, showing a Number \d+$", t) for t in texts)
    assert any(re.search(r"attacks .* with a Number \d+; .* does not block, so .* steals ", t) for t in texts)
    assert any(m["kind"] == "theft" and "plays a Theft Card on" in m["text"] for m in bots)
    assert any(m["kind"] == "interest" and "of interest" in m["text"] for m in seen)
    assert any(m["kind"] == "bandit" and "Bandit" in m["text"] for m in bots)
    assert not any("only choice" in t for t in texts)
    card = r"(Number \d+|a Theft Card|a (Red|Blue) Shelter)"
    for t in texts:
        for clause in t.split("; "):  # a named hand card: only yours, or a theft you were part of
            if re.search(rf"(draws|draw) .*{card}", clause):
                assert clause.startswith("you draw"), clause
            if re.search(rf"steals? {card}", clause):
                assert "you" in clause.split(" steal")[0] or clause.endswith("from you"), clause
        if "no card high enough" in t:
            assert "you do not block (no card high enough)" in t, t


def test_status_names_every_games_parts_and_a_game_loads_what_it_needs():
    """Issue 18: ``GET /api/status`` lists the warm-up's parts of the three games (the
    engines and the slow bots: rm-search, rm-ppo-4p, bm-search, bm-ppo-2p); a server made
    without warm-up loads nothing at start, and a new Rune Market or Black Market game
    loads its own engine through the warm-up, so the status counts it ready."""
    c = _client()
    s = c.get("/api/rune-market/status").json()
    parts = {p["name"]: p for p in s["parts"]}
    assert {"ripmarket engine", "rune-market engine", "black-market engine", "rm-search", "rm-ppo-4p", "bm-search",
            "bm-ppo-2p"} <= set(parts)
    assert parts["rm-search"]["what"] == "The Rune Market's rm-search bot" and parts["rm-ppo-4p"]["game"] == "rune-market"
    assert parts["black-market engine"]["what"] == "Black Market's rules engine"
    assert not any(p["ready"] for p in s["parts"]) and s["done"] == 0 and s["total"] == len(s["parts"])
    assert c.post("/api/rune-market/games", json={"players": 2, "seat": 0, "opponents": ["random"]}).status_code == 201
    s = c.get("/api/rune-market/status").json()
    ready = {p["name"] for p in s["parts"] if p["ready"]}
    assert ready == {"rune-market engine"} and s["ready"] and s["done"] == 1
    assert not c.get("/api/rune-market/status", params={"bots": "rm-search"}).json()["ready"]
    assert not c.get("/api/status", params={"game": "black-market"}).json()["ready"]
    assert c.post("/api/black-market/games", json={"players": 2, "seat": 0, "opponents": ["random"]}).status_code == 201
    assert c.get("/api/status", params={"game": "black-market"}).json()["ready"]
    assert c.get("/api/black-market/status").json()["ready"]
    for r in (c.get("/api/status", params={"game": "chess"}), c.get("/api/chess/status")):
        assert r.status_code == 422 and "'ripmarket', 'black-market', 'rune-market'" in r.json()["detail"]  # every game


def test_ripmarket_serve_warms_every_game_up_at_start(monkeypatch, tmp_path):
    """``ripmarket serve`` builds the app with ``warm_up=True`` (so the engines and the slow
    bots of the three games load at start); the server itself is not run here."""
    import uvicorn
    from typer.testing import CliRunner

    import ripmarket_env.app.server.app as server_app
    from ripmarket_env.app.cli import app

    made: list[dict] = []
    monkeypatch.setattr(server_app, "create_app", lambda **kw: made.append(kw) or "the app")
    monkeypatch.setattr(uvicorn, "run", lambda web, **kw: made.append({"ran": web, **kw}))
    r = CliRunner().invoke(app, ["serve", "--port", "0", "--db", str(tmp_path / "s.sqlite3")])
    assert r.exit_code == 0, r.output
    assert made[0]["warm_up"] is True and made[1]["ran"] == "the app" and made[1]["host"] == "127.0.0.1"
    assert made[1]["proxy_headers"] is False  # issue 39: X-Forwarded-For is not believed by default
    made.clear()
    r = CliRunner().invoke(app, ["serve", "--port", "0", "--db", str(tmp_path / "s.sqlite3"),
                                 "--trust-proxy", "10.0.0.5"])
    assert r.exit_code == 0, r.output
    assert made[1]["proxy_headers"] is True and made[1]["forwarded_allow_ips"] == "10.0.0.5"
