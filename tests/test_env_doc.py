"""docs/ENV.md and docs/games/<game>/ENV.md: generated from the engine for every game, complete
action and observation tables (R.I.P. Market's page checked in detail)."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ripmarket_env.games.ripmarket.cards.loader import default_cards
from ripmarket_env.app.cli import app
from ripmarket_env.games.ripmarket.actions import ActionTable
from ripmarket_env.games.ripmarket.observation import layout
from ripmarket_env.games.ripmarket.state import MAX_SEATS, PHASE_NAMES
from ripmarket_env.app.envdoc import doc_path, regen_command, render_env_markdown
from ripmarket_env.games import get, ids

REPO = Path(__file__).resolve().parents[1]
ENV_MD = REPO / "docs" / "ENV.md"
REGEN_COMMAND = regen_command(get("ripmarket"))
#: The packaged games, whose pages are committed (the tests' toy game has none).
PACKAGED = [g for g in ids() if get(g).engine_class.__module__.startswith("ripmarket_env.games.")]


@pytest.fixture(scope="module")
def text() -> str:
    return render_env_markdown(get("ripmarket"))


@pytest.mark.parametrize("game", PACKAGED)
def test_every_game_has_its_committed_page(game):
    spec = get(game)
    path = REPO / doc_path(spec)
    assert path.exists(), f"{path} is missing: run `{regen_command(spec)}`"
    assert path.read_text(encoding="utf-8") == render_env_markdown(spec), f"{path} is stale: run `{regen_command(spec)}`"


@pytest.mark.parametrize("game", ids())
def test_every_games_page_lists_every_action_feature_and_phase(game):
    """Any registered game, the toy game of the tests included, gets a complete page from its spec."""
    spec = get(game)
    page = render_env_markdown(spec)
    eng = spec.make_engine(spec.make_rules(spec.default_players), 1)
    assert len(_table_rows(_section(page, "Action table"))) == eng.num_actions
    assert len(_table_rows(_section(page, "Observation table"))) == len(eng.obs_layout.pieces)
    phases = [r[1] for r in _table_rows(_section(page, "Decision phases"))]
    assert all(f"`{p}`" in phases for p in spec.phase_names)
    m = re.search(r"```python\n(.*?)```", _section(page, "Engine API"), re.S)
    ns: dict = {}
    exec(compile(m.group(1), f"{game} ENV.md example", "exec"), ns)  # noqa: S102
    assert ns["eng"].terminated.all() and ns["twin"].batch_size == 1


@pytest.fixture(scope="module")
def db():
    return default_cards()


def _section(text: str, heading: str) -> str:
    m = re.search(rf"^## {re.escape(heading)}\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    assert m, f"section {heading!r} is missing"
    return m.group(1)


def _table_rows(section: str) -> list[list[str]]:
    """The body rows of the first Markdown table in a section, as lists of cells."""
    rows = []
    in_table = False
    for line in section.splitlines():
        if line.startswith("|"):
            if re.fullmatch(r"\|(\s*-+\s*\|)+", line.strip()):
                in_table = True
                continue
            if in_table:
                rows.append([c.strip() for c in line.strip().strip("|").split(" | ")])
        elif in_table:
            break
    return rows


def test_committed_env_md_is_current(text):
    assert ENV_MD.exists(), f"docs/ENV.md is missing: run `{REGEN_COMMAND}`"
    assert ENV_MD.read_text(encoding="utf-8") == text, (
        f"docs/ENV.md is stale (the action table, observation layout or docs changed): run `{REGEN_COMMAND}`"
    )


def test_sections_present(text):
    for heading in (
        "Description", "Specs", "Action table", "Observation table", "Decision phases",
        "Rewards and Termination", "Engine API", "Version History",
    ):
        _section(text, heading)
    assert "v0" in _section(text, "Version History")


def test_every_action_index_exactly_once(text, db):
    table = ActionTable(db.n_living, db.n_shadow)
    rows = _table_rows(_section(text, "Action table"))
    indices = [int(r[0]) for r in rows]
    assert sorted(indices) == list(range(table.size))
    assert len(indices) == len(set(indices)) == table.size
    for idx, kind, arg, meaning in rows:
        k, a = table.decode(int(idx))
        assert kind == f"`{k}`" and int(arg) == a
        assert meaning == table.describe(int(idx), db)


def _expand(cell: str, seat_size: int) -> list[int]:
    m = re.fullmatch(r"(\d+)(?:\.\.(\d+))?(?: \(\+(\d+)·k\))?", cell)
    assert m, f"cannot read observation index {cell!r}"
    lo = int(m.group(1))
    hi = int(m.group(2) or lo)
    span = range(lo, hi + 1)
    if m.group(3) is None:
        return list(span)
    assert int(m.group(3)) == seat_size
    return [i + seat_size * k for k in range(MAX_SEATS) for i in span]


def test_observation_table_covers_every_index_once(text, db):
    lay = layout(db.n_living, db.n_shadow)
    rows = _table_rows(_section(text, "Observation table"))
    assert len(rows) == len(lay.pieces)
    counts = Counter()
    for idx, name, size, _doc in rows:
        got = _expand(idx, lay.seat_size)
        per_block = len(got) // (MAX_SEATS if name.startswith("`seat[k].") else 1)
        assert per_block == int(size), name
        counts.update(got)
    assert set(counts) == set(range(lay.size))
    dup = sorted(i for i, n in counts.items() if n != 1)
    assert not dup, f"observation indices listed more than once: {dup[:10]}"
    assert lay.size == lay.seat_start + MAX_SEATS * lay.seat_size


def test_every_phase_documented(text):
    rows = _table_rows(_section(text, "Decision phases"))
    assert [r[1] for r in rows] == [f"`{p}`" for p in PHASE_NAMES]
    assert [int(r[0]) for r in rows] == list(range(len(PHASE_NAMES)))


def test_rewards_link_rules(text):
    sec = _section(text, "Rewards and Termination")
    assert "RULES.md#r-9-game-end" in sec and "RULES.md#r-11-rewards-environment-not-rulebook" in sec
    headings = (REPO / "docs" / "RULES.md").read_text(encoding="utf-8")
    assert "## R-9 Game end" in headings and "## R-11 Rewards (environment, not rulebook)" in headings


def test_engine_example_runs(text):
    sec = _section(text, "Engine API")
    m = re.search(r"```python\n(.*?)```", sec, re.S)
    assert m, "the Engine API section has no python example"
    ns: dict = {}
    exec(compile(m.group(1), "ENV.md example", "exec"), ns)  # noqa: S102
    eng = ns["eng"]
    assert eng.terminated.all()
    assert abs(float(eng.rewards().sum(axis=1).max())) < 1e-5
    assert ns["twin"].batch_size == 1


def test_cli_envdoc_write_and_check(tmp_path, text):
    runner = CliRunner()
    out = tmp_path / "ENV.md"
    res = runner.invoke(app, ["envdoc", "--write", str(out)])
    assert res.exit_code == 0, res.output
    assert out.read_text(encoding="utf-8") == text
    res = runner.invoke(app, ["envdoc", "--check", str(out)])
    assert res.exit_code == 0, res.output
    out.write_text(text + "edited\n", encoding="utf-8")
    res = runner.invoke(app, ["envdoc", "--check", str(out)])
    assert res.exit_code == 1
    assert REGEN_COMMAND in res.output
    res = runner.invoke(app, ["envdoc"])
    assert res.exit_code == 0 and res.stdout == text
    res = runner.invoke(app, ["envdoc", "--game", "no-such-game"])
    assert res.exit_code == 2 and "--game 'no-such-game' is not a registered game" in res.output
