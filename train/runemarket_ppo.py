"""Train a MaskablePPO bot for The Rune Market (``rune-market``) against the heuristics.

    python -m train.runemarket_ppo configs/rm_ppo_4p.yaml

The learner takes a random seat of each deal (``learner_seat="random"``) in the game's
vector env; the other seats are the heuristic opponents of the config, one per seat, in
a fixed order (``rm-banker``, ``rm-raider``, ``rm-bandit`` at 4 players). The learner
also answers its own block decisions during an opponent's attack: the single-agent face
hands the learner every decision of its seat. Reward: the game's final reward (+1 win,
-1 loss, shared for ties), nothing before the end. The run stops at ``total_timesteps``
or after ``max_minutes`` of wall-clock time, whichever comes first, and writes an SB3 zip
with the checkpoint metadata of the game (``agents.checkpoint.make_metadata``).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import yaml

KEYS = {"exp_name", "game", "seed", "num_players", "total_timesteps", "max_minutes", "n_envs", "n_steps",
        "batch_size", "n_epochs", "learning_rate", "gamma", "ent_coef", "opponents",
        "policy", "out"}


def load_config(path: str | Path) -> dict:
    data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    if not isinstance(data, dict):
        raise ValueError(f"{path}: a training config is a mapping of {', '.join(sorted(KEYS))}")
    stray = sorted(set(data) - KEYS)
    if stray:
        raise ValueError(f"{path}: unknown key {stray[0]!r}; allowed: {', '.join(sorted(KEYS))}")
    if data.get("game") != "rune-market":
        raise ValueError(f"{path}: game must be 'rune-market', got {data.get('game')!r}")
    return data


def train(cfg: dict) -> dict:
    import numpy as np
    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.callbacks import BaseCallback

    import agents
    from agents.checkpoint import make_metadata, save_checkpoint
    from agents.networks import policy_kwargs
    from agents.policy_config import check_policy
    from ripmarket_env.envs.vector import vec_env_classes
    from ripmarket_env.games import get

    torch.set_num_threads(1)
    spec = get(cfg["game"])
    P = int(cfg["num_players"])
    seed = int(cfg["seed"])
    opp = [agents.make_seeded(n, seed * 100 + i, game=spec.id) for i, n in enumerate(cfg["opponents"])]
    VecEnv, _ = vec_env_classes(spec)
    from stable_baselines3.common.vec_env import VecMonitor

    env = VecMonitor(VecEnv(num_envs=int(cfg["n_envs"]), num_players=P, opponents=opp, learner_seat="random",
                            seed=seed))
    pcfg = check_policy(dict(cfg["policy"]))
    model = MaskablePPO("MlpPolicy", env, n_steps=int(cfg["n_steps"]), batch_size=int(cfg["batch_size"]),
                        n_epochs=int(cfg["n_epochs"]), learning_rate=float(cfg["learning_rate"]),
                        gamma=float(cfg["gamma"]), ent_coef=float(cfg["ent_coef"]), seed=seed, device="cpu",
                        policy_kwargs=policy_kwargs(pcfg), verbose=0)
    deadline = time.monotonic() + 60.0 * float(cfg["max_minutes"])
    t0 = time.monotonic()

    class Bound(BaseCallback):
        def _on_step(self) -> bool:
            return time.monotonic() < deadline

        def _on_rollout_end(self) -> None:
            eps = [e["r"] for e in self.model.ep_info_buffer] if self.model.ep_info_buffer else []
            print(f"steps {self.num_timesteps:>8}  {time.monotonic() - t0:6.0f} s  "
                  f"recent win share {np.mean(np.array(eps) > 0) if eps else float('nan'):.3f}", flush=True)

    model.learn(int(cfg["total_timesteps"]), callback=Bound())
    steps = int(model.num_timesteps)
    config = {k: v for k, v in cfg.items() if k != "out"}
    meta = make_metadata(config, [P], steps, extra={"seconds": round(time.monotonic() - t0, 1)}, game=spec.id)
    path = save_checkpoint(model, cfg["out"], meta)
    print(f"wrote {path} after {steps} steps in {time.monotonic() - t0:.0f} s")
    return meta


if __name__ == "__main__":  # pragma: no cover
    if len(sys.argv) != 2:
        sys.exit("usage: python -m train.runemarket_ppo CONFIG.yaml")
    try:
        conf = load_config(sys.argv[1])
    except (OSError, ValueError) as exc:
        sys.exit(f"error: {exc}")
    train(conf)
