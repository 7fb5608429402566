"""``PolicyConfig``: the architecture of a trained agent's network, as stored in its
checkpoint's metadata and written in training configs (``policy:``). No torch here, so
configs can be read and checked without loading it."""

from __future__ import annotations

from dataclasses import dataclass, field, fields

POLICY_ARCHS = ("mlp", "seat", "sparse")
SPARSE_ACTIVATIONS = ("relu", "tanh")
MAX_LAYER = 8192  # width of any hidden layer
MAX_LAYERS = 16  # entries of net_arch


def short_repr(value, limit: int = 80) -> str:
    """``repr(value)`` cut to ``limit`` characters (a huge integer by its digit count), for
    error messages that must not echo a hostile file."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 256:
        return f"an integer of about {int(value.bit_length() * 0.30103) + 1:,} digits"
    try:
        r = repr(value)
    except ValueError:  # str() refuses integers of more than 4,300 digits
        return f"a {type(value).__name__} too large to show"
    return r if len(r) <= limit else r[: limit - 3] + "..."


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
    entries only; with ``net_arch`` above it, the network of "mlp" with
    ``[sparse_hidden, *net_arch]`` (the same function with ``sparse_activation: tanh``)."""
    sparse_shared: bool = False
    """arch="sparse": one first layer for actor and critic (cheaper, but it learned more
    slowly per step in our runs) instead of one each."""
    sparse_activation: str = "relu"
    """arch="sparse": the activation after the first layer, "relu" or "tanh". SB3's MLP
    ("mlp") uses tanh after every layer, so with "tanh" (and separate extractors) the
    sparse network computes exactly the MLP's function, and an "mlp" checkpoint can go on
    training as it (``init_from``)."""


def check_policy(pol: dict, error=ValueError, where: str = "policy.") -> "PolicyConfig":
    """A ``PolicyConfig`` from a ``policy:`` mapping, every key and value checked; ``error``
    (a ``ValueError`` subclass) names the key and what is allowed."""
    def bad(key, value, allowed):
        return error(f"bad value for {where + key!r}: {short_repr(value)}; allowed: {allowed}")

    if not isinstance(pol, dict):
        raise error(f"{where.rstrip('.')}: expected a mapping of keys to values, got {type(pol).__name__}")
    allowed = [f.name for f in fields(PolicyConfig)]
    for k in pol:
        if k not in allowed:
            raise error(f"unknown key '{where}{k if isinstance(k, str) else short_repr(k, 60)}'; "
                        f"allowed keys: {', '.join(allowed)}")
    if "arch" in pol and pol["arch"] not in POLICY_ARCHS:
        raise bad("arch", pol["arch"], " | ".join(POLICY_ARCHS))
    if "net_arch" in pol:
        v = pol["net_arch"]
        if not (isinstance(v, list) and len(v) <= MAX_LAYERS
                and all(isinstance(x, int) and not isinstance(x, bool) and 0 < x <= MAX_LAYER for x in v)):
            raise bad("net_arch", v if not isinstance(v, list) or len(v) <= MAX_LAYERS else f"{len(v)} layers",
                      f"a list of at most {MAX_LAYERS} integers in 1..{MAX_LAYER}, e.g. [256, 256]")
    for key in ("seat_hidden", "global_hidden", "sparse_hidden"):
        v = pol.get(key)
        if v is not None and not (isinstance(v, int) and not isinstance(v, bool) and 1 <= v <= MAX_LAYER):
            raise bad(key, v, f"an integer >= 1 and <= {MAX_LAYER}")
    if "sparse_shared" in pol and not isinstance(pol["sparse_shared"], bool):
        raise bad("sparse_shared", pol["sparse_shared"], "true or false")
    if "sparse_activation" in pol and pol["sparse_activation"] not in SPARSE_ACTIVATIONS:
        raise bad("sparse_activation", pol["sparse_activation"], " | ".join(SPARSE_ACTIVATIONS))
    return PolicyConfig(**pol)
