"""Exports of the shipped checkpoints (agents/export.py, safetensors): every shipped export
is current (made from the checkpoint beside it), loads without a deprecation warning and
plays the same moves as the zoo's agent; an export file (or a checkpoint) is an opponent of
every env; a damaged export is refused with one line; the docs' few lines play a game as
RLlib opponents."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
import torch
from typer.testing import CliRunner

import agents
from agents.export import SHIPPED, FORMAT, SUFFIX, ExportError, export_agent, load_export, load_export_agent, read_meta, stale_exports, trained_cards
from ripmarket_env.envs.vector import vec_env_classes
from ripmarket_env.games import get

REPO = Path(__file__).resolve().parents[1]
#: Rules of the sampled games per shipped export (the seats it was trained for).
RULES = {"ppo-6p": {"num_players": 6}, "ppo": {"num_players": 8}, "ppo-at-4p": {"num_players": 4}, "ppo-at-6p": {"num_players": 6}, "zoo-bc": {"num_players": 6}, "rm-ppo-4p": {"num_players": 4},
         "bm-ppo": {"num_players": 6, "mode": "teams"}, "rm-ppo": {"num_players": 5}, "rm-ppo-search": {"num_players": 3}, "rm-ppo-search-at-2p": {"num_players": 2}, "bm-ppo-4p-teams": {"num_players": 4, "mode": "teams"},
         "bm-ppo-at-4p-ffa": {"num_players": 4, "mode": "ffa"}, "bm-ppo-at-6p-ffa": {"num_players": 6, "mode": "ffa"},
         "bm-ppo-at-4p-teams": {"num_players": 4, "mode": "teams"}, "bm-ppo-at-2p-teams": {"num_players": 2, "mode": "teams"}}


def sampled_batches(game: str, rules: dict, steps: int = 4, n: int = 48):
    """(obs, int8 masks) of the learner seats of ``n`` games over ``steps`` random moves."""
    venv = vec_env_classes(get(game))[0](num_envs=n, rules=rules, learner_seat="random", seed=11)
    obs = venv.reset()
    rng = np.random.default_rng(0)
    for _ in range(steps):
        masks = venv.action_masks()
        yield obs.copy(), masks
        keys = rng.random(masks.shape)
        keys[masks == 0] = -1
        obs, *_ = venv.step(keys.argmax(1))


def test_every_shipped_export_is_current():
    assert stale_exports() == []
    names = {s.path.stem for s in SHIPPED}
    assert names == set(RULES)
    for s in SHIPPED:
        meta = read_meta(s.path)
        assert meta["format"] == FORMAT and meta["game"] == s.game and meta["source"] == s.source.name


@pytest.mark.parametrize("shipped", SHIPPED, ids=lambda s: s.path.stem)
def test_shipped_export_plays_as_the_agent(shipped):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no DeprecationWarning (nor any other) on loading
        policy = load_export(shipped.path)
    meta = read_meta(shipped.path)
    styles = meta.get("styles")
    cards = trained_cards(shipped.source) if shipped.game == "ripmarket" else None  # the cards it plays
    kw = {"cards": cards} if cards is not None else {}
    bots = ([(i, agents.make(f"{st}-bc", **kw)) for i, st in enumerate(styles)] if styles
            else [(None, agents.make(shipped.name, game=shipped.game, **kw))])
    for obs, masks in sampled_batches(shipped.game, RULES[shipped.path.stem]):
        assert obs.shape[1] == meta["obs_size"] and masks.shape[1] == meta["num_actions"]
        for style, bot in bots:
            with torch.no_grad():
                args = (torch.from_numpy(obs), torch.from_numpy(masks))
                logits = policy(*args) if style is None else policy(*args, style)
            exported = logits.argmax(-1).numpy()
            np.testing.assert_array_equal(exported, bot.act_batch(obs, masks))
            assert (masks[np.arange(len(masks)), exported] == 1).all()
            assert torch.isinf(logits[torch.from_numpy(masks) == 0]).all()
    if styles:  # style -1 (or left out) is the default style, greedy
        obs, masks = next(sampled_batches(shipped.game, RULES["zoo-bc"], steps=1))
        a = torch.from_numpy(obs), torch.from_numpy(masks)
        assert torch.equal(policy(*a), policy(*a, 0)) and torch.equal(policy(*a, -1), policy(*a, 0))
        with pytest.raises(Exception, match="style"):
            policy(*a, len(styles))


def test_a_retrained_checkpoint_makes_its_export_stale(tmp_path, monkeypatch):
    import agents.export as E

    src = tmp_path / "ppo-6p.zip"
    src.write_bytes(SHIPPED[0].source.read_bytes() + b"\0")  # another file
    fake = E.Shipped("ppo-6p", "ripmarket", src, SHIPPED[0].path)
    monkeypatch.setattr(E, "SHIPPED", (fake,))
    assert E.stale_exports() == [f"ppo-6p{SUFFIX} was not made from the current ppo-6p.zip"]
    monkeypatch.setattr(E, "SHIPPED", (E.Shipped("ppo-6p", "ripmarket", src, tmp_path / f"ppo-6p{SUFFIX}"),))
    assert E.stale_exports() == [f"ppo-6p{SUFFIX} is missing"]


def test_docs_snippet_plays_rllib_opponents(monkeypatch):
    """The few lines of docs/SCALE_OUT.md, as written, play every seat of an RLlib
    MultiAgentEnv game to its end with legal moves only (the env raises on an illegal one)."""
    text = (REPO / "docs" / "SCALE_OUT.md").read_text(encoding="utf-8")
    code = re.search(r"<!-- snippet: torch-opponent -->\n```python\n(.*?)```", text, re.S).group(1)
    monkeypatch.chdir(REPO)
    ns: dict = {}
    exec(compile(code, "SCALE_OUT.md", "exec"), ns)
    import ripmarket_env

    env = ripmarket_env.rllib_env()({"num_players": 6})
    obs, _ = env.reset(seed=3)
    seat_style = {a: (None if i % 2 == 0 else i % 5) for i, a in enumerate(env.possible_agents)}
    for _ in range(2000):
        (agent, o), = obs.items()
        obs, rewards, terms, _, _ = env.step({agent: ns["opponent"](o["observations"], o["action_mask"],
                                                                    seat_style[agent])})
        if terms["__all__"]:
            break
    assert terms["__all__"] and abs(sum(rewards.values())) < 1e-6


def test_export_cli(tmp_path):
    from ripmarket_env.app.cli import app

    runner = CliRunner()
    r = runner.invoke(app, ["export", "--check"])
    assert r.exit_code == 0, r.output
    out = tmp_path / "bm.safetensors"
    r = runner.invoke(app, ["export", "bm-ppo-4p-teams", "--game", "black-market", "--out", str(out)])
    assert r.exit_code == 0, r.output
    assert read_meta(out)["agent"] == "bm-ppo-4p-teams" and read_meta(out)["num_actions"] == 69
    r = runner.invoke(app, ["export", "bm-ppo-4p-teams", "--game", "black-market", "--out", str(out)])
    assert r.exit_code == 2 and "exists" in r.output and "--force" in r.output
    r = runner.invoke(app, ["export", "greedy", "--out", str(tmp_path / "g.safetensors")])
    assert r.exit_code == 2 and "not a trained agent" in r.output and not (tmp_path / "g.safetensors").exists()
    r = runner.invoke(app, ["export", "ppo-6p", "--shipped"])
    assert r.exit_code == 2 and "one of: AGENT, --shipped or --check" in r.output


def test_export_of_a_checkpoint_file_records_its_fingerprint(tmp_path):
    from agents.export import file_sha256
    from agents.policy import load_agent

    src = next(s.source for s in SHIPPED if s.name == "rm-ppo-4p")
    path = export_agent(load_agent(src), tmp_path / "rm.safetensors", game="rune-market", source=src)
    assert read_meta(path)["source_sha256"] == file_sha256(src)


# --------------------------------------------------------------------------- exports as opponents
def test_export_and_checkpoint_files_are_opponents_of_every_env():
    """``opponents=`` takes an export file or a checkpoint path as well as an agent, in the
    gym env (``gymnasium.make``), the Gymnasium vector env and the SB3 vector env, resolved
    by the app's entry layer (``agents.resolve``); the export plays the checkpoint's moves."""
    import gymnasium

    import ripmarket_env  # noqa: F401  (registers the ids)
    from agents.export import ExportAgent
    from ripmarket_env.app.entry import zoo_class

    shipped = next(s for s in SHIPPED if s.name == "rm-ppo-4p")
    spec = get("rune-market")
    for opp in (shipped.path, str(shipped.path), str(shipped.source)):
        env = gymnasium.make(spec.gym_id, num_players=4, opponents=opp)
        assert len(env.unwrapped.opponents) == 1
        obs, info = env.reset(seed=2)
        for _ in range(30):
            obs, r, term, trunc, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
            if term:
                obs, info = env.reset()
    export = agents.resolve(shipped.path, game="rune-market")
    assert isinstance(export, ExportAgent)
    zoo_agent = agents.make("rm-ppo-4p", game="rune-market")
    for obs, masks in sampled_batches("rune-market", {"num_players": 4}, steps=2):
        np.testing.assert_array_equal(export.act_batch(obs, masks), zoo_agent.act_batch(obs, masks))
    venv = gymnasium.make_vec(spec.gym_id, num_envs=3, num_players=4, opponents=[str(shipped.path)] * 3, seed=0)
    venv.reset(seed=0)
    sb3 = zoo_class(spec, "vec")(num_envs=2, num_players=4, opponents=shipped.path, seed=0)
    sb3.reset()
    sb3.step(np.array([int(np.flatnonzero(m)[0]) for m in sb3.action_masks()]))
    with pytest.raises(ExportError, match="an export of game 'rune-market'; it cannot play 'black-market'"):
        gymnasium.make("BlackMarket-v0", num_players=2, opponents=str(shipped.path))
    with pytest.raises(ValueError, match=r"not an agent; allowed: an export \(.safetensors\), a checkpoint \(.zip\)"):
        agents.resolve(REPO / "README.md", game="rune-market")


def test_damaged_exports_are_refused_with_one_line(tmp_path):
    import json

    from safetensors.torch import load_file, save_file

    good = next(s for s in SHIPPED if s.name == "bm-ppo-4p-teams").path
    meta = read_meta(good)
    tensors = load_file(str(good))

    def write(name, t=tensors, m=meta, raw=None):
        p = tmp_path / name
        if raw is not None:
            p.write_bytes(raw)
        else:
            save_file(t, str(p), metadata=None if m is None else {"ripmarket": m if isinstance(m, str) else json.dumps(m)})
        return p

    cases = {
        "truncated": (write("t.safetensors", raw=good.read_bytes()[:5000]), "not a safetensors export|cannot read"),
        "text": (write("x.safetensors", raw=b"hello"), "not a safetensors export"),
        "no header": (write("n.safetensors", m=None), "no 'ripmarket' entry"),
        "not json": (write("j.safetensors", m="{oops"), "not JSON"),
        "format": (write("f.safetensors", m={**meta, "format": "other/1"}), "format must be"),
        "layers": (write("l.safetensors", m={**meta, "layers": ["linear", "gelu"]}), "layers must be a list"),
        "shape": (write("s.safetensors", m={**meta, "obs_size": meta["obs_size"] + 1}), "must be a Linear layer taking"),
        "extra": (write("e.safetensors", t={**tensors, "code": tensors["net.0.bias"].clone()}), "tensors unexpected: code"),
    }
    for what, (path, msg) in cases.items():
        with pytest.raises(ExportError, match=msg) as exc:
            load_export(path)
        assert str(path) in str(exc.value) and "\n" not in str(exc.value), what
    # a game name of 900 kB in the header: loads, and the refusal to play another game
    # echoes it cut short
    huge = write("g.safetensors", m={**meta, "game": "x" * 900_000})
    with pytest.raises(ExportError, match="an export of game 'xxx") as exc:
        load_export_agent(huge, game="black-market")
    assert len(str(exc.value)) < 400 and "it cannot play 'black-market'" in str(exc.value)


@pytest.mark.parametrize("game, name", [("black-market", "bm-ppo"), ("rune-market", "rm-ppo-search")])
def test_a_bot_with_a_network_per_table_exports_its_default_network_by_its_zoo_name(tmp_path, game, name):
    """``ripmarket export bm-ppo --game black-market`` (docs/SCALE_OUT.md): by its zoo name a
    bot that plays a network per table exports its default network, the same weights as its
    shipped export (``agents/checkpoints/<name>.safetensors``); it used to be refused with a
    list of choices that named the bot itself."""
    from safetensors.numpy import load_file

    out = tmp_path / f"{name}.safetensors"
    res = CliRunner().invoke(__import__("ripmarket_env.app.cli", fromlist=["app"]).app,
                             ["export", name, "--game", game, "--out", str(out)])
    assert res.exit_code == 0, res.output
    mine, shipped = load_file(out), load_file(Path(agents.__file__).parent / "checkpoints" / f"{name}.safetensors")
    assert mine.keys() == shipped.keys() and all(np.array_equal(mine[k], shipped[k]) for k in mine)
    assert read_meta(out)["agent"] == name


def test_a_seat_network_exports_as_plain_layers(tmp_path):
    """A network with the ``seat`` extractor (``arch: seat``, as in configs/ripmarket/smoke.yaml)
    exports as Linear and ReLU layers with block-diagonal weights
    (``SeatExtractor.dense_layers``): the export picks the agent's moves and its logits are
    the network's up to float rounding."""
    from gymnasium import spaces
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

    from agents.networks import policy_kwargs
    from agents.policy import PolicyAgent
    from agents.policy_config import PolicyConfig

    torch.manual_seed(3)
    eng = get("ripmarket").make_engine(get("ripmarket").make_rules(6), 1)
    net = MaskableActorCriticPolicy(spaces.Box(-1e9, 1e9, (eng.obs_size,), np.float32), spaces.Discrete(eng.num_actions),
                                    lambda _: 0.0, **policy_kwargs(PolicyConfig(arch="seat", net_arch=[32],
                                                                                seat_hidden=8, global_hidden=16)))
    with torch.no_grad():  # biases too, so that a misplaced block would show
        for p in net.parameters():
            p.add_(torch.randn_like(p) * 0.1)
    bot = PolicyAgent(net.eval(), name="seat-net")
    path = export_agent(bot, tmp_path / "seat.safetensors")
    assert read_meta(path)["layers"][:4] == ["linear", "relu", "linear", "relu"]
    policy = load_export(path)
    for obs, masks in sampled_batches("ripmarket", {"num_players": 6}):
        with torch.no_grad():
            logits = policy(torch.from_numpy(obs), torch.from_numpy(masks))
            want = net.action_net(net.mlp_extractor.forward_actor(net.extract_features(torch.from_numpy(obs),
                                                                                         net.pi_features_extractor)))
        legal = torch.from_numpy(masks) == 1
        torch.testing.assert_close(logits[legal], want[legal], rtol=1e-5, atol=1e-5)
        np.testing.assert_array_equal(logits.argmax(-1).numpy(), bot.act_batch(obs, masks))


@pytest.mark.parametrize("game, name, inner", [("ripmarket", "ppo-lookahead", "ppo"),
                                               ("black-market", "bm-ppo-lookahead", "bm-ppo")])
def test_exporting_a_search_around_a_bot_names_the_bot_to_export(tmp_path, game, name, inner):
    """A lookahead bot holds no network of its own: the refusal names it by its zoo name and
    the command that exports the trained bot it plays."""
    from ripmarket_env.app.cli import app

    res = CliRunner().invoke(app, ["export", name, "--game", game, "--out", str(tmp_path / "x.safetensors")])
    text = " ".join(res.output.split())
    assert res.exit_code != 0 and f"{name} is not a trained agent" in text, text
    flag = "" if game == "ripmarket" else f" --game {game}"
    assert f"ripmarket export {inner}{flag}" in text and not (tmp_path / "x.safetensors").exists()
