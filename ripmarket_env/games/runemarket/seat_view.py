"""How The Rune Market's table is described to one seat: the view of a session (the web
page's JSON), from the public state and the seat's own hand only (RM-8.4).

``seat_view(session, level)`` reads a play session duck-typed (``state``, ``engine``,
``rules``, ``seat``, ``players``, ``over``, ``your_turn``, ``blocking``, ``phase``,
``label``, ``choices``, ``prompt``, ``recent``, ``recent_moves``, ``table_text``,
``result``, ``recorder``, ``seed``, ``practice``); the server reaches it through
``SPEC.extras["seat_view"]``.
"""

from __future__ import annotations

from .config import C_MKT

_COL = ("red", "blue")


def _number_text(v: int) -> str:
    return (f"Number {v}: pay it toward a Rune (cards totalling exactly 5, 10 or 15), a Boat Shelter or a "
            f"Bandit (21 or more) or a Bandit's removal; attack with it; or show it to block an attack of {v} "
            "or less (you keep it).")


def _card_info(db, d: int) -> dict:
    c = db.deck[d]
    return {"design": d, "name": c.name, "kind": c.kind, "value": c.value, "colour": c.colour,
            "text": c.text or _number_text(c.value)}


def _standings(s) -> list[dict]:
    """Every seat, best first (RM-7.2: more Runes; on a tie, with the default tie-break,
    fewer turns taken): place, score, winner."""
    r, P = s.state, s.players
    scores = s.engine.scores(0)
    fewer = s.rules.tie_break == "fewer_turns"

    def better(a, b):
        return bool(scores[a] > scores[b] or (fewer and scores[a] == scores[b] and r["turns"][a] < r["turns"][b]))

    out = [{"seat": q, "name": s.label(q), "score": scores[q], "turns": int(r["turns"][q]),
            "place": 1 + sum(int(better(o, q)) for o in range(P) if o != q), "winner": bool(r["winners"][q])}
           for q in range(P)]
    return sorted(out, key=lambda e: (e["place"], e["seat"]))


def _board(s, level) -> dict:
    """The table as structured data, as the person's seat may see it (RM-8.4): every
    public fact, the person's hand card by card, the other hands by their size only."""
    r, eng = s.state, s.engine
    db, cfg = eng.cards, eng.cfg
    removal = int(s.rules.bandit_removal)
    live = not s.over
    seats = []
    for q in range(s.players):
        name = s.controllers[q]
        shelters = []
        for col in range(2):
            owner = int(r["bandit"][q, col])
            shelters.append({
                "colour": _COL[col], "present": bool(r["shelter"][q, col]), "runes": int(r["inside"][q, col]),
                "boat": bool(r["boat"][q, col]),
                "bandit": None if owner < 0 else {"owner": owner, "owner_name": s.label(owner),
                                                  "paid": int(r["bandit_paid"][q, col]), "removal": removal},
            })
        seats.append({
            "seat": q, "name": s.label(q), "you": q == s.seat, "bot": None if q == s.seat else name,
            "level": "" if q == s.seat else level(name),
            "score": int(r["loose"][q].sum() + r["inside"][q].sum()), "hand_size": int(r["hand_n"][q]),
            "loose": {"red": int(r["loose"][q, 0]), "blue": int(r["loose"][q, 1])}, "shelters": shelters,
            "acting": live and int(r["actor"]) == q, "turn_player": live and int(r["turn_player"]) == q,
            "attacked": live and bool(r["attacked"][q]), "winner": s.over and bool(r["winners"][q]),
        })
    hand = []
    for d in range(len(db.deck)):
        for _ in range(int(r["hand"][s.seat, d])):
            hand.append(_card_info(db, d))
    market = [{"id": m.id, "name": m.name, "text": m.text} for m in db.market]
    pending = None
    if live and int(r["intent"]) >= 0:
        from .state import INTENT_NAMES

        other = int(r["other"])
        pending = {"intent": INTENT_NAMES[int(r["intent"])], "by": s.label(int(r["turn_player"])),
                   "against": s.label(other) if other >= 0 else None,
                   "attack_value": int(r["pend_value"]) if INTENT_NAMES[int(r["intent"])] == "attack" else None,
                   "paid": int(r["pay_sum"])}
    return {
        "turn": int(r["total_turns"]),
        "market": {"red": int(r["market"][0]), "blue": int(r["market"][1]), "boats": int(r["market_boats"]),
                   "bandits": int(r["market_bandits"]), "bandits_out": int(r["removed_bandits"]),
                   "start": {"red": int(cfg[C_MKT]), "blue": int(cfg[C_MKT + 1])}, "cards": market},
        "draw_pile": int(r["deck_n"]), "discard_pile": int(r["discard_n"]),
        "seats": seats, "hand": hand, "pending": pending,
    }


def _choice_text(s, c) -> str:
    """The choice in words, seats named instead of counted clockwise."""
    from .actions import decode

    kind, arg = decode(c.action)
    tp = int(s.state["turn_player"])
    if kind == "opponent":
        return s.label((tp + arg) % s.players)
    if kind == "shelter" and arg >= 2:
        return f"the {_COL[arg % 2].capitalize()} Shelter of {s.label((tp + arg // 2) % s.players)}"
    return c.text


_ASK = {
    "start": "Start of your turn: discard a Shelter from your table for a double theft, or go on to stage 2.",
    "rune_buy": "Stage 2: buy a Boat Shelter or a Bandit with {cost} Runes of one colour, or go on to stage 3.",
    "hand": "Stage 3: play a card from your hand, or end your turn.",
    "choose_card": "Which Number card?",
    "payment": "Pay with your Number cards: {paid} paid so far.",
    "choose_opponent": "Which player?",
    "choose_steal": "What do you steal from {other}?",
    "choose_shelter": "Which Shelter?",
}


def _prompt(s) -> str:
    """What you are asked, in words: the session's block prompt, else the decision."""
    if not s.your_turn or s.blocking:
        return s.prompt()
    r = s.state
    other = int(r["other"])
    attack = int(r["intent"]) == 2  # state.I_ATTACK
    if s.phase == "choose_card":
        return ("Attack with which Number card? The defender blocks it with a card of the same value or more."
                if attack else "Pay which Number card toward the Bandit?")
    if s.phase == "choose_opponent":
        return f"Attack which player (Number {int(r['pend_value'])})?" if attack else "Steal from which player?"
    return _ASK.get(s.phase, s.prompt()).format(cost=s.rules.runes_per_item, paid=int(r["pay_sum"]),
                                                other=s.label(other) if other >= 0 else "")


def seat_view(s, level=lambda name: "") -> dict:
    """The game as the person's seat of session ``s`` may see it (RM-8.4), JSON-able:
    the table as structured data (``board``), the choices with seats named, what happened
    since the person's latest decision, the result with the standings once it is over;
    ``level(bot_name)``: a bot's difficulty in words."""
    result = s.result() if s.over else None
    if result is not None:
        result = {**result, "standings": _standings(s)}
    return {
        "game": s.engine.spec.id, "seat": s.seat, "players": s.players,
        "seats": [s.label(q) for q in range(s.players)], "over": s.over, "your_turn": s.your_turn,
        "blocking": s.blocking, "phase": s.phase, "prompt": _prompt(s), "table": s.table_text(),
        "board": _board(s, level), "recent": s.recent(), "moves": s.recent_moves(),
        "decision_number": s.recorder.num_steps,
        "choices": [{"number": c.number, "action": c.action, "text": _choice_text(s, c)} for c in s.choices()],
        "result": result, "practice": s.practice,
        "seed": s.seed if (s.over or s.practice) else None,
        "seed_text": str(s.seed) if (s.over or s.practice) else None,  # seeds are wider than a JS number
    }
