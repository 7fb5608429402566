"""Balance analysis: the recorded plays, the figures' consistency, the report files and CLI errors."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from eval.balance import PlayRecorder, analyze, run_balance, validate_balance
from ripmarket_env.games.ripmarket.cards.loader import default_cards
from ripmarket_env.app.cli import app
from ripmarket_env.games.ripmarket import Engine, RulesConfig
from ripmarket_env.games.ripmarket.state import PH_PLAY


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    out = tmp_path_factory.mktemp("balance")
    res = run_balance(["greedy", "survivor", "random"], [3, 4], games=24, seed=3, workers=1, out=out, progress=False)
    return res, out


def test_recorder_matches_the_hand_that_played():
    """Every recorded Living play is a card that left the actor's hand in that step, and
    every play decision that removed cards from the hand is recorded."""
    rng = np.random.default_rng(0)
    eng = Engine(RulesConfig(num_players=4), batch_size=3)
    eng.reset([11, 12, 13])
    rec = PlayRecorder(eng)
    checked = 0
    while not eng.terminated.all():
        actor = eng.current_player()
        mask = eng.legal_mask()
        acts = np.array([rng.choice(np.flatnonzero(mask[g])) if actor[g] >= 0 else -1 for g in range(3)])
        before = eng.state["hand"].copy()
        phase = eng.state["phase"].copy()
        counts = [[len(x) for x in rec.living[g]] for g in range(3)]
        rec.before_step(eng, actor, acts)
        eng.step(acts)
        for g in range(3):
            p = actor[g]
            added = [len(x) for x in rec.living[g]]
            added = [a - b for a, b in zip(added, counts[g])]
            if p < 0:
                assert not any(added)
                continue
            lost = before[g, p] - eng.state["hand"][g, p]
            if phase[g] == PH_PLAY and (lost > 0).any():
                assert added == [int(q == p) for q in range(4)]
                assert lost[rec.living[g][p][-1]] > 0
                checked += 1
            else:
                assert not any(added)
    assert checked > 10
    assert sum(len(x) for g in range(3) for x in rec.game_record(eng, g)["living_plays"]) == checked


def test_counts_are_consistent(small):
    res, _ = small
    assert [f["players"] for f in res["by_players"]] == [3, 4]
    for f in res["by_players"]:
        P, G = f["players"], f["games"]
        assert G >= 24 and G % P == 0
        assert sum(c["plays"] for c in f["living"]) == f["living_plays"] > 0
        assert sum(c["plays"] for c in f["shadow"]) == f["shadow_plays"]
        assert sum(c["play_share"] for c in f["living"]) == pytest.approx(1.0)
        # every Shadow card played haunts exactly one player
        assert sum(c["haunted_player_games"] for c in f["shadow"]) <= f["shadow_plays"]
        # wins by first-round position and by seat both count every winner once
        assert sum(w["wins"] for w in f["position_win"]) == f["wins"] == sum(w["wins"] for w in f["seat_win"])
        assert f["games_with_winner"] <= G and f["wins"] >= f["games_with_winner"]
        for c in f["living"]:
            assert c["win_played"]["n"] + c["win_not_played"]["n"] == G * P
            assert c["win_played"]["wins"] + c["win_not_played"]["wins"] == f["wins"]
            lo, hi = c["win_played"]["ci"]
            assert 0.0 <= lo <= hi <= 1.0
        assert sum(f["rounds"]["histogram"].values()) == G
        assert f["rounds"]["min"] <= f["rounds"]["mean"] <= f["rounds"]["max"]
        assert 0 <= f["ghost_swings"]["games_with_swing"] <= G
        assert f["ghost_swings"]["swings"] <= f["ghost_swings"]["rounds"]


def test_analyze_counts_a_handmade_game():
    cards = default_cards()
    game = {
        "winners": [True, False, False],
        "rounds": 3,
        "first_player": 2,
        "shadow_swings": 1,
        "living_plays": [[0, 0, 1], [1], []],
        "shadow_plays": [[], [], [0]],
        "haunted": [[0], [], []],
    }
    f = analyze([game], 3, cards)
    assert f["living"][0]["plays"] == 2 and f["living"][1]["plays"] == 2
    assert f["living"][0]["win_played"]["wins"] == 1 and f["living"][0]["win_played"]["n"] == 1
    assert f["living"][1]["win_played"]["n"] == 2 and f["living"][1]["win_not_played"]["n"] == 1
    assert f["shadow"][0]["win_haunted"]["wins"] == 1
    assert [w["wins"] for w in f["position_win"]] == [0, 1, 0]  # seat 0 is one seat after the First Player
    assert f["ghost_swings"]["per_round"] == pytest.approx(1 / 3)


def test_report_files(small):
    res, out = small
    for name in ("balance.md", "balance.json", "game_length.png", "seat_position.png", "cards_3p.png", "cards_4p.png"):
        assert (out / name).stat().st_size > 0
    data = json.loads((out / "balance.json").read_text())
    assert data["by_players"][1]["living_plays"] == res["by_players"][1]["living_plays"]
    md = (out / "balance.md").read_text()
    assert "## 4 players" in md and default_cards().living[0].name in md


def test_reproducible_from_the_seed(small):
    res, _ = small
    again = run_balance(["greedy", "survivor", "random"], [3], games=24, seed=3, workers=1, progress=False)
    a, b = again["by_players"][0], res["by_players"][0]
    assert [c["plays"] for c in a["living"]] == [c["plays"] for c in b["living"]]
    assert a["rounds"] == b["rounds"]


def test_bad_arguments():
    with pytest.raises(ValueError, match="from 2 to 10"):
        validate_balance(["greedy"], [4, 11], 10)
    with pytest.raises(ValueError, match="twice"):
        validate_balance(["greedy"], [4, 4], 10)
    with pytest.raises(ValueError, match="unknown agent"):
        validate_balance(["nobody"], [4], 10)
    with pytest.raises(ValueError, match="positive"):
        validate_balance(["greedy"], [4], 0)


@pytest.mark.parametrize(
    "args, message",
    [
        (["--players", "4,11"], "integers from 2 to 10"),
        (["--players", "six"], "integers from 2 to 10"),
        (["--players", "4,4"], "twice"),
        (["--games", "0"], "positive integers"),
        (["--agents", "greedy,nobody"], "unknown agent 'nobody'"),
        (["--seed", "-1"], "non-negative"),
        (["--workers", "0"], "positive integers"),
    ],
)
def test_cli_errors(args, message):
    r = CliRunner().invoke(app, ["balance", *args])
    assert r.exit_code == 2
    assert message in r.output


def test_cli_writes_the_report(tmp_path):
    out = tmp_path / "b"
    r = CliRunner().invoke(
        app, ["balance", "--players", "3", "--games", "6", "--agents", "greedy,random", "--workers", "1", "--quiet", "--out", str(out)]
    )
    assert r.exit_code == 0, r.output
    assert "Balance overview" in r.output and str(out / "balance.md") in r.output
    assert (out / "balance.md").exists()
