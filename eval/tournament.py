"""Agent-vs-agent tournaments: seeded lineups, duplicate deals, batched play, worker processes.

Design (every choice below is fixed by the tournament seed, never by the worker count):

* **Duplicate sets.** The tournament is played in *duplicate sets* of ``players`` games.
  A set has one deal (one deck seed) and one base lineup ``L`` (an agent name per seat);
  its game ``r`` (rotation ``r = 0 .. players-1``) replays the same deal with the lineup
  rotated by ``r`` seats: seat ``i`` is taken by ``L[(i - r) % players]``. Every entry of
  the lineup therefore plays every seat of the same deal once, which cancels seat-position
  and deal luck and cuts the variance of every figure. ``games`` is rounded *up* to whole
  sets (2000 games at 6 players = 334 sets = 2004 games); the count actually played is
  reported.
* **Lineups.** Seats are drawn from the agent list *with replacement* (an agent may hold
  several seats of a table, and must when there are more seats than agents) but balanced
  over the tournament: the base lineups are cut, ``players`` names at a time, from a
  stream of seeded random permutations of the agent list. Over the whole tournament the
  seat counts of any two agents differ by at most one base-lineup permutation's worth,
  i.e. each agent fills ``1/len(agents)`` of the seats, and rotation spreads those seats
  over every position.
* **Batched play.** Duplicate sets are grouped into fixed-size *chunks*
  (``chunk_sets`` sets, default 16). A chunk is played as one arena table
  (``eval.arena.play``, one ``Engine`` batch): at every
  step the games waiting on a seat held by agent ``A`` are handed to ``A.act_batch`` in one
  call (one call per agent per step). Each chunk builds its own agent instances, one per
  agent name, seeded from ``(seed, chunk, agent)``; an instance serves every seat its name
  holds in the chunk (agents see only the acting seat's observation and mask, so sharing
  is safe for stateless agents, which the Agent protocol describes).
* **Workers.** Chunks are spread over ``workers`` processes (default ``os.cpu_count()``,
  start method ``spawn``; ``eval.arena.run_pool``); ``workers=1`` plays in the calling process. Because chunks,
  deal seeds and agent seeds depend only on the tournament seed and ``chunk_sets``, the
  games and every figure are the same whatever the worker count.

Each game record (a dict) holds: ``game`` (index = set * players + rotation), ``set``,
``rotation``, ``seed`` (the deal seed given to ``Engine.reset``), ``lineup`` (agent name
per seat), ``order`` (finishing order: a list of groups of seats, best first; seats of a
group finished together), ``place`` (per seat, 1 + number of seats strictly ahead),
``placement`` (per seat, the average of the places its group spans, as in R-11.2),
``winners`` (per seat), ``rounds`` (``state["round_num"]`` at the end), ``steps``
(decisions taken) and ``rewards`` (per seat, ``Engine.rewards()``); in a game of sides
(``spec.extras["sides"](rules)``: Black Market's team mode) also ``teams``, the side of
each seat, so the ratings rate the sides as OpenSkill teams (``eval.ratings``).

Team games. The lineup rotation keeps every team together: rotating by ``r`` seats moves
each entry ``r`` seats on, so entries on seats of one side (q mod 2 at an even player
count) stay on one side, and the sides swap at odd ``r``. Teams are drawn like any
lineup: a side may pair different agents or copies of one.

Finishing order (R-9, R-11.2): the winners (co-winners of R-9.2 and the living of a
``max_rounds`` draw included) share the first place; every other seat is ordered by its
elimination index (``state["elim"]``) descending, later deaths ahead; seats eliminated in
the same resolution share an index and so share a placement.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from agents.base import DEFAULT_GAME
from ripmarket_env.core.spec import next_first_players

DEFAULT_CHUNK_SETS = 16


@dataclass
class TournamentResult:
    """Everything a tournament produced: settings, one record per game, the figures."""

    settings: dict[str, Any]
    games: list[dict[str, Any]]
    summary: dict[str, Any] = field(default_factory=dict)
    elapsed: float = 0.0
    out: Path | None = None

    def figures(self) -> dict[str, Any]:
        """The results as written to ``results.json`` (see ``eval.report.results_dict``)."""
        from eval.report import results_dict

        return results_dict(self)


# ----------------------------------------------------------------------------- schedule
def _seed_int(*words: int) -> int:
    return int(np.random.SeedSequence([int(w) for w in words]).generate_state(1, np.uint32)[0])


def num_sets(games: int, players: int) -> int:
    """Duplicate sets needed for at least ``games`` games."""
    return max(1, math.ceil(int(games) / int(players)))


def schedule(agent_names: Sequence[str], players: int, games: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Base lineups (sets, players) as agent indices, and one deal seed per set."""
    n_agents = len(agent_names)
    sets = num_sets(games, players)
    rng = np.random.default_rng(np.random.SeedSequence([int(seed), 0]))
    need = sets * players
    perms = [rng.permutation(n_agents) for _ in range(math.ceil(need / n_agents))]
    stream = np.concatenate(perms)[:need]
    lineups = stream.reshape(sets, players).astype(np.int64)
    deal_seeds = np.array([_seed_int(seed, 1, s) for s in range(sets)], dtype=np.int64)
    return lineups, deal_seeds


def rotate(lineup: np.ndarray, r: int) -> np.ndarray:
    """Seat ``i`` of rotation ``r`` is taken by ``lineup[(i - r) % players]``."""
    return np.roll(np.asarray(lineup), r)


# ----------------------------------------------------------------------------- playing a chunk
def import_agent_modules(modules: Sequence[str]) -> None:
    """Import modules that register extra agents (plugins outside the ``agents`` package)."""
    import importlib

    for m in modules:
        importlib.import_module(m)


def agent_registry():
    """The ``agents`` package (its registry: ``make``, ``names``, ``describe``)."""
    import agents

    return agents


def _make_agent(name: str, seed: int, kwargs: dict[str, Any] | None = None, cards=None, game: str = DEFAULT_GAME):
    """The agent; with a card database (``--cards``) it is told the cards when it takes
    them (the heuristics and search do; random and the trained networks do not)."""
    if cards is not None:
        try:
            return agent_registry().make_seeded(name, seed, game=game, cards=cards, **(kwargs or {}))
        except TypeError:
            pass
    return agent_registry().make_seeded(name, seed, game=game, **(kwargs or {}))


class _ObserverHook:
    """A tournament observer (``factory(engine)`` with ``before_step``/``game_record``,
    see ``run_tournament``) as an arena observer."""

    def __init__(self, factory):
        self.factory = factory
        self.inner = None

    def on_start(self, engine) -> None:
        self.inner = self.factory(engine)

    def on_round(self, rnd) -> None:
        self.inner.before_step(rnd.engine, rnd.actor, rnd.actions)

    def after_round(self, rnd) -> None:
        if hasattr(self.inner, "after_step"):
            self.inner.after_step(rnd.engine, rnd.actor)

    def on_end(self, result) -> None:
        pass


def play_chunk(task: dict[str, Any], report=None) -> list[dict[str, Any]]:
    """Play the duplicate sets of one chunk as one arena table; return the game records.

    ``task``: ``chunk`` index, ``sets`` (set indices), ``lineups`` (base lineups, agent
    indices), ``deal_seeds``, ``agent_names``, ``players``, ``seed``, ``rules`` (extra
    RulesConfig fields). ``report(n)`` is called with the number of newly finished games.
    """
    from functools import partial

    from eval import arena
    from ripmarket_env.games import get

    game = task.get("game") or DEFAULT_GAME
    SPEC = get(game)
    import_agent_modules(task.get("agent_modules") or ())
    observer_factory = _resolve(task["observer"]) if task.get("observer") else None
    names = list(task["agent_names"])
    P = int(task["players"])
    sets = list(task["sets"])
    base = np.asarray(task["lineups"], dtype=np.int64).reshape(len(sets), P)
    deals = list(task["deal_seeds"])
    B = len(sets) * P
    lineup = np.empty((B, P), dtype=np.int64)
    seeds = []
    meta = []
    for k, s in enumerate(sets):
        for r in range(P):
            g = k * P + r
            lineup[g] = rotate(base[k], r)
            seeds.append(int(deals[k]))
            meta.append((int(s), r))
    rules = SPEC.make_rules(P, **dict(task.get("rules") or {}))
    teams = sides_of(SPEC, rules)
    match = max(1, int(task.get("match_games") or 1))
    cards = None
    if task.get("cards"):
        cards = SPEC.card_files.load(task["cards"])
    extra = task.get("agent_kwargs") or {}
    pool = [_make_agent(n, _seed_int(task["seed"], 2, task["chunk"], i), extra.get(n), cards, game)
            for i, n in enumerate(names)]
    records = []
    first = None
    for m in range(match):
        # match play: game m of a match is a new deal of the set; its first player is the
        # previous game's winner (the game's next_first_players hook, e.g. RM-1.5's earliest
        # co-winner in turn order), a reset option of the game
        deal = seeds if m == 0 else [_seed_int(task["seed"], 3, meta[g][0], m) for g in range(B)]
        hook = _ObserverHook(observer_factory) if observer_factory is not None else None
        res = arena.play(SPEC, rules, deal, lineup, pool, decide=partial(arena.act_each, names=names),
                         observers=[hook] if hook else [], report=report, names=names,
                         where=lambda g: f"set {meta[g][0]}, rotation {meta[g][1]}",
                         engine_kwargs={"cards": cards} if cards is not None else None,
                         first_players=first)
        st = res.engine.state
        length = game_length(SPEC, res.engine)
        for g in range(B):
            s, r = meta[g]
            order, placement = arena.order_of(res.places[g])
            rec = {
                "game": (s * P + r) * match + m,
                "set": s,
                "rotation": r,
                "seed": deal[g],
                "lineup": [names[i] for i in lineup[g]],
                "order": order,
                "place": [int(x) for x in res.places[g]],
                "placement": placement,
                "winners": [bool(x) for x in res.winners[g]],
                "rounds": int(length[g]),
                "steps": int(res.steps[g]),
                "rewards": [round(float(x), 6) for x in np.asarray(res.rewards[g], dtype=np.float64)],
            }
            if teams is not None:
                rec["teams"] = list(teams)
            if match > 1:
                rec["match_game"] = m
                rec["first_player"] = int(st["first_player"][g])
            records.append(rec)
            if hook is not None:
                records[-1].update(hook.inner.game_record(res.engine, g))
        first = next_first_players(SPEC, res.engine, res.winners)
    return records


def game_length(spec, engine) -> np.ndarray:
    """Each game's length in rounds: R.I.P. Market's ``round_num``; a game with turns
    (``total_turns``, The Rune Market; ``turn``, Black Market) counts one round per turn
    of every seat, rounded up."""
    st = engine.state
    if "round_num" in st.dtype.names:
        return np.asarray(st["round_num"], dtype=np.int64)
    P = engine.num_players
    if "total_turns" in st.dtype.names:
        turns = np.asarray(st["total_turns"], dtype=np.int64)
    elif "turn" not in st.dtype.names:  # a game with neither: its decisions, a round per seat's turn
        turns = np.asarray(st["steps"], dtype=np.int64)
    else:  # Black Market: ``turn`` is the current turn's index; a game at the cap ended after it
        turns = np.asarray(st["turn"], dtype=np.int64) + (np.asarray(st["end_reason"]) != 2)  # 2: END_CAP
    return (turns + P - 1) // P


def sides_of(spec, rules) -> list[int] | None:
    """The side of each seat when the game and its rules play in sides (Black Market's
    team mode, ``spec.extras["sides"]``); None for every-seat-for-itself games."""
    hook = (spec.extras or {}).get("sides")
    return None if hook is None else hook(rules)


def _resolve(path: str):
    """The object named by ``"package.module:attribute"``."""
    import importlib

    module, _, attr = str(path).partition(":")
    return getattr(importlib.import_module(module), attr)


# ----------------------------------------------------------------------------- the tournament
def validate(agent_names: Sequence[str], players: int, games: int, game: str = DEFAULT_GAME) -> list[str]:
    """Check the arguments; raise ``ValueError`` with a one-line message naming allowed values."""
    from ripmarket_env.games import get, ids

    if game not in ids():
        raise ValueError(f"unknown game {game!r}; allowed: {', '.join(ids())}")
    spec = get(game)
    lo, hi = spec.min_players, spec.max_players
    known = agent_registry().names(game)
    names = [str(n).strip() for n in agent_names]
    if not names or any(not n for n in names):
        raise ValueError(f"give at least one agent name; allowed: {', '.join(known)}")
    unknown = [n for n in names if n not in known]
    if unknown:
        raise ValueError(f"unknown agent {unknown[0]!r}; allowed: {', '.join(known)}")
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise ValueError(f"agent {dup[0]!r} is listed twice; list each agent once (seats repeat agents as needed)")
    if isinstance(players, bool) or not isinstance(players, (int, np.integer)) or not lo <= players <= hi:
        raise ValueError(f"players must be an integer from {lo} to {hi} for {spec.title}, got {players!r}")
    counts = (spec.extras or {}).get("player_counts")
    if counts and players not in counts:
        raise ValueError(f"players must be one of {', '.join(map(str, counts))} for {spec.title}, got {players!r}")
    if isinstance(games, bool) or not isinstance(games, (int, np.integer)) or games < 1:
        raise ValueError(f"games must be a positive integer, got {games!r}")
    return names


def run_tournament(
    agent_names: Sequence[str],
    players: int,
    games: int,
    seed: int,
    workers: int | None = None,
    out: str | Path | None = None,
    progress: bool = True,
    chunk_sets: int = DEFAULT_CHUNK_SETS,
    rules: dict[str, Any] | None = None,
    start_method: str = "spawn",
    agent_modules: Sequence[str] = (),
    observer: str | None = None,
    label: str = "tournament",
    agent_kwargs: dict[str, dict[str, Any]] | None = None,
    cards: str | Path | None = None,
    ray_address: str | None = None,
    game: str = DEFAULT_GAME,
    match_games: int = 1,
) -> TournamentResult:
    """Play a tournament (see the module docstring); write the report to ``out`` if given.

    ``chunk_sets``: duplicate sets per Engine batch (fixes the batching, hence the agents'
    random streams: results depend on it, never on ``workers``). ``rules``: extra
    ``RulesConfig`` fields. ``agent_modules``: modules imported (here and in every worker)
    before the agents are looked up, for agents registered outside the ``agents`` package.
    ``observer``: ``"module:factory"``; in every chunk ``factory(engine)`` returns an object
    whose ``before_step(engine, actor, actions)`` sees every step before it is applied,
    whose optional ``after_step(engine, actor)`` sees it applied (``engine.events(g)`` of
    the games stepped) and whose ``game_record(engine, game)`` returns extra fields for that game's record (the
    balance analysis records the cards played this way). ``label``: the progress bar text.
    ``agent_kwargs``: extra constructor arguments per agent name (e.g.
    ``{"search": {"budget": 64}}``), recorded in the settings. ``cards``: a card file of a game
    that has them (``spec.card_files``) used instead of the packaged cards.
    ``ray_address``: play the chunks as Ray tasks instead of local worker processes
    (``eval.raypool``: ``"local"``, ``"auto"`` or a cluster address); the results are the same.
    ``game``: the registry id of the game (a game of sides, ``spec.extras["sides"]``, rates
    the sides as teams). ``match_games``: every table of a duplicate set plays a match of
    this many games with the same lineup; after the first (the set's deal) each game is a
    new deal started by the previous game's winner (match play: the game's reset option
    ``first_player``; of co-winners, the one its ``next_first_players`` hook names).
    """
    from eval.ratings import summarize

    agent_modules = [str(m) for m in agent_modules]
    import_agent_modules(agent_modules)

    names = validate(agent_names, players, games, game)
    from ripmarket_env.games import get

    spec = get(game)
    match_games = int(match_games)
    if match_games < 1:
        raise ValueError(f"match_games must be at least 1, got {match_games}")
    if match_games > 1 and "reset_options" not in (spec.extras or {}):
        raise ValueError(f"match play needs a game whose reset takes a first player; {spec.title} does not")
    if cards is not None and spec.card_files is None:
        raise ValueError(spec.no_card_files())
    players = int(players)
    seed = int(seed)
    if seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed}")
    teams = sides_of(spec, spec.make_rules(players, **dict(rules or {})))  # a bad rules override fails here
    cards_digest = None
    if cards is not None:  # a bad card file fails here (the game's card error), not in a worker
        cards = str(spec.card_files.resolve(cards).resolve())
        cards_digest = spec.card_files.load(cards).digest
    if int(chunk_sets) < 1:
        raise ValueError(f"chunk_sets must be at least 1, got {chunk_sets}")
    stray = sorted(set(agent_kwargs or {}) - set(names))
    if stray:
        raise ValueError(f"agent_kwargs names {stray[0]!r}, which is not in the tournament; allowed: {', '.join(names)}")
    if workers is None:
        workers = os.cpu_count() or 1
    workers = max(1, int(workers))
    lineups, deal_seeds = schedule(names, players, -(-int(games) // match_games), seed)
    sets = len(deal_seeds)
    total = sets * players * match_games
    tasks = []
    for c, lo in enumerate(range(0, sets, chunk_sets)):
        hi = min(sets, lo + chunk_sets)
        tasks.append(
            {
                "chunk": c,
                "sets": list(range(lo, hi)),
                "lineups": lineups[lo:hi].tolist(),
                "deal_seeds": deal_seeds[lo:hi].tolist(),
                "agent_names": names,
                "players": players,
                "seed": seed,
                "rules": dict(rules or {}),
                "agent_modules": agent_modules,
                "observer": observer,
                "agent_kwargs": dict(agent_kwargs or {}),
                "cards": cards,
                "game": game,
                "match_games": match_games,
            }
        )
    workers = min(workers, len(tasks))
    settings = {
        "game": game,
        "agents": names,
        "players": players,
        "games_requested": int(games),
        "games": total,
        "duplicate_sets": sets,
        "seed": seed,
        "chunk_sets": int(chunk_sets),
        "chunks": len(tasks),
        "workers": workers,
        "rules": dict(rules or {}),
        "agent_modules": agent_modules,
    }
    if match_games > 1:
        settings["match_games"] = match_games
    if teams is not None:
        settings["teams"] = list(teams)
    if cards is not None:
        settings["cards"] = {"file": cards, "digest": cards_digest}
    if agent_kwargs:
        settings["agent_kwargs"] = {k: dict(v) for k, v in agent_kwargs.items()}
    t0 = time.perf_counter()
    from eval import arena

    results = arena.run_pool(play_chunk, tasks, workers, total=total, progress=progress,
                             label=f"{label} ({workers} worker{'s' if workers > 1 else ''})",
                             start_method=start_method,
                             warm=lambda: arena.warm_up(spec, spec.make_rules(players, **dict(rules or {}))),
                             ray_address=ray_address)
    if ray_address:
        settings["backend"] = "ray"
    elapsed = time.perf_counter() - t0
    records = sorted((g for chunk in results for g in chunk), key=lambda g: g["game"])
    result = TournamentResult(settings=settings, games=records, elapsed=elapsed)
    result.summary = summarize(records, names)
    if out is not None:
        from eval.report import write_report

        result.out = Path(out)
        write_report(result, result.out)
    return result
