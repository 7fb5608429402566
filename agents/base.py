"""The agent protocol and the agent registry.

An agent sees only what its seat sees: the observation vector and the legal-action mask
(``ripmarket_env.games.ripmarket.observation.named_view`` decodes the vector into named pieces).

    act(observation, action_mask) -> action            one decision
    act_batch(observations, action_masks) -> actions   many games at once
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from ripmarket_env.core.agent import Agent, BaseAgent, RandomAgent  # noqa: F401  (the protocol the envs speak)


def act_grouped(agents: Sequence, who: np.ndarray, observations: np.ndarray, action_masks: np.ndarray,
                out: np.ndarray | None = None, csr: tuple | None = None) -> np.ndarray:
    """Actions for rows decided by different agents: row ``i`` by ``agents[who[i]]``
    (rows with ``who < 0`` are left as they are in ``out``, -1 by default).

    Network agents (those with ``sparse_parts``: frozen policies, distilled styles) decide
    together in one fused pass (``agents.sparse.fused_act``); agents exposing the same
    non-None ``shared_net_key`` decide together in one ``act_styles`` call; every other
    agent present gets one ``act_batch``. ``csr``: the observations' non-zeros, if the caller
    has them (``fused_act``)."""
    out = np.full(len(who), -1, np.int64) if out is None else out
    fused = None
    if any(hasattr(agents[a], "sparse_parts") for a in np.unique(who) if a >= 0):
        from agents.sparse import fused_act

        fused = fused_act(agents, who, observations, action_masks, out, csr=csr)
    shared: dict = {}
    for a in np.unique(who if fused is None else who[~fused]):
        if a < 0:
            continue
        sel = np.flatnonzero(who == a)
        key = getattr(agents[a], "shared_net_key", None)
        if key is not None:
            shared.setdefault(key, []).append((agents[a], sel))
        else:
            out[sel] = agents[a].act_batch(observations[sel], action_masks[sel])
    for group in shared.values():
        sel = np.concatenate([g[1] for g in group])
        styles = np.concatenate([np.full(len(g[1]), g[0].style_index) for g in group])
        out[sel] = group[0][0].act_styles(observations[sel], action_masks[sel], styles)
    return out


#: A table key (``GameSpec.table_keys``): the count, then the table's variants (``4p-ffa``).
TABLE_KEY = re.compile(r"^(?P<n>[1-9][0-9]?)p(?:-[A-Za-z0-9_]+)*$")
#: ``<name>-at-<key>``: the network the shipped bot ``<name>`` plays at table ``key``
#: (``ppo-at-4p``, ``bm-ppo-at-4p-ffa``; a ``4p`` network serves every 4-player table).
SPECIALIST = re.compile(r"^(?P<base>.+)-at-(?P<key>[1-9][0-9]?p(?:-[A-Za-z0-9_]+)*)$")


@dataclass(frozen=True)
class Entry:
    name: str
    factory: Callable[..., Agent]
    description: str
    game: str | None
    """The game id the agent plays (``None``: any game, like the random agent)."""


#: The registry is keyed by game: (game id or None, name) -> Entry.
_REGISTRY: dict[tuple[str | None, str], Entry] = {}
DEFAULT_GAME = "ripmarket"


def register(name: str, factory: Callable[..., Agent], description: str, game: str | None = DEFAULT_GAME) -> None:
    """Register an agent of game ``game`` (``None``: an agent for every game)."""
    if (game, name) in _REGISTRY or (None, name) in _REGISTRY or (game is None and any(k[1] == name for k in _REGISTRY)):
        raise ValueError(f"agent {name!r} is already registered" + (f" for game {game!r}" if game else ""))
    _REGISTRY[(game, name)] = Entry(name, factory, description, game)


def names(game: str = DEFAULT_GAME) -> list[str]:
    """The agents that play ``game`` (its own and the game-agnostic ones)."""
    return sorted(e.name for (g, _), e in _REGISTRY.items() if g in (game, None))


def games_with_agents() -> list[str]:
    return sorted({g for g, _ in _REGISTRY if g is not None})


def describe(name: str, game: str = DEFAULT_GAME) -> str:
    return _entry(name, game).description


def make(name: str, game: str = DEFAULT_GAME, **kwargs) -> Agent:
    """A new agent of ``game`` by registry name (e.g. ``make("random", seed=0)``)."""
    return _entry(name, game).factory(**kwargs)


def settings(name: str, game: str = DEFAULT_GAME) -> dict[str, inspect.Parameter] | None:
    """The keyword arguments agent ``name``'s factory takes (``--set AGENT.KEY=VALUE``), by
    name, as ``inspect.Parameter`` (its default and annotation), or None where the factory
    passes any on unseen (``**kwargs`` without a stated signature)."""
    params = inspect.signature(_entry(name, game).factory).parameters.values()
    if any(p.kind is p.VAR_KEYWORD for p in params):
        return None
    return {p.name: p for p in params
            if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD) and not p.name.startswith("_")}


def takes_settings_of(factory: Callable, cls: type, *fixed: str) -> Callable:
    """``factory`` (which passes its keywords on to ``cls``), stating ``cls.__init__``'s
    parameters but ``fixed`` (the ones the factory sets itself) as its own signature, so
    that ``settings`` and ``help()`` show what it takes."""
    own = [p.replace(kind=p.KEYWORD_ONLY) for p in inspect.signature(cls.__init__).parameters.values()
           if p.name != "self" and p.name not in fixed and p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)]
    factory.__signature__ = inspect.Signature(own)
    return factory


def make_seeded(name: str, seed: int, game: str = DEFAULT_GAME, **kwargs) -> Agent:
    """``make(name, seed=seed, **kwargs)``, or without the seed for an agent whose
    constructor takes none (a deterministic one)."""
    try:
        return make(name, game, seed=seed, **kwargs)
    except TypeError:
        return make(name, game, **kwargs)


def _entry(name: str, game: str = DEFAULT_GAME) -> Entry:
    entry = _REGISTRY.get((game, name)) or _REGISTRY.get((None, name))
    if entry is None:
        others = sorted(g for (g, n) in _REGISTRY if n == name and g is not None)
        hint = f" ({name!r} plays {', '.join(others)})" if others else ""
        raise KeyError(f"unknown agent {name!r} for game {game!r}{hint}; known agents: {', '.join(names(game))}")
    return entry


@dataclass(frozen=True)
class GameAgents:
    """What the layers above the agents need to know of a game's zoo, as data: the
    game's own agents' roles. Training (the league's and the evaluations' opponents),
    evaluation (``evaluate``'s and ``balance``'s default tables), the terminal game and
    the server (default opponents, difficulty labels, bots to load at start) read a game's
    agents only through it, so a game registered with ``register_game`` gets every one of
    them without code of its own there."""

    game: str
    heuristics: tuple[str, ...] = ()
    """The game's rule-based styles, strongest first: the default zoo of the training
    league and its evaluations, ``evaluate``'s opponents and ``balance``'s table."""
    search: str | None = None
    """The game's search agent (``None``: it has none)."""
    default_bots: tuple[str, ...] = ()
    """The default opponent, in order of preference: the first that is registered and can
    play the table is taken (then the heuristics, then ``random``)."""
    levels: dict = field(default_factory=dict)
    """A plain-language difficulty per bot name, for the people choosing an opponent."""
    slow_bots: tuple[str, ...] = ()
    """Bots worth loading before the first game asks for them (networks, searches)."""
    bench_bots: tuple[str, ...] = ()
    """The bots ``ripmarket bench --suite bot`` times by default (its trained bot, a
    heuristic, its search); empty: the default bots, the first heuristic and the search."""
    bench_players: int | None = None
    """The table of that bench (a table the bench bots can play; None: the game's default)."""
    checkpoint_loader: str = ""
    """``"module:function"`` loading a checkpoint file of the game's own format as an agent
    (``function(path, seed=...)``); empty: the zoo's checkpoints (``agents.policy.load_agent``)."""

    def zoo(self) -> list[str]:
        """The heuristics, or ``["random"]`` for a game without any."""
        return list(self.heuristics) or ["random"]

    def bench(self) -> list[str]:
        """The bots the bot bench times by default (``random`` for a game without any)."""
        chosen = self.bench_bots or (*self.default_bots, *self.heuristics[:1], *((self.search,) if self.search else ()))
        return list(chosen) or ["random"]

    def level(self, name: str) -> str:
        """The difficulty label of bot ``name`` (``"you"`` has none)."""
        if name == "you":
            return ""
        if name in self.levels:
            return self.levels[name]
        if name == "random":
            return "Beginner: random moves"
        if name.endswith("-bc") and name[:-3] in self.heuristics:
            return "Easy: imitates " + name[:-3]
        if name.endswith("-lookahead") and name[:-10] in self.levels:  # agents/lookahead.py: the bot, checked ahead
            return self.levels[name[:-10]] + ", checked one turn ahead"
        m = SPECIALIST.match(name)  # <bot>-at-<table>: the network a bot plays at one table (agents/policy.py)
        if m and m["base"] in self.levels:
            count, mode = TABLE_KEY.match(m["key"])["n"], m["key"].partition("-")[2]
            return f"{self.levels[m['base']]}; its network at {count} players" + (f", {mode}" if mode else "")
        return "Unrated"


_GAMES: dict[str, GameAgents] = {}


def register_game(game: str, **fields) -> GameAgents:
    """Register the roles of game ``game``'s agents (``GameAgents``' fields); every name it
    gives must be registered for the game by then or later, and is checked when read."""
    if game in _GAMES:
        raise ValueError(f"the agents of game {game!r} are already registered")
    _GAMES[game] = profile = GameAgents(game, **fields)
    return profile


def game_agents(game: str) -> GameAgents:
    """The roles of ``game``'s agents (an empty profile, random only, for a game that
    registered none)."""
    return _GAMES.get(game) or GameAgents(game)


def default_bot(game: str, playable: Callable[[str], bool] = lambda name: True) -> str:
    """The default opponent of ``game``: the first of its ``default_bots``, then its
    heuristics, that is registered and ``playable`` (e.g. fits the table), else ``random``."""
    profile = game_agents(game)
    known = set(names(game))
    for name in (*profile.default_bots, *profile.heuristics):
        if name in known and playable(name):
            return name
    return "random"


def default_lineup(game: str, seats: int, playable: Callable[[str], bool] = lambda name: True) -> list[str]:
    """The opponents of a table set up without naming them, one name per other seat: the
    first playable of ``game``'s ``default_bots`` at every seat, or, for a game without a
    playable one, its heuristics in turn (``random`` for a game with none)."""
    profile = game_agents(game)
    known = set(names(game))
    for name in profile.default_bots:
        if name in known and playable(name):
            return [name] * seats
    zoo = [n for n in profile.heuristics if n in known and playable(n)] or ["random"]
    return [zoo[i % len(zoo)] for i in range(seats)]


register("random", RandomAgent, "Uniformly random legal actions.", game=None)
