"""Power against the number of users: how the answer of ``prk.sample_size`` comes about."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import polars as pl

from polars_rankeval._utils.constraints import Frame, Integer, Text, validate_params
from polars_rankeval.metrics.params import Interval
from polars_rankeval.plot._common import (
    HEIGHT,
    WIDTH,
    as_frame,
    check_rows,
    color_encoding,
    import_altair,
    needs_columns,
)

if TYPE_CHECKING:
    import altair as alt

_NEEDED = ("delta", "sd", "alpha", "power", "alternative", "n_users")
_POINTS = 200


@validate_params(
    {
        "sample": Frame("polars", "pyarrow", "pandas"),
        "max_users": [Integer(Interval(3, None)), None],
    }
)
def power_curve_data(sample: Any, *, max_users: int | None = None) -> pl.DataFrame:
    """The power of the paired t test against the number of users, per row of ``sample``.

    Parameters
    ----------
    sample
        The result of :func:`polars_rankeval.sample_size` (rows with an ``sd``; rows
        whose ``sd`` is 0 or null have no curve).
    max_users
        The last number of users (default: 1.5 x the largest ``n_users``, at least 10).

    Returns
    -------
    polars.DataFrame
        ``series`` (the row: its pair and ``delta``), ``n_users``, ``power``; about 200
        numbers of users per row, evenly spaced from 2.

    Examples
    --------
    >>> import polars_rankeval as prk
    >>> data = prk.plot.power_curve_data(prk.sample_size(delta=0.1, sd=0.2))
    >>> data.columns, data["n_users"].min(), data["n_users"].max()
    (['series', 'n_users', 'power'], 2, 51)
    """
    from polars_rankeval.analysis.t_test_power import t_power

    frame = as_frame(sample, "sample")
    needs_columns(frame, _NEEDED, "prk.sample_size")
    frame = frame.filter(pl.col("sd").is_not_null() & (pl.col("sd") > 0))
    check_rows(frame, "power_curve")
    largest = frame.get_column("n_users").drop_nulls().to_list()
    last = max_users if max_users is not None else max(10, int(1.5 * max(largest, default=10)))
    users = np.unique(np.linspace(2, max(last, 3), _POINTS).round().astype(np.int64))
    parts = []
    for row, label in zip(frame.iter_rows(named=True), _labels(frame), strict=True):
        power = t_power(
            users, row["delta"] / row["sd"], alpha=row["alpha"], alternative=row["alternative"]
        )
        parts.append(pl.DataFrame({"series": label, "n_users": users, "power": power}))
    return pl.concat(parts)


@validate_params(
    {
        "sample": Frame("polars", "pyarrow", "pandas"),
        "max_users": [Integer(Interval(3, None)), None],
        "title": [Text(), None],
    }
)
def power_curve(
    sample: Any, *, max_users: int | None = None, title: str | None = None
) -> alt.LayerChart:
    """The power of the paired t test against the number of users, per row of ``sample``.

    One line per row of :func:`polars_rankeval.sample_size` (a pair of systems and a
    ``delta``), a dashed rule at the target power, and a point where each line first
    reaches it: the row's ``n_users``.

    Parameters
    ----------
    sample
        The result of :func:`polars_rankeval.sample_size`.
    max_users
        The last number of users (default: 1.5 x the largest ``n_users``).
    title
        Chart title.

    Returns
    -------
    altair.LayerChart

    Examples
    --------
    >>> import polars_rankeval as prk
    >>> chart = prk.plot.power_curve(prk.sample_size(delta=[0.05, 0.1], sd=0.2))
    >>> len(chart.layer)
    3
    """
    alt = import_altair()
    data = power_curve_data(sample, max_users=max_users)
    frame = as_frame(sample, "sample").filter(pl.col("n_users").is_not_null())
    series = data.get_column("series").unique(maintain_order=True).to_list()
    color = color_encoding(alt, "series", series)
    target = max(frame.get_column("power").drop_nulls().to_list(), default=0.8)
    needed = []
    for row, label in zip(frame.iter_rows(named=True), _labels(frame), strict=True):
        if row["sd"] is not None and row["sd"] > 0:
            needed.append({"series": label, "n_users": row["n_users"], "power": row["power_at_n"]})
    marks = pl.DataFrame(
        needed, schema={"series": pl.String, "n_users": pl.Int64, "power": pl.Float64}
    )
    x = alt.X("n_users:Q", title="users")
    y = alt.Y("power:Q", title="power", scale=alt.Scale(domain=[0, 1]))
    lines = alt.Chart(data).mark_line().encode(x=x, y=y, color=color)
    rule = (
        alt.Chart(pl.DataFrame({"power": [target]}))
        .mark_rule(strokeDash=[4, 4], color="#777777")
        .encode(y="power:Q")
    )
    dots = (
        alt.Chart(marks)
        .mark_point(filled=True, size=60)
        .encode(
            x=x,
            y=y,
            color=color,
            tooltip=["series:N", "n_users:Q", alt.Tooltip("power:Q", format=".3f")],
        )
    )
    return (lines + rule + dots).properties(
        width=WIDTH, height=HEIGHT, title=title or "Power of the paired t test against users"
    )


def _labels(frame: pl.DataFrame) -> list[str]:
    out = []
    for row in frame.iter_rows(named=True):
        pair = f"{row['system']} vs {row['baseline']}, " if row.get("system") is not None else ""
        out.append(f"{row.get('metric') or ''} {pair}delta {row['delta']:g}".strip())
    return out
