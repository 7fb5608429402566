"""LookaheadAgent (agents/ripmarket/lookahead.py): the trained bot's favourites checked one
turn ahead against imitations of the heuristics and judged by its critic.

Its strength is measured with ``ripmarket evaluate ppo-lookahead`` (docs/TRAINING.md,
Decision-time lookahead), its speed with ``ripmarket bench --suite bot``; these tests check
what it plays: legal actions at every table size, only the network's candidates, the
best of its own values, the network alone where nothing can change (a Ghost, R-5.5, R-11.2,
one legal action), the reward its critic was trained for, determinism, and clear errors.
"""

from __future__ import annotations

import numpy as np
import pytest

import agents
from agents.ripmarket.lookahead import LookaheadAgent
from agents.ripmarket.search import public_state
from test_search import play_games, random_states


@pytest.fixture(autouse=True)
def _need_bot():
    if "ppo-lookahead" not in agents.names():
        pytest.fail("ppo-lookahead needs agents/checkpoints/ppo.zip and zoo-bc-ppo-stage3.pt, which ship")


@pytest.mark.parametrize("P", [2, 6, 10])
def test_lookahead_plays_legal_actions_at_every_table_size(P):
    _, taken, agent = play_games(P, games=2, seed=P, make_agent=lambda: agents.make("ppo-lookahead", n=4, seed=P),
                                 opponents=agents.make("greedy", seed=1))
    assert len(taken) > 10


@pytest.mark.parametrize("margin", [0.0, 0.05])
def test_candidates_are_the_networks_favourites_and_the_best_value_is_played(margin):
    """The best mean value is played; with a ``margin``, only when it beats the network's
    favourite (the first candidate) by at least that much."""
    net = agents.make("ppo")
    agent = LookaheadAgent(n=6, top_k=2, seed=3, margin=margin)
    looked = 0
    for _, _, o, m in random_states(6, games=3, steps=60, seed=8, every=3):
        a = agent.act(o, m)
        assert m[a]
        if agent.last is None:
            continue
        looked += 1
        legal = np.flatnonzero(m)
        z = net.logits(o[None])[0][legal]
        assert agent.last["actions"].tolist() == legal[np.argsort(-z, kind="stable")[:2]].tolist()
        q = agent.last["values"]
        assert q.shape == (2,) and np.all(np.isfinite(q)) and np.all(np.abs(q) <= 1.0 + 1e-6)
        best = int(np.argmax(q))
        if q[best] - q[0] >= margin:
            assert a == agent.last["actions"][best]
        else:  # a better value, but by less than the margin: the favourite
            assert a == agent.last["actions"][0]
    assert looked > 5


def test_a_margin_keeps_the_favourite_against_small_gains():
    """With the largest margin (2: more than any two values in [-1, 1] differ) the
    favourite is played wherever the lookahead found another candidate better."""
    plain, wary = LookaheadAgent(n=6, top_k=3, seed=4, margin=0.0), LookaheadAgent(n=6, top_k=3, seed=4, margin=2.0)
    overruled = 0
    for _, _, o, m in random_states(6, games=3, steps=60, seed=9, every=3):
        a, b = plain.act(o, m), wary.act(o, m)
        if plain.last is not None:
            assert np.array_equal(plain.last["values"], wary.last["values"])  # the same seed: the same samples
            assert b == plain.last["actions"][0]
            overruled += a != b
    assert overruled > 0


def test_ghosts_forced_moves_and_top_k_one_play_the_network():
    """A Ghost's own result is fixed (R-5.5, R-11.1, R-11.2): no lookahead, the network's
    favourite; so with one legal action, and with ``top_k=1`` everywhere."""
    net = agents.make("ppo")
    agent = LookaheadAgent(n=4, seed=0)
    alone = LookaheadAgent(n=4, top_k=1, seed=0)
    ghosts = 0
    for _, _, o, m in random_states(4, games=6, steps=400, seed=2, every=2):
        favourite = int(net.act(o, m))
        assert alone.act(o, m) == favourite and alone.last is None
        if np.flatnonzero(m).size == 1 or not public_state(o, m).viewer_alive:
            ghosts += not public_state(o, m).viewer_alive
            assert agent.act(o, m) == favourite and agent.last is None
    assert ghosts > 0, "no Ghost decision in the sampled games"


def test_max_turns_bounds_the_lookahead_and_falls_back_to_the_network():
    """A decision whose next turn is more than ``max_turns`` turns of the other seats away
    plays the network's favourite; nearer ones are looked at as without the bound."""
    net = agents.make("ppo")
    free, near = LookaheadAgent(n=4, seed=6), LookaheadAgent(n=4, seed=6, max_turns=2)
    gave_up = looked = 0
    for _, _, o, m in random_states(6, games=3, steps=60, seed=4, every=3):
        a, b = free.act(o, m), near.act(o, m)
        if near.last is None and free.last is not None:
            gave_up += 1
            assert b == int(net.act(o, m))
        elif near.last is not None:
            looked += 1
            assert a == b and np.array_equal(free.last["values"], near.last["values"])
    assert gave_up > 0 and looked > 0


def test_leaves_are_valued_in_the_reward_the_critic_was_trained_for():
    """ppo plays ppo-at-6p (placement reward, R-11.2) at 6 players and ppo.zip (win, R-11.1)
    at 5: the rebuilt game pays the reward of the network deciding at that table."""
    agent = LookaheadAgent(n=2, seed=0)
    for P, mode in ((6, agents.make("ppo").network_for(6).reward_mode), (5, "win")):
        _, _, o, m = next(iter(random_states(P, games=1, steps=3, seed=1)))
        assert agent._engine(public_state(o, m)).rules.reward_mode == mode
    assert agents.make("ppo").network_for(6).reward_mode == "placement"


def test_values_route_rows_to_the_network_of_their_table():
    bot = agents.make("ppo")
    obs = {P: np.stack([o for _, _, o, _ in random_states(P, games=2, steps=2, seed=P)]) for P in (3, 6)}
    both = np.concatenate([obs[3], obs[6]])
    v = bot.values(both)
    assert np.allclose(v[: len(obs[3])], bot.network_for(3).values(obs[3]), atol=1e-5)
    assert np.allclose(v[len(obs[3]):], bot.network_for(6).values(obs[6]), atol=1e-5)
    assert not np.allclose(bot.network_for(3).values(obs[6]), bot.network_for(6).values(obs[6]), atol=1e-3)


def test_lookahead_is_deterministic_with_a_seed_and_self_model_works():
    states = [(o.copy(), m.copy()) for _, _, o, m in random_states(6, games=2, steps=40, seed=5, every=4)]
    for opponents in ("zoo", "self"):
        a1, a2 = LookaheadAgent(n=4, seed=9, opponents=opponents), LookaheadAgent(n=4, seed=9, opponents=opponents)
        for o, m in states:
            assert a1.act(o, m) == a2.act(o, m)
            if a1.last is not None:
                assert np.array_equal(a1.last["values"], a2.last["values"])


@pytest.mark.parametrize("kw, match", [
    ({"n": 0}, "n must be"), ({"top_k": True}, "top_k must be"), ({"opponents": "heuristics"}, "opponents must be"),
    ({"sure": 0}, "sure must be"), ({"margin": -0.1}, "margin must be"), ({"max_turns": 0}, "max_turns must be"), ({"margin": "big"}, "margin must be"), ({"net": "greedy"}, "logits, values"), ({"zoo": "no-such-zoo"}, "no-such-zoo"),
])
def test_bad_settings_are_refused_with_what_is_allowed(kw, match):
    with pytest.raises(Exception, match=match):
        LookaheadAgent(**kw)


# ------------------------------------------------------------------ the compiled play-ahead
@pytest.mark.parametrize("P", [3, 8])
def test_the_compiled_lookahead_decides_as_the_python_loop(P):
    """agents.ripmarket.playahead and the networks as FrozenMLPs (``compiled=True``, the
    default) choose what the Python loop with torch chooses, from the same values."""
    fast = LookaheadAgent(n=4, seed=P)
    slow = LookaheadAgent(n=4, seed=P, compiled=False)
    looked = 0
    for _, _, o, m in random_states(P, games=2, steps=70, seed=30 + P, every=2):
        a = fast.act(o, m)
        assert a == slow.act(o, m)
        assert (fast.last is None) == (slow.last is None)
        if fast.last is not None:
            looked += 1
            assert fast.last["actions"].tolist() == slow.last["actions"].tolist()
            np.testing.assert_allclose(fast.last["values"], slow.last["values"], atol=1e-4)
    assert looked > 5


def _sampled_games(P: int, seed: int, n: int = 6):
    """A lookahead's sampled games of a real decision at a table of ``P``, the candidate
    played, and a style per seat: what the play-ahead loop starts from."""
    from agents.ripmarket.search import _seeds, determinize, rows_engine

    agent = LookaheadAgent(n=n, seed=seed)
    for _, _, o, m in random_states(P, games=1, steps=200, seed=seed, every=3):
        pub = public_state(o, m)
        if not pub.viewer_alive:
            continue
        det = determinize(pub, n, _seeds(agent.rng, n))
        sim = rows_engine(agent._engine(pub), det)
        sim.step(np.full(n, int(np.flatnonzero(m)[0]), np.int64))
        if (sim.current_player() <= 0).all():  # seat 0 decides again at once: nothing to play ahead
            continue
        styles = agent.rng.integers(0, agent._zoo.n_styles, size=(n, P))
        return agent, sim, styles
    raise AssertionError("no decision of a living seat")


@pytest.mark.parametrize("P", [4, 10])
def test_play_ahead_reaches_the_games_of_the_python_loop(P):
    """The compiled loop plays the other seats to seat 0's next decision (or the end)
    exactly as the Python loop: every field of every game row is the same."""
    agent, sim, styles = _sampled_games(P, seed=P)
    twin = sim.clone()
    turns = agent._compiled.play(sim, styles)
    agent._play_ahead(twin, styles)
    assert turns > 0
    assert sim.state.tobytes() == twin.state.tobytes()
    live = ~sim.terminated.astype(bool)
    assert (sim.current_player()[live] == 0).all()  # every unfinished game waits for seat 0


def test_play_ahead_stops_at_max_turns_and_max_steps():
    """``max_turns``: -1 when more turns are needed (the lookahead then plays the
    network's favourite); ``max_steps``: the games stop there, part-played."""
    agent, sim, styles = _sampled_games(8, seed=5)
    full = sim.clone()
    turns = agent._compiled.play(full, styles)
    assert turns >= 2
    assert agent._compiled.play(sim.clone(), styles, max_turns=turns - 1) == -1
    assert agent._compiled.play(sim.clone(), styles, max_turns=turns) == turns
    part = sim.clone()
    assert agent._compiled.play(part, styles, max_steps=1) == 1
    assert part.state.tobytes() != full.state.tobytes()


def test_frozen_networks_compute_what_torch_computes():
    """agents.sparse.FrozenMLP: the shipped bot's actor and critic at every network it
    holds, and the distilled zoo, equal to their torch forms up to float rounding."""
    import torch

    from agents.sparse import FrozenMLP

    bot = agents.make("ppo")
    obs = np.stack([o for _, _, o, _ in random_states(6, games=2, steps=12, seed=2)])
    for net in (bot.default, *bot.by_count.values()):
        first, rest, _ = net.sparse_parts()
        np.testing.assert_allclose(FrozenMLP(first, rest)(obs), net.logits(obs), atol=1e-4)
        first, rest = net.value_parts()
        np.testing.assert_allclose(FrozenMLP(first, rest)(obs)[:, 0], net.values(obs), atol=1e-5)
        with torch.no_grad():  # the value_parts path is the critic SB3 computes
            ref = net.policy.predict_values(torch.as_tensor(obs)).numpy()[:, 0]
        np.testing.assert_allclose(net.values(obs), ref, atol=1e-5)
    with pytest.raises(ValueError, match="Linear, ReLU and Tanh"):
        FrozenMLP(torch.nn.Linear(3, 2), torch.nn.Sequential(torch.nn.Sigmoid()))


def test_samples_follow_the_table_size_unless_given(monkeypatch):
    """``n=None`` (the default): SAMPLES by the table's size (fewer at large tables, where
    more turns are played ahead); a given ``n`` at every size."""
    import agents.ripmarket.lookahead as la

    assert [la.SAMPLES[p] for p in range(2, 11)] == [16, 16, 16, 16, 16, 12, 8, 8, 8]
    seen = []
    real = la.determinize
    monkeypatch.setattr(la, "determinize", lambda pub, n, seeds: seen.append(n) or real(pub, n, seeds))
    for P, n, want in ((8, None, 8), (4, None, 16), (8, 5, 5)):
        agent = LookaheadAgent(n=n, seed=1)
        assert agent.samples(P) == want
        seen.clear()
        for _, _, o, m in random_states(P, games=1, steps=30, seed=P, every=3):
            agent.act(o, m)
        assert seen and set(seen) == {want}


def test_the_compiled_loop_takes_only_what_it_can_compute():
    """CompiledImitations takes Linear layers with ReLU between them and an input for the
    styles; anything else is refused with what it takes (the lookahead then plays the
    Python loop)."""
    import torch.nn as nn

    from agents.ripmarket.playahead import CompiledImitations

    with pytest.raises(ValueError, match="Linear layers with ReLU"):
        CompiledImitations(nn.Sequential(nn.Linear(20, 8), nn.Tanh(), nn.Linear(8, 4)), 5)
    with pytest.raises(ValueError, match="too few for an observation and 5 styles"):
        CompiledImitations(nn.Sequential(nn.Linear(5, 8), nn.ReLU(), nn.Linear(8, 4)), 5)
    ok = CompiledImitations(nn.Sequential(nn.Linear(20, 8), nn.ReLU(), nn.Linear(8, 6), nn.ReLU(), nn.Linear(6, 4)), 5)
    assert ok.w1.shape == (20, 8) and ok.shapes.tolist() == [8, 6, 6, 4] and ok.flat.size == 8 * 6 + 6 + 6 * 4 + 4


def test_the_play_ahead_products_run_on_one_blas_thread(monkeypatch):
    """``agents.ripmarket.playahead.one_blas_thread``: scipy's OpenBLAS (the BLAS of numba's
    ``np.dot``) runs on one thread inside the block and gets its thread count back after it,
    also when the block raises; a user's ``OPENBLAS_NUM_THREADS`` is left to rule."""
    import pytest

    from agents.ripmarket import playahead

    fns = playahead._blas_threads()
    if fns is None:
        pytest.fail("scipy's OpenBLAS thread setting was not found (scipy is a dependency of numba's np.dot)")
    get, set_ = fns
    monkeypatch.delenv("OPENBLAS_NUM_THREADS", raising=False)
    before = get()
    set_(2)
    try:
        with playahead.one_blas_thread():
            assert get() == 1
        assert get() == 2
        with pytest.raises(RuntimeError), playahead.one_blas_thread():
            raise RuntimeError("the block fails")
        assert get() == 2
        monkeypatch.setenv("OPENBLAS_NUM_THREADS", "2")
        with playahead.one_blas_thread():
            assert get() == 2
    finally:
        set_(before)
