"""Black Market: the batch-first rules engine and the game's ``GameSpec`` (``SPEC``),
registered in ``ripmarket_env.games`` as ``"black-market"``.

The rules page is docs/games/black-market/RULES.md (rule IDs BM-x.y); the game's page is
``README.md`` beside this file.
"""

from __future__ import annotations

from pathlib import Path

from ripmarket_env.core.spec import GameSpec
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


def _render_text(engine, g=0, viewer=None, god=False):
    from ripmarket_env.games.blackmarket.render import render_text

    return render_text(engine, g, viewer=viewer, god=god)


def _render_rgb(engine, g=0, viewer=None, god=False):
    from ripmarket_env.games.blackmarket.render import render_rgb

    return render_rgb(engine, g, viewer=viewer, god=god)


def _check_invariants(engine, g=0, prev=None):
    from ripmarket_env.games.blackmarket.invariants import check_game

    return check_game(engine, g, prev=prev)


def _scramble_hidden(engine, g, viewer, rng):
    from ripmarket_env.games.blackmarket.invariants import scramble_hidden

    return scramble_hidden(engine, g, viewer, rng)


def _outcome(engine):
    from ripmarket_env.games.blackmarket.outcome import outcome

    return outcome(engine)


def _sides(rules):
    from ripmarket_env.games.blackmarket.outcome import sides

    return sides(rules)


def _doc() -> str:
    path = Path(__file__).with_name("README.md")
    return path.read_text(encoding="utf-8") if path.is_file() else ""


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
    action_names=lambda engine: [engine.describe_action(a) for a in range(engine.num_actions)],
    max_decisions=_max_decisions,
    render_text=_render_text,
    render_rgb=_render_rgb,
    check_invariants=_check_invariants,
    scramble_hidden=_scramble_hidden,
    records=_records,
    seat_flag="",
    doc=_doc(),
    extras={"player_counts": (2, 4, 6), "modes": ("teams", "ffa"), "outcome": _outcome, "sides": _sides},
)

RulesConfig.spec = SPEC
Engine.spec = SPEC
