"""Training at several tables at once (``tables:``): the config's schema and its one-line
errors, the vector env's rows at every table (count and rules), the league's teammates at
the team tables only, and a tiny Black Market run over 2 players, 4 in free-for-all and 6
in teams (BM-1.3) whose recording, evaluations and checkpoint name every table."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

from train.config import ConfigError, config_from_dict, load_config  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
BM = {"game": "black-market", "rules": {"mode": "teams"}}
THREE = [{"num_players": 2}, {"num_players": 4, "rules": {"mode": "ffa"}}, {"num_players": 6}]


def test_tables_merge_their_rules_over_the_runs():
    cfg = config_from_dict({**BM, "tables": THREE, "n_envs": 6, "n_steps": 2, "batch_size": 12})
    got = [(t.num_players, t.rules, t.label) for t in cfg.run_tables()]
    assert got == [(2, {"mode": "teams"}, "2p"), (4, {"mode": "ffa"}, "4p-ffa"), (6, {"mode": "teams"}, "6p")]
    assert cfg.counts() == [2, 4, 6] and cfg.num_players == 2  # the first table's count
    from train.config import rules_of

    assert [rules_of(cfg, t.num_players, t.rules).mode for t in cfg.run_tables()] == ["teams", "ffa", "teams"]
    # the dict a checkpoint keeps reads back as the same run (--resume, --seed)
    again = config_from_dict(cfg.to_dict())
    assert [(t.num_players, t.rules) for t in again.run_tables()] == [(t.num_players, t.rules) for t in cfg.run_tables()]
    assert cfg.tables_metadata()["tables"][1] == {"num_players": 4, "rules": {"mode": "ffa"}, "label": "4p-ffa"}


def test_runs_without_tables_keep_their_config_and_tables():
    """player_counts (the shorthand) and num_players give one table per count with the
    run's rules; the dict they write has no ``tables`` key (their metadata as before)."""
    import yaml

    for path in sorted((ROOT / "configs").rglob("*.yaml")):
        if "tables" in yaml.safe_load(path.read_text()):  # smoke_tables.yaml, bm_ppo.yaml
            continue
        cfg = load_config(path)
        assert "tables" not in cfg.to_dict() and cfg.tables_metadata() == {}, path
        assert [(t.num_players, t.rules, t.own) for t in cfg.run_tables()] == [(n, cfg.rules, {}) for n in cfg.counts()]
    cfg = config_from_dict({"player_counts": [2, 5]})
    assert [t.label for t in cfg.run_tables()] == ["2p", "5p"]


@pytest.mark.parametrize("data, words", [
    ({**BM, "tables": []}, ["'tables'", "a list of 1 to"]),
    ({**BM, "tables": {"num_players": 2}}, ["'tables'", "num_players: N"]),
    ({**BM, "tables": [4]}, ["'tables[0]'", "a mapping"]),
    ({**BM, "tables": [{"num_players": 4, "mode": "ffa"}]}, ["tables[0].mode", "num_players, rules, weight"]),
    ({**BM, "tables": [{"rules": {"mode": "ffa"}}]}, ["tables[0]", "no num_players", "2..6"]),
    ({**BM, "tables": [{"num_players": 8}]}, ["tables[0].num_players", "<= 6"]),
    ({**BM, "tables": [{"num_players": 2}, {"num_players": 3}]}, ["tables[1]", "3 players", "2, 4 or 6"]),
    ({**BM, "tables": [{"num_players": 4, "rules": {"mode": "solo"}}]}, ["tables[0]", "mode", "teams | ffa"]),
    ({**BM, "tables": [{"num_players": 4, "rules": {"colour": 1}}]}, ["tables[0].rules.colour", "mode"]),
    ({**BM, "tables": [{"num_players": 4, "rules": {"num_players": 6}}]}, ["tables[0].rules.num_players", "beside"]),
    ({**BM, "tables": [{"num_players": 4, "rules": [1]}]}, ["tables[0].rules", "mapping"]),
    ({**BM, "tables": [{"num_players": 4}, {"num_players": 4, "rules": {"mode": "teams"}}]},
     ["tables[1]", "same table as tables[0]"]),
    ({**BM, "tables": [{"num_players": 2, "weight": 0}]}, ["tables[0].weight", "(0.0, 1000000.0]"]),
    ({**BM, "tables": [{"num_players": 2, "weight": "2"}]}, ["tables[0].weight", "a number in"]),
    ({**BM, "tables": [{"num_players": 2, "weight": 100}, {"num_players": 4}], "n_envs": 8, "n_steps": 2,
      "batch_size": 16}, ["tables[1].weight", "no game of n_envs 8", "[8, 0]"]),
    ({**BM, "num_players": 4, "tables": THREE}, ["num_players and tables"]),
    ({**BM, "player_counts": [2, 4], "tables": THREE}, ["player_counts and tables"]),
    ({**BM, "tables": THREE, "n_envs": 2, "n_steps": 2, "batch_size": 4}, ["n_envs", "one game per table (3)"]),
    ({**BM, "tables": THREE, "backend": "rllib"}, ["backend", "sb3", "tables"]),
    ({**BM, "tables": [{"num_players": 4, "rules": {"mode": "ffa"}}, {"num_players": 6, "rules": {"mode": "ffa"}}],
      "league": {"teammate": "self"}}, ["league.teammate", "none of the tables"]),
])
def test_table_errors_name_the_table_and_what_is_allowed(data, words):
    with pytest.raises(ConfigError) as e:
        config_from_dict(data)
    msg = str(e.value)
    assert "\n" not in msg and all(w in msg for w in words), msg


def test_table_weights_split_the_games():
    """A table's ``weight`` is its share of the vector env's games (an even split without
    weights, as before), kept through the dict a checkpoint writes."""
    from train.selfplay import League, make_league_vec_env

    weighted = [{**THREE[0], "weight": 2}, THREE[1], {**THREE[2], "weight": 0.5}]
    cfg = config_from_dict({**BM, "tables": weighted, "n_envs": 14, "n_steps": 2, "batch_size": 28,
                            "league": {"mix": {"random": 1.0}}})
    assert [t.weight for t in cfg.run_tables()] == [2.0, 1.0, 0.5]
    env = make_league_vec_env(cfg, League(cfg, seed=0), 3)
    assert [p.num_envs for p in env.batch.parts] == [8, 4, 2]
    assert [t.weight for t in config_from_dict(cfg.to_dict()).run_tables()] == [2.0, 1.0, 0.5]
    even = config_from_dict({**BM, "tables": THREE, "n_envs": 14, "n_steps": 2, "batch_size": 28,
                             "league": {"mix": {"random": 1.0}}})
    assert [p.num_envs for p in make_league_vec_env(even, League(even, seed=0), 3).batch.parts] == [5, 4, 5]  # within one game


def test_teammate_applies_at_the_team_tables_only():
    """league.teammate is accepted when one table at least has teams (BM-1.3), and the
    league gives the learner's side to it there only."""
    from train.selfplay import League, make_league_vec_env

    cfg = config_from_dict({**BM, "tables": THREE, "n_envs": 6, "n_steps": 2, "batch_size": 12,
                            "league": {"teammate": "bm-rusher", "mix": {"random": 1.0}}})
    league = League(cfg, seed=0)
    env = make_league_vec_env(cfg, league, 3)
    parts = env.batch.parts
    assert [p.num_players for p in parts] == [2, 4, 6] and [p.rules.mode for p in parts] == ["teams", "ffa", "teams"]
    assert parts[1].mates is None  # free-for-all: no teammate
    six = parts[2]
    assert six.mates is not None and six.mates.sum(axis=1).tolist() == [2] * 6  # two teammates of three a side
    env.reset()
    for g in range(six.num_envs):  # the learner's teammates sit as league.teammate
        assert (six.lineup[g][six.mates[six.seat[g]]] == league.mate).all()
    with pytest.raises(ConfigError, match="no teams with these rules at 4 players"):
        config_from_dict({**BM, "num_players": 4, "rules": {"mode": "ffa"}, "league": {"teammate": "self"}})


def _meta(path: Path) -> dict:
    with zipfile.ZipFile(path) as z:
        return json.loads(z.read("ripmarket.json"))


def test_smoke_run_over_three_tables(tmp_path):
    """configs/black-market/smoke_tables.yaml: one network over 2 players, 4 in free-for-
    all and 6 in teams. The warm start records games at each table, every evaluation and
    the final one play each table (its fair share: one in its sides), and the checkpoint's
    metadata lists the tables and loads as an agent that plays each."""
    from typer.testing import CliRunner

    from ripmarket_env.app.cli import app
    from train.distill import load_decisions

    res = CliRunner().invoke(app, ["train", str(ROOT / "configs/black-market/smoke_tables.yaml"), "--out", str(tmp_path)])
    assert res.exit_code == 0, res.output[-3000:]
    assert "at table 4p-ffa" in res.output
    (run,) = (tmp_path / "checkpoints").iterdir()
    summary = json.loads((run / "summary.json").read_text())
    labels = ["2p", "4p-ffa", "6p"]
    for point in summary["evals"]:
        assert list(point["by_table"]) == labels
        by = point["by_table"]
        assert [by[k]["parity"] for k in labels] == [2, 4, 2]  # sides: 2 (2p), 4 (ffa), 2 teams of 3
        assert point["win_rate_vs_zoo"] == pytest.approx(np.mean([r["win_rate"] * r["parity"] for r in by.values()]))
    assert list(summary["final_eval"]["by_table"]) == labels
    assert all(r["games"] == 4 for r in summary["final_eval"]["by_table"].values())
    rec = load_decisions(summary["pretrain"]["recording"])
    assert "tables-2p_4p-ffa_6p" in summary["pretrain"]["recording"]
    from ripmarket_env.games import get

    spec = get("black-market")
    lay = spec.make_engine(spec.make_rules(4)).obs_layout
    obs = np.asarray(rec.obs, np.float32)
    seen = {(int(np.argmax(o[lay.slice("num_players")])), int(o[lay.slice("teams")][0])) for o in obs}
    assert seen == {(0, 1), (1, 0), (2, 1)}  # 2p teams, 4p ffa, 6p teams
    meta = _meta(run / "final.zip")
    assert meta["num_players"] == [2, 4, 6] and [t["label"] for t in meta["tables"]] == labels
    assert meta["tables"][1]["rules"] == {"mode": "ffa"} and meta["config"]["tables"] == THREE
    from agents.policy import load_agent
    from eval import arena

    import agents

    bot = load_agent(run / "final.zip", seed=0)
    for n, mode in ((2, "teams"), (4, "ffa"), (6, "teams")):
        pool = [bot, agents.make_seeded("bm-rusher", 1, game="black-market")]
        who = np.array([[k % 2 for k in range(n)]])
        assert arena.play(spec, spec.make_rules(n, mode=mode), [5], who, pool).engine.terminated.all()
