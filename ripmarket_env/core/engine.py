"""``Engine``: the game-agnostic facade over a game's batched kernels.

Every game of the zoo keeps its state as one structured numpy array with a row per game
(its ``state``), and exposes the same small public face through these fields of a row:
``done`` (bool), ``actor`` (the seat that decides next), ``phase`` (the decision's code),
``mask`` (the legal actions of that decision, one byte per action), ``step_rewards`` and
``final_rewards`` (float per seat). The cross-game step policy lives here, once:

* one seed per game; any non-negative integer folds into the game's own 64-bit RNG seed;
* an action ``-1`` skips a game, a finished game ignores its action;
* an illegal action raises ``IllegalActionError`` naming the decision and the legal set,
  and leaves every game exactly as it was (checked for the whole batch before any step);
* rewards are paid once, on the step that ends a game;
* cloning a game copies its row byte for byte.

A game subclasses ``Engine`` and supplies the kernels through four hooks
(``_reset_rows``, ``_step_rows``, ``_encode``, ``_decode_events``) plus
``describe_action``; see ``ripmarket_env/games/ripmarket/engine.py``. The first three
run the game's batch drivers (``drivers``, core/drivers.py) unless the game overrides them.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence

import numpy as np

from ripmarket_env.core import kernels as CK
from ripmarket_env.core.dtypes import canonical

try:  # plain-Python mode (NUMBA_DISABLE_JIT=1) reads records by attribute via recarray views
    from numba.core.config import DISABLE_JIT as NO_JIT
except ImportError:  # pragma: no cover
    NO_JIT = False


def kernel_view(arr: np.ndarray) -> np.ndarray:
    """The array as the kernels take it (a recarray view in plain-Python mode)."""
    return arr.view(np.recarray) if NO_JIT else arr


#: Below this batch size the kernels run on one thread: starting threads costs more than
#: the work (a single game steps about 10x faster this way).
SERIAL_BELOW = 32


def given(x) -> str:
    """A value as an error message shows it: ``core.jsonfile.short`` (its repr, cut short;
    a huge integer by its size) and its type, e.g. ``'12' (str)``, ``True (bool)``,
    ``np.int64(-1) (numpy.int64)``."""
    from ripmarket_env.core.jsonfile import short

    t = type(x)
    return f"{short(x)} ({f'numpy.{t.__name__}' if t.__module__ == 'numpy' else t.__name__})"


def action_id(x) -> int | None:
    """``x`` as an action id (a Python int), or None when it is not an integer: Python and
    numpy integers (and 0-d integer arrays) are action ids; bools, numpy bools, floats,
    strings and anything else are not (``True`` is not action 1)."""
    if isinstance(x, (bool, np.bool_)):
        return None
    try:
        return operator.index(x)
    except TypeError:
        return None


_MESSAGE_ONLY = object()


class IllegalActionError(ValueError):
    """An action that is not legal in the game's current decision (the state is unchanged).

    An integer that is not legal reads ``illegal action 7 in game 0 (decision: ...)``; a
    value that is not an integer action id at all (``action_id`` is None: a bool, a float,
    a string, None, ...) reads ``action must be an integer action id, got '12' (str), in
    game 0 (decision: ...)``. Both go on to list the legal actions."""

    def __init__(self, game: int, action=_MESSAGE_ONLY, legal: list[int] = (), phase: str = "", describe=None):
        if action is _MESSAGE_ONLY:  # from its message alone, as a worker's error is re-raised in its parent
            super().__init__(game)  # (Gymnasium's async vector env: ``type(err)(str(err))``)
            self.game, self.action, self.legal, self.phase = None, None, [], ""
            return
        self.game = game
        self.action = action
        self.legal = legal
        self.phase = phase
        legal_txt = ", ".join(
            f"{a} ({describe(a)})" if describe else str(a) for a in legal
        ) or "none (the game is over)"
        if isinstance(action, (bool, np.bool_)):
            what = f"action must be an integer action id, not a bool, got {given(action)},"
        elif action_id(action) is None:
            what = f"action must be an integer action id, got {given(action)},"
        else:
            what = f"illegal action {action}"
        super().__init__(
            f"{what} in game {game} (decision: {phase}); legal actions: {legal_txt}. "
            "The state was not changed."
        )

    def __reduce__(self):
        """Pickled as its fields and its message (a subprocess vector env sends the error
        to its parent): the same error on the other side, its text included."""
        return _rebuilt_illegal_action, (self.game, self.action, self.legal, self.phase, str(self))


def _rebuilt_illegal_action(game, action, legal, phase, message) -> IllegalActionError:
    """``IllegalActionError`` from its pickled fields and message."""
    err = IllegalActionError.__new__(IllegalActionError)
    ValueError.__init__(err, message)
    err.game, err.action, err.legal, err.phase = game, action, legal, phase
    return err


def as_int(x, what: str, allowed: str) -> int:
    """``x`` as a Python int, or a ValueError naming ``what`` and the allowed values."""
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, np.integer)):
        raise ValueError(f"{what} must be {allowed}, got {x!r}")
    return int(x)


#: What a seed may be (R-12.4): any non-negative integer, of any size (``seed_to_u64``
#: folds it to 64 bits); the words of every seed error; the envs' ``reset`` also takes None.
SEED_ALLOWED = "a non-negative integer"
SEED_OR_NONE = f"{SEED_ALLOWED} (or None for a random seed)"


def check_seed(seed, allowed: str = SEED_ALLOWED) -> int:
    """``seed`` as a Python int, or a ValueError ``seed must be <allowed>, got <seed>``
    (R-12.4): Python and numpy integers from 0 up, of any size; negative integers, bools,
    numpy bools, floats (even ``1.0``), strings, sequences and None (unless the caller
    handles it first) are refused."""
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be {allowed}, got {given(seed)}")
    return int(seed)


def seed_to_u64(seed: int) -> int:
    """Fold any non-negative integer seed (``check_seed``) into a 64-bit game seed, the
    first state of the game's RNG: numpy's ``SeedSequence(seed)``, one uint64 word. Stable
    across runs and platforms; seeds of any size."""
    seed = check_seed(seed)
    return int(np.random.SeedSequence(seed).generate_state(1, np.uint64)[0])


def _read_only(view: np.ndarray) -> np.ndarray:
    """``view`` (a view of an engine's state) made read-only: a caller's write raises
    instead of changing the games behind the engine's back."""
    view.flags.writeable = False
    return view


def raw_rows(state: np.ndarray) -> np.ndarray:
    """The state's bytes, one row per game (padding included)."""
    return state.view(np.uint8).reshape(len(state), -1)


def copy_rows(state: np.ndarray, idx) -> np.ndarray:
    """Copy game rows byte for byte, so a clone's bytes equal the original's."""
    out = np.empty(len(idx), dtype=state.dtype)
    raw_rows(out)[:] = raw_rows(state)[idx]
    return out


class _CanonicalArray:
    """``Engine.state`` / ``Engine.tables``: whatever array is assigned is stored with its
    layout's one dtype object (``core.dtypes.canonical``), however it was made (allocated,
    cloned, determinized, loaded). Set-only: a read is a plain instance-dict read, so the
    hot paths pay nothing."""

    def __set_name__(self, owner, name: str) -> None:
        self.name = name

    def __set__(self, obj, value) -> None:
        obj.__dict__[self.name] = canonical(value)


class Engine:
    """A batch of games of one kind sharing one rules config (see the module docstring).

    Subclasses set ``state`` (the structured array), ``batch_size``, ``num_players``,
    ``num_actions``, ``obs_size``, ``phase_names`` and ``seeds`` (an object array of the
    seeds given to ``reset``) in their constructor, and implement the hooks below; the row
    hooks' defaults also read ``drivers``, ``tables``, ``cfg`` and ``_offs`` (the
    observation layout's offsets).
    """

    state: np.ndarray = _CanonicalArray()
    tables: np.ndarray = _CanonicalArray()
    batch_size: int
    num_players: int
    phase_names: Sequence[str]
    #: the phase name reported for a finished game
    over_phase: str = "game_over"

    # ------------------------------------------------------------------ hooks
    @staticmethod
    def check_args(rules, batch_size, rules_class: type, what: str):
        """A constructor's ``(rules, batch_size)``: ``rules`` (None: the default
        ``rules_class()``) must be a ``rules_class``, named ``what`` in the error;
        ``batch_size`` an integer of at least 1."""
        if rules is None:
            rules = rules_class()
        if not isinstance(rules, rules_class):
            raise TypeError(f"rules must be {what}, got {type(rules).__name__}")
        batch_size = as_int(batch_size, "batch_size", "an integer of at least 1")
        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, got {batch_size}")
        return rules, batch_size

    # The row hooks below run the game's batch drivers (``self.drivers``, core/drivers.py)
    # over ``self.state``, ``self.tables`` and ``self.cfg``: serial loops for small
    # batches, the parallel ones from ``SERIAL_BELOW`` rows on.
    def _reset_rows(self, idx: np.ndarray, seeds64: np.ndarray) -> None:
        d = self.drivers
        (d.reset_serial if len(idx) < SERIAL_BELOW else d.reset_batch)(
            kernel_view(self.state), kernel_view(self.tables), self.cfg,
            np.ascontiguousarray(idx, dtype=np.int64), seeds64)

    def _step_rows(self, actions: np.ndarray) -> None:
        d = self.drivers
        (d.step_serial if self.batch_size < SERIAL_BELOW else d.step_batch)(
            kernel_view(self.state), kernel_view(self.tables), self.cfg, actions)

    def _encode(self, viewers: np.ndarray, out: np.ndarray) -> None:
        d = self.drivers
        (d.encode_serial if self.batch_size < SERIAL_BELOW else d.encode_batch)(
            kernel_view(self.state), kernel_view(self.tables), self.cfg, viewers, self._offs, out)

    def _decode_events(self, game: int) -> list:  # pragma: no cover
        raise NotImplementedError

    def describe_action(self, action: int) -> str:  # pragma: no cover
        return str(int(action))

    @staticmethod
    def fold_seed(seed: int) -> int:
        """A ``reset`` seed as the game's RNG seed (validates it)."""
        return seed_to_u64(seed)

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
        s64 = np.array([self.fold_seed(x) for x in seeds], dtype=np.uint64)  # validates every seed first
        self._reset_rows(idx, s64)
        self.seeds[idx] = [int(x) for x in seeds]

    # ------------------------------------------------------------------ queries
    @property
    def obs_size(self) -> int:
        return self._obs_size

    def current_player(self) -> np.ndarray:
        """Seat that makes the next decision in each game (-1 for finished games)."""
        return np.where(self.state["done"], -1, self.state["actor"]).astype(np.int64)

    def phase(self) -> list[str]:
        names = self.phase_names
        return [names[p] for p in self.state["phase"]]

    def legal_mask(self) -> np.ndarray:
        """(batch, num_actions) bool: the legal actions of each game's current decision.

        A read-only view of the engine's state, not a copy: it changes with the next
        ``step`` or ``reset`` (copy it to keep it), and writing into it raises instead of
        changing the games."""
        return _read_only(self.state["mask"].view(np.bool_))

    def legal_actions(self, game: int = 0) -> list[int]:
        return [int(a) for a in np.flatnonzero(self.state["mask"][game])]

    @property
    def terminated(self) -> np.ndarray:
        """(batch,) whether each game has ended: a read-only view of the state, as
        ``legal_mask``."""
        return _read_only(self.state["done"])

    def rewards(self) -> np.ndarray:
        """Final rewards (batch, players), meaningful once a game is terminated: a
        read-only view of the state, as ``legal_mask``."""
        return _read_only(self.state["final_rewards"][:, : self.num_players])

    # ------------------------------------------------------------------ step
    def check_actions(self, actions) -> np.ndarray:
        """``actions`` as an int64 array of one action per game, or a ValueError /
        ``IllegalActionError`` (nothing is changed either way)."""
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
            with np.errstate(invalid="ignore"):
                whole = np.isfinite(a) & (np.mod(a, 1) == 0)
            if not np.all(whole):
                raise ValueError(f"actions must be integers, got {a!r}")
        a = a.astype(np.int64)
        bad = CK.first_illegal(kernel_view(self.state), a)
        if bad >= 0:
            done = bool(self.state["done"][bad])
            raise IllegalActionError(
                int(bad), int(a[bad]), self.legal_actions(int(bad)),
                self.over_phase if done else self.phase_names[self.state["phase"][bad]], self.describe_action,
            )
        return a

    def step(self, actions: Sequence[int] | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Apply one action per game; ``-1`` skips a game, finished games ignore theirs.

        Returns ``(rewards, terminated)``: rewards (batch, players) paid by this step
        (non-zero only on the step that ends a game) and the terminated flags, read-only
        views of the state as ``legal_mask`` (the next step changes them).
        Raises ``IllegalActionError`` (and changes nothing) if any action is illegal.
        """
        self._step_rows(self.check_actions(actions))
        return _read_only(self.state["step_rewards"][:, : self.num_players]), _read_only(self.state["done"])

    # ------------------------------------------------------------------ observe
    def observe(self, viewers: Sequence[int] | np.ndarray | None = None, out: np.ndarray | None = None) -> np.ndarray:
        """(batch, obs_size) float32: each game seen by one seat (default: the actor).

        Any seat may be the viewer; it sees its own hidden information and public
        information only.
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
        elif not (isinstance(out, np.ndarray) and out.dtype == np.float32 and out.flags.c_contiguous
                  and out.shape == (self.batch_size, self.obs_size)):
            raise ValueError(
                f"out must be a C-contiguous float32 array of shape ({self.batch_size}, {self.obs_size}), got "
                f"{getattr(out, 'dtype', type(out).__name__)} {getattr(out, 'shape', '')}"
            )
        self._encode(v, out)
        return out

    # ------------------------------------------------------------------ pickling
    def __setstate__(self, d: dict) -> None:
        """Unpickle (copy.deepcopy, multiprocessing, Ray): the plain ``__dict__`` update
        would bypass ``_CanonicalArray``, so the state and tables are assigned again."""
        self.__dict__.update(d)
        for name in ("state", "tables"):
            if name in d:
                setattr(self, name, d[name])

    # ------------------------------------------------------------------ clone
    def clone(self, games: Sequence[int] | None = None) -> "Engine":
        """A new Engine holding independent copies of the given games (default: all)."""
        idx = np.arange(self.batch_size) if games is None else np.asarray(games, dtype=np.int64).reshape(-1)
        twin = type(self).__new__(type(self))
        twin.__dict__.update(self.__dict__)
        twin.state = copy_rows(self.state, idx)
        twin.seeds = self.seeds[idx].copy()
        twin.batch_size = len(idx)
        return twin

    def copy_from(self, other: "Engine", dst_games, src_games=slice(None)) -> None:
        """Overwrite some of this engine's games with games of ``other`` (same rules)."""
        rows = np.arange(len(other.state))[src_games]
        raw_rows(self.state)[dst_games] = raw_rows(other.state)[rows]

    def events(self, game: int = 0) -> list:
        """What game ``game``'s latest step (or reset) did, in order: a list of the game's
        ``Event`` objects (each with ``text_for(viewer)``)."""
        game = as_int(game, "game", f"a game index in 0..{self.batch_size - 1}")
        if not 0 <= game < self.batch_size:
            raise ValueError(f"game must be a game index in 0..{self.batch_size - 1}, got {game}")
        return self._decode_events(game)
