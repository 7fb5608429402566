"""Rules tests of the balance pass's rulings and the variants that keep the earlier rules:
whom a Deflection may name (R-8.3, variant ``deflect_target``), the opening hands of the
first seats (R-1.3, ``opening_bonus``), the token's ties (R-8.6, ``token_tie``) and the grace
round (R-8.2, ``grace_round``). Every test names its rule; 4 players (2 HP), seat 0 holds the
First Player token (turn order 0-1-2-3) unless it says otherwise. The hand-arranged rounds play
the first edition's cards, whose numbers they were written with: the rulings do not depend on them."""

from __future__ import annotations

import numpy as np
import pytest

from ripmarket_env.games.ripmarket import Engine, RulesConfig
from ripmarket_env.games.ripmarket.cards.loader import load_cards
from ripmarket_env.games.ripmarket.config import ConfigError
from scenario import Table, serial


@pytest.fixture(autouse=True)
def _one_thread():
    with serial():
        yield


FIRST = load_cards("first-edition")


def table(rules=None, first=0, **arrange):
    t = Table(4, seed=0, cards=FIRST, **(rules or {}))
    t.arrange(**arrange)
    t.start_round(first)
    return t


def target_seats(t):
    return sorted((t.actor + t.eng.actions.decode(a)[1]) % t.P for a in t.legal())


HANDS = {0: ["Deflection"], 1: ["Tycoon"], 2: ["Merchant"], 3: ["Closer"]}


def play_the_others(t):
    """Seats 1-3 take from the deck and play their first card of ``HANDS``."""
    for q in (1, 2, 3):
        t.take_deck().play(HANDS[q][0])


def test_r_8_3_not_weaker_deflection_names_only_players_with_at_least_the_owners_hp():
    """R-8.3 (deflect_target="not_weaker"): the owner at 2 HP may name the 2-HP players only;
    under "any" (the first edition) every other living player."""
    t = table({"deflect_target": "not_weaker"}, hands=HANDS, hp={0: 2, 1: 1, 2: 2, 3: 2})
    t.take_deck().play("Deflection")
    assert t.phase == "choose_target" and target_seats(t) == [2, 3]
    t = table({"deflect_target": "any"}, hands=HANDS, hp={0: 2, 1: 1, 2: 2, 3: 2})
    t.take_deck().play("Deflection")
    assert target_seats(t) == [1, 2, 3]


def test_r_8_3_not_weaker_lets_a_wounded_owner_name_anyone():
    """R-8.3 (deflect_target="not_weaker"): at 1 HP the owner has no one weaker: all of them."""
    t = table({"deflect_target": "not_weaker"}, hands=HANDS, hp={0: 1, 1: 1, 2: 2, 3: 2})
    t.take_deck().play("Deflection")
    assert target_seats(t) == [1, 2, 3]


def test_r_8_3_not_weaker_deflection_with_no_one_to_name_fizzles_and_the_damage_stays():
    """R-8.3 / R-4.5 (deflect_target="not_weaker"): the only 2-HP player's Deflection has no
    one to name: no decision, and as the lowest (5 against 8, 6, 7 with Closer last) it
    takes the round's damage itself. Under "any" the same round names seat 1 and passes it on."""
    t = table({"deflect_target": "not_weaker"}, hands=HANDS, hp={0: 2, 1: 1, 2: 1, 3: 1})
    t.take_deck().play("Deflection")
    assert t.actor == 1 and t.phase == "acquire"  # no target decision
    play_the_others(t)
    assert t.scores == [5, 8, 6, 7] and t.damage == [1, 0, 0, 0]
    t = table({"deflect_target": "any"}, hands=HANDS, hp={0: 2, 1: 1, 2: 1, 3: 1})
    t.take_deck().play("Deflection")
    t.choose_seat(1)
    play_the_others(t)
    assert t.damage == [0, 1, 0, 0]


def test_r_8_3_stronger_deflection_names_only_players_with_more_hp_than_the_owner():
    """R-8.3 (deflect_target="stronger"): a wounded owner (1 HP) may name the 2-HP players;
    an owner at full HP has no one stronger, the choice fizzles (R-4.5) and, as the lowest
    (5 against 8, 6, 7 with Closer last), it takes the round's damage itself."""
    t = table({"deflect_target": "stronger"}, hands=HANDS, hp={0: 1, 1: 1, 2: 2, 3: 2})
    t.take_deck().play("Deflection")
    assert t.phase == "choose_target" and target_seats(t) == [2, 3]
    t = table({"deflect_target": "stronger"}, hands=HANDS, hp={0: 2, 1: 2, 2: 1, 3: 2})
    t.take_deck().play("Deflection")
    assert t.actor == 1 and t.phase == "acquire"  # no target decision
    play_the_others(t)
    assert t.scores == [5, 8, 6, 7] and t.damage == [1, 0, 0, 0]


def test_r_8_2_grace_round_deals_no_round_damage_in_the_first_round_only():
    """R-8.2 (grace_round, the default): in the first round the lowest (Deflection's 5
    against 8, 6, 7) takes no damage, a ``grace`` event says so, the Deflection is not
    spent and the highest still takes the First Player token (R-8.6); the second round deals
    damage again. Under grace_round=False (the first edition) the first round's lowest is hit."""
    second = {0: "Proud Heir", 1: "Proud Heir", 2: "Proud Heir", 3: "Glass Crown"}
    hands = {q: [HANDS[q][0], second[q]] for q in range(4)}
    t = table({"grace_round": True}, hands=hands)
    t.take_deck().play("Deflection")
    if t.phase == "choose_target":
        t.choose_seat(1)
    play_the_others(t)
    assert t.scores == [5, 8, 6, 7] and t.damage == [0, 0, 0, 0] and t.hp == [2, 2, 2, 2]
    kinds = [e.kind for e in t.eng.events(0)]
    assert "grace" in kinds and "deflect" not in kinds and "damage" not in kinds
    assert t.r["first_player"] == 1 and t.r["round_num"] == 1
    for _ in range(4):  # round 2 (seat 1 first): Proud Heir (7) x 3 against Glass Crown (8)
        q = t.actor
        t.take_deck().play(second[q])
    assert t.scores == [7, 7, 7, 8] and t.damage == [1, 1, 1, 0] and t.hp == [1, 1, 1, 2]
    assert "grace" not in [e.kind for e in t.eng.events(0)]
    t = table({"grace_round": False}, hands=hands)
    t.take_deck().play("Deflection")
    if t.phase == "choose_target":
        t.choose_seat(1)
    play_the_others(t)
    assert t.damage == [0, 1, 0, 0]  # the Deflection passed the first round's damage to seat 1


def _grace_round(cards: list[str]):
    """A 4-player first round under the grace rule: each seat draws, then plays its card
    (naming the next seat where the card asks for a target)."""
    t = table({"grace_round": True}, hands={q: [name] for q, name in enumerate(cards)})
    for q, name in enumerate(cards):
        t.take_deck()
        t.play(name)
        if t.phase == "choose_target":
            t.choose_seat((q + 1) % 4)
    return t


def test_r_8_2_grace_round_event_text_is_public():
    """R-8.2 / R-12.3: the grace event names no card and reads the same for every viewer."""
    t = _grace_round(["Tycoon", "Merchant", "Closer", "Spite"])
    ev = [e for e in t.eng.events(0) if e.kind == "grace"]
    assert len(ev) == 1
    texts = {ev[0].text_for(v) for v in (0, 1, 2, 3, "god")}
    assert len(texts) == 1 and texts.pop().startswith("First round: nobody takes round damage")


def test_r_8_2_grace_round_text_fits_every_rule_and_old_records_still_verify():
    """R-8.2: under Low Tide the grace round spares the highest score (R-7.4), and its line
    says how many players would have been hit without naming them "the lowest" (as it once
    did under every rule); a record written with the old words still verifies, one whose
    count or other words differ does not."""
    from ripmarket_env.games.ripmarket.records import same_line

    t = _grace_round(["Low Tide", "Merchant", "Closer", "Spite"])
    text = next(e for e in t.eng.events(0) if e.kind == "grace").text_for("god")
    assert text == "First round: nobody takes round damage (one player would have)" and t.damage == [0] * 4
    line = {"round": 1, "log": ["Round 1 begins", "First round: nobody takes round damage (2 players would have)"]}
    old = {"round": 1, "log": ["Round 1 begins", "First round: nobody takes round damage (the 2 lowest would have)"]}
    assert same_line(line, old) and same_line({"round": 1, "log": [text]},
                                              {"round": 1, "log": ["First round: nobody takes round damage "
                                                                   "(the lowest would have)"]})
    assert not same_line(line, {**old, "log": [old["log"][0], old["log"][1].replace("2", "3")]})
    assert not same_line(line, {**old, "round": 2}) and not same_line(line, {**old, "log": "x"})


@pytest.mark.parametrize("n", [2, 4, 5, 6, 9])
@pytest.mark.parametrize("bonus", ["first_half", "first_player", "none"])
def test_r_1_3_opening_bonus_deals_one_more_card_to_the_first_seats(bonus, n):
    """R-1.3 (opening_bonus): after the deal and the choice of the First Player, the first
    players // 2 seats of the first round's turn order (the First Player, then clockwise)
    each draw one more Living card ("first_half"); "first_player": the First Player alone;
    "none" (the rulebook's setup, the default): everyone holds hand_size."""
    extra = {"first_half": n // 2, "first_player": 1, "none": 0}[bonus]
    eng = Engine(RulesConfig(num_players=n, opening_bonus=bonus), batch_size=30)
    eng.reset(list(range(30)))
    for st in eng.state:
        fp = int(st["first_player"])
        hands = [int(st["hand_n"][(fp + i) % n]) for i in range(n)]  # in turn order
        assert hands == [4] * extra + [3] * (n - extra)
        assert int(st["deck_n"]) == 64 - (3 if n <= 6 else 4) - 3 * n - extra
    assert RulesConfig(num_players=n).opening_bonus == "none"


def test_r_1_3_the_opening_bonus_changes_nothing_else_of_the_deal():
    """R-1.3: the extra cards come after the whole deal, so the Market, the First Player and
    the hands of the other seats are those of opening_bonus="none" for the same seed."""
    a = Engine(RulesConfig(num_players=4, opening_bonus="none"))
    b = Engine(RulesConfig(num_players=4, opening_bonus="first_half"))
    for seed in range(20):
        a.reset([seed]), b.reset([seed])
        sa, sb = a.state[0], b.state[0]
        fp = int(sa["first_player"])
        assert int(sb["first_player"]) == fp
        np.testing.assert_array_equal(sa["market"], sb["market"])
        for i in range(4):
            q = (fp + i) % 4
            more = int((sb["hand"][q] - sa["hand"][q]).sum())
            assert more == (1 if i < 2 else 0) and (sb["hand"][q] >= sa["hand"][q]).all()


def test_r_8_6_token_tie_goes_to_the_latest_unless_the_variant_says_earliest():
    """R-8.6 (token_tie): seats 1 and 3 tie for the highest score (8): the token goes to
    seat 3, the latest of them in this round's turn order; under "earliest" to seat 1."""
    hands = {0: ["Merchant"], 1: ["Tycoon"], 2: ["Black Market Deal"], 3: ["Glass Crown"]}
    plays = {0: "Merchant", 1: "Tycoon", 2: {"card": "Black Market Deal", "slot": 0}, 3: "Glass Crown"}
    for tie, holder in (("latest", 3), ("earliest", 1)):
        t = table({"token_tie": tie}, hands=hands)
        t.play_round(plays)
        assert t.scores[1] == t.scores[3] == 8 and max(t.scores) == 8
        assert t.first_player == holder
    assert RulesConfig(num_players=4).token_tie == "latest"


def test_r_8_6_low_tide_token_tie_goes_to_the_latest_lowest():
    """R-8.6 / R-7.6: under Low Tide the lowest takes the token; seats 0 and 2 tie lowest
    (3, Fire Sale and Low Tide): the latest of them, seat 2, takes it; under "earliest" seat 0."""
    hands = {0: ["Fire Sale"], 1: ["Tycoon"], 2: ["Low Tide"], 3: ["Glass Crown"]}
    plays = {0: "Fire Sale", 1: "Tycoon", 2: "Low Tide", 3: "Glass Crown"}
    for tie, holder in (("latest", 2), ("earliest", 0)):
        t = table({"token_tie": tie}, hands=hands)
        t.play_round(plays)
        assert t.scores == [3, 8, 3, 8]
        assert t.first_player == holder


@pytest.mark.parametrize("field, value, allowed", [("deflect_target", "richer", "any | not_weaker | stronger"),
                                                   ("opening_bonus", "all", "none | first_player | first_half"),
                                                   ("token_tie", "first", "earliest | latest"),
                                                   ("grace_round", "yes", "true or false")])
def test_r_1_4_the_new_variants_reject_bad_values(field, value, allowed):
    """R-1.4: a bad value of the balance pass's variants names the field, value and allowed values."""
    with pytest.raises(ConfigError) as e:
        RulesConfig(num_players=4, **{field: value})
    assert field in str(e.value) and repr(value) in str(e.value) and allowed in str(e.value)
