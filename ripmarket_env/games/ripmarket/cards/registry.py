"""The effect-primitive registry: the one list of everything a card can do.

Each primitive has a numeric code (what the compiled tables and the kernels use), a
parameter schema, a timing, the choice it asks the player for (if any) and a text
template. ``cards.json`` names primitives by ``op``; the loader checks every parameter
against this schema and compiles an effect to rows ``(code, p1, p2, p3)``.

The kernels in ``ripmarket_env/games/ripmarket/kernels.py`` dispatch on the codes below; a test
checks that every primitive here has a kernel and a text template.
"""

from __future__ import annotations

from dataclasses import dataclass, field

# ---------------------------------------------------------------------------------
# Enumerations used as parameter values (name -> code).
# ---------------------------------------------------------------------------------

#: Conditions for ``score_self``.
SELF_CONDS = {
    "always": 0,  # always applies
    "per_ghost": 1,  # amount x number of Ghosts at resolution
    "if_haunted": 2,  # a Shadow card is attached to you at resolution
    "hp_at_most": 3,  # your HP <= arg
    "if_last": 4,  # you are the last living player in this round's turn order to play
}

#: Conditions on a card's BASE value (board-wide modifiers and Shadow conditions).
BASE_CONDS = {
    "base_ge": 0,  # base value >= arg
    "base_le": 1,  # base value <= arg
    "base_even": 2,  # base value even
    "base_odd": 3,  # base value odd
}



def base_cond_holds(cond: str, arg: int, base: int) -> bool:
    """Whether a BASE_CONDS condition (by name) holds for a printed base value (R-7.2)."""
    if cond == "base_ge":
        return base >= arg
    if cond == "base_le":
        return base <= arg
    if cond == "base_even":
        return base % 2 == 0
    if cond == "base_odd":
        return base % 2 == 1
    return False


#: Sources for ``set_score``.
SET_SOURCES = {"highest_other_base": 0}

#: Rule changes (one active-rule slot per round).
RULES = {"none": 0, "low_tide": 1, "earthquake": 2, "cull": 3}

#: What a ``shadow_trigger`` does when its condition holds.
TRIGGER_KINDS = {"score": 0, "discard_random": 1}

#: Acquisition sources a ``shadow_trigger`` can watch.
TRIGGER_SOURCES = {"took_market": 0, "took_deck": 1}

# Timing
WHEN_PLAYED = "when_played"  # resolved when the card is played (at reveal if face-down)
AT_RESOLUTION = "at_resolution"  # applied when final scores are computed
ON_PLAY = "on_play"  # marker on the play itself (face-down)

# Choices a primitive can ask for
CHOICE_NONE = 0
CHOICE_TARGET = 1  # another living player
CHOICE_MARKET = 2  # a non-empty Market slot
CHOICE_HAND = 3  # a Living card design from your hand
CHOICE_TARGET_RICHER = 4  # another living player with more HP than you


@dataclass(frozen=True)
class Param:
    name: str
    kind: str  # "int" or "enum"
    lo: int = 0
    hi: int = 0
    enum: dict | None = None
    default: int | str | None = None


@dataclass(frozen=True)
class Primitive:
    name: str
    code: int
    deck: str  # "living" or "shadow"
    timing: str
    params: tuple[Param, ...] = field(default_factory=tuple)
    choice: int = CHOICE_NONE
    doc: str = ""


# ---------------------------------------------------------------------------------
# Op codes (stable: compiled tables and kernels use them).
# ---------------------------------------------------------------------------------
OP_NONE = 0
OP_SCORE_SELF = 1
OP_SCORE_TARGET = 2
OP_SCORE_BOARD = 3
OP_SET_SCORE = 4
OP_RULE = 5
OP_DRAW = 6
OP_MARKET_DISCARD = 7
OP_MARKET_FLUSH = 8
OP_MARKET_TAKE = 9
OP_DAMAGE_TARGET = 10
OP_EXORCISE = 11
OP_DEFLECT = 12
OP_FACE_DOWN = 13
OP_REPLACE = 14
OP_SHADOW_SCORE = 20
OP_SHADOW_TRIGGER = 21

_AMOUNT = Param("amount", "int", -6, 6)

PRIMITIVES: tuple[Primitive, ...] = (
    Primitive(
        "score_self", OP_SCORE_SELF, "living", AT_RESOLUTION,
        (_AMOUNT, Param("cond", "enum", enum=SELF_CONDS, default="always"), Param("arg", "int", 0, 8, default=0)),
        doc="At resolution your card's score changes by amount if the condition holds "
        "(per_ghost: amount times the number of Ghosts).",
    ),
    Primitive(
        "score_target", OP_SCORE_TARGET, "living", AT_RESOLUTION, (_AMOUNT,), CHOICE_TARGET,
        doc="When played, choose another living player; at resolution their card's score "
        "changes by amount.",
    ),
    Primitive(
        "score_board", OP_SCORE_BOARD, "living", AT_RESOLUTION,
        (_AMOUNT, Param("cond", "enum", enum=BASE_CONDS), Param("arg", "int", 0, 8, default=0)),
        doc="Board-wide: at resolution every played card whose BASE value meets the "
        "condition (yours included) changes by amount.",
    ),
    Primitive(
        "set_score", OP_SET_SCORE, "living", AT_RESOLUTION,
        (Param("source", "enum", enum=SET_SOURCES),),
        doc="At resolution your card's score is set to the source value (overrides earlier modifiers).",
    ),
    Primitive(
        "rule", OP_RULE, "living", WHEN_PLAYED,
        (Param("rule", "enum", enum={k: v for k, v in RULES.items() if v}),),
        doc="RULE FLIP / RULE SHIFT: this round's active rule becomes this one "
        "(the most recent rule change wins).",
    ),
    Primitive("draw", OP_DRAW, "living", WHEN_PLAYED, (Param("n", "int", 1, 3),),
              doc="When played, draw n cards from the Living Deck."),
    Primitive("market_discard", OP_MARKET_DISCARD, "living", WHEN_PLAYED, (), CHOICE_MARKET,
              doc="When played, choose a Market slot: its card goes to the discard and the slot refills."),
    Primitive("market_flush", OP_MARKET_FLUSH, "living", WHEN_PLAYED, (),
              doc="When played, the whole Market goes to the discard and refills."),
    Primitive("market_take", OP_MARKET_TAKE, "living", WHEN_PLAYED, (), CHOICE_MARKET,
              doc="When played, take the card in a Market slot into your hand; the slot refills."),
    Primitive("damage_target", OP_DAMAGE_TARGET, "living", WHEN_PLAYED, (Param("amount", "int", 1, 1),),
              CHOICE_TARGET_RICHER,
              doc="When played, choose another living player with more HP than you: they lose amount HP now."),
    Primitive("exorcise", OP_EXORCISE, "living", WHEN_PLAYED, (),
              doc="When played, every Shadow card attached to you goes to the Shadow discard."),
    Primitive("deflect", OP_DEFLECT, "living", WHEN_PLAYED, (), CHOICE_TARGET,
              doc="When played, name another living player; at resolution, if you would take "
              "round damage, they take it instead (once)."),
    Primitive("face_down", OP_FACE_DOWN, "living", ON_PLAY, (),
              doc="Played face-down; revealed at the start of resolution, when its other text takes effect."),
    Primitive("replace", OP_REPLACE, "living", WHEN_PLAYED, (), CHOICE_HAND,
              doc="When played, choose a card from your hand: it replaces this card, which goes "
              "to the discard; the replacement resolves its full text now."),
    Primitive(
        "shadow_score", OP_SHADOW_SCORE, "shadow", AT_RESOLUTION,
        (_AMOUNT, Param("cond", "enum", enum=BASE_CONDS), Param("arg", "int", 0, 8, default=0)),
        doc="At resolution, if the haunted card's BASE value meets the condition, its score changes by amount.",
    ),
    Primitive(
        "shadow_trigger", OP_SHADOW_TRIGGER, "shadow", WHEN_PLAYED,
        (Param("kind", "enum", enum=TRIGGER_KINDS), _AMOUNT,
         Param("source", "enum", enum=TRIGGER_SOURCES)),
        doc="When the victim plays, if they acquired from the named source this turn: "
        "score (their card's score changes by amount) or discard_random (they discard "
        "amount random cards from hand).",
    ),
)

BY_NAME = {p.name: p for p in PRIMITIVES}
BY_CODE = {p.code: p for p in PRIMITIVES}

#: Maximum primitives per card.
MAX_OPS = 4
