"""``ripmarket bench --suite bot``: how long a bot takes to decide one move of one game.

A person at the web page, or a program calling ``POST /api/bots/{name}/act``, waits for
one decision of one game, not for a batch: this suite measures exactly that. Decisions
are sampled from seeded random play (only decisions with a choice, every seat and phase
of the game, Ghost turns included), then each agent decides every sample with
``act(observation, mask)``, one call at a time, timed with ``perf_counter``. Torch and
numba are held to one thread, so the figure is one CPU core's. Every agent is warmed up
first (kernels compiled, network loaded) and the warm-up is not timed.

The target is a decision in under ``TARGET_MS`` milliseconds at the 95th percentile.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

#: The per-decision target (milliseconds, 95th percentile, one core).
TARGET_MS = 5.0
WARMUP = 5


def default_agents(game: str) -> list[str]:
    """The bots timed when none are named: the game's ``bench_bots`` (its trained bot, a
    heuristic, its search; ``agents.game_agents``), ``random`` for a game without any."""
    import agents

    return agents.game_agents(game).bench()


def default_players(game: str) -> int:
    """The table timed when none is given: the game's ``bench_players``, else its default."""
    import agents
    from ripmarket_env.games import get

    return agents.game_agents(game).bench_players or get(game).default_players


def game_tables(game: str, players=None) -> list[tuple[int, dict]]:
    """The tables timed: ``(players, rules)`` for each count of ``players`` (default: every
    count the game allows, its ``extras["player_counts"]`` or min..max), in each of the
    game's modes (``extras["modes"]``, the rules field ``mode``) when it has some."""
    from ripmarket_env.games import get

    spec = get(game)
    if players is None:
        listed = (spec.extras or {}).get("player_counts")
        players = sorted(listed) if listed else range(spec.min_players, spec.max_players + 1)
    modes = (spec.extras or {}).get("modes") or (None,)
    return [(int(n), {"mode": m} if m else {}) for n in players for m in modes]


def table_label(players: int, rules: dict) -> str:
    """``<N>p`` and the table's rules values: ``6p``, ``4p-ffa`` (the game's table keys)."""
    return f"{int(players)}p" + "".join(f"-{v}" for _, v in sorted(rules.items()))


def sample_decisions(game: str, players: int, n: int, seed: int = 0,
                     rules: dict | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``n`` (observation, mask) pairs of decisions with at least two legal actions, from
    seeded random play of single games (a new game whenever one ends) at ``players`` and
    the rules fields ``rules`` (None: the game's default rules)."""
    from ripmarket_env.games import get

    spec = get(game)
    eng = spec.make_engine(spec.make_rules(rules={**(rules or {}), "num_players": int(players)}), batch_size=1)
    rng = np.random.default_rng(seed)
    eng.reset([int(rng.integers(2**31 - 1))])
    obs, masks = [], []
    while len(obs) < n:
        if eng.terminated[0]:
            eng.reset([int(rng.integers(2**31 - 1))])
        mask = eng.legal_mask()[0]
        legal = np.flatnonzero(mask)
        if len(legal) >= 2:
            obs.append(eng.observe()[0].copy())
            masks.append(mask.copy())
        eng.step([int(rng.choice(legal))])
    return np.stack(obs).astype(np.float32), np.stack(masks).astype(bool)


def _one_thread() -> dict[str, int]:
    threads = {}
    try:
        import numba

        numba.set_num_threads(1)
        threads["numba"] = int(numba.get_num_threads())
    except ImportError:  # pragma: no cover - numba is a core dependency
        pass
    try:
        import torch

        torch.set_num_threads(1)
        threads["torch"] = int(torch.get_num_threads())
    except ImportError:
        pass
    return threads


def time_agent(agent, obs: np.ndarray, masks: np.ndarray) -> dict[str, Any]:
    """Milliseconds per ``act`` call over the samples (after ``WARMUP`` untimed calls);
    every answer is checked to be legal."""
    for i in range(min(WARMUP, len(obs))):
        agent.act(obs[i], masks[i])
    ms = np.empty(len(obs))
    for i in range(len(obs)):
        t0 = time.perf_counter()
        a = agent.act(obs[i], masks[i])
        ms[i] = (time.perf_counter() - t0) * 1e3
        if not masks[i][int(a)]:
            raise RuntimeError(f"the agent answered the illegal action {a} on sample {i}")
    p95 = float(np.percentile(ms, 95))
    return {"decisions": int(len(ms)), "mean_ms": float(ms.mean()), "median_ms": float(np.median(ms)),
            "p95_ms": p95, "max_ms": float(ms.max()), "under_target": p95 < TARGET_MS}


def make_bots(names, game: str, seed: int = 0) -> dict[str, Any]:
    """Each name's agent (``eval.evaluate.make_agent``): an unknown name or an unusable
    checkpoint raises here, before any timing."""
    from eval.evaluate import make_agent

    return {name: make_agent(name, seed=seed, game=game) for name in names}


def run_latency(names, players=None, decisions: int = 200, seed: int = 0, game: str | None = None,
                on_config=None, bots: dict[str, Any] | None = None) -> dict[str, Any]:
    """The report: one row per agent and table (``game_tables(game, players)``: each count
    of ``players``, default every count of the game, in each of its modes). ``names``:
    registered agent names or checkpoint files of ``game`` (``make_bots``; ``bots``: the
    agents already made from them)."""
    from ripmarket_env.games import ids

    game = game or ids()[0]
    threads = _one_thread()
    if bots is None:
        bots = make_bots(names, game, seed)  # an unknown name fails here, first
    tables = game_tables(game, players)
    rows = []
    for P, rules in tables:
        obs, masks = sample_decisions(game, P, int(decisions), seed, rules)
        label = table_label(P, rules)
        for name, bot in bots.items():
            row = {"agent": name, "players": P, "table": label, "rules": dict(rules), **time_agent(bot, obs, masks)}
            rows.append(row)
            if on_config is not None:
                on_config(f"{name}, table {label}")
    return {
        "game": game,
        "benchmark": "one decision of one game: agent.act(observation, mask), decisions with a choice from seeded random play",
        "unit": "milliseconds per decision",
        "threads": threads,
        "target": {"p95_ms": TARGET_MS},
        "config": {"agents": list(names), "players": sorted({p for p, _ in tables}),
                   "tables": [table_label(p, r) for p, r in tables], "decisions": int(decisions), "seed": int(seed)},
        "results": rows,
    }


def render_rich(report: dict):
    from rich.table import Table

    t = Table(title=f"{report['game']}: milliseconds per decision, one game, one core "
                    f"(target: 95th percentile under {report['target']['p95_ms']:g} ms)")
    for col in ("agent", "table", "decisions", "median", "p95", "max", "under target"):
        t.add_column(col, justify="left" if col == "agent" else "right")
    for r in report["results"]:
        t.add_row(r["agent"], r["table"], str(r["decisions"]), f"{r['median_ms']:.2f}", f"{r['p95_ms']:.2f}",
                  f"{r['max_ms']:.2f}", "yes" if r["under_target"] else "no")
    return t
