"""Match play of The Rune Market (RM-1.5): who starts the next game of a match."""

from __future__ import annotations

import numpy as np


def next_first_players(engine, winners) -> list[int]:
    """RM-1.5: the winner of the previous game starts the next; of co-winners, the earliest
    in the previous game's turn order (from its first player, clockwise: seat ``first``,
    ``first + 1``, ...). ``winners[g]``: the winners of game ``g`` of ``engine``'s batch."""
    P = engine.num_players
    first = np.asarray(engine.state["first_player"], dtype=np.int64)
    out = []
    for g, w in enumerate(winners):
        w = np.asarray(w, dtype=bool)
        order = (int(first[g]) + np.arange(P)) % P
        won = order[w[order]]
        out.append(int(won[0]) if len(won) else int(first[g]))
    return out
