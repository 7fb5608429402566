"""Black Market through the zoo: the PettingZoo AEC env (api_test, seed_test at 2/4/6 in
both modes), the Gymnasium single-agent env with given teammates, the vector env, the
renders and the records; the bots."""

from __future__ import annotations

from functools import partial

import gymnasium
import numpy as np
import pytest
from pettingzoo.test import api_test, seed_test

import agents
import ripmarket_env
from ripmarket_env.black_market_env import BlackMarketEnv, BlackMarketVecEnv
from ripmarket_env.core.engine import raw_rows
from ripmarket_env.games.blackmarket import Engine, RulesConfig
from ripmarket_env.games.blackmarket.invariants import check_game
from eval.match import match as _match

match = partial(_match, game="black-market")
END_CAP = 2  # Black Market's end_reason of a game stopped at max_turns (BM-8.3)

BOTS = ["bm-rusher", "bm-denier", "bm-builder"]


@pytest.mark.parametrize("P", [2, 4, 6])
@pytest.mark.parametrize("mode", ["teams", "ffa"])
def test_aec_env_passes_pettingzoo_api_and_seed_tests(P, mode):
    """BM-11.1 / BM-11.2 through PettingZoo: black_market_v0."""
    env = ripmarket_env.make("black-market", num_players=P, mode=mode)
    assert env.metadata["name"] == "black_market_v0"
    api_test(env, num_cycles=200)
    seed_test(lambda: ripmarket_env.make("black-market", num_players=P, mode=mode), num_cycles=100)


def test_aec_env_bad_input():
    """BM-9.1 / BM-12.4 through the env: bad variants and illegal actions get clear errors."""
    with pytest.raises(ValueError, match="num_players=3"):
        ripmarket_env.make("black-market", num_players=3)
    with pytest.raises(ValueError, match="unknown field"):
        ripmarket_env.make("black-market", num_players=2, rules={"num_players": 2, "ghosts": 2})
    env = ripmarket_env.make("black-market", num_players=2, raw=True)
    env.reset(seed=3)
    mask = env.observe(env.agent_selection)["action_mask"]
    bad = int(np.flatnonzero(mask == 0)[0])
    before = raw_rows(env.engine.state).copy()
    with pytest.raises(ValueError, match="illegal action"):
        env.step(bad)
    assert np.array_equal(before, raw_rows(env.engine.state))


def test_renders_show_map_dice_hands_scores_and_hide_hands():
    """Text and RGB renders: the map (faces, sides), dice, hand sizes, scores; a viewer's
    text names its own hand only (BM-7.1)."""
    env = ripmarket_env.make("black-market", num_players=4, render_mode="ansi", raw=True)
    env.reset(seed=4)
    env.render_viewer = 1
    text = env.render()
    eng = env.engine
    r = eng.state[0]
    assert "Map:" in text and "Dice" in text and "faces side" in text and "pt" in text
    for q in range(4):
        assert f"player {q}" in text and f"hand {int(r['hand_n'][q])} cards" in text
    assert text.count("(Red ") == 1  # only seat 1's hand contents
    img = ripmarket_env.make("black-market", num_players=4, render_mode="rgb_array", raw=True)
    img.reset(seed=4)
    pic = img.render()
    assert pic.shape == (720, 960, 3) and pic.dtype == np.uint8 and pic.std() > 10


def test_gym_env_with_given_teammates_and_vector_env():
    """The single-agent env: teammates and opponents are given agents (here the learner's
    own policy stand-in as teammate); the vector env steps a batch."""
    mate = agents.make("bm-rusher", game="black-market", seed=0)
    env = BlackMarketEnv(num_players=4, opponents=[mate, "bm-denier", "bm-denier"], learner_seat=0)
    obs, info = env.reset(seed=2)
    assert obs.shape == (324,)
    done, steps, total = False, 0, 0.0
    while not done:
        a = int(np.flatnonzero(env.action_masks())[0])
        obs, rew, term, trunc, info = env.step(a)
        total += rew
        done = term or trunc
        steps += 1
    assert total in (-1.0, 0.0, 1.0) and steps > 0
    g = gymnasium.make("BlackMarket-v0", num_players=2)
    o, _ = g.reset(seed=1)
    assert o.shape == (324,)
    v = BlackMarketVecEnv(num_envs=16, num_players=2, seed=5)
    obs = v.reset()
    for _ in range(50):
        masks = v.action_masks()
        acts = np.array([np.flatnonzero(m)[0] for m in masks])
        obs, rew, dones, infos = v.step(acts)
    assert obs.shape == (16, 324)


def test_record_and_replay(tmp_path):
    env = ripmarket_env.make("black-market", num_players=2, raw=True)
    env.reset(seed=9)
    rng = np.random.default_rng(0)
    for _ in range(30):
        if all(env.terminations.values()):
            break
        m = env.observe(env.agent_selection)["action_mask"]
        env.step(int(rng.choice(np.flatnonzero(m))))
    path = env.save_record(tmp_path / "g.jsonl")
    eng = ripmarket_env.replay(path)
    assert np.array_equal(raw_rows(eng.state), raw_rows(env.engine.state))


def test_bots_registered_for_the_game_only():
    names = agents.names("black-market")
    assert set(BOTS) <= set(names) and "random" in names
    assert "bm-rusher" not in agents.names("ripmarket")
    with pytest.raises(KeyError, match="plays black-market"):
        agents.make("bm-rusher")


@pytest.mark.parametrize("P", [2, 4, 6])
@pytest.mark.parametrize("mode", ["teams", "ffa"])
def test_heuristic_games_end_by_target_never_the_cap(P, mode):
    """BM-8.3: heuristic games end by the target, never the safety cap; each style beats random."""
    for i, a in enumerate(BOTS):
        b = BOTS[(i + 1) % 3]
        r = match(agents.make(a, game="black-market", seed=1), agents.make(b, game="black-market", seed=2),
                  games=16, num_players=P, mode=mode, seed=P)
        assert not (r["engine"].state["end_reason"] == END_CAP).any(), (a, b, r)
    r = match(agents.make("bm-denier", game="black-market", seed=1), agents.make("random", seed=3), games=16,
              num_players=P, mode=mode, seed=1)
    assert r["win_rate"] > 0.8 and not (r["engine"].state["end_reason"] == END_CAP).any()


def test_bm_13_invariants_under_heuristic_play():
    """BM-13: the invariants after every step of mixed heuristic games."""
    bots = [agents.make(n, game="black-market", seed=i) for i, n in enumerate(BOTS)]
    for P, mode in ((2, "teams"), (4, "ffa"), (6, "teams")):
        eng = Engine(RulesConfig(num_players=P, mode=mode), 1)
        eng.reset([P])
        while not eng.terminated[0]:
            q = int(eng.current_player()[0])
            o = eng.observe([q])[0]
            a = bots[q % 3].act(o, eng.legal_mask()[0])
            prev = eng.state[0].copy()
            eng.step([a])
            assert check_game(eng, 0, prev) == []
        assert int(eng.state[0]["end_reason"]) == 0


def test_balance_cli_black_market(tmp_path):
    """`ripmarket balance --game black-market`: first-side advantage, length, per-card rates."""
    from typer.testing import CliRunner

    from ripmarket_env.app.cli import app

    res = CliRunner().invoke(app, ["balance", "--game", "black-market", "--players", "2", "--games", "6",
                                   "--out", str(tmp_path / "bal")])
    assert res.exit_code == 0, res.output
    text = (tmp_path / "bal" / "balance.md").read_text()
    assert "first side wins" in text and "| Heist |" in text and "game length" in text
    assert "| bm-rusher |" in text  # the generic figures: win share by agent (default: the heuristics)
    res = CliRunner().invoke(app, ["balance", "--game", "black-market", "--agents", "greedy"])
    assert res.exit_code == 2 and "unknown agent 'greedy'" in res.output
    # R.I.P. Market's player counts are not silently swapped for Black Market's (BM-1.2)
    res = CliRunner().invoke(app, ["balance", "--game", "black-market", "--players", "4,6,8"])
    assert res.exit_code == 2 and "allowed: 2, 4, 6" in res.output


def test_search_agent_rebuilds_the_game_and_plays_legal_moves():
    """bm-search rebuilds the game from an observation alone (the rebuilt legal actions
    equal the observed mask: no fallback) at every decision of random games, and beats random."""
    s = agents.make("bm-search", game="black-market", seed=1, budget=16)
    for P, mode in ((2, "teams"), (4, "ffa"), (6, "teams")):
        eng = Engine(RulesConfig(num_players=P, mode=mode), 1)
        eng.reset([P])
        rng = np.random.default_rng(P)
        for _ in range(25):
            if eng.terminated[0]:
                break
            q = int(eng.current_player()[0])
            m = eng.legal_mask()[0]
            a = s.act(eng.observe([q])[0], m)
            assert m[a] and not s.last.get("fallback", False)
            eng.step([int(rng.choice(np.flatnonzero(m)))])
    r = match(s, agents.make("random", seed=3), games=12, num_players=2, seed=2)
    assert r["win_rate"] > 0.8


@pytest.mark.parametrize("P,mode", [(2, "ffa"), (4, "teams"), (6, "ffa")])
def test_rebuilt_copies_reproduce_the_observation_and_conserve_the_cards(P, mode):
    """BM-7.2: ``bm-search``'s rebuilding (also the lookahead's) gives every copy the
    viewer's own observation back as seat 0, the observed legal actions, every Hand and
    Point Card once (hands of the observed sizes), and differs between copies only where
    the viewer cannot see."""
    from agents.blackmarket.search import reconstruct

    rules = RulesConfig(num_players=P, mode=mode)
    bots = [agents.make("bm-builder", game="black-market", seed=i) for i in range(P)]
    rng = np.random.default_rng(P)
    checked = 0
    for seed in range(2):
        eng = Engine(rules, 1)
        eng.reset([10 * P + seed])
        while not eng.terminated[0]:
            q = int(eng.current_player()[0])
            obs, mask = eng.observe([q])[0], eng.legal_mask()[0]
            if mask.sum() > 1:
                rec = reconstruct(obs, rules, 4, rng)
                assert np.array_equal(rec.observe(np.zeros(4, np.int64)), np.tile(obs, (4, 1)))
                assert (rec.legal_mask() == mask).all()
                real = eng.state[0]
                for g in range(4):
                    r = rec.state[g]
                    assert list(r["hand"][:P].sum(axis=1)) == [int(real["hand_n"][(q + j) % P]) for j in range(P)]
                    hand_cards = r["hand"][:P].sum(axis=0) + r["hdisc"] + np.bincount(
                        r["hdeck"][: r["hdeck_n"]], minlength=3)
                    assert list(hand_cards) == list(eng.cards.hand_copies())
                    on_map = r["map_card"][r["map_card"] >= 0]
                    point_cards = (r["owned"][:P].sum(axis=0) + np.bincount(on_map, minlength=eng.cards.n_designs)
                                   + np.bincount(r["pdeck"][: r["pdeck_n"]], minlength=eng.cards.n_designs))
                    assert list(point_cards) == [c.copies for c in eng.cards.point]
                public = [f for f in rec.state.dtype.names if f not in ("hand", "hand_n", "hdeck", "hdeck_n", "pdeck",
                                                                          "map_card", "rng", "ev", "ev_n", "mask")]
                for f in public:
                    assert (rec.state[f] == rec.state[f][:1]).all(), f
                checked += 1
            eng.step([bots[q].act(obs, mask)])
    assert checked > 20


def test_terminal_play_whole_game(tmp_path):
    """`ripmarket play --game black-market`: a whole game against the bots; the person
    sees only its own hand (BM-7.1: another seat's dealt cards are not named), the end
    screen has the standings by side and points, and the record replays."""
    import io

    from rich.console import Console

    from ripmarket_env.app.play import play_terminal

    buf = io.StringIO()
    con = Console(file=buf, width=100)
    s = play_terminal("black-market", 2, 0, ["bm-rusher"], seed=4, input_fn=lambda prompt: "1", console=con,
                      save=tmp_path / "g.jsonl")
    text = buf.getvalue()
    assert s.over and "1) " in text and "GAME OVER after" in text and "Standings" in text
    assert "your reward" not in text and "side A, " in text and "points: " in text
    assert abs(sum(s.result()["rewards"])) < 1e-6
    assert "player 1 draws a card" in text or "player 1 is dealt a card" in text
    assert "player 1 is dealt a Red" not in text and "player 1 is dealt a Black" not in text
    assert max(len(line) for line in text.splitlines() if not line.startswith("Saved the game record")) <= 100
    eng = ripmarket_env.replay(tmp_path / "g.jsonl")
    assert eng.terminated[0]


def _rewritten(ship, dst, replace=None, meta=None, drop=()):
    """A copy of checkpoint ``ship`` at ``dst`` with members replaced, its metadata
    (``ripmarket.json``) replaced by ``meta``, or members dropped."""
    import json
    import zipfile

    from agents.checkpoint import META_NAME

    replace = dict(replace or {})
    if meta is not None:
        replace[META_NAME] = json.dumps(meta)
    with zipfile.ZipFile(ship) as src, zipfile.ZipFile(dst, "w") as out:
        for info in src.infolist():
            if info.filename not in drop:
                out.writestr(info.filename, replace.get(info.filename, src.read(info.filename)))
    return dst


def test_shipped_ppo_checkpoint_and_bad_checkpoints(tmp_path):
    """The shipped bm-ppo (agents/checkpoints/, the zoo's one checkpoint convention: the
    metadata inside the zip) plays legal moves; a checkpoint of another game, of another
    observation size, without metadata or corrupt is refused with CheckpointError."""
    from agents.checkpoint import META_NAME, CheckpointError, read_metadata
    from agents.policy import CHECKPOINT_DIR, load_agent

    ship = CHECKPOINT_DIR / "bm-ppo.zip"
    if not ship.is_file():
        pytest.fail("the shipped checkpoint agents/checkpoints/bm-ppo.zip is missing")
    meta = read_metadata(ship)
    assert meta["game"] == "black-market" and meta["num_players"] == [2, 4, 6]
    bot = agents.make("bm-ppo", game="black-market")
    r = match(bot, agents.make("random", seed=3), games=4, num_players=2, seed=1)
    assert r["win_rate"] >= 0.5
    foreign = _rewritten(ship, tmp_path / "x.zip", meta={**meta, "game": "ripmarket"})
    with pytest.raises(CheckpointError, match="card"):  # checked against R.I.P. Market's cards: refused
        load_agent(foreign)
    small = _rewritten(ship, tmp_path / "small.zip", meta={**meta, "obs_size": 10})
    with pytest.raises(CheckpointError, match="obs_size 10"):
        load_agent(small)
    lone = _rewritten(ship, tmp_path / "lone.zip", drop=(META_NAME,))
    with pytest.raises(CheckpointError, match=f"no {META_NAME} inside"):
        load_agent(lone)
    bad = tmp_path / "bad.zip"
    bad.write_bytes(b"not a zip")
    with pytest.raises(CheckpointError, match="not a"):
        load_agent(bad)


class _Marker:
    """Unpickling this runs ``touch MARKER`` (what a malicious checkpoint would do)."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        import os

        return (os.system, (f"touch {self.marker}",))


def test_black_market_checkpoints_never_run_code(tmp_path):
    """A shipped checkpoint whose SB3 ``data`` member or weights carry a pickled command is
    loaded (data: never opened) or refused (weights: torch weights_only), and the command
    never runs; a metadata ``net_arch`` that is not a list of widths is refused by name."""
    import json
    import pickle

    from agents.checkpoint import CheckpointError, read_metadata
    from agents.policy import CHECKPOINT_DIR, load_agent

    ship = CHECKPOINT_DIR / "bm-ppo.zip"
    meta = read_metadata(ship)
    marker = tmp_path / "ran"

    evil_data = _rewritten(ship, tmp_path / "data.zip", {"data": json.dumps({"policy_class": {":serialized:": pickle.dumps(
        _Marker(marker)).hex()}})})
    bot = load_agent(evil_data)
    obs = np.zeros((1, meta["obs_size"]), np.float32)
    mask = np.zeros((1, meta["num_actions"]), bool)
    mask[0, 48] = True
    assert bot.act_batch(obs, mask).tolist() == [48]
    evil_weights = _rewritten(ship, tmp_path / "weights.zip", {"policy.pth": pickle.dumps(_Marker(marker))})
    with pytest.raises(CheckpointError, match="policy weights do not load"):
        load_agent(evil_weights)
    assert not marker.exists()
    policy = {**meta["config"]["policy"], "net_arch": "big"}
    bad_arch = _rewritten(ship, tmp_path / "arch.zip", meta={**meta, "config": {**meta["config"], "policy": policy}})
    with pytest.raises(CheckpointError, match="net_arch"):
        load_agent(bad_arch)
