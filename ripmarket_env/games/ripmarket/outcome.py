"""R.I.P. Market's outcome of finished games: winners (R-9) and finishing order (R-11.2).

Registered as ``SPEC.extras["outcome"]``, which the arena (``eval.arena``) reads: the
winners (co-winners of R-9.2 and the living of a ``max_rounds`` draw included) share the
first place; every other seat is ordered by its elimination index (``state["elim"]``)
descending, later deaths ahead; seats eliminated in the same resolution share an index
and so share a place.
"""

from __future__ import annotations

import numpy as np


def finishing_order(elim: np.ndarray, winners: np.ndarray) -> tuple[list[list[int]], list[int], list[float]]:
    """``(order, place, placement)`` of one finished game: the groups of seats that
    finished together, best first; per seat 1 + the seats strictly ahead; per seat the
    average of the places its group spans (as in R-11.2)."""
    P = len(winners)
    big = np.iinfo(np.int64).max
    key = np.array([big if winners[p] else int(elim[p]) for p in range(P)], dtype=np.int64)
    levels = sorted(set(key.tolist()), reverse=True)
    order = [[p for p in range(P) if key[p] == lv] for lv in levels]
    place = [0] * P
    placement = [0.0] * P
    ahead = 0
    for group in order:
        for p in group:
            place[p] = ahead + 1
            placement[p] = ahead + (len(group) + 1) / 2.0
        ahead += len(group)
    return order, place, placement


def outcome(engine) -> tuple[np.ndarray, np.ndarray]:
    """``(winners, places)`` of every game of ``engine``, both ``(games, players)``."""
    st = engine.state
    P = engine.num_players
    winners = st["winners"][:, :P].astype(bool)
    places = np.array([finishing_order(st["elim"][g, :P], winners[g])[1] for g in range(len(st))],
                      dtype=np.int64).reshape(len(st), P)
    return winners, places
