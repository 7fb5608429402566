"""The Rune Market's search agent ``rm-search``: it rebuilds the game from the observation
alone (every public field equal to the real game's, the legal actions equal to the
observed mask, at every decision of random games), plays legal moves including the
defender's block decision (RM-5.7), is deterministic for a seed and beats random play and
a heuristic."""

from __future__ import annotations

import numpy as np
import pytest

import agents
from agents.runemarket.search import ReconstructionError, public_row, reconstruct
from rm_scenario import act, game, start_turn
from ripmarket_env.games.runemarket import Engine, RulesConfig
from ripmarket_env.games.runemarket.state import I_ATTACK, PH_DEFEND

GAME = "rune-market"
_SEAT_FIELDS = ("shelter", "boat", "inside", "loose", "attacked", "turns", "hand_n", "bandit_paid")
_GLOBAL_FIELDS = ("market", "market_boats", "market_bandits", "removed_bandits", "discard", "discard_n",
                  "total_turns", "stage", "played", "intent", "pay_sum", "thefts_left", "phase")


def _rel(q, v, P):
    return -1 if q < 0 else (q - v) % P


def _check_rebuilt(eng, P, rng):
    """The rebuilt public row equals the real game seen from the actor (seats rotated)."""
    v = int(eng.current_player()[0])
    obs, mask = eng.observe(np.array([v]))[0], eng.legal_mask()[0]
    real = eng.state[0]
    row = public_row(obs, RulesConfig(num_players=P))[0][0]
    order = [(v + k) % P for k in range(P)]
    for f in _SEAT_FIELDS:
        assert np.array_equal(row[f][:P], real[f][order]), f
    for f in _GLOBAL_FIELDS:
        assert np.array_equal(row[f], real[f]), f
    assert np.array_equal(row["hand"][0], real["hand"][v])
    assert [int(row["bandit"][k, c]) for k in range(P) for c in range(2)] == [
        _rel(int(real["bandit"][q, c]), v, P) for q in order for c in range(2)]
    for f in ("turn_player", "first_player", "actor", "other"):
        assert int(row[f]) == _rel(int(real[f]), v, P), f
    if real["intent"] == I_ATTACK:
        assert row["pend_value"] == real["pend_value"]
    rebuilt = reconstruct(obs, RulesConfig(num_players=P), 3, rng)
    assert (rebuilt.state["mask"].astype(bool) == mask.astype(bool)).all()
    # the dealt hidden part keeps the sizes and conserves every card
    for g in range(3):
        r = rebuilt.state[g]
        assert list(r["hand"][:P].sum(axis=1)) == list(real["hand_n"][order])
        total = r["hand"][:P].sum(axis=0) + r["discard"] + np.bincount(r["deck"][:r["deck_n"]], minlength=13)
        total[11:13] += r["shelter"][:P].sum(axis=0)
        assert list(total) == list(eng.cards.copies)
    return int(real["phase"])


@pytest.mark.parametrize("P", [2, 3, 4, 6])
def test_rebuilt_game_matches_the_observation_at_every_decision(P):
    rng = np.random.default_rng(P)
    bots = [agents.make("random", GAME, seed=3 + i) for i in range(P)]
    phases = set()
    for seed in range(3):
        eng = Engine(RulesConfig(num_players=P), 1)
        eng.reset([100 * P + seed])
        while not eng.terminated[0]:
            if eng.legal_mask()[0].sum() > 1:
                phases.add(_check_rebuilt(eng, P, rng))
            who = int(eng.current_player()[0])
            eng.step(np.array([bots[who].act(eng.observe(np.array([who]))[0], eng.legal_mask()[0])]))
    assert PH_DEFEND in phases and len(phases) >= 6  # the block decision and most phases were rebuilt


@pytest.mark.parametrize("P", [2, 3, 4, 6])
def test_search_plays_legal_moves_in_every_seat(P):
    bots = [agents.make("rm-search", GAME, budget=16, seed=i) for i in range(P)]
    eng = Engine(RulesConfig(num_players=P), 1)
    eng.reset([7 * P])
    while not eng.terminated[0]:
        who = int(eng.current_player()[0])
        mask = eng.legal_mask()[0]
        a = bots[who].act(eng.observe(np.array([who]))[0], mask)
        assert mask[a], (a, np.flatnonzero(mask))
        eng.step(np.array([a]))  # raises on an illegal action
    assert int(eng.state["end_reason"][0]) == 0  # the Market emptied before the turn cap


def _defend_table(defender_hand, inside=None):
    eng = start_turn(game(3), tp=0, hands={0: [6, 1, "theft"], 1: defender_hand}, inside=inside,
                     shelters=[(1, 0)] if inside else ())
    act(eng, "attack")
    act(eng, "number", 6)
    act(eng, "opponent", 1)
    assert eng.state["phase"][0] == PH_DEFEND and int(eng.current_player()[0]) == 1
    return eng


def test_search_decides_the_block_as_the_defender():
    """RM-5.7: the defender (not the attacker) decides; both answers are searched."""
    eng = _defend_table([9, 7], inside={(1, 0): 4})
    bot = agents.make("rm-search", GAME, budget=64, seed=0)
    mask = eng.legal_mask()[0]
    a = bot.act(eng.observe(np.array([1]))[0], mask)
    assert mask[a] and set(bot.last["actions"]) == {25, 27, 29}  # block with 7 or 9, or no block
    # the answer played is the one with the best mean rollout value
    values = dict(zip(bot.last["actions"], bot.last["values"]))
    assert values[a] == max(values.values()) and bot.last["simulations"] == 64 // 3


def test_same_seed_same_moves_and_the_budget_is_checked():
    eng = _defend_table([9, 7])
    obs, mask = eng.observe(np.array([1]))[0], eng.legal_mask()[0]
    runs = []
    for _ in range(2):
        bot = agents.make("rm-search", GAME, budget=32, seed=5)
        runs.append((bot.act(obs, mask), bot.last["values"]))
    assert runs[0] == runs[1]
    with pytest.raises(ValueError, match="budget must be at least 1"):
        agents.make("rm-search", GAME, budget=0)


def test_observation_of_other_rules_is_refused():
    eng = _defend_table([9, 7])
    obs, mask = eng.observe(np.array([1]))[0], eng.legal_mask()[0]
    bot = agents.make("rm-search", GAME, rules=RulesConfig(num_players=4), seed=0)
    with pytest.raises(ReconstructionError, match="3-player game"):
        bot.act(obs, mask)


def _wins(search, opponents, P, games, seed):
    """Games won by ``search`` in seat ``g % P`` of game g."""
    wins = 0
    for g in range(games):
        seat = g % P
        bots = list(opponents)
        bots.insert(seat, search)
        eng = Engine(RulesConfig(num_players=P), 1)
        eng.reset([seed + g])
        while not eng.terminated[0]:
            who = int(eng.current_player()[0])
            eng.step(np.array([bots[who].act(eng.observe(np.array([who]))[0], eng.legal_mask()[0])]))
        wins += int(eng.state["winners"][0, seat])
    return wins


def test_search_beats_random_play():
    search = agents.make("rm-search", GAME, budget=32, seed=1)
    opponents = [agents.make("random", GAME, seed=3 + i) for i in range(3)]
    assert _wins(search, opponents, 4, 12, seed=500) >= 9  # parity is 3 of 12


def test_search_beats_a_heuristic_head_to_head():
    """At budget 64, two players: rm-search against rm-banker (docs/games/rune-market/
    LEADERBOARD.md has the 4-player tournament figure)."""
    search = agents.make("rm-search", GAME, budget=64, seed=1)
    wins = _wins(search, [agents.make("rm-banker", GAME, seed=3)], 2, 16, seed=900)
    assert wins >= 11  # parity is 8 of 16
