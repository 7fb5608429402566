"""``ripmarket balance --game rune-market``: first-seat advantage, game length, card kinds,
Bandits and thefts from a tournament of the game's bots, each figure with its interval."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

pytest.importorskip("openskill")

from eval.balance import run_balance  # noqa: E402
from ripmarket_env.games.runemarket.balance import KINDS, analyze  # noqa: E402
from ripmarket_env.app.cli import app  # noqa: E402


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    out = tmp_path_factory.mktemp("rm_balance")
    return run_balance(["rm-banker", "rm-raider", "rm-bandit"], [2, 4], 16, seed=4, workers=1, progress=False,
                       out=out, game="rune-market"), out


def test_figures_have_intervals_and_add_up(small):
    res, out = small
    assert [a["players"] for a in res["by_players"]] == [2, 4]
    for P, a in zip((2, 4), res["by_players"]):
        assert a["games"] == 16 and a["first_seat"]["parity"] == 1 / P
        fs = a["first_seat"]["win"]
        assert fs["ci95"][0] <= fs["rate"] <= fs["ci95"][1]
        assert len(a["first_seat"]["by_position"]) == P
        assert a["first_seat"]["by_position"][0]["rate"] == fs["rate"]  # position 0 is the first player
        t = a["length"]["turns"]
        assert t["ci95"][0] <= t["mean"] <= t["ci95"][1] and t["min"] >= P  # every seat had a turn
        assert a["length"]["at_turn_cap"] == 0
        assert set(a["kinds"]) == set(KINDS)
        assert a["kinds"]["rune_bought"]["per_game"] > 0  # every game ends by buying the Market empty
        assert a["thefts"]["runes_stolen_per_game"]["mean"] >= 0
        # the generic figures every game's report has
        assert len(a["seat_win"]) == P and set(a["by_agent"]) == {"rm-banker", "rm-raider", "rm-bandit"}
        assert sum(x["player_games"] for x in a["by_agent"].values()) == 16 * P
        assert a["position_win"][0]["wins"] <= a["first_seat"]["win"]["rate"] * 16 + 1e-9  # shared wins count 1/k
    assert json.loads((out / "balance.json").read_text())["settings"]["game"] == "rune-market"
    text = (out / "balance.md").read_text()
    assert "first player's win rate" in text and "Bandit placed" in text and "| rm-banker |" in text


def test_analysis_counts_what_happened():
    """A hand-made pair of games: the first player won one of two; seat 1 stole a Rune in
    the game it won."""
    base = {"kinds": [[0] * len(KINDS)] * 2, "bandit_on": [0, 0], "diverted": [0, 0], "turns": 10, "rounds": 5,
            "steps": 40, "end_reason": 0}
    games = [{**base, "winners": [True, False], "first_player": 0, "stolen": [0, 0], "lost": [0, 0]},
             {**base, "winners": [True, False], "first_player": 1, "stolen": [1, 0], "lost": [0, 1]}]
    a = analyze(games, 2)
    assert a["first_seat"]["win"]["rate"] == 0.5
    assert a["thefts"]["stole_a_rune"]["with"]["rate"] == 1.0
    assert a["thefts"]["stole_a_rune"]["without"]["rate"] == pytest.approx(1 / 3)
    assert a["thefts"]["lost_a_rune"]["with"]["rate"] == 0.0
    assert np.isnan(a["kinds"]["attack"]["difference"]["diff"])  # nobody attacked: no comparison


def test_cli_balance_rune_market(tmp_path):
    r = CliRunner().invoke(app, ["balance", "--game", "rune-market", "--players", "3", "--games", "6",
                                 "--workers", "1", "--quiet", "--out", str(tmp_path / "b")])
    assert r.exit_code == 0, r.output
    assert "Balance overview: The Rune Market" in r.output and "rm-raider" in r.output
    assert "## 3 players" in (tmp_path / "b" / "balance.md").read_text()
    for args, needle in ((("--players", "8"), "2 to 6"), (("--agents", "greedy"), "unknown agent 'greedy'"),
                         (("--cards", "x.json"), "The Rune Market plays only its packaged cards (no --cards")):
        r = CliRunner().invoke(app, ["balance", "--game", "rune-market", *args])
        assert r.exit_code == 2 and needle in r.output and len(r.output.strip().splitlines()) == 1, r.output
