"""The ``Engine`` facade: shapes, dtypes, errors and conventions.

- reset/step/observe/clone/current_player/legal_mask shapes and dtypes for 2-10 players
  and several batch sizes;
- bad inputs (action shape, non-integer actions, seeds, viewer seats, RulesConfig
  values) give errors that name the field and the allowed values, and leave the state
  unchanged (R-1.4, R-12.2);
- ``-1`` skips a game; finished games ignore actions; rewards are paid once (R-11.3);
- the compiled ``random_play`` kernel runs and finishes games.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from ripmarket_env.games.ripmarket import ConfigError, Engine, IllegalActionError, RulesConfig, seed_to_u64
from ripmarket_env.games.ripmarket import kernels as K
from ripmarket_env.games.ripmarket.actions import KINDS, ActionTable
from ripmarket_env.games.ripmarket.engine import _k
from ripmarket_env.games.ripmarket.invariants import check_game, conservation_errors, state_bytes
from ripmarket_env.games.ripmarket.observation import named_view
from ripmarket_env.games.ripmarket.state import PHASE_NAMES

PLAYER_COUNTS = range(2, 11)


def random_actions(eng: Engine, rng: np.random.Generator) -> np.ndarray:
    m = eng.legal_mask()
    n = m.sum(axis=1)
    k = (rng.random(eng.batch_size) * n).astype(np.int64)
    a = np.argmax(np.cumsum(m, axis=1) > k[:, None], axis=1).astype(np.int64)
    a[eng.terminated | (n == 0)] = -1
    return a


def play_out(eng: Engine, rng: np.random.Generator, limit: int = 20000) -> None:
    for _ in range(limit):
        if eng.terminated.all():
            return
        eng.step(random_actions(eng, rng))
    raise AssertionError("games did not end")


@pytest.fixture
def eng4():
    eng = Engine(RulesConfig(num_players=4), batch_size=3)
    eng.reset([11, 12, 13])
    return eng


# ----------------------------------------------------------------------------- shapes
@pytest.mark.parametrize("num_players", PLAYER_COUNTS)
@pytest.mark.parametrize("batch_size", [1, 3, 16])
def test_shapes_and_dtypes(num_players, batch_size):
    rules = RulesConfig(num_players=num_players)
    eng = Engine(rules, batch_size=batch_size)
    B, P = batch_size, num_players
    assert eng.num_actions == ActionTable(eng.cards.n_living, eng.cards.n_shadow).size
    assert eng.obs_size == eng.obs_layout.size
    eng.reset(list(range(B)))
    assert eng.seeds.tolist() == list(range(B))

    cp = eng.current_player()
    assert cp.shape == (B,) and cp.dtype == np.int64
    assert ((cp >= 0) & (cp < P)).all()
    m = eng.legal_mask()
    assert m.shape == (B, eng.num_actions) and m.dtype == np.bool_
    assert (m.sum(axis=1) >= 2).all()
    assert eng.terminated.shape == (B,) and eng.terminated.dtype == np.bool_
    assert len(eng.phase()) == B and all(p in PHASE_NAMES for p in eng.phase())
    assert eng.legal_actions(0) == np.flatnonzero(m[0]).tolist()

    obs = eng.observe()
    assert obs.shape == (B, eng.obs_size) and obs.dtype == np.float32
    assert np.isfinite(obs).all()
    for v in range(P):
        o = eng.observe(np.full(B, v))
        assert o.shape == (B, eng.obs_size) and np.isfinite(o).all()
        view = named_view(o[0], eng.obs_layout)
        assert view["present"][:P].all() and not view["present"][P:].any()
    buf = np.full((B, eng.obs_size), np.nan, np.float32)
    assert eng.observe(out=buf) is buf and np.array_equal(buf, obs)

    rewards, term = eng.step(random_actions(eng, np.random.default_rng(0)))
    assert rewards.shape == (B, P) and rewards.dtype == np.float32
    assert term.shape == (B,) and term.dtype == np.bool_
    assert eng.rewards().shape == (B, P)

    twin = eng.clone()
    assert twin.batch_size == B and twin.state.shape == (B,)
    assert state_bytes(twin.state) == state_bytes(eng.state) and twin.state is not eng.state
    one = eng.clone([B - 1])
    assert one.batch_size == 1 and one.current_player().shape == (1,)
    assert one.legal_mask().shape == (1, eng.num_actions)
    assert one.observe().shape == (1, eng.obs_size)
    for g in range(B):
        assert not check_game(eng, g)


def test_per_seat_fields_are_ten_wide_and_unused_seats_stay_empty():
    """The state record holds 10 seats whatever the player count; seats past
    num_players are never used."""
    eng = Engine(RulesConfig(num_players=3), batch_size=2)
    eng.reset([1, 2])
    assert eng.state["hp"].shape == (2, 10)
    assert (eng.state["hp"][:, 3:] == 0).all() and (eng.state["hp"][:, :3] == 3).all()
    assert (eng.state["hand"][:, 3:] == 0).all()


def test_reset_deals_the_setup_of_r_1_3():
    """R-1.2/R-1.3: start HP, Market slots and 3-card hands, First Player in range."""
    for P in PLAYER_COUNTS:
        rules = RulesConfig(num_players=P)
        eng = Engine(rules, batch_size=4)
        eng.reset([5, 6, 7, 8])
        s = eng.state
        hp0 = 3 if P <= 3 else 2
        M = 3 if P <= 6 else 4
        assert (s["hp"][:, :P] == hp0).all()
        assert (s["alive"][:, :P] == 1).all()
        assert (s["market"][:, :M] >= 0).all() and (s["market"][:, M:] == -1).all()
        assert (s["round_num"] == 0).all()
        fp = s["first_player"]
        assert ((fp >= 0) & (fp < P)).all()
        # every hand holds 3 cards, minus the first actor's acquisitions/plays at most
        assert (s["hand_n"][:, :P] >= 3).sum() >= 4 * (P - 1)


def test_reset_subset_of_games_leaves_the_others(eng4):
    rng = np.random.default_rng(0)
    eng4.step(random_actions(eng4, rng))
    keep0, keep2 = state_bytes(eng4.state[0]), state_bytes(eng4.state[2])
    eng4.reset([99], games=[1])
    assert state_bytes(eng4.state[0]) == keep0 and state_bytes(eng4.state[2]) == keep2
    fresh = Engine(RulesConfig(num_players=4), batch_size=1)
    fresh.reset([99])
    assert state_bytes(eng4.state[1]) == state_bytes(fresh.state[0])
    assert eng4.seeds.tolist() == [11, 99, 13]


def test_seed_to_u64_is_stable_and_64_bit():
    """R-12.4: any non-negative seed folds to a 64-bit game seed, the RNG's first state."""
    assert seed_to_u64(0) == seed_to_u64(0) == int(np.random.SeedSequence(0).generate_state(1, np.uint64)[0])
    assert seed_to_u64(1) != seed_to_u64(2)
    folded = [seed_to_u64(s) for s in (0, 1, 2**31, 2**62, 10**30)]
    assert all(0 <= f < 2**64 for f in folded)
    assert any(f >= 2**32 for f in folded)  # the fold keeps the upper half
    # seeds that differ only above bit 32 give different games (not folded to 32 bits)
    eng = Engine(RulesConfig(num_players=4), batch_size=2)
    eng.reset([5, 5 + 2**40])
    assert eng.state["rng"][0] != eng.state["rng"][1]
    assert int(eng.state["rng"].dtype.itemsize) == 8 and eng.state["rng"].dtype.kind == "u"


def test_seed_is_validated():
    eng = Engine(RulesConfig(num_players=4), batch_size=2)
    eng.reset([3, 4])
    before = state_bytes(eng.state)
    for bad in (-1, 1.5, "7", True):
        with pytest.raises(ValueError, match="seed must be a non-negative integer"):
            eng.reset([5, bad])
    assert state_bytes(eng.state) == before and eng.seeds.tolist() == [3, 4]


# ----------------------------------------------------------------------------- errors
def _unchanged(eng, fn, exc, *patterns):
    before = state_bytes(eng.state)
    seeds = eng.seeds.copy()
    with pytest.raises(exc) as info:
        fn()
    msg = str(info.value)
    for pat in patterns:
        assert re.search(pat, msg), f"{pat!r} not in error message {msg!r}"
    assert state_bytes(eng.state) == before, "a rejected call changed the state"
    assert np.array_equal(eng.seeds, seeds)
    return info.value


@pytest.mark.parametrize("bad", [[0, 0], [0, 0, 0, 0], [[0, 0, 0]], 0, []])
def test_wrong_action_shape(eng4, bad):
    _unchanged(eng4, lambda: eng4.step(bad), ValueError, r"one action per game", r"expected shape \(3,\)")


@pytest.mark.parametrize("bad", [[0.5, -1, -1], [np.nan, -1, -1], [-1, np.inf, -1]])
def test_non_integer_actions(eng4, bad):
    _unchanged(eng4, lambda: eng4.step(np.array(bad)), ValueError, r"actions must be integers")


def test_integral_float_actions_are_accepted(eng4):
    a = float(eng4.legal_actions(0)[0])
    eng4.step(np.array([a, -1.0, -1.0]))
    assert eng4.state["steps"].tolist() == [1, 0, 0]


@pytest.mark.parametrize("bad", [["a", "b", "c"], [None, None, None]])
def test_non_numeric_actions(eng4, bad):
    _unchanged(eng4, lambda: eng4.step(bad), (ValueError, TypeError), r"action")


def test_illegal_action_error_names_game_action_and_legal_set(eng4):
    """R-12.2: an illegal action is rejected with an error naming the game, the action
    and the legal set, and no game of the batch changes (even those with legal actions)."""
    good = random_actions(eng4, np.random.default_rng(0))
    illegal = next(a for a in range(eng4.num_actions) if not eng4.legal_mask()[2, a])
    acts = good.copy()
    acts[2] = illegal
    err = _unchanged(eng4, lambda: eng4.step(acts), IllegalActionError, rf"illegal action {illegal}",
                     r"in game 2", r"legal actions: ", r"not changed")
    assert isinstance(err, ValueError)
    assert err.game == 2 and err.action == illegal and err.legal == eng4.legal_actions(2)
    assert err.phase in PHASE_NAMES
    for a in err.legal:
        assert str(a) in str(err)
    for bad in (-2, eng4.num_actions, 10**6):
        acts = good.copy()
        acts[1] = bad
        _unchanged(eng4, lambda: eng4.step(acts), IllegalActionError, rf"illegal action {bad}", r"in game 1")


@pytest.mark.parametrize("bad", [-1, -(2**40)])
def test_negative_seed(eng4, bad):
    _unchanged(eng4, lambda: eng4.reset([1, bad, 3]), ValueError, r"seed", r"non-negative integer", str(bad))


def test_seed_count_and_game_index(eng4):
    _unchanged(eng4, lambda: eng4.reset([1, 2]), ValueError, r"2 seeds for 3 games", r"one seed per game")
    _unchanged(eng4, lambda: eng4.reset(5), ValueError, r"one seed per game")
    _unchanged(eng4, lambda: eng4.reset([1], games=[3]), ValueError, r"game index", r"0\.\.2")
    _unchanged(eng4, lambda: eng4.reset([1], games=[-1]), ValueError, r"game index", r"0\.\.2")


def test_scalar_seed_for_a_single_game():
    eng = Engine(RulesConfig(num_players=2), batch_size=1)
    eng.reset(7)
    twin = Engine(RulesConfig(num_players=2), batch_size=1)
    twin.reset([7])
    assert state_bytes(eng.state) == state_bytes(twin.state)


@pytest.mark.parametrize("bad", [1.5, "abc", None])
def test_non_integer_seed(eng4, bad):
    _unchanged(eng4, lambda: eng4.reset([1, bad, 3]), (ValueError, TypeError), r"seed", r"integer")


def test_huge_seed_leaves_state_unchanged_or_works(eng4):
    before = state_bytes(eng4.state)
    try:
        eng4.reset([1, 2**70, 3])
    except (ValueError, OverflowError):
        assert state_bytes(eng4.state) == before
        raise
    fresh = Engine(RulesConfig(num_players=4), batch_size=1)
    fresh.reset([2**70])
    assert state_bytes(eng4.state[1]) == state_bytes(fresh.state[0])


@pytest.mark.parametrize("bad", [[0, 4, 0], [-1, 0, 0], [0, 0, 10]])
def test_bad_viewer_seats(eng4, bad):
    _unchanged(eng4, lambda: eng4.observe(bad), ValueError, r"viewer seats must be in 0\.\.3")


def test_viewer_count(eng4):
    _unchanged(eng4, lambda: eng4.observe([0, 1]), ValueError, r"one viewer seat per game", r"3")


def test_non_integer_viewer_seat(eng4):
    _unchanged(eng4, lambda: eng4.observe([0, 1.5, 2]), ValueError, r"viewer")


@pytest.mark.parametrize("bad", [0, -3])
def test_bad_batch_size(bad):
    with pytest.raises(ValueError, match=rf"batch_size must be at least 1, got {bad}"):
        Engine(RulesConfig(), batch_size=bad)


def test_rules_must_be_a_rules_config():
    with pytest.raises(TypeError, match="rules must be a RulesConfig, got dict"):
        Engine({"num_players": 3})


BAD_RULES = [
    ("num_players", 1, "2 to 10"),
    ("num_players", 11, "2 to 10"),
    ("num_players", "4", "2 to 10"),
    ("num_players", 4.0, "2 to 10"),
    ("num_players", True, "2 to 10"),
    ("start_hp", 0, "1 to 9"),
    ("start_hp", 10, "1 to 9"),
    ("start_hp", 2.5, "1 to 9"),
    ("market_size", 0, "1 to 4"),
    ("market_size", 5, "1 to 4"),
    ("ghost_cap", 0, "1 to 5"),
    ("ghost_cap", 6, "1 to 5"),
    ("tie_rule", "random", "all | earliest"),
    ("tie_rule", None, "all | earliest"),
    ("epilogue", "yes", "true or false"),
    ("epilogue", 1, "true or false"),
    ("ghost_phase", "last", "in_turn | first"),
    ("max_rounds", 0, "1 to 1000"),
    ("max_rounds", 1001, "1 to 1000"),
    ("reward_mode", "score", "win | placement"),
    ("hand_size", 0, "1 to 6"),
    ("hand_size", 7, "1 to 6"),
    ("no_survivor", "draw", "sudden_death | share_win"),
]


@pytest.mark.parametrize("field,value,allowed", BAD_RULES)
def test_bad_rules_config_values(field, value, allowed):
    """R-1.4: an invalid value is rejected when the config is built, naming the field,
    the value and the allowed values."""
    with pytest.raises(ConfigError) as info:
        RulesConfig(**{field: value})
    msg = str(info.value)
    assert f"{field}={value!r}" in msg and "allowed" in msg and allowed in msg, msg
    assert isinstance(info.value, ValueError)


def test_epilogue_only_with_two_players():
    with pytest.raises(ConfigError, match=r"epilogue=True.*num_players=2"):
        RulesConfig(num_players=3, epilogue=True)
    assert RulesConfig(num_players=2, epilogue=True).epilogue


def test_rules_config_from_dict():
    assert RulesConfig.from_dict({"num_players": 5, "tie_rule": "earliest"}) == RulesConfig(5, tie_rule="earliest")
    with pytest.raises(ConfigError, match=r"unknown field\(s\) players; allowed: .*num_players"):
        RulesConfig.from_dict({"players": 5})
    with pytest.raises(ConfigError, match=r"mapping"):
        RulesConfig.from_dict([("num_players", 5)])
    with pytest.raises(ConfigError, match=r"reward_mode='x'"):
        RulesConfig.from_dict({"reward_mode": "x"})


def test_rules_config_resolved_defaults():
    """R-1.2 scaling and the R-9.3 default cap."""
    for P in PLAYER_COUNTS:
        r = RulesConfig(num_players=P)
        assert r.hp == (3 if P <= 3 else 2)
        assert r.market == (3 if P <= 6 else 4)
        assert r.cap == (2 if P <= 6 else 3)
        assert r.rounds_cap == 3 * P * r.hp
    r = RulesConfig(num_players=7, start_hp=5, market_size=2, ghost_cap=1, max_rounds=9)
    assert (r.hp, r.market, r.cap, r.rounds_cap) == (5, 2, 1, 9)


# ----------------------------------------------------------------------------- conventions
def test_minus_one_skips_a_game(eng4):
    before = eng4.state.copy()
    a = eng4.legal_actions(1)[0]
    rewards, term = eng4.step([-1, a, -1])
    assert state_bytes(eng4.state[0]) == state_bytes(before[0])
    assert state_bytes(eng4.state[2]) == state_bytes(before[2])
    assert state_bytes(eng4.state[1]) != state_bytes(before[1])
    assert eng4.state["steps"].tolist() == [0, 1, 0]
    assert not rewards.any() and not term.any()
    eng4.step([-1, -1, -1])
    assert eng4.state["steps"].tolist() == [0, 1, 0]


@pytest.mark.parametrize("reward_mode", ["win", "placement"])
def test_finished_games_ignore_actions_and_pay_once(reward_mode):
    """R-11.3: rewards are paid on the step that ends the game, 0 on every other step;
    a finished game accepts and ignores any action, stays finished and offers none."""
    eng = Engine(RulesConfig(num_players=3, reward_mode=reward_mode), batch_size=4)
    eng.reset([1, 2, 3, 4])
    rng = np.random.default_rng(1)
    paid = np.zeros((4, 3))
    ended_at = np.full(4, -1)
    t = 0
    while not eng.terminated.all():
        was = eng.terminated.copy()
        r, term = eng.step(random_actions(eng, rng))
        assert not r[~term].any() and not r[was].any()
        paid += r
        ended_at[term & ~was] = t
        t += 1
    assert np.allclose(paid, eng.rewards())
    assert np.abs(paid.sum(axis=1)).max() < 1e-5
    assert (eng.current_player() == -1).all()
    assert not eng.legal_mask().any()
    assert eng.phase() == ["game_over"] * 4
    for acts in ([0, 1, 2, 3], [999, -7, 10**6, -1]):
        before = eng.state.copy()
        r, term = eng.step(acts)
        assert term.all() and not r.any()  # the final reward was paid once, not again
        for f in before.dtype.names:
            if f != "step_rewards":
                assert np.array_equal(before[f], eng.state[f]), f
    assert np.allclose(eng.rewards(), paid)
    obs = eng.observe()
    assert np.isfinite(obs).all()


def test_observe_defaults_to_the_actor(eng4):
    actor = eng4.current_player()
    assert np.array_equal(eng4.observe(), eng4.observe(actor))
    obs = eng4.observe()
    for g in range(3):
        view = named_view(obs[g], eng4.obs_layout)
        assert view["is_actor"][0] == 1.0 and view["actor"][0, 0] == 1.0


def test_copy_from(eng4):
    other = Engine(RulesConfig(num_players=4), batch_size=2)
    other.reset([50, 51])
    eng4.copy_from(other, [0, 2], [1, 0])
    assert state_bytes(eng4.state[0]) == state_bytes(other.state[1])
    assert state_bytes(eng4.state[2]) == state_bytes(other.state[0])


def test_action_table_round_trip_and_descriptions():
    eng = Engine(RulesConfig(num_players=10), batch_size=1)
    t = eng.actions
    kinds = set()
    for a in range(eng.num_actions):
        kind, arg = t.decode(a)
        kinds.add(kind)
        assert t.encode(kind, arg) == a
        assert eng.describe_action(a)
    assert kinds == set(KINDS)
    with pytest.raises(ValueError, match=rf"out of range; allowed: 0\.\.{eng.num_actions - 1}"):
        t.decode(eng.num_actions)
    with pytest.raises(ValueError, match="unknown action kind 'fold'; allowed: acquire_deck"):
        t.encode("fold")


# ----------------------------------------------------------------------------- kernels
@pytest.mark.parametrize("num_players", [2, 5, 10])
def test_random_play_kernel_runs_and_finishes_games(num_players):
    """``kernels.random_play``: every row plays random legal decisions and starts a new
    game when one ends; states stay sound and it is deterministic in its RNG."""
    eng = Engine(RulesConfig(num_players=num_players), batch_size=64)
    eng.reset(list(range(64)))
    twin = eng.clone()
    bench = np.arange(64, dtype=np.int64) * 7919
    finished = K.random_play(_k(eng.state), _k(eng.tables), eng.cfg, 400, bench.copy())
    assert finished.shape == (64,) and finished.dtype == np.int64
    assert finished.sum() > 64 and (finished >= 1).all()
    assert len(conservation_errors(eng.state, eng.cards, eng.rules)) == 0
    for g in range(64):
        assert not check_game(eng, g), check_game(eng, g)
    again = K.random_play(_k(twin.state), _k(twin.tables), twin.cfg, 400, bench.copy())
    assert np.array_equal(again, finished) and state_bytes(twin.state) == state_bytes(eng.state)


def test_a_deal_the_living_deck_cannot_hold_is_refused():
    """R-1.3: every hand, the Market and the first acquisition come from the Living Deck;
    10 players with 6-card hands (60 + 4 + 1 cards) do not fit the packaged 64 cards."""
    with pytest.raises(ConfigError, match=r"holds 64 cards, too few for a 10-player game.*at least 65 cards"):
        Engine(RulesConfig(num_players=10, hand_size=6))
    Engine(RulesConfig(num_players=10, hand_size=5)).reset([1])  # 50 + 4 + 1 fit
