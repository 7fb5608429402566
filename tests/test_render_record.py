"""Text and image renderers, game records, replays and the `ripmarket replay` command."""

from __future__ import annotations

import json

import numpy as np
import pytest

from ripmarket_env.games.ripmarket import Engine, RulesConfig
from ripmarket_env import replay
from ripmarket_env.envs.record import FORMAT, VERSION, RecordError, Recorder, read_record
from ripmarket_env.games.ripmarket.render import (
    card_label,
    describe_action,
    render_rgb,
    render_text,
    shadow_label,
)


def random_game(n: int, seed: int, steps: int | None = None, rng_seed: int = 0, **rules) -> Recorder:
    rec = Recorder.new(RulesConfig(num_players=n, **rules), seed)
    rng = np.random.default_rng(rng_seed)
    while not rec.done and (steps is None or rec.num_steps < steps):
        legal = rec.engine.legal_actions(0)
        rec.step(legal[rng.integers(len(legal))])
    return rec


def find_state(n: int, predicate, seeds=range(40)) -> Engine:
    """Play random games until ``predicate(engine)`` holds; return that engine."""
    for seed in seeds:
        eng = Engine(RulesConfig(num_players=n), batch_size=1)
        eng.reset([seed])
        rng = np.random.default_rng(seed)
        while not eng.terminated[0]:
            if predicate(eng):
                return eng
            legal = eng.legal_actions(0)
            eng.step(np.array([legal[rng.integers(len(legal))]]))
    raise AssertionError("no random game reached the wanted state")


# ------------------------------------------------------------------ render_text
def seat_row(text: str, seat: int) -> str:
    return next(line for line in text.splitlines() if f"  player_{seat}" in line and "/" in line)


def test_text_shows_the_table():
    eng = Engine(RulesConfig(num_players=4), batch_size=1)
    eng.reset([3])
    text = render_text(eng)
    r = eng.state[0]
    assert "R.I.P. Market · 4 players · round 1 · rule: none" in text
    for k in range(3):
        d = int(r["market"][k])
        assert f"[{k}] {card_label(eng.cards, d)}" in text
    assert f"Living Deck {int(r['deck_n'])}" in text
    actor = int(r["actor"])
    assert f"Next: player_{actor} (seat {actor}) must acquire" in text
    fp = int(r["first_player"])
    assert seat_row(text, fp).lstrip().startswith("*")
    for q in range(4):
        assert "2/2" in seat_row(text, q) and "living" in seat_row(text, q)


def test_text_hides_hands_unless_viewer_or_god():
    eng = Engine(RulesConfig(num_players=3), batch_size=1)
    eng.reset([8])
    public = render_text(eng)
    assert "Your hand" not in public and "Hands (god view)" not in public
    mine = render_text(eng, viewer=1)
    assert "Your hand (player_1):" in mine and "Hands (god view)" not in mine
    hand = eng.state[0]["hand"][1]
    for d in np.flatnonzero(hand):
        assert card_label(eng.cards, d) in mine.split("Your hand (player_1):")[1]
    god = render_text(eng, god=True)
    for q in range(3):
        assert f"  player_{q}: " in god
    with pytest.raises(ValueError):
        render_text(eng, viewer=3)


def test_face_down_cards_are_hidden_from_other_seats():
    eng = find_state(4, lambda e: bool((e.state[0]["face_down"][:4]).any()))
    q = int(np.flatnonzero(eng.state[0]["face_down"][:4])[0])
    other = (q + 1) % 4
    name = card_label(eng.cards, eng.state[0]["played"][q])
    assert "face-down" in seat_row(render_text(eng), q)
    assert f"face-down: {name}" not in seat_row(render_text(eng), q)
    assert f"face-down: {name}" not in seat_row(render_text(eng, viewer=other), q)
    assert f"face-down: {name}" in seat_row(render_text(eng, viewer=q), q)
    assert f"face-down: {name}" in seat_row(render_text(eng, god=True), q)


def test_ghosts_and_attached_shadow_cards_are_shown():
    eng = find_state(5, lambda e: int(e.state[0]["attached_n"][:5].max()) > 0)
    r = eng.state[0]
    q = int(np.argmax(r["attached_n"][:5]))
    text = render_text(eng)
    assert shadow_label(eng.cards, r["attached"][q, 0]) in seat_row(text, q)
    ghosts = [g for g in range(5) if not r["alive"][g]]
    assert ghosts
    for g in ghosts:
        assert "GHOST" in seat_row(text, g)


def test_game_over_text_names_winners_and_rewards():
    rec = random_game(3, seed=4)
    text = render_text(rec.engine)
    winners = [q for q in range(3) if rec.engine.state[0]["winners"][q]]
    assert "Game over: winner(s) " + ", ".join(f"player_{q}" for q in winners) in text
    assert "Next: nobody" in text


def test_describe_action_names_every_kind():
    eng = Engine(RulesConfig(num_players=4), batch_size=1)
    eng.reset([1])
    seen = set()
    rng = np.random.default_rng(0)
    for seed in range(6):
        eng.reset([seed])
        while not eng.terminated[0]:
            legal = eng.legal_actions(0)
            for a in legal:
                kind, _ = eng.actions.decode(a)
                text = describe_action(eng, a)
                assert text.startswith(f"player_{int(eng.state[0]['actor'])} ")
                seen.add(kind)
                if kind == "card" and eng.phase()[0] == "play" and eng.cards.living_face_down[_]:
                    assert describe_action(eng, a, public=True).endswith("plays a card face-down")
            eng.step(np.array([legal[rng.integers(len(legal))]]))
    assert {"acquire_deck", "acquire_market", "card", "target", "pass", "shadow"} <= seen


# ------------------------------------------------------------------ render_rgb
def test_rgb_picture():
    eng = find_state(6, lambda e: not e.state[0]["alive"][:6].all() and (e.state[0]["played"][:6] >= 0).any())
    img = render_rgb(eng)
    assert img.dtype == np.uint8 and img.ndim == 3 and img.shape[2] == 3
    assert img.shape[0] > 200 and img.shape[1] > 200
    assert img.std() > 10  # not a blank canvas
    assert not np.array_equal(img, render_rgb(eng, viewer=0))  # the viewer's hand is added
    before = eng.state.tobytes()
    render_rgb(eng, god=True)
    assert eng.state.tobytes() == before


# ------------------------------------------------------------------ records
def test_record_lines(tmp_path):
    rec = random_game(4, seed=12)
    path = rec.save(tmp_path / "g.jsonl")
    lines = [obj for _, obj in read_record(path)]
    head = lines[0]
    assert head["format"] == FORMAT and head["version"] == VERSION
    assert head["rules"] == RulesConfig(num_players=4).to_dict()
    assert head["cards_digest"] == rec.engine.cards.digest
    assert head["seed"] == 12 and head["players"] == 4
    assert "package_version" in head
    steps = [x for x in lines if "step" in x]
    assert [x["step"] for x in steps] == list(range(len(steps)))
    assert all(set(x) == {"step", "seat", "action", "desc"} for x in steps)
    rounds = [x for x in lines if "round" in x]
    assert [x["round"] for x in rounds] == list(range(1, len(rounds) + 1))
    for x in rounds:
        assert set(x) >= {"scores", "damage", "hp", "rule", "first_player", "cards", "targets", "haunted_by",
                          "died", "log"}
        assert len(x["scores"]) == len(x["damage"]) == len(x["hp"]) == len(x["cards"]) == 4
        # every competing seat had a card on the table; the round's log tells the scores
        assert all(x["cards"][q] is not None for q in range(4) if x["scores"][q] is not None)
        assert sum(1 for t in x["log"] if " scores " in t) == sum(s is not None for s in x["scores"])
    assert rounds[-1]["hp"] == [int(h) for h in rec.engine.state[0]["hp"][:4]]
    assert lines[-1] == {"end": {"lines": len(lines) - 1, "sha256": lines[-1]["end"]["sha256"]}}
    result = lines[-2]["result"]
    assert result["winners"] == [q for q in range(4) if rec.engine.state[0]["winners"][q]]
    assert sum(result["rewards"]) == pytest.approx(0.0, abs=1e-5)


@pytest.mark.parametrize("n,rules", [(2, {}), (5, {}), (9, {}), (2, {"epilogue": True}),
                                     (4, {"max_rounds": 2}), (6, {"reward_mode": "placement"})])
def test_replay_round_trip(tmp_path, n, rules):
    rec = random_game(n, seed=n + 40, **rules)
    path = rec.save(tmp_path / "g.jsonl")
    seen = []
    eng = replay(path, on_line=lambda k, obj, e: seen.append(k))
    assert seen == list(range(1, len(rec.lines) + 1))
    assert eng.state.tobytes() == rec.engine.state.tobytes()
    if rules.get("epilogue"):
        assert rec.lines[-2].get("epilogue") is True
    if rules.get("max_rounds") == 2:
        assert [x["round"] for x in rec.lines if "round" in x] == [1, 2]


def test_replay_of_an_unfinished_game(tmp_path):
    rec = random_game(3, seed=5, steps=10)
    eng = replay(rec.save(tmp_path / "part.jsonl"))
    assert not eng.terminated[0] and int(eng.state[0]["steps"]) == 10


def test_recorder_rejects_illegal_actions_and_started_games():
    rec = Recorder.new(RulesConfig(num_players=3), 1)
    with pytest.raises(Exception, match="illegal action"):
        rec.step(-1)
    assert rec.num_steps == 0 and len(rec.lines) == 1
    eng = Engine(RulesConfig(num_players=3), batch_size=1)
    with pytest.raises(ValueError, match="no game"):
        Recorder(eng)
    eng.reset([2])
    eng.step(np.array([eng.legal_actions(0)[0]]))
    with pytest.raises(ValueError, match="already started"):
        Recorder(eng)


def _tamper(tmp_path, edit) -> tuple:
    """The record of a game with ``edit`` applied to its lines; the end marker stays last
    (unchanged, so the digest no longer matches: the replay must name the line first)."""
    rec = random_game(4, seed=21)
    lines = rec.dumps().splitlines()
    end = lines.pop()
    edit(lines)
    path = tmp_path / "t.jsonl"
    path.write_text("\n".join(lines + [end]) + "\n", encoding="utf-8")
    return path, rec


def _set(lines, i, **changes):
    obj = json.loads(lines[i])
    obj.update(changes)
    lines[i] = json.dumps(obj)


def _index(lines, pred) -> int:
    return next(i for i, line in enumerate(lines) if pred(json.loads(line)))


@pytest.mark.parametrize("edit,message", [
    (lambda L: _set(L, 0, format="other"), "line 1 .*unknown format"),
    (lambda L: _set(L, 0, version=99), "line 1 .*unsupported record version 99"),
    (lambda L: _set(L, 0, cards_digest="0" * 64), "line 1 .*different card database"),
    (lambda L: _set(L, 0, rules={"num_players": 40}), "line 1 .*bad rules"),
    (lambda L: _set(L, 0, players=5), "line 1 .*disagrees"),
    (lambda L: L.__setitem__(3, "{not json"), "line 4 is not valid JSON"),
    (lambda L: L.__setitem__(3, "[1, 2]"), "line 4 must be a JSON object"),
    (lambda L: L.__setitem__(3, '{"hello": 1}'), "line 4: not a record line"),
    (lambda L: _set(L, 2, step=7), "line 3: step 7 out of order"),
    (lambda L: _set(L, 2, seat=(json.loads(L[2])["seat"] + 1) % 4), "line 3: step 1 is recorded for seat"),
    (lambda L: _set(L, 2, action=9999), "line 3: illegal action 9999"),
    (lambda L: _set(L, 2, desc="something else"), "line 3: step 1 differs: desc"),
])
def test_replay_errors_name_the_line(tmp_path, edit, message):
    path, _ = _tamper(tmp_path, edit)
    with pytest.raises(RecordError, match=message):
        replay(path)


def test_replay_detects_changed_round_summaries_and_results(tmp_path):
    def scores(L):
        i = _index(L, lambda o: "round" in o)
        o = json.loads(L[i])
        o["damage"] = [d + 1 for d in o["damage"]]
        L[i] = json.dumps(o)

    path, _ = _tamper(tmp_path, scores)
    with pytest.raises(RecordError, match=r"round 1 does not match the replay: damage"):
        replay(path)

    def result(L):
        o = json.loads(L[-1])
        o["result"]["winners"] = [0, 1, 2, 3]
        L[-1] = json.dumps(o)

    path, _ = _tamper(tmp_path, result)
    with pytest.raises(RecordError, match="the result line does not match"):
        replay(path)

    def cards(L):
        i = _index(L, lambda o: "round" in o)
        o = json.loads(L[i])
        o["log"] = o["log"][:-1]
        L[i] = json.dumps(o)

    path, _ = _tamper(tmp_path, cards)
    with pytest.raises(RecordError, match=r"round 1 does not match the replay: log"):
        replay(path)

    path, _ = _tamper(tmp_path, lambda L: L.pop())
    with pytest.raises(RecordError, match="ends early: the result line is missing"):
        replay(path)

    path, _ = _tamper(tmp_path, lambda L: L.pop(_index(L, lambda o: "round" in o)))
    with pytest.raises(RecordError, match="expected the summary of round 1"):
        replay(path)

    path, _ = _tamper(tmp_path, lambda L: L.insert(3, json.dumps({"round": 1})))
    with pytest.raises(RecordError, match="a summary of round 1 is recorded here, but the replayed game did not resolve"):
        replay(path)


def test_truncated_records_are_refused(tmp_path):
    """A record cut at any line boundary, a header alone or a line cut in half is
    "truncated"; a changed byte, a changed count or a line after the marker is refused."""
    rec = random_game(4, seed=21)
    text = rec.dumps()
    lines = text.splitlines(keepends=True)
    path = tmp_path / "cut.jsonl"
    for k in range(1, len(lines)):  # every cut at a line boundary, the header alone included
        path.write_text("".join(lines[:k]), encoding="utf-8")
        with pytest.raises(RecordError, match="truncated"):
            replay(path)
    path.write_text(text[: len(text) - 7], encoding="utf-8")  # the end marker cut in half
    with pytest.raises(RecordError, match="truncated: the last line .* is cut off"):
        replay(path)
    body = "".join(lines[:-1])
    end = json.loads(lines[-1])
    end["end"]["sha256"] = "0" * 64
    path.write_text(body + json.dumps(end) + "\n", encoding="utf-8")
    with pytest.raises(RecordError, match="digest differs"):
        replay(path)
    end = json.loads(lines[-1])
    end["end"]["lines"] += 2
    path.write_text(body + json.dumps(end) + "\n", encoding="utf-8")
    with pytest.raises(RecordError, match="truncated: some lines are missing"):
        replay(path)
    path.write_text(text + lines[1], encoding="utf-8")
    with pytest.raises(RecordError, match="after the end marker"):
        replay(path)
    path.write_text(text, encoding="utf-8")
    assert replay(path).terminated[0]


def test_version_2_records_replay_with_a_note(tmp_path):
    rec = random_game(4, seed=21)
    lines = rec.dumps().splitlines()[:-1]  # version 2: the same lines, no end marker
    head = json.loads(lines[0])
    head["version"] = 2
    lines[0] = json.dumps(head)
    path = tmp_path / "v2.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    notes = []
    eng = replay(path, notes=notes)
    assert eng.state.tobytes() == rec.engine.state.tobytes()
    assert len(notes) == 1 and "version 2" in notes[0] and "end marker" in notes[0]


def test_save_is_atomic_and_can_refuse_to_overwrite(tmp_path, monkeypatch):
    rec = random_game(3, seed=5, steps=10)
    path = tmp_path / "g.jsonl"
    path.write_text("precious\n")
    with pytest.raises(FileExistsError):
        rec.save(path, overwrite=False)
    assert path.read_text() == "precious\n"
    # a path that is not a file is never replaced by one (a device, a named pipe, a folder)
    import os
    import stat

    other = tmp_path / "other"
    (other / "dir").mkdir(parents=True)
    os.mkfifo(other / "pipe")
    for target, why in (("/dev/full", "is a device"), (other / "pipe", "is a named pipe"), (other / "dir", "is a folder")):
        with pytest.raises(ValueError, match=f"cannot save a record to .*{why}"):
            rec.save(target)
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode) and stat.S_ISFIFO(os.stat(other / "pipe").st_mode)
    assert sorted(p.name for p in other.iterdir()) == ["dir", "pipe"]  # no temporary file left
    (other / "pipe").unlink()
    (other / "dir").rmdir()
    other.rmdir()
    # a failure while writing leaves the old file whole and no temporary file behind
    import ripmarket_env.envs.record as R

    def boom(*a, **k):
        raise OSError("disk full")

    monkeypatch.setattr(R.os, "fsync", boom)
    with pytest.raises(OSError, match="disk full"):
        rec.save(path)
    assert path.read_text() == "precious\n"
    assert [p.name for p in tmp_path.iterdir()] == ["g.jsonl"]
    monkeypatch.undo()
    rec.save(path)
    assert not replay(path).terminated[0]


def test_replay_missing_file(tmp_path):
    with pytest.raises(RecordError, match="cannot read record"):
        replay(tmp_path / "nope.jsonl")
    (tmp_path / "empty.jsonl").write_text("")
    with pytest.raises(RecordError, match="empty"):
        replay(tmp_path / "empty.jsonl")


# ------------------------------------------------------------------ the replay command
def test_replay_command(tmp_path):
    from typer.testing import CliRunner

    from ripmarket_env.app.cli import app

    rec = random_game(4, seed=33)
    path = rec.save(tmp_path / "g.jsonl")
    runner = CliRunner()
    res = runner.invoke(app, ["replay", str(path)])
    assert res.exit_code == 0, res.output
    assert "Round 1" in res.output and "Game over" in res.output and "record verified" in res.output
    assert "Shadow:" not in res.output
    fd = [x for x in rec.lines if "step" in x and x["desc"].endswith("face-down")]
    if fd:
        assert fd[0]["desc"] not in res.output  # the card stays hidden without --god
    res = runner.invoke(app, ["replay", str(path), "--god"])
    assert res.exit_code == 0, res.output
    assert "Shadow:" in res.output
    if fd:
        assert fd[0]["desc"] in res.output
    bad = tmp_path / "bad.jsonl"
    bad.write_text(path.read_text().replace(f'"version": {VERSION}', '"version": 7'))
    res = runner.invoke(app, ["replay", str(bad)])
    assert res.exit_code == 1
    assert "unsupported record version 7" in res.output
    cut = tmp_path / "cut.jsonl"
    cut.write_text("".join(path.read_text().splitlines(keepends=True)[:-1]))  # the end marker cut off
    res = runner.invoke(app, ["replay", str(cut)])
    assert res.exit_code == 1 and "truncated" in res.output and "record verified" not in res.output
    cut.write_text(path.read_text().splitlines(keepends=True)[0])  # the header alone
    res = runner.invoke(app, ["replay", str(cut)])
    assert res.exit_code == 1 and "truncated" in res.output and "only its header" in res.output


def test_play_save_never_overwrites_without_force(tmp_path):
    from typer.testing import CliRunner

    from ripmarket_env.app.cli import app

    path = tmp_path / "mine.jsonl"
    path.write_text("an earlier game\n")
    runner = CliRunner()
    args = ["play", "--players", "2", "--opponents", "random", "--seed", "3", "--save", str(path)]
    res = runner.invoke(app, args, input="q\n")
    assert res.exit_code == 2 and "exists" in res.output and "--force" in res.output
    assert path.read_text() == "an earlier game\n"
    res = runner.invoke(app, args + ["--force"], input="q\n")
    assert res.exit_code == 0, res.output
    assert not replay(path).terminated[0]  # the stopped game, complete as saved


def test_victim_prompt_names_the_shadow_card_only_to_its_ghost():
    """R-12.3: while a Ghost chooses the victim, the Shadow card is still in its Shadow
    hand: the prompt names it to that Ghost and the god view, "a Shadow card" to others."""
    from ripmarket_env.games.ripmarket.render import phase_text
    from ripmarket_env.games.ripmarket.state import PHASE_NAMES

    eng = Engine(RulesConfig(num_players=6), batch_size=16)
    eng.reset(list(range(16)))
    rng = np.random.default_rng(0)
    victim = PHASE_NAMES.index("choose_victim")
    while not eng.terminated.all():
        hits = np.flatnonzero((eng.state["phase"] == victim) & ~eng.terminated)
        if hits.size:
            break
        m = eng.legal_mask()
        eng.step([int(rng.choice(np.flatnonzero(m[g]))) if not eng.terminated[g] else -1 for g in range(16)])
    assert hits.size, "no Ghost chose a victim in 16 random games"
    g = int(hits[0])
    ghost = int(eng.state["actor"][g])
    other = (ghost + 1) % 6
    own, god, public, seen = (phase_text(eng, g, viewer=ghost), phase_text(eng, g, god=True),
                              phase_text(eng, g), phase_text(eng, g, viewer=other))
    assert own == god and "a Shadow card" not in own
    assert public == seen == "choose the victim of a Shadow card"
    assert seen not in render_text(eng, g, viewer=ghost) and seen in render_text(eng, g, viewer=other)
