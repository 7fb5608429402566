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
