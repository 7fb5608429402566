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


if __name__ == "__main__":  # pragma: no cover
    app()
