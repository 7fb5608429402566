"""Every game's PettingZoo envs and the illegal-action error pickle with the standard
``pickle`` (subprocess vector envs, multiprocessing, Ray send them across processes): an
env's class is found again by its qualified name (``raw_env__<env name>``,
``parallel_env__<env name>``) and rebuilt from its constructor arguments (PettingZoo's
``EzPickle``: the same game settings, a fresh env to reset), and ``IllegalActionError``
arrives with its fields and message, where it used to fail to rebuild (a TypeError in the
parent instead of the error)."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import ripmarket_env
from ripmarket_env.core.engine import IllegalActionError
from ripmarket_env.games import get, ids

GAMES = ids()


@pytest.mark.parametrize("game", GAMES)
def test_aec_and_parallel_envs_pickle_and_play_the_same_seeded_game(game):
    for raw in (True, False):
        env = ripmarket_env.make(game, num_players=4, raw=raw)
        env.reset(seed=5)
        copy = pickle.loads(pickle.dumps(env))
        assert type(copy) is type(env) and type(copy.unwrapped) is type(env.unwrapped)
        assert type(env.unwrapped).__name__ == "raw_env"  # PettingZoo's name stays
        copy.reset(seed=5)
        for _ in range(30):  # the same seeded game, step by step (to its end, if sooner)
            if not env.agents:
                break
            obs, reward, term, trunc, _ = env.last()
            assert copy.agent_selection == env.agent_selection and copy.last()[1:4] == (reward, term, trunc)
            assert (copy.observe(copy.agent_selection)["observation"] == obs["observation"]).all()
            a = None if term or trunc else int(obs["action_mask"].nonzero()[0][0])
            env.step(a)
            copy.step(a)
        assert copy.agents == env.agents
    par = ripmarket_env.parallel_env(game, num_players=4)
    again = pickle.loads(pickle.dumps(par))
    assert type(again) is type(par) and type(par).__name__ == "parallel_env"
    o1, _ = par.reset(seed=9)
    o2, _ = again.reset(seed=9)
    assert all((o1[a]["observation"] == o2[a]["observation"]).all() for a in o1)


@pytest.mark.parametrize("game", GAMES)
def test_a_games_rules_and_engine_pickle_mid_game(game):
    """Every game's rules config and engine (a plugin game's made by ``simple_spec`` too)
    pickle by their classes' names and go on with the same game."""
    spec = get(game)
    rules = spec.make_rules()
    assert pickle.loads(pickle.dumps(rules)) == rules
    eng = spec.make_engine(rules, 2)
    eng.reset([7, 8])
    for _ in range(5):
        eng.step([int(np.flatnonzero(m)[0]) if m.any() else -1 for m in eng.legal_mask()])
    back = pickle.loads(pickle.dumps(eng))
    assert type(back) is type(eng) and back.rules == eng.rules
    for _ in range(5):
        acts = [int(np.flatnonzero(m)[0]) if m.any() else -1 for m in eng.legal_mask()]
        eng.step(acts)
        back.step(acts)
        assert eng.state.tobytes() == back.state.tobytes()


@pytest.mark.parametrize("game", GAMES)
def test_the_illegal_action_error_pickles_with_its_fields_and_message(game):
    env = ripmarket_env.make(game, num_players=4, raw=True)
    env.reset(seed=3)
    for bad in (10**6, "12", True):
        with pytest.raises(IllegalActionError) as info:
            env.step(bad)
        err = info.value
        back = pickle.loads(pickle.dumps(err))
        assert type(back) is IllegalActionError and isinstance(back, ValueError)
        assert str(back) == str(err) and back.args == err.args
        assert (back.game, back.action, back.legal, back.phase) == (err.game, err.action, err.legal, err.phase)
        assert str(IllegalActionError(str(err))) == str(err)  # from its message alone


def test_an_illegal_action_in_a_subprocess_vector_env_reaches_the_parent_as_itself():
    """Gymnasium's async vector env sends a worker's error type and message to the parent,
    which raises ``type(message)``: the error, its message whole."""
    import gymnasium
    import numpy as np

    envs = gymnasium.make_vec("RipMarket-v0", num_envs=1, vectorization_mode="async")
    try:
        _, infos = envs.reset(seed=1)
        mask = np.asarray(infos["action_mask"][0])
        bad = int(np.flatnonzero(mask == 0)[0])
        with pytest.raises(IllegalActionError, match=f"illegal action {bad} "):
            envs.step(np.array([bad]))
    finally:
        envs.close(terminate=True)


def test_a_pickled_env_loads_in_a_fresh_process(tmp_path):
    """The class is found by name in a process that never built it (the registry makes it)."""
    import subprocess
    import sys

    path = tmp_path / "envs.pkl"
    env = ripmarket_env.make("rune-market", num_players=3)
    path.write_bytes(pickle.dumps((env, ripmarket_env.parallel_env("black-market", num_players=4))))
    code = ("import pickle, sys; e, p = pickle.load(open(sys.argv[1], 'rb')); e.reset(seed=1); "
            "print(e.unwrapped.metadata['name'], e.num_agents, type(e.unwrapped).__name__, p.metadata['name'])")
    out = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["rune_market_v0", "3", "raw_env", "black_market_v0"]
