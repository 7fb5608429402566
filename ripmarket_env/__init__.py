"""ripmarket: the reinforcement-learning environment and agent zoo for R.I.P. Market."""

__version__ = "0.1.0"
