"""The bench, demo and help commands, and the observation-encoding bench loop."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from ripmarket_env.app.cli import app
from ripmarket_env.games.ripmarket import Engine, RulesConfig
from ripmarket_env.games.ripmarket import kernels as K

runner = CliRunner()


def test_help_lists_commands():
    res = runner.invoke(app, ["--help"])
    assert res.exit_code == 0, res.output
    for cmd in ("bench", "demo", "envdoc", "cards"):
        assert cmd in res.output


def test_bench_json(tmp_path):
    out = tmp_path / "bench.json"
    res = runner.invoke(
        app, ["bench", "--json", "--suite", "engine", "--players", "4", "--batch", "1,8", "--seconds", "0.2",
              "--out", str(out)]
    )
    assert res.exit_code == 0, res.output
    report = json.loads(res.stdout)
    assert json.loads(out.read_text()) == report
    results = report["results"]
    configs = {(r["players"], r["batch"], r["observations"]) for r in results}
    assert configs == {(4, 1, False), (4, 1, True), (4, 8, False), (4, 8, True)}
    assert len(results) == 4
    for r in results:
        assert r["steps_per_sec"] > 0 and r["agent_steps"] > 0 and r["seconds"] > 0
        assert r["games_per_sec"] > 0 and r["mean_steps_per_game"] > 1
        assert r["state_bytes"] == r["batch"] * report["memory"]["state_bytes_per_game"]
        assert (r["obs_buffer_bytes"] > 0) == r["observations"]
    comp = report["compile"]
    assert set(comp["kernels"]) == {"reset_batch", "random_play", "random_play_obs"}
    assert comp["compile_seconds"] > 0 and isinstance(comp["numba_cache_warm"], bool)
    assert report["memory"]["maxrss_mb"] > 0
    env = report["environment"]
    assert env["cpu_count"] >= 1 and env["numba_threads"] >= 1 and env["numba"]
    assert report["targets"] == []  # 6 players x 4096 is not in this grid
    assert report["suite"] == "engine" and "env" not in report


def test_bench_env_suite_json():
    import numba

    res = runner.invoke(
        app, ["bench", "--json", "--suite", "env", "--players", "3", "--num-envs", "8,16", "--seconds", "0.1"]
    )
    assert res.exit_code == 0, res.output
    report = json.loads(res.stdout)
    assert report["suite"] == "env" and "results" not in report
    assert report["environment"]["cpu_count"] >= 1
    env = report["env"]
    aec = env["aec"]
    assert aec["players"] == 6
    for name in ("env", "raw_env", "texas_holdem_v4"):  # pettingzoo[classic] is a test dependency
        r = aec[name]
        assert r["agent_steps_per_sec"] > 0 and r["agent_steps"] > 0 and r["seconds"] >= 0.1
    assert aec["ratio_vs_texas_holdem"] == pytest.approx(
        aec["env"]["agent_steps_per_sec"] / aec["texas_holdem_v4"]["agent_steps_per_sec"]
    )
    assert aec["target"]["ratio"] == 5.0 and aec["target"]["met"] == (min(aec["ratio_vs_texas_holdem"], aec["choice"]["ratio_vs_texas_holdem"]) >= 5.0)
    assert aec["choice"]["env"]["agent_steps"] > 0 and aec["choice"]["texas_holdem_v4"]["agent_steps"] > 0
    assert [g["players"] for g in env["gym"]] == [3]
    g = env["gym"][0]
    assert g["learner_steps_per_sec"] > 0 and g["compiled_opponents"] is True
    cores = numba.config.NUMBA_NUM_THREADS
    expected = {(3, 8, 1), (3, 16, 1)} | ({(3, 16, cores)} if cores > 1 else set())
    assert {(v["players"], v["num_envs"], v["numba_threads"]) for v in env["vector"]} == expected
    for v in env["vector"]:
        assert v["compiled_opponents"] is True
        assert v["learner_steps"] == v["step_calls"] * v["num_envs"]
        assert v["learner_steps_per_sec"] > 0 and v["seconds"] >= 0.1
    assert env["targets"] == [{"aec_vs_texas_holdem": aec["target"]}]  # no 6-player vector config here


#: The schema ``bench --suite engine|env --json`` answers for every game: key -> type.
ENGINE_ROW = {"players": int, "batch": int, "observations": bool, "steps_per_sec": float, "steps_per_cpu_sec": float,
              "games_per_sec": float, "agent_steps": int, "games_finished": int, "seconds": float,
              "cpu_seconds": float}
AEC_LOOP = {"agent_steps_per_sec": float, "steps_per_cpu_sec": float, "agent_steps": int, "seconds": float}


def _check(obj: dict, schema: dict, where: str) -> None:
    for key, kind in schema.items():
        assert key in obj, f"{where}: no {key!r}"
        assert isinstance(obj[key], kind) or (kind is float and isinstance(obj[key], int)), (where, key, obj[key])


@pytest.mark.parametrize("game", ["ripmarket", "black-market", "rune-market"])
@pytest.mark.parametrize("suite", ["engine", "env"])
def test_bench_json_has_one_schema_for_every_game(game, suite):
    """``bench --suite engine|env --game G --json``: the same keys for every registered game:
    agent steps per second and per CPU-second without and with observations (engine), the
    AEC env against texas_holdem_v4 and the gym and vector envs (env)."""
    from ripmarket_env.games import get

    spec = get(game)
    P = spec.min_players
    sizes = ["--batch", "8"] if suite == "engine" else ["--num-envs", "8"]
    res = runner.invoke(app, ["bench", "--json", "--suite", suite, "--game", game, "--players", str(P),
                              *sizes, "--seconds", "0.05"])
    assert res.exit_code == 0, res.output
    report = json.loads(res.stdout)
    assert report["suite"] == suite and report["environment"]["cpu_count"] >= 1
    if suite == "engine":
        assert report["game"] == game and set(report) >= {"config", "compile", "memory", "targets", "results"}
        assert {(r["players"], r["batch"], r["observations"]) for r in report["results"]} == {(P, 8, False), (P, 8, True)}
        for r in report["results"]:
            _check(r, ENGINE_ROW, f"{game} engine")
            assert r["steps_per_sec"] > 0 and r["steps_per_cpu_sec"] > 0
        for t in report["targets"]:
            assert set(t) == {"players", "batch", "observations", "steps_per_sec", "measured", "met"}
    else:
        env = report["env"]
        assert env["game"] == game and set(env) >= {"aec", "gym", "vector", "targets"}
        aec = env["aec"]
        for name in ("env", "raw_env", "texas_holdem_v4"):
            _check(aec[name], AEC_LOOP, f"{game} aec {name}")
        assert aec["ratio_vs_texas_holdem"] > 0 and aec["target"]["ratio"] == 5.0
        assert aec["players"] == (6 if game == "ripmarket" else spec.default_players)
        for g in env["gym"]:
            assert g["players"] == P and g["learner_steps_per_sec"] > 0
        assert all(v["learner_steps_per_sec"] > 0 for v in env["vector"])


def test_bench_refuses_a_player_count_the_game_does_not_allow():
    res = runner.invoke(app, ["bench", "--game", "black-market", "--players", "3"])
    assert res.exit_code == 2 and "allowed: 2, 4, 6" in res.output and len(res.output.strip().splitlines()) == 1


def test_bench_without_texas_holdem_reports_it_missing(monkeypatch):
    from ripmarket_env.app import envbench as E

    monkeypatch.setattr(E, "_texas_env", lambda: (None, "ModuleNotFoundError: No module named 'rlcard'"))
    aec = E.bench_aec(0.05, players=3)
    assert aec["env"]["agent_steps_per_sec"] > 0
    missing = aec["texas_holdem_v4"]["missing"]
    assert "rlcard" in missing and "pip install 'ripmarket[bench]'" in missing
    assert aec["ratio_vs_texas_holdem"] is None and aec["target"]["met"] is None
    text = E.render_rich({"aec": aec, "gym": [], "vector": [], "targets": []})
    from io import StringIO

    from rich.console import Console

    buf = StringIO()
    Console(file=buf, width=200).print(text)
    assert "ripmarket[bench]" in buf.getvalue()


def test_bench_rejects_bad_lists():
    res = runner.invoke(app, ["bench", "--suite", "fast"])
    assert res.exit_code == 2
    assert "--suite 'fast' is not allowed; allowed: engine, env, all" in res.output
    res = runner.invoke(app, ["bench", "--num-envs", "0"])
    assert res.exit_code == 2 and "--num-envs" in res.output
    res = runner.invoke(app, ["bench", "--players", "4,11"])
    assert res.exit_code == 2
    assert "--players" in res.output
    res = runner.invoke(app, ["bench", "--batch", "x"])
    assert res.exit_code == 2


def test_random_play_obs_encodes_the_deciding_seat_and_plays_the_same_games():
    eng = Engine(RulesConfig(num_players=5), batch_size=16)
    eng.reset(list(range(16)))
    twin = eng.clone()
    rng_a = np.arange(16, dtype=np.int64) + 99
    rng_b = rng_a.copy()
    out = np.zeros((16, eng.obs_size), np.float32)
    for _ in range(40):
        expected = eng.observe()  # the deciding seat's view before the step
        eng.drivers.random_play_obs(eng.state, eng.tables, eng.cfg, 1, rng_a, eng._offs, out)
        K.random_play(twin.state, twin.tables, twin.cfg, 1, rng_b)
        started_over = eng.state["steps"] <= 1
        np.testing.assert_array_equal(out[~started_over], expected[~started_over])
    fin_a = eng.drivers.random_play_obs(eng.state, eng.tables, eng.cfg, 300, rng_a, eng._offs, out)
    fin_b = K.random_play(twin.state, twin.tables, twin.cfg, 300, rng_b)
    np.testing.assert_array_equal(fin_a, fin_b)
    assert fin_a.sum() > 0
    for name in eng.state.dtype.names:  # field by field (alignment padding is not state)
        np.testing.assert_array_equal(eng.state[name], twin.state[name], err_msg=name)


def test_demo_names_a_winner():
    res = runner.invoke(app, ["demo", "--rounds"])
    assert res.exit_code == 0, res.output
    assert "winner" in res.output
    assert "4 players" in res.output and "6 players" in res.output
    assert "Round 1" in res.output


def test_run_demo_results():
    from io import StringIO

    from rich.console import Console

    from ripmarket_env.app.demo import run_demo

    games = run_demo([4], [3, 4], Console(file=StringIO(), width=100))
    assert len(games) == 2
    for g in games:
        assert g["winners"] and all(0 <= q < 4 for q in g["winners"])
        assert abs(sum(g["rewards"])) < 1e-5
        assert g["rounds"] >= 1 and g["steps"] >= g["rounds"]


def test_bench_train_suite_measures_a_config(tmp_path):
    """--suite train: a training config's learner steps/s, split into env, policy and update,
    and per CPU second of the trainer."""
    import sb3_contrib  # noqa: F401
    from pathlib import Path

    from train.throughput import bench_config

    smoke = Path(__file__).resolve().parent.parent / "configs" / "ripmarket" / "smoke.yaml"
    cfg = bench_config(smoke, 2)
    per = cfg.n_envs * cfg.n_steps
    assert (cfg.total_timesteps, cfg.eval_every, cfg.checkpoint_every, cfg.pretrain.games) == (2 * per, 0, 0, 0)
    assert cfg.league.snapshot_every == per and cfg.league.refresh_every == 0
    out = tmp_path / "train.json"
    res = runner.invoke(app, ["bench", "--suite", "train", "--config", str(smoke), "--rollouts", "2", "--json",
                              "--out", str(out)])
    assert res.exit_code == 0, res.output
    report = json.loads(res.stdout)
    assert report["suite"] == "train" and json.loads(out.read_text()) == report
    r = report["train"]
    assert r["steps"] == 2 * per and r["n_envs"] == cfg.n_envs and r["arch"] == "seat"
    split = r["env_us_per_step"] + r["policy_us_per_step"] + r["update_us_per_step"]
    assert r["training_steps_per_s"] > 0 and split == pytest.approx(1e6 / r["training_steps_per_s"], rel=1e-6)
    assert r["env_runners"] is None  # sb3: no env runners
    # CPU seconds of the same rollouts and updates (every update counted, the last one too)
    assert 0 < r["training_cpu_s"] and r["training_steps_per_cpu_s"] == pytest.approx(r["steps"] / r["training_cpu_s"])
    rllib = smoke.parent / "rllib_ppo_4p.yaml"
    assert bench_config(rllib, 2, "rllib", 2).rllib.num_env_runners == 2
    assert bench_config(rllib, 2, "rllib").rllib.num_env_runners == 0  # the config's
    for bad, msg in ((["--rollouts", "0"], "--rollouts 0 is not allowed"),
                     (["--env-runners", "-1"], "--env-runners -1 is not allowed; give 0 to 1024"),
                     (["--config", str(tmp_path / "none.yaml")], "config file not found")):
        res = runner.invoke(app, ["bench", "--suite", "train", "--config", str(smoke), *bad])
        assert res.exit_code != 0 and msg in res.output


def test_bench_bot_suite_times_single_decisions(tmp_path):
    """--suite bot: every agent decides the same sampled decisions (each with a choice) one at
    a time on one thread; the report gives the per-decision times and the 5 ms target."""
    from eval.latency import TARGET_MS, sample_decisions

    out = tmp_path / "bot.json"
    res = runner.invoke(app, ["bench", "--suite", "bot", "--json", "--agents", "random,greedy", "--players", "3,5",
                              "--decisions", "12", "--out", str(out)])
    assert res.exit_code == 0, res.output
    report = json.loads(res.stdout)
    assert json.loads(out.read_text()) == report and report["suite"] == "bot"
    bot = report["bot"]
    assert bot["threads"]["numba"] == 1 and bot["target"]["p95_ms"] == TARGET_MS
    assert [(r["agent"], r["players"], r["table"], r["rules"]) for r in bot["results"]] == [
        ("random", 3, "3p", {}), ("greedy", 3, "3p", {}), ("random", 5, "5p", {}), ("greedy", 5, "5p", {})]
    assert bot["config"]["tables"] == ["3p", "5p"] and bot["config"]["players"] == [3, 5]
    for r in bot["results"]:
        assert r["decisions"] == 12 and 0 < r["median_ms"] <= r["p95_ms"] <= r["max_ms"]
        assert r["under_target"] == (r["p95_ms"] < TARGET_MS)
    obs, mask = sample_decisions("ripmarket", 5, 12, seed=0)
    assert obs.shape[0] == 12 and (mask.sum(axis=1) >= 2).all()
    again, _ = sample_decisions("ripmarket", 5, 12, seed=0)
    assert np.array_equal(obs, again)


@pytest.mark.parametrize("args, message", [
    (["--agents", "nobody"], "unknown agent 'nobody'"),
    (["--agents", ","], "',' names no agent"),
    (["--agents", "greedy,missing.zip"], "checkpoint file 'missing.zip' does not exist; allowed: a checkpoint file"),
    (["--decisions", "0"], "--decisions 0 is not allowed"),
    (["--players", "11"], "--players"),
    (["--game", "black-market", "--players", "3"], "--players '3' is not allowed for black-market; allowed: 2, 4, 6"),
    (["--game", "chess"], "--game 'chess' is not a registered game"),
])
def test_bench_bot_suite_refuses_bad_options(args, message):
    res = runner.invoke(app, ["bench", "--suite", "bot", *args])
    assert res.exit_code == 2 and message in res.output, res.output
    assert "bot latency" not in res.output  # refused before any work started


@pytest.mark.parametrize("game, agent, tables", [
    ("rune-market", "rm-banker", ["2p", "3p", "4p", "5p", "6p"]),
    ("black-market", "bm-builder", ["2p-teams", "2p-ffa", "4p-teams", "4p-ffa", "6p-teams", "6p-ffa"])])
def test_bench_bot_suite_times_every_table_of_the_game(game, agent, tables):
    """Without --players the bot suite times each table of the game: every count, in each
    mode where the game has modes (BM-1.3); the samples come from that table (its
    observations name it: the game's table keys)."""
    from eval.latency import sample_decisions
    from ripmarket_env.core.spec import observation_tables
    from ripmarket_env.games import get

    res = runner.invoke(app, ["bench", "--suite", "bot", "--json", "--game", game, "--agents", agent,
                              "--decisions", "6"])
    assert res.exit_code == 0, res.output
    rows = json.loads(res.stdout)["bot"]["results"]
    assert [r["table"] for r in rows] == tables and {r["agent"] for r in rows} == {agent}
    assert all(r["decisions"] == 6 and r["p95_ms"] > 0 for r in rows)
    for r in rows:
        obs, _ = sample_decisions(game, r["players"], 6, rules=r["rules"])
        keys = set(observation_tables(get(game), obs))
        assert keys == {r["table"]}, (r, keys)  # the label is the game's table key
    res = runner.invoke(app, ["bench", "--suite", "bot", "--json", "--game", game, "--agents", agent,
                              "--decisions", "3", "--players", "2"])
    assert [r["table"] for r in json.loads(res.stdout)["bot"]["results"]] == [t for t in tables if t.startswith("2p")]


def test_bench_engine_same_schema_every_game():
    """Every registered game reports without and with observations, under the same keys."""
    from ripmarket_env.games import get, ids

    keys = None
    for game in ids():
        P = get(game).default_players
        res = runner.invoke(app, ["bench", "--json", "--suite", "engine", "--game", game, "--players", str(P),
                                  "--batch", "4", "--seconds", "0.05"])
        assert res.exit_code == 0, res.output
        report = json.loads(res.stdout)
        assert report["game"] == game
        assert {(r["players"], r["batch"], r["observations"]) for r in report["results"]} == {(P, 4, False), (P, 4, True)}
        assert all(r["agent_steps"] > 0 for r in report["results"])
        shape = (set(report), set(report["memory"]), frozenset(frozenset(r) for r in report["results"]))
        assert keys is None or shape == keys, game
        keys = shape


def test_bench_peers_json():
    """--peers: ours (without and with observations) and each installed peer in one schema;
    a peer that is not installed is listed as skipped with the reason."""
    import importlib.util

    res = runner.invoke(app, ["bench", "--json", "--suite", "engine", "--players", "4", "--batch", "8",
                              "--seconds", "0.05", "--peers", "--rounds", "2", "--peer-games", "hearts,leduc_poker"])
    assert res.exit_code == 0, res.output
    report = json.loads(res.stdout)
    peers = report["peers"]
    assert peers["config"] == {"game": report["game"], "players": 4, "batch": 8, "seconds_per_slice": 0.05, "rounds": 2,
                               "numba_threads": 1}
    rows = peers["results"]
    engine_keys = set(report["results"][0])
    for r in rows:
        assert engine_keys <= set(r), engine_keys - set(r)
        assert len(r["rounds_steps_per_cpu_sec"]) == 2 and r["agent_steps"] > 0 and r["games_finished"] > 0
        assert r["median_steps_per_cpu_sec"] > 0 and r["cpu_seconds"] > 0
    ours = [(r["name"], r["players"], r["batch"], r["observations"]) for r in rows if r["engine"] == "ours"]
    assert ours == [(report["game"], 4, 8, False), (report["game"], 4, 8, True)]
    skipped = {s["engine"]: s["reason"] for s in peers["skipped"]}
    if importlib.util.find_spec("pyspiel") is not None:
        spiel = {r["name"]: r for r in rows if r["engine"] == "open_spiel"}
        assert set(spiel) == {"hearts", "leduc_poker"}
        assert spiel["hearts"]["players"] == 4 and spiel["hearts"]["batch"] == 1
        assert spiel["hearts"]["steps_per_game_sample"] > 0 and spiel["hearts"]["mean_steps_per_game"] > 13
        assert spiel["leduc_poker"]["players"] == 2
    else:
        assert "not installed" in skipped["open_spiel"]
    pgx = [r for r in rows if r["engine"] == "pgx"]
    if importlib.util.find_spec("pgx") is not None:
        assert len(pgx) == 1 and pgx[0]["batch"] == 8 and pgx[0]["name"] == "leduc_holdem"
    else:
        assert pgx == [] and "pgx is not installed" in skipped["pgx"]
    assert [r["observations"] for r in peers["ratios"]] == [False, True]
    assert [r["target"] for r in peers["ratios"]] == [5.0, 2.5]
    best = max((r for r in rows if r["engine"] != "ours"), key=lambda r: r["median_steps_per_cpu_sec"])
    for r, mine in zip(peers["ratios"], rows[:2]):
        assert r["best_peer"] == f"{best['engine']}:{best['name']}"
        assert r["ratio_per_cpu_sec"] == pytest.approx(mine["median_steps_per_cpu_sec"] / best["median_steps_per_cpu_sec"])
        assert r["met"] == (r["ratio_per_cpu_sec"] >= r["target"])


def test_bench_peers_bad_input():
    res = runner.invoke(app, ["bench", "--suite", "env", "--peers"])
    assert res.exit_code != 0 and "--peers" in res.output and "allowed with: engine" in res.output
    res = runner.invoke(app, ["bench", "--suite", "engine", "--peers", "--rounds", "0"])
    assert res.exit_code != 0 and "--rounds 0 is not allowed" in res.output
    pytest.importorskip("pyspiel")
    res = runner.invoke(app, ["bench", "--suite", "engine", "--peers", "--peer-games", "hearts,nosuchgame"])
    assert res.exit_code != 0 and "'nosuchgame'" in res.output and "hearts" in res.output


def test_bench_plot_draws_the_engine_report(tmp_path):
    """--plot: the engine report as a chart; each bar is a rate of the JSON report (the grid
    per table and batch, without then with observations; with --peers every contender's
    median) and the targets are lines at 5x and 2.5x the best peer."""
    import importlib.util

    from ripmarket_env.app.benchplot import figure

    png = tmp_path / "new" / "engine.png"
    args = ["bench", "--json", "--suite", "engine", "--players", "4", "--batch", "8,16", "--seconds", "0.05",
            "--peers", "--rounds", "1", "--plot", str(png)]
    if importlib.util.find_spec("pyspiel") is not None:
        args += ["--peer-games", "leduc_poker"]
    res = runner.invoke(app, args)
    assert res.exit_code == 0, res.output
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000
    report = json.loads(res.stdout)
    grid, peers = figure(report).axes
    rate = {(r["batch"], r["observations"]): r["steps_per_cpu_sec"] / 1e6 for r in report["results"]}
    assert [b.get_height() for b in grid.patches] == pytest.approx(
        [rate[8, False], rate[16, False], rate[8, True], rate[16, True]])
    medians = sorted(r["median_steps_per_cpu_sec"] / 1e6 for r in report["peers"]["results"])
    assert [b.get_width() for b in peers.patches] == pytest.approx(medians)
    lines = [ln.get_xdata()[0] for ln in peers.get_lines()]
    others = [r for r in report["peers"]["results"] if r["engine"] != "ours"]
    if others:
        best = max(r["median_steps_per_cpu_sec"] for r in others) / 1e6
        assert lines == pytest.approx([5 * best, 2.5 * best])
    else:  # no peer installed: nothing to draw a target against
        assert lines == []


@pytest.mark.parametrize("args, message", [
    (["--suite", "env", "--plot", "x.png"], "--plot is not allowed with --suite env; allowed with: engine, all"),
    (["--suite", "bot", "--plot", "x.png"], "--plot is not allowed with --suite bot; allowed with: engine, all"),
    (["--suite", "train", "--plot", "x.png"], "--plot is not allowed with --suite train; allowed with: engine, all"),
    (["--suite", "bot", "--peers"], "--peers and --peer-games are not allowed with --suite bot"),
    (["--suite", "train", "--peer-games", "hearts"], "--peers and --peer-games are not allowed with --suite train"),
    (["--suite", "engine", "--plot", "x.txt"], "give a file ending in .png, .svg, .pdf"),
    (["--suite", "train", "--batch", "8"], "--batch is not allowed with --suite train; allowed with: engine, all"),
    (["--suite", "train", "--players", "4"], "--players is not allowed with --suite train; allowed with: engine, env, all, bot"),
    (["--suite", "train", "--game", "rune-market"], "--game is not allowed with --suite train"),
    (["--suite", "engine", "--num-envs", "64"], "--num-envs is not allowed with --suite engine; allowed with: env, all"),
    (["--suite", "bot", "--seconds", "1"], "--seconds is not allowed with --suite bot; allowed with: engine, env, all"),
    (["--suite", "env", "--rollouts", "3"], "--rollouts is not allowed with --suite env; allowed with: train"),
    (["--suite", "all", "--agents", "greedy"], "--agents is not allowed with --suite all; allowed with: bot"),
    (["--suite", "engine", "--decisions", "5"], "--decisions is not allowed with --suite engine; allowed with: bot"),
    (["--suite", "engine", "--rounds", "2"], "--rounds is read only with --peers"),
    (["--suite", "all", "--peer-games", "hearts"], "--peer-games is read only with --peers"),
])
def test_bench_plot_and_peers_bad_input(tmp_path, args, message):
    res = runner.invoke(app, ["bench", *[str(tmp_path / a) if a.startswith("x.") else a for a in args]])
    assert res.exit_code == 2 and message in res.output, res.output
    assert list(tmp_path.iterdir()) == []


def test_bench_plot_refuses_a_directory_before_the_bench(tmp_path):
    d = tmp_path / "chart.png"
    d.mkdir()
    res = runner.invoke(app, ["bench", "--suite", "engine", "--plot", str(d)])
    assert res.exit_code == 2 and "is a folder, not a file; give a file name" in res.output, res.output
    assert "without observations" not in res.output  # refused before any configuration ran


def _bench_script(name: str):
    """``benchmarks/<name>.py`` (a script, not a package module): its path and the module."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "benchmarks" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return path, mod


def test_alternate_refuses_a_bad_side_or_option(tmp_path):
    """``benchmarks/alternate.py`` names what was wrong before it starts any worker."""
    _, mod = _bench_script("alternate")
    assert mod.parse_side("ripmarket:6") == ("ripmarket", 6, None)
    for bad in ("ripmarket", "ripmarket:six", ":6", f"ripmarket:6@{tmp_path}"):
        with pytest.raises(SystemExit, match="GAME:PLAYERS|not a checkout"):
            mod.parse_side(bad)
    with pytest.raises(SystemExit, match="unknown game 'nosuch'.*registered games"):
        mod.parse_side("nosuch:4")
    with pytest.raises(SystemExit, match="num_players=11 is not allowed; allowed: an integer from 2 to 10"):
        mod.parse_side("ripmarket:11")
    with pytest.raises(SystemExit, match="--runs, --pairs and --batch"):
        mod.main(["ripmarket:2", "ripmarket:2", "--pairs", "0"])


def test_alternate_reports_each_run_and_the_median(tmp_path):
    """Two workers of this checkout (two games) take turns; the JSON report holds one
    ratio per pair, each run's median and the median of the runs (no speed asserted)."""
    import subprocess
    import sys

    path, _ = _bench_script("alternate")
    res = subprocess.run(
        [sys.executable, str(path), "rune-market:2", "black-market:2", "--runs", "2", "--pairs", "3",
         "--slice", "0.01", "--batch", "8", "--observations", "both", "--json"],
        capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr[-2000:]
    report = json.loads(res.stdout)
    assert [r["observations"] for r in report["results"]] == ["without", "with"]
    for r in report["results"]:
        assert len(r["runs"]) == 2
        for run in r["runs"]:
            assert len(run["ratios"]) == 3 and all(x > 0 for x in run["ratios"])
            assert run["median_ratio_b_over_a"] == sorted(run["ratios"])[1]
        medians = sorted(run["median_ratio_b_over_a"] for run in r["runs"])
        assert r["median_ratio_b_over_a"] == pytest.approx(sum(medians) / 2)


def test_instructions_refuses_a_bad_table_or_option_before_valgrind(monkeypatch):
    """``benchmarks/instructions.py`` names what was wrong before any counted run, and
    a game without PLAYERS is counted at its default table."""
    _, mod = _bench_script("instructions")
    monkeypatch.setattr(mod, "count", lambda *a: pytest.fail("counted despite bad input"))
    assert mod.parse_table("ripmarket:6") == ("ripmarket", 6)
    assert mod.parse_table("rune-market") == ("rune-market", 4)
    for bad, message in (("ripmarket:x", "is not GAME\\[:PLAYERS\\]"), (":4", "is not GAME"),
                         ("nosuch:4", "unknown game 'nosuch'.*registered games"),
                         ("ripmarket:11", "num_players=11 is not allowed; allowed: an integer from 2 to 10")):
        with pytest.raises(SystemExit, match=message):
            mod.main([bad])
    with pytest.raises(SystemExit, match="--games and --steps must be at least 1"):
        mod.main(["ripmarket:6", "--steps", "0"])
    monkeypatch.setattr(mod.shutil, "which", lambda name: None)
    with pytest.raises(SystemExit, match="valgrind is not on PATH"):
        mod.main(["ripmarket:6"])


def test_instructions_counts_only_unnamed_code_and_divides_by_the_steps_between(tmp_path):
    """Only the events of code without a file and function name (the compiled kernels) are
    summed; the per-step figures are the longer run's less the shorter one's."""
    _, mod = _bench_script("instructions")
    out = tmp_path / "cachegrind.out"
    out.write_text("events: Ir Bc Bcm Bi Bim\n"
                   "fl=/usr/lib/libc.so\nfn=memset\n0 1000 10 1 0 0\n"
                   "fl=???\nfn=???\n0 300 40 5 2 1\n0 100 10 1 0 0\n"
                   "fl=???\nfn=PyObject_Malloc\n0 7777 7 7 7 7\n"
                   "fl=???\nfn=???\n0 600 50 4 2 1\n"
                   "summary: 9777 117 18 11 9\n")
    assert mod._compiled(out) == {"Ir": 1000, "Bc": 100, "Bcm": 10, "Bi": 4, "Bim": 2}
    lo = {"Ir": 1000, "Bc": 100, "Bcm": 10, "Bi": 4, "Bim": 2}
    hi = {"Ir": 3000, "Bc": 300, "Bcm": 30, "Bi": 14, "Bim": 3}
    assert mod.per_step(lo, hi, 100) == {"instructions": 20.0, "cond_branches": 2.0, "cond_mispredicted_sim": 0.2,
                                         "indirect_branches": 0.1, "indirect_mispredicted_sim": 0.01}
    (tmp_path / "empty.out").write_text("events: Ir Bc Bcm Bi Bim\nfl=x.c\nfn=main\n0 5 0 0 0 0\n")
    with pytest.raises(RuntimeError, match="no events in unnamed code"):
        mod._compiled(tmp_path / "empty.out")
