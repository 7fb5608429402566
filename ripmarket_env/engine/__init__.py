"""The batch-first R.I.P. Market rules engine (numba kernels over named arrays)."""

from .config import ConfigError, RulesConfig
from .core import Engine, IllegalActionError, seed_to_u32

__all__ = ["ConfigError", "Engine", "IllegalActionError", "RulesConfig", "seed_to_u32"]
