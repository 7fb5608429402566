"""Head-to-head matches of two agents, for every registered game: seat rotation and
duplicate deals.

``match(a, b, games, num_players, seed, game=..., **rules)`` plays agent ``a`` against agent
``b``: in a game of sides (``spec.extras["sides"]``, e.g. Black Market's team mode) ``a``
holds every seat of one side and ``b`` the other; otherwise ``a`` holds one seat and ``b``
the rest. Each deal is played twice with the roles swapped (duplicate deals), and ``a``'s
side (or seat) rotates. Returns wins, losses, draws of ``a`` (by the sign of its final
reward), the win rate and its Wilson 95% interval, the mean game length in rounds and
decisions, per game ``a``'s outcome (1 win, 0.5 draw, 0 loss) and whether ``a``'s side took
the first turn (games whose state has ``first_player``), and the final ``engine`` (for a
game's own figures). All games of a match run as one engine batch through the arena
(``eval.arena.play``).

Tournaments and ratings of several agents are ``eval.tournament``'s; this is the
two-agent match that trained bots' selection and figures use (``python -m eval.match``).
"""

from __future__ import annotations

import numpy as np

from agents.base import DEFAULT_GAME
from eval.ratings import wilson_interval as wilson


def play(agents_of_seat: list[list], rules, seeds: list[int], game: str = DEFAULT_GAME, **arena):
    """Play one game per seed through the arena (``eval.arena.play``); ``agents_of_seat[g][q]``
    decides seat q of game g; ``arena``: the arena's keyword arguments (``decide``,
    ``observers``). Returns the arena's ``Result``."""
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
    return arena_play(get(game), rules, seeds, seats, pool, **arena)


def match(a, b, games: int = 200, num_players: int = 2, seed: int = 0, game: str = DEFAULT_GAME, *,
          decide=None, observers=(), **rules) -> dict:
    """``a`` against ``b`` over ``games`` games (rounded down to pairs of duplicate deals, at
    least one pair); ``rules``: rules config fields (e.g. ``mode="ffa"``). ``decide`` and
    ``observers``: the arena's (``eval.arena.play``), e.g. an analysis that reads the
    table's engine (``eval.clairvoyant``)."""
    from eval.tournament import game_length, sides_of
    from ripmarket_env.games import get

    spec = get(game)
    rules = spec.make_rules(num_players, **rules)
    P = rules.num_players
    sides = sides_of(spec, rules)
    deals = max(1, games // 2)
    seeds, seats, table = [], [], []
    for i in range(deals):
        for swap in (0, 1):
            if sides is not None:  # a holds side s, its first seat is s's first
                s = (i + swap) % (max(sides) + 1)
                mine = [q for q in range(P) if sides[q] == s]
            else:
                s = (i * 2 + swap) % P
                mine = [s]
            seeds.append(seed * 1_000_003 + i)
            seats.append(mine)
            table.append([a if q in mine else b for q in range(P)])
    res = play(table, rules, seeds, game, decide=decide, observers=observers)
    eng = res.engine
    w = l = d = 0
    outcomes = []
    for g, mine in enumerate(seats):
        rew = float(eng.state["final_rewards"][g, mine[0]])
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
    out = {"games": n, "wins": w, "losses": l, "draws": d, "win_rate": (w + 0.5 * d) / n, "ci95": (lo, hi),
           "mean_rounds": float(game_length(spec, eng).mean()), "mean_decisions": float(np.mean(res.steps)),
           "outcomes": outcomes, "engine": eng}
    if "first_player" in eng.state.dtype.names:
        first = np.asarray(eng.state["first_player"], np.int64)
        side = (lambda q: sides[q]) if sides is not None else (lambda q: q)
        out["a_first"] = [side(int(first[g])) == side(mine[0]) for g, mine in enumerate(seats)]
    return out


def add_match_arguments(ap, games: int, seed: int) -> None:
    """The options of a match's command line: ``--game``, ``--players``, ``--mode``,
    ``--games`` and ``--seed`` (with these defaults)."""
    from ripmarket_env.games import ids

    ap.add_argument("--game", default=DEFAULT_GAME, choices=ids())
    ap.add_argument("--players", type=int, default=2)
    ap.add_argument("--mode", default=None, help="the game's mode (games with modes, e.g. teams or ffa)")
    ap.add_argument("--games", type=int, default=games)
    ap.add_argument("--seed", type=int, default=seed)


def main(argv=None) -> None:
    """``python -m eval.match AGENT --game G --players 2 --against A,B --games 1000``
    (AGENT: a registered name or a checkpoint .zip of the game)."""
    import argparse
    import json

    import agents
    from eval.evaluate import default_zoo, make_agent

    ap = argparse.ArgumentParser(description="Head-to-head matches (duplicate deals, seats swapped).")
    ap.add_argument("agent")
    add_match_arguments(ap, games=1000, seed=2024)
    ap.add_argument("--against", default=None, help="comma-separated agents (default: the game's heuristics)")
    args = ap.parse_args(argv)
    try:
        a = make_agent(args.agent, seed=1, game=args.game)
    except (ValueError, OSError) as exc:
        ap.error(str(exc))
    against = args.against.split(",") if args.against else default_zoo(args.game)
    rules = {"mode": args.mode} if args.mode else {}
    for name in against:
        r = match(a, agents.make(name.strip(), game=args.game, seed=7), games=args.games,
                  num_players=args.players, seed=args.seed, game=args.game, **rules)
        for k in ("outcomes", "a_first", "engine"):
            r.pop(k, None)
        print(name.strip(), json.dumps(r), flush=True)


if __name__ == "__main__":
    main()
