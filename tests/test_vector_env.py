"""The batched learner envs: the SB3 VecEnv and the Gymnasium VectorEnv over one engine batch."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode
from sb3_contrib.common.maskable.utils import get_action_masks, is_masking_supported
from stable_baselines3.common.vec_env import VecEnv

import agents
from ripmarket_env.games.ripmarket import Engine, IllegalActionError, RulesConfig, seed_to_u64
from ripmarket_env.games.ripmarket.observation import named_view
from ripmarket_env.gym_env import ENV_ID, RipMarketEnv
from ripmarket_env.vector_env import (
    LearnerBatch,
    RipMarketGymVectorEnv,
    RipMarketVecEnv,
    episode_seed,
    seeds_to_u64,
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
    keys[masks == 0] = -1.0
    return keys.argmax(axis=1)


def middle_legal(mask: np.ndarray) -> int:
    legal = np.flatnonzero(mask)
    return int(legal[len(legal) // 2])


# ---------------------------------------------------------------------------------------
# Seeds
# ---------------------------------------------------------------------------------------
def test_seeds_to_u64_matches_the_engine():
    """The compiled fold equals numpy's SeedSequence fold of the engine (R-12.4), for one-
    and two-word seeds alike."""
    rng = np.random.default_rng(0)
    seeds = np.concatenate([
        np.arange(50, dtype=np.uint64),
        rng.integers(0, 2**32, 300, dtype=np.uint64),
        rng.integers(0, 2**64 - 1, 300, dtype=np.uint64, endpoint=True),
        np.array([2**32 - 1, 2**32, 2**63, 2**64 - 1], dtype=np.uint64),
    ])
    assert seeds_to_u64(seeds).tolist() == [seed_to_u64(int(s)) for s in seeds]
    with pytest.raises(ValueError):
        seeds_to_u64(np.array([-1]))
    assert (episode_seed(3, np.arange(64), np.zeros(64)) < np.uint64(2**63)).all()  # fits Engine.seeds (int64)


def test_episode_seeds_depend_on_base_game_and_episode_only():
    s = episode_seed(7, np.arange(4), np.zeros(4))
    assert s.dtype == np.uint64 and (s < np.uint64(2**63)).all() and (s >= np.uint64(2**32)).any()
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
    assert masks.shape == (8, n_act) and masks.dtype == np.int8 and masks.any(axis=1).all()
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
    assert all(m.shape == (venv.action_space.n,) and m.dtype == np.int8 for m in masks)
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
    acts[2] = int(np.flatnonzero(venv.action_masks()[2] == 0)[0])
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


# ---------------------------------------------------------------------------------------
# The compiled path for random opponents
# ---------------------------------------------------------------------------------------
from agents.base import RandomAgent  # noqa: E402
from ripmarket_env.games.ripmarket import vector_kernels as VK  # noqa: E402
from ripmarket_env.games.ripmarket.invariants import check_game  # noqa: E402

_M64 = (1 << 64) - 1
EVENT_LOG = {"ev", "ev_n", "ev_round", "ev_lost"}


def test_compiled_path_is_used_only_for_plain_random_opponents():
    def compiled(**kw):
        return RipMarketVecEnv(num_envs=2, num_players=4, seed=0, **kw).batch.compiled_opponents

    assert compiled()  # default opponents: random
    assert compiled(opponents="random")
    assert compiled(opponents=[RandomAgent(), RandomAgent(1), agents.make("random")])
    assert not compiled(opponents="random", compiled_opponents=False)
    assert not compiled(opponents=FirstLegal())
    assert not compiled(opponents=[RandomAgent(), FirstLegal(), RandomAgent()])

    class Biased(RandomAgent):
        def act_batch(self, observations, action_masks):
            return np.asarray(action_masks).argmax(axis=1)

    assert not compiled(opponents=Biased())

    class Custom(LearnerBatch):
        def _play_opponents(self, games, acc):
            return super()._play_opponents(games, acc)

    assert not Custom(2, num_players=4, seed=0).compiled_opponents
    assert LearnerBatch(2, num_players=4, seed=0).compiled_opponents


class PythonTwin:
    """The compiled path's documented rules, replayed in Python on a second Engine:
    the same deals (episode seeds, seats), each opponent decision the legal action number
    (u * n_legal) >> 32 with u = splitmix64(stream) >> 32, the stream started at every
    deal from episode_key(base, OPP_SALT, game, episode), redeals and rewards."""

    def __init__(self, B, P, base, seat_mode):
        self.B, self.P, self.base, self.seat_mode = B, P, base, seat_mode
        self.eng = Engine(RulesConfig(num_players=P), batch_size=B)
        self.seat = np.zeros(B, np.int64) if seat_mode == "random" else np.asarray(seat_mode, np.int64)
        self.episode = np.zeros(B, np.int64)
        self.stream = [0] * B
        self.opponent_moves = 0

    def _step_one(self, g, a):
        acts = np.full(self.B, -1)
        acts[g] = a
        rewards, _ = self.eng.step(acts)
        return float(rewards[g, self.seat[g]])

    def _opponents(self, g):
        got = 0.0
        while not self.eng.terminated[g] and self.eng.state["actor"][g] != self.seat[g]:
            u = int(VK.splitmix64(np.uint64(self.stream[g]))) >> 32
            self.stream[g] = (self.stream[g] + int(VK.GOLDEN)) & _M64
            legal = np.flatnonzero(self.eng.legal_mask()[g])
            got += self._step_one(g, int(legal[(u * len(legal)) >> 32]))
            self.opponent_moves += 1
        return got

    def deal(self, g):
        for _ in range(VK.MAX_REDEALS):
            ep = int(self.episode[g])
            if self.seat_mode == "random":
                self.seat[g] = int(episode_seed(self.base, [g], [ep], salt=VK.SEAT_SALT)[0]) % self.P
            self.stream[g] = int(VK.episode_key(np.uint64(self.base), np.uint64(VK.OPP_SALT), g, ep))
            self.episode[g] = ep + 1
            self.eng.reset([int(episode_seed(self.base, [g], [ep])[0])], games=[g])
            self._opponents(g)
            if not self.eng.terminated[g]:
                return
        raise AssertionError("no deal gave the learner a decision")

    def step(self, g, a):
        """(reward, done, terminal observation or None) of the learner's action in game g."""
        reward = self._step_one(g, a) + self._opponents(g)
        if not self.eng.terminated[g]:
            return reward, False, None
        terminal = self.eng.observe(self.seat)[g].copy()
        for problem in check_game(self.eng, g):
            raise AssertionError(problem)
        self.deal(g)
        return reward, True, terminal


@pytest.mark.parametrize("players,seat_mode,threads", [
    (2, "random", 1), (4, [0, 1, 2, 3, 1], 2), (6, "random", 1), (10, "random", 1),
])
def test_compiled_path_follows_its_rules_step_by_step(players, seat_mode, threads):
    B, base = 5, 31 + players
    seats = seat_mode if seat_mode == "random" else seat_mode[:B]
    batch = LearnerBatch(B, num_players=players, learner_seat=seats, seed=base, numba_threads=threads)
    assert batch.compiled_opponents
    twin = PythonTwin(B, players, base, seats)
    obs = batch.reset()
    for g in range(B):
        twin.deal(g)
    rng = np.random.default_rng(players)
    ends = 0
    for step in range(250):
        for name in batch.engine.state.dtype.names:
            if name not in EVENT_LOG:  # the log of each game's latest engine step
                np.testing.assert_array_equal(batch.engine.state[name], twin.eng.state[name],
                                              err_msg=f"{name}, step {step}")
        np.testing.assert_array_equal(batch.seat, twin.seat)
        np.testing.assert_array_equal(obs, twin.eng.observe(twin.seat))
        np.testing.assert_array_equal(batch.masks, twin.eng.legal_mask())
        assert (batch.engine.current_player() == batch.seat).all()  # every game waits for its learner
        assert batch.engine.seeds.tolist() == [
            int(episode_seed(base, [g], [batch.episode[g] - 1])[0]) for g in range(B)
        ]
        actions = random_actions(batch.masks, rng)
        obs, rewards, dones, ended, terminal = batch.step(actions)
        for g in range(B):
            reward, done, term = twin.step(g, int(actions[g]))
            assert rewards[g] == pytest.approx(reward, abs=1e-6)
            assert bool(dones[g]) == done
            if done:
                k = int(np.flatnonzero(ended == g)[0])
                np.testing.assert_array_equal(terminal[k], term)
                assert term[:8].argmax() == GAME_OVER
                ends += 1
            else:
                assert rewards[g] == 0.0 and g not in ended
    assert ends >= 3 and twin.opponent_moves > 500


def test_compiled_and_python_paths_play_valid_games_with_consistent_rewards():
    """Both paths (compiled kernel; Python loop with RandomAgent) over many episodes: legal
    states throughout, final rewards from R-11, zero-sum over a full table of learners."""
    P = 4
    allowed = {round(-1 / (P - 1), 5)} | {round((P - k) / (k * (P - 1)), 5) for k in range(1, P + 1)}
    for compiled in (True, False):
        venv = RipMarketVecEnv(num_envs=48, num_players=P, learner_seat="random", seed=13,
                               compiled_opponents=compiled)
        assert venv.batch.compiled_opponents == compiled
        venv.reset()
        rng = np.random.default_rng(13)
        ends, total = 0, 0.0
        for step in range(300):
            obs, rewards, dones, infos = venv.step(random_actions(venv.action_masks(), rng))
            assert (rewards[~dones] == 0).all()
            assert {round(float(r), 5) for r in rewards[dones]} <= allowed
            ends += int(dones.sum())
            total += float(rewards[dones].sum())
            if step % 50 == 0:
                for g in range(venv.num_envs):
                    assert check_game(venv.engine, g) == []
        assert ends > 100
        # The learner is a uniformly random seat playing at random against random players:
        # its mean reward is 0 (the rewards of a game sum to zero); 3-sigma band.
        assert abs(total / ends) < 3 * 0.6 / np.sqrt(ends)


def test_compiled_path_is_reproducible_and_independent_of_the_batch():
    kw = dict(num_players=6, learner_seat="random", opponents="random")
    a = _rollout(RipMarketVecEnv(num_envs=8, seed=4, **kw), 150, 0)
    b = _rollout(RipMarketVecEnv(num_envs=8, seed=4, numba_threads=2, **kw), 150, 0, noise=True)
    assert _same(a, b)  # threads do not change the games
    assert not _same(a, _rollout(RipMarketVecEnv(num_envs=8, seed=5, **kw), 150, 0))
    # Game i of a batch depends on the base seed, i and its own learner actions only.
    small = RipMarketVecEnv(num_envs=3, seed=4, **kw)
    np.testing.assert_array_equal(small.reset(), a[0][:3])


def test_compiled_path_illegal_learner_action_raises_and_changes_nothing():
    venv = RipMarketVecEnv(num_envs=4, num_players=6, seed=9)
    assert venv.batch.compiled_opponents
    venv.reset()
    acts = np.array([middle_legal(m) for m in venv.action_masks()])
    acts[1] = int(np.flatnonzero(venv.action_masks()[1] == 0)[0])
    before = venv.engine.state.copy()
    with pytest.raises(IllegalActionError, match="game 1"):
        venv.step(acts)
    assert same_state(venv.engine.state, before)


def test_vector_action_space_samples_legal_actions_with_int8_masks():
    env = RipMarketGymVectorEnv(num_envs=16, num_players=4, seed=2)
    env.reset(seed=2)
    for _ in range(5):
        masks = env.action_masks()
        assert masks.dtype == np.int8
        a = env.action_space.sample()
        assert masks[np.arange(16), a].all()
        env.step(a)


# ---------------------------------------------------------------------------------------
# illegal_action="terminate" (for algorithms without masking)
# ---------------------------------------------------------------------------------------
def _illegal_of(mask: np.ndarray) -> int:
    return int(np.flatnonzero(mask == 0)[0])


@pytest.mark.parametrize("opponents", ["random", "first_legal"])
def test_terminate_ends_only_the_offending_games_and_redeals_them(opponents):
    """An illegal action ends that game there (reward illegal_reward, done, terminal
    observation = the observation it answered) and deals its next episode; the other games
    step exactly as a raise-mode twin stepping the same actions."""
    opp = FirstLegal() if opponents == "first_legal" else None
    kw = dict(num_envs=5, num_players=6, seed=21, learner_seat="random", opponents=opp)
    venv = RipMarketVecEnv(illegal_action="terminate", illegal_reward=-2.5, **kw)
    twin = RipMarketVecEnv(**kw)
    assert venv.batch.compiled_opponents == (opponents == "random")
    venv.reset(), twin.reset()
    rng = np.random.default_rng(5)
    for _ in range(3):  # move every game away from its first decision
        acts = random_actions(venv.action_masks(), rng)
        venv.step(acts), twin.step(acts)
    masks = venv.action_masks()
    before_obs = venv.batch.obs.copy()
    acts = random_actions(masks, rng)
    twin_acts = acts.copy()
    acts[1], acts[3] = _illegal_of(masks[1]), 999  # outside the legal set, outside the action range
    obs, rewards, dones, infos = venv.step(acts)
    tobs, trewards, tdones, _ = twin.step(twin_acts)
    assert venv.batch.illegal.tolist() == [1, 3]
    for g in (1, 3):
        assert rewards[g] == -2.5 and dones[g]
        assert infos[g]["illegal_action"] is True
        np.testing.assert_array_equal(infos[g]["terminal_observation"], before_obs[g])
        assert venv.batch.episode[g] == 2  # episode 1 of this game's stream is dealt
        assert venv.engine.seeds[g] == int(episode_seed(21, [g], [1])[0])
        assert not venv.engine.state["done"][g]
    for g in (0, 2, 4):
        assert "illegal_action" not in infos[g]
        np.testing.assert_array_equal(obs[g], tobs[g])
        assert rewards[g] == trewards[g] and dones[g] == tdones[g]
    # The forfeited games go on as fresh deals: the next step is legal and plays on.
    obs, rewards, dones, infos = venv.step(random_actions(venv.action_masks(), rng))
    assert venv.batch.illegal.size == 0 and not any("illegal_action" in i for i in infos)


def test_terminate_is_deterministic():
    """Same seed, same actions (illegal ones included): the same trajectories; the forfeited
    game goes on with episode 1 of its own stream."""
    runs = []
    for _ in range(2):
        venv = RipMarketVecEnv(num_envs=3, num_players=4, seed=8, illegal_action="terminate")
        venv.reset()
        rng = np.random.default_rng(1)
        out = []
        for t in range(6):
            acts = random_actions(venv.action_masks(), rng)
            if t == 2:
                acts[0] = -7
            obs, rewards, dones, _ = venv.step(acts)
            out.append((obs.copy(), rewards, dones))
            if t == 2:
                assert dones[0] and rewards[0] == -1.0
                assert venv.engine.seeds[0] == int(episode_seed(8, [0], [1])[0])
        runs.append(out)
    for (o1, r1, d1), (o2, r2, d2) in zip(*runs):
        np.testing.assert_array_equal(o1, o2)
        np.testing.assert_array_equal(r1, r2)
        np.testing.assert_array_equal(d1, d2)


def test_terminate_still_rejects_a_malformed_batch_and_changes_nothing():
    venv = RipMarketVecEnv(num_envs=3, num_players=4, seed=3, illegal_action="terminate")
    venv.reset()
    before = venv.engine.state.copy()
    with pytest.raises(ValueError, match="one action per game"):
        venv.step([0, 1])
    with pytest.raises(ValueError, match="integers"):
        venv.step([0.5, 1.0, 2.0])
    assert same_state(venv.engine.state, before)


def test_illegal_action_value_is_checked():
    with pytest.raises(ValueError, match="illegal_action='ignore' is not allowed; allowed: 'raise', 'terminate'"):
        RipMarketVecEnv(num_envs=2, illegal_action="ignore")
    with pytest.raises(ValueError, match="allowed: 'raise', 'terminate'"):
        RipMarketGymVectorEnv(num_envs=2, illegal_action=None)


def test_gymnasium_vector_env_terminate_reports_the_forfeits():
    env = RipMarketGymVectorEnv(num_envs=4, num_players=4, seed=6, illegal_action="terminate")
    obs, info = env.reset(seed=6)
    assert info["illegal_action"].dtype == bool and not info["illegal_action"].any()
    last = obs.copy()
    acts = np.array([middle_legal(m) for m in info["action_mask"]])
    acts[2] = _illegal_of(info["action_mask"][2])
    obs, rewards, term, trunc, info = env.step(acts)
    assert info["illegal_action"].tolist() == [False, False, True, False]
    assert term[2] and rewards[2] == -1.0 and not trunc.any()
    assert info["_final_obs"][2] and info["final_info"]["reward"][2] == -1.0
    np.testing.assert_array_equal(info["final_obs"][2], last[2])
    assert info["action_mask"].dtype == np.int8 and info["action_mask"][2].any()


@pytest.mark.parametrize("game", ["black-market", "rune-market"])
def test_terminate_in_every_game_of_the_zoo(game):
    from ripmarket_env.envs.vector import vec_env_classes
    from ripmarket_env.games import get

    VecEnvCls, _ = vec_env_classes(get(game))
    venv = VecEnvCls(num_envs=3, seed=4, illegal_action="terminate")
    venv.reset()
    masks = venv.action_masks()
    acts = np.array([middle_legal(m) for m in masks])
    acts[1] = venv.batch.num_actions  # out of range
    last = venv.batch.obs[1].copy()
    _, rewards, dones, infos = venv.step(acts)
    assert dones[1] and rewards[1] == -1.0 and infos[1]["illegal_action"]
    np.testing.assert_array_equal(infos[1]["terminal_observation"], last)
    assert venv.batch.episode[1] == 2
    raising = VecEnvCls(num_envs=3, seed=4)
    raising.reset()
    before = raising.engine.state.copy()
    with pytest.raises(IllegalActionError):
        raising.step(acts)
    assert same_state(raising.engine.state, before)
