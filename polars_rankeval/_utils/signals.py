"""SIGTERM and SIGINT around work that must clean up: temporary files, partial output.

SIGTERM's default action kills the process without running ``finally`` blocks;
:func:`sigterm_exits` turns it into ``SystemExit(143)`` so that they run. Used by the
command line (around a whole command) and by the bucketed engine (around its temporary
directory); when both are active, the outer one's handler stays.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from types import FrameType
from typing import Any

TERMINATED_EXIT = 128 + signal.SIGTERM
"""The exit status after SIGTERM (143), as a shell reports a process killed by it."""


def in_main_thread() -> bool:
    """Whether signal handlers can be set here (only the main thread can)."""
    return threading.current_thread() is threading.main_thread()


def terminate(signum: int, frame: FrameType | None) -> None:
    """The SIGTERM handler of :func:`sigterm_exits`: ``SystemExit(143)``."""
    raise SystemExit(TERMINATED_EXIT)


@contextlib.contextmanager
def sigterm_exits() -> Iterator[None]:
    """SIGTERM raises ``SystemExit(143)`` while the block runs, so that ``finally`` runs.

    Only in the main thread (where handlers can be set) and when no other handler is
    installed (an outer block's, or the caller's own); the default is restored after,
    unless the handler was replaced meanwhile.
    """
    own = in_main_thread() and signal.getsignal(signal.SIGTERM) == signal.SIG_DFL
    if own:
        signal.signal(signal.SIGTERM, terminate)
    try:
        yield
    finally:
        if own and signal.getsignal(signal.SIGTERM) is terminate:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)


@contextlib.contextmanager
def deferred_signals() -> Iterator[None]:
    """Hold SIGINT and SIGTERM back while the block runs, then deliver them once.

    Only the main thread can set signal handlers; elsewhere the block runs as is
    (Python runs signal handlers in the main thread anyway).
    """
    if not in_main_thread():
        yield
        return
    received: list[int] = []

    def hold(signum: int, frame: FrameType | None) -> None:
        received.append(signum)

    previous: dict[int, Any] = {}
    try:
        for sig in (signal.SIGINT, signal.SIGTERM):
            # None: a handler set outside Python, which could not be restored.
            if signal.getsignal(sig) is not None:
                previous[sig] = signal.signal(sig, hold)
        yield
    finally:
        for held, handler in previous.items():
            signal.signal(held, handler)
        if received:
            # Through the restored handler: KeyboardInterrupt for SIGINT by default.
            signal.raise_signal(received[0])
