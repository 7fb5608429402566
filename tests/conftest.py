"""Shared pytest configuration.

The `slow` and `browser` markers, the default `-m "not slow"` and the per-test
timeout are declared in pyproject.toml; `make soak` runs the slow tests.
"""
