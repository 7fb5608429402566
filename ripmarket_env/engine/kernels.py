"""The rules of R.I.P. Market as numba kernels over the batched state.

Every function takes the whole ``State`` namedtuple ``s``, the compiled card
``Tables`` ``T``, the compiled rules config ``c`` (int64 array, see ``config.py``) and
the game row ``g``; it changes that row only. Rule IDs (``R-x.y``) refer to
``docs/RULES.md``. With ``NUMBA_DISABLE_JIT=1`` everything runs as plain Python.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from ..cards.registry import (
    BASE_CONDS,
    OP_DAMAGE_TARGET,
    OP_DEFLECT,
    OP_DRAW,
    OP_EXORCISE,
    OP_MARKET_DISCARD,
    OP_MARKET_FLUSH,
    OP_MARKET_TAKE,
    OP_REPLACE,
    OP_RULE,
    OP_SCORE_BOARD,
    OP_SCORE_SELF,
    OP_SCORE_TARGET,
    OP_SET_SCORE,
    OP_SHADOW_SCORE,
    OP_SHADOW_TRIGGER,
    RULES,
    SELF_CONDS,
    TRIGGER_KINDS,
    TRIGGER_SOURCES,
)
from .config import (
    C_CAP,
    C_EPILOGUE,
    C_GHOST_FIRST,
    C_HAND,
    C_HP,
    C_MARKET,
    C_MAX_ROUNDS,
    C_P,
    C_REWARD,
    C_TIE,
)
from .state import (
    ACQ_DECK,
    ACQ_MARKET,
    MAX_MARKET,
    MAX_SEATS,
    PH_ACQUIRE,
    PH_GHOST,
    PH_GHOST_TARGET,
    PH_MARKET,
    PH_OVER,
    PH_PLAY,
    PH_REPLACE,
    PH_RESOLVE,
    PH_TARGET,
    PH_TURN_START,
)

JIT = dict(cache=True, nogil=True)

RULE_LOW_TIDE = RULES["low_tide"]
RULE_EARTHQUAKE = RULES["earthquake"]
RULE_CULL = RULES["cull"]
SC_ALWAYS = SELF_CONDS["always"]
SC_PER_GHOST = SELF_CONDS["per_ghost"]
SC_HAUNTED = SELF_CONDS["if_haunted"]
SC_HP_AT_MOST = SELF_CONDS["hp_at_most"]
SC_LAST = SELF_CONDS["if_last"]
BC_GE = BASE_CONDS["base_ge"]
BC_LE = BASE_CONDS["base_le"]
BC_EVEN = BASE_CONDS["base_even"]
BC_ODD = BASE_CONDS["base_odd"]
TK_SCORE = TRIGGER_KINDS["score"]
TK_DISCARD = TRIGGER_KINDS["discard_random"]
TS_MARKET = TRIGGER_SOURCES["took_market"]
TS_DECK = TRIGGER_SOURCES["took_deck"]

# ----------------------------------------------------------------------------------
# Action layout: one flat Discrete space; see actions.py for the table.
# ----------------------------------------------------------------------------------
A_DECK = 0
A_MARKET0 = 1


@njit(**JIT)
def a_play0():
    return 1 + MAX_MARKET


@njit(**JIT)
def a_target0(DL):
    return 1 + MAX_MARKET + DL


@njit(**JIT)
def a_slot0(DL):
    return 1 + MAX_MARKET + DL + MAX_SEATS - 1


@njit(**JIT)
def a_pass(DL):
    return 1 + MAX_MARKET + DL + MAX_SEATS - 1 + MAX_MARKET


@njit(**JIT)
def a_shadow0(DL):
    return 2 + MAX_MARKET + DL + MAX_SEATS - 1 + MAX_MARKET


# ----------------------------------------------------------------------------------
# The game's own RNG: splitmix32 over a 32-bit state kept in an int64.
# ----------------------------------------------------------------------------------
@njit(**JIT)
def rng_u32(s, g):
    x = (int(s.rng[g]) + 0x9E3779B9) & 0xFFFFFFFF
    s.rng[g] = x
    z = x
    z = ((z ^ (z >> 16)) * 0x85EBCA6B) & 0xFFFFFFFF
    z = ((z ^ (z >> 13)) * 0xC2B2AE35) & 0xFFFFFFFF
    return z ^ (z >> 16)


@njit(**JIT)
def rand_below(s, g, n):
    return (rng_u32(s, g) * n) >> 32


# ----------------------------------------------------------------------------------
# Decks, hands, Market
# ----------------------------------------------------------------------------------
@njit(**JIT)
def reshuffle_living(s, g):
    n = 0
    for d in range(s.discard.shape[1]):
        for _ in range(s.discard[g, d]):
            s.deck[g, n] = d
            n += 1
        s.discard[g, d] = 0
    s.discard_n[g] = 0
    for i in range(n - 1, 0, -1):
        j = rand_below(s, g, i + 1)
        t = s.deck[g, i]
        s.deck[g, i] = s.deck[g, j]
        s.deck[g, j] = t
    s.deck_n[g] = n


@njit(**JIT)
def reshuffle_shadow(s, g):
    n = 0
    for d in range(s.shadow_discard.shape[1]):
        for _ in range(s.shadow_discard[g, d]):
            s.shadow_deck[g, n] = d
            n += 1
        s.shadow_discard[g, d] = 0
    s.shadow_discard_n[g] = 0
    for i in range(n - 1, 0, -1):
        j = rand_below(s, g, i + 1)
        t = s.shadow_deck[g, i]
        s.shadow_deck[g, i] = s.shadow_deck[g, j]
        s.shadow_deck[g, j] = t
    s.shadow_deck_n[g] = n


@njit(**JIT)
def draw_living(s, g):
    """Top card of the Living Deck (reshuffling the discard first if empty), or -1."""
    if s.deck_n[g] == 0:
        if s.discard_n[g] == 0:
            return -1
        reshuffle_living(s, g)
    n = s.deck_n[g] - 1
    d = s.deck[g, n]
    s.deck[g, n] = -1
    s.deck_n[g] = n
    return d


@njit(**JIT)
def draw_shadow(s, g):
    if s.shadow_deck_n[g] == 0:
        if s.shadow_discard_n[g] == 0:
            return -1
        reshuffle_shadow(s, g)
    n = s.shadow_deck_n[g] - 1
    d = s.shadow_deck[g, n]
    s.shadow_deck[g, n] = -1
    s.shadow_deck_n[g] = n
    return d


@njit(**JIT)
def settle(s, g):
    """R-10.1/R-10.3: an empty deck with a non-empty discard is reshuffled at once."""
    if s.deck_n[g] == 0 and s.discard_n[g] > 0:
        reshuffle_living(s, g)
    if s.shadow_deck_n[g] == 0 and s.shadow_discard_n[g] > 0:
        reshuffle_shadow(s, g)


@njit(**JIT)
def to_hand(s, g, p, d):
    s.hand[g, p, d] += 1
    s.hand_n[g, p] += 1


@njit(**JIT)
def from_hand(s, g, p, d):
    s.hand[g, p, d] -= 1
    s.hand_n[g, p] -= 1


@njit(**JIT)
def to_discard(s, g, d):
    s.discard[g, d] += 1
    s.discard_n[g] += 1


@njit(**JIT)
def to_shadow_discard(s, g, d):
    s.shadow_discard[g, d] += 1
    s.shadow_discard_n[g] += 1


@njit(**JIT)
def draw_to_hand(s, g, p):
    d = draw_living(s, g)
    if d >= 0:
        to_hand(s, g, p, d)
    return d


@njit(**JIT)
def draw_shadow_to_hand(s, g, p):
    d = draw_shadow(s, g)
    if d >= 0:
        s.shadow_hand[g, p, d] += 1
        s.shadow_n[g, p] += 1


@njit(**JIT)
def refill_slot(s, g, k):
    s.market[g, k] = draw_living(s, g)


@njit(**JIT)
def discard_random_from_hand(s, g, p):
    n = s.hand_n[g, p]
    if n == 0:
        return
    r = rand_below(s, g, n)
    for d in range(s.hand.shape[2]):
        c = s.hand[g, p, d]
        if r < c:
            from_hand(s, g, p, d)
            to_discard(s, g, d)
            return
        r -= c


# ----------------------------------------------------------------------------------
# Seats
# ----------------------------------------------------------------------------------
@njit(**JIT)
def living_count(s, c, g):
    n = 0
    for p in range(c[C_P]):
        if s.alive[g, p]:
            n += 1
    return n


@njit(**JIT)
def die(s, c, g, p):
    """R-6.1: hand to the Living discard, draw 2 Shadow cards, become a Ghost."""
    for d in range(s.hand.shape[2]):
        k = s.hand[g, p, d]
        if k > 0:
            s.discard[g, d] += k
            s.discard_n[g] += k
            s.hand[g, p, d] = 0
    s.hand_n[g, p] = 0
    s.hp[g, p] = 0
    s.alive[g, p] = False
    s.elim[g, p] = s.elim_counter[g]
    s.death_round[g, p] = s.round[g]
    draw_shadow_to_hand(s, g, p)
    draw_shadow_to_hand(s, g, p)


@njit(**JIT)
def lose_hp(s, c, g, p, amount):
    """Direct damage (R-6.3: never below 0). Returns True if the player died."""
    h = s.hp[g, p] - amount
    if h < 0:
        h = 0
    s.hp[g, p] = h
    if h == 0 and s.alive[g, p]:
        s.elim_counter[g] += 1
        die(s, c, g, p)
        return True
    return False


# ----------------------------------------------------------------------------------
# Game end and rewards
# ----------------------------------------------------------------------------------
@njit(**JIT)
def compute_rewards(s, c, g):
    P = c[C_P]
    k = 0
    for p in range(P):
        if s.winners[g, p]:
            k += 1
    if c[C_REWARD] == 0:  # "win"
        for p in range(P):
            if k == P:
                s.final_rewards[g, p] = 0.0
            elif s.winners[g, p]:
                s.final_rewards[g, p] = (P - k) / (k * (P - 1.0))
            else:
                s.final_rewards[g, p] = -1.0 / (P - 1.0)
    else:  # "placement"
        for p in range(P):
            if s.winners[g, p]:
                place = (k + 1) / 2.0
            else:
                better = k
                tied = 0
                for q in range(P):
                    if s.winners[g, q]:
                        continue
                    if s.elim[g, q] > s.elim[g, p]:
                        better += 1
                    elif s.elim[g, q] == s.elim[g, p]:
                        tied += 1
                place = better + (tied + 1) / 2.0
            s.final_rewards[g, p] = 1.0 - 2.0 * (place - 1.0) / (P - 1.0)


@njit(**JIT)
def finish(s, c, g):
    s.done[g] = True
    s.phase[g] = PH_OVER
    for p in range(c[C_P]):
        s.step_rewards[g, p] = s.final_rewards[g, p]


@njit(**JIT)
def cleanup(s, T, c, g):
    """R-8.7: played cards to the discard, Shadows expire, round effects end."""
    P = c[C_P]
    for p in range(P):
        d = s.played[g, p]
        if d >= 0:
            to_discard(s, g, d)
        s.played[g, p] = -1
        s.face_down[g, p] = False
        s.target[g, p] = -1
        for i in range(s.attached_n[g, p]):
            to_shadow_discard(s, g, s.attached[g, p, i])
            s.attached[g, p, i] = -1
            s.fired[g, p, i] = False
        s.attached_n[g, p] = 0
        s.acquired[g, p] = 0
        s.acted[g, p] = False
    s.rule[g] = 0
    # slots that could not refill earlier refill now, lowest slot first.
    for k in range(c[C_MARKET]):
        if s.market[g, k] < 0:
            refill_slot(s, g, k)


@njit(**JIT)
def begin_round(s, c, g):
    """R-3.1/R-3.3: this round's turn order."""
    P = c[C_P]
    fp = s.first_player[g]
    if c[C_GHOST_FIRST] == 1 or s.epilogue[g]:
        i = 0
        for j in range(P):
            p = (fp + j) % P
            if not s.alive[g, p]:
                s.order[g, i] = p
                i += 1
        for j in range(P):
            p = (fp + j) % P
            if s.alive[g, p]:
                s.order[g, i] = p
                i += 1
    else:
        for j in range(P):
            s.order[g, j] = (fp + j) % P
    s.turn[g] = 0
    s.rule[g] = 0
    s.phase[g] = PH_TURN_START


@njit(**JIT)
def end_game(s, T, c, g):
    """R-9: rewards from ``winners``; the 2-player epilogue round if enabled (R-9.4)."""
    compute_rewards(s, c, g)
    if c[C_EPILOGUE] == 1 and not s.epilogue[g]:
        s.epilogue[g] = True
        for p in range(c[C_P]):
            if s.alive[g, p]:
                s.first_player[g] = p
        cleanup(s, T, c, g)
        begin_round(s, c, g)
        return
    finish(s, c, g)


# ----------------------------------------------------------------------------------
# Effect primitives: one small kernel each (registry.py names them).
# ----------------------------------------------------------------------------------
@njit(**JIT)
def base_cond(cond, arg, v):
    if cond == BC_GE:
        return v >= arg
    if cond == BC_LE:
        return v <= arg
    if cond == BC_EVEN:
        return v % 2 == 0
    return v % 2 == 1


@njit(**JIT)
def op_rule(s, g, rule):
    s.rule[g] = rule  # the most recent rule change overwrites the slot


@njit(**JIT)
def op_draw(s, g, p, n):
    for _ in range(n):
        draw_to_hand(s, g, p)


@njit(**JIT)
def op_market_flush(s, c, g):
    M = c[C_MARKET]
    for k in range(M):
        if s.market[g, k] >= 0:
            to_discard(s, g, s.market[g, k])
            s.market[g, k] = -1
    for k in range(M):
        refill_slot(s, g, k)


@njit(**JIT)
def op_market_discard(s, g, k):
    to_discard(s, g, s.market[g, k])
    refill_slot(s, g, k)


@njit(**JIT)
def op_market_take(s, g, p, k):
    to_hand(s, g, p, s.market[g, k])
    refill_slot(s, g, k)


@njit(**JIT)
def op_exorcise(s, g, p):
    for i in range(s.attached_n[g, p]):
        to_shadow_discard(s, g, s.attached[g, p, i])
        s.attached[g, p, i] = -1
        s.fired[g, p, i] = False
    s.attached_n[g, p] = 0


@njit(**JIT)
def op_damage_target(s, c, g, q, amount):
    if lose_hp(s, c, g, q, amount) and living_count(s, c, g) <= 1:
        s.ending[g] = True  # finish this turn, then the game ends


@njit(**JIT)
def op_score_self(s, c, g, p, amount, cond, arg, last_seat):
    if cond == SC_ALWAYS:
        return amount
    if cond == SC_PER_GHOST:
        return amount * (c[C_P] - living_count(s, c, g))
    if cond == SC_HAUNTED:
        return amount if s.attached_n[g, p] > 0 else 0
    if cond == SC_HP_AT_MOST:
        return amount if s.hp[g, p] <= arg else 0
    if cond == SC_LAST:
        return amount if p == last_seat else 0
    return 0


@njit(**JIT)
def op_set_score(s, T, c, g, p, source):
    """Returns the value to set, or -1000 when there is nothing to copy."""
    best = -1000
    for q in range(c[C_P]):
        if q != p and s.played[g, q] >= 0:
            v = T.value[s.played[g, q]]
            if v > best:
                best = v
    return best


@njit(**JIT)
def exec_when_played(s, T, c, g, p, d, k):
    """Primitives without a choice that act when the card is played (or revealed)."""
    code = T.ops[d, k, 0]
    if code == OP_RULE:
        op_rule(s, g, T.ops[d, k, 1])
    elif code == OP_DRAW:
        op_draw(s, g, p, T.ops[d, k, 1])
    elif code == OP_MARKET_FLUSH:
        op_market_flush(s, c, g)
    elif code == OP_EXORCISE:
        op_exorcise(s, g, p)
    # score_self, score_board, set_score act at resolution; face_down on the play itself.


@njit(**JIT)
def has_op(T, d, code):
    for k in range(T.nops[d]):
        if T.ops[d, k, 0] == code:
            return True
    return False


# ----------------------------------------------------------------------------------
# Turns
# ----------------------------------------------------------------------------------
@njit(**JIT)
def end_turn(s, T, c, g):
    if s.ending[g]:
        s.ending[g] = False
        for p in range(c[C_P]):
            s.winners[g, p] = s.alive[g, p]
        end_game(s, T, c, g)
        return
    s.turn[g] += 1
    s.phase[g] = PH_TURN_START


@njit(**JIT)
def turn_start(s, T, c, g):
    P = c[C_P]
    if s.turn[g] >= P:
        s.phase[g] = PH_RESOLVE
        return
    p = s.order[g, s.turn[g]]
    s.actor[g] = p
    s.acted[g, p] = True
    if s.alive[g, p]:
        s.acquired[g, p] = 0
        can_acquire = s.deck_n[g] > 0 or s.discard_n[g] > 0
        if not can_acquire:
            for k in range(c[C_MARKET]):
                if s.market[g, k] >= 0:
                    can_acquire = True
        if can_acquire:
            s.phase[g] = PH_ACQUIRE
        elif s.hand_n[g, p] > 0:
            s.phase[g] = PH_PLAY
        else:  # nothing to acquire and nothing to play
            s.turn[g] += 1
    else:
        if s.shadow_n[g, p] < c[C_CAP]:
            draw_shadow_to_hand(s, g, p)
        s.phase[g] = PH_GHOST


@njit(**JIT)
def fire_shadow_triggers(s, T, c, g, p):
    """R-4.8: after the played card's own text, in attach order."""
    for i in range(s.attached_n[g, p]):
        sd = s.attached[g, p, i]
        for k in range(T.shadow_nops[sd]):
            if T.shadow_ops[sd, k, 0] != OP_SHADOW_TRIGGER:
                continue
            kind = T.shadow_ops[sd, k, 1]
            amount = T.shadow_ops[sd, k, 2]
            src = T.shadow_ops[sd, k, 3]
            hit = (src == TS_MARKET and s.acquired[g, p] == ACQ_MARKET) or (
                src == TS_DECK and s.acquired[g, p] == ACQ_DECK
            )
            if hit:
                s.fired[g, p, i] = True
                if kind == TK_DISCARD:
                    for _ in range(amount):
                        discard_random_from_hand(s, g, p)


@njit(**JIT)
def finish_play(s, T, c, g):
    p = s.actor[g]
    fire_shadow_triggers(s, T, c, g, p)
    s.pend_card[g] = -1
    s.pend_op[g] = 0
    s.replaced[g] = False
    end_turn(s, T, c, g)


@njit(**JIT)
def any_target(s, c, g, p, richer):
    P = c[C_P]
    for off in range(1, P):
        q = (p + off) % P
        if s.alive[g, q] and (not richer or s.hp[g, q] > s.hp[g, p]):
            return True
    return False


@njit(**JIT)
def any_market(s, c, g):
    for k in range(c[C_MARKET]):
        if s.market[g, k] >= 0:
            return True
    return False


@njit(**JIT)
def run_ops(s, T, c, g):
    """R-4.5: resolve the played card's primitives in order, stopping at a choice."""
    p = s.actor[g]
    d = s.pend_card[g]
    k = s.pend_op[g]
    while k < T.nops[d]:
        code = T.ops[d, k, 0]
        if code == OP_SCORE_TARGET or code == OP_DEFLECT or code == OP_DAMAGE_TARGET:
            if any_target(s, c, g, p, code == OP_DAMAGE_TARGET):
                s.pend_op[g] = k
                s.phase[g] = PH_TARGET
                return
        elif code == OP_MARKET_DISCARD or code == OP_MARKET_TAKE:
            if any_market(s, c, g):
                s.pend_op[g] = k
                s.phase[g] = PH_MARKET
                return
        elif code == OP_REPLACE:
            if not s.replaced[g] and s.hand_n[g, p] > 0:
                s.pend_op[g] = k
                s.phase[g] = PH_REPLACE
                return
        else:
            exec_when_played(s, T, c, g, p, d, k)
        k += 1
    finish_play(s, T, c, g)


@njit(**JIT)
def put_on_table(s, T, c, g, p, d, face_up):
    s.played[g, p] = d
    s.event[g] += 1
    s.play_event[g, p] = s.event[g]
    s.target[g, p] = -1
    if T.face_down[d] and not face_up:
        s.face_down[g, p] = True  # its text waits for the reveal
        finish_play(s, T, c, g)
    else:
        s.face_down[g, p] = False
        s.pend_card[g] = d
        s.pend_op[g] = 0
        run_ops(s, T, c, g)


# ----------------------------------------------------------------------------------
# Legal actions (the mask is part of the state, recomputed at every decision)
# ----------------------------------------------------------------------------------
@njit(**JIT)
def fill_mask(s, T, c, g):
    """Write the legal-action mask of game g; returns (count, last legal action)."""
    m = s.mask[g]
    m[:] = False
    DL = T.value.shape[0]
    P = c[C_P]
    ph = s.phase[g]
    p = s.actor[g]
    n = 0
    last = -1
    if ph == PH_ACQUIRE:
        deck_ok = s.deck_n[g] > 0 or s.discard_n[g] > 0
        if deck_ok:
            m[A_DECK] = True
            n += 1
            last = A_DECK
        if s.hand_n[g, p] > 0 or not deck_ok:
            for k in range(c[C_MARKET]):
                if s.market[g, k] >= 0:
                    m[A_MARKET0 + k] = True
                    n += 1
                    last = A_MARKET0 + k
    elif ph == PH_PLAY or ph == PH_REPLACE:
        a0 = a_play0()
        for d in range(DL):
            if s.hand[g, p, d] > 0:
                m[a0 + d] = True
                n += 1
                last = a0 + d
    elif ph == PH_TARGET:
        richer = T.ops[s.pend_card[g], s.pend_op[g], 0] == OP_DAMAGE_TARGET
        a0 = a_target0(DL)
        for off in range(1, P):
            q = (p + off) % P
            if s.alive[g, q] and (not richer or s.hp[g, q] > s.hp[g, p]):
                m[a0 + off - 1] = True
                n += 1
                last = a0 + off - 1
    elif ph == PH_MARKET:
        a0 = a_slot0(DL)
        for k in range(c[C_MARKET]):
            if s.market[g, k] >= 0:
                m[a0 + k] = True
                n += 1
                last = a0 + k
    elif ph == PH_GHOST:
        ap = a_pass(DL)
        m[ap] = True
        n += 1
        last = ap
        victim = False
        for q in range(P):
            if s.alive[g, q] and not s.acted[g, q]:
                victim = True
        if victim:
            a0 = a_shadow0(DL)
            for sd in range(s.shadow_hand.shape[2]):
                if s.shadow_hand[g, p, sd] > 0:
                    m[a0 + sd] = True
                    n += 1
                    last = a0 + sd
    elif ph == PH_GHOST_TARGET:
        a0 = a_target0(DL)
        for off in range(1, P):
            q = (p + off) % P
            if s.alive[g, q] and not s.acted[g, q]:
                m[a0 + off - 1] = True
                n += 1
                last = a0 + off - 1
    s.n_legal[g] = n
    return n, last


# ----------------------------------------------------------------------------------
# Applying one decision
# ----------------------------------------------------------------------------------
@njit(**JIT)
def apply_action(s, T, c, g, a):
    DL = T.value.shape[0]
    P = c[C_P]
    ph = s.phase[g]
    p = s.actor[g]
    if ph == PH_ACQUIRE:
        if a == A_DECK:
            draw_to_hand(s, g, p)
            s.acquired[g, p] = ACQ_DECK
        else:
            k = a - A_MARKET0
            to_hand(s, g, p, s.market[g, k])
            refill_slot(s, g, k)
            s.acquired[g, p] = ACQ_MARKET
        s.phase[g] = PH_PLAY
    elif ph == PH_PLAY:
        d = a - a_play0()
        from_hand(s, g, p, d)
        s.replaced[g] = False
        put_on_table(s, T, c, g, p, d, False)
    elif ph == PH_REPLACE:
        d = a - a_play0()
        from_hand(s, g, p, d)
        to_discard(s, g, s.played[g, p])
        s.replaced[g] = True
        put_on_table(s, T, c, g, p, d, True)  # a replacement is face-up
    elif ph == PH_TARGET:
        q = (p + a - a_target0(DL) + 1) % P
        d = s.pend_card[g]
        k = s.pend_op[g]
        code = T.ops[d, k, 0]
        if code == OP_DAMAGE_TARGET:
            op_damage_target(s, c, g, q, T.ops[d, k, 1])
        else:
            s.target[g, p] = q
        s.pend_op[g] = k + 1
        run_ops(s, T, c, g)
    elif ph == PH_MARKET:
        k = a - a_slot0(DL)
        d = s.pend_card[g]
        code = T.ops[d, s.pend_op[g], 0]
        if code == OP_MARKET_TAKE:
            op_market_take(s, g, p, k)
        else:
            op_market_discard(s, g, k)
        s.pend_op[g] += 1
        run_ops(s, T, c, g)
    elif ph == PH_GHOST:
        if a == a_pass(DL):
            end_turn(s, T, c, g)
        else:
            s.pend_shadow[g] = a - a_shadow0(DL)
            s.phase[g] = PH_GHOST_TARGET
    elif ph == PH_GHOST_TARGET:
        q = (p + a - a_target0(DL) + 1) % P
        sd = s.pend_shadow[g]
        s.shadow_hand[g, p, sd] -= 1
        s.shadow_n[g, p] -= 1
        i = s.attached_n[g, q]
        s.attached[g, q, i] = sd
        s.event[g] += 1
        s.attach_event[g, q, i] = s.event[g]
        s.attached_n[g, q] = i + 1
        s.pend_shadow[g] = -1
        end_turn(s, T, c, g)


# ----------------------------------------------------------------------------------
# Round resolution
# ----------------------------------------------------------------------------------
@njit(**JIT)
def damage_levels(score, compete, order, P, rule, tie_earliest, out):
    """R-8.2/R-7.6/R-7.7: mark in ``out`` who takes round damage."""
    for p in range(P):
        out[p] = 0
    any_c = False
    lo = 0
    hi = 0
    for p in range(P):
        if compete[p]:
            if not any_c or score[p] < lo:
                lo = score[p]
            if not any_c or score[p] > hi:
                hi = score[p]
            any_c = True
    if not any_c:
        return
    lvl1 = lo
    lvl2 = lo
    if rule == RULE_LOW_TIDE:
        lvl1 = hi
        lvl2 = hi
    elif rule == RULE_CULL:
        found = False
        for p in range(P):
            if compete[p] and score[p] > lo and (not found or score[p] < lvl2):
                lvl2 = score[p]
                found = True
    took1 = False
    took2 = False
    for i in range(P):
        p = order[i]
        if not compete[p]:
            continue
        if score[p] == lvl1:
            if not (tie_earliest and took1):
                out[p] = 1
            took1 = True
        elif score[p] == lvl2:
            if not (tie_earliest and took2):
                out[p] = 1
            took2 = True


@njit(**JIT)
def final_scores(s, T, c, g, score, with_shadows):
    """R-7.1: base value, Living effects in event order, Shadows in attach order, rule."""
    P = c[C_P]
    # The last competing player in this round's order (for "if_last").
    last_seat = -1
    for i in range(P):
        q = s.order[g, i]
        if s.alive[g, q] and s.played[g, q] >= 0:
            last_seat = q
    seats = np.empty(P, np.int64)
    n = 0
    for q in range(P):
        if s.played[g, q] >= 0:
            score[q] = T.value[s.played[g, q]]
            # insertion by play_event
            j = n
            while j > 0 and s.play_event[g, seats[j - 1]] > s.play_event[g, q]:
                seats[j] = seats[j - 1]
                j -= 1
            seats[j] = q
            n += 1
        else:
            score[q] = 0
    if s.rule[g] == RULE_EARTHQUAKE:
        return
    for i in range(n):
        q = seats[i]
        d = s.played[g, q]
        for k in range(T.nops[d]):
            code = T.ops[d, k, 0]
            if code == OP_SCORE_SELF:
                score[q] += op_score_self(s, c, g, q, T.ops[d, k, 1], T.ops[d, k, 2], T.ops[d, k, 3], last_seat)
            elif code == OP_SCORE_TARGET:
                t = s.target[g, q]
                if t >= 0:
                    score[t] += T.ops[d, k, 1]
            elif code == OP_SCORE_BOARD:
                for r in range(P):
                    if s.played[g, r] >= 0 and base_cond(T.ops[d, k, 2], T.ops[d, k, 3], T.value[s.played[g, r]]):
                        score[r] += T.ops[d, k, 1]
            elif code == OP_SET_SCORE:
                v = op_set_score(s, T, c, g, q, T.ops[d, k, 1])
                if v > -1000:
                    score[q] = v
    if not with_shadows:
        return
    for q in range(P):
        d = s.played[g, q]
        if d < 0:
            continue
        for i in range(s.attached_n[g, q]):
            sd = s.attached[g, q, i]
            for k in range(T.shadow_nops[sd]):
                code = T.shadow_ops[sd, k, 0]
                if code == OP_SHADOW_SCORE:
                    if base_cond(T.shadow_ops[sd, k, 2], T.shadow_ops[sd, k, 3], T.value[d]):
                        score[q] += T.shadow_ops[sd, k, 1]
                elif code == OP_SHADOW_TRIGGER:
                    if s.fired[g, q, i] and T.shadow_ops[sd, k, 1] == TK_SCORE:
                        score[q] += T.shadow_ops[sd, k, 2]


@njit(**JIT)
def resolve_round(s, T, c, g):
    P = c[C_P]
    # 1. Reveal face-down cards in turn order.
    for i in range(P):
        q = s.order[g, i]
        if s.played[g, q] >= 0 and s.face_down[g, q]:
            s.face_down[g, q] = False
            s.event[g] += 1
            s.play_event[g, q] = s.event[g]
            d = s.played[g, q]
            if s.alive[g, q]:  # a Ghost's face-down card is revealed but does nothing
                for k in range(T.nops[d]):
                    exec_when_played(s, T, c, g, q, d, k)
    # 2. Final scores of competing players.
    score = np.zeros(P, np.int64)
    compete = np.zeros(P, np.bool_)
    for q in range(P):
        compete[q] = s.alive[g, q] and s.played[g, q] >= 0
    final_scores(s, T, c, g, score, True)
    rule = s.rule[g]
    for q in range(P):
        s.last_score[g, q] = score[q]
        s.last_competed[g, q] = compete[q]
        s.last_damage[g, q] = 0
    s.last_rule[g] = rule
    if s.epilogue[g]:  # display only
        cleanup(s, T, c, g)
        finish(s, c, g)
        return
    # 3. Who takes damage.
    hit = np.zeros(P, np.int64)
    tie_earliest = c[C_TIE] == 1
    damage_levels(score, compete, s.order[g], P, rule, tie_earliest, hit)
    # Balance statistic: would the damage have landed elsewhere without Shadows?
    plain = np.zeros(P, np.int64)
    final_scores(s, T, c, g, plain, False)
    hit2 = np.zeros(P, np.int64)
    damage_levels(plain, compete, s.order[g], P, rule, tie_earliest, hit2)
    for q in range(P):
        if hit[q] != hit2[q]:
            s.shadow_swings[g] += 1
            break
    # 4. Deflection.
    dmg = np.zeros(P, np.int64)
    spent = np.zeros(P, np.bool_)
    for i in range(P):
        q = s.order[g, i]
        if hit[q] == 0:
            continue
        holder = q
        while True:
            d = s.played[g, holder]
            t = s.target[g, holder]
            if (d >= 0 and not spent[holder] and s.alive[g, holder] and t >= 0 and s.alive[g, t]
                    and has_op(T, d, OP_DEFLECT)):
                spent[holder] = True
                holder = t
            else:
                break
        dmg[holder] += 1
    # 5. Damage at once; deaths in turn order from the First Player.
    for q in range(P):
        h = s.hp[g, q] - dmg[q]
        s.hp[g, q] = h if h > 0 else 0
        s.last_damage[g, q] = dmg[q]
    died = np.zeros(P, np.bool_)
    fp = s.first_player[g]
    first_death = True
    for i in range(P):
        q = (fp + i) % P
        if s.alive[g, q] and s.hp[g, q] == 0:
            if first_death:
                s.elim_counter[g] += 1
                first_death = False
            die(s, c, g, q)
            died[q] = True
    # 6. Game end.
    nl = living_count(s, c, g)
    if nl <= 1:
        for q in range(P):
            s.winners[g, q] = s.alive[g, q] if nl == 1 else died[q]
        end_game(s, T, c, g)
        return
    # 7. First Player token.
    best = -1
    for i in range(P):
        q = s.order[g, i]
        if not compete[q]:
            continue
        if best < 0:
            best = q
        elif rule == RULE_LOW_TIDE:
            if score[q] < score[best]:
                best = q
        elif score[q] > score[best]:
            best = q
    if best < 0:
        best = fp
    for i in range(P):
        q = (best + i) % P
        if s.alive[g, q]:
            s.first_player[g] = q
            break
    # 8. Clean-up and Market refill; next round or the safety cap.
    cleanup(s, T, c, g)
    s.round[g] += 1
    if s.round[g] >= c[C_MAX_ROUNDS]:
        for q in range(P):
            s.winners[g, q] = s.alive[g, q]
        end_game(s, T, c, g)
        return
    begin_round(s, c, g)


# ----------------------------------------------------------------------------------
# Driving the engine
# ----------------------------------------------------------------------------------
@njit(**JIT)
def advance(s, T, c, g):
    """Run the game until a decision with two or more legal options, or its end (R-12.1)."""
    while True:
        ph = s.phase[g]
        if ph == PH_OVER:
            s.mask[g, :] = False
            s.n_legal[g] = 0
            return
        if ph == PH_TURN_START:
            turn_start(s, T, c, g)
            continue
        if ph == PH_RESOLVE:
            resolve_round(s, T, c, g)
            continue
        settle(s, g)
        n, last = fill_mask(s, T, c, g)
        if n >= 2:
            return
        if n == 1:
            apply_action(s, T, c, g, last)
        else:  # cannot happen: every decision offers an option; end the turn defensively
            end_turn(s, T, c, g)


@njit(**JIT)
def reset_game(s, T, c, g, seed32):
    """R-1.3: a new game from a 32-bit seed."""
    P = c[C_P]
    s.rng[g] = seed32 & 0xFFFFFFFF
    s.hp[g, :] = 0
    s.alive[g, :] = False
    s.hand[g] = 0
    s.hand_n[g, :] = 0
    s.shadow_hand[g] = 0
    s.shadow_n[g, :] = 0
    s.discard[g, :] = 0
    s.discard_n[g] = 0
    s.shadow_discard[g, :] = 0
    s.shadow_discard_n[g] = 0
    s.market[g, :] = -1
    s.played[g, :] = -1
    s.face_down[g, :] = False
    s.play_event[g, :] = 0
    s.target[g, :] = -1
    s.attached[g] = -1
    s.attached_n[g, :] = 0
    s.attach_event[g] = 0
    s.fired[g] = False
    s.acquired[g, :] = 0
    s.acted[g, :] = False
    s.rule[g] = 0
    s.event[g] = 0
    s.pend_card[g] = -1
    s.pend_op[g] = 0
    s.pend_shadow[g] = -1
    s.replaced[g] = False
    s.round[g] = 0
    s.done[g] = False
    s.ending[g] = False
    s.epilogue[g] = False
    s.elim[g, :] = -1
    s.elim_counter[g] = 0
    s.death_round[g, :] = -1
    s.winners[g, :] = False
    s.final_rewards[g, :] = 0.0
    s.step_rewards[g, :] = 0.0
    s.last_score[g, :] = 0
    s.last_damage[g, :] = 0
    s.last_competed[g, :] = False
    s.last_rule[g] = 0
    s.shadow_swings[g] = 0
    s.steps[g] = 0
    # Shuffle both decks: put every card in its discard, then reshuffle.
    for d in range(T.copies.shape[0]):
        s.discard[g, d] = T.copies[d]
        s.discard_n[g] += T.copies[d]
    for d in range(T.shadow_copies.shape[0]):
        s.shadow_discard[g, d] = T.shadow_copies[d]
        s.shadow_discard_n[g] += T.shadow_copies[d]
    s.deck[g, :] = -1
    s.shadow_deck[g, :] = -1
    reshuffle_living(s, g)
    reshuffle_shadow(s, g)
    for k in range(c[C_MARKET]):
        refill_slot(s, g, k)
    for p in range(P):
        s.hp[g, p] = c[C_HP]
        s.alive[g, p] = True
        for _ in range(c[C_HAND]):
            draw_to_hand(s, g, p)
    s.first_player[g] = rand_below(s, g, P)
    begin_round(s, c, g)
    advance(s, T, c, g)


@njit(cache=True, parallel=True)
def reset_batch(s, T, c, idx, seeds32):
    for i in prange(idx.shape[0]):
        reset_game(s, T, c, idx[i], seeds32[i])


@njit(cache=True)
def first_illegal(s, actions):
    """Index of the first game whose action is illegal, or -1 (R-12.2).

    ``-1`` means "no action for this game" and is always accepted; so is any action for a
    finished game (ignored).
    """
    NA = s.mask.shape[1]
    for g in range(actions.shape[0]):
        a = actions[g]
        if a == -1 or s.done[g]:
            continue
        if a < 0 or a >= NA or not s.mask[g, a]:
            return g
    return -1


@njit(**JIT)
def step_game(s, T, c, g, a):
    for p in range(s.step_rewards.shape[1]):
        s.step_rewards[g, p] = 0.0
    if a < 0 or s.done[g]:
        return
    s.steps[g] += 1
    apply_action(s, T, c, g, a)
    advance(s, T, c, g)


@njit(cache=True, parallel=True)
def step_batch(s, T, c, actions):
    for g in prange(actions.shape[0]):
        step_game(s, T, c, g, actions[g])


@njit(**JIT)
def random_legal(s, g, bench_rng, i):
    """A uniformly random legal action of game g, drawn with a separate RNG."""
    x = (int(bench_rng[i]) + 0x9E3779B9) & 0xFFFFFFFF
    bench_rng[i] = x
    z = ((x ^ (x >> 16)) * 0x85EBCA6B) & 0xFFFFFFFF
    z = ((z ^ (z >> 13)) * 0xC2B2AE35) & 0xFFFFFFFF
    z = z ^ (z >> 16)
    r = (z * s.n_legal[g]) >> 32
    m = s.mask[g]
    for a in range(m.shape[0]):
        if m[a]:
            if r == 0:
                return a
            r -= 1
    return -1


@njit(cache=True, parallel=True)
def random_play(s, T, c, steps_per_game, bench_rng):
    """Bench/fuzz loop: each game takes ``steps_per_game`` random legal decisions,
    starting a new game (seeded from ``bench_rng``) whenever one ends.
    Returns the number of games finished per row."""
    B = s.done.shape[0]
    finished = np.zeros(B, np.int64)
    for g in prange(B):
        for _ in range(steps_per_game):
            if s.done[g]:
                finished[g] += 1
                x = (int(bench_rng[g]) * 1103515245 + 12345) & 0xFFFFFFFF
                bench_rng[g] = x
                reset_game(s, T, c, g, x)
            a = random_legal(s, g, bench_rng, g)
            step_game(s, T, c, g, a)
    return finished
