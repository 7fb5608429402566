"""The agent zoo: one protocol, one registry (``agents.make(name)``, ``agents.names()``)."""

from .base import Agent, BaseAgent, RandomAgent, describe, make, names, register

__all__ = ["Agent", "BaseAgent", "RandomAgent", "describe", "make", "names", "register"]
