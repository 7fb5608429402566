"""The soaks' own code in every ``make test`` (``make soak`` runs them at length and is not
part of it): a few hundred random games per count through the R.I.P. Market soak's checks,
and one whole game of every game the server seats through the server soak's client, in
process. A soak whose assumptions went stale (a rules change, an API change) fails here
first."""

from __future__ import annotations

import random
import threading

from ripmarket_env.games.ripmarket import RulesConfig

from tests.test_server_soak import _play, _tables
from tests.test_soak import soak


def test_random_play_soak_runs_its_checks():
    """R-9.3 (the damaging rounds' bound, no max_rounds draw) and every invariant of
    ``check_game`` on a few hundred games at 2, 6 and 10 players and one variant."""
    for rules in (RulesConfig(num_players=2), RulesConfig(num_players=6), RulesConfig(num_players=10),
                  RulesConfig(num_players=5, ghost_phase="first", market_size=1, ghost_cap=1)):
        stats = soak(rules, 300, 256, seed=rules.num_players)
        assert stats["games"] >= 300
        assert stats["max_damaging_rounds"] <= rules.num_players * rules.hp < rules.rounds_cap


def test_server_soak_client_plays_every_game():
    """The server soak's client (catalog, bots, a whole game, its record) on every game the
    app seats, the tests' toy game included."""
    from fastapi.testclient import TestClient

    from ripmarket_env.app.server import create_app
    from ripmarket_env.games import ids

    client = TestClient(create_app(max_games=64, max_games_per_client=64), base_url="http://127.0.0.1")
    tables = _tables(client, "")
    assert [t[0] for t in tables] == list(ids())
    stats = {"lat": [], "codes": {}, "games": 0, "by_game": {}}
    lock, stop = threading.Lock(), threading.Event()
    for i, table in enumerate(tables):
        game, _ = _play(client, "", random.Random(i), stats, lock, stop, [table])
        assert game is None  # played to its end
    assert stats["by_game"] == {t[0]: 1 for t in tables}
    assert set(stats["codes"]) <= {200, 201}
