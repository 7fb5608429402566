"""R.I.P. Market's table description (``SPEC.table``, schema: ``ripmarket_env.core.table``):
what one seat may see (R-12.3): every seat's HP, hand and Shadow hand sizes, Ghost flag,
what it took and played (a face-down card unnamed to the others), its target and the
Shadow cards attached; the Market, the decks and the active rule with the card that set
it; the viewer's own Living and Shadow hands with each card's text, its legal choices in
words (a choice naming a Market slot or a seat carries ``refs``), and at the end the
standings (R-11.2) with the round each seat died in and how.

``extra`` (public data the page plugin ``web/table.js`` draws): ``max_hp``; per seat its
``hp``, ``alive``, the card it ``played`` this round (``{"face_down", "name", "value",
"text"}``, the name, value and text ``None`` for another seat's face-down card), its
``target``, what it ``took`` (``"deck"``/``"market"``, with ``took_card`` when from the
Market) and the Shadow cards ``haunted_by`` (name, family, text); the ``market`` cards
(name, value, family, text; ``None`` for an empty slot); the active ``rule`` (name, the card
that set it, its text); the ``epilogue`` flag; and ``last_round``: the latest resolved
round's number, its rule (as ``rule``) and its result in sentences (``story.why_lines``:
scores, damage and why, Deflection, deaths)."""

from __future__ import annotations

from ripmarket_env.core.table import base, seat_rows, standings
from ripmarket_env.games.ripmarket.config import C_HP, C_MARKET
from ripmarket_env.games.ripmarket.labels import card_label, rule_label, seat_name, shadow_label
from ripmarket_env.games.ripmarket.render import phase_text, round_shown
from ripmarket_env.games.ripmarket.state import PHASE_NAMES

MARKET = "Market"  # the name of the Market zone, which choices' ``refs`` name
SEATS = "seats"  # the ``zone`` of a choice's ``refs`` that names a seat (``slot``: the seat)


def choice_refs(engine, g: int, a: int) -> list[dict]:
    """What action ``a`` of game ``g``'s deciding seat names on the table: ``[{"zone": "Market",
    "slot": k}]`` for a Market slot, ``[{"zone": "seats", "slot": q}]`` for a seat (R-5, R-6)."""
    kind, arg = engine.actions.decode(a)
    if kind in ("acquire_market", "market_slot"):
        return [{"zone": MARKET, "slot": int(arg)}]
    if kind == "target":
        return [{"zone": SEATS, "slot": (int(engine.state[g]["actor"]) + int(arg)) % engine.num_players}]
    return []


def choice_text(engine, g: int, a: int) -> str:
    """Action ``a`` of the deciding seat of game ``g``, in its words (what it means here)."""
    db = engine.cards
    r = engine.state[g]
    kind, arg = engine.actions.decode(a)
    P = engine.num_players
    me = int(r["actor"])
    phase = PHASE_NAMES[min(int(r["phase"]), len(PHASE_NAMES) - 1)]
    if kind == "acquire_deck":
        return f"Take the top card of the Living Deck ({int(r['deck_n'])} cards left)"
    if kind == "acquire_market":
        d = int(r["market"][arg])
        return f"Take {card_label(db, d)} from Market slot {arg}: {db.living[d].text}"
    if kind == "card":
        c = db.living[arg]
        down = " face-down" if c.face_down else ""
        if phase == "choose_replacement":
            return f"Replace {card_label(db, int(r['pend_card']))} with {card_label(db, arg)}{down}: {c.text}"
        return f"Play {card_label(db, arg)}{down}: {c.text}"
    if kind == "target":
        t = (me + arg) % P
        who = f"{seat_name(t)} (HP {int(r['hp'][t])})"
        if phase == "choose_victim":
            return f"Haunt {who} with {shadow_label(db, int(r['pend_shadow']))}"
        return f"Choose {who} for {card_label(db, int(r['pend_card']))}"
    if kind == "market_slot":
        d = int(r["market"][arg])
        there = card_label(db, d) if d >= 0 else "(empty)"
        return f"Choose Market slot {arg} ({there}) for {card_label(db, int(r['pend_card']))}"
    if kind == "pass":
        return "Pass: attach no Shadow card this turn"
    s = db.shadow[arg]
    return f"Play the Shadow card {s.name} ({s.family}): {s.text}"


def _how(engine, r, q: int, history, viewer) -> str:
    """How seat ``q`` finished: the round it died in and the damage that killed it (public
    at resolution, R-12.3), or the HP it survived with."""
    died = int(r["death_round"][q])
    if bool(r["alive"][q]) or died < 0:
        return f"survived with {int(r['hp'][q])} HP"
    from ripmarket_env.games.ripmarket.story import resolutions, why_lines

    history = list(history)
    why = [e.text_for(viewer) for e in history if e.kind == "hit" and e.seat == q and e.round == died + 1]
    rules = [rule_label(e.a) for e in history if e.kind == "rule" and e.round == died + 1]
    for start, end in resolutions(history):  # the round's damage, and why
        if history[start].a == died + 1:
            why += [x["why"] for x in why_lines(engine, history[start:end], seat_name, (rules or ["none"])[-1])
                    if x["seat"] == q and x["kind"] in ("damage", "hit")]
    return f"died in round {died + 1}" + (f": {'; '.join(why)}" if why else "")


def _card(db, d: int) -> dict:
    c = db.living[int(d)]
    return {"name": c.name, "value": int(c.value), "family": c.family, "text": c.text}


def _shadow(db, s: int) -> dict:
    c = db.shadow[int(s)]
    return {"name": c.name, "family": c.family, "text": c.text}


def _this_round(history, round_no: int) -> list:
    """The events of round ``round_no`` (its number as the events count it, from 1)."""
    return [e for e in history if e.round == round_no]


def _last_round(engine, history) -> dict | None:
    """The latest resolved round's result in sentences, with every seat named by its seat
    name (public facts only: scores, damage and why, Deflection, hauntings, deaths)."""
    from ripmarket_env.games.ripmarket.story import resolutions, rule_card, rule_text, why_lines

    spans = resolutions(history)
    if not spans:
        return None
    start, end = spans[-1]
    n = history[start].a
    rules = [rule_label(e.a) for e in history if e.kind == "rule" and e.round == n]
    rule = (rules or ["none"])[-1]
    card = rule_card(_this_round(history, n), engine.cards) if rule != "none" else None
    lines = why_lines(engine, history[start:end], seat_name, rule)
    return {"round": int(n), "rule": {"name": rule, "card": card, "text": rule_text(rule, card)},
            "lines": [{"seat": x["seat"], "kind": x["kind"], "text": x["text"]} for x in lines]}


def describe(spec, engine, g: int = 0, viewer: int | None = None, history=()) -> dict:
    from ripmarket_env.games.ripmarket.story import rule_card, rule_text

    d = base(spec, engine, g, viewer)
    db = engine.cards
    r = engine.state[g]
    done = bool(r["done"])
    history = list(history)
    hp0 = int(engine.cfg[C_HP])
    d["turn"], d["turn_word"] = round_shown(r, engine.cfg), "round"

    def played(q) -> dict | None:
        if int(r["played"][q]) < 0:
            return None
        down = bool(r["face_down"][q])
        if down and q != viewer:
            return {"face_down": True, "name": None, "value": None, "text": None}
        return {"face_down": down, **_card(db, int(r["played"][q]))}

    def counters(q):
        t = int(r["target"][q])
        shown = "-"
        if int(r["played"][q]) >= 0:
            hidden = bool(r["face_down"][q]) and q != viewer
            shown = "face-down" if hidden else (card_label(db, int(r["played"][q]))
                                                + (" face-down" if r["face_down"][q] else ""))
            if t >= 0:
                shown += f" -> {seat_name(t)}"
        acq = int(r["acquired"][q])
        took = {0: "-", 1: "deck"}.get(acq) or (f"Market: {card_label(db, int(r['acq_card'][q]))}"
                                                if int(r["acq_card"][q]) >= 0 else "Market")
        haunts = ", ".join(shadow_label(db, int(r["attached"][q, i])) for i in range(int(r["attached_n"][q])))
        return {"HP": f"{int(r['hp'][q])}/{hp0}", "hand": int(r["hand_n"][q]), "shadow": int(r["shadow_n"][q]),
                "took": took, "played": shown, "haunted by": haunts or "-"}

    def flags(q):
        out = [] if bool(r["alive"][q]) else ["Ghost"]
        if not done and int(r["first_player"]) == q:
            out.append("First Player")
        return out

    d["seats"] = seat_rows(engine, g, viewer, seat_name, counters=counters, flags=flags)
    market = [int(r["market"][k]) for k in range(int(engine.cfg[C_MARKET]))]
    d["table"] = [{"name": MARKET, "cards": [
        {"slot": k, "text": card_label(db, c) if c >= 0 else "empty"}  # texts: ``extra["market"]``
        for k, c in enumerate(market)]}]
    rule = rule_label(r["rule"])
    card = rule_card(_this_round(history, int(r["round_num"]) + 1), db) if rule != "none" else None
    d["info"] = [f"Rule: {rule_text(rule, card)}" + (" · epilogue (display only)" if r["epilogue"] else ""),
                 f"Living Deck {int(r['deck_n'])} · discard {int(r['discard_n'])} · "
                 f"Shadow Deck {int(r['shadow_deck_n'])} · Shadow discard {int(r['shadow_discard_n'])}"]
    if viewer is not None:
        for c in range(db.n_living):
            if int(r["hand"][viewer, c]):
                d["hand"].append({"name": card_label(db, c), "count": int(r["hand"][viewer, c]),
                                  "text": db.living[c].text, "zone": "hand"})
        for s in range(db.n_shadow):
            if int(r["shadow_hand"][viewer, s]):
                sc = db.shadow[s]
                d["hand"].append({"name": f"{sc.name} ({sc.family})", "count": int(r["shadow_hand"][viewer, s]),
                                  "text": sc.text, "zone": "Shadow hand"})
        for i in range(int(r["attached_n"][viewer])):
            sc = db.shadow[int(r["attached"][viewer, i])]
            d["hand"].append({"name": f"{sc.name} ({sc.family})", "count": 1, "text": sc.text,
                              "zone": "attached to you"})
    if d["choices"]:
        d["choices"] = [{"action": c["action"], "text": choice_text(engine, g, c["action"]),
                         **({"refs": refs} if (refs := choice_refs(engine, g, c["action"])) else {})}
                        for c in d["choices"]]
        ghost = "" if bool(r["alive"][viewer]) else "You are a Ghost. "
        d["prompt"] = f"{ghost}Your decision: {phase_text(engine, g, viewer=viewer)}"
    d["extra"] = {
        "max_hp": hp0,
        "seats": [{"seat": q, "hp": int(r["hp"][q]), "alive": bool(r["alive"][q]), "played": played(q),
                   "target": int(r["target"][q]) if int(r["played"][q]) >= 0 and int(r["target"][q]) >= 0 else None,
                   "took": {0: None, 1: "deck", 2: "market"}.get(int(r["acquired"][q])),
                   "took_card": _card(db, int(r["acq_card"][q]))
                   if int(r["acquired"][q]) == 2 and int(r["acq_card"][q]) >= 0 else None,
                   "haunted_by": [_shadow(db, int(r["attached"][q, i])) for i in range(int(r["attached_n"][q]))]}
                  for q in range(engine.num_players)],
        "market": [{"slot": k, **_card(db, c)} if c >= 0 else None for k, c in enumerate(market)],
        "rule": {"name": rule, "card": card, "text": rule_text(rule, card)},
        "epilogue": bool(r["epilogue"]),
        "last_round": _last_round(engine, history),
    }
    if done:
        end = next((e.text_for(viewer) for e in reversed(history) if e.kind == "game_over"), "")
        d["end"] = end.split(": ", 1)[1] if end.startswith("Game over: ") else "the game is over"
        d["standings"] = standings(spec, engine, g, seat_name, lambda q: _how(engine, r, q, history, viewer))
    return d


__all__ = ["MARKET", "SEATS", "choice_refs", "choice_text", "describe"]

