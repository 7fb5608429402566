"""Compiled rollouts of the Black Market search agent (``agents.blackmarket.search``).

``rollouts(S, TB, c, first, seat, seeds, eps, max_steps, out)``: row ``i`` takes action
``first[i]`` and is played out to its end by the rollout policy (all seats): buy the
card worth most points when a purchase is legal; else Third Die, then Heist; in a
choice phase (die, number, victim) a random legal option; with a full hand a random flip
or rotation (a draw would draw nothing); else draw with a random die; and a uniformly
random legal action at rate ``eps``. ``out[i]`` is seat ``seat``'s final reward.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from ripmarket_env.games.blackmarket import kernels as K
from ripmarket_env.games.blackmarket.config import C_LIMIT
from ripmarket_env.games.blackmarket.state import A_BUY, A_DRAW, A_EFFECT, PH_ACT


@njit(cache=True, nogil=True)
def _pick(r, k):
    """The k-th legal action (k < n_legal)."""
    m = r.mask
    for a in range(m.shape[0]):
        if m[a]:
            if k == 0:
                return a
            k -= 1
    return -1


@njit(cache=True, nogil=True)
def _rand_in(r, lo, hi, u):
    n = 0
    for a in range(lo, hi):
        if r.mask[a]:
            n += 1
    if n == 0:
        return -1
    k = int(u * n)
    for a in range(lo, hi):
        if r.mask[a]:
            if k == 0:
                return a
            k -= 1
    return -1


@njit(cache=True, nogil=True)
def policy(r, T, c, u1, u2):
    if u1 < 0.0 or r.phase != PH_ACT:
        return _pick(r, int(u2 * r.n_legal))
    best = -1
    bp = -1
    for a in range(A_BUY, A_DRAW):
        if r.mask[a]:
            s = (a - A_BUY) // 2
            pts = T.points[r.map_card[s]]
            if pts > bp:
                bp = pts
                best = a
    if best >= 0:
        return best
    if r.mask[A_EFFECT + 2]:
        return A_EFFECT + 2
    if r.mask[A_EFFECT + 3]:
        return A_EFFECT + 3
    lim = c[C_LIMIT]
    if lim > 0 and r.hand_n[r.actor] >= lim:
        a = _rand_in(r, 0, A_BUY, u2)
        if a >= 0:
            return a
    a = _rand_in(r, A_DRAW, A_EFFECT, u2)
    if a >= 0:
        return a
    return _pick(r, int(u2 * r.n_legal))


@njit(cache=True, nogil=True)
def _u01(state, i):
    x = (state[i] + np.uint64(0x9E3779B97F4A7C15))
    state[i] = x
    z = x
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    z = z ^ (z >> np.uint64(31))
    return (z >> np.uint64(11)) * (1.0 / 9007199254740992.0)


@njit(cache=True, nogil=True)
def take_singles(r, T, c):
    """A rollout takes the decisions the engine asks with one legal option (BM-12.3)
    without a draw or a step of its budget: it plays out a world the searching seat
    imagined, where nothing is revealed to anyone, and its draws stay those of the
    rollouts before the rule."""
    while not r.done and r.n_legal == 1:
        K.step_game(r, T, c, _pick(r, 0))


@njit(cache=True, nogil=True)
def _rollout_one(r, T, c, a0, seat, seeds, i, eps, max_steps):
    K.step_game(r, T, c, a0)
    take_singles(r, T, c)
    n = 0
    while not r.done and n < max_steps:
        u0 = _u01(seeds, i)
        u1 = -1.0 if u0 < eps else u0
        a = policy(r, T, c, u1, _u01(seeds, i))
        K.step_game(r, T, c, a)
        take_singles(r, T, c)
        n += 1
    return r.final_rewards[seat]


@njit(cache=True, parallel=True)
def rollouts(S, TB, c, first, seat, seeds, eps, max_steps, out):
    for i in prange(S.shape[0]):
        out[i] = _rollout_one(S[i], TB[0], c, first[i], seat, seeds, i, eps, max_steps)
