"""Balance analysis for the game's designers: which cards matter, seat advantage, game length.

``ripmarket balance --players 4,6,8 --games N`` plays, for every player count, a tournament
of a zoo of agents (the heuristic styles by default) with the tournament machinery of
:mod:`eval.tournament` (duplicate deals, seat rotation, worker processes, seeded), and
records what happens in every game through the public Engine API:

* **Cards played.** Before every step the recorder reads the decision phase and the
  chosen action: a ``card`` action in the *play* decision is a Living card played by the
  acting seat (a ``card`` action in the *replacement* choice is not a play); a ``shadow``
  action in the *Ghost* decision is a Shadow card played, and the following *victim*
  choice names the player it haunts.
* **Per Living design:** plays, share of all Living plays, the share of player-games in
  which it was played at least once, and the win rate of players who played it at least
  once vs players who did not, each with a Wilson 95% interval, and the difference.
* **Per Shadow design:** plays and share, and the win rate of the players it haunted vs
  every other player (a Ghost never wins, R-5.5, so the haunted player's fate is the
  card's effect).
* **First-seat advantage:** win rate by turn position in the first round (position 0 is
  the First Player drawn at setup, R-12.4; position k sits k seats clockwise of it).
* **Game length:** rounds per game (``state["round_num"]`` at the end) by player count.
* **Ghost swings:** the engine's ``shadow_swings`` counter, incremented in a round's
  resolution when the players that take damage before deflection (R-8.2) differ from the
  ones that would with every Shadow card's effect ignored; reported per round and as the
  share of games with at least one swing.

A win is a seat flagged in ``state["winners"]`` (co-winners included), as in the
tournament. Outputs: ``balance.md``, ``balance.json`` (every figure) and PNG plots.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ripmarket_env.games.ripmarket.state import PH_GHOST, PH_GHOST_TARGET, PH_PLAY

from eval.ratings import wilson_interval
from eval.tournament import MAX_PLAYERS, MIN_PLAYERS, run_tournament, validate

DEFAULT_AGENTS = ("greedy", "survivor", "shark", "hoarder", "trickster")
DEFAULT_PLAYERS = (4, 6, 8)
DEFAULT_GAMES = 240


class PlayRecorder:
    """Tournament observer (see ``run_tournament(observer=...)``) that notes the cards played."""

    def __init__(self, eng):
        B, P = eng.batch_size, eng.num_players
        r = eng.actions.ranges
        self.card0, self.n_living = r["card"].start, len(r["card"])
        self.shadow0, self.n_shadow = r["shadow"].start, len(r["shadow"])
        self.target0 = r["target"].start
        self.P = P
        self.first_player = eng.state["first_player"].astype(np.int64).copy()
        self.living = [[[] for _ in range(P)] for _ in range(B)]
        self.shadow = [[[] for _ in range(P)] for _ in range(B)]
        self.haunted = [[[] for _ in range(P)] for _ in range(B)]

    def before_step(self, eng, actor: np.ndarray, actions: np.ndarray) -> None:
        st = eng.state
        phase = st["phase"]
        for g in np.flatnonzero(actor >= 0):
            a = int(actions[g])
            p = int(actor[g])
            ph = int(phase[g])
            if ph == PH_PLAY and 0 <= a - self.card0 < self.n_living:
                self.living[g][p].append(a - self.card0)
            elif ph == PH_GHOST and 0 <= a - self.shadow0 < self.n_shadow:
                self.shadow[g][p].append(a - self.shadow0)
            elif ph == PH_GHOST_TARGET:
                victim = (p + a - self.target0 + 1) % self.P
                self.haunted[g][victim].append(int(st["pend_shadow"][g]))

    def game_record(self, eng, g: int) -> dict[str, Any]:
        return {
            "first_player": int(self.first_player[g]),
            "shadow_swings": int(eng.state["shadow_swings"][g]),
            "living_plays": self.living[g],
            "shadow_plays": self.shadow[g],
            "haunted": self.haunted[g],
        }


def make_recorder(eng) -> PlayRecorder:
    return PlayRecorder(eng)


OBSERVER = "eval.balance:make_recorder"


# ----------------------------------------------------------------------------- figures
def _rate(k: float, n: float) -> dict[str, float | None]:
    lo, hi = wilson_interval(k, n)
    return {"wins": int(k), "n": int(n), "rate": (k / n) if n else None, "ci": [lo, hi]}


def analyze(games: Sequence[dict], players: int, cards) -> dict[str, Any]:
    """Every balance figure of one player count's games (records with the recorder's fields)."""
    P = int(players)
    G = len(games)
    DL, DS = cards.n_living, cards.n_shadow
    win = np.array([g["winners"] for g in games], dtype=bool).reshape(G, P)
    played = np.zeros((G, P, DL), dtype=np.int64)
    shadow = np.zeros((G, P, DS), dtype=np.int64)
    haunted = np.zeros((G, P, DS), dtype=np.int64)
    for i, g in enumerate(games):
        for p in range(P):
            for d in g["living_plays"][p]:
                played[i, p, d] += 1
            for s in g["shadow_plays"][p]:
                shadow[i, p, s] += 1
            for s in g["haunted"][p]:
                haunted[i, p, s] += 1
    total_living = int(played.sum())
    total_shadow = int(shadow.sum())
    living = []
    for d in range(DL):
        has = played[:, :, d] > 0
        w_in, n_in = int((win & has).sum()), int(has.sum())
        w_out, n_out = int((win & ~has).sum()), int((~has).sum())
        a, b = _rate(w_in, n_in), _rate(w_out, n_out)
        living.append(
            {
                "design": d,
                "name": cards.living[d].name,
                "plays": int(played[:, :, d].sum()),
                "play_share": played[:, :, d].sum() / total_living if total_living else 0.0,
                "player_games_played": n_in,
                "played_rate": n_in / (G * P) if G else 0.0,
                "win_played": a,
                "win_not_played": b,
                "win_delta": (a["rate"] - b["rate"]) if a["rate"] is not None and b["rate"] is not None else None,
            }
        )
    shadows = []
    for s in range(DS):
        hit = haunted[:, :, s] > 0
        a = _rate(int((win & hit).sum()), int(hit.sum()))
        b = _rate(int((win & ~hit).sum()), int((~hit).sum()))
        shadows.append(
            {
                "design": s,
                "name": cards.shadow[s].name,
                "plays": int(shadow[:, :, s].sum()),
                "play_share": shadow[:, :, s].sum() / total_shadow if total_shadow else 0.0,
                "haunted_player_games": int(hit.sum()),
                "win_haunted": a,
                "win_not_haunted": b,
                "win_delta": (a["rate"] - b["rate"]) if a["rate"] is not None and b["rate"] is not None else None,
            }
        )
    fp = np.array([g["first_player"] for g in games], dtype=np.int64)
    pos_wins = np.zeros(P, dtype=np.int64)
    seat_wins = win.sum(axis=0).astype(np.int64)
    for i in range(G):
        for p in range(P):
            if win[i, p]:
                pos_wins[(p - fp[i]) % P] += 1
    rounds = np.array([g["rounds"] for g in games], dtype=np.int64)
    swings = np.array([g["shadow_swings"] for g in games], dtype=np.int64)
    hist = {int(k): int(v) for k, v in zip(*np.unique(rounds, return_counts=True))} if G else {}
    return {
        "players": P,
        "games": G,
        "games_with_winner": int(win.any(axis=1).sum()),
        "wins": int(win.sum()),
        "living_plays": total_living,
        "shadow_plays": total_shadow,
        "living": living,
        "shadow": shadows,
        "position_win": [_rate(int(pos_wins[k]), G) for k in range(P)],
        "seat_win": [_rate(int(seat_wins[k]), G) for k in range(P)],
        "rounds": {
            "mean": float(rounds.mean()) if G else None,
            "median": float(np.median(rounds)) if G else None,
            "min": int(rounds.min()) if G else None,
            "max": int(rounds.max()) if G else None,
            "histogram": hist,
        },
        "ghost_swings": {
            "swings": int(swings.sum()),
            "rounds": int(rounds.sum()),
            "per_round": float(swings.sum() / rounds.sum()) if rounds.sum() else 0.0,
            "games_with_swing": int((swings > 0).sum()),
            "share_games_with_swing": float((swings > 0).mean()) if G else 0.0,
        },
    }


# ----------------------------------------------------------------------------- run
def validate_balance(agent_names: Sequence[str], players: Sequence[int], games: int) -> list[str]:
    """Check the arguments; raise ``ValueError`` naming what is allowed."""
    players = list(players)
    if not players:
        raise ValueError(f"give at least one player count; allowed: integers from {MIN_PLAYERS} to {MAX_PLAYERS}")
    for p in players:
        if isinstance(p, bool) or not isinstance(p, (int, np.integer)) or not MIN_PLAYERS <= p <= MAX_PLAYERS:
            raise ValueError(f"player count {p!r} is not allowed; allowed: integers from {MIN_PLAYERS} to {MAX_PLAYERS}")
    if len(set(players)) != len(players):
        raise ValueError("a player count is listed twice; list each count once")
    return validate(agent_names, players[0], games)


def run_balance(
    agent_names: Sequence[str] = DEFAULT_AGENTS,
    players: Sequence[int] = DEFAULT_PLAYERS,
    games: int = DEFAULT_GAMES,
    seed: int = 1,
    workers: int | None = None,
    out: str | Path | None = None,
    progress: bool = True,
    chunk_sets: int | None = None,
) -> dict[str, Any]:
    """Play ``games`` games at every player count and return (and write to ``out``) the figures.

    ``chunk_sets`` defaults to a batch small enough that two workers share the work of a
    few hundred games.
    """
    from ripmarket_env.games.ripmarket.cards.loader import default_cards

    names = validate_balance(agent_names, players, games)
    if int(seed) < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed}")
    cards = default_cards()
    t0 = time.perf_counter()
    per = []
    for P in players:
        cs = chunk_sets or max(1, min(16, -(-int(games) // (int(P) * 4))))
        res = run_tournament(
            names, int(P), int(games), int(seed), workers=workers, progress=progress,
            chunk_sets=cs, observer=OBSERVER, label=f"balance {P} players",
        )
        fig = analyze(res.games, int(P), cards)
        fig["elapsed"] = res.elapsed
        per.append(fig)
    result = {
        "settings": {
            "agents": names,
            "players": [int(p) for p in players],
            "games_requested": int(games),
            "seed": int(seed),
            "workers": workers,
            "cards": "packaged cards.json",
        },
        "elapsed": time.perf_counter() - t0,
        "by_players": per,
    }
    if out is not None:
        write_balance(result, Path(out))
    return result


# ----------------------------------------------------------------------------- output
def _clean(x):
    if isinstance(x, dict):
        return {str(k): _clean(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_clean(v) for v in x]
    if isinstance(x, (np.integer,)):
        return int(x)
    if isinstance(x, (np.floating, float)):
        return None if not np.isfinite(x) else round(float(x), 6)
    return x


def _pct(r) -> str:
    return "—" if r is None else f"{100 * r:.1f}%"


def _ci(rate: dict) -> str:
    if rate["rate"] is None:
        return "—"
    lo, hi = rate["ci"]
    return f"{100 * rate['rate']:.1f}% [{100 * lo:.1f}, {100 * hi:.1f}]"


def _delta(x) -> str:
    return "—" if x is None else f"{100 * x:+.1f} pts"


def markdown(result: dict[str, Any]) -> str:
    s = result["settings"]
    L = [
        "# Balance report",
        "",
        f"- agents (seats drawn from this list, rotated over duplicate deals): {', '.join(s['agents'])}",
        f"- player counts: {', '.join(map(str, s['players']))}; games per count: {s['games_requested']} requested "
        "(rounded up to whole duplicate sets)",
        f"- seed: {s['seed']}; cards: {s['cards']}; run time: {result['elapsed']:.1f} s",
        "",
        "A win is a seat among the winners (co-winners included); intervals are Wilson 95%. "
        "A card's win-rate difference compares players who played it at least once in a game with "
        "players who did not; it measures association, not cause (strong players and long games play more cards).",
        "",
        "## Overview",
        "",
        "| players | games | mean rounds | median | min–max | Ghost swings per round | games with a swing | First Player win rate | fair share |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for f in result["by_players"]:
        r, gs = f["rounds"], f["ghost_swings"]
        L.append(
            f"| {f['players']} | {f['games']} | {r['mean']:.2f} | {r['median']:.0f} | {r['min']}–{r['max']} | "
            f"{gs['per_round']:.3f} | {_pct(gs['share_games_with_swing'])} | {_ci(f['position_win'][0])} | "
            f"{_pct(1 / f['players'])} |"
        )
    L += [
        "",
        "Ghost swing: a round in which the players taking damage (before deflection) differ from those "
        "who would with the Shadow cards' effects ignored (engine counter `shadow_swings`).",
        "",
        "![game length](game_length.png) ![first seat](seat_position.png)",
        "",
    ]
    for f in result["by_players"]:
        P = f["players"]
        L += [
            f"## {P} players",
            "",
            f"{f['games']} games, {f['living_plays']} Living plays, {f['shadow_plays']} Shadow plays.",
            "",
            "### Win rate by turn position in the first round (0 = First Player)",
            "",
            "| position | win rate [95% CI] |",
            "|---|---|",
        ]
        L += [f"| {k} | {_ci(w)} |" for k, w in enumerate(f["position_win"])]
        L += [
            "",
            "### Living cards",
            "",
            "| card | plays | share of plays | played in % of player-games | win rate when played | win rate when not | difference |",
            "|---|---|---|---|---|---|---|",
        ]
        for c in sorted(f["living"], key=lambda c: -c["plays"]):
            L.append(
                f"| {c['name']} | {c['plays']} | {_pct(c['play_share'])} | {_pct(c['played_rate'])} | "
                f"{_ci(c['win_played'])} | {_ci(c['win_not_played'])} | {_delta(c['win_delta'])} |"
            )
        L += [
            "",
            "### Shadow cards",
            "",
            "| card | plays | share of plays | win rate of haunted players | of the others | difference |",
            "|---|---|---|---|---|---|",
        ]
        for c in sorted(f["shadow"], key=lambda c: -c["plays"]):
            L.append(
                f"| {c['name']} | {c['plays']} | {_pct(c['play_share'])} | {_ci(c['win_haunted'])} | "
                f"{_ci(c['win_not_haunted'])} | {_delta(c['win_delta'])} |"
            )
        L += ["", f"![cards, {P} players](cards_{P}p.png)", ""]
    return "\n".join(L) + "\n"


def write_balance(result: dict[str, Any], out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    p = out / "balance.json"
    p.write_text(json.dumps(_clean(result), indent=1) + "\n", encoding="utf-8")
    paths.append(p)
    p = out / "balance.md"
    p.write_text(markdown(result), encoding="utf-8")
    paths.append(p)
    paths += _plots(result, out)
    return paths


def _plots(result: dict[str, Any], out: Path) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    paths = []
    per = result["by_players"]
    fig, ax = plt.subplots(figsize=(7, 4))
    for f in per:
        h = f["rounds"]["histogram"]
        if not h:
            continue
        xs = np.array(sorted(int(k) for k in h))
        ys = np.array([h[k] if k in h else h[str(k)] for k in xs], dtype=float) / f["games"]
        ax.plot(xs, ys, marker="o", label=f"{f['players']} players")
    ax.set_xlabel("rounds")
    ax.set_ylabel("share of games")
    ax.set_title("Game length by player count")
    ax.legend()
    ax.grid(alpha=0.3)
    fig.tight_layout()
    p = out / "game_length.png"
    fig.savefig(p, dpi=110)
    plt.close(fig)
    paths.append(p)

    fig, ax = plt.subplots(figsize=(7, 4))
    width = 0.8 / max(1, len(per))
    for i, f in enumerate(per):
        P = f["players"]
        x = np.arange(P) + (i - (len(per) - 1) / 2) * width
        rate = np.array([w["rate"] or 0.0 for w in f["position_win"]])
        lo = np.array([w["ci"][0] for w in f["position_win"]])
        hi = np.array([w["ci"][1] for w in f["position_win"]])
        ax.bar(x, rate, width, yerr=[rate - lo, hi - rate], capsize=2, label=f"{P} players")
        ax.hlines(1 / P, x[0] - width / 2, x[-1] + width / 2, colors=f"C{i}", linestyles="dotted")
    ax.set_xlabel("turn position in the first round (0 = First Player)")
    ax.set_ylabel("win rate (dotted: 1 / players)")
    ax.set_title("Seat advantage")
    ax.legend()
    fig.tight_layout()
    p = out / "seat_position.png"
    fig.savefig(p, dpi=110)
    plt.close(fig)
    paths.append(p)

    for f in per:
        cards = sorted(f["living"], key=lambda c: c["win_delta"] if c["win_delta"] is not None else 0.0)
        names = [c["name"] for c in cards]
        fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, max(3.5, 0.28 * len(names) + 1.5)), sharey=True)
        y = np.arange(len(names))
        a1.barh(y, [100 * c["play_share"] for c in cards], color="C0")
        a1.set_yticks(y, names, fontsize=8)
        a1.set_xlabel("share of Living plays (%)")
        d, lo, hi = [], [], []
        for c in cards:
            a, b = c["win_played"], c["win_not_played"]
            if c["win_delta"] is None:
                d.append(0.0), lo.append(0.0), hi.append(0.0)
                continue
            # interval of the difference: independent normal approximation of both Wilson halves
            ea = (a["ci"][1] - a["ci"][0]) / 2
            eb = (b["ci"][1] - b["ci"][0]) / 2
            e = float(np.hypot(ea, eb))
            d.append(100 * c["win_delta"])
            lo.append(100 * e)
            hi.append(100 * e)
        a2.barh(y, d, xerr=[lo, hi], color=["C2" if v >= 0 else "C3" for v in d], capsize=2)
        a2.axvline(0, color="black", lw=0.8)
        a2.set_xlabel("win rate when played − when not (points, ±95%)")
        fig.suptitle(f"Living cards, {f['players']} players ({f['games']} games)")
        fig.tight_layout()
        p = out / f"cards_{f['players']}p.png"
        fig.savefig(p, dpi=110)
        plt.close(fig)
        paths.append(p)
    return paths


def print_summary(result: dict[str, Any], console=None) -> None:
    """The overview as a rich table, and the cards with the largest win-rate differences."""
    from rich.console import Console
    from rich.table import Table

    console = console or Console()
    t = Table(title="Balance overview")
    for col in ("players", "games", "mean rounds", "Ghost swings/round", "First Player win rate", "1/players"):
        t.add_column(col, justify="right")
    for f in result["by_players"]:
        t.add_row(
            str(f["players"]), str(f["games"]), f"{f['rounds']['mean']:.2f}",
            f"{f['ghost_swings']['per_round']:.3f}", _ci(f["position_win"][0]), _pct(1 / f["players"]),
        )
    console.print(t)
    for f in result["by_players"]:
        cards = [c for c in f["living"] if c["win_delta"] is not None]
        cards.sort(key=lambda c: -abs(c["win_delta"]))
        t = Table(title=f"{f['players']} players: Living cards with the largest win-rate differences")
        for col in ("card", "plays", "win when played", "win when not", "difference"):
            t.add_column(col, justify="right" if col != "card" else "left")
        for c in cards[:5]:
            t.add_row(c["name"], str(c["plays"]), _ci(c["win_played"]), _ci(c["win_not_played"]), _delta(c["win_delta"]))
        console.print(t)
