"""The layers hold (docs/ARCHITECTURE.md, "Layers"): every import of the project's own
modules, at module level or inside a function, runs down the layer list, and no layer
imports itself in a circle.

    core      ripmarket_env.core.*                  numpy and numba only: nothing else of the project
    game      ripmarket_env.games.<id>.*            core and its own package, never another game
    registry  ripmarket_env.games (the package)     core and the games
    envs      ripmarket_env.envs.*                  core (games arrive as a GameSpec, agents as objects)
    testing   ripmarket_env.testing.*               core, the registry, games, envs
    agents    agents.*                              core, games, agents
    eval      eval.*                                core, registry, games, envs, agents, eval
    train     train.*                               core, registry, games, envs, agents, eval, train
    app       ripmarket_env.app.*, the package's    everything
              public face (ripmarket_env, .aec,
              .gym_env, .vector_env, .black_market_env, .engine)

The test walks the AST of every source file, so an import hidden inside a function is
counted like any other. There is no list of exceptions.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("ripmarket_env", "agents", "train", "eval")
FACE = {"ripmarket_env", "ripmarket_env.aec", "ripmarket_env.gym_env", "ripmarket_env.vector_env", "ripmarket_env.black_market_env",
        "ripmarket_env.engine"}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def all_modules() -> dict[str, Path]:
    return {module_name(p): p for pkg in PACKAGES for p in sorted((ROOT / pkg).rglob("*.py"))}


MODULES = all_modules()


def imports_of(name: str, path: Path) -> list[tuple[str, int]]:
    """(imported project module, line) for every import in the file, at any depth."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    out = []
    is_pkg = path.name == "__init__.py"
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] in PACKAGES:
                    out.append((a.name, node.lineno))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".") if is_pkg else name.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            if mod.split(".")[0] not in PACKAGES:
                continue
            for a in node.names:
                sub = f"{mod}.{a.name}"
                out.append((sub if sub in MODULES else mod, node.lineno))
    return out


def layer(name: str) -> str:
    if name in FACE or name.startswith("ripmarket_env.app"):
        return "app"
    if name.startswith("ripmarket_env.core"):
        return "core"
    if name == "ripmarket_env.games":
        return "registry"
    if name.startswith("ripmarket_env.games."):
        return "game:" + name.split(".")[2]
    if name.startswith("ripmarket_env.envs"):
        return "envs"
    if name.startswith("ripmarket_env.testing"):
        return "testing"
    top = name.split(".")[0]
    if top in ("agents", "eval", "train"):
        return top
    raise AssertionError(f"{name} belongs to no layer; add it to the layer list")


ALLOWED = {
    "core": {"core"},
    "registry": {"core", "registry", "game"},
    "envs": {"core", "envs"},
    "testing": {"core", "registry", "game", "envs", "testing"},
    "agents": {"core", "game", "agents"},
    "eval": {"core", "registry", "game", "envs", "agents", "eval"},
    "train": {"core", "registry", "game", "envs", "agents", "eval", "train"},
    "app": {"core", "registry", "game", "envs", "testing", "agents", "eval", "train", "app"},
}


def allowed(src: str, dst: str) -> bool:
    a, b = layer(src), layer(dst)
    if a.startswith("game:"):
        return b == "core" or b == a  # a game sees the core and itself, never another game
    return (b.split(":")[0]) in ALLOWED[a]


def edges() -> list[tuple[str, str, int]]:
    return [(src, dst, line) for src, path in MODULES.items() for dst, line in imports_of(src, path)
            if dst != src]


def test_every_module_has_a_layer():
    for name in MODULES:
        layer(name)


def test_no_import_runs_the_wrong_way():
    bad = [f"{MODULES[src].relative_to(ROOT)}:{line}: {src} ({layer(src)}) imports {dst} ({layer(dst)})"
           for src, dst, line in edges() if not allowed(src, dst)]
    assert not bad, "imports against the layers:\n" + "\n".join(bad)


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_no_import_cycle():
    graph: dict[str, set[str]] = {}
    for src, dst, _ in edges():
        graph.setdefault(src, set()).add(dst)
    cycles = _cycles(graph)
    assert not cycles, "modules that import one another in a ring:\n" + "\n".join(" -> ".join(c) for c in cycles)


@pytest.mark.parametrize("src,dst,ok", [
    ("ripmarket_env.core.engine", "ripmarket_env.games.ripmarket.kernels", False),
    ("ripmarket_env.games.ripmarket.events", "ripmarket_env.envs.record", False),
    ("ripmarket_env.games.blackmarket.rules", "ripmarket_env.games.ripmarket.cards", False),
    ("ripmarket_env.envs.gym", "agents.base", False),
    ("agents.policy", "train.checkpoint", False),
    ("eval.tournament", "train.selfplay", False),
    ("train.selfplay", "eval.arena", True),
    ("ripmarket_env.app.cli", "train.config", True),
])
def test_the_rules_themselves(src, dst, ok):
    """The checker would catch each forbidden arrow the layering exists to prevent."""
    assert allowed(src, dst) is ok
