"""Load, validate and compile the card database (``cards.json``).

:func:`load_cards` reads the JSON, checks every design against the effect-primitive
registry (:mod:`.registry`) and compiles it into the numeric tables the engine uses.
Any problem raises :class:`CardDataError` naming the card (deck, id, name), the field,
and what is allowed.

Compiled op rows are ``(code, p1, p2, p3)``: the registry op code, then the op's
parameters in the registry's declared order (enums as their codes, defaults filled in,
unused slots 0). A card's ``face_down`` op always comes first; unused rows are all 0.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from ripmarket_env.core.errata import ERRATA_KEY, Erratum, first_printing, parse_errata
from ripmarket_env.core.jsonfile import (MAX_NAME_CHARS, TooLarge, listed_twice, loads, other_game, read_capped, short,
                                         text_problem)

from ripmarket_env.games.ripmarket.cards import registry as R
from ripmarket_env.games.ripmarket.cards.text import (
    RULE_KEYWORD,
    USES_ARG,
    normalize_params,
    printed_texts,
    resolution_order,
)

__all__ = [
    "CardDB",
    "CardDataError",
    "CardDesign",
    "EffectOp",
    "FAMILIES",
    "KEYWORDS",
    "LIVING_DECK_SIZE",
    "SHADOW_DECK_SIZE",
    "default_cards",
    "load_cards",
    "parse_cards",
]

#: Card counts of the standard decks (rulebook §2).
LIVING_DECK_SIZE = 64
SHADOW_DECK_SIZE = 32
VALUE_MIN, VALUE_MAX = 2, 8
#: Design ids and copy counts live in int8 tables.
MAX_DESIGNS = 127
MAX_COPIES = 127
#: The packaged cards.json is about 30 KB.
MAX_CARD_FILE_CHARS = 4 << 20

DECKS = ("living", "shadow")
#: Family name -> code, per deck.
FAMILIES = {
    "living": {"score": 0, "market": 1, "rule": 2, "deception": 3},
    "shadow": {"curse": 0, "blessing": 1},
}
KEYWORDS = ("RULE FLIP", "RULE SHIFT", "FACE-DOWN")
SCHEMA_VERSION = 1

_FIELDS = {
    "living": ("id", "name", "deck", "value", "copies", "family", "keywords", "text", "effect"),
    "shadow": ("id", "name", "deck", "copies", "family", "keywords", "text", "counterplay", "effect"),
}
_AMOUNT_OPS_NONZERO = frozenset({"score_self", "score_target", "score_board", "shadow_score", "shadow_trigger"})


class CardDataError(ValueError):
    """The card file is malformed or breaks a rule of the card schema."""


@dataclass(frozen=True)
class EffectOp:
    """One primitive of a card's effect, parameters normalized (defaults filled, enums by name)."""

    op: str
    params: tuple[tuple[str, int | str], ...]

    @property
    def code(self) -> int:
        return R.BY_NAME[self.op].code

    @property
    def primitive(self) -> R.Primitive:
        return R.BY_NAME[self.op]

    def __getitem__(self, name: str) -> int | str:
        for k, v in self.params:
            if k == name:
                return v
        raise KeyError(f"{self.op} has no parameter {name!r}")

    def as_dict(self) -> dict[str, int | str]:
        return {"op": self.op, **dict(self.params)}

    def row(self) -> tuple[int, int, int, int]:
        """The compiled row ``(code, p1, p2, p3)``."""
        vals = []
        for par, (_, v) in zip(self.primitive.params, self.params):
            vals.append(par.enum[v] if par.kind == "enum" else int(v))
        vals += [0] * (3 - len(vals))
        return (self.code, *vals)


@dataclass(frozen=True)
class CardDesign:
    """One card design (a row of ``cards.json``)."""

    id: int
    name: str
    deck: str
    value: int | None
    copies: int
    family: str
    keywords: tuple[str, ...]
    text: str
    counterplay: str | None
    effect: tuple[EffectOp, ...]  # in compiled order (face_down first)

    @property
    def ops(self) -> tuple[str, ...]:
        return tuple(e.op for e in self.effect)

    @property
    def face_down(self) -> bool:
        return "face_down" in self.ops

    @property
    def choice(self) -> int:
        """The choice kind the card asks for (registry ``CHOICE_*``), 0 if none."""
        for e in self.effect:
            if e.primitive.choice != R.CHOICE_NONE:
                return e.primitive.choice
        return R.CHOICE_NONE

    def op(self, name: str) -> EffectOp:
        """The card's first op called ``name`` (KeyError if it has none)."""
        for e in self.effect:
            if e.op == name:
                return e
        raise KeyError(f"{self.name} has no {name} op")

    def to_json(self) -> dict[str, Any]:
        """Canonical JSON form (defaults filled in, ``face_down`` first)."""
        d: dict[str, Any] = {"id": self.id, "name": self.name, "deck": self.deck}
        if self.deck == "living":
            d["value"] = self.value
        d.update(copies=self.copies, family=self.family, keywords=list(self.keywords), text=self.text)
        if self.deck == "shadow":
            d["counterplay"] = self.counterplay
        d["effect"] = [e.as_dict() for e in self.effect]
        return d


@dataclass(frozen=True, eq=False)
class CardDB:
    """The validated card database and its compiled tables (all arrays read-only)."""

    version: int
    living: tuple[CardDesign, ...]
    shadow: tuple[CardDesign, ...]
    living_value: np.ndarray  # (DL,) int8
    living_copies: np.ndarray  # (DL,) int8
    living_family: np.ndarray  # (DL,) int8   score=0 market=1 rule=2 deception=3
    living_ops: np.ndarray  # (DL, MAX_OPS, 4) int8   rows (code, p1, p2, p3)
    living_nops: np.ndarray  # (DL,) int8
    living_choice: np.ndarray  # (DL,) int8   registry CHOICE_* of the card's choice op
    living_face_down: np.ndarray  # (DL,) bool
    shadow_copies: np.ndarray  # (DS,) int8
    shadow_family: np.ndarray  # (DS,) int8   curse=0 blessing=1
    shadow_ops: np.ndarray  # (DS, MAX_OPS, 4) int8
    shadow_nops: np.ndarray  # (DS,) int8
    n_living: int
    n_shadow: int
    living_deck_size: int
    shadow_deck_size: int
    digest: str  # the card set's: sha256 of the canonical JSON as first printed (see canonical_json)
    printing_digest: str  # sha256 of the canonical JSON as the cards read now (differs only by errata)
    errata: tuple[Erratum, ...] = ()  # words-only errata (ripmarket_env.core.errata)
    source: str = "<memory>"

    def by_name(self, name: str) -> CardDesign:
        for d in self.living + self.shadow:
            if d.name == name:
                return d
        known = ", ".join(d.name for d in self.living + self.shadow)
        raise KeyError(f"no card named {name!r}; known cards: {known}")

    def designs(self, deck: str) -> tuple[CardDesign, ...]:
        if deck not in DECKS:
            raise ValueError(f"deck must be one of {DECKS}, got {deck!r}")
        return self.living if deck == "living" else self.shadow

    def canonical_json(self, printing: bool = False) -> str:
        """The database as canonical JSON: sorted keys, no whitespace, defaults filled in,
        its cards as first printed (each erratum's ``printed`` words as the card's text).

        ``digest`` is the sha256 of this string, so reformatting the file, reordering
        keys, spelling out a default parameter or correcting a card's words by an erratum
        does not change it. ``printing=True``: the cards as they read now, whose sha256 is
        ``printing_digest``.
        """
        return _canonical(self.version, self.living, self.shadow, () if printing else self.errata)


# ---------------------------------------------------------------------------------
# Loading
# ---------------------------------------------------------------------------------


def _default_path():
    return resources.files("ripmarket_env.games.ripmarket.cards").joinpath("cards.json")


#: Packaged card editions a ``--cards`` option accepts by name (docs/BALANCE.md): the
#: packaged ``cards.json`` is the current (second) edition.
EDITIONS = {"first-edition": "first_edition.json"}


def card_file(path: str | Path) -> Path:
    """The card file ``path`` names: a packaged edition's file for an edition name
    (``"first-edition"``) unless a file of that name exists, else ``path`` itself."""
    name = str(path)
    if name in EDITIONS and not Path(name).exists():
        return Path(str(resources.files("ripmarket_env.games.ripmarket.cards").joinpath(EDITIONS[name])))
    return Path(path)


def load_cards(path: str | Path | None = None, *, custom_deck: bool = False) -> CardDB:
    """Load, validate and compile a card file (default: the packaged ``cards.json``).

    ``custom_deck=True`` lifts the requirement of exactly 64 Living / 32 Shadow cards.
    """
    if path is None:
        res = _default_path()
        label = "cards.json (packaged)"
        try:
            raw = res.read_text(encoding="utf-8")
        except OSError as exc:  # pragma: no cover - broken install
            raise CardDataError(f"{label}: cannot read the packaged card file: {exc}") from None
    else:
        p = card_file(path)
        label = str(path) if str(path) in EDITIONS else str(p)
        try:  # at most 4 bytes a character in UTF-8; a device or pipe reports no size
            raw = read_capped(p, 4 * MAX_CARD_FILE_CHARS).decode("utf-8")
        except FileNotFoundError:
            raise CardDataError(f"{label}: card file not found") from None
        except TooLarge:
            raise CardDataError(f"{label}: more than {4 * MAX_CARD_FILE_CHARS:,} bytes is too large for a card "
                                f"file (at most {MAX_CARD_FILE_CHARS:,} characters)") from None
        except OSError as exc:
            raise CardDataError(f"{label}: cannot read the card file: {exc.strerror or exc}") from None
        except UnicodeDecodeError as exc:
            raise CardDataError(f"{label}: cannot read the card file: {exc}") from None
    if len(raw) > MAX_CARD_FILE_CHARS:
        raise CardDataError(f"{label}: {len(raw):,} characters is too large for a card file "
                            f"(at most {MAX_CARD_FILE_CHARS:,})")
    if not raw.strip():
        raise CardDataError(f"{label}: the file is empty (expected a JSON object)")
    try:
        data = loads(raw)
    except json.JSONDecodeError as exc:
        raise CardDataError(
            f"{label}: malformed JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}"
        ) from None
    except RecursionError:
        raise CardDataError(f"{label}: nested too deeply to be a card file (designs are flat objects)") from None
    except ValueError as exc:  # NaN/Infinity, an integer of more than 4,300 digits or a repeated key, in its field
        hint = "" if "more than once" in str(exc) else "; card numbers are small integers"
        raise CardDataError(f"{label}: {exc}{hint}") from None
    if (other := other_game(data, "ripmarket")) is not None:
        raise CardDataError(f"{label}: this is a card file of {short(other)}, not of R.I.P. Market "
                            f"(--game {other[:40]} reads it)")
    return parse_cards(data, custom_deck=custom_deck, source=label)


@lru_cache(maxsize=1)
def default_cards() -> CardDB:
    """The packaged card database (loaded once per process)."""
    return load_cards()


def parse_cards(data: Any, *, custom_deck: bool = False, source: str = "<memory>") -> CardDB:
    """Validate and compile already-parsed card data (the object form of ``cards.json``)."""
    err = _Errors(source)
    if not isinstance(data, dict):
        err.top(f"the file must hold a JSON object with keys version, living, shadow; got {type(data).__name__}")
    extra = sorted(set(data) - {"version", "living", "shadow", ERRATA_KEY})
    if extra:
        err.top(f"unknown top-level key(s) {_s(extra, 120)}; allowed: version, living, shadow, {ERRATA_KEY}")
    if data.get("version") != SCHEMA_VERSION or isinstance(data.get("version"), bool):
        err.top(f"field 'version' must be {SCHEMA_VERSION}, got {_s(data.get('version'))}")
    decks: dict[str, tuple[CardDesign, ...]] = {}
    for deck in DECKS:
        rows = data.get(deck)
        if deck not in data:
            err.top(f"field {deck!r} is missing; a card file lists its designs under {' and '.join(map(repr, DECKS))}")
        if not isinstance(rows, list):
            err.top(f"field {deck!r} must be a list of card designs, got {type(rows).__name__}")
        if not rows and (deck == "living" or not custom_deck):
            err.top(f"the {deck} deck has no designs")
        if len(rows) > MAX_DESIGNS:
            err.top(f"the {deck} deck has {len(rows)} designs; at most {MAX_DESIGNS} are allowed")
        decks[deck] = tuple(_parse_design(err, deck, i, row) for i, row in enumerate(rows))

    seen: dict[str, str] = {}
    for d in decks["living"] + decks["shadow"]:
        where = f"{d.deck} id {d.id}"
        if d.name in seen:
            err.raise_(d.deck, d.id, d.name, "name", f"duplicate name (also used by {seen[d.name]}); names must be unique")
        seen[d.name] = where

    sizes = {deck: sum(d.copies for d in decks[deck]) for deck in DECKS}
    if not custom_deck:
        for deck, want in (("living", LIVING_DECK_SIZE), ("shadow", SHADOW_DECK_SIZE)):
            if sizes[deck] != want:
                err.top(
                    f"the {deck} deck totals {sizes[deck]} cards (sum of 'copies'); it must be {want} "
                    "(load with custom_deck=True for other deck sizes)"
                )
    # an erratum's first words are history: a template since reworded no longer generates them
    errata = parse_errata(data.get(ERRATA_KEY), ((d.name, d.text) for d in decks["living"] + decks["shadow"]), err.top)
    return _compile(SCHEMA_VERSION, decks["living"], decks["shadow"], sizes, source, errata)


class _Errors:
    def __init__(self, source: str):
        self.source = source

    def top(self, msg: str):
        raise CardDataError(f"{self.source}: {msg}")

    def raise_(self, deck: str, cid: Any, name: Any, fld: str, msg: str):
        label = _s(name) if isinstance(name, str) else "<unnamed>"
        raise CardDataError(f"{self.source}: {deck} card #{_s(cid, 20)} {label}, field '{fld}': {msg}")


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


#: ``repr(v)`` for a message: cut to ``limit`` characters, a huge integer by its size.
_s = short


def _in(v: Any, allowed) -> bool:
    """``v in allowed`` for a value of any JSON type (a list or dict is never a name)."""
    return isinstance(v, str) and v in allowed


def _parse_design(err: _Errors, deck: str, index: int, row: Any) -> CardDesign:
    if not isinstance(row, dict):
        err.raise_(deck, index, None, "(design)", f"each design must be a JSON object, got {type(row).__name__}")
    name = row.get("name")
    cid = row.get("id", index)

    def fail(fld: str, msg: str):
        err.raise_(deck, cid, name, fld, msg)

    fields = _FIELDS[deck]
    optional = {"keywords"}
    unknown = sorted(set(row) - set(fields))
    if unknown:
        fail(_s(unknown[0], 40).strip("'"), f"unknown field for a {deck} card; allowed fields: {', '.join(fields)}")
    for f in fields:
        if f not in row and f not in optional:
            fail(f, f"missing; a {deck} card needs: {', '.join(x for x in fields if x not in optional)}")

    if problem := text_problem(name, MAX_NAME_CHARS, empty=False):
        fail("name", problem)
    if not _is_int(row["id"]) or row["id"] != index:
        fail("id", f"ids must be contiguous from 0 in file order: expected {index}, got {_s(row['id'])}"
                   f"{listed_twice(row['id'], index)}")
    if row["deck"] != deck:
        fail("deck", f"is {_s(row['deck'])} but the card is listed under {deck!r}; allowed: {deck!r}")
    value = None
    if deck == "living":
        value = row["value"]
        if not _is_int(value) or not VALUE_MIN <= value <= VALUE_MAX:
            fail("value", f"must be an integer {VALUE_MIN}-{VALUE_MAX}, got {_s(value)}")
    copies = row["copies"]
    if not _is_int(copies) or not 1 <= copies <= MAX_COPIES:
        fail("copies", f"must be an integer 1-{MAX_COPIES}, got {_s(copies)}")
    family = row["family"]
    if not _in(family, FAMILIES[deck]):
        fail("family", f"{_s(family)} is not a {deck} family; allowed: {', '.join(FAMILIES[deck])} (a string)")
    keywords = row.get("keywords", [])
    if not isinstance(keywords, list) or any(not _in(k, KEYWORDS) for k in keywords):
        fail("keywords", f"must be a list drawn from {', '.join(KEYWORDS)}; got {_s(keywords)}")
    if len(set(keywords)) != len(keywords):
        fail("keywords", f"lists a keyword twice: {_s(keywords)}")
    counterplay = None
    if deck == "shadow":
        counterplay = row["counterplay"]
        if problem := text_problem(counterplay, empty=False):
            fail("counterplay", f"every Shadow card needs a counterplay sentence the victim can act on: {problem}")

    effect = row["effect"]
    if not isinstance(effect, list):
        fail("effect", f"must be a list of ops, got {type(effect).__name__}")
    ops = [_parse_op(fail, deck, k, e) for k, e in enumerate(effect)]
    _check_card_rules(fail, deck, ops, keywords)

    ordered = resolution_order([e.as_dict() for e in ops])
    text = row["text"]
    want = printed_texts(deck, ordered)
    if text not in want:
        expected = repr(want[0]) if len(want) == 1 else "one of " + " or ".join(map(repr, want))
        fail("text", f"does not match the text generated from the effect; expected {expected}, got {_s(text, 160)}")
    return CardDesign(
        id=index,
        name=name,
        deck=deck,
        value=value,
        copies=copies,
        family=family,
        keywords=tuple(keywords),
        text=text,
        counterplay=counterplay,
        effect=tuple(EffectOp(e["op"], tuple((k, v) for k, v in e.items() if k != "op")) for e in ordered),
    )


def _parse_op(fail, deck: str, k: int, e: Any) -> EffectOp:
    fld = f"effect[{k}]"
    if not isinstance(e, dict) or "op" not in e:
        fail(fld, 'each op must be an object like {"op": "<primitive>", ...}')
    op = e["op"]
    if not _in(op, R.BY_NAME):
        fail(f"{fld}.op", f"unknown op {_s(op)}; known ops (a string): {', '.join(p.name for p in R.PRIMITIVES)}")
    prim = R.BY_NAME[op]
    if prim.deck != deck:
        allowed = ", ".join(p.name for p in R.PRIMITIVES if p.deck == deck)
        fail(f"{fld}.op", f"{op!r} is a {prim.deck} op and cannot be used on a {deck} card; {deck} ops: {allowed}")
    names = [p.name for p in prim.params]
    for key in e:
        if key != "op" and key not in names:
            fail(f"{fld}.{_s(key, 40).strip(chr(39))}", f"unknown parameter of {op!r}; its parameters: {', '.join(names) or '(none)'}")
    for par in prim.params:
        pf = f"{fld}.{par.name}"
        if par.name not in e:
            if par.default is None:
                fail(pf, f"missing required parameter of {op!r} ({_describe(par)})")
            continue
        v = e[par.name]
        if par.kind == "enum":
            if not isinstance(v, str) or v not in par.enum:
                fail(pf, f"{_s(v)} is not allowed; one of: {', '.join(par.enum)}")
        else:
            if not _is_int(v) or not par.lo <= v <= par.hi:
                fail(pf, f"{_s(v)} is out of range; must be an integer {par.lo} to {par.hi}")
    params = normalize_params(op, e)
    if op in _AMOUNT_OPS_NONZERO and params["amount"] == 0:
        amt = next(par for par in prim.params if par.name == "amount")
        fail(f"{fld}.amount", f"0 does nothing; must be a non-zero integer {amt.lo} to {amt.hi}")
    if op == "shadow_trigger" and params["kind"] == "discard_random" and params["amount"] < 1:
        fail(f"{fld}.amount", "discard_random needs a number of cards from 1 to 6")
    if "cond" in params and "arg" in params and params["cond"] not in USES_ARG and params["arg"] != 0:
        fail(f"{fld}.arg", f"condition {params['cond']!r} ignores arg; leave it out (or 0)")
    return EffectOp(op, tuple(params.items()))


def _describe(par: R.Param) -> str:
    if par.kind == "enum":
        return "one of: " + ", ".join(par.enum)
    return f"an integer {par.lo} to {par.hi}"


def _check_card_rules(fail, deck: str, ops: list[EffectOp], keywords: list[str]) -> None:
    names = [e.op for e in ops]
    if not ops:
        label = "a Shadow card" if deck == "shadow" else "every card"
        fail("effect", f"{label} needs at least one op; {deck} ops: "
             + ", ".join(p.name for p in R.PRIMITIVES if p.deck == deck))
    if len(ops) > R.MAX_OPS:
        fail("effect", f"has {len(ops)} ops; at most {R.MAX_OPS} are allowed")
    choosers = [e.op for e in ops if e.primitive.choice != R.CHOICE_NONE]
    if len(choosers) > 1:
        fail("effect", f"asks for more than one choice ({', '.join(choosers)}); at most one op per card may ask for a choice")
    for once in ("face_down", "rule", "shadow_trigger"):
        if names.count(once) > 1:
            # shadow_trigger: the engine records whether an attached card's trigger fired
            # one flag per card, so a second trigger could not be told apart
            fail("effect", f"has {names.count(once)} {once!r} ops; at most one is allowed")
    if "face_down" in names and choosers:
        fail("effect", f"is face-down but {choosers[0]!r} asks for a choice; face-down cards may not ask for choices")
    # keywords follow the effect
    want = set()
    if "face_down" in names:
        want.add("FACE-DOWN")
    for e in ops:
        if e.op == "rule":
            want.add(RULE_KEYWORD[e["rule"]])
    if set(keywords) != want:
        fail("keywords", f"must match the effect: expected {sorted(want)}, got {_s(keywords)}")


# ---------------------------------------------------------------------------------
# Compiling
# ---------------------------------------------------------------------------------


def _canonical(version: int, living, shadow, errata=()) -> str:
    """The canonical JSON of the cards, as first printed by ``errata`` (none: as they read)."""
    doc = {"version": version, "living": first_printing([d.to_json() for d in living], errata),
           "shadow": first_printing([d.to_json() for d in shadow], errata)}
    return json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _ro(a: np.ndarray) -> np.ndarray:
    a.flags.writeable = False
    return a


def _op_table(designs) -> tuple[np.ndarray, np.ndarray]:
    ops = np.zeros((len(designs), R.MAX_OPS, 4), np.int8)
    nops = np.zeros(len(designs), np.int8)
    for i, d in enumerate(designs):
        nops[i] = len(d.effect)
        for k, e in enumerate(d.effect):
            ops[i, k] = e.row()
    return _ro(ops), _ro(nops)


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _compile(version: int, living, shadow, sizes: Mapping[str, int], source: str, errata=()) -> CardDB:
    living_ops, living_nops = _op_table(living)
    shadow_ops, shadow_nops = _op_table(shadow)
    return CardDB(
        version=version,
        living=living,
        shadow=shadow,
        living_value=_ro(np.array([d.value for d in living], np.int8)),
        living_copies=_ro(np.array([d.copies for d in living], np.int8)),
        living_family=_ro(np.array([FAMILIES["living"][d.family] for d in living], np.int8)),
        living_ops=living_ops,
        living_nops=living_nops,
        living_choice=_ro(np.array([d.choice for d in living], np.int8)),
        living_face_down=_ro(np.array([d.face_down for d in living], bool)),
        shadow_copies=_ro(np.array([d.copies for d in shadow], np.int8).reshape(len(shadow))),
        shadow_family=_ro(np.array([FAMILIES["shadow"][d.family] for d in shadow], np.int8).reshape(len(shadow))),
        shadow_ops=shadow_ops,
        shadow_nops=shadow_nops,
        n_living=len(living),
        n_shadow=len(shadow),
        living_deck_size=sizes["living"],
        shadow_deck_size=sizes["shadow"],
        digest=_sha256(_canonical(version, living, shadow, errata)),
        printing_digest=_sha256(_canonical(version, living, shadow)),
        errata=tuple(errata),
        source=source,
    )
