"""Self-play training with MaskablePPO and an opponent league (``ripmarket train``).

* ``train.config`` — ``TrainConfig`` (YAML, validated).
* ``train.selfplay`` — the league vector env, the policy networks and the training loop.
* ``agents.checkpoint`` — checkpoints with layout metadata, loading with clear errors.
"""

import os

# The engine's numba pool and torch each load an OpenMP runtime, and by default an idle
# OpenMP worker spins between parallel regions. A trainer enters one every step (engine
# kernels, small torch ops), so on a shared 2-core machine the spinning thread kept half a
# core busy and slowed the Black Market trainer's chunks from about 30 s to 230 s. Every
# trainer imports this package first, before either runtime is loaded: idle workers sleep.
# An OMP_WAIT_POLICY set by the user wins.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
