"""Brute force over tied orderings: the exact expectation ``ties="expected"`` must give.

Each user's recommended rows are grouped by equal score; every combination of the
orderings of that user's tie groups is turned into distinct scores and evaluated with
a deterministic policy. The per-user values are averaged over the orderings.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import polars as pl

import polars_rankeval as prk


def orderings(rows: pl.DataFrame) -> list[pl.DataFrame]:
    """Every tie-free re-scoring of one user's rows (null scores stay null)."""
    rec = rows.filter(pl.col("score").is_not_null()).sort("score", descending=True)
    rest = rows.filter(pl.col("score").is_null())
    groups = [g for _, g in rec.group_by("score", maintain_order=True)]
    out = []
    for perms in itertools.product(*(itertools.permutations(range(g.height)) for g in groups)):
        parts = [g[list(p)] for g, p in zip(groups, perms, strict=True)]
        ordered = pl.concat(parts) if parts else rec
        n = ordered.height
        scored = ordered.with_columns(score=pl.Series([float(n - i) for i in range(n)]))
        out.append(pl.concat([scored, rest.with_columns(pl.col("score").cast(pl.Float64))]))
    return out


def brute_per_user(df: pl.DataFrame, metric: str, **kwargs: Any) -> dict[Any, float | None]:
    """User -> the mean over its tie orderings of the metric (``per_user=True``)."""
    out: dict[Any, float | None] = {}
    df = df.with_columns(pl.col("score").cast(pl.Float64))
    for (user,), rows in df.group_by("user", maintain_order=True):
        values = []
        for variant in orderings(rows):
            res = prk.evaluate(
                variant, [metric], ties="item_asc", per_user=True, users="all", **kwargs
            )
            values.append(res.to_series(-1).item() if res.height else None)
        defined = [v for v in values if v is not None]
        out[user] = math.fsum(defined) / len(defined) if defined else None
    return out


def per_user(df: pl.DataFrame, metric: str, **kwargs: Any) -> dict[Any, float | None]:
    res = prk.evaluate(df, [metric], per_user=True, users="all", **kwargs)
    return dict(zip(res.get_column("user"), res.to_series(-1), strict=True))
