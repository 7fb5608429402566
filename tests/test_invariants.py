"""Invariants under random play, property-based tests and determinism.

Every check names its rule (docs/RULES.md); the per-state invariants live in
``ripmarket_env.games.ripmarket.invariants`` (``check_game``) so the soak and the CLI share them.

- random play over every player count, ``check_game`` after every step (R-2.3, R-6.1,
  R-6.3, R-9.3, R-10.1, R-11.1, R-12.1, R-12.2 and the rest of the checker's list);
- the mask offers exactly the legal actions: every masked-in action is accepted by
  ``Engine.step`` and every masked-out one raises ``IllegalActionError`` and changes
  nothing (R-12.2);
- hypothesis: random player counts, seeds, rule variants and action choices (R-1.4);
- determinism: replay from (seed, actions), batch size / position / global RNG (R-12.4);
- hidden information: a seat's observation never depends on other seats' hands, on
  Shadow hands, deck order or face-down cards (R-12.3, R-7.8);
- ``clone`` is independent and continues identically.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from ripmarket_env.games.ripmarket.cards.loader import default_cards
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ripmarket_env.games.ripmarket import Engine, IllegalActionError, RulesConfig
from ripmarket_env.games.ripmarket.invariants import check_game, scramble_hidden, state_bytes
from ripmarket_env.games.ripmarket.observation import named_view

PLAYER_COUNTS = range(2, 11)


# ----------------------------------------------------------------------------- helpers
def random_actions(eng: Engine, rng: np.random.Generator) -> np.ndarray:
    """A uniformly random legal action per unfinished game (``-1`` for finished ones)."""
    m = eng.legal_mask()
    n = m.sum(axis=1)
    k = (rng.random(eng.batch_size) * n).astype(np.int64)
    a = np.argmax(np.cumsum(m, axis=1) > k[:, None], axis=1).astype(np.int64)
    a[eng.terminated | (n == 0)] = -1
    return a


def step_limit(rules: RulesConfig) -> int:
    """Generous bound on the decisions of one game (R-9.3: at most players x start HP
    rounds; a round has a handful of decisions per seat)."""
    return (rules.num_players * rules.hp + 1) * rules.num_players * 12 + 50


def assert_sound(eng: Engine, g: int, prev=None, what: str = "") -> None:
    bad = check_game(eng, g, prev)
    assert not bad, f"game {g} (seed {eng.seeds[g]}, {eng.rules}) {what}: " + "; ".join(bad)


def probe_legal(eng: Engine) -> None:
    """R-12.2: every masked-in action of every unfinished game is accepted by ``step``
    (on a clone holding one copy of the game per legal action)."""
    m = eng.legal_mask()
    for g in np.flatnonzero(~eng.terminated):
        acts = np.flatnonzero(m[g])
        twin = eng.clone(np.full(len(acts), g))
        twin.step(acts)  # must not raise
        assert (twin.state["steps"] == eng.state["steps"][g] + 1).all()


def probe_illegal(eng: Engine, g: int) -> None:
    """R-12.2: every masked-out action of game ``g`` (and out-of-range ones) raises
    ``IllegalActionError`` naming the game, the action and the legal set, and leaves the
    whole batch's state unchanged."""
    if eng.terminated[g]:
        return
    before = eng.state.tobytes()
    legal = eng.legal_actions(g)
    mask = eng.legal_mask()[g]
    candidates = [a for a in range(eng.num_actions) if not mask[a]] + [eng.num_actions, eng.num_actions + 7, -2]
    for a in candidates:
        acts = np.full(eng.batch_size, -1, dtype=np.int64)
        acts[g] = a
        with pytest.raises(IllegalActionError) as info:
            eng.step(acts)
        err = info.value
        assert (err.game, err.action, err.legal) == (g, a, legal)
        assert eng.state.tobytes() == before, f"illegal action {a} changed the state of the batch"


def assert_hidden(eng: Engine, g: int, rng: np.random.Generator, seats=None) -> bool:
    """R-12.3: for every seat (or the given ones), redealing what it may not see leaves
    its observation identical. Returns True if some redeal changed the state (the check
    was not vacuous)."""
    changed = False
    for v in range(eng.num_players) if seats is None else seats:
        twin = scramble_hidden(eng, g, v, rng)
        changed |= state_bytes(twin.state[0]) != state_bytes(eng.state[g])
        viewers = np.zeros(eng.batch_size, np.int64)
        viewers[g] = v
        mine = eng.observe(viewers)[g]
        theirs = twin.observe([v])[0]
        if not np.array_equal(mine, theirs):
            a, b = named_view(mine, eng.obs_layout), named_view(theirs, eng.obs_layout)
            pieces = [n for n in a if not np.array_equal(a[n], b[n])]
            raise AssertionError(
                f"R-12.3: seat {v}'s observation of game {g} changed when hidden cards were "
                f"redealt (pieces {pieces})"
            )
    return changed


def play_policy(eng: Engine, g: int, choices: list[int], i: int) -> int:
    legal = eng.legal_actions(g)
    return legal[choices[i % len(choices)] % len(legal)]


# ----------------------------------------------------------------------------- random play
@pytest.mark.parametrize("num_players", PLAYER_COUNTS)
def test_random_play_invariants(num_players):
    """30 games per player count (270 in all), uniformly random legal actions;
    ``check_game`` after every step of every game (R-2.3, R-6.1, R-6.3, R-9.3, R-10.1,
    R-11.1, R-12.1, R-12.2), every legal action of every game accepted and one game's
    illegal actions rejected per step (R-12.2); every game ends within players x start HP
    rounds, plus the grace round (R-9.3, R-8.2). Even player counts use the placement rewards (R-11.2)."""
    rules = RulesConfig(num_players=num_players, reward_mode="placement" if num_players % 2 == 0 else "win")
    B = 30
    eng = Engine(rules, batch_size=B)
    eng.reset([1000 * num_players + i for i in range(B)])
    rng = np.random.default_rng(num_players)
    for g in range(B):
        assert_sound(eng, g, what="after reset")
    steps = 0
    while not eng.terminated.all():
        assert steps < step_limit(rules), "games did not end (R-9.3)"
        probe_legal(eng)
        probe_illegal(eng, steps % B)
        prev = eng.state.copy()
        live = np.flatnonzero(~eng.terminated)
        eng.step(random_actions(eng, rng))
        for g in live:
            assert_sound(eng, g, prev[g], f"after step {steps}")
        steps += 1
    # the grace round and the rounds sudden death spared cost no HP
    bound = num_players * rules.hp + int(rules.grace_round) + eng.state["spared_rounds"].astype(int)
    assert (eng.state["round_num"] <= bound).all()
    assert (eng.state["round_num"] < rules.rounds_cap).all()  # never a cap draw
    assert np.abs(eng.rewards().sum(axis=1)).max() < 1e-5


@pytest.mark.parametrize("num_players", [2, 3, 5, 7, 10])
def test_finished_games_ignore_actions_in_random_play(num_players):
    """Stepping a batch until every game is over: finished games stay exactly as they
    ended (only the one-step reward is cleared) (R-11.3)."""
    eng = Engine(RulesConfig(num_players=num_players), batch_size=16)
    eng.reset(list(range(16)))
    rng = np.random.default_rng(0)
    finals = {}
    while not eng.terminated.all():
        was = eng.terminated.copy()
        rewards, term = eng.step(random_actions(eng, rng))
        for g in np.flatnonzero(term & ~was):
            assert np.allclose(rewards[g], eng.rewards()[g])
            finals[g] = eng.state[g].copy()
        for g in np.flatnonzero(was):
            assert not rewards[g].any()
    for g, rec in finals.items():
        for f in rec.dtype.names:
            if f != "step_rewards":
                assert np.array_equal(rec[f], eng.state[g][f]), f
    # Any action, even out of range, is ignored by a finished game.
    before = eng.state.copy()
    eng.step(np.full(16, 999))
    for f in before.dtype.names:
        if f != "step_rewards":
            assert np.array_equal(before[f], eng.state[f]), f
    assert not eng.state["step_rewards"].any()


# ----------------------------------------------------------------------------- hypothesis
@st.composite
def rules_variants(draw):
    n = draw(st.integers(2, 10))
    kw = dict(
        num_players=n,
        tie_rule=draw(st.sampled_from(["all", "earliest"])),
        ghost_phase=draw(st.sampled_from(["in_turn", "first"])),
        reward_mode=draw(st.sampled_from(["win", "placement"])),
        start_hp=draw(st.sampled_from([None, 1, 2, 3])),
        market_size=draw(st.sampled_from([None, 1, 2, 3, 4])),
        ghost_cap=draw(st.sampled_from([None, 1, 3, 5])),
        hand_size=draw(st.sampled_from([3, 1, 6])),
        max_rounds=draw(st.sampled_from([None, None, None, 1, 2, 3])),
        no_survivor=draw(st.sampled_from(["sudden_death", "share_win"])),
        deflect_target=draw(st.sampled_from(["not_weaker", "stronger", "any"])),
        opening_bonus=draw(st.sampled_from(["first_half", "first_player", "none"])),
        token_tie=draw(st.sampled_from(["latest", "earliest"])),
    )
    if n == 2:
        kw["epilogue"] = draw(st.booleans())
    rules = RulesConfig(**kw)
    if n * rules.hand_size + rules.market + 1 > default_cards().living_deck_size:
        # a deal the Living Deck cannot hold is refused by the engine (tested in
        # test_engine_api); the variants drawn here are the playable ones
        rules = RulesConfig(**{**kw, "hand_size": 3})
    return rules


CHOICES = st.lists(st.integers(0, 1000), min_size=1, max_size=40)
SEEDS = st.integers(0, 2**63 - 1)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rules=rules_variants(), seed=SEEDS, choices=CHOICES)
def test_property_invariants_and_mask(rules, seed, choices):
    """Any rules variant (R-1.4), any seed, any legal actions: every invariant holds after
    every step, the mask is exactly the legal set (R-12.2), every decision is a real
    choice (R-12.1), the game ends (R-9.3) and rewards sum to zero (R-11.1/R-11.2)."""
    eng = Engine(rules, batch_size=1)
    eng.reset([seed])
    assert_sound(eng, 0, what="after reset")
    i = 0
    while not eng.terminated[0]:
        assert i < step_limit(rules), "the game did not end (R-9.3)"
        probe_legal(eng)
        probe_illegal(eng, 0)
        prev = eng.state.copy()
        eng.step([play_policy(eng, 0, choices, i)])
        assert_sound(eng, 0, prev[0], f"after step {i}")
        i += 1
    assert eng.state["round_num"][0] <= (rules.num_players * rules.hp + int(rules.grace_round)
                                         + int(eng.state["spared_rounds"][0]))
    assert abs(float(eng.rewards()[0].sum())) < 1e-5


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rules=rules_variants(), seed=SEEDS, choices=CHOICES, noise=st.integers(0, 2**32 - 1))
def test_property_replay_and_hidden_information(rules, seed, choices, noise):
    """R-12.4: replaying (seed, actions) reproduces every state byte for byte, whatever
    the global RNG does in between. R-12.3: at every step, redealing what a seat may not
    see leaves that seat's observation unchanged."""
    eng = Engine(rules, batch_size=1)
    eng.reset([seed])
    rng = np.random.default_rng(noise)
    trace = [state_bytes(eng.state)]
    actions = []
    i = 0
    while not eng.terminated[0]:
        assert i < step_limit(rules)
        assert_hidden(eng, 0, rng, seats=[i % rules.num_players, int(eng.current_player()[0])])
        a = play_policy(eng, 0, choices, i)
        actions.append(a)
        eng.step([a])
        trace.append(state_bytes(eng.state))
        i += 1
    np.random.seed(noise % 2**32)
    random.seed(noise)
    again = Engine(rules, batch_size=1)
    again.reset([seed])
    assert state_bytes(again.state) == trace[0]
    for j, a in enumerate(actions):
        np.random.random(3)
        random.random()
        again.step([a])
        assert state_bytes(again.state) == trace[j + 1], f"replay diverged at step {j}"


# ----------------------------------------------------------------------------- determinism
def _solo_trace(rules: RulesConfig, seed: int, policy_seed: int) -> tuple[list[bytes], list[int]]:
    eng = Engine(rules, batch_size=1)
    eng.reset([seed])
    pol = np.random.default_rng(policy_seed)
    trace, actions = [state_bytes(eng.state[0])], []
    while not eng.terminated[0]:
        a = int(pol.choice(eng.legal_actions(0)))
        actions.append(a)
        eng.step([a])
        trace.append(state_bytes(eng.state[0]))
    return trace, actions


@pytest.mark.parametrize("num_players", [2, 4, 7, 10])
@pytest.mark.parametrize("batch_size,position", [(1, 0), (5, 0), (5, 2), (9, 8)])
def test_same_seed_same_game_any_batch_position_or_global_rng(num_players, batch_size, position):
    """R-12.4 (RLCard-style): a game's seed and actions fix it completely: the same
    state bytes at every step whatever the batch size, the game's row, the other games
    in the batch, and global numpy/python RNG noise interleaved between steps."""
    rules = RulesConfig(num_players=num_players)
    seed = 424242 + num_players
    ref, ref_actions = _solo_trace(rules, seed, policy_seed=7)

    eng = Engine(rules, batch_size=batch_size)
    seeds = [seed if g == position else 9000 + 13 * g for g in range(batch_size)]
    eng.reset(seeds)
    rng_other = np.random.default_rng(123)
    assert state_bytes(eng.state[position]) == ref[0]
    for t, a in enumerate(ref_actions):
        # global RNG noise between steps must not matter
        np.random.seed(t)
        np.random.random(t % 5 + 1)
        random.seed(t * 31)
        random.shuffle(list(range(10)))
        acts = random_actions(eng, rng_other)
        acts[position] = a
        eng.step(acts)
        assert state_bytes(eng.state[position]) == ref[t + 1], f"diverged at step {t}"
        # restart finished neighbours so the batch stays busy around the game
        for g in np.flatnonzero(eng.terminated):
            if g != position:
                eng.reset([int(rng_other.integers(1 << 40))], games=[g])


def test_reset_of_one_row_matches_a_fresh_game():
    """R-12.4: resetting one row of a batch mid-play gives the same game as a fresh engine."""
    rules = RulesConfig(num_players=5)
    ref, actions = _solo_trace(rules, 77, policy_seed=3)
    eng = Engine(rules, batch_size=4)
    eng.reset([1, 2, 3, 4])
    rng = np.random.default_rng(0)
    for _ in range(7):
        eng.step(random_actions(eng, rng))
    eng.reset([77], games=[2])
    assert state_bytes(eng.state[2]) == ref[0]
    for t, a in enumerate(actions):
        acts = random_actions(eng, rng)
        acts[2] = a
        eng.step(acts)
        assert state_bytes(eng.state[2]) == ref[t + 1]


def test_different_seeds_give_different_games():
    """R-1.3/R-12.4: the seed drives the shuffles (sanity check of the determinism tests)."""
    eng = Engine(RulesConfig(num_players=4), batch_size=8)
    eng.reset(list(range(8)))
    decks = {eng.state["deck"][g].tobytes() for g in range(8)}
    assert len(decks) == 8


# ----------------------------------------------------------------------------- hidden info
@pytest.mark.parametrize("num_players", PLAYER_COUNTS)
def test_observation_never_depends_on_hidden_cards(num_players):
    """R-12.3: at every step of random play, for one game and every seat, redealing the
    other seats' hands and Shadow hands (same sizes), their face-down cards and the deck
    order leaves the seat's observation identical."""
    B = 8
    eng = Engine(RulesConfig(num_players=num_players), batch_size=B)
    eng.reset([50 + i for i in range(B)])
    rng = np.random.default_rng(num_players)
    changed = 0
    t = 0
    while not eng.terminated.all():
        live = np.flatnonzero(~eng.terminated)
        changed += assert_hidden(eng, int(live[t % len(live)]), rng)
        eng.step(random_actions(eng, rng))
        t += 1
    assert changed > 0, "no redeal changed anything: the check was vacuous"


def test_face_down_card_hidden_until_revealed():
    """R-7.8/R-12.3: other seats see that a seat played face-down, not the card; its owner
    sees it; when the game ends at a resolution the revealed card is public."""
    seen_hidden = seen_revealed = 0
    for num_players in (3, 6):
        B = 24
        eng = Engine(RulesConfig(num_players=num_players), batch_size=B)
        lay = eng.obs_layout
        eng.reset([7000 + i for i in range(B)])
        rng = np.random.default_rng(1)
        last_fd = {}
        while not eng.terminated.all():
            s = eng.state
            games, seats = np.nonzero(s["face_down"][:, :num_players] & ~eng.terminated[:, None])
            if len(games):
                views = [eng.observe(np.full(B, v)) for v in range(num_players)]
                for g, q in zip(games, seats):
                    d = int(s["played"][g, q])
                    last_fd[g] = (int(s["round_num"][g]), int(q), d)
                    for v in range(num_players):
                        obs = named_view(views[v][g], lay)
                        rel = (q - v) % num_players
                        assert obs["face_down"][rel, 0] == 1.0
                        if v == q:
                            assert obs["played"][rel, d] == 1.0
                        else:
                            assert not obs["played"][rel].any(), "a face-down card leaked (R-7.8)"
                    seen_hidden += 1
            was = eng.terminated.copy()
            eng.step(random_actions(eng, rng))
            for g in np.flatnonzero(eng.terminated & ~was):
                rnd, q, d = last_fd.get(g, (-1, 0, 0))
                if rnd == int(s["round_num"][g]) and s["played"][g, q] == d and not s["face_down"][g, q]:
                    v = (q + 1) % num_players
                    obs = named_view(eng.observe(np.full(B, v))[g], lay)
                    assert obs["played"][(q - v) % num_players, d] == 1.0
                    assert obs["face_down"][(q - v) % num_players, 0] == 0.0
                    seen_revealed += 1
    assert seen_hidden > 0 and seen_revealed > 0


@pytest.mark.parametrize("max_rounds", [None, 1, 2])
def test_epilogue_follows_a_single_living_winner(max_rounds):
    """R-9.4: with the 2-player epilogue, a game won by one living player gets one
    haunting round (Ghost first, no damage) that changes neither result nor rewards;
    a game ending otherwise (max_rounds draw with both alive, R-9.3) has no epilogue."""
    rules = RulesConfig(num_players=2, epilogue=True, max_rounds=max_rounds)
    B = 24
    eng = Engine(rules, batch_size=B)
    eng.reset([300 + i for i in range(B)])
    rng = np.random.default_rng(2)
    at_start = {}
    while not eng.terminated.all():
        prev = eng.state.copy()
        live = np.flatnonzero(~eng.terminated)
        eng.step(random_actions(eng, rng))
        for g in live:
            assert_sound(eng, g, prev[g])
            if eng.state["epilogue"][g] and g not in at_start:
                at_start[g] = (eng.state["final_rewards"][g].copy(), eng.state["winners"][g].copy(),
                               eng.state["hp"][g].copy())
                assert not eng.terminated[g] and eng.state["alive"][g, :2].sum() == 1
    s = eng.state
    for g in range(B):
        one_winner = s["alive"][g, :2].sum() == 1
        assert bool(s["epilogue"][g]) == bool(one_winner), f"game {g}: epilogue without a single living winner"
        if g in at_start:
            rew, win, hp = at_start[g]
            assert np.array_equal(s["final_rewards"][g], rew) and np.array_equal(s["winners"][g], win)
            assert np.array_equal(s["hp"][g], hp)  # no damage in the epilogue
    if max_rounds is None:
        assert at_start, "no epilogue was played"


# ----------------------------------------------------------------------------- clone
@pytest.mark.parametrize("num_players", [2, 6, 10])
def test_clone_is_independent_and_continues_identically(num_players):
    """``clone`` copies games: stepping the clone leaves the original untouched, and both
    continue identically under the same actions (R-12.4)."""
    eng = Engine(RulesConfig(num_players=num_players), batch_size=6)
    eng.reset([31 + i for i in range(6)])
    rng = np.random.default_rng(5)
    for _ in range(5):
        eng.step(random_actions(eng, rng))
    snap = state_bytes(eng.state)
    twin = eng.clone()
    part = eng.clone([4, 1])
    assert part.batch_size == 2 and state_bytes(part.state[0]) == state_bytes(eng.state[4])
    moves = []
    while not twin.terminated.all():
        a = random_actions(twin, rng)
        moves.append(a)
        twin.step(a)
        part.step(a[[4, 1]])
    assert state_bytes(eng.state) == snap, "stepping a clone changed the original"
    for a in moves:
        eng.step(a)
    assert state_bytes(eng.state) == state_bytes(twin.state)
    assert state_bytes(part.state[0]) == state_bytes(eng.state[4])
    assert state_bytes(part.state[1]) == state_bytes(eng.state[1])
    # and the other way round: stepping the original does not touch an older clone
    eng.reset([1, 2, 3, 4, 5, 6])
    assert state_bytes(twin.state) != state_bytes(eng.state)
    assert all(not check_game(twin, g) for g in range(6))


# ----------------------------------------------------------------------------- variants
@pytest.mark.parametrize("reward_mode", ["win", "placement"])
@pytest.mark.parametrize("num_players", [2, 3, 7])
def test_rewards_sum_to_zero(reward_mode, num_players):
    """R-11.1/R-11.2: final rewards sum to zero in both reward modes (and the checker's
    reward-mode formulas hold)."""
    eng = Engine(RulesConfig(num_players=num_players, reward_mode=reward_mode), batch_size=24)
    eng.reset(list(range(24)))
    rng = np.random.default_rng(num_players)
    paid = np.zeros((24, num_players))
    while not eng.terminated.all():
        r, _ = eng.step(random_actions(eng, rng))
        paid += r
    assert np.abs(paid.sum(axis=1)).max() < 1e-5
    assert np.allclose(paid, eng.rewards())
    for g in range(24):
        assert_sound(eng, g)


@pytest.mark.parametrize("num_players", [2, 4, 9])
def test_max_rounds_cap_is_a_draw_among_the_living(num_players):
    """R-9.3: a tiny max_rounds ends the game as a shared draw among the living; the
    checker accepts that ending only because the cap is below players x start HP."""
    rules = RulesConfig(num_players=num_players, max_rounds=1)
    eng = Engine(rules, batch_size=8)
    eng.reset(list(range(8)))
    rng = np.random.default_rng(0)
    while not eng.terminated.all():
        prev = eng.state.copy()
        live = np.flatnonzero(~eng.terminated)
        eng.step(random_actions(eng, rng))
        for g in live:
            assert_sound(eng, g, prev[g])
    s = eng.state
    assert (s["round_num"] == 1).all()
    assert np.array_equal(s["winners"][:, :num_players], s["alive"][:, :num_players])
