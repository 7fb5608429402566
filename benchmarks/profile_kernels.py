"""Where a game's random-play step goes: its kernels timed one by one on the same rows.

    PYTHONPATH=. python benchmarks/profile_kernels.py GAME [PLAYERS] [--batch 4096] [--reps 5]

A batch of games is played to mixed stages (random legal play, as ``ripmarket bench``
does), then frozen as a snapshot; each measurement runs a compiled loop over copies of
the snapshot rows (the same rows for every kernel), single-threaded, and reports ns per
row (the median of ``--reps`` runs):

- ``copy``: copying the row into a scratch row (subtracted from the ones below that copy);
- ``pick``: drawing a random legal action from the mask (the bench's ``random_legal``);
- ``apply``: the game's ``apply_action`` for that action (no advance);
- ``step``: ``step_game`` (apply, then ``advance``: the turn's bookkeeping, the next legal
  mask, the engine-taken one-option decisions); ``advance`` is ``step - apply``;
- ``mask``: the game's legal-mask kernel alone (``compute_mask`` / ``fill_mask``);
- ``encode``: ``encode_obs`` of the deciding seat;
- ``reset``: ``reset_game`` (a new game to its first decision), and per agent step
  (divided by the mean agent steps per game).

It also runs the bench loops themselves (``random_play``, ``random_play_obs``) with one
numba thread, so the sum can be checked against the real loop. The kernels are the
game's own module functions, found by name on the module of its ``reset_game``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import numpy as np
from numba import njit

from ripmarket_env.core.kernels import bench_u32, random_legal


def _loops(apply_action, step_game, mask_fn, encode_obs, reset_game):
    @njit
    def copy_only(S0, S, n, rounds):
        for _ in range(rounds):
            for g in range(n):
                S[g] = S0[g]

    @njit
    def pick(S0, S, n, rounds, rng):
        acc = 0
        for _ in range(rounds):
            for g in range(n):
                acc += random_legal(S0[g], rng, g)
        return acc

    def replaying(kernel):
        """A loop that restores every game and applies ``kernel`` with its action."""

        @njit
        def run(S0, S, TB, c, n, rounds, acts):
            for _ in range(rounds):
                for g in range(n):
                    S[g] = S0[g]
                    kernel(S[g], TB[0], c, acts[g])

        return run

    apply, step = replaying(apply_action), replaying(step_game)

    if mask_fn.py_func.__code__.co_argcount == 2:  # mask(r, c)

        @njit
        def mask(S0, S, TB, c, n, rounds):
            for _ in range(rounds):
                for g in range(n):
                    mask_fn(S[g], c)
    else:  # mask(r, T, c)

        @njit
        def mask(S0, S, TB, c, n, rounds):
            for _ in range(rounds):
                for g in range(n):
                    mask_fn(S[g], TB[0], c)

    @njit
    def encode(S0, TB, c, n, rounds, offs, out):
        for _ in range(rounds):
            for g in range(n):
                encode_obs(S0[g], TB[0], c, np.int64(S0[g].actor), offs, out[g])

    @njit
    def reset(S, TB, c, n, rounds, seeds):
        for _ in range(rounds):
            for g in range(n):
                reset_game(S[g], TB[0], c, seeds[g])

    @njit
    def play_direct(S, TB, c, steps, bench_rng):
        finished = np.zeros(S.shape[0], np.int64)
        for g in range(S.shape[0]):
            r = S[g]
            for _ in range(steps):
                if r.done:
                    finished[g] += 1
                    reset_game(r, TB[0], c, np.uint64(bench_u32(bench_rng, g)))
                step_game(r, TB[0], c, random_legal(r, bench_rng, g))
        return finished

    return copy_only, pick, apply, step, mask, encode, reset, play_direct


def profile(game: str, players: int | None, batch: int = 4096, reps: int = 5, rows: int = 64) -> dict:
    import importlib

    import numba

    from ripmarket_env.app.bench import _Runner
    from ripmarket_env.games import get

    numba.set_num_threads(1)
    spec = get(game)
    P = players or spec.default_players
    run = _Runner(P, batch, game=game)
    eng = run.eng
    run.call(20 * P, False)  # mixed stages, as the bench warms up
    mod = importlib.import_module(eng.drivers._builder.kernels[0].py_func.__module__)
    mask_fn = getattr(mod, "compute_mask", None) or getattr(mod, "fill_mask")
    enc = eng.drivers._builder.kernels[2]
    fns = _loops(mod.apply_action, mod.step_game, mask_fn, enc, mod.reset_game)
    copy_only, pick, apply, step, mask, encode, reset, play_direct = fns
    S0 = eng.state.copy()
    live = np.flatnonzero(~S0["done"])[:rows]  # a sample that stays in cache, as a row does in the loop
    S0 = S0[live].copy()
    n = len(S0)
    S = S0.copy()
    TB, c, offs = eng.tables, eng.cfg, eng._offs
    out = np.zeros((n, eng.obs_size), np.float32)
    rng = np.arange(n, dtype=np.int64) * 2654435761 & 0xFFFFFFFF
    acts = np.zeros(n, np.int64)  # a legal action of each row, the same for every kernel
    for g in range(n):
        m = np.flatnonzero(S0["mask"][g])
        acts[g] = m[(int(rng[g]) * 7919 + g) % len(m)]
    seeds = (np.arange(n, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15))

    R = max(1, 200_000 // n)

    def timed(call, rounds=R):
        """ns per row of ``call(rounds)``, the median of ``reps`` runs."""
        call(1)  # compile / warm
        xs = []
        for _ in range(reps):
            c0 = time.process_time()
            call(rounds)
            xs.append((time.process_time() - c0) / (n * rounds) * 1e9)
        return statistics.median(xs)

    tc = timed(lambda k: copy_only(S0, S, n, k))
    res = {"copy": tc}
    res["pick"] = timed(lambda k: pick(S0, S, n, k, rng.copy()))
    res["apply"] = timed(lambda k: apply(S0, S, TB, c, n, k, acts)) - tc
    res["step"] = timed(lambda k: step(S0, S, TB, c, n, k, acts)) - tc
    res["advance"] = res["step"] - res["apply"]
    S[:] = S0
    res["mask"] = timed(lambda k: mask(S0, S, TB, c, n, k))
    res["encode"] = timed(lambda k: encode(S0, TB, c, n, k, offs, out))
    res["reset"] = timed(lambda k: reset(S, TB, c, n, k, seeds), max(1, R // 4))
    # the bench loops themselves, one thread, for comparison
    loop = {}
    for obs in (False, True):
        run.call(200, obs)
        c0 = time.process_time()
        k = 0
        while time.process_time() - c0 < 1.0:
            run.call(200, obs)
            k += 200 * batch
        loop["obs" if obs else "raw"] = (time.process_time() - c0) / k * 1e9
    play_direct(eng.state, TB, c, 200, run.rng)
    c0 = time.process_time()
    k = 0
    while time.process_time() - c0 < 1.0:
        play_direct(eng.state, TB, c, 200, run.rng)
        k += 200 * batch
    loop["raw, direct calls"] = (time.process_time() - c0) / k * 1e9
    # agent steps per game under random play
    e2 = _Runner(P, 1024, game=game, seed=1)
    fin = sum(e2.call(200, False) for _ in range(5))
    steps_per_game = 5 * 200 * 1024 / max(fin, 1)
    res["reset_per_step"] = res["reset"] / steps_per_game
    return {"game": game, "players": P, "rows": n, "state_bytes": S0.dtype.itemsize, "obs_size": eng.obs_size,
            "steps_per_game": steps_per_game, "ns_per_row": res, "loop_ns_per_step": loop}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("game")
    ap.add_argument("players", nargs="?", type=int)
    ap.add_argument("--batch", type=int, default=4096)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--rows", type=int, default=64, help="live rows timed (64: they stay in cache)")
    a = ap.parse_args(argv)
    r = profile(a.game, a.players, a.batch, a.reps, a.rows)
    print(f"{r['game']}, {r['players']} players: {r['rows']} live rows of {r['state_bytes']} bytes, "
          f"obs {r['obs_size']}, {r['steps_per_game']:.1f} agent steps per game")
    for k, v in r["ns_per_row"].items():
        print(f"  {k:15s} {v:8.1f} ns")
    for k, v in r["loop_ns_per_step"].items():
        print(f"  loop {k:10s} {v:8.1f} ns per agent step ({1e3 / v:.2f} M per CPU-s)")


if __name__ == "__main__":
    sys.exit(main())
