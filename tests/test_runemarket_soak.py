"""Soak: over 100,000 random Rune Market games (``make soak``; marked ``slow``) through the
shared soak (``conformance.check_soak``: the core's compiled ``random_play`` driver, every
finished game checked with ``check_game`` in its final state), with one check of this
game's own added to its invariants: no random game ends at the turn cap."""

from __future__ import annotations

import dataclasses

import pytest

from ripmarket_env.games import get
from ripmarket_env.testing import conformance as C

pytestmark = [pytest.mark.slow, pytest.mark.timeout(3600)]

GAMES_PER_COUNT = 26_000  # x 4 player counts: 104,000 games
BATCH = 4096


def _spec():
    spec = get("rune-market")

    def invariants(eng, g, prev=None):
        capped = ["a random game reached the turn cap"] if eng.state["end_reason"][g] != 0 else []
        return spec.check_invariants(eng, g) + capped

    return dataclasses.replace(spec, check_invariants=invariants)


@pytest.mark.parametrize("P", [2, 3, 4, 6])
def test_soak_random_games(P):
    r = C.check_soak(_spec(), P, GAMES_PER_COUNT, BATCH, seed=P)
    print(f"{P} players: {r}")
    assert r["games"] >= GAMES_PER_COUNT
