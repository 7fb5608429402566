"""CLI output off a terminal: progress as plain lines; flags without a value placeholder."""

from __future__ import annotations

import io

from typer.testing import CliRunner

from eval.progress import Progress
from ripmarket_env.app.cli import app


def test_progress_off_a_terminal_prints_plain_lines():
    out = io.StringIO()
    with Progress(200, "tournament", stream=out) as bar:  # a StringIO is not a terminal
        for _ in range(200):
            bar.advance(1)
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("tournament: 0/200 (0%)")
    assert lines[-1].startswith("tournament: 200/200 (100%)") and lines[-1].endswith("done")
    # one line per tenth of the work between the first and the last, no control codes
    assert 10 <= len(lines) <= 12 and "\x1b" not in out.getvalue()
    assert any("ETA" in line for line in lines[1:-1])


def test_progress_of_resumed_work_counts_its_eta_from_the_work_done_since(monkeypatch):
    """A resumed training starts its bar at the steps already done; the ETA is the time
    the remaining work takes at the pace of this sitting, not of the steps it inherited."""
    import eval.progress as progress

    clock = iter([0.0, 0.0, 10.0, 10.0, 20.0, 20.0])
    monkeypatch.setattr(progress.time, "perf_counter", lambda: next(clock))
    out = io.StringIO()
    with Progress(1000, "train", stream=out, start=900) as bar:
        bar.advance(50)  # 50 steps in 10 s: the other 50 take 10 s more
        bar.advance(50)
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("train: 900/1,000 (90%)") and "ETA" not in lines[0]
    assert lines[1].startswith("train: 950/1,000 (95%) 10 s, ETA 10 s"), lines
    assert lines[-1].startswith("train: 1,000/1,000 (100%) 20 s, done")


def test_progress_disabled_prints_nothing():
    out = io.StringIO()
    with Progress(5, "x", enabled=False, stream=out) as bar:
        bar.advance(5)
    assert out.getvalue() == ""


def test_flags_show_no_value_placeholder_in_help():
    for cmd in ("tournament", "balance", "bench", "evaluate"):
        result = CliRunner().invoke(app, [cmd, "--help"], env={"COLUMNS": "160"})
        assert result.exit_code == 0, result.output
        assert "<bool>" not in result.output
        assert "--help" in result.output
    result = CliRunner().invoke(app, ["tournament", "--help"], env={"COLUMNS": "160"})
    assert "--quiet" in result.output and "LIST" in result.output  # real metavars stay


def test_command_list_gives_each_command_its_summary_unbroken():
    """``ripmarket --help`` lists every command with its first help paragraph reflowed to
    the width, not broken where the docstring's lines end."""
    import inspect
    import re

    from ripmarket_env.app.cli import balance_app

    for group, argv in ((app, ["--help"]), (balance_app, ["balance", "--help"])):
        result = CliRunner().invoke(app, argv, env={"COLUMNS": "200"})
        assert result.exit_code == 0, result.output
        lines = [" ".join(re.sub(r"[\u2500-\u257f]", " ", line).split()) for line in result.output.splitlines()]
        for info in group.registered_commands:
            first = (info.help or inspect.getdoc(info.callback)).split("\n\n")[0]
            # 150 characters fit one line of the list at 200 columns, unless broken early
            summary = " ".join(first.split())[:150]
            assert any(summary in line for line in lines), (info.name, summary)


def test_every_commands_help_reflows_its_paragraphs():
    """Every command's --help shows each paragraph of its text reflowed to the width, not
    broken where the docstring's lines end (``replay --help`` read "of another card set,"
    with "set," alone on the next line)."""
    import re

    from ripmarket_env.app.cli import balance_app

    commands = [[i.name] for i in app.registered_commands] + [["balance", i.name] for i in balance_app.registered_commands]
    assert ["replay"] in commands and ["balance", "diff"] in commands
    for argv in commands:
        result = CliRunner().invoke(app, [*argv, "--help"], env={"COLUMNS": "200"})
        assert result.exit_code == 0, result.output
        text = result.output.split("\u256d")[0]  # the description, before the option boxes
        for paragraph in re.split(r"\n\s*\n", text):
            lines = [line.strip() for line in paragraph.strip().splitlines()]
            # at 200 columns a paragraph wraps only past about 190 characters
            assert all(len(line) > 150 for line in lines[:-1]), (argv, lines)


def test_every_command_with_a_game_option_refuses_an_unknown_game_alike(tmp_path):
    """Every command that takes ``--game`` resolves it the same way (``cli.game_spec``):
    an unknown id is one line naming it and the registered ids, exit 2, before any work
    (no file written, no traceback)."""
    from ripmarket_env.games import ids

    runner = CliRunner()
    out = tmp_path / "out"
    commands = [["cards", "--write", str(out)], ["tournament", "--agents", "random,random"],
                ["agents"], ["bench", "--out", str(out)], ["envdoc", "--write", str(out)],
                ["demo", "--out", str(out)], ["play"], ["distill", "--out", str(out)],
                ["export", "missing.zip", "--out", str(out)], ["evaluate", "missing.zip"], ["balance"]]
    for cmd in commands:
        res = runner.invoke(app, [*cmd, "--game", "chess"])
        line = f"error: --game 'chess' is not a registered game; allowed: {', '.join(ids())}"
        assert res.exit_code == 2 and res.output.strip() == line, (cmd, res.output)
        assert res.exception is None or isinstance(res.exception, SystemExit), (cmd, res.exception)
        assert not out.exists(), cmd


def test_no_command_writes_over_a_device_a_pipe_or_a_folder(tmp_path):
    """A file a command writes (``--save``, ``--out``, ``--write``, ``--plot``) that exists as
    something else is refused in one line before any work: a device would be replaced by
    a regular file (``--force`` replaced ``/dev/full``), a named pipe would wait for a reader."""
    import os
    import stat

    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    folder = tmp_path / "folder"
    folder.mkdir()
    runner = CliRunner()
    for target, why in (("/dev/full", "is a device, not a file"), (str(pipe), "is a named pipe or socket, not a file"),
                        (str(folder), "is a folder, not a file")):
        for cmd in (["play", "--opponents", "random", "--players", "2", "--save", target, "--force"],
                    ["export", "ppo", "--out", target, "--force"], ["cards", "--markdown", "--write", target],
                    ["envdoc", "--write", target], ["bench", "--suite", "engine", "--out", target],
                    ["bench", "--suite", "engine", "--plot", target], ["distill", "--out", target]):
            res = runner.invoke(app, cmd, input="1\n")
            option = next(c for c in cmd if c in ("--save", "--out", "--write", "--plot"))
            assert res.exit_code == 2 and res.output.strip() == f"error: {option} {target} {why}; give a file name", \
                (cmd, res.output)
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode) and stat.S_ISFIFO(os.stat(pipe).st_mode) and folder.is_dir()
