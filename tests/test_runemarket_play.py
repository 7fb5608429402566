"""Playing The Rune Market against the bots: the web page's session (``play_rune``) and the
terminal game of every game (``ripmarket play --game rune-market``, ``app.play`` over
``app.session.TableSession``): a whole game, a bot's attack on the person stopping at once
at the person's block decision (RM-5.7), bad input refused without changing the game, and
only the person's own hand on screen (RM-8.4)."""

from __future__ import annotations

import re

import numpy as np
import pytest
from typer.testing import CliRunner

import ripmarket_env
from ripmarket_env.app.cli import app
from ripmarket_env.app.play import play_terminal
from ripmarket_env.app.play_rune import (
    GameOverError,
    NotYourTurnError,
    RuneMarketSession,
    SetupError,
)
from ripmarket_env.core.engine import IllegalActionError, raw_rows


def _blocked_session(seed=0):
    s = RuneMarketSession(4, 0, seed=seed)
    rng = np.random.default_rng(seed)
    while not s.blocking:
        assert not s.over, "no bot attacked seat 0 in this game"
        s.act(s.choices()[rng.integers(len(s.choices()))].action)
    return s


def test_a_bots_attack_stops_at_the_persons_block_decision():
    """RM-5.7: during the bot's turn the acting seat becomes the person's, and the bots
    stop there: the prompt names the attacker and value, the choices block or not."""
    s = _blocked_session()
    st = s.state
    attacker = int(st["turn_player"])
    assert attacker != 0 and int(st["actor"]) == 0 and s.phase == "defend"
    assert s.recent()[-1].startswith(f"P{attacker} attacks P0")  # the attack is the last thing that happened
    p = s.prompt()
    assert p.startswith("BLOCK?") and f"P{attacker} (" in p and f"Number {int(st['pend_value'])}" in p
    texts = [c.text for c in s.choices()]
    assert texts[-1] == "let the attack through (do not block)"
    assert all(t.startswith("block: show your Number ") for t in texts[:-1])
    for t in texts[:-1]:
        assert int(t.rsplit(" ", 1)[1]) >= int(st["pend_value"])


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
        s.act(s.choices()[0].action)
    with pytest.raises(GameOverError):
        s.act(0)
    with pytest.raises(SetupError, match="allowed: 2 to 6"):
        RuneMarketSession(7, 0)
    with pytest.raises(SetupError, match="unknown bot 'greedy'"):
        RuneMarketSession(4, 0, ["greedy"])


def test_terminal_plays_a_whole_game_with_block_decisions(tmp_path):
    """RM-5.7, RM-8.4: the terminal game stops at the person's block decisions, under the
    BLOCK? prompt naming the attacker, refuses bad answers, shows the person's own hand
    only, ends with the standings, and saves a record that replays."""
    import io

    from rich.console import Console

    buf = io.StringIO()
    con = Console(file=buf, width=100)
    answers = iter(["x", "0"] + ["1"] * 10_000)  # two bad answers first, then the first choice

    def ask(prompt):
        con.print(prompt)
        return next(answers)

    s = play_terminal("rune-market", 4, 0, seed=0, input_fn=ask, console=con, save=tmp_path / "g.jsonl")
    lines = buf.getvalue().splitlines()
    text = "\n".join(lines)
    assert s.over and "GAME OVER after" in text and "Standings" in text and (tmp_path / "g.jsonl").is_file()
    assert "x is not a choice here" in text and "0 is not a choice here" in text
    asks = [i for i, ln in enumerate(lines) if ln.startswith("Choose 1-")]
    assert asks and all(re.fullmatch(r"Choose 1-\d+: ", lines[i]) for i in asks)  # one prompt for every game
    banners = [i for i, ln in enumerate(lines) if ln.startswith("BLOCK?")]
    assert banners, "the person was never asked to block"
    for i in banners:  # the question, then its choices, the last one letting the attack through
        k = next(j for j in range(i, len(lines)) if lines[j].startswith("Choose 1-"))
        assert "let the attack through" in "\n".join(lines[i:k]).lower()
    assert "Your hand:" in text and "P0 (you)" in text
    assert "1 Runes" not in text and "choose_card" not in text and "decides:" not in text
    assert max(len(ln) for ln in lines if not ln.startswith("Saved the game record")) <= 100  # the path stays whole
    assert ripmarket_env.replay(tmp_path / "g.jsonl").terminated[0]


def test_cli_play_rune_market():
    r = CliRunner().invoke(app, ["play", "--game", "rune-market", "--seed", "3"], input="1\n" * 5000)
    assert r.exit_code == 0, r.output[-2000:]
    assert "BLOCK?" in r.output and "GAME OVER" in r.output and "Standings" in r.output
    r = CliRunner().invoke(app, ["play", "--game", "rune-market", "--players", "7"])
    assert r.exit_code == 2 and "--players" in r.output and "2 to 6" in r.output
    r = CliRunner().invoke(app, ["play", "--game", "rune-market", "--opponents", "greedy"])
    assert r.exit_code == 2 and "rm-banker" in r.output
