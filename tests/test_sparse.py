"""First layers on the observation's non-zero entries (agents.sparse, arch "sparse"): the
same numbers as the dense layers, forward and backward."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import torch  # noqa: E402

from agents.sparse import csr, sparse_linear  # noqa: E402


def _sparse_batch(rng, n, d, density=0.06):
    x = rng.standard_normal((n, d)).astype(np.float32)
    x[rng.random((n, d)) > density] = 0.0
    return x


@settings(max_examples=30, deadline=None)
@given(n=st.integers(1, 40), d=st.one_of(st.integers(1, 60), st.integers(100, 400)), seed=st.integers(0, 2**31 - 1),
       density=st.sampled_from([0.0, 0.05, 0.5, 1.0]))
def test_csr_matches_numpy(n, d, seed, density):
    x = _sparse_batch(np.random.default_rng(seed), n, d, density)
    cols, vals, offsets = csr(x)
    rows, c = np.nonzero(x)
    assert np.array_equal(cols, c) and np.array_equal(vals, x[rows, c])
    assert np.array_equal(offsets, np.searchsorted(rows, np.arange(n)))


@pytest.mark.parametrize("extra", [False, True])
def test_sparse_linear_equals_the_dense_layer(extra):
    rng = np.random.default_rng(1)
    x = _sparse_batch(rng, 50, 90)
    x[7] = 0.0  # a row with no non-zero at all
    k = 3 if extra else 0
    lin = torch.nn.Linear(90 + k, 16)
    styles = rng.integers(0, 3, 50) if extra else None
    xin = np.concatenate([x, np.eye(3, dtype=np.float32)[styles]], 1) if extra else x
    with torch.no_grad():
        want = lin(torch.from_numpy(xin)).numpy()
        got = sparse_linear(x, lin, extra=styles).numpy()
        assert np.allclose(got, want, atol=1e-5)
        lin.weight.mul_(2.0)  # an in-place change of the weights is seen (no stale cache)
        assert np.allclose(sparse_linear(x, lin, extra=styles).numpy(), lin(torch.from_numpy(xin)).numpy(), atol=1e-5)
    with pytest.raises(ValueError, match="2-D"):
        sparse_linear(x[0], lin)


def test_sparse_extractor_forward_and_backward_match_dense():
    from gymnasium import spaces

    from train.selfplay import SparseExtractor

    rng = np.random.default_rng(2)
    x = torch.from_numpy(_sparse_batch(rng, 32, 200))
    ex = SparseExtractor(spaces.Box(-5, 5, (200,), np.float32), hidden=24)
    w = ex.linear.weight.detach().clone().requires_grad_(True)
    b = ex.linear.bias.detach().clone().requires_grad_(True)
    out, ref = ex(x), torch.relu(x @ w.T + b)
    assert torch.allclose(out, ref, atol=1e-5)
    g = torch.from_numpy(rng.standard_normal(out.shape).astype(np.float32))
    (out * g).sum().backward()
    (ref * g).sum().backward()
    assert torch.allclose(ex.linear.weight.grad, w.grad, atol=1e-4)
    assert torch.allclose(ex.linear.bias.grad, b.grad, atol=1e-4)


def test_batch_agents_use_the_sparse_layer_and_agree_with_the_dense_networks():
    import agents
    from ripmarket_env.games.ripmarket import Engine, RulesConfig
    from train.distill import _inputs

    eng = Engine(RulesConfig(num_players=6), batch_size=16)
    eng.reset(list(range(16)))
    obs = eng.observe()
    bc = agents.make("shark-bc")
    styles = np.full(16, bc.style_index)
    with torch.no_grad():
        dense = bc.net(_inputs(obs, styles, bc.n_styles)).numpy()
        from train.distill import _forward

        assert np.allclose(_forward(bc.net, obs, styles).numpy(), dense, atol=1e-4)
    bot = agents.make("ppo-6p")  # the shipped bot, trained on the packaged cards
    p = bot.policy
    with torch.no_grad():
        t = torch.from_numpy(obs)
        ref = p.action_net(p.mlp_extractor.forward_actor(p.extract_features(t, p.pi_features_extractor))).numpy()
    assert np.allclose(bot.logits(obs), ref, atol=1e-4) and bot._sparse


@settings(max_examples=20, deadline=None)
@given(n=st.integers(1, 30), d=st.integers(1, 50), h=st.integers(1, 9), seed=st.integers(0, 2**31 - 1))
def test_compiled_product_and_row_csr_match_dense(n, d, h, seed):
    from agents.sparse import csr_rows, csr_t_matmul

    rng = np.random.default_rng(seed)
    x = _sparse_batch(rng, n, d, 0.2)
    g = rng.standard_normal((n, h)).astype(np.float32)
    cols, vals, offsets = csr(x)
    rows = rng.permutation(n)[: max(1, n // 2)]
    c2, v2, o2 = csr_rows(x, rows)
    assert all(np.array_equal(a, b) for a, b in zip((c2, v2, o2), csr(x[rows])))
    gw = np.zeros((d, h), np.float32)
    csr_t_matmul(cols, vals, offsets, len(cols), g, gw)
    assert np.allclose(gw, x.T @ g, atol=1e-4)


@pytest.mark.parametrize("threads", [2, 3])
def test_the_threaded_weight_gradient_is_the_serial_one_bit_for_bit(monkeypatch, threads):
    """A product large enough for ``csr_t_matmul``'s column blocks in threads: every entry
    the same float as the serial kernel's (the same sum in the same order)."""
    import agents.sparse as sp

    rng = np.random.default_rng(threads)
    x = _sparse_batch(rng, 3000, 500, 0.1)
    g = rng.standard_normal((3000, 200)).astype(np.float32)
    cols, vals, offsets = csr(x)
    assert len(cols) * g.shape[1] >= sp._PARALLEL_WORK
    serial = np.full((500, 200), 0.5, np.float32)
    sp._csr_t_product(cols, vals, offsets, len(cols), g, serial)
    monkeypatch.setattr(sp, "_threads", lambda: threads)
    calls = []
    real = sp._csr_t_product
    monkeypatch.setattr(sp, "_csr_t_product", lambda *a: calls.append(a[4].shape) or real(*a))
    threaded = np.full((500, 200), 0.5, np.float32)
    sp.csr_t_matmul(cols, vals, offsets, len(cols), g, threaded)
    assert len(calls) == threads and sum(c[1] for c in calls) == 200
    assert np.array_equal(threaded, serial)
    assert np.allclose(threaded, 0.5 + x.T @ g, atol=1e-3)


@settings(max_examples=20, deadline=None)
@given(n=st.integers(1, 30), d=st.integers(1, 50), seed=st.integers(0, 2**31 - 1),
       density=st.sampled_from([0.0, 0.1, 1.0]))
def test_rows_of_a_csr_match_the_rows_of_the_dense_array(n, d, seed, density):
    from agents.sparse import csr_rows, select_rows

    rng = np.random.default_rng(seed)
    x = _sparse_batch(rng, n, d, density)
    rows = rng.permutation(n)[: rng.integers(0, n + 1)]
    shift = rng.integers(0, 100, len(rows))
    extra = np.where(rng.random(len(rows)) < 0.5, -1, rng.integers(0, 500, len(rows)))
    got = select_rows(csr(x), rows, shift, extra)
    want = csr_rows(x, rows, shift, extra)
    assert all(np.array_equal(a, b) for a, b in zip(got, want))


def test_gather_csr_gives_the_observations_and_their_nonzeros():
    """The engine's gather_csr: the same observations, masks and deciders as gather, and
    each observation's non-zeros as CSR; -1 when the buffer cannot hold them."""
    from ripmarket_env.core.engine import kernel_view
    from ripmarket_env.games.ripmarket import SPEC, Engine, RulesConfig

    eng = Engine(RulesConfig(num_players=5), batch_size=24)
    eng.reset(list(range(24)))
    rng = np.random.default_rng(2)
    for _ in range(7):
        m = eng.legal_mask()
        eng.step((rng.random(m.shape) * m).argmax(1))
    kb, S, TB = SPEC.batch, kernel_view(eng.state), kernel_view(eng.tables)
    rows = np.array([5, 0, 17, 3, 3, 22], np.int64)
    n, d, A = len(rows), eng.observe().shape[1], eng.legal_mask().shape[1]
    bufs = [(np.zeros(n, np.int64), np.zeros((n, d), np.float32), np.zeros((n, A), bool)) for _ in range(2)]
    kb.gather(S, TB, eng.cfg, rows, eng._offs, *bufs[0])
    cols, vals, starts = np.zeros(n * 200 + d, np.int64), np.zeros(n * 200 + d, np.float32), np.zeros(n, np.int64)
    k = kb.gather_csr(S, TB, eng.cfg, rows, eng._offs, *bufs[1], cols, vals, starts)
    assert all(np.array_equal(a, b) for a, b in zip(bufs[0], bufs[1]))
    want = csr(bufs[0][1])
    assert k == len(want[0]) and all(np.array_equal(a, b) for a, b in zip((cols[:k], vals[:k], starts), want))
    assert kb.gather_csr(S, TB, eng.cfg, rows, eng._offs, *bufs[1], cols[:d + 10], vals[:d + 10], starts) == -1


@pytest.mark.parametrize("shared", [False, True])
def test_sparse_policy_acts_like_its_own_distribution(shared):
    from gymnasium import spaces
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

    from agents.policy import PolicyAgent
    from ripmarket_env.games.ripmarket import Engine, RulesConfig
    from train.config import PolicyConfig
    from train.selfplay import SparseExtractor, policy_kwargs

    eng = Engine(RulesConfig(num_players=6), batch_size=8)
    eng.reset(list(range(8)))
    obs, masks = eng.observe(), eng.legal_mask()
    pc = PolicyConfig(arch="sparse", sparse_hidden=32, net_arch=[16], sparse_shared=shared)
    p = MaskableActorCriticPolicy(spaces.Box(-9, 9, (obs.shape[1],), np.float32), spaces.Discrete(masks.shape[1]),
                                  lambda _: 0.0, **policy_kwargs(pc))
    assert isinstance(p.pi_features_extractor, SparseExtractor) and p.share_features_extractor is shared
    with torch.no_grad():
        ref = p.get_distribution(torch.from_numpy(obs)).distribution.logits.numpy()
    agent = PolicyAgent(p)
    z = agent.logits(obs)
    assert np.allclose(z - z.max(1, keepdims=True), ref - ref.max(1, keepdims=True), atol=1e-4)
    a = agent.act_batch(obs, masks)
    assert masks[np.arange(8), a].all()


def _small_policy(arch: str, obs_size: int, num_actions: int, seed: int):
    from gymnasium import spaces
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

    from train.config import PolicyConfig
    from train.selfplay import policy_kwargs

    torch.manual_seed(seed)
    pc = PolicyConfig(arch=arch, sparse_hidden=32, net_arch=[32, 16] if arch == "mlp" else [16])
    return MaskableActorCriticPolicy(spaces.Box(-9, 9, (obs_size,), np.float32), spaces.Discrete(num_actions),
                                     lambda _: 0.0, **policy_kwargs(pc))


def test_fused_opponents_act_like_each_agent_alone():
    """agents.sparse.fused_act (inside act_grouped): one pass for every network agent of a
    league round gives each agent's own actions, samples included, and leaves the rest."""
    import copy

    import agents
    from agents.base import act_grouped
    from agents.policy import PolicyAgent
    from agents.sparse import fused_act
    from ripmarket_env.games.ripmarket import Engine, RulesConfig

    eng = Engine(RulesConfig(num_players=6), batch_size=64)
    eng.reset(list(range(64)))
    for _ in range(5):  # a few decisions in: varied phases and masks
        m = eng.legal_mask()
        eng.step((np.random.default_rng(0).random(m.shape) * m).argmax(1))
    obs, masks = eng.observe(), eng.legal_mask().copy()  # a copy: the engine's is read-only
    masks[3] = False  # a finished game: no legal action
    d, A = obs.shape[1], masks.shape[1]
    roster = [agents.make("random", seed=0), agents.make("greedy"), agents.make("shark-bc"), agents.make("hoarder-bc"),
              PolicyAgent(_small_policy("mlp", d, A, 1), deterministic=False, seed=5),
              PolicyAgent(_small_policy("mlp", d, A, 2), deterministic=True),
              PolicyAgent(_small_policy("sparse", d, A, 3), deterministic=False, seed=6)]
    who = np.random.default_rng(1).integers(-1, len(roster), 64)
    who[3] = 4
    for step in range(2):
        alone = copy.deepcopy(roster)
        want = np.full(64, -1)
        for i in np.unique(who[who >= 0]):
            sel = np.flatnonzero(who == i)
            want[sel] = alone[i].act_batch(obs[sel], masks[sel])
        given = act_grouped(copy.deepcopy(roster), who, obs, masks, csr=csr(obs))  # non-zeros given: same choices
        got = act_grouped(roster, who, obs, masks)
        assert np.array_equal(got, want) and np.array_equal(given, want)
        assert got[3] == -1 and (got[who < 0] == -1).all()
        # the three small policies share a first-layer width and go through the fused pass;
        # the distilled styles (another width), random and greedy do not
        out = np.full(64, -7)
        done = fused_act(copy.deepcopy(roster), who, obs, masks, out)
        assert np.array_equal(done, np.isin(who, [4, 5, 6]))
        assert (out[~done] == -7).all()
        with torch.no_grad():  # a snapshot replaced in place: the stacked table follows
            for p in roster[4].policy.parameters():
                p.mul_(-1.5)
    assert len(roster[2].sparse_parts()) == 3 and fused_act(roster, np.full(4, -1), obs[:4], masks[:4], out[:4]).sum() == 0


def test_caches_keyed_by_id_do_not_serve_a_freed_objects_entry():
    """Python gives a freed object's id to new ones: a cached transposed weight, stacked
    table or league plan must belong to the very object asked about, not only to its id
    and version (a new network's first layer of another width once got the old table)."""
    from agents import sparse as S
    from agents.base import RandomAgent

    old, new = torch.nn.Linear(12, 32), torch.nn.Linear(12, 16)
    with torch.no_grad():
        S._columns(old.weight)
        S._cache[id(new.weight)] = S._cache[id(old.weight)]  # as if ``new`` reused the id
        assert S._columns(new.weight).shape == (12, 16)
        S._table([old])
        (key, hit), = S._tables.items()
        S._tables[tuple((id(new.weight),) + k[1:] for k in key)] = hit
        table, base = S._table([new])
        assert table.shape == (13, 16) and torch.equal(table[:12], new.weight.t())

    class Net(RandomAgent):
        def __init__(self, first):
            super().__init__(seed=0)
            self.first = first

        def sparse_parts(self):
            return self.first, torch.nn.Identity(), None

    a, b = Net(old), Net(new)
    S._plan([a])
    stale = next(v for k, v in S._plans.items() if k[0][0] == id(a))
    S._plans[((id(b), id(new)),)] = stale
    group, style, firsts, rests = S._plan([b])
    assert firsts == [new] and group.tolist() == [0]


def test_the_layers_after_the_first_run_in_place_with_the_same_numbers():
    """``fused_act`` runs the layers after a network's first one with its activations in
    place (``_rest_in_place``): bit for bit ``rest(h)`` for Sequentials of Linear, ReLU and
    Tanh (nested too), and any other ``rest`` is called as it is."""
    from agents.sparse import _layers, _rest_in_place

    torch.manual_seed(3)
    nn = torch.nn
    rests = [nn.Sequential(nn.ReLU(), nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 5)),
             nn.Sequential(nn.Tanh(), nn.Sequential(nn.Linear(16, 8), nn.Tanh()), nn.Linear(8, 5, bias=False)),
             nn.Sequential(nn.ReLU(), nn.LayerNorm(16), nn.Linear(16, 5))]
    h = torch.randn(37, 16)
    for rest in rests:
        with torch.no_grad():
            want = rest(h)
            got = _rest_in_place(rest, h.clone(), _layers(rest))
        assert got.shape == want.shape and torch.equal(got, want)
