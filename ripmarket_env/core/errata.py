"""Words-only errata of a game's card file (docs/ARCHITECTURE.md, "Card digests and errata").

A card set is named by its digest, and everything made with it carries that digest: a
checkpoint's metadata and its export, a record's header, a balance or tournament run's
settings, the golden playthroughs. Every compatibility check compares it, so a changed
card is a different card set. A correction of a card's printed words alone changes no
game, no observation and no decision, and must not orphan all of that.

So a card file may list, under its top-level key ``errata``, each card whose words were
corrected, with the words it was first printed with and the rule the new words follow::

    "errata": [{"card": "Deflection", "printed": "Name another living player. ...", "rule": "R-8.3"}]

A game's loader reads it with :func:`parse_errata` and computes two digests:

- ``digest``, the card set's: over the cards as first printed (:func:`first_printing`:
  each erratum's ``printed`` words in its card's text field), which is the digest every
  artifact made before the erratum carries, so they keep loading and replaying; every
  compatibility check compares this one, as before;
- ``printing_digest``, over the cards as the file reads now, reported beside it.

Only the text field is put back, so a change of anything else (a number, an effect, a
name, the copies) still changes ``digest`` and is refused where it was refused before. An
erratum holds the words it replaces rather than the digest it keeps: the loader recomputes
the old digest from them, so the file cannot vouch for a change it does not show.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, NoReturn

from ripmarket_env.core.jsonfile import short, text_problem

__all__ = ["ERRATA_KEY", "Erratum", "errata_markdown", "first_printing", "parse_errata"]

#: The card file's top-level key that lists the errata.
ERRATA_KEY = "errata"
FIELDS = ("card", "printed", "rule")
#: More errata than this is not a list of corrections.
MAX_ERRATA = 256


@dataclass(frozen=True)
class Erratum:
    """One card's corrected words: ``card`` (its name) was first printed with ``printed``;
    its words now follow ``rule`` (a rule ID such as ``R-8.3``)."""

    card: str
    printed: str
    rule: str

    def to_json(self) -> dict[str, str]:
        return {"card": self.card, "printed": self.printed, "rule": self.rule}


def parse_errata(raw: Any, texts: Iterable[tuple[str, str]], fail: Callable[[str], NoReturn]) -> tuple[Erratum, ...]:
    """The file's ``errata`` value (``None``: the file has none) checked against its cards.

    ``texts``: every card's ``(name, text now)``; ``fail(message)`` raises the game's card
    error (the game names the file). An erratum must name exactly one card, hold the words
    the card no longer reads, and give the rule its new words follow; each card once."""
    if raw is None:
        return ()
    shape = "a list of objects with keys card, printed, rule"
    if not isinstance(raw, list):
        fail(f"field {ERRATA_KEY!r} must be {shape}, got {type(raw).__name__}")
    if len(raw) > MAX_ERRATA:
        fail(f"field {ERRATA_KEY!r} lists {len(raw)} errata; at most {MAX_ERRATA} are allowed")
    now: dict[str, list[str]] = {}
    for name, text in texts:
        now.setdefault(name, []).append(text)
    out: list[Erratum] = []
    for i, e in enumerate(raw):
        where = f"{ERRATA_KEY}[{i}]"
        if not isinstance(e, dict):
            fail(f"{where} must be an object with keys card, printed, rule; got {type(e).__name__}")
        unknown = sorted(str(k) for k in e if k not in FIELDS)
        if unknown:
            fail(f"{where}: unknown key(s) {short(', '.join(unknown))}; allowed: {', '.join(FIELDS)}")
        for f in FIELDS:
            if problem := text_problem(e.get(f), empty=False):
                fail(f"{where}.{f} {problem}")
        card = e["card"]
        if card not in now:
            fail(f"{where}.card: {short(card)} names no card of this file; known cards: "
                 f"{short(', '.join(now), 400)}")
        if len(now[card]) > 1:
            fail(f"{where}.card: {short(card)} names {len(now[card])} cards of this file; an erratum names one")
        if any(x.card == card for x in out):
            fail(f"{where}.card: {short(card)} has an erratum already; list each card once "
                 "(with the words it was first printed with)")
        if e["printed"] == now[card][0]:
            fail(f"{where}.printed: is the text {short(card)} reads now; an erratum lists the "
                 "words the card was first printed with, which its text corrects")
        out.append(Erratum(card, e["printed"], e["rule"]))
    return tuple(out)


def first_printing(rows: Iterable[Mapping[str, Any]], errata: Iterable[Erratum], *, name: str = "name",
                   text: str = "text") -> list[dict[str, Any]]:
    """Copies of the card ``rows`` (JSON objects) as first printed: each erratum's card with
    its ``printed`` words in the ``text`` field, every other field as it is. A loader
    computes the card set's digest over these."""
    old = {e.card: e.printed for e in errata}
    return [{**r, text: old[r[name]]} if r.get(name) in old else dict(r) for r in rows]


def errata_markdown(errata: Iterable[Erratum], printing_digest: str) -> list[str]:
    """A card reference's errata section, Markdown lines (none for a file without errata):
    each corrected card, the rule its words now follow and its first printing, and the
    digest of the cards as they read now."""
    errata = tuple(errata)
    if not errata:
        return []

    def cell(t: str) -> str:
        return " ".join(t.split()).replace("|", "\\|")

    lines = ["## Errata", "",
             "Words-only corrections: each card below now reads as printed above, and was first printed "
             "with the words shown here. The card database digest is computed over the cards as first "
             "printed, so the corrections change no card set: checkpoints, records and runs made before "
             f"them stay valid. The cards as they read now have the digest `{printing_digest}`.", "",
             "| Card | Rule | First printed |", "|---|---|---|"]
    lines += [f"| {cell(e.card)} | {cell(e.rule)} | {cell(e.printed)} |" for e in errata]
    return lines + [""]
