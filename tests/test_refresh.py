"""Training from a checkpoint (``init_from``) and the zoo refresh (DAgger for the distilled
opponents): recording the heuristics against a guest, going on fitting a network, the
league's private copy of the distilled network, and the config and CLI checks."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import sb3_contrib  # noqa: E402,F401

from train import distill as D  # noqa: E402
from agents.checkpoint import CheckpointError  # noqa: E402
from train.config import ConfigError, config_from_dict  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
STYLES = ("greedy", "hoarder")
BC_ZOO = [f"{s}-bc" for s in D.DEFAULT_STYLES]


def test_guest_decisions_are_not_recorded():
    # two players: the guest holds half the seats, so leaving its decisions out shows in the
    # count (at 4 players other deals can make the games with a guest longer)
    plain = D._collect_chunk((2, STYLES, 3, 5, 0))
    guest = D._collect_chunk((2, STYLES, 3, 5, 0, "random"))
    # the guest is agent index len(STYLES); none of its decisions may be in the recording
    assert guest.style.max() < len(STYLES) and guest.style.min() >= 0
    assert len(guest) < 0.75 * len(plain)
    again = D._collect_chunk((2, STYLES, 3, 5, 0, "random"))
    assert np.array_equal(guest.action, again.action) and np.array_equal(guest.obs, again.obs)


def test_fit_goes_on_training_a_given_network():
    data = D.collect(4, 4, styles=STYLES, seed=3, workers=1, chunk=2, progress=False)
    net, _ = D.fit(data, STYLES, hidden=(16,), epochs=1, batch=256, progress=False)
    before = [p.detach().clone() for p in net.parameters()]
    net2, info = D.fit(data, STYLES, hidden=(16,), epochs=1, batch=256, progress=False, net=net)
    assert net2 is net and not net.training
    assert any(not (a == b.detach()).all() for a, b in zip(before, net.parameters()))
    assert set(info["accuracy"]) == set(STYLES)


def test_zoo_refresh_trains_the_leagues_own_copy(tmp_path):
    import agents
    from train.selfplay import League, ZooRefresh

    cfg = config_from_dict({"num_players": 4, "progress": False, "league": {
        "zoo": BC_ZOO, "refresh_every": 100, "refresh_games": 2, "refresh_base_games": 2, "refresh_epochs": 1}})
    league = League(cfg, seed=0)
    shared = agents.make("greedy-bc").net
    shared_w = [p.detach().clone() for p in shared.parameters()]
    refresh = ZooRefresh(cfg, league, tmp_path)
    nets = {id(a.net) for a in league.agents if isinstance(a, D.DistilledAgent)}
    assert nets == {id(refresh.net)} and refresh.net is not shared
    own_w = [p.detach().clone() for p in refresh.net.parameters()]
    stats = refresh("random")
    assert 0.0 <= stats["agreement_before"] <= 1.0 and 0.0 <= stats["agreement_after"] <= 1.0
    assert stats["decisions"] == len(refresh.base) + len(refresh.parts[0])
    assert (tmp_path / "pretrain" / "zoo4p_2games_seed7.npz").is_file()  # the cached zoo-only recording
    assert any(not (a == b.detach()).all() for a, b in zip(own_w, refresh.net.parameters()))
    assert all((a == b.detach()).all() for a, b in zip(shared_w, shared.parameters()))  # registry untouched
    saved, meta = D.load(refresh.save(tmp_path / "zoo.pt", steps=100))
    assert meta["refreshes"] == 1 and meta["styles"] == list(D.DEFAULT_STYLES)


def _counts_of(data) -> np.ndarray:
    """The player count each recorded decision was made at (the observation's one-hot)."""
    from agents.ripmarket.view import tables

    sl = tables()[2].slice("num_players", 0)
    return np.argmax(np.asarray(data.obs[:, sl], np.float32), axis=1) + 2


def test_collect_splits_the_games_over_player_counts():
    data = D.collect([2, 5], 3, styles=STYLES, seed=1, workers=1, chunk=2, progress=False)
    # 3 games over two counts: 2 at 2 players, 1 at 5, numbered one after another
    assert sorted(np.unique(data.game)) == [0, 1, 2]
    counts = _counts_of(data)
    assert set(counts[data.game < 2]) == {2} and set(counts[data.game == 2]) == {5}
    # the same games as recording each count alone (deterministic by seed and game number)
    alone = D.Decisions.concat([D._collect_chunk((2, STYLES, 2, 1, 0)), D._collect_chunk((5, STYLES, 1, 1, 2))])
    assert np.array_equal(alone.action, data.action) and np.array_equal(alone.obs, data.obs)
    assert D.split_evenly(10, 4) == [3, 3, 2, 2] and D.split_evenly(2, 3) == [1, 1, 0]


def test_zoo_refresh_records_every_player_count(tmp_path):
    from train.selfplay import League, ZooRefresh

    cfg = config_from_dict({"player_counts": [2, 3], "n_envs": 2, "n_steps": 2, "batch_size": 4, "progress": False,
                            "league": {"zoo": BC_ZOO, "refresh_every": 100, "refresh_games": 2,
                                       "refresh_base_games": 4, "refresh_epochs": 1}})
    refresh = ZooRefresh(cfg, League(cfg, seed=0), tmp_path)
    assert (tmp_path / "pretrain" / "zoo2-3p_4games_seed7.npz").is_file()
    assert sorted(set(_counts_of(refresh.base))) == [2, 3] and len(np.unique(refresh.base.game)) == 4
    stats = refresh("random")
    new = refresh.parts[0]
    assert sorted(set(_counts_of(new))) == [2, 3] and len(np.unique(new.game)) == 2
    assert not set(new.game) & set(refresh.base.game)  # refresh games numbered apart from the zoo-only ones
    assert stats["decisions"] == len(refresh.base) + len(new)
    _, meta = D.load(refresh.save(tmp_path / "zoo.pt", steps=100))
    assert meta["player_counts"] == [2, 3]


def test_zoo_init_starts_the_leagues_imitations_from_a_saved_zoo(tmp_path):
    """league.zoo_init: the distilled agents play the network of a saved zoo file (an earlier
    run's refreshed imitations); the shipped one is untouched; other styles are refused."""
    import torch

    import agents
    from train.selfplay import League, ZooRefresh

    shipped = agents.make("greedy-bc").net
    shipped_w = [p.detach().clone() for p in shipped.parameters()]
    net, meta = D.load(ROOT / "agents" / "checkpoints" / "zoo-bc.pt")
    with torch.no_grad():
        for q in net.parameters():
            q.mul_(0.5)
    hidden = [m.out_features for m in net if hasattr(m, "out_features")][:-1]
    saved = D.save(net, tmp_path / "zoo.pt", meta["styles"], hidden, {"num_players": 6})
    cfg = config_from_dict({"num_players": 4, "progress": False, "league": {
        "zoo": BC_ZOO, "zoo_init": str(saved), "refresh_every": 100, "refresh_games": 2, "refresh_base_games": 2}})
    league = League(cfg, seed=0)
    mine = [a for a in league.agents if isinstance(a, D.DistilledAgent)]
    assert len(mine) == 5 and len({id(a.net) for a in mine}) == 1
    assert all(torch.equal(a, b) for a, b in zip(mine[0].net.parameters(), net.parameters()))
    refresh = ZooRefresh(cfg, league, tmp_path)  # the refresh goes on from the saved network
    assert all(torch.equal(a, b) for a, b in zip(refresh.net.parameters(), net.parameters()))
    assert all(torch.equal(a, b.detach()) for a, b in zip(shipped_w, shipped.parameters()))
    other = D.save(net, tmp_path / "other.pt", tuple(reversed(meta["styles"])), hidden, {})  # the styles reordered
    with pytest.raises(CheckpointError, match="in that order"):
        League(config_from_dict({"num_players": 4, "league": {"zoo": BC_ZOO, "zoo_init": str(other)}}), seed=0)
    with pytest.raises(CheckpointError, match="neither a file nor a shipped zoo .*zoo-bc-ppo-stage2"):
        League(config_from_dict({"num_players": 4, "league": {"zoo": BC_ZOO, "zoo_init": str(tmp_path / "no.pt")}}),
               seed=0)
    # a shipped zoo by its name, from any working directory; a path is never taken for a name
    named = League(config_from_dict({"num_players": 4, "league": {"zoo": BC_ZOO, "zoo_init": "zoo-bc-ppo-stage2"}}),
                   seed=0)
    stage2, _ = D.load(ROOT / "agents" / "checkpoints" / "zoo-bc-ppo-stage2.pt")
    got = next(a for a in named.agents if isinstance(a, D.DistilledAgent)).net
    assert all(torch.equal(a, b) for a, b in zip(got.parameters(), stage2.parameters()))
    with pytest.raises(CheckpointError, match="neither a file"):
        League(config_from_dict({"num_players": 4, "league": {"zoo": BC_ZOO, "zoo_init": "x/zoo-bc-ppo-stage2"}}),
               seed=0)


def test_resume_starts_the_leagues_imitations_from_the_zoo_the_run_saved(tmp_path):
    """ripmarket train --resume: a run whose refreshes saved zoo-bc.pt next to the checkpoint
    goes on with those imitations (league.zoo_init), not the config's start; without the
    file or without refreshes the config is unchanged; a damaged
    file is refused before the run goes on."""
    from train.selfplay import ZOO_FILE, League, resumed_zoo, train

    run = tmp_path / "checkpoints" / "run"
    run.mkdir(parents=True)
    ckpt = run / "latest.zip"
    league = {"zoo": BC_ZOO, "refresh_every": 100, "refresh_games": 2, "refresh_base_games": 2}
    cfg = config_from_dict({"num_players": 4, "progress": False, "league": league})
    assert resumed_zoo(cfg, ckpt) is cfg  # nothing saved yet
    net, meta = D.load(ROOT / "agents" / "checkpoints" / "zoo-bc.pt")
    hidden = [m.out_features for m in net if hasattr(m, "out_features")][:-1]
    D.save(net, run / ZOO_FILE, meta["styles"], hidden, {"num_players": 4})
    got = resumed_zoo(cfg, ckpt)
    assert got.league.zoo_init == str(run / ZOO_FILE) and got.league.refresh_every == 100 and cfg.league.zoo_init == ""
    assert League(got, seed=0)  # the league takes it
    no_refresh = config_from_dict({"num_players": 4, "league": {"zoo": BC_ZOO}})
    assert resumed_zoo(no_refresh, ckpt) is no_refresh
    (run / ZOO_FILE).write_bytes(b"not a zoo")
    damaged = resumed_zoo(cfg, ckpt)
    assert damaged.league.zoo_init == str(run / ZOO_FILE)
    out = tmp_path / "out"
    with pytest.raises(CheckpointError, match="zoo-bc.pt"):  # refused before the run goes on
        train(damaged, out)
    assert not out.exists()


def _fresh_like(src, pc):
    """A new SB3 policy of network ``pc`` for ``src``'s observation and action spaces."""
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

    from train.selfplay import policy_kwargs

    return MaskableActorCriticPolicy(src.observation_space, src.action_space, lambda _: 0.0, **policy_kwargs(pc))


def _same_function(src, dst, seed: int):
    """``src`` and ``dst`` give the same action distribution and value on real 6-player
    observations, in SB3 and as agents (the agents' own sparse first-layer path); returns
    those observations and their masks."""
    import torch

    from agents.policy import PolicyAgent
    from ripmarket_env.vector_env import RipMarketVecEnv

    env = RipMarketVecEnv(num_envs=16, num_players=6, opponents="random", seed=seed)
    x = torch.as_tensor(env.reset())
    masks = torch.as_tensor(env.action_masks())
    for pol in (src, dst):
        pol.set_training_mode(False)
    with torch.no_grad():
        a, b = src.get_distribution(x, masks), dst.get_distribution(x, masks)
        assert torch.allclose(a.distribution.probs, b.distribution.probs, atol=1e-5)
        assert torch.allclose(src.predict_values(x), dst.predict_values(x), atol=1e-4)
    assert np.allclose(PolicyAgent(src).logits(x.numpy()), PolicyAgent(dst).logits(x.numpy()), atol=1e-4)
    return x, masks


def test_init_from_loads_the_weights_and_rejects_other_networks():
    import torch

    from agents.policy import CHECKPOINT_DIR
    from agents.checkpoint import load_policy
    from train.config import PolicyConfig
    from train.selfplay import init_policy

    ckpt = CHECKPOINT_DIR / "ppo-6p.zip"  # the shipped bot, trained on the packaged cards
    src, meta = load_policy(ckpt)
    dst = _fresh_like(src, PolicyConfig(**meta["config"]["policy"]))
    assert init_policy(dst, ckpt.stem) == ckpt  # a shipped checkpoint by name
    for (k, a), b in zip(src.state_dict().items(), dst.state_dict().values()):
        assert torch.equal(a, b), k
    with pytest.raises(CheckpointError, match="another network"):
        init_policy(_fresh_like(src, PolicyConfig(net_arch=[8])), str(ckpt))
    with pytest.raises(CheckpointError, match="neither a checkpoint file nor a shipped checkpoint"):
        init_policy(dst, "no-such-bot")


def test_init_from_an_mlp_goes_on_as_the_sparse_network_of_the_same_function():
    """init_from: an mlp checkpoint ([256, 256], tanh) loads into the sparse policy with
    sparse_hidden 256, net_arch [256] and sparse_activation tanh (separate actor and critic
    extractors), which then gives the same action distribution and value on real
    observations, in SB3 and as an agent; a sparse policy of another shape, with one shared
    extractor or with relu is still another network."""
    import torch

    from agents.checkpoint import load_policy
    from agents.policy import CHECKPOINT_DIR, PolicyAgent
    from train.config import PolicyConfig
    from train.selfplay import init_policy

    src, meta = load_policy(CHECKPOINT_DIR / "ppo.zip")
    assert meta["config"]["policy"]["arch"] == "mlp" and meta["config"]["policy"]["net_arch"] == [256, 256]
    sparse = PolicyConfig(arch="sparse", sparse_hidden=256, net_arch=[256], sparse_activation="tanh")
    dst = _fresh_like(src, sparse)
    init_policy(dst, "ppo", target=sparse)
    _same_function(src, dst, seed=3)
    as_sparse = PolicyAgent(dst)
    assert as_sparse.sparse_parts() and isinstance(as_sparse.sparse_parts()[1][0], torch.nn.Tanh)
    for other in (PolicyConfig(arch="sparse", sparse_hidden=128, net_arch=[256], sparse_activation="tanh"),
                  PolicyConfig(arch="sparse", sparse_hidden=256, net_arch=[256], sparse_activation="tanh",
                               sparse_shared=True),
                  PolicyConfig(arch="sparse", sparse_hidden=256, net_arch=[256])):  # relu: another function
        with pytest.raises(CheckpointError, match="another network"):
            init_policy(_fresh_like(src, other), "ppo", target=other)


def test_init_from_a_narrower_network_goes_on_as_the_wider_one_of_the_same_function():
    """init_from: the sparse ppo-at-6p (256, then [256]) loads into the sparse network
    512, then [512]: on real observations it gives the same action distribution and value,
    in SB3 and as an agent, and the new units are live (their outgoing weights get a
    gradient); a network that is narrower somewhere, deeper or of another activation is
    still another network."""
    import torch

    from agents.checkpoint import load_policy
    from agents.policy import CHECKPOINT_DIR
    from train.config import PolicyConfig
    from train.selfplay import init_policy

    src, meta = load_policy(CHECKPOINT_DIR / "ppo-at-6p.zip")
    have = meta["config"]["policy"]
    assert (have["arch"], have["sparse_hidden"], have["net_arch"]) == ("sparse", 256, [256])
    wide = PolicyConfig(arch="sparse", sparse_hidden=512, net_arch=[512], sparse_activation="tanh")
    dst = _fresh_like(src, wide)
    init_policy(dst, "ppo-at-6p", target=wide)
    assert dst.pi_features_extractor.linear.weight.shape[0] == 512
    x, masks = _same_function(src, dst, seed=5)
    _, logp, _ = dst.evaluate_actions(x, masks.int().argmax(1), action_masks=masks)
    logp.sum().backward()
    new_out = dst.action_net.weight.grad[:, 256:]  # from the new units of the last hidden layer
    assert new_out.abs().sum() > 0 and torch.all(dst.action_net.weight[:, 256:] == 0)
    for other in (PolicyConfig(arch="sparse", sparse_hidden=512, net_arch=[128], sparse_activation="tanh"),
                  PolicyConfig(arch="sparse", sparse_hidden=512, net_arch=[512, 512], sparse_activation="tanh"),
                  PolicyConfig(arch="sparse", sparse_hidden=512, net_arch=[512])):  # relu: another function
        with pytest.raises(CheckpointError, match="another network"):
            init_policy(_fresh_like(src, other), "ppo-at-6p", target=other)


def test_init_from_other_cards_skips_only_the_card_check(tmp_path):
    import torch

    from agents.checkpoint import load_policy, read_metadata
    from first_edition import first_edition_checkpoint
    from ripmarket_env.games.ripmarket.cards.loader import load_cards
    from train.selfplay import load_init

    old = first_edition_checkpoint(tmp_path)  # as the first edition's bots were written
    assert read_metadata(old, check=False)["card_digest"] == load_cards("first-edition").digest
    with pytest.raises(CheckpointError, match="first edition's cards"):
        load_init(str(old))
    path, src, meta = load_init(str(old), other_cards=True)
    ref, _ = load_policy(old, cards=load_cards("first-edition"))
    assert path == old and meta["card_digest"] == load_cards("first-edition").digest
    for (k, a), b in zip(ref.state_dict().items(), src.state_dict().values()):
        assert torch.equal(a, b), k
    with pytest.raises(ConfigError, match="init_from_other_cards is set without init_from"):
        config_from_dict({"init_from_other_cards": True})
    with pytest.raises(ConfigError, match="init_from_other_cards"):
        config_from_dict({"init_from": "ppo-6p", "init_from_other_cards": "yes"})


@pytest.mark.parametrize("data, words", [
    ({"league": {"zoo": ["greedy"], "refresh_every": 10}}, ["league.refresh_every", "-bc"]),
    ({"init_from": "ppo-6p", "pretrain": {"games": 5}}, ["init_from", "pretrain.games"]),
    ({"init_from": 3}, ["init_from", "checkpoint"]),
    ({"league": {"zoo": BC_ZOO, "refresh_games": 0}}, ["league.refresh_games", ">= 1"]),
    ({"league": {"zoo": ["greedy"], "zoo_init": "z.pt"}}, ["league.zoo_init", "-bc"]),
    ({"league": {"zoo": BC_ZOO, "zoo_init": 5}}, ["league.zoo_init", "distilled-zoo file"]),
    ({"backend": "rllib", "league": {"zoo": BC_ZOO, "zoo_init": "z.pt"}}, ["league.zoo_init", "backend rllib"]),
])
def test_refresh_and_init_config_errors(data, words):
    with pytest.raises(ConfigError) as e:
        config_from_dict(data)
    for w in words:
        assert w in str(e.value)


@pytest.mark.parametrize("args, words", [
    (["--players", "2,11"], ["--players '2,11'", "2 to 10"]),
    (["--players", "3,3"], ["--players '3,3'", "twice"]),
    (["--guest", "random"], ["--guest", "--guest-games"]),
    (["--guest", "nobody", "--guest-games", "5"], ["--guest nobody", "unknown agent"]),
])
def test_distill_cli_checks_the_guest(args, words, tmp_path):
    r = subprocess.run([sys.executable, "-m", "ripmarket_env.app.cli", "distill", "--games", "2",
                        "--out", str(tmp_path / "z.pt"), *args], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    for w in words:
        assert w in r.stderr
    assert not (tmp_path / "z.pt").exists()


def test_distill_cli_with_a_guest_records_both_kinds_of_games(tmp_path):
    out, rec = tmp_path / "z.pt", tmp_path / "rec.npz"
    r = subprocess.run([sys.executable, "-m", "ripmarket_env.app.cli", "distill", "--players", "4", "--games", "2",
                        "--guest", "random", "--guest-games", "2", "--epochs", "1", "--workers", "1",
                        "--out", str(out), "--recording", str(rec)], capture_output=True, text=True, cwd=ROOT,
                       timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    _, meta = D.load(out)
    data = D.load_decisions(rec)
    assert meta["games"] == 4 == len(np.unique(data.game))
    assert data.style.max() < len(D.DEFAULT_STYLES)


def test_distill_cli_at_several_player_counts(tmp_path):
    out, rec = tmp_path / "z.pt", tmp_path / "rec.npz"
    r = subprocess.run([sys.executable, "-m", "ripmarket_env.app.cli", "distill", "--players", "2,4", "--games", "3",
                        "--epochs", "1", "--workers", "1", "--out", str(out), "--recording", str(rec)],
                       capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    _, meta = D.load(out)
    data = D.load_decisions(rec)
    assert meta["num_players"] == [2, 4] and meta["games"] == 3
    assert sorted(set(_counts_of(data))) == [2, 4]
