"""``RipMarket-v0``: R.I.P. Market's single-agent Gymnasium env (``RipMarketEnv``).

The env is generic over the game (``ripmarket_env.envs.gym``, whose docstring is the
full specification); this class binds it to R.I.P. Market and resolves opponents given
by name with the zoo's ``agents.make``. ``import ripmarket_env`` registers the id.
"""

from __future__ import annotations

from ripmarket_env.app.entry import zoo_class
from ripmarket_env.envs.gym import (  # noqa: F401  (the env's helpers, as before the multi-game core)
    MAX_SEED,
    LegalDiscrete,
    SampledAction,
    check_learner_seat,
    reseed_agents,
    resolve_opponents,
)
from ripmarket_env.games.ripmarket import SPEC

ENV_ID = SPEC.gym_id


#: the class ``gymnasium.make(ENV_ID)`` builds (``ripmarket_env.app.entry.zoo_class``)
RipMarketEnv = zoo_class(SPEC, "gym")
