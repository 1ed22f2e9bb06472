"""The engine interface: what the plan asks of the place where the rows are.

The plan (:class:`polars_rankeval.plan.job.Job`) never touches the data itself. It asks an
*engine* for a handful of operations:

``schema()``
    The Polars schema of the input (a Spark schema is translated).
``scalars(wanted)``
    Data-wide aggregates in one pass, described by :class:`Scalar` (a small vocabulary
    every engine can compute: row counts, distinct counts, minima, maxima and counts
    of rows matching a predicate). The statistics pass (``n_items``, the rating range,
    the ``gain=exp`` bound) and the row-level value checks are made of these.
``distinct(columns)``
    The distinct values of a few columns, as a small Polars frame on the driver (the
    catalog check, the by groups an explicit user list is crossed with).
``map_users(job, fn, validate=...)``
    Hand every user's rows, all of them in one piece, to ``fn`` (the per-user build of
    :func:`polars_rankeval.plan.build.build`) and collect what it returns: the per-user
    values (concatenated; an engine-native frame) and the partial aggregates of the
    global metrics (merged with their sums, minima and maxima).
``finish(job, outputs)``
    Turn those into the result (:func:`polars_rankeval.plan.finish.finish`), for Spark per
    by group.

The implementations: :class:`polars_rankeval.engines.memory.MemoryEngine` (one lazy Polars plan),
:class:`polars_rankeval.engines.buckets.BucketedEngine` (users hashed into buckets, one
Polars plan per bucket) and :class:`polars_rankeval.api.spark.SparkEngine` (each bucket of
users is one Polars call inside Spark's ``applyInArrow``). All three run the same
checks, statistics, per-user build and summary; they differ only in how rows reach
Polars and how partial results are concatenated.

:func:`polars_rankeval.engines.memory.run` is the one sequence of these operations that every
engine goes through. This module is a bottom layer (it imports nothing of the
package): it holds the vocabulary (:class:`Scalar`, :class:`UserOutputs`) and the
data-wide half of the interface (:class:`Scan`, what the job's statistics need); the
whole protocol, :class:`polars_rankeval.engines.memory.Engine`, names the job and sits beside
:func:`polars_rankeval.engines.memory.run`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

import polars as pl

ScalarOp = Literal["len", "n_unique", "min", "max", "count"]
Predicate = Literal["null", "nan", "inf", "nan_or_inf", "below"]


@dataclass(frozen=True)
class Scalar:
    """One data-wide aggregate, in the vocabulary every engine computes.

    ``op``: ``len`` (rows), ``n_unique`` (distinct values, null counted as one; of a
    tuple of columns: distinct combinations), ``min``, ``max``, or ``count`` (rows
    where ``where`` holds: ``null``, ``nan``, ``inf``, ``nan_or_inf`` or ``below``
    ``bound``). ``as_float`` casts the column to float64 first.
    """

    op: ScalarOp
    column: str | tuple[str, ...] | None = None
    where: Predicate | None = None
    bound: float = 0.0
    as_float: bool = False

    def value(self) -> pl.Expr:
        """The column as the aggregate reads it."""
        if isinstance(self.column, tuple):
            return pl.struct(self.column)
        x = pl.col(str(self.column))
        return x.cast(pl.Float64) if self.as_float else x

    def predicate(self) -> pl.Expr:
        """The row predicate of a ``count`` (Polars)."""
        x = self.value()
        return {
            "null": lambda: x.is_null(),
            "nan": lambda: x.is_nan(),
            "inf": lambda: x.is_infinite(),
            "nan_or_inf": lambda: x.is_nan() | x.is_infinite(),
            "below": lambda: x < self.bound,
        }[str(self.where)]()

    def polars(self) -> pl.Expr:
        """The aggregate as a Polars expression."""
        if self.op == "len":
            return pl.len()
        if self.op == "count":
            return self.predicate().sum()
        x = self.value()
        return {"n_unique": x.n_unique, "min": x.min, "max": x.max}[self.op]()


@dataclass
class UserOutputs:
    """What :meth:`Engine.map_users` returns."""

    per_user: Any
    """The per-user values of every user (a Polars LazyFrame or a Spark DataFrame)."""
    partials: dict[str, list[pl.LazyFrame]]
    """Each global (or item) metric's partial aggregates, to merge."""


class Scan(Protocol):
    """The data-wide operations of an engine (what the job's statistics pass needs)."""

    def schema(self) -> pl.Schema:
        """The input's Polars schema."""
        ...

    def scalars(self, wanted: Mapping[str, Scalar]) -> dict[str, Any]:
        """Every aggregate of ``wanted`` over the whole input, in one pass."""
        ...

    def distinct(self, columns: Sequence[str], *, present: str | None = None) -> pl.LazyFrame:
        """The distinct rows of ``columns`` (small: computed at most once).

        ``present``: over the rows where that column is not null only.
        """
        ...

    def polars_rows(self) -> pl.LazyFrame | None:
        """The input as a Polars LazyFrame, or None when it lives elsewhere (Spark)."""
        ...
