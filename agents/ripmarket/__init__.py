"""R.I.P. Market's agents: the observation reader (``view``), the heuristic styles
(``heuristics``) and the determinized Monte-Carlo search (``search``)."""

from agents.base import register_game

register_game(
    "ripmarket",
    heuristics=("greedy", "survivor", "shark", "hoarder", "trickster"),
    search="search",
    default_bots=("ppo-lookahead", "ppo"),
    # From the 4- and 6-player leaderboards of docs/ZOO.md
    # (random < greedy < shark < survivor/trickster/hoarder < search < ppo < ppo-lookahead).
    levels={
        "random": "Beginner: random moves",
        "greedy": "Easy",
        "shark": "Medium",
        "survivor": "Medium",
        "trickster": "Medium",
        "hoarder": "Medium",
        "search": "Hard: thinks ahead",
        "ppo-6p": "Hard: trained by self-play at 6 players",
        "ppo": "Hard: trained by self-play for every table size (2-10 players)",
        "search-ppo": "Hard: thinks ahead about the moves the trained bot likes",
        "ppo-lookahead": "Hardest: the trained bot for every table size (2-10 players), "
                         "checking its best moves one turn ahead",
    },
    slow_bots=("search", "ppo-lookahead", "ppo", "ppo-6p"),
    # ``ripmarket bench --suite bot``: its trained bot, a heuristic and its search
    bench_bots=("ppo-lookahead", "ppo", "greedy", "search", "search-ppo"),
    bench_players=6,
)
