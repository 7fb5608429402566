"""R.I.P. Market's part of game records (``ripmarket_env.envs.record``): the line of each
resolved round, built from the event log, and the result line."""

from __future__ import annotations

from ripmarket_env.core import records as core_records
from ripmarket_env.core.records import cards_digest, log_hooks
from ripmarket_env.games.ripmarket.cards.loader import default_cards
from ripmarket_env.games.ripmarket.events import GameLog, RoundLog
from ripmarket_env.games.ripmarket.labels import card_label, rule_label, shadow_label
from ripmarket_env.games.ripmarket.render import describe_action

__all__ = ["GameLog", "describe_action", "game_log", "result_line", "round_line", "cards_digest", "default_engine_kwargs"]


game_log, default_engine_kwargs = log_hooks(GameLog, default_cards)


def round_line(engine, log: RoundLog) -> dict:
    """The record line of one resolved round (from the event log)."""
    db = engine.cards
    seats = log.seats
    line = {
        "round": log.round,
        "rule": rule_label(log.rule),
        "cards": [card_label(db, x["card"]) if x["card"] is not None else None for x in seats],
        "targets": [x["target"] for x in seats],
        "haunted_by": [[shadow_label(db, s) for s in x["haunted_by"]] for x in seats],
        "scores": [x["score"] for x in seats],
        "damage": [x["damage"] for x in seats],
        "hp": [x["hp"] for x in seats],
        "died": [x["seat"] for x in seats if x["died"]],
        "first_player": log.first_player,
        "log": [e.text_for("god") for e in log.events],
    }
    if log.epilogue:
        line["epilogue"] = True
    return line


def result_line(engine) -> dict:
    return core_records.result_line(engine)
