"""Rank-biased overlap (Webber, Moffat & Zobel, 2010) of two rankings, per user.

RBO compares two rankings S and L by their overlap at every depth d, ``X_d = |S_{:d}
intersect L_{:d}|``, weighted top-heavily: ``RBO = (1 - p) * sum_{d >= 1} p**(d - 1) *
X_d / d``. Seen lists are prefixes of longer (or infinite) rankings, so from lists of
lengths s <= l only bounds and an estimate are known (the paper's section 4):

* ``min``: the unseen items never match (eq. 11, extended to uneven lengths):
  ``(1 - p) / p * (-ln(1 - p) * X_l - sum_i H(m_i - 1))``;
* ``max``: the unseen items match as early as they can (the short list's next items are
  the long list's unmatched ones, then both lists' unseen items are the same);
  ``res = max - min`` (the residual, eq. 30's uncertainty);
* ``ext``: the agreement of the seen prefix extrapolated to every depth (eq. 32).

Here ``m_i = max(rank in S, rank in L)`` of each item in both lists (``X_d`` is the
number of such items with ``m_i <= d``), ``H(n) = sum_{d=1}^n p**d / d`` and ``G(n) =
sum_{d=1}^n p**d``. Everything is a sum over the common items plus look-ups of ``H`` in
one small table of depths 0..(s + l): no per-depth rows per user. Both lists empty:
undefined (null); one empty: ``min = ext = 0`` and ``max = 1``.

:func:`rbo_frame` is shared by the registered metric ``rbo`` (the run's ranking against
the reference ranking given by the relevance or another column) and by
:func:`polars_rankeval.rank_similarity` (two runs' rankings of each user).
"""

from __future__ import annotations

import math
from typing import Annotated, Literal

import polars as pl

from polars_rankeval._utils.ties import id_order
from polars_rankeval.metrics.features import Features
from polars_rankeval.metrics.params import ColumnOption, Interval
from polars_rankeval.metrics.registry import register
from polars_rankeval.metrics.spec import FramePlan

Estimate = Literal["ext", "min", "max", "res"]
RBO_ESTIMATES: tuple[str, ...] = ("ext", "min", "max", "res")
Persistence = Annotated[
    float,
    Interval(0, 1, closed="neither"),
    "persistence p: the weight of depth d is p**(d - 1) (expected depth 1 / (1 - p))",
]
EstimateOpt = Annotated[
    Estimate,
    "extrapolated (ext, eq. 32), lower bound (min), upper bound (max) or residual max - min",
]
Reference = Annotated[
    str | None,
    ColumnOption(),
    "column of the reference ranking (higher first; its non-null rows); none: the "
    "relevance, its positive rows",
]


def rbo_frame(
    common: pl.LazyFrame,
    lengths: pl.LazyFrame,
    keys: list[str],
    *,
    p: float,
    estimate: Estimate,
) -> pl.LazyFrame:
    """RBO per key from the common items' ``m`` and the two list lengths.

    ``common``: ``keys + ["m"]``, one row per item in both lists, ``m`` the larger of
    its two ranks (1-based, within the lists); ``lengths``: ``keys + ["la", "lb"]``, one
    row per key (every key to report). Returns ``keys + ["value"]``.
    """
    log1mp = math.log1p(-p)
    depth = pl.col("d")
    # H(d) for d = 0 .. max(la + lb): the one table of depths.
    table = (
        lengths.select(
            pl.int_range(
                0, (pl.col("la") + pl.col("lb")).max().fill_null(0) + 1, dtype=pl.Int64
            ).alias("d")
        )
        .with_columns(
            h=pl.when(depth > 0)
            .then(pl.lit(p).pow(depth.cast(pl.Float64)) / depth.cast(pl.Float64))
            .otherwise(0.0)
            .cum_sum()
        )
        .cache()
    )
    short = pl.min_horizontal("la", "lb")
    long = pl.max_horizontal("la", "lb")
    sums = (
        common.join(lengths, on=keys, how="inner", nulls_equal=True)
        .with_columns(s=short, d=pl.col("m") - 1)
        .join(table, on="d", how="left")
        .group_by(keys)
        .agg(
            xl=pl.len().cast(pl.Float64),
            xs=(pl.col("m") <= pl.col("s")).sum().cast(pl.Float64),
            s1=pl.col("h").sum(),
        )
    )
    frame = (
        lengths.join(sums, on=keys, how="left", nulls_equal=True)
        .with_columns(pl.col("xl", "xs", "s1").fill_null(0.0), s=short, l=long)
        .with_columns(f=pl.col("s") + pl.col("l") - pl.col("xl").cast(pl.Int64))
    )
    for name, at in (("hs", pl.col("s")), ("hl", pl.col("l")), ("hf", pl.col("f") - 1)):
        frame = frame.with_columns(__d=at).join(
            table.rename({"d": "__d", "h": name}), on="__d", how="left"
        )
    xl, xs, s1 = pl.col("xl"), pl.col("xs"), pl.col("s1")
    s, ll, f = (pl.col(c).cast(pl.Float64) for c in ("s", "l", "f"))
    hs, hl, hf = pl.col("hs"), pl.col("hl"), pl.col("hf")
    scale = (1.0 - p) / p

    def g(n: pl.Expr) -> pl.Expr:
        return p * (1.0 - pl.lit(p).pow(n)) / (1.0 - p)

    minimum = scale * (-log1mp * xl - s1)
    share = pl.when(s > 0).then(xs / s).otherwise(0.0)  # X_s / s
    seen = xl * hl - s1  # sum_{d <= l} p**d X_d / d
    ext = scale * (seen + share * (g(ll) - g(s) - s * (hl - hs))) + (
        (xl - xs) / ll + share
    ) * pl.lit(p).pow(ll)
    middle = g(ll) - g(s) - s * (hl - hs)
    beyond = pl.when(f > ll + 1.0).then(2.0 * (g(f - 1.0) - g(ll)) - f * (hf - hl)).otherwise(0.0)
    tail = pl.lit(p).pow(pl.max_horizontal(f, ll + 1.0) - 1.0)
    maximum = scale * (seen + middle + beyond) + tail
    value = {"min": minimum, "max": maximum, "res": maximum - minimum, "ext": ext}[estimate]
    return frame.select(*keys, pl.when(ll > 0).then(value).alias("value"))


# --------------------------------------------------------------------------- the metric
@register(
    "rbo",
    defined="ranking",
    family="similarity",
    normalized=False,
    bounds=(0.0, 1.0),
    ties_require=("deterministic",),
    summary="Rank-biased overlap of the top k with the reference ranking.",
    definition=(
        "RBO (Webber, Moffat & Zobel, 2010) of the recommended list (top k) and the "
        "reference ranking (top k): the user's items of positive relevance by relevance "
        "descending, or the non-null rows of the column reference= by it descending; ties "
        "of the reference are broken by item id (descending under item_desc, else "
        "ascending). estimate=ext extrapolates (eq. 32); min / max bound the value for "
        "any continuation of the two lists; res = max - min. Null when both lists are "
        "empty. Deterministic tie policies only."
    ),
)
def _rbo(
    f: Features,
    k: int | None,
    *,
    p: Persistence = 0.9,
    estimate: EstimateOpt = "ext",
    reference: Reference = None,
) -> FramePlan:
    keys = f.keys
    position, ret = f.o, f.ret
    if reference is None:
        ref = f.rel
        in_ref = ref > 0
    else:
        ref = f.column(reference).cast(pl.Float64)
        in_ref = ref.is_not_null()
    item = id_order(f.cols.item)
    descending = f.tie.breaks[:1] == ("item_desc",)
    tie_key = item.rank("dense", descending=True) if descending else item.rank("dense")

    def build(rows: pl.LazyFrame) -> pl.LazyFrame:
        ranked = rows.select(
            *keys,
            a=pl.when(ret).then(position),
            b=pl.when(in_ref).then(
                pl.struct((-ref).alias("v"), tie_key.over(keys).alias("i"))
                .rank("ordinal")
                .over([*keys, in_ref])
                .cast(pl.Int64)
            ),
        )
        if k is not None:
            ranked = ranked.with_columns(
                a=pl.when(pl.col("a") <= k).then("a"), b=pl.when(pl.col("b") <= k).then("b")
            )
        ranked = ranked.cache()
        lengths = ranked.group_by(keys).agg(
            la=pl.col("a").count().cast(pl.Int64), lb=pl.col("b").count().cast(pl.Int64)
        )
        common = ranked.filter(pl.col("a").is_not_null() & pl.col("b").is_not_null()).select(
            *keys, m=pl.max_horizontal("a", "b")
        )
        return rbo_frame(common, lengths, keys, p=p, estimate=estimate)

    return FramePlan(build)
