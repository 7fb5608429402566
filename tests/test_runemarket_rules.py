"""The Rune Market's rules, one or more tests per rule ID of docs/games/rune-market/RULES.md."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from rm_scenario import act, card, game, hand, legal, phase, runes, start_turn
from ripmarket_env.games.runemarket import SPEC, ConfigError, Engine, IllegalActionError, RulesConfig
from ripmarket_env.games.runemarket import actions as A
from ripmarket_env.games.runemarket.cards import DATA_FILE, CardDataError, default_cards, load_cards, parse
from ripmarket_env.games.runemarket.invariants import check_game
from ripmarket_env.games.runemarket.observation import LAYOUT, OBS_SIZE, named_view

REPO = Path(__file__).resolve().parents[1]


def events(eng, viewer="god"):
    return [e.text_for(viewer) for e in eng.events(0)]


def kinds(eng):
    return [e.kind for e in eng.events(0)]


# ----------------------------------------------------------------------------- RM-1
def test_rm_1_1_player_counts_and_clockwise_order():
    """RM-1.1: 2-6 players; play passes to seat + 1."""
    for bad in (1, 7):
        with pytest.raises(ConfigError, match="num_players"):
            RulesConfig(num_players=bad)
    eng = start_turn(game(3), tp=2, hands={2: [1, 2, 4]})
    act(eng, "attack")
    act(eng, "number", 1)
    act(eng, "opponent", 1)  # seat 0
    assert eng.state["actor"][0] == 0


def test_rm_1_2_market_at_setup():
    """RM-1.2: 10 Red, 10 Blue Runes, 2 Boat Shelters, 2 Bandits."""
    eng = game(4, seed=5)
    st = eng.state[0]
    assert st["market"].tolist() == [10, 10] and st["market_boats"] == 2 and st["market_bandits"] == 2


def test_rm_1_3_deck_composition():
    """RM-1.3: 56 cards, ten Number designs x4, 8 Thefts, 4 + 4 Shelters, every card placed once."""
    db = default_cards()
    assert db.deck_size == 56
    assert db.copies.tolist() == [4] * 10 + [8, 4, 4]
    assert [c.value for c in db.deck[:10]] == list(range(1, 11))
    eng = game(6, seed=9)
    assert check_game(eng) == []


def test_rm_1_4_deal_and_private_hands():
    """RM-1.4: three cards each; a viewer's observation shows its own hand, no other."""
    eng = game(4, seed=3)
    assert eng.state["hand_n"][0, :4].tolist() == [3, 3, 3, 3]
    before = eng.observe(np.array([0])).copy()
    eng.state["hand"][0, 1] = 0
    eng.state["hand"][0, 1, 9] = 3  # seat 1's cards change, same count
    after = eng.observe(np.array([0]))
    assert np.array_equal(before, after)
    h = named_view(after[0])["hand"]
    assert np.allclose(h * default_cards().copies, eng.state["hand"][0, 0])


def test_rm_1_5_first_player_from_seed_and_match_play():
    """RM-1.5: the first player is drawn from the seed; the reset option sets it; the deal
    is the same."""
    firsts = set()
    for s in range(30):
        firsts.add(int(game(4, seed=s).state["first_player"][0]))
    assert firsts == {0, 1, 2, 3}
    a = game(4, seed=11)
    b = Engine(RulesConfig(num_players=4))
    b.reset([11], first_player=(int(a.state["first_player"][0]) + 1) % 4)
    assert b.state["first_player"][0] == (a.state["first_player"][0] + 1) % 4
    # the same cards dealt (the first player's turn has not changed any hand yet)
    assert np.array_equal(a.state["hand"][0], b.state["hand"][0])
    with pytest.raises(ValueError, match="first_player"):
        b.reset([1], first_player=4)
    import ripmarket_env

    env = ripmarket_env.make("rune-market", num_players=4)
    env.reset(seed=11, options={"first_player": 2})
    assert env.agent_selection == "player_2"


# ----------------------------------------------------------------------------- RM-2
def test_rm_2_1_score_counts_every_rune():
    """RM-2.1: loose, sheltered and frozen Runes all score."""
    eng = start_turn(game(3), tp=1, hands={1: [1, 1, 1]}, shelters=[(0, 0)], inside={(0, 0): 2},
                     loose={(0, 1): 1}, bandits={(0, 0): 2})
    assert eng.scores(0)[0] == 3


def test_rm_2_2_where_gained_runes_go():
    """RM-2.2: a bought Rune goes into the unlocked Shelter of its colour, else loose; loose
    Runes move in when the Shelter is played."""
    eng = start_turn(game(3), tp=0, hands={0: [5, 5, "red"]}, loose={(0, 0): 1})
    act(eng, "buy_rune", 0)
    act(eng, "number", 5)
    assert runes(eng, 0) == (2, 0, 0, 0)
    act(eng, "shelter_table", 0)
    assert runes(eng, 0) == (0, 2, 0, 0)
    act(eng, "buy_rune", 1)
    act(eng, "number", 5)
    assert runes(eng, 0) == (0, 2, 1, 0)


def test_rm_2_3_one_shelter_per_colour():
    """RM-2.3: a second Red Shelter cannot go to the table (it may still be discarded)."""
    eng = start_turn(game(3), tp=0, hands={0: ["red", "blue", 1]}, shelters=[(0, 0)])
    lg = legal(eng)
    assert "shelter_table:1" in lg and "shelter_table:0" not in lg and "shelter_discard:0" in lg


def test_rm_2_4_boat_goes_in_own_shelter_and_pays_two():
    """RM-2.4: a Boat Shelter goes into an own Shelter without one; it pays 2 a turn."""
    eng = start_turn(game(3), tp=0, hands={0: [10, 9, 8, 1]}, shelters=[(0, 1)], inside={(0, 1): 1})
    assert runes(eng, 0) == (0, 0, 0, 2)  # interest 1
    act(eng, "number_boat")
    for v in (10, 9, 8):
        act(eng, "number", v)
    # one own Shelter without a Boat: the engine placed it
    assert eng.state["boat"][0, 0].tolist() == [0, 1] and eng.state["market_boats"][0] == 1
    eng = start_turn(eng, tp=0)
    assert runes(eng, 0) == (0, 0, 0, 4)


def test_rm_2_4_a_boat_may_go_into_an_own_locked_shelter():
    """RM-2.4: a Boat Shelter may be bought into the buyer's own Bandit-locked Shelter (the
    lock holds Runes, not Boats); its doubled interest then goes to the Bandit's owner."""
    eng = start_turn(game(3), tp=0, hands={0: [10, 10, 1, 2]}, shelters=[(0, 0), (1, 0)], inside={(0, 0): 2},
                     bandits={(0, 0): 1})
    assert runes(eng, 1) == (0, 1, 0, 0)  # this turn's interest, 1, went to the Bandit's owner
    act(eng, "number_boat")
    for v in (10, 10, 1):
        act(eng, "number", v)
    assert eng.state["boat"][0, 0].tolist() == [1, 0] and eng.state["bandit"][0, 0, 0] == 1
    eng = start_turn(eng, tp=0)
    assert runes(eng, 0) == (0, 2, 0, 0) and runes(eng, 1) == (0, 3, 0, 0)  # 2 more, to seat 1


def test_rm_2_5_shelter_leaving_the_table():
    """RM-2.5: a discarded table Shelter leaves its Runes loose, its Boat back in the Market,
    its Bandit out of the game."""
    eng = start_turn(game(3), tp=0, hands={0: [1, 2, 3], 1: [1]}, shelters=[(0, 0), (0, 1)], boats=[(0, 0)],
                     inside={(0, 0): 3, (0, 1): 1}, bandits={(0, 0): 1}, skip=False)
    assert phase(eng) == "start"
    act(eng, "discard_shelter", 0)
    st = eng.state[0]
    assert st["shelter"][0].tolist() == [0, 1] and st["market_boats"] == 2 and st["bandit"][0, 0] == -1
    assert st["removed_bandits"] == 1 and st["loose"][0, 0] == 3
    assert check_game(eng) == []


# ----------------------------------------------------------------------------- RM-3
def _stage_of(phase_name):
    return {"start": 1, "rune_buy": 2}.get(phase_name, 3)


def test_rm_3_1_stages_in_order_never_back():
    """RM-3.1: within a turn the stage never goes back (random play, every turn)."""
    rng = np.random.default_rng(0)
    eng = Engine(RulesConfig(num_players=3))
    for s in range(20):
        eng.reset([s])
        last_turn, last_stage = -1, 0
        while not eng.terminated[0]:
            eng.step([rng.choice(eng.legal_actions(0))])
            if eng.terminated[0]:
                break
            t = int(eng.state["total_turns"][0])
            st = int(eng.state["stage"][0])
            if t == last_turn:
                assert st >= last_stage
            last_turn, last_stage = t, st
    # a turn with nothing to do in stages 1-2 opens at the hand stage
    eng = start_turn(game(3), tp=0, hands={0: [1, 2, 3]})
    assert phase(eng) == "hand"


def test_rm_3_2_interest_red_then_blue_capped_by_market():
    """RM-3.2: each Shelter with a Rune pays 1 (2 with a Boat), Red first, never more than
    the Market holds."""
    eng = start_turn(game(3), tp=0, hands={0: [1, 2, 3]}, shelters=[(0, 0), (0, 1)], boats=[(0, 1)],
                     inside={(0, 0): 1, (0, 1): 1}, market=(4, 1), skip=False)
    assert runes(eng, 0) == (0, 2, 0, 2)
    ev = [e for e in eng.events(0) if e.kind == "interest"]
    assert [e.a for e in ev] == [0, 1] and [e.b % 16 for e in ev] == [1, 1]


def test_rm_3_3_one_table_shelter_discard_after_interest():
    """RM-3.3: interest first, then one Shelter discard at most; then stage 2."""
    eng = start_turn(game(3), tp=0, hands={0: [1, 2, 3], 1: [4]}, shelters=[(0, 0), (0, 1)],
                     inside={(0, 0): 1, (0, 1): 1}, skip=False)
    assert runes(eng, 0) == (0, 2, 0, 2)  # interest already paid
    act(eng, "discard_shelter", 0)
    act(eng, "opponent", 1)
    act(eng, "steal", 2)  # seat 1's only card; the second theft fizzles (seat 1 has nothing)
    assert phase(eng) in ("rune_buy", "hand")
    assert all(not k.startswith("discard_shelter") for k in legal(eng))


def test_rm_3_4_rune_purchases_cost_and_return():
    """RM-3.4: 3 Runes of one colour (4 with 2 players) buy a Boat; they go back to the Market."""
    eng = start_turn(game(3), tp=0, hands={0: [1, 2, 3]}, shelters=[(0, 0)], inside={(0, 0): 2},
                     loose={(0, 1): 2}, market=(7, 8), skip=False)
    act(eng, "done")  # stage 1: keep the Shelter
    assert phase(eng) == "rune_buy"  # 3 Red after interest
    assert "rune_boat:0" in legal(eng) and "rune_boat:1" not in legal(eng)
    act(eng, "rune_boat", 0)
    assert eng.state["market"][0, 0] == 7 - 1 + 3 and runes(eng, 0) == (0, 0, 2, 0)
    assert eng.state["boat"][0, 0, 0] == 1
    two = start_turn(game(2), tp=0, hands={0: [1, 2, 3]}, shelters=[(0, 0)], inside={(0, 0): 2}, skip=False)
    act(two, "done")
    assert phase(two) == "hand"  # 3 Red is not enough with 2 players
    two = start_turn(game(2), tp=0, hands={0: [1, 2, 3]}, shelters=[(0, 0)], inside={(0, 0): 3}, skip=False)
    act(two, "done")
    assert "rune_boat:0" in legal(two)


def test_rm_3_5_at_least_one_hand_card():
    """RM-3.5: done is legal only once a card is played, or with an empty hand."""
    eng = start_turn(game(3), tp=0, hands={0: ["theft", 1, 2]})
    assert "done:0" not in legal(eng)
    act(eng, "theft")
    while phase(eng) != "hand":
        act(eng, *A.decode(eng.legal_actions(0)[0]))
    assert "done:0" in legal(eng)
    empty = start_turn(game(3), tp=0, hands={0: []}, shelters=[(0, 0)], skip=False)
    assert legal(empty) == ["done:0", "discard_shelter:0"]
    act(empty, "done")
    # the hand stage with an empty hand offers only done: the engine ended the turn
    assert empty.state["turn_player"][0] == 1


def test_rm_3_6_first_hand_card_ends_stages_1_and_2():
    """RM-3.6: after a hand card no stage-1/2 action comes back in the turn."""
    eng = start_turn(game(3), tp=0, hands={0: [1, 2, 3]}, shelters=[(0, 0)], inside={(0, 0): 4}, skip=False)
    assert phase(eng) == "start"
    act(eng, "done")
    assert phase(eng) == "rune_buy"
    act(eng, "done")
    act(eng, "attack")
    act(eng, "number", 1)
    act(eng, "opponent", 1)
    if phase(eng) == "defend":
        act(eng, "no_block")
    while phase(eng) != "hand":
        act(eng, *A.decode(eng.legal_actions(0)[0]))
    assert not any(k.split(":")[0] in ("rune_boat", "rune_bandit", "discard_shelter") for k in legal(eng))


def test_rm_3_7_draw_back_and_reshuffle():
    """RM-3.7: draw to 3 at the end; more are kept; an empty pile is the shuffled discard."""
    eng = start_turn(game(3), tp=0, hands={0: [1, 2, 4]})
    act(eng, "attack")
    act(eng, "number", 1)
    act(eng, "opponent", 1)
    if phase(eng) == "defend":
        act(eng, "no_block")
    while phase(eng) != "hand":
        act(eng, *A.decode(eng.legal_actions(0)[0]))
    act(eng, "done")
    assert eng.state["hand_n"][0, 0] >= 3
    # more than 3 kept
    big = start_turn(game(3), tp=0, hands={0: ["theft", 1, 2, 3, 4]})
    act(big, "attack")
    act(big, "number", 4)
    act(big, "opponent", 1)
    while phase(big) != "hand":
        act(big, *A.decode(big.legal_actions(0)[0]))
    act(big, "done")
    assert big.state["hand_n"][0, 0] == 4
    # reshuffle: empty the pile into the discard
    r = game(3)
    st = r.state
    for d in st["deck"][0, : st["deck_n"][0]]:
        st["discard"][0, d] += 1
    st["discard_n"][0] += st["deck_n"][0]
    st["deck"][0] = -1
    st["deck_n"][0] = 0
    start_turn(r, tp=0, hands={0: ["theft"]})
    act(r, "theft")
    while phase(r) != "hand":
        act(r, *A.decode(r.legal_actions(0)[0]))
    act(r, "done")
    assert "reshuffle" in kinds(r) and r.state["hand_n"][0, 0] == 3


def test_rm_3_8_play_passes_clockwise():
    """RM-3.8: the next turn is seat + 1 (mod n)."""
    eng = start_turn(game(4), tp=3, hands={3: ["theft"]})
    act(eng, "theft")
    while phase(eng) != "hand":
        act(eng, *A.decode(eng.legal_actions(0)[0]))
    act(eng, "done")
    assert eng.state["turn_player"][0] == 0


# ----------------------------------------------------------------------------- RM-4
def test_rm_4_1_shelter_to_table():
    """RM-4.1: a Shelter played to the table stays there (not in the discard)."""
    eng = start_turn(game(3), tp=0, hands={0: ["blue", 1, 2]})
    act(eng, "shelter_table", 1)
    assert eng.state["shelter"][0, 0, 1] == 1 and eng.state["discard"][0, 12] == 0


def test_rm_4_2_shelter_discard_is_a_double_theft():
    """RM-4.2: a Shelter to the discard pile: two thefts on one opponent."""
    eng = start_turn(game(3), tp=0, hands={0: ["red", 1], 1: [7, 8]}, loose={(1, 1): 2})
    act(eng, "shelter_discard", 0)
    assert eng.state["discard"][0, 11] == 1
    act(eng, "opponent", 1)
    act(eng, "steal", 1)
    assert phase(eng) == "choose_steal" and eng.state["thefts_left"][0] == 1
    act(eng, "steal", 1)
    assert runes(eng, 0) == (0, 0, 2, 0) and phase(eng) == "hand"


def test_rm_4_3_theft_card():
    """RM-4.3: a Theft Card: one theft."""
    eng = start_turn(game(3), tp=0, hands={0: ["theft", 1], 1: [7]}, loose={(1, 0): 1})
    act(eng, "theft")
    act(eng, "opponent", 1)
    act(eng, "steal", 0)
    assert runes(eng, 0) == (1, 0, 0, 0) and phase(eng) == "hand" and eng.state["discard"][0, 10] == 1


def test_rm_4_4_exact_rune_purchase_card_by_card():
    """RM-4.4: only cards keeping an exact 5/10/15 reachable are offered; the purchase ends
    at the first exact total."""
    eng = start_turn(game(3), tp=0, hands={0: [3, 7, 9]})
    assert "buy_rune:0" in legal(eng)  # 3 + 7 = 10
    act(eng, "buy_rune", 0)
    assert legal(eng) == ["number:3", "number:7"]  # 9 leads nowhere
    act(eng, "number", 7)
    assert legal(eng) == ["number:3"] or phase(eng) == "hand"
    if phase(eng) == "payment":
        act(eng, "number", 3)
    assert runes(eng, 0) == (1, 0, 0, 0) and hand(eng, 0) == {card(9): 1}
    no = start_turn(game(3), tp=0, hands={0: [3, 3, 8]})
    assert not any(k.startswith("buy_rune") for k in legal(no))
    five = start_turn(game(3), tp=0, hands={0: [2, 3, 5]})
    act(five, "buy_rune", 1)
    act(five, "number", 2)
    act(five, "number", 3)  # 5: complete, the 5 stays in hand
    assert hand(five, 0) == {card(5): 1} and runes(five, 0) == (0, 0, 1, 0)
    al = start_turn(game(3, rune_sums="at_least"), tp=0, hands={0: [3, 3, 8]})
    act(al, "buy_rune", 0)
    act(al, "number", 8)
    assert runes(al, 0) == (1, 0, 0, 0)


def test_rm_4_5_number_purchase_21_or_more():
    """RM-4.5: Number cards totalling 21 or more buy a Boat Shelter or a Bandit."""
    eng = start_turn(game(3), tp=0, hands={0: [10, 10, 9, 1]}, shelters=[(1, 0)])
    assert "number_bandit:0" in legal(eng) and "number_boat:0" not in legal(eng)  # no own Shelter
    act(eng, "number_bandit")
    act(eng, "number", 10)
    act(eng, "number", 10)
    assert phase(eng) == "payment"
    act(eng, "number", 9)  # 29: overpay lost; one Shelter to put it on: placed by the engine
    assert eng.state["bandit"][0, 1, 0] == 0 and eng.state["market_bandits"][0] == 1
    low = start_turn(game(3), tp=0, hands={0: [10, 9, 1]}, shelters=[(1, 0)])
    assert "number_bandit:0" not in legal(low)


def test_rm_4_6_played_cards_go_to_the_discard():
    """RM-4.6: payment cards, attack cards and Thefts are in the discard pile at once."""
    eng = start_turn(game(3), tp=0, hands={0: [2, 3, "theft"]})
    d0 = eng.state["discard_n"][0]
    act(eng, "buy_rune", 0)
    act(eng, "number", 2)
    assert eng.state["discard"][0, card(2)] == 1
    act(eng, "number", 3)
    assert eng.state["discard_n"][0] == d0 + 2


# ----------------------------------------------------------------------------- RM-5
def test_rm_5_1_theft_targets_and_fizzle():
    """RM-5.1: only opponents with loot are targets; with none, anyone and it fizzles."""
    eng = start_turn(game(4), tp=0, hands={0: ["theft", 1], 1: [], 2: [4], 3: []})
    act(eng, "theft")
    # only seat 2 has loot: the engine chose it; one kind of loot: taken too
    assert hand(eng, 0).get(card(4)) == 1 and eng.state["hand_n"][0, 2] == 0
    none = start_turn(game(3), tp=0, hands={0: ["theft", 1], 1: [], 2: []})
    act(none, "theft")
    assert phase(none) == "choose_opponent" and len(none.legal_actions(0)) == 2
    act(none, "opponent", 2)
    assert "fizzle" in kinds(none) and phase(none) == "hand"


def test_rm_5_2_stolen_card_known_to_thief_and_victim_only():
    """RM-5.2: the card is named for the thief and the victim; others see a hand card."""
    eng = start_turn(game(3), tp=0, hands={0: ["theft", 1], 1: [9, 9, 9], 2: [2]})
    act(eng, "theft")
    act(eng, "opponent", 1)
    act(eng, "steal", 2)
    e = next(x for x in eng.events(0) if x.kind == "steal_card")
    assert "Number 9" in e.text_for(0) and "Number 9" in e.text_for(1)
    assert "Number 9" not in e.text_for(2) and "Number 9" not in e.text_for(None)
    assert e.to_dict(2)["b"] is None and e.to_dict(1)["b"] == card(9)
    assert hand(eng, 0)[card(9)] == 1  # joins the thief's hand: playable now
    assert "attack:0" in legal(eng)


def test_rm_5_3_victim_draws_back_only_at_its_turn_end():
    """RM-5.3: a robbed hand stays short through the victim's next turn."""
    eng = start_turn(game(3), tp=0, hands={0: ["theft", 1], 1: [5, 5, 5]})
    act(eng, "theft")
    act(eng, "opponent", 1)
    act(eng, "steal", 2)
    assert eng.state["hand_n"][0, 1] == 2
    act(eng, "done")
    assert eng.state["turn_player"][0] == 1 and eng.state["hand_n"][0, 1] == 2


def test_rm_5_4_double_theft_second_chosen_after_first():
    """RM-5.4: two thefts on one opponent; the second choice reflects the first."""
    eng = start_turn(game(3), tp=0, hands={0: ["blue", 1], 1: [3]}, loose={(1, 0): 1})
    act(eng, "shelter_discard", 1)
    act(eng, "opponent", 1)
    assert set(legal(eng)) == {"steal:0", "steal:2"}
    act(eng, "steal", 0)
    # only the hand card is left: the engine takes it
    assert hand(eng, 0).get(card(3)) == 1 and phase(eng) == "hand"


def test_rm_5_5_thefts_are_never_blocked():
    """RM-5.5: no defence follows a theft (the victim never acts)."""
    eng = start_turn(game(3), tp=0, hands={0: ["theft", 1], 1: [10, 10, 10]}, loose={(1, 0): 1})
    act(eng, "theft")
    act(eng, "opponent", 1)
    assert phase(eng) == "choose_steal" and eng.state["actor"][0] == 0


def test_rm_5_6_each_opponent_attacked_once_per_turn():
    """RM-5.6: an attacked opponent cannot be attacked again with a Number card this turn."""
    eng = start_turn(game(3), tp=0, hands={0: [1, 1, 1, "theft"], 1: [], 2: []})
    act(eng, "attack")
    act(eng, "number", 1)
    act(eng, "opponent", 1)
    act(eng, "no_block")  # seat 1 has no card: asked anyway (RM-5.9)
    act(eng, "attack")
    act(eng, "number", 1)
    assert legal(eng) == ["opponent:2"] or phase(eng) == "defend"
    if phase(eng) == "defend":
        act(eng, "no_block")
    assert "attack:0" not in legal(eng)


def test_rm_5_7_defender_decides_and_keeps_the_block_card():
    """RM-5.7: the actor switches to the defender (engine and AEC agent_selection); only
    cards >= the attack block; the shown card stays in hand; the turn player acts again."""
    eng = start_turn(game(3), tp=0, hands={0: [6, 1], 1: [5, 6, 9]})
    act(eng, "attack")
    act(eng, "number", 6)
    act(eng, "opponent", 1)
    assert phase(eng) == "defend" and eng.state["actor"][0] == 1
    assert legal(eng) == ["number:6", "number:9", "no_block:0"]
    with pytest.raises(IllegalActionError):
        act(eng, "number", 5)
    act(eng, "number", 9)
    assert hand(eng, 1) == {card(5): 1, card(6): 1, card(9): 1}
    assert eng.state["actor"][0] == 0 and phase(eng) == "hand"
    assert any("showing a Number 9" in t for t in events(eng, 2))
    # AEC: agent_selection follows the defender
    import ripmarket_env

    env = ripmarket_env.make("rune-market", num_players=3)
    for seed in range(200):
        env.reset(seed=seed)
        for _ in range(400):
            if env.terminations[env.agent_selection]:
                break
            raw = env.unwrapped
            if raw.engine.state["phase"][0] == 7:
                assert env.agent_selection != f"player_{int(raw.engine.state['turn_player'][0])}"
                assert env.agent_selection == f"player_{int(raw.engine.state['actor'][0])}"
                return
            m = env.observe(env.agent_selection)["action_mask"]
            env.step(int(np.flatnonzero(m)[-1]))
    pytest.fail("no defend decision reached")


def test_rm_5_8_unblocked_attack_is_a_theft():
    """RM-5.8: no block: the attacker steals once (the theft is always taken), or finds
    nothing when the defender has nothing to steal."""
    eng = start_turn(game(3), tp=0, hands={0: [6, 1], 1: [5, 2]}, loose={(1, 1): 1})
    act(eng, "attack")
    act(eng, "number", 6)
    act(eng, "opponent", 1)
    assert legal(eng) == ["no_block:0"]
    act(eng, "no_block")
    assert phase(eng) == "choose_steal" and eng.state["actor"][0] == 0
    act(eng, "steal", 1)
    assert runes(eng, 0) == (0, 0, 1, 0)
    # an attack may name an opponent with nothing to steal: unblocked, the theft fizzles
    eng = start_turn(game(3), tp=0, hands={0: [9, 1], 1: []})
    act(eng, "attack")
    act(eng, "number", 9)
    assert "opponent:1" in legal(eng)
    act(eng, "opponent", 1)
    act(eng, "no_block")
    assert kinds(eng) == ["no_block", "fizzle"] and hand(eng, 0) == {0: 1} and runes(eng, 0) == (0, 0, 0, 0)


def test_rm_5_9_forced_no_block_looks_chosen():
    """RM-5.9: a forced no-block reads like a chosen one to others; the defender is asked
    (default) or resolved by the engine (variant defend="auto") without an "only choice" mark."""
    texts = {}
    for name, defender_hand in (("forced", [1, 2]), ("chosen", [9, 2])):
        eng = start_turn(game(3), tp=0, hands={0: [6, 1], 1: defender_hand})
        act(eng, "attack")
        act(eng, "number", 6)
        act(eng, "opponent", 1)
        assert phase(eng) == "defend" and eng.state["actor"][0] == 1
        act(eng, "no_block")
        e = next(x for x in eng.events(0) if x.kind == "no_block")
        texts[name] = (e.text_for(0), e.text_for(2), e.text_for(None), e.text_for(1))
        assert not e.forced
    assert texts["forced"][:3] == texts["chosen"][:3]
    assert "no card high enough" in texts["forced"][3] and "no card high enough" not in texts["chosen"][3]
    auto = start_turn(game(3, defend="auto"), tp=0, hands={0: [6, 1], 1: [1, 2]}, loose={(1, 0): 1})
    act(auto, "attack")
    act(auto, "number", 6)
    act(auto, "opponent", 1)
    assert phase(auto) == "choose_steal"
    e = next(x for x in auto.events(0) if x.kind == "no_block")
    assert not e.forced and e.text_for(2) == texts["chosen"][1]


# ----------------------------------------------------------------------------- RM-6
def test_rm_6_1_bandit_needs_an_opponent_shelter():
    """RM-6.1: a Bandit goes on an opponent's Shelter without one, also an empty one (seat 2's
    Red Shelter below holds no Rune); none: it cannot be bought."""
    eng = start_turn(game(3), tp=0, hands={0: [10, 10, 1]}, shelters=[(0, 0)], inside={(0, 0): 4}, skip=False)
    act(eng, "done")
    assert phase(eng) == "rune_buy" and "rune_bandit:0" not in legal(eng) and "rune_boat:0" in legal(eng)
    eng = start_turn(game(3), tp=0, hands={0: [10, 10, 1]}, shelters=[(0, 0), (1, 1), (2, 0)],
                     inside={(0, 0): 4}, skip=False)
    act(eng, "done")
    act(eng, "rune_bandit", 0)
    assert set(legal(eng)) == {"shelter:3", "shelter:4"}  # 2k+c: seat+1 Blue, seat+2 Red
    act(eng, "shelter", 4)
    assert eng.state["bandit"][0, 2, 0] == 0


def test_rm_6_2_lock_freezes_runes():
    """RM-6.2: frozen Runes score but cannot be stolen or spent; gains stay loose."""
    eng = start_turn(game(3), tp=1, hands={1: ["theft", 5]}, shelters=[(0, 0)], inside={(0, 0): 3},
                     bandits={(0, 0): 2})
    act(eng, "theft")
    # seat 0 has only frozen Runes and cards
    assert "steal:0" not in legal(eng) if phase(eng) == "choose_steal" else True
    eng = start_turn(game(3), tp=0, hands={0: [5, 1]}, shelters=[(0, 0)], inside={(0, 0): 4},
                     bandits={(0, 0): 2})
    assert phase(eng) == "hand"  # 4 frozen Red buy nothing (stage 2 skipped)
    act(eng, "buy_rune", 0)
    act(eng, "number", 5)
    assert runes(eng, 0) == (1, 4, 0, 0)


def test_rm_6_3_diverted_and_blocked_interest():
    """RM-6.3: a locked Shelter's interest goes to the Bandit's owner (or no one)."""
    eng = start_turn(game(3), tp=0, hands={0: [1, 2]}, shelters=[(0, 0), (2, 0)], boats=[(0, 0)],
                     inside={(0, 0): 1}, bandits={(0, 0): 2})
    assert runes(eng, 0) == (0, 1, 0, 0) and runes(eng, 2) == (0, 2, 0, 0)
    blk = start_turn(game(3, bandit_interest="block"), tp=0, hands={0: [1, 2]}, shelters=[(0, 0)],
                     inside={(0, 0): 1}, bandits={(0, 0): 2}, skip=False)
    assert runes(blk, 2) == (0, 0, 0, 0) and "interest_blocked" in kinds(blk)


def test_rm_6_4_removal_paid_over_turns():
    """RM-6.4: one card per action toward 15; the total stays over turns; removal at 15."""
    eng = start_turn(game(3), tp=0, hands={0: [9, 1]}, shelters=[(0, 1)], inside={(0, 1): 2},
                     bandits={(0, 1): 1})
    act(eng, "pay_bandit", 1)
    act(eng, "number", 9)
    assert eng.state["bandit_paid"][0, 0, 1] == 9
    act(eng, "done")
    eng = start_turn(eng, tp=0, hands={0: [7, 2]})
    act(eng, "pay_bandit", 1)
    act(eng, "number", 7)  # 16 >= 15
    assert eng.state["bandit"][0, 0, 1] == -1 and eng.state["removed_bandits"][0] == 1
    assert eng.state["bandit_paid"][0, 0, 1] == 0


def test_rm_6_5_removal_by_discarding_the_shelter():
    """RM-6.5: the owner discards the locked Shelter at the start; the Bandit goes too."""
    eng = start_turn(game(3), tp=0, hands={0: [1], 1: [2]}, shelters=[(0, 0)], inside={(0, 0): 2},
                     bandits={(0, 0): 1}, skip=False)
    act(eng, "discard_shelter", 0)
    assert eng.state["bandit"][0, 0, 0] == -1 and eng.state["removed_bandits"][0] == 1


def test_rm_6_6_removed_bandit_leaves_the_game():
    """RM-6.6: a removed Bandit never returns to the Market."""
    eng = start_turn(game(3), tp=0, hands={0: [10, 5]}, shelters=[(0, 0)], bandits={(0, 0): 1},
                     market_bandits=0)
    eng.state["removed_bandits"][0] = 1  # the other Bandit was removed before
    act(eng, "pay_bandit", 0)
    act(eng, "number", 10)
    act(eng, "pay_bandit", 0)
    act(eng, "number", 5)
    assert eng.state["market_bandits"][0] == 0 and eng.state["removed_bandits"][0] == 2
    assert check_game(eng) == []


# ----------------------------------------------------------------------------- RM-7
def test_rm_7_1_game_ends_when_the_market_is_empty():
    """RM-7.1: the last Market Rune bought ends the game at once (by interest too)."""
    eng = start_turn(game(3), tp=0, hands={0: [5, 5, "theft"]}, market=(1, 0), loose={(1, 0): 5, (2, 1): 10})
    eng.state["market"][0] = (1, 0)
    act(eng, "buy_rune", 0)
    act(eng, "number", 5)
    assert eng.terminated[0] and phase(eng) == "game_over" and eng.state["end_reason"][0] == 0
    i = start_turn(game(3), tp=0, hands={0: [1]}, shelters=[(0, 1)], inside={(0, 1): 3}, loose={(1, 0): 10})
    i.state["market"][0] = (0, 1)
    start_turn(i, tp=0)
    assert i.terminated[0] and runes(i, 0) == (0, 0, 0, 5)


def _finish(eng, tp, scores, turns):
    """End game 0 by seat tp buying the Market's last Rune; scores are after the purchase."""
    st = eng.state
    st["loose"][0] = 0
    st["inside"][0] = 0
    for q, s in enumerate(scores):
        st["loose"][0, q, 1] = s - (1 if q == tp else 0)
    st["loose"][0, tp, 0] = 0
    start_turn(eng, tp=tp, hands={tp: [5]})
    st["market"][0] = (1, 0)
    st["loose"][0, :, 1] = 0
    for q, s in enumerate(scores):
        st["loose"][0, q, 1] = s - (1 if q == tp else 0)
    st["turns"][0, : len(turns)] = turns
    act(eng, "buy_rune", 0)
    act(eng, "number", 5)
    assert eng.terminated[0]


def test_rm_7_2_tie_break_fewer_turns_then_shared():
    """RM-7.2: most Runes; tied: fewer turns; still tied: shared."""
    eng = game(4)
    _finish(eng, 0, [3, 3, 2, 2], [5, 4, 4, 4])
    assert eng.state["winners"][0, :4].tolist() == [0, 1, 0, 0]
    eng = game(4)
    _finish(eng, 0, [3, 3, 2, 2], [4, 4, 4, 4])
    assert eng.state["winners"][0, :4].tolist() == [1, 1, 0, 0]
    eng = game(4, tie_break="share")
    _finish(eng, 0, [3, 3, 2, 2], [5, 4, 4, 4])
    assert eng.state["winners"][0, :4].tolist() == [1, 1, 0, 0]


def test_rm_7_3_turn_cap():
    """RM-7.3: at max_turns the game ends and is scored."""
    eng = Engine(RulesConfig(num_players=3, max_turns=5))
    eng.reset([2])
    rng = np.random.default_rng(1)
    while not eng.terminated[0]:
        eng.step([rng.choice(eng.legal_actions(0))])
    assert eng.state["total_turns"][0] <= 5
    if eng.state["end_reason"][0] == 1:
        assert eng.state["total_turns"][0] == 5
    assert RulesConfig(num_players=3).turns_cap == 300


def test_rm_7_4_rewards_sum_to_zero_and_are_paid_once():
    """RM-7.4: win and placement rewards; only the last step pays."""
    eng = game(4)
    _finish(eng, 0, [3, 3, 2, 1], [4, 4, 4, 4])
    assert np.allclose(eng.state["final_rewards"][0, :4], [1 / 3, 1 / 3, -1 / 3, -1 / 3])
    eng = game(4, reward_mode="placement")
    _finish(eng, 0, [3, 3, 2, 1], [4, 4, 4, 4])
    assert np.allclose(eng.state["final_rewards"][0, :4], [2 / 3, 2 / 3, -1 / 3, -1])
    eng = Engine(RulesConfig(num_players=5), batch_size=1)
    eng.reset([4])
    rng = np.random.default_rng(2)
    paid = []
    while not eng.terminated[0]:
        rew, _ = eng.step([rng.choice(eng.legal_actions(0))])
        paid.append(np.abs(rew).sum() > 0)
    assert paid[-1] and not any(paid[:-1])
    assert abs(eng.rewards()[0].sum()) < 1e-6


# ----------------------------------------------------------------------------- RM-8
def test_rm_8_1_single_options_are_taken_by_the_engine():
    """RM-8.1: a one-option decision is taken and logged "only choice"."""
    eng = start_turn(game(3), tp=0, hands={0: ["theft", 1], 1: [4], 2: []})
    act(eng, "theft")
    ev = eng.events(0)
    assert any(e.forced for e in ev if e.kind == "victim")


def test_rm_8_2_illegal_actions_change_nothing():
    """RM-8.2: illegal actions, the attacker acting during the defence included."""
    eng = start_turn(game(3), tp=0, hands={0: [6, 1], 1: [9, 2]})
    act(eng, "attack")
    act(eng, "number", 6)
    act(eng, "opponent", 1)
    before = eng.state.copy()
    for a in (A.encode("attack"), A.encode("done"), A.encode("number", 2), 50, -5):
        with pytest.raises((IllegalActionError, ValueError)) as exc:
            eng.step([a])
        assert "defend" in str(exc.value) or "action" in str(exc.value)
    for name in eng.state.dtype.names:
        assert np.array_equal(eng.state[name], before[name]), name


def test_rm_8_3_same_game_at_any_batch_size_and_row():
    """RM-8.3: a seed and an action list replay the same game in any row of any batch."""
    rng = np.random.default_rng(5)
    one = Engine(RulesConfig(num_players=4))
    one.reset([77])
    acts = []
    while not one.terminated[0]:
        a = int(rng.choice(one.legal_actions(0)))
        acts.append(a)
        one.step([a])
    many = Engine(RulesConfig(num_players=4), batch_size=40)
    many.reset(list(range(100, 140)))
    many.reset([77], games=[33])
    for a in acts:
        x = np.full(40, -1)
        x[33] = a
        many.step(x)
    for name in one.state.dtype.names:
        assert np.array_equal(many.state[name][33], one.state[name][0]), name


def test_rm_8_4_observation_size_and_hidden_hands():
    """RM-8.4: 191 floats; nothing of other hands or the draw order shows."""
    assert OBS_SIZE == 191 and LAYOUT.seat_start == 101
    eng = game(4, seed=8)
    o1 = eng.observe(np.array([2])).copy()
    eng.state["deck"][0, : eng.state["deck_n"][0]] = np.roll(eng.state["deck"][0, : eng.state["deck_n"][0]], 5)
    for q in (0, 1, 3):
        eng.state["hand"][0, q] = np.roll(eng.state["hand"][0, q], 1)
    assert np.array_equal(o1, eng.observe(np.array([2])))
    low, high = SPEC.observation_bounds(eng)
    assert ((o1 >= low) & (o1 <= high)).all()


def test_rm_8_5_action_table():
    """RM-8.5: Discrete(50); decode/encode round-trip; every action described."""
    assert A.NUM_ACTIONS == 50
    for a in range(50):
        k, arg = A.decode(a)
        assert A.encode(k, arg) == a and A.describe(a)
    with pytest.raises(ValueError, match="out of range"):
        A.decode(50)


def test_rm_8_6_variants_are_validated():
    """RM-8.6: every variant field rejects values outside the table, naming the field."""
    for field, bad in (("hand_size", 0), ("rune_cost", 7), ("number_cost", 9), ("bandit_removal", 41),
                       ("bandit_interest", "steal"), ("rune_sums", "any"), ("tie_break", "coin"),
                       ("max_turns", 0), ("reward_mode", "score"), ("defend", "never")):
        with pytest.raises(ConfigError, match=field):
            RulesConfig(**{field: bad})
    with pytest.raises(ConfigError, match="unknown field"):
        RulesConfig.from_dict({"ghosts": 1})
    assert RulesConfig(num_players=2).runes_per_item == 4 and RulesConfig(num_players=3).runes_per_item == 3


def test_rm_8_7_card_data_is_validated():
    """RM-8.7: malformed card data names the card and the field."""
    data = json.loads(DATA_FILE.read_text())
    assert parse(data).digest == default_cards().digest
    bad = json.loads(DATA_FILE.read_text())
    bad["deck"][4]["value"] = 6
    with pytest.raises(CardDataError, match=r"deck card #4 \('Number 5'\) field 'value'"):
        parse(bad)
    bad = json.loads(DATA_FILE.read_text())
    bad["deck"][10]["copies"] = "eight"
    with pytest.raises(CardDataError, match=r"'Theft'\) field 'copies'"):
        parse(bad)
    bad = json.loads(DATA_FILE.read_text())
    bad["market"][3]["copies"] = 9
    with pytest.raises(CardDataError, match=r"market card #3 \('Bandit Card'\) field 'copies'"):
        parse(bad)
    for name in ("Bandit\x1b[2J", "Bandit " * 20, " "):  # a Market card's name is the designer's: one short line
        bad = json.loads(DATA_FILE.read_text())
        bad["market"][3]["name"] = name
        with pytest.raises(CardDataError, match=r"market card #3 .* field 'name': must be a non-empty string of at most 48"):
            parse(bad)
    with pytest.raises(CardDataError, match="not valid JSON"):
        p = REPO / "tests" / "data"
        f = p / "_rm_bad.json"
        f.write_text("{")
        try:
            load_cards(f)
        finally:
            f.unlink()


# ----------------------------------------------------------------------------- coverage of the IDs
def test_every_rule_id_is_tested():
    """Every RM-x.y of the rules page is named by a test of this file."""
    rules = set(re.findall(r"\*\*(RM-\d+\.\d+)\*\*", (REPO / "docs/games/rune-market/RULES.md").read_text()))
    named = set(re.findall(r"RM-\d+\.\d+", Path(__file__).read_text()))
    assert len(rules) >= 45
    assert rules <= named, sorted(rules - named)


def test_card_reference_is_fresh_and_the_cli_writes_it(tmp_path):
    """docs/games/rune-market/CARDS.md is generated from cards.json (RM-8.7)."""
    from typer.testing import CliRunner

    from ripmarket_env.app.cli import app
    from ripmarket_env.games.runemarket.cards import REGEN_COMMAND, render_markdown

    page = REPO / "docs/games/rune-market/CARDS.md"
    assert page.read_text(encoding="utf-8") == render_markdown(default_cards()), f"stale: run `{REGEN_COMMAND}`"
    out = tmp_path / "c.md"
    res = CliRunner().invoke(app, ["cards", "--game", "rune-market", "--write", str(out)])
    assert res.exit_code == 0 and out.read_text(encoding="utf-8") == page.read_text(encoding="utf-8")
    bad = tmp_path / "bad.json"
    data = json.loads(DATA_FILE.read_text())
    data["deck"][11]["colour"] = "green"
    bad.write_text(json.dumps(data))
    res = CliRunner().invoke(app, ["cards", "--game", "rune-market", "--file", str(bad)])
    assert res.exit_code == 2 and "Red Shelter" in res.output and "colour" in res.output


def test_worked_turn_page_is_fresh():
    """The rules page's worked turn is generated from a seeded game."""
    from ripmarket_env.games.runemarket.worked import COMMAND, PAGE, worked_turn

    assert PAGE.read_text(encoding="utf-8") == worked_turn(), f"stale: run `{COMMAND}`"
