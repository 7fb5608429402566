"""sb3-contrib MaskablePPO trains on the single-agent env and on the batched VecEnv,
saves, reloads and predicts legal actions with masks (a smoke run, a few thousand steps).

Each test takes under a minute once numba's cache is warm: about 40 s (single env, most
of it MaskablePPO's per-step policy calls) and 10 s (vector env) on a 2-core machine
shared with other jobs. The budget is not asserted: wall time on a shared machine is not
the code's to promise.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from sb3_contrib import MaskablePPO
from sb3_contrib.common.maskable.utils import get_action_masks

from ripmarket_env.gym_env import RipMarketEnv
from ripmarket_env.vector_env import RipMarketVecEnv

@pytest.fixture(autouse=True)
def one_torch_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def _check_reloaded(model, path, obs, masks, env=None):
    model.save(path)
    loaded = MaskablePPO.load(path, env=env, device="cpu")
    actions, _ = loaded.predict(obs, action_masks=masks, deterministic=True)
    again, _ = model.predict(obs, action_masks=masks, deterministic=True)
    np.testing.assert_array_equal(actions, again)  # same weights after the round trip
    return np.atleast_1d(actions)


def test_maskable_ppo_single_env(tmp_path):
    env = RipMarketEnv(num_players=4, learner_seat="random")
    model = MaskablePPO("MlpPolicy", env, n_steps=256, batch_size=64, n_epochs=2, seed=0, device="cpu",
                        policy_kwargs=dict(net_arch=[64, 64]))
    model.learn(total_timesteps=2048)
    assert model.num_timesteps >= 2048
    obs, info = env.reset(seed=1)
    for _ in range(20):
        masks = env.action_masks()
        (action,) = _check_reloaded(model, tmp_path / "single.zip", obs, masks)
        assert masks[int(action)], "the masked policy chose an illegal action"
        obs, reward, terminated, truncated, info = env.step(int(action))
        if terminated:
            obs, info = env.reset()


def test_maskable_ppo_vector_env(tmp_path):
    venv = RipMarketVecEnv(num_envs=16, num_players=4, learner_seat="random", seed=0)
    model = MaskablePPO("MlpPolicy", venv, n_steps=128, batch_size=256, n_epochs=2, seed=0, device="cpu",
                        policy_kwargs=dict(net_arch=[64, 64]))
    model.learn(total_timesteps=4096)
    assert model.num_timesteps >= 4096
    obs = venv.reset()
    for _ in range(10):
        masks = get_action_masks(venv)
        actions = _check_reloaded(model, tmp_path / "vec.zip", obs, masks, env=venv)
        assert masks[np.arange(16), actions].all(), "the masked policy chose an illegal action"
        obs, rewards, dones, infos = venv.step(actions)
