"""What the charts share: their input frames, errors, colours, sizes and point limits."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import polars as pl

from polars_rankeval.metrics.grammar import parse_metric
from polars_rankeval.plan.validate import to_lazy

PALETTE = "tableau10"
"""The colour scheme of the systems (readable, colour-blind-safe enough for ~10 systems)."""
WIDTH, HEIGHT = 320, 220
MAX_POINTS = 2000
"""The points a curve keeps per system (evenly spaced); past it, per-user bars become an area."""


def import_altair() -> Any:
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


def as_frame(data: Any, what: str) -> pl.DataFrame:
    """The input as a DataFrame: a LazyFrame collected, another input read as ``what``."""
    if isinstance(data, pl.LazyFrame):
        return data.collect()
    if isinstance(data, pl.DataFrame):
        return data
    lf, _ = to_lazy(data, what)
    return lf.collect()


def series_column(frame: pl.DataFrame, by: list[str]) -> tuple[pl.DataFrame, str | None]:
    """One label column naming the system (the by columns joined by " / ")."""
    if not by:
        return frame, None
    name = by[0] if len(by) == 1 else " / ".join(by)
    label = pl.concat_str([pl.col(c).cast(pl.String) for c in by], separator=" / ")
    return frame.with_columns(label.alias(name)), name


def color_encoding(alt: Any, series: str | None, domain: list[str] | None = None) -> Any:
    """One colour per system of ``series`` (in ``domain`` order), or one colour for all."""
    if series is None:
        return alt.value("#4c78a8")
    scale = (
        alt.Scale(scheme=PALETTE) if domain is None else alt.Scale(scheme=PALETTE, domain=domain)
    )
    return alt.Color(f"{series}:N", title=series, scale=scale, sort=domain)


def by_columns(frame: pl.DataFrame, known: Sequence[str]) -> list[str]:
    """The columns of ``frame`` other than ``known``: the system columns."""
    return [c for c in frame.columns if c not in known]


def check_by(frame: pl.DataFrame, by: str | Sequence[str] | None) -> list[str]:
    """The ``by`` columns as a list, each of which must be in ``frame``."""
    cols = [by] if isinstance(by, str) else list(by or [])
    missing = [c for c in cols if c not in frame.columns]
    if missing:
        msg = f"by column(s) {missing} not found; the frame has {frame.columns}"
        raise ValueError(msg)
    return cols


def check_rows(frame: pl.DataFrame, chart: str, what: str = "the frame") -> None:
    """Refuse an empty input: a chart of nothing would be blank, not an answer."""
    if frame.height == 0:
        msg = f"{chart}: {what} has no rows; nothing to plot"
        raise ValueError(msg)


def needs_columns(frame: pl.DataFrame, needed: Sequence[str], source: str) -> None:
    """Refuse a frame that is not the result the chart draws, naming what it lacks."""
    missing = [c for c in needed if c not in frame.columns]
    if missing:
        msg = f"the frame lacks column(s) {', '.join(missing)}; pass the frame of {source}"
        raise ValueError(msg)


def why_undefined(metric: str) -> str:
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


def inline_values(frame: pl.DataFrame) -> dict[str, Any]:
    """The rows as Vega-Lite inline values, past Altair's 5,000-row display limit.

    For the charts whose points are already bounded (at most :data:`MAX_POINTS` per
    series): with several series they pass the limit, and a notebook could not display
    them. Every field of such a chart is encoded with its type (no inference from data).
    """
    floats = [name for name, dtype in frame.schema.items() if dtype.is_float()]
    return {"values": frame.with_columns(pl.col(floats).fill_nan(None)).to_dicts()}


def per_user_metric(frame: pl.DataFrame, metric: str, chart: str) -> str:
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
    check_rows(frame, chart, "per_user")
    return parsed.name


def thin(frame: pl.DataFrame, keys: list[str], max_points: int) -> pl.DataFrame:
    """Keep at most ``max_points`` evenly spaced rows per key group (first and last kept)."""
    i = pl.int_range(0, pl.len(), dtype=pl.Int64)
    n = pl.len()
    step = ((n - 1) / (max_points - 1)).ceil().cast(pl.Int64).clip(lower_bound=1)
    keep = (i % step == 0) | (i == n - 1)
    return frame.filter(keep.over(keys) if keys else keep)
