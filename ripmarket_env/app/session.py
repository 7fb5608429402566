"""One play session for every game: a person at one seat, bots at the others, the table
drawn from the game's own description (``GameSpec.describe_table``) and the story told by
the game's own words (``GameSpec.tell``).

>>> s = TableSession(game_id, players=4, seat=0, seed=7)   # any id of ripmarket_env.games.ids()
>>> s.your_turn, [c["text"] for c in s.choices()]
>>> s.act(s.choices()[0]["action"])   # your decision; the bots then play until your next one
>>> s.table()                         # the table as your seat may see it (plain data)
>>> s.recent()                        # what happened since your latest decision, as story lines

A decision of your seat with exactly one legal action is not asked: the session takes it
and tells you in a story line ("You let the attack through (your only option)"); the
engine still asks the seat, and the bots see the same table as if you had chosen
(``ask_forced=True`` asks every decision, as before).

Nothing here knows a game: the rules come from the spec (``make_rules``), the opponents
from the game's agents (``agents.default_lineup``, ``agents.game_agents(game).level``),
the table and the story from the game's hooks, with generic defaults for a game that
gives none. Every decision goes through a ``Recorder``: a game can be saved and replayed,
and ``steps`` (every seat's actions) rebuilds it exactly without asking a bot again.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from ripmarket_env.app.seat_session import (  # noqa: F401 - the errors a session raises
    GameOverError,
    NotYourTurnError,
    SeatSession,
    game_seed,
    kernel_lock,
)
from ripmarket_env.envs.record import Recorder


class SetupError(ValueError):
    """Bad game settings (game, players, seat, opponents, seed, rules, steps); the message
    says what is allowed."""


def game_spec(game):
    """The ``GameSpec`` of ``game`` (a registry id or a spec), or a ``SetupError``."""
    from ripmarket_env.games import registry

    if not isinstance(game, str):
        return game
    games = registry()
    if game not in games:
        raise SetupError(f"unknown game {game[:40]!r}; allowed: {', '.join(sorted(games))}")
    return games[game]


def assign_opponents(players: int, seat: int, opponents: Sequence[str], known: Sequence[str],
                     refused: Mapping[str, str] | None = None, lo: int = 2, hi: int = 10,
                     error: type[Exception] = SetupError) -> list[str]:
    """The controller of every seat: ``"you"`` at ``seat``, bots elsewhere.

    The other seats, in seat order, take the opponent names in order; a shorter list is
    cycled. ``known``: the bots allowed; ``refused``: bots that exist but cannot play this
    table, with the reason; ``lo``-``hi``: the player counts. Raises ``error`` naming
    what is wrong and what is allowed."""
    if isinstance(players, bool) or not isinstance(players, (int, np.integer)) or not lo <= players <= hi:
        raise error(f"players={players!r} is not allowed; allowed: an integer from {lo} to {hi}")
    if isinstance(seat, bool) or not isinstance(seat, (int, np.integer)) or not 0 <= seat < players:
        raise error(f"seat={seat!r} is not allowed; allowed with {players} players: 0 to {players - 1}")
    names = [str(n).strip() for n in opponents if str(n).strip()]
    allowed = ", ".join(known)
    if not names:
        raise error(f"no opponents given; name at least one bot; allowed: {allowed}")
    unknown = [n for n in names if n not in known]
    if unknown and unknown[0] in (refused or {}):
        raise error(f"bot {unknown[0]!r} cannot play these cards: {refused[unknown[0]]}; allowed: {allowed}")
    if unknown:
        raise error(f"unknown opponent {unknown[0][:40]!r}; allowed: {allowed}")
    if len(names) > players - 1:
        raise error(f"{len(names)} opponents given for {players - 1} other seat(s); give at most {players - 1} "
                    "(a shorter list is repeated round the table)")
    others = iter(names[k % len(names)] for k in range(players))
    return ["you" if q == seat else next(others) for q in range(players)]


def default_opponents(spec, players: int, playable=lambda name: True) -> list[str]:
    """The game's default opponents for the other ``players - 1`` seats
    (``agents.default_lineup``; ``playable(name)``: whether a bot can play this table)."""
    import agents

    return agents.default_lineup(spec.id, max(players - 1, 1), playable)


def check_setup(game, players: int | None, seat: int, opponents: Sequence[str] | None, rules: dict | None = None,
                refused: Mapping[str, str] | None = None):
    """``(spec, rules, controllers)``: the game's rules config and the controller of every
    seat (``"you"`` at ``seat``), or a ``SetupError`` naming what is wrong and what is allowed
    (``refused``: the game's bots that cannot play this table, e.g. these cards, and why)."""
    import agents

    spec = game_spec(game)
    refused = dict(refused or {})
    known = [n for n in agents.names(spec.id) if n not in refused]
    players = spec.default_players if players is None else players
    names = default_opponents(spec, players if isinstance(players, int) else 2, lambda n: n not in refused) \
        if opponents is None else list(opponents)
    controllers = assign_opponents(players, seat, names, known, refused, spec.min_players, spec.max_players)
    try:
        spec.make_rules(int(players))
    except (TypeError, ValueError) as exc:  # a count inside the range the rules still refuse
        raise SetupError(f"players={players!r} is not allowed; {' '.join(str(exc).split())}") from None
    fields = dict(rules or {})
    fields.pop("num_players", None)
    try:
        cfg = spec.make_rules(int(players), **fields)
    except (TypeError, ValueError) as exc:
        text = " ".join(str(exc).split())
        raise SetupError(text if text.startswith("rules") else f"rules: {text}") from None
    return spec, cfg, controllers


class TableSession(SeatSession):
    """One game of any registered game: a person at ``seat`` and bots in every other seat.

    ``opponents`` (registry names of the game's agents, cycled over the other seats in
    seat order; default: ``agents.default_lineup``), ``rules`` (rules-config fields other
    than ``num_players``), ``seed`` (default: a secret one, shown once the game is over;
    a chosen seed makes a *practice* game), ``steps`` (every seat's actions of a game
    already under way, taken again before the bots play on), ``ask_forced`` (ask your
    decisions that have one legal action too; by default the session takes them itself and
    tells you so in a story line, ``forced_line``). Construction plays the bots' decisions
    up to your first one.
    """

    def __init__(self, game, players: int | None = None, seat: int = 0, opponents: Sequence[str] | None = None,
                 seed: int | None = None, rules: dict | None = None, steps: Sequence[int] = (),
                 practice: bool | None = None, engine_kwargs: dict | None = None,
                 refused: Mapping[str, str] | None = None, ask_forced: bool = False):
        import agents

        self.ask_forced = bool(ask_forced)
        self.spec, self.rules, self.controllers = check_setup(game, players, seat, opponents, rules, refused)
        self.game = self.spec.id
        self.players, self.seat = int(self.rules.num_players), int(seat)
        self.seed, chosen = game_seed(seed, SetupError)
        self.practice = bool(chosen if practice is None else practice)
        with kernel_lock():
            self.recorder = Recorder.new(self.rules, self.seed, spec=self.spec, **(engine_kwargs or {}),
                                         controllers=["person" if c == "you" else c for c in self.controllers])
        self.recorder.lines[0]["practice"] = self.practice
        self.engine = self.recorder.engine
        self.profile = agents.game_agents(self.game)
        self.bots = {q: self._make_bot(name, 1_000 * (self.seed % 2**40) + q, engine_kwargs or {})
                     for q, name in enumerate(self.controllers) if q != self.seat}
        self.history: list = []  # every event of the game (the engine's Event objects), in order
        self.moves: list[dict] = []  # the story lines told to your seat, in order
        self._mark = 0  # where in ``moves`` the ones since your latest decision begin
        first = self.table()
        self._names = [s["name"] for s in first["seats"]]
        self.turn_word = first["turn_word"]  # what the game calls a span of play ("round", "turn")
        self._take_events()
        self.replay(steps, SetupError, on_yours=self._mark_unless_forced)
        self.run_bots()

    def _make_bot(self, name: str, seed: int, engine_kwargs: dict):
        """The bot, told the table's facts it takes: the cards in play when they are not the
        packaged ones, the start HP when the rules set one (a heuristic reads its HP as a
        fraction of it); a bot that takes neither is made without them."""
        import agents

        extras = {}
        if engine_kwargs.get("cards") is not None:
            extras["cards"] = engine_kwargs["cards"]
        if getattr(self.rules, "start_hp", None) is not None:
            extras["start_hp"] = self.rules.start_hp
        keys = list(extras)
        for k in range(len(keys), 0, -1):  # every extra, then fewer, then none
            try:
                return agents.make_seeded(name, seed, game=self.game, **{x: extras[x] for x in keys[:k]})
            except TypeError:
                continue
        return agents.make_seeded(name, seed, game=self.game)

    # ------------------------------------------------------------------ names
    def name(self, q: int) -> str:
        return self._names[q] if 0 <= q < len(self._names) else f"player {q}"

    def label(self, q: int) -> str:
        """A seat as the person reads it: ``"you"`` or ``"player 2 (bm-rusher)"``."""
        return "you" if q == self.seat else f"{self.name(q)} ({self.controllers[q]})"

    def level(self, q: int) -> str:
        """The difficulty label of seat ``q``'s bot (``""`` for you)."""
        return self.profile.level(self.controllers[q])

    # ------------------------------------------------------------------ play
    def _forced_action(self) -> int | None:
        """Your seat's only legal action, which the session takes without asking (None:
        you are asked, with ``ask_forced`` or when there is a choice)."""
        if self.ask_forced or self.over or self.actor != self.seat:
            return None
        legal = self.legal_actions()
        return int(legal[0]) if len(legal) == 1 else None

    def _mark_unless_forced(self) -> None:
        """A re-played decision of yours starts "recent" unless the session took it itself."""
        if self._forced_action() is None:
            self._mark_yours()

    def forced_line(self) -> dict:
        """The story line of the decision the session takes for you now: the game's words for
        the choice (a choice's ``told``, what you do, e.g. "let the attack through", else its
        text), marked as your only option."""
        d = self.table()
        c = d["choices"][0]
        told = c.get("told")
        text = f"You {told} (your only option)" if told else f"Your only option, taken for you: {c['text']}"
        return {"turn": d["turn"], "turn_word": self.turn_word, "seat": self.seat, "who": "you", "kind": "forced",
                "text": text, "minor": False}

    def _step(self, a: int) -> None:
        line = self.forced_line() if self._forced_action() == a else None
        with kernel_lock():
            self.recorder.step(a)  # IllegalActionError (state untouched) if not legal
        if line is not None:
            self.moves.append(line)
        self._take_events()

    def _take_events(self) -> None:
        with kernel_lock():
            events = list(self.engine.events(0))
        self.history.extend(events)
        turn = None
        if events:  # the turn (or round) the step happened in, as the game's events number it
            turn = getattr(events[-1], "turn", getattr(events[-1], "round", None))
        for line in self.spec.tell(self.engine, events, self.seat, self.label):
            self.moves.append({"turn": turn, "turn_word": self.turn_word, **line})  # a hook's own turn wins

    # ------------------------------------------------------------------ views
    def table(self) -> dict:
        """The table as your seat may see it: the game's description (``core.table``)."""
        with kernel_lock():
            return self.spec.describe_table(self.engine, 0, self.seat, getattr(self, "history", ()))

    def choices(self) -> list[dict]:
        """Your legal decisions in words, numbered from 1 (empty when you are not asked)."""
        if not self.your_turn:
            return []
        return [{"number": i + 1, **c} for i, c in enumerate(self.table()["choices"])]

    def prompt(self) -> str:
        return self.table()["prompt"] if self.your_turn else ""

    def recent(self) -> list[dict]:
        """The story lines since your latest decision (yours first)."""
        return self.moves[self._mark:]

    def result(self) -> dict | None:
        """Once over: the winners, whether you won, the rewards, how the game ended and the
        standings (place, and how each player lost or finished), best place first."""
        if not self.over:
            return None
        d = self.table()
        rewards = [round(float(x), 6) for x in self.engine.rewards()[0][: self.players]]
        rows = [{**row, "name": self.label(row["seat"]), "controller": self.controllers[row["seat"]],
                 "level": self.level(row["seat"])} for row in d["standings"]]
        winners = [row["seat"] for row in rows if row["winner"]]
        return {"winners": winners, "you_won": self.seat in winners, "rewards": rewards,
                "your_reward": rewards[self.seat], "turns": d["turn"], "turn_word": d["turn_word"],
                "end": d["end"], "standings": rows}

    def view(self) -> dict:
        """The game as your seat may see it, JSON-able: the table description, what happened
        since your latest decision, the result once over, and the session's facts."""
        return {"game": self.game, "seat": self.seat, "players": self.players, "controllers": list(self.controllers),
                "levels": [self.level(q) for q in range(self.players)], "rules": self.rules.to_dict(),
                "table": self.table(), "recent": self.recent(), "result": self.result(),
                "over": self.over, "your_turn": self.your_turn, "decision_number": self.decision_number,
                "practice": self.practice, "seed": self.seed if (self.over or self.practice) else None}

    def record_text(self) -> str:
        return self.recorder.dumps()

    def save(self, path, overwrite: bool = True) -> Path:
        return self.recorder.save(path, overwrite=overwrite)
