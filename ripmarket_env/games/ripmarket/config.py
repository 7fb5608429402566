"""The rules config: the rulebook's values as defaults, variants as fields."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ripmarket_env.core.config import RulesBase

TIE_RULES = ("all", "earliest")
GHOST_PHASES = ("in_turn", "first")
REWARD_MODES = ("win", "placement")
NO_SURVIVOR = ("sudden_death", "share_win")
DEFLECT_TARGETS = ("any", "not_weaker", "stronger")
OPENING_BONUS = ("none", "first_player", "first_half")
TOKEN_TIES = ("earliest", "latest")


def deflection_may_name(deflect_target: str, their_hp, owner_hp) -> bool:
    """R-8.3: may a Deflection name a living player with ``their_hp`` under this
    ``deflect_target`` (the kernels' ``target_ok`` compiles the same rule)?"""
    if deflect_target == "stronger":
        return their_hp > owner_hp
    return their_hp >= owner_hp if deflect_target == "not_weaker" else True

# Indices into the compiled config array the kernels read.
C_P = 0
C_HP = 1
C_MARKET = 2
C_CAP = 3
C_TIE = 4
C_EPILOGUE = 5
C_GHOST_FIRST = 6
C_MAX_ROUNDS = 7
C_REWARD = 8
C_HAND = 9
C_NO_SURVIVOR = 10
C_DEFLECT = 11
C_OPENING = 12
C_TOKEN_TIE = 13
C_GRACE = 14
C_LEN = 15


class ConfigError(ValueError):
    """A rules config field has a value that is not allowed."""


@dataclass(frozen=True)
class RulesConfig(RulesBase):
    """Rules of one game. ``None`` means "the rulebook's value for this player count".

    Fields:
        num_players: 2-10 players (R-1.1).
        start_hp: starting health; default 3 for 2-3 players, 2 for 4-10 (R-1.2).
        market_size: Market slots; default 3 for 2-6 players, 4 for 7-10 (R-1.2).
        ghost_cap: Shadow cards a Ghost may hold; default 2 for 2-6, 3 for 7-10 (R-1.2).
        tie_rule: "all" (every tied lowest player takes 1 damage) or "earliest" (R-8.2).
        epilogue: 2-player "haunting the winner" epilogue round, display-only (R-9.4).
        ghost_phase: "first" (the Ghosts haunt first, the default) or "in_turn" (the first
            edition: Ghosts act in seat order among the living) (R-3.3).
        max_rounds: safety cap; default 3 x players x start HP (R-9.3).
        reward_mode: "win" (R-11.1) or "placement" (R-11.2).
        hand_size: starting hand (R-1.3).
        no_survivor: round damage that would leave nobody alive: "sudden_death" (it is not
            dealt; the game goes on) or "share_win" (the first edition: it is dealt and
            the players who died last share the win) (R-9.2).
        deflect_target: whom a Deflection may name: "stronger", a living player with more
            HP than the owner (the default), "not_weaker", one with at least the owner's HP,
            or "any" other living player (the first edition) (R-8.3).
        opening_bonus: which seats draw one more Living card at setup, counted in the first
            round's turn order from the First Player: "none" (the rulebook, the default),
            "first_half" (the first players // 2) or "first_player" (R-1.3).
        token_tie: who of the players tied for the First Player token takes it: the
            "latest" in the round's turn order (the default) or the "earliest" (the first
            edition) (R-8.6).
        grace_round: the first round deals no round damage (True, the default since the
            second edition) or deals it like every other round (False, the first edition)
            (R-8.2).
    """

    error = ConfigError
    setup_fields = {
        "start_hp": {"type": "integer", "minimum": 1, "maximum": 9,
                     "description": "1-9; default 3 for 2-3 players, 2 for 4-10"},
        "market_size": {"type": "integer", "minimum": 1, "maximum": 4,
                        "description": "1-4; default 3 for 2-6 players, 4 for 7-10"},
        "ghost_cap": {"type": "integer", "minimum": 1, "maximum": 5,
                      "description": "1-5; default 2 for 2-6 players, 3 for 7-10"},
        "tie_rule": {"enum": list(TIE_RULES), "description": "who of the tied lowest takes damage (R-8.2): "
                                                             "all (default) or earliest"},
        "epilogue": {"type": "boolean", "description": "2-player haunting epilogue (2 players only)"},
        "ghost_phase": {"enum": list(GHOST_PHASES), "description": "when the Ghosts act (R-3.3): first (default) "
                                                                   "or in_turn (first edition)"},
        "max_rounds": {"type": "integer", "minimum": 1, "maximum": 1000,
                       "description": "1-1000; default 3 x players x start HP"},
        "reward_mode": {"enum": list(REWARD_MODES), "description": "win (R-11.1) or placement (R-11.2)"},
        "hand_size": {"type": "integer", "minimum": 1, "maximum": 6, "description": "1-6; default 3"},
        "no_survivor": {"enum": list(NO_SURVIVOR), "description": "round damage that would leave nobody alive "
                        "(R-9.2): sudden_death (default) or share_win (first edition)"},
        "deflect_target": {"enum": list(DEFLECT_TARGETS), "description": "whom a Deflection may name (R-8.3): "
                           "stronger (default), not_weaker or any (first edition)"},
        "opening_bonus": {"enum": list(OPENING_BONUS), "description": "who draws one more card at setup (R-1.3): "
                          "none (default, the first edition too), first_half or first_player"},
        "token_tie": {"enum": list(TOKEN_TIES), "description": "who of the tied takes the First Player token "
                      "(R-8.6): latest (default) or earliest (first edition)"},
        "grace_round": {"type": "boolean", "description": "the first round deals no round damage (R-8.2): "
                        "true (default) or false (first edition)"},
    }

    num_players: int = 4
    start_hp: int | None = None
    market_size: int | None = None
    ghost_cap: int | None = None
    tie_rule: str = "all"
    epilogue: bool = False
    ghost_phase: str = "first"
    max_rounds: int | None = None
    reward_mode: str = "win"
    hand_size: int = 3
    no_survivor: str = "sudden_death"
    deflect_target: str = "stronger"
    opening_bonus: str = "none"
    token_tie: str = "latest"
    grace_round: bool = True

    def __post_init__(self) -> None:
        def bad(name: str, allowed: str) -> None:
            raise ConfigError(
                f"rules config: {name}={getattr(self, name)!r} is not allowed; allowed: {allowed}"
            )

        def is_int(v) -> bool:
            return isinstance(v, (int, np.integer)) and not isinstance(v, bool)

        if not is_int(self.num_players) or not 2 <= self.num_players <= 10:
            bad("num_players", "an integer from 2 to 10")
        if self.start_hp is not None and (not is_int(self.start_hp) or not 1 <= self.start_hp <= 9):
            bad("start_hp", "null or an integer from 1 to 9")
        if self.market_size is not None and (not is_int(self.market_size) or not 1 <= self.market_size <= 4):
            bad("market_size", "null or an integer from 1 to 4")
        if self.ghost_cap is not None and (not is_int(self.ghost_cap) or not 1 <= self.ghost_cap <= 5):
            bad("ghost_cap", "null or an integer from 1 to 5")
        if self.tie_rule not in TIE_RULES:
            bad("tie_rule", " | ".join(TIE_RULES))
        if not isinstance(self.epilogue, bool):
            bad("epilogue", "true or false")
        if self.epilogue and self.num_players != 2:
            bad("epilogue", "true only with num_players=2 (the 2-player haunting epilogue)")
        if self.ghost_phase not in GHOST_PHASES:
            bad("ghost_phase", " | ".join(GHOST_PHASES))
        if self.max_rounds is not None and (not is_int(self.max_rounds) or not 1 <= self.max_rounds <= 1000):
            bad("max_rounds", "null or an integer from 1 to 1000")
        if self.reward_mode not in REWARD_MODES:
            bad("reward_mode", " | ".join(REWARD_MODES))
        if not is_int(self.hand_size) or not 1 <= self.hand_size <= 6:
            bad("hand_size", "an integer from 1 to 6")
        if self.no_survivor not in NO_SURVIVOR:
            bad("no_survivor", " | ".join(NO_SURVIVOR))
        if self.deflect_target not in DEFLECT_TARGETS:
            bad("deflect_target", " | ".join(DEFLECT_TARGETS))
        if self.opening_bonus not in OPENING_BONUS:
            bad("opening_bonus", " | ".join(OPENING_BONUS))
        if self.token_tie not in TOKEN_TIES:
            bad("token_tie", " | ".join(TOKEN_TIES))
        if not isinstance(self.grace_round, bool):
            bad("grace_round", "true or false")

    # Resolved values -----------------------------------------------------------
    @property
    def hp(self) -> int:
        if self.start_hp is not None:
            return int(self.start_hp)
        return 3 if self.num_players <= 3 else 2

    @property
    def market(self) -> int:
        if self.market_size is not None:
            return int(self.market_size)
        return 3 if self.num_players <= 6 else 4

    @property
    def cap(self) -> int:
        if self.ghost_cap is not None:
            return int(self.ghost_cap)
        return 2 if self.num_players <= 6 else 3

    @property
    def rounds_cap(self) -> int:
        if self.max_rounds is not None:
            return int(self.max_rounds)
        return 3 * self.num_players * self.hp

    def to_array(self) -> np.ndarray:
        arr = np.zeros(C_LEN, dtype=np.int64)
        arr[C_P] = self.num_players
        arr[C_HP] = self.hp
        arr[C_MARKET] = self.market
        arr[C_CAP] = self.cap
        arr[C_TIE] = TIE_RULES.index(self.tie_rule)
        arr[C_EPILOGUE] = int(self.epilogue)
        arr[C_GHOST_FIRST] = GHOST_PHASES.index(self.ghost_phase)
        arr[C_MAX_ROUNDS] = self.rounds_cap
        arr[C_REWARD] = REWARD_MODES.index(self.reward_mode)
        arr[C_HAND] = self.hand_size
        arr[C_NO_SURVIVOR] = NO_SURVIVOR.index(self.no_survivor)
        arr[C_DEFLECT] = DEFLECT_TARGETS.index(self.deflect_target)
        arr[C_OPENING] = OPENING_BONUS.index(self.opening_bonus)
        arr[C_TOKEN_TIE] = TOKEN_TIES.index(self.token_tie)
        arr[C_GRACE] = int(self.grace_round)
        return arr
