"""Golden playthroughs: three seeded games printed state by state, kept in tests/golden/.

Each file is a game between uniformly random legal players: before every decision, the
god view of the table (``render_text(god=True)``), the legal actions and the action taken,
then the final state and the rewards. The test regenerates the games and diffs them against
the committed files, so any change to the rules, the cards, the action table or the
renderer shows up as a readable diff.

After an intended change, regenerate the files and review the diff before committing:

    RIPMARKET_UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/test_golden.py
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path

import numpy as np
import pytest

from ripmarket_env.games.ripmarket import Engine, RulesConfig
from ripmarket_env.games.ripmarket.render import describe_action, render_text, seat_name

GOLDEN = Path(__file__).parent / "golden"
GAMES = ((2, 101), (4, 202), (7, 303))  # (players, seed): the game seed and the players' RNG seed
UPDATE = os.environ.get("RIPMARKET_UPDATE_GOLDEN") == "1"
EXCERPT_LINES = 60


def golden_path(num_players: int, seed: int) -> Path:
    return GOLDEN / f"playthrough_{num_players}p_seed{seed}.txt"


def playthrough(num_players: int, seed: int) -> str:
    """One seeded game with seeded random legal actions, printed state by state."""
    eng = Engine(RulesConfig(num_players=num_players), batch_size=1)
    eng.reset([seed])
    rng = np.random.default_rng(seed)
    out = [
        f"# R.I.P. Market golden playthrough: {num_players} players, game seed {seed}",
        f"# players: uniformly random legal actions, numpy default_rng({seed}).integers",
        f"# rules: {RulesConfig(num_players=num_players).to_dict()}",
        f"# cards digest: {eng.cards.digest}",
        "# regenerate: RIPMARKET_UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/test_golden.py",
        "",
    ]
    step = 0
    while True:
        out.append(f"===== state {step} =====")
        out.append(render_text(eng, god=True).rstrip("\n"))
        if eng.terminated[0]:
            break
        legal = eng.legal_actions(0)
        a = int(legal[rng.integers(len(legal))])
        out.append(f"legal: {legal}")
        out.append(f"action {step}: {a} -> {describe_action(eng, a)}")
        out.append("")
        eng.step(np.array([a], dtype=np.int64))
        step += 1
    rewards = eng.rewards()[0]
    out.append("")
    out.append(f"decisions: {step}")
    out.append("rewards: " + ", ".join(f"{seat_name(q)} {float(x):+.6f}" for q, x in enumerate(rewards)))
    return "\n".join(out) + "\n"


@pytest.mark.parametrize("num_players,seed", GAMES)
def test_golden_playthrough(num_players, seed):
    path = golden_path(num_players, seed)
    text = playthrough(num_players, seed)
    if UPDATE:
        GOLDEN.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return
    if not path.exists():
        pytest.fail(
            f"missing golden file {path}; create it with "
            "RIPMARKET_UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/test_golden.py"
        )
    expected = path.read_text(encoding="utf-8")
    if text == expected:
        return
    diff = list(difflib.unified_diff(
        expected.splitlines(), text.splitlines(), fromfile=f"{path.name} (committed)",
        tofile=f"{path.name} (this code)", lineterm="", n=3,
    ))
    excerpt = "\n".join(diff[:EXCERPT_LINES])
    more = f"\n... ({len(diff) - EXCERPT_LINES} more diff lines)" if len(diff) > EXCERPT_LINES else ""
    pytest.fail(
        f"golden playthrough {path.name} changed. If the change is intended, regenerate with "
        "RIPMARKET_UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/test_golden.py and review the diff.\n"
        f"{excerpt}{more}",
        pytrace=False,
    )


def test_playthrough_is_deterministic():
    assert playthrough(3, 7) == playthrough(3, 7)
