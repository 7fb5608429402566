"""Tools for testing the zoo's games: the conformance suite every registered game must pass
(``ripmarket_env.testing.conformance``, run by ``tests/test_conformance.py``).

This layer sits above the environments: it may import the core, the registry, the games
and the envs, never agents, train, eval or the app (``tests/test_layers.py``).
"""
