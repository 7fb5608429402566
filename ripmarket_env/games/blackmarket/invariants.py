"""The rulings' invariants of a Black Market game (BM-13), checked on an engine's row.

``check_game(engine, g, prev=None)`` returns the violated invariants (empty: all hold);
``prev`` (a copy of the row before the latest step) adds the checks of what the step
did: purchases were legal and paid, dice and spent marks only move the right way.
"""

from __future__ import annotations

import numpy as np

from ripmarket_env.core.engine import kernel_view
from ripmarket_env.core.hidden import redeal_hidden
from ripmarket_env.games.blackmarket.events import decode
from ripmarket_env.games.blackmarket.state import N_SLOTS, NUM_ACTIONS


_TABLES: dict = {}


def _table(db, name, fn):
    key = (db.digest, name)
    if key not in _TABLES:
        _TABLES[key] = fn()
    return _TABLES[key]


def _copies(db):
    return _table(db, "copies", lambda: np.array([c.copies for c in db.point], np.int64))


def _points(db):
    return _table(db, "points", lambda: np.array([c.points for c in db.point], np.int64))


def _one_time(db):
    return _table(db, "one_time", lambda: np.array([c.one_time and c.primitive is not None for c in db.point]))


def check_game(engine, g: int = 0, prev=None) -> list[str]:
    db = engine.cards
    r = engine.state[g]
    rules = engine.rules
    P = engine.num_players
    D = db.n_designs
    tgt = rules.target_points
    bad: list[str] = []
    # Point Cards: each in exactly one place, counts per design equal copies
    pd = int(r["pdeck_n"])
    deck = r["pdeck"][:pd].astype(np.int64)
    if deck.size and (deck.min() < 0 or deck.max() >= D):
        bad.append(f"point deck holds a bad design {deck.tolist()}")
        deck = deck[(deck >= 0) & (deck < D)]
    count = np.bincount(deck, minlength=D)[:D]
    if np.any(r["pdeck"][pd:] != -1):
        bad.append("point deck has cards past its size")
    mc = r["map_card"].astype(np.int64)
    on_map = mc[mc >= 0]
    count = count + np.bincount(on_map, minlength=D)[:D]
    if pd > 0 and on_map.size < 6:
        bad.append(f"a slot is empty while the Point deck holds {pd} cards")
    if np.any((r["map_down"] != 0) & (r["map_down"] != 1)) or np.any((r["map_side"] != 0) & (r["map_side"] != 1)):
        bad.append("a map card has no valid face/side")
    owned = r["owned"][:P].astype(np.int64)
    count = count + owned.sum(axis=0)
    copies = _copies(db)
    if not np.array_equal(count, copies):
        bad.append(f"Point Cards not conserved: {count.tolist()} != {copies.tolist()}")
    # Hand Cards
    hd = int(r["hdeck_n"])
    hdeck = r["hdeck"][:hd].astype(np.int64)
    if hdeck.size and (hdeck.min() < 0 or hdeck.max() >= 3):
        bad.append(f"hand deck holds a bad kind {hdeck.tolist()}")
        hdeck = hdeck[(hdeck >= 0) & (hdeck < 3)]
    hand = r["hand"][:P].astype(np.int64)
    hc = np.bincount(hdeck, minlength=3)[:3] + r["hdisc"] + hand.sum(axis=0)
    if not np.array_equal(hc, db.hand_copies()):
        bad.append(f"Hand Cards not conserved: {hc.tolist()} != {db.hand_copies().tolist()}")
    if np.any(hand < 0) or np.any(r["hdisc"] < 0) or np.any(owned < 0):
        bad.append("a negative count")
    hn = r["hand_n"][:P].astype(np.int64)
    for q in np.flatnonzero(hn != hand.sum(axis=1)):
        bad.append(f"seat {q}: hand_n {int(hn[q])} != its cards {int(hand[q].sum())}")
    if rules.hand_limit:
        for q in np.flatnonzero(hn > rules.hand_limit):
            bad.append(f"seat {q}: hand {int(hn[q])} above the limit {rules.hand_limit}")
    pts = owned @ _points(db)
    for q in np.flatnonzero(pts != r["points"][:P]):
        bad.append(f"seat {q}: points {int(r['points'][q])} != score pile {int(pts[q])}")
    spent = r["spent"][:P].astype(np.int64)
    wrong = (spent > 0) & ~((_one_time(db)[None, :]) & (spent <= owned))
    for q, d in zip(*np.nonzero(wrong)):
        bad.append(f"seat {q}: spent mark on {db.point[d].name} it may not have")
    tp = int(r["turn_player"])
    for d in range(D):
        if int(r["used"][d]) > int(r["owned"][tp, d]):
            bad.append(f"{db.point[d].name} used {int(r['used'][d])} times with {int(r['owned'][tp, d])} owned")
    done = bool(r["done"])
    sides = engine.side_points(g)
    if not done:
        if rules.teams and rules.team_target == "side_total" and max(sides) >= tgt:
            bad.append(f"a side stands at {max(sides)} >= target {tgt} in a live game")
        if (not rules.teams or rules.team_target == "any_player") and int(r["points"][:P].max()) >= tgt:
            bad.append("a player stands at the target in a live game")
        n = int(r["mask"].sum())
        if n == 0 or n != int(r["n_legal"]):
            bad.append(f"live game with {n} legal actions (n_legal {int(r['n_legal'])})")
        if not 2 <= int(r["n_dice"]) <= 3:
            bad.append(f"{int(r['n_dice'])} dice this turn")
        for i in range(int(r["n_dice"])):
            if not 1 <= int(r["dice"][i]) <= 6:
                bad.append(f"die {i} shows {int(r['dice'][i])}")
        if int(r["phase"]) == 0 and not any(r["dice_used"][i] == 0 for i in range(int(r["n_dice"]))):
            bad.append("act phase with no unused die")
        if int(r["actor"]) != tp:
            bad.append("the actor is not the turn player")
        if int(r["turn"]) >= rules.turns_cap:
            bad.append("a live game past max_turns")
    else:
        if int(r["mask"].sum()) != 0:
            bad.append("a finished game offers actions")
        s = float(r["final_rewards"][:P].sum())
        if abs(s) > 1e-4:
            bad.append(f"rewards sum to {s}, not zero")
        w = [q for q in range(P) if r["winners"][q]]
        if int(r["end_reason"]) == 0:
            if rules.teams:
                if not w or len({q % 2 for q in w}) != 1:
                    bad.append(f"target reached but the winners {w} are not one side")
                elif rules.team_target == "side_total" and sides[w[0] % 2] < tgt:
                    bad.append("the winning side is below the target")
            elif len(w) != 1 or int(r["points"][w[0]]) < tgt:
                bad.append(f"ffa target win with winners {w}")
    if r["mask"].shape[0] != NUM_ACTIONS:
        bad.append("mask has the wrong size")
    if prev is not None:
        bad += _check_step(engine, g, prev)
    return bad


def _check_step(engine, g, prev) -> list[str]:
    db = engine.cards
    r = engine.state[g]
    bad = []
    P = engine.num_players
    for q in range(P):
        for d in range(db.n_designs):
            if r["spent"][q, d] < prev["spent"][q, d] and int(r["steps"]) > 0:
                bad.append(f"seat {q}: a spent mark on {db.point[d].name} was cleared")
    for q in range(P):
        if int(r["points"][q]) < int(prev["points"][q]):
            bad.append(f"seat {q} lost points")
    for ev in decode(engine, g):
        if ev.kind != "buy":
            continue
        s = ev.a - 1
        d, col, cost, flags = ev.b % 32, (ev.b // 32) % 2, (ev.b // 64) % 8, ev.b // 512
        if int(prev["map_card"][s]) != d:
            bad.append(f"bought {db.point[d].name} from slot {s + 1}, which held design {int(prev['map_card'][s])}")
            continue
        other = int(prev["map_side"][s]) != ev.seat % 2
        down = bool(prev["map_down"][s])
        if other and not flags & 1:
            bad.append(f"bought a card facing the other side without Smuggler (slot {s + 1})")
        if down and not flags & 2:
            bad.append(f"bought a face-down card without Crowbar (slot {s + 1})")
        if cost != (2 if flags & 4 else 3):
            bad.append(f"paid {cost} cards (Fence used: {bool(flags & 4)})")
        colour = db.point[d].colour
        if colour != "dual" and ("red", "black").index(colour) != col:
            bad.append(f"paid {('Red', 'Black')[col]} for a {colour} card")
        used = [i for i in range(int(prev["n_dice"])) if prev["dice_used"][i] == 0 and int(prev["dice"][i]) == s + 1]
        if not used and int(prev["phase"]) == 0:
            bad.append(f"a purchase on slot {s + 1} with no unused die showing {s + 1}")
    return bad


def scramble_hidden(engine, g: int, viewer: int, rng: np.random.Generator):
    """A one-game copy of game g in which everything seat ``viewer`` may not see is redrawn
    (BM-7.1): the other hands' cards and the Hand deck (sizes kept), the Point deck's order
    together with any unseen map card, and the game's RNG state; the legal actions are
    those of the redealt hands. The conformance suite
    checks that the viewer's observation, mask and render do not change."""
    twin = engine.clone([g])
    r = twin.state[0]
    P = engine.num_players
    others = [q for q in range(P) if q != viewer]
    rest = redeal_hidden(rng, r["hdeck"][: int(r["hdeck_n"])], r["hand"], r["hand_n"], others)
    r["hdeck"][: len(rest)] = rest
    unseen_slots = [s for s in range(6) if r["map_card"][s] >= 0 and not r["map_seen"][s]]
    cards = [int(d) for d in r["pdeck"][: int(r["pdeck_n"])]] + [int(r["map_card"][s]) for s in unseen_slots]
    rng.shuffle(cards)
    for s in unseen_slots:
        r["map_card"][s] = cards.pop()
    r["pdeck"][: len(cards)] = cards
    r["rng"] = np.uint64(rng.integers(1 << 63))
    from ripmarket_env.games.blackmarket.kernels import compute_mask

    compute_mask(kernel_view(twin.state)[0], kernel_view(twin.tables)[0], twin.cfg)  # the redealt hands' actions
    return twin
