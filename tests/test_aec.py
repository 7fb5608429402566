"""The PettingZoo AEC env of R.I.P. Market: the game's own conventions (Ghosts keep acting,
rewards at the end on the right agents, spaces and pages). PettingZoo's api/seed/render
tests and the illegal-action rules run for every game in tests/test_conformance.py."""

from __future__ import annotations


import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ripmarket_env
from ripmarket_env import aec
from ripmarket_env.games.ripmarket import Engine, RulesConfig
from ripmarket_env.games.ripmarket.state import PHASE_NAMES

COUNTS = (2, 3, 6, 10)


def legal_of(e) -> list[int]:
    """The deciding agent's legal actions, from its mask."""
    return np.flatnonzero(e.observe(e.agent_selection)["action_mask"]).tolist()


def play_random(e, rng, max_steps=100_000, on_step=None):
    """Play one game to the end with random legal actions through the AEC loop.

    Returns {agent: reward seen by last() when the agent was terminated}.
    """
    final = {}
    for n, agent in enumerate(e.agent_iter()):
        obs, rew, term, trunc, info = e.last()
        if term or trunc:
            final[agent] = rew
            e.step(None)
            continue
        legal = np.flatnonzero(obs["action_mask"])
        a = int(legal[rng.integers(len(legal))])
        if on_step is not None:
            on_step(e, agent, a, info)
        e.step(a)
        assert n < max_steps
    return final


# ------------------------------------------------------------------ PettingZoo's tests
# ------------------------------------------------------------------ construction
def test_metadata_agents_and_spaces():
    e = ripmarket_env.raw_env(num_players=5)
    assert e.metadata["name"] == "ripmarket_v0"
    assert e.metadata["render_modes"] == ["human", "ansi", "rgb_array"]
    assert e.metadata["is_parallelizable"] is False
    assert e.possible_agents == [f"player_{i}" for i in range(5)]
    eng = e.engine
    for a in e.possible_agents:
        sp = e.observation_space(a)
        assert sp["observation"].shape == (eng.obs_size,)
        assert sp["observation"].dtype == np.float32
        assert sp["action_mask"].shape == (eng.num_actions,)
        assert sp["action_mask"].dtype == np.int8
        assert e.action_space(a).n == eng.num_actions
    low = e.observation_space("player_0")["observation"].low
    high = e.observation_space("player_0")["observation"].high
    assert (low < high).all()
    lay = eng.obs_layout
    assert (low[lay.slice("last_score")] < 0).all()  # scores can be negative


def test_rules_arguments():
    e = ripmarket_env.raw_env(num_players=2, tie_rule="earliest")
    assert e.rules == RulesConfig(num_players=2, tie_rule="earliest")
    e = ripmarket_env.raw_env(rules=RulesConfig(num_players=7))
    assert len(e.possible_agents) == 7
    e = ripmarket_env.raw_env(rules={"num_players": 3, "reward_mode": "placement"})
    assert e.rules.reward_mode == "placement"
    with pytest.raises(ValueError, match="not both"):
        ripmarket_env.raw_env(rules=RulesConfig(num_players=3), tie_rule="earliest")
    with pytest.raises(ValueError, match="disagrees"):
        ripmarket_env.raw_env(num_players=4, rules=RulesConfig(num_players=3))
    with pytest.raises(ValueError, match="num_players"):
        ripmarket_env.raw_env(num_players=11)
    with pytest.raises(ValueError, match="render_mode"):
        ripmarket_env.raw_env(render_mode="video")


def test_doc_page_sections():
    doc = aec.__doc__
    for section in ("## Description", "## Specs", "## Observation", "## Actions", "## Rewards",
                    "## Termination", "## Illegal actions", "## Version History", "docs/ENV.md"):
        assert section in doc, section


def out_of_bounds(o, sp, lay) -> list[str]:
    bad = []
    for p in lay.pieces:
        for seat in range(10 if p.scope == "seat" else 1):
            sl = lay.slice(p.name, seat)
            if (o[sl] < sp.low[sl]).any() or (o[sl] > sp.high[sl]).any():
                bad.append(f"{p.name}[{seat}]: {o[sl].min()}..{o[sl].max()}")
    return bad


def test_every_observation_piece_has_sound_bounds():
    """Pieces not named in observation_bounds must really be fractions in [0, 1]."""
    e = ripmarket_env.raw_env(num_players=10)
    sp = e.observation_space("player_0")["observation"]
    rng = np.random.default_rng(3)
    for seed in range(3):
        e.reset(seed=seed)
        for _ in range(400):
            if all(e.terminations.values()):
                break
            for a in e.possible_agents:
                o = e.observe(a)["observation"]
                assert sp.contains(o), out_of_bounds(o, sp, e.engine.obs_layout)
            legal = legal_of(e)
            e.step(legal[rng.integers(len(legal))])


# ------------------------------------------------------------------ turns, Ghosts, infos
def test_agent_selection_follows_the_engine_and_turns_take_several_steps():
    e = ripmarket_env.raw_env(num_players=4)
    e.reset(seed=5)
    rng = np.random.default_rng(0)
    repeats = 0
    prev = None
    while not all(e.terminations.values()):
        seat = int(e.engine.state[0]["actor"])
        assert e.agent_selection == f"player_{seat}"
        if e.agent_selection == prev:
            repeats += 1
        prev = e.agent_selection
        legal = legal_of(e)
        e.step(legal[rng.integers(len(legal))])
    assert repeats > 0  # acquire then play: the same agent decides twice in a row


def test_infos_hold_fixed_types_phase_id_and_ghost_flag():
    e = ripmarket_env.raw_env(num_players=3)
    e.reset(seed=2)
    rng = np.random.default_rng(1)
    while not all(e.terminations.values()):
        st = e.engine.state[0]
        for i, a in enumerate(e.possible_agents):
            info = e.infos[a]
            assert set(info) == {"phase_id", "is_ghost"}
            assert type(info["phase_id"]) is int and type(info["is_ghost"]) is bool
            assert info["phase_id"] == int(st["phase"])
            assert info["is_ghost"] == (not bool(st["alive"][i]))
        legal = legal_of(e)
        e.step(legal[rng.integers(len(legal))])
    assert all(PHASE_NAMES[info["phase_id"]] == "game_over" for info in e.infos.values())


def test_verbose_infos_add_phase_name_and_legal_moves():
    e = ripmarket_env.raw_env(num_players=3, verbose_infos=True)
    e.reset(seed=2)
    rng = np.random.default_rng(1)
    while not all(e.terminations.values()):
        st = e.engine.state[0]
        for i, a in enumerate(e.possible_agents):
            info = e.infos[a]
            assert info["phase"] == PHASE_NAMES[int(st["phase"])] == PHASE_NAMES[info["phase_id"]]
            assert info["is_ghost"] == (not bool(st["alive"][i]))
            if a == e.agent_selection:
                assert info["legal_moves"] == e.engine.legal_actions(0)
                assert info["legal_moves"] == np.flatnonzero(e.observe(a)["action_mask"]).tolist()
            else:
                assert info["legal_moves"] == []
                assert not e.observe(a)["action_mask"].any()
        legal = e.infos[e.agent_selection]["legal_moves"]
        e.step(legal[rng.integers(len(legal))])
    assert all(info["phase"] == "game_over" for info in e.infos.values())


def test_illegal_action_terminate_ends_the_game_and_penalises_the_offender():
    e = ripmarket_env.raw_env(num_players=4, illegal_action="terminate")
    e.reset(seed=4)
    legal = set(legal_of(e))
    illegal = next(a for a in range(e.engine.num_actions) if a not in legal)
    offender = e.agent_selection
    e.step(illegal)
    assert all(e.terminations.values())
    assert e.rewards[offender] == -1.0
    assert all(r == 0.0 for a, r in e.rewards.items() if a != offender)
    assert e._cumulative_rewards[offender] == -1.0
    assert not e.observe(offender)["action_mask"].any()
    for a in list(e.agents):  # the AEC loop ends the game as usual
        e.step(None)
    assert e.agents == []
    with pytest.raises(ValueError, match="illegal_action='skip' is not allowed; allowed: 'raise', 'terminate'"):
        ripmarket_env.raw_env(num_players=4, illegal_action="skip")


def test_ghosts_stay_in_agents_and_act():
    rng = np.random.default_rng(7)
    ghost_steps = 0
    for seed in range(10):
        e = ripmarket_env.env(num_players=6)
        e.reset(seed=seed)

        def check(env, agent, action, info):
            nonlocal ghost_steps
            ghosts = [a for a in env.agents if env.infos[a]["is_ghost"]]
            assert len(env.agents) == 6  # nobody leaves before the end
            assert not any(env.terminations.values())
            if info["is_ghost"]:
                assert PHASE_NAMES[info["phase_id"]] in ("ghost", "choose_victim")
                ghost_steps += 1
            assert set(ghosts) <= set(env.agents)

        play_random(e, rng, on_step=check)
        if ghost_steps >= 5:
            break
    assert ghost_steps >= 5


def test_observe_any_agent_sees_own_hand_only():
    e = ripmarket_env.raw_env(num_players=4)
    e.reset(seed=9)
    lay = e.engine.obs_layout
    st = e.engine.state[0]
    for i, a in enumerate(e.possible_agents):
        o = e.observe(a)["observation"]
        np.testing.assert_allclose(o[lay.slice("hand")], st["hand"][i] / 3.0, rtol=1e-6)
        expected = e.engine.observe([i])[0]
        np.testing.assert_array_equal(o, expected)


# ------------------------------------------------------------------ rewards, termination
@pytest.mark.parametrize("n", (2, 5, 10))
def test_rewards_sum_to_zero_and_land_on_the_right_agents(n):
    rng = np.random.default_rng(n)
    for seed in range(3):
        e = ripmarket_env.env(num_players=n)
        e.reset(seed=seed)
        raw = e.unwrapped
        actions = []
        final = play_random(e, rng, on_step=lambda env, agent, a, info: actions.append(a))
        assert set(final) == set(raw.possible_agents)
        engine_rewards = raw.engine.rewards()[0]
        for i, a in enumerate(raw.possible_agents):
            assert final[a] == pytest.approx(float(engine_rewards[i]))
        assert sum(final.values()) == pytest.approx(0.0, abs=1e-5)
        assert e.agents == []
        # The same seed and actions through the Engine facade give the same game.
        eng = Engine(RulesConfig(num_players=n), batch_size=1)
        eng.reset([seed])
        for a in actions:
            eng.step(np.array([a]))
        assert eng.terminated[0]
        np.testing.assert_array_equal(eng.rewards(), raw.engine.rewards())
        for field in ("hp", "alive", "winners", "round_num", "steps"):
            np.testing.assert_array_equal(eng.state[field], raw.engine.state[field])


def test_rewards_are_zero_before_the_end():
    e = ripmarket_env.raw_env(num_players=3)
    e.reset(seed=1)
    rng = np.random.default_rng(0)
    while True:
        legal = legal_of(e)
        e.step(legal[rng.integers(len(legal))])
        if all(e.terminations.values()):
            break
        assert all(r == 0 for r in e.rewards.values())
        assert all(r == 0 for r in e._cumulative_rewards.values())
    assert not any(e.truncations.values())
    assert sum(e.rewards.values()) == pytest.approx(0.0, abs=1e-5)
    # Dead steps: None removes each agent in turn.
    with pytest.raises(ValueError):
        e.step(0)
    while e.agents:
        e.step(None)
    assert e.rewards == {} and e.infos == {}


# ------------------------------------------------------------------ illegal actions
# ------------------------------------------------------------------ seeding, records, render
def test_seeding():
    a = ripmarket_env.raw_env(num_players=5)
    b = ripmarket_env.raw_env(num_players=5)
    a.reset(seed=123)
    b.reset(seed=123)
    assert a.engine.state.tobytes() == b.engine.state.tobytes()
    assert a.game_seed == 123
    a.reset()
    b.reset()
    assert a.game_seed != b.game_seed  # fresh random seeds
    with pytest.raises(ValueError):
        a.reset(seed=-1)


def test_save_record_replays_to_the_same_game(tmp_path):
    from ripmarket_env import replay

    e = ripmarket_env.env(num_players=4)
    e.reset(seed=31)
    rng = np.random.default_rng(2)
    for _ in range(30):  # mid-game record
        legal = np.flatnonzero(e.observe(e.agent_selection)["action_mask"])
        e.step(int(legal[rng.integers(len(legal))]))
    path = e.unwrapped.save_record(tmp_path / "mid.jsonl")
    eng = replay(path)
    for field in ("hp", "alive", "hand", "market", "played", "round_num", "steps", "actor", "phase"):
        np.testing.assert_array_equal(eng.state[field], e.unwrapped.engine.state[field])
    play_random(e, rng)
    eng = replay(e.unwrapped.save_record(tmp_path / "full.jsonl"))
    assert eng.terminated[0]
    np.testing.assert_array_equal(eng.rewards(), e.unwrapped.engine.rewards())


def test_render_modes_return_what_pettingzoo_expects(capsys):
    e = ripmarket_env.env(num_players=3, render_mode="ansi")
    e.reset(seed=0)
    text = e.render()
    assert isinstance(text, str) and "player_2" in text
    assert "Hands (god view)" not in text
    e.unwrapped.render_god = True
    assert "Hands (god view)" in e.render()
    e = ripmarket_env.env(num_players=3, render_mode="rgb_array")
    e.reset(seed=0)
    img = e.render()
    assert img.ndim == 3 and img.shape[2] == 3 and img.dtype == np.uint8
    e = ripmarket_env.env(num_players=3, render_mode="human")
    e.reset(seed=0)
    assert e.render() is None
    assert "R.I.P. Market" in capsys.readouterr().out


# ------------------------------------------------------------------ the wrappers
def test_env_wrappers_are_pettingzoos_and_read_the_raw_env_state():
    from gymnasium import spaces
    from pettingzoo.utils import wrappers

    e = ripmarket_env.env(num_players=4)
    chain = []
    w = e
    while hasattr(w, "env"):
        chain.append(type(w).__mro__[1])
        w = w.env
    assert chain == [wrappers.OrderEnforcingWrapper, wrappers.AssertOutOfBoundsWrapper,
                     wrappers.TerminateIllegalWrapper]
    for name in ("agents", "agent_selection", "terminations", "infos", "rewards"):
        with pytest.raises(AttributeError, match="cannot be accessed before reset"):
            getattr(e, name)
    e.reset(seed=3)
    raw = e.env.env.env
    assert e.unwrapped is raw and e.env.unwrapped is raw
    for a in raw.possible_agents:
        assert e.action_space(a) is raw.action_space(a)
        assert e.observation_space(a) is raw.observation_space(a)
    inner = e.env
    for name in aec._STATE_ATTRS:
        assert getattr(e, name) is getattr(raw, name)
        assert getattr(inner, name) is getattr(raw, name)
    e.step(legal_of(raw)[0])
    assert e.agent_selection == raw.agent_selection == f"player_{int(raw.engine.state[0]['actor'])}"
    assert e.infos is raw.infos
    with pytest.raises(AttributeError, match="private attribute"):
        e._history  # PettingZoo's rule for private names still holds
    # The action space answers exactly as Gymnasium's Discrete and stays one.
    sp = e.action_space("player_0")
    plain = spaces.Discrete(raw.engine.num_actions)
    assert sp == plain and repr(sp) == repr(plain)
    for x in (-1, 0, 5, sp.n - 1, sp.n, 10**30, True, np.int64(3), np.int64(-1), np.int64(sp.n), np.uint64(2), np.int8(-2), 2.0, "1", None, np.array(4)):
        try:
            expected = plain.contains(x)
        except OverflowError:  # gymnasium 1.2 (the ecosystem extra's) cannot answer 10**30
            expected = False
        assert sp.contains(x) == expected, x
    import pickle

    assert type(pickle.loads(pickle.dumps(sp))) is spaces.Discrete


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 80).flatmap(lambda n: st.tuples(
    st.just(n), st.lists(st.sampled_from([0, 0, 1, 1, 1, 2, -1]), min_size=n, max_size=n),
    st.sampled_from(["int8", "int16", "bool", "short", "probability"]))), st.integers(0, 2**32))
def test_action_space_samples_as_gymnasiums_discrete(case, seed):
    """``action_space(agent).sample(mask)`` (PettingZoo's documented random loop) takes
    its own fast path for an ordinary int8 mask: the same action, the same draws left in
    ``np_random`` and the same error as Gymnasium's ``Discrete`` for every mask (no legal
    action, values other than 0/1, another dtype or shape, a probability mask)."""
    from gymnasium import spaces

    from ripmarket_env.envs.aec import _Discrete

    n, values, kind = case
    mask = np.array(values, np.int8)
    args = {"int8": (mask, None), "int16": (mask.astype(np.int16), None), "bool": (mask == 1, None),
            "short": (mask[:-1], None), "probability": (None, np.full(n, 1.0 / n))}[kind]
    ours, plain = _Discrete(n), spaces.Discrete(n)
    ours.seed(seed)
    plain.seed(seed)
    for _ in range(3):
        try:
            want = plain.sample(*args)
        except AssertionError as e:
            with pytest.raises(AssertionError, match=re.escape(str(e)[:40])):
                ours.sample(*args)
            return
        got = ours.sample(*args)
        assert got == want and type(got) is type(want)
    assert ours.np_random.integers(2**62) == plain.np_random.integers(2**62)


# --------------------------------------------------------------------------- the parallel env
GAMES = ripmarket_env.games()


@pytest.mark.parametrize("game", GAMES)
def test_env_wrappers_behave_as_pettingzoos_own_chain(game):
    """``env()``'s wrappers take the ordinary step in one call; every step, observation,
    ``last()`` and error is the same as through PettingZoo's own three wrappers: legal,
    illegal (the game ends, the offender gets -1), out-of-bounds and ``None`` actions,
    steps of terminated agents and steps after the game ended."""
    from pettingzoo.utils import wrappers

    def chains(seed):
        ours = ripmarket_env.make(game)
        plain = aec.aec_env_class(ripmarket_env.games.get(game))(num_players=ours.unwrapped.num_players)
        theirs = wrappers.OrderEnforcingWrapper(wrappers.AssertOutOfBoundsWrapper(
            wrappers.TerminateIllegalWrapper(plain, illegal_reward=-1)))
        for e in (ours, theirs):
            e.reset(seed=seed)
        return ours, theirs

    def outcome(e, action):
        try:
            e.step(action)
        except AssertionError as exc:
            return ("AssertionError", str(exc))
        return ("ok", e.agent_selection if e.agents else None)

    def same(a, b):
        la, lb = a.last(), b.last()
        np.testing.assert_array_equal(la[0]["observation"], lb[0]["observation"])
        np.testing.assert_array_equal(la[0]["action_mask"], lb[0]["action_mask"])
        assert la[1:] == lb[1:]
        assert a.rewards == b.rewards and a.agents == b.agents

    rng = np.random.default_rng(5)
    for seed in range(6):
        ours, theirs = chains(seed)
        n_actions = ours.action_space(ours.possible_agents[0]).n
        for _step in range(400):
            if not ours.agents:
                assert outcome(ours, 0) == outcome(theirs, 0)  # a step after the end: a warning
                break
            same(ours, theirs)
            obs, _r, term, trunc, _i = ours.last()
            theirs.last()
            legal = np.flatnonzero(obs["action_mask"])
            kind = rng.integers(20)
            if term or trunc:
                action = None
            elif kind == 0:
                action = int(np.flatnonzero(obs["action_mask"] == 0)[0]) if len(legal) < n_actions else None
            elif kind == 1:
                action = n_actions if seed % 2 else None  # out of bounds, or None for a live agent
            else:
                action = int(rng.choice(legal))
            assert outcome(ours, action) == outcome(theirs, action), (seed, _step, action)

    # agent_iter: the same agents, the same bound, the same complaint about a missing step
    ours, theirs = chains(7)

    def walk(e):
        seen, it = [], iter(e.agent_iter(max_iter=3))
        for agent in it:
            seen.append(agent)
            e.step(int(np.flatnonzero(e.last()[0]["action_mask"])[0]))
        it = iter(e.agent_iter())
        next(it)
        with pytest.raises(AssertionError, match="need to call step"):
            next(it)
        return seen

    assert walk(ours) == walk(theirs)
    fresh = ripmarket_env.make(game)
    with pytest.raises(Exception) as exc:
        fresh.agent_iter()
    plain = wrappers.OrderEnforcingWrapper(wrappers.AssertOutOfBoundsWrapper(wrappers.TerminateIllegalWrapper(
        aec.aec_env_class(ripmarket_env.games.get(game))(), illegal_reward=-1)))
    with pytest.raises(type(exc.value), match=re.escape(str(exc.value))):
        plain.agent_iter()


@pytest.mark.parametrize("game", GAMES)
def test_parallel_env_passes_pettingzoo_parallel_api_test(game):
    """PettingZoo's ``parallel_api_test`` and ``parallel_seed_test`` (two envs reset with
    one seed and sent the same sampled actions give the same step) in every observation
    format."""
    import functools
    import warnings

    from pettingzoo.test import parallel_api_test, parallel_seed_test

    for fmt in ("dict", "rllib", "box"):
        env = ripmarket_env.make(game, parallel=True, obs_format=fmt)
        with warnings.catch_warnings():
            warnings.simplefilter("error", UserWarning)  # "live agent was not given ..." fails
            parallel_api_test(env, num_cycles=300 if fmt == "dict" else 60)
        parallel_seed_test(functools.partial(ripmarket_env.make, game, parallel=True, obs_format=fmt), num_cycles=100)


@pytest.mark.parametrize("game", GAMES)
def test_parallel_idle_seats_wait_and_change_nothing(game):
    """Whatever the seats not deciding send (their wait, a real action, garbage), the game
    is the one the AEC env plays with the deciding seat's actions alone; the deciding seat's
    wait (or a missing action) is refused with the state unchanged; masks are never empty;
    infos hold fixed numeric types only."""
    from ripmarket_env.engine import IllegalActionError

    rng = np.random.default_rng(5)
    par = ripmarket_env.parallel_env(game)
    twin = ripmarket_env.make(game, raw=True)
    wait = par.wait_action
    assert wait == twin.engine.num_actions and par.action_space("player_0").n == wait + 1
    # before the first reset no game runs: a seat's mask-aware sample is wait (SuperSuit's
    # multiprocess vector env samples from a copy it never resets)
    assert all(par.action_space(a).sample() == wait for a in par.possible_agents)
    games = 0
    for seed in range(3):
        obs, infos = par.reset(seed=seed)
        twin.reset(seed=seed)
        while par.agents:
            actor = twin.agent_selection
            for agent, o in obs.items():
                m = o["action_mask"]
                assert m.dtype == np.int8 and m.shape == (wait + 1,) and m.sum() >= 1
                assert infos[agent]["acting"] == (agent == actor)
                assert all(type(v) in (int, bool) for v in infos[agent].values()), infos[agent]
                if agent != actor:  # idle: wait only
                    assert m.tolist() == [0] * wait + [1]
                else:
                    assert m[wait] == 0 and (m[:wait] == twin.observe(actor)["action_mask"]).all()
                np.testing.assert_array_equal(o["observation"], twin.observe(agent)["observation"])
            before = par.engine.state.tobytes()
            with pytest.raises(IllegalActionError):  # the deciding seat may not wait
                par.step({a: wait for a in par.agents})
            with pytest.raises(ValueError, match="deciding"):
                par.step({a: wait for a in par.agents if a != actor})
            assert par.engine.state.tobytes() == before
            a = int(rng.choice(np.flatnonzero(obs[actor]["action_mask"])))
            idle = {ag: [wait, int(rng.integers(wait)), np.int64(0), "junk"][int(rng.integers(4))]
                    for ag in par.agents if ag != actor}
            obs, rewards, terms, truncs, infos = par.step({actor: a, **idle})
            twin.step(a)
            assert par.engine.state.tobytes() == twin.engine.state.tobytes()
            over = all(twin.terminations.values())
            assert all(t == over for t in terms.values()) and not any(truncs.values())
            assert rewards == ({ag: twin.rewards[ag] for ag in twin.possible_agents} if over
                               else dict.fromkeys(twin.possible_agents, 0.0))
        games += 1
        assert [rewards[ag] for ag in twin.possible_agents] == pytest.approx(twin.engine.rewards()[0].tolist())
        with pytest.raises(RuntimeError, match="reset"):
            par.step({})
    assert games == 3


def test_parallel_env_options_are_checked():
    with pytest.raises(ValueError, match="obs_format='flat' is not allowed; allowed: 'dict', 'rllib', 'box'"):
        ripmarket_env.parallel_env("ripmarket", obs_format="flat")
    box = ripmarket_env.parallel_env("ripmarket", num_players=3, obs_format="box")
    obs, infos = box.reset(seed=1)
    assert all(isinstance(o, np.ndarray) and o.dtype == np.float32 for o in obs.values())
    masks = [infos[a]["action_mask"] for a in box.agents]
    assert all(isinstance(m, list) and len(m) == box.wait_action + 1 for m in masks)
    assert sum(m[-1] for m in masks) == 2  # two seats wait
    rl = ripmarket_env.parallel_env("ripmarket", num_players=3, obs_format="rllib")
    assert set(rl.observation_space("player_0").spaces) == {"observations", "action_mask"}
