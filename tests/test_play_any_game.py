"""The tests' toy game (tests/toy_game.py: no table or story hook, two heuristics of its own)
gets the terminal game, the session and `ripmarket replay` without code of its own in the
app: the generic table description (its text render, action names, rewards), the generic
story (each event's own words), its heuristics as opponents (``agents.default_lineup``)."""

from __future__ import annotations

import io
import re

import pytest
from rich.console import Console
from typer.testing import CliRunner

from ripmarket_env.app.cli import app
from ripmarket_env.app.play import play_terminal
from ripmarket_env.app.session import SetupError, TableSession
from ripmarket_env.games import get

TOY = "toy"


@pytest.fixture()
def toy():
    spec = get(TOY)
    assert spec.table is None and spec.story is None  # the generic description and story
    return spec


def test_a_toy_game_plays_through_the_generic_session(toy):
    s = TableSession(TOY, seed=3)
    assert s.controllers == ["you", "toy-high", "toy-low"][: toy.default_players]
    assert s.level(1) == "Easy" and s.level(2) == "Beginner"
    while not s.over:
        d = s.table()
        assert d["title"] == "Pairs" and d["info"] and d["prompt"] == "Your decision"
        assert [c["action"] for c in d["choices"]] == s.legal_actions()
        s.act(s.choices()[0]["action"])
    res = s.result()
    assert sorted(r["seat"] for r in res["standings"]) == list(range(s.players))
    assert all(r["how"].startswith("reward ") for r in res["standings"])
    assert any(m["text"] for m in s.moves)
    with pytest.raises(SetupError, match="allowed: an integer from 2 to 4"):
        TableSession(TOY, players=9)
    with pytest.raises(SetupError, match="unknown opponent 'rm-banker'; allowed: random, toy-high, toy-low"):
        TableSession(TOY, opponents=["rm-banker"])


def test_a_toy_game_in_the_terminal_and_its_replay(toy, tmp_path):
    buf = io.StringIO()
    con = Console(file=buf, width=100)
    s = play_terminal(TOY, 2, 1, seed=5, input_fn=lambda prompt: "1", console=con, save=tmp_path / "toy.jsonl")
    text = buf.getvalue()
    assert s.over and "Pairs" in text and "GAME OVER" in text and "Standings" in text
    res = CliRunner().invoke(app, ["replay", str(tmp_path / "toy.jsonl")])
    assert res.exit_code == 0, res.output[-2000:]
    assert "Pairs record" in res.output and "record verified" in res.output
    r = CliRunner().invoke(app, ["play", "--game", TOY, "--players", "2", "--seed", "2"], input="1\n" * 5000)
    assert r.exit_code == 0, r.output[-2000:]
    assert "Pairs" in r.output and "Standings" in r.output
    r = CliRunner().invoke(app, ["play", "--rule", "max_rounds=" + "4" * 5000])  # int() refuses 4,300+ digits
    assert r.exit_code == 2 and "an integer of 5,000 digits" in r.output
    r = CliRunner().invoke(app, ["play", "--rule", "max_rounds=\u00b2"])  # int() refuses "²"
    assert r.exit_code == 2 and "max_rounds" in r.output and "Traceback" not in r.output
    r = CliRunner().invoke(app, ["play", "--game", TOY, "--mode", "teams"])
    assert r.exit_code == 2 and "Pairs has no rules field 'mode'" in r.output
    r = CliRunner().invoke(app, ["play", "--game", TOY, "--cards", str(tmp_path / "toy.jsonl")])
    assert r.exit_code == 2 and "plays only its packaged cards" in r.output


def test_a_decision_with_one_legal_action_is_not_asked_in_any_game(toy):
    """Issue 39, for a game with no hooks (TOY-2: a seat whose hand holds one value, e.g.
    its last card, has one legal play): the session takes the person's only option and
    tells it in a story line in the game's words; ``ask_forced=True`` asks it as before,
    and the game, its record and the bots' decisions are the same either way."""
    runs = {}
    for ask in (False, True):
        s = TableSession(TOY, seed=3, ask_forced=ask)
        asked = []
        while not s.over:
            asked.append(len(s.choices()))
            s.act(s.choices()[0]["action"])
        runs[ask] = (s, asked)
    (s, asked), (t, asked_too) = runs[False], runs[True]
    assert 1 not in asked and 1 in asked_too
    assert s.recorder.dumps() == t.recorder.dumps()
    forced = [m for m in s.moves if m["kind"] == "forced"]
    assert forced and all(re.fullmatch(r"Your only option, taken for you: play a [1-8]", m["text"]) for m in forced)
    assert all(m["seat"] == s.seat and m["who"] == "you" for m in forced)
    assert [m for m in s.moves if m["kind"] != "forced"] == t.moves


@pytest.mark.parametrize("game", ["toy", "ripmarket", "black-market", "rune-market"])
def test_a_secret_seed_is_shown_only_once_the_game_is_over(game):
    """The seed deals every hidden card (R-12.3, BM-7, RM-5.2): a seed the program drew is
    never printed while the game is on (``ripmarket play`` without --seed), and is told
    when the person leaves or the game ends; a seed they chose is shown (a practice game)."""
    buf = io.StringIO()
    con = Console(file=buf, width=100)
    seen = []

    def leave(prompt):  # the person reads the screen up to the first prompt, then quits
        seen.append(buf.getvalue())
        return "q"

    s = play_terminal(game, None, 0, input_fn=leave, console=con)
    assert not s.practice and seen and str(s.seed) not in seen[0] and "secret seed" in seen[0]
    assert f"seed was {s.seed}" in buf.getvalue()[len(seen[0]):]
    buf = io.StringIO()
    con = Console(file=buf, width=100)
    play_terminal(game, None, 0, seed=77, input_fn=lambda prompt: "q", console=con)
    assert "practice seed 77" in buf.getvalue() and "seed was" not in buf.getvalue()


@pytest.mark.parametrize("game,players", [("ripmarket", 6), ("black-market", 4), ("rune-market", 4), ("toy", 4)])
def test_a_narrow_terminal_loses_no_word(game, players):
    """At 50 columns every seat's counters and the standings come whole: where a table would
    cut words short ("poin…", "Ty…"), the seats and the standings are a paragraph each."""
    buf = io.StringIO()
    con = Console(file=buf, width=50)
    s = play_terminal(game, players, 1, ["random"], seed=22, input_fn=lambda prompt: "1", console=con)
    text = buf.getvalue()
    assert s.over and "\u2026" not in text and max(map(len, text.splitlines())) <= 50
    for row in s.result()["standings"]:
        assert row["how"].split()[0] in text and row["name"] in text


def test_the_prompt_says_what_it_takes_and_quotes_a_long_answer_short():
    """``Choose 1-N:`` takes a number, ``t``, ``q``; ``?`` says so; a refused answer is quoted
    up to 40 characters (a pasted page is not echoed back whole) with what may be entered."""
    from ripmarket_env.app.play import ask_number

    buf = io.StringIO()
    con = Console(file=buf, width=100)
    answers = iter(["?", "9" * 5000, "abc", "\u00b2", "2"])  # "²": a digit to isdigit(), not to int()
    shown = []
    assert ask_number(3, lambda prompt: next(answers), con, show=lambda: None, again=lambda: shown.append(1)) == 2
    text = buf.getvalue()
    assert "Enter the number of your choice (1 to 3); t shows the table again, q leaves the game." in text
    assert "9" * 40 + "... is not a choice here" in text and "9" * 41 not in text
    assert "abc is not a choice here. Enter a number from 1 to 3 (t: the table, q: leave):" in text
    assert "\u00b2 is not a choice here" in text and len(shown) == 4


def test_the_compile_notice_shows_only_when_the_engine_must_compile(monkeypatch):
    """"Setting up the game (the first run compiles ...)" is said on a cold cache only."""
    from ripmarket_env.core import jitcache

    for cold in (True, False):
        monkeypatch.setattr(jitcache, "engine_cached", lambda spec, cold=cold: not cold)
        buf = io.StringIO()
        play_terminal(TOY, 2, 0, seed=3, input_fn=lambda prompt: "q", console=Console(file=buf, width=100))
        assert ("first run compiles" in buf.getvalue()) is cold


@pytest.mark.parametrize("game", ["black-market", "rune-market", "toy"])
def test_a_replay_names_whose_each_decision_is(game, tmp_path):
    """`ripmarket replay FILE` prints each decision with the seat that took it (a game's
    action words are the actor's: "the player 2 seat(s) clockwise" named no one)."""
    rec = tmp_path / "game.jsonl"
    s = play_terminal(game, None, 0, ["random"], seed=4, input_fn=lambda prompt: "1",
                      console=Console(file=io.StringIO(), width=100), save=rec)
    res = CliRunner().invoke(app, ["replay", str(rec)])
    assert res.exit_code == 0, res.output[-2000:]
    steps = [line.split(None, 1)[1] for line in res.output.splitlines() if re.match(r"^ +\d+  \S", line)]
    assert len(steps) == len(s.recorder.lines) - sum(1 for x in s.recorder.lines if "step" not in x) and steps
    assert all(re.match(r"^(player |P)\d+: ", text) for text in steps), steps[:5]


def test_a_table_cards_text_is_told_in_full_once_and_on_t():
    """The Rune Market's Market explanations (9-12 lines) came again at every decision: a
    table card's text is told whole the first time, then by its name, and whole again on t."""
    buf = io.StringIO()
    answers = iter(["1", "t", "q"])
    play_terminal("rune-market", 4, 1, ["random"], seed=3, input_fn=lambda prompt: next(answers),
                  console=Console(file=buf, width=100))
    text = buf.getvalue()
    full = "10 Red Runes: 1 Rune Point."
    assert text.count(full) == 2  # the first decision, and t
    assert "Market: [1] 10 Red Runes · [2] 10 Blue Runes · [3] 2 Boat Shelters · [4] 2 Bandits\n" in text
