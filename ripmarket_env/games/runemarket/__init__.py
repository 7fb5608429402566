"""The Rune Market: the batch-first rules engine (numba kernels over named arrays) and the
game's ``GameSpec`` (``SPEC``), registered in ``ripmarket_env.games`` as ``"rune-market"``.

Rules: ``docs/games/rune-market/RULES.md`` (rule IDs ``RM-x.y``); the game's page is
``README.md`` beside this file.
"""

from __future__ import annotations

from ripmarket_env.core.engine import kernel_view as _kv
from ripmarket_env.core.spec import GameSpec, game_hooks, lazy_hook, lazy_module
from ripmarket_env.games.runemarket import kernels as _K
from ripmarket_env.games.runemarket import records as _records
from ripmarket_env.games.runemarket.cards import CardDataError, load_cards
from ripmarket_env.games.runemarket.config import ConfigError, RulesConfig
from ripmarket_env.games.runemarket.engine import Engine, IllegalActionError
from ripmarket_env.games.runemarket.observation import LAYOUT
from ripmarket_env.games.runemarket.observation import observation_bounds as _observation_bounds
from ripmarket_env.games.runemarket.state import PHASE_NAMES

__all__ = ["CardDataError", "ConfigError", "Engine", "IllegalActionError", "RulesConfig", "SPEC", "load_cards"]

#: Agent decisions in one turn at most: stage 1 (a discard, a victim, two thefts), stage 2
#: (four purchases with a Shelter each), and per hand card at most a play, a card or
#: payment, a victim, a theft and the defender's answer; a hand holds at most the deck.
_DECISIONS_PER_TURN = 4 + 8 + 5 * 64


def _max_decisions(rules: RulesConfig) -> int:
    return (rules.turns_cap + 1) * _DECISIONS_PER_TURN


def reset_with_options(engine, g: int, seed64, options: dict):
    """The AEC env's ``reset(options=...)``: ``{"first_player": seat}`` starts the game with
    that seat (match play, RM-1.5); the status of game ``g`` after the reset. Other keys
    are ignored, as Gymnasium and PettingZoo expect of ``options``."""
    if not isinstance(options, dict):
        raise ValueError(f"reset options must be a dict, got {type(options).__name__}")
    fp = options.get("first_player")
    first = -1 if fp is None else engine.check_seat(fp, "first_player")
    return _K.reset_first_one(_kv(engine.state), _kv(engine.tables), engine.cfg, g, seed64, first)


SPEC = GameSpec(
    id="rune-market",
    title="The Rune Market",
    env_name="rune_market_v0",
    gym_id="RuneMarket-v0",
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
    observation_pieces=lambda engine: LAYOUT.pieces,
    observation_bounds=lambda engine: _observation_bounds(engine.cfg),
    max_decisions=_max_decisions,
    records=_records,
    seat_flag="",
    **game_hooks(__name__, __file__),
    table_keys=lazy_hook(f"{__name__}.observation", "table_keys"),
    extras={"card_reference": lazy_hook(f"{__name__}.cards", "card_reference"),
            "reset_options": reset_with_options},
    next_first_players=lazy_hook(f"{__name__}.outcome", "next_first_players"),
    balance=lazy_module(f"{__name__}.balance"),
    bench={"engine": ({"players": 4, "batch": 4096, "observations": False, "steps_per_sec": 2_000_000},)},
)

RulesConfig.spec = SPEC
Engine.spec = SPEC
