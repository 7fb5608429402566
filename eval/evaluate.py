"""One agent against the zoo: ``ripmarket evaluate AGENT --players 6 --games 2000``.

The agent sits in one seat (rotating over the seats game by game); every other seat is an
agent drawn uniformly from the zoo for that seat and game (by default the game's
heuristics, ``agents.game_agents(game).zoo()``; ``random`` for a game without any). A win
is a positive final reward (R.I.P. Market: R-11.1, co-winners included). Games are played in fixed jobs of ``JOB``
games, each with its own seed derived from the run's seed, spread over worker processes
(``eval.arena.run_pool``), so the result depends on the seed and the game count, never on
the number of workers. The training league's evaluation (``train.selfplay``) plays the
same games through ``evaluate_vs_zoo``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from agents.base import DEFAULT_GAME
from eval.ratings import wilson_interval

JOB = 100
#: z of the evaluations' 95% interval (their published figures were computed with 1.96)
Z = 1.96


def default_zoo(game: str = DEFAULT_GAME) -> list[str]:
    """The opponents of ``game`` when none are named: its heuristics (``random`` without)."""
    import agents

    return agents.game_agents(game).zoo()


def _zoo_checkpoint(path: Path) -> bool:
    """Whether ``path`` is a checkpoint of ``ripmarket train`` (its metadata inside the zip)."""
    import zipfile

    try:
        with zipfile.ZipFile(path) as z:
            return "ripmarket.json" in z.namelist()
    except (OSError, zipfile.BadZipFile):
        return False


def make_agent(spec: str, seed: int | None = None, game: str = DEFAULT_GAME):
    """A registered agent name of ``game``, or the path of a checkpoint (``.zip``) of it."""
    import agents

    if spec in agents.names(game):
        return agents.make_seeded(spec, seed, game=game)
    p = Path(spec)
    loader = agents.game_agents(game).checkpoint_loader
    if p.suffix == ".zip" and p.is_file() and loader and not _zoo_checkpoint(p):  # the game's own older format
        from importlib import import_module

        module, _, name = loader.partition(":")
        return getattr(import_module(module), name)(p, seed=seed)
    if p.suffix == ".zip" and p.is_file():
        from agents.checkpoint import require_game
        from agents.policy import load_agent

        require_game(p, game)
        return load_agent(p, seed=seed)
    if p.suffix == ".zip":  # meant as a checkpoint: say what is wrong with the path
        from ripmarket_env.core.jsonfile import why_not_a_file

        raise ValueError(f"checkpoint file {spec!r} {why_not_a_file(p)}; allowed: a checkpoint file (.zip) of {game} or one of "
                         f"{', '.join(agents.names(game))}")
    raise ValueError(f"unknown agent {spec!r} for {game}; allowed: a checkpoint file (.zip) or one of "
                     f"{', '.join(agents.names(game))}")


def evaluate_vs_zoo(agent, num_players: int, games: int, zoo: list[str], seed: int = 0,
                    batch: int = 256, progress=None, report=None, game: str = DEFAULT_GAME,
                    rules: dict | None = None) -> dict[str, Any]:
    """``agent`` in one seat (rotating over seats), zoo agents (drawn per seat) elsewhere,
    under the game's ``rules`` fields (a mapping without ``num_players``; None: the
    game's default rules at ``num_players``).

    Plays ``games`` games in arena tables of ``batch`` games; a win is a positive final
    reward under ``reward_mode="win"`` (co-winners included). Returns wins, games, win
    rate with its 95% Wilson interval and the mean reward. ``progress(played)`` is called
    after every table, ``report(n)`` for every ``n`` games newly over."""
    import agents as zoo_reg
    from eval import arena
    from ripmarket_env.games import get

    spec = get(game)
    rules = spec.make_rules(num_players) if rules is None else spec.make_rules(rules={**rules, "num_players": num_players})
    rng = np.random.default_rng(np.random.SeedSequence([seed, 0xE7A1]))
    # seeded, so an evaluation is reproducible
    opp = [zoo_reg.make_seeded(z, int(rng.integers(2**31)) + k, game=game) for k, z in enumerate(zoo)]
    players = [*opp, agent]
    wins = 0.0
    played = 0
    rewards = []
    while played < games:
        B = min(batch, games - played)
        seeds = [int(s) for s in rng.integers(0, 2**31 - 1, B)]
        bot_seat = (np.arange(B) + played) % num_players
        who = rng.integers(0, len(opp), (B, num_players))  # zoo agent per seat
        who[np.arange(B), bot_seat] = len(opp)  # the evaluated agent
        res = arena.play(spec, rules, seeds, who, players, report=report)
        r = res.rewards[np.arange(B), bot_seat]
        rewards.extend(r.tolist())
        wins += float((r > 0).sum())
        played += B
        if progress is not None:
            progress(played)
    lo, hi = wilson_interval(wins, played, z=Z)
    return {"games": played, "wins": wins, "win_rate": wins / played, "wilson95": [lo, hi],
            "num_players": num_players, "zoo": list(zoo), "mean_reward": float(np.mean(rewards))}


def _job(args, report=None) -> dict[str, Any]:
    from ripmarket_env.games import get

    spec, num_players, games, zoo, seed, first, game, rules = args
    get(game)  # a worker process or Ray task builds the game first: a plugin game's checkpoint is then its own
    agent = make_agent(spec, seed=seed + first, game=game)
    res = evaluate_vs_zoo(agent, num_players, games, list(zoo), seed=seed * 1_000_003 + first, batch=games,
                          report=report, game=game, rules=rules)
    res["first"] = first
    return res


def evaluate(spec: str, num_players: int = 6, games: int = 2000, zoo=None, seed: int = 1,
             workers: int = 2, progress: bool = True, ray_address: str | None = None,
             game: str = DEFAULT_GAME, rules: dict | None = None) -> dict[str, Any]:
    """Win rate of ``spec`` against ``zoo`` (default: ``default_zoo(game)``) over ``games``
    games, with its 95% Wilson interval, under the game's ``rules`` fields (a mapping
    without ``num_players``, e.g. Black Market's ``{"mode": "ffa"}``; None: its default
    rules). Parity is one over the number of sides: in a game of sides (Black Market's
    teams) the evaluated seat wins with its side, zoo teammates beside it.

    ``ray_address``: run the jobs as Ray tasks (``eval.raypool``) instead of ``workers``
    local processes; the result is the same."""
    from eval import arena
    from eval.tournament import sides_of
    from ripmarket_env.games import get

    zoo = default_zoo(game) if zoo is None else list(zoo)
    make_agent(spec, game=game)  # fail early, in this process, on an unknown agent or unusable checkpoint
    rules = None if rules is None else dict(rules)
    jobs = [(spec, num_players, min(JOB, games - g), tuple(zoo), seed, g, game, rules) for g in range(0, games, JOB)]
    gspec = get(game)
    table = gspec.make_rules(num_players, **(rules or {}))
    sides = sides_of(gspec, table)
    results = arena.run_pool(_job, jobs, workers, total=games, progress=progress, threads=1,
                             label=f"evaluate {spec} vs {','.join(zoo)}",
                             warm=lambda: arena.warm_up(gspec, table), ray_address=ray_address)
    wins = float(sum(r["wins"] for r in results))
    n = int(sum(r["games"] for r in results))
    lo, hi = wilson_interval(wins, n, z=Z)
    return {"agent": spec, "game": game, "num_players": num_players, **({"rules": rules} if rules else {}),
            "zoo": list(zoo), "seed": seed, "games": n, "wins": wins, "win_rate": wins / n, "wilson95": [lo, hi],
            "parity": 1.0 / (num_players if sides is None else len(set(sides))),
            "mean_reward": float(np.mean([r["mean_reward"] for r in results]))}
