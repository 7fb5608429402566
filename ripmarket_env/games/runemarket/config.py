"""The Rune Market's rules config: the rulings' defaults, the variants as fields (RM-8.6)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ripmarket_env.core.config import RulesBase

BANDIT_INTEREST = ("divert", "block")
RUNE_SUMS = ("exact", "at_least")
TIE_BREAKS = ("fewer_turns", "share")
REWARD_MODES = ("win", "placement")
DEFEND = ("ask", "auto")

# Indices into the compiled config array the kernels read.
C_P = 0
C_HAND = 1
C_RUNE_COST = 2
C_NUMBER_COST = 3
C_REMOVAL = 4
C_DIVERT = 5  # 1: diverted interest, 0: blocked
C_EXACT = 6  # 1: exact 5/10/15, 0: at least 5
C_TIE_TURNS = 7  # 1: fewer turns wins a tie
C_MAX_TURNS = 8
C_REWARD = 9  # 0 win, 1 placement
C_ASK_DEFEND = 10  # 1: the defender is always asked (RM-5.9)
C_MKT = 11  # 4 entries: Market Red, Blue, Boat Shelters, Bandits (card data)
C_LEN = 15


class ConfigError(ValueError):
    """A rules config field has a value that is not allowed."""


@dataclass(frozen=True)
class RulesConfig(RulesBase):
    """Rules of one game of The Rune Market. ``None`` means "the rulings' value".

    Fields:
        num_players: 2-6 (RM-1.1).
        hand_size: cards dealt and drawn back to, 1-6 (RM-1.4, RM-3.7).
        rune_cost: Runes of one colour for a Boat Shelter or Bandit in stage 2; default 3,
            4 with 2 players (RM-3.4).
        number_cost: Number-card total for a Boat Shelter or Bandit in stage 3 (RM-4.5).
        bandit_removal: Number-card total that removes a Bandit (RM-6.4).
        bandit_interest: "divert" (to the Bandit's owner) or "block" (RM-6.3).
        rune_sums: "exact" (5, 10, 15) or "at_least" (5 or more) (RM-4.4).
        tie_break: "fewer_turns" or "share" (RM-7.2).
        max_turns: safety cap on turns; default 100 x players (RM-7.3).
        reward_mode: "win" or "placement" (RM-7.4).
        defend: "ask" (the defender always decides, RM-5.9) or "auto" (a defender without
            a blocking card is resolved by the engine).
    """

    error = ConfigError

    num_players: int = 4
    hand_size: int = 3
    rune_cost: int | None = None
    number_cost: int = 21
    bandit_removal: int = 15
    bandit_interest: str = "divert"
    rune_sums: str = "exact"
    tie_break: str = "fewer_turns"
    max_turns: int | None = None
    reward_mode: str = "win"
    defend: str = "ask"

    def __post_init__(self) -> None:
        def bad(name: str, allowed: str) -> None:
            raise ConfigError(f"rules config: {name}={getattr(self, name)!r} is not allowed; allowed: {allowed}")

        def is_int(v) -> bool:
            return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))

        def int_in(name, lo, hi, none_ok=False):
            v = getattr(self, name)
            if v is None and none_ok:
                return
            if not is_int(v) or not lo <= v <= hi:
                bad(name, ("null or " if none_ok else "") + f"an integer from {lo} to {hi}")

        int_in("num_players", 2, 6)
        int_in("hand_size", 1, 6)
        int_in("rune_cost", 2, 6, none_ok=True)
        int_in("number_cost", 10, 40)
        int_in("bandit_removal", 5, 40)
        int_in("max_turns", 1, 2000, none_ok=True)
        for name, allowed in (("bandit_interest", BANDIT_INTEREST), ("rune_sums", RUNE_SUMS),
                              ("tie_break", TIE_BREAKS), ("reward_mode", REWARD_MODES), ("defend", DEFEND)):
            if getattr(self, name) not in allowed:
                bad(name, " | ".join(allowed))

    @property
    def runes_per_item(self) -> int:
        if self.rune_cost is not None:
            return int(self.rune_cost)
        return 4 if self.num_players == 2 else 3

    @property
    def turns_cap(self) -> int:
        return int(self.max_turns) if self.max_turns is not None else 100 * self.num_players

    def to_array(self, market=(10, 10, 2, 2)) -> np.ndarray:
        a = np.zeros(C_LEN, np.int64)
        a[C_P] = self.num_players
        a[C_HAND] = self.hand_size
        a[C_RUNE_COST] = self.runes_per_item
        a[C_NUMBER_COST] = self.number_cost
        a[C_REMOVAL] = self.bandit_removal
        a[C_DIVERT] = int(self.bandit_interest == "divert")
        a[C_EXACT] = int(self.rune_sums == "exact")
        a[C_TIE_TURNS] = int(self.tie_break == "fewer_turns")
        a[C_MAX_TURNS] = self.turns_cap
        a[C_REWARD] = REWARD_MODES.index(self.reward_mode)
        a[C_ASK_DEFEND] = int(self.defend == "ask")
        a[C_MKT:C_MKT + 4] = market
        return a
