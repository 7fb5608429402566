"""The Rune Market's story (``games/runemarket/story.py``) as the play session tells it
(``TableSession``, the ``recent`` lines of the server's game views): the draws that end a
turn are told as the drawer's move even when the discard pile is reshuffled before the
first card is drawn (the reshuffle is the table's event, seat -1), in the viewer's grammar
("you draw ... and end the turn", "P2 (random) draws ... and ends the turn"), and the
drawn cards are named to the drawer only (RM-8.4)."""

from __future__ import annotations

import random

import pytest

from ripmarket_env.app.session import TableSession

VIEWER = 1
PLAYERS = 4


def finished(seed: int) -> TableSession:
    s = TableSession("rune-market", PLAYERS, VIEWER, ["random"], seed=seed)
    rng = random.Random(seed)
    while not s.over:
        s.act(rng.choice(s.choices())["action"])
    return s


def reshuffle_first_draws(history) -> list[tuple[int, list]]:
    """``(drawer, events)`` of every turn's draws that a reshuffle opens: the reshuffle,
    the drawer's draws and the end of the turn."""
    out = []
    for i, e in enumerate(history):
        if e.kind != "reshuffle" or (i and history[i - 1].kind in ("draw", "reshuffle")):
            continue
        j = i + 1
        while j < len(history) and history[j].kind in ("draw", "reshuffle"):
            j += 1
        if j < len(history) and history[j].kind == "end_turn" and j > i + 1:
            out.append((history[j].seat, list(history[i:j + 1])))
    return out


@pytest.fixture(scope="module")
def games():
    """Seeded games (in seed order, at most 60) until a reshuffle has opened the draws of
    the viewer's turn and of another seat's."""
    found, drawers = [], set()
    for seed in range(60):
        s = finished(seed)
        groups = reshuffle_first_draws(s.history)
        if groups:
            found.append((s, groups))
            drawers |= {d == VIEWER for d, _ in groups}
        if drawers == {True, False}:
            return found
    pytest.fail("no seed in 0-59 reshuffles before the draws of both the viewer's and another seat's turn")


def test_reshuffle_before_the_draws_names_the_drawer(games):
    """A reshuffle that comes before a turn's first draw: the session's story lines name
    the drawer (never "player -1"), in the viewer's grammar; every seat reads the drawer's
    move, and only the drawer reads which cards were drawn."""
    for s, groups in games:
        lines = [m for m in s.moves if "new draw pile" in m["text"]]
        assert lines and not any("player -1" in m["text"] or m["who"] == "the table" for m in lines), lines
        for m in lines:
            q = m["seat"]
            assert 0 <= q < PLAYERS and m["who"] == s.label(q), m
            if q == VIEWER:
                assert m["text"].startswith("you draw ") and " and end the turn holding " in m["text"], m
            else:
                assert m["text"].startswith(f"{s.label(q)} draws ") and " and ends the turn holding " in m["text"], m
        for drawer, evs in groups:
            drawn = [s.engine.cards.name(e.a) for e in evs if e.kind == "draw"]
            for viewer in range(PLAYERS):
                def label(q, viewer=viewer):
                    return "you" if q == viewer else f"player {q}"

                told = s.spec.tell(s.engine, evs, viewer, label)
                assert len(told) == 1, told
                line = told[0]
                text = line["text"]
                assert line["seat"] == drawer and "player -1" not in text, (s.seed, viewer, line)
                if viewer == drawer:
                    assert text.startswith("you draw ") and " and end the turn holding " in text, (s.seed, line)
                    assert all(name in text for name in drawn), (s.seed, drawn, line)
                else:
                    n = len(drawn)
                    assert text.startswith(f"player {drawer} draws {n} card{'s' * (n != 1)} and ends the turn "), \
                        (s.seed, viewer, line)
                    assert not any(name in text for name in drawn), (s.seed, viewer, drawn, line)


@pytest.mark.parametrize("seed", [3, 8])
def test_every_line_is_dated_by_the_turn_it_belongs_to(seed):
    """RM-8.4: the log's ``[turn N]`` is the game's turn a move belongs to: a turn's opening
    line says the same number ("you begin turn 2" under "[turn 2]"), and the draws that end
    a turn stay in that turn (the engine logs them under the next one)."""
    import re

    s = finished(seed)
    current = None
    for m in s.moves:
        if m["kind"] == "turn" or m["kind"] == "interest":
            current = int(re.search(r"begins? turn (\d+)", m["text"]).group(1))
            assert m["turn"] == current, m
        elif current is not None and m["kind"] != "end":
            assert m["turn"] == current, (current, m)  # the end of a turn included
    assert current is not None and current >= 2
