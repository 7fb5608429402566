"""Black Market: the batch-first rules engine and the game's ``GameSpec`` (``SPEC``),
registered in ``ripmarket_env.games`` as ``"black-market"``.

The rules page is docs/games/black-market/RULES.md (rule IDs BM-x.y); the game's page is
``README.md`` beside this file.
"""

from __future__ import annotations

from ripmarket_env.core.spec import GameSpec, game_hooks, lazy_hook, lazy_module
from ripmarket_env.games.blackmarket import kernels as _K
from ripmarket_env.games.blackmarket import records as _records
from ripmarket_env.games.blackmarket.cards import CardDataError
from ripmarket_env.games.blackmarket.config import ConfigError, RulesConfig
from ripmarket_env.games.blackmarket.engine import Engine, IllegalActionError
from ripmarket_env.games.blackmarket.observation import observation_bounds as _observation_bounds
from ripmarket_env.games.blackmarket.state import PHASE_NAMES

__all__ = ["CardDataError", "ConfigError", "Engine", "IllegalActionError", "RulesConfig", "SPEC"]

#: Agent decisions in one turn at most: three dice actions, four effects and their
#: choices (Loaded Dice x2 with a die each, Fixer with a die and a number, Third Die,
#: Heist with a victim).
_DECISIONS_PER_TURN = 3 + 2 * 2 + 3 + 1 + 2


def _max_decisions(rules: RulesConfig) -> int:
    return rules.turns_cap * _DECISIONS_PER_TURN


SPEC = GameSpec(
    id="black-market",
    title="Black Market",
    env_name="black_market_v0",
    gym_id="BlackMarket-v0",
    rules_version="1",
    min_players=2,
    max_players=6,
    default_players=4,
    reward_range=(-1.0, 1.0),
    rules_class=RulesConfig,
    engine_class=Engine,
    # The core's batch drivers over the game's per-row kernels (core/drivers.py).
    fast=_K.drivers_for(),
    batch=_K.drivers_for(),
    phase_names=PHASE_NAMES,
    observation_pieces=lambda engine: engine.obs_layout.pieces,
    observation_bounds=lambda engine: _observation_bounds(engine.cards, engine.rules),
    max_decisions=_max_decisions,
    records=_records,
    seat_flag="",
    **game_hooks(__name__, __file__),
    table_keys=lazy_hook(f"{__name__}.observation", "table_keys"),
    extras={"card_reference": lazy_hook(f"{__name__}.cards", "card_reference"),
            "player_counts": (2, 4, 6), "modes": ("teams", "ffa"),
            "outcome": lazy_hook(f"{__name__}.outcome", "outcome"), "sides": lazy_hook(f"{__name__}.outcome", "sides")},
    balance=lazy_module(f"{__name__}.balance"),
    bench={"engine": ({"players": 2, "batch": 4096, "observations": False, "steps_per_sec": 2_000_000},)},
)

RulesConfig.spec = SPEC
Engine.spec = SPEC
