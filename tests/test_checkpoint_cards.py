"""A checkpoint (or distilled zoo) trained on another card database than the one in play is
refused naming both by edition where known and saying what to do; one whose cards match the
cards in play (the packaged ones, or an edition given with --cards) loads and plays."""

from __future__ import annotations

import io
import json
import re
import zipfile
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("sb3_contrib")

import torch  # noqa: E402
from typer.testing import CliRunner  # noqa: E402

import agents  # noqa: E402
from agents.checkpoint import CheckpointError, card_edition, read_metadata  # noqa: E402
from agents.policy import CHECKPOINT_DIR, DISTILLED_ZOO, load_agent, load_distilled  # noqa: E402
from ripmarket_env.games.ripmarket import Engine, RulesConfig  # noqa: E402
from ripmarket_env.games.ripmarket.cards.loader import default_cards, load_cards  # noqa: E402

SHIPPED = CHECKPOINT_DIR / "ppo-6p.zip"
FIRST = load_cards("first-edition")
SECOND = default_cards()


def with_cards(dst: Path, digest: str, src: Path = SHIPPED) -> Path:
    """A copy of ``src`` whose metadata says it was trained on the cards of ``digest``."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w") as zout:
        for item in zin.infolist():
            data = zin.read(item.filename)
            if item.filename == "ripmarket.json":
                meta = json.loads(data)
                meta["card_digest"] = digest
                data = json.dumps(meta).encode()
            zout.writestr(item, data)
    return dst


def plays(bot, cards=None) -> None:
    """``bot`` answers a 6-player game of ``cards`` with legal actions to its end."""
    eng = Engine(RulesConfig(num_players=6), batch_size=2, **({"cards": cards} if cards is not None else {}))
    eng.reset([5, 6])
    for _ in range(3000):
        if eng.terminated.all():
            break
        acts = bot.act_batch(eng.observe(), eng.legal_mask())
        eng.step(np.where(eng.terminated, -1, acts))  # an illegal action would raise
    assert eng.terminated.all()


def test_editions_are_named_by_digest():
    assert card_edition(SECOND.digest) == "second-edition"
    assert card_edition(FIRST.digest) == "first-edition"
    assert card_edition("ab" * 32) is None


def test_first_edition_checkpoint_is_refused_naming_both_editions(tmp_path):
    ckpt = with_cards(tmp_path / "ppo-first.zip", FIRST.digest)
    with pytest.raises(CheckpointError) as err:
        load_agent(ckpt)
    msg = str(err.value)
    assert "\n" not in msg
    assert re.search(r"ppo-first\.zip was trained on the first edition's cards \(card digest "
                     + FIRST.digest[:12] + r"\); the cards in play are the second edition \(card digest "
                     + SECOND.digest[:12] + r"\): retrain it for these cards, or play it with --cards first-edition$",
                     msg), msg
    bot = load_agent(ckpt, cards=FIRST, seed=1)  # the cards it was trained on: it loads and plays them
    plays(bot, FIRST)


def test_matching_checkpoint_loads_and_other_editions_are_named(tmp_path):
    ckpt = with_cards(tmp_path / "ppo-second.zip", SECOND.digest)
    plays(load_agent(ckpt, seed=2))
    assert read_metadata(ckpt)["card_digest"] == SECOND.digest
    with pytest.raises(CheckpointError, match=r"trained on the second edition's cards .*in play are the first "
                                              r"edition .*play it with the packaged cards \(no --cards\)"):
        load_agent(ckpt, cards=FIRST)
    unknown = with_cards(tmp_path / "ppo-own.zip", "ab" * 32)
    with pytest.raises(CheckpointError, match=r"trained on an unknown card database \(card digest abababababab\)"
                                              r".*the card file it was trained on \(--cards FILE\)"):
        load_agent(unknown)


def test_distilled_zoo_of_other_cards_is_refused_naming_them(tmp_path):
    blob = torch.load(io.BytesIO(DISTILLED_ZOO.read_bytes()), map_location="cpu", weights_only=True)
    for digest, ok, bad in ((FIRST.digest, FIRST, None), (SECOND.digest, None, FIRST)):
        blob["meta"]["card_digest"] = digest
        path = tmp_path / f"zoo-{digest[:4]}.pt"
        torch.save(blob, path)
        plays(load_distilled("greedy", path, seed=3, cards=ok), ok)
        with pytest.raises(CheckpointError, match=r"zoo-.*\.pt was trained on the (first|second) edition's cards"):
            load_distilled("greedy", path, cards=bad)


def test_cli_refuses_a_trained_agent_of_other_cards_in_one_line(tmp_path):
    from ripmarket_env.app.cli import app

    trained = read_metadata(SHIPPED, check=False)["card_digest"]
    other = "first-edition" if trained == SECOND.digest else None
    args = ["tournament", "--agents", "ppo-6p,greedy", "--players", "4", "--games", "4", "--workers", "1",
            "--out", str(tmp_path / "t"), "--quiet"] + (["--cards", other] if other else [])
    r = CliRunner().invoke(app, args)
    assert r.exit_code == 2, r.output
    assert "--agents ppo-6p:" in r.output and "ppo-6p.zip was trained on the" in r.output
    assert not (tmp_path / "t" / "results.json").exists()
    # agents.make takes the cards in play: the shipped checkpoint plays the cards it was trained on
    plays(agents.make("ppo-6p", seed=4, cards=FIRST if trained == FIRST.digest else None),
          FIRST if trained == FIRST.digest else None)
