"""The first layer of a network on sparse observations, without the zeros.

An observation has about 70 non-zero entries out of 1,127 (one-hot pieces, counts of a
few cards), so ``x @ W.T`` mostly multiplies zeros. ``sparse_linear`` sums, per row, the
weight columns of the non-zero inputs scaled by their values (``csr``, then torch's
``embedding_bag``): the same result as the dense layer up to float rounding, at about a
sixteenth of the multiply-adds. The agents that act for whole batches of games
(distilled zoo, frozen policies) use it for their first layer, and a league round runs
all of its network opponents in one such pass (``fused_act``);
the ``sparse`` policy architecture uses ``embedding_bag`` forward and the compiled
``csr_t_matmul`` backward, far cheaper than ``embedding_bag``'s own."""

from __future__ import annotations

import weakref

import numpy as np
from numba import njit

from ripmarket_env.core.kernels import append_nonzeros

# Caches keyed by ``id()`` hold a weak reference to what they were built from and check it
# on every hit: once an object is freed, Python may give its id to a new one (a new
# network's weight of another shape, a new league's agents).
_cache: dict[int, tuple] = {}


def _same(refs, objs) -> bool:
    """Whether the weak references ``refs`` still point at exactly ``objs``."""
    return len(refs) == len(objs) and all(r() is o for r, o in zip(refs, objs))


def _columns(weight):
    """``weight.T`` contiguous (one row per input), cached until the weight changes."""
    key = id(weight)
    hit = _cache.get(key)
    if hit is not None and hit[0]() is weight and hit[1] == weight._version:
        return hit[2]
    cols = weight.detach().t().contiguous()
    _cache[key] = (weakref.ref(weight, lambda _, k=key: _cache.pop(k, None)), weight._version, cols)
    return cols


@njit(cache=True, nogil=True, fastmath=True)
def _csr_t_product(cols, vals, offsets, nnz, a, out):
    """Over every row ``i``'s non-zeros ``(j, v)``: ``out[j] += v * a[i]`` (``X.T @ a``).
    Serial; ``csr_t_matmul`` runs it on column blocks in threads of its own."""
    n = offsets.shape[0]
    H = out.shape[1]
    for i in range(n):
        end = offsets[i + 1] if i + 1 < n else nnz
        for k in range(offsets[i], end):
            j = cols[k]
            v = vals[k]
            for h in range(H):
                out[j, h] += v * a[i, h]


_PARALLEL_WORK = 1 << 22
"""Non-zeros times columns from which ``csr_t_matmul`` splits its product over threads."""
_pool = None  # (its number of workers, the ThreadPoolExecutor)


def _threads() -> int:
    import torch

    return max(1, min(torch.get_num_threads(), 8))


def csr_t_matmul(cols, vals, offsets, nnz, g, out) -> None:
    """``out += X.T @ g`` for ``X`` given as ``csr(X)``: the weight gradient of ``X @ w``.

    A large product is split by columns of ``g`` (and ``out``) into as many blocks as
    torch has threads, each a contiguous copy summed by the compiled kernel in its own
    Python thread (the kernel releases the GIL): every entry of ``out`` is the same sum in
    the same order as the serial product, so the result is bit for bit the same. Run
    between torch's layers, whose OpenMP workers are idle then; a numba thread pool of
    its own ran 3-4 times slower, the two pools contending."""
    global _pool
    H = out.shape[1]
    k = min(_threads(), H // 32)
    if k < 2 or int(nnz) * H < _PARALLEL_WORK:
        _csr_t_product(cols, vals, offsets, nnz, g, out)
        return
    if _pool is None or _pool[0] < k:
        from concurrent.futures import ThreadPoolExecutor

        _pool = (k, ThreadPoolExecutor(max_workers=k, thread_name_prefix="csr_t_matmul"))
    edges = np.linspace(0, H, k + 1).astype(np.int64)
    spans = list(zip(edges, edges[1:]))
    blocks = [(np.ascontiguousarray(g[:, a:b]), np.ascontiguousarray(out[:, a:b])) for a, b in spans]
    for f in [_pool[1].submit(_csr_t_product, cols, vals, offsets, nnz, ga, oa) for ga, oa in blocks]:
        f.result()
    for (a, b), (_, oa) in zip(spans, blocks):
        out[:, a:b] = oa


def csr(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(cols, vals, offsets)`` of the non-zeros of a 2-D float32 array, row by row."""
    return csr_rows(x, np.arange(x.shape[0]))


def bag(cols: np.ndarray, vals: np.ndarray, offsets: np.ndarray, table):
    """Per CSR row, the sum of ``table``'s rows at its columns scaled by its values
    (``X @ table``), with torch's ``embedding_bag`` on torch's threads."""
    import torch
    import torch.nn.functional as F

    return F.embedding_bag(torch.from_numpy(cols), table, torch.from_numpy(offsets), mode="sum",
                           per_sample_weights=torch.from_numpy(vals))


def sparse_linear(x: np.ndarray, linear, extra: np.ndarray | None = None):
    """``linear(x)`` for a 2-D float array ``x`` of few non-zeros, as a torch tensor.

    ``extra`` (optional, one int per row): the row also has input ``x.shape[1] + extra[i]``
    set to 1 (a one-hot appended after ``x``, e.g. a style index)."""
    import torch

    x = np.ascontiguousarray(x, dtype=np.float32)
    if x.ndim != 2:
        raise ValueError(f"sparse_linear takes a 2-D batch, got shape {x.shape}")
    n, d = x.shape
    w = _columns(linear.weight)
    if w.shape[0] < d:
        raise ValueError(f"sparse_linear: {d} inputs for a layer of {w.shape[0]}")
    out = bag(*csr(x), w)
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


@njit(cache=True, nogil=True)
def accumulate_nonzeros(x, size, w, out, nz):
    """``out += x[:size] @ w`` over the non-zeros of the 1-D ``x`` only (``w``: one row
    per input, ``nz``: scratch of at least ``size``). The non-zeros' columns are listed
    first, without a branch, so that the sum over a weight row vectorizes."""
    nnz = 0
    for j in range(size):
        nz[nnz] = j
        nnz += x[j] != 0.0
    fan_out = w.shape[1]
    for t in range(nnz):
        v = x[nz[t]]
        wj = w[nz[t]]
        for k in range(fan_out):
            out[k] += v * wj[k]


@njit(cache=True, nogil=True)
def _first_layer(x, w, b, out):
    nz = np.empty(x.shape[1], np.int64)
    for i in range(x.shape[0]):
        oi = out[i]
        for k in range(b.shape[0]):
            oi[k] = b[k]
        accumulate_nonzeros(x[i], x.shape[1], w, oi, nz)


def _modules(seq):
    for m in seq:
        if hasattr(m, "__iter__") and not hasattr(m, "weight"):  # a nested Sequential
            yield from _modules(m)
        else:
            yield m


class FrozenMLP:
    """``rest(first(x))`` (``first`` an ``nn.Linear``, ``rest`` Linear, ReLU and Tanh
    modules, as ``PolicyAgent.sparse_parts``/``value_parts`` give them) as numpy arrays
    copied once: the first layer on each row's non-zeros (compiled), the others as numpy
    products. For a network that no longer trains and decides a few rows at a time, where
    torch's per-call costs (tens of microseconds a module) outweigh the arithmetic. Equal
    to the torch network up to float rounding."""

    def __init__(self, first, rest):
        import torch.nn as nn

        def arr(t):
            return np.ascontiguousarray(t.detach().cpu().numpy(), dtype=np.float32)

        if not isinstance(first, nn.Linear) or first.bias is None:
            raise ValueError("FrozenMLP's first layer must be an nn.Linear with a bias")
        self.w1, self.b1 = arr(first.weight.T), arr(first.bias)
        self.ops: list = []
        for m in _modules(rest):
            if isinstance(m, nn.Linear) and m.bias is not None:
                self.ops.append((arr(m.weight.T), arr(m.bias)))
            elif isinstance(m, (nn.ReLU, nn.Tanh)):
                self.ops.append(type(m).__name__)
            else:
                raise ValueError(f"FrozenMLP takes Linear, ReLU and Tanh layers, not {type(m).__name__}")

    def __call__(self, x: np.ndarray) -> np.ndarray:
        x = np.ascontiguousarray(x, dtype=np.float32)
        if x.ndim != 2 or x.shape[1] > self.w1.shape[0]:
            raise ValueError(f"FrozenMLP takes a 2-D batch of at most {self.w1.shape[0]} inputs, got {x.shape}")
        h = np.empty((x.shape[0], self.b1.shape[0]), np.float32)
        _first_layer(x, self.w1, self.b1, h)
        for op in self.ops:
            if op == "ReLU":
                np.maximum(h, 0.0, out=h)
            elif op == "Tanh":
                np.tanh(h, out=h)
            else:
                h = h @ op[0]
                h += op[1]
        return h


@njit(cache=True, nogil=True)
def _nonzeros_rows(x, rows, shift, extra, cols, vals, offsets):
    """CSR of ``x[rows]`` (in that order, without copying the rows) into preallocated
    arrays; returns the number of entries (-1 when ``cols`` is too small). Row ``i``'s
    column indices are shifted by ``shift[i]`` and, where ``extra[i] >= 0``, followed by
    the entry ``(extra[i], 1)``."""
    k = 0
    cap = cols.shape[0]
    d = x.shape[1]
    for i in range(rows.shape[0]):
        offsets[i] = k
        r = rows[i]
        s = shift[i]
        if k + d <= cap:  # room for a whole row
            k = append_nonzeros(x[r], s, cols, vals, k)
        else:
            for j in range(d):
                v = x[r, j]
                if v != 0.0:
                    if k == cap:
                        return -1
                    cols[k] = j + s
                    vals[k] = v
                    k += 1
        if extra[i] >= 0:
            if k == cap:
                return -1
            cols[k] = extra[i]
            vals[k] = 1.0
            k += 1
    return k


def csr_rows(x: np.ndarray, rows: np.ndarray, shift: np.ndarray | None = None,
             extra: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``csr(x[rows])`` without the copy of the rows; ``shift`` (per row) is added to the
    row's column indices and ``extra`` (per row, -1 for none) appends one more column set
    to 1 (a bias or a one-hot input stored as a weight row)."""
    n = len(rows)
    shift = np.zeros(n, np.int64) if shift is None else shift
    extra = np.full(n, -1, np.int64) if extra is None else extra
    offsets = np.zeros(n, np.int64)
    cap = max(16, n * 128)
    while True:
        cols, vals = np.empty(cap, np.int64), np.empty(cap, np.float32)
        k = _nonzeros_rows(x, rows, shift, extra, cols, vals, offsets)
        if k >= 0:
            return cols[:k], vals[:k], offsets
        cap = n * (x.shape[1] + 1) + 16


@njit(cache=True, nogil=True)
def _select_rows(cols, vals, starts, rows, shift, extra, out_cols, out_vals, out_offsets):
    """Rows ``rows`` of the CSR ``(cols, vals, starts)`` (in that order), each row's
    columns shifted by ``shift[i]`` and followed by ``(extra[i], 1)`` where ``extra[i] >= 0``
    (as ``_nonzeros_rows`` on the dense rows); returns the number of entries, or -1 when
    ``rows`` or ``starts`` do not fit the arrays (nothing is read or written out of bounds)."""
    k = 0
    n, nnz, cap = starts.shape[0], cols.shape[0], out_cols.shape[0]
    for i in range(rows.shape[0]):
        out_offsets[i] = k
        r = rows[i]
        if r < 0 or r >= n:
            return -1
        end = starts[r + 1] if r + 1 < n else nnz
        if starts[r] < 0 or end > nnz or k + max(end - starts[r], 0) + 1 > cap:
            return -1
        for q in range(starts[r], end):
            out_cols[k] = cols[q] + shift[i]
            out_vals[k] = vals[q]
            k += 1
        if extra[i] >= 0:
            out_cols[k] = extra[i]
            out_vals[k] = 1.0
            k += 1
    return k


def select_rows(csr: tuple, rows: np.ndarray, shift: np.ndarray,
                extra: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``csr_rows`` for rows already in CSR form (``(cols, vals, starts)`` of every row)."""
    cols, vals, starts = csr
    n = len(rows)
    out_cols, out_vals = np.empty(len(cols) + n, np.int64), np.empty(len(cols) + n, np.float32)
    offsets = np.zeros(n, np.int64)
    k = _select_rows(cols, vals, starts, np.asarray(rows, np.int64), shift, extra, out_cols, out_vals, offsets)
    if k < 0:
        raise ValueError(f"select_rows: a CSR of {len(starts)} rows and {len(cols)} entries does not hold rows "
                         f"{int(np.min(rows))}..{int(np.max(rows))} of the observations")
    return out_cols[:k], out_vals[:k], offsets


_tables: dict[tuple, tuple] = {}


def _table(firsts: list) -> tuple:
    """The first layers' ``weight.T`` stacked (one block of rows per layer), then their
    biases (one row each); the row where each block starts; cached until a weight changes."""
    import torch

    key = tuple((id(f.weight), f.weight._version, None if f.bias is None else f.bias._version) for f in firsts)
    hit = _tables.get(key)
    if hit is None or not _same(hit[2], [f.weight for f in firsts]):
        blocks = [_columns(f.weight) for f in firsts]
        base = np.cumsum([0] + [b.shape[0] for b in blocks[:-1]]).astype(np.int64)
        blocks += [f.bias.detach()[None] if f.bias is not None else torch.zeros(1, f.weight.shape[0])
                   for f in firsts]
        _tables.clear()  # one league at a time: drop tables of replaced weights
        hit = _tables[key] = (torch.cat(blocks), base, [weakref.ref(f.weight) for f in firsts])
    return hit[0], hit[1]


_plans: dict[tuple, tuple] = {}


def _plan(agents) -> tuple:
    """Per agent: its network group (-1: not fusable) and style input (-1: none); the
    groups' first layers and remaining layers (each ``(rest, _layers(rest))``). Cached on
    the list's agents and networks."""
    parts = [getattr(a, "sparse_parts", lambda: None)() for a in agents]
    key = tuple((id(a), id(p[0]) if p else 0) for a, p in zip(agents, parts))
    hit = _plans.get(key)
    if hit is not None and _same(hit[4], list(agents)) and _same(hit[5], [p[0] for p in parts if p]):
        return hit[:4]
    firsts: list = []
    rests: list = []
    group = np.full(len(agents), -1, np.int64)
    style = np.full(len(agents), -1, np.int64)
    widths = [p[0].weight.shape[0] for p in parts if p]
    width = max(set(widths), key=widths.count) if widths else 0  # the most agents' first-layer width
    for i, p in enumerate(parts):
        if not p or p[0].weight.shape[0] != width:
            continue  # not a network, or another width: decided on its own
        first, rest, extra = p
        for g, f in enumerate(firsts):
            if f is first:
                group[i] = g
                break
        else:
            group[i] = len(firsts)
            firsts.append(first)
            rests.append((rest, _layers(rest)))
        style[i] = -1 if extra is None else extra
    if len(_plans) > 64:
        _plans.clear()
    _plans[key] = (group, style, firsts, rests, [weakref.ref(a) for a in agents],
                   [weakref.ref(p[0]) for p in parts if p])
    return group, style, firsts, rests


def flat_layers(module) -> list:
    """A network as its Linear/ReLU/Tanh layers in order (Sequential containers and
    SB3's flatten extractor opened, an extractor with ``dense_layers`` as those); ValueError
    for any other layer. The exported bundles
    (``agents.export``) and ``fused_act``'s in-place layers read networks this way."""
    import torch.nn as nn

    if isinstance(module, nn.Sequential):
        return [layer for child in module for layer in flat_layers(child)]
    if isinstance(module, (nn.Flatten, nn.Identity)) or type(module).__name__ == "FlattenExtractor":
        return []
    if isinstance(module, (nn.Linear, nn.ReLU, nn.Tanh)):
        return [module]
    if hasattr(module, "dense_layers"):  # an extractor that can state itself as plain layers (arch: seat)
        return module.dense_layers()
    raise ValueError(f"cannot export a network with a {type(module).__name__} layer: "
                     "exports hold Linear, ReLU and Tanh layers")


def _layers(rest) -> list | None:
    """``flat_layers(rest)``, or None when ``rest`` holds any other layer."""
    try:
        return flat_layers(rest)
    except ValueError:
        return None


def _rest_in_place(rest, h, layers):
    """``rest(h)`` with the activations applied in place on ``h`` (a buffer of
    ``fused_act``'s own) and each ``Linear`` as the ``addmm`` that ``F.linear`` calls: the
    same numbers without a new tensor per activation. ``layers``: ``_layers(rest)``
    (cached by ``_plan``); None calls ``rest`` as it is."""
    import torch

    if layers is None:
        return rest(h)
    for m in layers:
        if isinstance(m, torch.nn.ReLU):
            h.relu_()
        elif isinstance(m, torch.nn.Tanh):
            h.tanh_()
        elif m.bias is not None:
            h = torch.addmm(m.bias, h, m.weight.t())
        else:
            h = h @ m.weight.t()
    return h


def fused_act(agents, who: np.ndarray, observations: np.ndarray, action_masks: np.ndarray,
              out: np.ndarray, csr: tuple | None = None) -> np.ndarray:
    """Actions of every row ``i`` whose agent ``agents[who[i]]`` is a network with a
    ``sparse_parts()`` (frozen policies, distilled styles), all in one pass: one CSR of
    the rows, one ``embedding_bag`` over the first layers stacked (each row reads its own
    network's block, plus its style's one-hot input), then each network's remaining layers
    on its contiguous block of rows. The same logits as each agent's ``act_batch`` up to
    float rounding, and the same samples (each sampling agent draws Gumbel noise from its
    own generator for its rows in the same order). Writes ``out`` for those rows; returns
    the mask of rows it decided. Networks whose first layer has another width than most
    agents' are left to their own ``act_batch``. ``csr``: the observations' non-zeros as
    ``(cols, vals, starts)`` when the caller has them (the vector env's ``opp_csr``),
    which spares the scan of the dense rows.

    A league round has a few to a few thousand rows spread over up to a handful of
    networks; most rounds are small, so the per-call costs, paid once per round instead
    of once per network, are what this saves."""
    import torch

    who = np.asarray(who, dtype=np.int64)
    group, style, firsts, rests = _plan(agents)
    handled = group[who] >= 0
    handled[who < 0] = False
    rows = np.flatnonzero(handled)
    if rows.size == 0:
        return handled
    d = observations.shape[1]
    if any(f.weight.shape[1] < d for f in firsts):
        raise ValueError(f"fused_act: observations of {d} entries for a first layer of fewer inputs")
    gid = group[who[rows]]
    if len(firsts) > 1:
        perm = np.argsort(gid, kind="stable")
        rows, gid = rows[perm], gid[perm]
    agent_of = who[rows]
    table, base = _table(firsts)
    st = style[agent_of]
    # each row: its network's block of the table, its style input, and (separately) its bias row
    extra = np.where(st >= 0, base[gid] + d + st, -1)
    if csr is not None:
        if len(csr[2]) != len(observations):
            raise ValueError(f"fused_act: csr holds {len(csr[2])} rows for {len(observations)} observations")
        cols, vals, offsets = select_rows(csr, rows, base[gid], extra)
    else:
        cols, vals, offsets = csr_rows(np.ascontiguousarray(observations, dtype=np.float32), rows, base[gid], extra)
    with torch.no_grad():
        h = bag(cols, vals, offsets, table)
        nb = len(table) - len(firsts)  # the first bias row
        if len(firsts) == 1:
            h += table[nb]
            rest, layers = rests[0]
            z = _rest_in_place(rest, h, layers)
        else:
            bounds = np.searchsorted(gid, np.arange(len(firsts) + 1))
            zs = []
            for g in range(len(firsts)):
                if bounds[g + 1] > bounds[g]:
                    hg = h[bounds[g]:bounds[g + 1]]
                    hg += table[nb + g]
                    zs.append(_rest_in_place(rests[g][0], hg, rests[g][1]))
            z = torch.cat(zs)
        m = torch.from_numpy(np.asarray(action_masks, dtype=bool)[rows])
        z.masked_fill_(~m, -np.inf)
        act = z.argmax(dim=1).numpy()
    for a in np.unique(agent_of):
        agent = agents[a]
        if not getattr(agent, "deterministic", True):  # sample: Gumbel noise from the agent's own stream
            sel = np.flatnonzero(agent_of == a)
            za = z[torch.from_numpy(sel)].numpy().astype(np.float64)
            act[sel] = (za + agent.rng.gumbel(size=za.shape)).argmax(axis=1)
    act[~m.numpy().any(axis=1)] = -1
    out[rows] = act
    return handled
