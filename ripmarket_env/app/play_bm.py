"""Play Black Market against the bots: one game session (the web page's and the terminal's).

``BlackMarketSession`` holds one game between one person (``seat``) and registered Black
Market agents (``agents.names("black-market")``) in every other seat, teammates included:

>>> s = BlackMarketSession(players=4, seat=0, mode="teams", opponents=["bm-denier"], seed=7)
>>> s.your_turn, [c.text for c in s.choices()]
>>> s.act(s.choices()[0].action)   # your decision; the bots then play until your next one
>>> s.view()                       # the table as your seat may see it (a JSON-able dict)

What a seat may see (BM-7): its own hand only (other hands by size), every seen map card,
the dice, score piles; the engine's event texts as that seat reads them, so the cards a
Heist moves are named to the thief and the victim only (BM-7.3) and a drawn card to its
drawer only. A decision with one legal option is taken by the engine (BM-12.3). Every
decision goes through a ``Recorder``: a finished game can be saved and replayed, and
``steps`` (every seat's actions) rebuilds a game exactly, without asking a bot again.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

import agents

from ripmarket_env.app.seat_session import GameOverError, NotYourTurnError, SeatSession, game_seed, kernel_lock, seat_controllers
from ripmarket_env.envs.record import Recorder

GAME = "black-market"
DEFAULT_OPPONENTS = ("bm-builder", "bm-denier", "bm-rusher")
PLAYER_COUNTS = (2, 4, 6)
MODES = ("teams", "ffa")

#: A plain-language difficulty for every Black Market bot (docs/games/black-market/LEADERBOARD.md
#: and the trained bots' match figures in the game's README).
BOT_LEVELS = agents.game_agents(GAME).levels  # the game's agents' profile (agents/blackmarket)
COLOURS = ("red", "black", "dual")
HAND_KINDS = ("Red", "Black", "Flip")
END_WORDS = {0: "reached the target", 1: "the map and the Point deck ran out", 2: "the turn limit was reached"}


class SetupError(ValueError):
    """Bad game settings (players, seat, mode, opponents, seed, steps)."""


@dataclass(frozen=True)
class Choice:
    number: int  # 1-based, as the page's keys and the terminal show it
    action: int
    kind: str  # flip, rotate, buy, draw, effect, choose_slot, choose_seat
    text: str
    slot: int | None = None  # the map slot (1-6) the action touches, if any


def bot_level(name: str) -> str:
    return BOT_LEVELS.get(name, "Unrated")


def side_name(q: int) -> str:
    return "AB"[q % 2]


def check_setup(players, seat, mode, opponents: Sequence[str]) -> list[str]:
    """The controller of every seat (``"you"`` at ``seat``, the opponents cycled over the
    other seats in seat order), or a ``SetupError`` saying what is allowed (BM-1.1)."""
    import agents

    if isinstance(players, bool) or not isinstance(players, (int, np.integer)) or players not in PLAYER_COUNTS:
        raise SetupError(f"players={players!r} is not allowed; allowed: 2, 4 or 6 (two equal sides)")
    if mode not in MODES:
        raise SetupError(f"mode={mode!r} is not allowed; allowed: teams, ffa")
    return seat_controllers(players, seat, opponents, agents.names(GAME), SetupError, "Black Market")


class BlackMarketSession(SeatSession):
    """One game of Black Market: a person at ``seat`` and bots in every other seat."""

    def __init__(self, players: int = 4, seat: int = 0, mode: str = "teams",
                 opponents: Sequence[str] = DEFAULT_OPPONENTS, seed: int | None = None,
                 steps: Sequence[int] = (), practice: bool | None = None):
        import agents
        from ripmarket_env.games.blackmarket import SPEC, ConfigError, RulesConfig

        self.controllers = check_setup(players, seat, mode, opponents)
        self.players, self.seat, self.mode = int(players), int(seat), str(mode)
        self.opponents = [str(n) for n in opponents]
        self.seed, chosen = game_seed(seed, SetupError)
        self.practice = bool(chosen if practice is None else practice)
        try:
            self.rules = RulesConfig(num_players=self.players, mode=self.mode)
        except ConfigError as exc:  # pragma: no cover - check_setup refuses every bad value first
            raise SetupError(str(exc)) from None
        with kernel_lock():
            self.recorder = Recorder.new(self.rules, self.seed, spec=SPEC,
                                         controllers=["person" if c == "you" else c for c in self.controllers])
        self.recorder.lines[0]["practice"] = self.practice
        self.engine = self.recorder.engine
        self.db = self.engine.cards
        self.bots = {q: agents.make_seeded(name, 1_000 * (self.seed % 2**40) + q, game=GAME)
                     for q, name in enumerate(self.controllers) if q != self.seat}
        self.moves: list[dict] = []  # every decision with the events it caused, as your seat sees them
        self._mark = 0  # where in ``moves`` the ones since your latest decision begin
        self._add_move(-1, "the cards are dealt")
        self.replay(steps, SetupError, on_yours=self._mark_yours)
        self.run_bots()

    def label(self, q: int) -> str:
        return "you" if q == self.seat else f"player {q} ({self.controllers[q]})"

    # ------------------------------------------------------------------ decisions
    def _choice_text(self, a: int) -> tuple[str, str, int | None]:
        """(kind, text, the map slot it touches): the game's words for the choice
        (``games/blackmarket/table.py``), a Heist's victim named with its bot."""
        from ripmarket_env.games.blackmarket.actions import decode
        from ripmarket_env.games.blackmarket.table import choice_text

        kind, args = decode(int(a))
        if kind == "choose_seat":
            victim = (self.actor + args[0]) % self.players
            return kind, f"steal from {self.label(victim)} ({int(self.state['hand_n'][victim])} cards in hand)", None
        text = choice_text(self.engine, 0, a)
        slot = None if kind == "effect" or (kind == "choose_slot" and self.phase == "choose_number") else args[0]
        return kind, text[:1].lower() + text[1:], slot

    def choices(self) -> list[Choice]:
        if not self.your_turn:
            return []
        out = []
        for i, a in enumerate(self.legal_actions()):
            kind, text, slot = self._choice_text(a)
            out.append(Choice(i + 1, a, kind, text, slot))
        return out

    def prompt(self) -> str:
        """What you are asked now, in words (empty when you are not asked)."""
        from ripmarket_env.games.blackmarket.table import prompt

        return prompt(self.engine, 0, self.phase) if self.your_turn else ""

    def _step(self, a: int) -> None:
        q = self.actor
        text = self._choice_text(a)[1] if q >= 0 else ""
        with kernel_lock():
            self.recorder.step(a)
        self._add_move(q, text)

    def _add_move(self, q: int, text: str) -> None:
        lines = [self.event_text(e) for e in self.engine.events(0) if e.kind != "forced"]
        self.moves.append({"seat": q, "who": self.label(q) if q >= 0 else "the table", "action": text,
                           "events": lines, "turn": int(self.state["turn"]) + 1})

    def event_text(self, e) -> str:
        """An event as your seat may see it (BM-7); one the engine took alone (BM-12.3) says
        so, without reading as if a bot was forced into a bad move."""
        text = e.private if e.sees_private(self.seat) else e.public
        if not e.forced:
            return text
        return text + (" (your only option, so you were not asked)" if e.seat == self.seat else " (the only option)")

    def recent(self) -> list[dict]:
        """The decisions since your latest one (yours first), each with its events."""
        return self.moves[self._mark:]

    # ------------------------------------------------------------------ views
    def card_info(self, d: int) -> dict:
        from ripmarket_env.games.blackmarket.cards import effect_text

        c = self.db.point[d]
        return {"design": int(d), "name": c.name, "colour": c.colour, "points": int(c.points),
                "effect": effect_text(c) if c.primitive else "", "text": c.text}

    def map_view(self) -> list[dict]:
        r = self.state
        out = []
        for s in range(6):
            d = int(r["map_card"][s])
            side = int(r["map_side"][s])
            out.append({
                "slot": s + 1, "empty": d < 0,
                "card": self.card_info(d) if d >= 0 and r["map_seen"][s] else None,
                "face_down": bool(r["map_down"][s]) if d >= 0 else False,
                "faces": "AB"[side], "faces_you": side == self.seat % 2,
            })
        return out

    def seats_view(self) -> list[dict]:
        r = self.state
        out = []
        for q in range(self.players):
            owned = [{**self.card_info(d), "count": int(n), "spent": bool(r["spent"][q, d])}
                     for d, n in enumerate(r["owned"][q]) if n]
            out.append({
                "seat": q, "name": f"player {q}", "controller": self.controllers[q],
                "level": bot_level(self.controllers[q]) if q != self.seat else "", "is_you": q == self.seat,
                "side": side_name(q), "points": int(r["points"][q]), "hand_count": int(r["hand_n"][q]),
                "owned": owned, "deciding": self.actor == q, "turn_player": not self.over and int(r["turn_player"]) == q,
            })
        return out

    def hand_view(self) -> dict:
        """Your hand (BM-7.1: only yours, by kind)."""
        r = self.state
        return {k.lower(): int(r["hand"][self.seat, i]) for i, k in enumerate(HAND_KINDS)}

    def dice_view(self) -> list[dict]:
        r = self.state
        if self.over:
            return []
        return [{"value": int(r["dice"][i]), "used": bool(r["dice_used"][i])} for i in range(int(r["n_dice"]))]

    def result(self) -> dict | None:
        if not self.over:
            return None
        r = self.state
        winners = self.engine.winners(0)
        a, b = self.engine.side_points(0)
        rows = []
        for q in range(self.players):
            rows.append({"seat": q, "name": f"player {q}", "controller": self.controllers[q],
                         "level": bot_level(self.controllers[q]) if q != self.seat else "", "side": side_name(q),
                         "points": int(r["points"][q]), "winner": q in winners})
        rows.sort(key=lambda x: (not x["winner"], -x["points"], x["seat"]))
        rank = (lambda x: (x["winner"],)) if self.mode == "teams" else (lambda x: (x["winner"], x["points"]))
        ranks = list(dict.fromkeys(rank(x) for x in rows))
        for row in rows:  # teams: a side wins or loses together (BM-1.3); ffa: by points too
            row["place"] = 1 + ranks.index(rank(row))
        reason = int(r["end_reason"])
        if self.mode == "teams":
            sides = sorted({side_name(q) for q in winners})
            head = (f"side {' and '.join(sides)} wins" if sides else "no winner") + f" ({END_WORDS.get(reason, '')})"
        else:
            head = (", ".join(self.label(q) for q in winners) or "nobody") + f" wins ({END_WORDS.get(reason, '')})"
        return {"winners": winners, "you_won": self.seat in winners, "sides": {"A": a, "B": b},
                "turns": int(r["turn"]) + 1, "end": head, "standings": rows}

    def view(self) -> dict:
        """The game as your seat may see it (BM-7), JSON-able."""
        r = self.state
        a, b = self.engine.side_points(0)
        return {
            "game": GAME, "seat": self.seat, "players": self.players, "mode": self.mode,
            "target": int(self.rules.target_points), "turn": int(r["turn"]) + 1, "turns_cap": self.rules.turns_cap,
            "seats": self.seats_view(), "sides": {"A": a, "B": b}, "your_side": side_name(self.seat),
            "map": self.map_view(), "dice": self.dice_view(),
            "dice_of": -1 if self.over else int(r["turn_player"]),
            "hand": self.hand_view(),
            "decks": {"point": int(r["pdeck_n"]), "hand": int(r["hdeck_n"]),
                      "discard": int(sum(int(x) for x in r["hdisc"]))},
            "over": self.over, "your_turn": self.your_turn, "phase": self.phase, "prompt": self.prompt(),
            "decision_number": self.decision_number,
            "choices": [{"number": c.number, "action": c.action, "kind": c.kind, "text": c.text, "slot": c.slot}
                        for c in self.choices()],
            "recent": self.recent(), "result": self.result(), "practice": self.practice,
            "seed": self.seed if (self.over or self.practice) else None,
        }

    def table_text(self) -> str:
        """The table as your seat may see it (the game's text render)."""
        from ripmarket_env.games.blackmarket.render import render_text

        return render_text(self.engine, 0, viewer=self.seat)

    def record_text(self) -> str:
        return self.recorder.dumps()

    def save(self, path, overwrite: bool = True) -> Path:
        return self.recorder.save(path, overwrite=overwrite)
