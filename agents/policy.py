"""Trained policies as agents: ``PolicyAgent`` wraps a MaskablePPO policy network.

Shipped checkpoints in ``agents/checkpoints/*.zip`` are registered under their file
stem (``ppo-6p``); torch and sb3-contrib are imported only when such an agent is built.

    >>> import agents
    >>> bot = agents.make("ppo-6p")                    # deterministic (most likely action)
    >>> bot = agents.make("ppo-6p", deterministic=False, seed=0)
    >>> from agents.policy import load_agent
    >>> bot = load_agent("checkpoints/<run>/best.zip")  # any checkpoint (CheckpointError if unusable)
"""

from __future__ import annotations

import functools
import importlib.util
import threading
from pathlib import Path

import numpy as np

from agents.base import SPECIALIST, TABLE_KEY, BaseAgent, register

CHECKPOINT_DIR = Path(__file__).resolve().parent / "checkpoints"


class PolicyAgent(BaseAgent):
    """Acts with a (Maskable) actor-critic policy: masked logits, then argmax
    (``deterministic``) or a sample drawn with the agent's own seeded generator."""

    def __init__(self, policy, deterministic: bool = True, seed: int | None = None, name: str = "policy",
                 metadata: dict | None = None):
        self.policy = policy
        self.deterministic = deterministic
        self.rng = np.random.default_rng(seed)
        self._seed = seed
        self.name = name
        self.metadata = metadata or {}
        self._sparse: bool | None = None
        self._value_sparse: bool | None = None

    def reset(self, seed: int | None = None) -> None:
        if seed is not None:
            self._seed = seed
        self.rng = np.random.default_rng(self._seed)

    def sparse_parts(self):
        """``(first, rest, None)`` when the actor's logits are ``rest(first(x))`` for an
        ``nn.Linear`` ``first`` on the raw observation (an MLP on SB3's ``FlattenExtractor``,
        or an extractor that exposes its own ``sparse_parts``), else None: the first layer
        can then run on the observation's non-zeros (``agents.sparse``)."""
        if self._sparse is None:
            import torch
            from stable_baselines3.common.torch_layers import FlattenExtractor

            fe, pi, head = self.policy.pi_features_extractor, self.policy.mlp_extractor.policy_net, self.policy.action_net
            self._sparse = False
            if isinstance(fe, FlattenExtractor) and len(pi) > 0 and isinstance(pi[0], torch.nn.Linear):
                self._sparse = (pi[0], torch.nn.Sequential(*list(pi)[1:], head), None)
            elif hasattr(fe, "sparse_parts"):
                first, act = fe.sparse_parts()
                self._sparse = (first, torch.nn.Sequential(act, *list(pi), head), None)
        return self._sparse or None

    def logits(self, observations: np.ndarray) -> np.ndarray:
        import torch

        with torch.no_grad():
            parts = self.sparse_parts()
            if parts:  # first layer on the observation's non-zeros
                from agents.sparse import sparse_linear

                return parts[1](sparse_linear(observations, parts[0])).numpy()
            obs = torch.as_tensor(np.asarray(observations, dtype=np.float32))
            feats = self.policy.pi_features_extractor(obs)  # the actor's own (shared or not)
            latent = self.policy.mlp_extractor.forward_actor(feats)
            return self.policy.action_net(latent).numpy()

    @property
    def reward_mode(self) -> str:
        """The reward the network was trained for (R-11.1 ``win`` or R-11.2 ``placement``),
        which its value head estimates; ``win`` when the checkpoint does not say."""
        from ripmarket_env.games.ripmarket.config import REWARD_MODES

        conf = self.metadata.get("config")
        mode = conf.get("reward_mode") if isinstance(conf, dict) else None
        return mode if mode in REWARD_MODES else "win"

    def value_parts(self):
        """``(first, rest)`` when the critic's value is ``rest(first(x))`` for an
        ``nn.Linear`` ``first`` on the raw observation (an MLP critic on SB3's
        ``FlattenExtractor``, or an extractor that exposes its own ``sparse_parts``), else
        None: like ``sparse_parts`` for the actor."""
        if self._value_sparse is None:
            import torch
            from stable_baselines3.common.torch_layers import FlattenExtractor

            fe, vf, head = self.policy.vf_features_extractor, self.policy.mlp_extractor.value_net, self.policy.value_net
            self._value_sparse = False
            if isinstance(fe, FlattenExtractor) and len(vf) > 0 and isinstance(vf[0], torch.nn.Linear):
                self._value_sparse = (vf[0], torch.nn.Sequential(*list(vf)[1:], head))
            elif hasattr(fe, "sparse_parts"):
                first, act = fe.sparse_parts()
                self._value_sparse = (first, torch.nn.Sequential(act, *list(vf), head))
        return self._value_sparse or None

    def values(self, observations: np.ndarray) -> np.ndarray:
        """(n,) float64: the critic's estimate of the return (in ``reward_mode``) for the
        seat each observation is seen from (an MLP critic's first layer on the
        observation's non-zeros, ``agents.sparse``)."""
        import torch

        with torch.no_grad():
            parts = self.value_parts()
            if parts:
                from agents.sparse import sparse_linear

                v = parts[1](sparse_linear(np.asarray(observations, dtype=np.float32), parts[0]))
                return v.numpy()[:, 0].astype(np.float64)
            obs = torch.as_tensor(np.asarray(observations, dtype=np.float32))
            return self.policy.predict_values(obs).numpy()[:, 0].astype(np.float64)

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        m = np.asarray(action_masks, dtype=bool)
        if len(m) == 0:
            return np.zeros(0, np.int64)
        z = self.logits(observations).astype(np.float64)
        if not self.deterministic:
            z = z + self.rng.gumbel(size=z.shape)
        z[~m] = -np.inf
        a = z.argmax(axis=1).astype(np.int64)
        a[~m.any(axis=1)] = -1  # no legal action: a finished game
        return a

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        return int(self.act_batch(np.asarray(observation)[None], np.asarray(action_mask)[None])[0])


def best_table(key: str, tables) -> str | None:
    """The most specific of ``tables`` (specialists' table keys) that serves a row of table
    ``key``: ``key`` itself, else the longest ``t`` with ``key`` starting ``t + "-"`` (a
    ``4p`` network serves ``4p-ffa`` and ``4p-teams``), else None."""
    if key in tables:
        return key
    best = None
    for t in tables:
        if key.startswith(t + "-") and (best is None or len(t) > len(best)):
            best = t
    return best


class ByTableAgent(BaseAgent):
    """One registered bot, one network per table: a row seen at table ``key`` (its game's
    ``GameSpec.table_keys`` hook: ``"4p"``, Black Market's ``"4p-ffa"``) is decided by the
    network of its most specific table among ``by_table`` (``best_table``: a ``"4p"``
    network serves ``"4p-ffa"`` too), every other row by ``default``. A batch may mix rows
    of every table. ``by_table`` keys are table keys, or player counts (``6`` for
    ``"6p"``). The game is the default network's (its checkpoint's ``game``). A shipped bot
    ``<name>`` is one when ``agents/checkpoints/`` holds a ``<name>-at-<key>.zip`` of its
    game (a network trained further at that table only), e.g. R.I.P. Market's ``ppo``
    (``ppo-at-4p``, ``ppo-at-6p``)."""

    def __init__(self, default: PolicyAgent, by_table: dict, name: str = "policy", game: str | None = None):
        from agents.checkpoint import _spec_of, checkpoint_game

        game = game or checkpoint_game(getattr(default, "metadata", None) or {})
        spec = _spec_of(game)
        lo, hi = spec.min_players, spec.max_players
        bad = sorted(map(str, (k for k in by_table if not (
            (isinstance(k, int) and not isinstance(k, bool) and lo <= k <= hi)
            or (isinstance(k, str) and _table_count(k) is not None and lo <= _table_count(k) <= hi)))))
        if bad:
            raise ValueError(f"by_table keys must be player counts {lo}..{hi} of {game} or table keys "
                             f"such as '{lo}p', got {', '.join(bad)}")
        if spec.table_keys is None and by_table:
            raise ValueError(f"game {game} names no tables (its GameSpec has no table_keys): one network only")
        self.default = default
        tables = {(f"{k}p" if isinstance(k, int) else k): a for k, a in by_table.items()}
        self.by_table = dict(sorted(tables.items(), key=lambda kv: (_table_count(kv[0]), kv[0])))
        self.game = game
        self._keys = _resolved(spec.table_keys)
        self.name = name
        self._route: dict[str, PolicyAgent] = {}
        self._count: dict[str, int] = {}

    @property
    def metadata(self) -> dict:
        return self.default.metadata

    @property
    def deterministic(self) -> bool:
        return self.default.deterministic

    @property
    def by_count(self) -> dict[int, PolicyAgent]:
        """The networks of the tables named by their player count alone (``"6p"``)."""
        return {_table_count(k): a for k, a in self.by_table.items() if k == f"{_table_count(k)}p"}

    def reset(self, seed: int | None = None) -> None:
        for agent in (self.default, *self.by_table.values()):
            agent.reset(seed)

    def tables(self, observations: np.ndarray) -> np.ndarray:
        """The table key of each observation row (the game's ``table_keys``)."""
        obs = np.asarray(observations)
        if self._keys is None:
            return np.full(len(obs), "", dtype=object)
        return np.asarray(self._keys(obs), dtype=object)

    def counts(self, observations: np.ndarray) -> np.ndarray:
        """The player count of each observation's table."""
        c = self._count
        out = []
        for k in self.tables(observations):
            if k not in c:
                c[k] = _table_count(k) or 0
            out.append(c[k])
        return np.array(out, np.int64)

    def network_for_table(self, key: str) -> PolicyAgent:
        """The network that decides at table ``key``."""
        if key not in self._route:
            best = best_table(str(key), self.by_table)
            self._route[key] = self.default if best is None else self.by_table[best]
        return self._route[key]

    def network_for(self, players: int) -> PolicyAgent:
        """The network that decides at tables of ``players`` seats (named by the count alone)."""
        return self.network_for_table(f"{int(players)}p")

    def _groups(self, observations: np.ndarray):
        """``(network, rows)`` for every network with rows, the specialists in their
        tables' order, then the default: each network sees its rows in order, once."""
        keys = self.tables(observations)
        if not len(keys):
            return
        if len(keys) == 1 or (keys == keys[0]).all():  # one table (the usual batch): one network
            yield self.network_for_table(keys[0]), np.arange(len(keys))
            return
        uniq, inv = np.unique(keys.astype(str), return_inverse=True)
        nets = [self.network_for_table(k) for k in uniq]
        for agent in (*dict.fromkeys(self.by_table.values()), self.default):
            mine = [i for i, n in enumerate(nets) if n is agent]
            if mine:
                yield agent, np.flatnonzero(np.isin(inv, mine))

    def logits(self, observations: np.ndarray) -> np.ndarray:
        obs = np.asarray(observations, dtype=np.float32)
        out = None
        for agent, rows in self._groups(obs):
            z = agent.logits(obs[rows])
            if out is None:
                out = np.empty((len(obs), z.shape[1]), z.dtype)
            out[rows] = z
        return out if out is not None else self.default.logits(obs)

    def values(self, observations: np.ndarray) -> np.ndarray:
        """Each row's critic estimate, from the network of its table (each in that
        network's own ``reward_mode``)."""
        obs = np.asarray(observations, dtype=np.float32)
        out = np.zeros(len(obs), np.float64)
        for agent, rows in self._groups(obs):
            out[rows] = agent.values(obs[rows])
        return out

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        obs, m = np.asarray(observations), np.asarray(action_masks, dtype=bool)
        out = np.full(len(obs), -1, np.int64)
        for agent, rows in self._groups(obs):
            out[rows] = agent.act_batch(obs[rows], m[rows])
        return out

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        return int(self.act_batch(np.asarray(observation)[None], np.asarray(action_mask)[None])[0])


#: The name this class had when R.I.P. Market's bot was its only user (one network per
#: player count: ``ByCountAgent(default, {6: net})``).
ByCountAgent = ByTableAgent


def _resolved(hook):
    """A ``lazy_hook``'s function itself (imported once), else ``hook``: one call per batch."""
    from ripmarket_env.core.spec import lazy_hook

    if isinstance(hook, lazy_hook):
        from importlib import import_module

        return getattr(import_module(hook.module), hook.name)
    return hook


def _table_count(key: str) -> int | None:
    """The player count a table key starts with (``"4p-ffa"`` -> 4), None if none."""
    m = TABLE_KEY.match(key) if isinstance(key, str) else None
    return int(m["n"]) if m else None


def load_agent(path: str | Path, deterministic: bool = True, seed: int | None = None,
               name: str | None = None, cards=None) -> PolicyAgent:
    """A ``PolicyAgent`` from a checkpoint file (``agents.checkpoint.CheckpointError`` if
    unusable, or trained on other cards than ``cards``, the ``CardDB`` in play; None: the
    packaged cards)."""
    from agents.checkpoint import load_policy

    policy, meta = load_policy(path, cards=cards)
    return PolicyAgent(policy, deterministic=deterministic, seed=seed, name=name or Path(path).stem, metadata=meta)


#: Shipped checkpoints' networks, loaded once per file (path, size, mtime) and shared by
#: every agent made from the registry: an agent holds only its own RNG, and the network is
#: used for inference only (eval mode, no gradients), so sharing it is safe.
_policy_cache: dict = {}
_policy_cache_lock = threading.Lock()


def _shared_policy(path: Path, cards=None):
    st = path.stat()
    key = (str(path.resolve()), st.st_size, st.st_mtime_ns, None if cards is None else cards.digest)
    with _policy_cache_lock:
        if key not in _policy_cache:
            from agents.checkpoint import load_policy

            _policy_cache[key] = load_policy(path, cards=cards)
        return _policy_cache[key]


def _factory(path: Path):
    def make(deterministic: bool = True, seed: int | None = None, cards=None) -> PolicyAgent:
        """``cards``: the card database in play (``--cards``); the checkpoint must have been
        trained on it (None: the packaged cards)."""
        policy, meta = _shared_policy(path, cards)
        return PolicyAgent(policy, deterministic=deterministic, seed=seed, name=path.stem, metadata=meta)

    make.__name__ = f"make_{path.stem.replace('-', '_')}"
    return make


#: The shipped distilled zoo (``ripmarket distill``): one network imitating every heuristic.
DISTILLED_ZOO = CHECKPOINT_DIR / "zoo-bc.pt"
DISTILLED_STYLES = ("greedy", "survivor", "shark", "hoarder", "trickster")
_distilled_cache: dict = {}


def zoo_file(spec: str | Path) -> Path:
    """A distilled-zoo file named by ``spec``: a path, or the name of one shipped in
    ``agents/checkpoints/`` (``zoo-bc-ppo-stage2`` for ``agents/checkpoints/zoo-bc-ppo-stage2.pt``),
    so a config can name it from any working directory. ``CheckpointError`` when it is neither."""
    from agents.checkpoint import CheckpointError

    path = Path(spec)
    if path.is_file():
        return path
    shipped = CHECKPOINT_DIR / f"{spec}.pt"
    if "/" not in str(spec) and "\\" not in str(spec) and shipped.is_file():
        return shipped
    names = ", ".join(p.stem for p in sorted(CHECKPOINT_DIR.glob("*.pt")))
    raise CheckpointError(f"distilled zoo {str(spec)!r} is neither a file nor a shipped zoo ({names})")


def load_distilled(style: str, path: str | Path = DISTILLED_ZOO, deterministic: bool = True,
                   seed: int | None = None, cards=None, game: str | None = None):
    """The imitation of heuristic ``style`` from a distilled-zoo file (``agents.distilled``)
    of ``game`` (default R.I.P. Market's), made for the card database in play (``cards``, a
    ``CardDB``; None: the packaged cards)."""
    from agents.checkpoint import CheckpointError
    from agents.distilled import DistilledAgent, load

    key = (str(Path(path).resolve()), None if cards is None else cards.digest, game)
    if key not in _distilled_cache:
        _distilled_cache[key] = load(path, cards=cards, game=game)
    net, meta = _distilled_cache[key]
    if style not in meta["styles"]:
        raise CheckpointError(f"{path} holds no imitation of {style!r}; it has: {', '.join(meta['styles'])}")
    agent = DistilledAgent(net, meta["styles"].index(style), len(meta["styles"]), f"{style}-bc",
                           deterministic=deterministic, seed=seed)
    agent.styles = tuple(meta["styles"])
    return agent


def _distilled_factory(style: str):
    def make(deterministic: bool = True, seed: int | None = None, cards=None):
        return load_distilled(style, DISTILLED_ZOO, deterministic=deterministic, seed=seed, cards=cards)

    make.__name__ = f"make_{style}_bc"
    return make


#: R.I.P. Market's registered trained bots -> the file their network is read from.
_SHIPPED: dict[str, Path] = {}
#: Registered bots (of every game) with such networks -> {table key: file}.
_SPECIALISTS: dict[str, dict[str, Path]] = {}
_conflicts: dict = {}
_conflicts_lock = threading.Lock()


#: Why a trained bot cannot play where torch is not installed (``make demo``'s environment).
NEEDS_TORCH = "a trained bot needs torch, from the train extra: pip install 'ripmarket[train]'"


@functools.cache
def _torch_missing() -> bool:
    return importlib.util.find_spec("torch") is None


def without_torch(game: str) -> dict[str, str]:
    """``{bot: NEEDS_TORCH}`` for the game's registered bots that cannot be built where torch
    is not installed (their factory imports it); empty where it is installed."""
    if not _torch_missing():
        return {}
    from agents.base import make, names

    out = {}
    for name in names(game):
        try:
            make(name, game)
        except ModuleNotFoundError as exc:
            if exc.name == "torch":
                out[name] = NEEDS_TORCH
        except Exception:  # noqa: BLE001  (other reasons are told where the bot is asked for)
            pass
    return out


def card_conflict(name: str, cards=None) -> str | None:
    """Why the registered R.I.P. Market bot ``name`` cannot play the card database ``cards``
    (a ``CardDB``; None: the packaged cards), as the one-line refusal its loader would give
    (e.g. a first-edition training stage on the second edition's cards; ``NEEDS_TORCH``
    where torch is not installed); None when it can, or when it is no trained bot. Reads
    the checkpoint's metadata only (a distilled zoo is loaded once, as its bots would load
    it); answers are cached per file and card database."""
    path = _SHIPPED.get(name)
    if path is None:
        return None
    if _torch_missing():
        return NEEDS_TORCH
    for other in _SPECIALISTS.get(name, {}).values():  # each network the bot plays must fit the cards
        why = card_conflict(other.stem, cards)
        if why:
            return why
    from agents.checkpoint import CheckpointError, read_metadata

    st = path.stat() if path.is_file() else None
    key = (str(path), st and (st.st_size, st.st_mtime_ns), None if cards is None else cards.digest)
    with _conflicts_lock:
        if key not in _conflicts:
            try:
                if path.suffix == ".zip":
                    read_metadata(path, check=True, cards=cards)
                else:
                    ckey = (str(path.resolve()), None if cards is None else cards.digest)
                    if ckey not in _distilled_cache:
                        from agents.distilled import load

                        _distilled_cache[ckey] = load(path, cards=cards)
                _conflicts[key] = None
            except CheckpointError as exc:  # named by its place in the package, not the machine's path
                text = str(exc).replace(str(path), f"agents/checkpoints/{path.name}")
                _conflicts[key] = " ".join(text.split())
        return _conflicts[key]


def _counts_text(counts) -> str:
    """`` at 6 players`` / `` at 2-10 players`` from a checkpoint's ``num_players`` list."""
    if not (isinstance(counts, list) and counts and all(isinstance(c, int) for c in counts)):
        return ""
    lo, hi = min(counts), max(counts)
    if lo == hi:
        return f" at {lo} players"
    if sorted(counts) == list(range(lo, hi + 1)):
        return f" at {lo}-{hi} players"
    return " at " + ", ".join(map(str, sorted(counts))) + " players"


ROLES = CHECKPOINT_DIR / "roles.json"


def checkpoint_roles() -> dict[str, str]:
    """What each shipped checkpoint that is not a default bot is kept for (``roles.json``
    beside the checkpoints: stem -> role); empty without the file."""
    import json

    if not ROLES.is_file():
        return {}
    data = json.loads(ROLES.read_text())
    return {k: v for k, v in data.items() if not k.startswith("_")}


def _register_shipped() -> None:
    if not CHECKPOINT_DIR.is_dir():
        return
    if DISTILLED_ZOO.is_file():
        for style in DISTILLED_STYLES:
            register(f"{style}-bc", _distilled_factory(style),
                     f"Network imitating the {style} heuristic (agents/checkpoints/{DISTILLED_ZOO.name}); "
                     "fast batch opponent for training.")
            _SHIPPED[f"{style}-bc"] = DISTILLED_ZOO
    from agents.checkpoint import CheckpointError, checkpoint_game, read_metadata

    roles = checkpoint_roles()
    metas = {}
    for p in sorted(CHECKPOINT_DIR.glob("*.zip")):
        try:  # the metadata (JSON) names the checkpoint's game; no network is loaded here
            metas[p] = read_metadata(p, check=False)
        except CheckpointError:
            metas[p] = {}
    by_game: dict[str, dict[str, Path]] = {}
    for p, meta in metas.items():
        by_game.setdefault(checkpoint_game(meta), {})[p.stem] = p
    for game, files in by_game.items():
        _SPECIALISTS.update(specialists(files, game))
    for p, meta in metas.items():
        game = checkpoint_game(meta)
        if game == "ripmarket":
            desc = (f"MaskablePPO policy trained by self-play against the league{_counts_text(meta.get('num_players'))} "
                    f"(checkpoint agents/checkpoints/{p.name})")
        else:
            conf = meta.get("config") if isinstance(meta.get("config"), dict) else {}
            opp = conf.get("opponents")
            league = conf.get("league") if isinstance(conf.get("league"), dict) else {}
            if not (isinstance(opp, list) and opp) and isinstance(league.get("zoo"), list):  # the one trainer's league
                mix = league.get("mix") if isinstance(league.get("mix"), dict) else {}
                opp = list(dict.fromkeys(map(str, league["zoo"]))) + (["snapshots of itself"] if mix.get("self") else [])
            desc = "MaskablePPO policy" + (f" trained against {', '.join(map(str, opp))}"
                                           if isinstance(opp, list) and opp else "")
            tables = meta.get("tables")
            if isinstance(tables, list) and tables and all(isinstance(t, dict) and t.get("label") for t in tables):
                desc += " at tables " + ", ".join(str(t["label"]) for t in tables)
            elif isinstance(opp, list) and opp:
                rules = conf.get("rules") if isinstance(conf.get("rules"), dict) else {}
                mode = meta.get("mode") or rules.get("mode")  # a game with modes: the one it was trained in
                desc += _counts_text(meta.get("num_players")) + (f", {mode}" if isinstance(mode, str) and mode else "")
            desc += f" (checkpoint agents/checkpoints/{p.name})"
        by = _SPECIALISTS.get(p.stem)
        if by:
            desc += "; at " + ", ".join(f"{_table_words(k)} the network of {q.stem}" for k, q in by.items())
        if p.stem in roles:
            desc += f". Kept as {roles[p.stem]}"
        register(p.stem, _by_table_factory(p, by, game) if by else _factory(p), desc + ".", game=game)
        if game == "ripmarket":
            _SHIPPED[p.stem] = p


def _table_words(key: str) -> str:
    """``4 players`` for a table named by its count, ``table 4p-ffa`` otherwise."""
    n = _table_count(key)
    return f"{n} players" if key == f"{n}p" else f"table {key}"


def specialists(files: dict[str, Path], game: str = "ripmarket") -> dict[str, dict[str, Path]]:
    """The per-table networks among checkpoint files of ``game`` (stem -> path):
    ``<name>-at-<key>`` (``key`` a table key of ``GameSpec.table_keys``, its count in the
    game's range) serves the bot ``<name>`` at that table when ``<name>`` is among them
    too. None for a game that names no tables (no ``table_keys`` hook)."""
    from agents.checkpoint import _spec_of

    try:
        spec = _spec_of(game)
    except (KeyError, ImportError):  # a game no layer has loaded: its files play alone
        return {}
    if spec.table_keys is None:
        return {}
    out: dict[str, dict[str, Path]] = {}
    for stem, path in sorted(files.items()):
        m = SPECIALIST.match(stem)
        if m and m["base"] in files and spec.min_players <= _table_count(m["key"]) <= spec.max_players:
            out.setdefault(m["base"], {})[m["key"]] = path
    return {k: dict(sorted(v.items(), key=lambda kv: (_table_count(kv[0]), kv[0]))) for k, v in out.items()}


def _by_table_factory(path: Path, by: dict[str, Path], game: str):
    every, each = _factory(path), {k: _factory(q) for k, q in by.items()}

    def make(deterministic: bool = True, seed: int | None = None, cards=None) -> ByTableAgent:
        """``cards``: the card database in play; every network must have been trained on it."""
        return ByTableAgent(every(deterministic, seed, cards),
                            {k: f(deterministic, seed, cards) for k, f in each.items()}, name=path.stem, game=game)

    make.__name__ = f"make_{path.stem.replace('-', '_')}"
    return make


_register_shipped()


def _register_prior_search() -> None:
    """``search-ppo``: the search agent with the shipped bot for every table (``ppo``) as its
    prior (its three most likely actions are searched; ``agents.ripmarket.search``)."""
    if "ppo" not in _SHIPPED:
        return
    from functools import partial

    from agents.ripmarket.search import SearchAgent

    register("search-ppo", partial(SearchAgent, prior="ppo"),
             "Search with the trained bot ppo as its prior: the bot's 3 most likely legal actions are each played "
             "out budget/3 times (top_k= to change), the best mean of final reward plus finishing place is chosen.")
    _SHIPPED["search-ppo"] = _SHIPPED["ppo"]  # it plays the cards its prior was trained on


_register_prior_search()
