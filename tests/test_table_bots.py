"""One trained bot name that plays every table of its game: each game's ``GameSpec.table_keys``
reads an observation row's table (its count, and Black Market's mode, BM-1.3), and a
``ByTableAgent`` decides each row with the network of its most specific table
(``<name>-at-<key>.zip``), the default network elsewhere."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

import agents  # noqa: E402
from ripmarket_env.core.spec import observation_tables  # noqa: E402
from ripmarket_env.games import get, ids  # noqa: E402
from ripmarket_env.testing.conformance import valid_player_counts  # noqa: E402

CKPT = Path(__file__).resolve().parents[1] / "agents" / "checkpoints"
#: A row's logits computed in a batch and in a sub-batch may differ by ~1e-4: the BLAS
#: path (and MKL's thread count, dynamic on a loaded machine) depends on the batch.
CLOSE = {"rtol": 1e-4, "atol": 1e-3}


def _same_moves(got, want, logits, masks):
    """The same actions wherever the row's best legal logit leads the next by more than
    that float noise (a near tie may fall either way), on nearly every row."""
    z = np.where(masks.astype(bool), logits, -np.inf)
    top2 = np.sort(z, axis=1)[:, -2:]
    clear = (top2[:, 1] - top2[:, 0]) > 1e-3
    np.testing.assert_array_equal(np.asarray(got)[clear], np.asarray(want)[clear])
    assert clear.mean() > 0.9


def _observations(spec, n: int, rules: dict | None = None, games: int = 3, steps: int = 6):
    """Observations of every seat at a few decisions of ``games`` games of ``n`` players."""
    eng = spec.make_engine(spec.make_rules(rules={**(rules or {}), "num_players": n}), batch_size=games)
    eng.reset(list(range(games)))
    rng = np.random.default_rng(n)
    obs, masks = [], []
    for _ in range(steps):
        for seat in range(n):
            obs.append(eng.observe([seat] * games))
            masks.append(eng.legal_mask())
        m = eng.legal_mask()
        eng.step(np.array([rng.choice(np.flatnonzero(r)) if r.any() else 0 for r in m]))
    return np.concatenate(obs), np.concatenate(masks)


@pytest.mark.parametrize("game", ids())
def test_every_games_table_keys_name_the_count_and_mode(game):
    """R-12.3, BM-11.2, RM-8.4: the observation names its table's count; Black Market's its
    mode too (``4p-ffa``); a game without the hook names one table, ``""``."""
    spec = get(game)
    modes = (spec.extras or {}).get("modes") or (None,)
    for n in valid_player_counts(spec):
        for mode in modes:
            obs, _ = _observations(spec, n, {"mode": mode} if mode else None, steps=2)
            keys = observation_tables(spec, obs)
            if spec.table_keys is None:
                assert set(keys) == {""}
                continue
            want = f"{n}p" + (f"-{mode}" if mode else "")
            assert set(keys) == {want}, (game, n, mode, set(keys))


def test_black_markets_table_pieces_sit_where_the_hook_reads_them():
    """BM-11.2: the ``num_players`` one-hot and the ``teams`` flag precede every piece whose
    size depends on the cards, so the hook reads them at fixed places."""
    from ripmarket_env.games.blackmarket import observation as bmo

    spec = get("black-market")
    lay = spec.make_engine(spec.make_rules(4)).obs_layout
    assert lay.slice("num_players") == bmo._NUM_PLAYERS and lay.slice("teams") == slice(bmo._TEAMS, bmo._TEAMS + 1)


def _bm(name: str):
    from agents.policy import load_agent

    return load_agent(CKPT / f"{name}.zip", seed=0)


def test_a_black_market_bot_plays_each_table_with_its_network():
    """Rows of a mixed batch go to the network of their most specific table: ``4p-ffa``
    to its own, every other 4-player table to the ``4p`` network, the rest (2 and 6
    players) to the default; actions and values follow the row's network."""
    from agents.policy import ByTableAgent

    spec = get("black-market")
    default, four, ffa = _bm("bm-ppo"), _bm("bm-ppo-4p-teams"), _bm("bm-ppo")
    ffa.name = "ffa"
    bot = ByTableAgent(default, {"4p": four, "4p-ffa": ffa}, name="bm-x")
    parts = [(2, "teams"), (4, "ffa"), (4, "teams"), (6, "ffa")]
    data = [_observations(spec, n, {"mode": m}) for n, m in parts]
    obs, masks = np.concatenate([o for o, _ in data]), np.concatenate([m for _, m in data])
    table = np.repeat(np.arange(len(parts)), [len(o) for o, _ in data])
    order = np.random.default_rng(1).permutation(len(obs))  # tables interleaved in one batch
    obs, masks, table = obs[order], masks[order], table[order]
    assert list(bot.tables(obs[:3])) == [f"{parts[t][0]}p-{parts[t][1]}" for t in table[:3]]
    net = {0: default, 1: ffa, 2: four, 3: default}
    z, a, v = bot.logits(obs), bot.act_batch(obs, masks), bot.values(obs)
    for t, agent in net.items():
        rows = table == t
        np.testing.assert_allclose(z[rows], agent.logits(obs[rows]), **CLOSE)
        _same_moves(a[rows], agent.act_batch(obs[rows], masks[rows]), z[rows], masks[rows])
        np.testing.assert_allclose(v[rows], agent.values(obs[rows]), **CLOSE)
    assert bot.network_for_table("4p-teams") is four and bot.network_for_table("4p-ffa") is ffa
    assert bot.network_for_table("6p-teams") is default and bot.network_for(4) is four
    assert masks[np.arange(len(a)), a].all() and bot.act(obs[5], masks[5]) == a[5]
    with pytest.raises(ValueError, match="player counts 2..6 of black-market"):
        ByTableAgent(default, {"8p": four})
    with pytest.raises(ValueError, match="table keys such as '2p'"):
        ByTableAgent(default, {"four": four})


def test_specialist_files_of_every_game_make_one_bot(tmp_path):
    """``<name>-at-<key>.zip`` among a game's checkpoints serves the bot ``<name>`` at that
    table (``bm-ppo-at-4p-ffa``): its count in the game's range, its base a file too; the
    registered factory builds a ``ByTableAgent`` deciding as its networks do."""
    from agents.policy import ByTableAgent, _by_table_factory, specialists

    for stem, src in (("bm-x", "bm-ppo"), ("bm-x-at-4p", "bm-ppo-4p-teams"), ("bm-x-at-4p-ffa", "bm-ppo"),
                      ("bm-x-at-8p", "bm-ppo"), ("bm-y-at-2p", "bm-ppo")):
        shutil.copy(CKPT / f"{src}.zip", tmp_path / f"{stem}.zip")
    files = {p.stem: p for p in tmp_path.glob("*.zip")}
    found = specialists(files, "black-market")
    assert found == {"bm-x": {"4p": tmp_path / "bm-x-at-4p.zip", "4p-ffa": tmp_path / "bm-x-at-4p-ffa.zip"}}
    bot = _by_table_factory(files["bm-x"], found["bm-x"], "black-market")(seed=0)
    assert isinstance(bot, ByTableAgent) and list(bot.by_table) == ["4p", "4p-ffa"] and bot.by_count == {4: bot.by_table["4p"]}
    spec = get("black-market")
    obs, masks = _observations(spec, 4, {"mode": "teams"})
    four = _bm("bm-ppo-4p-teams")
    _same_moves(bot.act_batch(obs, masks), four.act_batch(obs, masks), four.logits(obs), masks)
    # R.I.P. Market's names: counts 2..10, the same rule
    rip = {s: Path(f"{s}.zip") for s in ("ppo", "ppo-at-6p", "ppo-at-10p", "ppo-at-11p", "x-at-4p", "ppo-at-4p-x")}
    assert specialists(rip) == {"ppo": {"4p-x": Path("ppo-at-4p-x.zip"), "6p": Path("ppo-at-6p.zip"),
                                        "10p": Path("ppo-at-10p.zip")}}


def test_the_shipped_bot_for_every_table_is_one():
    """R.I.P. Market's ``ppo``: its own networks at 4 and 6 players, read through the
    game's hook (the description names them)."""
    from agents.policy import ByCountAgent, ByTableAgent

    assert ByCountAgent is ByTableAgent
    bot = agents.make("ppo")
    assert isinstance(bot, ByTableAgent) and list(bot.by_table) == ["4p", "6p"] and bot.game == "ripmarket"
    from agents.base import describe

    assert "; at 4 players the network of ppo-at-4p, 6 players the network of ppo-at-6p." in describe("ppo")


def test_black_markets_bot_for_every_table_is_its_default_opponent():
    """Black Market's ``bm-ppo``: one network trained at every table of the game (2
    players; 4 and 6 in teams and in free-for-all, BM-1.3); checked one turn ahead
    (``bm-ppo-lookahead``) it is the default opponent at each (``default_bot``,
    ``default_lineup``: the web page's and the terminal game's) and the first bot the bot
    bench times, the network itself next; it decides every table's rows, in one mixed
    batch too, with legal actions."""
    from agents.base import describe
    from agents.checkpoint import read_metadata

    meta = read_metadata(CKPT / "bm-ppo.zip", check=False)
    tables = {(t["num_players"], t["rules"]["mode"]) for t in meta["tables"]}
    assert tables == {(2, "teams"), (4, "teams"), (4, "ffa"), (6, "teams"), (6, "ffa")}
    assert "policy.optimizer.pth" not in __import__("zipfile").ZipFile(CKPT / "bm-ppo.zip").namelist()
    profile = agents.game_agents("black-market")
    assert agents.default_bot("black-market") == "bm-ppo-lookahead" and profile.bench()[:2] == ["bm-ppo-lookahead", "bm-ppo"]
    assert profile.default_bots == ("bm-ppo-lookahead", "bm-ppo")
    assert agents.default_lineup("black-market", 5) == ["bm-ppo-lookahead"] * 5
    assert {"bm-ppo", "bm-ppo-lookahead"} <= set(profile.slow_bots)
    assert profile.level("bm-ppo").startswith("Hard") and "at tables 2p, 4p, 4p-ffa, 6p, 6p-ffa" in describe("bm-ppo", game="black-market")
    spec = get("black-market")
    data = [_observations(spec, n, {"mode": m}) for n, m in sorted(tables)]
    obs, masks = np.concatenate([o for o, _ in data]), np.concatenate([m for _, m in data])
    keep = masks.any(axis=1)
    obs, masks = obs[keep], masks[keep]
    bot = agents.make("bm-ppo", game="black-market", seed=0)
    a = bot.act_batch(obs, masks)
    assert masks[np.arange(len(a)), a].all()
    first = 0
    for (n, m), (o, mk) in zip(sorted(tables), data):  # a table alone decides as in the mixed batch
        rows = mk.any(axis=1)
        _same_moves(bot.act_batch(o[rows], mk[rows]), a[first:first + rows.sum()], bot.logits(o[rows]), mk[rows])
        first += rows.sum()


def test_a_bots_network_at_one_table_is_labelled_by_its_bot():
    """``<bot>-at-<table>``'s difficulty label is its bot's, with the table (``GameAgents.level``),
    in every game: no per-table network is listed "Unrated" beside its bot."""
    for game, net, bot, table in (("ripmarket", "ppo-at-4p", "ppo", "4 players"),
                                  ("rune-market", "rm-ppo-search-at-2p", "rm-ppo-search", "2 players")):
        profile = agents.game_agents(game)
        assert net in agents.names(game)
        assert profile.level(net) == f"{profile.level(bot)}; its network at {table}"
    assert agents.game_agents("black-market").level("bm-ppo-at-4p-ffa").endswith("; its network at 4 players, ffa")
    assert agents.game_agents("ripmarket").level("nobody-at-4p") == "Unrated"  # no such bot, no label


@pytest.mark.parametrize("n,mode", [(4, "ffa"), (6, "ffa"), (4, "teams"), (2, "teams")])
def test_black_markets_single_table_networks_are_their_recipes(n, mode):
    """``bm-ppo`` plays its own network at each free-for-all table (BM-1.3 mode ffa) and at
    2 and 4 players in teams (BM-1.2): ``bm-ppo-at-<n>p-<mode>.zip``, trained from
    ``configs/black-market/bm_ppo_at_<n>p_<mode>.yaml`` (starting from ``bm-ppo``, at that
    table only, against the real heuristics and its own snapshots; at 4 players in teams the
    learner's teammate plays its own policy), shipped without its optimizer state; the bot
    routes that table's rows to it and the other tables' rows elsewhere (6 players in teams
    to ``bm-ppo.zip``)."""
    import zipfile

    from agents.checkpoint import OPTIMIZER_NAME, read_metadata
    from agents.policy import ByTableAgent
    from train.config import load_config

    table = f"{n}p-{mode}"
    ckpt = CKPT / f"bm-ppo-at-{table}.zip"
    meta = read_metadata(ckpt, check=False)
    cfg = load_config(CKPT.parents[1] / "configs" / "black-market" / f"bm_ppo_at_{n}p_{mode}.yaml")
    old = meta["config"]
    assert meta["game"] == "black-market" and cfg.num_players == n and cfg.rules == {"mode": mode} == old["rules"]
    assert meta["optimizer_stripped"] and OPTIMIZER_NAME not in zipfile.ZipFile(ckpt).namelist()
    assert cfg.init_from == old["init_from"] == "bm-ppo" and old["num_players"] == n
    for key in ("seed", "n_envs", "n_steps", "batch_size", "n_epochs", "learning_rate", "gamma", "ent_coef",
                "max_minutes", "eval_every", "eval_games"):
        assert getattr(cfg, key) == old[key], key
    assert cfg.policy.net_arch == old["policy"]["net_arch"] and cfg.league.zoo == old["league"]["zoo"]
    assert old["league"]["mix"] == cfg.league.mix and set(cfg.league.zoo) == {"bm-builder", "bm-rusher", "bm-denier"}
    assert cfg.league.teammate == old["league"].get("teammate", "") == ("self" if table == "4p-teams" else "")
    assert 0 < meta["training_steps"] <= cfg.total_timesteps
    bot = agents.make("bm-ppo", game="black-market", seed=0)
    assert isinstance(bot, ByTableAgent) and sorted(bot.by_table) == ["2p-teams", "4p-ffa", "4p-teams", "6p-ffa"]
    spec = get("black-market")
    mine, theirs = _observations(spec, n, {"mode": mode}), _observations(spec, 6, {"mode": "teams"})
    own = _bm(f"bm-ppo-at-{table}")
    np.testing.assert_allclose(bot.logits(mine[0]), own.logits(mine[0]), **CLOSE)
    np.testing.assert_allclose(bot.logits(theirs[0]), _bm("bm-ppo").logits(theirs[0]), **CLOSE)
    assert not np.allclose(own.logits(mine[0]), _bm("bm-ppo").logits(mine[0]), atol=1e-3)
    assert f"the network of bm-ppo-at-{table}" in agents.describe("bm-ppo", "black-market")
    assert f"itself at {n} players, {mode} (checkpoint" in agents.describe(f"bm-ppo-at-{table}", "black-market")
