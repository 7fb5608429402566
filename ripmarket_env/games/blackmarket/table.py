"""Black Market's table description (``SPEC.table``, schema: ``ripmarket_env.core.table``):
what one seat may see (BM-7): the six map slots (a card never seen stays unnamed), the
dice, every seat's points, side, hand size and owned cards, the viewer's own Hand Cards
only, its legal choices in words, and at the end the standings (side and points)."""

from __future__ import annotations

from ripmarket_env.core.table import base, seat_rows, standings
from ripmarket_env.games.blackmarket.actions import COLOURS as PAY_COLOURS
from ripmarket_env.games.blackmarket.actions import EFFECTS, PAYMENTS, decode
from ripmarket_env.games.blackmarket.cards import effect_text
from ripmarket_env.games.blackmarket.events import KIND_NAMES, SIDES, seat_name
from ripmarket_env.games.blackmarket.state import N_SLOTS, PHASE_NAMES

HAND_TEXT = {
    "Red": "pays for a purchase (three of one colour, BM-4.4) or, two of them, a flip or rotation",
    "Black": "pays for a purchase (three of one colour, BM-4.4) or, two of them, a flip or rotation",
    "Flip": "pays for one flip or rotation (BM-4.2, BM-4.3); never for a purchase",
}
END_WORDS = {0: "a side reached the target", 1: "the map and the Point deck ran out", 2: "the turn limit was reached"}


def slot_card(engine, r, k: int) -> str:
    """The card in map slot ``k`` (1-6) as the table knows it."""
    d = int(r["map_card"][k - 1])
    if d < 0:
        return "empty"
    if not r["map_seen"][k - 1]:
        return "an unseen card"
    c = engine.cards.point[d]
    return f"{c.name}, {c.points} pt"


def choice_text(engine, g: int, a: int) -> str:
    """Action ``a`` of the deciding seat of game ``g``, in words (public facts only)."""
    r = engine.state[g]
    kind, args = decode(int(a))
    me = int(r["actor"])
    if kind == "flip":
        k, p = args
        to = "face-up" if r["map_down"][k - 1] else "face-down"
        return f"Flip slot {k} ({slot_card(engine, r, k)}) {to}, paying {PAYMENTS[p]}"
    if kind == "rotate":
        k, p = args
        side = 1 - int(r["map_side"][k - 1])
        whose = "your side" if side == me % 2 else "the other side"
        return f"Rotate slot {k} ({slot_card(engine, r, k)}) to face {whose} ({SIDES[side]}), paying {PAYMENTS[p]}"
    if kind == "buy":
        k, c = args
        return f"Buy slot {k} ({slot_card(engine, r, k)}) with three {PAY_COLOURS[c]}"
    if kind == "draw":
        return f"Draw a Hand Card with the die showing {args[0]}"
    if kind == "effect":
        d = engine.cards.design_of(EFFECTS[args[0]])
        what = effect_text(engine.cards.point[d]).split(": ", 1)[-1] if d >= 0 else ""
        return "Use " + engine.describe_action(a)[4:] + (f" ({what})" if what else "")
    if kind == "choose_slot":
        if PHASE_NAMES[int(r["phase"])] == "choose_number":
            return f"Set the die to {args[0]}"
        return f"The die showing {args[0]}"
    victim = (me + args[0]) % engine.num_players
    return f"Steal from {seat_name(victim)} ({int(r['hand_n'][victim])} cards in hand)"


def prompt(engine, g: int, phase: str) -> str:
    r = engine.state[g]
    dice = [int(r["dice"][i]) for i in range(int(r["n_dice"])) if not r["dice_used"][i]]
    shown = " and ".join(map(str, dice)) or "none"
    return {
        "act": f"Your turn: unused dice {shown}. Each die acts on the map slot of its number: "
               "flip, rotate, buy, or draw a card.",
        "choose_die": f"Choose a die (unused: {shown}).",
        "choose_number": "Choose the die's new number.",
        "choose_seat": "Heist: choose the player to steal two random Hand Cards from.",
    }.get(phase, "Your decision")


def describe(spec, engine, g: int = 0, viewer: int | None = None, history=()) -> dict:
    d = base(spec, engine, g, viewer)
    db = engine.cards
    r = engine.state[g]
    rules = engine.rules
    done = bool(r["done"])
    d["turn"], d["turn_word"] = int(r["turn"]) + 1, "turn"

    def owned(q):
        return ", ".join(db.point[c].name + (f" x{int(n)}" if n > 1 else "") + (" (spent)" if r["spent"][q, c] else "")
                         for c, n in enumerate(r["owned"][q]) if n) or "-"

    def flags(q):
        out = [f"side {SIDES[q % 2]}"]
        if not done and int(r["turn_player"]) == q:
            out.append("rolls the dice")
        return out

    d["seats"] = seat_rows(engine, g, viewer, seat_name, flags=flags,
                           counters=lambda q: {"points": int(r["points"][q]), "hand": int(r["hand_n"][q]),
                                               "owns": owned(q)})
    slots = []
    for s in range(N_SLOTS):
        text = slot_card(engine, r, s + 1)
        if int(r["map_card"][s]) >= 0:
            text += (", face-down" if r["map_down"][s] else ", face-up") + f", faces side {SIDES[int(r['map_side'][s])]}"
        slots.append({"slot": s + 1, "text": text})
    d["table"] = [{"name": "Map", "cards": slots}]
    a, b = engine.side_points(g)
    mode = "teams" if rules.teams else "free-for-all"
    d["info"] = [f"{mode}, target {rules.target_points} points · turn {int(r['turn']) + 1} of {rules.turns_cap} · "
                 f"side A {a} pt, side B {b} pt",
                 f"Point deck {int(r['pdeck_n'])} · Hand deck {int(r['hdeck_n'])} · "
                 f"Hand discard {int(sum(int(x) for x in r['hdisc']))}"]
    if not done:
        dice = ", ".join(f"{int(r['dice'][i])}" + (" (used)" if r["dice_used"][i] else "")
                         for i in range(int(r["n_dice"])))
        d["info"].append(f"Dice of {seat_name(int(r['turn_player']))}: {dice or '-'}")
    if viewer is not None:
        d["hand"] = [{"name": f"{k} Hand Card", "count": int(r["hand"][viewer, i]), "text": HAND_TEXT[k], "zone": "hand"}
                     for i, k in enumerate(KIND_NAMES) if int(r["hand"][viewer, i])]
    if d["choices"]:
        d["choices"] = [{"action": c["action"], "text": choice_text(engine, g, c["action"])} for c in d["choices"]]
        d["prompt"] = prompt(engine, g, d["phase"])
    if done:
        reason = END_WORDS.get(int(r["end_reason"]), "the game ended")
        d["end"] = reason

        def how(q):
            won = bool(r["winners"][q])
            side = f"side {SIDES[q % 2]}, " if rules.teams else ""
            return f"{side}{int(r['points'][q])} points: " + ("won" if won else "lost") + f" ({reason})"

        d["standings"] = standings(spec, engine, g, seat_name, how)
    return d


__all__ = ["choice_text", "describe", "prompt", "slot_card"]
