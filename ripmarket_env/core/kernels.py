"""Cross-game kernels: compiled helpers that read only a game row's public face
(``done``, ``actor``, ``phase``, ``mask``, ``n_legal``) and the event log fields
(``ev``, ``ev_n``, ``ev_lost``). numba compiles them once per game's state type."""

from __future__ import annotations

from numba import njit

JIT = dict(cache=True, nogil=True)


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


@njit(**JIT)
def nth_legal(m, k):
    """The ``k``-th legal action (0-based, in action order) of the mask ``m``; -1 if none."""
    for a in range(m.shape[0]):
        if m[a]:
            if k == 0:
                return a
            k -= 1
    return -1


@njit(**JIT)
def random_legal(r, bench_rng, i):
    """A uniformly random legal action of row ``r``, drawn from driver stream ``i``."""
    return nth_legal(r.mask, (bench_u32(bench_rng, i) * r.n_legal) >> 32)
