"""A sha256 of every state and observation buffer of seeded random play, for every game.

    PYTHONPATH=. python benchmarks/engine_digest.py [--games 256] [--steps 210] [GAME ...]

For each registered game (or the ones named) and each table size (its
``extras["player_counts"]``, or ``min_players`` to ``max_players``): the bench's seeded batch of ``--games`` games
(``app.bench._Runner``, seed 0) plays ``--steps`` random legal steps, one
``random_play_obs`` call per step (the deciding seat's observation after each step,
auto-reset included); after every step the state buffer, that observation buffer and
every seat's observation of every game (``encode_serial``) go into the digest. One
line per game and table, then one line for all of them. Run it on two versions of the
engine (``PYTHONPATH`` of each): an optimisation of the kernels must print the same
digests.
"""

from __future__ import annotations

import argparse
import hashlib
import sys

import numpy as np


def digest(game: str, players: int, games: int = 256, steps: int = 210) -> str:
    from ripmarket_env.app.bench import _Runner

    run = _Runner(players, games, game=game)
    e = run.eng
    h = hashlib.sha256()
    h.update(e.state.tobytes())
    seats = np.zeros((players, games, e.obs_size), np.float32)
    for _ in range(steps):
        run.call(1, True)
        h.update(e.state.tobytes())
        h.update(run.out.tobytes())
        for v in range(players):
            viewers = np.full(games, v, np.int64)
            e.drivers.encode_serial(e.state, e.tables, e.cfg, viewers, e._offs, seats[v])
        h.update(seats.tobytes())
    return h.hexdigest()


def main(argv=None) -> int:
    from ripmarket_env import games as registry

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("game", nargs="*", help="game ids (default: every registered game)")
    ap.add_argument("--games", type=int, default=256)
    ap.add_argument("--steps", type=int, default=210)
    a = ap.parse_args(argv)
    total = hashlib.sha256()
    for game in a.game or registry.ids():
        spec = registry.get(game)
        sizes = spec.extras.get("player_counts") or range(spec.min_players, spec.max_players + 1)
        for p in sizes:
            d = digest(game, p, a.games, a.steps)
            total.update(d.encode())
            print(f"{game} {p}p {d}", flush=True)
    print(f"all {total.hexdigest()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
