"""Where numba keeps compiled kernels: a cache folder keyed by the compiled sources.

numba's own cache checks only the timestamp of the file that defines a function, not of
the files it calls, so a kernel in one module could keep running stale code after a rules
change in another. The cache therefore lives in
``$XDG_CACHE_HOME/ripmarket/numba/<digest>`` where the digest covers every source file
of ``ripmarket_env`` and ``agents`` that defines compiled code or the constants it
reads: any such change starts a fresh cache (the first call then compiles, about a
minute). Setting ``NUMBA_CACHE_DIR`` yourself overrides this.

While numba compiles (a cold cache: the first ``make()`` of a game), ``CompileProgress``
reports on stderr which kernels it compiles and how far it is: one line rewritten in place
on a terminal, plain lines otherwise (one per top-level kernel, at most every few seconds).
How many kernels a top-level kernel pulls in is remembered from its last compile
(``compile-counts.json`` beside the cache), so the line can say "23/77".
``RIPMARKET_COMPILE_PROGRESS=0`` silences it. numba announces real compiles only
(``numba:compile`` events); loading from the cache prints nothing.

One version per argument type (``one_version_per_type``): numba types a constant
argument of a call between compiled functions as a literal (``Literal[int](26)``) and
compiles the callee once per distinct constant: the event logger ``ev_push`` was
compiled 40 times for R.I.P. Market alone, about a fifth of a cold ``make()``. The
project's kernels are compiled for the constants' plain types instead (the callee is
inlined by LLVM in its caller, so the constant still folds there); the games' results
are the same (goldens, conformance suite), compile time drops.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time
from pathlib import Path

from numba.core import event as _event

from ripmarket_env.core.jsonfile import save_cache_json

_CONSTANT_SOURCES = {"registry.py", "config.py", "state.py"}
#: the packages whose compiled functions get one version per argument type
_PROJECT = ("ripmarket_env.", "agents.")


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


def cache_home() -> Path:
    """The project's cache folder, ``$XDG_CACHE_HOME/ripmarket`` (numba's cache below it)."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "ripmarket"


def configure() -> None:
    install_progress()
    one_version_per_type()
    if os.environ.get("NUMBA_CACHE_DIR"):
        return
    import numba

    numba.config.CACHE_DIR = str(cache_home() / "numba" / source_digest())


_PATCHED = False


def one_version_per_type() -> bool:
    """Compile the project's kernels once per argument *type* when another compiled
    function calls them, not once per literal constant (see the module docstring).
    Functions of other packages keep numba's behaviour. False when this numba has no
    ``Dispatcher.get_call_template`` to hook (nothing changes then)."""
    global _PATCHED
    if _PATCHED:
        return True
    from numba.core import dispatcher, types

    original = getattr(dispatcher.Dispatcher, "get_call_template", None)
    if original is None:  # pragma: no cover - another numba
        return False

    def get_call_template(self, args, kws):
        module = getattr(self.py_func, "__module__", "") or ""
        if module.startswith(_PROJECT):
            args = tuple(types.unliteral(a) for a in args)
            kws = {k: types.unliteral(v) for k, v in kws.items()}
        return original(self, args, kws)

    get_call_template.__wrapped__ = original
    dispatcher.Dispatcher.get_call_template = get_call_template
    _PATCHED = True
    return True


def _short_name(dispatcher) -> str:
    """``games.blackmarket.kernels.step_game`` for a kernel of the project, else its qualname."""
    fn = dispatcher.py_func
    mod = fn.__module__.removeprefix("ripmarket_env.")
    return f"{mod}.{fn.__qualname__}"


class CompileProgress(_event.Listener):
    """A ``numba:compile`` listener that reports compile progress on ``stream`` (default
    the process's real stderr; see the module docstring). ``tty`` forces the terminal or
    the plain-lines form."""

    #: plain lines: a line for nested kernels at most this often (seconds)
    PLAIN_EVERY = 5.0

    def __init__(self, stream=None, tty: bool | None = None, counts_path: Path | None = None):
        self.stream = stream
        self.tty = tty
        self.counts_path = counts_path
        self.depth = 0
        self.top: tuple[str, float] | None = None
        self.nested = 0
        self.total = 0
        self.t0: float | None = None
        self.last_line = 0.0
        self._counts: dict | None = None

    # numba's Listener interface
    def on_start(self, event) -> None:
        try:
            self._start(event.data["dispatcher"])
        except Exception:  # noqa: BLE001  (a progress line never breaks a compile)
            pass

    def on_end(self, event) -> None:
        try:
            self._end(event.data["dispatcher"])
        except Exception:  # noqa: BLE001
            pass

    def _out(self):
        return self.stream if self.stream is not None else (sys.__stderr__ or sys.stderr)

    def _is_tty(self) -> bool:
        if self.tty is not None:
            return self.tty
        try:
            return self._out().isatty()
        except (AttributeError, ValueError):
            return False

    def _known(self) -> dict:
        if self._counts is None:
            try:
                self._counts = json.loads(self._path().read_text())
                if not isinstance(self._counts, dict):
                    self._counts = {}
            except (OSError, ValueError):
                self._counts = {}
        return self._counts

    def _path(self) -> Path:
        if self.counts_path is not None:
            return self.counts_path
        import numba

        cache = Path(numba.config.CACHE_DIR or ".")
        return (cache if os.environ.get("NUMBA_CACHE_DIR") else cache.parent) / "compile-counts.json"

    def _write(self, text: str, final: bool = False) -> None:
        out = self._out()
        if self._is_tty():
            out.write("\r\x1b[2K" + text + ("\n" if final else ""))
        else:
            out.write(text + "\n")
        out.flush()

    def _start(self, dispatcher) -> None:
        now = time.perf_counter()
        if self.t0 is None:
            self.t0 = now
            import numba

            self._write("numba: compiling kernels on first use (once: they are cached in "
                        f"{numba.config.CACHE_DIR or 'the source folders'})", final=True)
        self.depth += 1
        name = _short_name(dispatcher)
        if self.depth == 1:
            self.top, self.nested = (name, now), 0
            self.last_line = now
            if self._is_tty():
                self._status(name, self._known().get(name))
        elif self.top is not None:
            self.nested += 1
            expected = self._known().get(self.top[0])
            if self._is_tty() or now - self.last_line >= self.PLAIN_EVERY:
                self.last_line = now
                self._status(f"{self.top[0]} > {name}", expected)

    def _status(self, what: str, expected) -> None:
        done = f"{self.nested}/{expected}" if isinstance(expected, int) and expected >= self.nested else f"{self.nested}"
        self._write(f"numba: {self.total} kernels compiled, {time.perf_counter() - self.t0:.0f} s; "
                    f"now {what} ({done} of the kernels it calls)")

    def _end(self, dispatcher) -> None:
        self.depth = max(self.depth - 1, 0)
        self.total += 1
        if self.depth or self.top is None:
            return
        name, started = self.top
        took = time.perf_counter() - started
        self._write(f"numba: compiled {name} with {self.nested} kernels it calls in {took:.1f} s "
                    f"({self.total} kernels, {time.perf_counter() - self.t0:.0f} s so far)", final=True)
        counts = self._known()
        if counts.get(name) != self.nested:
            counts[name] = self.nested
            save_cache_json(self._path(), counts)
        self.top = None


_PROGRESS: CompileProgress | None = None


def install_progress() -> CompileProgress | None:
    """Report numba's compiles on stderr (once per process; not when
    ``RIPMARKET_COMPILE_PROGRESS=0`` or numba's JIT is disabled)."""
    global _PROGRESS
    if _PROGRESS is not None or os.environ.get("RIPMARKET_COMPILE_PROGRESS", "1") == "0":
        return _PROGRESS
    from numba.core import config

    if config.DISABLE_JIT:
        return None
    _PROGRESS = CompileProgress()
    _event.register("numba:compile", _PROGRESS)
    return _PROGRESS
