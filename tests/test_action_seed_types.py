"""The AEC env's actions and seeds, checked by type the same way in every game.

An action id is a Python or numpy integer; a bool, a numpy bool, a float (even a whole
one), a string or None is not one (``True`` is not action 1) and is refused with
``IllegalActionError`` ("action must be an integer action id, got ..."), listing the legal
actions and changing nothing (R-12.2, BM-12.4, RM-8.2). A seed is any non-negative integer
(R-12.4, BM-12.2, RM-8.3), Python or numpy; anything else is refused with "seed must be a
non-negative integer ..." and leaves the env as it was. The parallel env, which steps and
resets through the AEC env, answers the same way.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import ripmarket_env
from ripmarket_env.core.engine import IllegalActionError, seed_to_u64

GAMES = ("ripmarket", "black-market", "rune-market")
#: The rule that an illegal action is refused with the legal set and changes nothing, per game.
ILLEGAL_RULE = {"ripmarket": "R-12.2", "black-market": "BM-12.4", "rune-market": "RM-8.2"}

NOT_ACTION_IDS = [
    pytest.param(True, r"not a bool, got True \(bool\)", id="True"),
    pytest.param(False, r"not a bool, got False \(bool\)", id="False"),
    pytest.param(np.True_, r"not a bool, got np\.True_ \(numpy\.bool\)", id="np.True_"),
    pytest.param(np.False_, r"not a bool, got np\.False_ \(numpy\.bool\)", id="np.False_"),
    pytest.param("12", r"got '12' \(str\)", id="str"),
    pytest.param(12.0, r"got 12\.0 \(float\)", id="whole-float"),
    pytest.param(np.float64(1.0), r"got np\.float64\(1\.0\) \(numpy\.float64\)", id="np.float64"),
    pytest.param(None, r"got None \(NoneType\)", id="None"),
]


def _raw(game: str, seed: int = 3):
    e = ripmarket_env.make(game, num_players=4, raw=True)
    e.reset(seed=seed)
    return e


def _snapshot(e) -> tuple:
    """Everything a refused call must leave as it was."""
    agent = e.agent_selection
    obs = e.observe(agent)
    return (agent, obs["observation"].tobytes(), obs["action_mask"].tobytes(), e.engine.state.tobytes(),
            e.game_seed, list(e._history), dict(e._cumulative_rewards), dict(e.terminations))


def _legal(e) -> list[int]:
    return np.flatnonzero(e.observe(e.agent_selection)["action_mask"]).tolist()


# ---------------------------------------------------------------------------- actions
@pytest.mark.parametrize("game", GAMES)
@pytest.mark.parametrize("action, shown", NOT_ACTION_IDS)
def test_a_value_that_is_not_an_integer_is_refused_as_not_an_action_id(game, action, shown):
    """R-12.2 / BM-12.4 / RM-8.2 on the raw AEC env: a bool, numpy bool, string, float or
    None is refused as not an integer action id (never applied as 0 or 1, never called
    "illegal action 12" with 12 among the legal actions); the error shows the value as
    given, lists the legal actions and the decision, and observation, mask,
    agent_selection and state are unchanged."""
    e = _raw(game)
    before = _snapshot(e)
    legal = _legal(e)
    with pytest.raises(IllegalActionError) as info:
        e.step(action)
    msg = str(info.value)
    assert msg.startswith("action must be an integer action id, "), msg
    assert re.search(shown, msg), msg
    assert "illegal action" not in msg
    assert "in game 0 (decision: " in msg and "legal actions: " in msg and msg.endswith("The state was not changed.")
    for a in legal:
        assert re.search(rf"\b{a} \(", msg), (a, msg)
    assert info.value.legal == legal and info.value.action is action
    assert isinstance(info.value, ValueError)
    assert _snapshot(e) == before, f"{ILLEGAL_RULE[game]}: a refused action changed the env"


@pytest.mark.parametrize("game", GAMES)
def test_bool_action_is_refused_even_where_0_and_1_are_legal(game):
    """R-12.2 / BM-12.4 / RM-8.2: ``True`` / ``False`` are refused in every decision, also
    one where action 1 (or 0) is legal: in R.I.P. Market's opening decision both are, and
    ``step(True)`` used to play action 1 there."""
    e = _raw(game)
    for action in (True, False, np.True_, np.False_):
        before = _snapshot(e)
        with pytest.raises(IllegalActionError, match=r"^action must be an integer action id, not a bool, got "):
            e.step(action)
        assert _snapshot(e) == before
    if game == "ripmarket":
        assert {0, 1} <= set(_legal(e))


@pytest.mark.parametrize("game", GAMES)
@pytest.mark.parametrize("kind", [int, np.int64, np.int32, np.uint8, np.intp, lambda a: np.array(a, np.int16)],
                         ids=["int", "int64", "int32", "uint8", "intp", "0-d-array"])
def test_integer_actions_of_any_integer_type_are_applied_alike(game, kind):
    """A legal action id given as a Python int, a numpy integer scalar or a 0-d integer
    array plays the same step: the env ends in the same state as with the plain int."""
    ref, e = _raw(game), _raw(game)
    rng = np.random.default_rng(0)
    for _ in range(6):
        if not e.agents:
            break
        a = int(rng.choice(_legal(e)))
        ref.step(a)
        e.step(kind(a))
        assert e.engine.state.tobytes() == ref.engine.state.tobytes()
        assert e.agent_selection == ref.agent_selection
        assert e._history == ref._history and all(type(x) is int for x in e._history)


@pytest.mark.parametrize("game", GAMES)
def test_an_integer_that_is_not_legal_keeps_its_illegal_action_message(game):
    """R-12.2 / BM-12.4 / RM-8.2: an integer (a numpy one too) that is not legal still
    reads "illegal action N in game 0 (decision: ...)", state unchanged."""
    e = _raw(game)
    bad = next(a for a in range(e.engine.num_actions) if a not in _legal(e))
    for action in (bad, np.int64(bad), e.engine.num_actions, -1):
        before = _snapshot(e)
        with pytest.raises(IllegalActionError, match=rf"^illegal action {int(action)} in game 0 \(decision: "):
            e.step(action)
        assert _snapshot(e) == before


@pytest.mark.parametrize("game", GAMES)
def test_terminate_mode_ends_the_game_on_a_bool_action(game):
    """``illegal_action="terminate"``: a bool is an illegal action like any other, the
    offending agent gets ``illegal_reward`` and the game ends (it is not played as 1)."""
    e = ripmarket_env.make(game, num_players=4, raw=True, illegal_action="terminate")
    e.reset(seed=3)
    agent = e.agent_selection
    e.step(True)
    assert all(e.terminations.values()) and e._history == []
    assert e.rewards[agent] == -1.0 and all(r == 0.0 for a, r in e.rewards.items() if a != agent)


@pytest.mark.parametrize("game", GAMES)
@pytest.mark.parametrize("action", [True, np.True_, "12", 12.0])
def test_wrapped_env_refuses_non_integer_actions_as_out_of_action_space(game, action):
    """``env()`` (PettingZoo's wrappers): a bool fails the "action is not in action space"
    check as a string or float does (Gymnasium's ``Discrete.contains`` would take ``True``
    as 1 and the mask lookup then failed with numpy's "truth value ... is ambiguous")."""
    e = ripmarket_env.make(game, num_players=4)
    e.reset(seed=3)
    raw = e.unwrapped
    before = _snapshot(raw)
    with pytest.raises(AssertionError, match="action is not in action space"):
        e.step(action)
    assert _snapshot(raw) == before


@pytest.mark.parametrize("game", GAMES)
def test_parallel_env_refuses_bool_and_string_actions(game):
    """The parallel env steps through the AEC env: a bool or a string of the deciding seat
    gets the same "not an integer action id" error, nothing changed."""
    p = ripmarket_env.make(game, num_players=4, parallel=True)
    p.reset(seed=3)
    agent = p.aec.agent_selection
    before = p.aec.engine.state.tobytes()
    for action in (True, np.True_, "12"):
        with pytest.raises(IllegalActionError, match=r"^action must be an integer action id, "):
            p.step({agent: action})
    assert p.aec.engine.state.tobytes() == before and p.aec.agent_selection == agent


# ---------------------------------------------------------------------------- seeds
BAD_SEEDS = [
    pytest.param(-1, r"got -1 \(int\)", id="negative"),
    pytest.param(np.int64(-3), r"got np\.int64\(-3\) \(numpy\.int64\)", id="negative-np"),
    pytest.param(1.5, r"got 1\.5 \(float\)", id="float"),
    pytest.param(7.0, r"got 7\.0 \(float\)", id="whole-float"),
    pytest.param("x", r"got 'x' \(str\)", id="str"),
    pytest.param("7", r"got '7' \(str\)", id="digit-str"),
    pytest.param([1, 2], r"got \[1, 2\] \(list\)", id="list"),
    pytest.param(True, r"got True \(bool\)", id="bool"),
    pytest.param(np.True_, r"got np\.True_ \(numpy\.bool\)", id="np.bool"),
    pytest.param(np.array([5]), r"got array\(\[5\]\) \(numpy\.ndarray\)", id="array"),
]
SEED_MSG = r"^seed must be a non-negative integer \(or None for a random seed\), "


@pytest.mark.parametrize("game", GAMES)
@pytest.mark.parametrize("seed, shown", BAD_SEEDS)
def test_a_bad_seed_is_refused_with_one_message_and_changes_nothing(game, seed, shown):
    """R-12.4 / BM-12.2 / RM-8.3: a seed is a non-negative integer; a negative one, a float
    (even a whole one: it is not truncated), a string, a list or a bool is refused with
    "seed must be a non-negative integer (or None for a random seed), got <value> (<type>)"
    (never Python's "invalid literal for int()") and the game in progress is untouched."""
    e = _raw(game)
    e.step(_legal(e)[0])
    before = _snapshot(e)
    with pytest.raises(ValueError, match=SEED_MSG + shown + "$"):
        e.reset(seed=seed)
    assert _snapshot(e) == before


@pytest.mark.parametrize("game", GAMES)
def test_a_bad_seed_before_the_first_reset_changes_nothing(game):
    """A refused seed on a fresh env leaves it without a game (no seed recorded)."""
    e = ripmarket_env.make(game, num_players=4, raw=True)
    with pytest.raises(ValueError, match=SEED_MSG):
        e.reset(seed=1.5)
    assert e.game_seed is None and not getattr(e, "agents", [])


@pytest.mark.parametrize("game", GAMES)
@pytest.mark.parametrize("seed", [0, np.int64(5), np.uint64(5), np.int8(5), 2**63 - 1, 2**64, 2**70],
                         ids=["0", "np.int64", "np.uint64", "np.int8", "2**63-1", "2**64", "2**70"])
def test_good_seeds_deal_the_engines_game(game, seed):
    """R-12.4 / BM-12.2 / RM-8.3: any non-negative integer, Python or numpy, of any size is
    a seed: ``reset(seed=s)`` deals the engine's game ``s`` (the same state as
    ``Engine.reset([s])``) and records ``s`` as a Python int."""
    e = ripmarket_env.make(game, num_players=4, raw=True)
    e.reset(seed=seed)
    assert e.game_seed == int(seed) and type(e.game_seed) is int
    assert e.engine.seeds.tolist() == [int(seed)]
    ref = type(e.engine)(e.rules, 1)
    ref.reset([int(seed)])
    assert e.engine.state.tobytes() == ref.state.tobytes()
    assert seed_to_u64(seed) == seed_to_u64(int(seed))


@pytest.mark.parametrize("game", GAMES)
def test_seed_none_draws_a_fresh_game(game):
    """``reset()`` / ``reset(seed=None)`` stays allowed: a fresh random seed each time."""
    e = ripmarket_env.make(game, num_players=4, raw=True)
    seeds = set()
    for _ in range(3):
        e.reset(seed=None)
        assert isinstance(e.game_seed, int) and e.game_seed >= 0
        seeds.add(e.game_seed)
    assert len(seeds) > 1


@pytest.mark.parametrize("game", GAMES)
def test_parallel_env_refuses_bad_seeds_with_the_same_message(game):
    """The parallel env resets through the AEC env: the same seed message."""
    p = ripmarket_env.make(game, num_players=4, parallel=True)
    for seed in (1.5, "x", True):
        with pytest.raises(ValueError, match=SEED_MSG):
            p.reset(seed=seed)
    p.reset(seed=np.int64(5))
    assert p.game_seed == 5


@pytest.mark.parametrize("seed", [1.5, "7", True, np.True_, -1, [1]])
def test_engine_reset_refuses_the_same_seeds(seed):
    """R-12.4 through ``Engine.reset``: the same check, worded without the env's None
    (the engine needs a seed per game), nothing changed."""
    from ripmarket_env.games.ripmarket import Engine, RulesConfig

    eng = Engine(RulesConfig(num_players=4), batch_size=2)
    eng.reset([3, 4])
    before = eng.state.tobytes()
    with pytest.raises(ValueError, match=r"^seed must be a non-negative integer, got .+ \(.+\)$"):
        eng.reset([5, seed])
    assert eng.state.tobytes() == before and eng.seeds.tolist() == [3, 4]


@pytest.mark.parametrize("game", GAMES)
def test_gym_env_refuses_non_integer_actions_and_seeds_alike(game):
    """The Gymnasium env (R-12.2 / BM-12.4 / RM-8.2; R-12.4 / BM-12.2 / RM-8.3): a bool, a
    numeric string or a fraction is not an action id ('12' was applied as action 12, True as
    1), and a seed is a Python or numpy integer from 0 up (True was seed 1, np.int64 refused
    by Gymnasium); nothing changes on a refusal."""
    import gymnasium

    from ripmarket_env.games import get

    env = gymnasium.make(get(game).gym_id).unwrapped
    env.reset(seed=3)
    before = (env._observation().copy(), env.action_masks().copy())
    for bad in (True, np.bool_(False), "12", 1.5):
        with pytest.raises(ValueError, match=r"action must be an integer action id, got "):
            env.step(bad)
        assert (env._observation() == before[0]).all() and (env.action_masks() == before[1]).all()
    for bad in (True, 1.5, "x", -1):
        with pytest.raises(ValueError, match=r"seed must be a non-negative integer \(or None for a random seed\), got "):
            env.reset(seed=bad)
    env.reset(seed=np.int64(3))
    assert env.game_seed == 3 and (env._observation() == before[0]).all()
    a = int(np.flatnonzero(env.action_masks())[0])
    env.step(np.int64(a))  # numpy integers are action ids
