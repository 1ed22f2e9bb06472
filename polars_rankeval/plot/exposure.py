"""Charts of item exposure in the top k: the Lorenz curve and the long tail."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import polars as pl

from polars_rankeval._utils.constraints import (
    COLUMNS,
    Frame,
    Instance,
    Integer,
    Number,
    Spec,
    Text,
    validate_params,
)
from polars_rankeval._utils.ties import id_order
from polars_rankeval.api.evaluate import evaluate
from polars_rankeval.metrics.params import Interval
from polars_rankeval.plan.validate import to_lazy
from polars_rankeval.plot._common import (
    MAX_POINTS,
    PALETTE,
    WIDTH,
    import_altair,
    series_column,
    thin,
)
from polars_rankeval.plot._lines import (
    DASHES,
    coincide_note,
    coinciding_groups,
    scheme_colors,
    series_lines,
    share_encoding,
)

if TYPE_CHECKING:
    import altair as alt


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


_EXPOSURE: dict[str, Spec] = {
    "data": Frame(),
    "k": Integer(Interval(1, None)),
    "by": [*COLUMNS, None],
}
"""The inputs of the exposure charts (``**options`` pass on to ``evaluate``)."""
_LORENZ: dict[str, Spec] = {**_EXPOSURE, "n_items": [Integer(Interval(1, None)), None]}
_LONG_TAIL: dict[str, Spec] = {
    **_EXPOSURE,
    "popularity": [Instance(pl.DataFrame, what="a polars DataFrame (item, popularity)"), None],
    "rel": Number(),
}
_POINTS: Spec = [Integer(Interval(2, None)), None]
_TITLE: Spec = [Text(), None]


@validate_params({**_LORENZ, "max_points": _POINTS})
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
    >>> from polars_rankeval import plot
    >>> df = pl.DataFrame({"user": [1, 1, 2, 2], "item": ["x", "y", "x", "z"],
    ...                    "score": [2.0, 1.0, 2.0, 1.0], "relevance": [1, 0, 0, 1]})
    >>> plot.lorenz_data(df, k=1, by=None).rows()  # doctest: +NORMALIZE_WHITESPACE
    [(0.0, 0.0, 0.6666666666666666), (0.6666666666666666, 0.0, 0.6666666666666666),
     (1.0, 1.0, 0.6666666666666666)]
    """
    by_cols = [by] if isinstance(by, str) else list(by or [])
    lf, _ = to_lazy(data)
    exposure, item = _exposure(lf, k, by_cols, options, "lorenz")
    catalog = None if n_items is None else int(n_items)
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
        points = thin(points, by_cols, max_points)
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


@validate_params({**_LORENZ, "title": _TITLE})
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
    >>> chart = prk.plot.lorenz(prk.load_systems(), k=10)
    """
    alt = import_altair()
    data_ = lorenz_data(data, k=k, by=by, n_items=n_items, **options)
    by_cols = [c for c in data_.columns if c not in ("item_share", "exposure_share", "gini")]
    data_, series = series_column(data_, by_cols)
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
    coinciding = coinciding_groups(data_, series, "item_share", "exposure_share") if series else []
    label_of = {str(name): text for name, text in zip(names, texts, strict=True)}
    groups = [[label_of[name] for name in group] for group in coinciding]
    notes = coincide_note(coinciding)
    encoding = share_encoding(
        alt,
        field=legend,
        domain=domain,
        x_title="share of catalog items (least exposed first)",
        y="exposure_share",
        y_title=f"share of top-{k} exposure",
        colors=alt.Scale(scheme=PALETTE, domain=domain),
        patterns=[list(d) for d in DASHES],
    )
    diagonal = (
        alt.Chart(pl.DataFrame({"x": [0.0, 1.0], "y": [0.0, 1.0]}))
        .mark_line(strokeDash=[4, 4], color="#9e9e9e")
        .encode(x="x:Q", y="y:Q")
    )
    text = title or f"Lorenz curve of item exposure in the top {k}"
    heading = alt.TitleParams(text, subtitle=notes) if notes else text
    lines = series_lines(alt, data_, legend, domain, encoding, groups)
    return alt.layer(diagonal, *lines).properties(width=WIDTH, height=WIDTH, title=heading)


@validate_params({**_LONG_TAIL, "max_points": _POINTS})
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
        if not {item, "popularity"} <= set(popularity.columns):
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
    exposure, series = series_column(exposure, by_cols)
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
        out = thin(out, ["series"], max_points)
    origin = (
        out.select("series")
        .unique(maintain_order=True)
        .with_columns(pl.lit(0.0).alias("item_share"), pl.lit(0.0).alias("share"))
    )
    return pl.concat([origin, out]).with_columns(pl.col("share").cast(pl.Float64))


@validate_params({**_LONG_TAIL, "title": _TITLE})
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
    >>> chart = prk.plot.long_tail(prk.load_systems(), k=10)
    """
    alt = import_altair()
    frame = long_tail_data(data, k=k, by=by, popularity=popularity, rel=rel, **options)
    names = frame.get_column("series").unique(maintain_order=True).to_list()
    systems = [s for s in names if s != "catalog"]
    domain = ["catalog", *systems]
    encoding = share_encoding(
        alt,
        field="series",
        domain=domain,
        x_title="share of catalog items (most popular first)",
        y="share",
        y_title="cumulative share",
        colors=alt.Scale(domain=domain, range=["#9e9e9e", *scheme_colors(len(systems))]),
        patterns=[[4, 3], *(list(d) for d in DASHES)],
        legend="popularity / top-k slots",
    )
    groups = coinciding_groups(frame, "series", "item_share", "share")
    text = title or f"Popularity of the top-{k} recommendations vs the catalog (long tail)"
    heading = alt.TitleParams(text, subtitle=coincide_note(groups)) if groups else text
    lines = series_lines(alt, frame, "series", domain, encoding, groups)
    return alt.layer(*lines).properties(width=WIDTH, height=WIDTH, title=heading)
