"""Black Market on the web server (``/api/black-market/games``, the routes every game has; loopback test client): whole
games over HTTP in both modes, what each seat may see (BM-7), bad requests answered with
one-line errors that leave the game as it was, the server's limits, and games that outlive
a restart of the server (the SQLite store)."""

from __future__ import annotations

import json
import random
import re

import pytest
from fastapi.testclient import TestClient

from ripmarket_env.app.server import create_app

DRAW = re.compile(r"player (\d) (?:draws|is dealt) a (?:Red|Black|Flip) card")
HEIST = re.compile(r"player (\d) takes (\d) card\(s\) from player (\d)(: [A-Za-z, ]+)?")


class Clock:
    def __init__(self, t: float = 1_000.0):
        self.t = t

    def __call__(self) -> float:
        return self.t


def _client(**kw) -> TestClient:
    kw.setdefault("max_games", 4)
    return TestClient(create_app(**kw), base_url="http://127.0.0.1")


def _new(c, **body):
    if "mode" in body:  # a variant of the rules config (BM-1.3, BM-1.4)
        body["rules"] = {"mode": body.pop("mode")}
    r = c.post("/api/black-market/games", json=body)
    assert r.status_code == 201, r.text
    v = r.json()
    return v, v["game_id"], {"X-Seat-Token": v["seat_token"]}


def _answer(c, gid, h, v, rng):
    ch = v["choices"][0] if len(v["choices"]) == 1 else rng.choice(v["choices"])  # one option: no draw
    r = c.post(f"/api/black-market/games/{gid}/actions", headers=h,
               json={"action": ch["action"], "decision_number": v["decision_number"]})
    assert r.status_code == 200, r.text
    return r.json()


def _texts(v) -> list[str]:
    return [t for m in v["recent"] for t in m["events"]]


def _play_out(c, gid, h, v, seed):
    """Random choices to the end; every event text the seat was shown."""
    rng = random.Random(seed)
    seen = _texts(v)
    while not v["over"]:
        # BM-12.3: a decision with one option is the engine's unless only the hand made it single
        assert v["your_turn"] and len(v["choices"]) >= 1
        assert [c_["number"] for c_ in v["choices"]] == list(range(1, len(v["choices"]) + 1))
        assert v["prompt"]
        v = _answer(c, gid, h, v, rng)
        seen += _texts(v)
    return v, seen


@pytest.mark.parametrize("players,mode,seat", [(4, "teams", 1), (2, "ffa", 0)])
def test_a_whole_game_over_http(players, mode, seat):
    c = _client()
    v, gid, h = _new(c, players=players, mode=mode, seat=seat, seed=3)
    assert v["players"] == players and v["mode"] == mode and v["seat"] == seat and v["practice"] is True
    assert len(v["map"]) == 6 and all(m["faces"] in "AB" for m in v["map"])  # BM-2.1: six slots
    assert [s["side"] for s in v["seats"]] == ["AB"[q % 2] for q in range(players)]  # BM-1.2
    assert all(s["level"] for s in v["seats"] if not s["is_you"])  # every bot has a difficulty label
    assert "seat_token" not in c.get(f"/api/black-market/games/{gid}", headers=h).json()
    assert c.get(f"/api/black-market/games/{gid}/record", headers=h).status_code == 409  # not before the end
    v, _ = _play_out(c, gid, h, v, 3)
    res = v["result"]
    assert res["winners"] and len(res["standings"]) == players and v["choices"] == []
    if mode == "teams":  # BM-1.3: a side wins together
        assert {q % 2 for q in res["winners"]} == {res["winners"][0] % 2}
        assert max(res["sides"].values()) >= v["target"]
    else:  # BM-1.4: a player's own points
        assert max(s["points"] for s in res["standings"]) >= v["target"]
    r = c.get(f"/api/black-market/games/{gid}/record", headers=h)
    assert r.status_code == 200 and r.headers["content-type"].startswith("application/x-ndjson")
    head = json.loads(r.text.splitlines()[0])
    assert head["game"] == "black-market" and head["controllers"][seat] == "person"
    assert c.get(f"/api/black-market/games/{gid}", headers=h).json() == v  # the final view is kept
    r = c.post(f"/api/black-market/games/{gid}/actions", headers=h, json={"action": 0, "decision_number": 0})
    assert r.status_code == 409 and "over" in r.json()["detail"]


def test_hidden_hands_and_heists_per_seat():
    """BM-7.1, BM-7.3: a drawn card is named to its drawer only; a Heist's cards to the thief
    and the victim only. Seed 0 has a Heist between two bots, seed 13 one on the person."""
    c = _client()
    for seed, you_in_heist in ((0, False), (13, True)):
        v, gid, h = _new(c, players=4, mode="ffa", seat=0, seed=seed,
                         opponents=["bm-builder", "bm-denier", "bm-rusher"])
        assert set(v["hand"]) == {"red", "black", "flip"}  # your hand by kind; others by size only
        assert all("hand" not in s for s in v["seats"]) and all("hand_count" in s for s in v["seats"])
        v, seen = _play_out(c, gid, h, v, seed)
        draws = [int(m.group(1)) for t in seen for m in DRAW.finditer(t)]
        assert draws and set(draws) == {0}
        heists = [m for t in seen for m in HEIST.finditer(t)]
        assert heists, f"seed {seed}: no Heist was played"
        for m in heists:
            thief, victim, named = int(m.group(1)), int(m.group(3)), m.group(4)
            assert (named is not None) == (0 in (thief, victim))
        assert any(0 in (int(m.group(1)), int(m.group(3))) for m in heists) == you_in_heist
        c.delete(f"/api/black-market/games/{gid}", headers=h)


def test_bad_requests_change_nothing():
    c = _client()
    v, gid, h = _new(c, players=4, seat=2, seed=5)
    url = f"/api/black-market/games/{gid}"
    before = c.get(url, headers=h).json()
    legal = {ch["action"] for ch in v["choices"]}
    bad = next(a for a in range(69) if a not in legal)
    for body, code, needle in (
        ({"action": bad, "decision_number": v["decision_number"]}, 409, "not legal now"),  # BM-12.4
        ({"action": 99_999, "decision_number": v["decision_number"]}, 422, "action"),
        ({"action": 69, "decision_number": v["decision_number"]}, 422, "out of range (actions are 0 to 68)"),
        ({"action": v["choices"][0]["action"], "decision_number": v["decision_number"] + 1}, 409, "decision_number"),
        ({"action": "x", "decision_number": 0}, 422, "action"),
        ({"action": True, "decision_number": 0}, 422, "boolean"),
        ({"action": 1, "decision_number": 0, "more": 1}, 422, "unknown field"),
        ({"action": 1}, 422, "decision_number: required"),
    ):
        r = c.post(url + "/actions", headers=h, json=body)
        assert r.status_code == code, (body, r.text)
        detail = r.json()["detail"]
        assert needle in detail and "\n" not in detail
    assert c.get(url, headers=h).json() == before
    assert c.get(url, headers={"X-Seat-Token": "nope"}).status_code == 403
    assert c.get(url).status_code == 422
    assert c.get(url + "?token=abc", headers=h).status_code == 400
    r = c.get("/api/black-market/games/none", headers=h)
    assert r.status_code == 404 and "no Black Market game" in r.json()["detail"]
    for body, needle in (
        ({"players": 3}, "allowed: 2, 4, 6"),  # BM-1.1
        ({"players": 4, "seat": 4}, "seat: 4 is not a seat"),
        ({"players": 4, "rules": {"mode": "solo"}}, "'teams' or 'ffa'"),
        ({"players": 4, "opponents": ["greedy"]}, "unknown bot 'greedy'"),
        ({"players": 2, "opponents": ["random", "random"]}, "2 bots named for 1 other seat"),
        ({"players": 4, "opponents": []}, "opponents"),
        ({"players": 4, "seed": -1}, "seed"),
        ({"players": 4, "mode": "ffa"}, "unknown field"),  # a variant goes in rules
        ({"players": 4, "rules": {"target_points": 9}}, "unknown field"),  # not offered at setup
    ):
        r = c.post("/api/black-market/games", json=body)
        assert r.status_code == 422, (body, r.text)
        assert needle in r.json()["detail"] and "\n" not in r.json()["detail"], r.text
    assert c.get(url, headers=h).json() == before
    comp = c.get("/openapi.json").json()["components"]["schemas"]
    schema = comp["CreateBlackMarketGame"]
    assert schema["properties"]["players"]["enum"] == [2, 4, 6]
    assert comp["BlackMarketRules"]["properties"]["mode"]["anyOf"][0]["enum"] == ["teams", "ffa"]
    assert "bm-denier" in schema["properties"]["opponents"]["items"]["enum"]
    assert [b["properties"]["seat"]["maximum"] for b in schema["oneOf"]] == [1, 3, 5]
    assert "Black Market" in c.get("/black-market").text
    assert 'href="/black-market"' in c.get("/").text  # the game is picked at set-up
    bots = c.get("/api/black-market/bots").json()["bots"]
    assert {b["name"] for b in bots} >= {"random", "bm-rusher", "bm-denier", "bm-builder"}
    assert all(b["level"] and b["level"] != "Unrated" for b in bots)


def test_limits_and_expiry():
    clock = Clock()
    c = _client(max_games=2, max_games_per_client=1, idle_seconds=60, clock=clock)
    v, gid, h = _new(c, players=2, seed=1)
    r = c.post("/api/black-market/games", json={"players": 2})
    assert r.status_code == 429 and int(r.headers["Retry-After"]) >= 1
    assert "you already have 1 live games" in r.json()["detail"]
    clock.t += 30
    assert c.get(f"/api/black-market/games/{gid}", headers=h).status_code == 200  # reading keeps nothing alive
    clock.t += 31
    r = c.get(f"/api/black-market/games/{gid}", headers=h)
    assert r.status_code == 410 and "no decision was answered" in r.json()["detail"]
    v2, gid2, h2 = _new(c, players=2, seed=2)  # the slot is free again
    r = c.post(f"/api/black-market/games/{gid}/actions", headers=h, json={"action": 0, "decision_number": 0})
    assert r.status_code == 410
    assert c.delete(f"/api/black-market/games/{gid2}", headers=h2).status_code == 204
    assert c.get(f"/api/black-market/games/{gid2}", headers=h2).status_code == 404


def test_a_restart_keeps_live_and_finished_games(tmp_path):
    db = tmp_path / "games.sqlite3"
    c = _client(db=db)
    v, gid, h = _new(c, players=4, mode="teams", seat=0, seed=11)
    rng = random.Random(11)
    for _ in range(2):
        v = _answer(c, gid, h, v, rng)
    c.close()

    c2 = _client(db=db)  # a new server on the same file
    again = c2.get(f"/api/black-market/games/{gid}", headers=h)
    assert again.status_code == 200, again.text
    w = again.json()
    for key in ("decision_number", "choices", "map", "hand", "seats", "dice", "sides", "prompt"):
        assert w[key] == v[key], key
    assert c2.get(f"/api/black-market/games/{gid}", headers={"X-Seat-Token": "x"}).status_code == 403
    w, _ = _play_out(c2, gid, h, w, 12)
    c2.close()

    c3 = _client(db=db)
    assert c3.get(f"/api/black-market/games/{gid}", headers=h).json() == w
    r = c3.get(f"/api/black-market/games/{gid}/record", headers=h)
    assert r.status_code == 200 and '"game": "black-market"' in r.text.splitlines()[0]
    assert c3.get("/api/games/" + gid, headers=h).status_code == 404  # R.I.P. Market's games are apart


def test_session_replays_its_steps_and_refuses_bad_ones():
    """The session the server stores: ``steps`` rebuild a game exactly (no bot asked again);
    a step that is not legal is refused naming it; an illegal action changes nothing (BM-12.4)."""
    from ripmarket_env.app.play_bm import BlackMarketSession, NotYourTurnError, SetupError
    from ripmarket_env.core.engine import IllegalActionError

    s = BlackMarketSession(6, 3, "teams", ["bm-denier", "random"], seed=21)
    assert s.controllers == ["bm-denier", "random", "bm-denier", "you", "random", "bm-denier"]
    rng = random.Random(21)
    for _ in range(3):
        s.act(rng.choice(s.choices()).action)
    again = BlackMarketSession(6, 3, "teams", ["bm-denier", "random"], seed=21, steps=s.steps)
    assert again.view() == s.view() and again.steps == s.steps
    with pytest.raises(SetupError, match=r"steps\[1\]=999 is not a legal action"):
        BlackMarketSession(6, 3, "teams", ["bm-denier"], seed=21, steps=[s.steps[0], 999])
    before = s.view()
    illegal = next(a for a in range(69) if a not in s.legal_actions())
    with pytest.raises(IllegalActionError):
        s.act(illegal)
    assert s.view() == before
    s.seat = (s.seat + 1) % 6  # another seat decides now
    with pytest.raises(NotYourTurnError):
        s.act(s.legal_actions()[0])
