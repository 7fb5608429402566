"""The lookahead's inner loop compiled: the other seats of a batch of sampled games play
on with a distilled-zoo network until one seat's next decision, in one numba call
(njit through the game's ``BatchKernels.bind``).

:class:`~agents.ripmarket.lookahead.LookaheadAgent` plays, for every sampled game, the
other seats' turns up to its own next decision. Written as a Python loop, each of those
turns (8 to 20 at 6 players, up to 40 at 10) costs an engine step, an observation, a
masked forward pass of the imitation network and their Python and torch calls: about
0.5 ms a turn, most of it call overhead. :func:`play_ahead` runs the same turns in one
compiled call over the game's own kernels (``BatchKernels.bind``): per turn it encodes
the deciding seat's view of each game where the model must choose, computes the
imitation's first layer on the view's non-zeros (``agents.sparse``'s idea), the other
layers as one matrix product per layer (numpy's ``dot``, BLAS), and plays the masked
argmax. Forced moves (one legal action) are played without the network. It makes the
decisions of the Python loop: the same games, the same turns; only the order of the
first layer's float sums differs, which could swap two actions whose scores tie to
float32 rounding (tests/test_lookahead.py compares the two).
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import os
from pathlib import Path

import numpy as np

from agents.sparse import FrozenMLP, accumulate_nonzeros
from ripmarket_env.core.drivers import ENCODE, STEP, encode_kernel, step_kernel


def play_ahead(fns, S, TB, c, offs, styles, w1, b1, flat, shapes, n_styles, stop_seat, max_steps, max_turns):
    """Play every unfinished row of ``S`` whose actor is not ``stop_seat`` on, one turn
    of all rows at a time, with the network ``(w1, b1, flat, shapes)`` choosing for the
    actor's style ``styles[row, seat]``; stop when no row has such a decision or after
    ``max_steps`` turns. Returns the turns played, or -1 (rows part-played) when a
    ``max_turns``-th turn (>= 0) would be needed.

    The network: ``w1`` the first layer's weight transposed (observation + ``n_styles``
    one-hot style inputs, hidden), ``b1`` its bias; then for each further layer ``L`` its
    weight transposed (``shapes[2L]`` x ``shapes[2L + 1]``) and bias, packed one after the
    other in ``flat``; ReLU between layers, none after the last."""
    step_game = step_kernel(fns, STEP, S, TB, c)
    n = S.shape[0]
    d = w1.shape[0] - n_styles  # the observation's size
    x = np.zeros((1, d), np.float32)  # the deciding seat's view, one game at a time
    encode_obs = encode_kernel(fns, ENCODE, S, TB, c, offs, x)
    H = w1.shape[1]
    rows = np.empty(n, np.int64)
    nz = np.empty(d, np.int64)
    acts = np.empty(n, np.int64)
    layers = shapes.shape[0] // 2
    for turn in range(max_steps):
        m = 0
        live = False
        for g in range(n):
            r = S[g]
            acts[g] = -1
            if r.done or r.actor == stop_seat:
                continue
            live = True
            if r.n_legal == 1:  # forced: no network needed
                for a in range(r.mask.shape[0]):
                    if r.mask[a]:
                        acts[g] = a
                        break
            else:
                rows[m] = g
                m += 1
        if not live:
            return turn
        if max_turns >= 0 and turn >= max_turns:
            return -1
        if m > 0:
            h = np.empty((m, H), np.float32)
            for i in range(m):
                r = S[rows[i]]
                seat = np.int64(r.actor)
                encode_obs(r, TB[0], c, seat, offs, x[0])
                hi = h[i]
                ws = w1[d + styles[rows[i], seat]]  # the style's one-hot input
                for k in range(H):
                    hi[k] = b1[k] + ws[k]
                accumulate_nonzeros(x[0], d, w1, hi, nz)
            at = 0
            for L in range(layers):  # ReLU, then the next layer for all rows at once (BLAS)
                fan_in, fan_out = shapes[2 * L], shapes[2 * L + 1]
                w = flat[at: at + fan_in * fan_out].reshape((fan_in, fan_out))
                at += fan_in * fan_out
                b = flat[at: at + fan_out]
                at += fan_out
                h = np.dot(np.maximum(h, np.float32(0.0)), w)
                for i in range(m):
                    for k in range(fan_out):
                        h[i, k] += b[k]
            for i in range(m):
                r = S[rows[i]]
                best = -1
                for a in range(r.mask.shape[0]):
                    if r.mask[a] and (best < 0 or h[i, a] > h[i, best]):
                        best = a
                acts[rows[i]] = best
        for g in range(n):  # every row, as the engine's step: -1 only clears its step rewards
            step_game(S[g], TB[0], c, acts[g])
    return max_steps


@functools.cache
def _argtypes():
    """:func:`play_ahead`'s argument types after the game's ``S, TB, c``."""
    from numba import types

    A = lambda t, nd=1: types.Array(t, nd, "C")  # noqa: E731
    i64, f32 = types.int64, types.float32
    return A(i64), A(i64, 2), A(f32, 2), A(f32), A(f32), A(i64), i64, i64, i64, i64


@functools.cache
def _blas_threads():
    """``(get, set)`` of the thread count of the BLAS that numba's ``np.dot`` calls (scipy's
    OpenBLAS, ``scipy.linalg.cython_blas``), or None where it cannot be found or set."""
    try:
        import scipy
    except ImportError:
        return None
    for lib in sorted((Path(scipy.__file__).parent.parent / "scipy.libs").glob("libscipy_openblas*.so*")):
        try:
            dll = ctypes.CDLL(str(lib))
            return dll.scipy_openblas_get_num_threads, dll.scipy_openblas_set_num_threads
        except (OSError, AttributeError):
            continue
    return None


@contextlib.contextmanager
def one_blas_thread():
    """Run the block with the BLAS of :func:`play_ahead`'s products on one thread, then put
    back its thread count. Its products are small (a few dozen rows by 256) and a decision
    makes dozens of them: on two threads each paid the pool's wake-up, and a 6-player
    decision took 16-17 ms at the 95th percentile instead of 5 (an AMD EPYC, 2 cores). A
    user's ``OPENBLAS_NUM_THREADS`` is left to rule."""
    fns = None if "OPENBLAS_NUM_THREADS" in os.environ else _blas_threads()
    if fns is None:
        yield
        return
    get, set_ = fns
    n = get()
    set_(1)
    try:
        yield
    finally:
        set_(n)


class CompiledImitations:
    """A distilled zoo's network (``agents.distilled``: Linear layers with ReLU between
    them) as the arrays :func:`play_ahead` takes, read through
    :class:`~agents.sparse.FrozenMLP`; :meth:`play` runs it on an engine's rows."""

    def __init__(self, net, n_styles: int):
        mlp = FrozenMLP(net[0], list(net)[1:])
        kinds = ["Linear" if isinstance(op, tuple) else op for op in mlp.ops]
        if not kinds or kinds != ["ReLU", "Linear"] * (len(kinds) // 2):
            raise ValueError("the compiled play-ahead takes a network of Linear layers with ReLU between them")
        self.w1, self.b1 = mlp.w1, mlp.b1
        layers = [op for op in mlp.ops if isinstance(op, tuple)]  # (weight transposed, bias)
        self.flat = np.concatenate([np.concatenate([w.ravel(), b]) for w, b in layers])
        self.shapes = np.asarray([size for w, _ in layers for size in w.shape], np.int64)
        self.n_styles = int(n_styles)
        if self.w1.shape[0] <= self.n_styles:
            raise ValueError(f"the first layer takes {self.w1.shape[0]} inputs: too few for an observation "
                             f"and {n_styles} styles")

    def play(self, sim, styles: np.ndarray, stop_seat: int = 0, max_steps: int = 200,
             max_turns: int | None = None) -> int:
        """Play ``sim``'s games on to ``stop_seat``'s next decisions (:func:`play_ahead`);
        -1 if that needs more than ``max_turns`` turns."""
        from ripmarket_env.core.engine import kernel_view

        fn = sim.drivers.bind(play_ahead, *_argtypes())
        with one_blas_thread():
            return int(fn(kernel_view(sim.state), kernel_view(sim.tables), sim.cfg, sim._offs,
                          np.ascontiguousarray(styles, dtype=np.int64), self.w1, self.b1, self.flat, self.shapes,
                          self.n_styles, int(stop_seat), int(max_steps), -1 if max_turns is None else int(max_turns)))


__all__ = ["CompiledImitations", "play_ahead"]
