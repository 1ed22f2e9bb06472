"""The distribution of a per-user metric per system: histogram or ECDF, and a box summary."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal

import polars as pl

from polars_rankeval._utils.constraints import (
    COLUMNS,
    Frame,
    Integer,
    Options,
    Spec,
    Text,
    validate_params,
)
from polars_rankeval.metrics.grammar import parse_metric
from polars_rankeval.metrics.params import Interval
from polars_rankeval.plot._common import (
    HEIGHT,
    MAX_POINTS,
    WIDTH,
    as_frame,
    by_columns,
    check_by,
    color_encoding,
    import_altair,
    inline_values,
    per_user_metric,
    series_column,
    thin,
    why_undefined,
)

if TYPE_CHECKING:
    import altair as alt

DistributionKind = Literal["histogram", "ecdf"]

_PER_USER: dict[str, Spec] = {
    "per_user": Frame(),
    "metric": Text("a metric name (str)"),
    "by": [*COLUMNS, None],
}


@validate_params(_PER_USER)
def distribution_data(
    per_user: Any, metric: str, *, by: str | Sequence[str] | None = "system"
) -> pl.DataFrame:
    """The per-user values of one metric: ``by..., value``, undefined users left out.

    Returns the defined values sorted by (by, value), with ``ecdf`` (the share of the
    system's defined users with a value <= this one), plus the count of users left out
    per system in ``n_undefined`` and of all users in ``n_users``.

    Examples
    --------
    >>> import polars as pl
    >>> from polars_rankeval import plot
    >>> per_user = pl.DataFrame({"system": ["a", "a", "b", "b"], "user": [1, 2, 1, 2],
    ...                          "ndcg@10": [0.5, None, 0.25, 1.0]})
    >>> plot.distribution_data(per_user, "ndcg@10").rows()  # a's user 2 is undefined
    [('a', 0.5, 1.0, 2, 1), ('b', 0.25, 0.5, 2, 0), ('b', 1.0, 1.0, 2, 0)]
    """
    frame = as_frame(per_user, "per_user")
    by_cols = [c for c in check_by(frame, by) if c in frame.columns]
    name = per_user_metric(frame, metric, "distribution")
    counts = (
        frame.group_by(by_cols).agg(
            pl.len().alias("n_users"), pl.col(name).null_count().alias("n_undefined")
        )
        if by_cols
        else frame.select(pl.len().alias("n_users"), pl.col(name).null_count().alias("n_undefined"))
    )
    values = frame.select(*by_cols, pl.col(name).cast(pl.Float64).alias("value")).drop_nulls(
        "value"
    )
    if values.height == 0:
        msg = (
            f"distribution: metric {name!r} is undefined (null) for every user "
            f"({frame.height} rows); nothing to plot ({why_undefined(name)})"
        )
        raise ValueError(msg)
    rank = pl.col("value").rank("max")
    size = pl.len()
    ecdf = (rank.over(by_cols) / size.over(by_cols)) if by_cols else rank / size
    values = values.with_columns(ecdf.cast(pl.Float64).alias("ecdf")).sort([*by_cols, "value"])
    if by_cols:
        values = values.join(counts, on=by_cols, how="left")
    else:
        values = values.with_columns(
            pl.lit(counts.item(0, "n_users")).alias("n_users"),
            pl.lit(counts.item(0, "n_undefined")).alias("n_undefined"),
        )
    return values.with_columns(pl.col("n_users", "n_undefined").cast(pl.Int64))


@validate_params(
    {
        **_PER_USER,
        "kind": Options.of(DistributionKind),
        "bins": Integer(Interval(1, None)),
        "title": [Text(), None],
    }
)
def distribution(
    per_user: Any,
    metric: str,
    *,
    by: str | Sequence[str] | None = "system",
    kind: DistributionKind = "histogram",
    bins: int = 20,
    title: str | None = None,
) -> alt.HConcatChart:
    """The distribution of a per-user metric per system, and a box summary.

    Users whose value is undefined (null: e.g. no relevant item; what ``empty="skip"``
    leaves out of the means) are left out, and the subtitle says how many.

    Parameters
    ----------
    per_user
        The per-user frame of ``evaluate(..., per_user=True)``.
    metric
        A per-user metric column (canonical name or any spelling, e.g. ``"P@5"``).
    by
        The system column(s); ``None`` for one distribution.
    kind
        ``"histogram"`` (the share of each system's users per bin) or ``"ecdf"``.
    bins
        Number of histogram bins.
    title
        Chart title.

    Returns
    -------
    altair.HConcatChart
        The histogram or ECDF (left) and a box plot per system (right; whiskers at the
        minimum and maximum).

    Examples
    --------
    >>> import polars_rankeval as prk
    >>> per_user = prk.evaluate(prk.load_systems(), ["ndcg@10"], by="system", per_user=True)
    >>> chart = prk.plot.distribution(per_user, "ndcg@10", kind="ecdf")
    """
    alt = import_altair()
    name = parse_metric(metric).name
    data = distribution_data(per_user, metric, by=by)
    by_cols = by_columns(data, ("value", "ecdf", "n_users", "n_undefined"))
    data, series = series_column(data, by_cols)
    undefined = as_frame(per_user, "per_user").get_column(name).null_count()
    total = as_frame(per_user, "per_user").height
    note = (
        f"{undefined} of {total} user rows left out: {name} undefined (empty='skip')"
        if undefined
        else f"all {total} user rows defined"
    )
    if series:
        shown = set(data.get_column(series).to_list())
        labelled, _ = series_column(as_frame(per_user, "per_user").select(by_cols), by_cols)
        absent = sorted(set(labelled.get_column(series).to_list()) - shown)
        if absent:
            note += f"; no defined value for {series} {', '.join(map(str, absent))}"
    heading = alt.TitleParams(title or f"Per-user {name}", subtitle=[note])
    color = color_encoding(alt, series)
    if kind == "ecdf":
        # The ECDF's points, at most MAX_POINTS per system (evenly spaced, last kept).
        steps = data.unique([*([series] if series else []), "value"], keep="last")
        steps = thin(
            steps.sort([*([series] if series else []), "value"]),
            [series] if series else [],
            MAX_POINTS,
        )
        left = (
            alt.Chart(inline_values(steps))
            .mark_line(interpolate="step-after")
            .encode(
                x=alt.X("value:Q", title=name),
                y=alt.Y("ecdf:Q", title="share of users with a value <= x"),
                color=color,
            )
        )
    else:
        low, high = data.get_column("value").min(), data.get_column("value").max()
        low = 0.0 if low is None else float(low)  # type: ignore[arg-type]
        high = 1.0 if high is None else float(high)  # type: ignore[arg-type]
        if parse_metric(metric).spec.normalized:
            low, high = min(low, 0.0), max(high, 1.0)
        hist = histogram_data(data, series, bins=bins, low=low, high=high)
        n_series = data.get_column(series).n_unique() if series else 1
        bars = (
            alt.Chart(hist)
            .mark_bar()
            .encode(
                x=alt.X(
                    "bin_start:Q", title=name, bin="binned", scale=alt.Scale(domain=[low, high])
                ),
                x2="bin_end:Q",
                y=alt.Y("share:Q", title="share of users"),
                color=color,
                tooltip=[*([series] if series else []), "bin_start", "bin_end", "count"],
            )
            .properties(width=WIDTH, height=max(60, HEIGHT // n_series))
        )
        # One small histogram per system, one above the other, on the same x axis.
        left = bars.facet(row=alt.Row(f"{series}:N", title=None)) if series else bars
    # The box summary from statistics computed here (not from every user's row).
    stats = box_data(data, series)
    x = alt.X(f"{series}:N", title=series) if series else alt.X("label:N", title=None)
    if series is None:
        stats = stats.with_columns(pl.lit(name).alias("label"))
    width = max(80, 50 * stats.height)
    whisker = alt.Chart(stats).mark_rule().encode(x=x, y=alt.Y("min:Q", title=name), y2="max:Q")
    box = (
        alt.Chart(stats)
        .mark_bar(size=24)
        .encode(
            x=x,
            y="q1:Q",
            y2="q3:Q",
            color=color,
            tooltip=[
                *([series] if series else []),
                "n",
                alt.Tooltip("min:Q", format=".4f"),
                alt.Tooltip("q1:Q", format=".4f"),
                alt.Tooltip("median:Q", format=".4f"),
                alt.Tooltip("q3:Q", format=".4f"),
                alt.Tooltip("max:Q", format=".4f"),
            ],
        )
    )
    median = (
        alt.Chart(stats).mark_tick(color="white", size=24, thickness=2).encode(x=x, y="median:Q")
    )
    box = alt.layer(whisker, box, median).properties(width=width, height=HEIGHT)
    if kind == "ecdf":
        left = left.properties(width=WIDTH, height=HEIGHT)
    return alt.hconcat(left, box, title=heading)


def box_data(values: pl.DataFrame, series: str | None) -> pl.DataFrame:
    """Per series: n, min, q1, median, q3, max of ``values["value"]`` (linear quantiles)."""
    v = pl.col("value")
    aggs = [
        pl.len().cast(pl.Int64).alias("n"),
        v.min().alias("min"),
        v.quantile(0.25, "linear").alias("q1"),
        v.median().alias("median"),
        v.quantile(0.75, "linear").alias("q3"),
        v.max().alias("max"),
    ]
    if series is None:
        return values.select(aggs)
    return values.group_by(series).agg(aggs).sort(series)


def histogram_data(
    values: pl.DataFrame, series: str | None, *, bins: int, low: float, high: float
) -> pl.DataFrame:
    """Counts and shares of ``values["value"]`` in ``bins`` equal bins of [low, high].

    The last bin is closed on the right (it holds ``high``); every bin of every series is
    listed (count 0 included).
    """
    width = (high - low) / bins if high > low else 1.0
    index = ((pl.col("value") - low) / width).floor().cast(pl.Int64).clip(0, bins - 1)
    keys = [series] if series else []
    counted = (
        values.with_columns(index.alias("bin"))
        .group_by([*keys, "bin"])
        .agg(pl.len().alias("count"))
    )
    grid = pl.DataFrame({"bin": list(range(bins))}, schema={"bin": pl.Int64})
    if series:
        grid = values.select(series).unique().join(grid, how="cross")
    out = grid.join(counted, on=[*keys, "bin"], how="left").with_columns(
        pl.col("count").fill_null(0).cast(pl.Int64)
    )
    total = pl.col("count").sum().over(keys) if keys else pl.col("count").sum()
    return out.with_columns(
        (low + pl.col("bin") * width).alias("bin_start"),
        (low + (pl.col("bin") + 1) * width).alias("bin_end"),
        (pl.col("count") / total).alias("share"),
    ).sort([*keys, "bin"])
