"""The game-agnostic core of the zoo (numpy and numba only, nothing else of the project).

* ``spec.GameSpec``: a game's facts and hooks as data;
* ``engine.Engine``: the generic batched engine facade and the cross-game step policy;
* ``kernels``: compiled helpers that read only a game row's public face;
* ``drivers``: the batch drivers written once (``compile_drivers`` over a game's per-row kernels);
* ``agent``: the agent protocol the envs speak and the uniformly random agent;
* ``jitcache``: where numba keeps compiled kernels.
"""

from ripmarket_env.core.engine import Engine, IllegalActionError, seed_to_u64
__version__ = "0.1.0"
#: The distribution's name (``pip install ripmarket``) and its command's: the project's,
#: not a game's (R.I.P. Market's id happens to be the same word).
DISTRIBUTION = "ripmarket"

from ripmarket_env.core.agent import Agent, BaseAgent, RandomAgent
from ripmarket_env.core.spec import BatchKernels, FastPath, GameSpec, Piece
from ripmarket_env.core.drivers import compile_drivers

__all__ = ["__version__", "DISTRIBUTION", "Agent", "BaseAgent", "BatchKernels", "Engine", "FastPath", "compile_drivers", "RandomAgent", "GameSpec", "IllegalActionError", "Piece", "seed_to_u64"]
