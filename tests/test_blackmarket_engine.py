"""Black Market engine: plain-Python mode plays the same games (BM-12.1), invariants under
hypothesis-chosen variants and seeds (BM-13), generated docs are current, the soak."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ripmarket_env.core.engine import kernel_view, raw_rows
from ripmarket_env.games.blackmarket import Engine, RulesConfig
from ripmarket_env.games.blackmarket import kernels as K
from ripmarket_env.games.blackmarket.invariants import check_game

ROOT = Path(__file__).resolve().parents[1]

_SCRIPT = """
import hashlib, sys
import numpy as np
from ripmarket_env.core.engine import raw_rows
from ripmarket_env.games.blackmarket import Engine, RulesConfig
h = hashlib.sha256()
for P, mode in ((2, "teams"), (4, "ffa"), (6, "teams")):
    eng = Engine(RulesConfig(num_players=P, mode=mode, max_turns=30), 1)
    eng.reset([P * 101])
    rng = np.random.default_rng(P)
    while not eng.terminated[0]:
        legal = eng.legal_actions(0)
        eng.step([legal[int(rng.integers(len(legal)))]])
        h.update(raw_rows(eng.state).tobytes())
        h.update(eng.observe([P - 1]).tobytes())
print(h.hexdigest())
"""


def _run(env_extra):
    env = {**os.environ, **env_extra}
    out = subprocess.run([sys.executable, "-c", _SCRIPT], cwd=ROOT, env=env, capture_output=True, text=True,
                         timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout.strip()


def test_bm_12_1_plain_python_plays_the_same_games():
    """BM-12.1: NUMBA_DISABLE_JIT=1 plays the same games, byte for byte, as the compiled engine."""
    assert _run({"NUMBA_DISABLE_JIT": "1"}) == _run({})


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    P=st.sampled_from([2, 4, 6]), mode=st.sampled_from(["teams", "ffa"]), seed=st.integers(0, 2**40),
    target=st.integers(3, 20), start=st.integers(1, 6), limit=st.sampled_from([0, 6, 10, 30]),
    pair=st.sampled_from(["no_flip_card", "always"]), refill=st.sampled_from(["face_up", "face_down"]),
    eff=st.sampled_from(["at_once", "next_turn"]), any_player=st.booleans(), placement=st.booleans(),
)
def test_bm_13_invariants_hold_for_any_variant(P, mode, seed, target, start, limit, pair, refill, eff,
                                               any_player, placement):
    """BM-13: every invariant after every step, any variant, random play."""
    rules = RulesConfig(num_players=P, mode=mode, target_points=target, start_hand=start, hand_limit=limit,
                        pair_flip=pair, refill=refill, effects_from=eff, max_turns=25,
                        team_target="any_player" if any_player and mode == "teams" else "side_total",
                        reward_mode="placement" if placement and mode == "ffa" else "win")
    eng = Engine(rules, 1)
    eng.reset([seed])
    rng = np.random.default_rng(seed % 1000)
    while not eng.terminated[0]:
        prev = eng.state[0].copy()
        assert eng.legal_actions(0)
        eng.step([int(rng.choice(eng.legal_actions(0)))])
        assert check_game(eng, 0, prev) == []
    assert abs(float(eng.rewards()[0].sum())) < 1e-5


def test_bm_13_random_play_kernel_batch_invariants():
    """BM-13: the compiled random-play loop over a batch leaves every game valid; games end."""
    eng = Engine(RulesConfig(num_players=4), 64)
    eng.reset(list(range(64)))
    rng = np.arange(64, dtype=np.int64)
    fin = eng.drivers.random_play(kernel_view(eng.state), kernel_view(eng.tables), eng.cfg, 400, rng)
    assert fin.sum() > 0
    for g in range(64):
        assert check_game(eng, g) == []


def test_card_reference_is_current():
    """The committed card reference equals `ripmarket cards --game black-market` output."""
    from ripmarket_env.games.blackmarket.cards import reference_markdown

    assert (ROOT / "docs/games/black-market/CARDS.md").read_text(encoding="utf-8") == reference_markdown(), (
        "regenerate: ripmarket cards --game black-market --write docs/games/black-market/CARDS.md")


def test_worked_turn_is_current():
    """The rules page's worked turn equals the seeded game's (python -m ripmarket_env.games.blackmarket.docs)."""
    from ripmarket_env.games.blackmarket import docs

    page = (ROOT / "docs/games/black-market/RULES.md").read_text(encoding="utf-8")
    assert docs.splice(page, docs.worked_turn_markdown()) == page


def test_cards_cli(tmp_path):
    from typer.testing import CliRunner

    from ripmarket_env.app.cli import app

    res = CliRunner().invoke(app, ["cards", "--game", "black-market", "--markdown"])
    assert res.exit_code == 0 and "| 11 | Heist | Red | 2 | 1 |" in res.output
    bad = tmp_path / "bad.json"
    bad.write_text('{"hand_cards": [], "point_cards": []}')
    res = CliRunner().invoke(app, ["cards", "--game", "black-market", "--file", str(bad)])
    assert res.exit_code == 2 and "hand_cards" in res.output


@pytest.mark.slow
def test_soak_black_market_100k_games():
    """Soak (make soak): at least 100,000 random games over every count and mode, each
    leaving a valid state; every game ends (the loop counts finished games)."""
    total = 0
    for P in (2, 4, 6):
        for mode in ("teams", "ffa"):
            eng = Engine(RulesConfig(num_players=P, mode=mode), 2048)
            eng.reset(list(range(2048)))
            rng = np.arange(2048, dtype=np.int64) + 7919 * P
            games = 0
            while games < 17000:
                games += int(eng.drivers.random_play(kernel_view(eng.state), kernel_view(eng.tables), eng.cfg, 500, rng).sum())
                for g in range(0, 2048, 97):
                    assert check_game(eng, g) == []
            total += games
    assert total >= 100_000
