"""The commands of ``make demo``'s environment (the eval extra: no torch, no
stable-baselines3), as a newcomer runs them from the README: trained bots are listed as
needing the train extra, a game against the heuristics plays, a trained bot asked for is
refused in one line, and the bench leaves out the vector env with the reason; never a
traceback. Each command runs in a process where importing torch or stable-baselines3
fails, as it does where they are not installed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
_BLOCK = ("import sys; sys.modules['torch'] = None; sys.modules['stable_baselines3'] = None; "
          "sys.argv = ['ripmarket', *sys.argv[1:]]; from ripmarket_env.app.cli import app; app()")


def run(*args: str, stdin: str = "") -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", _BLOCK, *args], input=stdin, capture_output=True, text=True,
                          timeout=600, cwd=ROOT)


@pytest.mark.parametrize("game, trained", [("ripmarket", "ppo-6p"), ("rune-market", "rm-ppo-search"),
                                           ("black-market", "bm-ppo")])
def test_a_game_without_torch_lists_its_trained_bots_as_needing_it_and_plays_the_rest(game, trained):
    res = run("agents", "--game", game)
    assert res.returncode == 0 and "Traceback" not in res.stderr, res.stderr[-2000:]
    text = " ".join(res.stdout.replace("│", " ").split())
    assert "needs torch, from the train extra: pip install 'ripmarket[train]'" in text, text[-1500:]
    res = run("play", "--game", game, "--seed", "3", stdin="q\n")  # the default opponents need no torch
    assert res.returncode == 0 and "Traceback" not in res.stderr, res.stderr[-2000:]
    assert "You left the game." in res.stdout
    res = run("play", "--game", game, "--opponents", trained)
    assert res.returncode == 2 and "Traceback" not in res.stderr, res.stderr[-2000:]
    assert res.stderr.startswith(f"error: --opponents: bot {trained!r} ") and "needs torch" in res.stderr, res.stderr


def test_distill_and_the_env_bench_without_torch_say_what_to_install():
    res = run("distill", "--games", "10")
    assert res.returncode == 2 and "Traceback" not in res.stderr, res.stderr[-2000:]
    assert "distilling needs the train extra" in res.stderr
    res = run("bench", "--suite", "env", "--players", "2", "--num-envs", "8", "--seconds", "0.05")
    assert res.returncode == 0 and "Traceback" not in res.stderr, res.stderr[-2000:]
    assert "vector env: not measured: the vector env needs stable-baselines3" in " ".join(res.stdout.split())
