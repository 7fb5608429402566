"""Black Market's table description (``SPEC.table``, schema: ``ripmarket_env.core.table``):
what one seat may see (BM-7), in the words the terminal and the web page show.

* seats: points, hand size ("1 card", "3 cards"), the Point Cards each owns (spent ones
  marked), the side (BM-1.2), "your teammate" in team mode, and whose dice are rolled;
* the table: the Map zone, its six slots (BM-2.1), each with its card (name, colour,
  points, effect), face-up or face-down and the side it faces; a card never seen stays
  unnamed (BM-5.2);
* info: the mode and target, the sides' points, the turn, the dice and the decks;
* hand: the viewer's own Hand Cards by kind (Red, Black, Flip), with what they pay for
  (BM-7.1);
* choices: every legal action in words; a choice that names a slot or a die names the
  map card of that slot ("Buy slot 3: Red 2 (2 pt) with Red"; a die acts on the slot of
  its number, BM-4.1) and carries ``refs: [{"zone": "Map", "slot": k}]``;
* at the end: how it ended and the standings (place, side, points; BM-1.3, BM-1.4);
* extra (the page plugin's data, ``web/table.js``): each slot's public face (colour,
  face-down, side faced) and the dice.
"""

from __future__ import annotations

from ripmarket_env.core.table import base, seat_rows, standings
from ripmarket_env.games.blackmarket.actions import COLOURS as PAY_COLOURS
from ripmarket_env.games.blackmarket.actions import EFFECTS, PAYMENTS, decode
from ripmarket_env.games.blackmarket.cards import effect_text
from ripmarket_env.games.blackmarket.events import KIND_NAMES, SIDES, count, seat_name
from ripmarket_env.games.blackmarket.kernels import END_CAP
from ripmarket_env.games.blackmarket.state import N_SLOTS, PHASE_NAMES

MAP = "Map"
END_WORDS = {0: "reached the target", 1: "the map and the Point deck ran out", 2: "the turn limit was reached"}


def _seen(r, k: int) -> int:
    """The design in map slot ``k`` (1-6) when the table knows it, -1 when empty, -2 unseen."""
    d = int(r["map_card"][k - 1])
    if d < 0:
        return -1
    return d if r["map_seen"][k - 1] else -2


def slot_card(engine, r, k: int) -> str:
    """The card in map slot ``k`` (1-6) in short, as the table knows it: ``Red 2 (2 pt)``."""
    d = _seen(r, k)
    if d == -1:
        return "empty"
    if d == -2:
        return "an unseen card"
    c = engine.cards.point[d]
    return f"{c.name} ({c.points} pt)"


def slot_label(engine, r, k: int) -> str:
    """How a choice names slot ``k``: ``slot 3: Red 2 (2 pt)``."""
    return f"slot {k}: {slot_card(engine, r, k)}"


def slot_text(engine, r, k: int, viewer) -> str:
    """The whole public face of slot ``k``: card, colour, points, effect, face, side faced."""
    d = _seen(r, k)
    if d == -1:
        return "empty"
    side = int(r["map_side"][k - 1])
    whose = "" if viewer is None else (" (yours)" if side == viewer % 2 else " (the other side)")
    face = ("face-down" if r["map_down"][k - 1] else "face-up") + f", faces side {SIDES[side]}{whose}"
    if d == -2:
        return f"unseen card, {face}"
    c = engine.cards.point[d]
    effect = c.text or (effect_text(c) if c.primitive else "")
    return f"{c.name} ({c.colour}, {c.points} pt), {face}" + (f". {effect}" if effect else "")


def hand_text(rules, kind: str) -> str:
    """What a Hand Card of ``kind`` pays for under ``rules``, in short (BM-4.2 - BM-4.4)."""
    if kind == "Flip":
        return "pays a flip or rotation"
    pair = "two pay a flip or rotation" + (" if you hold no Flip" if rules.pair_flip == "no_flip_card" else "")
    return f"three buy a {kind} or Dual card; {pair}"


def choice(engine, g: int, a: int) -> dict:
    """Action ``a`` of the deciding seat of game ``g``: ``{"action", "text"}`` and, when it
    names a map slot or a die, ``refs`` to that slot (public facts only)."""
    r = engine.state[g]
    kind, args = decode(int(a))
    me = int(r["actor"])
    slot = None
    if kind == "flip":
        k, p = args
        to = "face-up" if r["map_down"][k - 1] else "face-down"
        slot, text = k, f"Flip {slot_label(engine, r, k)} {to}, paying {PAYMENTS[p]}"
    elif kind == "rotate":
        k, p = args
        side = 1 - int(r["map_side"][k - 1])
        whose = "your side" if side == me % 2 else "the other side"
        slot, text = k, f"Rotate {slot_label(engine, r, k)} to face {whose} ({SIDES[side]}), paying {PAYMENTS[p]}"
    elif kind == "buy":
        k, c = args
        slot, text = k, f"Buy {slot_label(engine, r, k)} with {PAY_COLOURS[c]} Hand Cards"
    elif kind == "draw":
        k = args[0]
        slot, text = k, f"Draw a Hand Card with the die showing {k} (instead of acting on {slot_label(engine, r, k)})"
    elif kind == "effect":
        d = engine.cards.design_of(EFFECTS[args[0]])
        what = effect_text(engine.cards.point[d]).split(": ", 1)[-1] if d >= 0 else ""
        text = "Use " + engine.describe_action(a)[4:] + (f" ({what})" if what else "")
    elif kind == "choose_slot":
        k = args[0]
        if PHASE_NAMES[int(r["phase"])] == "choose_number":
            slot, text = k, f"Set the die to {k} (acts on {slot_label(engine, r, k)})"
        else:
            slot, text = k, f"The die showing {k} (acts on {slot_label(engine, r, k)})"
    else:
        victim = (me + args[0]) % engine.num_players
        text = f"Steal from {seat_name(victim)} ({count(int(r['hand_n'][victim]), 'card')} in hand)"
    out = {"action": int(a), "text": text}
    if slot is not None:
        out["refs"] = [{"zone": MAP, "slot": int(slot)}]
    return out


def _unused(r) -> list[int]:
    return [int(r["dice"][i]) for i in range(int(r["n_dice"])) if not r["dice_used"][i]]


def prompt(engine, g: int, phase: str) -> str:
    r = engine.state[g]
    shown = " and ".join(map(str, _unused(r))) or "none"
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
    P = engine.num_players
    done = bool(r["done"])
    # ``turn`` counts the turns taken: the one being played is one more, except at the turn
    # limit, which ends the game once the last turn is taken (BM-8.3)
    turn = int(r["turn"]) + (0 if done and int(r["end_reason"]) == END_CAP else 1)
    d["turn"], d["turn_word"] = turn, "turn"
    roller = -1 if done else int(r["turn_player"])

    def owned(q):
        return ", ".join(db.point[c].name + (f" x{int(n)}" if n > 1 else "") + (" (spent)" if r["spent"][q, c] else "")
                         for c, n in enumerate(r["owned"][q]) if n) or "-"

    def flags(q):
        out = [f"side {SIDES[q % 2]}"]
        if rules.teams and viewer is not None and q != viewer and q % 2 == viewer % 2:
            out.append("your teammate")
        if q == roller:
            out.append("your dice" if q == viewer else "rolls the dice")
        return out

    d["seats"] = seat_rows(engine, g, viewer, seat_name, flags=flags,
                           counters=lambda q: {"points": int(r["points"][q]),
                                               "hand": count(int(r["hand_n"][q]), "card"), "owns": owned(q)})
    d["table"] = [{"name": MAP, "cards": [{"slot": k, "text": slot_text(engine, r, k, viewer)}
                                         for k in range(1, N_SLOTS + 1)]}]
    a, b = engine.side_points(g)
    if rules.teams:
        members = "; ".join(f"side {SIDES[s]}: " + ", ".join(seat_name(q) for q in range(s, P, 2)) for s in (0, 1))
        goal = "a player" if rules.team_target == "any_player" else "a side (its players' total)"
        head = f"Teams ({members}): {goal} reaching {rules.target_points} points wins"
    else:
        head = f"Free-for-all: the first player to {rules.target_points} points wins"
    score = f"Side A {a} pt · side B {b} pt · " if rules.teams else ""
    d["info"] = [head, f"{score}turn {turn} of {rules.turns_cap}"]
    dice = []
    if not done:
        dice = [{"value": int(r["dice"][i]), "used": bool(r["dice_used"][i])} for i in range(int(r["n_dice"]))]
        whose = "your dice" if roller == viewer else f"dice of {seat_name(roller)}"
        shown = ", ".join(f"{x['value']}" + (" (used)" if x["used"] else "") for x in dice)
        d["info"].append(f"{whose[:1].upper() + whose[1:]}: {shown or '-'} (a die acts on the slot of its number)")
    d["info"].append(f"Point deck {count(int(r['pdeck_n']), 'card')} · Hand deck {count(int(r['hdeck_n']), 'card')} · "
                     f"Hand discard {count(int(sum(int(x) for x in r['hdisc'])), 'card')}")
    if viewer is not None:
        d["hand"] = [{"name": k, "count": int(r["hand"][viewer, i]), "text": hand_text(rules, k), "zone": "hand"}
                     for i, k in enumerate(KIND_NAMES) if int(r["hand"][viewer, i])]
    if d["choices"]:
        d["choices"] = [choice(engine, g, c["action"]) for c in d["choices"]]
        d["prompt"] = prompt(engine, g, d["phase"])
    map_face = []
    for k in range(1, N_SLOTS + 1):
        des = _seen(r, k)
        side = int(r["map_side"][k - 1])
        map_face.append({"slot": k, "empty": des == -1,
                         "colour": db.point[des].colour if des >= 0 else None,
                         "face_down": des != -1 and bool(r["map_down"][k - 1]),
                         "faces": None if des == -1 else SIDES[side],
                         "yours": des != -1 and viewer is not None and side == viewer % 2})
    d["extra"] = {"map": map_face, "dice": dice, "dice_of": roller,
                  "side": None if viewer is None else SIDES[viewer % 2], "teams": bool(rules.teams)}
    if done:
        reason = int(r["end_reason"])
        won = [q for q in range(P) if r["winners"][q]]
        if rules.teams:
            sides = sorted({SIDES[q % 2] for q in won})
            who = (f"side {' and '.join(sides)}" + (" win" if len(sides) > 1 else " wins")) if won else "nobody wins"
        else:
            who = (", ".join(seat_name(q) for q in won) + (" win" if len(won) > 1 else " wins")) if won else "nobody wins"
        what = END_WORDS.get(reason, "the game ended")
        if reason == 0:
            what = f"{'a side' if rules.teams and rules.team_target != 'any_player' else 'a player'} reached " \
                   f"{rules.target_points} points"
        d["end"] = f"{who[:1].upper()}{who[1:]}: {what}" + (f" (side A {a} pt, side B {b} pt)" if rules.teams else "")

        def how(q):
            side = f"side {SIDES[q % 2]}, " if rules.teams else ""
            return f"{side}{count(int(r['points'][q]), 'point')}: " + ("won" if r["winners"][q] else "lost")

        d["standings"] = standings(spec, engine, g, seat_name, how)
    return d


__all__ = ["choice", "describe", "prompt", "slot_card", "slot_label", "slot_text"]
