"""Self-play training with MaskablePPO and an opponent league (``ripmarket train``).

* ``train.config`` — ``TrainConfig`` (YAML, validated).
* ``train.selfplay`` — the league vector env, the policy networks and the training loop.
* ``agents.checkpoint`` — checkpoints with layout metadata, loading with clear errors.
"""

import os

# The engine's numba pool and torch each load an OpenMP runtime (libgomp). By default an
# idle libgomp worker spins for 300,000 iterations before it sleeps, and a trainer enters
# a parallel region every few microseconds (engine kernels, small torch ops): next to
# another busy process on a shared 2-core machine the spinning threads took the cores
# from the real work (two trainers at once ran at a tenth of their speed; the Black Market
# trainer's chunks went from about 30 s to 230 s). Never spinning (OMP_WAIT_POLICY=PASSIVE)
# costs a futex wake-up at every parallel region instead: a third of a lone league
# trainer's speed. Every trainer imports this package first, before either runtime is
# loaded, and gets the middle: spin 5,000 iterations (a few microseconds, enough to catch
# the next small op), then sleep (docs/TRAINING.md, Throughput). An OMP_WAIT_POLICY or
# GOMP_SPINCOUNT set by the user wins.
SPIN_COUNT = "5000"
if "OMP_WAIT_POLICY" not in os.environ and "GOMP_SPINCOUNT" not in os.environ:
    os.environ["GOMP_SPINCOUNT"] = SPIN_COUNT
