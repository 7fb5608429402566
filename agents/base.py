"""The agent protocol and the agent registry.

An agent sees only what its seat sees: the observation vector and the legal-action mask
(``ripmarket_env.engine.observation.named_view`` decodes the vector into named pieces).

    act(observation, action_mask) -> action            one decision
    act_batch(observations, action_masks) -> actions   many games at once
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
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
    their compiled step (``ripmarket_env/engine/vector_kernels.py``): still a uniformly
    random legal action, drawn from a per-game stream of the env's seed instead of
    ``self.rng``. A subclass is always called through ``act`` / ``act_batch``.
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


def act_grouped(agents: Sequence, who: np.ndarray, observations: np.ndarray, action_masks: np.ndarray,
                out: np.ndarray | None = None) -> np.ndarray:
    """Actions for rows decided by different agents: row ``i`` by ``agents[who[i]]``
    (rows with ``who < 0`` are left as they are in ``out``, -1 by default).

    Network agents (those with ``sparse_parts``: frozen policies, distilled styles) decide
    together in one fused pass (``agents.sparse.fused_act``); agents exposing the same
    non-None ``shared_net_key`` decide together in one ``act_styles`` call; every other
    agent present gets one ``act_batch``."""
    out = np.full(len(who), -1, np.int64) if out is None else out
    fused = None
    if any(hasattr(agents[a], "sparse_parts") for a in np.unique(who) if a >= 0):
        from .sparse import fused_act

        fused = fused_act(agents, who, observations, action_masks, out)
    shared: dict = {}
    for a in np.unique(who if fused is None else who[~fused]):
        if a < 0:
            continue
        sel = np.flatnonzero(who == a)
        key = getattr(agents[a], "shared_net_key", None)
        if key is not None:
            shared.setdefault(key, []).append((agents[a], sel))
        else:
            out[sel] = agents[a].act_batch(observations[sel], action_masks[sel])
    for group in shared.values():
        sel = np.concatenate([g[1] for g in group])
        styles = np.concatenate([np.full(len(g[1]), g[0].style_index) for g in group])
        out[sel] = group[0][0].act_styles(observations[sel], action_masks[sel], styles)
    return out


@dataclass(frozen=True)
class Entry:
    name: str
    factory: Callable[..., Agent]
    description: str


_REGISTRY: dict[str, Entry] = {}


def register(name: str, factory: Callable[..., Agent], description: str) -> None:
    if name in _REGISTRY:
        raise ValueError(f"agent {name!r} is already registered")
    _REGISTRY[name] = Entry(name, factory, description)


def names() -> list[str]:
    return sorted(_REGISTRY)


def describe(name: str) -> str:
    return _entry(name).description


def make(name: str, **kwargs) -> Agent:
    """A new agent by registry name (e.g. ``make("random", seed=0)``)."""
    return _entry(name).factory(**kwargs)


def make_seeded(name: str, seed: int, **kwargs) -> Agent:
    """``make(name, seed=seed, **kwargs)``, or without the seed for an agent whose
    constructor takes none (a deterministic one)."""
    try:
        return make(name, seed=seed, **kwargs)
    except TypeError:
        return make(name, **kwargs)


def _entry(name: str) -> Entry:
    if name not in _REGISTRY:
        raise KeyError(f"unknown agent {name!r}; known agents: {', '.join(names())}")
    return _REGISTRY[name]


register("random", RandomAgent, "Uniformly random legal actions.")
