"""Balance reports for every registered game: ``ripmarket balance --game G``.

For every player count, a tournament of a zoo of agents (``eval.tournament``: duplicate
deals, seat rotation, worker processes, seeded; the game's heuristics by default,
``agents.game_agents(game).zoo()``) is played and its game records are turned into figures.

* **Generic figures**, for every game (``generic_figures``): the games with one winner,
  shared or none; the win share by seat and, when the records know the first player, by
  turn position from it (a shared win counts 1/k for each of k co-winners); each agent's
  player-games and win share; game length in rounds and in decisions. Rates carry Wilson
  95% intervals (``ripmarket_env.core.stats.rate``).
* **The game's own figures**, through its ``GameSpec.balance`` hook (a namespace, see
  ``ripmarket_env/core/spec.py``): an ``OBSERVER`` that records the game's events during
  play, ``figures(games, players, context)`` (R.I.P. Market: per card play and win rates,
  Market take rates, Ghost swings; Black Market: per Point Card purchase rates, the first
  side's advantage; The Rune Market: card kinds, Bandits and thefts), ``markdown``,
  ``plots``, ``print_summary``, ``diff_results``/``diff_markdown``/``print_diff`` and
  ``targets``, each optional. A game without the hook gets the generic report, comparison
  and targets.

One report shape for every game (``balance.json``)::

    {"settings": {"game", "agents", "players", "games_requested", "seed", "workers",
                  ["cards", "cards_digest" for a game with card files], ["rules"]},
     "elapsed": seconds,
     "by_players": [{"players", "games", <generic figures>, <the game's figures>,
                     "elapsed"}, ...]}

``balance.md`` is the report, ``balance diff A B`` compares two runs and ``balance targets``
measures the game's promises (the generic default: every turn position's win share
against the fair share 1/players).
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np


from agents.base import DEFAULT_GAME
from ripmarket_env.core.stats import ci_text as _ci, pct as _pct, rate, two_proportion_p  # noqa: F401
from eval.tournament import run_tournament, validate

DEFAULT_GAMES = 240
#: Two-sided p-value under which a change is flagged as significant (generic comparison).
ALPHA = 0.05


# ----------------------------------------------------------------------------- the game's hooks
def _spec(game: str):
    from ripmarket_env.games import get, ids

    if game not in ids():
        raise ValueError(f"unknown game {game!r}; allowed: {', '.join(ids())}")
    return get(game)


def _hook(spec, name: str):
    """The game's balance hook ``name``, or None (no hook, or the hook lacks it)."""
    b = spec.balance
    if b is None:
        return None
    has = getattr(b, "has", None)
    if has is not None:
        return getattr(b, name) if has(name) else None
    return getattr(b, name, None)


def default_players(game: str = DEFAULT_GAME) -> list[int]:
    """The player counts of a run when none are given: the game's ``DEFAULT_PLAYERS`` (balance
    hook), else its allowed counts (``extras["player_counts"]``) or its smallest, default and
    largest table."""
    spec = _spec(game)
    chosen = _hook(spec, "DEFAULT_PLAYERS")
    if chosen:
        return [int(p) for p in chosen]
    counts = (spec.extras or {}).get("player_counts")
    return [int(p) for p in counts] if counts else sorted({spec.min_players, spec.default_players, spec.max_players})


def default_agents(game: str = DEFAULT_GAME) -> list[str]:
    """The agents of a run when none are given: the game's heuristics (``random`` without)."""
    import agents

    return agents.game_agents(game).zoo()


def validate_balance(agent_names: Sequence[str], players: Sequence[int], games: int,
                     game: str = DEFAULT_GAME) -> list[str]:
    """Check the arguments; raise ``ValueError`` naming what is allowed."""
    spec = _spec(game)
    players = list(players)
    lo, hi = spec.min_players, spec.max_players
    counts = (spec.extras or {}).get("player_counts")
    allowed = ", ".join(map(str, counts)) if counts else f"integers from {lo} to {hi}"
    if not players:
        raise ValueError(f"give at least one player count; allowed: {allowed}")
    for p in players:
        if (isinstance(p, bool) or not isinstance(p, (int, np.integer)) or not lo <= p <= hi
                or (counts and p not in counts)):
            raise ValueError(f"player count {p!r} is not allowed for {spec.title}; allowed: {allowed}")
    if len(set(players)) != len(players):
        raise ValueError("a player count is listed twice; list each count once")
    return validate(agent_names, players[0], games, game)


# ----------------------------------------------------------------------------- generic figures
def _summary(x: np.ndarray) -> dict[str, Any]:
    n = len(x)
    return {"mean": float(x.mean()) if n else None, "median": float(np.median(x)) if n else None,
            "min": int(x.min()) if n else None, "max": int(x.max()) if n else None}


def generic_figures(games: Sequence[dict], players: int) -> dict[str, Any]:
    """The figures every game's report has, from the tournament's game records: winners,
    win share by seat, by turn position (records with ``first_player``) and by agent,
    game length in rounds and decisions."""
    P = int(players)
    G = len(games)
    win = np.array([g["winners"] for g in games], dtype=bool).reshape(G, P)
    n_win = win.sum(axis=1)
    share = np.where(n_win[:, None] > 0, win / np.maximum(n_win, 1)[:, None], 0.0)  # a shared win counts 1/k
    out: dict[str, Any] = {
        "players": P,
        "games": G,
        "games_with_winner": int((n_win > 0).sum()),
        "games_single_winner": int((n_win == 1).sum()),
        "games_shared_win": int((n_win > 1).sum()),
        "games_no_winner": int((n_win == 0).sum()),
        "share_no_single_winner": float((n_win != 1).mean()) if G else 0.0,
        "wins": int(win.sum()),
        "seat_win": [rate(float(share[:, k].sum()), G) for k in range(P)],
    }
    if G and all("first_player" in g for g in games):
        fp = np.array([g["first_player"] for g in games], dtype=np.int64)
        pos = (np.arange(P)[None, :] - fp[:, None]) % P
        out["position_win"] = [rate(float(share[pos == k].sum()), G) for k in range(P)]
    by_agent = {}
    if G:
        lineup = np.array([g["lineup"] for g in games], dtype=object).reshape(G, P)
        for name in sorted({str(x) for x in lineup.ravel()}):
            mine = lineup == name
            by_agent[name] = {"player_games": int(mine.sum()), "win_share": rate(float(share[mine].sum()), int(mine.sum()))}
    out["by_agent"] = by_agent
    rounds = np.array([g["rounds"] for g in games], dtype=np.int64)
    hist = {int(k): int(v) for k, v in zip(*np.unique(rounds, return_counts=True))} if G else {}
    out["rounds"] = {**_summary(rounds), "histogram": hist}
    out["decisions"] = _summary(np.array([g["steps"] for g in games], dtype=np.int64))
    return out


# ----------------------------------------------------------------------------- run
def run_balance(
    agent_names: Sequence[str] | None = None,
    players: Sequence[int] | None = None,
    games: int = DEFAULT_GAMES,
    seed: int = 1,
    workers: int | None = None,
    out: str | Path | None = None,
    progress: bool = True,
    chunk_sets: int | None = None,
    cards: str | Path | None = None,
    ray_address: str | None = None,
    rules: dict[str, Any] | None = None,
    game: str = DEFAULT_GAME,
) -> dict[str, Any]:
    """Play ``games`` games at every player count and return (and write to ``out``) the figures.

    ``agent_names``/``players`` default to ``default_agents(game)``/``default_players(game)``.
    ``chunk_sets`` defaults to a batch small enough that two workers share the work of a
    few hundred games. ``cards``: a card file to play with instead of the packaged one (a
    game with card files only; the game's card error if it is malformed). ``rules``: rules
    config fields to play instead of the defaults (a ``ValueError`` if one is not allowed).
    """
    spec = _spec(game)
    agent_names = default_agents(game) if agent_names is None else agent_names
    players = default_players(game) if players is None else players
    names = validate_balance(agent_names, players, games, game)
    if int(seed) < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed}")
    cf = spec.card_files
    if cards is not None and cf is None:
        raise ValueError(spec.no_card_files())
    card_file = str(cf.resolve(cards).resolve()) if cards is not None else None
    db = (cf.load(card_file) if card_file is not None else cf.default()) if cf is not None else None
    # the file as it is now: the run keeps a copy (CARDS_PLAYED), so that the file may be
    # edited on while the run still reads (``balance targets``)
    played = Path(card_file).read_bytes() if card_file is not None else None
    observer = _hook(spec, "OBSERVER")
    own = _hook(spec, "figures")
    t0 = time.perf_counter()
    per = []
    for P in players:
        cs = chunk_sets or max(1, min(16, -(-int(games) // (int(P) * 4))))
        res = run_tournament(
            names, int(P), int(games), int(seed), workers=workers, progress=progress,
            chunk_sets=cs, observer=observer, label=f"balance {P} players", ray_address=ray_address, cards=card_file,
            rules=rules, game=game,
        )
        generic = generic_figures(res.games, int(P))
        fig = own(res.games, int(P), {"cards": db, "generic": generic}) if own is not None else generic
        fig["elapsed"] = res.elapsed
        per.append(fig)
    settings: dict[str, Any] = {
        "game": game,
        "agents": names,
        "players": [int(p) for p in players],
        "games_requested": int(games),
        "seed": int(seed),
        "workers": workers,
    }
    if cf is not None:
        # a packaged edition by its name, so that the run reads anywhere; a file by its path
        settings["cards"] = (str(cards) if card_file and cf.resolve(cards) != Path(str(cards)) else card_file) \
            or "packaged cards.json"
        settings["cards_digest"] = db.digest
        if settings["cards"] != card_file:
            played = None  # a packaged edition: nothing to keep
    if rules:
        settings["rules"] = dict(rules)
    result = {"settings": settings, "elapsed": time.perf_counter() - t0, "by_players": per}
    if out is not None:
        write_balance(result, Path(out), played)
    return result


def result_game(result: dict[str, Any]) -> str:
    """The game of a balance result (results written before the game was recorded: the first game)."""
    return (result.get("settings") or {}).get("game") or DEFAULT_GAME


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


def sections(f: dict[str, Any]) -> list[str]:
    """The generic figures of one player count as Markdown lines (a game's ``markdown`` hook
    receives this renderer to place them in its report)."""
    P = f["players"]
    r, d = f["rounds"], f["decisions"]
    L = [f"{f['games']} games: {f['games_single_winner']} with a single winner, {f['games_shared_win']} shared, "
         f"{f['games_no_winner']} without a winner. Length: {r['mean']:.2f} rounds on average "
         f"(median {r['median']:.0f}, {r['min']}–{r['max']}); {d['mean']:.1f} decisions.", "",
         "| seat | win share [95% CI] |" + (" turn position (0 = first player) | win share [95% CI] |"
                                             if "position_win" in f else ""),
         "|---|---|" + ("---|---|" if "position_win" in f else "")]
    for k in range(P):
        row = f"| {k} | {_ci(f['seat_win'][k])} |"
        if "position_win" in f:
            row += f" {k} | {_ci(f['position_win'][k])} |"
        L.append(row)
    L += ["", f"Fair share: {_pct(1 / P)}.", "", "| agent | player-games | win share [95% CI] |", "|---|---|---|"]
    L += [f"| {name} | {a['player_games']} | {_ci(a['win_share'])} |" for name, a in f["by_agent"].items()]
    return L


def _title(game: str) -> str:
    try:
        return _spec(game).title
    except ValueError:
        return game


def generic_markdown(result: dict[str, Any]) -> str:
    """The report of a game without its own: settings, then per player count ``sections``."""
    s = result["settings"]
    L = [f"# Balance report: {_title(result_game(result))}", "",
         f"- agents (seats drawn from this list, rotated over duplicate deals): {', '.join(s['agents'])}",
         f"- player counts: {', '.join(map(str, s['players']))}; games per count: {s['games_requested']} requested "
         "(rounded up to whole duplicate sets)",
         f"- seed: {s['seed']}; run time: {result['elapsed']:.1f} s",
         *([f"- rules (instead of the defaults): {', '.join(f'{k}={v}' for k, v in s['rules'].items())}"]
           if s.get("rules") else []),
         "", "A win share counts a shared win as 1/k for each of k co-winners. Intervals are Wilson 95%.", ""]
    for f in result["by_players"]:
        L += [f"## {f['players']} players", "", *sections(f), ""]
    return "\n".join(L) + "\n"


def markdown(result: dict[str, Any]) -> str:
    """``balance.md``: the game's report (its ``markdown`` hook) or the generic one."""
    spec = _spec(result_game(result))
    own = _hook(spec, "markdown")
    text = own(result, sections) if own is not None else generic_markdown(result)
    if _hook(spec, "plots") is None:  # the generic plots (generic_plots), beside the report
        text = text.rstrip("\n") + "\n\n![seat advantage](seat_position.png) ![game length](game_length.png)\n"
    return text


#: The copy of the card file a run played, next to its report (``result_cards`` reads it
#: when the file it names is gone or was edited since).
CARDS_PLAYED = "cards-played.json"


def write_balance(result: dict[str, Any], out: Path, cards_played: bytes | None = None) -> list[Path]:
    """``balance.json``, ``balance.md``, the game's plots (``plots`` hook) and, for a run of
    a card file, a copy of it (``cards_played``, the file's bytes as played) in ``out``. A
    file an earlier run wrote there and this one does not (another player count's plot) is
    removed, so the folder holds one run; ``balance.json`` lists the run's files."""
    out.mkdir(parents=True, exist_ok=True)
    earlier = _files_of_run(out)
    paths = []
    p = out / "balance.md"
    p.write_text(markdown(result), encoding="utf-8")
    paths.append(p)
    plots = _hook(_spec(result_game(result)), "plots")
    paths += plots(result, out) if plots is not None else generic_plots(result, out)
    if cards_played is not None:
        p = out / CARDS_PLAYED
        p.write_bytes(cards_played)
        paths.append(p)
    p = out / "balance.json"
    names = sorted({q.name for q in paths} | {p.name})
    p.write_text(json.dumps({**_clean(result), "files": names}, indent=1) + "\n", encoding="utf-8")
    paths.insert(0, p)
    for name in sorted(earlier - set(names)):
        (out / name).unlink(missing_ok=True)
    return paths


def generic_plots(result: dict[str, Any], out: Path) -> list[Path]:
    """The plots of a game without its own (``plots`` hook), from the generic figures: the
    win share by turn position (by seat where the records name no first player) with the
    fair share, and the game length, per player count. Needs matplotlib (the eval extra)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    per = [f for f in result["by_players"] if f.get("position_win") or f.get("seat_win")]
    paths: list[Path] = []
    if per:
        fig, ax = plt.subplots(figsize=(7, 4))
        width = 0.8 / len(per)
        by_position = all(f.get("position_win") for f in per)
        for i, f in enumerate(per):
            P = f["players"]
            wins = f["position_win"] if by_position else f["seat_win"]
            x = np.arange(P) + (i - (len(per) - 1) / 2) * width
            rate_ = np.array([w["rate"] or 0.0 for w in wins])
            lo = np.array([w["ci"][0] for w in wins])
            hi = np.array([w["ci"][1] for w in wins])
            ax.bar(x, rate_, width, yerr=[rate_ - lo, hi - rate_], capsize=2, label=f"{P} players")
            ax.hlines(1 / P, x[0] - width / 2, x[-1] + width / 2, colors=f"C{i}", linestyles="dotted")
        ax.set_xticks(range(max(f["players"] for f in per)))
        ax.set_xlabel("turn position (0 = the first player)" if by_position else "seat")
        ax.set_ylabel("win share, shared wins as 1/k (dotted: 1 / players)")
        ax.set_title(f"{_title(result_game(result))}: seat advantage")
        ax.legend()
        fig.tight_layout()
        paths.append(out / "seat_position.png")
        fig.savefig(paths[-1], dpi=110)
        plt.close(fig)
    lengths = [f for f in result["by_players"] if (f.get("rounds") or {}).get("histogram")]
    if lengths:
        fig, ax = plt.subplots(figsize=(7, 4))
        for f in lengths:
            h = {int(k): v for k, v in f["rounds"]["histogram"].items()}
            xs = np.array(sorted(h))
            ax.plot(xs, np.array([h[k] for k in xs], float) / f["games"], marker="o", label=f"{f['players']} players")
        ax.set_xlabel("rounds")
        ax.set_ylabel("share of games")
        ax.set_title(f"{_title(result_game(result))}: game length")
        ax.legend()
        ax.grid(alpha=0.3)
        fig.tight_layout()
        paths.append(out / "game_length.png")
        fig.savefig(paths[-1], dpi=110)
        plt.close(fig)
    return paths


#: What a run writes: its report, its plots and the copy of its card file.
_RUN_SUFFIXES = (".json", ".md", ".png", ".svg", ".pdf")


def _files_of_run(out: Path) -> set[str]:
    """The files an earlier run wrote in ``out`` (its ``balance.json``'s list; plain names
    only), or none."""
    try:
        files = json.loads((out / "balance.json").read_text(encoding="utf-8")).get("files")
    except (OSError, ValueError, AttributeError, RecursionError):
        return set()
    if not isinstance(files, list):
        return set()
    return {f for f in files if isinstance(f, str) and f == Path(f).name and Path(f).suffix in _RUN_SUFFIXES}



def print_summary(result: dict[str, Any], console=None) -> None:
    """The game's terminal summary (``print_summary`` hook), else an overview table."""
    from rich.console import Console
    from rich.table import Table

    own = _hook(_spec(result_game(result)), "print_summary")
    if own is not None:
        return own(result, console)
    console = console or Console()
    t = Table(title=f"Balance overview: {_title(result_game(result))}")
    for col in ("players", "games", "mean rounds", "no single winner", "first seat win share", "1/players"):
        t.add_column(col, justify="right")
    for f in result["by_players"]:
        first = (f.get("position_win") or f["seat_win"])[0]
        t.add_row(str(f["players"]), str(f["games"]), f"{f['rounds']['mean']:.2f}", _pct(f["share_no_single_winner"]),
                  _ci(first), _pct(1 / f["players"]))
    console.print(t)
    t = Table(title="Win share by agent (shared wins count 1/k)")
    t.add_column("agent")
    for f in result["by_players"]:
        t.add_column(f"{f['players']} players", justify="right")
    for name in dict.fromkeys(n for f in result["by_players"] for n in f["by_agent"]):
        t.add_row(name, *(_ci(f["by_agent"][name]["win_share"]) if name in f["by_agent"] else "—"
                          for f in result["by_players"]))
    console.print(t)


# ----------------------------------------------------------------------------- reading, diff, targets
def load_result(path: str | Path) -> dict[str, Any]:
    """A ``balance.json`` (or the directory holding it); ``ValueError`` naming the problem."""
    path = Path(path)
    if path.is_dir():
        path = path / "balance.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ValueError(f"{path}: no such file; give a balance.json written by `ripmarket balance`") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path}: cannot read it: {exc}") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: malformed JSON at line {exc.lineno}: {exc.msg}") from None
    except RecursionError:
        raise ValueError(f"{path}: nested too deeply to be a balance report") from None
    if not isinstance(data, dict) or not isinstance(data.get("by_players"), list) or not data["by_players"]:
        raise ValueError(f"{path}: not a balance report (expected an object with a non-empty 'by_players' list)")
    game = data.get("settings", {}).get("game", DEFAULT_GAME) if isinstance(data.get("settings"), dict) else None
    from ripmarket_env.games import ids

    if not isinstance(game, str) or game not in ids():
        raise ValueError(f"{path}: settings.game {str(game)[:40]!r} is not a registered game; allowed: {', '.join(ids())}")
    for f in data["by_players"]:
        if not isinstance(f, dict) or not isinstance(f.get("players"), int) or not isinstance(f.get("games"), int):
            raise ValueError(f"{path}: a 'by_players' entry lacks players/games")
    if (path.parent / CARDS_PLAYED).is_file():  # the copy of the card file the run played
        data["cards_copy"] = str(path.parent / CARDS_PLAYED)
    check = _hook(_spec(game), "check_result")
    if check is not None:
        check(data, path)
    else:
        for f in data["by_players"]:
            if not isinstance(f.get("seat_win"), list) or not isinstance(f.get("by_agent"), dict):
                raise ValueError(f"{path}: a 'by_players' entry lacks seat_win/by_agent")
    return data




def _change(a: dict, b: dict) -> dict[str, Any]:
    p = two_proportion_p(a["wins"], a["n"], b["wins"], b["n"])
    d = (b["rate"] - a["rate"]) if a["rate"] is not None and b["rate"] is not None else None
    return {"a": a, "b": b, "change": d, "p": p, "significant": p is not None and p < ALPHA}


def settings_differences(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    """The settings two runs were made with that differ (``rules (A: defaults, B:
    mode=ffa)``), the cards, agents, player counts, games and seed included: what a
    comparison of the two measures besides what was changed on purpose."""
    sa, sb = a.get("settings", {}), b.get("settings", {})

    def shown(s: dict, key: str) -> str:
        v = s.get(key)
        if key == "rules":
            return ", ".join(f"{k}={x}" for k, x in v.items()) if v else "defaults"
        return ", ".join(map(str, v)) if isinstance(v, list) else ("—" if v is None else str(v))

    keys = ("rules", "cards", "agents", "players", "games_requested", "seed")
    return [f"{k} (A: {shown(sa, k)}, B: {shown(sb, k)})" for k in keys
            if (sa.get(k) or None) != (sb.get(k) or None) and not (k == "cards" and sa.get("cards_digest")
                                                                   == sb.get("cards_digest") is not None)]


def diff_results(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    """Compare two runs of one game: the game's ``diff_results`` hook, else per common player
    count the win share of every seat (position) and agent, A, B, the change B - A and its
    two-proportion p-value."""
    ga, gb = result_game(a), result_game(b)
    if ga != gb:
        raise ValueError(f"the runs are of two games (A: {ga}, B: {gb}); compare runs of one game")
    own = _hook(_spec(ga), "diff_results")
    if own is not None:
        d = own(a, b)
        d.setdefault("game", ga)
        return d
    fa = {f["players"]: f for f in a["by_players"]}
    fb = {f["players"]: f for f in b["by_players"]}
    common = sorted(set(fa) & set(fb))
    if not common:
        raise ValueError(f"the runs share no player count (A: {sorted(fa)}, B: {sorted(fb)})")
    rows = []
    for P in common:
        A, B = fa[P], fb[P]
        key = "position_win" if "position_win" in A and "position_win" in B else "seat_win"
        rows.append({"players": P, "games": [A["games"], B["games"]], "by": key,
                     "seats": [_change(x, y) for x, y in zip(A[key], B[key])],
                     "agents": {n: _change(A["by_agent"][n]["win_share"], B["by_agent"][n]["win_share"])
                                for n in A["by_agent"] if n in B["by_agent"]},
                     "rounds": [A["rounds"]["mean"], B["rounds"]["mean"]]})
    return {"game": ga, "a": a.get("settings", {}), "b": b.get("settings", {}), "by_players": rows, "alpha": ALPHA}


def _chg(c: dict) -> str:
    if c["change"] is None:
        return "—"
    p = c["p"]
    text = f"{100 * c['change']:+.1f} pts ({'p<0.0001' if p < 1e-4 else f'p={p:.2g}'})"
    return f"**{text}**" if c["significant"] else text


def diff_markdown(d: dict[str, Any], names: tuple[str, str] = ("A", "B")) -> str:
    own = _hook(_spec(d["game"]), "diff_markdown")
    if own is not None:
        return own(d, names)
    L = ["# Balance comparison", "", f"- A: {names[0]} (seed {d['a'].get('seed', '?')})",
         f"- B: {names[1]} (seed {d['b'].get('seed', '?')})", "",
         f"Changes are B − A with the two-sided two-proportion z-test; **bold** when p < {d['alpha']}.", ""]
    for row in d["by_players"]:
        what = "turn position" if row["by"] == "position_win" else "seat"
        L += [f"## {row['players']} players ({row['games'][0]} vs {row['games'][1]} games)", "",
              f"Mean rounds: {row['rounds'][0]:.2f} → {row['rounds'][1]:.2f}.", "",
              f"| {what} or agent | win share A | B | change |", "|---|---|---|---|"]
        L += [f"| {k} | {_ci(c['a'])} | {_ci(c['b'])} | {_chg(c)} |" for k, c in enumerate(row["seats"])]
        L += [f"| {n} | {_ci(c['a'])} | {_ci(c['b'])} | {_chg(c)} |" for n, c in row["agents"].items()]
        L.append("")
    return "\n".join(L) + "\n"


def print_diff(d: dict[str, Any], console=None) -> None:
    own = _hook(_spec(d["game"]), "print_diff")
    if own is not None:
        return own(d, console)
    from rich.console import Console
    from rich.table import Table

    console = console or Console()
    for row in d["by_players"]:
        t = Table(title=f"{row['players']} players: win share B − A (p < {d['alpha']} marked \u2691)")
        for col in ("seat or agent", "A", "B", "change"):
            t.add_column(col, justify="left" if col == "seat or agent" else "right")
        for k, c in [*enumerate(row["seats"]), *row["agents"].items()]:
            t.add_row(str(k), _ci(c["a"]), _ci(c["b"]), _chg(c).replace("**", "") + (" \u2691" if c["significant"] else ""))
        console.print(t)


def generic_targets(a: dict[str, Any], b: dict[str, Any] | None = None, names: tuple[str, str] = ("A", "B")) -> str:
    """Seat fairness, the promise every game makes: each turn position's (else seat's) win
    share has a 95% interval that holds the fair share 1/players."""
    runs = [(names[0], a)] + ([(names[1], b)] if b is not None else [])
    L = ["| players | position | fair share | " + " | ".join(f"{n}: win share [95% CI], met" for n, _ in runs) + " |",
         "|---|---|---|" + "---|" * len(runs)]
    per = [{f["players"]: f for f in r["by_players"]} for _, r in runs]
    for P in sorted(set.union(*(set(x) for x in per))):
        for k in range(P):
            cells = []
            for x in per:
                f = x.get(P)
                if f is None:
                    cells.append("—")
                    continue
                w = (f.get("position_win") or f["seat_win"])[k]
                met = w["rate"] is not None and w["ci"][0] <= 1 / P <= w["ci"][1]
                cells.append(f"{_ci(w)}, {'yes' if met else 'NO'}")
            L.append(f"| {P} | {k} | {_pct(1 / P)} | " + " | ".join(cells) + " |")
    return "\n".join(L)


def targets(a: dict[str, Any], b: dict[str, Any] | None = None, names: tuple[str, str] = ("A", "B")) -> str:
    """The game's balance targets measured in run ``a`` (``b`` beside it): its ``targets`` hook,
    else ``generic_targets``."""
    game = result_game(a)
    if b is not None and result_game(b) != game:
        raise ValueError(f"the runs are of two games (A: {game}, B: {result_game(b)}); compare runs of one game")
    own = _hook(_spec(game), "targets")
    return (own or generic_targets)(a, b, names)
