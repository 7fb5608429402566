"""What the games' record hooks (``GameSpec.records``, see ``ripmarket_env.envs.record``) share:
the event log and default engine arguments made from the game's own classes, the cards
digest, and the result line's winners and rewards."""

from __future__ import annotations

from typing import Any, Callable


def cards_digest(engine) -> str:
    return engine.cards.digest


def log_hooks(game_log_cls: Callable[..., Any], default_cards: Callable[[], Any]):
    """``(game_log, default_engine_kwargs)`` hooks for a game whose event log is
    ``game_log_cls(engine, g)`` and whose default cards come from ``default_cards()``."""

    def game_log(engine, g: int = 0):
        return game_log_cls(engine, g)

    def default_engine_kwargs() -> dict:
        return {"cards": default_cards()}

    return game_log, default_engine_kwargs


def result_line(engine, **extra) -> dict:
    """The result line of game 0: the winners, then the game's ``extra`` fields, then the rewards."""
    r = engine.state[0]
    P = engine.num_players
    return {"result": {"winners": [q for q in range(P) if bool(r["winners"][q])],
                       **extra,
                       "rewards": [round(float(x), 6) for x in r["final_rewards"][:P]]}}
