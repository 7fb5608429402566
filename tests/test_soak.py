"""Soak: well over 100,000 random games with the compiled ``random_play`` kernel.

Marked ``slow`` (``make soak`` runs ``pytest -m slow``). Every player count 2-10 plays
big batches of uniformly random legal decisions; ``random_play`` is called one decision
at a time, so every finished game is seen in its final state before the kernel starts a
new game in its row. Checked:

- every finished game: the full ``check_game`` list (R-2.3 conservation, R-6.1/R-6.3 HP
  and Ghosts, R-9.1/R-9.2 winners, R-9.3 the round bound and no ``max_rounds`` draw,
  R-11.1/R-11.2 zero-sum rewards ...);
- sampled mid-game states of the whole batch: vectorized card conservation, HP and
  Ghosts (``conservation_errors``), plus ``check_game`` on a few rows;
- at the end, the games still in progress are played to their end with ``Engine.step``
  (all games end, R-9.3).
"""

from __future__ import annotations

import time

import numpy as np
import pytest

from ripmarket_env.games.ripmarket import Engine, RulesConfig
from ripmarket_env.games.ripmarket import kernels as K
from ripmarket_env.games.ripmarket.engine import _k
from ripmarket_env.games.ripmarket.invariants import check_game, conservation_errors

# About 2 CPU-minutes on an idle machine; the per-test timeout is raised so a busy
# machine does not turn a slow soak into a failure.
pytestmark = [pytest.mark.slow, pytest.mark.timeout(3600)]

#: Finished games per player count in the default-rules soak before the games still in
#: progress are played out (9 counts: over 108,000 games; about 145,000 with the play-out).
GAMES_PER_COUNT = 12_000
#: Games per variant in the rules-variant soak.
GAMES_PER_VARIANT = 2_000
BATCH = 4096
SAMPLE_EVERY = 25  # decisions between whole-batch conservation checks


def random_actions(eng: Engine, rng: np.random.Generator) -> np.ndarray:
    m = eng.legal_mask()
    n = m.sum(axis=1)
    k = (rng.random(eng.batch_size) * n).astype(np.int64)
    a = np.argmax(np.cumsum(m, axis=1) > k[:, None], axis=1).astype(np.int64)
    a[eng.terminated | (n == 0)] = -1
    return a


def soak(rules: RulesConfig, games: int, batch: int, seed: int) -> dict:
    """Play at least ``games`` finished random games; returns statistics, raises on any
    violated invariant."""
    eng = Engine(rules, batch_size=batch)
    eng.reset([seed * 1_000_003 + i for i in range(batch)])
    S, T, c = _k(eng.state), _k(eng.tables), eng.cfg
    bench = (np.arange(batch, dtype=np.int64) * 2_654_435_761 + seed) & 0xFFFFFFFF
    rng = np.random.default_rng(seed)
    bound = rules.num_players * rules.hp
    finished = 0
    decisions = 0
    max_round = 0
    rounds = []
    errors: list[str] = []

    damaging = 0  # the most rounds that dealt damage in one game

    def note_rounds(st):
        # every resolved round deals damage except those sudden death spared
        # (R-9.2, spared_rounds) and the grace round
        nonlocal max_round, damaging
        rnd = st["round_num"].astype(np.int64)
        grace = (rnd >= 1) if rules.grace_round else np.zeros(rnd.shape, dtype=bool)
        max_round = max(max_round, int(rnd.max(initial=0)))
        damaging = max(damaging, int((rnd - st["spared_rounds"] - grace).max(initial=0)))

    def check_final(idx):
        if len(idx) == 0:
            return
        st = eng.state[idx]
        note_rounds(st)
        rounds.append(st["round_num"].astype(np.int64))
        for g in idx:
            bad = check_game(eng, int(g))
            if bad:
                errors.append(f"finished game in row {g}: " + "; ".join(bad))

    while finished < games and not errors:
        # Games finished by the previous call are still in their final state here.
        check_final(np.flatnonzero(eng.state["done"]))
        finished += int(K.random_play(S, T, c, 1, bench).sum())
        decisions += batch
        if decisions // batch % SAMPLE_EVERY == 0:
            for g in conservation_errors(eng.state, eng.cards, eng.rules):
                errors.append(f"sampled state in row {g}: " + "; ".join(check_game(eng, int(g))))
            for g in rng.choice(batch, size=4, replace=False):
                bad = check_game(eng, int(g))
                if bad:
                    errors.append(f"sampled state in row {g}: " + "; ".join(bad))
    assert not errors, f"{rules}: {len(errors)} violation(s); first: {errors[:3]}"

    # Play the games still in progress to their end (they must all end: ).
    live = np.flatnonzero(~eng.state["done"])
    ended = np.flatnonzero(eng.state["done"])  # finished by the last call, not yet counted
    check_final(ended)
    finished += len(ended)
    tail = eng.clone(live)
    limit = bound * rules.num_players * 12 + 50
    for _ in range(limit):
        if tail.terminated.all():
            break
        tail.step(random_actions(tail, rng))
    assert tail.terminated.all(), "games did not end (R-9.3)"
    for g in range(tail.batch_size):
        bad = check_game(tail, g)
        assert not bad, f"{rules}: game ended in an unsound state: {bad}"
    finished += tail.batch_size
    note_rounds(tail.state)
    assert damaging <= bound  # a game has at most players x start HP damaging rounds
    assert max_round < rules.rounds_cap  # never a max_rounds draw
    r = np.concatenate(rounds) if rounds else np.zeros(1)
    return {"games": finished, "decisions": decisions, "max_round": max_round, "max_damaging_rounds": damaging,
            "mean_round": float(r.mean())}


def test_soak_every_player_count():
    """At least 100,000 random games over player counts 2-10 under the default rules."""
    t0 = time.perf_counter()
    total = 0
    for P in range(2, 11):
        stats = soak(RulesConfig(num_players=P), GAMES_PER_COUNT, BATCH, seed=P)
        total += stats["games"]
        print(f"soak {P} players: {stats} ({time.perf_counter() - t0:.0f} s)")
    assert total >= 100_000
    print(f"soak: {total} games in {time.perf_counter() - t0:.0f} s")


VARIANTS = [
    dict(num_players=2, epilogue=True),
    dict(num_players=3, tie_rule="earliest", reward_mode="placement"),
    dict(num_players=5, ghost_phase="first", market_size=1, ghost_cap=1),
    dict(num_players=6, start_hp=4, hand_size=1, tie_rule="earliest"),
    dict(num_players=8, ghost_phase="first", reward_mode="placement", start_hp=1),
    dict(num_players=10, market_size=2, ghost_cap=5, hand_size=6),
]


@pytest.mark.parametrize("variant", VARIANTS, ids=lambda v: "-".join(f"{k}={x}" for k, x in v.items()))
def test_soak_rules_variants(variant):
    """Rule variants (R-1.4) under the same checks."""
    stats = soak(RulesConfig(**variant), GAMES_PER_VARIANT, 1024, seed=len(str(variant)))
    assert stats["games"] >= GAMES_PER_VARIANT
    print(f"soak {variant}: {stats}")
