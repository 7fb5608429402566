"""Hand-built game states for rules and card tests.

``Table`` wraps a one-game ``Engine`` and lets a test arrange hands, the Market, the
deck top, HP and Ghosts (moving cards, so every card stays somewhere exactly once),
start a round with a chosen First Player, and take decisions by name.
"""

from __future__ import annotations

import numpy as np

from ripmarket_env.engine import Engine, RulesConfig
from ripmarket_env.engine import kernels as K
from ripmarket_env.engine.core import _k


class Table:
    def __init__(self, num_players: int = 4, seed: int = 0, **rules):
        self.eng = Engine(RulesConfig(num_players=num_players, **rules), batch_size=1)
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
                hp: dict | None = None, ghosts: dict | None = None, discard: list | None = None):
        """Rearrange the cards before a round starts (call ``start_round`` next).

        ``hands``: seat -> card names (the whole hand; unnamed seats keep theirs);
        ``market``: names per slot (None = an empty slot); ``deck_top``: names, the first
        is the top card; ``discard``: names in the discard pile; ``hp``: seat -> HP;
        ``ghosts``: seat -> Shadow card names (the seat becomes a Ghost with 0 HP)."""
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
        # Players not named keep what they had when possible.
        for p in range(self.P):
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
        rest = [d for d in range(DL) for _ in range(int(pool[d]))]
        order = rest + top_ids[::-1]  # the top of the deck is the END of the array
        for i, d in enumerate(order):
            r["deck"][i] = d
        r["deck_n"] = len(order)
        if hp:
            for p, h in hp.items():
                r["hp"][p] = h
        if ghosts:
            for p, names in ghosts.items():
                # return the ghost's Living hand to the deck bottom
                for d in range(DL):
                    cnt = int(r["hand"][p, d])
                    for _ in range(cnt):
                        n = int(r["deck_n"])
                        r["deck"][1 : n + 1] = r["deck"][:n].copy()
                        r["deck"][0] = d
                        r["deck_n"] = n + 1
                r["hand"][p] = 0
                r["hand_n"][p] = 0
                r["alive"][p] = 0
                r["hp"][p] = 0
                self._set_shadow_hand(p, names)
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
        a = self.eng.actions.encode(kind, arg)
        self.eng.step(np.array([a]))
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
