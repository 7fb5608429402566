"""The registry of the zoo's games: one package per game, each with a ``SPEC``.

``registry()`` maps every game id to its ``GameSpec``; ``get(game_id)`` gives one (a
``KeyError`` naming the known games otherwise). A game registers with one loader
function below (docs/ARCHITECTURE.md, "Adding a game"). Games are imported on first use,
so ``import ripmarket_env`` stays light.

A game that lives outside this package registers with ``register(game_id, "module:SPEC")``
in the process that uses it, or for every process (the CLI, the server, subprocesses)
through the environment variable ``RIPMARKET_GAMES="id=module:SPEC,..."`` or a package's
entry point in the group ``ripmarket.games`` (``id = "module:SPEC"``).
"""

from __future__ import annotations

import os
import sys
import types
from importlib import import_module


def _ripmarket():
    from ripmarket_env.games.ripmarket import SPEC

    return SPEC


def _blackmarket():
    from ripmarket_env.games.blackmarket import SPEC

    return SPEC


def _runemarket():
    from ripmarket_env.games.runemarket import SPEC

    return SPEC


#: game id -> a function returning its ``GameSpec`` (imports the game on first use)
_LOADERS = {
    "ripmarket": _ripmarket,
    "black-market": _blackmarket,
    "rune-market": _runemarket,
}
_BUILTIN = frozenset(_LOADERS)


_PLUGINS_READ = False
ENV_VAR = "RIPMARKET_GAMES"


def _from_path(game_id: str, target: str):
    """A loader importing ``"module:attr"`` on first use; the result must be a GameSpec of ``game_id``."""
    module, sep, attr = target.partition(":")
    if not sep or not module or not attr:
        raise ValueError(f"game {game_id!r}: {target!r} must name a spec as 'module:attribute'")

    def load():
        try:
            spec = getattr(import_module(module), attr)
        except (ImportError, AttributeError) as exc:
            raise ValueError(f"game {game_id!r}: cannot load its spec {target} ({exc}); "
                             f"check {ENV_VAR} or the package's 'ripmarket.games' entry point") from None
        if getattr(spec, "id", None) != game_id:
            raise ValueError(f"game {game_id!r}: {target} is the spec of {getattr(spec, 'id', spec)!r}")
        return spec

    return load


def register(game_id: str, loader) -> None:
    """Register a game: ``loader`` is a ``"module:attr"`` path to its ``GameSpec`` or a
    function returning it (called on first use)."""
    if not isinstance(game_id, str) or not game_id or any(c.isspace() or c in "/=,:" for c in game_id):
        raise ValueError(f"a game id must be a non-empty word without spaces, '/', '=', ',' or ':', got {game_id!r}")
    if game_id in _LOADERS:
        raise ValueError(f"game {game_id!r} is already registered")
    _LOADERS[game_id] = _from_path(game_id, loader) if isinstance(loader, str) else loader


def unregister(game_id: str) -> None:
    """Remove a game registered with ``register`` (the packaged games stay)."""
    if game_id in _BUILTIN:
        raise ValueError(f"game {game_id!r} is one of the packaged games and cannot be removed")
    _LOADERS.pop(game_id, None)


def _read_plugins() -> None:
    """Register the games named by ``RIPMARKET_GAMES`` and by the ``ripmarket.games`` entry
    points, once per process."""
    global _PLUGINS_READ
    if _PLUGINS_READ:
        return
    _PLUGINS_READ = True
    from importlib.metadata import entry_points

    named = [(ep.name, ep.value) for ep in entry_points(group="ripmarket.games")]
    for item in filter(None, (x.strip() for x in os.environ.get(ENV_VAR, "").split(","))):
        game_id, sep, target = item.partition("=")
        if not sep:
            raise ValueError(f"{ENV_VAR}: {item!r} must read id=module:attribute")
        named.append((game_id.strip(), target.strip()))
    for game_id, target in named:
        if game_id not in _LOADERS:
            register(game_id, target)


def ids() -> list[str]:
    """The registered game ids, in registration order."""
    _read_plugins()
    return list(_LOADERS)


def get(game_id: str):
    """The ``GameSpec`` of a registered game."""
    _read_plugins()
    if not isinstance(game_id, str) or game_id not in _LOADERS:
        raise KeyError(f"unknown game {game_id!r}; registered games: {', '.join(_LOADERS)}")
    spec = _LOADERS[game_id]()
    if game_id not in _LOADED:
        _LOADED[game_id] = spec
        for fn in list(_LISTENERS):
            fn(spec)
    return spec


_LOADED: dict = {}
_LISTENERS: list = []


def packaged() -> list[str]:
    """The ids of the games shipped in this package (loading them imports only the game)."""
    return [g for g in _LOADERS if g in _BUILTIN]


def when_loaded(fn) -> None:
    """Call ``fn(spec)`` for every game loaded so far and for each game loaded later (a
    game registered from outside the package is loaded when first asked for, since its
    module may import anything)."""
    _LISTENERS.append(fn)
    for spec in list(_LOADED.values()):
        fn(spec)


def registry() -> dict:
    """Every registered game: ``{id: GameSpec}``."""
    return {g: get(g) for g in ids()}


def by_env_name(env_name: str):
    """The ``GameSpec`` whose PettingZoo name (``env_name``, e.g. ``"ripmarket_v0"``) this
    is, or ``None`` (how pickle finds a game's env classes again)."""
    return next((spec for spec in registry().values() if spec.env_name == env_name), None)


class _Registry(types.ModuleType):
    """This package is callable: ``ripmarket_env.games()`` lists the game ids, the same
    answer whether ``ripmarket_env.games`` is still the package's function or, once a game
    was imported, this subpackage."""

    def __call__(self) -> list[str]:
        return ids()


sys.modules[__name__].__class__ = _Registry
