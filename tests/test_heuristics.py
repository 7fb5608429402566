"""Rule-based agents (agents/ripmarket/heuristics.py) and the seat view they decide from (agents/ripmarket/view.py)."""

from __future__ import annotations

import numpy as np
import pytest

import agents
from agents.ripmarket.heuristics import DEFAULT_GHOST, GHOST, LIVING, HeuristicAgent
from agents.ripmarket.view import SeatView
from ripmarket_env.games.ripmarket import Engine, RulesConfig
from ripmarket_env.games.ripmarket.cards.loader import default_cards, load_cards

LIVING_PHASES = {"acquire", "play", "choose_target", "choose_market_slot", "choose_replacement"}
GHOST_PHASES = {"ghost", "choose_victim"}
STYLES = ["greedy", "survivor", "shark", "hoarder", "trickster"]


@pytest.fixture(autouse=True)
def strict_heuristics(monkeypatch):
    """Errors inside a heuristic fail the test instead of falling back to a legal action."""
    monkeypatch.setattr(HeuristicAgent, "strict", True)


def run_games(seat_agents, num_players: int, seeds, check=None):
    """Play full games in one engine batch; seat k is driven by ``seat_agents[k]``.

    Every action is checked against the mask. Returns (rewards, phases seen, actions).
    """
    n = len(seeds)
    eng = Engine(RulesConfig(num_players=num_players), batch_size=n)
    eng.reset(list(seeds))
    phases: dict[str, int] = {}
    log = []
    for _ in range(5000):
        if eng.terminated.all():
            break
        cur = eng.current_player()
        mask = eng.legal_mask().copy()
        obs = eng.observe()
        names = eng.phase()
        acts = np.full(n, -1, np.int64)
        for seat in range(num_players):
            rows = np.flatnonzero((cur == seat) & ~eng.terminated)
            if rows.size:
                acts[rows] = seat_agents[seat].act_batch(obs[rows], mask[rows])
        for g in np.flatnonzero(~eng.terminated):
            assert mask[g, acts[g]], (
                f"{seat_agents[cur[g]].name} chose illegal action {acts[g]} "
                f"({eng.describe_action(acts[g])}) in phase {names[g]}; legal {np.flatnonzero(mask[g])}"
            )
            phases[names[g]] = phases.get(names[g], 0) + 1
            if check is not None:
                check(obs[g], mask[g], acts[g])
        log.append(acts.copy())
        eng.step(acts)
    assert eng.terminated.all(), "games did not finish"
    return eng.rewards().copy(), phases, np.array(log)


# ---------------------------------------------------------------------------------
# Registry
# ---------------------------------------------------------------------------------


def test_registry_has_every_style():
    names = agents.names()
    for s in STYLES + ["random"]:
        assert s in names
        desc = agents.describe(s)
        assert desc and "\n" not in desc
    assert set(LIVING) == set(STYLES)
    assert {"spiteful", "kingmaker", "chaotic"} <= set(GHOST)
    for s in STYLES:
        a = agents.make(s, seed=0)
        assert isinstance(a, agents.Agent)
        assert a.ghost_style_name == DEFAULT_GHOST[s]
        for g in GHOST:
            b = agents.make(s, ghost_style=g, seed=0)
            assert b.ghost_style_name == g
    with pytest.raises(KeyError):
        agents.make("greedy", ghost_style="nope")


# ---------------------------------------------------------------------------------
# Legal actions over full games, Living and Ghost phases
# ---------------------------------------------------------------------------------


@pytest.mark.parametrize("num_players", [2, 4, 6, 10])
@pytest.mark.parametrize("name", ["random"] + STYLES)
def test_every_agent_plays_legal_full_games(name, num_players):
    agent = agents.make(name, seed=7)
    seeds = [1000 * num_players + i for i in range(3 if num_players < 10 else 2)]
    _, phases, _ = run_games([agent] * num_players, num_players, seeds)
    assert set(phases) & LIVING_PHASES
    if num_players >= 6:
        assert phases.get("ghost", 0) > 0, phases


@pytest.mark.parametrize("ghost_style", ["spiteful", "kingmaker", "chaotic"])
def test_ghost_styles_legal(ghost_style):
    """Every Living style paired with this Ghost style, mixed at one 10-player table."""
    seat_agents = [agents.make(STYLES[k % len(STYLES)], ghost_style=ghost_style, seed=k) for k in range(10)]
    _, phases, _ = run_games(seat_agents, 10, [13, 14])
    assert {"ghost", "choose_victim"} <= set(phases), phases


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_fallback_returns_a_legal_action(monkeypatch):
    agent = agents.make("greedy")
    eng = Engine(RulesConfig(num_players=4), batch_size=1)
    eng.reset([5])
    obs, mask = eng.observe()[0], eng.legal_mask()[0]
    # garbage observation: the heuristic cannot decode it, the agent still answers legally
    monkeypatch.setattr(HeuristicAgent, "strict", False)
    bad = np.full_like(obs, np.nan)
    a = agent.act(bad, mask)
    assert mask[a]
    assert agent.act(obs, np.zeros_like(mask)) == -1


# ---------------------------------------------------------------------------------
# Determinism and hidden information
# ---------------------------------------------------------------------------------


@pytest.mark.parametrize("name", STYLES)
def test_deterministic_given_seed(name):
    runs = []
    for _ in range(2):
        seat_agents = [agents.make(name, ghost_style="chaotic", seed=42 + k) for k in range(6)]
        _, _, log = run_games(seat_agents, 6, [77, 78])
        runs.append(log)
    assert np.array_equal(runs[0], runs[1])


def _decision_points(num_players: int, seed: int, steps: int = 400):
    """Random playouts; yield (engine, game row) at many decisions of varied phases."""
    eng = Engine(RulesConfig(num_players=num_players), batch_size=1)
    eng.reset([seed])
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        if eng.terminated[0]:
            return
        yield eng
        legal = np.flatnonzero(eng.legal_mask()[0])
        eng.step(np.array([rng.choice(legal)]))


def test_same_action_when_only_hidden_information_changes():
    checked = {"living": 0, "ghost": 0}
    makers = [lambda s=s: agents.make(s, seed=5) for s in STYLES] + [
        lambda g=g: agents.make("greedy", ghost_style=g, seed=5) for g in GHOST
    ]
    for seed in (3, 4):
        for eng in _decision_points(6, seed):
            actor = int(eng.current_player()[0])
            obs = eng.observe([actor])[0].copy()
            mask = eng.legal_mask()[0].copy()
            twin = eng.clone()
            st = twin.state[0]
            # another seat's hand: same size, different cards
            changed = False
            for q in range(6):
                if q == actor or st["hand_n"][q] == 0:
                    continue
                have = np.flatnonzero(st["hand"][q] > 0)
                x = int(have[0])
                y = (x + 1) % st["hand"].shape[1]
                st["hand"][q, x] -= 1
                st["hand"][q, y] += 1
                changed = True
                break
            # and the order of the Living Deck
            n = int(st["deck_n"])
            if n > 1:
                st["deck"][:n] = st["deck"][:n][::-1].copy()
            if not changed:
                continue
            obs2 = twin.observe([actor])[0]
            assert np.array_equal(obs, obs2), "the actor's observation must not show hidden information"
            for make in makers:
                assert make().act(obs, mask) == make().act(obs2, mask)
            checked["ghost" if eng.phase()[0] in GHOST_PHASES else "living"] += 1
    assert checked["living"] > 20 and checked["ghost"] > 0, checked


# ---------------------------------------------------------------------------------
# The seat view decodes what the seat may see
# ---------------------------------------------------------------------------------


def test_seat_view_matches_public_state():
    P = 5
    for eng in _decision_points(P, 9, steps=250):
        r = eng.state[0]
        actor = int(eng.current_player()[0])
        v = SeatView.from_obs(eng.observe([actor])[0], eng.legal_mask()[0])
        assert v.num_players == P and v.phase == eng.phase()[0] and v.is_actor
        hand = {int(d): int(c) for d, c in enumerate(r["hand"][actor]) if c > 0}
        assert v.hand == hand
        assert v.market[:3] == [int(x) for x in r["market"][:3]]
        assert [a for a, _, _ in v.legal] == eng.legal_actions(0)
        for k, s in enumerate(v.seats):
            q = (actor + k) % P
            assert s.alive == bool(r["alive"][q])
            assert s.hp == int(r["hp"][q])
            assert s.hand_size == int(r["hand_n"][q])
            assert s.acted == bool(r["acted"][q])
            d = int(r["played"][q])
            if d >= 0 and (not r["face_down"][q] or q == actor):
                assert s.played == d
            elif d >= 0:
                assert s.face_down and s.played == -1
            att = {}
            for i in range(int(r["attached_n"][q])):
                att[int(r["attached"][q, i])] = att.get(int(r["attached"][q, i]), 0) + 1
            assert s.attached == att


# ---------------------------------------------------------------------------------
# Head-to-head sanity check
# ---------------------------------------------------------------------------------


def test_greedy_beats_random():
    seat_agents = [agents.make("greedy", seed=1)] + [agents.make("random", seed=2 + k) for k in range(3)]
    rewards, _, _ = run_games(seat_agents, 4, range(400))
    win_rate = float((rewards[:, 0] > 0).mean())
    assert win_rate > 0.35, win_rate


# ---------------------------------------------------------------------------------
# Behaviour in arranged situations (state written directly, then observed)
# ---------------------------------------------------------------------------------


def _arranged(num_players=4, *, actor_hand=(), played=None, rule=0, phase=1, hp=None, hand_n=None,
              shadow_hand=(), alive=None, acted=None, pend_shadow=-1, cards=None):
    """An engine whose game 0 is arranged for seat 0 to decide; returns (engine, db)."""
    # phase codes: 1 play, 5 ghost, 6 choose_victim (ripmarket_env.games.ripmarket.state.PHASE_NAMES)
    eng = Engine(RulesConfig(num_players=num_players), batch_size=1, cards=cards)
    eng.reset([1])
    db = eng.cards
    r = eng.state[0]
    r["order"][:num_players] = np.arange(num_players)
    r["first_player"] = 0
    r["actor"] = 0
    r["phase"] = phase
    r["rule"] = rule
    r["hand"][0] = 0
    for name in actor_hand:
        r["hand"][0, db.by_name(name).id] += 1
    r["hand_n"][0] = len(actor_hand)
    r["shadow_hand"][0] = 0
    for name in shadow_hand:
        r["shadow_hand"][0, db.by_name(name).id] += 1
    r["shadow_n"][0] = len(shadow_hand)
    r["pend_shadow"] = -1 if pend_shadow == -1 else db.by_name(pend_shadow).id
    for q, name in (played or {}).items():
        r["played"][q] = db.by_name(name).id
        r["acted"][q] = 1
        r["acquired"][q] = 1
    for q, v in (hp or {}).items():
        r["hp"][q] = v
    for q, v in (hand_n or {}).items():
        r["hand_n"][q] = v
    for q, v in (alive or {}).items():
        r["alive"][q] = v
    for q, v in (acted or {}).items():
        r["acted"][q] = v
    r["acted"][0] = 1
    r["acquired"][0] = 1 if phase == 1 else 0
    return eng, db


def _act(name, eng, mask_actions, **kw):
    mask = np.zeros(eng.num_actions, bool)
    mask[mask_actions] = True
    if eng.cards is not default_cards():
        kw = {"cards": eng.cards, **kw}
    return agents.make(name, seed=0, **kw).act(eng.observe([0])[0], mask)


def test_greedy_plays_high_survivor_saves_strong_cards():
    """First-edition numbers (Stockpile 2, Closer 5, Tycoon 8 against 6, 5, 4)."""
    first = load_cards("first-edition")
    hand = ("Stockpile", "Closer", "Tycoon")
    played = {1: "Merchant", 2: "Market Crash", 3: "Black Market Deal"}  # 6, 5, 4: I play last
    eng, db = _arranged(actor_hand=hand, played=played, cards=first)
    card = {n: eng.actions.encode("card", db.by_name(n).id) for n in hand}
    legal = list(card.values())
    assert _act("greedy", eng, legal) == card["Tycoon"]  # 8 beats Closer's 5 + 2
    assert _act("survivor", eng, legal) == card["Closer"]  # 7 is safe above 4; Tycoon is saved
    eng, db = _arranged(actor_hand=hand, played=played, rule=1, cards=first)  # Low Tide: lowest wins
    assert _act("greedy", eng, legal) == card["Stockpile"]
    assert _act("survivor", eng, legal) == card["Stockpile"]


def test_ghost_styles_pick_shadow_and_victim():
    common = dict(alive={0: 0}, hp={0: 0, 1: 2, 2: 1, 3: 2}, hand_n={1: 3, 2: 3, 3: 5},
                  acted={1: 0, 2: 0, 3: 0})
    eng, db = _arranged(phase=5, shadow_hand=("Possession", "Blessing of the Meek"), **common)
    at = eng.actions
    poss = at.encode("shadow", db.by_name("Possession").id)
    bless = at.encode("shadow", db.by_name("Blessing of the Meek").id)
    legal = [at.encode("pass"), poss, bless]
    assert _act("greedy", eng, legal, ghost_style="spiteful") == poss
    assert _act("greedy", eng, legal, ghost_style="kingmaker") == bless
    victims = [at.encode("target", k) for k in (1, 2, 3)]
    eng, _ = _arranged(phase=6, shadow_hand=("Blessing of the Meek",), pend_shadow="Possession", **common)
    assert _act("greedy", eng, victims, ghost_style="spiteful") == at.encode("target", 3)  # the leader
    eng, _ = _arranged(phase=6, shadow_hand=("Possession",), pend_shadow="Blessing of the Meek", **common)
    assert _act("greedy", eng, victims, ghost_style="kingmaker") == at.encode("target", 2)  # the weakest


def test_decisions_match_the_recorded_ones():
    """Decisions recorded from the heuristics (4, 6 and 8 players, every style, Ghost turns
    included) are reproduced exactly: speed-ups of the decoding or the round model must not
    change a single action. A fresh agent per style (seed 0) decides the samples in order.
    After an intended change of the rules the heuristics model, re-record the actions (the
    observations stay) and review the count: RIPMARKET_UPDATE_DECISIONS=1 pytest -k recorded.
    The samples are first-edition games (docs/BALANCE.md), so the agents are given those cards."""
    import os
    from pathlib import Path

    from ripmarket_env.games.ripmarket.cards.loader import load_cards

    path = Path(__file__).parent / "data" / "heuristic_decisions.npz"
    data = np.load(path)
    styles = ["greedy", "survivor", "shark", "hoarder", "trickster"]
    # the samples were recorded from first-edition games: the agents read those cards
    first = load_cards("first-edition")
    bots = {n: agents.make(n, seed=0, cards=first) for n in styles}
    got = np.array([bots[styles[s]].act(o, m) for o, m, s in zip(data["obs"], data["mask"], data["style"])])
    if os.environ.get("RIPMARKET_UPDATE_DECISIONS") == "1":
        arrays = {k: data[k] for k in data.files}
        arrays["action"] = got.astype(data["action"].dtype)
        np.savez_compressed(path, **arrays)
        data = np.load(path)
    assert len(got) > 500 and set(data["players"].tolist()) == {4, 6, 8}
    mismatch = np.flatnonzero(got != data["action"])
    assert mismatch.size == 0, f"{mismatch.size} decisions changed, first at sample {mismatch[:5].tolist()}"


SECOND_EDITION_DECISIONS = "heuristic_decisions_2e.npz"


def _sample_decisions(counts=(4, 6, 8), games=8, every=3):
    """Observations, masks, styles and player counts of every ``every``-th decision of
    seeded heuristic games with the packaged cards and the default rules (each seat a style)."""
    obs, masks, style, players = [], [], [], []
    for P in counts:
        bots = [agents.make(STYLES[q % len(STYLES)], seed=q) for q in range(P)]
        eng = Engine(RulesConfig(num_players=P), batch_size=games)
        eng.reset([1_000 * P + g for g in range(games)])
        k = 0
        for _ in range(5000):
            if eng.terminated.all():
                break
            cur, mask, o = eng.current_player(), eng.legal_mask().copy(), eng.observe()
            acts = np.full(games, -1, np.int64)
            for g in np.flatnonzero(~eng.terminated):
                acts[g] = bots[cur[g]].act(o[g], mask[g])
                k += 1
                if k % every == 0:
                    obs.append(o[g].copy()), masks.append(mask[g].copy())
                    style.append(cur[g] % len(STYLES)), players.append(P)
            eng.step(acts)
    return (np.array(obs, np.float32), np.array(masks, bool), np.array(style, np.int64),
            np.array(players, np.int64))


def test_second_edition_decisions_match_the_recorded_ones():
    """As above, for samples of second-edition games under the default rules (the packaged
    cards): a fresh agent per style (seed 0) reproduces every recorded action. After an
    intended change of the cards or the rules, record new samples (observations from seeded
    games, then the actions) and review: RIPMARKET_RECORD_DECISIONS=1 pytest -k second_edition"""
    import os
    from pathlib import Path

    path = Path(__file__).parent / "data" / SECOND_EDITION_DECISIONS
    if os.environ.get("RIPMARKET_RECORD_DECISIONS") == "1":
        obs, mask, style, players = _sample_decisions()
        bots = {n: agents.make(n, seed=0) for n in STYLES}
        action = np.array([bots[STYLES[s]].act(o, m) for o, m, s in zip(obs, mask, style)], np.int64)
        np.savez_compressed(path, obs=obs, mask=mask, style=style, players=players, action=action)
    data = np.load(path)
    bots = {n: agents.make(n, seed=0) for n in STYLES}
    got = np.array([bots[STYLES[s]].act(o, m) for o, m, s in zip(data["obs"], data["mask"], data["style"])])
    assert len(got) > 500 and set(data["players"].tolist()) == {4, 6, 8}
    assert len(set(data["style"].tolist())) == len(STYLES)
    mismatch = np.flatnonzero(got != data["action"])
    assert mismatch.size == 0, f"{mismatch.size} decisions changed, first at sample {mismatch[:5].tolist()}"


def test_the_zoo_page_example_runs():
    """docs/ZOO.md's Python example (the registry, making agents, one decision and a batch)
    runs as written and its agent answers with a legal action."""
    import re
    from pathlib import Path

    text = (Path(__file__).resolve().parent.parent / "docs" / "ZOO.md").read_text()
    code = re.search(r"```python\n(.*?)```", text, re.S).group(1)
    scope: dict = {}
    exec(compile(code, "docs/ZOO.md", "exec"), scope)
    assert scope["mask"][scope["a"]] == 1 and list(scope["actions"]) == [scope["a"]]
