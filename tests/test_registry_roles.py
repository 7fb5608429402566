"""Shipped checkpoints: each is its game's default bot or says what it is kept for
(agents/checkpoints/roles.json), in the registry's description (``ripmarket agents``)."""

from __future__ import annotations

import json

import agents
from agents.base import game_agents, games_with_agents
from agents.policy import CHECKPOINT_DIR, ROLES, checkpoint_roles


def _game_of(stem: str) -> str:
    for game in games_with_agents():
        if stem in agents.names(game):
            return game
    raise AssertionError(f"{stem}.zip is shipped but registered for no game")


def test_every_shipped_checkpoint_is_a_default_bot_or_has_a_role():
    roles = checkpoint_roles()
    for path in sorted(CHECKPOINT_DIR.glob("*.zip")):
        game = _game_of(path.stem)
        if path.stem in game_agents(game).default_bots:
            assert path.stem not in roles, f"{path.stem} is a default bot of {game}"
            continue
        assert roles.get(path.stem, "").strip(), f"{path.name} is neither a default bot nor given a role in {ROLES.name}"
        assert f"Kept as {roles[path.stem]}" in agents.describe(path.stem, game=game)


def test_every_role_names_a_shipped_checkpoint():
    data = json.loads(ROLES.read_text())
    assert data.get("_doc")
    for stem in checkpoint_roles():
        assert (CHECKPOINT_DIR / f"{stem}.zip").is_file(), f"{ROLES.name} names {stem}, which is not shipped"
