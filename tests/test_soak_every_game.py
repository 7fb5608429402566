"""``make soak`` for every registered game (``ripmarket_env.testing.conformance.check_soak``):
at least 25,000 random games at each player count of ``player_counts(spec)`` with the game's
compiled ``random_play`` driver, every finished game checked against the game's invariants
in its final state, every game ending within ``max_decisions``. A game registered in
``ripmarket_env.games`` gets it without a line here (the games' own soaks,
tests/test_soak.py, tests/test_runemarket_soak.py and Black Market's in
tests/test_blackmarket_engine.py, add their rule variants and modes)."""

from __future__ import annotations

import pytest

from ripmarket_env.games import get, ids
from ripmarket_env.testing import conformance as C

pytestmark = [pytest.mark.slow, pytest.mark.timeout(3600)]

GAMES_PER_COUNT = 25_000


@pytest.mark.parametrize("game,n", [(g, n) for g in ids() for n in C.player_counts(get(g))])
def test_soak_every_game(game, n):
    r = C.check_soak(get(game), n, games=GAMES_PER_COUNT, batch=4096, seed=n)
    print(f"soak {game} at {n} players: {r}")
    assert r["games"] >= GAMES_PER_COUNT
