"""The Rune Market on the web server (``/api/rune-market/games``, the routes every game has,
loopback test client), played through the one session of every game (``TableSession``, its
view the game's table description): a game played to the end over HTTP with the block
decision handed over at once, the table as a seat may see it, choices that refer to the
table's cards, and bad requests answered with one-line errors that leave the game as it was."""

from __future__ import annotations

import json
import re

import numpy as np
from fastapi.testclient import TestClient

from ripmarket_env.app.server import create_app


def _client():
    return TestClient(create_app(max_games=4), base_url="http://127.0.0.1")


def _choices(v):
    return v["table"]["choices"] if v["your_turn"] else []


def test_a_game_over_http_with_block_decisions():
    """RM-5.7, RM-8.4: the block decision is handed over at once, with at least two
    choices (RM-5.9: one with one option only is taken for you and told in ``recent``);
    your own hand only, its size the one the table shows."""
    c = _client()
    r = c.post("/api/rune-market/games", json={"players": 4, "seat": 0, "seed": 0, "opponents": ["rm-banker", "rm-raider", "rm-bandit"]})
    assert r.status_code == 201, r.text
    v = r.json()
    gid, h = v["game_id"], {"X-Seat-Token": v["seat_token"]}
    assert "seat_token" not in c.get(f"/api/rune-market/games/{gid}", headers=h).json()
    rng = np.random.default_rng(0)
    blocks = forced = 0
    while not v["over"]:
        t = v["table"]
        assert v["your_turn"] and len(t["choices"]) >= 2
        forced += sum(m["text"] == "You let the attack through (your only option)" for m in v["recent"])
        if t["phase"] == "defend":  # RM-5.7: asked during a bot's turn, before anything else happens
            blocks += 1
            assert t["prompt"].startswith("BLOCK?") and " attacks you" in v["recent"][-1]["text"]
            assert t["choices"][-1]["text"] == "Let the attack through (do not block)"
        you = next(s for s in t["seats"] if s["you"])
        assert you["seat"] == 0 and sum(x["count"] for x in t["hand"]) == you["counters"]["hand"]  # your hand only
        c_ = t["choices"][rng.integers(len(t["choices"]))]
        v = c.post(f"/api/rune-market/games/{gid}/actions", headers=h,
                   json={"action": c_["action"], "decision_number": v["decision_number"]}).json()
    assert blocks > 0 and forced > 0 and v["result"]["winners"]
    r = c.post(f"/api/rune-market/games/{gid}/actions", headers=h, json={"action": 0, "decision_number": 0})
    assert r.status_code == 409 and "over" in r.json()["detail"]


def test_bad_requests_change_nothing():
    c = _client()
    v = c.post("/api/rune-market/games", json={"players": 3, "seat": 1, "seed": 5}).json()
    gid, h = v["game_id"], {"X-Seat-Token": v["seat_token"]}
    before = c.get(f"/api/rune-market/games/{gid}", headers=h).json()
    legal = {ch["action"] for ch in _choices(v)}
    bad = next(a for a in range(50) if a not in legal)
    for body, code, needle in (
        ({"action": bad, "decision_number": v["decision_number"]}, 409, "not legal now"),
        ({"action": _choices(v)[0]["action"], "decision_number": v["decision_number"] + 1}, 409, "decision_number"),
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
    page = c.get("/rune-market")
    assert page.status_code == 200 and "/static/generic.js" in page.text  # the one page of every game
    plugin = c.get("/plugins/rune-market.js")
    assert plugin.status_code == 200 and 'RipmarketTable.register("rune-market"' in plugin.text
    assert c.get("/static/rune.js").status_code == 404 and c.get("/static/rune-market.html").status_code == 404
    lobby = c.get("/api/catalog").json()  # the lobby (/) lists the games of the catalog
    assert any(g["id"] == "rune-market" and g["page"] == "/rune-market" for g in lobby["games"]), lobby
    assert c.get(f"/api/rune-market/games/{gid}", headers=h).json() == before


def _play(c, gid, h, v, n, rng):
    """Answer ``n`` decisions with random legal choices; the last view."""
    for _ in range(n):
        ch = _choices(v)[rng.integers(len(_choices(v)))]
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
                    json={"action": _choices(after)[0]["action"], "decision_number": after["decision_number"] - 1})
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
    made = [c1.post("/api/rune-market/games", json={"players": 3, "seat": 0, "seed": s}).json() for s in (1, 2, 3, 4)]
    with sqlite3.connect(db) as con:
        con.execute("UPDATE games SET steps = '[1, 2' WHERE game_id = ?", (made[0]["game_id"],))
        con.execute("UPDATE games SET steps = '[49, 49, 49]' WHERE game_id = ?", (made[1]["game_id"],))
        con.execute("UPDATE games SET rules = ? WHERE game_id = ?", ("[" * 100_000, made[3]["game_id"]))
    c2 = TestClient(create_app(db=db), base_url="http://127.0.0.1")  # starts despite the bad rows
    for g, needle in ((made[0], "unreadable"), (made[1], "could not be brought back"), (made[3], "nested too deeply")):
        r = c2.get(f"/api/rune-market/games/{g['game_id']}", headers={"X-Seat-Token": g["seat_token"]})
        assert r.status_code == 410 and needle in r.json()["detail"] and "POST /api/rune-market/games" in r.json()["detail"], r.text
        r = c2.post(f"/api/rune-market/games/{g['game_id']}/actions", headers={"X-Seat-Token": g["seat_token"]},
                    json={"action": 0, "decision_number": 0})
        assert r.status_code == 410
    good = made[2]
    r = c2.get(f"/api/rune-market/games/{good['game_id']}", headers={"X-Seat-Token": good["seat_token"]})
    assert r.status_code == 200 and r.json()["decision_number"] == good["decision_number"]
    assert c2.post("/api/rune-market/games", json={"players": 2, "seat": 0, "seed": 9}).status_code == 201


def test_the_table_shows_every_public_fact_and_only_your_hand():
    """RM-8.4: the table description names every public fact (every seat's Runes, hand
    size and Shelters, the Market with its card texts); the other hands only by size; your
    hand with each card's text on it; the standings by Runes at the end."""
    c = _client()
    v = c.post("/api/rune-market/games", json={"players": 4, "seat": 2, "seed": 11,
                                                    "opponents": ["rm-banker", "rm-raider", "rm-bandit"]}).json()
    gid, h = v["game_id"], {"X-Seat-Token": v["seat_token"]}
    v = _play(c, gid, h, v, 12, np.random.default_rng(4))
    t = v["table"]
    assert [s["seat"] for s in t["seats"]] == [0, 1, 2, 3] and [s["you"] for s in t["seats"]] == [0, 0, 1, 0]
    assert all(set(s["counters"]) == {"Runes", "hand", "loose"} for s in t["seats"])
    assert sum(x["count"] for x in t["hand"]) == t["seats"][2]["counters"]["hand"]
    assert all(x["text"] and not x["text"].startswith(x["name"]) for x in t["hand"])  # no "Number 1: Number 1"
    zones = {z["name"]: z["cards"] for z in t["table"]}
    assert [c_["slot"] for c_ in zones["Market"]] == [1, 2, 3, 4]
    market = [int(c_["text"].split(" ", 1)[0]) for c_ in zones["Market"]]
    runes_on_tables = sum(s["counters"]["Runes"] for s in t["seats"])
    assert market[0] + market[1] + runes_on_tables == 20  # every Rune is somewhere once
    assert "Red Runes: 1 Rune Point." in zones["Market"][0]["text"] or "Red Rune: 1 Rune Point." in zones["Market"][0]["text"]
    for card in zones["Shelters"]:  # "P1 Red Shelter: 2 Runes inside; ..."
        assert re.match(r"P[0-3] (Red|Blue) Shelter: \d+ Runes? inside", card["text"]), card
    assert v["levels"][1].startswith("Easy") and v["levels"][2] == ""
    while not v["over"]:
        v = _play(c, gid, h, v, 1, np.random.default_rng(5))
    st = v["result"]["standings"]
    assert [e["place"] for e in st] == sorted(e["place"] for e in st) and st[0]["place"] == 1
    assert {e["seat"] for e in st if e["winner"]} == set(v["result"]["winners"])
    runes = [int(e["how"].split(" ", 1)[0]) for e in st]
    assert runes == sorted(runes, reverse=True) and all(re.match(r"\d+ Runes?: (won|lost)", e["how"]) for e in st)
    assert not any(e["how"].startswith("1 Runes") for e in st)


def test_choices_that_name_table_cards_refer_to_them():
    """RM-3.4, RM-4, RM-6: a choice naming a Market card (a Rune, a Boat Shelter, a Bandit)
    or a Shelter on the table carries ``refs`` to that card of the table description, which
    the page shows in view; every ref names a card that is there."""
    c = _client()
    seen = set()
    for seed in (1, 2):
        v = c.post("/api/rune-market/games", json={"players": 4, "seat": 0, "seed": seed, "opponents": ["rm-banker", "rm-raider", "rm-bandit"]}).json()
        gid, h = v["game_id"], {"X-Seat-Token": v["seat_token"]}
        rng = np.random.default_rng(seed)
        while not v["over"]:
            zones = {z["name"]: {c_["slot"]: c_["text"] for c_ in z["cards"]} for z in v["table"]["table"]}
            for ch in _choices(v):
                for ref in ch.get("refs", []):
                    card = zones[ref["zone"]][ref["slot"]]
                    seen.add(ref["zone"])
                    if ch["text"].startswith("Buy a Red Rune"):
                        assert "Red Rune" in card
                    if " Shelter of P" in ch["text"]:  # "The Red Shelter of P2 (...)"
                        colour, seat = re.search(r"The (Red|Blue) Shelter of (P\d)", ch["text"]).groups()
                        assert card.startswith(f"{seat} {colour} Shelter")
                if ch["text"].startswith(("Buy a Red Rune", "Buy a Blue Rune", "Buy a Bandit", "Buy a Boat")):
                    assert ch.get("refs"), ch
            v = _play(c, gid, h, v, 1, rng)
    assert seen == {"Market", "Shelters"}


def test_every_rune_market_bot_has_a_difficulty_label():
    bots = _client().get("/api/rune-market/bots").json()
    import agents

    assert {b["name"] for b in bots["bots"]} == set(agents.names("rune-market"))
    assert all(b["level"].split(":")[0] in ("Beginner", "Easy", "Hard", "Hardest") for b in bots["bots"])
    assert bots["default_opponents"] == ["rm-ppo-search"]  # the trained bot for every table
    c = _client()
    for n in (2, 6):  # a table set up without naming opponents: rm-ppo-search in every other seat
        v = c.post("/api/rune-market/games", json={"players": n, "seat": 0, "seed": 3}).json()
        assert all(level.startswith("Hardest") for level in v["levels"][1:]), v["levels"]


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
    """Issue 18: the view's ``recent`` story lines tell what each seat did since your decision, one
    sentence a move (purchases with the cards paid, attacks with their block or not,
    thefts, Bandits, interest); RM-5.2, RM-5.9, RM-8.4: another seat's drawn or stolen
    card is never named to you, a "no block" is explained only to its defender, and a
    bot's single-option move reads like any other."""

    c = _client()
    seen: list[dict] = []
    for seed in (3, 8):
        v = c.post("/api/rune-market/games", json={"players": 4, "seat": 1, "seed": seed,
                                            "opponents": ["rm-raider", "rm-banker", "rm-bandit"]}).json()
        gid, h = v["game_id"], {"X-Seat-Token": v["seat_token"]}
        rng = np.random.default_rng(seed)
        while True:
            assert all(set(m) == {"turn", "turn_word", "seat", "who", "kind", "text", "minor"} for m in v["recent"])
            seen += v["recent"]
            if v["over"]:
                break
            v = _play(c, gid, h, v, 1, rng)
    texts = [m["text"] for m in seen]
    bots = [m for m in seen if m["seat"] not in (1, -1)]
    assert all(m["who"] == "you" for m in seen if m["seat"] == 1)
    assert all(m["who"] == f"P{m['seat']} ({'rm-raider rm-banker rm-bandit'.split()[[0, 2, 3].index(m['seat'])]})"
               for m in bots)
    assert any(re.search(r"buys a (Red|Blue) Rune with Number \d+( \+ Number \d+)* \(\d+\)$", t) for t in texts)
    # a step at a time: the attack, its victim, then the defender's answer and the theft
    assert any(re.search(r"attacks (with a Number \d+|P\d \(rm-[\w-]+\)|you)$", t) for t in texts)
    assert any(re.search(r"'s attack on .*: .* blocks it, showing a Number \d+$", t) for t in texts)
    assert any(re.search(r"'s attack on .*: .* does not block; .* steals ", t) for t in texts)
    assert any(m["kind"] == "theft" and m["text"].endswith("plays a Theft Card") for m in bots)
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
    engines and the slow bots: rm-search, rm-ppo, bm-search, bm-ppo); a server made
    without warm-up loads nothing at start, and a new Rune Market or Black Market game
    loads its own engine through the warm-up, so the status counts it ready."""
    c = _client()
    s = c.get("/api/rune-market/status").json()
    parts = {p["name"]: p for p in s["parts"]}
    assert {"ripmarket engine", "rune-market engine", "black-market engine", "rm-search", "rm-ppo", "bm-search",
            "bm-ppo"} <= set(parts)
    assert parts["rm-search"]["what"] == "The Rune Market's rm-search bot" and parts["rm-ppo"]["game"] == "rune-market"
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
