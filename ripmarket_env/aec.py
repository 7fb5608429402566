"""R.I.P. Market's PettingZoo AEC env (``ripmarket_v0``): ``env()`` (wrapped) and ``raw_env``.

The env itself is generic over the game (``ripmarket_env.envs.aec``); this module binds
it to R.I.P. Market and is what ``ripmarket_env.env()`` / ``raw_env`` return. The game's
page is ``raw_env.__doc__`` (``ripmarket_env/games/ripmarket/README.md``).
"""

from __future__ import annotations

from ripmarket_env.envs.aec import (  # noqa: F401  (the wrappers, for isinstance checks)
    _STATE_ATTRS,
    AssertOutOfBoundsWrapper,
    OrderEnforcingWrapper,
    TerminateIllegalWrapper,
    aec_env_class,
    wrapped,
)
from ripmarket_env.games.ripmarket import SPEC

__all__ = ["env", "raw_env", "observation_bounds"]

raw_env = aec_env_class(SPEC)
__doc__ = raw_env.__doc__


def env(num_players: int | None = None, render_mode: str | None = None, rules=None, **rules_kwargs):
    """``raw_env`` in PettingZoo's standard wrappers for classic games."""
    return wrapped(raw_env(num_players=num_players, render_mode=render_mode, rules=rules, **rules_kwargs))


def observation_bounds(engine):
    """Per-feature (low, high) float32 bounds of the observation vector for the engine's cards."""
    return SPEC.observation_bounds(engine)
