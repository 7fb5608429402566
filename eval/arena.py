"""The arena: the zoo's one batched game loop, and its one worker pool.

Tournaments (``eval.tournament``), ``ripmarket evaluate`` and the training league's
evaluation (``eval.evaluate``) and the distilled zoo's recordings (``train.distill``) all
play games the same way, here:

* **A table.** ``play(spec, rules, seeds, seats, agents)`` plays ``len(seeds)`` games of
  the game ``spec`` (a ``GameSpec``: ``ripmarket_env.games.get(id)``) as one engine batch
  (``spec.make_engine``). ``seats[g, p]`` is the index in ``agents`` of the agent that
  holds seat ``p`` of game ``g``; an agent may hold any number of seats.
* **Rounds.** Each round: the deciding seat of every game (``current_player``, -1 once a
  game is over), every game seen by its deciding seat (``observe``) with its legal mask,
  one decision per unfinished game (``decide``: ``agents.base.act_grouped`` by default,
  which gives every agent all of its rows at once and fuses the network agents), the
  observers' hook, then one ``step`` of the whole batch. The loop ends when every game is
  over (at most ``spec.max_decisions(rules)`` rounds).
* **Results.** Per game: the final rewards, the winners and, for a game that ranks its
  seats, the places (``spec.extras["outcome"]``, see below), the decisions taken, and the
  final engine for game-specific figures. A ``Recorder`` (an observer) keeps every
  decision: observation, mask, action, agent, game, seat and, once the games are over,
  the deciding seat's final reward.
* **Outcome.** A game may register ``extras["outcome"](engine) -> (winners, places)``,
  both ``(games, players)`` arrays (R.I.P. Market's: the winners of R-9 and the finishing
  order of R-11.2); without one, the seats with the game's best reward win and places
  follow the rewards (1 + seats with a strictly higher reward).

The worker pool (``run_pool``) spreads fixed tasks (chunks of games) over processes
started with ``spawn``, and shows progress: a rich bar on a terminal, plain lines when
stderr is not one. Every caller's results depend on its seeds and chunking only, never on
the number of workers.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from eval.progress import Progress

from ripmarket_env.core.engine import IllegalActionError


class ArenaError(RuntimeError):
    """An agent broke the protocol (an illegal action, a wrong number of actions)."""


# ----------------------------------------------------------------------------- deciding
def act_each(agents: Sequence, who: np.ndarray, observations: np.ndarray, action_masks: np.ndarray,
             names: Sequence[str] | None = None) -> np.ndarray:
    """Actions for rows decided by different agents: one ``act_batch`` call per agent
    present (rows with ``who < 0`` get -1), each checked to give one action per row.
    Unlike ``act_grouped`` no networks are fused: every agent decides exactly as it would
    alone (the tournaments rate agents, so they use this)."""
    actions = np.full(len(who), -1, dtype=np.int64)
    for a in np.unique(who[who >= 0]):
        sel = np.flatnonzero(who == a)
        out = np.asarray(agents[a].act_batch(observations[sel], action_masks[sel])).reshape(-1)
        if out.shape != sel.shape:
            raise ArenaError(f"agent {_name(agents, names, a)!r} returned {out.shape[0]} actions for {sel.size} games")
        actions[sel] = out
    return actions


def _act_grouped(agents, who, observations, action_masks):
    from agents.base import act_grouped

    return act_grouped(agents, who, observations, action_masks)


def _name(agents, names, a) -> str:
    if names is not None:
        return str(names[a])
    return str(getattr(agents[a], "name", type(agents[a]).__name__))


# ----------------------------------------------------------------------------- one round
@dataclass
class Round:
    """What an observer sees of one round, before its step is applied."""

    engine: Any
    actor: np.ndarray      # (games,) deciding seat, -1 for a finished game
    who: np.ndarray        # (games,) index of the deciding agent, -1 for a finished game
    obs: np.ndarray        # (games, obs_size) each game seen by its deciding seat
    mask: np.ndarray       # (games, num_actions) bool, the legal actions
    actions: np.ndarray    # (games,) the decisions, -1 for a finished game


class Observer:
    """The observer hook: ``on_start`` sees the dealt table's engine, ``on_round`` every
    round before its step, ``on_end`` the finished table (subclass and override any)."""

    def on_start(self, engine) -> None:
        pass

    def on_round(self, rnd: Round) -> None:
        pass

    def on_end(self, result: "Result") -> None:
        pass


class Recorder(Observer):
    """Keeps every decision of the agents ``include(who)`` selects (default: all) with at
    least ``min_choices`` legal actions (a forced decision teaches nothing).

    After the table, ``decisions`` holds numpy arrays, one row per decision in the order
    taken: ``obs`` (as ``obs_dtype``), ``mask``, ``action``, ``agent`` (index into the
    table's agents), ``game`` (row of the batch), ``seat`` and ``reward`` (that seat's
    final reward in that game)."""

    def __init__(self, include: Callable[[np.ndarray], np.ndarray] | None = None, min_choices: int = 1,
                 obs_dtype=np.float32):
        self.include = include
        self.min_choices = int(min_choices)
        self.obs_dtype = obs_dtype
        self._parts: list[tuple] = []
        self.decisions: dict[str, np.ndarray] | None = None

    def on_round(self, rnd: Round) -> None:
        keep = rnd.actor >= 0
        if self.include is not None:
            keep &= self.include(rnd.who)
        idx = np.flatnonzero(keep)
        if self.min_choices > 1:
            idx = idx[rnd.mask[idx].sum(axis=1) >= self.min_choices]
        self._parts.append((rnd.obs[idx].astype(self.obs_dtype), rnd.mask[idx].astype(bool), rnd.actions[idx].copy(),
                            rnd.who[idx].copy(), idx, rnd.actor[idx].copy()))

    def on_end(self, result: "Result") -> None:
        keys = ("obs", "mask", "action", "agent", "game", "seat")
        d = {k: np.concatenate([p[i] for p in self._parts]) for i, k in enumerate(keys)}
        d["reward"] = result.rewards[d["game"], d["seat"]]
        self._parts = []
        self.decisions = d


# ----------------------------------------------------------------------------- a table
@dataclass
class Result:
    """A finished table: per game (row) ``rewards``, ``winners``, ``places`` (None for a
    game without places), ``steps`` (decisions taken), the final ``engine`` and the
    number of ``rounds`` played."""

    engine: Any
    rewards: np.ndarray
    winners: np.ndarray
    places: np.ndarray | None
    steps: np.ndarray
    rounds: int = 0


def outcome(spec, engine, rewards: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    """``(winners, places)`` of finished games (see the module docstring, "Outcome")."""
    hook = (spec.extras or {}).get("outcome")
    if hook is not None:
        winners, places = hook(engine)
        return np.asarray(winners, dtype=bool), (None if places is None else np.asarray(places, dtype=np.int64))
    r = np.asarray(rewards, dtype=np.float64)
    winners = r == r.max(axis=1, keepdims=True)
    places = 1 + (r[:, None, :] > r[:, :, None]).sum(axis=2)
    return winners, places


def order_of(places: Sequence[int]) -> tuple[list[list[int]], list[float]]:
    """``(order, placement)`` of one game from its places: the groups of seats that share
    a place, best first (seats in seat order), and per seat the mean of the places its
    group spans (a tie for 2nd between two seats: 2.5 each)."""
    places = [int(x) for x in places]
    order = [[p for p, x in enumerate(places) if x == lv] for lv in sorted(set(places))]
    size = {places[g[0]]: len(g) for g in order}
    return order, [x + (size[x] - 1) / 2.0 for x in places]


def play(spec, rules, seeds: Sequence[int], seats, agents: Sequence, *, decide: Callable | None = None,
         observers: Sequence[Observer] = (), report: Callable[[int], Any] | None = None,
         names: Sequence[str] | None = None, where: Callable[[int], str] | None = None,
         engine_kwargs: dict | None = None, first_players: Sequence[int] | None = None) -> Result:
    """Play one table of games to the end (see the module docstring).

    ``rules``: the game's rules config (``spec.make_rules(...)``). ``seeds``: one deal seed
    per game. ``seats``: ``(games, players)`` agent indices. ``decide(agents, who, obs,
    masks) -> actions`` (default ``agents.base.act_grouped``). ``report(n)`` is called
    with the number of games newly over after each step. ``names`` (per agent) and
    ``where(game) -> str`` word the error raised when an agent breaks the protocol.
    ``engine_kwargs``: passed to ``spec.make_engine`` (R.I.P. Market: ``cards=``, a card
    database to play instead of the packaged one). An observer with ``after_round(rnd)``
    is called after each step too. ``first_players``: one first seat per game (match play),
    for a game whose engine's ``reset`` takes ``first_player`` (The Rune Market)."""
    decide = _act_grouped if decide is None else decide
    seeds = [int(s) for s in seeds]
    B = len(seeds)
    eng = spec.make_engine(rules, batch_size=B, **(engine_kwargs or {}))
    P = eng.num_players
    seats = np.asarray(seats, dtype=np.int64).reshape(B, P)
    if first_players is None:
        eng.reset(seeds)
    else:
        eng.reset(seeds, first_player=[int(f) for f in first_players])
    for o in observers:
        o.on_start(eng)
    rows = np.arange(B)
    steps = np.zeros(B, dtype=np.int64)
    limit = int(spec.max_decisions(rules)) + 1
    done_before = 0
    rounds = 0
    while True:
        n_done = int(eng.terminated.sum())
        if report is not None and n_done > done_before:
            report(n_done - done_before)
        done_before = n_done
        if n_done == B:
            break
        if rounds >= limit:  # pragma: no cover - every game ends within max_decisions
            raise ArenaError(f"{B - n_done} of {B} games did not end within {limit} rounds")
        actor = eng.current_player()
        live = actor >= 0
        seat = np.maximum(actor, 0)
        who = np.where(live, seats[rows, seat], -1)
        obs = eng.observe(seat)
        mask = eng.legal_mask().copy()
        actions = np.asarray(decide(agents, who, obs, mask), dtype=np.int64)
        steps += live
        if observers:
            rnd = Round(eng, actor, who, obs, mask, actions)
            for o in observers:
                o.on_round(rnd)
        try:
            eng.step(actions)
        except IllegalActionError as exc:
            g = exc.game
            at = where(g) if where is not None else f"game {g}"
            raise ArenaError(f"agent {_name(agents, names, who[g])!r} chose an illegal action ({at}): {exc}") from None
        if observers:
            for o in observers:
                after = getattr(o, "after_round", None)
                if after is not None:
                    after(rnd)
        rounds += 1
    rewards = eng.rewards().copy()
    winners, places = outcome(spec, eng, rewards)
    result = Result(engine=eng, rewards=rewards, winners=winners, places=places, steps=steps, rounds=rounds)
    for o in observers:
        o.on_end(result)
    return result


def warm_up(spec, rules) -> None:
    """Compile (or load) the game's kernels once in this process, so that a stale numba
    cache is rebuilt here instead of by every worker at the same time."""
    eng = spec.make_engine(rules, batch_size=1)
    eng.reset([0])
    eng.observe()
    eng.step([int(np.flatnonzero(eng.legal_mask()[0])[0])])


# ----------------------------------------------------------------------------- the worker pool
_REPORT = None


def _init_worker(queue, threads) -> None:  # pragma: no cover - runs in worker processes
    global _REPORT
    _REPORT = queue.put
    if threads:
        import torch

        torch.set_num_threads(int(threads))


def _in_worker(fn, task):  # pragma: no cover - runs in worker processes
    return fn(task, _REPORT)


class _Threads:
    """Limit torch's threads while a task runs in this process (and restore them)."""

    def __init__(self, n: int | None):
        self.n = n
        self.before = None

    def __enter__(self):
        if self.n:
            import torch

            self.before = torch.get_num_threads()
            torch.set_num_threads(int(self.n))
        return self

    def __exit__(self, *exc):
        if self.before is not None:
            import torch

            torch.set_num_threads(self.before)


def run_pool(fn: Callable[[Any, Callable[[int], Any]], Any], tasks: Sequence[Any], workers: int, *, total: int,
             label: str, progress: bool = True, threads: int | None = None, start_method: str = "spawn",
             warm: Callable[[], Any] | None = None, ray_address: str | None = None) -> list[Any]:
    """``[fn(task, report) for task in tasks]`` over ``workers`` processes, in task order.

    ``fn`` is a module-level function (workers import it); it calls ``report(n)`` for
    every ``n`` newly finished units (games) of the ``total``. With one worker (or one
    task) the tasks run in this process. ``threads``: torch threads per task (in this
    process they are restored afterwards). ``warm()`` runs here before workers start
    (``warm_up``: the kernels are compiled once, not by every worker). A worker's error
    is raised here. ``ray_address``: run the tasks as Ray tasks instead (``eval.raypool``:
    ``"local"``, ``"auto"`` or a cluster address); the results are the same, the progress
    advances as each task ends."""
    tasks = list(tasks)
    workers = max(1, min(int(workers), len(tasks)))
    if ray_address:
        from eval.raypool import ray_map

        with Progress(total, f"{label.split(' (')[0]} (Ray tasks)", progress) as bar:
            out = ray_map(_counted, [(fn, t, threads) for t in tasks], ray_address,
                          on_result=lambda r: bar.advance(r[1]))
        return [r[0] for r in out]
    with Progress(total, label, progress) as bar:
        if workers == 1:
            with _Threads(threads):
                return [fn(t, bar.advance) for t in tasks]
        if warm is not None:
            warm()
        return _parallel(fn, tasks, workers, bar, threads, start_method)


def _counted(job) -> tuple[Any, int]:
    """One task where progress cannot be reported as it goes (a Ray task): ``(result,
    units finished)``."""
    fn, task, threads = job
    done = [0]

    def report(n: int) -> None:
        done[0] += int(n)

    with _Threads(threads):
        return fn(task, report), done[0]


def _parallel(fn, tasks, workers: int, bar: Progress, threads, start_method: str) -> list[Any]:
    import multiprocessing as mp
    import queue as queue_mod
    from concurrent.futures import ProcessPoolExecutor

    ctx = mp.get_context(start_method)
    q = ctx.Queue()
    results: list[Any] = [None] * len(tasks)
    with ProcessPoolExecutor(max_workers=workers, mp_context=ctx, initializer=_init_worker,
                             initargs=(q, threads)) as ex:
        futures = {ex.submit(_in_worker, fn, t): i for i, t in enumerate(tasks)}
        pending = set(futures)
        while pending:
            try:
                bar.advance(q.get(timeout=0.2))
                continue
            except queue_mod.Empty:
                pass
            for f in [f for f in pending if f.done()]:
                pending.discard(f)
                results[futures[f]] = f.result()  # re-raises a worker's error
        while True:
            try:
                bar.advance(q.get_nowait())
            except queue_mod.Empty:
                break
    return results
