"""``Engine``: the typed facade over the batched kernels.

>>> from ripmarket_env.engine import Engine, RulesConfig
>>> eng = Engine(RulesConfig(num_players=4), batch_size=2)
>>> eng.reset([1, 2])
>>> eng.current_player()          # who decides next, per game
>>> eng.legal_mask()              # (2, num_actions) bool
>>> rewards, terminated = eng.step([a0, a1])
>>> obs = eng.observe([0, 3])     # game 0 seen by seat 0, game 1 by seat 3
>>> twin = eng.clone([1])         # an independent Engine holding a copy of game 1

Everything is batch-first: one row per game. Each game carries its own RNG: the same
seed and actions give the same game whatever the batch size, row or global RNG state.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..cards.loader import CardDB, default_cards
from . import kernels as K
from .actions import ActionTable
from .config import RulesConfig
from .observation import encode_batch, encode_serial, layout
from .state import PHASE_NAMES, allocate, tables_from_db

try:  # plain-Python mode (NUMBA_DISABLE_JIT=1) reads records by attribute via recarray views
    from numba.core.config import DISABLE_JIT as _NO_JIT
except ImportError:  # pragma: no cover
    _NO_JIT = False


def _k(arr: np.ndarray) -> np.ndarray:
    return arr.view(np.recarray) if _NO_JIT else arr


#: Below this batch size the kernels run on one thread: starting threads costs more than
#: the work (a single game steps about 10x faster this way).
SERIAL_BELOW = 32


class IllegalActionError(ValueError):
    """An action that is not legal in the game's current decision (R-12.2)."""

    def __init__(self, game: int, action: int, legal: list[int], phase: str, describe=None):
        self.game = game
        self.action = action
        self.legal = legal
        self.phase = phase
        legal_txt = ", ".join(
            f"{a} ({describe(a)})" if describe else str(a) for a in legal
        ) or "none (the game is over)"
        super().__init__(
            f"illegal action {action} in game {game} (decision: {phase}); legal actions: {legal_txt}. "
            "The state was not changed."
        )


def _as_int(x, what: str, allowed: str) -> int:
    """``x`` as a Python int, or a ValueError naming ``what`` and the allowed values."""
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, np.integer)):
        raise ValueError(f"{what} must be {allowed}, got {x!r}")
    return int(x)


def seed_to_u32(seed: int) -> int:
    """Fold any non-negative integer seed into the engine's 32-bit game seed (stable across runs)."""
    seed = _as_int(seed, "seed", "a non-negative integer")
    if seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed}")
    return int(np.random.SeedSequence(seed).generate_state(1, np.uint32)[0])


def _raw(state: np.ndarray) -> np.ndarray:
    """The state's bytes, one row per game (padding included)."""
    return state.view(np.uint8).reshape(len(state), -1)


def _copy_rows(state: np.ndarray, idx) -> np.ndarray:
    """Copy game rows byte for byte, so a clone's bytes equal the original's."""
    out = np.empty(len(idx), dtype=state.dtype)
    _raw(out)[:] = _raw(state)[idx]
    return out


class Engine:
    """A batch of R.I.P. Market games sharing one rules config and card database."""

    def __init__(self, rules: RulesConfig | None = None, batch_size: int = 1, cards: CardDB | None = None):
        if rules is None:
            rules = RulesConfig()
        if not isinstance(rules, RulesConfig):
            raise TypeError(f"rules must be a RulesConfig, got {type(rules).__name__}")
        batch_size = _as_int(batch_size, "batch_size", "an integer of at least 1")
        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, got {batch_size}")
        self.rules = rules
        self.cards = cards if cards is not None else default_cards()
        self.batch_size = int(batch_size)
        self.num_players = rules.num_players
        self.tables = tables_from_db(self.cards)
        self.cfg = rules.to_array()
        self.actions = ActionTable(self.cards.n_living, self.cards.n_shadow)
        self.obs_layout = layout(self.cards.n_living, self.cards.n_shadow)
        self._offs = self.obs_layout.offset_array()
        self.state: np.ndarray = allocate(self.batch_size, self.cards)
        self.seeds = np.full(self.batch_size, -1, dtype=object)  # Python ints: any size

    # ------------------------------------------------------------------ sizes
    @property
    def num_actions(self) -> int:
        return self.actions.size

    @property
    def obs_size(self) -> int:
        return self.obs_layout.size

    # ------------------------------------------------------------------ reset
    def reset(self, seeds: Sequence[int] | int, games: Sequence[int] | None = None) -> None:
        """Start new games: one seed per game (all games, or the rows in ``games``)."""
        idx = np.arange(self.batch_size) if games is None else np.asarray(games, dtype=np.int64).reshape(-1)
        if np.isscalar(seeds):
            seeds = [seeds] if len(idx) == 1 else None
            if seeds is None:
                raise ValueError("reset needs one seed per game")
        seeds = list(seeds)
        if len(seeds) != len(idx):
            raise ValueError(f"reset got {len(seeds)} seeds for {len(idx)} games; give one seed per game")
        if len(idx) and (idx.min() < 0 or idx.max() >= self.batch_size):
            raise ValueError(f"game index out of range 0..{self.batch_size - 1}")
        s32 = np.array([seed_to_u32(x) for x in seeds], dtype=np.int64)  # validates every seed first
        seeds = [int(x) for x in seeds]
        (K.reset_serial if len(idx) < SERIAL_BELOW else K.reset_batch)(
            _k(self.state), _k(self.tables), self.cfg, idx, s32
        )
        self.seeds[idx] = seeds

    # ------------------------------------------------------------------ queries
    def current_player(self) -> np.ndarray:
        """Seat that makes the next decision in each game (-1 for finished games)."""
        return np.where(self.state["done"], -1, self.state["actor"]).astype(np.int64)

    def phase(self) -> list[str]:
        return [PHASE_NAMES[p] for p in self.state["phase"]]

    def legal_mask(self) -> np.ndarray:
        """(batch, num_actions) bool: the legal actions of each game's current decision."""
        return self.state["mask"].view(np.bool_)

    def legal_actions(self, game: int = 0) -> list[int]:
        return [int(a) for a in np.flatnonzero(self.state["mask"][game])]

    @property
    def terminated(self) -> np.ndarray:
        return self.state["done"]

    def rewards(self) -> np.ndarray:
        """Final rewards (batch, players), meaningful once a game is terminated."""
        return self.state["final_rewards"][:, : self.num_players]

    # ------------------------------------------------------------------ step
    def step(self, actions: Sequence[int] | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Apply one action per game; ``-1`` skips a game, finished games ignore theirs.

        Returns ``(rewards, terminated)``: rewards (batch, players) paid by this step
        (non-zero only on the step that ends a game) and the terminated flags.
        Raises ``IllegalActionError`` (and changes nothing) if any action is illegal.
        """
        a = np.asarray(actions)
        if a.dtype.kind not in "iuf":
            raise ValueError(
                f"actions must be integers (one per game, -1 to skip a game), got {list(np.ravel(a))!r}"
            )
        if a.shape != (self.batch_size,):
            raise ValueError(
                f"step needs one action per game: expected shape ({self.batch_size},), got {a.shape}"
            )
        if not np.issubdtype(a.dtype, np.integer):
            if not np.all(np.mod(a, 1) == 0):
                raise ValueError(f"actions must be integers, got {a!r}")
        a = a.astype(np.int64)
        bad = K.first_illegal(_k(self.state), a)
        if bad >= 0:
            raise IllegalActionError(
                int(bad), int(a[bad]), self.legal_actions(int(bad)), PHASE_NAMES[self.state["phase"][bad]],
                lambda x: self.actions.describe(x, self.cards),
            )
        (K.step_serial if self.batch_size < SERIAL_BELOW else K.step_batch)(
            _k(self.state), _k(self.tables), self.cfg, a
        )
        return self.state["step_rewards"][:, : self.num_players], self.state["done"]

    # ------------------------------------------------------------------ observe
    def observe(self, viewers: Sequence[int] | np.ndarray | None = None, out: np.ndarray | None = None) -> np.ndarray:
        """(batch, obs_size) float32: each game seen by one seat (default: the actor).

        Any seat may be the viewer; it sees its own hand and public information only.
        """
        if viewers is None:
            v = np.maximum(self.state["actor"].astype(np.int64), 0)
        else:
            v = np.asarray(viewers).reshape(-1)
            if v.dtype.kind not in "iu":
                raise ValueError(f"viewer seats must be integers in 0..{self.num_players - 1}, got {v.tolist()!r}")
            v = v.astype(np.int64)
            if v.shape != (self.batch_size,):
                raise ValueError(f"observe needs one viewer seat per game ({self.batch_size})")
            if v.min() < 0 or v.max() >= self.num_players:
                raise ValueError(f"viewer seats must be in 0..{self.num_players - 1}")
        if out is None:
            out = np.empty((self.batch_size, self.obs_size), dtype=np.float32)
        (encode_serial if self.batch_size < SERIAL_BELOW else encode_batch)(
            _k(self.state), _k(self.tables), self.cfg, v, self._offs, out
        )
        return out

    # ------------------------------------------------------------------ clone
    def clone(self, games: Sequence[int] | None = None) -> "Engine":
        """A new Engine holding independent copies of the given games (default: all)."""
        idx = np.arange(self.batch_size) if games is None else np.asarray(games, dtype=np.int64).reshape(-1)
        twin = Engine.__new__(Engine)
        twin.__dict__.update(self.__dict__)
        twin.state = _copy_rows(self.state, idx)
        twin.seeds = self.seeds[idx].copy()
        twin.batch_size = len(idx)
        return twin

    def copy_from(self, other: "Engine", dst_games, src_games=slice(None)) -> None:
        """Overwrite some of this engine's games with games of ``other`` (same rules)."""
        rows = np.arange(len(other.state))[src_games]
        self.state.view(np.uint8).reshape(len(self.state), -1)[dst_games] = _raw(other.state)[rows]

    def describe_action(self, action: int) -> str:
        return self.actions.describe(int(action), self.cards)

    def events(self, game: int = 0) -> list:
        """What game ``game``'s latest step (or reset) did, in order: a list of
        ``events.Event`` (each with ``text_for(viewer)``; see ``engine/events.py``)."""
        from .events import decode

        game = _as_int(game, "game", f"a game index in 0..{self.batch_size - 1}")
        if not 0 <= game < self.batch_size:
            raise ValueError(f"game must be a game index in 0..{self.batch_size - 1}, got {game}")
        return decode(self, game)
