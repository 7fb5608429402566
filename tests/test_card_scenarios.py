"""One hand-built scenario per card design (27 Living, 11 Shadow).

Every expected number is worked out by hand from the card's printed text (docs/CARDS.md)
and the rules (docs/RULES.md); the comment next to it shows the arithmetic. Unless a test
says otherwise: 4 players, 2 HP each, seat 0 holds the First Player token, so the turn
order is 0, 1, 2, 3. "Filler" cards are cards whose text cannot change any score in the
scenario: Merchant (6, draw 1), Veiled Blade (7, face-down), Tycoon (8, Market flush),
Fire Sale (3, Market flush), Stockpile (2, draw 2).
"""

from __future__ import annotations

from collections import Counter

import pytest

from ripmarket_env.games.ripmarket.cards.loader import default_cards
from scenario import Table, serial

DB = default_cards()
COVERED: set[str] = set()


@pytest.fixture(autouse=True)
def _one_thread():
    """One-game tables: run the engine's parallel kernels on this thread (see scenario.serial)."""
    with serial():
        yield


def covers(*names):
    """Register the card designs a test exercises (checked by ``test_every_design_has_a_scenario``)."""
    for n in names:
        DB.by_name(n)  # fails on a typo
        COVERED.add(n)

    def deco(fn):
        return fn

    return deco


def table(n=4, first=0, **arrange):
    t = Table(n, seed=0)
    t.arrange(**arrange)
    t.start_round(first)
    return t


def finish(t):
    t.check_conservation()
    t.check_shadow_conservation()


def seat_view(t, viewer, seat):
    """(face_down flag, played design one-hot) of ``seat`` as ``viewer`` sees it."""
    v = t.view(viewer)
    k = (seat - viewer) % t.P
    return float(v["face_down"][k][0]), v["played"][k].copy()


# ---------------------------------------------------------------------------------
# Score manipulation
# ---------------------------------------------------------------------------------


@covers("Grave Digger")
@pytest.mark.parametrize(
    "n, ghosts, plays, expected",
    [
        # no Ghost: 2 + 1*0 = 2
        (4, {}, {0: "Grave Digger", 1: "Merchant", 2: "Tycoon", 3: "Veiled Blade"}, [2, 6, 8, 7]),
        # two Ghosts (seats 3, 4): 2 + 1*2 = 4
        (5, {3: [], 4: []}, {0: "Grave Digger", 1: "Merchant", 2: "Tycoon"}, [4, 6, 8, 0, 0]),
        # four Ghosts: 2 + 1*4 = 6
        (6, {2: [], 3: [], 4: [], 5: []}, {0: "Grave Digger", 1: "Tycoon"}, [6, 8, 0, 0, 0, 0]),
    ],
    ids=["no-ghost", "two-ghosts", "four-ghosts"],
)
def test_grave_digger_gains_one_per_ghost(n, ghosts, plays, expected):
    """R-2.8 per_ghost: Grave Digger (2) gains 1 for each Ghost at the table."""
    t = table(n, hands={p: [c] for p, c in plays.items()}, ghosts=ghosts)
    t.play_round(plays)
    assert t.scores == expected
    assert t.damage[0] == 1  # Grave Digger is the lowest score each time
    finish(t)


@covers("Proud Heir")
@pytest.mark.parametrize(
    "n, ghosts, plays, expected",
    [
        # 7 - 1*0 = 7; Stockpile (2) is lowest
        (4, {}, {0: "Proud Heir", 1: "Merchant", 2: "Tycoon", 3: "Stockpile"}, [7, 6, 8, 2]),
        # 7 - 1*2 = 5
        (5, {3: [], 4: []}, {0: "Proud Heir", 1: "Merchant", 2: "Tycoon"}, [5, 6, 8, 0, 0]),
        # 7 - 1*4 = 3
        (6, {2: [], 3: [], 4: [], 5: []}, {0: "Proud Heir", 1: "Merchant"}, [3, 6, 0, 0, 0, 0]),
    ],
    ids=["no-ghost", "two-ghosts", "four-ghosts"],
)
def test_proud_heir_loses_one_per_ghost(n, ghosts, plays, expected):
    """R-2.8 per_ghost with a negative amount: Proud Heir (7) loses 1 per Ghost."""
    t = table(n, hands={p: [c] for p, c in plays.items()}, ghosts=ghosts)
    t.play_round(plays)
    assert t.scores == expected
    low = min(expected[p] for p in plays)
    assert [t.damage[p] for p in plays] == [int(expected[p] == low) for p in plays]
    finish(t)


@covers("Haunted Relic")
def test_haunted_relic_gains_four_when_haunted():
    """R-2.8 if_haunted: Haunted Relic (2) gains 4 if a Shadow card is attached to its seat.

    Seat 1 is a Ghost holding two Dread (no draw at the cap of 2); it haunts seat 2. Dread
    (base >= 6 loses 3) cannot touch a base-2 card, so only the Relic's own text counts."""
    plays = {0: "Merchant", 2: "Haunted Relic", 3: "Haunted Relic"}
    t = table(hands={0: ["Merchant"], 2: ["Haunted Relic"], 3: ["Haunted Relic"]},
              ghosts={1: ["Dread", "Dread"]})
    t.play_round(plays, haunts={1: ("Dread", 2)})
    # seat 2: 2 + 4 = 6 (haunted); seat 3: 2 (not haunted)
    assert t.scores == [6, 0, 6, 2]
    assert t.damage == [0, 0, 0, 1]
    finish(t)


@covers("Glass Crown")
def test_glass_crown_loses_three_when_haunted():
    """R-2.8 if_haunted (negative): Glass Crown (8) loses 3 if haunted. Withering (base <= 4)
    does not touch a base-8 card."""
    plays = {0: "Merchant", 2: "Glass Crown", 3: "Glass Crown"}
    t = table(hands={0: ["Merchant"], 2: ["Glass Crown"], 3: ["Glass Crown"]},
              ghosts={1: ["Withering", "Withering"]})
    t.play_round(plays, haunts={1: ("Withering", 2)})
    # seat 2: 8 - 3 = 5 (haunted, lowest); seat 3: 8
    assert t.scores == [6, 0, 5, 8]
    assert t.damage == [0, 0, 1, 0]
    finish(t)


@covers("Last Stand")
def test_last_stand_gains_three_at_one_hp():
    """R-2.8 hp_at_most: Last Stand (3) gains 3 if its player has 1 HP or less."""
    plays = {0: "Last Stand", 1: "Last Stand", 2: "Tycoon", 3: "Veiled Blade"}
    t = table(hands={p: [c] for p, c in plays.items()}, hp={0: 1, 1: 2})
    t.play_round(plays)
    # seat 0 (1 HP): 3 + 3 = 6; seat 1 (2 HP): 3
    assert t.scores == [6, 3, 8, 7]
    assert t.damage == [0, 1, 0, 0]
    finish(t)


@covers("Closer")
def test_closer_gains_two_when_last_to_play():
    """R-2.8 if_last: Closer (5) gains 2 only for the last player of the round to play."""
    plays = {0: "Closer", 1: "Merchant", 2: "Tycoon", 3: "Closer"}
    t = table(hands={p: [c] for p, c in plays.items()})
    t.play_round(plays)
    # seat 0: 5 (three players after it); seat 3: 5 + 2 = 7 (last)
    assert t.scores == [5, 6, 8, 7]
    assert t.damage == [1, 0, 0, 0]
    finish(t)


@covers("Spite")
def test_spite_target_loses_two():
    """R-2.9: Spite (4) — the chosen player's card loses 2."""
    plays = {0: {"card": "Spite", "target": 2}, 1: "Veiled Blade", 2: "Tycoon", 3: "Stockpile"}
    t = table(hands={0: ["Spite"], 1: ["Veiled Blade"], 2: ["Tycoon"], 3: ["Stockpile"]})
    t.play_round(plays)
    # Tycoon: 8 - 2 = 6
    assert t.scores == [4, 7, 6, 2]
    assert t.damage == [0, 0, 0, 1]
    finish(t)


@covers("Heavy Taxes")
def test_heavy_taxes_every_base_six_or_more_loses_two():
    """R-2.10 / R-13.3: Heavy Taxes (3) — every played card of base 6 or more loses 2."""
    plays = {0: "Heavy Taxes", 1: "Tycoon", 2: "Merchant", 3: "Veiled Blade"}
    t = table(hands={p: [c] for p, c in plays.items()})
    t.play_round(plays)
    # 3 (base 3 untouched), 8-2=6, 6-2=4, 7-2=5
    assert t.scores == [3, 6, 4, 5]
    assert t.damage == [1, 0, 0, 0]
    finish(t)


@covers("Relief")
def test_relief_every_base_three_or_less_gains_two():
    """R-2.10: Relief (4) — every played card of base 3 or less gains 2 (Relief's own base 4
    does not qualify)."""
    plays = {0: "Relief", 1: "Fire Sale", 2: "Stockpile", 3: "Merchant"}
    t = table(hands={p: [c] for p, c in plays.items()})
    t.play_round(plays)
    # 4, 3+2=5, 2+2=4, 6 -> seats 0 and 2 tie for lowest
    assert t.scores == [4, 5, 4, 6]
    assert t.damage == [1, 0, 1, 0]
    finish(t)


@covers("Even Keel")
def test_even_keel_every_even_base_gains_one():
    """R-2.10 "yours included": Even Keel (6) — every played card with an even base gains 1,
    Even Keel itself too."""
    plays = {0: "Even Keel", 1: "Tycoon", 2: "Fire Sale", 3: "Veiled Blade"}
    t = table(hands={p: [c] for p, c in plays.items()})
    t.play_round(plays)
    # 6+1=7, 8+1=9, 3 (odd), 7 (odd)
    assert t.scores == [7, 9, 3, 7]
    assert t.damage == [0, 0, 1, 0]
    finish(t)


@covers("Mimic")
def test_mimic_copies_the_highest_other_base():
    """R-2.11: Mimic (2) scores the highest base value among the other played cards."""
    plays = {0: "Mimic", 1: "Tycoon", 2: "Veiled Blade", 3: "Merchant"}
    t = table(hands={p: [c] for p, c in plays.items()})
    t.play_round(plays)
    # Mimic -> 8 (Tycoon); seat 3's Merchant is now the lowest
    assert t.scores == [8, 8, 7, 6]
    assert t.damage == [0, 0, 0, 1]
    # token: highest 8, tie between seats 0 and 1 -> earliest in turn order (seat 0)
    assert t.first_player == 0
    finish(t)


@covers("Backstab")
def test_backstab_richer_target_loses_one_hp_at_once():
    """R-2.17: Backstab (3) — a chosen living player with MORE HP loses 1 HP at once."""
    plays = {0: {"card": "Backstab", "target": 3}, 1: "Tycoon", 2: "Merchant", 3: "Veiled Blade"}
    t = table(hands={0: ["Backstab"], 1: ["Tycoon"], 2: ["Merchant"], 3: ["Veiled Blade"]},
              hp={0: 1, 1: 1, 2: 2, 3: 2})
    t.take_deck().play("Backstab")
    assert t.phase == "choose_target"
    offsets = {t.eng.actions.decode(a)[1] for a in t.legal()}
    assert offsets == {2, 3}  # seats 2 and 3 have more HP than seat 0; seat 1 does not
    t.choose_seat(3)
    assert t.hp == [1, 1, 2, 1]  # at once, before resolution
    t.play_round(plays)
    # scores 3, 8, 6, 7: Backstab is lowest, its player drops to 0 and dies
    assert t.scores == [3, 8, 6, 7]
    assert t.hp == [0, 1, 2, 1]
    assert t.alive == [False, True, True, True]
    finish(t)


@covers("Exorcist")
def test_exorcist_sends_attached_shadows_away():
    """R-2.18: Exorcist (6) — every Shadow attached to you goes to the Shadow discard, so its
    score condition no longer applies (Dread would make it 6 - 3 = 3)."""
    plays = {0: "Veiled Blade", 2: "Exorcist", 3: "Tycoon"}
    t = table(hands={0: ["Veiled Blade"], 2: ["Exorcist"], 3: ["Tycoon"]},
              ghosts={1: ["Dread", "Dread"]})
    disc0 = t.shadow_discard_names()["Dread"]
    t.play_round(plays, haunts={1: ("Dread", 2)})
    assert t.scores == [7, 0, 6, 8]
    assert t.damage == [0, 0, 1, 0]
    assert t.shadow_discard_names()["Dread"] == disc0 + 1
    assert t.shadow_hand(1) == Counter({"Dread": 1})
    finish(t)


# ---------------------------------------------------------------------------------
# Market tampering
# ---------------------------------------------------------------------------------


@covers("Stockpile")
def test_stockpile_draws_two():
    """R-2.13: Stockpile (2) draws 2 cards from the Living Deck, one at a time."""
    t = table(hands={0: ["Stockpile", "Relief"], 1: ["Tycoon"], 2: ["Merchant"], 3: ["Veiled Blade"]},
              deck_top=["Mimic", "Closer", "Spite", "Last Stand"])
    n0 = int(t.r["deck_n"])
    t.turn("Stockpile")  # acquires Mimic, draws Closer and Spite
    assert t.hand(0) == Counter({"Relief": 1, "Mimic": 1, "Closer": 1, "Spite": 1})
    assert int(t.r["deck_n"]) == n0 - 3
    assert t.deck_top() == ["Last Stand"]
    t.play_round({1: "Tycoon", 2: "Merchant", 3: "Veiled Blade"})
    assert t.scores == [2, 8, 6, 7]
    finish(t)


@covers("Merchant")
def test_merchant_draws_one():
    """R-2.13: Merchant (6) draws 1 card from the Living Deck."""
    t = table(hands={0: ["Merchant", "Relief"], 1: ["Tycoon"], 2: ["Stockpile"], 3: ["Veiled Blade"]},
              deck_top=["Mimic", "Closer", "Spite"])
    n0 = int(t.r["deck_n"])
    t.turn("Merchant")  # acquires Mimic, draws Closer
    assert t.hand(0) == Counter({"Relief": 1, "Mimic": 1, "Closer": 1})
    assert int(t.r["deck_n"]) == n0 - 2
    t.play_round({1: "Tycoon", 2: "Stockpile", 3: "Veiled Blade"})
    assert t.scores == [6, 8, 2, 7]
    finish(t)


@covers("Fire Sale", "Tycoon")
@pytest.mark.parametrize("card, value", [("Fire Sale", 3), ("Tycoon", 8)])
def test_market_flush_discards_and_refills_every_slot(card, value):
    """R-2.15: Fire Sale (3) / Tycoon (8) — the whole Market goes to the discard, then every
    slot refills from the deck, lowest slot first."""
    others = {1: "Merchant", 2: "Veiled Blade", 3: "Closer"}
    t = table(hands={0: [card], 1: ["Merchant"], 2: ["Veiled Blade"], 3: ["Closer"]},
              market=["Relief", "Spite", "Last Stand"],
              deck_top=["Stockpile", "Mimic", "Even Keel", "Heavy Taxes", "Grave Digger"])
    t.turn(card)  # acquires Stockpile; the flush then draws Mimic, Even Keel, Heavy Taxes
    assert t.market_names() == ["Mimic", "Even Keel", "Heavy Taxes"]
    assert t.discard_names() == Counter({"Relief": 1, "Spite": 1, "Last Stand": 1})
    assert t.hand(0) == Counter({"Stockpile": 1})
    t.play_round(others)
    # card, 6, 7, Closer 5 + 2 (last) = 7
    assert t.scores == [value, 6, 7, 7]
    finish(t)


@covers("Black Market Deal")
def test_black_market_deal_takes_a_market_card():
    """R-2.16: Black Market Deal (4) — take a chosen Market card into your hand; its slot
    refills at once. It is not an acquisition (R-4.9): this turn's acquisition stays "deck"."""
    t = table(hands={0: ["Black Market Deal"], 1: ["Tycoon"], 2: ["Merchant"], 3: ["Veiled Blade"]},
              market=["Relief", "Spite", "Closer"], deck_top=["Stockpile", "Mimic"])
    t.turn("Black Market Deal", slot=1)
    assert t.hand(0) == Counter({"Stockpile": 1, "Spite": 1})
    assert t.market_names() == ["Relief", "Mimic", "Closer"]
    assert int(t.r["acquired"][0]) == 1  # deck
    t.play_round({1: "Tycoon", 2: "Merchant", 3: "Veiled Blade"})
    assert t.scores == [4, 8, 6, 7]
    finish(t)


@covers("Market Crash")
def test_market_crash_discards_one_market_card():
    """R-2.14: Market Crash (5) — a chosen Market card goes to the discard; the slot refills."""
    t = table(hands={0: ["Market Crash"], 1: ["Tycoon"], 2: ["Merchant"], 3: ["Veiled Blade"]},
              market=["Relief", "Spite", "Closer"], deck_top=["Stockpile", "Mimic"])
    t.turn("Market Crash", slot=2)
    assert t.market_names() == ["Relief", "Spite", "Mimic"]
    assert t.discard_names() == Counter({"Closer": 1})
    t.play_round({1: "Tycoon", 2: "Merchant", 3: "Veiled Blade"})
    assert t.scores == [5, 8, 6, 7]
    finish(t)


# ---------------------------------------------------------------------------------
# Rule flips and shifts
# ---------------------------------------------------------------------------------


@covers("Low Tide")
def test_low_tide_highest_takes_damage_lowest_takes_token():
    """R-7.6 / R-13.1: Low Tide (3) — the highest final score takes the damage, the lowest
    takes the First Player token."""
    plays = {0: "Low Tide", 1: "Tycoon", 2: "Merchant", 3: "Veiled Blade"}
    t = table(hands={p: [c] for p, c in plays.items()}, first=1)  # order 1, 2, 3, 0
    t.play_round(plays)
    assert t.last_rule == "low_tide"
    assert t.scores == [3, 8, 6, 7]
    assert t.damage == [0, 1, 0, 0]
    assert t.first_player == 0
    finish(t)


@covers("Earthquake", "Aftershock")
@pytest.mark.parametrize("card, value", [("Earthquake", 5), ("Aftershock", 7)])
def test_earthquake_every_card_scores_its_base(card, value):
    """R-7.5 / R-13.2: Earthquake (5) / Aftershock (7) — every card scores its base value.

    Without it Tycoon would be 8 - 2 (Spite) - 2 (Heavy Taxes) = 4, the lowest."""
    plays = {0: {"card": "Spite", "target": 1}, 1: "Tycoon", 2: "Heavy Taxes", 3: card}
    t = table(hands={0: ["Spite"], 1: ["Tycoon"], 2: ["Heavy Taxes"], 3: [card]})
    t.play_round(plays)
    assert t.last_rule == "earthquake"
    assert t.scores == [4, 8, 3, value]
    assert t.damage == [0, 0, 1, 0]
    finish(t)


@covers("The Cull")
def test_the_cull_lowest_and_second_lowest_take_damage():
    """R-7.7: The Cull (6) — the lowest and second-lowest final scores each take 1 damage;
    the token goes to the highest as usual."""
    plays = {0: "The Cull", 1: "Tycoon", 2: "Fire Sale", 3: "Stockpile"}
    t = table(hands={p: [c] for p, c in plays.items()})
    t.play_round(plays)
    assert t.last_rule == "cull"
    assert t.scores == [6, 8, 3, 2]
    assert t.damage == [0, 0, 1, 1]
    assert t.first_player == 1
    finish(t)


# ---------------------------------------------------------------------------------
# Deception
# ---------------------------------------------------------------------------------


@covers("Veiled Blade")
def test_veiled_blade_is_hidden_until_the_reveal():
    """R-2.20 / R-7.8 / R-12.3: Veiled Blade (7) is played face-down: other seats see that
    seat 2 played face-down but not the card; its owner sees it; it scores 7 at resolution."""
    vb = DB.by_name("Veiled Blade").id
    t = table(hands={0: ["Merchant"], 1: ["Tycoon"], 2: ["Veiled Blade"], 3: ["Fire Sale"]})
    t.turn("Merchant").turn("Tycoon").turn("Veiled Blade")
    assert t.actor == 3
    for viewer in (0, 1, 3):
        fd, played = seat_view(t, viewer, 2)
        assert fd == 1.0 and played.sum() == 0
    fd, played = seat_view(t, 2, 2)
    assert fd == 1.0 and played[vb] == 1.0
    # a face-up card is visible to everybody
    assert seat_view(t, 3, 1)[1][DB.by_name("Tycoon").id] == 1.0
    t.play_round({3: "Fire Sale"})
    assert t.scores == [6, 8, 7, 3]
    assert t.damage == [0, 0, 0, 1]
    finish(t)


@covers("Undercurrent")
def test_undercurrent_low_tide_takes_effect_at_the_reveal():
    """R-7.8 / R-2.20: Undercurrent (3) is face-down; its RULE FLIP (Low Tide) is not active
    while it is hidden and takes effect when it is revealed at resolution."""
    uc = DB.by_name("Undercurrent").id
    t = table(hands={0: ["Merchant"], 1: ["Undercurrent"], 2: ["Tycoon"], 3: ["Stockpile"]})
    t.turn("Merchant").turn("Undercurrent")
    assert t.rule == "none"
    assert seat_view(t, 0, 1) == (1.0, pytest.approx([0.0] * DB.n_living))
    assert seat_view(t, 1, 1)[1][uc] == 1.0
    t.play_round({2: "Tycoon", 3: "Stockpile"})
    assert t.last_rule == "low_tide"
    assert t.scores == [6, 3, 8, 2]
    assert t.damage == [0, 0, 1, 0]  # highest
    assert t.first_player == 3  # lowest
    finish(t)


@covers("Deflection")
def test_deflection_redirects_round_damage():
    """R-2.19 / R-13.4: Deflection (5) — name another living player; if you would take round
    damage, they take it instead."""
    plays = {0: {"card": "Deflection", "target": 1}, 1: "Tycoon", 2: "Merchant", 3: "Veiled Blade"}
    t = table(hands={0: ["Deflection"], 1: ["Tycoon"], 2: ["Merchant"], 3: ["Veiled Blade"]})
    t.play_round(plays)
    assert t.scores == [5, 8, 6, 7]  # seat 0 is lowest ...
    assert t.damage == [0, 1, 0, 0]  # ... seat 1 takes it
    assert t.hp == [2, 1, 2, 2]
    finish(t)


@covers("Double Back")
def test_double_back_replaces_itself_with_a_card_from_hand():
    """R-2.21 / R-7.9: Double Back (2) — a card from your hand replaces it and resolves its
    full text now; Double Back goes to the discard."""
    t = table(hands={0: ["Double Back", "Tycoon"], 1: ["Merchant"], 2: ["Veiled Blade"], 3: ["Closer"]},
              market=["Relief", "Spite", "Last Stand"],
              deck_top=["Stockpile", "Mimic", "Even Keel", "Heavy Taxes"])
    t.take_deck().play("Double Back")
    assert t.phase == "choose_replacement"
    t.act("card", t.lid("Tycoon"))
    assert t.played(0) == "Tycoon"
    assert t.discard_names()["Double Back"] == 1
    # Tycoon's own text resolved: the Market was flushed and refilled
    assert t.market_names() == ["Mimic", "Even Keel", "Heavy Taxes"]
    assert t.hand(0) == Counter({"Stockpile": 1})
    t.play_round({1: "Merchant", 2: "Veiled Blade", 3: "Closer"})
    # Tycoon 8, Merchant 6, Veiled Blade 7, Closer 5 + 2 = 7
    assert t.scores == [8, 6, 7, 7]
    assert t.damage == [0, 1, 0, 0]
    finish(t)


# ---------------------------------------------------------------------------------
# Shadow cards: a Ghost at seat 1 holding two copies haunts seat 2
# ---------------------------------------------------------------------------------

# (shadow, victim's card, acquire from Market slot 0 (True) or the deck, victim's score)
SHADOW_CASES = [
    ("Possession", "Merchant", False, 3),  # even base 6: 6 - 3
    ("Possession", "Fire Sale", False, 3),  # odd base 3: untouched
    ("Blight", "Fire Sale", False, 1),  # odd base 3: 3 - 2
    ("Blight", "Merchant", False, 6),  # even: untouched
    ("Dread", "Merchant", False, 3),  # base 6 >= 6: 6 - 3
    ("Dread", "Closer", False, 5),  # base 5: untouched (not last: seat 3 plays after)
    ("Withering", "Stockpile", False, 0),  # base 2 <= 4: 2 - 2
    ("Withering", "Merchant", False, 6),  # base 6: untouched
    ("Greed's Toll", "Merchant", True, 3),  # took from the Market: 6 - 3
    ("Greed's Toll", "Merchant", False, 6),  # took from the deck: untouched
    ("Cold Hands", "Merchant", False, 4),  # took from the deck: 6 - 2
    ("Cold Hands", "Closer", True, 5),  # took from the Market: untouched
    ("Cold Hands", "Merchant", True, 4),  # took from the Market, then Merchant drew from the deck: 6 - 2
    ("Blessing of the Meek", "Fire Sale", False, 6),  # base 3 <= 3: 3 + 3
    ("Blessing of the Meek", "Closer", False, 5),  # base 5: untouched
    ("Ancestral Favor", "Fire Sale", False, 5),  # odd: 3 + 2
    ("Ancestral Favor", "Merchant", False, 6),  # even: untouched
    ("Gilded Chains", "Stockpile", False, 6),  # base 2 <= 2: 2 + 4
    ("Gilded Chains", "Fire Sale", False, 3),  # base 3: untouched
    ("Patron's Gift", "Merchant", False, 8),  # took from the deck: 6 + 2
    ("Patron's Gift", "Closer", True, 5),  # took from the Market: untouched
    ("Patron's Gift", "Merchant", True, 8),  # took from the Market, then Merchant drew from the deck: 6 + 2
]


@covers(*{c[0] for c in SHADOW_CASES}, "Pickpocket")
@pytest.mark.parametrize(
    "shadow, card, from_market, expected", SHADOW_CASES,
    ids=[f"{s}-{c}-{'market' if m else 'deck'}" for s, c, m, _ in SHADOW_CASES],
)
def test_shadow_card_score_effect(shadow, card, from_market, expected):
    """R-2.22 (shadow_score) / R-2.23 (shadow_trigger score) / R-7.3: each Shadow card's
    condition, checked against the haunted seat's card at resolution."""
    t = table(hands={0: ["Veiled Blade"], 2: [card], 3: ["Tycoon"]}, ghosts={1: [shadow, shadow]},
              market=["Black Market Deal", "Relief", "Spite"])
    assert t.shadow_hand(1) == Counter({shadow: 2})
    plays = {0: "Veiled Blade", 2: {"card": card, "market": 0 if from_market else None}, 3: "Tycoon"}
    t.play_round(plays, haunts={1: (shadow, 2)})
    assert t.scores == [7, 0, expected, 8]
    assert t.shadow_hand(1) == Counter({shadow: 1})  # one copy attached, none drawn (cap 2)
    finish(t)


def test_pickpocket_discards_after_a_deck_acquisition():
    """R-2.23 discard_random / R-4.8: Pickpocket — if the haunted player took from the deck,
    they discard 1 card at random from hand AFTER their card's own text.

    Seat 2 has an empty hand, so it must take from the deck (Merchant) and play it
    (R-12.1); Merchant draws Spite; then Pickpocket discards the only card in hand: Spite.
    (Had it fired before Merchant's text, the hand would have been empty then and Spite
    would still be in hand.)"""
    t = table(hands={0: ["Veiled Blade"], 2: [], 3: ["Tycoon"]}, ghosts={1: ["Pickpocket", "Pickpocket"]},
              market=["Black Market Deal", "Relief", "Closer"], deck_top=["Stockpile", "Merchant", "Spite"])
    t.play_round({0: "Veiled Blade", 2: "Merchant", 3: "Tycoon"}, haunts={1: ("Pickpocket", 2)})
    assert t.hand(2) == Counter()
    assert t.discard_names()["Spite"] == 1
    assert t.scores == [7, 0, 6, 8]  # Pickpocket has no score effect
    finish(t)


def test_pickpocket_does_nothing_after_a_market_acquisition():
    """R-2.23: Pickpocket's trigger needs a card taken from the Living Deck; taking from the
    Market and playing a card that draws nothing avoids it."""
    t = table(hands={0: ["Veiled Blade"], 2: ["Closer"], 3: ["Tycoon"]},
              ghosts={1: ["Pickpocket", "Pickpocket"]},
              market=["Black Market Deal", "Relief", "Merchant"], deck_top=["Stockpile", "Spite", "Mimic"])
    t.play_round({0: "Veiled Blade", 2: {"card": "Closer", "market": 1}, 3: "Tycoon"},
                 haunts={1: ("Pickpocket", 2)})
    # seat 0 took Stockpile; seat 2 took Relief from the Market (Spite refilled its slot):
    # nothing was discarded
    assert t.hand(2) == Counter({"Relief": 1})
    assert t.discard_names()["Relief"] == 0
    assert t.scores == [7, 0, 5, 8]
    finish(t)


@covers("Greed's Toll", "Pickpocket", "Cold Hands", "Patron's Gift")
@pytest.mark.parametrize("shadow, card, score, hand_n", [
    # took from the Living Deck, then Black Market Deal took a Market card: 4 - 3
    ("Greed's Toll", "Black Market Deal", 1, 2),
    # took Relief from the Market, then Stockpile drew 2 from the Living Deck: 2 - 2
    ("Cold Hands", "Stockpile", 0, 3),
    # took Relief from the Market, then Merchant drew 1 from the Living Deck: 6 + 2
    ("Patron's Gift", "Merchant", 8, 2),
    # took Relief from the Market, then Merchant drew 1: one of the 2 cards is discarded
    ("Pickpocket", "Merchant", 6, 1),
])
def test_r_4_9_a_card_taken_by_the_played_cards_text_counts(shadow, card, score, hand_n):
    """R-4.9 / R-2.23: "took a card from the Market / the Living Deck this turn" means any
    card taken this turn before the trigger fires (R-4.8), the acquisition's or one taken by
    the played card's own text (Black Market Deal, Merchant, Stockpile), as printed."""
    t = table(hands={0: ["Veiled Blade"], 2: [card], 3: ["Tycoon"]}, ghosts={1: [shadow, shadow]},
              market=["Spite", "Relief", "Closer"], deck_top=["Stockpile", "Mimic", "Grave Digger", "Last Stand"])
    spec = ({"card": card, "slot": 0} if card == "Black Market Deal" else {"card": card, "market": 1})
    t.play_round({0: "Veiled Blade", 2: spec, 3: "Tycoon"}, haunts={1: (shadow, 2)})
    assert t.scores[2] == score
    assert int(t.r["hand_n"][2]) == hand_n
    finish(t)


def test_every_design_has_a_scenario():
    """Every Living and Shadow design in cards.json has a scenario above."""
    names = {d.name for d in DB.living + DB.shadow}
    assert len(DB.living) == 27 and len(DB.shadow) == 11
    assert names - COVERED == set()
