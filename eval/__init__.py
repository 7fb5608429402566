"""Evaluation: agent-vs-agent tournaments, OpenSkill ratings and reports.

>>> from eval.tournament import run_tournament
>>> result = run_tournament(["random", "greedy"], players=6, games=2000, seed=1, out="reports/demo")
>>> result.summary["agents"]["random"]["ordinal"]
"""

from eval.tournament import TournamentResult, run_tournament

__all__ = ["TournamentResult", "run_tournament"]
