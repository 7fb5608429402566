"""Checkpoints: an SB3 zip with a ``ripmarket.json`` metadata member inside.

The metadata records what the policy was trained against: package (rules) version, card
digest (``CardDB.digest``), observation size and a digest of the observation layout
(``engine.observation.pieces`` names, sizes and scopes), action count, player counts,
the training config and step count. ``read_metadata`` / ``load_policy`` check the
checkpoint against the current code and raise ``CheckpointError`` saying which part
differs; a missing, corrupt or truncated file raises ``CheckpointError`` too (never a
torch traceback). SB3's own loader ignores the extra member, so
``MaskablePPO.load(path)`` still works for resuming.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import zipfile
from pathlib import Path
from typing import Any

FORMAT = "ripmarket-checkpoint/1"
META_NAME = "ripmarket.json"


#: The game the zoo's trained agents play today; checkpoints written before the metadata
#: named a game are R.I.P. Market's.
GAME = "ripmarket"


def checkpoint_game(meta: dict) -> str:
    """The game id of a checkpoint's metadata (``ripmarket`` for checkpoints that predate it)."""
    return meta.get("game", GAME)


class CheckpointError(ValueError):
    """A checkpoint that cannot be loaded (missing, corrupt, or built for other rules/layout)."""


# ----------------------------------------------------------------------------- facts
def _current_facts() -> dict[str, Any]:
    from ripmarket_env.core import __version__
    from ripmarket_env.games.ripmarket.cards.loader import default_cards
    from ripmarket_env.games.ripmarket.actions import ActionTable
    from ripmarket_env.games.ripmarket.observation import layout

    db = default_cards()
    lay = layout(db.n_living, db.n_shadow)
    return {
        "game": GAME,
        "package_version": __version__,
        "card_digest": db.digest,
        "obs_size": int(lay.size),
        "layout": layout_description(lay),
        "layout_digest": layout_digest(lay),
        "num_actions": int(ActionTable(db.n_living, db.n_shadow).size),
    }


def layout_description(lay) -> list[list]:
    return [[p.name, int(p.size), p.scope] for p in lay.pieces] + [
        ["seat_start", int(lay.seat_start), "meta"], ["seat_size", int(lay.seat_size), "meta"],
    ]


def layout_digest(lay) -> str:
    return hashlib.sha256(json.dumps(layout_description(lay)).encode()).hexdigest()[:16]


def make_metadata(config: dict, num_players: list[int], steps: int, extra: dict | None = None) -> dict:
    meta = {"format": FORMAT, **_current_facts(), "num_players": list(num_players),
            "training_steps": int(steps), "config": config}
    if extra:
        meta.update(extra)
    return meta


# ----------------------------------------------------------------------------- save
def save_checkpoint(model, path: str | Path, metadata: dict) -> Path:
    """Write ``model`` (SB3) to ``path`` (.zip) with the metadata inside, atomically."""
    path = Path(path)
    if path.suffix != ".zip":
        path = path.with_suffix(".zip")
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp.zip")
    model.save(tmp)
    with zipfile.ZipFile(tmp, "a", compression=zipfile.ZIP_DEFLATED) as z:
        z.writestr(META_NAME, json.dumps(metadata, indent=1, sort_keys=True))
    os.replace(tmp, path)
    return path


# ----------------------------------------------------------------------------- load
def _open(path: Path) -> zipfile.ZipFile:
    if not path.is_file():
        raise CheckpointError(f"checkpoint not found: {path}")
    try:
        z = zipfile.ZipFile(path)
        bad = z.testzip()
    except (zipfile.BadZipFile, OSError, EOFError, ValueError) as e:
        raise CheckpointError(f"{path}: not a readable checkpoint (corrupt or truncated zip: {e})") from None
    except Exception as e:  # zlib.error and friends from a damaged member
        raise CheckpointError(f"{path}: not a readable checkpoint (damaged data: {e})") from None
    if bad is not None:
        raise CheckpointError(f"{path}: corrupt checkpoint (member {bad!r} fails its CRC check)")
    return z


def read_metadata(path: str | Path, check: bool = True) -> dict:
    """The checkpoint's metadata; with ``check`` it must match the current rules and layout."""
    path = Path(path)
    with _open(path) as z:
        if META_NAME not in z.namelist():
            raise CheckpointError(f"{path}: no {META_NAME} inside; not a ripmarket checkpoint")
        try:
            meta = json.loads(z.read(META_NAME))
        except (ValueError, UnicodeDecodeError) as e:
            raise CheckpointError(f"{path}: {META_NAME} is not valid JSON ({e})") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise CheckpointError(f"{path}: unknown checkpoint format {meta.get('format') if isinstance(meta, dict) else meta!r}"
                              f" (expected {FORMAT})")
    if check:
        check_compatible(meta, str(path))
    return meta


def check_compatible(meta: dict, where: str = "checkpoint") -> None:
    """Raise ``CheckpointError`` naming the part of ``meta`` that differs from the current code."""
    now = _current_facts()
    if checkpoint_game(meta) != now["game"]:
        raise CheckpointError(
            f"{where}: a checkpoint of game {checkpoint_game(meta)!r}; it cannot play {now['game']!r}")
    if meta.get("card_digest") != now["card_digest"]:
        raise CheckpointError(
            f"{where}: card database differs: the checkpoint was trained on cards with digest "
            f"{str(meta.get('card_digest'))[:12]}, the current cards have {now['card_digest'][:12]}")
    if meta.get("layout_digest") != now["layout_digest"] or meta.get("obs_size") != now["obs_size"]:
        old = {r[0]: tuple(r[1:]) for r in meta.get("layout", [])}
        new = {r[0]: tuple(r[1:]) for r in now["layout"]}
        diffs = [f"{k}: {old.get(k)} -> {new.get(k)}" for k in sorted(set(old) | set(new)) if old.get(k) != new.get(k)]
        if not diffs and [r[0] for r in meta.get("layout", [])] != [r[0] for r in now["layout"]]:
            diffs = ["piece order changed"]
        raise CheckpointError(
            f"{where}: observation layout differs (checkpoint obs_size {meta.get('obs_size')}, "
            f"layout {meta.get('layout_digest')}; current obs_size {now['obs_size']}, layout "
            f"{now['layout_digest']}); pieces that differ (name: (size, scope) checkpoint -> current): "
            + ("; ".join(diffs) or "unknown"))
    if meta.get("num_actions") != now["num_actions"]:
        raise CheckpointError(f"{where}: action count differs: checkpoint {meta.get('num_actions')}, "
                              f"current {now['num_actions']}")


def load_policy(path: str | Path):
    """``(policy, metadata)``: the trained policy network (eval mode, CPU), checked against
    the current rules and layout. Needs torch and sb3-contrib."""
    import numpy as np
    import torch
    from gymnasium import spaces
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

    from agents.networks import policy_kwargs
    from agents.policy_config import PolicyConfig

    path = Path(path)
    meta = read_metadata(path, check=True)
    try:
        pcfg = PolicyConfig(**meta["config"]["policy"])
    except (KeyError, TypeError) as e:
        raise CheckpointError(f"{path}: metadata has no usable policy config ({e})") from None
    obs_space = spaces.Box(-np.inf, np.inf, (meta["obs_size"],), np.float32)
    act_space = spaces.Discrete(meta["num_actions"])
    policy = MaskableActorCriticPolicy(obs_space, act_space, lambda _: 0.0, **policy_kwargs(pcfg))
    with _open(path) as z:
        if "policy.pth" not in z.namelist():
            raise CheckpointError(f"{path}: no policy.pth inside; not an SB3 checkpoint")
        raw = z.read("policy.pth")
    try:
        state = torch.load(io.BytesIO(raw), map_location="cpu", weights_only=True)
        policy.load_state_dict(state)
    except Exception as e:
        msg = str(e).splitlines()[0][:300] if str(e) else type(e).__name__
        raise CheckpointError(f"{path}: policy weights do not load ({msg})") from None
    policy.set_training_mode(False)
    return policy, meta


def export_policy(src: str | Path, dst: str | Path) -> Path:
    """Copy a checkpoint without the optimizer state (about a third of the size): enough to
    play (``load_policy``, ``agents.policy.load_agent``), not to resume training."""
    src, dst = Path(src), Path(dst)
    meta = read_metadata(src, check=True)
    meta["optimizer_stripped"] = True
    dst.parent.mkdir(parents=True, exist_ok=True)
    tmp = dst.with_name(dst.name + ".tmp.zip")
    with _open(src) as zin, zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED) as zout:
        for item in zin.infolist():
            if item.filename == "policy.optimizer.pth":
                continue
            data = zin.read(item.filename)
            if item.filename == META_NAME:
                data = json.dumps(meta, indent=1, sort_keys=True).encode()
            zout.writestr(item.filename, data)
    os.replace(tmp, dst)
    return dst
