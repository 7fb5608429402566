"""Black Market through the main tournament runner (``eval.tournament`` + ``eval.arena``):
``ripmarket tournament --game black-market --mode teams|ffa`` with seat rotation over
duplicate deals, team games rated with OpenSkill's team support (BM-1.3: a side is a
team), free-for-all rated as a multiplayer finishing order, the report and plots, and
the same results for the same seed."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

pytest.importorskip("openskill")
pytest.importorskip("matplotlib")

from eval.ratings import head_to_head, rate_games, summarize, team_groups  # noqa: E402
from eval.report import FILES  # noqa: E402
from eval.tournament import run_tournament  # noqa: E402
from ripmarket_env.app.cli import app  # noqa: E402

GAME = "black-market"


def _cli(*args):
    return CliRunner().invoke(app, list(args))


def _strip(games):
    return [{k: v for k, v in g.items() if k != "elapsed"} for g in games]


@pytest.fixture(scope="module")
def teams_result():
    return run_tournament(["bm-rusher", "random"], 4, 48, seed=4, workers=1, progress=False, game=GAME,
                          rules={"mode": "teams"}, chunk_sets=4)


def test_team_tournament_rotates_seats_over_duplicate_deals_and_keeps_teams(teams_result):
    """BM-1.2/BM-1.3: every rotation of a set replays its deal; the rotation keeps each
    team (the entries on seats of one parity) together, and the records carry the sides."""
    res = teams_result
    assert res.settings["teams"] == [0, 1, 0, 1] and res.settings["rules"] == {"mode": "teams"}
    assert len(res.games) == res.settings["games"] == 48
    by = {(g["set"], g["rotation"]): g for g in res.games}
    for s in range(res.settings["duplicate_sets"]):
        rows = [by[(s, r)] for r in range(4)]
        assert len({g["seed"] for g in rows}) == 1
        for r, g in enumerate(rows):
            assert g["lineup"] == list(np.roll(rows[0]["lineup"], r))
            assert g["teams"] == [0, 1, 0, 1]
            base = rows[0]["lineup"]
            same, other = sorted(base[0::2]), sorted(base[1::2])
            assert sorted(g["lineup"][0::2]) == (same if r % 2 == 0 else other)  # the sides swap at odd r
            # a side's seats share their place and their result
            assert g["place"][0] == g["place"][2] and g["place"][1] == g["place"][3]
            assert g["winners"][0] == g["winners"][2] and g["winners"][1] == g["winners"][3]
            assert all(1 <= p <= 2 for p in g["place"]) and g["rounds"] >= 1


def test_a_team_of_a_strong_bot_beats_random(teams_result):
    """Over the tournament, bm-rusher is rated above random, and a side held by two
    bm-rusher seats beats a side of two random seats in nearly every game."""
    res = teams_result
    a = res.summary["agents"]
    assert res.summary["leaderboard"] == ["bm-rusher", "random"]
    assert a["bm-rusher"]["mu"] > 25.0 > a["random"]["mu"]
    assert a["bm-rusher"]["win_rate_lo"] > 0.5 > a["random"]["win_rate_hi"]
    pure = [g for g in res.games if len(set(g["lineup"][0::2])) == 1 and len(set(g["lineup"][1::2])) == 1
            and g["lineup"][0] != g["lineup"][1]]
    assert pure, "the schedule drew no rusher-side against random-side table"
    wins = sum(g["winners"][g["lineup"].index("bm-rusher")] for g in pure)
    assert wins >= 0.9 * len(pure)


def _team_game(lineup, winning_side, teams=(0, 1, 0, 1)):
    place = [1 if t == winning_side else 2 for t in teams]
    return {"lineup": list(lineup), "place": place, "placement": [float(p) for p in place],
            "winners": [p == 1 for p in place], "teams": list(teams), "rewards": [0.0] * len(lineup),
            "rounds": 3, "steps": 10}


def test_team_games_are_rated_with_openskill_team_support():
    """A game with sides is one OpenSkill result between two teams: the teams' members are
    the seats of each side, so it equals ``model.rate([[a, b], [c, d]])`` exactly."""
    from openskill.models import PlackettLuce

    m = PlackettLuce()
    expect = m.rate([[m.rating(), m.rating()], [m.rating(), m.rating()]], ranks=[1, 2])
    r = rate_games([_team_game(["a", "c", "b", "d"], 0)], list("abcd"))
    for n, member in zip("abcd", expect[0] + expect[1]):
        assert r[n]["mu"] == pytest.approx(member.mu) and r[n]["sigma"] == pytest.approx(member.sigma)
    # teammates move together: both winners up by the same amount, both losers down
    assert r["a"]["mu"] == pytest.approx(r["b"]["mu"]) and r["a"]["mu"] > 25 > r["c"]["mu"]
    # the same game rated seat by seat (no sides) is a different, four-way result
    seatwise = rate_games([{k: v for k, v in _team_game(["a", "c", "b", "d"], 0).items() if k != "teams"}],
                          list("abcd"))
    assert seatwise["a"]["mu"] != pytest.approx(r["a"]["mu"])


def test_one_agent_holding_a_side_is_rated_as_that_team():
    """A side held by one agent's two seats is a team of two entrants at its rating: the
    team of ``a`` winning every game moves ``a`` up and ``b`` down; teammates are never
    compared in the head-to-head."""
    games = [_team_game(["a", "b", "a", "b"], 0) for _ in range(10)]
    r = rate_games(games, ["a", "b"])
    assert r["a"]["mu"] > 25 > r["b"]["mu"] and r["a"]["ordinal"] > r["b"]["ordinal"]
    assert team_groups(games[0]) == [[0, 2], [1, 3]]
    mixed = [_team_game(["a", "b", "b", "a"], 0)]  # a and b on both sides: a tie between them
    prob, pairs = head_to_head(mixed, ["a", "b"])
    assert pairs[0, 1] == 2 and prob[0, 1] == pytest.approx(0.5)
    assert summarize(games, ["a", "b"])["shared_win_games"] == 0  # a side's two winners are one win


def test_ffa_is_rated_as_a_multiplayer_finishing_order():
    """Free-for-all: no sides; the winner is first and the other seats are placed by
    their points (BM-10.2's order), so the places of a game span more than two ranks."""
    res = run_tournament(["bm-builder", "bm-denier", "random"], 4, 24, seed=2, workers=1, progress=False,
                         game=GAME, rules={"mode": "ffa"}, chunk_sets=3)
    assert "teams" not in res.settings and all("teams" not in g for g in res.games)
    assert all(sum(g["winners"]) >= 1 and g["place"][g["winners"].index(True)] == 1 for g in res.games)
    assert any(len(set(g["place"])) > 2 for g in res.games)
    assert res.summary["agents"]["random"]["mean_placement"] > res.summary["agents"]["bm-builder"]["mean_placement"]


def test_same_seed_same_results_whatever_the_workers(teams_result):
    again = run_tournament(["bm-rusher", "random"], 4, 48, seed=4, workers=2, progress=False, game=GAME,
                           rules={"mode": "teams"}, chunk_sets=4)
    assert _strip(again.games) == _strip(teams_result.games)
    assert again.summary == teams_result.summary
    other = run_tournament(["bm-rusher", "random"], 4, 48, seed=5, workers=1, progress=False, game=GAME,
                           rules={"mode": "teams"}, chunk_sets=4)
    assert [g["seed"] for g in other.games] != [g["seed"] for g in teams_result.games]


@pytest.mark.parametrize("mode", ["teams", "ffa"])
def test_tournament_cli_black_market(tmp_path, mode):
    out = tmp_path / mode
    r = _cli("tournament", "--game", GAME, "--mode", mode, "--players", "4", "--agents", "random,bm-rusher",
             "--games", "8", "--seed", "3", "--workers", "1", "--quiet", "--out", str(out))
    assert r.exit_code == 0, r.output
    for name in FILES:
        assert (out / name).is_file(), name
    text = (out / "report.md").read_text()
    assert "Black Market (`black-market`)" in text and "| 1 | bm-rusher |" in text
    assert ("team support" in text and "seats 0, 2 against seats 1, 3" in text) == (mode == "teams")
    figures = json.loads((out / "results.json").read_text())
    assert figures["settings"]["rules"] == {"mode": mode} and figures["settings"]["game"] == GAME


def test_tournament_cli_black_market_errors_are_one_line():
    for args, needle in (
        (("--players", "3", "--agents", "random,bm-rusher"), "2, 4 or 6"),
        (("--players", "4", "--mode", "duo", "--agents", "random"), "allowed: teams, ffa"),
        (("--players", "4", "--agents", "greedy"), "allowed: "),
    ):
        r = _cli("tournament", "--game", GAME, *args)
        assert r.exit_code == 2 and needle in r.output and len(r.output.strip().splitlines()) == 1, r.output
    r = _cli("tournament", "--game", "rune-market", "--mode", "teams", "--agents", "random")
    assert r.exit_code == 2 and "--mode: The Rune Market has no modes" in r.output
    with pytest.raises(ValueError, match="one of 2, 4, 6"):
        run_tournament(["random"], 5, 4, seed=1, workers=1, progress=False, game=GAME)
