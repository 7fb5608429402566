"""Soak: over 100,000 random Rune Market games with the core's compiled ``random_play`` driver
(``make soak``; marked ``slow``). Every finished game is checked with ``check_game`` in its
final state before the kernel starts a new game in its row; none may end at the turn cap."""

from __future__ import annotations

import numpy as np
import pytest

from ripmarket_env.core.engine import kernel_view as _k
from ripmarket_env.games.runemarket import Engine, RulesConfig
from ripmarket_env.games.runemarket.invariants import check_game

pytestmark = [pytest.mark.slow, pytest.mark.timeout(3600)]

GAMES_PER_COUNT = 26_000  # x 4 player counts: 104,000 games
BATCH = 4096


@pytest.mark.parametrize("P", [2, 3, 4, 6])
def test_soak_random_games(P):
    eng = Engine(RulesConfig(num_players=P), batch_size=BATCH)
    eng.reset([P * 10_000_019 + i for i in range(BATCH)])
    S, T, c = _k(eng.state), _k(eng.tables), eng.cfg
    bench = (np.arange(BATCH, dtype=np.int64) * 2_654_435_761 + P) & 0xFFFFFFFF
    finished = 0
    while finished < GAMES_PER_COUNT:
        eng.drivers.random_play(S, T, c, 1, bench)
        done = np.flatnonzero(eng.state["done"])
        for g in done:
            errs = check_game(eng, int(g))
            assert not errs, (P, int(g), errs)
            assert eng.state["end_reason"][g] == 0, "a random game reached the turn cap"
        finished += len(done)  # the next call starts a new game in these rows
    print(f"{P} players: {finished} games")
