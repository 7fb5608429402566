"""``Engine``: The Rune Market's batched kernels behind the zoo's generic engine facade.

>>> from ripmarket_env.games.runemarket import Engine, RulesConfig
>>> eng = Engine(RulesConfig(num_players=4), batch_size=2)
>>> eng.reset([1, 2])
>>> eng.reset([3], games=[0], first_player=2)   # match play: seat 2 starts (RM-1.5)
>>> rewards, terminated = eng.step(actions)

The cross-game policy (seeds, skipped and finished games, illegal actions, clones) is
``ripmarket_env.core.engine.Engine``'s; this class adds the game's state and kernels.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ripmarket_env.core.engine import SERIAL_BELOW, IllegalActionError, as_int, seed_to_u64  # noqa: F401
from ripmarket_env.core.engine import Engine as _CoreEngine
from ripmarket_env.core.engine import kernel_view as _k
from ripmarket_env.games.runemarket import actions as A
from ripmarket_env.games.runemarket import kernels as K
from ripmarket_env.games.runemarket.cards import CardDB, default_cards
from ripmarket_env.games.runemarket.config import RulesConfig
from ripmarket_env.games.runemarket.observation import LAYOUT
from ripmarket_env.games.runemarket.state import NUM_ACTIONS, PHASE_NAMES, allocate, tables_from_db


class Engine(_CoreEngine):
    """A batch of Rune Market games sharing one rules config and card data."""

    phase_names = PHASE_NAMES

    def __init__(self, rules: RulesConfig | None = None, batch_size: int = 1, cards: CardDB | None = None):
        rules, batch_size = self.check_args(rules, batch_size, RulesConfig, "a Rune Market RulesConfig")
        self.rules = rules
        self.cards = cards if cards is not None else default_cards()
        self.batch_size = batch_size
        self.num_players = rules.num_players
        self.num_actions = NUM_ACTIONS
        self.tables = tables_from_db(self.cards)
        self.cfg = rules.to_array(self.cards.market_array)
        self.obs_layout = LAYOUT
        self._offs = LAYOUT.offset_array()
        self._obs_size = LAYOUT.size
        self.state = allocate(batch_size)
        self.seeds = np.full(batch_size, -1, dtype=object)
        self.drivers = K.drivers_for(self.state.dtype, self.tables.dtype)  # the core's batch loops

    def reset(self, seeds, games: Sequence[int] | None = None, first_player=None) -> None:
        """Start new games; ``first_player`` (a seat, or one per game; None: drawn from the
        seed) gives match play's first player (RM-1.5). The deal depends on the seed only."""
        if first_player is None:
            return super().reset(seeds, games)
        idx = np.arange(self.batch_size) if games is None else np.asarray(games, dtype=np.int64).reshape(-1)
        fp = [first_player] * len(idx) if np.isscalar(first_player) else list(first_player)
        if len(fp) != len(idx):
            raise ValueError(f"reset got {len(fp)} first players for {len(idx)} games")
        firsts = np.array([self.check_seat(f, "first_player") for f in fp], np.int64)
        self._firsts = firsts
        try:
            super().reset(seeds, games)
        finally:
            self._firsts = None

    def check_seat(self, seat, what: str) -> int:
        s = as_int(seat, what, f"a seat from 0 to {self.num_players - 1}")
        if not 0 <= s < self.num_players:
            raise ValueError(f"{what} must be a seat from 0 to {self.num_players - 1}, got {s}")
        return s

    _firsts = None

    def _reset_rows(self, idx, seeds64) -> None:
        if self._firsts is None:
            return super()._reset_rows(idx, seeds64)
        idx = np.ascontiguousarray(idx, dtype=np.int64)
        K.reset_first_serial(_k(self.state), _k(self.tables), self.cfg, idx, seeds64, self._firsts)

    def _decode_events(self, game: int) -> list:
        from ripmarket_env.games.runemarket.events import decode

        return decode(self, game)

    def describe_action(self, action: int) -> str:
        return A.describe(int(action))

    def scores(self, g: int = 0) -> list[int]:
        r = self.state[g]
        return [int(r["loose"][q].sum() + r["inside"][q].sum()) for q in range(self.num_players)]
