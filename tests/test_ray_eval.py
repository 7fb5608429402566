"""The Ray backend of tournament and evaluate: games as Ray tasks on a local Ray instance
(``ray.init(num_cpus=2)``) give exactly the results of local worker processes."""

from __future__ import annotations


def _strip(games):
    return [{k: v for k, v in g.items() if k != "elapsed"} for g in games]


def test_tournament_on_ray_equals_local_processes(local_ray):
    from eval.tournament import run_tournament

    args = (["random", "greedy", "survivor"], 3, 36, 5)
    local = run_tournament(*args, workers=2, progress=False, chunk_sets=3)
    remote = run_tournament(*args, progress=False, chunk_sets=3, ray_address="auto")
    assert local.settings["chunks"] == remote.settings["chunks"] == 4  # several Ray tasks
    assert remote.settings["backend"] == "ray"
    assert _strip(remote.games) == _strip(local.games)
    assert remote.summary == local.summary


def test_evaluate_on_ray_equals_local_processes(local_ray):
    from eval.evaluate import JOB, evaluate

    games = JOB + 20  # two jobs
    local = evaluate("greedy", 4, games, ["random", "survivor"], seed=3, workers=2, progress=False)
    remote = evaluate("greedy", 4, games, ["random", "survivor"], seed=3, progress=False, ray_address="auto")
    assert remote == local and local["games"] == games


def test_black_market_team_tournament_on_ray_equals_local_processes(local_ray):
    from eval.tournament import run_tournament

    args = (["bm-rusher", "bm-denier", "random"], 4, 48, 6)
    kw = dict(progress=False, chunk_sets=4, game="black-market", rules={"mode": "teams"})
    local = run_tournament(*args, workers=2, **kw)
    remote = run_tournament(*args, ray_address="auto", **kw)
    assert local.settings["chunks"] == remote.settings["chunks"] == 3 and remote.settings["backend"] == "ray"
    assert remote.settings["teams"] == [0, 1, 0, 1]
    assert _strip(remote.games) == _strip(local.games)
    assert remote.summary == local.summary


def test_a_plugin_games_tournament_on_ray_equals_local_processes(local_ray):
    """The tests' toy game (a registered plugin, no line of its own in eval/) plays on Ray
    workers as in local processes: its rules and agents cross to the workers by name."""
    from eval.tournament import run_tournament

    args = (["toy-high", "toy-low", "random"], 3, 36, 2)
    kw = dict(progress=False, chunk_sets=3, game="toy")
    local = run_tournament(*args, workers=2, **kw)
    remote = run_tournament(*args, ray_address="auto", **kw)
    assert local.settings["chunks"] == remote.settings["chunks"] >= 2 and remote.settings["backend"] == "ray"
    assert _strip(remote.games) == _strip(local.games) and len(local.games) == 36
    assert remote.summary == local.summary
