"""``bm-search``: determinized Monte-Carlo search for Black Market, through the same
agent protocol (observation and mask only).

For each decision the agent

1. rebuilds the game from its observation (``reconstruct``), the viewer as seat 0 (the
   rules are the same under rotation; seat j's side is j mod 2): the map (seen cards,
   faces, sides), the dice still unused, every score pile and spent mark, the effects
   used this turn, the phase and pending choice, its own hand, the Hand discard, the
   turn count and the first player;
2. samples the hidden part ``budget / |legal|`` times per action: the other hands (their
   sizes are public) and the Hand deck from the Hand Cards it cannot see, the Point
   deck's order and any unseen map card from the Point Cards not in view;
3. applies each legal action to the same samples and plays them out with the compiled
   rollout policy (``agents.blackmarket._search_kernels``), and picks the action with the
   best mean final reward for its seat.

It checks that the rebuilt game offers exactly the observed legal actions (else it
falls back to ``bm-rusher``'s choice). It assumes the default
``effects_from="at_once"`` and the rules given to it (default: the packaged defaults for
the observed player count and mode).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from ripmarket_env.core.engine import kernel_view
from ripmarket_env.games.blackmarket import Engine, RulesConfig
from ripmarket_env.games.blackmarket import kernels as K
from ripmarket_env.games.blackmarket.cards import default_cards
from ripmarket_env.games.blackmarket.observation import layout
from ripmarket_env.games.blackmarket.state import PH_CHOOSE_NUMBER

from agents.base import register
from agents.blackmarket import _search_kernels as SK
from agents.blackmarket.heuristics import Rusher
from agents.determinized import DeterminizedSearch

_DB = default_cards()
_LAY = layout(_DB)
_D = _DB.n_designs
_COPIES = np.array([c.copies for c in _DB.point])
_EFF = _DB.effect_designs
_ONE = _DB.one_time_designs


def _get(obs, name, seat=None):
    return obs[_LAY.slice(name) if seat is None else _LAY.slice(name, seat)]


def _rint(x):
    return np.rint(x).astype(np.int64)


_POINTS = np.array([c.points for c in _DB.point])
@lru_cache(maxsize=64)
def _template(rules: RulesConfig) -> Engine:
    """An engine of one game reset with seed 0 under ``rules``; its row is copied, never changed."""
    eng = Engine(rules, 1)
    eng.reset([0])
    return eng


def reconstruct(obs: np.ndarray, rules: RulesConfig, n: int, rng: np.random.Generator) -> Engine:
    """``n`` determinized copies of the observed game (viewer = seat 0), legal actions computed.

    The public part is written into every copy at once; each copy then draws its hidden
    part (the unseen map cards and Point deck order, the other hands and the Hand deck, the
    game RNG) in the same order of draws as one copy at a time."""
    P = rules.num_players
    eng = _template(rules).clone(np.zeros(n, np.int64))  # n games reset with seed 0
    st = eng.state
    phase = int(np.argmax(_get(obs, "phase")))
    m = _get(obs, "map").reshape(6, _D + 3)
    owned = np.stack([_rint(_get(obs, "owned", j) * _COPIES) for j in range(P)])
    unseen = _rint(_get(obs, "point_deck")[1:] * _COPIES)  # per design, not in view
    hand = _rint(_get(obs, "hand") * 10)
    hd = _get(obs, "hand_deck")
    disc = _rint(hd[1:] * _DB.hand_copies())
    sizes = [int(round(_get(obs, "hand_size", j)[0] * 10)) for j in range(P)]
    pool = _DB.hand_copies() - hand - disc
    dice_counts = _rint(_get(obs, "dice") * 3)
    dice = [k + 1 for k in range(6) for _ in range(dice_counts[k])]
    used_counts = _get(obs, "effects_used")
    actor = next((j for j in range(P) if _get(obs, "actor", j)[0] > 0.5), 0)
    first = next((j for j in range(P) if _get(obs, "first_player", j)[0] > 0.5), 0)
    turn = int(round(_get(obs, "turn")[0] * rules.turns_cap))
    pend = _get(obs, "pending")
    # the public part, the same in every copy
    map_card, hidden_slots = st["map_card"], []
    for s in range(6):
        if m[s, 0] < 0.5:
            map_card[:, s] = -1
            continue
        seen = m[s, 1:1 + _D].max() > 0.5
        if seen:
            map_card[:, s] = int(np.argmax(m[s, 1:1 + _D]))
        else:
            hidden_slots.append(s)
        st["map_seen"][:, s] = int(seen)
        st["map_down"][:, s] = int(m[s, 1 + _D] > 0.5)
        st["map_side"][:, s] = 0 if m[s, 2 + _D] > 0.5 else 1
    st["owned"][:] = 0
    st["owned"][:, :P] = owned
    st["points"][:, :P] = (owned * _POINTS).sum(axis=1)
    spent = st["spent"]
    spent[:] = 0
    for j in range(P):
        sp = _get(obs, "spent", j)
        for i, d in enumerate(_ONE):
            spent[:, j, d] = int(sp[i] > 0.5)
    st["hdisc"] = disc
    used = st["used"]
    used[:] = 0
    for i, d in enumerate(_EFF):
        used[:, d] = int(round(used_counts[i] * _COPIES[d]))
    st["bought"][:] = 0
    st["dice"][:] = 0
    st["dice_used"][:] = 0
    nd = max(2, len(dice))
    st["n_dice"] = nd
    st["dice"][:, : len(dice)] = dice
    st["dice"][:, len(dice):nd] = 1
    st["dice_used"][:, len(dice):nd] = 1
    st["turn_player"] = actor
    st["actor"] = actor
    st["first_player"] = first
    st["turn"] = turn
    st["phase"] = phase
    st["pend"] = -1
    st["pend_die"] = -1
    if pend[:3].max() > 0.5:
        st["pend"] = (0, 1, 3)[int(np.argmax(pend[:3]))]
    if phase == PH_CHOOSE_NUMBER and pend[3:].max() > 0.5:
        v = int(np.argmax(pend[3:])) + 1
        st["pend_die"] = dice.index(v) if v in dice else 0
    # the hidden part, drawn copy by copy
    unseen_all = [d for d in range(_D) for _ in range(unseen[d])]
    pool_all = [k for k in range(3) for _ in range(max(0, int(pool[k])))]
    pdeck, pdeck_n, hands, hand_n = st["pdeck"], st["pdeck_n"], st["hand"], st["hand_n"]
    hdeck, hdeck_len, seed = st["hdeck"], st["hdeck_n"], st["rng"]
    S, T = kernel_view(eng.state), kernel_view(eng.tables)
    for g in range(n):
        unseen_cards = list(unseen_all)
        rng.shuffle(unseen_cards)
        for s in hidden_slots:
            map_card[g, s] = unseen_cards.pop()
        pdeck[g] = -1
        pdeck[g, : len(unseen_cards)] = unseen_cards
        pdeck_n[g] = len(unseen_cards)
        cards = list(pool_all)
        rng.shuffle(cards)
        hands[g] = 0
        hands[g, 0] = hand
        for j in range(1, P):
            for k in cards[:sizes[j]]:
                hands[g, j, k] += 1
            cards = cards[sizes[j]:]
        hand_n[g] = hands[g].sum(axis=1)
        hdeck[g] = -1
        hdeck[g, : len(cards)] = cards
        hdeck_len[g] = len(cards)
        seed[g] = int(rng.integers(1 << 32))
        K.refresh(S, T, eng.cfg, g)
    return eng


class SearchAgent(DeterminizedSearch):
    name = "bm-search"
    min_samples = 4
    steps_per_turn = 12
    _reconstruct = staticmethod(reconstruct)
    _rollouts = staticmethod(SK.rollouts)

    def __init__(self, budget: int = 256, eps: float = 0.1, rules: RulesConfig | None = None, seed: int | None = None):
        self.budget = int(budget)
        self.eps = float(eps)
        self.rules = rules
        self.rng = np.random.default_rng(seed)
        self.last: dict = {}
        self._fallback = Rusher(seed=seed)

    def _rules(self, obs) -> RulesConfig:
        if self.rules is not None:
            return self.rules
        P = 2 + 2 * int(np.argmax(_get(obs, "num_players")))
        return RulesConfig(num_players=P, mode="teams" if _get(obs, "teams")[0] > 0.5 else "ffa")

    def _disagrees(self, base, rules, observation, action_mask):
        if all(np.array_equal(base.legal_mask()[g], np.asarray(action_mask, bool)) for g in range(base.batch_size)):
            return None
        self.last = {"fallback": True}
        return self._fallback.act(observation, action_mask)


register("bm-search", SearchAgent, "Black Market: determinized Monte-Carlo search with compiled greedy rollouts.",
         game="black-market")
