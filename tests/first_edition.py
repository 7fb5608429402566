"""A checkpoint as the first edition's bots were written (they are retired from
``agents/checkpoints/``): the shipped ``ppo-6p``'s network with the first edition's card
digest and metadata that predate the game id, for the tests of checkpoints trained on
other cards (``init_from_other_cards``, the card check, old metadata)."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path


def first_edition_checkpoint(folder: Path, name: str = "first-edition-bot") -> Path:
    from agents.checkpoint import META_NAME
    from agents.policy import CHECKPOINT_DIR
    from ripmarket_env.games.ripmarket.cards.loader import load_cards

    src, out = CHECKPOINT_DIR / "ppo-6p.zip", Path(folder) / f"{name}.zip"
    with zipfile.ZipFile(src) as z:
        members = {n: z.read(n) for n in z.namelist()}
    meta = json.loads(members[META_NAME])
    meta["card_digest"] = load_cards("first-edition").digest
    del meta["game"]  # written before checkpoints named their game
    with zipfile.ZipFile(out, "w") as z:
        for n, data in members.items():
            z.writestr(n, json.dumps(meta) if n == META_NAME else data)
    return out
