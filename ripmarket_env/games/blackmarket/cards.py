"""Black Market's cards as data: ``cards.json`` beside this file, validated on load.

The Hand deck has three kinds (Red, Black, Flip); the Point deck lists designs with a
colour, points, copies and an optional effect built from one primitive of ``PRIMITIVES``
(BM-2.3, BM-6.1). Every error names the card and the field and says what is allowed
(``CardDataError``, a ``ValueError``). ``reference_markdown()`` is the card reference
(``ripmarket cards --game black-market``, committed as docs/games/black-market/CARDS.md).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from ripmarket_env.core.errata import ERRATA_KEY, Erratum, errata_markdown, first_printing, parse_errata
from ripmarket_env.core.jsonfile import MAX_NAME_CHARS, listed_twice, other_game, read_json, short, text_problem

DATA = Path(__file__).with_name("cards.json")

HAND_KINDS = ("red", "black", "flip")  # kind codes 0, 1, 2
COLOURS = ("red", "black", "dual")  # colour codes 0, 1, 2

# Effect primitives: name -> (code, active?, needs amount?, default amount, what it does).
# Active primitives are actions of their own (action 54 + code, in this order); passive
# ones apply by themselves when an action needs them.
PRIMITIVES = {
    "reroll_die": (0, True, False, 0, "reroll one of your unused dice"),
    "set_die": (1, True, False, 0, "set one of your unused dice to any other number"),
    "extra_die": (2, True, False, 0, "roll one more die: one more action this turn"),
    "steal_cards": (3, True, True, 2, "take `amount` random Hand Cards from one opponent (never past your hand limit)"),
    "buy_facing_other": (4, False, False, 0, "one purchase per turn may take a face-up card that faces the other side"),
    "buy_face_down": (5, False, False, 0, "one purchase per turn may take a face-down card that faces you"),
    "discount_buy": (6, False, True, 1, "one purchase per turn (the first made while owning it) costs `amount` fewer cards"),
    "extra_draw": (7, False, True, 1, "one draw per turn (the first made while owning it) draws `amount` more Hand Cards"),
}
N_ACTIVE = 4
N_PRIMITIVES = len(PRIMITIVES)
PRIM_CODES = {name: v[0] for name, v in PRIMITIVES.items()}
#: Active primitives that ask a further choice (the observation's ``pending`` one-hot).
PENDING_PRIMS = ("reroll_die", "set_die", "steal_cards")


class CardDataError(ValueError):
    """Malformed card data (the message names the card and the field)."""


@dataclass(frozen=True)
class PointCard:
    id: int
    name: str
    colour: str
    points: int
    copies: int
    primitive: str | None
    one_time: bool
    amount: int
    text: str


@dataclass(frozen=True)
class HandCard:
    id: int
    name: str
    kind: str
    copies: int
    text: str


@dataclass(frozen=True)
class CardDB:
    hand: tuple[HandCard, ...]
    point: tuple[PointCard, ...]
    digest: str  # the card set's, over the file as first printed (words-only errata put back)
    printing_digest: str  # over the file as it reads now
    errata: tuple[Erratum, ...] = ()  # ripmarket_env.core.errata

    @property
    def n_designs(self) -> int:
        return len(self.point)

    @property
    def point_deck_size(self) -> int:
        return sum(c.copies for c in self.point)

    @property
    def hand_deck_size(self) -> int:
        return sum(c.copies for c in self.hand)

    @property
    def total_points(self) -> int:
        return sum(c.copies * c.points for c in self.point)

    @property
    def effect_designs(self) -> list[int]:
        return [c.id for c in self.point if c.primitive is not None]

    @property
    def one_time_designs(self) -> list[int]:
        return [c.id for c in self.point if c.primitive is not None and c.one_time]

    def design_of(self, primitive: str) -> int:
        for c in self.point:
            if c.primitive == primitive:
                return c.id
        return -1

    def hand_copies(self) -> np.ndarray:
        out = np.zeros(3, np.int64)
        for c in self.hand:
            out[HAND_KINDS.index(c.kind)] = c.copies
        return out


def _fail(where: str, field: str, msg: str):
    raise CardDataError(f"card data: {where}: field {field!r} {msg}")


def _int(where, obj, field, lo, hi, default=None, label=None):
    label = label or field
    if field not in obj:
        if default is not None:
            return default
        _fail(where, label, f"is missing; allowed: an integer from {lo} to {hi}")
    v = obj[field]
    if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
        _fail(where, label, f"must be an integer from {lo} to {hi}, got {short(v)}")
    return v


def _str(where, obj, field, allowed=None):
    v = obj.get(field)
    if problem := text_problem(v, MAX_NAME_CHARS, empty=False):
        _fail(where, field, problem)
    if allowed is not None and v not in allowed:
        _fail(where, field, f"must be one of {', '.join(allowed)}; got {short(v)}")
    return v


def _id_at(where, obj, i: int) -> None:
    """A card's ``id`` is its place in its list (0, 1, ...); an earlier place's id says the
    card may be listed twice."""
    got = obj.get("id")
    if got != i:
        _fail(where, "id", f"must be {i} (ids count up from 0 in file order), got {short(got)}{listed_twice(got, i)}")


def _text_of(where, obj, allowed: tuple[str, ...]) -> str:
    """The card's ``text`` (a string, may be empty), after refusing fields it does not have."""
    unknown = sorted(str(k) for k in obj if k not in allowed)
    if unknown:
        _fail(where, unknown[0], f"is not a field of this card; allowed: {', '.join(allowed)}")
    v = obj.get("text", "")
    if problem := text_problem(v):
        _fail(where, "text", problem)
    return v


def parse(data, source: str = "cards") -> CardDB:
    """A validated ``CardDB`` from the decoded JSON ``data`` (CardDataError otherwise)."""
    if not isinstance(data, dict):
        raise CardDataError(f"card data ({source}): the top level must be an object, got {type(data).__name__}")
    if (other := other_game(data, "black-market")) is not None:
        raise CardDataError(f"card data ({source}): this is a card file of {short(other)}, not of Black Market "
                            f"(--game {other[:40]} reads it)")
    for key in ("hand_cards", "point_cards"):
        if not isinstance(data.get(key), list) or not data[key]:
            raise CardDataError(f"card data ({source}): {key!r} must be a non-empty list of cards")
    unknown = sorted(str(k) for k in data if k not in ("game", "version", "hand_cards", "point_cards", ERRATA_KEY))
    if unknown:
        raise CardDataError(f"card data ({source}): unknown key(s) {short(', '.join(unknown))}; "
                            f"allowed: game, version, hand_cards, point_cards, {ERRATA_KEY}")
    if data.get("game", "black-market") != "black-market":
        raise CardDataError(f"card data ({source}): field 'game' must be 'black-market', got {short(data['game'])}")
    if data.get("version", 1) != 1 or isinstance(data.get("version"), bool):
        raise CardDataError(f"card data ({source}): field 'version' must be 1, got {short(data['version'])}")
    hand = []
    for i, obj in enumerate(data["hand_cards"]):
        where = f"hand card #{i}" + (f" {short(obj.get('name'))}" if isinstance(obj, dict) and "name" in obj else "")
        if not isinstance(obj, dict):
            raise CardDataError(f"card data: {where}: must be an object")
        _id_at(where, obj, i)
        text = _text_of(where, obj, ("id", "name", "kind", "copies", "text"))  # a misspelt field first
        name = _str(where, obj, "name")
        kind = _str(where, obj, "kind", HAND_KINDS)
        copies = _int(where, obj, "copies", 0, 99)
        hand.append(HandCard(i, name, kind, copies, text))
    kinds = [c.kind for c in hand]
    for k in HAND_KINDS:
        if kinds.count(k) != 1:
            raise CardDataError(f"card data: hand_cards: kind {short(k)} must appear exactly once, found {kinds.count(k)}")
    total_hand = sum(c.copies for c in hand)
    if not 12 <= total_hand <= 120:
        raise CardDataError(f"card data: hand_cards: the copies must add up to 12..120 cards, got {total_hand}")
    point = []
    seen_prims: dict[str, str] = {}
    names = set()
    for i, obj in enumerate(data["point_cards"]):
        where = f"point card #{i}" + (f" {short(obj.get('name'))}" if isinstance(obj, dict) and "name" in obj else "")
        if not isinstance(obj, dict):
            raise CardDataError(f"card data: {where}: must be an object")
        _id_at(where, obj, i)
        text = _text_of(where, obj, ("id", "name", "colour", "points", "copies", "effect", "text"))
        name = _str(where, obj, "name")
        if name in names:
            _fail(where, "name", f"must be unique; {short(name)} appears twice")
        names.add(name)
        colour = _str(where, obj, "colour", COLOURS)
        points = _int(where, obj, "points", 0, 9)
        copies = _int(where, obj, "copies", 1, 9)
        eff = obj.get("effect")
        prim, one_time, amount = None, False, 0
        if eff is not None:
            if not isinstance(eff, dict):
                _fail(where, "effect", f"must be null or an object with 'primitive', got {short(eff)}")
            prim = eff.get("primitive")
            if prim not in PRIMITIVES:
                _fail(where, "effect.primitive", f"must be one of {', '.join(PRIMITIVES)}; got {short(prim)}")
            if prim in seen_prims:
                _fail(where, "effect.primitive", f"{short(prim)} is already the effect of {short(seen_prims[prim])}; each primitive serves one design")
            seen_prims[prim] = name
            one_time = eff.get("one_time", False)
            if not isinstance(one_time, bool):
                _fail(where, "effect.one_time", f"must be true or false, got {short(one_time)}")
            _code, _active, has_amount, default, _doc = PRIMITIVES[prim]
            if has_amount:
                amount = _int(where, eff, "amount", 1, 3, default=default, label="effect.amount")
            elif "amount" in eff:
                _fail(where, "effect.amount", f"is not used by {short(prim)}; remove it")
            unknown = sorted(set(eff) - {"primitive", "one_time", "amount"})
            if unknown:
                _fail(where, "effect", f"has unknown key(s) {', '.join(unknown)}; allowed: primitive, one_time, amount")
        point.append(PointCard(i, name, colour, points, copies, prim, one_time, amount, text))
    if len(point) > 24:
        raise CardDataError(f"card data: point_cards: at most 24 designs, got {len(point)}")
    deck = sum(c.copies for c in point)
    if not 6 <= deck <= 60:
        raise CardDataError(f"card data: point_cards: the copies must add up to 6..60 cards (six fill the map), got {deck}")
    def fail(msg: str):
        raise CardDataError(f"card data ({source}): {msg}")

    errata = parse_errata(data.get(ERRATA_KEY), ((c.name, c.text) for c in (*hand, *point)), fail)
    cards = {k: v for k, v in data.items() if k != ERRATA_KEY}
    first = {**cards, **{k: first_printing(cards[k], errata) for k in ("hand_cards", "point_cards")}}
    return CardDB(tuple(hand), tuple(point), _digest(first), _digest(cards), errata)


def _digest(data) -> str:
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:16]


def load(path=None) -> CardDB:
    """Read and validate a card file (default: the packaged ``cards.json``)."""
    path = DATA if path is None else Path(path)
    data = read_json(path, f"card data: {path}", CardDataError)
    try:
        return parse(data, str(path))
    except RecursionError:
        raise CardDataError(f"card data: {path}: nested too deeply to be a card file") from None
    except CardDataError as exc:  # name the file in every message
        msg = str(exc)
        if str(path) in msg:
            raise
        raise CardDataError(msg.replace("card data: ", f"card data: {path}: ", 1)) from None


@lru_cache(maxsize=1)
def default_cards() -> CardDB:
    return load()


def effect_text(c: PointCard) -> str:
    if c.primitive is None:
        return "-"
    code, active, has_amount, _d, doc = PRIMITIVES[c.primitive]
    doc = doc.replace("`amount`", str(c.amount)) if has_amount else doc
    kind = "active" if active else "passive"
    return f"{kind}{', ONE-TIME' if c.one_time else ''}: {doc}"


def reference_markdown(db: CardDB | None = None, source=None) -> str:
    """The card reference page (generated; docs/games/black-market/CARDS.md); ``source``:
    the card file it was read from, when not the packaged one."""
    db = db or default_cards()
    made = (["Generated from `ripmarket_env/games/blackmarket/cards.json` by",
             "`ripmarket cards --game black-market`; do not edit by hand (a test checks it is current)."]
            if source is None else [f"The reference of the card file `{source}` (read and checked by",
                                    "`ripmarket cards --game black-market --file`)."])
    lines = [
        "# Black Market card reference",
        "",
        *made,
        "Rules: [RULES.md](RULES.md) (BM-2.2 Hand deck, BM-2.3 Point deck, BM-6 effects).",
        "",
        f"## Hand Cards ({db.hand_deck_size})",
        "",
        "| id | card | copies | use |",
        "|---|---|---|---|",
    ]
    for c in db.hand:
        lines.append(f"| {c.id} | {c.name} | {c.copies} | {c.text} |")
    lines += [
        "",
        f"## Point Cards ({db.point_deck_size} cards, {db.total_points} points)",
        "",
        "| id | card | colour | points | copies | effect |",
        "|---|---|---|---|---|---|",
    ]
    for c in db.point:
        lines.append(f"| {c.id} | {c.name} | {c.colour.capitalize()} | {c.points} | {c.copies} | {effect_text(c)} |")
    lines += [
        "",
        "## Effect primitives",
        "",
        "| primitive | kind | meaning |",
        "|---|---|---|",
    ]
    for name, (_code, active, _h, _d, doc) in PRIMITIVES.items():
        lines.append(f"| `{name}` | {'active' if active else 'passive'} | {doc} |")
    cols = {k: sum(c.copies for c in db.point if c.colour == k) for k in COLOURS}
    lines += ["", f"Colours: {cols['red']} Red, {cols['black']} Black, {cols['dual']} Dual.", ""]
    lines += errata_markdown(db.errata, db.printing_digest)
    return "\n".join(lines)


def card_reference(path=None, custom_deck: bool = False) -> tuple[str, None]:
    """``ripmarket cards --game black-market``: the reference of a card file (default: the
    packaged one) as Markdown, and no table of its own (the Markdown is shown). The deck
    sizes are the rules' own: ``custom_deck`` is refused."""
    if custom_deck:
        raise CardDataError("--custom-deck: not needed here: a Black Market card file may hold 12-120 Hand "
                            "Cards and 6-60 Point Cards as it is")
    packaged = path is None or Path(path).resolve() == DATA.resolve()
    return reference_markdown(load(path), source=None if packaged else path), None
