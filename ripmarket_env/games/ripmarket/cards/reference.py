"""The rulebook's section 11, "Full Card Reference", rendered from the card database.

:func:`render_cards_markdown` produces ``docs/CARDS.md`` (a test keeps the committed file
in step with ``cards.json``); :func:`render_cards_rich` is the same content as rich
tables for the terminal (``ripmarket cards``).
"""

from __future__ import annotations

from collections import Counter

from ripmarket_env.core.errata import errata_markdown
from ripmarket_env.games.ripmarket.cards.loader import CardDB, CardDesign

FAMILY_LEGEND = {
    "score": "Score manipulation: changes final scores (yours, a chosen player's or the whole board) or deals damage directly.",
    "market": "Market tampering: draws cards, takes from the Market, or clears Market cards.",
    "rule": "Rule flips and shifts: change the fundamental rules of the round.",
    "deception": "Deception: hidden plays, copied scores, swapped cards and redirected damage.",
    "curse": "Curse (Shadow): a penalty with a condition the victim can see and play around.",
    "blessing": "Blessing (Shadow): a bonus with strings attached — it only pays off if the victim plays the way the Ghost wants.",
}

KEYWORD_LEGEND = {
    "RULE FLIP": "Turns a core rule of this round around. When rule changes conflict, the most recently played one wins.",
    "RULE SHIFT": "Bends a core rule of this round; it competes with RULE FLIPs for the same slot (most recent wins).",
    "FACE-DOWN": "Played face-down and revealed at the start of resolution, later than every face-up play.",
}

REGEN_COMMAND = "ripmarket cards --markdown --write docs/CARDS.md"


def living_sorted(db: CardDB) -> list[CardDesign]:
    """Living designs sorted by value, then name."""
    return sorted(db.living, key=lambda d: (d.value, d.name))


def _md_cell(s: str) -> str:
    return s.replace("|", "\\|").replace("\n", " ")


def _keywords(d: CardDesign) -> str:
    return ", ".join(d.keywords) if d.keywords else "—"


def _totals_line(db: CardDB) -> str:
    fam = Counter()
    for d in db.living + db.shadow:
        fam[d.family] += d.copies
    living = ", ".join(f"{fam[f]} {f}" for f in ("score", "market", "rule", "deception") if fam[f])
    shadow = ", ".join(f"{fam[f]} {f}" for f in ("curse", "blessing") if fam[f])
    return (
        f"Living Deck: {db.n_living} designs, {db.living_deck_size} cards ({living}). "
        f"Shadow Deck: {db.n_shadow} designs, {db.shadow_deck_size} cards ({shadow})."
    )


def value_histogram(db: CardDB) -> dict[int, int]:
    """Living cards per base value (copies counted)."""
    hist: dict[int, int] = {}
    for d in db.living:
        hist[d.value] = hist.get(d.value, 0) + d.copies
    return dict(sorted(hist.items()))


def render_cards_markdown(db: CardDB) -> str:
    """Section 11 of the rulebook as Markdown."""
    out: list[str] = []
    w = out.append
    w("# 11. Full Card Reference")
    w("")
    w(f"<!-- Generated from cards.json. Do not edit by hand: run `{REGEN_COMMAND}`. -->")
    w("")
    w(
        f"Rendered live from cards.json ({db.n_living} Living + {db.n_shadow} Shadow designs). "
        "This section always matches the current card database — print it as a reference appendix. "
        f"The ×N badge is the number of copies in a full deck ({db.living_deck_size} Living cards, "
        f"{db.shadow_deck_size} Shadow cards)."
    )
    w("")
    w(f"Card database digest: `{db.digest}`")
    w("")
    w("## Living Deck")
    w("")
    w("| Name | Value | Copies | Family | Keywords | Text |")
    w("|---|---:|---:|---|---|---|")
    for d in living_sorted(db):
        w(f"| {_md_cell(d.name)} | {d.value} | ×{d.copies} | {d.family} | {_keywords(d)} | {_md_cell(d.text)} |")
    w("")
    w("## Shadow Deck")
    w("")
    w("| Name | Copies | Type | Text | Counterplay |")
    w("|---|---:|---|---|---|")
    for d in db.shadow:
        w(f"| {_md_cell(d.name)} | ×{d.copies} | {d.family} | {_md_cell(d.text)} | {_md_cell(d.counterplay or '')} |")
    w("")
    out.extend(errata_markdown(db.errata, db.printing_digest))
    w("## Totals")
    w("")
    w(_totals_line(db))
    w("")
    hist = value_histogram(db)
    w("Living cards by base value: " + ", ".join(f"{v}: {n}" for v, n in hist.items()) + ".")
    w("")
    w("## Legend")
    w("")
    w("Families:")
    w("")
    for fam, text in FAMILY_LEGEND.items():
        w(f"- **{fam}** — {text}")
    w("")
    w("Keywords:")
    w("")
    for kw, text in KEYWORD_LEGEND.items():
        w(f"- **{kw}** — {text}")
    w("")
    w(
        "Targets are always another living player. Effects that say \"base value\" read the printed "
        "number only; \"score\" is the running total after modifiers."
    )
    return "\n".join(out) + "\n"


def render_cards_rich(db: CardDB):
    """The same reference as rich renderables (a ``Group`` of tables and text)."""
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    living = Table(title="Living Deck", expand=True)
    living.add_column("Name", no_wrap=True, style="bold")
    living.add_column("Val", justify="right", no_wrap=True)
    living.add_column("×", justify="right", no_wrap=True)
    living.add_column("Family", no_wrap=True)
    living.add_column("Text", ratio=1)
    for d in living_sorted(db):
        family = Text(d.family)
        for kw in d.keywords:
            family.append(f"\n{kw}", style="magenta")
        living.add_row(d.name, str(d.value), f"×{d.copies}", family, d.text)

    shadow = Table(title="Shadow Deck", expand=True)
    shadow.add_column("Name", no_wrap=True, style="bold")
    shadow.add_column("×", justify="right", no_wrap=True)
    shadow.add_column("Type", no_wrap=True)
    shadow.add_column("Text", ratio=1)
    shadow.add_column("Counterplay", ratio=1)
    for d in db.shadow:
        style = "red" if d.family == "curse" else "green"
        shadow.add_row(d.name, f"×{d.copies}", Text(d.family, style=style), d.text, d.counterplay or "")

    legend = Text()
    legend.append(_totals_line(db) + "\n")
    for name, text in {**FAMILY_LEGEND, **KEYWORD_LEGEND}.items():
        legend.append(name, style="bold")
        legend.append(f" — {text}\n")
    for e in db.errata:
        legend.append(f"Erratum ({e.rule}): ", style="bold")
        legend.append(f"{e.card} was first printed \"{e.printed}\"\n")
    legend.append(f"Digest: {db.digest}", style="dim")
    if db.errata:
        legend.append(f" (as first printed; as the cards read now: {db.printing_digest})", style="dim")
    return Group(Text("11. Full Card Reference", style="bold underline"), living, shadow, legend)


def card_reference(path=None, custom_deck: bool = False):
    """``ripmarket cards``: the reference of a card file (default: the packaged one) as
    Markdown (docs/CARDS.md) and as rich tables for the terminal. ``custom_deck`` lifts the
    64 Living / 32 Shadow deck sizes (R-1.3)."""
    from ripmarket_env.games.ripmarket.cards.loader import load_cards

    db = load_cards(path, custom_deck=custom_deck)
    return render_cards_markdown(db), render_cards_rich(db)
