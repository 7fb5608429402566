"""Forced decisions reveal nothing (the cross-game rule of ``ripmarket_env.core.events``):
a decision that only the deciding seat's hidden cards make single is asked of that seat
(its one legal action in the mask, no "only choice" marker anywhere); a decision whose one
option follows from public facts stays the engine's, and its marker goes on the
decision's own event. R.I.P. Market R-12.1, Black Market BM-12.3, The Rune Market RM-8.1.

The conformance suite's ``check_forced_moves_hidden`` runs the two-world comparison along
random games for every registered game; the hand-built positions here pin each game's case.
"""

from __future__ import annotations

import numpy as np
import pytest

from bm_scenario import act as bm_act
from bm_scenario import setup as bm_setup
from bm_scenario import table as bm_table
from rm_scenario import act as rm_act
from rm_scenario import game as rm_game
from rm_scenario import legal as rm_legal
from rm_scenario import start_turn
from ripmarket_env.core.engine import kernel_view
from ripmarket_env.games import get
from ripmarket_env.games.ripmarket import Engine, RulesConfig
from ripmarket_env.games.ripmarket import kernels as RK
from ripmarket_env.games.ripmarket.invariants import conservation_errors
from ripmarket_env.testing.conformance import step_views_differ

ONLY = "(only choice)"


def _texts(eng, viewer):
    return [ev.text_for(viewer) for ev in eng.events(0)]


# ------------------------------------------------------------------------------ R.I.P. Market
def _one_design_hand(eng, u, design, keep_other=False):
    """Seat u's hand becomes all ``design`` (or all but one card, ``keep_other``), swapping
    cards with the Living Deck (hidden from everyone else): None when the deck lacks them."""
    s = eng.state
    n = int(s["deck_n"][0])
    deck = s["deck"][0]
    hand = s["hand"][0, u]
    others = [d for d in range(hand.shape[0]) for _ in range(int(hand[d])) if d != design]
    if keep_other:
        if not others:
            i = next((i for i in range(n) if deck[i] != design), None)
            if i is None:
                return None
            hand[design] -= 1
            hand[deck[i]] += 1
            deck[i] = design
        return eng
    for d in others:
        i = next((i for i in range(n) if deck[i] == design), None)
        if i is None:
            return None
        deck[i] = d
        hand[d] -= 1
        hand[design] += 1
    return eng


def _rip_worlds():
    """Two worlds seat v cannot tell apart, at seat u's acquisition: after taking the Market
    card of slot k, u holds one design (A) or two (B)."""
    for seed in range(40):  # hands of one card (hand_size=1): the deck holds the copies to swap in
        eng = Engine(RulesConfig(num_players=3, hand_size=1), batch_size=1)
        eng.reset([seed])
        rng = np.random.default_rng(seed)
        for _ in range(60):
            if eng.terminated[0]:
                break
            s = eng.state
            u = int(s["actor"][0])
            if s["phase"][0] == RK.PH_ACQUIRE and s["hand_n"][0, u] >= 1 and eng.legal_mask()[0].sum() >= 2:
                for k in np.flatnonzero(s["market"][0] >= 0):
                    a = RK.A_MARKET0 + int(k)
                    if not eng.legal_mask()[0, a]:
                        continue
                    design = int(s["market"][0, k])
                    A = _one_design_hand(eng.clone([0]), u, design)
                    B = A and _one_design_hand(A.clone([0]), u, design, keep_other=True)
                    if B is None:
                        continue
                    for w in (A, B):
                        assert not len(conservation_errors(w.state, w.cards, w.rules))
                        RK.fill_mask(kernel_view(w.state)[0], kernel_view(w.tables)[0], w.cfg)
                    return A, B, u, a
            legal = eng.legal_actions(0)
            eng.step([int(legal[rng.integers(len(legal))])])
    raise AssertionError("no position found")


def test_rip_a_hand_of_one_design_is_still_asked_R_12_1():
    """R-12.1: a seat whose hand (two cards or more) is all one design is asked to play it;
    the next actor (the AEC env's agent_selection), the phase and every other seat's
    events are those of a hand of two designs."""
    A, B, u, a = _rip_worlds()
    spec = get("ripmarket")
    for v in range(3):
        if v == u:
            continue
        world, twin = A.clone([0]), B.clone([0])
        assert step_views_differ(spec, world, twin, v, a) is None
        assert int(world.current_player()[0]) == u == int(twin.current_player()[0])
        assert world.phase()[0] == "play" and world.legal_mask()[0].sum() == 1  # asked, one option
        assert twin.legal_mask()[0].sum() == 2
        assert not any(ONLY in t for t in _texts(world, u) + _texts(world, v) + _texts(world, "god"))
        # the rules' own invariant check knows the asked one-option play (R-12.1)
        from ripmarket_env.games.ripmarket.invariants import check_game

        assert check_game(world, 0) == [] and check_game(twin, 0) == []


def test_rip_a_lone_card_is_still_played_by_the_engine_R_12_1():
    """R-12.1: one card in hand (a public count) is played by the engine; the marker stays
    the seat's own."""
    from ripmarket_env.games.ripmarket.kernels import hidden_forced

    A, _B, u, a = _rip_worlds()
    s = A.state
    s["phase"][0] = RK.PH_PLAY
    s["hand_n"][0, u] = 2
    assert hidden_forced(kernel_view(s)[0])
    s["hand_n"][0, u] = 1
    assert not hidden_forced(kernel_view(s)[0])


# ------------------------------------------------------------------------------ Black Market
def test_bm_a_draw_that_only_the_hand_forces_is_asked_BM_12_3():
    """BM-12.3: one red card in hand and a die pointing at a map card: only "draw" is legal,
    but another hand of one card could flip there, so the seat is asked and nobody reads
    "only choice"."""
    eng = bm_table(P=2)
    bm_setup(eng, hands={0: (1, 0, 0)}, dice=(1, 2), slots=[("Red 1", 0, 0), ("Red 2", 0, 0)])
    r = eng.state[0]
    top = int(r["hdeck_n"]) - 1  # a Black card on top of the Hand deck: red + black pays nothing
    i = next(i for i in range(top + 1) if r["hdeck"][i] == 1)
    r["hdeck"][i], r["hdeck"][top] = r["hdeck"][top], r["hdeck"][i]
    events = bm_act(eng, "draw", 1)
    assert int(eng.current_player()[0]) == 0 and eng.phase()[0] == "act"
    assert eng.legal_mask()[0].sum() == 1  # the draw with die 2, asked
    assert not any(e.forced for e in events)
    assert not any(ONLY in e.text_for(v) for e in events for v in (0, 1, None, "god"))


def test_bm_a_public_forced_draw_is_marked_on_the_draw_not_the_reshuffle_BM_12_3():
    """BM-12.3: an empty hand and a die pointing at an empty slot: the engine draws; the
    "only choice" marker goes on that draw, not on the reshuffle logged before it."""
    eng = bm_table(P=2)
    bm_setup(eng, hands={0: (0, 0, 0)}, dice=(1, 3), slots=[("Red 1", 0, 0), ("Red 2", 0, 0), None])
    r = eng.state[0]
    n = int(r["hdeck_n"])
    for i in range(n - 1):  # all but one Hand Card to the discard: the second draw reshuffles
        r["hdisc"][r["hdeck"][i]] += 1
        r["hdeck"][i] = -1
    r["hdeck"][0] = r["hdeck"][n - 1]
    r["hdeck"][n - 1] = -1
    r["hdeck_n"] = 1
    events = bm_act(eng, "draw", 1)
    kinds = [e.kind for e in events]
    assert kinds[:3] == ["draw", "reshuffle", "draw"], kinds
    assert not events[0].forced and not events[1].forced and events[2].forced
    assert events[2].text_for(1).endswith(ONLY) and not events[1].text_for(1).endswith(ONLY)


# ------------------------------------------------------------------------------ The Rune Market
def test_rm_an_attack_with_the_only_number_card_is_asked_RM_8_1():
    """RM-8.1: attacking with a hand of one Number card and a Theft: which Number card is the
    attacker's to choose (one option), no "only choice" marker; the defender and the next
    actor are as for a hand of two Number cards."""
    for other in ("theft", 4):
        eng = rm_game(P=3)
        start_turn(eng, tp=0, hands={0: [9, other], 1: [1, 2, 3], 2: [1, 2, 3]})
        rm_act(eng, "attack")
        assert int(eng.current_player()[0]) == 0 and eng.phase()[0] == "choose_card"
        assert len(rm_legal(eng)) == (1 if other == "theft" else 2)
        assert not any(ONLY in t for v in (0, 1, 2, None) for t in _texts(eng, v))


def test_rm_a_lone_number_card_is_played_by_the_engine_RM_8_1():
    """RM-8.1: a hand of one card (a public count) attacks with it without a decision; the
    marker stays, on the attack."""
    eng = rm_game(P=3)
    start_turn(eng, tp=0, hands={0: [9], 1: [1, 2, 3], 2: [1, 2, 3]})
    rm_act(eng, "attack")
    events = eng.events(0)
    attack = next(e for e in events if e.kind == "attack")
    assert attack.forced and attack.text_for(1).endswith(ONLY)
    assert eng.phase()[0] == "choose_opponent" or eng.phase()[0] == "defend"


def test_rm_an_empty_hand_ends_the_turn_marked_on_end_turn_RM_8_1():
    """RM-8.1: stage 3 with an empty hand ends the turn without a decision; the marker goes
    on "end_turn", not on the draws logged before it."""
    eng = rm_game(P=2)
    start_turn(eng, tp=0, hands={0: []}, skip=False)
    while eng.phase()[0] in ("start", "rune_buy") and int(eng.current_player()[0]) == 0:
        eng.step([0])
    events = eng.events(0)
    kinds = [e.kind for e in events]
    assert "end_turn" in kinds, kinds
    for e in events:
        assert e.forced == (e.kind == "end_turn"), (e.kind, e.forced)


@pytest.mark.parametrize("game", ["ripmarket", "black-market", "rune-market"])
def test_default_bots_and_heuristics_take_the_one_option(game):
    """A decision now asked with one legal option leaves the game's default (trained) bot
    and every heuristic that one action."""
    from agents import default_bot, game_agents, make

    spec = get(game)
    eng = spec.make_engine(spec.make_rules(spec.default_players), 1)
    eng.reset([3])
    obs = eng.observe([int(eng.current_player()[0])])
    only = int(np.flatnonzero(eng.legal_mask()[0])[-1])
    mask = np.zeros_like(eng.legal_mask())
    mask[0, only] = True
    for name in dict.fromkeys([default_bot(game), *game_agents(game).heuristics]):
        bot = make(name, game=game)
        assert int(bot.act_batch(obs, mask)[0]) == only, name


# ------------------------------------------------------------------------------ nothing else changes
#: digests of seeded random games played by the engines before the rule (commit 3b33e0d):
#: every event row but the forced markers, and the rewards
BEFORE_THE_RULE = {
    "ripmarket/2/0": "9e378ca04ef146b9",
    "ripmarket/2/1": "90ccbfa4761fcd4e",
    "ripmarket/2/2": "eac480e9709aa050",
    "ripmarket/2/3": "2ed33a93db427bf2",
    "ripmarket/6/0": "954af7f981ebe9e5",
    "ripmarket/6/1": "dfa5d82c73446bef",
    "ripmarket/6/2": "b50d9b5431e0d36e",
    "ripmarket/6/3": "6db98484c04578f0",
    "black-market/2/0": "bad626472ab14032",
    "black-market/2/1": "2262f6fd4a108dee",
    "black-market/2/2": "68e9aac157060675",
    "black-market/2/3": "63fd08d07978bf1b",
    "black-market/4/0": "90da669c5d102523",
    "black-market/4/1": "ca7456713fb86f54",
    "black-market/4/2": "311ef3668fcc08a1",
    "black-market/4/3": "804b2b0115e268bf",
    "rune-market/2/0": "3088c1316d92cd95",
    "rune-market/2/1": "7f38ff51c2ff5dcd",
    "rune-market/2/2": "0aeb7dfc479e2784",
    "rune-market/2/3": "2d31dbf72c1b1c7e",
    "rune-market/4/0": "aab683c34c0ff1bb",
    "rune-market/4/1": "80ae4ecc33f2b30d",
    "rune-market/4/2": "2bddaad5a1fcea27",
    "rune-market/4/3": "a13d2079e142f525"
}


def _digest(game, n, seed):
    import hashlib

    spec = get(game)
    eng = spec.make_engine(spec.make_rules(n), 1)
    eng.reset([seed])
    rng = np.random.default_rng(seed)  # integers(1) draws nothing: an asked one-option decision costs no draw
    h = hashlib.sha256()

    def absorb():
        r = eng.state[0]
        for row in r["ev"][: int(r["ev_n"])].tolist():
            if row[0] != 1:  # every game's EV_FORCED marker
                h.update(repr(row).encode())

    absorb()
    while not eng.terminated[0]:
        legal = eng.legal_actions(0)
        eng.step([int(legal[rng.integers(len(legal))])])
        absorb()
    h.update(eng.rewards()[0].tobytes())
    return h.hexdigest()[:16]


@pytest.mark.parametrize("case", sorted(BEFORE_THE_RULE))
def test_the_same_seed_and_choices_give_the_same_game(case):
    """R-12.4, BM-12.2, RM-8.3: asking a decision instead of taking it changes no draw, no
    event (but its marker) and no reward: seeded random games give the events and rewards
    of the engines before the rule."""
    game, n, seed = case.split("/")
    assert _digest(game, int(n), int(seed)) == BEFORE_THE_RULE[case]
