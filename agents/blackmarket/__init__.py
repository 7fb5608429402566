"""Black Market agents (registered for game "black-market"): ``heuristics`` (rusher,
denier, builder); the random agent is the zoo's game-agnostic one."""
