"""Getting the server ready: compile (or load) every game's rules engine and load the slow
bots once, and say what is loading while it happens (``GET /api/status``).

The first game after an install compiles the numba engine (30-75 s), and the first game
against ``search`` or a trained ``ppo*`` bot (the default ``ppo-lookahead`` among them) compiles its kernels or imports torch
(10-25 s); so do The Rune Market's engine and its ``rm-search`` (kernels) and
``rm-ppo-4p`` (torch), and Black Market's engine, ``bm-search`` and ``bm-ppo-2p``.
``Warmup.start()`` does all of it in a background thread when the server starts
(``ripmarket serve``): the three engines first, then the slow bots. A request that needs a
part not ready yet does it itself, under the same lock, so the work is done once. The
pages poll ``status()`` to show progress; its ``parts`` list every part (its game, what
it is, whether it is ready).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence

import numpy as np

#: R.I.P. Market's bots whose first use is slow (kernel compilation, torch import): warmed up at start.
SLOW_BOTS = ("search", "ppo-lookahead", "ppo", "ppo-6p")
#: The other games' slow bots, by game.
OTHER_SLOW_BOTS = {"rune-market": ("rm-search", "rm-ppo-4p"), "black-market": ("bm-search", "bm-ppo-2p")}
GAME_NAMES = {"ripmarket": "R.I.P. Market", "rune-market": "The Rune Market", "black-market": "Black Market"}
#: The part that is a game's engine (R.I.P. Market's keeps its old name, "engine").
ENGINE_PART = {"ripmarket": "engine", "rune-market": "rune-market engine", "black-market": "black-market engine"}
_WHY = {"search": "its search kernels", "ppo": "torch and its network",
        "lookahead": "torch, its network and its lookahead kernels"}


def _why(bot: str) -> str:
    return _WHY["lookahead" if "lookahead" in bot else "ppo" if "ppo" in bot else "search"]


class Warmup:
    """``other_games``: warm The Rune Market's and Black Market's engines and slow bots
    too (the server does; a test of R.I.P. Market alone may leave them out)."""

    def __init__(self, registry, slow_bots: Sequence[str] = SLOW_BOTS, other_games: bool = True):
        self.registry = registry
        self.slow = [b for b in slow_bots if b in registry.names()]
        self.other: dict[str, list[str]] = {}
        if other_games:
            import agents

            for game, bots in OTHER_SLOW_BOTS.items():
                known = agents.names(game)
                self.other[game] = [b for b in bots if b in known]
        self._lock = threading.RLock()
        self._ready: set[str] = set()
        self.stage: str | None = None
        self.started: float | None = None
        self.error: str | None = None
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------------ status
    def parts(self) -> list[str]:
        """Every part in the order ``start()`` warms them: the engines, then the slow bots."""
        engines = ["engine", *(ENGINE_PART[g] for g in self.other)]
        return [*engines, *self.slow, *(b for bots in self.other.values() for b in bots)]

    def game_of(self, part: str) -> str:
        for game, bots in self.other.items():
            if part == ENGINE_PART[game] or part in bots:
                return game
        return "ripmarket"

    def describe(self, part: str) -> str:
        """The part in words: ``The Rune Market's rules engine``, ``Black Market's bm-search bot``."""
        game = GAME_NAMES[self.game_of(part)]
        return f"{game}'s rules engine" if part.endswith("engine") else f"{game}'s {part} bot"

    def is_ready(self, part: str) -> bool:
        return part in self._ready

    def status(self, game: str | None = None, bots: Sequence[str] = ()) -> dict:
        """What is loading now and what is ready. ``ready``: nothing is loading and the
        engine of ``game`` (default R.I.P. Market) is ready, with ``bots`` if named."""
        parts = self.parts()
        done = [p for p in parts if p in self._ready]
        need = [ENGINE_PART.get(game or "ripmarket", "engine"), *(b for b in bots if b in parts)]
        return {
            "ready": self.stage is None and all(p in self._ready for p in need),
            "stage": self.stage,
            "done": len(done),
            "total": len(parts),
            "elapsed": round(time.monotonic() - self.started, 1) if self.started and self.stage else 0.0,
            "error": self.error,
            "parts": [{"name": p, "game": self.game_of(p), "what": self.describe(p), "ready": p in self._ready}
                      for p in parts],
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

        self._do("engine", "Compiling R.I.P. Market's rules engine (the first start after an install takes up to a "
                           "minute)", work)

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

        self._do(name, f"Loading R.I.P. Market's {name} bot ({_why(name)})", work)

    # The other games: a short game against random bots compiles (or loads) the engine,
    # its session and its view; a slow bot then takes one decision of that game.
    @staticmethod
    def _session(game: str):
        if game == "rune-market":
            from ripmarket_env.app.play_rune import RuneMarketSession

            s = RuneMarketSession(4, 0, ["random"], seed=0)
            s.recent_moves()
            return s
        from ripmarket_env.app.play_bm import BlackMarketSession

        s = BlackMarketSession(players=2, seat=0, mode="teams", opponents=["random"], seed=0)
        s.view()
        return s

    def game_engine(self, game: str) -> None:
        """Compile or load The Rune Market's or Black Market's engine (``game``)."""
        if game not in self.other:
            return

        def work():
            from ripmarket_env.app.play import KERNEL_LOCK

            with KERNEL_LOCK:
                self._session(game)

        self._do(ENGINE_PART[game], f"Compiling {GAME_NAMES[game]}'s rules engine (the first start after an "
                                    "install takes up to a minute)", work)

    def game_bot(self, game: str, name: str) -> None:
        """Load one of another game's slow bots and let it take one decision."""
        if name not in self.other.get(game, ()):
            return
        self.game_engine(game)

        def work():
            import agents
            from ripmarket_env.app.play import KERNEL_LOCK

            bot = agents.make_seeded(name, 0, game=game)
            with KERNEL_LOCK:
                s = self._session(game)
                bot.act(s.engine.observe(np.array([s.seat]))[0], s.engine.legal_mask()[0].copy())

        self._do(name, f"Loading {GAME_NAMES[game]}'s {name} bot ({_why(name)})", work)

    def prepare(self, bots: Sequence[str], game: str = "ripmarket") -> None:
        """Everything a game of ``game`` with these bots needs (done once per server)."""
        if game != "ripmarket":
            self.game_engine(game)
            for b in dict.fromkeys(bots):
                self.game_bot(game, b)
            return
        self.engine()
        for b in dict.fromkeys(bots):
            self.bot(b)

    def prepare_all(self) -> None:
        """Every part, in the order of ``parts()``: the engines, then the slow bots."""
        self.engine()
        for game in self.other:
            self.game_engine(game)
        for b in self.slow:
            self.bot(b)
        for game, bots in self.other.items():
            for b in bots:
                self.game_bot(game, b)

    def start(self) -> threading.Thread:
        """Warm every part up in a background thread."""
        if self._thread is None:
            self._thread = threading.Thread(target=self.prepare_all, name="warmup", daemon=True)
            self._thread.start()
        return self._thread
