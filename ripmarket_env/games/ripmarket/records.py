"""R.I.P. Market's part of game records (``ripmarket_env.envs.record``): the line of each
resolved round, built from the event log, and the result line."""

from __future__ import annotations

import re

from ripmarket_env.core import records as core_records
from ripmarket_env.core.records import cards_digest, log_hooks
from ripmarket_env.games.ripmarket.cards.loader import default_cards
from ripmarket_env.games.ripmarket.events import GameLog, RoundLog
from ripmarket_env.games.ripmarket.config import C_HP
from ripmarket_env.games.ripmarket.labels import card_label, rule_label, seat_name, shadow_label
from ripmarket_env.games.ripmarket.render import describe_action

__all__ = ["GameLog", "describe_action", "game_log", "result_line", "round_line", "cards_digest", "default_engine_kwargs",
           "seat_name", "step_text", "god_lines", "round_table", "same_line"]


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


#: Earlier words of an event, and the words that replaced them: a record written before
#: keeps verifying (``same_line``). The grace round's line named "the lowest" under every
#: rule, also where Low Tide made the highest scores the ones that would have been hit.
_REWORDED = ((re.compile(r"First round: nobody takes round damage \(the (\d+) lowest would have\)"),
              r"First round: nobody takes round damage (\1 players would have)"),
             (re.compile(r"First round: nobody takes round damage \(the lowest would have\)"),
              "First round: nobody takes round damage (one player would have)"))


def same_line(replayed: dict, recorded: dict) -> bool:
    """Whether a recorded line says what the replay says, in this version's words or an
    earlier version's (``_REWORDED``)."""
    if not isinstance(recorded.get("log"), list) or not all(isinstance(x, str) for x in recorded["log"]):
        return False
    log = []
    for text in recorded["log"]:
        for old, new in _REWORDED:
            if old.fullmatch(text):
                text = old.sub(new, text)
        log.append(text)
    return {**recorded, "log": log} == replayed


def result_line(engine) -> dict:
    return core_records.result_line(engine)


# ------------------------------------------------------------------ how `ripmarket replay` shows a record
def step_text(engine, line: dict, god: bool = False) -> str:
    """A decision line as the replay prints it: a card played face-down stays unnamed
    unless ``god`` (R-12.3); the record itself names it."""
    desc = line["desc"]
    kind, arg = engine.actions.decode(line["action"])
    if not god and kind == "card" and bool(engine.cards.living_face_down[arg]) and " replaces " not in desc:
        return f"{seat_name(line['seat'])} plays a card face-down"
    return desc


def god_lines(engine) -> list[str]:
    """Every seat's hands (the replay's god view, at the start of a round)."""
    r = engine.state[0]
    out = []
    for q in range(engine.num_players):
        living = [card_label(engine.cards, d) + (f" x{k}" if k > 1 else "") for d, k in enumerate(r["hand"][q]) if k > 0]
        shadow = [shadow_label(engine.cards, s) + (f" x{k}" if k > 1 else "")
                  for s, k in enumerate(r["shadow_hand"][q]) if k > 0]
        out.append(f"{seat_name(q)}: {', '.join(living) or '-'} | Shadow: {', '.join(shadow) or '-'}")
    return out


def round_table(engine, line: dict, before: dict | None, who) -> dict:
    """A round line as the replay's table: ``{"title", "columns", "right", "rows"}``.
    ``before``: the previous round line (None: the first), for the HP each seat lost,
    direct hits included; ``who(q)`` names a seat."""
    hp0 = [int(engine.cfg[C_HP])] * len(line["hp"]) if before is None else before["hp"]
    title = f"Round {line['round']} resolved" + (" (epilogue, display only)" if line.get("epilogue") else "")
    rows = []
    for q, (sc, hp) in enumerate(zip(line["scores"], line["hp"])):
        card = line["cards"][q] or "-"
        if line["targets"][q] is not None:
            card += f" -> {seat_name(line['targets'][q])}"
        if line["haunted_by"][q]:
            card += " · haunted by " + ", ".join(line["haunted_by"][q])
        lost = max(0, int(hp0[q]) - int(hp))
        after = f"{hp}" if q not in line["died"] and hp > 0 else ("0 (dies)" if q in line["died"] else "0 (Ghost)")
        rows.append([who(q) + (" *" if q == line["first_player"] else ""), card, "-" if sc is None else str(sc),
                     str(lost), after])
    return {"title": f"{title} · rule: {line['rule']}", "columns": ["seat", "card", "score", "HP lost", "HP after"],
            "right": ["score", "HP lost", "HP after"], "rows": rows}
