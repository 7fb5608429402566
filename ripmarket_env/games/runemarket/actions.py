"""The flat action space ``Discrete(50)`` (RM-8.5; the rulings' table).

Colour c: 0 Red, 1 Blue; value v = 1..10; seat offset k = the player k seats clockwise.

| index | kind | meaning |
|---|---|---|
| 0 | ``done`` | end this stage (stage 3: end the turn) |
| 1-2 | ``discard_shelter`` (c) | discard your table Shelter c: a double theft |
| 3-4 | ``rune_boat`` (c) | buy a Boat Shelter with Runes of colour c |
| 5-6 | ``rune_bandit`` (c) | buy a Bandit with Runes of colour c |
| 7-8 | ``shelter_table`` (c) | play Shelter c from hand to your table |
| 9-10 | ``shelter_discard`` (c) | play Shelter c from hand to the discard: a double theft |
| 11 | ``theft`` | play a Theft Card |
| 12 | ``attack`` | attack with a Number card |
| 13-14 | ``buy_rune`` (c) | buy a Rune of colour c with Number cards totalling 5/10/15 |
| 15 | ``number_boat`` | buy a Boat Shelter with Number cards >= 21 |
| 16 | ``number_bandit`` | buy a Bandit with Number cards >= 21 |
| 17-18 | ``pay_bandit`` (c) | pay a Number card toward the Bandit on your Shelter c |
| 19-28 | ``number`` (v) | the Number card of value v (to attack, pay, add, or block with) |
| 29 | ``no_block`` | the defender does not block |
| 30-34 | ``opponent`` (k) | the player k = 1..5 seats clockwise |
| 35-37 | ``steal`` | a Red Rune, a Blue Rune, a random hand card |
| 38-49 | ``shelter`` (k, c) | 38+2k+c: k = 0 your own Shelter (Boat), k >= 1 an opponent's (Bandit) |
"""

from __future__ import annotations

NUM_ACTIONS = 50
COLOURS = ("Red", "Blue")

KINDS = (
    ("done", 0, 1), ("discard_shelter", 1, 2), ("rune_boat", 3, 2), ("rune_bandit", 5, 2),
    ("shelter_table", 7, 2), ("shelter_discard", 9, 2), ("theft", 11, 1), ("attack", 12, 1),
    ("buy_rune", 13, 2), ("number_boat", 15, 1), ("number_bandit", 16, 1), ("pay_bandit", 17, 2),
    ("number", 19, 10), ("no_block", 29, 1), ("opponent", 30, 5), ("steal", 35, 3), ("shelter", 38, 12),
)


def decode(action: int) -> tuple[str, int]:
    """(kind, argument): the colour, value (1-10), seat offset (1-5), steal code, or
    2k+c for ``shelter``."""
    a = int(action)
    for kind, start, n in KINDS:
        if start <= a < start + n:
            arg = a - start
            if kind == "number":
                arg += 1
            elif kind == "opponent":
                arg += 1
            return kind, arg
    raise ValueError(f"action {action} is out of range; allowed: 0..{NUM_ACTIONS - 1}")


def encode(kind: str, arg: int = 0) -> int:
    for k, start, n in KINDS:
        if k == kind:
            i = arg - 1 if kind in ("number", "opponent") else arg
            if not 0 <= i < n:
                raise ValueError(f"argument {arg} out of range for {kind}")
            return start + i
    raise ValueError(f"unknown action kind {kind!r}; allowed: {', '.join(k for k, _, _ in KINDS)}")


def describe(action: int) -> str:
    kind, arg = decode(action)
    col = COLOURS[arg % 2] if kind in ("discard_shelter", "rune_boat", "rune_bandit", "shelter_table",
                                        "shelter_discard", "buy_rune", "pay_bandit") else ""
    return {
        "done": "done (go on to the next stage / end the turn)",
        "discard_shelter": f"discard your table {col} Shelter: a double theft",
        "rune_boat": f"buy a Boat Shelter with {col} Runes",
        "rune_bandit": f"buy a Bandit with {col} Runes",
        "shelter_table": f"play a {col} Shelter to your table",
        "shelter_discard": f"discard a {col} Shelter from hand: a double theft",
        "theft": "play a Theft Card",
        "attack": "attack with a Number card",
        "buy_rune": f"buy a {col} Rune with Number cards",
        "number_boat": "buy a Boat Shelter with Number cards",
        "number_bandit": "buy a Bandit with Number cards",
        "pay_bandit": f"pay toward the Bandit on your {col} Shelter",
        "number": f"Number {arg}",
        "no_block": "do not block",
        "opponent": f"the player {arg} seat(s) clockwise",
        "steal": ("steal a Red Rune", "steal a Blue Rune", "steal a random hand card")[arg] if kind == "steal" else "",
        "shelter": (f"your {COLOURS[arg % 2]} Shelter" if arg < 2 else
                    f"the {COLOURS[arg % 2]} Shelter of the player {arg // 2} seat(s) clockwise"),
    }[kind]
