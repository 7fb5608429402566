"""The Rune Market's balance analysis (its ``GameSpec.balance`` hook; ``ripmarket balance
--game rune-market``, ``eval.balance``, plays a tournament of the game's bots with seat
rotation over duplicate deals).

Per game, an observer (``make_observer``) counts from the engine's event log, per seat:
the card plays and purchases of each kind (``KINDS``), the Runes stolen and lost to
thefts, the Bandits placed and suffered, and the interest diverted by Bandits. The
analysis reports, each with a 95% interval:

* **first-seat advantage**: the win rate of the seat that started the game against
  parity 1/P (Wilson interval), and per seat position counted from the first player;
* **game length**: turns and rounds (one turn of every seat), mean with a normal interval;
* **card kinds that decide games**: for each kind, the win rate of seats that used it at
  least once against seats that did not (difference with a normal interval), and the
  share of games whose winner used it more often than every other seat;
* **Bandits and thefts**: the win rate of seats that placed a Bandit / suffered one /
  stole at least one Rune / lost one, against the other seats; Runes stolen per game.

A seat's win counts co-winners (a shared first place). The report also holds the generic
figures every game has (win share by seat, turn position and agent; game length).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ripmarket_env.core.stats import wilson_interval

#: the tournament observer of a balance run
OBSERVER = f"{__name__}:make_observer"
#: event kind -> what the balance report calls it (the plays and purchases a seat makes)
KINDS = {
    "play_shelter": "Shelter played", "discard_shelter": "Shelter discarded (double theft)",
    "play_theft": "Theft Card", "attack": "attack", "block": "block", "rune_bought": "Rune bought",
    "number_bought": "Boat/Bandit bought with Numbers", "buy_with_runes": "Boat/Bandit bought with Runes",
    "place_boat": "Boat Shelter placed", "place_bandit": "Bandit placed", "pay_bandit": "Bandit payment",
}
_K = list(KINDS)


class RuneObserver:
    """Counts every game's events per seat (a tournament observer: ``after_step`` sees the
    games just stepped, ``game_record`` gives the counts of one game)."""

    def __init__(self, engine):
        B, P = engine.batch_size, engine.num_players
        self.P = P
        self.kinds = np.zeros((B, P, len(_K)), np.int64)
        self.stolen = np.zeros((B, P), np.int64)  # Runes stolen by the seat
        self.lost = np.zeros((B, P), np.int64)  # Runes stolen from the seat
        self.bandit_on = np.zeros((B, P), np.int64)  # Bandits placed on the seat's Shelters
        self.diverted = np.zeros((B, P), np.int64)  # interest Runes the seat's Bandits took
        self._take(engine, range(B))  # what the resets did

    def _take(self, engine, games) -> None:
        for g in games:
            for e in engine.events(g):
                if e.kind in KINDS:
                    self.kinds[g, e.seat, _K.index(e.kind)] += 1
                if e.kind == "steal_rune":
                    self.stolen[g, e.seat] += 1
                    self.lost[g, e.a] += 1
                elif e.kind == "place_bandit":
                    self.bandit_on[g, e.a] += 1
                elif e.kind == "interest":
                    owner = e.b // 16
                    if owner != e.seat:
                        self.diverted[g, e.seat] += e.b % 16

    def before_step(self, engine, actor, actions) -> None:
        pass

    def after_step(self, engine, actor) -> None:
        self._take(engine, np.flatnonzero(np.asarray(actor) >= 0))

    def game_record(self, engine, g: int) -> dict[str, Any]:
        st = engine.state[g]
        return {"first_player": int(st["first_player"]), "turns": int(st["total_turns"]),
                "kinds": self.kinds[g].tolist(), "stolen": self.stolen[g].tolist(), "lost": self.lost[g].tolist(),
                "bandit_on": self.bandit_on[g].tolist(), "diverted": self.diverted[g].tolist(),
                "end_reason": int(st["end_reason"])}


def make_observer(engine) -> RuneObserver:
    return RuneObserver(engine)


def _rate(k: float, n: float) -> dict[str, Any]:
    lo, hi = wilson_interval(k, n) if n else (float("nan"), float("nan"))
    return {"rate": k / n if n else float("nan"), "ci95": [lo, hi], "n": int(n)}


def _diff(k1, n1, k2, n2) -> dict[str, Any]:
    """Difference of two rates with a normal (Wald) 95% interval."""
    if not n1 or not n2:
        return {"diff": float("nan"), "ci95": [float("nan"), float("nan")]}
    p1, p2 = k1 / n1, k2 / n2
    se = math.sqrt(p1 * (1 - p1) / n1 + p2 * (1 - p2) / n2)
    d = p1 - p2
    return {"diff": d, "ci95": [d - 1.96 * se, d + 1.96 * se]}


def _mean(x) -> dict[str, Any]:
    x = np.asarray(x, np.float64)
    se = x.std(ddof=1) / math.sqrt(len(x)) if len(x) > 1 else float("nan")
    return {"mean": float(x.mean()), "ci95": [float(x.mean() - 1.96 * se), float(x.mean() + 1.96 * se)],
            "min": float(x.min()), "max": float(x.max())}


def _split(win: np.ndarray, flag: np.ndarray) -> dict[str, Any]:
    a, b = win[flag], win[~flag]
    return {"with": _rate(a.sum(), a.size), "without": _rate(b.sum(), b.size),
            "difference": _diff(a.sum(), a.size, b.sum(), b.size)}


def analyze(games: Sequence[dict], players: int) -> dict[str, Any]:
    P = players
    win = np.array([g["winners"] for g in games], bool)  # (G, P)
    first = np.array([g["first_player"] for g in games], np.int64)
    G = len(games)
    pos = (np.arange(P)[None, :] - first[:, None]) % P  # seat position from the first player
    by_pos = [_rate(win[pos == k].sum(), (pos == k).sum()) for k in range(P)]
    kinds = np.array([g["kinds"] for g in games], np.int64)  # (G, P, K)
    deciding = {}
    for i, k in enumerate(_K):
        used = kinds[:, :, i] > 0
        most = kinds[:, :, i]
        top = np.array([most[g][win[g]].max() > np.delete(most[g], np.flatnonzero(win[g])).max(initial=-1)
                        for g in range(G)])
        deciding[k] = {"label": KINDS[k], "per_game": float(most.sum() / G), **_split(win, used),
                       "winner_used_most": _rate(top.sum(), G)}
    stolen = np.array([g["stolen"] for g in games], np.int64)
    lost = np.array([g["lost"] for g in games], np.int64)
    bandit_on = np.array([g["bandit_on"] for g in games], np.int64)
    diverted = np.array([g["diverted"] for g in games], np.int64)
    placed = kinds[:, :, _K.index("place_bandit")] > 0
    return {
        "players": P, "games": G,
        "first_seat": {"win": _rate(win[np.arange(G), first].sum(), G), "parity": 1.0 / P, "by_position": by_pos},
        "length": {"turns": _mean([g["turns"] for g in games]), "rounds": _mean([g["rounds"] for g in games]),
                   "decisions": _mean([g["steps"] for g in games]),
                   "at_turn_cap": int(sum(g["end_reason"] == 1 for g in games))},
        "kinds": deciding,
        "bandits": {"placed_one": _split(win, placed), "suffered_one": _split(win, bandit_on > 0),
                    "per_game": float(kinds[:, :, _K.index("place_bandit")].sum() / G),
                    "diverted_runes_per_game": float(diverted.sum() / G)},
        "thefts": {"stole_a_rune": _split(win, stolen > 0), "lost_a_rune": _split(win, lost > 0),
                   "runes_stolen_per_game": _mean(stolen.sum(axis=1))},
    }


def figures(games: Sequence[dict], players: int, context: dict[str, Any]) -> dict[str, Any]:
    """The balance hook: the generic figures (``context["generic"]``) and ``analyze``'s."""
    return {**context["generic"], **analyze(games, players)}


def _ci(r: dict) -> str:
    lo, hi = r["ci95"]
    return f"[{lo:.3f}, {hi:.3f}]"


def _d(s: dict) -> str:
    d = s["difference"]
    if not math.isfinite(d["diff"]):
        return "n/a (every seat or no seat did)"
    return f"{d['diff']:+.3f} {_ci(d)}"


def _r(r: dict) -> str:
    return f"{r['rate']:.3f}" if math.isfinite(r["rate"]) else "n/a"


def markdown(result: dict[str, Any], sections=None) -> str:
    """The report; ``sections(f)``, the generic figures' renderer, adds them per player count."""
    s = result["settings"]
    lines = ["# The Rune Market: balance", "",
             f"Agents: {', '.join(s['agents'])}; seed {s['seed']}. Intervals are 95% "
             "(Wilson for rates, normal for means and differences).", ""]
    for a in result["by_players"]:
        P = a["players"]
        fs, ln = a["first_seat"], a["length"]
        lines += [f"## {P} players ({a['games']} games)", "",
                  f"- first player's win rate (a shared win counts as a win, unlike the win shares "
                  f"below, where it counts 1/k): {fs['win']['rate']:.3f} {_ci(fs['win'])} (parity {fs['parity']:.3f})",
                  "- win rate by position after the first player (the same count): " + ", ".join(
                      f"{k}: {r['rate']:.3f} {_ci(r)}" for k, r in enumerate(fs["by_position"])),
                  f"- game length: {ln['turns']['mean']:.1f} turns {_ci(ln['turns'])}, "
                  f"{ln['rounds']['mean']:.2f} rounds {_ci(ln['rounds'])}, {ln['decisions']['mean']:.0f} decisions; "
                  f"{ln['at_turn_cap']} games at the turn cap",
                  f"- Bandits: {a['bandits']['per_game']:.2f} placed per game, "
                  f"{a['bandits']['diverted_runes_per_game']:.2f} interest Runes diverted per game; win rate of a seat "
                  f"that placed one minus the others: {_d(a['bandits']['placed_one'])}; that suffered one: "
                  f"{_d(a['bandits']['suffered_one'])}",
                  f"- thefts: {a['thefts']['runes_stolen_per_game']['mean']:.2f} Runes stolen per game; win rate of a "
                  f"seat that stole one minus the others: {_d(a['thefts']['stole_a_rune'])}; that lost one: "
                  f"{_d(a['thefts']['lost_a_rune'])}", "",
                  "| card kind | per game | win rate with | without | difference | winner used it most |",
                  "|---|---|---|---|---|---|"]
        for k in a["kinds"].values():
            lines.append(f"| {k['label']} | {k['per_game']:.2f} | {_r(k['with'])} | "
                         f"{_r(k['without'])} | {_d(k)} | {k['winner_used_most']['rate']:.3f} |")
        lines.append("")
        if sections is not None:
            lines += ["### Seats, agents and length", "", *sections(a), ""]
    return "\n".join(lines)
