"""The Rune Market's part of game records (``ripmarket_env.envs.record``): a line per
finished turn (``"round"``: the turn number; god view: records are for replay) and the result."""

from __future__ import annotations

from ripmarket_env.games.runemarket.actions import describe
from ripmarket_env.games.runemarket.cards import default_cards
from ripmarket_env.games.runemarket.events import GameLog, TurnLog

__all__ = ["GameLog", "cards_digest", "default_engine_kwargs", "describe_action", "game_log", "result_line",
           "round_line"]


def game_log(engine, g: int = 0) -> GameLog:
    return GameLog(engine, g)


def cards_digest(engine) -> str:
    return engine.cards.digest


def default_engine_kwargs() -> dict:
    return {"cards": default_cards()}


def describe_action(engine, action: int) -> str:
    return describe(int(action))


def round_line(engine, log: TurnLog) -> dict:
    return {"round": log.turn, "seat": log.seat, "runes": log.scores,
            "log": [e.text_for("god") for e in log.events]}


def result_line(engine) -> dict:
    r = engine.state[0]
    P = engine.num_players
    return {"result": {"winners": [q for q in range(P) if bool(r["winners"][q])],
                       "runes": engine.scores(0),
                       "rewards": [round(float(x), 6) for x in r["final_rewards"][:P]]}}
