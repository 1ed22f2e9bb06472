"""The inputs of the meta-evaluation functions: per-user values as users x systems matrices.

:func:`polars_rankeval.discriminative_power` and :func:`polars_rankeval.swap_rate` read
their per-user values as :func:`polars_rankeval.compare` does: from one
``evaluate(per_user=True, by=...)`` plan (:func:`evaluate_per_user`), or from a per-user
frame the caller already has; :func:`value_matrices` pairs them by user with compare's
own pairing (``paired_values._pair_values``), so that the users counted and the columns (the
systems sorted by name) are compare's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import polars as pl

from polars_rankeval._utils.constraints import (
    COLUMN,
    FLAG,
    Frame,
    Instance,
    Integer,
    ListOf,
    Number,
    Options,
    Spec,
    Text,
)
from polars_rankeval._utils.types import is_spark_frame
from polars_rankeval.analysis.compare import _refuse_global
from polars_rankeval.analysis.compare_options import TEST_OPTIONS, TIE_TOLERANCE
from polars_rankeval.analysis.paired_values import _local, _pair_values, choose_systems
from polars_rankeval.metrics.grammar import METRICS, MetricsArg, parse_metrics
from polars_rankeval.metrics.params import Interval
from polars_rankeval.plan.validate import to_lazy

_NOT_FORWARDED = ("per_user", "per_item", "aggregate", "by", "conventions")


FROM_DATA: dict[str, Spec] = {
    "data": Frame("polars", "pyarrow", "pandas"),
    "metrics": METRICS,
    "by": COLUMN,
    "systems": TEST_OPTIONS["systems"],
}
"""The inputs of a meta-evaluation from the long frame (``evaluate``'s options pass on)."""
FROM_PER_USER: dict[str, Spec] = {
    "per_user": Frame("polars", "pyarrow", "pandas"),
    "metrics": [Text("a metric column name (str)"), ListOf(what="a list of metric columns"), None],
    "by": COLUMN,
    "user": COLUMN,
    "systems": TEST_OPTIONS["systems"],
}
"""The inputs of a meta-evaluation from per-user values."""
RESAMPLING: dict[str, Spec] = {
    "test": Options("bootstrap", "tukey"),
    "statistic": Options("mean", "t"),
    "alpha": Number(Interval(0, 1, closed="neither")),
    "n_resamples": Integer(Interval(1, None)),
    "seed": Integer(Interval(0, None)),
    "progress": [FLAG, None],
}
"""The options of :func:`~polars_rankeval.discriminative_power`."""
SWAPS: dict[str, Spec] = {
    "subset_sizes": [
        Integer(Interval(1, None)),
        ListOf(Integer(Interval(1, None)), what="a list of ints >= 1"),
        None,
    ],
    "n_trials": Integer(Interval(1, None)),
    "bins": [Integer(Interval(1, None)), ListOf(Number(), what="a list of bin edges")],
    "max_swap_rate": Number(Interval(0, 1, closed="neither")),
    "tie_tolerance": TIE_TOLERANCE,
    "seed": Integer(Interval(0, None)),
}
"""The options of :func:`~polars_rankeval.swap_rate`."""
DIRECTIONS: Spec = [Instance(Mapping, what="a mapping of metric -> bool or None"), None]
"""``higher_is_better=`` of the per-user forms."""


def evaluate_per_user(
    data: Any, metrics: MetricsArg, *, by: str, options: dict[str, Any], caller: str
) -> tuple[pl.DataFrame, list[str], list[str]]:
    """``(per-user frame, metric columns, systems in order of appearance)``.

    One ``evaluate(data, metrics, by=by, per_user=True, **options)`` plan; metrics
    without a per-user mean (global, per-item, ``aggregate=``) are refused as by
    :func:`polars_rankeval.compare`.
    """
    from polars_rankeval.api.evaluate import evaluate

    for name in _NOT_FORWARDED:
        if name in options:
            msg = f"{caller}() does not take {name}=; it evaluates per user over by={by!r}"
            raise TypeError(msg)
    if not isinstance(by, str):
        msg = f"by must be one column name (str), got {by!r}"
        raise TypeError(msg)
    source, _ = to_lazy(data)
    schema = source.collect_schema()
    _refuse_global(schema, metrics, by, options)
    order = (
        source.select(pl.col(by).cast(pl.String).drop_nulls().unique(maintain_order=True))
        .collect()
        .get_column(by)
        .to_list()
        if by in schema
        else []
    )
    frame = _local(evaluate(source, metrics, by=by, per_user=True, **options))
    present = set(frame.get_column(by).cast(pl.String).to_list())
    names = [m.name for m in parse_metrics(metrics)]
    return frame, names, [s for s in order if s in present]


def metric_columns(
    per_user: Any, metrics: Sequence[str] | str | None, by: str, user: str | None
) -> tuple[pl.LazyFrame, list[str]]:
    """The per-user frame as a LazyFrame and its checked metric columns."""
    if is_spark_frame(per_user):
        per_user = _local(per_user)
    lazy, _ = to_lazy(per_user, "per_user")
    schema = lazy.collect_schema()
    keys = [(by, "by")] + ([] if user is None else [(user, "user")])
    for column, role in keys:
        if column not in schema:
            msg = (
                f"{role} column {column!r} not found in the per-user frame; available "
                f"columns: {', '.join(schema.names()) or 'none'}"
            )
            raise ValueError(msg)
    if metrics is None:
        names = [c for c in schema.names() if c not in (by, user) and schema[c].is_numeric()]
    else:
        names = [metrics] if isinstance(metrics, str) else list(metrics)
    if not names:
        msg = "metrics must name at least one metric column"
        raise ValueError(msg)
    if len(set(names)) != len(names):
        msg = f"metrics must be distinct, got {names!r}"
        raise ValueError(msg)
    for name in names:
        if name not in schema:
            msg = (
                f"metric column {name!r} not found in the per-user frame; available "
                f"columns: {', '.join(schema.names())}"
            )
            raise ValueError(msg)
        if not (schema[name].is_numeric() or schema[name] == pl.Null):
            msg = f"metric column {name!r} must be numeric, got {schema[name]}"
            raise TypeError(msg)
    return lazy, names


def value_matrices(
    per_user: Any,
    metrics: Sequence[str] | str | None,
    *,
    by: str,
    user: str,
    systems: Sequence[Any] | None,
) -> tuple[list[str], list[str], list[tuple[str, np.ndarray, int]]]:
    """``(systems, systems sorted by name, [(metric, users x systems, users dropped)])``.

    The systems in the order given (or of first appearance); the matrices' columns are
    the systems sorted by name.

    Only the ``by``, ``user`` and metric columns are collected. A user counts for a
    metric when every compared system has a value for it (compare's rule); a NaN or
    infinite value is an error (null is the undefined value), as for
    :func:`polars_rankeval.compare_per_user`.
    """
    lazy, names = metric_columns(per_user, metrics, by, user)
    frame = lazy.select(pl.col(by).cast(pl.String), user, *names).collect()
    for name in names:
        value = pl.col(name).cast(pl.Float64)
        bad = frame.filter(value.is_nan() | value.is_infinite())
        if bad.height:
            msg = (
                f"metric column {name!r} has {bad.height} NaN or infinite value(s) (e.g. "
                f"{by}={bad[by][0]!r}, {user}={bad[user][0]!r}); use null for an undefined "
                "value"
            )
            raise ValueError(msg)
    if frame.get_column(user).null_count():
        msg = f"user column {user!r} has null ids in the per-user frame"
        raise ValueError(msg)
    available = frame.get_column(by).drop_nulls().unique(maintain_order=True).to_list()
    chosen = choose_systems(available, systems, by)
    canonical = sorted(chosen)
    return chosen, canonical, _pair_values(frame, names, by, user, canonical)


def all_pairs(systems: list[str], canonical: list[str]) -> list[tuple[int, int]]:
    """Every pair ``(systems[j], systems[i])``, ``i < j``, as columns of ``canonical``.

    The pairs of :func:`polars_rankeval.compare` without a baseline: each system
    against the one that comes first in ``systems``.
    """
    position = [canonical.index(s) for s in systems]
    return [
        (position[j], position[i]) for i in range(len(systems)) for j in range(i + 1, len(systems))
    ]
