"""Engine state: named arrays with the batch dimension first (one row per game).

The state is a numpy structured array with one record per game: ``state["hp"]`` is the
(batch, seats) HP array, ``state[g]`` one game's record, and a clone is a copy of rows.
Kernels take one record, so a call passes one pointer however many fields there are
(this keeps numba's compile time to seconds). The public face of a game is
``phase``/``actor`` (who decides), ``mask`` (legal actions), ``done`` and
``step_rewards``/``final_rewards``; everything else is rules internals.
"""

from __future__ import annotations

import numpy as np

from ripmarket_env.core.dtypes import allocate_fields, fields_dtype

MAX_SEATS = 10
MAX_MARKET = 4
MAX_ATTACHED = 9  # at most 9 Ghosts can haunt one player
# Event log (games/ripmarket/events.py): rows of (kind, seat, a, b) written during one step. A step
# holds at most a round's turns plus one resolution (about 130 rows at 10 players in the
# worst case); rows past the end are counted in ``ev_lost`` instead of written.
MAX_EVENTS = 256

# Decision phases (what the actor is asked).
PH_ACQUIRE = 0
PH_PLAY = 1
PH_TARGET = 2
PH_MARKET = 3
PH_REPLACE = 4
PH_GHOST = 5
PH_GHOST_TARGET = 6
PH_OVER = 7
# Internal phases, never shown to an agent: the engine runs through them.
PH_TURN_START = 8
PH_RESOLVE = 9

PHASE_NAMES = (
    "acquire", "play", "choose_target", "choose_market_slot", "choose_replacement",
    "ghost", "choose_victim", "game_over",
)
N_PHASES = 8

# `acquired` codes
ACQ_NONE = 0
ACQ_DECK = 1
ACQ_MARKET = 2

# Fields: (name, shape suffix builder, dtype, fill)
_FIELDS = (
    ("rng", "b", np.uint64, 0),  # the game RNG's 64-bit state
    ("hp", "bp", np.int8, 0),
    ("alive", "bp", np.bool_, False),
    ("hand", "bpl", np.int8, 0),
    ("hand_n", "bp", np.int16, 0),
    ("shadow_hand", "bps", np.int8, 0),
    ("shadow_n", "bp", np.int8, 0),
    ("deck", "bL", np.int8, -1),
    ("deck_n", "b", np.int16, 0),
    ("discard", "bl", np.int8, 0),
    ("discard_n", "b", np.int16, 0),
    ("market", "bm", np.int8, -1),
    ("shadow_deck", "bS", np.int8, -1),
    ("shadow_deck_n", "b", np.int16, 0),
    ("shadow_discard", "bs", np.int8, 0),
    ("shadow_discard_n", "b", np.int16, 0),
    ("played", "bp", np.int8, -1),
    ("face_down", "bp", np.bool_, False),
    ("play_event", "bp", np.int16, 0),
    ("target", "bp", np.int8, -1),
    ("attached", "bpa", np.int8, -1),
    ("attached_n", "bp", np.int8, 0),
    ("attach_event", "bpa", np.int16, 0),
    ("fired", "bpa", np.bool_, False),
    ("acquired", "bp", np.int8, 0),
    ("took", "bp", np.int8, 0),  # this turn's takes: bit 1 Living Deck, bit 2 Market
    ("acted", "bp", np.bool_, False),
    ("acq_card", "bp", np.int8, -1),
    ("rule", "b", np.int8, 0),
    ("event", "b", np.int16, 0),
    ("first_player", "b", np.int8, 0),
    ("order", "bp", np.int8, 0),
    ("turn", "b", np.int8, 0),
    ("phase", "b", np.int8, PH_OVER),
    ("actor", "b", np.int8, 0),
    ("pend_card", "b", np.int8, -1),
    ("pend_op", "b", np.int8, 0),
    ("pend_shadow", "b", np.int8, -1),
    ("replaced", "b", np.bool_, False),
    ("round_num", "b", np.int16, 0),
    ("done", "b", np.bool_, False),
    ("ending", "b", np.bool_, False),
    ("epilogue", "b", np.bool_, False),
    ("elim", "bp", np.int16, -1),
    ("elim_counter", "b", np.int16, 0),
    ("death_round", "bp", np.int16, -1),
    ("winners", "bp", np.bool_, False),
    ("final_rewards", "bp", np.float32, 0.0),
    ("step_rewards", "bp", np.float32, 0.0),
    ("mask", "bA", np.bool_, False),
    ("n_legal", "b", np.int16, 0),
    ("last_score", "bp", np.int16, 0),
    ("last_damage", "bp", np.int8, 0),
    ("last_competed", "bp", np.bool_, False),
    ("last_rule", "b", np.int8, 0),
    ("shadow_swings", "b", np.int16, 0),
    ("spared_rounds", "b", np.int16, 0),  # rounds whose damage sudden death did not deal
    ("steps", "b", np.int32, 0),
    ("work", "bwp", np.int64, 0),  # scratch rows for round resolution
    # Event log of the latest step (events.py): rows (kind, seat, a, b), ev_n of them;
    # ev_round is the round number (1-based) the step began in; ev_lost counts rows that
    # did not fit since the game's reset.
    ("ev", "bEe", np.int16, 0),
    ("ev_n", "b", np.int16, 0),
    ("ev_round", "b", np.int16, 0),
    ("ev_lost", "b", np.int32, 0),
)

FIELD_NAMES = tuple(f[0] for f in _FIELDS)

_TABLE_FIELDS = (
    ("value", "l", np.int8),
    ("ops", "lko", np.int8),
    ("nops", "l", np.int8),
    ("face_down", "l", np.int8),
    ("choice", "l", np.int8),
    ("copies", "l", np.int8),
    ("shadow_ops", "sko", np.int8),
    ("shadow_nops", "s", np.int8),
    ("shadow_copies", "s", np.int8),
)


def num_actions(n_living: int, n_shadow: int) -> int:
    return 1 + MAX_MARKET + n_living + (MAX_SEATS - 1) + MAX_MARKET + 1 + n_shadow


def _dims(db) -> dict:
    return {
        "p": MAX_SEATS,
        "w": 9,
        "l": db.n_living,
        "s": db.n_shadow,
        "L": db.living_deck_size,
        "S": db.shadow_deck_size,
        "m": MAX_MARKET,
        "a": MAX_ATTACHED,
        "A": num_actions(db.n_living, db.n_shadow),
        "k": db.living_ops.shape[1],
        "o": db.living_ops.shape[2],
        "E": MAX_EVENTS,
        "e": 4,
    }


def state_dtype(db) -> np.dtype:
    """One record per game. Per-seat fields always have MAX_SEATS entries (seats past
    the game's player count stay unused), so one compiled kernel serves every count.
    Boolean per-seat arrays are stored as int8 (numba's records need it)."""
    return fields_dtype(_FIELDS, _dims(db))


def allocate(batch: int, db) -> np.ndarray:
    """The state of ``batch`` games, not yet reset: a structured array, one row per game.

    ``state["hp"]`` is the (batch, seats) HP array, ``state[g]`` game g's record.
    """
    return allocate_fields(batch, state_dtype(db), _FIELDS)


def tables_from_db(db) -> np.ndarray:
    """The card database compiled into one record (array of length 1) for the kernels."""
    dims = _dims(db)
    dt = np.dtype([(n, t, tuple(dims[ch] for ch in shape)) for n, shape, t in _TABLE_FIELDS], align=True)
    tb = np.zeros(1, dtype=dt)
    tb["value"][0] = db.living_value
    tb["ops"][0] = db.living_ops
    tb["nops"][0] = db.living_nops
    tb["face_down"][0] = db.living_face_down
    tb["choice"][0] = db.living_choice
    tb["copies"][0] = db.living_copies
    tb["shadow_ops"][0] = db.shadow_ops
    tb["shadow_nops"][0] = db.shadow_nops
    tb["shadow_copies"][0] = db.shadow_copies
    return tb
