"""Engine state: named arrays with the batch dimension first (one row per game).

``State`` is a ``namedtuple`` so numba kernels can take it whole. ``Tables`` holds the
card database compiled to numeric arrays. Fields starting with ``_`` do not exist: the
public face of a game is ``phase``/``actor`` (who decides), ``mask`` (legal actions),
``done`` and ``step_rewards``/``final_rewards``; everything else is rules internals.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

MAX_SEATS = 10
MAX_MARKET = 4
MAX_ATTACHED = 9  # at most 9 Ghosts can haunt one player

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
    ("rng", "b", np.int64, 0),
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
    ("acted", "bp", np.bool_, False),
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
    ("round", "b", np.int16, 0),
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
    ("steps", "b", np.int32, 0),
)

FIELD_NAMES = tuple(f[0] for f in _FIELDS)
State = namedtuple("State", FIELD_NAMES)
Tables = namedtuple(
    "Tables",
    ["value", "ops", "nops", "face_down", "choice", "copies", "shadow_ops", "shadow_nops", "shadow_copies"],
)


def num_actions(n_living: int, n_shadow: int) -> int:
    return 1 + MAX_MARKET + n_living + (MAX_SEATS - 1) + MAX_MARKET + 1 + n_shadow


def allocate(batch: int, num_players: int, db) -> State:
    """Zeroed state for ``batch`` games of ``num_players`` seats (not yet reset)."""
    dims = {
        "b": batch,
        "p": num_players,
        "l": db.n_living,
        "s": db.n_shadow,
        "L": db.living_deck_size,
        "S": db.shadow_deck_size,
        "m": MAX_MARKET,
        "a": MAX_ATTACHED,
        "A": num_actions(db.n_living, db.n_shadow),
    }
    arrays = []
    for _name, spec, dtype, fill in _FIELDS:
        shape = tuple(dims[ch] for ch in spec)
        arrays.append(np.full(shape, fill, dtype=dtype))
    return State(*arrays)


def tables_from_db(db) -> Tables:
    return Tables(
        np.ascontiguousarray(db.living_value, dtype=np.int8),
        np.ascontiguousarray(db.living_ops, dtype=np.int8),
        np.ascontiguousarray(db.living_nops, dtype=np.int8),
        np.ascontiguousarray(db.living_face_down, dtype=np.bool_),
        np.ascontiguousarray(db.living_choice, dtype=np.int8),
        np.ascontiguousarray(db.living_copies, dtype=np.int8),
        np.ascontiguousarray(db.shadow_ops, dtype=np.int8),
        np.ascontiguousarray(db.shadow_nops, dtype=np.int8),
        np.ascontiguousarray(db.shadow_copies, dtype=np.int8),
    )


def take_rows(state: State, idx) -> State:
    """A new State holding copies of the given game rows (clone)."""
    return State(*(np.array(a[idx], copy=True) for a in state))


def put_rows(dst: State, dst_idx, src: State, src_idx=slice(None)) -> None:
    """Copy game rows from ``src`` into ``dst`` in place."""
    for d, s in zip(dst, src):
        d[dst_idx] = s[src_idx]
