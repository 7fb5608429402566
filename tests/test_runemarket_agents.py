"""The Rune Market's bots: registered for the game, legal in every decision, games end
before the cap, and the documented defence policies."""

from __future__ import annotations

import numpy as np
import pytest

import agents
from rm_scenario import act, game, start_turn
from ripmarket_env.games.runemarket import Engine, RulesConfig
from ripmarket_env.games.runemarket.invariants import check_game

STYLES = ("rm-banker", "rm-raider", "rm-bandit")


def test_registered_for_the_game_only():
    names = agents.names("rune-market")
    assert set(STYLES) <= set(names) and "random" in names
    assert not set(STYLES) & set(agents.names("ripmarket"))
    with pytest.raises(KeyError, match="rm-banker"):
        agents.make("rm-banker")


@pytest.mark.parametrize("P", [2, 4, 6])
def test_heuristic_games_are_legal_and_end_before_the_cap(P):
    bots = [agents.make(STYLES[i % 3], "rune-market", seed=i) for i in range(P)]
    eng = Engine(RulesConfig(num_players=P), batch_size=4)
    eng.reset(list(range(4)))
    while not eng.terminated.all():
        obs, m, who = eng.observe(), eng.legal_mask(), eng.current_player()
        a = np.array([-1 if who[g] < 0 else bots[who[g]].act(obs[g], m[g]) for g in range(4)])
        eng.step(a)  # raises on an illegal action
    assert (eng.state["end_reason"] == 0).all()
    assert all(not check_game(eng, g) for g in range(4))


def _defence(style, defender_hand, loose=None):
    eng = start_turn(game(3), tp=0, hands={0: [6, 1, "theft"], 1: defender_hand}, loose=loose)
    act(eng, "attack")
    act(eng, "number", 6)
    act(eng, "opponent", 1)
    assert eng.state["phase"][0] == 7
    bot = agents.make(style, "rune-market", seed=0)
    return bot.act(eng.observe(np.array([1]))[0], eng.legal_mask()[0])


def test_defence_policies():
    n = lambda v: 18 + v  # noqa: E731
    assert _defence("rm-banker", [9, 7]) == n(7)  # always blocks, smallest card
    assert _defence("rm-raider", [9, 7]) == 29  # keeps 7-10 for attacks
    assert _defence("rm-raider", [6, 9]) == n(6)
    assert _defence("rm-bandit", [9, 7]) == 29  # nothing at stake
    assert _defence("rm-bandit", [9, 7], loose={(1, 0): 2}) == n(7)
