"""What a user may name as an agent, resolved: an agent object, a zoo name, an export file
or a checkpoint file (``agents.resolve``; the envs' ``opponents=`` through the app's entry
layer)."""

from __future__ import annotations

from agents.base import DEFAULT_GAME, _REGISTRY, Agent, _entry, make


def resolve(agent, game: str = DEFAULT_GAME, **kwargs) -> Agent:
    """An agent of ``game`` from what a user may name: an agent object (returned as it is),
    a registry name (``make``), an export file (``.safetensors``, ``agents.export``) or a
    checkpoint file (``.zip``, ``agents.policy.load_agent``); a file of another game is
    refused with a message naming both games."""
    import os
    from pathlib import Path

    if not isinstance(agent, (str, os.PathLike)):
        return agent
    if isinstance(agent, str) and (_REGISTRY.get((game, agent)) or _REGISTRY.get((None, agent))):
        return make(agent, game, **kwargs)
    p = Path(agent)
    if p.suffix == ".safetensors":
        from agents.export import load_export_agent

        return load_export_agent(p, game=game, **kwargs)
    if p.suffix == ".zip":
        from agents.checkpoint import require_game
        from agents.policy import load_agent

        require_game(p, game)
        return load_agent(p, **kwargs)
    if isinstance(agent, str):
        _entry(agent, game)  # raises KeyError: unknown agent ..., the known agents
    raise ValueError(f"{p}: not an agent; allowed: an export (.safetensors), a checkpoint (.zip) or an agent name")
