"""Two engines' random-play loops alternated slice by slice, for a before/after ratio.

    python benchmarks/alternate.py A B [--runs 3] [--pairs 20] [--slice 0.25] [--batch 4096]
                                       [--observations without|with|both] [--json]

``A`` and ``B`` are ``GAME:PLAYERS`` with an optional ``@DIR``: a checkout of the project
whose code that side runs (``PYTHONPATH=DIR``; default: the code this script is run
with). ``ripmarket:6@/tmp/old ripmarket:6`` compares an older checkout with this one;
``black-market:4 rune-market:4`` compares two games on the same code.

Each side is a worker process holding the bench's own batch (``app.bench._Runner``, seed
0, warmed up to games at every stage) and its compiled loops (``random_play``,
``random_play_obs``), one numba thread. The two workers take turns: one slice of
``--slice`` CPU-seconds each (the steps per call are calibrated once on A), the order
swapped every pair, the other worker idle while one runs. Each pair gives a ratio B / A
of agent steps per CPU-second; a run's figure is the median of its per-pair ratios (with
their quartiles). ``--runs`` starts that many fresh pairs of workers one after the other
and reports the median of the runs' figures: two processes of the same code can differ
by a tenth for the whole of their lives (where their arrays landed in memory), which
pairs within one run cannot see. On a shared machine the rate drifts by a quarter within
seconds, but two slices a fraction of a second apart see the same machine, so the
quartiles of the ratio come out within a few percent where separate bench runs
(``ripmarket bench``, one process per side) spread by as much as the change being
measured (docs/ARCHITECTURE.md, Speed). A game or table this checkout does not know is
refused before any worker starts; the same for the other checkout's is left to its worker
(its error, then "did not start").
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

_WORKER = r"""
import json, sys, time
from ripmarket_env.app.bench import _Runner
game, players, batch = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
run = _Runner(players=players, batch=batch, game=game)
for obs in (False, True):
    run.call(max(1, 20 * players), obs)  # compile, and play every row to a mixed stage
print("ready", flush=True)
for line in sys.stdin:
    kind, n = line.split()
    c0 = time.process_time()
    run.call(int(n), kind == "with")
    print(json.dumps({"cpu": time.process_time() - c0, "steps": int(n) * batch}), flush=True)
"""


def parse_side(text: str) -> tuple[str, int, str | None]:
    """``GAME:PLAYERS[@DIR]`` -> (game, players, dir or None)."""
    spec, _, where = text.partition("@")
    game, sep, players = spec.partition(":")
    if not sep or not players.isdigit() or not game:
        raise SystemExit(f"alternate.py: {text!r} is not GAME:PLAYERS[@DIR] (e.g. ripmarket:6@/tmp/old)")
    if where and not (Path(where) / "ripmarket_env").is_dir():
        raise SystemExit(f"alternate.py: {where!r} is not a checkout of the project (no ripmarket_env/ in it)")
    if not where:  # this checkout's games: refused here, before any worker starts
        from ripmarket_env.app.bench import bench_table

        try:
            bench_table(game, int(players))
        except ValueError as e:
            raise SystemExit(f"alternate.py: {text!r}: {e}") from None
    return game, int(players), where or None


class Worker:
    def __init__(self, game: str, players: int, where: str | None, batch: int):
        self.batch = batch
        root = where or str(Path(__file__).resolve().parents[1])
        env = dict(os.environ, PYTHONPATH=root, NUMBA_NUM_THREADS="1")
        self.proc = subprocess.Popen(
            [sys.executable, "-c", _WORKER, game, str(players), str(batch)], cwd=root, env=env,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        if self.proc.stdout.readline().strip() != "ready":
            raise SystemExit(f"alternate.py: the worker for {game}:{players} in {root} did not start")

    def run(self, kind: str, steps: int) -> float:
        """Agent steps per CPU-second of one call of ``steps`` steps per game."""
        self.proc.stdin.write(f"{kind} {steps}\n")
        self.proc.stdin.flush()
        r = json.loads(self.proc.stdout.readline())
        return r["steps"] / max(r["cpu"], 1e-9)

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait()


def alternate(a: Worker, b: Worker, kind: str, pairs: int, seconds: float) -> dict:
    steps = 4
    while True:  # calibrate on A: steps per game of one call taking about ``seconds``
        rate = a.run(kind, steps)
        if steps * a.batch / rate > seconds / 4:
            break
        steps *= 2
    steps = max(1, int(seconds * rate / a.batch))
    ratios, rates_a, rates_b = [], [], []
    for i in range(pairs):
        if i % 2 == 0:
            ra, rb = a.run(kind, steps), b.run(kind, steps)
        else:
            rb, ra = b.run(kind, steps), a.run(kind, steps)
        rates_a.append(ra)
        rates_b.append(rb)
        ratios.append(rb / ra)
    q = statistics.quantiles(ratios, n=4) if pairs >= 2 else [ratios[0]] * 3
    return {"observations": kind, "pairs": pairs, "steps_per_game_per_slice": steps,
            "median_ratio_b_over_a": statistics.median(ratios), "quartiles": [q[0], q[2]],
            "ratios": ratios, "median_a_steps_per_cpu_sec": statistics.median(rates_a),
            "median_b_steps_per_cpu_sec": statistics.median(rates_b)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("a", help="GAME:PLAYERS[@DIR], the reference side")
    ap.add_argument("b", help="GAME:PLAYERS[@DIR], the side whose ratio to A is reported")
    ap.add_argument("--runs", type=int, default=3, help="fresh pairs of worker processes (default 3)")
    ap.add_argument("--pairs", type=int, default=20, help="slices per side in each run (default 20)")
    ap.add_argument("--slice", type=float, default=0.25, help="CPU-seconds per slice (default 0.25)")
    ap.add_argument("--batch", type=int, default=4096, help="games per batch (default 4096)")
    ap.add_argument("--observations", choices=("without", "with", "both"), default="both")
    ap.add_argument("--json", action="store_true", help="print the report as JSON")
    args = ap.parse_args(argv)
    if args.runs < 1 or args.pairs < 1 or args.batch < 1 or not args.slice > 0:
        raise SystemExit("alternate.py: --runs, --pairs and --batch must be at least 1 and --slice above 0")
    sides = [parse_side(args.a), parse_side(args.b)]
    kinds = ["without", "with"] if args.observations == "both" else [args.observations]
    runs = []
    for _ in range(args.runs):
        workers = []
        try:
            for game, players, where in sides:
                workers.append(Worker(game, players, where, args.batch))
            runs.append([alternate(workers[0], workers[1], k, args.pairs, args.slice) for k in kinds])
        finally:
            for w in workers:
                w.close()
    results = []
    for i, kind in enumerate(kinds):
        per_run = [run[i] for run in runs]
        results.append({
            "observations": kind,
            "median_ratio_b_over_a": statistics.median(r["median_ratio_b_over_a"] for r in per_run),
            "median_a_steps_per_cpu_sec": statistics.median(r["median_a_steps_per_cpu_sec"] for r in per_run),
            "median_b_steps_per_cpu_sec": statistics.median(r["median_b_steps_per_cpu_sec"] for r in per_run),
            "runs": per_run,
        })
    report = {"a": args.a, "b": args.b, "batch": args.batch, "slice_cpu_seconds": args.slice,
              "pairs_per_run": args.pairs, "results": results}
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        for r in results:
            each = ", ".join(f"{x['median_ratio_b_over_a']:.3f} ({x['quartiles'][0]:.3f}-{x['quartiles'][1]:.3f})"
                             for x in r["runs"])
            print(f"{args.b} / {args.a}, {r['observations']} observations: {r['median_ratio_b_over_a']:.3f}, "
                  f"the median of {len(r['runs'])} runs of {args.pairs} pairs: {each}; "
                  f"{r['median_a_steps_per_cpu_sec'] / 1e6:.2f} M against {r['median_b_steps_per_cpu_sec'] / 1e6:.2f} M "
                  "agent steps per CPU-second")
    return 0


if __name__ == "__main__":
    sys.exit(main())
