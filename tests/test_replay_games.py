"""`ripmarket replay FILE` for every registered game: a seeded game's record replays and
is shown through the game's record hooks (``GameSpec.records``), with no game's fields
read by the command; a corrupted copy fails with one line and exit code 1."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from ripmarket_env.app.cli import app
from ripmarket_env.envs.record import Recorder
from ripmarket_env.games import registry

GAMES = sorted(registry())


def _record(spec, tmp_path, seed=5):
    players = spec.default_players
    rec = Recorder.new(spec.make_rules(players), seed, spec=spec, controllers=["person"] + ["random"] * (players - 1))
    rng = np.random.default_rng(seed)
    while not rec.done:
        rec.step(int(rng.choice(rec.engine.legal_actions(0))))
    return rec.save(tmp_path / f"{spec.id}.jsonl")


@pytest.mark.parametrize("game", GAMES)
def test_replay_shows_and_verifies_every_game(game, tmp_path):
    spec = registry()[game]
    path = _record(spec, tmp_path)
    for args in (["replay", str(path)], ["replay", "--god", str(path)]):
        res = CliRunner().invoke(app, args, terminal_width=100)
        assert res.exit_code == 0, res.output[-2000:]
        assert f"{spec.title} record" in res.output
        assert "Game over" in res.output and "Winner(s):" in res.output
        assert "record verified" in res.output and "game finished" in res.output
        steps = sum(1 for line in path.read_text().splitlines() if '"step"' in line)
        assert f"{steps} decisions" in res.output


@pytest.mark.parametrize("game", GAMES)
def test_a_corrupted_record_fails_with_one_line(game, tmp_path):
    spec = registry()[game]
    path = _record(spec, tmp_path)
    lines = path.read_text().splitlines()
    k = next(i for i, line in enumerate(lines) if '"step"' in line)
    obj = json.loads(lines[k])
    obj["action"] = (obj["action"] + 1) % 10_000  # another action than the one taken
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(lines[:k] + [json.dumps(obj)] + lines[k + 1:]) + "\n")
    res = CliRunner().invoke(app, ["replay", str(bad)], terminal_width=400)
    assert res.exit_code == 1
    err = res.stderr.strip()  # the error, on stderr: one line naming the line
    assert err.startswith("error:") and "\n" not in err and f"line {k + 1}" in err
    assert "Traceback" not in res.output


def _web_sessions():
    """The web page's sessions of every game (what the server saves), each played out."""
    from ripmarket_env.app.session import TableSession

    yield TableSession("ripmarket", 3, 1, ["greedy", "random"], seed=4), lambda s: [c["action"] for c in s.choices()]
    yield (TableSession("black-market", 2, 0, ["bm-rusher"], seed=4, rules={"mode": "teams"}),
           lambda s: [c["action"] for c in s.choices()])
    yield TableSession("rune-market", 3, 2, ["rm-banker"], seed=4), lambda s: [c["action"] for c in s.choices()]


def test_replay_shows_the_web_pages_records_and_the_terminals(tmp_path):
    """The records the server saves (a person's seat, controllers, practice flag) and the
    terminal game's replay for every game."""
    from ripmarket_env.app.session import TableSession

    paths = []
    for k, (s, actions) in enumerate(_web_sessions()):
        while not s.over:
            s.act(actions(s)[-1])
        path = tmp_path / f"web{k}.jsonl"
        path.write_text(s.recorder.dumps())  # what the server stores and serves
        paths.append(path)
    for game in GAMES:
        t = TableSession(game, seed=6)
        while not t.over:
            t.act(t.choices()[0]["action"])
        paths.append(t.save(tmp_path / f"{game}.jsonl"))
    for path in paths:
        res = CliRunner().invoke(app, ["replay", str(path)], terminal_width=100)
        assert res.exit_code == 0, res.output[-2000:]
        assert "person" in res.output and "record verified" in res.output and "game finished" in res.output


def test_the_servers_records_replay_for_every_game(tmp_path):
    """A game played through the JSON API to its end: the record route's file replays and
    verifies with `ripmarket replay`, for every game the server seats."""
    from fastapi.testclient import TestClient

    from ripmarket_env.app.server import create_app

    with TestClient(create_app(max_games=8, max_games_per_client=8), base_url="http://127.0.0.1") as client:
        for game in GAMES:
            bots = [b["name"] for b in client.get(f"/api/{game}/bots").json()["bots"]]
            r = client.post(f"/api/{game}/games", json={"seed": 3, "opponents": ["random" if "random" in bots else bots[0]]})
            assert r.status_code == 201, r.text
            v = r.json()
            token, url = {"X-Seat-Token": v["seat_token"]}, f"/api/{game}/games/{v['game_id']}"
            while not v["over"]:
                choice = v["table"]["choices"][-1]["action"]
                r = client.post(url + "/actions", headers=token,
                                json={"action": choice, "decision_number": v["decision_number"]})
                assert r.status_code == 200, r.text
                v = r.json()
            rec = client.get(url + "/record", headers=token)
            assert rec.status_code == 200, rec.text
            path = tmp_path / f"server-{game}.jsonl"
            path.write_text(rec.text)
            res = CliRunner().invoke(app, ["replay", str(path)], terminal_width=100)
            assert res.exit_code == 0 and "Traceback" not in res.output, (game, res.output[-2000:])
            assert "record verified" in res.output and "game finished" in res.output, (game, res.output[-500:])
