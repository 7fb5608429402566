"""``GameSpec``: what the zoo knows about a game, as data.

Every game package builds one ``GameSpec`` and the registry (``ripmarket_env.games``)
lists them. The environments, the arena, the tournaments and the CLI read a game only
through its spec, so a new game gets all of them by registering (docs/ARCHITECTURE.md,
"Adding a game"). The facts follow OpenSpiel's ``GameType``/``GameInfo``: identity, player
counts, reward range, the longest game, the observation pieces and the action table;
the hooks give the game's own engine, rules config, renders and invariants.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Piece:
    """One named piece of the flat observation vector."""

    name: str
    size: int
    scope: str = ""
    """Where the piece sits, e.g. "global" or "seat" (repeated per seat block)."""
    doc: str = ""


@dataclass(frozen=True)
class FastPath:
    """Single-game kernels for the AEC env's hot loop (one compiled call per step).

    ``reset_one(S, TB, cfg, g, seed64)``, ``step_one(S, TB, cfg, g, action)`` and
    ``status_one(S, cfg, g)`` return ``(done, actor, phase, seat_bits)`` where bit p of
    ``seat_bits`` is the game's per-seat flag (``GameSpec.seat_flag``);
    ``observe_one(S, TB, cfg, viewers, offsets, out)`` encodes observations.
    """

    reset_one: Callable
    step_one: Callable
    status_one: Callable
    observe_one: Callable


@dataclass(frozen=True)
class BatchKernels:
    """The game's compiled batch kernels, as the vector and single-agent envs call them.

    ``step_serial``/``step_batch(S, TB, cfg, actions)``, ``reset_serial``/``reset_batch(S,
    TB, cfg, idx, seeds64)``, ``encode_serial``/``encode_batch(S, TB, cfg, viewers, offs,
    out)``, ``encode_rows(S, TB, cfg, rows, viewers, offs, out)``, ``gather(S, TB, cfg,
    rows, offs, viewers, obs, masks)``; the learner drivers with compiled random opponents
    (``learner_step_serial``/``_parallel``, ``learner_reset_serial``/``_parallel``,
    ``random_opponents_one``). Deal seeds come from ``core.seeds``. ``max_redeals``: deals
    tried before a learner gets a decision.
    """

    step_serial: Callable
    step_batch: Callable
    reset_serial: Callable
    reset_batch: Callable
    encode_serial: Callable
    encode_batch: Callable
    encode_rows: Callable
    gather: Callable
    learner_step_serial: Callable
    learner_step_parallel: Callable
    learner_reset_serial: Callable
    learner_reset_parallel: Callable
    random_opponents_one: Callable
    max_redeals: int = 100


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
    batch: BatchKernels
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
    ``cards_digest(engine)``, ``default_engine_kwargs()``; see ``ripmarket_env.envs.record``."""
    seat_flag: str = ""
    """Name of the per-seat boolean that ``FastPath`` status bits carry (infos key)."""
    doc: str = ""
    """The game's page (PettingZoo convention: the AEC env's docstring)."""
    extras: dict = field(default_factory=dict)

    def make_rules(self, num_players: int | None = None, rules=None, **fields):
        """The rules config from ``rules`` (a config or a dict of its fields) and/or
        ``num_players`` and keyword fields; a ``ValueError`` names what disagrees."""
        R = self.rules_class
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
