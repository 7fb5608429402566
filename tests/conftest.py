"""Shared pytest configuration.

The `slow` and `browser` markers, the default `-m "not slow"` and the per-test
timeout are declared in pyproject.toml; `make soak` runs the slow tests.
"""

import os

import pytest

#: The toy game of tests/toy_game.py is registered for the whole test session, in this
#: process and every process it starts (the CLI, the server, the NUMBA_DISABLE_JIT twin):
#: every layer that serves "every registered game" must serve it too, without a line of
#: its own (docs/ARCHITECTURE.md, "Adding a game").
TOY = "toy=tests.toy_game:SPEC"
os.environ["RIPMARKET_GAMES"] = ",".join(x for x in (os.environ.get("RIPMARKET_GAMES", ""), TOY) if x) \
    if TOY not in os.environ.get("RIPMARKET_GAMES", "") else os.environ["RIPMARKET_GAMES"]
_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if _ROOT not in os.environ.get("PYTHONPATH", "").split(os.pathsep):  # subprocesses import tests.toy_game
    os.environ["PYTHONPATH"] = os.pathsep.join(x for x in (_ROOT, os.environ.get("PYTHONPATH", "")) if x)


@pytest.fixture(scope="module")
def local_ray():
    """A local Ray instance of two CPUs for one test module (the ecosystem extra's ray)."""
    import ray

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, ignore_reinit_error=True)
    yield ray
    ray.shutdown()
