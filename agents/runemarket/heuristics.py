"""Rule-based Rune Market agents. Each sees only its seat's observation and mask.

Three styles, each with a defence policy (the ``defend`` decision, RM-5.7):

* ``rm-banker`` builds for interest: tables Shelters, buys Runes, puts Boat Shelters in
  its fullest Shelter, pays off Bandits at once; steals Runes of colours it shelters.
  **Defence:** always blocks when it can, with the smallest card that suffices (its large
  cards are kept for Rune and Boat purchases).
* ``rm-raider`` attacks and steals from the leader: Theft Cards first, Shelters discarded
  as double thefts when it already has that colour, attacks with its highest card (hard to
  block), then buys Runes. **Defence:** blocks only with a card of 6 or less (7-10 are its
  attack cards), and only when it has Runes or cards to lose.
* ``rm-bandit`` locks the richest Shelter: buys Bandits first (with Runes or Numbers) and
  puts them on the opponent Shelter holding the most Runes; otherwise plays like the
  banker. **Defence:** blocks with its smallest sufficient card only when it has unlocked
  Runes at stake (a Rune theft would cost it a point); otherwise keeps the card.

Targets (victims, defenders): the opponent with the most Runes, ties to the nearest seat.
"""

from __future__ import annotations

import numpy as np

from agents.base import BaseAgent, register
from ripmarket_env.games.runemarket.cards import default_cards
from ripmarket_env.games.runemarket.observation import LAYOUT

GAME = "rune-market"
_COPIES = default_cards().copies.astype(np.float32)
_O = {p.name: LAYOUT.slice(p.name) for p in LAYOUT.pieces if p.scope == "global"}
_SEAT0 = LAYOUT.seat_start
_SS = LAYOUT.seat_size
_SO = {p.name: LAYOUT.offsets[p.name] for p in LAYOUT.pieces if p.scope == "seat"}

A_DONE, A_NO_BLOCK = 0, 29


def _num(v):
    return 18 + v


class View:
    """The pieces of one observation a style needs."""

    def __init__(self, obs: np.ndarray):
        self.obs = obs
        self.phase = int(np.argmax(obs[_O["phase"]]))
        self.hand = np.rint(obs[_O["hand"]] * _COPIES).astype(int)
        self.intent = int(np.argmax(obs[_O["pending_intent"]])) if obs[_O["pending_intent"]].any() else -1
        self.P = int(np.argmax(obs[_O["num_players"]])) + 2

    def seat(self, k: int, name: str) -> np.ndarray:
        o = _SEAT0 + k * _SS + _SO[name]
        return self.obs[o: o + LAYOUT.pieces[[p.name for p in LAYOUT.pieces].index(name)].size]

    def runes(self, k: int) -> float:
        return float(self.seat(k, "runes")[0])

    def inside(self, k: int, c: int) -> float:
        return float(self.seat(k, "runes_by_place")[1 + 2 * c])

    def shelter(self, k: int, c: int) -> bool:
        return bool(self.seat(k, "shelters")[c] > 0.5)

    def my_bandit(self, c: int) -> bool:
        b = self.obs[_O["bandit"]]
        for s in range(2):
            blk = b[16 * s: 16 * s + 16]
            if blk[1] > 0.5 and blk[7 + c] > 0.5:
                return True
        return False

    def free_runes(self) -> float:
        return sum(float(self.seat(0, "runes_by_place")[i]) for i in (0, 2)) + sum(
            self.inside(0, c) for c in range(2) if not self.my_bandit(c))


def _first(mask, actions):
    for a in actions:
        if 0 <= a < len(mask) and mask[a]:
            return a
    return -1


class RuneStyle(BaseAgent):
    """A style: a play priority for the hand stage plus hooks for the other decisions."""

    hand_order: tuple = ()
    attack_high = False

    def __init__(self, seed: int | None = None):
        self.rng = np.random.default_rng(seed)

    def reset(self, seed: int | None = None) -> None:
        self.rng = np.random.default_rng(seed)

    def act(self, observation, action_mask) -> int:
        m = np.asarray(action_mask).astype(bool)
        legal = np.flatnonzero(m)
        if len(legal) == 1:
            return int(legal[0])
        v = View(np.asarray(observation, np.float32))
        a = self.decide(v, m)
        if a < 0 or not m[a]:
            a = int(legal[0])
        return int(a)

    # --------------------------------------------------------------- decisions
    def decide(self, v: View, m) -> int:
        ph = v.phase
        if ph == 0:
            return self.start(v, m)
        if ph == 1:
            return self.rune_buy(v, m)
        if ph == 2:
            return self.hand_play(v, m)
        if ph == 3:
            cards = [_num(x) for x in range(1, 11) if m[_num(x)]]
            high = self.attack_high if v.intent == 2 else True  # pay Bandits with big cards
            return cards[-1] if high else cards[0]
        if ph == 4:
            return max(a for a in range(19, 29) if m[a])
        if ph == 5:
            return self.opponent(v, m)
        if ph == 6:
            return self.steal(v, m)
        if ph == 7:
            return self.defend(v, m)
        if ph == 8:
            return self.shelter(v, m)
        return A_DONE

    def start(self, v, m):
        for c in range(2):  # a locked Shelter holding little: discard it as a double theft
            if m[1 + c] and v.my_bandit(c) and v.inside(0, c) <= 0.1:
                return 1 + c
        return A_DONE

    def rune_buy(self, v, m):
        return _first(m, (3, 4)) if (m[3] or m[4]) else A_DONE

    def hand_play(self, v, m):
        return _first(m, self.hand_order + (A_DONE,))

    def opponent(self, v, m):
        best, score = -1, -1.0
        for k in range(1, v.P):
            if m[29 + k] and v.runes(k) > score:
                best, score = 29 + k, v.runes(k)
        return best

    def steal(self, v, m):
        for c in range(2):
            if m[35 + c] and v.shelter(0, c) and not v.my_bandit(c):
                return 35 + c
        return _first(m, (35, 36, 37))

    def defend(self, v, m):
        return _first(m, [_num(x) for x in range(1, 11)] + [A_NO_BLOCK])

    def shelter(self, v, m):
        best, score = -1, -1.0
        for a in range(38, 50):
            if m[a]:
                k, c = (a - 38) // 2, (a - 38) % 2
                s = v.inside(k, c)
                if s > score:
                    best, score = a, s
        return best


class Banker(RuneStyle):
    """Interest first (module docstring)."""

    hand_order = (7, 8, 17, 18, 13, 14, 15, 11, 12, 16)

    def hand_play(self, v, m):
        # buy the colour whose Shelter is on the table first
        order = list(self.hand_order)
        if v.shelter(0, 1) and not v.shelter(0, 0):
            order[order.index(13)], order[order.index(14)] = 14, 13
        return _first(m, tuple(order) + (A_DONE,))


class Raider(RuneStyle):
    """Steals from the leader (module docstring)."""

    attack_high = True
    hand_order = (11, 12, 13, 14, 7, 8, 16, 17, 18)

    def hand_play(self, v, m):
        for c in range(2):  # a second Shelter of a colour it has: a double theft
            if m[9 + c] and v.shelter(0, c):
                return 9 + c
        return super().hand_play(v, m)

    def rune_buy(self, v, m):
        return _first(m, (5, 6, 3, 4)) if m[3:7].any() else A_DONE

    def defend(self, v, m):
        if v.runes(0) <= 0 and v.hand.sum() == 0:
            return A_NO_BLOCK
        return _first(m, [_num(x) for x in range(1, 7)] + [A_NO_BLOCK])


class BanditPlayer(RuneStyle):
    """Locks the richest Shelter (module docstring)."""

    hand_order = (16, 7, 8, 17, 18, 13, 14, 15, 11, 12)

    def rune_buy(self, v, m):
        return _first(m, (5, 6, 3, 4)) if m[3:7].any() else A_DONE

    def defend(self, v, m):
        if v.free_runes() <= 0:
            return A_NO_BLOCK
        return super().defend(v, m)


STYLES = {"rm-banker": Banker, "rm-raider": Raider, "rm-bandit": BanditPlayer}

register("rm-banker", Banker, "The Rune Market: builds Shelters and Boats for interest; always blocks, smallest card.",
         game=GAME)
register("rm-raider", Raider, "The Rune Market: thefts and high attacks on the leader; blocks only with cards <= 6.",
         game=GAME)
register("rm-bandit", BanditPlayer, "The Rune Market: Bandits on the richest Shelter; blocks only with Runes at stake.",
         game=GAME)
