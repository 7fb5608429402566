"""Packaging checks: the console script and the torch pin."""

from __future__ import annotations

import tomllib
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[1]
TORCH_PIN = "2.13.0"


def _pyproject() -> dict:
    with open(ROOT / "pyproject.toml", "rb") as fh:
        return tomllib.load(fh)


def test_installed_metadata_declares_console_script():
    dist = metadata.distribution("ripmarket")
    scripts = {ep.name: ep.value for ep in dist.entry_points if ep.group == "console_scripts"}
    assert scripts.get("ripmarket") == "ripmarket_env.app.cli:app"


def test_pyproject_declares_console_script():
    assert _pyproject()["project"]["scripts"]["ripmarket"] == "ripmarket_env.app.cli:app"


def test_torch_pinned_exactly_in_train_extra():
    train = [Requirement(r) for r in _pyproject()["project"]["optional-dependencies"]["train"]]
    torch = [r for r in train if r.name == "torch"]
    assert len(torch) == 1, train
    specs = list(torch[0].specifier)
    assert len(specs) == 1 and specs[0].operator == "==" and specs[0].version == TORCH_PIN, torch[0]


def test_installed_metadata_pins_torch_in_train_extra():
    reqs = [Requirement(r) for r in metadata.requires("ripmarket") or []]
    torch = [
        r for r in reqs
        if r.name == "torch" and r.marker is not None and r.marker.evaluate({"extra": "train"})
    ]
    assert len(torch) == 1, reqs
    assert str(torch[0].specifier) == f"=={TORCH_PIN}"


def test_torch_not_a_core_dependency():
    core = [Requirement(r).name for r in _pyproject()["project"]["dependencies"]]
    assert "torch" not in core
