"""What a play session of any game of the zoo shares: one recorded game, one person's seat.

A session subclass sets ``self.recorder`` (a one-game ``Recorder``), ``self.engine`` (its
engine), ``self.seat`` (the person's seat) and ``self.bots`` (seat -> agent), and defines
``_step(action)`` (take one decision, append what it caused to ``self.moves``) and
``label(seat)``; ``self._mark`` is where in ``moves`` the ones since the person's latest
decision begin. ``SeatSession`` then gives the game's state as the session reads it, the
person's decision (``act``), the bots' play up to the person's next decision, and the
re-play of a stored game's actions (``replay``: how a server brings a game back).
Used by the session of every game (``session.TableSession``: the terminal game and the
web page). A subclass may take the person's forced decisions itself (``_forced_action``):
``run_bots`` then goes on past them.
"""

from __future__ import annotations

import secrets
import threading
from collections.abc import Sequence

import numpy as np

MAX_BOT_STEPS = 100_000
SECRET_SEED_BITS = 128


# numba's parallel kernels may run on a threading layer that is not thread-safe (the
# "workqueue" layer when neither OpenMP nor TBB is present): every call into the engine
# kernels, and every bot decision (a bot may call kernels of its own), takes this lock.
# The calls are short (microseconds to milliseconds), so games still interleave freely.
KERNEL_LOCK = threading.RLock()


def kernel_lock():
    """The server's lock around every call into numba kernels (``KERNEL_LOCK``), shared by
    every game's sessions."""
    return KERNEL_LOCK


class NotYourTurnError(RuntimeError):
    """An action given while another seat decides (the state is unchanged)."""


class GameOverError(RuntimeError):
    """An action given after the game ended."""


class SeatSession:
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
    def decision_number(self) -> int:
        """The number of the pending decision (decisions taken so far, every seat's): an
        answer names it, so a repeated or stale answer can be told apart and refused."""
        return self.recorder.num_steps

    @property
    def steps(self) -> list[int]:
        """Every seat's actions so far, in order (``replay`` takes them again)."""
        return [line["action"] for line in self.recorder.lines if "step" in line]

    def legal_actions(self) -> list[int]:
        return self.engine.legal_actions(0)

    def _log_size(self) -> int:
        """How long the session's log is (``moves`` unless a subclass keeps another):
        ``_mark`` indexes it."""
        return len(self.moves)

    def _mark_yours(self) -> None:
        """What follows the person's decision starts here (``act`` and ``replay`` mark it)."""
        self._mark = self._log_size()

    def replay(self, steps: Sequence[int], error=ValueError, on_yours=None) -> None:
        """Take ``steps`` in order (no bot is asked); ``error`` (naming the step) if one is
        not legal. ``on_yours()`` runs before each of the person's own decisions."""
        for i, a in enumerate(steps):
            if isinstance(a, bool) or not isinstance(a, (int, np.integer)) or int(a) not in self.legal_actions():
                raise error(f"steps[{i}]={a!r} is not a legal action of this game at step {i}; "
                            f"legal: {self.legal_actions()}")
            if on_yours is not None and self.actor == self.seat:
                on_yours()
            self._step(int(a))

    def act(self, action: int) -> None:
        """The person's decision; then the bots play until the next one or the end. An
        action that is not legal now raises (``IllegalActionError``, ``NotYourTurnError``
        or ``GameOverError``) and changes nothing."""
        if self.over:
            raise GameOverError("the game is over; no more decisions")
        if not self.your_turn:
            raise NotYourTurnError(f"{self.label(self.actor)} decides now, not you")
        mark = self._log_size()
        self._step(int(action))  # IllegalActionError (state untouched) if not legal
        self._mark = mark
        self.run_bots()

    def _forced_action(self) -> int | None:
        """The action the session takes for the person's seat without asking (None: ask)."""
        return None

    def run_bots(self) -> None:
        """The bots' decisions until the person's seat must decide or the game ends (a
        decision of the person's that the session takes itself, ``_forced_action``, included)."""
        for _ in range(MAX_BOT_STEPS):
            if self.over:
                return
            if self.actor == self.seat:
                forced = self._forced_action()
                if forced is None:
                    return
                self._step(forced)
                continue
            q = self.actor
            with kernel_lock():
                obs = self.engine.observe(np.array([q]))[0]
                mask = self.engine.legal_mask()[0].copy()
                a = int(self.bots[q].act(obs, mask))
            self._step(a)
        raise RuntimeError(f"the bots took more than {MAX_BOT_STEPS} decisions in a row")  # pragma: no cover


def seat_controllers(players: int, seat, opponents: Sequence[str], known: Sequence[str], error=ValueError,
                     game: str = "this game") -> list[str]:
    """The controller of every seat: ``"you"`` at ``seat``, the opponents (bot names of
    ``known``) cycled over the other seats in seat order; ``error`` saying what is allowed."""
    if isinstance(seat, bool) or not isinstance(seat, (int, np.integer)) or not 0 <= seat < players:
        raise error(f"seat={seat!r} is not allowed; allowed: 0 to {players - 1}")
    names = [str(n) for n in opponents]
    if not names:
        raise error(f"opponents: give at least one bot; allowed: {', '.join(known)}")
    bad = [n for n in names if n not in known]
    if bad:
        raise error(f"opponents: unknown bot {bad[0][:40]!r} for {game}; allowed: {', '.join(known)}")
    others = iter(names[k % len(names)] for k in range(players))
    return ["you" if q == seat else next(others) for q in range(players)]


def game_seed(seed, error=ValueError) -> tuple[int, bool]:
    """(the game's seed, whether it was chosen): without one, a secret seed of
    ``SECRET_SEED_BITS`` bits (shown once the game is over); ``error`` for a bad one."""
    if seed is None:
        return secrets.randbits(SECRET_SEED_BITS), False
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise error(f"seed={seed!r} is not allowed; allowed: a non-negative integer (or none)")
    return int(seed), True
