"""``rm-search``: determinized Monte-Carlo search for The Rune Market, through the same
agent protocol (observation and mask only).

For each decision the agent

1. rebuilds the game from its observation (:func:`reconstruct`), the viewer as seat 0
   (the rules are the same under rotation: actions name seats by offset): the Market
   (Runes, Boat Shelters, Bandits), every seat's Shelters, Boat Shelters, loose and
   sheltered Runes and hand size, the Bandits (where, whose, how much paid), the
   discard pile, its own hand, the turn count, the first and the turn player (each seat's
   turn count follows from them), who was attacked this turn, the decision phase and
   what is pending (intent, attack value, payment so far, thefts left, the victim or
   defender; the turn's stage follows from the phase and intent);
2. samples the hidden part ``budget / |legal|`` times per action: the other hands (their
   sizes are public) and the draw pile's order, from the cards it cannot see (the copies
   minus its hand, the discard pile and the Shelters on the table);
3. applies each legal action to the same samples and plays them out with the compiled
   rollout policy (:mod:`agents.runemarket._search_kernels`), and picks the action with
   the best mean final reward for its seat.

The defender's block decision (RM-5.7) is searched like any other: the rebuilt game is
in the ``defend`` phase with the viewer as the actor, and the attacker's turn continues
in the rollouts. The rebuilt game must offer exactly the observed legal actions, else
the observation does not come from the rules given (default: the rulings' defaults for
the observed player count) and the packaged cards, and ``ReconstructionError`` names the
difference; there is no silent fallback (so a game played with another card file is
refused). A stolen hand card known to the thief and the victim is not used
(the other hands are sampled uniformly).

>>> agent = agents.make("rm-search", "rune-market", seed=0)             # budget 256
>>> agent = agents.make("rm-search", "rune-market", budget=64, seed=0)
>>> agent.last  # actions, mean values and simulations of the last search
"""

from __future__ import annotations

import numpy as np

from agents.base import register
from agents.determinized import DeterminizedSearch
from agents.runemarket import _search_kernels as SK
from ripmarket_env.core.engine import kernel_view
from ripmarket_env.games.runemarket import Engine, RulesConfig
from ripmarket_env.games.runemarket import kernels as K
from ripmarket_env.games.runemarket.cards import D_SHELTER, default_cards
from ripmarket_env.games.runemarket.observation import LAYOUT
from ripmarket_env.games.runemarket.state import (
    I_BANDIT_RUNES,
    I_BOAT_RUNES,
    I_DOUBLE,
    PH_CHOOSE_OPP,
    PH_CHOOSE_SHELTER,
    PH_CHOOSE_STEAL,
    PH_HAND,
    PH_OVER,
    PH_RUNE_BUY,
    PH_START,
)

GAME = "rune-market"
_DB = default_cards()
_COPIES = _DB.copies


class ReconstructionError(ValueError):
    """The observation cannot come from a game of the given rules and cards."""


def _get(obs, name, seat=None):
    return obs[LAYOUT.slice(name) if seat is None else LAYOUT.slice(name, seat)]


def _i(x) -> int:
    return int(round(float(x)))


def _onehot(v) -> int:
    return int(np.argmax(v)) if np.asarray(v).max() > 0.5 else -1


def _stage(phase: int, intent: int, played: int) -> int:
    """The turn's stage (1-3) of a decision: stage 1 is the start (and the double theft of
    a discarded table Shelter, before any hand card is played), stage 2 the Rune purchases
    (and their Shelter choice), stage 3 the hand."""
    if phase == PH_START:
        return 1
    if phase == PH_RUNE_BUY or (phase == PH_CHOOSE_SHELTER and intent in (I_BOAT_RUNES, I_BANDIT_RUNES)):
        return 2
    if phase in (PH_CHOOSE_OPP, PH_CHOOSE_STEAL) and intent == I_DOUBLE and not played:
        return 1
    return 3


def public_row(obs: np.ndarray, rules: RulesConfig) -> tuple[np.ndarray, np.ndarray, list[int]]:
    """The observed game as one engine row (viewer = seat 0, other hands empty, no draw
    pile), the unseen cards per design and the other seats' hand sizes."""
    P = rules.num_players
    obs = np.asarray(obs, np.float32)
    if _onehot(_get(obs, "num_players")) + 2 != P:
        raise ReconstructionError(f"the observation is of a {_onehot(_get(obs, 'num_players')) + 2}-player game; "
                                  f"the rules given are for {P}")
    eng = Engine(rules, 1)
    r = eng.state[0]
    market = eng.cfg[K.C_MKT:K.C_MKT + 4]
    phase = _onehot(_get(obs, "phase"))
    if phase < 0 or phase == PH_OVER:
        raise ReconstructionError("the observation is of no decision (the game is over)")
    mk = _get(obs, "market")
    r["market"][:] = [_i(mk[0] * market[0]), _i(mk[1] * market[1])]
    r["market_boats"] = _i(mk[2] * market[2])
    r["market_bandits"] = _i(mk[3] * market[3])
    hand = np.rint(_get(obs, "hand") * _COPIES).astype(np.int64)
    r["hand"][:] = 0
    r["hand"][0] = hand
    disc = np.rint(_get(obs, "discard") * _COPIES).astype(np.int64)
    r["discard"] = disc
    r["discard_n"] = int(disc.sum())
    seat = lambda name, k: _get(obs, name, k)  # noqa: E731
    first = next((k for k in range(P) if seat("first_player", k)[0] > 0.5), 0)
    tp = next((k for k in range(P) if seat("turn_player", k)[0] > 0.5), 0)
    actor = next((k for k in range(P) if seat("actor", k)[0] > 0.5), tp)
    total = _i(_get(obs, "turn")[0] * rules.turns_cap)
    sizes = []
    for k in range(P):
        place = seat("runes_by_place", k)
        r["loose"][k] = [_i(place[0] * 10), _i(place[2] * 10)]
        r["inside"][k] = [_i(place[1] * 10), _i(place[3] * 10)]
        sh = seat("shelters", k)
        r["shelter"][k] = [_i(sh[0]), _i(sh[1])]
        r["boat"][k] = [_i(sh[2]), _i(sh[3])]
        r["attacked"][k] = _i(seat("attacked", k)[0])
        sizes.append(_i(seat("hand_size", k)[0] * 10))
        r["turns"][k] = sum(1 for t in range(total) if (first + t) % P == k)
    r["hand_n"][:P] = [int(hand.sum())] + sizes[1:]
    placed = 0
    b = _get(obs, "bandit")
    for s in range(2):
        blk = b[16 * s: 16 * s + 16]
        if blk[0] > 0.5 or blk[1:7].max() < 0.5:
            continue
        q, col, owner = _onehot(blk[1:7]), _onehot(blk[7:9]), _onehot(blk[9:15])
        r["bandit"][q, col] = owner
        r["bandit_paid"][q, col] = _i(blk[15] * rules.bandit_removal)
        placed += 1
    r["removed_bandits"] = market[3] - r["market_bandits"] - placed
    intent = _onehot(_get(obs, "pending_intent"))
    played = _i(_get(obs, "played_card")[0])
    r["total_turns"] = total
    r["turn_player"] = tp
    r["first_player"] = first
    r["actor"] = actor
    r["phase"] = phase
    r["played"] = played
    r["intent"] = intent
    r["stage"] = _stage(phase, intent, played)
    r["pend_value"] = _i(_get(obs, "pending_value")[0] * 10)
    r["pay_sum"] = _i(_get(obs, "payment_sum")[0] * rules.number_cost)
    r["thefts_left"] = _i(_get(obs, "thefts_left")[0] * 2)
    w = _onehot(_get(obs, "pending_other"))
    r["other"] = -1 if w < 0 else (0 if (w == tp and tp != 0) else w)
    unseen = _COPIES - hand - disc
    unseen[D_SHELTER[0]] -= int(r["shelter"][:P, 0].sum())
    unseen[D_SHELTER[1]] -= int(r["shelter"][:P, 1].sum())
    if (unseen < 0).any() or int(unseen.sum()) < sum(sizes[1:]):
        raise ReconstructionError("the observation shows more cards than the deck holds")
    return eng.state.copy(), unseen, sizes


def reconstruct(obs: np.ndarray, rules: RulesConfig, n: int, rng: np.random.Generator) -> Engine:
    """``n`` determinized copies of the observed game (viewer = seat 0), legal actions
    computed: the other hands and the draw pile dealt from the unseen cards."""
    P = rules.num_players
    row, unseen, sizes = public_row(obs, rules)
    eng = Engine(rules, n)
    eng.state[:] = np.repeat(row, n)
    pool = np.repeat(np.arange(len(unseen)), unseen)
    st = eng.state
    for g in range(n):
        cards = rng.permutation(pool)
        o = 0
        for k in range(1, P):
            st["hand"][g, k] = np.bincount(cards[o:o + sizes[k]], minlength=len(unseen))
            o += sizes[k]
        rest = cards[o:]
        st["deck"][g] = -1
        st["deck"][g, :len(rest)] = rest
        st["deck_n"][g] = len(rest)
        st["rng"][g] = int(rng.integers(1 << 63))
        K.advance_one(kernel_view(st), kernel_view(eng.tables), eng.cfg, g)
    return eng


class SearchAgent(DeterminizedSearch):
    name = "rm-search"
    min_samples = 2
    steps_per_turn = 64
    no_legal = "rm-search: no legal action in the mask"
    _reconstruct = staticmethod(reconstruct)
    _rollouts = staticmethod(SK.rollouts)

    def __init__(self, budget: int = 256, eps: float = 0.1, rules: RulesConfig | None = None,
                 seed: int | None = None):
        if int(budget) < 1:
            raise ValueError(f"rm-search: budget must be at least 1 rollout, got {budget}")
        self.budget = int(budget)
        self.eps = float(eps)
        self.rules = rules
        self.rng = np.random.default_rng(seed)
        self.last: dict = {}

    def _rules(self, obs) -> RulesConfig:
        if self.rules is not None:
            return self.rules
        return RulesConfig(num_players=_onehot(_get(obs, "num_players")) + 2)

    def _disagrees(self, base, rules, observation, action_mask):
        got = base.state["mask"].astype(bool)
        mask = np.asarray(action_mask).astype(bool)
        if not (got == mask).all():
            bad = np.flatnonzero((got != mask).any(axis=0)).tolist()
            raise ReconstructionError(f"rm-search: the rebuilt game's legal actions differ from the observed mask "
                                      f"at actions {bad}; are the rules {rules} the game's?")
        return None


register("rm-search", SearchAgent, "The Rune Market: determinized Monte-Carlo search with compiled greedy rollouts; "
         "blocks when the rollouts say so.", game=GAME)
