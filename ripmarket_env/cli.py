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


if __name__ == "__main__":  # pragma: no cover
    app()
