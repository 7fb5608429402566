"""Cloning a teacher into a trained network (``pretrain.teacher``, docs/TRAINING.md): the
recording holds the teacher's decisions only, the actor learns them, the critic is left as
it was, and ``total_timesteps: 0`` makes the warm start the whole run."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import sb3_contrib  # noqa: F401

from agents.checkpoint import load_policy, read_metadata
from train import distill as D
from train.config import ConfigError, config_from_dict

TINY = {"policy": {"arch": "sparse", "sparse_hidden": 16, "net_arch": [16]}, "progress": False,
        "n_envs": 4, "n_steps": 16, "batch_size": 64, "n_epochs": 1, "eval_every": 0, "checkpoint_every": 0,
        "final_eval_games": 0, "league": {"mix": {"random": 1.0}, "eval_zoo": ["random"], "snapshot_every": 64}}


def _critic(state: dict) -> dict:
    return {k: v.clone() for k, v in state.items() if k.startswith(("vf_features_extractor.", "mlp_extractor.value_net.",
                                                                    "value_net."))}


def test_teacher_recording_holds_only_the_teachers_decisions():
    """``record="guest"``: every recorded decision is the guest's (agent index len(styles)),
    and is what that agent plays on the recorded observation."""
    import agents

    styles = ("hoarder", "survivor")
    data = D._collect_chunk((4, styles, 3, 11, 0, "greedy", "guest"))
    assert len(data) > 0 and set(data.style.tolist()) == {len(styles)}
    greedy = agents.make("greedy", seed=0)
    again = np.array([greedy.act(o.astype(np.float32), m) for o, m in zip(data.obs, data.mask)])
    assert (again == data.action).mean() > 0.95  # float16 storage may round a rare tie-break
    zoo = D._collect_chunk((4, styles, 3, 11, 0, "greedy"))
    assert set(zoo.style.tolist()) <= {0, 1}
    with pytest.raises(ValueError, match="record must be 'zoo' or 'guest'"):
        D.collect(4, 1, styles=styles, workers=1, progress=False, guest="greedy", record="teacher")
    with pytest.raises(ValueError, match="needs a guest"):
        D.collect(4, 1, styles=styles, workers=1, progress=False, record="guest")


def test_teacher_config_is_checked():
    cfg = config_from_dict({"init_from": "ppo-at-6p", "total_timesteps": 0,
                            "pretrain": {"games": 10, "teacher": "ppo-lookahead", "winners_only": False}})
    assert (cfg.pretrain.teacher, cfg.total_timesteps, cfg.init_from) == ("ppo-lookahead", 0, "ppo-at-6p")
    with pytest.raises(ConfigError, match=r"'pretrain.teacher': 'no-such-bot'; allowed: .*greedy"):
        config_from_dict({"pretrain": {"games": 10, "teacher": "no-such-bot"}})
    with pytest.raises(ConfigError, match=r"'pretrain.games'.*with pretrain.teacher"):
        config_from_dict({"pretrain": {"teacher": "greedy"}})
    with pytest.raises(ConfigError, match="init_from and pretrain.games both start the policy"):
        config_from_dict({"init_from": "ppo-at-6p", "pretrain": {"games": 10}})
    with pytest.raises(ConfigError, match=r"'total_timesteps': 0; allowed: .*only with pretrain.games"):
        config_from_dict({"total_timesteps": 0})


def test_cloning_a_teacher_into_a_checkpoint(tmp_path):
    """A trained network goes on as its teacher's pupil: it agrees with the teacher more
    after than before, its critic is bit for bit the one it started with, and the run of
    ``total_timesteps: 0`` writes its checkpoints and a summary and plays no PPO."""
    from train.selfplay import train

    base = train(config_from_dict({**TINY, "exp_name": "base", "num_players": 4, "total_timesteps": 128}),
                 tmp_path / "base")
    start, _ = load_policy(Path(base["checkpoint"]))
    cfg = config_from_dict({**TINY, "exp_name": "pupil", "num_players": 4, "total_timesteps": 0,
                            "init_from": base["checkpoint"], "final_eval_games": 2,
                            "pretrain": {"games": 6, "seed": 3, "teacher": "greedy", "winners_only": False,
                                         "epochs": 30, "learning_rate": 0.003}})
    summary = train(cfg, tmp_path / "pupil")
    pre = summary["pretrain"]
    assert summary["steps"] == 0 and pre["teacher"] == "greedy"
    assert Path(pre["recording"]).name == "greedy-vs-zoo4p_6games_seed3.npz"
    assert pre["agreement_after"] > pre["agreement_before"] and pre["agreement_after"] > 0.6
    assert summary["final_eval"]["games"] == 2
    for tag in ("final", "best"):
        path = Path(summary["checkpoint"]).with_name(f"{tag}.zip")
        assert read_metadata(path)["tag"] == tag
    pupil, _ = load_policy(Path(summary["checkpoint"]))
    a, b = start.state_dict(), pupil.state_dict()
    critic = _critic(a)
    assert critic and all(np.array_equal(v.numpy(), b[k].numpy()) for k, v in critic.items())
    assert not np.array_equal(a["action_net.weight"].numpy(), b["action_net.weight"].numpy())
