"""Everything above the envs is written once for every game (docs/ARCHITECTURE.md, "A game is a
plugin"): ``ripmarket_env/app``, ``ripmarket_env/envs``, ``eval`` and ``train`` name no game.

The test walks the AST of every Python file there, imports inside functions included, and
fails on

* an import of one game's package (``ripmarket_env.games.<pkg>``, ``agents.<pkg>``): these
  layers reach a game through the registry (``ripmarket_env.games.get``), its ``GameSpec`` and
  the agents' profile (``agents.game_agents``);
* a string constant that is a registered game's id or title (``"black-market"``,
  ``"The Rune Market"``): no branch on a game, no per-game table of constants;
* a module, class or function whose name carries a game's name (``bm_match``, ``play_rune``,
  ``blackmarket_ppo``, ``_cards_black_market``).

There is no list of exceptions: what is a game's own lives in its folders
(``ripmarket_env/games/<pkg>/``, ``agents/<pkg>/``) and registers through them.
"""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TREES = ("ripmarket_env/app", "ripmarket_env/envs", "eval", "train")
REGISTRY = importlib.import_module("ripmarket_env.games")
#: The packaged games (the toy game of the tests is registered for the session too).
GAMES = [g for g in REGISTRY.ids() if REGISTRY.get(g).engine_class.__module__.startswith("ripmarket_env.games.")]


def _game_packages() -> set[str]:
    return {REGISTRY.get(g).engine_class.__module__.split(".")[2] for g in GAMES}


def _name_tokens() -> set[str]:
    """The words a game's name shows in identifiers: its package, its id's words run
    together or joined by '_', and their initials (``blackmarket``, ``black_market``, ``bm``)."""
    out = set()
    for g in GAMES:
        words = [w for w in re.split(r"[^a-z]+", g.lower()) if w]
        out |= {"".join(words), "_".join(words)}
        if len(words) > 1:
            out |= {"".join(w[0] for w in words), words[0] if words[0] != "black" else "bm"}
    out |= _game_packages()
    out |= {"rune", "bm", "rm"}  # the short names the games' code used
    return out


def _ident_has_game(name: str, tokens: set[str]) -> bool:
    parts = [p for p in re.split(r"_+", name.lower()) if p]
    joined = name.lower().strip("_")
    if any(t in parts for t in tokens) or any(joined == t for t in tokens):
        return True
    return any(("_".join(parts[i:j])) in tokens for i in range(len(parts)) for j in range(i + 2, len(parts) + 1))


def _files() -> list[Path]:
    return [p for t in TREES for p in sorted((ROOT / t).rglob("*.py"))]


def _violations(path: Path) -> list[str]:
    rel = path.relative_to(ROOT)
    pkgs = _game_packages()
    tokens = _name_tokens()
    literals = {g for g in GAMES} | {REGISTRY.get(g).title for g in GAMES}
    out = []
    tree_root = next(t for t in TREES if str(rel).startswith(t + "/"))
    inside = path.relative_to(ROOT / tree_root).parts  # the project's own package names are not a game's
    if any(_ident_has_game(Path(part).stem, tokens) for part in inside):
        out.append(f"{rel}: the module's name carries a game's name")
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in ast.walk(tree):
        mods = []
        if isinstance(node, ast.Import):
            mods = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            mods = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        for m in mods:
            parts = m.split(".")
            if (parts[:2] == ["ripmarket_env", "games"] and len(parts) > 2 and parts[2] in pkgs) or \
                    (parts[0] == "agents" and len(parts) > 1 and parts[1] in pkgs):
                out.append(f"{rel}:{node.lineno}: imports the game package {m}")
                break
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in literals:
            out.append(f"{rel}:{node.lineno}: names the game {node.value!r}")
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and _ident_has_game(node.name, tokens):
            out.append(f"{rel}:{node.lineno}: {node.name} carries a game's name")
    return out


def test_the_walk_sees_every_tree():
    files = _files()
    for t in TREES:
        assert any(str(p.relative_to(ROOT)).startswith(t) for p in files), f"no Python file under {t}"
    assert len(GAMES) >= 3


@pytest.mark.parametrize("sample,expected", [
    ("bm_match", True), ("play_rune", True), ("blackmarket_ppo", True), ("_cards_black_market", True),
    ("balance_rune", True), ("runemarket_ppo", True), ("play", False), ("tournament", False),
    ("remember", False), ("rim", False), ("bump", False),
])
def test_the_name_rule_itself(sample, expected):
    assert _ident_has_game(sample, _name_tokens()) is expected


def test_no_game_is_named_above_the_envs():
    bad = [v for p in _files() for v in _violations(p)]
    assert not bad, f"{len(bad)} places name a game above the envs:\n" + "\n".join(bad)
