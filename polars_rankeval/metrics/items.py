"""Item-side metrics: the same evaluation viewed per item (family ``item``).

"Are the items getting recommended frequently enough to have a chance to find their
niche?" These metrics have one value per (by, item), for every item with a row of an
evaluated user (recommended or only judged); evaluate them with
``evaluate(..., per_item=True)``, which returns one row per (by, item) instead of the
summary. Items never recommended get exposure 0, so they are easy to find.

* ``item_exposure@k``: the number of users who get the item in their top k.
* ``item_hits@k``: the number of users who get it in their top k and for whom it is
  relevant (relevance >= ``rel``).
* ``item_recall@k``: ``item_hits@k`` / the number of users for whom it is relevant,
  recommended or not; null when it is relevant to no one.
* ``item_precision@k``: ``item_hits@k`` / ``item_exposure@k``, the share of its
  top-k appearances that are hits; null when it is never recommended.

Under ``ties="expected"`` exposure, hits and recall are exact expectations over the
orderings of tied scores; precision, a ratio of two of them, is ``E[hits] /
E[exposure]``. Catalog items without any row are not listed (join the result with the
catalog and fill 0).

Examples
--------
>>> import polars as pl
>>> import polars_rankeval as prk
>>> df = pl.DataFrame({
...     "user": [1, 1, 1, 2, 2, 3, 3],
...     "item": ["a", "b", "c", "a", "c", "a", "b"],
...     "score": [3.0, 2.0, None, 2.0, 1.0, 1.0, 2.0],
...     "relevance": [1, None, 1, None, 1, 1, None],
... })
>>> metrics = ["item_exposure@1", "item_hits@1", "item_recall@1", "item_precision@1"]
>>> prk.evaluate(df, metrics, per_item=True)
shape: (3, 5)
┌──────┬─────────────────┬─────────────┬───────────────┬──────────────────┐
│ item ┆ item_exposure@1 ┆ item_hits@1 ┆ item_recall@1 ┆ item_precision@1 │
│ ---  ┆ ---             ┆ ---         ┆ ---           ┆ ---              │
│ str  ┆ f64             ┆ f64         ┆ f64           ┆ f64              │
╞══════╪═════════════════╪═════════════╪═══════════════╪══════════════════╡
│ a    ┆ 2.0             ┆ 1.0         ┆ 0.5           ┆ 0.5              │
│ b    ┆ 1.0             ┆ 0.0         ┆ null          ┆ 0.0              │
│ c    ┆ 0.0             ┆ 0.0         ┆ 0.0           ┆ null             │
└──────┴─────────────────┴─────────────┴───────────────┴──────────────────┘

Top 1: user 1 gets a (relevant), user 2 gets a (not judged), user 3 gets b. Item a
is relevant to users 1 and 3: recall 1 / 2. Item c, relevant to users 1 and 2, is
never at the top.
"""

from __future__ import annotations

import polars as pl

from polars_rankeval.metrics._common import Rel, defined_if, partial_sums
from polars_rankeval.metrics.features import Features
from polars_rankeval.metrics.registry import register
from polars_rankeval.metrics.spec import GlobalPlan

FAMILY = "item"


def _plan(f: Features, parts: dict[str, pl.Expr], value: pl.Expr) -> GlobalPlan:
    """Sums per (by, item) over every row of the evaluated users, then ``value``."""
    item = f.cols.item
    group = [*f.by, item]
    aggs = [expr.sum().alias(name) for name, expr in parts.items()]

    def partial(rows: pl.LazyFrame) -> pl.LazyFrame:
        return partial_sums(rows, group, aggs)

    def finalize(merged: pl.LazyFrame, by_cols: list[str]) -> pl.LazyFrame:
        return merged.select(*by_cols, item, value.alias("value")).sort([*by_cols, item])

    return GlobalPlan(partial, (item,), dict.fromkeys(parts, "sum"), finalize)


@register(
    "item_exposure",
    family=FAMILY,
    scope="item",
    normalized=False,
    summary="Per item: the number of users who get it in their top k.",
    definition=(
        "sum over the evaluated users of [item in the top k] (expected ties: of the "
        "probability); 0 for an item never recommended. Evaluate with per_item=True."
    ),
)
def _item_exposure(f: Features, k: int | None) -> GlobalPlan:
    return _plan(f, {"exposure": f.p_in(k)}, pl.col("exposure"))


@register(
    "item_hits",
    family=FAMILY,
    scope="item",
    normalized=False,
    summary="Per item: the number of users who get it in their top k and find it relevant.",
    definition=(
        "sum over the evaluated users of [item in the top k and relevance >= rel] "
        "(expected ties: of the probability). Evaluate with per_item=True."
    ),
)
def _item_hits(f: Features, k: int | None, *, rel: Rel = 1.0) -> GlobalPlan:
    return _plan(f, {"hits": f.p_in(k) * f.is_rel(rel)}, pl.col("hits"))


@register(
    "item_recall",
    family=FAMILY,
    scope="item",
    normalized=False,
    summary="Per item: its hits over the users for whom it is relevant.",
    definition=(
        "item_hits@k / #evaluated users with relevance >= rel for the item, recommended "
        "or not; null when it is relevant to no one. Evaluate with per_item=True."
    ),
)
def _item_recall(f: Features, k: int | None, *, rel: Rel = 1.0) -> GlobalPlan:
    is_rel = f.is_rel(rel)
    hits, relevant = pl.col("hits"), pl.col("relevant")
    value = defined_if(relevant > 0, hits / relevant)
    return _plan(f, {"hits": f.p_in(k) * is_rel, "relevant": is_rel}, value)


@register(
    "item_precision",
    family=FAMILY,
    scope="item",
    normalized=False,
    summary="Per item: the share of its top-k appearances that are hits.",
    definition=(
        "item_hits@k / item_exposure@k; null when it is never in a top k. Expected ties: "
        "E[hits] / E[exposure]. Evaluate with per_item=True."
    ),
)
def _item_precision(f: Features, k: int | None, *, rel: Rel = 1.0) -> GlobalPlan:
    p = f.p_in(k)
    hits, exposure = pl.col("hits"), pl.col("exposure")
    value = defined_if(exposure > 0, hits / exposure)
    return _plan(f, {"hits": p * f.is_rel(rel), "exposure": p}, value)
