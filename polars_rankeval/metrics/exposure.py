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
  the exact expectation, ``sum_i (1 - prod_u (1 - P(i in top k of u))) / N``. With
  ``catalog=<boolean column>`` a recommended item outside the catalog is an error
  (``outside_catalog=error``, the default), left out (``ignore``: RePlay) or counted
  (``count``: RecTools, MS Recommenders, RecBole; the value can then exceed 1, and
  ``n_items=`` may be smaller than the data's items when no other metric reads it).
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
interacted with the item (or the share of its interactions). Without such a column,
``history=`` alone is enough (``source=auto``, the default): the popularity is then
the share of the distinct users of ``history=`` who interacted with the item
(``source=history_users``), the same number as ``item_popularity(history)``. An item
without history has popularity 0 for ``popularity_bias``; in a top k of ``novelty``
(infinite self-information) it is an error raised at the call, before the
evaluation, unless ``unknown=one`` or ``unknown=zero`` says what it adds.

* ``popularity_bias@k`` (per user; alias ``arp``): the mean popularity of the items
  of the user's top k (average recommendation popularity).
* ``novelty@k`` (per user): the mean self-information ``-log2 p(i)`` of the items of
  the user's top k, ``p(i)`` the popularity, which must lie in (0, 1]
  (``log_base=`` another base; ``denominator=k`` divides the sum by k: RePlay's
  Surprisal is ``novelty(denominator=k, log_base=<#train users>)`` with
  ``item_popularity(..., unseen="one")``). ``source=history_users`` or
  ``source=history_interactions`` counts ``p(i)`` in ``history=`` instead (the share
  of its users holding the item, or of its rows), ``unknown=`` says what an item
  without a popularity adds (``error``, ``one``: as one user or row, ``zero``: 0) and
  ``normalize=true`` divides by ``log #history users`` (or rows). So RePlay's
  Surprisal is also ``novelty(source=history_users, unknown=one, normalize=true,
  denominator=k)`` with ``history=train``, and MS Recommenders' novelty
  ``novelty(source=history_interactions, unknown=zero, aggregate=pooled)`` (the mean
  over every recommended row, items outside the history adding 0).
* ``unseen_share@k`` (per user): the share of the top k whose ``seen`` column (the
  user interacted with the item in training) is false (RePlay's Novelty).

Both are null for a user with an empty list (novelty with ``denominator=k``: 0,
the empty sum over k padded slots). Every item of a top k needs a
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

from polars_rankeval.metrics._checks import examples, fail_if
from polars_rankeval.metrics._common import defined_if, f64, partial_sums
from polars_rankeval.metrics.features import Features
from polars_rankeval.metrics.params import ColumnOption, Interval
from polars_rankeval.metrics.registry import register
from polars_rankeval.metrics.spec import FramePlan, GlobalPlan, HistoryItems

Discount = Annotated[Literal["none", "log"], "exposure of rank p: 1, or 1 / log2(p + 1)"]
Normalize = Annotated[bool, "divide by log(n_items), the entropy of a uniform exposure"]
EntropyUnit = Annotated[
    Literal["bits", "nats"], "logarithm base 2 (bits) or e (nats: RecBole shannonentropy)"
]
PerExposedItem = Annotated[
    bool,
    "divide by the number of exposed items (RecBole shannonentropy: -mean over the "
    "recommended items of q ln q)",
]
Popularity = Annotated[str, "column of the item popularity (from the data or items=)"]
_POPULARITY_HINT = (
    "pass history= (the training interactions: the popularity is the share of their "
    "users who interacted with the item) or items=item_popularity(train)"
)
ArpPopularity = Annotated[
    Popularity,
    ColumnOption(
        when=(("source", ("auto", "column")),),
        fallback=(("source", ("auto",)),),
        hint=_POPULARITY_HINT,
    ),
]
NoveltyPopularity = Annotated[
    Popularity,
    ColumnOption(
        # normalize=true and unknown=one read history= (an error with source=column)
        when=(
            ("source", ("auto", "column")),
            ("normalize", (False,)),
            ("unknown", ("error", "zero")),
        ),
        fallback=(("source", ("auto",)),),
        hint=_POPULARITY_HINT,
    ),
]
NoveltyDenominator = Annotated[
    Literal["list", "k"],
    "divide the sum of self-information over the top k by the number of items in it "
    "(RecTools MeanInvUserFreq) or by k, a short list padded with 0 (RePlay Surprisal; "
    "needs @k)",
]
NoveltySource = Annotated[
    Literal["auto", "column", "history_users", "history_interactions"],
    "where p(i) comes from: auto (the popularity column when the data or items= has "
    "it, else history_users when history= is given), the popularity column, or "
    "history=: the share of its users who hold the item (RePlay Surprisal) or the "
    "item's share of its rows (MS Recommenders novelty)",
]
PopularitySource = Annotated[
    Literal["auto", "column", "history_users", "history_interactions"],
    "where the popularity comes from: auto (the popularity column when the data or "
    "items= has it, else history_users when history= is given), the popularity "
    "column, or history=: the share of its users who hold the item, or the item's share "
    "of its rows (an item without history: 0)",
]
NoveltyUnknown = Annotated[
    Literal["error", "one", "zero"],
    "an item without a popularity (not in history=, or a null or zero popularity): an "
    "error, as if one user (or row) of history= had it (RePlay Surprisal), or 0 "
    "self-information, still counted in the denominator (MS Recommenders)",
]
NoveltyNormalize = Annotated[
    bool,
    "divide by the largest self-information log(#history users or rows), mapping to "
    "[0, 1] (RePlay Surprisal); needs a history source",
]
LogBase = Annotated[
    float,
    Interval(1, None, closed="neither"),
    "base b of the self-information -log_b p(i) (RePlay Surprisal: b = #training users, "
    "which scales it to [0, 1])",
]


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
CatalogColumn = Annotated[
    str | None,
    ColumnOption(),
    "boolean column (from the data or items=) marking the catalog's items; an item "
    "without a true value (false, null, or missing from items=) is outside the catalog",
]
OutsideCatalog = Annotated[
    Literal["error", "ignore", "count"],
    "a recommended item outside the catalog= column: an error, left out of the "
    "numerator (RePlay Coverage), or counted (RecTools, MS Recommenders, RecBole: the "
    "value can exceed 1)",
]


@register(
    "coverage",
    # coverage(outside_catalog=ignore|count) is defined with recommended items outside
    # the catalog (RePlay, RecTools).
    outside_catalog=lambda options: options.get("outside_catalog", "error") != "error",
    absolute_positions=True,
    repeated_ranks=True,
    family="exposure",
    scope="global",
    normalized=False,
    needs=("n_items",),
    summary="Share of the catalog recommended in at least one top k.",
    definition=(
        "#distinct items in the top k of at least one user / N, N the catalog size "
        "(n_items=; default the distinct items of the input). With catalog=<boolean "
        "column>, a recommended item outside the catalog is an error "
        "(outside_catalog=error), left out of the numerator (ignore: RePlay Coverage) or "
        "counted (count: RecTools CatalogCoverage, MS Recommenders catalog_coverage, "
        "RecBole itemcoverage; can exceed 1); without it every recommended item counts. "
        "Expected ties: the exact expectation sum_i (1 - prod_u (1 - P(i in top k of "
        "u))) / N. normalize=false gives the number of items itself, not divided by N "
        "(RecTools CatalogCoverage(normalize=False))."
    ),
)
def _coverage(
    f: Features,
    k: int | None,
    *,
    catalog: CatalogColumn = None,
    outside_catalog: OutsideCatalog = "error",
    normalize: Annotated[
        bool,
        "divide by the catalog size N (true) or give the number of covered items "
        "(false: RecTools CatalogCoverage(normalize=False))",
    ] = True,
) -> GlobalPlan:
    if catalog is None and outside_catalog == "ignore":
        msg = (
            "coverage(outside_catalog=ignore) needs catalog=<column>: a boolean column "
            "(from the data or items=) marking the catalog's items"
        )
        raise ValueError(msg)
    p = f.p_in(k)
    item = f.cols.item
    n_items = f.n_items if normalize else pl.lit(1.0)
    parts: dict[str, pl.Expr] = {}
    if catalog is not None:
        inside = f.column(catalog).cast(pl.Boolean).fill_null(False)
        parts["outside"] = f64((p > 0) & ~inside).sum()
        if outside_catalog == "ignore":
            p = pl.when(inside).then(p).otherwise(0.0)
    parts["sure"] = f64(p >= 1.0).sum()
    # log P(no user gets the item), from the rows that may or may not get it.
    parts["log_miss"] = pl.when((p > 0) & (p < 1)).then((1.0 - p).log()).otherwise(0.0).sum()
    partial = _per_item(f, parts)
    check = catalog is not None and outside_catalog == "error"
    label = f.label(item)

    def message(bad: pl.DataFrame) -> str:
        return (
            f"metric 'coverage': {bad.height} recommended item(s) are outside the catalog "
            f"(column {catalog!r} not true), e.g. {label} {examples(bad.get_column(item))}; "
            "pass outside_catalog=ignore to leave them out or outside_catalog=count to "
            "count them"
        )

    def finalize(merged: pl.LazyFrame, by_cols: list[str]) -> pl.LazyFrame:
        if check:
            merged = fail_if(merged, "outside", message)
        covered = pl.when(pl.col("sure") > 0).then(1.0).otherwise(1.0 - pl.col("log_miss").exp())
        if not normalize:  # the number of covered items (expected under ties)
            return _per_by(merged, by_cols, covered.sum())
        # An empty input has an empty catalog (N = 0): undefined, not 0 / 0.
        return _per_by(merged, by_cols, defined_if(n_items > 0, covered.sum() / n_items))

    return GlobalPlan(partial, (item,), dict.fromkeys(parts, "sum"), finalize)


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
        "log2(N), N the catalog size (null when N = 1); unit=nats takes ln instead of "
        "log2; per_exposed_item=true divides by the number of items with a positive "
        "exposure (RecBole shannonentropy = exposure_entropy(unit=nats, "
        "per_exposed_item=true), RecBole's lists being full). Expected ties: the entropy "
        "of the expected exposure. Null when no item is exposed."
    ),
)
def _exposure_entropy(
    f: Features,
    k: int | None,
    *,
    discount: Discount = "none",
    normalize: Normalize = False,
    unit: EntropyUnit = "bits",
    per_exposed_item: PerExposedItem = False,
) -> GlobalPlan:
    if normalize and per_exposed_item:
        msg = (
            "exposure_entropy: normalize=true and per_exposed_item=true are two "
            "normalisations; pick one"
        )
        raise ValueError(msg)
    n_items = f.n_items
    partial = _per_item(f, {"e": _exposure(f, k, discount).sum()})

    def finalize(merged: pl.LazyFrame, by_cols: list[str]) -> pl.LazyFrame:
        e = pl.col("e")
        total = e.sum()
        q = e / total
        log_q = q.log(2) if unit == "bits" else q.log()
        terms = pl.when(e > 0).then(-q * log_q).otherwise(0.0)
        value = defined_if(total > 0, terms.sum())
        if normalize:
            log_n = n_items.log(2) if unit == "bits" else n_items.log()
            value = defined_if(n_items > 1, value / log_n)
        if per_exposed_item:
            value = value / (e > 0).sum()
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
    divisor: float | None = None,
    *,
    missing_ok: bool = False,
    pad_empty: bool = False,
) -> FramePlan:
    """Per user: the mean of ``transform(column)`` over the top k, every value checked.

    ``divisor``: divide the sum by this constant instead of the list size.
    ``missing_ok``: a null value is not an error (``transform`` handles it).
    ``pad_empty``: with ``divisor``, a user without an item in the top k scores 0 (the
    empty sum over the k padded slots) instead of null.
    """
    keys, item = f.keys, f.cols.item
    p = f.p_in(k)
    value = f64(f.column(column))
    bad = ~value.is_finite() | ~valid(value)
    bad = bad.fill_null(False) if missing_ok else value.is_null() | bad

    def build(rows: pl.LazyFrame) -> pl.LazyFrame:
        term = pl.when(bad | (p <= 0)).then(0.0).otherwise(transform(value))
        counted = bad & (p > 0)
        per_user = (
            (rows if pad_empty and divisor is not None else rows.filter(p > 0))
            .group_by(keys)
            .agg(
                num=(p * term).sum(),
                den=p.sum(),
                bad=f64(counted).sum(),
                bad_item=pl.col(item).filter(counted).min(),
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
        den = pl.col("den") if divisor is None else pl.lit(float(divisor))
        return checked.select(*keys, (pl.col("num") / den).alias("value"))

    return FramePlan(build)


def _resolve_source(f: Features, source: str, popularity: str) -> str:
    """``source=auto``: the popularity column if there is one, else ``history=``."""
    if source != "auto":
        return source
    if f.has_column(popularity) or not f.has_history:
        return "column"
    return "history_users"


def _history_counts(
    f: Features, metric: str, source: str
) -> Callable[[], tuple[pl.LazyFrame, pl.LazyFrame]]:
    """p(i) = ``__prk_nc / __prk_nt`` from ``history=``: per item, and the total.

    ``history_users``: #distinct history users with the item / #distinct history
    users; ``history_interactions``: #history rows of the item / #history rows.
    """
    item, user = f.cols.item, f.keys[-1] if f.keys else f.cols.user
    history = f.history(metric).select(user, item)  # the error at the call if missing

    def counts() -> tuple[pl.LazyFrame, pl.LazyFrame]:
        if source == "history_users":
            held = history.unique()
            per_item = held.group_by(item).agg(f64(pl.col(user).n_unique()).alias("__prk_nc"))
            total = history.select(f64(pl.col(user).n_unique()).alias("__prk_nt"))
        else:
            per_item = history.group_by(item).agg(f64(pl.len()).alias("__prk_nc"))
            total = history.select(f64(pl.len()).alias("__prk_nt"))
        return per_item, total

    return counts


def _history_popularity_bias(f: Features, k: int | None, source: str) -> FramePlan:
    """Per user: the mean over the top k of p(i) counted in ``history=`` (0 if absent)."""
    keys, item = f.keys, f.cols.item
    p = f.p_in(k)
    counts = _history_counts(f, "popularity_bias", source)

    def build(rows: pl.LazyFrame) -> pl.LazyFrame:
        per_item, total = counts()
        top = rows.filter(p > 0).select(*keys, item, p.alias("__prk_arp_p"))
        joined = top.join(per_item, on=item, how="left").join(total, how="cross")
        share = (pl.col("__prk_nc") / pl.col("__prk_nt")).fill_null(0.0)
        pw = pl.col("__prk_arp_p")
        per_user = joined.group_by(keys).agg(num=(pw * share).sum(), den=pw.sum())
        return per_user.select(*keys, (pl.col("num") / pl.col("den")).alias("value"))

    return FramePlan(build)


@register(
    "popularity_bias",
    absolute_positions=True,
    higher_is_better=False,
    family="exposure",
    normalized=False,
    aliases=("arp",),
    summary="Mean popularity of the items of the top k (average recommendation popularity).",
    definition=(
        "mean over the top k of the item popularity. source=column: the popularity "
        "column (from the data or items=, e.g. item_popularity(): the share of the "
        "training users who interacted with the item); an item without a finite, "
        "non-negative popularity is an error. source=history_users: the share of the "
        "distinct users of history= who interacted with the item; "
        "source=history_interactions: the item's share of the history= rows; an item "
        "without history has popularity 0. source=auto (default): the column when the "
        "data or items= has it, else history_users. Null for an empty list."
    ),
)
def _popularity_bias(
    f: Features,
    k: int | None,
    *,
    popularity: ArpPopularity = "popularity",
    source: PopularitySource = "auto",
) -> FramePlan:
    resolved = _resolve_source(f, source, popularity)
    if resolved != "column":
        return _history_popularity_bias(f, k, resolved)
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
    absolute_positions=True,
    history_items=HistoryItems(
        when=(
            ("unknown", ("error",)),
            ("source", ("auto", "history_users", "history_interactions")),
        ),
        source="source",
        column="popularity",
    ),
    family="exposure",
    normalized=False,
    summary="Mean self-information -log2 p(i) of the items of the top k.",
    definition=(
        "mean over the top k of -log_b p(i) (b = log_base, default 2). source=auto "
        "(default): the popularity column when the data or items= has it, else "
        "history_users (with history=). source=column: p(i) is the popularity column "
        "(from the data or items=, e.g. "
        "item_popularity(): the share of the training users who interacted with the "
        "item), which must lie in (0, 1] (else an error: an item no one interacted with "
        "has infinite self-information; item_popularity(unseen='one') counts such items "
        "as one user, as RecTools and RePlay do). source=history_users: p(i) = #distinct "
        "users of history= with the item / #distinct users of history=; "
        "source=history_interactions: #history rows of the item / #history rows (MS "
        "Recommenders novelty). unknown= says what an item without a popularity (not in "
        "history=, or a null or 0 popularity) adds: an error (default; with history=, "
        "raised at the call, before the evaluation), as if one user "
        "or interaction had it (one: RePlay Surprisal) or 0 while still counting in the "
        "denominator (zero: MS Recommenders). normalize=true divides by the largest "
        "self-information, log_b of #history users (or rows), which maps it to [0, 1] "
        "(RePlay Surprisal). denominator=list (default; RecTools MeanInvUserFreq) "
        "divides the sum by the items of the top k, denominator=k by k (RePlay "
        "Surprisal). aggregate=pooled: the sum over every user's top k / the number of "
        "those rows (MS Recommenders novelty). Null for an empty list (0 with "
        "denominator=k: the empty sum over k padded slots)."
    ),
)
def _novelty(
    f: Features,
    k: int | None,
    *,
    popularity: NoveltyPopularity = "popularity",
    denominator: NoveltyDenominator = "list",
    log_base: LogBase = 2.0,
    source: NoveltySource = "auto",
    unknown: NoveltyUnknown = "error",
    normalize: NoveltyNormalize = False,
) -> FramePlan:
    if denominator == "k" and k is None:
        msg = "novelty(denominator=k) needs a cutoff @k (the sum is divided by k)"
        raise ValueError(msg)
    base = float(log_base)
    divisor = float(k) if denominator == "k" and k is not None else None
    if source == "auto" and (normalize or unknown == "one") and f.has_history:
        source = "history_users"  # options defined with history= only
    resolved = _resolve_source(f, source, popularity)
    if resolved != "column":
        return _history_novelty(f, k, resolved, unknown, normalize, base, divisor)
    if normalize:
        msg = (
            "novelty(normalize=true) divides by log(#history users), which only "
            "source=history_users or source=history_interactions knows (from history=), "
            "got source='column'"
        )
        raise ValueError(msg)
    if unknown == "one":
        msg = (
            "novelty(unknown=one) counts an unknown item as one user of history=: it needs "
            "source=history_users or source=history_interactions, got source='column' "
            "(with a popularity column, use item_popularity(..., unseen='one'))"
        )
        raise ValueError(msg)
    if unknown == "zero":  # a missing, null or zero popularity adds 0 self-information
        return _mean_over_top(
            f,
            k,
            "novelty",
            popularity,
            lambda x: pl.when(x.is_null() | (x == 0)).then(0.0).otherwise(-x.log(base)),
            lambda x: (x >= 0) & (x <= 1),
            "no popularity in [0, 1]",
            divisor=divisor,
            missing_ok=True,
            pad_empty=True,
        )
    return _mean_over_top(
        f,
        k,
        "novelty",
        popularity,
        lambda x: -x.log(base),
        lambda x: (x > 0) & (x <= 1),
        "no popularity in (0, 1]",
        divisor=divisor,
        pad_empty=True,
    )


def _history_novelty(
    f: Features,
    k: int | None,
    source: str,
    unknown: str,
    normalize: bool,
    base: float,
    divisor: float | None,
) -> FramePlan:
    """Per user: the self-information of the top k with p(i) counted in ``history=``."""
    keys, item = f.keys, f.cols.item
    p = f.p_in(k)
    history_counts = _history_counts(f, "novelty", source)
    if unknown == "error":
        f.require_history_items(source)
    label = f.label(item)

    def build(rows: pl.LazyFrame) -> pl.LazyFrame:
        counts, total = history_counts()
        c, t = pl.col("__prk_nc"), pl.col("__prk_nt")
        missing = c.is_null()
        info = (t / c).log(base)
        if unknown == "one":
            info = pl.when(missing).then(t.log(base)).otherwise(info)
        elif unknown == "zero":
            info = pl.when(missing).then(0.0).otherwise(info)
        if normalize:  # the largest self-information: an item held by one user (or row)
            info = defined_if(t > 1, info / t.log(base))
        bad = missing if unknown == "error" else pl.lit(False)
        # With denominator=k a user without an item in the top k scores 0 (padded).
        kept = rows if divisor is not None else rows.filter(p > 0)
        top = kept.select(*keys, item, p.alias("__prk_nov_p"))
        joined = top.join(counts, on=item, how="left").join(total, how="cross")
        pw = pl.col("__prk_nov_p")
        inside = pw > 0
        counted = bad & inside
        per_user = joined.group_by(keys).agg(
            num=(pw * pl.when(bad | ~inside).then(0.0).otherwise(info)).sum(),
            undefined=(info.is_null() & ~bad & inside).any(),
            den=pw.sum(),
            bad=f64(counted).sum(),
            bad_item=pl.col(item).filter(counted).min(),
        )

        def message(rows_bad: pl.DataFrame) -> str:
            return (
                f"metric 'novelty': {int(rows_bad.get_column('bad').sum())} item(s) in the "
                f"top k of {rows_bad.height} user(s) have no interaction in history= "
                f"(source={source!r}), e.g. {label} "
                f"{examples(rows_bad.get_column('bad_item'))}; pass unknown=one (as if "
                "one user had it) or unknown=zero (it adds 0)"
            )

        checked = fail_if(per_user, "bad", message)
        den = pl.col("den") if divisor is None else pl.lit(divisor)
        value = pl.when(~pl.col("undefined")).then(pl.col("num") / den)
        return checked.select(*keys, value.alias("value"))

    return FramePlan(build)


@register(
    "unseen_share",
    family="exposure",
    normalized=False,
    summary="Share of the items of the top k the user had not interacted with before.",
    definition=(
        "#items of the top k whose seen column (from the data: true when the user "
        "interacted with the item in the training history) is false / #items of the top "
        "k (denominator=list: RePlay Novelty's code) or / k (denominator=k: RePlay's "
        "docstring and torch builder; needs @k); a null seen value is an error. Null for "
        "an empty list."
    ),
)
def _unseen_share(
    f: Features,
    k: int | None,
    *,
    seen: Annotated[
        str,
        ColumnOption(),
        "boolean column: the user interacted with the item in the training history",
    ] = "seen",
    denominator: Annotated[
        Literal["list", "k"],
        "divide by the items of the top k (RePlay Novelty) or by k (needs @k)",
    ] = "list",
) -> FramePlan:
    if denominator == "k" and k is None:
        msg = "unseen_share(denominator=k) needs a cutoff @k (the count is divided by k)"
        raise ValueError(msg)
    return _mean_over_top(
        f,
        k,
        "unseen_share",
        seen,
        lambda x: 1.0 - x,
        lambda x: (x == 0) | (x == 1),
        "no true/false seen value",
        divisor=float(k) if denominator == "k" and k is not None else None,
    )
