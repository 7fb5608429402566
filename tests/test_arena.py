"""The arena (eval/arena.py): its batched table plays exactly the games a plain
one-game-at-a-time loop plays, for every game registered; the outcome, the recorder, the
errors and the progress lines."""

from __future__ import annotations

import dataclasses
import functools

import numpy as np
import pytest

from eval import arena
from ripmarket_env import games as registry
from ripmarket_env.games.ripmarket.outcome import finishing_order


class Hashed:
    """Deterministic per decision (a function of the observation and mask only), so a
    game does not depend on which other games share the agent's batch."""

    def __init__(self, salt: int):
        self.salt = salt
        self.name = f"hashed{salt}"

    def act(self, observation, action_mask):
        legal = np.flatnonzero(action_mask)
        if legal.size == 0:
            return -1
        h = int(np.round(np.asarray(observation, np.float64) * 997).sum()) * 31 + self.salt
        return int(legal[h % legal.size])

    def act_batch(self, observations, action_masks):
        return np.array([self.act(o, m) for o, m in zip(observations, action_masks)], dtype=np.int64)


def plain_games(spec, rules, seeds, seats, agents):
    """Each game alone in its own engine, one ``act`` per decision: rewards, steps and the
    decisions (game, seat, agent, action, observation) in the order taken per game."""
    rewards, steps, decisions = [], [], []
    for g, seed in enumerate(seeds):
        eng = spec.make_engine(rules, batch_size=1)
        eng.reset([seed])
        n = 0
        while not eng.terminated[0]:
            seat = int(eng.current_player()[0])
            a_idx = int(seats[g][seat])
            obs = eng.observe([seat])[0]
            mask = eng.legal_mask()[0].copy()
            a = agents[a_idx].act(obs, mask)
            decisions.append((g, seat, a_idx, a, obs.copy(), mask))
            eng.step([a])
            n += 1
        rewards.append(eng.rewards()[0].copy())
        steps.append(n)
    return np.array(rewards), np.array(steps), decisions


@pytest.mark.parametrize("game_id", registry.ids())
@pytest.mark.parametrize("players,seed", [(3, 0), (5, 11), (6, 4)])
def test_table_plays_the_games_a_plain_loop_plays(game_id, players, seed):
    spec = registry.get(game_id)
    players = max(spec.min_players, min(spec.max_players, players))
    rules = spec.make_rules(players)
    rng = np.random.default_rng(seed)
    B = 7
    seeds = [int(s) for s in rng.integers(0, 2**31 - 1, B)]
    agents = [Hashed(1), Hashed(2), Hashed(3)]
    seats = rng.integers(0, len(agents), (B, players))
    rec = arena.Recorder()
    res = arena.play(spec, rules, seeds, seats, agents, decide=arena.act_each, observers=[rec])
    want_r, want_steps, want_d = plain_games(spec, rules, seeds, seats, agents)
    assert np.array_equal(res.rewards, want_r)
    assert np.array_equal(res.steps, want_steps)
    assert res.rounds == want_steps.max()
    d = rec.decisions
    assert len(d["action"]) == len(want_d) == want_steps.sum()
    # the recorder keeps the batch's decisions round by round; per game they come in play order
    for g in range(B):
        mine = np.flatnonzero(d["game"] == g)
        theirs = [x for x in want_d if x[0] == g]
        assert [int(d["seat"][i]) for i in mine] == [x[1] for x in theirs]
        assert [int(d["agent"][i]) for i in mine] == [x[2] for x in theirs]
        assert [int(d["action"][i]) for i in mine] == [x[3] for x in theirs]
        assert all(np.array_equal(d["obs"][i], x[4]) and np.array_equal(d["mask"][i], x[5])
                   for i, x in zip(mine, theirs))
        assert np.array_equal(d["reward"][mine], want_r[g][[x[1] for x in theirs]])


def test_default_decide_matches_act_each_for_plain_agents():
    """``act_grouped`` (the default) and ``act_each`` give the same games for agents that
    are not networks."""
    spec = registry.get("ripmarket")
    rules = spec.make_rules(4)
    seats = np.array([[0, 1, 1, 0], [1, 0, 0, 1], [0, 0, 1, 1]])
    agents = [Hashed(5), Hashed(6)]
    a = arena.play(spec, rules, [3, 4, 5], seats, agents)
    b = arena.play(spec, rules, [3, 4, 5], seats, agents, decide=arena.act_each)
    assert np.array_equal(a.rewards, b.rewards) and np.array_equal(a.steps, b.steps)


def test_ripmarket_outcome_is_the_finishing_order_of_r11_2():
    spec = registry.get("ripmarket")
    res = arena.play(spec, spec.make_rules(5), list(range(6)), np.zeros((6, 5), np.int64), [Hashed(9)])
    st = res.engine.state
    for g in range(6):
        order, place, placement = finishing_order(st["elim"][g, :5], st["winners"][g, :5])
        assert res.places[g].tolist() == place
        assert arena.order_of(res.places[g]) == (order, placement)
        assert res.winners[g].tolist() == st["winners"][g, :5].astype(bool).tolist()
        # win rewards: the winners, and only they, get a positive reward
        assert ((res.rewards[g] > 0) == res.winners[g]).all()


def test_outcome_without_a_hook_follows_the_rewards():
    spec = dataclasses.replace(registry.get("ripmarket"), extras={})
    rewards = np.array([[1.0, -0.5, -0.5, 0.0], [0.5, 0.5, -1.0, -0.25]])
    winners, places = arena.outcome(spec, None, rewards)
    assert winners.tolist() == [[True, False, False, False], [True, True, False, False]]
    assert places.tolist() == [[1, 3, 3, 2], [1, 1, 4, 3]]
    assert arena.order_of(places[0]) == ([[0], [3], [1, 2]], [1.0, 3.5, 3.5, 2.0])


class Stubborn:
    name = "stubborn"

    def act_batch(self, observations, action_masks):
        return np.array([int(np.flatnonzero(~m)[0]) for m in action_masks], dtype=np.int64)


class Short:
    def act_batch(self, observations, action_masks):
        return np.zeros(max(len(observations) - 1, 0), dtype=np.int64)


def test_an_agent_breaking_the_protocol_is_named():
    spec = registry.get("ripmarket")
    rules = spec.make_rules(3)
    with pytest.raises(arena.ArenaError, match=r"agent 'stubborn' chose an illegal action \(table 1, game 0\)"):
        arena.play(spec, rules, [1], np.zeros((1, 3), np.int64), [Stubborn()], where=lambda g: f"table 1, game {g}")
    with pytest.raises(arena.ArenaError, match=r"agent 'short' returned 1 actions for 2 games"):
        arena.play(spec, rules, [1, 2], np.zeros((2, 3), np.int64), [Short()],
                   decide=functools.partial(arena.act_each, names=["short"]))


def _square(task, report):
    report(1)
    return task * task


def test_run_pool_keeps_task_order_and_counts_progress():
    out = arena.run_pool(_square, [3, 1, 2], workers=1, total=3, label="sq", progress=False)
    assert out == [9, 1, 4]
