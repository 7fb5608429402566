"""Seed hashes shared by every game's batch drivers (compiled).

* Episode ``j`` of game ``i`` under a base seed is dealt with
  ``episode_seed_one(base, 0, i, j)`` (a splitmix64 hash, its top 63 bits); other salts
  give other streams of the same episode (the learner's seat, the random opponents).
* ``fold_seed_u64`` is numpy's ``SeedSequence`` hash of two entropy words and two output
  words, so it equals ``core.engine.seed_to_u64``: a vectorised ``Engine.reset`` fold
  for seeds below 2**64.
"""

from __future__ import annotations

import numpy as np
from numba import njit

_U = np.uint64
_M32 = _U(0xFFFFFFFF)
GOLDEN = _U(0x9E3779B97F4A7C15)


@njit(cache=True, nogil=True)
def splitmix64(x):
    x = x + GOLDEN
    x = (x ^ (x >> _U(30))) * _U(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> _U(27))) * _U(0x94D049BB133111EB)
    return x ^ (x >> _U(31))


@njit(cache=True, nogil=True)
def episode_key(base, salt, game, episode):
    """A 64-bit hash of (base seed, salt, game, episode)."""
    x = splitmix64(base ^ salt)
    x = splitmix64(x ^ _U(game))
    return splitmix64(x ^ _U(episode))


@njit(cache=True, nogil=True)
def episode_seed_one(base, salt, game, episode):
    """The 63-bit deal seed of episode ``episode`` of game ``game`` (uint64; fits an int64)."""
    return episode_key(base, salt, game, episode) >> _U(1)


@njit(cache=True, nogil=True)
def episode_seeds(base, salt, games, episodes, out):
    for i in range(games.shape[0]):
        out[i] = episode_seed_one(base, salt, games[i], episodes[i])


# numpy's SeedSequence hash (bit_generator.pyx) for up to two 32-bit entropy words (any
# seed below 2**64) and one uint64 output (two 32-bit output words, little-endian).
_INIT_A, _MULT_A, _INIT_B, _MULT_B = 0x43B0D7E5, 0x931E8875, 0x8B51F9DD, 0x58F38DED
_MIX_L, _MIX_R = _U(0xCA01F9DD), _U(0x4973F715)


def _hash_consts(n: int) -> list[int]:
    out, h = [_INIT_A], _INIT_A
    for _ in range(n):
        h = (h * _MULT_A) & 0xFFFFFFFF
        out.append(h)
    return out


_HC = np.array(_hash_consts(16), dtype=np.uint64)  # hashmix i xors with _HC[i], multiplies by _HC[i + 1]
_GEN0 = _U((_INIT_B * _MULT_B) & 0xFFFFFFFF)  # the output hash's constant for word 0
_GEN1 = _U((_INIT_B * _MULT_B * _MULT_B) & 0xFFFFFFFF)  # ... and for word 1


@njit(cache=True, nogil=True)
def _hashmix(v, i):
    v = v ^ _HC[i]
    v = (v * _HC[i + 1]) & _M32
    return v ^ (v >> _U(16))


@njit(cache=True, nogil=True)
def _mix(x, y):
    r = (_MIX_L * x - _MIX_R * y) & _M32
    return r ^ (r >> _U(16))


@njit(cache=True, nogil=True)
def fold_seed_u64(seed):
    """``core.seed_to_u64`` of one seed below 2**64 (uint64). A seed below 2**32 is one
    entropy word; the second pool word then hashes 0, exactly as for a second word of 0."""
    p0 = _hashmix(seed & _M32, 0)
    p1 = _hashmix(seed >> _U(32), 1)
    p2 = _hashmix(_U(0), 2)
    p3 = _hashmix(_U(0), 3)
    # every ordered pair (i, j), i != j, in order: pool[j] = mix(pool[j], hashmix(pool[i], k))
    p1 = _mix(p1, _hashmix(p0, 4))
    p2 = _mix(p2, _hashmix(p0, 5))
    p3 = _mix(p3, _hashmix(p0, 6))
    p0 = _mix(p0, _hashmix(p1, 7))
    p2 = _mix(p2, _hashmix(p1, 8))
    p3 = _mix(p3, _hashmix(p1, 9))
    p0 = _mix(p0, _hashmix(p2, 10))
    p1 = _mix(p1, _hashmix(p2, 11))
    p3 = _mix(p3, _hashmix(p2, 12))
    p0 = _mix(p0, _hashmix(p3, 13))
    p1 = _mix(p1, _hashmix(p3, 14))
    p2 = _mix(p2, _hashmix(p3, 15))
    lo = ((p0 ^ _U(_INIT_B)) * _GEN0) & _M32
    lo = lo ^ (lo >> _U(16))
    hi = ((p1 ^ _GEN0) * _GEN1) & _M32
    hi = hi ^ (hi >> _U(16))
    return lo | (hi << _U(32))


@njit(cache=True, nogil=True)
def fold_seeds_u64(seeds, out):
    for n in range(seeds.shape[0]):
        out[n] = fold_seed_u64(seeds[n])
