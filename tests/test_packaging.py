"""Packaging checks: the console script, the torch pin, the extras and what the core
install alone runs."""

from __future__ import annotations

import os
import re
import subprocess
import sys
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


# --------------------------------------------------------------------------- lean installs
EXTRAS = {"train", "eval", "serve", "bench", "test", "rllib", "ecosystem", "all"}
#: what the core install must work without (the extras' packages)
EXTRA_ONLY = ("torch", "stable_baselines3", "sb3_contrib", "safetensors", "ray", "tianshou", "torchrl",
              "agilerl", "openskill", "matplotlib", "fastapi", "uvicorn", "tensorboard")


def test_extras_are_the_documented_set_and_all_holds_them():
    extras = _pyproject()["project"]["optional-dependencies"]
    assert set(extras) == EXTRAS
    (everything,) = extras["all"]
    assert set(Requirement(everything).extras) == EXTRAS - {"all"}
    core = {Requirement(r).name for r in _pyproject()["project"]["dependencies"]}
    assert core.isdisjoint({"torch", "stable-baselines3", "ray", "openskill", "matplotlib", "fastapi"})
    text = (ROOT / "pyproject.toml").read_text()
    for name in EXTRAS:  # each extra says what it brings, in a comment just above it
        assert re.search(rf"# {name}: .*\n(#.*\n)*{name} = \[", text), name


def test_makefile_demo_installs_only_the_eval_extra_and_test_pins_torch_first():
    make = (ROOT / "Makefile").read_text()
    demo = re.search(r"^\$\(DEMO_STAMP\):.*?\n((?:\t.*\n)+)", make, re.M).group(1)
    installs = re.findall(r"pip install (?!--upgrade)(.*)", demo)
    assert installs == ['-e ".[eval]"'], installs
    full = re.search(r"^\$\(STAMP\):.*?\n((?:\t.*\n)+)", make, re.M).group(1)
    installs = re.findall(r"pip install (?!--upgrade)(.*)", full)
    assert installs == [f'"torch=={TORCH_PIN}"', '-e ".[all]"'], installs
    assert re.search(r"^demo: \$\(DEMO_STAMP\)\n", make, re.M) and re.search(r"^test: venv", make, re.M)


def test_the_core_install_plays_every_game_in_every_env():
    """With every extra's package unimportable (a lean ``pip install ripmarket``), each
    game's AEC, parallel, Gymnasium and Gymnasium vector envs play random moves, and a
    rule-based bot of the zoo is an opponent by name."""
    blocked = ", ".join(repr(m) for m in EXTRA_ONLY)
    code = f"""
import sys, importlib.abc
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ({blocked}):
            raise ImportError(f"{{name}} is not installed (lean install)")
sys.meta_path.insert(0, Block())
import numpy as np, gymnasium, ripmarket_env, agents
from ripmarket_env.games import registry
for spec in registry().values():
    aec = ripmarket_env.make(spec.id)
    aec.reset(seed=0)
    for agent in aec.agent_iter(50):
        obs, r, term, trunc, info = aec.last()
        aec.step(None if term or trunc else int(np.flatnonzero(obs["action_mask"])[0]))
    par = ripmarket_env.make(spec.id, parallel=True)
    obs, infos = par.reset(seed=0)
    for _ in range(20):
        if not par.agents:
            break
        obs, *_ = par.step({{a: int(np.flatnonzero(o["action_mask"])[0]) for a, o in obs.items()}})
    bots = [b for b in agents.game_agents(spec.id).heuristics]
    env = gymnasium.make(spec.gym_id, opponents=bots[0] if bots else None)
    o, info = env.reset(seed=0)
    for _ in range(20):
        o, r, term, trunc, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
        if term:
            o, info = env.reset()
    venv = gymnasium.make_vec(spec.gym_id, num_envs=2)
    o, info = venv.reset(seed=0)
    venv.step(np.array([int(np.flatnonzero(m)[0]) for m in info["action_mask"]]))
    print(spec.id, "ok", bots[:1])
print(sorted(m for m in ({blocked}) if m in sys.modules))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=900,
                         env={**os.environ, "RIPMARKET_COMPILE_PROGRESS": "0"})
    assert out.returncode == 0, out.stderr[-3000:]
    lines = out.stdout.strip().splitlines()
    from ripmarket_env.games import ids

    assert [ln.split()[0] for ln in lines[:-1]] == ids() and lines[-1] == "[]"
