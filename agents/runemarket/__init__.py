"""The Rune Market's agents: three heuristic styles with their defence policies
(``heuristics``), registered for the game ``"rune-market"`` (the random agent plays every game)."""

from agents.base import register_game
from agents.lookahead import register_lookaheads

#: The trained bots that get a ``<bot>-lookahead`` (agents/lookahead.py, docs/ZOO.md): the
#: network it was measured on; it was not stronger than the network alone (LEADERBOARD.md).
LOOKAHEAD_BOTS = ("rm-ppo",)

register_game(
    "rune-market",
    heuristics=("rm-banker", "rm-raider", "rm-bandit"),
    search="rm-search",
    # The trained bot for every table (2-6 players; configs/rune-market/rm_ppo_search.yaml):
    # the opponent of a table set up without naming one, on the web page and in the terminal.
    default_bots=("rm-ppo-search",),
    # From docs/games/rune-market/LEADERBOARD.md: random < the three styles < rm-search
    # < rm-ppo < rm-ppo-search.
    levels={
        "random": "Beginner: random moves",
        "rm-banker": "Easy: builds Shelters for interest",
        "rm-raider": "Easy: steals from the leader",
        "rm-bandit": "Easy: locks the richest Shelter",
        "rm-search": "Hard: thinks ahead",
        "rm-ppo": "Hard: trained against the heuristics at every table, the start of rm-ppo-search",
        "rm-ppo-4p": "Hard: trained at 4 players only, the start of rm-ppo's recipe",
        "rm-ppo-search": "Hardest: trained against the others and an imitation of rm-search at every table",
    },
    slow_bots=("rm-search", "rm-ppo-search", "rm-ppo"),
    # ``ripmarket bench --suite bot``: its trained bot, a heuristic and its search
    bench_bots=("rm-ppo-search", "rm-banker", "rm-search"),
    bench_players=4,
)
register_lookaheads('rune-market', LOOKAHEAD_BOTS)
