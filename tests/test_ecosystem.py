"""Other trainers run on the envs as they are, with no glue code (the ``ecosystem`` extra):
RLlib's PPO with action masking on ``ripmarket_env.rllib_env()``, Tianshou's
``PettingZooEnv``, TorchRL's ``PettingZooWrapper`` (``check_env_specs``), AgileRL on the
vector env, Stable-Baselines3's ``make_vec_env("RipMarket-v0")``, and on the parallel env
TorchRL, AgileRL's IPPO, RLlib and Stable-Baselines3 through SuperSuit's vector env. Each test is small
(seconds) and would fail on the glue the ecosystem used to need (string or
variable-length infos, bool masks, unregistered ids, no rgb_array render)."""

from __future__ import annotations

import numpy as np
import pytest

import ripmarket_env
from ripmarket_env.games import ids
from ripmarket_env.games.ripmarket.state import PHASE_NAMES

GHOST_PHASES = {PHASE_NAMES.index("ghost"), PHASE_NAMES.index("choose_victim")}


# --------------------------------------------------------------------------- RLlib adapter
def test_rllib_env_turns_ghosts_and_end_of_game_rewards():
    """The MultiAgentEnv: one observation per step (the deciding seat, its mask int8),
    Ghosts keep deciding, every seat's final reward and termination on the last step."""
    import ray.rllib  # noqa: F401  (the ecosystem extra, installed by make test)
    env = ripmarket_env.rllib_env()({"num_players": 4})
    rng = np.random.default_rng(0)
    ghost_decisions = 0
    for seed in range(6):
        obs, infos = env.reset(seed=seed)
        aec = env.aec
        while True:
            (agent, o), = obs.items()
            assert agent == aec.agent_selection and set(infos) == {agent}
            assert o["action_mask"].dtype == np.int8 and o["action_mask"].any()
            assert env.observation_spaces[agent].contains(o)
            ghost_decisions += infos[agent]["phase_id"] in GHOST_PHASES
            a = int(rng.choice(np.flatnonzero(o["action_mask"])))
            obs, rewards, terms, truncs, infos = env.step({agent: a})
            if terms["__all__"]:
                break
            assert set(rewards) == set(obs) and all(r == 0.0 for r in rewards.values())
        assert set(obs) == set(rewards) == set(env.possible_agents)
        assert all(terms[a] for a in env.possible_agents) and not truncs["__all__"]
        final = aec.engine.rewards()[0]
        assert [rewards[a] for a in env.possible_agents] == pytest.approx(final.tolist())
        assert max(rewards.values()) > 0
    assert ghost_decisions > 0
    with pytest.raises(ValueError, match="whose turn it is"):
        obs, _ = env.reset(seed=1)
        other = next(a for a in env.possible_agents if a not in obs)
        env.step({other: 0})


def test_rllib_ppo_with_action_masking(local_ray):
    """RLlib's new API stack: PPO with its own action-masking RLModule, one shared policy,
    two training iterations. An unmasked action would raise in the env (illegal_action
    "raise"), so finished iterations mean every sampled action was legal."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.rllib.examples.rl_modules.classes.action_masking_rlm import ActionMaskingTorchRLModule

    config = (
        PPOConfig()
        .environment(ripmarket_env.rllib_env(), env_config={"num_players": 3})
        .env_runners(num_env_runners=0, rollout_fragment_length=100)
        .training(train_batch_size=200, minibatch_size=100, num_epochs=1)
        .multi_agent(policies={"shared"}, policy_mapping_fn=lambda agent_id, episode, **kw: "shared")
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={
            "shared": RLModuleSpec(module_class=ActionMaskingTorchRLModule, model_config={"fcnet_hiddens": [32]}),
        }))
    )
    algo = config.build_algo()
    try:
        before = algo.get_module("shared").get_state()
        for _ in range(2):
            result = algo.train()
        after = algo.get_module("shared").get_state()
        assert result["env_runners"]["num_episodes"] > 0
        returns = result["env_runners"]["agent_episode_returns_mean"]
        # the end-of-game rewards reach RLlib: a mean per seat inside [-0.5, 1] that sums to
        # zero (R-11.1, win: +1, the others -1/2 each). Each mean may itself be 0 (each seat
        # winning a third of the iteration's games), so the payout is checked on one episode too.
        assert set(returns) == {"player_0", "player_1", "player_2"}
        assert all(-0.5 - 1e-6 <= r <= 1 + 1e-6 for r in returns.values()) and abs(sum(returns.values())) < 1e-6
        env = ripmarket_env.rllib_env()({"num_players": 3})
        obs, _ = env.reset(seed=0)
        rng, totals, done = np.random.default_rng(0), {}, False
        while not done:
            obs, rew, term, trunc, _ = env.step(
                {a: int(rng.choice(np.flatnonzero(o["action_mask"]))) for a, o in obs.items()})
            for a, r in rew.items():
                totals[a] = totals.get(a, 0.0) + r
            done = term["__all__"] or trunc["__all__"]
        assert sorted(totals.values()) == [-0.5, -0.5, 1.0]
        changed = [k for k in before if not np.allclose(np.asarray(before[k]), np.asarray(after[k]))]
        assert changed  # the policy learned something
    finally:
        algo.stop()


# --------------------------------------------------------------------------- Tianshou
def test_tianshou_pettingzoo_env_collects_episodes():
    import tianshou  # noqa: F401
    from tianshou.algorithm.multiagent.marl import MultiAgentOffPolicyAlgorithm
    from tianshou.algorithm.random import MARLRandomDiscreteMaskedOffPolicyAlgorithm
    from tianshou.data import Collector, VectorReplayBuffer
    from tianshou.env import DummyVectorEnv, PettingZooEnv

    def make():
        return PettingZooEnv(ripmarket_env.env(num_players=3))

    env = make()
    algo = MultiAgentOffPolicyAlgorithm(
        algorithms=[MARLRandomDiscreteMaskedOffPolicyAlgorithm(env.action_space) for _ in env.agents], env=env)
    venv = DummyVectorEnv([make, make])
    collector = Collector(algo.policy, venv, VectorReplayBuffer(20_000, 2))
    collector.reset()
    stats = collector.collect(n_episode=4)
    assert stats.n_collected_episodes >= 4
    assert stats.n_collected_steps > 40
    # The random policy reads the mask from the observation: it never plays illegal moves,
    # which would have ended an episode with -1 for the offender (TerminateIllegalWrapper).
    buf = collector.buffer
    rew = buf.rew[: len(buf)]
    assert np.isin(np.round(rew.sum(axis=1), 6), [0.0]).mean() > 0.99  # zero-sum, nothing forfeited


# --------------------------------------------------------------------------- TorchRL
def test_torchrl_pettingzoo_wrapper_check_env_specs():
    import torchrl  # noqa: F401
    from torchrl.envs import PettingZooWrapper
    from torchrl.envs.utils import check_env_specs

    env = PettingZooWrapper(ripmarket_env.env(num_players=3), use_mask=True, categorical_actions=True,
                            group_map={"players": ["player_0", "player_1", "player_2"]})
    check_env_specs(env, seed=0)
    td = env.rollout(30, break_when_any_done=True)
    assert td["players", "action_mask"].dtype.is_floating_point is False
    assert td["players", "info", "phase_id"].shape[-1] == 3 or td["players", "info", "phase_id"].ndim >= 2


# --------------------------------------------------------------------------- AgileRL
def test_agilerl_ppo_on_the_vector_env():
    import agilerl  # noqa: F401
    import gymnasium
    from agilerl.algorithms.ppo import PPO

    venv = gymnasium.make_vec("RipMarket-v0", num_envs=4, num_players=3, seed=0)
    agent = PPO(venv.single_observation_space, venv.single_action_space, num_envs=4, learn_step=16,
                batch_size=32, net_config={"encoder_config": {"hidden_size": [32]}}, device="cpu")
    obs, info = venv.reset(seed=0)
    steps = 0
    for _ in range(16):
        action, log_prob, _, value = agent.get_action(obs, action_mask=info["action_mask"])
        assert all(info["action_mask"][i, a] == 1 for i, a in enumerate(action))
        obs, reward, term, trunc, info = venv.step(action)
        steps += 4
    assert steps == 64


# --------------------------------------------------------------------------- SB3
def test_sb3_make_vec_env_with_rgb_array():
    from stable_baselines3.common.env_util import make_vec_env

    venv = make_vec_env("RipMarket-v0", n_envs=2, env_kwargs={"num_players": 3, "render_mode": "rgb_array"}, seed=0)
    obs = venv.reset()
    assert obs.shape == (2, venv.observation_space.shape[0])
    masks = np.stack(venv.env_method("action_masks"))
    assert masks.dtype == np.int8 and masks.any(axis=1).all()
    obs, rewards, dones, infos = venv.step(np.array([int(np.flatnonzero(m)[0]) for m in masks]))
    frames = venv.get_images()
    assert len(frames) == 2 and all(f.ndim == 3 and f.shape[2] == 3 and f.dtype == np.uint8 for f in frames)


# --------------------------------------------------------------------------- the parallel env
def _snippet(name: str) -> dict:
    """Run the ``<!-- snippet: name -->`` block of docs/SCALE_OUT.md as written; its names."""
    import re
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "docs" / "SCALE_OUT.md").read_text(encoding="utf-8")
    code = re.search(rf"<!-- snippet: {name} -->\n```python\n(.*?)```", text, re.S).group(1)
    ns: dict = {}
    exec(compile(code, f"SCALE_OUT.md:{name}", "exec"), ns)
    return ns


def test_torchrl_parallel_wrapper_rolls_out_the_parallel_env():
    """TorchRL's PettingZooWrapper in parallel mode (the docs' snippet): 300 steps, games
    auto-reset; every seat's mask has a legal action, the sampled actions are legal (an
    illegal one of the deciding seat would raise in the env), exactly one seat acts a step."""
    import torch

    from torchrl.envs.utils import check_env_specs

    ns = _snippet("torchrl-parallel")
    td = ns["td"]
    check_env_specs(ns["env"], seed=0)
    group = next(k for k in td.keys() if k not in ("done", "terminated", "truncated", "next"))
    masks, actions = td[group, "action_mask"], td[group, "action"]
    assert masks.shape[0] == 300 and masks.any(-1).all()
    assert masks.gather(-1, actions.unsqueeze(-1)).all()
    wait = masks.shape[-1] - 1
    assert ((actions != wait).sum(-1) == 1).all()  # one deciding seat, the others wait
    assert td[group, "info", "acting"].sum(-1).eq(1).all()
    assert td["next", group, "done"].any()  # at least one game ended (and was reset)
    assert torch.isfinite(td["next", group, "reward"]).all()


def test_agilerl_ippo_on_the_parallel_env():
    """AgileRL's IPPO (the docs' snippet) decides 200 parallel steps with the masks of the
    infos (the env raises on an illegal action of the deciding seat), then learns once."""
    ns = _snippet("agilerl-ippo")
    agent, env = ns["agent"], ns["env"]
    obs, info = env.reset(seed=1)
    ids = env.possible_agents
    roll = {k: {a: [] for a in ids} for k in ("s", "a", "lp", "r", "d", "v")}
    done = dict.fromkeys(ids, 0.0)
    for _ in range(64):
        action, log_prob, _, value = agent.get_action(obs=obs, infos=info)
        nobs, reward, term, trunc, ninfo = env.step(action)
        for a in ids:
            roll["s"][a].append(obs[a][None])
            roll["a"][a].append(np.asarray(action[a]).reshape(1))
            roll["lp"][a].append(np.asarray(log_prob[a]).reshape(1))
            roll["r"][a].append(np.asarray([reward[a]]))
            roll["d"][a].append(np.asarray([done[a]]))
            roll["v"][a].append(np.asarray(value[a]).reshape(1))
        done = {a: float(term[a] or trunc[a]) for a in ids}
        obs, info = (nobs, ninfo) if env.agents else env.reset()
    loss = agent.learn((roll["s"], roll["a"], roll["lp"], roll["r"], roll["d"], roll["v"],
                        {a: obs[a][None] for a in ids}, {a: np.asarray([done[a]]) for a in ids}))
    assert all(np.isfinite(v) for v in loss.values())


def test_supersuit_sb3_ppo_on_the_parallel_env():
    """Stable-Baselines3's PPO through SuperSuit's vector env of the parallel env (the
    docs' snippet): it learns from 512 steps, every row a seat of one of two games."""
    ns = _snippet("supersuit-sb3")
    venv, model = ns["venv"], ns["model"]
    assert venv.num_envs == 2 * 3 and model.num_timesteps >= 512
    obs = venv.reset()
    assert obs.shape == (6, venv.observation_space.shape[0]) and np.isfinite(obs).all()


@pytest.mark.parametrize("game", ids())
def test_supersuit_vector_env_plays_every_game_with_the_masks(game):
    """SuperSuit's ``pettingzoo_env_to_vec_env_v1`` and ``concat_vec_envs_v1`` (SB3's base
    class) over the parallel env of every game, masked random play until each of the two
    games has ended: one row per seat, the masks in the observations; in each game exactly
    one seat has a choice (the others only wait) and its legal action is applied (an
    illegal one would raise); games end and start again with the last step's rewards,
    finite. The first deals are seeded through SuperSuit's inner vector env (its SB3
    wrapper cannot pass a seed, docs/SCALE_OUT.md) and each game's seats draw from their
    own stream, so the step where both first games have ended is the same on every run."""
    import supersuit as ss

    env = ripmarket_env.parallel_env(game, num_players=4)
    wait, n = env.wait_action, len(env.possible_agents)
    venv = ss.concat_vec_envs_v1(ss.pettingzoo_env_to_vec_env_v1(env), 2, num_cpus=0,
                                 base_class="stable_baselines3")
    assert venv.num_envs == 2 * n
    rngs = [np.random.default_rng(k) for k in range(2)]
    obs, _ = venv.venv.reset(seed=7)
    ended = np.zeros(2, bool)
    for _ in range(5000):  # far above the longest games of 100,000 random ones per table
        masks = obs["action_mask"]
        assert masks.shape == (2 * n, wait + 1) and masks.any(axis=1).all()
        choosing = masks[:, :wait].any(axis=1).reshape(2, n)
        assert (choosing.sum(axis=1) == 1).all()
        assert not masks[choosing.ravel(), wait].any()
        actions = np.array([rngs[i // n].choice(np.flatnonzero(m)) for i, m in enumerate(masks)])
        obs, rewards, dones, infos = venv.step(actions)
        assert np.isfinite(rewards).all()
        dones = np.asarray(dones, dtype=bool)
        assert (rewards[~dones] == 0).all()
        ended |= dones.reshape(2, n).all(axis=1)
        if ended.all():
            break
    assert ended.all()


def test_rllib_ppo_on_the_parallel_env(local_ray):
    """RLlib's ParallelPettingZooEnv with its action-masking RLModule (the docs' snippet):
    a training iteration samples and learns (every sampled action legal: the env raises)."""
    ns = _snippet("rllib-parallel")
    algo, result = ns["algo"], ns["result"]
    try:
        assert result["env_runners"]["num_env_steps_sampled"] >= 200
        assert "shared" in result["learners"]
    finally:
        algo.stop()


# --------------------------------------------------------------------------- compile progress
def _kernels():
    """A fresh pair of njit functions (outer calls inner), the same names every call."""
    import numba

    @numba.njit(cache=False)
    def inner(x):
        return x + 1

    @numba.njit(cache=False)
    def outer(x):
        return inner(x) * 2

    return outer


def test_compile_progress_names_the_kernels_and_how_far(tmp_path, monkeypatch):
    """``core.jitcache.CompileProgress`` (installed by ``import ripmarket_env``) reports
    numba's compiles: plain lines off a terminal (which kernel, how many it pulled in, the
    time), one line rewritten in place on a terminal, and "k/N" once N is known from the
    last compile of that kernel (``compile-counts.json``)."""
    import io

    from numba.core import event

    from ripmarket_env.core.jitcache import CompileProgress

    plain = io.StringIO()
    counts = tmp_path / "compile-counts.json"
    with event.install_listener("numba:compile", CompileProgress(plain, tty=False, counts_path=counts)):
        assert _kernels()(1) == 4
    lines = plain.getvalue().splitlines()
    assert lines[0].startswith("numba: compiling kernels on first use")
    outer = f"{__name__}._kernels.<locals>.outer"
    assert any(f"compiled {outer} with 1 kernels it calls in" in ln for ln in lines), lines
    assert "\r" not in plain.getvalue()
    assert f'"{outer}": 1' in counts.read_text()
    monkeypatch.setenv("COLUMNS", "300")
    tty = io.StringIO()
    with event.install_listener("numba:compile", CompileProgress(tty, tty=True, counts_path=counts)):
        assert _kernels()(2) == 6
    text = tty.getvalue()
    assert "\r\x1b[2K" in text
    assert f"now {outer} > {__name__}._kernels.<locals>.inner (1/1 of" in text
    # in a narrow terminal the line rewritten in place never wraps: the name gives way
    monkeypatch.setenv("COLUMNS", "60")
    tty = io.StringIO()
    with event.install_listener("numba:compile", CompileProgress(tty, tty=True, counts_path=counts)):
        assert _kernels()(4) == 10
    status = [x for x in tty.getvalue().split("\r\x1b[2K") if x and not x.endswith("\n")]
    assert status and all(len(x) <= 59 and x.startswith("numba 0, 0 s: ") for x in status), status
    assert status[-1].endswith("s>.inner (1/1)")
    with event.install_listener("numba:compile", CompileProgress(io.StringIO(), tty=False, counts_path=counts)):
        _kernels()(3)  # loading nothing from a cache: still compiles, and is reported


def test_compile_progress_is_installed_and_silenced_by_the_environment():
    import subprocess
    import sys

    code = ("import ripmarket_env, numba\n"
            "from ripmarket_env.core import jitcache\n"
            "print(jitcache._PROGRESS is not None)\n"
            "numba.njit(lambda x: x + 1)(1)\n")
    on = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert on.stdout.strip() == "True" and "numba: compiled" in on.stderr
    off = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                         env={**__import__("os").environ, "RIPMARKET_COMPILE_PROGRESS": "0"})
    assert off.stdout.strip() == "False" and "numba:" not in off.stderr


def _callee_and_caller(module: str):
    """A kernel ``add(x, k)`` said to live in ``module``, and a caller passing it three
    different constants."""
    import numba

    def add(x, k):
        return x + k

    add.__module__ = module
    add = numba.njit(add)

    @numba.njit
    def caller(x):
        return add(x, 1) + add(x, 2) + add(x, 3)

    return add, caller


def test_project_kernels_compile_once_per_type_not_per_constant():
    """Issue 37 (cold start): a project kernel called with literal constants compiles once
    for the constants' type (``jitcache.one_version_per_type``), not once per constant (R.I.P.
    Market's event logger had 40 versions); another package's function keeps numba's
    behaviour; the results are the same."""
    import ripmarket_env  # noqa: F401  (installs it)
    from ripmarket_env.core import jitcache

    assert jitcache.one_version_per_type()
    ours, caller = _callee_and_caller("ripmarket_env.games.toy.kernels")
    assert caller(10) == 36
    assert [str(t) for sig in ours.overloads for t in sig] == ["int64", "int64"]
    theirs, caller2 = _callee_and_caller("somebody_else.kernels")
    assert caller2(10) == 36
    assert len(theirs.overloads) == 3  # numba's own: one per literal


def _project_kernels(tag: str):
    """Four kernels said to live in the project: ``top`` calls ``mid`` (which calls
    ``leaf``) and ``fails`` (which raises with a message when ``x < -100``)."""
    import numba

    source = (
        "def leaf(x):\n    return x * 3\n"
        "def mid(x):\n    return leaf(x) + 1\n"
        "def fails(x):\n    if x < -100:\n        raise ValueError('x is far too small')\n    return x\n"
        "def top(x):\n    return mid(x) + fails(x)\n")
    glb = {"__name__": f"ripmarket_env.games.toy{tag}.kernels"}
    exec(compile(source, f"<toy{tag}>", "exec"), glb)
    for name in ("leaf", "mid", "fails", "top"):
        glb[name] = numba.njit(glb[name])
    return {name: glb[name] for name in ("leaf", "mid", "fails", "top")}


def test_callees_are_linked_into_their_callers_not_built():
    """Issue 37 (cold start): a project kernel compiled because a compiled caller calls it
    is lowered to IR and linked into that caller only (``jitcache.link_only_callees``: no
    wrappers, no machine code of its own, nothing cached for it); the caller computes the
    same; called later from Python (or its address asked for) the callee is compiled in
    full and gives the same answers; an exception raised in a linked callee reaches
    Python with its message."""
    import numba
    import pytest

    import ripmarket_env  # noqa: F401  (installs it)
    from ripmarket_env.core import jitcache

    assert jitcache.link_only_callees()
    k = _project_kernels("a")
    assert k["top"](5) == 5 * 3 + 1 + 5
    for name in ("leaf", "mid", "fails"):
        (cres,) = k[name].overloads.values()
        assert isinstance(cres.entry_point, jitcache._LinkedEntry), name
        assert not cres.library._finalized, name  # never optimized nor emitted on its own
    (top,) = k["top"].overloads.values()
    assert callable(top.entry_point) and top.library._finalized
    with pytest.raises(ValueError, match="x is far too small"):
        k["top"](-1000)
    assert k["mid"](2) == 7 and k["leaf"](4) == 12  # compiled in full for Python now
    (mid,) = k["mid"].overloads.values()
    assert callable(mid.entry_point)
    from numba.experimental.function_type import _get_wrapper_address

    k2 = _project_kernels("b")
    assert k2["top"](1) == 5
    sig = numba.core.typing.signature(numba.int64, numba.int64)
    assert _get_wrapper_address(k2["leaf"], sig) > 0  # an address asked for: built in full
    assert k2["top"](2) == 9


def test_callees_are_built_in_full_when_switched_off():
    """``RIPMARKET_LINK_ONLY_CALLEES=0`` keeps numba's own behaviour: every callee is a
    complete library with a Python entry point."""
    import subprocess
    import sys

    code = ("import ripmarket_env, sys\n"
            "from ripmarket_env.core import jitcache\n"
            "sys.path.insert(0, 'tests')\n"
            "from test_ecosystem import _project_kernels\n"
            "k = _project_kernels('c')\n"
            "assert k['top'](5) == 21\n"
            "(c,) = k['leaf'].overloads.values()\n"
            "print(jitcache._LINK_ONLY, callable(c.entry_point))\n")
    env = {**__import__("os").environ, "RIPMARKET_LINK_ONLY_CALLEES": "0", "RIPMARKET_COMPILE_PROGRESS": "0"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=env)
    assert out.stdout.strip() == "False True", out.stderr
