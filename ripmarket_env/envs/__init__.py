"""The environments, generic over a ``GameSpec``: the PettingZoo AEC env (``aec``), the
Gymnasium single-agent env (``gym``), the batched vector envs (``vector``) and game
records (``record``). They receive the game as a spec and agents as objects."""
