"""The terminal game of every game: ``ripmarket play --game G``.

One person plays one seat against the bots of the game's zoo; everything on screen is
drawn from the game's own table description (``GameSpec.describe_table``,
``ripmarket_env.core.table``) and story (``GameSpec.tell``) through one session,
``ripmarket_env.app.session.TableSession``, so every registered game plays the same way,
a game without those hooks included (their generic defaults): the table at each of your
decisions (public facts and cards, every seat's public counters and flags, your own
cards), the numbered choices with one prompt, ``Choose 1-N:``, for every game, what
happened since your last decision in the game's words, and an end screen with the
standings (place, and how each player lost or finished). Lines keep to 100 columns and
wrap between words (rich). The record of the game can be saved and replayed
(``ripmarket replay FILE``). The web page plays through the same session
(``ripmarket serve``, ``ripmarket_env.app.server``).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from pathlib import Path

__all__ = ["TERMINAL_WIDTH", "ask_number", "play_terminal", "result_view", "story_view", "table_view"]

#: The terminal game's lines never exceed this width (rich wraps to it).
TERMINAL_WIDTH = 100

#: The style of a story line by its kind (the games' event kinds; an unknown kind is plain).
_KIND_STYLE = {
    "damage": "bold red", "hit": "bold red", "death": "bold red", "deflect": "magenta",
    "haunt": "magenta", "trigger": "magenta", "exorcise": "magenta", "reveal": "magenta",
    "score": "cyan", "scores": "cyan", "round_start": "dim", "resolve": "dim", "game_over": "bold",
    "note": "yellow", "place": "bold",
}


def escape(text: str) -> str:
    from rich.markup import escape as _escape

    return _escape(text)


def _console(console=None):
    from rich.console import Console

    if console is not None:
        if console.width > TERMINAL_WIDTH:
            console.width = TERMINAL_WIDTH
        return console
    c = Console(highlight=False)
    return Console(highlight=False, width=TERMINAL_WIDTH) if c.width > TERMINAL_WIDTH else c


def _save_record(session, path: Path, overwrite: bool, out: Callable[[str], None]) -> Path:
    if overwrite:
        return session.recorder.save(path)
    for k in range(1000):
        target = path if k == 0 else path.with_name(f"{path.stem}-{k}{path.suffix}")
        try:
            saved = session.recorder.save(target, overwrite=False)
        except FileExistsError:
            continue
        if k:
            out(f"{path} appeared during the game and is kept as it is.")
        return saved
    raise FileExistsError(f"no free file name next to {path}")


# ------------------------------------------------------------------------------ the terminal game of every game
def _player_cell(session, seat: dict):
    from rich.text import Text

    who = Text(seat["name"], style="bold yellow" if seat["you"] else "bold")
    who.append(" (you)" if seat["you"] else f" · {session.controllers[seat['seat']]}",
               style="yellow" if seat["you"] else "")
    return who


def _fits(console, table) -> bool:
    """Whether ``table`` shows every word whole at the console's width: drawn there, rich
    cuts no word short with an ellipsis (it does when the columns cannot all fit)."""
    import io

    from rich.console import Console

    probe = Console(file=io.StringIO(), width=console.width, color_system=None, highlight=False)
    probe.print(table)
    return "\u2026" not in probe.file.getvalue()


def table_view(session, d: dict, console, seen: set | None = None) -> None:
    """The table from the game's description (``core.table``): title, public facts and
    cards, every seat with its public counters and flags (in a narrow terminal one seat a
    paragraph instead of a table), then your own cards. ``seen``: the table cards' texts
    shown in full before (this game's earlier decisions); a text told again is cut to its
    name, the part before its first ": " (``t`` shows the table whole)."""
    from rich.rule import Rule
    from rich.table import Table
    from rich.text import Text

    turn = f" · {d['turn_word']} {d['turn']}" if d["turn"] is not None else ""
    console.print()
    console.print(Rule(f"[bold]{escape(d['title'])}[/] · {d['players']} players{turn}", style="yellow"))
    for line in d["info"]:
        console.print(escape(line))
    for zone in d["table"]:
        cards = [(f"[{c['slot']}] " if c["slot"] is not None else "") + _brief(c["text"], seen) for c in zone["cards"]]
        inline = f"{zone['name']}: " + " · ".join(cards)
        if len(inline) <= console.width:
            console.print(f"[bold]{escape(zone['name'])}:[/] {escape(' · '.join(cards))}")
        else:
            console.print(f"[bold]{escape(zone['name'])}:[/]")
            for text in cards:
                console.print(f"  {escape(text)}")
    keys = list(dict.fromkeys(k for s in d["seats"] for k in s["counters"]))
    t = Table(box=None, pad_edge=False, show_edge=False, header_style="bold", expand=False, padding=(0, 1))
    t.add_column("", width=1)
    t.add_column("player", no_wrap=True)
    for k in keys:
        numeric = all(isinstance(s["counters"].get(k, 0), int) for s in d["seats"])
        t.add_column(k, justify="right" if numeric else "left")
    t.add_column("", style="magenta")
    for s in d["seats"]:
        t.add_row(">" if s["deciding"] else "", _player_cell(session, s),
                  *[escape(str(s["counters"].get(k, ""))) for k in keys], escape(", ".join(s["flags"])))
    if _fits(console, t):
        console.print(t)
    else:  # a narrow terminal: a seat a paragraph, every word whole
        for s in d["seats"]:
            line = Text(">" if s["deciding"] else " ", style="bold")
            line.append(" ").append_text(_player_cell(session, s))
            for k in keys:
                if str(s["counters"].get(k, "")):
                    line.append(f" · {k}: {s['counters'][k]}")
            if s["flags"]:
                line.append(" · " + ", ".join(s["flags"]), style="magenta")
            console.print(line)
    if not d["over"]:
        console.print("[dim](> decides now)[/]")
    zones = list(dict.fromkeys(c["zone"] for c in d["hand"]))
    for zone in zones:
        console.print(f"[bold]Your {escape(zone)}:[/]" if zone == "hand" else f"[bold]{escape(zone[:1].upper() + zone[1:])}:[/]")
        for c in d["hand"]:
            if c["zone"] == zone:
                count = f" x{c['count']}" if c["count"] > 1 else ""
                console.print(f"  - [bold]{escape(c['name'])}[/]{count}" + (f": {escape(c['text'])}" if c["text"] else ""))


def _brief(text: str, seen: set | None) -> str:
    """``text``, or its name alone (before its first ": ") when it was shown whole before."""
    if seen is None:
        return text
    if text in seen and ": " in text:
        return text.split(": ", 1)[0]
    seen.add(text)
    return text


def choices_view(choices: list[dict], console) -> None:
    from rich.table import Table
    from rich.text import Text

    g = Table.grid(padding=(0, 1))
    g.add_column(no_wrap=True)
    g.add_column()
    for c in choices:
        g.add_row(f"  [bold yellow]{c['number']})[/]", Text(c["text"]))
    console.print(g)


def decision_view(session, d: dict, console, moves: Sequence[dict] = (), seen: set | None = None) -> None:
    """The table (``seen``: see ``table_view``), then what happened since your last decision
    (``moves``: right above the choices, so that a short terminal still shows it when you
    are asked), then the choices."""
    table_view(session, d, console, seen)
    if moves:
        console.print("[bold]Since your last decision:[/]")
        story_view(moves, console)
    console.print()
    console.print(f"[bold yellow]{escape(d['prompt'] or 'Your decision')}[/]")
    choices_view([{"number": i + 1, **c} for i, c in enumerate(d["choices"])], console)


def story_view(lines: list[dict], console) -> None:
    """What happened, one line each, as your seat may know it (the game's story hook)."""
    for m in lines:
        style = _KIND_STYLE.get(m["kind"], "")
        when = f"[dim]\\[{m['turn_word']} {m['turn']}][/] " if m.get("turn") is not None else ""
        text = escape(m["text"])
        console.print(f"  {when}" + (f"[{style}]{text}[/]" if style else text))


def result_view(session, res: dict, console) -> None:
    """The end screen: the winners, your verdict, how the game ended, and the standings."""
    from rich.table import Table

    winners = ", ".join(session.label(q) for q in res["winners"]) or "nobody"
    verdict = "You win!" if res["you_won"] and len(res["winners"]) == 1 else (
        "You share the win." if res["you_won"] else "You lose.")
    span = f" after {res['turns']} {res['turn_word']}(s)" if res["turns"] is not None else ""
    console.print()
    console.print(f"[bold yellow]GAME OVER{span}.[/] Winner(s): {escape(winners)}. [bold]{verdict}[/] "
                  f"{escape(res['end'][:1].upper() + res['end'][1:])}.")
    t = Table(title="Standings", title_justify="left", header_style="bold", padding=(0, 1))
    for col in ("place", "player", "how"):
        t.add_column(col, no_wrap=col != "how")
    for row in res["standings"]:
        t.add_row(row["place_text"] + (" (winner)" if row["winner"] else ""), escape(row["name"]), escape(row["how"]))
    if _fits(console, t):
        console.print(t)
        return
    console.print("[bold]Standings[/]")  # a narrow terminal: a player a paragraph
    for row in res["standings"]:
        place = row["place_text"] + (" (winner)" if row["winner"] else "")
        console.print(f"  {escape(place)} · {escape(row['name'])} · {escape(row['how'])}")


def ask_number(n: int, input_fn, console, show, again=lambda: None) -> int | None:
    """Ask ``Choose 1-N:`` until a number from 1 to n (None: the person quit or input
    closed); ``t`` shows the table again (``show()``), ``?`` says what may be entered, any
    other answer is refused (quoted up to 40 characters) and the choices shown again
    (``again()``)."""
    while True:
        try:
            raw = input_fn(f"Choose 1-{n}: ")
        except EOFError:
            raw = None
        if raw is None:
            console.print("\nInput closed: the game stops here.")
            return None
        text = raw.strip().lower()
        if text in ("q", "quit", "exit"):
            console.print("You left the game.")
            return None
        if text in ("t", "table"):
            show()
            continue
        # decimal digits only (int() refuses "²", which isdigit() takes) and few of them
        # (int() refuses 4,300 digits and more)
        if text.isdecimal() and len(text) <= 9 and 1 <= int(text) <= n:
            return int(text)
        if text in ("?", "h", "help"):
            console.print(f"Enter the number of your choice (1 to {n}); t shows the table again, q leaves the game.",
                          markup=False)
            again()
            continue
        said = raw.strip() or "(nothing)"
        said = said if len(said) <= 40 else said[:40] + "..."  # a pasted page is not echoed whole
        console.print(f"{said} is not a choice here. Enter a number from 1 to {n} (t: the table, q: leave):",
                      markup=False)
        again()


def play_terminal(game, players: int | None = None, seat: int = 0, opponents: Sequence[str] | None = None,
              seed: int | None = None, save: str | Path | None = None, rules: dict | None = None,
              input_fn: Callable[[str], str] = input, console=None, overwrite: bool = True,
              engine_kwargs: dict | None = None, refused=None):
    """Play one game of any registered game in the terminal (``ripmarket play --game G``);
    returns the ``TableSession`` (finished, or stopped with ``q``).

    Drawn from the game's table description and story hook: the table at each of your
    decisions, the numbered choices and the same ``Choose 1-N:`` prompt for every game,
    what happened since, and an end screen with the standings. ``console``: a
    ``rich.console.Console`` (default: the terminal, at most ``TERMINAL_WIDTH`` columns).
    ``engine_kwargs``: e.g. the ``cards`` to play with; ``refused``: the game's bots that
    cannot play them, with the reason.
    Raises ``session.SetupError`` for bad settings before anything is played; with
    ``overwrite=False`` an existing ``save`` file is never replaced (``NAME-1.jsonl``...).
    """
    from ripmarket_env.app.session import TableSession

    from ripmarket_env.core.jitcache import engine_cached
    from ripmarket_env.games import get

    console = _console(console)
    try:
        cold = not engine_cached(get(game))
    except KeyError:
        cold = False  # an unknown game: TableSession says so
    if cold:  # only on a first run after an install (or a change to the engine)
        console.print("Setting up the game (the first run compiles the rules engine, about a minute)...")
    s = TableSession(game, players, seat, opponents, seed=seed, rules=rules, engine_kwargs=engine_kwargs,
                     refused=refused)
    seats = ", ".join(f"{s.name(q)}: " + ("you" if q == s.seat else f"{s.controllers[q]} ({s.level(q).split(':')[0]})")
                      for q in range(s.players))
    # The seed deals every hidden card: a seed the program drew stays secret until the game
    # ends (as on the web page); a seed you chose makes a practice game and is shown.
    dealt = f"practice seed {s.seed}" if s.practice else "a secret seed (shown at the end)"
    console.print(f"[bold]{escape(s.spec.title)}[/] · {s.players} players · {dealt} · {escape(seats)}")
    console.print("At each decision enter the number of your choice (q quits, t shows the table again, "
                  "with every card's text).")
    shown = 0
    seen: set = set()  # the table cards' texts told in full so far
    try:
        while True:
            d = s.table()
            if s.over:
                story_view(s.moves[shown:], console)
                table_view(s, d, console)
                result_view(s, s.result(), console)
                break
            decision_view(s, d, console, s.moves[shown:], seen)
            shown = len(s.moves)
            n = ask_number(len(d["choices"]), input_fn, console, lambda: decision_view(s, d, console),
                           lambda: choices_view([{"number": i + 1, **c} for i, c in enumerate(d["choices"])], console))
            if n is None:
                break
            s.act(d["choices"][n - 1]["action"])
    finally:
        if not s.practice:
            console.print(f"This game's seed was {s.seed} (--seed {s.seed} deals it again).", markup=False,
                          soft_wrap=True)
        if save is not None:
            path = _save_record(s, Path(save), overwrite, lambda text: console.print(text, markup=False))
            status = "finished" if s.over else "unfinished"
            console.print(f"Saved the game record ({status}) to {path}; replay it with: ripmarket replay {path}",
                          markup=False, soft_wrap=True)
    sys.stdout.flush()
    return s
