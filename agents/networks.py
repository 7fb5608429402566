"""The policy networks of the zoo's trained agents, shared by training and loading.

``PolicyConfig`` names an architecture; ``policy_kwargs(cfg)`` gives SB3's
``policy_kwargs`` for it (``"mlp"``, ``"seat"``: a shared per-seat encoder, ``"sparse"``:
the first layer computed on the observation's non-zeros). Checkpoint loading
(``agents.checkpoint``) rebuilds a policy from the config stored in its metadata;
training (``train.selfplay``) builds its learner from the same functions.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import torch
import torch.nn as nn
from gymnasium import spaces
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor

from agents.policy_config import PolicyConfig


# ----------------------------------------------------------------------------- networks
class SeatExtractor(BaseFeaturesExtractor):
    """Features: MLP(global pieces) ++ [shared seat encoder(seat block k) for k in 0..9].

    The seat blocks are relative to the viewer (block 0 = me), so concatenating the
    encodings in block order keeps who-is-where, while the encoder weights are shared."""

    def __init__(self, observation_space: spaces.Box, seat_start: int, seat_size: int, n_seats: int,
                 seat_hidden: int = 64, global_hidden: int = 128):
        super().__init__(observation_space, global_hidden + n_seats * seat_hidden)
        self.seat_start, self.seat_size, self.n_seats = seat_start, seat_size, n_seats
        self.seat = nn.Sequential(nn.Linear(seat_size, seat_hidden), nn.ReLU(),
                                  nn.Linear(seat_hidden, seat_hidden), nn.ReLU())
        self.glob = nn.Sequential(nn.Linear(seat_start, global_hidden), nn.ReLU())

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        g = self.glob(obs[:, : self.seat_start])
        s = obs[:, self.seat_start: self.seat_start + self.n_seats * self.seat_size]
        s = self.seat(s.reshape(-1, self.n_seats, self.seat_size)).flatten(1)
        return torch.cat([g, s], dim=1)

    def dense_layers(self) -> list[nn.Module]:
        """The same features as plain layers, for exports (``agents.export``, which hold
        Linear, ReLU and Tanh layers): Linear, ReLU, Linear, ReLU with block-diagonal
        weights. The first holds the global layer and the seat encoder's first layer once
        per seat block; the second the identity on the global part (already past its ReLU)
        and the seat encoder's second layer per block. The same numbers up to the order of
        float additions."""
        obs_size = int(self._observation_space.shape[0])
        first, second = self.seat[0], self.seat[2]
        gh, sh, n, k, start = self.glob[0].out_features, first.out_features, self.n_seats, self.seat_size, self.seat_start
        width = gh + n * sh
        l1, l2 = nn.Linear(obs_size, width), nn.Linear(width, width)
        with torch.no_grad():
            for layer in (l1, l2):
                layer.weight.zero_()
                layer.bias.zero_()
            l1.weight[:gh, :start] = self.glob[0].weight
            l1.bias[:gh] = self.glob[0].bias
            l2.weight[:gh, :gh] = torch.eye(gh)
            for j in range(n):
                rows, cols = slice(gh + j * sh, gh + (j + 1) * sh), slice(start + j * k, start + (j + 1) * k)
                l1.weight[rows, cols] = first.weight
                l1.bias[rows] = first.bias
                l2.weight[rows, rows] = second.weight
                l2.bias[rows] = second.bias
        return [l1, nn.ReLU(), l2, nn.ReLU()]


class SparseExtractor(BaseFeaturesExtractor):
    """Features: act(W x + b), an ``nn.Linear`` computed on the non-zero entries of x only
    (act: ReLU, or tanh with ``activation="tanh"``).

    An observation has about 70 non-zero entries out of 1,127 (one-hots and counts), so
    the layer is the sum of the weight columns of those entries scaled by their values,
    forward and backward (``_SparseMatmul``). With a separate extractor for actor and
    critic (the default) and ``net_arch`` above it, the network is SB3's MLP with
    ``[hidden, *net_arch]`` and the same initialisation (SB3's orthogonal init reaches the
    ``nn.Linear``), at a fraction of the first layer's cost; with ``activation="tanh"``
    (SB3's MLP puts tanh after every layer) it is also the same function."""

    def __init__(self, observation_space: spaces.Box, hidden: int = 256, activation: str = "relu"):
        super().__init__(observation_space, hidden)
        self.linear = nn.Linear(int(observation_space.shape[0]), hidden)
        self.activation = activation
        self._act = torch.tanh if activation == "tanh" else torch.relu

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        return self._act(_SparseMatmul.apply(obs, self.linear.weight) + self.linear.bias)

    def sparse_parts(self) -> tuple[nn.Linear, nn.Module]:
        """The first layer and the activation after it (``agents.policy.PolicyAgent``)."""
        return self.linear, nn.Tanh() if self.activation == "tanh" else nn.ReLU()


class _SparseMatmul(torch.autograd.Function):
    """``x @ w.T`` (an ``nn.Linear`` weight ``w``) for a sparse ``x`` (no gradient to ``x``),
    forward and backward over the non-zeros: forward with torch's ``embedding_bag``, the
    weight gradient with the compiled ``agents.sparse.csr_t_matmul`` (column blocks in
    Python threads, each the serial kernel: a numba thread pool next to torch's ran 3-4
    times slower; torch's own sparse products and ``embedding_bag``'s backward were slower
    too). Both cost the non-zeros times the width."""

    _last: tuple = (None, -1, None)  # (x, x's version, its CSR): actor and critic see one x

    @staticmethod
    def forward(ctx, x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        from agents.sparse import _columns, bag, csr

        last_x, last_version, last_csr = _SparseMatmul._last
        if x is last_x and x._version == last_version:
            cols, vals, offsets = last_csr
        elif x.dim() == 2 and x.shape[0] and x.stride(0) == 0:
            raise RuntimeError("the sparse layer got observations without values (a placeholder of shape "
                               f"{tuple(x.shape)}) and without their non-zeros")
        else:
            cols, vals, offsets = csr(x.detach().cpu().numpy())
            _SparseMatmul._last = (x, x._version, (cols, vals, offsets))
        wt = _columns(w)  # w.T, one row per input
        ctx.csr = (cols, vals, offsets)
        ctx.wt_shape = tuple(wt.shape)
        # forward on torch's threads (embedding_bag: 8.5 against 22 ms for 8,192 rows x 256)
        return bag(cols, vals, offsets, wt)

    @staticmethod
    def backward(ctx, grad: torch.Tensor):
        from agents.sparse import csr_t_matmul

        cols, vals, offsets = ctx.csr
        gwt = np.zeros(ctx.wt_shape, np.float32)
        csr_t_matmul(cols, vals, offsets, len(cols), grad.detach().contiguous().numpy().astype(np.float32, copy=False), gwt)
        return None, torch.from_numpy(gwt).t()


def policy_kwargs(p: PolicyConfig) -> dict[str, Any]:
    """SB3 ``policy_kwargs`` for a ``PolicyConfig``."""
    kw: dict[str, Any] = {"net_arch": list(p.net_arch)}
    if p.arch == "sparse":
        kw["features_extractor_class"] = SparseExtractor
        kw["features_extractor_kwargs"] = dict(hidden=p.sparse_hidden, activation=p.sparse_activation)
        kw["share_features_extractor"] = p.sparse_shared
    if p.arch == "seat":
        from ripmarket_env.games.ripmarket.cards.loader import default_cards
        from ripmarket_env.games.ripmarket.observation import layout
        from ripmarket_env.games.ripmarket.state import MAX_SEATS

        db = default_cards()
        lay = layout(db.n_living, db.n_shadow)
        kw["features_extractor_class"] = SeatExtractor
        kw["features_extractor_kwargs"] = dict(seat_start=lay.seat_start, seat_size=lay.seat_size,
                                               n_seats=MAX_SEATS, seat_hidden=p.seat_hidden,
                                               global_hidden=p.global_hidden)
    return kw


def mlp_as_sparse(src: PolicyConfig, dst: PolicyConfig, state: dict) -> dict | None:
    """The weights of an ``mlp`` policy (``state``, its ``state_dict``) as the ``sparse``
    policy that computes the same function, or None when ``dst`` is not that network.

    An MLP with ``net_arch [h, *rest]`` and a sparse policy with ``sparse_hidden h``,
    ``net_arch rest``, ``sparse_activation tanh`` and separate actor and critic extractors
    are one function: the
    sparse extractor's ``nn.Linear`` is the MLP's first layer (``SparseExtractor``). So a
    trained MLP can go on training as the sparse network (``init_from``), which is faster
    on the same weights."""
    if not (src.arch == "mlp" and dst.arch == "sparse" and not dst.sparse_shared and dst.sparse_activation == "tanh"
            and len(src.net_arch) >= 1
            and src.net_arch[0] == dst.sparse_hidden and list(src.net_arch[1:]) == list(dst.net_arch)):
        return None
    out: dict = {}
    for key, value in state.items():
        parts = key.split(".")
        if parts[0] == "mlp_extractor" and parts[1] in ("policy_net", "value_net"):
            layer = int(parts[2])
            if layer == 0:  # the first layer: the extractor of the actor (pi) or of the critic (vf)
                names = (["features_extractor", "pi_features_extractor"] if parts[1] == "policy_net"
                         else ["vf_features_extractor"])
                for name in names:
                    out[".".join([name, "linear", *parts[3:]])] = value
            else:  # the layers above it move down by one (Linear + activation: two module indices)
                out[".".join([*parts[:2], str(layer - 2), *parts[3:]])] = value
        else:
            out[key] = value
    return out


def widths(p: PolicyConfig) -> list[int]:
    """The hidden widths of a ``PolicyConfig``'s actor and critic, first layer first
    (``sparse``: ``sparse_hidden``, then ``net_arch``)."""
    return ([p.sparse_hidden] if p.arch == "sparse" else []) + list(p.net_arch)


def widened(src: PolicyConfig, dst: PolicyConfig, state: dict, fresh: dict) -> dict | None:
    """The weights of policy ``src`` (``state``) grown into the wider network ``dst`` so
    that it computes the same function, or None when ``dst`` is not such a network.

    ``dst`` must be ``src`` with every hidden layer as wide or wider and at least one wider
    (same ``arch`` of ``mlp`` or ``sparse``, same depth, activation and sharing).
    ``fresh`` is ``dst``'s own freshly initialised ``state_dict``: a new unit keeps its
    fresh incoming weights and bias, and every weight from a new unit into an old one (the
    next layer's new columns, up to the action and value heads) is zero, so no old unit
    nor output changes; the new units' outgoing weights then learn from the gradient like
    any other (Net2Net's function-preserving widening with a zero outgoing init). A
    trained network so goes on training with more room (``init_from``)."""
    same = dataclasses.replace(dst, net_arch=list(src.net_arch), sparse_hidden=src.sparse_hidden)
    ws, wd = widths(src), widths(dst)
    if not (src.arch in ("mlp", "sparse") and same == src and len(ws) == len(wd)
            and all(a <= b for a, b in zip(ws, wd)) and ws != wd):
        return None
    if set(state) != set(fresh):
        return None
    out: dict = {}
    for key, new in fresh.items():
        old = state[key]
        if old.dim() != new.dim() or any(a > b for a, b in zip(old.shape, new.shape)):
            return None
        if old.shape == new.shape:
            out[key] = old  # load_state_dict copies it
            continue
        grown = new.detach().clone()
        if old.dim() == 2:
            rows, cols = old.shape
            grown[:rows, cols:] = 0.0  # new inputs into old units: zero, so the old units are unchanged
            grown[:rows, :cols] = old
        else:
            grown[: old.shape[0]] = old
        out[key] = grown
    return out
