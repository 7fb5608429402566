"""ripmarket: the reinforcement-learning environment and agent zoo for R.I.P. Market.

``ripmarket_env.env(num_players=4, ...)`` is the PettingZoo AEC env (``ripmarket_env.aec``),
``ripmarket_env.raw_env`` the same without PettingZoo's wrappers. Both are imported on
first use, so ``import ripmarket_env.engine`` stays light.
"""

__version__ = "0.1.0"

from ._jitcache import configure as _configure_jit_cache

_configure_jit_cache()

__all__ = ["__version__", "env", "raw_env"]


def __getattr__(name: str):
    if name in ("env", "raw_env"):
        from . import aec

        return getattr(aec, name)
    raise AttributeError(f"module 'ripmarket_env' has no attribute {name!r}")
