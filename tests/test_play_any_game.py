"""A game registered only here, with no table or story hook and no agents of its own,
gets the terminal game, the session and `ripmarket replay` without code of its own in the
app: the generic table description (its text render, action names, rewards), the generic
story (each event's own words), ``random`` opponents (``agents.default_lineup``)."""

from __future__ import annotations

import dataclasses
import io

import pytest
from rich.console import Console
from typer.testing import CliRunner

import ripmarket_env.games as games_pkg
from ripmarket_env.app.cli import app
from ripmarket_env.app.play import play_terminal
from ripmarket_env.app.session import SetupError, TableSession
from ripmarket_env.games import get

TOY = "toy-market"


@pytest.fixture()
def toy(monkeypatch):
    base = get("rune-market")
    spec = dataclasses.replace(base, id=TOY, title="Toy Market", table=None, story=None, extras={})
    monkeypatch.setitem(games_pkg._LOADERS, TOY, lambda: spec)
    return spec


def test_a_toy_game_plays_through_the_generic_session(toy):
    s = TableSession(TOY, seed=3)
    assert s.controllers == ["you"] + ["random"] * (toy.default_players - 1)
    assert s.level(1) == "Beginner: random moves"
    while not s.over:
        d = s.table()
        assert d["title"] == "Toy Market" and d["info"] and d["prompt"] == "Your decision"
        assert [c["action"] for c in d["choices"]] == s.legal_actions()
        s.act(s.choices()[0]["action"])
    res = s.result()
    assert sorted(r["seat"] for r in res["standings"]) == list(range(s.players))
    assert all(r["how"].startswith("reward ") for r in res["standings"])
    assert any(m["text"] for m in s.moves)
    with pytest.raises(SetupError, match="allowed: an integer from 2 to 6"):
        TableSession(TOY, players=9)
    with pytest.raises(SetupError, match="unknown opponent 'rm-banker'; allowed: random"):
        TableSession(TOY, opponents=["rm-banker"])


def test_a_toy_game_in_the_terminal_and_its_replay(toy, tmp_path):
    buf = io.StringIO()
    con = Console(file=buf, width=100)
    s = play_terminal(TOY, 2, 1, seed=5, input_fn=lambda prompt: "1", console=con, save=tmp_path / "toy.jsonl")
    text = buf.getvalue()
    assert s.over and "Toy Market" in text and "GAME OVER" in text and "Standings" in text
    res = CliRunner().invoke(app, ["replay", str(tmp_path / "toy.jsonl")])
    assert res.exit_code == 0, res.output[-2000:]
    assert "Toy Market record" in res.output and "record verified" in res.output
    r = CliRunner().invoke(app, ["play", "--game", TOY, "--players", "2", "--seed", "2"], input="1\n" * 5000)
    assert r.exit_code == 0, r.output[-2000:]
    assert "Toy Market" in r.output and "Standings" in r.output
    r = CliRunner().invoke(app, ["play", "--game", TOY, "--mode", "teams"])
    assert r.exit_code == 2 and "Toy Market has no rules field 'mode'" in r.output
    r = CliRunner().invoke(app, ["play", "--game", TOY, "--cards", str(tmp_path / "toy.jsonl")])
    assert r.exit_code == 2 and "plays its packaged cards" in r.output
