"""Why things happened, in words, as R.I.P. Market's page and terminal tell it through the
one session (``TableSession``): its story (``games/ripmarket/story.py``: every round's
damage with its reason, Deflection named, deaths in the viewer's grammar), its table
description (``games/ripmarket/table.py``: the rule card that set the rule, the latest
round's result, the choices' ``refs``, how each player finished) and the bots' difficulty
labels (``agents.game_agents(game).level``)."""

from __future__ import annotations

import random

import pytest

from ripmarket_env.app.session import TableSession
from ripmarket_env.games.ripmarket.story import resolutions, rule_text, why_lines

BOTS = ["trickster", "greedy", "hoarder"]


def finished(seed: int, rules: dict | None = None, seat: int = 0) -> TableSession:
    s = TableSession("ripmarket", 4, seat, BOTS, seed=seed, rules=rules)
    rng = random.Random(seed)
    while not s.over:
        s.act(rng.choice(s.choices())["action"])
    return s


@pytest.fixture(scope="module")
def games():
    """Seeded games, enough of them (in seed order, at most 40) to hold a Deflection, a
    direct hit and a death of seat 0, so that every kind of sentence is exercised."""
    out: dict[int, TableSession] = {}
    for seed in range(1, 41):
        out[seed] = finished(seed)
        events = [e for s in out.values() for e in s.history]
        kinds = {e.kind for e in events}
        if len(out) >= 5 and {"deflect", "hit"} <= kinds and any(e.kind == "death" and e.seat == 0 for e in events):
            break
    return out


def test_every_damage_has_a_reason_and_deflection_is_named(games):
    """R-8.2, R-8.3, R-8.5: every seat that took round damage is told why (lowest score,
    Low Tide's highest, The Cull, a Deflection passing it on), in the seat's own story."""
    seen_deflect = False
    for s in games.values():
        # the sentences that say why (the events' own lines, "takes 1 damage", come too)
        told = [m for m in s.moves if m["kind"] == "deflect" or m["kind"] == "damage" and " damage: " in m["text"]]
        for start, end in resolutions(s.history):
            n = s.history[start].a
            damaged = {e.seat for e in s.history[start:end] if e.kind == "damage" and e.a > 0}
            lines = [m for m in told if m["turn"] == n]
            assert damaged == {m["seat"] for m in lines if m["kind"] == "damage"}, (n, lines)
            for m in lines:
                if m["kind"] == "damage":
                    assert any(w in m["text"] for w in ("lowest score", "highest score", "Deflection",
                                                        "did not compete")), m
            if any(e.kind == "deflect" for e in s.history[start:end]):
                seen_deflect = True
                assert any(m["kind"] == "deflect" and "Deflection passed it to" in m["text"] for m in lines)
    assert seen_deflect


def test_a_direct_hit_says_who_hit_whom(games):
    """R-6.2: direct damage (Backstab and the like) is told right after the attack that
    dealt it, naming the attacker, the victim and the HP left."""
    s = next(g for g in games.values() if any(e.kind == "hit" for e in g.history))
    hits = 0
    for i, m in enumerate(s.moves):
        if m["kind"] == "hit" and "direct damage" in m["text"]:
            attack = next(x for x in reversed(s.moves[:i]) if x["kind"] == "attack")
            victim = "you" if m["seat"] == s.seat else f"player_{m['seat']}"
            assert f"attacks player_{m['seat']}" in attack["text"] or victim == "you", (attack, m)
            assert "HP" in m["text"]
            hits += 1
    assert hits


def test_a_death_reads_right_for_every_viewer(games):
    """The viewer's own death is told in the second person ("You died and are now a
    Ghost"), another seat's in the third; never "You died and is now a Ghost"."""
    s = next(g for g in games.values() if any(e.kind == "death" and e.seat == 0 for e in g.history))
    deaths = [m["text"] for m in s.moves if m["kind"] == "death" and "now a Ghost" in m["text"]]
    assert "You died and are now a Ghost" in deaths
    assert all(t == "You died and are now a Ghost" or t.endswith(") died and is now a Ghost") for t in deaths), deaths
    assert not any("you died and is" in t.lower() or "is now a Ghost" in t and t.startswith("You") for t in deaths)
    # the same resolution told to a seat that did not die names the dead by seat
    start, end = next((a, b) for a, b in resolutions(s.history)
                      if any(e.kind == "death" and e.seat == 0 for e in s.history[a:b]))
    other = why_lines(s.engine, s.history[start:end], lambda q: "you" if q == 1 else f"player_{q}")
    assert any(x["text"] == "player_0 died and is now a Ghost" for x in other)


def test_standings_say_how_each_player_finished(games):
    """R-11.2: the end screen's rows, best place first: the winners, the round each dead
    player died in and the damage that killed it, the HP a survivor kept; every bot with
    its difficulty label."""
    import agents

    profile = agents.game_agents("ripmarket")
    for s in games.values():
        res = s.result()
        rows = res["standings"]
        assert sorted(x["seat"] for x in rows) == [0, 1, 2, 3]
        assert [x["place"] for x in rows] == sorted(x["place"] for x in rows)
        for x in rows:
            q = x["seat"]
            assert x["winner"] == (q in res["winners"])
            died = int(s.engine.state[0]["death_round"][q])
            if bool(s.engine.state[0]["alive"][q]) or died < 0:
                assert x["how"].startswith("survived with ")
            else:
                assert x["how"].startswith(f"died in round {died + 1}")
                assert any(e.kind == "death" and e.seat == q and e.round == died + 1 for e in s.history)
            assert x["level"] == profile.level(s.controllers[q])
            assert x["level"] if q != s.seat else x["level"] == ""
        assert "reward" not in " ".join(str(v) for x in rows for v in x.values())


def test_bots_forced_moves_read_like_any_other(games):
    """R-12.1: whether another seat's decision had one option is its hidden knowledge: the
    story never says "(only choice)" about a bot."""
    assert any(e.forced and e.seat != s.seat for s in games.values() for e in s.history)
    for s in games.values():
        assert not [m for m in s.moves if m["seat"] != s.seat and "(only choice)" in m["text"]]


def test_the_rule_is_named_by_the_card_that_set_it():
    """Undercurrent sets The Cull, Aftershock sets Earthquake (cards.json): the table's rule
    card is named by the card that set it (R-7.4), in its info line and its ``extra``, and
    so is the rule of the latest resolved round (a face-down card's rule is set as it is
    revealed, at resolution)."""
    saw = set()
    for seed in range(1, 30):
        s = TableSession("ripmarket", 4, 0, BOTS, seed=seed)
        rng = random.Random(seed)
        while not s.over:
            t = s.table()
            for rule in (t["extra"]["rule"], (t["extra"]["last_round"] or {}).get("rule")):
                if rule and rule["name"] != "none" and rule["card"]:
                    assert rule["text"] == rule_text(rule["name"], rule["card"])
                    saw.add((rule["card"], rule["name"]))
            rule = t["extra"]["rule"]
            assert t["info"][0] == f"Rule: {rule['text']}"
            s.act(rng.choice(s.choices())["action"])
        if {"Undercurrent", "Aftershock"} <= {c for c, _ in saw}:
            break
    assert ("Undercurrent", "The Cull") in saw and ("Aftershock", "Earthquake") in saw
    assert rule_text("The Cull", "Undercurrent").startswith("Undercurrent: The Cull")
    assert rule_text("none").startswith("No rule change")


def test_choices_that_name_a_market_card_or_a_seat_carry_refs():
    """R-5.1, R-6: a choice to take a Market card or to name a slot or a seat refers to it
    (``refs``), so the page can show what it names; other choices carry none."""
    seen = set()
    for seed in range(1, 12):
        s = TableSession("ripmarket", 4, 0, BOTS, seed=seed)
        rng = random.Random(seed)
        while not s.over:
            t = s.table()
            market = {c["slot"] for c in t["table"][0]["cards"]}
            for c in t["choices"]:
                kind, arg = s.engine.actions.decode(c["action"])
                if kind in ("acquire_market", "market_slot"):
                    assert c["refs"] == [{"zone": "Market", "slot": arg}] and arg in market
                    assert f"Market slot {arg}" in c["text"]
                elif kind == "target":
                    (ref,) = c["refs"]
                    assert ref["zone"] == "seats" and f"player_{ref['slot']}" in c["text"] and ref["slot"] != 0
                else:
                    assert "refs" not in c
                seen.add(kind)
            s.act(rng.choice(s.choices())["action"])
        if {"acquire_market", "target"} <= seen:
            break
    assert {"acquire_market", "target"} <= seen


def test_every_bot_has_a_plain_difficulty():
    import agents

    profile = agents.game_agents("ripmarket")
    shipped = ["random", "greedy", "survivor", "shark", "hoarder", "trickster", "search", "ppo", "search-ppo",
               "ppo-lookahead", "ppo-6p", "greedy-bc", "trickster-bc"]  # docs/ZOO.md's zoo (second edition)
    for name in shipped:
        assert name in agents.names()
        assert profile.level(name) and profile.level(name) != "Unrated", name
    assert profile.level("somebody-new") == "Unrated" and profile.level("you") == ""
    assert profile.level("random").startswith("Beginner") and profile.level("search").startswith("Hard")
    assert set(profile.levels) <= set(agents.names())
