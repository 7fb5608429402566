"""Shared pytest configuration.

The `slow` and `browser` markers, the default `-m "not slow"` and the per-test
timeout are declared in pyproject.toml; `make soak` runs the slow tests.
"""

import pytest


@pytest.fixture(scope="module")
def local_ray():
    """A local Ray instance of two CPUs for one test module (the ecosystem extra's ray)."""
    import ray

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, ignore_reinit_error=True)
    yield ray
    ray.shutdown()
