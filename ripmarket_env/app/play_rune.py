"""The web page's Rune Market session: one game between one person and the bots.

``RuneMarketSession`` holds one game between one person (``seat``) and registered Rune
Market agents in every other seat, with the views ``ripmarket serve`` sends to its page
(the terminal game of every game is ``ripmarket_env.app.play`` over
``ripmarket_env.app.session.TableSession``):

>>> s = RuneMarketSession(players=4, seat=0, opponents=["rm-banker", "rm-raider", "rm-bandit"], seed=7)
>>> s.your_turn, [c.text for c in s.choices()]
>>> s.act(s.choices()[0].action)   # your decision, then the bots play until your next one
>>> s.prompt()                     # what you are asked now, in words

The bots play until the engine's acting seat is yours, so when a bot attacks you the game
stops at once on your block decision (RM-5.7: the acting seat switches to the defender):
``blocking`` is true, ``prompt()`` names the attacker and the attack's value, and the
choices are the Number cards that block it and "do not block". What happened since your
last decision is told by the engine's event log as your seat may see it (RM-5.2, RM-5.9:
another seat's stolen card and a forced "no block" are not told apart from anything else).
Every decision goes through a ``Recorder``: a finished game can be saved and replayed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ripmarket_env.app.seat_session import (  # noqa: F401 - MAX_BOT_STEPS, SECRET_SEED_BITS: this module's names too
    MAX_BOT_STEPS,
    SECRET_SEED_BITS,
    GameOverError,
    NotYourTurnError,
    SeatSession,
    game_seed,
    seat_controllers,
)
from ripmarket_env.envs.record import Recorder

GAME = "rune-market"
DEFAULT_OPPONENTS = ("rm-banker", "rm-raider", "rm-bandit")


class SetupError(ValueError):
    """Bad game settings (players, seat, opponents, seed, rules)."""


@dataclass(frozen=True)
class Choice:
    number: int  # 1-based, as the terminal shows it
    action: int
    text: str


def _spec():
    from ripmarket_env.games import get

    return get(GAME)


def check_setup(players: int, seat: int, opponents: Sequence[str]) -> list[str]:
    """The controller of every seat (``"you"`` at ``seat``; the opponents cycled over the
    others in seat order), or a ``SetupError`` naming what is allowed."""
    import agents

    spec = _spec()
    if isinstance(players, bool) or not isinstance(players, (int, np.integer)) or \
            not spec.min_players <= players <= spec.max_players:
        raise SetupError(f"players={players!r} is not allowed; allowed: {spec.min_players} to {spec.max_players}")
    return seat_controllers(players, seat, opponents, agents.names(GAME), SetupError, "The Rune Market")


class RuneMarketSession(SeatSession):
    """One game of The Rune Market: a person at ``seat`` and bots in every other seat.
    ``SeatSession`` gives its state, ``act``, the bots' play and the re-play of ``steps``."""

    def __init__(self, players: int, seat: int, opponents: Sequence[str] = DEFAULT_OPPONENTS,
                 seed: int | None = None, rules: dict | None = None, steps: Sequence[int] = (),
                 practice: bool | None = None):
        """``steps`` re-plays every seat's actions of a game already under way (``steps``
        of a session) before the bots take over, no bot being asked: how the server brings
        a game back after a restart; ``SetupError`` names the first one that is not legal.
        ``practice``: the flag of the game being brought back (default: a seed was given)."""
        import agents

        self.controllers = check_setup(players, seat, opponents)
        self.players, self.seat = int(players), int(seat)
        self.seed, chosen = game_seed(seed, SetupError)
        self.practice = bool(chosen if practice is None else practice)
        spec = _spec()
        fields = dict(rules or {})
        fields.pop("num_players", None)
        try:
            self.rules = spec.make_rules(self.players, **fields)
        except (TypeError, ValueError) as exc:
            raise SetupError(str(exc)) from None
        self.recorder = Recorder.new(self.rules, self.seed, spec=spec,
                                     controllers=["person" if c == "you" else c for c in self.controllers])
        self.recorder.lines[0]["practice"] = self.practice
        self.engine = self.recorder.engine
        self.bots = {q: agents.make_seeded(name, 1_000 * (self.seed % 2**40) + q, game=GAME)
                     for q, name in enumerate(self.controllers) if q != self.seat}
        self.log: list[str] = []  # every event as your seat may see it
        self.events: list = []  # the same events as the engine's Event objects (self.log[i] is events[i]'s text)
        self._mark = 0  # where in the log the events since your latest decision begin
        self._take_events()
        # as act() does: what follows your decision is "recent"
        self.replay(steps, SetupError, on_yours=self._mark_yours)
        self.run_bots()

    def _log_size(self) -> int:
        return len(self.log)

    # ------------------------------------------------------------------ state
    @property
    def blocking(self) -> bool:
        """You are asked whether to block an attack (RM-5.7), during another seat's turn."""
        return self.your_turn and self.phase == "defend"

    def label(self, q: int) -> str:
        return "you" if q == self.seat else f"P{q} ({self.controllers[q]})"

    # ------------------------------------------------------------------ decisions
    def choices(self) -> list[Choice]:
        if not self.your_turn:
            return []
        block = self.blocking
        out = []
        for i, a in enumerate(self.legal_actions()):
            text = self.engine.describe_action(a)
            if block:
                text = "let the attack through (do not block)" if text == "do not block" else f"block: show your {text}"
            out.append(Choice(i + 1, a, text))
        return out

    def prompt(self) -> str:
        """What you are asked now, in words (empty when you are not asked)."""
        if not self.your_turn:
            return ""
        r = self.state
        if self.blocking:
            attacker = int(r["turn_player"])
            return (f"BLOCK? {self.label(attacker)} attacks you with a Number {int(r['pend_value'])}. "
                    f"Show a Number card of {int(r['pend_value'])} or more to block it (you keep the card), "
                    f"or let it through: an unblocked attack gives {self.label(attacker)} one theft on you.")
        return self.engine.spec.describe_table(self.engine, 0, self.seat)["prompt"]  # the game's words

    def _step(self, a: int) -> None:
        self.recorder.step(a)  # IllegalActionError (state untouched) if not legal
        self._take_events()

    def _take_events(self) -> None:
        for e in self.engine.events(0):
            self.log.append(e.text_for(self.seat))
            self.events.append(e)

    def recent(self) -> list[str]:
        """The events since your latest decision (yours first), as your seat sees them."""
        return self.log[self._mark:]

    def recent_moves(self) -> list[dict]:
        """The same events grouped into moves, each told in one sentence as your seat may
        know it (the game's story hook, ``games/runemarket/story.py``): what the web page
        plays back one at a time."""
        return self.engine.spec.story(self.engine, self.events[self._mark:], self.seat, self.label)

    # ------------------------------------------------------------------ views
    def table_text(self) -> str:
        """The table as your seat may see it: your hand only (RM-8.4)."""
        from ripmarket_env.games.runemarket.render import render_text

        text = render_text(self.engine, 0, viewer=self.seat)
        return "\n".join(ln for ln in text.splitlines() if not ln.startswith("legal: ")) + "\n"

    def result(self) -> dict | None:
        if not self.over:
            return None
        r = self.state
        winners = [q for q in range(self.players) if r["winners"][q]]
        return {"winners": winners, "you_won": self.seat in winners, "scores": self.engine.scores(0),
                "seed": self.seed}

    def save(self, path, overwrite: bool = False) -> Path:
        return self.recorder.save(path, overwrite=overwrite)
