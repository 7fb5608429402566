"""``ripmarket train`` with ``backend: rllib`` (train/rllib_backend.py): config checks, the
league vector env's next-step auto-reset, the learner's weights mapped onto the project's
checkpoint format, snapshots on the env runners, and RLlib runs of every game on a local
Ray instance whose checkpoints play as zoo agents."""

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
    with pytest.raises(ConfigError, match=r"'rllib.num_envs_per_env_runner': 4; allowed: 1 \(each env runner steps "
                                          r"n_envs games in one engine batch: raise n_envs\)"):
        config_from_dict({"backend": "rllib", "rllib": {"num_envs_per_env_runner": 4}})
    # Configs and checkpoints of before the batched env (num_envs_per_env_runner: 1) still read.
    assert config_from_dict({"rllib": {"num_envs_per_env_runner": 1}}).rllib.num_envs_per_env_runner == 1


def test_ppo_settings_are_the_sb3_paths():
    """RLlib's PPO gets the config's PPO settings, and none of its own that SB3's MaskablePPO
    does not have: no KL penalty, no clipping of the value loss."""
    from train.rllib_backend import ppo_config
    from train.rllib_module import LeaguePPOModule

    cfg = load_config(CONFIG)
    c = ppo_config(cfg)
    assert c.use_kl_loss is False and c.vf_clip_param == float("inf")
    assert (c.lr, c.gamma, c.lambda_, c.clip_param, c.entropy_coeff, c.vf_loss_coeff, c.grad_clip) == (
        cfg.learning_rate, cfg.gamma, cfg.gae_lambda, cfg.clip_range, cfg.ent_coef, cfg.vf_coef, cfg.max_grad_norm)
    assert (c.train_batch_size_per_learner, c.minibatch_size, c.num_epochs) == (
        cfg.n_envs * cfg.n_steps, cfg.batch_size, cfg.n_epochs)
    assert c.rl_module_spec.module_class is LeaguePPOModule and c.num_envs_per_env_runner == cfg.n_envs
    assert not c.add_default_connectors_to_env_to_module_pipeline
    assert not c.add_default_connectors_to_module_to_env_pipeline


def test_cli_refuses_resume_with_rllib(tmp_path):
    from typer.testing import CliRunner

    from ripmarket_env.app.cli import app

    r = CliRunner().invoke(app, ["train", str(CONFIG), "--resume", str(tmp_path / "x.zip"), "--out", str(tmp_path)])
    assert r.exit_code == 2 and "--resume takes a checkpoint of backend sb3" in r.output
    assert not (tmp_path / "runs").exists()


# ----------------------------------------------------------------------------- the env
def _league_env(cfg, seed=4):
    from train.rllib_backend import league_vector_env_class

    return league_vector_env_class()(cfg, seed)


def test_league_env_resets_on_the_next_step():
    """RLlib's env runner reads Gymnasium's next-step auto-reset: the step that ends a game
    returns its last observation (R-11: its final reward, terminated); the next step ignores
    that game's action and returns the first decision of the game the batch dealt, with
    reward 0; every other game steps as usual. A row is the observation, then the 0/1 mask
    of the legal actions. Illegal actions still raise."""
    from ripmarket_env.core.engine import IllegalActionError

    env = _league_env(tiny(n_envs=6))
    assert env.metadata["autoreset_mode"].value == "NextStep"
    n, A = env.batch.obs_size, env.batch.num_actions
    obs, _ = env.reset()
    assert obs.shape == (6, n + A) and obs.dtype == np.float32 and env.single_observation_space.contains(obs[0])
    np.testing.assert_array_equal(obs[:, :n], env.batch.obs)
    np.testing.assert_array_equal(obs[:, n:], env.batch.masks)
    rng = np.random.default_rng(0)

    def legal(o):
        keys = rng.random((len(o), A))
        keys[o[:, n:] == 0] = -1
        return keys.argmax(1)

    bad = legal(obs)
    bad[0] = int(np.flatnonzero(obs[0, n:] == 0)[0])
    before = obs.copy()
    with pytest.raises(IllegalActionError):
        env.step(bad)
    ended_seen = 0
    for _ in range(400):
        obs, rew, term, trunc, _ = env.step(legal(obs))
        assert not trunc.any()
        assert np.all(rew[~term] == 0)
        live = ~term
        np.testing.assert_array_equal(obs[live, n:], env.batch.masks[live])
        if term.any():
            ended = np.flatnonzero(term)
            assert np.all(obs[ended, n:] == 1)  # a last observation: nothing to decide
            waiting = env.batch.obs[ended].copy()  # the new deals, held for one step
            episodes = env.batch.episode[ended].copy()
            garbage = np.zeros(6, np.int64)  # any action: the held games ignore theirs
            acts = legal(obs)
            acts[ended] = garbage[ended]
            nxt, rew2, term2, _, _ = env.step(acts)
            assert np.all(rew2[ended] == 0) and not term2[ended].any()
            np.testing.assert_array_equal(nxt[ended, :n], waiting)
            np.testing.assert_array_equal(env.batch.episode[ended], episodes)
            assert nxt[ended, n:].any(axis=1).all()
            obs = nxt
            ended_seen += len(ended)
            if ended_seen >= 6:
                break
    assert ended_seen >= 6
    assert not np.array_equal(before, obs)
    # The hold is the rllib env's alone: the SB3 league batch still refuses -1 as illegal.
    env.batch.holds = False
    with pytest.raises(IllegalActionError):
        env.batch.step(np.full(6, -1))


# ----------------------------------------------------------------------------- weights
def test_learner_weights_map_onto_the_checkpoint_policy(tmp_path):
    """The learner's module (``LeaguePPOModule``, rows of observation and mask) computes what
    RLlib's ``ActionMaskingTorchRLModule`` computes with the same weights (masked logits for
    sampling and for training, values); it samples legal actions from the softmax of those
    logits with their log-probabilities; the SB3 policy built from its weights gives the same
    logits, and the saved checkpoint loads as a PolicyAgent playing the module's masked argmax."""
    import torch
    from gymnasium import spaces
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.rllib.examples.rl_modules.classes.action_masking_rlm import ActionMaskingTorchRLModule

    from agents.policy import load_agent
    from ripmarket_env.vector_env import RipMarketVecEnv
    from train.rllib_backend import masked_observation_space, model_config, save_checkpoint, sb3_policy
    from train.rllib_module import LeaguePPOModule, ModuleToRows, RowsToModule

    cfg = tiny(policy={"arch": "mlp", "net_arch": [24, 16]})
    venv = RipMarketVecEnv(num_envs=32, num_players=4, seed=2)
    obs = venv.reset()
    n = venv.action_space.n
    box = spaces.Box(-np.inf, np.inf, (obs.shape[1],), np.float32)
    space = spaces.Dict({"observations": box, "action_mask": spaces.Box(0, 1, (n,), np.int8)})
    torch.manual_seed(0)
    module = RLModuleSpec(module_class=LeaguePPOModule, observation_space=masked_observation_space(box, n),
                          action_space=spaces.Discrete(n), model_config=model_config(cfg)).build()
    reference = RLModuleSpec(module_class=ActionMaskingTorchRLModule, observation_space=space,
                             action_space=spaces.Discrete(n), model_config=model_config(cfg)).build()
    reference.load_state_dict(module.state_dict(), strict=True)  # the same layers, the same names
    masks = venv.action_masks()
    legal = masks == 1
    rows = torch.from_numpy(np.concatenate([obs, masks.astype(np.float32)], axis=1))

    def ref_batch():
        return {"obs": {"observations": torch.from_numpy(obs.copy()),
                        "action_mask": torch.from_numpy(masks.astype(np.float32))}}

    with torch.no_grad():
        out = module.forward_inference({"obs": rows})
        ref = reference.forward_inference(ref_batch())["action_dist_inputs"].numpy()
        train_out = module.forward_train({"obs": rows})["action_dist_inputs"].numpy()
        ref_train = reference.forward_train({"obs": torch.from_numpy(obs.copy()),
                                             "action_mask": torch.from_numpy(masks.astype(np.float32))})
        values = module.compute_values({"obs": rows}).numpy()
        ref_values = reference.compute_values(ref_batch()).numpy()
    rl_logits = out["action_dist_inputs"].numpy()
    np.testing.assert_allclose(rl_logits, ref, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(train_out, ref_train["action_dist_inputs"].numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(values, ref_values, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(out["actions"].numpy(), np.where(legal, rl_logits, -np.inf).argmax(1))
    # Sampling: legal actions, their log-probabilities, the softmax's frequencies.
    many = rows[:1].repeat(20_000, 1)
    explored = module.forward_exploration({"obs": many})
    acts = explored["actions"].numpy()
    assert legal[0, acts].all()
    logp = torch.log_softmax(torch.from_numpy(ref[:1]), -1).numpy()[0]
    np.testing.assert_allclose(explored["action_logp"].numpy(), logp[acts], rtol=1e-5, atol=1e-6)
    freq = np.bincount(acts, minlength=n) / len(acts)
    np.testing.assert_allclose(freq, np.exp(logp), atol=0.02)
    # The env runner's connectors: rows of the episodes in, numpy columns out.
    class Ep:
        def __init__(self, row):
            self.row = row

        def get_observations(self, i):
            assert i == -1
            return self.row

    batch = RowsToModule()(rl_module=module, batch={}, episodes=[Ep(r) for r in rows.numpy()[:5]])
    torch.testing.assert_close(batch["obs"], rows[:5])
    to_env = ModuleToRows()(rl_module=module, batch=module.forward_exploration(batch), episodes=[])
    assert isinstance(to_env["actions"], np.ndarray) and to_env["actions"].shape == (5,)
    assert legal[np.arange(5), to_env["actions"]].all()
    state = {k: v.numpy() for k, v in module.state_dict().items()}
    policy = sb3_policy(cfg, state)
    with torch.no_grad():
        feats = policy.extract_features(torch.from_numpy(obs.copy()), policy.pi_features_extractor)
        sb3_logits = policy.action_net(policy.mlp_extractor.forward_actor(feats)).numpy()
    np.testing.assert_allclose(sb3_logits[legal], rl_logits[legal], rtol=1e-4, atol=1e-5)
    path = save_checkpoint(cfg, state, tmp_path / "latest.zip", steps=7)
    agent = load_agent(path)
    assert agent.metadata["backend"] == "rllib" and agent.metadata["training_steps"] == 7
    expected = np.where(legal, rl_logits, -np.inf).argmax(1)
    np.testing.assert_array_equal(agent.act_batch(obs, masks), expected)


# ----------------------------------------------------------------------------- a run
def test_snapshots_reach_every_runners_league(local_ray):
    """The pool starts with the initial weights; a snapshot taken after an update is frozen
    into the env runner's league as a policy playing the learner's actions, and stays put
    through the next iterations."""
    import torch

    from train.rllib_backend import Snapshots, _learner_state, ppo_config, sb3_policy

    cfg = tiny()
    algo = ppo_config(cfg).build_algo()
    try:
        league = algo.env_runner.env.unwrapped.league
        snaps = Snapshots(algo, cfg)
        first = _learner_state(algo)
        snaps.take(first, 0)
        assert len(league.snap_ids) == 1
        algo.train()
        second = _learner_state(algo)
        assert not all(np.allclose(first[k], second[k]) for k in first)  # the learner trained
        snaps.take(second, 64)
        algo.train()
        assert len(league.snap_ids) == 2 and league.snap_steps == [0, 64]
        frozen = league.agents[league.snap_ids[1]].policy
        want = sb3_policy(cfg, second)
        for (k, v), w in zip(frozen.state_dict().items(), want.state_dict().values()):
            torch.testing.assert_close(v, w, msg=k)
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


@pytest.mark.parametrize("game", ["ripmarket", "black-market", "rune-market"])
def test_rllib_trains_every_game_from_its_smoke_config(local_ray, tmp_path, game):
    """Each game's ``configs/<game>/smoke.yaml`` with ``backend: rllib`` (a tmp copy: the MLP,
    no warm start, a few hundred steps): the league of the game's heuristics, snapshots and
    the random agent in the env, a checkpoint of that game that loads as an agent and plays
    whole games legally (the engine raises IllegalActionError on any illegal move)."""
    import yaml

    from agents.checkpoint import read_metadata
    from agents.policy import load_agent
    from eval import arena
    from ripmarket_env.games import get
    from train.rllib_backend import train

    d = yaml.safe_load((ROOT / "configs" / game / "smoke.yaml").read_text(encoding="utf-8"))
    d.update(backend="rllib", total_timesteps=256, n_envs=8, n_steps=16, batch_size=64, checkpoint_every=128,
             final_eval_games=2, policy={"arch": "mlp", "net_arch": [32]})
    d.pop("pretrain", None)
    d["league"].update(snapshot_every=128, pool_size=2)
    config = tmp_path / "smoke.yaml"
    config.write_text(yaml.safe_dump(d), encoding="utf-8")
    cfg = load_config(config)
    summary = train(cfg, tmp_path)
    assert summary["steps"] >= 256 and summary["snapshots"] >= 2
    meta = read_metadata(summary["checkpoint"])
    assert meta["game"] == game and meta["backend"] == "rllib" and meta["training_steps"] >= 256
    assert summary["final_eval"]["games"] == 2 and summary["final_eval"]["zoo"] == cfg.league.eval_zoo
    spec = get(game)
    bot = load_agent(summary["checkpoint"], seed=0)
    P = cfg.num_players
    res = arena.play(spec, spec.make_rules(P, cfg.rules or None), [1, 2, 3], np.zeros((3, P), np.int64), [bot])
    assert res.engine.terminated.all()
