"""The flat Discrete action space, built once as a table (R-12).

| range | kind | meaning |
|---|---|---|
| 0 | ``acquire_deck`` | take the top card of the Living Deck |
| 1-4 | ``acquire_market`` | take the card in Market slot 0-3 |
| 5 .. 5+DL-1 | ``card`` | play Living card design d from hand; in the replacement choice, the card that replaces |
| next 9 | ``target`` | choose the player k seats clockwise from you (k = 1..9): a card's target or a Ghost's victim |
| next 4 | ``market_slot`` | choose Market slot 0-3 for a Market-tampering card |
| next 1 | ``pass`` | a Ghost passes |
| next DS | ``shadow`` | a Ghost plays Shadow card design s (the victim is the next decision) |
"""

from __future__ import annotations

from dataclasses import dataclass

from ripmarket_env.games.ripmarket.state import MAX_MARKET, MAX_SEATS, num_actions

KINDS = ("acquire_deck", "acquire_market", "card", "target", "market_slot", "pass", "shadow")


@dataclass(frozen=True)
class ActionTable:
    n_living: int
    n_shadow: int

    @property
    def size(self) -> int:
        return num_actions(self.n_living, self.n_shadow)

    @property
    def ranges(self) -> dict[str, range]:
        DL, DS = self.n_living, self.n_shadow
        start = 0
        out = {}
        for kind, n in (
            ("acquire_deck", 1),
            ("acquire_market", MAX_MARKET),
            ("card", DL),
            ("target", MAX_SEATS - 1),
            ("market_slot", MAX_MARKET),
            ("pass", 1),
            ("shadow", DS),
        ):
            out[kind] = range(start, start + n)
            start += n
        return out

    def decode(self, action: int) -> tuple[str, int]:
        """(kind, argument): argument is the slot, design id, or seat offset (1-9)."""
        for kind, r in self.ranges.items():
            if action in r:
                arg = action - r.start
                if kind == "target":
                    arg += 1
                return kind, arg
        raise ValueError(f"action {action} is out of range; allowed: 0..{self.size - 1}")

    def encode(self, kind: str, arg: int = 0) -> int:
        if kind not in KINDS:
            raise ValueError(f"unknown action kind {kind!r}; allowed: {', '.join(KINDS)}")
        r = self.ranges[kind]
        i = arg - 1 if kind == "target" else arg
        if not 0 <= i < len(r):
            raise ValueError(f"argument {arg} out of range for {kind}")
        return r.start + i

    def describe(self, action: int, db=None) -> str:
        kind, arg = self.decode(action)
        if kind == "acquire_deck":
            return "take the top card of the Living Deck"
        if kind == "acquire_market":
            return f"take the card in Market slot {arg}"
        if kind == "card":
            name = db.living[arg].name if db is not None else f"design {arg}"
            return f"card: {name}"
        if kind == "target":
            return f"choose the player {arg} seat(s) clockwise"
        if kind == "market_slot":
            return f"choose Market slot {arg}"
        if kind == "pass":
            return "pass (Ghost)"
        name = db.shadow[arg].name if db is not None else f"shadow design {arg}"
        return f"Shadow card: {name}"

    def rows(self, db=None) -> list[tuple[int, str, int, str]]:
        return [(a, *self.decode(a), self.describe(a, db)) for a in range(self.size)]
