"""Head-to-head Black Market matches with seat rotation and duplicate deals.

``match(a, b, games, num_players, mode, seed)`` plays agent ``a`` against agent ``b``:
in team mode ``a`` holds every seat of one side and ``b`` the other; in ffa ``a`` holds
one seat and ``b`` the rest. Each deal is played twice with the roles swapped (duplicate
deals), and the ``a`` seat rotates through the sides and the first-player draw. Returns
wins, losses, draws of ``a``, the win rate and its Wilson 95% interval, the average game
length in turns and the games that reached the ``max_turns`` cap, and per game ``a``'s outcome (1 win,
0.5 draw, 0 loss) and whether ``a``'s side (ffa: seat) took the first turn. All games of a match
run as one engine batch through the zoo's arena loop (``eval.arena.play``).

Tournaments and ratings of several agents are the main runner's
(``ripmarket tournament --game black-market``, ``eval.tournament``); this module is the
two-agent match the trained bots' figures and tests use.
"""

from __future__ import annotations

import numpy as np

from eval.ratings import wilson_interval as wilson  # the zoo's Wilson interval (eval.bm_balance uses it too)
from ripmarket_env.games.blackmarket import RulesConfig


def play(agents_of_seat: list[list], rules: RulesConfig, seeds: list[int]):
    """Play one game per seed through the zoo's arena (``eval.arena.play``);
    ``agents_of_seat[g][q]`` decides seat q of game g. Returns the final engine."""
    from eval.arena import play as arena_play
    from ripmarket_env.games import get

    pool: list = []
    index: dict[int, int] = {}
    seats = np.zeros((len(seeds), rules.num_players), np.int64)
    for g, row in enumerate(agents_of_seat):
        for q, ag in enumerate(row):
            if id(ag) not in index:
                index[id(ag)] = len(pool)
                pool.append(ag)
            seats[g, q] = index[id(ag)]
    return arena_play(get("black-market"), rules, seeds, seats, pool).engine


def match(a, b, games: int = 200, num_players: int = 2, mode: str = "teams", seed: int = 0, **rules) -> dict:
    rules = RulesConfig(num_players=num_players, mode=mode, **rules)
    P = num_players
    deals = max(1, games // 2)
    seeds, seats, table = [], [], []
    for i in range(deals):
        for swap in (0, 1):
            s = (i + swap) % 2 if mode == "teams" else (i * 2 + swap) % P
            seeds.append(seed * 1_000_003 + i)
            seats.append(s)
            if mode == "teams":
                table.append([a if q % 2 == s else b for q in range(P)])
            else:
                table.append([a if q == s else b for q in range(P)])
    eng = play(table, rules, seeds)
    w = l = d = 0
    outcomes = []
    for g, s in enumerate(seats):
        rew = float(eng.state["final_rewards"][g, s])
        if rew > 1e-6:
            w += 1
            outcomes.append(1.0)
        elif rew < -1e-6:
            l += 1
            outcomes.append(0.0)
        else:
            d += 1
            outcomes.append(0.5)
    n = len(seeds)
    lo, hi = wilson(w + 0.5 * d, n)
    return {"games": n, "wins": w, "losses": l, "draws": d, "win_rate": (w + 0.5 * d) / n, "ci95": (lo, hi),
            "mean_turns": float(eng.state["turn"].mean()), "capped": int((eng.state["end_reason"] == 2).sum()),
            "outcomes": outcomes, "a_first": [int(eng.state["first_player"][g]) % 2 == s % 2 if mode == "teams"
                                              else int(eng.state["first_player"][g]) == s for g, s in enumerate(seats)]}


def main(argv=None) -> None:
    """``python -m eval.bm_match AGENT --players 2 --against bm-builder,bm-rusher --games 1000``
    (AGENT: a registered name or a checkpoint .zip with its .json)."""
    import argparse
    import json

    import agents

    ap = argparse.ArgumentParser(description="Black Market head-to-head matches (duplicate deals, seats swapped).")
    ap.add_argument("agent")
    ap.add_argument("--players", type=int, default=2, choices=(2, 4, 6))
    ap.add_argument("--mode", default="teams", choices=("teams", "ffa"))
    ap.add_argument("--against", default="bm-builder,bm-rusher,bm-denier,random")
    ap.add_argument("--games", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=2024)
    args = ap.parse_args(argv)
    if args.agent.endswith(".zip"):
        from agents.blackmarket.policy import load_agent

        a = load_agent(args.agent)
    else:
        a = agents.make(args.agent, game="black-market", seed=1)
    for name in args.against.split(","):
        r = match(a, agents.make(name.strip(), game="black-market", seed=7), games=args.games,
                  num_players=args.players, mode=args.mode, seed=args.seed)
        r.pop("outcomes")
        r.pop("a_first")
        print(name.strip(), json.dumps(r), flush=True)


if __name__ == "__main__":
    main()
