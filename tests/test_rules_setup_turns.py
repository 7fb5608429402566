"""Rules tests: setup, cards, rounds, turns, Ghosts, death, decks, engine conventions.

Covers R-1, R-2, R-3, R-4, R-5, R-6, R-10 and R-12 of docs/RULES.md; every test names the
rule it exercises. Expected values are derived by hand from the rules text. Unless a test
says otherwise: 4 players (2 HP), seat 0 holds the First Player token (turn order 0-1-2-3).
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from ripmarket_env.games.ripmarket.cards import registry as REG
from ripmarket_env.games.ripmarket.cards.loader import load_cards, default_cards
from ripmarket_env.games.ripmarket import Engine, RulesConfig
from ripmarket_env.games.ripmarket.config import ConfigError
from ripmarket_env.games.ripmarket.engine import IllegalActionError
from scenario import Table, serial, variant_cards

DB = default_cards()
FIRST = load_cards("first-edition")


@pytest.fixture(autouse=True)
def _one_thread():
    """One-game tables: run the engine's parallel kernels on this thread (see scenario.serial)."""
    with serial():
        yield
REPO = Path(__file__).resolve().parents[1]


def table(n=4, first=0, seed=0, cards=None, rules=None, **arrange):
    # the hand-arranged rounds were written with the first edition's numbers (docs/BALANCE.md)
    t = Table(n, seed=seed, cards=FIRST if cards is None else cards, **(rules or {}))
    t.arrange(**arrange)
    t.start_round(first)
    return t


def finish(t):
    t.check_conservation()
    t.check_shadow_conservation()


def all_shadow_names():
    return [d.name for d in FIRST.shadow for _ in range(d.copies)]  # the tables' cards


def target_seats(t):
    """Seats offered by the current target/victim decision."""
    return sorted((t.actor + t.eng.actions.decode(a)[1]) % t.P for a in t.legal())


def random_game(n, seed, check=None, **rules):
    """Play one game with uniformly random legal actions; ``check(t, before)`` after each step."""
    t = Table(n, seed=seed, **rules)
    rng = np.random.default_rng(1000 + seed)
    for _ in range(5000):
        if t.done:
            return t
        before = t.r.copy()
        t.eng.step(np.array([rng.choice(t.legal())]))
        if check is not None:
            check(t, before)
    raise AssertionError("random game did not end")


# =================================================================================
# R-1 Setup and scaling
# =================================================================================


@pytest.mark.parametrize("n", [-1, 0, 1, 11, 12])
def test_r_1_1_player_count_outside_2_to_10_is_rejected(n):
    """R-1.1: any player count other than 2-10 is rejected with a message."""
    with pytest.raises(ConfigError, match=r"num_players=.*allowed: an integer from 2 to 10"):
        RulesConfig(num_players=n)


def test_r_1_1_every_player_count_from_2_to_10_starts():
    """R-1.1: 2-10 players, one per seat."""
    for n in range(2, 11):
        eng = Engine(RulesConfig(num_players=n))
        eng.reset([n])
        st = eng.state[0]
        assert st["alive"][:n].all() and not st["alive"][n:].any()


@pytest.mark.parametrize(
    "n, hp, market, cap",
    [(2, 3, 3, 2), (3, 3, 3, 2), (4, 2, 3, 2), (5, 2, 3, 2), (6, 2, 3, 2),
     (7, 2, 4, 3), (8, 2, 4, 3), (9, 2, 4, 3), (10, 2, 4, 3)],
)
def test_r_1_2_scaling_table(n, hp, market, cap):
    """R-1.2: start HP, Market slots and Ghost cap by starting player count."""
    rules = RulesConfig(num_players=n)
    assert (rules.hp, rules.market, rules.cap) == (hp, market, cap)
    eng = Engine(rules)
    eng.reset([3])
    st = eng.state[0]
    assert list(st["hp"][:n]) == [hp] * n
    assert (st["market"][:market] >= 0).all() and (st["market"][market:] == -1).all()


def test_r_1_2_scaling_is_fixed_when_players_die():
    """R-1.2: a 7-player game keeps 4 Market slots and a Ghost cap of 3 after four deaths
    (3 living players would be the 2-3 bracket: 3 slots, cap 2)."""
    t = table(7, hands={0: ["Merchant"], 1: ["Tycoon"], 2: ["Veiled Blade"]},
              ghosts={3: ["Blight", "Blight"], 4: [], 5: [], 6: []})
    assert t.eng.rules.market == 4
    t.play_round({0: "Merchant", 1: "Tycoon", 2: "Veiled Blade"})
    assert int(t.r["shadow_n"][3]) == 3  # 2 < cap 3: drew one
    assert all(x is not None for x in t.market_names()) and len(t.market_names()) == 4
    assert (t.r["market"][:4] >= 0).all()
    finish(t)


@pytest.mark.parametrize("n", [2, 4, 7, 10])
def test_r_1_3_setup(n):
    """R-1.3: Market filled, 3 Living cards per player (the rulebook's setup, the default),
    start HP, everyone living, no Shadow cards, a First Player; the rest of the Living Deck
    and the whole Shadow Deck wait."""
    rules = RulesConfig(num_players=n)
    eng = Engine(rules)
    eng.reset([11])
    st = eng.state[0]
    assert [int(x) for x in st["hand_n"][:n]] == [3] * n
    assert int(st["deck_n"]) == 64 - rules.market - 3 * n
    assert int(st["discard_n"]) == 0
    assert int(st["shadow_deck_n"]) == 32 and int(st["shadow_n"][:n].sum()) == 0
    assert st["alive"][:n].all() and list(st["hp"][:n]) == [rules.hp] * n
    assert 0 <= int(st["first_player"]) < n
    assert int(st["round_num"]) == 0


def test_r_1_3_first_player_is_uniform_over_seeds():
    """R-1.3: the First Player is chosen uniformly at random from the game's seed."""
    eng = Engine(RulesConfig(num_players=4), batch_size=4000)
    eng.reset(list(range(4000)))
    counts = np.bincount(eng.state["first_player"].astype(np.int64), minlength=4)
    assert counts.sum() == 4000
    assert (np.abs(counts - 1000) < 120).all(), counts  # ~4 standard deviations


def test_r_1_3_hand_size_variant():
    """R-1.3 / R-1.4: the starting hand is the config's hand_size (default 3), plus the
    opening bonus of the first seats (R-1.3)."""
    eng = Engine(RulesConfig(num_players=3, hand_size=5, opening_bonus="none"))
    eng.reset([1])
    assert list(eng.state[0]["hand_n"][:3]) == [5, 5, 5]


def test_r_1_4_defaults():
    """R-1.4: the defaults are the rulebook's values and the second edition's rulings (the
    Ghosts haunt first, R-3.3; no extra card at setup, R-1.3; token ties to the latest,
    R-8.6; a Deflection names a player with more HP than its owner, R-8.3; the first round
    deals no round damage, R-8.2)."""
    r = RulesConfig(num_players=5)
    assert (r.tie_rule, r.epilogue, r.ghost_phase, r.reward_mode, r.hand_size) == ("all", False, "first", "win", 3)
    assert (r.opening_bonus, r.token_tie, r.deflect_target, r.no_survivor, r.grace_round) == (
        "none", "latest", "stronger", "sudden_death", True)
    assert r.rounds_cap == 3 * 5 * 2


@pytest.mark.parametrize(
    "field, value, allowed",
    [("start_hp", 0, "1 to 9"), ("start_hp", 10, "1 to 9"), ("market_size", 5, "1 to 4"),
     ("ghost_cap", 0, "1 to 5"), ("ghost_cap", 6, "1 to 5"), ("tie_rule", "some", "all | earliest"),
     ("epilogue", "yes", "true or false"), ("ghost_phase", "last", "in_turn | first"),
     ("max_rounds", 0, "1 to 1000"), ("max_rounds", 1001, "1 to 1000"),
     ("reward_mode", "score", "win | placement"), ("hand_size", 7, "1 to 6"),
     ("grace_round", 1, "true or false"), ("deflect_target", "weaker", "any | not_weaker | stronger")],
)
def test_r_1_4_invalid_variant_is_rejected_with_field_value_and_allowed(field, value, allowed):
    """R-1.4: an invalid value is rejected when the config is built, naming the field, the
    value and the allowed values."""
    with pytest.raises(ConfigError) as e:
        RulesConfig(num_players=2, **{field: value})
    msg = str(e.value)
    assert field in msg and repr(value) in msg and allowed in msg


def test_r_1_5_market_slots_are_ordered_and_refill_in_place():
    """R-1.5 / R-4.1: taking from slot 1 refills slot 1 from the deck; the other slots keep
    their cards and order. ``market_size`` sets the number of slots."""
    t = table(hands={0: ["Merchant"], 1: ["Tycoon"], 2: ["Spite"], 3: ["Closer"]},
              market=["Relief", "Mimic", "Last Stand"], deck_top=["Even Keel", "Heavy Taxes"])
    t.take_market(1)
    assert t.market_names() == ["Relief", "Even Keel", "Last Stand"]
    assert t.hand(0) == Counter({"Merchant": 1, "Mimic": 1})
    assert int(t.r["acquired"][0]) == 2  # Market
    for m in (1, 2, 4):
        mk = Table(3, market_size=m).r["market"]
        assert (mk[:m] >= 0).all() and (mk[m:] == -1).all()


# =================================================================================
# R-2 Cards
# =================================================================================


def test_r_2_1_living_deck_composition():
    """R-2.1: 64 Living cards, printed values 2-8, in four families; every card has an effect.
    (The ruling: 2-8 bounds the printed values; the loader refuses a 1 or a 9, see
    tests/test_cards_db.py. The second edition prints every value from 2 to 7.)"""
    assert DB.living_deck_size == 64 == sum(d.copies for d in DB.living)
    assert {d.value for d in DB.living} == set(range(2, 8))
    fam = Counter()
    for d in DB.living:
        fam[d.family] += d.copies
        assert len(d.effect) >= 1
    assert set(fam) == {"score", "market", "rule", "deception"}
    assert sum(fam.values()) == 64


def test_r_2_2_shadow_deck_composition():
    """R-2.2: 32 unnumbered Shadow cards, curses and blessings, each with a condition the
    victim can see (a base value/parity or an acquisition source) and a counterplay."""
    assert DB.shadow_deck_size == 32 == sum(d.copies for d in DB.shadow)
    assert {d.family for d in DB.shadow} == {"curse", "blessing"}
    for d in DB.shadow:
        assert d.value is None
        assert d.counterplay and d.counterplay.strip()
        for e in d.effect:
            assert e.op in ("shadow_score", "shadow_trigger")
            if e.op == "shadow_score":
                assert e["cond"] in REG.BASE_CONDS
            else:
                assert e["source"] in REG.TRIGGER_SOURCES


def _check_everything(t, before):
    t.check_conservation()
    t.check_shadow_conservation()
    n = t.P
    hp0, hp1 = before["hp"][:n], t.r["hp"][:n]
    assert (hp1 <= hp0).all(), "R-2.5: HP never increases"
    assert not (t.r["alive"][:n] & ~before["alive"][:n]).any(), "R-2.5: no resurrection"
    assert (hp1 >= 0).all(), "R-6.3"


@pytest.mark.parametrize("n", [2, 4, 7])
def test_r_2_3_and_r_2_5_random_games_conserve_cards_and_never_heal(n):
    """R-2.3: every card is in exactly one place and counts per design are conserved over
    whole games; R-2.5: no HP is ever regained and no Ghost comes back (checked after every
    step of random games); R-9.3: random games end well before the safety cap."""
    for seed in range(6):
        t = random_game(n, seed, _check_everything)
        assert t.round_num < t.eng.rules.rounds_cap


def test_r_2_4_printed_text_beats_the_rulebook_and_latest_card_wins():
    """R-2.4: Low Tide's printed text overrides the rulebook's "lowest takes damage"; of two
    conflicting rule cards the most recent wins (Low Tide, then Earthquake: Earthquake)."""
    plays = {0: "Low Tide", 1: "Tycoon", 2: "Earthquake", 3: "Stockpile"}
    t = table(hands={p: [c] for p, c in plays.items()})
    t.play_round(plays)
    assert t.last_rule == "earthquake"
    assert t.damage == [0, 0, 0, 1]  # lowest (Mimic: a plain 2 under Earthquake), not the highest
    plays = {0: "Tycoon", 1: "Low Tide", 2: "Merchant", 3: "Stockpile"}
    t = table(hands={p: [c] for p, c in plays.items()})
    t.play_round(plays)
    assert t.last_rule == "low_tide"
    assert t.damage == [1, 0, 0, 0]  # the printed text: the highest takes the damage


def test_r_2_5_no_primitive_heals():
    """R-2.5: no card heals or resurrects: the registry has no such primitive and the only HP
    primitive takes HP away."""
    names = {p.name for p in REG.PRIMITIVES}
    assert not {n for n in names if "heal" in n or "resurrect" in n or "revive" in n}
    dmg = REG.BY_NAME["damage_target"].params[0]
    assert dmg.lo >= 1


def test_r_2_6_every_design_is_well_formed():
    """R-2.6: id, name, deck, value, copies, family, keywords, text and 1-4 primitives of the
    registry from the right deck; rule primitives carry RULE FLIP / RULE SHIFT; the text is
    the one generated from the effect."""
    from ripmarket_env.games.ripmarket.cards.text import effect_text

    for deck, designs in (("living", DB.living), ("shadow", DB.shadow)):
        for i, d in enumerate(designs):
            assert d.id == i and d.name and d.deck == deck and d.copies >= 1
            assert 1 <= len(d.effect) <= 4
            assert all(REG.BY_NAME[e.op].deck == deck for e in d.effect)
            if deck == "living":
                assert 2 <= d.value <= 8
            if any(e.op == "rule" for e in d.effect):
                assert {"RULE FLIP", "RULE SHIFT"} & set(d.keywords)
            assert d.text == effect_text(deck, [e.as_dict() for e in d.effect])


def test_r_2_7_target_choice_offers_other_living_players_only():
    """R-2.7 target: another living player (not yourself, not a Ghost)."""
    t = table(5, hands={0: ["Spite"], 1: ["Tycoon"], 2: ["Merchant"], 4: ["Closer"]}, ghosts={3: []})
    t.take_deck().play("Spite")
    assert t.phase == "choose_target"
    assert target_seats(t) == [1, 2, 4]


def test_r_2_7_richer_target_with_no_option_fizzles():
    """R-2.7 richer target / R-4.5: the richest player's Backstab has no legal target, so it
    fizzles: no decision, nobody loses HP, the card stays on the table."""
    t = table(hands={0: ["Backstab"], 1: ["Tycoon"], 2: ["Merchant"], 3: ["Closer"]}, hp={0: 2, 1: 2, 2: 1, 3: 2})
    t.take_deck().play("Backstab")
    assert t.actor == 1 and t.phase == "acquire"
    assert t.hp == [2, 2, 1, 2]
    assert t.played(0) == "Backstab"


def test_r_2_7_market_choice_offers_non_empty_slots():
    """R-2.7 Market: only non-empty slots are offered (deck and discard are empty, so the
    empty slot cannot refill, R-10.2)."""
    t = table(7, hands={0: ["Market Crash"], 1: ["Tycoon"]}, market=["Relief", None, "Mimic", "Spite"], rest=1)
    assert [t.eng.actions.decode(a) for a in t.legal()] == [
        ("acquire_market", 0), ("acquire_market", 2), ("acquire_market", 3)]
    t.take_market(3)
    t.play("Market Crash")
    assert t.phase == "choose_market_slot"
    assert [t.eng.actions.decode(a)[1] for a in t.legal()] == [0, 2]


def test_r_2_7_hand_choice_offers_designs_in_hand_or_fizzles():
    """R-2.7 hand: Double Back offers each design in hand once; with an empty hand it fizzles
    and stays on the table as itself."""
    t = table(hands={0: ["Double Back", "Merchant", "Merchant", "Tycoon"]}, deck_top=["Tycoon"])
    t.take_deck().play("Double Back")
    assert t.phase == "choose_replacement"
    assert sorted(t.name(t.eng.actions.decode(a)[1]) for a in t.legal()) == ["Merchant", "Tycoon"]
    # empty hand: take Double Back from the deck (forced) and play it (forced): it fizzles
    t = table(hands={0: []}, deck_top=["Double Back"])
    assert t.played(0) == "Double Back" and t.actor == 1


def test_r_2_8_hp_at_most_reads_hp_after_direct_damage_before_round_damage():
    """R-2.8 hp_at_most: Last Stand reads HP at resolution before this round's damage: a
    Backstab earlier in the round (2 -> 1 HP) turns it on: 3 + 3 = 6."""
    t = table(hands={0: ["Backstab"], 1: ["Last Stand"], 2: ["Tycoon"], 3: ["Merchant"]},
              hp={0: 1, 1: 2, 2: 1, 3: 1})
    t.play_round({0: {"card": "Backstab", "target": 1}, 1: "Last Stand", 2: "Tycoon", 3: "Merchant"})
    assert t.scores == [3, 6, 8, 6]
    assert t.damage == [1, 0, 0, 0]


def test_r_2_8_if_last_ignores_ghosts_after_you():
    """R-2.8 if_last: Closer at seat 2 is last when the only seat after it is a Ghost: 5 + 2."""
    t = table(hands={0: ["Tycoon"], 1: ["Merchant"], 2: ["Closer"]}, ghosts={3: []})
    t.play_round({0: "Tycoon", 1: "Merchant", 2: "Closer"})
    assert t.scores == [8, 6, 7, 0]


def test_r_2_8_if_last_counts_a_card_whose_owner_died_mid_round():
    """R-2.8 if_last / R-6.2: a later seat that played and then died mid-round still played a
    Living card this round, so Closer (seat 2) does not gain 2.

    Order 1, 2, 3, 0. Seat 3 plays Veiled Blade; while seat 0 chooses a Market slot, seat 3
    dies from direct damage; its card stays on the table."""
    t = table(first=1, hands={0: ["Market Crash"], 1: ["Tycoon"], 2: ["Closer"], 3: ["Veiled Blade"]},
              hp={3: 1})
    t.turn("Tycoon").turn("Closer").turn("Veiled Blade")
    t.take_deck().play("Market Crash")
    assert t.phase == "choose_market_slot"
    t.direct_damage(3)
    t.act("market_slot", 0)
    assert t.round_num == 1
    assert t.scores[2] == 5
    assert t.scores == [5, 8, 5, 7]
    assert list(t.r["last_competed"][:4]) == [1, 1, 1, 0]
    assert t.damage == [1, 0, 1, 0]  # tied lowest among the competing
    finish(t)


def test_r_2_9_target_without_a_card_is_unaffected():
    """R-2.9 / R-4.3: Spite's target ends the round with no card on the table (nothing to
    acquire, empty hand): nothing happens to it (its score is 0, not -2) and it does not
    compete. Seat 0 holds every other card, so deck, discard and Market are empty."""
    t = table(3, hands={0: ["Spite"], 1: ["Tycoon"], 2: []}, market=[None, None, None], rest=0)
    assert t.phase == "play"  # nothing to acquire: straight to the play
    t.play("Spite").choose_seat(2)  # seat 1 then plays its only card; seat 2 is skipped
    assert t.round_num == 1
    assert t.scores == [4, 8, 0]
    assert list(t.r["last_competed"][:3]) == [1, 1, 0]
    assert t.damage == [1, 0, 0]
    finish(t)


def test_r_2_12_rule_change_is_active_when_played():
    """R-2.12: a rule primitive sets this round's active rule as soon as the card is played."""
    t = table(hands={0: ["Low Tide"], 1: ["The Cull"], 2: ["Merchant"], 3: ["Tycoon"]})
    assert t.rule == "none"
    t.turn("Low Tide")
    assert t.rule == "low_tide"
    t.turn("The Cull")
    assert t.rule == "cull"


def test_r_2_13_draw_reshuffles_the_discard_mid_draw():
    """R-2.13 / R-10.1: Stockpile draws one at a time: the first card empties the deck, the
    discard is reshuffled into a new deck, and the second card comes from it."""
    t = table(hands={0: ["Stockpile", "Relief"], 1: ["Tycoon"], 2: ["Merchant"], 3: ["Closer"]},
              deck_top=["Mimic", "Spite"], rest="discard")
    disc = int(t.r["discard_n"])
    assert int(t.r["deck_n"]) == 2
    t.turn("Stockpile")  # acquire Mimic; draw Spite (deck now empty), reshuffle, draw 1
    assert int(t.r["hand_n"][0]) == 4
    assert t.hand(0)["Mimic"] == 1 and t.hand(0)["Spite"] >= 1
    assert int(t.r["discard_n"]) == 0 and int(t.r["deck_n"]) == disc - 1
    finish(t)


def test_r_2_13_draw_stops_when_deck_and_discard_are_empty():
    """R-2.13: with deck and discard both empty, the draws are skipped."""
    t = table(hands={0: ["Stockpile", "Relief"], 1: ["Tycoon"]}, market=[None, None, None], rest=1)
    assert t.phase == "play"
    t.play("Stockpile")
    assert t.hand(0) == Counter({"Relief": 1})
    finish(t)


def test_r_2_16_and_r_4_9_market_take_is_not_an_acquisition_but_a_take():
    """R-2.16 / R-4.9: Black Market Deal takes a Market card; the acquisition stays "deck",
    but a card was taken from the Market this turn, so Greed's Toll (-3) fires: BMD 4 - 3."""
    t = table(hands={0: ["Tycoon"], 2: ["Black Market Deal"], 3: ["Merchant"]},
              ghosts={1: ["Greed's Toll", "Greed's Toll"]}, market=["Relief", "Spite", "Closer"])
    t.play_round({0: "Tycoon", 2: {"card": "Black Market Deal", "slot": 0}, 3: "Merchant"},
                 haunts={1: ("Greed's Toll", 2)})
    assert t.scores == [8, 0, 1, 6]


def test_r_2_17_backstab_is_direct_damage_not_deflected():
    """R-2.17: Backstab is direct damage, not round damage: the target's Deflection (played
    earlier this round) does not redirect it."""
    t = table(first=1, hands={0: ["Backstab"], 1: ["Deflection"], 2: ["Tycoon"], 3: ["Merchant"]},
              hp={0: 1, 1: 2, 2: 2, 3: 2})
    t.turn("Deflection", target=2).turn("Tycoon").turn("Merchant")
    t.take_deck().play("Backstab").choose_seat(1)
    assert t.round_num == 1
    # Backstab (3) is the lowest: seat 0 takes the round damage and dies; seat 1 lost 1 HP
    # to the Backstab itself, which its Deflection did not redirect to seat 2
    assert t.hp == [0, 1, 2, 2]
    assert t.damage == [1, 0, 0, 0]


def test_r_2_18_and_r_4_8_exorcism_pre_empts_triggers_on_the_played_card():
    """R-2.18 / R-4.8: Exorcist's exorcism happens in the card's own text, before the Shadow
    triggers would fire, so Cold Hands (took from deck: -2) never fires: 6, not 4."""
    t = table(hands={0: ["Tycoon"], 2: ["Exorcist"], 3: ["Merchant"]}, ghosts={1: ["Cold Hands", "Cold Hands"]})
    t.play_round({0: "Tycoon", 2: "Exorcist", 3: "Merchant"}, haunts={1: ("Cold Hands", 2)})
    assert t.scores == [8, 0, 6, 6]
    assert not t.r["fired"][2].any()


# =================================================================================
# R-3 Rounds
# =================================================================================


def test_r_3_1_every_seat_takes_one_turn_clockwise_from_the_first_player():
    """R-3.1 / R-3.2: a round is one pass from the First Player clockwise, Ghosts included
    (the Ghost at seat 0 draws on its turn and haunts seat 1); then it resolves."""
    t = table(5, first=2, hands={1: ["Tycoon"], 2: ["Merchant"], 3: ["Closer"], 4: ["Stockpile"]},
              ghosts={0: ["Blight"]})
    assert list(t.r["order"][:5]) == [2, 3, 4, 0, 1]
    for seat, card in ((2, "Merchant"), (3, "Closer"), (4, "Stockpile")):
        assert t.actor == seat and t.phase == "acquire"
        t.turn(card)
    assert t.actor == 0 and t.phase == "ghost"
    assert int(t.r["shadow_n"][0]) == 2  # drew one at the start of its turn
    t.haunt("Blight", 1)
    assert t.actor == 1 and t.round_num == 0
    t.turn("Tycoon")
    assert t.round_num == 1  # resolved right after the last turn
    # Merchant 6, Closer 5 (not last), Stockpile 2, Tycoon 8 (Blight: even base, untouched)
    assert t.scores == [0, 8, 6, 5, 2]
    finish(t)


def test_r_3_2_round_resolves_only_after_the_last_seat():
    """R-3.2: resolution happens when every seat has taken its turn, not before."""
    t = table(hands={0: ["Merchant"], 1: ["Tycoon"], 2: ["Closer"], 3: ["Spite"]})
    for card in ("Merchant", "Tycoon", "Closer"):
        t.turn(card)
        assert t.round_num == 0
    t.turn("Spite", target=0)
    assert t.round_num == 1


def test_r_3_3_ghost_phase_first_ghosts_act_before_the_living():
    """R-3.3: with ghost_phase="first" every Ghost acts first (clockwise from the First
    Player), then every living player; so a Ghost can haunt the First Player."""
    t = table(5, first=3, rules={"ghost_phase": "first"},
              hands={1: ["Tycoon"], 2: ["Merchant"], 3: ["Stockpile"]},
              ghosts={0: ["Withering", "Withering"], 4: ["Blight", "Blight"]})
    assert list(t.r["order"][:5]) == [4, 0, 3, 1, 2]
    assert t.actor == 4 and t.phase == "ghost"
    t.act("shadow", t.sid("Blight"))
    assert target_seats(t) == [1, 2, 3]  # the First Player (3) may be haunted
    t.choose_seat(3)
    t.haunt("Withering", 3)
    t.play_round({1: "Tycoon", 2: "Merchant", 3: "Stockpile"})
    # Stockpile 2: Blight (odd) no; Withering (<= 4) 2 - 2 = 0
    assert t.scores == [0, 8, 6, 0, 0]
    assert t.damage[3] == 1
    finish(t)


# =================================================================================
# R-4 Living turn
# =================================================================================


def test_r_4_1_acquire_from_deck_or_any_market_slot():
    """R-4.1: the acquisition offers the deck and every non-empty Market slot."""
    t = table(hands={0: ["Merchant"]}, deck_top=["Closer"])
    assert t.phase == "acquire"
    assert [t.eng.actions.decode(a) for a in t.legal()] == [
        ("acquire_deck", 0), ("acquire_market", 0), ("acquire_market", 1), ("acquire_market", 2)]
    t.take_deck()
    assert t.hand(0) == Counter({"Merchant": 1, "Closer": 1})
    assert int(t.r["acquired"][0]) == 1


def test_r_4_2_empty_hand_must_take_from_the_deck():
    """R-4.2 / R-12.1: with an empty hand the only acquisition is the deck, so the engine takes
    it; holding one card, it also plays it."""
    t = table(hands={0: []}, deck_top=["Tycoon"], market=["Relief", "Spite", "Closer"])
    assert t.actor == 1
    assert t.played(0) == "Tycoon" and int(t.r["acquired"][0]) == 1
    assert int(t.r["steps"]) == 0


def test_r_4_2_empty_hand_may_take_from_market_when_deck_and_discard_are_empty():
    """R-4.2: with deck and discard both empty, the Market is the only source."""
    t = table(hands={0: []}, market=["Relief", "Spite", "Closer"], rest=1)
    assert t.phase == "acquire"
    assert [t.eng.actions.decode(a) for a in t.legal()] == [
        ("acquire_market", 0), ("acquire_market", 1), ("acquire_market", 2)]


def test_r_4_3_nothing_to_acquire_and_no_card_plays_nothing():
    """R-4.3: deck, discard and Market all empty: the acquisition is skipped; a player with no
    card plays nothing and does not compete (the only other player then takes the damage as
    the lowest — and only — competitor)."""
    t = table(2, hands={0: ["Tycoon"], 1: []}, market=[None, None, None], rest=0)
    assert t.phase == "play"  # seat 0 has nothing to acquire either
    t.play("Tycoon")
    assert t.round_num == 1  # seat 1's turn was skipped
    assert list(t.r["last_competed"][:2]) == [1, 0]
    assert t.scores == [8, 0]
    assert t.damage == [1, 0]
    finish(t)


def test_r_4_4_the_card_just_acquired_may_be_played():
    """R-4.4: take Tycoon from the Market and play it at once."""
    t = table(hands={0: ["Merchant"]}, market=["Tycoon", "Spite", "Closer"])
    t.take_market(0)
    assert t.lid("Tycoon") in [t.eng.actions.decode(a)[1] for a in t.legal()]
    t.play("Tycoon")
    assert t.played(0) == "Tycoon" and t.hand(0) == Counter({"Merchant": 1})


def test_r_4_5_fizzled_choice_does_not_stop_later_primitives():
    """R-4.5: primitives resolve in printed order; a choice with no legal option fizzles and
    the rest still resolve (a variant Backstab: damage a richer player, then draw 1)."""
    cards = variant_cards(Backstab=[{"op": "damage_target", "amount": 1}, {"op": "draw", "n": 1}])
    t = table(cards=cards, hands={0: ["Backstab"]}, hp={0: 2, 1: 2, 2: 1, 3: 1}, deck_top=["Mimic", "Spite"])
    t.take_deck().play("Backstab")
    assert t.actor == 1  # no decision: the damage fizzled
    assert t.hp == [2, 2, 1, 1]
    assert t.hand(0) == Counter({"Mimic": 1, "Spite": 1})
    # with a legal target the choice is a further decision of the same player
    t = table(cards=cards, hands={0: ["Backstab"]}, hp={0: 1, 1: 2, 2: 2, 3: 1}, deck_top=["Mimic", "Spite"])
    t.take_deck().play("Backstab")
    assert t.actor == 0 and t.phase == "choose_target"
    assert t.hand(0) == Counter({"Mimic": 1})  # the draw waits for the choice
    t.choose_seat(2)
    assert t.hp == [1, 2, 1, 1] and t.hand(0) == Counter({"Mimic": 1, "Spite": 1})


def test_r_4_6_there_is_no_hand_limit():
    """R-4.6: a 12-card hand still acquires and keeps everything."""
    big = ["Merchant"] * 3 + ["Closer"] * 3 + ["Spite"] * 3 + ["Relief"] * 2 + ["Mimic"]
    t = table(hands={0: big}, deck_top=["Stockpile", "Grave Digger", "Grave Digger"])
    t.turn("Stockpile")
    assert int(t.r["hand_n"][0]) == 12 + 1 - 1 + 2


def test_r_4_7_face_up_play_and_its_choice_are_public():
    """R-4.7 / R-12.3: another seat sees the face-up card and the target it chose."""
    t = table(hands={0: ["Spite"], 1: ["Tycoon"]})
    t.turn("Spite", target=2)
    v = t.view(3)  # seat 0 is 1 seat clockwise from seat 3
    assert v["played"][1][t.lid("Spite")] == 1.0 and v["face_down"][1][0] == 0.0
    assert v["target"][1][(2 - 3) % 4] == 1.0


def test_r_4_8_triggers_fire_once_after_a_replacement():
    """R-4.8 / R-7.12: after a replacement the Shadow triggers fire once, after the
    replacement's text. Double Back -> Merchant (draws Spite); Pickpocket then discards
    exactly 1 of the 2 cards left in hand (twice would leave none)."""
    t = table(hands={0: ["Veiled Blade"], 2: ["Double Back", "Relief"], 3: ["Closer"]},
              ghosts={1: ["Pickpocket", "Pickpocket"]}, deck_top=["Stockpile", "Merchant", "Spite"])
    t.play_round({0: "Veiled Blade", 2: {"card": "Double Back", "replace": "Merchant"}, 3: "Closer"},
                 haunts={1: ("Pickpocket", 2)})
    assert int(t.r["hand_n"][2]) == 1
    assert set(t.hand(2)) <= {"Relief", "Spite"}
    assert t.scores == [7, 0, 6, 7]
    finish(t)


def test_r_4_9_acquisition_is_recorded_and_public():
    """R-4.9 / R-12.3: this round's acquisition source is recorded per seat and shown to
    every seat."""
    t = table(hands={0: ["Merchant"], 1: ["Tycoon"]}, market=["Relief", "Spite", "Closer"])
    t.turn("Merchant")
    t.take_market(2)
    v = t.view(3)
    assert list(v["acquired"][1]) == [1.0, 0.0]  # seat 0: deck
    assert list(v["acquired"][2]) == [0.0, 1.0]  # seat 1: Market
    assert list(v["acquired"][3]) == [0.0, 0.0]  # seat 2: none yet
    assert [int(x) for x in t.r["acquired"][:4]] == [1, 2, 0, 0]


# =================================================================================
# R-5 Ghost turn
# =================================================================================


@pytest.mark.parametrize("held, after", [([], 1), (["Blight"], 2), (["Blight", "Dread"], 2)])
def test_r_5_1_ghost_draws_one_if_below_the_cap(held, after):
    """R-5.1: a Ghost draws 1 Shadow card at the start of its turn if it holds fewer than the
    cap (2 for 4 players): 0 -> 1, 1 -> 2, 2 -> 2."""
    t = table(hands={0: ["Merchant"]}, ghosts={1: held})
    t.turn("Merchant")
    assert t.actor == 1 and t.phase == "ghost"
    assert int(t.r["shadow_n"][1]) == after


def test_r_5_1_and_r_10_3_empty_shadow_deck_is_reshuffled_at_once():
    """R-10.3 / R-5.1: every Shadow card not in a hand is put in the Shadow discard (empty
    Shadow Deck); before the next decision the discard has become the new Shadow Deck, and
    the Ghost draws from it."""
    t = Table(4)
    t.arrange(hands={0: ["Merchant"]}, ghosts={1: ["Blight"]}, shadow_rest="discard")
    assert int(t.r["shadow_deck_n"]) == 0 and int(t.r["shadow_discard_n"]) == 31
    t.start_round(0)
    assert int(t.r["shadow_deck_n"]) == 31 and int(t.r["shadow_discard_n"]) == 0
    t.turn("Merchant")
    assert int(t.r["shadow_n"][1]) == 2 and int(t.r["shadow_deck_n"]) == 30
    finish(t)


def test_r_5_1_ghost_draw_skipped_when_shadow_deck_and_discard_are_empty():
    """R-5.1: every Shadow card is in Ghost hands: the draw is skipped."""
    names = all_shadow_names()
    t = table(hands={0: ["Merchant"], 1: ["Tycoon"]}, ghosts={2: names[:1], 3: names[1:]})
    assert int(t.r["shadow_deck_n"]) == 0 and int(t.r["shadow_discard_n"]) == 0
    t.play_round({0: "Merchant", 1: "Tycoon"})
    assert int(t.r["shadow_n"][2]) == 1 and int(t.r["shadow_n"][3]) == 31
    finish(t)


def test_r_5_2_victims_are_living_players_who_have_not_played():
    """R-5.2: a Ghost may haunt only a living player who has not yet taken their turn: never
    the First Player in the default order, nor a Ghost."""
    t = table(6, hands={0: ["Merchant"], 1: ["Tycoon"], 3: ["Closer"], 5: ["Spite"]},
              ghosts={2: ["Blight", "Blight"], 4: []})
    t.turn("Merchant").turn("Tycoon")
    assert t.actor == 2 and t.phase == "ghost"
    t.act("shadow", t.sid("Blight"))
    assert target_seats(t) == [3, 5]


def test_r_5_2_and_r_12_1_ghost_after_the_last_living_player_can_only_pass():
    """R-5.2 / R-12.1: the Ghost at the last seat has Shadow cards but no possible victim,
    so the engine passes for it: it is never asked."""
    t = table(hands={0: ["Merchant"], 1: ["Tycoon"], 2: ["Closer"]}, ghosts={3: ["Blight", "Blight"]})
    actors = []
    for card in ("Merchant", "Tycoon", "Closer"):
        actors.append(t.actor)
        t.turn(card)
    assert actors == [0, 1, 2]
    assert t.round_num == 1 and t.shadow_hand(3) == Counter({"Blight": 2})


def test_r_5_2_single_victim_is_chosen_by_the_engine():
    """R-5.2 / R-12.1: one possible victim: choosing the Shadow card is the last decision."""
    t = table(hands={0: ["Merchant"], 1: ["Tycoon"], 3: ["Closer"]}, ghosts={2: ["Blight", "Blight"]})
    t.turn("Merchant").turn("Tycoon")
    t.act("shadow", t.sid("Blight"))
    assert t.actor == 3 and t.attached(3) == ["Blight"]


def test_r_5_3_several_ghosts_haunt_the_same_player():
    """R-5.3: two Ghosts attach Possession to the same player: Tycoon 8 - 3 - 3 = 2."""
    t = table(5, hands={0: ["Merchant"], 3: ["Tycoon"], 4: ["Closer"]},
              ghosts={1: ["Possession", "Possession"], 2: ["Possession", "Possession"]})
    t.play_round({0: "Merchant", 3: "Tycoon", 4: "Closer"},
                 haunts={1: ("Possession", 3), 2: ("Possession", 3)})
    assert t.scores == [6, 0, 0, 2, 7]
    finish(t)


def test_r_5_4_pass_is_always_legal():
    """R-5.4: a Ghost with Shadow cards and victims may still pass."""
    t = table(hands={0: ["Merchant"]}, ghosts={1: ["Blight", "Dread"]})
    t.turn("Merchant")
    kinds = [t.eng.actions.decode(a)[0] for a in t.legal()]
    assert "pass" in kinds and kinds.count("shadow") == 2
    t.ghost_pass()
    assert t.actor == 2 and t.shadow_hand(1) == Counter({"Blight": 1, "Dread": 1})


def test_r_5_6_attached_shadow_is_public_an_event_and_stays_until_cleanup():
    """R-5.6: the attached card leaves the Ghost's hand, every seat sees it, the attach is an
    event, and it stays attached until clean-up."""
    t = table(hands={0: ["Merchant"], 2: ["Tycoon"], 3: ["Closer"]}, ghosts={1: ["Dread", "Dread"]})
    t.turn("Merchant")
    ev = int(t.r["event"])
    t.haunt("Dread", 2)
    assert int(t.r["event"]) == ev + 1
    assert t.shadow_hand(1) == Counter({"Dread": 1})
    for viewer in (0, 3):
        assert t.view(viewer)["attached"][(2 - viewer) % 4][t.sid("Dread")] > 0
    t.turn("Tycoon")
    assert t.attached(2) == ["Dread"]
    t.turn("Closer")
    assert t.scores[2] == 5  # Dread: 8 - 3
    assert t.attached(2) == []  # clean-up
    finish(t)


def test_r_5_7_ghosts_never_acquire_and_the_cap_limits_only_the_draw():
    """R-5.7: a Ghost takes no Living card; holding more than the cap (after dying with 2
    Shadow cards under ghost_cap=1) it keeps them all and may still play one."""
    t = table(rules={"ghost_cap": 1}, hands={0: ["Merchant"], 2: ["Tycoon"], 3: ["Closer"]},
              ghosts={1: ["Blight", "Dread"]})
    deck = int(t.r["deck_n"])
    t.turn("Merchant")
    assert int(t.r["shadow_n"][1]) == 2  # no draw at or above the cap
    t.haunt("Dread", 2)
    assert int(t.r["hand_n"][1]) == 0 and int(t.r["acquired"][1]) == 0
    assert int(t.r["deck_n"]) == deck - 2  # only seat 0's acquisition and Merchant's draw


# =================================================================================
# R-6 Death
# =================================================================================


def test_r_6_1_death_discards_the_hand_and_draws_two_shadow_cards():
    """R-6.1 / R-8.4: at 0 HP the player's whole hand goes to the Living discard, they draw 2
    Shadow cards and are a Ghost from then on, keeping their seat."""
    t = table(hands={0: ["Stockpile", "Relief", "Mimic"], 1: ["Veiled Blade"], 2: ["Merchant"], 3: ["Closer"]},
              hp={0: 1}, deck_top=["Spite", "Closer", "Even Keel"],
              shadow_deck_top=["Dread", "Blight", "Possession"])
    t.play_round({0: "Stockpile", 1: "Veiled Blade", 2: "Merchant", 3: "Closer"})
    assert t.scores == [2, 7, 6, 7]
    assert t.alive == [False, True, True, True] and t.hp[0] == 0
    assert int(t.r["hand_n"][0]) == 0
    assert t.shadow_hand(0) == Counter({"Dread": 1, "Blight": 1})  # the top two
    # the hand at death (Relief, Mimic, Spite acquired, Closer and Even Keel drawn), then
    # the 4 played cards at clean-up
    assert t.discard_names() == Counter({"Relief": 1, "Mimic": 1, "Spite": 1, "Closer": 2, "Even Keel": 1,
                                         "Stockpile": 1, "Veiled Blade": 1, "Merchant": 1})
    # the Ghost keeps its seat and takes a Ghost turn next round (order 1, 2, 3, 0)
    assert list(t.r["order"][:4]) == [1, 2, 3, 0]
    finish(t)


def test_r_6_1_death_draws_as_many_shadow_cards_as_exist():
    """R-6.1: only one Shadow card is left in deck and discard: the dying player draws 1."""
    names = all_shadow_names()
    t = table(hands={0: ["Stockpile"], 1: ["Tycoon"], 2: ["Merchant"]}, hp={0: 1},
              ghosts={3: names[1:]})
    assert int(t.r["shadow_deck_n"]) + int(t.r["shadow_discard_n"]) == 1
    t.play_round({0: "Stockpile", 1: "Tycoon", 2: "Merchant"})
    assert not t.alive[0] and int(t.r["shadow_n"][0]) == 1
    finish(t)


def test_r_6_2_and_r_3_4_mid_round_deaths():
    """R-6.2 / R-3.4: direct damage kills two players mid-round. Seat 0 had played (Stockpile,
    the lowest card): its card stays on the table but no longer competes for damage or the
    token. Seat 3 had not played: it keeps its place in the turn order and takes its turn
    as a Ghost (it holds the 2 Shadow cards of its death and haunts nobody: no victim left).
    """
    t = table(hands={0: ["Stockpile"], 1: ["Market Crash"], 2: ["Tycoon"], 3: ["Veiled Blade"]},
              hp={0: 1, 3: 1}, shadow_deck_top=["Dread", "Blight", "Possession", "Withering"])
    t.turn("Stockpile")
    t.take_deck().play("Market Crash")
    t.direct_damage(0).direct_damage(3)
    assert t.alive == [False, True, True, False]
    assert t.played(0) == "Stockpile"
    assert int(t.r["hand_n"][3]) == 0 and t.shadow_hand(3) == Counter({"Possession": 1, "Withering": 1})
    assert list(t.r["order"][:4]) == [0, 1, 2, 3]
    t.act("market_slot", 0)
    t.turn("Tycoon")
    assert t.round_num == 1  # seat 3's Ghost turn needed no decision
    assert t.scores == [2, 5, 8, 0]
    assert list(t.r["last_competed"][:4]) == [0, 1, 1, 0]
    assert t.damage == [0, 1, 0, 0]  # Market Crash, not the dead seat's Stockpile
    assert t.first_player == 2
    finish(t)


def test_r_6_2_player_killed_before_their_turn_takes_it_as_a_ghost():
    """R-6.2 / R-5.2: order 2, 3, 0, 1. Seat 0 dies while seat 3 is choosing; on its turn it
    is a Ghost: it takes no Living card and may haunt seat 1, who has not played."""
    t = table(first=2, hands={0: ["Tycoon"], 1: ["Closer"], 2: ["Merchant"], 3: ["Spite"]},
              hp={0: 1}, shadow_deck_top=["Possession", "Possession"])
    t.turn("Merchant")
    t.take_deck().play("Spite")
    assert t.phase == "choose_target"
    t.direct_damage(0)
    t.choose_seat(1)
    assert t.actor == 0 and t.phase == "ghost"
    assert int(t.r["hand_n"][0]) == 0 and int(t.r["acquired"][0]) == 0
    t.act("shadow", t.sid("Possession"))  # seat 1 is the only victim
    t.turn("Closer")
    assert t.round_num == 1
    # Closer 5 + 2 (last) - 2 (Spite) = 5; Possession: base 5 is odd -> untouched
    assert t.scores == [0, 5, 6, 4]
    assert t.damage == [0, 0, 0, 1]
    finish(t)


def test_r_6_3_hp_never_goes_below_zero():
    """R-6.3: a 1-HP player who takes 2 round damage (tied lowest with a Deflection that
    names them) ends at 0, not -1; direct damage larger than HP also stops at 0."""
    t = table(hands={0: ["Closer"], 1: ["Deflection"], 2: ["Tycoon"], 3: ["Merchant"]}, hp={0: 1})
    t.play_round({0: "Closer", 1: {"card": "Deflection", "target": 0}, 2: "Tycoon", 3: "Merchant"})
    assert t.scores == [5, 5, 8, 6]
    assert t.damage == [2, 0, 0, 0]
    assert t.hp == [0, 2, 2, 2] and not t.alive[0]
    t = table(hands={0: ["Stockpile"]})
    t.direct_damage(2, 5)
    assert t.hp == [2, 2, 0, 2] and not t.alive[2]


def test_r_6_4_a_ghosts_face_down_card_is_revealed_without_effect():
    """R-6.4: seat 1 plays Undercurrent face-down and dies before the reveal: the card is
    revealed but its Low Tide does not take effect (normal lowest-takes-damage)."""
    t = table(hands={0: ["Merchant"], 1: ["Undercurrent"], 2: ["Market Crash"], 3: ["Tycoon"]}, hp={1: 1})
    t.turn("Merchant").turn("Undercurrent")
    t.take_deck().play("Market Crash")
    t.direct_damage(1)
    t.act("market_slot", 0)
    t.turn("Tycoon")
    assert t.round_num == 1
    assert t.last_rule == "none"
    assert t.scores == [6, 3, 5, 8]
    assert t.damage == [0, 0, 1, 0]
    finish(t)


# =================================================================================
# R-10 Decks
# =================================================================================


def test_r_10_1_empty_deck_reshuffles_the_discard_at_once():
    """R-10.1: the acquisition empties the deck; before the next decision the discard is
    the new deck and the Market is untouched."""
    t = table(hands={0: ["Merchant", "Relief"]}, deck_top=["Spite"], rest="discard",
              market=["Closer", "Mimic", "Tycoon"])
    disc = int(t.r["discard_n"])
    t.take_deck()
    assert t.hand(0)["Spite"] == 1
    assert int(t.r["deck_n"]) == disc and int(t.r["discard_n"]) == 0
    assert t.market_names() == ["Closer", "Mimic", "Tycoon"]
    finish(t)


def test_r_10_2_unfillable_slot_stays_empty_until_cleanup():
    """R-10.2 / R-8.8: deck and discard are empty; the slot Black Market Deal empties stays
    empty, and is refilled at clean-up from the reshuffled played cards."""
    t = table(hands={0: ["Black Market Deal", "Relief"], 1: ["Tycoon"], 2: ["Merchant"], 3: ["Closer"]},
              market=["Spite", "Mimic", "Last Stand"], rest=1)
    assert int(t.r["deck_n"]) == 0 and int(t.r["discard_n"]) == 0
    t.take_market(0)
    assert t.market_names() == [None, "Mimic", "Last Stand"]
    t.play("Black Market Deal")
    t.act("market_slot", 1)
    # slot 1 could not refill; seat 1's only source was then slot 2, taken by the engine
    assert t.market_names() == [None, None, None]
    assert t.actor == 1 and t.phase == "play" and t.hand(1)["Last Stand"] == 3  # 2 dealt + 1 taken
    t.play_round({1: "Tycoon", 2: "Merchant", 3: "Closer"})
    # seat 1 had to take Last Stand (the only source); nothing could refill until clean-up,
    # which put the 4 played cards in the discard, reshuffled them and refilled 3 slots
    assert None not in t.market_names()
    left = Counter(t.market_names()) + Counter(t.deck_top(int(t.r["deck_n"])))
    assert left == Counter({"Black Market Deal": 1, "Tycoon": 1, "Merchant": 1, "Closer": 1})
    finish(t)


def test_r_10_2_a_card_discarded_mid_round_does_not_refill_an_empty_slot():
    """R-10.2: deck and discard are empty and slot 0 is taken (it stays empty); seat 0's
    Double Back then sends a card to the discard, which becomes the deck's one card, and the
    slot still waits for clean-up: the next seat may take the deck's card or slots 1-2."""
    t = table(hands={0: ["Double Back", "Merchant"], 1: ["Stockpile"], 2: ["Closer"]},
              market=["Relief", "Tycoon", "Spite"], rest=3)
    assert int(t.r["deck_n"]) == 0 and int(t.r["discard_n"]) == 0
    t.take_market(0)
    t.play("Double Back")
    t.act("card", t.lid("Relief"))
    assert t.actor == 1 and int(t.r["deck_n"]) == 1 and t.market_names() == [None, "Tycoon", "Spite"]
    assert [t.eng.describe_action(a) for a in t.legal()] == [
        "take the top card of the Living Deck", "take the card in Market slot 1", "take the card in Market slot 2"]


# =================================================================================
# R-12 Engine conventions
# =================================================================================


def test_r_12_1_single_option_decisions_take_no_agent_step():
    """R-12.1: empty hands (forced deck), one-card hands (forced play), a single possible
    target (forced) and a Ghost with no victim (forced pass): a whole round without a single
    agent step. max_rounds=1 ends the game there so the round can be inspected."""
    t = table(3, rules={"max_rounds": 1}, hands={0: [], 1: []}, ghosts={2: []},
              deck_top=["Spite", "Tycoon"])
    assert int(t.r["steps"]) == 0
    assert t.done
    # Spite (4) must target seat 1: Tycoon 8 - 2 = 6
    assert t.scores == [4, 6, 0]


def test_r_12_2_illegal_action_is_rejected_and_changes_nothing():
    """R-12.2: an illegal action raises an error naming the game, the action and the legal
    set; the state is byte-identical afterwards."""
    t = table(hands={0: ["Merchant"]})
    before = t.eng.state.tobytes()
    bad = t.eng.actions.encode("pass")
    with pytest.raises(IllegalActionError) as e:
        t.eng.step(np.array([bad]))
    msg = str(e.value)
    assert "game 0" in msg and f"illegal action {bad}" in msg
    for a in t.legal():
        assert str(a) in msg
    assert e.value.legal == t.legal()
    assert t.eng.state.tobytes() == before
    for bad in (10_000, -2):
        with pytest.raises(IllegalActionError):
            t.eng.step(np.array([bad]))
        assert t.eng.state.tobytes() == before


def test_r_12_3_hidden_hands_shadow_hands_and_deck_order():
    """R-12.3: two games that differ only in seat 1's hand, seat 2's Shadow hand and the
    deck order look identical to seat 0."""
    a = table(hands={0: ["Merchant"], 1: ["Tycoon", "Spite"], 3: ["Closer"]}, ghosts={2: ["Blight"]},
              deck_top=["Relief", "Mimic"], market=["Stockpile", "Stockpile", "Stockpile"])
    b = table(hands={0: ["Merchant"], 1: ["Mimic", "Relief"], 3: ["Closer"]}, ghosts={2: ["Dread"]},
              deck_top=["Tycoon", "Spite"], market=["Stockpile", "Stockpile", "Stockpile"])
    # same counts everywhere, different contents
    assert np.array_equal(a.eng.observe([0]), b.eng.observe([0]))
    assert not np.array_equal(a.eng.observe([1]), b.eng.observe([1]))


def test_r_12_4_same_seed_and_actions_give_the_same_game():
    """R-12.4: the same rules, seed and actions replay the same game, whatever the batch
    row or the global RNG state."""
    eng = Engine(RulesConfig(num_players=5), batch_size=3)
    eng.reset([42, 7, 42])
    solo = Engine(RulesConfig(num_players=5))
    solo.reset([42])
    rng = np.random.default_rng(0)
    np.random.seed(123)
    for _ in range(400):
        if eng.state["done"][0]:
            break
        legal = eng.legal_actions(0)
        assert legal == eng.legal_actions(2) == solo.legal_actions(0)
        a = int(rng.choice(legal))
        other = int(np.random.choice(eng.legal_actions(1))) if not eng.state["done"][1] else -1
        eng.step(np.array([a, other, a]))
        solo.step(np.array([a]))
        assert eng.state[0].tobytes() == eng.state[2].tobytes() == solo.state[0].tobytes()
    assert eng.state["done"][0]


# =================================================================================
# Meta: every rule ID is named by a test
# =================================================================================

_ID = re.compile(r"R-(\d+)\.(\d+)(?!\d)")
_NAME_ID = re.compile(r"r_(\d+)_(\d+)(?![0-9])")


def _rule_ids():
    text = (REPO / "docs" / "RULES.md").read_text(encoding="utf-8")
    return {f"R-{a}.{b}" for a, b in re.findall(r"\*\*R-(\d+)\.(\d+)\*\*", text)}


def _tested_ids():
    import ast

    found = set()
    for path in sorted((REPO / "tests").glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test"):
                found |= {f"R-{a}.{b}" for a, b in _NAME_ID.findall(node.name)}
                doc = ast.get_docstring(node) or ""
                found |= {f"R-{a}.{b}" for a, b in _ID.findall(doc)}
    return found


def test_every_rule_id_is_tested():
    """Every rule ID of docs/RULES.md is named by at least one test (name or docstring)."""
    ids = _rule_ids()
    assert len(ids) >= 90
    missing = sorted(ids - _tested_ids(), key=lambda s: tuple(int(x) for x in s[2:].split(".")))
    assert not missing, "rule IDs without a test: " + ", ".join(missing)


def test_r_10_1_the_games_last_step_reshuffles_an_emptied_deck_too():
    """R-10.1: the reshuffle is immediate also when the step that empties the deck ends the
    game (the last seat's Merchant draws the deck's last card, the round kills a seat and
    leaves one alive): the final state's deck is the old discard, its discard empty."""
    t = Table(4, seed=0, ghost_phase="first", token_tie="latest", deflect_target="stronger",
              grace_round=False)
    t.arrange(hands={0: ["Last Stand"], 1: ["Tycoon"], 2: [], 3: []}, hp={0: 1, 1: 2},
              ghosts={2: [], 3: []}, market=["Relief", "Spite", "Mimic"],
              deck_top=["Closer", "Merchant", "Glass Crown"], rest="discard")
    disc = int(t.r["discard_n"])
    t.start_round(1)
    t.play_round({1: "Tycoon", 0: "Merchant"})
    assert t.done and t.phase == "game_over"
    assert int(t.r["discard_n"]) == 0 and int(t.r["deck_n"]) > disc  # the played cards too
    finish(t)
