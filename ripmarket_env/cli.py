"""The ``ripmarket`` command line.

One function per command, registered on the typer app ``app`` at the bottom of the
file; add new commands the same way.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

app = typer.Typer(
    name="ripmarket",
    help="R.I.P. Market: rules engine, environments and tools.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


@app.callback()
def main() -> None:
    """R.I.P. Market: rules engine, environments and tools."""


def fail(message: str, code: int = 2) -> None:
    """Print a one-line error to stderr and exit with ``code`` (no traceback)."""
    typer.echo(f"error: {' '.join(message.split())}", err=True)
    raise typer.Exit(code)


def cards(
    markdown: bool = typer.Option(False, "--markdown", help="Print Markdown instead of terminal tables."),
    write: Optional[Path] = typer.Option(
        None, "--write", metavar="PATH", help="Write the Markdown reference to PATH (e.g. docs/CARDS.md)."
    ),
    file: Optional[Path] = typer.Option(None, "--file", metavar="PATH", help="Use this card file instead of the packaged cards.json."),
    custom_deck: bool = typer.Option(False, "--custom-deck", help="Allow deck sizes other than 64 Living / 32 Shadow."),
) -> None:
    """Show the full card reference (rulebook section 11)."""
    from ripmarket_env.cards.loader import CardDataError, load_cards
    from ripmarket_env.cards.reference import render_cards_markdown, render_cards_rich

    try:
        db = load_cards(file, custom_deck=custom_deck)
    except CardDataError as exc:
        fail(str(exc))
    if write is not None:
        try:
            write.write_text(render_cards_markdown(db), encoding="utf-8")
        except OSError as exc:
            fail(f"cannot write {write}: {exc}")
        typer.echo(f"wrote {write}", err=True)
        return
    if markdown:
        typer.echo(render_cards_markdown(db), nl=False)
        return
    from rich.console import Console

    Console().print(render_cards_rich(db))


app.command("cards")(cards)


def tournament(
    agents_: str = typer.Option(..., "--agents", metavar="LIST", help="Registered agent names, comma-separated (e.g. random,greedy)."),
    players: int = typer.Option(6, "--players", metavar="N", help="Seats per game (2-10)."),
    games: int = typer.Option(2000, "--games", metavar="N", help="Games to play (rounded up to whole duplicate sets of N-players games)."),
    seed: int = typer.Option(1, "--seed", metavar="S", help="Tournament seed: lineups, deals and agent seeds."),
    out: Path = typer.Option(Path("reports/tournament"), "--out", metavar="DIR", help="Directory for report.md, results.json, games.csv and plots."),
    workers: Optional[int] = typer.Option(None, "--workers", metavar="N", help="Worker processes (default: CPU count); results do not depend on it."),
    chunk_sets: int = typer.Option(16, "--chunk-sets", metavar="N", help="Duplicate sets per engine batch."),
    quiet: bool = typer.Option(False, "--quiet", help="No progress bar."),
) -> None:
    """Play agents against each other (seat rotation, duplicate deals); rate them with OpenSkill."""
    from eval.report import print_table
    from eval.tournament import MAX_PLAYERS, MIN_PLAYERS, agent_registry, run_tournament, validate

    registered = agent_registry().names

    names = [n.strip() for n in agents_.split(",") if n.strip()]
    known = ", ".join(registered())
    if not names:
        fail(f"--agents {agents_!r} names no agent; allowed: {known}")
    bad = [n for n in names if n not in registered()]
    if bad:
        fail(f"--agents: unknown agent {bad[0]!r}; allowed: {known}")
    if not MIN_PLAYERS <= players <= MAX_PLAYERS:
        fail(f"--players {players} is not allowed; allowed: integers from {MIN_PLAYERS} to {MAX_PLAYERS}")
    if games < 1:
        fail(f"--games {games} is not allowed; allowed: positive integers")
    if seed < 0:
        fail(f"--seed {seed} is not allowed; allowed: non-negative integers")
    if workers is not None and workers < 1:
        fail(f"--workers {workers} is not allowed; allowed: positive integers")
    if chunk_sets < 1:
        fail(f"--chunk-sets {chunk_sets} is not allowed; allowed: positive integers")
    try:
        validate(names, players, games)
    except ValueError as exc:
        fail(f"--agents: {exc}")
    if out.exists() and not out.is_dir():
        fail(f"--out {out} exists and is not a directory")
    result = run_tournament(
        names, players, games, seed, workers=workers, out=out, progress=not quiet, chunk_sets=chunk_sets
    )
    print_table(result)


app.command("tournament")(tournament)


def replay(
    file: Path = typer.Argument(..., metavar="FILE", help="A game record (JSON lines), e.g. from env.save_record()."),
    god: bool = typer.Option(False, "--god", help="Show every hand and the face-down cards."),
) -> None:
    """Replay a game record, check it against the engine, and print it round by round."""
    from rich.console import Console
    from rich.table import Table

    from ripmarket_env.record import RecordError
    from ripmarket_env.record import replay as replay_record
    from ripmarket_env.render import card_label, seat_name, shadow_label

    console = Console()
    actions: list[str] = []
    state = {"round": 1, "header": None}

    def hands(eng) -> None:
        r = eng.state[0]
        for q in range(eng.num_players):
            living = [card_label(eng.cards, d) + (f" x{k}" if k > 1 else "")
                      for d, k in enumerate(r["hand"][q]) if k > 0]
            shadow = [shadow_label(eng.cards, s) + (f" x{k}" if k > 1 else "")
                      for s, k in enumerate(r["shadow_hand"][q]) if k > 0]
            console.print(f"  [dim]{seat_name(q)}: {', '.join(living) or '-'} | Shadow: {', '.join(shadow) or '-'}[/dim]")

    def round_start(eng) -> None:
        console.rule(f"Round {state['round']}")
        if god and not eng.terminated[0]:
            hands(eng)

    def on_line(n: int, obj: dict, eng) -> None:
        if "format" in obj:
            state["header"] = obj
            rules = ", ".join(f"{k}={v}" for k, v in obj["rules"].items() if v is not None)
            console.print(f"[bold]R.I.P. Market record[/bold] {file}: seed {obj['seed']}, {obj['players']} players ({rules})")
            round_start(eng)
        elif "step" in obj:
            desc = obj["desc"]
            kind, arg = eng.actions.decode(obj["action"])
            if (not god and kind == "card" and bool(eng.cards.living_face_down[arg])
                    and " replaces " not in desc):
                desc = f"{seat_name(obj['seat'])} plays a card face-down"
            console.print(f"  {obj['step']:>4}  {desc}")
        elif "round" in obj:
            title = f"Round {obj['round']} resolved" + (" (epilogue, display only)" if obj.get("epilogue") else "")
            if obj.get("unobserved"):
                console.print(f"[yellow]{title}: every decision was forced; no summary kept[/yellow]")
            else:
                t = Table(title=f"{title} · rule: {obj['rule']}", title_justify="left")
                for col in ("seat", "score", "damage", "HP after"):
                    t.add_column(col, justify="right" if col != "seat" else "left")
                for q, (sc, dm, hp) in enumerate(zip(obj["scores"], obj["damage"], obj["hp"])):
                    mark = " *" if q == obj["first_player"] else ""
                    t.add_row(seat_name(q) + mark, "-" if sc is None else str(sc), str(dm),
                              f"{hp}" if hp > 0 else "0 (Ghost)")
                console.print(t)
            state["round"] = obj["round"] + 1
            if not eng.terminated[0]:
                round_start(eng)
        elif "result" in obj:
            res = obj["result"]
            winners = ", ".join(seat_name(q) for q in res["winners"]) or "-"
            rewards = "  ".join(f"{seat_name(q)} {x:+.3f}" for q, x in enumerate(res["rewards"]))
            console.rule("Game over")
            console.print(f"[bold]Winner(s):[/bold] {winners}")
            console.print(f"Rewards: {rewards}")

    try:
        eng = replay_record(file, on_line=on_line)
    except RecordError as exc:
        fail(str(exc), code=1)
    status = "finished" if eng.terminated[0] else "not finished (the record stops mid-game)"
    console.print(f"[green]record verified[/green]: {int(eng.state[0]['steps'])} decisions, game {status}")


app.command("replay")(replay)


if __name__ == "__main__":  # pragma: no cover
    app()
