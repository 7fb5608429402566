"""The rules of R.I.P. Market as numba kernels over the batched state.

Every function takes one game's record ``r`` (a row of the structured state array, a
view: writes change the game), the compiled card tables ``T`` (one record) and the
compiled rules config ``c`` (int64 array, see ``config.py``). Rule IDs (``R-x.y``) refer to
``docs/RULES.md``. With ``NUMBA_DISABLE_JIT=1`` everything runs as plain Python.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ripmarket_env.core.drivers import DRIVERS as DRIVER_NAMES
from ripmarket_env.core.drivers import drivers_once
from ripmarket_env.core.kernels import bench_u32, ev_push, first_illegal, random_legal, seat_after  # noqa: F401
from ripmarket_env.games.ripmarket.cards.registry import (
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
from ripmarket_env.games.ripmarket.config import (
    C_CAP,
    C_EPILOGUE,
    C_GHOST_FIRST,
    C_GRACE,
    C_HAND,
    C_HP,
    C_MARKET,
    C_MAX_ROUNDS,
    C_NO_SURVIVOR,
    C_DEFLECT,
    C_OPENING,
    C_TOKEN_TIE,
    C_P,
    C_REWARD,
    C_TIE,
)
from ripmarket_env.games.ripmarket.state import (
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

# _nrt=False: no reference counting of the array arguments and views (the kernels allocate
# nothing; their callers hold the arrays), about 10% of a step (docs/ARCHITECTURE.md, Speed).
JIT = dict(cache=True, nogil=True, _nrt=False)
try:
    from numba.core.config import DISABLE_JIT as _NO_JIT
except ImportError:  # pragma: no cover - older numba
    _NO_JIT = False

# ----------------------------------------------------------------------------------
# Event log: rows (kind, seat, a, b) of what each step did; events.py names the kinds
# (its EVENT_KINDS table lists these codes and what seat, a and b mean).
# ----------------------------------------------------------------------------------
EV_FORCED = 1
EV_ACQUIRE_DECK = 2
EV_ACQUIRE_MARKET = 3
EV_PLAY = 4
EV_REPLACE = 5
EV_TARGET = 6
EV_ATTACK = 7
EV_HIT = 8
EV_MARKET_TAKE = 9
EV_MARKET_DISCARD = 10
EV_MARKET_FLUSH = 11
EV_DRAW = 12
EV_RULE = 13
EV_EXORCISE = 14
EV_TRIGGER = 15
EV_DISCARD = 16
EV_SKIP = 17
EV_SHADOW_DRAW = 18
EV_PASS = 19
EV_HAUNT = 20
EV_REVEAL = 21
EV_SCORE = 22
EV_NO_SCORE = 23
EV_DEFLECT = 24
EV_DAMAGE = 25
EV_DEATH = 26
EV_FIRST_PLAYER = 27
EV_ROUND_START = 28
EV_RESOLVE = 29
EV_GAME_OVER = 30
EV_PLACE = 31
EV_SPARED = 32
EV_GRACE = 33

END_LAST_ALIVE = 0
END_ALL_DIED = 1
END_MAX_ROUNDS = 2

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


@njit(**JIT)
def ev_clear(r):
    """Start a new step's log (only the count is reset)."""
    r.ev_n = 0
    r.ev_round = r.round_num + (2 if r.epilogue else 1)


# ----------------------------------------------------------------------------------
# The game's own RNG: splitmix64 over a 64-bit state (uint64). Each draw adds
# the golden-ratio increment to the state and mixes it; ``rng_u32`` keeps the top 32 bits
# of the mix. Compiled, the uint64 arithmetic wraps; in plain Python
# (NUMBA_DISABLE_JIT=1) the same steps run on Python ints masked to 64 bits, so that
# numpy's scalar overflow checks never fire. Both give the same numbers (tests/test_nojit.py).
# Written once for every game in ripmarket_env/core/kernels.py.
# ----------------------------------------------------------------------------------
from ripmarket_env.core.kernels import rand_below, rng_u32  # noqa: E402,F401  (the game's own RNG)


# ----------------------------------------------------------------------------------
# Decks, hands, Market
# ----------------------------------------------------------------------------------
@njit(**JIT)
def shuffle_discard_into(r, deck, discard):
    """Move every card of ``discard`` (counts per design) into ``deck`` and shuffle it
    with the game's RNG; returns the new deck size."""
    n = 0
    for d in range(discard.shape[0]):
        for _ in range(discard[d]):
            deck[n] = d
            n += 1
        discard[d] = 0
    for i in range(n - 1, 0, -1):
        j = rand_below(r, i + 1)
        t = deck[i]
        deck[i] = deck[j]
        deck[j] = t
    return n


@njit(**JIT)
def reshuffle_living(r):
    r.deck_n = shuffle_discard_into(r, r.deck, r.discard)
    r.discard_n = 0


@njit(**JIT)
def reshuffle_shadow(r):
    r.shadow_deck_n = shuffle_discard_into(r, r.shadow_deck, r.shadow_discard)
    r.shadow_discard_n = 0


@njit(**JIT)
def draw_living(r):
    """Top card of the Living Deck (reshuffling the discard first if empty), or -1."""
    if r.deck_n == 0:
        if r.discard_n == 0:
            return -1
        reshuffle_living(r)
    n = r.deck_n - 1
    d = r.deck[n]
    r.deck[n] = -1
    r.deck_n = n
    return d


@njit(**JIT)
def draw_shadow(r):
    if r.shadow_deck_n == 0:
        if r.shadow_discard_n == 0:
            return -1
        reshuffle_shadow(r)
    n = r.shadow_deck_n - 1
    d = r.shadow_deck[n]
    r.shadow_deck[n] = -1
    r.shadow_deck_n = n
    return d


@njit(**JIT)
def settle(r):
    """R-10.1/R-10.3: an empty deck with a non-empty discard is reshuffled at once."""
    if r.deck_n == 0 and r.discard_n > 0:
        reshuffle_living(r)
    if r.shadow_deck_n == 0 and r.shadow_discard_n > 0:
        reshuffle_shadow(r)


@njit(**JIT)
def to_hand(r, p, d):
    r.hand[p, d] += 1
    r.hand_n[p] += 1


@njit(**JIT)
def from_hand(r, p, d):
    r.hand[p, d] -= 1
    r.hand_n[p] -= 1


@njit(**JIT)
def to_discard(r, d):
    r.discard[d] += 1
    r.discard_n += 1


@njit(**JIT)
def to_shadow_discard(r, d):
    r.shadow_discard[d] += 1
    r.shadow_discard_n += 1


@njit(**JIT)
def draw_to_hand(r, p):
    d = draw_living(r)
    if d >= 0:
        to_hand(r, p, d)
    return d


@njit(**JIT)
def draw_shadow_to_hand(r, p):
    d = draw_shadow(r)
    if d >= 0:
        r.shadow_hand[p, d] += 1
        r.shadow_n[p] += 1
        ev_push(r, EV_SHADOW_DRAW, p, d, 0)


@njit(**JIT)
def refill_slot(r, k):
    r.market[k] = draw_living(r)


@njit(**JIT)
def discard_random_from_hand(r, p):
    n = r.hand_n[p]
    if n == 0:
        return
    k = rand_below(r, n)
    for d in range(r.hand.shape[1]):
        n_d = r.hand[p, d]
        if k < n_d:
            from_hand(r, p, d)
            to_discard(r, d)
            ev_push(r, EV_DISCARD, p, d, 0)
            return
        k -= n_d


# ----------------------------------------------------------------------------------
# Seats
# ----------------------------------------------------------------------------------
@njit(**JIT)
def living_count(r, c):
    n = 0
    for p in range(c[C_P]):
        if r.alive[p]:
            n += 1
    return n


@njit(**JIT)
def die(r, c, p):
    """R-6.1: hand to the Living discard, draw 2 Shadow cards, become a Ghost."""
    for d in range(r.hand.shape[1]):
        k = r.hand[p, d]
        if k > 0:
            r.discard[d] += k
            r.discard_n += k
            r.hand[p, d] = 0
    r.hand_n[p] = 0
    r.hp[p] = 0
    r.alive[p] = False
    r.elim[p] = r.elim_counter
    r.death_round[p] = r.round_num
    ev_push(r, EV_DEATH, p, r.elim_counter, 0)
    draw_shadow_to_hand(r, p)
    draw_shadow_to_hand(r, p)


@njit(**JIT)
def lose_hp(r, c, p, amount):
    """Direct damage (R-6.3: never below 0). Returns True if the player died."""
    h = r.hp[p] - amount
    if h < 0:
        h = 0
    r.hp[p] = h
    if h == 0 and r.alive[p]:
        r.elim_counter += 1
        die(r, c, p)
        return True
    return False


# ----------------------------------------------------------------------------------
# Game end and rewards
# ----------------------------------------------------------------------------------
@njit(**JIT)
def place2(r, c, p, k):
    """Twice seat p's place (R-11.2: 1 = winner; ties share the average), k winners."""
    if r.winners[p]:
        return k + 1
    better = k
    tied = 0
    for q in range(c[C_P]):
        if r.winners[q]:
            continue
        if r.elim[q] > r.elim[p]:
            better += 1
        elif r.elim[q] == r.elim[p]:
            tied += 1
    return 2 * better + tied + 1


@njit(**JIT)
def compute_rewards(r, c):
    P = c[C_P]
    k = 0
    for p in range(P):
        if r.winners[p]:
            k += 1
    if c[C_REWARD] == 0:  # "win"
        for p in range(P):
            if k == P:
                r.final_rewards[p] = 0.0
            elif r.winners[p]:
                r.final_rewards[p] = (P - k) / (k * (P - 1.0))
            else:
                r.final_rewards[p] = -1.0 / (P - 1.0)
    else:  # "placement"
        for p in range(P):
            place = place2(r, c, p, k) / 2.0
            r.final_rewards[p] = 1.0 - 2.0 * (place - 1.0) / (P - 1.0)


@njit(**JIT)
def finish(r, c):
    settle(r)  # a deck emptied by the game's last step is reshuffled too
    r.done = True
    r.phase = PH_OVER
    for p in range(c[C_P]):
        r.step_rewards[p] = r.final_rewards[p]


@njit(**JIT)
def cleanup(r, T, c):
    """R-8.7: played cards to the discard, Shadows expire, round effects end."""
    P = c[C_P]
    for p in range(P):
        d = r.played[p]
        if d >= 0:
            to_discard(r, d)
        r.played[p] = -1
        r.face_down[p] = False
        r.target[p] = -1
        for i in range(r.attached_n[p]):
            to_shadow_discard(r, r.attached[p, i])
            r.attached[p, i] = -1
            r.fired[p, i] = False
        r.attached_n[p] = 0
        r.acquired[p] = 0
        r.took[p] = 0
        r.acq_card[p] = -1
        r.acted[p] = False
    r.rule = 0
    # slots that could not refill earlier refill now, lowest slot first.
    for k in range(c[C_MARKET]):
        if r.market[k] < 0:
            refill_slot(r, k)


@njit(**JIT)
def begin_round(r, c):
    """R-3.1/R-3.3: this round's turn order."""
    P = c[C_P]
    fp = r.first_player
    if c[C_GHOST_FIRST] == 1 or r.epilogue:
        i = 0
        for j in range(P):
            p = seat_after(fp, j, P)
            if not r.alive[p]:
                r.order[i] = p
                i += 1
        for j in range(P):
            p = seat_after(fp, j, P)
            if r.alive[p]:
                r.order[i] = p
                i += 1
    else:
        for j in range(P):
            r.order[j] = seat_after(fp, j, P)
    r.turn = 0
    r.rule = 0
    r.phase = PH_TURN_START
    ev_push(r, EV_ROUND_START, fp, r.round_num + (2 if r.epilogue else 1), 1 if r.epilogue else 0)


@njit(**JIT)
def end_game(r, T, c, why):
    """R-9: rewards from ``winners``; the 2-player epilogue round if enabled (R-9.4).
    ``why`` (END_*) is logged with the placements."""
    compute_rewards(r, c)
    P = c[C_P]
    k = 0
    for p in range(P):
        if r.winners[p]:
            k += 1
    ev_push(r, EV_GAME_OVER, -1, why, k)
    for p in range(P):
        ev_push(r, EV_PLACE, p, place2(r, c, p, k), 1 if r.winners[p] else 0)
    # only after a game that ended with one living winner (not a draw or co-winners)
    if c[C_EPILOGUE] == 1 and not r.epilogue and living_count(r, c) == 1:
        r.epilogue = True
        for p in range(c[C_P]):
            if r.alive[p]:
                r.first_player = p
        cleanup(r, T, c)
        begin_round(r, c)
        return
    finish(r, c)


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
def op_rule(r, p, rule):
    r.rule = rule  # the most recent rule change overwrites the slot
    ev_push(r, EV_RULE, p, rule, 0)


@njit(**JIT)
def op_draw(r, p, n):
    for _ in range(n):
        d = draw_to_hand(r, p)
        if d >= 0:
            r.took[p] = r.took[p] | ACQ_DECK  # a card taken from the Living Deck
            ev_push(r, EV_DRAW, p, d, 0)


@njit(**JIT)
def op_market_flush(r, c, p):
    ev_push(r, EV_MARKET_FLUSH, p, 0, 0)
    M = c[C_MARKET]
    for k in range(M):
        if r.market[k] >= 0:
            to_discard(r, r.market[k])
            r.market[k] = -1
    for k in range(M):
        refill_slot(r, k)


@njit(**JIT)
def op_market_discard(r, p, k):
    ev_push(r, EV_MARKET_DISCARD, p, r.market[k], k)
    to_discard(r, r.market[k])
    refill_slot(r, k)


@njit(**JIT)
def op_market_take(r, p, k):
    ev_push(r, EV_MARKET_TAKE, p, r.market[k], k)
    r.took[p] = r.took[p] | ACQ_MARKET  # a card taken from the Market
    to_hand(r, p, r.market[k])
    refill_slot(r, k)


@njit(**JIT)
def op_exorcise(r, p):
    for i in range(r.attached_n[p]):
        ev_push(r, EV_EXORCISE, p, r.attached[p, i], 0)
        to_shadow_discard(r, r.attached[p, i])
        r.attached[p, i] = -1
        r.fired[p, i] = False
    r.attached_n[p] = 0


@njit(**JIT)
def op_damage_target(r, c, q, amount):
    h = r.hp[q] - amount
    ev_push(r, EV_HIT, q, amount, h if h > 0 else 0)
    if lose_hp(r, c, q, amount) and living_count(r, c) <= 1:
        r.ending = True  # finish this turn, then the game ends


@njit(**JIT)
def op_score_self(r, c, p, amount, cond, arg, last_seat):
    if cond == SC_ALWAYS:
        return amount
    if cond == SC_PER_GHOST:
        return amount * (c[C_P] - living_count(r, c))
    if cond == SC_HAUNTED:
        return amount if r.attached_n[p] > 0 else 0
    if cond == SC_HP_AT_MOST:
        return amount if r.hp[p] <= arg else 0
    if cond == SC_LAST:
        return amount if p == last_seat else 0
    return 0


@njit(**JIT)
def op_set_score(r, T, c, p, source):
    """Returns the value to set, or -1000 when there is nothing to copy."""
    best = -1000
    for q in range(c[C_P]):
        if q != p and r.played[q] >= 0:
            v = T.value[r.played[q]]
            if v > best:
                best = v
    return best


@njit(**JIT)
def exec_when_played(r, T, c, p, d, k):
    """Primitives without a choice that act when the card is played (or revealed)."""
    code = T.ops[d, k, 0]
    if code == OP_RULE:
        op_rule(r, p, T.ops[d, k, 1])
    elif code == OP_DRAW:
        op_draw(r, p, T.ops[d, k, 1])
    elif code == OP_MARKET_FLUSH:
        op_market_flush(r, c, p)
    elif code == OP_EXORCISE:
        op_exorcise(r, p)
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
def end_turn(r, T, c):
    if r.ending:
        r.ending = False
        for p in range(c[C_P]):
            r.winners[p] = r.alive[p]
        end_game(r, T, c, END_LAST_ALIVE)
        return
    r.turn += 1
    r.phase = PH_TURN_START


@njit(**JIT)
def turn_start(r, T, c):
    P = c[C_P]
    if r.turn >= P:
        r.phase = PH_RESOLVE
        return
    p = r.order[r.turn]
    r.actor = p
    r.acted[p] = True
    if r.alive[p]:
        r.acquired[p] = 0
        r.took[p] = 0
        can_acquire = r.deck_n > 0 or r.discard_n > 0
        if not can_acquire:
            for k in range(c[C_MARKET]):
                if r.market[k] >= 0:
                    can_acquire = True
        if can_acquire:
            r.phase = PH_ACQUIRE
        elif r.hand_n[p] > 0:
            r.phase = PH_PLAY
        else:  # nothing to acquire and nothing to play
            ev_push(r, EV_SKIP, p, 0, 0)
            r.turn += 1
    else:
        if r.shadow_n[p] < c[C_CAP]:
            draw_shadow_to_hand(r, p)
        r.phase = PH_GHOST


@njit(**JIT)
def fire_shadow_triggers(r, T, c, p):
    """R-4.8: after the played card's own text, in attach order."""
    for i in range(r.attached_n[p]):
        sd = r.attached[p, i]
        for k in range(T.shadow_nops[sd]):
            if T.shadow_ops[sd, k, 0] != OP_SHADOW_TRIGGER:
                continue
            kind = T.shadow_ops[sd, k, 1]
            amount = T.shadow_ops[sd, k, 2]
            src = T.shadow_ops[sd, k, 3]
            # any card taken this turn from the source, by the acquisition or by
            # the played card's own text (draw, market_take), before the trigger fires
            hit = (src == TS_MARKET and (r.took[p] & ACQ_MARKET) != 0) or (
                src == TS_DECK and (r.took[p] & ACQ_DECK) != 0
            )
            if hit:
                r.fired[p, i] = True
                ev_push(r, EV_TRIGGER, p, sd, kind)
                if kind == TK_DISCARD:
                    for _ in range(amount):
                        discard_random_from_hand(r, p)


@njit(**JIT)
def finish_play(r, T, c):
    p = r.actor
    fire_shadow_triggers(r, T, c, p)
    r.pend_card = -1
    r.pend_op = 0
    r.replaced = False
    end_turn(r, T, c)


@njit(**JIT)
def target_ok(r, c, p, q, code):
    """May player p's pending choice primitive ``code`` name player q? A living other player;
    Backstab only one with more HP (R-2.17); a Deflection under deflect_target="not_weaker"
    only one with at least p's HP, under "stronger" only one with more (R-8.3)."""
    if not r.alive[q]:
        return False
    if code == OP_DAMAGE_TARGET:
        return r.hp[q] > r.hp[p]
    if code == OP_DEFLECT and c[C_DEFLECT] == 1:
        return r.hp[q] >= r.hp[p]
    if code == OP_DEFLECT and c[C_DEFLECT] == 2:
        return r.hp[q] > r.hp[p]
    return True


@njit(**JIT)
def any_target(r, c, p, code):
    P = c[C_P]
    for off in range(1, P):
        if target_ok(r, c, p, seat_after(p, off, P), code):
            return True
    return False


@njit(**JIT)
def any_market(r, c):
    for k in range(c[C_MARKET]):
        if r.market[k] >= 0:
            return True
    return False


@njit(**JIT)
def run_ops(r, T, c):
    """R-4.5: resolve the played card's primitives in order, stopping at a choice."""
    p = r.actor
    d = r.pend_card
    k = r.pend_op
    while k < T.nops[d]:
        code = T.ops[d, k, 0]
        if code == OP_SCORE_TARGET or code == OP_DEFLECT or code == OP_DAMAGE_TARGET:
            if any_target(r, c, p, code):
                r.pend_op = k
                r.phase = PH_TARGET
                return
        elif code == OP_MARKET_DISCARD or code == OP_MARKET_TAKE:
            if any_market(r, c):
                r.pend_op = k
                r.phase = PH_MARKET
                return
        elif code == OP_REPLACE:
            if not r.replaced and r.hand_n[p] > 0:
                r.pend_op = k
                r.phase = PH_REPLACE
                return
        else:
            exec_when_played(r, T, c, p, d, k)
        k += 1
    finish_play(r, T, c)


@njit(**JIT)
def put_on_table(r, T, c, p, d, replacement):
    if not replacement:  # a replacement is logged by apply_action
        ev_push(r, EV_PLAY, p, d, 1 if T.face_down[d] else 0)
    r.played[p] = d
    r.event += 1
    r.play_event[p] = r.event
    r.target[p] = -1
    if T.face_down[d]:  # a face-down card (a replacement too) waits for the reveal
        r.face_down[p] = True
        finish_play(r, T, c)
    else:
        r.face_down[p] = False
        r.pend_card = d
        r.pend_op = 0
        run_ops(r, T, c)


# ----------------------------------------------------------------------------------
# Legal actions (the mask is part of the state, recomputed at every decision)
# ----------------------------------------------------------------------------------
@njit(**JIT)
def _mark(m, a, legal, n, last):
    """Entry ``a`` of the mask set to ``legal``, without a branch on it: the count and the
    last legal action so far, updated."""
    m[a] = legal
    return n + np.int64(legal), max(last, a if legal else -1)


@njit(**JIT)
def fill_mask(r, T, c):
    """Write the legal-action mask of game g; returns (count, last legal action).

    Each entry of a loop is written, counted and taken as ``last`` without a branch on its
    own legality (a branch per entry mispredicts on masks that change from one decision to
    the next; docs/ARCHITECTURE.md, Speed)."""
    m = r.mask
    m[:] = False
    DL = T.value.shape[0]
    P = c[C_P]
    ph = r.phase
    p = r.actor
    n = 0
    last = -1
    if ph == PH_ACQUIRE:
        deck_ok = r.deck_n > 0 or r.discard_n > 0
        if deck_ok:
            m[A_DECK] = True
            n += 1
            last = A_DECK
        if r.hand_n[p] > 0 or not deck_ok:
            for k in range(c[C_MARKET]):
                n, last = _mark(m, A_MARKET0 + k, r.market[k] >= 0, n, last)
    elif ph == PH_PLAY or ph == PH_REPLACE:
        a0 = a_play0()
        for d in range(DL):  # without a branch on the hand: vectorized
            n, last = _mark(m, a0 + d, r.hand[p, d] > 0, n, last)
    elif ph == PH_TARGET:
        code = T.ops[r.pend_card, r.pend_op, 0]
        a0 = a_target0(DL)
        for off in range(1, P):
            n, last = _mark(m, a0 + off - 1, target_ok(r, c, p, seat_after(p, off, P), code), n, last)
    elif ph == PH_MARKET:
        a0 = a_slot0(DL)
        for k in range(c[C_MARKET]):
            n, last = _mark(m, a0 + k, r.market[k] >= 0, n, last)
    elif ph == PH_GHOST:
        ap = a_pass(DL)
        m[ap] = True
        n += 1
        last = ap
        victim = False  # without a branch per seat
        for q in range(P):
            victim = victim | (r.alive[q] & (not r.acted[q]))
        if victim:
            a0 = a_shadow0(DL)
            for sd in range(r.shadow_hand.shape[1]):
                n, last = _mark(m, a0 + sd, r.shadow_hand[p, sd] > 0, n, last)
    elif ph == PH_GHOST_TARGET:
        a0 = a_target0(DL)
        for off in range(1, P):
            q = seat_after(p, off, P)
            n, last = _mark(m, a0 + off - 1, r.alive[q] and not r.acted[q], n, last)
    r.n_legal = n
    return n, last


# ----------------------------------------------------------------------------------
# Applying one decision
# ----------------------------------------------------------------------------------
@njit(**JIT)
def apply_action(r, T, c, a):
    DL = T.value.shape[0]
    P = c[C_P]
    ph = r.phase
    p = r.actor
    if ph == PH_ACQUIRE:
        if a == A_DECK:
            d = draw_to_hand(r, p)
            ev_push(r, EV_ACQUIRE_DECK, p, d, 0)
            r.acquired[p] = ACQ_DECK
            r.took[p] = r.took[p] | ACQ_DECK
        else:
            k = a - A_MARKET0
            ev_push(r, EV_ACQUIRE_MARKET, p, r.market[k], k)
            r.acq_card[p] = r.market[k]  # public: everyone saw which card was taken
            to_hand(r, p, r.market[k])
            refill_slot(r, k)
            r.acquired[p] = ACQ_MARKET
            r.took[p] = r.took[p] | ACQ_MARKET
        r.phase = PH_PLAY
    elif ph == PH_PLAY:
        d = a - a_play0()
        from_hand(r, p, d)
        r.replaced = False
        put_on_table(r, T, c, p, d, False)
    elif ph == PH_REPLACE:
        d = a - a_play0()
        ev_push(r, EV_REPLACE, p, d, r.played[p])
        from_hand(r, p, d)
        to_discard(r, r.played[p])
        r.replaced = True
        put_on_table(r, T, c, p, d, True)  # face-down if the card says so
    elif ph == PH_TARGET:
        q = (p + a - a_target0(DL) + 1) % P
        d = r.pend_card
        k = r.pend_op
        code = T.ops[d, k, 0]
        if code == OP_DAMAGE_TARGET:
            ev_push(r, EV_ATTACK, p, q, d)
            op_damage_target(r, c, q, T.ops[d, k, 1])
        else:
            ev_push(r, EV_TARGET, p, q, d)
            r.target[p] = q
        r.pend_op = k + 1
        run_ops(r, T, c)
    elif ph == PH_MARKET:
        k = a - a_slot0(DL)
        d = r.pend_card
        code = T.ops[d, r.pend_op, 0]
        if code == OP_MARKET_TAKE:
            op_market_take(r, p, k)
        else:
            op_market_discard(r, p, k)
        r.pend_op += 1
        run_ops(r, T, c)
    elif ph == PH_GHOST:
        if a == a_pass(DL):
            ev_push(r, EV_PASS, p, 0, 0)
            end_turn(r, T, c)
        else:
            r.pend_shadow = a - a_shadow0(DL)
            r.phase = PH_GHOST_TARGET
    elif ph == PH_GHOST_TARGET:
        q = (p + a - a_target0(DL) + 1) % P
        sd = r.pend_shadow
        ev_push(r, EV_HAUNT, p, q, sd)
        r.shadow_hand[p, sd] -= 1
        r.shadow_n[p] -= 1
        i = r.attached_n[q]
        r.attached[q, i] = sd
        r.event += 1
        r.attach_event[q, i] = r.event
        r.attached_n[q] = i + 1
        r.pend_shadow = -1
        end_turn(r, T, c)


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
def final_scores(r, T, c, score, seats):
    """R-7.1: base value and Living effects in event order (the Shadows, in attach order,
    are ``shadow_scores``: the round's scores without them are a balance statistic)."""
    P = c[C_P]
    # The last seat in this round's order with a card on the table (for "if_last").
    last_seat = -1
    for i in range(P):
        q = r.order[i]
        if r.played[q] >= 0:  # if_last: no later seat in the order played a card
            last_seat = q
    n = 0
    for q in range(P):
        if r.played[q] >= 0:
            score[q] = T.value[r.played[q]]
            # insertion by play_event
            j = n
            while j > 0 and r.play_event[seats[j - 1]] > r.play_event[q]:
                seats[j] = seats[j - 1]
                j -= 1
            seats[j] = q
            n += 1
        else:
            score[q] = 0
    if r.rule == RULE_EARTHQUAKE:
        return
    for i in range(n):
        q = seats[i]
        d = r.played[q]
        for k in range(T.nops[d]):
            code = T.ops[d, k, 0]
            if code == OP_SCORE_SELF:
                score[q] += op_score_self(r, c, q, T.ops[d, k, 1], T.ops[d, k, 2], T.ops[d, k, 3], last_seat)
            elif code == OP_SCORE_TARGET:
                t = r.target[q]
                if t >= 0 and r.played[t] >= 0:  # a target with no card is unaffected
                    score[t] += T.ops[d, k, 1]
            elif code == OP_SCORE_BOARD:
                for x in range(P):
                    if r.played[x] >= 0 and base_cond(T.ops[d, k, 2], T.ops[d, k, 3], T.value[r.played[x]]):
                        score[x] += T.ops[d, k, 1]
            elif code == OP_SET_SCORE:
                v = op_set_score(r, T, c, q, T.ops[d, k, 1])
                if v > -1000:
                    score[q] = v


@njit(**JIT)
def shadow_scores(r, T, c, score):
    """R-7.1: the attached Shadows' score changes, in attach order."""
    if r.rule == RULE_EARTHQUAKE:  # base values only
        return
    P = c[C_P]
    for q in range(P):
        d = r.played[q]
        if d < 0:
            continue
        for i in range(r.attached_n[q]):
            sd = r.attached[q, i]
            for k in range(T.shadow_nops[sd]):
                code = T.shadow_ops[sd, k, 0]
                if code == OP_SHADOW_SCORE:
                    if base_cond(T.shadow_ops[sd, k, 2], T.shadow_ops[sd, k, 3], T.value[d]):
                        score[q] += T.shadow_ops[sd, k, 1]
                elif code == OP_SHADOW_TRIGGER:
                    if r.fired[q, i] and T.shadow_ops[sd, k, 1] == TK_SCORE:
                        score[q] += T.shadow_ops[sd, k, 2]


@njit(**JIT)
def resolve_round(r, T, c):
    P = c[C_P]
    ev_push(r, EV_RESOLVE, -1, r.round_num + (2 if r.epilogue else 1), 1 if r.epilogue else 0)
    # 1. Reveal face-down cards in turn order.
    for i in range(P):
        q = r.order[i]
        if r.played[q] >= 0 and r.face_down[q]:
            r.face_down[q] = False
            r.event += 1
            r.play_event[q] = r.event
            d = r.played[q]
            ev_push(r, EV_REVEAL, q, d, 1 if r.alive[q] else 0)
            if r.alive[q]:  # a Ghost's face-down card is revealed but does nothing
                for k in range(T.nops[d]):
                    exec_when_played(r, T, c, q, d, k)
    # 2. Final scores of competing players. Scratch rows live in the record (no allocation).
    W = r.work
    W[:] = 0
    score = W[0]
    compete = W[1]
    hit = W[2]
    dmg = W[5]
    spent = W[6]
    died = W[7]
    seats = W[8]
    any_shadow = False
    for q in range(P):
        compete[q] = 1 if (r.alive[q] and r.played[q] >= 0) else 0
        if r.attached_n[q] > 0:
            any_shadow = True
    # The scores without Shadows (a balance statistic, below) are the scores before them.
    final_scores(r, T, c, score, seats)
    plain = W[3]
    if any_shadow:
        for q in range(P):
            plain[q] = score[q]
    shadow_scores(r, T, c, score)
    rule = r.rule
    for q in range(P):
        r.last_score[q] = score[q]
        r.last_competed[q] = compete[q]
        r.last_damage[q] = 0
        if compete[q]:
            ev_push(r, EV_SCORE, q, r.played[q], score[q])
        elif r.played[q] >= 0:
            ev_push(r, EV_NO_SCORE, q, r.played[q], 0)
    r.last_rule = rule
    if r.epilogue:  # display only
        cleanup(r, T, c)
        finish(r, c)
        return
    # 3. Who takes damage.
    tie_earliest = c[C_TIE] == 1
    damage_levels(score, compete, r.order, P, rule, tie_earliest, hit)
    # Balance statistic: would the damage have landed elsewhere without Shadows?
    if any_shadow:
        hit2 = W[4]
        damage_levels(plain, compete, r.order, P, rule, tie_earliest, hit2)
        for q in range(P):
            if hit[q] != hit2[q]:
                r.shadow_swings += 1
                break
    # grace round (default): the first round deals no round damage, so nothing is
    # redirected either; card damage (Backstab, R-2.17) was dealt when played.
    if c[C_GRACE] == 1 and r.round_num == 0:
        graced = 0
        for q in range(P):
            graced += hit[q]
            hit[q] = 0
        ev_push(r, EV_GRACE, -1, graced, 0)
    # 4. Deflection; under Earthquake no damage is redirected.
    quake = rule == RULE_EARTHQUAKE
    for i in range(P):
        q = r.order[i]
        if hit[q] == 0:
            continue
        holder = q
        while not quake:
            d = r.played[holder]
            t = r.target[holder]
            if (d >= 0 and not spent[holder] and r.alive[holder] and t >= 0 and r.alive[t]
                    and has_op(T, d, OP_DEFLECT)):
                spent[holder] = 1
                ev_push(r, EV_DEFLECT, holder, t, 0)
                holder = t
            else:
                break
        dmg[holder] += 1
    # sudden death (default): damage that would leave nobody alive is not dealt.
    if c[C_NO_SURVIVOR] == 0:
        spared = 0
        survivor = False
        for q in range(P):
            if r.alive[q]:
                if r.hp[q] - dmg[q] > 0:
                    survivor = True
                else:
                    spared += 1
        if not survivor and spared > 0:
            for q in range(P):
                dmg[q] = 0
            r.spared_rounds += 1
            ev_push(r, EV_SPARED, -1, spared, 0)
    # 5. Damage at once; deaths in turn order from the First Player.
    for q in range(P):
        h = r.hp[q] - dmg[q]
        r.hp[q] = h if h > 0 else 0
        r.last_damage[q] = dmg[q]
        if dmg[q] > 0:
            ev_push(r, EV_DAMAGE, q, dmg[q], r.hp[q])
    fp = r.first_player
    first_death = True
    for i in range(P):
        q = seat_after(fp, i, P)
        if r.alive[q] and r.hp[q] == 0:
            if first_death:
                r.elim_counter += 1
                first_death = False
            die(r, c, q)
            died[q] = 1
    # 6. Game end (R-9.1, R-9.2; nobody left alive only with no_survivor="share_win").
    nl = living_count(r, c)
    if nl <= 1:
        for q in range(P):
            r.winners[q] = r.alive[q] if nl == 1 else (died[q] == 1)
        end_game(r, T, c, END_LAST_ALIVE if nl == 1 else END_ALL_DIED)
        return
    # 7. First Player token; a tie goes to the earliest (or, variant token_tie,
    # the latest) of the tied players in this round's turn order.
    best = -1
    late = c[C_TOKEN_TIE] == 1
    for i in range(P):
        q = r.order[i]
        if not compete[q]:
            continue
        if best < 0:
            best = q
        elif rule == RULE_LOW_TIDE:
            if score[q] < score[best] or (late and score[q] == score[best]):
                best = q
        elif score[q] > score[best] or (late and score[q] == score[best]):
            best = q
    if best < 0:
        best = fp
    for i in range(P):
        q = seat_after(best, i, P)
        if r.alive[q]:
            r.first_player = q
            ev_push(r, EV_FIRST_PLAYER, q, 0, 0)
            break
    # 8. Clean-up and Market refill; next round or the safety cap.
    cleanup(r, T, c)
    r.round_num += 1
    if r.round_num >= c[C_MAX_ROUNDS]:
        for q in range(P):
            r.winners[q] = r.alive[q]
        end_game(r, T, c, END_MAX_ROUNDS)
        return
    begin_round(r, c)


# ----------------------------------------------------------------------------------
# Driving the engine
# ----------------------------------------------------------------------------------
@njit(**JIT)
def hidden_forced(r):
    """R-12.1: a decision whose one legal option only the deciding seat's hidden cards make
    single: playing (or replacing with) a card from a hand of two or more cards, all of one
    design. The seat is asked all the same; every other decision with one option follows
    from public facts (deck and Market contents, hand and Shadow-hand sizes, HP, who has
    acted) and the engine takes it."""
    ph = r.phase
    return (ph == PH_PLAY or ph == PH_REPLACE) and r.hand_n[r.actor] >= 2


@njit(**JIT)
def advance(r, T, c):
    """Run the game until a decision with two or more legal options, a decision that only
    the seat's hidden cards made single (``hidden_forced``), or the game's end (R-12.1)."""
    while True:
        ph = r.phase
        if ph == PH_OVER:
            r.mask[:] = False
            r.n_legal = 0
            return
        if ph == PH_TURN_START:
            turn_start(r, T, c)
            continue
        if ph == PH_RESOLVE:
            resolve_round(r, T, c)
            continue
        settle(r)
        n, last = fill_mask(r, T, c)
        if n >= 2 or (n == 1 and hidden_forced(r)):
            return
        if n == 1:
            ev_push(r, EV_FORCED, r.actor, last, 0)
            apply_action(r, T, c, last)
        else:  # cannot happen: every decision offers an option; end the turn defensively
            end_turn(r, T, c)


@njit(**JIT)
def reset_game(r, T, c, seed64):
    """R-1.3: a new game; ``seed64`` (a 64-bit game seed, see ``core.seed_to_u64``) is
    the RNG's first state (R-12.4)."""
    P = c[C_P]
    r.rng = seed64
    r.hp[:] = 0
    r.alive[:] = False
    r.hand[:] = 0
    r.hand_n[:] = 0
    r.shadow_hand[:] = 0
    r.shadow_n[:] = 0
    r.discard[:] = 0
    r.discard_n = 0
    r.shadow_discard[:] = 0
    r.shadow_discard_n = 0
    r.market[:] = -1
    r.played[:] = -1
    r.face_down[:] = False
    r.play_event[:] = 0
    r.target[:] = -1
    r.attached[:] = -1
    r.attached_n[:] = 0
    r.attach_event[:] = 0
    r.fired[:] = False
    r.acquired[:] = 0
    r.took[:] = 0
    r.acq_card[:] = -1
    r.acted[:] = False
    r.rule = 0
    r.event = 0
    r.pend_card = -1
    r.pend_op = 0
    r.pend_shadow = -1
    r.replaced = False
    r.round_num = 0
    r.done = False
    r.ending = False
    r.epilogue = False
    r.elim[:] = -1
    r.elim_counter = 0
    r.death_round[:] = -1
    r.winners[:] = False
    r.final_rewards[:] = 0.0
    r.step_rewards[:] = 0.0
    r.last_score[:] = 0
    r.last_damage[:] = 0
    r.last_competed[:] = False
    r.last_rule = 0
    r.shadow_swings = 0
    r.spared_rounds = 0
    r.steps = 0
    r.ev[:] = 0  # a fresh game's state is byte-identical whatever the row held before
    r.ev_n = 0
    r.ev_round = 1
    r.ev_lost = 0
    # Shuffle both decks: put every card in its discard, then reshuffle.
    for d in range(T.copies.shape[0]):
        r.discard[d] = T.copies[d]
        r.discard_n += T.copies[d]
    for d in range(T.shadow_copies.shape[0]):
        r.shadow_discard[d] = T.shadow_copies[d]
        r.shadow_discard_n += T.shadow_copies[d]
    r.deck[:] = -1
    r.shadow_deck[:] = -1
    reshuffle_living(r)
    reshuffle_shadow(r)
    for k in range(c[C_MARKET]):
        refill_slot(r, k)
    for p in range(P):
        r.hp[p] = c[C_HP]
        r.alive[p] = True
        for _ in range(c[C_HAND]):
            draw_to_hand(r, p)
    r.first_player = rand_below(r, P)
    opening = c[C_OPENING]  # one more card for the first seats of the first round
    extra = 1 if opening == 1 else P // 2 if opening == 2 else 0
    for i in range(extra):
        draw_to_hand(r, (r.first_player + i) % P)
    begin_round(r, c)
    advance(r, T, c)


@njit(**JIT)
def step_game(r, T, c, a):
    for p in range(r.step_rewards.shape[0]):
        r.step_rewards[p] = 0.0
    if a < 0 or r.done:  # a skipped or finished game is unchanged, its log included
        return
    ev_clear(r)
    r.steps += 1
    apply_action(r, T, c, a)
    advance(r, T, c)


@njit(**JIT)
def seat_bits(r, c):
    """Bit p set when seat p is a Ghost (the AEC env's ``is_ghost`` infos)."""
    ghosts = 0
    for p in range(c[C_P]):
        if not r.alive[p]:
            ghosts |= 1 << p
    return ghosts


@njit(cache=True)
def restart_round(S, TB, c, g, first):
    """Start a fresh round of game g with ``first`` as First Player (hand-built states)."""
    r = S[g]
    r.first_player = first
    ev_clear(r)
    begin_round(r, c)
    advance(r, TB[0], c)


# ----------------------------------------------------------------------------------
# The batch drivers (written once in ripmarket_env/core/drivers.py)
# ----------------------------------------------------------------------------------
_DRIVERS: dict = {}


def drivers_for(state_dtype=None, tables_dtype=None):
    """The core's batch drivers over these kernels for one state layout (default: the
    packaged cards'; a custom card database has its own), built once per layout."""
    if state_dtype is None:
        from ripmarket_env.games.ripmarket.cards.loader import default_cards
        from ripmarket_env.games.ripmarket.state import state_dtype as _sdt, tables_from_db

        db = default_cards()
        state_dtype, tables_dtype = _sdt(db), tables_from_db(db).dtype
    return drivers_once(_DRIVERS, drivers_for, state_dtype, tables_dtype, _kernels)


def _kernels():
    from ripmarket_env.games.ripmarket.observation import encode_obs

    return reset_game, step_game, encode_obs, seat_bits


def __getattr__(name):
    """The drivers of the packaged cards by their kernel names (``random_play`` ...)."""
    if name in DRIVER_NAMES:
        return getattr(drivers_for(), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
