"""A whole ``GameSpec`` from a small game: the state's public face, the engine, the
observation layout, renders, invariants, the hidden-information redraw, events and record
hooks, built from a few facts, so that a small game is its rules kernels and one call.

The zoo's three card games write these parts themselves (their tables, events and
records say much more); a small game, a variant written for an experiment, or the toy
game of the tests (``tests/toy_game.py``) takes the defaults here::

    STATE = state_dtype(max_players, num_actions, (("hand", (P, K), np.int8), ...), events=32)
    SPEC = simple_spec("my-game", "My Game", module=__name__, state=STATE, tables=..., drivers=...,
                       num_actions=..., phase_names=(...), global_pieces=(...), seat_pieces=(...), ...)

The kernels follow the core's contract (docs/ARCHITECTURE.md, "Batch drivers"): ``reset_game``,
``step_game``, ``encode_obs`` and ``seat_bits`` over one row; the rules config array ``c``
holds the player count at ``c[0]``. The rules config and engine classes made here are set on
``module`` as ``RulesConfig`` and ``Engine`` (where it has no such names), so that they
pickle. Everything here imports only the core.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from types import SimpleNamespace

import numpy as np

from ripmarket_env.core.config import RulesBase
from ripmarket_env.core.dtypes import fields_dtype
from ripmarket_env.core.engine import Engine as CoreEngine
from ripmarket_env.core.engine import kernel_view
from ripmarket_env.core.events import TurnEvent
from ripmarket_env.core.hidden import redeal_hidden
from ripmarket_env.core.spec import GameSpec, Layout, Piece

def state_dtype(max_players: int, num_actions: int, own: Sequence[tuple], events: int = 64) -> np.dtype:
    """The state dtype of a small game: the core's public face (``rng``, ``phase``,
    ``actor``, ``done``, ``n_legal``, ``steps``, ``mask``, ``step_rewards``,
    ``final_rewards`` and an event log of ``events`` rows) and the game's ``own`` fields,
    ``(name, shape, dtype)`` each. Aligned, with boolean arrays as int8, as numba reads
    it (``core.dtypes.fields_dtype``)."""
    face = [("rng", (), np.uint64), ("phase", (), np.int8), ("actor", (), np.int8), ("done", (), np.bool_),
            ("n_legal", (), np.int16), ("steps", (), np.int32), ("mask", (num_actions,), np.int8),
            ("step_rewards", (max_players,), np.float32), ("final_rewards", (max_players,), np.float32),
            ("ev", (events, 4), np.int16), ("ev_n", (), np.int16), ("ev_lost", (), np.int32)]
    return fields_dtype([(n, shape, dt, 0) for n, shape, dt in (*face, *own)])


@dataclass(frozen=True)
class Event(TurnEvent):
    """One decoded event row of a small game; ``text_for(viewer)`` asks the game's
    ``event_text(kind, seat, a, b, viewer)``, so the game decides what each seat may read."""

    texts: Callable = field(default=None, repr=False, compare=False)

    def text_for(self, viewer) -> str:
        return self.texts(self.code, self.seat, self.a, self.b, viewer)

    @property
    def code(self) -> int:
        return self.texts.codes[self.kind]

    @property
    def hidden(self) -> bool:
        return self.text_for(None) != self.text_for("god")


class TurnLog(SimpleNamespace):
    """The events of one turn (records call it a round): ``turn``, ``seat``, ``events``."""


class GameLog:
    """Follows one game: every step that took a decision closes a turn."""

    def __init__(self, engine, g: int = 0):
        self.engine, self.g, self.turns = engine, g, []

    def items(self, events) -> list:
        out = [("event", e) for e in events]
        seats = [e.seat for e in events if e.seat >= 0]
        if seats:
            log = TurnLog(turn=len(self.turns) + 1, seat=seats[0], events=list(events))
            self.turns.append(log)
            out.append(("round", log))
        return out


def _records(digest: str) -> SimpleNamespace:
    def round_line(engine, log) -> dict:
        return {"round": log.turn, "seat": log.seat, "log": [e.text_for("god") for e in log.events]}

    def result_line(engine) -> dict:
        rewards = engine.rewards()[0]
        return {"result": {"winners": [q for q in range(engine.num_players) if rewards[q] == rewards.max()],
                           "rewards": [round(float(x), 6) for x in rewards]}}

    return SimpleNamespace(
        game_log=GameLog, round_line=round_line, result_line=result_line,
        describe_action=lambda engine, a: engine.describe_action(a), cards_digest=lambda engine: digest,
        default_engine_kwargs=dict)


def simple_spec(game_id: str, title: str, *, module: str, state: np.dtype, tables: np.ndarray,
                drivers: Callable, num_actions: int, phase_names: Sequence[str], action_name: Callable[[int], str],
                global_pieces: Sequence[tuple], seat_pieces: Sequence[tuple], max_decisions: Callable,
                event_text: Callable, event_kinds: dict, min_players: int, max_players: int,
                default_players: int, seat_fields: Sequence[str] = (), hidden: Sequence[str] = (),
                hidden_counts: Sequence[str] = (), pile: tuple[str, str] = ("deck", "deck_n"),
                check: Callable | None = None, extras: dict | None = None, doc: str = "",
                web: str | None = None, legal: Callable | None = None) -> GameSpec:
    """The ``GameSpec`` of a small game (see the module docstring).

    ``global_pieces``/``seat_pieces``: ``(name, size, doc)`` of the observation, in the
    order the encoder writes them (the encoder's ``offs`` holds each global piece's offset,
    then the seat blocks' start and size). ``seat_fields``: per-seat state fields every
    seat sees (renders). ``hidden``: fields nobody but their owner sees (renders leave
    them out); ``hidden_counts``: per-seat count rows of cards in hand (``hand[q, kind]``)
    that, with the draw pile ``pile`` (its array and count fields), are redealt for the
    hidden-information check. ``check(engine, g, prev) -> list[str]``: the game's own
    invariants, after the core's. ``event_text(code, seat, a, b, viewer)``: an event's
    words for ``viewer`` (a seat, ``None`` for the public, ``"god"``). ``web``: the path of
    the game's page plugin (``GameSpec.web``), if it has one. ``legal(r)``: the kernel that
    writes a row's ``mask`` and ``n_legal`` for its ``actor``, run on a redealt row (a
    game without it must have masks that the redeal cannot change)."""
    ids = tuple(range(num_actions))
    phases = tuple(phase_names)

    def _check_players(self):
        n = self.num_players
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or not min_players <= n <= max_players:
            raise ValueError(f"rules config: num_players={n!r} is not allowed; allowed: an integer from "
                             f"{min_players} to {max_players}")

    Rules = dataclass(frozen=True)(type("RulesConfig", (RulesBase,), {
        "__annotations__": {"num_players": int}, "num_players": default_players,
        "__post_init__": _check_players, "__module__": module}))

    pieces = tuple(Piece(n, s, "global", d) for n, s, d in global_pieces) + \
        tuple(Piece(n, s, "seat", d) for n, s, d in seat_pieces)
    layout = Layout.of(pieces, max_players)
    offs = np.array([layout.offsets[p.name] for p in pieces[:len(global_pieces)]]
                    + [layout.seat_start, layout.seat_size], np.int64)
    texts = _Texts(event_text, event_kinds)

    class Engine(CoreEngine):
        __module__ = module
        phase_names = phases

        def __init__(self, rules=None, batch_size: int = 1):
            rules, batch_size = self.check_args(rules, batch_size, Rules, f"a {title} RulesConfig")
            self.rules, self.batch_size, self.num_players = rules, batch_size, rules.num_players
            self.num_actions, self.obs_layout, self._offs, self._obs_size = num_actions, layout, offs, layout.size
            self.state = np.zeros(batch_size, state)
            self.state["done"] = True
            self.tables = tables.copy()
            self.cfg = np.array([rules.num_players], np.int64)
            self.seeds = np.full(batch_size, -1, dtype=object)
            self.drivers = drivers(state, tables.dtype)

        def describe_action(self, action: int) -> str:
            return action_name(int(action))

        def _decode_events(self, game: int) -> list:
            r = self.state[game]
            return [Event(event_kinds.get(int(k), str(int(k))), int(s), int(a), int(b), int(r["steps"]), False,
                          texts) for k, s, a, b in r["ev"][:int(r["ev_n"])]]

    def render_text(engine, g=0, viewer=None, god=False) -> str:
        r, P = engine.state[g], engine.num_players
        lines = [f"{title}: {P} players" + ("; game over" if r["done"] else f"; P{int(r['actor'])} to move")]
        for q in range(P):
            facts = [f"{f} {r[f][q].tolist()}" for f in seat_fields]
            if god or viewer == q:
                facts += [f"{f} {r[f][q].tolist()}" for f in hidden if r[f].ndim > 1 and len(r[f]) > q]
            lines.append(f"P{q}" + (" (you)" if viewer == q else "") + ": " + ", ".join(facts))
        if god:
            lines += [f"{f}: {r[f].tolist()}" for f in hidden if f not in hidden_counts]
        if not r["done"] and (god or viewer == int(r["actor"])):
            lines.append("legal: " + ", ".join(action_name(a) for a in ids if r["mask"][a]))
        return "\n".join(lines)

    def render_rgb(engine, g=0, viewer=None, god=False) -> np.ndarray:
        r, P = engine.state[g], engine.num_players
        img = np.full((20 * P + 20, 200, 3), 245, np.uint8)
        top = max(1.0, *(float(r[f][:P].max()) for f in seat_fields)) if seat_fields else 1.0
        for q in range(P):
            for k, f in enumerate(seat_fields):
                w = int(180 * float(r[f][q]) / top)
                img[10 + 20 * q + 6 * k: 14 + 20 * q + 6 * k, 10:10 + w] = (40 + 60 * k, 90, 200 - 50 * k)
            if not r["done"] and q == int(r["actor"]):
                img[10 + 20 * q: 28 + 20 * q, 2:6] = (200, 40, 40)
        return img

    def check_game(engine, g=0, prev=None) -> list[str]:
        r, out = engine.state[g], []
        legal = int(np.count_nonzero(r["mask"]))
        if legal != int(r["n_legal"]):
            out.append(f"n_legal {int(r['n_legal'])} but {legal} legal actions in the mask")
        if bool(r["done"]) != (legal == 0):
            out.append("a finished game with legal actions, or a live one without" if legal else "no legal action")
        if not bool(r["done"]) and not 0 <= int(r["actor"]) < engine.num_players:
            out.append(f"actor {int(r['actor'])} is not a seat")
        return out + (list(check(engine, g, prev)) if check is not None else [])

    def scramble_hidden(engine, g, viewer, rng):
        twin = engine.clone([g])
        r = twin.state[0]
        others = [q for q in range(engine.num_players) if q != viewer]
        deck, count = pile
        for name in hidden_counts:
            hands = r[name].copy()
            n = int(r[count])
            rest = redeal_hidden(rng, r[deck][:n], hands, hands.sum(axis=1), others)
            r[name] = hands
            r[deck][:n] = rest
        r["rng"] = np.uint64(rng.integers(0, 2**63))
        if legal is not None:
            legal(kernel_view(twin.state)[0])
        return twin

    doc = doc or (__import__(module, fromlist=["__doc__"]).__doc__ or "")
    spec = GameSpec(
        id=game_id, title=title, env_name=game_id.replace("-", "_") + "_v0",
        gym_id="".join(w.title() for w in game_id.split("-")) + "-v0", rules_version="1",
        min_players=min_players, max_players=max_players, default_players=default_players,
        reward_range=(-1.0, 1.0), rules_class=Rules, engine_class=Engine,
        fast=drivers(state, tables.dtype), batch=drivers(state, tables.dtype), phase_names=tuple(phase_names),
        observation_pieces=lambda engine: layout.pieces,
        observation_bounds=lambda engine: (np.zeros(layout.size, np.float32), np.ones(layout.size, np.float32)),
        action_names=lambda engine: [action_name(a) for a in ids], max_decisions=max_decisions,
        render_text=render_text, render_rgb=render_rgb, check_invariants=check_game,
        records=_records(f"{game_id}-{Rules.__name__}-1"), doc=doc, extras=dict(extras or {}), web=web,
        scramble_hidden=scramble_hidden)
    Rules.spec = Engine.spec = spec
    _importable(module, Rules, Engine)
    return spec


def _importable(module: str, *classes: type) -> None:
    """Make ``module.<name>`` find each class, as pickle looks it up (a rules config, an
    engine and anything holding them cross processes: Ray, subprocess vector envs): the
    class is named by its plain name and set on the module under it, unless the module
    already has that name (it then keeps its own; pickling the class would refuse)."""
    where = sys.modules.get(module)
    for cls in classes:
        cls.__qualname__ = cls.__name__
        if where is not None and not hasattr(where, cls.__name__):
            setattr(where, cls.__name__, cls)


class _Texts:
    """``event_text`` with the codes of the kinds (an ``Event`` keeps the kind's name)."""

    def __init__(self, fn: Callable, kinds: dict):
        self.fn, self.codes = fn, {name: code for code, name in kinds.items()}

    def __call__(self, code, seat, a, b, viewer) -> str:
        return self.fn(code, seat, a, b, viewer)


__all__ = ["Event", "GameLog", "simple_spec", "state_dtype"]
