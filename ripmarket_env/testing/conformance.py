"""The conformance suite: what every game of the zoo must do, checked through its
``GameSpec`` and the generic environments only.

Each ``check_*`` function takes a spec (and most a player count), plays seeded games and
raises ``AssertionError`` with a message naming the game, the player count and what broke;
it returns what it saw (phases reached, games played) so callers can check coverage.
``tests/test_conformance.py`` runs every check for every registered game at the player
counts of ``player_counts(spec)``, so a new game gets the whole suite by registering.

The checks read a game only through its spec: ``spec.make_engine`` (the generic
``core.engine.Engine`` face), the env classes bound to it (``aec_env_class``,
``gym_env_class``, ``vec_env_classes``), ``check_invariants``, ``phase_names``,
``seat_flag``, ``render_text``/``render_rgb``, ``max_decisions``, ``reward_range`` and
one hook for hidden information, ``scramble_hidden`` (see ``check_hidden_information``).
docs/ARCHITECTURE.md, "Conformance suite", lists them.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import os
import random
import subprocess
import sys
import warnings
from collections.abc import Callable, Iterable

import numpy as np

from ripmarket_env.core.engine import IllegalActionError, raw_rows
from ripmarket_env.core.spec import GameSpec
from ripmarket_env.envs.aec import aec_env_class, wrapped
from ripmarket_env.envs.gym import gym_env_class
from ripmarket_env.envs.vector import vec_env_classes

__all__ = [
    "CHECKS_PER_COUNT",
    "check_aec_random_play",
    "check_batch_equivalence",
    "check_clone_independence",
    "check_env_checkers",
    "check_forced_moves_hidden",
    "check_global_rng_noise",
    "check_gym_random_play",
    "check_hidden_information",
    "check_illegal_actions",
    "check_invariants_one_game",
    "check_invariants_random_play",
    "check_nojit_twin",
    "check_pettingzoo_api",
    "check_pettingzoo_render",
    "check_pettingzoo_seed",
    "check_phases_reached",
    "check_soak",
    "check_vector_env",
    "play_digest",
    "step_views_differ",
    "player_counts",
    "valid_player_counts",
]


# ---------------------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------------------
def valid_player_counts(spec: GameSpec) -> list[int]:
    """Every player count the game allows: ``spec.extras["player_counts"]`` when the game
    lists them (Black Market: 2, 4, 6), else every count from min to max."""
    counts = (spec.extras or {}).get("player_counts")
    return sorted(int(x) for x in counts) if counts else list(range(spec.min_players, spec.max_players + 1))


def player_counts(spec: GameSpec) -> list[int]:
    """The player counts the suite runs a game at: min, default, max and one in the middle
    (the allowed count nearest to the middle)."""
    lo, hi = spec.min_players, spec.max_players
    valid = valid_player_counts(spec)
    mid = min(valid, key=lambda x: (abs(x - (lo + hi) // 2), x))
    return sorted({lo, spec.default_players, mid, hi})


def _where(spec: GameSpec, n: int) -> str:
    return f"{spec.id} at {n} players"


def _rows(engine) -> list[bytes]:
    """Every game's bytes (padding included: the engine keeps rows byte for byte)."""
    return [r.tobytes() for r in raw_rows(engine.state)]


def _pick(mask: np.ndarray, rng: np.random.Generator) -> int:
    legal = np.flatnonzero(mask)
    assert legal.size, "a decision with no legal action"
    return int(legal[rng.integers(legal.size)])


def _random_actions(engine, rng: np.random.Generator) -> np.ndarray:
    """A uniformly random legal action per unfinished game, -1 for finished ones."""
    m = engine.legal_mask()
    acts = np.full(engine.batch_size, -1, np.int64)
    for g in np.flatnonzero(~engine.terminated):
        acts[g] = _pick(m[g], rng)
    return acts


def _phase(engine, g: int) -> str:
    return engine.over_phase if engine.terminated[g] else engine.phase_names[engine.state["phase"][g]]


def _limit(spec: GameSpec, rules) -> int:
    limit = int(spec.max_decisions(rules))
    assert limit > 0, f"{spec.id}: max_decisions({rules}) = {limit}; it must bound a game's agent steps"
    return limit


def _engine_playout(spec: GameSpec, n: int, seeds, action_seed: int, on_step: Callable | None = None):
    """Random play of one engine batch to the end; ``on_step(engine, t)`` before every step.
    Returns the engine and the phases seen."""
    rules = spec.make_rules(n)
    eng = spec.make_engine(rules, len(seeds))
    eng.reset(list(seeds))
    rng = np.random.default_rng(action_seed)
    limit = _limit(spec, rules)
    phases: set[str] = set()
    t = 0
    while not eng.terminated.all():
        assert t <= limit, f"{_where(spec, n)}: games {np.flatnonzero(~eng.terminated).tolist()} did not end " \
                           f"within max_decisions = {limit} steps"
        phases.update(_phase(eng, g) for g in np.flatnonzero(~eng.terminated))
        if on_step is not None:
            on_step(eng, t)
        eng.step(_random_actions(eng, rng))
        t += 1
    phases.update(eng.phase())  # the finished games' phase
    return eng, phases


def _aec_raw(spec: GameSpec, n: int, **kw):
    """The raw env with the text-valued infos (``phase``, ``legal_moves``) the checks read;
    ``check_aec_random_play`` also checks the fixed-type ``phase_id`` against them."""
    kw.setdefault("verbose_infos", True)
    return aec_env_class(spec)(num_players=n, **kw)


def _aec_wrapped(spec: GameSpec, n: int, **kw):
    return wrapped(_aec_raw(spec, n, **kw))


# ---------------------------------------------------------------------------------------
# PettingZoo's own tests
# ---------------------------------------------------------------------------------------
def check_pettingzoo_api(spec: GameSpec, n: int, num_cycles: int = 1000) -> None:
    """PettingZoo's ``api_test`` on the wrapped and the raw AEC env."""
    from pettingzoo.test import api_test

    for env in (_aec_wrapped(spec, n), _aec_raw(spec, n)):
        api_test(env, num_cycles=num_cycles, verbose_progress=False)


def check_pettingzoo_seed(spec: GameSpec, n: int, num_cycles: int = 500) -> None:
    """PettingZoo's ``seed_test``: two envs reset with one seed play the same game."""
    from pettingzoo.test import seed_test

    seed_test(lambda: _aec_wrapped(spec, n), num_cycles=num_cycles)


def check_pettingzoo_render(spec: GameSpec, n: int) -> None:
    """PettingZoo's ``render_test`` (every render mode of the metadata: human, ansi,
    rgb_array), then the spec's renderers for every seat, the public and the god view."""
    from pettingzoo.test import render_test

    render_test(functools.partial(_aec_wrapped, spec, n))
    env = _aec_raw(spec, n, render_mode="ansi")
    env.reset(seed=3)
    text = env.render()
    assert isinstance(text, str) and text.strip(), f"{_where(spec, n)}: render_mode='ansi' gave {text!r}"
    eng = env.engine
    for viewer in [None, *range(n)]:
        t = spec.render_text(eng, 0, viewer=viewer)
        assert isinstance(t, str) and t.strip(), f"{_where(spec, n)}: render_text(viewer={viewer}) gave {t!r}"
    assert isinstance(spec.render_text(eng, 0, god=True), str)
    img = spec.render_rgb(eng, 0, viewer=0)
    assert isinstance(img, np.ndarray) and img.dtype == np.uint8 and img.ndim == 3 and img.shape[2] == 3, \
        f"{_where(spec, n)}: render_rgb must give an (H, W, 3) uint8 array, got {type(img).__name__} " \
        f"{getattr(img, 'shape', None)} {getattr(img, 'dtype', None)}"
    assert img.std() > 0, f"{_where(spec, n)}: render_rgb drew a blank picture"


# ---------------------------------------------------------------------------------------
# AEC random play: spaces, masks, rewards, game length
# ---------------------------------------------------------------------------------------
def check_aec_random_play(spec: GameSpec, n: int, games: int = 8, seed: int = 0) -> set[str]:
    """Random legal play through the raw AEC env: every seat's observation lies in its
    observation space at every step; only the agent to act has a mask, the engine's legal
    set, never empty; infos carry the phase (and ``seat_flag``); rewards are zero until
    the step that ends the game, inside ``reward_range``; every game ends within
    ``max_decisions`` agent steps. The default infos hold fixed-type values only (ints,
    bools, floats: ``phase_id`` and ``seat_flag``); ``verbose_infos=True`` (used here)
    adds the phase name and ``legal_moves``. Returns the phases seen."""
    plain = _aec_raw(spec, n, verbose_infos=False)
    plain.reset(seed=seed)
    for agent, info in plain.infos.items():
        assert all(type(v) in (int, bool, float) for v in info.values()), \
            f"{_where(spec, n)}: {agent}'s default infos hold a value of variable type: {info}"
        assert spec.phase_names[info["phase_id"]] == plain.engine.phase()[0]
    env = _aec_raw(spec, n, verbose_infos=True)
    rng = np.random.default_rng(seed)
    limit = _limit(spec, env.rules)
    lo, hi = spec.reward_range
    phases: set[str] = set()
    for k in range(games):
        env.reset(seed=seed * 1000 + k)
        steps = 0
        while not all(env.terminations.values()):
            assert steps <= limit, f"{_where(spec, n)}: game {seed * 1000 + k} did not end within " \
                                   f"max_decisions = {limit} agent steps"
            actor = env.agent_selection
            for agent in env.possible_agents:
                obs = env.observe(agent)
                space = env.observation_space(agent)
                assert space.contains(obs), (
                    f"{_where(spec, n)}: {agent}'s observation at step {steps} of game {seed * 1000 + k} "
                    f"is outside its observation space (features {_outside(space['observation'], obs)})")
                if agent == actor:
                    legal = np.flatnonzero(obs["action_mask"])
                    assert legal.size > 0, f"{_where(spec, n)}: the agent to act has an empty mask"
                    assert legal.tolist() == env.engine.legal_actions(0), \
                        f"{_where(spec, n)}: the AEC mask is not the engine's legal set"
                    assert env.infos[agent]["legal_moves"] == legal.tolist()
                else:
                    assert not obs["action_mask"].any(), \
                        f"{_where(spec, n)}: {agent} is not deciding but has a non-empty mask"
                info = env.infos[agent]
                assert info["phase"] in spec.phase_names, f"{_where(spec, n)}: infos phase {info['phase']!r}"
                assert isinstance(info["phase_id"], int) and spec.phase_names[info["phase_id"]] == info["phase"], \
                    f"{_where(spec, n)}: infos phase_id {info['phase_id']!r} is not phase {info['phase']!r}"
                if spec.seat_flag:
                    assert isinstance(info[spec.seat_flag], bool)
            phases.add(env.infos[actor]["phase"])
            assert all(r == 0 for r in env.rewards.values()), \
                f"{_where(spec, n)}: a reward was paid before the end: {env.rewards}"
            env.step(_pick(env.observe(actor)["action_mask"], rng))
            steps += 1
        for agent, r in env.rewards.items():
            assert lo - 1e-6 <= r <= hi + 1e-6, f"{_where(spec, n)}: {agent}'s reward {r} outside {spec.reward_range}"
        assert all(i["phase"] == "game_over" for i in env.infos.values())
        while env.agents:  # the dead steps empty the table
            env.step(None)
    return phases


def _outside(box, obs) -> list[int]:
    x = obs["observation"]
    return np.flatnonzero((x < box.low) | (x > box.high) | ~np.isfinite(x))[:8].tolist()


def check_phases_reached(spec: GameSpec, counts: Iterable[int], games: int = 12) -> set[str]:
    """Random play at the given player counts reaches every phase of ``spec.phase_names``
    (a phase random play never reaches is one the suite never tests)."""
    seen: set[str] = set()
    for n in counts:
        seen |= _engine_playout(spec, n, range(100 + 0, 100 + games), action_seed=n)[1]
    missing = [p for p in spec.phase_names if p not in seen]
    assert not missing, f"{spec.id}: random play at {list(counts)} players never reached the phases {missing}"
    return seen


# ---------------------------------------------------------------------------------------
# Engine: batch equivalence, global RNG, clones, invariants
# ---------------------------------------------------------------------------------------
def check_batch_equivalence(spec: GameSpec, n: int, batch_sizes=(7, 33), seed: int = 11) -> None:
    """The same seeds and actions give byte-identical games: one game alone (Engine with
    batch 1, and the AEC env's single-game kernels) and each row of batches of
    ``batch_sizes`` (the second above ``SERIAL_BELOW``: the parallel kernels)."""
    rules = spec.make_rules(n)
    B = max(batch_sizes)
    seeds = [seed * 7919 + i for i in range(B)]
    batches = [spec.make_engine(rules, b) for b in batch_sizes]
    for e in batches:
        e.reset(seeds[: e.batch_size])
    singles = [spec.make_engine(rules, 1) for _ in range(min(batch_sizes))]
    for g, e in enumerate(singles):
        e.reset([seeds[g]])
    aec = _aec_raw(spec, n)
    aec.reset(seed=seeds[0])
    rng = np.random.default_rng(seed)

    def compare(t):
        big = _rows(batches[-1])
        for e in batches[:-1]:
            assert _rows(e) == big[: e.batch_size], f"{_where(spec, n)}: batch {e.batch_size} and batch {B} " \
                                                     f"diverge at step {t}"
        for g, e in enumerate(singles):
            assert _rows(e)[0] == big[g], f"{_where(spec, n)}: game {g} alone and in a batch diverge at step {t}"
        if aec_live:  # (a finished game's row in a batch clears its one-step reward on the next step)
            assert _rows(aec.engine)[0] == big[0], f"{_where(spec, n)}: the AEC env and the engine diverge at step {t}"

    t, aec_live = 0, True
    compare(t)
    while not batches[-1].terminated.all():
        aec_live = not batches[-1].terminated[0]
        acts = _random_actions(batches[-1], rng)
        for e in batches[:-1]:
            e.step(acts[: e.batch_size])
        for g, e in enumerate(singles):
            e.step(acts[g: g + 1])
        if acts[0] >= 0:
            aec.step(int(acts[0]))
        batches[-1].step(acts)
        t += 1
        compare(t)
        assert t <= _limit(spec, rules) + 1


def check_global_rng_noise(spec: GameSpec, n: int, seed0: int = 5) -> None:
    """Draws from the global ``numpy.random`` and ``random`` between steps change nothing:
    the engine, the AEC env, the gym env and the vector env replay the same seeded games
    (and another seed gives another run: the comparison is not vacuous)."""

    def noise(t):
        np.random.seed(t)
        np.random.random(t % 7 + 1)
        random.seed(t * 31)
        random.random()

    def engine_run(noisy, seed=seed0):
        rec = []
        _engine_playout(spec, n, [seed, seed + 1, seed + 2], action_seed=seed,
                        on_step=lambda e, t: (rec.append(_rows(e)), noisy and noise(t)))
        return rec

    def aec_run(noisy, seed=seed0):
        env = _aec_raw(spec, n)
        env.reset(seed=seed)
        rng = np.random.default_rng(seed)
        rec, t = [], 0
        while not all(env.terminations.values()):
            rec.append((_rows(env.engine)[0], env.observe(env.agent_selection)["observation"].tobytes()))
            if noisy:
                noise(t)
            env.step(_pick(env.observe(env.agent_selection)["action_mask"], rng))
            t += 1
        return rec

    def gym_run(noisy, seed=seed0):
        env = gym_env_class(spec)(num_players=n, learner_seat="random")
        rng = np.random.default_rng(seed)
        obs, info = env.reset(seed=seed)
        rec = [obs.tobytes()]
        ended, t = 0, 0
        while ended < 2:  # the seeded game, then the next one from the env's seeded generator
            if noisy:
                noise(t)
            obs, r, term, trunc, info = env.step(_pick(env.action_masks(), rng))
            rec.append((obs.tobytes(), r, term, info["learner_seat"]))
            t += 1
            if term:
                ended += 1
                obs, info = env.reset()
                rec.append(obs.tobytes())
        return rec

    def vec_run(noisy, seed=seed0):
        venv = vec_env_classes(spec)[0](num_envs=4, num_players=n, learner_seat="random", seed=seed)
        rng = np.random.default_rng(seed)
        rec = [venv.reset().tobytes()]
        for t in range(60):
            if noisy:
                noise(t)
            obs, rewards, dones, infos = venv.step([_pick(m, rng) for m in venv.action_masks()])
            rec.append((obs.tobytes(), rewards.tobytes(), dones.tobytes()))
        return rec

    for name, run in (("engine", engine_run), ("AEC env", aec_run), ("gym env", gym_run), ("vector env", vec_run)):
        first = run(False)
        assert first == run(True), f"{_where(spec, n)}: the {name} played differently with global RNG noise"
        assert first != run(False, seed0 + 1), f"{_where(spec, n)}: the {name} played the same game for two seeds"


def check_clone_independence(spec: GameSpec, n: int, seed: int = 31) -> None:
    """``Engine.clone``: the clone's bytes equal the original's; stepping the clone leaves
    the original untouched; both continue identically; a partial clone holds the rows.
    And ``copy.deepcopy`` of the AEC env, raw and wrapped, mid-game: the same."""
    rules = spec.make_rules(n)
    eng = spec.make_engine(rules, 5)
    eng.reset([seed + i for i in range(5)])
    rng = np.random.default_rng(seed)
    for _ in range(4):
        eng.step(_random_actions(eng, rng))
    snap = _rows(eng)
    twin, part = eng.clone(), eng.clone([3, 1])
    assert _rows(twin) == snap, f"{_where(spec, n)}: a clone's bytes differ from the original's"
    assert _rows(part) == [snap[3], snap[1]], f"{_where(spec, n)}: clone([3, 1]) does not hold rows 3 and 1"
    moves = []
    while not twin.terminated.all():
        a = _random_actions(twin, rng)
        moves.append(a)
        twin.step(a)
        part.step(a[[3, 1]])
    assert _rows(eng) == snap, f"{_where(spec, n)}: stepping a clone changed the original"
    for a in moves:
        eng.step(a)
    assert _rows(eng) == _rows(twin), f"{_where(spec, n)}: original and clone diverged under the same actions"
    assert _rows(part) == [_rows(eng)[3], _rows(eng)[1]], f"{_where(spec, n)}: the partial clone diverged"
    done = _rows(twin)
    eng.reset([seed + 100 + i for i in range(5)])
    assert _rows(twin) == done, f"{_where(spec, n)}: resetting the original changed its clone"
    for make in (_aec_raw, _aec_wrapped):  # copy.deepcopy of the AEC env, mid-game: the same, independent
        _check_aec_deepcopy(spec, n, make(spec, n), seed)


def _aec_steps(env, seed: int, limit: int) -> list:
    """What the AEC env shows at each of up to ``limit`` agent steps of random legal play
    (actions drawn from ``seed``): agent, observation bytes, mask, reward, termination."""
    rng, out = np.random.default_rng(seed), []
    for agent in env.agent_iter(limit):
        obs, reward, term, trunc, _ = env.last()
        out.append((agent, obs["observation"].tobytes(), obs["action_mask"].tobytes(), float(reward), term, trunc))
        env.step(None if term or trunc else _pick(obs["action_mask"], rng))
    return out


def _check_aec_deepcopy(spec: GameSpec, n: int, env, seed: int) -> None:
    import copy

    env.reset(seed=seed)
    _aec_steps(env, seed, 3 * n)
    twin = copy.deepcopy(env)
    now = env.last()[0]["observation"].tobytes(), env.agent_selection, dict(env.rewards)
    ahead = _aec_steps(twin, seed + 1, 10_000)
    assert (env.last()[0]["observation"].tobytes(), env.agent_selection, dict(env.rewards)) == now, \
        f"{_where(spec, n)}: stepping a deep copy of the AEC env ({type(env).__name__}) changed the original"
    assert _aec_steps(env, seed + 1, 10_000) == ahead, \
        f"{_where(spec, n)}: the AEC env ({type(env).__name__}) and its deep copy diverged under the same actions"


def check_invariants_random_play(spec: GameSpec, n: int, games: int = 64, seed: int = 0) -> set[str]:
    """``spec.check_invariants`` holds after the reset and every step of ``games`` random
    games (given the previous row too, when the hook takes ``prev``); games end within
    ``max_decisions``; the final rewards lie inside ``reward_range``. Returns the phases seen."""
    takes_prev = "prev" in inspect.signature(spec.check_invariants).parameters

    def check(eng, g, prev, what):
        bad = spec.check_invariants(eng, g, prev=prev) if takes_prev else spec.check_invariants(eng, g)
        assert not bad, f"{_where(spec, n)}, game {g} (seed {eng.seeds[g]}) {what}: " + "; ".join(bad)

    state = {"prev": None}

    def on_step(eng, t):
        prev = state["prev"]
        for g in range(eng.batch_size):
            if prev is None:
                check(eng, g, None, "after reset")
            elif not prev["done"][g]:
                check(eng, g, prev[g], f"after step {t}")
        state["prev"] = eng.state.copy()

    eng, phases = _engine_playout(spec, n, [seed * 10_000 + i for i in range(games)], seed, on_step)
    on_step(eng, "the last")
    lo, hi = spec.reward_range
    r = eng.rewards()
    assert ((r >= lo - 1e-6) & (r <= hi + 1e-6)).all(), f"{_where(spec, n)}: final rewards outside {spec.reward_range}"
    return phases


def check_soak(spec: GameSpec, n: int, games: int, batch: int = 1024, seed: int = 0) -> dict:
    """Random play at scale with the game's compiled ``random_play`` driver (the bench's
    loop), one decision per call so that every finished game is seen in its final state
    before the driver deals a new one in its row: ``spec.check_invariants`` holds for each of
    at least ``games`` finished games, and no row goes past ``max_decisions`` without an
    end. Returns the games finished and the most decisions one game took."""
    from ripmarket_env.core.engine import kernel_view

    rules = spec.make_rules(n)
    eng = spec.make_engine(rules, batch)
    eng.reset([seed * 1_000_003 + i for i in range(batch)])
    S, T, c = kernel_view(eng.state), kernel_view(eng.tables), eng.cfg
    bench = (np.arange(batch, dtype=np.int64) * 2_654_435_761 + seed) & 0xFFFFFFFF
    limit = _limit(spec, rules)
    steps = np.zeros(batch, np.int64)  # decisions of each row's game so far
    finished, longest = 0, 0
    while finished < games:
        done = np.flatnonzero(eng.terminated)  # in their final state until the next call
        for g in done:
            bad = spec.check_invariants(eng, int(g))
            assert not bad, f"{_where(spec, n)}, a finished game in row {g} (seed {seed}): " + "; ".join(bad)
        finished += done.size
        longest = max(longest, int(steps[done].max(initial=0)))
        steps[done] = 0
        eng.drivers.random_play(S, T, c, 1, bench)
        steps += 1
        assert steps.max() <= limit, f"{_where(spec, n)}: a game in row {int(steps.argmax())} (seed {seed}) " \
                                     f"did not end within max_decisions = {limit} steps"
    return {"games": finished, "longest": longest, "max_decisions": limit}


def check_invariants_one_game(spec: GameSpec, n: int, seed: int, action_seed: int) -> None:
    """``spec.check_invariants`` after every step of one random game (for property-based
    callers drawing the player count and the seeds)."""
    rules = spec.make_rules(n)
    eng = spec.make_engine(rules, 1)
    eng.reset([seed])
    rng = np.random.default_rng(action_seed)
    takes_prev = "prev" in inspect.signature(spec.check_invariants).parameters
    limit, t = _limit(spec, rules), 0
    while True:
        bad = spec.check_invariants(eng, 0)
        assert not bad, f"{_where(spec, n)}, seed {seed}, actions {action_seed}, step {t}: " + "; ".join(bad)
        if eng.terminated[0]:
            return
        prev = eng.state[0].copy()
        eng.step(_random_actions(eng, rng))
        if takes_prev:
            bad = spec.check_invariants(eng, 0, prev=prev)
            assert not bad, f"{_where(spec, n)}, seed {seed}, transition {t}: " + "; ".join(bad)
        t += 1
        assert t <= limit, f"{_where(spec, n)}, seed {seed}: no end within max_decisions = {limit}"


# ---------------------------------------------------------------------------------------
# Illegal actions
# ---------------------------------------------------------------------------------------
def _raises(exc, fn, *args):
    try:
        fn(*args)
    except exc as e:
        msg = str(e)
        assert "\n" not in msg.strip() and msg, f"the error for {args!r} should be one clear line, got {msg!r}"
        return e
    raise AssertionError(f"{getattr(fn, '__qualname__', fn)}{args!r} should raise {exc.__name__}")


def check_illegal_actions(spec: GameSpec, n: int, seed: int = 4) -> None:
    """Bad actions are refused with a one-line error and change nothing, on every face:
    masked-out, out of range, wrong type and shape, and a finished game (the raw AEC env,
    the wrapped AEC env, ``Engine.step``, the gym env, the vector env); the engine's query
    arrays (``legal_mask()``, ``terminated``, ``rewards()``, ``step``'s results) are
    read-only views, so a write into one raises instead of changing a game."""
    W = _where(spec, n)
    # -- raw AEC env
    env = _aec_raw(spec, n)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    na = env.engine.num_actions
    for _ in range(3):
        env.step(_pick(env.observe(env.agent_selection)["action_mask"], rng))
    mask = env.observe(env.agent_selection)["action_mask"]
    masked_out = np.flatnonzero(mask == 0)[:3].tolist()
    before, agent, infos = _rows(env.engine), env.agent_selection, {a: dict(i) for a, i in env.infos.items()}
    for bad in [*masked_out, -1, na, na + 5, 2.5, "x", None, [0]]:
        err = _raises(IllegalActionError, env.step, bad)
        assert "legal actions" in str(err) and err.legal == np.flatnonzero(mask).tolist(), \
            f"{W}: the error for {bad!r} does not list the legal actions: {err}"
        assert _rows(env.engine) == before, f"{W}: the refused action {bad!r} changed the AEC env's game"
        assert env.agent_selection == agent and env.infos == infos, f"{W}: {bad!r} changed agent_selection/infos"
    env.step(int(np.flatnonzero(mask)[0]))  # the game goes on
    assert _rows(env.engine) != before
    while not all(env.terminations.values()):
        env.step(_pick(env.observe(env.agent_selection)["action_mask"], rng))
    over = _rows(env.engine)
    _raises(ValueError, env.step, 0)  # a finished game takes no more actions (PettingZoo: only None)
    assert _rows(env.engine) == over, f"{W}: an action after the end changed the game"
    # -- wrapped AEC env: an illegal move ends the game, the offender pays
    env = _aec_wrapped(spec, n)
    env.reset(seed=seed)
    offender = env.agent_selection
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PettingZoo warns "illegal move made"
        env.step(int(np.flatnonzero(env.observe(offender)["action_mask"] == 0)[0]))
    assert all(env.terminations.values()), f"{W}: the wrapped env did not end the game on an illegal move"
    assert env.rewards[offender] == -1, f"{W}: the offender's reward is {env.rewards[offender]}, not -1"
    assert all(r == 0 for a, r in env.rewards.items() if a != offender), f"{W}: {env.rewards}"
    for agent in env.agent_iter():  # every agent is told the game is over, then leaves
        assert env.last()[2], f"{W}: {agent} not terminated after the illegal move"
        env.step(None)
    assert not env.agents
    env2 = _aec_wrapped(spec, n)
    env2.reset(seed=seed)
    _raises(AssertionError, env2.step, na)  # out of bounds: PettingZoo's AssertOutOfBoundsWrapper
    # -- Engine.step
    eng = spec.make_engine(spec.make_rules(n), 3)
    eng.reset([seed, seed + 1, seed + 2])
    for _ in range(2):
        eng.step(_random_actions(eng, rng))
    before = _rows(eng)
    ok = _random_actions(eng, rng)
    live = [g for g in range(3) if not eng.terminated[g]]
    assert live, f"{W}: every game ended within two steps"
    g = live[-1]
    masked_out = np.flatnonzero(~eng.legal_mask()[g])[:3].tolist()
    for a in [*masked_out, -2, na, na + 7]:
        acts = ok.copy()
        acts[g] = a
        err = _raises(IllegalActionError, eng.step, acts)
        assert (err.game, err.action, err.legal) == (g, a, eng.legal_actions(g)), \
            f"{W}: IllegalActionError names game {err.game}, action {err.action}, legal {err.legal}"
        assert _rows(eng) == before, f"{W}: Engine.step changed the batch on illegal action {a} in game {g}"
    for bad in (ok.astype(float) + 0.5, ok[:2], np.append(ok, 0), ["a", "b", "c"], np.array([np.nan] * 3)):
        _raises(ValueError, eng.step, bad)
        assert _rows(eng) == before, f"{W}: Engine.step changed the batch on {bad!r}"
    # the engine's query arrays are read-only views of its state: a write raises and
    # changes nothing (a kept mask follows the next step: copy it to keep it)
    stepped = eng.clone().step(ok)  # on a copy: ``before`` stays this batch's
    for name, view in (("legal_mask()", eng.legal_mask()), ("terminated", eng.terminated),
                       ("rewards()", eng.rewards()), ("step()'s rewards", stepped[0]),
                       ("step()'s terminated", stepped[1])):
        _raises(ValueError, view.__setitem__, Ellipsis, 1)
        assert _rows(eng) == before, f"{W}: a write into Engine.{name} changed the batch"
    # a finished game ignores any action (core policy): its row keeps its bytes
    fin = spec.make_engine(spec.make_rules(n), 1)
    fin.reset([seed])
    while not fin.terminated[0]:
        fin.step(_random_actions(fin, rng))
    fin.step([0])  # clears the one-step reward
    done = _rows(fin)
    for a in (0, na - 1, -1):
        fin.step([a])
        assert _rows(fin) == done, f"{W}: action {a} changed a finished game"
    # -- gym env
    genv = gym_env_class(spec)(num_players=n)
    _raises(RuntimeError, genv.step, 0)  # before reset
    genv.reset(seed=seed)
    m = genv.action_masks().astype(bool)  # int8 for trainers
    before = _rows(genv.engine)
    legal = np.flatnonzero(m).tolist()
    for bad in [*np.flatnonzero(~m)[:3].tolist(), -1, na, 2.5, "x", [0, 1]]:
        err = _raises(IllegalActionError if isinstance(bad, int) else ValueError, genv.step, bad)
        if isinstance(bad, int):
            assert f"illegal action {bad}" in str(err) and err.legal == legal, f"{W}: gym env error {err}"
        assert _rows(genv.engine) == before, f"{W}: the gym env changed its game on the refused action {bad!r}"
    while True:
        *_, term, _trunc, _info = genv.step(_pick(genv.action_masks(), rng))
        if term:
            break
    over = _rows(genv.engine)
    _raises(RuntimeError, genv.step, 0)
    assert _rows(genv.engine) == over, f"{W}: stepping the gym env after the end changed the game"
    # -- vector env
    venv = vec_env_classes(spec)[0](num_envs=3, num_players=n, seed=seed)
    venv.reset()
    masks = venv.action_masks()
    before = (_rows(venv.engine), masks.tobytes())
    good = np.array([_pick(mm, rng) for mm in masks])
    bads = []
    for a in np.flatnonzero(masks[1] == 0)[:2].tolist() + [-1, na]:
        acts = good.copy()
        acts[1] = a
        bads.append(acts)
    for acts in bads:
        err = _raises(IllegalActionError, venv.batch.step, acts)
        assert err.game == 1 and f"illegal action {acts[1]}" in str(err), f"{W}: the vector env's error: {err}"
    for bad in (good[:2], good + 0.5, np.array(["a"] * 3)):
        _raises(ValueError, venv.batch.step, bad)
    assert (_rows(venv.engine), venv.action_masks().tobytes()) == before, \
        f"{W}: a refused action changed the vector env"
    venv.step(good)  # and it goes on


# ---------------------------------------------------------------------------------------
# Gymnasium and SB3
# ---------------------------------------------------------------------------------------
def check_env_checkers(spec: GameSpec, n: int) -> None:
    """Gymnasium's and Stable-Baselines3's ``check_env`` on the single-agent env (fixed and
    random learner seat), with every warning an error."""
    from gymnasium.utils.env_checker import check_env as gym_check_env

    try:
        from stable_baselines3.common.env_checker import check_env as sb3_check_env
    except ImportError as e:  # pragma: no cover - the "train" extra
        raise AssertionError(f"SB3's env checker needs stable-baselines3 ({e})") from None
    for seat in (0, "random"):
        env = gym_env_class(spec)(num_players=n, learner_seat=seat)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            warnings.filterwarnings("ignore", message=".*render modes.*spec.*")  # no spec without gym.make
            gym_check_env(env)
            sb3_check_env(env)


def check_gym_random_play(spec: GameSpec, n: int, episodes: int = 6, seed: int = 1) -> set[str]:
    """The single-agent env under random play: observations inside the space at every
    step, a non-empty mask, reward 0 before the end and inside ``reward_range`` at it, the
    episode over within ``max_decisions``. Returns the learner's phases."""
    env = gym_env_class(spec)(num_players=n, learner_seat="random", verbose_infos=True)
    rng = np.random.default_rng(seed)
    lo, hi = spec.reward_range
    phases: set[str] = set()
    limit = _limit(spec, env.rules)
    for k in range(episodes):
        obs, info = env.reset(seed=seed * 100 + k)
        for t in range(limit + 1):
            assert obs in env.observation_space, f"{_where(spec, n)}: gym observation outside its space"
            phases.add(info["phase"])
            assert spec.phase_names[info["phase_id"]] == info["phase"], f"{_where(spec, n)}: gym infos phase_id"
            mask = env.action_masks()
            assert mask.any() and (mask == info["action_mask"]).all()
            obs, r, term, trunc, info = env.step(_pick(mask, rng))
            assert trunc is False
            if term:
                assert lo - 1e-6 <= r <= hi + 1e-6, f"{_where(spec, n)}: final reward {r} outside {spec.reward_range}"
                assert obs in env.observation_space
                break
            assert r == 0, f"{_where(spec, n)}: reward {r} before the end"
        else:
            raise AssertionError(f"{_where(spec, n)}: a gym episode outlasted max_decisions = {limit}")
    return phases


# ---------------------------------------------------------------------------------------
# Vector envs
# ---------------------------------------------------------------------------------------
def check_vector_env(spec: GameSpec, n: int, num_envs: int = 8, steps: int | None = None, seed: int = 3) -> set[str]:
    """Both vector faces, compiled random opponents and the Python opponent loop:
    observations in the space, every game's mask non-empty and the learner to act,
    auto-reset of finished games (SB3: ``terminal_observation``; Gymnasium: ``final_obs``
    and ``final_info``), rewards only at the end. Returns the learners' phases."""
    VecEnv, GymVectorEnv = vec_env_classes(spec)
    phases: set[str] = set()
    W = _where(spec, n)
    for compiled in (True, False):
        venv = VecEnv(num_envs=num_envs, num_players=n, learner_seat="random", seed=seed,
                      compiled_opponents=compiled)
        assert venv.batch.compiled_opponents is compiled
        rng = np.random.default_rng(seed)
        obs = venv.reset()
        lim = steps or 2 * _limit(spec, venv.batch.rules) // max(1, n - 1) + 20
        finished = 0
        for _ in range(lim):
            masks = venv.action_masks()
            assert masks.any(axis=1).all(), f"{W}: a vector env game has an empty learner mask"
            assert (venv.engine.current_player() == venv.batch.seat).all(), f"{W}: a learner is not to act"
            assert all(o in venv.observation_space for o in obs), f"{W}: vector observation outside its space"
            assert [m.tolist() for m in venv.env_method("action_masks")] == masks.tolist()
            phases.update(_phase(venv.engine, g) for g in range(num_envs))
            episodes = venv.batch.episode.copy()
            obs, rewards, dones, infos = venv.step([_pick(m, rng) for m in masks])
            for i in range(num_envs):
                if dones[i]:
                    finished += 1
                    term = infos[i]["terminal_observation"]
                    assert term in venv.observation_space
                    assert venv.batch.episode[i] == episodes[i] + 1, f"{W}: game {i} ended but was not redealt"
                else:
                    assert "terminal_observation" not in infos[i] and rewards[i] == 0
                    assert venv.batch.episode[i] == episodes[i]
        assert finished >= num_envs, f"{W}: only {finished} vector games ended in {lim} steps"
    genv = GymVectorEnv(num_envs=num_envs, num_players=n, learner_seat="random")
    obs, info = genv.reset(seed=seed)
    rng = np.random.default_rng(seed)
    ended = 0
    for _ in range(lim):
        obs, rewards, terms, truncs, info = genv.step(genv.action_space.sample())
        assert obs in genv.observation_space and not truncs.any()
        assert info["action_mask"].any(axis=1).all()
        if terms.any():
            ended += int(terms.sum())
            assert (info["_final_obs"] == terms).all() and (info["final_info"]["_reward"] == terms).all()
            for i in np.flatnonzero(terms):
                assert info["final_obs"][i] in genv.single_observation_space
            assert (info["final_info"]["reward"][~terms] == 0).all()
    assert ended >= num_envs, f"{W}: only {ended} Gymnasium vector games ended"
    return phases


# ---------------------------------------------------------------------------------------
# Hidden information
# ---------------------------------------------------------------------------------------
HIDDEN_HOOK_HELP = (
    "GameSpec.scramble_hidden is not set: the hidden-information check needs it. Give the spec "
    "scramble_hidden(engine, g, viewer, rng) -> a one-game Engine (engine.clone([g]) changed) in which "
    "everything seat `viewer` may not see (other seats' hands, deck order, face-down cards, the game's "
    "RNG, ...) is redrawn consistently with the rules; the suite then checks that viewer's observation, "
    "mask and text render do not change."
)


def check_hidden_information(spec: GameSpec, n: int, games: int = 6, every: int = 2, seed: int = 50) -> set[str]:
    """A seat's observation, its mask (when it acts) and its text render stay the same when
    everything it may not see is redrawn (``spec.scramble_hidden``), for every seat at
    every ``every``-th step of random play; at least one redraw must change the state
    (the check is not vacuous). Returns the phases the check ran in."""
    hook = getattr(spec, "scramble_hidden", None)
    assert hook is not None, f"{spec.id}: {HIDDEN_HOOK_HELP}"
    rng = np.random.default_rng(seed)
    stats = {"changed": 0, "phases": set()}

    def on_step(eng, t):
        if t % every:
            return
        live = np.flatnonzero(~eng.terminated)
        g = int(live[(t // every) % live.size])
        stats["phases"].add(_phase(eng, g))
        orig = raw_rows(eng.state)[g].tobytes()
        for v in range(n):
            twin = hook(eng, g, v, rng)
            assert twin.batch_size == 1, f"{spec.id}: scramble_hidden must return a one-game engine"
            assert raw_rows(eng.state)[g].tobytes() == orig, f"{spec.id}: scramble_hidden changed the original"
            stats["changed"] += raw_rows(twin.state)[0].tobytes() != orig
            viewers = np.zeros(eng.batch_size, np.int64)
            viewers[g] = v
            mine, theirs = eng.observe(viewers)[g], twin.observe([v])[0]
            if not np.array_equal(mine, theirs):
                raise AssertionError(
                    f"{_where(spec, n)}: seat {v}'s observation of game {g} (seed {eng.seeds[g]}, step {t}, "
                    f"phase {_phase(eng, g)}) changed when what it may not see was redrawn "
                    f"(features {np.flatnonzero(mine != theirs)[:10].tolist()})")
            if int(eng.current_player()[g]) == v:
                assert np.array_equal(eng.legal_mask()[g], twin.legal_mask()[0]), \
                    f"{_where(spec, n)}: seat {v}'s legal actions changed with hidden information"
            a, b = spec.render_text(eng, g, viewer=v), spec.render_text(twin, 0, viewer=v)
            assert a == b, f"{_where(spec, n)}: seat {v}'s render of game {g} (step {t}) shows hidden information"

    _engine_playout(spec, n, [seed + i for i in range(games)], seed, on_step)
    assert stats["changed"], f"{_where(spec, n)}: scramble_hidden never changed a state: the check was vacuous"
    return stats["phases"]


def _seen(events, v: int) -> list[tuple]:
    """The events of a step as seat ``v`` reads them: (kind, seat, forced marker, text)."""
    out = []
    for ev in events:
        forced = ev.forced_for(v) if hasattr(ev, "forced_for") else bool(getattr(ev, "forced", False))
        out.append((ev.kind, ev.seat, forced, ev.text_for(v)))
    return out


def step_views_differ(spec: GameSpec, world, twin, v: int, action: int) -> str | None:
    """Play ``action`` in two one-game engines that seat ``v`` cannot tell apart (``twin``
    a ``scramble_hidden`` of ``world`` for ``v``) and compare what ``v`` learns: the events
    it reads (kind, seat, "only choice" marker, text), the next actor (the AEC env's
    ``agent_selection``), the phase and v's observation. A card the redeal put elsewhere
    may reach ``v`` (its own draw, a refill, a theft): the first event of the same kind and
    seat whose text differs ends the comparison as "revealed". Returns what
    differed, or None. Both engines are stepped. (The observation before every step is
    ``check_hidden_information``'s; what it shows of the decision, whose it is and which,
    is the actor and the phase compared here.)"""
    world.step([action])
    twin.step([action])
    a, b = _seen(world.events(0), v), _seen(twin.events(0), v)
    for i in range(max(len(a), len(b))):
        if i >= len(a) or i >= len(b):
            return f"event {i}: {a[i] if i < len(a) else None!r} against {b[i] if i < len(b) else None!r}"
        x, y = a[i], b[i]
        if x == y:
            continue
        if x[:3] == y[:3]:
            return None  # the same event naming another card: a card revealed to v
        return f"event {i}: {x!r} against {y!r}"
    for what, f in (("actor", lambda e: int(e.current_player()[0])), ("phase", lambda e: _phase(e, 0)),
                    ("terminated", lambda e: bool(e.terminated[0]))):
        if f(world) != f(twin):
            return f"the {what} after the step: {f(world)!r} against {f(twin)!r}"
    return None


def check_forced_moves_hidden(spec: GameSpec, n: int, games: int = 3, every: int = 1, seed: int = 70) -> dict:
    """Nothing reveals that a decision was forced (the cross-game rule of
    ``core.events``): at every ``every``-th step of random play and for every seat ``v``,
    the game's hidden cards are redealt for ``v`` (``spec.scramble_hidden``, the game's RNG
    kept so both worlds draw alike), the acting seat plays one action legal in both worlds
    (the same one), and ``v`` must read the same events with the same "only choice"
    markers, see the same next actor (``agent_selection``) and phase (``step_views_differ``).
    A decision that only a seat's hidden cards make single is therefore asked of it, never
    taken by the engine in one world and asked in the other. Returns counts: the steps
    compared and the redeals whose acting seat had no action legal in both worlds."""
    hook = getattr(spec, "scramble_hidden", None)
    assert hook is not None, f"{spec.id}: {HIDDEN_HOOK_HELP}"
    rng = np.random.default_rng(seed)
    stats = {"compared": 0, "no_common_action": 0}

    def on_step(eng, t):
        if t % every:
            return
        for g in np.flatnonzero(~eng.terminated):
            actor = int(eng.current_player()[g])
            for v in range(n):
                twin = hook(eng, int(g), v, rng)
                if "rng" in twin.state.dtype.names:
                    twin.state["rng"][0] = eng.state["rng"][g]
                common = np.flatnonzero(eng.legal_mask()[g] & twin.legal_mask()[0])
                if v == actor:
                    assert common.size == int(eng.legal_mask()[g].sum()), \
                        f"{_where(spec, n)}: seat {v}'s legal actions changed with hidden information"
                if not common.size:
                    stats["no_common_action"] += 1
                    continue
                a = int(common[rng.integers(common.size)])
                diff = step_views_differ(spec, eng.clone([int(g)]), twin, v, a)
                stats["compared"] += 1
                if diff:
                    raise AssertionError(
                        f"{_where(spec, n)}: seat {v} can tell whether a decision was forced by hidden cards: "
                        f"game {g} (seed {eng.seeds[g]}, step {t}), seat {actor} plays {a}, and in a world with "
                        f"other hidden cards {diff}")

    _engine_playout(spec, n, [seed + i for i in range(games)], seed, on_step)
    assert stats["compared"], f"{_where(spec, n)}: no step was compared"
    return stats


# ---------------------------------------------------------------------------------------
# NUMBA_DISABLE_JIT=1
# ---------------------------------------------------------------------------------------
def play_digest(game_id: str, num_players: int, games: int = 3, seed: int = 11, vec_steps: int = 20) -> str:
    """sha256 of seeded random play: the engine (every row's bytes, every seat's
    observation and the events of every step), the AEC env's single-game kernels and the
    vector env's compiled step. The same in compiled and plain-Python (``NUMBA_DISABLE_JIT=1``) runs."""
    from ripmarket_env.games import get

    spec = get(game_id)
    h = hashlib.sha256()
    n = num_players

    def absorb(eng, t):
        for row in _rows(eng):
            h.update(row)
        for v in range(n):
            h.update(eng.observe(np.full(eng.batch_size, v)).tobytes())
        for g in range(eng.batch_size):
            h.update(repr(eng.events(g)).encode())

    eng, _ = _engine_playout(spec, n, [seed + i for i in range(games)], seed, absorb)
    absorb(eng, -1)
    h.update(eng.rewards().tobytes())
    env = _aec_raw(spec, n)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    while not all(env.terminations.values()):
        h.update(_rows(env.engine)[0])
        for agent in env.possible_agents:
            h.update(env.observe(agent)["observation"].tobytes())
        env.step(_pick(env.observe(env.agent_selection)["action_mask"], rng))
    h.update(repr(sorted(env.rewards.items())).encode())
    venv = vec_env_classes(spec)[0](num_envs=2, num_players=n, learner_seat="random", seed=seed)
    h.update(venv.reset().tobytes())
    for _ in range(vec_steps):
        obs, rewards, dones, _infos = venv.step([_pick(m, rng) for m in venv.action_masks()])
        h.update(obs.tobytes() + rewards.tobytes() + dones.tobytes())
    return h.hexdigest()


def check_nojit_twin(spec: GameSpec, counts: Iterable[int], timeout: float = 600) -> None:
    """The same seeded games played with ``NUMBA_DISABLE_JIT=1`` in a subprocess (the
    kernels as plain Python) give the digest of ``play_digest`` here (compiled)."""
    counts = list(counts)
    script = ("from numba.core.config import DISABLE_JIT\nprint(int(DISABLE_JIT))\n"
              "from ripmarket_env.testing.conformance import play_digest\n"
              f"for n in {counts!r}:\n    print(play_digest({spec.id!r}, n))\n")
    env = dict(os.environ, NUMBA_DISABLE_JIT="1")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True,
                         timeout=timeout, cwd=root)
    assert out.returncode == 0, f"{spec.id}: the NUMBA_DISABLE_JIT=1 run failed:\n{out.stderr[-3000:]}"
    flag, *plain = out.stdout.split()
    assert flag == "1", f"{spec.id}: the twin subprocess ran with the JIT on"
    assert len(plain) == len(counts), f"{spec.id}: the twin printed {out.stdout!r}"
    compiled = [play_digest(spec.id, n) for n in counts]
    for n, p, c in zip(counts, plain, compiled):
        assert p == c, f"{_where(spec, n)}: plain Python (NUMBA_DISABLE_JIT=1) and compiled play differ"


#: the checks run once per (game, player count), in the order of the suite
CHECKS_PER_COUNT = {
    "pettingzoo_api": check_pettingzoo_api,
    "pettingzoo_seed": check_pettingzoo_seed,
    "pettingzoo_render": check_pettingzoo_render,
    "aec_random_play": check_aec_random_play,
    "batch_equivalence": check_batch_equivalence,
    "global_rng_noise": check_global_rng_noise,
    "clone_independence": check_clone_independence,
    "invariants_random_play": check_invariants_random_play,
    "illegal_actions": check_illegal_actions,
    "env_checkers": check_env_checkers,
    "gym_random_play": check_gym_random_play,
    "vector_env": check_vector_env,
    "hidden_information": check_hidden_information,
    "forced_moves_hidden": check_forced_moves_hidden,
}
