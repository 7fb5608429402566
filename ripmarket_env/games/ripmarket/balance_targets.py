"""The rulebook's promises as measurable targets: a card-design audit and a target table.

Two kinds of check, both R.I.P. Market only:

* **Design audit** (read from the card database alone, no games): every blessing carries a
  real string (some play the victim can see makes it cost them: a score loss or a
  discard), every pair of Shadow designs stacked on one player (the same design twice
  included) leaves a visible counterplay (some base value and acquisition source for which
  the stack costs nothing), and no two Living designs are the same card with another
  number (identical effect and keywords).
* **Measured targets** (read from a ``ripmarket balance`` result): Shadow swings per round,
  every Living design's share of plays against its share of the deck, the largest Living
  win-rate difference (played vs not) and every first-round turn position's win share
  against the fair share ``1 / players``.

``ripmarket balance targets DIR [DIR]`` prints the table for one run or two side by side
(before / after); ``ripmarket balance`` writes it into ``balance.md`` too.
"""

from __future__ import annotations

from itertools import combinations_with_replacement
from typing import Any

from ripmarket_env.games.ripmarket.cards.registry import base_cond_holds as _cond

#: The targets (docs/BALANCE.md, "The rulebook's promises").
SWING_MIN = {4: 0.07, 6: 0.10}
PLAY_SHARE_MIN_RATIO = 0.40
WIN_DELTA_MAX = 0.12
WIN_DELTA_COUNTS = (4, 6)
SEAT_TOLERANCE = 0.03
SEAT_COUNTS = (4, 6)
#: A stack leaves a counterplay when the Living cards it does not punish (some acquisition
#: source makes them cost nothing) are at least this share of the Living Deck: a counterplay
#: that only one rare value meets ("Dread + Withering leaves only a 5") is no counterplay.
COUNTERPLAY_MIN_SHARE = 0.25

ACQUISITIONS = ("deck", "market")
_SOURCE = {"took_deck": "deck", "took_market": "market"}


def shadow_outcome(design, base: int, acq: str) -> tuple[int, int]:
    """(score change, cards discarded) a Shadow design gives a played card of ``base``
    value after acquiring from ``acq`` ("deck" or "market"), R-7.1 step 3 and R-4.8."""
    score = discard = 0
    for e in design.effect:
        p = dict(e.params)
        if e.op == "shadow_score":
            if _cond(p["cond"], int(p.get("arg", 0)), base):
                score += int(p["amount"])
        elif e.op == "shadow_trigger":
            if _SOURCE[p["source"]] == acq:
                if p["kind"] == "score":
                    score += int(p["amount"])
                else:
                    discard += int(p["amount"])
    return score, discard


def _choices(db) -> list[tuple[int, str]]:
    values = sorted({int(v) for v in db.living_value})
    return [(v, a) for v in values for a in ACQUISITIONS]


def design_audit(db) -> dict[str, Any]:
    """The card-database checks of the module docstring."""
    choices = _choices(db)
    copies: dict[int, int] = {}
    for d in db.living:
        copies[int(d.value)] = copies.get(int(d.value), 0) + int(d.copies)
    deck = sum(copies.values()) or 1
    blessings = []
    for d in db.shadow:
        if d.family != "blessing":
            continue
        outs = [shadow_outcome(d, v, a) for v, a in choices]
        gain = max(s for s, _ in outs)
        cost = min(s for s, _ in outs)
        discards = max(x for _, x in outs)
        blessings.append({"name": d.name, "best_gain": gain, "worst_loss": cost, "discard": discards,
                          "string": gain > 0 and (cost < 0 or discards > 0)})
    stacks = []
    for a, b in combinations_with_replacement(range(len(db.shadow)), 2):
        da, db_ = db.shadow[a], db.shadow[b]
        safe = []
        for v, acq in choices:
            sa, xa = shadow_outcome(da, v, acq)
            sb, xb = shadow_outcome(db_, v, acq)
            if sa + sb >= 0 and xa + xb == 0:
                safe.append((v, acq))
        values = sorted({v for v, _ in safe})
        stacks.append({"cards": [da.name, db_.name], "safe_plays": len(safe),
                       "safe_values": values, "safe_share": sum(copies[v] for v in values) / deck,
                       "safe_sources": sorted({s for _, s in safe})})
    twins = []
    sig = {}
    for d in db.living:
        key = (tuple((e.op, tuple(sorted(dict(e.params).items()))) for e in d.effect), tuple(d.keywords))
        sig.setdefault(key, []).append(d)
    for group in sig.values():
        for i in range(len(group)):
            for j in range(i + 1, len(group)):
                lo, hi = sorted((group[i], group[j]), key=lambda d: (d.value, d.name))
                twins.append({"low": lo.name, "low_value": int(lo.value), "high": hi.name,
                              "high_value": int(hi.value)})
    return {
        "blessings": blessings,
        "blessings_without_string": [b["name"] for b in blessings if not b["string"]],
        "stacks": stacks,
        "stacks_without_counterplay": [s["cards"] for s in stacks if s["safe_share"] < COUNTERPLAY_MIN_SHARE],
        "min_safe_share": min((s["safe_share"] for s in stacks), default=1.0),
        "living_twins": twins,
    }


def measured_targets(result: dict[str, Any], db) -> dict[str, Any]:
    """The measured targets per player count of a balance result (``run_balance``)."""
    copies = {d.name: int(d.copies) for d in db.living}
    deck = sum(copies.values())
    out = {}
    for f in result["by_players"]:
        P = int(f["players"])
        ratios = []
        for c in f["living"]:
            share = copies.get(c["name"], 0) / deck if deck else 0.0
            ratios.append({"name": c["name"], "ratio": (c["play_share"] / share) if share else None})
        low = [r for r in ratios if r["ratio"] is not None and r["ratio"] < PLAY_SHARE_MIN_RATIO]
        deltas = sorted(({"name": c["name"], "delta": c["win_delta"]} for c in f["living"]
                         if c.get("win_delta") is not None), key=lambda r: -abs(r["delta"]))
        fair = 1.0 / P
        pos = [float(r["rate"]) for r in f["position_win"]]
        out[P] = {
            "swing_per_round": f["ghost_swings"]["per_round"],
            "swing_min": SWING_MIN.get(P),
            "min_play_ratio": min((r["ratio"] for r in ratios if r["ratio"] is not None), default=None),
            "under_played": sorted(low, key=lambda r: r["ratio"]),
            "max_win_delta": deltas[0] if deltas else None,
            "win_delta_over": [r for r in deltas if abs(r["delta"]) > WIN_DELTA_MAX],
            "position_win": pos,
            "fair_share": fair,
            "max_seat_gap": max((abs(x - fair) for x in pos), default=0.0),
            "single_winner": f["games_single_winner"] / f["games"] if f["games"] else None,
        }
    return out


def _ok(flag: bool | None) -> str:
    return "—" if flag is None else ("yes" if flag else "**no**")


def _names(rows, key, fmt, k=4) -> str:
    if not rows:
        return ""
    more = f" +{len(rows) - k} more" if len(rows) > k else ""
    return "; ".join(f"{r['name']} {fmt(r[key])}" for r in rows[:k]) + more


def target_rows(result: dict[str, Any], db) -> list[tuple[str, str, bool | None]]:
    """(target, measured, met) rows, one per target and player count."""
    audit = design_audit(db)
    m = measured_targets(result, db)
    rows: list[tuple[str, str, bool | None]] = []
    nb = audit["blessings_without_string"]
    rows.append(("every blessing has a string (a cost the victim can see)",
                 f"{len(audit['blessings']) - len(nb)} of {len(audit['blessings'])}"
                 + (f" (none: {', '.join(nb)})" if nb else ""), not nb))
    bad = audit["stacks_without_counterplay"]
    rows.append((f"every pair of stacked Shadow cards leaves a counterplay (unpunished cards >= "
                 f"{COUNTERPLAY_MIN_SHARE:.0%} of the Living Deck)",
                 f"{len(audit['stacks']) - len(bad)} of {len(audit['stacks'])} pairs, "
                 f"thinnest {audit['min_safe_share']:.0%}"
                 + (f" (none: {'; '.join(' + '.join(p) for p in bad[:4])}{' …' if len(bad) > 4 else ''})"
                    if bad else ""), not bad))
    tw = audit["living_twins"]
    rows.append(("no Living design is another with a higher number",
                 "none" if not tw else "; ".join(f"{t['high']} ({t['high_value']}) = {t['low']} ({t['low_value']})"
                                                 for t in tw), not tw))
    for P, t in sorted(m.items()):
        if t["swing_min"] is not None:
            rows.append((f"{P} players: Shadow swings per round >= {t['swing_min']:.0%}",
                         f"{t['swing_per_round']:.1%}", t["swing_per_round"] >= t["swing_min"]))
    for P, t in sorted(m.items()):
        r = t["min_play_ratio"]
        rows.append((f"{P} players: every Living design's play share >= {PLAY_SHARE_MIN_RATIO:.0%} of its deck share",
                     (f"lowest {r:.0%}" if r is not None else "—")
                     + (f" (under: {_names(t['under_played'], 'ratio', lambda x: f'{x:.0%}')})"
                        if t["under_played"] else ""), r is not None and r >= PLAY_SHARE_MIN_RATIO))
    for P, t in sorted(m.items()):
        if P in WIN_DELTA_COUNTS and t["max_win_delta"] is not None:
            d = t["max_win_delta"]
            rows.append((f"{P} players: every Living win-rate difference within ±{WIN_DELTA_MAX * 100:.0f} pts",
                         f"largest {d['name']} {d['delta'] * 100:+.1f}"
                         + (f" (over: {_names(t['win_delta_over'], 'delta', lambda x: f'{x * 100:+.1f}')})"
                            if t["win_delta_over"] else ""), not t["win_delta_over"]))
    for P, t in sorted(m.items()):
        if P in SEAT_COUNTS:
            pos = ", ".join(f"{x:.1%}" for x in t["position_win"])
            rows.append((f"{P} players: every turn position within ±{SEAT_TOLERANCE * 100:.0f} pts of "
                         f"{t['fair_share']:.1%}", pos, t["max_seat_gap"] <= SEAT_TOLERANCE + 1e-9))
    for P, t in sorted(m.items()):
        rows.append((f"{P} players: games with exactly one winner (>= 98%)",
                     f"{t['single_winner']:.1%}", t["single_winner"] >= 0.98))
    return rows


def targets_markdown(result: dict[str, Any], db, other: tuple[dict[str, Any], Any] | None = None,
                     names: tuple[str, str] = ("before", "after")) -> str:
    """The target table of one run, or of two runs side by side (``other`` = (result, db))."""
    rows = target_rows(result, db)
    if other is None:
        L = ["| target | measured | met |", "|---|---|---|"]
        L += [f"| {t} | {v} | {_ok(ok)} |" for t, v, ok in rows]
        return "\n".join(L)
    rows_b = dict((t, (v, ok)) for t, v, ok in target_rows(*other))
    L = [f"| target | {names[0]} | met | {names[1]} | met |", "|---|---|---|---|---|"]
    for t, v, ok in rows:
        vb, okb = rows_b.get(t, ("—", None))
        L.append(f"| {t} | {v} | {_ok(ok)} | {vb} | {_ok(okb)} |")
    return "\n".join(L)
