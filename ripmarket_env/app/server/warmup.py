"""Getting the server ready: compile (or load) the rules engine and load the slow bots once,
and say what is loading while it happens (``GET /api/status``).

The first game after an install compiles the numba engine (30-75 s), and the first game
against ``search`` or a trained ``ppo-*`` bot compiles its kernels or imports torch
(10-25 s). ``Warmup.start()`` does this in a background thread when the server starts
(``ripmarket serve``); a request that needs a part not ready yet does it itself, under
the same lock, so the work is done once. The page polls ``status()`` to show progress.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence

import numpy as np

#: Bots whose first use is slow (kernel compilation, torch import): warmed up at start.
SLOW_BOTS = ("search", "ppo-6p")


class Warmup:
    def __init__(self, registry, slow_bots: Sequence[str] = SLOW_BOTS):
        self.registry = registry
        self.slow = [b for b in slow_bots if b in registry.names()]
        self._lock = threading.RLock()
        self._ready: set[str] = set()
        self.stage: str | None = None
        self.started: float | None = None
        self.error: str | None = None
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------------ status
    def parts(self) -> list[str]:
        return ["engine", *self.slow]

    def status(self) -> dict:
        parts = self.parts()
        done = [p for p in parts if p in self._ready]
        return {
            "ready": self.stage is None and "engine" in self._ready,
            "stage": self.stage,
            "done": len(done),
            "total": len(parts),
            "elapsed": round(time.monotonic() - self.started, 1) if self.started and self.stage else 0.0,
            "error": self.error,
        }

    def _do(self, part: str, stage: str, work) -> None:
        if part in self._ready:
            return
        with self._lock:
            if part in self._ready:
                return
            self.stage, self.started = stage, time.monotonic()
            try:
                work()
            except Exception as exc:  # pragma: no cover - a broken install; the game itself will report it
                self.error = f"{stage} failed: {exc}"
            finally:
                self._ready.add(part)
                self.stage = None

    # ------------------------------------------------------------------ parts
    def engine(self) -> None:
        """Compile or load the rules engine kernels (one short game step)."""
        def work():
            from ripmarket_env.games.ripmarket import Engine, RulesConfig
            from ripmarket_env.app.play import KERNEL_LOCK

            with KERNEL_LOCK:
                eng = Engine(RulesConfig(num_players=4), batch_size=1)
                eng.reset([0])
                eng.observe()
                eng.step([int(np.flatnonzero(eng.legal_mask()[0])[0])])
                eng.events(0)

        self._do("engine", "Compiling the rules engine (the first start after an install takes up to a minute)", work)

    def bot(self, name: str) -> None:
        """Load a bot and let it take one decision (compiles its kernels, imports torch)."""
        if name not in self.slow:
            return
        self.engine()

        def work():
            from ripmarket_env.games.ripmarket import Engine, RulesConfig
            from ripmarket_env.app.play import KERNEL_LOCK

            bot = self.registry.make(name, seed=0)
            with KERNEL_LOCK:
                eng = Engine(RulesConfig(num_players=4), batch_size=1)
                eng.reset([0])
                bot.act(eng.observe([int(eng.current_player()[0])])[0], eng.legal_mask()[0].copy())

        self._do(name, f"Loading the {name} bot", work)

    def prepare(self, bots: Sequence[str]) -> None:
        """Everything a game with these bots needs (done once per server)."""
        self.engine()
        for b in dict.fromkeys(bots):
            self.bot(b)

    def start(self) -> threading.Thread:
        """Warm every part up in a background thread."""
        if self._thread is None:
            self._thread = threading.Thread(target=self.prepare, args=(self.slow,), name="warmup", daemon=True)
            self._thread.start()
        return self._thread
