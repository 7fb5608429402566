"""``ripmarket bench``: engine throughput under random legal play.

Every configuration (player count x batch size) is timed twice:

- without observations: ``random_play`` (a core batch driver), the compiled loop that draws a uniformly
  random legal action from the mask and applies it, starting a new game whenever one ends;
- with observations: ``random_play_obs`` (a core batch driver), the same loop that also
  encodes the deciding seat's observation before every decision into a preallocated
  ``(batch, obs_size)`` float32 buffer (what an agent would act on).

Every registered game is measured the same way (``--game``) and reported in one schema
(``run_bench``); a game's throughput targets are its ``GameSpec.bench["engine"]``.

One *agent step* is one decision taken by an agent (R-12.1: forced moves are taken by the
engine and do not count). Rates are agent steps per second of wall time over the whole
batch; ``steps_per_cpu_sec`` divides by the CPU time of all threads instead, which stays
meaningful on a machine shared with other work (compare ``environment.load_average``).
Each configuration is warmed up for about one game per row before it is timed.
"""

from __future__ import annotations

import json
import os
import platform
import resource
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from ripmarket_env.core import DISTRIBUTION

DEFAULT_BATCHES = (1, 256, 4096)
DEFAULT_SECONDS = 2.0


def default_players(spec) -> list[int]:
    """The player counts measured when none are given: the smallest, default, middle and
    largest table the game allows (R.I.P. Market 2, 4, 6, 10; The Rune Market and Black
    Market 2, 4, 6)."""
    counts = list((spec.extras or {}).get("player_counts") or range(spec.min_players, spec.max_players + 1))
    mid = min(counts, key=lambda x: (abs(x - (spec.min_players + spec.max_players) // 2), x))
    return sorted({counts[0], spec.default_players, mid, counts[-1]})


def bench_table(game: str, players: int | None = None) -> tuple[str, int]:
    """``(game id, players)`` of a table the bench can run: ``players`` of the registered
    ``game`` (its default table when None); ValueError naming an unknown game (with the
    registered ones) or a table its rules refuse (with what they allow). The benchmark
    scripts check their tables with it before starting any work."""
    from ripmarket_env.games import get

    try:
        spec = get(game)
    except KeyError as exc:
        raise ValueError(exc.args[0]) from None
    n = spec.default_players if players is None else int(players)
    spec.make_rules(n)
    return spec.id, n


def engine_targets(spec) -> tuple:
    """The game's engine throughput targets (``GameSpec.bench["engine"]``; none by default)."""
    return tuple((spec.bench or {}).get("engine", ()))


def _engine(game: str, players: int, batch: int):
    from ripmarket_env.games import get

    spec = get(game)
    return spec.make_engine(spec.make_rules(players), batch_size=batch)


# ----------------------------------------------------------------------------------
# Measuring
# ----------------------------------------------------------------------------------
@dataclass
class Result:
    players: int
    batch: int
    observations: bool
    steps_per_sec: float
    games_per_sec: float
    mean_steps_per_game: float | None
    agent_steps: int
    games_finished: int
    seconds: float
    cpu_seconds: float
    steps_per_cpu_sec: float
    calls: int
    steps_per_game_per_call: int
    chunk_rate_min: float
    chunk_rate_max: float
    state_bytes: int
    obs_buffer_bytes: int
    maxrss_mb: float


@dataclass
class _Runner:
    """One engine for one config plus the two compiled loops."""

    players: int
    batch: int
    seed: int = 0
    game: str = ""
    eng: object = field(init=False)
    rng: np.ndarray = field(init=False)
    out: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        self.eng = _engine(self.game, self.players, self.batch)
        base = 1_000_003 * self.seed + 7919 * self.players
        e = self.eng
        seeds = (np.arange(base, base + self.batch, dtype=np.int64) & 0xFFFFFFFF).astype(np.uint64)
        e.drivers.reset_batch(e.state, e.tables, e.cfg, np.arange(self.batch), seeds)
        self.rng = (np.arange(self.batch, dtype=np.int64) * 2654435761 + base + 1) & 0xFFFFFFFF
        self.out = np.zeros((self.batch, self.eng.obs_size), dtype=np.float32)

    def call(self, steps: int, observations: bool) -> int:
        e = self.eng
        if observations:
            fin = e.drivers.random_play_obs(e.state, e.tables, e.cfg, steps, self.rng, e._offs, self.out)
        else:
            fin = e.drivers.random_play(e.state, e.tables, e.cfg, steps, self.rng)
        return int(fin.sum())


def maxrss_mb() -> float:
    """Peak resident set size of this process so far (MB)."""
    kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return kb / 1024.0 if sys.platform != "darwin" else kb / 2**20


def _time_config(run: _Runner, observations: bool, seconds: float) -> Result:
    B = run.batch
    chunk = max(0.02, min(0.25, seconds / 8))  # target wall time of one timed call
    min_n = -(-1024 // B)  # at least ~1k agent steps per call
    # Warm up: about one game per row, so the batch holds games at every stage.
    run.call(max(min_n, 20 * run.players), observations)
    # Calibrate: double the steps per call until a call takes a quarter of a chunk.
    n = min_n
    while True:
        t0 = time.perf_counter()
        run.call(n, observations)
        dt = time.perf_counter() - t0
        if dt >= chunk / 4 or n >= 1 << 24:
            break
        n *= 2
    n = max(min_n, int(n * chunk / max(dt, 1e-9)))
    steps = games = calls = 0
    elapsed = cpu = 0.0
    rates = []
    while elapsed < seconds:
        c0 = time.process_time()
        t0 = time.perf_counter()
        fin = run.call(n, observations)
        dt = time.perf_counter() - t0
        cpu += time.process_time() - c0
        steps += n * B
        games += fin
        calls += 1
        elapsed += dt
        rates.append(n * B / max(dt, 1e-9))
        n = max(min_n, n // 4, min(4 * n, int(n * chunk / max(dt, 1e-9))))
    return Result(
        players=run.players,
        batch=B,
        observations=observations,
        steps_per_sec=steps / elapsed,
        games_per_sec=games / elapsed,
        mean_steps_per_game=(steps / games) if games else None,
        agent_steps=steps,
        games_finished=games,
        seconds=elapsed,
        cpu_seconds=cpu,
        steps_per_cpu_sec=steps / cpu if cpu > 0 else 0.0,
        calls=calls,
        steps_per_game_per_call=steps // (calls * B),
        chunk_rate_min=min(rates),
        chunk_rate_max=max(rates),
        state_bytes=int(run.eng.state.nbytes),
        obs_buffer_bytes=int(run.out.nbytes) if observations else 0,
        maxrss_mb=maxrss_mb(),
    )


def _kernel_stats(fn) -> dict:
    st = getattr(fn, "stats", None)
    hits = sum(st.cache_hits.values()) if st is not None else 0
    misses = sum(st.cache_misses.values()) if st is not None else 0
    return {"cache_hits": hits, "cache_misses": misses}


def _compile(players: int, game: str) -> dict:
    """First call of every kernel the bench uses, timed (compile or cache load)."""
    kernels = {}
    eng = _engine(game, players, 2)
    rng = np.array([1, 2], dtype=np.int64)
    d = eng.drivers  # each driver compiles (or loads from the cache) on first use
    t0 = time.perf_counter()
    d.reset_batch(eng.state, eng.tables, eng.cfg, np.arange(2), rng.astype(np.uint64))
    kernels["reset_batch"] = {"first_call_seconds": time.perf_counter() - t0, **_kernel_stats(d.reset_batch)}
    t0 = time.perf_counter()
    d.random_play(eng.state, eng.tables, eng.cfg, 1, rng)
    kernels["random_play"] = {"first_call_seconds": time.perf_counter() - t0, **_kernel_stats(d.random_play)}
    out = np.zeros((2, eng.obs_size), np.float32)
    t0 = time.perf_counter()
    d.random_play_obs(eng.state, eng.tables, eng.cfg, 1, rng, eng._offs, out)
    kernels["random_play_obs"] = {
        "first_call_seconds": time.perf_counter() - t0,
        **_kernel_stats(d.random_play_obs),
    }
    warm = all(k["cache_misses"] == 0 and k["cache_hits"] > 0 for k in kernels.values())
    import numba

    return {
        "compile_seconds": sum(k["first_call_seconds"] for k in kernels.values()),
        "numba_cache_warm": warm,
        "note": (
            "first-call time of each kernel in this process: numba compile when the on-disk "
            "cache was cold, a cache load when it was warm"
        ),
        "cache_dir": numba.config.CACHE_DIR or None,
        "kernels": kernels,
    }


def environment() -> dict:
    import numba

    try:
        from importlib.metadata import version

        rip_version = version(DISTRIBUTION)
    except Exception:  # pragma: no cover
        rip_version = "unknown"
    try:
        affinity = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not on Linux
        affinity = os.cpu_count()
    try:
        layer = numba.threading_layer()
    except ValueError:  # no parallel region has run yet
        layer = None
    cpu_model = None
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu_model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {
        "cpu_count": os.cpu_count(),
        "cpus_available": affinity,
        "cpu_model": cpu_model or platform.processor() or None,
        "numba_threads": numba.get_num_threads(),
        "numba_threading_layer": layer,
        "numba_disable_jit": bool(numba.config.DISABLE_JIT),
        "load_average": [round(x, 2) for x in os.getloadavg()] if hasattr(os, "getloadavg") else None,
        "python": platform.python_version(),
        "numpy": np.__version__,
        "numba": numba.__version__,
        DISTRIBUTION: rip_version,
        "platform": platform.platform(),
    }


def run_bench(
    players=None,
    batches=DEFAULT_BATCHES,
    seconds: float = DEFAULT_SECONDS,
    on_config=None,
    game: str | None = None,
) -> dict:
    """Run the grid and return the report (a JSON-ready dict with a ``results`` list).

    ``on_config(label)`` is called after each timed configuration (progress display).
    ``game``: the registry id of the game to measure (default: the first registered);
    ``players`` default to ``default_players``.
    """
    from ripmarket_env.games import get, ids

    game = game or ids()[0]
    spec = get(game)
    players = [int(p) for p in (players or default_players(spec))]
    batches = [int(b) for b in batches]
    t_start = time.perf_counter()
    compile_info = _compile(players[0], game)
    env_before = environment()
    results: list[Result] = []
    obs_size = state_bytes_per_game = None
    for P in players:
        for B in batches:
            run = _Runner(P, B, game=game)
            obs_size = run.eng.obs_size
            state_bytes_per_game = run.eng.state.dtype.itemsize
            for obs in (False, True):
                results.append(_time_config(run, obs, seconds))
                if on_config is not None:
                    on_config(f"{P} players, batch {B}, {'with' if obs else 'without'} observations")
            del run
    env = environment()
    env["load_average_start"] = env_before["load_average"]
    targets = []
    for t in engine_targets(spec):
        hit = [r for r in results if (r.players, r.batch, r.observations) == (t["players"], t["batch"], t["observations"])]
        if hit:
            targets.append({**t, "measured": hit[0].steps_per_sec, "met": hit[0].steps_per_sec >= t["steps_per_sec"]})
    return {
        "game": game,
        "benchmark": "random legal play, actions drawn from the mask inside the compiled loop, auto-reset",
        "unit": "agent steps per second (all games of the batch together)",
        "config": {"players": players, "batches": batches, "seconds_per_config": seconds},
        "environment": env,
        "compile": compile_info,
        "memory": {
            "maxrss_mb": maxrss_mb(),
            "state_bytes_per_game": state_bytes_per_game,
            "obs_size": obs_size,
            "obs_bytes_per_game": 4 * obs_size if obs_size else None,
        },
        "targets": targets,
        "results": [asdict(r) for r in results],
        "wall_seconds": time.perf_counter() - t_start,
    }


# ----------------------------------------------------------------------------------
# Output
# ----------------------------------------------------------------------------------
def to_json(report: dict) -> str:
    return json.dumps(report, indent=2)


def _rate(x: float | None) -> str:
    if x is None:
        return "—"
    if x >= 1e6:
        return f"{x / 1e6:.2f} M"
    if x >= 1e3:
        return f"{x / 1e3:.1f} k"
    return f"{x:.0f}"


def render_rich(report: dict):
    """The report as rich renderables (a table, then compile/memory/target notes)."""
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    from rich import box

    table = Table(
        title="Random legal play — agent steps per second", title_justify="left",
        box=box.SIMPLE_HEAD, padding=(0, 1), show_edge=False, pad_edge=False,
    )
    for col in ("players", "batch", "steps/s", "+obs", "obs cost", "games/s", "steps/game", "per CPU-s"):
        table.add_column(col, justify="right", no_wrap=True)
    by_key = {(r["players"], r["batch"], r["observations"]): r for r in report["results"]}
    for P in report["config"]["players"]:
        for B in report["config"]["batches"]:
            a = by_key.get((P, B, False))
            b = by_key.get((P, B, True))
            if a is None:
                continue
            cost = f"{100 * (1 - b['steps_per_sec'] / a['steps_per_sec']):.0f}%" if b else "—"
            spg = a["mean_steps_per_game"]
            table.add_row(
                str(P), str(B), _rate(a["steps_per_sec"]), _rate(b["steps_per_sec"]) if b else "—",
                cost, _rate(a["games_per_sec"]), f"{spg:.1f}" if spg else "—",
                _rate(a["steps_per_cpu_sec"]),
            )
    comp = report["compile"]
    mem = report["memory"]
    env = report["environment"]
    lines = [
        f"compile: {comp['compile_seconds']:.1f} s for the first calls "
        f"(numba cache {'warm' if comp['numba_cache_warm'] else 'cold'})",
        f"memory: peak RSS {mem['maxrss_mb']:.0f} MB; state {mem['state_bytes_per_game']} bytes/game; "
        f"observation {mem['obs_size']} float32 = {mem['obs_bytes_per_game']} bytes",
        f"machine: {env['cpus_available']} CPUs, {env['numba_threads']} numba threads "
        f"({env['numba_threading_layer']}), load average {env['load_average_start']} -> {env['load_average']}; "
        f"numba {env['numba']}, numpy {env['numpy']}, Python {env['python']}",
    ]
    parts = [table] + [Text(s) for s in lines]
    for t in report["targets"]:
        mark = "met" if t["met"] else "MISSED"
        style = "green" if t["met"] else "bold red"
        parts.append(Text(
            f"target {t['players']} players, batch {t['batch']}, "
            f"{'with' if t['observations'] else 'without'} observations: "
            f">= {_rate(t['steps_per_sec'])} steps/s, measured {_rate(t['measured'])} — {mark}",
            style=style,
        ))
    return Group(*parts)
