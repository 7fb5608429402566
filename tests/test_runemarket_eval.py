"""The Rune Market through the arena: ``ripmarket tournament/evaluate/bench --game
rune-market`` (seat rotation, duplicate deals, match play with the previous winner
starting, OpenSkill ratings and the report), and their one-line errors."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

pytest.importorskip("openskill")
pytest.importorskip("matplotlib")

from eval.report import FILES  # noqa: E402
from eval.tournament import run_tournament  # noqa: E402
from ripmarket_env.app.cli import app  # noqa: E402

GAME = "rune-market"
HEUR = ["rm-banker", "rm-raider", "rm-bandit", "random"]


def _cli(*args):
    return CliRunner().invoke(app, list(args))


@pytest.fixture(scope="module")
def match_result(tmp_path_factory):
    out = tmp_path_factory.mktemp("rm_tournament")
    res = run_tournament(HEUR, 4, 16, seed=3, workers=1, out=out, progress=False, game=GAME, match_games=2)
    return res, out


def earliest_winner(rec: dict) -> int:
    """RM-1.5: of a game's co-winners, the earliest in its turn order (from its first player)."""
    P = len(rec["winners"])
    return next(q for q in ((rec["first_player"] + k) % P for k in range(P)) if rec["winners"][q])


def test_rm_1_5_match_play_starts_the_earliest_co_winner_in_turn_order():
    """RM-1.5: co-winners of the previous game: the earliest of them in that game's turn
    order starts the next, not the lowest-numbered seat."""
    from ripmarket_env.core.spec import next_first_players
    from ripmarket_env.games import get

    spec = get(GAME)
    eng = spec.make_engine(spec.make_rules(3), batch_size=4)
    eng.reset([11, 12, 13, 14], first_player=[2, 1, 0, 1])
    assert list(eng.state["first_player"]) == [2, 1, 0, 1]
    winners = np.array([[True, False, True], [True, False, True], [True, False, True], [False, True, False]])
    # turn orders 2,0,1 / 1,2,0 / 0,1,2 / 1,2,0; the lowest-numbered co-winner would be 0, 0, 0, 1
    assert next_first_players(spec, eng, winners) == [2, 2, 0, 1]


def test_rm_1_5_match_play_at_three_players_through_the_tournament():
    """RM-1.5 in every match of a tournament at 3 players (where co-winners are common):
    each game after the first starts with the previous game's earliest co-winner."""
    res = run_tournament(["random", "rm-banker"], 3, 90, seed=5, workers=1, progress=False, game=GAME,
                         match_games=2)
    by = {(g["set"], g["rotation"], g["match_game"]): g for g in res.games}
    shared = 0
    for (s, r, m), g1 in by.items():
        if m == 1:
            g0 = by[(s, r, 0)]
            shared += sum(g0["winners"]) > 1
            assert g1["first_player"] == earliest_winner(g0), (s, r, g0)
    assert shared > 0, "no co-winners: the test would not tell the rules apart"


def test_tournament_rotates_seats_over_duplicate_deals(match_result):
    """RM-1.5 match play through the arena: every lineup rotation of a set replays the
    set's deal in game 0 of its match; game 1 is a new deal started by game 0's winner."""
    res, out = match_result
    assert res.settings["game"] == GAME and res.settings["match_games"] == 2
    assert len(res.games) == res.settings["games"] == 16  # 2 sets x 4 rotations x 2 match games
    by = {(g["set"], g["rotation"], g["match_game"]): g for g in res.games}
    for s in range(res.settings["duplicate_sets"]):
        firsts = [by[(s, r, 0)] for r in range(4)]
        assert len({g["seed"] for g in firsts}) == 1  # one deal per set
        lineups = [g["lineup"] for g in firsts]
        for r in range(4):
            assert lineups[r] == list(np.roll(lineups[0], r))  # the lineup rotated r seats
        for r in range(4):
            g0, g1 = by[(s, r, 0)], by[(s, r, 1)]
            assert g1["seed"] != g0["seed"] and g1["lineup"] == g0["lineup"]
            assert g1["first_player"] == earliest_winner(g0)  # the previous winner starts (RM-1.5)
    assert any(by[(s, r, 1)]["first_player"] != by[(s, r, 0)]["first_player"]
               for s in range(res.settings["duplicate_sets"]) for r in range(4))
    assert all(g["rounds"] >= 1 and any(g["winners"]) for g in res.games)


def test_tournament_report_ratings_and_plots(match_result):
    res, out = match_result
    for name in FILES:
        assert (out / name).is_file(), name
    text = (out / "report.md").read_text()
    assert "The Rune Market (`rune-market`)" in text and "match play" in text
    assert set(res.summary["leaderboard"]) == set(HEUR)
    figures = json.loads((out / "results.json").read_text())
    assert figures["settings"]["game"] == GAME


def test_tournament_is_the_same_whatever_the_worker_count():
    a = run_tournament(HEUR[:2], 2, 8, seed=5, workers=1, progress=False, game=GAME, chunk_sets=2)
    b = run_tournament(HEUR[:2], 2, 8, seed=5, workers=2, progress=False, game=GAME, chunk_sets=2)
    assert [g["place"] for g in a.games] == [g["place"] for g in b.games]
    assert [g["seed"] for g in a.games] == [g["seed"] for g in b.games]


def test_tournament_bad_arguments_are_one_line_errors():
    with pytest.raises(ValueError, match="unknown agent 'greedy'"):
        run_tournament(["greedy"], 4, 4, seed=1, workers=1, progress=False, game=GAME)
    with pytest.raises(ValueError, match="from 2 to 6"):
        run_tournament(["random"], 7, 4, seed=1, workers=1, progress=False, game=GAME)
    with pytest.raises(ValueError, match="match play"):
        run_tournament(["random"], 4, 4, seed=1, workers=1, progress=False, match_games=2)  # R.I.P. Market
    for args, needle in (
        (("--agents", "rm-banker", "--players", "7"), "2 to 6"),
        (("--agents", "greedy"), "allowed: "),
        (("--agents", "random", "--match", "0"), "--match"),
        (("--agents", "random", "--cards", "x.json"), "--cards"),
    ):
        r = _cli("tournament", "--game", GAME, *args)
        assert r.exit_code == 2 and needle in r.output and len(r.output.strip().splitlines()) == 1, r.output
    r = _cli("tournament", "--game", "chess", "--agents", "random")
    assert r.exit_code == 2 and "rune-market" in r.output


def test_cli_tournament_and_agents_list(tmp_path):
    r = _cli("agents", "--game", GAME)
    assert r.exit_code == 0 and "rm-raider" in r.output
    assert not any(n in r.output for n in ("hoarder", "survivor", "ppo-6p"))  # R.I.P. Market's bots are not listed
    r = _cli("tournament", "--game", GAME, "--agents", "rm-banker,rm-bandit", "--players", "2", "--games", "4",
             "--match", "2", "--workers", "1", "--quiet", "--out", str(tmp_path / "t"))
    assert r.exit_code == 0, r.output
    assert "rm-banker" in r.output and (tmp_path / "t" / "report.md").is_file()


def test_evaluate_against_the_heuristics():
    from eval.evaluate import evaluate

    res = evaluate("random", 4, 20, ["rm-banker", "rm-raider"], seed=2, workers=1, progress=False, game=GAME)
    assert res["game"] == GAME and res["games"] == 20 and 0 <= res["wins"] <= 20
    lo, hi = res["wilson95"]
    assert lo <= res["win_rate"] <= hi and res["parity"] == 0.25
    r = _cli("evaluate", "random", "--game", GAME, "--players", "4", "--games", "8", "--workers", "1", "--json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)["zoo"] == ["rm-banker", "rm-raider", "rm-bandit"]  # the game's heuristics
    r = _cli("evaluate", "greedy", "--game", GAME)
    assert r.exit_code == 2 and "allowed" in r.output


def test_bench_measures_the_game():
    from ripmarket_env.app import bench as B
    from ripmarket_env.app import envbench as E

    rep = B.run_bench([4], [64], 0.05, game=GAME)
    assert rep["game"] == GAME and rep["memory"]["obs_size"] == 191
    assert rep["results"][0]["steps_per_sec"] > 0
    assert rep["targets"] == []  # the target is at batch 4096, not measured here
    aec = E.bench_aec(0.05, players=4, texas=False, game=GAME)
    assert aec["game"] == GAME and aec["env"]["agent_steps_per_sec"] > 0
    r = _cli("bench", "--game", GAME, "--players", "8")
    assert r.exit_code == 2 and "2 to 6" in r.output
