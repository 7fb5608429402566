"""Rules text generated from a card's effect primitives.

Every primitive in the registry has exactly one template in :data:`TEMPLATES`; a card's
text is its templates' sentences joined in the order the card resolves them (a
``face_down`` marker first). The stored ``text`` in ``cards.json`` must be
one of :func:`printed_texts` of the card's effect — the loader and the tests check it — so
the printed text and the machine-readable effect can never disagree. A card's text has one
reading unless it says what a rules variant decides: a Deflection's says whom it may name,
which R-8.3's ``deflect_target`` decides, so a card file prints the words of the ruling it
is printed for (:data:`DEFLECT_NAMES`; :func:`effect_text` gives the default ruling's).

Templates receive the op's parameters with defaults filled in and enums given by
their names, plus a :class:`TextContext` describing the rest of the card.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ripmarket_env.games.ripmarket.cards import registry as R

# ---------------------------------------------------------------------------------
# Phrases
# ---------------------------------------------------------------------------------

#: What each rule change does (the keyword is part of the text).
RULE_TEXT = {
    "low_tide": "RULE FLIP: this round the lowest final score wins — the highest takes the "
    "damage and the lowest takes the First Player token.",
    "earthquake": "RULE FLIP: this round every played card scores its base value (modifiers, "
    "Shadow conditions and earlier rule changes are switched off).",
    "cull": "RULE SHIFT: this round the lowest and the second-lowest final scores each take 1 damage.",
}

#: R-8.3: whom a Deflection may name, in its text, under each ``deflect_target`` ruling
#: (``config.DEFLECT_TARGETS``). The second edition prints the default ruling's words (a
#: words-only erratum of cards.json); the first edition, played under "any", printed "any"'s.
DEFLECT_NAMES = {
    "stronger": "Name another living player with more HP than you.",
    "not_weaker": "Name another living player with at least as much HP as you.",
    "any": "Name another living player.",
}
#: The ruling :func:`effect_text` words a Deflection for: R-8.3's default.
DEFLECT_DEFAULT = "stronger"

#: The keyword a card with each rule change must carry.
RULE_KEYWORD = {"low_tide": "RULE FLIP", "earthquake": "RULE FLIP", "cull": "RULE SHIFT"}

#: Phrases for conditions on a BASE value ("Every played card with ...").
BASE_PHRASE = {
    "base_ge": "a base value of {arg} or more",
    "base_le": "a base value of {arg} or less",
    "base_even": "an even base value",
    "base_odd": "an odd base value",
}

#: Conditions whose ``arg`` is read (for the others ``arg`` must stay 0).
USES_ARG = frozenset({"base_ge", "base_le", "hp_at_most"})

#: Acquisition sources watched by ``shadow_trigger``.
SOURCE_PHRASE = {
    "took_market": "took a card from the Market this turn",
    "took_deck": "took a card from the Living Deck this turn",
}


def change(amount: int) -> str:
    """``gains 2`` / ``loses 3``: a score change that reads naturally."""
    if amount >= 0:
        return f"gains {amount}"
    return f"loses {-amount}"


def _cards(n: int) -> str:
    return "1 card" if n == 1 else f"{n} cards"


@dataclass(frozen=True)
class TextContext:
    """What a template may know about the rest of the card."""

    deck: str
    ops: tuple[str, ...]  # every op name on the card, in resolution order
    deflect_target: str = DEFLECT_DEFAULT  # R-8.3's ruling a Deflection's text is worded for

    @property
    def has_other_text(self) -> bool:
        return any(op != "face_down" for op in self.ops)


Template = Callable[[Mapping[str, Any], TextContext], str]

# ---------------------------------------------------------------------------------
# One template per primitive
# ---------------------------------------------------------------------------------


def _score_self(p: Mapping[str, Any], ctx: TextContext) -> str:
    gain = change(p["amount"])
    cond = p["cond"]
    if cond == "always":
        return f"This card {gain}."
    if cond == "per_ghost":
        return f"This card {gain} for each Ghost at the table."
    if cond == "if_haunted":
        return f"If a Shadow card is attached to you, this card {gain}."
    if cond == "hp_at_most":
        return f"If you have {p['arg']} HP or less, this card {gain}."
    if cond == "if_last":
        return f"If you are the last living player to play this round, this card {gain}."
    raise KeyError(cond)


def _base(p: Mapping[str, Any]) -> str:
    return BASE_PHRASE[p["cond"]].format(arg=p["arg"])


def _shadow_trigger(p: Mapping[str, Any], ctx: TextContext) -> str:
    watch = f"If the haunted player {SOURCE_PHRASE[p['source']]}"
    if p["kind"] == "score":
        return f"{watch}, their played card {change(p['amount'])}."
    if p["kind"] == "discard_random":
        return f"{watch}, they discard {_cards(p['amount'])} at random from their hand after playing."
    raise KeyError(p["kind"])


def _face_down(p: Mapping[str, Any], ctx: TextContext) -> str:
    if ctx.has_other_text:
        return "Play this card face-down. It is revealed at the start of resolution; the rest of its text takes effect then."
    return "Play this card face-down. It is revealed at the start of resolution."


TEMPLATES: dict[str, Template] = {
    "score_self": _score_self,
    "score_target": lambda p, ctx: f"Choose another living player: their played card {change(p['amount'])}.",
    "score_board": lambda p, ctx: f"Every played card with {_base(p)} {change(p['amount'])}.",
    "set_score": lambda p, ctx: "This card's score becomes the highest base value among the other played cards.",
    "rule": lambda p, ctx: RULE_TEXT[p["rule"]],
    "draw": lambda p, ctx: f"Draw {_cards(p['n'])} from the Living Deck.",
    "market_discard": lambda p, ctx: "Choose a Market card: it goes to the discard and its slot refills.",
    "market_flush": lambda p, ctx: "The whole Market goes to the discard and refills.",
    "market_take": lambda p, ctx: "Choose a Market card and take it into your hand; its slot refills.",
    "damage_target": lambda p, ctx: (
        f"Choose another living player with more HP than you: they lose {p['amount']} HP."
    ),
    "exorcise": lambda p, ctx: "Every Shadow card attached to you goes to the Shadow discard.",
    "deflect": lambda p, ctx: (
        f"{DEFLECT_NAMES[ctx.deflect_target]} At resolution, if you would take round damage, they take it instead."
    ),
    "face_down": _face_down,
    "replace": lambda p, ctx: (
        "Choose a card from your hand: it replaces this card, which goes to the discard, "
        "and resolves its full text now."
    ),
    "shadow_score": lambda p, ctx: f"If the attached card has {_base(p)}, it {change(p['amount'])}.",
    "shadow_trigger": _shadow_trigger,
}

#: Text of a card without any effect.
NO_EFFECT = "No effect."


def normalize_params(op: str, raw: Mapping[str, Any]) -> dict[str, Any]:
    """The op's parameters in registry order with defaults filled in (enums by name).

    Assumes ``raw`` already passed validation (see :mod:`.loader`).
    """
    prim = R.BY_NAME[op]
    out: dict[str, Any] = {}
    for par in prim.params:
        out[par.name] = raw[par.name] if par.name in raw else par.default
    return out


def resolution_order(effect: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The card's ops in the order they are compiled: ``face_down`` first, others as written."""
    return [e for e in effect if e["op"] == "face_down"] + [e for e in effect if e["op"] != "face_down"]


def effect_text(deck: str, effect_list: Sequence[Mapping[str, Any]], deflect_target: str = DEFLECT_DEFAULT) -> str:
    """Deterministic English rules text for a (valid) effect list; a Deflection's is worded
    for R-8.3's ruling ``deflect_target`` (default: the rules' default)."""
    ops = resolution_order(effect_list)
    if not ops:
        return NO_EFFECT
    ctx = TextContext(deck=deck, ops=tuple(e["op"] for e in ops), deflect_target=deflect_target)
    parts = []
    for e in ops:
        params = normalize_params(e["op"], {k: v for k, v in e.items() if k != "op"})
        parts.append(TEMPLATES[e["op"]](params, ctx))
    return " ".join(parts)


def printed_texts(deck: str, effect_list: Sequence[Mapping[str, Any]]) -> tuple[str, ...]:
    """Every text a card with this effect may print, :func:`effect_text`'s first: one unless
    the card has words a ruling decides (a Deflection: one per R-8.3 ruling)."""
    out = [effect_text(deck, effect_list)]
    if any(e["op"] == "deflect" for e in effect_list):
        out += [effect_text(deck, effect_list, t) for t in DEFLECT_NAMES if t != DEFLECT_DEFAULT]
    return tuple(out)
