"""Getting the server ready: compile (or load) every game's rules engine and load the slow
bots once, and say what is loading while it happens (``GET /api/{game}/status``).

The first game after an install compiles a game's numba engine (30-75 s), and the first
game against a search or trained bot compiles its kernels or imports torch (10-25 s).
The bots worth loading early are each game's ``slow_bots`` (``agents.game_agents``).
``Warmup.start()`` does all of it in a background thread when the server starts
(``ripmarket serve``): every game's engine first, then the slow bots. A request that
needs a part not ready yet does it itself, under the same lock, so the work is done once.
The pages poll ``status()`` to show progress; its ``parts`` list every part (its game,
what it is, whether it is ready).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence

import numpy as np

_WHY = {"search": "its search kernels", "ppo": "torch and its network",
        "lookahead": "torch, its network and its lookahead kernels"}


def _why(bot: str) -> str:
    return _WHY["lookahead" if "lookahead" in bot else "ppo" if "ppo" in bot else "search"]


def engine_part(game: str) -> str:
    """The part that is ``game``'s rules engine."""
    return f"{game} engine"


class Warmup:
    """The parts of ``kinds`` (``kinds.GameKind`` by game id): each game's engine, then
    its slow bots."""

    def __init__(self, kinds: dict):
        self.kinds = kinds
        self.slow = {gid: kind.slow_bots() for gid, kind in kinds.items()}
        self._lock = threading.RLock()
        self._ready: set[tuple[str, str]] = set()
        self.stage: str | None = None
        self.started: float | None = None
        self.error: str | None = None
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------------ status
    def parts(self) -> list[tuple[str, str]]:
        """Every (game, part) in the order ``start()`` warms them: the engines, then the slow bots."""
        return [*((g, engine_part(g)) for g in self.kinds), *((g, b) for g, bots in self.slow.items() for b in bots)]

    def describe(self, game: str, part: str) -> str:
        """The part in words: ``<title>'s rules engine``, ``<title>'s <bot> bot``."""
        title = self.kinds[game].title
        return f"{title}'s rules engine" if part == engine_part(game) else f"{title}'s {part} bot"

    def is_ready(self, game: str, part: str) -> bool:
        return (game, part) in self._ready

    def status(self, game: str, bots: Sequence[str] = ()) -> dict:
        """What is loading now and what is ready. ``ready``: nothing is loading and the
        engine of ``game`` is ready, with ``bots`` if named."""
        parts = self.parts()
        done = [p for p in parts if p in self._ready]
        need = [(game, engine_part(game)), *((game, b) for b in bots if (game, b) in parts)]
        return {
            "ready": self.stage is None and all(p in self._ready for p in need),
            "stage": self.stage,
            "done": len(done),
            "total": len(parts),
            "elapsed": round(time.monotonic() - self.started, 1) if self.started and self.stage else 0.0,
            "error": self.error,
            "parts": [{"name": p, "game": g, "what": self.describe(g, p), "ready": (g, p) in self._ready}
                      for g, p in parts],
        }

    def _do(self, key: tuple[str, str], stage: str, work) -> None:
        if key in self._ready:
            return
        with self._lock:
            if key in self._ready:
                return
            self.stage, self.started = stage, time.monotonic()
            try:
                work()
            except Exception as exc:  # pragma: no cover - a broken install; the game itself will report it
                self.error = f"{stage} failed: {exc}"
            finally:
                self._ready.add(key)
                self.stage = None

    # ------------------------------------------------------------------ parts
    def _short_game(self, game: str):
        """A one-game engine of ``game`` at its default player count, reset, observed and
        stepped once (compiles or loads its kernels)."""
        from ripmarket_env.app.seat_session import kernel_lock

        spec = self.kinds[game].spec
        with kernel_lock():
            eng = spec.make_engine(spec.make_rules(spec.default_players))
            eng.reset([0])
            q = int(eng.current_player()[0])
            obs = eng.observe(np.array([q]))[0]
            mask = eng.legal_mask()[0].copy()
        return eng, obs, mask

    def engine(self, game: str) -> None:
        """Compile or load ``game``'s rules engine."""
        self._do((game, engine_part(game)), f"Compiling {self.kinds[game].title}'s rules engine (the first start "
                                             "after an install takes up to a minute)", lambda: self._short_game(game))

    def bot(self, game: str, name: str) -> None:
        """Load one of ``game``'s slow bots and let it take one decision."""
        if name not in self.slow.get(game, ()):
            return
        self.engine(game)

        def work():
            import agents
            from ripmarket_env.app.seat_session import kernel_lock

            bot = agents.make_seeded(name, 0, game=game)
            _, obs, mask = self._short_game(game)
            with kernel_lock():
                bot.act(obs, mask)

        self._do((game, name), f"Loading {self.kinds[game].title}'s {name} bot ({_why(name)})", work)

    def prepare(self, game: str, bots: Sequence[str] = ()) -> None:
        """Everything a game of ``game`` with these bots needs (done once per server)."""
        self.engine(game)
        for b in dict.fromkeys(bots):
            self.bot(game, b)

    def prepare_all(self) -> None:
        """Every part, in the order of ``parts()``: the engines, then the slow bots."""
        for game in self.kinds:
            self.engine(game)
        for game, bots in self.slow.items():
            for b in bots:
                self.bot(game, b)

    def start(self) -> threading.Thread:
        """Warm every part up in a background thread."""
        if self._thread is None:
            self._thread = threading.Thread(target=self.prepare_all, name="warmup", daemon=True)
            self._thread.start()
        return self._thread
