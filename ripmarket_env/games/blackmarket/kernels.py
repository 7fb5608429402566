"""The rules of Black Market as numba kernels over the batched state.

Every function takes one game's record ``r`` (a row of the structured state array),
the compiled card tables ``T`` (one record) and the rules config ``c`` (int64 array,
``config.py``). Rule IDs (``BM-x.y``) refer to docs/games/black-market/RULES.md. The
per-row entry points have the signatures every game of the zoo uses:
``reset_game(r, T, c, seed64)``, ``step_game(r, T, c, a)``, ``seat_bits(r, c)``;
``observation.encode_obs`` encodes. The batch loops over them are the core's
(``core.drivers.compile_drivers``, bundled by ``drivers_for``). With
``NUMBA_DISABLE_JIT=1`` everything runs as plain Python.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ripmarket_env.core.drivers import drivers_once
from ripmarket_env.core.kernels import ev_push, seat_after
from ripmarket_env.games.blackmarket.config import (
    C_ANY_PLAYER,
    C_LIMIT,
    C_MAX_TURNS,
    C_NEXT_TURN,
    C_P,
    C_PAIR_ALWAYS,
    C_PLACEMENT,
    C_REFILL_DOWN,
    C_START,
    C_TARGET,
    C_TEAMS,
)
from ripmarket_env.games.blackmarket.state import (
    A_BUY,
    A_DRAW,
    A_EFFECT,
    A_FLIP,
    A_ROTATE,
    A_SEAT,
    A_SLOT,
    N_SLOTS,
    NUM_ACTIONS,
    PH_ACT,
    PH_CHOOSE_DIE,
    PH_CHOOSE_NUMBER,
    PH_CHOOSE_SEAT,
    PH_OVER,
)

# _nrt=False: no reference counting of the array arguments and views (the kernels allocate
# nothing; their callers hold the arrays), about 10% of a step (docs/ARCHITECTURE.md, Speed).
JIT = dict(cache=True, nogil=True, _nrt=False)

# Event kinds (events.py names them and says what seat, a and b mean).
EV_FORCED = 1
EV_FIRST_PLAYER = 2
EV_SETUP = 3
EV_TURN = 4
EV_ROLL = 5
EV_FLIP = 6
EV_ROTATE = 7
EV_BUY = 8
EV_REFILL = 9
EV_DRAW = 10
EV_RESHUFFLE = 11
EV_EFFECT = 12
EV_REROLL = 13
EV_FIX = 14
EV_EXTRA_DIE = 15
EV_HEIST = 16
EV_SLOT_EMPTY = 17
EV_GAME_OVER = 18
EV_DEAL = 19

END_TARGET = 0
END_EMPTY = 1
END_CAP = 2

# Primitive codes (cards.PRIMITIVES)
P_REROLL = 0
P_SET = 1
P_EXTRA = 2
P_STEAL = 3
P_SMUGGLE = 4
P_CROWBAR = 5
P_DISCOUNT = 6
P_DRAW = 7

K_RED = 0
K_BLACK = 1
K_FLIP = 2
DUAL = 2


try:
    from numba.core.config import DISABLE_JIT as _NO_JIT
except ImportError:  # pragma: no cover - older numba
    _NO_JIT = False

# ----------------------------------------------------------------------------------
# The game's own RNG (BM-12.2): splitmix64 over a 64-bit state (uint64), the zoo's
# convention (R.I.P. Market's ). Each draw adds the golden-ratio increment and
# mixes; ``rng_u32`` keeps the top 32 bits. Compiled, the uint64 arithmetic wraps; in
# plain Python the same steps run on Python ints masked to 64 bits.
# ----------------------------------------------------------------------------------
from ripmarket_env.core.kernels import rand_below, rng_u32  # noqa: E402,F401  (the game's own RNG)


@njit(**JIT)
def roll_die(r):
    return 1 + rand_below(r, 6)


# ----------------------------------------------------------------------------------
# Sides and helpers
# ----------------------------------------------------------------------------------
@njit(**JIT)
def side_of(q):
    """BM-1.2: seat q sits on side q mod 2."""
    return q % 2


@njit(**JIT)
def is_opponent(c, p, q):
    """BM-6.8: an opponent is a player of the other side (ffa: any other player)."""
    if q == p:
        return False
    if c[C_TEAMS] != 0:
        return side_of(q) != side_of(p)
    return True


@njit(**JIT)
def side_points(r, c, s):
    tot = 0
    for q in range(c[C_P]):
        if side_of(q) == s:
            tot += r.points[q]
    return tot


@njit(**JIT)
def avail(r, T, c, p, d):
    """Copies of design d whose effect seat p may use now (BM-6.1, BM-6.2, BM-6.4)."""
    if d < 0:
        return 0
    n = r.owned[p, d]
    if c[C_NEXT_TURN] != 0:
        n -= r.bought[d]
    if T.one_time[d] != 0:
        n -= r.spent[p, d]
    else:
        n -= r.used[d]
    return n


@njit(**JIT)
def prim_avail(r, T, c, p, prim):
    return avail(r, T, c, p, T.prim_design[prim])


@njit(**JIT)
def use_design(r, T, p, d):
    r.used[d] += 1
    if T.one_time[d] != 0:
        r.spent[p, d] += 1


@njit(**JIT)
def has_unused_die(r):
    used = 1
    for i in range(r.n_dice):  # without a branch on each die
        used &= np.int64(r.dice_used[i] != 0)
    return used == 0


@njit(**JIT)
def unused_die_with(r, k):
    for i in range(r.n_dice):
        if r.dice_used[i] == 0 and r.dice[i] == k:
            return i
    return -1


@njit(**JIT)
def room(r, c, p):
    lim = c[C_LIMIT]
    if lim == 0:
        return 1 << 20
    return lim - r.hand_n[p]


# ----------------------------------------------------------------------------------
# Decks (BM-4.8, BM-5.3)
# ----------------------------------------------------------------------------------
@njit(**JIT)
def shuffle(r, arr, n):
    for i in range(n - 1, 0, -1):
        j = rand_below(r, i + 1)
        t = arr[i]
        arr[i] = arr[j]
        arr[j] = t


@njit(**JIT)
def draw_hand(r, c, p):
    """Draw one Hand Card for seat p: its kind, or -1 (at the limit / nothing to draw)."""
    if room(r, c, p) <= 0:
        return -1
    if r.hdeck_n == 0:
        n = 0
        for k in range(3):
            for _ in range(r.hdisc[k]):
                r.hdeck[n] = k
                n += 1
            r.hdisc[k] = 0
        if n == 0:
            return -1
        shuffle(r, r.hdeck, n)
        r.hdeck_n = n
        ev_push(r, EV_RESHUFFLE, -1, n, 0)
    r.hdeck_n -= 1
    k = r.hdeck[r.hdeck_n]
    r.hdeck[r.hdeck_n] = -1
    r.hand[p, k] += 1
    r.hand_n[p] += 1
    return k


@njit(**JIT)
def pay(r, p, kind, n):
    r.hand[p, kind] -= n
    r.hand_n[p] -= n
    r.hdisc[kind] += n


@njit(**JIT)
def fill_slot(r, c, s, face_down):
    """BM-5.2: the top Point Card goes to slot s facing a side drawn by a fair coin."""
    if r.pdeck_n == 0:
        r.map_card[s] = -1
        r.map_down[s] = 0
        r.map_side[s] = 0
        r.map_seen[s] = 0
        ev_push(r, EV_SLOT_EMPTY, -1, s + 1, 0)
        return
    r.pdeck_n -= 1
    d = int(r.pdeck[r.pdeck_n])
    r.pdeck[r.pdeck_n] = -1
    r.map_card[s] = d
    r.map_side[s] = rand_below(r, 2)
    r.map_down[s] = 1 if face_down else 0
    r.map_seen[s] = 0 if face_down else 1
    ev_push(r, EV_REFILL, -1, s + 1, d + 32 * (int(r.map_side[s]) + 2 * int(r.map_down[s])))


# ----------------------------------------------------------------------------------
# Turns (BM-4)
# ----------------------------------------------------------------------------------
@njit(**JIT)
def begin_turn(r, T, c):
    p = r.turn_player
    for d in range(r.used.shape[0]):
        r.used[d] = 0
        r.bought[d] = 0
    r.n_dice = 2
    for i in range(r.dice.shape[0]):
        r.dice[i] = 0
        r.dice_used[i] = 0
    r.dice[0] = roll_die(r)
    r.dice[1] = roll_die(r)
    r.pend = -1
    r.pend_die = -1
    r.phase = PH_ACT
    r.actor = p
    ev_push(r, EV_TURN, p, r.turn + 1, 0)
    ev_push(r, EV_ROLL, p, r.dice[0], r.dice[1])


@njit(**JIT)
def end_game(r, T, c, reason, winner_side, winner_seat):
    """BM-8: the game ends; winners and rewards (BM-10), paid on this step."""
    P = c[C_P]
    r.done = True
    r.phase = PH_OVER
    r.end_reason = reason
    for q in range(r.winners.shape[0]):
        r.winners[q] = False
        r.final_rewards[q] = 0.0
    teams = c[C_TEAMS] != 0
    if teams:
        ws = winner_side
        if ws < 0:
            s0 = side_points(r, c, 0)
            s1 = side_points(r, c, 1)
            ws = 0 if s0 > s1 else (1 if s1 > s0 else -1)
        for q in range(P):
            if ws < 0:
                r.winners[q] = True
                r.final_rewards[q] = 0.0
            elif side_of(q) == ws:
                r.winners[q] = True
                r.final_rewards[q] = 1.0
            else:
                r.final_rewards[q] = -1.0
    else:
        if winner_seat >= 0:
            r.winners[winner_seat] = True
        else:
            best = -1
            for q in range(P):
                if r.points[q] > best:
                    best = r.points[q]
            for q in range(P):
                if r.points[q] == best:
                    r.winners[q] = True
        if c[C_PLACEMENT] != 0:
            # linear by points from +1 (best) to -1 (worst), ties averaged (BM-10.2)
            for q in range(P):
                above = 0
                same = 0
                for o in range(P):
                    if r.points[o] > r.points[q]:
                        above += 1
                    elif r.points[o] == r.points[q]:
                        same += 1
                tot = 0.0
                for pos in range(above, above + same):
                    tot += 1.0 - 2.0 * pos / (P - 1)
                r.final_rewards[q] = tot / same
        else:
            k = 0
            for q in range(P):
                if r.winners[q]:
                    k += 1
            for q in range(P):
                if k == P:
                    r.final_rewards[q] = 0.0
                elif r.winners[q]:
                    r.final_rewards[q] = (P - k) / (k * (P - 1.0))
                else:
                    r.final_rewards[q] = -1.0 / (P - 1.0)
    bits = 0
    for q in range(P):
        r.step_rewards[q] = r.final_rewards[q]
        if r.winners[q]:
            bits |= 1 << q
    for i in range(r.mask.shape[0]):
        r.mask[i] = False
    r.n_legal = 0
    ev_push(r, EV_GAME_OVER, -1, reason, bits)


@njit(**JIT)
def spend_die(r, k):
    i = unused_die_with(r, k)
    r.dice_used[i] = 1


# ----------------------------------------------------------------------------------
# Legality (BM-4.2 .. BM-4.6, BM-6)
# ----------------------------------------------------------------------------------
@njit(**JIT)
def can_pay_flip(r, c, p, pay_code):
    """BM-4.3: a Flip Card, or two Red / two Black only when holding no Flip Card."""
    if pay_code == 0:
        return r.hand[p, K_FLIP] >= 1
    if r.hand[p, K_FLIP] > 0 and c[C_PAIR_ALWAYS] == 0:
        return False
    return r.hand[p, pay_code - 1] >= 2


@njit(**JIT)
def buy_cost(r, T, c, p):
    """BM-4.4 / BM-6.11: three cards, fewer with a usable discount."""
    d = T.prim_design[P_DISCOUNT]
    if avail(r, T, c, p, d) > 0:
        return 3 - T.amount[d]
    return 3


@njit(**JIT)
def steal_target(r, c, p):
    """BM-6.8: seat p has room for a stolen card and an opponent holds cards."""
    if room(r, c, p) <= 0:
        return False
    for q in range(c[C_P]):
        if is_opponent(c, p, q) and r.hand_n[q] > 0:
            return True
    return False


_LOWEST_BIT = np.array([0] + [(x & -x).bit_length() - 1 for x in range(1, 1 << N_SLOTS)], np.int64)


@njit(**JIT)
def compute_mask(r, T, c):
    """The legal actions of the deciding seat (``r.mask``, ``r.n_legal``), BM-4.2 .. BM-4.6
    and BM-6: with an unused die showing k, slot k's card may be flipped or rotated with
    each payment ``can_pay_flip`` allows and bought in a colour the card has (BM-4.4: not
    an unseen face-down card, another side's card only with a Smuggler, a face-down one only
    with a Crowbar; ``buy_cost`` cards of that colour), and a card drawn; an available
    effect may be used (a Heist only with room and an opponent holding cards). What does
    not depend on the slot (the unused dice, the payments, the cost, the Smuggler and
    Crowbar) is worked out once per call, and the loop visits only the slots an unused die
    points at (the set bits of the dice's bit set, lowest first, by a table), not all six
    with a test each; in a slot, each payment's and colour's entry is written with its
    condition as the value (no branch on each: they change with the hand from one decision
    to the next and mispredict)."""
    m = r.mask
    for i in range(m.shape[0]):
        m[i] = False
    p = r.actor
    P = c[C_P]
    ph = r.phase
    n = 0
    if ph == PH_ACT:
        dbits = 0  # bit k: an unused die shows k (without a branch on each die)
        for i in range(r.n_dice):
            dbits |= np.int64(r.dice_used[i] == 0) << r.dice[i]
        if dbits != 0:
            pay0 = can_pay_flip(r, c, p, 0)
            pay1 = can_pay_flip(r, c, p, 1)
            pay2 = can_pay_flip(r, c, p, 2)
            cost = buy_cost(r, T, c, p)
            smuggle = prim_avail(r, T, c, p, P_SMUGGLE) > 0
            crowbar = prim_avail(r, T, c, p, P_CROWBAR) > 0
            side = side_of(p)
            bits = dbits >> 1  # bit s: slot s; its set bits only, lowest first
            while bits != 0:
                s = _LOWEST_BIT[bits]
                bits &= bits - 1
                d = r.map_card[s]
                if d >= 0:
                    # the payments and colours are written as values (no branch on each)
                    f = A_FLIP + 3 * s
                    o = A_ROTATE + 3 * s
                    m[f] = pay0
                    m[o] = pay0
                    m[f + 1] = pay1
                    m[o + 1] = pay1
                    m[f + 2] = pay2
                    m[o + 2] = pay2
                    n += 2 * (np.int64(pay0) + np.int64(pay1) + np.int64(pay2))
                    # buy_access: an unseen face-down card, the other side without a
                    # Smuggler, a face-down card without a Crowbar cannot be bought
                    down = r.map_down[s] != 0
                    access = ((not down) | (r.map_seen[s] != 0)) & (smuggle | (r.map_side[s] == side)) & (
                        crowbar | (not down))
                    dc = T.colour[d]
                    for col in range(2):
                        ok = access & ((dc == DUAL) | (dc == col)) & (r.hand[p, col] >= cost)
                        m[A_BUY + 2 * s + col] = ok
                        n += np.int64(ok)
                m[A_DRAW + s] = True
                n += 1
            for e in range(4):  # effect_legal, an unused die being known here
                if prim_avail(r, T, c, p, e) > 0 and (e != P_STEAL or steal_target(r, c, p)):
                    m[A_EFFECT + e] = True
                    n += 1
    elif ph == PH_CHOOSE_DIE:
        for k in range(1, 7):
            if unused_die_with(r, k) >= 0:
                m[A_SLOT + k - 1] = True
                n += 1
    elif ph == PH_CHOOSE_NUMBER:
        old = r.dice[r.pend_die]
        for k in range(1, 7):
            if k != old:
                m[A_SLOT + k - 1] = True
                n += 1
    elif ph == PH_CHOOSE_SEAT:
        for j in range(1, P):
            q = seat_after(p, j, P)
            if is_opponent(c, p, q) and r.hand_n[q] > 0:
                m[A_SEAT + j - 1] = True
                n += 1
    r.n_legal = n


# ----------------------------------------------------------------------------------
# Actions
# ----------------------------------------------------------------------------------
@njit(**JIT)
def check_win(r, T, c, p):
    """BM-8.1: after a purchase: the buyer's side (teams) or the buyer (ffa) may win;
    BM-8.2: an empty map and Point deck end the game."""
    tgt = c[C_TARGET]
    if c[C_TEAMS] != 0:
        s = side_of(p)
        if c[C_ANY_PLAYER] != 0:
            if r.points[p] >= tgt:
                end_game(r, T, c, END_TARGET, s, -1)
                return
        elif side_points(r, c, s) >= tgt:
            end_game(r, T, c, END_TARGET, s, -1)
            return
    elif r.points[p] >= tgt:
        end_game(r, T, c, END_TARGET, -1, p)
        return
    if r.pdeck_n == 0:
        for s in range(N_SLOTS):
            if r.map_card[s] >= 0:
                return
        end_game(r, T, c, END_EMPTY, -1, -1)


@njit(**JIT)
def do_buy(r, T, c, p, s, col):
    d = int(r.map_card[s])
    flags = 0
    other = r.map_side[s] != side_of(p)
    if other:
        use_design(r, T, p, T.prim_design[P_SMUGGLE])
        flags |= 1
    if r.map_down[s] != 0:
        use_design(r, T, p, T.prim_design[P_CROWBAR])
        flags |= 2
    cost = 3
    fd = T.prim_design[P_DISCOUNT]
    if avail(r, T, c, p, fd) > 0:
        cost = 3 - int(T.amount[fd])
        use_design(r, T, p, fd)
        flags |= 4
    pay(r, p, col, cost)
    r.owned[p, d] += 1
    r.bought[d] += 1
    r.points[p] += T.points[d]
    ev_push(r, EV_BUY, p, s + 1, d + 32 * col + 64 * cost + 512 * flags)
    fill_slot(r, c, s, c[C_REFILL_DOWN] != 0)
    check_win(r, T, c, p)


@njit(**JIT)
def do_draw(r, T, c, p):
    n = 1
    d = T.prim_design[P_DRAW]
    if avail(r, T, c, p, d) > 0:
        n += T.amount[d]
        use_design(r, T, p, d)
    for _ in range(n):
        k = draw_hand(r, c, p)
        ev_push(r, EV_DRAW, p, k, 1 if n > 1 else 0)


@njit(**JIT)
def do_heist(r, T, c, p, q):
    d = T.prim_design[P_STEAL]
    n = T.amount[d]
    rm = room(r, c, p)
    if rm < n:
        n = rm
    if r.hand_n[q] < n:
        n = r.hand_n[q]
    code = 0
    mul = 1
    for _ in range(n):
        i = rand_below(r, r.hand_n[q])
        k = 0
        while i >= r.hand[q, k]:
            i -= r.hand[q, k]
            k += 1
        r.hand[q, k] -= 1
        r.hand_n[q] -= 1
        r.hand[p, k] += 1
        r.hand_n[p] += 1
        code += (k + 1) * mul
        mul *= 4
    ev_push(r, EV_HEIST, p, q, code)


@njit(**JIT)
def apply_action(r, T, c, a):
    p = r.actor
    ph = r.phase
    if ph == PH_ACT:
        if a < A_BUY:
            rot = a >= A_ROTATE
            base = A_ROTATE if rot else A_FLIP
            s = (a - base) // 3
            pc = (a - base) % 3
            if pc == 0:
                pay(r, p, K_FLIP, 1)
            else:
                pay(r, p, pc - 1, 2)
            if rot:
                r.map_side[s] = 1 - r.map_side[s]
                ev_push(r, EV_ROTATE, p, s + 1, pc + 4 * r.map_side[s])
            else:
                r.map_down[s] = 1 - r.map_down[s]
                info = pc + 4 * r.map_down[s]
                if r.map_down[s] == 0 and r.map_seen[s] == 0:
                    r.map_seen[s] = 1
                    info += 8 * (int(r.map_card[s]) + 1)
                ev_push(r, EV_FLIP, p, s + 1, info)
            spend_die(r, s + 1)
        elif a < A_DRAW:
            s = (a - A_BUY) // 2
            col = (a - A_BUY) % 2
            spend_die(r, s + 1)
            do_buy(r, T, c, p, s, col)
        elif a < A_EFFECT:
            s = a - A_DRAW
            spend_die(r, s + 1)
            do_draw(r, T, c, p)
        else:
            e = a - A_EFFECT
            d = T.prim_design[e]
            use_design(r, T, p, d)
            ev_push(r, EV_EFFECT, p, d, 0)
            if e == P_EXTRA:
                i = r.n_dice
                r.dice[i] = roll_die(r)
                r.dice_used[i] = 0
                r.n_dice = i + 1
                ev_push(r, EV_EXTRA_DIE, p, r.dice[i], 0)
            elif e == P_STEAL:
                r.pend = e
                r.phase = PH_CHOOSE_SEAT
            else:
                r.pend = e
                r.phase = PH_CHOOSE_DIE
    elif ph == PH_CHOOSE_DIE:
        k = a - A_SLOT + 1
        i = unused_die_with(r, k)
        if r.pend == P_REROLL:
            r.dice[i] = roll_die(r)
            ev_push(r, EV_REROLL, p, k, r.dice[i])
            r.pend = -1
            r.phase = PH_ACT
        else:
            r.pend_die = i
            r.phase = PH_CHOOSE_NUMBER
    elif ph == PH_CHOOSE_NUMBER:
        k = a - A_SLOT + 1
        i = r.pend_die
        ev_push(r, EV_FIX, p, r.dice[i], k)
        r.dice[i] = k
        r.pend = -1
        r.pend_die = -1
        r.phase = PH_ACT
    elif ph == PH_CHOOSE_SEAT:
        q = (p + (a - A_SEAT + 1)) % c[C_P]
        do_heist(r, T, c, p, q)
        r.pend = -1
        r.phase = PH_ACT


@njit(**JIT)
def hidden_forced(r):
    """BM-12.3: a decision whose one legal option only the deciding seat's hand makes
    single: an action with cards in hand while an unused die points at a map card (some
    hand of that size could flip, rotate or buy there, so "draw" being the only option
    tells the hand). The seat is asked all the same. Every other one-option decision (an
    empty hand, dice pointing at empty slots, the die, the number, the Heist victim)
    follows from public facts and the engine takes it."""
    if r.phase != PH_ACT or r.hand_n[r.actor] == 0:
        return False
    for i in range(r.n_dice):
        if r.dice_used[i] == 0 and r.map_card[r.dice[i] - 1] >= 0:
            return True
    return False


@njit(**JIT)
def advance(r, T, c):
    """After an action: pass the turn when every die is spent (BM-4.1), stop at the cap
    (BM-8.3), compute the mask; a decision with one legal option is taken here unless only
    the seat's hand made it single (``hidden_forced``, BM-12.3)."""
    while not r.done:
        if r.phase == PH_ACT and not has_unused_die(r):
            r.turn += 1
            if r.turn >= c[C_MAX_TURNS]:
                end_game(r, T, c, END_CAP, -1, -1)
                return
            r.turn_player = seat_after(r.turn_player, 1, c[C_P])
            begin_turn(r, T, c)
        compute_mask(r, T, c)
        if r.n_legal != 1 or hidden_forced(r):
            return
        a = 0
        while not r.mask[a]:
            a += 1
        ev_push(r, EV_FORCED, r.actor, a, 0)
        apply_action(r, T, c, a)


# ----------------------------------------------------------------------------------
# Entry points
# ----------------------------------------------------------------------------------
@njit(**JIT)
def reset_game(r, T, c, seed64):
    """BM-3: a new game; ``seed64`` (``core.seed_to_u64``) is the RNG's first state."""
    P = c[C_P]
    r.rng = seed64
    r.ev_n = 0
    r.ev_lost = 0
    r.ev_turn = 1
    r.steps = 0
    r.done = False
    r.end_reason = -1
    r.turn = 0
    r.pend = -1
    r.pend_die = -1
    for q in range(r.hand.shape[0]):
        r.hand_n[q] = 0
        r.points[q] = 0
        r.winners[q] = False
        r.final_rewards[q] = 0.0
        r.step_rewards[q] = 0.0
        for k in range(3):
            r.hand[q, k] = 0
        for d in range(r.owned.shape[1]):
            r.owned[q, d] = 0
            r.spent[q, d] = 0
    # BM-3.1: shuffle both decks
    n = 0
    for d in range(T.copies.shape[0]):
        for _ in range(T.copies[d]):
            r.pdeck[n] = d
            n += 1
    shuffle(r, r.pdeck, n)
    r.pdeck_n = n
    n = 0
    for k in range(3):
        r.hdisc[k] = 0
        for _ in range(T.hand_copies[k]):
            r.hdeck[n] = k
            n += 1
    shuffle(r, r.hdeck, n)
    r.hdeck_n = n
    # BM-3.2: six Point Cards face-up at random orientations
    for s in range(N_SLOTS):
        fill_slot(r, c, s, False)
    # BM-3.3: deal the hands
    for q in range(P):
        for _ in range(c[C_START]):
            k = draw_hand(r, c, q)
            ev_push(r, EV_DEAL, q, k, 0)
    # BM-4.1: the first player from the seed
    r.first_player = rand_below(r, P)
    r.turn_player = r.first_player
    ev_push(r, EV_FIRST_PLAYER, r.first_player, 0, 0)
    begin_turn(r, T, c)
    advance(r, T, c)


@njit(**JIT)
def step_game(r, T, c, a):
    for q in range(r.step_rewards.shape[0]):
        r.step_rewards[q] = 0.0
    if a < 0 or r.done:
        return
    r.ev_n = 0
    r.ev_turn = r.turn + 1
    r.steps += 1
    apply_action(r, T, c, a)
    advance(r, T, c)


@njit(**JIT)
def seat_bits(r, c):
    """Black Market has no per-seat flag (``GameSpec.seat_flag`` is empty)."""
    return 0


# ----------------------------------------------------------------------------------
# The batch drivers (written once in ripmarket_env/core/drivers.py): the batch loops,
# the single-game calls, random play and the learner drivers over the kernels above
# ----------------------------------------------------------------------------------
_DRIVERS: dict = {}


def drivers_for(state_dtype=None, tables_dtype=None):
    """The core's batch drivers over these kernels for one state layout (default: the
    packaged cards'; a custom card database has its own), built once per layout."""
    if state_dtype is None:
        from ripmarket_env.games.blackmarket.cards import default_cards
        from ripmarket_env.games.blackmarket.state import state_dtype as state_dtype_of
        from ripmarket_env.games.blackmarket.state import tables_from_db

        db = default_cards()
        state_dtype, tables_dtype = state_dtype_of(db), tables_from_db(db).dtype
    return drivers_once(_DRIVERS, drivers_for, state_dtype, tables_dtype, _kernels)


def _kernels():
    from ripmarket_env.games.blackmarket.observation import encode_obs

    return reset_game, step_game, encode_obs, seat_bits


@njit(cache=True)
def refresh(S, TB, c, g):
    """Recompute game g's legal actions after its state was edited from outside (tests,
    hand-built positions); a single option is not taken."""
    compute_mask(S[g], TB[0], c)
