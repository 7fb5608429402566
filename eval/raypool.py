"""Jobs as Ray tasks: the Ray backend of the evaluation runs (``--ray ADDRESS``).

``ray_map(fn, jobs, address, on_result)`` runs ``fn(job)`` for every job as one Ray task
(one CPU each) and returns the results in job order, calling ``on_result(result)`` as
each finishes (the progress bar advances by whole jobs: a tournament chunk, an
evaluation job). Jobs carry their own seeds, so the results are those of local worker
processes for the same seed, whatever the cluster's size.

``address``: ``"local"`` starts a Ray instance on this machine for the run (and stops it
after); ``"auto"`` joins the cluster this machine belongs to (``ray start``); any other
value is a cluster address (``HOST:6379``, ``ray://HOST:10001``). A Ray already
initialised in this process (a test's ``ray.init(num_cpus=2)``) is used as it is.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

def ray_map(fn: Callable, jobs: Sequence[Any], address: str = "local",
            on_result: Callable[[Any], None] | None = None, max_in_flight: int | None = None) -> list:
    try:
        import ray
    except ImportError as exc:  # pragma: no cover - without the ecosystem extra
        raise RuntimeError("--ray needs ray: pip install 'ripmarket[ecosystem]'") from exc
    started = False
    if not ray.is_initialized():
        kw = {"include_dashboard": False, "log_to_driver": False}
        if address == "local":
            ray.init(**kw)
        else:
            ray.init(address=address, **kw)
        started = True
    try:
        remote = ray.remote(num_cpus=1)(fn)
        limit = max_in_flight or max(2, 2 * int(ray.cluster_resources().get("CPU", 1)))
        results: list[Any] = [None] * len(jobs)
        index: dict[Any, int] = {}
        pending: list[Any] = []
        nxt = 0
        while nxt < len(jobs) or pending:
            while nxt < len(jobs) and len(pending) < limit:  # a bounded batch in flight
                ref = remote.remote(jobs[nxt])
                index[ref] = nxt
                pending.append(ref)
                nxt += 1
            done, pending = ray.wait(pending, num_returns=1)
            for ref in done:
                res = ray.get(ref)  # re-raises a task's error
                results[index.pop(ref)] = res
                if on_result is not None:
                    on_result(res)
        return results
    finally:
        if started:
            ray.shutdown()
