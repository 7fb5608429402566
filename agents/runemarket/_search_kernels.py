"""Compiled rollouts of The Rune Market's search agent (``agents.runemarket.search``).

``rollouts(S, TB, c, first, seat, seeds, eps, max_steps, out)``: row ``i`` takes action
``first[i]`` and is played out to its end by the rollout policy (all seats, the defenders
included), and ``out[i]`` is seat ``seat``'s final reward. The rollout policy is a greedy
banker: at the turn's start it keeps its Shelters; in stage 2 it buys a Boat Shelter with
Runes when it can; in stage 3 it buys a Rune (its sheltered colour first), tables a
Shelter, buys a Boat Shelter with Numbers, plays a Theft Card, pays off a Bandit, attacks,
and ends the turn when none is legal; payments and attacks use the largest legal card;
victims are the opponent with the most Runes; thefts take a Rune (Red first) before a
hand card; a defender blocks with its smallest legal card; a Shelter choice is the first
legal one. At rate ``eps`` a decision is a uniformly random legal action instead.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from agents.blackmarket._search_kernels import _u01  # the rollouts' per-row uniform stream
from ripmarket_env.core.kernels import nth_legal
from ripmarket_env.games.runemarket import kernels as K
from ripmarket_env.games.runemarket.config import C_P
from ripmarket_env.games.runemarket.state import (
    PH_CHOOSE_CARD,
    PH_CHOOSE_OPP,
    PH_CHOOSE_STEAL,
    PH_DEFEND,
    PH_HAND,
    PH_PAYMENT,
    PH_RUNE_BUY,
    PH_START,
)

_HAND_ORDER = np.array([K.A_SHELTER_TABLE, K.A_SHELTER_TABLE + 1, K.A_NUMBER_BOAT, K.A_THEFT,
                        K.A_PAY_BANDIT, K.A_PAY_BANDIT + 1, K.A_ATTACK, K.A_DONE], np.int64)


@njit(cache=True, nogil=True)
def policy(r, c, u1, u2):
    """The rollout policy's action for game ``r`` (module docstring); ``u1 < 0``: random."""
    m = r.mask
    if u1 < 0.0:
        return nth_legal(m, int(u2 * r.n_legal))
    ph = r.phase
    p = r.turn_player
    if ph == PH_START and m[K.A_DONE]:
        return K.A_DONE
    if ph == PH_RUNE_BUY:
        for a in (K.A_RUNE_BOAT, K.A_RUNE_BOAT + 1, K.A_DONE):
            if m[a]:
                return a
    elif ph == PH_HAND:
        first = 1 if r.shelter[p, 1] != 0 and r.shelter[p, 0] == 0 else 0
        for a in (K.A_BUY_RUNE + first, K.A_BUY_RUNE + 1 - first):
            if m[a]:
                return a
        for i in range(_HAND_ORDER.shape[0]):
            if m[_HAND_ORDER[i]]:
                return _HAND_ORDER[i]
    elif ph == PH_PAYMENT or ph == PH_CHOOSE_CARD:
        for a in range(K.A_NUMBER + 9, K.A_NUMBER - 1, -1):
            if m[a]:
                return a
    elif ph == PH_DEFEND:
        for a in range(K.A_NUMBER, K.A_NO_BLOCK + 1):
            if m[a]:
                return a
    elif ph == PH_CHOOSE_OPP:
        P = c[C_P]
        best = -1
        bs = -1
        for k in range(1, P):
            a = K.A_OPPONENT + k - 1
            if m[a]:
                s = K.score(r, (p + k) % P)
                if s > bs:
                    bs = s
                    best = a
        if best >= 0:
            return best
    elif ph == PH_CHOOSE_STEAL:
        for a in (K.A_STEAL, K.A_STEAL + 1, K.A_STEAL + 2):
            if m[a]:
                return a
    return nth_legal(m, 0)


@njit(cache=True, nogil=True)
def take_singles(r, T, c):
    """A rollout takes the decisions the engine asks with one legal option (RM-8.1; the
    defence aside, asked before the rule too) without a draw or a step of its budget: it
    plays out a world the searching seat imagined, where nothing is revealed to anyone,
    and its draws stay those of the rollouts before the rule."""
    while not r.done and r.n_legal == 1 and r.phase != PH_DEFEND:
        K.step_game(r, T, c, nth_legal(r.mask, 0))


@njit(cache=True, nogil=True)
def _rollout_one(r, T, c, a0, seat, seeds, i, eps, max_steps):
    K.step_game(r, T, c, a0)
    take_singles(r, T, c)
    n = 0
    while not r.done and n < max_steps:
        u0 = _u01(seeds, i)
        u1 = -1.0 if u0 < eps else u0
        K.step_game(r, T, c, policy(r, c, u1, _u01(seeds, i)))
        take_singles(r, T, c)
        n += 1
    return r.final_rewards[seat]


@njit(cache=True, parallel=True)
def rollouts(S, TB, c, first, seat, seeds, eps, max_steps, out):
    for i in prange(S.shape[0]):
        out[i] = _rollout_one(S[i], TB[0], c, first[i], seat, seeds, i, eps, max_steps)
