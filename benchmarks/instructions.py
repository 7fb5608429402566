"""Instructions and branches per agent step of each game's bench loop, counted, not timed.

    python benchmarks/instructions.py [--games 64] [--steps 1000] [GAME[:PLAYERS] ...]

One JSON line per table. Timings on a shared machine move by several percent from one
run to the next; the number of instructions a loop executes does not. For each game (default: every
registered game at its default table) this runs the bench's ``random_play`` and
``random_play_obs`` loops (``app.bench._Runner``, seed 0, ``--games`` games, one numba
thread) under valgrind's cachegrind with its branch simulator, twice: ``--steps`` and
``3 x --steps`` agent steps a game after the same warm-up. The difference of the two
runs' totals, divided by the agent steps between them, is what one agent step costs:
instructions, conditional branches, and the branches cachegrind's simple predictor
mispredicts (a table of 2-bit counters, no history: an upper bound on a real core's
mispredictions, useful to compare versions of the same loop, not as a count).

valgrind emulates a CPU without AVX-512, so the kernels are compiled for a ``haswell``
target (AVX2, ``NUMBA_CPU_NAME``/``NUMBA_CPU_FEATURES``; their own entries in the numba
cache) before the counted runs, and glibc is told not to clear memory with ``rep
stosb`` (valgrind counts each byte of one as an instruction). Only code without a
symbol is counted: the compiled kernels (the observation row's clearing is a ``memset``
call into glibc and is left out). The counts are of that build: the shipped one,
compiled for the host, differs in its vector code.

Needs ``valgrind`` on ``PATH``; about a minute per game and loop on two cores.
docs/ARCHITECTURE.md, Speed, gives the figures and what they show.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HASWELL = ("+64bit,+adx,+aes,+avx,+avx2,+bmi,+bmi2,+cmov,+cx16,+cx8,+f16c,+fma,+fsgsbase,+fxsr,+invpcid,"
           "+lzcnt,+mmx,+movbe,+pclmul,+popcnt,+rdrnd,+sahf,+sse,+sse2,+sse3,+sse4.1,+sse4.2,+ssse3,+xsave,+xsaveopt")
EVENTS = ("Ir", "Bc", "Bcm", "Bi", "Bim")
PLAY = """
import sys
from ripmarket_env.app.bench import _Runner
game, players, games, steps, obs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5] == "1"
run = _Runner(players, games, game=game)
run.call(20 * players, obs)  # the bench's warm-up: games at every stage
run.call(steps, obs)
"""


def _env() -> dict:
    env = dict(os.environ, NUMBA_CPU_NAME="haswell", NUMBA_CPU_FEATURES=HASWELL, NUMBA_NUM_THREADS="1",
               GLIBC_TUNABLES="glibc.cpu.x86_rep_stosb_threshold=1073741824", PYTHONHASHSEED="0")
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def _compiled(path: Path) -> dict:
    """The events of a cachegrind output file in code without a file or function name:
    the compiled kernels (numba's code has no symbols for valgrind). Counting only these
    leaves out the interpreter and the runtime's threads, whose counts vary a little
    from run to run."""
    tot = dict.fromkeys(EVENTS, 0)
    fl = fn = None
    seen = False
    for line in path.read_text().splitlines():
        if line.startswith("fl="):
            fl = line[3:]
        elif line.startswith("fn="):
            fn = line[3:]
        elif line[:1].isdigit() and fl == "???" and fn == "???":
            seen = True
            for k, v in zip(EVENTS, line.split()[1:]):
                tot[k] += int(v)
    if not seen:
        raise RuntimeError(f"{path}: no events in unnamed code (did valgrind run the kernels?)")
    return tot


def _counted(tmp: Path, game: str, players: int, games: int, steps: int, obs: bool) -> dict:
    out = tmp / f"cg.{game}.{players}.{int(obs)}.{steps}"
    cmd = ["valgrind", "--tool=cachegrind", "--cache-sim=no", "--branch-sim=yes", f"--cachegrind-out-file={out}",
           sys.executable, "-c", PLAY, game, str(players), str(games), str(steps), "1" if obs else "0"]
    subprocess.run(cmd, env=_env(), check=True, capture_output=True)
    return _compiled(out)


def count(game: str, players: int, games: int = 64, steps: int = 1000) -> dict:
    """Per agent step of ``game`` at ``players`` seats, without and with observations."""
    # compile (or load) both loops' haswell build outside valgrind, where it takes seconds
    for obs in "01":
        subprocess.run([sys.executable, "-c", PLAY, game, str(players), "8", "1", obs], env=_env(), check=True,
                       capture_output=True)
    res = {"game": game, "players": players, "games": games}
    with tempfile.TemporaryDirectory(prefix="ripmarket-icount-") as d, ThreadPoolExecutor(2) as pool:
        for obs in (False, True):
            lo, hi = pool.map(lambda s: _counted(Path(d), game, players, games, s, obs), (steps, 3 * steps))
            res["with_obs" if obs else "without_obs"] = per_step(lo, hi, games * 2 * steps)
    return res


def per_step(lo: dict, hi: dict, steps: int) -> dict:
    """The events of the longer run less the shorter one's, per agent step between them."""
    per = {k: (hi[k] - lo[k]) / steps for k in EVENTS}
    return {"instructions": round(per["Ir"], 1), "cond_branches": round(per["Bc"], 1),
            "cond_mispredicted_sim": round(per["Bcm"], 2), "indirect_branches": round(per["Bi"], 1),
            "indirect_mispredicted_sim": round(per["Bim"], 2)}


def parse_table(text: str) -> tuple[str, int]:
    """``GAME[:PLAYERS]`` -> (game, players): the game's default table without PLAYERS;
    an unknown game or table is refused here, before valgrind starts."""
    from ripmarket_env.app.bench import bench_table

    game, sep, players = text.partition(":")
    if not game or (sep and not players.isdigit()):
        raise SystemExit(f"instructions.py: {text!r} is not GAME[:PLAYERS] (e.g. ripmarket:6)")
    try:
        return bench_table(game, int(players) if sep else None)
    except ValueError as e:
        raise SystemExit(f"instructions.py: {text!r}: {e}") from None


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("tables", nargs="*", metavar="GAME[:PLAYERS]",
                    help="default: every game at its default table (GameSpec.default_players)")
    ap.add_argument("--games", type=int, default=64, help="games in the batch (default 64)")
    ap.add_argument("--steps", type=int, default=1000,
                    help="agent steps a game in the shorter run; the longer runs 3 times as many (default 1000)")
    args = ap.parse_args(argv)
    if args.games < 1 or args.steps < 1:
        raise SystemExit("instructions.py: --games and --steps must be at least 1")
    from ripmarket_env.games import ids

    tables = [parse_table(t) for t in (args.tables or ids())]
    if shutil.which("valgrind") is None:
        raise SystemExit("instructions.py: valgrind is not on PATH (the counts are cachegrind's)")
    for game, players in tables:
        print(json.dumps(count(game, players, args.games, args.steps)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
