"""The Rune Market's event log told as moves in words, for one seat (``SPEC.story``: the
story lines of the play session, ``TableSession.recent``, in the terminal and on the page).

The engine logs small events (``games/runemarket/events.py``): a purchase is "starts
buying", a "pays" per card and "buys"; an attack is the attack, its victim, the
defender's answer and the theft. ``moves(events, viewer, label)`` groups them into the
moves a player makes, each told in one sentence: which Rune was bought with which cards,
whom an attack hit and whether it was blocked, what a theft took, where a Bandit went,
what a Bandit's removal cost, the interest earned at the start of a turn. A move begins
with the event that opens it (an attack, a purchase, a Theft Card, ...) and takes the
events that follow from it; a defender's answer whose attack was told before (the attack
came before your decision) opens a move of the attacker's.

Hidden information stays as the engine's texts keep it (RM-5.2, RM-5.9, RM-8.4): a
drawn card is named only to its drawer, a stolen hand card only to the thief and the
victim, and a "no block" reads the same to every other seat whether the defender chose
it or had no card high enough (only the defender is told which). The engine's
single-option marker is not repeated: a bot's move reads the same whether it had one
option or many.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

COL = ("Red", "Blue")

#: The events that open a move; every other kind follows the move before it.
OPENERS = frozenset({"first_player", "turn", "discard_shelter", "buy_with_runes", "play_shelter", "play_theft",
                     "attack", "begin_buy", "pay_bandit", "draw", "reshuffle", "end_turn", "game_over"})
#: What each opener may take after it.
FOLLOWERS = {
    "turn": {"interest", "interest_blocked"},
    "discard_shelter": {"victim", "steal_rune", "steal_card", "fizzle", "boat_back"},
    "buy_with_runes": {"place_boat", "place_bandit"},
    "play_theft": {"victim", "steal_rune", "steal_card", "fizzle"},
    "attack": {"victim", "block", "no_block", "steal_rune", "steal_card", "fizzle"},
    "begin_buy": {"pay", "rune_bought", "number_bought", "place_boat", "place_bandit"},
    "pay_bandit": {"pay_bandit", "bandit_removed", "boat_back"},
    "draw": {"draw", "reshuffle", "end_turn"},
    "reshuffle": {"draw", "reshuffle", "end_turn"},
    "game_over": {"result"},
    "block": set(),
    "no_block": {"steal_rune", "steal_card", "fizzle"},
    "victim": {"block", "no_block", "steal_rune", "steal_card", "fizzle"},
    # the rest of a move begun before your decision (your own steps come one at a time)
    "steal_rune": {"steal_rune", "steal_card", "fizzle"},
    "steal_card": {"steal_rune", "steal_card", "fizzle"},
    "fizzle": set(),
    "pay": {"pay", "rune_bought", "number_bought", "place_boat", "place_bandit"},
    "rune_bought": set(),
    "number_bought": {"place_boat", "place_bandit"},
    "place_boat": set(),
    "place_bandit": set(),
}
#: Moves the playback passes over (they stay in the log): a turn that begins with no
#: interest, the draws that end a turn.
MINOR = frozenset({"turn", "draw", "reshuffle", "end_turn", "first_player"})


def _and(parts: Sequence[str]) -> str:
    parts = [p for p in parts if p]
    if len(parts) <= 1:
        return "".join(parts)
    return ", ".join(parts[:-1]) + " and " + parts[-1]


class _Teller:
    def __init__(self, viewer: int, label: Callable[[int], str], db, item_cost: int | None):
        self.viewer, self.label, self.db, self.item_cost = viewer, label, db, item_cost

    def card(self, d: int) -> str:
        """A card's name as a hand card: ``Number 7``, ``a Theft Card``, ``a Red Shelter``."""
        name = self.db.name(d)
        if name.startswith("Number"):
            return name
        return "a Theft Card" if name == "Theft" else f"a {name}"

    def who(self, q: int) -> str:
        return self.label(q)

    def whose(self, q: int, speaker: int | None = None) -> str:
        """``your``, ``their`` (the speaker's own) or ``P1 (rm-banker)'s``."""
        if q == self.viewer:
            return "your"
        return "their" if q == speaker else f"{self.label(q)}'s"

    def verb(self, q: int, third: str) -> str:
        """``buys`` for another seat, ``buy`` for you."""
        if q != self.viewer:
            return third
        word, _, rest = third.partition(" ")
        word = {"does": "do", "has": "have", "is": "are"}.get(word, word[:-1])
        return f"{word} {rest}" if rest else word

    def from_(self, q: int) -> str:
        return "you" if q == self.viewer else self.label(q)

    def stolen(self, e) -> str:
        """What one theft took, as the viewer may know it."""
        if e.kind == "steal_rune":
            return f"a {COL[e.b]} Rune"
        if e.kind == "steal_card":
            return self.card(e.b) if e.sees_private(self.viewer) else "a hand card"
        return ""

    def thefts(self, thief: int, victim: int, evs) -> str:
        took = [self.stolen(e) for e in evs if e.kind in ("steal_rune", "steal_card")]
        took = [f"two {t[2:]}s" if took.count(t) == 2 and t.startswith("a ") else t
                for i, t in enumerate(took) if t not in took[:i] or not t.startswith("a ")]
        nothing = any(e.kind == "fizzle" for e in evs)
        if not took:
            return f"{self.verb(thief, 'finds')} nothing to steal from {self.from_(victim)}" if nothing else ""
        text = f"{self.verb(thief, 'steals')} {_and(took)} from {self.from_(victim)}"
        return text + (" (then nothing is left to take)" if nothing else "")

    def answer(self, e) -> str:
        """A defender's block or no block (RM-5.8, RM-5.9)."""
        d, attacker = e.seat, e.a
        if e.kind == "block":
            return f"{self.who(d)} {self.verb(d, 'blocks')} it, showing a Number {e.b}"
        why = " (no card high enough)" if e.b and e.sees_private(self.viewer) else ""
        return f"{self.who(d)} {self.verb(d, 'does')} not block{why}"

    def tell(self, evs) -> tuple[int, str, str]:
        """(the seat whose move it is, the kind of move, the sentence)."""
        e0 = evs[0]
        k, p = e0.kind, e0.seat
        rest = evs[1:]
        me = self.who(p)
        vic = next((e for e in evs if e.kind == "victim"), None)

        def after(kinds):
            return [e for e in evs if e.kind in kinds]

        if k == "turn":
            parts = []
            for e in rest:
                if e.kind == "interest":
                    owner, amt = e.b // 16, e.b % 16
                    gain = f"{amt} {COL[e.a]} Rune{'s' * (amt > 1)} of interest"
                    if owner == e.seat:
                        parts.append(f"{self.verb(e.seat, 'earns')} {gain}" if e.seat == p else
                                     f"{self.who(e.seat)} {self.verb(e.seat, 'earns')} {gain}")
                    else:  # RM-6: a Bandit diverts a locked Shelter's interest to its owner
                        parts.append(f"{self.who(e.seat)} {self.verb(e.seat, 'takes')} {gain} from "
                                     f"{self.whose(owner)} {COL[e.a]} Shelter with a Bandit")
                else:
                    parts.append(f"{self.whose(e.seat, p)} {COL[e.a]} Shelter is locked by a Bandit: no interest")
            head = f"{me} {self.verb(p, 'begins')} turn {e0.b}"  # the game's turn, as the log and table count
            if parts and parts[0].startswith(self.verb(p, "earns") + " "):
                head, parts = f"{head} and {parts[0]}", parts[1:]
            return p, "interest" if rest else "turn", head + "".join(f"; {x}" for x in parts)
        if k in ("begin_buy", "pay", "rune_bought", "number_bought"):
            paid = [e.a for e in after({"pay"})]
            cards = " + ".join(f"Number {v}" for v in paid)
            bought = next((e for e in rest if e.kind in ("rune_bought", "number_bought")), None)
            place = self.placed(rest)
            if k == "rune_bought" or k == "number_bought":
                bought = e0
            if bought is None and k == "pay":
                return p, "buy", f"{me} {self.verb(p, 'pays')} {cards} ({paid and evs[len(paid) - 1].b} paid so far)"
            if bought is None:
                what = e0.private.split(" starts buying ", 1)[-1]
                so_far = f", paying {cards} so far ({sum(paid)})" if paid else ""
                return p, "buy", f"{me} {self.verb(p, 'starts')} buying {what}{so_far}"
            if bought.kind == "rune_bought":
                item = f"a {COL[bought.a]} Rune"
            else:
                item = "a Bandit" if bought.a else "a Boat Shelter"
            text = f"{me} {self.verb(p, 'buys')} {item}" + (f" with {cards}" if cards else "") + f" ({bought.b})"
            return p, "bandit" if "Bandit" in item else "buy", text + place
        if k == "buy_with_runes":
            item = "a Bandit" if e0.a else "a Boat Shelter"
            return p, "bandit" if e0.a else "buy", \
                f"{me} {self.verb(p, 'pays')} {self.item_cost or ''} {COL[e0.b]} Runes for {item}{self.placed(rest)}".replace("  ", " ")
        if k == "play_shelter":
            return p, "shelter", f"{me} {self.verb(p, 'plays')} a {COL[e0.a]} Shelter to the table"
        if k in ("play_theft", "discard_shelter"):
            if k == "play_theft":
                head = f"{me} {self.verb(p, 'plays')} a Theft Card"
            else:
                head = (f"{me} {self.verb(p, 'discards')} a {COL[e0.a]} Shelter "
                        f"{'from the table' if e0.b else 'from hand'} for a double theft")
            if vic is None:
                return p, "theft", head
            took = self.thefts(p, vic.a, rest)
            on = f" on {self.from_(vic.a)}"
            return p, "theft", head + on + (f": {took}" if took else "")
        if k == "attack":
            head = f"{me} {self.verb(p, 'attacks')}"
            if vic is None:
                return p, "attack", f"{head} with a Number {e0.a}"
            text = f"{head} {self.from_(vic.a)} with a Number {e0.a}"
            return p, "attack", text + self.outcome(p, vic.a, rest)
        if k in ("block", "no_block"):  # the attack was told before
            attacker, d = e0.a, e0.seat
            text = f"{self.whose(attacker)} attack on {self.from_(d)}: " + self.answer(e0)
            took = self.thefts(attacker, d, rest)
            return attacker, "attack", text + (f"; {self.who(attacker)} {took}" if took else "")
        if k in ("steal_rune", "steal_card", "fizzle"):  # your own theft, a step at a time
            return p, "theft", f"{me} {self.thefts(p, e0.a, evs)}"
        if k in ("place_boat", "place_bandit"):
            return p, "bandit" if k == "place_bandit" else "buy", f"{me}{self.placed(evs).replace(' and', '', 1)}"
        if k == "victim":  # a theft or attack whose card was told before
            text = f"{me} {self.verb(p, 'attacks' if e0.b == 2 else 'steals from')} {self.from_(e0.a)}"
            return p, "attack" if e0.b == 2 else "theft", text + self.outcome(p, e0.a, rest)
        if k == "pay_bandit":
            pays = after({"pay_bandit"})
            cards = " + ".join(f"Number {e.b % 64}" for e in pays)
            col = COL[e0.a]
            removed = next((e for e in rest if e.kind == "bandit_removed"), None)
            text = f"{me} {self.verb(p, 'pays')} {cards} toward the Bandit on {self.whose(p, p)} {col} Shelter"
            if removed is not None:
                return p, "bandit", text + f": the Bandit of {self.who(removed.b)} leaves the game"
            return p, "bandit", text + f" ({pays[-1].b // 64} paid so far)"
        if k in ("draw", "reshuffle", "end_turn"):
            p = next((e.seat for e in evs if e.seat >= 0), p)  # a reshuffle is the table's (seat -1)
            me = self.who(p)
            drawn = [e for e in evs if e.kind == "draw"]
            end = next((e for e in evs if e.kind == "end_turn"), None)
            if drawn:  # a drawn card is named to its drawer only (RM-8.4)
                seen = [self.card(e.a) for e in drawn if e.sees_private(self.viewer)]
                unseen = len(drawn) - len(seen)
                what = _and(seen + ([f"{unseen} card{'s' * (unseen != 1)}"] if unseen else []))
                head = f"{me} {self.verb(p, 'draws')} {what}"
            else:
                head = ""
            if end is not None:
                held = f"{self.verb(end.seat, 'ends')} the turn holding {end.a} card{'s' * (end.a != 1)}"
                head = f"{head} and {held}" if head else f"{self.who(end.seat)} {held}"
                p = end.seat
            shuffled = [e for e in evs if e.kind == "reshuffle"]
            if shuffled:
                head = (head + "; " if head else "") + f"the discard pile becomes a new draw pile ({shuffled[-1].a} cards)"
            return p, "end", head
        if k == "game_over":
            return p, "over", e0.text_for(self.viewer)[0].upper() + e0.text_for(self.viewer)[1:]
        return p, k, e0.text_for(self.viewer)  # first_player and anything new: the engine's own words

    def outcome(self, attacker: int, victim: int, evs) -> str:
        ans = next((e for e in evs if e.kind in ("block", "no_block")), None)
        took = self.thefts(attacker, victim, evs)
        if ans is None:
            return f": {self.who(attacker)} {took}" if took else ""
        if ans.kind == "block":
            return f"; {self.answer(ans)}"
        return f"; {self.answer(ans)}" + (f", so {self.who(attacker)} {took}" if took else "")

    def placed(self, evs) -> str:
        for e in evs:
            if e.kind == "place_bandit":
                return f" and {self.verb(e.seat, 'puts')} it on {self.whose(e.a)} {COL[e.b]} Shelter"
            if e.kind == "place_boat":
                return f" and {self.verb(e.seat, 'puts')} it in {self.whose(e.seat, e.seat)} {COL[e.a]} Shelter"
        return ""


def moves(events, viewer: int, label: Callable[[int], str], db, item_cost: int | None = None,
          first_turn: int | None = None) -> list[dict]:
    """``events`` (the engine's ``Event`` objects, in order) grouped into moves as seat
    ``viewer`` may know them (``item_cost``: the Runes a Boat Shelter or a Bandit costs,
    ``rules.runes_per_item``): ``[{"seat", "who", "kind", "text", "minor", "turn"}]``, ``seat``
    the seat whose move it is, ``minor`` a move the playback may pass over (the start of
    a turn without interest, the draws that end one), ``turn`` the game's turn it belongs to
    (``first_turn``: the turn the events begin in; each turn's opening event moves it on, so
    the draws that end a turn stay in it; None: no ``turn`` but from the opening events)."""
    groups: list[list] = []
    for e in events:
        if e.kind == "forced":  # pragma: no cover - decode() folds the marker into the next event
            continue
        cur = groups[-1] if groups else None
        draws = cur is not None and cur[0].kind in ("draw", "reshuffle") and e.kind in ("draw", "reshuffle", "end_turn")
        if draws and e.kind != "reshuffle" and any(x.kind == "draw" and x.seat != e.seat for x in cur):
            draws = False  # one seat's draws per move (the deal draws for every seat in turn)
        if draws or (cur is not None and e.kind not in OPENERS and e.kind in FOLLOWERS.get(cur[0].kind, ())):
            cur.append(e)
        else:
            groups.append([e])
    teller = _Teller(viewer, label, db, item_cost)
    out = []
    turn = first_turn
    for g in groups:
        seat, kind, text = teller.tell(g)
        line = {"seat": int(seat), "who": label(seat) if seat >= 0 else "the table", "kind": kind,
                "text": text, "minor": kind in MINOR or kind == "end"}
        begun = next((e.b for e in g if e.kind == "turn"), None)  # a move that begins a turn
        if begun is not None:
            turn = int(begun)
        if turn is not None:
            line["turn"] = max(turn, 1)  # the deal's draws: turn 1
        out.append(line)
    return out


def story(engine, events, viewer: int, label: Callable[[int], str]) -> list[dict]:
    """``GameSpec.story``: the events as moves told to ``viewer`` (``moves``), the
    Runes a Boat Shelter or a Bandit costs read from the engine's rules."""
    began = sum(1 for e in events if e.kind == "turn")  # the game's turn after the events, less the turns they began
    return moves(events, viewer, label, engine.cards, engine.rules.runes_per_item,
                 first_turn=int(engine.state["total_turns"][0]) - began)
