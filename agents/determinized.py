"""The shared last step of the determinized Monte-Carlo search agents: every legal action
is applied to the same determinized copies of the game, each copy is played out by the
game's compiled rollouts, and the action with the best mean final reward is chosen."""

from __future__ import annotations

import numpy as np

from ripmarket_env.core.engine import kernel_view


def best_by_rollouts(base, legal: np.ndarray, rollouts, rng: np.random.Generator, eps: float,
                     max_steps: int) -> tuple[int, dict]:
    """``base``: an engine whose rows are the determinized copies (viewer = seat 0, legal
    actions computed); ``rollouts(S, TB, c, first, seat, seeds, eps, max_steps, out)`` the
    game's compiled rollout loop. The chosen action and the search's summary (``actions``,
    mean ``values``, ``simulations`` per action); ties are broken at random by ``rng``."""
    per = base.batch_size
    eng = type(base)(base.rules, per * legal.size, cards=base.cards)
    eng.state[:] = np.repeat(base.state, legal.size)
    first = np.tile(legal, per).astype(np.int64)
    seeds = rng.integers(1 << 62, size=len(first)).astype(np.uint64)
    out = np.zeros(len(first), np.float32)
    rollouts(kernel_view(eng.state), kernel_view(eng.tables), eng.cfg, first, 0, seeds, eps, max_steps, out)
    means = out.reshape(per, legal.size).mean(axis=0)
    pick = int(legal[int(np.argmax(means + rng.random(legal.size) * 1e-6))])
    return pick, {"actions": legal.tolist(), "values": means.tolist(), "simulations": per}
