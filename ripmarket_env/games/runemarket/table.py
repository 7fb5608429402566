"""The Rune Market's table description (``SPEC.table``, schema: ``ripmarket_env.core.table``):
what one seat may see (RM-8.4): every seat's Runes, hand size, Shelters (Runes inside,
Boats, Bandits) and loose Runes, the Market and the piles, the viewer's own hand only with
each card's use, its legal choices in words (a block decision says whose attack and how
high), and at the end the standings by Runes."""

from __future__ import annotations

from ripmarket_env.core.table import base, seat_rows, standings
from ripmarket_env.games.runemarket.cards import NUMBER_USE
from ripmarket_env.games.runemarket.events import END_REASONS, seat_name
from ripmarket_env.games.runemarket.actions import decode
from ripmarket_env.games.runemarket.render import shelter_text
from ripmarket_env.games.runemarket.state import INTENT_NAMES, PHASE_NAMES

COL = ("Red", "Blue")
#: What the deciding seat is asked in each phase (RM-3: the four stages of a turn).
PROMPTS = {
    "start": "Start of your turn (RM-3.3): discard a Shelter from your table for a double theft, or go on to stage 2.",
    "rune_buy": "Stage 2 (RM-3.4): buy a Boat Shelter or a Bandit with {cost} Runes of one colour, or go on to "
                "stage 3.",
    "hand": "Stage 3 (RM-3.5): play a card from your hand, or end your turn.",
    "choose_card": "Which Number card for the {intent}?",
    "payment": "Pay for the {intent} with your Number cards: {paid} paid so far.",
    "choose_opponent": "Which player for the {intent}?",
    "choose_steal": "What do you steal from {other}?",
    "choose_shelter": "Which Shelter for the {intent}?",
}
END_WORDS = {"market_empty": "the Market ran out of Runes", "max_turns": "the turn limit was reached"}


def runes(n: int) -> str:
    return f"{n} Rune" + ("" if n == 1 else "s")


def choice_text(engine, g: int, a: int, scores) -> str:
    """Action ``a`` of the deciding seat in words: the seat an opponent choice names."""
    r = engine.state[g]
    kind, arg = decode(a)
    if kind == "done":
        return {"start": "go on to stage 2", "rune_buy": "go on to stage 3", "hand": "end your turn"}.get(
            PHASE_NAMES[int(r["phase"])], engine.describe_action(a))
    if kind in ("opponent", "shelter") and (kind == "opponent" or arg >= 2):
        t = (int(r["actor"]) + (arg if kind == "opponent" else arg // 2)) % engine.num_players
        who = f"{seat_name(t)} ({runes(scores[t])}, {int(r['hand_n'][t])} in hand)"
        return who if kind == "opponent" else f"the {COL[arg % 2]} Shelter of {who}"
    return engine.describe_action(a)


def describe(spec, engine, g: int = 0, viewer: int | None = None, history=()) -> dict:
    d = base(spec, engine, g, viewer)
    r = engine.state[g]
    db = engine.cards
    done = bool(r["done"])
    scores = engine.scores(g)
    d["turn"], d["turn_word"] = int(r["total_turns"]), "turn"

    def flags(q):
        out = []
        if not done and int(r["turn_player"]) == q:
            out.append("their turn")
        return out

    d["seats"] = seat_rows(engine, g, viewer, seat_name, flags=flags, counters=lambda q: {
        "Runes": scores[q], "hand": int(r["hand_n"][q]),
        "shelters": f"{shelter_text(engine, r, q, 0)}; {shelter_text(engine, r, q, 1)}",
        "loose": f"{int(r['loose'][q, 0])} Red, {int(r['loose'][q, 1])} Blue"})
    d["info"] = [f"Market: {int(r['market'][0])} Red and {int(r['market'][1])} Blue Runes · "
                 f"{int(r['market_boats'])} Boat Shelters · {int(r['market_bandits'])} Bandits "
                 f"({int(r['removed_bandits'])} out of the game)",
                 f"Draw pile {int(r['deck_n'])} · discard {int(r['discard_n'])}"]
    if viewer is not None:
        held = [c for c in range(len(db.deck)) if int(r["hand"][viewer, c])]
        first_number = next((c for c in held if db.deck[c].kind == "number"), None)  # their use, told once
        d["hand"] = [{"name": db.name(c), "count": int(r["hand"][viewer, c]),
                      "text": db.deck[c].text or (NUMBER_USE if c == first_number else ""), "zone": "hand"}
                     for c in held]
    if d["choices"]:
        blocking = d["phase"] == "defend"
        for c in d["choices"]:
            text = choice_text(engine, g, c["action"], scores)
            if blocking:
                text = "let the attack through (do not block)" if text == "do not block" else f"block: show your {text}"
            c["text"] = text[:1].upper() + text[1:]
        if blocking:
            attacker, value = int(r["turn_player"]), int(r["pend_value"])
            d["prompt"] = (f"BLOCK? {seat_name(attacker)} attacks you with a Number {value}. Show a Number card of "
                           f"{value} or more to block it (you keep the card), or let it through: an unblocked "
                           f"attack gives {seat_name(attacker)} one theft on you.")
        else:
            intent = INTENT_NAMES[int(r["intent"])] if int(r["intent"]) >= 0 else "move"
            other = int(r["other"])
            if d["phase"] == "choose_card" and intent == "attack":
                d["prompt"] = "Attack with which Number card? The defender blocks it with a card of the same value or more."
            else:
                d["prompt"] = PROMPTS.get(d["phase"], "Your decision").format(
                    intent=intent, paid=int(r["pay_sum"]), cost=engine.rules.runes_per_item,
                    other=seat_name(other) if other >= 0 else "the other player")
    if done:
        reason = END_WORDS.get(END_REASONS.get(int(r["end_reason"]), ""), "the game ended")
        d["end"] = reason

        def how(q):
            result = "won" if r["winners"][q] else ("lost on the tie-break" if scores[q] == max(scores) else "lost")
            return f"{runes(scores[q])}: {result} ({reason})"

        won = [bool(r["winners"][q]) for q in range(engine.num_players)]
        place = [1 if won[q] else 1 + any(won) + sum(1 for p in range(len(won)) if not won[p] and scores[p] > scores[q])
                 for q in range(len(won))]  # the winners (RM-7.4), then the others by Runes
        d["standings"] = standings(spec, engine, g, seat_name, how, (won, place))
    return d


__all__ = ["PROMPTS", "choice_text", "describe"]
