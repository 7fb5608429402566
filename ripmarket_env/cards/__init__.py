"""The card database: effect registry, loader/compiler, rules text and card reference."""

from .loader import CardDataError, CardDB, CardDesign, EffectOp, default_cards, load_cards
from .reference import render_cards_markdown
from .text import effect_text

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
