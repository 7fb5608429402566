"""The person's answer to a seat session's pending decision, as the action routes of
Black Market (``blackmarket.py``) and The Rune Market (``rune.py``) take it."""

from __future__ import annotations

from ripmarket_env.app.seat_session import GameOverError, NotYourTurnError
from ripmarket_env.core.engine import IllegalActionError


def answer_decision(s, decision_number: int, action: int, api_error) -> None:
    """``s.act(action)``, or a 409 (``api_error``) that leaves the game unchanged: the game
    is over (or has no session), the answer names another decision than the pending one,
    or the action is not legal now (the legal ones listed)."""
    if s is None or s.over:
        raise api_error(409, "the game is over; no more actions are accepted")
    if decision_number != s.decision_number:
        raise api_error(409, f"decision_number {decision_number} is not the pending decision "
                             f"{s.decision_number}; GET the game and answer its decision_number. "
                             "The game was not changed.")
    try:
        s.act(action)
    except (IllegalActionError, NotYourTurnError, GameOverError):  # refused with the game unchanged
        allowed = "; ".join(f"{c.action} ({c.text})" for c in s.choices())
        raise api_error(409, f"action {action} is not legal now (decision: {s.phase}); legal "
                             f"actions: {allowed}. The game was not changed.") from None
