"""The clairvoyant look (eval.clairvoyant), the analysis of what knowing the hidden cards
could give a lookahead: it reads copies of the true game and never the table's own."""

from __future__ import annotations

import numpy as np
import pytest

import agents
from eval.clairvoyant import ClairvoyantLook, clairvoyant_match
from eval.match import match
from ripmarket_env.games import get

GAME = "black-market"


def _mid_game(seed: int = 3):
    spec = get(GAME)
    eng = spec.make_engine(spec.make_rules(2), batch_size=1)
    eng.reset([seed])
    rng = np.random.default_rng(seed)
    for _ in range(40):
        legal = np.flatnonzero(eng.legal_mask()[0])
        if legal.size >= 3 and _ > 10:
            break
        eng.step([int(rng.choice(legal))])
    return eng, legal


def test_the_look_plays_copies_with_shared_streams_and_leaves_the_table_alone():
    eng, legal = _mid_game()
    bot = agents.make("bm-ppo", game=GAME, seed=1)  # deterministic: the copies differ by their streams only
    look = ClairvoyantLook(bot, bot, None, top_k=3, n=4, seed=5)
    look.on_start(eng)
    before = eng.state.tobytes()
    seat = int(eng.current_player()[0])
    same = look.values(0, seat, np.array([legal[0], legal[0], legal[1]]))
    assert eng.state.tobytes() == before  # the copies are clones
    assert same.shape == (3,) and np.all(np.abs(same) <= 1.0 + 1e-9)
    # common random numbers: one move played twice over the same reseeded streams scores the same
    assert same[0] == same[1]
    sim = look.copies(0, legal[:3])
    streams = sim.state["rng"].reshape(3, 4)
    assert (streams == streams[0]).all()  # copy j: one stream for every candidate
    assert len(set(streams[0].tolist()) | {int(eng.state["rng"][0])}) == 5  # new, and new per copy
    others = [f for f in eng.state.dtype.names if f != "rng"]
    assert all(np.array_equal(sim.state[f][k], eng.state[f][0]) for f in others for k in range(12))  # the true game


def test_a_look_that_never_overrules_the_network_is_the_networks_match():
    a = clairvoyant_match("bm-ppo", "bm-rusher", games=4, num_players=2, seed=11, game=GAME, top_k=4, n=2, sure=0.0)
    b = match(agents.make("bm-ppo", game=GAME, seed=1), agents.make("bm-rusher", game=GAME, seed=7), games=4,
              num_players=2, seed=11, game=GAME)
    assert a["looks"] == 0 and a["outcomes"] == b["outcomes"] and a["mean_decisions"] == b["mean_decisions"]
    looked = clairvoyant_match("bm-ppo", "bm-rusher", games=2, num_players=2, seed=11, game=GAME, top_k=2, n=1,
                               sure=2.0)
    assert looked["looks"] > 0 and looked["games"] == 2


def test_the_look_refuses_a_bot_without_a_network_and_bad_budgets():
    rusher = agents.make("bm-rusher", game=GAME, seed=0)
    with pytest.raises(ValueError, match="network bot"):
        ClairvoyantLook(rusher, rusher, None)
    with pytest.raises(ValueError, match="top_k must be >= 1"):
        ClairvoyantLook(agents.make("bm-ppo", game=GAME, seed=1), rusher, None, top_k=0)
