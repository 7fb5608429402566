"""A tiny ``ripmarket train`` of a game's ``configs/<game>/smoke.yaml`` and its ``--resume``
(the one trainer, in process), shared by the games' training tests."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def train_and_resume(game: str, tmp: Path) -> dict:
    """Train ``configs/<game>/smoke.yaml`` (a few hundred steps with its league), then go on
    from its ``latest.zip`` for as many steps again with ``--resume``; returns the two runs'
    folders, summaries and final checkpoints' metadata."""
    from typer.testing import CliRunner

    from ripmarket_env.app.cli import app

    config = ROOT / "configs" / game / "smoke.yaml"
    runner = CliRunner()
    res = runner.invoke(app, ["train", str(config), "--out", str(tmp / "first")])
    assert res.exit_code == 0, res.output[-3000:]
    (first,) = (tmp / "first" / "checkpoints").iterdir()
    meta1 = _meta(first / "final.zip")
    steps = meta1["training_steps"]
    res = runner.invoke(app, ["train", str(config), "--out", str(tmp / "second"), "--resume",
                              str(first / "latest.zip"), "--total-timesteps", str(2 * steps)])
    assert res.exit_code == 0, res.output[-3000:]
    (second,) = (tmp / "second" / "checkpoints").iterdir()
    return {"first": first, "second": second, "meta1": meta1, "meta2": _meta(second / "final.zip"),
            "summary1": json.loads((first / "summary.json").read_text()),
            "summary2": json.loads((second / "summary.json").read_text()), "output": res.output}


def _meta(path: Path) -> dict:
    with zipfile.ZipFile(path) as z:
        return json.loads(z.read("ripmarket.json"))
