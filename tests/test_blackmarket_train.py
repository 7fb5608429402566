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
