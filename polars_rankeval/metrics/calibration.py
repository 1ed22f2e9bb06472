"""Calibration: the top k against the mix of categories of the user's history.

``miscalibration@k`` (per user; Steck, "Calibrated recommendations", RecSys 2018) is the
Kullback-Leibler divergence ``C_KL = KL(p || q̃) = sum_g p(g|u) ln(p(g|u) / q̃(g|u))``:

* ``p(g|u) = sum_{i in H_u} w_ui p(g|i) / sum_{i in H_u} w_ui``: the category distribution
  of the user's history (``history=`` of :func:`polars_rankeval.evaluate`, one row per
  interaction), each row weighted by ``w_ui`` (1, or the history column named by
  ``weight=``, e.g. a recency weight);
* ``q(g|u) = sum_{i in top k} w_r(i) p(g|i) / sum w_r(i)``: the distribution over the top
  k, ``w_r = 1`` (``position=none``, Steck's default) or ``1 / log2(rank + 1)``
  (``position=log``);
* ``q̃ = (1 - alpha) q + alpha p`` (``alpha`` default 0.01) keeps the divergence finite
  when the list misses a category of the history; ``alpha=0`` gives infinity then.

``p(g|i)`` comes from the ``categories=`` column of ``items=``: a list of labels (strings,
categoricals; Steck's genres: each of the item's ``|G_i|`` distinct labels weighs
``1 / |G_i|``) or a numeric vector (List, Array or Struct of non-negative weights, e.g.
the multi-hot vectors of ``intra_list_diversity``; normalised to sum 1). An item of a top
k without categories (missing from ``items=``, null, empty, or a vector of zeros or
with a negative or non-finite weight) is an error; history rows of such items are left
out of ``p`` (their count is not an error: histories often hold items no longer in the
catalog). 0 = perfectly calibrated. Null for a user with an empty list or without
categorised history.

**Ties.** ``KL`` is nonlinear in ``q``, so there is no closed-form expectation over the
orderings of tied scores: the metric supports the deterministic tie policies only
(``ties="item_desc"``, ``"item_asc"``, ...), not ``ties="expected"``.

Examples
--------
>>> import polars as pl
>>> import polars_rankeval as prk
>>> recs = pl.DataFrame({
...     "user": [1, 1], "item": ["a", "b"], "score": [2.0, 1.0], "relevance": [1, None]
... })
>>> items = pl.DataFrame({"item": ["a", "b", "c"], "categories": [["x"], ["x"], ["x", "y"]]})
>>> history = pl.DataFrame({"user": [1, 1], "item": ["a", "c"]})
>>> out = prk.evaluate(recs, ["miscalibration@2"], items=items, history=history, ties="item_asc")
>>> round(out.item(0, "miscalibration@2"), 6)
0.937408

History a (x) and c (x and y, half each): p = (3/4, 1/4). The list a, b holds x only,
q = (1, 0), so with alpha = 0.01 q̃ = (0.99 + 0.0075, 0.0025) and
C_KL = 3/4 ln(0.75 / 0.9975) + 1/4 ln(0.25 / 0.0025).
"""

from __future__ import annotations

from typing import Annotated, Literal

import polars as pl

from polars_rankeval.metrics._checks import examples, fail_if
from polars_rankeval.metrics._common import f64
from polars_rankeval.metrics.features import Features
from polars_rankeval.metrics.params import Interval
from polars_rankeval.metrics.registry import register
from polars_rankeval.metrics.spec import FramePlan

_G, _S = "__prk_cal_g", "__prk_cal_s"

Position = Annotated[
    Literal["none", "log"],
    "weight of a list item in q: 1 (Steck's default) or 1 / log2(rank + 1)",
]


def category_shares(
    table: pl.LazyFrame, item: str, categories: str, metric: str
) -> tuple[pl.LazyFrame, pl.LazyFrame]:
    """``(item, category, share)`` rows of the items with categories, and the bad items.

    Labels: each distinct label of an item weighs ``1 / #labels``. Numeric vectors: the
    component index is the category, the share the weight over the vector's sum.
    """
    schema = table.collect_schema()
    if categories not in schema:
        msg = f"metric {metric!r}: column {categories!r} not found in the items= table"
        raise ValueError(msg)
    dtype = schema[categories]
    col = pl.col(categories)
    if isinstance(dtype, pl.Struct):
        col = pl.concat_list([f64(col.struct.field(fld.name)) for fld in dtype.fields])
        numeric = all(fld.dtype.is_numeric() for fld in dtype.fields)
        dtype = pl.List(pl.Float64)
    elif isinstance(dtype, pl.Array):
        col = col.arr.to_list()
        numeric = dtype.inner is not None and dtype.inner.is_numeric()
        dtype = pl.List(dtype.inner)  # type: ignore[arg-type]
    elif isinstance(dtype, pl.List):
        numeric = dtype.inner is not None and dtype.inner.is_numeric()
    else:
        msg = (
            f"metric {metric!r}: column {categories!r} must hold a list of category labels "
            f"or a numeric vector of category weights (List, Array or Struct), got {dtype}"
        )
        raise TypeError(msg)
    base = table.select(item, col.alias(_G))
    if numeric:
        vec = pl.col(_G).cast(pl.List(pl.Float64))
        total = vec.list.sum()
        bad = (
            pl.col(_G).is_null()
            | (vec.list.len() == 0)
            | (vec.list.drop_nulls().list.len() < vec.list.len())
            | (vec.list.eval((pl.element() < 0) | ~pl.element().is_finite()).list.any())
            | ~(total > 0)
        )
        flagged = base.with_columns(bad.fill_null(True).alias("__prk_bad"))
        good = flagged.filter(~pl.col("__prk_bad")).select(
            item,
            (vec / total).alias(_S),
            pl.int_ranges(0, vec.list.len()).cast(pl.List(pl.Utf8)).alias(_G),
        )
        shares = good.explode(_S, _G).filter(pl.col(_S) > 0)
    else:
        labels = pl.col(_G).list.drop_nulls().list.unique()
        bad = pl.col(_G).is_null() | (labels.list.len() == 0)
        flagged = base.with_columns(bad.fill_null(True).alias("__prk_bad"))
        good = flagged.filter(~pl.col("__prk_bad")).select(
            item,
            labels.cast(pl.List(pl.Utf8)).alias(_G),
            (1.0 / f64(labels.list.len())).alias(_S),
        )
        shares = good.explode(_G)
    return shares, flagged.filter(pl.col("__prk_bad")).select(item)


@register(
    "miscalibration",
    family="calibration",
    normalized=False,
    higher_is_better=False,
    ties_require=("deterministic",),
    summary="KL divergence of the top k's category mix from the user's history (Steck 2018).",
    definition=(
        "sum_g p(g|u) ln(p(g|u) / q̃(g|u)), p = category distribution of the user's "
        "history= rows (each item's categories= labels weighing 1/|G_i|, or its normalised "
        "weight vector; rows weighted by the history column weight=, default 1), q = that "
        "of the top k (position=log weights rank r by 1/log2(r + 1)), q̃ = (1 - alpha) q + "
        "alpha p (alpha default 0.01). A top-k item without categories is an error; "
        "history items without are left out of p. Deterministic tie policies only. Null "
        "for an empty list or a user without categorised history."
    ),
)
def _miscalibration(
    f: Features,
    k: int | None,
    *,
    categories: Annotated[
        str, "column of items=: a list of category labels or a numeric weight vector"
    ] = "categories",
    alpha: Annotated[
        float, Interval(0, 1), "smoothing: q̃ = (1 - alpha) q + alpha p (Steck: 0.01)"
    ] = 0.01,
    position: Position = "none",
    weight: Annotated[
        str | None, "column of history= weighting each interaction (e.g. recency)"
    ] = None,
) -> FramePlan:
    metric = "miscalibration"
    keys, item = f.keys, f.cols.item
    user = keys[-1]
    history = f.history(metric)
    table = f.item_table(metric)
    if weight is not None:
        f.history_column(metric, weight)
    p_in = f.p_in(k)
    w_pos = p_in if position == "none" else p_in / (f64(f.o) + 1.0).log(2)
    a = float(alpha)
    label = f.label(item)

    def build(rows: pl.LazyFrame) -> pl.LazyFrame:
        shares, bad_items = category_shares(table, item, categories, metric)
        # p(g|u) over the history rows of categorised items.
        w = f64(pl.col(weight)) if weight is not None else pl.lit(1.0)
        hist = history.select(user, item, w.alias("__prk_w"))
        users = rows.select(user).unique()
        hist = hist.join(users, on=user, how="semi", nulls_equal=True)
        hist_sh = hist.join(shares, on=item, how="inner")
        p_num = hist_sh.group_by(user, _G).agg((pl.col("__prk_w") * pl.col(_S)).sum().alias("pn"))
        p_den = (
            hist.join(shares.select(item).unique(), on=item, how="semi")
            .group_by(user)
            .agg(pl.col("__prk_w").sum().alias("pd"))
        )
        p = p_num.join(p_den, on=user).select(user, _G, (pl.col("pn") / pl.col("pd")).alias("p"))
        # q(g|u) over the top k; items without categories are reported.
        top = rows.filter(p_in > 0).select(*keys, item, w_pos.alias("__prk_wr"))
        flagged = top.join(
            bad_items.with_columns(pl.lit(True).alias("__prk_bad")), on=item, how="left"
        ).join(
            shares.select(item).unique().with_columns(pl.lit(True).alias("__prk_ok")),
            on=item,
            how="left",
        )
        missing = pl.col("__prk_bad").fill_null(False) | pl.col("__prk_ok").is_null()
        per_user = flagged.group_by(keys).agg(
            __prk_nbad=f64(missing).sum(),
            __prk_item=pl.col(item).filter(missing).min(),
            __prk_den=pl.col("__prk_wr").sum(),
        )

        def message(bad: pl.DataFrame) -> str:
            return (
                f"metric {metric!r}: {int(bad.get_column('__prk_nbad').sum())} item(s) in the "
                f"top k of {bad.height} user(s) have no categories in column {categories!r} "
                "of items= (missing, null, empty, or a weight vector with a negative, "
                f"non-finite or no positive weight), e.g. {label} "
                f"{examples(bad.get_column('__prk_item'))}"
            )

        checked = fail_if(per_user, "__prk_nbad", message).select(*keys, "__prk_den")
        q = (
            top.join(shares, on=item, how="inner")
            .group_by([*keys, _G])
            .agg((pl.col("__prk_wr") * pl.col(_S)).sum().alias("qn"))
            .join(checked, on=keys, how="inner", nulls_equal=True)
            .select(*keys, _G, (pl.col("qn") / pl.col("__prk_den")).alias("q"))
        )
        pk = checked.select(keys).join(p, on=user, how="inner", nulls_equal=True)
        both = pk.join(q, on=[*keys, _G], how="left", nulls_equal=True)
        q_t = (1.0 - a) * pl.col("q").fill_null(0.0) + a * pl.col("p")
        term = (
            pl.when(q_t > 0).then(pl.col("p") * (pl.col("p") / q_t).log()).otherwise(float("inf"))
        )
        return both.group_by(keys).agg(term.sum().alias("value"))

    return FramePlan(build)
