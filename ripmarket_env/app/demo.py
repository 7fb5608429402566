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

from ripmarket_env.games.ripmarket.cards.registry import RULES
from ripmarket_env.games.ripmarket import Engine, RulesConfig
from ripmarket_env.games.ripmarket.actions import ActionTable

RULE_NAMES = {v: k for k, v in RULES.items()}


def _round_table(eng: Engine, cards: dict, round_num: int, title: str) -> Table:
    r = eng.state[0]
    db = eng.cards
    t = Table(title=title, title_justify="left", show_edge=False, pad_edge=False)
    for col in ("seat", "HP", "Ghost", "card (value)", "score", "damage"):
        t.add_column(col, justify="left" if col in ("card (value)", "Ghost") else "right")
    def ghost(q: int) -> str:
        if r["alive"][q]:
            return ""
        return "[bold red]dies[/]" if r["death_round"][q] == round_num else "Ghost"

    for q in range(eng.num_players):
        d = cards.get(q)
        card = f"{db.living[d].name} ({db.living[d].value})" if d is not None else "—"
        competed = bool(r["last_competed"][q])
        dmg = int(r["last_damage"][q])
        t.add_row(
            str(q), str(int(r["hp"][q])), ghost(q), card,
            str(int(r["last_score"][q])) if competed else "—",
            f"[bold red]{dmg}[/]" if dmg else "0",
        )
    return t


def play_game(num_players: int, seed: int, console: Console, agent: str = "random") -> dict:
    """Play one game (one agent per seat) and print every resolved round; returns the result."""
    import agents

    eng = Engine(RulesConfig(num_players=num_players), batch_size=1)
    eng.reset([seed])
    seats = [agents.make(agent, seed=1000 * seed + q) for q in range(num_players)]
    play = ActionTable(eng.cards.n_living, eng.cards.n_shadow).ranges["card"]
    console.rule(f"{num_players} players, seed {seed}, {agent} agents")
    cards: dict[int, int] = {}  # the design each seat has on the table this round
    steps = rounds = 0
    while not eng.terminated[0]:
        r = eng.state[0]
        round_before = int(r["round_num"])
        # Cards already on the table; a card placed by the resolving step is the action itself.
        cards.update({q: int(d) for q, d in enumerate(r["played"][:num_players]) if d >= 0})
        hands = r["hand"][:num_players].copy()
        p = int(eng.current_player()[0])
        a = seats[p].act(eng.observe()[0], eng.legal_mask()[0])
        if a in play:
            cards[p] = a - play.start
        eng.step(np.array([a]))
        steps += 1
        r = eng.state[0]
        if r["done"]:  # a finished game keeps its table
            cards.update({q: int(d) for q, d in enumerate(r["played"][:num_players]) if d >= 0})
        if int(r["round_num"]) != round_before or r["done"]:
            for q in range(num_players):  # a forced play: the only design in hand
                if r["last_competed"][q] and q not in cards and np.count_nonzero(hands[q]) == 1:
                    cards[q] = int(np.flatnonzero(hands[q])[0])
            rule = RULE_NAMES.get(int(r["last_rule"]), "?")
            rounds += 1
            console.print(_round_table(eng, cards, round_before, f"Round {rounds} — rule: {rule}"))
            cards = {}
    r = eng.state[0]
    winners = [q for q in range(num_players) if r["winners"][q]]
    rewards = [float(x) for x in eng.rewards()[0]]
    console.print(
        f"[bold]winner{'s' if len(winners) != 1 else ''}: "
        f"{', '.join(f'seat {q}' for q in winners) or 'none'}[/] after {rounds} rounds, "
        f"{steps} agent steps; "
        f"rewards: {', '.join(f'{x:+.3f}' for x in rewards)}"
    )
    return {"players": num_players, "seed": seed, "winners": winners, "rewards": rewards,
            "rounds": rounds, "steps": steps}


def run_demo(players=(4, 6), seeds=(1,), console: Console | None = None) -> list[dict]:
    """One game per player count and seed."""
    console = console or Console()
    return [play_game(P, s, console) for P in players for s in seeds]


#: The zoo of the demo tournament: the random agent, every heuristic style and search.
DEMO_AGENTS = ("random", "greedy", "survivor", "shark", "hoarder", "trickster", "search")
DEMO_PLAYERS = 6
DEMO_GAMES = 240
DEMO_BUDGET = 128


def run_tournament_demo(
    out="reports/demo",
    games: int = DEMO_GAMES,
    players: int = DEMO_PLAYERS,
    budget: int = DEMO_BUDGET,
    agents=DEMO_AGENTS,
    seed: int = 1,
    workers: int | None = None,
    console: Console | None = None,
    progress: bool = True,
):
    """Play a short tournament of the zoo (search at ``budget`` simulations per decision),
    print the leaderboard and the report's location; returns the ``TournamentResult``."""
    from pathlib import Path

    from eval.report import print_table
    from eval.tournament import run_tournament

    console = console or Console(width=None if Console().is_terminal else 120)
    names = list(agents)
    kwargs = {"search": {"budget": int(budget)}} if "search" in names else None
    console.print(
        f"[bold]Demo tournament[/]: {', '.join(names)}; {players} players, {games} games, "
        f"search budget {budget} simulations per decision"
    )
    result = run_tournament(
        names, players, games, seed, workers=workers, out=Path(out), progress=progress,
        chunk_sets=max(1, -(-games // (players * 2 * (workers or 2)))), agent_kwargs=kwargs, label="demo",
    )
    print_table(result, console)
    console.print(f"[bold]report:[/] {Path(out) / 'report.md'}")
    return result
