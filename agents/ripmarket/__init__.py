"""R.I.P. Market's agents: the observation reader (``view``), the heuristic styles
(``heuristics``) and the determinized Monte-Carlo search (``search``)."""
