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
