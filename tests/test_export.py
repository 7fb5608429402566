"""Torch-only exports of the shipped checkpoints: torch.jit.load alone plays the same
moves as the zoo's agent (agents/export.py)."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")


def test_exported_ppo_6p_plays_as_the_agent(tmp_path):
    import agents
    from agents.export import export_policy
    from ripmarket_env.vector_env import RipMarketVecEnv

    bot = agents.make("ppo-6p")
    venv = RipMarketVecEnv(num_envs=64, num_players=6, seed=0)
    obs = venv.reset()
    path = export_policy(bot, tmp_path / "ppo-6p.ts", venv.observation_space.shape[0], venv.action_space.n)
    policy = torch.jit.load(str(path))  # a user's few lines: torch only
    rng = np.random.default_rng(0)
    for _ in range(5):
        masks = venv.action_masks()
        with torch.no_grad():
            logits = policy(torch.from_numpy(obs.copy()), torch.from_numpy(masks))
        exported = logits.argmax(-1).numpy()
        np.testing.assert_array_equal(exported, bot.act_batch(obs, masks))
        assert all(masks[i, a] == 1 for i, a in enumerate(exported))
        assert torch.isinf(logits[torch.from_numpy(masks) == 0]).all()
        keys = rng.random(masks.shape); keys[masks == 0] = -1
        obs, *_ = venv.step(keys.argmax(1))
