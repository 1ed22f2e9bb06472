"""``largest_differences``: the users where two systems differ most, both ways.

:func:`polars_rankeval.compare` says whether one system is better than another on
average; this module says which users made the difference. The per-user values come
from one ``evaluate(per_user=True, by=...)`` plan (or from a per-user frame the caller
already has, :func:`largest_differences_per_user`), are paired by user per compared
pair of systems -- the pairs of ``compare`` -- and the ``n`` largest differences in
each direction are kept: a tidy frame keyed by the user column, to join with the
caller's own data about the users.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import polars as pl

from polars_rankeval._utils.constraints import (
    COLUMN,
    Frame,
    Instance,
    Integer,
    ListOf,
    Text,
    validate_params,
)
from polars_rankeval.analysis._system_values import metric_columns
from polars_rankeval.analysis.compare_options import TEST_OPTIONS, TIE_TOLERANCE
from polars_rankeval.analysis.metric_direction import _directions
from polars_rankeval.analysis.paired_values import choose_pairs
from polars_rankeval.metrics.grammar import METRICS, MetricsArg, parse_metrics
from polars_rankeval.metrics.params import Interval
from polars_rankeval.plan.validate import to_lazy

__all__ = ["DIFFERENCE_COLUMNS", "largest_differences", "largest_differences_per_user"]

#: The columns of :func:`largest_differences`, in order (``user`` is the user column).
DIFFERENCE_COLUMNS: tuple[str, ...] = (
    "metric",
    "system",
    "baseline",
    "user",
    "value",
    "baseline_value",
    "difference",
    "direction",
    "rank",
)

_NOT_FORWARDED = ("per_user", "per_item", "aggregate", "by")


@validate_params(
    {
        "data": Frame("polars", "pyarrow", "pandas", "pyspark"),
        "metrics": METRICS,
        "by": COLUMN,
        "baseline": TEST_OPTIONS["baseline"],
        "systems": TEST_OPTIONS["systems"],
        "n": Integer(Interval(1, None)),
        "tie_tolerance": TIE_TOLERANCE,
    }
)
def largest_differences(
    data: Any,
    metrics: MetricsArg,
    *,
    by: str = "system",
    baseline: Any = None,
    systems: Sequence[Any] | None = None,
    n: int = 10,
    tie_tolerance: float = 1e-9,
    **evaluate_options: Any,
) -> pl.DataFrame:
    """The users where each compared pair of systems differs most, both ways.

    The per-user values of every system come from one
    ``evaluate(data, metrics, by=by, per_user=True, **evaluate_options)`` plan (lazy
    for a LazyFrame: only the per-user values are held); then
    :func:`largest_differences_per_user` pairs them by user.

    Parameters
    ----------
    data
        The long frame with a ``by`` column naming the system of each row (as for
        :func:`polars_rankeval.compare`).
    metrics
        Per-user metrics, e.g. ``["ndcg@10", "recall@20"]``.
    by
        The column that names the systems.
    baseline, systems
        The pairs, as :func:`polars_rankeval.compare` makes them: every system against
        ``baseline``, or without one every pair, each against the one that comes first
        in ``systems`` (default: the order the systems first appear in ``data``).
    n
        Users kept per (metric, pair, direction), >= 1.
    tie_tolerance
        A user whose two values differ by at most this much is a tie: neither better
        nor worse, and never listed (as for compare's ``ties`` column).
    **evaluate_options
        Passed to :func:`polars_rankeval.evaluate` (``ties``, ``users``, ``empty``,
        ``user``, ``item``, ``score`` ...).

    Returns
    -------
    polars.DataFrame
        See :func:`largest_differences_per_user`.

    Examples
    --------
    >>> import polars_rankeval as prk
    >>> from polars_rankeval.api.datasets import load_systems
    >>> out = prk.largest_differences(load_systems(), ["ndcg@10"], baseline="bm25",
    ...                               systems=["bm25", "dense"], n=2)
    >>> out.select("system", "direction", "rank", "difference").shape
    (4, 4)
    """
    from polars_rankeval.api.evaluate import evaluate

    for name in _NOT_FORWARDED:
        if name in evaluate_options:
            msg = (
                f"largest_differences() does not take {name}=; it evaluates per user over by={by!r}"
            )
            raise TypeError(msg)
    if not isinstance(by, str):
        msg = f"by must be one column name (str), got {by!r}"
        raise TypeError(msg)
    source, _ = to_lazy(data)
    if systems is None:  # the order the systems come in (evaluate's output is grouped)
        systems = (
            source.select(pl.col(by).cast(pl.String).drop_nulls().unique(maintain_order=True))
            .collect()
            .get_column(by)
            .to_list()
        )
    per_user = evaluate(source, metrics, by=by, per_user=True, **evaluate_options)
    parsed = parse_metrics(metrics)
    names = [m.name for m in parsed]
    directions = {m.name: m.spec.higher_is_better for m in parsed}
    return largest_differences_per_user(
        per_user,
        names,
        by=by,
        user=evaluate_options.get("user", "user"),
        baseline=baseline,
        systems=systems,
        n=n,
        tie_tolerance=tie_tolerance,
        higher_is_better=directions,
    )


@validate_params(
    {
        "per_user": Frame("polars", "pyarrow", "pandas", "pyspark"),
        "metrics": [
            Text("a metric column name (str)"),
            ListOf(what="a list of metric columns"),
            None,
        ],
        "by": COLUMN,
        "user": COLUMN,
        "baseline": TEST_OPTIONS["baseline"],
        "systems": TEST_OPTIONS["systems"],
        "n": Integer(Interval(1, None)),
        "tie_tolerance": TIE_TOLERANCE,
        "higher_is_better": [Instance(Mapping, what="a mapping of metric -> bool or None"), None],
    }
)
def largest_differences_per_user(
    per_user: Any,
    metrics: Sequence[str] | str | None = None,
    *,
    by: str = "system",
    user: str = "user",
    baseline: Any = None,
    systems: Sequence[Any] | None = None,
    n: int = 10,
    tie_tolerance: float = 1e-9,
    higher_is_better: Mapping[str, bool | None] | None = None,
) -> pl.DataFrame:
    """The users where two systems differ most, from a per-user frame.

    Parameters
    ----------
    per_user
        One row per (system, user) with one numeric column per metric (the output of
        ``evaluate(..., by="system", per_user=True)``), a DataFrame or a LazyFrame (the
        pairing, ranking and selection run as one lazy query). A null (or NaN) is an
        undefined value: that user is left out of the pair.
    metrics
        The metric columns (default: every column except ``by`` and ``user``).
    by, user
        The columns naming the system and the user.
    baseline, systems, n, tie_tolerance
        As for :func:`largest_differences` (default systems: in the order they first
        appear in ``per_user``).
    higher_is_better
        The direction of metric columns, as for
        :func:`polars_rankeval.compare_per_user` (default: the metric a column is
        named after; a column naming no metric has no direction).

    Returns
    -------
    polars.DataFrame
        One row per listed user: ``metric``; ``system``, ``baseline`` (as strings);
        the user column (its own name and type, to join on); ``value``,
        ``baseline_value``; ``difference = value - baseline_value``; ``direction``:
        ``"better"`` or ``"worse"`` (the system against the baseline, by the metric's
        direction), ``"higher"`` or ``"lower"`` for a metric without one; ``rank``:
        1 for the largest difference of that direction, tied differences sharing the
        smallest rank ("min"). At most ``n`` rows per (metric, system, baseline,
        direction); when tied differences cross the ``n``-th place, the users with the
        smallest ids are kept. Sorted by metric (in the given order), pair (as
        compare orders them), direction (better or higher first), rank, user.

    Examples
    --------
    Differences b - a: user 1 +0.5, user 2 +0.25, user 3 -0.25, user 4 0 (a tie).

    >>> import polars as pl
    >>> import polars_rankeval as prk
    >>> per_user = pl.DataFrame({
    ...     "system": ["a"] * 4 + ["b"] * 4,
    ...     "user": [1, 2, 3, 4] * 2,
    ...     "ndcg@10": [0.25, 0.5, 0.5, 0.5, 0.75, 0.75, 0.25, 0.5],
    ... })
    >>> prk.largest_differences_per_user(per_user, baseline="a", n=5).drop("metric")
    shape: (3, 8)
    ┌────────┬──────────┬──────┬───────┬────────────────┬────────────┬───────────┬──────┐
    │ system ┆ baseline ┆ user ┆ value ┆ baseline_value ┆ difference ┆ direction ┆ rank │
    │ ---    ┆ ---      ┆ ---  ┆ ---   ┆ ---            ┆ ---        ┆ ---       ┆ ---  │
    │ str    ┆ str      ┆ i64  ┆ f64   ┆ f64            ┆ f64        ┆ str       ┆ u32  │
    ╞════════╪══════════╪══════╪═══════╪════════════════╪════════════╪═══════════╪══════╡
    │ b      ┆ a        ┆ 1    ┆ 0.75  ┆ 0.25           ┆ 0.5        ┆ better    ┆ 1    │
    │ b      ┆ a        ┆ 2    ┆ 0.75  ┆ 0.5            ┆ 0.25       ┆ better    ┆ 2    │
    │ b      ┆ a        ┆ 3    ┆ 0.25  ┆ 0.5            ┆ -0.25      ┆ worse     ┆ 1    │
    └────────┴──────────┴──────┴───────┴────────────────┴────────────┴───────────┴──────┘
    """
    n = int(n)
    lazy, names = metric_columns(per_user, metrics, by, user)
    directions = _directions(names, higher_is_better)
    # One small query: the systems in order of appearance, and a duplicate if any.
    lazy = lazy.with_columns(pl.col(by).cast(pl.String))
    found, duplicate = pl.collect_all(
        [
            lazy.select(pl.col(by).drop_nulls().unique(maintain_order=True)),
            lazy.group_by(by, user).len().filter(pl.col("len") > 1).head(1),
        ]
    )
    if duplicate.height:
        msg = (
            f"the per-user frame has duplicate ({by}, {user}) rows, e.g. "
            f"{by}={duplicate[by][0]!r}, {user}={duplicate[user][0]!r}"
        )
        raise ValueError(msg)
    pairs = compared_pairs(found.get_column(by).to_list(), systems, baseline, by)

    long = lazy.unpivot(
        index=[by, user], on=names, variable_name="metric", value_name="value"
    ).with_columns(pl.col("value").cast(pl.Float64).fill_nan(None))
    parts = []
    for system, base in pairs:
        side = long.filter(pl.col(by) == system).drop(by)
        other = long.filter(pl.col(by) == base).select(
            user, "metric", pl.col("value").alias("baseline_value")
        )
        parts.append(
            side.join(other, on=[user, "metric"], how="inner").with_columns(
                system=pl.lit(system), baseline=pl.lit(base)
            )
        )
    sign = pl.col("metric").replace_strict(
        names, [-1.0 if directions[m] is False else 1.0 for m in names], return_dtype=pl.Float64
    )
    labels = {
        m: ("higher", "lower") if directions[m] is None else ("better", "worse") for m in names
    }
    up = pl.col("metric").replace_strict(names, [labels[m][0] for m in names])
    down = pl.col("metric").replace_strict(names, [labels[m][1] for m in names])
    group = ["metric", "system", "baseline", "direction"]
    pair_keys = [f"{a}\x00{b}" for a, b in pairs]
    out = (
        pl.concat(parts)
        .drop_nulls(["value", "baseline_value"])
        .with_columns(difference=pl.col("value") - pl.col("baseline_value"))
        .with_columns(signed=pl.col("difference") * sign)
        .with_columns(
            direction=pl.when(pl.col("signed") > tie_tolerance)
            .then(up)
            .when(pl.col("signed") < -tie_tolerance)
            .then(down),
            gap=pl.col("signed").abs(),
        )
        .filter(pl.col("direction").is_not_null())
        .with_columns(rank=pl.col("gap").rank("min", descending=True).over(group))
        .filter(pl.col("rank") <= n)  # every candidate, ties at the n-th place included
        .sort([*group, "gap", user], descending=[False, False, False, False, True, False])
        .group_by(group, maintain_order=True)
        .head(n)
        .collect()
    )
    order = {
        "metric": pl.col("metric").replace_strict(names, list(range(len(names)))),
        "pair": pl.concat_str("system", "baseline", separator="\x00").replace_strict(
            pair_keys, list(range(len(pairs)))
        ),
        "side": pl.col("direction").is_in(["worse", "lower"]),
    }
    return out.sort([*order.values(), "rank", user]).select(
        "metric",
        "system",
        "baseline",
        user,
        "value",
        "baseline_value",
        "difference",
        "direction",
        "rank",
    )


def compared_pairs(
    available: list[str], systems: Sequence[Any] | None, baseline: Any, by: str
) -> list[tuple[str, str]]:
    """The (system, baseline) pairs of a comparison, as :func:`compare` makes them."""
    chosen, pairs = choose_pairs(available, systems, baseline, by)
    return [(chosen[j], chosen[i]) for j, i in pairs]
