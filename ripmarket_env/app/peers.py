"""``ripmarket bench --suite engine --peers``: the game's engine alternated with other
engines' random play in one process.

The contenders, each timed for ``seconds`` per slice, in the same order in every round
(so a burst of other work on a shared machine moves one slice, not one contender):

- ours: the game's ``random_play`` and ``random_play_obs`` (``bench._Runner``: a batch of
  games, a uniformly random legal action drawn from the mask inside the compiled loop,
  auto-reset), at the given table size and batch, on ``threads`` numba threads (default
  one, as the peers' C++ loop runs on one core: on a shared machine a second OpenMP thread
  spends CPU time spinning at the batch's barrier while it waits for a descheduled one);
- OpenSpiel (``pyspiel``, when installed): its C++ ``evaluate_bots`` with uniform random bots
  (``make_uniform_random_bot``), one whole game per call, on each of its card games
  (``OPEN_SPIEL_GAMES``, those the installed version has; Bridge without the double-dummy
  shortcut, so its cards are played). ``evaluate_bots`` returns no step count, so a game's
  agent steps per game are estimated first by playing it with uniform random actions
  from Python (``mean_steps_per_game``, ``steps_per_game_sample``);
- Pgx (when installed): its Leduc Hold'em at the same batch, ``jax.vmap`` of its step under
  ``pgx.experimental.auto_reset``, actions drawn from the legal mask, a ``lax.scan`` of
  steps per compiled call.

A peer that is not installed is listed under ``skipped`` with the reason. Every row has the
engine suite's fields (``bench.Result``; the ones a peer cannot give are ``None``) plus
``engine`` (``ours``, ``open_spiel`` or ``pgx``), ``name`` and the per-round
``rounds_steps_per_cpu_sec``; ``median_steps_per_cpu_sec`` is their median. ``ratios``
divides our medians (without and with observations) by the best peer's.
"""

from __future__ import annotations

import statistics
import time

import numpy as np

OPEN_SPIEL_GAMES = (
    "bridge(use_double_dummy_result=false)", "hearts", "spades", "euchre", "oh_hell", "skat", "tarok",
    "gin_rummy", "crazy_eights", "cribbage", "dou_dizhu", "go_fish", "hanabi", "leduc_poker",
)
PGX_GAME = "leduc_holdem"
TARGETS = {False: 5.0, True: 2.5}  # our median per CPU-second over the best peer's (issue 38)


class _Contender:
    engine = ""
    name = ""
    players = 0
    batch = 1
    observations = False
    mean_steps_per_game: float | None = None
    extra: dict = {}

    def run(self, seconds: float) -> tuple[int, int, float, float]:
        """Play for about ``seconds`` of wall time: (agent steps, games, wall, CPU)."""
        raise NotImplementedError


class _Ours(_Contender):
    engine = "ours"

    def __init__(self, game: str, players: int, batch: int, observations: bool, threads: int) -> None:
        from ripmarket_env.app.bench import _Runner

        self.threads = threads
        self.run_ = _Runner(players, batch, game=game)
        self.name, self.players, self.batch, self.observations = game, players, batch, observations
        self.extra = {"state_bytes": int(self.run_.eng.state.nbytes),
                      "obs_buffer_bytes": int(self.run_.out.nbytes) if observations else 0}
        self.n = max(1, -(-1024 // batch))
        with _numba_threads(threads):
            self.run_.call(max(self.n, 20 * players), observations)  # warm up: a game per row

    def run(self, seconds: float) -> tuple[int, int, float, float]:
        with _numba_threads(self.threads):
            return self._run(seconds)

    def _run(self, seconds: float) -> tuple[int, int, float, float]:
        steps = games = 0
        wall = cpu = 0.0
        while wall < seconds:
            c0, t0 = time.process_time(), time.perf_counter()
            games += self.run_.call(self.n, self.observations)
            dt = time.perf_counter() - t0
            cpu += time.process_time() - c0
            wall += dt
            steps += self.n * self.batch
            if dt < 0.05:
                self.n *= 2
        return steps, games, wall, cpu


class _numba_threads:
    """``with _numba_threads(n)``: numba's thread count set to ``n`` (capped by the pool),
    then restored."""

    def __init__(self, n: int) -> None:
        import numba

        self.numba, self.n = numba, max(1, min(int(n), numba.config.NUMBA_NUM_THREADS))

    def __enter__(self):
        self.old = self.numba.get_num_threads()
        self.numba.set_num_threads(self.n)

    def __exit__(self, *exc):
        self.numba.set_num_threads(self.old)


def _random_steps_per_game(game, rng: np.random.Generator, max_games: int, max_seconds: float) -> tuple[float, int]:
    """Mean agent decisions per game of an OpenSpiel game under uniform random play (chance
    nodes drawn by their probabilities), over at most ``max_games`` games or ``max_seconds``."""
    total = n = 0
    t0 = time.perf_counter()
    while n < max_games and (n == 0 or time.perf_counter() - t0 < max_seconds):
        st = game.new_initial_state()
        while not st.is_terminal():
            if st.is_chance_node():
                outs = st.chance_outcomes()
                p = np.array([q for _, q in outs])
                st.apply_action(outs[rng.choice(len(outs), p=p / p.sum())][0])
            else:
                legal = st.legal_actions()
                st.apply_action(legal[rng.integers(len(legal))])
                total += 1
        n += 1
    return total / n, n


class _OpenSpiel(_Contender):
    engine = "open_spiel"

    def __init__(self, pyspiel, name: str, seed: int, sample_games: int, sample_seconds: float) -> None:
        self.pyspiel = pyspiel
        self.game = pyspiel.load_game(name)
        self.name = name
        self.players = self.game.num_players()
        self.bots = [pyspiel.make_uniform_random_bot(p, seed + p) for p in range(self.players)]
        self.seed = seed
        self.mean_steps_per_game, n = _random_steps_per_game(
            self.game, np.random.default_rng(seed), sample_games, sample_seconds
        )
        self.extra = {"steps_per_game_sample": n}
        self.run(0.0)  # warm up

    def run(self, seconds: float) -> tuple[int, int, float, float]:
        games = 0
        ev, g, bots = self.pyspiel.evaluate_bots, self.game, self.bots
        c0, t0 = time.process_time(), time.perf_counter()
        while True:
            for _ in range(16):
                ev(g.new_initial_state(), bots, self.seed + games)
                games += 1
            if time.perf_counter() - t0 >= seconds:
                break
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        return round(games * self.mean_steps_per_game), games, wall, cpu


class _Pgx(_Contender):
    engine = "pgx"

    def __init__(self, batch: int, seed: int, scan: int = 16) -> None:
        import jax
        import jax.numpy as jnp
        import pgx
        from pgx.experimental import auto_reset

        env = pgx.make(PGX_GAME)
        self.name, self.players, self.batch = PGX_GAME, env.num_players, batch
        self.extra = {"pgx": pgx.__version__, "jax": jax.__version__, "steps_per_call": scan}
        step = jax.vmap(auto_reset(env.step, env.init))

        def body(carry, _):
            state, key = carry
            key, k_act, k_step = jax.random.split(key, 3)
            logits = jnp.where(state.legal_action_mask, 0.0, -jnp.inf)
            action = jax.random.categorical(k_act, logits, axis=-1)
            state = step(state, action, jax.random.split(k_step, batch))
            return (state, key), state.terminated.sum()

        def play(state, key):
            (state, key), done = jax.lax.scan(body, (state, key), None, length=scan)
            return state, key, done.sum()

        self.scan = scan
        self.play = jax.jit(play)
        key = jax.random.PRNGKey(seed)
        key, sub = jax.random.split(key)
        self.state = jax.jit(jax.vmap(env.init))(jax.random.split(sub, batch))
        self.key = key
        self.run(0.0)  # compile and warm up

    def run(self, seconds: float) -> tuple[int, int, float, float]:
        steps = games = 0
        c0, t0 = time.process_time(), time.perf_counter()
        while True:
            self.state, self.key, done = self.play(self.state, self.key)
            games += int(done)  # waits for the call
            steps += self.scan * self.batch  # every row decides at every step (auto-reset)
            if time.perf_counter() - t0 >= seconds:
                break
        return steps, games, time.perf_counter() - t0, time.process_time() - c0


def _row(c: _Contender, rounds: list[tuple[int, int, float, float]]) -> dict:
    steps = sum(r[0] for r in rounds)
    games = sum(r[1] for r in rounds)
    wall = sum(r[2] for r in rounds)
    cpu = sum(r[3] for r in rounds)
    per_cpu = [r[0] / r[3] if r[3] > 0 else 0.0 for r in rounds]
    per_wall = [r[0] / r[2] if r[2] > 0 else 0.0 for r in rounds]
    return {
        "engine": c.engine,
        "name": c.name,
        "players": c.players,
        "batch": c.batch,
        "observations": c.observations,
        "steps_per_sec": steps / wall if wall else 0.0,
        "games_per_sec": games / wall if wall else 0.0,
        "mean_steps_per_game": c.mean_steps_per_game if c.mean_steps_per_game is not None
        else (steps / games if games else None),
        "agent_steps": steps,
        "games_finished": games,
        "seconds": wall,
        "cpu_seconds": cpu,
        "steps_per_cpu_sec": steps / cpu if cpu else 0.0,
        "calls": None,
        "steps_per_game_per_call": None,
        "chunk_rate_min": min(per_wall),
        "chunk_rate_max": max(per_wall),
        "state_bytes": c.extra.get("state_bytes"),
        "obs_buffer_bytes": c.extra.get("obs_buffer_bytes", 0),
        "maxrss_mb": None,
        "rounds_steps_per_cpu_sec": per_cpu,
        "median_steps_per_cpu_sec": statistics.median(per_cpu),
        "median_steps_per_sec": statistics.median(per_wall),
        **{k: v for k, v in c.extra.items() if k not in ("state_bytes", "obs_buffer_bytes")},
    }


def run_peers(
    game: str,
    players: int,
    batch: int = 4096,
    seconds: float = 2.0,
    rounds: int = 3,
    open_spiel_games=None,
    pgx: bool = True,
    seed: int = 0,
    sample_games: int = 200,
    on_slice=None,
    threads: int = 1,
) -> dict:
    """Our engine (without and with observations) alternated with the installed peers,
    ``rounds`` rounds of one ``seconds`` slice each; the JSON-ready ``peers`` report.

    ``open_spiel_games``: OpenSpiel game strings (default ``OPEN_SPIEL_GAMES``, those
    registered); ``pgx=False`` leaves Pgx out. ``on_slice(label)`` after each slice;
    ``threads``: numba threads of our loops."""
    from ripmarket_env.app.bench import maxrss_mb

    contenders: list[_Contender] = [_Ours(game, players, batch, obs, threads) for obs in (False, True)]
    skipped = []
    try:
        import pyspiel
    except ImportError as exc:
        skipped.append({"engine": "open_spiel", "reason": f"pyspiel is not installed ({exc}); pip install open_spiel"})
    else:
        names = list(open_spiel_games if open_spiel_games is not None else OPEN_SPIEL_GAMES)
        have = {g.short_name for g in pyspiel.registered_games()}
        for i, name in enumerate(names):
            if name.split("(")[0] not in have:
                skipped.append({"engine": "open_spiel", "name": name,
                                "reason": f"this OpenSpiel ({pyspiel.__file__}) has no game {name.split('(')[0]!r}"})
                continue
            contenders.append(_OpenSpiel(pyspiel, name, seed + 1000 * i, sample_games, 1.0))
    if pgx:
        try:
            import pgx as _pgx  # noqa: F401
        except ImportError as exc:
            skipped.append({"engine": "pgx", "name": PGX_GAME, "reason": f"pgx is not installed ({exc}); pip install pgx"})
        else:
            contenders.append(_Pgx(batch, seed))
    results: list[list] = [[] for _ in contenders]
    for r in range(rounds):
        for i, c in enumerate(contenders):
            results[i].append(c.run(seconds))
            if on_slice is not None:
                on_slice(f"round {r + 1}: {c.engine} {c.name}{' +obs' if c.observations else ''}")
    rows = [_row(c, res) for c, res in zip(contenders, results)]
    peers = [x for x in rows if x["engine"] != "ours"]
    best = max(peers, key=lambda x: x["median_steps_per_cpu_sec"]) if peers else None
    ratios = []
    for x in rows[:2]:
        ratio = x["median_steps_per_cpu_sec"] / best["median_steps_per_cpu_sec"] if best else None
        target = TARGETS[x["observations"]]
        ratios.append({
            "observations": x["observations"],
            "best_peer": f"{best['engine']}:{best['name']}" if best else None,
            "ratio_per_cpu_sec": ratio,
            "target": target,
            "met": (ratio >= target) if ratio is not None else None,
        })
    return {
        "benchmark": "random legal play alternated in one process: ours, then each installed peer, every round",
        "unit": "agent steps per second and per CPU-second (medians over rounds)",
        "config": {"game": game, "players": players, "batch": batch, "seconds_per_slice": seconds,
                   "rounds": rounds, "numba_threads": contenders[0].threads},
        "results": rows,
        "skipped": skipped,
        "ratios": ratios,
        "maxrss_mb": maxrss_mb(),
    }


def render_rich(peers: dict):
    """The peers report as a rich table (medians per CPU-second) and the ratio lines."""
    from rich import box
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    from ripmarket_env.app.bench import _rate

    cfg = peers["config"]
    table = Table(
        title=f"Against peers — agent steps per CPU-second (median of {cfg['rounds']} alternated rounds)",
        title_justify="left", box=box.SIMPLE_HEAD, padding=(0, 1), show_edge=False, pad_edge=False,
    )
    for col in ("engine", "game", "players", "batch", "per CPU-s", "steps/s", "steps/game"):
        table.add_column(col, justify="right", no_wrap=True)
    for x in peers["results"]:
        spg = x["mean_steps_per_game"]
        table.add_row(
            x["engine"], x["name"] + (" +obs" if x["observations"] else ""), str(x["players"]), str(x["batch"]),
            _rate(x["median_steps_per_cpu_sec"]), _rate(x["median_steps_per_sec"]), f"{spg:.1f}" if spg else "—",
        )
    parts = [table]
    for s in peers["skipped"]:
        parts.append(Text(f"skipped {s['engine']} {s.get('name', '')}: {s['reason']}", style="yellow"))
    for r in peers["ratios"]:
        if r["ratio_per_cpu_sec"] is None:
            continue
        mark = "met" if r["met"] else "MISSED"
        parts.append(Text(
            f"{'with' if r['observations'] else 'without'} observations: {r['ratio_per_cpu_sec']:.2f}x "
            f"{r['best_peer']} per CPU-second (target {r['target']}x) — {mark}",
            style="green" if r["met"] else "bold red",
        ))
    return Group(*parts)
