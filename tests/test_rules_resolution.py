"""Rules tests: final scores, resolution, game end, rewards and the named cards.

Covers R-7, R-8, R-9, R-11 and R-13 of docs/RULES.md (and R-5.5); every test names the
rule it exercises. Expected values are derived by hand from the rules text. Unless a test
says otherwise: 4 players (2 HP), seat 0 holds the First Player token (turn order 0-1-2-3).
"""

from __future__ import annotations

import json
from collections import Counter

import numpy as np
import pytest

from ripmarket_env.games.ripmarket.cards.loader import load_cards, CardDataError, default_cards, parse_cards
from ripmarket_env.games.ripmarket.cards.text import effect_text
from scenario import Table, serial, variant_cards

DB = default_cards()
FIRST = load_cards("first-edition")


@pytest.fixture(autouse=True)
def _one_thread():
    """One-game tables: run the engine's parallel kernels on this thread (see scenario.serial)."""
    with serial():
        yield


def table(n=4, first=0, seed=0, cards=None, rules=None, **arrange):
    # the hand-arranged rounds were written with the first edition's numbers (docs/BALANCE.md)
    t = Table(n, seed=seed, cards=FIRST if cards is None else cards, **(rules or {}))
    t.arrange(**arrange)
    t.start_round(first)
    return t


def finish(t):
    t.check_conservation()
    t.check_shadow_conservation()


def hands_of(plays):
    return {p: [v if isinstance(v, str) else v["card"]] for p, v in plays.items()}


def run(plays, n=4, first=0, haunts=None, rules=None, **arrange):
    """A table where each seat holds exactly the card it plays, played for one round."""
    hands = hands_of(plays)
    hands.update(arrange.pop("hands", {}))
    t = table(n, first=first, rules=rules, hands=hands, **arrange)
    t.play_round(plays, haunts=haunts)
    return t


# =================================================================================
# R-7 Final scores
# =================================================================================


def test_r_7_1_set_score_overrides_earlier_effects_and_later_ones_still_apply():
    """R-7.1 / R-2.11: Living score effects apply in event order; Mimic's "set to" replaces the
    running total, so a Spite played BEFORE it is lost (Mimic 8), one played AFTER it counts
    (8 - 2 = 6)."""
    t = run({0: {"card": "Spite", "target": 1}, 1: "Mimic", 2: "Tycoon", 3: "Merchant"})
    assert t.scores == [4, 8, 8, 6]  # Spite first, then Mimic: 8
    t = run({0: "Mimic", 1: {"card": "Spite", "target": 0}, 2: "Tycoon", 3: "Merchant"})
    assert t.scores == [6, 4, 8, 6]  # Mimic first (8), then Spite: 6
    assert t.damage == [0, 1, 0, 0]


def test_r_7_1_shadow_conditions_come_after_living_effects():
    """R-7.1 step 3: a Shadow applies after Mimic's set: Possession (Mimic's base 2 is even)
    takes 3 from the copied 8: 5."""
    t = run({0: "Tycoon", 2: "Mimic", 3: "Merchant"}, ghosts={1: ["Possession", "Possession"]},
            haunts={1: ("Possession", 2)})
    assert t.scores == [8, 0, 5, 6]
    finish(t)


def test_r_7_1_scores_have_no_floor():
    """R-7.1: scores are integers with no floor: Stockpile 2 - 2 (Spite) - 2 (Withering) = -2."""
    t = run({0: {"card": "Spite", "target": 2}, 2: "Stockpile", 3: "Tycoon"},
            ghosts={1: ["Withering", "Withering"]}, haunts={1: ("Withering", 2)})
    assert t.scores == [4, 0, -2, 8]
    assert t.damage == [0, 0, 1, 0]
    finish(t)


def test_r_7_2_base_value_reads_the_printed_number_only():
    """R-7.2 / R-13.3: Mimic (printed 2) copying 8 is still base 2: Heavy Taxes (base >= 6)
    skips it and Relief (base <= 3), played after it, lifts it: 8 + 2 = 10.
    Tycoon 8 - 2 (Taxes) = 6; Relief 4; Heavy Taxes 3 + 2 (Relief) = 5."""
    t = run({0: "Mimic", 1: "Tycoon", 2: "Relief", 3: "Heavy Taxes"})
    assert t.scores == [10, 6, 4, 5]
    assert t.damage == [0, 0, 1, 0]


@pytest.mark.parametrize("replacement, expected", [("Fire Sale", 3), ("Tycoon", 5)])
def test_r_7_3_shadow_condition_checks_the_card_on_the_table_at_resolution(replacement, expected):
    """R-7.3 / R-7.9: Possession (even base: -3) is checked against the card the seat has at
    resolution: Double Back (2, even) was replaced, by Fire Sale (3, odd: untouched) or by
    Tycoon (8, even: 8 - 3 = 5)."""
    t = run({0: "Merchant", 2: {"card": "Double Back", "replace": replacement}, 3: "Closer"},
            hands={2: ["Double Back", replacement]}, ghosts={1: ["Possession", "Possession"]},
            haunts={1: ("Possession", 2)})
    assert t.scores == [6, 0, expected, 7]
    finish(t)


def test_r_7_3_haunted_seat_without_a_card_is_unaffected():
    """R-7.3: a haunted seat that plays nothing (empty hand, nothing to acquire) is not
    touched by its Shadow (Withering would make 0 into -2)."""
    t = table(hands={0: ["Merchant"], 1: ["Tycoon"], 3: []}, ghosts={2: ["Withering", "Withering"]},
              market=[None, None, None], rest=0)
    t.play("Merchant")
    t.play_round({1: "Tycoon"}, haunts={2: ("Withering", 3)})
    assert t.scores == [6, 8, 0, 0]
    assert list(t.r["last_competed"][:4]) == [1, 1, 0, 0]
    finish(t)


def test_r_7_4_most_recent_rule_wins_low_tide_vs_earthquake():
    """R-7.4 / R-2.4: one rule slot, the most recent change wins. Low Tide then Earthquake:
    Earthquake (lowest takes damage); Earthquake then Low Tide: Low Tide (highest)."""
    t = run({0: "Low Tide", 1: "Tycoon", 2: "Earthquake", 3: "Stockpile"})
    assert t.last_rule == "earthquake"
    assert t.damage == [0, 0, 0, 1]
    t = run({0: "Earthquake", 1: "Tycoon", 2: "Low Tide", 3: "Stockpile"})
    assert t.last_rule == "low_tide"
    assert t.damage == [0, 1, 0, 0]
    assert t.first_player == 3


def test_r_7_4_a_second_copy_does_not_toggle_the_rule_off():
    """R-7.4: two Low Tides leave Low Tide active."""
    t = run({0: "Low Tide", 1: "Tycoon", 2: "Low Tide", 3: "Merchant"})
    assert t.last_rule == "low_tide"
    assert t.damage == [0, 1, 0, 0]


def test_r_7_4_event_counter_counts_plays_attaches_replacements_and_reveals():
    """R-7.4: the event counter increments on every play (3), attach (1), replacement (1) and
    reveal (1): 6 events this round; the reveal is the last one."""
    t = table(hands={0: ["Veiled Blade"], 2: ["Double Back", "Merchant"], 3: ["Closer"]},
              ghosts={1: ["Blight", "Blight"]})
    ev0 = int(t.r["event"])
    t.play_round({0: "Veiled Blade", 2: {"card": "Double Back", "replace": "Merchant"}, 3: "Closer"},
                 haunts={1: ("Blight", 3)})
    assert int(t.r["event"]) == ev0 + 6
    # +1 Veiled Blade (face-down), +2 attach, +3 Double Back, +4 its replacement (Merchant),
    # +5 Closer, +6 the reveal of Veiled Blade
    pe = [int(x) for x in t.r["play_event"][:4]]
    assert (pe[0], pe[2], pe[3]) == (ev0 + 6, ev0 + 4, ev0 + 5)
    finish(t)


def test_r_7_4_simultaneous_reveals_take_numbers_in_turn_order():
    """R-7.4 / R-7.8: face-down cards are revealed one at a time in this round's turn order
    (First Player 2: order 2, 3, 0, 1), each reveal a new event later than every play."""
    t = run({0: "Undercurrent", 1: "Merchant", 2: "Tycoon", 3: "Veiled Blade"}, first=2)
    pe = [int(x) for x in t.r["play_event"][:4]]
    assert max(pe[1], pe[2]) < pe[3] < pe[0]
    assert t.last_rule == "low_tide"


def test_r_7_5_earthquake_switches_off_shadows():
    """R-7.5: under Earthquake the Shadow conditions are off: Possession on Tycoon: 8, not 5."""
    t = run({0: "Merchant", 2: "Tycoon", 3: "Earthquake"}, ghosts={1: ["Possession", "Possession"]},
            haunts={1: ("Possession", 2)})
    assert t.scores == [6, 0, 8, 5]
    assert t.damage == [0, 0, 0, 1]


def test_r_7_5_earthquake_switches_off_an_earlier_rule_change():
    """R-7.5: Low Tide then Earthquake: back to lowest-takes-damage, highest gets the token."""
    t = run({0: "Low Tide", 1: "Tycoon", 2: "Merchant", 3: "Aftershock"})
    assert t.last_rule == "earthquake"
    assert t.damage == [1, 0, 0, 0]
    assert t.first_player == 1


def test_r_7_5_earthquake_keeps_fired_triggers_pickpocket_discard_stays():
    """R-7.5: a Pickpocket discard that already happened stays discarded under Earthquake.
    Seat 2 (empty hand) must take Merchant from the deck and play it; Merchant draws Spite;
    Pickpocket discards Spite; then seat 3's Earthquake cannot bring it back."""
    t = table(hands={0: ["Veiled Blade"], 2: [], 3: ["Earthquake"]}, ghosts={1: ["Pickpocket", "Pickpocket"]},
              deck_top=["Stockpile", "Merchant", "Spite"])
    t.play_round({0: "Veiled Blade", 2: "Merchant", 3: "Earthquake"}, haunts={1: ("Pickpocket", 2)})
    assert t.last_rule == "earthquake"
    assert t.hand(2) == Counter()
    assert t.discard_names()["Spite"] == 1
    assert t.scores == [7, 0, 6, 5]
    finish(t)


def test_r_7_5_earthquake_keeps_direct_damage_and_market_changes():
    """R-7.5: Earthquake does not undo Backstab's HP loss (direct damage, not round damage)
    or a Market Crash (not about the round's scores or damage).
    Order 0-1-2-3: Deflection (5, names 1) / Backstab on seat 2 / Market Crash slot 0 / Earthquake."""
    t = table(hands={0: ["Deflection"], 1: ["Backstab"], 2: ["Market Crash"], 3: ["Earthquake"]},
              hp={0: 2, 1: 1, 2: 2, 3: 1}, market=["Relief", "Spite", "Closer"], deck_top=["Stockpile"] * 3 + ["Mimic"])
    t.play_round({0: {"card": "Deflection", "target": 1}, 1: {"card": "Backstab", "target": 2},
                  2: {"card": "Market Crash", "slot": 0}, 3: "Earthquake"})
    assert t.last_rule == "earthquake"
    assert t.scores == [5, 3, 5, 5]
    # Backstab (3) is lowest: seat 1 takes 1 round damage and dies; seat 2 lost 1 to Backstab
    assert t.damage == [0, 1, 0, 0]
    assert t.hp == [2, 0, 1, 1]
    assert t.discard_names()["Relief"] == 1  # crashed


@pytest.mark.parametrize("plays, damage", [
    # Deflection BEFORE the rule card: seat 0 (5) is lowest and keeps its damage
    ({0: {"card": "Deflection", "target": 1}, 1: "Tycoon", 2: "Merchant", 3: "Aftershock"}, [1, 0, 0, 0]),
    ({0: {"card": "Deflection", "target": 1}, 1: "Tycoon", 2: "Merchant", 3: "Earthquake"}, [1, 0, 0, 1]),
    # Deflection AFTER the rule card: seat 2 (5) is lowest and keeps its damage
    ({0: "Aftershock", 1: "Tycoon", 2: {"card": "Deflection", "target": 1}, 3: "Merchant"}, [0, 0, 1, 0]),
    ({0: "Earthquake", 1: "Tycoon", 2: {"card": "Deflection", "target": 1}, 3: "Merchant"}, [1, 0, 1, 0]),
])
def test_r_7_5_no_damage_redirection_under_earthquake_before_or_after(plays, damage):
    """R-7.5 / R-8.3: under Earthquake (or Aftershock) a Deflection redirects nothing, whether
    it was played before or after the rule card: the damage lands where the plain numbers put
    it, no deflect event is logged, and the same table without the rule card does redirect."""
    t = run(plays)
    assert t.last_rule == "earthquake" and t.damage == damage
    quake = next(q for q, v in plays.items() if v in ("Earthquake", "Aftershock"))
    calm = dict(plays)
    calm[quake] = "Proud Heir"  # 7, no rule change
    t2 = run(calm)
    deflector = next(q for q, v in plays.items() if isinstance(v, dict))
    assert t2.last_rule == "none" and t2.damage[deflector] == 0 and t2.damage[1] == 1


def test_r_7_5_a_later_rule_change_brings_deflection_back():
    """R-7.5: Earthquake then Low Tide: Low Tide overrides Earthquake, so the Deflection works
    again. Earthquake 5 and Deflection 5 tie highest under Low Tide; seat 1's Deflection passes
    its damage to seat 0, who takes both."""
    t = run({0: "Earthquake", 1: {"card": "Deflection", "target": 0}, 2: "Low Tide", 3: "Last Stand"})
    assert t.last_rule == "low_tide"
    assert t.scores == [5, 5, 3, 3]
    assert t.damage == [2, 0, 0, 0]


@pytest.mark.parametrize("plays, scores", [
    # a Living modifier played BEFORE Earthquake: Heavy Taxes would make Tycoon 6
    ({0: "Heavy Taxes", 1: "Tycoon", 2: "Earthquake", 3: "Merchant"}, [3, 8, 5, 6]),
    # ... and one played AFTER it: Spite on Tycoon would make it 6
    ({0: "Earthquake", 1: "Tycoon", 2: {"card": "Spite", "target": 1}, 3: "Merchant"}, [5, 8, 4, 6]),
    # board-wide and own modifiers after Aftershock: Relief (+2 to base <= 3), Closer (+2 last)
    ({0: "Aftershock", 1: "Last Stand", 2: "Relief", 3: "Closer"}, [7, 3, 4, 5]),
])
def test_r_7_5_score_modifiers_are_off_whether_played_before_or_after(plays, scores):
    """R-7.5: every score modifier is switched off, before or after the rule card."""
    t = run(plays)
    assert t.last_rule == "earthquake" and t.scores == scores


def test_r_7_5_earthquake_keeps_draws_flushes_and_exorcisms():
    """R-7.5: what cards did when played is not undone by a later Earthquake: Merchant's
    draw stays in hand, Tycoon's flushed Market stays flushed, and the Possession Exorcist
    removed stays in the Shadow discard. Order 0-4: Merchant / Ghost haunts 2 / Exorcist /
    Tycoon / Earthquake."""
    t = table(n=5, hands={0: ["Merchant"], 2: ["Exorcist"], 3: ["Tycoon"], 4: ["Earthquake"]},
              ghosts={1: ["Possession", "Possession"]}, market=["Spite", "Closer", "Low Tide"],
              deck_top=["Stockpile", "Mimic", "Last Stand", "Grave Digger", "Relief", "Relief", "Heavy Taxes",
                        "Even Keel"])
    t.play_round({0: "Merchant", 2: "Exorcist", 3: "Tycoon", 4: "Earthquake"}, haunts={1: ("Possession", 2)})
    assert t.last_rule == "earthquake"
    assert t.hand(0) == Counter({"Stockpile": 1, "Mimic": 1})  # Merchant drew Mimic
    assert t.market_names() == ["Relief", "Relief", "Heavy Taxes"]  # flushed and refilled
    assert {"Spite", "Closer", "Low Tide"} <= set(t.discard_names())
    assert t.attached(2) == [] and t.shadow_discard_names()["Possession"] == 1
    assert t.scores == [6, 0, 6, 8, 5] and t.damage == [0, 0, 0, 0, 1]
    finish(t)


def test_r_7_5_a_later_rule_change_overrides_earthquake():
    """R-7.5: Earthquake then Low Tide: Low Tide is active AND the modifiers are back.
    Spite makes Veiled Blade 7 - 2 = 5, tying Earthquake's 5 for highest: both take damage
    (with Earthquake still on, only Veiled Blade's 7 would be highest)."""
    t = run({0: "Earthquake", 1: {"card": "Spite", "target": 2}, 2: "Veiled Blade", 3: "Low Tide"})
    assert t.last_rule == "low_tide"
    assert t.scores == [5, 4, 5, 3]
    assert t.damage == [1, 0, 1, 0]
    assert t.first_player == 3


@pytest.mark.parametrize("tie_rule, damage", [("all", [0, 1, 1, 0]), ("earliest", [0, 1, 0, 0])])
def test_r_7_6_low_tide_tie_rule_applies_to_the_highest(tie_rule, damage):
    """R-7.6 / R-8.2: under Low Tide the tie rule applies to the tied highest (Tycoon 8 and
    Mimic 8): "all" hits both, "earliest" only the earlier in turn order (seat 1). The
    token goes to the lowest (Low Tide, 3)."""
    t = run({0: "Low Tide", 1: "Tycoon", 2: "Mimic", 3: "Merchant"}, rules={"tie_rule": tie_rule})
    assert t.scores == [3, 8, 8, 6]
    assert t.damage == damage
    assert t.first_player == 0


def test_r_7_6_low_tide_token_tie_goes_to_the_earliest():
    """R-7.6 / R-8.6: two lowest under Low Tide (Fire Sale 3, Low Tide 3); order 2, 3, 0, 1:
    seat 3 is earlier than seat 0."""
    t = run({0: "Low Tide", 1: "Tycoon", 2: "Merchant", 3: "Fire Sale"}, first=2)
    assert t.scores == [3, 8, 6, 3]
    assert t.first_player == 3


@pytest.mark.parametrize(
    "tie_rule, damage", [("all", [1, 1, 1, 0, 0]), ("earliest", [1, 0, 1, 0, 0])],
)
def test_r_7_7_the_cull_hits_both_lowest_groups_with_the_tie_rule(tie_rule, damage):
    """R-7.7 / R-8.2: The Cull: the lowest (2: seats 0, 1) and second-lowest (3: seat 2)
    scores take damage; with "earliest" only the earliest of each group."""
    t = run({0: "Stockpile", 1: "Grave Digger", 2: "Fire Sale", 3: "The Cull", 4: "Tycoon"}, n=5,
            rules={"tie_rule": tie_rule})
    assert t.last_rule == "cull"
    assert t.scores == [2, 2, 3, 6, 8]
    assert t.damage == damage
    assert t.first_player == 4  # the highest, as usual


def test_r_7_7_the_cull_with_one_shared_score_hits_only_that_group():
    """R-7.7: everyone scores 6: only that one group takes damage (all four); the token goes
    to the earliest of the tied highest (seat 0)."""
    t = run({0: "The Cull", 1: "Merchant", 2: "Exorcist", 3: "Merchant"})
    assert t.scores == [6, 6, 6, 6]
    assert t.damage == [1, 1, 1, 1]
    assert t.first_player == 0


def test_r_7_8_undercurrent_reveal_beats_a_later_face_up_rule():
    """R-7.8 / R-7.4: Undercurrent is played first (face-down), Earthquake later face-up;
    the reveal at resolution is the most recent event, so Low Tide wins.
    Scores: Undercurrent 3, Earthquake 5, Tycoon 8 - 2 (Spite) = 6, Spite 4."""
    t = run({0: "Undercurrent", 1: "Earthquake", 2: "Tycoon", 3: {"card": "Spite", "target": 2}})
    assert t.last_rule == "low_tide"
    assert t.scores == [3, 5, 6, 4]
    assert t.damage == [0, 0, 1, 0]
    assert t.first_player == 0


def test_r_7_9_replacement_discards_the_original_and_keeps_the_shadows():
    """R-7.9: Double Back goes to the discard; the replacement (Glass Crown) is a new event,
    resolves its text and still sees the seat's Shadow (Withering: base 8 untouched): 8 - 3."""
    t = table(hands={0: ["Merchant"], 2: ["Double Back", "Glass Crown"], 3: ["Closer"]},
              ghosts={1: ["Withering", "Withering"]}, deck_top=["Stockpile", "Spite", "Mimic"])
    t.turn("Merchant").haunt("Withering", 2)
    ev = int(t.r["event"])
    t.turn("Double Back")
    t.act("card", t.lid("Glass Crown"))
    assert t.played(2) == "Glass Crown" and t.discard_names()["Double Back"] == 1
    assert int(t.r["play_event"][2]) == ev + 2  # the play, then the replacement
    assert t.attached(2) == ["Withering"]
    t.play_round({3: "Closer"})
    assert t.scores == [6, 0, 5, 7]
    finish(t)


def test_r_7_9_rule_change_made_by_the_original_stays():
    """R-7.9 / R-7.12: a variant Double Back [draw 1, Low Tide, replace, draw 1]: the draw and
    the rule change before `replace` resolved and stay after the replacement (Tycoon); the
    draw printed after `replace` does not resolve."""
    cards = variant_cards("first_edition.json",  # the first edition's Tycoon flushes the Market
                          Double_Back=[{"op": "draw", "n": 1}, {"op": "rule", "rule": "low_tide"},
                                       {"op": "replace"}, {"op": "draw", "n": 1}])
    t = table(cards=cards, hands={0: ["Double Back", "Tycoon"], 1: ["Merchant"], 2: ["Veiled Blade"],
                                  3: ["Closer"]},
              deck_top=["Stockpile", "Mimic", "Relief", "Spite", "Last Stand", "Even Keel"])
    t.take_deck().play("Double Back")  # acquire Stockpile; draw Mimic; Low Tide
    assert t.rule == "low_tide" and t.phase == "choose_replacement"
    t.act("card", t.lid("Tycoon"))  # flush: the Market refills from Relief, Spite, Last Stand
    assert t.hand(0) == Counter({"Stockpile": 1, "Mimic": 1})  # no second draw
    assert t.market_names() == ["Relief", "Spite", "Last Stand"]
    assert t.rule == "low_tide"
    t.play_round({1: "Merchant", 2: "Veiled Blade", 3: "Closer"})
    assert t.last_rule == "low_tide"
    assert t.scores == [8, 6, 7, 7]
    assert t.damage == [1, 0, 0, 0]  # highest
    finish(t)


def test_r_7_9_a_replacement_cannot_replace_again():
    """R-7.9: Double Back replaced by a second Double Back: the second's `replace` fizzles
    (no decision) and it stays on the table scoring 2."""
    t = table(hands={0: ["Double Back", "Double Back", "Merchant"], 1: ["Tycoon"], 2: ["Veiled Blade"],
                     3: ["Closer"]}, deck_top=["Stockpile"])
    t.take_deck().play("Double Back")
    t.act("card", t.lid("Double Back"))
    assert t.actor == 1 and t.played(0) == "Double Back"
    assert t.hand(0) == Counter({"Merchant": 1, "Stockpile": 1})
    assert t.discard_names()["Double Back"] == 1
    t.play_round({1: "Tycoon", 2: "Veiled Blade", 3: "Closer"})
    assert t.scores == [2, 8, 7, 7]
    finish(t)


def test_r_7_10_face_down_cards_ask_no_choices():
    """R-7.10: the card database rejects a face-down card with a choice primitive, and no
    packaged face-down card asks for one."""
    for d in DB.living:
        if d.face_down:
            assert d.choice == 0, d.name
    from importlib import resources

    data = json.loads(resources.files("ripmarket_env.games.ripmarket.cards").joinpath("cards.json").read_text("utf-8"))
    row = next(r for r in data["living"] if r["name"] == "Veiled Blade")
    row["effect"] = [{"op": "face_down"}, {"op": "score_target", "amount": -2}]
    row["text"] = effect_text("living", row["effect"])
    with pytest.raises(CardDataError, match="face-down"):
        parse_cards(data)


def test_r_7_11_shadow_triggers_on_a_face_down_play_fire_at_the_play():
    """R-7.11: Pickpocket and Cold Hands fire when Veiled Blade is played face-down (deck
    acquisition), before the reveal: the discard happens at once and the score trigger is
    recorded; at resolution Veiled Blade scores 7 - 2 = 5."""
    t = table(5, hands={0: ["Merchant"], 3: ["Veiled Blade", "Relief"], 4: ["Tycoon"]},
              ghosts={1: ["Pickpocket", "Pickpocket"], 2: ["Cold Hands", "Cold Hands"]},
              deck_top=["Stockpile", "Mimic", "Relief"])
    t.turn("Merchant").haunt("Pickpocket", 3).haunt("Cold Hands", 3)
    t.take_deck()  # Relief: the hand is Veiled Blade + 2 Relief
    t.play("Veiled Blade")
    assert t.actor == 4  # seat 3's turn is over; its card is face-down
    assert bool(t.r["face_down"][3])
    assert t.hand(3) == Counter({"Relief": 1})  # Pickpocket already discarded one Relief
    assert list(t.r["fired"][3][:2]) == [1, 1]
    t.play_round({4: "Tycoon"})
    assert t.scores == [6, 0, 0, 5, 8]
    finish(t)


def test_r_7_12_a_face_down_replacement_is_face_down():
    """R-7.12 / R-7.9 / R-12.3: Double Back replaced by Veiled Blade: "resolves its full text
    now": the replacement goes on the table face-down, the other seats see only that a card
    was put face-down (event and observation), and it is revealed at resolution."""
    t = table(hands={0: ["Double Back", "Veiled Blade"], 1: ["Tycoon"], 2: ["Merchant"], 3: ["Closer"]})
    t.take_deck().play("Double Back")
    t.act("card", t.lid("Veiled Blade"))
    (rep,) = [e for e in t.eng.events(0) if e.kind == "replace"]
    assert rep.hidden and rep.text_for(2) == "player_0 replaces Double Back (2) with a card face-down"
    assert "Veiled Blade" in rep.text_for(0) and rep.to_dict(1)["a"] is None and rep.to_dict(1)["b"] == t.lid("Double Back")
    assert bool(t.r["face_down"][0]) and t.played(0) == "Veiled Blade"
    v = t.view(2)
    j = (0 - 2) % 4
    assert v["face_down"][j][0] == 1.0 and v["played"][j].sum() == 0.0
    t.play_round({1: "Tycoon", 2: "Merchant", 3: "Closer"})
    assert t.scores[0] == 7
    finish(t)


def test_r_7_12_a_face_down_replacement_takes_effect_at_its_reveal():
    """R-7.12 / R-7.8: Double Back replaced by Undercurrent: its Low Tide waits for the
    reveal, so it is later than seat 2's Earthquake (played after the replacement) and wins
    the rule slot (R-7.4): the highest score takes the damage."""
    t = table(hands={0: ["Double Back", "Undercurrent"], 1: ["Tycoon"], 2: ["Earthquake"], 3: ["Closer"]})
    t.take_deck().play("Double Back")
    t.act("card", t.lid("Undercurrent"))
    assert t.rule == "none" and bool(t.r["face_down"][0])
    t.play_round({1: "Tycoon", 2: "Earthquake", 3: "Closer"})
    assert t.last_rule == "low_tide"
    assert t.damage == [0, 1, 0, 0]  # Tycoon 8 is highest
    finish(t)


# =================================================================================
# R-8 Resolution
# =================================================================================


def test_r_8_1_resolution_order():
    """R-8.1: reveal (Undercurrent: Low Tide) -> scores -> who takes damage (the highest:
    Deflection 5) -> Deflection (to seat 2) -> damage (seat 2: 1 -> 0) -> death -> game
    continues (3 alive) -> token (the lowest, seat 2, died: next living clockwise, seat 3)
    -> clean-up -> Market refill."""
    t = run({0: "Undercurrent", 1: {"card": "Deflection", "target": 2}, 2: "Stockpile", 3: "Fire Sale"},
            hp={2: 1})
    assert t.last_rule == "low_tide"
    assert t.scores == [3, 5, 2, 3]
    assert t.damage == [0, 0, 1, 0]
    assert t.alive == [True, True, False, True]
    assert t.first_player == 3
    assert [t.played(p) for p in range(4)] == [None] * 4
    assert None not in t.market_names()
    assert not t.done and t.round_num == 1
    finish(t)


@pytest.mark.parametrize("tie_rule, damage", [("all", [1, 1, 0, 0]), ("earliest", [0, 1, 0, 0])])
def test_r_8_2_every_tied_lowest_takes_damage_or_only_the_earliest(tie_rule, damage):
    """R-8.2: Fire Sale 3 and Heavy Taxes 3 tie lowest (seats 0 and 1). "all": both take 1;
    "earliest": only the earliest in THIS ROUND's turn order (order 1, 2, 3, 0: seat 1, though
    seat 0 has the lower index)."""
    t = run({0: "Fire Sale", 1: "Heavy Taxes", 2: "Merchant", 3: "Closer"}, first=1,
            rules={"tie_rule": tie_rule})
    # Merchant 6 - 2 (Taxes) = 4; Closer 5 (seat 3 is not last: seat 0 plays after it)
    assert t.scores == [3, 3, 4, 5]
    assert t.damage == damage


def test_r_8_2_and_r_8_6_nobody_competing_means_no_damage_and_the_holder_keeps_the_token():
    """R-8.2 / R-8.6 / R-6.2: order 1, 2, 3, 0. Seats 1-3 have no card and nothing to
    acquire; seat 0 (holding every card) plays Spite and dies from direct damage before
    naming its target. Nobody competes: no round damage; the token holder (seat 1, alive)
    keeps it. (max_rounds=1 stops the game there: the next round would play itself.)"""
    t = table(first=1, hands={0: ["Spite"], 1: [], 2: [], 3: []}, market=[None, None, None], rest=0,
              rules={"max_rounds": 1})
    assert t.actor == 0 and t.phase == "play"
    t.play("Spite")
    t.direct_damage(0, 2)
    t.choose_seat(2)
    assert t.round_num == 1 and t.done and t.winners == [1, 2, 3]
    assert list(t.r["last_competed"][:4]) == [0, 0, 0, 0]
    assert t.damage == [0, 0, 0, 0] and t.hp == [0, 2, 2, 2]
    assert t.first_player == 1
    finish(t)


def test_r_8_3_deflection_chain():
    """R-8.3: seat 0 (3: Deflection 5 - 2 Spite) is lowest and deflects to seat 1, whose own
    unspent Deflection passes it on to seat 2."""
    t = run({0: {"card": "Deflection", "target": 1}, 1: {"card": "Deflection", "target": 2},
             2: "Tycoon", 3: {"card": "Spite", "target": 0}})
    assert t.scores == [3, 5, 8, 4]
    assert t.damage == [0, 0, 1, 0]


def test_r_8_3_a_chain_spends_the_middle_deflection_on_the_first_unit():
    """R-8.3 / R-13.4: seats 0 and 1 tie lowest (5); seat 0's unit (first in turn order) goes
    0 -> 1 -> 2, spending seat 1's Deflection, so seat 1's own unit stays with seat 1."""
    t = run({0: {"card": "Deflection", "target": 1}, 1: {"card": "Deflection", "target": 2},
             2: "Tycoon", 3: "Merchant"})
    assert t.scores == [5, 5, 8, 6]
    assert t.damage == [0, 1, 1, 0]


def test_r_8_3_deflection_loop_stops_at_a_spent_deflection():
    """R-8.3: 0 -> 1 -> 0: seat 1's Deflection sends it back to seat 0, whose Deflection is
    spent: the damage stays with seat 0."""
    t = run({0: {"card": "Deflection", "target": 1}, 1: {"card": "Deflection", "target": 0},
             2: "Tycoon", 3: {"card": "Spite", "target": 0}})
    assert t.scores == [3, 5, 8, 4]
    assert t.damage == [1, 0, 0, 0]


def test_r_8_3_tied_deflectors_each_redirect_at_most_once():
    """R-8.3: seats 0 and 1 tie lowest (5) and name each other. Seat 0's unit (first in turn
    order) goes 0 -> 1 -> 0 and spends both Deflections; seat 1's unit then stays with seat 1."""
    t = run({0: {"card": "Deflection", "target": 1}, 1: {"card": "Deflection", "target": 0},
             2: "Tycoon", 3: "Merchant"})
    assert t.scores == [5, 5, 8, 6]
    assert t.damage == [1, 1, 0, 0]


def test_r_8_3_deflection_naming_a_dead_player_does_not_redirect():
    """R-8.3 / R-6.2: seat 0's Deflection names seat 3, who dies mid-round (direct damage)
    before its turn: at resolution the damage stays with seat 0 (and seat 1 ties lowest)."""
    t = table(hands={0: ["Deflection"], 1: ["Market Crash"], 2: ["Tycoon"], 3: ["Merchant"]}, hp={3: 1})
    t.turn("Deflection", target=3)
    t.take_deck().play("Market Crash")
    t.direct_damage(3)
    t.act("market_slot", 0)
    t.turn("Tycoon")
    assert t.round_num == 1  # seat 3's Ghost turn: no victim, passed by the engine
    assert t.scores == [5, 5, 8, 0]
    assert t.damage == [1, 1, 0, 0]
    finish(t)


def test_r_8_4_damage_at_once_then_deaths_in_turn_order_from_the_first_player():
    """R-8.4 / R-6.1: seats 0 and 3 (1 HP) tie lowest and die in the same resolution. With
    the First Player at seat 2 the deaths go 3 then 0: seat 3 draws the top two Shadow cards
    (Possession, Possession), seat 0 the next two (Blight, Blight). Both count as eliminated
    at the same moment."""
    t = run({0: "Stockpile", 1: "Merchant", 2: "Tycoon", 3: "Grave Digger"}, first=2, hp={0: 1, 3: 1},
            shadow_deck_top=["Possession", "Possession", "Blight", "Blight"])
    assert t.damage == [1, 0, 0, 1]
    assert t.alive == [False, True, True, False]
    assert t.shadow_hand(3) == Counter({"Possession": 2})
    assert t.shadow_hand(0) == Counter({"Blight": 2})
    assert int(t.r["elim"][0]) == int(t.r["elim"][3])
    finish(t)


def test_r_8_5_game_end_skips_the_remaining_steps():
    """R-8.5 / R-9.1: the game ends at the check: no token move, no clean-up (the played
    cards are still on the table), no new round."""
    t = run({0: "Tycoon", 1: "Stockpile"}, n=2, first=1, hp={1: 1})
    assert t.done and t.winners == [0]
    assert t.first_player == 1
    assert t.played(0) == "Tycoon" and t.played(1) == "Stockpile"
    assert t.round_num == 0


def test_r_8_6_token_tie_goes_to_the_earliest_in_turn_order():
    """R-8.6: seats 0 and 3 tie highest (8); order 2, 3, 0, 1: seat 3 is earlier."""
    t = run({0: "Tycoon", 1: "Merchant", 2: "Stockpile", 3: "Glass Crown"}, first=2)
    assert t.scores == [8, 6, 2, 8]
    assert t.first_player == 3


def test_r_8_6_top_scorer_who_died_passes_the_token_clockwise_skipping_ghosts():
    """R-8.6 / R-5.5: the top scorer (seat 2, Tycoon 8, 1 HP) dies from a Deflection; the
    token goes to the next LIVING player clockwise from it (seat 3 is a Ghost, so seat 4),
    not to the second-highest (seat 1)."""
    t = run({0: {"card": "Deflection", "target": 2}, 1: "Veiled Blade", 2: "Tycoon", 4: "Merchant"}, n=5,
            hp={2: 1}, ghosts={3: []})
    assert t.scores == [5, 7, 8, 0, 6]
    assert t.damage == [0, 0, 1, 0, 0]
    assert not t.alive[2]
    assert t.first_player == 4
    finish(t)


def test_r_8_7_cleanup_ends_every_round_effect():
    """R-8.7: after resolution every played card is in the Living discard, every attached
    Shadow in the Shadow discard, and the rule, targets, Deflections, face-down flags and
    acquisition records are cleared."""
    t = table(hands={0: ["Low Tide"], 2: ["Deflection"], 3: ["Spite"]}, ghosts={1: ["Dread", "Dread"]})
    disc = t.discard_names()
    sdisc = t.shadow_discard_names()
    t.play_round({0: "Low Tide", 2: {"card": "Deflection", "target": 3}, 3: {"card": "Spite", "target": 0}},
                 haunts={1: ("Dread", 2)})
    assert t.last_rule == "low_tide"
    assert t.rule == "none"
    assert (t.r["played"][:4] == -1).all() and (t.r["target"][:4] == -1).all()
    assert not t.r["face_down"][:4].any() and (t.r["attached_n"][:4] == 0).all()
    gained = t.discard_names() - disc
    assert gained == Counter({"Low Tide": 1, "Deflection": 1, "Spite": 1})
    assert t.shadow_discard_names() - sdisc == Counter({"Dread": 1})
    # the new round has started: only the First Player's turn has begun
    assert [int(x) for x in t.r["acquired"][:4]] == [0, 0, 0, 0]
    finish(t)


# =================================================================================
# R-9 Game end
# =================================================================================


def test_r_9_1_last_living_player_wins_at_resolution():
    """R-9.1 / R-11.1: 2 players, the loser drops to 0 HP: the other wins: +1 / -1."""
    t = run({0: "Tycoon", 1: "Stockpile"}, n=2, hp={1: 1})
    assert t.done and t.winners == [0]
    assert t.rewards == [1.0, -1.0]


def test_r_9_1_mid_round_death_finishes_the_turn_then_ends_without_resolution():
    """R-9.1 / R-5.5: seat 0's Market Crash is waiting for its slot when seat 1 dies from
    direct damage, leaving one living player. The pending choice is still made and resolved
    (the card is crashed), then the game ends without resolving the round; the Ghost
    (seat 2) does not win."""
    t = table(3, hands={0: ["Market Crash"], 1: ["Tycoon"]}, ghosts={2: []},
              market=["Relief", "Spite", "Closer"], deck_top=["Stockpile", "Mimic"])
    t.take_deck().play("Market Crash")
    t.direct_damage(1, 3)
    assert not t.done
    t.act("market_slot", 1)
    assert t.done and t.winners == [0]
    assert t.market_names() == ["Relief", "Mimic", "Closer"]
    assert t.discard_names()["Spite"] == 1
    assert t.round_num == 0 and t.scores == [0, 0, 0]  # never resolved
    assert t.played(0) == "Market Crash"
    assert t.rewards == [1.0, -0.5, -0.5]


def test_r_9_2_sudden_death_damage_that_would_leave_nobody_alive_is_not_dealt():
    """R-9.2 (default): seats 0 and 1 (1 HP each) tie lowest: dealing the damage would leave
    nobody alive, so it is not dealt; the token goes on as usual (tie: earliest, seat 0) and
    the game goes on until one player is last alive."""
    t = run({0: "Grave Digger", 1: "Grave Digger"}, n=3, hp={0: 1, 1: 1}, ghosts={2: []})
    assert t.scores == [3, 3, 0]
    assert not t.done and t.damage == [0, 0, 0] and t.hp == [1, 1, 0] and t.alive == [True, True, False]
    assert t.first_player == 0 and t.round_num == 1 and int(t.r["spared_rounds"]) == 1
    # the next round has a loser: seat 1 (Stockpile 2) dies, seat 0 wins alone
    t.arrange(hands={0: ["Tycoon"], 1: ["Stockpile"]}, ghosts={2: []})
    t.start_round(0)
    t.play_round({0: "Tycoon", 1: "Stockpile"})
    assert t.done and t.winners == [0] and t.rewards == pytest.approx([1.0, -0.5, -0.5])
    finish(t)


@pytest.mark.parametrize("plays, hp, damage", [
    # Deflection passes seat 0's damage to seat 1: seat 0 survives, so the damage is dealt
    ({0: {"card": "Deflection", "target": 1}, 1: "Tycoon", 2: "Proud Heir"}, {0: 1, 1: 1, 2: 1}, [0, 1, 0]),
    # The Cull: the lowest two die, the highest survives: dealt
    ({0: "Stockpile", 1: "Closer", 2: "The Cull"}, {0: 1, 1: 1, 2: 1}, [1, 1, 0]),
    # two of three tie lowest at 1 HP, the third is not hurt: dealt
    ({0: "Stockpile", 1: "Stockpile", 2: "Tycoon"}, {0: 1, 1: 1, 2: 1}, [1, 1, 0]),
])
def test_r_9_2_damage_that_leaves_a_survivor_is_dealt(plays, hp, damage):
    """R-9.2: sudden death only stops damage that would leave nobody alive; when a player
    survives the round, the damage lands (a lone survivor wins, R-9.1)."""
    t = run(plays, n=3, hp=hp)
    assert t.damage == damage and t.alive == [d == 0 for d in damage]
    assert t.done == (sum(damage) == 2) and int(t.r["spared_rounds"]) == 0


def test_r_9_2_sudden_death_also_under_the_cull_and_low_tide():
    """R-9.2: The Cull at two living players damages both groups, Low Tide's tie damages
    every tied player: nobody would survive, so nobody is damaged."""
    t = run({0: "Stockpile", 1: "The Cull"}, n=3, hp={0: 1, 1: 1}, ghosts={2: []})
    assert t.last_rule == "cull" and t.damage == [0, 0, 0] and not t.done
    t = run({0: "Low Tide", 1: "Low Tide"}, n=3, hp={0: 1, 1: 1}, ghosts={2: []})
    assert t.last_rule == "low_tide" and t.damage == [0, 0, 0] and not t.done


def test_r_9_2_variant_share_win_everybody_dies_the_last_to_die_share_the_win():
    """R-9.2 variant no_survivor="share_win" (the first edition) / R-11.1: seats 0 and 1
    (1 HP each) tie lowest and both die; the Ghost at seat 2 died earlier. k = 2 co-winners
    of n = 3: each (n-k)/(k(n-1)) = 1/4; the Ghost -1/2."""
    t = run({0: "Grave Digger", 1: "Grave Digger"}, n=3, hp={0: 1, 1: 1}, ghosts={2: []},
            rules={"no_survivor": "share_win"})
    assert t.scores == [3, 3, 0]  # 2 + 1 Ghost each
    assert t.done and t.winners == [0, 1]
    assert t.rewards == pytest.approx([0.25, 0.25, -0.5])
    assert sum(t.rewards) == pytest.approx(0.0)


def test_r_9_3_max_rounds_ends_in_a_draw_among_the_living():
    """R-9.3 / R-11.1: max_rounds=1: after one resolved round (no death) the game ends; the 3
    living players are co-winners: each (4-3)/(3*3) = 1/9; the Ghost -1/3."""
    t = run({0: "Tycoon", 1: "Merchant", 2: "Stockpile"}, ghosts={3: []}, rules={"max_rounds": 1})
    assert t.done and t.winners == [0, 1, 2]
    assert t.hp == [2, 2, 1, 0]
    assert t.rewards == pytest.approx([1 / 9, 1 / 9, 1 / 9, -1 / 3])
    # the game ended after its one round: every view counts that round, not the next one
    from ripmarket_env.games.ripmarket import SPEC
    from ripmarket_env.games.ripmarket.render import render_text
    from ripmarket_env.games.ripmarket.table import describe

    assert describe(SPEC, t.eng)["turn"] == 1
    assert "round 1 " in render_text(t.eng, 0) and "round 2" not in render_text(t.eng, 0)


def test_r_9_3_default_cap_is_three_times_players_times_hp():
    """R-9.3: default max_rounds = 3 x players x start HP."""
    for n, hp in ((2, 3), (4, 2), (7, 2), (10, 2)):
        t = Table(n)
        assert t.eng.rules.rounds_cap == 3 * n * hp == int(t.eng.cfg[7])


def _two_player_game(epilogue: bool):
    t = table(2, rules={"epilogue": epilogue}, hands={0: ["Tycoon", "Merchant"], 1: ["Stockpile"]},
              hp={1: 1}, deck_top=["Relief", "Spite", "Mimic", "Closer"],
              shadow_deck_top=["Possession", "Blight"])
    paid = np.zeros(2)
    t.turn("Tycoon")
    paid += t.eng.state["step_rewards"][0, :2]
    t.turn("Stockpile")
    paid += t.eng.state["step_rewards"][0, :2]
    return t, paid


def test_r_9_4_epilogue_is_display_only():
    """R-9.4 / R-11.3: with the 2-player epilogue, the winner is haunted in one extra round
    (Ghost first, no damage); winners and rewards are identical to the game without it."""
    plain, paid_plain = _two_player_game(False)
    assert plain.done and plain.winners == [0]
    assert list(paid_plain) == [1.0, -1.0]

    epi, paid = _two_player_game(True)
    assert not epi.done and bool(epi.r["epilogue"])
    assert list(paid) == [0.0, 0.0]  # paid when the game ends, after the epilogue
    assert epi.actor == 1 and epi.phase == "ghost"  # the Ghost acts first
    epi.act("shadow", epi.sid("Possession"))  # the winner is the only victim
    hp = epi.hp
    epi.play_round({0: "Merchant"})
    assert epi.done
    assert epi.attached(0) == [] and epi.scores[0] == 3  # Merchant 6 - 3 (Possession): displayed
    assert epi.hp == hp  # no damage
    paid += epi.eng.state["step_rewards"][0, :2]
    assert epi.winners == plain.winners
    assert epi.rewards == plain.rewards
    assert list(paid) == list(paid_plain)


@pytest.mark.parametrize("case", ["draw", "co-winners"])
def test_r_9_4_no_epilogue_without_a_single_winner(case):
    """R-9.4: the epilogue follows only a game that ended with one living winner: a
    max_rounds draw or two co-winners end the game at once, as without the epilogue."""
    if case == "draw":
        t = run({0: "Tycoon", 1: "Stockpile"}, n=2, rules={"epilogue": True, "max_rounds": 1})
        assert t.winners == [0, 1]
    else:
        t = run({0: "Stockpile", 1: "Grave Digger"}, n=2, hp={0: 1, 1: 1},
                rules={"epilogue": True, "no_survivor": "share_win"})
        assert t.winners == [0, 1]
    assert t.done and not bool(t.r["epilogue"])
    assert t.rewards == [0.0, 0.0]


# =================================================================================
# R-11 Rewards
# =================================================================================


def test_r_11_1_winner_plus_one_others_minus_one_over_n_minus_one():
    """R-11.1: 4 players, one winner: +1, every other seat (Ghosts too) -1/3."""
    t = run({0: "Tycoon", 1: "Stockpile"}, hp={1: 1}, ghosts={2: [], 3: []})
    assert t.done and t.winners == [0]
    assert t.rewards == pytest.approx([1.0, -1 / 3, -1 / 3, -1 / 3])


def test_r_11_2_placement_rewards_by_elimination_order():
    """R-11.2: placement mode, 4 players. Round 1: seat 3 is out (place 4: -1). Round 2:
    seats 1 and 2 go out together (places 2-3, average 2.5: 1 - 2*1.5/3 = 0). Seat 0 wins
    (place 1: +1)."""
    t = table(rules={"reward_mode": "placement"}, hands={0: ["Tycoon"], 1: ["Merchant"], 2: ["Closer"],
                                                          3: ["Stockpile"]}, hp={3: 1})
    t.play_round({0: "Tycoon", 1: "Merchant", 2: "Closer", 3: "Stockpile"})
    assert t.alive == [True, True, True, False] and not t.done
    t.arrange(hands={0: ["Glass Crown"], 1: ["Fire Sale"], 2: ["Heavy Taxes"]}, hp={1: 1, 2: 1})
    t.start_round(0)
    t.play_round({0: "Glass Crown", 1: "Fire Sale", 2: "Heavy Taxes"})
    assert t.done and t.winners == [0]
    assert t.rewards == pytest.approx([1.0, 0.0, 0.0, -1.0])


def test_r_11_2_placement_co_winners_share_their_places():
    """R-11.2 / R-9.2 (variant no_survivor="share_win"): placement mode, 3 players: the two
    who die last together share places 1-2 (average 1.5: 1 - 2*0.5/2 = 0.5 each); the
    earlier Ghost is place 3 (-1)."""
    t = run({0: "Grave Digger", 1: "Grave Digger"}, n=3, hp={0: 1, 1: 1}, ghosts={2: []},
            rules={"reward_mode": "placement", "no_survivor": "share_win"})
    assert t.winners == [0, 1]
    assert t.rewards == pytest.approx([0.5, 0.5, -1.0])


@pytest.mark.parametrize("mode", ["win", "placement"])
def test_r_11_3_rewards_are_paid_once_at_the_end_to_every_seat(mode):
    """R-11.3: every step before the end pays 0; the final step pays every seat (Ghosts
    included) its final reward; rewards sum to zero."""
    for seed in range(3):
        t = Table(5, seed=seed, reward_mode=mode)
        rng = np.random.default_rng(seed)
        total = np.zeros(5)
        while not t.done:
            rewards, _ = t.eng.step(np.array([rng.choice(t.legal())]))
            if not t.done:
                assert not rewards[0].any()
            total += rewards[0]
        assert np.allclose(total, t.rewards)
        assert abs(sum(t.rewards)) < 1e-6
        assert all(r != 0 for r in t.rewards) or mode == "placement"


# =================================================================================
# R-13 The rulebook's named cards
# =================================================================================


def test_r_13_1_to_r_13_5_named_cards_are_in_the_database_as_specified():
    """R-13.1 Low Tide and R-13.2 Earthquake are RULE FLIPs; R-13.3 Heavy Taxes: base >= 6
    loses 2; R-13.4 Deflection redirects; R-13.5 Possession: even base loses 3."""
    def effect(name):
        return [e.as_dict() for e in DB.by_name(name).effect]

    assert effect("Low Tide") == [{"op": "rule", "rule": "low_tide"}]
    assert "RULE FLIP" in DB.by_name("Low Tide").keywords
    assert effect("Earthquake") == [{"op": "rule", "rule": "earthquake"}]
    assert "RULE FLIP" in DB.by_name("Earthquake").keywords
    assert effect("Heavy Taxes") == [{"op": "score_board", "amount": -2, "cond": "base_ge", "arg": 6}]
    assert effect("Deflection") == [{"op": "deflect"}]
    assert effect("Possession") == [{"op": "shadow_score", "amount": -3, "cond": "base_even", "arg": 0}]


@pytest.mark.parametrize("card, expected", [("Merchant", 3), ("Tycoon", 5), ("Fire Sale", 3), ("Veiled Blade", 7)])
def test_r_13_5_possession_even_base_loses_three(card, expected):
    """R-13.5: Possession: an even base (Merchant 6, Tycoon 8) loses 3; an odd base (Fire Sale
    3, Veiled Blade 7) is untouched."""
    t = run({0: "Closer", 2: card, 3: "Glass Crown"}, ghosts={1: ["Possession", "Possession"]},
            haunts={1: ("Possession", 2)})
    assert t.scores == [5, 0, expected, 8]
    finish(t)
