"""``ripmarket evaluate``: one agent against the zoo, parallel and reproducible."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import torch  # noqa: E402,F401

from eval.evaluate import evaluate, make_agent  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def test_result_does_not_depend_on_workers():
    a = evaluate("random", 4, 150, ["random"], seed=3, workers=1, progress=False)
    b = evaluate("random", 4, 150, ["random"], seed=3, workers=2, progress=False)
    assert a == b
    assert a["games"] == 150 and 0 <= a["wins"] <= 150
    lo, hi = a["wilson95"]
    assert lo <= a["win_rate"] <= hi and a["parity"] == 0.25
    c = evaluate("random", 4, 150, ["random"], seed=4, workers=1, progress=False)
    assert c["wins"] != a["wins"] or c["mean_reward"] != a["mean_reward"]


def test_a_heuristic_beats_random_seats():
    res = evaluate("hoarder", 4, 100, ["random"], seed=1, workers=1, progress=False)
    assert res["wilson95"][0] > 0.25  # clearly above parity against random players


def test_unknown_agent_is_refused():
    with pytest.raises(ValueError, match="unknown agent 'nobody'.*random"):
        make_agent("nobody")


def test_cli(tmp_path):
    run = lambda *a: subprocess.run([sys.executable, "-m", "ripmarket_env.app.cli", "evaluate", *a],  # noqa: E731
                                    capture_output=True, text=True, cwd=ROOT, timeout=300)
    r = run("random", "--players", "3", "--games", "6", "--zoo", "random", "--workers", "1", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["games"] == 6
    r = run("random", "--zoo", "random,nobody")
    assert r.returncode == 2 and "nobody" in r.stderr and "allowed" in r.stderr
    r = run("random", "--players", "11")
    assert r.returncode == 2 and "2 to 10" in r.stderr
    bad = tmp_path / "bad.zip"
    bad.write_bytes(b"not a zip")
    r = run(str(bad), "--games", "2")
    assert r.returncode == 2 and "Traceback" not in r.stderr and "bad.zip" in r.stderr


def test_black_market_fills_the_other_seats_with_its_heuristics(monkeypatch):
    """``evaluate --game black-market`` without ``--zoo``: the other seats are Black Market's
    heuristics (``agents.game_agents``), not ``random``; a game without any gets random."""
    import agents
    from eval.evaluate import default_zoo

    heuristics = list(agents.game_agents("black-market").heuristics)
    assert default_zoo("black-market") == heuristics and "random" not in heuristics
    assert default_zoo("no-such-game") == ["random"]
    made = []
    real = agents.make_seeded
    monkeypatch.setattr(agents, "make_seeded", lambda name, *a, **k: made.append(name) or real(name, *a, **k))
    res = evaluate("random", 2, 24, seed=2, workers=1, progress=False, game="black-market")
    assert res["zoo"] == heuristics and res["games"] == 24
    assert sorted(set(made) - {"random"}) == sorted(heuristics)  # every heuristic was seated
    assert res["win_rate"] < 0.5  # random loses to the heuristics (it draws level with random)


def test_cli_help_lists_the_registered_games():
    from typer.testing import CliRunner

    from ripmarket_env.app.cli import app
    from ripmarket_env.games import ids

    for cmd in ("evaluate", "tournament", "balance", "bench"):
        text = " ".join(CliRunner().invoke(app, [cmd, "--help"], env={"COLUMNS": "400"}).output.split())
        assert ", ".join(ids()) in text, cmd
