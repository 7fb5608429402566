"""Calls the envs refuse, checked the same way in every game: a clear one-line error that
says what was wrong and what is allowed, and nothing changed.

* Vector envs (SB3 ``VecEnv`` and Gymnasium ``VectorEnv``): a batch of actions has shape
  ``(num_envs,)`` (no other shape is flattened into one); ``num_envs`` is a positive integer.
* AEC env: ``step``/``observe``/``last`` before ``reset``; an unknown agent; ``step`` and
  ``last`` once the game is over and every agent has left ``agents``; under ``env()``
  (PettingZoo's wrappers) the same cases.
* Parallel env: ``step`` before ``reset``.
* Single-agent Gymnasium env: the game's seed is never in the infos (with it a learner
  could deal the game again and see every hidden card); it stays the env's attribute.
"""

from __future__ import annotations

import logging
import re

import gymnasium
import numpy as np
import pytest

import ripmarket_env
from ripmarket_env.envs.vector import vec_env_classes
from ripmarket_env.games import get

GAMES = ("ripmarket", "black-market", "rune-market")


def same_state(a: np.ndarray, b: np.ndarray) -> bool:
    """Engine states equal field by field (copies of the record array leave padding undefined)."""
    return all(np.array_equal(a[name], b[name]) for name in a.dtype.names)


def first_legal(mask) -> int:
    return int(np.flatnonzero(mask)[0])


# ---------------------------------------------------------------------------------------
# Vector envs
# ---------------------------------------------------------------------------------------
def _vector_env(game: str, face: str, **kwargs):
    if face == "sb3":
        pytest.importorskip("stable_baselines3")
        return vec_env_classes(get(game))[0](num_envs=2, num_players=4, seed=0, **kwargs)
    return gymnasium.make_vec(get(game).gym_id, num_envs=2, num_players=4, seed=0, **kwargs)


def _vector_reset(env, face: str):
    return env.reset() if face == "sb3" else env.reset(seed=0)[0]


BAD_BATCHES = [
    pytest.param(lambda m: np.array([[first_legal(m[0]), first_legal(m[1])]]), "(1, 2)", id="1x2"),
    pytest.param(lambda m: np.array([[first_legal(m[0])], [first_legal(m[1])]]), "(2, 1)", id="2x1"),
    pytest.param(lambda m: np.int64(first_legal(m[0])), "()", id="scalar"),
    pytest.param(lambda m: [first_legal(m[0]), first_legal(m[1]), 0], "(3,)", id="three"),
    pytest.param(lambda m: [[0, 0], [0, 0]], "(2, 2)", id="2x2"),
]


@pytest.mark.parametrize("game", GAMES)
@pytest.mark.parametrize("face", ["sb3", "gym_vector"])
@pytest.mark.parametrize("mode", ["raise", "terminate"])
@pytest.mark.parametrize("make_batch, shape", BAD_BATCHES)
def test_vector_step_needs_a_batch_of_shape_num_envs(game, face, mode, make_batch, shape):
    """Only ``(num_envs,)`` is a batch: a ``(1, 2)`` or ``(2, 1)`` array of legal actions is
    refused with ValueError (not flattened and played, not refused as illegal), and no game
    of the batch changes; valid steps go on afterwards."""
    env = _vector_env(game, face, illegal_action=mode)
    obs = _vector_reset(env, face).copy()
    masks = env.action_masks()
    before = env.unwrapped.engine.state.copy()
    bad = make_batch(masks)
    with pytest.raises(ValueError) as err:
        env.step(bad)
    msg = str(err.value)
    assert "\n" not in msg and "one action per game" in msg
    assert "shape (2,)" in msg and f"got shape {shape}" in msg
    assert same_state(env.unwrapped.engine.state, before)
    np.testing.assert_array_equal(env.action_masks(), masks)
    np.testing.assert_array_equal(env.unwrapped.batch.obs, obs)
    out = env.step(np.array([first_legal(m) for m in masks]))  # a good batch still steps
    assert out[0].shape == obs.shape


@pytest.mark.parametrize("game", GAMES)
@pytest.mark.parametrize("face", ["sb3", "gym_vector", "make_vec"])
@pytest.mark.parametrize("num_envs", [1.5, 2.0, "2", True, np.True_, None, 0, -3],
                         ids=["1.5", "2.0", "str", "True", "np.True_", "None", "0", "-3"])
def test_vector_num_envs_must_be_a_positive_integer(game, face, num_envs):
    spec = get(game)
    if face == "sb3":
        pytest.importorskip("stable_baselines3")
        build = vec_env_classes(spec)[0]
    elif face == "gym_vector":
        build = vec_env_classes(spec)[1]
    else:
        def build(**kw):
            return gymnasium.make_vec(spec.gym_id, **kw)
    with pytest.raises(ValueError, match=r"^num_envs must be a positive integer \(1, 2, 3, \.\.\.\), got "):
        build(num_envs=num_envs, num_players=4)


@pytest.mark.parametrize("game", GAMES)
@pytest.mark.parametrize("num_envs", [1, 3, np.int64(2), np.uint8(2)], ids=["1", "3", "np.int64", "np.uint8"])
def test_vector_num_envs_accepts_python_and_numpy_integers(game, num_envs):
    env = gymnasium.make_vec(get(game).gym_id, num_envs=num_envs, num_players=4)
    assert env.num_envs == int(num_envs) and type(env.num_envs) is int
    obs, _ = env.reset(seed=1)
    assert obs.shape[0] == int(num_envs)


# ---------------------------------------------------------------------------------------
# AEC env
# ---------------------------------------------------------------------------------------
def _aec(game: str, raw: bool):
    return ripmarket_env.make(game, num_players=4, raw=raw)


def _play_to_the_end(env, seed: int = 2) -> None:
    """A whole game with the first legal action, every agent stepped out (agents == [])."""
    env.reset(seed=seed)
    for _agent in env.agent_iter():
        obs, _r, term, trunc, _info = env.last()
        env.step(None if term or trunc else first_legal(obs["action_mask"]))
    assert env.agents == []


def _snapshot(env) -> tuple:
    raw = env.unwrapped
    return (raw.engine.state.copy(), list(raw.agents), raw.agent_selection, dict(raw.rewards),
            dict(raw._cumulative_rewards), dict(raw.terminations), dict(raw.truncations),
            {a: dict(i) for a, i in raw.infos.items()}, list(raw._history), raw.game_seed)


def _same(a: tuple, b: tuple) -> bool:
    return same_state(a[0], b[0]) and a[1:] == b[1:]


@pytest.mark.parametrize("game", GAMES)
@pytest.mark.parametrize("call", ["step0", "stepNone", "observe", "last"])
def test_raw_aec_before_reset_says_call_reset(game, call):
    e = _aec(game, raw=True)
    fn = {"step0": lambda: e.step(0), "stepNone": lambda: e.step(None),
          "observe": lambda: e.observe("player_0"), "last": lambda: e.last()}[call]
    with pytest.raises(RuntimeError, match=r"^no game has been dealt yet: call reset\(\) first$"):
        fn()
    assert e.game_seed is None and not getattr(e, "agents", [])
    e.reset(seed=1)  # the env is usable afterwards
    assert e.observe("player_0")["observation"].shape == e.observation_space("player_0")["observation"].shape


@pytest.mark.parametrize("game", GAMES)
@pytest.mark.parametrize("call", ["step", "observe", "last"])
def test_wrapped_aec_before_reset_keeps_pettingzoos_errors(game, call):
    """``env()``: PettingZoo's OrderEnforcingWrapper answers before reset with its own errors."""
    e = _aec(game, raw=False)
    if call == "step":
        with pytest.raises(AssertionError, match=r"reset\(\) needs to be called before step"):
            e.step(0)
    elif call == "observe":
        with pytest.raises(AssertionError, match=r"reset\(\) needs to be called before observe"):
            e.observe("player_0")
    else:
        with pytest.raises(AttributeError, match="cannot be accessed before reset"):
            e.last()


@pytest.mark.parametrize("game", GAMES)
@pytest.mark.parametrize("raw", [True, False], ids=["raw", "wrapped"])
@pytest.mark.parametrize("agent", ["player_9", 0, "player_0 ", None, ("player_0",)],
                         ids=["player_9", "int", "space", "None", "tuple"])
def test_observe_an_unknown_agent_names_the_allowed_agents(game, raw, agent):
    e = _aec(game, raw)
    e.reset(seed=4)
    before = _snapshot(e)
    allowed = "allowed: 'player_0', 'player_1', 'player_2', 'player_3'"
    with pytest.raises(ValueError) as err:  # UnknownAgentError: a ValueError and a KeyError
        e.observe(agent)
    assert isinstance(err.value, KeyError) and type(err.value).__name__ == "UnknownAgentError"
    assert str(err.value) == f"unknown agent {agent!r}; {allowed}"
    for space in (e.action_space, e.observation_space):
        with pytest.raises(ValueError, match=re.escape(allowed)):
            space(agent)
    assert _snapshot(e)[1:] == before[1:] and same_state(e.unwrapped.engine.state, before[0])
    assert e.observe(e.agent_selection)["action_mask"].any()  # still playing


@pytest.mark.parametrize("game", GAMES)
@pytest.mark.parametrize("call", ["step0", "stepNone", "last", "last_no_observe"])
def test_raw_aec_after_the_game_says_it_is_over(game, call):
    e = _aec(game, raw=True)
    _play_to_the_end(e)
    before = _snapshot(e)
    fn = {"step0": lambda: e.step(0), "stepNone": lambda: e.step(None), "last": lambda: e.last(),
          "last_no_observe": lambda: e.last(observe=False)}[call]
    with pytest.raises(RuntimeError, match=r"^the game is over .*call reset\(\) to start a new game$"):
        fn()
    assert _same(_snapshot(e), before)
    e.reset(seed=5)  # a new game starts as usual
    assert e.agents == e.possible_agents


@pytest.mark.parametrize("game", GAMES)
@pytest.mark.parametrize("observe", [True, False])
def test_wrapped_aec_last_after_the_game_says_it_is_over(game, observe):
    e = _aec(game, raw=False)
    _play_to_the_end(e)
    before = _snapshot(e)
    with pytest.raises(RuntimeError, match=r"^the game is over .*call reset\(\) to start a new game$"):
        e.last(observe)
    assert _same(_snapshot(e), before)


@pytest.mark.parametrize("game", GAMES)
@pytest.mark.parametrize("action", [0, None])
def test_wrapped_aec_step_after_the_game_keeps_pettingzoos_warning(game, action, caplog):
    """``env()``: a step after the end is PettingZoo's OrderEnforcingWrapper's warning
    ("Should reset() first", logged by PettingZoo's EnvLogger), and nothing changes."""
    e = _aec(game, raw=False)
    _play_to_the_end(e)
    before = _snapshot(e)
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        assert e.step(action) is None
    assert any("Should reset() first" in r.getMessage() for r in caplog.records)
    assert _same(_snapshot(e), before)


# ---------------------------------------------------------------------------------------
# Parallel env
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("game", GAMES)
@pytest.mark.parametrize("actions", [{}, {"player_0": 0}], ids=["empty", "one"])
def test_parallel_step_before_reset_says_reset_was_not_called(game, actions):
    p = ripmarket_env.parallel_env(game, num_players=4)
    with pytest.raises(RuntimeError, match=r"^reset\(\) has not been called: call reset\(\) before step\(\)$"):
        p.step(actions)
    assert p.agents == [] and p.game_seed is None
    obs, _ = p.reset(seed=3)
    assert set(obs) == set(p.possible_agents)


@pytest.mark.parametrize("game", GAMES)
def test_parallel_step_after_the_game_says_it_is_over(game):
    p = ripmarket_env.parallel_env(game, num_players=4)
    obs, _ = p.reset(seed=3)
    while p.agents:
        obs, *_ = p.step({a: first_legal(o["action_mask"]) for a, o in obs.items()})
    with pytest.raises(RuntimeError, match=r"^the game is over: call reset\(\) before stepping again$"):
        p.step({})


# ---------------------------------------------------------------------------------------
# Single-agent Gymnasium env: no game seed in the infos
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("game", GAMES)
@pytest.mark.parametrize("seed", [None, 7], ids=["drawn", "given"])
def test_gym_infos_never_hold_the_game_seed(game, seed):
    env = gymnasium.make(get(game).gym_id, num_players=4, learner_seat="random")
    obs, info = env.reset(seed=seed)
    infos = [info]
    game_seed = env.unwrapped.game_seed
    assert type(game_seed) is int and game_seed >= 0
    if seed is not None:
        assert game_seed == seed
    for _ in range(5):
        obs, _r, term, _trunc, info = env.step(first_legal(info["action_mask"]))
        infos.append(info)
        if term:
            break
    for info in infos:
        assert not any("seed" in k for k in info), sorted(info)
        assert set(info) == {"action_mask", "learner_seat", "phase_id", "illegal_action"}
    assert env.unwrapped.game_seed == game_seed  # kept for records, for the whole episode


@pytest.mark.parametrize("game", GAMES)
def test_gym_terminate_mode_infos_hold_no_game_seed(game):
    env = gymnasium.make(get(game).gym_id, num_players=4, illegal_action="terminate")
    _, info = env.reset()
    illegal = int(np.flatnonzero(info["action_mask"] == 0)[0])
    _, reward, term, _, info = env.step(illegal)
    assert term and info["illegal_action"] and "game_seed" not in info


@pytest.mark.parametrize("game", GAMES)
def test_the_parallel_env_names_the_allowed_agents_too(game):
    par = ripmarket_env.parallel_env(game, num_players=4)
    for space in (par.action_space, par.observation_space):
        with pytest.raises(ValueError, match=re.escape("unknown agent 'player_9'; allowed: 'player_0', 'player_1'")):
            space("player_9")
    assert par.action_space("player_3").n == par.wait_action + 1


@pytest.mark.parametrize("game", GAMES)
def test_a_batch_of_text_actions_is_quoted_cut_short(game):
    venv = gymnasium.make_vec(get(game).gym_id, num_envs=2)
    venv.reset(seed=0)
    with pytest.raises(ValueError, match=r"^actions must be integers, one per game, got \['x{20}.*characters\) \(list\)$"):
        venv.step(np.array(["x" * 100_000, "y"]))
