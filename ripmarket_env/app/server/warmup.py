"""Getting the server ready: compile (or load) every game's rules engine and load the slow
bots once, the game a person asks for first, and say what is loading for that game while
it happens (``GET /api/{game}/status``).

The first game after an install compiles a game's numba engine (about 9-14 CPU seconds,
half a minute or more of wall time on a busy 2-core machine), and the first game against a
search or trained bot compiles its kernels or imports torch (10-25 s). The bots worth
loading early are each game's ``slow_bots`` (``agents.game_agents``); of those, the ones
in the game's default line-up come first.

Order. ``order()`` puts the games asked for first (``want``: a page polling its game's
status, a new game being made), in the order they were asked, then the server's games in
their registry order; per game its engine, then the slow bots of its default line-up;
the other slow bots of every game come last. ``Warmup.start()`` works through that order
in a background thread (``ripmarket serve``) and re-reads it after every part, so a game
asked for meanwhile is next.

Parallel. numba compiles one function at a time per process, so on a cold cache the
compiling happens in helper processes (``python -m ripmarket_env.app.server.warmup GAME
[BOT ...]``: the game's engine and its default slow bots, into the same numba cache):
the game asked for gets a helper at once, the others up to ``helpers`` at a time (half
the CPUs, at least one). The server process then loads the compiled kernels from the
cache (a second or two). A warm cache needs no helper. A request that needs a part not
ready waits for that part only (its helper, then the load), never for another game's.

Words. ``status(game)`` says what is loading *for that game* (``stage``): which kernels
(the helper's latest compile line) or bot, with an estimate: the time the same part took
last time on this machine (``$XDG_CACHE_HOME/ripmarket/warmup-times.json``), or, never
measured here, a guess said as one (its CPU seconds scaled by the machine's load).
"""

from __future__ import annotations

import atexit
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ripmarket_env.core import jitcache
from ripmarket_env.core.jsonfile import save_cache_json

_WHY = {"search": "its search kernels", "ppo": "torch and its network",
        "lookahead": "torch, its network and its lookahead kernels"}

#: CPU seconds of a part never measured on this machine: a cold engine compile, loading
#: a compiled engine, loading a bot (scaled by the machine's load, ``_busy``)
_GUESS = {"cold": 15.0, "warm": 1.0, "bot": 10.0}


def _busy() -> float:
    """How much longer than its CPU time a job takes now: the load average per core (a
    process gets about 1.7 of its share on a loaded machine: measured 133 s for about 30
    CPU seconds at a load of 15 on 2 cores), at least 1."""
    try:
        return max(1.0, 0.6 * os.getloadavg()[0] / (os.cpu_count() or 1))
    except OSError:  # pragma: no cover
        return 1.0


def _why(bot: str) -> str:
    return _WHY["lookahead" if "lookahead" in bot else "ppo" if "ppo" in bot else "search"]


def engine_part(game: str) -> str:
    """The part that is ``game``'s rules engine."""
    return f"{game} engine"


def times_path() -> Path:
    """Where the warm-up keeps how long each part took (the estimates' source)."""
    from ripmarket_env.core.jitcache import cache_home

    return cache_home() / "warmup-times.json"


def engine_kernels(spec) -> list[str]:
    """The names of a game's four per-row kernels (reset, step, encode, seat bits), or []."""
    builder = getattr(getattr(spec, "fast", None), "_builder", None)
    return [getattr(getattr(k, "py_func", k), "__name__", "?") for k in getattr(builder, "kernels", ())]


def engine_cached(spec) -> bool:
    """Whether numba's cache holds ``spec``'s engine kernels: a cold cache means compiling,
    which a helper process does (``core.jitcache.engine_cached``)."""
    return jitcache.engine_cached(spec)


def _short_game(spec):
    """A one-game engine of the game at its default player count, reset, observed (compiles
    or loads its kernels)."""
    eng = spec.make_engine(spec.make_rules(spec.default_players))
    eng.reset([0])
    q = int(eng.current_player()[0])
    obs = eng.observe(np.array([q]))[0]
    mask = eng.legal_mask()[0].copy()
    return eng, obs, mask


_LIVE: set = set()  # helper processes still running (ended when the server exits)


@atexit.register
def _end_helpers() -> None:
    for proc in list(_LIVE):
        if proc.poll() is None:
            proc.terminate()


class _Helper:
    """A helper process compiling one game's engine and bots into numba's cache; its
    stderr (the compile progress lines) is read for the status. A helper still running
    when the server exits is ended."""

    def __init__(self, game: str, bots: Sequence[str], on_exit):
        self.game, self.bots = game, list(bots)
        self.started = time.monotonic()
        self.line = ""
        self.returncode: int | None = None
        env = dict(os.environ, RIPMARKET_COMPILE_PROGRESS="1", PYTHONUNBUFFERED="1")
        self.proc = subprocess.Popen([sys.executable, "-m", __name__, game, *self.bots], stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, text=True,
                                     errors="replace")
        _LIVE.add(self.proc)
        self._thread = threading.Thread(target=self._read, args=(on_exit,), name=f"warmup-{game}", daemon=True)
        self._thread.start()

    def _read(self, on_exit) -> None:
        for line in self.proc.stderr:
            line = line.strip()
            if line.startswith("numba:"):
                self.line = line.removeprefix("numba:").strip()
        self.returncode = self.proc.wait()
        _LIVE.discard(self.proc)
        on_exit(self)

    @property
    def done(self) -> bool:
        return self.returncode is not None


class Warmup:
    """The parts of ``kinds`` (``kinds.GameKind`` by game id): each game's engine, then
    its slow bots (see the module docstring for the order). ``helpers``: how many helper
    processes compile at once on a cold cache besides the one of the game asked for (0:
    everything in this process, the default for an app made without warm-up)."""

    def __init__(self, kinds: dict, helpers: int = 0, times_file: Path | None = None):
        self.kinds = kinds
        self.slow = {gid: kind.slow_bots() for gid, kind in kinds.items()}
        self.helpers = helpers
        self.times_file = times_file
        self._cond = threading.Condition()
        self._load_lock = threading.RLock()  # numba loads one thing at a time anyway
        self._ready: set[tuple[str, str]] = set()
        self._wanted: list[str] = []
        self._wanted_bots: dict[str, list[str]] = {}
        self._running: dict[tuple[str, str], float] = {}  # in-process parts loading: start time
        self._helper: dict[str, _Helper] = {}
        self._times: dict | None = None
        self.error: str | None = None
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------------ order
    def default_bots(self, game: str) -> list[str]:
        """The slow bots in ``game``'s default line-up (they load with its engine)."""
        try:
            lineup = self.kinds[game].default_opponents()
        except Exception:  # noqa: BLE001
            lineup = []
        return [b for b in dict.fromkeys(lineup) if b in self.slow.get(game, ())]

    def want(self, game: str, bots: Sequence[str] = ()) -> None:
        """``game`` (and these of its slow bots) goes first, before the games not asked for."""
        if game not in self.kinds:
            return
        with self._cond:
            if game not in self._wanted:
                self._wanted.append(game)
            mine = self._wanted_bots.setdefault(game, [])
            mine += [b for b in bots if b in self.slow.get(game, ()) and b not in mine]
            self._start_helpers()
            self._cond.notify_all()

    def order(self) -> list[str]:
        """The games in the order they load: asked for first, then the registry's order."""
        return [*self._wanted, *(g for g in self.kinds if g not in self._wanted)]

    def parts(self) -> list[tuple[str, str]]:
        """Every (game, part) in the order the warm-up loads them now: per game (asked for
        first) its engine and its default line-up's slow bots (and those asked for), then
        the other slow bots."""
        first, rest = [], []
        for g in self.order():
            mine = list(dict.fromkeys([*self._wanted_bots.get(g, ()), *self.default_bots(g)]))
            first += [(g, engine_part(g)), *((g, b) for b in mine)]
            rest += [(g, b) for b in self.slow.get(g, ()) if b not in mine]
        return first + rest

    def describe(self, game: str, part: str) -> str:
        """The part in words: ``<title>'s rules engine``, ``<title>'s <bot> bot``."""
        title = self.kinds[game].title
        return f"{title}'s rules engine" if part == engine_part(game) else f"{title}'s {part} bot"

    def is_ready(self, game: str, part: str) -> bool:
        return (game, part) in self._ready

    # ------------------------------------------------------------------ estimates
    def _known_times(self) -> dict:
        if self._times is None:
            try:
                self._times = json.loads((self.times_file or times_path()).read_text())
                if not isinstance(self._times, dict):
                    self._times = {}
            except (OSError, ValueError):
                self._times = {}
        return self._times

    def _record(self, key: str, seconds: float) -> None:
        times = self._known_times()
        times[key] = round(seconds, 1)
        save_cache_json(self.times_file or times_path(), times)

    def estimate(self, key: str, guess: float) -> tuple[float, bool]:
        """(seconds, measured here before) for a part's key."""
        t = self._known_times().get(key)
        return (float(t), True) if isinstance(t, (int, float)) and t > 0 else (guess * _busy(), False)

    @staticmethod
    def _about(seconds: float, measured: bool, elapsed: float) -> str:
        if measured:
            left = max(seconds - elapsed, 0.0)
            tail = f"about {left:.0f} s left" if left >= 1 else "done any moment now"
            return f"took {seconds:.0f} s last time on this machine, {elapsed:.0f} s so far, {tail}"
        return (f"about {seconds:.0f} s at this machine's load (not measured here yet), "
                f"{elapsed:.0f} s so far")

    # ------------------------------------------------------------------ status
    def _loading_words(self, game: str) -> list[tuple[str, str]]:
        """(game, sentence) for everything loading now, ``game``'s first."""
        now = time.monotonic()
        out = []
        for g, h in list(self._helper.items()):
            if h.done:
                continue
            secs, measured = self.estimate(f"{g}|helper", _GUESS["cold"] + 10 * len(h.bots))
            kernels = ", ".join(engine_kernels(self.kinds[g].spec))
            bots = f" and the {', '.join(h.bots)} bot{'s' if len(h.bots) > 1 else ''}" if h.bots else ""
            words = (f"Compiling {self.kinds[g].title}'s rules engine{bots} in a helper process "
                     f"(kernels {kernels}; {self._about(secs, measured, now - h.started)})")
            if h.line:
                words += f"; {h.line}"
            out.append((g, words))
        for (g, part), started in list(self._running.items()):
            if part == engine_part(g):
                warm = engine_cached(self.kinds[g].spec)
                secs, measured = self.estimate(f"{g}|{part}|{'warm' if warm else 'cold'}",
                                               _GUESS["warm" if warm else "cold"])
                verb, where = ("Loading", " from the cache") if warm else ("Compiling", "")
                kernels = ", ".join(engine_kernels(self.kinds[g].spec))
                words = (f"{verb} {self.describe(g, part)}{where} (kernels {kernels}; "
                         f"{self._about(secs, measured, now - started)})")
            else:
                secs, measured = self.estimate(f"{g}|{part}", _GUESS["bot"])
                words = (f"Loading {self.describe(g, part)} ({_why(part)}; "
                         f"{self._about(secs, measured, now - started)})")
            out.append((g, words))
        out.sort(key=lambda gw: gw[0] != game)
        return out

    def status(self, game: str, bots: Sequence[str] = ()) -> dict:
        """What is loading now and what is ready. ``stage``: what is loading for ``game``, or
        what it waits behind, or what loads next (null once it is ready); ``ready``:
        ``game``'s engine is ready, with ``bots`` if named."""
        with self._cond:
            parts = self.parts()
            mine_first = sorted(parts, key=lambda p: p[0] != game)
            done = [p for p in parts if p in self._ready]
            need = [(game, engine_part(game)), *((game, b) for b in bots if (game, b) in parts)]
            loading = self._loading_words(game)
            started = [t for (g, _), t in self._running.items() if g == game]
            started += [h.started for g, h in self._helper.items() if g == game and not h.done]
        ready = all(p in self._ready for p in need)
        stage = loading[0][1] if loading and loading[0][0] == game else None
        if loading and stage is None and not ready:  # waiting behind another game's part
            stage = f"{loading[0][1]} - then {self.describe(game, engine_part(game))}"
        elif stage is None and not ready and self._thread is not None and self._thread.is_alive():
            stage = f"Starting: {self.describe(game, engine_part(game))} loads next"  # no part begun yet
        return {
            "ready": ready,
            "stage": stage,
            "loading": [w for _, w in loading],
            "done": len(done),
            "total": len(parts),
            "elapsed": round(time.monotonic() - min(started), 1) if started else 0.0,
            "error": self.error,
            "parts": [{"name": p, "game": g, "what": self.describe(g, p), "ready": (g, p) in self._ready}
                      for g, p in mine_first],
        }

    # ------------------------------------------------------------------ helpers
    def _helper_done(self, helper: _Helper) -> None:
        with self._cond:
            if helper.returncode == 0:
                self._record(f"{helper.game}|helper", time.monotonic() - helper.started)
            self._start_helpers()
            self._cond.notify_all()

    def _start_helpers(self) -> None:
        """Start the helper of every wanted game with a cold engine, and of the next games
        in order up to ``helpers`` running at once (call with ``_cond`` held)."""
        if self.helpers <= 0:
            return
        running = sum(not h.done for h in self._helper.values())
        for g in self.order():
            if g in self._helper or (g, engine_part(g)) in self._ready:
                continue
            if g not in self._wanted and running >= self.helpers:
                continue
            if engine_cached(self.kinds[g].spec):
                continue
            bots = list(dict.fromkeys([*self._wanted_bots.get(g, ()), *self.default_bots(g)]))
            try:
                self._helper[g] = _Helper(g, bots, self._helper_done)
                running += 1
            except OSError as exc:  # pragma: no cover - no process could start: do it here
                self.error = f"a helper process for {g} could not start: {exc}"

    def _wait_helper(self, game: str, background: bool) -> bool:
        """Wait for ``game``'s helper, if one runs. In the background thread, stop waiting
        (False) when another game is asked for first meanwhile."""
        with self._cond:
            while True:
                h = self._helper.get(game)
                if h is None or h.done:
                    return True
                if background and self._wanted and self._wanted[0] != game and \
                        (self._wanted[0], engine_part(self._wanted[0])) not in self._ready:
                    return False
                self._cond.wait(0.5)

    # ------------------------------------------------------------------ parts
    def _do(self, game: str, part: str, work, background: bool = False) -> bool:
        key = (game, part)
        if key in self._ready:
            return True
        if not self._wait_helper(game, background):
            return False
        with self._load_lock:
            if key in self._ready:
                return True
            cold = part == engine_part(game) and not engine_cached(self.kinds[game].spec)
            with self._cond:
                self._running[key] = time.monotonic()
            t0 = time.monotonic()
            try:
                work()
                took = time.monotonic() - t0
                self._record(f"{game}|{part}|{'cold' if cold else 'warm'}" if part == engine_part(game)
                             else f"{game}|{part}", took)
            except Exception as exc:  # pragma: no cover - a broken install; the game itself will report it
                self.error = f"{self.describe(game, part)} failed: {exc}"
            finally:
                with self._cond:
                    self._ready.add(key)
                    self._running.pop(key, None)
                    self._cond.notify_all()
        return True

    def _short_game(self, game: str):
        from ripmarket_env.app.seat_session import kernel_lock

        with kernel_lock():
            return _short_game(self.kinds[game].spec)

    def engine(self, game: str, background: bool = False) -> bool:
        """Compile or load ``game``'s rules engine."""
        return self._do(game, engine_part(game), lambda: self._short_game(game), background)

    def bot(self, game: str, name: str, background: bool = False) -> bool:
        """Load one of ``game``'s slow bots and let it take one decision."""
        if name not in self.slow.get(game, ()):
            return True
        if not self.engine(game, background):
            return False

        def work():
            import agents
            from ripmarket_env.app.seat_session import kernel_lock

            bot = agents.make_seeded(name, 0, game=game)
            _, obs, mask = self._short_game(game)
            with kernel_lock():
                bot.act(obs, mask)

        return self._do(game, name, work, background)

    def prepare(self, game: str, bots: Sequence[str] = ()) -> None:
        """Everything a game of ``game`` with these bots needs (done once per server); the
        game goes first in the warm-up's order."""
        bots = list(dict.fromkeys(bots))
        self.want(game, bots)
        self.engine(game)
        for b in bots:
            self.bot(game, b)

    def prepare_all(self) -> None:
        """Every part, in the order of ``parts()`` (re-read after each part)."""
        with self._cond:
            self._start_helpers()
        while True:
            with self._cond:
                todo = [p for p in self.parts() if p not in self._ready]
            if not todo:
                return
            game, part = todo[0]
            if part == engine_part(game):
                self.engine(game, background=True)
            else:
                self.bot(game, part, background=True)

    def start(self) -> threading.Thread:
        """Warm every part up in a background thread."""
        if self._thread is None:
            self._thread = threading.Thread(target=self.prepare_all, name="warmup", daemon=True)
            self._thread.start()
        return self._thread


def main(argv: Sequence[str]) -> int:
    """A helper process: compile ``GAME``'s engine and let each named bot decide once."""
    import ripmarket_env  # noqa: F401  (the numba cache and the progress lines)
    from ripmarket_env.core.jitcache import install_progress
    from ripmarket_env.games import get

    progress = install_progress()
    if progress is not None:
        progress.PLAIN_EVERY = 1.0
    game, *bots = argv
    spec = get(game)
    _, obs, mask = _short_game(spec)
    for name in bots:
        import agents

        agents.make_seeded(name, 0, game=game).act(obs, mask)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
