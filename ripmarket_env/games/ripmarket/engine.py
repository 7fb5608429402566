"""``Engine``: R.I.P. Market's batched kernels behind the zoo's generic engine facade.

>>> from ripmarket_env.games.ripmarket import Engine, RulesConfig
>>> eng = Engine(RulesConfig(num_players=4), batch_size=2)
>>> eng.reset([1, 2])
>>> eng.current_player()          # who decides next, per game
>>> eng.legal_mask()              # (2, num_actions) bool
>>> rewards, terminated = eng.step([a0, a1])
>>> obs = eng.observe([0, 3])     # game 0 seen by seat 0, game 1 by seat 3
>>> twin = eng.clone([1])         # an independent Engine holding a copy of game 1

Everything is batch-first: one row per game. Each game carries its own RNG: the same
seed and actions give the same game whatever the batch size, row or global RNG state.
The cross-game policy (seeds, skipped and finished games, illegal actions, clones) is
``ripmarket_env.core.engine.Engine``'s; this class adds the game's tables and kernels.
"""

from __future__ import annotations

import numpy as np

from ripmarket_env.core.engine import (  # noqa: F401  (re-exported names of the engine API)
    SERIAL_BELOW,
    IllegalActionError,
    as_int as _as_int,
    copy_rows as _copy_rows,
    kernel_view as _k,
    raw_rows as _raw,
    seed_to_u64,
)
from ripmarket_env.core.engine import Engine as _CoreEngine
from ripmarket_env.games.ripmarket import kernels as K
from ripmarket_env.games.ripmarket.actions import ActionTable
from ripmarket_env.games.ripmarket.cards.loader import CardDB, default_cards
from ripmarket_env.games.ripmarket.config import ConfigError, RulesConfig
from ripmarket_env.games.ripmarket.observation import layout
from ripmarket_env.games.ripmarket.state import PHASE_NAMES, allocate, tables_from_db


def _check_deal(rules: RulesConfig, cards: CardDB) -> None:
    """R-1.3: the Living Deck must hold the opening deal (every hand and the Market) and
    one card more for the first acquisition; a smaller custom deck would end every game
    at its reset. ``ConfigError`` naming the card file and the numbers."""
    P, hand, market = rules.num_players, int(rules.hand_size), rules.market
    need = P * hand + market + 1
    have = int(cards.living_deck_size)
    if have < need:
        raise ConfigError(
            f"{cards.source}: the Living Deck holds {have} card{'s' if have != 1 else ''}, too few for a "
            f"{P}-player game: the deal takes {P} x {hand} hand cards and {market} Market cards, and the first "
            f"acquisition one more; allowed: at least {need} cards (sum of 'copies' of the living designs)")


class Engine(_CoreEngine):
    """A batch of R.I.P. Market games sharing one rules config and card database."""

    phase_names = PHASE_NAMES

    def __init__(self, rules: RulesConfig | None = None, batch_size: int = 1, cards: CardDB | None = None):
        rules, batch_size = self.check_args(rules, batch_size, RulesConfig, "a RulesConfig")
        self.rules = rules
        self.cards = cards if cards is not None else default_cards()
        if not isinstance(self.cards, CardDB):
            raise TypeError(f"cards must be a CardDB (ripmarket_env.games.ripmarket.cards.load_cards), got {type(self.cards).__name__}")
        _check_deal(rules, self.cards)
        self.batch_size = int(batch_size)
        self.num_players = rules.num_players
        self.tables = tables_from_db(self.cards)
        self.cfg = rules.to_array()
        self.actions = ActionTable(self.cards.n_living, self.cards.n_shadow)
        self.obs_layout = layout(self.cards.n_living, self.cards.n_shadow)
        self._offs = self.obs_layout.offset_array()
        self._obs_size = self.obs_layout.size
        self.state: np.ndarray = allocate(self.batch_size, self.cards)
        self.seeds = np.full(self.batch_size, -1, dtype=object)  # Python ints: any size
        self.drivers = K.drivers_for(self.state.dtype, self.tables.dtype)  # the core's batch loops

    @property
    def num_actions(self) -> int:
        return self.actions.size

    # ------------------------------------------------------------------ kernels
    # (reset, step and observe run the core Engine's row hooks over self.drivers)
    def _decode_events(self, game: int) -> list:
        from ripmarket_env.games.ripmarket.events import decode

        return decode(self, game)

    def describe_action(self, action: int) -> str:
        return self.actions.describe(int(action), self.cards)
