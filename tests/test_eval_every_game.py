"""Evaluate, tournaments, balance and bench are written once for every registered game: a
fourth game registered only here (The Rune Market's rules under another id, without any
of its evaluation hooks and without agents of its own) gets every one of them, with the
generic defaults."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

pytest.importorskip("openskill")

TOY = "toy-market"


@pytest.fixture
def toy(monkeypatch):
    import ripmarket_env.games as registry
    from ripmarket_env.games import get

    spec = dataclasses.replace(get("rune-market"), id=TOY, title="Toy Market", balance=None,
                               next_first_players=None, bench={}, card_files=None)
    monkeypatch.setitem(registry._LOADERS, TOY, lambda: spec)
    return spec


def test_balance_report_of_a_game_without_hooks(toy, tmp_path):
    """The generic report: win share by seat and agent, game length; diff and targets too."""
    from eval.balance import default_agents, default_players, diff_markdown, diff_results, load_result, run_balance
    from eval.balance import targets

    assert default_agents(TOY) == ["random"]
    assert default_players(TOY) == [2, 4, 6]
    res = run_balance(players=[2, 3], games=6, seed=3, workers=1, progress=False, out=tmp_path / "a", game=TOY)
    assert res["settings"]["game"] == TOY and "cards" not in res["settings"]
    for P, f in zip((2, 3), res["by_players"]):
        assert f["players"] == P and f["games"] == 6
        assert len(f["seat_win"]) == P and set(f["by_agent"]) == {"random"}
        assert f["by_agent"]["random"]["player_games"] == 6 * P
        wins = sum(w["wins"] for w in f["seat_win"])
        assert wins == pytest.approx(f["games_with_winner"])  # shared wins count 1/k
        assert f["rounds"]["min"] >= 1 and f["decisions"]["mean"] > 0
    text = (tmp_path / "a" / "balance.md").read_text()
    assert "# Balance report: Toy Market" in text and "## 3 players" in text and "| random |" in text
    again = load_result(tmp_path / "a")
    assert again["settings"]["game"] == TOY
    b = run_balance(players=[3], games=6, seed=4, workers=1, progress=False, game=TOY)
    d = diff_results(again, b)
    assert [row["players"] for row in d["by_players"]] == [3] and "random" in d["by_players"][0]["agents"]
    assert "## 3 players" in diff_markdown(d)
    # the terminal's table marks what the Markdown bolds (its title says it marks p < 0.05)
    import io

    from rich.console import Console

    from eval.balance import print_diff

    row = d["by_players"][0]
    row["agents"]["random"]["significant"] = True  # (a change the test declares significant)
    buf = io.StringIO()
    print_diff(d, Console(file=buf, width=160))
    marked = [line for line in buf.getvalue().splitlines() if "\u2691" in line]
    assert "marked \u2691" in buf.getvalue() and len(marked) == 1 + sum(c["significant"] for c in row["seats"]) + 1
    table = targets(again)
    assert table.count("\n") == 1 + 2 + 3  # header, rule, one line per seat of each player count


def test_balance_refuses_card_files_of_a_game_without_them(toy):
    from eval.balance import run_balance

    with pytest.raises(ValueError, match="Toy Market plays only its packaged cards"):
        run_balance(["random"], [2], 2, workers=1, progress=False, cards="x.json", game=TOY)


def test_evaluate_tournament_and_bench_of_a_game_without_hooks(toy):
    from eval.evaluate import evaluate
    from eval.tournament import run_tournament
    from ripmarket_env.app.bench import default_players, run_bench

    res = evaluate("random", 3, 6, seed=1, workers=1, progress=False, game=TOY)
    assert res["zoo"] == ["random"] and res["games"] == 6
    t = run_tournament(["random"], 3, 6, seed=2, workers=1, progress=False, game=TOY, match_games=2)
    for g in t.games:
        if g["match_game"] == 1:  # the generic rule: the previous game's lowest-numbered winner starts
            prev = next(x for x in t.games if (x["set"], x["rotation"], x["match_game"]) == (g["set"], g["rotation"], 0))
            assert g["first_player"] == int(np.argmax(prev["winners"]))
    assert default_players(toy) == [2, 4, 6]
    report = run_bench(players=[2], batches=[8], seconds=0.05, game=TOY)
    assert report["game"] == TOY and report["targets"] == []
    assert {(r["players"], r["observations"]) for r in report["results"]} == {(2, False), (2, True)}
    json.dumps(report)  # JSON-ready


@pytest.mark.parametrize("game", ["black-market", "rune-market", "toy"])
def test_a_game_without_plots_of_its_own_gets_the_generic_ones(game, tmp_path):
    """`ripmarket balance --out DIR` promises plots: a game without a plots hook gets the
    win share by turn position and the game length, linked from its report."""
    from eval.balance import run_balance

    from ripmarket_env.games import get

    spec = get(game)
    counts = (spec.extras or {}).get("player_counts") or [spec.min_players]
    run_balance(players=[counts[0]], games=2 * counts[0], seed=1, workers=1, progress=False, out=tmp_path, game=game)
    for name in ("seat_position.png", "game_length.png"):
        assert (tmp_path / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert f"]({name})" in (tmp_path / "balance.md").read_text()
