"""Scenarios for the designs the second edition changed (docs/BALANCE.md, "Design rationale").

The first edition's scenarios (tests/test_card_scenarios.py) pin every effect primitive;
these pin the packaged second edition's new numbers and combinations, each worked out by
hand from the card text (docs/CARDS.md). 4 players, 2 HP each, seat 0 holds the First
Player token (turn order 0, 1, 2, 3). Fillers: Merchant (6, draw 1), Veiled Blade (6,
face-down), Glass Crown (7; loses 3 only when haunted), Proud Heir (7; loses 1 per Ghost,
none unless a test has a Ghost).
"""

from __future__ import annotations

from collections import Counter

import pytest

from ripmarket_env.games.ripmarket.cards.loader import default_cards
from scenario import serial
from test_rules_resolution import finish
from test_rules_resolution import table as _table

DB = default_cards()


@pytest.fixture(autouse=True)
def _one_thread():
    with serial():
        yield


def table(n=4, first=0, **arrange):
    return _table(n, first, cards=DB, **arrange)


def test_second_edition_values():
    """The changed printed values (docs/CARDS.md)."""
    v = {d.name: int(d.value) for d in DB.living}
    assert {k: v[k] for k in ("Grave Digger", "Double Back", "Heavy Taxes", "Low Tide", "Undercurrent",
                              "Veiled Blade", "Tycoon", "Aftershock", "Glass Crown", "Closer",
                              "Haunted Relic")} == {
        "Grave Digger": 2, "Double Back": 3, "Heavy Taxes": 5, "Low Tide": 3, "Undercurrent": 7,
        "Veiled Blade": 6, "Tycoon": 7, "Aftershock": 6, "Glass Crown": 7, "Closer": 7, "Haunted Relic": 6}
    assert max(v.values()) == 7  # no Living card prints an 8


def test_double_back_draws_then_is_replaced_by_the_drawn_card():
    """R-2.21 / R-7.9 / R-4.5: Double Back (3) draws 1, then a card from hand (here the card
    just drawn) replaces it and resolves its text."""
    t = table(hands={0: ["Double Back"], 1: ["Merchant"], 2: ["Veiled Blade"], 3: ["Proud Heir"]},
              market=["Relief", "Spite", "Last Stand"], deck_top=["Stockpile", "Glass Crown", "Mimic"])
    t.take_deck().play("Double Back")  # acquires Stockpile; Double Back draws Glass Crown
    assert t.phase == "choose_replacement"
    assert t.hand(0) == Counter({"Stockpile": 1, "Glass Crown": 1})
    t.act("card", t.lid("Glass Crown"))
    assert t.played(0) == "Glass Crown"
    assert t.discard_names()["Double Back"] == 1
    t.play_round({1: "Merchant", 2: "Veiled Blade", 3: "Proud Heir"})
    assert t.scores == [7, 6, 6, 7]
    assert t.damage == [0, 1, 1, 0]  # Merchant and Veiled Blade tie at 6
    finish(t)


def test_fire_sale_flushes_then_draws():
    """R-2.15 then R-2.13: Fire Sale (6) — the Market goes to the discard and refills, then
    its player draws 1 from the deck (after the refill)."""
    t = table(hands={0: ["Fire Sale"], 1: ["Merchant"], 2: ["Veiled Blade"], 3: ["Proud Heir"]},
              market=["Relief", "Spite", "Last Stand"],
              deck_top=["Stockpile", "Mimic", "Even Keel", "Heavy Taxes", "Grave Digger", "Closer"])
    t.turn("Fire Sale")  # acquires Stockpile; refill Mimic, Even Keel, Heavy Taxes; draws Grave Digger
    assert t.market_names() == ["Mimic", "Even Keel", "Heavy Taxes"]
    assert t.discard_names() == Counter({"Relief": 1, "Spite": 1, "Last Stand": 1})
    assert t.hand(0) == Counter({"Stockpile": 1, "Grave Digger": 1})
    t.play_round({1: "Merchant", 2: "Veiled Blade", 3: "Proud Heir"})
    assert t.scores == [6, 6, 6, 7]
    assert t.damage == [1, 1, 1, 0]  # three tie for lowest (R-8.2 tie_rule "all")
    finish(t)


def test_tycoon_every_base_four_or_less_loses_one():
    """R-2.10: Tycoon (7) — every played card of base 4 or less loses 1 (Tycoon's own 7 does not)."""
    t = table(hands={0: ["Tycoon"], 1: ["Spite"], 2: ["Merchant"], 3: ["Mimic"]})
    t.play_round({0: "Tycoon", 1: {"card": "Spite", "target": 2}, 2: "Merchant", 3: "Mimic"})
    # 7; Spite 4 - 1 = 3; Merchant 6 - 2 (Spite) = 4; Mimic (base 2): Tycoon's -1 came first,
    # then Mimic's own "becomes" (Tycoon's 7, the highest) overrides it (R-7.1: a set-to
    # replaces the running total)
    assert t.scores == [7, 3, 4, 7]
    assert t.damage == [0, 1, 0, 0]
    finish(t)


def test_aftershock_flushes_the_market_and_wipes_the_scores():
    """R-2.15 + R-7.5: Aftershock (6) — the Market is flushed and every card scores its base.

    Without it Spite (-2 on Glass Crown) and Heavy Taxes (-2 on every base 6 or more) would
    make Glass Crown 7 - 2 - 2 = 3 and Aftershock 6 - 2 = 4; wiped, the cards score 4, 7, 5, 6."""
    t = table(hands={0: ["Spite"], 1: ["Glass Crown"], 2: ["Heavy Taxes"], 3: ["Aftershock"]},
              market=["Relief", "Mimic", "Last Stand"],
              deck_top=["Stockpile", "Merchant", "Proud Heir", "Closer", "Even Keel", "Exorcist", "Backstab"])
    t.play_round({0: {"card": "Spite", "target": 1}, 1: "Glass Crown", 2: "Heavy Taxes", 3: "Aftershock"})
    assert t.last_rule == "earthquake"
    assert t.scores == [4, 7, 5, 6]
    assert t.damage == [1, 0, 0, 0]
    assert t.discard_names()["Relief"] == 1 and t.discard_names()["Last Stand"] == 1
    finish(t)


def test_closer_loses_one_for_the_last_living_player_to_play():
    """R-2.8 if_last: Closer (7) loses 1 only for the last living player of the round to play
    (the last seat sees every other card, so it pays for the safety)."""
    plays = {0: "Closer", 1: "Merchant", 2: "Veiled Blade", 3: "Closer"}
    t = table(hands={p: [c] for p, c in plays.items()})
    t.play_round(plays)
    # seat 0: 7 (three players after it); seat 3: 7 - 1 = 6 (last), tied lowest with 6s
    assert t.scores == [7, 6, 6, 6]
    assert t.damage == [0, 1, 1, 1]
    finish(t)


def test_closer_counts_the_last_living_player_not_the_last_seat():
    """R-2.8 if_last: with seat 3 a Ghost, seat 2 is the last living player to play: its
    Closer loses 1, seat 0's does not."""
    plays = {0: "Closer", 1: "Merchant", 2: "Closer"}
    t = table(hands={0: ["Closer"], 1: ["Merchant"], 2: ["Closer"]}, ghosts={3: ["Dread", "Dread"]})
    t.play_round(plays)
    assert t.scores == [7, 6, 6, 0]
    assert t.damage == [0, 1, 1, 0]
    finish(t)


@pytest.mark.parametrize("card, haunted, unhaunted, damage", [
    ("Haunted Relic", 7, 6, [1, 0, 0, 1]),  # 6 + 1 when haunted; seat 0's 6 ties seat 3's 6
    ("Glass Crown", 4, 7, [0, 0, 1, 0]),  # 7 - 3 when haunted, the lowest
])
def test_if_haunted_cards_of_the_second_edition(card, haunted, unhaunted, damage):
    """R-2.8 if_haunted: Haunted Relic (6) gains 1 and Glass Crown (7) loses 3 if a Shadow
    card is attached to its player. Seat 1 is a Ghost holding two Withering (base 2 or
    less), which cannot touch either card, so only the card's own text counts."""
    t = table(hands={0: ["Merchant"], 2: [card], 3: [card]}, ghosts={1: ["Withering", "Withering"]})
    t.play_round({0: "Merchant", 2: card, 3: card}, haunts={1: ("Withering", 2)})
    assert t.scores == [6, 0, haunted, unhaunted]
    assert t.damage == damage
    finish(t)


# (shadow, victim's card, acquire from Market slot 0 (True) or the deck, victim's score)
SHADOW_CASES = [
    ("Blight", "The Cull", False, 4),  # base 7 >= 7: 7 - 3
    ("Blight", "Merchant", False, 6),  # base 6: untouched
    ("Dread", "Merchant", False, 2),  # base 6 >= 6: 6 - 4
    ("Withering", "Mimic", False, 3),  # Mimic copies 7 (Glass Crown); base 2 <= 2: 7 - 4
    ("Withering", "Grave Digger", False, -1),  # 2 + 1 (one Ghost); base 2 <= 2: - 4
    ("Withering", "Low Tide", False, 3),  # base 3: untouched (base 2 or less only)
    ("Greed's Toll", "Merchant", True, 2),  # took from the Market: 6 - 4
    ("Greed's Toll", "Merchant", False, 6),  # took from the deck: untouched
    ("Cold Hands", "Merchant", True, 3),  # took from the Market: 6 - 3
    ("Cold Hands", "Merchant", False, 6),  # took from the deck: untouched
    ("Blessing of the Meek", "Grave Digger", False, 7),  # 2 + 1 (one Ghost); base 2 <= 4: + 4
    ("Blessing of the Meek", "Merchant", False, 6),  # base 6: neither
    ("Blessing of the Meek", "The Cull", False, 5),  # base 7 >= 7: the string, 7 - 2
    ("Ancestral Favor", "Haunted Relic", False, 6),  # even: 6 + 1 (haunted, its own text) - 1
    ("Ancestral Favor", "Merchant", False, 5),  # even: the string, 6 - 1
    ("Gilded Chains", "Mimic", False, 12),  # Mimic 7, base 2 <= 3: 7 + 5
    ("Gilded Chains", "Grave Digger", False, 8),  # 2 + 1 (one Ghost); base 2 <= 3: + 5
    ("Gilded Chains", "Merchant", False, 4),  # base 6 >= 6: the string, 6 - 2
    ("Patron's Gift", "Merchant", False, 9),  # took from the deck: 6 + 3
    ("Patron's Gift", "Merchant", True, 9),  # Market, but Merchant's draw is from the deck: 6 + 3
    ("Patron's Gift", "The Cull", True, 5),  # base 7 >= 7: the string, 7 - 2
    ("Patron's Gift", "The Cull", False, 8),  # deck: 7 + 3 - 2
]


@pytest.mark.parametrize(
    "shadow, card, from_market, expected", SHADOW_CASES,
    ids=[f"{s}-{c}-{'market' if m else 'deck'}" for s, c, m, _ in SHADOW_CASES],
)
def test_second_edition_shadow_card(shadow, card, from_market, expected):
    """R-2.22 / R-2.23 / R-7.3: the second edition's Shadow numbers, blessings' strings included."""
    t = table(hands={0: ["Veiled Blade"], 2: [card], 3: ["Glass Crown"]}, ghosts={1: [shadow, shadow]},
              market=["Black Market Deal", "Relief", "Spite"])
    plays = {0: "Veiled Blade", 2: {"card": card, "market": 0 if from_market else None}, 3: "Glass Crown"}
    t.play_round(plays, haunts={1: (shadow, 2)})
    assert t.scores == [6, 0, expected, 7]
    finish(t)


def test_pickpocket_watches_the_market():
    """R-2.23: Pickpocket — after a Market acquisition the haunted player discards 1 card at
    random from hand; after a deck acquisition nothing happens."""
    t = table(hands={0: ["Veiled Blade"], 2: ["Merchant"], 3: ["Glass Crown"]},
              ghosts={1: ["Pickpocket", "Pickpocket"]},
              market=["Black Market Deal", "Relief", "Closer"], deck_top=["Stockpile", "Spite", "Mimic"])
    t.play_round({0: "Veiled Blade", 2: {"card": "Merchant", "market": 1}, 3: "Glass Crown"},
                 haunts={1: ("Pickpocket", 2)})
    # seat 2 took Relief from the Market and Merchant drew Mimic; one of the two was discarded
    assert sum(t.hand(2).values()) == 1
    assert t.discard_names()["Relief"] + t.discard_names()["Mimic"] == 1
    assert t.scores == [6, 0, 6, 7]
    finish(t)
