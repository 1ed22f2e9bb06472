"""Catalog coverage, concentration of item exposure, popularity bias and novelty.

**Exposure.** The exposure of item i in a ``by`` group is the number of top-k slots
it gets over the evaluated users, ``sum_u [i in top k of u]``, or with
``discount=log`` the rank-discounted ``sum_u 1 / log2(1 + rank_u(i))`` over the top
k. Under ``ties="expected"`` it is the expected exposure over the orderings of tied
scores (linear, so exact). Items of the catalog that no one is recommended have
exposure 0 and count in the catalog size ``N``: ``n_items=`` of
:func:`polars_rankeval.evaluate` (an int or a frame of catalog items; default the
distinct items of the whole input, a lower bound of the real catalog).

* ``coverage@k`` (global): distinct items recommended in a top k / N. Expected ties:
  the exact expectation, ``sum_i (1 - prod_u (1 - P(i in top k of u))) / N``.
* ``exposure_entropy@k`` (global; alias ``distributional_coverage``): the Shannon
  entropy in bits of the exposure shares ``e_i / sum e``; with ``normalize=true``
  divided by ``log2(N)`` (1 = uniform exposure over the catalog).
* ``gini@k`` (global): the Gini index of the exposures of the N catalog items,
  ``sum_i (2i - N - 1) e_(i) / (N sum e)`` with ``e_(1) <= ... <= e_(N)`` (0 = equal
  exposure, (N - 1) / N = all on one item).

Entropy and Gini are nonlinear in the exposures: under ``ties="expected"`` they are
defined on the *expected* exposure (the entropy or Gini of each item's exposure
averaged over tied orderings), not as the expectation of the entropy or Gini. They
are null when no item is exposed.

**Popularity** comes from a column (default ``"popularity"``) of the data or of the
``items=`` side table, named by ``popularity=``. :func:`polars_rankeval.item_popularity`
builds it from an interactions (training) frame: the share of its users who
interacted with the item (or the share of its interactions).

* ``popularity_bias@k`` (per user; alias ``arp``): the mean popularity of the items
  of the user's top k (average recommendation popularity).
* ``novelty@k`` (per user): the mean self-information ``-log2 p(i)`` of the items of
  the user's top k, ``p(i)`` the popularity, which must lie in (0, 1].

Both are null for a user with an empty list. Every item of a top k needs a
popularity: an item without one (missing from ``items=`` or null), a negative or
non-finite one, and for novelty one outside (0, 1] (an item no one interacted with
has infinite self-information) raise a ``ValueError`` naming examples. Under
``ties="expected"`` both are exact expectations (the list size does not depend on
the order).

**Users.** Like every global metric these aggregate over the rows of the evaluated
users: ``users="truth"`` (the default) keeps users with at least one judged row; pass
``users="recs"`` to include every user with a recommendation.

Examples
--------
>>> import polars as pl
>>> import polars_rankeval as prk
>>> recs = pl.DataFrame({
...     "user": [1, 1, 2, 2, 3, 3],
...     "item": [10, 11, 10, 12, 10, 11],
...     "score": [2.0, 1.0, 2.0, 1.0, 2.0, 1.0],
...     "relevance": [1, None, None, 1, None, None],
... })
>>> logs = pl.DataFrame({"user": [7, 7, 8, 9], "item": [10, 11, 10, 12]})
>>> popularity = prk.item_popularity(logs)  # share of the 3 users: 2/3, 1/3, 1/3
>>> metrics = ["coverage@2", "gini@2", "novelty@2"]
>>> prk.evaluate(recs, metrics, users="recs", n_items=5, items=popularity)
shape: (1, 6)
┌────────────┬──────────┬───────────┬────────────────────┬─────────┬───────────┐
│ coverage@2 ┆ gini@2   ┆ novelty@2 ┆ n_users(novelty@2) ┆ n_users ┆ n_skipped │
│ ---        ┆ ---      ┆ ---       ┆ ---                ┆ ---     ┆ ---       │
│ f64        ┆ f64      ┆ f64       ┆ i64                ┆ i64     ┆ i64       │
╞════════════╪══════════╪═══════════╪════════════════════╪═════════╪═══════════╡
│ 0.6        ┆ 0.533333 ┆ 1.084963  ┆ 3                  ┆ 3       ┆ 0         │
└────────────┴──────────┴───────────┴────────────────────┴─────────┴───────────┘

Items 10, 11, 12 of a catalog of 5 are recommended: coverage 3/5. Exposures sorted
0, 0, 1, 2, 3 (sum 6), weights 2i - N - 1 = -4, -2, 0, 2, 4: Gini (0 * 1 + 2 * 2 +
4 * 3) / (5 * 6) = 16/30. Novelty: each list holds item 10 (-log2(2/3)) and one of
11, 12 (-log2(1/3)): (log2(3/2) + log2(3)) / 2.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Literal

import polars as pl

from polars_rankeval._features import Features
from polars_rankeval.metrics._checks import examples, fail_if
from polars_rankeval.metrics._common import defined_if, f64, partial_sums
from polars_rankeval.registry import FramePlan, GlobalPlan, register

Discount = Annotated[Literal["none", "log"], "exposure of rank p: 1, or 1 / log2(p + 1)"]
Normalize = Annotated[bool, "divide by log(n_items), the entropy of a uniform exposure"]
Popularity = Annotated[str, "column of the item popularity (from the data or items=)"]


def _exposure(f: Features, k: int | None, discount: Discount = "none") -> pl.Expr:
    """A row's (expected) exposure in the top k: membership, or 1 / log2(1 + rank)."""
    if discount == "none":
        return f.p_in(k)
    weight = f.gmean_pos(lambda pos: 1.0 / (f64(pos) + 1.0).log(2), k, "exposure_log")
    return f64(f.ret) * weight


def _per_item(f: Features, parts: dict[str, pl.Expr]) -> Callable[[pl.LazyFrame], pl.LazyFrame]:
    """Partial sums per (by, item) over every row, so that every item is listed."""
    group = [*f.by, f.cols.item]
    aggs = [expr.alias(name) for name, expr in parts.items()]

    def partial(rows: pl.LazyFrame) -> pl.LazyFrame:
        return partial_sums(rows, group, aggs)

    return partial


def _per_by(merged: pl.LazyFrame, by_cols: list[str], value: pl.Expr) -> pl.LazyFrame:
    if by_cols:
        return merged.group_by(by_cols).agg(value.alias("value")).sort(by_cols)
    return merged.select(value.alias("value"))


# --------------------------------------------------------------------------- coverage
@register(
    "coverage",
    family="exposure",
    scope="global",
    normalized=False,
    needs=("n_items",),
    summary="Share of the catalog recommended in at least one top k.",
    definition=(
        "#distinct items in the top k of at least one user / N, N the catalog size "
        "(n_items=; default the distinct items of the input). Expected ties: the exact "
        "expectation sum_i (1 - prod_u (1 - P(i in top k of u))) / N."
    ),
)
def _coverage(f: Features, k: int | None) -> GlobalPlan:
    p = f.p_in(k)
    n_items = f.n_items
    sure = f64(p >= 1.0).sum()
    # log P(no user gets the item), from the rows that may or may not get it.
    log_miss = pl.when((p > 0) & (p < 1)).then((1.0 - p).log()).otherwise(0.0).sum()
    partial = _per_item(f, {"sure": sure, "log_miss": log_miss})

    def finalize(merged: pl.LazyFrame, by_cols: list[str]) -> pl.LazyFrame:
        covered = pl.when(pl.col("sure") > 0).then(1.0).otherwise(1.0 - pl.col("log_miss").exp())
        # An empty input has an empty catalog (N = 0): undefined, not 0 / 0.
        return _per_by(merged, by_cols, defined_if(n_items > 0, covered.sum() / n_items))

    return GlobalPlan(partial, (f.cols.item,), {"sure": "sum", "log_miss": "sum"}, finalize)


# --------------------------------------------------------------------------- concentration
@register(
    "exposure_entropy",
    family="exposure",
    scope="global",
    normalized=False,
    aliases=("distributional_coverage",),
    needs=("n_items",),
    summary="Shannon entropy (bits) of the distribution of exposure over the items.",
    definition=(
        "-sum_i q_i log2 q_i, q_i = e_i / sum e the item's share of the top-k slots "
        "(discount=log: of the 1 / log2(1 + rank) weights); normalize=true divides by "
        "log2(N), N the catalog size (null when N = 1). Expected ties: the entropy of the "
        "expected exposure. Null when no item is exposed."
    ),
)
def _exposure_entropy(
    f: Features, k: int | None, *, discount: Discount = "none", normalize: Normalize = False
) -> GlobalPlan:
    n_items = f.n_items
    partial = _per_item(f, {"e": _exposure(f, k, discount).sum()})

    def finalize(merged: pl.LazyFrame, by_cols: list[str]) -> pl.LazyFrame:
        e = pl.col("e")
        total = e.sum()
        q = e / total
        terms = pl.when(e > 0).then(-q * q.log(2)).otherwise(0.0)
        value = defined_if(total > 0, terms.sum())
        if normalize:
            value = defined_if(n_items > 1, value / n_items.log(2))
        return _per_by(merged, by_cols, value)

    return GlobalPlan(partial, (f.cols.item,), {"e": "sum"}, finalize)


@register(
    "gini",
    higher_is_better=False,
    bounds=(0.0, 1.0),
    family="exposure",
    scope="global",
    normalized=False,
    needs=("n_items",),
    summary="Gini index of the exposure of the catalog's items (0 = equal exposure).",
    definition=(
        "sum_i (2i - N - 1) e_(i) / (N sum e) over the N catalog items sorted by exposure "
        "e ascending (items never in a top k have e = 0), e = #top-k slots (discount=log: "
        "sum of 1 / log2(1 + rank)). Expected ties: the Gini of the expected exposure. "
        "Null when no item is exposed."
    ),
)
def _gini(f: Features, k: int | None, *, discount: Discount = "none") -> GlobalPlan:
    n_items = f.n_items
    partial = _per_item(f, {"e": _exposure(f, k, discount).sum()})

    def finalize(merged: pl.LazyFrame, by_cols: list[str]) -> pl.LazyFrame:
        exposed = merged.filter(pl.col("e") > 0)
        e = pl.col("e").sort()
        # The positive exposures are the top ranks Z + 1 .. N, Z = N - #exposed items.
        rank = (n_items - pl.len()) + pl.int_range(1, pl.len() + 1, dtype=pl.Int64)
        total = e.sum()
        value = ((2.0 * rank - n_items - 1.0) * e).sum() / (n_items * total)
        return _per_by(exposed, by_cols, defined_if(total > 0, value))

    return GlobalPlan(partial, (f.cols.item,), {"e": "sum"}, finalize)


# --------------------------------------------------------------------------- popularity
def _mean_over_top(
    f: Features,
    k: int | None,
    metric: str,
    column: str,
    transform: Callable[[pl.Expr], pl.Expr],
    valid: Callable[[pl.Expr], pl.Expr],
    rule: str,
) -> FramePlan:
    """Per user: the mean of ``transform(column)`` over the top k, every value checked."""
    keys, item = f.keys, f.cols.item
    p = f.p_in(k)
    value = f64(f.column(column))
    bad = value.is_null() | ~value.is_finite() | ~valid(value)

    def build(rows: pl.LazyFrame) -> pl.LazyFrame:
        term = pl.when(bad).then(0.0).otherwise(transform(value))
        per_user = (
            rows.filter(p > 0)
            .group_by(keys)
            .agg(
                num=(p * term).sum(),
                den=p.sum(),
                bad=f64(bad).sum(),
                bad_item=pl.col(item).filter(bad).min(),
            )
        )

        def message(rows_bad: pl.DataFrame) -> str:
            return (
                f"metric {metric!r}: {int(rows_bad.get_column('bad').sum())} item(s) in the "
                f"top k of {rows_bad.height} user(s) have {rule} (column {column!r}, from the "
                f"data or items=), e.g. {f.label(item)} "
                f"{examples(rows_bad.get_column('bad_item'))}"
            )

        checked = fail_if(per_user, "bad", message)
        return checked.select(*keys, (pl.col("num") / pl.col("den")).alias("value"))

    return FramePlan(build)


@register(
    "popularity_bias",
    higher_is_better=False,
    family="exposure",
    normalized=False,
    aliases=("arp",),
    summary="Mean popularity of the items of the top k (average recommendation popularity).",
    definition=(
        "mean over the top k of the popularity column (from the data or items=, e.g. "
        "item_popularity(): the share of the training users who interacted with the item); "
        "an item without a finite, non-negative popularity is an error. Null for an "
        "empty list."
    ),
)
def _popularity_bias(
    f: Features, k: int | None, *, popularity: Popularity = "popularity"
) -> FramePlan:
    return _mean_over_top(
        f,
        k,
        "popularity_bias",
        popularity,
        lambda x: x,
        lambda x: x >= 0,
        "no finite, non-negative popularity",
    )


@register(
    "novelty",
    family="exposure",
    normalized=False,
    summary="Mean self-information -log2 p(i) of the items of the top k.",
    definition=(
        "mean over the top k of -log2 p(i), p(i) the popularity column (from the data or "
        "items=, e.g. item_popularity(): the share of the training users who interacted "
        "with the item), which must lie in (0, 1] (else an error: an item no one "
        "interacted with has infinite self-information). Null for an empty list."
    ),
)
def _novelty(f: Features, k: int | None, *, popularity: Popularity = "popularity") -> FramePlan:
    return _mean_over_top(
        f,
        k,
        "novelty",
        popularity,
        lambda x: -x.log(2),
        lambda x: (x > 0) & (x <= 1),
        "no popularity in (0, 1]",
    )
