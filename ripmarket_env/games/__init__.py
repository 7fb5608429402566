"""The registry of the zoo's games: one package per game, each with a ``SPEC``.

``registry()`` maps every game id to its ``GameSpec``; ``get(game_id)`` gives one (a
``KeyError`` naming the known games otherwise). A game registers with one loader
function below (docs/ARCHITECTURE.md, "Adding a game"). Games are imported on first use,
so ``import ripmarket_env`` stays light.
"""

from __future__ import annotations

import sys
import types


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


def ids() -> list[str]:
    """The registered game ids, in registration order."""
    return list(_LOADERS)


def get(game_id: str):
    """The ``GameSpec`` of a registered game."""
    if not isinstance(game_id, str) or game_id not in _LOADERS:
        raise KeyError(f"unknown game {game_id!r}; registered games: {', '.join(_LOADERS)}")
    return _LOADERS[game_id]()


def registry() -> dict:
    """Every registered game: ``{id: GameSpec}``."""
    return {g: get(g) for g in _LOADERS}


class _Registry(types.ModuleType):
    """This package is callable: ``ripmarket_env.games()`` lists the game ids, the same
    answer whether ``ripmarket_env.games`` is still the package's function or, once a game
    was imported, this subpackage."""

    def __call__(self) -> list[str]:
        return ids()


sys.modules[__name__].__class__ = _Registry
