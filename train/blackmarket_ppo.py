"""Train a Black Market MaskablePPO bot within a wall-clock budget.

    python -m train.blackmarket_ppo --config configs/bm_ppo_2p.yaml

Phase 1 (``warmup_fraction`` of the budget): against the compiled random opponent (fast).
Phase 2: against the heuristics of ``opponents``: every opponent decision is made by one
of them drawn at random (``RandomMix``), so a game mixes styles. The learner's seat
is random per episode (both sides, first player or not). Writes the checkpoint ``out``
and ``<out>.json`` (game, shapes, config, steps) for ``agents.blackmarket.policy``.

Optional keys (a later stage of a recipe):

* ``init``: a checkpoint to continue from (its weights and optimizer; no warm-up phase),
  with this config's learning rate, entropy and rollout sizes.
* ``opponent_per_game: true``: each game of the batch plays one opponent for a whole game
  instead of a new draw per decision; ``opponent_weights`` gives each opponent's share of
  the games. An opponent named ``snapshot`` is a frozen, sampling copy of the learner,
  refreshed at every selection. ``teammate`` (team mode, with ``opponent_per_game``): who
  plays the learner's teammates, ``self`` (the learner's current policy, sampling) or an
  agent's name; without it they are drawn from the opponents like the other seats.
* ``pretrain``: ``{games, seed, agents, epochs, winners_only, learning_rate}``: before
  any PPO step of a fresh model (no ``init``), record ``games`` games of the heuristics
  ``agents`` (every seat drawn at random per game, deal seeds from ``seed``), then
  behaviour-clone the actor on the decisions with a choice (only the winning side's when
  ``winners_only``: a filtered imitation of what worked) and fit the critic to every
  decision's final reward (``train.distill.pretrain_policy``); no warm-up phase follows.
* ``select``: ``{against, seed, games, every}``: every ``every`` chunks the deterministic
  policy plays ``games`` games (``eval.match``, duplicate deals) against ``against`` (an
  agent, or a list of agents: then the figure is the win rate of the weakest match) on
  deal seed ``seed``; ``out`` is the best policy so far on that seed (the starting one
  included), and ``<out>.log.jsonl`` gets one line per selection. Keep the evaluation
  seed of the shipped figures apart from ``seed`` and ``select.seed``.
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


class PerGameOpponents:
    """Each game row of a ``LearnerBatch`` plays one opponent of ``pool`` for the whole game
    (rows split by ``weights``, in a seeded random order). With a ``teammate`` (team mode),
    the learner's teammates (an even number of seats away) are that agent instead."""

    def __init__(self, pool, weights, num_envs: int, seed: int = 0, teammate=None):
        w = np.asarray(weights if weights is not None else [1] * len(pool), float)
        counts = np.floor(w / w.sum() * num_envs).astype(int)
        counts[np.argmax(w)] += num_envs - counts.sum()
        self.pool = pool + ([teammate] if teammate is not None else [])
        self.row = np.random.default_rng(seed).permutation(np.repeat(np.arange(len(pool)), counts))
        self.teammate = len(pool) if teammate is not None else -1

    def install(self, batch) -> None:
        def opponent_actions(idx, rel, obs, masks):
            out = np.empty(len(idx), np.int64)
            who = self.row[idx]
            if self.teammate >= 0:  # rel + 1 seats after the learner: even means the same side
                who = np.where((rel + 1) % 2 == 0, self.teammate, who)
            for i, ag in enumerate(self.pool):
                sel = np.flatnonzero(who == i)
                if len(sel):
                    out[sel] = ag.act_batch(obs[sel], masks[sel])
            return out

        batch._opponent_actions = opponent_actions


def load_trainable(path: Path, meta: dict, env, seed: int, **hyper):
    """A ``MaskablePPO`` on ``env`` with ``hyper``, holding checkpoint ``path``'s policy
    weights and optimizer state, read with ``torch.load(weights_only=True)``: SB3's
    cloudpickled ``data`` member is never opened (``MaskablePPO.load`` would unpickle it)."""
    from sb3_contrib import MaskablePPO

    from agents.blackmarket.policy import load_policy
    from agents.checkpoint import OPTIMIZER_NAME, CheckpointError, _open, _read_member, _torch_load

    policy, _ = load_policy(path)
    model = MaskablePPO("MlpPolicy", env, seed=seed, policy_kwargs={"net_arch": list(meta["config"]["net_arch"])},
                        device="cpu", verbose=0, **hyper)
    model.policy.load_state_dict(policy.state_dict())
    with _open(path) as z:
        raw = _read_member(z, OPTIMIZER_NAME, path, required=False)
    if raw is not None:
        try:
            model.policy.optimizer.load_state_dict(_torch_load(raw, "optimizer state", path))
        except (ValueError, KeyError, RuntimeError) as exc:
            raise CheckpointError(f"{path}: optimizer state does not fit the network ({exc})") from None
        for group in model.policy.optimizer.param_groups:  # this stage's rate, not the saved one
            group["lr"] = hyper["learning_rate"]
    model.num_timesteps = int(meta["steps"])
    return model


def record_heuristics(num_players: int, mode: str, names: list[str], games: int, seed: int):
    """``games`` recorded games of the heuristics ``names`` (each seat drawn per game), as
    ``train.distill.Decisions`` (decisions with at least two legal actions)."""
    import agents
    from eval.arena import Recorder, play
    from ripmarket_env.games import get
    from ripmarket_env.games.blackmarket import RulesConfig
    from train.distill import Decisions

    pool = [agents.make(n, game="black-market", seed=seed + i) for i, n in enumerate(names)]
    rng = np.random.default_rng(seed)
    seats = rng.integers(len(pool), size=(games, num_players))
    rec = Recorder(min_choices=2)
    play(get("black-market"), RulesConfig(num_players=num_players, mode=mode),
         [seed * 1_000_003 + 500_000 + g for g in range(games)], seats, pool, observers=[rec])
    d = rec.decisions
    return Decisions(obs=d["obs"].astype(np.float16), mask=d["mask"], action=d["action"].astype(np.int16),
                     style=d["agent"].astype(np.int8), game=d["game"].astype(np.int32),
                     reward=d["reward"].astype(np.float32))


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
    hyper = dict(n_steps=cfg["n_steps"], batch_size=cfg["batch_size"], n_epochs=cfg["n_epochs"],
                 learning_rate=cfg["learning_rate"], gamma=cfg["gamma"], gae_lambda=cfg["gae_lambda"],
                 ent_coef=cfg["ent_coef"])
    init = cfg.get("init")
    if init:
        from agents.blackmarket.policy import read_meta

        init_meta = read_meta(Path(init))
        if (init_meta["num_players"], init_meta["mode"]) != (P, cfg["mode"]):
            raise SystemExit(f"init {init}: made for {init_meta['num_players']} players ({init_meta['mode']}), "
                             f"this config trains {P} ({cfg['mode']})")
        model = load_trainable(Path(init), init_meta, env, seed=cfg["seed"], **hyper)
        base_steps = int(init_meta["steps"])  # the loaded model counts on from them
    else:
        model = MaskablePPO("MlpPolicy", env, seed=cfg["seed"], policy_kwargs={"net_arch": list(cfg["net_arch"])},
                            device="cpu", verbose=0, **hyper)
        base_steps = 0
        if cfg.get("pretrain"):
            from train.distill import pretrain_policy

            pre = cfg["pretrain"]
            t1 = time.time()
            data = record_heuristics(P, cfg["mode"], list(pre["agents"]), int(pre["games"]), int(pre["seed"]))
            stats = pretrain_policy(model.policy, data, winners_only=bool(pre.get("winners_only", True)),
                                    value=True, epochs=int(pre.get("epochs", 4)),
                                    lr=float(pre.get("learning_rate", 1e-3)), seed=cfg["seed"], progress=False)
            print(f"pretrain: {len(data)} decisions of {pre['games']} games in {time.time() - t1:.0f}s: "
                  + ", ".join(f"{k} {v:.4g}" if isinstance(v, float) else f"{k} {v}" for k, v in stats.items()),
                  flush=True)
    out = Path(cfg["out"])
    out.parent.mkdir(parents=True, exist_ok=True)
    prior = {"steps": base_steps, "stages": []} if not init else {
        "steps": base_steps, "stages": init_meta.get("stages", [{"config": init_meta.get("config"),
                                                                 "command": init_meta.get("command"),
                                                                 "steps": base_steps}])}
    command = f"python -m train.blackmarket_ppo --config {args.config}"

    def save(path: Path) -> None:
        steps = int(model.num_timesteps)
        model.save(str(path))
        stage = {"config": cfg, "command": command, "steps": steps}
        meta = {"game": "black-market", "num_players": P, "mode": cfg["mode"],
                "obs_size": int(env.observation_space.shape[0]), "num_actions": NUM_ACTIONS, "steps": steps,
                "minutes": minutes, "config": cfg, "command": command}
        if init:
            meta["stages"] = prior["stages"] + [stage]
        if best["score"] is not None:
            meta["selection"] = {"against": sel["against"], "seed": sel["seed"], "games": sel["games"],
                                 "win_rate": best["score"], "by_opponent": best["by_opponent"]}
        path.with_suffix(".json").write_text(json.dumps(meta, indent=1) + "\n")

    sel = cfg.get("select")
    best = {"score": None}
    snapshot_agents: list = []
    log = out.with_suffix(".log.jsonl")

    def frozen_copy():
        pol = type(model.policy)(model.observation_space, model.action_space, model.lr_schedule,
                                 **model.policy_kwargs)
        pol.load_state_dict(model.policy.state_dict())
        pol.set_training_mode(False)
        return pol

    def select(chunk_no: int) -> None:
        from agents.policy import PolicyAgent
        from eval.match import match

        model.policy.set_training_mode(False)
        me = PolicyAgent(model.policy, deterministic=True, name="learner")
        names = [sel["against"]] if isinstance(sel["against"], str) else list(sel["against"])
        rates = {}
        for name in names:
            r = match(me, agents.make(name, game="black-market", seed=7), games=sel["games"],
                      num_players=P, mode=cfg["mode"], seed=sel["seed"], game="black-market")
            rates[name] = (r["win_rate"], r["ci95"])
        worst = min(names, key=lambda n: rates[n][0])  # the figure of merit: the weakest match
        score = rates[worst][0]
        for snap in snapshot_agents:
            snap.policy, snap._sparse = frozen_copy(), None
        improved = best["score"] is None or score > best["score"]
        if improved:
            best["score"], best["by_opponent"] = score, {n: rates[n][0] for n in names}
            save(out)
        line = {"chunk": chunk_no, "steps": int(model.num_timesteps), "seconds": round(time.time() - t0),
                "win_rate": score, "ci95": rates[worst][1], "worst": worst,
                "by_opponent": {n: rates[n][0] for n in names}, "best": best["score"], "saved": improved}
        with log.open("a") as f:
            f.write(json.dumps(line) + "\n")
        print(f"select on seed {sel['seed']}: " + ", ".join(f"{n} {rates[n][0]:.3f}" for n in names)
              + f"; worst {worst} {score:.3f} [{rates[worst][1][0]:.3f}, {rates[worst][1][1]:.3f}] "
              f"best {best['score']:.3f}", flush=True)

    def opponent_pool():
        from agents.policy import PolicyAgent

        pool = []
        for i, n in enumerate(cfg["opponents"]):
            if n == "snapshot":
                snap = PolicyAgent(frozen_copy(), deterministic=False, seed=100 + i, name="snapshot")
                snapshot_agents.append(snap)
                pool.append(snap)
            else:
                pool.append(agents.make(n, game="black-market", seed=i))
        return pool

    t0 = time.time()
    budget = minutes * 60
    chunk = cfg["num_envs"] * cfg["n_steps"] * 4
    phase = 1
    if sel and (init or cfg.get("pretrain")):
        select(0)
    chunks = 0
    while time.time() - t0 < budget:
        if phase == 1 and (init or cfg.get("pretrain") or time.time() - t0 > budget * cfg["warmup_fraction"]):
            phase = 2
            if cfg.get("opponent_per_game"):
                mate = None
                if cfg.get("teammate") == "self":  # the learner's own current policy, sampling
                    from agents.policy import PolicyAgent

                    mate = PolicyAgent(model.policy, deterministic=False, seed=cfg["seed"], name="self")
                elif cfg.get("teammate"):
                    mate = agents.make(cfg["teammate"], game="black-market", seed=99)
                mix = PerGameOpponents(opponent_pool(), cfg.get("opponent_weights"), cfg["num_envs"], cfg["seed"],
                                       teammate=mate)
                env = BlackMarketVecEnv(seed=cfg["seed"] + 1, rules=rules, opponents=mix.pool[0],
                                        compiled_opponents=False, **common)
                mix.install(env.batch)
            else:
                opp = RandomMix(opponent_pool(), seed=cfg["seed"])
                env = BlackMarketVecEnv(seed=cfg["seed"] + 1, rules=rules, opponents=opp, **common)
            model.set_env(env)
        model.policy.set_training_mode(True)
        model.learn(chunk, reset_num_timesteps=False)
        chunks += 1
        print(f"{time.time() - t0:7.0f}s phase {phase} steps {model.num_timesteps}", flush=True)
        if sel and chunks % sel["every"] == 0:
            select(chunks)
    if sel:
        if chunks % sel["every"]:
            select(chunks)
        print(f"wrote {out}: best {best['score']:.3f} on the selection seed")
    else:
        save(out)
        print(f"wrote {out} after {model.num_timesteps} steps")


if __name__ == "__main__":
    main()
