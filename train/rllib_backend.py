"""``ripmarket train CONFIG`` with ``backend: rllib``: RLlib's PPO (new API stack) on the
game's batched engine, with the training league inside the env, as backend sb3 runs it
(docs/TRAINING.md, RLlib backend).

Env: ``LeagueVectorEnv``, a Gymnasium ``VectorEnv`` over the league batch of
``train.selfplay.make_league_vec_env``: ``n_envs`` games of the config's game in one
engine batch per env runner, the learner in one seat per game (drawn per episode), every
other seat played by the league in batch (frozen snapshots of the learner, the game's zoo
from ``agents.game_agents``, the random agent; compiled when all are random). RLlib sees a
single-agent vector env (``gym_env_vectorize_mode="vector_entry_point"``: the env creator
returns the whole batch) whose observation is one float32 row per game: the game's
observation, then the 0/1 mask of its legal actions (``masked_observation_space``). RLlib's
env runner expects Gymnasium's next-step auto-reset: the step that ends a game returns its
last observation and ``terminated``; the batch has dealt the next game already, and the
next step holds it (its action is -1: the engine skips the game) and returns its first
observation.

Module: ``train.rllib_module.LeaguePPOModule``, RLlib's default PPO network (the MLP of
``policy.net_arch`` hidden layers with tanh, separate actor and critic, a linear head each;
the layers and the masking of RLlib's ``ActionMaskingTorchRLModule``) that samples a
runner's whole batch in one pass; the env runner's connectors are that module's two short
ones (``RowsToModule``, ``ModuleToRows``) instead of RLlib's generic pipelines.

League: every env runner builds its own ``League`` from the config (zoo agents by name,
seeded per runner). Every ``league.snapshot_every`` learner steps the driver sends the
learner's weights to every runner, which freezes them as an SB3 policy (``sb3_policy``,
the same layers) into its pool; the pool starts with the initial weights.

Batches: each iteration samples ``n_envs * n_steps`` learner decisions over all runners
(``train_batch_size_per_learner``; with ``num_env_runners`` runners of ``n_envs`` games
each, every runner samples ``n_steps / num_env_runners`` steps per game), cut into
minibatches of ``batch_size`` for ``n_epochs`` epochs, with the config's learning rate,
gamma, GAE lambda, clip range, entropy and value coefficients and gradient clip; no KL
penalty and no value-loss clipping, as SB3's MaskablePPO (RLlib's defaults would add both).

Checkpoints: ``<out>/checkpoints/<run_name>/latest.zip`` every ``checkpoint_every`` learner
steps and at the end, in the project's checkpoint format: the learner's weights mapped
onto SB3's ``MaskableActorCriticPolicy`` for ``policy: {arch: mlp, net_arch}`` (the same
layers), so ``agents.policy.load_agent``, ``ripmarket tournament``/``evaluate`` (a .zip
path), ``init_from`` and ``ripmarket export`` read it like any other. TensorBoard logs in
``<out>/runs/<run_name>/``.
"""

from __future__ import annotations

import functools
import time
from pathlib import Path
from typing import Any

import numpy as np

from train.config import TrainConfig, config_from_dict


# ----------------------------------------------------------------------------- the env
def runner_seed(seed: int, worker_index: int) -> int:
    """The base seed of env runner ``worker_index``'s deals and league draws (0: the driver's)."""
    return int(np.random.SeedSequence([int(seed), int(worker_index), 0x5A11]).generate_state(1)[0] >> 1)


def masked_observation_space(obs_space, num_actions: int):
    """The space of a row of the league env (``train.rllib_module``): the game's observation
    (``obs_space``, a Box), then the 0/1 mask of its ``num_actions`` actions."""
    from gymnasium import spaces

    low = np.concatenate([np.broadcast_to(obs_space.low, obs_space.shape), np.zeros(num_actions)]).astype(np.float32)
    high = np.concatenate([np.broadcast_to(obs_space.high, obs_space.shape), np.ones(num_actions)]).astype(np.float32)
    return spaces.Box(low, high, dtype=np.float32)


@functools.cache
def league_vector_env_class():
    """``LeagueVectorEnv`` (made once, on first use: gymnasium's ``VectorEnv``)."""
    import gymnasium
    from gymnasium import spaces
    from gymnasium.vector import AutoresetMode
    from gymnasium.vector.utils import batch_space

    from train.selfplay import League, make_league_vec_env

    class LeagueVectorEnv(gymnasium.vector.VectorEnv):
        """The config's league batch as a next-step auto-reset Gymnasium ``VectorEnv`` (module
        docstring). ``add_snapshot(state, steps)`` freezes learner weights into its league."""

        metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP}

        def __init__(self, cfg: TrainConfig, seed: int):
            self.cfg, self.seed_base = cfg, int(seed)
            self.league = League(cfg, seed=self.seed_base)
            self.batch = make_league_vec_env(cfg, self.league, self.seed_base).batch
            self.batch.holds = True
            b = self.batch
            self.num_envs = b.num_envs
            self.obs_size = b.obs_size
            self.single_observation_space = masked_observation_space(b.observation_space, b.num_actions)
            self.single_action_space = spaces.Discrete(b.num_actions)
            self.observation_space = batch_space(self.single_observation_space, self.num_envs)
            self.action_space = batch_space(self.single_action_space, self.num_envs)
            self._held = np.zeros(self.num_envs, bool)
            self._false = np.zeros(self.num_envs, bool)
            # The first deal and the terminal observation load (or compile) their kernels here,
            # when the runner is built, not in the first iteration: as the sb3 trainer's set-up.
            b.reset(self.seed_base)
            b._encode(np.zeros(1, np.int64), b.seat[:1], np.empty((1, b.obs_size), np.float32))

        def _rows(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
            """A new array (the batch's buffers are reused; RLlib keeps views of what it gets):
            each game's observation, then its mask."""
            rows = np.empty((self.num_envs, self.obs_size + masks.shape[1]), np.float32)
            rows[:, :self.obs_size] = obs
            rows[:, self.obs_size:] = masks
            return rows

        def reset(self, *, seed=None, options=None):
            """Deal every game from the runner's base seed (RLlib's ``seed`` is the same on
            every runner, so the runner's own seed, ``runner_seed``, is kept)."""
            self._held[:] = False
            obs = self.batch.reset(self.seed_base)
            return self._rows(obs, self.batch.masks), {}

        def step(self, actions):
            a = np.asarray(actions, dtype=np.int64).reshape(-1).copy()
            held = self._held
            a[held] = -1  # the new deal of a game that ended last step waits for this step
            obs, rewards, dones, ended, terminal = self.batch.step(a)
            rows = self._rows(obs, self.batch.masks)
            rewards = np.where(held, 0.0, rewards).astype(np.float32)
            if ended.size:
                rows[ended, :self.obs_size] = terminal
                rows[ended, self.obs_size:] = 1
            self._held = dones.copy()
            return rows, rewards, dones.copy(), self._false.copy(), {}

        def add_snapshot(self, state: dict, steps: int) -> None:
            self.league.add_snapshot(sb3_policy(self.cfg, state), steps)

        def close_extras(self, **kwargs):
            pass

    return LeagueVectorEnv


def make_env(env_ctx) -> Any:
    """RLlib's env creator (``gym_env_vectorize_mode="vector_entry_point"``): the league
    vector env of ``env_ctx["train_config"]`` for env runner ``env_ctx.worker_index``."""
    cfg = config_from_dict(env_ctx["train_config"])
    if getattr(env_ctx, "worker_index", 0):  # a remote env runner: its process's torch threads, as the driver's
        import torch

        torch.set_num_threads(cfg.torch_threads)
    n = env_ctx.get("num_envs", cfg.n_envs)
    if n != cfg.n_envs:  # pragma: no cover - ppo_config sets num_envs_per_env_runner = n_envs
        raise ValueError(f"the league env of this config has n_envs = {cfg.n_envs} games, RLlib asked for {n}")
    return league_vector_env_class()(cfg, runner_seed(cfg.seed, getattr(env_ctx, "worker_index", 0)))


# ----------------------------------------------------------------------------- config
MODULE = "default_policy"
ENV_NAME = "league-vector-env"


def model_config(cfg: TrainConfig) -> dict[str, Any]:
    return {"fcnet_hiddens": list(cfg.policy.net_arch), "fcnet_activation": "tanh", "vf_share_layers": False,
            "head_fcnet_hiddens": []}


def ppo_config(cfg: TrainConfig):
    """The ``PPOConfig`` of a training config (module docstring)."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.tune.registry import register_env

    from train.rllib_module import LeaguePPOModule, env_to_module, module_to_env

    register_env(ENV_NAME, make_env)  # Ray's registry: every runner, on any node, finds it
    rows = cfg.n_envs * cfg.n_steps
    r = cfg.rllib
    lr = cfg.learning_rate if not cfg.anneal_lr else [[0, cfg.learning_rate], [cfg.total_timesteps, 0.0]]
    return (
        PPOConfig()
        .environment(ENV_NAME, env_config={"train_config": cfg.to_dict()}, normalize_actions=False, clip_actions=False)
        .env_runners(num_env_runners=r.num_env_runners, num_envs_per_env_runner=cfg.n_envs,
                     gym_env_vectorize_mode="vector_entry_point", rollout_fragment_length="auto",
                     env_to_module_connector=env_to_module, module_to_env_connector=module_to_env,
                     add_default_connectors_to_env_to_module_pipeline=False,
                     add_default_connectors_to_module_to_env_pipeline=False)
        .learners(num_learners=r.num_learners)
        .training(train_batch_size_per_learner=rows, minibatch_size=cfg.batch_size,
                  num_epochs=cfg.n_epochs, lr=lr, gamma=cfg.gamma, lambda_=cfg.gae_lambda, clip_param=cfg.clip_range,
                  entropy_coeff=cfg.ent_coef, vf_loss_coeff=cfg.vf_coef, grad_clip=cfg.max_grad_norm,
                  use_kl_loss=False, vf_clip_param=float("inf"))
        .rl_module(rl_module_spec=RLModuleSpec(module_class=LeaguePPOModule, model_config=model_config(cfg)))
        .debugging(seed=cfg.seed)
    )


def _numpy(x):
    return x.detach().cpu().numpy() if hasattr(x, "detach") else x


# ----------------------------------------------------------------------------- weights
def sb3_policy(cfg: TrainConfig, module_state: dict):
    """The learner's weights (an ``ActionMaskingTorchRLModule`` state) as SB3's
    ``MaskableActorCriticPolicy`` with ``policy: {arch: mlp, net_arch}``: the same layers."""
    import torch
    from gymnasium import spaces
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

    from agents.networks import policy_kwargs

    w = {k: torch.as_tensor(np.asarray(v)) for k, v in module_state.items()}
    obs_size = w["encoder.actor_encoder.net.mlp.0.weight"].shape[1]
    n_actions = w["pi.net.mlp.0.weight"].shape[0]
    policy = MaskableActorCriticPolicy(spaces.Box(-np.inf, np.inf, (obs_size,), np.float32), spaces.Discrete(n_actions),
                                       lambda _: 0.0, **policy_kwargs(cfg.policy))
    sd = {}
    for i in range(len(cfg.policy.net_arch)):
        for part in ("weight", "bias"):
            sd[f"mlp_extractor.policy_net.{2 * i}.{part}"] = w[f"encoder.actor_encoder.net.mlp.{2 * i}.{part}"]
            sd[f"mlp_extractor.value_net.{2 * i}.{part}"] = w[f"encoder.critic_encoder.net.mlp.{2 * i}.{part}"]
    for part in ("weight", "bias"):
        sd[f"action_net.{part}"] = w[f"pi.net.mlp.0.{part}"]
        sd[f"value_net.{part}"] = w[f"vf.net.mlp.0.{part}"]
    policy.load_state_dict(sd, strict=True)
    policy.set_training_mode(False)
    return policy


def save_checkpoint(cfg: TrainConfig, module_state: dict, path: Path, steps: int, extra: dict | None = None) -> Path:
    from agents.checkpoint import make_metadata, save_policy_checkpoint

    meta = make_metadata(cfg.to_dict(), [cfg.num_players], steps, extra={"backend": "rllib", **(extra or {})},
                         game=cfg.game)
    return save_policy_checkpoint(sb3_policy(cfg, module_state), path, meta)


# ----------------------------------------------------------------------------- the run
class Snapshots:
    """The frozen pool on the env runners: ``take(state, steps)`` freezes the learner's
    weights into every runner's league (its ring of ``league.pool_size`` snapshots)."""

    def __init__(self, algo, cfg: TrainConfig):
        self.algo = algo
        self.active = cfg.league.mix.get("self", 0) > 0
        self.pool_size = cfg.league.pool_size
        self.count = 0

    def take(self, state: dict, steps: int) -> None:
        if not self.active:
            return

        def add(runner):
            env = getattr(runner, "env", None)
            if env is not None:  # the driver's runner has no env when remote runners sample
                env.unwrapped.add_snapshot(state, steps)

        self.algo.env_runner_group.foreach_env_runner(add)
        self.count += 1


def _learner_state(algo) -> dict:
    """The learner's full weights (actor and critic), from the learner group."""
    return {k: np.asarray(_numpy(v)) for k, v in algo.learner_group.get_weights([MODULE])[MODULE].items()}


def _runners_cpu(algo) -> float:
    """CPU seconds used so far by the remote env runners' processes (all their threads); 0
    when the driver samples (its own CPU time is counted by the caller)."""
    if not algo.env_runner_group.num_remote_env_runners():
        return 0.0
    return float(sum(algo.env_runner_group.foreach_env_runner(lambda _: time.process_time(), local_env_runner=False)))


def train(cfg: TrainConfig, out: str | Path = ".", console=None, ray_address: str | None = None) -> dict[str, Any]:
    """Train ``cfg`` with RLlib; returns the run summary (as ``train.selfplay.train``'s keys
    where they apply). Starts a local Ray instance unless one is running (``ray.init``
    joins ``ray_address`` / ``RAY_ADDRESS`` when given)."""
    import ray
    from torch.utils.tensorboard import SummaryWriter

    from eval.progress import Progress

    import torch

    torch.set_num_threads(cfg.torch_threads)  # the driver samples and updates; Ray's workers get one thread each
    out = Path(out)
    run_name = cfg.run_name()
    run_dir, ckpt_dir = out / "runs" / run_name, out / "checkpoints" / run_name
    ckpt_dir.mkdir(parents=True, exist_ok=True)
    if not ray.is_initialized():
        ray.init(address=ray_address, include_dashboard=False, log_to_driver=False,
                 **({} if ray_address else {"num_cpus": max(1, cfg.rllib.num_env_runners + 1)}))
    writer = SummaryWriter(str(run_dir))
    writer.add_text("config", f"```\n{cfg.to_dict()}\n```")
    t0 = time.perf_counter()
    algo = ppo_config(cfg).build_algo()
    t_build = time.perf_counter() - t0
    snaps = Snapshots(algo, cfg)
    snaps.take(_learner_state(algo), 0)  # the pool starts with the initial policy
    steps = iters = 0
    next_snap, next_ckpt = cfg.league.snapshot_every, cfg.checkpoint_every or None
    t_train = cpu_train = 0.0
    runners_cpu0 = _runners_cpu(algo)
    latest = ckpt_dir / "latest.zip"
    history = []
    try:
        with Progress(cfg.total_timesteps, f"train {run_name} (rllib)", enabled=cfg.progress) as progress:
            while steps < cfg.total_timesteps:
                t, c = time.perf_counter(), time.process_time()
                result = algo.train()
                dt = time.perf_counter() - t
                t_train += dt
                cpu_train += time.process_time() - c
                iters += 1
                er, lr_ = result.get("env_runners", {}), result.get("learners", {}).get(MODULE, {})
                n = int(er.get("num_env_steps_sampled", 0))
                steps += n
                progress.advance(min(n, max(0, cfg.total_timesteps - (steps - n))))
                ret = er.get("episode_return_mean")
                row = {"iteration": iters, "steps": steps, "seconds": dt, "learner_steps_per_s": n / dt if dt else 0.0,
                       "episodic_return": None if ret is None else float(ret)}
                history.append(row)
                writer.add_scalar("charts/SPS", row["learner_steps_per_s"], steps)
                writer.add_scalar("charts/iteration_s", dt, steps)
                writer.add_scalar("charts/pool_size", min(snaps.count, snaps.pool_size), steps)
                if ret is not None:
                    writer.add_scalar("charts/episodic_return", float(ret), steps)
                for key, tag in (("policy_loss", "policy_loss"), ("vf_loss", "value_loss"), ("entropy", "entropy")):
                    if key in lr_:
                        writer.add_scalar(f"losses/{tag}", float(lr_[key]), steps)
                if steps >= next_snap:
                    snaps.take(_learner_state(algo), steps)
                    next_snap = steps + cfg.league.snapshot_every
                if next_ckpt is not None and steps >= next_ckpt:
                    save_checkpoint(cfg, _learner_state(algo), latest, steps)
                    next_ckpt = steps + cfg.checkpoint_every
        cpu_train += _runners_cpu(algo) - runners_cpu0
        save_checkpoint(cfg, _learner_state(algo), latest, steps)
    finally:
        algo.stop()
        writer.flush()
        writer.close()
    summary = {"run_name": run_name, "backend": "rllib", "steps": steps, "iterations": iters,
               "wall_s": time.perf_counter() - t0, "build_s": t_build, "time_train_s": t_train,
               "training_steps_per_s": steps / t_train if t_train else 0.0, "training_cpu_s": cpu_train,
               "checkpoint": str(latest),
               "tensorboard": str(run_dir), "snapshots": snaps.count, "history": history}
    summary["steps_per_s"] = steps / summary["wall_s"]
    if cfg.final_eval_games:
        from agents.policy import load_agent
        from eval.evaluate import evaluate_vs_zoo

        summary["final_eval"] = evaluate_vs_zoo(load_agent(latest, seed=cfg.seed), cfg.num_players,
                                                cfg.final_eval_games, list(cfg.league.eval_zoo), seed=cfg.seed,
                                                game=cfg.game)
    return summary
