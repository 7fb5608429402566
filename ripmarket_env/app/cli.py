"""The ``ripmarket`` command line.

One function per command, registered on the typer app ``app`` at the bottom of the
file; add new commands the same way.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Optional

import typer

def _no_flag_placeholder() -> None:
    """Typer's rich help shows a ``<bool>`` value placeholder next to on/off flags
    (``--quiet <bool>``), which reads as if the flag took a value; flags show none."""
    try:
        from typer.core import TyperOption
    except ImportError:  # pragma: no cover - older typer
        return
    show = TyperOption.display_type_rich
    if getattr(show, "_no_flag_placeholder", False):
        return

    def display_type_rich(self, ctx):
        if getattr(self, "is_flag", False) and self.metavar is None:
            return None
        return show(self, ctx)

    display_type_rich._no_flag_placeholder = True
    TyperOption.display_type_rich = display_type_rich


_no_flag_placeholder()

from ripmarket_env.games import ids as _game_ids  # noqa: E402  (the registry's ids: no game is imported)
from ripmarket_env.core import DISTRIBUTION  # noqa: E402

#: ``--game``'s default, the first registered game, and the games ``--help`` lists.
DEFAULT_GAME = _game_ids()[0]
_GAMES_HELP = ", ".join(_game_ids())
_PLAYERS_HELP = "each game's range: `ripmarket games`"

app = typer.Typer(
    name=DISTRIBUTION,
    help="ripmarket: market card games (R.I.P. Market first; `ripmarket games` lists them): "
         "rules engines, environments, agents, tournaments and play.",
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


def game_spec(game: str | None):
    """The ``GameSpec`` of ``--game`` (``None``: the first registered game); fails (exit 2)
    naming the registered ids if there is no such game."""
    from ripmarket_env.games import get, ids

    game = DEFAULT_GAME if game is None else game
    if game not in ids():
        fail(f"--game {game!r} is not a registered game; allowed: {', '.join(ids())}")
    return get(game)


def check_out_file(option: str, path: Path | None) -> None:
    """Fail (exit 2) when ``path``, a file the command will write, exists as something else
    than a file: a folder, a device (a write would replace ``/dev/full`` with a file) or a
    named pipe (a write would wait for a reader)."""
    if path is None or not path.exists() or path.is_file():
        return
    from ripmarket_env.core.jsonfile import why_not_a_file

    fail(f"{option} {path} {why_not_a_file(path)}; give a file name")


#: A game count past this is a typo, not a plan: days of play, and its bookkeeping fills memory.
MAX_GAMES = 10_000_000
#: Worker processes: far more than any machine's cores.
MAX_WORKERS = 256


def check_int(option: str, value: int | None, lo: int, hi: int | None = None) -> None:
    """Fail (exit 2) naming ``option`` and the allowed range unless ``lo <= value <= hi``;
    ``None`` (an option left to its default) passes."""
    if value is None or (value >= lo and (hi is None or value <= hi)):
        return
    if hi is not None:
        allowed = f"integers from {lo} to {hi}"
    else:
        allowed = {0: "non-negative integers", 1: "positive integers"}.get(lo, f"integers >= {lo}")
    fail(f"{option} {value} is not allowed; allowed: {allowed}")


def cards(
    markdown: bool = typer.Option(False, "--markdown", help="Print Markdown instead of terminal tables."),
    write: Optional[Path] = typer.Option(
        None, "--write", metavar="PATH", help="Write the Markdown reference to PATH (e.g. docs/CARDS.md)."
    ),
    file: Optional[Path] = typer.Option(None, "--file", metavar="PATH", help="Use this card file instead of the game's packaged cards.json."),
    custom_deck: bool = typer.Option(False, "--custom-deck", help="Allow deck sizes other than the rules' (R.I.P. Market: 64 Living / 32 Shadow)."),
    game: Optional[str] = typer.Option(None, "--game", metavar="GAME", help="The game whose cards to show (default: the first registered; `ripmarket games` lists them)."),
) -> None:
    """Show a game's full card reference (docs/CARDS.md, docs/games/<game>/CARDS.md), from its card file."""
    check_out_file("--write", write)
    spec = game_spec(game)
    hook = spec.extras.get("card_reference")
    if hook is None:
        fail(f"--game {spec.id}: {spec.title} has no card reference (its cards are not data)")
    try:
        text, table = hook(file, custom_deck=custom_deck)
    except ValueError as exc:  # every game's CardDataError is a ValueError naming the file and field
        fail(str(exc))
    if write is not None:
        try:
            write.write_text(text, encoding="utf-8")
        except OSError as exc:
            fail(f"cannot write {write}: {exc}")
        typer.echo(f"wrote {write}", err=True)
        return
    if markdown:
        typer.echo(text, nl=False)
        return
    from rich.console import Console
    from rich.markdown import Markdown

    Console().print(table if table is not None else Markdown(text))


app.command("cards")(cards)


def tournament(
    agents_: str = typer.Option(..., "--agents", metavar="LIST", help="Registered agent names, comma-separated (e.g. random,greedy); `ripmarket agents --game G` lists a game's."),
    players: int = typer.Option(6, "--players", metavar="N", help=f"Seats per game ({_PLAYERS_HELP})."),
    game: str = typer.Option(DEFAULT_GAME, "--game", metavar="GAME", help=f"The game: {_GAMES_HELP}."),
    match: int = typer.Option(1, "--match", metavar="N", help="Match play: every table plays N games, each after the first started by the previous game's winner (the game's rule for co-winners; games whose reset takes a first player)."),
    games: int = typer.Option(2000, "--games", metavar="N", help="Games to play (rounded up to whole duplicate sets of N-players games)."),
    seed: int = typer.Option(1, "--seed", metavar="S", help="Tournament seed: lineups, deals and agent seeds."),
    out: Path = typer.Option(Path("reports/tournament"), "--out", metavar="DIR", help="Directory for report.md, results.json, games.csv and plots."),
    workers: Optional[int] = typer.Option(None, "--workers", metavar="N", help="Worker processes (default: CPU count); results do not depend on it."),
    chunk_sets: int = typer.Option(16, "--chunk-sets", metavar="N", help="Duplicate sets per engine batch."),
    quiet: bool = typer.Option(False, "--quiet", help="No progress bar."),
    ray_address: Optional[str] = typer.Option(
        None, "--ray", metavar="ADDRESS", envvar="RAY_ADDRESS", show_envvar=True,
        help="Play the games as Ray tasks: 'local' (a Ray instance on this machine), 'auto' (the cluster this "
        "machine joined with ray start) or a cluster address; same results as local workers (docs/SCALE_OUT.md).",
    ),
    cards_file: Optional[Path] = typer.Option(None, "--cards", metavar="FILE", help="Games with card files: play with this card file instead of the packaged cards (R.I.P. Market: `first-edition` names its packaged first edition)."),
    settings: list[str] = typer.Option(
        [], "--set", metavar="AGENT.KEY=VALUE",
        help="An agent's constructor argument, repeatable: e.g. --set search.budget=128 --set greedy.ghost_style=kingmaker.",
    ),
    mode: Optional[str] = typer.Option(
        None, "--mode", metavar="MODE",
        help="Games with modes, e.g. Black Market's teams (default; the sides rated as OpenSkill teams) or ffa (every seat for itself, rated by its place).",
    ),
) -> None:
    """Play agents against each other (seat rotation, duplicate deals); rate them with OpenSkill."""
    from eval.report import print_table
    from eval.tournament import agent_registry, run_tournament, validate

    spec = game_spec(game)

    def registered():
        return agent_registry().names(game)

    names = [n.strip() for n in agents_.split(",") if n.strip()]
    known = ", ".join(registered())
    if not names:
        fail(f"--agents {agents_!r} names no agent; allowed: {known}")
    bad = [n for n in names if n not in registered()]
    if bad:
        fail(f"--agents: unknown agent {bad[0]!r}; allowed: {known}")
    check_int("--players", players, spec.min_players, spec.max_players)
    check_int("--games", games, 1, MAX_GAMES)
    check_int("--seed", seed, 0)
    check_int("--workers", workers, 1, MAX_WORKERS)
    check_int("--chunk-sets", chunk_sets, 1)
    check_int("--match", match, 1)
    if match > 1 and "reset_options" not in (spec.extras or {}):
        fail(f"--match {match}: {spec.title} has no first-player reset, so no match play; allowed: --match 1")
    if cards_file is not None and spec.card_files is None:
        fail(f"--cards: {spec.no_card_files()}")
    modes = _check_mode(spec, mode)
    counts = (spec.extras or {}).get("player_counts")
    if counts and players not in counts:
        fail(f"--players {players} is not allowed for {game}; allowed: {', '.join(map(str, counts[:-1]))} or {counts[-1]}")
    rules = {"mode": mode or modes[0]} if modes else None
    try:
        spec.make_rules(players, **(rules or {}))
    except ValueError as exc:
        fail(f"--players {players} --mode {mode}: {exc}")
    try:
        validate(names, players, games, game)
    except ValueError as exc:
        fail(f"--agents: {exc}")
    if out.exists() and not out.is_dir():
        fail(f"--out {out} exists and is not a directory")
    agent_kwargs = _agent_settings(settings, names, game)
    _check_cards(cards_file, spec)
    _check_trained(names, cards_file, game)
    result = run_tournament(
        names, players, games, seed, workers=workers, out=out, progress=not quiet, chunk_sets=chunk_sets,
        agent_kwargs=agent_kwargs or None, cards=cards_file, ray_address=ray_address, game=game,
        match_games=match, rules=rules,
    )
    print_table(result)


def _agent_settings(items: list[str], names: list[str], game: str = DEFAULT_GAME) -> dict[str, dict]:
    """Parse ``--set AGENT.KEY=VALUE`` items (values: int, float or text) and check that each
    agent accepts them, failing with a message naming what is allowed."""
    from eval.tournament import agent_registry

    out: dict[str, dict] = {}
    for item in items:
        head, eq, value = item.partition("=")
        agent, dot, key = head.partition(".")
        if not eq or not dot or not agent or not key or not value:
            fail(f"--set {item!r} is not allowed; use AGENT.KEY=VALUE, e.g. search.budget=128")
        if agent not in names:
            fail(f"--set {item!r}: agent {agent!r} is not in --agents; allowed: {', '.join(names)}")
        for cast in (int, float):
            try:
                value = cast(value)
                break
            except ValueError:
                continue
        out.setdefault(agent, {})[key] = value
    for agent, kw in out.items():
        known = agent_registry().settings(agent, game=game)
        unknown = [k for k in kw if known is not None and k not in known]
        if unknown:
            fail(f"--set {agent}.{unknown[0]}: agent {agent!r} has no setting {unknown[0]!r}; its settings: "
                 + (", ".join(known) or "none"))
        for k, v in kw.items():  # a number where the parameter says so (its annotation or default)
            param = (known or {}).get(k)
            kinds = set(re.findall(r"[A-Za-z_]+", str(param.annotation))) if param is not None else set()
            default = None if param is None or param.default is param.empty else param.default
            kinds |= {type(default).__name__} if isinstance(default, (int, float)) and not isinstance(default, bool) else set()
            shown = "" if default is None else f" (default {default})"
            if "int" in kinds and "float" not in kinds and "str" not in kinds and not isinstance(v, int):
                fail(f"--set {agent}.{k}={v}: {k} is an integer{shown}")
            if "float" in kinds and "str" not in kinds and not isinstance(v, (int, float)):
                fail(f"--set {agent}.{k}={v}: {k} is a number{shown}")
        try:
            agent_registry().make(agent, game=game, **kw)
        except (TypeError, ValueError, KeyError) as exc:
            msg = exc.args[0] if isinstance(exc, KeyError) and exc.args else str(exc)
            fail(f"--set {', '.join(f'{agent}.{k}={v}' for k, v in kw.items())}: {msg}")
    return out


app.command("tournament")(tournament)


def agents_cmd(
    game: str = typer.Option(DEFAULT_GAME, "--game", metavar="GAME", help=f"The game whose agents to list: {_GAMES_HELP}."),
) -> None:
    """List a game's registered agents with a one-line description each."""
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    from eval.tournament import agent_registry

    game_spec(game)  # loading a game registers its agents
    from agents.policy import NEEDS_TORCH, card_conflict, without_torch

    reg = agent_registry()
    missing = without_torch(game)
    t = Table(title=f"Registered agents of {game} (use the names with --agents, --opponents or --agent)")
    t.add_column("name", no_wrap=True)
    t.add_column("description")
    for name in reg.names(game):
        why = missing.get(name) or card_conflict(name, None)  # a trained bot of other cards, with the reason
        why = why and (f" Not here: {why}." if why == NEEDS_TORCH else f" Cannot play the packaged cards: {why}")
        t.add_row(escape(name), escape(reg.describe(name, game) + (why or "")))
    Console().print(t)


app.command("agents")(agents_cmd)


def games_cmd() -> None:
    """List the registered games: id (for ripmarket_env.make), title, players, env names."""
    from rich.console import Console
    from rich.table import Table

    from ripmarket_env.games import registry

    t = Table(title="Registered games (ripmarket_env.make(id, num_players=...))")
    for col in ("id", "title", "players", "PettingZoo", "Gymnasium"):
        t.add_column(col, no_wrap=True)
    for spec in registry().values():
        counts = (spec.extras or {}).get("player_counts")
        players = ", ".join(str(x) for x in counts) if counts else f"{spec.min_players}-{spec.max_players}"
        t.add_row(spec.id, spec.title, players, spec.env_name, spec.gym_id)
    Console().print(t)


app.command("games")(games_cmd)


balance_app = typer.Typer(
    help="Balance for designers, for every registered game: win shares by seat, turn position and agent, game "
    "length, and each game's own figures (R.I.P. Market: play, win and Market take rates and damage per card, "
    "Ghost swings). `ripmarket balance diff A B` compares two runs; `ripmarket balance targets A` measures the "
    "game's promises.",
    no_args_is_help=False, add_completion=False,
)


@balance_app.callback(invoke_without_command=True)
def balance(
    ctx: typer.Context,
    players: Optional[str] = typer.Option(None, "--players", metavar="LIST", help="Player counts, comma-separated (default: the game's: 4,6,8 for R.I.P. Market; else its allowed counts, or its smallest, default and largest table)."),
    games: int = typer.Option(240, "--games", metavar="N", help="Games per player count (rounded up to whole duplicate sets)."),
    agents_: Optional[str] = typer.Option(
        None, "--agents", metavar="LIST",
        help="Registered agent names, comma-separated: the players whose games are analysed "
        "(default: the game's heuristics, `ripmarket agents --game G`; random for a game without any).",
    ),
    game: str = typer.Option(DEFAULT_GAME, "--game", metavar="GAME", help=f"The game: {_GAMES_HELP}."),
    seed: int = typer.Option(1, "--seed", metavar="S", help="Seed of the lineups, deals and agents."),
    out: Path = typer.Option(Path("reports/balance"), "--out", metavar="DIR", help="Directory for balance.md, balance.json and plots."),
    workers: Optional[int] = typer.Option(None, "--workers", metavar="N", help="Worker processes (default: CPU count); results do not depend on it."),
    cards_file: Optional[Path] = typer.Option(None, "--cards", metavar="FILE", help="Games with card files: play with this card file instead of the packaged cards (R.I.P. Market: `first-edition` names its packaged first edition)."),
    quiet: bool = typer.Option(False, "--quiet", help="No progress bar."),
    ray_address: Optional[str] = typer.Option(
        None, "--ray", metavar="ADDRESS", envvar="RAY_ADDRESS", show_envvar=True,
        help="Play the games as Ray tasks: 'local' (a Ray instance on this machine), 'auto' (the cluster this "
        "machine joined with ray start) or a cluster address; same results as local workers (docs/SCALE_OUT.md).",
    ),
    rule: Optional[list[str]] = typer.Option(
        None, "--rule", metavar="FIELD=VALUE",
        help="Play this rules-config field instead of its default (repeatable; the game's rules page), e.g. "
        "--rule ghost_phase=in_turn for R.I.P. Market or --rule mode=ffa for Black Market.",
    ),
) -> None:
    """Balance for designers: win shares by seat, position and agent, game length and the game's own figures."""
    if ctx.invoked_subcommand is not None:
        return
    from eval.balance import default_agents, default_players, print_summary, run_balance, validate_balance

    spec = game_spec(game)
    if players is None:
        counts = default_players(game)
    else:
        allowed = (spec.extras or {}).get("player_counts")
        counts = _int_list(players, "--players", *((0, None) if allowed else (spec.min_players, spec.max_players)))
        if allowed and any(p not in allowed for p in counts):
            fail(f"--players {players!r} is not allowed for {game}; allowed: {', '.join(map(str, allowed))}")
    if len(set(counts)) != len(counts):
        fail(f"--players {players!r} lists a player count twice; list each count once")
    names = default_agents(game) if agents_ is None else [n.strip() for n in agents_.split(",") if n.strip()]
    check_int("--games", games, 1, MAX_GAMES)
    check_int("--seed", seed, 0)
    check_int("--workers", workers, 1, MAX_WORKERS)
    try:
        validate_balance(names, counts, games, game)
    except ValueError as exc:
        fail(f"--{'players' if 'player count' in str(exc) else 'agents'}: {exc}")
    if out.exists() and not out.is_dir():
        fail(f"--out {out} exists and is not a directory")
    _check_cards(cards_file, spec)
    _check_trained(names, cards_file, game)
    rules = _rule_fields(rule or [], counts, spec)
    result = run_balance(names, counts, games, seed, workers=workers, out=out, progress=not quiet, cards=cards_file,
                         ray_address=ray_address, rules=rules or None, game=game)
    print_summary(result)
    typer.echo(f"report: {out / 'balance.md'}")


@balance_app.command("diff")
def balance_diff(
    a: Path = typer.Argument(..., metavar="A", help="balance.json of the first run (or its directory)."),
    b: Path = typer.Argument(..., metavar="B", help="balance.json of the second run (or its directory)."),
    out: Optional[Path] = typer.Option(None, "--out", metavar="FILE", help="Also write the comparison as Markdown here."),
) -> None:
    """Compare two balance runs of one game (e.g. two card files), flagging the significant changes (R.I.P.
    Market card by card; another game by seat, position and agent unless it has its own comparison)."""
    from eval.balance import diff_markdown, diff_results, load_result, print_diff, settings_differences

    try:
        ra, rb = load_result(a), load_result(b)
        d = diff_results(ra, rb)
    except ValueError as exc:
        fail(str(exc))
    differs = settings_differences(ra, rb)
    if differs:
        typer.echo("The runs differ in: " + "; ".join(differs))
    print_diff(d)
    if out is not None:
        check_out_file("--out", out)
        text = diff_markdown(d, (str(a), str(b)))
        if differs:
            text += "\n## Settings that differ\n\n" + "".join(f"- {x}\n" for x in differs)
        out.write_text(text, encoding="utf-8")
        typer.echo(f"comparison: {out}")


@balance_app.command("targets")
def balance_targets(
    a: Path = typer.Argument(..., metavar="A", help="balance.json of a run (or its directory)."),
    b: Optional[Path] = typer.Argument(None, metavar="B", help="A second run, shown next to A (e.g. after a card change)."),
    out: Optional[Path] = typer.Option(None, "--out", metavar="FILE", help="Also write the table as Markdown here."),
) -> None:
    """The game's promises measured in one run, or two side by side: R.I.P. Market's rulebook (blessing
    strings, stacked-Shadow counterplay, Shadow swings, play shares, win-rate differences, seat fairness);
    another game's own targets, or seat fairness (every turn position's win share against 1/players)."""
    from eval.balance import load_result, targets

    try:
        ra = load_result(a)
        rb = load_result(b) if b is not None else None
        md = targets(ra, rb, (str(a), str(b)))
    except ValueError as exc:  # the games' card errors are ValueErrors too
        fail(str(exc))
    typer.echo(md)
    if out is not None:
        check_out_file("--out", out)
        out.write_text(md + "\n", encoding="utf-8")
        typer.echo(f"targets: {out}")


app.add_typer(balance_app, name="balance")


def _check_cards(path: Optional[Path], spec) -> None:
    """Fail with the loader's one-line message when ``--cards FILE`` is not a valid card file
    of ``spec``'s game (or the game plays only its packaged cards)."""
    if path is None:
        return
    if spec.card_files is None:
        fail(f"--cards: {spec.no_card_files()}")
    try:
        spec.card_files.load(path)
    except spec.card_files.error as exc:
        fail(f"--cards: {exc}")


def _rule_value(item: str, raw: str):
    """The value of ``--rule FIELD=VALUE``: an integer, true/false, or the text itself. An
    integer longer than any rules field takes is refused here (Python's int() refuses 4,300
    digits and more with a ValueError of its own)."""
    raw = raw.strip()
    if raw.lstrip("-").isdecimal():  # what int() reads (isdigit() takes "²", which int() refuses)
        if len(raw) > 18:
            fail(f"--rule {item[:40]!r}...: an integer of {len(raw):,} digits; rules fields take small integers")
        return int(raw)
    return {"true": True, "false": False}.get(raw.lower(), raw)


def _rule_fields(items: list[str], counts: list[int], spec) -> dict:
    """``--rule FIELD=VALUE`` items as rules-config fields of ``spec``'s game (integers,
    true/false or text), checked by building the config at every player count."""
    RulesConfig = spec.rules_class

    out: dict = {}
    for item in items:
        key, sep, raw = item.partition("=")
        key = key.strip()
        if not sep or not key:
            fail(f"--rule {item!r}: expected FIELD=VALUE, e.g. ghost_phase=in_turn")
        if key == "num_players" or key not in RulesConfig.__dataclass_fields__:
            allowed = ", ".join(f for f in RulesConfig.__dataclass_fields__ if f != "num_players")
            fail(f"--rule {item!r}: {key!r} is not a rules field; allowed: {allowed}")
        out[key] = _rule_value(item, raw)
    for P in counts:
        try:
            RulesConfig(num_players=P, **out)
        except ValueError as exc:
            fail(f"--rule: {exc}")
    return out


def _check_trained(names: list[str], cards_file: Optional[Path], game: str = DEFAULT_GAME) -> None:
    """Fail with one line when a trained agent among ``names`` cannot play the cards in play
    (a checkpoint trained on another card edition names both), before any game starts."""
    from agents.checkpoint import CheckpointError
    from eval.tournament import _make_agent

    from ripmarket_env.games import get

    cards = None
    if cards_file is not None:
        cards = get(game).card_files.load(cards_file)
    for name in dict.fromkeys(names):
        try:
            _make_agent(name, 0, None, cards, game)
        except CheckpointError as exc:
            fail(f"--agents {name}: {exc}")


def _int_list(text: str, option: str, lo: int, hi: int | None = None) -> list[int]:
    """Parse "2,4,6" into [2, 4, 6], failing with a message on anything else."""
    try:
        vals = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        vals = []
    if not vals or any(v < lo or (hi is not None and v > hi) for v in vals):
        allowed = f"integers from {lo} to {hi}" if hi is not None else f"integers >= {lo}"
        fail(f"{option} {text!r} is not allowed; give a comma-separated list of {allowed}")
    return vals


def bench(
    ctx: typer.Context,
    as_json: bool = typer.Option(False, "--json", help="Print the report as one JSON object."),
    suite: str = typer.Option(
        "all", "--suite", metavar="SUITE",
        help="engine (compiled random play), env (AEC env vs texas_holdem_v4, gym env, vector env), all "
        "(engine and env), train (a training config's learner steps/s, --config) or bot (milliseconds per "
        "decision of one game on one core, --agents).",
    ),
    players: Optional[str] = typer.Option(None, "--players", metavar="LIST", help="Player counts, comma-separated (default: the game's smallest, default, middle and largest table, e.g. 2,4,6,10 for R.I.P. Market; bot suite: every count of the game, each in each of its modes)."),
    game: str = typer.Option(DEFAULT_GAME, "--game", metavar="GAME", help=f"The game to measure: {_GAMES_HELP} (every suite but train; one JSON schema for every game)."),
    batch: str = typer.Option(
        "1,256,4096", "--batch", metavar="LIST", help="Engine suite: batch sizes (games at once), comma-separated."
    ),
    num_envs: str = typer.Option(
        "64,1024", "--num-envs", metavar="LIST", help="Env suite: vector env sizes (games at once), comma-separated."
    ),
    seconds: float = typer.Option(2.0, "--seconds", metavar="S", help="Timed seconds per configuration."),
    config: Path = typer.Option(
        Path("configs/ripmarket/fast_6p.yaml"), "--config", metavar="FILE", help="Train suite: the training config to measure."
    ),
    rollouts: int = typer.Option(12, "--rollouts", metavar="N", help="Train suite: rollouts (and updates) to run."),
    backend: Optional[str] = typer.Option(None, "--backend", metavar="NAME", help="Train suite: sb3 or rllib instead of the config's backend (the same PPO settings and league)."),
    env_runners: Optional[int] = typer.Option(None, "--env-runners", metavar="N", help="Train suite, backend rllib: rllib.num_env_runners instead of the config's (0: the driver samples)."),
    agents_: Optional[str] = typer.Option(None, "--agents", metavar="LIST", help="Bot suite: agent names or checkpoint files, comma-separated (default: the game's bench bots, its trained bot, a heuristic and its search, e.g. ppo-lookahead,ppo,greedy,search,search-ppo for R.I.P. Market), timed at every table of the game (each count, and each mode where the game has modes) or at --players."),
    decisions: int = typer.Option(200, "--decisions", metavar="N", help="Bot suite: decisions timed per agent and table."),
    peers: bool = typer.Option(False, "--peers", help="Engine suite: also run the game (its default table, or the first of --players, at the largest --batch) alternated in one process with OpenSpiel's C++ evaluate_bots on its card games and Pgx's Leduc Hold'em at the same batch, where installed (a peer that is not is listed as skipped)."),
    peer_games: Optional[str] = typer.Option(None, "--peer-games", metavar="LIST", help="With --peers: OpenSpiel game strings, comma-separated (default: its card games: bridge, hearts, spades, ...; 'none' for no OpenSpiel game)."),
    rounds: int = typer.Option(3, "--rounds", metavar="N", help="With --peers: alternated rounds (one --seconds slice per contender each)."),
    out: Optional[Path] = typer.Option(None, "--out", metavar="FILE", help="Also write the JSON report to FILE."),
    plot: Optional[Path] = typer.Option(None, "--plot", metavar="FILE", help="Engine suite: also draw the report as a chart (.png, .svg or .pdf; matplotlib, the eval extra): agent steps per CPU-second at each table and batch without and with observations, and with --peers ours against each peer with the targets' lines."),
) -> None:
    """Measure steps per second: the engine under random legal play (without and with
    observations) and the environments (AEC env against PettingZoo's texas_holdem_v4, the
    single-agent gym env, the vector env) with random opponents; with --suite train,
    learner steps per second of a training config end to end (rollouts against its
    league and PPO updates) and where the time goes; with --suite bot, the milliseconds a
    bot takes to decide one move of one game on one CPU core (the web page's and the bot
    API's wait), at every table of the game. An option the suite does not read (--batch
    with --suite train, --rounds without --peers) is refused, not ignored."""
    check_out_file("--out", out)
    check_out_file("--plot", plot)
    suites = {"engine": ("engine",), "env": ("env",), "all": ("engine", "env"), "train": ("train",), "bot": ("bot",)}
    if suite not in suites:
        fail(f"--suite {suite!r} is not allowed; allowed: {', '.join(suites)}")
    if (peers or peer_games is not None) and "engine" not in suites[suite]:
        fail(f"--peers and --peer-games are not allowed with --suite {suite}; allowed with: engine, all")
    _refuse_unused_bench_options(ctx, suite, suites, peers)
    if suite == "bot":
        _bench_bot(game, players, agents_, decisions, as_json, out)
        return
    if suite == "train":
        _bench_train(config, rollouts, as_json, out, backend, env_runners)
        return
    spec = game_spec(game)
    from ripmarket_env.app.bench import default_players

    players_given = players is not None
    if players is None:
        players = ",".join(str(p) for p in default_players(spec))
    ps = _int_list(players, "--players", spec.min_players, spec.max_players)
    counts = (spec.extras or {}).get("player_counts")
    if counts and any(p not in counts for p in ps):
        fail(f"--players {players!r} is not allowed for {game}; allowed: {', '.join(map(str, counts))}")
    bs = _int_list(batch, "--batch", 1, 1 << 20)
    ns = _int_list(num_envs, "--num-envs", 1, 1 << 20)
    if not seconds > 0:
        fail(f"--seconds {seconds} is not allowed; give a positive number of seconds")
    if rounds < 1:
        fail(f"--rounds {rounds} is not allowed; give an integer >= 1")
    if plot is not None:
        from ripmarket_env.app.benchplot import plot_problem

        problem = plot_problem(plot)
        if problem:
            fail(problem)
    os_games = None
    if peer_games is not None:
        os_games = [] if peer_games.strip() == "none" else [g.strip() for g in peer_games.split(",") if g.strip()]
        try:
            import pyspiel
        except ImportError:
            pyspiel = None
        if pyspiel is not None:
            have = sorted(g.short_name for g in pyspiel.registered_games())
            bad = [g for g in os_games if g.split("(")[0] not in have]
            if bad:
                fail(f"--peer-games {','.join(bad)!r} is not an OpenSpiel game here; allowed: {', '.join(have)} (or none)")
    from rich.console import Console

    from eval.progress import Progress
    from ripmarket_env.app import bench as B
    from ripmarket_env.app import envbench as E

    run = suites[suite]
    total = (2 * len(ps) * len(bs) if "engine" in run else 0) + (E.configs_count(ps, ns) if "env" in run else 0)
    err = Console(stderr=True)
    with Progress(total, "compiling / loading kernels", transient=True) as progress:

        def advance(label: str) -> None:
            progress.describe(label)
            progress.advance(1)

        if "engine" in run:
            report = B.run_bench(ps, bs, seconds, on_config=advance, game=game)
            if peers:
                from ripmarket_env.app import peers as PE

                P0 = ps[0] if players_given else spec.default_players
                report["peers"] = PE.run_peers(game, P0, max(bs), seconds, rounds, os_games, on_slice=progress.describe)
        else:
            report = {"environment": B.environment()}
        report["suite"] = suite
        if "env" in run:
            report["env"] = E.run_env_bench(ps, ns, seconds, on_config=advance, game=game)
            report["environment"]["load_average_end"] = B.environment()["load_average"]
    text = B.to_json(report)
    _write_report(text, out, err)
    if as_json:
        typer.echo(text)
    else:
        console = Console()
        if "engine" in run:
            console.print(B.render_rich(report))
            if "peers" in report:
                from ripmarket_env.app import peers as PE

                console.print(PE.render_rich(report["peers"]))
        if "env" in run:
            console.print(E.render_rich(report["env"]))
    if plot is not None:  # after the report: a chart that cannot be written loses no figure
        from ripmarket_env.app.benchplot import write

        try:
            write(report, plot)
        except OSError as exc:
            fail(f"cannot write {plot}: {exc}")
        err.print(f"wrote {plot}")


app.command("bench")(bench)

#: The parts of ``bench`` (engine, env, train, bot) that read each option; ``--suite``,
#: ``--json`` and ``--out`` serve every suite.
_BENCH_OPTION_USERS = {
    "players": ("engine", "env", "bot"), "game": ("engine", "env", "bot"), "batch": ("engine",),
    "num_envs": ("env",), "seconds": ("engine", "env"), "config": ("train",), "rollouts": ("train",),
    "backend": ("train",), "env_runners": ("train",), "agents_": ("bot",), "decisions": ("bot",),
    "rounds": ("engine",), "plot": ("engine",),
}


def _refuse_unused_bench_options(ctx, suite: str, suites: dict, peers: bool) -> None:
    """A usage error for an option given on the command line that ``--suite`` does not
    read (``--batch`` with ``--suite train``, ``--rounds`` without ``--peers``), rather than
    a report that silently leaves it out."""

    def given(name: str) -> bool:
        source = ctx.get_parameter_source(name)
        return source is not None and source.name != "DEFAULT"

    flags = {p.name: p.opts[0] for p in ctx.command.params}
    run = set(suites[suite])
    for name, users in _BENCH_OPTION_USERS.items():
        if given(name) and not run & set(users):
            allowed = [k for k, v in suites.items() if set(v) & set(users)]
            hint = " (the train suite plays the game and table of --config)" if suite == "train" and name in (
                "game", "players") else ""
            fail(f"{flags[name]} is not allowed with --suite {suite}; allowed with: {', '.join(allowed)}{hint}")
    for name in ("rounds", "peer_games"):
        if given(name) and not peers:
            fail(f"{flags[name]} is read only with --peers; give --peers too, or leave {flags[name]} out")


def _write_report(text: str, out: Optional[Path], err) -> None:
    if out is None:
        return
    try:
        out.write_text(text + "\n", encoding="utf-8")
    except OSError as exc:
        fail(f"cannot write {out}: {exc}")
    err.print(f"wrote {out}")


def _suite_report(suite: str, result: dict, render, as_json: bool, out: Optional[Path], err) -> None:
    """A bench suite's report under its name with the machine's environment: JSON (to
    ``out`` too) or ``render(result)`` in the terminal."""
    from rich.console import Console

    from ripmarket_env.app import bench as B

    text = B.to_json({"suite": suite, "environment": B.environment(), suite: result})
    _write_report(text, out, err)
    if as_json:
        typer.echo(text)
    else:
        Console().print(render(result))


def _bench_bot(game: str, players: Optional[str], agents_: Optional[str], decisions: int, as_json: bool,
               out: Optional[Path]) -> None:
    """``bench --suite bot``: ``eval.latency.run_latency``."""
    spec = game_spec(game)
    from eval.latency import default_agents, render_rich, run_latency

    ps = None if players is None else _int_list(players, "--players", spec.min_players, spec.max_players)
    counts = (spec.extras or {}).get("player_counts")
    if ps is not None and counts and not set(ps) <= set(counts):
        fail(f"--players {players!r} is not allowed for {game}; allowed: {', '.join(map(str, counts))}")
    if not 1 <= decisions <= 100_000:
        fail(f"--decisions {decisions} is not allowed; give 1 to 100000")
    from agents.checkpoint import CheckpointError

    names = [n.strip() for n in (agents_ or ",".join(default_agents(game))).split(",") if n.strip()]
    if not names:
        import agents

        fail(f"--agents: {agents_!r} names no agent; allowed: a checkpoint file (.zip) or one of "
             f"{', '.join(agents.names(game))}")
    from eval.latency import make_bots

    try:  # before the progress bar starts: an unknown name, a bot of other cards, a broken checkpoint
        bots = make_bots(names, game)
    except (CheckpointError, ValueError, KeyError) as exc:
        fail(f"--agents: {exc}")
    from rich.console import Console

    from eval.progress import Progress

    err = Console(stderr=True)
    from eval.latency import game_tables

    with Progress(len(names) * len(game_tables(game, ps)), "bot latency", transient=True) as progress:

        def advance(label: str) -> None:
            progress.describe(label)
            progress.advance(1)

        result = run_latency(names, ps, decisions, game=game, on_config=advance, bots=bots)
    _suite_report("bot", result, render_rich, as_json, out, err)


def _bench_train(config: Path, rollouts: int, as_json: bool, out: Optional[Path], backend: Optional[str] = None,
                 env_runners: Optional[int] = None) -> None:
    """``bench --suite train``: ``train.throughput.train_bench`` on ``config``."""
    if rollouts < 1:
        fail(f"--rollouts {rollouts} is not allowed; give at least 1")
    if env_runners is not None and not 0 <= env_runners <= 1024:
        fail(f"--env-runners {env_runners} is not allowed; give 0 to 1024")
    if backend is not None and backend not in ("sb3", "rllib"):
        fail(f"--backend {backend!r} is not allowed; allowed: sb3, rllib")
    try:
        from train.config import ConfigError
        from train.throughput import render_rich, train_bench
    except ImportError as exc:
        fail(f"the train suite needs the train extra ({exc}); install it with: pip install -e '.[train]'")
    from rich.console import Console

    err = Console(stderr=True)
    try:
        result = train_bench(config, rollouts, console=err, backend=backend, env_runners=env_runners)
    except ConfigError as exc:
        fail(str(exc))
    _suite_report("train", result, render_rich, as_json, out, err)


def envdoc(
    game: Optional[str] = typer.Option(None, "--game", metavar="GAME",
                                       help="The game whose reference to build (default: the first registered; "
                                            "`ripmarket games` lists them)."),
    write: Optional[Path] = typer.Option(None, "--write", metavar="PATH",
                                         help="Write the Markdown to PATH (the game's page: docs/ENV.md, "
                                              "docs/games/<game>/ENV.md)."),
    check: Optional[Path] = typer.Option(
        None, "--check", metavar="PATH", help="Exit 1 if PATH differs from the generated text."
    ),
) -> None:
    """Print a game's environment reference (docs/ENV.md, docs/games/<game>/ENV.md): spaces, tables, rewards, API."""
    check_out_file("--write", write)
    from ripmarket_env.app.envdoc import regen_command, render_env_markdown

    spec = game_spec(game)
    text = render_env_markdown(spec)
    if check is not None:
        try:
            current = check.read_text(encoding="utf-8")
        except OSError as exc:
            fail(f"cannot read {check}: {exc}")
        if current != text:
            fail(f"{check} is stale: run `{regen_command(spec)}`", code=1)
        typer.echo(f"{check} is up to date", err=True)
        return
    if write is not None:
        try:
            write.write_text(text, encoding="utf-8")
        except OSError as exc:
            fail(f"cannot write {write}: {exc}")
        typer.echo(f"wrote {write}", err=True)
        return
    typer.echo(text, nl=False)


app.command("envdoc")(envdoc)


def demo(
    games: int = typer.Option(240, "--games", metavar="N", help="Games of the demo tournament (rounded up to whole duplicate sets)."),
    players: Optional[int] = typer.Option(None, "--players", metavar="N", help="Seats per game (default: 6, or the game's default table if it cannot seat 6)."),
    budget: int = typer.Option(128, "--budget", metavar="N", help="The search agent's simulations per decision."),
    out: Path = typer.Option(Path("reports/demo"), "--out", metavar="DIR", help="Directory of the tournament report."),
    workers: Optional[int] = typer.Option(None, "--workers", metavar="N", help="Worker processes (default: CPU count)."),
    rounds: bool = typer.Option(False, "--rounds", help="Instead: play seeded games between random agents and print them round by round."),
    seeds: str = typer.Option("1", "--seeds", metavar="LIST", help="With --rounds: one game per seed and player count."),
    round_players: Optional[str] = typer.Option(None, "--round-players", metavar="LIST", help="With --rounds: player counts, comma-separated (default: 4,6 where the game seats them)."),
    game: Optional[str] = typer.Option(None, "--game", metavar="GAME", help="The game (default: the first registered; `ripmarket games` lists them)."),
) -> None:
    """A short tournament of a game's zoo (random, its heuristics, its search): leaderboard and report."""
    from rich.console import Console

    from ripmarket_env.app.demo import run_demo, run_tournament_demo
    from ripmarket_env.testing.conformance import valid_player_counts

    spec = game_spec(game)
    valid = valid_player_counts(spec)
    lo, hi = spec.min_players, spec.max_players
    if rounds:
        counts = _int_list(round_players, "--round-players", lo, hi) if round_players else \
            [n for n in (4, 6) if n in valid] or [spec.default_players]
        bad = [n for n in counts if n not in valid]
        if bad:
            fail(f"--round-players: {spec.title} seats {', '.join(map(str, valid))} players, not {bad[0]}")
        run_demo(counts, _int_list(seeds, "--seeds", 0), Console(), game=spec.id)
        return
    if players is None:
        players = 6 if 6 in valid else spec.default_players
    check_int("--players", players, lo, hi)
    if players not in valid:
        fail(f"--players: {spec.title} seats {', '.join(map(str, valid))} players, not {players}")
    check_int("--games", games, 1, MAX_GAMES)
    check_int("--budget", budget, 1)
    check_int("--workers", workers, 1, MAX_WORKERS)
    if out.exists() and not out.is_dir():
        fail(f"--out {out} exists and is not a directory")
    run_tournament_demo(out, games, players, budget, workers=workers, game=spec.id)


app.command("demo")(demo)


def replay(
    file: Path = typer.Argument(..., metavar="FILE", help="A game record of any game (JSON lines), e.g. from `ripmarket play --save`, the web page or env.save_record()."),
    god: bool = typer.Option(False, "--god", help="Show every hand and the hidden cards; each round's moves are told once, by its event log."),
) -> None:
    """Replay a game record of any game, check it against the engine, and print it round by round.

    Exits 1 with one line if the record does not replay: altered, of another card set,
    not a record, or truncated (a version 3 record without its end marker, a line cut
    off). A version 2 record (no end marker) replays with a note."""
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    from ripmarket_env.envs.record import RecordError, game_of
    from ripmarket_env.envs.record import replay as replay_record
    from ripmarket_env.games import registry

    console = Console()
    games = registry()
    # the game's record hooks (spec.records) say how its lines read; a game without one gets the default
    state = {"round": 1, "before": None, "who": [], "steps": [], "hooks": None, "decisions": 0}

    def hook(name: str):
        return getattr(state["hooks"], name, None)

    def seat(q: int) -> str:
        return (hook("seat_name") or (lambda x: f"player {x}"))(q)

    def who(q: int) -> str:
        return f"{seat(q)} ({state['who'][q]})" if state["who"] and 0 <= q < len(state["who"]) else seat(q)

    def round_start(eng) -> None:
        if hook("round_table") is None and not god:
            return  # the default shows each round line as it comes
        console.rule(f"{getattr(state['hooks'], 'ROUND_WORD', 'Round')} {state['round']}")
        if god and not eng.terminated[0] and hook("god_lines") is not None:
            for text in hook("god_lines")(eng):
                console.print(f"  [dim]{escape(text)}[/dim]")

    def default_round(obj: dict) -> dict:
        extra = ", ".join(f"{k} {obj[k]}" for k in obj if k not in ("round", "seat", "log"))
        by = f" · {who(obj['seat'])}" if isinstance(obj.get("seat"), int) else ""
        return {"title": f"Turn {obj['round']}{by}" + (f" · {extra}" if extra else ""), "columns": [], "rows": []}

    def on_line(n: int, obj: dict, eng) -> None:
        if "format" in obj:
            spec = game_of(file, obj, games)
            state.update(hooks=spec.records, who=list(obj.get("controllers") or []))
            rules = ", ".join(f"{k}={v}" for k, v in obj["rules"].items() if v is not None)
            console.print(f"[bold]{escape(spec.title)} record[/bold] {escape(str(file))}: seed {obj['seed']}, "
                          f"{obj['players']} players ({escape(rules)})")
            if state["who"]:
                console.print("Seats: " + escape(", ".join(f"{seat(q)} {c}" for q, c in enumerate(state["who"]))))
            round_start(eng)
        elif "step" in obj:
            state["decisions"] += 1
            if god:  # the round's event log tells every decision, forced ones included, once
                state["steps"].append(obj)
                return
            step_text = hook("step_text")
            if step_text is not None:
                text = step_text(eng, obj, god)
            else:  # the action's own words, and whose decision it is
                text = f"{seat(obj['seat'])}: {obj['desc']}" if isinstance(obj.get("seat"), int) else obj["desc"]
            console.print(f"  {obj['step']:>4}  {escape(text)}")
        elif "round" in obj:
            if god:  # every event of the round, hidden cards named
                state["steps"] = []
                for line in obj.get("log", []):
                    console.print(f"        {escape(line)}")
            view = (hook("round_table")(eng, obj, state["before"], who) if hook("round_table")
                    else default_round(obj))
            if view["rows"]:
                t = Table(title=escape(view["title"]), title_justify="left")
                for col in view["columns"]:
                    t.add_column(col, justify="right" if col in view.get("right", ()) else "left")
                for row in view["rows"]:
                    t.add_row(*map(escape, row))
                console.print(t)
            else:
                console.print(f"[bold]{escape(view['title'])}[/bold]")
            state["before"] = obj
            state["round"] = obj["round"] + 1
            if not eng.terminated[0]:
                round_start(eng)
        elif "result" in obj:
            res = obj["result"]
            winners = ", ".join(who(q) for q in res["winners"]) or "-"
            console.rule("Game over")
            console.print(f"[bold]Winner(s):[/bold] {escape(winners)}")
            for key, values in res.items():  # the game's own totals (points, Runes), then the rewards
                if key != "winners" and isinstance(values, list):
                    fmt = "{:+.3f}" if key == "rewards" else "{}"
                    console.print(f"{key.capitalize()}: " + escape("  ".join(
                        f"{seat(q)} {fmt.format(x)}" for q, x in enumerate(values))))

    notes: list[str] = []
    try:
        eng = replay_record(file, games, on_line=on_line, notes=notes)
    except RecordError as exc:
        fail(str(exc), code=1)
    except RecursionError:  # defensive: the reader refuses deep nesting itself
        fail(f"{file}: nested too deeply to be a game record", code=1)
    for obj in state["steps"]:  # god view of a record that stops mid-round: its last decisions
        console.print(f"  {obj['step']:>4}  {escape(obj['desc'])}")
    status = "finished" if eng.terminated[0] else "not finished (the record was saved mid-game)"
    console.print(f"[green]record verified[/green]: {state['decisions']} decisions, game {status}")
    for note in notes:
        console.print(f"note: {note}")


app.command("replay")(replay)


def _check_mode(spec, mode: Optional[str]) -> tuple:
    """The game's modes (``extras["modes"]``, empty for a game without); fails on a
    ``--mode`` the game lacks, naming the allowed ones."""
    modes = tuple((spec.extras or {}).get("modes") or ())
    if mode is not None and not modes:
        fail(f"--mode: {spec.title} has no modes")
    if mode is not None and mode not in modes:
        fail(f"--mode {mode!r} is not allowed for {spec.title}; allowed: {', '.join(modes)}")
    return modes


def _play_rules(spec, items: list[str], mode: Optional[str]) -> dict:
    """``--rule FIELD=VALUE`` items (and ``--mode``, the ``mode`` field) as fields of the
    game's rules config (integers, true/false or text); a field it lacks fails naming them."""
    fields = [f for f in spec.rules_class.__dataclass_fields__ if f != "num_players"]
    out: dict = {}
    for item in items + ([f"mode={mode}"] if mode is not None else []):
        key, sep, raw = item.partition("=")
        key = key.strip()
        if not sep or not key:
            fail(f"--rule {item!r}: expected FIELD=VALUE")
        if key not in fields:
            what = "--mode" if mode is not None and item == f"mode={mode}" else f"--rule {item!r}"
            fail(f"{what}: {spec.title} has no rules field {key!r}; allowed: {', '.join(fields)}")
        out[key] = _rule_value(item, raw)
    return out


def play(
    players: Optional[int] = typer.Option(None, "--players", metavar="N", help="Seats at the table (default: the game's default; `ripmarket games` lists each game's range)."),
    game: str = typer.Option(DEFAULT_GAME, "--game", metavar="GAME", help="The game to play, any registered game (`ripmarket games` lists them)."),
    seat: int = typer.Option(0, "--seat", metavar="S", help="Your seat (0 to N-1)."),
    opponents: Optional[str] = typer.Option(
        None, "--opponents", metavar="LIST",
        help="Bots for the other seats in seat order, comma-separated; a shorter list is repeated "
        "(default: the game's default opponent at every other seat, `ripmarket agents --game GAME`, "
        "or its heuristics in turn where it cannot play the cards in play).",
    ),
    seed: Optional[int] = typer.Option(None, "--seed", metavar="N", help="Game seed (default: random)."),
    save: Optional[Path] = typer.Option(None, "--save", metavar="FILE", help="Write the game record here (replay it with `ripmarket replay FILE`); an existing file is kept unless --force."),
    force: bool = typer.Option(False, "--force", help="Let --save replace an existing file."),
    cards_file: Optional[Path] = typer.Option(None, "--cards", metavar="FILE", help="Play with this card file instead of the game's packaged cards, for a game that reads card files (`first-edition`: a game's packaged first edition, where it has one)."),
    rule: list[str] = typer.Option([], "--rule", metavar="FIELD=VALUE", help="A rules-config field of the game (repeatable), e.g. mode=ffa."),
    mode: Optional[str] = typer.Option(None, "--mode", metavar="MODE", help="The rules field `mode`, for a game that has modes (e.g. teams or ffa)."),
) -> None:
    """Play a game in the terminal against the bots (numbered choices at every decision)."""
    from ripmarket_env.app.play import play_terminal
    from ripmarket_env.app.session import SetupError, check_setup

    spec = game_spec(game)
    check_int("--seed", seed, 0)
    rules = _play_rules(spec, rule, mode)
    engine_kwargs, refused = {}, {}
    if cards_file is not None:
        _check_cards(cards_file, spec)
        engine_kwargs["cards"] = spec.card_files.load(cards_file)
    from agents.policy import card_conflict, without_torch

    import agents as zoo

    for name in zoo.names(game):  # bots of other cards (a trained network) are refused with the reason
        why = card_conflict(name, engine_kwargs.get("cards"))
        if why is not None:
            refused[name] = why
    refused = {**without_torch(game), **refused}
    names = None if opponents is None else [n.strip() for n in opponents.split(",") if n.strip()]
    try:
        check_setup(spec, players, seat, names, rules, refused)
    except SetupError as exc:
        text = str(exc)
        option = "--players" if text.startswith("players=") else "--seat" if text.startswith("seat=") else \
            "--opponents"
        if text.startswith("rules"):
            option = "--mode" if mode is not None and "mode=" in text else "--rule"
        fail(f"{option}: {text}")
    check_out_file("--save", save)
    if save is not None and save.exists() and not force:
        fail(f"--save {save} exists; choose another file or add --force to replace it")
    if save is not None and not save.parent.is_dir():
        fail(f"--save {save}: folder {save.parent} does not exist")
    try:
        play_terminal(game, players, seat, names, seed=seed, save=save, rules=rules, overwrite=force,
                      engine_kwargs=engine_kwargs, refused=refused)
    except KeyboardInterrupt:
        typer.echo("\ninterrupted", err=True)
        raise typer.Exit(130)
    except EOFError:
        typer.echo("\ngame abandoned", err=True)
        raise typer.Exit(1)


app.command("play")(play)


def uvicorn_options(host: str, port: int, trust_proxy=()) -> dict:
    """``uvicorn.run``'s options for ``serve``: the proxy headers (X-Forwarded-For, which
    uvicorn believes from loopback by default) are ignored unless ``trust_proxy`` names the
    proxies whose headers are believed; a client is then the connection's peer address."""
    if trust_proxy:
        return {"host": host, "port": port, "log_level": "info", "proxy_headers": True,
                "forwarded_allow_ips": ",".join(trust_proxy)}
    return {"host": host, "port": port, "log_level": "info", "proxy_headers": False}


def serve(
    host: str = typer.Option("127.0.0.1", "--host", metavar="HOST", help="Interface to listen on (default: loopback only)."),
    port: int = typer.Option(8000, "--port", metavar="PORT", help="TCP port."),
    max_games: int = typer.Option(64, "--max-games", metavar="N", help="Live games held at once, all clients together; past it, new games get HTTP 429 with Retry-After."),
    max_games_per_client: int = typer.Option(4, "--max-games-per-client", metavar="N", help="Live games one client (peer address) may hold at once."),
    idle_timeout: float = typer.Option(1800, "--idle-timeout", metavar="SECONDS", help="A live game with no decision answered for this long expires (reading it does not count)."),
    away_grace: float = typer.Option(30, "--away-grace", metavar="SECONDS", help="A game whose page was closed (the tab's beacon) ends and frees its player's slot this long after, unless the player comes back (a reload) before."),
    max_game_age: float = typer.Option(4 * 3600, "--max-game-age", metavar="SECONDS", help="A live game expires this long after it started, played or not."),
    keep_finished: float = typer.Option(7 * 24 * 3600, "--keep-finished", metavar="SECONDS", help="Finished games and their records stay fetchable this long after they end."),
    db: Optional[Path] = typer.Option(None, "--db", metavar="FILE", help="SQLite file of the games (they survive a restart); default $XDG_DATA_HOME/ripmarket/server.sqlite3 (~/.local/share/...). ':memory:' keeps nothing."),
    allow_host: list[str] = typer.Option([], "--allow-host", metavar="NAME", help="Another name the Host header may carry (repeatable); the bound address and, on loopback, localhost are always allowed."),
    max_body: int = typer.Option(65536, "--max-body", metavar="BYTES", help="Largest request body read; larger ones get HTTP 413."),
    bot_calls: int = typer.Option(120, "--bot-calls", metavar="N", help="Stateless bot decisions (POST /api/{game}/bots/{name}/act) one client may ask per minute; past it, HTTP 429 with Retry-After."),
    trust_proxy: list[str] = typer.Option([], "--trust-proxy", metavar="ADDR", help="Address of a reverse proxy whose X-Forwarded-For / X-Forwarded-Proto headers are believed (repeatable). Without it a client is the connection's peer address and those headers are ignored."),
) -> None:
    """Serve the web page and JSON API for playing against the bots (FastAPI + uvicorn).

    Games are kept in an SQLite file and survive a restart; docs/SERVER.md describes the
    limits and the security model."""
    if not 0 <= port <= 65535:
        fail(f"--port {port} is not allowed; allowed: 0 to 65535")
    check_int("--max-games", max_games, 1)
    check_int("--max-games-per-client", max_games_per_client, 1)
    check_int("--max-body", max_body, 1024)
    check_int("--bot-calls", bot_calls, 1)
    for option, value in (("--idle-timeout", idle_timeout), ("--away-grace", away_grace),
                          ("--max-game-age", max_game_age), ("--keep-finished", keep_finished)):
        if not (value > 0 and value < float("inf")):
            fail(f"{option} {value:g} is not allowed; allowed: a positive number of seconds")
    try:
        import uvicorn

        from ripmarket_env.app.server.app import LOOPBACK_HOSTS, create_app, default_db_path
        from ripmarket_env.app.server.store import StoreError
    except ImportError as exc:
        fail(f"the server needs the serve extra ({exc}); install it with: pip install -e '.[serve]'")
    hosts = [host, *allow_host]
    if host in LOOPBACK_HOSTS:
        hosts += list(LOOPBACK_HOSTS)
    path = db if db is not None else default_db_path()
    try:
        web = create_app(max_games=max_games, idle_seconds=idle_timeout, max_games_per_client=max_games_per_client,
                         max_age_seconds=max_game_age, keep_seconds=keep_finished, away_seconds=away_grace, db=path,
                         allowed_hosts=hosts, max_body=max_body, warm_up=True, bot_calls=bot_calls)
    except StoreError as exc:
        fail(str(exc))
    typer.echo(f"ripmarket: open http://{host}:{port}/ (API docs at /docs); games kept in {path}", err=True)
    uvicorn.run(web, **uvicorn_options(host, port, trust_proxy))


app.command("serve")(serve)


def train(
    config: Path = typer.Argument(..., metavar="CONFIG", help="Training config (YAML), e.g. configs/ripmarket/ppo_6p.yaml."),
    out: Path = typer.Option(Path("."), "--out", metavar="DIR", help="Root for runs/<run_name> (TensorBoard) and checkpoints/<run_name>/."),
    total_timesteps: Optional[int] = typer.Option(None, "--total-timesteps", metavar="N", help="Override the config's total_timesteps (backend sb3: rounded up to whole rollouts of n_envs x n_steps learner steps)."),
    seed: Optional[int] = typer.Option(None, "--seed", metavar="N", help="Override the config's seed."),
    resume: Optional[Path] = typer.Option(None, "--resume", metavar="CHECKPOINT", help="Go on training from this checkpoint (.zip: weights, optimizer state and step count) up to total_timesteps; a refreshed distilled zoo saved next to it (zoo-bc.pt) is where the league's imitations start. Read without unpickling: a checkpoint cannot run code. backend sb3 only."),
    ray_address: Optional[str] = typer.Option(
        None, "--ray", metavar="ADDRESS", envvar="RAY_ADDRESS", show_envvar=True,
        help="backend rllib: the Ray cluster to train on ('auto': the cluster this machine joined with ray start, "
        "or its address); default: a Ray instance started for this run (docs/SCALE_OUT.md).",
    ),
) -> None:
    """Self-play training against an opponent league, for any game (the config's game: key,
    default ripmarket; its rules: mapping): MaskablePPO on the batched vector env (backend:
    sb3), or RLlib's multi-agent PPO over the AEC env (backend: rllib). Configs:
    configs/<game>/."""
    try:
        from agents.checkpoint import CheckpointError
        from train.config import ConfigError, config_from_dict, load_config
        from train.selfplay import check_resume
        from train.selfplay import train as run_training
    except ImportError as exc:
        fail(f"training needs the train extra ({exc}); install it with: pip install -e '.[train]'")
    try:
        cfg = load_config(config)
        if total_timesteps is not None or seed is not None:
            d = cfg.to_dict()
            if total_timesteps is not None:
                d["total_timesteps"] = total_timesteps
            if seed is not None:
                d["seed"] = seed
            cfg = config_from_dict(d)
        if resume is not None:
            if cfg.backend != "sb3":
                raise ConfigError(f"--resume takes a checkpoint of backend sb3; {config} has backend {cfg.backend}")
            check_resume(cfg, resume)  # before any run folder is made
    except (ConfigError, CheckpointError) as exc:
        fail(str(exc))
    from rich.console import Console

    console = Console(stderr=True)
    if cfg.backend == "rllib":
        _train_rllib(cfg, out, ray_address, console)
        return
    note = None if resume is not None else rollout_note(cfg)
    if note:
        console.print(note)
    try:
        summary = run_training(cfg, out, console=console, resume=resume)
    except CheckpointError as exc:
        fail(str(exc))
    pre = summary.get("pretrain") or {}
    if pre.get("teacher"):
        console.print(f"cloned {pre['teacher']}: {pre['decisions']:,} decisions; the network chose as it did in "
                      f"{pre['agreement_before']:.1%} of them before, {pre['agreement_after']:.1%} after")
    if summary["steps"]:
        console.print(f"run {summary['run_name']}: {summary['steps']:,} steps in {summary['wall_s']:.0f} s "
                      f"({summary['steps_per_s']:,.0f} steps/s; {summary['training_steps_per_s']:,.0f} in rollouts and "
                      f"updates: env {summary['time_env_s']:.0f} s, policy {summary['time_policy_s']:.0f} s, "
                      f"update {summary['time_update_s']:.0f} s)")
    console.print(f"checkpoint: {summary['checkpoint']}")
    _print_final_eval(console, summary)


app.command("train")(train)


def rollout_note(cfg) -> str | None:
    """What a run of ``cfg`` (backend sb3) will train when ``total_timesteps`` is not a whole
    number of rollouts (SB3 collects whole rollouts of ``n_envs x n_steps`` steps), else None."""
    rollout = cfg.n_envs * cfg.n_steps
    if not cfg.total_timesteps % rollout:
        return None
    rollouts = -(-cfg.total_timesteps // rollout)
    return (f"total_timesteps {cfg.total_timesteps:,} is not a whole number of rollouts (n_envs x n_steps = "
            f"{rollout:,} learner steps): training runs {rollouts:,} rollout{'s' if rollouts > 1 else ''}, "
            f"{rollouts * rollout:,} steps")


def _print_final_eval(console, summary: dict) -> None:
    fe = summary.get("final_eval")
    if fe and "by_count" in fe:  # several player counts: one line per count
        for n, r in fe["by_count"].items():
            lo, hi = r["wilson95"]
            console.print(f"final evaluation vs the zoo at {n} players: {r['wins']:.0f}/{r['games']} "
                          f"wins = {r['win_rate']:.1%} (95% Wilson {lo:.1%}..{hi:.1%}; parity {1 / int(n):.1%})")
    elif fe and "by_table" in fe:  # several tables: one line per table
        for label, r in fe["by_table"].items():
            lo, hi = r["wilson95"]
            console.print(f"final evaluation vs the zoo at table {label}: {r['wins']:.0f}/{r['games']} "
                          f"wins = {r['win_rate']:.1%} (95% Wilson {lo:.1%}..{hi:.1%}; parity {1 / int(r['parity']):.1%})")
    elif fe:
        lo, hi = fe["wilson95"]
        console.print(f"final evaluation vs the zoo: {fe['wins']:.0f}/{fe['games']} wins = {fe['win_rate']:.1%} "
                      f"(95% Wilson {lo:.1%}..{hi:.1%})")


def _train_rllib(cfg, out: Path, ray_address: Optional[str], console) -> None:
    try:
        from train.rllib_backend import train as run_rllib
    except ImportError as exc:  # pragma: no cover - the ecosystem extra
        fail(f"backend rllib needs the ecosystem extra ({exc}); install it with: pip install -e '.[ecosystem]'")
    try:
        import ray  # noqa: F401
    except ImportError as exc:
        fail(f"backend rllib needs ray[rllib] ({exc}); install it with: pip install -e '.[ecosystem]'")
    summary = run_rllib(cfg, out, console=console, ray_address=None if ray_address == "local" else ray_address)
    console.print(f"run {summary['run_name']} (rllib): {summary['steps']:,} learner steps in {summary['wall_s']:.0f} s "
                  f"({summary['training_steps_per_s']:,.1f} learner steps/s in {summary['iterations']} iterations; "
                  f"setup {summary['build_s']:.0f} s)")
    console.print(f"checkpoint: {summary['checkpoint']} (plays as an agent: ripmarket evaluate {summary['checkpoint']})")
    console.print(f"tensorboard: {summary['tensorboard']}")
    _print_final_eval(console, summary)




def distill(
    players: str = typer.Option("6", "--players", metavar="LIST", help="Seats per recorded game (the game's player counts: 2-10 for R.I.P. Market), or several counts comma-separated (2,3,4,5,6,7,8,9,10): the games are split evenly over them and one network learns every count."),
    games: int = typer.Option(2400, "--games", metavar="N", help="Zoo games to record, in all (about 80 decisions each at 6 players)."),
    seed: int = typer.Option(7, "--seed", metavar="S", help="Seed of the recorded games and of the fit."),
    epochs: int = typer.Option(8, "--epochs", metavar="N", help="Passes over the recorded decisions."),
    workers: int = typer.Option(2, "--workers", metavar="N", help="Worker processes playing the zoo games."),
    out: Path = typer.Option(Path("runs/zoo-bc.pt"), "--out", metavar="FILE", help="Where to write the distilled zoo (relative to the current directory). The agents greedy-bc ... trickster-bc load agents/checkpoints/zoo-bc.pt: to replace that shipped file, name it here and add --force."),
    force: bool = typer.Option(False, "--force", help="Overwrite the --out file if it exists."),
    recording: Optional[Path] = typer.Option(None, "--recording", metavar="FILE", help="Reuse (or write) the recorded decisions here (.npz)."),
    guest: Optional[str] = typer.Option(None, "--guest", metavar="AGENT", help="Also record games with this agent (name or .zip) in one seat against the heuristics; only the heuristics' decisions are kept."),
    guest_games: int = typer.Option(0, "--guest-games", metavar="N", help="Games recorded with the --guest agent (seed --seed + 1)."),
    game: Optional[str] = typer.Option(None, "--game", metavar="GAME", help="The game whose heuristics to imitate (default: R.I.P. Market). Another game's file is used by a training config of that game through league.zoo_init, its zoo naming <heuristic>-bc."),
    teacher: Optional[str] = typer.Option(None, "--teacher", metavar="AGENT", help="Imitate this registered agent of --game too (e.g. its search, too slow for a league seat): it plays one seat of --teacher-games games against the heuristics and its decisions become one more style of the network, <AGENT>-bc in a league.zoo with league.zoo_init naming the file."),
    teacher_games: int = typer.Option(0, "--teacher-games", metavar="N", help="Games the --teacher agent plays (seed --seed + 2)."),
    mode: Optional[str] = typer.Option(None, "--mode", metavar="MODE", help="The rules field `mode` of every recorded game, for a game that has modes (e.g. teams or ffa; default: the game's first)."),
) -> None:
    """Fit one network imitating every zoo heuristic of a game (fast batch opponents for training), and with --teacher another agent too."""
    check_out_file("--out", out)
    try:
        import torch  # noqa: F401  (the fit; train.distill imports it only when it fits)

        from train import distill as D
    except ImportError as exc:
        fail(f"distilling needs the train extra ({exc}); install it with: pip install -e '.[train]'")
    spec = game_spec(game)
    game = spec.id
    try:
        styles = D.default_styles(game)
    except ValueError as exc:
        fail(f"--game {game}: {exc}")
    counts = _int_list(players, "--players", spec.min_players, spec.max_players)
    _check_mode(spec, mode)
    fields = {} if mode is None else {"mode": mode}
    table_rules = [fields] * len(counts) if fields else None
    for c in counts:
        try:
            spec.make_rules(c, **fields)
        except ValueError as exc:
            fail(f"--players {c}{'' if mode is None else f' --mode {mode}'}: {exc}")
    if len(set(counts)) != len(counts):
        fail(f"--players {players!r} names a count twice; give each player count once")
    check_int("--games", games, 1, MAX_GAMES)
    check_int("--epochs", epochs, 1, 1000)
    check_int("--workers", workers, 1, MAX_WORKERS)
    check_int("--seed", seed, 0)
    check_int("--guest-games", guest_games, 0, MAX_GAMES)
    if (guest is None) != (guest_games == 0):
        fail("--guest and --guest-games go together: name the agent and how many games it plays")
    check_int("--teacher-games", teacher_games, 0)
    if (teacher is None) != (teacher_games == 0):
        fail("--teacher and --teacher-games go together: name the agent and how many games it plays")
    heuristics = styles
    if teacher is not None:
        import agents

        if teacher not in agents.names(game):
            fail(f"--teacher {teacher!r} is not a registered agent of {game}; allowed: {', '.join(agents.names(game))}")
        if teacher in styles:
            fail(f"--teacher {teacher}: the heuristics are imitated anyway ({', '.join(styles)}); name another agent")
        styles = (*styles, teacher)
    if out.exists() and not force:  # checked before the (long) recording and fit
        fail(f"--out {out} exists; choose another file or add --force to overwrite it")
    if out.exists() and not out.is_file():
        fail(f"--out {out} is not a file")
    if guest is not None:
        from eval.evaluate import make_agent

        try:
            make_agent(guest, game=game)
        except Exception as exc:
            fail(f"--guest {guest}: {exc}")
    from rich.console import Console

    console = Console(stderr=True)
    if recording is not None and recording.is_file():
        try:
            data = D.load_decisions(recording)
        except Exception as exc:
            fail(f"--recording {recording}: not a readable recording ({type(exc).__name__}: {exc})")
        from agents.checkpoint import _current_facts

        facts = _current_facts(game)
        if data.obs.shape[1:] != (facts["obs_size"],) or data.mask.shape[1:] != (facts["num_actions"],):
            fail(f"--recording {recording}: decisions of {data.obs.shape[1:]} observation values and "
                 f"{data.mask.shape[1:]} actions; {game} has {facts['obs_size']} and {facts['num_actions']} "
                 "(a recording of another game or version)")
        if teacher is not None and not (data.style == len(styles) - 1).any():
            fail(f"--recording {recording} holds no decision of the --teacher {teacher}: record it anew "
                 "(name a new --recording file)")
        if len(data) and int(data.style.max()) >= len(styles):
            fail(f"--recording {recording}: decisions of {int(data.style.max()) + 1} styles; this fit imitates "
                 f"{len(styles)} ({', '.join(styles)}): give the --teacher the recording was made with")
    else:
        data = D.collect(counts, games, heuristics, seed=seed, workers=workers, game=game, rules=table_rules)
        if guest is not None:
            more = D.collect(counts, guest_games, heuristics, seed=seed + 1, workers=workers, guest=guest, game=game,
                             rules=table_rules)
            more.game = more.game + games  # game numbers after the zoo-only games
            data = D.Decisions.concat([data, more])
        if teacher is not None:  # its decisions' style is len(heuristics): the last style
            taught = D.collect(counts, teacher_games, heuristics, seed=seed + 2, workers=workers, guest=teacher,
                               record="guest", game=game, rules=table_rules)
            taught.game = taught.game + games + guest_games
            data = D.Decisions.concat([data, taught])
        if recording is not None:
            D.save_decisions(data, recording)
    net, info = D.fit(data, styles, seed=seed, epochs=epochs)
    import numpy as np

    info.update({"num_players": counts[0] if len(counts) == 1 else counts, "games": int(len(np.unique(data.game))), "seed": seed,
                 "decisions": len(data), "recording": str(recording) if recording else None,
                 "teacher": teacher, "teacher_games": teacher_games,
                 **fields})
    D.save(net, out, styles, (256, 256), info, game=game)
    acc = ", ".join(f"{k} {v:.1%}" for k, v in info["accuracy"].items())
    console.print(f"{len(data):,} decisions; held-out agreement with the {'agents' if teacher else 'heuristics'}: {acc}")
    console.print(f"distilled zoo: {out}")


app.command("distill")(distill)


def export(
    agent: Optional[str] = typer.Argument(None, metavar="AGENT", help="A trained agent: a zoo name (ppo-6p, greedy-bc, bm-ppo, ...) or a checkpoint file (.zip) of --game."),
    game: str = typer.Option(DEFAULT_GAME, "--game", metavar="GAME", help=f"The agent's game: {_GAMES_HELP}."),
    out: Optional[Path] = typer.Option(None, "--out", metavar="FILE", help="Where to write the export (default: AGENT.safetensors in the current directory)."),
    force: bool = typer.Option(False, "--force", help="Overwrite the --out file if it exists."),
    shipped: bool = typer.Option(False, "--shipped", help="Write every shipped export again, beside its checkpoint (agents/checkpoints/*.safetensors)."),
    check: bool = typer.Option(False, "--check", help="Exit 1 if a shipped export is missing or was made from another checkpoint."),
) -> None:
    """Export a trained agent as a safetensors policy (weights and a JSON header; agents.export.load_export rebuilds it in torch): any trainer plays it, and every env takes the file as an opponent."""
    try:
        from agents import export as E
    except ImportError as exc:
        fail(f"exporting needs the train extra ({exc}); install it with: pip install -e '.[train]'")
    if sum((agent is not None, shipped, check)) != 1:
        fail("give one of: AGENT, --shipped or --check")
    if check:
        stale = E.stale_exports()
        if stale:
            fail("; ".join(stale) + ": run `ripmarket export --shipped`", code=1)
        typer.echo(f"{len(E.SHIPPED)} shipped exports are up to date", err=True)
        return
    if shipped:
        for p in E.export_shipped():
            typer.echo(f"wrote {p}", err=True)
        return
    game_spec(game)
    target = out if out is not None else Path(f"{Path(agent).stem}{E.SUFFIX}")
    check_out_file("--out", target)
    if target.exists() and not force:
        fail(f"{target} exists; choose another --out or add --force to overwrite it")
    from eval.evaluate import make_agent

    try:
        bot = make_agent(agent, game=game)
        source = Path(agent) if Path(agent).suffix == ".zip" else None
        path = E.export_agent(bot if source is not None else agent, target, game=game, source=source)  # by name
    except Exception as exc:  # unknown names, unusable checkpoints, agents without a network
        fail(f"cannot export {agent}: {exc}")
    meta = E.read_meta(path)
    typer.echo(f"wrote {path}: obs ({meta['obs_size']},) float32, mask ({meta['num_actions']},) 0/1 -> logits", err=True)


app.command("export")(export)


def evaluate(
    agent: str = typer.Argument(..., metavar="AGENT", help="A registered agent name (ripmarket agents) or a checkpoint file (.zip)."),
    players: int = typer.Option(6, "--players", metavar="N", help=f"Seats per game ({_PLAYERS_HELP})."),
    games: int = typer.Option(2000, "--games", metavar="N", help="Games to play."),
    zoo: Optional[str] = typer.Option(None, "--zoo", metavar="LIST", help="Agents drawn (uniformly, per seat and game) for the other seats (default: the game's heuristics, `ripmarket agents --game G`; random for a game without any)."),
    game: Optional[str] = typer.Option(None, "--game", metavar="GAME", help=f"The game: {_GAMES_HELP} (default: a checkpoint file's own game, else {DEFAULT_GAME})."),
    seed: int = typer.Option(1, "--seed", metavar="S", help="Seed of the deals, seats and zoo draws."),
    workers: int = typer.Option(2, "--workers", metavar="N", help="Worker processes; the result does not depend on it."),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON."),
    ray_address: Optional[str] = typer.Option(
        None, "--ray", metavar="ADDRESS", envvar="RAY_ADDRESS", show_envvar=True,
        help="Play the games as Ray tasks: 'local' (a Ray instance on this machine), 'auto' (the cluster this "
        "machine joined with ray start) or a cluster address; same results as local workers (docs/SCALE_OUT.md).",
    ),
    mode: Optional[str] = typer.Option(None, "--mode", metavar="MODE", help="The rules field `mode`, for a game that has modes (e.g. teams, where the agent's side wins together and parity is one over the sides, or ffa)."),
) -> None:
    """One agent in one seat against the zoo: win rate with its 95% Wilson interval."""
    import agents as registry

    try:
        from eval.evaluate import evaluate as run_eval
        from eval.evaluate import make_agent
    except ImportError as exc:
        fail(f"evaluating needs the train extra ({exc}); install it with: pip install -e '.[train]'")
    from eval.evaluate import default_zoo

    spec = game_spec(game if game is not None else _checkpoint_game(agent))
    game = spec.id
    check_int("--players", players, spec.min_players, spec.max_players)
    _check_mode(spec, mode)
    fields = {} if mode is None else {"mode": mode}
    try:
        spec.make_rules(players, **fields)
    except ValueError as exc:
        fail(f"--players {players}{'' if mode is None else f' --mode {mode}'}: {exc}")
    check_int("--games", games, 1, MAX_GAMES)
    check_int("--workers", workers, 1, MAX_WORKERS)
    check_int("--seed", seed, 0)
    if zoo is None:
        zoo = ",".join(default_zoo(game))
    names = [z.strip() for z in zoo.split(",") if z.strip()]
    bad = [z for z in names if z not in registry.names(game)]
    if not names or bad:
        fail(f"--zoo: unknown agent {(bad or [zoo])[0]!r} for {game}; allowed: {', '.join(registry.names(game))}")
    try:
        make_agent(agent, game=game)
    except Exception as exc:  # unknown name, unusable checkpoint
        fail(str(exc))
    res = run_eval(agent, players, games, names, seed=seed, workers=workers, progress=not as_json,
                   ray_address=ray_address, game=game, rules=fields or None)
    if as_json:
        import json

        typer.echo(json.dumps(res, indent=1))
        return
    lo, hi = res["wilson95"]
    typer.echo(f"{agent}: {res['wins']:.0f}/{res['games']} wins = {res['win_rate']:.1%} "
               f"(95% Wilson {lo:.1%}..{hi:.1%}; parity {res['parity']:.1%}) at {players} players"
               f"{'' if mode is None else f', {mode}'} vs {', '.join(names)}")


app.command("evaluate")(evaluate)


def _checkpoint_game(agent: str) -> str:
    """The game a checkpoint file ``agent`` was trained on, when it is one whose metadata
    names a registered game; otherwise the default game (a registered agent's name, or a
    file the agent loader will report on)."""
    from ripmarket_env.games import ids

    if not agent.endswith(".zip") or not Path(agent).is_file():
        return DEFAULT_GAME
    from agents.checkpoint import CheckpointError, checkpoint_game, read_metadata

    try:
        got = checkpoint_game(read_metadata(agent, check=False))
    except CheckpointError:
        return DEFAULT_GAME
    return got if got in ids() else DEFAULT_GAME


def _one_line_paragraphs(*apps: typer.Typer) -> None:
    """Rich help keeps a docstring's line breaks inside a paragraph, and then wraps the
    pieces again (``ripmarket --help`` broke the bench and train summaries mid-sentence,
    ``replay --help`` read "of another card set," on a line of its own): every command's
    help gets each paragraph as one line (a paragraph of list items or indented lines
    keeps its lines), and its line in a command list the first paragraph."""
    import inspect

    def joined(paragraph: str) -> str:
        lines = paragraph.split("\n")
        if any(line[:1] in (" ", "-", "*", "\b") for line in lines[1:]):
            return paragraph
        return " ".join(paragraph.split())

    for group in apps:
        for info in group.registered_commands:
            doc = info.help or inspect.getdoc(info.callback) or ""
            info.help = "\n\n".join(joined(p) for p in doc.split("\n\n"))
            if info.short_help is None:
                info.short_help = " ".join(doc.split("\n\n")[0].split())


_one_line_paragraphs(app, balance_app)


if __name__ == "__main__":  # pragma: no cover
    app()
