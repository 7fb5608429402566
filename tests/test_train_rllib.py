"""``ripmarket train`` with ``backend: rllib`` (train/rllib_backend.py): config checks, the
league's policy mapping, the learner's weights mapped onto the project's checkpoint
format, and a few RLlib iterations on a local Ray instance whose checkpoint plays as a zoo
agent."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from train.config import ConfigError, config_from_dict, load_config

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "configs" / "ripmarket" / "rllib_ppo_4p.yaml"


def tiny(**over):
    d = load_config(CONFIG).to_dict()
    d.update(total_timesteps=100, n_envs=1, n_steps=64, batch_size=32, n_epochs=1, checkpoint_every=0,
             final_eval_games=0, progress=False, seed=5)
    d["league"].update(snapshot_every=40, pool_size=3)
    d.update(over)
    return config_from_dict(d)


# ----------------------------------------------------------------------------- config
def test_config_backend_is_checked():
    assert load_config(CONFIG).backend == "rllib"
    assert config_from_dict({}).backend == "sb3"
    with pytest.raises(ConfigError, match=r"'backend': 'tensorflow'; allowed: sb3 \| rllib"):
        config_from_dict({"backend": "tensorflow"})
    with pytest.raises(ConfigError, match=r"'policy.arch': 'seat'; allowed: mlp with backend rllib"):
        config_from_dict({"backend": "rllib", "policy": {"arch": "seat"}})
    with pytest.raises(ConfigError, match=r"'pretrain.games': 4; allowed: 0 with backend rllib"):
        config_from_dict({"backend": "rllib", "pretrain": {"games": 4}})
    with pytest.raises(ConfigError, match=r"unknown key 'rllib.workers'; allowed keys: num_env_runners"):
        config_from_dict({"backend": "rllib", "rllib": {"workers": 2}})
    with pytest.raises(ConfigError, match=r"'rllib.num_env_runners': -1"):
        config_from_dict({"rllib": {"num_env_runners": -1}})


def test_cli_refuses_resume_with_rllib(tmp_path):
    from typer.testing import CliRunner

    from ripmarket_env.app.cli import app

    r = CliRunner().invoke(app, ["train", str(CONFIG), "--resume", str(tmp_path / "x.zip"), "--out", str(tmp_path)])
    assert r.exit_code == 2 and "--resume takes a checkpoint of backend sb3" in r.output
    assert not (tmp_path / "runs").exists()


# ----------------------------------------------------------------------------- mapping
def test_policy_mapping_one_learner_seat_and_the_mix():
    from train.rllib_backend import LATEST, LEARNER, make_policy_mapping, module_ids

    cfg = tiny(league={"mix": {"self": 0.5, "zoo": 0.25, "random": 0.25}, "zoo": ["greedy-bc", "shark-bc"],
                       "pool_size": 3, "latest_share": 0.5, "snapshot_every": 40})
    fn, ids = make_policy_mapping(cfg), module_ids(cfg)
    assert ids == {"self": [LATEST, "snap_0", "snap_1"], "zoo": ["zoo_greedy-bc", "zoo_shark-bc"], "random": ["zoo_random"]}
    seats = [f"player_{i}" for i in range(cfg.num_players)]
    kinds = {k: 0 for k in ids}
    learner_seats = []
    for e in range(3000):
        got = [fn(a, f"episode-{e}") for a in seats]
        assert got == [fn(a, f"episode-{e}") for a in seats]  # the same on every call (and runner)
        assert got.count(LEARNER) == 1
        learner_seats.append(got.index(LEARNER))
        for m in got:
            if m != LEARNER:
                kinds[next(k for k, v in ids.items() if m in v)] += 1
    n = sum(kinds.values())
    assert kinds["self"] / n == pytest.approx(0.5, abs=0.03)
    assert kinds["zoo"] / n == pytest.approx(0.25, abs=0.03) and kinds["random"] / n == pytest.approx(0.25, abs=0.03)
    assert np.bincount(learner_seats, minlength=4).min() > 600  # every seat is the learner's about 1/4 of the time


# ----------------------------------------------------------------------------- weights
def test_learner_weights_map_onto_the_checkpoint_policy(tmp_path):
    """The RLlib module and the SB3 policy built from its weights give the same logits, and
    the saved checkpoint loads as a PolicyAgent playing the module's masked argmax."""
    import torch
    from gymnasium import spaces
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.rllib.examples.rl_modules.classes.action_masking_rlm import ActionMaskingTorchRLModule

    from agents.policy import load_agent
    from ripmarket_env.vector_env import RipMarketVecEnv
    from train.rllib_backend import model_config, save_checkpoint, sb3_policy

    cfg = tiny(policy={"arch": "mlp", "net_arch": [24, 16]})
    venv = RipMarketVecEnv(num_envs=32, num_players=4, seed=2)
    obs = venv.reset()
    n = venv.action_space.n
    space = spaces.Dict({"observations": spaces.Box(-np.inf, np.inf, (obs.shape[1],), np.float32),
                         "action_mask": spaces.Box(0, 1, (n,), np.int8)})
    torch.manual_seed(0)
    module = RLModuleSpec(module_class=ActionMaskingTorchRLModule, observation_space=space,
                          action_space=spaces.Discrete(n), model_config=model_config(cfg)).build()
    masks = venv.action_masks()
    with torch.no_grad():
        out = module.forward_inference({"obs": {"observations": torch.from_numpy(obs.copy()),
                                                "action_mask": torch.from_numpy(masks.astype(np.float32))}})
    rl_logits = out["action_dist_inputs"].numpy()
    state = {k: v.numpy() for k, v in module.state_dict().items()}
    policy = sb3_policy(cfg, state)
    with torch.no_grad():
        feats = policy.extract_features(torch.from_numpy(obs.copy()), policy.pi_features_extractor)
        sb3_logits = policy.action_net(policy.mlp_extractor.forward_actor(feats)).numpy()
    legal = masks == 1
    np.testing.assert_allclose(sb3_logits[legal], rl_logits[legal], rtol=1e-4, atol=1e-5)
    path = save_checkpoint(cfg, state, tmp_path / "latest.zip", steps=7)
    agent = load_agent(path)
    assert agent.metadata["backend"] == "rllib" and agent.metadata["training_steps"] == 7
    expected = np.where(legal, rl_logits, -np.inf).argmax(1)
    np.testing.assert_array_equal(agent.act_batch(obs, masks), expected)


# ----------------------------------------------------------------------------- a run
def test_snapshots_survive_the_weight_sync(local_ray):
    """A snapshot stays in its frozen module on the env runner through the next
    iterations' weight syncs (which carry the trained learner only); the older one moves on."""
    from train.rllib_backend import LATEST, Snapshots, _learner_state, ppo_config

    algo = ppo_config(tiny()).build_algo()
    try:
        def runner(module_id):
            return {k: np.asarray(v) for k, v in algo.env_runner.module[module_id].get_state().items()}

        def same(a, b):
            return all(np.allclose(a[k], b[k]) for k in a)

        snaps = Snapshots(algo, tiny())
        first = _learner_state(algo)
        snaps.take(first)
        algo.train()
        second = _learner_state(algo)
        assert not same(first, second)  # the learner trained
        snaps.take(second)
        algo.train()
        assert same(runner(LATEST), second) and same(runner("snap_0"), first) and same(runner("snap_1"), first)
        assert not same(_learner_state(algo), second)
    finally:
        algo.stop()


def test_rllib_training_run_checkpoint_plays_as_a_zoo_agent(local_ray, tmp_path):
    import yaml
    from typer.testing import CliRunner

    import agents
    from agents.policy import _factory
    from eval.evaluate import evaluate_vs_zoo, make_agent
    from ripmarket_env.app.cli import app
    from ripmarket_env.vector_env import RipMarketVecEnv

    cfg = tiny()
    config = tmp_path / "rllib.yaml"
    config.write_text(yaml.safe_dump(cfg.to_dict()), encoding="utf-8")
    r = CliRunner().invoke(app, ["train", str(config), "--out", str(tmp_path)])
    assert r.exit_code == 0, r.output
    assert "(rllib):" in r.output and "learner steps/s" in r.output
    (ckpt,) = (tmp_path / "checkpoints").glob("*/latest.zip")
    (run_dir,) = (tmp_path / "runs").glob("*")
    # TensorBoard scalars
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    acc = EventAccumulator(str(run_dir))
    acc.Reload()
    tags = set(acc.Tags()["scalars"])
    assert {"charts/SPS", "charts/pool_size", "losses/policy_loss", "losses/entropy"} <= tags
    sps = acc.Scalars("charts/SPS")
    assert len(sps) >= 2 and sps[-1].step >= cfg.total_timesteps  # two iterations or more, to the step budget
    assert max(e.value for e in acc.Scalars("charts/pool_size")) >= 2  # the initial policy and a snapshot
    from agents.checkpoint import read_metadata

    assert read_metadata(ckpt)["training_steps"] >= cfg.total_timesteps
    # The checkpoint: an agent of the zoo (evaluate's path, and registered by name)
    bot = make_agent(str(ckpt), seed=1)
    agents.register("rllib-run-test", _factory(ckpt), "test checkpoint")
    named = agents.make("rllib-run-test")
    venv = RipMarketVecEnv(num_envs=8, num_players=4, opponents="random", seed=3)
    obs = venv.reset()
    for _ in range(30):  # the env raises IllegalActionError on any illegal move
        masks = venv.action_masks()
        a = bot.act_batch(obs, masks)
        np.testing.assert_array_equal(a, named.act_batch(obs, masks))
        obs, *_ = venv.step(a)
    result = evaluate_vs_zoo(bot, 4, 4, ["random"], seed=2)
    assert result["games"] == 4


def test_rllib_trains_another_game(local_ray, tmp_path):
    """``backend: rllib`` builds its env, zoo modules, checkpoint and final evaluation from
    the config's game: a few iterations of The Rune Market against its heuristics write a
    checkpoint of that game, which plays it legally as an agent."""
    from agents.checkpoint import read_metadata
    from agents.policy import load_agent
    from eval import arena
    from ripmarket_env.games import get
    from train.rllib_backend import train

    cfg = config_from_dict({"game": "rune-market", "backend": "rllib", "num_players": 3, "total_timesteps": 64,
                            "n_envs": 1, "n_steps": 32, "batch_size": 32, "n_epochs": 1, "seed": 3,
                            "policy": {"arch": "mlp", "net_arch": [16]}, "progress": False,
                            "league": {"mix": {"self": 0.3, "zoo": 0.5, "random": 0.2}, "snapshot_every": 32,
                                       "pool_size": 2},
                            "checkpoint_every": 0, "final_eval_games": 2, "eval_every": 0})
    assert cfg.league.zoo == ["rm-banker", "rm-raider", "rm-bandit"]
    summary = train(cfg, tmp_path)
    meta = read_metadata(summary["checkpoint"])
    assert meta["game"] == "rune-market" and meta["backend"] == "rllib" and meta["training_steps"] >= 64
    assert summary["final_eval"]["games"] == 2 and summary["final_eval"]["zoo"] == cfg.league.eval_zoo
    spec = get("rune-market")
    bot = load_agent(summary["checkpoint"], seed=0)
    res = arena.play(spec, spec.make_rules(3), [1, 2], np.zeros((2, 3), np.int64), [bot])
    assert res.engine.terminated.all()
