"""Progress of a long run on stderr: steps done, elapsed time and an estimate of the time left.

One reporter for the bucketed engine (buckets evaluated, rows read) and for the
resampling tests of ``compare`` (resamples drawn): a ``tqdm`` bar when it is installed,
otherwise a line of the caller's wording, rewritten in place (a carriage return) on a
terminal, one plain line per step elsewhere (a log file, a pipe, a CI log) so that the
log stays readable.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any, TextIO

Line = Callable[["Progress", str], str]
"""The caller's wording of one progress line, from the reporter and the step's label."""


class Progress:
    """Steps done on ``stream`` (stderr by default), with elapsed and left time.

    Parameters
    ----------
    total
        The number of steps expected (:meth:`set_total` changes it once known).
    enabled
        Whether anything is shown; a disabled reporter only counts.
    stream
        Where to write; ``None`` is standard error.
    line
        The text of a line (without the bar): see :data:`Line`.
    unit, desc
        The bar's unit and description.
    interactive
        Whether the stream is treated as a terminal (a bar, a line rewritten in place);
        ``None`` asks the stream (``isatty``).
    every
        The least time in seconds between two lines (the last step is always shown).
    """

    def __init__(
        self,
        total: int,
        enabled: bool,
        stream: TextIO | None = None,
        *,
        line: Line,
        unit: str,
        desc: str,
        interactive: bool | None = None,
        every: float = 0.0,
    ) -> None:
        self.total = total
        self.enabled = enabled
        self.stream = stream or sys.stderr
        self.start = time.perf_counter()
        self.rows = 0
        self.done = 0
        self._line = line
        self._every = every
        self._last = 0.0
        self._open = False  # a line written in place, not ended yet
        self._bar: Any = None
        if interactive is None:
            isatty = getattr(self.stream, "isatty", None)
            interactive = bool(isatty is not None and isatty())
        self.interactive = interactive
        if enabled and self.interactive:
            try:
                from tqdm.auto import tqdm  # type: ignore[import-untyped]
            except ImportError:
                tqdm = None
            if tqdm is not None:
                self._bar = tqdm(total=total, unit=unit, file=self.stream, desc=desc)

    @property
    def elapsed(self) -> float:
        """Seconds since the start."""
        return time.perf_counter() - self.start

    def left(self, elapsed: float) -> float:
        """Seconds left at the pace so far (0 before any step)."""
        return elapsed / self.done * (self.total - self.done) if self.done and elapsed else 0.0

    def message(self, text: str) -> None:
        """A line of its own (``[polars-rankeval] text``), when enabled."""
        if self.enabled:
            print(f"[polars-rankeval] {text}", file=self.stream, flush=True)

    def set_total(self, total: int) -> None:
        """The number of steps, once known (e.g. buckets after partitioning)."""
        self.total = total
        if self._bar is not None:
            self._bar.total = total
            self._bar.refresh()

    def step(self, rows: int = 0, label: str = "", *, n: int = 1) -> None:
        """Record ``n`` more steps (and ``rows`` more rows); ``label`` names the current work."""
        self.done += n
        self.rows += rows
        if not self.enabled:
            return
        if self._bar is not None:
            if label:
                self._bar.set_postfix_str(label, refresh=False)
            else:
                self._bar.set_postfix(rows=f"{self.rows:,}")
            self._bar.update(n)
            return
        now = time.perf_counter()
        if now - self._last < self._every and self.done < self.total:
            return
        self._last = now
        text = self._line(self, label)
        if not self.interactive:  # a log file: one plain line per step
            print(text, file=self.stream, flush=True)
            return
        last = self.done >= self.total
        print("\r" + text, end="\n" if last else "", file=self.stream, flush=True)
        self._open = not last

    def close(self) -> None:
        """End the bar, or the line left open on a terminal."""
        if self._bar is not None:
            self._bar.close()
        elif self._open:
            print(file=self.stream, flush=True)
            self._open = False
