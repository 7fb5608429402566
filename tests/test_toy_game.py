"""The proof that a game is a plugin: the toy game of ``tests/toy_game.py`` (registered by
``tests/conftest.py`` for the session, never shipped) gets every layer of the zoo without
a line of its own in ``ripmarket_env/app``, ``ripmarket_env/envs``, ``eval`` or ``train``.

The shared conformance suite runs it like any registered game (tests/test_conformance.py);
this file holds its rules tests (``TOY-x``), the registry's plugin mechanisms, and the
layers above the envs run through the same commands a person would use.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import ripmarket_env
import importlib

G = importlib.import_module("ripmarket_env.games")

ROOT = Path(__file__).resolve().parents[1]
TOY = "toy"


def spec():
    return G.get(TOY)


def _engine(n=3, seed=7):
    e = spec().make_engine(spec().make_rules(n), 1)
    e.reset([seed])
    return e


def _play_out(e, rng):
    while not e.terminated[0]:
        e.step([int(rng.choice(e.legal_actions(0)))])


# ------------------------------------------------------------------ the rules
def test_toy_1_deal_two_hidden_cards_each():
    """TOY-1: 16 cards, two of each value; each seat holds two, the rest is the deck."""
    e = _engine(4)
    r = e.state[0]
    assert r["hand_n"][:4].tolist() == [2, 2, 2, 2]
    assert int(r["deck_n"]) == 16 - 8
    counts = r["hand"][:4].sum(axis=0) + np.bincount(r["deck"][: r["deck_n"]], minlength=8)
    assert counts.tolist() == [2] * 8


def test_toy_2_pair_bonus_and_draw():
    """TOY-2: a card equal to the one just played scores 3 more; the player draws after playing."""
    e = _engine(2, seed=3)
    r = e.state[0]
    q = int(r["actor"])
    a = e.legal_actions(0)[0]
    e.step([a])
    assert int(r["score"][q]) == a + 1 and int(r["hand_n"][q]) == 2
    # force a pair: give the next seat the same value and play it
    nxt = int(r["actor"])
    r["hand"][nxt] = 0
    r["hand"][nxt, a] = 2
    r["mask"][:] = 0
    r["mask"][a] = 1
    r["n_legal"] = 1
    e.step([a])
    assert int(r["score"][nxt]) == a + 1 + 3


def test_the_games_heuristics_beat_random():
    """The toy's own agents registered with their roles; toy-high wins more than its share."""
    import agents
    from eval.evaluate import evaluate_vs_zoo

    assert agents.game_agents(TOY).heuristics == ("toy-high", "toy-low")
    assert set(agents.names(TOY)) >= {"random", "toy-high", "toy-low"}
    res = evaluate_vs_zoo(agents.make("toy-high", game=TOY), 2, 300, ["random"], seed=1, game=TOY)
    assert res["win_rate"] > 0.55, res


def test_toy_3_and_4_game_ends_when_no_seat_holds_a_card_top_score_wins():
    """TOY-3/TOY-4: every card is played, then the highest score(s) get +1 and the others -1."""
    rng = np.random.default_rng(0)
    for seed in range(20):
        e = _engine(3, seed)
        steps = 0
        while not e.terminated[0]:
            e.step([int(rng.choice(e.legal_actions(0)))])
            steps += 1
        r = e.state[0]
        assert steps == 16 and r["hand_n"][:3].tolist() == [0, 0, 0]
        top = r["score"][:3].max()
        assert e.rewards()[0].tolist() == [1.0 if s == top else -1.0 for s in r["score"][:3]]


def test_a_hidden_draw_is_named_only_to_its_seat():
    """Event texts: a drawn card is named to the drawer (and the god view) only."""
    e = _engine(3, 5)
    q = int(e.state[0]["actor"])
    e.step([e.legal_actions(0)[0]])
    draw = [ev for ev in e.events(0) if ev.kind == "draw"][0]
    assert "draws a card" in draw.text_for((q + 1) % 3) and "draws a card" in draw.text_for(None)
    assert draw.text_for(q) == draw.text_for("god") != draw.text_for(None)


# ------------------------------------------------------------------ the registry's plugin mechanisms
def test_registered_for_the_session_but_not_shipped():
    assert TOY in G.ids() and TOY in ripmarket_env.games()
    out = subprocess.run([sys.executable, "-c", "import ripmarket_env; print(ripmarket_env.games())"],
                         capture_output=True, text=True, cwd=ROOT,
                         env={k: v for k, v in os.environ.items() if k != "RIPMARKET_GAMES"})
    assert out.returncode == 0 and TOY not in out.stdout and "ripmarket" in out.stdout


@pytest.mark.parametrize("bad,msg", [
    (("", "m:SPEC"), "non-empty word"), (("a b", "m:SPEC"), "without spaces"),
    (("ripmarket", "m:SPEC"), "already registered"), (("x", "no_colon"), "module:attribute"),
])
def test_register_refuses_bad_ids_and_paths(bad, msg):
    with pytest.raises(ValueError, match=msg):
        G.register(*bad)
    assert "x" not in G.ids() and "" not in G.ids()


def test_a_loader_for_another_game_is_refused():
    G.register("toy-wrong", "tests.toy_game:SPEC")
    try:
        with pytest.raises(ValueError, match="is the spec of 'toy'"):
            G.get("toy-wrong")
    finally:
        G.unregister("toy-wrong")
    with pytest.raises(ValueError, match="packaged games"):
        G.unregister("ripmarket")


# ------------------------------------------------------------------ the layers above, as a person uses them
def _cli(*args, timeout=600):
    exe = Path(sys.executable).with_name("ripmarket")
    return subprocess.run([str(exe), *args], capture_output=True, text=True, timeout=timeout, cwd=ROOT,
                          stdin=subprocess.DEVNULL)


def test_cli_lists_the_toy_game():
    out = _cli("games")
    assert out.returncode == 0 and "Pairs" in out.stdout and "Toy-v0" in out.stdout


def test_evaluate_and_tournament(tmp_path):
    out = _cli("evaluate", "random", "--game", TOY, "--players", "3", "--games", "60", "--seed", "4")
    assert out.returncode == 0, out.stderr
    assert "wins" in out.stdout and "at 3 players" in out.stdout
    out = _cli("tournament", "--game", TOY, "--agents", "random,toy-high,toy-low", "--players", "3", "--games", "60",
               "--seed", "2", "--out", str(tmp_path / "t"))
    assert out.returncode == 0, out.stderr
    report = json.loads(next((tmp_path / "t").glob("*.json")).read_text())
    assert report


def test_bench_engine(tmp_path):
    out = _cli("bench", "--game", TOY, "--suite", "engine", "--seconds", "0.2", "--players", "3",
               "--batch", "64", "--json", "--out", str(tmp_path / "b.json"))
    assert out.returncode == 0, out.stderr
    data = json.loads((tmp_path / "b.json").read_text())
    assert data


TOY_CONFIG = """\
game: toy
exp_name: toy
seed: 1
num_players: 3
total_timesteps: 256
n_envs: 8
n_steps: 16
batch_size: 64
n_epochs: 1
policy: {arch: mlp, net_arch: [16]}
league: {mix: {self: 0.4, zoo: 0.4, random: 0.2}, snapshot_every: 128, pool_size: 2}
eval_every: 128
eval_games: 4
checkpoint_every: 128
final_eval_games: 4
progress: false
"""


def test_train_with_its_league_resume_and_evaluate_the_checkpoint(tmp_path):
    """`ripmarket train` for a few hundred steps against the toy's league (its heuristics,
    snapshots, random), `--resume` from the run, then `ripmarket evaluate` the checkpoint."""
    cfg = tmp_path / "toy.yaml"
    cfg.write_text(TOY_CONFIG)
    out = _cli("train", str(cfg), "--out", str(tmp_path / "a"))
    assert out.returncode == 0, out.stderr[-2000:]
    (run,) = (tmp_path / "a" / "checkpoints").iterdir()
    summary = json.loads((run / "summary.json").read_text())
    assert summary and (run / "final.zip").is_file()
    out = _cli("train", str(cfg), "--out", str(tmp_path / "b"), "--resume", str(run / "latest.zip"),
               "--total-timesteps", "512")
    assert out.returncode == 0, out.stderr[-2000:]
    (run2,) = (tmp_path / "b" / "checkpoints").iterdir()
    import zipfile

    with zipfile.ZipFile(run2 / "final.zip") as z:
        meta = json.loads(z.read("ripmarket.json"))
    assert meta["game"] == TOY and meta["training_steps"] >= 512
    out = _cli("evaluate", str(run2 / "final.zip"), "--game", TOY, "--players", "3", "--games", "30")
    assert out.returncode == 0, out.stderr[-2000:]
    assert "wins" in out.stdout
    cfg.write_text(TOY_CONFIG.replace("seed: 1", "seed: 1\nreward_mode: placement"))
    out = _cli("train", str(cfg), "--out", str(tmp_path / "c"))
    assert out.returncode == 2 and "toy has one reward" in out.stderr
