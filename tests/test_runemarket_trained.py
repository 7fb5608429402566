"""The shipped MaskablePPO bot of The Rune Market (``rm-ppo-4p``): registered for its game
only, its checkpoint names its game and the config it was trained with, it plays legal
games through the arena, and another game refuses it with a one-line error."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

import agents  # noqa: E402
from agents.checkpoint import CheckpointError, check_compatible, read_metadata  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
CKPT = ROOT / "agents" / "checkpoints" / "rm-ppo-4p.zip"
CONFIG = ROOT / "configs" / "rm_ppo_4p.yaml"


def test_registered_for_the_rune_market_only():
    assert "rm-ppo-4p" in agents.names("rune-market")
    assert "rm-ppo-4p" not in agents.names("ripmarket")
    assert "rm-banker" in agents.describe("rm-ppo-4p", "rune-market")


def test_checkpoint_names_its_game_and_config():
    from train.runemarket_ppo import load_config

    meta = read_metadata(CKPT)  # checked against the current code of its own game
    assert meta["game"] == "rune-market" and meta["obs_size"] == 191 and meta["num_actions"] == 50
    assert meta["num_players"] == [4] and meta["training_steps"] > 100_000
    cfg = load_config(CONFIG)
    assert {k: v for k, v in cfg.items() if k not in ("out",)} == meta["config"]
    with pytest.raises(CheckpointError, match="game 'rune-market'; it cannot play 'ripmarket'"):
        check_compatible(meta, "rm-ppo-4p", game="ripmarket")


def test_another_game_refuses_it():
    from eval.evaluate import make_agent

    with pytest.raises(CheckpointError, match="cannot play 'ripmarket'"):
        make_agent(str(CKPT), game="ripmarket")
    assert make_agent(str(CKPT), game="rune-market") is not None


def test_plays_legal_games_against_the_heuristics():
    from eval import arena
    from ripmarket_env.games import get

    spec = get("rune-market")
    pool = [agents.make_seeded(n, i, game="rune-market") for i, n in
            enumerate(["rm-banker", "rm-raider", "rm-bandit", "rm-ppo-4p"])]
    seats = np.array([np.roll([0, 1, 2, 3], g) for g in range(8)])
    res = arena.play(spec, spec.make_rules(4), list(range(900, 908)), seats, pool)  # raises on an illegal action
    assert res.engine.terminated.all() and (res.engine.state["end_reason"] == 0).all()
    ppo = np.argmax(seats == 3, axis=1)
    assert 0 <= res.winners[np.arange(8), ppo].sum() <= 8


def test_bad_training_config_is_a_one_line_error(tmp_path):
    from train.runemarket_ppo import load_config

    bad = tmp_path / "bad.yaml"
    bad.write_text(CONFIG.read_text() + "learning_rat: 0.1\n")
    with pytest.raises(ValueError, match="unknown key 'learning_rat'; allowed: "):
        load_config(bad)
    bad.write_text(CONFIG.read_text().replace("game: rune-market", "game: ripmarket"))
    with pytest.raises(ValueError, match="game must be 'rune-market'"):
        load_config(bad)
