"""The shipped MaskablePPO bots of The Rune Market: ``rm-ppo-search``, the bot for every table
(2-6 players) and the game's default opponent, ``rm-ppo``, the start of its recipe, and
``rm-ppo-4p``, the start of ``rm-ppo``'s. Each is
registered for its game only, its checkpoint names its game and the config it was trained
with, it plays legal games through the arena, and another game refuses it with a one-line
error. Training The Rune Market is the one trainer's (``ripmarket train``, ``game: rune-market``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

import agents  # noqa: E402
from agents.checkpoint import CheckpointError, check_compatible, read_metadata  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
CKPT = ROOT / "agents" / "checkpoints" / "rm-ppo-4p.zip"
CONFIG = ROOT / "configs" / "rune-market" / "rm_ppo_4p.yaml"
BOT = ROOT / "agents" / "checkpoints" / "rm-ppo.zip"
RECIPE = ROOT / "configs" / "rune-market" / "rm_ppo.yaml"
DEFAULT = ROOT / "agents" / "checkpoints" / "rm-ppo-search.zip"
DEFAULT_RECIPE = ROOT / "configs" / "rune-market" / "rm_ppo_search.yaml"
AT_2P = ROOT / "agents" / "checkpoints" / "rm-ppo-search-at-2p.zip"
AT_2P_RECIPE = ROOT / "configs" / "rune-market" / "rm_ppo_search_at_2p.yaml"


def test_registered_for_the_rune_market_only():
    assert "rm-ppo-4p" in agents.names("rune-market")
    assert "rm-ppo-4p" not in agents.names("ripmarket")
    assert "rm-banker" in agents.describe("rm-ppo-4p", "rune-market")


def test_checkpoint_names_its_game_and_config():
    """The checkpoint keeps the config of the retired per-game trainer that made it; the
    recipe's config in the one schema (``configs/rune-market/rm_ppo_4p.yaml``) asks for the
    same game, seats, seed, network, PPO settings and opponents."""
    from train.config import load_config

    meta = read_metadata(CKPT)  # checked against the current code of its own game
    assert meta["game"] == "rune-market" and meta["obs_size"] == 191 and meta["num_actions"] == 50
    assert meta["num_players"] == [4] and meta["training_steps"] > 100_000
    cfg = load_config(CONFIG)
    old = meta["config"]
    assert cfg.game == old["game"] and cfg.exp_name == old["exp_name"] and cfg.max_minutes == old["max_minutes"]
    for key in ("seed", "num_players", "total_timesteps", "n_envs", "n_steps", "batch_size", "n_epochs",
                "learning_rate", "gamma", "ent_coef"):
        assert getattr(cfg, key) == old[key], key
    assert cfg.policy.arch == old["policy"]["arch"] and cfg.policy.net_arch == old["policy"]["net_arch"]
    assert cfg.league.zoo == old["opponents"] and cfg.league.mix["zoo"] == 1.0
    with pytest.raises(CheckpointError, match="game 'rune-market'; it cannot play 'ripmarket'"):
        check_compatible(meta, "rm-ppo-4p", game="ripmarket")
    # a training config of another game refuses it as a start or a run to resume, saying so
    from train.config import TrainConfig
    from train.selfplay import check_resume, load_init

    with pytest.raises(CheckpointError, match=r"init_from: .*rm-ppo-4p\.zip is a checkpoint of game 'rune-market'; "
                                              r"this config trains 'black-market'"):
        load_init(str(CKPT), game="black-market")
    with pytest.raises(CheckpointError, match=r"--resume: .*rm-ppo-4p\.zip is a checkpoint of game 'rune-market'; "
                                              r"this config trains 'ripmarket'"):
        check_resume(TrainConfig(), CKPT)


def test_rm_ppo_search_is_the_default_opponent_of_every_table():
    """The web page and the terminal game set a table up without named opponents from the
    game's ``default_bots``: ``rm-ppo-search`` at every count, with its level label;
    ``rm-ppo`` and ``rm-ppo-4p`` are labelled as the starts of their recipes."""
    from ripmarket_env.games import get

    profile = agents.game_agents("rune-market")
    assert "rm-ppo-search" in agents.names("rune-market") and "rm-ppo-search" not in agents.names("black-market")
    assert agents.default_bot("rune-market") == "rm-ppo-search"
    lo, hi = get("rune-market").min_players, get("rune-market").max_players
    assert (lo, hi) == (2, 6)
    from ripmarket_env.app.session import default_opponents, game_spec

    for n in range(lo, hi + 1):
        assert agents.default_lineup("rune-market", n - 1) == ["rm-ppo-search"] * (n - 1)
        assert default_opponents(game_spec("rune-market"), n) == ["rm-ppo-search"] * (n - 1)  # terminal and page
    level = profile.level("rm-ppo-search")
    assert level.startswith("Hardest") and "every table" in level and "rm-search" in level
    assert not profile.level("rm-ppo").startswith("Hardest") and "start of rm-ppo-search" in profile.level("rm-ppo")
    assert "start of rm-ppo's recipe" in profile.level("rm-ppo-4p")
    assert {"rm-ppo-search", "rm-ppo"} <= set(profile.slow_bots) and profile.bench()[0] == "rm-ppo-search"
    desc = agents.describe("rm-ppo-search", "rune-market")
    assert "rm-banker" in desc and "rm-search-bc" in desc and "snapshots of itself" in desc and "at 2-6 players" in desc
    assert desc.endswith("at 2 players the network of rm-ppo-search-at-2p.")
    assert "Kept as" not in desc and "Kept as" in agents.describe("rm-ppo", "rune-market")


def test_rm_ppo_search_plays_its_own_network_at_2_players():
    """``rm-ppo-search`` is one bot with two networks: ``rm-ppo-search-at-2p.zip`` at 2
    players (trained there only), ``rm-ppo-search.zip`` at 3-6; a batch mixing the
    counts gets each row's network's actions."""
    from agents.policy import ByTableAgent
    from ripmarket_env.envs.vector import vec_env_classes
    from ripmarket_env.games import get

    bot = agents.make("rm-ppo-search", "rune-market")
    assert isinstance(bot, ByTableAgent) and list(bot.by_table) == ["2p"]
    at2, rest = agents.make("rm-ppo-search-at-2p", "rune-market"), bot.default
    obs = {n: vec_env_classes(get("rune-market"))[0](num_envs=32, rules={"num_players": n}, learner_seat="random",
                                                      seed=n).reset() for n in (2, 4)}
    got = bot.logits(np.concatenate([obs[2], obs[4]]))  # one batch, both tables
    close = {"rtol": 1e-4, "atol": 1e-3}  # a batch and its sub-batch may take different BLAS paths
    assert np.allclose(got[:32], at2.logits(obs[2]), **close) and np.allclose(got[32:], rest.logits(obs[4]), **close)
    assert not np.allclose(got[:32], rest.logits(obs[2]))  # the two networks differ at 2 players


@pytest.mark.parametrize("bot,recipe,start", [(BOT, RECIPE, "rm-ppo-4p"), (DEFAULT, DEFAULT_RECIPE, "rm-ppo"),
                                              (AT_2P, AT_2P_RECIPE, "rm-ppo-search")],
                         ids=["rm-ppo", "rm-ppo-search", "rm-ppo-search-at-2p"])
def test_rm_ppo_checkpoints_are_their_recipes(bot, recipe, start):
    """``rm-ppo.zip`` was trained from ``configs/rune-market/rm_ppo.yaml`` (starting from
    ``rm-ppo-4p``) and ``rm-ppo-search.zip`` from ``rm_ppo_search.yaml`` (starting from
    ``rm-ppo``, its league holding the imitation of ``rm-search``), each at every player
    count 2-6, and ``rm-ppo-search-at-2p.zip`` from ``rm_ppo_search_at_2p.yaml`` (starting
    from ``rm-ppo-search``, at 2 players only); each ships without its optimizer state."""
    import zipfile

    from agents.checkpoint import OPTIMIZER_NAME
    from train.config import load_config

    meta, cfg = read_metadata(bot), load_config(recipe)
    old = meta["config"]
    assert meta["game"] == "rune-market" and meta["num_players"] == cfg.player_counts
    assert meta["num_players"] == ([2] if bot == AT_2P else [2, 3, 4, 5, 6])
    assert meta["optimizer_stripped"] and OPTIMIZER_NAME not in zipfile.ZipFile(bot).namelist()
    assert cfg.init_from == old["init_from"] == start and cfg.player_counts == old["player_counts"]
    for key in ("seed", "n_envs", "n_steps", "batch_size", "n_epochs", "learning_rate", "gamma", "ent_coef",
                "max_minutes", "eval_every", "eval_games"):
        assert getattr(cfg, key) == old[key], key
    assert cfg.policy.net_arch == old["policy"]["net_arch"] and cfg.league.zoo == old["league"]["zoo"]
    assert cfg.league.zoo_init == old["league"].get("zoo_init", "")
    assert old["league"]["mix"] == cfg.league.mix and cfg.league.mix["self"] > 0
    assert 0 < meta["training_steps"] <= cfg.total_timesteps
    with pytest.raises(CheckpointError, match="game 'rune-market'; it cannot play 'ripmarket'"):
        check_compatible(meta, bot.stem, game="ripmarket")
    if bot != BOT:  # the imitation sits in the league as a zoo style, from the shipped file
        assert "rm-search-bc" in cfg.league.zoo and (ROOT / "agents" / "checkpoints" / f"{cfg.league.zoo_init}.pt").is_file()


@pytest.mark.parametrize("n", [2, 3, 5, 6])
def test_rm_ppo_bots_play_legal_games_at_every_count(n):
    from eval import arena
    from ripmarket_env.games import get

    spec = get("rune-market")
    names = ["rm-ppo-search", "rm-ppo", *(["rm-banker", "rm-raider", "rm-bandit"] * 2)[:n - 2]]
    pool = [agents.make_seeded(name, i, game="rune-market") for i, name in enumerate(names)]
    seats = np.array([np.roll(np.arange(n), g) for g in range(n)])
    res = arena.play(spec, spec.make_rules(n), list(range(700, 700 + n)), seats, pool)  # raises on an illegal action
    assert res.engine.terminated.all() and (res.engine.state["end_reason"] == 0).all()


def test_another_game_refuses_it():
    from eval.evaluate import make_agent

    for path in (CKPT, BOT, DEFAULT):
        with pytest.raises(CheckpointError, match="cannot play 'ripmarket'"):
            make_agent(str(path), game="ripmarket")
        assert make_agent(str(path), game="rune-market") is not None


def test_plays_legal_games_against_the_heuristics():
    from eval import arena
    from ripmarket_env.games import get

    spec = get("rune-market")
    pool = [agents.make_seeded(n, i, game="rune-market") for i, n in
            enumerate(["rm-banker", "rm-raider", "rm-bandit", "rm-ppo-4p"])]
    seats = np.array([np.roll([0, 1, 2, 3], g) for g in range(8)])
    res = arena.play(spec, spec.make_rules(4), list(range(900, 908)), seats, pool)  # raises on an illegal action
    assert res.engine.terminated.all() and (res.engine.state["end_reason"] == 0).all()
    ppo = np.argmax(seats == 3, axis=1)
    assert 0 <= res.winners[np.arange(8), ppo].sum() <= 8


def test_bad_training_config_is_a_one_line_error(tmp_path):
    from train.config import ConfigError, load_config

    bad = tmp_path / "bad.yaml"
    bad.write_text(CONFIG.read_text() + "learning_rat: 0.1\n")
    with pytest.raises(ConfigError, match="bad.yaml: unknown key 'learning_rat'; allowed keys: "):
        load_config(bad)
    bad.write_text(CONFIG.read_text().replace("game: rune-market", "game: rune"))
    with pytest.raises(ConfigError, match="bad.yaml: bad value for 'game': 'rune'; allowed: .*rune-market"):
        load_config(bad)
    bad.write_text(CONFIG.read_text() + "rules: {defend: never}\n")
    with pytest.raises(ConfigError, match="bad.yaml: bad rules for rune-market at 4 players \\(num_players\\): .*defend"):
        load_config(bad)


def test_the_one_trainer_trains_and_resumes(tmp_path):
    """``ripmarket train configs/rune-market/smoke.yaml``: a few hundred steps against the
    game's league (its heuristics by its agents' profile, snapshots, random), the learner
    seated by the generic env; then ``--resume``."""
    from train_run import train_and_resume

    run = train_and_resume("rune-market", tmp_path)
    m1, m2 = run["meta1"], run["meta2"]
    assert m1["game"] == m2["game"] == "rune-market"
    assert (m1["training_steps"], m2["training_steps"]) == (256, 512)
    assert m1["config"]["league"]["zoo"] == ["rm-banker", "rm-raider", "rm-bandit"]
    assert run["summary1"]["evals"] and run["summary2"]["steps"] == 512
    assert (run["first"] / "learning_curve.png").is_file()
    bot = agents.make  # the trained network plays The Rune Market as an agent
    from agents.policy import load_agent
    from eval import arena
    from ripmarket_env.games import get

    spec = get("rune-market")
    pool = [load_agent(run["second"] / "final.zip", seed=0), bot("rm-bandit", game="rune-market")]
    res = arena.play(spec, spec.make_rules(4), [3, 4], np.array([[0, 1, 1, 1], [1, 1, 0, 1]]), pool)
    assert res.engine.terminated.all()


def test_the_learner_answers_its_own_blocks_in_the_league_env():
    """RM-5.9: the defender decides its block during another seat's attack; in the one
    trainer's league env every decision the learner is handed is its own seat's, blocks
    included, and the opponents' decisions never reach it."""
    from ripmarket_env.games import get
    from train.config import load_config
    from train.selfplay import League, make_league_vec_env

    cfg = load_config(ROOT / "configs" / "rune-market" / "smoke.yaml")
    env = make_league_vec_env(cfg, League(cfg, seed=1), 1)
    env.reset()
    b, rng = env.batch, np.random.default_rng(0)
    defend = list(get("rune-market").phase_names).index("defend")
    phases = []
    for _ in range(200):
        S = b.engine.state
        live = ~S["done"].astype(bool)
        assert (S["actor"][live] == b.seat[live]).all()  # the learner's own decisions only
        phases += S["phase"][live].tolist()
        env.step(np.array([rng.choice(np.flatnonzero(m)) for m in env.action_masks()]))
    assert phases.count(defend) > 0
