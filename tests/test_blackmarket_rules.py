"""Black Market rules tests: each names the rule IDs (BM-x.y) of
docs/games/black-market/RULES.md it checks."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from bm_scenario import D, act, legal, refresh, setup, table
from ripmarket_env.core.engine import IllegalActionError, raw_rows
from ripmarket_env.games.blackmarket import ConfigError, Engine, RulesConfig
from ripmarket_env.games.blackmarket import actions as A
from ripmarket_env.games.blackmarket.cards import CardDataError, default_cards, load, parse
from ripmarket_env.games.blackmarket.invariants import check_game

ROOT = Path(__file__).resolve().parents[1]
RULES = ROOT / "docs" / "games" / "black-market" / "RULES.md"


def obs_of(eng, viewer):
    return eng.observe([viewer])[0].copy()


def play_random(eng, seed=0, check=True, max_steps=100000):
    rng = np.random.default_rng(seed)
    n = 0
    while not eng.terminated[0] and n < max_steps:
        prev = eng.state[0].copy()
        eng.step([int(rng.choice(eng.legal_actions(0)))])
        n += 1
        if check:
            assert check_game(eng, 0, prev) == []
    return n


# ------------------------------------------------------------------ BM-1 table
@pytest.mark.parametrize("p", [1, 3, 5, 7, 8])
def test_bm_1_1_player_counts(p):
    """BM-1.1 / BM-9.1: only 2, 4 or 6 players."""
    with pytest.raises(ConfigError, match="num_players.*2, 4 or 6"):
        RulesConfig(num_players=p)
    for ok in (2, 4, 6):
        assert Engine(RulesConfig(num_players=ok)).num_players == ok


def test_bm_1_2_sides_and_turn_order():
    """BM-1.2: seat i on side i mod 2; turns go clockwise, so the sides alternate."""
    eng = table(6, seed=5)
    seats = []
    for _ in range(400):
        if eng.terminated[0]:
            break
        seats += [e.seat for e in eng.events(0) if e.kind == "turn"]
        eng.step([eng.legal_actions(0)[-1]])
    assert len(seats) > 10
    for a, b in zip(seats, seats[1:]):
        assert b == (a + 1) % 6 and b % 2 != a % 2
    # the map's "faces the viewer's side" flag agrees with seat parity
    obs = eng.observe([0])[0]
    lay = eng.obs_layout
    m = obs[lay.slice("map")].reshape(6, -1)
    r = eng.state[0]
    for s in range(6):
        if r["map_card"][s] >= 0:
            assert m[s, -1] == float(r["map_side"][s] == 0)


def _teams_win_setup(P=4, **rules):
    eng = table(P, **rules)
    return setup(eng, hands={0: (0, 3, 0)}, owned={0: ["Black 3", "Dual 1"], 2: ["Black 2"]},
                 slots=[("Black 1", 0, 0)], dice=(1, 1))


def test_bm_1_3_teams_side_total_wins():
    """BM-1.3 / BM-8.1 / BM-10.1: a side's summed points reach the target: the whole side
    wins at once (+1 each, -1 for the other side), the other die unused."""
    eng = _teams_win_setup()
    assert eng.side_points() == (6, 0)
    ev = act(eng, "buy", 1, 1)
    assert eng.terminated[0]
    assert eng.winners() == [0, 2]
    assert eng.rewards()[0].tolist() == [1.0, -1.0, 1.0, -1.0]
    assert eng.state[0]["dice_used"][1] == 0
    assert ev[-1].kind == "game_over" and ev[-1].a == 0


def test_bm_1_3_any_player_variant():
    """BM-1.3: team_target='any_player': the side total is not enough, one player must reach it."""
    eng = _teams_win_setup(team_target="any_player")
    act(eng, "buy", 1, 1)
    assert not eng.terminated[0] and eng.side_points() == (7, 0)
    eng = table(4, team_target="any_player")
    setup(eng, hands={2: (0, 3, 0)}, owned={2: ["Black 3", "Black 2", "Dual 1"]}, slots=[("Black 1", 0, 0)],
          dice=(1, 3), turn_player=2)
    act(eng, "buy", 1, 1)
    assert eng.terminated[0] and eng.winners() == [0, 2]


def test_bm_1_4_ffa_own_points_and_side_mates():
    """BM-1.4 / BM-10.2: ffa: a side-mate may buy a card facing the side; only the
    player's own points count; the winner +1, the rest -1/(n-1)."""
    eng = table(4, mode="ffa")
    setup(eng, hands={2: (0, 3, 0)}, owned={0: ["Black 3", "Black 3"], 2: ["Red 3", "Red 2", "Dual 1"]},
          slots=[("Black 1", 0, 0)], dice=(1, 3), turn_player=2)
    assert ("buy", 1, 1) in legal(eng)
    act(eng, "buy", 1, 1)
    assert eng.terminated[0] and eng.winners() == [2]
    assert np.allclose(eng.rewards()[0], [-1 / 3, -1 / 3, 1.0, -1 / 3])


def test_bm_1_5_and_7_1_hands_hidden_from_every_other_seat():
    """BM-1.5 / BM-7.1: another seat's hand contents (teammate included) never show in an
    observation; only its size does."""
    eng = table(4)
    setup(eng, hands={0: (2, 2, 2), 1: (1, 1, 1), 2: (3, 0, 0)})
    before = {v: obs_of(eng, v) for v in range(4)}
    r = eng.state[0]
    # seat 0 swaps its 2 Red and 2 Flip for 4 Black of the deck, seat 2 its 3 Red for 3
    # Black: the deck keeps its size, every count outside the hands stays
    swaps = [(0, 0, 2), (0, 2, 2), (2, 0, 3)]
    for q, k, n in swaps:
        blacks = [i for i in range(int(r["hdeck_n"])) if r["hdeck"][i] == 1][:n]
        r["hdeck"][blacks] = k
        r["hand"][q, k] -= n
        r["hand"][q, 1] += n
    refresh(eng)
    assert check_game(eng, 0) == []
    for v in (1, 3):
        assert np.array_equal(before[v], obs_of(eng, v)), v
    assert not np.array_equal(before[0], obs_of(eng, 0))
    assert not np.array_equal(before[2], obs_of(eng, 2))
    assert int(r["hand_n"][0]) == 6 and r["hand"][0].tolist() == [0, 6, 0]


# ------------------------------------------------------------------ BM-2 components
def test_bm_2_1_2_2_2_3_components():
    """BM-2.1 / BM-2.2 / BM-2.3: six slots; 72 Hand Cards 28/28/16; 30 Point Cards,
    49 points, 16 designs of which 8 effects; 11 Red, 11 Black, 8 Dual."""
    db = default_cards()
    assert db.hand_copies().tolist() == [28, 28, 16] and db.hand_deck_size == 72
    assert db.point_deck_size == 30 and db.total_points == 49 and db.n_designs == 16
    assert len(db.effect_designs) == 8 and len(db.one_time_designs) == 3
    cols = [sum(c.copies for c in db.point if c.colour == k) for k in ("red", "black", "dual")]
    assert cols == [11, 11, 8]
    eng = table(2)
    assert eng.state["map_card"].shape[1] == 6


def _data():
    return json.loads((ROOT / "ripmarket_env/games/blackmarket/cards.json").read_text())


@pytest.mark.parametrize("edit, msg", [
    (lambda d: d["point_cards"][3].update(colour="green"), r"point card #3 'Black 1'.*'colour'.*red, black, dual"),
    (lambda d: d["point_cards"][0].update(points=-1), r"point card #0 'Red 1'.*'points'.*0 to 9"),
    (lambda d: d["point_cards"][8]["effect"].update(primitive="teleport"), r"'Loaded Dice'.*effect.primitive"),
    (lambda d: d["point_cards"][11]["effect"].update(amount=7), r"'Heist'.*effect.amount.*1 to 3"),
    (lambda d: d["point_cards"][5].update(copies="2"), r"'Black 3'.*'copies'"),
    (lambda d: d["point_cards"][6].update(id=9), r"point card #6.*'id'"),
    (lambda d: d["hand_cards"][2].update(kind="red"), r"kind 'red' must appear exactly once, found 2"),
    (lambda d: d["point_cards"][9]["effect"].update(primitive="reroll_die"), r"'Fixer'.*already the effect of 'Loaded Dice'"),
    (lambda d: d["point_cards"][12].update(effect="smuggle"), r"'Smuggler'.*'effect'"),
    (lambda d: d["point_cards"][4].update(cost=3), r"point card #4 'Black 2'.*'cost' is not a field"),
    (lambda d: d["hand_cards"][1].update(text=["a"]), r"hand card #1 'Black'.*'text' must be a string"),
])
def test_bm_2_3_malformed_card_data_names_card_and_field(edit, msg):
    """BM-2.3: malformed card data: one error naming the card and the field."""
    data = _data()
    edit(data)
    with pytest.raises(CardDataError, match=msg):
        parse(data)


def test_bm_2_3_card_file_errors(tmp_path):
    """BM-2.3: an unreadable or non-JSON card file gets a one-line error."""
    p = tmp_path / "c.json"
    p.write_text("{nope")
    with pytest.raises(CardDataError, match="not valid JSON"):
        load(p)
    with pytest.raises(CardDataError, match="missing.json: file not found"):
        load(tmp_path / "missing.json")
    assert load().digest == default_cards().digest


# ------------------------------------------------------------------ BM-3 setup
def test_bm_3_1_3_2_3_3_setup():
    """BM-3.1 / BM-3.2 / BM-3.3: seeded shuffles; six face-up cards, sides by a coin;
    start_hand cards each."""
    a, b = table(4, seed=11), table(4, seed=11)
    assert np.array_equal(raw_rows(a.state), raw_rows(b.state))
    sides = []
    decks = set()
    for seed in range(30):
        eng = table(4, seed=seed, start_hand=5)
        r = eng.state[0]
        assert (r["map_card"] >= 0).all() and (r["map_down"] == 0).all() and (r["map_seen"] == 1).all()
        assert r["hand_n"][:4].tolist() == [5] * 4 or eng.state[0]["steps"] == 0
        assert int(r["hand_n"][:4].sum()) + int(r["hdeck_n"]) == 72
        sides += r["map_side"].tolist()
        decks.add(tuple(r["pdeck"][: int(r["pdeck_n"])]))
    assert 0.3 < np.mean(sides) < 0.7
    assert len(decks) == 30


# ------------------------------------------------------------------ BM-4 a turn
def test_bm_4_1_dice_and_turn_passing():
    """BM-4.1: two dice 1..6 per turn; one action per die in any order; the turn passes
    when both are spent; the first player comes from the seed."""
    eng = table(2, seed=1)
    setup(eng, hands={0: (3, 3, 0)}, dice=(2, 5))
    assert {a[1] for a in legal(eng, "draw")} == {2, 5}
    act(eng, "draw", 5)
    assert int(eng.state[0]["turn_player"]) == 0 and legal(eng, "draw") == [("draw", 2)]
    ev = act(eng, "draw", 2)
    assert [e.seat for e in ev if e.kind == "turn"][0] == 1
    rolls = [e for e in ev if e.kind == "roll"]
    assert rolls[0].seat == 1 and 1 <= rolls[0].a <= 6 and 1 <= rolls[0].b <= 6
    firsts = {int(table(4, seed=s).state[0]["first_player"]) for s in range(40)}
    assert firsts == {0, 1, 2, 3}


def test_bm_4_2_equal_dice_one_slot_twice():
    """BM-4.2: equal dice: both actions on that slot (rotate, then buy); two dice with
    the same number are one choice."""
    eng = table(2)
    setup(eng, hands={0: (3, 0, 1)}, slots=[None, None, ("Red 2", 0, 1)], dice=(3, 3))
    assert legal(eng, "draw") == [("draw", 3)]
    assert ("buy", 3, 0) not in legal(eng)
    act(eng, "rotate", 3, 0)
    assert ("buy", 3, 0) in legal(eng)
    act(eng, "buy", 3, 0)
    assert int(eng.state[0]["points"][0]) == 2 and int(eng.state[0]["turn_player"]) == 1


def test_bm_4_3_flip_rotate_and_payment():
    """BM-4.3: flip turns the face (side kept), rotate the side (face kept); a Flip Card
    pays, two of a colour only without a Flip Card (variant pair_flip='always')."""
    eng = table(2)
    setup(eng, hands={0: (2, 2, 1)}, slots=[("Red 1", 0, 0)], dice=(1, 2))
    assert [x for x in legal(eng, "flip") if x[1] == 1] == [("flip", 1, 0)]
    act(eng, "flip", 1, 0)
    r = eng.state[0]
    assert r["map_down"][0] == 1 and r["map_side"][0] == 0 and r["hand"][0].tolist() == [2, 2, 0]
    eng = table(2)
    setup(eng, hands={0: (2, 2, 0)}, slots=[("Red 1", 1, 0)], dice=(1, 2))
    assert {x for x in legal(eng, "rotate") if x[1] == 1} == {("rotate", 1, 1), ("rotate", 1, 2)}
    act(eng, "rotate", 1, 2)
    r = eng.state[0]
    assert r["map_side"][0] == 1 and r["map_down"][0] == 1 and r["hand"][0].tolist() == [2, 0, 0]
    assert int(r["hdisc"][1]) == 2
    eng = table(2, pair_flip="always")
    setup(eng, hands={0: (2, 2, 1)}, dice=(1, 2))
    assert {x for x in legal(eng, "flip") if x[1] == 1} == {("flip", 1, 0), ("flip", 1, 1), ("flip", 1, 2)}


def test_bm_4_4_buying():
    """BM-4.4: buy a face-up card facing you with three of its colour (Dual: either);
    not one facing away or face-down, not without three cards."""
    eng = table(2)
    setup(eng, hands={0: (3, 2, 0)}, slots=[("Red 3", 0, 0), ("Black 2", 0, 0), ("Dual 2", 0, 0),
                                            ("Red 2", 0, 1), ("Red 1", 1, 0), ("Dual 1", 0, 0)], dice=(1, 2))
    assert legal(eng, "buy") == [("buy", 1, 0)]
    setup(eng, hands={0: (3, 3, 0)}, slots=[("Red 3", 0, 0), ("Black 2", 0, 0), ("Dual 2", 0, 0),
                                            ("Red 2", 0, 1), ("Red 1", 1, 0), ("Dual 1", 0, 0)], dice=(3, 4))
    assert legal(eng, "buy") == [("buy", 3, 0), ("buy", 3, 1)]
    setup(eng, hands={0: (3, 3, 0)}, slots=[("Red 3", 0, 0), ("Black 2", 0, 0), ("Dual 2", 0, 0),
                                            ("Red 2", 0, 1), ("Red 1", 1, 0), ("Dual 1", 0, 0)], dice=(4, 5))
    assert legal(eng, "buy") == []
    setup(eng, hands={0: (3, 3, 0)}, slots=[("Red 3", 0, 0)], dice=(1, 6))
    act(eng, "buy", 1, 0)
    r = eng.state[0]
    assert r["hand"][0].tolist() == [0, 3, 0] and int(r["points"][0]) == 3 and r["owned"][0, D["Red 3"]] == 1
    assert int(r["hdisc"][0]) == 3


def test_bm_4_5_4_7_draw_and_hand_limit():
    """BM-4.5 / BM-4.7: draw one card; at the limit a draw draws nothing; limit 0 = none."""
    eng = table(2)
    setup(eng, hands={0: (3, 3, 3)}, dice=(1, 2))
    act(eng, "draw", 1)
    assert int(eng.state[0]["hand_n"][0]) == 10
    ev = act(eng, "draw", 2)
    assert int(eng.state[0]["hand_n"][0]) == 10
    assert any(e.kind == "draw" and e.a == -1 for e in ev)
    eng = table(2, hand_limit=0)
    setup(eng, hands={0: (4, 4, 2)}, dice=(1, 2))
    act(eng, "draw", 1)
    assert int(eng.state[0]["hand_n"][0]) == 11
    with pytest.raises(ConfigError, match="start_hand"):
        RulesConfig(num_players=2, hand_limit=6, start_hand=7)


def test_bm_4_6_empty_slot_only_draws():
    """BM-4.6: a die on an empty slot can only draw."""
    eng = table(2)
    setup(eng, hands={0: (3, 3, 3)}, slots=[None, ("Red 1", 0, 0)], dice=(1, 1))
    assert legal(eng) == [("draw", 1)] or all(k in ("draw", "effect") for k, *_ in legal(eng))
    assert legal(eng, "flip") == [] and legal(eng, "buy") == []


def test_bm_4_8_hand_deck_reshuffles_the_discard():
    """BM-4.8: the Hand deck empty: the discard is shuffled into a new deck."""
    eng = table(2)
    setup(eng, hands={0: (3, 0, 0)}, dice=(1, 2), discard=(5, 5, 5))
    r = eng.state[0]
    leftover = int(r["hdeck_n"])
    for k in r["hdeck"][:leftover]:  # the rest of the deck goes to the discard
        r["hdisc"][k] += 1
    r["hdeck"][:] = -1
    r["hdeck_n"] = 0
    ev = act(eng, "draw", 1)
    assert any(e.kind == "reshuffle" and e.a == 15 + leftover for e in ev)
    assert int(r["hdeck_n"]) == 15 + leftover - 1 and int(r["hdisc"].sum()) == 0
    assert check_game(eng, 0) == []


# ------------------------------------------------------------------ BM-5 map
def test_bm_5_1_face_down_identity_public():
    """BM-5.1: a face-down card's identity stays public (every viewer's observation
    names it); it cannot be bought."""
    eng = table(2)
    setup(eng, hands={0: (3, 3, 0)}, slots=[("Red 3", 1, 0)], dice=(1, 2))
    for v in (0, 1):
        m = obs_of(eng, v)[eng.obs_layout.slice("map")].reshape(6, -1)
        assert m[0, 1 + D["Red 3"]] == 1.0 and m[0, 17] == 1.0
    assert legal(eng, "buy") == []


def test_bm_5_2_refill_and_second_die_on_new_card():
    """BM-5.2: the slot refills at once (face-up, a coin for the side); a second die on
    the slot acts on the new card."""
    eng = table(2)
    setup(eng, hands={0: (6, 0, 0)}, slots=[("Red 1", 0, 0)], dice=(1, 1), top=["Red 2"])
    ev = act(eng, "buy", 1, 0)
    r = eng.state[0]
    assert int(r["map_card"][0]) == D["Red 2"] and r["map_down"][0] == 0
    assert any(e.kind == "refill" and e.a == 1 for e in ev)
    if int(r["map_side"][0]) == 0:
        act(eng, "buy", 1, 0)
        assert int(r["points"][0]) == 3
    else:
        assert legal(eng, "buy") == []


def test_bm_5_2_face_down_refill_variant_unseen():
    """BM-5.2: refill='face_down': the new card is unseen by every seat (no design in any
    observation, the event text hides it), and cannot be bought even with Crowbar."""
    eng = table(2, refill="face_down")
    setup(eng, hands={0: (6, 3, 0)}, owned={0: ["Crowbar"]}, slots=[("Red 1", 0, 0)], dice=(1, 1), top=["Black 3"])
    ev = act(eng, "buy", 1, 0)
    r = eng.state[0]
    assert r["map_down"][0] == 1 and r["map_seen"][0] == 0
    for v in (0, 1):
        m = obs_of(eng, v)[eng.obs_layout.slice("map")].reshape(6, -1)
        assert m[0, 1:17].sum() == 0 and m[0, 0] == 1.0
    ref = [e for e in ev if e.kind == "refill"][0]
    assert "Black 3" not in ref.text_for(0) and "Black 3" not in ref.text_for(1) and "Black 3" in ref.text_for("god")
    assert ("buy", 1, 1) not in legal(eng)


def test_bm_5_3_point_deck_never_reshuffles():
    """BM-5.3: with the Point deck empty, a bought card's slot stays empty."""
    eng = table(2)
    setup(eng, hands={0: (3, 0, 0)}, slots=[("Red 1", 0, 0)], dice=(1, 2), empty_deck=True)
    ev = act(eng, "buy", 1, 0)
    assert int(eng.state[0]["map_card"][0]) == -1
    assert any(e.kind == "slot_empty" for e in ev)


# ------------------------------------------------------------------ BM-6 effects
def test_bm_6_1_effects_at_once_or_next_turn():
    """BM-6.1: an effect is usable at once after its purchase; variant next_turn: not
    until the owner's next turn; never on another seat's turn."""
    for mode, usable in (("at_once", True), ("next_turn", False)):
        eng = table(2, effects_from=mode)
        setup(eng, hands={0: (0, 3, 0)}, slots=[None, ("Third Die", 0, 0)], dice=(2, 5))
        act(eng, "buy", 2, 1)
        assert (("effect", 2) in legal(eng)) is usable
    eng = table(2)
    setup(eng, hands={0: (1, 1, 0), 1: (1, 1, 0)}, owned={0: ["Third Die"]}, dice=(2, 5), turn_player=1)
    assert ("effect", 2) not in legal(eng)


def test_bm_6_2_once_per_turn_and_copies_stack():
    """BM-6.2: each card once per turn; two Loaded Dice = two rerolls."""
    eng = table(2)
    setup(eng, hands={0: (1, 1, 0)}, owned={0: ["Loaded Dice"]}, dice=(2, 5))
    act(eng, "effect", 0)
    act(eng, "choose_slot", 2)
    assert ("effect", 0) not in legal(eng)
    setup(eng, hands={0: (1, 1, 0)}, owned={0: ["Loaded Dice", "Loaded Dice"]}, dice=(2, 5))
    act(eng, "effect", 0)
    act(eng, "choose_slot", 2)
    assert ("effect", 0) in legal(eng)
    act(eng, "effect", 0)
    act(eng, "choose_slot", int(eng.state[0]["dice"][0]))
    assert ("effect", 0) not in legal(eng)


def test_bm_6_3_active_effect_spends_no_die():
    """BM-6.3: an active effect is an action of its own: no die is spent."""
    eng = table(2)
    setup(eng, hands={0: (1, 1, 0)}, owned={0: ["Third Die"]}, dice=(2, 5))
    act(eng, "effect", 2)
    r = eng.state[0]
    assert int(r["n_dice"]) == 3 and r["dice_used"][:3].tolist() == [0, 0, 0]


def test_bm_6_4_one_time_spent_keeps_points():
    """BM-6.4: a one-time card is spent when used: its points stay, its effect is gone
    (on later turns too)."""
    eng = table(2)
    setup(eng, hands={0: (1, 1, 0)}, owned={0: ["Third Die"]}, dice=(2, 5))
    act(eng, "effect", 2)
    r = eng.state[0]
    assert r["spent"][0, D["Third Die"]] == 1 and int(r["points"][0]) == 2
    setup_spent = r["spent"].copy()
    # the next own turn: still spent
    r["used"][:] = 0
    refresh(eng)
    assert ("effect", 2) not in legal(eng) and np.array_equal(r["spent"], setup_spent)


def test_bm_6_5_loaded_dice_rerolls():
    """BM-6.5: Loaded Dice rerolls the chosen unused die (one die value: no choice asked)."""
    eng = table(2)
    setup(eng, hands={0: (1, 1, 0)}, owned={0: ["Loaded Dice"]}, dice=(4, 4))
    ev = act(eng, "effect", 0)
    assert any(e.kind == "reroll" and e.a == 4 and e.forced for e in ev)
    assert int(eng.state[0]["phase"]) == 0


def test_bm_6_6_fixer_sets_a_die():
    """BM-6.6: Fixer sets one unused die to any other number (one-time)."""
    eng = table(2)
    setup(eng, hands={0: (1, 1, 0)}, owned={0: ["Fixer"]}, dice=(2, 5))
    act(eng, "effect", 1)
    assert eng.phase() == ["choose_die"] and set(legal(eng)) == {("choose_slot", 2), ("choose_slot", 5)}
    act(eng, "choose_slot", 5)
    assert eng.phase() == ["choose_number"] and ("choose_slot", 5) not in legal(eng) and len(legal(eng)) == 5
    act(eng, "choose_slot", 6)
    assert sorted(eng.state[0]["dice"][:2].tolist()) == [2, 6]
    assert ("effect", 1) not in legal(eng)


def test_bm_6_7_third_die_one_more_action():
    """BM-6.7: Third Die rolls one more die: three actions this turn."""
    eng = table(2)
    setup(eng, hands={0: (1, 1, 0)}, owned={0: ["Third Die"]}, dice=(2, 5))
    act(eng, "effect", 2)
    r = eng.state[0]
    third = int(r["dice"][2])
    act(eng, "draw", 2)
    act(eng, "draw", 5)
    assert int(r["turn_player"]) == 0
    ev = act(eng, "draw", third)
    assert [e.seat for e in ev if e.kind == "turn"][0] == 1


def test_bm_6_8_heist_and_7_3_only_thief_and_victim_learn():
    """BM-6.8 / BM-7.3: Heist takes 2 random cards from an opponent holding a card; the
    thief and the victim alone read which."""
    eng = table(4)
    setup(eng, hands={0: (1, 0, 0), 1: (0, 0, 0), 2: (3, 0, 0), 3: (0, 2, 1)}, owned={0: ["Heist"]}, dice=(2, 5))
    ev = act(eng, "effect", 3)  # seat 1 has no card, seat 2 is a teammate: seat 3 is forced
    heist = [e for e in ev if e.kind == "heist"][0]
    assert heist.seat == 0 and heist.a == 3 and heist.forced
    r = eng.state[0]
    assert int(r["hand_n"][0]) == 3 and int(r["hand_n"][3]) == 1
    for v in (0, 3, "god"):
        assert re.search(r"(Black|Flip), (Black|Flip)", heist.text_for(v))
    for v in (1, 2, None):
        assert "Black" not in heist.text_for(v) and "Flip" not in heist.text_for(v)
        assert "2 cards" in heist.text_for(v)
    # never past the hand limit; needs room
    eng = table(2)
    setup(eng, hands={0: (4, 3, 2), 1: (2, 2, 0)}, owned={0: ["Heist"]}, dice=(2, 5))
    act(eng, "effect", 3)
    assert int(eng.state[0]["hand_n"][0]) == 10 and int(eng.state[0]["hand_n"][1]) == 3
    setup(eng, hands={0: (4, 4, 2), 1: (2, 2, 0)}, owned={0: ["Heist"]}, dice=(2, 5))
    assert ("effect", 3) not in legal(eng)


def test_bm_6_9_smuggler():
    """BM-6.9: Smuggler: one purchase per turn of a face-up card facing the other side."""
    eng = table(2)
    setup(eng, hands={0: (6, 0, 0)}, owned={0: ["Smuggler"]}, slots=[("Red 1", 0, 1), ("Red 2", 0, 1)], dice=(1, 2))
    assert {x for x in legal(eng, "buy")} == {("buy", 1, 0), ("buy", 2, 0)}
    ev = act(eng, "buy", 1, 0)
    assert "Smuggler" in [e for e in ev if e.kind == "buy"][0].text_for(1)
    assert legal(eng, "buy") == []


def test_bm_6_10_crowbar_and_stacking():
    """BM-6.10 / BM-6.2: Crowbar buys a face-down card facing you; with Smuggler a
    face-down card facing the other side."""
    eng = table(2)
    setup(eng, hands={0: (3, 3, 0)}, owned={0: ["Crowbar"]}, slots=[("Red 1", 1, 0), ("Black 1", 1, 1)], dice=(1, 2))
    assert legal(eng, "buy") == [("buy", 1, 0)]
    setup(eng, hands={0: (3, 3, 0)}, owned={0: ["Crowbar", "Smuggler"]}, slots=[("Red 1", 1, 0), ("Black 1", 1, 1)],
          dice=(1, 2))
    assert legal(eng, "buy") == [("buy", 1, 0), ("buy", 2, 1)]
    act(eng, "buy", 2, 1)
    assert legal(eng, "buy") == []  # Crowbar's use this turn is spent


def test_bm_6_11_fence_discount():
    """BM-6.11: Fence: the first purchase made while owning it costs two."""
    eng = table(2)
    setup(eng, hands={0: (2, 3, 0)}, owned={0: ["Fence"]}, slots=[("Red 1", 0, 0), ("Black 1", 0, 0)], dice=(1, 2))
    assert legal(eng, "buy") == [("buy", 1, 0), ("buy", 2, 1)]
    act(eng, "buy", 1, 0)
    r = eng.state[0]
    assert r["hand"][0].tolist() == [0, 3, 0]
    assert legal(eng, "buy") == [("buy", 2, 1)]
    act(eng, "buy", 2, 1)
    assert r["hand"][0].tolist()[:2] == [0, 0]


def test_bm_6_12_informant_double_draw():
    """BM-6.12: Informant: the first draw each turn draws two."""
    eng = table(2)
    setup(eng, hands={0: (1, 0, 0)}, owned={0: ["Informant"]}, dice=(1, 2))
    act(eng, "draw", 1)
    assert int(eng.state[0]["hand_n"][0]) == 3
    act(eng, "draw", 2)
    assert int(eng.state[0]["hand_n"][0]) == 4


# ------------------------------------------------------------------ BM-7 information
def test_bm_7_2_public_facts_alike_for_every_viewer():
    """BM-7.2: dice, map identities and faces, score piles, discard and decks read the
    same for every viewer (only 'faces you' and the relative seat order differ)."""
    eng = table(4, seed=9)
    play_random(eng, seed=3, check=False, max_steps=40)
    assert not eng.terminated[0], "seed 9 / 3 must still be running after 40 steps"
    lay = eng.obs_layout
    obs = [obs_of(eng, v) for v in range(4)]
    for name in ("dice", "point_deck", "hand_deck", "effects_used", "turn"):
        for v in range(1, 4):
            assert np.array_equal(obs[0][lay.slice(name)], obs[v][lay.slice(name)]), name
    m0 = obs[0][lay.slice("map")].reshape(6, -1)
    for v in range(1, 4):
        mv = obs[v][lay.slice("map")].reshape(6, -1)
        assert np.array_equal(m0[:, :-1], mv[:, :-1])
    for q in range(4):
        for v in range(4):
            assert np.array_equal(obs[0][lay.slice("owned", q)], obs[v][lay.slice("owned", (q - v) % 4)])


def test_bm_7_3_draws_named_to_their_seat_only():
    """BM-7.3: a drawn card is named to its seat only."""
    eng = table(2)
    setup(eng, hands={0: (1, 1, 1)}, dice=(1, 2))
    ev = [e for e in act(eng, "draw", 1) if e.kind == "draw"][0]
    assert any(k in ev.text_for(0) for k in ("Red", "Black", "Flip"))
    assert ev.text_for(1) == "player 0 draws a card" and ev.to_dict(1)["a"] is None


# ------------------------------------------------------------------ BM-8 end
def test_bm_8_2_map_and_deck_empty():
    """BM-8.2: the map and the Point deck empty: most points wins."""
    eng = table(2)
    setup(eng, hands={0: (3, 0, 0)}, owned={1: ["Black 3"]}, slots=[("Red 2", 0, 0), None, None, None, None, None],
          dice=(1, 2), empty_deck=True)
    act(eng, "buy", 1, 0)
    assert eng.terminated[0] and int(eng.state[0]["end_reason"]) == 1
    assert eng.winners() == [1] and eng.rewards()[0].tolist() == [-1.0, 1.0]


def test_bm_8_3_max_turns_cap():
    """BM-8.3: the safety cap ends the game, most points wins, ties share (0 for all)."""
    eng = table(2, max_turns=3)
    while not eng.terminated[0]:
        eng.step([max(a for a in eng.legal_actions(0) if 48 <= a < 54)])
    r = eng.state[0]
    assert int(r["turn"]) == 3 and int(r["end_reason"]) == 2
    assert eng.rewards()[0].tolist() == [0.0, 0.0] and eng.winners() == [0, 1]
    # the cap ends the game once its last turn is taken: the views count 3 turns, not 4
    from ripmarket_env.games.blackmarket import SPEC
    from ripmarket_env.games.blackmarket.table import describe

    view = describe(SPEC, eng)
    assert view["turn"] == 3 and view["info"][1].endswith("turn 3 of 3")


@pytest.mark.parametrize("target", ["side_total", "any_player"])
def test_bm_8_4_a_capped_team_game_goes_to_the_larger_side_total(target):
    """BM-8.4: at the cap the sides' totals decide, under either team target: side B's
    3 + 3 beats side A's 5 + 0 although seat 0 holds the most points."""
    eng = table(4, team_target=target, max_turns=1)
    setup(eng, hands={0: (1, 0, 0)}, owned={0: ["Red 3", "Dual 2"], 1: ["Black 3"], 3: ["Red 2", "Dual 1"]},
          dice=(1, 2))
    act(eng, "draw", 1)
    act(eng, "draw", 2)
    r = eng.state[0]
    assert r["points"][:4].tolist() == [5, 3, 0, 3] and int(r["end_reason"]) == 2
    assert eng.winners() == [1, 3] and eng.rewards()[0].tolist() == [-1.0, 1.0, -1.0, 1.0]


# ------------------------------------------------------------------ BM-9 variants
@pytest.mark.parametrize("kw, field", [
    ({"num_players": 3}, "num_players"), ({"mode": "coop"}, "mode"), ({"target_points": 2}, "target_points"),
    ({"target_points": 21}, "target_points"), ({"hand_limit": 5}, "hand_limit"), ({"start_hand": 0}, "start_hand"),
    ({"pair_flip": "never"}, "pair_flip"), ({"refill": "random"}, "refill"), ({"effects_from": "later"}, "effects_from"),
    ({"max_turns": 0}, "max_turns"), ({"max_turns": 2001}, "max_turns"), ({"reward_mode": "placement"}, "reward_mode"),
    ({"mode": "ffa", "team_target": "any_player"}, "team_target"), ({"target_points": True}, "target_points"),
])
def test_bm_9_1_invalid_variants(kw, field):
    """BM-9.1: an invalid variant is refused naming the field and the allowed values."""
    kw = {"num_players": 4, **kw}
    with pytest.raises(ConfigError, match=rf"{field}=.*allowed"):
        RulesConfig(**kw)
    with pytest.raises(ConfigError, match="unknown field"):
        RulesConfig.from_dict({"num_players": 2, "ghosts": 1})
    assert RulesConfig.from_dict(RulesConfig(num_players=6, mode="ffa").to_dict()) == RulesConfig(num_players=6, mode="ffa")


# ------------------------------------------------------------------ BM-10 rewards
def test_bm_10_2_ffa_co_winners_and_placement():
    """BM-10.2 / BM-10.3: k co-winners get (n-k)/(k(n-1)); placement is linear by points,
    ties averaged; rewards sum to zero, paid on the last step only."""
    eng = table(4, mode="ffa", max_turns=1)
    setup(eng, hands={0: (1, 1, 0)}, owned={0: ["Red 2"], 1: ["Black 2"], 2: ["Red 1"]}, dice=(1, 2))
    _, _ = eng.step([A.encode("draw", 1)])
    assert not eng.terminated[0] and eng.state[0]["step_rewards"][:4].tolist() == [0, 0, 0, 0]
    rew, done = eng.step([A.encode("draw", 2)])
    assert done[0] and np.allclose(rew[0], [1 / 3, 1 / 3, -1 / 3, -1 / 3])
    eng = table(4, mode="ffa", reward_mode="placement", max_turns=1)
    setup(eng, hands={0: (1, 1, 0)}, owned={0: ["Red 2"], 1: ["Black 2"], 2: ["Red 1"]}, dice=(1, 2))
    eng.step([A.encode("draw", 1)])
    rew, _ = eng.step([A.encode("draw", 2)])
    assert np.allclose(rew[0], [2 / 3, 2 / 3, -1 / 3, -1.0]) and abs(rew[0].sum()) < 1e-6


def test_bm_10_1_10_3_rewards_zero_sum_under_random_play():
    """BM-10.1 / BM-10.3: in every mode and count, rewards sum to zero and are paid once."""
    for P in (2, 4, 6):
        for mode in ("teams", "ffa"):
            eng = table(P, seed=P, mode=mode, max_turns=60)
            paid = 0
            rng = np.random.default_rng(P)
            while not eng.terminated[0]:
                rew, _ = eng.step([int(rng.choice(eng.legal_actions(0)))])
                paid += int(np.any(rew[0] != 0))
            assert abs(float(eng.rewards()[0].sum())) < 1e-5 and paid <= 1
            if mode == "teams" and eng.rewards()[0].any():
                assert set(eng.rewards()[0].tolist()) == {1.0, -1.0}


# ------------------------------------------------------------------ BM-11 interface
def test_bm_11_1_action_table():
    """BM-11.1: Discrete(69); every action decodes, encodes back and has a description."""
    eng = table(2)
    assert eng.num_actions == 69 and eng.legal_mask().shape == (1, 69)
    for a in range(69):
        kind, args = A.decode(a)
        assert A.encode(kind, *args) == a and eng.describe_action(a)
    assert eng.describe_action(57) == "use Heist"
    with pytest.raises(ValueError, match="0..68"):
        A.decode(69)


def test_bm_11_2_observation_layout_and_bounds():
    """BM-11.2: 324 floats with the packaged cards, inside the declared bounds for any
    viewer, in every player count."""
    from ripmarket_env.games.blackmarket.observation import observation_bounds

    for P in (2, 4, 6):
        eng = table(P, seed=P)
        lo, hi = observation_bounds(eng.cards, eng.rules)
        assert eng.obs_size == 324 and lo.shape == (324,)
        rng = np.random.default_rng(0)
        for _ in range(150):
            if eng.terminated[0]:
                break
            for v in range(P):
                o = obs_of(eng, v)
                assert (o >= lo).all() and (o <= hi).all()
            eng.step([int(rng.choice(eng.legal_actions(0)))])


def test_bm_11_3_phases():
    """BM-11.3: the phase names; a finished game's mask is all False."""
    eng = table(2, max_turns=1)
    assert eng.phase_names == ("act", "choose_die", "choose_number", "choose_seat", "game_over")
    while not eng.terminated[0]:
        eng.step([eng.legal_actions(0)[-1]])
    assert not eng.legal_mask().any()
    assert obs_of(eng, 0)[4] == 1.0


# ------------------------------------------------------------------ BM-12 engine
def test_bm_12_2_replay_any_batch_row_and_clones():
    """BM-12.2: a seed and an action list replay the same game at any batch size or row;
    clones evolve independently."""
    one = table(4, seed=77)
    rng = np.random.default_rng(5)
    actions = []
    for _ in range(120):
        if one.terminated[0]:
            break
        a = int(rng.choice(one.legal_actions(0)))
        actions.append(a)
        one.step([a])
    big = Engine(RulesConfig(num_players=4), 40)
    big.reset(list(range(100, 140)))
    big.reset([77], games=[23])
    twin = None
    for i, a in enumerate(actions):
        acts = np.full(40, -1)
        acts[23] = a
        big.step(acts)
        if i == 10:
            twin = big.clone([23])
    assert np.array_equal(raw_rows(big.state)[23], raw_rows(one.state)[0])
    assert int(twin.state[0]["steps"]) == 11
    twin.step([twin.legal_actions(0)[0]] if not twin.terminated[0] else [-1])
    assert np.array_equal(raw_rows(big.state)[23], raw_rows(one.state)[0])


def test_bm_12_3_single_option_taken_by_engine():
    """BM-12.3: a decision with one legal option is taken by the engine and marked."""
    eng = table(2)
    setup(eng, hands={0: (0, 0, 0)}, slots=[None] * 6, dice=(3, 4))
    ev = act(eng, "draw", 3)
    forced = [e for e in ev if e.forced]
    assert forced and forced[0].kind == "draw" and "(only choice)" in forced[0].text_for(1)


def test_bm_12_4_illegal_action_leaves_state():
    """BM-12.4: an illegal action raises, naming the decision and legal actions; nothing changes."""
    eng = table(2)
    setup(eng, hands={0: (1, 1, 0)}, dice=(1, 2))
    before = raw_rows(eng.state).copy()
    with pytest.raises(IllegalActionError, match=r"decision: act.*legal actions: .*draw with the die showing 1"):
        eng.step([A.encode("buy", 5, 0)])
    with pytest.raises(ValueError):
        eng.step([1.5])
    assert np.array_equal(before, raw_rows(eng.state))


def test_bm_12_5_event_texts_per_viewer():
    """BM-12.5: every event of a game has a text for each seat, a spectator and god;
    the deal names a seat's cards to that seat alone."""
    eng = table(4, seed=2)
    ev = eng.events(0)
    deals = [e for e in ev if e.kind == "deal"]
    assert len(deals) == 24
    for e in deals:
        for v in range(4):
            named = any(k in e.text_for(v) for k in ("Red", "Black", "Flip"))
            assert named == (v == e.seat)


def test_bm_13_invariants_random_play_every_mode():
    """BM-13: the invariants hold after every step of random games in every count and mode."""
    for P in (2, 4, 6):
        for mode in ("teams", "ffa"):
            eng = table(P, seed=P * 7, mode=mode, max_turns=40)
            play_random(eng, seed=P)
            assert eng.terminated[0]


def test_every_rule_id_is_named_by_a_test():
    """Every BM-x.y of the rules page is named by at least one test."""
    ids = set(re.findall(r"\*\*(BM-\d+\.\d+)\*\*", RULES.read_text()))
    assert len(ids) > 40
    text = "".join(p.read_text() for p in Path(__file__).parent.glob("test_blackmarket*.py"))
    missing = sorted(i for i in ids if not re.search(re.escape(i) + r"(?!\d)", text))
    assert not missing, missing
