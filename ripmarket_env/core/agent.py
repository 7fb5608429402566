"""The agent protocol the environments speak, and the uniformly random agent.

An agent sees only what its seat sees: the observation vector and the legal-action mask.

    act(observation, action_mask) -> action            one decision
    act_batch(observations, action_masks) -> actions   many games at once

The zoo (``agents``) builds on these; the environments take agent objects and never
import the zoo.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class Agent(Protocol):
    name: str

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int: ...

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray: ...


class BaseAgent:
    """Convenience base: ``act_batch`` loops over ``act``; ``reset`` starts a new game."""

    name = "agent"

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:  # pragma: no cover
        raise NotImplementedError

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        return np.array([self.act(o, m) for o, m in zip(observations, action_masks)], dtype=np.int64)

    def reset(self, seed: int | None = None) -> None:
        pass


class RandomAgent(BaseAgent):
    """Uniformly random legal actions (its own seeded RNG).

    The gym and vector envs recognise this exact class as an opponent and play it inside
    their compiled step (the game's batch kernels): still a uniformly random legal
    action, drawn from a per-game stream of the env's seed instead of ``self.rng``. A
    subclass is always called through ``act`` / ``act_batch``.
    """

    name = "random"

    def __init__(self, seed: int | None = None):
        self.rng = np.random.default_rng(seed)

    def reset(self, seed: int | None = None) -> None:
        if seed is not None:
            self.rng = np.random.default_rng(seed)

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        legal = np.flatnonzero(action_mask)
        if legal.size == 0:
            raise ValueError("no legal action in the mask")
        return int(self.rng.choice(legal))

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        m = np.asarray(action_masks, dtype=bool)
        if not m.any(axis=1).all():
            raise ValueError("a row of the mask has no legal action")
        # Uniform choice per row: argmax of random keys over legal entries.
        keys = self.rng.random(m.shape)
        keys[~m] = -1.0
        return keys.argmax(axis=1).astype(np.int64)


def act_each(agents, who: np.ndarray, observations: np.ndarray, action_masks: np.ndarray,
             out: np.ndarray | None = None) -> np.ndarray:
    """Actions for rows decided by different agents: row ``i`` by ``agents[who[i]]``, one
    ``act_batch`` per agent present (rows with ``who < 0`` keep ``out``'s value, -1 by
    default). The zoo's ``agents.act_grouped`` does the same with fused network passes."""
    out = np.full(len(who), -1, np.int64) if out is None else out
    for a in np.unique(who):
        if a < 0:
            continue
        sel = np.flatnonzero(who == a)
        out[sel] = agents[a].act_batch(observations[sel], action_masks[sel])
    return out
