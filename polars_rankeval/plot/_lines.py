"""Curves of several systems that may coincide: their gaps, widths and dashes.

Two systems with the same exposure draw the same curve, and the one drawn last hides
the other; the charts name such curves and draw them so that each stays visible.
"""

from __future__ import annotations

from typing import Any

import polars as pl

from polars_rankeval._utils.constraints import COLUMN, Instance, Integer, validate_params
from polars_rankeval.metrics.params import Interval
from polars_rankeval.plot._common import inline_values

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


@validate_params(
    {
        "frame": Instance(pl.DataFrame, what="a polars DataFrame"),
        "series": COLUMN,
        "x": COLUMN,
        "y": COLUMN,
        "n_grid": Integer(Interval(1, None)),
    }
)
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
    >>> from polars_rankeval import plot
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


def coinciding_groups(frame: pl.DataFrame, series: str, x: str, y: str) -> list[list[str]]:
    """The groups of series whose curves lie within :data:`COINCIDE` of one another."""
    close = curve_gaps(frame, series, x, y).filter(pl.col("gap") < COINCIDE)
    groups: list[set[str]] = []
    for a, b in close.select("a", "b").rows():  # a few systems: their pairs, not data rows
        joined = [g for g in groups if a in g or b in g]
        merged = {a, b}.union(*joined)
        groups = [g for g in groups if g not in joined] + [merged]
    return sorted((sorted(g) for g in groups), key=lambda g: g[0])


def coincide_note(groups: list[list[str]]) -> list[str]:
    """A subtitle naming the curves that hide one another, or nothing."""
    if not groups:
        return []
    names = "; ".join(" = ".join(g) for g in groups)
    return [
        f"coinciding curves (closer than {COINCIDE:g} everywhere): {names}",
        "drawn widest first, each with its own dash, so that each stays visible",
    ]


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


def dash_encoding(
    alt: Any, field: str, domain: list[str], patterns: list[list[int]], title: str | None = None
) -> Any:
    """A stroke pattern per series (merged into the colour legend: same field, title)."""
    cycle = [patterns[i % len(patterns)] for i in range(len(domain))]
    return alt.StrokeDash(
        f"{field}:N", title=title or field, scale=alt.Scale(domain=domain, range=cycle)
    )


def share_encoding(
    alt: Any,
    *,
    field: str,
    domain: list[str],
    x_title: str,
    y: str,
    y_title: str,
    colors: Any,
    patterns: list[list[int]],
    legend: str | None = None,
) -> dict[str, Any]:
    """The encoding of share curves: ``item_share`` (x) against ``y``, both on [0, 1].

    One colour (``colors``, an Altair scale) and one stroke pattern per value of
    ``field``, merged into one legend titled ``legend`` (default: ``field``).
    """
    title = legend or field
    return {
        "x": alt.X("item_share:Q", title=x_title, scale=alt.Scale(domain=[0, 1])),
        "y": alt.Y(f"{y}:Q", title=y_title, scale=alt.Scale(domain=[0, 1])),
        "color": alt.Color(f"{field}:N", title=title, scale=colors),
        "strokeDash": dash_encoding(alt, field, domain, patterns, title),
        "tooltip": [
            f"{field}:N",
            alt.Tooltip("item_share:Q", format=".3f"),
            alt.Tooltip(f"{y}:Q", format=".3f"),
        ],
    }


def series_lines(
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
        return [alt.Chart(inline_values(frame)).mark_line().encode(**encoding)]
    width = {label: LINE_WIDTH for label in domain}
    for group in groups:
        members = [label for label in domain if label in group]
        width.update(zip(members, _widths(len(members)), strict=True))
    return [
        alt.Chart(inline_values(frame.filter(pl.col(field) == label)))
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


def scheme_colors(n: int) -> list[str]:
    return [_TABLEAU10[i % len(_TABLEAU10)] for i in range(n)]
