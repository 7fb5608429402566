"""Trained Black Market policies as agents: MaskablePPO checkpoints in
``agents/blackmarket/checkpoints/*.zip`` with a ``<stem>.json`` beside each (the game,
player count, observation and action sizes, how it was trained). They are registered
under their stem for game "black-market" (``agents.make("bm-ppo-2p", game="black-market")``);
torch and sb3-contrib are imported only when such an agent is built. A checkpoint of
another game or shape is refused with ``CheckpointError``.

Loading never runs code from the file: the network is rebuilt from the metadata's
``net_arch`` and given the zip's ``policy.pth`` through ``torch.load(weights_only=True)``
(``agents.checkpoint``'s size-checked reader); SB3's cloudpickled ``data`` member is never
opened, so a hostile zip cannot execute anything (``MaskablePPO.load`` would unpickle it)."""

from __future__ import annotations

import json
from pathlib import Path

from agents.base import register
from agents.checkpoint import CheckpointError
from agents.policy import PolicyAgent

GAME = "black-market"
CHECKPOINTS = Path(__file__).resolve().parent / "checkpoints"


def read_meta(path: Path) -> dict:
    meta_path = Path(path).with_suffix(".json")
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise CheckpointError(f"{path}: no readable metadata {meta_path.name} ({exc})") from None
    if not isinstance(meta, dict) or meta.get("game") != GAME:
        raise CheckpointError(f"{path}: a checkpoint of game {meta.get('game') if isinstance(meta, dict) else None!r}; "
                              f"it cannot play {GAME!r}")
    from ripmarket_env.games.blackmarket.cards import default_cards
    from ripmarket_env.games.blackmarket.observation import layout
    from ripmarket_env.games.blackmarket.state import NUM_ACTIONS

    size = layout(default_cards()).size
    if meta.get("obs_size") != size or meta.get("num_actions") != NUM_ACTIONS:
        raise CheckpointError(f"{path}: made for observations of {meta.get('obs_size')} and "
                              f"{meta.get('num_actions')} actions; this game has {size} and {NUM_ACTIONS}")
    return meta


MAX_LAYERS, MAX_WIDTH = 8, 4096


def net_arch(meta: dict, path: Path) -> list[int]:
    """The checkpoint's hidden layer sizes (``config.net_arch``), checked."""
    arch = meta.get("config", {}).get("net_arch") if isinstance(meta.get("config"), dict) else None
    if (not isinstance(arch, list) or not 1 <= len(arch) <= MAX_LAYERS
            or not all(isinstance(w, int) and not isinstance(w, bool) and 1 <= w <= MAX_WIDTH for w in arch)):
        raise CheckpointError(f"{path}: metadata config.net_arch is {str(arch)[:60]}; allowed: a list of 1-{MAX_LAYERS} "
                              f"layer widths, each 1-{MAX_WIDTH}")
    return list(arch)


def load_policy(path) -> tuple:
    """``(policy, metadata)`` of a Black Market checkpoint, without unpickling anything."""
    from agents.checkpoint import policy_from_zip

    path = Path(path)
    meta = read_meta(path)
    return policy_from_zip(path, meta["obs_size"], meta["num_actions"], {"net_arch": net_arch(meta, path)}), meta


def load_agent(path, deterministic: bool = True, seed: int | None = None) -> PolicyAgent:
    path = Path(path)
    policy, meta = load_policy(path)
    return PolicyAgent(policy, deterministic=deterministic, seed=seed, name=path.stem, metadata=meta)


_cache: dict = {}


def _factory(path: Path):
    def make(deterministic: bool = True, seed: int | None = None) -> PolicyAgent:
        if path not in _cache:
            _cache[path] = load_agent(path)
        base = _cache[path]
        return PolicyAgent(base.policy, deterministic=deterministic, seed=seed, name=path.stem, metadata=base.metadata)

    return make


if CHECKPOINTS.is_dir():
    for _p in sorted(CHECKPOINTS.glob("*.zip")):
        register(_p.stem, _factory(_p), f"Black Market MaskablePPO policy (agents/blackmarket/checkpoints/{_p.name}).",
                 game=GAME)
