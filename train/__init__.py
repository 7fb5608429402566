"""Self-play training with MaskablePPO and an opponent league (``ripmarket train``).

* ``train.config`` — ``TrainConfig`` (YAML, validated).
* ``train.selfplay`` — the league vector env, the policy networks and the training loop.
* ``agents.checkpoint`` — checkpoints with layout metadata, loading with clear errors.
"""
