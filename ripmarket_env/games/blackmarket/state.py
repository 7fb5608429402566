"""Black Market's engine state: one structured record per game (batch first).

Per-seat fields have ``MAX_SEATS`` entries (seats past the player count stay unused), so
one compiled kernel serves 2, 4 and 6 players. The public face of a game is the core's:
``done``, ``actor``, ``phase``, ``mask``, ``n_legal``, ``step_rewards``, ``final_rewards``
and the event log ``ev``/``ev_n``/``ev_lost``.
"""

from __future__ import annotations

import numpy as np

from ripmarket_env.core.dtypes import allocate_fields, fields_dtype

MAX_SEATS = 6
N_SLOTS = 6
MAX_DICE = 3
MAX_EVENTS = 128

# Decision phases
PH_ACT = 0
PH_CHOOSE_DIE = 1
PH_CHOOSE_NUMBER = 2
PH_CHOOSE_SEAT = 3
PH_OVER = 4
PHASE_NAMES = ("act", "choose_die", "choose_number", "choose_seat", "game_over")
N_PHASES = 5

# Action layout (Discrete(69), BM-11)
A_FLIP = 0
A_ROTATE = 18
A_BUY = 36
A_DRAW = 48
A_EFFECT = 54
A_SLOT = 58
A_SEAT = 64
NUM_ACTIONS = 69

_FIELDS = (
    ("rng", "b", np.uint64, 0),  # the game RNG's 64-bit state (BM-12.2)
    ("map_card", "bm", np.int8, -1),
    ("map_down", "bm", np.int8, 0),
    ("map_side", "bm", np.int8, 0),
    ("map_seen", "bm", np.int8, 0),
    ("pdeck", "bK", np.int8, -1),
    ("pdeck_n", "b", np.int16, 0),
    ("hdeck", "bH", np.int8, -1),
    ("hdeck_n", "b", np.int16, 0),
    ("hdisc", "bh", np.int16, 0),
    ("hand", "bph", np.int16, 0),
    ("hand_n", "bp", np.int16, 0),
    ("points", "bp", np.int16, 0),
    ("owned", "bpd", np.int8, 0),
    ("spent", "bpd", np.int8, 0),
    ("used", "bd", np.int8, 0),
    ("bought", "bd", np.int8, 0),
    ("dice", "bx", np.int8, 0),
    ("dice_used", "bx", np.int8, 0),
    ("n_dice", "b", np.int8, 0),
    ("pend", "b", np.int8, -1),
    ("pend_die", "b", np.int8, -1),
    ("turn_player", "b", np.int8, 0),
    ("first_player", "b", np.int8, 0),
    ("turn", "b", np.int16, 0),
    ("phase", "b", np.int8, PH_OVER),
    ("actor", "b", np.int8, 0),
    ("done", "b", np.bool_, False),
    ("end_reason", "b", np.int8, -1),
    ("winners", "bp", np.bool_, False),
    ("final_rewards", "bp", np.float32, 0.0),
    ("step_rewards", "bp", np.float32, 0.0),
    ("mask", "bA", np.bool_, False),
    ("n_legal", "b", np.int16, 0),
    ("steps", "b", np.int32, 0),
    ("ev", "bEe", np.int16, 0),
    ("ev_n", "b", np.int16, 0),
    ("ev_turn", "b", np.int16, 0),
    ("ev_lost", "b", np.int32, 0),
)

FIELD_NAMES = tuple(f[0] for f in _FIELDS)


def _dims(db) -> dict:
    return {
        "p": MAX_SEATS, "m": N_SLOTS, "K": db.point_deck_size, "H": db.hand_deck_size, "h": 3,
        "d": db.n_designs, "x": MAX_DICE, "A": NUM_ACTIONS, "E": MAX_EVENTS, "e": 4,
    }


def state_dtype(db) -> np.dtype:
    """One record per game (per-seat fields at ``MAX_SEATS`` entries, ``core.dtypes``)."""
    return fields_dtype(_FIELDS, _dims(db))


def allocate(batch: int, db) -> np.ndarray:
    return allocate_fields(batch, state_dtype(db), _FIELDS)


def tables_from_db(db) -> np.ndarray:
    """The card data as one record (array of length 1) for the kernels.

    ``colour``/``points``/``copies``/``prim``/``one_time``/``amount`` per design;
    ``prim_design[k]`` the design of primitive k (-1 if none); ``hand_copies`` per kind;
    ``eff_index``/``spent_index`` the design's place among effect / one-time designs.
    """
    from ripmarket_env.games.blackmarket.cards import COLOURS, N_PRIMITIVES, PRIM_CODES

    D = db.n_designs
    dt = np.dtype([
        ("colour", np.int8, (D,)), ("points", np.int8, (D,)), ("copies", np.int8, (D,)),
        ("prim", np.int8, (D,)), ("one_time", np.int8, (D,)), ("amount", np.int8, (D,)),
        ("prim_design", np.int8, (N_PRIMITIVES,)), ("hand_copies", np.int16, (3,)),
        ("eff_index", np.int8, (D,)), ("spent_index", np.int8, (D,)),
    ], align=True)
    tb = np.zeros(1, dtype=dt)
    t = tb[0]
    t["prim_design"][:] = -1
    ne = ns = 0
    for c in db.point:
        t["colour"][c.id] = COLOURS.index(c.colour)
        t["points"][c.id] = c.points
        t["copies"][c.id] = c.copies
        t["prim"][c.id] = -1 if c.primitive is None else PRIM_CODES[c.primitive]
        t["one_time"][c.id] = int(c.one_time)
        t["amount"][c.id] = c.amount
        t["eff_index"][c.id] = -1
        t["spent_index"][c.id] = -1
        if c.primitive is not None:
            t["prim_design"][PRIM_CODES[c.primitive]] = c.id
            t["eff_index"][c.id] = ne
            ne += 1
            if c.one_time:
                t["spent_index"][c.id] = ns
                ns += 1
    t["hand_copies"][:] = db.hand_copies()
    return tb
