"""Redealing what a seat may not see: the shared step of every game's ``scramble_hidden``
hook (the conformance suite's hidden-information check).

Hands are count rows (``hands[q, k]``: how many cards of kind ``k`` seat ``q`` holds).
"""

from __future__ import annotations

import numpy as np


def redeal_hidden(rng: np.random.Generator, pile, hands: np.ndarray, sizes, seats, extra=()) -> list[int]:
    """Pool the cards of ``pile``, of the hands of ``seats`` and of ``extra`` (in that
    order), shuffle them with ``rng``, and deal each seat of ``seats`` as many as it held
    (``sizes[q]``), written into ``hands`` in place. Returns the rest of the pool, for the
    caller to put back where ``extra`` and ``pile`` came from: every card stays somewhere
    exactly once."""
    pool = [int(x) for x in pile]
    for q in seats:
        pool += [d for d, n in enumerate(hands[q]) for _ in range(int(n))]
    pool += [int(x) for x in extra]
    rng.shuffle(pool)
    kinds = hands.shape[1]
    i = 0
    for q in seats:
        n = int(sizes[q])
        hands[q] = np.bincount(np.array(pool[i:i + n], np.int64), minlength=kinds)
        i += n
    return pool[i:]
