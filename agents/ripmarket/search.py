"""``SearchAgent``: determinized (information-set) Monte-Carlo search.

The agent sees only its observation and legal mask. For each decision it

1. rebuilds the public part of the game from the observation (:func:`public_state`):
   HP, Ghosts, hand and Shadow-hand sizes, Market, discard, deck sizes, the table (face-up
   plays and their targets, face-down flags, attached Shadow cards), acquisitions and the
   cards taken from the Market, who has acted, the First Player, this round's turn order,
   the active rule, the decision phase and the pending card or Shadow card; plus its own
   hand and Shadow hand;
2. samples the hidden part many times (:func:`determinize`): the other hands, the
   face-down cards (from the face-down designs), the Living Deck order, the other Ghosts'
   Shadow hands, the Shadow Deck and discard, uniformly from the cards it cannot see
   (copies minus everything in view), respecting every pile size. A card another seat took
   from the Market this round and did not play face-up is known to be in its hand (or is
   its face-down card) and is placed there (``infer_takes``);
   what the rebuild cannot know: whether a Shadow trigger (R-4.8) attached to another seat
   fired when that seat played a card that took from the trigger's source and was then
   replaced (Double Back draws, then its replacement takes its place on the table and Double
   Back goes to the discard, R-4.9, R-7.12: the draw leaves no trace in the observation).
   Such a flag (Patron's Gift's "took a card from the Living Deck") is sampled per copy,
   fired with the share of such replacing cards among the Living cards the viewer cannot
   place (``Hidden.unsure_*``); either value gives the same observation;
3. for every legal action, applies it to ``budget / |legal|`` determinized copies (the
   same copies for every action) and plays each copy out to the end of the game with a
   rollout policy, all in one engine batch;
4. returns the action with the best mean value for its own seat: the final reward plus
   ``place_weight`` (default 1) times its finishing place scaled to [-1, 1]
   (:func:`placement_score`), so that lasting longer counts in games it does not win.

Seats are rebuilt relative to the viewer (the viewer is seat 0 of the rebuilt game; the
rules are the same under rotation). Rollouts run in a compiled loop
(:mod:`agents.ripmarket._search_kernels`): ``rollout="value"`` (default) has every seat take a
Market card worth 6 or more (else the deck), play the card with the best quick score
estimate (its own score effects and the Shadows on it; the lowest under Low Tide), aim
at the living seat with the most HP and take or discard the most valuable Market card,
with a uniformly random legal action at rate ``eps`` and random Ghosts;
``rollout="random"`` plays uniformly random legal actions. Any other registered agent
name plays out with that agent's ``act_batch`` (much slower). A Ghost cannot change its
own reward under ``reward_mode="win"`` (Ghosts never win, R-5.5, R-11.1), so a Ghost
decision is a seeded random legal action without search.

>>> agent = agents.make("search", seed=0)              # budget: 512 up to 4 players, else 256
>>> agent = agents.make("search", budget=128, seed=0)
>>> a = agent.act(obs, mask)
>>> agent.last  # actions, mean values and simulations of the last search
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ripmarket_env.games.ripmarket.cards import registry as R
from ripmarket_env.games.ripmarket.cards.loader import CardDB, default_cards
from ripmarket_env.games.ripmarket import Engine, RulesConfig
from ripmarket_env.games.ripmarket.observation import GLOBAL, Layout
from ripmarket_env.games.ripmarket.state import (
    MAX_MARKET,
    MAX_SEATS,
    PH_ACQUIRE,
    PH_GHOST,
    PH_GHOST_TARGET,
    PH_MARKET,
    PH_PLAY,
    PH_REPLACE,
    PH_TARGET,
    allocate,
)

from agents.ripmarket import _search_kernels as SK
from agents.base import BaseAgent, make, register

_CHOICE_OPS = {
    PH_TARGET: (R.OP_SCORE_TARGET, R.OP_DEFLECT, R.OP_DAMAGE_TARGET),
    PH_MARKET: (R.OP_MARKET_DISCARD, R.OP_MARKET_TAKE),
    PH_REPLACE: (R.OP_REPLACE,),
}
_TRIGGER_SOURCE = {1: R.TRIGGER_SOURCES["took_deck"], 2: R.TRIGGER_SOURCES["took_market"]}
_COMPILED = {"random": SK.POLICY_RANDOM, "value": SK.POLICY_VALUE}
_DECIDE_PHASES = (PH_ACQUIRE, PH_PLAY, PH_TARGET, PH_MARKET, PH_REPLACE, PH_GHOST, PH_GHOST_TARGET)


class ReconstructionError(ValueError):
    """The observation cannot come from a game of the given rules and cards."""


@dataclass
class Hidden:
    """What the viewer cannot see, as the sampler needs it (seat indices: viewer = 0)."""

    pool: np.ndarray  # (DL,) Living cards out of view, per design
    spool: np.ndarray  # (DS,) Shadow cards out of view, per design
    fd_seats: np.ndarray  # other seats with a face-down card on the table
    fd_hint: np.ndarray  # per fd seat: face-down design it took from the Market this round (-1 none)
    hint_seat: np.ndarray  # seats known to hold the card they took from the Market ...
    hint_card: np.ndarray  # ... and that card
    unsure_seat: np.ndarray  # attached Shadow triggers whose firing cannot be seen: seat ...
    unsure_slot: np.ndarray  # ... and attach slot ...
    unsure_bit: np.ndarray  # ... and the take (1 deck, 2 Market) that would have fired it
    unsure_p: float  # the chance each of them fired (a prior, see public_state)
    hand_seats: np.ndarray  # other seats holding Living cards ...
    hand_sizes: np.ndarray  # ... and how many
    sh_seats: np.ndarray  # other seats holding Shadow cards ...
    sh_sizes: np.ndarray  # ... and how many
    deck_n: int
    sdeck_n: int


@dataclass
class Public:
    """The rebuilt public game: one state record plus what to sample."""

    engine: Engine  # batch-1 engine of the game's rules (tables and config)
    template: np.ndarray  # (1,) state record: public parts and the viewer's own cards
    hidden: Hidden
    viewer_alive: bool


class _Cards:
    """Per-database constants: observation indices and card facts the rebuild reads."""

    def __init__(self, db: CardDB, lay: Layout):
        self.db = db
        self.blank = allocate(1, db)  # a fresh state record (copied per rebuild)
        self.idx = {}
        for p in lay.pieces:
            if p.scope == GLOBAL:
                o = lay.offsets[p.name]
                self.idx[p.name] = np.arange(o, o + p.size)
            else:
                o = lay.seat_start + lay.offsets[p.name]
                seats = np.arange(MAX_SEATS)[:, None] * lay.seat_size
                self.idx[p.name] = o + seats + np.arange(p.size)[None, :]
        DL, DS = db.n_living, db.n_shadow
        self.copies = db.living_copies.astype(np.int64)
        self.shadow_copies = db.shadow_copies.astype(np.int64)
        self.fd = np.asarray(db.living_face_down, bool)
        codes = [db.living_ops[d, : db.living_nops[d], 0] for d in range(DL)]
        self.replace = np.array([R.OP_REPLACE in c for c in codes])
        # takes[d]: acquisition codes (1 deck, 2 Market) the card's own text takes from
        self.takes = np.array([(1 if R.OP_DRAW in c else 0) | (2 if R.OP_MARKET_TAKE in c else 0) for c in codes])
        # replaced_takes[d]: for a replacing design, the acquisition codes its text takes from
        # before its ``replace`` (Double Back draws, then is replaced and goes to the discard:
        # the table then shows only the replacement, R-7.12); 0 for the others
        pre = [list(c[: list(c).index(R.OP_REPLACE)]) if R.OP_REPLACE in c else [] for c in codes]
        self.replaced_takes = np.array([(1 if R.OP_DRAW in c else 0) | (2 if R.OP_MARKET_TAKE in c else 0)
                                        for c in pre])
        self.hidden_takes = int(np.bitwise_or.reduce(self.replaced_takes)) if DL else 0
        # choice[phase][d]: index of design d's op that asks this phase's choice (-1 none)
        self.choice = {ph: np.array([next((k for k, x in enumerate(c) if x in ops), -1) for c in codes])
                       for ph, ops in _CHOICE_OPS.items()}
        # trigger_src[sd]: acquisition codes (1 deck, 2 Market) that fire a trigger of sd
        self.trigger_src = []
        for sd in range(DS):
            src = set()
            for k in range(db.shadow_nops[sd]):
                op = db.shadow_ops[sd, k]
                if op[0] == R.OP_SHADOW_TRIGGER:
                    src |= {a for a, s in _TRIGGER_SOURCE.items() if s == op[3]}
            self.trigger_src.append(src)
        # trigger_discards[sd]: sd's trigger discards a random card of its victim's hand
        self.trigger_discards = np.array([
            any(db.shadow_ops[sd, k][0] == R.OP_SHADOW_TRIGGER
                and db.shadow_ops[sd, k][1] == R.TRIGGER_KINDS["discard_random"] for k in range(db.shadow_nops[sd]))
            for sd in range(DS)], bool)

    def view(self, obs: np.ndarray) -> dict:
        return {name: obs[ix] for name, ix in self.idx.items()}


_PROTOS: dict = {}
_CARDS: dict = {}


def _proto(rules: RulesConfig, cards: CardDB) -> Engine:
    key = (rules, id(cards))
    eng = _PROTOS.get(key)
    if eng is None or eng.cards is not cards:
        eng = _PROTOS[key] = Engine(rules, 1, cards)
    return eng


def _card_consts(db: CardDB, lay: Layout) -> _Cards:
    hit = _CARDS.get(id(db))
    if hit is None or hit.db is not db:
        hit = _CARDS[id(db)] = _Cards(db, lay)
    return hit


def _rint(x, scale=1.0) -> np.ndarray:
    return np.rint(np.asarray(x, dtype=np.float64) * scale).astype(np.int64)


def _onehot_rows(x: np.ndarray) -> np.ndarray:
    """Per row: the index of the hot entry, -1 if none."""
    return np.where(x.max(axis=-1) > 0.5, x.argmax(axis=-1), -1)


def public_state(obs: np.ndarray, mask: np.ndarray, rules: RulesConfig | None = None,
                 cards: CardDB | None = None, infer_takes: bool = True) -> Public:
    """Rebuild the public part of the game the viewer (the actor) sees.

    ``rules`` defaults to the rulebook's rules for the observed player count (start HP,
    Market size and the round cap cannot be read from an observation otherwise).
    Raises :class:`ReconstructionError` if the observation is not the actor's view of a
    decision, or does not add up with the rules and cards.
    """
    db = cards if cards is not None else default_cards()
    obs = np.asarray(obs, dtype=np.float32)
    cc = _card_consts(db, _proto(rules or RulesConfig(), db).obs_layout)
    v = cc.view(obs)
    P = int(np.argmax(v["num_players"])) + 2
    if rules is None:
        rules = RulesConfig(num_players=P)
    elif rules.num_players != P:
        raise ReconstructionError(f"observation has {P} players, rules have {rules.num_players}")
    eng = _proto(rules, db)
    DL, DS = db.n_living, db.n_shadow
    hp0, max_rounds, M = rules.hp, rules.rounds_cap, rules.market
    phase = int(np.argmax(v["phase"]))
    if phase not in _DECIDE_PHASES:
        raise ReconstructionError("the game is over: there is no decision to rebuild")
    if float(v["is_actor"][0]) < 0.5:
        raise ReconstructionError("the viewer does not make the next decision")

    st = cc.blank.copy()
    # ---- global pieces
    st["phase"] = phase
    round_num = int(_rint(v["round"][0], max_rounds))
    st["round_num"] = round_num
    st["rule"] = int(np.argmax(v["rule"]))
    L, S = st["deck"].shape[1], st["shadow_deck"].shape[1]
    deck_n = int(_rint(v["deck_size"][0], L))
    sdeck_n = int(_rint(v["shadow_deck_size"][0], S))
    discard = _rint(v["discard"], 3)
    st["discard"][0] = discard
    st["discard_n"] = discard.sum()
    market = _onehot_rows(v["market"].reshape(MAX_MARKET, DL))
    if (market[M:] >= 0).any():
        raise ReconstructionError(f"Market cards beyond the {M} slots of the rules")
    st["market"][0] = market
    hand = _rint(v["hand"], 3)
    shand = _rint(v["shadow_hand"], 3)
    st["hand"][0, 0] = hand
    st["shadow_hand"][0, 0] = shand
    st["epilogue"] = float(v["epilogue"][0]) > 0.5

    # ---- seats (seat k = k seats clockwise from the viewer)
    col = lambda name: v[name][:P, 0]  # noqa: E731
    alive = col("alive") > 0.5
    hand_n = _rint(col("hand_size"), 10)
    shadow_n = _rint(col("shadow_hand_size"), 3)
    acted = col("acted") > 0.5
    face_down = col("face_down") > 0.5
    played = _onehot_rows(v["played"][:P])
    acq = v["acquired"][:P]
    acquired = np.where(acq[:, 0] > 0.5, 1, np.where(acq[:, 1] > 0.5, 2, 0))
    acq_card = _onehot_rows(v["market_take"][:P])
    target = _onehot_rows(v["target"][:P])
    att = _rint(v["attached"][:P], 3)
    pos = _rint(col("turn_position"), P - 1)
    firsts = np.flatnonzero(col("first_player") > 0.5)
    actors = np.flatnonzero(col("actor") > 0.5)
    if not np.array_equal(np.sort(pos), np.arange(P)):
        raise ReconstructionError("turn positions are not a permutation of the seats")
    if actors.tolist() != [0]:
        raise ReconstructionError("the viewer does not make the next decision")
    if firsts.size != 1:
        raise ReconstructionError("no seat holds the First Player token")
    if hand_n[0] != hand.sum() or shadow_n[0] != shand.sum():
        raise ReconstructionError("the viewer's hand does not match its hand size")
    order = np.empty(P, np.int64)
    order[pos] = np.arange(P)
    on_table = played >= 0
    on_table[1:] |= face_down[1:]
    st["alive"][0, :P] = alive
    st["hp"][0, :P] = _rint(col("hp"), hp0)
    # rounds sudden death spared are not in the observation: the fewest the round
    # number and the HP left allow (every other round but the grace round, R-8.2, cost at
    # least 1 HP, R-9.3)
    grace = 1 if rules.grace_round and round_num >= 1 else 0
    st["spared_rounds"] = max(0, round_num + int(st["hp"][0, :P].sum()) - P * hp0 - grace)
    st["hand_n"][0, :P] = hand_n
    st["shadow_n"][0, :P] = shadow_n
    st["acted"][0, :P] = acted
    st["acquired"][0, :P] = acquired
    st["took"][0, :P] = acquired  # the acquisition's bit; a played card's takes come in the rollout
    st["acq_card"][0, :P] = acq_card
    st["face_down"][0, :P] = face_down
    st["played"][0, :P] = played  # other seats' face-down cards are sampled
    st["target"][0, :P] = np.where(target >= 0, target % P, -1)
    st["last_damage"][0, :P] = _rint(col("last_damage"))
    st["last_score"][0, :P] = _rint(col("last_score"), 10)
    st["order"][0, :P] = order
    st["first_player"] = int(firsts[0])
    st["actor"] = 0
    st["turn"] = int(pos[0])
    dead = ~alive
    st["elim"][0, :P] = np.where(dead, 1, -1)
    st["elim_counter"] = 1 if dead.any() else 0
    st["death_round"][0, :P] = np.where(dead, max(round_num - 1, 0), -1)

    # ---- the decision in progress
    if phase in _CHOICE_OPS:
        pend_card = int(_onehot_rows(v["pending_card"]))
        k = cc.choice[phase][pend_card] if pend_card >= 0 else -1
        if k < 0:
            raise ReconstructionError("a choice is pending but the pending card asks for none")
        st["pend_card"] = pend_card
        st["pend_op"] = k
    if phase == PH_GHOST_TARGET:
        st["pend_shadow"] = int(_onehot_rows(v["pending_shadow"]))

    # ---- events: attaches, then the play, of each seat in this round's turn order
    ev = 0
    unsure_seat, unsure_slot, unsure_bit = [], [], []
    for q in order:
        n_att = 0
        for sd in np.flatnonzero(att[q]):
            for _ in range(att[q, sd]):
                ev += 1
                st["attached"][0, q, n_att] = sd
                st["attach_event"][0, q, n_att] = ev
                # the triggers of a seat that has played have fired, or not
                took = acquired[q] | (cc.takes[played[q]] if played[q] >= 0 else 0)
                if q != 0 and acted[q] and on_table[q]:
                    if any(took & x for x in cc.trigger_src[sd]):
                        st["fired"][0, q, n_att] = True
                    elif any(cc.hidden_takes & ~took & x for x in cc.trigger_src[sd]):
                        # the seat may have played a replacing card that took from the
                        # source before it was replaced: not in view
                        unsure_seat.append(q)
                        unsure_slot.append(n_att)
                        srcs = sum(x for x in cc.trigger_src[sd])
                        unsure_bit.append(int(cc.hidden_takes & ~took & srcs))
                n_att += 1
        st["attached_n"][0, q] = n_att
        if acted[q] and on_table[q]:
            ev += 1
            st["play_event"][0, q] = ev
    st["event"] = ev

    # ---- what is out of view
    pool = cc.copies - discard - hand
    np.subtract.at(pool, market[market >= 0], 1)
    np.subtract.at(pool, played[played >= 0], 1)
    if (pool < 0).any():
        raise ReconstructionError("more copies of a Living design in view than exist")
    spool = cc.shadow_copies - shand - att.sum(axis=0)
    if (spool < 0).any():
        raise ReconstructionError("more copies of a Shadow design in view than exist")
    others = np.arange(1, P)
    fd_seats = others[face_down[1:]]
    hand_seats = others[hand_n[1:] > 0]
    sh_seats = others[shadow_n[1:] > 0]
    need = hand_n[1:].sum() + fd_seats.size + deck_n
    if pool.sum() != need:
        raise ReconstructionError(
            f"{pool.sum()} Living cards out of view, but hands, face-down cards and deck hold {need}")
    if pool[cc.fd].sum() < fd_seats.size:
        raise ReconstructionError("more face-down cards on the table than face-down designs out of view")
    if spool.sum() < shadow_n[1:].sum() + sdeck_n:
        raise ReconstructionError("fewer Shadow cards out of view than Shadow hands and deck hold")
    fd_hint = np.full(fd_seats.size, -1, np.int64)
    hint_seat, hint_card = [], []
    if infer_takes:
        for q in np.flatnonzero((acq_card >= 0) & alive & acted)[:]:
            x = acq_card[q]
            if q == 0 or cc.replace[x] or pool[x] <= 0:
                continue
            if (att[q] > 0)[cc.trigger_discards].any():  # a random discard may have taken it
                continue
            if face_down[q]:
                if cc.fd[x]:
                    fd_hint[np.flatnonzero(fd_seats == q)[0]] = x
            elif played[q] == x or played[q] < 0:
                continue
            if hand_n[q] > 0:
                hint_seat.append(q)
                hint_card.append(x)
    # the chance an unseen trigger fired: the share of replacing designs that take from a
    # source among the Living cards the viewer cannot place (out of view or discarded), the
    # chance that the card first put on the table was one, had the seat played one at random
    rep = cc.replaced_takes > 0
    unplaced = pool.sum() + discard.sum()
    unsure_p = float((pool[rep].sum() + discard[rep].sum()) / unplaced) if unplaced else 0.0
    hidden = Hidden(
        pool=pool, spool=spool, fd_seats=fd_seats.astype(np.int64), fd_hint=fd_hint,
        hint_seat=np.array(hint_seat, np.int64), hint_card=np.array(hint_card, np.int64),
        unsure_seat=np.array(unsure_seat, np.int64), unsure_slot=np.array(unsure_slot, np.int64),
        unsure_bit=np.array(unsure_bit, np.int64),
        unsure_p=unsure_p,
        hand_seats=hand_seats.astype(np.int64), hand_sizes=hand_n[hand_seats].astype(np.int64),
        sh_seats=sh_seats.astype(np.int64), sh_sizes=shadow_n[sh_seats].astype(np.int64),
        deck_n=deck_n, sdeck_n=sdeck_n,
    )
    return Public(engine=eng, template=st, hidden=hidden, viewer_alive=bool(alive[0]))


def determinize(pub: Public, n: int, seeds: np.ndarray) -> np.ndarray:
    """``n`` full game states (structured rows) consistent with ``pub``; ``seeds`` (n,)
    int64 RNG slots, advanced in place."""
    h = pub.hidden
    rows = np.repeat(pub.template, n)
    SK.determinize(rows, pub.engine.tables, pub.engine.cfg, h.pool, h.spool, h.fd_seats, h.fd_hint,
                   h.hint_seat, h.hint_card, h.hand_seats, h.hand_sizes, h.sh_seats, h.sh_sizes,
                   h.deck_n, h.sdeck_n, seeds)
    if h.unsure_seat.size:
        # triggers whose firing is out of view: fired with probability ``unsure_p``, drawn
        # from the rows' (advanced) seeds so a seeded search stays deterministic
        rng = np.random.default_rng(seeds.view(np.uint64))
        fired = rng.random((n, h.unsure_seat.size)) < h.unsure_p
        rows["fired"][:, h.unsure_seat, h.unsure_slot] = fired
        for j, q in enumerate(h.unsure_seat):  # the take that fired it
            rows["took"][fired[:, j], q] |= h.unsure_bit[j]
    return rows


def _seeds(rng: np.random.Generator, n: int) -> np.ndarray:
    return rng.integers(0, 2**32, size=n, dtype=np.int64)


def reconstruct(obs: np.ndarray, mask: np.ndarray, seed: int | None = None, rules: RulesConfig | None = None,
                cards: CardDB | None = None, infer_takes: bool = True) -> Engine:
    """A batch-1 :class:`Engine` holding one full game consistent with what the actor sees.

    The viewer is seat 0 of the rebuilt game: ``reconstruct(obs, mask).observe([0])``
    reproduces ``obs``, and its legal mask is ``mask``. Hidden cards, and the Shadow
    triggers whose firing is out of view (module docstring, step 2), are sampled.
    """
    pub = public_state(obs, mask, rules, cards, infer_takes)
    rows = determinize(pub, 1, _seeds(np.random.default_rng(seed), 1))
    eng = pub.engine.clone([0])
    eng.state = rows
    return eng


class SearchAgent(BaseAgent):
    """Determinized Monte-Carlo search over the actor's information set (module docstring).

    Args:
        budget: simulations per decision, split evenly over the legal actions (at least
            one each). Default (``None``): :func:`default_budget` of the observed player
            count, 512 up to 4 players and 256 above (rollouts of small games are cheaper,
            so a decision costs about the same time).
        rollout: the policy of every seat in the rollouts: ``"value"`` (compiled quick greedy
            play mixed with random actions, the default), ``"random"`` (compiled uniformly
            random play) or a registered agent name (its ``act_batch``; much slower).
        seed: makes the agent deterministic.
        rules: the game's rules (default: the rulebook's rules for the observed player
            count).
        infer_takes: place a card another seat took from the Market this round in its hand.
        max_steps: safety cap on the decisions of one rollout.
        eps: rate of uniformly random actions mixed into the ``"value"`` rollout policy.
        place_weight: the value of a simulation is the seat's final reward plus
            ``place_weight`` times its finishing place scaled to [-1, 1] (winners 1, the
            first seat out -1; :func:`placement_score`): surviving longer counts even in a
            game the seat does not win. 0 values the final reward alone.
        prior: a registered agent with ``logits`` (a trained network such as ``ppo``) as the
            search's prior: only its ``top_k`` most likely legal actions are searched, so
            each gets ``budget / top_k`` simulations instead of ``budget / |legal|``
            (``search-ppo``). None: every legal action is searched.
        top_k: the prior's candidates per decision (at least 1).
    """

    name = "search"

    def __init__(self, budget: int | None = None, rollout: str = "value", seed: int | None = None,
                 rules: RulesConfig | None = None, cards: CardDB | None = None, infer_takes: bool = True,
                 max_steps: int = 5000, eps: float = 0.25, place_weight: float = 1.0, prior: str | None = None,
                 top_k: int = 3):
        if budget is not None and (isinstance(budget, bool) or int(budget) < 1):
            raise ValueError(f"budget must be a positive integer (or None for the default), got {budget}")
        self.budget = None if budget is None else int(budget)
        self.rollout = rollout
        self.rules = rules
        self.cards = cards if cards is not None else default_cards()
        self.infer_takes = infer_takes
        self.max_steps = int(max_steps)
        self._seed = seed
        self.rng = np.random.default_rng(seed)
        if not 0.0 <= float(eps) <= 1.0:
            raise ValueError(f"eps must be in [0, 1], got {eps}")
        self.eps = float(eps)
        if not 0.0 <= float(place_weight) <= 10.0:
            raise ValueError(f"place_weight must be in [0, 10], got {place_weight}")
        self.place_weight = float(place_weight)
        self._policy = None if rollout in _COMPILED else make(rollout, seed=seed)
        if isinstance(top_k, bool) or not isinstance(top_k, (int, np.integer)) or top_k < 1:
            raise ValueError(f"top_k must be a positive integer, got {top_k!r}")
        self.top_k = int(top_k)
        self.prior = prior
        self._prior = None if prior is None else make(prior, seed=seed)
        if self._prior is not None and not hasattr(self._prior, "logits"):
            raise ValueError(f"prior={prior!r} has no action scores (logits); give a trained network such as ppo")
        self.last: dict | None = None
        self.fallbacks = 0

    def reset(self, seed: int | None = None) -> None:
        if seed is not None:
            self._seed = seed
        self.rng = np.random.default_rng(self._seed)
        if self._policy is not None and hasattr(self._policy, "reset"):
            self._policy.reset(self._seed)

    # ------------------------------------------------------------------ deciding
    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        mask = np.asarray(action_mask, dtype=bool)
        legal = np.flatnonzero(mask)
        if legal.size == 0:
            return -1
        if legal.size == 1:
            return int(legal[0])
        try:
            pub = public_state(observation, mask, self.rules, self.cards, self.infer_takes)
            if not pub.viewer_alive and pub.engine.rules.reward_mode == "win":
                return int(self.rng.choice(legal))  # a Ghost's reward is fixed
            if self._prior is not None and legal.size > self.top_k:  # the prior's most likely actions only
                z = self._prior.logits(np.asarray(observation, np.float32)[None])[0][legal]
                legal = np.sort(legal[np.argsort(-z, kind="stable")[: self.top_k]])
            values, n = self.evaluate(pub, legal)
        except ReconstructionError:  # not a view of these rules: play a random legal action
            self.fallbacks += 1
            return int(self.rng.choice(legal))
        best = np.flatnonzero(values >= values.max() - 1e-9)
        a = int(legal[best[0] if best.size == 1 else self.rng.choice(best)])
        self.last = {"actions": legal, "values": values, "simulations": n}
        return a

    def evaluate(self, pub: Public, legal: np.ndarray) -> tuple[np.ndarray, int]:
        """Mean final reward of seat 0 for each legal action over ``budget / |legal|``
        simulations (at least one), all actions on the same determinizations; and that
        number of simulations."""
        budget = self.budget if self.budget is not None else default_budget(pub.engine.num_players)
        n = max(1, budget // legal.size)
        out = self._simulate(pub, legal, n)
        return out.reshape(legal.size, n).mean(axis=1), n

    def _simulate(self, pub: Public, actions: np.ndarray, n: int) -> np.ndarray:
        """Final rewards of seat 0: row a*n + i plays ``actions[a]`` in determinization i."""
        det = determinize(pub, n, _seeds(self.rng, n))
        if not det["mask"][0].view(bool)[actions].all():
            raise ReconstructionError("the rebuilt game does not offer the observed legal actions")
        rows = np.tile(det, actions.size)
        first = np.repeat(actions.astype(np.int64), n)
        eng = pub.engine
        if self._policy is not None:
            return self._policy_rollouts(eng, rows, first)
        out = np.zeros(rows.shape[0], np.float64)
        SK.rollouts(rows, eng.tables, eng.cfg, first, _seeds(self.rng, rows.shape[0]), 0, self.max_steps,
                    _COMPILED[self.rollout], int(round(self.eps * 1000)), out)
        if self.place_weight:
            out += self.place_weight * placement_score(rows, eng.num_players)
        return out

    def _policy_rollouts(self, proto: Engine, rows: np.ndarray, first: np.ndarray) -> np.ndarray:
        sim = rows_engine(proto, rows)
        sim.step(first)
        for _ in range(self.max_steps):
            live = ~sim.terminated.astype(bool)
            if not live.any():
                break
            actor = sim.current_player()
            obs = sim.observe(np.maximum(actor, 0))
            acts = np.full(sim.batch_size, -1, np.int64)
            acts[live] = self._policy.act_batch(obs[live], sim.legal_mask()[live])
            sim.step(acts)
        done = sim.terminated.astype(bool)
        out = np.where(done, sim.state["final_rewards"][:, 0], 0.0)
        if self.place_weight:
            out += self.place_weight * placement_score(sim.state, sim.num_players)
        return out


def rows_engine(proto: Engine, rows: np.ndarray) -> Engine:
    """An engine of ``proto``'s rules and cards holding the game rows ``rows`` (sampled
    games: each row's RNG is its own state, no seed of record)."""
    sim = proto.clone([0])
    sim.state = rows
    sim.batch_size = rows.shape[0]
    sim.seeds = np.full(rows.shape[0], -1, np.int64)
    return sim


def default_budget(players: int) -> int:
    """Simulations per decision when none is given: 512 up to 4 players, 256 above."""
    return 512 if int(players) <= 4 else 256


def placement_score(rows: np.ndarray, players: int) -> np.ndarray:
    """Seat 0's finishing place in finished game rows, scaled to [-1, 1]: 1 for a shared or
    sole first place (a winner), -1 for the first seat out; every seat that finished
    strictly ahead (a winner, or eliminated later) costs ``2 / (players - 1)``. Unfinished
    rows score 0."""
    P = int(players)
    win = rows["winners"][:, :P].astype(bool)
    key = np.where(win, np.iinfo(np.int32).max, rows["elim"][:, :P].astype(np.int64))
    ahead = (key > key[:, :1]).sum(axis=1)
    score = 1.0 - 2.0 * ahead / max(1, P - 1)
    return np.where(rows["done"].astype(bool), score, 0.0)


register("search", SearchAgent,
         "Determinized Monte-Carlo search: samples the hidden cards consistent with its view, "
         "plays each legal action out budget/|legal| times (rollout=value|random|an agent name), "
         "picks the best mean of final reward plus finishing place (budget= default 512 up to 4 players, "
         "256 above; place_weight= to change).")

__all__ = [
    "Hidden", "Public", "ReconstructionError", "SearchAgent", "default_budget", "determinize", "placement_score",
    "public_state", "reconstruct", "rows_engine",
]
