"""R.I.P. Market's engine under its name from before the multi-game core (kept for
existing code): ``Engine``, ``RulesConfig``, ``IllegalActionError``, ``ConfigError``,
``seed_to_u64``. New code imports ``ripmarket_env.games.ripmarket``."""

from ripmarket_env.games.ripmarket import ConfigError, Engine, IllegalActionError, RulesConfig, seed_to_u64

__all__ = ["ConfigError", "Engine", "IllegalActionError", "RulesConfig", "seed_to_u64"]
