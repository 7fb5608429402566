"""R.I.P. Market's story (``SPEC.story``): what happened, in words, for one seat, and why.

Every step's events are told as the seat may read them (``Event.text_for``: a face-down
card or a drawn card is named to its owner only, R-12.3); the step that resolves a round
adds the round's result in sentences (``round_story``): the scores, who took damage and
why (lowest score, Low Tide, The Cull, Deflection), sudden death, deaths. Everything is
read from the engine's event log and per-round summaries (``events.GameLog``); only public
facts are used (scores, damage, Deflection, attached Shadow cards and their triggers are
public at resolution), so the same sentences can be shown to every seat. The table description
(``table.py``: the latest round's result, how each seat died) uses the same functions.
"""

from __future__ import annotations

from collections.abc import Callable

from ripmarket_env.games.ripmarket.cards.registry import TRIGGER_KINDS

__all__ = ["resolutions", "round_story", "rule_card", "rule_text", "story", "why_lines"]

_RULE_EFFECT = {
    "none": "the lowest score takes the damage",
    "Low Tide": "the lowest score wins: the highest score takes the damage",
    "Earthquake": "every card scores its printed value only, and no Deflection passes the damage",
    "The Cull": "the two lowest scores each take 1 damage",
}
_TRIGGERS = {code: name for name, code in TRIGGER_KINDS.items()}


def rule_text(rule: str, card: str | None = None) -> str:
    """The active rule named by the card that set it: ``"Aftershock: Earthquake (...)"``."""
    if rule == "none":
        return "No rule change: " + _RULE_EFFECT["none"]
    what = f"{rule} ({_RULE_EFFECT.get(rule, rule)})"
    return f"{card}: {what}" if card and card != rule else what


def rule_card(events, db) -> str | None:
    """The name of the Living card that set the latest rule in ``events`` (one round's)."""
    card: dict[int, int] = {}
    found = None
    for e in events:
        if e.kind in ("play", "replace") and not e.hidden:
            card[e.seat] = e.a
        elif e.kind == "reveal":
            card[e.seat] = e.a
        elif e.kind == "rule":
            d = card.get(e.seat)
            found = db.living[d].name if d is not None else None
    return found


def round_story(summary, db, name: Callable[[int], str]) -> list[dict]:
    """What a resolved round did and why, as ``{"seat", "kind", "text"}`` sentences.

    ``summary``: a ``RoundSummary``/``RoundLog``-like object (``seats``, ``events``, ``rule``
    as a label); ``name(q)`` names a seat for the viewer ("you", "player_2 (greedy)").
    Kinds: ``scores``, ``damage`` (with the reason), ``deflect``, ``hit`` (direct damage),
    ``sudden_death`` (damage not dealt since it would leave nobody alive, R-9.2), ``haunt`` (a Shadow card that helped, hurt or fizzled), ``death``; ``damage`` and ``hit``
    sentences also carry ``why``, the sentence without the seat's name.
    """
    seats = summary.seats
    ev = list(summary.events)
    rule = summary.rule if isinstance(summary.rule, str) else str(summary.rule)
    out: list[dict] = []
    scores = {x["seat"]: x["score"] for x in seats if x["score"] is not None}
    if scores:
        order = sorted(scores, key=lambda q: (-scores[q], q))
        out.append({"seat": -1, "kind": "scores",
                    "text": "Scores: " + ", ".join(f"{name(q)} {scores[q]}" for q in order)})
    # direct damage during the round (Backstab and the like)
    last_attack = None
    for e in ev:
        if e.kind == "attack":
            last_attack = e
        elif e.kind == "hit":
            if last_attack is not None and last_attack.a == e.seat:
                why = f"{name(last_attack.seat)}'s {db.living[last_attack.b].name} hit them directly"
            else:
                why = "direct damage"
            why = f"lost {e.a} HP: {why}"
            out.append({"seat": e.seat, "kind": "hit", "why": why, "text": f"{name(e.seat)} {why} (HP {e.b})"})
            last_attack = None
    deflected = {e.a: e.seat for e in ev if e.kind == "deflect"}
    for e in ev:
        if e.kind == "deflect":
            src = e.seat
            why = f" with {scores[src]}" if src in scores else ""
            out.append({"seat": src, "kind": "deflect",
                        "text": f"{name(src)} would have taken the damage{why}, but Deflection "
                                f"passed it to {name(e.a)}"})
    values = sorted(set(scores.values()))
    for e in ev:
        if e.kind != "damage" or e.a <= 0:
            continue
        q = e.seat
        s = scores.get(q)
        if q in deflected:
            why = f"{name(deflected[q])}'s Deflection passed the damage to them"
        elif s is None:
            why = "their card did not compete"
        elif rule == "Low Tide":
            why = f"highest score ({s}) under Low Tide"
        elif rule == "The Cull":
            why = f"{'lowest' if values and s == values[0] else 'second-lowest'} score ({s}) under The Cull"
        else:
            tied = sum(1 for v in scores.values() if v == s) > 1
            why = f"lowest score ({s}{', tied' if tied else ''})"
        why = f"took {e.a} damage: {why}"
        out.append({"seat": q, "kind": "damage", "why": why, "text": f"{name(q)} {why} (HP {e.b})"})
    for e in ev:
        if e.kind == "spared":
            out.append({"seat": -1, "kind": "sudden_death",
                        "text": "Sudden death: the damage would have left nobody alive, so nobody takes it"})
        elif e.kind == "grace":
            out.append({"seat": -1, "kind": "grace",
                        "text": "First round: nobody takes round damage (R-8.2)"})
    # Shadow cards attached at resolution: did they trigger, and for or against the victim?
    haunter: dict[tuple[int, int], list[int]] = {}
    for e in ev:
        if e.kind == "haunt":
            haunter.setdefault((e.a, e.b), []).append(e.seat)
    fired = {(e.seat, e.a): _TRIGGERS.get(e.b, "") for e in ev if e.kind == "trigger"}
    for x in seats:
        q = x["seat"]
        for s in x.get("haunted_by_designs", []):
            card = db.shadow[s]
            ghosts = haunter.get((q, s)) or []
            by = f" from {name(ghosts.pop(0))}" if ghosts else ""
            if (q, s) in fired:
                what = "changed their score" if fired[(q, s)] == "score" else "discarded cards at random"
                verdict = "helped" if card.family == "blessing" else "hurt"
                text = f"{card.name}{by} on {name(q)} {what}: it {verdict} them"
            else:
                text = f"{card.name}{by} on {name(q)} fizzled: its condition was not met"
            out.append({"seat": q, "kind": "haunt", "text": text})
    for x in seats:
        if x["died"]:
            out.append({"seat": x["seat"], "kind": "death",
                        "text": f"{name(x['seat'])} died and {'are' if name(x['seat']) == 'you' else 'is'} now a Ghost"})
    for x in out:
        if x["text"].startswith("you "):
            x["text"] = "Y" + x["text"][1:]
    return out


class _StepRound:
    """The round a resolving step closed, as ``round_story`` reads it, from that step's
    events: the scores, the deaths and the rule in force (no attached Shadow cards: their
    triggers are told as events)."""

    def __init__(self, engine, events, rule: str | None = None):
        from ripmarket_env.games.ripmarket.labels import rule_label

        scores = {e.seat: e.b for e in events if e.kind == "score"}
        died = {e.seat for e in events if e.kind == "death"}
        self.seats = [{"seat": q, "score": scores.get(q), "died": q in died, "haunted_by_designs": []}
                      for q in range(engine.num_players)]
        self.events = list(events)
        self.rule = rule if rule is not None else rule_label(engine.state[0]["last_rule"])


def resolutions(events) -> list[tuple[int, int]]:
    """``(start, end)`` of every round resolution in ``events``: from its ``resolve`` event
    to the next ``round_start`` or ``game_over`` (or the end)."""
    out = []
    for i, e in enumerate(events):
        if e.kind == "resolve":
            end = next((j for j in range(i + 1, len(events)) if events[j].kind in ("round_start", "game_over")),
                       len(events))
            out.append((i, end))
    return out


def why_lines(engine, events, label: Callable[[int], str], rule: str | None = None) -> list[dict]:
    """``round_story``'s sentences for one resolution's events (``rule``: the round's rule
    label; default: the rule of the round the engine resolved last)."""
    return round_story(_StepRound(engine, events, rule), engine.cards, label)


def story(engine, events, viewer: int, label: Callable[[int], str]) -> list[dict]:
    """``GameSpec.story``: one step's events for seat ``viewer`` (``label(q)`` names a seat),
    and after a round's resolution, why the damage fell where it did (``round_story``)."""
    events = list(events)
    after = {end: (start, end) for start, end in resolutions(events)}
    out = []

    def line(q, kind, text, turn, minor=False):
        out.append({"seat": int(q), "who": label(q) if q >= 0 else "the table", "kind": kind, "text": text,
                    "minor": minor, "turn": turn})

    for i in range(len(events) + 1):
        if i in after:
            start, end = after[i]
            for x in why_lines(engine, events[start:end], label):
                if x["kind"] not in ("grace", "sudden_death"):  # the events already say so
                    line(x["seat"], x["kind"], x["text"], events[start].a)  # the resolved round
        if i == len(events):
            break
        e = events[i]
        line(e.seat, e.kind, e.text_for(viewer), e.round, e.kind in ("draw", "shadow_draw", "round_start", "resolve"))
    return out
