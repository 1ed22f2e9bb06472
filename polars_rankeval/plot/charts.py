"""Charts of evaluation results (Altair; install with ``pip install "polars-rankeval[plot]"``).

Every function takes a frame (the long frame, or the result of ``evaluate``,
``compare``, :func:`~polars_rankeval.curve` or :func:`~polars_rankeval.pr_curve`) and
returns an Altair chart: it displays in a notebook and saves with ``chart.save("x.png")``
(or ``.svg``, ``.html``, ``.json``; PNG and SVG through vl-convert-python, no browser).
The data behind each chart is a tidy Polars frame computed here (the ``*_data``
functions), so it can be checked or plotted with another library.

* :func:`curves`: metric@k over k per system, one panel per metric;
* :func:`pr_curves`: interpolated precision-recall curves per system;
* :func:`distribution`: the per-user values per system (histogram or ECDF, and a box
  summary), stating how many users have an undefined value (left out by empty="skip");
* :func:`topic_differences`: the per-user differences against a baseline, sorted, with
  the result of ``compare``;
* :func:`lorenz`: the Lorenz curve of item exposure, the Gini in the legend;
* :func:`long_tail`: the popularity of the recommended items against the catalog.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal

import polars as pl

from polars_rankeval._utils.pvalue import p_clause
from polars_rankeval._utils.ties import id_order
from polars_rankeval._utils.types import integer
from polars_rankeval.api.evaluate import evaluate
from polars_rankeval.metrics.registry import expand_metric, parse_metric
from polars_rankeval.plan.job import RESERVED, count_name
from polars_rankeval.plan.validate import to_lazy

if TYPE_CHECKING:
    import altair as alt

__all__ = [
    "curve_gaps",
    "curves",
    "distribution",
    "distribution_data",
    "long_tail",
    "long_tail_data",
    "lorenz",
    "lorenz_data",
    "pr_curves",
    "topic_differences",
    "topic_differences_data",
]

DistributionKind = Literal["histogram", "ecdf"]
PALETTE = "tableau10"
"""The colour scheme of the systems (readable, colour-blind-safe enough for ~10 systems)."""
WIDTH, HEIGHT = 320, 220
MAX_POINTS = 2000
"""Lorenz and long-tail curves keep at most this many points per system (evenly spaced)."""
LINE_WIDTH = 2.0
"""Vega-Lite's default line width, kept by curves that do not coincide with another."""
GAP_GRID = 201
"""The x positions at which :func:`curve_gaps` compares two curves (0.5% of the axis apart)."""
COINCIDE = 0.02
"""Curves closer than this everywhere (2% of the axis, ~6 pixels) are said to coincide."""
DASHES: tuple[tuple[int, ...], ...] = (
    (1, 0),
    (8, 4),
    (2, 3),
    (12, 3, 2, 3),
    (5, 5),
    (16, 4),
    (3, 6),
    (10, 2, 2, 2, 2, 2),
)
"""Stroke patterns of the systems' curves: curves that coincide stay told apart."""
_CURVE_COLUMNS = ("metric", "k", "value", *RESERVED)
_PR_COLUMNS = ("recall", "precision", *RESERVED)


def _altair() -> Any:
    """Import Altair, or raise an ImportError that names the extra to install."""
    try:
        import altair as alt
    except ImportError as exc:
        msg = (
            "polars_rankeval.plot needs altair and vl-convert-python: "
            'pip install "polars-rankeval[plot]"'
        )
        raise ImportError(msg) from exc
    return alt


def _frame(data: Any, what: str) -> pl.DataFrame:
    if isinstance(data, pl.LazyFrame):
        return data.collect()
    if isinstance(data, pl.DataFrame):
        return data
    lf, _ = to_lazy(data, what)
    return lf.collect()


def _series_column(frame: pl.DataFrame, by: list[str]) -> tuple[pl.DataFrame, str | None]:
    """One label column naming the system (the by columns joined by " / ")."""
    if not by:
        return frame, None
    name = by[0] if len(by) == 1 else " / ".join(by)
    label = pl.concat_str([pl.col(c).cast(pl.String) for c in by], separator=" / ")
    return frame.with_columns(label.alias(name)), name


def _color(alt: Any, series: str | None, domain: list[str] | None = None) -> Any:
    if series is None:
        return alt.value("#4c78a8")
    scale = (
        alt.Scale(scheme=PALETTE) if domain is None else alt.Scale(scheme=PALETTE, domain=domain)
    )
    return alt.Color(f"{series}:N", title=series, scale=scale, sort=domain)


def _by_of(frame: pl.DataFrame, known: Sequence[str]) -> list[str]:
    return [c for c in frame.columns if c not in known]


def _check_by(frame: pl.DataFrame, by: str | Sequence[str] | None) -> list[str]:
    cols = [by] if isinstance(by, str) else list(by or [])
    missing = [c for c in cols if c not in frame.columns]
    if missing:
        msg = f"by column(s) {missing} not found; the frame has {frame.columns}"
        raise ValueError(msg)
    return cols


def _has_rows(frame: pl.DataFrame, chart: str, what: str = "the frame") -> None:
    """Refuse an empty input: a chart of nothing would be blank, not an answer."""
    if frame.height == 0:
        msg = f"{chart}: {what} has no rows; nothing to plot"
        raise ValueError(msg)


def _why_undefined(metric: str) -> str:
    """Why a per-user metric can be null for every user, from its declaration."""
    spec = parse_metric(metric).spec
    if spec.defined == "truth":
        return (
            "it is undefined for a user without a relevant item: check the relevance "
            "column and the rel= threshold"
        )
    return (
        "it is undefined for a user without what it needs (e.g. no relevant item, an "
        "empty list, constant scores)"
    )


def _inline(frame: pl.DataFrame) -> dict[str, Any]:
    """The rows as Vega-Lite inline values, past Altair's 5,000-row display limit.

    For the charts whose points are already bounded (at most :data:`MAX_POINTS` per
    series): with several series they pass the limit, and a notebook could not display
    them. Every field of such a chart is encoded with its type (no inference from data).
    """
    floats = [name for name, dtype in frame.schema.items() if dtype.is_float()]
    return {"values": frame.with_columns(pl.col(floats).fill_nan(None)).to_dicts()}


# --------------------------------------------------------------------------- curves
def _tidy_curves(frame: pl.DataFrame) -> tuple[pl.DataFrame, list[str]]:
    """A curve() frame as is; a wide evaluate() summary turned into that long form."""
    if {"metric", "k", "value"} <= set(frame.columns):
        return frame, _by_of(frame, _CURVE_COLUMNS)
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
    >>> from polars_rankeval.io.datasets import load_systems
    >>> long = prk.curve(load_systems(), ["ndcg", "recall"], ks=range(1, 21), by="system")
    >>> chart = prk.plot.curves(long)
    >>> chart.save("curves.png")  # doctest: +SKIP
    """
    alt = _altair()
    data, by = _tidy_curves(_frame(frame, "frame"))
    _has_rows(data, "curves")
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
    data, series = _series_column(data, by)
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
        color=_color(alt, series),
        tooltip=tooltip,
    ).properties(width=WIDTH, height=HEIGHT)
    if len(metrics) > 1:
        facet = alt.Facet("metric:N", title=None, sort=metrics, header=alt.Header(labelFontSize=13))
        return chart.facet(facet=facet, columns=columns, title=text).resolve_scale(y="independent")
    return chart.properties(title=text)


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
    >>> from polars_rankeval.io.datasets import load_systems
    >>> chart = prk.plot.pr_curves(prk.pr_curve(load_systems(), by="system"))
    """
    alt = _altair()
    data = _frame(frame, "frame")
    if not {"recall", "precision"} <= set(data.columns):
        msg = f"pr_curves needs the frame of prk.pr_curve (recall, precision); got {data.columns}"
        raise ValueError(msg)
    _has_rows(data, "pr_curves")
    if data.get_column("precision").is_null().all():
        msg = "pr_curves: precision is null at every recall level (no user with a relevant item)"
        raise ValueError(msg)
    data, series = _series_column(data, _by_of(data, _PR_COLUMNS))
    n_levels = data.get_column("recall").n_unique()
    text = title or "Interpolated precision-recall curve (trec_eval iprec_at_recall)"
    return (
        alt.Chart(data)
        .mark_line(point=n_levels <= 25)
        .encode(
            x=alt.X("recall:Q", title="recall", scale=alt.Scale(domain=[0, 1])),
            y=alt.Y("precision:Q", title="interpolated precision", scale=alt.Scale(domain=[0, 1])),
            color=_color(alt, series),
            tooltip=[
                *([series] if series else []),
                alt.Tooltip("recall:Q", format=".2f"),
                alt.Tooltip("precision:Q", format=".4f"),
            ],
        )
        .properties(width=WIDTH, height=HEIGHT, title=text)
    )


# --------------------------------------------------------------------------- per user
def _per_user_metric(frame: pl.DataFrame, metric: str, chart: str) -> str:
    """The canonical column of a per-user metric, with clear errors."""
    parsed = parse_metric(metric)
    if parsed.spec.scope != "user":
        unit = "item" if parsed.spec.scope == "item" else "by group"
        msg = (
            f"metric {parsed.name!r} has one value per {unit}, not per user; a per-user "
            "chart needs a per-user metric such as 'ndcg@10'"
        )
        raise ValueError(msg)
    if "n_users" in frame.columns and "n_skipped" in frame.columns:
        msg = (
            "this is a summary (it has n_users/n_skipped); pass the per-user frame of "
            "evaluate(..., per_user=True)"
        )
        raise ValueError(msg)
    if parsed.name not in frame.columns:
        msg = f"metric column {parsed.name!r} not found; the frame has {frame.columns}"
        raise ValueError(msg)
    _has_rows(frame, chart, "per_user")
    return parsed.name


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
    >>> from polars_rankeval.plot import charts as plot
    >>> per_user = pl.DataFrame({"system": ["a", "a", "b", "b"], "user": [1, 2, 1, 2],
    ...                          "ndcg@10": [0.5, None, 0.25, 1.0]})
    >>> plot.distribution_data(per_user, "ndcg@10").rows()  # a's user 2 is undefined
    [('a', 0.5, 1.0, 2, 1), ('b', 0.25, 0.5, 2, 0), ('b', 1.0, 1.0, 2, 0)]
    """
    frame = _frame(per_user, "per_user")
    by_cols = [c for c in _check_by(frame, by) if c in frame.columns]
    name = _per_user_metric(frame, metric, "distribution")
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
            f"({frame.height} rows); nothing to plot ({_why_undefined(name)})"
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
    >>> from polars_rankeval.io.datasets import load_systems
    >>> per_user = prk.evaluate(load_systems(), ["ndcg@10"], by="system", per_user=True)
    >>> chart = prk.plot.distribution(per_user, "ndcg@10", kind="ecdf")
    """
    alt = _altair()
    if kind not in ("histogram", "ecdf"):
        msg = f"kind must be one of ['ecdf', 'histogram'], got {kind!r}"
        raise ValueError(msg)
    if isinstance(bins, bool) or not isinstance(bins, int) or bins < 1:
        msg = f"bins must be a positive integer, got {bins!r}"
        raise ValueError(msg)
    name = parse_metric(metric).name
    data = distribution_data(per_user, metric, by=by)
    by_cols = _by_of(data, ("value", "ecdf", "n_users", "n_undefined"))
    data, series = _series_column(data, by_cols)
    undefined = _frame(per_user, "per_user").get_column(name).null_count()
    total = _frame(per_user, "per_user").height
    note = (
        f"{undefined} of {total} user rows left out: {name} undefined (empty='skip')"
        if undefined
        else f"all {total} user rows defined"
    )
    if series:
        shown = set(data.get_column(series).to_list())
        labelled, _ = _series_column(_frame(per_user, "per_user").select(by_cols), by_cols)
        absent = sorted(set(labelled.get_column(series).to_list()) - shown)
        if absent:
            note += f"; no defined value for {series} {', '.join(map(str, absent))}"
    heading = alt.TitleParams(title or f"Per-user {name}", subtitle=[note])
    color = _color(alt, series)
    if kind == "ecdf":
        # The ECDF's points, at most MAX_POINTS per system (evenly spaced, last kept).
        steps = data.unique([*([series] if series else []), "value"], keep="last")
        steps = _thin(
            steps.sort([*([series] if series else []), "value"]),
            [series] if series else [],
            MAX_POINTS,
        )
        left = (
            alt.Chart(_inline(steps))
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
    >>> from polars_rankeval.plot import charts as plot
    >>> per_user = pl.DataFrame({"system": ["a", "a", "b", "b"], "user": [1, 2, 1, 2],
    ...                          "ndcg@10": [0.5, None, 0.25, 1.0]})
    >>> plot.topic_differences_data(per_user, "ndcg@10", baseline="b").rows()
    [('a', 1, 0.5, 0.25, 0.25, 1, 1)]
    """
    frame = _frame(per_user, "per_user")
    _check_by(frame, by)
    if user not in frame.columns:
        msg = f"user column {user!r} not found; the frame has {frame.columns}"
        raise ValueError(msg)
    name = _per_user_metric(frame, metric, "topic_differences")
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
            f"baseline {baseline!r}; nothing to plot ({_why_undefined(name)})"
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
    >>> from polars_rankeval.io.datasets import load_systems
    >>> per_user = prk.evaluate(load_systems(), ["ndcg@10"], by="system", per_user=True)
    >>> chart = prk.plot.topic_differences(per_user, "ndcg@10", baseline="bm25")
    """
    alt = _altair()
    name = parse_metric(metric).name
    data = topic_differences_data(per_user, metric, baseline=baseline, by=by, user=user)
    from polars_rankeval.analysis.compare import metric_direction

    higher = metric_direction(name)
    if compare is not None:
        compare = _frame(compare, "compare")
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
                alt.Chart(_thin(part, [], MAX_POINTS))
                .mark_area(interpolate="step-after")
                .encode(
                    x=alt.X("position:Q", title="users, sorted by difference"), y=y, color=color
                )
                .properties(width=900, height=HEIGHT)
            )
        panel = panel.properties(title=heading)
        panels.append(panel)
    return alt.vconcat(*panels, title=title or f"Per-user {name}: difference against {baseline}")


# --------------------------------------------------------------------------- items
def curve_gaps(
    frame: pl.DataFrame, series: str, x: str, y: str, *, n_grid: int = GAP_GRID
) -> pl.DataFrame:
    """The largest vertical distance between each two series' curves.

    Each curve is read as the lines through its points (sorted by ``x``) and read at
    ``n_grid`` evenly spaced ``x`` from the smallest ``x`` to the largest, where both
    curves are defined (a finer gap than the grid's step is narrower than a pixel at
    the charts' size). The cost grows with the grid and the pairs, not the points.

    Returns
    -------
    polars.DataFrame
        ``a, b, gap`` for every pair of series ``a < b``, sorted.

    Examples
    --------
    >>> import polars as pl
    >>> from polars_rankeval.plot import charts as plot
    >>> f = pl.DataFrame({"s": ["a", "a", "b", "b", "b"], "x": [0.0, 1.0, 0.0, 0.5, 1.0],
    ...                   "y": [0.0, 1.0, 0.0, 0.25, 1.0]})
    >>> plot.curve_gaps(f, "s", "x", "y").rows()  # at x = 0.5: a is at 0.5, b at 0.25
    [('a', 'b', 0.25)]
    """
    points = frame.select(
        pl.col(series).cast(pl.String), pl.col(x).cast(pl.Float64), pl.col(y).cast(pl.Float64)
    ).unique([series, x], keep="last")
    lo, hi = points.get_column(x).min(), points.get_column(x).max()
    step = pl.int_range(0, n_grid, dtype=pl.Int64) / max(n_grid - 1, 1)
    grid = pl.select((pl.lit(lo) + (pl.lit(hi) - pl.lit(lo)) * step).alias(x)).with_columns(
        pl.lit(True).alias("__grid")
    )
    at_grid = (
        points.select(series)
        .unique()
        .join(grid, how="cross")
        .join(points, on=[series, x], how="full", coalesce=True)
        .sort(series, x)
        .with_columns(pl.col(y).interpolate_by(x).over(series))
        .filter(pl.col("__grid").fill_null(False) & pl.col(y).is_not_null())
        .select(series, x, y)
    )
    pairs = at_grid.join(at_grid, on=x, suffix="_b").filter(pl.col(series) < pl.col(f"{series}_b"))
    return (
        pairs.group_by(pl.col(series).alias("a"), pl.col(f"{series}_b").alias("b"))
        .agg((pl.col(y) - pl.col(f"{y}_b")).abs().max().alias("gap"))
        .sort("a", "b")
    )


def _coinciding(frame: pl.DataFrame, series: str, x: str, y: str) -> list[list[str]]:
    """The groups of series whose curves lie within :data:`COINCIDE` of one another."""
    close = curve_gaps(frame, series, x, y).filter(pl.col("gap") < COINCIDE)
    groups: list[set[str]] = []
    for a, b in close.select("a", "b").rows():  # a few systems: their pairs, not data rows
        joined = [g for g in groups if a in g or b in g]
        merged = {a, b}.union(*joined)
        groups = [g for g in groups if g not in joined] + [merged]
    return sorted((sorted(g) for g in groups), key=lambda g: g[0])


def _coincide_note(groups: list[list[str]]) -> list[str]:
    """A subtitle naming the curves that hide one another, or nothing."""
    if not groups:
        return []
    names = "; ".join(" = ".join(g) for g in groups)
    return [
        f"coinciding curves (closer than {COINCIDE:g} everywhere): {names}",
        "drawn widest first, each with its own dash, so that each stays visible",
    ]


def _thin(frame: pl.DataFrame, keys: list[str], max_points: int) -> pl.DataFrame:
    """Keep at most ``max_points`` evenly spaced rows per key group (first and last kept)."""
    i = pl.int_range(0, pl.len(), dtype=pl.Int64)
    n = pl.len()
    step = ((n - 1) / (max_points - 1)).ceil().cast(pl.Int64).clip(lower_bound=1)
    keep = (i % step == 0) | (i == n - 1)
    return frame.filter(keep.over(keys) if keys else keep)


def _exposure(
    data: Any, k: int, by: list[str], options: dict[str, Any], chart: str
) -> tuple[pl.DataFrame, str]:
    item = options.get("item", "item")
    out = evaluate(data, [f"item_exposure@{k}"], by=by or None, per_item=True, **options)
    frame = out.collect() if isinstance(out, pl.LazyFrame) else out
    frame = frame.rename({f"item_exposure@{k}": "exposure"})
    if not frame.select((pl.col("exposure") > 0).any()).item():
        msg = (
            f"{chart}: no item is in a top-{k} list (the data has no rows, or no row with "
            "a score); nothing to plot"
        )
        raise ValueError(msg)
    return frame, item


def _counts(k: Any, max_points: Any) -> tuple[int, int | None]:
    """``k`` and ``max_points`` (or ``None``) by the integer rule of ``_types.integer``."""
    points = None if max_points is None else integer("max_points", max_points, what="an int")
    return integer("k", k, what="a positive integer"), points


def lorenz_data(
    data: Any,
    *,
    k: int = 10,
    by: str | Sequence[str] | None = "system",
    n_items: int | None = None,
    max_points: int | None = MAX_POINTS,
    **options: Any,
) -> pl.DataFrame:
    """The Lorenz curve of item exposure in the top k, per system, with its Gini.

    The N catalog items (``n_items``; default the distinct items of the input, as for the
    ``gini`` metric) are sorted by exposure (``item_exposure@k``: how many users get
    the item in their top k; items never recommended have 0) ascending; the curve joins
    (0, 0) and (i / N, share of all top-k slots held by the i least exposed items).
    ``gini`` is ``gini@k`` from ``evaluate`` (1 - twice the area under this curve).

    Returns
    -------
    polars.DataFrame
        ``by..., item_share, exposure_share, gini``; at most ``max_points`` points per
        system beyond (0, 0) (evenly spaced, the last kept), ``None`` for all.

    Examples
    --------
    Three catalog items; both users get x in their top 1, so y and z (2 of 3 items)
    get nothing: Gini = (2 * 3 - 3 - 1) * 2 / (3 * 2) = 2/3.

    >>> import polars as pl
    >>> from polars_rankeval.plot import charts as plot
    >>> df = pl.DataFrame({"user": [1, 1, 2, 2], "item": ["x", "y", "x", "z"],
    ...                    "score": [2.0, 1.0, 2.0, 1.0], "relevance": [1, 0, 0, 1]})
    >>> plot.lorenz_data(df, k=1, by=None).rows()  # doctest: +NORMALIZE_WHITESPACE
    [(0.0, 0.0, 0.6666666666666666), (0.6666666666666666, 0.0, 0.6666666666666666),
     (1.0, 1.0, 0.6666666666666666)]
    """
    k, max_points = _counts(k, max_points)
    by_cols = [by] if isinstance(by, str) else list(by or [])
    lf, _ = to_lazy(data)
    exposure, item = _exposure(lf, k, by_cols, options, "lorenz")
    catalog = None if n_items is None else integer("n_items", n_items, what="an int or None")
    if catalog is None:
        catalog = int(lf.select(pl.col(item).n_unique()).collect().item())
    gini = evaluate(lf, [f"gini@{k}"], by=by_cols or None, n_items=catalog, **options)
    gini_frame = (gini.collect() if isinstance(gini, pl.LazyFrame) else gini).select(
        *by_cols, pl.col(f"gini@{k}").alias("gini")
    )
    positive = exposure.filter(pl.col("exposure") > 0)
    n_zero = catalog - pl.len().over(by_cols) if by_cols else catalog - pl.len()
    rank = (
        n_zero + pl.int_range(1, pl.len() + 1, dtype=pl.Int64).over(by_cols)
        if by_cols
        else (n_zero + pl.int_range(1, pl.len() + 1, dtype=pl.Int64))
    )
    total = pl.col("exposure").sum().over(by_cols) if by_cols else pl.col("exposure").sum()
    cum = pl.col("exposure").cum_sum().over(by_cols) if by_cols else pl.col("exposure").cum_sum()
    points = (
        positive.sort([*by_cols, "exposure", id_order(item)])
        .with_columns(
            (rank.cast(pl.Float64) / catalog).alias("item_share"),
            (cum / total).alias("exposure_share"),
        )
        .select(*by_cols, "item_share", "exposure_share")
    )
    if max_points is not None:
        points = _thin(points, by_cols, max_points)
    # (0, 0) and the end of the never-exposed items (Z / N, 0) start every curve.
    groups = gini_frame.select(by_cols) if by_cols else pl.DataFrame({"__g": [0]})
    n_pos = (
        positive.group_by(by_cols).agg(pl.len().alias("__n"))
        if by_cols
        else pl.DataFrame({"__n": [positive.height]})
    )
    starts = (
        groups.join(n_pos, on=by_cols, how="left")
        if by_cols
        else groups.with_columns(n_pos.get_column("__n"))
    )
    starts = starts.with_columns(pl.col("__n").fill_null(0))
    origin = starts.select(
        *by_cols, pl.lit(0.0).alias("item_share"), pl.lit(0.0).alias("exposure_share")
    )
    flat = starts.filter(pl.col("__n") < catalog).select(
        *by_cols,
        ((catalog - pl.col("__n")) / catalog).cast(pl.Float64).alias("item_share"),
        pl.lit(0.0).alias("exposure_share"),
    )
    out = pl.concat([origin, flat, points], how="vertical_relaxed").unique(maintain_order=True)
    out = (
        out.join(gini_frame, on=by_cols, how="left")
        if by_cols
        else out.with_columns(pl.lit(gini_frame.item(0, "gini")).alias("gini"))
    )
    return out.sort([*by_cols, "item_share", "exposure_share"])


def lorenz(
    data: Any,
    *,
    k: int = 10,
    by: str | Sequence[str] | None = "system",
    n_items: int | None = None,
    title: str | None = None,
    **options: Any,
) -> alt.LayerChart:
    """The Lorenz curve of item exposure per system, with each Gini in the legend.

    Parameters
    ----------
    data
        The long frame (``by..., user, item, score, relevance``).
    k
        The cutoff: exposure is the number of users with the item in their top k.
    by
        The system column(s).
    n_items
        The catalog size (default: the distinct items of the input).
    title
        Chart title.
    **options
        Other options of ``evaluate`` (``ties``, ``users``, column names, ...).

    Returns
    -------
    altair.LayerChart
        The curves and the line of equal exposure (the diagonal).

    Examples
    --------
    >>> import polars_rankeval as prk
    >>> from polars_rankeval.io.datasets import load_systems
    >>> chart = prk.plot.lorenz(load_systems(), k=10)
    """
    alt = _altair()
    data_ = lorenz_data(data, k=k, by=by, n_items=n_items, **options)
    by_cols = [c for c in data_.columns if c not in ("item_share", "exposure_share", "gini")]
    data_, series = _series_column(data_, by_cols)
    legend = "system (Gini)" if series else "Gini"
    # One label per system (a few rows): the Gini with 3 decimals, e.g. "bm25 (Gini 0.530)".
    keys = [series] if series else []
    labels = data_.select(*keys, "gini").unique(keys or None, maintain_order=True)
    names = labels.get_column(series).to_list() if series else ["all"]
    texts = [
        f"{n} (Gini {'n/a' if g is None else format(g, '.3f')})"
        for n, g in zip(names, labels.get_column("gini").to_list(), strict=True)
    ]
    if keys:
        label_frame = labels.select(keys).with_columns(pl.Series(legend, texts, dtype=pl.String))
        data_ = data_.join(label_frame, on=keys, how="left")
    else:
        data_ = data_.with_columns(pl.lit(texts[0]).alias(legend))
    domain = texts
    coinciding = _coinciding(data_, series, "item_share", "exposure_share") if series else []
    label_of = {str(name): text for name, text in zip(names, texts, strict=True)}
    groups = [[label_of[name] for name in group] for group in coinciding]
    notes = _coincide_note(coinciding)
    encoding = {
        "x": alt.X(
            "item_share:Q",
            title="share of catalog items (least exposed first)",
            scale=alt.Scale(domain=[0, 1]),
        ),
        "y": alt.Y(
            "exposure_share:Q", title=f"share of top-{k} exposure", scale=alt.Scale(domain=[0, 1])
        ),
        "color": alt.Color(
            f"{legend}:N", title=legend, scale=alt.Scale(scheme=PALETTE, domain=domain)
        ),
        "strokeDash": _dashes(alt, legend, domain, [list(d) for d in DASHES]),
        "tooltip": [
            f"{legend}:N",
            alt.Tooltip("item_share:Q", format=".3f"),
            alt.Tooltip("exposure_share:Q", format=".3f"),
        ],
    }
    diagonal = (
        alt.Chart(pl.DataFrame({"x": [0.0, 1.0], "y": [0.0, 1.0]}))
        .mark_line(strokeDash=[4, 4], color="#9e9e9e")
        .encode(x="x:Q", y="y:Q")
    )
    text = title or f"Lorenz curve of item exposure in the top {k}"
    heading = alt.TitleParams(text, subtitle=notes) if notes else text
    lines = _lines(alt, data_, legend, domain, encoding, groups)
    return alt.layer(diagonal, *lines).properties(width=WIDTH, height=WIDTH, title=heading)


def long_tail_data(
    data: Any,
    *,
    k: int = 10,
    by: str | Sequence[str] | None = "system",
    popularity: pl.DataFrame | None = None,
    rel: float = 1.0,
    max_points: int | None = MAX_POINTS,
    **options: Any,
) -> pl.DataFrame:
    """Cumulative share of top-k recommendations against the catalog's popularity.

    The catalog items (every item of the input and of ``popularity``) are sorted by
    popularity, most popular first (ties by item id). ``popularity`` is a frame ``item,
    popularity`` (e.g. ``prk.item_popularity(train)``); by default it is the number of
    distinct users for whom the item is relevant in the input (relevance >= ``rel``).
    For the catalog series the curve gives, at the share x of the catalog's most popular
    items, the share of all popularity they hold; for each system, the share of its
    top-k recommendation slots (``item_exposure@k``) that go to them.

    Returns
    -------
    polars.DataFrame
        ``series, item_share, share`` (series: "catalog" or the system name), at most
        ``max_points`` points per series.
    """
    k, max_points = _counts(k, max_points)
    by_cols = [by] if isinstance(by, str) else list(by or [])
    lf, _ = to_lazy(data)
    item = options.get("item", "item")
    exposure, _ = _exposure(lf, k, by_cols, options, "long_tail")
    if popularity is None:
        user, relevance = options.get("user", "user"), options.get("relevance", "relevance")
        pop = (
            lf.filter(pl.col(relevance) >= rel)
            .select(user, item)
            .unique()
            .group_by(item)
            .agg(pl.len().cast(pl.Float64).alias("popularity"))
            .collect()
        )
    else:
        if not isinstance(popularity, pl.DataFrame) or not {item, "popularity"} <= set(
            popularity.columns
        ):
            msg = f"popularity must be a polars DataFrame with columns {item!r} and 'popularity'"
            raise ValueError(msg)
        pop = popularity.select(item, pl.col("popularity").cast(pl.Float64))
    items = pl.concat([lf.select(item).unique().collect(), pop.select(item)]).unique()
    order = (
        items.join(pop, on=item, how="left")
        .with_columns(pl.col("popularity").fill_null(0.0))
        .sort(["popularity", id_order(item)], descending=[True, False])
        .with_columns(pl.int_range(1, pl.len() + 1, dtype=pl.Int64).alias("__rank"))
    )
    n = order.height
    pop_total = order.get_column("popularity").sum()
    catalog = order.select(
        pl.lit("catalog").alias("series"),
        (pl.col("__rank") / n).alias("item_share"),
        (pl.col("popularity").cum_sum() / pop_total if pop_total else pl.lit(0.0)).alias("share"),
    )
    exposure, series = _series_column(exposure, by_cols)
    label = series or "series"
    if series is None:
        exposure = exposure.with_columns(pl.lit("recommended").alias(label))
    systems = exposure.select(label).unique().sort(label)
    grid = systems.join(order.select(item, "__rank"), how="cross")
    joined = grid.join(exposure.select(label, item, "exposure"), on=[label, item], how="left")
    joined = joined.with_columns(pl.col("exposure").fill_null(0.0)).sort([label, "__rank"])
    recs = joined.select(
        pl.col(label).cast(pl.String).alias("series"),
        (pl.col("__rank") / n).alias("item_share"),
        (pl.col("exposure").cum_sum().over(label) / pl.col("exposure").sum().over(label)).alias(
            "share"
        ),
    )
    out = pl.concat([catalog, recs], how="vertical_relaxed")
    if max_points is not None:
        out = _thin(out, ["series"], max_points)
    origin = (
        out.select("series")
        .unique(maintain_order=True)
        .with_columns(pl.lit(0.0).alias("item_share"), pl.lit(0.0).alias("share"))
    )
    return pl.concat([origin, out]).with_columns(pl.col("share").cast(pl.Float64))


def long_tail(
    data: Any,
    *,
    k: int = 10,
    by: str | Sequence[str] | None = "system",
    popularity: pl.DataFrame | None = None,
    rel: float = 1.0,
    title: str | None = None,
    **options: Any,
) -> alt.LayerChart:
    """Popularity of the recommended items against the catalog (the long tail).

    x: the share of catalog items, most popular first; y: the cumulative share of the
    catalog's popularity (grey) and of each system's top-k recommendation slots. A
    system whose curve rises above the catalog's concentrates on popular items; one
    below it reaches into the long tail.

    Parameters
    ----------
    data
        The long frame.
    k
        The cutoff of the recommendation lists.
    by
        The system column(s).
    popularity
        A frame ``item, popularity`` (e.g. ``prk.item_popularity(train)``); default:
        the number of users for whom the item is relevant in ``data``.
    rel
        Minimum relevance counted by the default popularity.
    title
        Chart title.
    **options
        Other options of ``evaluate``.

    Returns
    -------
    altair.LayerChart

    Examples
    --------
    >>> import polars_rankeval as prk
    >>> from polars_rankeval.io.datasets import load_systems
    >>> chart = prk.plot.long_tail(load_systems(), k=10)
    """
    alt = _altair()
    frame = long_tail_data(data, k=k, by=by, popularity=popularity, rel=rel, **options)
    names = frame.get_column("series").unique(maintain_order=True).to_list()
    systems = [s for s in names if s != "catalog"]
    domain = ["catalog", *systems]
    legend = "popularity / top-k slots"
    encoding = {
        "x": alt.X(
            "item_share:Q",
            title="share of catalog items (most popular first)",
            scale=alt.Scale(domain=[0, 1]),
        ),
        "y": alt.Y("share:Q", title="cumulative share", scale=alt.Scale(domain=[0, 1])),
        "color": alt.Color(
            "series:N",
            title=legend,
            scale=alt.Scale(domain=domain, range=["#9e9e9e", *_scheme_colors(len(systems))]),
        ),
        "strokeDash": _dashes(alt, "series", domain, [[4, 3], *(list(d) for d in DASHES)], legend),
        "tooltip": [
            "series:N",
            alt.Tooltip("item_share:Q", format=".3f"),
            alt.Tooltip("share:Q", format=".3f"),
        ],
    }
    groups = _coinciding(frame, "series", "item_share", "share")
    text = title or f"Popularity of the top-{k} recommendations vs the catalog (long tail)"
    heading = alt.TitleParams(text, subtitle=_coincide_note(groups)) if groups else text
    lines = _lines(alt, frame, "series", domain, encoding, groups)
    return alt.layer(*lines).properties(width=WIDTH, height=WIDTH, title=heading)


_TABLEAU10 = (
    "#4c78a8",
    "#f58518",
    "#e45756",
    "#72b7b2",
    "#54a24b",
    "#eeca3b",
    "#b279a2",
    "#ff9da6",
    "#9d755d",
    "#bab0ac",
)


def _dashes(
    alt: Any, field: str, domain: list[str], patterns: list[list[int]], title: str | None = None
) -> Any:
    """A stroke pattern per series (merged into the colour legend: same field, title)."""
    cycle = [patterns[i % len(patterns)] for i in range(len(domain))]
    return alt.StrokeDash(
        f"{field}:N", title=title or field, scale=alt.Scale(domain=domain, range=cycle)
    )


def _lines(
    alt: Any,
    frame: pl.DataFrame,
    field: str,
    domain: list[str],
    encoding: dict[str, Any],
    groups: list[list[str]],
) -> list[Any]:
    """The series' curves: one line chart, or one layer per series when some coincide.

    ``groups`` are values of ``field`` whose curves coincide; the layers follow the legend
    order, and the curves of a group are each narrower than the one drawn before, so that
    every colour shows at the edges of the curves drawn over it.
    """
    if not groups:
        return [alt.Chart(_inline(frame)).mark_line().encode(**encoding)]
    width = {label: LINE_WIDTH for label in domain}
    for group in groups:
        members = [label for label in domain if label in group]
        width.update(zip(members, _widths(len(members)), strict=True))
    return [
        alt.Chart(_inline(frame.filter(pl.col(field) == label)))
        .mark_line(strokeWidth=width[label])
        .encode(**encoding)
        for label in domain
    ]


def _widths(n: int) -> list[float]:
    """Stroke widths of ``n`` coinciding curves in drawing order, widest first.

    From at most 7.5 pixels down to 1.5 (2 pixels apart, less for many curves), so that
    each curve shows at the edges of the next.
    """
    step = min(2.0, 6.0 / max(n - 1, 1))
    return [1.5 + step * (n - 1 - i) for i in range(n)]


def _scheme_colors(n: int) -> list[str]:
    return [_TABLEAU10[i % len(_TABLEAU10)] for i in range(n)]
