"""``PolicyConfig``: the architecture of a trained agent's network, as stored in its
checkpoint's metadata and written in training configs (``policy:``). No torch here, so
configs can be read and checked without loading it."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class PolicyConfig:
    arch: str = "mlp"
    """Policy network: "mlp" (SB3's MLP over the flat observation), "seat" (a per-seat
    encoder shared across the 10 seat blocks, pooled, plus an MLP over the global pieces)
    or "sparse" (the MLP with its first layer computed on the observation's non-zero
    entries: ``sparse_hidden``, then ``net_arch``)."""
    net_arch: list[int] = field(default_factory=lambda: [256, 256])
    """Hidden layer sizes of the policy and value heads (after the features extractor)."""
    seat_hidden: int = 64
    """arch="seat": width of the shared per-seat encoder (two layers)."""
    global_hidden: int = 128
    """arch="seat": width of the MLP over the global pieces."""
    sparse_hidden: int = 256
    """arch="sparse": width of the first layer, computed on the observation's non-zero
    entries only; with ``net_arch`` above it, the same network as "mlp" with
    ``[sparse_hidden, *net_arch]``."""
    sparse_shared: bool = False
    """arch="sparse": one first layer for actor and critic (cheaper, but it learned more
    slowly per step in our runs) instead of one each."""
