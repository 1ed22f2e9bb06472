"""Brute force over tied orderings: the exact expectation ``ties="expected"`` must give.

Each user's recommended rows are grouped by equal score; every combination of the
orderings of that user's tie groups is turned into distinct scores and evaluated with
a deterministic policy. The per-user values are averaged over the orderings.

All the orderings of one user are evaluated in one ``evaluate`` call, each ordering a
group of its own (``by=`` a variant column): the same rows, users and items as one
call per ordering (the user keeps its id, so ``history=`` and ``items=`` tables still
match), without paying the fixed cost of a call per ordering.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import polars as pl

import polars_rankeval as prk

VARIANT = "brute_variant"


def orderings(rows: pl.DataFrame) -> pl.DataFrame:
    """Every tie-free re-scoring of one user's rows, stacked, numbered by ``VARIANT``.

    Null scores stay null; the recommended rows of each ordering get the distinct
    scores n, n - 1, ..., 1 in that ordering.
    """
    rec = rows.filter(pl.col("score").is_not_null()).sort("score", descending=True)
    rest = rows.filter(pl.col("score").is_null())
    scores = rec.get_column("score").to_list()
    bounds = [0] + [i for i in range(1, len(scores)) if scores[i] != scores[i - 1]]
    bounds.append(len(scores))
    groups = [range(lo, hi) for lo, hi in itertools.pairwise(bounds) if hi > lo]
    index: list[int] = []
    for perms in itertools.product(*(itertools.permutations(g) for g in groups)):
        index.extend(i for perm in perms for i in perm)
    n = rec.height
    count = len(index) // n if n else 1
    ranked = rec[index] if n else rec
    ranked = ranked.with_columns(
        score=pl.Series([float(n - i) for i in range(n)] * count, dtype=pl.Float64),
        **{VARIANT: pl.Series([v for v in range(count) for _ in range(n)], dtype=pl.Int64)},
    )
    unranked = pl.concat(
        [rest.with_columns(pl.col("score").cast(pl.Float64), **{VARIANT: pl.lit(v, dtype=pl.Int64)})
         for v in range(count)]
    )  # fmt: skip
    return pl.concat([ranked, unranked.select(ranked.columns)]).sort(VARIANT, maintain_order=True)


def brute_per_user(df: pl.DataFrame, metric: str, **kwargs: Any) -> dict[Any, float | None]:
    """User -> the mean over its tie orderings of the metric (``per_user=True``)."""
    out: dict[Any, float | None] = {}
    df = df.with_columns(pl.col("score").cast(pl.Float64))
    for (user,), rows in df.group_by("user", maintain_order=True):
        variants = orderings(rows)
        count = variants.get_column(VARIANT).max()
        res = prk.evaluate(
            variants, [metric], ties="item_asc", per_user=True, users="all", by=VARIANT, **kwargs
        )
        got = dict(zip(res.get_column(VARIANT), res.to_series(-1), strict=True))
        values = [got.get(v) for v in range(int(count) + 1)]  # type: ignore[arg-type]
        defined = [v for v in values if v is not None]
        out[user] = math.fsum(defined) / len(defined) if defined else None
    return out


def per_user(df: pl.DataFrame, metric: str, **kwargs: Any) -> dict[Any, float | None]:
    res = prk.evaluate(df, [metric], per_user=True, users="all", **kwargs)
    return dict(zip(res.get_column("user"), res.to_series(-1), strict=True))
