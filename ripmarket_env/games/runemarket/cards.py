"""The Rune Market's cards as data: ``cards.json`` beside this file, validated on load.

The deck is the 56-card design of the rulings (RM-1.3): ten Number designs (values 1-10),
the Theft Card and the Red and Blue Shelters, in that design-id order (the action space
and the observation are laid out by it); the Market cards are the Runes, Boat Shelters
and Bandits (RM-1.2). Copies may vary within the bounds below; every other field is
fixed by the rules. A malformed file raises ``CardDataError`` naming the card and field.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from ripmarket_env.core.errata import ERRATA_KEY, Erratum, errata_markdown, first_printing, parse_errata
from ripmarket_env.core.jsonfile import MAX_NAME_CHARS, other_game, read_json, short, text_problem

DATA_FILE = Path(__file__).with_name("cards.json")
FORMAT = "rune-market-cards"
N_DESIGNS = 13
D_THEFT = 10
D_SHELTER = (11, 12)  # Red, Blue
MAX_DECK = 64
MARKET_IDS = ("red_rune", "blue_rune", "boat_shelter", "bandit")
#: (min, max) copies of each Market card: Runes, Boat Shelters, Bandits
MARKET_COPIES = {"red_rune": (1, 10), "blue_rune": (1, 10), "boat_shelter": (0, 4), "bandit": (0, 4)}
COLOURS = ("red", "blue")


class CardDataError(ValueError):
    """The card data file is malformed (the message names the card and field)."""


@dataclass(frozen=True)
class Card:
    id: int
    name: str
    kind: str  # number | theft | shelter
    copies: int
    value: int = 0
    colour: str = ""
    text: str = ""


@dataclass(frozen=True)
class MarketCard:
    id: str
    name: str
    copies: int
    text: str = ""


@dataclass(frozen=True)
class CardDB:
    deck: tuple[Card, ...]
    market: tuple[MarketCard, ...]
    digest: str  # the card set's, over the cards as first printed (words-only errata put back)
    source: str
    printing_digest: str  # over the cards as they read now
    errata: tuple[Erratum, ...] = ()  # ripmarket_env.core.errata

    @property
    def copies(self) -> np.ndarray:
        return np.array([c.copies for c in self.deck], np.int64)

    @property
    def deck_size(self) -> int:
        return int(self.copies.sum())

    def market_count(self, mid: str) -> int:
        return next(m.copies for m in self.market if m.id == mid)

    @property
    def market_array(self) -> np.ndarray:
        return np.array([self.market_count(m) for m in MARKET_IDS], np.int64)

    def name(self, d: int) -> str:
        return self.deck[d].name


def _expected(d: int) -> dict:
    if d < 10:
        return {"kind": "number", "value": d + 1, "name": f"Number {d + 1}"}
    if d == D_THEFT:
        return {"kind": "theft", "name": "Theft"}
    colour = COLOURS[d - 11]
    return {"kind": "shelter", "colour": colour, "name": f"{colour.title()} Shelter"}


def _int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def parse(data, source: str = "<data>") -> CardDB:
    """A ``CardDB`` from the parsed JSON ``data`` (``CardDataError`` if malformed)."""

    def err(where: str, msg: str):
        raise CardDataError(f"{source}: {where}: {msg}")

    if not isinstance(data, dict):
        err("file", f"must be a JSON object, got {type(data).__name__}")
    if (other := other_game(data, "rune-market")) is not None:
        err("file", f"this is a card file of {short(other)}, not of The Rune Market (--game {other[:40]} reads it)")
    if data.get("format") != FORMAT:
        err("field 'format'", f"must be {FORMAT!r}, got {short(data.get('format'))}")
    if data.get("version") != 1:
        err("field 'version'", f"must be 1, got {short(data.get('version'))}")
    unknown = sorted(set(data) - {"format", "version", "market", "deck", ERRATA_KEY})
    if unknown:
        err("file", f"unknown field(s) {', '.join(unknown)}; allowed: format, version, market, deck, {ERRATA_KEY}")
    deck_in = data.get("deck")
    if not isinstance(deck_in, list) or len(deck_in) != N_DESIGNS:
        err("field 'deck'", f"must be a list of the {N_DESIGNS} deck designs (ids 0-12)")
    deck = []
    for i, c in enumerate(deck_in):
        if not isinstance(c, dict):
            err(f"deck card #{i}", "must be an object")
        label = f"deck card #{i} ({short(c.get('name', '?'))})"
        allowed = {"id", "name", "kind", "value", "colour", "copies", "text"}
        extra = sorted(set(c) - allowed)
        if extra:
            err(label, f"unknown field(s) {', '.join(extra)}; allowed: {', '.join(sorted(allowed))}")
        if c.get("id") != i:
            err(f"{label} field 'id'", f"must be {i} (designs are listed in id order), got {short(c.get('id'))}")
        exp = _expected(i)
        for f, v in exp.items():
            if c.get(f) != v:
                err(f"{label} field {f!r}", f"must be {short(v)} (fixed by the rules, RM-1.3), got {short(c.get(f))}")
        if exp["kind"] != "number" and "value" in c:
            err(f"{label} field 'value'", "only Number cards have a value")
        if exp["kind"] != "shelter" and "colour" in c:
            err(f"{label} field 'colour'", "only Shelters have a colour")
        cp = c.get("copies")
        if "copies" not in c:
            err(f"{label} field 'copies'", "is missing; allowed: an integer from 0 to 12")
        if not _int(cp) or not 0 <= cp <= 12:
            err(f"{label} field 'copies'", f"must be an integer from 0 to 12, got {short(cp)}")
        text = c.get("text", "")
        if problem := text_problem(text):
            err(f"{label} field 'text'", problem)
        deck.append(Card(i, exp["name"], exp["kind"], cp, exp.get("value", 0), exp.get("colour", ""), text))
    total = sum(c.copies for c in deck)
    if not 20 <= total <= MAX_DECK:
        err("field 'deck'", f"the deck has {total} cards; allowed: 20 to {MAX_DECK}")
    if sum(c.copies for c in deck if c.kind == "number") < 10:
        err("field 'deck'", "the deck needs at least 10 Number cards")
    market_in = data.get("market")
    if not isinstance(market_in, list) or len(market_in) != len(MARKET_IDS):
        err("field 'market'", f"must list the Market cards {', '.join(MARKET_IDS)}")
    market = []
    for i, (m, mid) in enumerate(zip(market_in, MARKET_IDS)):
        if not isinstance(m, dict):
            err(f"market card #{i}", "must be an object")
        label = f"market card #{i} ({short(m.get('name', '?'))})"
        extra = sorted(set(m) - {"id", "name", "copies", "text"})
        if extra:
            err(label, f"unknown field(s) {', '.join(extra)}; allowed: copies, id, name, text")
        if m.get("id") != mid:
            err(f"{label} field 'id'", f"must be {short(mid)} (Market cards in the order {', '.join(MARKET_IDS)})")
        if problem := text_problem(m.get("name"), MAX_NAME_CHARS, empty=False):
            err(f"{label} field 'name'", problem)
        lo, hi = MARKET_COPIES[mid]
        cp = m.get("copies")
        if "copies" not in m:
            err(f"{label} field 'copies'", f"is missing; allowed: an integer from {lo} to {hi}")
        if not _int(cp) or not lo <= cp <= hi:
            err(f"{label} field 'copies'", f"must be an integer from {lo} to {hi}, got {short(cp)}")
        text = m.get("text", "")
        if problem := text_problem(text):
            err(f"{label} field 'text'", problem)
        market.append(MarketCard(mid, m["name"], cp, text))
    errata = parse_errata(data.get(ERRATA_KEY), ((c.name, c.text) for c in (*deck, *market)),
                          lambda msg: err("file", msg))
    return CardDB(tuple(deck), tuple(market), _digest(deck, market, errata), source, _digest(deck, market), errata)


def _digest(deck, market, errata=()) -> str:
    """sha256 of the cards' canonical JSON, as first printed by ``errata`` (none: as they read)."""
    canon = json.dumps({"deck": first_printing([c.__dict__ for c in deck], errata),
                        "market": first_printing([m.__dict__ for m in market], errata)},
                       sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canon.encode()).hexdigest()


def load_cards(path=None) -> CardDB:
    """The card data of ``path`` (default: the packaged ``cards.json``)."""
    p = Path(path) if path is not None else DATA_FILE
    data = read_json(p, str(p), CardDataError)
    try:
        return parse(data, str(p.name if path is None else p))
    except RecursionError:
        raise CardDataError(f"{p}: nested too deeply to be a card file") from None


@lru_cache(maxsize=1)
def default_cards() -> CardDB:
    return load_cards()


NUMBER_USE = ("buy a Rune (exactly 5, 10 or 15 in all), attack, block, buy a Boat Shelter or Bandit "
              "(21 or more in all), pay toward a Bandit on your Shelter")

REGEN_COMMAND = "ripmarket cards --game rune-market --write docs/games/rune-market/CARDS.md"


def render_markdown(db: CardDB, source=None) -> str:
    """The card reference (``docs/games/rune-market/CARDS.md``), generated from the data;
    ``source``: the card file it was read from, when not the packaged one."""
    made = ([f"Generated from `ripmarket_env/games/runemarket/cards.json` by `{REGEN_COMMAND}`;",
             "a test fails when this page is stale. Rules: [RULES.md](RULES.md)."]
            if source is None else [f"The reference of the card file `{source}` (read and checked by",
                                    "`ripmarket cards --game rune-market --file`). Rules: [RULES.md](RULES.md)."])
    lines = [
        "# The Rune Market: card reference",
        "",
        *made,
        "",
        f"## The Market ({sum(m.copies for m in db.market)} cards, RM-1.2)",
        "",
        "| card | copies | what it does |",
        "|---|---|---|",
    ]
    for m in db.market:
        lines.append(f"| {m.name} | {m.copies} | {m.text} |")
    lines += [
        "",
        f"## The draw deck ({db.deck_size} cards, RM-1.3)",
        "",
        "| id | card | kind | copies | what it does |",
        "|---|---|---|---|---|",
    ]
    for c in db.deck:
        text = c.text or (NUMBER_USE if c.kind == "number" else "")
        lines.append(f"| {c.id} | {c.name} | {c.kind} | {c.copies} | {text} |")
    lines += ["", f"Card data digest: `{db.digest[:16]}`", ""]
    lines += errata_markdown(db.errata, db.printing_digest[:16])
    return "\n".join(lines)


def card_reference(path=None, custom_deck: bool = False) -> tuple[str, None]:
    """``ripmarket cards --game rune-market``: the reference of a card file (default: the
    packaged one) as Markdown, and no table of its own (the Markdown is shown). The deck
    sizes are the rules' own: ``custom_deck`` is refused."""
    if custom_deck:
        raise CardDataError(f"--custom-deck: not needed here: a Rune Market card file may hold 20-{MAX_DECK} "
                            "deck cards as it is")
    packaged = path is None or Path(path).resolve() == DATA_FILE.resolve()
    return render_markdown(load_cards(path), source=None if packaged else path), None
