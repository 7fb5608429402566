"""The distilled zoo (train.distill): recording zoo games, behaviour cloning, files, warm start."""

from __future__ import annotations

import numpy as np
import pytest

import torch  # noqa: E402,F401

from train import distill as D  # noqa: E402
from agents.checkpoint import CheckpointError  # noqa: E402
from train.config import ConfigError, config_from_dict  # noqa: E402

STYLES = ("greedy", "hoarder")


@pytest.fixture(scope="module")
def data() -> D.Decisions:
    return D.collect(4, 6, styles=STYLES, seed=3, workers=1, chunk=3, progress=False)


def test_recording_is_consistent(data):
    n = len(data)
    assert n > 50
    assert data.obs.shape[0] == data.mask.shape[0] == data.style.shape[0] == n
    # every recorded action is legal, and only real choices are recorded
    assert data.mask[np.arange(n), data.action].all()
    assert (data.mask.sum(axis=1) > 1).all()
    assert set(np.unique(data.style)) <= {0, 1}
    # R-11.1 win rewards: per game, the deciding seats' rewards are +1 or -1/3 (or co-winner shares)
    for g in np.unique(data.game):
        r = data.reward[data.game == g]
        assert r.min() >= -1 / 3 - 1e-6 and r.max() <= 1 + 1e-6


def test_recording_is_seeded(data):
    again = D.collect(4, 6, styles=STYLES, seed=3, workers=1, chunk=3, progress=False)
    assert np.array_equal(again.action, data.action) and np.array_equal(again.obs, data.obs)
    other = D.collect(4, 6, styles=STYLES, seed=4, workers=1, chunk=3, progress=False)
    assert len(other) != len(data) or not np.array_equal(other.action, data.action)


def test_fit_save_load_and_agent(data, tmp_path):
    net, info = D.fit(data, STYLES, hidden=(32,), epochs=3, batch=64, progress=False)
    assert set(info["accuracy"]) == set(STYLES)
    assert all(0.0 <= a <= 1.0 for a in info["accuracy"].values())
    path = D.save(net, tmp_path / "zoo.pt", STYLES, (32,), info)
    net2, meta = D.load(path)
    assert meta["styles"] == list(STYLES) and meta["format"] == D.FORMAT
    agent = D.DistilledAgent(net2, 1, len(STYLES), "hoarder-bc")
    n = min(200, len(data))  # the recorded decisions of 6 seeded games
    assert n > 100
    acts = agent.act_batch(data.obs[:n].astype(np.float32), data.mask[:n])
    assert data.mask[np.arange(n), acts].all()
    same = D.DistilledAgent(net, 1, len(STYLES), "hoarder-bc").act_batch(data.obs[:n].astype(np.float32), data.mask[:n])
    assert np.array_equal(acts, same)
    # no legal action (a finished game) gives -1
    assert agent.act(data.obs[0].astype(np.float32), np.zeros(data.mask.shape[1], bool)) == -1


def test_broken_files_give_clear_errors(data, tmp_path):
    net, info = D.fit(data, STYLES, hidden=(16,), epochs=1, batch=256, progress=False)
    path = D.save(net, tmp_path / "zoo.pt", STYLES, (16,), info)
    raw = path.read_bytes()
    (tmp_path / "cut.pt").write_bytes(raw[: len(raw) // 2])
    with pytest.raises(CheckpointError, match="corrupt or truncated"):
        D.load(tmp_path / "cut.pt")
    with pytest.raises(CheckpointError, match="does not exist"):
        D.load(tmp_path / "missing.pt")
    import torch

    blob = torch.load(path, weights_only=True)
    blob["meta"]["layout_digest"] = "0" * 16
    torch.save(blob, tmp_path / "old.pt")
    with pytest.raises(CheckpointError, match="layout digest"):
        D.load(tmp_path / "old.pt")


def test_warm_start_raises_the_likelihood_of_winning_decisions(data):
    from sb3_contrib import MaskablePPO

    from ripmarket_env.vector_env import RipMarketVecEnv

    env = RipMarketVecEnv(num_envs=2, num_players=4)
    model = MaskablePPO("MlpPolicy", env, n_steps=8, batch_size=16, policy_kwargs={"net_arch": [32]}, seed=0,
                        device="cpu")
    won = np.flatnonzero(data.reward > 0)
    import torch

    def mean_logp():
        with torch.no_grad():
            _, logp, _ = model.policy.evaluate_actions(torch.as_tensor(data.obs[won].astype(np.float32)),
                                                       torch.as_tensor(data.action[won].astype(np.int64)),
                                                       action_masks=data.mask[won])
        return float(logp.mean())

    before = mean_logp()
    stats = D.pretrain_policy(model.policy, data, epochs=6, batch=128, lr=3e-3, progress=False)
    assert mean_logp() > before + 0.1
    assert stats["cloned_decisions"] == len(won)
    env.close()


def test_pretrain_config_is_checked():
    cfg = config_from_dict({"pretrain": {"games": 10, "epochs": 2}})
    assert cfg.pretrain.games == 10 and cfg.pretrain.winners_only
    with pytest.raises(ConfigError, match="pretrain.gamez"):
        config_from_dict({"pretrain": {"gamez": 10}})
    with pytest.raises(ConfigError, match="pretrain.epochs"):
        config_from_dict({"pretrain": {"epochs": 0}})
    with pytest.raises(ConfigError, match="league.eval_zoo"):
        config_from_dict({"league": {"eval_zoo": ["nobody"]}})


def test_shipped_distilled_zoo_plays_legal_games():
    import agents
    from ripmarket_env.games.ripmarket import Engine, RulesConfig

    names = [f"{s}-bc" for s in D.DEFAULT_STYLES]
    assert set(names) <= set(agents.names())
    bots = [agents.make(n) for n in names]
    eng = Engine(RulesConfig(num_players=6), batch_size=8)
    eng.reset(list(range(8)))
    steps = 0
    while not eng.terminated.all():  # Engine.step raises IllegalActionError on any illegal action
        actor = eng.current_player()
        obs, masks = eng.observe(np.maximum(actor, 0)), eng.legal_mask()
        acts = np.full(8, -1, np.int64)
        for g in np.flatnonzero(actor >= 0):
            acts[g] = bots[int(actor[g]) % 5].act(obs[g], masks[g])
        eng.step(acts)
        steps += 1
        assert steps < 5000
    assert eng.terminated.all()


def test_styles_in_one_pass_match_each_style_alone(data):
    net, _ = D.fit(data, STYLES, hidden=(16,), epochs=1, batch=256, progress=False)
    a0 = D.DistilledAgent(net, 0, len(STYLES), "greedy-bc")
    a1 = D.DistilledAgent(net, 1, len(STYLES), "hoarder-bc")
    assert a0.shared_net_key == a1.shared_net_key is not None
    obs, masks = data.obs[:100].astype(np.float32), data.mask[:100]
    styles = np.arange(100) % 2
    both = a0.act_styles(obs, masks, styles)
    assert np.array_equal(both[styles == 0], a0.act_batch(obs[styles == 0], masks[styles == 0]))
    assert np.array_equal(both[styles == 1], a1.act_batch(obs[styles == 1], masks[styles == 1]))
    assert D.DistilledAgent(net, 0, 2, "x", deterministic=False).shared_net_key is None


def test_act_grouped_matches_each_agent_alone(data):
    from agents.base import RandomAgent, act_grouped

    net, _ = D.fit(data, STYLES, hidden=(16,), epochs=1, batch=256, progress=False)
    pool = [RandomAgent(seed=1), D.DistilledAgent(net, 0, 2, "greedy-bc"), D.DistilledAgent(net, 1, 2, "hoarder-bc")]
    obs, masks = data.obs[:90].astype(np.float32), data.mask[:90]
    who = np.arange(90) % 4 - 1  # -1: no decision in that row
    out = act_grouped(pool, who, obs, masks)
    assert (out[who < 0] == -1).all()
    alone = RandomAgent(seed=1).act_batch(obs[who == 0], masks[who == 0])
    assert np.array_equal(out[who == 0], alone)
    for k in (1, 2):
        assert np.array_equal(out[who == k], pool[k].act_batch(obs[who == k], masks[who == k]))


def test_distill_command_writes_under_the_current_directory_and_never_overwrites(tmp_path, monkeypatch):
    """``ripmarket distill`` writes runs/zoo-bc.pt of the current directory by default (the
    shipped agents/checkpoints/zoo-bc.pt stays as it is) and refuses an existing --out
    without --force, before recording anything."""
    import hashlib

    from typer.testing import CliRunner

    from agents.policy import DISTILLED_ZOO
    from ripmarket_env.app.cli import app

    shipped = hashlib.sha256(DISTILLED_ZOO.read_bytes()).hexdigest()
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    args = ["distill", "--players", "3", "--games", "2", "--epochs", "1", "--workers", "1"]
    res = runner.invoke(app, args)
    assert res.exit_code == 0, res.output
    out = tmp_path / "runs" / "zoo-bc.pt"
    assert out.is_file() and D.load(out)[1]["games"] == 2
    before = out.read_bytes()
    res = runner.invoke(app, args)
    assert res.exit_code == 2 and "exists" in res.output and "--force" in res.output
    assert out.read_bytes() == before
    res = runner.invoke(app, args + ["--seed", "8", "--force"])
    assert res.exit_code == 0, res.output
    assert out.read_bytes() != before and not list((tmp_path / "runs").glob(".*tmp"))
    assert hashlib.sha256(DISTILLED_ZOO.read_bytes()).hexdigest() == shipped


def test_a_teacher_becomes_one_more_style_and_a_league_seat(tmp_path):
    """``ripmarket distill --teacher AGENT --teacher-games N``: the agent (here The Rune
    Market's search, too slow for a league seat) plays one seat of N games against the
    heuristics; its decisions, and only its, are the network's last style; a config names
    it ``<AGENT>-bc`` with ``league.zoo_init``, and it plays legal moves from the league.
    A teacher that is no agent of the game, a heuristic, or one without its games is
    refused before anything is recorded; a file without the style, when the league loads it."""
    from typer.testing import CliRunner

    from agents.checkpoint import CheckpointError
    from ripmarket_env.app.cli import app
    from train.config import config_from_dict
    from train.selfplay import League

    runner = CliRunner()
    out, rec = tmp_path / "rm-zoo.pt", tmp_path / "rm-games.npz"
    base = ["distill", "--game", "rune-market", "--players", "2", "--games", "2", "--epochs", "1", "--workers", "1"]
    for extra, says in ((["--teacher", "nobody", "--teacher-games", "2"], "not a registered agent of rune-market"),
                        (["--teacher", "rm-banker", "--teacher-games", "2"], "imitated anyway"),
                        (["--teacher", "rm-search"], "go together")):
        res = runner.invoke(app, base + extra + ["--out", str(out)])
        assert res.exit_code == 2 and says in " ".join(res.output.split()), res.output[-500:]
        assert not out.exists()
    res = runner.invoke(app, base + ["--teacher", "rm-search", "--teacher-games", "2", "--out", str(out),
                                     "--recording", str(rec)])
    assert res.exit_code == 0, res.output[-2000:]
    net, meta = D.load(out, game="rune-market")
    assert meta["styles"] == ["rm-banker", "rm-raider", "rm-bandit", "rm-search"] and meta["teacher"] == "rm-search"
    assert set(meta["accuracy"]) == set(meta["styles"])
    data = D.load_decisions(rec)
    taught = data.style == 3
    assert taught.any() and (~taught).any()
    assert len(np.unique(data.game[taught])) == 2 and not set(data.game[taught]) & set(data.game[~taught])
    assert data.mask[np.flatnonzero(taught), data.action[taught].astype(np.int64)].all()
    res = runner.invoke(app, ["distill", "--game", "rune-market", "--recording", str(rec), "--out", str(tmp_path / "x.pt")])
    assert res.exit_code == 2 and "--teacher" in " ".join(res.output.split())  # 4 styles recorded, 3 asked

    league = League(config_from_dict({"game": "rune-market", "num_players": 2, "league": {
        "zoo": ["rm-banker", "rm-search-bc"], "zoo_init": str(out)}}), seed=0)
    bot = league.agents[league.zoo_ids[1]]
    assert bot.name == "rm-search-bc"
    rows = np.flatnonzero(taught)[:20]
    acts = np.asarray(bot.act_batch(data.obs[rows].astype(np.float32), data.mask[rows]))
    assert data.mask[rows, acts].all()
    plain = tmp_path / "plain.pt"
    assert runner.invoke(app, base + ["--out", str(plain)]).exit_code == 0
    with pytest.raises(CheckpointError, match="holds no imitation of 'rm-search'"):
        League(config_from_dict({"game": "rune-market", "num_players": 2, "league": {
            "zoo": ["rm-banker", "rm-search-bc"], "zoo_init": str(plain)}}), seed=0)
