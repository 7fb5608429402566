"""Train a Black Market MaskablePPO bot within a wall-clock budget.

    python -m train.blackmarket_ppo --config configs/bm_ppo_2p.yaml

Phase 1 (``warmup_fraction`` of the budget): against the compiled random opponent (fast).
Phase 2: against the heuristics of ``opponents``: every opponent decision is made by one
of them drawn at random (``RandomMix``), so a game mixes styles. The learner's seat
is random per episode (both sides, first player or not). Writes the checkpoint ``out``
and ``<out>.json`` (game, shapes, config, steps) for ``agents.blackmarket.policy``.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import yaml


class RandomMix:
    """An opponent whose every decision is made by one of several agents, drawn at random
    per decision (its own seeded RNG)."""

    name = "mix"

    def __init__(self, agents_, seed=0):
        self.agents = agents_
        self.rng = np.random.default_rng(seed)

    def act_batch(self, obs, masks):
        out = np.empty(len(obs), np.int64)
        who = self.rng.integers(len(self.agents), size=len(obs))
        for i, ag in enumerate(self.agents):
            sel = np.flatnonzero(who == i)
            if len(sel):
                out[sel] = ag.act_batch(obs[sel], masks[sel])
        return out

    def act(self, o, m):
        return int(self.act_batch(o[None], m[None])[0])

    def reset(self, seed=None):
        pass


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", type=Path, required=True)
    ap.add_argument("--minutes", type=float, default=None, help="override the config's budget")
    args = ap.parse_args(argv)
    cfg = yaml.safe_load(args.config.read_text())
    minutes = args.minutes or cfg["minutes"]
    import torch
    from sb3_contrib import MaskablePPO

    import agents
    from ripmarket_env.envs.vector import vec_env_classes
    from ripmarket_env.games import get
    from ripmarket_env.games.blackmarket.state import NUM_ACTIONS

    torch.set_num_threads(1)
    BlackMarketVecEnv = vec_env_classes(get("black-market"))[0]  # opponents are given as agent objects
    P = cfg["num_players"]
    common = dict(num_envs=cfg["num_envs"], num_players=P, learner_seat="random", numba_threads=1)
    rules = {"num_players": P, "mode": cfg["mode"]}
    env = BlackMarketVecEnv(seed=cfg["seed"], rules=rules, **common)
    model = MaskablePPO("MlpPolicy", env, n_steps=cfg["n_steps"], batch_size=cfg["batch_size"],
                        n_epochs=cfg["n_epochs"], learning_rate=cfg["learning_rate"], gamma=cfg["gamma"],
                        gae_lambda=cfg["gae_lambda"], ent_coef=cfg["ent_coef"], seed=cfg["seed"],
                        policy_kwargs={"net_arch": list(cfg["net_arch"])}, device="cpu", verbose=0)
    t0 = time.time()
    budget = minutes * 60
    chunk = cfg["num_envs"] * cfg["n_steps"] * 4
    phase = 1
    while time.time() - t0 < budget:
        if phase == 1 and time.time() - t0 > budget * cfg["warmup_fraction"]:
            phase = 2
            opp = RandomMix([agents.make(n, game="black-market", seed=i) for i, n in enumerate(cfg["opponents"])],
                             seed=cfg["seed"])
            env = BlackMarketVecEnv(seed=cfg["seed"] + 1, rules=rules, opponents=opp, **common)
            model.set_env(env)
        model.learn(chunk, reset_num_timesteps=False)
        print(f"{time.time() - t0:7.0f}s phase {phase} steps {model.num_timesteps}", flush=True)
    out = Path(cfg["out"])
    out.parent.mkdir(parents=True, exist_ok=True)
    model.save(str(out))
    meta = {"game": "black-market", "num_players": P, "mode": cfg["mode"], "obs_size": int(env.observation_space.shape[0]),
            "num_actions": NUM_ACTIONS, "steps": int(model.num_timesteps), "minutes": minutes,
            "config": cfg, "command": f"python -m train.blackmarket_ppo --config {args.config}"}
    out.with_suffix(".json").write_text(json.dumps(meta, indent=1) + "\n")
    print(f"wrote {out} after {model.num_timesteps} steps")


if __name__ == "__main__":
    main()
