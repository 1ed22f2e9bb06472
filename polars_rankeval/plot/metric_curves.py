"""Charts of a metric over its cutoff k and of interpolated precision over recall."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import polars as pl

from polars_rankeval._utils.constraints import Frame, Integer, Text, validate_params
from polars_rankeval.metrics.grammar import expand_metric
from polars_rankeval.metrics.params import Interval
from polars_rankeval.plan.job import RESERVED, count_name
from polars_rankeval.plot._common import (
    HEIGHT,
    WIDTH,
    as_frame,
    by_columns,
    check_rows,
    color_encoding,
    import_altair,
    series_column,
)

if TYPE_CHECKING:
    import altair as alt

_CURVE_COLUMNS = ("metric", "k", "value", *RESERVED)
_PR_COLUMNS = ("recall", "precision", *RESERVED)


def _tidy_curves(frame: pl.DataFrame) -> tuple[pl.DataFrame, list[str]]:
    """A curve() frame as is; a wide evaluate() summary turned into that long form."""
    if {"metric", "k", "value"} <= set(frame.columns):
        return frame, by_columns(frame, _CURVE_COLUMNS)
    rows = []
    for column in frame.columns:
        try:
            metrics = expand_metric(column)
        except ValueError:
            continue
        metric = metrics[0]
        if len(metrics) == 1 and metric.k is not None:
            rows.append((column, metric.base_name, metric.k))
    if not rows:
        msg = (
            "curves needs the frame of prk.curve (metric, k, value) or an evaluate() summary "
            f"with metric@k columns; got columns {frame.columns}"
        )
        raise ValueError(msg)
    names = [r[0] for r in rows]
    counts = {count_name(n) for n in names}
    by = [c for c in frame.columns if c not in names and c not in RESERVED and c not in counts]
    index = pl.DataFrame(
        {"__name": names, "metric": [r[1] for r in rows], "k": [r[2] for r in rows]},
        schema={"__name": pl.String, "metric": pl.String, "k": pl.Int64},
    )
    long = frame.unpivot(on=names, index=by, variable_name="__name", value_name="value")
    long = long.join(index, on="__name").drop("__name").sort([*by, "metric", "k"])
    return long.select(*by, "metric", "k", pl.col("value").cast(pl.Float64)), by


@validate_params({"frame": Frame(), "title": [Text(), None], "columns": Integer(Interval(1, None))})
def curves(frame: Any, *, title: str | None = None, columns: int = 3) -> alt.Chart:
    """Metric@k over k, one line per system, one panel per metric.

    Parameters
    ----------
    frame
        The frame of :func:`polars_rankeval.curve` (``by..., metric, k, value``) or an
        ``evaluate`` summary with ``metric@k`` columns (e.g. ``ndcg@1..20``).
    title
        Chart title (default: the metrics and the range of k).
    columns
        Panels per row when there are several metrics.

    Returns
    -------
    altair.Chart
        Lines over k (x: the cutoff k; y: the metric's mean over users), colour by system.

    Examples
    --------
    >>> import polars_rankeval as prk
    >>> long = prk.curve(prk.load_systems(), ["ndcg", "recall"], ks=range(1, 21), by="system")
    >>> chart = prk.plot.curves(long)
    >>> chart.save("curves.png")  # doctest: +SKIP
    """
    alt = import_altair()
    data, by = _tidy_curves(as_frame(frame, "frame"))
    check_rows(data, "curves")
    undefined = (
        data.group_by("metric", maintain_order=True)
        .agg(pl.col("value").is_null().all().alias("all_null"))
        .filter("all_null")
        .get_column("metric")
        .to_list()
    )
    if undefined:
        msg = (
            f"curves: metric(s) {undefined} undefined (null) at every k for every system: "
            "no user had a defined value (e.g. no relevant item)"
        )
        raise ValueError(msg)
    data, series = series_column(data, by)
    metrics = list(dict.fromkeys(data.get_column("metric").to_list()))
    ks = data.get_column("k").cast(pl.Int64).to_list()
    k_min, k_max = min(ks), max(ks)
    text = title or f"{', '.join(metrics)} at k = {k_min}..{k_max}" + (
        f" per {series}" if series else ""
    )
    many = data.get_column("k").n_unique() > 25
    tooltip = [*([series] if series else []), "metric", "k", alt.Tooltip("value:Q", format=".4f")]
    base = alt.Chart(data).mark_line(point=not many)
    y_title = metrics[0] if len(metrics) == 1 else "mean over users"
    chart = base.encode(
        x=alt.X("k:Q", title="k (cutoff)", scale=alt.Scale(domain=[k_min, k_max])),
        y=alt.Y("value:Q", title=y_title),
        color=color_encoding(alt, series),
        tooltip=tooltip,
    ).properties(width=WIDTH, height=HEIGHT)
    if len(metrics) > 1:
        facet = alt.Facet("metric:N", title=None, sort=metrics, header=alt.Header(labelFontSize=13))
        return chart.facet(facet=facet, columns=columns, title=text).resolve_scale(y="independent")
    return chart.properties(title=text)


@validate_params({"frame": Frame(), "title": [Text(), None]})
def pr_curves(frame: Any, *, title: str | None = None) -> alt.Chart:
    """Interpolated precision-recall curves, one per system.

    Parameters
    ----------
    frame
        The frame of :func:`polars_rankeval.pr_curve` (``by..., recall, precision``).
    title
        Chart title.

    Returns
    -------
    altair.Chart
        Precision (y) over recall (x), both on [0, 1], colour by system.

    Examples
    --------
    >>> import polars_rankeval as prk
    >>> chart = prk.plot.pr_curves(prk.pr_curve(prk.load_systems(), by="system"))
    """
    alt = import_altair()
    data = as_frame(frame, "frame")
    if not {"recall", "precision"} <= set(data.columns):
        msg = f"pr_curves needs the frame of prk.pr_curve (recall, precision); got {data.columns}"
        raise ValueError(msg)
    check_rows(data, "pr_curves")
    if data.get_column("precision").is_null().all():
        msg = "pr_curves: precision is null at every recall level (no user with a relevant item)"
        raise ValueError(msg)
    data, series = series_column(data, by_columns(data, _PR_COLUMNS))
    n_levels = data.get_column("recall").n_unique()
    text = title or "Interpolated precision-recall curve (trec_eval iprec_at_recall)"
    return (
        alt.Chart(data)
        .mark_line(point=n_levels <= 25)
        .encode(
            x=alt.X("recall:Q", title="recall", scale=alt.Scale(domain=[0, 1])),
            y=alt.Y("precision:Q", title="interpolated precision", scale=alt.Scale(domain=[0, 1])),
            color=color_encoding(alt, series),
            tooltip=[
                *([series] if series else []),
                alt.Tooltip("recall:Q", format=".2f"),
                alt.Tooltip("precision:Q", format=".4f"),
            ],
        )
        .properties(width=WIDTH, height=HEIGHT, title=text)
    )
