"""Pairs: a tiny fourth game, written for the tests only, to prove that a game is a plugin.

Rules (2-4 players, ids ``TOY-x``):

- TOY-1 A deck of 16 cards, values 1-8, two of each, shuffled by the game's seed; each seat is
  dealt 2 cards, hidden from the others. The first seat is drawn from the seed.
- TOY-2 On your turn you play one card of your hand face up: you score its value, plus 3 if it
  equals the card played just before it (a pair). Then you draw a card if the deck has one.
- TOY-3 A seat with no cards is skipped; when no seat has a card the game is over.
- TOY-4 The highest score wins (+1); every other seat gets -1; a shared top score wins for all
  who share it.

It is registered only by the tests (``ripmarket_env.games.register("toy", "tests.toy_game:SPEC")``),
never in the shipped registry, and everything above the engine and the envs (training,
evaluation, the terminal game, the server and its page) must serve it without a line of its own.
The file uses the core's public helpers only, as a game package would.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from numba import njit

from ripmarket_env.core.drivers import drivers_once
from ripmarket_env.core.engine import Engine as CoreEngine
from ripmarket_env.core.kernels import ev_push, rand_below
from ripmarket_env.core.simple import simple_spec, state_dtype

P_MAX, VALUES, DECK, HAND = 4, 8, 16, 2
EV_PLAY, EV_DRAW, EV_OVER = 1, 2, 3

STATE = state_dtype(P_MAX, VALUES, (
    ("hand", (P_MAX, VALUES), np.int8), ("hand_n", (P_MAX,), np.int8), ("score", (P_MAX,), np.int16),
    ("deck", (DECK,), np.int8), ("deck_n", (), np.int16), ("last", (), np.int8)), events=32)
TABLES = np.dtype([("pair_bonus", np.int64)])


@njit(cache=True)
def _legal(r):
    r.n_legal = 0
    for v in range(VALUES):
        r.mask[v] = 1 if r.hand[r.actor, v] > 0 else 0
        r.n_legal += r.mask[v]


@njit(cache=True)
def reset_game(r, T, c, seed64):
    P = c[0]
    r.rng = seed64
    r.done = False
    r.ev_n = 0
    r.steps = 0
    r.step_rewards[:] = 0.0
    r.final_rewards[:] = 0.0
    r.hand[:] = 0
    r.hand_n[:] = 0
    r.score[:] = 0
    for i in range(DECK):  # TOY-1: values 1-8, two of each, shuffled
        r.deck[i] = i // 2
    for i in range(DECK - 1, 0, -1):
        j = rand_below(r, i + 1)
        r.deck[i], r.deck[j] = r.deck[j], r.deck[i]
    r.deck_n = DECK
    for q in range(P):
        for _ in range(HAND):
            r.deck_n -= 1
            r.hand[q, r.deck[r.deck_n]] += 1
            r.hand_n[q] += 1
    r.last = -1
    r.phase = 0
    r.actor = rand_below(r, P)
    _legal(r)


@njit(cache=True)
def step_game(r, T, c, a):
    r.step_rewards[:] = 0.0
    if a < 0 or r.done:
        return
    P, q = c[0], r.actor
    r.ev_n = 0
    r.steps += 1
    r.hand[q, a] -= 1  # TOY-2
    r.hand_n[q] -= 1
    r.score[q] += a + 1 + (T.pair_bonus if a == r.last else 0)
    ev_push(r, EV_PLAY, q, a, r.score[q])
    r.last = a
    if r.deck_n > 0:
        r.deck_n -= 1
        r.hand[q, r.deck[r.deck_n]] += 1
        r.hand_n[q] += 1
        ev_push(r, EV_DRAW, q, r.deck[r.deck_n], 0)
    for k in range(1, P + 1):  # TOY-3
        nxt = (q + k) % P
        if r.hand_n[nxt] > 0:
            r.actor = nxt
            _legal(r)
            return
    best = r.score[:P].max()  # TOY-4
    for s in range(P):
        r.final_rewards[s] = 1.0 if r.score[s] == best else -1.0
        r.step_rewards[s] = r.final_rewards[s]
    r.done = True
    r.mask[:] = 0
    r.n_legal = 0
    ev_push(r, EV_OVER, -1, best, 0)


@njit(cache=True)
def encode_obs(r, T, c, viewer, offs, out):
    out[:] = 0.0
    P = c[0]
    for v in range(VALUES):
        out[offs[0] + v] = r.hand[viewer, v] / 2.0
    if r.last >= 0:
        out[offs[1] + r.last] = 1.0
    out[offs[2]] = r.deck_n / DECK
    for k in range(P):
        q = (viewer + k) % P
        b = offs[3] + k * offs[4]
        out[b] = 1.0
        out[b + 1] = 1.0 if (not r.done and r.actor == q) else 0.0
        out[b + 2] = r.score[q] / 128.0
        out[b + 3] = r.hand_n[q] / 2.0


@njit(cache=True)
def seat_bits(r, c):
    return 0


_DRIVERS: dict = {}


def drivers_for(state_dtype=STATE, tables_dtype=TABLES):
    return drivers_once(_DRIVERS, drivers_for, state_dtype, tables_dtype,
                        lambda: (reset_game, step_game, encode_obs, seat_bits))


def _event_text(kind, seat, a, b, viewer):
    if kind == EV_PLAY:
        return f"P{seat} plays a {a + 1} (score {b})"
    if kind == EV_DRAW:
        return f"P{seat} draws a {a + 1}" if viewer in (seat, "god") else f"P{seat} draws a card"
    return f"game over: the top score is {a}"


SPEC = simple_spec(
    "toy", "Pairs", module=__name__, min_players=2, max_players=P_MAX, default_players=3,
    state=STATE, tables=np.array([(3,)], TABLES), drivers=drivers_for, num_actions=VALUES,
    phase_names=("play",), action_name=lambda a: f"play a {a + 1}",
    global_pieces=(("hand", VALUES, "the viewer's hand per value / 2"), ("last", VALUES, "one-hot the card just played"),
                   ("deck", 1, "cards left in the deck / 16")),
    seat_pieces=(("present", 1, "the seat exists"), ("actor", 1, "decides next"), ("score", 1, "score / 128"),
                 ("hand_size", 1, "cards in hand / 2")),
    max_decisions=lambda rules: DECK,
    event_text=_event_text, event_kinds={EV_PLAY: "play", EV_DRAW: "draw", EV_OVER: "game_over"},
    seat_fields=("score", "hand_n"), hidden=("hand", "deck"), hidden_counts=("hand",),
    web=str(Path(__file__).with_name("toy_web") / "table.js"), legal=_legal,
)
Engine: type[CoreEngine] = SPEC.engine_class


# ------------------------------------------------------------------ the game's own agents
# A game's heuristics are its own: they register with the zoo (agents.register, and their
# roles with agents.register_game) when the game is loaded. They read the observation only.
from agents.base import BaseAgent, register, register_game  # noqa: E402


class HighCard(BaseAgent):
    """Plays a pair when it can, else its highest card."""

    name = "toy-high"

    def act(self, observation, action_mask):
        last = observation[VALUES:2 * VALUES]
        if last.max() > 0 and action_mask[int(last.argmax())]:
            return int(last.argmax())
        return int(np.flatnonzero(action_mask)[-1])


class LowCard(BaseAgent):
    """Plays its lowest card, keeping the high ones for pairs."""

    name = "toy-low"

    def act(self, observation, action_mask):
        return int(np.flatnonzero(action_mask)[0])


register("toy-high", HighCard, "Pairs: a pair when it can, else its highest card.", game="toy")
register("toy-low", LowCard, "Pairs: its lowest card.", game="toy")
register_game("toy", heuristics=("toy-high", "toy-low"), levels={"toy-high": "Easy", "toy-low": "Beginner"})
