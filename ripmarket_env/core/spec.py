"""``GameSpec``: what the zoo knows about a game, as data.

Every game package builds one ``GameSpec`` and the registry (``ripmarket_env.games``)
lists them. The environments, the arena, the tournaments and the CLI read a game only
through its spec, so a new game gets all of them by registering (docs/ARCHITECTURE.md,
"Adding a game"). The facts follow OpenSpiel's ``GameType``/``GameInfo``: identity, player
counts, reward range, the longest game, the observation pieces and the action table;
the hooks give the game's own engine, rules config, renders and invariants.
"""

from __future__ import annotations

import dataclasses

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from ripmarket_env.core.drivers import BatchKernels, FastPath  # noqa: F401  (the spec's kernel bundles)


@dataclass(frozen=True)
class Piece:
    """One named piece of the flat observation vector."""

    name: str
    size: int
    scope: str = ""
    """Where the piece sits, e.g. "global" or "seat" (repeated per seat block)."""
    doc: str = ""


@dataclass(frozen=True)
class Layout:
    """A flat observation's pieces placed: ``"global"`` pieces at ``offsets[name]``, then
    ``seat_size``-long seat blocks from ``seat_start`` (seat pieces: ``offsets`` inside
    a block); ``size`` floats in all."""

    pieces: tuple[Piece, ...]
    offsets: dict
    seat_start: int
    seat_size: int
    size: int

    @classmethod
    def of(cls, pieces: Sequence[Piece], seats: int):
        """The pieces placed in order: the ``"global"`` ones one after the other, then
        ``seats`` blocks of the ``"seat"`` ones (every other scope counts as a seat piece)."""
        pieces = tuple(pieces)
        offsets, o = {}, 0
        for p in pieces:
            if p.scope == "global":
                offsets[p.name], o = o, o + p.size
        seat_start, so = o, 0
        for p in pieces:
            if p.scope != "global":
                offsets[p.name], so = so, so + p.size
        return cls(pieces, offsets, seat_start, so, seat_start + seats * so)

    @property
    def seats(self) -> int:
        """How many seat blocks the vector holds."""
        return (self.size - self.seat_start) // self.seat_size if self.seat_size else 0

    def named_view(self, obs: np.ndarray) -> dict:
        """One observation as a dict of its pieces: a global piece as its slice, a seat
        piece as a ``(seats, size)`` array, block k the seat k seats after the viewer."""
        out, seats = {}, self.seats
        for p in self.pieces:
            if p.scope == "global":
                out[p.name] = obs[self.slice(p.name)]
            else:
                out[p.name] = np.stack([obs[self.slice(p.name, k)] for k in range(seats)])
        return out

    def offset_array(self) -> np.ndarray:
        """The encoders' offsets: each piece's offset, in order, then seat_start and seat_size."""
        return np.array([self.offsets[p.name] for p in self.pieces] + [self.seat_start, self.seat_size], np.int64)

    def table_rows(self) -> list[tuple[str, str, str]]:
        """``(indices, name, doc)`` per piece, for the docs: global pieces at their indices,
        seat pieces as ``seat[k].name`` at their indices in block 0 plus ``seat_size``·k."""
        rows = [(f"{self.offsets[p.name]}..{self.offsets[p.name] + p.size - 1}", p.name, p.doc)
                for p in self.pieces if p.scope == "global"]
        for p in self.pieces:
            if p.scope != "global":
                s = self.seat_start + self.offsets[p.name]
                rows.append((f"{s}..{s + p.size - 1} (+{self.seat_size}·k)", f"seat[k].{p.name}", p.doc))
        return rows

    @cached_property
    def _piece(self) -> dict:
        """The pieces by name (``slice`` is called per field by the search agents' rebuilding)."""
        return {x.name: x for x in self.pieces}

    def slice(self, name: str, seat: int = 0) -> slice:
        p = self._piece[name]
        o = self.offsets[name] if p.scope == "global" else self.seat_start + seat * self.seat_size + self.offsets[name]
        return slice(o, o + p.size)


@dataclass(frozen=True)
class GameSpec:
    """The facts and hooks of one game of the zoo."""

    id: str
    """Registry id, as in ``ripmarket_env.make(id)`` and ``--game`` (``"ripmarket"``)."""
    title: str
    """The game's name for people (``"R.I.P. Market"``)."""
    env_name: str
    """PettingZoo name with version (``metadata["name"]``), e.g. ``"ripmarket_v0"``."""
    gym_id: str
    """Gymnasium id of the single-agent env, e.g. ``"RipMarket-v0"``."""
    rules_version: str
    """Version of the rules and card data; records and checkpoints carry it."""
    min_players: int
    max_players: int
    default_players: int
    reward_range: tuple[float, float]
    rules_class: type
    """Dataclass of the rules config: ``num_players`` plus the game's variants, with
    ``to_dict()``/``from_dict()``; invalid values raise a ``ValueError`` naming the field."""
    engine_class: type
    """``ripmarket_env.core.engine.Engine`` subclass, built as ``engine_class(rules, batch_size)``."""
    fast: FastPath
    """Single-game calls of the AEC env: ``reset_one(S, TB, cfg, g, seed64)``,
    ``step_one(S, TB, cfg, g, action)`` and ``status_one(S, cfg, g)`` return ``(done,
    actor, phase, seat_bits)`` (bit p of ``seat_bits``: the game's per-seat flag,
    ``seat_flag``); ``observe_one(S, TB, cfg, viewers, offsets, out)``. Usually the same
    ``core.drivers.compile_drivers`` bundle as ``batch``."""
    batch: BatchKernels
    """The batch drivers (``core.drivers``): ``step_serial``/``step_batch``,
    ``reset_serial``/``reset_batch``, ``encode_serial``/``encode_batch``, ``encode_rows``,
    ``gather``, the learner drivers with compiled random opponents and ``random_play``."""
    phase_names: Sequence[str]
    observation_pieces: Callable[[Any], Sequence[Piece]]
    """``observation_pieces(engine)``: the pieces of the flat observation, in order."""
    observation_bounds: Callable[[Any], tuple]
    """``observation_bounds(engine)``: per-feature (low, high) float32 arrays."""
    action_names: Callable[[Any], Sequence[str]]
    """``action_names(engine)``: a short description of every action id."""
    max_decisions: Callable[[Any], int]
    """``max_decisions(rules)``: an upper bound on the agent steps of one game."""
    render_text: Callable
    """``render_text(engine, g, viewer=None, god=False) -> str``."""
    render_rgb: Callable
    """``render_rgb(engine, g, viewer=None, god=False) -> (H, W, 3) uint8``."""
    check_invariants: Callable
    """``check_invariants(engine, g) -> list[str]``: the violated invariants of game g."""
    records: Any
    """The game's record hooks (a module or namespace): ``game_log(engine, g)``,
    ``round_line(engine, item)``, ``result_line(engine)``, ``describe_action(engine, a)``,
    ``cards_digest(engine)``, ``default_engine_kwargs()``, optionally ``same_line(replayed,
    recorded)`` (a line in the game's earlier words still verifies); see
    ``ripmarket_env.envs.record``."""
    seat_flag: str = ""
    """Name of the per-seat boolean that ``FastPath`` status bits carry (infos key)."""
    doc: str = ""
    """The game's page (PettingZoo convention: the AEC env's docstring)."""
    extras: dict = field(default_factory=dict)
    scramble_hidden: Callable | None = None
    """``scramble_hidden(engine, g, viewer, rng) -> Engine``: a one-game copy of game g in
    which everything seat ``viewer`` may not see is redrawn, consistently with what the
    seat has seen the others do (The Rune Market: a purchase under way can still be paid),
    its legal actions recomputed for the redrawn cards (the acting seat may be another);
    the conformance suite checks
    that the seat's observation, mask and render do not change, and that playing on in
    both games tells the seat nothing more (no forced decision shows, ``core.events``)
    (required by the suite)."""
    table: Callable | None = None
    """``table(spec, engine, g, viewer, history) -> dict``: the game's table as seat
    ``viewer`` may see it, as plain JSON-able data (seats and their public counters, the
    public cards, the viewer's hand, its legal choices in words, the standings once over);
    the schema is ``ripmarket_env.core.table``'s. ``None``: the generic description
    (``core.table.generic_table``). Read it through ``describe_table``."""

    story: Callable | None = None
    """``story(engine, events, viewer, label) -> [{"seat", "who", "kind", "text", "minor"}]``:
    the game's events (``Event`` objects, in order) told as moves in sentences for seat
    ``viewer`` (``label(q)`` names a seat), revealing nothing the seat may not know.
    ``None``: one line per event, its ``text_for(viewer)`` (``core.table.event_lines``)."""

    web: str | None = None
    """The path of the game's client-side table plugin (a JavaScript file, by convention
    ``games/<pkg>/web/table.js``): the generic web page loads it and calls its hooks where
    the game's table truly differs from the generic drawing (``docs/SERVER.md``, "A game's
    page"). ``None``: the generic page draws the table description alone."""

    def tell(self, engine, events, viewer: int, label) -> list[dict]:
        """The story lines of ``events`` for ``viewer``: the ``story`` hook, or one per event."""
        from ripmarket_env.core.table import event_lines

        return (self.story or event_lines)(engine, events, viewer, label)

    def describe_table(self, engine, g: int = 0, viewer: int | None = None, history=()) -> dict:
        """Game ``g`` described for ``viewer`` (``core.table.describe``): the ``table`` hook
        or the generic description."""
        from ripmarket_env.core.table import describe

        return describe(self, engine, g, viewer, history)

    def __post_init__(self) -> None:
        _BUILT[self.id] = self

    def no_card_files(self) -> str:
        """Why ``--cards`` is refused for a game without ``card_files`` (one line; a game with
        a card reference says that its card files can still be read and checked)."""
        check = (f"; `ripmarket cards --game {self.id} --file FILE` reads and checks a card file of its format"
                 if "card_reference" in (self.extras or {}) else "")
        return f"{self.title} plays only its packaged cards (no --cards: its bots are built on them){check}"

    # Hooks of the evaluation tools (``eval``, ``ripmarket bench``). Each is optional: a game
    # that gives none gets the generic default named here.
    card_files: Any = None
    """The game's card files (``--cards``), if it has any: a namespace (``lazy_module``) with
    ``load(path)`` (a card database with a ``digest``, over its cards as first printed, and a
    ``printing_digest``, as they read now: ``core.errata``; a bad file raises ``error``, the
    game's exception class), ``resolve(path) -> Path`` (a packaged edition's name such as
    ``first-edition`` included) and ``default()``. Engines take the database as ``cards=``,
    and so do the agents that read cards. None: the game plays its packaged cards only."""
    next_first_players: Callable | None = None
    """Match play (a game whose ``extras["reset_options"]`` takes a first player):
    ``next_first_players(engine, winners) -> list[int]``, the seat that starts the next game
    of each game of the batch. None: the lowest-numbered winner (``first_players_of``)."""
    balance: Any = None
    """The game's own balance analysis (``eval.balance``), a namespace (``lazy_module``):
    ``OBSERVER`` ("module:factory", a tournament observer whose ``game_record`` adds the
    game's figures to each game's record, or None), ``analyze(games, players, context) ->
    dict`` (``context``: ``cards``, the card database in play or None, and ``generic``,
    the generic figures) and ``markdown(result) -> str``; optionally ``plots(result, out)``,
    ``print_summary(result, console)``, ``diff_results(a, b)``/``diff_markdown``/
    ``print_diff`` and ``targets_markdown(a, cards_a, b=None, names=...)``. None: the generic
    report (win rates by seat position and by agent, game length)."""
    table_keys: Callable | None = None
    """``table_keys(observations) -> array of str``: the table each observation row (the
    game's flat observation, any seat's) was seen at, read from the observation alone: the
    player count as ``"<N>p"``, then the table's variants that change the game, each as
    ``-<value>`` (Black Market: ``"4p-ffa"``, ``"6p-teams"``). A trained bot of the game
    plays a row with the network of its most specific specialist (``<name>-at-<key>.zip``,
    where the row's key is that key or starts with it and a ``-``: ``agents.policy``).
    Read it through ``observation_tables``. None: one table (the key ``""``: every row is
    the default network's)."""
    bench: dict = field(default_factory=dict)
    """``ripmarket bench``'s figures of the game: ``"engine"``, the engine's throughput
    targets (dicts of ``players``, ``batch``, ``observations``, ``steps_per_sec``);
    ``"aec_players"``, the table of the AEC comparison with texas_holdem_v4 (default: the
    game's ``default_players``); ``"vector"``, the vector env's target (``players``,
    ``num_envs``, ``learner_steps_per_sec``). Each missing key: no target."""

    def make_rules(self, num_players: int | None = None, rules=None, **fields):
        """The rules config from ``rules`` (a config or a dict of its fields) and/or
        ``num_players`` and keyword fields; a ``ValueError`` names what disagrees."""
        R = self.rules_class
        if fields and dataclasses.is_dataclass(R):
            known = [f.name for f in dataclasses.fields(R) if f.init and f.name != "num_players"]
            unknown = sorted(set(fields) - set(known))
            if unknown:
                raise TypeError(f"{', '.join(map(repr, unknown))}: not an option of {self.title} "
                                f"(rule fields: {', '.join(known)})")
        if rules is None:
            return R(num_players=self.default_players if num_players is None else num_players, **fields)
        if fields:
            raise ValueError(
                "give the rules either as rules=... or as keyword fields, not both "
                f"(got rules and {', '.join(sorted(fields))})"
            )
        if isinstance(rules, dict):
            rules = R.from_dict(rules)
        if not isinstance(rules, R):
            raise TypeError(f"rules must be a {R.__name__} or a dict of its fields, got {type(rules).__name__}")
        if num_players is not None and num_players != rules.num_players:
            raise ValueError(
                f"num_players={num_players} disagrees with rules.num_players={rules.num_players}; give one of them"
            )
        return rules

    def make_engine(self, rules=None, batch_size: int = 1, **kwargs):
        return self.engine_class(rules if rules is not None else self.rules_class(), batch_size, **kwargs)


#: Every spec built in this process, by game id: the layers that may not import the registry
#: (the agents) find a game loaded by the layers above through ``built``.
_BUILT: dict[str, "GameSpec"] = {}


def built(game_id: str) -> "GameSpec | None":
    """The spec of ``game_id`` if a game package or plugin has built it in this process."""
    return _BUILT.get(game_id)


@dataclass(frozen=True)
class lazy_hook:  # noqa: N801  (used like a function: a hook)
    """A hook that imports ``module`` when first called and calls its ``name`` (a game's
    renders and invariants load only when used); it pickles by the two names."""

    module: str
    name: str

    def __call__(self, *args, **kwargs):
        from importlib import import_module

        return getattr(import_module(self.module), self.name)(*args, **kwargs)


@dataclass(frozen=True)
class lazy_module:  # noqa: N801  (a hook, like lazy_hook)
    """A namespace hook: attribute ``x`` is ``module.x``, the module imported on first use
    (a game's balance analysis loads only when a balance runs); it pickles by the name."""

    module: str

    def __getattr__(self, name: str):
        if name.startswith("__") or name == "module":
            raise AttributeError(name)
        from importlib import import_module

        return getattr(import_module(self.module), name)

    def has(self, name: str) -> bool:
        """Whether the module defines ``name``."""
        try:
            getattr(self, name)
        except AttributeError:
            return False
        return True


def observation_tables(spec: GameSpec, observations) -> np.ndarray:
    """The table key of each observation row (``spec.table_keys``; ``""`` for every row of a
    game that gives no hook)."""
    obs = np.asarray(observations)
    if spec.table_keys is None:
        return np.full(len(obs), "", dtype=object)
    return np.asarray(spec.table_keys(obs), dtype=object)


def first_players_of(winners) -> list[int]:
    """The generic match-play rule: each game's next game starts with its lowest-numbered
    winner (seat 0 of a game without one)."""
    return [int(np.argmax(np.asarray(w))) for w in winners]


def next_first_players(spec: GameSpec, engine, winners) -> list[int]:
    """Who starts each game's next game of a match: the game's ``next_first_players`` hook,
    else ``first_players_of``."""
    hook = spec.next_first_players
    return [int(x) for x in hook(engine, winners)] if hook is not None else first_players_of(winners)


def game_hooks(package: str, package_file: str) -> dict:
    """The ``GameSpec`` fields every game package fills the same way, as keyword arguments:
    ``render_text``/``render_rgb`` from ``<package>.render``, ``check_invariants`` (its
    ``check_game``) and ``scramble_hidden`` from ``<package>.invariants``, both loaded on
    first use; ``table`` (its ``describe``) from ``<package>.table`` when the package has a
    ``table.py``, ``story`` likewise from ``<package>.story``; ``web``, the page plugin
    ``web/table.js`` beside ``package_file`` when there is one; ``action_names`` from the engine's ``describe_action``; ``doc``, the
    ``README.md`` beside ``package_file`` (empty if there is none)."""
    from pathlib import Path

    readme = Path(package_file).with_name("README.md")
    table = Path(package_file).with_name("table.py").is_file()
    story = Path(package_file).with_name("story.py").is_file()
    web = Path(package_file).with_name("web") / "table.js"
    return {
        "web": str(web) if web.is_file() else None,
        "story": lazy_hook(f"{package}.story", "story") if story else None,
        "table": lazy_hook(f"{package}.table", "describe") if table else None,
        "render_text": lazy_hook(f"{package}.render", "render_text"),
        "render_rgb": lazy_hook(f"{package}.render", "render_rgb"),
        "check_invariants": lazy_hook(f"{package}.invariants", "check_game"),
        "scramble_hidden": lazy_hook(f"{package}.invariants", "scramble_hidden"),
        "action_names": lambda engine: [engine.describe_action(a) for a in range(engine.num_actions)],
        "doc": readme.read_text(encoding="utf-8") if readme.is_file() else "",
    }
