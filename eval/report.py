"""Tournament reports: report.md, results.json, games.csv, PNG plots, and a rich terminal table.

Files written into the output directory:

* ``report.md``: settings, leaderboard (by OpenSkill ordinal), head-to-head matrix, game length.
* ``results.json``: every figure: ``settings``, ``agents`` (ratings, win rates with Wilson 95%
  interval, placements, rewards), ``leaderboard``, ``head_to_head``, ``game_length``,
  and ``timing`` (the only part that changes between runs of the same tournament).
* ``games.csv``: one row per game (index, set, rotation, deal seed, lineup, finishing
  order, places, winners, rounds, steps, rewards).
* ``ratings.png`` (mu with +-3 sigma bars and the ordinal), ``head_to_head.png`` (heatmap),
  ``game_length.png`` (histogram of rounds).
"""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path
from typing import Any

from agents.base import DEFAULT_GAME

FILES = ("report.md", "results.json", "games.csv", "ratings.png", "head_to_head.png", "game_length.png")


def _clean(x):
    if isinstance(x, float) and not math.isfinite(x):
        return None
    if isinstance(x, dict):
        return {k: _clean(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_clean(v) for v in x]
    return x


def results_dict(result) -> dict[str, Any]:
    s = result.summary
    return _clean(
        {
            "settings": result.settings,
            "agents": s["agents"],
            "leaderboard": s["leaderboard"],
            "head_to_head": s["head_to_head"],
            "game_length": s["game_length"],
            "shared_win_games": s["shared_win_games"],
            "leader_vs_runner_up": s.get("leader_vs_runner_up"),
            "timing": {
                "seconds": round(result.elapsed, 3),
                "games_per_second": round(len(result.games) / result.elapsed, 3) if result.elapsed > 0 else None,
            },
        }
    )


def write_report(result, out: str | Path) -> list[Path]:
    """Write every report file into ``out`` (created if needed); return their paths."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    paths = [
        _write_json(result, out / "results.json"),
        _write_csv(result, out / "games.csv"),
        _write_markdown(result, out / "report.md"),
    ]
    paths += _write_plots(result, out)
    return paths


def _write_json(result, path: Path) -> Path:
    path.write_text(json.dumps(results_dict(result), indent=2) + "\n", encoding="utf-8")
    return path


def _write_csv(result, path: Path) -> Path:
    cols = ["game", "set", "rotation", "seed", "lineup", "order", "place", "placement", "winners", "rounds", "steps", "rewards"]
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(cols)
        for g in result.games:
            w.writerow(
                [
                    g["game"],
                    g["set"],
                    g["rotation"],
                    g["seed"],
                    " ".join(g["lineup"]),
                    " > ".join("=".join(str(p) for p in grp) for grp in g["order"]),
                    " ".join(str(p) for p in g["place"]),
                    " ".join(f"{p:g}" for p in g["placement"]),
                    " ".join(str(i) for i, w_ in enumerate(g["winners"]) if w_),
                    g["rounds"],
                    g["steps"],
                    " ".join(f"{r:.6g}" for r in g["rewards"]),
                ]
            )
    return path


def _fmt(x, spec: str = ".3f") -> str:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "—"
    return format(x, spec)


def leaderboard_rows(result) -> list[list[str]]:
    s = result.summary
    rows = []
    for rank, n in enumerate(s["leaderboard"], 1):
        a = s["agents"][n]
        rows.append(
            [
                str(rank),
                n,
                _fmt(a["ordinal"], ".2f"),
                _fmt(a["mu"], ".2f"),
                _fmt(a["sigma"], ".2f"),
                _fmt(a["win_rate"]),
                f"[{_fmt(a['win_rate_lo'])}, {_fmt(a['win_rate_hi'])}]",
                _fmt(a["mean_placement"], ".2f"),
                _fmt(a["mean_reward"], "+.3f"),
                str(a["seat_games"]),
            ]
        )
    return rows


HEADERS = ["#", "agent", "ordinal", "mu", "sigma", "win rate", "95% CI", "mean place", "mean reward", "seat-games"]


def _title(game: str) -> str:
    from ripmarket_env.games import get

    try:
        return f"{get(game).title} (`{game}`)"
    except KeyError:
        return game


def _seats(teams, side: int) -> str:
    return ", ".join(str(s) for s, t in enumerate(teams) if t == side)


def _write_markdown(result, path: Path) -> Path:
    st = result.settings
    s = result.summary
    lines = ["# Tournament report", ""]
    lines += [
        "## Settings",
        "",
        f"- game: {_title(st.get('game', DEFAULT_GAME))}",
        f"- agents: {', '.join(st['agents'])}",
        f"- players per game: {st['players']}",
        f"- games: {st['games']} ({st['duplicate_sets']} duplicate sets of {st['players']} rotations"
        + (f"; {st['games_requested']} requested, rounded up to whole sets)" if st['games_requested'] != st['games']
           else ")"),
        *([f"- match play: every table plays {st['match_games']} games; after the set's deal each game is a "
           "new deal started by the previous game's winner (of co-winners, the one the game's rule names)"] if st.get("match_games", 1) > 1 else []),
        f"- seed: {st['seed']}; chunks: {st['chunks']} of up to {st['chunk_sets']} sets; workers: {st['workers']}",
        f"- rules overrides: {st['rules'] or 'none (rulebook defaults)'}",
        *([f"- teams: seats {_seats(st['teams'], 0)} against seats {_seats(st['teams'], 1)}; "
           "the rotation keeps each team together and swaps the sides"] if st.get("teams") else []),
        *([f"- agent settings: {st['agent_kwargs']}"] if st.get("agent_kwargs") else []),
        f"- run time: {result.elapsed:.1f} s",
        "",
        "Each deal is replayed with the lineup rotated through every seat (duplicate set). Ratings: "
        + ("OpenSkill Plackett-Luce with team support: each game is one result between the two sides, each "
           "side an OpenSkill team of its seats (each at its agent's current rating), the winners' side "
           "ranked first (a tie shares the rank)" if st.get("teams") else
           "OpenSkill Plackett-Luce from each game's finishing order (ties share a rank; each seat is its "
           "own team at its agent's current rating)")
        + ", averaged over 16 shuffled game orders, sigma including "
        "the spread of mu across orders. Win rate per seat-game with a Wilson 95% interval.",
        "",
        "## Leaderboard",
        "",
        "| " + " | ".join(HEADERS) + " |",
        "|" + "|".join("---" for _ in HEADERS) + "|",
    ]
    for row in leaderboard_rows(result):
        lines.append("| " + " | ".join(row) + " |")
    h = s["head_to_head"]
    names = h["agents"]
    lines += [
        "",
        "## Head-to-head",
        "",
        "P(row agent finishes ahead of column agent | both at the table); ties count one half"
        + ("; seats on one side (teammates) are not compared." if st.get("teams") else "."),
        "",
        "| | " + " | ".join(names) + " |",
        "|---|" + "|".join("---" for _ in names) + "|",
    ]
    for i, n in enumerate(names):
        cells = []
        for j in range(len(names)):
            p = h["prob_ahead"][i][j]
            cells.append("—" if p is None else f"{p:.3f} ({h['pairs'][i][j]})")
        lines.append(f"| **{n}** | " + " | ".join(cells) + " |")
    vs = s.get("leader_vs_runner_up")
    if vs:
        a, b = vs["agents"]
        lines += ["", f"## {a} against {b} (first and second by ordinal)", "",
                  f"Over the {vs['games']} games where both hold a seat:", ""]
        for n in (a, b):
            w = vs[n]
            lines.append(f"- {n}: win rate {_fmt(w['win_rate'])} [{w['win_ci'][0]:.3f}, {w['win_ci'][1]:.3f}] "
                         f"over {w['seat_games']} seat-games")
        lines.append(f"- P({a} finishes ahead of {b}): {_fmt(vs['prob_ahead'])} "
                     f"[{vs['prob_ahead_ci'][0]:.3f}, {vs['prob_ahead_ci'][1]:.3f}] over {vs['pairs']} seat pairs")
        if "ordinal_lead" in vs:
            lines.append(f"- {a} leads by {vs['ordinal_lead']:.2f} ordinal points; the two sigmas added: "
                         f"{vs['sigmas_added']:.2f} (the lead is {'' if vs['lead_beyond_sigmas'] else 'not '}larger)")
    gl = s["game_length"]
    lines += [
        "",
        "## Game length",
        "",
        f"- rounds: mean {_fmt(gl['rounds_mean'], '.2f')}, min {gl['rounds_min']}, max {gl['rounds_max']}",
        f"- decisions per game: mean {_fmt(gl['steps_mean'], '.1f')}",
        f"- games with shared wins: {s['shared_win_games']}",
        "",
        "## Plots",
        "",
        "![ratings](ratings.png)",
        "",
        "![head-to-head](head_to_head.png)",
        "",
        "![game length](game_length.png)",
        "",
    ]
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


def _write_plots(result, out: Path) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    s = result.summary
    paths = []
    order = s["leaderboard"]
    mu = np.array([s["agents"][n]["mu"] for n in order])
    sig = np.array([s["agents"][n]["sigma"] for n in order])
    fig, ax = plt.subplots(figsize=(max(5, 1.1 * len(order) + 2), 4))
    x = np.arange(len(order))
    ax.errorbar(x, mu, yerr=3 * sig, fmt="o", capsize=5, label="mu ± 3σ")
    ax.scatter(x, mu - 3 * sig, marker="_", s=200, color="C3", label="ordinal (mu − 3σ)", zorder=3)
    ax.set_xticks(x, order, rotation=30, ha="right")
    ax.set_ylabel("OpenSkill rating")
    ax.set_title("Ratings (Plackett-Luce)")
    ax.legend()
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    p = out / "ratings.png"
    fig.savefig(p, dpi=110)
    plt.close(fig)
    paths.append(p)

    h = s["head_to_head"]
    names = h["agents"]
    mat = np.array([[np.nan if v is None else v for v in row] for row in h["prob_ahead"]], dtype=float)
    fig, ax = plt.subplots(figsize=(max(4, 0.9 * len(names) + 2.5), max(3.5, 0.8 * len(names) + 2)))
    im = ax.imshow(np.ma.masked_invalid(mat), cmap="RdBu", vmin=0, vmax=1)
    ax.set_xticks(range(len(names)), names, rotation=30, ha="right")
    ax.set_yticks(range(len(names)), names)
    for i in range(len(names)):
        for j in range(len(names)):
            ax.text(j, i, "—" if not np.isfinite(mat[i, j]) else f"{mat[i, j]:.2f}", ha="center", va="center", fontsize=9)
    ax.set_xlabel("opponent")
    ax.set_ylabel("agent")
    ax.set_title("P(agent ahead of opponent)")
    fig.colorbar(im, ax=ax)
    fig.tight_layout()
    p = out / "head_to_head.png"
    fig.savefig(p, dpi=110)
    plt.close(fig)
    paths.append(p)

    rounds = np.array([g["rounds"] for g in result.games])
    fig, ax = plt.subplots(figsize=(6, 3.5))
    if rounds.size:
        bins = np.arange(rounds.min(), rounds.max() + 2) - 0.5
        ax.hist(rounds, bins=bins, edgecolor="black")
    ax.set_xlabel("rounds")
    ax.set_ylabel("games")
    ax.set_title("Game length")
    fig.tight_layout()
    p = out / "game_length.png"
    fig.savefig(p, dpi=110)
    plt.close(fig)
    paths.append(p)
    return paths


def print_table(result, console=None) -> None:
    """The leaderboard as a rich table (plus the head-to-head matrix) on the terminal."""
    from rich.console import Console
    from rich.table import Table

    console = console or Console(width=None if Console().is_terminal else 120)
    st = result.settings
    t = Table(
        title=f"Tournament: {st['games']} games, {st['players']} players, seed {st['seed']} ({result.elapsed:.1f} s)"
    )
    for hname in HEADERS:
        t.add_column(hname, justify="left" if hname == "agent" else "right", no_wrap=True)
    for row in leaderboard_rows(result):
        t.add_row(*row)
    console.print(t)
    h = result.summary["head_to_head"]
    names = h["agents"]
    if len(names) > 1:
        t2 = Table(title="P(row ahead of column | both seated)")
        t2.add_column("")
        for n in names:
            t2.add_column(n, justify="right")
        for i, n in enumerate(names):
            t2.add_row(n, *["—" if v is None else f"{v:.3f}" for v in h["prob_ahead"][i]])
        console.print(t2)
    if result.out is not None:
        console.print(f"report written to {result.out}/ ({', '.join(FILES)})")
