"""The Rune Market's agents: three heuristic styles with their defence policies
(``heuristics``), registered for the game ``"rune-market"`` (the random agent plays every game)."""
