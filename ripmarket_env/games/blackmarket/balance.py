"""Black Market's balance analysis (its ``GameSpec.balance`` hook; ``ripmarket balance --game
black-market``, ``eval.balance``, plays a tournament of the game's bots: seat rotation over
duplicate deals, team mode by default).

Besides the generic figures every game has (win share by seat, turn position and agent;
game length), per player count, with 95% intervals:

* **first-side advantage**: how often the side that takes the first turn wins (of the
  decided games; in free-for-all every seat is a side);
* **game length in turns** (and the share of games at the ``max_turns`` cap, BM-8.3);
* **per Point Card**: purchase rate (copies bought per game / copies) and the win-rate
  delta: the win rate of a side that bought the card minus that of a side that did not
  (a difference of proportions, normal interval).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ripmarket_env.core.stats import wilson_interval
from ripmarket_env.games.blackmarket.kernels import END_CAP  # end_reason of a game at max_turns (BM-8.3)

#: the tournament observer of a balance run
OBSERVER = f"{__name__}:make_observer"


class EndObserver:
    """Reads each finished game's first player, turns, end and the Point Cards every seat
    owns (a tournament observer: ``game_record`` adds them to the game's record)."""

    def __init__(self, engine):
        pass

    def before_step(self, engine, actor, actions) -> None:
        pass

    def game_record(self, engine, g: int) -> dict[str, Any]:
        st = engine.state
        P = engine.num_players
        return {"first_player": int(st["first_player"][g]), "turns": int(st["turn"][g]),
                "end_reason": int(st["end_reason"][g]), "owned": st["owned"][g, :P].astype(int).tolist()}


def make_observer(engine) -> EndObserver:
    return EndObserver(engine)


def _diff_ci(w1, n1, w0, n0, z=1.96):
    if n1 == 0 or n0 == 0:
        return None, (None, None)
    p1, p0 = w1 / n1, w0 / n0
    se = math.sqrt(p1 * (1 - p1) / n1 + p0 * (1 - p0) / n0)
    d = p1 - p0
    return d, (d - z * se, d + z * se)


def figures(games: Sequence[dict], players: int, context: dict[str, Any]) -> dict[str, Any]:
    """The balance hook: the generic figures (``context["generic"]``) and Black Market's."""
    from ripmarket_env.games.blackmarket.cards import default_cards

    db = default_cards()
    P = int(players)
    n = len(games)
    teams = games[0].get("teams") if games else None
    side_of = np.array(teams if teams is not None else list(range(P)), np.int64)
    S = int(side_of.max()) + 1 if n else 0
    win = np.array([g["winners"] for g in games], bool).reshape(n, P)
    side_win = np.stack([win[:, side_of == s].any(axis=1) for s in range(S)], axis=1)  # (games, sides)
    first_side = side_of[np.array([g["first_player"] for g in games], np.int64)]
    decided = side_win.any(axis=1) & (side_win.sum(axis=1) == 1)
    first_won = side_win[np.arange(n), first_side] & decided
    fw, fn = int(first_won.sum()), int(decided.sum())
    owned = np.array([g["owned"] for g in games], np.int64).reshape(n, P, -1)  # (games, seats, designs)
    side_owned = np.stack([owned[:, side_of == s].sum(axis=1) for s in range(S)], axis=1)  # (games, sides, d)
    turns = np.array([g["turns"] for g in games], np.float64)
    cards = []
    for d, c in enumerate(db.point):
        bought = side_owned[:, :, d] > 0
        w1, n1 = int((side_win & bought).sum()), int(bought.sum())
        w0, n0 = int((side_win & ~bought).sum()), int((~bought).sum())
        delta, ci = _diff_ci(w1, n1, w0, n0)
        cards.append({"card": c.name, "purchase_rate": float(side_owned[:, :, d].sum() / (n * c.copies)),
                      "win_rate_delta": delta, "delta_ci95": list(ci), "sides_bought": n1})
    return {**context["generic"], "sides": S, "first_side_win_rate": fw / max(1, fn),
            "first_ci95": list(wilson_interval(fw, fn)), "decided": fn,
            "mean_turns": float(turns.mean()), "turns_sd": float(turns.std()),
            "capped_share": float(np.mean([g["end_reason"] == END_CAP for g in games])), "cards": cards}


def markdown(result: dict[str, Any], sections=None) -> str:
    """The report; ``sections(f)``, the generic figures' renderer, adds them per player count."""
    s = result["settings"]
    mode = (s.get("rules") or {}).get("mode", "teams")
    lines = ["# Black Market: balance", "",
             f"Agents: {', '.join(s['agents'])} (seats drawn from this list, rotated over duplicate deals; "
             f"{mode}); seed {s['seed']}.", ""]
    for r in result["by_players"]:
        lo, hi = r["first_ci95"]
        lines += [f"## {r['players']} players ({r['games']} games)", "",
                  f"- first side wins {r['first_side_win_rate']:.1%} of {r['decided']} decided games "
                  f"(95% CI {lo:.1%}–{hi:.1%}; fair share {1 / r['sides']:.1%})",
                  f"- game length {r['mean_turns']:.1f} turns (sd {r['turns_sd']:.1f}); at the cap: {r['capped_share']:.1%}",
                  "", "| card | purchase rate | win-rate delta (95% CI) |", "|---|---|---|"]
        for c in r["cards"]:
            d = c["win_rate_delta"]
            ci = c["delta_ci95"]
            txt = "-" if d is None else f"{d:+.3f} ({ci[0]:+.3f} to {ci[1]:+.3f})"
            lines.append(f"| {c['card']} | {c['purchase_rate']:.2f} | {txt} |")
        lines.append("")
        if sections is not None:
            lines += ["### Seats, agents and length", "", *sections(r), ""]
    return "\n".join(lines)
