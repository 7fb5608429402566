"""Tournaments: reproducibility across worker counts, report files, ratings math, CLI errors."""

from __future__ import annotations

import csv
import json
import math
import textwrap

import numpy as np
import pytest

import openskill  # noqa: E402,F401
import matplotlib  # noqa: E402,F401

from eval.ratings import agent_stats, head_to_head, rate_games, summarize, wilson_interval  # noqa: E402
from eval.report import FILES  # noqa: E402
from eval.tournament import agent_registry, num_sets, rotate, run_tournament, schedule  # noqa: E402
from ripmarket_env.games.ripmarket.outcome import finishing_order  # noqa: E402

PLUGIN = textwrap.dedent(
    '''
    import numpy as np
    from agents.base import BaseAgent, names, register


    class FirstLegal(BaseAgent):
        """Deterministic: always the lowest legal action."""

        name = "t_first_legal"

        def act(self, observation, action_mask):
            return int(np.flatnonzero(action_mask)[0])

        def act_batch(self, observations, action_masks):
            return np.asarray(action_masks, dtype=bool).argmax(axis=1).astype(np.int64)


    if "t_first_legal" not in names():
        register("t_first_legal", FirstLegal, "test agent: lowest legal action")
    '''
)


@pytest.fixture()
def plugin(tmp_path, monkeypatch):
    """A test-only agent in an importable module (spawned workers import it too)."""
    (tmp_path / "t_tourney_plugin.py").write_text(PLUGIN, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    return "t_tourney_plugin"


def _figures(result) -> dict:
    f = json.loads(json.dumps(result.figures()))
    f.pop("timing")
    f["settings"].pop("workers")
    return f


# ----------------------------------------------------------------------------- tournament
def test_tiny_tournament_reproducible_across_workers_and_writes_files(tmp_path, plugin):
    kw = dict(players=4, games=16, seed=7, progress=False, chunk_sets=1, agent_modules=[plugin])
    one = run_tournament(["random", "t_first_legal"], workers=1, out=tmp_path / "w1", **kw)
    two = run_tournament(["random", "t_first_legal"], workers=2, out=tmp_path / "w2", **kw)
    assert one.settings["workers"] == 1 and two.settings["workers"] == 2
    assert _figures(one) == _figures(two)
    assert one.games == two.games
    assert len(one.games) == 16 and [g["game"] for g in one.games] == list(range(16))
    for d in ("w1", "w2"):
        for name in FILES:
            p = tmp_path / d / name
            assert p.is_file() and p.stat().st_size > 0, p
    data = json.loads((tmp_path / "w1" / "results.json").read_text())
    assert set(data["agents"]) == {"random", "t_first_legal"}
    assert data["settings"]["games"] == 16
    assert sum(a["seat_games"] for a in data["agents"].values()) == 16 * 4
    with (tmp_path / "w1" / "games.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 16
    md = (tmp_path / "w1" / "report.md").read_text()
    assert "Leaderboard" in md and "Head-to-head" in md
    lead = data["leader_vs_runner_up"]
    assert f"leads by {lead['ordinal_lead']:.2f} ordinal points; the two sigmas added: {lead['sigmas_added']:.2f}" in md
    # a different seed gives different games
    other = run_tournament(["random", "t_first_legal"], workers=1, **{**kw, "seed": 8})
    assert [g["seed"] for g in other.games] != [g["seed"] for g in one.games]


def test_duplicate_sets_rotate_lineup_over_same_deal():
    res = run_tournament(["random"], players=3, games=7, seed=2, workers=1, progress=False, chunk_sets=2)
    assert res.settings["duplicate_sets"] == 3 and len(res.games) == 9  # rounded up to whole sets
    for s in range(3):
        games = [g for g in res.games if g["set"] == s]
        assert len(games) == 3 and len({g["seed"] for g in games}) == 1
    for g in res.games:
        assert sorted(p for grp in g["order"] for p in grp) == [0, 1, 2]
        assert abs(sum(g["rewards"])) < 1e-5
        assert g["rounds"] >= 1 and g["steps"] >= 1
        win = [i for i, w in enumerate(g["winners"]) if w]
        assert g["order"][0] == win


def test_schedule_balanced_and_rotation():
    names = ["a", "b", "c"]
    lineups, seeds = schedule(names, players=4, games=30, seed=5)
    assert lineups.shape == (num_sets(30, 4), 4) == (8, 4)
    counts = np.bincount(lineups.ravel(), minlength=3)
    assert counts.max() - counts.min() <= 1
    assert len(set(seeds.tolist())) == len(seeds)
    again, seeds2 = schedule(names, players=4, games=30, seed=5)
    assert (again == lineups).all() and (seeds2 == seeds).all()
    lu = np.array([0, 1, 2, 3])
    seats = [rotate(lu, r) for r in range(4)]
    for entry in range(4):  # every lineup entry takes every seat once
        assert sorted(int(np.flatnonzero(s == entry)[0]) for s in seats) == [0, 1, 2, 3]


def test_finishing_order_ties_and_winners():
    elim = np.array([1, 3, 3, -1, 2])
    win = np.array([False, False, False, True, False])
    order, place, placement = finishing_order(elim, win)
    assert order == [[3], [1, 2], [4], [0]]
    assert place == [5, 2, 2, 1, 4]
    assert placement == [5.0, 2.5, 2.5, 1.0, 4.0]
    # co-winners: both died in the last resolution and share the win
    order, place, placement = finishing_order(np.array([2, 2, 1]), np.array([True, True, False]))
    assert order == [[0, 1], [2]] and place == [1, 1, 3] and placement == [1.5, 1.5, 3.0]


# ----------------------------------------------------------------------------- ratings math
def _game(lineup, place, winners=None, rewards=None):
    P = len(lineup)
    placement = []
    for p in place:
        tied = sum(1 for q in place if q == p)
        placement.append(p + (tied - 1) / 2.0)
    if winners is None:
        winners = [p == 1 for p in place]
    return {
        "lineup": lineup,
        "place": place,
        "placement": placement,
        "winners": winners,
        "rewards": rewards or [0.0] * P,
        "rounds": 3,
        "steps": 10,
    }


def test_winner_mu_goes_up_loser_down():
    r = rate_games([_game(["a", "b", "c"], [1, 2, 3])], ["a", "b", "c"])
    assert r["a"]["mu"] > 25 > r["c"]["mu"]
    assert r["a"]["mu"] > r["b"]["mu"] > r["c"]["mu"]
    for v in r.values():
        assert v["sigma"] < 25 / 3
        assert v["ordinal"] == pytest.approx(v["mu"] - 3 * v["sigma"])


def test_one_seat_per_agent_matches_openskill():
    from openskill.models import PlackettLuce

    m = PlackettLuce()
    expect = m.rate([[m.rating()], [m.rating()], [m.rating()], [m.rating()]], ranks=[2, 1, 3, 3])
    r = rate_games([_game(["a", "b", "c", "d"], [2, 1, 3, 3])], ["a", "b", "c", "d"])
    for n, team in zip("abcd", expect):
        assert r[n]["mu"] == pytest.approx(team[0].mu)
        assert r[n]["sigma"] == pytest.approx(team[0].sigma)


def test_tied_placements_rate_equally():
    r = rate_games([_game(["a", "b", "c"], [1, 1, 3], winners=[True, True, False])], ["a", "b", "c"])
    assert r["a"]["mu"] == pytest.approx(r["b"]["mu"])
    assert r["a"]["mu"] > 25 > r["c"]["mu"]
    # an all-way tie leaves every mu where it was
    r = rate_games([_game(["a", "b"], [1, 1], winners=[True, True])], ["a", "b"])
    assert r["a"]["mu"] == pytest.approx(25.0) and r["b"]["mu"] == pytest.approx(25.0)


def test_repeated_agent_seats_and_consistent_winner():
    games = [_game(["a", "b", "b", "b"], [1, 2, 3, 4]) for _ in range(20)]
    r = rate_games(games, ["a", "b"])
    assert r["a"]["mu"] > r["b"]["mu"]
    assert r["a"]["ordinal"] > r["b"]["ordinal"]
    # the agent's own seats only compared with each other: mu unchanged
    r = rate_games([_game(["b", "b", "b"], [1, 2, 3])], ["b"])
    assert r["b"]["mu"] == pytest.approx(25.0, abs=1e-9)


def test_wilson_interval_known_values():
    lo, hi = wilson_interval(50, 100)
    assert lo == pytest.approx(0.4038, abs=1e-4) and hi == pytest.approx(0.5962, abs=1e-4)
    lo, hi = wilson_interval(0, 10)
    assert lo == 0.0 and hi == pytest.approx(0.2775, abs=1e-4)
    lo, hi = wilson_interval(10, 10)
    assert lo == pytest.approx(0.7225, abs=1e-4) and hi == 1.0
    lo, hi = wilson_interval(81, 263)
    assert lo == pytest.approx(0.2553, abs=1e-4) and hi == pytest.approx(0.3662, abs=1e-4)
    assert wilson_interval(0, 0) == (0.0, 1.0)


def test_head_to_head_consistency():
    rng = np.random.default_rng(0)
    names = ["a", "b", "c"]
    games = []
    for _ in range(50):
        lineup = [names[i] for i in rng.integers(0, 3, size=4)]
        place = [int(x) for x in rng.integers(1, 5, size=4)]
        place = [1 + sum(1 for q in place if q < p) for p in place]  # competition ranks
        games.append(_game(lineup, place))
    prob, pairs = head_to_head(games, names)
    assert (pairs == pairs.T).all()
    for i in range(3):
        assert math.isnan(prob[i, i])
        for j in range(3):
            if i != j and pairs[i, j]:
                assert prob[i, j] + prob[j, i] == pytest.approx(1.0)
                assert 0.0 <= prob[i, j] <= 1.0
    # hand-checked: a ahead of b once, tied once
    g1 = _game(["a", "b", "b"], [1, 2, 3])
    g2 = _game(["a", "b"], [1, 1], winners=[True, True])
    prob, pairs = head_to_head([g1, g2], ["a", "b"])
    assert pairs[0, 1] == 3 and prob[0, 1] == pytest.approx(2.5 / 3)


def test_agent_stats_counts():
    g = _game(["a", "b", "a"], [1, 2, 2], rewards=[1.0, -0.5, -0.5])
    s = agent_stats([g], ["a", "b"])
    assert s["a"]["seat_games"] == 2 and s["a"]["games_present"] == 1 and s["a"]["wins"] == 1
    assert s["a"]["win_rate"] == 0.5 and s["a"]["mean_placement"] == pytest.approx((1 + 2.5) / 2)
    assert s["b"]["wins"] == 0 and s["b"]["mean_reward"] == -0.5
    summ = summarize([g], ["a", "b"])
    assert summ["leaderboard"][0] == "a"
    json.dumps(summ)  # JSON-ready


# ----------------------------------------------------------------------------- CLI
def _cli(*args):
    from typer.testing import CliRunner

    from ripmarket_env.app.cli import app

    return CliRunner().invoke(app, ["tournament", *args])


def test_cli_bad_agent_name():
    res = _cli("--agents", "random,nosuchagent", "--games", "4")
    assert res.exit_code == 2
    out = res.output
    assert "nosuchagent" in out and "allowed:" in out and "random" in out
    assert len([ln for ln in out.splitlines() if ln.strip()]) == 1


@pytest.mark.parametrize("players", ["1", "11", "0"])
def test_cli_bad_player_count(players):
    res = _cli("--agents", "random", "--players", players)
    assert res.exit_code == 2
    assert "2 to 10" in res.output and len(res.output.strip().splitlines()) == 1


def test_cli_other_errors():
    assert _cli("--agents", "random,random").exit_code == 2
    assert _cli("--agents", ",").exit_code == 2
    assert _cli("--agents", "random", "--games", "0").exit_code == 2
    assert _cli("--agents", "random", "--workers", "0").exit_code == 2


def test_cli_runs_small_tournament(tmp_path):
    out = tmp_path / "rep"
    res = _cli("--agents", "random", "--players", "2", "--games", "4", "--out", str(out), "--workers", "1", "--quiet")
    assert res.exit_code == 0, res.output
    assert "random" in res.output
    for name in FILES:
        assert (out / name).is_file()


def test_registry_has_random():
    assert "random" in agent_registry().names()


@pytest.mark.parametrize(
    "item, message",
    [
        ("budget", "AGENT.KEY=VALUE"),
        ("ppo.seed=8", "not in --agents"),
        ("greedy.ghost_style=nosuch", "unknown ghost style"),
        ("greedy.nosuch=1", "agent 'greedy' has no setting 'nosuch'; its settings: ghost_style, seed, cards, start_hp"),
        ("random.budget=8", "agent 'random' has no setting 'budget'; its settings: seed"),
        ("search.budget=abc", "--set search.budget=abc: budget is an integer"),
        ("search.eps=x", "--set search.eps=x: eps is a number (default 0.25)"),
    ],
)
def test_cli_bad_agent_settings(item, message):
    res = _cli("--agents", "greedy,random,search", "--games", "4", "--set", item)
    assert res.exit_code == 2
    assert message in res.output


def test_every_agent_states_the_settings_its_factory_takes():
    """``agents.settings`` lists, for every agent of every game, the keywords its factory
    passes on (a factory with ``**kwargs`` states its class's parameters); each is accepted
    by name, and a name outside the list is refused by the factory too."""
    import inspect

    import agents

    for game in agents.base.games_with_agents():
        for name in agents.names(game):
            known = agents.settings(name, game)
            assert known is not None, (game, name)  # every factory states what it takes
            factory = agents.base._entry(name, game).factory
            params = inspect.signature(factory).parameters
            assert all(k in params for k in known)
    assert {"ghost_style", "seed", "cards", "start_hp"} <= set(agents.settings("greedy"))  # HeuristicAgent's
    assert {"top_k", "n", "margin", "seed"} <= set(agents.settings("bm-ppo-lookahead", "black-market"))
    agents.make("greedy", ghost_style="kingmaker", start_hp=5)
    with pytest.raises(TypeError):
        agents.make("greedy", nosuch=1)


def test_cli_agent_settings_reach_the_agents(tmp_path):
    out = tmp_path / "rep"
    res = _cli("--agents", "greedy,random", "--players", "2", "--games", "2", "--out", str(out), "--workers", "1",
               "--quiet", "--set", "greedy.ghost_style=kingmaker")
    assert res.exit_code == 0, res.output
    data = json.loads((out / "results.json").read_text())
    assert data["settings"]["agent_kwargs"] == {"greedy": {"ghost_style": "kingmaker"}}
    assert "agent settings" in (out / "report.md").read_text()


def test_agents_command_lists_every_agent_with_a_description():
    from ripmarket_env.app.cli import app

    from typer.testing import CliRunner

    res = CliRunner().invoke(app, ["agents"], env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    reg = agent_registry()
    for name in reg.names():
        assert name in res.output
        assert reg.describe(name).split()[0] in res.output


def test_versus_matches_head_to_head_and_win_rates(tmp_path):
    from eval.ratings import versus

    games = [
        {"lineup": ["a", "b", "a"], "placement": [1.0, 2.0, 3.0], "place": [1, 2, 3], "winners": [True, False, False], "rewards": [1.0, -0.5, -0.5], "rounds": 3, "steps": 9},
        {"lineup": ["b", "a", "c"], "placement": [1.5, 1.5, 3.0], "place": [1, 1, 3], "winners": [True, True, False], "rewards": [0.25, 0.25, -0.5], "rounds": 3, "steps": 9},
        {"lineup": ["c", "a", "c"], "placement": [1.0, 2.0, 3.0], "place": [1, 2, 3], "winners": [True, False, False], "rewards": [1.0, -0.5, -0.5], "rounds": 3, "steps": 9},
    ]
    v = versus(games, "a", "b")
    assert v["games"] == 2 and v["pairs"] == 3
    assert v["prob_ahead"] == pytest.approx((1 + 0 + 0.5) / 3)
    prob, pairs = head_to_head(games[:2], ["a", "b", "c"])
    assert v["prob_ahead"] == pytest.approx(prob[0, 1]) and v["pairs"] == pairs[0, 1]
    assert v["a"]["seat_games"] == 3 and v["a"]["wins"] == 2 and v["b"]["wins"] == 1
    lo, hi = v["a"]["win_ci"]
    assert lo < 2 / 3 < hi
    s = summarize(games, ["a", "b", "c"])
    lead = s["leader_vs_runner_up"]
    assert lead["agents"] == s["leaderboard"][:2]
    first, second = (s["agents"][n] for n in lead["agents"])
    assert lead["ordinal_lead"] == pytest.approx(first["ordinal"] - second["ordinal"]) and lead["ordinal_lead"] >= 0
    assert lead["sigmas_added"] == pytest.approx(first["sigma"] + second["sigma"])
    assert lead["lead_beyond_sigmas"] == (lead["ordinal_lead"] > lead["sigmas_added"])


def test_averaged_ratings_do_not_depend_on_the_order_of_games():
    from eval.ratings import rate_games_averaged

    rng = np.random.default_rng(5)
    names = ["a", "b", "c", "d"]
    games = []
    for _ in range(120):  # "a" usually first, "d" usually last, with noise
        score = np.array([3.0, 2.0, 1.0, 0.0]) + rng.normal(0, 1.5, 4)
        place = (np.argsort(np.argsort(-score)) + 1).tolist()
        games.append(_game(names, place))
    r1 = rate_games_averaged(games, names)
    r2 = rate_games_averaged(games[::-1], names)
    for n in names:  # the same set of games: the same figures, whatever order they came in
        assert r1[n] == r2[n]
        assert r1[n]["sigma"] ** 2 >= r1[n]["mu_spread"] ** 2
    assert r1["a"]["ordinal"] > r1["d"]["ordinal"]
    single = rate_games(games, names)
    assert any(abs(single[n]["mu"] - rate_games(games[::-1], names)[n]["mu"]) > 0.3 for n in names)


def test_a_clear_leader_leads_by_more_than_the_two_sigmas():
    from eval.ratings import summarize

    rng = np.random.default_rng(11)
    names = ["a", "b", "c", "d"]
    games = []
    for _ in range(600):  # "a" far ahead, "b" and "c" level
        score = np.array([4.0, 1.0, 1.0, 0.0]) + rng.normal(0, 1.0, 4)
        games.append(_game(names, (np.argsort(np.argsort(-score)) + 1).tolist()))
    lead = summarize(games, names)["leader_vs_runner_up"]
    assert lead["agents"][0] == "a" and lead["lead_beyond_sigmas"] and lead["ordinal_lead"] > lead["sigmas_added"]
    games = []
    for _ in range(600):  # "a" and "b" level: neither lead is beyond the sigmas
        score = np.array([4.0, 4.0, 1.0, 0.0]) + rng.normal(0, 1.0, 4)
        games.append(_game(names, (np.argsort(np.argsort(-score)) + 1).tolist()))
    level = summarize(games, names)["leader_vs_runner_up"]
    assert sorted(level["agents"]) == ["a", "b"] and not level["lead_beyond_sigmas"]


def test_the_report_says_rounded_up_only_when_the_games_were(tmp_path):
    """The report's settings line names the games requested only when they were rounded up
    to whole duplicate sets (7 at 3 players became 9; 9 stays 9)."""
    from eval.report import write_report

    for games, line in ((7, "- games: 9 (3 duplicate sets of 3 rotations; 7 requested, rounded up to whole sets)"),
                        (9, "- games: 9 (3 duplicate sets of 3 rotations)")):
        res = run_tournament(["random"], players=3, games=games, seed=2, workers=1, progress=False)
        write_report(res, tmp_path / str(games))
        md = (tmp_path / str(games) / "report.md").read_text().splitlines()
        assert line in md, [m for m in md if m.startswith("- games")]
