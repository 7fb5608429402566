"""``ripmarket bench --game black-market``: Black Market's speed figures.

* engine: agent steps per second of uniformly random legal play in the compiled kernel
  (the core driver ``random_play`` over the game's kernels: every step a random legal action, a finished game dealt
  again), without observations, per player count and batch size;
* AEC: agent steps per second of ``ripmarket_env.make("black-market")`` (PettingZoo
  wrappers on) and of the raw env against PettingZoo's ``texas_holdem_v4`` in the same
  process and the same loop, interleaved in time slices (``envbench._AecLoop``).

Targets (issue 13): 2,000,000 engine steps/s at batch 4096; the AEC env 3x texas_holdem_v4.
"""

from __future__ import annotations

import time

import numpy as np

ENGINE_TARGET = 2_000_000
AEC_RATIO_TARGET = 3.0


def bench_engine(players: int, batch: int, seconds: float) -> dict:
    from ripmarket_env.core.engine import kernel_view
    from ripmarket_env.games.blackmarket import Engine, RulesConfig
    eng = Engine(RulesConfig(num_players=players), batch)
    eng.reset(list(range(batch)))
    S, TB, c = kernel_view(eng.state), kernel_view(eng.tables), eng.cfg
    rng = np.arange(batch, dtype=np.int64) + 12345
    fn = eng.drivers.random_play
    per = max(1, int(200_000 // batch))
    fn(S, TB, c, 5, rng)  # compile / warm up
    steps = games = 0
    t0, c0 = time.perf_counter(), time.process_time()
    while time.perf_counter() - t0 < seconds:
        games += int(fn(S, TB, c, per, rng).sum())
        steps += per * batch
    dt, cpu = time.perf_counter() - t0, time.process_time() - c0
    return {"players": players, "batch": batch, "agent_steps_per_sec": steps / dt, "steps_per_cpu_sec": steps / cpu,
            "games_finished": games, "seconds": dt}


def bench_aec(seconds: float, players: int = 4) -> dict:
    import ripmarket_env
    from ripmarket_env.app.envbench import _AecLoop, _texas_env

    loops = {"env": _AecLoop(ripmarket_env.make("black-market", num_players=players)),
             "raw_env": _AecLoop(ripmarket_env.make("black-market", num_players=players, raw=True))}
    tenv, err = _texas_env()
    if tenv is not None:
        loops["texas_holdem_v4"] = _AecLoop(tenv)
    for loop in loops.values():
        loop.run(min(0.2, seconds / 4))
        loop.steps = loop.games = 0
        loop.seconds = loop.cpu = 0.0
    order = list(loops.values())
    rounds = 0
    while min(x.seconds for x in order) < seconds:
        for loop in order if rounds % 2 == 0 else order[::-1]:
            if loop.seconds < seconds:
                loop.run(max(0.02, min(0.25, seconds / 4)))
        rounds += 1
    out = {"players": players, **{k: v.result() for k, v in loops.items()}}
    if tenv is not None:
        t = out["texas_holdem_v4"]["agent_steps_per_sec"]
        out["ratio_vs_texas_holdem"] = out["env"]["agent_steps_per_sec"] / t
        out["raw_ratio_vs_texas_holdem"] = out["raw_env"]["agent_steps_per_sec"] / t
    else:
        out["texas_holdem_v4"] = {"missing": err}
        out["ratio_vs_texas_holdem"] = None
    return out


def run(players, batches, seconds, on_config=None) -> dict:
    from ripmarket_env.app.bench import environment

    report = {"game": "black-market", "environment": environment(), "engine": []}
    for P in players:
        for b in batches:
            report["engine"].append(bench_engine(P, b, seconds))
            if on_config:
                on_config(f"engine, {P} players, batch {b}")
    report["aec"] = bench_aec(seconds)
    if on_config:
        on_config("AEC env and texas_holdem_v4")
    best = max((r["agent_steps_per_sec"] for r in report["engine"] if r["batch"] == 4096), default=None)
    ratio = report["aec"]["ratio_vs_texas_holdem"]
    report["targets"] = {
        "engine_steps_per_sec_at_4096": {"target": ENGINE_TARGET, "measured": best,
                                         "met": None if best is None else best >= ENGINE_TARGET},
        "aec_vs_texas_holdem": {"target": AEC_RATIO_TARGET, "measured": ratio,
                                "met": None if ratio is None else ratio >= AEC_RATIO_TARGET},
    }
    report["environment"]["load_average_end"] = environment()["load_average"]
    return report
