"""``ripmarket demo``: the short zoo tournament (a small fast run here) and its errors."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from rich.console import Console
from typer.testing import CliRunner

from ripmarket_env.app.cli import app
from ripmarket_env.app.demo import demo_agents, run_tournament_demo

DEMO_AGENTS = demo_agents("ripmarket")


def test_demo_tournament_prints_the_leaderboard_and_the_report(tmp_path):
    buf = StringIO()
    out = tmp_path / "demo"
    res = run_tournament_demo(out, games=8, players=4, budget=8, workers=1, console=Console(file=buf, width=200),
                              progress=False)
    text = buf.getvalue()
    assert len(res.games) == 8
    for name in DEMO_AGENTS:
        assert name in text
    assert f"report: {out / 'report.md'}" in text
    data = json.loads((out / "results.json").read_text())
    assert data["settings"]["agent_kwargs"] == {"search": {"budget": 8}}
    seats = sum(len(g["lineup"]) for g in res.games)
    assert sum(res.summary["agents"][n]["seat_games"] for n in DEMO_AGENTS) == seats


def test_demo_cli_small_run(tmp_path):
    out = tmp_path / "d"
    r = CliRunner().invoke(app, ["demo", "--games", "4", "--players", "4", "--budget", "4", "--workers", "1", "--out", str(out)])
    assert r.exit_code == 0, r.output
    assert "search" in r.output and str(out / "report.md") in r.output
    assert (out / "report.md").exists()


@pytest.mark.parametrize(
    "args, message",
    [
        (["--players", "11"], "integers from 2 to 10"),
        (["--games", "0"], "integers from 1 to 10000000"),
        (["--games", "99999999999999999999"], "integers from 1 to 10000000"),  # not days of play filling memory
        (["--budget", "0"], "positive integers"),
        (["--workers", "0"], "integers from 1 to 256"),
    ],
)
def test_demo_cli_errors(args, message):
    r = CliRunner().invoke(app, ["demo", *args])
    assert r.exit_code == 2
    assert message in r.output


def test_the_demo_zoo_is_the_games_own():
    assert DEMO_AGENTS == ("random", "greedy", "survivor", "shark", "hoarder", "trickster", "search")
    assert demo_agents("rune-market") == ("random", "rm-banker", "rm-raider", "rm-bandit", "rm-search")
    assert demo_agents("toy") == ("random", "toy-high", "toy-low")


@pytest.mark.parametrize("game,args", [("toy", ["--players", "3"]), ("black-market", ["--players", "2", "--budget", "2"])])
def test_demo_of_another_game(tmp_path, game, args):
    out = tmp_path / game
    r = CliRunner().invoke(app, ["demo", "--game", game, "--games", "4", "--workers", "1", "--out", str(out), *args])
    assert r.exit_code == 0, r.output
    for name in demo_agents(game):
        assert name in r.output
    assert (out / "report.md").exists()
    r = CliRunner().invoke(app, ["demo", "--game", game, "--rounds", "--seeds", "3"])
    assert r.exit_code == 0, r.output
    assert "Round 1" in r.output and "winner" in r.output


def test_demo_refuses_a_table_the_game_has_not():
    r = CliRunner().invoke(app, ["demo", "--game", "black-market", "--players", "3"])
    assert r.exit_code == 2 and "seats 2, 4, 6 players" in r.output


def test_demo_rounds_mode():
    r = CliRunner().invoke(app, ["demo", "--rounds", "--round-players", "4", "--seeds", "2"])
    assert r.exit_code == 0, r.output
    assert "Round 1" in r.output and "winner" in r.output
