"""The Rune Market's table description (``SPEC.table``, schema: ``ripmarket_env.core.table``):
what one seat may see (RM-8.4): every seat's Runes, hand size and loose Runes (its turn and
whether it decides), the Market (Runes, Boat Shelters and Bandits for sale, each with its
card text) and every seat's Shelters (Runes inside, Boat, Bandit and what was paid toward
it) as table zones, who decides what in words, the viewer's own hand only with each card's
text, its legal choices in words (a block decision says whose attack and how high; a
choice that names a Market card or a Shelter carries ``refs`` to it, and ``told``: the
choice as what you do, for a story line), and at the end the standings by Runes."""

from __future__ import annotations

from ripmarket_env.core.table import base, seat_rows, standings
from ripmarket_env.games.runemarket.actions import decode
from ripmarket_env.games.runemarket.config import C_REMOVAL
from ripmarket_env.games.runemarket.events import END_REASONS, seat_name
from ripmarket_env.games.runemarket.state import INTENT_NAMES, PHASE_NAMES

COL = ("Red", "Blue")
MARKET, SHELTERS = "Market", "Shelters"  # the table zones' names (a choice's refs name them)
#: The Market's slots: its Red Runes, Blue Runes, Boat Shelters and Bandits.
MARKET_SLOTS = {"red_rune": 1, "blue_rune": 2, "boat_shelter": 3, "bandit": 4}
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
#: What a seat is deciding, in words (the seat's name comes first).
DECIDING = {
    "start": "stage 1 of the turn (discard a Shelter for a double theft, or go on)",
    "rune_buy": "stage 2 of the turn (buy with Runes, or go on)",
    "hand": "stage 3 of the turn (play a card, or end the turn)",
    "choose_card": "which Number card for the {intent}",
    "payment": "what to pay for the {intent} ({paid} paid so far)",
    "choose_opponent": "which player for the {intent}",
    "choose_steal": "what to steal from {other}",
    "choose_shelter": "which Shelter for the {intent}",
    "defend": "whether to block the attack of {attacker} (a Number {value})",
}
END_WORDS = {"market_empty": "the Market ran out of Runes", "max_turns": "the turn limit was reached"}
DONE_WORDS = {"start": "go on to stage 2", "rune_buy": "go on to stage 3", "hand": "end your turn"}


def runes(n: int) -> str:
    return f"{n} Rune" + ("" if n == 1 else "s")


def number_text(v: int) -> str:
    """A Number card's use, on the card (RM-4, RM-5): what it pays, attacks and blocks."""
    return f"pay {v}, attack with it, or block an attack of {v} or less"


def _target(engine, r, kind: str, arg: int) -> int:
    """The seat an opponent or Shelter choice names (counted clockwise from the decider)."""
    return (int(r["actor"]) + (arg if kind == "opponent" else arg // 2)) % engine.num_players


def choice_text(engine, g: int, a: int, scores) -> str:
    """Action ``a`` of the deciding seat in words: the seat an opponent choice names."""
    r = engine.state[g]
    kind, arg = decode(a)
    if kind == "done":
        return DONE_WORDS.get(PHASE_NAMES[int(r["phase"])], engine.describe_action(a))
    if kind in ("opponent", "shelter") and (kind == "opponent" or arg >= 2):
        t = _target(engine, r, kind, arg)
        who = f"{seat_name(t)} ({runes(scores[t])}, {int(r['hand_n'][t])} in hand)"
        return who if kind == "opponent" else f"the {COL[arg % 2]} Shelter of {who}"
    return engine.describe_action(a)


def choice_refs(engine, g: int, a: int) -> list[dict]:
    """The table cards action ``a`` names: a Market slot, a seat's Shelter."""
    r = engine.state[g]
    kind, arg = decode(a)
    if kind == "buy_rune":
        return [{"zone": MARKET, "slot": MARKET_SLOTS[("red_rune", "blue_rune")[arg]]}]
    if kind in ("rune_boat", "number_boat"):
        return [{"zone": MARKET, "slot": MARKET_SLOTS["boat_shelter"]}]
    if kind in ("rune_bandit", "number_bandit"):
        return [{"zone": MARKET, "slot": MARKET_SLOTS["bandit"]}]
    if kind in ("discard_shelter", "pay_bandit"):
        return [{"zone": SHELTERS, "slot": shelter_slot(int(r["actor"]), arg)}]
    if kind == "shelter":
        return [{"zone": SHELTERS, "slot": shelter_slot(_target(engine, r, kind, arg), arg % 2)}]
    return []


def choice_told(engine, g: int, a: int, text: str) -> str:
    """The choice as what you do ("let the attack through"): the story line of a decision
    the session takes for you (your only option)."""
    r = engine.state[g]
    kind, arg = decode(a)
    phase = PHASE_NAMES[int(r["phase"])]
    if kind == "no_block":
        return "let the attack through"
    if kind == "number":
        intent = INTENT_NAMES[int(r["intent"])] if int(r["intent"]) >= 0 else ""
        if phase == "defend":
            return f"block with your Number {arg}"
        if phase == "payment" or intent.startswith("pay"):
            return f"pay your Number {arg}"
        return f"{intent or 'play'} with your Number {arg}"
    if kind == "opponent":
        return f"pick {text}"
    if kind == "shelter":
        return f"pick {text[:1].lower()}{text[1:]}"
    return text[:1].lower() + text[1:]


def shelter_slot(q: int, col: int) -> int:
    """The slot of seat ``q``'s Shelter of colour ``col`` in the Shelters zone."""
    return 2 * q + col + 1


def shelter_card(engine, r, q: int, col: int) -> str:
    """A seat's Shelter in words: the Runes inside, its Boat, a Bandit and what was paid."""
    parts = [runes(int(r["inside"][q, col])) + " inside"]
    if r["boat"][q, col]:
        parts.append("Boat Shelter: 2 Runes of interest")
    owner = int(r["bandit"][q, col])
    if owner >= 0:
        parts.append(f"Bandit of {seat_name(owner)}, locked ({int(r['bandit_paid'][q, col])} of "
                     f"{int(engine.cfg[C_REMOVAL])} paid to remove it)")
    return f"{seat_name(q)} {COL[col]} Shelter: " + "; ".join(parts)


def market_cards(engine, r) -> list[dict]:
    """The Market's four slots, each with how many are left and the card's text."""
    db = engine.cards
    left = {"red_rune": int(r["market"][0]), "blue_rune": int(r["market"][1]),
            "boat_shelter": int(r["market_boats"]), "bandit": int(r["market_bandits"])}
    plural = {"red_rune": "Red Runes", "blue_rune": "Blue Runes", "boat_shelter": "Boat Shelters",
              "bandit": "Bandits"}
    rules = engine.rules
    price = (f" Price: {rules.runes_per_item} Runes of one colour, or Number cards worth {rules.number_cost} "
             "or more.")
    out = []
    for m in db.market:
        n = left[m.id]
        name = m.name if n == 1 else plural[m.id]
        out.append({"slot": MARKET_SLOTS[m.id],
                    "text": f"{n} {name}: {m.text}" + (price if m.id in ("boat_shelter", "bandit") else "")})
    return sorted(out, key=lambda c: c["slot"])


def deciding_line(engine, r, viewer) -> str:
    """Whose turn it is and who decides what, in words (e.g. "P2's turn; you decide
    whether to block the attack of P2 (a Number 7)")."""
    actor, tp = int(r["actor"]), int(r["turn_player"])
    phase = PHASE_NAMES[int(r["phase"])]
    intent = INTENT_NAMES[int(r["intent"])] if int(r["intent"]) >= 0 else "move"
    other = int(r["other"])
    what = DECIDING.get(phase, phase).format(
        intent=intent, paid=int(r["pay_sum"]), other=seat_name(other) if other >= 0 else "the other player",
        attacker=seat_name(tp), value=int(r["pend_value"]))
    whose = "Your turn" if tp == viewer else f"{seat_name(tp)}'s turn"
    return f"{whose}; {'you decide' if actor == viewer else seat_name(actor) + ' decides'} {what}"


def describe(spec, engine, g: int = 0, viewer: int | None = None, history=()) -> dict:
    d = base(spec, engine, g, viewer)
    r = engine.state[g]
    db = engine.cards
    done = bool(r["done"])
    scores = engine.scores(g)
    d["turn"], d["turn_word"] = int(r["total_turns"]), "turn"

    def flags(q):
        if done or int(r["turn_player"]) != q:
            return []
        return ["your turn" if q == viewer else "their turn"]

    d["seats"] = seat_rows(engine, g, viewer, seat_name, flags=flags, counters=lambda q: {
        "Runes": scores[q], "hand": int(r["hand_n"][q]),
        "loose": f"{int(r['loose'][q, 0])} Red, {int(r['loose'][q, 1])} Blue"})
    d["table"] = [
        {"name": MARKET, "cards": market_cards(engine, r)},
        {"name": SHELTERS, "cards": [{"slot": shelter_slot(q, col), "text": shelter_card(engine, r, q, col)}
                                     for q in range(engine.num_players) for col in range(2) if r["shelter"][q, col]]},
    ]
    d["info"] = ([] if done else [deciding_line(engine, r, viewer)]) + [
        f"Draw pile {int(r['deck_n'])} · discard {int(r['discard_n'])} · "
        f"{int(r['removed_bandits'])} Bandit{'s' * (int(r['removed_bandits']) != 1)} out of the game"]
    if viewer is not None:
        held = [c for c in range(len(db.deck)) if int(r["hand"][viewer, c])]
        d["hand"] = [{"name": db.name(c), "count": int(r["hand"][viewer, c]),
                      "text": db.deck[c].text or number_text(int(db.deck[c].value)), "zone": "hand"}
                     for c in held]
    if d["choices"]:
        blocking = d["phase"] == "defend"
        for c in d["choices"]:
            text = choice_text(engine, g, c["action"], scores)
            c["told"] = choice_told(engine, g, c["action"], text)
            if blocking:
                text = "let the attack through (do not block)" if text == "do not block" else f"block: show your {text}"
            c["text"] = text[:1].upper() + text[1:]
            refs = choice_refs(engine, g, c["action"])
            if refs:
                c["refs"] = refs
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


__all__ = ["MARKET", "PROMPTS", "SHELTERS", "choice_refs", "choice_text", "choice_told", "describe", "runes"]
