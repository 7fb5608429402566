"""Rule-based Black Market agents (``agents.make(name, game="black-market")``).

Each agent decodes its observation (``BMView``: never engine state) and scores every
legal action; the best score wins, ties broken by the agent's seeded RNG. The styles
share the choices that follow an effect (reroll the die whose slot is least useful, set
Fixer's die to the slot of the best card it could buy, rob the opponent with the biggest
hand) and differ in what an `act` decision values. They play teams and free-for-all
alike: "facing me" is facing my side, and in team mode the side's points are pooled.

* ``bm-rusher`` — buys at once (most points first); spends a flip only to set up a
  purchase it can make this turn (the same slot under a second die); otherwise draws,
  with the die whose slot it could use least. (Every style spends cards on a flip when
  its hand is full, since a draw at the limit draws nothing.)
* ``bm-denier`` — buys when it can; otherwise flips face-down or rotates away the most
  valuable face-up card the other side could buy next turn (with enough hand left to buy
  later), and only then draws. The closer the other side is to the target, the more it
  denies.
* ``bm-builder`` — an effect-builder: values the special cards (Third Die, Informant,
  Fence, Smuggler, Crowbar, Loaded Dice, Fixer, Heist) over plain points early, uses its
  effects as soon as they help, and sets up purchases of effect cards with flips.
"""

from __future__ import annotations

import numpy as np

from ripmarket_env.games.blackmarket.cards import default_cards
from ripmarket_env.games.blackmarket.observation import layout

from agents.base import BaseAgent, register

GAME = "black-market"
_DB = default_cards()
_LAY = layout(_DB)
_D = _DB.n_designs
_COLOUR = np.array([("red", "black", "dual").index(c.colour) for c in _DB.point])
_POINTS = np.array([c.points for c in _DB.point], float)
_EFFECT = np.array([c.primitive is not None for c in _DB.point])
_DESIGN = {c.primitive: c.id for c in _DB.point if c.primitive is not None}
_COPIES = np.array([c.copies for c in _DB.point])
# The observation's pieces as slices, worked out once (a view is decoded at every decision).
_SL = {p.name: _LAY.slice(p.name) for p in _LAY.pieces if p.scope == "global"}
_SEATS = (_LAY.size - _LAY.seat_start) // _LAY.seat_size
_SEAT_AT = {p.name: [_LAY.slice(p.name, j).start for j in range(_SEATS)] for p in _LAY.pieces if p.scope != "global"}


def _decode(o: np.ndarray) -> dict:
    """Every row's pieces of a batch of observations, as ``BMView`` reads them."""
    n = len(o)
    m = o[:, _SL["map"]].reshape(n, 6, _D + 3)
    cards = m[:, :, 1:1 + _D]
    sp = o[:, _SL["side_points"]]
    pend = o[:, _SL["pending"]][:, 3:]
    own = _SEAT_AT["owned"][0]
    return {
        "phase": o[:, _SL["phase"]].argmax(axis=1),
        "dice": np.rint(o[:, _SL["dice"]] * 3).astype(int),  # unused dice per number 1..6
        "present": m[:, :, 0] > 0.5,
        "design": np.where(cards.max(axis=2) > 0.5, cards.argmax(axis=2), -1),
        "down": m[:, :, 1 + _D] > 0.5,
        "mine": m[:, :, 2 + _D] > 0.5,
        "hand": np.rint(o[:, _SL["hand"]] * 10).astype(int),  # red, black, flip
        "my_side": sp[:, 0].tolist(),  # / target
        "their_side": sp[:, 1].tolist(),
        "teams": o[:, _SL["teams"].start] > 0.5,
        "P": (2 + 2 * o[:, _SL["num_players"]].argmax(axis=1)).tolist(),
        "same": o[:, _SEAT_AT["same_side"]] > 0.5,
        "hand_sizes": o[:, _SEAT_AT["hand_size"]] * 10,
        "points": o[:, _SEAT_AT["points"]],
        "owned": np.rint(o[:, own:own + _D] * _COPIES).astype(int),
        "fix_die": np.where(pend.max(axis=1) > 0.5, pend.argmax(axis=1) + 1, 0).tolist(),
    }


class BMView:
    """What one seat's observation says, by name."""

    def __init__(self, cols: dict, i: int):
        """Row ``i`` of a decoded batch (``BMView.batch``)."""
        self.phase = int(cols["phase"][i])
        self.dice = cols["dice"][i]
        self.present = cols["present"][i]
        self.design = cols["design"][i]
        self.down = cols["down"][i]
        self.mine = cols["mine"][i]
        self.hand = cols["hand"][i]
        self.my_side, self.their_side = cols["my_side"][i], cols["their_side"][i]
        self.teams = cols["teams"][i]
        P = self.P = cols["P"][i]
        self.same = list(cols["same"][i, :P])
        self.hand_sizes = list(cols["hand_sizes"][i, :P])
        self.points = list(cols["points"][i, :P])
        self.owned = cols["owned"][i]
        self.fix_die = cols["fix_die"][i]

    @staticmethod
    def batch(observations: np.ndarray) -> list["BMView"]:
        """One view per row of a batch of observations, decoded together."""
        cols = _decode(np.asarray(observations))
        return [BMView(cols, i) for i in range(len(cols["P"]))]

    def has(self, prim: str) -> bool:
        d = _DESIGN.get(prim, -1)
        return d >= 0 and self.owned[d] > 0

    def cost(self) -> int:
        return 2 if self.has("discount_buy") else 3

    def affordable(self, d: int, hand=None) -> bool:
        h = self.hand if hand is None else hand
        need = self.cost()
        c = _COLOUR[d]
        return (h[0] >= need and c in (0, 2)) or (h[1] >= need and c in (1, 2))

    def buyable_now(self, s: int) -> bool:
        """Slot s could be bought by me as it lies (ignoring Smuggler/Crowbar)."""
        d = self.design[s]
        return self.present[s] and d >= 0 and self.mine[s] and not self.down[s] and self.affordable(d)

    def threat(self, s: int) -> bool:
        """The other side could buy slot s as it lies (face-up, facing them)."""
        return self.present[s] and self.design[s] >= 0 and not self.mine[s] and not self.down[s]


def _pay_after(hand, pay):
    h = hand.copy()
    if pay == 0:
        h[2] -= 1
    else:
        h[pay - 1] -= 2
    return h


class _Heuristic(BaseAgent):
    name = "bm-heuristic"
    effect_bonus = 0.0  # extra value of an effect card when buying
    deny = 0.0  # value of denying the other side a card

    def __init__(self, seed: int | None = None):
        self.rng = np.random.default_rng(seed)

    def reset(self, seed: int | None = None) -> None:
        if seed is not None:
            self.rng = np.random.default_rng(seed)

    def card_value(self, v: BMView, d: int) -> float:
        val = _POINTS[d]
        if _EFFECT[d]:
            val += self.effect_bonus * max(0.0, 1.0 - v.my_side)
        return val

    def slot_use(self, v: BMView, s: int) -> float:
        """How useful a die on slot s is to me (to pick which die to reroll or draw with)."""
        if v.buyable_now(s):
            return 10 + self.card_value(v, v.design[s])
        if v.present[s] and v.design[s] >= 0 and v.affordable(v.design[s]):
            return 2.0
        return 0.0

    def score(self, v: BMView, a: int) -> float:
        if v.phase == 1:  # choose_die: reroll / fix the die whose slot is least useful
            return -self.slot_use(v, a - 58)
        if v.phase == 2:  # choose_number: Fixer's number: the best slot
            return self.slot_use(v, a - 58)
        if v.phase == 3:  # choose_seat: the biggest hand
            j = a - 63
            return v.hand_sizes[j] if j < v.P else 0.0
        if a >= 54:
            return self.effect_score(v, a - 54)
        if a >= 48:  # draw: with the die whose slot is least useful
            k = a - 47
            return 5.0 - 0.1 * self.slot_use(v, k - 1) - (2.0 if v.hand.sum() >= 10 else 0.0)
        if a >= 36:
            s, col = (a - 36) // 2, (a - 36) % 2
            d = v.design[s]
            # pay with the colour I hold more of (Dual cards)
            return 100 + 10 * self.card_value(v, d) + 0.1 * v.hand[col]
        rot = a >= 18
        base = 18 if rot else 0
        s, pay = (a - base) // 3, (a - base) % 3
        return self.setup_score(v, s, pay, rot)

    def setup_score(self, v: BMView, s: int, pay: int, rot: bool) -> float:
        d = v.design[s]
        if d < 0:
            return -1.0
        h = _pay_after(v.hand, pay)
        would_be_mine = (not v.mine[s]) if rot else v.mine[s]
        would_be_down = v.down[s] if rot else not v.down[s]
        second_die = v.dice[s] >= 2
        if would_be_mine and not would_be_down and second_die and v.affordable(d, h):
            return 60 + self.card_value(v, d) - (0.5 if pay else 0.0)
        if self.deny > 0 and v.threat(s):
            return self.deny * (1 + _POINTS[d] + 3 * v.their_side) - (1.0 if pay else 0.0) - (
                3.0 if h[:2].max() < 3 else 0.0)
        if v.hand.sum() >= 10:  # a full hand draws nothing: spend cards, turning a card toward me
            return 6.0 + (1.0 if would_be_mine and not would_be_down else 0.0) + (0.5 if pay == 0 else 0.0)
        return -1.0

    def effect_score(self, v: BMView, e: int) -> float:
        if e == 2:  # Third Die: one more action
            return 50.0
        if e == 3:  # Heist
            return 45.0
        useful = [self.slot_use(v, k - 1) for k in range(1, 7) if v.dice[k - 1] > 0]
        if e == 0:  # Loaded Dice: worth it if some die is useless
            return 30.0 if useful and min(useful) < 1 else -5.0
        if e == 1:  # Fixer: if a better slot exists than my worst die
            best = max(self.slot_use(v, s) for s in range(6))
            return 40.0 if useful and best >= 10 and min(useful) < 10 else -5.0
        return 0.0

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        return int(self.act_batch(np.asarray(observation)[None], np.asarray(action_mask)[None])[0])

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        """``act`` row by row (the same draws in the same order), the views decoded together."""
        if len(observations) == 0:
            return np.zeros(0, np.int64)
        views = BMView.batch(observations)
        out = np.empty(len(views), np.int64)
        for i, (v, m) in enumerate(zip(views, action_masks)):
            legal = np.flatnonzero(m)
            if legal.size == 0:
                raise ValueError("no legal action in the mask")
            if legal.size == 1:
                out[i] = legal[0]
                continue
            scores = np.array([self.score(v, int(a)) for a in legal]) + self.rng.random(legal.size) * 1e-3
            out[i] = legal[int(np.argmax(scores))]
        return out


class Rusher(_Heuristic):
    name = "bm-rusher"


class Denier(_Heuristic):
    name = "bm-denier"
    deny = 4.0


class Builder(_Heuristic):
    name = "bm-builder"
    effect_bonus = 2.5

    def setup_score(self, v, s, pay, rot):
        sc = super().setup_score(v, s, pay, rot)
        d = v.design[s]
        if sc < 0 and d >= 0 and _EFFECT[d] and v.threat(s) and rot and v.hand[2] > 0 and pay == 0:
            return 8.0  # turn an effect card toward my side for a later turn
        return sc


register("bm-rusher", Rusher, "Black Market: buys at once; flips only to set up a purchase this turn; else draws.",
         game=GAME)
register("bm-denier", Denier, "Black Market: buys when it can, else turns away the cards the other side could buy.",
         game=GAME)
register("bm-builder", Builder, "Black Market: effect-builder; values and uses the special cards, points later.",
         game=GAME)
