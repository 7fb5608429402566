"""``ripmarket bench --suite train``: learner env steps per second of a training config,
end to end (rollouts against the config's league, the learner's forward pass and the
PPO updates), with the time per learner step split into env, policy and update, and the
same steps per CPU second (``training_steps_per_cpu_s``: the CPU time of the trainer's
process, all its threads, in the same rollouts and updates, plus with backend rllib that of
its remote env runners' processes; on a shared machine it moves less with the other jobs
than the wall-clock figure).

The config runs as written (network, rollout shape, batch, epochs, league mix and pool
size, torch threads) for a few rollouts, with what only matters for learning left out:
no warm start or ``init_from`` (the learner starts untrained), no evaluations,
checkpoints or zoo refreshes, and a snapshot every rollout so that the pool of frozen
learners is full after its first ``pool_size`` rollouts, as in the second half of a run.
The figure is ``training_steps_per_s`` of the run summary (docs/TRAINING.md, Throughput).
``--backend rllib`` (or ``backend: rllib`` in the config) measures RLlib's PPO on the same
config (``train.rllib_backend``; docs/TRAINING.md, RLlib backend)."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any

from train.config import config_from_dict, load_config


def bench_config(config: str | Path, rollouts: int, backend: str | None = None, env_runners: int | None = None):
    """The training config of ``config`` trimmed for a throughput measurement of ``rollouts``
    rollouts (see the module docstring); ``backend`` overrides the config's, ``env_runners``
    its ``rllib.num_env_runners``."""
    cfg = load_config(config)
    per = cfg.n_envs * cfg.n_steps
    d = cfg.to_dict()
    if backend is not None:
        d["backend"] = backend
    d.update(total_timesteps=per * rollouts, eval_every=0, checkpoint_every=0, final_eval_games=0, init_from="")
    d["pretrain"]["games"] = 0
    d["league"].update(refresh_every=0, snapshot_every=per)
    if env_runners is not None:
        d["rllib"]["num_env_runners"] = env_runners
    return config_from_dict(d)


def train_bench(config: str | Path, rollouts: int = 12, console=None, backend: str | None = None,
                env_runners: int | None = None) -> dict[str, Any]:
    """Run ``bench_config(config, rollouts, backend)`` in a temporary folder; the figures as
    a dict. Backend rllib: a rollout is one RLlib iteration (``n_envs * n_steps`` learner
    decisions), the figure learner steps per second of ``algo.train()`` (the Ray and
    algorithm setup left out), without the env / policy / update split."""
    cfg = bench_config(config, rollouts, backend, env_runners)
    t = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="ripmarket-bench-") as tmp:
        if cfg.backend == "rllib":
            from train.rllib_backend import train as train_rllib

            s = train_rllib(cfg, tmp, console=console)
        else:
            from train.selfplay import train

            s = train(cfg, tmp, console=console)
    steps = s["steps"]
    us = 1e6 / steps
    split = {k: (s[f"time_{k}_s"] * us if f"time_{k}_s" in s else None) for k in ("env", "policy", "update")}
    return {
        "config": str(config), "backend": cfg.backend, "num_players": cfg.num_players, "arch": cfg.policy.arch,
        "n_envs": cfg.n_envs, "n_steps": cfg.n_steps, "batch_size": cfg.batch_size, "n_epochs": cfg.n_epochs,
        "league_mix": dict(cfg.league.mix), "pool_size": cfg.league.pool_size, "rollouts": rollouts,
        "env_runners": cfg.rllib.num_env_runners if cfg.backend == "rllib" else None,
        "steps": steps, "training_steps_per_s": s["training_steps_per_s"],
        "training_cpu_s": s.get("training_cpu_s"),
        "training_steps_per_cpu_s": steps / s["training_cpu_s"] if s.get("training_cpu_s") else None,
        "env_us_per_step": split["env"], "policy_us_per_step": split["policy"],
        "update_us_per_step": split["update"], "wall_s": time.perf_counter() - t,
    }


def render_rich(r: dict[str, Any]):
    from rich.table import Table

    t = Table(title=f"Training throughput: {r['config']}, backend {r.get('backend', 'sb3')} ({r['steps']:,} learner "
                    f"steps, {r['rollouts']} rollouts of {r['n_envs']:,} x {r['n_steps']})")
    for c in ("learner steps/s", "per CPU second", "env µs/step", "policy µs/step", "update µs/step"):
        t.add_column(c, justify="right")
    us = [("-" if r[k] is None else f"{r[k]:.1f}") for k in ("env_us_per_step", "policy_us_per_step", "update_us_per_step")]
    cpu = r.get("training_steps_per_cpu_s")
    t.add_row(f"{r['training_steps_per_s']:,.1f}", "-" if cpu is None else f"{cpu:,.1f}", *us)
    return t
