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


def test_trainers_let_idle_openmp_workers_sleep():
    """Importing the training package sets OMP_WAIT_POLICY=PASSIVE (before numba or torch
    load OpenMP) unless the user chose a policy."""
    import os
    import subprocess
    import sys

    code = "import train, os; print(os.environ['OMP_WAIT_POLICY'])"
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    assert subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          check=True).stdout.strip() == "PASSIVE"
    env["OMP_WAIT_POLICY"] = "ACTIVE"
    assert subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          check=True).stdout.strip() == "ACTIVE"
