"""The agent zoo: one protocol, one registry (``agents.make(name)``, ``agents.names()``)."""

from agents.base import (Agent, BaseAgent, GameAgents, RandomAgent, default_bot, default_lineup, describe, game_agents, make,
                         make_seeded, names, register, register_game, settings)
from agents.loading import resolve
from agents.ripmarket import heuristics  # noqa: F401  (registers the rule-based agents: greedy, survivor, ...)
from agents import policy  # noqa: F401  (registers shipped trained checkpoints: ppo-6p)
from agents.ripmarket import search  # noqa: F401  (registers the determinized Monte-Carlo search agent)
from agents.ripmarket import lookahead  # noqa: F401  (registers ppo-lookahead: the bot checked one turn ahead)
from agents.blackmarket import heuristics as _bm_heuristics  # noqa: F401  (Black Market: bm-rusher, bm-denier, bm-builder)
from agents.blackmarket import search as _bm_search  # noqa: F401  (Black Market: bm-search)
from agents.runemarket import heuristics as _rm_heuristics  # noqa: F401  (The Rune Market: rm-banker, rm-raider, rm-bandit)
from agents.runemarket import search as _rm_search  # noqa: F401  (The Rune Market: rm-search)

__all__ = ["Agent", "BaseAgent", "GameAgents", "RandomAgent", "default_bot", "default_lineup", "describe", "game_agents", "make",
           "make_seeded", "names", "register", "register_game", "resolve", "settings"]
