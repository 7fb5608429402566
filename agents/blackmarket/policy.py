"""Trained Black Market policies as agents: MaskablePPO checkpoints in
``agents/blackmarket/checkpoints/*.zip`` with a ``<stem>.json`` beside each (the game,
player count, observation and action sizes, how it was trained). They are registered
under their stem for game "black-market" (``agents.make("bm-ppo-2p", game="black-market")``);
torch and sb3-contrib are imported only when such an agent is built. A checkpoint of
another game or shape is refused with ``CheckpointError``."""

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


def load_agent(path, deterministic: bool = True, seed: int | None = None) -> PolicyAgent:
    path = Path(path)
    meta = read_meta(path)
    try:
        from sb3_contrib import MaskablePPO

        model = MaskablePPO.load(str(path), device="cpu")
    except Exception as exc:  # a corrupt zip or a foreign file
        raise CheckpointError(f"{path}: cannot load the policy ({type(exc).__name__}: {exc})") from None
    model.policy.set_training_mode(False)
    return PolicyAgent(model.policy, deterministic=deterministic, seed=seed, name=path.stem, metadata=meta)


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
