"""The engine runs as plain Python under NUMBA_DISABLE_JIT=1 and plays the same games."""

import hashlib
import os
import subprocess
import sys

SCRIPT = r"""
import hashlib, numpy as np
from ripmarket_env.engine import Engine, RulesConfig
eng = Engine(RulesConfig(num_players=4), batch_size=3)
eng.reset([11, 12, 13])
rng = np.random.default_rng(5)
for _ in range(400):
    if eng.terminated.all():
        break
    m = eng.legal_mask()
    acts = [int(rng.choice(np.flatnonzero(m[g]))) if not eng.terminated[g] else -1 for g in range(3)]
    eng.step(np.array(acts))
obs = eng.observe([0, 1, 2])
h = hashlib.sha256()
for name in eng.state.dtype.names:
    h.update(np.ascontiguousarray(eng.state[name]).tobytes())
h.update(obs.tobytes())
print(h.hexdigest(), int(eng.terminated.sum()))
"""


def _run(disable_jit: bool) -> str:
    env = dict(os.environ)
    env["NUMBA_DISABLE_JIT"] = "1" if disable_jit else "0"
    out = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout.strip()


def test_plain_python_matches_compiled():
    """R-12.4: the same seeds and actions give byte-identical games with and without the JIT."""
    plain = _run(True)
    compiled = _run(False)
    assert plain == compiled
    digest, finished = plain.split()
    assert int(finished) == 3, "the three games should finish within 400 steps"
    assert len(digest) == hashlib.sha256().digest_size * 2


# Games chosen so that every effect primitive of the card registry fires at least once,
# each Shadow trigger kind included (``discard_random`` draws from the game's RNG with an
# int16 hand size: the case that used to crash the plain-Python engine). The first is the
# game of issue 19: 6 players, seed 21, random legal moves from default_rng(21).
COVERAGE_GAMES = (
    (6, (21,), 21), (4, (11, 12, 13), 5), (8, (31, 32, 33), 7), (6, (41, 42, 43, 44), 9), (6, (204, 205, 206, 207), 9),
)

COVERAGE_SCRIPT = r"""
import hashlib, json, sys, numpy as np
from ripmarket_env.engine import Engine, RulesConfig
from ripmarket_env.games.ripmarket.events import EVENT_CODES as E
from ripmarket_env.games.ripmarket.cards.registry import TRIGGER_KINDS

# the event each primitive pushes when it takes effect (see games/ripmarket/events.py)
BY_EVENT = {E["rule"]: "rule", E["draw"]: "draw", E["market_flush"]: "market_flush",
            E["market_discard"]: "market_discard", E["market_take"]: "market_take",
            E["exorcise"]: "exorcise", E["replace"]: "replace", E["attack"]: "damage_target",
            E["deflect"]: "deflect"}
TRIGGER = {v: k for k, v in TRIGGER_KINDS.items()}
h = hashlib.sha256()
fired = {}
finished = 0
for players, seeds, policy_seed in json.loads(sys.argv[1]):
    eng = Engine(RulesConfig(num_players=players), batch_size=len(seeds))
    db = eng.cards
    eng.reset(seeds)
    rng = np.random.default_rng(policy_seed)
    B = len(seeds)
    cursed = [set() for _ in range(B)]  # seats haunted by a shadow_score card

    def fire(name):
        fired[name] = fired.get(name, 0) + 1

    for _ in range(3000):
        if eng.terminated.all():
            break
        m = eng.legal_mask()
        acts = np.array([int(rng.choice(np.flatnonzero(m[g]))) if not eng.terminated[g] else -1
                         for g in range(B)])
        eng.step(acts)
        for g in range(B):
            if acts[g] < 0:
                continue
            for kind, seat, a, b in eng.state["ev"][g, : eng.state["ev_n"][g]].tolist():
                if kind == E["score"]:  # the played card's at-resolution ops were scored
                    for op in db.living[a].ops:
                        if op.startswith("score_") or op == "set_score":
                            fire(op)
                    if seat in cursed[g]:
                        fire("shadow_score")
                elif kind == E["haunt"] and "shadow_score" in db.shadow[b].ops:
                    cursed[g].add(a)
                elif kind == E["play"] and b == 1:
                    fire("face_down")
                elif kind == E["trigger"]:
                    fire("shadow_trigger")
                    fire("shadow_trigger:" + TRIGGER[b])
                elif kind == E["discard"]:
                    fire("random_discard")
                elif kind in BY_EVENT:
                    fire(BY_EVENT[kind])
    finished += int(eng.terminated.sum())
    for name in eng.state.dtype.names:
        h.update(np.ascontiguousarray(eng.state[name]).tobytes())
    h.update(eng.observe(list(range(B))).tobytes())
print(json.dumps({"digest": h.hexdigest(), "finished": finished, "fired": fired}))
"""


def _run_coverage(disable_jit: bool) -> dict:
    import json

    env = dict(os.environ)
    env["NUMBA_DISABLE_JIT"] = "1" if disable_jit else "0"
    out = subprocess.run([sys.executable, "-c", COVERAGE_SCRIPT, json.dumps(COVERAGE_GAMES)], env=env,
                         capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout)


def test_plain_python_covers_every_effect_primitive():
    """R-12.4: with and without the JIT, games in which every effect primitive of the card
    registry fires (both Shadow trigger kinds, a random discard among them) end in
    byte-identical states."""
    from ripmarket_env.games.ripmarket.cards.registry import PRIMITIVES, TRIGGER_KINDS

    plain = _run_coverage(True)
    compiled = _run_coverage(False)
    assert plain == compiled
    wanted = {p.name for p in PRIMITIVES} | {f"shadow_trigger:{k}" for k in TRIGGER_KINDS} | {"random_discard"}
    missing = sorted(wanted - set(plain["fired"]))
    assert not missing, f"primitives that never fired in the covered games: {missing}"
    assert plain["finished"] == sum(len(s) for _, s, _ in COVERAGE_GAMES)
