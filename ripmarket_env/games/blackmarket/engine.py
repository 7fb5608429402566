"""``Engine``: Black Market's batched kernels behind the zoo's generic engine facade.

>>> from ripmarket_env.games.blackmarket import Engine, RulesConfig
>>> eng = Engine(RulesConfig(num_players=4), batch_size=2)
>>> eng.reset([1, 2])
>>> eng.legal_mask()               # (2, 69) bool
>>> eng.step([a0, a1])             # one action per game
>>> eng.observe([0, 3])            # game 0 seen by seat 0, game 1 by seat 3

Each game carries its own RNG (shuffles, coins, dice): the same seed and actions give
the same game at any batch size or row (BM-12.2).
"""

from __future__ import annotations

import numpy as np

from ripmarket_env.core.engine import SERIAL_BELOW, IllegalActionError, as_int, seed_to_u64  # noqa: F401
from ripmarket_env.core.engine import Engine as _CoreEngine
from ripmarket_env.games.blackmarket import actions as _actions
from ripmarket_env.games.blackmarket import kernels as K
from ripmarket_env.games.blackmarket.cards import CardDB, default_cards
from ripmarket_env.games.blackmarket.config import RulesConfig
from ripmarket_env.games.blackmarket.observation import layout
from ripmarket_env.games.blackmarket.state import NUM_ACTIONS, PHASE_NAMES, allocate, tables_from_db


class Engine(_CoreEngine):
    """A batch of Black Market games sharing one rules config and card data."""

    phase_names = PHASE_NAMES

    def __init__(self, rules: RulesConfig | None = None, batch_size: int = 1, cards: CardDB | None = None):
        rules, batch_size = self.check_args(rules, batch_size, RulesConfig, "a Black Market RulesConfig")
        self.rules = rules
        self.cards = cards if cards is not None else default_cards()
        self.batch_size = int(batch_size)
        self.num_players = rules.num_players
        self.tables = tables_from_db(self.cards)
        self.cfg = rules.to_array()
        self.obs_layout = layout(self.cards)
        self._offs = self.obs_layout.offset_array()
        self._obs_size = self.obs_layout.size
        self.state: np.ndarray = allocate(self.batch_size, self.cards)
        self.seeds = np.full(self.batch_size, -1, dtype=object)
        self.drivers = K.drivers_for(self.state.dtype, self.tables.dtype)  # the core's batch loops

    num_actions = NUM_ACTIONS

    def _decode_events(self, game: int) -> list:
        from ripmarket_env.games.blackmarket.events import decode

        return decode(self, game)

    def describe_action(self, action: int) -> str:
        return _actions.describe(int(action), self.cards)

    # ------------------------------------------------------------------ queries
    def side_points(self, g: int = 0) -> tuple[int, int]:
        pts = self.state["points"][g][: self.num_players]
        return int(pts[0::2].sum()), int(pts[1::2].sum())

    def winners(self, g: int = 0) -> list[int]:
        return [q for q in range(self.num_players) if bool(self.state["winners"][g, q])]
