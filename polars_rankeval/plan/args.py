"""Type checks of evaluate's run options (strategy, n_buckets, temp_dir, progress).

Every other public argument is declared once, next to its function, with
:func:`polars_rankeval._utils.constraints.validate_params`, which raises for it; these
checks remain for the run options until they are folded into one ``engine=`` argument.
A wrong type is a ``TypeError`` naming the argument and the value it got.
"""

from __future__ import annotations

import os
from typing import Any

from polars_rankeval._utils.types import integer


def _got(value: Any) -> str:
    text = repr(value)
    if len(text) > 60:
        text = text[:57] + "..."
    return f"{type(value).__name__} {text}"


def flag(argument: str, value: Any, *, optional: bool = False) -> None:
    """A flag is ``True`` or ``False`` (or ``None`` where ``optional``)."""
    if value is None and optional:
        return
    if not isinstance(value, bool):
        kind = "True, False or None" if optional else "True or False"
        msg = f"{argument} must be {kind}, got {_got(value)}"
        raise TypeError(msg)


def choice(argument: str, value: Any) -> None:
    """A choice among names is a ``str`` (which name is checked by ``check_choice``)."""
    if not isinstance(value, str):
        msg = f"{argument} must be a str naming one of its choices, got {_got(value)}"
        raise TypeError(msg)


def count(argument: str, value: Any) -> int | None:
    """An optional count (``n_buckets``): ``None`` or an integer (its range is checked later).

    The integer as a Python ``int`` (a NumPy integer is accepted, see
    :func:`polars_rankeval._utils.types.integer`).
    """
    if value is None:
        return None
    return integer(argument, value, what="a positive integer or None")


def path(argument: str, value: Any) -> None:
    """An optional path: ``None``, a ``str`` or an ``os.PathLike``."""
    if value is None or isinstance(value, str | os.PathLike):
        return
    msg = f"{argument} must be a path (str or os.PathLike) or None, got {_got(value)}"
    raise TypeError(msg)
