"""Where a warning points: at the user's line, not at a frame inside this package."""

from __future__ import annotations

import inspect
from pathlib import Path

_PACKAGE = str(Path(__file__).resolve().parents[1])


def user_stacklevel() -> int:
    """``stacklevel`` for :func:`warnings.warn` naming the first caller outside the package.

    Counted at the call, so decorators (``@validate_params``) and internal helpers
    between the public function and the ``warn`` do not move the line a warning names.
    """
    frame = inspect.currentframe()
    level = 0
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        frame = frame.f_back
        level += 1
    return max(level, 1)
