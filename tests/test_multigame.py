"""The multi-game house: the game registry, ``ripmarket_env.make``, the old entry points,
the agent registry keyed by game, and the game id in records and checkpoints."""

from __future__ import annotations

import json
import shutil
import zipfile

import gymnasium
import numpy as np
import pytest

import agents
import ripmarket_env
from agents.checkpoint import CheckpointError, read_metadata
from ripmarket_env.core.spec import GameSpec
from ripmarket_env.envs.record import RecordError, Recorder
from ripmarket_env.games import get, ids, registry
from ripmarket_env.games.ripmarket import SPEC, RulesConfig


def test_registry_lists_ripmarket_with_its_facts():
    assert "ripmarket" in ripmarket_env.games() == ids()
    spec = get("ripmarket")
    assert isinstance(spec, GameSpec) and spec is SPEC and registry()["ripmarket"] is SPEC
    assert (spec.min_players, spec.max_players, spec.env_name, spec.gym_id) == (2, 10, "ripmarket_v0", "RipMarket-v0")
    eng = spec.make_engine(spec.make_rules(6), 3)
    assert [p.name for p in spec.observation_pieces(eng)][:2] == ["phase", "is_actor"]
    low, high = spec.observation_bounds(eng)
    assert low.shape == high.shape == (eng.obs_size,)
    assert len(spec.action_names(eng)) == eng.num_actions
    assert spec.max_decisions(eng.rules) > 0


def test_unknown_game_is_refused_with_the_known_ones():
    with pytest.raises(KeyError, match="unknown game 'chess'.*ripmarket"):
        get("chess")
    with pytest.raises(KeyError, match="registered games"):
        ripmarket_env.make("chess")


def test_make_gives_the_aec_env_and_old_entry_points_still_work():
    e = ripmarket_env.make("ripmarket", num_players=6)
    assert e.metadata["name"] == "ripmarket_v0" and len(e.possible_agents) == 6
    raw = ripmarket_env.make("ripmarket", num_players=6, raw=True)
    assert type(raw) is ripmarket_env.raw_env
    old = ripmarket_env.env(num_players=6)
    for a, b in ((e, old),):
        a.reset(seed=5)
        b.reset(seed=5)
        assert a.agent_selection == b.agent_selection
        np.testing.assert_array_equal(a.observe(a.agent_selection)["observation"],
                                      b.observe(b.agent_selection)["observation"])
    from ripmarket_env.engine import Engine
    from ripmarket_env.gym_env import RipMarketEnv
    from ripmarket_env.vector_env import RipMarketVecEnv

    assert Engine is SPEC.engine_class
    g = gymnasium.make("RipMarket-v0", num_players=4, opponents="greedy")
    assert isinstance(g.unwrapped, RipMarketEnv)
    assert RipMarketVecEnv(num_envs=2, num_players=4, opponents="random", seed=1).reset().shape[0] == 2


def test_envs_take_agent_objects_and_names_only_through_a_resolver():
    from ripmarket_env.envs.gym import gym_env_class

    Env = gym_env_class(SPEC)
    with pytest.raises(TypeError, match="is a name.*agents.make"):
        Env(num_players=4, opponents="greedy")
    env = Env(num_players=4, opponents=agents.make("greedy"))
    obs, _ = env.reset(seed=0)
    assert obs.shape == env.observation_space.shape


def test_agent_registry_is_keyed_by_game():
    assert "greedy" in agents.names() == agents.names("ripmarket")
    assert agents.names("other-game") == ["random"]  # the random agent plays every game
    agents.make("random", game="other-game")
    with pytest.raises(KeyError, match="unknown agent 'greedy' for game 'other-game'.*plays ripmarket"):
        agents.make("greedy", game="other-game")
    with pytest.raises(ValueError, match="already registered"):
        agents.register("random", agents.RandomAgent, "again", game="ripmarket")


def _record(tmp_path):
    rec = Recorder.new(RulesConfig(num_players=3), seed=4)
    rng = np.random.default_rng(0)
    while not rec.done:
        rec.step(int(rng.choice(rec.engine.legal_actions(0))))
    return rec.save(tmp_path / "game.jsonl")


def test_records_carry_the_game_id_and_old_records_still_replay(tmp_path):
    path = _record(tmp_path)
    lines = path.read_text().splitlines()
    assert json.loads(lines[0])["game"] == "ripmarket"
    assert ripmarket_env.replay(path).terminated[0]
    head = json.loads(lines[0])
    del head["game"]  # a record written before the multi-game house: version 2, no end marker
    head["version"] = 2
    body = [x for x in lines[1:] if '"end"' not in x[:8]]
    old = tmp_path / "old.jsonl"
    old.write_text("\n".join([json.dumps(head), *body]) + "\n")
    assert ripmarket_env.replay(old).terminated[0]
    head["game"] = "chess"
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join([json.dumps(head), *body]) + "\n")
    with pytest.raises(RecordError, match="unknown game 'chess'; known games: .*ripmarket"):
        ripmarket_env.replay(bad)


def test_checkpoints_carry_the_game_id_and_old_ones_still_load(tmp_path):
    from agents.export import trained_cards

    from first_edition import first_edition_checkpoint

    shipped = first_edition_checkpoint(tmp_path)  # as the first edition's bot was written (shipped as ppo-6p until the second)
    meta = read_metadata(shipped, cards=trained_cards(shipped))  # written before checkpoints named their game
    assert "game" not in meta
    with zipfile.ZipFile(shipped) as z:
        members = {n: z.read(n) for n in z.namelist()}
    for claimed, message in (("chess", "game 'chess'; it cannot play 'ripmarket'"),
                             ("black-market", "card database differs")):  # checked against that game's facts
        meta["game"] = claimed
        other = tmp_path / f"{claimed}.zip"
        with zipfile.ZipFile(other, "w") as z:
            for n, data in members.items():
                z.writestr(n, json.dumps(meta) if n == "ripmarket.json" else data)
        with pytest.raises(CheckpointError, match=message):
            read_metadata(other)
    from agents.checkpoint import make_metadata

    assert make_metadata({}, [6], 0)["game"] == "ripmarket"
    copy = tmp_path / "copy.zip"
    shutil.copy(shipped, copy)
    assert read_metadata(copy, cards=trained_cards(shipped))["obs_size"] == meta["obs_size"]


def test_the_games_command_lists_every_registered_game():
    from typer.testing import CliRunner

    from ripmarket_env.app.cli import app

    res = CliRunner().invoke(app, ["games"], terminal_width=160)
    assert res.exit_code == 0, res.output
    for spec in registry().values():
        assert spec.id in res.output and spec.env_name in res.output and spec.gym_id in res.output


@pytest.mark.parametrize("game", ["ripmarket", "black-market", "rune-market"])
def test_every_engine_of_a_game_shares_one_dtype_object_per_layout(game):
    """numba's dispatcher is fast only for the dtype object it cached (core/dtypes.py):
    new engines, clones, pickled and deep-copied engines all carry the canonical one."""
    import copy
    import pickle

    spec = get(game)
    first = spec.make_engine(spec.make_rules(4), 1)
    again = spec.make_engine(spec.make_rules(4), 2)
    first.reset([1])
    for other in (again, first.clone(), pickle.loads(pickle.dumps(first)), copy.deepcopy(first)):
        assert other.state.dtype is first.state.dtype
        assert other.tables.dtype is first.tables.dtype
    twin = pickle.loads(pickle.dumps(first))
    assert twin.state.tobytes() == first.state.tobytes() and twin.tables.tobytes() == first.tables.tobytes()
    twin.step(np.flatnonzero(twin.state["mask"][0])[:1])  # the unpickled copy still plays


@pytest.mark.parametrize("game,page", [("ripmarket", "docs/CARDS.md"),
                                       ("black-market", "docs/games/black-market/CARDS.md"),
                                       ("rune-market", "docs/games/rune-market/CARDS.md")])
def test_cards_command_serves_every_game_from_its_hook(game, page):
    """`ripmarket cards --game G` is one command: the game's card_reference hook gives the page."""
    from pathlib import Path

    from typer.testing import CliRunner

    from ripmarket_env.app.cli import app

    res = CliRunner().invoke(app, ["cards", "--game", game, "--markdown"])
    assert res.exit_code == 0, res.output
    assert res.stdout == (Path(__file__).resolve().parents[1] / page).read_text(encoding="utf-8")
    res = CliRunner().invoke(app, ["cards", "--game", game, "--file", "/nonexistent/cards.json"])
    assert res.exit_code == 2 and "Traceback" not in res.output and "cards.json" in res.output


def test_cards_command_refuses_what_a_game_has_not():
    from typer.testing import CliRunner

    from ripmarket_env.app.cli import app

    res = CliRunner().invoke(app, ["cards", "--game", "toy"])
    assert res.exit_code == 2 and "has no card reference" in res.output
    # --custom-deck is R.I.P. Market's: the others' files take their size ranges without it
    for game, sizes in (("black-market", "12-120 Hand Cards and 6-60 Point Cards"), ("rune-market", "20-")):
        res = CliRunner().invoke(app, ["cards", "--game", game, "--custom-deck"])
        assert res.exit_code == 2 and "not needed here" in res.output and sizes in res.output


@pytest.mark.parametrize("game", ids())
def test_every_observation_layout_tiles_its_vector_and_names_its_pieces(game):
    """``core.spec.Layout.of`` places every game's pieces (the test-only game's too): each
    index of the vector belongs to exactly one piece of one block, and ``named_view``
    gives each piece back from where the encoder wrote it."""
    from ripmarket_env.core.spec import Layout

    spec = get(game)
    eng = spec.make_engine(spec.make_rules(spec.max_players), 1)
    eng.reset([5])
    lay = eng.obs_layout
    assert isinstance(lay, Layout) and type(lay).of(lay.pieces, lay.seats) == lay
    owner = np.zeros(lay.size, np.int64)
    for p in lay.pieces:
        for k in range(lay.seats if p.scope != "global" else 1):
            owner[lay.slice(p.name, k)] += 1
    assert (owner == 1).all(), f"{game}: indices covered {sorted(set(owner.tolist()))} times"
    obs = eng.observe([0])[0]
    view = lay.named_view(obs)
    assert set(view) == {p.name for p in lay.pieces}
    for p in lay.pieces:
        if p.scope == "global":
            assert np.array_equal(view[p.name], obs[lay.slice(p.name)])
        else:
            assert view[p.name].shape == (lay.seats, p.size)
            assert all(np.array_equal(view[p.name][k], obs[lay.slice(p.name, k)]) for k in range(lay.seats))
    assert sum(v.size for v in view.values()) == lay.size


@pytest.mark.parametrize("game", ids())
def test_a_rules_config_built_with_an_unknown_field_names_the_allowed_ones(game):
    """Bad configs get the game's error naming what is allowed, whether the config comes
    from a mapping or is built directly (not Python's TypeError about __init__); copies,
    pickles and dataclasses.replace still build it."""
    import copy
    import dataclasses
    import pickle

    spec = get(game)
    cls = spec.rules_class
    for build in (lambda: cls(num_players=spec.default_players, players=3),
                  lambda: cls.from_dict({"num_players": spec.default_players, "players": 3})):
        with pytest.raises(cls.error, match=r"unknown field\(s\) players; allowed: .*num_players") as err:
            build()
        assert isinstance(err.value, ValueError)
    rules = spec.make_rules()
    assert copy.deepcopy(rules) == rules and pickle.loads(pickle.dumps(rules)) == rules
    assert dataclasses.replace(rules, num_players=spec.min_players).num_players == spec.min_players


@pytest.mark.parametrize("game,packaged", [("black-market", "games/blackmarket/cards.json"),
                                           ("rune-market", "games/runemarket/cards.json")])
def test_the_reference_of_a_designers_card_file_names_that_file(game, packaged, tmp_path):
    """`ripmarket cards --game G --file FILE` heads the reference with FILE, not with the
    packaged file's "generated ... do not edit by hand"."""
    from pathlib import Path

    from typer.testing import CliRunner

    from ripmarket_env.app.cli import app

    mine = tmp_path / "mine.json"
    mine.write_bytes((Path(ripmarket_env.__file__).parent / packaged).read_bytes())
    res = CliRunner().invoke(app, ["cards", "--game", game, "--file", str(mine), "--markdown"])
    assert res.exit_code == 0, res.output
    assert f"The reference of the card file `{mine}`" in res.stdout and "Generated from" not in res.stdout
