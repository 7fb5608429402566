"""Black Market's part of game records (``ripmarket_env.envs.record``): one line per turn
(from the event log, god view: records are the whole game; the record format calls
the line a "round", numbered by the turn) and the result line."""

from __future__ import annotations

from ripmarket_env.core import records as core_records
from ripmarket_env.core.records import cards_digest, log_hooks
from ripmarket_env.games.blackmarket.cards import default_cards
from ripmarket_env.games.blackmarket.events import GameLog, TurnLog


__all__ = ["GameLog", "cards_digest", "default_engine_kwargs", "describe_action", "game_log", "result_line",
           "round_line"]

game_log, default_engine_kwargs = log_hooks(GameLog, default_cards)


def describe_action(engine, a: int) -> str:
    return engine.describe_action(int(a))


def round_line(engine, log: TurnLog) -> dict:
    rolls = [[e.a, e.b] for e in log.events if e.kind == "roll"]
    return {"round": log.turn, "seat": log.seat, "dice": rolls[0] if rolls else None,
            "log": [e.text_for("god") for e in log.events]}


def result_line(engine) -> dict:
    P = engine.num_players
    return core_records.result_line(engine, points=[int(x) for x in engine.state[0]["points"][:P]])
