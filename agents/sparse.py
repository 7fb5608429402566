"""The first layer of a network on sparse observations, without the zeros.

An observation has about 70 non-zero entries out of 1,127 (one-hot pieces, counts of a
few cards), so ``x @ W.T`` mostly multiplies zeros. ``sparse_linear`` sums, per row, the
weight columns of the non-zero inputs scaled by their values (``csr``, then torch's
``embedding_bag``): the same result as the dense layer up to float rounding, at about a
sixteenth of the multiply-adds. The agents that act for whole batches of games
(distilled zoo, frozen policies) use it for their first layer (``sparse_sequential``);
the ``sparse`` policy architecture uses ``csr`` and the compiled ``csr_matmul`` /
``csr_t_matmul``, whose backward is far cheaper than ``embedding_bag``'s."""

from __future__ import annotations

import numpy as np
from numba import njit

_cache: dict[int, tuple[int, object]] = {}


def _columns(weight):
    """``weight.T`` contiguous (one row per input), cached until the weight changes."""
    key = id(weight)
    hit = _cache.get(key)
    if hit is not None and hit[0] == weight._version and hit[1].shape[0] == weight.shape[1]:
        return hit[1]
    cols = weight.detach().t().contiguous()
    _cache[key] = (weight._version, cols)
    return cols


@njit(cache=True, nogil=True)
def _nonzeros(x, cols, vals, offsets):
    """CSR of ``x`` into preallocated arrays; returns the number of non-zeros (-1 when
    ``cols`` is too small)."""
    k = 0
    cap = cols.shape[0]
    for i in range(x.shape[0]):
        offsets[i] = k
        for j in range(x.shape[1]):
            v = x[i, j]
            if v != 0.0:
                if k == cap:
                    return -1
                cols[k] = j
                vals[k] = v
                k += 1
    return k


@njit(cache=True, nogil=True, fastmath=True)
def _csr_product(cols, vals, offsets, nnz, a, out, transpose):
    """Over every row ``i``'s non-zeros ``(j, v)``: ``out[i] += v * a[j]`` (``X @ a``), or
    with ``transpose`` ``out[j] += v * a[i]`` (``X.T @ a``). Serial: run between torch's
    multi-threaded layers, a numba thread pool made training slower (82 against 60 us
    of update per learner step), the two pools contending."""
    n = offsets.shape[0]
    H = out.shape[1]
    for i in range(n):
        end = offsets[i + 1] if i + 1 < n else nnz
        for k in range(offsets[i], end):
            j = cols[k]
            v = vals[k]
            if transpose:
                for h in range(H):
                    out[j, h] += v * a[i, h]
            else:
                for h in range(H):
                    out[i, h] += v * a[j, h]


def csr_matmul(cols, vals, offsets, nnz, w, out) -> None:
    """``out += X @ w`` for ``X`` given as ``csr(X)`` (``nnz`` non-zeros)."""
    _csr_product(cols, vals, offsets, nnz, w, out, False)


def csr_t_matmul(cols, vals, offsets, nnz, g, out) -> None:
    """``out += X.T @ g`` for ``X`` given as ``csr(X)``: the weight gradient of ``X @ w``."""
    _csr_product(cols, vals, offsets, nnz, g, out, True)


def csr(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(cols, vals, offsets)`` of the non-zeros of a 2-D float32 array, row by row."""
    n = x.shape[0]
    offsets = np.zeros(n, np.int64)
    cap = max(16, n * 128)
    while True:
        cols, vals = np.empty(cap, np.int64), np.empty(cap, np.float32)
        k = _nonzeros(x, cols, vals, offsets)
        if k >= 0:
            return cols[:k], vals[:k], offsets
        cap = x.size


def sparse_linear(x: np.ndarray, linear, extra: np.ndarray | None = None):
    """``linear(x)`` for a 2-D float array ``x`` of few non-zeros, as a torch tensor.

    ``extra`` (optional, one int per row): the row also has input ``x.shape[1] + extra[i]``
    set to 1 (a one-hot appended after ``x``, e.g. a style index)."""
    import torch
    import torch.nn.functional as F

    x = np.ascontiguousarray(x, dtype=np.float32)
    if x.ndim != 2:
        raise ValueError(f"sparse_linear takes a 2-D batch, got shape {x.shape}")
    n, d = x.shape
    w = _columns(linear.weight)
    if w.shape[0] < d:
        raise ValueError(f"sparse_linear: {d} inputs for a layer of {w.shape[0]}")
    cols, vals, offsets = csr(x)
    # torch's embedding_bag (per-sample weights) runs on torch's threads: faster here than
    # the serial csr_matmul (67 against 89 us per learner step of a 6-player league)
    out = F.embedding_bag(torch.from_numpy(cols), w, torch.from_numpy(offsets), mode="sum",
                          per_sample_weights=torch.from_numpy(vals))
    if extra is not None:
        out = out + w[d + torch.as_tensor(np.asarray(extra, dtype=np.int64))]
    if linear.bias is not None:
        out = out + linear.bias.detach()
    return out


def sparse_sequential(x: np.ndarray, seq, extra: np.ndarray | None = None):
    """``seq(x)`` for an ``nn.Sequential`` whose first module is an ``nn.Linear``, with that
    layer computed by ``sparse_linear`` (``extra`` as there)."""
    h = sparse_linear(x, seq[0], extra=extra)
    for layer in list(seq)[1:]:
        h = layer(h)
    return h
