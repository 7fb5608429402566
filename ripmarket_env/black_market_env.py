"""Black Market's single-agent and batched learner envs (``BlackMarket-v0``).

* ``BlackMarketEnv``: the Gymnasium single-agent env (``gymnasium.make("BlackMarket-v0",
  num_players=4)``): the learner plays one seat, the other seats — teammates included —
  are given agents (objects or zoo names, ``agents.make(name, game="black-market")``) or,
  by default, random; a teammate may be the learner's own policy passed as an agent.
* ``BlackMarketVecEnv`` (Stable-Baselines3) and ``BlackMarketGymVectorEnv`` (Gymnasium,
  ``gymnasium.make_vec("BlackMarket-v0")``): one engine batch of games.

All three are the generic envs of ``ripmarket_env.envs`` bound to the game's spec.
"""

from __future__ import annotations

from ripmarket_env.app.entry import zoo_env_classes
from ripmarket_env.games.blackmarket import SPEC

ENV_ID = SPEC.gym_id
_classes = zoo_env_classes(SPEC)


BlackMarketEnv = _classes["gym"]  #: the single-agent env (``ripmarket_env.envs.gym.GameEnv``)
BlackMarketVecEnv = _classes["vec"]  #: a Stable-Baselines3 ``VecEnv`` (``ripmarket_env.envs.vector.GameVecEnv``)
#: a Gymnasium ``VectorEnv`` (``ripmarket_env.envs.vector.GameGymVectorEnv``)
BlackMarketGymVectorEnv = _classes["gym_vector"]
