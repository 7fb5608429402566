"""Names of seats, cards and rule changes in the game's own words, shared by the event
log, the renderers and the play front ends."""

from __future__ import annotations

from ripmarket_env.games.ripmarket.cards.registry import RULES

_RULE_BY_CODE = {code: name for name, code in RULES.items()}
_RULE_LABELS = {"none": "none", "low_tide": "Low Tide", "earthquake": "Earthquake", "cull": "The Cull"}


def seat_name(seat: int) -> str:
    """The agent name of a seat, as in the AEC env (``player_3``)."""
    return f"player_{int(seat)}"


def rule_label(code: int) -> str:
    name = _RULE_BY_CODE.get(int(code), f"rule {int(code)}")
    return _RULE_LABELS.get(name, name.replace("_", " ").title())


def card_label(db, design: int) -> str:
    """A Living card as ``Name (value)``."""
    d = db.living[int(design)]
    return f"{d.name} ({d.value})"


def shadow_label(db, design: int) -> str:
    return db.shadow[int(design)].name
