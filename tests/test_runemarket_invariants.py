"""The Rune Market's invariants (the rulings' list) under random and hypothesis-driven play,
clones, replay at any batch size, and the plain-Python engine (NUMBA_DISABLE_JIT=1)."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ripmarket_env.games.runemarket import Engine, RulesConfig
from ripmarket_env.games.runemarket.invariants import check_game

REPO = Path(__file__).resolve().parents[1]


def play(eng, rng, check=True, g=0):
    """Random legal play of game g to its end, checking every invariant after every step."""
    n = 0
    while not eng.terminated[g]:
        prev = eng.state[g].copy()
        a = np.full(eng.batch_size, -1)
        a[g] = rng.choice(eng.legal_actions(g))
        eng.step(a)
        n += 1
        if check:
            errs = check_game(eng, g, prev)
            assert not errs, (n, errs)
    return n


@pytest.mark.parametrize("P", [2, 3, 4, 6])
def test_random_play_keeps_every_invariant(P):
    """Rune, card, Boat and Bandit conservation and the rest, after every step; every game
    ends by emptying the Market, never at the cap (RM-7.1, RM-7.3)."""
    eng = Engine(RulesConfig(num_players=P))
    rng = np.random.default_rng(P)
    for s in range(12):
        eng.reset([1000 * P + s])
        play(eng, rng)
        assert eng.state["end_reason"][0] == 0
        assert abs(eng.rewards()[0].sum()) < 1e-6


variant_rules = st.fixed_dictionaries({
    "num_players": st.integers(2, 6),
    "hand_size": st.integers(1, 6),
    "rune_cost": st.one_of(st.none(), st.integers(2, 6)),
    "number_cost": st.integers(10, 40),
    "bandit_removal": st.integers(5, 40),
    "bandit_interest": st.sampled_from(["divert", "block"]),
    "rune_sums": st.sampled_from(["exact", "at_least"]),
    "tie_break": st.sampled_from(["fewer_turns", "share"]),
    "reward_mode": st.sampled_from(["win", "placement"]),
    "defend": st.sampled_from(["ask", "auto"]),
    "max_turns": st.one_of(st.none(), st.integers(1, 60)),
})


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rules=variant_rules, seed=st.integers(0, 2**40), picks=st.lists(st.integers(0, 10**6), min_size=1,
                                                                          max_size=50))
def test_hypothesis_variants_and_choices(rules, seed, picks):
    """Any variant, any seed, any choices: the invariants hold and the mask offers only
    actions that succeed (every masked action is accepted)."""
    eng = Engine(RulesConfig(**rules))
    eng.reset([seed])
    i = 0
    while not eng.terminated[0]:
        legal = eng.legal_actions(0)
        assert legal
        prev = eng.state[0].copy()
        eng.step([legal[picks[i % len(picks)] % len(legal)]])
        i += 1
        assert not check_game(eng, 0, prev)
        assert i < 20000


def test_clones_evolve_independently_and_replay_matches():
    """A clone is a byte copy that then evolves on its own; the original is untouched."""
    eng = Engine(RulesConfig(num_players=4), batch_size=3)
    eng.reset([5, 6, 7])
    rng = np.random.default_rng(0)
    for _ in range(20):
        eng.step([rng.choice(eng.legal_actions(g)) for g in range(3)])
    twin = eng.clone([1])
    snap = eng.state.copy()
    play(twin, np.random.default_rng(9))
    for name in snap.dtype.names:
        assert np.array_equal(eng.state[name], snap[name])


def test_observations_stay_in_bounds_for_every_viewer():
    from ripmarket_env.games.runemarket import SPEC

    eng = Engine(RulesConfig(num_players=6))
    low, high = SPEC.observation_bounds(eng)
    rng = np.random.default_rng(3)
    for s in range(4):
        eng.reset([s])
        while not eng.terminated[0]:
            for v in range(6):
                o = eng.observe(np.array([v]))[0]
                assert ((o >= low) & (o <= high)).all()
            eng.step([rng.choice(eng.legal_actions(0))])


_SCRIPT = """
import hashlib, numpy as np
from ripmarket_env.games.runemarket import Engine, RulesConfig
h = hashlib.sha256()
for P, seed in ((2, 1), (4, 2), (6, 3)):
    eng = Engine(RulesConfig(num_players=P)); eng.reset([seed]); rng = np.random.default_rng(seed)
    while not eng.terminated[0]:
        a = int(rng.choice(eng.legal_actions(0))); h.update(bytes([a])); eng.step([a])
        h.update(eng.observe(np.array([0])).tobytes())
    h.update(eng.rewards().tobytes())
print(h.hexdigest())
"""


def _run(disable: bool) -> str:
    env = dict(os.environ, NUMBA_DISABLE_JIT="1" if disable else "0", PYTHONPATH=str(REPO))
    out = subprocess.run([sys.executable, "-c", _SCRIPT], cwd=REPO, env=env, capture_output=True, text=True,
                         timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout.strip()


def test_plain_python_engine_plays_the_same_games():
    """RM-8.3: NUMBA_DISABLE_JIT=1 plays the same games (actions, observations, rewards)."""
    assert _run(True) == _run(False)
    assert len(hashlib.sha256().hexdigest()) == 64
