"""Black Market's flat action space, ``Discrete(69)`` (BM-11.1).

| index | kind | meaning |
|---|---|---|
| 0-17 | ``flip`` (k, p) | 3(k-1)+p: flip the card in slot k face-down/face-up, paying p |
| 18-35 | ``rotate`` (k, p) | 18+3(k-1)+p: turn the card in slot k to face the other side, paying p |
| 36-47 | ``buy`` (k, c) | 36+2(k-1)+c: buy the card in slot k with cards of colour c |
| 48-53 | ``draw`` (k) | 47+k: spend the die showing k to draw |
| 54-57 | ``effect`` | the active effects: reroll a die, set a die, one more die, steal |
| 58-63 | ``choose_slot`` (k) | 57+k: the die showing k, or the number k |
| 64-68 | ``choose_seat`` (j) | 63+j: the player j seats clockwise |

Payment p: 0 one Flip Card, 1 two Red, 2 two Black. Colour c: 0 Red, 1 Black.
"""

from __future__ import annotations

from ripmarket_env.games.blackmarket.state import A_BUY, A_DRAW, A_EFFECT, A_FLIP, A_ROTATE, A_SEAT, A_SLOT, NUM_ACTIONS

KINDS = ("flip", "rotate", "buy", "draw", "effect", "choose_slot", "choose_seat")
PAYMENTS = ("a Flip Card", "two Red", "two Black")
COLOURS = ("Red", "Black")
EFFECTS = ("reroll_die", "set_die", "extra_die", "steal_cards")


def decode(a: int) -> tuple[str, tuple[int, ...]]:
    """(kind, arguments) of an action id; ValueError outside 0..68."""
    if isinstance(a, bool) or not isinstance(a, int) or not 0 <= a < NUM_ACTIONS:
        raise ValueError(f"action {a!r} is out of range; allowed: 0..{NUM_ACTIONS - 1}")
    if a < A_ROTATE:
        return "flip", ((a - A_FLIP) // 3 + 1, (a - A_FLIP) % 3)
    if a < A_BUY:
        return "rotate", ((a - A_ROTATE) // 3 + 1, (a - A_ROTATE) % 3)
    if a < A_DRAW:
        return "buy", ((a - A_BUY) // 2 + 1, (a - A_BUY) % 2)
    if a < A_EFFECT:
        return "draw", (a - A_DRAW + 1,)
    if a < A_SLOT:
        return "effect", (a - A_EFFECT,)
    if a < A_SEAT:
        return "choose_slot", (a - A_SLOT + 1,)
    return "choose_seat", (a - A_SEAT + 1,)


def encode(kind: str, *args: int) -> int:
    if kind == "flip":
        return A_FLIP + 3 * (args[0] - 1) + args[1]
    if kind == "rotate":
        return A_ROTATE + 3 * (args[0] - 1) + args[1]
    if kind == "buy":
        return A_BUY + 2 * (args[0] - 1) + args[1]
    if kind == "draw":
        return A_DRAW + args[0] - 1
    if kind == "effect":
        return A_EFFECT + args[0]
    if kind == "choose_slot":
        return A_SLOT + args[0] - 1
    if kind == "choose_seat":
        return A_SEAT + args[0] - 1
    raise ValueError(f"unknown action kind {kind!r}; allowed: {', '.join(KINDS)}")


def describe(a: int, db=None) -> str:
    kind, args = decode(int(a))
    if kind == "flip":
        return f"flip slot {args[0]} paying {PAYMENTS[args[1]]}"
    if kind == "rotate":
        return f"rotate slot {args[0]} paying {PAYMENTS[args[1]]}"
    if kind == "buy":
        return f"buy slot {args[0]} with {COLOURS[args[1]]}"
    if kind == "draw":
        return f"draw with the die showing {args[0]}"
    if kind == "effect":
        name = EFFECTS[args[0]]
        if db is not None:
            d = db.design_of(name)
            if d >= 0:
                name = db.point[d].name
        return f"use {name}"
    if kind == "choose_slot":
        return f"choose {args[0]}"
    return f"choose the player {args[0]} seat(s) clockwise"
