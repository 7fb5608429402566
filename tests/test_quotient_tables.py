"""The encoders' quotients without a division (core.kernels.div3, div10, ratio32) give the
very float32 an encoder's store of the division gives, in and out of the tables' range, compiled and in
plain Python; the unsigned index ``ix`` reads and writes what the signed one does, and in
plain Python refuses a negative index instead of wrapping it; and the engine digest script
is deterministic."""

from __future__ import annotations

import numpy as np
import pytest
from numba import njit

from ripmarket_env.core.kernels import div3, div10, ix, ratio32


@njit
def _store_all(xs, ns, out_tab, out_div):
    for i in range(xs.shape[0]):
        out_tab[i] = ratio32(xs[i], ns[i])
        out_div[i] = xs[i] / ns[i]  # the plain formula, rounded by the float32 store


def _grid():
    xs, ns = np.meshgrid(np.arange(-5, 300), np.arange(1, 130))
    return xs.ravel().astype(np.int64), ns.ravel().astype(np.int64)


def test_ratio32_is_the_stored_quotient_bit_for_bit():
    xs, ns = _grid()
    tab = np.zeros(xs.shape[0], np.float32)
    div = np.zeros(xs.shape[0], np.float32)
    _store_all(xs, ns, tab, div)
    assert tab.view(np.uint32).tolist() == div.view(np.uint32).tolist()
    # int8 and int16 state fields, as the encoders pass them
    for dt in (np.int8, np.int16):
        small = np.arange(-5, 100, dtype=dt)
        for n in (1, 3, 7, 64, 65):
            got = np.array([ratio32(x, np.int64(n)) for x in small], np.float32)
            want = (small.astype(np.float64) / n).astype(np.float32)
            assert got.view(np.uint32).tolist() == want.view(np.uint32).tolist()


@njit
def _div_all(xs, out3, out10, want3, want10):
    for i in range(xs.shape[0]):
        out3[i] = div3(xs[i])
        out10[i] = div10(xs[i])
        want3[i] = xs[i] / 3.0  # the plain formulas, rounded by the float32 store
        want10[i] = xs[i] / 10.0


def test_div3_div10_are_the_stored_quotients():
    """``div3``/``div10`` multiply by the double nearest 1/3 and 1/10 for 32-bit integers;
    rounded to float32 that is the quotient, bit for bit: every int16 value, the edges of
    the 32-bit range and a sample of it, one past it (the division), compiled, in plain
    Python, and for int8/int16 arguments as the encoders pass them."""
    rng = np.random.default_rng(5)
    edge = [-(1 << 31) - 1, -(1 << 31), (1 << 31) - 1, 1 << 31, (1 << 40) + 7]
    xs = np.concatenate([np.arange(-(1 << 15), 1 << 15), np.array(edge),
                         rng.integers(-(1 << 31), 1 << 31, 200_000)]).astype(np.int64)
    got3, got10, want3, want10 = (np.zeros(xs.shape[0], np.float32) for _ in range(4))
    _div_all(xs, got3, got10, want3, want10)
    assert np.array_equal(got3.view(np.uint32), want3.view(np.uint32))
    assert np.array_equal(got10.view(np.uint32), want10.view(np.uint32))
    assert np.array_equal(want3.view(np.uint32), (xs / 3.0).astype(np.float32).view(np.uint32))
    sel = np.r_[0:400, (1 << 16):(1 << 16) + len(edge), (1 << 16) + 5:(1 << 16) + 400]
    for x in xs[sel]:
        assert np.float32(div3.py_func(int(x))).view(np.uint32) == np.float32(x / 3.0).view(np.uint32)
        assert np.float32(div10.py_func(int(x))).view(np.uint32) == np.float32(x / 10.0).view(np.uint32)
    for dt in (np.int8, np.int16):
        small = np.arange(np.iinfo(dt).min, np.iinfo(dt).max + 1, 97, dtype=dt)
        assert [div3(x) for x in small] == [np.float32(int(x) / 3.0) for x in small]
        assert [div10(x) for x in small] == [np.float32(int(x) / 10.0) for x in small]


@njit
def _copy_through_ix(src, idx, dst_signed, dst_unsigned, two_d):
    for k in range(idx.shape[0]):
        i = idx[k]
        dst_signed[i] = src[i] + two_d[i % 3, i % 5]
        dst_unsigned[ix(i)] = src[ix(i)] + two_d[ix(i % 3), ix(i % 5)]


def test_ix_indexes_as_the_signed_index_does():
    """The encoders' stores through ``ix`` land where the signed index lands, compiled, for
    int8/int16/int64 indices as the rows hold them; in plain Python a negative index raises
    (the no-JIT twin would catch an encoder that relied on wrap-around)."""
    rng = np.random.default_rng(3)
    src = rng.random(300).astype(np.float32)
    two_d = rng.random((3, 5)).astype(np.float32)
    for dt in (np.int8, np.int16, np.int64):
        idx = rng.permutation(min(300, np.iinfo(dt).max))[:120].astype(dt)
        a = np.zeros(300, np.float32)
        b = np.full(300, -1.0, np.float32)
        b[~np.isin(np.arange(300), idx)] = 0.0
        _copy_through_ix(src, idx, a, b, two_d)
        assert a.view(np.uint32).tolist() == b.view(np.uint32).tolist()
    out = np.zeros(4, np.float32)
    out[ix.py_func(3)] = 1.0
    assert out.tolist() == [0.0, 0.0, 0.0, 1.0]
    with pytest.raises((IndexError, OverflowError)):
        out[ix.py_func(np.int64(-1))] = 2.0
    with pytest.raises((IndexError, OverflowError)):
        out[ix.py_func(-1)] = 2.0
    assert out.tolist() == [0.0, 0.0, 0.0, 1.0]


def test_ratio32_by_zero_raises_like_the_division():
    with pytest.raises(ZeroDivisionError):
        ratio32(np.int64(3), np.int64(0))


def test_ratio32_plain_python_matches():
    xs, ns = _grid()
    sel = slice(None, None, 97)
    got = np.array([ratio32.py_func(int(x), int(n)) for x, n in zip(xs[sel], ns[sel])], np.float32)
    want = (xs[sel] / ns[sel]).astype(np.float32)
    assert got.view(np.uint32).tolist() == want.view(np.uint32).tolist()


def test_engine_digest_is_deterministic_and_sees_the_play():
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "benchmarks" / "engine_digest.py"
    spec = importlib.util.spec_from_file_location("engine_digest", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    a = mod.digest("rune-market", 2, games=8, steps=6)
    assert a == mod.digest("rune-market", 2, games=8, steps=6)
    assert len(a) == 64
    assert a != mod.digest("rune-market", 2, games=8, steps=7)
