"""The conformance suite, run for every registered game (``ripmarket_env.testing.conformance``).

Every check of ``CHECKS_PER_COUNT`` runs for each game at the player counts of
``player_counts(spec)`` (min, default, max and one in the middle); the phase coverage,
the property-based invariants and the ``NUMBA_DISABLE_JIT=1`` twin run once per game.
A game registered in ``ripmarket_env.games`` gets all of it without a line here.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ripmarket_env.games import get, ids
from ripmarket_env.testing import conformance as C

GAMES = ids()
CASES = [(g, n) for g in GAMES for n in C.player_counts(get(g))]

#: phases each check's random play must reach at a player count, beyond "every phase at
#: some count" (test_every_phase_is_reached). R.I.P. Market: the Ghost phase once a table
#: has three seats (R-5; at two a death ends the game or starts the epilogue).
MUST_REACH = {
    "ripmarket": lambda n: {"ghost"} if n >= 3 else set(),
}


def _must_reach(game: str, n: int, seen: set[str], what: str) -> None:
    need = MUST_REACH.get(game, lambda n: set())(n)
    missing = need - seen
    assert not missing, f"{game} at {n} players: {what} never reached the phases {sorted(missing)} (saw {sorted(seen)})"


def test_every_registered_game_is_covered():
    assert "ripmarket" in GAMES
    for g in GAMES:
        counts = C.player_counts(get(g))
        assert counts[0] == get(g).min_players and counts[-1] == get(g).max_players
        assert get(g).default_players in counts


def test_player_counts_sample_the_range():
    spec = get("ripmarket")
    assert C.player_counts(spec) == [2, 4, 6, 10]


@pytest.mark.parametrize("check", sorted(C.CHECKS_PER_COUNT))
@pytest.mark.parametrize("game,n", CASES)
def test_conformance(game, n, check):
    seen = C.CHECKS_PER_COUNT[check](get(game), n)
    if isinstance(seen, set):
        _must_reach(game, n, seen, check)


@pytest.mark.parametrize("game", GAMES)
def test_every_phase_is_reached(game):
    spec = get(game)
    seen = C.check_phases_reached(spec, C.player_counts(spec))
    assert set(spec.phase_names) <= seen


@pytest.mark.parametrize("game", GAMES)
def test_plain_python_twin(game):
    """The kernels as plain Python (``NUMBA_DISABLE_JIT=1``) play the same games (R-12.4)."""
    spec = get(game)
    C.check_nojit_twin(spec, [spec.min_players, spec.max_players])


@pytest.mark.parametrize("game", GAMES)
def test_invariants_property(game):
    """Hypothesis draws the player count, the deal and the actions; the invariants hold."""
    spec = get(game)

    @settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True)
    @given(n=st.sampled_from(C.valid_player_counts(spec)), seed=st.integers(0, 2**63 - 1),
           action_seed=st.integers(0, 2**32 - 1))
    def run(n, seed, action_seed):
        C.check_invariants_one_game(spec, n, seed, action_seed)

    run()


# ------------------------------------------------------------------ the suite catches breakage
class _Broken:
    """A spec stand-in whose one hook misbehaves (everything else is the real game's)."""

    def __init__(self, spec, **hooks):
        self._spec = spec
        self.__dict__.update(hooks)

    def __getattr__(self, name):
        return getattr(self._spec, name)


def test_a_missing_hidden_information_hook_fails_with_a_message():
    spec = _Broken(get("ripmarket"), scramble_hidden=None)
    with pytest.raises(AssertionError, match="scramble_hidden is not set"):
        C.check_hidden_information(spec, 3)


def test_a_leaking_observation_is_caught():
    real = get("ripmarket")

    def leaky(engine, g, viewer, rng):  # "redraws" a feature the viewer does see
        twin = engine.clone([g])
        twin.state["hp"][0, viewer] -= 1
        return twin

    with pytest.raises(AssertionError, match="observation of game"):
        C.check_hidden_information(_Broken(real, scramble_hidden=leaky), 3, games=1)


def test_a_broken_invariant_is_caught():
    spec = _Broken(get("ripmarket"), check_invariants=lambda engine, g, prev=None: ["R-0.0 always broken"])
    with pytest.raises(AssertionError, match="R-0.0 always broken"):
        C.check_invariants_random_play(spec, 2, games=1)


def test_a_game_longer_than_max_decisions_is_caught():
    spec = _Broken(get("ripmarket"), max_decisions=lambda rules: 3)
    with pytest.raises(AssertionError, match="max_decisions"):
        C.check_aec_random_play(spec, 2, games=1)


def test_a_forced_decision_taken_by_the_engine_is_caught():
    """The Rune Market's variant defend="auto" (the rulings' engine-resolved forced no-block,
    RM-5.9) skips the defender whose hand holds no card high enough: the acting seat tells
    the table, and the forced-decision check sees it (the default rules ask, RM-8.1)."""
    from ripmarket_env.games.runemarket import RulesConfig

    real = get("rune-market")
    auto = _Broken(real, make_rules=lambda n: RulesConfig(num_players=n, defend="auto"))
    with pytest.raises(AssertionError, match="can tell whether a decision was forced"):
        C.check_forced_moves_hidden(auto, 2, games=3)


@pytest.mark.parametrize("game,n", CASES)
def test_soak_short(game, n):
    """The soak of every game (``check_soak``, the long one in ``make soak``:
    tests/test_soak_every_game.py) on a few hundred games: every finished game's invariants,
    every game ends within ``max_decisions``."""
    r = C.check_soak(get(game), n, games=300, batch=256, seed=n)
    assert r["games"] >= 300 and 0 < r["longest"] <= r["max_decisions"]
