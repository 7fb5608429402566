"""``SeatView``: what one seat knows, decoded from its observation vector and legal mask.

Agents never read engine state. Everything here comes from the flat observation (via
``observation.layout`` / ``named_view``), the legal-action mask (decoded with
``ActionTable.decode``) and the card database, whose printed values and effects are public
knowledge. Seats are relative to the viewer, as in the observation: seat 0 is me, seat k
the player k seats clockwise.

>>> v = SeatView.from_obs(obs, mask)
>>> v.phase, v.hand, v.market, v.seats[1].played, v.legal_kinds()
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ripmarket_env.games.ripmarket.cards.loader import CardDB, default_cards
from ripmarket_env.games.ripmarket.cards.registry import RULES
from ripmarket_env.games.ripmarket.actions import ActionTable
from ripmarket_env.games.ripmarket.observation import GLOBAL, Layout, layout
from ripmarket_env.games.ripmarket.state import MAX_SEATS, PHASE_NAMES

RULE_NAMES = {code: name for name, code in RULES.items()}  # 0 none, 1 low_tide, 2 earthquake, 3 cull


def default_start_hp(num_players: int) -> int:
    """Start HP of the default rules (R-1.2); the observation carries HP / start HP."""
    return 3 if num_players <= 3 else 2


_TABLES: dict[int, tuple[CardDB, ActionTable, Layout]] = {}


def tables(db: CardDB | None = None) -> tuple[CardDB, ActionTable, Layout]:
    """The card database, action table and observation layout agents decode with."""
    db = db if db is not None else default_cards()
    hit = _TABLES.get(id(db))
    if hit is None or hit[0] is not db:
        hit = _TABLES[id(db)] = (db, ActionTable(db.n_living, db.n_shadow), layout(db.n_living, db.n_shadow))
    return hit


_INDEX: dict[int, tuple[Layout, dict[str, np.ndarray]]] = {}
_DECODE: dict[int, tuple[ActionTable, list[tuple[str, int]]]] = {}


def _piece_index(lay: Layout) -> dict[str, np.ndarray]:
    """Observation indices of every named piece (seat pieces as (MAX_SEATS, size) arrays):
    ``obs[index[name]]`` equals ``named_view(obs, lay)[name]``, gathered in one step."""
    hit = _INDEX.get(id(lay))
    if hit is None or hit[0] is not lay:
        idx = {}
        for p in lay.pieces:
            sl = lay.slice(p.name, 0)
            if p.scope == GLOBAL:
                idx[p.name] = np.arange(sl.start, sl.stop)
            else:
                idx[p.name] = sl.start + lay.seat_size * np.arange(MAX_SEATS)[:, None] + np.arange(p.size)[None, :]
        hit = _INDEX[id(lay)] = (lay, idx)
    return hit[1]


def _decoded(at: ActionTable) -> list[tuple[str, int]]:
    """``at.decode(a)`` for every action ``a``, computed once per table."""
    hit = _DECODE.get(id(at))
    if hit is None or hit[0] is not at:
        hit = _DECODE[id(at)] = (at, [at.decode(a) for a in range(at.size)])
    return hit[1]


def _count(x: np.ndarray, scale: float) -> np.ndarray:
    return np.rint(np.asarray(x, dtype=np.float64) * scale).astype(np.int64)


@dataclass
class SeatInfo:
    """Public facts about one seat this round (``rel``: seats clockwise from the viewer)."""

    rel: int
    alive: bool
    hp_frac: float  # HP / start HP
    hp: int  # HP, assuming the start HP of ``SeatView.start_hp``
    hand_size: int
    shadow_hand_size: int
    first_player: bool
    acted: bool  # has taken its turn this round
    actor: bool  # makes the next decision
    turn_pos: int  # position in this round's turn order (0 = first)
    acquired: str | None  # "deck", "market" or None (this round's acquisition)
    face_down: bool  # its card is on the table face-down
    played: int  # design id on the table, -1 if none or hidden (face-down, not mine)
    target: int  # relative seat its card targets, -1 if none
    attached: dict[int, int]  # Shadow design id -> count attached this round
    last_damage: int
    last_score: int

    @property
    def has_card(self) -> bool:
        """A card (face-up or face-down) is on the table for this seat."""
        return self.played >= 0 or self.face_down

    @property
    def attached_list(self) -> list[int]:
        return [s for s, n in sorted(self.attached.items()) for _ in range(n)]


@dataclass
class SeatView:
    """A seat's structured view of one decision (see the module docstring)."""

    num_players: int
    phase: str
    is_actor: bool
    round_frac: float
    rule: str  # active rule change: none, low_tide, earthquake, cull
    deck_frac: float
    shadow_deck_frac: float
    discard: np.ndarray  # (DL,) Living discard count per design
    market: list[int]  # design per slot (MAX_MARKET slots), -1 empty / absent
    hand: dict[int, int]  # my hand: design id -> count
    shadow_hand: dict[int, int]  # my Shadow hand: design id -> count
    pending_card: int  # my card whose choice is pending (-1 none)
    pending_shadow: int  # my Shadow card awaiting a victim (-1 none)
    epilogue: bool
    seats: list[SeatInfo]  # relative seats 0..num_players-1 (0 = me)
    legal: list[tuple[int, str, int]]  # (action, kind, argument) of every legal action
    start_hp: int
    db: CardDB = field(repr=False)
    actions: ActionTable = field(repr=False)

    # ------------------------------------------------------------------ decoding
    @classmethod
    def from_obs(cls, obs: np.ndarray, mask: np.ndarray, db: CardDB | None = None,
                 start_hp: int | None = None) -> "SeatView":
        db, at, lay = tables(db)
        o = np.asarray(obs, dtype=np.float32)
        v = {name: o[ix] for name, ix in _piece_index(lay).items()}
        P = int(np.argmax(v["num_players"])) + 2
        hp0 = start_hp if start_hp is not None else default_start_hp(P)
        DL = db.n_living
        market = []
        for k in range(len(v["market"]) // DL):
            row = v["market"][k * DL:(k + 1) * DL]
            market.append(int(np.argmax(row)) if row.max() > 0.5 else -1)
        hand_c = _count(v["hand"], 3)
        shand_c = _count(v["shadow_hand"], 3)
        seats = []
        for k in range(P):
            played = v["played"][k]
            tgt = v["target"][k]
            acq = v["acquired"][k]
            att = _count(v["attached"][k], 3)
            hpf = float(v["hp"][k, 0])
            seats.append(SeatInfo(
                rel=k,
                alive=bool(v["alive"][k, 0] > 0.5),
                hp_frac=hpf,
                hp=int(round(hpf * hp0)),
                hand_size=int(round(float(v["hand_size"][k, 0]) * 10)),
                shadow_hand_size=int(round(float(v["shadow_hand_size"][k, 0]) * 3)),
                first_player=bool(v["first_player"][k, 0] > 0.5),
                acted=bool(v["acted"][k, 0] > 0.5),
                actor=bool(v["actor"][k, 0] > 0.5),
                turn_pos=int(round(float(v["turn_position"][k, 0]) * (P - 1))),
                acquired="deck" if acq[0] > 0.5 else ("market" if acq[1] > 0.5 else None),
                face_down=bool(v["face_down"][k, 0] > 0.5),
                played=int(np.argmax(played)) if played.max() > 0.5 else -1,
                target=int(np.argmax(tgt)) if tgt.max() > 0.5 else -1,
                attached={int(s): int(n) for s, n in enumerate(att) if n > 0},
                last_damage=int(round(float(v["last_damage"][k, 0]))),
                last_score=int(round(float(v["last_score"][k, 0]) * 10)),
            ))
        m = np.asarray(mask, dtype=bool)
        dec = _decoded(at)
        legal = [(int(a), *dec[a]) for a in np.flatnonzero(m)]
        pc, ps = v["pending_card"], v["pending_shadow"]
        return cls(
            num_players=P,
            phase=PHASE_NAMES[int(np.argmax(v["phase"]))],
            is_actor=bool(v["is_actor"][0] > 0.5),
            round_frac=float(v["round"][0]),
            rule=RULE_NAMES[int(np.argmax(v["rule"]))],
            deck_frac=float(v["deck_size"][0]),
            shadow_deck_frac=float(v["shadow_deck_size"][0]),
            discard=_count(v["discard"], 3),
            market=market,
            hand={int(d): int(n) for d, n in enumerate(hand_c) if n > 0},
            shadow_hand={int(s): int(n) for s, n in enumerate(shand_c) if n > 0},
            pending_card=int(np.argmax(pc)) if pc.max() > 0.5 else -1,
            pending_shadow=int(np.argmax(ps)) if ps.max() > 0.5 else -1,
            epilogue=bool(v["epilogue"][0] > 0.5),
            seats=seats,
            legal=legal,
            start_hp=hp0,
            db=db,
            actions=at,
        )

    # ------------------------------------------------------------------ queries
    @property
    def me(self) -> SeatInfo:
        return self.seats[0]

    @property
    def num_ghosts(self) -> int:
        return sum(1 for s in self.seats if not s.alive)

    def living(self, include_me: bool = True) -> list[SeatInfo]:
        return [s for s in self.seats if s.alive and (include_me or s.rel != 0)]

    def yet_to_play(self) -> list[SeatInfo]:
        """Other living seats that have not taken their turn this round."""
        return [s for s in self.seats if s.alive and not s.acted and s.rel != 0]

    def legal_kinds(self) -> set[str]:
        return {k for _, k, _ in self.legal}

    def legal_of(self, kind: str) -> list[tuple[int, int]]:
        """(action, argument) of the legal actions of one kind."""
        return [(a, arg) for a, k, arg in self.legal if k == kind]

    def hand_list(self) -> list[int]:
        return [d for d, n in sorted(self.hand.items()) for _ in range(n)]

    def value(self, design: int) -> int:
        return int(self.db.living_value[design])

    def living_name(self, design: int) -> str:
        return self.db.living[design].name

    def unseen_counts(self) -> np.ndarray:
        """Living cards per design I cannot see (in decks or other hands, or face-down)."""
        c = self.db.living_copies.astype(np.int64) - self.discard
        for d, n in self.hand.items():
            c[d] -= n
        for d in self.market:
            if d >= 0:
                c[d] -= 1
        for s in self.seats:
            if s.played >= 0:
                c[s.played] -= 1
        return np.maximum(c, 0)

    def leader_key(self, s: SeatInfo) -> tuple:
        """How strong a seat looks: HP, then cards in hand, then holding the token."""
        return (s.hp_frac, s.hand_size, s.first_player)


__all__ = ["SeatInfo", "SeatView", "default_start_hp", "tables", "MAX_SEATS"]
