"""The Rune Market through the zoo's generic faces: PettingZoo AEC (api_test, seed_test at
2, 3, 4 and 6 players), the single-agent Gymnasium env (the learner's defend decisions),
the vector env, renders, records."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
from pettingzoo.test import api_test, seed_test

import ripmarket_env
from ripmarket_env.games import get

SPEC = get("rune-market")


@pytest.mark.parametrize("P", [2, 3, 4, 6])
def test_pettingzoo_api_and_seed(P):
    env = ripmarket_env.make("rune-market", num_players=P)
    assert env.metadata["name"] == "rune_market_v0"
    api_test(env, num_cycles=100)
    seed_test(lambda: ripmarket_env.make("rune-market", num_players=P), num_cycles=100)


def test_gym_learner_gets_its_defend_decisions():
    """The single-agent face hands the learner every decision of its seat, a defence during
    an opponent's turn included (phase "defend" with the learner not the turn player)."""
    env = gymnasium.make("RuneMarket-v0", num_players=4, learner_seat=0)
    rng = np.random.default_rng(0)
    defended = 0
    for ep in range(30):
        obs, info = env.reset(seed=ep)
        done = False
        while not done:
            if SPEC.phase_names[info["phase_id"]] == "defend":
                st = env.unwrapped.engine.state[0]
                assert int(st["actor"]) == 0 and int(st["turn_player"]) != 0
                defended += 1
            a = int(rng.choice(np.flatnonzero(info["action_mask"])))
            obs, rew, done, trunc, info = env.step(a)
            assert obs.shape == (191,)
        if defended:
            break
    assert defended > 0
    assert rew in (1.0, -1.0 / 3) or abs(rew) < 1.0 + 1e-6


def test_vector_env_random_legal_play():
    from ripmarket_env.envs.vector import vec_env_classes

    vec, _ = vec_env_classes(SPEC)
    venv = vec(num_envs=8, num_players=3, seed=1)
    obs = venv.reset()
    assert obs.shape == (8, 191)
    ends = 0
    rng = np.random.default_rng(0)
    for _ in range(1500):
        m = venv.action_masks()
        acts = np.array([rng.choice(np.flatnonzero(row)) for row in m])
        obs, rew, dones, infos = venv.step(acts)
        ends += int(dones.sum())
    assert ends > 0


def test_renders_hide_other_hands():
    env = ripmarket_env.make("rune-market", num_players=4, render_mode="ansi")
    env.reset(seed=4)
    raw = env.unwrapped
    raw.render_viewer = 1
    text = env.render()
    assert "P1: " in text and text.count("\n    hand:") == 1 and "Market:" in text
    raw.render_god = True
    assert env.render().count("\n    hand:") == 4
    img = SPEC.render_rgb(raw.engine, 0, viewer=1)
    assert img.shape == (720, 960, 3) and img.dtype == np.uint8 and img.std() > 5


def test_record_and_replay(tmp_path):
    env = ripmarket_env.make("rune-market", num_players=3, raw=True)
    env.reset(seed=12)
    rng = np.random.default_rng(1)
    while not all(env.terminations.values()):
        env.step(int(rng.choice(np.flatnonzero(env.observe(env.agent_selection)["action_mask"]))))
    path = env.save_record(tmp_path / "g.jsonl")
    eng = ripmarket_env.replay(path)
    assert eng.state["done"][0] and list(eng.rewards()[0]) == [env.rewards[a] for a in env.possible_agents]
