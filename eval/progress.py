"""Progress of long work: a rich bar on a terminal, plain lines anywhere else.

``Progress(total, label)`` is a context manager with ``advance(n)`` and
``describe(text)``. When stderr is a terminal it is rich's bar (with ETA); when it is not
(a log file, CI, a pipe), rich would print nothing until the end, so it writes one plain
line at the start, then one at most every ``every`` seconds and whenever another tenth of
the work is done, and one at the end: ``label: 120/2,000 (6%) 14 s, ETA 3 min``.

``start``: work done before this run (a resumed training): the bar begins there, and the
ETA counts only the work done since.
"""

from __future__ import annotations

import sys
import time


def _clock(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


class Progress:
    """See the module docstring. ``enabled=False`` shows nothing; ``stream`` (default
    stderr) is where it goes; ``terminal`` forces the choice (None: ask the stream)."""

    def __init__(self, total: int, label: str, enabled: bool = True, stream=None, terminal: bool | None = None,
                 every: float = 10.0, transient: bool = False, start: int = 0):
        self.total = int(total)
        self.label = label
        self.enabled = enabled
        self.stream = stream if stream is not None else sys.stderr
        self.terminal = terminal if terminal is not None else bool(getattr(self.stream, "isatty", lambda: False)())
        self.every = float(every)
        self.transient = transient
        self.start = self.done = min(max(int(start), 0), self.total) if self.total else max(int(start), 0)
        self._rich = None
        self._task = None

    # ------------------------------------------------------------------ context
    def __enter__(self) -> "Progress":
        self._t0 = self._last = time.perf_counter()
        self._last_tenth = 10 * self.done // self.total if self.total else 0
        if not self.enabled:
            return self
        if self.terminal:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn, TimeRemainingColumn
            from rich.progress import Progress as RichProgress

            self._rich = RichProgress(
                TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                TextColumn("ETA"), TimeRemainingColumn(),
                console=Console(file=self.stream, force_terminal=True), transient=self.transient,
            )
            self._rich.__enter__()
            self._task = self._rich.add_task(self.label, total=self.total, completed=self.start)
        else:
            self._line()
        return self

    def __exit__(self, *exc) -> None:
        if self._rich is not None:
            self._rich.__exit__(*exc)
        elif self.enabled and exc[0] is None:
            self._line(final=True)

    # ------------------------------------------------------------------ updates
    def advance(self, n: int = 1) -> None:
        self.done += int(n)
        if not self.enabled:
            return
        if self._rich is not None:
            self._rich.advance(self._task, int(n))
            return
        now = time.perf_counter()
        tenth = 10 * self.done // self.total if self.total else 10
        if now - self._last >= self.every or tenth > self._last_tenth:
            if self.done < self.total:
                self._line()
            self._last_tenth = tenth

    def describe(self, text: str) -> None:
        """A new label for what is running now."""
        self.label = text
        if self._rich is not None:
            self._rich.update(self._task, description=text)

    def _line(self, final: bool = False) -> None:
        now = time.perf_counter()
        self._last = now
        elapsed = now - self._t0
        pct = f" ({100 * self.done / self.total:.0f}%)" if self.total else ""
        text = f"{self.label}: {self.done:,}/{self.total:,}{pct} {_clock(elapsed)}"
        if final:
            text += ", done"
        elif self.start < self.done < self.total:
            text += f", ETA {_clock(elapsed * (self.total - self.done) / (self.done - self.start))}"
        print(text, file=self.stream, flush=True)
