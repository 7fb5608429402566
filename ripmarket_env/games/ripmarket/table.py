"""R.I.P. Market's table description (``SPEC.table``, schema: ``ripmarket_env.core.table``):
what one seat may see (R-12.3): every seat's HP, hand and Shadow hand sizes, Ghost flag,
what it took and played (a face-down card unnamed to the others), its target and the
Shadow cards attached; the Market, the decks and the active rule; the viewer's own
Living and Shadow hands with each card's text, its legal choices in words, and at the end
the standings (R-11.2) with the round each seat died in and how."""

from __future__ import annotations

from ripmarket_env.core.table import base, seat_rows, standings
from ripmarket_env.games.ripmarket.config import C_HP, C_MARKET
from ripmarket_env.games.ripmarket.labels import card_label, rule_label, seat_name, shadow_label
from ripmarket_env.games.ripmarket.render import phase_text
from ripmarket_env.games.ripmarket.state import PHASE_NAMES


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


def describe(spec, engine, g: int = 0, viewer: int | None = None, history=()) -> dict:
    d = base(spec, engine, g, viewer)
    db = engine.cards
    r = engine.state[g]
    done = bool(r["done"])
    hp0 = int(engine.cfg[C_HP])
    d["turn"], d["turn_word"] = int(r["round_num"]) + (2 if r["epilogue"] else 1), "round"

    def counters(q):
        t = int(r["target"][q])
        played = "-"
        if int(r["played"][q]) >= 0:
            hidden = bool(r["face_down"][q]) and q != viewer
            played = "face-down" if hidden else (card_label(db, int(r["played"][q]))
                                                 + (" face-down" if r["face_down"][q] else ""))
            if t >= 0:
                played += f" -> {seat_name(t)}"
        acq = int(r["acquired"][q])
        took = {0: "-", 1: "deck"}.get(acq) or (f"Market: {card_label(db, int(r['acq_card'][q]))}"
                                                if int(r["acq_card"][q]) >= 0 else "Market")
        haunts = ", ".join(shadow_label(db, int(r["attached"][q, i])) for i in range(int(r["attached_n"][q])))
        return {"HP": f"{int(r['hp'][q])}/{hp0}", "hand": int(r["hand_n"][q]), "shadow": int(r["shadow_n"][q]),
                "took": took, "played": played, "haunted by": haunts or "-"}

    def flags(q):
        out = [] if bool(r["alive"][q]) else ["Ghost"]
        if not done and int(r["first_player"]) == q:
            out.append("First Player")
        return out

    d["seats"] = seat_rows(engine, g, viewer, seat_name, counters=counters, flags=flags)
    d["table"] = [{"name": "Market", "cards": [
        {"slot": k, "text": card_label(db, int(r["market"][k])) if int(r["market"][k]) >= 0 else "empty"}
        for k in range(int(engine.cfg[C_MARKET]))]}]
    d["info"] = [f"Rule: {rule_label(r['rule'])}" + (" · epilogue (display only)" if r["epilogue"] else ""),
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
        d["choices"] = [{"action": c["action"], "text": choice_text(engine, g, c["action"])} for c in d["choices"]]
        ghost = "" if bool(r["alive"][viewer]) else "You are a Ghost. "
        d["prompt"] = f"{ghost}Your decision: {phase_text(engine, g, viewer=viewer)}"
    if done:
        end = next((e.text_for(viewer) for e in reversed(list(history)) if e.kind == "game_over"), "")
        d["end"] = end.split(": ", 1)[1] if end.startswith("Game over: ") else "the game is over"
        d["standings"] = standings(spec, engine, g, seat_name, lambda q: _how(engine, r, q, history, viewer))
    return d


__all__ = ["choice_text", "describe"]
