"""The core's batch drivers (ripmarket_env/core/drivers.py) over a game's per-row kernels.

- the threaded drivers (``prange`` with the kernels as first-class functions) play the
  same games as the serial ones;
- a new process loads every driver it uses from numba's cache (no compile);
- ``compile_drivers`` refuses kernels it cannot call, with a message naming the kernel;
- a wrong argument type is a TypeError, never a call through the wrong kernel.
"""

import os
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import njit

from ripmarket_env.core.drivers import DRIVERS, compile_drivers
from ripmarket_env.core.engine import kernel_view as _k
from ripmarket_env.games.ripmarket import Engine, RulesConfig
from ripmarket_env.games.ripmarket import kernels as K
from ripmarket_env.games.ripmarket.observation import encode_obs


def _raw(eng):
    return eng.state.view(np.uint8).copy()


def _played(players=5, batch=40, seed=3):
    eng = Engine(RulesConfig(num_players=players), batch_size=batch)
    eng.reset(list(range(seed, seed + batch)))
    return eng


@pytest.mark.parametrize("game", ["ripmarket", "black-market", "rune-market"])
def test_threaded_drivers_play_the_same_games_as_serial_ones(game):
    """Every game's Engine runs the core's drivers (BM-12.1 for Black Market)."""
    from ripmarket_env.core.drivers import BatchKernels
    from ripmarket_env.games import get

    spec = get(game)

    def played():
        eng = spec.make_engine(spec.make_rules(4), batch_size=40)
        eng.reset(list(range(3, 43)))
        return eng

    a, b = played(), played()
    assert isinstance(a.drivers, BatchKernels) and spec.batch is a.drivers and spec.fast is a.drivers
    d = a.drivers
    S_a, T_a, S_b, T_b = _k(a.state), _k(a.tables), _k(b.state), _k(b.tables)
    rng = np.random.default_rng(0)
    for _ in range(60):
        m = a.legal_mask()
        acts = np.array([rng.choice(np.flatnonzero(m[g])) if m[g].any() else -1 for g in range(a.batch_size)],
                        dtype=np.int64)
        d.step_batch(S_a, T_a, a.cfg, acts)
        d.step_serial(S_b, T_b, b.cfg, acts)
        assert np.array_equal(_raw(a), _raw(b))
    v = np.arange(a.batch_size, dtype=np.int64) % a.num_players
    out_a = np.zeros((a.batch_size, a.obs_size), np.float32)
    out_b = np.ones_like(out_a)
    d.encode_batch(S_a, T_a, a.cfg, v, a._offs, out_a)
    d.encode_serial(S_b, T_b, b.cfg, v, b._offs, out_b)
    assert np.array_equal(out_a, out_b) and out_a.any()
    idx = np.arange(0, a.batch_size, 3, dtype=np.int64)
    seeds = (idx * 7 + 1).astype(np.uint64)
    d.reset_batch(S_a, T_a, a.cfg, idx, seeds)
    d.reset_serial(S_b, T_b, b.cfg, idx, seeds)
    assert np.array_equal(_raw(a), _raw(b))


def test_random_play_matches_the_engine_stepped_by_hand():
    """``random_play`` = ``step_game`` with ``core.kernels.random_legal`` and a reset
    seeded by ``bench_u32`` whenever a game ends, here replayed through the Engine API."""
    eng = _played(players=4, batch=6, seed=50)
    twin = eng.clone()
    bench = np.arange(6, dtype=np.int64) * 977 + 5
    fin = eng.drivers.random_play(_k(eng.state), _k(eng.tables), eng.cfg, 150, bench.copy())
    rng = bench.copy()
    done = np.zeros(6, np.int64)
    for _ in range(150):
        acts = np.full(6, -1, np.int64)
        for g in range(6):
            if twin.terminated[g]:
                done[g] += 1
                twin.drivers.reset_serial(_k(twin.state), _k(twin.tables), twin.cfg, np.array([g]),
                                          np.array([K.bench_u32(rng, g)], np.uint64))
            acts[g] = K.random_legal(_k(twin.state)[g], rng, g)
        twin.step(acts)
    assert np.array_equal(fin, done) and fin.sum() > 0
    assert np.array_equal(_raw(eng), _raw(twin))


_CACHED = r"""
import numpy as np, ripmarket_env
from ripmarket_env.games.ripmarket import Engine, RulesConfig
eng = Engine(RulesConfig(num_players=3), batch_size=2)
d = eng.drivers
eng.reset([1, 2])
d.random_play(eng.state, eng.tables, eng.cfg, 5, np.arange(2, dtype=np.int64))
eng.step(np.full(2, -1, np.int64))
eng.observe()
for name in ("reset_serial", "random_play", "step_serial", "encode_serial"):
    st = getattr(d, name).stats
    print(name, sum(st.cache_hits.values()), sum(st.cache_misses.values()))
"""


def test_a_new_process_loads_the_drivers_from_the_cache():
    run = lambda: subprocess.run([sys.executable, "-c", _CACHED], capture_output=True, text=True,  # noqa: E731
                                 timeout=900, env={**os.environ, "NUMBA_DISABLE_JIT": "0"})
    run()  # the first run may compile (a cold cache)
    out = run()
    assert out.returncode == 0, out.stderr[-2000:]
    rows = [line.split() for line in out.stdout.strip().splitlines()]
    assert [r[0] for r in rows] == ["reset_serial", "random_play", "step_serial", "encode_serial"]
    for name, hits, misses in rows:
        assert int(hits) >= 1 and int(misses) == 0, f"{name} was compiled again instead of loaded"


def test_compile_drivers_refuses_kernels_it_cannot_call():
    eng = Engine(RulesConfig(num_players=2), batch_size=1)

    @njit
    def bits_as_float(r, c):
        return 1.5

    bad = compile_drivers(eng.state.dtype, eng.tables.dtype, K.reset_game, K.step_game, encode_obs, bits_as_float)
    with pytest.raises(TypeError, match="seat_bits must return int64"):
        bad.status_one(eng.state, eng.cfg, 0)
    plain = compile_drivers(eng.state.dtype, eng.tables.dtype, K.reset_game, K.step_game.py_func, encode_obs,
                            K.seat_bits)
    with pytest.raises(TypeError, match="step_game must be a numba.njit function"):
        plain.step_serial(eng.state, eng.tables, eng.cfg, np.zeros(1, np.int64))
    with pytest.raises(AttributeError, match="no batch driver named 'step_twice'"):
        eng.drivers.step_twice  # noqa: B018
    assert set(DRIVERS) >= {"step_serial", "learner_step_parallel", "random_play", "status_one"}


def test_a_wrong_argument_type_is_a_type_error():
    eng = Engine(RulesConfig(num_players=2), batch_size=2)
    eng.reset([1, 2])
    before = _raw(eng)
    with pytest.raises(TypeError):
        eng.drivers.step_serial(eng.state, eng.tables, eng.cfg, np.zeros(2, np.int32))
    other = np.zeros(2, dtype=[("done", np.bool_), ("x", np.int64)])
    with pytest.raises(TypeError):
        eng.drivers.step_serial(other, eng.tables, eng.cfg, np.zeros(2, np.int64))
    assert np.array_equal(_raw(eng), before)


_LEARNER = r"""
import hashlib, warnings
import numpy as np
from ripmarket_env.vector_env import LearnerBatch
from ripmarket_env.gym_env import RipMarketEnv
warnings.simplefilter("ignore", RuntimeWarning)  # uint64 wrap-around of the opponent streams in plain Python
h = hashlib.sha256()
for seat in (0, "random"):
    b = LearnerBatch(4, num_players=4, seed=7, learner_seat=seat)
    assert b.compiled_opponents
    h.update(b.reset().tobytes())
    rng = np.random.default_rng(1)
    for _ in range(60):
        a = np.array([rng.choice(np.flatnonzero(b.masks[g])) for g in range(4)])
        for x in b.step(a)[:3]:
            h.update(np.asarray(x).tobytes())
b = LearnerBatch(4, num_players=4, seed=7, compiled_opponents=False)  # Python opponents: gather_csr
b.sparse_opponents = True
h.update(b.reset().tobytes())
rng = np.random.default_rng(2)
for _ in range(20):
    a = np.array([rng.choice(np.flatnonzero(b.masks[g])) for g in range(4)])
    h.update(b.step(a)[0].tobytes())
    for x in b.opp_csr:
        h.update(np.asarray(x).tobytes())
env = RipMarketEnv(num_players=3)
o, info = env.reset(seed=5)
h.update(o.tobytes())
for _ in range(40):
    o, r, term, trunc, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
    h.update(o.tobytes()); h.update(np.float64(r).tobytes())
    if term:
        o, info = env.reset()
print(h.hexdigest())
"""


def test_plain_python_drivers_match_the_compiled_ones():
    """R-12.4: under NUMBA_DISABLE_JIT=1 the same driver functions (the learner step with
    random opponents and auto-reset, the Python opponents' gather_csr, the gym env's
    opponents) give the same trajectories."""
    outs = []
    for flag in ("1", "0"):
        out = subprocess.run([sys.executable, "-c", _LEARNER], capture_output=True, text=True, timeout=900,
                             env={**os.environ, "NUMBA_DISABLE_JIT": flag})
        assert out.returncode == 0, out.stderr[-2000:]
        outs.append(out.stdout.strip())
    assert outs[0] == outs[1] and len(outs[0]) == 64


def test_an_engine_copied_or_pickled_keeps_working_drivers():
    """The bundle holds this process's kernel addresses: a pickled engine gets the
    bundle of its state layout again (rebuilt, not the addresses), a deep copy shares it."""
    import copy
    import pickle

    eng = _played(players=3, batch=2, seed=9)
    twin = pickle.loads(pickle.dumps(eng))
    assert twin.drivers is eng.drivers
    deep = copy.deepcopy(eng)
    assert deep.drivers is eng.drivers
    for e in (twin, deep):
        e.step(np.array([e.legal_actions(g)[0] for g in range(2)]))
    eng.step(np.array([eng.legal_actions(g)[0] for g in range(2)]))
    assert all(np.array_equal(e.state[f], eng.state[f]) for e in (twin, deep) for f in eng.state.dtype.names)
    mine = compile_drivers(eng.state.dtype, eng.tables.dtype, K.reset_game, K.step_game, encode_obs, K.seat_bits)
    again = pickle.loads(pickle.dumps(mine))
    s = eng.clone()
    again.step_serial(_k(s.state), _k(s.tables), s.cfg, np.full(2, -1, np.int64))
    assert np.array_equal(_raw(s), _raw(eng))


def test_observe_into_a_wrong_buffer_is_a_clear_error():
    eng = _played(players=3, batch=2)
    for bad in (np.zeros((2, eng.obs_size)), np.zeros((2, eng.obs_size + 1), np.float32),
                np.zeros((eng.obs_size, 2), np.float32).T):
        with pytest.raises(ValueError, match="out must be a C-contiguous float32 array of shape"):
            eng.observe(out=bad)
    out = np.zeros((2, eng.obs_size), np.float32)
    assert eng.observe(out=out) is out and np.array_equal(out, eng.observe())


@settings(max_examples=300, deadline=None)
@given(mask=st.lists(st.booleans(), min_size=1, max_size=80), k=st.integers(-3, 85))
def test_nth_legal_is_the_kth_set_entry_of_the_mask(mask, k):
    """``core.kernels.nth_legal`` (the random-play drivers' action draw) is the ``k``-th
    legal action in action order, -1 when ``k`` is negative or not below the legal count,
    compiled and in plain Python."""
    from ripmarket_env.core.kernels import nth_legal

    m = np.array(mask, dtype=np.bool_)
    legal = np.flatnonzero(m)
    want = int(legal[k]) if 0 <= k < len(legal) else -1
    assert nth_legal(m, k) == want
    assert nth_legal.py_func(m, k) == want


def test_seat_after_is_the_remainder_of_the_sum_for_every_seat_and_table():
    """``core.kernels.seat_after(p, k, n)`` (the games' loops over the other seats) is
    ``(p + k) % n`` for every table size of the zoo (2-10 seats), seat ``p < n`` and
    ``0 <= k <= n``, compiled and in plain Python, with the kernels' integer types."""
    from ripmarket_env.core.kernels import seat_after

    for n in range(2, 11):
        for p in range(n):
            for k in range(n + 1):
                want = (p + k) % n
                assert seat_after(np.int8(p), k, np.int64(n)) == want
                assert seat_after(p, np.int64(k), n) == want
                assert seat_after.py_func(np.int8(p), k, np.int64(n)) == want


_ENTRIES = st.sampled_from([0.0, 0.0, 0.0, 0.0, -0.0, 1.0, -2.5, 3e-42, float("nan"), float("inf")])


@settings(max_examples=200, deadline=None)
@given(x=st.lists(_ENTRIES, max_size=300), shift=st.integers(-3, 5000), start=st.integers(0, 7))
def test_append_nonzeros_appends_each_nonzero_entry_in_order(x, shift, start):
    """``core.kernels.append_nonzeros`` (the CSR of ``gather_csr`` and of the sparse
    networks' inputs): from ``start`` on, every entry that compares unequal to zero (so
    NaN, infinities and denormals, not -0.0), in order, as ``(index + shift, value)``,
    compiled and in plain Python; the end is returned and nothing before ``start`` changes."""
    from ripmarket_env.core.kernels import append_nonzeros

    x = np.array(x, np.float32)
    keep = np.flatnonzero(x != 0.0)
    for f in (append_nonzeros, append_nonzeros.py_func):
        cols = np.full(start + len(x) + 1, -7, np.int64)
        vals = np.full(start + len(x) + 1, 9.0, np.float32)
        end = f(x, shift, cols, vals, start)
        assert end == start + len(keep)
        assert np.array_equal(cols[start:end], keep + shift)
        assert np.array_equal(vals[start:end].view(np.uint32), x[keep].view(np.uint32))
        assert (cols[:start] == -7).all() and (vals[:start] == 9.0).all()


@pytest.mark.parametrize("n", [0, 1, 511, 512, 513, 1024, 1127, 1537])
def test_clear_row_zeroes_every_entry_and_nothing_else(n):
    """``core.kernels.clear_row`` (the observation encoders' clearing, in pieces of 512
    entries above 512): every entry of the row +0.0, the entries around it untouched,
    compiled and in plain Python."""
    from ripmarket_env.core.kernels import clear_row

    for f in (clear_row, clear_row.py_func):
        buf = np.full(n + 2, np.nan, np.float32)
        buf[1:-1] = -np.arange(n, dtype=np.float32) - 1.0
        f(buf[1:-1])
        assert np.array_equal(buf[1:-1].view(np.uint32), np.zeros(n, np.uint32))  # +0.0, not -0.0
        assert np.isnan(buf[0]) and np.isnan(buf[-1])


@pytest.mark.parametrize("game", ["ripmarket", "black-market", "rune-market"])
def test_step_rows_steps_only_the_given_games(game):
    """``step_rows`` (an opponent round of the learner batch) and its threaded twin
    ``step_rows_parallel`` leave a batch byte for byte as ``step_serial`` with -1 for
    every game not in ``rows``."""
    from ripmarket_env.games import get

    spec = get(game)
    engines = [spec.make_engine(spec.make_rules(4), 30) for _ in range(3)]
    for e in engines:
        e.reset(list(range(30)))
    rng = np.random.default_rng(5)
    kb = spec.batch
    for _ in range(25):
        m = engines[0].legal_mask()
        live = np.flatnonzero(~engines[0].state["done"])
        rows = rng.permutation(live)[: rng.integers(0, len(live) + 1)].astype(np.int64)
        acts = (rng.random(m.shape) * m).argmax(1).astype(np.int64)
        full = np.full(30, -1, np.int64)
        full[rows] = acts[rows]
        a, b, t = engines
        kb.step_serial(_k(a.state), _k(a.tables), a.cfg, full)
        kb.step_rows(_k(b.state), _k(b.tables), b.cfg, rows, acts[rows])
        kb.step_rows_parallel(_k(t.state), _k(t.tables), t.cfg, rows, acts[rows])
        assert np.array_equal(_raw(a), _raw(b))
        assert np.array_equal(_raw(a), _raw(t))
