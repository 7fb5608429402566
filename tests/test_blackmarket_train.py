"""The Black Market training script's opponent split (train/blackmarket_ppo.py): each game
row plays one opponent for a whole game, rows shared by the configured weights, and in
team mode the learner's teammates are the given teammate agent."""

from types import SimpleNamespace

import numpy as np

from train.blackmarket_ppo import PerGameOpponents


class Constant:
    """Answers every decision with its own number (to see who decided)."""

    def __init__(self, k):
        self.k = k
        self.calls = 0

    def act_batch(self, obs, masks):
        self.calls += 1
        return np.full(len(obs), self.k, np.int64)


def test_rows_split_by_weights_and_fixed_per_row():
    pool = [Constant(10), Constant(20), Constant(30)]
    mix = PerGameOpponents(pool, [0.5, 0.25, 0.25], num_envs=64, seed=3)
    assert np.bincount(mix.row, minlength=3).tolist() == [32, 16, 16]
    batch = SimpleNamespace()
    mix.install(batch)
    idx = np.arange(64)
    obs, masks = np.zeros((64, 4), np.float32), np.ones((64, 5), bool)
    first = batch._opponent_actions(idx, np.zeros(64, np.int64), obs, masks)
    again = batch._opponent_actions(idx[::-1], np.zeros(64, np.int64), obs, masks)
    assert (first == np.array([10, 20, 30])[mix.row]).all()
    assert (again == first[::-1]).all()  # a row keeps its opponent


def test_teammate_takes_the_learners_side():
    pool, mate = [Constant(10), Constant(20)], Constant(99)
    mix = PerGameOpponents(pool, [1, 1], num_envs=8, seed=0, teammate=mate)
    batch = SimpleNamespace()
    mix.install(batch)
    # 4 players: the deciders sit rel + 1 = 1, 2, 3 seats after the learner; 2 is its teammate
    idx = np.array([0, 0, 0, 5, 5, 5])
    rel = np.array([0, 1, 2, 0, 1, 2])
    out = batch._opponent_actions(idx, rel, np.zeros((6, 4), np.float32), np.ones((6, 5), bool))
    side = np.array([10, 20])[mix.row[idx]]
    assert out.tolist() == [side[0], 99, side[2], side[3], 99, side[5]]


def test_recorded_heuristic_games_for_the_warm_start():
    """The warm start's recording: decisions with a choice only, each action legal, the
    reward that of the decider's side (BM-1.2: seats 0 and 2 against 1 and 3)."""
    from train.blackmarket_ppo import record_heuristics

    data = record_heuristics(4, "teams", ["bm-denier", "bm-builder"], games=12, seed=5)
    assert len(data) > 12 * 10
    assert (data.mask.sum(axis=1) >= 2).all()
    assert data.mask[np.arange(len(data)), data.action].all()
    assert set(np.unique(data.reward)) <= {-1.0, 1.0}
    assert set(np.unique(data.style)) == {0, 1}
    again = record_heuristics(4, "teams", ["bm-denier", "bm-builder"], games=12, seed=5)
    assert (again.action == data.action).all() and (again.obs == data.obs).all()  # seeded


def test_a_stage_resumes_from_the_weights_without_unpickling(tmp_path):
    """``load_trainable`` gives a model with the checkpoint's weights, its optimizer state,
    the new stage's learning rate and the checkpoint's step count."""
    import json

    import torch

    from agents.blackmarket.policy import CHECKPOINTS, load_agent
    from ripmarket_env.envs.vector import vec_env_classes
    from ripmarket_env.games import get
    from train.blackmarket_ppo import load_trainable

    ship = CHECKPOINTS / "bm-ppo-2p.zip"
    meta = json.loads(ship.with_suffix(".json").read_text())
    Vec = vec_env_classes(get("black-market"))[0]
    env = Vec(seed=1, num_envs=2, num_players=2, rules={"num_players": 2, "mode": "teams"}, learner_seat="random")
    model = load_trainable(ship, meta, env, seed=1, n_steps=8, batch_size=16, learning_rate=5e-5)
    ref = load_agent(ship).policy.state_dict()
    assert all(torch.equal(v, ref[k]) for k, v in model.policy.state_dict().items())
    assert model.num_timesteps == meta["steps"]
    assert model.policy.optimizer.state  # the saved Adam moments came along
    model.learn(16, reset_num_timesteps=False)
    assert model.policy.optimizer.param_groups[0]["lr"] == 5e-5
    bad = tmp_path / "bad.zip"
    bad.write_bytes(ship.read_bytes()[:1000])
    bad.with_suffix(".json").write_text(json.dumps(meta))
    import pytest

    from agents.checkpoint import CheckpointError

    with pytest.raises(CheckpointError, match="not a readable checkpoint"):
        load_trainable(bad, meta, env, seed=1, n_steps=8, batch_size=16, learning_rate=5e-5)


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


def test_a_tiny_recipe_runs_end_to_end(tmp_path):
    """Stage 1 (warm start only) then stage 2 (PPO from it, selection on the weakest of two
    matches) write loadable checkpoints whose metadata keep both stages and the selection."""
    import json

    import yaml

    from agents.blackmarket.policy import load_agent
    from train.blackmarket_ppo import main

    common = {"num_players": 4, "mode": "teams", "num_envs": 4, "n_steps": 16, "batch_size": 32, "n_epochs": 1,
              "learning_rate": 1e-4, "gamma": 0.99, "gae_lambda": 0.95, "ent_coef": 0.0, "net_arch": [16]}
    s1 = {**common, "seed": 1, "minutes": 0, "out": str(tmp_path / "s1" / "bot.zip"),
          "pretrain": {"games": 6, "seed": 2, "agents": ["bm-denier", "bm-rusher"], "epochs": 1},
          "select": {"against": "bm-rusher", "seed": 3, "games": 4, "every": 1}}
    s2 = {**common, "seed": 4, "minutes": 0.05, "init": s1["out"], "out": str(tmp_path / "s2" / "bot.zip"),
          "teammate": "self", "opponents": ["bm-builder", "snapshot"], "opponent_weights": [0.5, 0.5],
          "opponent_per_game": True, "select": {"against": ["bm-builder", "random"], "seed": 3, "games": 4, "every": 1}}
    for name, cfg in (("s1.yaml", s1), ("s2.yaml", s2)):
        (tmp_path / name).write_text(yaml.safe_dump(cfg))
        main(["--config", str(tmp_path / name)])
    meta = json.loads((tmp_path / "s2" / "bot.json").read_text())
    assert [st["config"]["seed"] for st in meta["stages"]] == [1, 4]
    assert set(meta["selection"]["by_opponent"]) == {"bm-builder", "random"}
    assert meta["selection"]["win_rate"] == min(meta["selection"]["by_opponent"].values())
    lines = [json.loads(x) for x in (tmp_path / "s2" / "bot.log.jsonl").read_text().splitlines()]
    assert len(lines) >= 2 and lines[-1]["steps"] > lines[0]["steps"]  # PPO chunks ran after the start
    assert all(x["worst"] in ("bm-builder", "random") for x in lines)
    bot = load_agent(tmp_path / "s2" / "bot.zip")
    assert bot.metadata["num_players"] == 4
