"""The one lookahead for every game with a search agent (agents/lookahead.py,
``NetworkLookahead``): the registered ``<trained bot>-lookahead`` of Black Market and The
Rune Market decide legally and reproducibly, play the network's choice where it has no
choice or is sure, use only the acting seat's observation (RM-8.4, BM-11.2), and refuse
bad arguments with one line."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

import agents  # noqa: E402
from agents.base import game_agents  # noqa: E402
from agents.lookahead import BUDGETS, NetworkLookahead  # noqa: E402
from ripmarket_env.games import get  # noqa: E402

#: (game, the lookahead, its network, a table it plays)
CASES = [("rune-market", "rm-ppo-lookahead", "rm-ppo", {"num_players": 4}),
         ("black-market", "bm-ppo-lookahead", "bm-ppo", {"num_players": 2}),
         ("black-market", "bm-ppo-lookahead", "bm-ppo", {"num_players": 4, "mode": "teams"}),
         ("black-market", "bm-ppo-lookahead", "bm-ppo", {"num_players": 6, "mode": "ffa"}),
         ("black-market", "bm-ppo-lookahead", "bm-ppo", {"num_players": 6, "mode": "teams"})]


def _states(game: str, rules: dict, seed: int, steps: int):
    """(engine, actor) at each decision of one game played by the game's heuristics."""
    spec = get(game)
    eng = spec.make_engine(spec.make_rules(rules=rules), batch_size=1)
    eng.reset([seed])
    zoo = [agents.make_seeded(h, seed + i, game) for i, h in enumerate(game_agents(game).zoo())]
    for t in range(steps):
        if eng.terminated.all():
            return
        actor = int(eng.current_player()[0])
        yield eng, actor
        eng.step([zoo[(actor + t) % len(zoo)].act(eng.observe([actor])[0], eng.legal_mask()[0])])


@pytest.mark.parametrize("game,name,net,rules", CASES)
def test_registered_for_the_trained_bots_and_legal_and_seeded(game, name, net, rules):
    assert name in agents.names(game)
    a, b = agents.make(name, game, seed=3), agents.make(name, game, seed=3)
    looked = 0
    for eng, actor in _states(game, rules, 7, 120):
        obs, mask = eng.observe([actor])[0], eng.legal_mask()[0]
        x, y = a.act(obs, mask), b.act(obs, mask)
        assert mask[x], f"{name} chose illegal action {x}"
        assert x == y, "two lookaheads of the same seed decided differently"
        looked += a.last is not None
    assert looked > 0, "the lookahead never looked ahead: the check was vacuous"


@pytest.mark.parametrize("game,name,net,rules", CASES[:1])
def test_plays_the_network_with_one_legal_action_or_when_sure(game, name, net, rules):
    network = agents.make(net, game, seed=0)
    sure = agents.make(name, game, seed=0, sure=1e-6)  # every favourite is "sure"
    alone = agents.make(name, game, seed=0, top_k=1)
    n = 0
    for eng, actor in _states(game, rules, 11, 80):
        obs, mask = eng.observe([actor])[0], eng.legal_mask()[0]
        want = network.act(obs, mask)
        assert sure.act(obs, mask) == want and sure.last is None
        assert alone.act(obs, mask) == want and alone.last is None
        one = np.zeros_like(mask)
        one[np.flatnonzero(mask)[-1]] = True
        assert sure.act(obs, one) == int(np.flatnonzero(one)[0])
        n += 1
    assert n > 20


@pytest.mark.parametrize("game,name,net,rules", CASES)
def test_uses_only_the_acting_seats_observation(game, name, net, rules):
    """RM-8.4 / BM-11.2: redrawing what the acting seat may not see (the game's
    ``scramble_hidden``) leaves the decision unchanged."""
    spec = get(game)
    rng = np.random.default_rng(5)
    bot = agents.make(name, game, seed=1)
    checked = looked = 0
    for eng, actor in _states(game, rules, 21, 90):
        if eng.legal_mask()[0].sum() < 2:
            continue
        twin = spec.scramble_hidden(eng, 0, actor, rng)
        bot.reset(1)
        a = bot.act(eng.observe([actor])[0], eng.legal_mask()[0])
        looked += bot.last is not None
        bot.reset(1)
        b = bot.act(twin.observe([actor])[0], twin.legal_mask()[0])
        assert a == b, f"{name}: action {a} became {b} when only what seat {actor} may not see was redrawn"
        checked += 1
    assert checked >= 10 and looked > 0


def test_budgets_by_table_and_arguments():
    bot = agents.make("rm-ppo-lookahead", "rune-market", seed=0)
    assert bot.budget(4) == BUDGETS[4] and bot.budget(9) == BUDGETS[max(BUDGETS)]
    assert agents.make("rm-ppo-lookahead", "rune-market", top_k=5, n=2).budget(6) == (5, 2)
    from agents.blackmarket import LOOKAHEAD_BUDGETS

    assert agents.make("bm-ppo-lookahead", "black-market").budget(2) == LOOKAHEAD_BUDGETS[2]
    # a table key's entry wins over its count's at that table only
    keyed = NetworkLookahead("rm-ppo-4p", "rune-market", budgets={4: (2, 2), 6: (1, 1), "6p": (3, 1)})
    assert keyed.budget(6, "6p") == (3, 1) and keyed.budget(6) == (1, 1) and keyed.budget(4, "4p") == (2, 2)


def test_a_table_keys_budget_wins_at_its_table_only():
    """BM-1.3: a table key's budget (here "6p-ffa": a look) wins over its count's (6: the
    network alone, top_k 1) at that table only; at the 6-player team table the moves are
    the network's and it never looks ahead."""
    looked = {}
    for mode in ("ffa", "teams"):
        bot = NetworkLookahead("bm-ppo", "black-market", budgets={2: (2, 3), 6: (1, 1), "6p-ffa": (2, 2)}, seed=3)
        net = agents.make("bm-ppo", "black-market", seed=3)
        looked[mode] = same = n = 0
        for eng, actor in _states("black-market", {"num_players": 6, "mode": mode}, 11, 150):
            obs, mask = eng.observe([actor])[0], eng.legal_mask()[0]
            same += bot.act(obs, mask) == int(net.act(obs, mask))
            looked[mode] += bot.last is not None
            n += 1
        if mode == "teams":
            assert n > 30 and same == n and looked[mode] == 0
    assert looked["ffa"] > 0
    # a network agent instead of a name, and the network as every opponent
    own = NetworkLookahead(agents.make("rm-ppo-4p", "rune-market"), "rune-market", opponents="self", seed=0)
    assert own._models == [own.net]


def test_black_markets_lookahead_looks_with_each_tables_budget():
    """BM-1.3: each Black Market table looks ahead with its own (top_k, n): the table key's
    entry where there is one (4-player teams: more copies than 4-player free-for-all),
    else its player count's."""
    from agents.blackmarket import LOOKAHEAD_BUDGETS

    assert LOOKAHEAD_BUDGETS["4p-teams"][1] > LOOKAHEAD_BUDGETS[4][1]
    for P, mode in ((2, "ffa"), (4, "teams"), (4, "ffa"), (6, "teams"), (6, "ffa")):
        bot = agents.make("bm-ppo-lookahead", "black-market", seed=3)
        seen, look = [], bot.lookahead

        def record(obs, cands, rules, n, _seen=seen, _look=look):
            _seen.append((len(cands), n))
            return _look(obs, cands, rules, n)

        bot.lookahead = record
        for eng, actor in _states("black-market", {"num_players": P, "mode": mode}, 5, 150):
            bot.act(eng.observe([actor])[0], eng.legal_mask()[0])
        top_k, n = LOOKAHEAD_BUDGETS.get(f"{P}p-{mode}") or LOOKAHEAD_BUDGETS[P]
        assert seen and all(c <= top_k and m == n for c, m in seen), (P, mode, seen[:3])


def test_a_named_opponent_model_and_the_horizon_to_the_games_end():
    """``opponents=<agent>`` has that agent play every other seat of the look, and
    ``horizon="end"`` plays the rows to the game's end (the bot's later decisions by the
    network), so the critic values no row; ``horizon="turn"`` stops at the bot's next
    decision and leaves the rows to the critic."""
    calls = {"rusher": 0, "critic": {}}
    looked = {}
    for horizon in ("turn", "end"):
        bot = agents.make("bm-ppo-lookahead", "black-market", seed=4, opponents="bm-rusher", horizon=horizon,
                          sure=2.0, top_k=2, n=2, max_steps=100_000)
        assert [m.name for m in bot._models] == ["bm-rusher"]
        rusher, values = bot._models[0].act_batch, bot.net.values

        def counted_act(o, m, _f=rusher):
            calls["rusher"] += len(o)
            return _f(o, m)

        def counted_values(o, _f=values, _h=horizon):
            calls["critic"][_h] = calls["critic"].get(_h, 0) + len(o)
            return _f(o)

        bot._models[0].act_batch, bot.net.values = counted_act, counted_values
        looked[horizon] = 0
        for eng, actor in _states("black-market", {"num_players": 4, "mode": "ffa"}, 13, 60):
            obs, mask = eng.observe([actor])[0], eng.legal_mask()[0]
            assert mask[bot.act(obs, mask)]
            looked[horizon] += bot.last is not None
    assert looked["turn"] > 0 and looked["end"] > 0 and calls["rusher"] > 0
    assert calls["critic"].get("turn", 0) > 0 and calls["critic"].get("end", 0) == 0


@pytest.mark.parametrize("kwargs,words", [
    ({"top_k": 0}, "top_k must be a whole number"),
    ({"n": 2.5}, "n must be a whole number"),
    ({"margin": -1}, "margin must be"),
    ({"sure": 0}, "sure must be"),
    ({"opponents": "zoo"}, "opponents must be one of heuristics, self or the name of an agent of rune-market"),
    ({"opponents": "bm-rusher"}, "opponents must be one of heuristics, self"),
    ({"horizon": "game"}, "horizon must be one of turn, end, got 'game'"),
    ({"net": "rm-banker"}, "has no action scores and critic"),
    ({"budgets": {2: (0, 3)}}, "budgets[2] top_k must be a whole number"),
    ({"budgets": {2: 3}}, "budgets must map player counts (and table keys) to (top_k, n) pairs"),
    ({"budgets": {"4p": (2, 2)}}, "at least one count"),
    ({"budgets": {4: (2, 2), 2.5: (1, 1)}}, "budgets keys must be player counts or table keys (6p-ffa) of rune-market"),
])
def test_bad_arguments_give_one_line_errors(kwargs, words):
    kw = {"net": "rm-ppo-4p", **kwargs}
    with pytest.raises(ValueError) as err:
        NetworkLookahead(game="rune-market", **kw)
    assert words in str(err.value) and "\n" not in str(err.value)


def test_a_game_without_a_search_agent_is_refused():
    with pytest.raises(ValueError, match="has no search agent"):
        NetworkLookahead("random", game="no-such-game")
