"""Black Market's part of game records (``ripmarket_env.envs.record``): one line per turn
(from the event log, god view: records are the whole game; the record format calls
the line a "round", numbered by the turn) and the result line."""

from __future__ import annotations

from ripmarket_env.games.blackmarket.cards import default_cards
from ripmarket_env.games.blackmarket.events import GameLog, TurnLog


def game_log(engine, g: int = 0) -> GameLog:
    return GameLog(engine, g)


def cards_digest(engine) -> str:
    return engine.cards.digest


def default_engine_kwargs() -> dict:
    return {"cards": default_cards()}


def describe_action(engine, a: int) -> str:
    return engine.describe_action(int(a))


def round_line(engine, log: TurnLog) -> dict:
    rolls = [[e.a, e.b] for e in log.events if e.kind == "roll"]
    return {"round": log.turn, "seat": log.seat, "dice": rolls[0] if rolls else None,
            "log": [e.text_for("god") for e in log.events]}


def result_line(engine) -> dict:
    r = engine.state[0]
    P = engine.num_players
    return {"result": {
        "winners": [q for q in range(P) if bool(r["winners"][q])],
        "points": [int(x) for x in r["points"][:P]],
        "rewards": [round(float(x), 6) for x in r["final_rewards"][:P]],
    }}
