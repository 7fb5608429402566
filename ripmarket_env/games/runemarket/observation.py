"""The observation: 191 float32 built from named pieces (RM-8.4; the rulings' table).

Seen from one seat, the viewer; seat blocks are relative to the viewer (block 0 is the
viewer, block k the seat k places clockwise). The viewer sees its own hand and every
public fact; never another hand or the draw pile's order. ``pieces()`` is the single
source of the layout (offsets, bounds, ``named_view`` and the docs table).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ripmarket_env.core.kernels import div10, ix, ratio32
from ripmarket_env.core.spec import Layout, Piece
from ripmarket_env.games.runemarket.config import C_MAX_TURNS, C_MKT, C_NUMBER_COST, C_P, C_REMOVAL
from ripmarket_env.games.runemarket.state import I_ATTACK, MAX_SEATS, N_DESIGNS, N_PHASES, PH_OVER

GLOBAL = "global"
SEAT = "seat"


def pieces() -> tuple[Piece, ...]:
    return (
        Piece("phase", N_PHASES, GLOBAL, "one-hot decision phase: start, rune_buy, hand, choose_card, payment, "
              "choose_opponent, choose_steal, defend, choose_shelter, game_over"),
        Piece("is_actor", 1, GLOBAL, "1 if the viewer decides next"),
        Piece("num_players", 5, GLOBAL, "one-hot player count 2..6"),
        Piece("turn", 1, GLOBAL, "turns taken / max_turns"),
        Piece("market", 4, GLOBAL, "Market Red Runes, Blue Runes, Boat Shelters, Bandits, each / its starting count"),
        Piece("draw_pile", 1, GLOBAL, "cards in the draw pile / deck size"),
        Piece("discard", N_DESIGNS, GLOBAL, "discard pile per design / copies"),
        Piece("hand", N_DESIGNS, GLOBAL, "the viewer's hand per design / copies"),
        Piece("played_card", 1, GLOBAL, "the turn player has played a hand card this turn"),
        Piece("pending_intent", 11, GLOBAL, "one-hot: theft, double theft, attack, Rune Red, Rune Blue, Boat by "
              "numbers, Bandit by numbers, Boat by Runes, Bandit by Runes, pay Red Bandit, pay Blue Bandit"),
        Piece("pending_value", 1, GLOBAL, "the attack card's value / 10"),
        Piece("payment_sum", 1, GLOBAL, "Number cards paid so far / number_cost"),
        Piece("thefts_left", 1, GLOBAL, "thefts left in the chain / 2"),
        Piece("pending_other", MAX_SEATS, GLOBAL, "one-hot seat offset: the victim or defender; the attacker in "
              "the view of the victim or defender"),
        Piece("bandit", 32, GLOBAL, "two Bandit blocks of 16: in Market; on seat offset (6); on colour (2); owner "
              "seat offset (6); paid / bandit_removal. Bandits on Shelters first (by seat offset, Red before "
              "Blue), then those in the Market; all zero once removed"),
        Piece("present", 1, SEAT, "the seat exists"),
        Piece("actor", 1, SEAT, "decides next"),
        Piece("turn_player", 1, SEAT, "it is this seat's turn"),
        Piece("first_player", 1, SEAT, "took the game's first turn"),
        Piece("hand_size", 1, SEAT, "cards in hand / 10"),
        Piece("runes", 1, SEAT, "score (Runes) / all Runes"),
        Piece("runes_by_place", 4, SEAT, "Red loose, Red inside, Blue loose, Blue inside / 10"),
        Piece("shelters", 4, SEAT, "Red Shelter, Blue Shelter, Boat in Red, Boat in Blue"),
        Piece("attacked", 1, SEAT, "attacked with a Number card by the turn player this turn"),
    )


def table_keys(observations: np.ndarray) -> np.ndarray:
    """``GameSpec.table_keys``: each row's table, ``"<N>p"``, from the ``num_players``
    one-hot (2..6)."""
    return _TABLE_KEYS[np.asarray(observations)[:, _NUM_PLAYERS].argmax(axis=1)]


def layout() -> Layout:
    return Layout.of(pieces(), MAX_SEATS)


_NUM_PLAYERS = layout().slice("num_players")
_TABLE_KEYS = np.array([f"{n}p" for n in range(2, MAX_SEATS + 1)], dtype=object)


LAYOUT = layout()
OBS_SIZE = LAYOUT.size  # 191

(O_PHASE, O_IS_ACTOR, O_NUMP, O_TURN, O_MARKET, O_DRAW, O_DISCARD, O_HAND, O_PLAYED, O_INTENT, O_PVALUE,
 O_PSUM, O_THEFTS, O_OTHER, O_BANDIT, S_PRESENT, S_ACTOR, S_TURN, S_FIRST, S_HANDN, S_RUNES, S_PLACE,
 S_SHELTERS, S_ATTACKED, O_SEAT_START, O_SEAT_SIZE) = range(26)


def observation_bounds(cfg) -> tuple[np.ndarray, np.ndarray]:
    """Per-feature (low, high): every piece is in [0, 1] except the hand size (at most the
    whole deck, 64 / 10) and the payment sum (below 2 x number_cost)."""
    low = np.zeros(OBS_SIZE, np.float32)
    high = np.ones(OBS_SIZE, np.float32)
    high[LAYOUT.slice("payment_sum")] = 2.0
    for k in range(MAX_SEATS):
        high[LAYOUT.slice("hand_size", k)] = 6.4
    return low, high


def named_view(obs: np.ndarray) -> dict:
    """A dict of named pieces of one observation (seat pieces as (6, size) arrays)."""
    return LAYOUT.named_view(obs)


@njit(cache=True, nogil=True, _nrt=False)
def _bandit_block(out, o, in_market, rel_seat, col, rel_owner, paid):
    if in_market:
        out[ix(o)] = 1.0
    else:
        out[ix(o + 1 + rel_seat)] = 1.0
        out[ix(o + 7 + col)] = 1.0
        out[ix(o + 9 + rel_owner)] = 1.0
        out[ix(o + 15)] = paid


@njit(cache=True, nogil=True, _nrt=False)
def encode_obs(r, T, c, viewer, offs, out):
    """Write game ``r`` seen by ``viewer`` into the float32 row ``out``.

    Written for speed, with the same float32 bits as the plain formulas in the comments
    (see R.I.P. Market's ``encode_obs``): offsets read once, seats advanced by one instead
    of ``% P``, quotients of small integers read from ``ratio32``'s table, no reference
    counting, stores through the unsigned ``ix``."""
    out[:] = 0.0
    P = c[C_P]
    ph = r.phase
    out[ix(offs[O_PHASE] + ph)] = 1.0
    live = ph != PH_OVER
    if live and r.actor == viewer:
        out[ix(offs[O_IS_ACTOR])] = 1.0
    out[ix(offs[O_NUMP] + P - 2)] = 1.0
    out[ix(offs[O_TURN])] = ratio32(r.total_turns, c[C_MAX_TURNS])  # total_turns / max_turns
    o_market = offs[O_MARKET]
    out[ix(o_market)] = ratio32(r.market[0], max(c[C_MKT], 1))  # each / max(its start, 1)
    out[ix(o_market + 1)] = ratio32(r.market[1], max(c[C_MKT + 1], 1))
    out[ix(o_market + 2)] = ratio32(r.market_boats, max(c[C_MKT + 2], 1))
    out[ix(o_market + 3)] = ratio32(r.market_bandits, max(c[C_MKT + 3], 1))
    deck = 0
    for d in range(N_DESIGNS):
        deck += T.copies[d]
    out[ix(offs[O_DRAW])] = ratio32(r.deck_n, max(deck, 1))
    o_discard = offs[O_DISCARD]
    o_hand = offs[O_HAND]
    for d in range(N_DESIGNS):
        cp = max(T.copies[d], 1)
        out[ix(o_discard + d)] = ratio32(r.discard[d], cp)  # count / copies
        out[ix(o_hand + d)] = ratio32(r.hand[viewer, d], cp)
    tp = r.turn_player
    if live:
        out[ix(offs[O_PLAYED])] = 1.0 if r.played else 0.0
        if r.intent >= 0:
            out[ix(offs[O_INTENT] + r.intent)] = 1.0
        if r.intent == I_ATTACK:
            out[ix(offs[O_PVALUE])] = div10(r.pend_value)
        out[ix(offs[O_PSUM])] = ratio32(r.pay_sum, c[C_NUMBER_COST])
        out[ix(offs[O_THEFTS])] = r.thefts_left / 2.0
        if r.other >= 0:
            who = tp if viewer == r.other else r.other
            who -= viewer  # (who - viewer) % P
            if who < 0:
                who += P
            out[ix(offs[O_OTHER] + who)] = 1.0
    # Bandits: on Shelters first (by seat offset, Red before Blue), then in the Market.
    ob = offs[O_BANDIT]
    slot = 0
    q = viewer  # (viewer + rel) % P
    for rel in range(P):
        for col in range(2):
            owner = r.bandit[q, col]
            if owner >= 0 and slot < 2:
                owner -= viewer  # (owner - viewer) % P
                if owner < 0:
                    owner += P
                _bandit_block(out, ob + 16 * slot, False, rel, col, owner,
                              ratio32(r.bandit_paid[q, col], c[C_REMOVAL]))
                slot += 1
        q += 1
        if q == P:
            q = 0
    for _ in range(r.market_bandits):
        if slot < 2:
            _bandit_block(out, ob + 16 * slot, True, 0, 0, 0, np.float32(0.0))
            slot += 1
    base = offs[O_SEAT_START]
    size = offs[O_SEAT_SIZE]
    total = max(c[C_MKT] + c[C_MKT + 1], 1)
    s_present, s_actor, s_turn, s_first = offs[S_PRESENT], offs[S_ACTOR], offs[S_TURN], offs[S_FIRST]
    s_handn, s_runes, s_place, s_shelters = offs[S_HANDN], offs[S_RUNES], offs[S_PLACE], offs[S_SHELTERS]
    s_attacked = offs[S_ATTACKED]
    actor = r.actor if live else -1
    turn = tp if live else -1
    first = r.first_player
    q = viewer
    for rel in range(P):
        b = base + rel * size
        out[ix(b + s_present)] = 1.0
        if actor == q:
            out[ix(b + s_actor)] = 1.0
        if turn == q:
            out[ix(b + s_turn)] = 1.0
        if first == q:
            out[ix(b + s_first)] = 1.0
        out[ix(b + s_handn)] = div10(r.hand_n[q])
        red_loose, red_inside = r.loose[q, 0], r.inside[q, 0]
        blue_loose, blue_inside = r.loose[q, 1], r.inside[q, 1]
        out[ix(b + s_runes)] = ratio32(red_loose + blue_loose + red_inside + blue_inside, total)  # runes / all
        out[ix(b + s_place)] = div10(red_loose)
        out[ix(b + s_place + 1)] = div10(red_inside)
        out[ix(b + s_place + 2)] = div10(blue_loose)
        out[ix(b + s_place + 3)] = div10(blue_inside)
        out[ix(b + s_shelters)] = r.shelter[q, 0]
        out[ix(b + s_shelters + 1)] = r.shelter[q, 1]
        out[ix(b + s_shelters + 2)] = r.boat[q, 0]
        out[ix(b + s_shelters + 3)] = r.boat[q, 1]
        if live and r.attacked[q]:
            out[ix(b + s_attacked)] = 1.0
        q += 1
        if q == P:
            q = 0
