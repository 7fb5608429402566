"""Self-play training: MaskablePPO on the batched vector env against an opponent league.

    ripmarket train configs/<game>/CONFIG.yaml [--out DIR]

* **Game.** The config's ``game`` (a registered id) gives the envs, rules (``rules:``),
  evaluations and checkpoints through its ``GameSpec``, and the league's and the
  evaluations' default zoo through its agents' profile (``agents.game_agents``).
* **League.** Every opponent seat of every new episode is drawn per ``league.mix``: a
  frozen past learner (``self``), a zoo heuristic (``zoo``) or the random agent. Every
  ``league.snapshot_every`` learner steps the current policy is copied into a ring of
  ``pool_size`` frozen snapshots (fictitious self-play: ``latest_share`` of the self
  seats go to the newest snapshot, the rest uniformly over the pool); ``whole_tables``
  of the new episodes seat one draw at every opponent seat instead. The learner plays
  every decision of its seat (in turn or not: R.I.P. Market's Ghost phases, The Rune
  Market's blocks), from a seat drawn per episode.
* **Zoo refresh** (``league.refresh_*``, ``ZooRefresh``). The league's distilled zoo
  (``-bc`` agents) is kept faithful to the real heuristics where the learner leads the
  game: every ``refresh_every`` steps the heuristics play ``refresh_games`` games against
  the current learner in worker processes, and the distilled network trains on their
  decisions (DAgger). Without it the learner learns to exploit the imitations' mistakes.
* **Start.** ``init_from`` loads a checkpoint's weights (training in stages); else
  ``pretrain`` behaviour-clones the zoo's winning decisions; else a fresh network.
* **Policies.** ``policy.arch: mlp`` (SB3's MLP), ``seat`` (``SeatExtractor``: one small
  encoder shared by the 10 relative seat blocks of the observation, its outputs
  concatenated in seat order, plus an MLP over the global pieces) or ``sparse``
  (``SparseExtractor``: a first layer on the observation's non-zero entries, shared by
  actor and critic).
* **Logs.** TensorBoard under ``<out>/runs/<run_name>`` (``charts/``: episodic return and
  length, SPS, time split, win rate vs the zoo; ``losses/``: SB3's PPO losses); checkpoints
  under ``<out>/checkpoints/<run_name>/`` (``latest.zip``, ``best.zip``, ``final.zip``);
  the final evaluation against the zoo in ``<out>/checkpoints/<run_name>/final_eval.json``.
"""

from __future__ import annotations

import dataclasses
import json
import random
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn as nn
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.logger import KVWriter, Logger, TensorBoardOutputFormat
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor
from stable_baselines3.common.vec_env import VecEnv
from sb3_contrib.common.maskable.buffers import MaskableRolloutBuffer
from gymnasium import spaces

from agents.networks import SeatExtractor, SparseExtractor, policy_kwargs  # noqa: F401
from eval.evaluate import evaluate_vs_zoo
from train.config import DEFAULT_GAME, PolicyConfig, TrainConfig, table_games
from agents.checkpoint import make_metadata, save_checkpoint

#: The distilled zoo a run's refreshes leave in its checkpoint folder (``league.zoo_init``
#: of a later stage; where a resumed run's imitations start).
ZOO_FILE = "zoo-bc.pt"

# ----------------------------------------------------------------------------- league
class League:
    """The opponent pool: random, the zoo, and a ring of frozen learner snapshots."""

    def __init__(self, cfg: TrainConfig, policy_template=None, seed: int = 0):
        import agents
        from agents.policy import PolicyAgent

        from train.config import _default_zoo

        lc = cfg.league
        self.game = cfg.game
        self.mix = np.array([lc.mix.get(k, 0.0) for k in ("self", "zoo", "random")], float)
        self.mix /= self.mix.sum()
        self.latest_share = lc.latest_share
        self.whole_tables = lc.whole_tables
        self.rng = np.random.default_rng(np.random.SeedSequence([seed, 0x1EA6]))
        self.agents: list = [agents.make("random", seed=seed)]
        self.names: list[str] = ["random"]
        self.zoo_ids = []
        for z in lc.zoo or _default_zoo(cfg.game):
            self.zoo_ids.append(len(self.agents))
            if z in agents.names(cfg.game):
                self.agents.append(agents.make(z, game=cfg.game))
            else:  # an imitation of one of the game's heuristics in the league.zoo_init file (config checks)
                from agents.policy import load_distilled, zoo_file

                self.agents.append(load_distilled(z[:-len("-bc")], zoo_file(lc.zoo_init), game=cfg.game))
            self.names.append(z)
        self.snap_ids: list[int] = []
        self.snap_steps: list[int] = []
        self.latest = -1
        self.pool_size = lc.pool_size
        self._template = policy_template
        self._det = lc.deterministic_opponents
        self._PolicyAgent = PolicyAgent
        self._seed = seed
        if lc.zoo_init:
            self._start_distilled_from(lc.zoo_init)
        self.mate = -1  # league.teammate: the agent of the learner's teammates (-1: league seats)
        if lc.teammate:
            self.mate = len(self.agents)
            self.agents.append(None if lc.teammate == "self" else agents.make(lc.teammate, game=cfg.game))
            self.names.append(lc.teammate)

    def set_learner(self, policy) -> None:
        """``league.teammate: self``: the learner's teammates play ``policy``, the learner's
        own live network, sampling (it trains on)."""
        if self.mate >= 0 and self.names[self.mate] == "self":
            self.agents[self.mate] = self._PolicyAgent(policy, deterministic=False, seed=self._seed, name="self")

    def teammates(self, rules) -> np.ndarray | None:
        """``mates[seat, rel]``: is the seat ``rel + 1`` after ``seat`` on its side (None
        without ``league.teammate``, or at a table without teams: ``tables``)? From the
        game's ``extras["sides"]`` hook."""
        if self.mate < 0:
            return None
        from ripmarket_env.games import get

        side = get(self.game).extras["sides"](rules)
        if side is None:
            return None
        side = np.asarray(side)
        P = len(side)
        return np.array([[side[(s + r + 1) % P] == side[s] for r in range(P - 1)] for s in range(P)])

    def _start_distilled_from(self, path: str) -> None:
        """Give the distilled agents the network of the distilled-zoo file ``path``
        (``league.zoo_init``); ``CheckpointError`` for a file that does not fit them."""
        from agents.checkpoint import CheckpointError
        from agents.policy import zoo_file
        from train.distill import DistilledAgent, load

        net, meta = load(zoo_file(path), game=self.game)
        for a in self.agents:
            if isinstance(a, DistilledAgent):
                mine = tuple(getattr(a, "styles", ()))
                if tuple(meta["styles"]) != mine:
                    raise CheckpointError(f"league.zoo_init: {path} imitates {', '.join(meta['styles'])}; the league's "
                                          f"distilled agents need {', '.join(mine)} in that order")
                a.net = net

    def add_snapshot(self, policy, steps: int) -> None:
        """Freeze a copy of ``policy`` into the pool (replacing the oldest when full)."""
        import copy

        state = {k: v.detach().clone() for k, v in policy.state_dict().items()}
        if len(self.snap_ids) < self.pool_size:
            frozen = copy.deepcopy(policy)
            frozen.set_training_mode(False)
            agent = self._PolicyAgent(frozen, deterministic=self._det, seed=self._seed + len(self.agents),
                                      name=f"snapshot@{steps}")
            self.snap_ids.append(len(self.agents))
            self.snap_steps.append(steps)
            self.agents.append(agent)
            self.names.append(agent.name)
            self.latest = len(self.snap_ids) - 1
        else:
            slot = int(np.argmin(self.snap_steps))
            agent = self.agents[self.snap_ids[slot]]
            agent.policy.load_state_dict(state)
            agent.name = f"snapshot@{steps}"
            self.snap_steps[slot] = steps
            self.latest = slot

    def own_distilled(self):
        """Give the league's distilled agents (``-bc``) a private copy of their network, so
        that refreshing it leaves the registry's shared one alone; returns the copy and
        its style names (None when the league has no distilled agent)."""
        import copy

        from train.distill import DistilledAgent

        nets: dict[int, Any] = {}
        styles = None
        for a in self.agents:
            if isinstance(a, DistilledAgent):
                if id(a.net) not in nets:
                    nets[id(a.net)] = copy.deepcopy(a.net)
                a.net = nets[id(a.net)]
                styles = getattr(a, "styles", styles)
        if len(nets) > 1:
            raise ValueError("league.refresh_every: the league's distilled agents come from more than one network")
        return (next(iter(nets.values())), styles) if nets else None

    def draw(self, shape) -> np.ndarray:
        """Agent ids for a (games, opponent seats) block of new episodes."""
        n = int(np.prod(shape))
        mix = self.mix.copy()
        if not self.snap_ids:
            mix[0] = 0.0
            if mix.sum() == 0:
                mix[2] = 1.0
            mix /= mix.sum()
        kind = self.rng.choice(3, size=n, p=mix)
        out = np.zeros(n, np.int64)
        k_self = kind == 0
        if k_self.any():
            m = int(k_self.sum())
            latest = self.rng.random(m) < self.latest_share
            pick = self.rng.integers(0, len(self.snap_ids), m)
            pick[latest] = self.latest
            out[k_self] = np.asarray(self.snap_ids)[pick]
        k_zoo = kind == 1
        if k_zoo.any():
            if not self.zoo_ids:
                out[k_zoo] = 0
            else:
                out[k_zoo] = np.asarray(self.zoo_ids)[self.rng.integers(0, len(self.zoo_ids), int(k_zoo.sum()))]
        out = out.reshape(shape)
        if self.whole_tables > 0 and len(shape) == 2 and shape[1] > 1:  # league.whole_tables
            whole = self.rng.random(shape[0]) < self.whole_tables
            out[whole, 1:] = out[whole, :1]
        return out


def _league_batch_class(spec):
    import functools

    import agents
    from agents.base import act_grouped
    from ripmarket_env.envs.vector import LearnerBatch as _GameBatch

    class LearnerBatch(_GameBatch):
        """The game's batch (``spec``) with the zoo's name resolution and fused network opponents."""

        holds = False
        """True: an action -1 leaves its game where it is for this step (the engine skips
        it; ``train.rllib_backend``'s next-step auto-reset holds a finished game's new deal
        this way); the other actions are checked as always."""

        def __init__(self, *args, **kwargs):
            super().__init__(*args, spec=spec, agent_resolver=functools.partial(agents.make, game=spec.id),
                             decide=act_grouped, **kwargs)

        def check_actions(self, actions) -> np.ndarray:
            a = self._action_array(actions)
            held = a == -1
            if not (self.holds and held.any()):
                return super().check_actions(a)
            probe = a.copy()
            probe[held] = self.masks[held].argmax(1)  # a legal action: only the others are checked
            super().check_actions(probe)
            return a

    class LeagueBatch(LearnerBatch):
        """A ``LearnerBatch`` whose opponents are drawn per episode and seat from a ``League``;
        its network opponents read the observations' non-zeros as the engine gathers them."""

        sparse_opponents = True

        def __init__(self, league: League, *args, **kwargs):
            self.league = league
            super().__init__(*args, **kwargs)
            self.lineup = np.zeros((self.num_envs, self.num_players - 1), np.int64)
            self.mates = league.teammates(self.rules)
            self.env_time = 0.0

        def _deal(self, games: np.ndarray) -> None:
            super()._deal(games)
            self.lineup[games] = self.league.draw((len(games), self.num_players - 1))
            if self.mates is not None:  # the learner's side: league.teammate
                block = self.lineup[games]
                block[self.mates[self.seat[games]]] = self.league.mate
                self.lineup[games] = block

        def _opponent_actions(self, idx, rel, obs, masks) -> np.ndarray:
            return act_grouped(self.league.agents, self.lineup[idx, rel], obs, masks, csr=self.opp_csr)

        def step(self, actions):
            t = time.perf_counter()
            out = super().step(actions)
            self.env_time += time.perf_counter() - t
            return out

    class RandomBatch(LearnerBatch):
        """Every opponent the random agent (a league of ``random`` only): the vector env's
        compiled path, one kernel call per step, timed like ``LeagueBatch``."""

        def __init__(self, league: League, *args, **kwargs):
            self.league = league
            super().__init__(*args, **kwargs)
            self.env_time = 0.0

        def step(self, actions):
            t = time.perf_counter()
            out = super().step(actions)
            self.env_time += time.perf_counter() - t
            return out

    return LeagueBatch, RandomBatch


class MixedBatch:
    """Several league batches, one per table (player count, ``player_counts``, or count and
    rules, ``tables``), seen as one batch of games: rows ``bounds[i]:bounds[i+1]`` are the
    games of ``parts[i]``. Every table shares the observation layout and the actions (the
    observation names the table), so one policy acts on all rows at once; each part plays
    its own opponents."""

    def __init__(self, parts: list):
        sizes = {(p.obs_size, p.num_actions) for p in parts}
        if len(sizes) != 1:  # a game whose observation is not one shape at every table
            raise ValueError(f"the tables' observations or actions differ: {sorted(sizes)}")
        self.parts = parts
        self.bounds = np.cumsum([0] + [p.num_envs for p in parts])
        self.num_envs = int(self.bounds[-1])
        self.num_players = max(p.num_players for p in parts)
        self.player_counts = [p.num_players for p in parts]
        self.observation_space = parts[0].observation_space
        self.num_actions = parts[0].num_actions
        self.obs_size = parts[0].obs_size
        self.obs = np.zeros((0, self.obs_size), np.float32)  # each reset and step gathers a new one
        self.masks = np.zeros((self.num_envs, self.num_actions), bool)
        self.illegal = np.zeros(0, np.int64)

    @property
    def env_time(self) -> float:
        return sum(p.env_time for p in self.parts)

    @property
    def seat(self) -> np.ndarray:
        return np.concatenate([p.seat for p in self.parts])

    @property
    def episode(self) -> np.ndarray:
        return np.concatenate([p.episode for p in self.parts])

    def _encode(self, rows, viewers, out) -> None:  # the terminal-observation kernel (first part's)
        self.parts[0]._encode(rows, viewers, out)

    def _gather(self) -> None:
        # A new observation array per step, as the parts' ring buffers give: SB3 stores the
        # observation it acted on only after the step (rollout_buffer.add(self._last_obs)),
        # so the step must not overwrite it.
        self.obs = np.concatenate([p.obs for p in self.parts])
        for p, a, b in zip(self.parts, self.bounds[:-1], self.bounds[1:]):
            self.masks[a:b] = p.masks

    def reset(self, seed: int | None = None) -> np.ndarray:
        for i, p in enumerate(self.parts):  # each count its own stream of deals
            p.reset(None if seed is None else int(np.random.SeedSequence([seed, i]).generate_state(1)[0]))
        self._gather()
        return self.obs

    def step(self, actions):
        actions = np.asarray(actions).reshape(-1)
        rewards, dones, ended, terminal = [], [], [], []
        for p, a, b in zip(self.parts, self.bounds[:-1], self.bounds[1:]):
            _, r, d, e, t = p.step(actions[a:b])
            rewards.append(r)
            dones.append(d)
            ended.append(e + a)
            terminal.append(t)
        self.illegal = np.concatenate([p.illegal + a for p, a in zip(self.parts, self.bounds[:-1])])
        self._gather()
        return (self.obs, np.concatenate(rewards), np.concatenate(dones), np.concatenate(ended),
                np.concatenate(terminal))

    def render(self, game: int = 0, mode: str = "ansi"):
        i = int(np.searchsorted(self.bounds, game, side="right")) - 1
        return self.parts[i].render(game - int(self.bounds[i]), mode)


def make_league_vec_env(cfg: TrainConfig, league: League, seed: int):
    """The game's SB3 vector env (``vec_env_classes(spec)``) whose opponents come from
    ``league`` (random learner seat); with several tables (``cfg.player_counts`` or
    ``cfg.tables``), a ``MixedBatch`` of one league batch per table. The learner answers every decision of its seat, in and out
    of turn (e.g. a defender's), and its teammates, if the game has teams, are opponent
    seats of the league like the others."""
    from ripmarket_env.envs.vector import vec_env_classes
    from ripmarket_env.games import get
    from train.config import rules_of

    spec = get(cfg.game)
    GameVecEnv = vec_env_classes(spec)[0]

    LeagueBatch, RandomBatch = _league_batch_class(spec)
    only_random = league.mix[0] == 0 and league.mix[1] == 0 and league.mate < 0
    Batch = RandomBatch if only_random else LeagueBatch

    def batch(n: int, table, part_seed: int):
        return Batch(league, n, None, "random", "random", rules_of(cfg, table.num_players, table.rules), part_seed)

    class LeagueVecEnv(GameVecEnv):
        def __init__(self):
            tables = cfg.run_tables()
            if len(tables) == 1:
                self.batch = batch(cfg.n_envs, tables[0], seed)
            else:
                share = table_games(cfg.n_envs, tables)
                self.batch = MixedBatch([batch(int(n), t, seed + i) for i, (n, t) in enumerate(zip(share, tables))])
            self.render_mode = None
            self.num_players = self.batch.num_players
            self._actions = None
            VecEnv.__init__(self, self.batch.num_envs, self.batch.observation_space,
                            spaces.Discrete(self.batch.num_actions))

    env = LeagueVecEnv()
    env.seed(seed)
    return env


# ----------------------------------------------------------------------------- zoo refresh
class ZooRefresh:
    """Keeps the league's distilled zoo faithful to the real heuristics (``league.refresh_*``).

    Each refresh, the real heuristics play games against the current learner (saved as a
    checkpoint), in worker processes; their decisions join the recording, and the league's
    distilled network trains on the whole recording for ``refresh_epochs`` epochs. The
    agreement of the network with the heuristics on the new games, measured before the
    fit, is how faithful the opponents were where the learner took them."""

    def __init__(self, cfg: TrainConfig, league: League, out: Path):
        from train.distill import default_styles

        own = league.own_distilled()
        if own is None:
            raise ValueError("league.refresh_every needs distilled agents (-bc) in league.zoo")
        self.net, styles = own
        self.styles = tuple(styles or default_styles(cfg.game))
        self.cfg = cfg
        lc = cfg.league
        self.base = recording(cfg.counts(), lc.refresh_base_games, lc.refresh_seed, out, cfg.progress,
                              game=cfg.game, tables=cfg.run_tables()) if lc.refresh_base_games else None
        self.parts: list = []
        self.count = 0

    def __call__(self, guest: Path, games: int | None = None) -> dict[str, Any]:
        from train.distill import Decisions, collect, fit

        lc = self.cfg.league
        self.count += 1
        t0 = time.perf_counter()
        tables = self.cfg.run_tables()
        new = collect([t.num_players for t in tables], games or lc.refresh_games, self.styles,
                      seed=lc.refresh_seed * 1_000 + self.count, progress=self.cfg.progress, guest=str(guest),
                      game=self.cfg.game, rules=[t.rules for t in tables])
        new.game = new.game + self.count * 10_000_000  # game ids distinct from the other recordings
        before = agreement(self.net, new, len(self.styles))
        self.parts.append(new)
        data = Decisions.concat(([self.base] if self.base is not None else []) + self.parts)
        t1 = time.perf_counter()
        _, info = fit(data, self.styles, epochs=lc.refresh_epochs, seed=self.cfg.seed + self.count,
                      progress=False, net=self.net)
        return {"agreement_before": before, "agreement_after": agreement(self.net, new, len(self.styles)),
                "heldout_accuracy": info["accuracy"], "decisions": len(data), "record_s": t1 - t0,
                "fit_s": time.perf_counter() - t1}

    def save(self, path: Path, steps: int) -> Path:
        from train.distill import save

        hidden = [m.out_features for m in self.net if hasattr(m, "out_features")][:-1]
        return save(self.net, path, self.styles, hidden,
                    {"num_players": self.cfg.num_players, "player_counts": self.cfg.counts(), **self.cfg.tables_metadata(),
                     "refreshes": self.count, "learner_steps": steps,
                     "base_games": self.cfg.league.refresh_base_games, "seed": self.cfg.league.refresh_seed,
                     "refresh_games": self.cfg.league.refresh_games}, game=self.cfg.game)


def agreement(net, data, n_styles: int) -> float:
    """Share of ``data``'s decisions where ``net``'s masked argmax is the recorded action."""
    from train.distill import agrees

    return float(agrees(net, data, np.arange(len(data)), n_styles).mean()) if len(data) else 0.0


def recording_path(counts: list[int], games: int, seed: int, out: Path, teacher: str = "",
                   game: str = DEFAULT_GAME, tables=None) -> Path:
    """Where ``recording`` caches its games: ``<out>/pretrain/``, the file named by the
    recorded agents, counts, games and seed (and the game, for every game but the first
    to have recordings, whose names predate it). ``tables`` (a run's ``tables``,
    ``train.config.Table``): named by the tables' labels and a digest of their rules
    instead of the counts."""
    who = f"{teacher}-vs-zoo" if teacher else "zoo"
    prefix = "" if game == DEFAULT_GAME else f"{game}-"
    if tables and any(t.own for t in tables):
        import hashlib

        rules = json.dumps([[t.num_players, t.rules] for t in tables], sort_keys=True)
        at = "-tables-" + "_".join(t.label for t in tables) + "-" + hashlib.sha256(rules.encode()).hexdigest()[:8]
        return out / "pretrain" / f"{prefix}{who}{at}_{games}games_seed{seed}.npz"
    return out / "pretrain" / f"{prefix}{who}{'-'.join(map(str, counts))}p_{games}games_seed{seed}.npz"


def recording(counts: list[int], games: int, seed: int, out: Path, progress: bool = True, teacher: str = "",
              game: str = DEFAULT_GAME, tables=None):
    """The zoo-only recording of ``games`` games of ``game`` at the player ``counts`` (split
    evenly; ``train.distill.collect``: the game's heuristics), cached at ``recording_path``
    (shared by the warm start and the zoo refresh). With a ``teacher`` (an agent name): the
    teacher's decisions in one seat of every game against the zoo instead. ``tables`` (a
    run's ``run_tables()``): at each table's count and rules instead of ``counts``."""
    from train.distill import collect, load_decisions, save_decisions

    cache = recording_path(counts, games, seed, out, teacher, game, tables)
    if cache.is_file():
        return load_decisions(cache)
    if tables:
        counts = [t.num_players for t in tables]
    data = collect(counts, games, seed=seed, progress=progress, guest=teacher or None,
                   record="guest" if teacher else "zoo", game=game,
                   rules=[t.rules for t in tables] if tables else None)
    save_decisions(data, cache)
    return data


# ----------------------------------------------------------------------------- logging
class _Renamer(KVWriter):
    """SB3's ``train/*`` keys go to ``losses/*`` and ``time/fps`` to ``charts/SPS``."""

    def __init__(self, inner: KVWriter):
        self.inner = inner

    def write(self, key_values, key_excluded, step=0):
        kv, ex = {}, {}
        for k, v in key_values.items():
            nk = k
            if k.startswith("train/"):
                nk = "losses/" + k[len("train/"):]
            elif k == "time/fps":
                nk = "charts/SPS_sb3"
            kv[nk] = v
            ex[nk] = key_excluded.get(k, ())
        self.inner.write(kv, ex, step)

    def close(self):
        self.inner.close()


class LeagueCallback(BaseCallback):
    """Snapshots, evaluations, checkpoints, episode statistics, timing and the progress bar."""

    def __init__(self, cfg: TrainConfig, league: League, ckpt_dir: Path, run_name: str, console=None,
                 refresh: ZooRefresh | None = None):
        super().__init__()
        self.refresh = refresh
        self.next_refresh = cfg.league.refresh_every if refresh is not None else None
        self.refreshes: list[dict] = []
        self.t_refresh = self.t_refresh_start = 0.0
        self.cfg, self.league, self.ckpt_dir, self.run_name = cfg, league, ckpt_dir, run_name
        self.next_snap = cfg.league.snapshot_every
        self.next_eval = cfg.eval_every if cfg.eval_every else None
        self.next_ckpt = cfg.checkpoint_every if cfg.checkpoint_every else None
        self.best = -1.0
        self.history: list[dict] = []
        self.t_rollout = self.t_train = self.t_callback = 0.0
        self._t0 = self._t_roll_start = self._t_roll_end = None
        self.cpu_train = 0.0  # CPU seconds of the process (all its threads) in the rollouts and updates
        self._c_roll_start = self._c_roll_end = None
        self._ret = None
        self._len = None
        self._done_ret: list[float] = []
        self._done_len: list[int] = []
        self.progress = None
        self.console = console
        self.start_steps = 0
        self.deadline = None  # max_minutes: the wall-clock time the training loop stops at

    def _on_training_start(self) -> None:
        n = self.training_env.num_envs
        self._ret = np.zeros(n)
        self._len = np.zeros(n, np.int64)
        self._t0 = time.perf_counter()
        self.deadline = self._t0 + 60.0 * self.cfg.max_minutes if self.cfg.max_minutes else None
        self.start_steps = s = self.model.num_timesteps  # > 0 when resuming
        if s:
            lc = self.cfg.league
            self.next_snap = s + lc.snapshot_every
            self.next_eval = s + self.cfg.eval_every if self.cfg.eval_every else None
            self.next_ckpt = s + self.cfg.checkpoint_every if self.cfg.checkpoint_every else None
            if self.next_refresh is not None:
                self.next_refresh = s + lc.refresh_every
        if self.cfg.progress:  # rich's bar on a terminal, plain lines in a log (every 30 s at most)
            from eval.progress import Progress

            self.progress = Progress(self.cfg.total_timesteps, f"train {self.run_name}", every=30.0, start=s)
            self.progress.__enter__()
        if self.refresh is not None and self.cfg.league.refresh_start_games:
            self.t_refresh_start = self._refresh(self.cfg.league.refresh_start_games)
        self.league.add_snapshot(self.model.policy, s)
        if self.next_eval is not None:  # the curve starts from the initial (or warm-started) policy
            self.history.append(self._point(self.evaluate(), 0.0))
        self._t0 = time.perf_counter()

    def _on_rollout_start(self) -> None:
        now, cpu = time.perf_counter(), time.process_time()
        if self._t_roll_end is not None:  # the update after the last rollout
            self.t_train += now - self._t_roll_end
            self.cpu_train += cpu - self._c_roll_end
        self._t_roll_start, self._c_roll_start = now, cpu

    def _on_step(self) -> bool:
        r, d = self.locals["rewards"], self.locals["dones"]
        self._ret += r
        self._len += 1
        if d.any():
            ix = np.flatnonzero(d)
            self._done_ret.extend(self._ret[ix].tolist())
            self._done_len.extend(self._len[ix].tolist())
            self._ret[ix] = 0
            self._len[ix] = 0
        return self.deadline is None or time.perf_counter() < self.deadline

    def _on_rollout_end(self) -> None:
        now = time.perf_counter()
        self.t_rollout += now - self._t_roll_start
        self.cpu_train += time.process_time() - self._c_roll_start
        try:
            self._rollout_end_work(now)
        finally:
            self._t_roll_end, self._c_roll_end = time.perf_counter(), time.process_time()
            self.t_callback += self._t_roll_end - now

    def _rollout_end_work(self, now: float) -> None:
        steps = self.model.num_timesteps
        lg = self.logger
        if self._done_ret:
            lg.record("charts/episodic_return", float(np.mean(self._done_ret)))
            lg.record("charts/episodic_length", float(np.mean(self._done_len)))
            lg.record("charts/episodes", len(self._done_ret))
            self._done_ret, self._done_len = [], []
        elapsed = now - self._t0
        env_t = self.training_env.batch.env_time
        lg.record("charts/SPS", (steps - self.start_steps) / max(elapsed, 1e-9))
        lg.record("charts/SPS_training", (steps - self.start_steps) / max(self.t_rollout + self.t_train, 1e-9))
        lg.record("charts/time_env_s", env_t)
        lg.record("charts/time_policy_s", self.t_rollout - env_t)
        lg.record("charts/time_update_s", self.t_train)
        lg.record("charts/time_eval_checkpoint_s", self.t_callback)
        lg.record("charts/pool_size", len(self.league.snap_ids))
        if steps >= self.next_snap:
            self.league.add_snapshot(self.model.policy, steps)
            self.next_snap = steps + self.cfg.league.snapshot_every
        if self.next_refresh is not None and steps >= self.next_refresh:
            self.t_refresh += self._refresh()  # in-training refreshes: part of the callbacks' time
            self.next_refresh = steps + self.cfg.league.refresh_every
        if self.next_eval is not None and steps >= self.next_eval:
            point = self._point(self.evaluate(), elapsed)
            wr = point["win_rate_vs_zoo"]
            lg.record("charts/win_rate_vs_zoo", wr)
            for n, r in point.get("by_count", {}).items():
                lg.record(f"charts/win_rate_vs_zoo_{n}p", r["win_rate"])
            for label, r in point.get("by_table", {}).items():
                lg.record(f"charts/win_rate_vs_zoo_{label}", r["win_rate"])
            self.history.append(point)
            if wr > self.best:
                self.best = wr
                self.save("best", {"eval_win_rate_vs_zoo": wr, "eval_games": self.cfg.eval_games})
            self.next_eval = steps + self.cfg.eval_every
        if self.next_ckpt is not None and steps >= self.next_ckpt:
            self.save("latest")
            self.next_ckpt = steps + self.cfg.checkpoint_every
        if self.progress is not None:
            self.progress.describe(f"train {self.run_name}  {(steps - self.start_steps) / max(elapsed, 1e-9):,.0f} steps/s"
                                   + (f"  win vs zoo {self.history[-1]['win_rate_vs_zoo']:.2f}" if self.history else ""))
            self.progress.advance(min(steps, self.cfg.total_timesteps) - self.progress.done)

    def _refresh(self, games: int | None = None) -> float:
        """One zoo refresh against the current learner (saved as ``latest``), logged;
        returns its duration."""
        t = time.perf_counter()
        steps = self.model.num_timesteps
        stats = self.refresh(self.save("latest"), games)  # the heuristics play the current learner
        self.refresh.save(self.ckpt_dir / ZOO_FILE, steps)
        self.logger.record("charts/zoo_agreement_before_refresh", stats["agreement_before"])
        self.logger.record("charts/zoo_agreement_after_refresh", stats["agreement_after"])
        self.refreshes.append({"steps": steps, **stats})
        dt = time.perf_counter() - t
        if self.console is not None:
            self.console.print(f"zoo refresh {self.refresh.count} at {steps:,} steps: agreement with the heuristics "
                               f"on the learner's games {stats['agreement_before']:.1%} -> {stats['agreement_after']:.1%}")
        return dt

    def evaluate(self) -> dict[str, Any]:
        """The learner against the evaluation zoo, ``eval_games`` games at each player count."""
        from agents.policy import PolicyAgent

        self.model.policy.set_training_mode(False)
        agent = PolicyAgent(self.model.policy, deterministic=True, name="learner")
        return evaluate_counts(agent, self.cfg, self.cfg.eval_games, seed=self.cfg.seed + len(self.history) + 1)

    def _point(self, res: dict[str, Any], elapsed: float) -> dict[str, Any]:
        return {"steps": self.model.num_timesteps, "win_rate_vs_zoo": float(res["win_rate"]),
                "wilson95": res["wilson95"], "games": res["games"], "time_s": elapsed,
                **{k: res[k] for k in ("by_count", "by_table") if k in res}}

    def save(self, tag: str, extra: dict | None = None) -> Path:
        meta = make_metadata(self.cfg.to_dict(), self.cfg.counts(), self.model.num_timesteps,
                             {"run_name": self.run_name, "tag": tag, **self.cfg.tables_metadata(), **(extra or {})},
                             game=self.cfg.game)
        return save_checkpoint(self.model, self.ckpt_dir / f"{tag}.zip", meta)

    def _on_training_end(self) -> None:
        now, cpu = time.perf_counter(), time.process_time()
        if self._t_roll_start is not None and (self._t_roll_end is None or self._t_roll_end < self._t_roll_start):
            self.t_rollout += now - self._t_roll_start  # a rollout cut short (max_minutes)
            self.cpu_train += cpu - self._c_roll_start
        elif self._t_roll_end is not None:  # the last update (SB3 calls no rollout start after it)
            self.t_train += now - self._t_roll_end
            self.cpu_train += cpu - self._c_roll_end
        self._t_roll_start = self._t_roll_end = None
        if self.progress is not None:
            self.progress.__exit__(None, None, None)


def evaluate_counts(agent, cfg: TrainConfig, games: int, seed: int) -> dict[str, Any]:
    """``evaluate_vs_zoo`` at the run's one table; with several (``player_counts``),
    ``games`` games at each count, their results under ``by_count`` and, as the summary
    ``win_rate``, the mean over the counts of the win rate times the count (1.0 = parity:
    winning as often as a seat's fair share; the band is the mean of the counts' bands).
    With ``tables``, likewise per table under ``by_table`` (keyed by the table's label,
    ``4p-ffa``), each table's fair share one in its number of sides (the game's
    ``extras["sides"]``: a team wins together), else one in its count."""
    from eval.tournament import sides_of
    from ripmarket_env.games import get
    from train.config import _default_zoo, rules_of

    tables = cfg.run_tables()
    zoo = cfg.league.eval_zoo or _default_zoo(cfg.game)
    if len(tables) == 1:
        return evaluate_vs_zoo(agent, tables[0].num_players, games, zoo, seed=seed, game=cfg.game, rules=tables[0].rules)
    if not cfg.tables:
        by = {t.num_players: evaluate_vs_zoo(agent, t.num_players, games, zoo, seed=seed * 100 + t.num_players,
                                             game=cfg.game, rules=t.rules) for t in tables}
        parity = float(np.mean([r["win_rate"] * n for n, r in by.items()]))
        band = [float(np.mean([r["wilson95"][k] * n for n, r in by.items()])) for k in (0, 1)]
        return {"win_rate": parity, "wilson95": band, "games": games,
                "by_count": {n: {k: r[k] for k in ("wins", "games", "win_rate", "wilson95")} for n, r in by.items()}}
    spec = get(cfg.game)
    by, share = {}, {}
    for i, t in enumerate(tables):
        r = evaluate_vs_zoo(agent, t.num_players, games, zoo, seed=seed * 1000 + 10 * i + t.num_players,
                            game=cfg.game, rules=t.rules)
        side = sides_of(spec, rules_of(cfg, t.num_players, t.rules))
        share[t.label] = len(set(side)) if side is not None else t.num_players
        by[t.label] = {"num_players": t.num_players, "rules": dict(t.rules), "parity": share[t.label],
                       **{k: r[k] for k in ("wins", "games", "win_rate", "wilson95")}}
    parity = float(np.mean([r["win_rate"] * share[lab] for lab, r in by.items()]))
    band = [float(np.mean([r["wilson95"][k] * share[lab] for lab, r in by.items()])) for k in (0, 1)]
    return {"win_rate": parity, "wilson95": band, "games": games, "by_table": by}


# ----------------------------------------------------------------------------- plots
def plot_learning_curve(history: list[dict], path: Path, title: str = "") -> Path | None:
    """Win rate against the evaluation zoo (95% Wilson band) by learner steps, as a PNG."""
    if not history:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if "by_count" in history[-1] or "by_table" in history[-1]:
        return _plot_counts(history, path, title, plt)
    steps = np.array([h["steps"] for h in history], float)
    wr = np.array([h["win_rate_vs_zoo"] for h in history])
    lo = np.array([h.get("wilson95", [w, w])[0] for h, w in zip(history, wr)])
    hi = np.array([h.get("wilson95", [w, w])[1] for h, w in zip(history, wr)])
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.fill_between(steps, lo, hi, alpha=0.25, label="95% Wilson interval")
    ax.plot(steps, wr, marker="o", label="win rate vs the zoo")
    games = history[-1].get("games")
    ax.set_xlabel("learner steps")
    ax.set_ylabel("win rate" + (f" ({games} games per point)" if games else ""))
    ax.set_ylim(0, max(0.5, float(hi.max()) + 0.05))
    ax.grid(alpha=0.3)
    ax.legend(loc="upper left")
    ax.set_title(title or "learning curve")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _plot_counts(history: list[dict], path: Path, title: str, plt) -> Path:
    """Several player counts: the win rate as a multiple of parity (win rate times the
    count; 1 = a seat's fair share), one thin line per count and, in black with its band
    (the mean of the counts' 95% Wilson bands), the mean over the counts."""
    steps = np.array([h["steps"] for h in history], float)
    fig, ax = plt.subplots(figsize=(8, 4.5))
    if "by_table" in history[-1]:  # tables: one line per table, its fair share as recorded
        lines = [(lab, lab, lambda r: r["parity"]) for lab in history[-1]["by_table"]]
        key = "by_table"
    else:
        counts = sorted({int(n) for h in history for n in h.get("by_count", {})})
        lines = [(n, f"{n} players", lambda r, n=n: n) for n in counts]
        key = "by_count"
    for n, label, parity in lines:
        pts = [(s, h.get(key, {}).get(n) or h.get(key, {}).get(str(n))) for s, h in zip(steps, history)]
        pts = [(s, r) for s, r in pts if r]
        ax.plot([s for s, _ in pts], [r["win_rate"] * parity(r) for _, r in pts], marker="o", ms=2.5, lw=0.9,
                alpha=0.75, label=label)
    lo = [h["wilson95"][0] for h in history]
    hi = [h["wilson95"][1] for h in history]
    ax.fill_between(steps, lo, hi, color="black", alpha=0.10)
    ax.plot(steps, [h["win_rate_vs_zoo"] for h in history], color="black", lw=2.4, marker="o", label="mean")
    ax.axhline(1.0, color="grey", lw=1, ls="--")
    g = next(iter(history[-1][key].values()))["games"]
    ax.set_xlabel("learner steps")
    ax.set_ylabel(f"wins / parity ({g} games per point and {'table' if key == 'by_table' else 'count'})")
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right", ncol=5, fontsize=7)
    ax.set_title(title or "learning curve")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


# ----------------------------------------------------------------------------- warm start
def warm_start(policy, cfg: TrainConfig, out: Path) -> dict[str, Any]:
    """Behaviour-clone ``policy`` on ``cfg.pretrain.games`` recorded zoo games, split evenly
    over the run's player counts (recorded once per player counts, game count and seed,
    then reused from ``<out>/pretrain/``); with ``pretrain.teacher``, on that agent's
    decisions against the zoo, the critic left as it is."""
    from train.distill import policy_agreement, pretrain_policy

    p = cfg.pretrain
    t0 = time.perf_counter()
    data = recording(cfg.counts(), p.games, p.seed, out, cfg.progress, teacher=p.teacher, game=cfg.game,
                     tables=cfg.run_tables())
    t1 = time.perf_counter()
    before = policy_agreement(policy, data) if p.teacher else None
    stats = pretrain_policy(policy, data, winners_only=p.winners_only,
                            value=cfg.reward_mode == "win" and not p.teacher,
                            epochs=p.epochs, lr=p.learning_rate, seed=cfg.seed, progress=cfg.progress,
                            label=(f"pretrain: cloning {p.teacher}" + (" (the games it won)" if p.winners_only else "")
                                   if p.teacher else None))
    stats.update({"record_s": t1 - t0, "fit_s": time.perf_counter() - t1,
                  "recording": str(recording_path(cfg.counts(), p.games, p.seed, out, p.teacher, cfg.game,
                                                  cfg.run_tables()))})
    if p.teacher:
        stats.update({"teacher": p.teacher, "agreement_before": before, "agreement_after": policy_agreement(policy, data)})
    return stats


# ----------------------------------------------------------------------------- train
def load_init(spec: str, other_cards: bool = False, game: str = DEFAULT_GAME):
    """``(path, policy, metadata)`` of checkpoint ``spec`` (a path, or a shipped
    checkpoint's name) for ``init_from``; ``CheckpointError`` if it is unusable.
    ``other_cards`` (``init_from_other_cards``): a checkpoint trained on another card
    database is accepted (the start of a fine-tune for new cards); the layout, action
    count and network checks still apply."""
    from agents.policy import CHECKPOINT_DIR

    from agents.checkpoint import CardDigest, CheckpointError, load_policy, read_metadata, require_game

    path = Path(spec)
    if not path.is_file() and (CHECKPOINT_DIR / f"{spec}.zip").is_file():
        path = CHECKPOINT_DIR / f"{spec}.zip"
    if not path.is_file() and path.exists():
        from ripmarket_env.core.jsonfile import why_not_a_file

        raise CheckpointError(f"init_from: {spec!r} {why_not_a_file(path)}; allowed: a checkpoint file (.zip)")
    if not path.is_file():
        raise CheckpointError(f"init_from: {spec!r} is neither a checkpoint file nor a shipped checkpoint "
                              f"({', '.join(p.stem for p in sorted(CHECKPOINT_DIR.glob('*.zip')))})")
    require_game(path, game, trains="init_from")
    cards = CardDigest(read_metadata(path, check=False)["card_digest"]) if other_cards else None
    src, meta = load_policy(path, cards=cards)
    return path, src, meta


def init_policy(policy, spec: str, loaded=None, target: PolicyConfig | None = None) -> Path:
    """Load the policy weights of checkpoint ``spec`` (a path, or a shipped checkpoint's
    name) into ``policy``; ``CheckpointError`` if it is unusable or another network.
    ``loaded``: what ``load_init(spec)`` returned, if it was called already. ``target``:
    ``policy``'s own network (``PolicyConfig``); an ``mlp`` checkpoint then also loads
    into the ``sparse`` network that computes the same function (``mlp_as_sparse``), and
    a checkpoint of the same network with narrower hidden layers into the wider one,
    computing the same function (``widened``)."""
    from agents.checkpoint import CheckpointError

    path, src, meta = loaded if loaded is not None else load_init(spec)
    state = src.state_dict()
    if target is not None:  # an MLP goes on as the sparse network of the same function, a network as a wider one
        from agents.checkpoint import _policy_config
        from agents.networks import mlp_as_sparse, widened

        have = _policy_config(meta, path)
        state = mlp_as_sparse(have, target, state) or widened(have, target, state, policy.state_dict()) or state
    try:
        policy.load_state_dict(state)
    except RuntimeError as e:
        raise CheckpointError(f"init_from: {path} holds another network (its policy section: "
                              f"{meta['config'].get('policy')}): {str(e).splitlines()[0]}") from None
    return path


def seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


class SparseRolloutBuffer(MaskableRolloutBuffer):
    """SB3's ``MaskableRolloutBuffer`` that keeps the non-zeros of every observation it
    stores instead of the observation, for the ``sparse`` network
    (``agents.networks.SparseExtractor``).

    The learner's first layer reads only an observation's non-zeros, but finding them
    means scanning all 1,127 entries. Without this buffer every observation is scanned
    once when the learner acts on it and once more in each epoch of the update, and the
    dense observations are copied into the buffer, flattened and gathered per minibatch.
    Here ``add`` keeps the non-zeros the forward pass just found for the same array (or
    scans it if it has none) and stores no dense observation; each minibatch's rows are
    copied out of them (``select_rows``) and handed to the extractor with a placeholder
    for the observations (no values: a layer that would read them raises). The numbers
    are the same as scanning."""

    def reset(self) -> None:
        super().reset()
        self.observations = np.zeros((self.buffer_size, self.n_envs, 0), np.float32)
        self.step_csr: list = []
        self.all_csr = None

    def add(self, obs, *args, **kwargs) -> None:
        from agents.networks import _SparseMatmul
        from agents.sparse import csr

        x, version, found = _SparseMatmul._last
        obs = np.asarray(obs)
        if obs.shape != (self.n_envs, *self.obs_shape):
            raise ValueError(f"observations of shape {obs.shape}; the buffer holds {(self.n_envs, *self.obs_shape)}")
        same = (x is not None and x._version == version and tuple(x.shape) == obs.shape
                and obs.dtype == np.float32 and obs.flags.c_contiguous and x.is_contiguous()
                and x.data_ptr() == obs.ctypes.data)
        self.step_csr.append(found if same else csr(np.ascontiguousarray(obs, np.float32)))
        super().add(self.observations[self.pos], *args, **kwargs)

    def _stacked(self):
        """The non-zeros of every stored observation, rows in (step, env) order."""
        if self.all_csr is None:
            lens = [len(c[0]) for c in self.step_csr]
            base = np.cumsum([0] + lens[:-1])
            self.all_csr = (np.concatenate([c[0] for c in self.step_csr]),
                            np.concatenate([c[1] for c in self.step_csr]),
                            np.concatenate([c[2] + b for c, b in zip(self.step_csr, base)]))
        return self.all_csr

    def _get_samples(self, batch_inds, env=None):
        from agents.networks import _SparseMatmul
        from agents.sparse import select_rows

        data = super()._get_samples(batch_inds, env)
        # SB3 flattens (step, env) to env * n_steps + step; the stacked rows are step * n_envs + env
        rows = (batch_inds % self.buffer_size) * self.n_envs + batch_inds // self.buffer_size
        n = len(rows)
        found = select_rows(self._stacked(), rows, np.zeros(n, np.int64), np.full(n, -1, np.int64))
        x = torch.zeros(1).expand(n, *self.obs_shape)  # the shape, no values
        _SparseMatmul._last = (x, x._version, found)
        return data._replace(observations=x)


def build_model(cfg: TrainConfig, env):
    """A fresh ``MaskablePPO`` for ``cfg`` on ``env`` (the one place its settings are made)."""
    from sb3_contrib import MaskablePPO

    lr = cfg.learning_rate
    lr_sched = (lambda f: f * lr) if cfg.anneal_lr else lr
    return MaskablePPO(
        "MlpPolicy", env, learning_rate=lr_sched, n_steps=cfg.n_steps, batch_size=cfg.batch_size,
        n_epochs=cfg.n_epochs, gamma=cfg.gamma, gae_lambda=cfg.gae_lambda, clip_range=cfg.clip_range,
        ent_coef=cfg.ent_coef, vf_coef=cfg.vf_coef, max_grad_norm=cfg.max_grad_norm,
        policy_kwargs=policy_kwargs(cfg.policy), seed=cfg.seed, device="cpu", verbose=0,
        rollout_buffer_class=SparseRolloutBuffer if cfg.policy.arch == "sparse" else None,
    )


def load_model(path: str | Path, env=None, config=None):
    """``(model, metadata)``: the ``MaskablePPO`` of a checkpoint, ready to go on training
    (``model.learn(..., reset_num_timesteps=False)``), without unpickling anything: the
    safe replacement of ``MaskablePPO.load(path)``.

    The model is rebuilt from ``config`` (a ``TrainConfig``; default: the checkpoint's own
    training config) on ``env`` (default: the league env that config trains on), then
    given the checkpoint's policy weights, its optimizer state (absent from exported
    checkpoints, see ``export_policy``: the optimizer then starts fresh) and its step
    count. ``config.policy`` must describe the checkpoint's network. SB3's ``data``
    member (cloudpickled objects) is never read.
    """
    import dataclasses

    from agents.checkpoint import (
        META_NAME, OPTIMIZER_NAME, WEIGHTS_NAME, CheckpointError, _open, _policy_config, _read_member, _torch_load,
        read_metadata,
    )
    from train.config import ConfigError, config_from_dict

    path = Path(path)
    meta = read_metadata(path, check=True)
    pcfg = _policy_config(meta, path)
    if config is None:
        try:
            config = config_from_dict(meta["config"])
        except ConfigError as e:
            raise CheckpointError(f"{path}: {META_NAME} config: {e}") from None
    elif dataclasses.asdict(config.policy) != dataclasses.asdict(pcfg):
        raise CheckpointError(f"{path}: the checkpoint's network (policy {dataclasses.asdict(pcfg)}) is not the one "
                              f"the config describes (policy {dataclasses.asdict(config.policy)}); resume with the "
                              "checkpoint's policy section")
    with _open(path) as z:
        raw = _read_member(z, WEIGHTS_NAME, path)
        raw_opt = _read_member(z, OPTIMIZER_NAME, path, required=False)
    state = _torch_load(raw, "policy weights", path)
    opt_state = _torch_load(raw_opt, "optimizer state", path) if raw_opt is not None else None
    if env is None:
        env = make_league_vec_env(config, League(config, seed=config.seed), config.seed)
    model = build_model(config, env)
    try:
        model.policy.load_state_dict(state)
        if opt_state is not None:
            model.policy.optimizer.load_state_dict(opt_state)
    except Exception as e:
        msg = str(e).splitlines()[0][:300] if str(e) else type(e).__name__
        raise CheckpointError(f"{path}: the checkpoint does not fit the network of its config ({msg})") from None
    model.num_timesteps = int(meta.get("training_steps", 0))
    return model, meta


def check_resume(cfg: TrainConfig, resume: str | Path) -> int:
    """The steps already trained by checkpoint ``resume``, checked before any run folder
    exists: the checkpoint (metadata, weights, optimizer state) loads safely, fits
    ``cfg``'s network and has steps left to go."""
    from agents.checkpoint import (OPTIMIZER_NAME, CheckpointError, _open, _policy_config, _read_member, _torch_load,
                                   load_policy, require_game)

    path = Path(resume)
    require_game(path, cfg.game, trains="--resume")
    _, meta = load_policy(path)  # metadata, network and weights, read safely
    with _open(path) as z:
        raw_opt = _read_member(z, OPTIMIZER_NAME, path, required=False)
    if raw_opt is not None:
        _torch_load(raw_opt, "optimizer state", path)
    pol = _policy_config(meta, path)
    if dataclasses.asdict(pol) != dataclasses.asdict(cfg.policy):
        raise CheckpointError(f"{path}: the checkpoint's network (policy {dataclasses.asdict(pol)}) is not the one "
                              f"the config describes (policy {dataclasses.asdict(cfg.policy)})")
    done = int(meta.get("training_steps", 0))
    if done >= cfg.total_timesteps:
        raise CheckpointError(f"{path}: already trained {done:,} steps, not less than total_timesteps "
                              f"{cfg.total_timesteps:,}; raise total_timesteps (--total-timesteps) to go on")
    return done


def resumed_zoo(cfg: TrainConfig, resume: str | Path) -> TrainConfig:
    """``cfg`` for going on from checkpoint ``resume``: when the league refreshes its
    distilled zoo and the checkpoint's folder holds the ``zoo-bc.pt`` those refreshes
    saved, the league's imitations start from it (``league.zoo_init``), as the run left
    them, instead of from the config's start (``train`` checks the file before any run
    folder exists). Otherwise ``cfg`` unchanged."""
    saved = Path(resume).parent / ZOO_FILE
    if not (cfg.league.refresh_every and saved.is_file()):  # refreshes need distilled agents (config)
        return cfg
    return dataclasses.replace(cfg, league=dataclasses.replace(cfg.league, zoo_init=str(saved)))


def _warm_start_only(cfg: TrainConfig, model, ckpt_dir: Path, run_name: str, pre_stats) -> dict[str, Any]:
    """A run of ``total_timesteps: 0``: the warm-started network is the result, saved as
    ``final.zip`` and ``best.zip``, with its final evaluation when one is asked for."""
    from agents.policy import PolicyAgent

    paths = [save_checkpoint(model, ckpt_dir / f"{tag}.zip",
                             make_metadata(cfg.to_dict(), cfg.counts(), 0,
                                           {"run_name": run_name, "tag": tag, **cfg.tables_metadata()}, game=cfg.game))
             for tag in ("final", "best")]
    summary: dict[str, Any] = {"run_name": run_name, "steps": 0, "checkpoint": str(paths[0]), "pretrain": pre_stats}
    if cfg.final_eval_games:
        agent = PolicyAgent(model.policy, deterministic=True, name=run_name)
        summary["final_eval"] = evaluate_counts(agent, cfg, cfg.final_eval_games, seed=cfg.seed + 10_000)
    (ckpt_dir / "summary.json").write_text(json.dumps(summary, indent=1))
    return summary


def train(cfg: TrainConfig, out: str | Path = ".", console=None, resume: str | Path | None = None) -> dict[str, Any]:
    """Run one training (see the module docstring); returns a summary dict.

    ``resume``: a checkpoint to go on from (``load_model``: its weights,
    optimizer state and step count, read without unpickling) up to ``total_timesteps``;
    ``init_from`` and ``pretrain`` are then skipped, the league's frozen pool starts
    over from the resumed policy, and its distilled zoo from the one the run's refreshes
    saved next to the checkpoint (``resumed_zoo``)."""
    from agents.policy import PolicyAgent


    out = Path(out)
    if resume is not None:
        check_resume(cfg, resume)
        before, cfg = cfg.league.zoo_init, resumed_zoo(cfg, resume)
        if console is not None and cfg.league.zoo_init != before:
            console.print(f"league: the distilled zoo goes on from {cfg.league.zoo_init} (the run's last refresh)")
    init = (load_init(cfg.init_from, cfg.init_from_other_cards, cfg.game)
            if cfg.init_from and resume is None else None)  # before any folder is made
    if cfg.league.zoo_init:  # a missing, damaged or other-cards zoo stops here, before any folder
        from agents.policy import zoo_file
        from train.distill import load as load_zoo

        load_zoo(zoo_file(cfg.league.zoo_init), game=cfg.game)
    seed_everything(cfg.seed)
    torch.set_num_threads(cfg.torch_threads)
    run_name = cfg.run_name()
    log_dir = out / "runs" / run_name
    ckpt_dir = out / "checkpoints" / run_name
    ckpt_dir.mkdir(parents=True, exist_ok=True)
    (ckpt_dir / "config.json").write_text(json.dumps(cfg.to_dict(), indent=1))

    league = League(cfg, seed=cfg.seed)
    env = make_league_vec_env(cfg, league, cfg.seed)
    pre_stats = None
    if resume is not None:  # weights, optimizer and step count of the checkpoint (never unpickled)
        model, _ = load_model(resume, env=env, config=cfg)
        league.set_learner(model.policy)
    else:
        model = build_model(cfg, env)
        league.set_learner(model.policy)
        if init is not None:
            init_policy(model.policy, cfg.init_from, init, target=cfg.policy)
        if cfg.pretrain.games:
            pre_stats = warm_start(model.policy, cfg, out)
    if cfg.total_timesteps == 0:  # the warm start is the whole run (config: 0 only with pretrain.games)
        env.close()
        return _warm_start_only(cfg, model, ckpt_dir, run_name, pre_stats)
    log_dir.mkdir(parents=True, exist_ok=True)
    model.set_logger(Logger(str(log_dir), [_Renamer(TensorBoardOutputFormat(str(log_dir)))]))
    refresh = ZooRefresh(cfg, league, out) if cfg.league.refresh_every else None
    cb = LeagueCallback(cfg, league, ckpt_dir, run_name, console, refresh)
    t_setup = time.perf_counter()
    env.reset()  # first deal: compiles the env's uncached kernels once, outside the timings
    b = env.batch
    b._encode(np.zeros(1, np.int64), b.seat[:1], np.empty((1, b.obs_size), np.float32))  # terminal-obs kernel
    setup_s = time.perf_counter() - t_setup
    t0 = time.perf_counter()
    done = model.num_timesteps  # > 0 when resuming; SB3 then counts on from it
    model.learn(total_timesteps=cfg.total_timesteps - done, callback=cb, log_interval=1,
                reset_num_timesteps=done == 0)
    wall = time.perf_counter() - t0
    final = cb.save("final")
    if cb.best < 0:
        cb.save("best")
    summary: dict[str, Any] = {
        "run_name": run_name, "steps": int(model.num_timesteps), "wall_s": wall,
        "steps_per_s": model.num_timesteps / wall,
        # the training loop proper (rollouts and updates; no evaluations, checkpoints or refreshes)
        "training_steps_per_s": (model.num_timesteps - cb.start_steps) / max(cb.t_rollout + cb.t_train, 1e-9),
        "time_env_s": env.batch.env_time, "time_policy_s": cb.t_rollout - env.batch.env_time,
        "time_update_s": cb.t_train, "time_eval_checkpoint_s": cb.t_callback - cb.t_refresh,
        "training_cpu_s": cb.cpu_train,
        "time_zoo_refresh_s": cb.t_refresh, "time_zoo_refresh_start_s": cb.t_refresh_start,
        "zoo_refreshes": cb.refreshes,
        "time_other_s": max(0.0, wall - cb.t_rollout - cb.t_train - cb.t_callback), "setup_s": setup_s,
        "evals": cb.history, "checkpoint": str(final), "log_dir": str(log_dir),
    }
    if pre_stats is not None:
        summary["pretrain"] = pre_stats
    curve = plot_learning_curve(cb.history, ckpt_dir / "learning_curve.png", run_name)
    if curve is not None:
        summary["learning_curve"] = str(curve)
    if cfg.final_eval_games:
        agent = PolicyAgent(model.policy, deterministic=True, name=run_name)
        res = evaluate_counts(agent, cfg, cfg.final_eval_games, seed=cfg.seed + 10_000)
        summary["final_eval"] = res
    (ckpt_dir / "summary.json").write_text(json.dumps(summary, indent=1))
    env.close()
    return summary
