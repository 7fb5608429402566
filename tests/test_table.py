"""The table description (``GameSpec.describe_table``, ``ripmarket_env.core.table``): plain
JSON-able data for one viewer, from every game's ``table`` hook and from the generic
default for a game without one; it reveals nothing the viewer may not see (R-12.3, BM-7,
RM-8.4): scrambling what a seat may not see leaves its description unchanged."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from ripmarket_env.games import registry

GAMES = sorted(registry())
KEYS = {"game", "title", "players", "viewer", "turn", "turn_word", "over", "actor", "phase", "prompt", "seats", "extra",
        "table", "info", "hand", "choices", "standings", "end"}


def _positions(spec, seed, stops=(0, 3, 9, 25, 60, 140)):
    """One-game engines at several points of a random game, and the finished game."""
    eng = spec.make_engine(spec.make_rules(), 1)
    eng.reset([seed])
    rng = np.random.default_rng(seed)
    out, step = [], 0
    while not eng.terminated[0]:
        if step in stops:
            out.append(eng.clone())
        eng.step([int(rng.choice(eng.legal_actions(0)))])
        step += 1
    out.append(eng.clone())
    return out


def _toy(spec):
    """A game registered by nobody, without a table hook: the generic description."""
    return dataclasses.replace(spec, id="toy-" + spec.id, title="Toy", table=None)


@pytest.mark.parametrize("game", GAMES)
def test_every_seats_description_survives_scrambling_the_hidden_cards(game):
    """R-12.3, BM-7, RM-8.4: what seat v may not see, redrawn, changes nothing of v's description."""
    spec = registry()[game]
    if spec.engine_class.__module__.startswith("ripmarket_env.games."):
        assert spec.table is not None, "every shipped game describes its own table"
    rng = np.random.default_rng(1)
    changed = 0  # the scramble does redraw what others hold: another seat's description changes
    for seed in (2, 7):
        for eng in _positions(spec, seed):
            for v in range(eng.num_players):
                mine = spec.describe_table(eng, 0, v)
                for _ in range(2):
                    other = spec.scramble_hidden(eng, 0, v, rng)
                    assert spec.describe_table(other, 0, v) == mine, (game, seed, v)
                    w = (v + 1) % eng.num_players
                    changed += spec.describe_table(other, 0, w) != spec.describe_table(eng, 0, w)
    assert changed > 0


@pytest.mark.parametrize("game", GAMES)
def test_description_is_plain_data_with_every_key(game):
    spec = registry()[game]
    for base_spec in (spec, _toy(spec)):
        for eng in _positions(base_spec, 3, stops=(5,)):
            actor = int(eng.current_player()[0])
            for v in range(eng.num_players):
                d = base_spec.describe_table(eng, 0, v)
                assert set(d) == KEYS
                assert json.loads(json.dumps(d)) == d  # JSON-able as it is
                assert len(d["seats"]) == eng.num_players and sum(s["you"] for s in d["seats"]) == 1
                if not d["over"] and v == actor:  # the decider's choices are its legal actions, in words
                    assert [c["action"] for c in d["choices"]] == eng.legal_actions(0)
                    assert all(c["text"] for c in d["choices"]) and d["prompt"]
                else:
                    assert d["choices"] == []
            if d["over"]:
                rows = d["standings"]
                assert sorted(x["seat"] for x in rows) == list(range(eng.num_players))
                assert [x["place"] for x in rows] == sorted(x["place"] for x in rows)
                assert all(x["how"] for x in rows) and any(x["winner"] for x in rows) and d["end"]
                assert rows[0]["place"] == 1
            else:
                assert d["standings"] is None


def test_each_game_names_its_own_facts():
    """The hooks give the counters a person reads: HP (R.I.P. Market), points and side
    (Black Market), Runes (The Rune Market); the generic default has the render instead."""
    seen = {}
    for game in GAMES:
        spec = registry()[game]
        eng = _positions(spec, 4, stops=(6,))[0]
        seen[game] = spec.describe_table(eng, 0, 0)
        toy = _toy(spec).describe_table(eng, 0, 0)
        assert toy["info"] and toy["table"] == [] and all(s["counters"] == {} for s in toy["seats"])
    assert "HP" in seen["ripmarket"]["seats"][0]["counters"]
    assert seen["ripmarket"]["table"][0]["name"] == "Market"
    assert "points" in seen["black-market"]["seats"][0]["counters"]
    assert seen["black-market"]["seats"][1]["flags"][0] == "side B"
    assert [c["slot"] for c in seen["black-market"]["table"][0]["cards"]] == [1, 2, 3, 4, 5, 6]
    assert "Runes" in seen["rune-market"]["seats"][0]["counters"]


@pytest.mark.parametrize("game", GAMES)
def test_the_story_tells_a_seat_no_hidden_event(game):
    """R-12.3, BM-7.3, RM-8.4: the terminal's story lines for a seat never carry the full
    text of an event that seat may not read (a card drawn by another, a face-down play, a
    stolen card between two others)."""
    from ripmarket_env.app.session import TableSession

    for seed in (1, 2):
        s = TableSession(game, seed=seed, opponents=["random"])
        while not s.over:
            s.act(s.choices()[-1]["action"])
        told = "\n".join(m["text"] for m in s.moves)
        hidden = {e.text_for("god") for e in s.history if e.text_for(0) != e.text_for("god")}
        hidden = {t for t in hidden if t not in {e.text_for(0) for e in s.history}}
        assert hidden, "the game hid nothing from seat 0"
        assert not [t for t in hidden if t in told]
