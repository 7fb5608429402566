"""Rule-based agents: Living styles paired with Ghost styles.

Every agent decodes its observation into a :class:`agents.ripmarket.view.SeatView` (never engine
state) and decides with a small round model, :class:`RoundModel`, that estimates final
scores the way R-7.1 computes them: printed value, the card's own score effects
(``score_self``, ``set_score``), Spite-style targets, board-wide modifiers, the Shadows
attached to each seat (conditions on base value, score triggers on the acquisition
source) and the active rule (Earthquake scores base values; Low Tide damages the
highest; The Cull damages the two lowest scores). Plays not yet seen are modelled as a
card drawn from the Living cards the seat cannot see (card counting over its own hand,
the Market, the discard and the table); a hidden face-down card as one of the
face-down designs. From that the model gives the probability that I take round damage
for each card I could play.

Living styles (``agents.make(name)``):

* ``greedy`` — maximises my own expected final score (lowest under Low Tide).
* ``survivor`` — minimises the chance of taking damage, then plays the weakest card that
  is about as safe, saving strong cards.
* ``shark`` — reads the Market: takes a Market card when it makes the round clearly
  safer than the best card in hand, otherwise the deck; plays the safest card.
* ``hoarder`` — values card advantage: draws, takes Market cards that draw, prefers
  Stockpile / Merchant / Black Market Deal when safe enough, else the weakest safe card.
* ``trickster`` — plays rule changes (Low Tide, Undercurrent, Earthquake, The Cull),
  face-down cards, Deflection and Mimic whenever they are (nearly) as safe as the
  safest plain card.
* ``random`` — uniformly random (registered in :mod:`agents.base`).

Target choices shared by the styles: Spite goes where it lowers my damage risk most,
ties to the leader (most HP, then most cards); Deflection names the player most likely
to be lowest; Backstab hits the healthiest player.

Ghost styles (``ghost_style=`` keyword, each Living style has a default):

* ``spiteful`` — curses the leader with the curse most likely to hit them; passes with
  no curse.
* ``kingmaker`` — blesses the weakest living player with the blessing whose condition
  they are most likely to meet; with no blessing, curses the leader.
* ``chaotic`` — random Shadow card and victim, or a pass (its own seeded RNG).

Every agent returns a legal action for every mask (falling back to the lowest legal
action), and is deterministic given its seed.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ripmarket_env.games.ripmarket.cards.loader import CardDB
from ripmarket_env.games.ripmarket.cards.registry import base_cond_holds
from ripmarket_env.games.ripmarket.config import RulesConfig, deflection_may_name

from agents.base import BaseAgent, register, takes_settings_of
from agents.ripmarket.view import SeatInfo, SeatView, tables

# ---------------------------------------------------------------------------------
# Card knowledge (public: printed values and effects)
# ---------------------------------------------------------------------------------


_cond = base_cond_holds


class CardInfo:
    """Per-design facts the heuristics use, precomputed from the card database."""

    def __init__(self, db: CardDB):
        self.db = db
        self.value = [int(v) for v in db.living_value]
        self.ops = [[(e.op, dict(e.params)) for e in d.effect] for d in db.living]
        self.shadow_ops = [[(e.op, dict(e.params)) for e in d.effect] for d in db.shadow]
        self.shadow_curse = [d.family == "curse" for d in db.shadow]
        self.face_down = [d.face_down for d in db.living]
        #: where the card's own text takes cards from (R-4.9: Shadow triggers count it)
        self.takes = [frozenset(({"draw": "deck", "market_take": "market"}[o] for o, _ in self.ops[d]
                                 if o in ("draw", "market_take"))) for d in range(db.n_living)]

        def has(d, op):
            return any(o == op for o, _ in self.ops[d])

        self.rule = []
        for d in range(db.n_living):
            r = [p["rule"] for o, p in self.ops[d] if o == "rule"]
            self.rule.append(r[0] if r else None)
        self.board = [[(p["amount"], p["cond"], p["arg"]) for o, p in self.ops[d] if o == "score_board"]
                      for d in range(db.n_living)]
        self.target_amount = [sum(p["amount"] for o, p in self.ops[d] if o == "score_target")
                              for d in range(db.n_living)]
        self.has_target = [has(d, "score_target") or has(d, "deflect") or has(d, "damage_target")
                           for d in range(db.n_living)]
        self.deflect = [has(d, "deflect") for d in range(db.n_living)]
        self.damage = [has(d, "damage_target") for d in range(db.n_living)]
        self.exorcise = [has(d, "exorcise") for d in range(db.n_living)]
        self.replace = [has(d, "replace") for d in range(db.n_living)]
        self.mimic = [has(d, "set_score") for d in range(db.n_living)]
        self.cards_gained = [sum(p["n"] for o, p in self.ops[d] if o == "draw") + (1 if has(d, "market_take") else 0)
                             for d in range(db.n_living)]
        #: trick cards: rule changes, face-down plays, Deflection and Mimic
        self.trick = [self.rule[d] is not None or self.face_down[d] or self.deflect[d] or self.mimic[d]
                      for d in range(db.n_living)]


_INFO: dict[int, CardInfo] = {}


def card_info(db: CardDB) -> CardInfo:
    hit = _INFO.get(id(db))
    if hit is None or hit.db is not db:
        hit = _INFO[id(db)] = CardInfo(db)
    return hit


# ---------------------------------------------------------------------------------
# Round model
# ---------------------------------------------------------------------------------


def _other_key(ctx: tuple) -> tuple:
    """The part of a context other seats' scores depend on (not my acquisition)."""
    return ctx[:3]


class RoundModel:
    """Estimated final scores and damage chances for one decision of one seat.

    A *play* is ``(design, target)``: the card I put on the table now (``design`` -1:
    none) and the relative seat it targets (-1: none). ``acq`` is my acquisition this
    turn ("deck", "market" or None), which Shadow triggers attached to me read.
    """

    def __init__(self, view: SeatView):
        self.v = view
        self.ci = card_info(view.db)
        self.unseen = view.unseen_counts().astype(np.float64)
        if self.unseen.sum() <= 0:
            self.unseen = view.db.living_copies.astype(np.float64)
        fd = np.array(self.ci.face_down, dtype=bool)
        self.unseen_fd = np.where(fd, self.unseen, 0.0)
        if self.unseen_fd.sum() <= 0:
            self.unseen_fd = fd.astype(np.float64)
        self._cache: dict = {}
        # the table without my own card
        self.others_cards = [s for s in view.seats if s.rel != 0 and s.played >= 0]
        self.vis_max_base = max([self.ci.value[s.played] for s in self.others_cards], default=0)

    # ----------------------------------------------------------- context
    def context(self, design: int, target: int, acq: str | None, exorcised: bool = False) -> tuple:
        v, ci = self.v, self.ci
        rule = v.rule
        board: list = []
        tmods: dict[int, float] = {}
        for s in self.others_cards:
            board += ci.board[s.played]
            if ci.target_amount[s.played] and s.target >= 0:
                tmods[s.target] = tmods.get(s.target, 0) + ci.target_amount[s.played]
        if design >= 0:
            if ci.rule[design] is not None:
                rule = ci.rule[design]
            board += ci.board[design]
            if ci.target_amount[design] and target >= 0:
                tmods[target] = tmods.get(target, 0) + ci.target_amount[design]
            exorcised = exorcised or ci.exorcise[design]
        bases = [ci.value[s.played] for s in self.others_cards]
        if design >= 0:
            bases.append(ci.value[design])
        return (rule, tuple(sorted(board)), tuple(sorted(tmods.items())), exorcised, acq,
                max(bases) if bases else 0)

    # ----------------------------------------------------------- scores
    def score(self, seat: SeatInfo, d: int, ctx: tuple) -> float:
        """Estimated final score of ``seat`` if its card is design ``d`` (R-7.1)."""
        rule, board, tmods, exorcised, acq, max_base = ctx
        ci, v = self.ci, self.v
        b = ci.value[d]
        if rule == "earthquake":
            return float(b)
        attached = {} if (seat.rel == 0 and exorcised) else seat.attached
        s = float(b)
        for op, p in ci.ops[d]:
            if op == "score_self":
                c, amt = p["cond"], p["amount"]
                if c == "always":
                    s += amt
                elif c == "per_ghost":
                    s += amt * v.num_ghosts
                elif c == "if_haunted":
                    s += amt if attached else 0
                elif c == "hp_at_most":
                    s += amt if seat.hp <= p["arg"] else 0
                elif c == "if_last":
                    s += amt if self._is_last(seat) else 0
            elif op == "set_score":
                m = max_base if seat.rel == 0 else self.vis_max_base
                if v.yet_to_play():
                    m = max(m, 5)
                if m:
                    s = float(m)
        for rel, amt in tmods:
            if rel == seat.rel:
                s += amt
        for amt, c, arg in board:
            if _cond(c, arg, b):
                s += amt
        src = acq if seat.rel == 0 else seat.acquired
        for sd, n in attached.items():
            for op, p in self.ci.shadow_ops[sd]:
                if op == "shadow_score" and _cond(p["cond"], p["arg"], b):
                    s += n * p["amount"]
                elif op == "shadow_trigger" and p["kind"] == "score":
                    want = "market" if p["source"] == "took_market" else "deck"
                    if src == want or want in self.ci.takes[d]:
                        s += n * p["amount"]
                    elif src is None:
                        s += n * p["amount"] * 0.5
        return s

    def _is_last(self, seat: SeatInfo) -> bool:
        for o in self.v.seats:
            if o.turn_pos > seat.turn_pos and (o.has_card or o.rel == 0 or (o.alive and not o.acted)):
                return False
        return True

    def dist(self, seat: SeatInfo, ctx: tuple) -> tuple[np.ndarray, np.ndarray] | None:
        """(scores, probabilities) of another seat's final score, None if not competing."""
        key = (seat.rel, _other_key(ctx))
        if key in self._cache:
            return self._cache[key]
        out = None
        if seat.alive:
            if seat.played >= 0:
                out = (np.array([self.score(seat, seat.played, ctx)]), np.array([1.0]))
            elif seat.face_down or not seat.acted:
                w = self.unseen_fd if seat.face_down else self.unseen
                ds = np.flatnonzero(w > 0)
                sc = np.array([self.score(seat, int(d), ctx) for d in ds])
                out = (sc, w[ds] / w[ds].sum())
        self._cache[key] = out
        return out

    def others(self, ctx: tuple) -> list[tuple[SeatInfo, tuple[np.ndarray, np.ndarray]]]:
        key = ("others", _other_key(ctx))
        if key in self._cache:
            return self._cache[key]
        out = self._cache[key] = []
        for s in self.v.seats:
            if s.rel == 0:
                continue
            d = self.dist(s, ctx)
            if d is not None:
                out.append((s, d))
        return out

    @staticmethod
    def damage_prob(x: float, dists: list[tuple[np.ndarray, np.ndarray]], rule: str) -> float:
        """Chance that a seat scoring ``x`` is in a damage group, the others independent."""
        if not dists:
            return 1.0
        if rule == "low_tide":
            return float(np.prod([p[sc <= x].sum() for sc, p in dists]))
        ge = np.array([p[sc >= x].sum() for sc, p in dists])
        base = float(np.prod(ge))
        if rule != "cull":
            return base
        below = sorted({float(val) for sc, _ in dists for val in sc if val < x})
        tot = base
        for val in below:
            tot += float(np.prod([p[sc == val].sum() + g for (sc, p), g in zip(dists, ge)])) - base
        return min(tot, 1.0)

    def evaluate(self, design: int, target: int, acq: str | None) -> tuple[float, float, tuple]:
        """(my estimated score, my chance of taking round damage, context) of a play."""
        ctx = self.context(design, target, acq)
        me = self.v.me
        x = self.score(me, design, ctx)
        rule = ctx[0]
        ods = self.others(ctx)
        rkey = ("risk", _other_key(ctx), x)
        risk = self._cache.get(rkey)
        if risk is None:
            risk = self._cache[rkey] = self.damage_prob(x, [d for _, d in ods], rule)
        quake = rule == "earthquake"  # no damage is redirected under Earthquake
        if self.ci.deflect[design] and target >= 0 and not quake:
            risk *= 0.15
        # Deflections on the table that name me pass their holder's damage to me
        for s in self.others_cards:
            if not quake and s.alive and self.ci.deflect[s.played] and s.target == 0:
                sx = self.score(s, s.played, ctx)
                rest = [d for o, d in ods if o.rel != s.rel] + [(np.array([x]), np.array([1.0]))]
                risk = min(1.0, risk + self.damage_prob(sx, rest, rule))
        return x, risk, ctx

    def seat_risks(self, ctx: tuple, my_score: float) -> dict[int, float]:
        """Each other competing seat's chance of taking damage (scores by their mean)."""
        ods = self.others(ctx)
        mine = (np.array([my_score]), np.array([1.0]))
        out = {}
        for s, (sc, p) in ods:
            rest = [d for o, d in ods if o.rel != s.rel] + [mine]
            out[s.rel] = float(sum(pi * self.damage_prob(float(si), rest, ctx[0]) for si, pi in zip(sc, p)))
        return out

    def target_options(self, design: int) -> list[int]:
        """Relative seats my card could target (R-2.7), [-1] if it has no target."""
        if not self.ci.has_target[design]:
            return [-1]
        me = self.v.me
        opts = [s.rel for s in self.v.seats  # Backstab: more HP; Deflection: R-8.3's default
                if s.rel != 0 and s.alive and (not self.ci.damage[design] or s.hp_frac > me.hp_frac)
                and (not self.ci.deflect[design] or deflection_may_name(DEFLECT_TARGET, s.hp_frac, me.hp_frac))]
        return opts or [-1]


#: Whom the heuristics expect a Deflection may name: the default ruling of R-8.3. The
#: observation does not carry the rules variant, so under another ``deflect_target`` their
#: estimate of a Deflection's worth is off (the target decision itself reads the legal mask).
DEFLECT_TARGET = RulesConfig.__dataclass_fields__["deflect_target"].default


# ---------------------------------------------------------------------------------
# Living styles
# ---------------------------------------------------------------------------------


def _leader_order(view: SeatView, rels) -> list[int]:
    """Relative seats, strongest first (HP, cards in hand, token; then seat order)."""
    return sorted(rels, key=lambda r: (tuple(-float(x) for x in view.leader_key(view.seats[r])), r))


#: What a replace card that draws first is worth above the card it will be replaced by
#: (a replace card that draws nothing keeps the flat malus of ``LivingStyle.bonus``).
REPLACE_EDGE = 0.02


class LivingStyle:
    """How a living player acquires, plays and makes choices (subclasses set ``name``)."""

    name = "living"
    description = ""

    # -- utility of one play: higher is better ------------------------------------
    def utility(self, m: RoundModel, design: int, target: int, acq: str | None) -> float:
        x, risk, ctx = m.evaluate(design, target, acq)
        return -risk + 0.01 * x + self.bonus(m, design)

    def bonus(self, m: RoundModel, design: int) -> float:
        ci = m.ci
        b = 0.0
        if ci.damage[design]:
            b += 0.1
        if ci.replace[design]:
            b -= 0.1
        return b

    def best_play(self, m: RoundModel, designs, acq: str | None) -> tuple[float, int, int]:
        """(utility, design, target) of the best play among ``designs``."""
        best = None
        plain = [d for d in designs if not m.ci.replace[d]]
        for d in sorted(designs):
            if m.ci.replace[d] and m.ci.cards_gained[d]:
                # Double Back-style: it draws first and is then replaced by a card from hand,
                # so it is worth the best other card plus the draw
                if plain:
                    u = self.best_play(m, plain, acq)[0] + REPLACE_EDGE
                    if best is None or u > best[0] + 1e-12:
                        best = (u, d, -1)
                    continue
            for t in m.target_options(d):
                u = self.utility(m, d, t, acq)
                if best is None or u > best[0] + 1e-12:
                    best = (u, d, t)
        return best

    # -- decisions -------------------------------------------------------------------
    def acquire(self, view: SeatView, m: RoundModel) -> int:
        """Compare the deck (expected over the unseen cards) with each Market card."""
        hand = list(view.hand)
        opts = []
        for a, k, arg in view.legal:
            if k == "acquire_deck":
                opts.append((self.deck_value(view, m, hand) + self.deck_bias(view, m), -a, a))
            elif k == "acquire_market" and view.market[arg] >= 0:
                d = view.market[arg]
                u = self.best_play(m, set(hand) | {d}, "market")[0] + self.market_bias(view, m, d)
                opts.append((u, -a, a))
        return max(opts)[2] if opts else view.legal[0][0]

    def deck_value(self, view: SeatView, m: RoundModel, hand) -> float:
        w = m.unseen / m.unseen.sum()
        hand_u = self.best_play(m, hand, "deck")[0] if hand else -10.0
        tot = 0.0
        for d in np.flatnonzero(w > 0):
            u = self.best_play(m, [int(d)], "deck")[0]
            tot += w[d] * max(hand_u, u)
        for sd in view.me.attached:
            for op, p in m.ci.shadow_ops[sd]:
                if op == "shadow_trigger" and p["kind"] == "discard_random" and p["source"] == "took_deck":
                    tot -= 0.05 * p["amount"]
        return tot

    def deck_bias(self, view, m) -> float:
        return 0.0

    def market_bias(self, view, m, design) -> float:
        return 0.0

    def play(self, view: SeatView, m: RoundModel) -> int:
        designs = [arg for _, arg in view.legal_of("card")]
        _, d, _ = self.best_play(m, designs, view.me.acquired)
        return view.actions.encode("card", d)

    def replacement(self, view: SeatView, m: RoundModel) -> int:
        return self.play(view, m)

    def target(self, view: SeatView, m: RoundModel) -> int:
        d = view.pending_card
        legal = [arg for _, arg in view.legal_of("target")]
        if d < 0:
            return view.actions.encode("target", legal[0])
        ci = m.ci
        if ci.damage[d]:  # Backstab: the healthiest
            return view.actions.encode("target", _leader_order(view, legal)[0])
        if ci.deflect[d]:  # Deflection: the player most likely to be lowest
            x, _, ctx = m.evaluate(d, legal[0], view.me.acquired)
            risks = m.seat_risks(ctx, x)
            best = min(legal, key=lambda r: (-risks.get(r, 0.0), view.seats[r].hp_frac, r))
            return view.actions.encode("target", best)
        return view.actions.encode("target", self.spite_target(view, m, d, legal))

    def spite_target(self, view: SeatView, m: RoundModel, d: int, legal: list[int]) -> int:
        order = _leader_order(view, legal)
        risks = {r: m.evaluate(d, r, view.me.acquired)[1] for r in legal}
        return min(order, key=lambda r: (round(risks[r], 6), order.index(r)))

    def keep_worth(self, m: RoundModel, d: int) -> float:
        """How much a card is worth to keep in hand for later rounds."""
        return m.ci.value[d]

    def market_slot(self, view: SeatView, m: RoundModel) -> int:
        d = view.pending_card
        slots = [arg for _, arg in view.legal_of("market_slot")]
        worth = {s: self.keep_worth(m, view.market[s]) if view.market[s] >= 0 else -99 for s in slots}
        # take the best card for me; discard the best card for the others (denial)
        best = max(slots, key=lambda s: (worth[s], -s))
        return view.actions.encode("market_slot", best)


class Greedy(LivingStyle):
    name = "greedy"
    description = "Plays the card with the highest estimated final score (lowest under Low Tide)."

    def utility(self, m, design, target, acq):
        x, risk, ctx = m.evaluate(design, target, acq)
        eff = -x if ctx[0] == "low_tide" else x
        return eff - 0.001 * risk

    def acquire(self, view, m):
        # expected best effective score over hand + acquired card
        return LivingStyle.acquire(self, view, m)

    def spite_target(self, view, m, d, legal):
        return _leader_order(view, legal)[0]


class Survivor(LivingStyle):
    name = "survivor"
    description = "Plays just enough not to be lowest (estimating unseen later plays), saving strong cards."

    def utility(self, m, design, target, acq):
        x, risk, ctx = m.evaluate(design, target, acq)
        return -risk - 0.015 * m.ci.value[design] + self.bonus(m, design)


class Shark(LivingStyle):
    name = "shark"
    description = "Reads the Market: takes a Market card that wins or saves the round, else the deck."

    def acquire(self, view, m):
        hand = list(view.hand)
        deck = [a for a, k, _ in view.legal if k == "acquire_deck"]
        base = self.best_play(m, hand, "deck")[0] if hand else -10.0
        best = None
        for a, k, arg in view.legal:
            if k == "acquire_market" and view.market[arg] >= 0:
                u = self.best_play(m, set(hand) | {view.market[arg]}, "market")[0]
                if best is None or u > best[0]:
                    best = (u, a)
        if best is not None and (not deck or best[0] > base + 0.1):
            return best[1]
        return deck[0] if deck else view.legal[0][0]


class Hoarder(LivingStyle):
    name = "hoarder"
    description = "Builds card advantage: draws, prefers drawing plays when safe, else plays its weakest safe card."

    def utility(self, m, design, target, acq):
        x, risk, ctx = m.evaluate(design, target, acq)
        return -risk - 0.015 * m.ci.value[design] + 0.12 * m.ci.cards_gained[design] + self.bonus(m, design)

    def deck_bias(self, view, m):
        return 0.03

    def keep_worth(self, m, d):
        return m.ci.value[d] + 3 * m.ci.cards_gained[d]


class Trickster(LivingStyle):
    name = "trickster"
    description = "Plays rule flips, Low Tide, face-down cards, Deflection and Mimic whenever they pay."

    def utility(self, m, design, target, acq):
        x, risk, ctx = m.evaluate(design, target, acq)
        trick = 0.08 if m.ci.trick[design] else 0.0
        return -risk + 0.005 * x + trick + self.bonus(m, design)

    def keep_worth(self, m, d):
        return m.ci.value[d] + (4 if m.ci.trick[d] else 0)


LIVING: dict[str, type[LivingStyle]] = {c.name: c for c in (Greedy, Survivor, Shark, Hoarder, Trickster)}

# ---------------------------------------------------------------------------------
# Ghost styles
# ---------------------------------------------------------------------------------


def _victims(view: SeatView) -> list[int]:
    """Living players who have not yet taken their turn (R-5.2)."""
    return [s.rel for s in view.yet_to_play()]


def _hit_chance(view: SeatView, m: RoundModel, sd: int, victim: SeatInfo, careful: float) -> float:
    """Chance a Shadow card's condition is met by the victim's play.

    ``careful`` blends a naive victim (a random card meets a base condition with chance
    p) with a careful one (meets it only if all of its cards do, p^(h+1)), or, for a
    blessing, one who meets it if any card does.
    """
    w = m.unseen / m.unseen.sum()
    vals = np.array(m.ci.value)
    h = victim.hand_size + 1
    curse = m.ci.shadow_curse[sd]
    for op, p in m.ci.shadow_ops[sd]:
        if op == "shadow_score":
            meet = float(sum(w[d] for d in range(len(w)) if _cond(p["cond"], p["arg"], int(vals[d]))))
            smart = meet ** h if curse else 1 - (1 - meet) ** h
            return (1 - careful) * meet + careful * smart
        if op == "shadow_trigger":
            n_market = sum(1 for d in view.market if d >= 0)
            p_deck = 1.0 if victim.hand_size == 0 else 1.0 / (1 + max(n_market, 1))
            p_src = p_deck if p["source"] == "took_deck" else 1 - p_deck
            if curse:
                forced = 1.0 if (victim.hand_size == 0 and p["source"] == "took_deck") else 0.0
                return (1 - careful) * p_src + careful * forced
            return (1 - careful) * p_src + careful * 1.0
    return 0.0


def _magnitude(m: RoundModel, sd: int) -> float:
    tot = 0.0
    for op, p in m.ci.shadow_ops[sd]:
        if op == "shadow_trigger" and p["kind"] == "discard_random":
            tot += 1.5 * p["amount"]
        else:
            tot += abs(p["amount"])
    return tot


class GhostStyle:
    name = "ghost"
    description = ""

    def __init__(self, rng: np.random.Generator):
        self.rng = rng

    def ghost(self, view: SeatView, m: RoundModel) -> int:
        raise NotImplementedError

    def victim(self, view: SeatView, m: RoundModel) -> int:
        legal = [arg for _, arg in view.legal_of("target")]
        sd = view.pending_shadow
        if sd >= 0 and not m.ci.shadow_curse[sd]:
            order = _leader_order(view, legal)[::-1]  # a blessing to the weakest
        else:
            order = _leader_order(view, legal)  # a curse to the strongest
        return view.actions.encode("target", order[0])

    def best_shadow(self, view, m, victim: int, curse: bool) -> int | None:
        best = None
        for a, sd in view.legal_of("shadow"):
            if m.ci.shadow_curse[sd] != curse:
                continue
            val = _magnitude(m, sd) * _hit_chance(view, m, sd, view.seats[victim], 0.5)
            if best is None or val > best[0] + 1e-12:
                best = (val, a)
        return None if best is None else best[1]


def _pass(view: SeatView) -> int:
    p = view.legal_of("pass")
    return p[0][0] if p else view.legal[0][0]


class Spiteful(GhostStyle):
    name = "spiteful"
    description = "Curses the leader with the curse most likely to hit them; passes with no curse."

    def ghost(self, view, m):
        vs = _victims(view)
        if not vs:
            return _pass(view)
        a = self.best_shadow(view, m, _leader_order(view, vs)[0], curse=True)
        return _pass(view) if a is None else a


class Kingmaker(GhostStyle):
    name = "kingmaker"
    description = "Blesses the weakest living player with the blessing they are likeliest to use; else curses the leader."

    def ghost(self, view, m):
        vs = _victims(view)
        if not vs:
            return _pass(view)
        order = _leader_order(view, vs)
        a = self.best_shadow(view, m, order[-1], curse=False)
        if a is None:
            a = self.best_shadow(view, m, order[0], curse=True)
        return _pass(view) if a is None else a


class Chaotic(GhostStyle):
    name = "chaotic"
    description = "Random Shadow card and victim, or a pass."

    def ghost(self, view, m):
        return int(self.rng.choice([a for a, _, _ in view.legal]))

    def victim(self, view, m):
        return int(self.rng.choice([a for a, _, _ in view.legal]))


GHOST: dict[str, type[GhostStyle]] = {c.name: c for c in (Spiteful, Kingmaker, Chaotic)}

DEFAULT_GHOST = {"greedy": "spiteful", "survivor": "spiteful", "shark": "spiteful",
                 "hoarder": "kingmaker", "trickster": "chaotic"}

# ---------------------------------------------------------------------------------
# The agent
# ---------------------------------------------------------------------------------

_LIVING_PHASES = {
    "acquire": "acquire",
    "play": "play",
    "choose_target": "target",
    "choose_market_slot": "market_slot",
    "choose_replacement": "replacement",
}


class HeuristicAgent(BaseAgent):
    """A Living style paired with a Ghost style; decides from the observation and mask only.

    ``act`` returns -1 for a mask with no legal action (a finished game, which
    ``Engine.step`` ignores).
    """

    #: re-raise errors of the heuristics instead of falling back (tests set it)
    strict = False

    def __init__(self, style: str = "greedy", ghost_style: str | None = None, seed: int | None = None,
                 cards: CardDB | None = None, start_hp: int | None = None):
        if style not in LIVING:
            raise KeyError(f"unknown living style {style!r}; known: {', '.join(sorted(LIVING))}")
        ghost_style = ghost_style or DEFAULT_GHOST[style]
        if ghost_style not in GHOST:
            raise KeyError(f"unknown ghost style {ghost_style!r}; known: {', '.join(sorted(GHOST))}")
        self.db, self.at, _ = tables(cards)
        self.style = LIVING[style]()
        self.ghost_style_name = ghost_style
        self.start_hp = start_hp
        self.name = style if ghost_style == DEFAULT_GHOST[style] else f"{style}+{ghost_style}"
        self._seed = seed
        self.ghost = GHOST[ghost_style](np.random.default_rng(seed))

    def reset(self, seed: int | None = None) -> None:
        if seed is not None:
            self._seed = seed
        self.ghost.rng = np.random.default_rng(self._seed)

    def view(self, observation: np.ndarray, action_mask: np.ndarray) -> SeatView:
        return SeatView.from_obs(observation, action_mask, self.db, self.start_hp)

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        mask = np.asarray(action_mask, dtype=bool)
        legal = np.flatnonzero(mask)
        if legal.size == 0:
            return -1
        if legal.size == 1:
            return int(legal[0])
        try:
            a = self.decide(self.view(observation, mask))
        except (ValueError, IndexError, KeyError, TypeError, ZeroDivisionError):
            if self.strict:
                raise
            a = -1
        if a is None or not (0 <= a < mask.size) or not mask[a]:
            return int(legal[0])
        return int(a)

    def decide(self, view: SeatView) -> int:
        m = RoundModel(view)
        if view.phase in _LIVING_PHASES:
            return getattr(self.style, _LIVING_PHASES[view.phase])(view, m)
        if view.phase == "ghost":
            return self.ghost.ghost(view, m)
        if view.phase == "choose_victim":
            return self.ghost.victim(view, m)
        return view.legal[0][0]


def _factory(style: str) -> Callable[..., HeuristicAgent]:
    def make(**kwargs) -> HeuristicAgent:
        return HeuristicAgent(style, **kwargs)

    make.__name__ = f"make_{style}"
    return takes_settings_of(make, HeuristicAgent, "style")


for _name, _cls in LIVING.items():
    register(_name, _factory(_name),
             f"{_cls.description} Default Ghost style: {DEFAULT_GHOST[_name]} (ghost_style= to change).")

__all__ = ["CardInfo", "GhostStyle", "HeuristicAgent", "LivingStyle", "RoundModel", "GHOST", "LIVING",
           "DEFAULT_GHOST"]
