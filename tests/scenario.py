"""Hand-built game states for rules and card tests.

``Table`` wraps a one-game ``Engine`` and lets a test arrange hands, the Market, the
deck top, HP and Ghosts (moving cards, so every card stays somewhere exactly once),
start a round with a chosen First Player, and take decisions by name.

Extras for rules tests: ``arrange(rest=...)`` sends every card not named elsewhere to the
deck (default), the discard or one seat's hand; ``shadow_deck_top`` / ``shadow_rest``
arrange the Shadow Deck; ``direct_damage`` deals direct damage through the engine's own
kernel (the only way to reach a mid-round death, R-6.2); read-outs by card name
(``hand``, ``market_names``, ``discard_names``, ``scores``, ``view``...).
"""

from __future__ import annotations

import contextlib
from collections import Counter

import numba
import numpy as np

from ripmarket_env.games.ripmarket import Engine, RulesConfig
from ripmarket_env.games.ripmarket import kernels as K
from ripmarket_env.games.ripmarket.cards.registry import RULES
from ripmarket_env.games.ripmarket.engine import _k
from ripmarket_env.games.ripmarket.observation import named_view

RULE_NAMES = {code: name for name, code in RULES.items()}


@contextlib.contextmanager
def serial():
    """Run the engine's parallel kernels on the calling thread only.

    A one-game table gains nothing from the thread pool, and handing each step to it costs
    tens of milliseconds on a loaded machine; the kernels and results are the same."""
    n = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        yield
    finally:
        numba.set_num_threads(n)


def variant_cards(edition: str = "cards.json", **effects):
    """The packaged card database (``edition``: its file, e.g. ``first_edition.json``) with
    some Living designs' effects changed.

    ``variant_cards(Backstab=[{"op": "damage_target"}, {"op": "draw", "n": 1}])``. Keywords
    and rules text are regenerated from the new effect; names, values and copies stay, so
    the engine state has the same layout (no recompilation)."""
    import json
    from importlib import resources

    from ripmarket_env.games.ripmarket.cards.loader import parse_cards
    from ripmarket_env.games.ripmarket.cards.text import RULE_KEYWORD, effect_text

    data = json.loads(resources.files("ripmarket_env.games.ripmarket.cards").joinpath(edition).read_text("utf-8"))
    by_name = {row["name"]: row for row in data["living"]}
    for name, effect in effects.items():
        row = by_name[name.replace("_", " ")]
        row["effect"] = effect
        kw = []
        if any(e["op"] == "face_down" for e in effect):
            kw.append("FACE-DOWN")
        kw += [RULE_KEYWORD[e["rule"]] for e in effect if e["op"] == "rule"]
        row["keywords"] = kw
        row["text"] = effect_text("living", effect)
    return parse_cards(data, source="variant cards")


#: The turn rules a hand-arranged table plays unless a test names them: the first edition's
#: seat-order turns (Ghosts among the living), equal opening hands, token ties to the
#: earliest, Deflections naming anyone and round damage in the first round (a hand-arranged
#: round is the game's first), so that a round reads in seat order from the First Player.
#: The second edition's rulings (R-3.3, R-1.3, R-8.6, R-8.3, R-8.2's grace round) have their
#: own tests (tests/test_rules_balance_rulings.py), and whole seeded games play the defaults.
TABLE_RULES = {"ghost_phase": "in_turn", "opening_bonus": "none", "token_tie": "earliest", "deflect_target": "any",
               "grace_round": False}


class Table:
    def __init__(self, num_players: int = 4, seed: int = 0, cards=None, **rules):
        rules = {**TABLE_RULES, **rules}
        self.eng = Engine(RulesConfig(num_players=num_players, **rules), batch_size=1, cards=cards)
        with serial():
            self.eng.reset([seed])
        self.db = self.eng.cards
        self.P = num_players

    # ------------------------------------------------------------------ lookups
    @property
    def r(self):
        """The game's record (a view: reads and writes go to the engine)."""
        return self.eng.state[0]

    def lid(self, name: str) -> int:
        d = self.db.by_name(name)
        assert d.deck == "living", name
        return d.id

    def sid(self, name: str) -> int:
        d = self.db.by_name(name)
        assert d.deck == "shadow", name
        return d.id

    @property
    def actor(self) -> int:
        return int(self.r["actor"])

    @property
    def phase(self) -> str:
        return self.eng.phase()[0]

    @property
    def hp(self) -> list[int]:
        return [int(x) for x in self.r["hp"][: self.P]]

    @property
    def alive(self) -> list[bool]:
        return [bool(x) for x in self.r["alive"][: self.P]]

    def legal(self) -> list[int]:
        return self.eng.legal_actions(0)

    # ------------------------------------------------------------------ arranging
    def arrange(self, hands: dict | None = None, market: list | None = None, deck_top: list | None = None,
                hp: dict | None = None, ghosts: dict | None = None, discard: list | None = None,
                rest="deck", shadow_deck_top: list | None = None, shadow_rest: str = "deck"):
        """Rearrange the cards before a round starts (call ``start_round`` next).

        ``hands``: seat -> card names (the whole hand; unnamed seats keep theirs);
        ``market``: names per slot (None = an empty slot); ``deck_top``: names, the first
        is the top card; ``discard``: names in the discard pile; ``hp``: seat -> HP;
        ``ghosts``: seat -> Shadow card names (the seat becomes a Ghost with 0 HP; a seat
        that was living is recorded as eliminated, one elimination per seat in seat order).
        ``rest``: where every Living card not named goes: ``"deck"`` (under ``deck_top``),
        ``"discard"`` (the deck is then exactly ``deck_top``) or a seat index (its hand).
        ``shadow_deck_top``: Shadow names on top of the Shadow Deck, the first on top;
        ``shadow_rest="discard"`` moves every other Shadow Deck card to the Shadow discard."""
        r = self.r
        DL = self.db.n_living
        pool = np.zeros(DL, np.int64)
        # Gather every Living card that is not on the table into the pool.
        for p in range(self.P):
            pool += r["hand"][p]
        pool += r["discard"]
        for k in range(4):
            if r["market"][k] >= 0:
                pool[r["market"][k]] += 1
        for i in range(int(r["deck_n"])):
            pool[r["deck"][i]] += 1
        keep_hands = {p: list(r["hand"][p]) for p in range(self.P)}
        r["hand"][:] = 0
        r["market"][:] = -1
        r["discard"][:] = 0
        r["deck"][:] = -1

        def take(name):
            d = self.lid(name)
            assert pool[d] > 0, f"no copy of {name} left to place"
            pool[d] -= 1
            return d

        new_hands = {}
        for p in range(self.P):
            if hands is not None and p in hands:
                new_hands[p] = [take(n) for n in hands[p]]
        market_ids = [None if n is None else take(n) for n in market] if market is not None else None
        top_ids = [take(n) for n in deck_top] if deck_top else []
        disc_ids = [take(n) for n in discard] if discard else []
        # Players not named keep what they had when possible (a new Ghost keeps nothing).
        for p in range(self.P):
            if p not in new_hands and ghosts and p in ghosts:
                new_hands[p] = []
            if p not in new_hands:
                kept = []
                for d, cnt in enumerate(keep_hands[p]):
                    for _ in range(cnt):
                        if pool[d] > 0:
                            pool[d] -= 1
                            kept.append(d)
                new_hands[p] = kept
        for p, ids in new_hands.items():
            for d in ids:
                r["hand"][p, d] += 1
            r["hand_n"][p] = len(ids)
        if market_ids is None:
            market_ids = []
            for k in range(self.eng.rules.market):
                d = int(np.flatnonzero(pool)[0]) if pool.sum() else None
                if d is not None:
                    pool[d] -= 1
                market_ids.append(d)
        for k, d in enumerate(market_ids):
            r["market"][k] = -1 if d is None else d
        for d in disc_ids:
            r["discard"][d] += 1
        r["discard_n"] = len(disc_ids)
        rest_ids = [d for d in range(DL) for _ in range(int(pool[d]))]
        if rest == "deck":
            order = rest_ids + top_ids[::-1]  # the top of the deck is the END of the array
        elif rest == "discard":
            for d in rest_ids:
                r["discard"][d] += 1
            r["discard_n"] = len(disc_ids) + len(rest_ids)
            order = top_ids[::-1]
        else:
            seat = int(rest)
            for d in rest_ids:
                r["hand"][seat, d] += 1
            r["hand_n"][seat] += len(rest_ids)
            order = top_ids[::-1]
        for i, d in enumerate(order):
            r["deck"][i] = d
        r["deck_n"] = len(order)
        if hp:
            for p, h in hp.items():
                r["hp"][p] = h
        if ghosts:
            for p, names in sorted(ghosts.items()):
                assert not r["hand_n"][p], "a Ghost holds no Living cards"
                if r["alive"][p]:
                    r["elim_counter"] += 1
                    r["elim"][p] = r["elim_counter"]
                    r["death_round"][p] = r["round_num"]
                r["alive"][p] = 0
                r["hp"][p] = 0
                self._set_shadow_hand(p, names)
        if shadow_deck_top is not None or shadow_rest != "deck":
            self._arrange_shadow_deck(shadow_deck_top or [], shadow_rest)
        return self

    def _set_shadow_hand(self, p: int, names: list[str]):
        r = self.r
        # put the seat's current Shadow hand back on the Shadow deck, then take the named ones
        for sd in range(self.db.n_shadow):
            for _ in range(int(r["shadow_hand"][p, sd])):
                n = int(r["shadow_deck_n"])
                r["shadow_deck"][n] = sd
                r["shadow_deck_n"] = n + 1
        r["shadow_hand"][p] = 0
        for name in names:
            sd = self.sid(name)
            n = int(r["shadow_deck_n"])
            idx = [i for i in range(n) if r["shadow_deck"][i] == sd]
            if idx:
                i = idx[0]
                r["shadow_deck"][i:n - 1] = r["shadow_deck"][i + 1:n].copy()
                r["shadow_deck"][n - 1] = -1
                r["shadow_deck_n"] = n - 1
            else:
                assert r["shadow_discard"][sd] > 0, f"no copy of {name} left"
                r["shadow_discard"][sd] -= 1
                r["shadow_discard_n"] -= 1
            r["shadow_hand"][p, sd] += 1
        r["shadow_n"][p] = len(names)

    def _arrange_shadow_deck(self, top: list[str], rest: str):
        r = self.r
        n = int(r["shadow_deck_n"])
        pool = Counter(int(x) for x in r["shadow_deck"][:n])
        top_ids = []
        for name in top:
            sd = self.sid(name)
            if pool[sd] == 0:  # take it back from the Shadow discard
                assert r["shadow_discard"][sd] > 0, f"no copy of {name} left"
                r["shadow_discard"][sd] -= 1
                r["shadow_discard_n"] -= 1
            else:
                pool[sd] -= 1
            top_ids.append(sd)
        rest_ids = [sd for sd in sorted(pool) for _ in range(pool[sd])]
        if rest == "discard":
            for sd in rest_ids:
                r["shadow_discard"][sd] += 1
            r["shadow_discard_n"] += len(rest_ids)
            rest_ids = []
        order = rest_ids + top_ids[::-1]  # the top is the END of the array
        r["shadow_deck"][:] = -1
        for i, sd in enumerate(order):
            r["shadow_deck"][i] = sd
        r["shadow_deck_n"] = len(order)

    def start_round(self, first: int = 0):
        """Begin a round now with ``first`` holding the First Player token."""
        r = self.r
        r["played"][:] = -1
        r["face_down"][:] = 0
        r["target"][:] = -1
        r["attached_n"][:] = 0
        r["acted"][:] = 0
        r["acquired"][:] = 0
        K.restart_round(_k(self.eng.state), _k(self.eng.tables), self.eng.cfg, 0, first)
        return self

    # ------------------------------------------------------------------ acting
    def act(self, kind: str, arg: int = 0):
        return self.step(self.eng.actions.encode(kind, arg))

    def step(self, action: int):
        """One decision through ``Engine.step`` (raises ``IllegalActionError`` if illegal)."""
        with serial():
            self.eng.step(np.array([action]))
        return self

    def take_deck(self):
        if self.phase == "acquire":
            self.act("acquire_deck")
        return self

    def take_market(self, slot: int):
        return self.act("acquire_market", slot)

    def play(self, name: str):
        """Play a card if the engine is waiting for a play (it may have auto-played)."""
        if self.phase == "play":
            self.act("card", self.lid(name))
        return self

    def choose_seat(self, seat: int):
        off = (seat - self.actor) % self.P
        return self.act("target", off)

    def turn(self, name: str, target: int | None = None, slot: int | None = None, market: int | None = None):
        """A whole living turn: acquire (deck, or Market slot ``market``), play, choose."""
        if market is None:
            self.take_deck()
        else:
            self.take_market(market)
        self.play(name)
        if target is not None and self.phase == "choose_target":
            self.choose_seat(target)
        if slot is not None and self.phase == "choose_market_slot":
            self.act("market_slot", slot)
        return self

    def haunt(self, shadow: str, victim: int):
        self.act("shadow", self.sid(shadow))
        if self.phase == "choose_victim":
            self.choose_seat(victim)
        return self

    def ghost_pass(self):
        if self.phase == "ghost":
            self.act("pass")
        return self

    def play_round(self, plays: dict | None = None, haunts: dict | None = None, max_steps: int = 200):
        """Take every decision until this round has resolved (or the game ended).

        ``plays``: living seat -> card name, or a dict with ``card`` and optionally
        ``market`` (acquire from this Market slot instead of the deck), ``target`` (seat),
        ``slot`` (Market slot for a Market card), ``replace`` (card name for Double Back).
        ``haunts``: Ghost seat -> (Shadow card name, victim seat); other Ghosts pass.
        Decisions the engine takes itself (R-12.1) are simply not asked."""
        specs = {p: ({"card": v} if isinstance(v, str) else dict(v)) for p, v in (plays or {}).items()}
        haunts = haunts or {}
        start = self.round_num
        for _ in range(max_steps):
            if self.done or self.round_num != start:
                return self
            p, ph = self.actor, self.phase
            if ph == "ghost":
                if p in haunts:
                    self.act("shadow", self.sid(haunts[p][0]))
                else:
                    self.act("pass")
                continue
            if ph == "choose_victim":
                self.choose_seat(haunts[p][1])
                continue
            spec = specs[p]
            if ph == "acquire":
                if spec.get("market") is None:
                    self.act("acquire_deck")
                else:
                    self.act("acquire_market", spec["market"])
            elif ph == "play":
                self.act("card", self.lid(spec["card"]))
            elif ph == "choose_target":
                self.choose_seat(spec["target"])
            elif ph == "choose_market_slot":
                self.act("market_slot", spec["slot"])
            elif ph == "choose_replacement":
                self.act("card", self.lid(spec["replace"]))
            else:  # pragma: no cover
                raise AssertionError(f"unexpected phase {ph}")
        raise AssertionError("the round did not finish")

    def direct_damage(self, seat: int, amount: int = 1):
        """Direct damage now, through the engine's ``damage_target`` kernel (R-2.17, R-6.2).

        Backstab can only hit a richer player, so it never kills; this reaches the
        mid-round death of R-6.2/R-9.1 in a hand-built state. Call it between decisions."""
        K.op_damage_target(_k(self.eng.state)[0], self.eng.cfg, seat, amount)
        return self

    # ------------------------------------------------------------------ read-outs
    def name(self, d: int) -> str:
        return self.db.living[int(d)].name

    def hand(self, seat: int) -> Counter:
        return Counter({self.db.living[d].name: int(k) for d, k in enumerate(self.r["hand"][seat]) if k})

    def shadow_hand(self, seat: int) -> Counter:
        return Counter({self.db.shadow[d].name: int(k) for d, k in enumerate(self.r["shadow_hand"][seat]) if k})

    def discard_names(self) -> Counter:
        return Counter({self.db.living[d].name: int(k) for d, k in enumerate(self.r["discard"]) if k})

    def shadow_discard_names(self) -> Counter:
        return Counter({self.db.shadow[d].name: int(k) for d, k in enumerate(self.r["shadow_discard"]) if k})

    def market_names(self) -> list:
        return [None if d < 0 else self.name(d) for d in self.r["market"][: self.eng.rules.market]]

    def deck_top(self, n: int = 1) -> list[str]:
        """The top ``n`` cards of the Living Deck, the first on top."""
        k = int(self.r["deck_n"])
        return [self.name(self.r["deck"][k - 1 - i]) for i in range(min(n, k))]

    def played(self, seat: int):
        d = int(self.r["played"][seat])
        return None if d < 0 else self.name(d)

    def attached(self, seat: int) -> list[str]:
        return [self.db.shadow[int(x)].name for x in self.r["attached"][seat][: int(self.r["attached_n"][seat])]]

    @property
    def scores(self) -> list[int]:
        """Final scores of the last resolution (``last_score``)."""
        return [int(x) for x in self.r["last_score"][: self.P]]

    @property
    def damage(self) -> list[int]:
        """Round damage taken at the last resolution (``last_damage``)."""
        return [int(x) for x in self.r["last_damage"][: self.P]]

    @property
    def rule(self) -> str:
        """The active rule change of this round (before resolution)."""
        return RULE_NAMES[int(self.r["rule"])]

    @property
    def last_rule(self) -> str:
        """The rule change that applied at the last resolution."""
        return RULE_NAMES[int(self.r["last_rule"])]

    @property
    def first_player(self) -> int:
        return int(self.r["first_player"])

    @property
    def round_num(self) -> int:
        return int(self.r["round_num"])

    @property
    def done(self) -> bool:
        return bool(self.r["done"])

    @property
    def rewards(self) -> list[float]:
        return [float(x) for x in self.eng.rewards()[0]]

    @property
    def winners(self) -> list[int]:
        return [p for p in range(self.P) if self.r["winners"][p]]

    def view(self, viewer: int) -> dict:
        """The observation of ``viewer`` as named pieces (seat pieces relative to the viewer)."""
        with serial():
            obs = self.eng.observe([viewer])[0]
        return named_view(obs, self.eng.obs_layout)

    # ------------------------------------------------------------------ invariants
    def check_conservation(self):
        r = self.r
        tot = (int(r["deck_n"]) + int(r["discard_n"]) + int((r["market"] >= 0).sum())
               + int(r["hand_n"][: self.P].sum()) + int((r["played"][: self.P] >= 0).sum()))
        assert tot == self.db.living_deck_size
        per = np.zeros(self.db.n_living, np.int64)
        per += r["hand"][: self.P].sum(0) + r["discard"]
        for d in r["deck"][: int(r["deck_n"])]:
            per[d] += 1
        for d in r["market"]:
            if d >= 0:
                per[d] += 1
        for d in r["played"][: self.P]:
            if d >= 0:
                per[d] += 1
        assert (per == self.db.living_copies).all()

    def check_shadow_conservation(self):
        r = self.r
        per = np.zeros(self.db.n_shadow, np.int64)
        per += r["shadow_hand"][: self.P].sum(0) + r["shadow_discard"]
        for sd in r["shadow_deck"][: int(r["shadow_deck_n"])]:
            per[sd] += 1
        for p in range(self.P):
            for i in range(int(r["attached_n"][p])):
                per[r["attached"][p, i]] += 1
        assert (per == self.db.shadow_copies).all()
        assert int(r["shadow_n"][: self.P].sum()) == int(r["shadow_hand"][: self.P].sum())
        assert int(r["shadow_discard_n"]) == int(r["shadow_discard"].sum())
