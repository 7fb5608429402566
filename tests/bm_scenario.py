"""Hand-built Black Market positions for the rules tests.

``table(P, **rules)`` resets a one-game engine; ``setup(eng, ...)`` then writes hands,
map cards, dice, score piles and the turn player into the row, keeping every Hand Card
and Point Card in exactly one place (they move from/to the decks), and recomputes the
legal actions.
"""

from __future__ import annotations

import numpy as np

from ripmarket_env.core.engine import kernel_view
from ripmarket_env.games.blackmarket import Engine, RulesConfig
from ripmarket_env.games.blackmarket import actions as A
from ripmarket_env.games.blackmarket import kernels as K

D = {name: i for i, name in enumerate([
    "Red 1", "Red 2", "Red 3", "Black 1", "Black 2", "Black 3", "Dual 1", "Dual 2", "Loaded Dice", "Fixer",
    "Third Die", "Heist", "Smuggler", "Crowbar", "Fence", "Informant"])}


def table(P=2, seed=0, **rules) -> Engine:
    eng = Engine(RulesConfig(num_players=P, **rules), 1)
    eng.reset([seed])
    return eng


def _return_all(r, P):
    """Every Hand Card to the Hand deck, every Point Card to the Point deck (the map and
    score piles empty)."""
    hand = np.array(r["hand"][:P].sum(axis=0) + r["hdisc"], np.int64)
    for k in range(3):
        n = int(hand[k])
        cur = int(r["hdeck_n"])
        r["hdeck"][cur:cur + n] = k
        r["hdeck_n"] = cur + n
    r["hand"][:] = 0
    r["hand_n"][:] = 0
    r["hdisc"][:] = 0
    for s in range(6):
        d = int(r["map_card"][s])
        if d >= 0:
            r["pdeck"][int(r["pdeck_n"])] = d
            r["pdeck_n"] += 1
        r["map_card"][s] = -1
    for q in range(P):
        for d in range(r["owned"].shape[1]):
            for _ in range(int(r["owned"][q, d])):
                r["pdeck"][int(r["pdeck_n"])] = d
                r["pdeck_n"] += 1
    r["owned"][:] = 0
    r["points"][:] = 0
    r["spent"][:] = 0


def _take_hand(r, k):
    n = int(r["hdeck_n"])
    idx = [i for i in range(n) if r["hdeck"][i] == k]
    if not idx:
        raise AssertionError("scenario: no such Hand Card left")
    i = idx[-1]
    r["hdeck"][i:n - 1] = r["hdeck"][i + 1:n].copy()
    r["hdeck"][n - 1] = -1
    r["hdeck_n"] = n - 1


def _take_point(r, d):
    n = int(r["pdeck_n"])
    idx = [i for i in range(n) if r["pdeck"][i] == d]
    if not idx:
        raise AssertionError(f"scenario: no Point Card {d} left")
    i = idx[0]
    r["pdeck"][i:n - 1] = r["pdeck"][i + 1:n].copy()
    r["pdeck"][n - 1] = -1
    r["pdeck_n"] = n - 1


def setup(eng, hands=None, slots=None, dice=(1, 2), turn_player=0, owned=None, empty_deck=False,
          top=None, discard=None):
    """``hands``: {seat: (red, black, flip)} (other seats empty); ``slots``: up to six
    (design name or None, face_down, side) for slots 1..6 (missing: a filler from the
    Point deck, face-down and facing side B, out of the way); ``owned``:
    {seat: [design names]}; ``empty_deck``: the rest of the Point deck leaves the game
    (conservation no longer holds); ``top``: design names put on the Point deck, the last
    on top; ``discard``: (red, black, flip) in the Hand discard."""
    r = eng.state[0]
    P = eng.num_players
    _return_all(r, P)
    for q, (red, black, flip) in (hands or {}).items():
        for k, n in enumerate((red, black, flip)):
            for _ in range(n):
                _take_hand(r, k)
            r["hand"][q, k] = n
        r["hand_n"][q] = red + black + flip
    for k, n in enumerate(discard or (0, 0, 0)):
        for _ in range(n):
            _take_hand(r, k)
        r["hdisc"][k] = n
    for q, names in (owned or {}).items():
        for name in names:
            d = D[name]
            _take_point(r, d)
            r["owned"][q, d] += 1
            r["points"][q] += eng.cards.point[d].points
    slots = list(slots or [])
    for s in range(6):
        if s >= len(slots):  # a filler: the Point deck's top card, face-down, facing side B
            n = int(r["pdeck_n"]) - 1
            r["map_card"][s] = r["pdeck"][n]
            r["pdeck"][n] = -1
            r["pdeck_n"] = n
            r["map_down"][s] = 1
            r["map_side"][s] = 1
            r["map_seen"][s] = 1
            continue
        name, down, side = slots[s] if slots[s] is not None else (None, 0, 0)
        if name is None:
            r["map_card"][s] = -1
            continue
        d = D[name]
        _take_point(r, d)
        r["map_card"][s] = d
        r["map_down"][s] = down
        r["map_side"][s] = side
        r["map_seen"][s] = 1
    if empty_deck:
        r["pdeck_n"] = 0
        r["pdeck"][:] = -1
    for name in top or []:
        _take_point(r, D[name])
        r["pdeck"][int(r["pdeck_n"])] = D[name]
        r["pdeck_n"] += 1
    r["turn_player"] = turn_player
    r["actor"] = turn_player
    r["phase"] = 0
    r["n_dice"] = len(dice)
    r["dice"][:] = 0
    r["dice_used"][:] = 0
    r["dice"][: len(dice)] = dice
    r["used"][:] = 0
    r["bought"][:] = 0
    r["pend"] = -1
    r["pend_die"] = -1
    r["ev_n"] = 0
    K.refresh(kernel_view(eng.state), kernel_view(eng.tables), eng.cfg, 0)
    return eng


def refresh(eng):
    K.refresh(kernel_view(eng.state), kernel_view(eng.tables), eng.cfg, 0)


def act(eng, kind, *args):
    a = A.encode(kind, *args)
    eng.step([a])
    return eng.events(0)


def legal(eng, kind=None):
    out = []
    for a in eng.legal_actions(0):
        k, args = A.decode(a)
        if kind is None or k == kind:
            out.append((k, *args))
    return out
