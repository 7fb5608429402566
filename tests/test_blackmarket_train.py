"""Black Market through the one trainer (``ripmarket train``, ``game: black-market``): a
tiny 4-player team run with its league and warm start, resumed; the warm start's recording
of the heuristics; the retired per-game trainer's configs moved to the one schema."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

from train_run import ROOT, train_and_resume  # noqa: E402


def test_a_team_run_trains_with_its_league_and_resumes(tmp_path):
    """BM-1.3 teams: the learner's teammate is a league seat like its opponents; the run
    snapshots, evaluates against the game's heuristics (its agents' profile), writes its
    checkpoints as Black Market's, and ``--resume`` goes on from the latest one."""
    from agents.checkpoint import load_policy
    from agents.policy import load_agent

    run = train_and_resume("black-market", tmp_path)
    m1, m2 = run["meta1"], run["meta2"]
    assert m1["game"] == m2["game"] == "black-market" and m1["num_players"] == [4]
    assert m1["config"]["rules"] == {"mode": "teams"}
    assert m1["config"]["league"]["eval_zoo"] == ["bm-builder", "bm-denier", "bm-rusher"]
    assert m1["training_steps"] == 256 and m2["training_steps"] == 512
    s1, s2 = run["summary1"], run["summary2"]
    assert s1["pretrain"]["decisions"] > 0 and "pretrain" not in s2  # the warm start only once
    assert len(s1["evals"]) >= 2 and s1["final_eval"]["zoo"] == ["bm-builder", "bm-denier", "bm-rusher"]
    assert (run["first"] / "learning_curve.png").is_file()
    assert run["first"].name.startswith("black-market__smoke__1__")
    load_policy(run["second"] / "final.zip")  # checked against Black Market's layout
    bot = load_agent(run["second"] / "final.zip", seed=0)
    from eval import arena
    from ripmarket_env.games import get

    spec = get("black-market")
    import agents

    pool = [bot, agents.make_seeded("bm-rusher", 1, game="black-market")]
    res = arena.play(spec, spec.make_rules(4, mode="teams"), [5, 6], np.array([[0, 1, 0, 1], [1, 0, 1, 0]]), pool)
    assert res.engine.terminated.all()  # legal actions only (the arena raises on an illegal one)


def test_recorded_heuristic_games_for_the_warm_start():
    """The warm start's recording (``train.distill.collect`` for the game): decisions with a
    choice only, each action legal, the reward that of the decider's side (BM-1.2: seats 0
    and 2 against 1 and 3), seeded."""
    from train.distill import collect

    kw = dict(styles=("bm-denier", "bm-builder"), seed=5, workers=1, progress=False, game="black-market")
    data = collect(4, 12, **kw)
    assert len(data) > 12 * 10
    assert (data.mask.sum(axis=1) >= 2).all()
    assert data.mask[np.arange(len(data)), data.action].all()
    assert set(np.unique(data.reward)) <= {-1.0, 1.0}
    assert set(np.unique(data.style)) == {0, 1}
    again = collect(4, 12, **kw)
    assert (again.action == data.action).all() and (again.obs == data.obs).all()


def test_the_recipes_use_the_one_schema():
    """The bm-ppo-* recipes are configs of the one trainer (``game: black-market``, the
    mode, BM-1.3's teams or free-for-all, as a rules field); the retired per-game trainer
    is gone."""
    from train.config import load_config

    for path in sorted((ROOT / "configs" / "black-market").rglob("*.yaml")):
        cfg = load_config(path)
        assert cfg.game == "black-market" and cfg.rules.get("mode") in ("teams", "ffa"), path
    assert not (ROOT / "train" / "blackmarket_ppo.py").exists()


def test_trainers_spin_briefly_then_sleep():
    """Importing the training package sets GOMP_SPINCOUNT=5000 (before numba or torch
    load OpenMP: idle workers spin briefly, then sleep) unless the user chose a wait
    policy or a spin count."""
    import os
    import subprocess
    import sys

    code = "import train, os; print(os.environ.get('GOMP_SPINCOUNT'), os.environ.get('OMP_WAIT_POLICY'))"
    base = {k: v for k, v in os.environ.items() if k not in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")}

    def run(**extra):
        return subprocess.run([sys.executable, "-c", code], env={**base, **extra}, capture_output=True, text=True,
                              check=True).stdout.split()

    assert run() == ["5000", "None"]
    assert run(OMP_WAIT_POLICY="PASSIVE") == ["None", "PASSIVE"]
    assert run(GOMP_SPINCOUNT="100") == ["100", "None"]


def test_a_distilled_zoo_of_the_game_plays_and_is_refreshed_in_the_league(tmp_path):
    """``ripmarket distill --game black-market`` imitates the game's heuristics; a config of
    the game names the imitations ``<heuristic>-bc`` with ``league.zoo_init`` (they are not
    registered agents), and the league refreshes them against the learner (DAgger), saving
    the refreshed zoo beside the checkpoints as Black Market's. Another game's zoo file and
    an imitation without its file are refused with one line."""
    import yaml
    from typer.testing import CliRunner

    from agents.checkpoint import CheckpointError
    from agents.distilled import load
    from ripmarket_env.app.cli import app
    from train.config import ConfigError, config_from_dict

    zoo = tmp_path / "bm-zoo.pt"
    runner = CliRunner()
    rec = tmp_path / "bm-games.npz"
    res = runner.invoke(app, ["distill", "--game", "black-market", "--players", "4", "--games", "6", "--epochs", "1",
                              "--workers", "1", "--out", str(zoo), "--recording", str(rec)])
    assert res.exit_code == 0, res.output[-2000:]
    res = runner.invoke(app, ["distill", "--recording", str(rec), "--out", str(tmp_path / "x.pt")])  # R.I.P. Market's
    assert res.exit_code == 2 and "a recording of another game" in " ".join(res.output.split())
    assert not (tmp_path / "x.pt").exists()
    net, meta = load(zoo, game="black-market")
    assert meta["game"] == "black-market" and meta["styles"] == ["bm-builder", "bm-denier", "bm-rusher"]
    with pytest.raises(CheckpointError, match="distilled zoo of game 'black-market', not 'ripmarket'"):
        load(zoo)
    cfg = yaml.safe_load((ROOT / "configs" / "black-market" / "smoke.yaml").read_text())
    cfg.pop("pretrain")
    cfg["league"].update(zoo=["bm-builder-bc", "bm-rusher-bc"], zoo_init=str(zoo), refresh_every=128,
                         refresh_games=2, refresh_base_games=2, refresh_epochs=1)
    cfg.update(eval_every=0, final_eval_games=0)
    with pytest.raises(ConfigError, match="league.zoo.*bm-builder-bc.*with league.zoo_init"):
        config_from_dict({**cfg, "league": {**cfg["league"], "zoo_init": ""}})
    (tmp_path / "bc.yaml").write_text(yaml.safe_dump(cfg))
    res = runner.invoke(app, ["train", str(tmp_path / "bc.yaml"), "--out", str(tmp_path / "run")])
    assert res.exit_code == 0, res.output[-3000:]
    assert "zoo refresh 2 at 256 steps" in " ".join(res.output.split())
    (run,) = (tmp_path / "run" / "checkpoints").iterdir()
    refreshed, rmeta = load(run / "zoo-bc.pt", game="black-market")
    assert rmeta["refreshes"] == 2 and rmeta["styles"] == meta["styles"]
    assert any((a != b).any() for a, b in zip(refreshed.state_dict().values(), net.state_dict().values()))
    other = dict(cfg, game="rune-market", rules={})
    other["league"] = dict(cfg["league"], zoo=["rm-banker-bc"])
    (tmp_path / "rm.yaml").write_text(yaml.safe_dump(other))
    res = runner.invoke(app, ["train", str(tmp_path / "rm.yaml"), "--out", str(tmp_path / "rm")])
    assert res.exit_code == 2 and "distilled zoo of game 'black-market', not 'rune-market'" in " ".join(res.output.split())


def test_distill_records_the_mode_it_is_given(tmp_path):
    """``ripmarket distill --mode ffa`` records free-for-all games (BM-1.3's other mode: each
    seat for itself, so the decider's reward is its own, not its side's) and writes the mode
    into the zoo's metadata; a mode the game lacks, or a game without modes, is refused
    with the allowed values before anything is recorded."""
    from typer.testing import CliRunner

    from agents.distilled import load
    from ripmarket_env.app.cli import app
    from train.distill import load_decisions

    runner = CliRunner()
    zoo, rec = tmp_path / "ffa.pt", tmp_path / "ffa.npz"
    base = ["distill", "--game", "black-market", "--players", "4", "--games", "12", "--epochs", "1", "--workers", "1"]
    res = runner.invoke(app, base + ["--mode", "ffa", "--out", str(zoo), "--recording", str(rec)])
    assert res.exit_code == 0, res.output[-2000:]
    _, meta = load(zoo, game="black-market")
    assert meta["mode"] == "ffa"
    ffa = load_decisions(rec)
    res = runner.invoke(app, base + ["--out", str(tmp_path / "teams.pt"), "--recording", str(tmp_path / "teams.npz")])
    assert res.exit_code == 0, res.output[-2000:]
    teams = load_decisions(tmp_path / "teams.npz")
    # in teams two seats share each win (BM-1.2): half the decisions are a winner's;
    # in free-for-all one seat of four wins
    assert (teams.reward > 0).mean() > 0.4 and (ffa.reward > 0).mean() < 0.35, ((teams.reward > 0).mean(), (ffa.reward > 0).mean())
    for extra, says in ((["--mode", "solo"], "allowed: teams, ffa"),):
        res = runner.invoke(app, base + extra + ["--out", str(tmp_path / "bad.pt")])
        assert res.exit_code == 2 and says in " ".join(res.output.split()), res.output
    res = runner.invoke(app, ["distill", "--game", "rune-market", "--players", "2", "--games", "2", "--mode", "ffa",
                              "--out", str(tmp_path / "rm.pt")])
    assert res.exit_code == 2 and "has no modes" in " ".join(res.output.split()), res.output
    assert not (tmp_path / "bad.pt").exists() and not (tmp_path / "rm.pt").exists()


def test_teammate_self_plays_the_learners_side():
    """``league.teammate`` (BM-1.3 teams, from the game's ``extras["sides"]``): the seat two
    after the learner, its teammate at 4 players, is the learner's own live policy
    ("self") in every game, the other seats league draws; refused for free-for-all."""
    from train.config import ConfigError, config_from_dict
    from train.selfplay import League, build_model, make_league_vec_env

    base = {"game": "black-market", "num_players": 4, "n_envs": 16, "n_steps": 8, "batch_size": 32,
            "policy": {"arch": "mlp", "net_arch": [8]},
            "league": {"mix": {"zoo": 1.0, "self": 0.0, "random": 0.0}, "teammate": "self"}}
    cfg = config_from_dict(base)
    league = League(cfg, seed=1)
    env = make_league_vec_env(cfg, league, 1)
    model = build_model(cfg, env)
    league.set_learner(model.policy)
    env.reset()
    b = env.batch
    assert (b.lineup[:, 1] == league.mate).all() and set(b.lineup[:, [0, 2]].ravel()) <= set(league.zoo_ids)
    assert league.agents[league.mate].policy is model.policy
    model.learn(64)  # the live policy plays its teammates' seats through the rollouts
    with pytest.raises(ConfigError, match="league.teammate.*no teams"):
        config_from_dict({**base, "rules": {"mode": "ffa"}})
    with pytest.raises(ConfigError, match="league.teammate.*no teams"):
        config_from_dict({**base, "game": "rune-market", "rules": {}})
    with pytest.raises(ConfigError, match="league.teammate.*self"):
        config_from_dict({**base, "league": {"teammate": "greedy"}})


def test_whole_tables_seat_one_draw_at_every_opponent_seat():
    """``league.whole_tables``: that share of the new episodes (BM-1.3 free-for-all, 4
    players) seats one draw at all three opponent seats, as the evaluations seat a table
    of one heuristic; the other episodes draw each seat on its own; 0 keeps the per-seat
    draws (and their random stream) as before; outside [0, 1] is refused."""
    from train.config import ConfigError, config_from_dict
    from train.selfplay import League

    base = {"game": "black-market", "num_players": 4, "rules": {"mode": "ffa"},
            "league": {"mix": {"zoo": 1.0, "self": 0.0, "random": 0.0},
                       "zoo": ["bm-builder", "bm-rusher", "bm-denier"]}}
    per_seat = League(config_from_dict(base), seed=3).draw((4000, 3))
    alike = (per_seat == per_seat[:, :1]).all(axis=1)
    assert 0.05 < alike.mean() < 0.2  # 1/9 of the tables by chance
    cfg = config_from_dict({**base, "league": {**base["league"], "whole_tables": 0.5}})
    lineup = League(cfg, seed=3).draw((4000, 3))
    alike = (lineup == lineup[:, :1]).all(axis=1)
    assert 0.5 < alike.mean() < 0.62  # half by the option, a ninth of the rest by chance
    assert set(lineup[alike, 0]) == set(League(cfg, seed=3).zoo_ids)  # every heuristic gets whole tables
    zero = config_from_dict({**base, "league": {**base["league"], "whole_tables": 0.0}})
    assert (League(zero, seed=3).draw((4000, 3)) == per_seat).all()
    all_whole = config_from_dict({**base, "league": {**base["league"], "whole_tables": 1.0}})
    assert (League(all_whole, seed=3).draw((500, 3)) == League(all_whole, seed=3).draw((500, 3))[:, :1]).all()
    with pytest.raises(ConfigError, match=r"league.whole_tables.*1.5.*\[0.0, 1.0\]"):
        config_from_dict({**base, "league": {**base["league"], "whole_tables": 1.5}})
