"""The batched learner envs: the SB3 VecEnv and the Gymnasium VectorEnv over one engine batch."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode
from sb3_contrib.common.maskable.utils import get_action_masks, is_masking_supported
from stable_baselines3.common.vec_env import VecEnv

import agents
from ripmarket_env.engine import Engine, IllegalActionError, RulesConfig, seed_to_u32
from ripmarket_env.engine.observation import named_view
from ripmarket_env.gym_env import ENV_ID, RipMarketEnv
from ripmarket_env.vector_env import (
    LearnerBatch,
    RipMarketGymVectorEnv,
    RipMarketVecEnv,
    episode_seed,
    seeds_to_u32,
)

GAME_OVER = 7  # index of "game_over" in the phase one-hot


def same_state(a: np.ndarray, b: np.ndarray) -> bool:
    """Engine states equal field by field (copies of the record array leave padding undefined)."""
    return all(np.array_equal(a[name], b[name]) for name in a.dtype.names)


class FirstLegal:
    """Deterministic opponent: the lowest legal action."""

    name = "first_legal"

    def act(self, observation, action_mask):
        return int(np.flatnonzero(action_mask)[0])

    def act_batch(self, observations, action_masks):
        return np.asarray(action_masks).argmax(axis=1)


def random_actions(masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    keys = rng.random(masks.shape)
    keys[~masks] = -1.0
    return keys.argmax(axis=1)


def middle_legal(mask: np.ndarray) -> int:
    legal = np.flatnonzero(mask)
    return int(legal[len(legal) // 2])


# ---------------------------------------------------------------------------------------
# Seeds
# ---------------------------------------------------------------------------------------
def test_seeds_to_u32_matches_the_engine():
    seeds = np.concatenate([np.arange(50), np.random.default_rng(0).integers(0, 2**32, 500), [2**32 - 1]])
    assert seeds_to_u32(seeds).tolist() == [seed_to_u32(int(s)) for s in seeds]
    with pytest.raises(ValueError):
        seeds_to_u32(np.array([2**32]))


def test_episode_seeds_depend_on_base_game_and_episode_only():
    s = episode_seed(7, np.arange(4), np.zeros(4))
    assert s.dtype == np.uint64 and (s < 2**32).all()
    assert len(set(s.tolist())) == 4
    assert episode_seed(7, [2], [0])[0] == s[2]
    assert episode_seed(8, [2], [0])[0] != s[2]
    assert episode_seed(7, [2], [1])[0] != s[2]


def test_dealing_is_engine_reset_with_the_episode_seed():
    batch = LearnerBatch(5, num_players=4, seed=99)
    games = np.array([0, 3])
    batch._deal(games)
    seeds = episode_seed(99, games, [0, 0])
    eng = Engine(RulesConfig(num_players=4), batch_size=2)
    eng.reset([int(s) for s in seeds])
    got = batch.engine.state[games]
    for name in eng.state.dtype.names:  # field by field: a row copy leaves padding bytes undefined
        np.testing.assert_array_equal(got[name], eng.state[name], err_msg=name)
    assert batch.engine.seeds[games].tolist() == eng.seeds.tolist()
    assert batch.episode.tolist() == [1, 0, 0, 1, 0]


# ---------------------------------------------------------------------------------------
# SB3 VecEnv
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("players", [2, 4, 6])
def test_shapes_and_types(players):
    venv = RipMarketVecEnv(num_envs=8, num_players=players, learner_seat="random", seed=0)
    assert isinstance(venv, VecEnv)
    obs = venv.reset()
    n_act = venv.action_space.n
    assert obs.shape == (8, venv.observation_space.shape[0]) and obs.dtype == np.float32
    assert all(o in venv.observation_space for o in obs)
    masks = venv.action_masks()
    assert masks.shape == (8, n_act) and masks.dtype == bool and masks.any(axis=1).all()
    rng = np.random.default_rng(0)
    for _ in range(30):
        obs, rewards, dones, infos = venv.step(random_actions(venv.action_masks(), rng))
        assert obs.shape == (8, venv.observation_space.shape[0]) and obs.dtype == np.float32
        assert rewards.shape == (8,) and rewards.dtype == np.float32
        assert dones.shape == (8,) and dones.dtype == bool
        assert isinstance(infos, list) and len(infos) == 8
        assert all(o in venv.observation_space for o in obs)
        assert venv.action_masks().any(axis=1).all()


def test_env_method_action_masks_for_maskable_ppo():
    venv = RipMarketVecEnv(num_envs=6, num_players=4, seed=1)
    venv.reset()
    masks = venv.env_method("action_masks")
    assert isinstance(masks, list) and len(masks) == 6
    assert all(m.shape == (venv.action_space.n,) and m.dtype == bool for m in masks)
    np.testing.assert_array_equal(np.stack(masks), venv.action_masks())
    assert is_masking_supported(venv)
    np.testing.assert_array_equal(get_action_masks(venv), venv.action_masks())
    assert len(venv.env_method("action_masks", indices=[1, 4])) == 2
    np.testing.assert_array_equal(venv.env_method("action_masks", indices=[4])[0], venv.action_masks()[4])
    # The learner's masks are the engine's masks at the learner's decision.
    eng = venv.engine
    assert (eng.current_player() == venv.batch.seat).all()
    np.testing.assert_array_equal(venv.action_masks(), eng.legal_mask())


def test_attrs_and_wrappers():
    venv = RipMarketVecEnv(num_envs=4, num_players=4, learner_seat=[0, 1, 2, 3], seed=2)
    venv.reset()
    assert venv.get_attr("learner_seat") == [0, 1, 2, 3]
    assert venv.get_attr("learner_seat", indices=2) == [2]
    assert venv.get_attr("num_players") == [4] * 4
    assert venv.get_attr("game_seed") == [int(s) for s in episode_seed(2, np.arange(4), np.zeros(4))]
    assert venv.has_attr("action_masks")
    venv.set_attr("tag", "x")
    assert venv.get_attr("tag", indices=[0, 1]) == ["x", "x"]
    assert venv.env_is_wrapped(gymnasium.Wrapper) == [False] * 4
    assert venv.render_mode is None
    venv.close()


def test_auto_reset_and_terminal_observation():
    venv = RipMarketVecEnv(num_envs=16, num_players=3, learner_seat="random", seed=3)
    venv.reset()
    rng = np.random.default_rng(3)
    lay = venv.engine.obs_layout
    finished = 0
    for _ in range(300):
        episodes_before = venv.batch.episode.copy()
        obs, rewards, dones, infos = venv.step(random_actions(venv.action_masks(), rng))
        for i in range(16):
            if dones[i]:
                finished += 1
                term = infos[i]["terminal_observation"]
                assert term.shape == obs[i].shape and term in venv.observation_space
                assert named_view(term, lay)["phase"][GAME_OVER] == 1.0  # the finished game
                assert named_view(obs[i], lay)["phase"][GAME_OVER] == 0.0  # the new game
                assert named_view(obs[i], lay)["round"][0] == 0.0
                assert venv.batch.episode[i] == episodes_before[i] + 1
            else:
                assert "terminal_observation" not in infos[i]
                assert rewards[i] == 0.0
                assert venv.batch.episode[i] == episodes_before[i]
        assert venv.action_masks().any(axis=1).all()
        assert (venv.engine.current_player() == venv.batch.seat).all()
    assert finished >= 16


def test_matches_the_single_env_game_by_game():
    """With deterministic opponents, game i of the batch is the single env's game dealt
    with the same episode seed: same observations, masks, rewards and endings."""
    B, P, base = 6, 4, 21
    venv = RipMarketVecEnv(num_envs=B, num_players=P, opponents=FirstLegal(), learner_seat=[0, 1, 2, 3, 0, 2],
                           seed=base)
    obs = venv.reset().copy()
    singles = []
    for i in range(B):
        env = RipMarketEnv(num_players=P, opponents=FirstLegal(), learner_seat=int(venv.batch.seat[i]))
        o, info = env.reset(seed=int(episode_seed(base, [i], [0])[0]))
        np.testing.assert_array_equal(o, obs[i])
        np.testing.assert_array_equal(info["action_mask"], venv.action_masks()[i])
        singles.append(env)
    live = np.ones(B, bool)
    totals = np.zeros(B)
    for _ in range(400):
        acts = np.array([middle_legal(m) for m in venv.action_masks()])
        obs, rewards, dones, infos = venv.step(acts)
        for i in np.flatnonzero(live):
            o, r, term, _, info = singles[i].step(int(acts[i]))
            assert r == pytest.approx(float(rewards[i]))
            assert term == bool(dones[i])
            totals[i] += r
            if term:
                np.testing.assert_array_equal(o, infos[i]["terminal_observation"])
                final = singles[i].engine.rewards()[0, singles[i].learner_seat]
                assert totals[i] == pytest.approx(float(final))
                live[i] = False
            else:
                np.testing.assert_array_equal(o, obs[i])
                np.testing.assert_array_equal(info["action_mask"], venv.action_masks()[i])
        if not live.any():
            break
    assert not live.any()


def _rollout(venv, steps, actions_seed, noise=False):
    rng = np.random.default_rng(actions_seed)
    out = [venv.reset().copy()]
    for _ in range(steps):
        if noise:
            np.random.random(17)  # global RNG noise must not matter
        obs, rewards, dones, infos = venv.step(random_actions(venv.action_masks(), rng))
        out.append((obs.copy(), rewards.copy(), dones.copy(),
                    [i.get("terminal_observation", np.zeros(0)).copy() for i in infos]))
    return out


def _same(a, b) -> bool:
    if a is b:
        return True
    if isinstance(a, np.ndarray):
        return np.array_equal(a, b)
    return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))


def test_determinism_from_a_seed():
    kw = dict(num_envs=8, num_players=5, learner_seat="random", opponents=["random", "random", "random", "random"])
    a = _rollout(RipMarketVecEnv(seed=4, **kw), 120, 0)
    b = _rollout(RipMarketVecEnv(seed=4, **kw), 120, 0, noise=True)
    assert _same(a, b)
    c = _rollout(RipMarketVecEnv(seed=5, **kw), 120, 0)
    assert not _same(a, c)
    # reseeding through VecEnv.seed at the next reset replays the run
    venv = RipMarketVecEnv(seed=77, **kw)
    first = venv.seed(4)
    assert first == [int(s) for s in episode_seed(4, np.arange(8), np.zeros(8))]
    assert _same(_rollout(venv, 120, 0), a)


def test_opponents_see_only_their_own_seat_in_batch():
    calls = []

    class BatchSpy(FirstLegal):
        def __init__(self, offset):
            self.offset = offset

        def act_batch(self, observations, action_masks):
            st = venv.engine.state
            waiting = np.flatnonzero((st["actor"] != venv.batch.seat) & ~st["done"].astype(bool))
            rel = (st["actor"][waiting].astype(int) - venv.batch.seat[waiting]) % 4
            rows = waiting[rel == self.offset]
            assert len(rows) == len(observations)
            expected = venv.engine.observe(st["actor"].astype(np.int64))[rows]
            np.testing.assert_array_equal(observations, expected)
            np.testing.assert_array_equal(action_masks, venv.engine.legal_mask()[rows])
            calls.append(len(rows))
            return super().act_batch(observations, action_masks)

    venv = RipMarketVecEnv(num_envs=12, num_players=4, learner_seat="random",
                           opponents=[BatchSpy(1), BatchSpy(2), BatchSpy(3)], seed=6)
    venv.reset()
    rng = np.random.default_rng(0)
    for _ in range(40):
        venv.step(random_actions(venv.action_masks(), rng))
    assert sum(calls) > 100


def test_learner_decides_in_ghost_phases_in_batch():
    venv = RipMarketVecEnv(num_envs=32, num_players=4, learner_seat="random", seed=8)
    venv.reset()
    lay = venv.engine.obs_layout
    rng = np.random.default_rng(8)
    ghost = 0
    for _ in range(200):
        obs, *_ = venv.step(random_actions(venv.action_masks(), rng))
        phase = obs[:, lay.slice("phase")].argmax(axis=1)
        alive = obs[:, lay.slice("alive", 0)][:, 0]
        is_ghost_turn = (phase == 5) | (phase == 6)
        assert (alive[is_ghost_turn] == 0.0).all()
        ghost += int(is_ghost_turn.sum())
    assert ghost > 0


def test_illegal_learner_action_raises_and_changes_nothing():
    venv = RipMarketVecEnv(num_envs=4, num_players=4, seed=9)
    venv.reset()
    acts = np.array([middle_legal(m) for m in venv.action_masks()])
    acts[2] = int(np.flatnonzero(~venv.action_masks()[2])[0])
    before = venv.engine.state.copy()
    with pytest.raises(IllegalActionError) as err:
        venv.step(acts)
    assert "game 2" in str(err.value) and f"illegal action {acts[2]}" in str(err.value)
    assert same_state(venv.engine.state, before)
    with pytest.raises(ValueError, match="one action per game"):
        venv.step(acts[:3])


def test_reward_values_follow_r11():
    P = 4
    venv = RipMarketVecEnv(num_envs=32, num_players=P, learner_seat="random", seed=10)
    venv.reset()
    rng = np.random.default_rng(10)
    allowed = {round(-1 / (P - 1), 5)} | {round((P - k) / (k * (P - 1)), 5) for k in range(1, P + 1)}
    ends = 0
    for _ in range(150):
        _, rewards, dones, _ = venv.step(random_actions(venv.action_masks(), rng))
        assert (rewards[~dones] == 0).all()
        assert {round(float(r), 5) for r in rewards[dones]} <= allowed
        ends += int(dones.sum())
    assert ends > 0


def test_obs_ring_buffer_keeps_the_previous_observation():
    venv = RipMarketVecEnv(num_envs=4, num_players=3, seed=11)
    prev = venv.reset()
    kept = prev.copy()
    obs, *_ = venv.step(np.array([middle_legal(m) for m in venv.action_masks()]))
    assert obs is not prev
    np.testing.assert_array_equal(prev, kept)  # valid until the step after next


def test_constructor_errors():
    with pytest.raises(ValueError):
        RipMarketVecEnv(num_envs=0)
    with pytest.raises(ValueError, match="one seat per game"):
        RipMarketVecEnv(num_envs=3, num_players=4, learner_seat=[0, 1])
    with pytest.raises(ValueError, match="opponents"):
        RipMarketVecEnv(num_envs=3, num_players=4, opponents=["random", "random"])


def test_random_learner_seat_covers_every_seat():
    venv = RipMarketVecEnv(num_envs=64, num_players=5, learner_seat="random", seed=12)
    venv.reset()
    assert set(venv.get_attr("learner_seat")) == set(range(5))


# ---------------------------------------------------------------------------------------
# Gymnasium VectorEnv
# ---------------------------------------------------------------------------------------
def test_gymnasium_vector_env_same_step_autoreset():
    env = RipMarketGymVectorEnv(num_envs=8, num_players=3, learner_seat="random", seed=0)
    assert isinstance(env, gymnasium.vector.VectorEnv)
    assert env.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
    assert env.single_action_space.n == env.batch.num_actions
    assert env.observation_space.shape == (8, env.single_observation_space.shape[0])
    obs, info = env.reset(seed=0)
    assert obs in env.observation_space
    np.testing.assert_array_equal(info["action_mask"], env.action_masks())
    lay = env.engine.obs_layout
    env.action_space.seed(0)
    ended = 0
    for _ in range(200):
        actions = env.action_space.sample()  # legal actions, one per game
        obs, rewards, terminations, truncations, info = env.step(actions)
        assert obs.shape == (8, env.single_observation_space.shape[0])
        assert not truncations.any()
        if terminations.any():
            assert info["_final_obs"].tolist() == terminations.tolist()
            for i in np.flatnonzero(terminations):
                assert named_view(info["final_obs"][i], lay)["phase"][GAME_OVER] == 1.0
                assert named_view(obs[i], lay)["phase"][GAME_OVER] == 0.0
            assert (info["final_info"]["reward"][terminations] == rewards[terminations]).all()
            ended += int(terminations.sum())
        else:
            assert "final_obs" not in info
    assert ended > 0
    env.close()


def test_make_vec_through_the_registry():
    env = gymnasium.make_vec(ENV_ID, num_envs=4, num_players=4, seed=1)
    assert isinstance(env.unwrapped, RipMarketGymVectorEnv)
    obs, info = env.reset(seed=1)
    obs2, *_ = env.step(env.action_space.sample())
    assert obs2.shape == (4, env.single_observation_space.shape[0])


def test_gymnasium_vector_env_determinism():
    def run(seed):
        env = RipMarketGymVectorEnv(num_envs=6, num_players=4, learner_seat="random",
                                    opponents=agents.make("random"))
        out = [env.reset(seed=seed)[0].copy()]
        rng = np.random.default_rng(0)
        for _ in range(60):
            out.append(env.step(random_actions(env.action_masks(), rng))[0].copy())
        return out

    assert _same(run(3), run(3))
    assert not _same(run(3), run(4))
