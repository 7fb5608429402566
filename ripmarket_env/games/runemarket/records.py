"""The Rune Market's part of game records (``ripmarket_env.envs.record``): a line per
finished turn (``"round"``: the turn number; god view: records are for replay) and the result."""

from __future__ import annotations

from ripmarket_env.core import records as core_records
from ripmarket_env.core.records import cards_digest, log_hooks
from ripmarket_env.games.runemarket.actions import describe
from ripmarket_env.games.runemarket.cards import default_cards
from ripmarket_env.games.runemarket.events import GameLog, TurnLog

__all__ = ["GameLog", "cards_digest", "default_engine_kwargs", "describe_action", "game_log", "result_line",
           "round_line"]


game_log, default_engine_kwargs = log_hooks(GameLog, default_cards)


def describe_action(engine, action: int) -> str:
    return describe(int(action))


def round_line(engine, log: TurnLog) -> dict:
    return {"round": log.turn, "seat": log.seat, "runes": log.scores,
            "log": [e.text_for("god") for e in log.events]}


def result_line(engine) -> dict:
    return core_records.result_line(engine, runes=engine.scores(0))
