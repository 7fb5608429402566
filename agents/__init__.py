"""The agent zoo: one protocol, one registry (``agents.make(name)``, ``agents.names()``)."""

from .base import Agent, BaseAgent, RandomAgent, describe, make, names, register
from . import heuristics  # noqa: F401  (registers the rule-based agents: greedy, survivor, ...)

__all__ = ["Agent", "BaseAgent", "RandomAgent", "describe", "make", "names", "register"]
