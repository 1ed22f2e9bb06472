"""The per-user frame of a comparison, read, checked and paired into users x systems matrices.

What the paired tests need from a per-user frame (one row per system and user): the
frame in memory, its metric columns checked, the systems chosen and paired, and per
metric the values of the users with a value for every compared system. Separate from
the tests so that every analysis over per-user values (compare, differences, power,
metric agreement, the system values) reads its input the same way.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import polars as pl

from polars_rankeval._utils.types import is_spark_frame
from polars_rankeval.analysis.metric_direction import _directions
from polars_rankeval.plan.validate import to_lazy


def _local(frame: Any) -> pl.DataFrame:
    """A per-user frame in memory: a LazyFrame collected, a Spark DataFrame too.

    One row per (system, user): small enough for the driver, where the tests run.
    """
    if is_spark_frame(frame):
        from polars_rankeval.engines.spark_ops import to_polars

        return to_polars(frame)
    return frame.collect() if isinstance(frame, pl.LazyFrame) else frame


def _pair_values(
    frame: pl.DataFrame, names: list[str], by: str, user: str, chosen: list[str]
) -> list[tuple[str, np.ndarray, int]]:
    """Per metric: (name, values of the paired users x systems, users dropped).

    Users are numbered by their sorted ids (a dense rank), systems by their position in
    ``chosen``; the values are scattered into a users x systems matrix (NaN = no row or
    a null value), and the users with a value for every system are kept, in user order.
    """
    m = len(chosen)
    rows = frame.filter(pl.col(by).is_in(chosen)).select(
        (pl.col(user).rank("dense") - 1).cast(pl.Int64).alias("__user"),
        pl.col(by).replace_strict(chosen, list(range(m)), return_dtype=pl.Int64).alias("__system"),
        *(pl.col(name).cast(pl.Float64).fill_null(float("nan")) for name in names),
    )
    user_pos = rows.get_column("__user").to_numpy()
    system_pos = rows.get_column("__system").to_numpy()
    n = int(user_pos.max()) + 1 if user_pos.size else 0
    cell = user_pos * m + system_pos
    counts = np.bincount(cell, minlength=n * m)
    if counts.max(initial=0) > 1:
        first = int(np.flatnonzero(counts > 1)[0])
        where = np.flatnonzero(cell == first)[0]
        dup = frame.filter(pl.col(by).is_in(chosen)).row(int(where), named=True)
        msg = (
            f"the per-user frame has {int((counts > 1).sum())} duplicate ({by}, {user}) "
            f"row(s), e.g. {by}={dup[by]!r}, {user}={dup[user]!r}"
        )
        raise ValueError(msg)
    prepared = []
    for name in names:
        matrix = np.full((n, m), np.nan, order="F")
        matrix[user_pos, system_pos] = rows.get_column(name).to_numpy()
        complete = ~np.isnan(matrix).any(axis=1)
        values = np.asfortranarray(matrix[complete])
        dropped = n - values.shape[0]
        if values.shape[0] == 0:
            msg = (
                f"no user has a value of {name!r} for every compared system "
                f"({', '.join(chosen)}); {dropped} user(s) have a value for some of them"
            )
            raise ValueError(msg)
        prepared.append((name, values, dropped))
    return prepared


def _read_per_user(
    per_user: Any,
    metrics: Sequence[str] | str | None,
    by: str,
    user: str,
    higher_is_better: Mapping[str, bool | None] | None,
) -> tuple[pl.DataFrame, list[str], dict[str, bool | None]]:
    """The per-user frame in memory, its metric columns and their directions, checked.

    ``by`` and ``user`` must be columns, the metric columns (default: every other
    column) distinct, numeric and free of NaN and infinity (null is an undefined
    value), and the user ids not null.
    """
    frame = _local(per_user if is_spark_frame(per_user) else to_lazy(per_user, "per_user")[0])
    for column, role in ((by, "by"), (user, "user")):
        if column not in frame.columns:
            msg = (
                f"{role} column {column!r} not found in the per-user frame; available "
                f"columns: {', '.join(frame.columns) or 'none'}"
            )
            raise ValueError(msg)
    if metrics is None:
        names = [c for c in frame.columns if c not in (by, user)]
    else:
        names = [metrics] if isinstance(metrics, str) else list(metrics)
    if not names:
        msg = "metrics must name at least one metric column"
        raise ValueError(msg)
    if len(set(names)) != len(names):
        msg = f"metrics must be distinct, got {names!r}"
        raise ValueError(msg)
    for name in names:
        if name not in frame.columns:
            msg = (
                f"metric column {name!r} not found in the per-user frame; available "
                f"columns: {', '.join(frame.columns)}"
            )
            raise ValueError(msg)
        dtype = frame.schema[name]
        if not (dtype.is_numeric() or dtype == pl.Null):
            msg = f"metric column {name!r} must be numeric, got {dtype}"
            raise TypeError(msg)
        value = pl.col(name).cast(pl.Float64)
        bad = frame.filter(value.is_nan() | value.is_infinite())
        if bad.height:
            msg = (
                f"metric column {name!r} has {bad.height} NaN or infinite value(s) (e.g. "
                f"{by}={bad[by][0]!r}, {user}={bad[user][0]!r}); use null for an undefined "
                "value"
            )
            raise ValueError(msg)
    directions = _directions(names, higher_is_better)
    if frame.get_column(user).null_count():
        msg = f"user column {user!r} has null ids in the per-user frame"
        raise ValueError(msg)
    return frame, names, directions


def _chosen_pairs(
    labels: pl.Series, by: str, systems: Sequence[Any] | None, baseline: Any
) -> tuple[list[str], list[tuple[int, int]]]:
    """The compared systems and pairs (:func:`choose_pairs`) among the ``by`` labels."""
    available = labels.drop_nulls().unique(maintain_order=True).to_list()
    return choose_pairs(available, systems, baseline, by)


def choose_systems(available: list[str], systems: Sequence[Any] | None, by: str) -> list[str]:
    """The compared systems: ``systems`` (checked) or every one available, in order."""
    if systems is None:
        chosen = available
    else:
        if isinstance(systems, str):
            msg = f"systems must be a list of system names, got {systems!r}"
            raise TypeError(msg)
        chosen = [str(s) for s in systems]
        if len(set(chosen)) != len(chosen):
            msg = f"systems must be distinct, got {list(systems)!r}"
            raise ValueError(msg)
        unknown = [s for s in chosen if s not in available]
        if unknown:
            msg = (
                f"system(s) {', '.join(map(repr, unknown))} not found in column {by!r}; "
                f"systems: {', '.join(sorted(available))}"
            )
            raise ValueError(msg)
    if len(chosen) < 2:
        msg = f"need at least 2 systems in column {by!r}, got {len(chosen)}: {chosen!r}"
        raise ValueError(msg)
    return chosen


def choose_pairs(
    available: list[str], systems: Sequence[Any] | None, baseline: Any, by: str
) -> tuple[list[str], list[tuple[int, int]]]:
    """The compared systems (as strings, in order) and the pairs ``(system, baseline)``.

    The pairs are positions in the systems: each system against ``baseline``, or
    without one every pair ``(j, i)`` with ``i < j``.
    """
    chosen = choose_systems(available, systems, by)
    if baseline is None:
        return chosen, [(j, i) for i in range(len(chosen)) for j in range(i + 1, len(chosen))]
    base = str(baseline)
    if base not in chosen:
        msg = (
            f"baseline {baseline!r} not found among the systems of column {by!r}: "
            f"{', '.join(sorted(chosen))}"
        )
        raise ValueError(msg)
    index = chosen.index(base)
    return chosen, [(j, index) for j in range(len(chosen)) if j != index]
