"""Hand-built Rune Market tables for the rules tests."""

from __future__ import annotations

import numpy as np

from ripmarket_env.core.engine import kernel_view
from ripmarket_env.games.runemarket import Engine, RulesConfig
from ripmarket_env.games.runemarket import actions as A
from ripmarket_env.games.runemarket import kernels as K
from ripmarket_env.games.runemarket.state import PH_TURN_START, PHASE_NAMES

NAMES = {"theft": 10, "red": 11, "blue": 12}


def card(x) -> int:
    """A design id: 1..10 for Number cards, "theft", "red", "blue"."""
    return NAMES[x] if isinstance(x, str) else x - 1


def game(P=4, seed=1, **rules) -> Engine:
    eng = Engine(RulesConfig(num_players=P, **rules), batch_size=1)
    eng.reset([seed])
    return eng


def _take(st, d):
    """Take one card of design d out of the discard pile or the draw pile (cards stay conserved)."""
    if st["discard"][0, d] > 0:
        st["discard"][0, d] -= 1
        st["discard_n"][0] -= 1
        return
    n = int(st["deck_n"][0])
    deck = st["deck"][0]
    i = next((i for i in range(n) if deck[i] == d), None)
    if i is None:
        raise ValueError(f"no card of design {d} left outside the hands")
    deck[i:n - 1] = deck[i + 1:n].copy()
    deck[n - 1] = -1
    st["deck_n"][0] = n - 1


def to_hand(eng):
    """Go on (``done``) through stages 1 and 2 to the hand stage."""
    while phase(eng) in ("start", "rune_buy"):
        eng.step(np.array([0]))
    return eng


def start_turn(eng, tp=0, hands=None, shelters=(), boats=(), inside=None, loose=None, bandits=None,
               market=None, market_boats=None, market_bandits=None, skip=True):
    """Set game 0's tables and start seat ``tp``'s turn (interest runs).

    hands: {seat: [cards]} (other seats keep their hands); shelters/boats: [(seat, colour)];
    inside/loose: {(seat, colour): n}; bandits: {(seat, colour): owner}; market: (red, blue).
    Runes put on tables are taken from the Market so the totals stay 10 and 10, and cards
    from the discard or draw pile. ``skip``: go on to the hand stage (``to_hand``)."""
    st = eng.state
    if hands is not None:
        for q, cards in hands.items():
            for d in range(13):  # the old hand goes to the discard pile
                st["discard"][0, d] += st["hand"][0, q, d]
                st["discard_n"][0] += st["hand"][0, q, d]
            st["hand"][0, q] = 0
            st["hand_n"][0, q] = 0
        for q, cards in hands.items():
            for x in cards:
                _take(st, card(x))
                st["hand"][0, q, card(x)] += 1
            st["hand_n"][0, q] = len(cards)
    for q, c in shelters:
        _take(st, 11 + c)
        st["shelter"][0, q, c] = 1
    for q, c in boats:
        st["boat"][0, q, c] = 1
        st["market_boats"][0] -= 1
    for field, d in (("inside", inside), ("loose", loose)):
        for (q, c), n in (d or {}).items():
            st[field][0, q, c] = n
            st["market"][0, c] -= n
    for (q, c), owner in (bandits or {}).items():
        st["bandit"][0, q, c] = owner
        st["market_bandits"][0] -= 1
    if market is not None:
        st["market"][0] = market
    if market_boats is not None:
        st["market_boats"][0] = market_boats
    if market_bandits is not None:
        st["market_bandits"][0] = market_bandits
    st["turn_player"][0] = tp
    st["phase"][0] = PH_TURN_START
    st["done"][0] = False
    K.advance_one(kernel_view(st), kernel_view(eng.tables), eng.cfg, 0)
    return to_hand(eng) if skip else eng


def phase(eng) -> str:
    return "game_over" if eng.state["done"][0] else PHASE_NAMES[eng.state["phase"][0]]


def legal(eng) -> list[str]:
    return [f"{k}:{a}" for k, a in (A.decode(x) for x in eng.legal_actions(0))]


def act(eng, kind, arg=0):
    """Take the action; if it is not legal because the engine just took it as the only
    option (RM-8.1), accept that instead."""
    a = A.encode(kind, arg)
    if not eng.state["mask"][0, a]:
        st = eng.state[0]
        rows = st["ev"][: st["ev_n"]]
        if any(int(k) == K.EV_FORCED and int(x) == a for k, _s, x, _b in rows):
            return eng
    eng.step(np.array([a]))
    return eng


def hand(eng, q) -> dict:
    h = eng.state["hand"][0, q]
    return {d: int(h[d]) for d in range(13) if h[d]}


def runes(eng, q) -> tuple:
    st = eng.state
    return (int(st["loose"][0, q, 0]), int(st["inside"][0, q, 0]), int(st["loose"][0, q, 1]),
            int(st["inside"][0, q, 1]))
