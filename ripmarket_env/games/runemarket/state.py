"""The Rune Market's engine state: one structured-array record per game (batch first).

The public face every game of the zoo shares is ``done``, ``actor``, ``phase``, ``mask``,
``n_legal``, ``step_rewards``, ``final_rewards`` and the event log ``ev``/``ev_n``/
``ev_lost``; everything else is the rules' own. Per-seat fields have ``MAX_SEATS`` rows,
so one compiled kernel serves every player count.
"""

from __future__ import annotations

import numpy as np

from ripmarket_env.core.dtypes import allocate_fields, fields_dtype

MAX_SEATS = 6
N_DESIGNS = 13
MAX_DECK = 64
NUM_ACTIONS = 50
MAX_EVENTS = 192

# Decision phases (RM-8.1; the rulings' table).
PH_START = 0
PH_RUNE_BUY = 1
PH_HAND = 2
PH_CHOOSE_CARD = 3
PH_PAYMENT = 4
PH_CHOOSE_OPP = 5
PH_CHOOSE_STEAL = 6
PH_DEFEND = 7
PH_CHOOSE_SHELTER = 8
PH_OVER = 9
PH_TURN_START = 10  # internal: the engine runs through it
PHASE_NAMES = ("start", "rune_buy", "hand", "choose_card", "payment", "choose_opponent", "choose_steal",
               "defend", "choose_shelter", "game_over")
N_PHASES = 10

# Pending intents (observation piece ``pending_intent``).
I_NONE = -1
I_THEFT = 0
I_DOUBLE = 1
I_ATTACK = 2
I_RUNE_RED = 3
I_RUNE_BLUE = 4
I_BOAT_NUM = 5
I_BANDIT_NUM = 6
I_BOAT_RUNES = 7
I_BANDIT_RUNES = 8
I_PAY_RED = 9
I_PAY_BLUE = 10
INTENT_NAMES = ("theft", "double theft", "attack", "Red Rune", "Blue Rune", "Boat Shelter by numbers",
                "Bandit by numbers", "Boat Shelter by Runes", "Bandit by Runes", "pay the Red Bandit",
                "pay the Blue Bandit")

_FIELDS = (
    ("rng", (), np.uint64, 0),  # the game RNG's 64-bit state (RM-8.3)
    ("market", (2,), np.int8, 0),  # Runes in the Market: Red, Blue
    ("market_boats", (), np.int8, 0),
    ("market_bandits", (), np.int8, 0),
    ("removed_bandits", (), np.int8, 0),
    ("hand", (MAX_SEATS, N_DESIGNS), np.int8, 0),
    ("hand_n", (MAX_SEATS,), np.int16, 0),
    ("deck", (MAX_DECK,), np.int8, -1),
    ("deck_n", (), np.int16, 0),
    ("discard", (N_DESIGNS,), np.int8, 0),
    ("discard_n", (), np.int16, 0),
    ("shelter", (MAX_SEATS, 2), np.int8, 0),  # a Shelter of colour c on the table
    ("boat", (MAX_SEATS, 2), np.int8, 0),  # a Boat Shelter inside it
    ("inside", (MAX_SEATS, 2), np.int8, 0),  # Runes inside it
    ("loose", (MAX_SEATS, 2), np.int8, 0),  # loose Runes of colour c
    ("bandit", (MAX_SEATS, 2), np.int8, -1),  # owner seat of the Bandit on it, -1 none
    ("bandit_paid", (MAX_SEATS, 2), np.int16, 0),
    ("turns", (MAX_SEATS,), np.int16, 0),  # turns each seat has started
    ("total_turns", (), np.int32, 0),
    ("attacked", (MAX_SEATS,), np.int8, 0),
    ("turn_player", (), np.int8, 0),
    ("first_player", (), np.int8, 0),
    ("stage", (), np.int8, 0),  # 1..3: the turn's stage
    ("played", (), np.int8, 0),  # a hand card was played this turn
    ("intent", (), np.int8, I_NONE),
    ("pend_value", (), np.int8, 0),  # the attack card's value
    ("pay_sum", (), np.int16, 0),
    ("pay_colour", (), np.int8, 0),
    ("thefts_left", (), np.int8, 0),
    ("other", (), np.int8, -1),  # victim / defender
    ("phase", (), np.int8, PH_OVER),
    ("actor", (), np.int8, 0),
    ("done", (), np.bool_, False),
    ("end_reason", (), np.int8, 0),
    ("winners", (MAX_SEATS,), np.bool_, False),
    ("final_rewards", (MAX_SEATS,), np.float32, 0.0),
    ("step_rewards", (MAX_SEATS,), np.float32, 0.0),
    ("mask", (NUM_ACTIONS,), np.bool_, False),
    ("n_legal", (), np.int16, 0),
    ("steps", (), np.int32, 0),
    ("ev", (MAX_EVENTS, 4), np.int16, 0),
    ("ev_n", (), np.int16, 0),
    ("ev_lost", (), np.int32, 0),
)

FIELD_NAMES = tuple(f[0] for f in _FIELDS)


def state_dtype() -> np.dtype:
    """One record per game (per-seat fields at ``MAX_SEATS`` entries, ``core.dtypes``)."""
    return fields_dtype(_FIELDS)


def allocate(batch: int) -> np.ndarray:
    return allocate_fields(batch, state_dtype(), _FIELDS)


def tables_from_db(db) -> np.ndarray:
    """The card data as one record (array of length 1) for the kernels: copies per design
    and the value of each Number design."""
    dt = np.dtype([("copies", np.int8, (N_DESIGNS,)), ("value", np.int8, (N_DESIGNS,))], align=True)
    tb = np.zeros(1, dtype=dt)
    tb["copies"][0] = db.copies
    tb["value"][0] = [c.value for c in db.deck]
    return tb
