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


def test_evaluate_plays_the_mode_it_is_given_and_parity_counts_the_sides():
    """``ripmarket evaluate --mode`` (BM-1.3: Black Market's teams, its default, or ffa):
    in teams the evaluated seat wins with its side (BM-1.2), so parity is one over the
    sides (50% at 4 players) and a heuristic against copies of itself wins about half its
    games; in free-for-all parity is one over the seats and it wins about a quarter. A mode
    the game lacks is refused with the allowed ones."""
    from typer.testing import CliRunner

    from ripmarket_env.app.cli import app

    kw = dict(seed=5, workers=1, progress=False, game="black-market")
    teams = evaluate("bm-builder", 4, 200, ["bm-builder"], **kw)
    ffa = evaluate("bm-builder", 4, 200, ["bm-builder"], rules={"mode": "ffa"}, **kw)
    assert teams["parity"] == 0.5 and ffa["parity"] == 0.25
    assert ffa["rules"] == {"mode": "ffa"} and "rules" not in teams
    assert teams["win_rate"] > 0.38 and ffa["win_rate"] < 0.37, (teams["win_rate"], ffa["win_rate"])
    runner = CliRunner()
    res = runner.invoke(app, ["evaluate", "random", "--game", "black-market", "--players", "4", "--mode", "ffa",
                              "--games", "8", "--workers", "1", "--zoo", "random", "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert out["rules"] == {"mode": "ffa"} and out["parity"] == 0.25
    for args, says in ((["--game", "black-market", "--players", "4", "--mode", "solo"], "allowed: teams, ffa"),
                       (["--game", "rune-market", "--players", "3", "--mode", "ffa"], "has no modes")):
        res = runner.invoke(app, ["evaluate", "random", *args, "--games", "2"])
        assert res.exit_code == 2 and says in " ".join(res.output.split()), res.output


def test_evaluate_takes_the_game_of_a_checkpoint_file():
    """``ripmarket evaluate FILE.zip`` without ``--game`` plays the checkpoint's own game (the
    hint a training run prints names the file alone); an explicit other game is refused."""
    from typer.testing import CliRunner

    from agents.policy import CHECKPOINT_DIR
    from ripmarket_env.app.cli import app

    runner = CliRunner()
    ckpt = str(CHECKPOINT_DIR / "rm-ppo-4p.zip")
    res = runner.invoke(app, ["evaluate", ckpt, "--players", "4", "--games", "2", "--workers", "1", "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert out["game"] == "rune-market" and out["zoo"] == ["rm-banker", "rm-raider", "rm-bandit"]
    res = runner.invoke(app, ["evaluate", ckpt, "--game", "ripmarket", "--games", "2"])
    assert res.exit_code == 2 and "a checkpoint of game 'rune-market'; it cannot play 'ripmarket'" in res.output
