"""The learner's RLlib module for ``backend: rllib`` (``train.rllib_backend``).

``LeaguePPOModule`` is RLlib's default PPO module (``DefaultPPOTorchRLModule``: separate
actor and critic MLP encoders, a linear policy head and a linear value head, built by
RLlib's catalog from ``model_config``) on an observation that carries its legal-action
mask: one float32 row, the game's observation (``obs_size`` entries) followed by the
0/1 mask of the ``num_actions`` actions. Illegal logits are masked as RLlib's
``ActionMaskingTorchRLModule`` masks them (``log(mask)`` clamped at ``FLOAT_MIN``), so the
network, its weights' names and the distribution it samples from are that module's.

Why one row rather than the action-masking module's ``{"observations", "action_mask"}``
dict: RLlib's env runner, connectors and episodes handle an observation per game and per
step through ``dm-tree`` (unbatching the vector env's observations, batching them for the
module, the episodes' buffers, the learner's batch); a dict doubles that work and runs the
generic nested path, a plain array the short one.

Sampling (``forward_exploration``, every step of an env runner) is one short torch
computation for the runner's whole batch of games: the actor's masked logits (not the
critic, which only the learner needs), actions drawn from the categorical distribution of
those logits (``torch.multinomial`` on their softmax, as ``torch.distributions.Categorical``
samples) and their log-probabilities, so RLlib's ``GetActions`` connector has nothing left
to do; the train/eval mode switches of RLlib's generic path are left out (linear layers and
tanh: no layer behaves differently). ``forward_inference`` is the masked argmax; the
training forward pass and the values are RLlib's, on the observation part of the row.

Importing this module imports Ray: only the rllib backend does."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from gymnasium import spaces
from ray.rllib.algorithms.ppo.torch.default_ppo_torch_rl_module import DefaultPPOTorchRLModule
from ray.rllib.connectors.connector_v2 import ConnectorV2
from ray.rllib.core.columns import Columns
from ray.rllib.core.models.base import ACTOR, CRITIC, ENCODER_OUT
from ray.rllib.utils.torch_utils import FLOAT_MIN


class LeaguePPOModule(DefaultPPOTorchRLModule):
    """RLlib's PPO module on rows of observation and mask (module docstring)."""

    def __init__(self, *, observation_space: spaces.Box | None = None, action_space=None, **kwargs):
        if not isinstance(observation_space, spaces.Box) or not isinstance(action_space, spaces.Discrete) or (
                len(observation_space.shape) != 1 or observation_space.shape[0] <= action_space.n):
            raise ValueError(f"LeaguePPOModule needs a Box of rows (the observation, then the mask of the "
                             f"Discrete actions); got {observation_space} and {action_space}")
        self.obs_size = observation_space.shape[0] - int(action_space.n)
        self.observation_space_with_mask = observation_space
        obs_only = spaces.Box(observation_space.low[:self.obs_size], observation_space.high[:self.obs_size],
                              dtype=np.float32)
        super().__init__(observation_space=obs_only, action_space=action_space, **kwargs)

    def setup(self):
        super().setup()
        self.observation_space = self.observation_space_with_mask

    def _split(self, batch: dict[str, Any]):
        rows = batch[Columns.OBS]
        return rows[..., :self.obs_size], rows[..., self.obs_size:]

    @staticmethod
    def _mask(logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return logits + torch.clamp(torch.log(mask), min=FLOAT_MIN)

    def _masked_logits(self, batch: dict[str, Any]) -> torch.Tensor:
        obs, mask = self._split(batch)
        return self._mask(self.pi.net.mlp(self.encoder.actor_encoder.net.mlp(obs)), mask)

    def forward_exploration(self, batch: dict[str, Any], **kwargs) -> dict[str, Any]:
        with torch.no_grad():
            logits = self._masked_logits(batch)
            logp = torch.log_softmax(logits, dim=-1)
            actions = torch.multinomial(logp.exp(), 1).squeeze(-1)
            return {Columns.ACTION_DIST_INPUTS: logits, Columns.ACTIONS: actions,
                    Columns.ACTION_LOGP: logp.gather(-1, actions[:, None]).squeeze(-1)}

    def forward_inference(self, batch: dict[str, Any], **kwargs) -> dict[str, Any]:
        with torch.no_grad():
            logits = self._masked_logits(batch)
            return {Columns.ACTION_DIST_INPUTS: logits, Columns.ACTIONS: logits.argmax(-1)}

    def _forward_train(self, batch: dict[str, Any], **kwargs) -> dict[str, Any]:
        obs, mask = self._split(batch)
        enc = self.encoder({**batch, Columns.OBS: obs})[ENCODER_OUT]
        return {Columns.EMBEDDINGS: enc[CRITIC], Columns.ACTION_DIST_INPUTS: self._mask(self.pi(enc[ACTOR]), mask)}

    def compute_values(self, batch: dict[str, Any], embeddings=None):
        if embeddings is None:
            obs, _ = self._split(batch)
            embeddings = self.encoder.critic_encoder({**batch, Columns.OBS: obs})[ENCODER_OUT]
        return self.vf(embeddings).squeeze(-1)


class RowsToModule(ConnectorV2):
    """The env runner's env-to-module connector for ``LeaguePPOModule``: the last row of
    every game's episode, stacked into one tensor. It is RLlib's default pipeline for a
    stateless single-agent module on a Box observation (``AddObservationsFromEpisodesToBatch``,
    ``BatchIndividualItems``, ``NumpyToTensor``), without the per-item nested-structure
    handling and the pieces that do nothing here (time rank, states)."""

    def __call__(self, *, rl_module, batch, episodes, explore=None, shared_data=None, **kwargs):
        batch[Columns.OBS] = torch.from_numpy(np.stack([ep.get_observations(-1) for ep in episodes]))
        return batch


class ModuleToRows(ConnectorV2):
    """The env runner's module-to-env connector for ``LeaguePPOModule``: the module already
    sampled the actions (with their log-probabilities), so what is left of RLlib's default
    pipeline is ``TensorToNumpy``: every column of the batch, one entry per game, as numpy
    (the actions as the vector env's batch of actions)."""

    def __call__(self, *, rl_module, batch, episodes, explore=None, shared_data=None, **kwargs):
        if Columns.ACTIONS not in batch:  # pragma: no cover - both forward passes sample
            raise ValueError("LeaguePPOModule's forward pass gives the actions")
        return {k: (v.numpy() if isinstance(v, torch.Tensor) else v) for k, v in batch.items()}


def env_to_module(env=None, spaces=None, device=None) -> ConnectorV2:
    """``AlgorithmConfig.env_runners(env_to_module_connector=...)``: ``RowsToModule``."""
    return RowsToModule()


def module_to_env(env=None, spaces=None) -> ConnectorV2:
    """``AlgorithmConfig.env_runners(module_to_env_connector=...)``: ``ModuleToRows``."""
    return ModuleToRows()
