"""Tidy curves for plotting: metric@k over k, and interpolated precision-recall curves.

:func:`curve` evaluates every cutoff of one or more metrics in one pass (the grammar's
cutoff lists, see :func:`polars_rankeval.metrics.grammar.expand_metric`) and returns a long
frame ``by..., metric, k, value, n_users``; :func:`pr_curve` returns trec_eval's
interpolated precision at recall levels, ``by..., recall, precision, n_users``.
Both take every option of :func:`polars_rankeval.evaluate`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import polars as pl

from polars_rankeval._utils.constraints import (
    COLUMNS,
    Frame,
    Instance,
    Integer,
    ListOf,
    Number,
    Options,
    Text,
    validate_params,
)
from polars_rankeval._utils.ties import POLICIES, Ties
from polars_rankeval._utils.types import Aggregation, TiePolicy, integer, is_spark_frame
from polars_rankeval.api.evaluate import evaluate
from polars_rankeval.metrics.defaults import INTERPOLATED_PRECISION
from polars_rankeval.metrics.grammar import bind, parse_cutoffs, parse_metrics
from polars_rankeval.metrics.spec import Metric
from polars_rankeval.plan.finish import long_rows
from polars_rankeval.plan.job import count_name, summary_name

__all__ = ["curve", "pr_curve"]

KsArg = int | Iterable[int] | None
_NOT_HERE = ("per_user", "per_item")


def _cutoffs(ks: KsArg) -> tuple[int, ...]:
    """``ks=`` as a tuple of distinct positive cutoffs; an int n means 1..n."""
    if not isinstance(ks, Iterable) or isinstance(ks, str | bytes | Mapping):
        n = integer("ks", ks, what="an int n (cutoffs 1..n) or a list, range or array of cutoffs")
        if n <= 0:
            msg = f"ks must be a positive integer (cutoffs 1..ks), got {n}"
            raise ValueError(msg)
        return tuple(range(1, n + 1))
    values = list(ks)
    if not values:
        msg = "ks must name at least one cutoff, got an empty list"
        raise ValueError(msg)
    values = [integer("ks", k, what="a list of integers") for k in values]
    bad = [k for k in values if k <= 0]
    if bad:
        msg = f"ks must be positive integers, got {bad} in {values!r}"
        raise ValueError(msg)
    if len(set(values)) != len(values):
        msg = f"ks names a cutoff more than once: {values!r}"
        raise ValueError(msg)
    return tuple(values)


def _requests(metrics: str | Sequence[str], ks: KsArg) -> list[Metric]:
    names = [metrics] if isinstance(metrics, str) else list(metrics)
    if not names:
        msg = "metrics must name at least one metric, e.g. 'recall' or ['ndcg', 'map']"
        raise ValueError(msg)
    cutoffs = None if ks is None else _cutoffs(ks)
    texts = []
    for name in names:
        if not isinstance(name, str):
            msg = f"a metric must be a string such as 'recall', got {type(name).__name__}"
            raise TypeError(msg)
        if "@" in name:
            if cutoffs is not None:
                msg = (
                    f"metric {name!r} names its cutoffs already; pass ks= only with names "
                    "without @k (e.g. curve(data, 'recall', ks=range(1, 51)))"
                )
                raise ValueError(msg)
            texts.append(name)
        elif cutoffs is None:
            msg = (
                f"metric {name!r} has no cutoffs: pass ks= (e.g. ks=range(1, 51)) or name "
                "them, e.g. 'recall@1..50'"
            )
            raise ValueError(msg)
        else:
            texts.append(f"{name}@[{','.join(map(str, cutoffs))}]")
    parsed = parse_metrics(texts)
    for metric in parsed:
        if metric.k is None:  # pragma: no cover - every text above has a cutoff
            msg = f"metric {metric.name!r} has no cutoff"
            raise ValueError(msg)
    return parsed


def _by_columns(by: str | Sequence[str] | None) -> list[str]:
    return [by] if isinstance(by, str) else list(by or [])


def _check_options(options: dict[str, Any], what: str) -> None:
    for name in _NOT_HERE:
        if options.get(name):
            msg = f"{what} returns the summary over users; {name}=True is not supported here"
            raise ValueError(msg)
    if options.get("summary", "wide") != "wide":
        msg = f"{what} returns its own long form; summary={options['summary']!r} is not supported"
        raise ValueError(msg)


def _collect(result: Any) -> pl.DataFrame:
    """The summary in memory: a LazyFrame collected; from Spark, a Spark DataFrame too."""
    if is_spark_frame(result):
        from polars_rankeval.engines.spark_ops import to_polars

        return to_polars(result)
    return result.collect() if isinstance(result, pl.LazyFrame) else result


@validate_params(
    {
        "data": Frame("polars", "pyarrow", "pandas", "pyspark"),
        "metrics": [Text("a metric name (str)"), ListOf(what="a list of metric names")],
        "ks": [Integer(), ListOf(Integer(), what="a list, range or array of cutoffs"), None],
        "by": [*COLUMNS, None],
        "aggregate": Options.of(Aggregation),
    }
)
def curve(
    data: Any,
    metrics: str | Sequence[str],
    ks: KsArg = None,
    *,
    by: str | Sequence[str] | None = None,
    aggregate: Aggregation = "mean",
    **options: Any,
) -> pl.DataFrame:
    """Metric@k for many cutoffs as a long frame: ``by..., metric, k, value``.

    Every cutoff of a metric is computed in one pass when the metric has a curve
    kernel (precision, recall, f1, hit_rate, mrr, map, dcg, ndcg: per user, the
    cumulative sum over positions gives every cutoff at once), with exactly the values
    of ``evaluate`` at each k.

    Parameters
    ----------
    data
        The long frame (see :func:`polars_rankeval.evaluate`); a LazyFrame is collected,
        a Spark DataFrame is evaluated on Spark and its summary collected.
    metrics
        A metric name without cutoff (``"recall"``, ``"ndcg(gain=exp)"``) or a list of
        them, evaluated at ``ks``; or names with their own cutoffs (``"ndcg@1..100"``,
        ``"recall@[1,5,10]"``), with ``ks=None``.
    ks
        The cutoffs: an int n (1..n), or a list or range of positive integers.
    by
        Grouping columns (e.g. ``"system"``): one curve per group.
    aggregate
        The aggregation over users (``"mean"``, ``"median"``, ...; see ``evaluate``).
    **options
        Any other option of :func:`polars_rankeval.evaluate` (``ties``, ``users``,
        ``empty``, column names, ...).

    Returns
    -------
    polars.DataFrame
        ``by..., metric, k, value, n_users``, one row per (by group, metric, cutoff),
        sorted by by, the metrics in the order given, then k. ``metric`` is the
        canonical name without the cutoff; ``n_users`` is the number of users the value
        covers (``n_users(<metric>)`` of the summary: the users for which it is defined
        under ``empty="skip"``; for a global metric, the group's users).

    Examples
    --------
    >>> import polars as pl
    >>> import polars_rankeval as prk
    >>> df = pl.DataFrame({"user": [1, 1, 1], "item": [1, 2, 3],
    ...                    "score": [3.0, 2.0, 1.0], "relevance": [0, 1, 1]})
    >>> prk.curve(df, "recall", ks=3)  # 0/2, 1/2, 2/2
    shape: (3, 4)
    ┌────────┬─────┬───────┬─────────┐
    │ metric ┆ k   ┆ value ┆ n_users │
    │ ---    ┆ --- ┆ ---   ┆ ---     │
    │ str    ┆ i64 ┆ f64   ┆ i64     │
    ╞════════╪═════╪═══════╪═════════╡
    │ recall ┆ 1   ┆ 0.0   ┆ 1       │
    │ recall ┆ 2   ┆ 0.5   ┆ 1       │
    │ recall ┆ 3   ┆ 1.0   ┆ 1       │
    └────────┴─────┴───────┴─────────┘
    """
    _check_options(options, "curve")
    parsed = _requests(metrics, ks)
    by_cols = _by_columns(by)
    result = _collect(evaluate(data, parsed, by=by, aggregate=aggregate, **options))
    order = {base: i for i, base in enumerate(dict.fromkeys(m.base_name for m in parsed))}
    present = set(result.columns)
    labels = {
        "metric": pl.Series([m.base_name for m in parsed], dtype=pl.String),
        "k": pl.Series([m.k for m in parsed], dtype=pl.Int64),
        "__order": pl.Series([order[m.base_name] for m in parsed], dtype=pl.Int64),
    }
    columns = {
        "value": [
            pl.col(_value_column(present, aggregate, m.name)).cast(pl.Float64) for m in parsed
        ],
        "n_users": [pl.col(_count_column(present, m.name)).cast(pl.Int64) for m in parsed],
    }
    long = long_rows(result, by_cols, labels, columns)
    return long.sort([*by_cols, "__order", "k"]).drop("__order")


def _value_column(present: set[str], aggregate: str, name: str) -> str:
    """The summary column of a metric (global metrics are not aggregated)."""
    column = summary_name(aggregate, name)
    return column if column in present else name


def _count_column(present: set[str], name: str) -> str:
    """The users a metric's value covers: ``n_users(<metric>)``, else the group's users."""
    column = count_name(name)
    return column if column in present else "n_users"


def recall_levels(levels: int | Sequence[float]) -> tuple[float, ...]:
    """Recall levels: n evenly spaced levels from 0 to 1, or the given ones (in [0, 1])."""
    if not isinstance(levels, Iterable) or isinstance(levels, str | bytes | Mapping):
        n = integer("levels", levels, what="an int (>= 2) or a list of recall levels")
        if n < 2:
            msg = f"levels must be at least 2 (0 and 1), got {n}"
            raise ValueError(msg)
        return tuple(i / (n - 1) for i in range(n))
    values = [float(x) for x in levels]
    if not values:
        msg = "levels must name at least one recall level, got an empty list"
        raise ValueError(msg)
    bad = [x for x in values if not 0.0 <= x <= 1.0]
    if bad:
        msg = f"recall levels must lie in [0, 1], got {bad}"
        raise ValueError(msg)
    if len(set(values)) != len(values):
        msg = f"levels names a recall level more than once: {values!r}"
        raise ValueError(msg)
    return tuple(values)


@validate_params(
    {
        "data": Frame("polars", "pyarrow", "pandas", "pyspark"),
        "levels": [Integer(), ListOf(Number(), what="a list of recall levels")],
        "rel": Number(),
        "by": [*COLUMNS, None],
        "ties": [Options(live=POLICIES), Instance(Ties, what="a Ties policy")],
    }
)
def pr_curve(
    data: Any,
    *,
    levels: int | Sequence[float] = 11,
    rel: float = 1.0,
    by: str | Sequence[str] | None = None,
    ties: TiePolicy = "item_desc",
    **options: Any,
) -> pl.DataFrame:
    """The interpolated precision-recall curve: ``by..., recall, precision``.

    At each recall level x, the mean over users of trec_eval's ``iprec_at_recall_x``:
    the best precision at a rank whose recall reaches x (counted as lround(x * R)
    relevant items of the user's R), 0 if the list never reaches it. ``levels=11`` are
    trec_eval's 11 points (0, 0.1, ..., 1; their mean is ``iprec_11pt``); ``levels=101``
    every percent, or any list of levels in [0, 1].

    Parameters
    ----------
    data
        The long frame (see :func:`polars_rankeval.evaluate`); a LazyFrame is collected,
        a Spark DataFrame is evaluated on Spark and its summary collected.
    levels
        An int n (n evenly spaced levels from 0 to 1) or a list of levels.
    rel
        Minimum relevance that counts as relevant.
    by
        Grouping columns (e.g. ``"system"``): one curve per group.
    ties
        A deterministic tie policy (default trec_eval's ``"item_desc"``): the
        interpolated precision has no exact expectation over tied orderings.
    **options
        Any other option of :func:`polars_rankeval.evaluate`.

    Returns
    -------
    polars.DataFrame
        ``by..., recall, precision, n_users`` (the users each value covers), sorted by
        by and recall.

    Examples
    --------
    Relevant items at ranks 1 and 3 (R = 2): precision 1 up to recall 0.5 (lround(0.5
    * 2) = 1 hit), then 2/3.

    >>> import polars as pl
    >>> import polars_rankeval as prk
    >>> df = pl.DataFrame({"user": [1, 1, 1], "item": [1, 2, 3],
    ...                    "score": [3.0, 2.0, 1.0], "relevance": [1, 0, 1]})
    >>> out = prk.pr_curve(df, levels=[0.0, 0.5, 0.8, 1.0])
    >>> out["precision"].to_list() == [1.0, 1.0, 2 / 3, 2 / 3]
    True
    """
    _check_options(options, "pr_curve")
    points = recall_levels(levels)
    metrics = [bind(INTERPOLATED_PRECISION, None, level=x, rel=rel) for x in points]
    by_cols = _by_columns(by)
    result = _collect(evaluate(data, metrics, by=by, ties=ties, **options))
    present = set(result.columns)
    labels = {"recall": pl.Series(points, dtype=pl.Float64)}
    columns = {
        "precision": [pl.col(m.name).cast(pl.Float64) for m in metrics],
        "n_users": [pl.col(_count_column(present, m.name)).cast(pl.Int64) for m in metrics],
    }
    return long_rows(result, by_cols, labels, columns).sort([*by_cols, "recall"])


def cutoffs_of(text: str) -> tuple[int, ...]:
    """The cutoffs named by the cutoff part of a metric name (``"1..5"``, ``"[1,5]"``)."""
    found = parse_cutoffs(text, text)
    return found if isinstance(found, tuple) else (found,)
