"""Absolute positions from a rank column: ``evaluate(rank=..., rank_positions="absolute")``.

By default the ranks given with ``rank=`` only order a user's items: they are
renumbered 1..n, so a user whose items sit at ranks 3 and 9 has them at positions 1
and 2. RecTools reads ranks as *absolute* positions with gaps (an item at rank 9 is
outside ``mrr@3``, and ``precision@10`` counts it at position 9): with
``rank_positions="absolute"`` the positions are the ranks themselves.

Every position-based kernel must then see positions that may exceed the number of
recommended rows. The kernels written against the position features of
:class:`polars_rankeval.metrics.features.Features` (``o``, ``a``, ``p_in``, ``gmean_pos``,
:func:`polars_rankeval.metrics._common.list_size`) do; kernels that index lists by
position (the curve kernels of :mod:`polars_rankeval.metrics.cutoff_kernels`, the sorted-head
path of :mod:`polars_rankeval.plan.head`, ``err``, the TREC gain metrics, ``gini``,
pairwise and correlation statistics, ...) do not, so absolute positions are limited to
the metrics of :func:`absolute_metrics` (each audited for it), and the other paths are
turned off (:meth:`polars_rankeval.plan.job.Job.curve_groups`,
:func:`polars_rankeval.plan.head.applies`).

The ranks must define the positions: :func:`check_ranks` refuses ranks below 1,
non-integer ranks and two items at the same rank of one user (with absolute positions
a tie has no meaning), naming the column and an offending value; a repeated rank is
accepted only when every requested metric reads top-k membership alone
(:func:`repeat_safe_metrics`: coverage, recall, hit_rate and the counts), as RecTools reads it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, get_args

import polars as pl

from polars_rankeval._utils.types import Columns
from polars_rankeval.metrics.registry import registered

RankPositions = Literal["relative", "absolute"]
"""How ``rank=`` values become positions.

``"relative"``
    (default) The ranks order each user's items, which take the positions 1..n
    (gaps closed, equal ranks tied).
``"absolute"``
    The ranks are the positions, gaps kept (RecTools): an item at rank 9 is at
    position 9. Ranks must be integers >= 1, distinct within a user unless every
    metric reads top-k membership only (:func:`repeat_safe_metrics`).
"""

RANK_POSITIONS: tuple[str, ...] = get_args(RankPositions)

Problem = tuple[int, Any] | None
"""How many rows have a problem, and one offending value."""
Duplicate = tuple[int, dict[str, Any]] | None
"""How many rows repeat a rank of their user, and one (by, user, rank) key."""


def absolute_metrics() -> tuple[str, ...]:
    """The metrics evaluated with absolute positions, sorted (``absolute_positions=True``).

    Declared with each metric (:class:`~polars_rankeval.metrics.spec.MetricSpec`): its
    kernel reads positions only through the position features, never as list indices.
    Under absolute positions the list size L of ``precision(denominator=retrieved)``,
    ``num_ret@k`` and the contingency table of the classification metrics is the number
    of recommended items ranked within the top k.
    """
    return tuple(sorted(name for name, s in registered().items() if s.absolute_positions))


def repeat_safe_metrics() -> tuple[str, ...]:
    """The metrics that accept a rank repeated within a user under absolute positions.

    Declared with each metric (``repeated_ranks=True``). They read only whether an
    item's rank is <= k (membership of the top k), which a rank shared by several items
    still defines, and their values stay within their bounds. RecTools reads repeated
    ranks so (its own ``CatalogCoverage`` test gives user 2 two items at rank 1).
    Order-sensitive metrics and those dividing by k (more than k items may share the top
    k) refuse a repeated rank.
    """
    return tuple(sorted(name for name, s in registered().items() if s.repeated_ranks))


def check_metrics(names: Sequence[tuple[str, str]]) -> None:
    """Refuse metrics not in :func:`absolute_metrics`; ``names``: (spec name, metric)."""
    supported = absolute_metrics()
    refused = [metric for spec, metric in names if spec not in supported]
    if refused:
        msg = (
            f"rank_positions='absolute' does not support metric(s) {', '.join(refused)} "
            "(their kernels index the list by position); supported: "
            f"{', '.join(supported)}"
        )
        raise ValueError(msg)


def check_rank_given(cols: Columns) -> None:
    """Absolute positions come from a rank column, not from scores."""
    if cols.rank is None:
        msg = (
            "rank_positions='absolute' reads positions from a rank column: pass rank= "
            "(with score=None)"
        )
        raise ValueError(msg)


def check_dtype(schema: Any, cols: Columns) -> None:
    """The rank column must hold integers (or floats with integer values)."""
    check_rank_given(cols)
    dtype = schema[cols.order]  # the rank column
    if not (dtype.is_integer() or dtype.is_float()):
        msg = (
            f"rank column {cols.order!r} must hold integer ranks for "
            f"rank_positions='absolute', got dtype {dtype}"
        )
        raise TypeError(msg)


def check_ranks(
    data: Any, cols: Columns, by: list[str], metrics: Sequence[str] | None = None
) -> None:
    """Refuse ranks below 1, non-integer ranks and a rank repeated within a user.

    ``data``: a Polars LazyFrame or a Spark DataFrame. One aggregation over the rows
    and one over (by, user, rank), run at the call (also with ``validate=False``:
    without them the positions are not defined). A repeated rank is accepted when
    every metric of ``metrics`` (registry names) is in :func:`repeat_safe_metrics`.
    """
    rank = cols.rank
    if rank is None:
        msg = "rank_positions='absolute' reads positions from a rank column: pass rank="
        raise ValueError(msg)
    keys = [*by, cols.user]
    if not hasattr(data, "collect_schema") and hasattr(data, "groupBy"):
        below, fraction, duplicate = _spark_problems(data, rank, keys)
    else:
        below, fraction, duplicate = _polars_problems(data, rank, keys)
    if below is not None:
        count, value = below
        msg = (
            f"rank column {rank!r} has {count} value(s) below 1 (e.g. {value!r}); "
            "rank_positions='absolute' needs ranks 1, 2, ... (1 = best)"
        )
        raise ValueError(msg)
    if fraction is not None:
        count, value = fraction
        msg = (
            f"rank column {rank!r} has {count} non-integer value(s) (e.g. {value!r}); "
            "rank_positions='absolute' reads ranks as positions"
        )
        raise ValueError(msg)
    repeat_safe = repeat_safe_metrics()
    safe = bool(metrics) and all(name in repeat_safe for name in metrics or ())
    if duplicate is not None and not safe:
        count, example = duplicate
        where = ", ".join(f"{k}={v!r}" for k, v in example.items())
        msg = (
            f"rank column {rank!r} repeats a rank within a user {count} time(s) (e.g. "
            f"{where}); with rank_positions='absolute' each rank is one position, so "
            "the ranks of a user must be distinct for "
            f"{', '.join(sorted(set(metrics or ()) - set(repeat_safe))) or 'these metrics'} "
            "(RecTools does not check: its MAP then counts the hits of a repeated rank "
            "once, its NDCG can exceed 1). A repeated rank is accepted when every metric "
            f"only reads top-k membership ({', '.join(repeat_safe)}); to read equal "
            "ranks as tied items use rank_positions='relative' (ties= decides)"
        )
        raise ValueError(msg)


def _polars_problems(
    lf: pl.LazyFrame, rank: str, keys: list[str]
) -> tuple[Problem, Problem, Duplicate]:
    col = pl.col(rank)
    ranked = lf.filter(col.is_not_null())
    is_float = lf.collect_schema()[rank].is_float()
    bad_fraction = (~col.is_finite() | (col != col.floor())) if is_float else pl.lit(False)
    stats = ranked.select(
        below=(col < 1).sum(),
        below_value=col.filter(col < 1).first(),
        fraction=bad_fraction.sum(),
        fraction_value=col.filter(bad_fraction).first(),
    )
    count = "__prk_rank_count"
    dups = (
        ranked.group_by([*keys, rank])
        .agg(pl.len().alias(count))
        .filter(pl.col(count) > 1)
        .sort([*keys, rank], nulls_last=True)
    )
    found, repeated = pl.collect_all([stats, dups])
    row = found.row(0, named=True)
    below = (int(row["below"]), row["below_value"]) if row["below"] else None
    fraction = (int(row["fraction"]), row["fraction_value"]) if row["fraction"] else None
    duplicate = None
    if repeated.height:
        extra = int(repeated.get_column(count).sum() - repeated.height)
        first = repeated.row(0, named=True)
        duplicate = (extra, {k: first[k] for k in [*keys, rank]})
    return below, fraction, duplicate


def _spark_problems(data: Any, rank: str, keys: list[str]) -> tuple[Problem, Problem, Duplicate]:
    from pyspark.sql import functions as F  # noqa: N812

    col = F.col(rank)
    ranked = data.filter(col.isNotNull())
    is_float = dict(data.dtypes)[rank] in ("float", "double")
    bad_fraction = (F.isnan(col) | (col != F.floor(col))) if is_float else F.lit(False)
    row = ranked.agg(
        F.sum((col < 1).cast("long")).alias("below"),
        F.min(F.when(col < 1, col)).alias("below_value"),
        F.sum(bad_fraction.cast("long")).alias("fraction"),
        F.min(F.when(bad_fraction, col)).alias("fraction_value"),
    ).first()
    below = (int(row["below"]), row["below_value"]) if row and row["below"] else None
    fraction = (int(row["fraction"]), row["fraction_value"]) if row and row["fraction"] else None
    counts = ranked.groupBy(*keys, rank).count().filter(F.col("count") > 1)
    summary = counts.agg(F.sum(F.col("count") - 1).alias("extra")).first()
    duplicate = None
    if summary is not None and summary["extra"]:
        first = counts.orderBy(*keys, rank).first()
        duplicate = (int(summary["extra"]), {k: first[k] for k in [*keys, rank]})
    return below, fraction, duplicate
