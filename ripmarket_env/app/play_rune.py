"""Play The Rune Market against the bots: one game session, and the terminal game.

``RuneMarketSession`` holds one game between one person (``seat``) and registered Rune
Market agents in every other seat (``ripmarket play --game rune-market``):

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

import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ripmarket_env.envs.record import Recorder

GAME = "rune-market"
DEFAULT_OPPONENTS = ("rm-banker", "rm-raider", "rm-bandit")
MAX_BOT_STEPS = 100_000
SECRET_SEED_BITS = 128


class SetupError(ValueError):
    """Bad game settings (players, seat, opponents, seed, rules)."""


class NotYourTurnError(RuntimeError):
    """An action given while another seat decides (the state is unchanged)."""


class GameOverError(RuntimeError):
    """An action given after the game ended."""


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
    if isinstance(seat, bool) or not isinstance(seat, (int, np.integer)) or not 0 <= seat < players:
        raise SetupError(f"seat={seat!r} is not allowed; allowed: 0 to {players - 1}")
    known = agents.names(GAME)
    names = [str(n) for n in opponents]
    if not names:
        raise SetupError(f"opponents: give at least one bot; allowed: {', '.join(known)}")
    bad = [n for n in names if n not in known]
    if bad:
        raise SetupError(f"opponents: unknown bot {bad[0]!r} for The Rune Market; allowed: {', '.join(known)}")
    out, k = [], 0
    for q in range(players):
        if q == seat:
            out.append("you")
        else:
            out.append(names[k % len(names)])
            k += 1
    return out


class RuneMarketSession:
    """One game of The Rune Market: a person at ``seat`` and bots in every other seat."""

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
        self.practice = bool(seed is not None if practice is None else practice)
        if seed is None:
            seed = secrets.randbits(SECRET_SEED_BITS)
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
            raise SetupError(f"seed={seed!r} is not allowed; allowed: a non-negative integer (or none)")
        self.seed = int(seed)
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
        for i, a in enumerate(steps):
            if isinstance(a, bool) or not isinstance(a, (int, np.integer)) or int(a) not in self.legal_actions():
                raise SetupError(f"steps[{i}]={a!r} is not a legal action of this game at step {i}; "
                                 f"legal: {self.legal_actions()}")
            if self.actor == self.seat:  # as act() does: what follows your decision is "recent"
                self._mark = len(self.log)
            self.recorder.step(int(a))
            self._take_events()
        self.run_bots()

    @property
    def steps(self) -> list[int]:
        """Every seat's actions so far, in order (``RuneMarketSession(..., steps=...)``
        re-plays them)."""
        return [line["action"] for line in self.recorder.lines if "step" in line]

    # ------------------------------------------------------------------ state
    @property
    def state(self):
        return self.engine.state[0]

    @property
    def over(self) -> bool:
        return bool(self.state["done"])

    @property
    def actor(self) -> int:
        return -1 if self.over else int(self.state["actor"])

    @property
    def your_turn(self) -> bool:
        return not self.over and self.actor == self.seat

    @property
    def phase(self) -> str:
        return "game_over" if self.over else self.engine.phase()[0]

    @property
    def blocking(self) -> bool:
        """You are asked whether to block an attack (RM-5.7), during another seat's turn."""
        return self.your_turn and self.phase == "defend"

    def legal_actions(self) -> list[int]:
        return self.engine.legal_actions(0)

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
        from ripmarket_env.games.runemarket.render import phase_text

        return f"Your decision ({phase_text(self.engine, 0).split(': ', 1)[-1]})"

    def act(self, action: int) -> None:
        """Your decision; then the bots play until your next one or the end. An action that
        is not legal now raises (``IllegalActionError``, ``NotYourTurnError`` or
        ``GameOverError``) and changes nothing."""
        if self.over:
            raise GameOverError("the game is over; no more decisions")
        if not self.your_turn:
            raise NotYourTurnError(f"{self.label(self.actor)} decides now, not you")
        mark = len(self.log)
        self.recorder.step(int(action))  # IllegalActionError (state untouched) if not legal
        self._mark = mark
        self._take_events()
        self.run_bots()

    def run_bots(self) -> None:
        """The bots' decisions until your seat must decide (a block included) or the end."""
        for _ in range(MAX_BOT_STEPS):
            if self.over or self.actor == self.seat:
                return
            q = self.actor
            obs = self.engine.observe(np.array([q]))[0]
            mask = self.engine.legal_mask()[0].copy()
            self.recorder.step(int(self.bots[q].act(obs, mask)))
            self._take_events()
        raise RuntimeError(f"the bots took more than {MAX_BOT_STEPS} decisions in a row")  # pragma: no cover

    def _take_events(self) -> None:
        for e in self.engine.events(0):
            self.log.append(e.text_for(self.seat))
            self.events.append(e)

    def recent(self) -> list[str]:
        """The events since your latest decision (yours first), as your seat sees them."""
        return self.log[self._mark:]

    def recent_moves(self) -> list[dict]:
        """The same events grouped into moves, each told in one sentence as your seat may
        know it (``rune_story.moves``): what the web page plays back one at a time."""
        from ripmarket_env.app.rune_story import moves

        return moves(self.events[self._mark:], self.seat, self.label, self.engine.cards, self.rules.runes_per_item)

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


def play_terminal(players: int, seat: int, opponents: Sequence[str] = DEFAULT_OPPONENTS, seed: int | None = None,
                  save: Path | None = None, overwrite: bool = False,
                  ask: Callable[[str], str] = input, out: Callable[[str], None] = print) -> RuneMarketSession:
    """The terminal game: the table, what happened, then numbered choices; a block
    decision comes first, under a banner, the moment a bot attacks you."""
    s = RuneMarketSession(players, seat, opponents, seed=seed)
    out(f"The Rune Market: you are P{seat}; " + ", ".join(s.label(q) for q in range(players) if q != seat))
    while not s.over:
        for line in s.recent():
            out(f"  - {line}")
        if s.blocking:
            out("!" * 72)
            out(s.prompt())
            out("!" * 72)
        else:
            out(s.table_text())
            out(s.prompt())
        choices = s.choices()
        for c in choices:
            out(f"  {c.number:>2}. {c.text}")
        while True:
            raw = ask(f"choice 1-{len(choices)}: ").strip()
            if raw.isdigit() and 1 <= int(raw) <= len(choices):
                break
            out(f"'{raw}' is not a choice; type a number from 1 to {len(choices)}")
        s.act(choices[int(raw) - 1].action)
    for line in s.recent():
        out(f"  - {line}")
    out(s.table_text())
    res = s.result()
    names = ", ".join(s.label(q) for q in res["winners"])
    out(f"Game over: {'you win' if res['you_won'] else 'you lose'}; winner(s): {names}; scores {res['scores']}")
    if save is not None:
        out(f"record saved to {s.save(save, overwrite=overwrite)}")
    return s
