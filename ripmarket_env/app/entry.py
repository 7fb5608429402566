"""Gymnasium entry points of every registered game (registered on ``import ripmarket_env``).

Every game's ``spec.gym_id`` is registered with the entry points ``gym_env`` and
``gym_vector_env`` below and the game's id in the registration's kwargs, so
``gymnasium.make(spec.gym_id, **kwargs)`` takes what ``ripmarket_env.make`` takes (the
player count, ``rules=`` or rule fields as keywords, ``render_mode``) plus the env's own
options (opponents, learner seat, ...). Opponents given by name, checkpoint or export
file are built with the zoo's ``agents.resolve``; rows of several network opponents are
decided together with ``agents.act_grouped``. Building a single-agent env imports neither
torch nor stable-baselines3 unless an opponent needs them.

The env classes are made once per game (``zoo_class``) and named after the game's
Gymnasium id (``RipMarket-v0``: ``RipMarketEnv``, ``RipMarketVecEnv``,
``RipMarketGymVectorEnv``); they live in this module's namespace, so they pickle.
"""

from __future__ import annotations

import re
from functools import partial

#: the env faces of a game and the suffix of their class names
KINDS = {"gym": "Env", "vec": "VecEnv", "gym_vector": "GymVectorEnv"}

_FACES: dict[tuple[str, str], type] = {}


def resolve_agent(name, game: str):
    """An agent for ``game`` from a zoo name, a checkpoint or an export file (``agents.resolve``)."""
    import agents

    return agents.resolve(name, game=game)


def decide_grouped(agents_, who, observations, masks):
    from agents.base import act_grouped

    return act_grouped(agents_, who, observations, masks)


def face_name(spec, kind: str) -> str:
    """The class name of a game's env face: its Gymnasium id's name part + ``KINDS[kind]``."""
    return re.sub(r"[^0-9A-Za-z]", "", spec.gym_id.rsplit("-v", 1)[0]) + KINDS[kind]


def zoo_class(spec, kind: str) -> type:
    """A game's env class with the zoo's agent resolution (``kind`` one of ``KINDS``); the
    single-agent one (``"gym"``) is built without the vector envs (and stable-baselines3)."""
    key = (spec.id, kind)
    if key not in _FACES:
        resolve = staticmethod(partial(resolve_agent, game=spec.id))
        if kind == "gym":
            from ripmarket_env.envs.gym import gym_env_class

            base, attrs = gym_env_class(spec), {"agent_resolver": resolve}
        elif kind in KINDS:
            from ripmarket_env.envs.vector import vec_env_classes

            vec, gvec = vec_env_classes(spec)
            base = vec if kind == "vec" else gvec
            attrs = {"agent_resolver": resolve, "decide": staticmethod(decide_grouped)}
        else:
            raise ValueError(f"kind={kind!r} is not allowed; allowed: {', '.join(map(repr, KINDS))}")
        name = face_name(spec, kind)
        doc = f"{spec.title}: {base.__mro__[1].__doc__ or ''}"
        _FACES[key] = type(name, (base,), {**attrs, "__module__": __name__, "__qualname__": name, "__doc__": doc})
    return _FACES[key]


def zoo_env_classes(spec) -> dict:
    """The game's env classes with the zoo's name resolution: ``gym``, ``vec``, ``gym_vector``."""
    return {kind: zoo_class(spec, kind) for kind in KINDS}


def gym_ids() -> dict[str, str]:
    """Every registered game's Gymnasium id -> its game id."""
    from ripmarket_env.games import registry

    return {spec.gym_id: game for game, spec in registry().items()}


def gym_env(game: str, **kwargs):
    """``gymnasium.make(<gym id>)``: the game's single-agent env."""
    from ripmarket_env.games import get

    return zoo_class(get(game), "gym")(**kwargs)


def gym_vector_env(game: str, **kwargs):
    """``gymnasium.make_vec(<gym id>)``: the game's batched Gymnasium vector env."""
    from ripmarket_env.games import get

    return zoo_class(get(game), "gym_vector")(**kwargs)


def __getattr__(name: str):
    """The env classes by name (how pickle finds them)."""
    if not name.startswith("_"):
        from ripmarket_env.games import registry

        for spec in registry().values():
            for kind in KINDS:
                if face_name(spec, kind) == name:
                    return zoo_class(spec, kind)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
