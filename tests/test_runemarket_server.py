"""The Rune Market on the web server (``/api/rune/games``, loopback test client): a game
played to the end over HTTP with the block decision handed over at once, and bad
requests answered with one-line errors that leave the game as it was."""

from __future__ import annotations

import numpy as np
from fastapi.testclient import TestClient

from ripmarket_env.app.server import create_app


def _client():
    return TestClient(create_app(max_games=4), base_url="http://127.0.0.1")


def test_a_game_over_http_with_block_decisions():
    c = _client()
    r = c.post("/api/rune/games", json={"players": 4, "seat": 0, "seed": 0})
    assert r.status_code == 201, r.text
    v = r.json()
    gid, h = v["game_id"], {"X-Seat-Token": v["seat_token"]}
    assert "seat_token" not in c.get(f"/api/rune/games/{gid}", headers=h).json()
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
        v = c.post(f"/api/rune/games/{gid}/actions", headers=h,
                   json={"action": c_["action"], "decision_number": v["decision_number"]}).json()
    assert blocks > 0 and v["result"]["winners"]
    r = c.post(f"/api/rune/games/{gid}/actions", headers=h, json={"action": 0, "decision_number": 0})
    assert r.status_code == 409 and "over" in r.json()["detail"]


def test_bad_requests_change_nothing():
    c = _client()
    v = c.post("/api/rune/games", json={"players": 3, "seat": 1, "seed": 5}).json()
    gid, h = v["game_id"], {"X-Seat-Token": v["seat_token"]}
    before = c.get(f"/api/rune/games/{gid}", headers=h).json()
    legal = {ch["action"] for ch in v["choices"]}
    bad = next(a for a in range(50) if a not in legal)
    for body, code, needle in (
        ({"action": bad, "decision_number": v["decision_number"]}, 409, "not legal now"),
        ({"action": v["choices"][0]["action"], "decision_number": v["decision_number"] + 1}, 409, "decision_number"),
        ({"action": "x", "decision_number": 0}, 422, ""),
    ):
        r = c.post(f"/api/rune/games/{gid}/actions", headers=h, json=body)
        assert r.status_code == code, r.text
        assert needle in r.json()["detail"] if needle else "detail" in r.json()
    assert c.get(f"/api/rune/games/{gid}", headers=h).json() == before
    assert c.get(f"/api/rune/games/{gid}", headers={"X-Seat-Token": "nope"}).status_code == 403
    assert c.get("/api/rune/games/none", headers=h).status_code == 404
    r = c.post("/api/rune/games", json={"players": 4, "seat": 0, "opponents": ["greedy"]})
    assert r.status_code == 422 and "unknown bot 'greedy'" in r.json()["detail"]
    r = c.post("/api/rune/games", json={"players": 3, "seat": 4})
    assert r.status_code == 422 and "seat" in r.json()["detail"]
    assert c.get("/rune").status_code == 200 and "The Rune Market" in c.get("/rune").text
    assert 'href="/rune"' in c.get("/").text  # the game is picked at set-up
