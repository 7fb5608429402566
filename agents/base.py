"""The agent protocol and the agent registry.

An agent sees only what its seat sees: the observation vector and the legal-action mask
(``ripmarket_env.games.ripmarket.observation.named_view`` decodes the vector into named pieces).

    act(observation, action_mask) -> action            one decision
    act_batch(observations, action_masks) -> actions   many games at once
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ripmarket_env.core.agent import Agent, BaseAgent, RandomAgent  # noqa: F401  (the protocol the envs speak)


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
        from agents.sparse import fused_act

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
