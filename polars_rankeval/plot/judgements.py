"""What the judgements hide: a metric with unjudged items removed and as non-relevant."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import polars as pl

from polars_rankeval._utils.constraints import Frame, Instance, Text, validate_params
from polars_rankeval.analysis.judgements import JudgementGaps
from polars_rankeval.plot._common import WIDTH, as_frame, check_rows, import_altair, needs_columns

if TYPE_CHECKING:
    import altair as alt

_GAP_NEEDED = ("metric", "system", "unjudged", "condensed", "as_nonrelevant")


@validate_params(
    {
        "gaps": [
            Instance(JudgementGaps, what="the result of prk.judgement_gaps"),
            Frame("polars", "pyarrow", "pandas"),
        ],
        "title": [Text(), None],
    }
)
def judgement_gaps(gaps: Any, *, title: str | None = None) -> alt.VConcatChart:
    """Each system's metric with unjudged items as non-relevant and removed, side by side.

    One panel per metric of ``prk.judgement_gaps``: per system, a segment from the
    value with unjudged items read as non-relevant (a hollow circle) to the value on
    condensed lists (a filled one); the label gives the share of unjudged items in the
    top k. A long segment means the metric says more about the judgements than about
    the system: the systems' order may change once the unjudged items are judged.

    Parameters
    ----------
    gaps
        The result of :func:`polars_rankeval.judgement_gaps` or its ``summary`` frame.
    title
        Chart title.

    Returns
    -------
    altair.VConcatChart
        One panel per metric.

    Examples
    --------
    >>> import polars_rankeval as prk
    >>> from polars_rankeval.api.datasets import load_systems
    >>> gaps = prk.judgement_gaps(load_systems(), ["ndcg@10", "precision@5"])
    >>> len(prk.plot.judgement_gaps(gaps).vconcat)
    2
    """
    alt = import_altair()
    summary = getattr(gaps, "summary", gaps)
    frame = as_frame(summary, "gaps")
    needs_columns(frame, _GAP_NEEDED, "prk.judgement_gaps")
    check_rows(frame, "judgement_gaps")
    panels = []
    for metric in frame.get_column("metric").unique(maintain_order=True).to_list():
        part = frame.filter(pl.col("metric") == metric).with_columns(
            pl.format("{}% unjudged", (pl.col("unjudged") * 100).round(1)).alias("label")
        )
        points = part.unpivot(
            index=["system", "unjudged", "label"],
            on=["as_nonrelevant", "condensed"],
            variable_name="unjudged items",
            value_name="value",
        ).with_columns(
            pl.col("unjudged items").replace(
                {"as_nonrelevant": "as non-relevant", "condensed": "removed (condensed)"}
            )
        )
        y = alt.Y("system:N", title=None, sort=part.get_column("system").to_list())
        rule = (
            alt.Chart(part)
            .mark_rule(color="#9e9e9e")
            .encode(x=alt.X("as_nonrelevant:Q", title=metric), x2="condensed:Q", y=y)
        )
        dots = (
            alt.Chart(points)
            .mark_point(size=80)
            .encode(
                x="value:Q",
                y=y,
                shape=alt.Shape(
                    "unjudged items:N",
                    scale=alt.Scale(
                        domain=["as non-relevant", "removed (condensed)"],
                        range=["circle", "circle"],
                    ),
                ),
                fill=alt.Fill(
                    "unjudged items:N",
                    scale=alt.Scale(
                        domain=["as non-relevant", "removed (condensed)"],
                        range=["white", "#1f77b4"],
                    ),
                ),
                color=alt.value("#1f77b4"),
                tooltip=[
                    "system:N",
                    "unjudged items:N",
                    alt.Tooltip("value:Q", format=".4f"),
                    alt.Tooltip("unjudged:Q", format=".1%"),
                ],
            )
        )
        text = (
            alt.Chart(part)
            .mark_text(align="left", dx=8, color="#555555")
            .encode(x=alt.X("max_value:Q"), y=y, text="label:N")
            .transform_calculate(max_value="max(datum.condensed, datum.as_nonrelevant)")
        )
        panels.append(
            (rule + dots + text).properties(
                width=WIDTH, height=max(60, 28 * part.height), title=metric
            )
        )
    return alt.vconcat(
        *panels, title=title or "Unjudged items as non-relevant, and removed (condensed lists)"
    )
