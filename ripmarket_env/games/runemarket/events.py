"""The event log of The Rune Market: what a step did, as named events with per-viewer texts.

The kernels append rows ``(kind, seat, a, b)`` (codes ``EV_*`` in ``kernels.py``);
``decode(engine, g)`` names them. Hidden information (RM-5.2, RM-5.9, RM-8.4):

* a drawn card is named only for the drawer;
* a hand card taken by a theft is named only for the thief and the victim;
* a "no block" reads the same for everyone but the defender, whether the defender chose
  it or had no card high enough (only the defender's own text says which);
* the engine's single-option marker ("only choice") is written only for a decision whose
  one option follows from public facts (RM-8.1: a decision that the seat's hand alone made
  single is asked, and never marked), never for a defence; it goes on the decision's own
  event (a forced "done" marks "end_turn", not the draws logged before it).

``Event.text_for(viewer)``: ``viewer`` a seat, ``None`` (a spectator) or ``"god"``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ripmarket_env.core.events import TurnEvent
from ripmarket_env.games.runemarket import kernels as K
from ripmarket_env.games.runemarket.actions import describe
from ripmarket_env.games.runemarket.state import INTENT_NAMES

COL = ("Red", "Blue")

EVENT_KINDS = {
    K.EV_FORCED: "forced", K.EV_FIRST: "first_player", K.EV_TURN: "turn", K.EV_INTEREST: "interest",
    K.EV_INTEREST_BLOCKED: "interest_blocked", K.EV_DISCARD_SHELTER: "discard_shelter",
    K.EV_BUY_RUNES: "buy_with_runes", K.EV_PLACE_BOAT: "place_boat", K.EV_PLACE_BANDIT: "place_bandit",
    K.EV_PLAY_SHELTER: "play_shelter", K.EV_PLAY_THEFT: "play_theft", K.EV_ATTACK: "attack",
    K.EV_VICTIM: "victim", K.EV_BLOCK: "block", K.EV_NO_BLOCK: "no_block", K.EV_STEAL_RUNE: "steal_rune",
    K.EV_STEAL_CARD: "steal_card", K.EV_FIZZLE: "fizzle", K.EV_BEGIN_BUY: "begin_buy", K.EV_PAY: "pay",
    K.EV_RUNE_BOUGHT: "rune_bought", K.EV_NUMBER_BOUGHT: "number_bought", K.EV_PAY_BANDIT: "pay_bandit",
    K.EV_BANDIT_REMOVED: "bandit_removed", K.EV_DRAW: "draw", K.EV_RESHUFFLE: "reshuffle",
    K.EV_END_TURN: "end_turn", K.EV_GAME_OVER: "game_over", K.EV_RESULT: "result", K.EV_BOAT_BACK: "boat_back",
}
END_REASONS = {K.END_MARKET_EMPTY: "market_empty", K.END_MAX_TURNS: "max_turns"}


def seat_name(q: int) -> str:
    return f"P{q}"


@dataclass(frozen=True)
class Event(TurnEvent):
    """One thing that happened. ``known``: the seats that see ``private`` (everyone else,
    and spectators, see ``public``); an empty ``known`` means the event is public."""

    public: str
    private: str
    known: frozenset = field(default_factory=frozenset)

    def sees_private(self, viewer) -> bool:
        return viewer == "god" or not self.known or (viewer is not None and viewer in self.known)

    def text_for(self, viewer: int | str | None = None) -> str:
        text = self.private if self.sees_private(viewer) else self.public
        return text + " (only choice)" if self.forced else text

    def visible_to(self, viewer) -> tuple[int | None, int | None]:
        if self.sees_private(viewer):
            return self.a, self.b
        if self.kind == "steal_card":
            return self.a, None
        return None, None

    def to_dict(self, viewer=None) -> dict:
        a, b = self.visible_to(viewer)
        return {"kind": self.kind, "seat": self.seat, "a": a, "b": b, "turn": self.turn,
                "forced": self.forced, "text": self.text_for(viewer)}


def _texts(kind: str, seat: int, a: int, b: int, db) -> tuple[str, str, frozenset]:
    """(public text, private text, seats that see the private one)."""
    who = seat_name(seat) if seat >= 0 else ""
    none: frozenset = frozenset()

    def same(t):
        return t, t, none

    def card(d):
        return db.name(d)

    if kind == "first_player":
        return same(f"{who} takes the first turn" + (" (winner of the previous game)" if a else ""))
    if kind == "turn":
        return same(f"{who} begins turn {a} (turn {b} of the game)")
    if kind == "interest":
        owner, amt = b // 16, b % 16
        src = "" if owner == seat else f" from {seat_name(owner)}'s locked Shelter"
        return same(f"{who} earns {amt} {COL[a]} Rune{'s' * (amt > 1)} of interest{src}")
    if kind == "interest_blocked":
        return same(f"{who}'s {COL[a]} Shelter is locked by a Bandit: no interest")
    if kind == "discard_shelter":
        return same(f"{who} discards a {COL[a]} Shelter {'from the table' if b else 'from hand'}: a double theft")
    if kind == "buy_with_runes":
        return same(f"{who} pays {COL[b]} Runes for a {'Bandit' if a else 'Boat Shelter'}")
    if kind == "place_boat":
        return same(f"{who} puts a Boat Shelter in their {COL[a]} Shelter")
    if kind == "place_bandit":
        return same(f"{who} puts a Bandit on {seat_name(a)}'s {COL[b]} Shelter")
    if kind == "play_shelter":
        return same(f"{who} plays a {COL[a]} Shelter to the table")
    if kind == "play_theft":
        return same(f"{who} plays a Theft Card")
    if kind == "attack":
        return same(f"{who} attacks with a Number {a}")
    if kind == "victim":
        verb = "attacks" if b == 2 else "steals from"
        return same(f"{who} {verb} {seat_name(a)}")
    if kind == "block":
        return same(f"{who} blocks {seat_name(a)}'s attack, showing a Number {b}")
    if kind == "no_block":
        pub = f"{who} does not block {seat_name(a)}'s attack"
        priv = pub + (" (no card high enough)" if b else "")
        return pub, priv, frozenset({seat})
    if kind == "steal_rune":
        return same(f"{who} steals a {COL[b]} Rune from {seat_name(a)}")
    if kind == "steal_card":
        return (f"{who} steals a hand card from {seat_name(a)}",
                f"{who} steals a hand card from {seat_name(a)}: {card(b)}", frozenset({seat, a}))
    if kind == "fizzle":
        return same(f"{who}'s theft on {seat_name(a)} finds nothing")
    if kind == "begin_buy":
        return same(f"{who} starts buying a {INTENT_NAMES[a].replace(' by numbers', '')}")
    if kind == "pay":
        return same(f"{who} pays a Number {a} (total {b})")
    if kind == "rune_bought":
        return same(f"{who} buys a {COL[a]} Rune for {b}")
    if kind == "number_bought":
        return same(f"{who} buys a {'Bandit' if a else 'Boat Shelter'} for {b}")
    if kind == "pay_bandit":
        return same(f"{who} pays a Number {b % 64} toward the Bandit on their {COL[a]} Shelter "
                    f"(paid {b // 64})")
    if kind == "bandit_removed":
        return same(f"the Bandit of {seat_name(b)} leaves {who}'s {COL[a]} Shelter and the game")
    if kind == "boat_back":
        return same(f"{who}'s Boat Shelter returns to the Market")
    if kind == "draw":
        return f"{who} draws a card", f"{who} draws {card(a)}", frozenset({seat})
    if kind == "reshuffle":
        return same(f"the discard pile is shuffled into a new draw pile ({a} cards)")
    if kind == "end_turn":
        return same(f"{who} ends the turn holding {a} card{'s' * (a != 1)}")
    if kind == "game_over":
        why = {"market_empty": "the Market holds no Rune", "max_turns": "the turn cap"}[END_REASONS[a]]
        return same(f"game over: {why}; {b} winner{'s' * (b != 1)}")
    if kind == "result":
        return same(f"{who}: {a} Rune{'s' * (a != 1)}" + (" - wins" if b else ""))
    return same(f"{kind} {seat} {a} {b}")  # pragma: no cover


def decode(engine, g: int = 0) -> list[Event]:
    r = engine.state[g]
    n = int(r["ev_n"])
    rows = r["ev"][:n]
    out: list[Event] = []
    forced = False
    turn = int(r["total_turns"])
    for kind_code, seat, a, b in rows.tolist():
        kind = EVENT_KINDS.get(kind_code, f"unknown_{kind_code}")
        if kind == "forced":
            forced = True
            continue
        pub, priv, known = _texts(kind, seat, a, b, engine.cards)
        if kind in _LEAD_IN:  # logged before the decision's own event: the marker waits for it
            out.append(Event(kind, seat, a, b, turn, False, pub, priv, known))
            continue
        out.append(Event(kind, seat, a, b, turn, forced, pub, priv, known))
        forced = False
    return out


#: events a decision logs before its own: a "done" ends the turn with the draw back to the
#: hand size (and a reshuffle) before "end_turn", which carries its "only choice" marker
_LEAD_IN = frozenset({"reshuffle", "draw"})


ACTION_KINDS = frozenset({"discard_shelter", "buy_with_runes", "place_boat", "place_bandit", "play_shelter",
                          "play_theft", "attack", "victim", "block", "no_block", "steal_rune", "steal_card",
                          "begin_buy", "pay", "pay_bandit"})


@dataclass
class TurnLog:
    """One finished turn: the seat, its events, Runes per seat afterwards."""

    turn: int
    seat: int
    events: list
    scores: list


class GameLog:
    """Follows a game step by step; ``items(events)`` gives ("event", e) items and a
    ("round", TurnLog) item for every finished turn (records call a turn a round)."""

    def __init__(self, engine, g: int = 0):
        self.engine = engine
        self.g = g
        self.turn_events: list = []
        self.turns: list[TurnLog] = []

    def items(self, events) -> list:
        out = []
        for e in events:
            out.append(("event", e))
            self.turn_events.append(e)
            if e.kind in ("end_turn", "game_over"):
                log = TurnLog(len(self.turns) + 1, e.seat if e.kind == "end_turn" else int(
                    self.engine.state[self.g]["turn_player"]), self.turn_events, self.engine.scores(self.g))
                self.turns.append(log)
                self.turn_events = []
                out.append(("round", log))
        return out


__all__ = ["Event", "GameLog", "TurnLog", "decode", "describe", "EVENT_KINDS"]
