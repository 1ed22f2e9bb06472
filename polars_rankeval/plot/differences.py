"""Per-user differences against a baseline system, sorted (the topic-wise plot)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import polars as pl

from polars_rankeval._utils.constraints import COLUMN, Frame, Spec, Text, validate_params
from polars_rankeval._utils.pvalue import p_clause
from polars_rankeval.metrics.grammar import parse_metric
from polars_rankeval.plot._common import (
    HEIGHT,
    MAX_POINTS,
    WIDTH,
    as_frame,
    check_by,
    check_rows,
    import_altair,
    needs_columns,
    per_user_metric,
    thin,
    why_undefined,
)

if TYPE_CHECKING:
    import altair as alt


_TOPIC: dict[str, Spec] = {
    "per_user": Frame(),
    "metric": Text("a metric name (str)"),
    "baseline": Text("a system name (str)"),
    "by": COLUMN,
    "user": COLUMN,
}


@validate_params(_TOPIC)
def topic_differences_data(
    per_user: Any,
    metric: str,
    *,
    baseline: str,
    by: str = "system",
    user: str = "user",
) -> pl.DataFrame:
    """Per-user differences ``system - baseline`` of one metric, sorted within each system.

    Returns ``by, user, value, baseline_value, diff, position`` with ``position`` 1 for the
    largest difference of the system; users whose value is undefined (null) in either
    system are left out (the count is in ``n_left_out``).

    Examples
    --------
    >>> import polars as pl
    >>> from polars_rankeval import plot
    >>> per_user = pl.DataFrame({"system": ["a", "a", "b", "b"], "user": [1, 2, 1, 2],
    ...                          "ndcg@10": [0.5, None, 0.25, 1.0]})
    >>> plot.topic_differences_data(per_user, "ndcg@10", baseline="b").rows()
    [('a', 1, 0.5, 0.25, 0.25, 1, 1)]
    """
    frame = as_frame(per_user, "per_user")
    check_by(frame, by)
    if user not in frame.columns:
        msg = f"user column {user!r} not found; the frame has {frame.columns}"
        raise ValueError(msg)
    name = per_user_metric(frame, metric, "topic_differences")
    systems = frame.get_column(by).cast(pl.String).unique().to_list()
    if baseline not in systems:
        msg = f"baseline {baseline!r} is not a value of column {by!r}; found {sorted(systems)}"
        raise ValueError(msg)
    if len(systems) < 2:
        msg = f"topic differences need a system besides the baseline {baseline!r} in {by!r}"
        raise ValueError(msg)
    values = frame.select(
        pl.col(by).cast(pl.String), user, pl.col(name).cast(pl.Float64).alias("value")
    )
    base = values.filter(pl.col(by) == baseline).select(
        user, pl.col("value").alias("baseline_value")
    )
    others = values.filter(pl.col(by) != baseline)
    # Every (system, user) of either side: a user missing on one side counts as left out.
    pairs = (
        others.select(by)
        .unique()
        .join(pl.concat([others.select(user), base.select(user)]).unique(), how="cross")
        .join(others, on=[by, user], how="left")
        .join(base, on=user, how="left")
    )
    defined = pl.col("value").is_not_null() & pl.col("baseline_value").is_not_null()
    left_out = pairs.group_by(by).agg((~defined).sum().cast(pl.Int64).alias("n_left_out"))
    if not pairs.select(defined.any()).item():
        msg = (
            f"topic_differences: no user has {name!r} defined for both a system and the "
            f"baseline {baseline!r}; nothing to plot ({why_undefined(name)})"
        )
        raise ValueError(msg)
    out = (
        pairs.filter(defined)
        .with_columns((pl.col("value") - pl.col("baseline_value")).alias("diff"))
        .sort([by, "diff", user], descending=[False, True, False])
        .with_columns(pl.int_range(1, pl.len() + 1, dtype=pl.Int64).over(by).alias("position"))
        .join(left_out, on=by, how="left")
    )
    return out.select(by, user, "value", "baseline_value", "diff", "position", "n_left_out")


COMPARE_COLUMNS = (
    "metric",
    "system",
    "baseline",
    "diff",
    "ci_low",
    "ci_high",
    "p_value",
    "p_adjusted",
    "significant",
)


def _compare_line(compare: pl.DataFrame, metric: str, system: str, baseline: str) -> str:
    missing = [c for c in COMPARE_COLUMNS if c not in compare.columns]
    if missing:
        msg = f"compare result lacks column(s) {missing}; pass the frame of prk.compare"
        raise ValueError(msg)
    row = compare.filter(
        (pl.col("metric") == metric)
        & (pl.col("system").cast(pl.String) == system)
        & (pl.col("baseline").cast(pl.String) == baseline)
    )
    if row.height != 1:
        msg = (
            f"compare result has {row.height} rows for metric {metric!r}, system {system!r} "
            f"and baseline {baseline!r}; expected one"
        )
        raise ValueError(msg)
    r = row.row(0, named=True)

    def num(x: Any) -> str:  # a difference, signed
        return "n/a" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:+.4f}"

    verdict = "significant" if r["significant"] else "not significant"
    level = f"{r['confidence']:.0%} " if r.get("confidence") is not None else ""
    test = f"{r['test']} test " if r.get("test") else ""
    adjusted = f"{r['correction']}-adjusted p" if r.get("correction") else "adjusted p"
    alpha = f" at alpha {r['alpha']:g}" if r.get("alpha") is not None else ""
    return (
        f"mean difference {num(r['diff'])} ({level}CI {num(r['ci_low'])} .. "
        f"{num(r['ci_high'])}); {test}{p_clause(r['p_value'])}, "
        f"{p_clause(r['p_adjusted'], adjusted)}: {verdict}{alpha}"
    )


@validate_params({**_TOPIC, "compare": [Frame(), None], "title": [Text(), None]})
def topic_differences(
    per_user: Any,
    metric: str,
    *,
    baseline: str,
    by: str = "system",
    user: str = "user",
    compare: pl.DataFrame | None = None,
    title: str | None = None,
) -> alt.VConcatChart:
    """Per-user differences against a baseline, sorted (the IR "topic-wise" plot).

    One panel per system: a bar per user, its value minus the baseline's, sorted from
    the largest difference to the smallest, green for a gain and red for a loss (by the
    metric's direction: for ``fallout`` a negative difference is a gain; a metric
    without a direction, such as ``num_ret``, shows higher and lower). With ``compare``
    (the frame of ``prk.compare``), each panel's subtitle carries its test result, and
    the direction is the one in its ``higher_is_better`` column.

    Parameters
    ----------
    per_user
        The per-user frame of ``evaluate(..., by=by, per_user=True)``.
    metric
        A per-user metric column.
    baseline
        The baseline system (a value of ``by``).
    by, user
        The system and user columns.
    compare
        The result of ``prk.compare`` (columns metric, system, baseline, diff, ci_low,
        ci_high, p_value, p_adjusted, significant).
    title
        Chart title.

    Returns
    -------
    altair.VConcatChart
        One bar chart per system.

    Examples
    --------
    >>> import polars_rankeval as prk
    >>> per_user = prk.evaluate(prk.load_systems(), ["ndcg@10"], by="system", per_user=True)
    >>> chart = prk.plot.topic_differences(per_user, "ndcg@10", baseline="bm25")
    """
    alt = import_altair()
    name = parse_metric(metric).name
    data = topic_differences_data(per_user, metric, baseline=baseline, by=by, user=user)
    from polars_rankeval.analysis.metric_direction import metric_direction

    higher = metric_direction(name)
    if compare is not None:
        compare = as_frame(compare, "compare")
        if "higher_is_better" in compare.columns:
            given = compare.filter(pl.col("metric") == name).get_column("higher_is_better")
            higher = given[0] if given.len() else higher
    gain, loss = ("higher", "lower") if higher is None else ("better", "worse")
    sign = -1.0 if higher is False else 1.0
    panels = []
    for system in sorted(data.get_column(by).unique().to_list()):
        part = data.filter(pl.col(by) == system).with_columns(
            pl.when(pl.col("diff") * sign > 0)
            .then(pl.lit(gain))
            .when(pl.col("diff") * sign < 0)
            .then(pl.lit(loss))
            .otherwise(pl.lit("equal"))
            .alias("direction")
        )
        left_out = part.get_column("n_left_out").to_list()[0] if part.height else 0
        better = int((part.get_column("diff") * sign > 0).sum())
        worse = int((part.get_column("diff") * sign < 0).sum())
        subtitle = [
            f"{better} users {gain}, {worse} {loss}, {part.height - better - worse} equal"
            + (f"; {left_out} left out (undefined)" if left_out else "")
        ]
        if compare is not None:
            subtitle.append(_compare_line(compare, name, system, baseline))
        color = alt.Color(
            "direction:N",
            title="vs baseline",
            scale=alt.Scale(domain=[gain, "equal", loss], range=["#2ca02c", "#9e9e9e", "#d62728"]),
        )
        y = alt.Y("diff:Q", title=f"{name} − {baseline}")
        heading = alt.TitleParams(f"{system} vs {baseline}", subtitle=subtitle)
        if part.height <= MAX_POINTS:
            panel = (
                alt.Chart(part)
                .mark_bar()
                .encode(
                    x=alt.X(
                        "position:O",
                        title="users, sorted by difference",
                        axis=alt.Axis(labels=False, ticks=False),
                    ),
                    y=y,
                    color=color,
                    tooltip=[user, alt.Tooltip("diff:Q", format="+.4f"), "value", "baseline_value"],
                )
                .properties(width=max(WIDTH, min(900, 4 * part.height)), height=HEIGHT)
            )
        else:
            # Too many users for one bar each: the sorted differences as an area, drawn
            # through at most MAX_POINTS evenly spaced users (the shape is kept).
            panel = (
                alt.Chart(thin(part, [], MAX_POINTS))
                .mark_area(interpolate="step-after")
                .encode(
                    x=alt.X("position:Q", title="users, sorted by difference"), y=y, color=color
                )
                .properties(width=900, height=HEIGHT)
            )
        panel = panel.properties(title=heading)
        panels.append(panel)
    return alt.vconcat(*panels, title=title or f"Per-user {name}: difference against {baseline}")


_DIFFERENCE_NEEDED = ("metric", "system", "baseline", "difference", "direction", "rank")
_DIRECTION_COLORS = {
    "better": "#2ca02c",
    "higher": "#2ca02c",
    "worse": "#d62728",
    "lower": "#d62728",
}


@validate_params(
    {
        "differences": Frame("polars", "pyarrow", "pandas"),
        "user": COLUMN,
        "title": [Text(), None],
    }
)
def largest_differences(
    differences: Any, *, user: str = "user", title: str | None = None
) -> alt.VConcatChart:
    """The users where two systems differ most, both ways: one bar per listed user.

    One panel per (metric, system, baseline) of ``prk.largest_differences``: a
    horizontal bar per user, its value minus the baseline's, the largest gain on top
    and the largest loss at the bottom, green for better (or higher, for a metric
    without a direction) and red for worse. Unlike :func:`topic_differences`, which
    draws every user unnamed, it names the few users that made the difference, to
    look up.

    Parameters
    ----------
    differences
        The frame of :func:`polars_rankeval.largest_differences` (or
        ``largest_differences_per_user``).
    user
        Its user column.
    title
        Chart title.

    Returns
    -------
    altair.VConcatChart
        One bar chart per (metric, pair).

    Examples
    --------
    >>> import polars_rankeval as prk
    >>> from polars_rankeval.api.datasets import load_systems
    >>> top = prk.largest_differences(load_systems(), ["ndcg@10"], baseline="bm25", n=5)
    >>> chart = prk.plot.largest_differences(top)
    >>> len(chart.vconcat)  # dense, hybrid and random against bm25
    3
    """
    alt = import_altair()
    frame = as_frame(differences, "differences")
    needs_columns(frame, (*_DIFFERENCE_NEEDED, user), "prk.largest_differences")
    check_rows(frame, "largest_differences")
    panels = []
    keys = frame.select("metric", "system", "baseline").unique(maintain_order=True).rows()
    for metric, system, baseline in keys:
        part = frame.filter(
            (pl.col("metric") == metric)
            & (pl.col("system") == system)
            & (pl.col("baseline") == baseline)
        ).with_columns(pl.col(user).cast(pl.String).alias("__user"))
        order = part.sort("difference", descending=True).get_column("__user").to_list()
        domain = [d for d in _DIRECTION_COLORS if d in set(part.get_column("direction"))]
        panel = (
            alt.Chart(part)
            .mark_bar()
            .encode(
                x=alt.X("difference:Q", title=f"{metric}: {system} − {baseline}"),
                y=alt.Y("__user:N", sort=order, title=user),
                color=alt.Color(
                    "direction:N",
                    title=f"{system} vs {baseline}",
                    scale=alt.Scale(domain=domain, range=[_DIRECTION_COLORS[d] for d in domain]),
                ),
                tooltip=[
                    alt.Tooltip("__user:N", title=user),
                    alt.Tooltip("difference:Q", format="+.4f"),
                    "direction:N",
                    "rank:Q",
                    *(c for c in ("value", "baseline_value") if c in part.columns),
                ],
            )
            .properties(
                width=WIDTH,
                height=max(60, 16 * part.height),
                title=f"{metric}: {system} vs {baseline}",
            )
        )
        panels.append(panel)
    return alt.vconcat(*panels, title=title or "Users with the largest differences")
