"""Torch-only exports of trained agents: a TorchScript file that any trainer (RLlib,
Tianshou, TorchRL, plain torch) calls as an opponent with torch alone.

    >>> import torch
    >>> policy = torch.jit.load("ppo-6p.ts")          # no ripmarket, SB3 or pickle needed
    >>> logits = policy(obs, mask)                    # (B, obs_size) float32, (B, num_actions) 0/1
    >>> action = logits.argmax(-1)                    # illegal actions are -inf

``export_policy(agent, path)`` writes one for a ``PolicyAgent`` (an SB3 checkpoint): the
actor's network as dense torch layers (the sparse first layer is the same ``nn.Linear``
applied densely, so the logits are the agent's up to float rounding) and the masking.
"""

from __future__ import annotations

from pathlib import Path

import torch
import torch.nn as nn


class MaskedLogits(nn.Module):
    """``body(obs)`` with the logits of illegal actions (``mask == 0``) set to -inf."""

    def __init__(self, body: nn.Module):
        super().__init__()
        self.body = body

    def forward(self, obs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        z = self.body(obs)
        return z.masked_fill(mask == 0, float("-inf"))


class _Actor(nn.Module):
    def __init__(self, policy):
        super().__init__()
        self.features = policy.pi_features_extractor
        self.net = policy.mlp_extractor.policy_net
        self.head = policy.action_net

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        return self.head(self.net(self.features(obs)))


def actor_module(agent) -> nn.Module:
    """The agent's masked actor as plain torch layers."""
    parts = agent.sparse_parts()
    if parts:
        first, rest, _ = parts
        body = nn.Sequential(first, rest)
    else:
        body = _Actor(agent.policy)
    return MaskedLogits(body).eval()


def export_policy(agent, path: str | Path, obs_size: int, num_actions: int) -> Path:
    """Write ``agent``'s actor as TorchScript to ``path`` (``torch.jit.load`` reads it)."""
    path = Path(path)
    module = actor_module(agent)
    example = (torch.zeros(2, obs_size), torch.ones(2, num_actions, dtype=torch.int8))
    with torch.no_grad():
        traced = torch.jit.trace(module, example, check_trace=False)
    torch.jit.save(traced, str(path))
    return path
