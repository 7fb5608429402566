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

Callees are linked, not built (``link_only_callees``): numba builds every compiled
function as a complete library: its module optimized on its own, machine code emitted,
a Python wrapper and a C wrapper made and compiled, the result cached. A kernel called
only from another kernel needs none of it: its caller links the callee's IR into its own
module and optimizes and emits the whole once. A project kernel compiled because another
compiled function calls it is therefore lowered to IR only (no wrappers, no module
passes, no machine code, not cached on its own) and linked into its callers; the
callers, compiled from Python, are built, optimized and cached as before (their cached
code holds the callees). If such a kernel is later called from Python, or its address
is asked for, it is compiled then in full. Half of a cold ``make()``'s CPU time went to
building callees no one calls; set ``RIPMARKET_LINK_ONLY_CALLEES=0`` for numba's own
behaviour.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import threading
import time
from pathlib import Path

from numba.core import event as _event

from ripmarket_env.core.jsonfile import save_cache_json

#: files hashed into the cache key besides those with compiled code: the constants kernels
#: read, and this module (it decides how kernels are compiled)
_CONSTANT_SOURCES = {"registry.py", "config.py", "state.py", "jitcache.py"}
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
    link_only_callees()
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
        if not _is_project(self):
            return original(self, args, kws)
        args = tuple(types.unliteral(a) for a in args)
        kws = {k: types.unliteral(v) for k, v in kws.items()}
        outer = getattr(_COMPILING, "callee", False)
        _COMPILING.callee = True  # the compile this call may start is for a compiled caller
        try:
            return original(self, args, kws)
        finally:
            _COMPILING.callee = outer

    get_call_template.__wrapped__ = original
    dispatcher.Dispatcher.get_call_template = get_call_template
    _PATCHED = True
    return True


def _is_project(dispatcher) -> bool:
    return (getattr(dispatcher.py_func, "__module__", "") or "").startswith(_PROJECT)


#: per thread: ``callee`` while numba types a call from compiled code into a project kernel
#: (set by ``one_version_per_type``'s hook), ``link_only`` for the one compile it starts
_COMPILING = threading.local()
_LINK_ONLY = False


class _LinkedEntry:
    """The entry point recorded for a callee compiled link-only: a unique key under which
    its callers find its IR (``insert_user_function``); it cannot be called from Python."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return f"<{self.name}: linked into its callers>"


def link_only_callees() -> bool:
    """Build a project kernel compiled for a compiled caller as IR to be linked only (see
    the module docstring). Installed by ``import ripmarket_env`` unless
    ``RIPMARKET_LINK_ONLY_CALLEES=0``; False when it is off or this numba lacks the hooks
    (numba's behaviour is then unchanged)."""
    global _LINK_ONLY
    if _LINK_ONLY:
        return True
    if os.environ.get("RIPMARKET_LINK_ONLY_CALLEES", "1") == "0" or not one_version_per_type():
        return False
    from numba.core import codegen, dispatcher, sigutils
    from numba.core import event as ev
    from numba.core.compiler_lock import global_compiler_lock

    needed = (hasattr(dispatcher.Dispatcher, "compile") and hasattr(dispatcher.Dispatcher, "get_compile_result")
              and hasattr(dispatcher, "_FunctionCompiler")
              and hasattr(dispatcher._FunctionCompiler, "_customize_flags")
              and hasattr(codegen, "JITCodeLibrary")
              and hasattr(codegen.JITCodeLibrary, "_get_module_for_linking"))
    if not needed:  # pragma: no cover - another numba
        return False

    class LinkOnlyLibrary(codegen.JITCodeLibrary):
        """A callee's code library: its IR is linked into its callers' modules (which
        optimize it with theirs); it is never optimized or emitted on its own, unless
        someone asks for its machine code (then it is finalized as numba would)."""

        def _ensure_finalized(self):
            pass  # linking needs no finalized callee

        def _finalize_now(self):
            if not self._finalized:
                self.finalize()

        def get_pointer_to_function(self, name):
            self._finalize_now()
            return super().get_pointer_to_function(name)

        def serialize_using_object_code(self):
            self._finalize_now()
            return super().serialize_using_object_code()

        def serialize_using_bitcode(self):
            self._finalize_now()
            return super().serialize_using_bitcode()

        def get_asm_str(self):
            self._finalize_now()
            return super().get_asm_str()

        def _get_module_for_linking(self):
            if self._finalized:
                return super()._get_module_for_linking()
            if self._shared_module is not None:
                return self._shared_module
            mod = self._final_module.clone()
            seen = set()
            for lib in self._linking_libraries:  # its own callees, linked the same way
                if lib not in seen:
                    seen.add(lib)
                    self._reload_init.update(lib._reload_init)
                    mod.link_in(lib._get_module_for_linking(), preserve=True)
            for fn in mod.functions:
                if not fn.is_declaration and fn.linkage == codegen.ll.Linkage.external:
                    fn.linkage = "linkonce_odr"  # as numba does: defined in every caller that links it
            self._shared_module = mod
            return mod

    customize = dispatcher._FunctionCompiler._customize_flags
    compile_ = dispatcher.Dispatcher.compile
    compile_result = dispatcher.Dispatcher.get_compile_result

    def _customize_flags(self, flags):
        flags = customize(self, flags)
        if getattr(_COMPILING, "link_only", False):
            _COMPILING.link_only = False  # this compile only, not the ones its typing starts
            flags.no_cpython_wrapper = True
            flags.no_cfunc_wrapper = True
            flags.no_compile = True
        return flags

    def _drop_linked(self, args) -> None:
        done = self.overloads.get(tuple(args))
        if done is not None and isinstance(done.entry_point, _LinkedEntry):
            del self.overloads[tuple(args)]  # compiled again in full for Python

    def compile(self, sig):
        callee = getattr(_COMPILING, "callee", False)
        _COMPILING.callee = False  # the function's own calls are typed as a caller's
        try:
            if not (callee and self._can_compile and _is_project(self)):
                with global_compiler_lock:
                    _drop_linked(self, sigutils.normalize_signature(sig)[0])
                return compile_(self, sig)
            with global_compiler_lock:
                args, return_type = sigutils.normalize_signature(sig)
                args = tuple(args)
                done = self.overloads.get(args)
                if done is not None:
                    return done.entry_point
                cres = self._cache.load_overload(sig, self.targetctx)  # a full build cached before
                if cres is not None:
                    self._cache_hits[sig] += 1
                    self.targetctx.insert_user_function(cres.entry_point, cres.fndesc, [cres.library])
                    self.add_overload(cres)
                    return cres.entry_point
                with ev.trigger_event("numba:compile", data=dict(dispatcher=self, args=args,
                                                                 return_type=return_type)):
                    _COMPILING.link_only = True
                    try:
                        cres = self._compiler.compile(args, return_type)
                    finally:
                        _COMPILING.link_only = False
                cres.library.__class__ = LinkOnlyLibrary
                entry = _LinkedEntry(self.py_func.__qualname__)
                cres = cres._replace(entry_point=entry)
                self.targetctx.insert_user_function(entry, cres.fndesc, [cres.library])
                self.overloads[args] = cres  # for typing and linking; not callable from Python
                return entry
        finally:
            _COMPILING.callee = callee

    def get_compile_result(self, sig):
        with global_compiler_lock:
            _drop_linked(self, tuple(sig.args))
        return compile_result(self, sig)

    dispatcher._FunctionCompiler._customize_flags = _customize_flags
    dispatcher.Dispatcher.compile = compile
    dispatcher.Dispatcher.get_compile_result = get_compile_result
    _LINK_ONLY = True
    return True


def engine_cached(spec) -> bool:
    """Whether numba's cache holds the engine kernels of ``spec`` (a ``GameSpec``): their
    index files exist. False means the first use compiles them (a minute or two)."""
    try:
        from numba.core import config

        if config.DISABLE_JIT:
            return True
        kernels = spec.fast._builder.kernels
        return all(os.path.exists(k._cache._cache_file._index_path) for k in kernels)
    except Exception:  # noqa: BLE001  (a hand-made bundle, another numba: assume warm)
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
        secs = f"{time.perf_counter() - self.t0:.0f} s"
        head, tail = f"numba: {self.total} kernels compiled, {secs}; now ", f" ({done} of the kernels it calls)"
        width = None  # off a terminal: the whole line
        if self._is_tty():  # a line rewritten in place must not wrap (\r clears one line only):
            import shutil   # the words, then the kernel's name from its start, give way

            width = shutil.get_terminal_size((100, 24)).columns - 1
            if len(head) + len(what) + len(tail) > width:
                head, tail = f"numba {self.total}, {secs}: ", f" ({done})"
                room = width - len(head) - len(tail)
                if len(what) > room:
                    what = "\u2026" + what[-max(room - 1, 1):]
        self._write((head + what + tail)[:width])

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
