"""Meta-evaluation charts: the ASL curves of :func:`polars_rankeval.discriminative_power`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import polars as pl

from polars_rankeval._utils.constraints import Frame, Instance, Number, Text, validate_params
from polars_rankeval.analysis.discriminative import DiscriminativePower
from polars_rankeval.metrics.params import Interval
from polars_rankeval.plot._common import (
    HEIGHT,
    PALETTE,
    WIDTH,
    as_frame,
    check_rows,
    import_altair,
    needs_columns,
)

if TYPE_CHECKING:
    import altair as alt

_ASL_NEEDED = ("metric", "system", "baseline", "asl", "rank")


@validate_params(
    {
        "result": [
            Instance(DiscriminativePower, what="the result of prk.discriminative_power"),
            Frame("polars", "pyarrow", "pandas"),
        ],
        "alpha": [Number(Interval(0, 1, closed="neither")), None],
        "title": [Text(), None],
    }
)
def asl_curves(
    result: Any, *, alpha: float | None = None, title: str | None = None
) -> alt.LayerChart:
    """Sakai's ASL curves: each metric's achieved significance levels, sorted.

    One line per metric of ``prk.discriminative_power``: the ASL (p-value) of every
    system pair against the pair's rank by ASL (1 = the smallest), on a log scale, and
    a dashed horizontal rule at ``alpha``. A curve that stays low for more pairs belongs
    to a more discriminative metric: where it crosses the rule is its discriminative
    power at that level. A pair without an ASL (the test cannot give one) is left out.

    Parameters
    ----------
    result
        The result of :func:`polars_rankeval.discriminative_power` (its ``asl`` frame
        is drawn and its summary's ``alpha`` is the rule), or the ``asl`` frame itself.
    alpha
        The level of the rule (default: the result's ``alpha``, else 0.05).
    title
        Chart title.

    Returns
    -------
    altair.LayerChart
        The curves and the rule.

    Examples
    --------
    >>> import polars_rankeval as prk
    >>> result = prk.discriminative_power(prk.load_systems(), ["ndcg@10", "mrr@10"],
    ...                                   n_resamples=200)
    >>> len(prk.plot.asl_curves(result).layer)
    2
    """
    alt = import_altair()
    frame = as_frame(getattr(result, "asl", result), "result")
    needs_columns(frame, _ASL_NEEDED, "prk.discriminative_power (or its asl frame)")
    if alpha is None:
        summary = getattr(result, "summary", None)
        alpha = float(summary["alpha"][0]) if summary is not None and summary.height else 0.05
    points = frame.filter(pl.col("asl").is_not_null()).with_columns(
        pl.concat_str("system", pl.lit(" vs "), "baseline").alias("pair")
    )
    check_rows(points, "asl_curves", "the ASL frame (with an ASL)")
    metrics = points.get_column("metric").unique(maintain_order=True).to_list()
    smallest = float(points.get_column("asl").min())  # type: ignore[arg-type]
    y = alt.Y(
        "asl:Q",
        title="ASL (achieved significance level)",
        scale=alt.Scale(type="log", domain=[min(smallest, alpha) / 2, 1.0]),
    )
    lines = (
        alt.Chart(points)
        .mark_line(point=True)
        .encode(
            x=alt.X("rank:Q", title="system pairs, sorted by ASL", axis=alt.Axis(tickMinStep=1)),
            y=y,
            color=alt.Color(
                "metric:N", title="metric", scale=alt.Scale(scheme=PALETTE), sort=metrics
            ),
            tooltip=["metric:N", "pair:N", alt.Tooltip("asl:Q", format=".4g"), "rank:Q"],
        )
    )
    rule = (
        alt.Chart(pl.DataFrame({"alpha": [alpha]}))
        .mark_rule(strokeDash=[6, 4], color="#757575")
        .encode(y="alpha:Q")
    )
    return (lines + rule).properties(
        width=WIDTH,
        height=HEIGHT,
        title=title or f"ASL curves (the dashed line: alpha = {alpha:g})",
    )
