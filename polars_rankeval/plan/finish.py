"""The end of the plan: merge the partials, apply ``empty=``, summarize, shape the result.

:func:`finish` turns the per-user values and the partial aggregates of the global
metrics (from :func:`polars_rankeval.plan.build.build`, concatenated over buckets or
partitions) into what ``evaluate`` returns. It is two steps that an engine may run
apart: :func:`fill_empty` (``empty="zero"``) on the per-user values, and
:func:`summary_of` on the per-user values of one or every by group with the finalized
global metrics (:func:`finalize`); Spark runs :func:`summary_of` once per by group.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal, TypeVar

import numpy as np
import polars as pl

from polars_rankeval._utils.types import Aggregation, check_choice
from polars_rankeval.metrics.aggregate import GMEAN_FLOOR
from polars_rankeval.metrics.spec import GlobalPlan, Metric
from polars_rankeval.plan.job import (
    RESERVED,
    Job,
    aggregations,
    count_name,
    summary_name,
)

GLOBAL_AGGREGATION = "global"
"""The ``aggregation`` of a global metric's row in the long summary (its one value)."""
CI_PARTS: tuple[str, ...] = ("se", "ci_low", "ci_high")
"""The columns ``evaluate(ci=...)`` adds per per-user metric: ``se(<metric>)``, ..."""
CI_METHODS: tuple[str, ...] = ("bootstrap", "t")
"""The intervals of a mean ``evaluate(ci=...)`` gives."""
CI_RESAMPLES = 10_000
"""Resamples of ``evaluate(ci="bootstrap")`` (compare's default ``n_resamples``)."""
CI_SEED = 0
"""Seed of ``evaluate(ci="bootstrap")`` (compare's default ``seed``)."""


def finish(
    job: Job, per_user: pl.LazyFrame, partials: dict[str, list[pl.LazyFrame]]
) -> pl.LazyFrame:
    """The result from per-user values and the (unmerged) partials of the globals.

    ``empty=`` is applied here: ``zero`` fills, ``error`` raises (when the result is
    collected), ``skip`` and ``skip_row`` are :func:`summarize`'s rules. Plan names in,
    the user's names out.
    """
    names = job.user_names
    keys = job.ikeys
    per_user = check_raising(job, per_user.sort(keys))
    per_user = fill_empty(job, per_user)
    if job.empty == "error":
        # Checked when the result is collected (lazy in, lazy out): the callback
        # sees the per-user values, raises on an undefined one, else passes them on.
        schema = per_user.collect_schema()

        def check(frame: pl.DataFrame) -> pl.DataFrame:
            _raise_on_undefined(frame, names, keys)
            return frame

        per_user = deferred_check(per_user, check, schema)
    if job.per_user:
        return job.outer(per_user)
    if job.per_item:
        on = [*job.iby, job.icols.item]
        return job.outer(finalize(job, partials, job.item_names, on).sort(on))
    values = finalize(job, partials, job.global_names, job.iby) if job.global_names else None
    return job.outer(summary_of(job, per_user, values))


def deferred_check(
    frame: pl.LazyFrame, check: Callable[[pl.DataFrame], pl.DataFrame], schema: pl.Schema
) -> pl.LazyFrame:
    """``frame`` with ``check`` applied when it is collected (an error raises there).

    No predicate, projection or slice pushdown crosses the check.
    """
    return frame.map_batches(
        check,
        schema=schema,
        predicate_pushdown=False,
        projection_pushdown=False,
        slice_pushdown=False,
    )


def raising(job: Job) -> dict[str, str]:
    """The per-user metrics whose NaN values are an error, with the reason (``Raises``)."""
    user = set(job.user_names)
    return {
        m.name: reason
        for m in job.metrics
        if (reason := m.raise_reason) is not None and m.name in user
    }


def check_raising(job: Job, per_user: pl.LazyFrame) -> pl.LazyFrame:
    """Raise on the invalid users of ``insufficient=raise``-like options, else NaN -> null.

    Checked when the result is collected, as ``empty="error"``: the values passed on are
    those of the option's non-raising twin (the invalid users undefined).
    """
    reasons = raising(job)
    if not reasons:
        return per_user
    keys = job.ikeys
    schema = per_user.collect_schema()

    def check(frame: pl.DataFrame) -> pl.DataFrame:
        for name, reason in reasons.items():
            bad = frame.filter(pl.col(name).is_nan())
            if bad.height:
                example = bad.select(keys).head(5).rows()
                raise ValueError(raise_message(name, reason, bad.height, example))
        return frame

    checked = deferred_check(per_user, check, schema)
    return checked.with_columns(pl.col(list(reasons)).fill_nan(None))


def raise_message(name: str, reason: str, count: int, example: list[tuple[Any, ...]]) -> str:
    """The error of a raising option (shared by the Polars and the Spark engines)."""
    return f"metric {name!r}: {count} user(s) with {reason}; first {example}"


def fill_empty(job: Job, per_user: pl.LazyFrame) -> pl.LazyFrame:
    """``empty="zero"``: undefined per-user values count as 0 (else unchanged)."""
    if job.empty == "zero":
        return per_user.with_columns(pl.col(job.user_names).fill_null(0.0))
    return per_user


def summary_of(job: Job, per_user: pl.LazyFrame, values: pl.LazyFrame | None) -> pl.LazyFrame:
    """The summary (plan names) of per-user values and the finalized global ``values``.

    ``per_user`` has had :func:`fill_empty` applied; it may hold one by group or all.
    """
    names, by = job.user_names, job.iby
    empty: Literal["skip", "skip_row"] = "skip_row" if job.empty == "skip_row" else "skip"
    summary = summarize(
        per_user,
        names,
        by,
        aggregate=job.aggregate,
        empty=empty,
        ci=job.ci,
        confidence=job.confidence,
    )
    shown = with_intervals(job.aggregate, job.ci)
    if values is not None:
        if by:
            summary = summary.join(values, on=by, how="full", coalesce=True)
            summary = summary.sort(by)
        else:
            summary = pl.concat([summary, values], how="horizontal")
    out = summary.select(summary_columns(job.metrics, job.kinds, by, shown))
    if job.global_names:
        counts = [count_name(n) for n in names]
        out = out.with_columns(pl.col([*counts, *RESERVED]).fill_null(0))
    if job.summary == "long":
        own = {m.name: m.aggregate for m in job.metrics if m.aggregate != "mean"}
        out = long_summary(out, by, names, shown, job.global_names, own)
    return out


def finalize_globals(job: Job, partials: dict[str, list[pl.LazyFrame]]) -> pl.LazyFrame:
    """Merge partials of :func:`polars_rankeval.plan.build.user_partials`; finalize the globals.

    Returns the by-columns and one column per global metric (the user's names).
    """
    inner = {name: [job.inner(p) for p in parts] for name, parts in partials.items()}
    return job.outer(finalize(job, inner, job.global_names, job.iby))


def finalize(
    job: Job,
    partials: dict[str, list[pl.LazyFrame]],
    names: list[str],
    on: list[str],
) -> pl.LazyFrame:
    """Merge the partials of global (or item) metrics and finalize them.

    Returns the ``on`` columns (plan names) and one column per metric.
    """
    features = job.features()
    values: pl.LazyFrame | None = None
    for name in names:
        metric = next(m for m in job.metrics if m.name == name)
        plan = metric.plan(features)
        if not isinstance(plan, GlobalPlan):  # pragma: no cover - classified in create
            msg = f"metric {name!r} is not a global metric"
            raise TypeError(msg)
        group = [*job.iby, *plan.group]
        merged_input = pl.concat(partials.get(name, []), how="vertical_relaxed")
        combine = {
            "sum": lambda c: pl.col(c).sum(),
            "min": lambda c: pl.col(c).min(),
            "max": lambda c: pl.col(c).max(),
        }
        aggs = [combine[how](part).alias(part) for part, how in plan.combine.items()]
        merged = merged_input.group_by(group).agg(aggs) if group else merged_input.select(aggs)
        value = plan.finalize(merged, list(job.iby)).select(
            *on, pl.col("value").cast(pl.Float64).alias(name)
        )
        if job.empty == "zero":
            value = value.with_columns(pl.col(name).fill_null(0.0))
        elif job.empty == "error":
            collected = value.collect()
            missing = collected.get_column(name).null_count()
            if missing:
                msg = (
                    f"metric {name!r} is undefined for {missing} by group(s) (e.g. no "
                    "relevant or no non-relevant row); "
                    "pass empty='skip' or empty='zero'"
                )
                raise ValueError(msg)
            value = collected.lazy()
        if values is None:
            values = value
        elif on:
            values = values.join(value, on=on, how="full", coalesce=True, nulls_equal=True)
        else:
            values = pl.concat([values, value], how="horizontal")
    if values is None:  # pragma: no cover - only called with global metrics
        msg = "no global metric to finalize"
        raise ValueError(msg)
    return values


def summarize(
    per_user: pl.LazyFrame,
    names: list[str],
    by: list[str],
    *,
    aggregate: Aggregation | Sequence[Aggregation] = "mean",
    empty: Literal["skip", "skip_row", "zero"] = "skip",
    ci: Literal["t", "bootstrap"] | None = None,
    confidence: float = 0.95,
) -> pl.LazyFrame:
    """Aggregate per-user values per by-group, with the user counts.

    Each metric's aggregates cover the users for which that metric is defined
    (non-null), counted in ``n_users(<metric>)``: a metric's value does not depend on
    the other metrics of the call. ``n_users`` counts the users of the group and
    ``n_skipped`` those left out of at least one metric's aggregates (an undefined
    value for at least one of ``names``).

    Parameters
    ----------
    per_user
        One row per (by, user) with one column per metric in ``names``.
    names
        The per-user metrics to aggregate.
    by
        The by-columns (one summary row per group).
    aggregate
        ``mean`` (named by the metric itself), ``gmean`` (geometric; values below
        ``1e-5`` are raised to ``1e-5`` first, as trec_eval's gm_map does; null if a
        value is negative), ``hmean`` (harmonic; 0 if a value is 0, null if one is
        negative), ``qmean`` (quadratic, the root mean square), ``median`` and
        ``std`` (the sample standard deviation, ddof=1), or a list of them; all but
        the mean are named ``"<aggregation>(<metric>)"``, e.g. ``gmean(map)``.
    empty
        ``"skip"`` (default): a metric's aggregates leave out the users for which it
        is undefined. ``"skip_row"``: a user undefined for any metric of ``names`` is
        left out of every aggregate, so all of them cover ``n_users - n_skipped``
        users. ``"zero"``: an undefined value counts as 0.
    ci
        Also the uncertainty of each metric's mean, over the same users as the mean
        (``n_users(<metric>)`` of them): ``se(<metric>)``, the standard error
        ``sd / sqrt(n)`` (sample sd, ddof=1), and the interval ``ci_low(<metric>)``,
        ``ci_high(<metric>)`` at ``confidence``. ``"t"``: the Student t interval,
        ``mean -+ t_{(1+c)/2, n-1} se`` (needs scipy for the quantile). ``"bootstrap"``:
        the percentile interval of 10,000 bootstrap means (the users' values sorted,
        then resampled with the generators of :mod:`polars_rankeval._utils.stats`, seed 0:
        the same interval whatever the row order or the engine; it costs
        O(10,000 x users) per group and metric). Null with fewer than 2 users.
    confidence
        The level of the intervals, in (0, 1).

    Returns
    -------
    polars.LazyFrame
        The by-columns, one column per metric and aggregation (then the ``ci``
        columns), ``n_users(<metric>)`` per metric, ``n_users`` and ``n_skipped``
        (Int64).

    Examples
    --------
    >>> import polars as pl
    >>> from polars_rankeval.plan.finish import summarize
    >>> per_user = pl.LazyFrame({"ndcg": [1.0, 0.5, None], "tau": [None, 0.2, 0.4]})
    >>> summarize(per_user, ["ndcg", "tau"], []).collect()
    shape: (1, 6)
    ┌──────┬─────┬───────────────┬──────────────┬─────────┬───────────┐
    │ ndcg ┆ tau ┆ n_users(ndcg) ┆ n_users(tau) ┆ n_users ┆ n_skipped │
    │ ---  ┆ --- ┆ ---           ┆ ---          ┆ ---     ┆ ---       │
    │ f64  ┆ f64 ┆ i64           ┆ i64          ┆ i64     ┆ i64       │
    ╞══════╪═════╪═══════════════╪══════════════╪═════════╪═══════════╡
    │ 0.75 ┆ 0.3 ┆ 2             ┆ 2            ┆ 3       ┆ 2         │
    └──────┴─────┴───────────────┴──────────────┴─────────┴───────────┘
    >>> summarize(per_user, ["ndcg", "tau"], [], empty="skip_row").collect()
    shape: (1, 6)
    ┌──────┬─────┬───────────────┬──────────────┬─────────┬───────────┐
    │ ndcg ┆ tau ┆ n_users(ndcg) ┆ n_users(tau) ┆ n_users ┆ n_skipped │
    │ ---  ┆ --- ┆ ---           ┆ ---          ┆ ---     ┆ ---       │
    │ f64  ┆ f64 ┆ i64           ┆ i64          ┆ i64     ┆ i64       │
    ╞══════╪═════╪═══════════════╪══════════════╪═════════╪═══════════╡
    │ 0.5  ┆ 0.2 ┆ 1             ┆ 1            ┆ 3       ┆ 2         │
    └──────┴─────┴───────────────┴──────────────┴─────────┴───────────┘
    """
    aggs_wanted = aggregations(aggregate)
    check_choice("empty", empty, ("skip", "skip_row", "zero"))
    if empty == "zero":
        per_user = per_user.with_columns(pl.col(names).fill_null(0.0))
    # Without per-user metrics (only global ones requested) every user counts as defined.
    # A column, not an expression repeated in every aggregation (many metrics, e.g. a
    # cutoff range, would make the plan quadratic in size).
    flag = "__prk_defined"
    per_user = per_user.with_columns(
        (
            pl.all_horizontal([pl.col(n).is_not_null() for n in names]) if names else pl.lit(True)
        ).alias(flag)
    )
    every = pl.col(flag)

    def defined(name: str) -> pl.Expr:
        return every if empty == "skip_row" else pl.col(name).is_not_null()

    def counted(name: str) -> pl.Expr:
        """The values the aggregates cover; null for the users they leave out.

        (The aggregates skip nulls. Not a filter: the streaming engine lowers each
        filtered aggregate to a branch of its own, so that the summary of a cutoff
        range of many metrics would cost in the square of their number.)
        """
        return pl.when(every).then(pl.col(name)) if empty == "skip_row" else pl.col(name)

    aggs = [
        _aggregate(agg, counted(n)).alias(summary_name(agg, n))
        for n in names
        for agg in aggs_wanted
    ]
    aggs += [defined(n).sum().cast(pl.Int64).alias(count_name(n)) for n in names]
    aggs += [
        pl.len().cast(pl.Int64).alias("n_users"),
        (~every).sum().cast(pl.Int64).alias("n_skipped"),
    ]
    if ci is not None:
        aggs += _interval_parts(names, defined, ci, grouped=bool(by))
    out = per_user.group_by(by).agg(aggs).sort(by) if by else per_user.select(aggs)
    if ci is None:
        return out
    columns = [
        *by,
        *(summary_name(a, n) for n in names for a in with_intervals(aggs_wanted, ci)),
        *(count_name(n) for n in names),
        "n_users",
        "n_skipped",
    ]
    return _intervals(out, names, ci, confidence).select(columns)


def with_intervals(aggregate: Sequence[str], ci: str | None) -> list[str]:
    """The aggregations of the summary's columns: ``aggregate``, then the ``ci`` parts."""
    return [*aggregate, *(CI_PARTS if ci is not None else ())]


def _hidden(part: str, name: str) -> str:
    return f"__prk_{part}({name})"


def _interval_parts(
    names: list[str], defined: Callable[[str], pl.Expr], ci: str, *, grouped: bool
) -> list[pl.Expr]:
    """The aggregations behind the intervals: mean, standard error, (sorted values)."""
    parts = []
    for n in names:
        x = pl.col(n).filter(defined(n))
        parts += [
            x.mean().alias(_hidden("mean", n)),
            (x.std(ddof=1) / x.count().sqrt()).alias(summary_name("se", n)),
        ]
        if ci == "bootstrap":  # the values as one list per group (sorted: row order out)
            values = x.sort()
            parts.append((values if grouped else values.implode()).alias(_hidden("values", n)))
    return parts


def _intervals(out: pl.LazyFrame, names: list[str], ci: str, confidence: float) -> pl.LazyFrame:
    """``ci_low(<metric>)``, ``ci_high(<metric>)`` from the aggregated parts."""
    level = (1.0 + confidence) / 2.0
    if ci == "t":
        from polars_rankeval._utils.stats import scipy_stats

        st = scipy_stats("evaluate(ci='t') needs scipy for the t quantile")

        def quantile(counts: pl.Series) -> pl.Series:
            with np.errstate(invalid="ignore"):
                q = st.t.ppf(level, counts.cast(pl.Float64).to_numpy() - 1.0)
            return pl.Series(q, dtype=pl.Float64).fill_nan(None)

        exprs = []
        for n in names:
            t = pl.col(count_name(n)).map_batches(quantile, return_dtype=pl.Float64)
            half = t * pl.col(summary_name("se", n))
            mean = pl.col(_hidden("mean", n))
            exprs += [
                (mean - half).alias(summary_name("ci_low", n)),
                (mean + half).alias(summary_name("ci_high", n)),
            ]
        return out.with_columns(exprs)
    bounds = pl.Struct({"low": pl.Float64, "high": pl.Float64})
    for n in names:
        out = out.with_columns(
            pl.col(_hidden("values", n))
            .map_batches(_bootstrap_bounds(n, confidence), return_dtype=bounds)
            .alias(_hidden("bounds", n))
        ).with_columns(
            pl.col(_hidden("bounds", n)).struct.field("low").alias(summary_name("ci_low", n)),
            pl.col(_hidden("bounds", n)).struct.field("high").alias(summary_name("ci_high", n)),
        )
    return out


def _bootstrap_bounds(name: str, confidence: float) -> Callable[[pl.Series], pl.Series]:
    """Per group (a list of sorted values): the percentile interval of bootstrap means."""
    from polars_rankeval._utils.stats import bootstrap_means

    alpha = (1.0 - confidence) / 2.0

    def bounds(lists: pl.Series) -> pl.Series:
        rows: list[dict[str, float | None]] = []
        for i in range(lists.len()):
            values = lists[i]
            x = values.to_numpy().astype(np.float64) if values is not None else np.empty(0)
            if x.size < 2:
                rows.append({"low": None, "high": None})
                continue
            means = bootstrap_means(x[:, None], CI_RESAMPLES, CI_SEED, name, "ci")[:, 0]
            low, high = np.quantile(means, [alpha, 1.0 - alpha])
            rows.append({"low": float(low), "high": float(high)})
        return pl.Series(rows, dtype=pl.Struct({"low": pl.Float64, "high": pl.Float64}))

    return bounds


def summary_columns(
    metrics: Sequence[Metric], kinds: dict[str, str], by: list[str], aggregate: Sequence[str]
) -> list[str]:
    """The columns of the wide summary: by, metrics x aggregations, counts."""
    values = [
        summary_name(agg, m.name) if kinds[m.name] != "global" else m.name
        for m in metrics
        for agg in (aggregate if kinds[m.name] != "global" else ["mean"])
    ]
    counts = [count_name(m.name) for m in metrics if kinds[m.name] in ("expr", "frame")]
    return [*by, *values, *counts, *RESERVED]


def long_summary(
    wide: pl.LazyFrame,
    by: list[str],
    names: list[str],
    aggregate: Sequence[str],
    global_names: Sequence[str] = (),
    own: dict[str, str] | None = None,
) -> pl.LazyFrame:
    """The wide summary as one row per (by, metric, aggregation).

    Columns: the by-columns, ``metric``, ``aggregation`` (``"global"`` for a global
    metric's one value; ``own`` maps a metric aggregated by its ``aggregate=`` option
    to that aggregation, e.g. ``"sum"``), ``value``, ``n_users`` (the users the value covers) and
    ``n_skipped`` (the users of the group it leaves out: undefined for that metric, or
    under ``empty="skip_row"`` for any per-user metric; 0 for global metrics).
    Rows are ordered by the by-columns, then as the metrics and aggregations were
    requested.
    """
    rows = [(name, agg) for name in names for agg in aggregate]
    labels = {
        "metric": pl.Series([*(n for n, _ in rows), *global_names], dtype=pl.String),
        "aggregation": pl.Series(
            [
                *(a for _, a in rows),
                *((own or {}).get(n, GLOBAL_AGGREGATION) for n in global_names),
            ],
            dtype=pl.String,
        ),
    }
    users = pl.col("n_users").cast(pl.Int64)
    columns = {
        "value": [
            *(pl.col(summary_name(a, n)).cast(pl.Float64) for n, a in rows),
            *(pl.col(n).cast(pl.Float64) for n in global_names),
        ],
        "n_users": [
            *(pl.col(count_name(n)).cast(pl.Int64) for n, _ in rows),
            *(users for _ in global_names),
        ],
        "n_skipped": [
            *(users - pl.col(count_name(n)).cast(pl.Int64) for n, _ in rows),
            *(pl.lit(0, pl.Int64) for _ in global_names),
        ],
    }
    out = long_rows(wide, by, labels, columns)
    return out.sort(by, maintain_order=True) if by else out


FrameT = TypeVar("FrameT", pl.DataFrame, pl.LazyFrame)


def long_rows(
    frame: FrameT, by: list[str], labels: dict[str, pl.Series], columns: dict[str, list[pl.Expr]]
) -> FrameT:
    """A wide frame in long form: one row per (row of ``frame``, position i).

    Row i of a row of ``frame`` holds its ``by`` columns, the i-th value of each of
    ``labels`` and the i-th expression of each of ``columns`` (all of one length).
    One ``select`` of lists, exploded: a ``select`` per position, concatenated, costs
    the square of their number (each holds the whole plan of ``frame``, or reads its
    whole schema).
    """
    return frame.select(
        *by,
        *(pl.lit(series).implode().alias(name) for name, series in labels.items()),
        *(pl.concat_list(exprs).alias(name) for name, exprs in columns.items()),
    ).explode([*labels, *columns])


def _aggregate(aggregation: str, x: pl.Expr) -> pl.Expr:
    """The aggregate of the non-null values of ``x`` (nulls: users left out)."""
    negative = (x < 0).any()
    if aggregation == "gmean":
        value = x.clip(lower_bound=GMEAN_FLOOR).log().mean().exp()
        return pl.when(negative).then(None).otherwise(value)
    if aggregation == "hmean":
        value = pl.when((x == 0).any()).then(0.0).otherwise(x.count() / (1.0 / x).sum())
        return pl.when(negative).then(None).otherwise(value)
    if aggregation == "qmean":
        return (x * x).mean().sqrt()
    if aggregation == "median":
        return x.median()
    if aggregation == "std":
        return x.std(ddof=1)
    return x.mean()


def _raise_on_undefined(frame: pl.DataFrame, names: list[str], keys: list[str]) -> None:
    for name in names:
        bad = frame.filter(pl.col(name).is_null())
        if bad.height:
            example = bad.select(keys).head(5).rows()
            raise ValueError(undefined_message(name, bad.height, example))


def undefined_message(name: str, count: int, example: list[tuple[Any, ...]]) -> str:
    """The ``empty="error"`` message (shared by the Polars and the Spark engines)."""
    return (
        f"metric {name!r} is undefined for {count} user(s) (e.g. no relevant "
        f"item), first {example}; pass empty='skip' (each metric's mean over the users "
        "it is defined for), empty='skip_row' or empty='zero'"
    )
