"""Self-play training: config validation, a tiny ``ripmarket train`` run, the checkpoint
loaded back as an agent, and checkpoint error cases (layout mismatch, corrupt files)."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest
import yaml

import sb3_contrib  # noqa: E402,F401

from agents.checkpoint import CheckpointError, read_metadata  # noqa: E402
from train.config import ConfigError, config_from_dict, load_config  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


# ----------------------------------------------------------------------------- config
def test_shipped_configs_load():
    """Every config under ``configs/<game>/`` (and its ``experiments/``) loads through the
    one loader, says its game and sits in that game's folder; every registered game with
    a config folder has a tiny ``smoke.yaml``."""
    from ripmarket_env.games import ids

    paths = sorted((ROOT / "configs").rglob("*.yaml"))
    assert len(paths) >= 20
    for path in paths:
        cfg = load_config(path)
        game = path.relative_to(ROOT / "configs").parts[0]
        assert game in ids() and cfg.game == game, path
        assert any(line.startswith("game:") for line in path.read_text().splitlines()), path
        assert cfg.exp_name
        assert cfg.run_name(now=5).startswith(f"{cfg.env_id}__{cfg.exp_name}__{cfg.seed}__")
    assert not list((ROOT / "configs").glob("*.yaml"))  # every config in its game's folder
    for game in ("ripmarket", "black-market", "rune-market"):
        assert load_config(ROOT / "configs" / game / "smoke.yaml").total_timesteps <= 2048


def test_config_game_and_rules():
    """``game:`` picks a registered game (default R.I.P. Market, the league's and the
    evaluations' zoo its heuristics); ``rules:`` holds the game's own rules fields (BM-1.3's
    teams or free-for-all), checked by the game at every player count of the run."""
    cfg = config_from_dict({})
    assert cfg.game == "ripmarket" and cfg.rules == {} and cfg.env_id == "ripmarket"
    assert cfg.league.zoo == cfg.league.eval_zoo == ["greedy", "survivor", "shark", "hoarder", "trickster"]
    bm = config_from_dict({"game": "black-market", "num_players": 4, "rules": {"mode": "ffa"}})
    assert bm.league.zoo == ["bm-builder", "bm-denier", "bm-rusher"] and bm.rules == {"mode": "ffa"}
    assert bm.run_name(now=5).startswith("black-market__")
    from train.config import rules_of

    assert rules_of(bm).mode == "ffa" and rules_of(bm).num_players == 4
    for data, words in (
        ({"game": "chess"}, ["'game'", "ripmarket", "black-market", "rune-market"]),
        ({"game": "black-market", "num_players": 3}, ["num_players", "2, 4 or 6"]),
        ({"game": "black-market", "num_players": 8}, ["num_players", "<= 6"]),
        ({"game": "black-market", "player_counts": [2, 3]}, ["player_counts"]),
        ({"game": "black-market", "num_players": 4, "rules": {"mode": "solo"}}, ["rules", "mode", "teams | ffa"]),
        ({"game": "black-market", "rules": {"colour": 1}}, ["rules.colour", "mode"]),
        ({"game": "rune-market", "rules": {"num_players": 4}}, ["rules.num_players", "top"]),
        ({"game": "rune-market", "rules": [1, 2]}, ["'rules'", "defend"]),
        ({"game": "rune-market", "league": {"zoo": ["greedy"]}}, ["league.zoo", "rm-banker"]),
        ({"game": "black-market", "reward_mode": "placement", "rules": {"mode": "teams"}}, ["reward_mode"]),
    ):
        with pytest.raises(ConfigError) as e:
            config_from_dict(data)
        msg = str(e.value)
        assert "\n" not in msg and all(w in msg for w in words), (data, msg)


def test_a_game_without_heuristics_trains_against_random(monkeypatch):
    """A game whose agents' profile names no heuristics gets ``random`` as its league's and
    evaluations' zoo, and a warm start (which clones heuristics) is a one-line config error."""
    import agents.base as base

    monkeypatch.setitem(base._GAMES, "rune-market", base.GameAgents("rune-market"))
    cfg = config_from_dict({"game": "rune-market"})
    assert cfg.league.zoo == cfg.league.eval_zoo == ["random"]
    with pytest.raises(ConfigError, match="pretrain.games.*no heuristics"):
        config_from_dict({"game": "rune-market", "pretrain": {"games": 10}})


def test_shipped_configs_start_from_files_that_ship():
    """One command per stage: every checkpoint a shipped config starts from (``init_from``)
    and every distilled zoo it starts its league from (``league.zoo_init``) is in the
    repository and loads with the packaged cards, so a fresh clone can run the stage; the
    first edition's record (stages trained on the first edition's cards) says so in its
    header, and a config starting from one of its retired stage checkpoints says that and
    is refused with the shipped checkpoints named."""
    from agents.checkpoint import CheckpointError
    from agents.policy import zoo_file
    from train.distill import load as load_zoo
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

    from train.selfplay import init_policy, load_init, policy_kwargs

    starts = first_edition = 0
    for path in sorted((ROOT / "configs" / "ripmarket").rglob("ppo*.yaml")):  # R.I.P. Market's bots
        cfg = load_config(path)
        record = "A record of the first edition" in path.read_text()
        first_edition += record
        if cfg.init_from.startswith("ppo-6p-stage"):  # retired with the first printing of the cards
            assert "retired" in path.read_text(), path.name
            with pytest.raises(CheckpointError, match="neither a checkpoint file nor a shipped checkpoint"):
                load_init(cfg.init_from, cfg.init_from_other_cards)
        elif cfg.init_from:
            loaded = load_init(cfg.init_from, cfg.init_from_other_cards)
            assert ROOT in loaded[0].resolve().parents, (path.name, loaded[0])
            net = MaskableActorCriticPolicy(loaded[1].observation_space, loaded[1].action_space, lambda _: 0.0,
                                            **policy_kwargs(cfg.policy))
            init_policy(net, cfg.init_from, loaded, target=cfg.policy)  # the stage's network takes the weights
            starts += 1
        if cfg.league.zoo_init:
            zoo = zoo_file(cfg.league.zoo_init)  # a shipped zoo's name: found from any working directory
            assert zoo.parent == ROOT / "agents" / "checkpoints", (path.name, zoo)
            load_zoo(zoo)
            starts += 1
    assert first_edition == 4
    assert starts >= 6  # each stage of ppo, ppo-at-4p and ppo-at-6p, and their zoos


@pytest.mark.parametrize("data, words", [
    ({"n_envz": 3}, ["n_envz", "allowed keys", "n_envs"]),
    ({"policy": {"arch": "transformer"}}, ["policy.arch", "mlp", "seat"]),
    ({"policy": {"widht": 3}}, ["policy.widht", "net_arch"]),
    ({"policy": {"arch": "sparse", "sparse_activation": "gelu"}}, ["policy.sparse_activation", "relu | tanh"]),
    ({"league": {"mix": {"self": 1, "bots": 1}}}, ["league.mix.bots", "zoo", "random"]),
    ({"league": {"zoo": ["greedy", "nobody"]}}, ["league.zoo", "nobody", "survivor"]),
    ({"num_players": 11}, ["num_players", "<= 10"]),
    ({"reward_mode": "money"}, ["reward_mode", "win", "placement"]),
    ({"n_envs": 32, "n_steps": 32, "batch_size": 1000}, ["batch_size", "1024"]),
    ({"gamma": 1.5}, ["gamma"]),
    ({"progress": "yes"}, ["progress", "true or false"]),
    ({"player_counts": [2, 11]}, ["player_counts", "2..10"]),
    ({"player_counts": [4, 4]}, ["player_counts", "distinct"]),
    ({"player_counts": [2, 3, 4], "n_envs": 2, "n_steps": 2, "batch_size": 4}, ["n_envs", "one game per player count"]),
])
def test_config_errors_name_key_and_allowed_values(data, words):
    with pytest.raises(ConfigError) as e:
        config_from_dict(data)
    for w in words:
        assert w in str(e.value)


def test_config_yaml_errors(tmp_path):
    p = tmp_path / "bad.yaml"
    p.write_text("seed: [1\n")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_config(p)
    with pytest.raises(ConfigError, match="not found"):
        load_config(tmp_path / "missing.yaml")


def test_cli_rejects_bad_config(tmp_path):
    p = tmp_path / "bad.yaml"
    p.write_text(yaml.safe_dump({"policy": {"arch": "cnn"}}))
    r = subprocess.run([sys.executable, "-m", "ripmarket_env.app.cli", "train", str(p), "--out", str(tmp_path)],
                       capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert r.returncode == 2
    assert "policy.arch" in r.stderr and "seat" in r.stderr and "Traceback" not in r.stderr


# ----------------------------------------------------------------------------- smoke run
@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("smoke")
    r = subprocess.run([sys.executable, "-m", "ripmarket_env.app.cli", "train", str(ROOT / "configs/ripmarket/smoke.yaml"),
                        "--out", str(out)], capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    (run_dir,) = (out / "checkpoints").iterdir()
    return out, run_dir


def test_smoke_run_writes_logs_and_checkpoints(smoke_run):
    out, run_dir = smoke_run
    name = run_dir.name
    env, exp, seed, stamp = name.split("__")
    assert (env, exp, seed) == ("ripmarket", "smoke", "1") and stamp.isdigit()
    for tag in ("latest", "best", "final"):
        assert (run_dir / f"{tag}.zip").is_file()
    events = list((out / "runs" / name).glob("events.out.tfevents.*"))
    assert events
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    ea = EventAccumulator(str(out / "runs" / name))
    ea.Reload()
    tags = ea.Tags()["scalars"]
    assert "charts/win_rate_vs_zoo" in tags and "charts/SPS" in tags
    assert any(t.startswith("losses/") for t in tags)
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["steps"] >= 2048 and summary["final_eval"]["games"] == 4
    # the warm start cloned the recorded zoo winners and the curve has the initial point
    pre = summary["pretrain"]
    assert pre["cloned_decisions"] > 0 and pre["decisions"] > pre["cloned_decisions"]
    assert (out / "pretrain" / "zoo4p_4games_seed7.npz").is_file()
    assert summary["evals"][0]["steps"] == 0 and len(summary["evals"]) >= 2
    assert (run_dir / "learning_curve.png").read_bytes()[:4] == b"\x89PNG"


def test_checkpoint_metadata(smoke_run):
    _, run_dir = smoke_run
    meta = read_metadata(run_dir / "final.zip")
    from ripmarket_env.games.ripmarket import Engine, RulesConfig

    eng = Engine(RulesConfig(num_players=4))
    assert meta["card_digest"] == eng.cards.digest
    assert meta["obs_size"] == eng.obs_size and meta["num_actions"] == eng.num_actions
    assert meta["num_players"] == [4] and meta["training_steps"] >= 2048
    assert meta["config"]["exp_name"] == "smoke" and meta["package_version"]


def test_checkpoint_plays_as_agent(smoke_run):
    _, run_dir = smoke_run
    from agents.policy import load_agent
    from ripmarket_env.games.ripmarket import Engine, RulesConfig

    bot = load_agent(run_dir / "final.zip", deterministic=False, seed=3)
    eng = Engine(RulesConfig(num_players=4), batch_size=3)
    eng.reset([1, 2, 3])
    for _ in range(2000):
        if eng.terminated.all():
            break
        obs = eng.observe()
        acts = bot.act_batch(obs, eng.legal_mask())
        eng.step(np.where(eng.terminated, -1, acts))  # illegal actions would raise
    assert eng.terminated.all()
    # deterministic agents repeat themselves
    det = load_agent(run_dir / "final.zip")
    o, m = eng.observe(), np.ones((3, eng.num_actions), bool)
    np.testing.assert_array_equal(det.act_batch(o, m), det.act_batch(o, m))


def test_resume_restores_weights_optimizer_and_steps_without_unpickling(smoke_run, tmp_path):
    """The safe resume path (``train.selfplay.load_model``, ``ripmarket train --resume``)
    gives back the saved network, Adam state and step count, and training goes on from
    them; SB3's ``data`` member is not needed (it is removed here)."""
    import torch

    from train.selfplay import load_model

    _, run_dir = smoke_run
    src = run_dir / "final.zip"
    with zipfile.ZipFile(src) as z:
        saved = torch.load(io.BytesIO(z.read("policy.pth")), weights_only=True)
        saved_opt = torch.load(io.BytesIO(z.read("policy.optimizer.pth")), weights_only=True)
        members = {n: z.read(n) for n in z.namelist() if n != "data"}
    no_data = tmp_path / "no_data.zip"
    with zipfile.ZipFile(no_data, "w") as z:
        for n, b in members.items():
            z.writestr(n, b)
    model, meta = load_model(no_data)
    assert model.num_timesteps == meta["training_steps"] == 2048
    got = model.policy.state_dict()
    assert saved.keys() == got.keys() and all(torch.equal(saved[k], got[k]) for k in saved)
    opt = model.policy.optimizer.state_dict()
    assert len(opt["state"]) == len(saved_opt["state"]) > 0
    for k, st in saved_opt["state"].items():
        assert int(opt["state"][k]["step"]) == int(st["step"]) > 0
        assert torch.equal(opt["state"][k]["exp_avg"], st["exp_avg"])

    out = tmp_path / "resumed"
    r = subprocess.run([sys.executable, "-m", "ripmarket_env.app.cli", "train", str(ROOT / "configs/ripmarket/smoke.yaml"),
                        "--out", str(out), "--resume", str(no_data), "--total-timesteps", "3072"],
                       capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert r.returncode == 0, r.stderr[-2000:]
    (final,) = out.glob("checkpoints/*/final.zip")
    assert read_metadata(final)["training_steps"] == 3072
    summary = json.loads((final.parent / "summary.json").read_text())
    assert summary["steps"] == 3072 and "pretrain" not in summary  # went on, no warm start again
    # a checkpoint that is already done, or another network, is refused before any folder is made
    again = tmp_path / "again"
    r = subprocess.run([sys.executable, "-m", "ripmarket_env.app.cli", "train", str(ROOT / "configs/ripmarket/smoke.yaml"),
                        "--out", str(again), "--resume", str(final)], capture_output=True, text=True,
                       timeout=600, cwd=ROOT)
    assert r.returncode == 2 and "already trained 3,072 steps" in r.stderr and not again.exists()
    other = tmp_path / "other.yaml"
    other.write_text((ROOT / "configs/ripmarket/smoke.yaml").read_text().replace("net_arch: [32]", "net_arch: [16]"))
    r = subprocess.run([sys.executable, "-m", "ripmarket_env.app.cli", "train", str(other), "--out", str(again),
                        "--resume", str(final), "--total-timesteps", "9999"], capture_output=True, text=True,
                       timeout=600, cwd=ROOT)
    assert r.returncode == 2 and "network" in r.stderr and not again.exists()


# ----------------------------------------------------------------------------- errors
def _rewrite_meta(src: Path, dst: Path, change) -> None:
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w") as zout:
        for item in zin.infolist():
            data = zin.read(item.filename)
            if item.filename == "ripmarket.json":
                meta = json.loads(data)
                change(meta)
                data = json.dumps(meta).encode()
            zout.writestr(item, data)


def test_layout_mismatch_names_the_part(smoke_run, tmp_path):
    from agents.policy import load_agent

    _, run_dir = smoke_run

    def grow_hand(meta):
        meta["layout"] = [[n, s + 1 if n == "hand" else s, sc] for n, s, sc in meta["layout"]]
        meta["layout_digest"] = "0000"

    bad = tmp_path / "layout.zip"
    _rewrite_meta(run_dir / "final.zip", bad, grow_hand)
    with pytest.raises(CheckpointError, match=r"observation layout differs.*hand"):
        load_agent(bad)

    def other_cards(meta):
        meta["card_digest"] = "ab" * 32

    bad2 = tmp_path / "cards.zip"
    _rewrite_meta(run_dir / "final.zip", bad2, other_cards)
    with pytest.raises(CheckpointError, match=r"trained on an unknown card database \(card digest abababababab\)"):
        load_agent(bad2)

    def fewer_actions(meta):
        meta["num_actions"] -= 1

    bad3 = tmp_path / "actions.zip"
    _rewrite_meta(run_dir / "final.zip", bad3, fewer_actions)
    with pytest.raises(CheckpointError, match="action count differs"):
        load_agent(bad3)


def test_corrupt_and_truncated_checkpoints(smoke_run, tmp_path):
    from agents.policy import load_agent

    _, run_dir = smoke_run
    raw = (run_dir / "final.zip").read_bytes()
    cases = {
        "truncated.zip": raw[: len(raw) // 2],
        "garbage.zip": b"not a zip at all" * 10,
        "empty.zip": b"",
        "flipped.zip": raw[:200] + bytes(b ^ 0xFF for b in raw[200:400]) + raw[400:],
    }
    for name, data in cases.items():
        p = tmp_path / name
        p.write_bytes(data)
        with pytest.raises(CheckpointError):
            load_agent(p)
    with pytest.raises(CheckpointError, match="not found"):
        load_agent(tmp_path / "missing.zip")
    plain = tmp_path / "plain.zip"
    with zipfile.ZipFile(plain, "w") as z:
        z.writestr("data", "{}")
    with pytest.raises(CheckpointError, match="not a ripmarket checkpoint"):
        load_agent(plain)


# ----------------------------------------------------------------------------- shipped bot
def test_shipped_bot_registered_and_plays():
    import agents

    assert (ROOT / "agents" / "checkpoints" / "ppo-6p.zip").is_file(), "the shipped bot is missing"
    assert "ppo-6p" in agents.names()
    assert (ROOT / "agents" / "checkpoints" / "ppo-6p.zip").stat().st_size < 5 * 1024 * 1024
    bot = agents.make("ppo-6p")
    from ripmarket_env.games.ripmarket import Engine, RulesConfig

    eng = Engine(RulesConfig(num_players=6), batch_size=2)
    eng.reset([5, 6])
    a = bot.act_batch(eng.observe(), eng.legal_mask())
    assert eng.legal_mask()[np.arange(2), a].all()


def test_a_bot_plays_each_count_with_its_own_network(tmp_path):
    """``ByCountAgent``: rows from a table of N players go to the network for N, the rest
    to the default one, in one batch of mixed table sizes (the count read from R-12.3's
    ``num_players`` one-hot); a ``<name>-at-<N>p`` checkpoint serves ``<name>`` at N."""
    import agents
    from agents.policy import ByCountAgent, specialists
    from ripmarket_env.games.ripmarket import Engine, RulesConfig

    obs, masks, counts = [], [], []
    for n in (3, 6, 10, 6):
        eng = Engine(RulesConfig(num_players=n), batch_size=2)
        eng.reset([n, n + 1])
        obs.append(eng.observe())
        masks.append(eng.legal_mask())
        counts += [n, n]
    obs, masks, counts = np.concatenate(obs), np.concatenate(masks), np.array(counts)
    every, at6 = agents.make("ppo-stage2"), agents.make("ppo-6p")
    bot = ByCountAgent(every, {6: at6}, name="ppo")
    np.testing.assert_array_equal(bot.counts(obs), counts)
    z, six = bot.logits(obs), counts == 6
    np.testing.assert_allclose(z[six], at6.logits(obs[six]), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(z[~six], every.logits(obs[~six]), rtol=1e-5, atol=1e-5)
    assert not np.allclose(z[six], every.logits(obs[six]), atol=1e-3)  # the two networks differ there
    a = bot.act_batch(obs, masks)
    np.testing.assert_array_equal(a[six], at6.act_batch(obs[six], masks[six]))
    np.testing.assert_array_equal(a[~six], every.act_batch(obs[~six], masks[~six]))
    assert masks[np.arange(len(a)), a].all() and bot.act(obs[2], masks[2]) == a[2]
    with pytest.raises(ValueError, match="player counts 2..10"):
        ByCountAgent(every, {11: at6})
    import torch

    from agents.export import export_agent, load_export

    with pytest.raises(ValueError, match="one network per player count"):
        export_agent(bot, tmp_path / "both.safetensors")
    ts = load_export(export_agent(bot, tmp_path / "six.safetensors", source=ROOT / "agents" / "checkpoints" / "ppo-6p.zip"))
    got = ts(torch.as_tensor(obs[six]), torch.as_tensor(masks[six])).argmax(1).numpy()
    np.testing.assert_array_equal(got, a[six])  # the export of the 6-player network
    files = {s: Path(f"{s}.zip") for s in ("ppo", "ppo-at-6p", "ppo-at-10p", "ppo-at-11p", "x-at-4p", "ppo-6p")}
    assert specialists(files) == {"ppo": {"6p": Path("ppo-at-6p.zip"), "10p": Path("ppo-at-10p.zip")}}
    shipped = agents.make("ppo")  # the shipped bot: its own networks at 4 and 6 players (configs/ripmarket/ppo_at_*.yaml)
    assert isinstance(shipped, ByCountAgent) and list(shipped.by_count) == [4, 6]
    assert [shipped.by_count[n].name for n in (4, 6)] == ["ppo-at-4p", "ppo-at-6p"] and shipped.default.name == "ppo"


def test_export_policy_strips_optimizer(smoke_run, tmp_path):
    from agents.policy import load_agent
    from agents.checkpoint import export_policy

    _, run_dir = smoke_run
    dst = export_policy(run_dir / "final.zip", tmp_path / "small.zip")
    assert dst.stat().st_size < (run_dir / "final.zip").stat().st_size
    assert read_metadata(dst)["optimizer_stripped"] is True
    a, b = load_agent(run_dir / "final.zip"), load_agent(dst)
    obs = np.random.default_rng(0).random((4, a.metadata["obs_size"]), dtype=np.float32)
    masks = np.ones((4, a.metadata["num_actions"]), bool)
    np.testing.assert_array_equal(a.act_batch(obs, masks), b.act_batch(obs, masks))


def _num_players_slice() -> slice:
    """Where the observation names the player count (a one-hot from 2 players)."""
    from ripmarket_env.games.ripmarket import Engine, RulesConfig

    return Engine(RulesConfig(num_players=4)).obs_layout.slice("num_players")


def _random_legal(env, rng) -> np.ndarray:
    """A uniformly random legal action for every game of a vector env."""
    m = env.action_masks()
    z = rng.random(m.shape)
    z[m == 0] = -1
    return z.argmax(1)


def test_random_only_league_uses_the_compiled_path():
    from train.config import config_from_dict
    from train.selfplay import League, make_league_vec_env

    base = {"num_players": 4, "n_envs": 8, "n_steps": 8, "batch_size": 64}
    cfg = config_from_dict({**base, "league": {"mix": {"random": 1.0}}})
    env = make_league_vec_env(cfg, League(cfg, seed=0), 0)
    assert env.batch.compiled_opponents
    env.reset()
    rng = np.random.default_rng(0)
    for _ in range(20):
        obs, rew, done, info = env.step(_random_legal(env, rng))
        assert env.action_masks().any(axis=1).all()
    assert env.batch.env_time > 0
    mixed = config_from_dict({**base, "league": {"mix": {"random": 0.5, "self": 0.5}}})
    assert not make_league_vec_env(mixed, League(mixed, seed=0), 0).batch.compiled_opponents


def test_league_opponents_read_the_gathered_nonzeros_and_play_the_same():
    """The league batch hands its network opponents the non-zeros gathered with the
    observations (sparse_opponents); the games are the very same as scanning the dense
    observations for them."""
    from train.selfplay import League, make_league_vec_env

    cfg = config_from_dict({"num_players": 6, "n_envs": 16, "n_steps": 2, "batch_size": 32, "league": {
        "mix": {"zoo": 0.6, "self": 0.2, "random": 0.2}, "zoo": ["greedy-bc", "shark-bc", "trickster-bc"]}})
    runs = []
    for sparse in (True, False):
        league = League(cfg, seed=4)
        env = make_league_vec_env(cfg, league, 9)
        assert env.batch.sparse_opponents
        env.batch.sparse_opponents = sparse
        obs, seen = env.reset(), []
        rng = np.random.default_rng(0)
        for _ in range(40):
            obs, rew, done, _ = env.step(_random_legal(env, rng))
            seen.append((obs.copy(), rew.copy(), done.copy()))
        assert (env.batch.opp_csr is not None) == sparse
        runs.append(seen)
    for a, b in zip(*runs):
        assert all(np.array_equal(x, y) for x, y in zip(a, b))


def test_sparse_rollout_buffer_trains_exactly_as_scanning(monkeypatch):
    """arch sparse: the rollout buffer keeps each observation's non-zeros from the forward
    pass instead of the observation and hands every minibatch its rows (one scan per
    observation, not one per epoch); the trained weights are bit for bit those of storing
    the observations and scanning every minibatch again."""
    import torch
    from sb3_contrib.common.maskable.buffers import MaskableRolloutBuffer

    import agents.sparse
    from train import selfplay
    from train.selfplay import League, build_model, make_league_vec_env, seed_everything

    cfg = config_from_dict({"num_players": 4, "n_envs": 8, "n_steps": 4, "batch_size": 8, "n_epochs": 2,
                            "policy": {"arch": "sparse", "sparse_hidden": 16, "net_arch": [16]},
                            "league": {"mix": {"random": 1.0}}})
    scans = []
    real_csr = agents.sparse.csr
    monkeypatch.setattr(agents.sparse, "csr", lambda x: scans.append(len(x)) or real_csr(x))
    weights = []
    for keep in (True, False):
        if not keep:
            monkeypatch.setattr(selfplay, "SparseRolloutBuffer", MaskableRolloutBuffer)
        seed_everything(3)
        scans.clear()
        model = build_model(cfg, make_league_vec_env(cfg, League(cfg, seed=3), 3))
        assert (type(model.rollout_buffer).__name__ == "SparseRolloutBuffer") == keep
        model.learn(total_timesteps=2 * 8 * 4)
        weights.append([p.detach().clone() for p in model.policy.parameters()])
        # 2 rollouts of 4 steps: each step's forward pass scans its 8 observations (and the
        # value of the last one); scanning again costs 2 epochs x 4 minibatches per rollout
        assert sum(scans) == (2 * (4 * 8 + 8) if keep else 2 * (4 * 8 + 8) + 2 * 2 * 4 * 8)
        if keep:  # no dense observation is stored; a placeholder never passes for one
            assert model.rollout_buffer.observations.size == 0
            placeholder = torch.zeros(1).expand(3, model.observation_space.shape[0])
            with pytest.raises(RuntimeError, match="without values"):
                model.policy.pi_features_extractor(placeholder)
    assert all(torch.equal(a, b) for a, b in zip(*weights))


# ----------------------------------------------------------------------------- several player counts
def test_mixed_count_env_plays_every_count():
    """player_counts: one vector env whose rows are games at each count, in count order;
    every observation names its game's count (the observation's num_players one-hot)."""
    from train.selfplay import League, MixedBatch, make_league_vec_env

    cfg = config_from_dict({"player_counts": [2, 5, 10], "n_envs": 7, "n_steps": 2, "batch_size": 14,
                            "league": {"mix": {"random": 0.5, "zoo": 0.5}, "zoo": ["greedy-bc", "shark-bc"]}})
    env = make_league_vec_env(cfg, League(cfg, seed=0), 3)
    b = env.batch
    assert isinstance(b, MixedBatch) and b.player_counts == [2, 5, 10] and b.num_envs == 7
    sizes = [p.num_envs for p in b.parts]
    assert sum(sizes) == 7 and max(sizes) - min(sizes) == 1  # the games split as evenly as they go
    view = _num_players_slice()
    want = np.repeat([2, 5, 10], sizes)
    obs = env.reset()
    rng = np.random.default_rng(0)
    ended_total = 0
    for _ in range(150):
        assert (obs[:, view].argmax(1) + 2 == want).all()
        m = env.action_masks()
        assert m.any(axis=1).all()
        before = obs.copy()
        obs_next, rew, done, info = env.step(_random_legal(env, rng))
        # the observation acted on is left as it was (SB3 stores it after the step)
        assert np.array_equal(obs, before) and obs_next is not obs
        obs = obs_next
        for g in np.flatnonzero(done):  # a finished game's last observation, from its own count
            last = info[g]["terminal_observation"]
            assert last[view].argmax() + 2 == want[g]
            ended_total += 1
        assert (rew[~done] == 0).all()
    assert ended_total > 0 and b.env_time > 0
    assert env.reset().shape == (7, b.obs_size)


def test_mixed_count_training_run(tmp_path):
    """A tiny run at three counts: the warm start records games at each, the checkpoint
    names them, and every evaluation plays each count (the curve's points carry one result
    per count)."""
    from train.selfplay import train

    cfg = config_from_dict({"exp_name": "mixed", "player_counts": [2, 3, 6], "total_timesteps": 256, "n_envs": 6,
                            "n_steps": 32, "batch_size": 64, "n_epochs": 1, "eval_every": 128, "eval_games": 2,
                            "checkpoint_every": 0, "final_eval_games": 2, "progress": False,
                            "policy": {"arch": "mlp", "net_arch": [16]}, "pretrain": {"games": 3, "epochs": 1},
                            "league": {"mix": {"self": 0.5, "random": 0.5}, "eval_zoo": ["random"],
                                       "snapshot_every": 128}})
    summary = train(cfg, tmp_path)
    from train.distill import load_decisions

    rec = load_decisions(summary["pretrain"]["recording"])
    assert summary["pretrain"]["recording"].endswith("zoo2-3-6p_3games_seed7.npz")
    view = _num_players_slice()
    assert sorted(set(np.argmax(np.asarray(rec.obs[:, view], np.float32), axis=1) + 2)) == [2, 3, 6]
    assert read_metadata(Path(summary["checkpoint"]))["num_players"] == [2, 3, 6]
    assert len(summary["evals"]) >= 2
    for point in summary["evals"]:
        assert sorted(point["by_count"]) == [2, 3, 6]
        assert all(r["games"] == 2 for r in point["by_count"].values())
        expect = np.mean([r["win_rate"] * n for n, r in point["by_count"].items()])
        assert point["win_rate_vs_zoo"] == pytest.approx(expect)
    assert sorted(summary["final_eval"]["by_count"]) == [2, 3, 6]
    assert Path(summary["learning_curve"]).read_bytes()[:4] == b"\x89PNG"


def test_a_run_says_when_total_timesteps_rounds_up_to_whole_rollouts():
    """SB3 collects whole rollouts: ``ripmarket train --total-timesteps 64`` on a rollout of
    1,024 steps trains 1,024, and says so before it starts; a whole number says nothing."""
    from ripmarket_env.app.cli import rollout_note

    base = load_config(ROOT / "configs" / "ripmarket" / "smoke.yaml").to_dict()  # 32 x 32 = 1,024 steps a rollout
    assert rollout_note(config_from_dict({**base, "total_timesteps": 64})) == (
        "total_timesteps 64 is not a whole number of rollouts (n_envs x n_steps = 1,024 learner steps): training "
        "runs 1 rollout, 1,024 steps")
    assert "runs 3 rollouts, 3,072 steps" in rollout_note(config_from_dict({**base, "total_timesteps": 2049}))
    assert rollout_note(config_from_dict({**base, "total_timesteps": 2048})) is None
