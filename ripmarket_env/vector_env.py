"""R.I.P. Market's batched learner envs: ``RipMarketVecEnv`` (Stable-Baselines3) and
``RipMarketGymVectorEnv`` (Gymnasium, ``gymnasium.make_vec("RipMarket-v0")``).

The envs are generic over the game (``ripmarket_env.envs.vector``, whose docstring is the
full specification); these classes bind them to R.I.P. Market, resolve opponents given by
name with ``agents.make`` and decide rows of network opponents together
(``agents.act_grouped``).
"""

from __future__ import annotations

from ripmarket_env.app.entry import zoo_env_classes
from ripmarket_env.envs.vector import LearnerBatch as _LearnerBatch
from ripmarket_env.envs.vector import (  # noqa: F401  (the env's helpers, as before the multi-game core)
    LegalMultiDiscrete,
    NumbaThreads,
    episode_seed,
    seeds_to_u64,
)
from ripmarket_env.games.ripmarket import SPEC

_classes = zoo_env_classes(SPEC)


class LearnerBatch(_LearnerBatch):
    """``ripmarket_env.envs.vector.LearnerBatch`` of R.I.P. Market games, opponents given by
    name built with ``agents.make`` and network opponents decided together."""

    def __init__(self, *args, spec=SPEC, agent_resolver=_classes["vec"].agent_resolver,
                 decide=_classes["vec"].decide, **kwargs):
        super().__init__(*args, spec=spec, agent_resolver=agent_resolver, decide=decide, **kwargs)


#: A Stable-Baselines3 ``VecEnv`` of ``num_envs`` R.I.P. Market games (one engine batch);
#: see ``ripmarket_env.envs.vector.GameVecEnv``.
RipMarketVecEnv = _classes["vec"]
#: A Gymnasium ``VectorEnv`` of ``num_envs`` R.I.P. Market games (one engine batch), the
#: class ``gymnasium.make_vec("RipMarket-v0")`` builds; see ``ripmarket_env.envs.vector.GameGymVectorEnv``.
RipMarketGymVectorEnv = _classes["gym_vector"]
