"""The card database: effect registry, loader/compiler, rules text and card reference."""

from ripmarket_env.games.ripmarket.cards.loader import (
    CardDataError,
    CardDB,
    CardDesign,
    EffectOp,
    default_cards,
    load_cards,
)
from ripmarket_env.games.ripmarket.cards.reference import render_cards_markdown
from ripmarket_env.games.ripmarket.cards.text import effect_text

__all__ = [
    "CardDB",
    "CardDataError",
    "CardDesign",
    "EffectOp",
    "default_cards",
    "effect_text",
    "load_cards",
    "render_cards_markdown",
]
