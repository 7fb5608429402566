"""What the turn-based games' decoded events share (``games/<id>/events.py``)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TurnEvent:
    """The fields every event of a turn-based game carries, in this order: what happened
    (``kind``), the seat it concerns (-1: the whole table), two numbers whose meaning the
    kind gives, the turn number and whether the decision was the only choice. A game's
    ``Event`` subclasses this and adds the texts and who may read them."""

    kind: str
    seat: int
    a: int
    b: int
    turn: int
    forced: bool
