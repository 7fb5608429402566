"""The Rune Market's part of game records (``ripmarket_env.envs.record``): a line per
finished turn (``"round"``: the turn number; god view: records are for replay) and the result."""

from __future__ import annotations

from ripmarket_env.core import records as core_records
from ripmarket_env.core.records import cards_digest, log_hooks
from ripmarket_env.games.runemarket.actions import describe
from ripmarket_env.games.runemarket.cards import default_cards
from ripmarket_env.games.runemarket.events import GameLog, TurnLog, seat_name

__all__ = ["GameLog", "cards_digest", "default_engine_kwargs", "describe_action", "game_log", "result_line",
           "round_line", "round_table", "seat_name"]


game_log, default_engine_kwargs = log_hooks(GameLog, default_cards)


def describe_action(engine, action: int) -> str:
    return describe(int(action))


def round_line(engine, log: TurnLog) -> dict:
    return {"round": log.turn, "seat": log.seat, "runes": log.scores,
            "log": [e.text_for("god") for e in log.events]}


def result_line(engine) -> dict:
    return core_records.result_line(engine, runes=engine.scores(0))


#: What ``ripmarket replay`` calls a round line's span of play.
ROUND_WORD = "Turn"


def round_table(engine, line: dict, before: dict | None, who) -> dict:
    """A turn line as ``ripmarket replay`` shows it: every seat's Runes after the turn."""
    rows = [[who(q) + (" *" if q == line["seat"] else ""), str(n)] for q, n in enumerate(line["runes"])]
    return {"title": f"Turn {line['round']} ends ({who(line['seat'])}'s turn, *)", "columns": ["seat", "Runes"],
            "right": ["Runes"], "rows": rows}
