"""The Rune Market's agents: three heuristic styles with their defence policies
(``heuristics``), registered for the game ``"rune-market"`` (the random agent plays every game)."""

from agents.base import register_game
from agents.lookahead import register_lookaheads

#: The trained bots that get a ``<bot>-lookahead`` (agents/lookahead.py, docs/ZOO.md).
LOOKAHEAD_BOTS = ("rm-ppo-4p",)

register_game(
    "rune-market",
    heuristics=("rm-banker", "rm-raider", "rm-bandit"),
    search="rm-search",
    # From docs/games/rune-market/LEADERBOARD.md: random < the three styles < rm-search < rm-ppo-4p.
    levels={
        "random": "Beginner: random moves",
        "rm-banker": "Easy: builds Shelters for interest",
        "rm-raider": "Easy: steals from the leader",
        "rm-bandit": "Easy: locks the richest Shelter",
        "rm-search": "Hard: thinks ahead",
        "rm-ppo-4p": "Hardest: trained against the others",
    },
    slow_bots=("rm-search", "rm-ppo-4p"),
    # ``ripmarket bench --suite bot``: its trained bot, a heuristic and its search
    bench_bots=("rm-ppo-4p", "rm-banker", "rm-search"),
    bench_players=4,
)
register_lookaheads('rune-market', LOOKAHEAD_BOTS)
