"""Black Market's event log, decoded into named events with per-viewer texts (BM-12.4).

The kernels append rows ``(kind, seat, a, b)`` during a step (reset counts as a step);
``Engine.events(g)`` decodes them. Hidden information: a drawn or dealt Hand Card is
named for its seat only; the cards a Heist moves are named for the thief and the victim
only (everyone else reads the count); an unseen map card (variant ``refill="face_down"``)
is named for nobody but the god view until it is turned face-up.

=== ============ ========= ============================ =================================
 1  forced       seat      action                       the decision's event (the next one but a
                                                        reshuffle) was the only choice (BM-12.3)
 2  first_player seat      -                            -
 3  (unused)
 4  turn         seat      turn number (1-based)        -
 5  roll         seat      die 1                        die 2
 6  flip         seat      slot                         pay + 4*face_down + 8*(design+1 if revealed)
 7  rotate       seat      slot                         pay + 4*side now faced
 8  buy          seat      slot                         design + 32*colour + 64*cost + 512*flags
 9  refill       -1        slot                         design + 32*(side + 2*face_down)
10  draw         seat      kind (-1: nothing) (hidden)  1 if an extra draw applied
11  reshuffle    -1        cards                        -
12  effect       seat      design                       -
13  reroll       seat      old number                   new number
14  fix          seat      old number                   new number
15  extra_die    seat      number                       -
16  heist        seat      victim                       kinds taken, base 4 (hidden)
17  slot_empty   -1        slot                         -
18  game_over    -1        reason (0 target, 1 empty, 2 cap)  winner seats as bits
19  deal         seat      kind (hidden)                -
=== ============ ========= ============================ =================================
"""

from __future__ import annotations

from dataclasses import dataclass

from ripmarket_env.core.events import TurnEvent

EVENT_KINDS = {
    1: "forced", 2: "first_player", 4: "turn", 5: "roll", 6: "flip", 7: "rotate", 8: "buy",
    9: "refill", 10: "draw", 11: "reshuffle", 12: "effect", 13: "reroll", 14: "fix",
    15: "extra_die", 16: "heist", 17: "slot_empty", 18: "game_over", 19: "deal",
}
END_REASONS = {0: "target", 1: "map_empty", 2: "max_turns"}
KIND_NAMES = ("Red", "Black", "Flip")
PAYMENTS = ("a Flip Card", "two Red", "two Black")
SIDES = ("A", "B")


def seat_name(q: int) -> str:
    return f"player {q}"


def count(n: int, word: str = "card") -> str:
    """``"1 card"``, ``"2 cards"``."""
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


@dataclass(frozen=True)
class Event(TurnEvent):
    """One thing that happened. ``seat`` is -1 for events of the whole table.

    ``private_to``: the seats that read ``private`` (everyone else reads ``public``);
    empty when the event is public. ``secret``: even the table does not know the card
    (an unseen refill); only the god view reads ``private``.
    """

    private_to: tuple[int, ...]
    public: str
    private: str
    secret: bool = False

    def sees_private(self, viewer) -> bool:
        if viewer == "god":
            return True
        if self.secret:
            return False
        if not self.private_to:
            return True
        return viewer is not None and not isinstance(viewer, str) and int(viewer) in self.private_to

    def text_for(self, viewer=None) -> str:
        """The event in words as ``viewer`` sees it: a seat, ``None`` (a spectator) or ``"god"``."""
        text = self.private if self.sees_private(viewer) else self.public
        return text + " (only choice)" if self.forced else text

    def to_dict(self, viewer=None) -> dict:
        vis = self.sees_private(viewer)
        return {"kind": self.kind, "seat": self.seat, "a": self.a if vis else None, "b": self.b if vis else None,
                "turn": self.turn, "forced": self.forced, "text": self.text_for(viewer)}


def _card(db, d: int) -> str:
    return db.point[d].name if 0 <= d < len(db.point) else f"design {d}"


def _texts(kind: str, seat: int, a: int, b: int, db) -> tuple[str, str, tuple[int, ...], bool]:
    """(public text, private text, private_to, secret)."""
    who = seat_name(seat) if seat >= 0 else ""
    if kind == "first_player":
        t = f"{who} takes the first turn"
    elif kind == "turn":
        t = f"turn {a}: {who} (side {SIDES[seat % 2]})"
    elif kind == "roll":
        t = f"{who} rolls {a} and {b}"
    elif kind == "flip":
        pay, down, rev = b % 4, (b // 4) % 2, b // 8 - 1
        t = f"{who} flips slot {a} face-{'down' if down else 'up'}, paying {PAYMENTS[pay]}"
        if rev >= 0:
            t += f": it is {_card(db, rev)}"
    elif kind == "rotate":
        t = f"{who} rotates slot {a} to face side {SIDES[b // 4]}, paying {PAYMENTS[b % 4]}"
    elif kind == "buy":
        d, col, cost, flags = b % 32, (b // 32) % 2, (b // 64) % 8, b // 512
        extra = [n for bit, n in ((1, "Smuggler"), (2, "Crowbar"), (4, "Fence")) if flags & bit]
        t = f"{who} buys {_card(db, d)} ({db.point[d].points} pt) from slot {a} with {cost} {KIND_NAMES[col]}"
        if extra:
            t += " using " + " and ".join(extra)
    elif kind == "refill":
        d, side, down = b % 32, (b // 32) % 2, b // 64
        if down:
            pub = f"slot {a} refills face-down, facing side {SIDES[side]}"
            return pub, pub + f" ({_card(db, d)})", (), True
        t = f"slot {a} refills: {_card(db, d)} face-up, facing side {SIDES[side]}"
    elif kind in ("draw", "deal"):
        verb = "draws" if kind == "draw" else "is dealt"
        if a < 0:
            t = f"{who} draws nothing (hand limit or no cards)"
            return t, t, (), False
        return f"{who} {verb} a card", f"{who} {verb} a {KIND_NAMES[a]} card", (seat,), False
    elif kind == "reshuffle":
        t = f"the Hand discard ({count(a)}) is shuffled into a new Hand deck"
    elif kind == "effect":
        t = f"{who} uses {_card(db, a)}"
    elif kind == "reroll":
        t = f"{who} rerolls the die showing {a}: now {b}"
    elif kind == "fix":
        t = f"{who} sets the die showing {a} to {b}"
    elif kind == "extra_die":
        t = f"{who} rolls one more die: {a}"
    elif kind == "heist":
        kinds = []
        x = b
        while x:
            kinds.append(KIND_NAMES[x % 4 - 1])
            x //= 4
        pub = f"{who} takes {count(len(kinds))} from {seat_name(a)}"
        priv = pub + (": " + ", ".join(kinds) if kinds else "")
        return pub, priv, (seat, a), False
    elif kind == "slot_empty":
        t = f"slot {a} stays empty (the Point deck is empty)"
    elif kind == "game_over":
        ws = [q for q in range(6) if b >> q & 1]
        t = f"game over ({END_REASONS.get(a, a)}): " + (("winner " if len(ws) == 1 else "winners ")
                                                         + ", ".join(seat_name(q) for q in ws) if ws else "no winner")
    elif kind == "forced":
        t = f"{who} has one choice"
    else:
        t = kind
    return t, t, (), False


def decode_rows(rows, first_turn: int, db) -> list[Event]:
    out: list[Event] = []
    forced = False
    turn = first_turn
    for row in rows:
        code, seat, a, b = (int(x) for x in row)
        kind = EVENT_KINDS.get(code, f"kind_{code}")
        if kind == "forced":
            forced = True
            continue
        if kind == "turn":
            turn = a
        pub, priv, private_to, secret = _texts(kind, seat, a, b, db)
        if kind == "reshuffle":  # a draw's consequence, logged before it: the marker waits for the draw
            out.append(Event(kind, seat, a, b, turn, False, private_to, pub, priv, secret))
            continue
        out.append(Event(kind, seat, a, b, turn, forced, private_to, pub, priv, secret))
        forced = False
    return out


def decode(engine, game: int = 0) -> list[Event]:
    r = engine.state[game]
    return decode_rows(r["ev"][: int(r["ev_n"])], int(r["ev_turn"]), engine.cards)


@dataclass
class TurnLog:
    turn: int
    seat: int
    events: list


class GameLog:
    """Follows one game's events; ``items`` places a ``("round", TurnLog)`` item after each
    finished turn (records write one line per turn)."""

    def __init__(self, engine, game: int = 0):
        self.current: TurnLog | None = None
        self.events: list[Event] = []

    def items(self, events: list[Event]) -> list[tuple[str, object]]:
        out: list[tuple[str, object]] = []
        for ev in events:
            if ev.kind == "turn":
                if self.current is not None:
                    out.append(("round", self.current))
                self.current = TurnLog(ev.a, ev.seat, [])
            self.events.append(ev)
            if self.current is not None:
                self.current.events.append(ev)
            out.append(("event", ev))
            if ev.kind == "game_over" and self.current is not None:
                out.append(("round", self.current))
                self.current = None
        return out

    def feed(self, events):
        return [x for k, x in self.items(events) if k == "round"]
