"""The seeds and random-opponent stream of the batched learner envs, by their old names.

The drivers themselves (the learner step with compiled random opponents, the auto-reset,
``gather``/``encode_rows``) are written once for every game in
``ripmarket_env/core/drivers.py``; R.I.P. Market gets them from ``kernels.drivers_for``.
"""

from ripmarket_env.core.drivers import MAX_REDEALS, OPP_SALT, SEAT_SALT  # noqa: F401
from ripmarket_env.core.seeds import (  # noqa: F401
    GOLDEN,
    episode_key,
    episode_seed_one,
    episode_seeds,
    fold_seed_u64,
    fold_seeds_u64,
    splitmix64,
)
