"""``evaluate`` (many metrics, one lazy plan) and ``join`` (recommendations + truth)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, overload

import polars as pl

from polars_rankeval._features import Features
from polars_rankeval._types import (
    EMPTY_POLICIES,
    TIE_POLICIES,
    USER_UNIVERSES,
    EmptyPolicy,
    TiePolicy,
    UserUniverse,
    check_choice,
    make_columns,
)
from polars_rankeval._validate import check_schema, check_values, to_lazy
from polars_rankeval.registry import Metric, parse_metric

_HAS_TRUTH = "__prk_has_truth"
_HAS_RECS = "__prk_has_recs"
RESERVED = ("n_users", "n_skipped")

MetricsArg = str | Metric | Iterable[str | Metric]
UsersArg = UserUniverse | Sequence[Any] | pl.Series | pl.DataFrame


def parse_metrics(metrics: MetricsArg) -> list[Metric]:
    """Parse one metric or a list of metrics; reject empty lists and duplicates."""
    items = [metrics] if isinstance(metrics, str | Metric) else list(metrics)
    if not items:
        msg = "metrics must name at least one metric, e.g. ['ndcg@10', 'recall@20']"
        raise ValueError(msg)
    parsed = [parse_metric(m) for m in items]
    seen: set[str] = set()
    for metric in parsed:
        if metric.name in seen:
            msg = f"metric {metric.name!r} is requested twice"
            raise ValueError(msg)
        seen.add(metric.name)
    return parsed


@overload
def evaluate(
    data: pl.LazyFrame,
    metrics: MetricsArg,
    *,
    user: str = ...,
    item: str = ...,
    score: str | None = ...,
    relevance: str = ...,
    rank: str | None = ...,
    ties: TiePolicy = ...,
    by: str | Sequence[str] | None = ...,
    per_user: bool = ...,
    users: UsersArg = ...,
    empty: EmptyPolicy = ...,
    validate: bool = ...,
) -> pl.LazyFrame: ...
@overload
def evaluate(
    data: pl.DataFrame | Any,
    metrics: MetricsArg,
    *,
    user: str = ...,
    item: str = ...,
    score: str | None = ...,
    relevance: str = ...,
    rank: str | None = ...,
    ties: TiePolicy = ...,
    by: str | Sequence[str] | None = ...,
    per_user: bool = ...,
    users: UsersArg = ...,
    empty: EmptyPolicy = ...,
    validate: bool = ...,
) -> pl.DataFrame: ...


def evaluate(
    data: Any,
    metrics: MetricsArg,
    *,
    user: str = "user",
    item: str = "item",
    score: str | None = None,
    relevance: str = "relevance",
    rank: str | None = None,
    ties: TiePolicy = "expected",
    by: str | Sequence[str] | None = None,
    per_user: bool = False,
    users: UsersArg = "truth",
    empty: EmptyPolicy = "skip",
    validate: bool = True,
) -> pl.DataFrame | pl.LazyFrame:
    """Evaluate many metrics in one lazy plan.

    Ranking within each user, tie groups and relevant counts are computed once, as
    window columns, and shared by every requested metric; the metrics then reduce one
    user's rows with scalar sums in a single ``group_by``.

    Parameters
    ----------
    data
        The long frame: one row per (user, item) with a score (or rank) and a
        relevance. A null score marks a judged item that was not recommended; a null
        relevance means not relevant. Polars DataFrame / LazyFrame, pyarrow Table or
        pandas DataFrame. Build it with :func:`join` from separate tables.
    metrics
        Metric names in the grammar ``name[(key=value,...)][@k]``, e.g.
        ``["ndcg@10", "precision(rel=2)@5"]``; see :func:`list_metrics`.
    user, item, score, relevance, rank
        Column names; ``score`` defaults to ``"score"``. Pass ``rank=`` (1 = best)
        instead of ``score=``.
    ties
        ``"expected"`` (default: exact expectation over the orderings of tied scores),
        ``"item_desc"`` (trec_eval), ``"item_asc"``, ``"optimistic"``, ``"pessimistic"``.
    by
        Extra grouping columns (e.g. ``"system"``): every metric is computed per
        (by, user) and summarised per by-group, in the same pass.
    per_user
        Return one row per (by, user) with one column per metric instead of the summary.
    users
        Which users are evaluated: ``"truth"`` (default; users with at least one judged
        row, i.e. a non-null relevance), ``"recs"`` (users with a recommendation),
        ``"both"``, ``"all"`` (every user in the data), or an explicit list of user ids
        (users absent from the data are included, without relevant items).
    empty
        What an undefined value becomes (a user without relevant items, ...):
        ``"skip"`` (default: the user is left out of the means and counted in
        ``n_skipped``),
        ``"zero"`` (counts as 0), ``"error"`` (raise ``ValueError`` naming the users;
        this collects the per-user result once, also for a LazyFrame).
    validate
        Check the input values first (null ids, NaN/inf scores, negative or NaN
        relevance, duplicate (user, item) rows). This scans the data once; pass
        ``False`` to skip it in a trusted pipeline.

    Returns
    -------
    polars.DataFrame or polars.LazyFrame
        LazyFrame in, LazyFrame out; anything else in, DataFrame out. The summary has
        the by-columns, one mean column per metric (named by its canonical string),
        ``n_users`` (users evaluated) and ``n_skipped`` (users with an undefined value
        for at least one requested metric: ``empty="skip"`` leaves them out of every
        mean of the row, so all means are over the same ``n_users - n_skipped`` users).

    Examples
    --------
    >>> import polars as pl
    >>> import polars_rankeval as prk
    >>> df = pl.DataFrame({
    ...     "user": [1, 1, 1, 1, 1, 2, 2, 3],
    ...     "item": [1, 3, 2, 6, 4, 1, 2, 1],
    ...     "score": [10.0, 8.0, 6.0, 2.0, None, 0.5, 0.5, 1.0],
    ...     "relevance": [1, 0, 1, 0, 1, 0, 1, 0],
    ... })
    >>> prk.evaluate(df, ["precision@2", "ndcg@2", "mrr"])
    shape: (1, 5)
    ┌─────────────┬──────────┬───────┬─────────┬───────────┐
    │ precision@2 ┆ ndcg@2   ┆ mrr   ┆ n_users ┆ n_skipped │
    │ ---         ┆ ---      ┆ ---   ┆ ---     ┆ ---       │
    │ f64         ┆ f64      ┆ f64   ┆ i64     ┆ i64       │
    ╞═════════════╪══════════╪═══════╪═════════╪═══════════╡
    │ 0.5         ┆ 0.714306 ┆ 0.875 ┆ 3       ┆ 1         │
    └─────────────┴──────────┴───────┴─────────┴───────────┘
    >>> prk.evaluate(df, ["precision@2", "mrr"], per_user=True)
    shape: (3, 3)
    ┌──────┬─────────────┬──────┐
    │ user ┆ precision@2 ┆ mrr  │
    │ ---  ┆ ---         ┆ ---  │
    │ i64  ┆ f64         ┆ f64  │
    ╞══════╪═════════════╪══════╡
    │ 1    ┆ 0.5         ┆ 1.0  │
    │ 2    ┆ 0.5         ┆ 0.75 │
    │ 3    ┆ null        ┆ null │
    └──────┴─────────────┴──────┘
    """
    lf, eager = to_lazy(data)
    cols = make_columns(user=user, item=item, score=score, relevance=relevance, rank=rank)
    parsed = parse_metrics(metrics)
    check_choice("ties", ties, TIE_POLICIES)
    check_choice("empty", empty, EMPTY_POLICIES)
    by_cols = [by] if isinstance(by, str) else list(by or [])
    keys = [*by_cols, cols.user]
    check_schema(lf.collect_schema(), cols, by_cols)
    for metric in parsed:
        if metric.name in (*keys, *RESERVED):
            msg = f"metric name {metric.name!r} collides with an output column"
            raise ValueError(msg)
    if validate:
        check_values(lf, cols, by_cols)

    features = Features(cols, ties, keys)
    exprs = [metric.expr(features) for metric in parsed]
    names = [metric.name for metric in parsed]
    needed = list(dict.fromkeys([*keys, cols.item, cols.order, cols.relevance]))
    per_user_lf = (
        features.apply(lf.select(needed))
        .group_by(keys)
        .agg(
            *exprs,
            pl.col(cols.relevance).is_not_null().any().alias(_HAS_TRUTH),
            pl.col(cols.order).is_not_null().any().alias(_HAS_RECS),
        )
    )
    per_user_lf = _restrict_users(per_user_lf, users, keys, by_cols, names)
    per_user_lf = per_user_lf.select(*keys, *names).sort(keys)

    if empty == "zero":
        per_user_lf = per_user_lf.with_columns(pl.col(names).fill_null(0.0))
    elif empty == "error":
        collected = per_user_lf.collect()
        _raise_on_undefined(collected, names, keys)
        per_user_lf = collected.lazy()

    result = per_user_lf if per_user else summarize(per_user_lf, names, by_cols)
    return result.collect() if eager else result


def summarize(per_user: pl.LazyFrame, names: list[str], by: list[str]) -> pl.LazyFrame:
    """Means over users per by-group, with ``n_users`` and ``n_skipped``.

    A user with any undefined (null) value is skipped from every mean of the row, so
    all the means of one summary row are over the same ``n_users - n_skipped`` users.
    """
    defined = pl.all_horizontal([pl.col(n).is_not_null() for n in names])
    aggs = [
        *[pl.col(n).filter(defined).mean() for n in names],
        pl.len().cast(pl.Int64).alias("n_users"),
        (~defined).sum().cast(pl.Int64).alias("n_skipped"),
    ]
    if by:
        return per_user.group_by(by).agg(aggs).sort(by)
    return per_user.select(aggs)


def _restrict_users(
    lf: pl.LazyFrame, users: UsersArg, keys: list[str], by: list[str], names: list[str]
) -> pl.LazyFrame:
    if isinstance(users, str):
        check_choice("users", users, USER_UNIVERSES)
        keep = {
            "truth": pl.col(_HAS_TRUTH),
            "recs": pl.col(_HAS_RECS),
            "both": pl.col(_HAS_TRUTH) & pl.col(_HAS_RECS),
            "all": pl.lit(True),
        }[users]
        return lf.filter(keep)
    user = keys[-1]
    dtype = lf.collect_schema()[user]
    if isinstance(users, pl.DataFrame):
        if user not in users.columns:
            msg = f"users frame must have a {user!r} column, got columns {users.columns}"
            raise ValueError(msg)
        wanted = users.get_column(user)
    else:
        wanted = pl.Series(user, list(users))
    wanted = _cast_ids(wanted.rename(user), dtype).unique()
    universe = wanted.to_frame().lazy()
    if by:
        universe = lf.select(by).unique().join(universe, how="cross")
    return universe.join(lf, on=keys, how="left", nulls_equal=True)


def _cast_ids(ids: pl.Series, dtype: pl.DataType) -> pl.Series:
    """Cast user ids to the user column's dtype, refusing lossy or cross-kind casts."""
    textual = (pl.String, pl.Categorical, pl.Enum)
    same_kind = (
        ids.dtype == dtype
        or (ids.dtype.is_integer() and dtype.is_integer())
        or (isinstance(ids.dtype, textual) and isinstance(dtype, textual))
        or (ids.dtype == pl.Null)
    )
    if not same_kind:
        msg = f"users= ids must have the user column's dtype {dtype}, got {ids.dtype}"
        raise TypeError(msg)
    try:
        return ids.cast(dtype, strict=True)
    except pl.exceptions.PolarsError:
        msg = f"users= ids do not fit the user column's dtype {dtype}: {ids.head(3).to_list()}"
        raise TypeError(msg) from None


def _raise_on_undefined(frame: pl.DataFrame, names: list[str], keys: list[str]) -> None:
    for name in names:
        bad = frame.filter(pl.col(name).is_null())
        if bad.height:
            example = bad.select(keys).head(5).rows()
            msg = (
                f"metric {name!r} is undefined for {bad.height} user(s) (e.g. no relevant "
                f"item), first {example}; pass empty='skip' or empty='zero'"
            )
            raise ValueError(msg)


def join(
    recs: Any,
    truth: Any,
    *,
    user: str = "user",
    item: str = "item",
    score: str | None = None,
    relevance: str = "relevance",
    rank: str | None = None,
    by: str | Sequence[str] | None = None,
) -> pl.DataFrame | pl.LazyFrame:
    """Build the long evaluation frame from recommendations and ground truth.

    A full outer join on (user, item): recommended items that are not in the truth
    get a null relevance (not relevant), judged items that were not recommended get a
    null score. A truth table without a relevance column marks every row relevant (1).

    Parameters
    ----------
    recs
        Recommendations: user, item and score (or ``rank=``), plus any ``by`` columns.
    truth
        Ground truth: user, item and optionally relevance.
    user, item, score, relevance, rank
        Column names; pass ``rank=`` (1 = best) instead of ``score=``.
    by
        Columns of ``recs`` that identify several systems or segments; the truth is
        joined to each of them.

    Returns
    -------
    polars.DataFrame or polars.LazyFrame
        A LazyFrame if either input is a LazyFrame, else a DataFrame. Columns: by,
        user, item, score (or rank), relevance.

    Examples
    --------
    >>> import polars as pl
    >>> import polars_rankeval as prk
    >>> recs = pl.DataFrame({"user": [1, 1], "item": [10, 11], "score": [0.9, 0.8]})
    >>> truth = pl.DataFrame({"user": [1, 1], "item": [11, 12]})
    >>> prk.join(recs, truth).sort("item")
    shape: (3, 4)
    ┌──────┬──────┬───────┬───────────┐
    │ user ┆ item ┆ score ┆ relevance │
    │ ---  ┆ ---  ┆ ---   ┆ ---       │
    │ i64  ┆ i64  ┆ f64   ┆ i32       │
    ╞══════╪══════╪═══════╪═══════════╡
    │ 1    ┆ 10   ┆ 0.9   ┆ null      │
    │ 1    ┆ 11   ┆ 0.8   ┆ 1         │
    │ 1    ┆ 12   ┆ null  ┆ 1         │
    └──────┴──────┴───────┴───────────┘
    """
    recs_lf, recs_eager = to_lazy(recs, "recs")
    truth_lf, truth_eager = to_lazy(truth, "truth")
    cols = make_columns(user=user, item=item, score=score, relevance=relevance, rank=rank)
    by_cols = [by] if isinstance(by, str) else list(by or [])
    recs_schema, truth_schema = recs_lf.collect_schema(), truth_lf.collect_schema()
    for frame, schema, needed in (
        ("recs", recs_schema, [*by_cols, cols.user, cols.item, cols.order]),
        ("truth", truth_schema, [cols.user, cols.item]),
    ):
        for name in needed:
            if name not in schema:
                msg = (
                    f"column {name!r} not found in {frame}; available columns: "
                    f"{', '.join(schema.names()) or 'none'}"
                )
                raise ValueError(msg)
    for name in (cols.user, cols.item):
        if recs_schema[name] != truth_schema[name]:
            msg = (
                f"column {name!r} has dtype {recs_schema[name]} in recs but "
                f"{truth_schema[name]} in truth; cast one of them"
            )
            raise TypeError(msg)
    if cols.relevance in truth_schema:
        truth_sel = truth_lf.select(cols.user, cols.item, cols.relevance)
    else:
        truth_sel = truth_lf.select(
            cols.user, cols.item, pl.lit(1, dtype=pl.Int32).alias(cols.relevance)
        )
    recs_sel = recs_lf.select(*by_cols, cols.user, cols.item, cols.order)
    keys = [cols.user, cols.item]
    if by_cols:
        truth_sel = recs_sel.select(by_cols).unique().join(truth_sel, how="cross")
        keys = [*by_cols, *keys]
    joined = recs_sel.join(truth_sel, on=keys, how="full", coalesce=True, nulls_equal=False)
    joined = joined.select(*keys, cols.order, cols.relevance)
    return joined.collect() if (recs_eager and truth_eager) else joined
