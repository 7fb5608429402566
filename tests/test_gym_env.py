"""RipMarket-v0, the single-agent Gymnasium env: API conformance, phases, rewards, seeding."""

from __future__ import annotations

import pickle
import re
import warnings

import gymnasium
import numpy as np
import pytest
from gymnasium import spaces
from gymnasium.utils.env_checker import check_env as gym_check_env

import agents
import ripmarket_env
from ripmarket_env.games.ripmarket import Engine, RulesConfig
from ripmarket_env.games.ripmarket.observation import named_view
from ripmarket_env.games.ripmarket.observation import observation_bounds, piece_bounds
from ripmarket_env.gym_env import ENV_ID, RipMarketEnv, SampledAction

PHASES = ("acquire", "play", "choose_target", "choose_market_slot", "choose_replacement", "ghost",
          "choose_victim", "game_over")
GHOST_PHASES = {"ghost", "choose_victim"}


def same_state(a: np.ndarray, b: np.ndarray) -> bool:
    """Engine states equal field by field (copies of the record array leave padding undefined)."""
    return all(np.array_equal(a[name], b[name]) for name in a.dtype.names)


def pick(mask: np.ndarray, rng: np.random.Generator) -> int:
    return int(rng.choice(np.flatnonzero(mask)))


def run_episode(env: RipMarketEnv, seed: int, rng: np.random.Generator):
    """Random learner actions; yields (obs, reward, terminated, info) per step, after the reset."""
    obs, info = env.reset(seed=seed)
    steps = [(obs, 0.0, False, info)]
    terminated = False
    while not terminated:
        obs, reward, terminated, truncated, info = env.step(pick(env.action_masks(), rng))
        assert truncated is False
        steps.append((obs, reward, terminated, info))
    return steps


class SeatSpy:
    """Random opponent that checks it is only ever shown its own seat's view."""

    name = "seat_spy"

    def __init__(self, env: RipMarketEnv, offset: int | None, seed: int = 0):
        self.env = env
        self.offset = offset  # seats clockwise from the learner it must sit, None = any
        self.inner = agents.RandomAgent(seed)
        self.calls = 0

    def act(self, observation, action_mask):
        eng = self.env.engine
        actor = int(eng.state["actor"][0])
        assert actor != self.env.learner_seat
        if self.offset is not None:
            assert (actor - self.env.learner_seat) % self.env.num_players == self.offset
        np.testing.assert_array_equal(observation, eng.observe([actor])[0])
        np.testing.assert_array_equal(action_mask, eng.legal_mask()[0])
        view = named_view(observation, eng.obs_layout)
        assert view["is_actor"][0] == 1.0
        self.calls += 1
        return self.inner.act(observation, action_mask)

    def act_batch(self, observations, action_masks):  # pragma: no cover - the single env uses act
        return np.array([self.act(o, m) for o, m in zip(observations, action_masks)])


# ---------------------------------------------------------------------------------------
# Conformance
# ---------------------------------------------------------------------------------------
def test_registered_id_and_checker_through_make():
    env = gymnasium.make(ENV_ID, num_players=4, learner_seat="random")
    assert env.spec.id == ENV_ID
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        gym_check_env(env.unwrapped)
    obs, info = env.reset(seed=5)
    mask = env.unwrapped.action_masks()
    assert env.get_wrapper_attr("action_masks")().tolist() == mask.tolist()
    obs, reward, terminated, truncated, info = env.step(int(np.flatnonzero(mask)[0]))
    assert obs in env.observation_space


def test_spaces_and_info():
    env = RipMarketEnv(num_players=5)
    obs, info = env.reset(seed=1)
    assert isinstance(env.action_space, spaces.Discrete)
    assert env.action_space.n == env.engine.num_actions
    assert obs.shape == (env.engine.obs_size,) and obs.dtype == np.float32
    assert obs in env.observation_space
    assert info["action_mask"].dtype == np.int8 and info["action_mask"].shape == (env.engine.num_actions,)
    np.testing.assert_array_equal(info["action_mask"], env.action_masks())
    assert info["learner_seat"] == 0 and env.unwrapped.game_seed == 1 and "game_seed" not in info  # the seed would deal every hidden card
    assert PHASES[info["phase_id"]] in PHASES and "phase" not in info
    for v in info.values():  # fixed types only: generic trainers batch them as they are
        assert isinstance(v, (bool, int, np.ndarray))
    # Gymnasium's masked sampler takes the mask as it is (int8).
    for _ in range(20):
        assert info["action_mask"][env.action_space.sample(mask=info["action_mask"])] == 1
    _, info = RipMarketEnv(num_players=5, verbose_infos=True).reset(seed=1)
    assert info["phase"] == PHASES[info["phase_id"]]


def test_every_observation_piece_has_a_bound():
    eng = Engine(RulesConfig(num_players=4))
    bounds = piece_bounds(eng.cards)
    assert set(bounds) == {p.name for p in eng.obs_layout.pieces}
    assert all(np.isfinite(b).all() and b[0] < b[1] for b in bounds.values())
    # The gym env, the vector env and the AEC env declare the same Box.
    low, high = observation_bounds(eng.cards)
    box = RipMarketEnv(num_players=4).observation_space
    np.testing.assert_array_equal(box.low, low)
    np.testing.assert_array_equal(box.high, high)
    import ripmarket_env

    aec_box = ripmarket_env.raw_env(num_players=4).observation_space("player_0")["observation"]
    np.testing.assert_array_equal(aec_box.low, low)
    np.testing.assert_array_equal(aec_box.high, high)


@pytest.mark.parametrize("rules", [
    dict(num_players=2), dict(num_players=2, epilogue=True), dict(num_players=3, reward_mode="placement"),
    dict(num_players=7, ghost_phase="first"), dict(num_players=10),
])
def test_observations_stay_in_the_space_under_random_play(rules):
    env = RipMarketEnv(rules=rules, learner_seat="random")
    rng = np.random.default_rng(0)
    for seed in range(4):
        for obs, _, _, _ in run_episode(env, seed, rng):
            assert obs in env.observation_space, "observation outside the declared Box bounds"


def test_action_space_sample_is_legal_and_pickles_as_discrete():
    env = RipMarketEnv(num_players=4)
    env.reset(seed=0)
    env.action_space.seed(0)
    for _ in range(50):
        a = env.action_space.sample()
        assert isinstance(a, SampledAction)
        assert env.action_masks()[a]
        _, _, terminated, _, _ = env.step(a)
        if terminated:
            env.reset()
    plain = pickle.loads(pickle.dumps(env.action_space))
    assert type(plain) is spaces.Discrete and plain == env.action_space
    # With an explicit mask it is gymnasium's sampler.
    m = np.zeros(env.action_space.n, np.int8)
    m[3] = 1
    assert env.action_space.sample(mask=m) == 3


def test_sampled_action_drawn_earlier_is_redrawn_legally():
    env = RipMarketEnv(num_players=4)
    env.reset(seed=0)
    a = SampledAction(env.engine.num_actions - 1, 0.99)  # illegal at the first decision
    obs, *_ = env.step(a)
    assert obs in env.observation_space


# ---------------------------------------------------------------------------------------
# Illegal actions
# ---------------------------------------------------------------------------------------
def test_illegal_action_terminate_ends_the_episode():
    env = RipMarketEnv(num_players=4, illegal_action="terminate")
    env.reset(seed=2)
    illegal = int(np.flatnonzero(env.action_masks() == 0)[0])
    before = env.engine.state.copy()
    obs, reward, terminated, truncated, info = env.step(illegal)
    assert (reward, terminated, truncated, info["illegal_action"]) == (-1.0, True, False, True)
    assert same_state(env.engine.state, before)  # the game is not stepped
    assert env.action_masks().all()
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)
    _, info = env.reset(seed=3)  # a fresh game plays on
    assert not info["illegal_action"] and not env.terminated
    assert env.step(10_000)[2] is True  # out of range terminates too
    with pytest.raises(ValueError, match="illegal_action='skip' is not allowed"):
        RipMarketEnv(num_players=4, illegal_action="skip")


def test_step_before_reset_and_after_the_end():
    env = RipMarketEnv(num_players=2)
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)
    run_episode(env, 0, np.random.default_rng(0))
    assert env.action_masks().all()  # nothing to decide once the game is over
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)


def test_constructor_errors():
    with pytest.raises(ValueError, match="learner_seat"):
        RipMarketEnv(num_players=4, learner_seat=4)
    with pytest.raises(ValueError, match="learner_seat"):
        RipMarketEnv(num_players=4, learner_seat="first")
    with pytest.raises(ValueError, match="opponents"):
        RipMarketEnv(num_players=4, opponents=["random", "random"])
    with pytest.raises(KeyError, match="unknown agent"):
        RipMarketEnv(num_players=4, opponents="nobody")
    with pytest.raises(TypeError, match="opponent"):
        RipMarketEnv(num_players=4, opponents=[object()])
    with pytest.raises(ValueError, match="disagrees"):
        RipMarketEnv(num_players=4, rules=RulesConfig(num_players=5))


# ---------------------------------------------------------------------------------------
# The learner plays every phase; rewards; opponents' views
# ---------------------------------------------------------------------------------------
def test_learner_decides_as_living_player_and_as_ghost():
    env = RipMarketEnv(num_players=4, learner_seat="random")
    rng = np.random.default_rng(1)
    seen: dict[str, int] = {}
    ghost_obs = []
    for seed in range(60):
        for obs, _, terminated, info in run_episode(env, seed, rng):
            if terminated:
                assert PHASES[info["phase_id"]] == "game_over"
                continue
            seen[PHASES[info["phase_id"]]] = seen.get(PHASES[info["phase_id"]], 0) + 1
            view = named_view(obs, env.engine.obs_layout)
            assert view["is_actor"][0] == 1.0  # every decision the learner sees is its own
            assert view["actor"][0, 0] == 1.0
            if PHASES[info["phase_id"]] in GHOST_PHASES:
                ghost_obs.append(view)
        if len(ghost_obs) >= 5 and {"acquire", "play"} <= set(seen):
            break
    assert {"acquire", "play"} <= set(seen)
    assert ghost_obs, f"the learner never decided as a Ghost; phases seen: {seen}"
    for view in ghost_obs:
        assert view["alive"][0, 0] == 0.0  # seat block 0 is the learner: a Ghost
        assert view["hp"][0, 0] == 0.0


def test_ghost_decisions_for_a_fixed_seat():
    """Seat 2 is made a Ghost by play: the game is replayed until seat 2 dies, then the
    env keeps asking seat 2 for Ghost decisions (pass or a Shadow card)."""
    env = RipMarketEnv(num_players=3, learner_seat=2)
    rng = np.random.default_rng(7)
    for seed in range(200):
        steps = run_episode(env, seed, rng)
        ghost = [info for _, _, term, info in steps if not term and PHASES[info["phase_id"]] in GHOST_PHASES]
        if ghost:
            mask = ghost[0]["action_mask"]
            table = env.engine.actions
            kinds = {table.decode(int(a))[0] for a in np.flatnonzero(mask)}
            assert kinds <= {"pass", "shadow", "target"}
            return
    pytest.fail("seat 2 never decided as a Ghost in 200 games")


@pytest.mark.parametrize("players,mode", [(2, "win"), (4, "win"), (5, "placement"), (8, "win")])
def test_episode_reward_is_the_engine_final_reward_of_the_learner(players, mode):
    env = RipMarketEnv(rules=dict(num_players=players, reward_mode=mode), learner_seat="random")
    rng = np.random.default_rng(players)

    for seed in range(6):
        steps = run_episode(env, seed, rng)
        rewards = [r for _, r, _, _ in steps[1:]]
        assert all(r == 0.0 for r in rewards[:-1]), "rewards are paid only when the game ends (R-11.3)"
        final = env.engine.rewards()[0]
        assert sum(rewards) == pytest.approx(float(final[env.learner_seat]))
        assert float(final.sum()) == pytest.approx(0.0, abs=1e-5)


def test_opponents_see_only_their_own_seat():
    env = RipMarketEnv(num_players=4, learner_seat="random")
    spies = [SeatSpy(env, offset=k + 1, seed=k) for k in range(3)]
    env.opponents = spies
    env._shared = False
    rng = np.random.default_rng(0)
    for seed in range(3):
        run_episode(env, seed, rng)
    assert all(s.calls > 0 for s in spies)


def test_shared_opponent_and_opponents_by_name():
    env = RipMarketEnv(num_players=4, opponents="random")
    assert len(env.opponents) == 1
    env = RipMarketEnv(num_players=4, opponents=["random", agents.make("random", seed=1), "random"])
    assert len(env.opponents) == 3
    spy_env = RipMarketEnv(num_players=5)
    spy = SeatSpy(spy_env, offset=None)
    spy_env.opponents = [spy]
    run_episode(spy_env, 0, np.random.default_rng(0))
    assert spy.calls > 0


# ---------------------------------------------------------------------------------------
# Seeding
# ---------------------------------------------------------------------------------------
def _trajectory(env, seed, actions_seed=0):
    rng = np.random.default_rng(actions_seed)
    return [(o.tobytes(), r, t) for o, r, t, _ in run_episode(env, seed, rng)]


def test_reset_seed_deals_the_engine_game_of_that_seed():
    env = RipMarketEnv(num_players=4, learner_seat=0, opponents=FirstLegal())
    env.reset(seed=42)
    eng = Engine(RulesConfig(num_players=4))
    eng.reset([42])
    while eng.current_player()[0] != 0:
        eng.step([int(np.flatnonzero(eng.legal_mask()[0])[0])])
    assert same_state(eng.state, env.engine.state)


def test_unseeded_resets_follow_the_seeded_generator():
    env = RipMarketEnv(num_players=4, learner_seat="random")
    env.reset(seed=3)
    first = [env.reset()[0].tobytes() for _ in range(3)]
    env.reset(seed=3)
    assert [env.reset()[0].tobytes() for _ in range(3)] == first


class FirstLegal:
    """Deterministic opponent: the lowest legal action."""

    name = "first_legal"

    def act(self, observation, action_mask):
        return int(np.flatnonzero(action_mask)[0])

    def act_batch(self, observations, action_masks):
        return np.asarray(action_masks).argmax(axis=1)


# ---------------------------------------------------------------------------------------
# Rendering
# ---------------------------------------------------------------------------------------
def test_render_ansi_shows_the_learner_view():
    env = RipMarketEnv(num_players=3, learner_seat=1, render_mode="ansi")
    env.reset(seed=0)
    text = env.render()
    assert isinstance(text, str) and text


def test_random_opponents_play_in_the_compiled_call_or_in_python():
    from ripmarket_env.games.ripmarket.invariants import check_game

    for compiled in (True, False):
        env = RipMarketEnv(num_players=5, learner_seat="random", compiled_opponents=compiled)
        assert env._random_opponents() == compiled
        rng = np.random.default_rng(5)
        for seed in range(3):
            steps = run_episode(env, seed, rng)
            assert env.terminated and check_game(env.engine, 0) == []
            # the engine took the opponents' decisions too
            assert int(env.engine.state["steps"][0]) > len(steps) - 1
            final = env.engine.rewards()[0, env.learner_seat]
            assert sum(r for _, r, _, _ in steps[1:]) == pytest.approx(float(final))
        # seeded: the same episode again
        assert _trajectory(env, 4) == _trajectory(env, 4)
    env = RipMarketEnv(num_players=4)
    env.opponents = [FirstLegal()]  # any other agent: the Python loop
    assert not env._random_opponents()


# ---------------------------------------------------------------------------------------
# Every game's Gymnasium id: ripmarket_env.make's keywords, lean imports
# ---------------------------------------------------------------------------------------
_GAME_SPECS = list(__import__("ripmarket_env.games", fromlist=["registry"]).registry().values())


@pytest.mark.parametrize("spec", _GAME_SPECS, ids=lambda s: s.id)
def test_gym_id_takes_the_keywords_of_make(spec):
    """``gymnasium.make(gym_id, **kw)`` and ``make_vec`` take the rule fields as keywords,
    as ``ripmarket_env.make(game, **kw)`` does (Black Market: ``mode="ffa"``), and refuse an
    unknown one with a line naming the game's rule fields."""
    import dataclasses

    default = spec.rules_class()
    n = spec.max_players if spec.max_players >= 4 else spec.default_players
    field = value = None
    for f in dataclasses.fields(spec.rules_class):  # the first int rule field that accepts default + 1
        v = getattr(default, f.name)
        if f.name == "num_players" or type(v) is not int:
            continue
        try:
            spec.make_rules(n, **{f.name: v + 1})
        except (TypeError, ValueError):
            continue
        field, value = f.name, v + 1
        break
    kw = {"num_players": n} if field is None else {"num_players": n, field: value}  # the toy game: players only
    aec = ripmarket_env.make(spec.id, **kw)
    g = gymnasium.make(spec.gym_id, **kw)
    v = gymnasium.make_vec(spec.gym_id, num_envs=2, **kw)
    assert aec.unwrapped.rules == g.unwrapped.rules == v.unwrapped.batch.rules
    assert g.unwrapped.rules.num_players == n
    if field is not None:
        assert getattr(g.unwrapped.rules, field) == value != getattr(default, field)
    g.reset(seed=0)
    with pytest.raises(TypeError, match=rf"'no_such_rule': not an option of {re.escape(spec.title)} \(rule fields: "):
        gymnasium.make(spec.gym_id, no_such_rule=1)


def test_black_market_gym_id_takes_mode():
    g = gymnasium.make("BlackMarket-v0", num_players=4, mode="ffa")
    assert g.unwrapped.rules.mode == "ffa"
    assert g.unwrapped.rules == ripmarket_env.make("black-market", num_players=4, mode="ffa").unwrapped.rules


def test_gym_make_with_random_opponents_imports_neither_torch_nor_sb3():
    """``gymnasium.make(<gym id>)`` and a few steps with the default (random) opponents, in a
    fresh interpreter: torch and stable-baselines3 are never imported."""
    import subprocess
    import sys

    code = (
        "import sys, gymnasium, ripmarket_env\n"
        "from ripmarket_env.games import registry\n"
        "for spec in registry().values():\n"
        "    env = gymnasium.make(spec.gym_id)\n"
        "    obs, info = env.reset(seed=0)\n"
        "    env.step(int(info['action_mask'].nonzero()[0][0]))\n"
        "    penv = ripmarket_env.parallel_env(spec.id)\n"
        "    penv.reset(seed=0)\n"
        "print(sorted(m for m in ('torch', 'stable_baselines3', 'sb3_contrib') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600,
                         env={**__import__("os").environ, "RIPMARKET_COMPILE_PROGRESS": "0"})
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().splitlines()[-1] == "[]"
