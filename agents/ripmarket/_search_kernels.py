"""Compiled helpers of :mod:`agents.ripmarket.search`: determinization and rollouts.

``determinize`` fills the hidden parts of many copies of one reconstructed game (other
hands, face-down cards, deck order, other Ghosts' Shadow hands, Shadow Deck and
discard), each row from its own RNG; ``rollouts`` applies one candidate action per row
and plays every row to the end of the game with a compiled rollout policy (uniformly
random legal actions, or the quick greedy "value" policy).

Every row draws from its own RNG slot (``seeds[g]``). The compiled code is cached with
the engine's kernels (``ripmarket_env.core.jitcache``: the cache folder is keyed by every
compiled source, this file included).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ripmarket_env.games.ripmarket.cards import registry as R
from ripmarket_env.games.ripmarket import kernels as K
from ripmarket_env.games.ripmarket.config import C_P
from ripmarket_env.games.ripmarket.state import (
    PH_ACQUIRE,
    PH_GHOST,
    PH_GHOST_TARGET,
    PH_MARKET,
    PH_PLAY,
    PH_REPLACE,
    PH_TARGET,
)

JIT = dict(cache=True, nogil=True)


@njit(**JIT)
def _below(seeds, g, n):
    """Uniform integer in [0, n) from row g's RNG slot."""
    return (K.bench_u32(seeds, g) * n) >> 32


@njit(**JIT)
def _hints(r, cards, n, hint_seat, hint_card, got, face_down):
    """Move each hinted card (of seats with ``face_down`` as given) from ``cards[:n]``
    into its seat's hand unless it is that seat's card on the table; returns the new n."""
    for i in range(hint_seat.shape[0]):
        q = hint_seat[i]
        x = hint_card[i]
        if r.face_down[q] != face_down or r.played[q] == x:
            continue
        for t in range(n):
            if cards[t] == x:
                r.hand[q, x] += 1
                got[q] += 1
                cards[t] = cards[n - 1]
                n -= 1
                break
    return n


@njit(**JIT)
def determinize_one(r, T, c, pool, spool, fd_seats, fd_hint, hint_seat, hint_card, hand_seats,
                    hand_sizes, sh_seats, sh_sizes, deck_n, sdeck_n, seeds, g):
    # The game's own RNG (later reshuffles and random discards).
    r.rng = K.bench_u32(seeds, g)
    DL = pool.shape[0]
    # ---- Living cards nobody in view can see: one list, cards removed as placed
    n = 0
    for d in range(DL):
        n += pool[d]
    cards = np.empty(max(n, 1), np.int8)
    n = 0
    for d in range(DL):
        for _ in range(pool[d]):
            cards[n] = d
            n += 1
    got = np.zeros(r.hand.shape[0], np.int64)
    # A card a seat took from the Market this round and did not play is in its hand:
    # first for seats whose card is face-up (certain), then for face-down seats.
    n = _hints(r, cards, n, hint_seat, hint_card, got, False)
    # Face-down cards on the table: a face-down design each. A seat that took a face-down
    # design from the Market this round played that card with probability 1/(hand + 1).
    for i in range(fd_seats.shape[0]):
        q = fd_seats[i]
        j = -1
        x = fd_hint[i]
        if x >= 0 and _below(seeds, g, r.hand_n[q] + 1) == 0:
            for t in range(n):
                if cards[t] == x:
                    j = t
                    break
        if j < 0:
            m = 0
            for t in range(n):
                if T.face_down[cards[t]]:
                    m += 1
            if m > 0:
                k = _below(seeds, g, m)
                for t in range(n):
                    if T.face_down[cards[t]]:
                        if k == 0:
                            j = t
                            break
                        k -= 1
        if j < 0:  # inconsistent observation: leave the table empty rather than fail
            r.played[q] = -1
            r.face_down[q] = False
            continue
        r.played[q] = cards[j]
        cards[j] = cards[n - 1]
        n -= 1
    n = _hints(r, cards, n, hint_seat, hint_card, got, True)
    # Shuffle the rest; deal the other hands, then the deck (deck[0] is the bottom).
    for i in range(n - 1, 0, -1):
        j = _below(seeds, g, i + 1)
        t = cards[i]
        cards[i] = cards[j]
        cards[j] = t
    pos = 0
    for i in range(hand_seats.shape[0]):
        q = hand_seats[i]
        for _ in range(hand_sizes[i] - got[q]):
            if pos < n:
                r.hand[q, cards[pos]] += 1
                pos += 1
    r.deck[:] = -1
    k = 0
    while k < deck_n and pos < n:
        r.deck[k] = cards[pos]
        k += 1
        pos += 1
    r.deck_n = k
    # ---- Shadow cards out of view
    DS = spool.shape[0]
    n = 0
    for d in range(DS):
        n += spool[d]
    sh = np.empty(max(n, 1), np.int8)
    n = 0
    for d in range(DS):
        for _ in range(spool[d]):
            sh[n] = d
            n += 1
    for i in range(n - 1, 0, -1):
        j = _below(seeds, g, i + 1)
        t = sh[i]
        sh[i] = sh[j]
        sh[j] = t
    pos = 0
    for i in range(sh_seats.shape[0]):
        q = sh_seats[i]
        for _ in range(sh_sizes[i]):
            if pos < n:
                r.shadow_hand[q, sh[pos]] += 1
                pos += 1
    r.shadow_deck[:] = -1
    k = 0
    while k < sdeck_n and pos < n:
        r.shadow_deck[k] = sh[pos]
        k += 1
        pos += 1
    r.shadow_deck_n = k
    r.shadow_discard[:] = 0
    r.shadow_discard_n = 0
    while pos < n:
        r.shadow_discard[sh[pos]] += 1
        r.shadow_discard_n += 1
        pos += 1
    K.fill_mask(r, T, c)


@njit(cache=True)
def determinize(S, TB, c, pool, spool, fd_seats, fd_hint, hint_seat, hint_card, hand_seats, hand_sizes,
                sh_seats, sh_sizes, deck_n, sdeck_n, seeds):
    """Sample the hidden parts of every row of ``S`` (rows hold the public template)."""
    for g in range(S.shape[0]):
        determinize_one(S[g], TB[0], c, pool, spool, fd_seats, fd_hint, hint_seat, hint_card, hand_seats,
                        hand_sizes, sh_seats, sh_sizes, deck_n, sdeck_n, seeds, g)


# ----------------------------------------------------------------------------------
# Rollout policies: 0 = uniformly random legal actions; 1 = "value": a quick greedy
# reading of the table (below), mixed with random actions at rate eps.
# ----------------------------------------------------------------------------------
POLICY_RANDOM = 0
POLICY_VALUE = 1


@njit(**JIT)
def card_estimate(r, T, c, p, d):
    """A quick estimate of the final score of design d played by seat p now (R-7.1):
    base value, its own score effects and the Shadows attached to p; Earthquake: base."""
    v = T.value[d]
    if r.rule == K.RULE_EARTHQUAKE:
        return v
    P = c[C_P]
    s = v
    for k in range(T.nops[d]):
        code = T.ops[d, k, 0]
        amt = T.ops[d, k, 1]
        cond = T.ops[d, k, 2]
        arg = T.ops[d, k, 3]
        if code == R.OP_SCORE_SELF:
            if cond == K.SC_ALWAYS:
                s += amt
            elif cond == K.SC_PER_GHOST:
                s += amt * (P - K.living_count(r, c))
            elif cond == K.SC_HAUNTED:
                if r.attached_n[p] > 0:
                    s += amt
            elif cond == K.SC_HP_AT_MOST:
                if r.hp[p] <= arg:
                    s += amt
            elif cond == K.SC_LAST:
                if r.turn == P - 1:
                    s += amt
        elif code == R.OP_SCORE_BOARD:
            if K.base_cond(cond, arg, v):
                s += amt
        elif code == R.OP_SET_SCORE:
            for q in range(P):
                if q != p and r.played[q] >= 0 and not r.face_down[q] and T.value[r.played[q]] > s:
                    s = T.value[r.played[q]]
    for i in range(r.attached_n[p]):
        sd = r.attached[p, i]
        for k in range(T.shadow_nops[sd]):
            if T.shadow_ops[sd, k, 0] == R.OP_SHADOW_SCORE:
                if K.base_cond(T.shadow_ops[sd, k, 2], T.shadow_ops[sd, k, 3], v):
                    s += T.shadow_ops[sd, k, 1]
    return s


@njit(**JIT)
def value_action(r, T, c, seeds, g, eps):
    """The "value" rollout policy; a uniformly random legal action with probability
    eps / 1000. Acquire: a Market card worth 6 or more, else the deck. Play and replace:
    the card with the best estimate (lowest under Low Tide). Targets: the living seat
    with the most HP. Market choices: the most valuable slot. Ghosts: random."""
    ph = r.phase
    if ph == PH_GHOST or ph == PH_GHOST_TARGET or _below(seeds, g, 1000) < eps:
        return K.random_legal(r, seeds, g)
    m = r.mask
    DL = T.value.shape[0]
    p = r.actor
    P = c[C_P]
    best = -1
    bv = -1000
    if ph == PH_ACQUIRE:
        for k in range(4):
            a = K.A_MARKET0 + k
            if m[a] and T.value[r.market[k]] > bv:
                bv = T.value[r.market[k]]
                best = a
        if m[K.A_DECK] and (best < 0 or bv < 6):
            best = K.A_DECK
    elif ph == PH_PLAY or ph == PH_REPLACE:
        low = r.rule == K.RULE_LOW_TIDE
        a0 = K.a_play0()
        for d in range(DL):
            if m[a0 + d]:
                e = card_estimate(r, T, c, p, d)
                if low:
                    e = -e
                if e > bv:
                    bv = e
                    best = a0 + d
    elif ph == PH_TARGET:
        a0 = K.a_target0(DL)
        for off in range(1, P):
            if m[a0 + off - 1]:
                q = (p + off) % P
                if r.hp[q] > bv:
                    bv = r.hp[q]
                    best = a0 + off - 1
    elif ph == PH_MARKET:
        a0 = K.a_slot0(DL)
        for k in range(4):
            if m[a0 + k] and T.value[r.market[k]] > bv:
                bv = T.value[r.market[k]]
                best = a0 + k
    if best < 0:
        return K.random_legal(r, seeds, g)
    return best


@njit(**JIT)
def take_singles(r, T, c):
    """A rollout takes the decisions the engine asks with one legal option (R-12.1) without
    a draw or a step of its budget: it plays out a world the searching seat imagined, where
    nothing is revealed to anyone, and its draws stay those of the rollouts before the rule."""
    while not r.done and r.n_legal == 1:
        for a in range(r.mask.shape[0]):
            if r.mask[a]:
                K.step_game(r, T, c, a)
                break


@njit(**JIT)
def rollout_one(r, T, c, a, seeds, g, seat, max_steps, policy, eps):
    if a >= 0:
        K.step_game(r, T, c, a)
    take_singles(r, T, c)
    n = 0
    while not r.done and n < max_steps:
        if policy == POLICY_VALUE:
            K.step_game(r, T, c, value_action(r, T, c, seeds, g, eps))
        else:
            K.step_game(r, T, c, K.random_legal(r, seeds, g))
        take_singles(r, T, c)
        n += 1
    if r.done:
        return r.final_rewards[seat]
    return 0.0


@njit(cache=True)
def rollouts(S, TB, c, first, seeds, seat, max_steps, policy, eps, out):
    """Row g: apply ``first[g]`` (-1: none), then play to the game's end with the rollout
    policy (``POLICY_*``, random-action rate ``eps`` per mille); ``out[g]`` = the final
    reward of ``seat`` (0 if ``max_steps`` ran out). One thread."""
    for g in range(S.shape[0]):
        out[g] = rollout_one(S[g], TB[0], c, first[g], seeds, g, seat, max_steps, policy, eps)
