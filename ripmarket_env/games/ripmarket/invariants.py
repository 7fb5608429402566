"""Invariant checker: what must hold of every game state the engine exposes.

``check_game(engine, g)`` returns the list of violated invariants of game ``g`` (empty
when the state is sound); each message starts with the rule it breaks (``docs/RULES.md``).
Pass ``prev`` (a copy of the game's record before the last step) to also check the
invariants of the transition. ``check_record`` does the same for a bare record, and
``conservation_errors`` is a vectorized card-conservation check over a whole batch (for
the soak and the CLI).

Invariants checked (state):

- R-2.3 every one of the 96 cards is in exactly one place: Living Deck (``deck[:deck_n]``)
  + Living discard + Market + hands + table == copies per design; Shadow Deck + Shadow
  discard + Shadow hands + attached == copies per design; pile counters match the piles.
- R-6.3 HP is never negative (nor above the start HP, R-2.5: nothing heals); R-6.1 a seat
  has 0 HP exactly when it is a Ghost, and Ghosts carry an elimination record.
- ``hand_n`` / ``shadow_n`` equal the sums of the hand counts; R-5.7 Ghosts hold no
  Living cards; R-1.3/R-6.1 living players hold no Shadow cards.
- R-10.1/R-10.3 an empty deck means an empty discard, at a decision and at the game's end.
- R-12.1 a decision offered to an agent has at least two legal options, unless only the
  seat's hidden cards make it single (a play or replacement from a hand of two or more
  cards of one design: asked all the same, ``kernels.hidden_forced``); R-12.2 the mask
  is exactly the legal set re-derived here from the rules (R-4.1, R-4.2, R-4.4, R-2.7,
  R-5.2, R-5.4), in the action ranges of the decision's kind.
- R-3.1/R-3.4 the turn order is a permutation of the seats and the actor is the seat
  whose turn it is; R-5.5/R-8.6 a Ghost never holds the First Player token.
- R-9.3 and R-2.5: every resolved round costs at least one HP except a round sudden death
  spared (R-9.2, counted in ``spared_rounds``) and the grace round (R-8.2), so ``round +
  total HP <= players x start HP + spared_rounds (+ 1 after the grace round)`` and the ``max_rounds`` cap is never reached when it exceeds that
  bound.
- R-9.1/R-9.2 a finished game has winners (the last living player, or, with
  ``no_survivor="share_win"`` only, those who died last); R-11.1/R-11.2 rewards follow
  the reward mode and sum to zero; R-11.3 no reward is paid before the end.

Invariants checked (transition, with ``prev``):

- R-6.1 the set of Ghosts only grows; R-2.5 HP never rises; the round counter never
  goes back; a finished game ignores further actions.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from ripmarket_env.core.engine import kernel_view
from ripmarket_env.core.hidden import redeal_hidden
from ripmarket_env.games.ripmarket.cards import registry as R
from ripmarket_env.games.ripmarket.actions import ActionTable
from ripmarket_env.games.ripmarket.config import deflection_may_name
from ripmarket_env.games.ripmarket.state import (
    PH_ACQUIRE,
    PH_GHOST,
    PH_GHOST_TARGET,
    PH_MARKET,
    PH_OVER,
    PH_PLAY,
    PH_REPLACE,
    PH_TARGET,
)

_LIVING_PHASES = (PH_ACQUIRE, PH_PLAY, PH_TARGET, PH_MARKET, PH_REPLACE)
_GHOST_PHASES = (PH_GHOST, PH_GHOST_TARGET)
REWARD_TOL = 1e-5
_ATT_RANGE = np.arange(64)[None, :]


@lru_cache(maxsize=None)
def _packed(dtype: np.dtype) -> np.dtype:
    return np.dtype({"names": list(dtype.names), "formats": [dtype.fields[n][0] for n in dtype.names]})


def state_bytes(x) -> bytes:
    """The bytes of a state array or one game's record, fields only.

    The state dtype is aligned, so records hold padding bytes whose content is not part
    of the game (a fancy-indexed copy such as ``Engine.clone`` leaves them arbitrary);
    compare games with this, not ``tobytes``.
    """
    a = np.asarray(x)
    return a.astype(_packed(a.dtype)).tobytes()


def check_game(engine, g: int, prev=None) -> list[str]:
    """Violated invariants of game ``g`` of ``engine`` (empty list: all hold).

    ``prev``: optional copy of the game's record before the last step
    (``engine.state[g].copy()``), to check the transition too.
    """
    return check_record(engine.state[g], engine.cards, engine.rules, prev=prev)


def _diff_text(total: np.ndarray, copies: np.ndarray, names) -> str:
    bad = np.flatnonzero(total != copies)
    return ", ".join(f"{names[d]} {int(total[d])} of {int(copies[d])}" for d in bad[:6])


@lru_cache(maxsize=None)
def _action_ranges(n_living: int, n_shadow: int):
    t = ActionTable(n_living, n_shadow)
    return t.size, t.ranges


def expected_mask(r, db, rules) -> np.ndarray:
    """The legal set of the record's current decision, derived from the rules text."""
    size, rg = _action_ranges(db.n_living, db.n_shadow)
    P, M = rules.num_players, rules.market
    m = np.zeros(size, dtype=bool)
    ph, p = int(r["phase"]), int(r["actor"])
    alive = r["alive"][:P].astype(bool)
    hp = r["hp"][:P]
    acted = r["acted"][:P].astype(bool)
    market = r["market"]
    if ph == PH_ACQUIRE:
        deck_ok = int(r["deck_n"]) > 0 or int(r["discard_n"]) > 0
        m[rg["acquire_deck"].start] = deck_ok
        if int(r["hand_n"][p]) > 0 or not deck_ok:
            for k in range(M):
                m[rg["acquire_market"].start + k] = market[k] >= 0
    elif ph in (PH_PLAY, PH_REPLACE):
        m[rg["card"].start + np.flatnonzero(r["hand"][p] > 0)] = True
    elif ph == PH_TARGET:  # another living player (richer for damage_target;
        # for a Deflection, whom deflect_target allows, R-8.3)
        d, k = int(r["pend_card"]), int(r["pend_op"])
        richer = db.living_ops[d, k, 0] == R.BY_NAME["damage_target"].code
        deflect = db.living_ops[d, k, 0] == R.BY_NAME["deflect"].code
        for off in range(1, P):
            q = (p + off) % P
            m[rg["target"].start + off - 1] = (alive[q] and (not richer or hp[q] > hp[p]) and (
                not deflect or deflection_may_name(rules.deflect_target, hp[q], hp[p])))
    elif ph == PH_MARKET:  # a non-empty Market slot
        for k in range(M):
            m[rg["market_slot"].start + k] = market[k] >= 0
    elif ph == PH_GHOST:
        m[rg["pass"].start] = True
        if (alive & ~acted).any():
            m[rg["shadow"].start + np.flatnonzero(r["shadow_hand"][p] > 0)] = True
    elif ph == PH_GHOST_TARGET:  # a living player who has not yet taken their turn
        for off in range(1, P):
            q = (p + off) % P
            m[rg["target"].start + off - 1] = alive[q] and not acted[q]
    return m


_NZ = np.count_nonzero


def check_record(r, db, rules, prev=None) -> list[str]:
    """Violated invariants of one game record (see the module docstring)."""
    v: list[str] = []
    P, hp0, M = rules.num_players, rules.hp, rules.market
    DL, DS = db.n_living, db.n_shadow
    done = bool(r["done"])
    # int8 fields are summed with a wide accumulator (numpy sums small ints as int64)
    hand = r["hand"]
    hand_n = r["hand_n"]
    shand = r["shadow_hand"]
    shadow_n = r["shadow_n"]
    hp = r["hp"]
    alive = r["alive"] != 0
    played = r["played"]
    att, att_n = r["attached"], r["attached_n"]
    rnd = int(r["round_num"])

    # Seats past num_players are never used.
    if (_NZ(hand[P:]) + _NZ(hand_n[P:]) + _NZ(shand[P:]) + _NZ(shadow_n[P:]) + _NZ(hp[P:])
            + _NZ(alive[P:]) + _NZ(played[P:] + 1) + _NZ(att_n[P:])):
        v.append("R-1.1: a seat past num_players is in play or holds cards")

    # ---------------------------------------------------------------- Living cards
    deck = r["deck"]
    deck_n = int(r["deck_n"])
    if not 0 <= deck_n <= deck.shape[0]:
        v.append(f"R-2.3: deck_n={deck_n} outside 0..{deck.shape[0]}")
        deck_n = max(0, min(deck_n, deck.shape[0]))
    if _NZ(deck[deck_n:] + 1):
        v.append("R-2.3: Living Deck has cards past deck_n")
    market = r["market"]
    if _NZ(market[M:] + 1):
        v.append(f"R-1.5: a Market slot past market_size={M} holds a card")
    ids = np.concatenate((deck[:deck_n], market[:M], played[:P])).astype(np.int64)
    n_deck = deck_n
    if _NZ(ids >= DL) or _NZ(ids[:n_deck] < 0) or _NZ(ids < -1):
        v.append("R-2.3: an invalid Living design id in the deck, Market or table")
    discard = r["discard"]
    if _NZ(discard < 0) or _NZ(hand < 0):
        v.append("R-2.3: a negative card count in the Living discard or a hand")
    if int(r["discard_n"]) != int(discard.sum()):
        v.append(f"R-2.3: discard_n={int(r['discard_n'])} but the Living discard holds {int(discard.sum())}")
    hand_sum = hand.sum(axis=1)
    if _NZ(hand_n[:P] != hand_sum[:P]):
        v.append(f"hand_n {hand_n[:P].tolist()} but the hands hold {hand_sum[:P].tolist()} cards")
    total = np.bincount(ids[(ids >= 0) & (ids < DL)], minlength=DL) + discard + hand[:P].sum(axis=0)
    if _NZ(total != db.living_copies):
        v.append("R-2.3: Living cards not conserved: "
                 + _diff_text(total, db.living_copies, [d.name for d in db.living]))

    # ---------------------------------------------------------------- Shadow cards
    sdeck = r["shadow_deck"]
    sn = int(r["shadow_deck_n"])
    if not 0 <= sn <= sdeck.shape[0]:
        v.append(f"R-2.3: shadow_deck_n={sn} outside 0..{sdeck.shape[0]}")
        sn = max(0, min(sn, sdeck.shape[0]))
    if _NZ(sdeck[sn:] + 1):
        v.append("R-2.3: Shadow Deck has cards past shadow_deck_n")
    if _NZ((att_n < 0) | (att_n > att.shape[1])):
        v.append(f"R-2.3: attached_n {att_n.tolist()} out of range")
    in_att = _ATT_RANGE[:, : att.shape[1]] < att_n[:, None]
    if _NZ(att[~in_att] + 1):
        v.append("R-2.3: attached Shadow cards past attached_n")
    sids = np.concatenate((sdeck[:sn], att[in_att])).astype(np.int64)
    if _NZ(sids < 0) or _NZ(sids >= DS):
        v.append("R-2.3: an invalid Shadow design id in the Shadow Deck or attached")
    sdisc = r["shadow_discard"]
    if _NZ(sdisc < 0) or _NZ(shand < 0):
        v.append("R-2.3: a negative card count in the Shadow discard or a Shadow hand")
    if int(r["shadow_discard_n"]) != int(sdisc.sum()):
        v.append("R-2.3: shadow_discard_n does not match the Shadow discard")
    ssum = shand.sum(axis=1)
    if _NZ(shadow_n[:P] != ssum[:P]):
        v.append(f"shadow_n {shadow_n[:P].tolist()} but the Shadow hands hold {ssum[:P].tolist()} cards")
    stotal = np.bincount(sids[(sids >= 0) & (sids < DS)], minlength=DS) + sdisc + shand[:P].sum(axis=0)
    if _NZ(stotal != db.shadow_copies):
        v.append("R-2.3: Shadow cards not conserved: "
                 + _diff_text(stotal, db.shadow_copies, [d.name for d in db.shadow]))

    # ---------------------------------------------------------------- HP, Ghosts
    hpP, aliveP = hp[:P], alive[:P]
    if _NZ(hpP < 0):
        v.append(f"R-6.3: negative HP {hpP.tolist()}")
    if _NZ(hpP > hp0):
        v.append(f"R-2.5: HP above the start HP {hp0}: {hpP.tolist()}")
    if _NZ(aliveP != (hpP > 0)):
        v.append(f"R-6.1: alive {aliveP.astype(int).tolist()} does not match HP>0 {hpP.tolist()}")
    elim, dround = r["elim"][:P], r["death_round"][:P]
    ghosts = ~aliveP
    if _NZ((elim < 0) & ghosts) or _NZ((dround < 0) & ghosts):
        v.append("R-6.1: a Ghost has no elimination record")
    if _NZ((elim != -1) & aliveP) or _NZ((dround != -1) & aliveP):
        v.append("R-6.1: a living player has an elimination record")
    if _NZ(dround > rnd):
        v.append("R-6.1: a death recorded in a future round")
    if _NZ((hand_n[:P] != 0) & ghosts):
        v.append("R-5.7: a Ghost holds Living cards")
    if _NZ((shadow_n[:P] != 0) & aliveP):
        v.append("R-1.3: a living player holds Shadow cards")

    # ---------------------------------------------------------------- bound
    # every resolved round deals damage, except those sudden death spared and the
    # grace round
    spared = int(r["spared_rounds"])
    if spared and rules.no_survivor != "sudden_death":
        v.append(f"R-9.2: {spared} rounds spared by sudden death under no_survivor={rules.no_survivor!r}")
    bound = P * hp0 + spared + (1 if rules.grace_round and rnd >= 1 else 0)
    total_hp = int(hpP.sum())
    if rnd + total_hp > bound:
        v.append(
            f"R-9.3: round {rnd} with total HP {total_hp} exceeds players x start HP + spared and grace rounds = {bound} "
            "(a resolved round dealt no damage)"
        )
    if rules.rounds_cap > bound and rnd >= rules.rounds_cap:
        v.append(f"R-9.3: the game reached max_rounds={rules.rounds_cap}")

    if r["epilogue"] and not (rules.epilogue and P == 2):
        v.append("R-9.4: an epilogue round outside the 2-player epilogue variant")

    if int(r["deck_n"]) == 0 and int(r["discard_n"]) > 0:
        v.append("R-10.1: the Living Deck is empty but its discard is not")
    if int(r["shadow_deck_n"]) == 0 and int(r["shadow_discard_n"]) > 0:
        v.append("R-10.3: the Shadow Deck is empty but its discard is not")

    mask = r["mask"].astype(bool)
    nl = int(alive[:P].sum())
    if not done:
        _check_decision(r, db, rules, v, mask, alive, nl)
    else:
        _check_finished(r, rules, v, mask, alive, nl)

    if prev is not None:
        _check_transition(prev, r, P, v)
    return v


def _check_decision(r, db, rules, v, mask, alive, nl) -> None:
    P = rules.num_players
    ph, p = int(r["phase"]), int(r["actor"])
    if ph not in _LIVING_PHASES + _GHOST_PHASES:
        v.append(f"R-12.1: unfinished game waits in phase {ph}, not an agent decision")
        return
    if not 0 <= p < P:
        v.append(f"actor {p} outside the seats 0..{P - 1}")
        return
    order = r["order"][:P]
    if sorted(int(x) for x in order) != list(range(P)):
        v.append(f"R-3.1: turn order {order.tolist()} is not a permutation of the seats")
    turn = int(r["turn"])
    if not 0 <= turn < P or int(order[turn]) != p:
        v.append(f"R-3.4: actor {p} is not the seat whose turn it is (turn {turn}, order {order.tolist()})")
    if not r["acted"][p]:
        v.append(f"R-3.1: actor {p} is not marked as taking its turn")
    if ph in _LIVING_PHASES and not alive[p]:
        v.append(f"R-5.7: Ghost {p} asked for a Living decision")
    if ph in _GHOST_PHASES and alive[p]:
        v.append(f"R-5: living player {p} asked for a Ghost decision")
    fp = int(r["first_player"])
    if not 0 <= fp < P or not alive[fp]:
        v.append(f"R-5.5: First Player token on seat {fp}, which is not a living player")
    if r["epilogue"]:
        if nl != 1:
            v.append(f"R-9.4: an epilogue round with {nl} living players (it follows a single living winner)")
    elif nl < 2:
        v.append(f"R-9.1: the game goes on with {nl} living player(s)")
    if (r["step_rewards"] != 0).any():
        v.append("R-11.3: a reward paid before the game ended")
    if int(r["round_num"]) >= rules.rounds_cap:
        v.append("R-9.3: the game goes on past max_rounds")
    if ph in (PH_TARGET, PH_MARKET, PH_REPLACE):
        d = int(r["pend_card"])
        if d < 0 or d != int(r["played"][p]) or r["face_down"][p]:
            v.append(f"R-4.5: pending choice of card {d} that is not the actor's face-up card on the table")
    if ph == PH_GHOST_TARGET:
        sd = int(r["pend_shadow"])
        if not 0 <= sd < db.n_shadow or r["shadow_hand"][p, sd] <= 0:
            v.append(f"R-5.2: pending Shadow card {sd} is not in Ghost {p}'s Shadow hand")
    n = int(mask.sum())
    if n != int(r["n_legal"]):
        v.append(f"n_legal={int(r['n_legal'])} but the mask offers {n} actions")
    hidden_single = n == 1 and ph in (PH_PLAY, PH_REPLACE) and int(r["hand_n"][p]) >= 2
    if n < 2 and not hidden_single:
        v.append(f"R-12.1: a decision offered to an agent with {n} legal option(s) that public facts make single")
    exp = expected_mask(r, db, rules)
    if not np.array_equal(mask, exp):
        extra = np.flatnonzero(mask & ~exp).tolist()
        missing = np.flatnonzero(exp & ~mask).tolist()
        v.append(f"R-12.2: mask differs from the rules' legal set (extra {extra}, missing {missing})")


def _check_finished(r, rules, v, mask, alive, nl) -> None:
    P = rules.num_players
    if int(r["phase"]) != PH_OVER:
        v.append("a finished game is not in the game_over phase")
    if mask.any() or int(r["n_legal"]) != 0:
        v.append("R-12.2: a finished game offers actions")
    win = r["winners"].astype(bool)
    if (win[P:]).any():
        v.append("R-9: a seat past num_players won")
    win = win[:P]
    k = int(win.sum())
    if k == 0:
        v.append("R-9: a finished game has no winner")
    if r["epilogue"] and nl != 1:
        v.append(f"R-9.4: an epilogue round was played with {nl} living players (it follows a single living winner)")
    capped = int(r["round_num"]) >= rules.rounds_cap
    if nl >= 2 and not capped:
        v.append(f"R-9.1: the game ended with {nl} living players before max_rounds")
    if nl == 0 and rules.no_survivor == "sudden_death":
        v.append("R-9.2: nobody is left alive, which sudden death prevents")
    if nl >= 1:
        if not np.array_equal(win, alive[:P]):
            v.append("R-9.1/R-9.3: the winners are not exactly the living players")
    else:
        dr = r["death_round"][:P]
        el = r["elim"][:P]
        last = (dr == dr.max()) & (el == el.max())
        if not np.array_equal(win, last):
            v.append("R-9.2: with no one alive, the winners are not exactly those who died last")
    rew = r["final_rewards"].astype(np.float64)
    if (rew[P:] != 0).any():
        v.append("R-11: a reward for a seat past num_players")
    rew = rew[:P]
    if abs(rew.sum()) > REWARD_TOL:
        v.append(f"R-11.1: rewards {rew.tolist()} sum to {rew.sum():.3g}, not zero")
    if rules.reward_mode == "win" and k:
        exp = np.where(win, (P - k) / (k * (P - 1.0)), -1.0 / (P - 1.0))
        if (np.abs(rew - exp) > REWARD_TOL).any():
            v.append(f"R-11.1: rewards {rew.tolist()} for winners {win.astype(int).tolist()}, expected {exp.tolist()}")
    if rules.reward_mode == "placement":
        if (rew > 1 + REWARD_TOL).any() or (rew < -1 - REWARD_TOL).any():
            v.append(f"R-11.2: placement rewards {rew.tolist()} outside -1..1")
        if k and k < P and rew[win].min() < rew[~win].max() - REWARD_TOL:
            v.append("R-11.2: a non-winner placed above a winner")


def _check_transition(prev, r, P, v) -> None:
    pa, na = prev["alive"][:P].astype(bool), r["alive"][:P].astype(bool)
    if (na & ~pa).any():
        v.append(f"R-6.1: a Ghost came back to life (alive {pa.astype(int).tolist()} -> {na.astype(int).tolist()})")
    if (r["hp"][:P] > prev["hp"][:P]).any():
        v.append(f"R-2.5: HP rose ({prev['hp'][:P].tolist()} -> {r['hp'][:P].tolist()})")
    ghosts = ~pa
    if (r["elim"][:P][ghosts] != prev["elim"][:P][ghosts]).any():
        v.append("R-6.1: a Ghost's elimination record changed")
    if int(r["round_num"]) < int(prev["round_num"]):
        v.append("R-3: the round counter went back")
    if prev["done"]:
        if not r["done"]:
            v.append("a finished game started again without a reset")
        changed = [f for f in r.dtype.names if f != "step_rewards" and not np.array_equal(prev[f], r[f])]
        if changed:
            v.append(f"a finished game changed on a step ({', '.join(changed)})")


# ------------------------------------------------------------------------ batch checks
def conservation_errors(state: np.ndarray, db, rules) -> np.ndarray:
    """Vectorized R-2.3/R-6.3/R-6.1 check of a whole batch: indices of the bad games.

    Checks Living and Shadow card conservation per design, pile and hand counters,
    HP in 0..start HP and ``alive == (HP > 0)``. Run ``check_record`` on the games it
    returns for the messages.
    """
    P, M = rules.num_players, rules.market
    DL, DS = db.n_living, db.n_shadow
    B = state.shape[0]
    bad = np.zeros(B, dtype=bool)

    def onehot_counts(ids, valid, n):
        ids = ids.astype(np.int64)
        ok = valid & (ids >= 0) & (ids < n)
        flat = np.where(ok, ids + n * np.arange(B)[:, None], B * n)
        return np.bincount(flat.ravel(), minlength=B * n + 1)[: B * n].reshape(B, n)

    deck = state["deck"]
    deck_n = state["deck_n"].astype(np.int64)
    in_deck = np.arange(deck.shape[1])[None, :] < deck_n[:, None]
    bad |= np.any(in_deck & (deck < 0), axis=1) | np.any(~in_deck & (deck != -1), axis=1)
    hand = state["hand"].astype(np.int64)
    tot = (
        onehot_counts(deck, in_deck, DL)
        + state["discard"].astype(np.int64)
        + onehot_counts(state["market"][:, :M], np.ones((B, M), bool), DL)
        + hand[:, :P].sum(axis=1)
        + onehot_counts(state["played"][:, :P], np.ones((B, P), bool), DL)
    )
    bad |= np.any(tot != db.living_copies[None, :], axis=1)
    bad |= state["discard_n"] != state["discard"].astype(np.int64).sum(axis=1)
    bad |= np.any(state["hand_n"][:, :P] != hand[:, :P].sum(axis=2), axis=1)
    bad |= np.any(hand < 0, axis=(1, 2)) | np.any(state["discard"] < 0, axis=1)

    sdeck = state["shadow_deck"]
    sn = state["shadow_deck_n"].astype(np.int64)
    in_sdeck = np.arange(sdeck.shape[1])[None, :] < sn[:, None]
    att = state["attached"]
    in_att = np.arange(att.shape[2])[None, None, :] < state["attached_n"][:, :, None]
    shand = state["shadow_hand"].astype(np.int64)
    stot = (
        onehot_counts(sdeck, in_sdeck, DS)
        + state["shadow_discard"].astype(np.int64)
        + shand[:, :P].sum(axis=1)
        + onehot_counts(att.reshape(B, -1), in_att.reshape(B, -1), DS)
    )
    bad |= np.any(stot != db.shadow_copies[None, :], axis=1)
    bad |= state["shadow_discard_n"] != state["shadow_discard"].astype(np.int64).sum(axis=1)
    bad |= np.any(state["shadow_n"][:, :P] != shand[:, :P].sum(axis=2), axis=1)

    hp = state["hp"][:, :P].astype(np.int64)
    bad |= np.any(hp < 0, axis=1) | np.any(hp > rules.hp, axis=1)
    bad |= np.any(state["alive"][:, :P].astype(bool) != (hp > 0), axis=1)
    return np.flatnonzero(bad)


# ------------------------------------------------------------------------ hidden information
def scramble_hidden(engine, g: int, viewer: int, rng: np.random.Generator):
    """A one-game copy of game ``g`` in which everything ``viewer`` may not see is redealt
    (R-12.3): other seats' hands and Shadow hands (same sizes), other seats' face-down
    cards, the order of both decks and the game's RNG. Every card stays somewhere exactly
    once (R-2.3); the legal actions are those of the redealt hands. The spec's ``scramble_hidden`` hook: the conformance suite checks that
    ``viewer``'s observation does not change."""
    twin = engine.clone([g])
    s = twin.state
    P = engine.num_players
    others = [q for q in range(P) if q != viewer]
    # Living cards: other hands + deck + other seats' face-down cards.
    deck_n = int(s["deck_n"][0])
    hidden_fd = [q for q in others if s["played"][0, q] >= 0 and s["face_down"][0, q]]
    rest = redeal_hidden(rng, s["deck"][0, :deck_n], s["hand"][0], s["hand_n"][0], others,
                         [s["played"][0, q] for q in hidden_fd])
    for i, q in enumerate(hidden_fd):
        s["played"][0, q] = rest[i]
    s["deck"][0, :deck_n] = rest[len(hidden_fd):]
    # Shadow cards: other Shadow hands + Shadow Deck.
    sn = int(s["shadow_deck_n"][0])
    s["shadow_deck"][0, :sn] = redeal_hidden(rng, s["shadow_deck"][0, :sn], s["shadow_hand"][0], s["shadow_n"][0],
                                             others)
    actor = int(s["actor"][0])
    if s["phase"][0] == PH_GHOST_TARGET and actor != viewer:
        s["pend_shadow"][0] = int(np.flatnonzero(s["shadow_hand"][0, actor])[0])
    s["rng"][0] = int(rng.integers(0, 2**32))
    if len(conservation_errors(s, engine.cards, engine.rules)):
        raise AssertionError("scramble_hidden broke card conservation (R-2.3)")
    from ripmarket_env.games.ripmarket.kernels import fill_mask

    fill_mask(kernel_view(s)[0], kernel_view(twin.tables)[0], twin.cfg)  # the legal actions of the redealt hands
    return twin


__all__ = ["check_game", "check_record", "conservation_errors", "expected_mask", "scramble_hidden", "state_bytes"]
