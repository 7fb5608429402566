"""Training configuration: one dataclass, one docstring per field, loaded from YAML.

``load_config(path)`` reads a YAML mapping whose keys are the fields below (the
``league``, ``policy`` and ``pretrain`` sections are nested mappings). Unknown keys and bad values
raise ``ConfigError`` naming the key and what it accepts. Fields derived at run time
(``run_name``, ``batch_size`` checks) are computed by ``TrainConfig.derived()``.
"""

from __future__ import annotations

import dataclasses
import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from agents.base import DEFAULT_GAME  # the game of configs (and checkpoint metadata) written before ``game:``
from agents.policy_config import MAX_LAYER, MAX_LAYERS, POLICY_ARCHS, PolicyConfig, check_policy, short_repr  # noqa: F401
from ripmarket_env.core.jsonfile import why_not_a_file

REWARD_MODES = ("win", "placement")
LEAGUE_KINDS = ("self", "zoo", "random")
BACKENDS = ("sb3", "rllib")


class ConfigError(ValueError):
    """A training config that cannot be used (names the key and the allowed values)."""


#: Upper bounds of the sizes a config may ask for: far above every shipped config, low
#: enough that a typo (``n_envs: 1000000000000``) fails here with a message instead of
#: exhausting memory minutes into a run.
MAX_ENVS = 65_536
MAX_STEPS = 4096  # n_steps
MAX_ROLLOUT = 262_144  # n_envs * n_steps: the rollout buffer holds that many observations (~1.2 GB)
MAX_TIMESTEPS = 10**12
MAX_GAMES = 10_000_000  # any recorded or evaluated game count
MAX_EPOCHS = 1000
MAX_THREADS = 256
MAX_SEED = 2**63 - 1
MAX_CONFIG_BYTES = 1 << 20  # a config file larger than 1 MiB is not a config
MAX_CONFIG_VALUES = 100_000  # values of a config once its YAML aliases are expanded


class _UniqueKeyLoader(yaml.SafeLoader):
    """PyYAML's safe loader, refusing a mapping that repeats a key (YAML forbids it, PyYAML
    would silently keep the last value)."""

    def construct_mapping(self, node, deep=False):
        seen = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            try:
                dup = key in seen
            except TypeError:
                raise ConfigError(f"line {key_node.start_mark.line + 1}: a key must be a plain value, "
                                  f"got {type(key).__name__}") from None
            if dup:
                raise ConfigError(f"line {key_node.start_mark.line + 1}: duplicate key {key!r} "
                                  "(each key may appear once per mapping)")
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


    def construct_document(self, node):
        """Refuse a document whose aliases expand it past ``MAX_CONFIG_VALUES`` values (an
        anchor bomb: a few lines that stand for billions of values) before building it."""
        size: dict[int, int] = {}
        path: set[int] = set()  # the values being expanded: an alias to one of them is a value inside itself
        stack = [(node, False)]
        while stack:
            n, children_done = stack.pop()
            if id(n) in size:
                continue
            kids = [k for pair in n.value for k in pair] if isinstance(n, yaml.MappingNode) else (
                n.value if isinstance(n, yaml.SequenceNode) else [])
            if children_done:
                path.discard(id(n))
                size[id(n)] = min(1 + sum(size[id(k)] for k in kids), MAX_CONFIG_VALUES + 1)
                if size[id(n)] > MAX_CONFIG_VALUES:
                    raise ConfigError(f"line {n.start_mark.line + 1}: its anchors and aliases (&name, *name) expand "
                                      f"to more than {MAX_CONFIG_VALUES:,} values; a config is far smaller")
            else:
                path.add(id(n))
                if any(id(k) in path for k in kids):
                    raise ConfigError(f"line {n.start_mark.line + 1}: an alias (*name) inside the value its anchor "
                                      "(&name) names: a value that contains itself never ends")
                stack.append((n, True))
                stack.extend((k, False) for k in kids if id(k) not in size)
        return super().construct_document(node)


_UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _UniqueKeyLoader.construct_mapping)


@dataclass
class LeagueConfig:
    mix: dict[str, float] = field(default_factory=lambda: {"self": 0.6, "random": 0.3, "zoo": 0.1})
    """Chance that an opponent seat of a new episode is a frozen past learner ("self"), a
    zoo heuristic ("zoo") or the random agent ("random"); normalised. Before the first
    snapshot, the "self" share goes to the current policy's initial snapshot."""
    zoo: list[str] = field(default_factory=list)
    """Agent names of the run's ``game`` drawn (uniformly) for "zoo" seats, e.g. the
    heuristics or their distilled imitations (R.I.P. Market's ``greedy-bc``, ..., see
    ``ripmarket distill``), which act for a whole batch in one forward pass. Default: the
    game's heuristics (``agents.game_agents(game).zoo()``; ``random`` for a game without any)."""
    eval_zoo: list[str] = field(default_factory=list)
    """Agent names of the run's ``game`` the evaluations draw opponents from
    (charts/win_rate_vs_zoo and the final evaluation). Default: the game's heuristics."""
    snapshot_every: int = 100_000
    """Learner steps between snapshots of the policy into the frozen pool (K)."""
    pool_size: int = 8
    """Most recent snapshots kept in the pool (older ones are dropped)."""
    latest_share: float = 0.5
    """Of the "self" seats, the share given to the most recent snapshot (the rest uniform
    over the pool: fictitious self-play)."""
    deterministic_opponents: bool = False
    """Frozen policies play their most likely action (True) or sample (False)."""
    whole_tables: float = 0.0
    """Chance that a new episode's opponents are one agent at every seat: one draw by
    ``mix`` (a heuristic, a snapshot or random) copied to all of them, as ``ripmarket
    evaluate`` and ``python -m eval.match`` seat a table of one opponent; the other
    episodes draw every seat on its own. 0 (default): every seat on its own. The learner's
    teammates (``teammate``) are seated after it."""
    teammate: str = ""
    """A team game only (the game's ``extras["sides"]`` hook gives the seats' sides under the
    run's rules, e.g. Black Market's ``mode: teams``, BM-1.3): who plays the learner's
    teammates. "" (default): league seats drawn like the opponents; "self": the learner's
    own current policy, sampling; or an agent name of the game."""
    zoo_init: str = ""
    """A distilled-zoo file (a path, or the name of one shipped in ``agents/checkpoints/``
    such as ``zoo-bc-ppo-stage2``) whose network the league's distilled agents (the ``-bc`` agents
    of ``zoo``, which it then needs) start from instead of the shipped
    ``agents/checkpoints/zoo-bc.pt``: e.g. the ``zoo-bc.pt`` an earlier run's refreshes
    saved in its checkpoint folder, so that a later stage starts with the imitations the
    earlier one kept faithful. It must name the same styles in the same order and match
    the cards and observation layout; the shipped file is not touched. Empty: the shipped one."""
    refresh_every: int = 0
    """Learner steps between refreshes of the distilled zoo (0 = never): the real
    heuristics play ``refresh_games`` games against the current learner, their decisions
    are added to the recording, and the league's distilled network (the ``-bc`` agents of
    ``zoo``, which it then needs) goes on training on it for ``refresh_epochs`` epochs.
    The imitations stay faithful where the learner leads the game (the DAgger idea), so
    the learner cannot win by exploiting their mistakes."""
    refresh_games: int = 800
    """Games recorded per refresh (the learner in one seat, heuristics in the others).
    With ``player_counts`` this and the two game counts below are split evenly over the
    counts (the first counts get the remainder)."""
    refresh_start_games: int = 0
    """Games recorded against the starting policy (``init_from`` or the warm start) for a
    first refresh before training begins; 0 = none."""
    refresh_epochs: int = 2
    """Passes over the whole recording per refresh."""
    refresh_base_games: int = 1300
    """Zoo-only games (seed ``refresh_seed``) that start the recording, as ``ripmarket
    distill`` records them; cached under ``<out>/pretrain/``."""
    refresh_seed: int = 7
    """Seed of the zoo-only games and of the refresh games."""


@dataclass
class PretrainConfig:
    games: int = 0
    """Zoo games to record for behaviour-cloning the learner before PPO starts (0 = no
    pretraining). The games are played by the heuristics (``train.distill.collect``) at
    the run's player count (with ``player_counts``: split evenly over them); the
    recording is cached under ``<out>/pretrain/``."""
    seed: int = 7
    """Seed of the recorded games."""
    winners_only: bool = True
    """Clone only the decisions of players who went on to win their game (the value head
    always learns from every decision's final reward)."""
    epochs: int = 4
    """Passes over the recorded decisions."""
    learning_rate: float = 1e-3
    """Adam step size of the pretraining."""
    teacher: str = ""
    """A registered agent (e.g. ``ppo-lookahead``) whose decisions are cloned instead of
    the zoo's: it takes one seat of every recorded game (rotating) against the zoo
    (``train.distill.collect(record="guest")``), and the learner's actor learns its
    choices, every decision of every game (``winners_only`` applies as for the zoo). The
    critic is left as it is (with ``policy.sparse_shared: false`` it shares no weight
    with the actor). With a teacher, ``init_from`` may be set too: the network starts from
    that checkpoint and learns the teacher's choices (expert iteration: the choices of a
    search over the network's own proposals, distilled back into the network); with
    ``total_timesteps: 0`` that is the whole run."""


@dataclass
class RLlibConfig:
    """``backend: rllib`` only (``train.rllib_backend``; docs/TRAINING.md, RLlib backend)."""

    num_env_runners: int = 0
    """Ray actors sampling games (0: the driver samples, one process; each runner is a
    Ray actor with a CPU of its own, on any node of the cluster, stepping ``n_envs`` games
    in one engine batch against its own copy of the league)."""
    num_envs_per_env_runner: int = 1
    """1: each env runner steps its ``n_envs`` games as one vector env (kept so that configs
    and checkpoints written before the batched env read as before)."""
    num_learners: int = 0
    """Ray actors running the PPO update (0: in the driver)."""


@dataclass
class TrainConfig:
    game: str = DEFAULT_GAME
    """The game to train (a registered id: ``ripmarket_env.games.ids()``). Its ``GameSpec``
    builds the envs, evaluations and checkpoints; its agents' profile
    (``agents.game_agents(game)``) gives the league's and the evaluations' default zoo."""
    rules: dict[str, Any] = field(default_factory=dict)
    """Rules fields of ``game`` other than ``num_players`` and ``reward_mode`` (the keys
    of its rules config, e.g. Black Market's ``mode: teams | ffa``), handed to the game's
    ``spec.make_rules``; empty: the rulebook's."""
    backend: str = "sb3"
    """Trainer: "sb3" (MaskablePPO on the batched vector env, ``train.selfplay``) or
    "rllib" (RLlib's PPO, new API stack, on the same batched league env;
    ``train.rllib_backend``). Both read the same PPO keys,
    ``policy.net_arch`` and ``league``; rllib needs ``policy.arch: mlp`` and takes neither
    ``init_from``, ``pretrain``, ``league.refresh_every`` nor ``league.zoo_init``."""
    exp_name: str = "ppo"
    """Experiment name (the ``exp`` part of the run name ``env__exp__seed__time``)."""
    env_id: str = ""
    """Environment name in the run name (default: the game's id)."""
    seed: int = 1
    """Seeds torch, numpy, Python, the env's deals and the league draws."""
    num_players: int = 6
    """Players per game (the game's range: R.I.P. Market 2..10; default 6, or the game's
    default player count when 6 is outside its range)."""
    player_counts: list[int] = field(default_factory=list)
    """Shorthand of ``tables`` for tables that differ only in their count: train one network
    at several player counts at once (e.g. ``[2, 3, ..., 10]``): the
    ``n_envs`` games are split evenly over the counts (the observation names the count,
    so the network learns each), and the in-training evaluations play every count. Empty:
    ``num_players`` only. Sb3 backend. The warm start (``pretrain``) and the zoo refreshes
    (``league.refresh_*``) record their games at every count, split evenly."""
    tables: list[dict] = field(default_factory=list)
    """Train one network at several tables at once, each ``{num_players: N, rules: {...}}``
    (its ``rules`` merged over the run's ``rules``; e.g. Black Market's 2 players, 4 in free-
    for-all and 6 in teams): as ``player_counts``, the ``n_envs`` games are split evenly over
    the tables (to within one game), or in proportion to each table's optional
    ``weight`` (a positive number, default 1: ``weight: 2`` gives a table twice the games of
    a table without one; the evaluations play ``eval_games`` at every table whatever its
    weight), the evaluations and the recordings
    (``pretrain``, ``league.refresh_*``) play every table, and the checkpoints' metadata
    lists them (``tables``). Excludes ``num_players`` and ``player_counts``; sb3 backend.
    Empty: ``player_counts`` or ``num_players``."""
    reward_mode: str = "win"
    """Training reward, the game's rules field ``reward_mode`` (R-11, BM-10.2, RM-7.4): "win"
    or "placement" (evaluation always counts wins)."""
    total_timesteps: int = 1_000_000
    """Learner decisions to train for (0 with ``pretrain.games``: the warm start is the
    whole run, no PPO after it)."""
    n_envs: int = 256
    """Games in the batched vector env."""
    n_steps: int = 64
    """Rollout length per env (a rollout is n_envs * n_steps learner steps)."""
    batch_size: int = 4096
    """Minibatch size of the PPO update (must divide n_envs * n_steps)."""
    n_epochs: int = 2
    """PPO epochs per rollout."""
    learning_rate: float = 3e-4
    """Adam learning rate."""
    anneal_lr: bool = True
    """Decay the learning rate linearly to 0 over total_timesteps."""
    gamma: float = 0.995
    """Discount factor."""
    gae_lambda: float = 0.95
    """GAE lambda."""
    clip_range: float = 0.2
    """PPO clip range."""
    ent_coef: float = 0.01
    """Entropy bonus coefficient."""
    vf_coef: float = 0.5
    """Value loss coefficient."""
    max_grad_norm: float = 0.5
    """Gradient clipping norm."""
    torch_threads: int = 1
    """torch intra-op threads (1 is fastest on a busy 2-core machine)."""
    policy: PolicyConfig = field(default_factory=PolicyConfig)
    """Policy network (see PolicyConfig)."""
    league: LeagueConfig = field(default_factory=LeagueConfig)
    """Opponent league (see LeagueConfig)."""
    pretrain: PretrainConfig = field(default_factory=PretrainConfig)
    """Behaviour-cloning warm start from recorded zoo games (see PretrainConfig)."""
    init_from: str = ""
    """Start from this checkpoint's policy weights (a ``.zip`` path, or the name of a
    shipped checkpoint such as ``ppo-6p``) instead of a fresh network; its policy section
    must match ``policy``, or be an ``mlp`` that ``policy`` computes as the ``sparse``
    network, or the same network with narrower hidden layers (then grown into ``policy``'s
    wider layers computing the same function: ``agents.networks.widened``). Excludes
    ``pretrain.games``."""
    init_from_other_cards: bool = False
    """Accept an ``init_from`` checkpoint trained on another card database (e.g. the first
    edition's bot, to fine-tune it for the second edition's cards). Only the card check is
    skipped: the observation layout, the action count and the network must still match,
    and the run's own checkpoints carry the cards it trains on."""
    eval_every: int = 200_000
    """Learner steps between in-process evaluations (charts/win_rate_vs_zoo); 0 = never."""
    eval_games: int = 32
    """Games per in-process evaluation (learner in one seat, zoo agents in the others)."""
    checkpoint_every: int = 200_000
    """Learner steps between checkpoints (the latest and the best by evaluation are kept)."""
    final_eval_games: int = 200
    """Games of the final evaluation against the zoo; 0 = skip."""
    max_minutes: float = 0.0
    """Wall-clock bound of the training loop in minutes (0 = none): the run stops at
    ``total_timesteps`` or at the first rollout after this time, whichever comes first,
    and saves its checkpoints as at the end."""
    progress: bool = True
    """Show a rich progress bar."""
    rllib: RLlibConfig = field(default_factory=RLlibConfig)
    """``backend: rllib``: where RLlib runs the sampling and updates (see RLlibConfig)."""

    # ------------------------------------------------------------------ derived
    def counts(self) -> list[int]:
        """The player counts this run trains at (those of ``tables``, in order, each once;
        else ``player_counts``, else ``num_players``)."""
        if self.tables:
            return sorted({int(t["num_players"]) for t in self.tables})
        return list(self.player_counts) or [self.num_players]

    def run_tables(self) -> list["Table"]:
        """The tables this run trains at: ``tables``, else one per count of ``counts()``
        with the run's ``rules``."""
        if self.tables:
            return [Table(int(t["num_players"]), {**self.rules, **(t.get("rules") or {})}, dict(t.get("rules") or {}),
                          float(t.get("weight", 1.0))) for t in self.tables]
        return [Table(n, dict(self.rules)) for n in self.counts()]

    def tables_metadata(self) -> dict[str, Any]:
        """``{"tables": [{"num_players", "rules"}, ...]}`` (each table's merged rules) for a
        checkpoint's metadata when the run names ``tables``; ``{}`` otherwise (the metadata
        of a run by count stays as it was)."""
        if not self.tables:
            return {}
        return {"tables": [{"num_players": t.num_players, "rules": dict(t.rules), "label": t.label}
                           for t in self.run_tables()]}

    def run_name(self, now: float | None = None) -> str:
        """``env__exp__seed__time`` (CleanRL's convention)."""
        return f"{self.env_id or self.game}__{self.exp_name}__{self.seed}__{int(now if now is not None else time.time())}"

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        if not d["tables"]:  # a run without tables writes the config it always wrote
            del d["tables"]
        else:  # the tables set the counts (config_from_dict reads the dict back)
            del d["num_players"], d["player_counts"]
        return d


@dataclass(frozen=True, eq=False)
class Table:
    """One table of a run: its player count and its rules fields (the run's ``rules`` with
    the table's own over them; without ``num_players`` and ``reward_mode``)."""

    num_players: int
    rules: dict
    own: dict = field(default_factory=dict)
    """The table's own rules, as its ``tables`` entry wrote them."""
    weight: float = 1.0
    """The table's share of the run's games, relative to the other tables' (``table_games``)."""

    @property
    def label(self) -> str:
        """``<N>p`` and the values of the table's own rules: ``4p``, ``4p-ffa``."""
        return f"{self.num_players}p" + "".join(f"-{v}" for _, v in sorted(self.own.items()))


def table_games(n_envs: int, tables: list[Table]) -> list[int]:
    """The games of the vector env at each table: ``n_envs`` split in proportion to the
    tables' weights, rounded (evenly to within one game when the weights are equal)."""
    total, edges, acc = sum(t.weight for t in tables), [0], 0.0
    for t in tables:
        acc += t.weight
        edges.append(round(acc / total * n_envs) if len(set(x.weight for x in tables)) > 1
                     else round(len(edges) * n_envs / len(tables)))
    return [b - a for a, b in zip(edges, edges[1:])]


def _allowed(cls) -> list[str]:
    return [f.name for f in dataclasses.fields(cls)]


def _check_keys(data: dict, cls, where: str) -> None:
    if not isinstance(data, dict):
        raise ConfigError(f"{where.rstrip('.') or 'config'}: expected a mapping of keys to values, got {type(data).__name__}")
    allowed = _allowed(cls)
    for k in data:
        if k not in allowed:
            raise ConfigError(f"unknown key '{where}{_key(k)}'; allowed keys: {', '.join(allowed)}")


_short = short_repr


def _key(k) -> str:
    """A mapping key as it is written (strings bare, anything else shortened)."""
    return k if isinstance(k, str) and len(k) <= 60 else _short(k, 60)


def _bad(key: str, value, allowed: str) -> ConfigError:
    return ConfigError(f"bad value for {key!r}: {_short(value)}; allowed: {allowed}")


def _int(d: dict, key: str, lo: int, hi: int | None = None, where: str = "") -> None:
    v = d.get(key)
    if v is None:
        return
    ok = isinstance(v, int) and not isinstance(v, bool) and v >= lo and (hi is None or v <= hi)
    if not ok:
        raise _bad(where + key, v, f"an integer >= {lo}" + (f" and <= {hi}" if hi is not None else ""))


def _float(d: dict, key: str, lo: float, hi: float, where: str = "", lo_open: bool = False) -> None:
    v = d.get(key)
    if v is None:
        return
    ok = (isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
          and (v > lo if lo_open else v >= lo) and v <= hi)
    if not ok:
        raise _bad(where + key, v, f"a number in {'(' if lo_open else '['}{lo}, {hi}]")


def _bool(d: dict, key: str, where: str = "") -> None:
    if key in d and not isinstance(d[key], bool):
        raise _bad(where + key, d[key], "true or false")


def _choice(d: dict, key: str, choices, where: str = "") -> None:
    if key in d and d[key] not in choices:
        raise _bad(where + key, d[key], " | ".join(choices))


def config_from_dict(data: dict | None) -> TrainConfig:
    """A validated ``TrainConfig`` from a plain mapping (YAML contents; ``{}`` or None for
    every default)."""
    if data is None:
        data = {}
    _check_keys(data, TrainConfig, "")
    data = dict(data)
    spec = _game(data)
    if "rules" in data and data["rules"] is None:
        data["rules"] = {}
    pol = data.pop("policy", None)
    lea = data.pop("league", None)
    pre = data.pop("pretrain", None)
    rll = data.pop("rllib", None)
    pol, lea, pre, rll = ({} if x is None else x for x in (pol, lea, pre, rll))
    _check_keys(rll, RLlibConfig, "rllib.")
    for k in ("num_env_runners", "num_learners"):
        _int(rll, k, 0, 1024, where="rllib.")
    if rll.get("num_envs_per_env_runner", 1) != 1:
        raise _bad("rllib.num_envs_per_env_runner", rll["num_envs_per_env_runner"],
                   "1 (each env runner steps n_envs games in one engine batch: raise n_envs)")
    _choice(data, "backend", BACKENDS)
    policy = check_policy(pol, ConfigError)
    _check_keys(lea, LeagueConfig, "league.")
    lea = dict(lea)  # the defaults filled in below stay out of the caller's mapping
    _check_keys(pre, PretrainConfig, "pretrain.")
    _int(pre, "games", 0, MAX_GAMES, where="pretrain.")
    _int(pre, "seed", 0, MAX_SEED, where="pretrain.")
    _int(pre, "epochs", 1, MAX_EPOCHS, where="pretrain.")
    _bool(pre, "winners_only", "pretrain.")
    _float(pre, "learning_rate", 0.0, 1.0, "pretrain.", lo_open=True)
    if "teacher" in pre:
        import agents

        known = agents.names(spec.id)
        if not (isinstance(pre["teacher"], str) and (pre["teacher"] == "" or pre["teacher"] in known)):
            raise _bad("pretrain.teacher", pre["teacher"], "\"\" (the zoo) or a registered agent name: " + " | ".join(known))
        if pre["teacher"] and not pre.get("games"):
            raise _bad("pretrain.games", pre.get("games", 0), "at least 1 with pretrain.teacher (the games it plays)")

    if "init_from" in data and not isinstance(data["init_from"], str):
        raise _bad("init_from", data["init_from"], "a checkpoint path (.zip) or a shipped checkpoint name")
    if data.get("init_from_other_cards") and not data.get("init_from"):
        raise ConfigError("init_from_other_cards is set without init_from; name the checkpoint to start from")
    if data.get("init_from") and pre.get("games") and not pre.get("teacher"):
        raise ConfigError("init_from and pretrain.games both start the policy; set only one "
                          "(or name a pretrain.teacher to clone into the init_from network)")
    for k in ("exp_name", "env_id"):
        v = data.get(k, "x")  # a run folder's name is made of it: printable, and short enough for any file system
        if not (isinstance(v, str) and 0 < len(v) <= 100 and v.isprintable() and "__" not in v and "/" not in v):
            raise _bad(k, v, "a non-empty string of at most 100 printable characters, without '__' or '/'")
    data.setdefault("env_id", spec.id)
    _int(data, "seed", 0, MAX_SEED)
    lo, hi = spec.min_players, spec.max_players
    if "tables" in data:
        _check_tables(spec, data)
    if "num_players" not in data and not lo <= TrainConfig.num_players <= hi:
        data["num_players"] = spec.default_players
    _int(data, "num_players", lo, hi)
    if "player_counts" in data:
        pc = data["player_counts"]
        if not (isinstance(pc, list) and all(isinstance(x, int) and not isinstance(x, bool) and lo <= x <= hi for x in pc)
                and len(set(pc)) == len(pc)):
            raise _bad("player_counts", pc, f"a list of distinct player counts {lo}..{hi} of {spec.id}, "
                       f"e.g. {list(range(lo, hi + 1))} (empty: num_players only)")
        if pc and data.get("n_envs", 256) < len(pc):
            raise _bad("n_envs", data.get("n_envs", 256), f"at least one game per player count ({len(pc)})")
    _choice(data, "reward_mode", REWARD_MODES)
    _int(data, "total_timesteps", 0, MAX_TIMESTEPS)
    if data.get("total_timesteps", 1) == 0 and not pre.get("games"):
        raise _bad("total_timesteps", 0, f"1 to {MAX_TIMESTEPS:,} (0 only with pretrain.games: a warm start alone)")
    _int(data, "n_envs", 1, MAX_ENVS)
    _int(data, "n_steps", 1, MAX_STEPS)
    _int(data, "batch_size", 1, MAX_ROLLOUT)
    _int(data, "n_epochs", 1, MAX_EPOCHS)
    _int(data, "torch_threads", 1, MAX_THREADS)
    for k in ("eval_every", "checkpoint_every"):
        _int(data, k, 0, MAX_TIMESTEPS)
    _int(data, "final_eval_games", 0, MAX_GAMES)
    _int(data, "eval_games", 1, MAX_GAMES)
    _float(data, "learning_rate", 0.0, 1.0, lo_open=True)
    _float(data, "gamma", 0.0, 1.0)
    _float(data, "gae_lambda", 0.0, 1.0)
    _float(data, "clip_range", 0.0, 1.0, lo_open=True)
    for k in ("ent_coef", "vf_coef"):
        _float(data, k, 0.0, 100.0)
    _float(data, "max_grad_norm", 0.0, 1e6, lo_open=True)
    for k in ("anneal_lr", "progress", "init_from_other_cards"):
        _bool(data, k)


    if "mix" in lea:
        mix = lea["mix"]
        if not isinstance(mix, dict):
            raise _bad("league.mix", mix, f"a mapping of {' | '.join(LEAGUE_KINDS)} to weights")
        for k, w in mix.items():
            if k not in LEAGUE_KINDS:
                raise ConfigError(f"unknown key 'league.mix.{_key(k)}'; allowed keys: {', '.join(LEAGUE_KINDS)}")
            if not (isinstance(w, (int, float)) and not isinstance(w, bool) and math.isfinite(w) and 0 <= w <= 1e6):
                raise _bad(f"league.mix.{k}", w, "a finite number in [0, 1e6]")
        if sum(mix.values()) <= 0:
            raise _bad("league.mix", mix, "weights with a positive sum")
    for key in ("zoo", "eval_zoo"):
        if key not in lea:
            lea[key] = _default_zoo(spec.id)
        else:
            import agents

            z = lea[key]
            known = agents.names(spec.id)
            if not (isinstance(z, list) and z and all(isinstance(x, str) for x in z)):
                raise _bad(f"league.{key}", z, "a non-empty list of agent names: " + " | ".join(known))
            for x in z:
                if x not in known and not (key == "zoo" and lea.get("zoo_init") and _imitates(x, spec.id)):
                    raise _bad(f"league.{key}", x, " | ".join(known) + _imitation_hint(spec.id, key))
    if "zoo_init" in lea and not (isinstance(lea["zoo_init"], str) and len(lea["zoo_init"]) <= 4096):
        raise _bad("league.zoo_init", lea["zoo_init"], "the path of a distilled-zoo file (.pt), the name of one "
                   "shipped in agents/checkpoints/ (e.g. zoo-bc-ppo-stage2), or \"\" for the shipped zoo-bc.pt")
    _int(lea, "refresh_every", 0, MAX_TIMESTEPS, where="league.")
    for k in ("refresh_base_games", "refresh_start_games"):
        _int(lea, k, 0, MAX_GAMES, where="league.")
    _int(lea, "refresh_seed", 0, MAX_SEED, where="league.")
    _int(lea, "refresh_games", 1, MAX_GAMES, where="league.")
    _int(lea, "refresh_epochs", 1, MAX_EPOCHS, where="league.")
    _int(lea, "snapshot_every", 1, MAX_TIMESTEPS, where="league.")
    _int(lea, "pool_size", 1, 1000, where="league.")
    _float(lea, "latest_share", 0.0, 1.0, "league.")
    _float(lea, "whole_tables", 0.0, 1.0, "league.")
    if lea.get("teammate"):
        _check_teammate(spec, lea["teammate"], data)
    _bool(lea, "deterministic_opponents", "league.")

    _float(data, "max_minutes", 0.0, 1e7)
    if pre.get("games"):
        _needs_heuristics(spec.id, "pretrain.games", pre["games"], "0 (a warm start clones the heuristics)")
    mode = data.get("reward_mode", TrainConfig.reward_mode)
    if data.get("tables"):
        _check_rules(spec, data.get("rules", {}), data["tables"][0]["num_players"], mode, shape_only=True)
        for i, t in enumerate(data["tables"]):
            _check_rules(spec, t["rules"], t["num_players"], mode, f"tables[{i}]", shape_only=True)
        for i, t in enumerate(data["tables"]):
            _check_rules(spec, {**data.get("rules", {}), **t.get("rules", {})}, t["num_players"], mode, f"tables[{i}]")
        _distinct_tables(spec, data, mode)
    else:
        counts_key = "player_counts" if data.get("player_counts") else "num_players"
        for n in (data.get("player_counts") or [data.get("num_players", TrainConfig.num_players)]):
            _check_rules(spec, data.get("rules", {}), n, mode, counts_key)
    cfg = TrainConfig(**data, policy=policy, league=LeagueConfig(**lea), pretrain=PretrainConfig(**pre),
                      rllib=RLlibConfig(**rll))
    if cfg.backend == "rllib":
        if cfg.policy.arch != "mlp":
            raise _bad("policy.arch", cfg.policy.arch, "mlp with backend rllib (RLlib's own MLP: net_arch)")
        for key, value, off in (("init_from", cfg.init_from, ""), ("pretrain.games", cfg.pretrain.games, 0),
                                ("league.refresh_every", cfg.league.refresh_every, 0),
                                ("league.zoo_init", cfg.league.zoo_init, ""), ("max_minutes", cfg.max_minutes, 0.0),
                                ("league.teammate", cfg.league.teammate, "")):
            if value != off:
                raise _bad(key, value, f"{off!r} with backend rllib (backend sb3 has it)")
    if cfg.n_envs * cfg.n_steps > MAX_ROLLOUT:
        raise ConfigError(f"n_envs * n_steps = {cfg.n_envs:,} * {cfg.n_steps:,} is too large a rollout; "
                          f"allowed: at most {MAX_ROLLOUT:,} steps (the buffer keeps one observation per step)")
    if (cfg.n_envs * cfg.n_steps) % cfg.batch_size:
        raise _bad("batch_size", cfg.batch_size,
                   f"a divisor of n_envs * n_steps = {cfg.n_envs * cfg.n_steps}")
    if cfg.player_counts or cfg.tables:
        which = "tables (one network trained at several tables)" if cfg.tables else \
            "player_counts (one network trained at several counts)"
        for key, value, allowed in (("backend", cfg.backend, "sb3"),):
            if value != allowed:
                raise _bad(key, value, f"{allowed!r} with {which}")
    if cfg.league.zoo_init and not any(z.endswith("-bc") for z in cfg.league.zoo):
        raise _bad("league.zoo_init", cfg.league.zoo_init,
                   "\"\" unless league.zoo holds distilled agents (names ending in -bc) to start from it")
    if cfg.league.refresh_every and not any(z.endswith("-bc") for z in cfg.league.zoo):
        raise _bad("league.refresh_every", cfg.league.refresh_every,
                   "0 unless league.zoo holds distilled agents (names ending in -bc) to refresh")
    if "mix" in lea:
        cfg.league.mix = {k: float(lea["mix"].get(k, 0.0)) for k in LEAGUE_KINDS}
    return cfg


def _game(data: dict):
    """The ``GameSpec`` of the config's ``game`` (a registered id), written back into ``data``."""
    from ripmarket_env.games import get, ids

    game = data.setdefault("game", DEFAULT_GAME)
    if not (isinstance(game, str) and game in ids()):
        raise _bad("game", game, "a registered game: " + " | ".join(ids()))
    return get(game)


def _default_zoo(game: str) -> list[str]:
    """The league's and the evaluations' default zoo: the game's heuristics (``random`` for
    a game without any)."""
    import agents

    return agents.game_agents(game).zoo()


def _check_teammate(spec, mate, data: dict) -> None:
    """``league.teammate``: "self" or an agent of the game, for a game whose rules make
    teams at every player count of the run; with ``tables``, at one table at least (it
    applies at the tables with teams)."""
    import agents

    known = agents.names(spec.id)
    if not (isinstance(mate, str) and (mate == "self" or mate in known)):
        raise _bad("league.teammate", mate, "\"\" (league seats), self (the learner's policy) or an agent: "
                   + " | ".join(known))
    sides = (spec.extras or {}).get("sides")
    base = data.get("rules") or {}
    if isinstance(data.get("tables"), list) and data["tables"]:
        tables = [(t.get("num_players"), {**base, **(t.get("rules") or {})}) for t in data["tables"]
                  if isinstance(t, dict)]
    else:
        tables = [(n, base) for n in data.get("player_counts") or [data.get("num_players", TrainConfig.num_players)]]
    teams = []
    for n, rules in tables:
        try:
            teams.append(sides is not None and sides(spec.make_rules(rules={**rules, "num_players": n})) is not None)
        except (ValueError, TypeError):
            return  # the rules check names the problem
    if data.get("tables") and not any(teams):
        raise _bad("league.teammate", mate, f"\"\" ({spec.id} has teams at none of the tables)")
    if not data.get("tables") and not all(teams):
        n = tables[teams.index(False)][0]
        raise _bad("league.teammate", mate, f"\"\" ({spec.id} has no teams with these rules at {n} players)")


#: At most this many tables in one run (``tables``).
MAX_TABLES = 64


def _check_tables(spec, data: dict) -> None:
    """The shape of ``tables``: a non-empty list of ``{num_players, rules}`` mappings with
    counts of the game, alone of the keys that set the counts; the table's rules are
    checked by ``_check_rules`` (and ``_distinct_tables``) once the run's keys are."""
    lo, hi = spec.min_players, spec.max_players
    tables = data["tables"]
    example = f"[{{num_players: {lo}}}, {{num_players: {hi}, rules: {{...}}}}]"
    if not (isinstance(tables, list) and 0 < len(tables) <= MAX_TABLES):
        raise _bad("tables", tables, f"a list of 1 to {MAX_TABLES} tables {{num_players: N, rules: {{...}}}}, "
                   f"e.g. {example}")
    for k in ("num_players", "player_counts"):
        if k in data:
            raise ConfigError(f"{k} and tables both set the player counts; set only tables "
                              "(each table's num_players)")
    for i, t in enumerate(tables):
        where = f"tables[{i}]"
        if not isinstance(t, dict):
            raise _bad(where, t, f"a mapping {{num_players: N, rules: {{...}}}}, e.g. {example}")
        for k in t:
            if k not in ("num_players", "rules", "weight"):
                raise ConfigError(f"unknown key '{where}.{_key(k)}'; allowed keys: num_players, rules, weight")
        _float(t, "weight", 0.0, 1e6, where=f"{where}.", lo_open=True)
        if "num_players" not in t:
            raise ConfigError(f"{where} has no num_players; allowed: a player count {lo}..{hi} of {spec.id}")
        _int(t, "num_players", lo, hi, where=f"{where}.")
        if t.get("rules") is None:
            t = tables[i] = {**t, "rules": {}}
        if not isinstance(t["rules"], dict):
            raise _bad(f"{where}.rules", t["rules"], f"a mapping of {spec.id}'s rules fields, merged over the run's rules")
    data["tables"] = [dict(t) for t in tables]
    data["num_players"] = tables[0]["num_players"]  # the first table's (the run's count where one is read)
    if data.get("n_envs", 256) < len(tables):
        raise _bad("n_envs", data.get("n_envs", 256), f"at least one game per table ({len(tables)})")
    n_envs = data.get("n_envs", 256)
    if isinstance(n_envs, int) and not isinstance(n_envs, bool):
        games = table_games(n_envs, [Table(t["num_players"], {}, {}, float(t.get("weight", 1.0))) for t in tables])
        if min(games) < 1:
            i = games.index(min(games))
            raise ConfigError(f"tables[{i}].weight: {tables[i].get('weight', 1)} gives the table no game of "
                              f"n_envs {n_envs} (split by weight: {games}); allowed: weights that give every "
                              "table one game at least (a larger weight or n_envs)")


def _distinct_tables(spec, data: dict, mode: str) -> None:
    """No two ``tables`` play the same rules (their count and every rules field)."""
    seen: dict = {}
    for i, t in enumerate(data["tables"]):
        rules = spec.make_rules(rules=rules_fields(spec, {**data.get("rules", {}), **t["rules"]}, t["num_players"], mode))
        key = repr(rules.to_dict() if hasattr(rules, "to_dict") else rules)
        if key in seen:
            raise ConfigError(f"tables[{i}] plays the same table as tables[{seen[key]}] "
                              f"({t['num_players']} players, the same rules); list each table once")
        seen[key] = i
    labels = [Table(t["num_players"], {}, t["rules"]).label for t in data["tables"]]
    for i, lab in enumerate(labels):
        if labels.index(lab) != i:
            raise ConfigError(f"tables[{i}] and tables[{labels.index(lab)}] are both named {lab!r} (the count and "
                              "the values of the table's own rules); give the tables distinct rules values")


def _imitates(name: str, game: str) -> bool:
    """``name`` is ``<agent>-bc`` for one of ``game``'s heuristics, or another of its
    registered agents taught with ``ripmarket distill --teacher`` (a slow search): its
    imitation in a distilled-zoo file (``league.zoo_init``), for a game whose imitations
    are not registered. The league refuses a file that holds no such style when it loads
    it."""
    import agents

    return name.endswith("-bc") and name[:-3] in agents.names(game)


def _imitation_hint(game: str, key: str) -> str:
    import agents

    h = agents.game_agents(game).heuristics
    if key != "zoo" or not h or f"{h[0]}-bc" in agents.names(game):
        return ""
    return f" (or {h[0]}-bc, ... with league.zoo_init, a distilled zoo of {game}: ripmarket distill --game {game})"


def _needs_heuristics(game: str, key: str, value, allowed: str) -> None:
    """Refuse ``key`` for a game whose agents' profile names no heuristics (there is nothing
    to record or imitate)."""
    import agents

    if not agents.game_agents(game).heuristics:
        raise _bad(key, value, f"{allowed}: game {game} has no heuristics to record")


def _check_rules(spec, rules, num_players: int, reward_mode: str, counts_key: str = "num_players",
                 shape_only: bool = False) -> None:
    """``rules`` must be a mapping of ``spec``'s rules fields (``num_players`` and
    ``reward_mode`` are the config's own keys) that the game accepts at ``num_players``
    (``shape_only``: the keys alone, not the values)."""
    import dataclasses as dc

    fields = [f.name for f in dc.fields(spec.rules_class) if f.name not in ("num_players", "reward_mode")]
    if not isinstance(rules, dict):
        raise _bad("rules", rules, f"a mapping of {spec.id}'s rules fields: {', '.join(fields)}")
    where = f"{counts_key}.rules" if counts_key.startswith("tables[") else "rules"
    for k in rules:
        if k in ("num_players", "reward_mode"):
            raise ConfigError(f"'{where}.{k}' is a key of its own: write {k} "
                              + ("beside the table's rules" if where != "rules" and k == "num_players"
                                 else "at the top of the config"))
        if k not in fields:
            raise ConfigError(f"unknown key '{where}.{_key(k)}'; allowed keys ({spec.id}): {', '.join(fields)}")
    if shape_only:
        return
    try:
        spec.make_rules(rules=rules_fields(spec, rules, num_players, reward_mode))
    except (ValueError, TypeError) as e:
        raise ConfigError(f"bad rules for {spec.id} at {num_players} players ({counts_key}): {_one_line(e, 200)}") from None


def rules_fields(spec, rules: dict, num_players: int, reward_mode: str) -> dict:
    """``rules`` with the player count and the training reward, as the game's rules fields. A
    game whose rules have no ``reward_mode`` pays its one reward: only "win" is taken."""
    import dataclasses as dc

    out = {**rules, "num_players": num_players}
    if any(f.name == "reward_mode" for f in dc.fields(spec.rules_class)):
        out["reward_mode"] = reward_mode
    elif reward_mode != "win":
        raise ConfigError(f"reward_mode: {spec.id} has one reward (its rules have no reward_mode); "
                          f"allowed: win, got {_short(reward_mode)}")
    return out


def rules_of(cfg: TrainConfig, num_players: int | None = None, rules: dict | None = None):
    """The game's rules config of a run at ``num_players`` (default ``cfg.num_players``):
    ``rules`` (default ``cfg.rules``; a table's, ``Table.rules``) with the player count
    and ``reward_mode``."""
    from ripmarket_env.games import get

    spec = get(cfg.game)
    n = cfg.num_players if num_players is None else num_players
    return spec.make_rules(rules=rules_fields(spec, cfg.rules if rules is None else rules, n, cfg.reward_mode))


def _one_line(msg: str, limit: int = 300) -> str:
    msg = " ".join(str(msg).split())
    return msg if len(msg) <= limit else msg[: limit - 3] + "..."


def load_config(path: str | Path) -> TrainConfig:
    """Read and validate a YAML training config: a UTF-8 file (at most 1 MiB) holding one
    mapping without repeated keys. An empty file is refused (it would silently start a
    full default run); ``{}`` asks for every default on purpose."""
    p = Path(path)
    if not p.is_file():
        why = why_not_a_file(p)
        raise ConfigError(f"config file not found: {p}" if why == "does not exist" else
                          f"{p}: {why}; a config is a YAML file")
    if p.stat().st_size > MAX_CONFIG_BYTES:
        raise ConfigError(f"{p}: {p.stat().st_size:,} bytes is too large for a config (at most {MAX_CONFIG_BYTES:,})")
    try:
        text = p.read_bytes().decode("utf-8")
    except UnicodeDecodeError as e:
        raise ConfigError(f"{p}: not UTF-8 text (byte {e.start}: {e.reason}); save the config as UTF-8") from None
    try:
        data = yaml.load(text, Loader=_UniqueKeyLoader)  # noqa: S506 - a SafeLoader subclass
    except ConfigError as e:
        raise ConfigError(f"{p}: {e}") from None
    except yaml.YAMLError as e:
        raise ConfigError(f"{p}: not valid YAML: {_one_line(e)}") from None
    except ValueError as e:  # e.g. an integer of more than 4,300 digits
        raise ConfigError(f"{p}: a value cannot be read ({_one_line(e, 160)})") from None
    except RecursionError:
        raise ConfigError(f"{p}: nested too deeply to be a config (a mapping of keys to values)") from None
    if data is None:
        raise ConfigError(f"{p}: the config is empty; write the keys to set (see configs/<game>/*.yaml), "
                          "or {} to train with every default")
    if not isinstance(data, dict):
        raise ConfigError(f"{p}: expected a mapping of keys to values (key: value lines), "
                          f"got a YAML {type(data).__name__}")
    try:
        return config_from_dict(data)
    except ConfigError as e:
        raise ConfigError(f"{p}: {e}") from None
    except RecursionError:
        raise ConfigError(f"{p}: nested too deeply to be a config (a mapping of keys to values)") from None
