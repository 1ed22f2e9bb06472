"""Categorical diversity: how many distinct item categories a top k covers.

* ``categorical_diversity@k`` (per user): the number of distinct categories among the
  items of the user's top k, divided by the number of items in it
  (``denominator=list``, the default: 1 when every item has its own category) or by
  k (``denominator=k``: RePlay's ``CategoricalDiversity``, a short list counts its
  empty slots as repeated categories; needs ``@k``).

**Categories** come from a column of the data or of the ``items=`` side table (one
row per item), named by ``category=`` (default ``"category"``): one category per
item, of any type that can be grouped on (integers, strings, ...). An item of a top
k without a category (missing from ``items=`` or null) raises a ``ValueError``
naming examples (RePlay would count null as one more category).

**Ties.** The number of distinct categories is not linear in the memberships, but
it is a sum over the categories of ``P(the category appears in the top k)``. Under
``ties="expected"`` that is 1 for a category with an item ranked above the tie
group straddling the cutoff; otherwise, when ``c`` of the ``n`` items of that group
have the category and ``s`` of its items make the top k,
``1 - C(n - c, s) / C(n, s)`` (the chance that the ``s`` items drawn uniformly
from the group miss all ``c``). The value is therefore the exact expectation over
the orderings of tied scores (the denominators do not depend on the order).

Null for a user without an item in the top k.

Examples
--------
>>> import polars as pl
>>> import polars_rankeval as prk
>>> recs = pl.DataFrame({
...     "user": [1, 1, 1, 2, 2],
...     "item": ["a", "b", "c", "a", "d"],
...     "score": [3.0, 2.0, 1.0, 2.0, 1.0],
...     "relevance": [1, None, None, None, 1],
... })
>>> items = pl.DataFrame({"item": ["a", "b", "c", "d"], "category": [1, 1, 2, 3]})
>>> metrics = ["categorical_diversity@3", "categorical_diversity(denominator=k)@3"]
>>> prk.evaluate(recs, metrics, items=items, per_user=True).sort("user")
shape: (2, 3)
┌──────┬─────────────────────────┬─────────────────────────────────┐
│ user ┆ categorical_diversity@3 ┆ categorical_diversity(denomina… │
│ ---  ┆ ---                     ┆ ---                             │
│ i64  ┆ f64                     ┆ f64                             │
╞══════╪═════════════════════════╪═════════════════════════════════╡
│ 1    ┆ 0.666667                ┆ 0.666667                        │
│ 2    ┆ 1.0                     ┆ 0.666667                        │
└──────┴─────────────────────────┴─────────────────────────────────┘

User 1's top 3 (a, b, c) holds categories {1, 2}: 2 / 3 either way. User 2's two
items (a, d) have two categories: 2 / 2 over the list, 2 / 3 over k = 3.
"""

from __future__ import annotations

from typing import Annotated, Literal

import polars as pl

from polars_rankeval.metrics._checks import examples, fail_if
from polars_rankeval.metrics._common import f64
from polars_rankeval.metrics.features import Features, comb_ratio
from polars_rankeval.metrics.params import ColumnOption
from polars_rankeval.metrics.registry import register
from polars_rankeval.metrics.spec import FramePlan

_P, _C = "__prk_cat_p", "__prk_cat_c"

Category = Annotated[str, ColumnOption(), "column of the item's category (from the data or items=)"]
CategoryDenominator = Annotated[
    Literal["list", "k"],
    "divide the number of distinct categories by the items of the top k, or by k "
    "(RePlay CategoricalDiversity; needs @k)",
]


@register(
    "categorical_diversity",
    family="categorical",
    bounds=(0.0, 1.0),
    normalized=False,
    summary="Distinct item categories in the top k per item of it (or per slot k).",
    definition=(
        "#distinct values of the category column (from the data or items=; one per "
        "item, a null or missing one is an error) among the items of the top k, / "
        "min(k, #recommended) (denominator=list) or / k (denominator=k: RePlay "
        "CategoricalDiversity, needs @k). Expected ties: exact expectation, each "
        "category counting P(it appears in the top k) = 1 - C(n - c, s) / C(n, s) for c "
        "of the n items of the tie group straddling the cutoff, s of which make it. Null "
        "for an empty list."
    ),
)
def _categorical_diversity(
    f: Features,
    k: int | None,
    *,
    category: Category = "category",
    denominator: CategoryDenominator = "list",
) -> FramePlan:
    if denominator == "k" and k is None:
        msg = (
            "categorical_diversity(denominator=k) needs a cutoff @k (the number of "
            "categories is divided by k)"
        )
        raise ValueError(msg)
    keys, item = f.keys, f.cols.item
    p = f.p_in(k)
    cat = f.column(category)
    label = f.label(item)
    # Rows of the tie group straddling the cutoff: 0 < p < 1 (only under expected ties).
    n = f64(f.n)
    s = f64(f.within(k)) if k is not None else n

    def build(rows: pl.LazyFrame) -> pl.LazyFrame:
        top = rows.filter(p > 0).select(
            *keys,
            item,
            p.alias(_P),
            cat.alias(_C),
            n.alias("__prk_cat_n"),
            s.alias("__prk_cat_s"),
        )
        bad = pl.col(_C).is_null()
        per_user = top.group_by(keys).agg(
            den=pl.col(_P).sum(),
            bad=f64(bad).sum(),
            bad_item=pl.col(item).filter(bad).min(),
        )

        def message(rows_bad: pl.DataFrame) -> str:
            return (
                f"metric 'categorical_diversity': {int(rows_bad.get_column('bad').sum())} "
                f"item(s) in the top k of {rows_bad.height} user(s) have no category "
                f"(column {category!r}, from the data or items=: missing or null), e.g. "
                f"{label} {examples(rows_bad.get_column('bad_item'))}"
            )

        checked = fail_if(per_user, "bad", message)
        partial = pl.col(_P) < 1.0
        per_cat = (
            top.filter(~bad)
            .group_by([*keys, _C])
            .agg(
                full=(~partial).any(),
                c=f64(partial.sum()),
                n=pl.col("__prk_cat_n").filter(partial).first(),
                s=pl.col("__prk_cat_s").filter(partial).first(),
            )
        )
        miss = comb_ratio([(pl.col("n") - pl.col("c"), pl.col("s"))], [(pl.col("n"), pl.col("s"))])
        present = pl.when(pl.col("full")).then(1.0).otherwise(1.0 - miss)
        distinct = per_cat.group_by(keys).agg(present.sum().alias("__prk_cat_d"))
        den = pl.col("den") if denominator == "list" else pl.lit(float(k or 0))
        return checked.join(distinct, on=keys, how="left", nulls_equal=True).select(
            *keys, (pl.col("__prk_cat_d").fill_null(0.0) / den).alias("value")
        )

    return FramePlan(build)
