"""Where numba keeps compiled kernels: a cache folder keyed by the compiled sources.

numba's own cache checks only the timestamp of the file that defines a function, not of
the files it calls, so a kernel in one module could keep running stale code after a rules
change in another. The cache therefore lives in
``$XDG_CACHE_HOME/ripmarket/numba/<digest>`` where the digest covers every source file
of ``ripmarket_env`` and ``agents`` that defines compiled code or the constants it
reads: any such change starts a fresh cache (the first call then compiles, about a
minute). Setting ``NUMBA_CACHE_DIR`` yourself overrides this.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

_CONSTANT_SOURCES = {"registry.py", "config.py", "state.py"}


def source_digest() -> str:
    root = Path(__file__).resolve().parent.parent  # the ripmarket_env package
    h = hashlib.sha256()
    for base in (root, root.parent / "agents"):
        if not base.is_dir():
            continue
        for path in sorted(base.rglob("*.py")):
            data = path.read_bytes()
            if b"njit" in data or path.name in _CONSTANT_SOURCES:
                h.update(str(path.relative_to(root.parent)).encode())
                h.update(data)
    return h.hexdigest()[:16]


def configure() -> None:
    if os.environ.get("NUMBA_CACHE_DIR"):
        return
    import numba

    home = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    numba.config.CACHE_DIR = str(home / "ripmarket" / "numba" / source_digest())
