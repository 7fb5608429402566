"""The rulings' invariants of one game (``check_game``): a list of violations, empty when
the state is sound. Used by the fuzz, hypothesis and soak tests and the conformance suite."""

from __future__ import annotations

import numpy as np

from ripmarket_env.core.engine import kernel_view
from ripmarket_env.core.hidden import redeal_hidden
from ripmarket_env.games.runemarket.config import C_EXACT, C_MAX_TURNS, C_MKT, C_NUMBER_COST, C_REMOVAL
from ripmarket_env.games.runemarket.state import I_RUNE_BLUE, I_RUNE_RED, N_DESIGNS, PH_OVER, PH_PAYMENT


def check_game(engine, g: int = 0, prev=None) -> list[str]:
    """Violations in game ``g``; ``prev`` (a copy of the row before the latest step) adds
    the checks across a step (a locked Shelter's Runes, removed Bandits)."""
    r = engine.state[g]
    P = engine.num_players
    cfg = engine.cfg
    out: list[str] = []
    seats = slice(0, P)
    for col, name in ((0, "Red"), (1, "Blue")):
        total = int(r["market"][col]) + int(r["loose"][seats, col].sum()) + int(r["inside"][seats, col].sum())
        if total != int(cfg[C_MKT + col]):
            out.append(f"{name} Runes: {total} in play, expected {int(cfg[C_MKT + col])}")
        if (r["loose"][seats, col] < 0).any() or (r["inside"][seats, col] < 0).any() or r["market"][col] < 0:
            out.append(f"{name} Runes: a negative count")
    boats = int(r["market_boats"]) + int(r["boat"][seats].sum())
    if boats != int(cfg[C_MKT + 2]):
        out.append(f"Boat Shelters: {boats} in play, expected {int(cfg[C_MKT + 2])}")
    on = int((r["bandit"][seats] >= 0).sum())
    bandits = int(r["market_bandits"]) + on + int(r["removed_bandits"])
    if bandits != int(cfg[C_MKT + 3]):
        out.append(f"Bandits: {bandits} (Market + Shelters + removed), expected {int(cfg[C_MKT + 3])}")
    for q in range(P):
        for col in range(2):
            sh = bool(r["shelter"][q, col])
            owner = int(r["bandit"][q, col])
            paid = int(r["bandit_paid"][q, col])
            if not sh and (r["boat"][q, col] or owner >= 0 or r["inside"][q, col]):
                out.append(f"P{q} {col}: a Boat, Bandit or Rune inside a missing Shelter")
            if owner == q:
                out.append(f"P{q} {col}: a Bandit on its owner's own Shelter")
            if owner < 0 and paid != 0:
                out.append(f"P{q} {col}: {paid} paid toward no Bandit")
            if owner >= 0 and not 0 <= paid < int(cfg[C_REMOVAL]):
                out.append(f"P{q} {col}: paid {paid} toward a Bandit that should be gone")
            if sh and owner < 0 and r["loose"][q, col] > 0:
                out.append(f"P{q} {col}: loose Runes beside an unlocked Shelter of their colour")
            if prev is not None and owner >= 0 and int(prev["bandit"][q, col]) == owner \
                    and bool(prev["shelter"][q, col]) and prev["inside"][q, col] != r["inside"][q, col]:
                out.append(f"P{q} {col}: a locked Shelter's Runes changed")
    if prev is not None and int(r["removed_bandits"]) < int(prev["removed_bandits"]):
        out.append("a removed Bandit came back")
    # Cards (RM-1.3): every card in exactly one place.
    counts = np.zeros(N_DESIGNS, np.int64)
    dn = int(r["deck_n"])
    for d in r["deck"][:dn]:
        if not 0 <= d < N_DESIGNS:
            out.append(f"draw pile holds a bad card id {int(d)}")
        else:
            counts[d] += 1
    if (r["deck"][dn:] != -1).any():
        out.append("draw pile: entries past its size")
    counts += r["discard"].astype(np.int64)
    counts += r["hand"][seats].astype(np.int64).sum(axis=0)
    counts[11] += int(r["shelter"][seats, 0].sum())
    counts[12] += int(r["shelter"][seats, 1].sum())
    if not np.array_equal(counts, engine.cards.copies):
        out.append(f"cards per design {counts.tolist()} != composition {engine.cards.copies.tolist()}")
    if int(r["discard_n"]) != int(r["discard"].sum()):
        out.append("discard_n disagrees with the discard pile")
    for q in range(P):
        if int(r["hand_n"][q]) != int(r["hand"][q].sum()):
            out.append(f"P{q}: hand_n disagrees with the hand")
    # Game end (RM-7.1, RM-7.3), mask (RM-8.1).
    empty = int(r["market"][0]) == 0 and int(r["market"][1]) == 0
    capped = int(r["total_turns"]) >= int(cfg[C_MAX_TURNS])
    if bool(r["done"]):
        if not (empty or capped):
            out.append("the game ended with Runes in the Market before the cap")
        if int(r["phase"]) != PH_OVER or r["mask"].any():
            out.append("a finished game offers actions")
        if abs(float(r["final_rewards"][seats].sum())) > 1e-5:
            out.append(f"rewards sum to {float(r['final_rewards'][seats].sum())}, not 0")
    else:
        if empty:
            out.append("the Market is empty but the game goes on")
        n = int(r["mask"].sum())
        if n == 0:
            out.append("a live game offers no action")
        if n != int(r["n_legal"]):
            out.append("n_legal disagrees with the mask")
        if not 0 <= int(r["actor"]) < P:
            out.append("the actor is not a seat")
    return out


def _finishes(r, cfg) -> bool:
    """The acting seat's redealt hand agrees with what the table saw it commit to: it has a
    legal action, and a purchase under way (RM-4.4, RM-4.5) can still be paid."""
    if int(r["n_legal"]) == 0:
        return False
    if int(r["phase"]) != PH_PAYMENT:
        return True
    p = int(r["turn_player"])
    total = int(r["pay_sum"]) + sum(int(r["hand"][p, d]) * (d + 1) for d in range(10))
    if int(r["intent"]) in (I_RUNE_RED, I_RUNE_BLUE):
        return bool(cfg[C_EXACT]) or total >= 5  # exact: a legal card keeps a total reachable
    return total >= int(cfg[C_NUMBER_COST])


def scramble_hidden(engine, g: int, viewer: int, rng: np.random.Generator, tries: int = 50):
    """A one-game copy of game ``g`` in which everything ``viewer`` may not see is redealt
    (RM-8.4): the other seats' hands (same sizes), the order of the draw pile and the
    game's RNG. Every card stays somewhere exactly once; the legal actions are those of the
    redealt hands, and the acting seat's hand still fits what it did in view of the table
    (a purchase under way can be paid; after ``tries`` redeals that do not, the hands are
    left as they were). The spec's ``scramble_hidden`` hook: the conformance suite checks
    that ``viewer``'s observation, mask and render do not change."""
    from ripmarket_env.games.runemarket.kernels import fill_mask

    for _ in range(tries):
        twin = engine.clone([g])
        s = twin.state
        P = engine.num_players
        others = [q for q in range(P) if q != viewer]
        deck_n = int(s["deck_n"][0])
        rest = redeal_hidden(rng, s["deck"][0, :deck_n], s["hand"][0], s["hand_n"][0], others)
        if len(rest) != deck_n:  # pragma: no cover - hand sizes and the pile add up by construction
            raise AssertionError("scramble_hidden lost a card")
        s["deck"][0, :deck_n] = rest
        s["rng"][0] = int(rng.integers(0, 2**63))
        fill_mask(kernel_view(s)[0], twin.cfg)  # the legal actions of the redealt hands
        if _finishes(s[0], twin.cfg):
            return twin
    twin = engine.clone([g])
    twin.state["rng"][0] = int(rng.integers(0, 2**63))
    return twin
