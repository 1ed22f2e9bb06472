"""Rating prediction error (Schröder et al. 4.1; the book chapter's RMSE).

Between the predicted score and the true rating (the relevance column) over the *rated*
rows: rows with both a score and a relevance. A null relevance (unrated) and a null
score (not predicted) are left out. The score must be a predicted rating: with
``rank=`` these metrics raise.

Two averages (``average=``):

* ``"user"`` (default): the error of each user over their rated rows, then the mean
  over users in the summary, like every other metric: each user weighs the same
  whatever the number of ratings, the value exists per user (``per_user=True``), and
  the summary's means are over the same users as the other metrics' (``empty=``).
  Null for a user without a rated row.
* ``"global"``: one error over all rated rows of a ``by`` group (the Netflix prize's
  RMSE), so users with many ratings weigh more. Computed as partial sums and counts
  (:class:`~polars_rankeval.metrics.spec.GlobalPlan`); a value of the summary only.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Literal

import polars as pl

from polars_rankeval.metrics._common import defined_if, partial_sums
from polars_rankeval.metrics.features import Features
from polars_rankeval.metrics.registry import register
from polars_rankeval.metrics.spec import GlobalPlan, Public

FAMILY = "rating"
Average = Annotated[
    Literal["user", "global"],
    "the error per user, then the mean over users; or over all rated rows (summary only)",
]
Low = Annotated[
    float | None,
    "lower end of the rating scale; evaluate takes the lowest relevance of the input if none",
]
High = Annotated[
    float | None,
    "upper end of the rating scale; evaluate takes the highest relevance of the input if none",
]
# The expressions take a score (predicted ratings), never a rank, and no average=global.
PUBLIC = Public(omit=("average",), rank=False)
GLOBAL = ("average", "global")
"""The option value under which the kernels return a GlobalPlan (one value per by group)."""
Finish = Callable[[pl.Expr], pl.Expr]


def _error(f: Features, metric: str, squared: bool) -> pl.Expr:
    """|score - rating| or its square on rated rows, null on the others."""
    cols = f.cols
    if cols.rank is not None:
        msg = (
            f"metric {metric!r} compares predicted ratings with true ones and needs a "
            f"score column, got rank={cols.rank!r}"
        )
        raise ValueError(msg)
    diff = pl.col(cols.order).cast(pl.Float64) - pl.col(cols.relevance).cast(pl.Float64)
    return diff * diff if squared else diff.abs()


def _plan(
    f: Features, metric: str, average: Average, *, squared: bool, finish: Finish
) -> pl.Expr | GlobalPlan:
    """Mean error per user (an expression) or over all rated rows per by group."""
    error = _error(f, metric, squared)
    if average == "user":
        # Null errors (unrated rows) are skipped by the mean; null without a rated row.
        return finish(error.mean())
    by = f.by
    parts = {"total": error.sum(), "count": error.count().cast(pl.Float64)}

    def partial(rows: pl.LazyFrame) -> pl.LazyFrame:
        return partial_sums(rows, by, parts)

    def finalize(merged: pl.LazyFrame, by_cols: list[str]) -> pl.LazyFrame:
        count = pl.col("count")
        value = finish(defined_if(count > 0, pl.col("total") / count)).alias("value")
        return merged.select(*by_cols, value).sort(by_cols) if by_cols else merged.select(value)

    return GlobalPlan(partial, (), {"total": "sum", "count": "sum"}, finalize)


def _identity(x: pl.Expr) -> pl.Expr:
    return x


def _sqrt(x: pl.Expr) -> pl.Expr:
    return x.sqrt()


# --------------------------------------------------------------------------- kernels
@register(
    "mae",
    family=FAMILY,
    global_when=GLOBAL,
    takes_k=False,
    normalized=False,
    higher_is_better=False,
    public=PUBLIC,
    summary="Mean absolute error between predicted score and true rating.",
    definition=(
        "mean of |score - relevance| over the rows with both; average=user (default): per "
        "user, then the mean over users; average=global: over all rated rows of the by "
        "group (summary only). Null without a rated row. Needs a score, not rank=."
    ),
    doc="""
    Mean absolute error of one user's predicted ratings.

    Over the rows with both a score (the predicted rating) and a relevance (the true
    rating). This is the per-user error (``average="user"``); the error over all rows
    at once is ``mae(average=global)`` in :func:`polars_rankeval.evaluate`.

    Examples
    --------
    Errors 0.5, 1 and 0 (item D has no prediction, item E no rating).

    >>> import polars as pl
    >>> import polars_rankeval as prk
    >>> df = pl.DataFrame({"user": [1] * 5, "item": list("ABCDE"),
    ...                    "score": [3.5, 2.0, 5.0, None, 4.0],
    ...                    "relevance": [4, 3, 5, 2, None]})
    >>> df.select(prk.mae()).item() == (0.5 + 1 + 0) / 3
    True
    """,
)
def _mae(f: Features, k: None, *, average: Average = "user") -> pl.Expr | GlobalPlan:
    return _plan(f, "mae", average, squared=False, finish=_identity)


@register(
    "mse",
    family=FAMILY,
    global_when=GLOBAL,
    takes_k=False,
    normalized=False,
    higher_is_better=False,
    public=PUBLIC,
    summary="Mean squared error between predicted score and true rating.",
    definition=(
        "mean of (score - relevance)^2 over the rows with both; average as for mae. Null "
        "without a rated row. Needs a score, not rank=."
    ),
    doc="""
    Mean squared error of one user's predicted ratings.

    Examples
    --------
    >>> import polars as pl
    >>> import polars_rankeval as prk
    >>> df = pl.DataFrame({"user": [1] * 5, "item": list("ABCDE"),
    ...                    "score": [3.5, 2.0, 5.0, None, 4.0],
    ...                    "relevance": [4, 3, 5, 2, None]})
    >>> df.select(prk.mse()).item() == (0.5**2 + 1**2 + 0**2) / 3
    True
    """,
)
def _mse(f: Features, k: None, *, average: Average = "user") -> pl.Expr | GlobalPlan:
    return _plan(f, "mse", average, squared=True, finish=_identity)


@register(
    "rmse",
    family=FAMILY,
    global_when=GLOBAL,
    takes_k=False,
    normalized=False,
    higher_is_better=False,
    public=PUBLIC,
    summary="Root mean squared error between predicted score and true rating.",
    definition=(
        "sqrt(mse): per user, then the mean of the users' RMSE (average=user, default), or "
        "the square root of the global MSE of the by group (average=global, summary only). "
        "Null without a rated row. Needs a score, not rank=."
    ),
    doc="""
    Root mean squared error of one user's predicted ratings.

    Its mean over users is the default summary of ``rmse``; ``rmse(average=global)``
    in :func:`polars_rankeval.evaluate` is the RMSE over all rated rows at once.

    Examples
    --------
    >>> import polars as pl
    >>> import polars_rankeval as prk
    >>> df = pl.DataFrame({"user": [1] * 5, "item": list("ABCDE"),
    ...                    "score": [3.5, 2.0, 5.0, None, 4.0],
    ...                    "relevance": [4, 3, 5, 2, None]})
    >>> df.select(prk.rmse()).item() == ((0.5**2 + 1**2 + 0**2) / 3) ** 0.5
    True
    """,
)
def _rmse(f: Features, k: None, *, average: Average = "user") -> pl.Expr | GlobalPlan:
    return _plan(f, "rmse", average, squared=True, finish=_sqrt)


@register(
    "nmae",
    family=FAMILY,
    global_when=GLOBAL,
    takes_k=False,
    normalized=False,
    needs=("rating_range",),
    needs_met_by=("low", "high"),
    higher_is_better=False,
    public=Public(omit=("average",), required=("low", "high"), rank=False),
    summary="Mean absolute error divided by the rating range.",
    definition=(
        "mae / (high - low), the range of the rating scale; a bound not given is the "
        "minimum / maximum relevance over the judged rows of the whole input (evaluate's "
        "rating_range=); high > low (an error when both are given, null when "
        "a bound from the data leaves an empty range). average as for mae. Null without a "
        "rated row. Needs a score, not rank=."
    ),
    doc="""
    Normalised mean absolute error: MAE divided by the rating range ``high - low``.

    A stand-alone expression sees one user's rows only, so the rating range is
    required here; :func:`polars_rankeval.evaluate` derives a missing bound from the
    whole data.

    Examples
    --------
    >>> import polars as pl
    >>> import polars_rankeval as prk
    >>> df = pl.DataFrame({"user": [1] * 5, "item": list("ABCDE"),
    ...                    "score": [3.5, 2.0, 5.0, None, 4.0],
    ...                    "relevance": [4, 3, 5, 2, None]})
    >>> df.select(prk.nmae(low=1, high=5)).item() == (0.5 + 1 + 0) / 3 / (5 - 1)
    True
    """,
)
def _nmae(
    f: Features,
    k: None,
    *,
    average: Average = "user",
    low: Low = None,
    high: High = None,
) -> pl.Expr | GlobalPlan:
    if low is not None and high is not None and not high > low:
        msg = f"metric 'nmae' needs high > low, got low={low!r}, high={high!r}"
        raise ValueError(msg)
    if low is None or high is None:
        data_low, data_high = f.rating_range
        low = data_low if low is None else low
        high = data_high if high is None else high
    # A bound from the data may leave an empty range (low=4 with ratings up to 3): the
    # value is then undefined rather than an error, since evaluate plans the metric with
    # placeholder statistics before it reads the data.
    span = float(high - low)

    def finish(mae: pl.Expr) -> pl.Expr:
        return mae / span if span > 0 else pl.lit(None, dtype=pl.Float64)

    return _plan(f, "nmae", average, squared=False, finish=finish)
