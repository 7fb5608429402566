"""Observation: one flat float32 vector built from named pieces (R-12.3).

Seats are relative to the viewer: seat block 0 is the viewer, block k the player k seats
clockwise. A viewer sees its own hand and Shadow hand and every public fact, never
another player's hand or a face-down card before its reveal. ``pieces()`` is the single
source for the layout: the encoder's offsets, ``named_view`` and the table in
``docs/ENV.md`` are all built from it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from ripmarket_env.core.kernels import clear_row, div3, div10, ix, ratio32
from ripmarket_env.core.spec import Layout as _CoreLayout
from ripmarket_env.core.spec import Piece  # scope: "global" or "seat" (repeated for each of the 10 seat blocks)
from ripmarket_env.games.ripmarket.config import C_HP, C_MAX_ROUNDS, C_P
from ripmarket_env.games.ripmarket.state import MAX_MARKET, MAX_SEATS, N_PHASES

GLOBAL = "global"
SEAT = "seat"


def pieces(n_living: int, n_shadow: int) -> tuple[Piece, ...]:
    DL, DS = n_living, n_shadow
    return (
        Piece("phase", N_PHASES, GLOBAL, "one-hot decision phase: acquire, play, choose_target, "
              "choose_market_slot, choose_replacement, ghost, choose_victim, game_over"),
        Piece("is_actor", 1, GLOBAL, "1 if the viewer makes the next decision"),
        Piece("num_players", 9, GLOBAL, "one-hot player count (2..10)"),
        Piece("round", 1, GLOBAL, "round number / max_rounds"),
        Piece("rule", 4, GLOBAL, "one-hot active rule change: none, low_tide, earthquake, cull"),
        Piece("deck_size", 1, GLOBAL, "cards in the Living Deck / Living Deck size"),
        Piece("shadow_deck_size", 1, GLOBAL, "cards in the Shadow Deck / Shadow Deck size"),
        Piece("discard", DL, GLOBAL, "Living discard pile, count per design / 3"),
        Piece("market", MAX_MARKET * DL, GLOBAL, "Market slot 0..3, one-hot design per slot"),
        Piece("hand", DL, GLOBAL, "the viewer's hand, count per design / 3"),
        Piece("shadow_hand", DS, GLOBAL, "the viewer's Shadow hand, count per design / 3"),
        Piece("pending_card", DL, GLOBAL, "one-hot: the viewer's card whose choice is pending"),
        Piece("pending_shadow", DS, GLOBAL, "one-hot: the viewer's Shadow card awaiting a victim"),
        Piece("epilogue", 1, GLOBAL, "1 during the 2-player haunting epilogue round"),
        Piece("present", 1, SEAT, "1 if this seat exists in this game"),
        Piece("alive", 1, SEAT, "1 if living, 0 if a Ghost"),
        Piece("hp", 1, SEAT, "HP / start HP"),
        Piece("hand_size", 1, SEAT, "cards in hand / 10"),
        Piece("shadow_hand_size", 1, SEAT, "Shadow cards in hand / 3"),
        Piece("first_player", 1, SEAT, "1 if holding the First Player token"),
        Piece("acted", 1, SEAT, "1 if this seat has taken its turn this round"),
        Piece("actor", 1, SEAT, "1 if this seat makes the next decision"),
        Piece("turn_position", 1, SEAT, "position in this round's turn order / (players - 1)"),
        Piece("acquired", 2, SEAT, "this round's acquisition: [from deck, from Market]"),
        Piece("market_take", DL, SEAT, "one-hot design taken from the Market this round (public)"),
        Piece("face_down", 1, SEAT, "1 if the seat's card is on the table face-down"),
        Piece("played", DL, SEAT, "one-hot design on the table (hidden while face-down, except to its owner)"),
        Piece("target", MAX_SEATS, SEAT, "one-hot seat (relative to the viewer) the played card targets"),
        Piece("attached", DS, SEAT, "Shadow cards attached this round, count per design / 3"),
        Piece("last_damage", 1, SEAT, "damage taken at the last resolution"),
        Piece("last_score", 1, SEAT, "final score at the last resolution / 10"),
    )


@dataclass(frozen=True)
class Layout(_CoreLayout):
    """The core ``Layout`` (offsets, slices, the docs' table of the pieces)."""


def table_keys(observations: np.ndarray) -> np.ndarray:
    """``GameSpec.table_keys``: each row's table, ``"<N>p"``, from the ``num_players``
    one-hot (R-12.3), at the same place for every card set."""
    return _TABLE_KEYS[np.asarray(observations)[:, _NUM_PLAYERS].argmax(axis=1)]


def layout(n_living: int, n_shadow: int) -> Layout:
    return Layout.of(pieces(n_living, n_shadow), MAX_SEATS)


_NUM_PLAYERS = layout(1, 1).slice("num_players")  # the one-hot's place: the same for every card set
_TABLE_KEYS = np.array([f"{n}p" for n in range(2, MAX_SEATS + 1)], dtype=object)


def piece_bounds(db) -> dict[str, tuple[float, float]]:
    """(low, high) of every piece of the layout for the card database ``db`` (a ``CardDB``).

    Every piece is a one-hot, a 0/1 flag or a fraction in [0, 1] except those computed
    here: counts per design (at most copies / 3), hand sizes (at most the deck size / 10
    or / 3), attached Shadow counts, ``last_damage`` (at most 10) and ``last_score`` / 10,
    which is signed. Its bound is the largest |score| the database allows: the top base
    value plus, for up to 10 cards on the table, each card's largest score change (a
    per-Ghost bonus counted for 9 Ghosts), plus up to 9 attached Shadow cards' changes.
    """
    from ripmarket_env.games.ripmarket.cards.registry import (
        OP_SCORE_BOARD,
        OP_SCORE_SELF,
        OP_SCORE_TARGET,
        OP_SHADOW_SCORE,
        OP_SHADOW_TRIGGER,
        SELF_CONDS,
        TRIGGER_KINDS,
    )
    from ripmarket_env.games.ripmarket.state import MAX_ATTACHED

    lmax = 0
    for d in range(db.n_living):
        tot = 0
        for k in range(int(db.living_nops[d])):
            code, p1, p2, _ = (int(x) for x in db.living_ops[d, k])
            if code in (OP_SCORE_SELF, OP_SCORE_TARGET, OP_SCORE_BOARD):
                mult = MAX_SEATS - 1 if code == OP_SCORE_SELF and p2 == SELF_CONDS["per_ghost"] else 1
                tot += abs(p1) * mult
        lmax = max(lmax, tot)
    smax = 0
    for sd in range(db.n_shadow):
        tot = 0
        for k in range(int(db.shadow_nops[sd])):
            code, p1, p2, _ = (int(x) for x in db.shadow_ops[sd, k])
            if code == OP_SHADOW_SCORE:
                tot += abs(p1)
            elif code == OP_SHADOW_TRIGGER and p1 == TRIGGER_KINDS["score"]:
                tot += abs(p2)
        smax = max(smax, tot)
    score_bound = (int(db.living_value.max()) + MAX_SEATS * lmax + MAX_ATTACHED * smax) / 10.0
    copies = float(db.living_copies.max())
    scopies = float(db.shadow_copies.max())
    special = {
        "discard": (0.0, copies / 3.0),
        "hand": (0.0, copies / 3.0),
        "shadow_hand": (0.0, scopies / 3.0),
        "hand_size": (0.0, db.living_deck_size / 10.0),
        "shadow_hand_size": (0.0, db.shadow_deck_size / 3.0),
        "attached": (0.0, min(scopies, MAX_ATTACHED) / 3.0),
        "last_damage": (0.0, float(MAX_SEATS)),
        "last_score": (-score_bound, score_bound),
    }
    return {p.name: special.get(p.name, (0.0, 1.0)) for p in pieces(db.n_living, db.n_shadow)}


def observation_bounds(db) -> tuple[np.ndarray, np.ndarray]:
    """Per-feature float32 (low, high) of the observation vector (``piece_bounds``)."""
    lay = layout(db.n_living, db.n_shadow)
    bounds = piece_bounds(db)
    low = np.zeros(lay.size, np.float32)
    high = np.ones(lay.size, np.float32)
    for p in lay.pieces:
        lo, hi = bounds[p.name]
        for seat in range(MAX_SEATS if p.scope == SEAT else 1):
            sl = lay.slice(p.name, seat)
            low[sl] = lo
            high[sl] = hi
    return low, high


def named_view(obs: np.ndarray, lay: Layout) -> dict:
    """A dict of named pieces of one observation (seat pieces as (10, size) arrays)."""
    return lay.named_view(obs)


# Indices into the offset array (the order of ``pieces``).
(O_PHASE, O_IS_ACTOR, O_NUMP, O_ROUND, O_RULE, O_DECK, O_SDECK, O_DISCARD, O_MARKET, O_HAND,
 O_SHAND, O_PCARD, O_PSHADOW, O_EPI, S_PRESENT, S_ALIVE, S_HP, S_HANDN, S_SHANDN, S_FIRST,
 S_ACTED, S_ACTOR, S_TURNPOS, S_ACQ, S_MTAKE, S_FACEDOWN, S_PLAYED, S_TARGET, S_ATTACHED,
 S_LASTDMG, S_LASTSCORE, O_SEAT_START, O_SEAT_SIZE) = range(33)


@njit(cache=True, nogil=True, _nrt=False)
def encode_obs(r, T, c, viewer, offs, out):
    """Write one game's observation for ``viewer`` into ``out`` (float32 row).

    Written for speed, with the same float32 bits as the plain formulas in the comments:
    the offsets are read once into locals (a store into ``out`` could alias ``offs`` for
    the compiler, so it reloads them after every store otherwise), seats advance by one
    instead of ``% P``, quotients of small integers take no division (``div3``, ``div10``,
    ``ratio32``), the turn positions are one pass over ``order`` (not a search per seat),
    no reference counting (``_nrt=False``: the kernel allocates nothing; its caller
    holds the arrays), and every store indexes through ``ix`` (unsigned: numba does not
    test it for Python's negative-index wrap; every index here is >= 0)."""
    clear_row(out)
    P = c[C_P]
    DL = T.value.shape[0]
    DS = T.shadow_copies.shape[0]
    ph = r.phase
    out[ix(offs[O_PHASE] + min(ph, N_PHASES - 1))] = 1.0
    me_actor = r.actor == viewer and ph < N_PHASES - 1
    out[ix(offs[O_IS_ACTOR])] = 1.0 if me_actor else 0.0
    out[ix(offs[O_NUMP] + P - 2)] = 1.0
    out[ix(offs[O_ROUND])] = ratio32(r.round_num, c[C_MAX_ROUNDS])  # round / max_rounds
    out[ix(offs[O_RULE] + r.rule)] = 1.0
    out[ix(offs[O_DECK])] = ratio32(r.deck_n, r.deck.shape[0])
    out[ix(offs[O_SDECK])] = ratio32(r.shadow_deck_n, r.shadow_deck.shape[0])
    o_disc = offs[O_DISCARD]
    o_hand = offs[O_HAND]
    for d in range(DL):
        out[ix(o_disc + d)] = div3(r.discard[d])
        out[ix(o_hand + d)] = div3(r.hand[viewer, d])
    o_market = offs[O_MARKET]
    for k in range(MAX_MARKET):
        d = r.market[k]
        if d >= 0:
            out[ix(o_market + k * DL + d)] = 1.0
    o_shand = offs[O_SHAND]
    for sd in range(DS):
        out[ix(o_shand + sd)] = div3(r.shadow_hand[viewer, sd])
    if me_actor:
        if r.pend_card >= 0 and ph >= 2 and ph <= 4:
            out[ix(offs[O_PCARD] + r.pend_card)] = 1.0
        if r.pend_shadow >= 0:
            out[ix(offs[O_PSHADOW] + r.pend_shadow)] = 1.0
    out[ix(offs[O_EPI])] = 1.0 if r.epilogue else 0.0
    base = offs[O_SEAT_START]
    size = offs[O_SEAT_SIZE]
    hp0 = c[C_HP]
    s_present, s_alive, s_hp, s_handn = offs[S_PRESENT], offs[S_ALIVE], offs[S_HP], offs[S_HANDN]
    s_shandn, s_first, s_acted, s_actor = offs[S_SHANDN], offs[S_FIRST], offs[S_ACTED], offs[S_ACTOR]
    s_acq, s_mtake, s_facedown, s_played = offs[S_ACQ], offs[S_MTAKE], offs[S_FACEDOWN], offs[S_PLAYED]
    s_target, s_attached, s_lastdmg, s_lastscore = offs[S_TARGET], offs[S_ATTACHED], offs[S_LASTDMG], offs[S_LASTSCORE]
    actor = r.actor if ph < N_PHASES - 1 else -1
    first = r.first_player
    q = viewer  # the seat of block rel: (viewer + rel) % P
    for rel in range(P):
        b = base + rel * size
        out[ix(b + s_present)] = 1.0
        out[ix(b + s_alive)] = 1.0 if r.alive[q] else 0.0
        out[ix(b + s_hp)] = ratio32(r.hp[q], hp0)  # hp / start hp
        out[ix(b + s_handn)] = div10(r.hand_n[q])
        out[ix(b + s_shandn)] = div3(r.shadow_n[q])
        out[ix(b + s_first)] = 1.0 if first == q else 0.0
        out[ix(b + s_acted)] = 1.0 if r.acted[q] else 0.0
        out[ix(b + s_actor)] = 1.0 if actor == q else 0.0
        acq = r.acquired[q]
        if acq > 0:
            out[ix(b + s_acq + acq - 1)] = 1.0
        if r.acq_card[q] >= 0:
            out[ix(b + s_mtake + r.acq_card[q])] = 1.0
        d = r.played[q]
        if d >= 0:
            hidden = r.face_down[q]
            if hidden:
                out[ix(b + s_facedown)] = 1.0
            if not hidden or q == viewer:
                out[ix(b + s_played + d)] = 1.0
            t = r.target[q]
            if t >= 0:
                t -= viewer  # (t - viewer) % P
                if t < 0:
                    t += P
                out[ix(b + s_target + t)] = 1.0
        for i in range(r.attached_n[q]):
            out[ix(b + s_attached + r.attached[q, i])] += 1.0 / 3.0
        out[ix(b + s_lastdmg)] = r.last_damage[q]
        out[ix(b + s_lastscore)] = div10(r.last_score[q])
        q += 1
        if q == P:
            q = 0
    # turn position / (P - 1) of each seat in this round's order (the last i of a seat)
    s_turnpos = base + offs[S_TURNPOS]
    for i in range(P):
        q = r.order[i]
        if q >= 0 and q < P:
            q -= viewer
            if q < 0:
                q += P
            out[ix(s_turnpos + q * size)] = ratio32(i, P - 1)
