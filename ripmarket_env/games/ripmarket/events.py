"""The engine's event log: what a step did, decoded into named events.

Every game record keeps a small log of the latest step (``reset`` counts as a step): the
kernels append rows ``(kind, seat, a, b)`` to ``ev[:ev_n]`` where things happen, and the
next step starts the log afresh (only the count is reset; a game skipped with action -1,
or already finished, keeps the log of its last step). ``Engine.events(g)`` decodes
game ``g``'s rows into ``Event`` objects; ``GameLog`` follows a whole game step by step
and builds the per-round summaries (cards played, scores, damage, HP, deaths) that the
play/serve game log and the game records show.

The kinds (``EVENT_KINDS``: code -> name, meaning of ``seat``, ``a``, ``b``):

=== ================ ============ ======================== ==========================
 1  forced           seat         action                   marks the next event as a
                                                           decision the engine took
                                                           alone (one legal option)
 2  acquire_deck     seat         card (hidden)            -
 3  acquire_market   seat         card                     Market slot
 4  play             seat         card (hidden if b)       1 if played face-down
 5  replace          seat         new card (hidden if      replaced card
                                  face-down)
 6  target           seat         target seat              card
 7  attack           seat         victim seat              card (direct damage next)
 8  hit              victim       HP lost                  HP after (direct damage)
 9  market_take      seat         card                     Market slot
10  market_discard   seat         card                     Market slot
11  market_flush     seat         -                        -
12  draw             seat         card (hidden)            -
13  rule             seat         rule code                -
14  exorcise         seat         Shadow card discarded    -
15  trigger          victim       Shadow card              trigger kind code
16  discard          seat         card discarded at random -
17  skip             seat         -                        - (nothing to acquire/play)
18  shadow_draw      seat         Shadow card (hidden)     -
19  pass             Ghost seat   -                        -
20  haunt            Ghost seat   victim seat              Shadow card
21  reveal           seat         card                     1 if its text takes effect
22  score            seat         card on the table        final score
23  no_score         seat         card on the table        - (a Ghost's card)
24  deflect          seat         seat the damage moves to -
25  damage           seat         round damage             HP after
26  death            seat         elimination order        -
27  first_player     seat         -                        -
28  round_start      First Player round number            1 in the epilogue
29  resolve          -1           round number             1 in the epilogue
30  game_over        -1           reason (END_REASONS)     number of winners
31  place            seat         2 x place                1 for a winner
32  spared           -1           players spared           - (sudden death, R-9.2)
33  grace            -1           players spared           - (the first round, R-8.2)
=== ================ ============ ======================== ==========================

Hidden information (R-12.3): a card drawn from the Living Deck, a face-down play (or
face-down replacement) and a Shadow card drawn are known to their seat only, and so is whether a decision was forced
(``forced_for(viewer)``: one legal option is a fact about the seat's hand); ``Event.text_for(viewer)`` names them
only for that seat (or ``viewer="god"``) and says "a card" / "a card face-down" / "a
Shadow card" to every other viewer. A face-down card is named for everyone by its
``reveal`` event; a Shadow card is named when it is attached (public, R-5.6).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ripmarket_env.games.ripmarket.cards.registry import TRIGGER_KINDS
from ripmarket_env.games.ripmarket.config import C_HP

EVENT_KINDS: dict[int, str] = {
    1: "forced", 2: "acquire_deck", 3: "acquire_market", 4: "play", 5: "replace", 6: "target",
    7: "attack", 8: "hit", 9: "market_take", 10: "market_discard", 11: "market_flush", 12: "draw",
    13: "rule", 14: "exorcise", 15: "trigger", 16: "discard", 17: "skip", 18: "shadow_draw",
    19: "pass", 20: "haunt", 21: "reveal", 22: "score", 23: "no_score", 24: "deflect", 25: "damage",
    26: "death", 27: "first_player", 28: "round_start", 29: "resolve", 30: "game_over", 31: "place",
    32: "spared", 33: "grace",
}
EVENT_CODES: dict[str, int] = {name: code for code, name in EVENT_KINDS.items()}
END_REASONS = {0: "last_alive", 1: "all_died", 2: "max_rounds"}

#: Events that are a decision (a seat's action), as opposed to its consequences.
ACTION_KINDS = frozenset({
    "acquire_deck", "acquire_market", "play", "replace", "target", "attack", "market_take",
    "market_discard", "pass", "haunt",
})

_TRIGGER_NAMES = {code: name for name, code in TRIGGER_KINDS.items()}


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


@dataclass(frozen=True)
class Event:
    """One thing that happened. ``seat`` is -1 for events of the whole table.

    ``hidden``: ``a``/``b`` name a card only ``seat`` may know; ``public`` is the text for
    every other viewer, ``private`` the full text (for ``seat`` and the god view).
    """

    kind: str
    seat: int
    a: int
    b: int
    round: int
    forced: bool
    hidden: bool
    public: str
    private: str

    def _own(self, viewer: int | str | None) -> bool:
        """``viewer`` may know what only this event's seat knows (its seat, or the god view)."""
        return viewer == "god" or (viewer is not None and not isinstance(viewer, str) and viewer == self.seat)

    def forced_for(self, viewer: int | str | None = None) -> bool:
        """Whether ``viewer`` learns that the engine took this decision alone (R-12.1, R-12.3).

        Whether a decision had one legal option is derived from the deciding seat's hidden
        state (a hand of one design, a Shadow hand), so only that seat and the god view are
        told; every other viewer sees a forced decision exactly like a chosen one."""
        return self.forced and self._own(viewer)

    def text_for(self, viewer: int | str | None = None) -> str:
        """The event in words as ``viewer`` sees it: a seat, ``None`` (a spectator) or
        ``"god"`` (everything)."""
        text = self.private if self._own(viewer) else self.public
        return text + " (only choice)" if self.forced_for(viewer) else text

    def visible_to(self, viewer: int | str | None) -> tuple[int | None, int | None]:
        """``(a, b)`` as ``viewer`` may know them (``None`` for a hidden value)."""
        if self.hidden and not self._own(viewer):
            return None, (self.b if self.kind in ("play", "replace") else None)
        return self.a, self.b

    def to_dict(self, viewer: int | str | None = None) -> dict:
        a, b = self.visible_to(viewer)
        return {"kind": self.kind, "seat": self.seat, "a": a, "b": b, "round": self.round,
                "forced": self.forced_for(viewer), "text": self.text_for(viewer)}


def _texts(kind: str, seat: int, a: int, b: int, db) -> tuple[str, str, bool]:
    """(public text, private text, hidden) of one event."""
    from ripmarket_env.games.ripmarket.labels import card_label, rule_label, seat_name, shadow_label

    who = seat_name(seat) if seat >= 0 else ""

    def card(d):
        return card_label(db, d)

    if kind == "acquire_deck":
        return (f"{who} takes the top card of the Living Deck",
                f"{who} takes the top card of the Living Deck: {card(a)}", True)
    if kind == "acquire_market":
        return (f"{who} takes {card(a)} from Market slot {b}",) * 2 + (False,)
    if kind == "play":
        if b:
            return f"{who} plays a card face-down", f"{who} plays {card(a)} face-down", True
        return (f"{who} plays {card(a)}",) * 2 + (False,)
    if kind == "replace":
        if db.living[a].face_down:  # a face-down replacement is hidden until its reveal
            return (f"{who} replaces {card(b)} with a card face-down",
                    f"{who} replaces {card(b)} with {card(a)} face-down", True)
        t = f"{who} replaces {card(b)} with {card(a)}"
    elif kind == "target":
        t = f"{who} targets {seat_name(a)} with {card(b)}"
    elif kind == "attack":
        t = f"{who} attacks {seat_name(a)} with {card(b)}"
    elif kind == "hit":
        t = f"{who} loses {a} HP (direct damage; HP {b})"
    elif kind == "market_take":
        t = f"{who} takes {card(a)} from Market slot {b} into their hand"
    elif kind == "market_discard":
        t = f"{who} discards {card(a)} from Market slot {b}"
    elif kind == "market_flush":
        t = f"{who} flushes the Market: every Market card is discarded and the slots refill"
    elif kind == "draw":
        return f"{who} draws a card", f"{who} draws {card(a)}", True
    elif kind == "rule":
        t = f"{who} sets this round's rule: {rule_label(a)}"
    elif kind == "exorcise":
        t = f"{who} exorcises the Shadow card {shadow_label(db, a)}"
    elif kind == "trigger":
        what = {"score": "changes the card's score", "discard_random": "discards cards at random"}.get(
            _TRIGGER_NAMES.get(b, ""), "fires")
        t = f"the Shadow card {shadow_label(db, a)} on {who} triggers: {what}"
    elif kind == "discard":
        t = f"{who} discards {card(a)} at random"
    elif kind == "skip":
        t = f"{who} has nothing to acquire or play and skips the turn"
    elif kind == "shadow_draw":
        return f"{who} draws a Shadow card", f"{who} draws the Shadow card {shadow_label(db, a)}", True
    elif kind == "pass":
        t = f"{who} passes"
    elif kind == "haunt":
        t = f"{who} haunts {seat_name(a)} with {shadow_label(db, b)}"
    elif kind == "reveal":
        t = f"{who}'s face-down card is revealed: {card(a)}" + ("" if b else " (a Ghost's card: no effect)")
    elif kind == "score":
        t = f"{who} scores {b} with {card(a)}"
    elif kind == "no_score":
        t = f"{who}'s {card(a)} does not compete (a Ghost's card)"
    elif kind == "deflect":
        t = f"{who}'s Deflection passes the damage to {seat_name(a)}"
    elif kind == "damage":
        t = f"{who} takes {a} damage (HP {b})"
    elif kind == "death":
        t = f"{who} dies and becomes a Ghost"
    elif kind == "spared":
        t = (f"Sudden death: the round's damage would leave nobody alive, so it is not dealt; "
             f"the {a} living players play on")
    elif kind == "grace":
        # the rule of the round decides who would have (the lowest, Low Tide's highest, ...)
        t = (f"First round: nobody takes round damage ({a} players would have)" if a > 1 else
             "First round: nobody takes round damage (one player would have)" if a else
             "First round: nobody takes round damage")
    elif kind == "first_player":
        t = f"{who} takes the First Player token"
    elif kind == "round_start":
        t = (f"Epilogue round {a} (display only) begins; {who} is First Player" if b
             else f"Round {a} begins; {who} is First Player")
    elif kind == "resolve":
        t = f"Round {a} resolves" + (" (epilogue, display only)" if b else "")
    elif kind == "game_over":
        t = {0: "Game over: one living player remains",
             1: "Game over: nobody is left alive; the players who died last share the win "
                "(variant no_survivor=share_win)",
             2: "Game over: the round limit is reached; the living share a draw"}.get(a, "Game over")
    elif kind == "place":
        place = _ordinal(a // 2) if a % 2 == 0 else f"{a / 2:g} (shared)"
        t = f"{who} places {place}" + (" (winner)" if b else "")
    else:  # forced markers are folded into the next event
        t = f"{kind} {seat} {a} {b}"
    return t, t, False


def decode_rows(rows: np.ndarray, first_round: int, db) -> list[Event]:
    """Events from raw rows ``(kind, seat, a, b)`` of one step that began in ``first_round``."""
    out: list[Event] = []
    rnd = int(first_round)
    forced = False
    for row in np.asarray(rows, dtype=np.int64):
        code, seat, a, b = (int(x) for x in row)
        kind = EVENT_KINDS.get(code)
        if kind is None:
            raise ValueError(f"unknown event code {code} in the event log; known codes: 1-{max(EVENT_KINDS)}")
        if kind == "forced":
            forced = True
            continue
        if kind == "round_start":
            rnd = a
        public, private, hidden = _texts(kind, seat, a, b, db)
        out.append(Event(kind, seat, a, b, rnd, forced and kind in ACTION_KINDS, hidden, public, private))
        forced = False
    return out


def decode(engine, game: int = 0) -> list[Event]:
    """The events of game ``game``'s latest step (or reset), in order."""
    r = engine.state[int(game)]
    n = int(r["ev_n"])
    return decode_rows(r["ev"][:n], int(r["ev_round"]), engine.cards)


# ------------------------------------------------------------------------------ rounds
@dataclass
class RoundLog:
    """One resolved round, as the event log tells it.

    ``seats[q]``: ``card`` (design on the table at resolution, or None), ``revealed``
    (it was face-down until now), ``target`` (seat its choice named, or None),
    ``haunted_by`` (Shadow designs attached), ``competed``, ``score`` (None if not
    competing), ``damage`` (round damage), ``hp_lost`` (every HP lost this round: round
    damage, direct damage such as Backstab's, any other loss), ``hp`` (after the round),
    ``alive``, ``died`` (in this resolution). ``first_player`` holds the token after the round.
    """

    round: int
    epilogue: bool
    rule: int
    first_player: int
    seats: list[dict]
    events: list[Event] = field(default_factory=list)


class GameLog:
    """Follows one game through its steps' events and builds round summaries.

    Start it from the game's current state (after ``reset``, or any hand-built state),
    then call ``feed(engine.events(g))`` after each step: it returns the rounds that
    step resolved, in order. ``events`` is every event fed so far; ``current`` the
    events of the round in progress.
    """

    def __init__(self, engine, game: int = 0):
        r = engine.state[int(game)]
        P = engine.num_players
        self.P = P
        self.hp = [int(x) for x in r["hp"][:P]]
        self.alive = [bool(x) for x in r["alive"][:P]]
        self.start_hp = int(engine.cfg[C_HP])
        self.round = int(r["round_num"]) + (2 if bool(r["epilogue"]) else 1)
        self.epilogue = bool(r["epilogue"])
        self.first_player = int(r["first_player"])
        self.card = [int(d) if d >= 0 else None for d in r["played"][:P]]
        self.face_down = [bool(x) for x in r["face_down"][:P]]
        self.target = [int(t) if t >= 0 else None for t in r["target"][:P]]
        self.haunted = [[int(r["attached"][q, i]) for i in range(int(r["attached_n"][q]))] for q in range(P)]
        self.rule = int(r["rule"])
        self.hp_start = list(self.hp)
        self.events: list[Event] = []
        self.current: list[Event] = []
        self.rounds: list[RoundLog] = []
        self._resolving = False
        self._res: dict = {}

    def _new_round(self, ev: Event) -> None:
        P = self.P
        self.round = ev.a
        self.epilogue = bool(ev.b)
        self.first_player = ev.seat
        self.card = [None] * P
        self.face_down = [False] * P
        self.target = [None] * P
        self.haunted = [[] for _ in range(P)]
        self.rule = 0
        self.hp_start = list(self.hp)
        self.current = []

    def _close(self, next_first: int | None) -> RoundLog:
        P = self.P
        res = self._res
        seats = []
        for q in range(P):
            seats.append({
                "seat": q,
                "card": self.card[q],
                "revealed": q in res["revealed"],
                "target": self.target[q] if self.card[q] is not None else None,
                "haunted_by": list(self.haunted[q]),
                "competed": q in res["scores"],
                "score": res["scores"].get(q),
                "damage": res["damage"].get(q, 0),
                "hp_lost": max(0, self.hp_start[q] - self.hp[q]),
                "hp": self.hp[q],
                "alive": self.alive[q],
                "died": q in res["died"],
            })
        fp = next_first if next_first is not None else res.get("first_player", self.first_player)
        log = RoundLog(self.round, self.epilogue, self.rule, fp, seats, list(self.current))
        self.rounds.append(log)
        self._resolving = False
        return log

    def feed(self, events: list[Event]) -> list[RoundLog]:
        """Take one step's events; returns the rounds they resolved."""
        return [item for kind, item in self.items(events) if kind == "round"]

    def items(self, events: list[Event]) -> list[tuple[str, object]]:
        """Take one step's events; returns them in order as ``("event", Event)``, with
        ``("round", RoundLog)`` placed where each resolved round ends (before the next
        round's ``round_start``, or after the resolution that ended the game)."""
        out: list[tuple[str, object]] = []
        for ev in events:
            k, q = ev.kind, ev.seat
            if k == "round_start":
                if self._resolving:
                    out.append(("round", self._close(ev.seat)))
                self._new_round(ev)
            self.events.append(ev)
            self.current.append(ev)
            out.append(("event", ev))
            if k in ("play", "replace"):
                self.card[q] = ev.a
                self.face_down[q] = ev.hidden  # a face-down play or replacement
                self.target[q] = None
            elif k == "target":
                self.target[q] = ev.a
            elif k == "haunt":
                self.haunted[ev.a].append(ev.b)
            elif k == "exorcise":
                if ev.a in self.haunted[q]:
                    self.haunted[q].remove(ev.a)
            elif k == "rule":
                self.rule = ev.a
            elif k in ("hit", "damage"):
                self.hp[q] = ev.b
                if k == "damage":
                    self._res["damage"][q] = ev.a
            elif k == "death":
                self.alive[q] = False
                self.hp[q] = 0
                if self._resolving:
                    self._res["died"].add(q)
            elif k == "resolve":
                self._resolving = True
                self._res = {"revealed": set(), "scores": {}, "damage": {}, "died": set()}
            elif k == "reveal":
                self._res["revealed"].add(q)
                self.face_down[q] = False
            elif k == "score":
                self._res["scores"][q] = ev.b
            elif k == "first_player":
                self._res["first_player"] = q
        if self._resolving:  # a resolution that ended the game (no next round began)
            out.append(("round", self._close(None)))
        return out
