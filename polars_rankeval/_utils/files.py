"""Writing a file whole or not at all (the command line's outputs, the TREC writers)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path


def write_atomically(path: str | Path, write: Callable[[Path], object]) -> None:
    """Write ``path`` through ``write`` without ever leaving a half-written file.

    ``write`` gets a temporary path in the same directory (``NAME.PID.partial``), which
    is renamed over ``path`` once complete (``os.replace``: atomic on one file system).
    If ``write`` fails (a full disk, Ctrl-C, a renderer error), the temporary file is
    removed and a file already at ``path`` is left as it was.

    Parameters
    ----------
    path
        The file to write.
    write
        Writes the whole content to the path it is given (its name does not end in the
        target's extension: a writer that picks the format by extension must be told).

    Examples
    --------
    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "out.txt"
    >>> write_atomically(path, lambda p: p.write_text("done"))
    >>> path.read_text(), sorted(q.name for q in path.parent.iterdir())
    ('done', ['out.txt'])
    """
    target = Path(path)
    partial = target.with_name(f"{target.name}.{os.getpid()}.partial")
    try:
        write(partial)
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)
