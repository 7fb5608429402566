"""`ripmarket play`: a whole game in a pseudo-terminal, bad input included; the session
under it (choices for every decision, Ghost turns, the log, records that replay)."""

from __future__ import annotations

import os
import random
import re
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ripmarket_env.app.cli import app
from ripmarket_env.app.session import SetupError, TableSession, assign_opponents, check_setup
from ripmarket_env import replay

ROOT = Path(__file__).resolve().parents[1]
PROMPT = re.compile(r"Choose 1-(\d+): $")
BAD_INPUTS = ["", "abc", "0", "{n_plus_1}", "-1", "1.5", "  ", "999999"]


class Pty:
    """A child process on a pseudo-terminal: read until a pattern, write lines."""

    def __init__(self, argv: list[str], cwd: Path):
        self.master, slave = os.openpty()
        env = dict(os.environ, PYTHONUNBUFFERED="1", COLUMNS="120", TERM="dumb")
        self.proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, cwd=cwd, env=env,
                                     close_fds=True, start_new_session=True)
        os.close(slave)
        self.out = ""  # since the last line sent
        self.transcript = ""  # everything

    def read_until(self, patterns: list[re.Pattern], deadline: float) -> re.Match | None:
        """Read until the output ends with one of ``patterns`` or the process exits."""
        while True:
            for p in patterns:
                m = p.search(self.out)
                if m:
                    return m
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"timed out; last output:\n{self.out[-3000:]}")
            ready, _, _ = select.select([self.master], [], [], min(left, 1.0))
            if ready:
                try:
                    chunk = os.read(self.master, 65536)
                except OSError:  # EIO: the child closed the terminal
                    chunk = b""
                if not chunk:
                    return None
                text = chunk.decode("utf-8", "replace").replace("\r\n", "\n")
                self.out += text
                self.transcript += text

    def send(self, line: str) -> None:
        self.out = ""
        os.write(self.master, (line + "\n").encode())

    def close(self) -> int:
        try:
            rc = self.proc.wait(timeout=60)
        finally:
            os.close(self.master)
        return rc


def choice_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if re.match(r"^  \d+\) ", line)]


def test_terminal_game_with_bad_input(tmp_path):
    """A complete 3-player game through a pty: bad answers are re-asked, nothing is lost.

    The valid answer is always 1 (the first choice: the deck, the lowest card), which with
    this seed loses HP fast, so the game also asks its Ghost decisions.
    """
    record = tmp_path / "game.jsonl"
    argv = [sys.executable, "-m", "ripmarket_env.app.cli", "play", "--players", "3", "--seat", "1",
            "--opponents", "greedy,survivor", "--seed", "13", "--save", str(record)]
    term = Pty(argv, ROOT)
    deadline = time.monotonic() + 800
    decisions = bad = 0
    saw_table = saw_hand_text = False
    try:
        m = term.read_until([PROMPT], deadline)
        while m is not None:
            n = int(m.group(1))
            screen = term.out
            listed = choice_lines(screen)[-n:]
            assert len(listed) == n, screen[-2000:]
            saw_table |= "player_1 (you)" in screen and "Market: [0]" in screen
            saw_hand_text |= "Your hand:" in screen or "Your Shadow hand:" in screen
            if decisions % 3 == 1:  # a bad answer first, then check that it was re-asked
                answer = BAD_INPUTS[bad % len(BAD_INPUTS)].replace("{n_plus_1}", str(n + 1))
                bad += 1
                term.send(answer)
                m = term.read_until([PROMPT], deadline)
                assert m is not None, "the game ended after a bad answer"
                again = term.out
                assert "is not a choice here. Enter a number from 1 to" in again, again
                assert int(m.group(1)) == n
                assert choice_lines(again)[-n:] == listed, "the choices changed after a bad answer"
            term.send("1")
            decisions += 1
            assert decisions < 400, "the game did not end"
            m = term.read_until([PROMPT, re.compile(r"Saved the game record")], deadline)
            if m is not None and "Saved" in m.group(0):
                break
        term.read_until([re.compile(r"ripmarket replay \S+\n")], deadline)
        final = term.out
    finally:
        rc = term.close()
    assert rc == 0, final[-2000:]
    assert "GAME OVER after" in final, final[-2000:]
    assert re.search(r"Winner\(s\): player_\d", final)
    log = term.transcript
    assert "Round 1 resolves" in log and "[round 1] player_" in log  # the round and its log
    assert "You are a Ghost. Your decision" in log, "expected Ghost decisions with this seed and play"
    assert decisions >= 3 and bad >= 1
    assert saw_table and saw_hand_text
    eng = replay(record)  # the saved record re-plays and verifies
    assert bool(eng.terminated[0])


def test_replay_command_reads_a_saved_game(tmp_path):
    s = TableSession("ripmarket", 3, 0, ["random"], seed=4)
    rng = random.Random(1)
    while not s.over:
        s.act(rng.choice(s.choices())["action"])
    path = s.save(tmp_path / "g.jsonl")
    result = CliRunner().invoke(app, ["replay", str(path)])
    assert result.exit_code == 0, result.output
    assert "record verified" in result.output


@pytest.mark.parametrize(
    "args, message",
    [
        (["--opponents", "greedy,bogus"], "--opponents: unknown opponent 'bogus'; allowed: "),
        (["--cards", "first-edition", "--opponents", "greedy,ppo-6p"],
         "--opponents: bot 'ppo-6p' cannot play these cards: agents/checkpoints/ppo-6p.zip was trained on the second "
         "edition's cards"),
        (["--players", "3", "--opponents", "greedy,greedy,greedy"], "3 opponents given for 2 other seat(s)"),
        (["--players", "3", "--seat", "3"], "--seat: seat=3 is not allowed; allowed with 3 players: 0 to 2"),
        (["--players", "11"], "--players: players=11 is not allowed; allowed: an integer from 2 to 10"),
        (["--opponents", ","], "no opponents given"),
        (["--seed", "-1"], "--seed -1 is not allowed"),
    ],
)
def test_play_rejects_bad_settings(args, message):
    result = CliRunner().invoke(app, ["play", *args])
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert "greedy" in result.output or "seat" in result.output or "players" in result.output or "seed" in result.output


def test_unknown_opponent_lists_the_registry():
    """The allowed list is the registry's bots that play the cards in play: every one on
    the packaged cards; with --cards first-edition, not the trained bots (second edition)."""
    import agents

    result = CliRunner().invoke(app, ["play", "--opponents", "nobody"], env={"COLUMNS": "400"})
    assert result.exit_code == 2
    allowed = " ".join(result.output.split()).split("allowed: ")[1]
    assert all(name in allowed.split(", ") or name in allowed for name in agents.names())
    result = CliRunner().invoke(app, ["play", "--cards", "first-edition", "--opponents", "nobody"],
                                env={"COLUMNS": "400"})
    assert result.exit_code == 2
    allowed = " ".join(result.output.split()).split("allowed: ")[1].split(", ")
    assert "greedy" in allowed and "ppo-6p" not in allowed and "ppo" not in allowed


def test_opponents_are_cycled_over_the_other_seats():
    known = ["greedy", "survivor", "random"]
    assert assign_opponents(5, 2, ["greedy", "survivor"], known) == ["greedy", "survivor", "you", "greedy", "survivor"]
    assert assign_opponents(4, 0, ["random"], known) == ["you", "random", "random", "random"]
    with pytest.raises(SetupError, match="allowed: greedy, survivor, random"):
        assign_opponents(4, 0, ["nope"], known)


def test_every_decision_has_numbered_choices_ghost_turns_included():
    """The person is asked at every decision with two or more options (and a play from a
    hand of one design, R-12.1), as a Ghost too."""
    saw_ghost = False
    for seed in range(30):
        s = TableSession("ripmarket", 3, 0, ["greedy", "shark"], seed=seed)
        while not s.over:
            assert s.your_turn
            choices = s.choices()
            assert len(choices) >= 2  # a one-option decision is taken for the person
            assert [c["action"] for c in choices] == s.legal_actions()
            assert [c["number"] for c in choices] == list(range(1, len(choices) + 1)) and all(c["text"] for c in choices)
            if not bool(s.state["alive"][0]):
                saw_ghost = True
                assert s.phase in ("ghost", "choose_victim") and s.prompt().startswith("You are a Ghost. ")
                assert all(s.engine.actions.decode(c["action"])[0] in ("pass", "shadow", "target") for c in choices)
            # play badly on purpose (the lowest card), to die early and haunt as a Ghost
            s.act(choices[0]["action"])
        assert s.result() is not None
        if saw_ghost:
            break
    assert saw_ghost, "no Ghost decision was reached"


def test_round_log_and_summaries():
    """Every resolved round is told (its scores, in the story) and the record's round
    summaries agree with the session's events."""
    from ripmarket_env.games.ripmarket.story import resolutions

    s = TableSession("ripmarket", 4, 2, ["greedy", "trickster", "hoarder"], seed=9)
    rng = random.Random(2)
    while not s.over:
        s.act(rng.choice(s.choices())["action"])
    spans = resolutions(s.history)
    assert spans and s.moves[-1]["kind"] in ("game_over", "place")
    scores = []
    for start, end in spans:
        got = {e.seat: e.b for e in s.history[start:end] if e.kind == "score"}
        scores.append([got.get(q) for q in range(4)])
        told = [m for m in s.moves if m["kind"] == "scores" and m["turn"] == s.history[start].a]
        assert len(told) == (1 if got else 0)
    rounds = [line for line in s.recorder.lines if "round" in line and "scores" in line]
    assert rounds and [r["scores"] for r in rounds] == scores[: len(rounds)]


def test_terminal_lines_fit_100_columns_with_colour_and_named_bots():
    """On a wide colour terminal the game keeps to 100 columns, colours its text, names
    every seat's bot in the table, and shows each choice once (no action-table suffix)."""
    import io

    from rich.console import Console

    from ripmarket_env.app.play import TERMINAL_WIDTH, play_terminal

    buf = io.StringIO()
    con = Console(file=buf, width=160, force_terminal=True, color_system="truecolor")
    answers = iter(["nonsense"] + ["1"] * 3000)

    def answer(prompt):
        con.print(prompt)
        return next(answers)

    bots = ["greedy", "survivor", "trickster", "search", "hoarder", "shark", "random", "greedy", "survivor"]
    s = play_terminal("ripmarket", 10, 3, bots, seed=5, input_fn=answer, console=con)
    assert s.over
    raw = buf.getvalue()
    assert "\x1b[" in raw  # colour
    text = re.sub(r"\x1b\[[0-9;]*m", "", raw)
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= TERMINAL_WIDTH == 100
    assert not any("[take the" in line or "[play " in line for line in lines)
    for q, bot in enumerate(s.controllers):
        if bot != "you":
            assert f"player_{q} · {bot}" in text  # the seat table names the bot
    assert "player_3 (you)" in text
    assert "is not a choice here" in text
    assert "Standings" in text and "GAME OVER after" in text and "Rewards" not in text
    assert re.search(r"took \d damage: (lowest|highest|second-lowest) score", text)


def test_records_name_each_seats_controller_and_replay_shows_it(tmp_path):
    from ripmarket_env.envs.record import RecordError, read_record

    s = TableSession("ripmarket", 3, 1, ["greedy", "search"], seed=6)
    rng = random.Random(0)
    while not s.over:
        s.act(rng.choice(s.choices())["action"])
    path = s.save(tmp_path / "g.jsonl")
    head = read_record(path)[0][1]
    assert head["controllers"] == ["greedy", "person", "search"]
    out = CliRunner().invoke(app, ["replay", str(path)]).output
    assert "Seats: player_0 greedy, player_1 person, player_2 search" in out
    assert "player_1 (person)" in out and "record verified" in out
    bad = tmp_path / "bad.jsonl"
    lines = path.read_text().splitlines()
    import json

    h = json.loads(lines[0])
    h["controllers"] = ["greedy", "person"]
    bad.write_text("\n".join([json.dumps(h)] + lines[1:]) + "\n")
    with pytest.raises(RecordError, match="controllers must list one non-empty name per seat"):
        replay(bad)


def test_replay_god_tells_each_action_once(tmp_path):
    """--god prints each round's moves once, from its event log (forced ones included),
    not as a decision list and then again as events."""
    import json

    s = TableSession("ripmarket", 4, 0, ["greedy", "trickster", "hoarder"], seed=8)
    rng = random.Random(8)
    while not s.over:
        s.act(rng.choice(s.choices())["action"])
    path = s.save(tmp_path / "g.jsonl")
    god = CliRunner().invoke(app, ["replay", "--god", str(path)], terminal_width=200).output
    plain = CliRunner().invoke(app, ["replay", str(path)], terminal_width=200).output
    assert "record verified" in god and "record verified" in plain
    rounds = [json.loads(x) for x in path.read_text().splitlines() if '"log"' in x]
    plays = sum(1 for r in rounds for line in r["log"] if " plays " in line)
    assert sum(1 for line in god.splitlines() if " plays " in line) == plays
    step = re.compile(r"^\s+\d+\s{2}player_\d")
    assert not any(step.match(line) for line in god.splitlines())
    assert any(step.match(line) for line in plain.splitlines())
    # the HP lost column counts every HP loss: it sums to the HP the seats lost in the game
    lost = re.findall(r"│ player_\d \([a-z]+\)(?: \*)?\s+│[^│]*│[^│]*│\s+(\d+) │", plain)
    hp0 = s.rules.hp
    assert sum(map(int, lost)) == sum(hp0 - int(h) for h in s.state["hp"][:4])


def test_agents_list_marks_bots_of_other_cards(monkeypatch):
    """`ripmarket agents` shows every registered bot and says which cannot play the packaged
    cards, with the reason: none of the shipped ones (the first edition's ppo-6p stages are
    retired); a bot of other cards would be marked."""
    import agents
    import agents.policy

    result = CliRunner().invoke(app, ["agents"], env={"COLUMNS": "400"})
    assert result.exit_code == 0, result.output
    rows = {line.split("│")[1].strip(): line for line in result.output.splitlines() if line.count("│") >= 3}
    assert set(agents.names()) <= set(rows) and not any(n.startswith("ppo-6p-stage") for n in rows)
    assert "Cannot play" not in result.output
    monkeypatch.setattr(agents.policy, "card_conflict",
                        lambda name, cards=None: "trained on the first edition's cards" if name == "ppo-6p" else None)
    result = CliRunner().invoke(app, ["agents"], env={"COLUMNS": "400"})
    rows = {line.split("│")[1].strip(): line for line in result.output.splitlines() if line.count("│") >= 3}
    assert "Cannot play the packaged cards: trained on the first edition" in " ".join(rows["ppo-6p"].split())
    assert "Cannot play" not in rows["greedy"]


def test_default_opponent_is_the_bot_for_every_table(monkeypatch):
    """Without --opponents the terminal game seats ppo (2-10 players) at every other seat;
    with cards it was not trained on, the heuristics take its place."""
    import ripmarket_env.app.play as play_mod
    from ripmarket_env.app.session import default_opponents, game_spec

    seated = []

    def fake_play(game, players, seat, names, **kw):
        seated.append(check_setup(game, players, seat, names, kw["rules"], kw["refused"])[2])

    monkeypatch.setattr(play_mod, "play_terminal", fake_play)
    for players in (2, 5, 10):
        r = CliRunner().invoke(app, ["play", "--players", str(players), "--seed", "3"])
        assert r.exit_code == 0, r.output
        assert seated[-1] == ["you"] + ["ppo-lookahead"] * (players - 1)
    r = CliRunner().invoke(app, ["play", "--players", "4", "--seat", "2", "--cards", "first-edition"])
    assert r.exit_code == 0, r.output
    assert seated[-1] == ["greedy", "survivor", "you", "shark"]
    assert default_opponents(game_spec("ripmarket"), 6) == ["ppo-lookahead"] * 5


def test_the_terminal_session_tells_bots_the_cards_and_start_hp():
    """With a card file and a start HP, every heuristic bot of the terminal game's session
    plays those cards and reads its HP against that start (R-1.3)."""
    from ripmarket_env.app.session import TableSession
    from ripmarket_env.games.ripmarket.cards.loader import load_cards

    db = load_cards("first-edition")
    s = TableSession("ripmarket", 3, 0, ["greedy", "random"], seed=1, rules={"start_hp": 4},
                     engine_kwargs={"cards": db})
    assert s.bots[1].db is db and s.bots[1].start_hp == 4 and s.engine.cards is db
    assert s.table()["seats"][0]["counters"]["HP"] == "4/4"
