"""The games the server seats, one ``GameKind`` per registered game, read from its
``GameSpec`` and its agents' profile (``agents.game_agents``): no route, model or store
column is written for one game.

What a kind gives the routes:

* the player counts the rules accept (``spec.make_rules`` tried at every count from
  ``min_players`` to ``max_players``), the bots that may sit at its tables, their
  difficulty labels and the default line-up (``agents.default_lineup``);
* the setup variants a person may choose (``rules_class.setup_fields``: JSON Schema
  fragments the game states; none for a game that states none), checked by the rules
  config itself before a session is made;
* ``make``: a play session: the one ``TableSession`` of ``app/session.py`` for every game,
  which draws any game from its table description;
* ``view``: the seat's view (``TableSession.view``: the table description, the story
  since the seat's latest decision, the result);
* ``record``: the game record (JSON lines).
"""

from __future__ import annotations

import functools
import inspect
from dataclasses import dataclass
from typing import Any

import numpy as np


class SetupRefused(ValueError):
    """Settings a game cannot be set up with (one line: what was wrong, what is allowed)."""


@dataclass
class GameKind:
    spec: Any
    session_class: type

    # ------------------------------------------------------------------ facts
    @property
    def id(self) -> str:
        return self.spec.id

    @property
    def title(self) -> str:
        return self.spec.title

    @functools.cached_property
    def player_counts(self) -> list[int]:
        out = []
        for p in range(self.spec.min_players, self.spec.max_players + 1):
            try:
                self.spec.make_rules(p)
            except (TypeError, ValueError):
                continue
            out.append(p)
        return out

    @functools.cached_property
    def engine(self):
        """A one-game engine at the default player count (its observation bounds and
        action names are the same at every count)."""
        return self.spec.make_engine(self.spec.make_rules(self.spec.default_players))

    @functools.cached_property
    def observation_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        low, high = self.spec.observation_bounds(self.engine)
        return np.asarray(low, np.float32), np.asarray(high, np.float32)

    @property
    def num_actions(self) -> int:
        return int(self.engine.num_actions)

    def describe_action(self, a: int) -> str:
        return str(self.engine.describe_action(int(a)))

    @functools.cached_property
    def setup_fields(self) -> dict[str, dict]:
        """The rules fields a person may choose at setup (``rules_class.setup_fields``), of
        those the session can be given: all when it takes ``rules``, else the ones it takes
        by name."""
        fields = dict(getattr(self.spec.rules_class, "setup_fields", {}) or {})
        params = inspect.signature(self.session_class).parameters
        if "rules" in params:
            return fields
        return {k: v for k, v in fields.items() if k in params}

    @functools.cached_property
    def setup_values(self) -> dict[int, dict[str, list]]:
        """Per player count, the setup fields that do not accept every value of their
        fragment there, with the values they do accept: each value tried alone with the
        rules config and (for fields of at most 64 values) a one-game engine, which
        checks what the config cannot (a deal larger than the deck)."""
        out: dict[int, dict[str, list]] = {}
        for p in self.player_counts:
            limited = {}
            for name, frag in self.setup_fields.items():
                if "enum" in frag:
                    values = list(frag["enum"])
                elif frag.get("type") == "boolean":
                    values = [True, False]
                elif frag.get("type") == "integer":
                    values = list(range(int(frag["minimum"]), int(frag["maximum"]) + 1))
                else:
                    continue
                ok = [v for v in values if self._accepts(p, {name: v}, engine=len(values) <= 64)]
                if ok != values:
                    limited[name] = ok
            out[p] = limited
        return out

    @functools.cached_property
    def setup_defaults(self) -> dict[int, dict[str, Any]]:
        """Per player count, the value each setup field takes when a game leaves it out
        (the rules config's own default at that count; None when it has none)."""
        out: dict[int, dict[str, Any]] = {}
        for p in self.player_counts:
            cfg = self.spec.make_rules(p)
            out[p] = {name: _plain(getattr(cfg, name, None)) for name in self.setup_fields}
        return out

    def _accepts(self, players: int, rules: dict, engine: bool) -> bool:
        try:
            r = self.spec.make_rules(players, **rules)
            if engine:
                self.spec.make_engine(r)
        except (TypeError, ValueError):
            return False
        return True

    # ------------------------------------------------------------------ bots
    def unavailable(self) -> dict[str, str]:
        """The game's registered bots that cannot play the cards in play, with the reason:
        trained networks of other cards, such as a second-edition bot with the first
        edition's cards (``agents.policy.card_conflict``)."""
        from agents.policy import card_conflict

        out = {}
        for name in self.all_bots():
            reason = card_conflict(name, None)
            if reason is not None:
                out[name] = reason
        return out

    def all_bots(self) -> list[str]:
        import agents

        return agents.names(self.id)

    def bots(self) -> list[str]:
        """The bots that may sit at this game's tables."""
        refused = self.unavailable()
        return [n for n in self.all_bots() if n not in refused]

    def describe_bot(self, name: str) -> str:
        import agents

        return agents.describe(name, self.id)

    def level(self, name: str) -> str:
        import agents

        return agents.game_agents(self.id).level(name)

    def default_opponents(self, players: int | None = None) -> list[str]:
        """The line-up of a table set up without naming bots: one name per other seat
        (``players`` given), or each name once."""
        import agents

        playable = set(self.bots())
        seats = (players or self.spec.max_players) - 1
        lineup = agents.default_lineup(self.id, max(seats, 1), playable.__contains__)
        return lineup if players else list(dict.fromkeys(lineup))

    def slow_bots(self) -> list[str]:
        import agents

        known = set(self.all_bots())
        return [b for b in agents.game_agents(self.id).slow_bots if b in known]

    # ------------------------------------------------------------------ sessions
    def check_rules(self, players: int, rules: dict) -> None:
        """``SetupRefused`` when the rules config refuses ``rules`` at ``players``."""
        try:
            self.spec.make_rules(players, **rules)
        except (TypeError, ValueError) as exc:
            raise SetupRefused(f"rules: {str(exc).splitlines()[0][:300]}") from None

    def make(self, players: int, seat: int, opponents, seed: int | None = None, rules: dict | None = None,
             steps=(), practice: bool | None = None):
        """A session: the person at ``seat``, the bots elsewhere, up to the person's first
        decision (``steps`` re-played first). ``SetupRefused`` for settings the game refuses."""
        rules = dict(rules or {})
        self.check_rules(players, rules)
        kw: dict = {"players": players, "seat": seat, "opponents": list(opponents), "seed": seed,
                    "steps": list(steps), "practice": practice}
        if "rules" in inspect.signature(self.session_class).parameters:
            kw["rules"] = rules
        else:
            kw.update(rules)
        try:
            from ripmarket_env.app.seat_session import kernel_lock

            with kernel_lock():
                return self.session_class(**kw)
        except (TypeError, ValueError) as exc:  # each session's SetupError is a ValueError
            raise SetupRefused(str(exc).splitlines()[0][:400]) from None

    def view(self, session, game_id: str) -> dict:
        """The seat's view of ``session``, JSON-able, with ``game`` and ``game_id``."""
        from ripmarket_env.app.seat_session import kernel_lock

        with kernel_lock():
            v = dict(session.view())
        v.setdefault("practice", bool(session.practice))
        v["game"], v["game_id"] = self.id, game_id
        return v

    def record(self, session) -> str:
        if hasattr(session, "record_text"):
            return session.record_text()
        return session.recorder.dumps()


def _plain(x):
    """``x`` as JSON has it (numpy scalars as Python numbers)."""
    return x.item() if isinstance(x, np.generic) else x


def table_session_class(game: str):
    """The one ``TableSession`` (``app/session.py``) bound to ``game``: every game's play
    session (its view is the game's table description)."""
    from ripmarket_env.app.session import TableSession

    return functools.partial(TableSession, game)


@functools.lru_cache(maxsize=None)
def kinds() -> dict[str, GameKind]:
    """Every registered game, by id, in the registry's order, each played through the one
    ``TableSession``."""
    import importlib as _il

    registry = _il.import_module("ripmarket_env.games").registry()
    return {gid: GameKind(spec, table_session_class(gid)) for gid, spec in registry.items()}


def default_game() -> str:
    """The game of the server's oldest paths (``/api/games``, ``/api/bots``): the agents'
    default game."""
    import agents

    return agents.base.DEFAULT_GAME
