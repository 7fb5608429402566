"""Gymnasium entry points of every game (registered on ``import ripmarket_env``).

Opponents given by name are built with the zoo's ``agents.make``; rows of several network
opponents are decided together with ``agents.act_grouped``. Pure data at import time:
the classes are built when Gymnasium calls an entry point.
"""

from __future__ import annotations

#: Gymnasium id -> (single-agent entry point, vector entry point)
GYM_IDS = {
    "RipMarket-v0": ("ripmarket_env.gym_env:RipMarketEnv", "ripmarket_env.vector_env:RipMarketGymVectorEnv"),
    "BlackMarket-v0": ("ripmarket_env.app.black_market_env:BlackMarketEnv",
                       "ripmarket_env.app.black_market_env:BlackMarketGymVectorEnv"),
    "RuneMarket-v0": ("ripmarket_env.app.entry:rune_market_gym", "ripmarket_env.app.entry:rune_market_gym_vector"),
}


def resolve_agent(name: str, game: str = "ripmarket"):
    """An agent of the zoo by registry name for ``game`` (``agents.make``)."""
    import agents

    return agents.make(name, game=game)


def decide_grouped(agents_, who, observations, masks):
    from agents.base import act_grouped

    return act_grouped(agents_, who, observations, masks)


def zoo_env_classes(spec) -> dict:
    """The game's env classes with the zoo's name resolution: ``gym``, ``vec``, ``gym_vector``."""
    from ripmarket_env.envs.gym import gym_env_class
    from ripmarket_env.envs.vector import vec_env_classes

    from functools import partial

    vec, gvec = vec_env_classes(spec)
    resolve = partial(resolve_agent, game=spec.id)
    face = {"agent_resolver": staticmethod(resolve), "decide": staticmethod(decide_grouped)}
    return {
        "gym": type(gym_env_class(spec).__name__, (gym_env_class(spec),), {"agent_resolver": staticmethod(resolve)}),
        "vec": type(vec.__name__, (vec,), face),
        "gym_vector": type(gvec.__name__, (gvec,), face),
    }


def _rune_market_classes() -> dict:
    from ripmarket_env.games import get

    return zoo_env_classes(get("rune-market"))


def rune_market_gym(**kwargs):
    """``gymnasium.make("RuneMarket-v0")``: The Rune Market's single-agent env."""
    return _rune_market_classes()["gym"](**kwargs)


def rune_market_gym_vector(**kwargs):
    """``gymnasium.make_vec("RuneMarket-v0")``: The Rune Market's batched Gymnasium vector env."""
    return _rune_market_classes()["gym_vector"](**kwargs)
