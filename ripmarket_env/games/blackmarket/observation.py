"""Black Market's observation: one flat float32 vector of named pieces (BM-11.2).

Seen from one seat, the viewer (any seat may be the viewer). Seat block j describes the
player j seats clockwise from the viewer. A viewer sees its own hand and every public
fact; other hands only by size; an unseen map card (variant ``refill="face_down"``) by
nobody. With the packaged cards the vector has 324 entries, the rulings' layout.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ripmarket_env.core.kernels import div10, ix, ratio32
from ripmarket_env.core.spec import Layout, Piece
from ripmarket_env.games.blackmarket.config import C_MAX_TURNS, C_P, C_TARGET, C_TEAMS
from ripmarket_env.games.blackmarket.state import MAX_DICE, MAX_SEATS, N_PHASES, N_SLOTS, PH_OVER

GLOBAL = "global"
SEAT = "seat"


def pieces(db) -> tuple[Piece, ...]:
    D = db.n_designs
    ne = len(db.effect_designs)
    ns = len(db.one_time_designs)
    return (
        Piece("phase", N_PHASES, GLOBAL, "one-hot decision phase: act, choose_die, choose_number, choose_seat, game_over"),
        Piece("is_actor", 1, GLOBAL, "1 if the viewer decides next"),
        Piece("num_players", 3, GLOBAL, "one-hot player count 2, 4, 6"),
        Piece("teams", 1, GLOBAL, "1 in team mode"),
        Piece("turn", 1, GLOBAL, "turns taken / max_turns"),
        Piece("dice", 6, GLOBAL, "unused dice showing k = 1..6, count / 3"),
        Piece("map", N_SLOTS * (D + 3), GLOBAL,
              f"per slot 1..6 ({D + 3} each): present, design one-hot ({D}), face-down, faces the viewer's side"),
        Piece("point_deck", 1 + D, GLOBAL, "unseen Point Cards / deck size; per design, count unseen / copies"),
        Piece("hand_deck", 4, GLOBAL, "Hand deck cards / deck size; Hand discard Red, Black, Flip / copies"),
        Piece("hand", 3, GLOBAL, "the viewer's Red, Black, Flip / 10"),
        Piece("effects_used", ne, GLOBAL, "uses this turn of each effect design by the turn player / copies"),
        Piece("pending", 9, GLOBAL, "effect awaiting a choice (reroll, set die, steal); the set die's number one-hot (6)"),
        Piece("side_points", 2, GLOBAL, "the viewer's side, the other side / target"),
        Piece("present", 1, SEAT, "the seat exists"),
        Piece("same_side", 1, SEAT, "on the viewer's side"),
        Piece("actor", 1, SEAT, "decides next"),
        Piece("first_player", 1, SEAT, "took the game's first turn"),
        Piece("points", 1, SEAT, "own points / target"),
        Piece("hand_size", 1, SEAT, "Hand Cards / 10"),
        Piece("owned", D, SEAT, "score pile, count per design / copies"),
        Piece("spent", ns, SEAT, "one-time effect designs spent"),
    )


def layout(db) -> Layout:
    return Layout.of(pieces(db), MAX_SEATS)


#: The table's pieces (``num_players``, ``teams``) come before every piece whose size
#: depends on the cards: at these places for every card database.
_NUM_PLAYERS = slice(N_PHASES + 1, N_PHASES + 4)
_TEAMS = N_PHASES + 4
_TABLE_KEYS = np.array([[f"{n}p-ffa", f"{n}p-teams"] for n in (2, 4, 6)], dtype=object)


def table_keys(observations: np.ndarray) -> np.ndarray:
    """``GameSpec.table_keys``: each row's table, ``"<N>p-teams"`` or ``"<N>p-ffa"``, from
    the ``num_players`` one-hot and the ``teams`` flag (BM-1.3, BM-11.2)."""
    obs = np.asarray(observations)
    return _TABLE_KEYS[obs[:, _NUM_PLAYERS].argmax(axis=1), (obs[:, _TEAMS] > 0.5).astype(np.int64)]


def observation_bounds(db, rules) -> tuple[np.ndarray, np.ndarray]:
    """Per-feature (low, high): fractions in [0, 1] except points (up to the deck's
    total / target) and hand sizes (up to the limit, or the whole Hand deck) / 10."""
    lay = layout(db)
    low = np.zeros(lay.size, np.float32)
    high = np.ones(lay.size, np.float32)
    pts = db.total_points / rules.target_points
    hand = (rules.hand_limit or db.hand_deck_size) / 10.0
    special = {"points": pts, "side_points": pts, "hand_size": hand, "hand": hand}
    for p in lay.pieces:
        if p.name in special:
            for seat in range(MAX_SEATS if p.scope == SEAT else 1):
                high[lay.slice(p.name, seat)] = max(1.0, special[p.name])
    return low, high


def named_view(obs: np.ndarray, lay: Layout) -> dict:
    """A dict of named pieces of one observation (seat pieces as (6, size) arrays)."""
    return lay.named_view(obs)


(O_PHASE, O_IS_ACTOR, O_NUMP, O_TEAMS, O_TURN, O_DICE, O_MAP, O_PDECK, O_HDECK, O_HAND, O_EFF,
 O_PEND, O_SIDEPTS, S_PRESENT, S_SAME, S_ACTOR, S_FIRST, S_POINTS, S_HANDN, S_OWNED, S_SPENT,
 O_SEAT_START, O_SEAT_SIZE) = range(23)


@njit(cache=True, nogil=True, _nrt=False)
def encode_obs(r, T, c, viewer, offs, out):
    """Write one game's observation for ``viewer`` into ``out`` (float32 row).

    Written for speed, with the same float32 bits as the plain formulas in the comments
    (see R.I.P. Market's ``encode_obs``): offsets read once, seats advanced by one instead
    of ``% P``, quotients of small integers read from ``ratio32``'s table, no reference
    counting, stores through the unsigned ``ix``, the unseen Point Cards counted in the
    seat loop, and a seat's spent one-time designs looked up among the designs it owns
    only."""
    out[:] = 0.0
    P = c[C_P]
    D = T.copies.shape[0]
    tgt = c[C_TARGET]
    ph = r.phase
    live = not r.done
    out[ix(offs[O_PHASE] + (ph if live else PH_OVER))] = 1.0
    out[ix(offs[O_IS_ACTOR])] = 1.0 if (live and r.actor == viewer) else 0.0
    out[ix(offs[O_NUMP] + P // 2 - 1)] = 1.0
    out[ix(offs[O_TEAMS])] = 1.0 if c[C_TEAMS] != 0 else 0.0
    out[ix(offs[O_TURN])] = ratio32(r.turn, c[C_MAX_TURNS])  # turn / max_turns
    if live:
        o_dice = offs[O_DICE] - 1
        for i in range(r.n_dice):
            if r.dice_used[i] == 0:
                out[ix(o_dice + r.dice[i])] += 1.0 / MAX_DICE
    vside = viewer % 2
    unseen = r.pdeck_n
    o_pdeck = offs[O_PDECK]
    # Unseen copies of each design: its copies less every seat's owned ones (subtracted in
    # the seat loop below, which reads them anyway) and the seen map cards, counted in the
    # row's own entries (small integers, exact in float32), divided by the copies at the end.
    o_left = o_pdeck + 1
    for d in range(D):
        out[ix(o_left + d)] = T.copies[d]
    o_map = offs[O_MAP]
    for s in range(N_SLOTS):
        b = o_map + s * (D + 3)
        d = r.map_card[s]
        if d >= 0:
            out[ix(b)] = 1.0
            if r.map_seen[s] != 0:
                out[ix(b + 1 + d)] = 1.0
                if d < D:
                    out[ix(o_left + d)] -= 1
            else:
                unseen += 1
            out[ix(b + 1 + D)] = 1.0 if r.map_down[s] != 0 else 0.0
            out[ix(b + 2 + D)] = 1.0 if r.map_side[s] == vside else 0.0
    out[ix(o_pdeck)] = ratio32(unseen, r.pdeck.shape[0])
    o_hdeck = offs[O_HDECK]
    o_hand = offs[O_HAND]
    out[ix(o_hdeck)] = ratio32(r.hdeck_n, r.hdeck.shape[0])
    for k in range(3):
        n = T.hand_copies[k]
        out[ix(o_hdeck + 1 + k)] = ratio32(r.hdisc[k], n) if n > 0 else np.float32(0.0)
        out[ix(o_hand + k)] = div10(r.hand[viewer, k])
    o_eff = offs[O_EFF]
    for d in range(D):
        e = T.eff_index[d]
        if e >= 0 and r.used[d] != 0:  # a zero count leaves the zeroed entry (0 / n is +0.0)
            out[ix(o_eff + e)] = ratio32(r.used[d], T.copies[d])
    if live and r.pend >= 0:
        o_pend = offs[O_PEND]
        j = 0 if r.pend == 0 else (1 if r.pend == 1 else 2)
        out[ix(o_pend + j)] = 1.0
        if r.pend_die >= 0:
            out[ix(o_pend + 3 + r.dice[r.pend_die] - 1)] = 1.0
    base = offs[O_SEAT_START]
    size = offs[O_SEAT_SIZE]
    s_present, s_same, s_actor, s_first = offs[S_PRESENT], offs[S_SAME], offs[S_ACTOR], offs[S_FIRST]
    s_points, s_handn, s_owned, s_spent = offs[S_POINTS], offs[S_HANDN], offs[S_OWNED], offs[S_SPENT]
    actor = r.actor if live else -1
    first = r.first_player
    mine = 0  # the sides' points
    theirs = 0
    q = viewer  # the seat of block rel: (viewer + rel) % P
    for rel in range(P):
        b = base + rel * size
        out[ix(b + s_present)] = 1.0
        same = q % 2 == vside
        if same:
            mine += r.points[q]
        else:
            theirs += r.points[q]
        out[ix(b + s_same)] = 1.0 if same else 0.0
        out[ix(b + s_actor)] = 1.0 if actor == q else 0.0
        out[ix(b + s_first)] = 1.0 if first == q else 0.0
        out[ix(b + s_points)] = ratio32(r.points[q], tgt)
        out[ix(b + s_handn)] = div10(r.hand_n[q])
        so = b + s_owned
        ss = b + s_spent
        ow = r.owned[q]
        sp = r.spent[q]
        for d in range(D):
            owned = ow[ix(d)]
            if owned != 0:  # most designs are owned by nobody; 0 / n is the zeroed +0.0
                out[ix(so + d)] = ratio32(owned, T.copies[ix(d)])
                out[ix(o_left + d)] -= owned
                # Only owned designs are spent: a copy is spent by using it, which needs
                # it owned, and a bought card stays in the score pile (BM-4.4, BM-6.4;
                # ``invariants.check_game``: spent <= owned, checked in random play).
                if sp[ix(d)] > 0:
                    si = T.spent_index[ix(d)]
                    if si >= 0:
                        out[ix(ss + si)] = 1.0
        q += 1
        if q == P:
            q = 0
    out[ix(offs[O_SIDEPTS])] = ratio32(mine, tgt)  # points / target
    out[ix(offs[O_SIDEPTS] + 1)] = ratio32(theirs, tgt)
    for d in range(D):
        out[ix(o_left + d)] = ratio32(np.int64(out[ix(o_left + d)]), T.copies[d])  # left / copies
