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
                out: np.ndarray | None = None, csr: tuple | None = None) -> np.ndarray:
    """Actions for rows decided by different agents: row ``i`` by ``agents[who[i]]``
    (rows with ``who < 0`` are left as they are in ``out``, -1 by default).

    Network agents (those with ``sparse_parts``: frozen policies, distilled styles) decide
    together in one fused pass (``agents.sparse.fused_act``); agents exposing the same
    non-None ``shared_net_key`` decide together in one ``act_styles`` call; every other
    agent present gets one ``act_batch``. ``csr``: the observations' non-zeros, if the caller
    has them (``fused_act``)."""
    out = np.full(len(who), -1, np.int64) if out is None else out
    fused = None
    if any(hasattr(agents[a], "sparse_parts") for a in np.unique(who) if a >= 0):
        from agents.sparse import fused_act

        fused = fused_act(agents, who, observations, action_masks, out, csr=csr)
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
    game: str | None
    """The game id the agent plays (``None``: any game, like the random agent)."""


#: The registry is keyed by game: (game id or None, name) -> Entry.
_REGISTRY: dict[tuple[str | None, str], Entry] = {}
DEFAULT_GAME = "ripmarket"


def register(name: str, factory: Callable[..., Agent], description: str, game: str | None = DEFAULT_GAME) -> None:
    """Register an agent of game ``game`` (``None``: an agent for every game)."""
    if (game, name) in _REGISTRY or (None, name) in _REGISTRY or (game is None and any(k[1] == name for k in _REGISTRY)):
        raise ValueError(f"agent {name!r} is already registered" + (f" for game {game!r}" if game else ""))
    _REGISTRY[(game, name)] = Entry(name, factory, description, game)


def names(game: str = DEFAULT_GAME) -> list[str]:
    """The agents that play ``game`` (its own and the game-agnostic ones)."""
    return sorted(e.name for (g, _), e in _REGISTRY.items() if g in (game, None))


def games_with_agents() -> list[str]:
    return sorted({g for g, _ in _REGISTRY if g is not None})


def describe(name: str, game: str = DEFAULT_GAME) -> str:
    return _entry(name, game).description


def make(name: str, game: str = DEFAULT_GAME, **kwargs) -> Agent:
    """A new agent of ``game`` by registry name (e.g. ``make("random", seed=0)``)."""
    return _entry(name, game).factory(**kwargs)


def make_seeded(name: str, seed: int, game: str = DEFAULT_GAME, **kwargs) -> Agent:
    """``make(name, seed=seed, **kwargs)``, or without the seed for an agent whose
    constructor takes none (a deterministic one)."""
    try:
        return make(name, game, seed=seed, **kwargs)
    except TypeError:
        return make(name, game, **kwargs)


def _entry(name: str, game: str = DEFAULT_GAME) -> Entry:
    entry = _REGISTRY.get((game, name)) or _REGISTRY.get((None, name))
    if entry is None:
        others = sorted(g for (g, n) in _REGISTRY if n == name and g is not None)
        hint = f" ({name!r} plays {', '.join(others)})" if others else ""
        raise KeyError(f"unknown agent {name!r} for game {game!r}{hint}; known agents: {', '.join(names(game))}")
    return entry


register("random", RandomAgent, "Uniformly random legal actions.", game=None)
