"""Black Market's outcome of finished games for the arena and the tournaments
(``SPEC.extras["outcome"]`` and ``SPEC.extras["sides"]``).

* Team mode (BM-1.3): the winning side's seats share the first place and the other side's
  the second; a tie at the cap (BM-8.3) puts both sides first. ``sides(rules)`` gives each
  seat's side (seat q sits on side q mod 2, BM-1.2), so the tournament rates each game
  as one result between two OpenSkill teams.
* Free-for-all: the winners (BM-8.1, or the best score at the cap / an empty map) share
  the first place; every other seat is placed by its points, as the placement rewards of
  BM-10.2 rank them (1 + the seats with strictly more points; equal points share a place),
  so a multiplayer rating learns from the whole order, not from the winner alone.
"""

from __future__ import annotations

import numpy as np


def outcome(engine) -> tuple[np.ndarray, np.ndarray]:
    """``(winners, places)``, both ``(games, players)``, of the engine's finished games."""
    st = engine.state
    P = engine.num_players
    winners = np.asarray(st["winners"][:, :P], dtype=bool)
    if engine.rules.teams:
        return winners, np.where(winners, 1, 2).astype(np.int64)
    pts = np.asarray(st["points"][:, :P], dtype=np.int64)
    ahead = 1 + (pts[:, None, :] > pts[:, :, None]).sum(axis=2)
    return winners, np.where(winners, 1, np.maximum(ahead, 2)).astype(np.int64)


def sides(rules) -> list[int] | None:
    """Each seat's side in team mode (BM-1.2); None in free-for-all."""
    return [q % 2 for q in range(rules.num_players)] if rules.teams else None
