"""Popularity bias and provider fairness: who gets the top-k slots, and who gets the hits.

**Long tail.** :func:`polars_rankeval.long_tail_items` splits the items of an
interactions (training) frame into the *short head*, the most popular items that
together hold ``head_share`` (default 0.8) of the interactions, and the *long tail*,
the rest (Abdollahpouri et al. 2019; Elliot's ``pop_ratio``); pass it as ``items=``.

* ``aplt@k`` (per user; Abdollahpouri et al. 2019, Elliot ``APLT``): the share of the
  top k that is long-tail, ``|L_u ∩ tail| / |L_u|`` (the boolean ``long_tail=`` column).
* ``aclt@k`` (per user; Elliot ``ACLT``): the number of long-tail items in the top k.

**Item groups** (``group=``: any column of ``items=`` or of the data, e.g. the
``long_tail`` flag or a provider; compared as text):

* ``reo@k`` (global; alias ``pop_reo``; Zhu et al. 2021, ranking-based equal
  opportunity, Elliot ``PopREO``): per group g the rate
  ``P(R@k | g, y=1) = sum_u #relevant top-k items of g / sum_u #relevant items of g``,
  then ``std / mean`` of the rates over the groups (population std; 0 = every group's
  relevant items are found equally often). Groups without relevant items are left out.
* ``rsp@k`` (global; alias ``pop_rsp``; ranking-based statistical parity, Elliot
  ``PopRSP``): per group ``sum_u #top-k items of g / sum_u #items of g not in the
  user's history``, the group sizes counted in ``items=`` (the catalog) and the history
  from ``history=`` (without it nothing is excluded), then ``std / mean``.
* ``group_exposure@k(group=, level=)`` (global): the share of the exposure (top-k
  slots, or ``discount=log`` weights ``1 / log2(1 + rank)``) that goes to the items whose
  group is ``level``.
* ``exposure_ratio@k(group=, numerator=, denominator=)`` (global): the exposure of one
  group over another's; ``per_item=true`` divides each by its number of items in
  ``items=`` (mean exposure per item, the disparate-exposure ratio).

**Ties.** All of them are linear in the top-k memberships (and exposure weights) with
fixed denominators or sums of them, so under ``ties="expected"`` ``aplt``/``aclt`` are
exact expectations, and ``reo``/``rsp``/``group_exposure``/``exposure_ratio`` are
defined on the expected counts (the ratio and the std/mean of expected rates).

**Per-user-group gaps** (e.g. nDCG for light vs heavy users) need no metric: derive a
group column per user and pass ``by=`` (README, "Fairness across user groups").

Examples
--------
>>> import polars as pl
>>> import polars_rankeval as prk
>>> train = pl.DataFrame({"user": [1, 2, 3, 1, 2, 3], "item": ["a", "a", "a", "b", "b", "c"]})
>>> tail = prk.long_tail_items(train, head_share=0.5)
>>> tail
shape: (3, 3)
┌──────┬───────┬───────────┐
│ item ┆ count ┆ long_tail │
│ ---  ┆ ---   ┆ ---       │
│ str  ┆ u32   ┆ bool      │
╞══════╪═══════╪═══════════╡
│ a    ┆ 3     ┆ false     │
│ b    ┆ 2     ┆ true      │
│ c    ┆ 1     ┆ true      │
└──────┴───────┴───────────┘
>>> recs = pl.DataFrame({
...     "user": [1, 1, 2, 2], "item": ["a", "c", "a", "b"],
...     "score": [2.0, 1.0, 2.0, 1.0], "relevance": [None, 1, 1, None],
... })
>>> prk.evaluate(recs, ["aplt@2", "aclt@2"], items=tail).select("aplt@2", "aclt@2")
shape: (1, 2)
┌────────┬────────┐
│ aplt@2 ┆ aclt@2 │
│ ---    ┆ ---    │
│ f64    ┆ f64    │
╞════════╪════════╡
│ 0.5    ┆ 1.0    │
└────────┴────────┘

Item a holds 3 of the 6 interactions, half of them: the short head (head_share=0.5).
Each list holds a and one long-tail item: a share of 1/2, one item.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated

import polars as pl

from polars_rankeval.metrics._checks import examples, fail_if
from polars_rankeval.metrics._common import Rel, defined_if, f64, partial_sums
from polars_rankeval.metrics.exposure import Discount, _exposure
from polars_rankeval.metrics.features import Features
from polars_rankeval.metrics.params import ColumnOption, Interval
from polars_rankeval.metrics.registry import register
from polars_rankeval.metrics.spec import FramePlan, GlobalPlan

_GRP = "__prk_grp"

LongTail = Annotated[
    str,
    ColumnOption(
        fallback=(),
        hint="pass history= (the training interactions: the long tail is then counted "
        "in them) or items=long_tail_items(train)",
    ),
    "boolean column (items= or the data) marking long-tail items (long_tail_items())",
]
Group = Annotated[
    str, ColumnOption(), "column (items= or the data) of the item's group, compared as text"
]


HeadShare = Annotated[
    float,
    Interval(0, 1, closed="right"),
    "with history= and no long_tail column: share of the history's (user, item) pairs "
    "the short head holds (long_tail_items(head_share=); Elliot's 0.8)",
]


def _history_tail(f: Features, metric: str, head_share: float) -> pl.LazyFrame:
    """The long-tail flag of each item of ``history=`` (:func:`long_tail_items`'s rule).

    Items by their number of distinct history users (descending, ties by item id) are
    in the short head while the count of the items before them is below
    ``head_share`` of the total; the rest is the long tail.
    """
    item, user = f.cols.item, f.keys[-1] if f.keys else f.cols.user
    counts = (
        f.history(metric)
        .select(user, item)
        .unique()
        .group_by(item)
        .agg(pl.len().cast(pl.Float64).alias("__prk_lt_n"))
        .sort(["__prk_lt_n", item], descending=[True, False])
    )
    n = pl.col("__prk_lt_n")
    before = n.cum_sum() - n
    return counts.select(item, (~(before < n.sum() * float(head_share))).alias(_TAIL))


_TAIL = "__prk_tail"


def _history_tail_count(
    f: Features, k: int | None, metric: str, head_share: float, share: bool
) -> FramePlan:
    """aplt/aclt with the long tail counted in ``history=`` (an item absent: tail)."""
    keys, item = f.keys, f.cols.item
    p = f.p_in(k)
    tail = _history_tail(f, metric, head_share)

    def build(rows: pl.LazyFrame) -> pl.LazyFrame:
        top = rows.filter(p > 0).select(*keys, item, p.alias("__prk_lt_p"))
        joined = top.join(tail, on=item, how="left")
        pw = pl.col("__prk_lt_p")
        flag = f64(pl.col(_TAIL).fill_null(True))
        per_user = joined.group_by(keys).agg(num=(pw * flag).sum(), den=pw.sum())
        value = pl.col("num") / pl.col("den") if share else pl.col("num")
        return per_user.select(*keys, value.alias("value"))

    return FramePlan(build)


def _tail_count(
    f: Features,
    k: int | None,
    metric: str,
    column: str,
    share: bool,
    head_share: float = 0.8,
) -> FramePlan:
    if not f.has_column(column) and f.has_history:
        return _history_tail_count(f, k, metric, head_share, share)
    keys, item = f.keys, f.cols.item
    p = f.p_in(k)
    flag = f.column(column)
    bad = flag.is_null()

    def build(rows: pl.LazyFrame) -> pl.LazyFrame:
        per_user = (
            rows.filter(p > 0)
            .group_by(keys)
            .agg(
                num=(p * f64(flag.fill_null(False).cast(pl.Boolean))).sum(),
                den=p.sum(),
                bad=f64(bad).sum(),
                bad_item=pl.col(item).filter(bad).min(),
            )
        )

        def message(rows_bad: pl.DataFrame) -> str:
            return (
                f"metric {metric!r}: {int(rows_bad.get_column('bad').sum())} item(s) in the "
                f"top k of {rows_bad.height} user(s) have no true/false value in column "
                f"{column!r} (from the data or items=, e.g. long_tail_items()), e.g. "
                f"{f.label(item)} {examples(rows_bad.get_column('bad_item'))}"
            )

        value = pl.col("num") / pl.col("den") if share else pl.col("num")
        return fail_if(per_user, "bad", message).select(*keys, value.alias("value"))

    return FramePlan(build)


@register(
    "aplt",
    absolute_positions=True,
    family="popularity_bias",
    normalized=False,
    bounds=(0.0, 1.0),
    summary="Share of the top k that is long-tail (average percentage of long tail items).",
    definition=(
        "#items of the top k whose long_tail column (items= or the data; "
        "long_tail_items()) is true / #items of the top k (Abdollahpouri et al. 2019, "
        "Elliot APLT). A null flag is an error. Without that column, with history=: "
        "the long tail of long_tail_items(history, head_share=) (an item without "
        "history is long-tail). Expected ties: exact expectation. Null for an empty list."
    ),
)
def _aplt(
    f: Features,
    k: int | None,
    *,
    long_tail: LongTail = "long_tail",
    head_share: HeadShare = 0.8,
) -> FramePlan:
    return _tail_count(f, k, "aplt", long_tail, True, head_share)


@register(
    "aclt",
    absolute_positions=True,
    family="popularity_bias",
    normalized=False,
    summary="Number of long-tail items in the top k (average coverage of long tail items).",
    definition=(
        "#items of the top k whose long_tail column (items= or the data; "
        "long_tail_items()) is true (Abdollahpouri et al. 2019, Elliot ACLT). A null "
        "flag is an error. Without that column, with history=: the long tail of "
        "long_tail_items(history, head_share=) (an item without history is long-tail). "
        "Expected ties: exact expectation. Null for an empty list."
    ),
)
def _aclt(
    f: Features,
    k: int | None,
    *,
    long_tail: LongTail = "long_tail",
    head_share: HeadShare = 0.8,
) -> FramePlan:
    return _tail_count(f, k, "aclt", long_tail, False, head_share)


# --------------------------------------------------------------------------- group rates
def _group_text(expr: pl.Expr) -> pl.Expr:
    return expr.cast(pl.Utf8)


def _null_group_check(
    f: Features, metric: str, column: str, counted: pl.Expr
) -> tuple[dict[str, pl.Expr], Callable[[pl.DataFrame], str]]:
    item = f.cols.item
    bad = counted & f.column(column).is_null()
    parts = {"bad": f64(bad).sum(), "bad_item": pl.col(item).filter(bad).min()}

    def message(rows: pl.DataFrame) -> str:
        return (
            f"metric {metric!r}: {int(rows.get_column('bad').sum())} counted item row(s) "
            f"have no group in column {column!r} (from the data or items=), e.g. "
            f"{f.label(item)} {examples(rows.get_column('bad_item'))}"
        )

    return parts, message


def _guard(frame: pl.LazyFrame, checked: pl.LazyFrame, by: list[str]) -> pl.LazyFrame:
    """``frame`` after the check of ``checked`` (one row per by group) has run."""
    if by:
        return frame.join(checked.select(by), on=by, how="semi", nulls_equal=True)
    # Read the checked column: a literal alone would let the optimizer skip the check.
    ok = checked.select((pl.col("bad") * 0.0).alias("__prk_ok"))
    return frame.join(ok, how="cross").drop("__prk_ok")


def _std_over_mean(rate: pl.Expr) -> pl.Expr:
    mean = rate.mean()
    return defined_if((rate.count() >= 1) & (mean > 0), rate.std(ddof=0) / mean)


@register(
    "reo",
    family="popularity_bias",
    scope="global",
    normalized=False,
    higher_is_better=False,
    aliases=("pop_reo",),
    summary="Ranking-based equal opportunity: std / mean of the groups' recall@k.",
    definition=(
        "per group g of the group column (default long_tail): sum over users of #relevant "
        "(rel >= rel) top-k items of g / sum of #relevant items of g; std (ddof 0) / mean "
        "of these rates over the groups with relevant items (Zhu et al. 2021; Elliot "
        "PopREO with the long tail). A counted row without a group is an error. Expected "
        "ties: of the expected counts. Null when no group has relevant items."
    ),
)
def _reo(f: Features, k: int | None, *, group: Group = "long_tail", rel: Rel = 1.0) -> GlobalPlan:
    is_rel = f.is_rel(rel)
    p = f.p_in(k)
    checks, message = _null_group_check(f, "reo", group, is_rel > 0)
    grp = _group_text(f.column(group))
    by = f.by

    def partial(rows: pl.LazyFrame) -> pl.LazyFrame:
        bad = partial_sums(rows, by, checks)
        counts = partial_sums(
            rows.filter(is_rel > 0).with_columns(grp.alias(_GRP)),
            [*by, _GRP],
            {"hits": (p * is_rel).sum(), "relevant": is_rel.sum()},
        )
        return _guard(counts, fail_if(bad, "bad", message), by)

    def finalize(merged: pl.LazyFrame, by_cols: list[str]) -> pl.LazyFrame:
        kept = merged.filter(pl.col("relevant") > 0)
        rate = pl.col("hits") / pl.col("relevant")
        if by_cols:
            return kept.group_by(by_cols).agg(_std_over_mean(rate).alias("value")).sort(by_cols)
        return kept.select(_std_over_mean(rate).alias("value"))

    return GlobalPlan(partial, (_GRP,), {"hits": "sum", "relevant": "sum"}, finalize)


@register(
    "rsp",
    family="popularity_bias",
    scope="global",
    normalized=False,
    higher_is_better=False,
    aliases=("pop_rsp",),
    summary="Ranking-based statistical parity: std / mean of the groups' top-k rates.",
    definition=(
        "per group g of the group column of items= (default long_tail): sum over users of "
        "#top-k items of g / sum over users of #items of g (in items=) not in the user's "
        "history= (all of them without history=); std (ddof 0) / mean over the groups "
        "(Zhu et al. 2021; Elliot PopRSP with the long tail). Needs items=. Expected ties: "
        "of the expected counts. Null when no group has a candidate item."
    ),
)
def _rsp(
    f: Features,
    k: int | None,
    *,
    group: Annotated[Group, ColumnOption(table="items")] = "long_tail",
) -> GlobalPlan:
    metric = "rsp"
    keys, item = f.keys, f.cols.item
    by, user = f.by, keys[-1]
    p = f.p_in(k)
    table = f.item_table(metric)
    if group not in table.collect_schema():
        msg = f"metric {metric!r}: column {group!r} not found in the items= table"
        raise ValueError(msg)
    history = f.history(metric) if f.has_history else None
    checks, message = _null_group_check(f, metric, group, p > 0)
    grp = _group_text(f.column(group))
    catalog = table.select(item, _group_text(pl.col(group)).alias(_GRP))
    null_groups = catalog.filter(pl.col(_GRP).is_null()).select(pl.len()).collect().item()
    if null_groups:
        msg = f"metric {metric!r}: {null_groups} item(s) of items= have a null {group!r}"
        raise ValueError(msg)
    sizes = catalog.group_by(_GRP).agg(pl.len().alias("__prk_size")).collect().lazy()

    def partial(rows: pl.LazyFrame) -> pl.LazyFrame:
        users = rows.select(keys).unique()
        n_users = partial_sums(users, by, {"__prk_nu": pl.len()})
        cand = n_users.join(sizes, how="cross").with_columns(
            (f64(pl.col("__prk_nu")) * pl.col("__prk_size")).alias("cand")
        )
        if history is not None:
            seen = (
                history.select(user, item)
                .unique()
                .join(catalog, on=item, how="inner")
                .join(users, on=user, how="inner", nulls_equal=True)
            )
            overlap = partial_sums(seen, [*by, _GRP], {"__prk_seen": pl.len()})
            cand = cand.join(overlap, on=[*by, _GRP], how="left", nulls_equal=True).with_columns(
                pl.col("cand") - f64(pl.col("__prk_seen").fill_null(0))
            )
        shown = partial_sums(
            rows.filter(p > 0).with_columns(grp.alias(_GRP)), [*by, _GRP], {"shown": p.sum()}
        )
        bad = fail_if(partial_sums(rows, by, checks), "bad", message)
        out = cand.select(*by, _GRP, "cand").join(
            shown, on=[*by, _GRP], how="full", coalesce=True, nulls_equal=True
        )
        out = out.with_columns(pl.col("cand", "shown").fill_null(0.0))
        return _guard(out, bad, by)

    def finalize(merged: pl.LazyFrame, by_cols: list[str]) -> pl.LazyFrame:
        kept = merged.filter(pl.col("cand") > 0)
        rate = pl.col("shown") / pl.col("cand")
        if by_cols:
            return kept.group_by(by_cols).agg(_std_over_mean(rate).alias("value")).sort(by_cols)
        return kept.select(_std_over_mean(rate).alias("value"))

    return GlobalPlan(partial, (_GRP,), {"cand": "sum", "shown": "sum"}, finalize)


# --------------------------------------------------------------------------- group exposure
def _exposure_parts(
    f: Features, k: int | None, metric: str, group: str, discount: str
) -> tuple[Callable[[pl.LazyFrame], pl.LazyFrame], pl.Expr]:
    e = _exposure(f, k, discount)  # type: ignore[arg-type]
    checks, message = _null_group_check(f, metric, group, e > 0)
    grp = _group_text(f.column(group))
    by = f.by

    def partial(rows: pl.LazyFrame) -> pl.LazyFrame:
        exposed = rows.filter(e > 0).with_columns(grp.alias(_GRP))
        sums = partial_sums(exposed, [*by, _GRP], {"e": e.sum()})
        return _guard(sums, fail_if(partial_sums(rows, by, checks), "bad", message), by)

    return partial, e


def _per_by(merged: pl.LazyFrame, by_cols: list[str], value: pl.Expr) -> pl.LazyFrame:
    if by_cols:
        return merged.group_by(by_cols).agg(value.alias("value")).sort(by_cols)
    return merged.select(value.alias("value"))


@register(
    "group_exposure",
    family="popularity_bias",
    scope="global",
    normalized=False,
    bounds=(0.0, 1.0),
    higher_is_better=None,
    summary="Share of the top-k exposure that goes to the items of one group.",
    definition=(
        "sum over users of the exposure (top-k slots; discount=log: 1 / log2(1 + rank)) of "
        "the items whose group column (items= or the data, compared as text) equals level "
        "/ the exposure of all items. A top-k item without a group is an error. Expected "
        "ties: of the expected exposure. Null when nothing is exposed."
    ),
)
def _group_exposure(
    f: Features,
    k: int | None,
    *,
    group: Group = "group",
    level: Annotated[str, "the group whose share is measured (as text: true, false, ...)"] = "true",
    discount: Discount = "none",
) -> GlobalPlan:
    partial, _ = _exposure_parts(f, k, "group_exposure", group, discount)
    target = str(level)

    def finalize(merged: pl.LazyFrame, by_cols: list[str]) -> pl.LazyFrame:
        e = pl.col("e")
        total = e.sum()
        mine = e.filter(pl.col(_GRP) == target).sum()
        return _per_by(merged, by_cols, defined_if(total > 0, mine / total))

    return GlobalPlan(partial, (_GRP,), {"e": "sum"}, finalize)


@register(
    "exposure_ratio",
    family="popularity_bias",
    scope="global",
    normalized=False,
    higher_is_better=None,
    summary="Exposure of one item group over another's (per item with per_item=true).",
    definition=(
        "exposure (top-k slots; discount=log: 1 / log2(1 + rank)) of the items whose group "
        "column equals numerator / that of the items whose group equals denominator; "
        "per_item=true divides each by its group's number of items in items= (mean "
        "exposure per item). Expected ties: of the expected exposure. Null when the "
        "denominator group has no exposure."
    ),
)
def _exposure_ratio(
    f: Features,
    k: int | None,
    *,
    group: Group = "group",
    numerator: Annotated[str, "the group on top of the ratio (as text)"] = "true",
    denominator: Annotated[str, "the group below (as text)"] = "false",
    discount: Discount = "none",
    per_item: Annotated[
        bool, "divide each group's exposure by its number of items in items="
    ] = False,
) -> GlobalPlan:
    metric = "exposure_ratio"
    partial, _ = _exposure_parts(f, k, metric, group, discount)
    num_level, den_level = str(numerator), str(denominator)
    sizes: dict[str, int] = {}
    if per_item:
        table = f.item_table(metric)
        if group not in table.collect_schema():
            msg = f"metric {metric!r}: column {group!r} not found in the items= table"
            raise ValueError(msg)
        counts = (
            table.select(_group_text(pl.col(group)).alias(_GRP)).group_by(_GRP).agg(pl.len())
        ).collect()
        sizes.update(zip(counts.get_column(_GRP), counts.get_column("len"), strict=True))
        for level in (numerator, denominator):
            if not sizes.get(str(level)):
                msg = f"metric {metric!r}: no item of items= has {group} = {str(level)!r}"
                raise ValueError(msg)

    def finalize(merged: pl.LazyFrame, by_cols: list[str]) -> pl.LazyFrame:
        e, g = pl.col("e"), pl.col(_GRP)
        top = e.filter(g == num_level).sum()
        bottom = e.filter(g == den_level).sum()
        if sizes:
            top = top / sizes[num_level]
            bottom = bottom / sizes[den_level]
        return _per_by(merged, by_cols, defined_if(bottom > 0, top / bottom))

    return GlobalPlan(partial, (_GRP,), {"e": "sum"}, finalize)
