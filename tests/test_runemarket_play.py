"""Playing The Rune Market against the bots through the one play session of every game
(``app.session.TableSession``: the web page's and the terminal's, ``ripmarket play --game
rune-market``): a bot's attack on the person stops at once at the person's block decision
(RM-5.7), a block decision with one option only is taken for the person and told (RM-5.9,
issue 39: the bots see the same game), bad input is refused without changing the game, and
only the person's own hand is on screen (RM-8.4)."""

from __future__ import annotations

import re

import numpy as np
import pytest
from typer.testing import CliRunner

import ripmarket_env
from ripmarket_env.app.cli import app
from ripmarket_env.app.play import play_terminal
from ripmarket_env.app.session import GameOverError, NotYourTurnError, SetupError, TableSession
from ripmarket_env.core.engine import IllegalActionError, raw_rows

GAME = "rune-market"


def _blocked_session(seed=0):
    s = TableSession(GAME, 4, 0, seed=seed)
    rng = np.random.default_rng(seed)
    while s.table()["phase"] != "defend":
        assert not s.over, "no bot attacked seat 0 in this game"
        s.act(s.choices()[rng.integers(len(s.choices()))]["action"])
    return s


def test_a_bots_attack_stops_at_the_persons_block_decision():
    """RM-5.7: during the bot's turn the acting seat becomes the person's, and the bots
    stop there: the prompt names the attacker and value, the choices block or not."""
    s = _blocked_session()
    st = s.state
    attacker = int(st["turn_player"])
    assert attacker != 0 and int(st["actor"]) == 0 and s.your_turn
    assert re.search(rf"P{attacker} \(rm-[\w-]+\) attacks you", s.recent()[-1]["text"])  # the last thing that happened
    p = s.prompt()
    assert p.startswith(f"BLOCK? P{attacker} attacks you with a Number {int(st['pend_value'])}.")
    texts = [c["text"] for c in s.choices()]
    assert len(texts) >= 2 and texts[-1] == "Let the attack through (do not block)"
    assert all(t.startswith("Block: show your Number ") for t in texts[:-1])
    for t in texts[:-1]:
        assert int(t.rsplit(" ", 1)[1]) >= int(st["pend_value"])
    assert s.table()["info"][0] == f"P{attacker}'s turn; you decide whether to block the attack of P{attacker} " \
                                   f"(a Number {int(st['pend_value'])})"  # who decides what, in words


def _play(seed: int, ask_forced: bool) -> tuple[TableSession, list[int]]:
    """A whole game, decision n of the person taking choice n mod count (a forced one,
    when asked, its only choice without counting); the numbers of choices asked."""
    s = TableSession(GAME, 4, 0, seed=seed, ask_forced=ask_forced)
    asked, n = [], 0
    while not s.over:
        cs = s.choices()
        asked.append(len(cs))
        if len(cs) == 1:
            s.act(cs[0]["action"])
            continue
        s.act(cs[n % len(cs)]["action"])
        n += 1
    return s, asked


def test_a_block_decision_with_one_option_is_taken_for_the_person_and_told():
    """RM-5.9 (the defender is asked even with no card high enough) and issue 39: the
    person's own session takes a decision with one legal action (letting the attack
    through) and tells it in a story line; the engine still asked the seat, so the game,
    the record and every bot's decision are those of a person who was asked
    (``ask_forced=True``) and chose the only option."""
    s, asked = _play(0, ask_forced=False)
    t, asked_too = _play(0, ask_forced=True)
    assert 1 not in asked and asked_too.count(1) > 0  # never asked with one option; asked before
    assert s.steps == t.steps and raw_rows(s.engine.state)[0].tobytes() == raw_rows(t.engine.state)[0].tobytes()
    forced = [i for i, m in enumerate(s.moves) if m["kind"] == "forced"]
    assert forced and not any(m["kind"] == "forced" for m in t.moves)
    texts = [s.moves[i]["text"] for i in forced]
    assert "You let the attack through (your only option)" in texts
    for i in forced:  # the engine's words for the same step follow: no card was high enough
        line = s.moves[i]
        assert line["seat"] == 0 and line["who"] == "you" and line["turn"] is not None
        if line["text"].startswith("You let the attack through"):
            assert "you do not block (no card high enough)" in s.moves[i + 1]["text"]
    assert [m for m in s.moves if m["kind"] != "forced"] == t.moves  # the same story otherwise
    assert s.recorder.dumps() == t.recorder.dumps()  # the same record: the bots learned nothing from it


def test_a_forced_decision_is_told_in_recent_and_survives_a_replay():
    """Issue 39: the forced decision is part of what happened since your latest decision
    (``recent``), also for a game brought back from its steps (how the server resumes)."""
    s = TableSession(GAME, 4, 0, seed=0)
    n = 0
    while not any(m["kind"] == "forced" for m in s.recent()):
        cs = s.choices()
        s.act(cs[n % len(cs)]["action"])
        n += 1
        assert not s.over
    back = TableSession(GAME, 4, 0, seed=0, steps=s.steps)
    assert back.recent() == s.recent() and back.view() == s.view()


def test_bad_decisions_change_nothing():
    s = _blocked_session(1)
    before = raw_rows(s.engine.state)[0].tobytes()
    with pytest.raises(IllegalActionError, match="legal actions"):
        s.act(0)  # "done" is not an answer to an attack
    assert raw_rows(s.engine.state)[0].tobytes() == before
    s.engine.state["actor"][0] = 2  # as if a bot were deciding
    with pytest.raises(NotYourTurnError):
        s.act(s.legal_actions()[0])
    s.engine.state["actor"][0] = 0
    while not s.over:
        s.act(s.choices()[0]["action"])
    with pytest.raises(GameOverError):
        s.act(0)
    with pytest.raises(SetupError, match="allowed: an integer from 2 to 6"):
        TableSession(GAME, 7, 0)
    with pytest.raises(SetupError, match="unknown opponent 'greedy'; allowed: random, rm-bandit"):
        TableSession(GAME, 4, 0, ["greedy"])


def test_terminal_plays_a_whole_game_with_block_decisions(tmp_path):
    """RM-5.7, RM-8.4: the terminal game stops at the person's block decisions, under the
    BLOCK? prompt naming the attacker, refuses bad answers, shows the person's own hand
    only, says who decides what in words, ends with the standings by Runes, and saves a
    record that replays."""
    import io

    from rich.console import Console

    buf = io.StringIO()
    con = Console(file=buf, width=100)
    answers = iter(["x", "0"] + ["1"] * 10_000)  # two bad answers first, then the first choice

    def ask(prompt):
        con.print(prompt)
        return next(answers)

    s = play_terminal(GAME, 4, 0, seed=0, input_fn=ask, console=con, save=tmp_path / "g.jsonl")
    lines = buf.getvalue().splitlines()
    text = "\n".join(lines)
    assert s.over and "GAME OVER after" in text and "Standings" in text and (tmp_path / "g.jsonl").is_file()
    assert "x is not a choice here" in text and "0 is not a choice here" in text
    asks = [i for i, ln in enumerate(lines) if ln.startswith("Choose 1-")]
    assert asks and all(re.fullmatch(r"Choose 1-\d+: ", lines[i]) for i in asks)  # one prompt for every game
    assert "Choose 1-1: " not in lines  # a decision with one option is not asked
    banners = [i for i, ln in enumerate(lines) if ln.startswith("BLOCK?")]
    assert banners, "the person was never asked to block"
    for i in banners:  # the question, then its choices, the last one letting the attack through
        k = next(j for j in range(i, len(lines)) if lines[j].startswith("Choose 1-"))
        assert "let the attack through" in "\n".join(lines[i:k]).lower()
    assert "Your hand:" in text and "P0 (you)" in text and "; you decide " in text
    assert "Number 1: Number" not in text and "(your only option)" in text
    assert not re.search(r"\b1 Runes\b", text) and "choose_card" not in text and "decides:" not in text
    assert "scores [" not in text
    standings = text.split("Standings", 1)[1]
    assert re.search(r"1st.*\d+ Runes?: won", standings)
    assert max(len(ln) for ln in lines if not ln.startswith("Saved the game record")) <= 100  # the path stays whole
    assert ripmarket_env.replay(tmp_path / "g.jsonl").terminated[0]


def test_cli_play_rune_market():
    r = CliRunner().invoke(app, ["play", "--game", GAME, "--seed", "3"], input="1\n" * 5000)
    assert r.exit_code == 0, r.output[-2000:]
    assert "BLOCK?" in r.output and "GAME OVER" in r.output and "Standings" in r.output
    r = CliRunner().invoke(app, ["play", "--game", GAME, "--players", "7"])
    assert r.exit_code == 2 and "--players" in r.output and "2 to 6" in r.output
    r = CliRunner().invoke(app, ["play", "--game", GAME, "--opponents", "greedy"])
    assert r.exit_code == 2 and "rm-banker" in r.output
