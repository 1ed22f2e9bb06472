"""The aggregation over users of one metric: the ``aggregate=`` option of the grammar.

By default a per-user metric is summarized by the mean over the users (and by whatever
``evaluate(aggregate=...)`` lists). Some libraries report another aggregation under the
metric's own name, and a preset must reproduce it. This module declares those, once,
for every per-user metric of the registry:

``aggregate=mean``
    The default: the metric's per-user values, summarized as ``evaluate`` summarizes.
``aggregate=sum``
    The sum over the users (trec_eval prints ``num_ret``, ``num_rel`` and
    ``num_rel_ret`` summed over the queries in its ``all`` line; ir_measures sums
    ``NumRet``, ``NumRel`` and ``NumRelRet`` the same way).
``aggregate=gmean``
    The geometric mean over the users, each value raised to :data:`GMEAN_FLOOR` first
    (trec_eval's ``gm_map`` and ``gm_bpref``: exp of the mean of log(max(AP, 1e-5)));
    null when a value is negative. ``empty="zero"`` counts an undefined user as the
    floor, as trec_eval counts a query scoring 0.
``aggregate=relevant_weighted``
    The mean weighted by each user's number of relevant items (relevance >= the
    metric's ``rel``, recommended or not): sum_u R_u v_u / sum_u R_u. RecBole's
    ``gauc`` is ``auc(aggregate=relevant_weighted)``: the per-user AUC over every
    candidate, users without a positive or without a negative left out (their AUC is
    undefined; ``empty="skip"``).
``aggregate=pooled``
    One statistic over the rows of every user at once, for the metrics that define it
    (:data:`POOLED`): ``auc(aggregate=pooled)`` is the Mann-Whitney AUC of all the
    (user, item) rows with a score and a relevance (scikit-learn's ``roc_auc_score`` on
    them: MS Recommenders ``auc``, Jurity ``AUC`` without a cutoff), the same value as
    the ``global_auc`` metric. For the list means of :data:`POOLED_ROWS` (``novelty``)
    it is the mean over the recommended rows of every user at once: the users' values
    weighted by their list sizes ``min(k, #recommended)`` (MS Recommenders ``novelty``
    sums over every row of its recommendations and divides by their number).

A metric with ``aggregate`` other than ``mean`` has one value per ``by`` group (a
global metric): it is computed from partial sums over whole users, so it runs in
memory, bucket by bucket and on Spark alike, and ``evaluate``'s own ``aggregate=`` list
does not apply to it (its one value is in the column named by the metric, and in the
long summary its ``aggregation`` is ``"global"``). Its per-user values are those of the
metric without the option (``per_user=True`` refuses it with that name). ``empty=``
applies to the per-user values before they are aggregated: ``skip`` leaves undefined
users out (a sum or weighted mean over the defined users; null when none is), ``zero``
counts them as 0 (with their weight), ``error`` makes the value undefined, which
``evaluate`` reports as an error.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal, get_args

import polars as pl

if TYPE_CHECKING:
    from polars_rankeval.metrics.features import Features
    from polars_rankeval.metrics.spec import GlobalPlan, Metric

UserAggregate = Literal["mean", "sum", "gmean", "relevant_weighted", "pooled"]
"""The values of the ``aggregate=`` metric option (see the module docstring)."""
USER_AGGREGATES: tuple[str, ...] = get_args(UserAggregate)
OPTION = "aggregate"
"""The name of the option in the grammar: ``num_ret(aggregate=sum)``."""
DEFAULT = "mean"
GMEAN_FLOOR = 1e-5
"""Values below this are raised to it before a geometric mean (trec_eval's gm_map)."""

_V, _W = "__prk_agg_value", "__prk_agg_weight"
_PARTS = (
    "sum", "defined", "undefined", "weighted", "weight_defined", "weight_all", "log_sum",
    "negative",
)  # fmt: skip


def _pooled_auc(metric: Metric, features: Features) -> GlobalPlan:
    from polars_rankeval.metrics.registry import get_spec

    if features.tie.pair_weight is None:
        msg = (
            "auc(aggregate=pooled) compares scores across users, where item ids cannot "
            "break ties: it supports ties='expected' (a tied pair counts 1/2, as "
            f"roc_auc_score), 'optimistic' or 'pessimistic', got ties={features.ties!r}"
        )
        raise ValueError(msg)
    rel = dict(metric.options).get("rel", 1.0)
    plan = get_spec("global_auc").kernel(features, None, rel=rel)
    return plan  # type: ignore[return-value]


POOLED: dict[str, Callable[[Metric, Features], GlobalPlan]] = {"auc": _pooled_auc}
"""The metrics with a pooled definition (``aggregate=pooled``) and its plan."""

POOLED_ROWS: frozenset[str] = frozenset({"novelty"})
"""Means over a user's top k whose pooled form is the mean over every user's rows: the
users' values weighted by their list sizes (``aggregate=pooled``)."""


def check(spec_name: str, scope: str, takes_k: bool, value: Any, k: int | None) -> str:
    """The ``aggregate=`` value of a metric, checked (``k``: its cutoff, if any)."""
    where = f"parameter {OPTION!r} of metric {spec_name!r}"
    if value is None or value not in USER_AGGREGATES:
        msg = f"{where} must be one of {sorted(USER_AGGREGATES)}, got {value!r}"
        raise ValueError(msg)
    if value == DEFAULT:
        return DEFAULT
    if scope != "user":
        msg = (
            f"{where}: {spec_name!r} already has one value per by group (or per item); "
            f"aggregate= applies to per-user metrics, got {value!r}"
        )
        raise ValueError(msg)
    if value == "pooled":
        if spec_name not in POOLED and spec_name not in POOLED_ROWS:
            names = ", ".join(sorted({*POOLED, *POOLED_ROWS}))
            msg = (
                f"{where}: aggregate='pooled' is defined for {names} only "
                f"(one statistic over every user's rows), got it on {spec_name!r}"
            )
            raise ValueError(msg)
        if k is not None and spec_name in POOLED:
            msg = (
                f"{where}: aggregate='pooled' takes no cutoff (it pools every scored and "
                f"judged row), got @{k}"
            )
            raise ValueError(msg)
    return str(value)


def plan(metric: Metric, features: Features) -> GlobalPlan:
    """The plan of ``metric`` (``aggregate`` other than mean) as a global metric."""
    from polars_rankeval.metrics._common import num_relevant
    from polars_rankeval.metrics.spec import FramePlan, GlobalPlan

    how = metric.aggregate
    options = dict(metric.options)
    if how == "pooled" and metric.spec.name in POOLED_ROWS:
        if options.get("denominator", "list") != "list":
            msg = (
                f"metric {metric.name!r}: aggregate='pooled' divides the sum over every "
                "user's top k by the number of those rows; it takes denominator=list only"
            )
            raise ValueError(msg)
    elif how == "pooled":
        params = metric.spec.params
        other = [f"{k}={v}" for k, v in metric.options if k != "rel" and v != params[k].default]
        if other:
            msg = (
                f"metric {metric.name!r}: aggregate='pooled' is one AUC over the rows of "
                f"every user; it takes rel= only, got {', '.join(other)}"
            )
            raise ValueError(msg)
        return POOLED[metric.spec.name](metric, features)
    inner = metric.spec.kernel(features, metric.k, **options)
    if isinstance(inner, GlobalPlan):
        msg = (
            f"metric {metric.name!r}: with these options {metric.spec.name!r} already has "
            "one value per by group; aggregate= applies to per-user values"
        )
        raise ValueError(msg)
    if how == "pooled":  # POOLED_ROWS: each user weighs its list size min(k, #recommended)
        weight = features.p_in(metric.k).sum().cast(pl.Float64)
    else:
        weight = num_relevant(features, float(options.get("rel", 1.0))).cast(pl.Float64)
    keys, by = list(features.keys), list(features.by)
    empty = getattr(features, "empty", "skip")

    def per_user(rows: pl.LazyFrame) -> pl.LazyFrame:
        if isinstance(inner, FramePlan):
            values = inner.build(rows).select(*keys, pl.col("value").cast(pl.Float64).alias(_V))
            weights = rows.group_by(keys).agg(weight.alias(_W))
            return weights.join(values, on=keys, how="left", nulls_equal=True)
        return rows.group_by(keys).agg(inner.cast(pl.Float64).alias(_V), weight.alias(_W))

    def partial(rows: pl.LazyFrame) -> pl.LazyFrame:
        v, w = pl.col(_V), pl.col(_W)
        defined = v.is_not_null()
        parts = [
            v.sum().alias("sum"),
            defined.sum().cast(pl.Float64).alias("defined"),
            (~defined).sum().cast(pl.Float64).alias("undefined"),
            (v * w).sum().alias("weighted"),
            w.filter(defined).sum().alias("weight_defined"),
            w.sum().alias("weight_all"),
            v.clip(lower_bound=GMEAN_FLOOR).log().sum().alias("log_sum"),
            (v < 0).sum().cast(pl.Float64).alias("negative"),
        ]
        users = per_user(rows)
        return users.group_by(by).agg(parts) if by else users.select(parts)

    def finalize(parts: pl.LazyFrame, by_cols: list[str]) -> pl.LazyFrame:
        total, n_def = pl.col("sum"), pl.col("defined")
        if how == "sum":
            value = total if empty == "zero" else pl.when(n_def > 0).then(total)
        elif how == "gmean":  # an undefined user counts as the floor under empty=zero
            logs, n = pl.col("log_sum"), n_def
            if empty == "zero":
                logs = logs + pl.col("undefined") * math.log(GMEAN_FLOOR)
                n = n + pl.col("undefined")
            value = pl.when((n > 0) & (pl.col("negative") == 0)).then((logs / n).exp())
        else:
            weights = pl.col("weight_all" if empty == "zero" else "weight_defined")
            value = pl.when(weights > 0).then(pl.col("weighted") / weights)
        if empty == "error":
            value = pl.when(pl.col("undefined") == 0).then(value)
        return parts.select(*by_cols, value.cast(pl.Float64).alias("value"))

    return GlobalPlan(partial, (), dict.fromkeys(_PARTS, "sum"), finalize)  # type: ignore[arg-type]
