"""Black Market agents (registered for game "black-market"): ``heuristics`` (rusher,
denier, builder), the search ``bm-search`` and the trained ``bm-ppo`` (one network for
every table, the default opponent); the random agent is the zoo's game-agnostic one."""

from agents.base import register_game
from agents.lookahead import register_lookaheads

#: The trained bots that get a ``<bot>-lookahead`` (agents/lookahead.py, docs/ZOO.md).
LOOKAHEAD_BOTS = ("bm-ppo",)
#: Their (top_k, n) by player count (a table key's entry wins at that table): fewer copies
#: than the default keep a decision's time down at the larger tables (p95 under 5 ms on
#: one core, docs/games/black-market/LEADERBOARD.md); 4-player teams looks at more copies.
LOOKAHEAD_BUDGETS = {2: (2, 3), 4: (2, 2), 6: (2, 2), "4p-teams": (2, 4)}

register_game(
    "black-market",
    heuristics=("bm-builder", "bm-denier", "bm-rusher"),
    search="bm-search",
    # the web page's and the terminal game's opponent at every table (docs/games/black-market/TRAINING.md)
    # (bm-ppo checked one turn ahead at every table; LEADERBOARD.md, the lookahead)
    default_bots=("bm-ppo-lookahead", "bm-ppo"),
    levels={
        "random": "Beginner: random moves",
        "bm-rusher": "Easy: buys at once",
        "bm-builder": "Medium: builds on special cards",
        "bm-denier": "Medium: blocks what you could buy",
        "bm-search": "Hard: thinks ahead",
        "bm-ppo": "Hard: trained (every table)",
        "bm-ppo-stage1": "Hard: trained (every table; stage 1 of bm-ppo, its starting point)",
        "bm-ppo-4p-teams": "Hard: trained (4-player teams only; bm-ppo's starting point)",
    },
    slow_bots=("bm-ppo-lookahead", "bm-ppo", "bm-search", "bm-ppo-4p-teams"),
    # ``ripmarket bench --suite bot``: its trained bot, a heuristic and its search
    bench_bots=("bm-ppo-lookahead", "bm-ppo", "bm-builder", "bm-search"),
    bench_players=2,
)
register_lookaheads('black-market', LOOKAHEAD_BOTS, LOOKAHEAD_BUDGETS)
