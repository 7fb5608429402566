"""Cross-game kernels: compiled helpers that read only a game row's public face
(``done``, ``actor``, ``phase``, ``mask``, ``n_legal``) and the event log fields
(``ev``, ``ev_n``, ``ev_lost``), the games' shared arithmetic (``seat_after``, ``div3``,
``ratio32``, ...) and the drivers' array helpers (``append_nonzeros``). numba compiles
them once per game's state type."""

from __future__ import annotations

import numpy as np
from numba import njit

try:  # plain-Python mode (NUMBA_DISABLE_JIT=1)
    from numba.core.config import DISABLE_JIT as _NO_JIT
except ImportError:  # pragma: no cover
    _NO_JIT = False

# _nrt=False: no reference counting of the array arguments and views (the kernels allocate
# nothing; their callers hold the arrays), about 10% of a step (docs/ARCHITECTURE.md, Speed).
JIT = dict(cache=True, nogil=True, _nrt=False)


@njit(**JIT)
def ix(i):
    """``i`` as an unsigned array index: ``a[ix(i)]`` is ``a[i]`` for ``0 <= i < len(a)``.

    numba reads a signed index as possibly negative and wraps it as Python does (adds the
    axis length when it is below zero): a compare and a select on every access, which LLVM
    removes only where it can prove the index non-negative (constants, most loop
    counters), not for an offset plus a value read from a row. An unsigned index skips the
    wrap; the observation encoders, which make hundreds of stores a row at computed
    offsets, spent about a fifth of their time on it (docs/ARCHITECTURE.md, Speed). Only
    for indices that are never negative: compiled code does not check bounds, and in
    plain Python (``NUMBA_DISABLE_JIT=1``) a negative ``i`` becomes a huge unsigned
    number that raises ``IndexError`` or ``OverflowError`` instead of wrapping, so the
    no-JIT twin catches one."""
    return np.uint64(i)


@njit(**JIT)
def seat_after(p, k, n):
    """``(p + k) % n`` for ``0 <= p < n`` and ``0 <= k <= n``: the seat ``k`` places after
    seat ``p`` at a table of ``n``, by a compare and a subtraction. ``%`` by a table size
    only known at run time is an integer division, tens of cycles, in the loops over the
    other seats of every legal mask (docs/ARCHITECTURE.md, Speed). Only where both bounds
    hold by construction (loop counters, seats): an action from outside keeps ``%``."""
    q = p + k
    return q - n if q >= n else q


@njit(cache=True)
def first_illegal(S, actions):
    """Index of the first game whose action is illegal, or -1.

    ``-1`` means "no action for this game" and is always accepted; so is any action for a
    finished game (ignored).
    """
    NA = S[0].mask.shape[0]
    for g in range(actions.shape[0]):
        a = actions[g]
        r = S[g]
        if a == -1 or r.done:
            continue
        if a < 0 or a >= NA or not r.mask[a]:
            return g
    return -1


@njit(**JIT)
def ev_push(r, kind, seat, a, b):
    """Append the event row (kind, seat, a, b) to the game's log (counted in ``ev_lost``
    when the log is full)."""
    n = r.ev_n
    if n < r.ev.shape[0]:
        r.ev[n, 0] = kind
        r.ev[n, 1] = seat
        r.ev[n, 2] = a
        r.ev[n, 3] = b
        r.ev_n = n + 1
    else:
        r.ev_lost += 1


@njit(**JIT)
def bench_u32(bench_rng, i):
    """The next 32-bit draw of stream ``i`` of a driver's own RNG (not a game's)."""
    x = (int(bench_rng[i]) + 0x9E3779B9) & 0xFFFFFFFF
    bench_rng[i] = x
    z = ((x ^ (x >> 16)) * 0x85EBCA6B) & 0xFFFFFFFF
    z = ((z ^ (z >> 13)) * 0xC2B2AE35) & 0xFFFFFFFF
    return z ^ (z >> 16)


_BYTES = np.uint64(0x0101010101010101)  # 1 in every byte
_HIGH_BITS = np.uint64(0x8080808080808080)  # the top bit of every byte


@njit(**JIT)
def byte_prefix(w):
    """Byte ``j`` of ``w`` (a uint64 of 0/1 bytes) replaced by the sum of bytes 0..j: three
    shifted adds, no carry crossing a byte (each sum is at most 8), no overflow."""
    w += w << np.uint64(8)
    w += w << np.uint64(16)
    return w + (w << np.uint64(32))


@njit(**JIT)
def nth_legal(m, k):
    """The ``k``-th legal action (0-based, in action order) of the mask ``m``; -1 if none.

    Eight entries at a time: the mask's bytes (0 or 1) are read as one 64-bit word, whose
    running byte sums (``byte_prefix``) give the word's count in the top byte; a word that
    holds the ``k``-th entry gives its place without a branch: the number of bytes whose
    running sum exceeds ``k`` (the top bits of ``(sum | 0x80) - (k + 1)`` per byte, counted
    the same way) is 8 minus the place. One branch is taken, once; the last entries that do
    not fill a word are scanned one by one, subtracting each from ``k`` (testing each entry
    of a random mask mispredicts: 70-80 ns for 50-69 actions; subtracting them, 17-24 ns;
    by words, 6-9 ns; docs/ARCHITECTURE.md, Speed)."""
    if k < 0:
        return -1
    b = m.view(np.uint8)
    n = b.shape[0]
    a = 0
    while a + 8 <= n:
        w = (np.uint64(b[a]) | (np.uint64(b[a + 1]) << np.uint64(8)) | (np.uint64(b[a + 2]) << np.uint64(16))
             | (np.uint64(b[a + 3]) << np.uint64(24)) | (np.uint64(b[a + 4]) << np.uint64(32))
             | (np.uint64(b[a + 5]) << np.uint64(40)) | (np.uint64(b[a + 6]) << np.uint64(48))
             | (np.uint64(b[a + 7]) << np.uint64(56)))
        run = byte_prefix(w)
        cnt = np.int64(run >> np.uint64(56))
        if k < cnt:
            above = (((run | _HIGH_BITS) - np.uint64(k + 1) * _BYTES) & _HIGH_BITS) >> np.uint64(7)
            return a + 8 - np.int64(byte_prefix(above) >> np.uint64(56))
        k -= cnt
        a += 8
    for i in range(a, n):
        k -= np.int64(b[i])
        if k < 0:
            return i
    return -1


@njit(**JIT)
def random_legal(r, bench_rng, i):
    """A uniformly random legal action of row ``r``, drawn from driver stream ``i``."""
    return nth_legal(r.mask, (bench_u32(bench_rng, i) * r.n_legal) >> 32)


# ---------------------------------------------------------------------------------------
# The game's own RNG: splitmix64 over the row's uint64 ``rng`` field (every game seeds it
# with its 64-bit game seed at reset). Compiled, the steps wrap on uint64; in plain Python
# (NUMBA_DISABLE_JIT=1) they run on Python ints masked to 64 bits: the same draws.
# ---------------------------------------------------------------------------------------
_RNG_INC = 0x9E3779B97F4A7C15
_RNG_M1 = 0xBF58476D1CE4E5B9
_RNG_M2 = 0x94D049BB133111EB
_M64 = 0xFFFFFFFFFFFFFFFF

if _NO_JIT:

    def rng_u32(r):
        x = (int(r.rng) + _RNG_INC) & _M64
        r.rng = x
        z = ((x ^ (x >> 30)) * _RNG_M1) & _M64
        z = ((z ^ (z >> 27)) * _RNG_M2) & _M64
        return (z ^ (z >> 31)) >> 32

else:
    _U64 = np.uint64

    @njit(**JIT)
    def rng_u32(r):
        x = r.rng + _U64(_RNG_INC)
        r.rng = x
        z = (x ^ (x >> _U64(30))) * _U64(_RNG_M1)
        z = (z ^ (z >> _U64(27))) * _U64(_RNG_M2)
        return np.int64((z ^ (z >> _U64(31))) >> _U64(32))


@njit(**JIT)
def rand_below(r, n):
    """A uniform integer in [0, n) (n below 2**31) from the game's RNG."""
    return (rng_u32(r) * np.int64(n)) >> 32


# ---------------------------------------------------------------------------------------
# Exact quotients without a division (observation encoders): ``x / 3.0``, ``x / 10.0`` and
# ``x / n`` of small integers, with the same float32 bits as the division rounded by the
# encoder's store into its float32 row. A float division costs several cycles of its unit;
# an encoder does dozens per row. ``x / 3.0`` and ``x / 10.0`` are a multiplication by the
# double nearest 1/3 and 1/10: its product can differ from the quotient in the last bit of
# the double, but never once rounded to float32, for every 32-bit integer ``x`` (checked
# exhaustively, tests/test_quotient_tables.py keeps a check over the counts' range); a
# multiplication, unlike a table read behind a range test, vectorizes over a row of
# counts. ``x / n`` is a read of a table of the very quotients. The results are float32:
# for storing into a float32 row only.
# ---------------------------------------------------------------------------------------
_I32 = 1 << 31


@njit(**JIT)
def clear_row(out):
    """``out[:] = 0`` in pieces of 512 entries (2 kB of float32), for an observation row
    longer than that. Each piece is a ``memset`` that glibc does with vector stores; one
    ``memset`` of a whole row above glibc's ``rep_stosb_threshold`` (2 kB by default:
    R.I.P. Market's 1,127 floats) goes to ``rep stosb``, which cleared that row more
    slowly (docs/ARCHITECTURE.md, Speed). A shorter row is one ``memset``."""
    n = out.shape[0]
    for a in range(0, n, 512):
        out[a:min(a + 512, n)] = 0


@njit(**JIT)
def div3(x):
    """``np.float32(x / 3.0)`` of an integer ``x``: ``x * (1 / 3)`` for 32-bit ``x`` (the
    same float32; for an int8 or int16 ``x`` the range test folds away), the division
    otherwise."""
    if x >= -_I32 and x < _I32:
        return np.float32(x * (1.0 / 3.0))
    return np.float32(x / 3.0)


@njit(**JIT)
def div10(x):
    """``np.float32(x / 10.0)`` of an integer ``x``: ``x * (1 / 10)`` for 32-bit ``x`` (the
    same float32), the division otherwise."""
    if x >= -_I32 and x < _I32:
        return np.float32(x * (1.0 / 10.0))
    return np.float32(x / 10.0)


# ``x / n``: 65 x 129 float32 (33 kB), a row per divisor ``n``, so an encoder's row touches
# a few cache lines of it.
RATIO_X, RATIO_N = 129, 65
RATIOS = np.array([[x / n if n else 0.0 for x in range(RATIO_X)] for n in range(RATIO_N)]).astype(np.float32)


@njit(**JIT)
def ratio32(x, n):
    """``np.float32(x / n)`` of integers ``x`` and ``n`` (a table read for 0 <= x <= 128
    and 0 < n <= 64; the division otherwise, with its error for ``n == 0``)."""
    if x >= 0 and x < RATIO_X and n > 0 and n < RATIO_N:
        return RATIOS[n, x]
    return np.float32(x / n)


if _NO_JIT:

    def _lowest_bit(m):
        return (int(m) & -int(m)).bit_length() - 1

else:
    from numba.cpython.unsafe.numbers import trailing_zeros as _trailing_zeros

    @njit(**JIT)
    def _lowest_bit(m):
        return np.int64(_trailing_zeros(m))


@njit(**JIT)
def append_nonzeros(x, shift, cols, vals, k):
    """Append the non-zero entries of the 1-D ``x`` as ``(j + shift, x[j])`` to
    ``cols``/``vals`` from ``k`` on; returns the new end. The caller leaves room for
    ``x.shape[0]`` entries from ``k``.

    Sixty-four entries at a time: a 64-bit word of "entry is non-zero" bits (the compares
    need no branch), then one store per set bit, lowest first (the count of trailing zero
    bits gives its place). An observation has about 80 non-zeros among 1,127 entries in
    runs of a few: a store of every entry kept where non-zero (no branch, but a dependent
    store per entry) took three times as long, a branch per entry longer still
    (docs/ARCHITECTURE.md, Speed)."""
    d = x.shape[0]
    full = d - d % 64
    one = np.uint64(1)
    for j in range(0, full, 64):
        m = np.uint64(0)
        for t in range(64):
            m |= np.uint64(x[j + t] != 0.0) << np.uint64(t)
        while m != 0:
            q = j + _lowest_bit(m)
            cols[k] = q + shift
            vals[k] = x[q]
            k += 1
            m &= m - one
    for q in range(full, d):  # the last d % 64 entries: each written, kept where non-zero
        cols[k] = q + shift
        vals[k] = x[q]
        k += x[q] != 0.0
    return k
