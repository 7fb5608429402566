"""Black Market's rules config: the rulings' defaults, the variants as fields (BM-9)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ripmarket_env.core.config import RulesBase

MODES = ("teams", "ffa")
TEAM_TARGETS = ("side_total", "any_player")
PAIR_FLIPS = ("no_flip_card", "always")
REFILLS = ("face_up", "face_down")
EFFECTS_FROM = ("at_once", "next_turn")
REWARD_MODES = ("win", "placement")

# Indices into the compiled config array the kernels read.
C_P = 0
C_TEAMS = 1
C_ANY_PLAYER = 2
C_TARGET = 3
C_START = 4
C_LIMIT = 5
C_PAIR_ALWAYS = 6
C_REFILL_DOWN = 7
C_NEXT_TURN = 8
C_MAX_TURNS = 9
C_PLACEMENT = 10
C_LEN = 11


class ConfigError(ValueError):
    """A rules config field has a value that is not allowed."""


def _is_int(v) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, bool)


@dataclass(frozen=True)
class RulesConfig(RulesBase):
    """Rules of one Black Market game (docs/games/black-market/RULES.md, BM-9).

    Fields:
        num_players: 2, 4 or 6 (BM-1.1).
        mode: "teams" (a side is a team, BM-1.3) or "ffa" (every player for themselves).
        team_target: "side_total" (a side's summed points) or "any_player" (BM-1.3).
        target_points: points that win, 3-20 (BM-8.1).
        start_hand: Hand Cards dealt, 1-10 and at most hand_limit (BM-3.3).
        hand_limit: 0 (none) or 6-30 (BM-4.7).
        pair_flip: "no_flip_card" or "always": when two Red/Black may pay a flip (BM-4.3).
        refill: "face_up" or "face_down" (BM-5.2).
        effects_from: "at_once" or "next_turn" (BM-6.1).
        max_turns: safety cap on turns, 1-2000; None = 50 x players (BM-8.3).
        reward_mode: "win" or "placement" (ffa only) (BM-10.2).
    """

    error = ConfigError
    setup_fields = {"mode": {"enum": list(MODES), "description": "teams (a side wins together) or ffa "
                                                                 "(every player for themselves), BM-1.3, BM-1.4"}}

    num_players: int = 4
    mode: str = "teams"
    team_target: str = "side_total"
    target_points: int = 7
    start_hand: int = 6
    hand_limit: int = 10
    pair_flip: str = "no_flip_card"
    refill: str = "face_up"
    effects_from: str = "at_once"
    max_turns: int | None = None
    reward_mode: str = "win"

    def __post_init__(self) -> None:
        def bad(name: str, allowed: str) -> None:
            raise ConfigError(f"rules config: {name}={getattr(self, name)!r} is not allowed; allowed: {allowed}")

        if not _is_int(self.num_players) or self.num_players not in (2, 4, 6):
            bad("num_players", "2, 4 or 6 (two equal sides)")
        for name, allowed in (("mode", MODES), ("team_target", TEAM_TARGETS), ("pair_flip", PAIR_FLIPS),
                              ("refill", REFILLS), ("effects_from", EFFECTS_FROM), ("reward_mode", REWARD_MODES)):
            if getattr(self, name) not in allowed:
                bad(name, " | ".join(allowed))
        if not _is_int(self.target_points) or not 3 <= self.target_points <= 20:
            bad("target_points", "an integer from 3 to 20")
        if not _is_int(self.hand_limit) or not (self.hand_limit == 0 or 6 <= self.hand_limit <= 30):
            bad("hand_limit", "0 (no limit) or an integer from 6 to 30")
        if not _is_int(self.start_hand) or not 1 <= self.start_hand <= 10:
            bad("start_hand", "an integer from 1 to 10")
        if self.hand_limit and self.start_hand > self.hand_limit:
            bad("start_hand", f"at most hand_limit={self.hand_limit}")
        if self.max_turns is not None and (not _is_int(self.max_turns) or not 1 <= self.max_turns <= 2000):
            bad("max_turns", "null or an integer from 1 to 2000")
        if self.reward_mode == "placement" and self.mode != "ffa":
            bad("reward_mode", "'placement' only with mode='ffa' (teams: 'win')")
        if self.team_target != "side_total" and self.mode != "teams":
            bad("team_target", "'side_total' unless mode='teams'")

    @property
    def turns_cap(self) -> int:
        return int(self.max_turns) if self.max_turns is not None else 50 * self.num_players

    @property
    def teams(self) -> bool:
        return self.mode == "teams"

    def to_array(self) -> np.ndarray:
        arr = np.zeros(C_LEN, dtype=np.int64)
        arr[C_P] = self.num_players
        arr[C_TEAMS] = int(self.mode == "teams")
        arr[C_ANY_PLAYER] = int(self.team_target == "any_player")
        arr[C_TARGET] = self.target_points
        arr[C_START] = self.start_hand
        arr[C_LIMIT] = self.hand_limit
        arr[C_PAIR_ALWAYS] = int(self.pair_flip == "always")
        arr[C_REFILL_DOWN] = int(self.refill == "face_down")
        arr[C_NEXT_TURN] = int(self.effects_from == "next_turn")
        arr[C_MAX_TURNS] = self.turns_cap
        arr[C_PLACEMENT] = int(self.reward_mode == "placement")
        return arr
