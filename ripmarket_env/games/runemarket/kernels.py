"""The rules of The Rune Market as numba kernels over the batched state.

Every function takes one game's record ``r`` (a view into the state array), the card
tables ``T`` (one record: copies and values per design) and the compiled rules config
``c`` (int64 array, ``config.py``). Rule IDs (``RM-x.y``) refer to
``docs/games/rune-market/RULES.md``. The per-row entry points are the ones every game of
the zoo exposes: ``reset_game(r, T, c, seed64)``, ``step_game(r, T, c, a)`` and
(``observation.py``) ``encode_obs(r, T, c, viewer, offs, out)``. With
``NUMBA_DISABLE_JIT=1`` everything runs as plain Python and plays the same games.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ripmarket_env.core.drivers import drivers_once
from ripmarket_env.core.kernels import ev_push, first_illegal, seat_after  # noqa: F401

try:
    from numba.core.config import DISABLE_JIT as _NO_JIT
except ImportError:  # pragma: no cover
    _NO_JIT = False
from ripmarket_env.games.runemarket.config import (
    C_ASK_DEFEND,
    C_DIVERT,
    C_EXACT,
    C_HAND,
    C_MAX_TURNS,
    C_MKT,
    C_NUMBER_COST,
    C_P,
    C_REMOVAL,
    C_REWARD,
    C_RUNE_COST,
    C_TIE_TURNS,
)
from ripmarket_env.games.runemarket.state import (
    I_ATTACK,
    I_BANDIT_NUM,
    I_BANDIT_RUNES,
    I_BOAT_NUM,
    I_BOAT_RUNES,
    I_DOUBLE,
    I_NONE,
    I_PAY_BLUE,
    I_PAY_RED,
    I_RUNE_BLUE,
    I_RUNE_RED,
    I_THEFT,
    PH_CHOOSE_CARD,
    PH_CHOOSE_OPP,
    PH_CHOOSE_SHELTER,
    PH_CHOOSE_STEAL,
    PH_DEFEND,
    PH_HAND,
    PH_OVER,
    PH_PAYMENT,
    PH_RUNE_BUY,
    PH_START,
    PH_TURN_START,
)

# _nrt=False: no reference counting of the array arguments and views (the kernels allocate
# nothing; their callers hold the arrays), about 10% of a step (docs/ARCHITECTURE.md, Speed).
JIT = dict(cache=True, nogil=True, _nrt=False)

# ---------------------------------------------------------------------------------- actions
A_DONE = 0
A_DISCARD_SHELTER = 1  # + colour
A_RUNE_BOAT = 3
A_RUNE_BANDIT = 5
A_SHELTER_TABLE = 7
A_SHELTER_DISCARD = 9
A_THEFT = 11
A_ATTACK = 12
A_BUY_RUNE = 13
A_NUMBER_BOAT = 15
A_NUMBER_BANDIT = 16
A_PAY_BANDIT = 17
A_NUMBER = 19  # + value - 1
A_NO_BLOCK = 29
A_OPPONENT = 30  # + offset - 1
A_STEAL = 35  # + 0 Red Rune, 1 Blue Rune, 2 hand card
A_SHELTER = 38  # + 2 * offset + colour

D_THEFT = 10
D_SHELTER = 11  # + colour

# ---------------------------------------------------------------------------------- events
EV_FORCED = 1
EV_FIRST = 2
EV_TURN = 3
EV_INTEREST = 4
EV_INTEREST_BLOCKED = 5
EV_DISCARD_SHELTER = 6
EV_BUY_RUNES = 7
EV_PLACE_BOAT = 8
EV_PLACE_BANDIT = 9
EV_PLAY_SHELTER = 10
EV_PLAY_THEFT = 11
EV_ATTACK = 12
EV_VICTIM = 13
EV_BLOCK = 14
EV_NO_BLOCK = 15
EV_STEAL_RUNE = 16
EV_STEAL_CARD = 17
EV_FIZZLE = 18
EV_BEGIN_BUY = 19
EV_PAY = 20
EV_RUNE_BOUGHT = 21
EV_NUMBER_BOUGHT = 22
EV_PAY_BANDIT = 23
EV_BANDIT_REMOVED = 24
EV_DRAW = 25
EV_RESHUFFLE = 26
EV_END_TURN = 27
EV_GAME_OVER = 28
EV_RESULT = 29
EV_BOAT_BACK = 30

END_MARKET_EMPTY = 0
END_MAX_TURNS = 1


# ---------------------------------------------------------------------------------- RNG (RM-8.3)
# splitmix64 over a 64-bit state (uint64), as every game of the zoo: each draw adds the
# golden-ratio increment and mixes; ``rng_u32`` keeps the top 32 bits of the mix. In plain
# Python (NUMBA_DISABLE_JIT=1) the same steps run on Python ints masked to 64 bits.
from ripmarket_env.core.kernels import rand_below, rng_u32  # noqa: E402,F401  (the game's own RNG)


# ---------------------------------------------------------------------------------- cards (RM-3.7)
@njit(**JIT)
def reshuffle(r):
    """The discard pile becomes the shuffled draw pile (RM-3.7)."""
    n = 0
    for d in range(r.discard.shape[0]):
        for _ in range(r.discard[d]):
            r.deck[n] = d
            n += 1
        r.discard[d] = 0
    r.discard_n = 0
    for i in range(n - 1, 0, -1):
        j = rand_below(r, i + 1)
        t = r.deck[i]
        r.deck[i] = r.deck[j]
        r.deck[j] = t
    r.deck_n = n
    return n


@njit(**JIT)
def draw_card(r, p):
    """Seat p draws the top card (the discard reshuffled first if the pile is empty);
    False when both are empty."""
    if r.deck_n == 0:
        if r.discard_n == 0:
            return False
        n = reshuffle(r)
        ev_push(r, EV_RESHUFFLE, -1, n, 0)
    r.deck_n -= 1
    d = r.deck[r.deck_n]
    r.deck[r.deck_n] = -1
    r.hand[p, d] += 1
    r.hand_n[p] += 1
    ev_push(r, EV_DRAW, p, d, 0)
    return True


@njit(**JIT)
def discard_from_hand(r, p, d):
    r.hand[p, d] -= 1
    r.hand_n[p] -= 1
    r.discard[d] += 1
    r.discard_n += 1


@njit(**JIT)
def number_total(r, p):
    s = 0
    for d in range(10):
        s += int(r.hand[p, d]) * (d + 1)
    return s


@njit(**JIT)
def subset_bits(r, p, skip):
    """Bit s set: some of seat p's Number cards (one card of value ``skip`` left out, 0 for
    none) sum to s, for s <= 15."""
    bits = 1
    for d in range(10):
        k = r.hand[p, d]
        if d + 1 == skip:
            k -= 1
        for _ in range(k):
            bits = (bits | (bits << (d + 1))) & 0xFFFF
    return bits


@njit(**JIT)
def is_rune_total(c, s):
    if c[C_EXACT]:
        return s == 5 or s == 10 or s == 15
    return s >= 5


@njit(**JIT)
def can_buy_rune(r, c, p):
    """RM-4.4: some of p's Number cards make an exact 5, 10 or 15 (or, variant, 5 or more)."""
    if c[C_EXACT]:
        b = subset_bits(r, p, 0)
        return (b & ((1 << 5) | (1 << 10) | (1 << 15))) != 0
    return number_total(r, p) >= 5


@njit(**JIT)
def payment_ok(r, c, p, v):
    """RM-4.4: adding the Number card of value v to the Rune purchase keeps an exact total
    reachable with the cards left."""
    if r.hand[p, v - 1] == 0:
        return False
    if not c[C_EXACT]:
        return True
    s = int(r.pay_sum) + v
    if s == 5 or s == 10 or s == 15:
        return True
    if s > 15:
        return False
    b = subset_bits(r, p, v)
    for t in (5, 10, 15):
        if t > s and (b >> (t - s)) & 1:
            return True
    return False


# ---------------------------------------------------------------------------------- Runes (RM-2)
@njit(**JIT)
def open_shelter(r, p, col):
    """Seat p has an unlocked Shelter of colour col."""
    return r.shelter[p, col] != 0 and r.bandit[p, col] < 0


@njit(**JIT)
def gain_rune(r, p, col, n):
    """RM-2.2: a gained Rune goes into the unlocked Shelter of its colour, else stays loose."""
    if open_shelter(r, p, col):
        r.inside[p, col] += n
    else:
        r.loose[p, col] += n


@njit(**JIT)
def settle_runes(r, p, col):
    """RM-2.2: loose Runes move inside as soon as an unlocked Shelter of their colour exists."""
    if open_shelter(r, p, col) and r.loose[p, col] > 0:
        r.inside[p, col] += r.loose[p, col]
        r.loose[p, col] = 0


@njit(**JIT)
def free_runes(r, p, col):
    """Runes of colour col seat p may spend or lose (not frozen by a Bandit, RM-6.2)."""
    n = r.loose[p, col]
    if r.bandit[p, col] < 0:
        n += r.inside[p, col]
    return n


@njit(**JIT)
def take_rune(r, p, col):
    """Remove one free Rune of colour col from seat p (loose first)."""
    if r.loose[p, col] > 0:
        r.loose[p, col] -= 1
    else:
        r.inside[p, col] -= 1


@njit(**JIT)
def score(r, p):
    return r.loose[p, 0] + r.loose[p, 1] + r.inside[p, 0] + r.inside[p, 1]


@njit(**JIT)
def has_loot(r, q):
    return free_runes(r, q, 0) > 0 or free_runes(r, q, 1) > 0 or r.hand_n[q] > 0


@njit(**JIT)
def own_boat_spot(r, p):
    return (r.shelter[p, 0] != 0 and r.boat[p, 0] == 0) or (r.shelter[p, 1] != 0 and r.boat[p, 1] == 0)


@njit(**JIT)
def bandit_spot(r, c, p):
    """RM-6.1: an opponent's Shelter without a Bandit exists."""
    P = c[C_P]
    for k in range(1, P):
        q = seat_after(p, k, P)
        for col in range(2):
            if r.shelter[q, col] != 0 and r.bandit[q, col] < 0:
                return True
    return False


@njit(**JIT)
def remove_bandit(r, q, col):
    """RM-6.6: the Bandit leaves the game; the Shelter unlocks."""
    owner = r.bandit[q, col]
    r.bandit[q, col] = -1
    r.bandit_paid[q, col] = 0
    r.removed_bandits += 1
    ev_push(r, EV_BANDIT_REMOVED, q, col, owner)
    settle_runes(r, q, col)


@njit(**JIT)
def remove_shelter(r, p, col):
    """RM-2.5: a Shelter leaves the table: its Runes stay loose with the owner, its Boat
    Shelter returns to the Market, its Bandit leaves the game."""
    r.shelter[p, col] = 0
    if r.bandit[p, col] >= 0:
        remove_bandit(r, p, col)
    r.loose[p, col] += r.inside[p, col]
    r.inside[p, col] = 0
    if r.boat[p, col]:
        r.boat[p, col] = 0
        r.market_boats += 1
        ev_push(r, EV_BOAT_BACK, p, col, 0)
    r.discard[D_SHELTER + col] += 1
    r.discard_n += 1


# ---------------------------------------------------------------------------------- the end (RM-7)
@njit(**JIT)
def better(r, c, a, b):
    """Seat a ranks strictly above seat b (RM-7.2)."""
    sa = score(r, a)
    sb = score(r, b)
    if sa != sb:
        return sa > sb
    if c[C_TIE_TURNS]:
        return r.turns[a] < r.turns[b]
    return False


@njit(**JIT)
def end_game(r, c, reason):
    """RM-7.1/RM-7.2/RM-7.4: winners, rewards (paid once, on this step), the log."""
    P = c[C_P]
    k = 0
    for q in range(P):
        top = True
        for o in range(P):
            if o != q and better(r, c, o, q):
                top = False
        r.winners[q] = top
        if top:
            k += 1
    for q in range(P):
        if c[C_REWARD] == 0:
            if k == P:
                rew = 0.0
            elif r.winners[q]:
                rew = (P - k) / (k * (P - 1.0))
            else:
                rew = -1.0 / (P - 1.0)
        else:
            above = 0
            equal = 0
            for o in range(P):
                if better(r, c, o, q):
                    above += 1
                elif not better(r, c, q, o):
                    equal += 1
            pos = above + (equal - 1) / 2.0
            rew = 1.0 - 2.0 * pos / (P - 1.0)
        r.final_rewards[q] = rew
        r.step_rewards[q] = rew
    r.done = True
    r.end_reason = reason
    r.phase = PH_OVER
    r.intent = I_NONE
    r.other = -1
    ev_push(r, EV_GAME_OVER, -1, reason, k)
    for q in range(P):
        ev_push(r, EV_RESULT, q, score(r, q), 1 if r.winners[q] else 0)


@njit(**JIT)
def market_empty(r):
    return r.market[0] == 0 and r.market[1] == 0


# ---------------------------------------------------------------------------------- the turn (RM-3)
@njit(**JIT)
def turn_start(r, c):
    """RM-3.2: a new turn; interest from the Red, then the Blue Shelter."""
    p = r.turn_player
    if r.total_turns >= c[C_MAX_TURNS]:
        end_game(r, c, END_MAX_TURNS)  # RM-7.3
        return
    r.turns[p] += 1
    r.total_turns += 1
    r.attacked[:] = 0
    r.played = 0
    r.stage = 1
    r.intent = I_NONE
    r.other = -1
    r.actor = p
    ev_push(r, EV_TURN, p, r.turns[p], r.total_turns)
    for col in range(2):
        if r.shelter[p, col] != 0 and r.inside[p, col] >= 1:
            amt = 2 if r.boat[p, col] else 1
            if amt > r.market[col]:
                amt = r.market[col]
            owner = r.bandit[p, col]
            if amt <= 0:
                continue
            if owner >= 0 and not c[C_DIVERT]:
                ev_push(r, EV_INTEREST_BLOCKED, p, col, amt)  # RM-6.3 variant "block"
                continue
            recv = owner if owner >= 0 else p
            r.market[col] -= amt
            gain_rune(r, recv, col, amt)
            ev_push(r, EV_INTEREST, recv, col, amt + 16 * p)
            if market_empty(r):
                end_game(r, c, END_MARKET_EMPTY)  # RM-7.1
                return
    r.phase = PH_START


@njit(**JIT)
def end_turn(r, c):
    """RM-3.7/RM-3.8: draw back to the hand size, then play passes clockwise."""
    p = r.turn_player
    H = c[C_HAND]
    while r.hand_n[p] < H:
        if not draw_card(r, p):
            break
    ev_push(r, EV_END_TURN, p, r.hand_n[p], 0)
    r.intent = I_NONE
    r.other = -1
    r.turn_player = seat_after(p, 1, c[C_P])
    r.phase = PH_TURN_START


@njit(**JIT)
def back_to_stage(r):
    """After a chain of decisions: the turn player acts again in the current stage."""
    r.intent = I_NONE
    r.other = -1
    r.pay_sum = 0
    r.pend_value = 0
    r.thefts_left = 0
    r.actor = r.turn_player
    if r.stage == 1:
        r.stage = 2
        r.phase = PH_RUNE_BUY
    elif r.stage == 2:
        r.phase = PH_RUNE_BUY
    else:
        r.phase = PH_HAND


@njit(**JIT)
def next_theft(r):
    """RM-5.1/RM-5.4: the next theft of the chain, or back to the stage."""
    p = r.turn_player
    q = r.other
    while r.thefts_left > 0:
        if has_loot(r, q):
            r.phase = PH_CHOOSE_STEAL
            r.actor = p
            return
        ev_push(r, EV_FIZZLE, p, q, 0)
        r.thefts_left -= 1
    back_to_stage(r)


# ---------------------------------------------------------------------------------- the mask
@njit(**JIT)
def fill_mask(r, c):
    """The legal actions of the current decision; returns (count, last legal action).
    The loops over cards and seats write each entry without a branch on it, and the count
    and last action are two reductions over the mask without one (vectorized; a branch per
    entry mispredicts on masks that change from one decision to the next)."""
    m = r.mask
    m[:] = False
    P = c[C_P]
    p = r.turn_player
    ph = r.phase
    if ph == PH_START:  # RM-3.3
        m[A_DONE] = True
        for col in range(2):
            if r.shelter[p, col]:
                m[A_DISCARD_SHELTER + col] = True
    elif ph == PH_RUNE_BUY:  # RM-3.4
        m[A_DONE] = True
        cost = c[C_RUNE_COST]
        for col in range(2):
            if free_runes(r, p, col) >= cost:
                if r.market_boats > 0 and own_boat_spot(r, p):
                    m[A_RUNE_BOAT + col] = True
                if r.market_bandits > 0 and bandit_spot(r, c, p):
                    m[A_RUNE_BANDIT + col] = True
    elif ph == PH_HAND:  # RM-3.5, RM-4
        m[A_DONE] = r.played != 0 or r.hand_n[p] == 0
        for col in range(2):
            if r.hand[p, D_SHELTER + col] > 0:
                m[A_SHELTER_DISCARD + col] = True
                if r.shelter[p, col] == 0:
                    m[A_SHELTER_TABLE + col] = True
        if r.hand[p, D_THEFT] > 0:
            m[A_THEFT] = True
        total = number_total(r, p)
        if total > 0:  # some Number card (every value is 1 or more)
            for k in range(1, P):
                if r.attacked[seat_after(p, k, P)] == 0:
                    m[A_ATTACK] = True
            if can_buy_rune(r, c, p):
                for col in range(2):
                    if r.market[col] > 0:
                        m[A_BUY_RUNE + col] = True
            if total >= c[C_NUMBER_COST]:
                if r.market_boats > 0 and own_boat_spot(r, p):
                    m[A_NUMBER_BOAT] = True
                if r.market_bandits > 0 and bandit_spot(r, c, p):
                    m[A_NUMBER_BANDIT] = True
            for col in range(2):
                if r.bandit[p, col] >= 0:
                    m[A_PAY_BANDIT + col] = True
    elif ph == PH_CHOOSE_CARD:
        for d in range(10):
            m[A_NUMBER + d] = r.hand[p, d] > 0
    elif ph == PH_PAYMENT:
        if r.intent == I_RUNE_RED or r.intent == I_RUNE_BLUE:
            for v in range(1, 11):
                if payment_ok(r, c, p, v):
                    m[A_NUMBER + v - 1] = True
        else:
            for d in range(10):
                m[A_NUMBER + d] = r.hand[p, d] > 0
    elif ph == PH_CHOOSE_OPP:
        if r.intent == I_ATTACK:  # RM-5.6
            for k in range(1, P):
                m[A_OPPONENT + k - 1] = r.attacked[seat_after(p, k, P)] == 0
        else:  # RM-5.1: opponents with something to steal, or any
            anyone = False
            for k in range(1, P):
                if has_loot(r, seat_after(p, k, P)):
                    m[A_OPPONENT + k - 1] = True
                    anyone = True
            if not anyone:
                for k in range(1, P):
                    m[A_OPPONENT + k - 1] = True
    elif ph == PH_CHOOSE_STEAL:
        q = r.other
        for col in range(2):
            if free_runes(r, q, col) > 0:
                m[A_STEAL + col] = True
        if r.hand_n[q] > 0:
            m[A_STEAL + 2] = True
    elif ph == PH_DEFEND:  # RM-5.7
        q = r.actor
        for d in range(r.pend_value - 1, 10):
            m[A_NUMBER + d] = r.hand[q, d] > 0
        m[A_NO_BLOCK] = True
    elif ph == PH_CHOOSE_SHELTER:
        if r.intent == I_BOAT_NUM or r.intent == I_BOAT_RUNES:
            for col in range(2):
                if r.shelter[p, col] != 0 and r.boat[p, col] == 0:
                    m[A_SHELTER + col] = True
        else:
            for k in range(1, P):
                q = seat_after(p, k, P)
                for col in range(2):
                    if r.shelter[q, col] != 0 and r.bandit[q, col] < 0:
                        m[A_SHELTER + 2 * k + col] = True
    n = 0
    for a in range(m.shape[0]):  # two reductions without a branch on the mask: vectorized
        n += np.int64(m[a])
    last = -1
    for a in range(m.shape[0]):
        last = max(last, a if m[a] else -1)
    r.n_legal = n
    return n, last


# ---------------------------------------------------------------------------------- actions
@njit(**JIT)
def begin_theft(r, intent, n):
    r.intent = intent
    r.thefts_left = n
    r.phase = PH_CHOOSE_OPP


@njit(**JIT)
def apply_action(r, T, c, a):
    P = c[C_P]
    p = r.turn_player
    ph = r.phase
    if ph == PH_START:
        if a == A_DONE:
            r.stage = 2
            r.phase = PH_RUNE_BUY
        else:  # RM-3.3: a table Shelter discarded as a double theft
            col = a - A_DISCARD_SHELTER
            ev_push(r, EV_DISCARD_SHELTER, p, col, 1)
            remove_shelter(r, p, col)
            begin_theft(r, I_DOUBLE, 2)
    elif ph == PH_RUNE_BUY:
        if a == A_DONE:
            r.stage = 3
            r.phase = PH_HAND
        else:  # RM-3.4: a Boat Shelter or a Bandit for Runes of one colour
            bandit = a >= A_RUNE_BANDIT
            col = a - (A_RUNE_BANDIT if bandit else A_RUNE_BOAT)
            for _ in range(c[C_RUNE_COST]):
                take_rune(r, p, col)
            r.market[col] += c[C_RUNE_COST]
            ev_push(r, EV_BUY_RUNES, p, 1 if bandit else 0, col)
            r.intent = I_BANDIT_RUNES if bandit else I_BOAT_RUNES
            r.phase = PH_CHOOSE_SHELTER
    elif ph == PH_HAND:
        if a == A_DONE:
            end_turn(r, c)
            return
        r.played = 1  # RM-3.6
        if a < A_SHELTER_DISCARD:  # RM-4.1
            col = a - A_SHELTER_TABLE
            r.hand[p, D_SHELTER + col] -= 1
            r.hand_n[p] -= 1
            r.shelter[p, col] = 1
            ev_push(r, EV_PLAY_SHELTER, p, col, 0)
            settle_runes(r, p, col)
        elif a < A_THEFT:  # RM-4.2
            col = a - A_SHELTER_DISCARD
            discard_from_hand(r, p, D_SHELTER + col)
            ev_push(r, EV_DISCARD_SHELTER, p, col, 0)
            begin_theft(r, I_DOUBLE, 2)
        elif a == A_THEFT:  # RM-4.3
            discard_from_hand(r, p, D_THEFT)
            ev_push(r, EV_PLAY_THEFT, p, 0, 0)
            begin_theft(r, I_THEFT, 1)
        elif a == A_ATTACK:  # RM-5.6
            r.intent = I_ATTACK
            r.phase = PH_CHOOSE_CARD
        elif a < A_NUMBER_BOAT:  # RM-4.4
            col = a - A_BUY_RUNE
            r.intent = I_RUNE_RED + col
            r.pay_sum = 0
            r.phase = PH_PAYMENT
            ev_push(r, EV_BEGIN_BUY, p, r.intent, 0)
        elif a < A_PAY_BANDIT:  # RM-4.5
            r.intent = I_BOAT_NUM if a == A_NUMBER_BOAT else I_BANDIT_NUM
            r.pay_sum = 0
            r.phase = PH_PAYMENT
            ev_push(r, EV_BEGIN_BUY, p, r.intent, 0)
        else:  # RM-6.4
            r.intent = I_PAY_RED + (a - A_PAY_BANDIT)
            r.phase = PH_CHOOSE_CARD
    elif ph == PH_CHOOSE_CARD:
        v = a - A_NUMBER + 1
        discard_from_hand(r, p, v - 1)
        if r.intent == I_ATTACK:
            r.pend_value = v
            ev_push(r, EV_ATTACK, p, v, 0)
            r.phase = PH_CHOOSE_OPP
        else:  # RM-6.4: one card toward the Bandit on an own Shelter
            col = r.intent - I_PAY_RED
            r.bandit_paid[p, col] += v
            ev_push(r, EV_PAY_BANDIT, p, col, v + 64 * r.bandit_paid[p, col])
            if r.bandit_paid[p, col] >= c[C_REMOVAL]:
                remove_bandit(r, p, col)
            back_to_stage(r)
    elif ph == PH_PAYMENT:
        v = a - A_NUMBER + 1
        discard_from_hand(r, p, v - 1)
        r.pay_sum += v
        ev_push(r, EV_PAY, p, v, r.pay_sum)
        if r.intent == I_RUNE_RED or r.intent == I_RUNE_BLUE:
            if is_rune_total(c, r.pay_sum):
                col = r.intent - I_RUNE_RED
                r.market[col] -= 1
                gain_rune(r, p, col, 1)
                ev_push(r, EV_RUNE_BOUGHT, p, col, r.pay_sum)
                if market_empty(r):
                    end_game(r, c, END_MARKET_EMPTY)  # RM-7.1
                    return
                back_to_stage(r)
        elif r.pay_sum >= c[C_NUMBER_COST]:
            ev_push(r, EV_NUMBER_BOUGHT, p, 1 if r.intent == I_BANDIT_NUM else 0, r.pay_sum)
            r.phase = PH_CHOOSE_SHELTER
    elif ph == PH_CHOOSE_OPP:
        k = a - A_OPPONENT + 1
        q = (p + k) % P
        r.other = q
        ev_push(r, EV_VICTIM, p, q, r.intent)
        if r.intent == I_ATTACK:  # RM-5.7: the defender decides
            r.attacked[q] = 1
            r.actor = q
            r.phase = PH_DEFEND
        else:
            next_theft(r)
    elif ph == PH_DEFEND:
        q = r.actor
        if a == A_NO_BLOCK:  # RM-5.8, RM-5.9
            forced = 1 if r.n_legal == 1 else 0
            ev_push(r, EV_NO_BLOCK, q, p, forced)
            r.actor = p
            r.thefts_left = 1
            next_theft(r)
        else:  # shown, kept
            ev_push(r, EV_BLOCK, q, p, a - A_NUMBER + 1)
            back_to_stage(r)
    elif ph == PH_CHOOSE_STEAL:
        q = r.other
        k = a - A_STEAL
        if k < 2:
            take_rune(r, q, k)
            gain_rune(r, p, k, 1)
            ev_push(r, EV_STEAL_RUNE, p, q, k)
        else:  # RM-5.2: a random hand card
            i = rand_below(r, r.hand_n[q])
            d = 0
            for d in range(r.hand.shape[1]):
                if i < r.hand[q, d]:
                    break
                i -= r.hand[q, d]
            r.hand[q, d] -= 1
            r.hand_n[q] -= 1
            r.hand[p, d] += 1
            r.hand_n[p] += 1
            ev_push(r, EV_STEAL_CARD, p, q, d)
        r.thefts_left -= 1
        next_theft(r)
    elif ph == PH_CHOOSE_SHELTER:
        k = (a - A_SHELTER) // 2
        col = (a - A_SHELTER) % 2
        if r.intent == I_BOAT_NUM or r.intent == I_BOAT_RUNES:  # RM-2.4
            r.boat[p, col] = 1
            r.market_boats -= 1
            ev_push(r, EV_PLACE_BOAT, p, col, 0)
        else:  # RM-6.1
            q = (p + k) % P
            r.bandit[q, col] = p
            r.bandit_paid[q, col] = 0
            r.market_bandits -= 1
            ev_push(r, EV_PLACE_BANDIT, p, q, col)
        back_to_stage(r)


# ---------------------------------------------------------------------------------- driving
@njit(**JIT)
def hidden_forced(r, c):
    """RM-8.1: a decision whose one legal option only the deciding seat's hand makes single:
    the stage-3 choice with cards in hand, which Number card to attack or pay a Bandit with,
    and the next card of a purchase, unless the hand holds one card (then its size alone
    leaves one option); the defence unless ``defend="auto"`` (RM-5.9). The seat is asked
    all the same. Every other one-option decision (stages 1 and 2, an empty hand, the
    opponent, the theft, the Shelter) follows from public facts and the engine takes it."""
    ph = r.phase
    n = r.hand_n[r.actor]
    if ph == PH_DEFEND:
        return c[C_ASK_DEFEND] != 0
    if ph == PH_HAND:
        return n >= 1
    if ph == PH_CHOOSE_CARD or ph == PH_PAYMENT:
        return n >= 2
    return False


@njit(**JIT)
def advance(r, T, c):
    """Run the game to a decision with two or more options, a decision that only the
    seat's hand made single (``hidden_forced``, RM-8.1), or its end. Stages with nothing
    but ``done`` are skipped silently."""
    while True:
        ph = r.phase
        if ph == PH_OVER:
            r.mask[:] = False
            r.n_legal = 0
            return
        if ph == PH_TURN_START:
            turn_start(r, c)
            continue
        n, last = fill_mask(r, c)
        if n >= 2 or (n == 1 and hidden_forced(r, c)):
            return
        if n == 1:
            if ph != PH_DEFEND and not ((ph == PH_START or ph == PH_RUNE_BUY) and last == A_DONE):
                ev_push(r, EV_FORCED, r.actor, last, 0)
            apply_action(r, T, c, last)
        else:  # pragma: no cover - every decision offers an option
            end_turn(r, c)


@njit(**JIT)
def reset_first(r, T, c, seed64, first):
    """RM-1.4/RM-1.5: a new game from a 64-bit seed (``core.engine.seed_to_u64``);
    ``first`` the first player, or -1 to draw it from the seed (the deal is the same
    either way)."""
    P = c[C_P]
    r.rng = seed64
    r.market[0] = c[C_MKT]
    r.market[1] = c[C_MKT + 1]
    r.market_boats = c[C_MKT + 2]
    r.market_bandits = c[C_MKT + 3]
    r.removed_bandits = 0
    r.hand[:, :] = 0
    r.hand_n[:] = 0
    r.deck[:] = -1
    r.deck_n = 0
    r.shelter[:, :] = 0
    r.boat[:, :] = 0
    r.inside[:, :] = 0
    r.loose[:, :] = 0
    r.bandit[:, :] = -1
    r.bandit_paid[:, :] = 0
    r.turns[:] = 0
    r.total_turns = 0
    r.attacked[:] = 0
    r.stage = 0
    r.played = 0
    r.intent = I_NONE
    r.pend_value = 0
    r.pay_sum = 0
    r.pay_colour = 0
    r.thefts_left = 0
    r.other = -1
    r.done = False
    r.end_reason = 0
    r.winners[:] = False
    r.final_rewards[:] = 0.0
    r.step_rewards[:] = 0.0
    r.steps = 0
    r.ev[:, :] = 0
    r.ev_n = 0
    r.ev_lost = 0
    n = 0
    for d in range(T.copies.shape[0]):
        r.discard[d] = T.copies[d]
        n += T.copies[d]
    r.discard_n = n
    reshuffle(r)
    for p in range(P):
        for _ in range(c[C_HAND]):
            draw_card(r, p)
    fp = rand_below(r, P)
    if first >= 0:
        fp = first
    r.first_player = fp
    r.turn_player = fp
    r.actor = fp
    ev_push(r, EV_FIRST, fp, 1 if first >= 0 else 0, 0)
    r.phase = PH_TURN_START
    advance(r, T, c)


@njit(**JIT)
def reset_game(r, T, c, seed64):
    reset_first(r, T, c, seed64, -1)


@njit(**JIT)
def step_game(r, T, c, a):
    for p in range(r.step_rewards.shape[0]):
        r.step_rewards[p] = 0.0
    if a < 0 or r.done:
        return
    r.ev_n = 0
    r.steps += 1
    apply_action(r, T, c, a)
    advance(r, T, c)


@njit(**JIT)
def seat_bits(r, c):
    """This game has no per-seat flag (``GameSpec.seat_flag`` is empty)."""
    return 0


# ---------------------------------------------------------------------------------- game-specific entry points
# The batch loops, single-game calls, random play and the learner drivers are the core's
# (``core.drivers.compile_drivers`` over the four per-row kernels, ``drivers_for``); only
# match play's reset with a given first player and the hand-built-table helper are here.
@njit(**JIT)
def status(r, P):
    """(done, actor, phase, 0): this game has no per-seat flag."""
    return r.done, r.actor, r.phase, 0


@njit(cache=True)
def reset_first_serial(S, TB, c, idx, seeds64, firsts):
    """Reset with a given first player per game (-1: from the seed) (RM-1.5 match play)."""
    for i in range(idx.shape[0]):
        reset_first(S[idx[i]], TB[0], c, seeds64[i], firsts[i])


@njit(cache=True)
def reset_first_one(S, TB, c, g, seed64, first):
    reset_first(S[g], TB[0], c, seed64, first)
    return status(S[g], c[C_P])


@njit(cache=True)
def advance_one(S, TB, c, g):
    """Run game g from its current (possibly hand-built) state to its next decision: a
    fresh log, the mask (tests and tools that set a table up by hand)."""
    r = S[g]
    r.ev_n = 0
    advance(r, TB[0], c)
    return status(r, c[C_P])


_DRIVERS: dict = {}


def drivers_for(state_dtype=None, tables_dtype=None):
    """The core's batch drivers over these kernels (built once per state layout)."""
    if state_dtype is None:
        from ripmarket_env.games.runemarket.cards import default_cards
        from ripmarket_env.games.runemarket.state import allocate, tables_from_db

        state_dtype, tables_dtype = allocate(1).dtype, tables_from_db(default_cards()).dtype
    return drivers_once(_DRIVERS, drivers_for, state_dtype, tables_dtype, _kernels)


def _kernels():
    from ripmarket_env.games.runemarket.observation import encode_obs

    return reset_game, step_game, encode_obs, seat_bits
