"""Black Market's part of game records (``ripmarket_env.envs.record``): one line per turn
(from the event log, god view: records are the whole game; the record format calls
the line a "round", numbered by the turn) and the result line."""

from __future__ import annotations

from ripmarket_env.core import records as core_records
from ripmarket_env.core.records import cards_digest, log_hooks
from ripmarket_env.games.blackmarket.cards import default_cards
from ripmarket_env.games.blackmarket.events import GameLog, TurnLog, seat_name


__all__ = ["GameLog", "cards_digest", "default_engine_kwargs", "describe_action", "game_log", "result_line",
           "round_line", "round_table", "seat_name"]

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


#: What ``ripmarket replay`` calls a round line's span of play.
ROUND_WORD = "Turn"


def round_table(engine, line: dict, before: dict | None, who) -> dict:
    """A turn line as ``ripmarket replay`` shows it: who rolled what (the turn's moves are
    its decision lines, or with ``--god`` its log)."""
    dice = f": {who(line['seat'])} rolled {line['dice'][0]} and {line['dice'][1]}" if line.get("dice") else ""
    return {"title": f"End of turn {line['round']}{dice}", "columns": [], "rows": []}
