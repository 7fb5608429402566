"""R.I.P. Market: the batch-first rules engine (numba kernels over named arrays) and the
game's ``GameSpec`` (``SPEC``), registered in ``ripmarket_env.games`` as ``"ripmarket"``.

The game's page is ``README.md`` beside this file (and ``docs/RULES.md`` for the rules).
"""

from __future__ import annotations

from ripmarket_env.core.spec import GameSpec, game_hooks, lazy_hook, lazy_module
from ripmarket_env.games.ripmarket import kernels as _K
from ripmarket_env.games.ripmarket import records as _records
from ripmarket_env.games.ripmarket.config import ConfigError, RulesConfig
from ripmarket_env.games.ripmarket.engine import Engine, IllegalActionError, seed_to_u64
from ripmarket_env.games.ripmarket.observation import observation_bounds as _observation_bounds
from ripmarket_env.games.ripmarket.state import PHASE_NAMES

__all__ = ["ConfigError", "Engine", "IllegalActionError", "RulesConfig", "SPEC", "seed_to_u64"]

#: Agent decisions a seat can take in one round at most (acquire, play, then a target,
#: a Market slot or a replacement and the replacement's own choice; a Ghost: haunt, victim).
_DECISIONS_PER_TURN = 4


def _max_decisions(rules: RulesConfig) -> int:
    return (rules.rounds_cap + 1) * rules.num_players * _DECISIONS_PER_TURN


SPEC = GameSpec(
    id="ripmarket",
    title="R.I.P. Market",
    env_name="ripmarket_v0",
    gym_id="RipMarket-v0",
    rules_version="1",
    min_players=2,
    max_players=10,
    default_players=4,
    reward_range=(-1.0, 1.0),
    rules_class=RulesConfig,
    engine_class=Engine,
    # The core's batch drivers over the game's per-row kernels (core/drivers.py).
    fast=_K.drivers_for(),
    batch=_K.drivers_for(),
    phase_names=PHASE_NAMES,
    observation_pieces=lambda engine: engine.obs_layout.pieces,
    observation_bounds=lambda engine: _observation_bounds(engine.cards),
    max_decisions=_max_decisions,
    records=_records,
    seat_flag="is_ghost",
    **game_hooks(__name__, __file__),
    table_keys=lazy_hook(f"{__name__}.observation", "table_keys"),
    extras={"card_reference": lazy_hook(f"{__name__}.cards.reference", "card_reference"),
            "outcome": lazy_hook(f"{__name__}.outcome", "outcome"),
            "env_doc": lazy_hook(f"{__name__}.envdoc", "sections"), "docs_dir": "docs"},
    card_files=lazy_module(f"{__name__}.card_files"),
    balance=lazy_module(f"{__name__}.balance"),
    bench={"engine": ({"players": 6, "batch": 4096, "observations": False, "steps_per_sec": 2_000_000},
                      {"players": 6, "batch": 4096, "observations": True, "steps_per_sec": 500_000}),
           "aec_players": 6, "vector": {"players": 6, "num_envs": 1024, "learner_steps_per_sec": 300_000}},
)

# A rules config and an engine know their game (records, envs and checkpoints read it).
RulesConfig.spec = SPEC
Engine.spec = SPEC
