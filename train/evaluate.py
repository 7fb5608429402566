"""One agent against the zoo: ``ripmarket evaluate AGENT --players 6 --games 2000``.

The agent sits in one seat (rotating over the seats game by game); every other seat is an
agent drawn uniformly from the zoo for that seat and game. A win is a positive final
reward under R-11.1 (co-winners included). Games are played in fixed jobs of ``JOB``
games, each with its own seed derived from the run's seed, spread over worker processes,
so the result depends on the seed and the game count, never on the number of workers.
"""

from __future__ import annotations

import multiprocessing
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from train.selfplay import evaluate_vs_zoo, wilson

JOB = 100
DEFAULT_ZOO = ("greedy", "survivor", "shark", "hoarder", "trickster")


def make_agent(spec: str, seed: int | None = None):
    """A registered agent name, or the path of a checkpoint (``.zip``)."""
    import agents

    if spec in agents.names():
        return agents.make_seeded(spec, seed)
    p = Path(spec)
    if p.suffix == ".zip" and p.is_file():
        from agents.policy import load_agent

        return load_agent(p, seed=seed)
    raise ValueError(f"unknown agent {spec!r}; allowed: a checkpoint file (.zip) or one of {', '.join(agents.names())}")


def _job(args) -> dict[str, Any]:
    spec, num_players, games, zoo, seed, first = args
    import torch

    torch.set_num_threads(1)
    agent = make_agent(spec, seed=seed + first)
    res = evaluate_vs_zoo(agent, num_players, games, list(zoo), seed=seed * 1_000_003 + first, batch=games)
    res["first"] = first
    return res


def evaluate(spec: str, num_players: int = 6, games: int = 2000, zoo=DEFAULT_ZOO, seed: int = 1,
             workers: int = 2, progress: bool = True, ray_address: str | None = None) -> dict[str, Any]:
    """Win rate of ``spec`` against ``zoo`` over ``games`` games, with its 95% Wilson interval.

    ``ray_address``: run the jobs as Ray tasks (``eval.raypool``) instead of ``workers``
    local processes; the result is the same."""
    from eval.progress import Progress

    make_agent(spec)  # fail early, in this process, on an unknown agent or unusable checkpoint
    jobs = [(spec, num_players, min(JOB, games - g), tuple(zoo), seed, g) for g in range(0, games, JOB)]
    results = []
    with Progress(games, f"evaluate {spec} vs {','.join(zoo)}", enabled=progress) as bar:
        if ray_address:
            from eval.raypool import ray_map

            results = ray_map(_job, jobs, ray_address, on_result=lambda res: bar.advance(res["games"]))
        else:
            with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn")) as pool:
                for res in pool.map(_job, jobs):
                    results.append(res)
                    bar.advance(res["games"])
    wins = float(sum(r["wins"] for r in results))
    n = int(sum(r["games"] for r in results))
    lo, hi = wilson(wins, n)
    return {"agent": spec, "num_players": num_players, "zoo": list(zoo), "seed": seed, "games": n,
            "wins": wins, "win_rate": wins / n, "wilson95": [lo, hi], "parity": 1.0 / num_players,
            "mean_reward": float(np.mean([r["mean_reward"] for r in results]))}
