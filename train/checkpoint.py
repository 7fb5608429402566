"""Resuming training from a checkpoint without unpickling anything (``load_model``).

Reading checkpoints (metadata checks, the policy network) is ``agents.checkpoint``'s;
this module rebuilds the whole ``MaskablePPO`` to go on training it.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from agents.checkpoint import (
    META_NAME,
    OPTIMIZER_NAME,
    WEIGHTS_NAME,
    CheckpointError,
    _open,
    _policy_config,
    _read_member,
    _torch_load,
    read_metadata,
)


def load_model(path: str | Path, env=None, config=None):
    """``(model, metadata)``: the ``MaskablePPO`` of a checkpoint, ready to go on training
    (``model.learn(..., reset_num_timesteps=False)``), without unpickling anything: the
    safe replacement of ``MaskablePPO.load(path)``.

    The model is rebuilt from ``config`` (a ``TrainConfig``; default: the checkpoint's own
    training config) on ``env`` (default: the league env that config trains on), then
    given the checkpoint's policy weights, its optimizer state (absent from exported
    checkpoints, see ``export_policy``: the optimizer then starts fresh) and its step
    count. ``config.policy`` must describe the checkpoint's network. SB3's ``data``
    member (cloudpickled objects) is never read.
    """
    from train.config import ConfigError, config_from_dict
    from train.selfplay import build_model

    path = Path(path)
    meta = read_metadata(path, check=True)
    pcfg = _policy_config(meta, path)
    if config is None:
        try:
            config = config_from_dict(meta["config"])
        except ConfigError as e:
            raise CheckpointError(f"{path}: {META_NAME} config: {e}") from None
    elif dataclasses.asdict(config.policy) != dataclasses.asdict(pcfg):
        raise CheckpointError(f"{path}: the checkpoint's network (policy {dataclasses.asdict(pcfg)}) is not the one "
                              f"the config describes (policy {dataclasses.asdict(config.policy)}); resume with the "
                              "checkpoint's policy section")
    with _open(path) as z:
        raw = _read_member(z, WEIGHTS_NAME, path)
        raw_opt = _read_member(z, OPTIMIZER_NAME, path, required=False)
    state = _torch_load(raw, "policy weights", path)
    opt_state = _torch_load(raw_opt, "optimizer state", path) if raw_opt is not None else None
    if env is None:
        from train.selfplay import League, make_league_vec_env

        env = make_league_vec_env(config, League(config, seed=config.seed), config.seed)
    model = build_model(config, env)
    try:
        model.policy.load_state_dict(state)
        if opt_state is not None:
            model.policy.optimizer.load_state_dict(opt_state)
    except Exception as e:
        msg = str(e).splitlines()[0][:300] if str(e) else type(e).__name__
        raise CheckpointError(f"{path}: the checkpoint does not fit the network of its config ({msg})") from None
    model.num_timesteps = int(meta.get("training_steps", 0))
    return model, meta
