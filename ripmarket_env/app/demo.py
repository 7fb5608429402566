"""``ripmarket demo``: a short tournament of the agent zoo, or games printed round by round.

:func:`run_tournament_demo` (the default of ``ripmarket demo``) plays a short seeded
tournament of every heuristic style, the random agent and the search agent at a small
budget (``eval.tournament``: duplicate deals, seat rotation, worker processes), prints
the leaderboard and writes the full report. :func:`run_demo` (``ripmarket demo --rounds``)
plays a few seeded games and prints each resolved round.

Each agent sees only what its seat sees (``Engine.observe`` and ``Engine.legal_mask``);
the round printout is the omniscient referee's view of each resolved round.
"""

from __future__ import annotations

import numpy as np
from rich.console import Console
from rich.table import Table

def _round_table(spec, engine, line: dict, title: str) -> Table:
    """A record's round line as a table: a row per seat, a column per per-seat list of the
    line (R.I.P. Market: cards, targets, Shadow cards, scores, damage, HP)."""
    P = engine.num_players
    cols = [k for k, v in line.items() if isinstance(v, list) and len(v) == P and k != "log"]
    t = Table(title=title, title_justify="left", show_edge=False, pad_edge=False)
    t.add_column("seat", justify="right")
    for k in cols:
        t.add_column(k.replace("_", " "))
    for q in range(P):
        cells = []
        for k in cols:
            v = line[k][q]
            cells.append("—" if v is None or v == [] else ", ".join(map(str, v)) if isinstance(v, list) else str(v))
        t.add_row(str(q), *cells)
    return t


def play_game(num_players: int, seed: int, console: Console, agent: str = "random", game: str | None = None) -> dict:
    """Play one game (one agent per seat) and print every round (the game's record lines,
    the referee's view); returns the result."""
    import agents
    from ripmarket_env.games import get, ids

    spec = get(game or ids()[0])
    eng = spec.make_engine(spec.make_rules(num_players), 1, **spec.records.default_engine_kwargs())
    eng.reset([seed])
    seats = [agents.make_seeded(agent, 1000 * seed + q, game=spec.id) for q in range(num_players)]
    log = spec.records.game_log(eng, 0)
    log.items(eng.events(0))
    console.rule(f"{spec.title}: {num_players} players, seed {seed}, {agent} agents")
    steps = rounds = 0
    while not eng.terminated[0]:
        p = int(eng.current_player()[0])
        eng.step(np.array([seats[p].act(eng.observe()[0], eng.legal_mask()[0])]))
        steps += 1
        for kind, item in log.items(eng.events(0)):
            if kind != "round":
                continue
            line = spec.records.round_line(eng, item)
            rounds += 1
            extra = f" — rule: {line['rule']}" if isinstance(line.get("rule"), str) else ""
            table = _round_table(spec, eng, line, f"Round {rounds}{extra}")
            if len(table.columns) > 1:
                console.print(table)
            else:  # nothing per seat in the game's round line: its events in words
                console.print(f"[bold]Round {rounds}{extra}[/]: " + "; ".join(line.get("log", [])))
    result = spec.records.result_line(eng)["result"]
    winners, rewards = result["winners"], [float(x) for x in eng.rewards()[0]]
    console.print(
        f"[bold]winner{'s' if len(winners) != 1 else ''}: "
        f"{', '.join(f'seat {q}' for q in winners) or 'none'}[/] after {rounds} rounds, "
        f"{steps} agent steps; "
        f"rewards: {', '.join(f'{x:+.3f}' for x in rewards)}"
    )
    return {"players": num_players, "seed": seed, "winners": winners, "rewards": rewards,
            "rounds": rounds, "steps": steps}


def run_demo(players=(4, 6), seeds=(1,), console: Console | None = None, game: str | None = None) -> list[dict]:
    """One game per player count and seed."""
    console = console or Console()
    return [play_game(P, s, console, game=game) for P in players for s in seeds]


def demo_agents(game: str | None = None) -> tuple[str, ...]:
    """The zoo of a game's demo tournament: the random agent, its heuristics and its search."""
    import agents
    from ripmarket_env.games import get, ids

    profile = agents.game_agents(get(game or ids()[0]).id)  # loading the game registers its agents
    return tuple(dict.fromkeys(("random", *profile.heuristics, *((profile.search,) if profile.search else ()))))


DEMO_PLAYERS = 6
DEMO_GAMES = 240
DEMO_BUDGET = 128


def run_tournament_demo(
    out="reports/demo",
    games: int = DEMO_GAMES,
    players: int = DEMO_PLAYERS,
    budget: int = DEMO_BUDGET,
    agents=None,
    seed: int = 1,
    workers: int | None = None,
    console: Console | None = None,
    progress: bool = True,
    game: str | None = None,
):
    """Play a short tournament of a game's zoo (``demo_agents``; its search at ``budget``
    simulations per decision), print the leaderboard and the report's location; returns
    the ``TournamentResult``."""
    from pathlib import Path

    from eval.report import print_table
    from eval.tournament import run_tournament

    import agents as zoo
    from ripmarket_env.games import get, ids

    spec = get(game or ids()[0])
    console = console or Console(width=None if Console().is_terminal else 120)
    names = list(agents if agents is not None else demo_agents(spec.id))
    search = zoo.game_agents(spec.id).search
    kwargs = {search: {"budget": int(budget)}} if search in names else None
    console.print(
        f"[bold]Demo tournament[/] of {spec.title}: {', '.join(names)}; {players} players, {games} games"
        + (f", {search} at {budget} simulations per decision" if kwargs else "")
    )
    result = run_tournament(
        names, players, games, seed, workers=workers, out=Path(out), progress=progress,
        chunk_sets=max(1, -(-games // (players * 2 * (workers or 2)))), agent_kwargs=kwargs, label="demo",
        game=spec.id,
    )
    print_table(result, console)
    console.print(f"[bold]report:[/] {Path(out) / 'report.md'}")
    return result
