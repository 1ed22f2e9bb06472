"""Type checks of the public arguments, before any of them is used.

Every public entry point (:func:`polars_rankeval.evaluate`, :func:`polars_rankeval.join`,
the ``rankeval`` namespaces, which call ``evaluate``) checks the *types* of its
arguments here first, so a wrong type is a ``TypeError`` (a wrong value of the right
type a ``ValueError``) whose message names the argument and the value it got, instead
of an error from deep inside Python or Polars ("'int' object is not iterable"). The
*values* (a choice among names, a column that must exist, a positive count) are
checked where they are used.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from numbers import Real
from typing import Any

import polars as pl

from polars_rankeval._utils.types import integer
from polars_rankeval.metrics.spec import Metric


def _got(value: Any) -> str:
    text = repr(value)
    if len(text) > 60:
        text = text[:57] + "..."
    return f"{type(value).__name__} {text}"


def column_name(argument: str, value: Any, *, optional: bool = False) -> None:
    """A column name is a non-empty ``str`` (or ``None`` where ``optional``)."""
    if value is None and optional:
        return
    if not isinstance(value, str):
        kind = "a column name (str) or None" if optional else "a column name (str)"
        msg = f"{argument} must be {kind}, got {_got(value)}"
        raise TypeError(msg)
    if not value:
        msg = f"{argument} must name a column, got an empty string"
        raise ValueError(msg)


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


def names(argument: str, value: Any, *, what: str, example: str) -> None:
    """One name (``str``) or a list/tuple of names; ``None`` is left to the caller."""
    if value is None or isinstance(value, str):
        return
    if isinstance(value, Mapping) or not isinstance(value, Iterable):
        msg = f"{argument} must be {what} or a list of them, e.g. {example}, got {_got(value)}"
        raise TypeError(msg)
    for entry in value:
        if not isinstance(entry, str):
            msg = f"{argument} must be {what} or a list of them, got an entry {_got(entry)}"
            raise TypeError(msg)


def metrics(value: Any) -> None:
    """``metrics``: a metric name, a :class:`Metric`, or a list of them."""
    example = "'ndcg@10' or ['ndcg@10', 'recall@20']"
    if isinstance(value, str | Metric):
        return
    if value is None or isinstance(value, Mapping) or not isinstance(value, Iterable):
        msg = f"metrics must be a metric name or a list of metric names, e.g. {example}, got "
        raise TypeError(msg + _got(value))
    # Entries are checked by parse_metric ("a metric must be a string ..., got int").


def by(value: Any) -> None:
    """``by``: ``None``, a column name, or a list of column names."""
    names("by", value, what="a column name (str)", example="by='system'")


def users(value: Any) -> None:
    """``users``: a universe name, a list/Series of ids, or a DataFrame with the user column."""
    if isinstance(value, str | pl.Series | pl.DataFrame):
        return
    if isinstance(value, pl.LazyFrame):
        msg = (
            "users must be 'truth', 'recs', 'both', 'all', a list or Series of user ids or a "
            "DataFrame with the user column, got a LazyFrame; collect it first "
            "(users=lf.collect())"
        )
        raise TypeError(msg)
    if value is None or isinstance(value, Mapping | bytes) or not isinstance(value, Iterable):
        msg = (
            "users must be 'truth', 'recs', 'both', 'all', a list or Series of user ids or a "
            f"DataFrame with the user column, got {_got(value)}"
        )
        raise TypeError(msg)


def aggregate(value: Any) -> None:
    """``aggregate``: an aggregation name or a list of them."""
    if value is None:
        msg = "aggregate must be an aggregation name such as 'mean' or a list of them, got None"
        raise TypeError(msg)
    names("aggregate", value, what="an aggregation name (str)", example="['mean', 'median']")


def rating_range(value: Any) -> None:
    """``rating_range``: ``None`` or a pair ``(low, high)`` of real numbers."""
    if value is None:
        return
    if isinstance(value, str | bytes | Mapping) or not isinstance(value, Iterable):
        msg = f"rating_range must be a pair (low, high) of numbers, got {_got(value)}"
        raise TypeError(msg)
    pair = list(value)
    if len(pair) != 2:
        msg = f"rating_range must be a pair (low, high), got {len(pair)} value(s): {value!r}"
        raise ValueError(msg)
    for bound in pair:
        if isinstance(bound, bool) or not isinstance(bound, Real):
            msg = f"rating_range must be a pair (low, high) of numbers, got {_got(bound)} in it"
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


def columns(
    *, user: Any, item: Any, score: Any, relevance: Any, rank: Any, relevance_optional: bool
) -> None:
    """The column-name arguments shared by ``evaluate`` and ``join``."""
    column_name("user", user)
    column_name("item", item)
    column_name("score", score, optional=True)
    column_name("relevance", relevance, optional=relevance_optional)
    column_name("rank", rank, optional=True)
