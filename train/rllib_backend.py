"""``ripmarket train CONFIG`` with ``backend: rllib``: RLlib's multi-agent PPO (new API
stack) over the AEC env through ``ripmarket_env.rllib_env()`` (the adapter of
``ripmarket_env/envs/rllib.py``), with a league of frozen
snapshots and zoo opponents placed by RLlib's policy mapping (docs/TRAINING.md, RLlib
backend).

Modules (RLlib's ``MultiRLModule``):

* ``learner``: RLlib's action-masking PPO module (``ActionMaskingTorchRLModule``: the
  default MLP, ``policy.net_arch`` hidden layers with tanh, separate actor and critic
  networks, illegal logits masked), the only module trained (``policies_to_train``);
* ``snap_latest`` and ``snap_0 .. snap_{pool_size-2}``: frozen copies of the learner.
  Every ``league.snapshot_every`` learner steps the learner's weights go into
  ``snap_latest`` and the weights it held move to the next ``snap_i`` (round robin), on the
  learner group and on every env runner; before the first snapshot they all hold the
  initial weights;
* ``zoo_<name>`` for each agent of ``league.zoo`` and ``zoo_random``: ``ZooModule``
  wraps a zoo agent (``agents.make``), returns its actions, never trains.

The policy mapping, per episode (a hash of the episode id and the seed, so a remote env
runner maps the same): one seat, drawn uniformly, is the learner's; every other seat
draws its kind from ``league.mix`` (self / zoo / random), a self seat is ``snap_latest``
with chance ``league.latest_share`` and else uniform over the pool, a zoo seat uniform
over ``league.zoo``.

Batches: each iteration samples about ``n_envs * n_steps`` learner decisions
(``train_batch_size_per_learner = n_envs * n_steps * num_players`` env steps: the learner
holds one seat of ``num_players`` and the AEC env advances one decision per step), cut
into minibatches of ``batch_size`` for ``n_epochs`` epochs, with the config's learning
rate, gamma, GAE lambda, clip range, entropy and value coefficients and gradient clip.

Checkpoints: ``<out>/checkpoints/<run_name>/latest.zip`` every ``checkpoint_every`` learner
steps and at the end, in the project's checkpoint format: the learner's weights mapped
onto SB3's ``MaskableActorCriticPolicy`` for ``policy: {arch: mlp, net_arch}`` (the same
layers), so ``agents.policy.load_agent``, ``ripmarket tournament``/``evaluate`` (a .zip
path), ``init_from`` and ``ripmarket export`` read it like any other. TensorBoard logs in
``<out>/runs/<run_name>/``.
"""

from __future__ import annotations

import hashlib
import time
from pathlib import Path
from typing import Any

import numpy as np

from train.config import TrainConfig, rules_fields

LEARNER = "learner"
LATEST = "snap_latest"


# ----------------------------------------------------------------------------- league
def module_ids(cfg: TrainConfig) -> dict[str, list[str]]:
    """The module ids of each league kind that the mix can draw."""
    lc = cfg.league
    return {
        "self": [LATEST] + [f"snap_{i}" for i in range(lc.pool_size - 1)] if lc.mix.get("self", 0) > 0 else [],
        "zoo": [f"zoo_{z}" for z in lc.zoo] if lc.mix.get("zoo", 0) > 0 else [],
        "random": ["zoo_random"] if lc.mix.get("random", 0) > 0 else [],
    }


def _u64(*parts) -> int:
    return int.from_bytes(hashlib.sha256("/".join(map(str, parts)).encode()).digest()[:8], "little")


def make_policy_mapping(cfg: TrainConfig):
    """``policy_mapping_fn(agent_id, episode)`` for the league (module docstring)."""
    P, seed, lc = cfg.num_players, cfg.seed, cfg.league
    ids = module_ids(cfg)
    kinds = [k for k in ("self", "zoo", "random") if ids[k]]
    weights = np.array([lc.mix[k] for k in kinds], dtype=np.float64)
    cum = np.cumsum(weights / weights.sum())

    def policy_mapping_fn(agent_id, episode, **kwargs) -> str:
        eid = getattr(episode, "id_", episode)
        seat = int(str(agent_id).rsplit("_", 1)[1])
        if seat == _u64(seed, eid) % P:
            return LEARNER
        u = (_u64(seed, eid, seat) >> 11) / float(1 << 53)
        kind = kinds[int(np.searchsorted(cum, u, side="right").clip(0, len(kinds) - 1))]
        pool = ids[kind]
        v = _u64(seed, eid, seat, "pick")
        if kind == "self" and (v >> 11) / float(1 << 53) < lc.latest_share:
            return LATEST
        return pool[_u64(seed, eid, seat, "which") % len(pool)]

    return policy_mapping_fn


def _zoo_module_class():
    from ray.rllib.core.rl_module.rl_module import RLModule

    class ZooModule(RLModule):
        """A zoo agent as a frozen RLlib module: its ``act_batch`` on the masked observations."""

        def setup(self):
            import agents

            self.agent = agents.make_seeded(self.model_config["agent"], int(self.model_config.get("seed", 0)),
                                            game=self.model_config["game"])

        def _forward(self, batch, **kwargs):
            o = batch["obs"]
            obs = np.asarray(_numpy(o["observations"]), dtype=np.float32)
            mask = np.asarray(_numpy(o["action_mask"]))
            return {"actions": np.asarray(self.agent.act_batch(obs, mask), dtype=np.int64)}

        def _forward_train(self, *args, **kwargs):
            raise NotImplementedError("zoo modules are frozen (not in policies_to_train)")

        def compile(self, *args, **kwargs):
            pass

    return ZooModule


def _numpy(x):
    return x.detach().cpu().numpy() if hasattr(x, "detach") else x


# ----------------------------------------------------------------------------- config
def model_config(cfg: TrainConfig) -> dict[str, Any]:
    return {"fcnet_hiddens": list(cfg.policy.net_arch), "fcnet_activation": "tanh", "vf_share_layers": False,
            "head_fcnet_hiddens": []}


def ppo_config(cfg: TrainConfig):
    """The ``PPOConfig`` of a training config (module docstring)."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.rllib.examples.rl_modules.classes.action_masking_rlm import ActionMaskingTorchRLModule

    from ripmarket_env.envs.rllib import multi_agent_env_class
    from ripmarket_env.games import get

    ids = module_ids(cfg)
    net = RLModuleSpec(module_class=ActionMaskingTorchRLModule, model_config=model_config(cfg))
    specs = {LEARNER: net, **{m: net for m in ids["self"]}}
    Zoo = _zoo_module_class()
    for k, name in enumerate(list(cfg.league.zoo) * bool(ids["zoo"]) + ["random"] * bool(ids["random"])):
        specs[f"zoo_{name}"] = RLModuleSpec(module_class=Zoo, model_config={"agent": name, "seed": cfg.seed + k,
                                                                             "game": cfg.game})
    rows = cfg.n_envs * cfg.n_steps
    r = cfg.rllib
    lr = cfg.learning_rate if not cfg.anneal_lr else [[0, cfg.learning_rate], [cfg.total_timesteps * cfg.num_players, 0.0]]
    return (
        PPOConfig()
        .environment(multi_agent_env_class(get(cfg.game)),
                     env_config={"rules": rules_fields(get(cfg.game), cfg.rules, cfg.num_players, cfg.reward_mode)})
        .env_runners(num_env_runners=r.num_env_runners, num_envs_per_env_runner=r.num_envs_per_env_runner,
                     rollout_fragment_length="auto")
        .learners(num_learners=r.num_learners)
        .training(train_batch_size_per_learner=rows * cfg.num_players, minibatch_size=cfg.batch_size,
                  num_epochs=cfg.n_epochs, lr=lr, gamma=cfg.gamma, lambda_=cfg.gae_lambda, clip_param=cfg.clip_range,
                  entropy_coeff=cfg.ent_coef, vf_loss_coeff=cfg.vf_coef, grad_clip=cfg.max_grad_norm)
        .multi_agent(policies=set(specs), policy_mapping_fn=make_policy_mapping(cfg), policies_to_train=[LEARNER])
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs=specs))
        .debugging(seed=cfg.seed)
    )


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
    """The frozen pool: ``take(state)`` moves ``snap_latest``'s weights to the next pool slot
    and puts ``state`` into ``snap_latest``, on the learner group and every env runner."""

    def __init__(self, algo, cfg: TrainConfig):
        self.algo, self.slots = algo, module_ids(cfg)["self"]
        self.count = 0
        self.latest = None

    def _set(self, module_id: str, state) -> None:
        self.algo.learner_group.foreach_learner(lambda learner: learner.module[module_id].set_state(state))
        self.algo.env_runner_group.foreach_env_runner(lambda runner: runner.module[module_id].set_state(state))

    def take(self, state) -> None:
        if not self.slots:
            return
        older = self.slots[1:]
        if self.latest is None:  # the first: every slot starts with it
            for m in older:
                self._set(m, state)
        elif older:
            self._set(older[(self.count - 1) % len(older)], self.latest)
        self._set(LATEST, state)
        self.latest = state
        self.count += 1


def _learner_state(algo) -> dict:
    return {k: np.asarray(_numpy(v)) for k, v in algo.get_module(LEARNER).get_state().items()}


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
    snaps.take(_learner_state(algo))  # the pool starts with the initial policy
    steps = iters = 0
    next_snap, next_ckpt = cfg.league.snapshot_every, cfg.checkpoint_every or None
    t_train = 0.0
    latest = ckpt_dir / "latest.zip"
    history = []
    try:
        with Progress(cfg.total_timesteps, f"train {run_name} (rllib)", enabled=cfg.progress) as progress:
            while steps < cfg.total_timesteps:
                t = time.perf_counter()
                result = algo.train()
                dt = time.perf_counter() - t
                t_train += dt
                iters += 1
                er, lr_ = result.get("env_runners", {}), result.get("learners", {}).get(LEARNER, {})
                n = int(er.get("num_module_steps_sampled", {}).get(LEARNER, 0))
                steps += n
                progress.advance(min(n, max(0, cfg.total_timesteps - (steps - n))))
                ret = er.get("module_episode_returns_mean", {}).get(LEARNER)
                row = {"iteration": iters, "steps": steps, "seconds": dt, "learner_steps_per_s": n / dt if dt else 0.0,
                       "episodic_return": None if ret is None else float(ret)}
                history.append(row)
                writer.add_scalar("charts/SPS", row["learner_steps_per_s"], steps)
                writer.add_scalar("charts/iteration_s", dt, steps)
                writer.add_scalar("charts/pool_size", min(snaps.count, len(snaps.slots)), steps)
                if ret is not None:
                    writer.add_scalar("charts/episodic_return", float(ret), steps)
                for key, tag in (("policy_loss", "policy_loss"), ("vf_loss", "value_loss"), ("entropy", "entropy"),
                                 ("mean_kl_loss", "approx_kl")):
                    if key in lr_:
                        writer.add_scalar(f"losses/{tag}", float(lr_[key]), steps)
                if steps >= next_snap:
                    snaps.take(_learner_state(algo))
                    next_snap = steps + cfg.league.snapshot_every
                if next_ckpt is not None and steps >= next_ckpt:
                    save_checkpoint(cfg, _learner_state(algo), latest, steps)
                    next_ckpt = steps + cfg.checkpoint_every
        save_checkpoint(cfg, _learner_state(algo), latest, steps)
    finally:
        algo.stop()
        writer.flush()
        writer.close()
    summary = {"run_name": run_name, "backend": "rllib", "steps": steps, "iterations": iters,
               "wall_s": time.perf_counter() - t0, "build_s": t_build, "time_train_s": t_train,
               "training_steps_per_s": steps / t_train if t_train else 0.0, "checkpoint": str(latest),
               "tensorboard": str(run_dir), "snapshots": snaps.count, "history": history}
    summary["steps_per_s"] = steps / summary["wall_s"]
    if cfg.final_eval_games:
        from agents.policy import load_agent
        from eval.evaluate import evaluate_vs_zoo

        summary["final_eval"] = evaluate_vs_zoo(load_agent(latest, seed=cfg.seed), cfg.num_players,
                                                cfg.final_eval_games, list(cfg.league.eval_zoo), seed=cfg.seed,
                                                game=cfg.game)
    return summary
