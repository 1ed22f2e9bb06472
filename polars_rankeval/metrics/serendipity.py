"""Serendipity and unexpectedness: relevant items the user would not have expected.

An item is *expected* when a primitive recommender would have shown it (popularity,
or a baseline system's list) or when it resembles what the user already knew (the
user's interaction history, ``history=`` of :func:`polars_rankeval.evaluate`). Each
peer library writes one of these definitions; ``mode=`` names them:

* ``serendipity@k`` (per user)

  - ``mode=popularity`` (default; RecTools ``Serendipity``): the mean over the top k of
    ``max(p(i) - pu(i), 0) * [rel(i) >= rel]`` with ``p(i) = (N + 1 - rank) / N`` the
    chance the user's recommender puts the item at its rank and
    ``pu(i) = (N + 1 - r(i)) / N`` the chance a popularity recommender does, ``r(i)``
    the dense rank of the item's number of history rows (1 = most interactions; an
    item absent from the history has ``pu = 0``), ``N`` the catalog size
    (``n_items=``). Since ``p - pu = (r - rank) / N`` this is the mean of
    ``max(r(i) - rank, 0) / N`` over the relevant items.
  - ``mode=history`` (MS Recommenders ``user_serendipity``): the mean over the top k
    of ``(1 - mean_{j in H_u} sim(i, j)) * [rel(i) >= rel]``, ``H_u`` the user's
    history rows; ``similarity=cooccurrence`` (MS's default ``item_cooccurrence_count``:
    ``c(i, j) / sqrt(c(i) c(j))``, ``c`` counting history rows and users holding both,
    0 for items that never co-occur) or ``similarity=features`` (MS's
    ``item_feature_vector``: the cosine of the ``features`` vectors of ``items=``).
    Null for a user without history (MS leaves such users out).
  - ``mode=base`` (Ge et al. 2010 with a primitive recommender): the share of the top
    k that is relevant and not in the baseline's top k, ``base=`` naming the column of
    the item's rank in the baseline's list (null: not recommended by it).

* ``unexpectedness@k`` (per user)

  - ``mode=base`` (default; RePlay ``Unexpectedness``): ``1 - |top k ∩ base top k| / k``
    (``denominator=list`` divides by the list size instead).
  - ``mode=history`` (item distance; Kaminskas & Bridge 2016, MS Recommenders'
    serendipity without the relevance factor): the mean over the top k of
    ``1 - mean_{j in H_u} sim(i, j)``.

**Ties.** Every definition is linear in the top-k memberships or positions of the
rows with fixed denominators, so under ``ties="expected"`` each is the exact
expectation over the orderings of tied scores (for ``mode=popularity`` the mean of
``max(r - p, 0)`` over the positions ``p`` of the row's tie group, in closed form).

Examples
--------
>>> import polars as pl
>>> import polars_rankeval as prk
>>> recs = pl.DataFrame({
...     "user": [1, 1, 2, 2],
...     "item": ["a", "c", "b", "c"],
...     "score": [2.0, 1.0, 2.0, 1.0],
...     "relevance": [1, 1, None, 1],
... })
>>> history = pl.DataFrame({"user": [1, 2, 3, 3], "item": ["a", "a", "a", "b"]})
>>> prk.evaluate(recs, ["serendipity@2"], history=history, n_items=4).select("serendipity@2")
shape: (1, 1)
┌───────────────┐
│ serendipity@2 │
│ ---           │
│ f64           │
╞═══════════════╡
│ 0.375         │
└───────────────┘

Popularity ranks in the history: a (3 rows) 1, b (1 row) 2, c (absent) N + 1 = 5,
with N = 4. User 1: a at rank 1 is relevant but expected, max(1 - 1, 0) = 0; c at rank
2 gives (5 - 2) / 4: mean (0 + 3/4) / 2 = 3/8. User 2: b is not relevant, c gives 3/4
again: 3/8.
"""

from __future__ import annotations

from typing import Annotated, Literal

import polars as pl

from polars_rankeval.metrics._checks import examples, fail_if
from polars_rankeval.metrics._common import Rel, f64
from polars_rankeval.metrics.features import Features
from polars_rankeval.metrics.params import ColumnOption
from polars_rankeval.metrics.registry import register
from polars_rankeval.metrics.spec import FramePlan

_P, _SIM = "__prk_ser_p", "__prk_ser_sim"

SerendipityMode = Annotated[
    Literal["popularity", "history", "base"],
    "what the user would have expected: a popularity recommender (RecTools Serendipity), "
    "items like those of the user's history (MS Recommenders serendipity), or a "
    "baseline recommender's top k (base= column)",
]
UnexpectednessMode = Annotated[
    Literal["base", "history"],
    "unexpected = not in the baseline's top k (RePlay Unexpectedness), or the distance "
    "to the user's history items (item distance)",
]
Similarity = Annotated[
    Literal["cooccurrence", "features"],
    "item similarity for mode=history: cosine of the items' co-occurrence in the history "
    "(MS Recommenders item_cooccurrence_count) or of the features vectors of items= "
    "(item_feature_vector)",
]
Features_ = Annotated[str, "column of the item feature vectors in items= (similarity=features)"]
Base = Annotated[
    str,
    ColumnOption(when=(("mode", ("base",)),)),
    "column of the item's rank in the baseline recommender's list (null: not in it)",
]


# --------------------------------------------------------------------------- similarity
def _history_similarity(
    f: Features,
    metric: str,
    top: pl.LazyFrame,
    similarity: str,
    features: str,
) -> pl.LazyFrame:
    """Per (user, item) of ``top``: the mean similarity of the item to the user's history.

    ``top`` holds the keys and the item column; users without history get no row.
    """
    keys, item, user = f.keys, f.cols.item, f.keys[-1]
    history = f.history(metric).select(user, item)
    n_hist = history.group_by(user).agg(pl.len().alias("__prk_nh"))
    if similarity == "features":
        return _feature_similarity(f, metric, top, history, n_hist, features)
    sims = cooccurrence_cosine(history, user, item, top.select(item).unique(), _SIM)
    other = history.rename({item: "__prk_j"})
    per_pair = (
        top.select(*keys, item)
        .join(other, on=user, how="inner")
        .join(sims, on=[item, "__prk_j"], how="left")
    )
    return per_pair.group_by([*keys, item]).agg(pl.col(_SIM).fill_null(0.0).mean())


def cooccurrence_cosine(
    history: pl.LazyFrame,
    user: str,
    item: str,
    wanted: pl.LazyFrame,
    name: str,
    *,
    within: bool = False,
) -> pl.LazyFrame:
    """The co-occurrence cosine ``c(i, j) / sqrt(c(i) c(j))`` of the history's items.

    ``c(i)`` counts the history rows of item i and ``c(i, j)`` the pairs of rows of i
    and j of one user (MS Recommenders ``item_cooccurrence_count``). One row per
    ordered pair ``(item, "__prk_j")`` that co-occurs, for ``item`` in ``wanted`` (a
    frame of the item column) and ``j`` any history item (``within``: ``j`` in
    ``wanted`` too and ``item < j``, each unordered pair once); pairs that never
    co-occur are absent (similarity 0).
    """
    counts = history.group_by(item).agg(pl.len().alias("__prk_c"))
    holders = history.join(wanted, on=item, how="semi")
    other = (holders if within else history).rename({item: "__prk_j"})
    joined = holders.join(other, on=user, how="inner")
    if within:
        joined = joined.filter(pl.col(item) < pl.col("__prk_j"))
    pairs = joined.group_by(item, "__prk_j").agg(pl.len().alias("__prk_cij"))
    count_j = counts.rename({item: "__prk_j", "__prk_c": "__prk_cj"})
    cij, ci, cj = (f64(pl.col(c)) for c in ("__prk_cij", "__prk_c", "__prk_cj"))
    return (
        pairs.join(counts, on=item, how="left")
        .join(count_j, on="__prk_j", how="left")
        .select(item, "__prk_j", (cij / (ci * cj).sqrt()).alias(name))
    )


def _unit_list(column: str, dtype: pl.DataType) -> tuple[pl.Expr, pl.Expr]:
    """The vectors as unit ``List(Float64)`` (zero vectors stay zero) and a bad flag."""
    v = pl.col(column)
    if isinstance(dtype, pl.Array):
        vec = v.cast(pl.Array(pl.Float64, dtype.size)).arr.to_list()  # type: ignore[union-attr]
    elif isinstance(dtype, pl.Struct):
        vec = pl.concat_list([f64(v.struct.field(fld.name)) for fld in dtype.fields])
    elif isinstance(dtype, pl.List) and dtype.inner is not None and dtype.inner.is_numeric():
        vec = v.cast(pl.List(pl.Float64))
    else:
        msg = (
            f"column {column!r} must hold numeric feature vectors (a List or Array of "
            f"numbers, or a Struct of numeric fields), got {dtype}"
        )
        raise TypeError(msg)
    norm2 = (vec * vec).list.sum()
    length = vec.list.len()
    bad = (
        vec.is_null()
        | (length == 0)
        | (vec.list.drop_nulls().list.len() < length)
        | ~norm2.is_finite()
    )
    unit = pl.when(norm2 > 0).then(vec / norm2.sqrt()).otherwise(vec * 0.0)
    return unit, bad


def _feature_similarity(
    f: Features,
    metric: str,
    top: pl.LazyFrame,
    history: pl.LazyFrame,
    n_hist: pl.LazyFrame,
    features: str,
) -> pl.LazyFrame:
    """Mean cosine to the history: ``v̂_i · (sum_j v̂_j) / |H_u|``, in O(d) per row."""
    keys, item, user = f.keys, f.cols.item, f.keys[-1]
    table = f.item_table(metric)
    schema = table.collect_schema()
    if features not in schema:
        msg = f"metric {metric!r}: column {features!r} not found in the items= table"
        raise ValueError(msg)
    unit, bad = _unit_list(features, schema[features])
    vectors = table.select(item, unit.alias("__prk_v"), bad.alias("__prk_bad"))
    # History items without a usable vector have similarity 0 (MS fills missing pairs).
    hist = history.join(vectors.filter(~pl.col("__prk_bad")), on=item, how="inner")
    dims = pl.int_ranges(0, pl.col("__prk_v").list.len()).alias("__prk_d")
    centroid = (
        hist.select(user, "__prk_v", dims)
        .explode("__prk_v", "__prk_d")
        .group_by(user, "__prk_d")
        .agg(pl.col("__prk_v").sum().alias("__prk_m"))
    )
    rows = top.select(*keys, item).join(vectors, on=item, how="left")
    bad = pl.col("__prk_bad").fill_null(True)
    per_user = rows.group_by(keys).agg(
        __prk_nbad=f64(bad).sum(), __prk_item=pl.col(item).filter(bad).min()
    )
    label = f.label(item)

    def message(bad_rows: pl.DataFrame) -> str:
        return (
            f"metric {metric!r}: {int(bad_rows.get_column('__prk_nbad').sum())} item(s) in "
            f"the top k of {bad_rows.height} user(s) have no usable feature vector in "
            f"column {features!r} of items= (missing, null, empty, or with a null, NaN or "
            f"infinite component), e.g. {label} {examples(bad_rows.get_column('__prk_item'))}"
        )

    # Every user of the result passes through the check (it runs in the plan).
    users = fail_if(per_user, "__prk_nbad", message).select(keys)
    dots = (
        rows.select(*keys, item, "__prk_v", dims)
        .explode("__prk_v", "__prk_d")
        .join(centroid, on=[user, "__prk_d"], how="inner")
        .group_by([*keys, item])
        .agg((pl.col("__prk_v") * pl.col("__prk_m")).sum().alias("__prk_dot"))
    )
    return (
        users.join(rows.select(*keys, item), on=keys, how="inner", nulls_equal=True)
        .join(n_hist, on=user, how="inner", nulls_equal=True)
        .join(dots, on=[*keys, item], how="left", nulls_equal=True)
        .select(
            *keys,
            item,
            (pl.col("__prk_dot").fill_null(0.0) / pl.col("__prk_nh")).alias(_SIM),
        )
    )


def _history_mean(
    f: Features,
    k: int | None,
    metric: str,
    similarity: str,
    features: str,
    weight: pl.Expr,
) -> FramePlan:
    """Per user: mean over the top k of ``(1 - mean similarity to H_u) * weight``."""
    keys, item = f.keys, f.cols.item
    p = f.p_in(k)
    f.history(metric)  # the error at the call when history= is missing
    if similarity == "features":
        f.item_table(metric)

    def build(rows: pl.LazyFrame) -> pl.LazyFrame:
        top = rows.filter(p > 0).select(*keys, item, p.alias(_P), weight.alias("__prk_w"))
        sims = _history_similarity(f, metric, top, similarity, features)
        joined = top.join(sims, on=[*keys, item], how="inner")
        term = (1.0 - pl.col(_SIM)) * pl.col("__prk_w")
        return joined.group_by(keys).agg(
            ((pl.col(_P) * term).sum() / pl.col(_P).sum()).alias("value")
        )

    return FramePlan(build)


# --------------------------------------------------------------------------- serendipity
@register(
    "serendipity",
    absolute_positions=True,
    family="serendipity",
    normalized=False,
    needs=("n_items",),
    summary="Relevant items of the top k that a primitive recommender would not have shown.",
    definition=(
        "mode=popularity (RecTools Serendipity): mean over the top k of max(r(i) - rank, "
        "0) / N · [rel >= rel], r(i) the dense rank of the item's number of history= rows "
        "(N + 1 if absent), N = n_items (= max(p(i) - pu(i), 0) with p = (N + 1 - rank) / "
        "N, pu = (N + 1 - r) / N). mode=history (MS Recommenders user_serendipity): mean "
        "over the top k of (1 - mean over the user's history rows j of sim(i, j)) · [rel "
        ">= rel], sim the co-occurrence cosine c(i, j) / sqrt(c(i) c(j)) in history= "
        "(similarity=cooccurrence) or the cosine of the features vectors of items= "
        "(similarity=features); null without history. mode=base: share of the top k that "
        "is relevant and not in the baseline's top k (base= rank column). Expected ties: "
        "exact expectation. Null for an empty list."
    ),
)
def _serendipity(
    f: Features,
    k: int | None,
    *,
    mode: SerendipityMode = "popularity",
    rel: Rel = 1.0,
    similarity: Similarity = "cooccurrence",
    features: Features_ = "features",
    base: Base = "base_rank",
) -> FramePlan:
    metric = "serendipity"
    is_rel = f.is_rel(rel)
    if mode == "history":
        return _history_mean(f, k, metric, similarity, features, is_rel)
    if mode == "base":
        return _base_share(f, k, metric, base, is_rel, unexpected=True, divide_by_k=False)
    return _popularity_serendipity(f, k, is_rel)


def _popularity_serendipity(f: Features, k: int | None, is_rel: pl.Expr) -> FramePlan:
    keys, item = f.keys, f.cols.item
    n_items = f.n_items
    p = f.p_in(k)
    a = f.a
    n = f.n
    ret = f.ret
    # The last position of the row's tie group that counts: within the list, the cutoff.
    last = a + n - 1 if k is None else pl.min_horizontal(a + n - 1, pl.lit(k, pl.Int64))
    history = f.history("serendipity")

    def build(rows: pl.LazyFrame) -> pl.LazyFrame:
        counts = history.group_by(item).agg(pl.len().alias("__prk_c"))
        ranks = counts.select(
            item, f64(pl.col("__prk_c").rank("dense", descending=True)).alias("__prk_r")
        )
        top = rows.filter(p > 0).select(
            *keys,
            item,
            p.alias(_P),
            f64(a).alias("__prk_a"),
            f64(n).alias("__prk_n"),
            f64(last).alias("__prk_last"),
            (is_rel * f64(ret)).alias("__prk_rel"),
        )
        r = pl.col("__prk_r").fill_null(n_items + 1.0)
        # Sum over the positions q = a .. m of (r - q), m = min(last, r - 1).
        m = pl.min_horizontal(pl.col("__prk_last"), r - 1.0)
        cnt = (m - pl.col("__prk_a") + 1.0).clip(0.0, None)
        total = cnt * r - (pl.col("__prk_a") + m) * cnt / 2.0
        term = pl.col("__prk_rel") * total / (pl.col("__prk_n") * n_items)
        joined = top.join(ranks, on=item, how="left")
        return joined.group_by(keys).agg((term.sum() / pl.col(_P).sum()).alias("value"))

    return FramePlan(build)


def _base_share(
    f: Features,
    k: int | None,
    metric: str,
    base: str,
    weight: pl.Expr,
    *,
    unexpected: bool,
    divide_by_k: bool,
) -> FramePlan:
    """Per user: sum over the top k of ``weight * [in / not in the base top k]`` / L or k."""
    keys, item = f.keys, f.cols.item
    p = f.p_in(k)
    base_rank = f.column(base)
    limit = float("inf") if k is None else float(k)
    in_base = f64(base_rank.is_not_null() & (f64(base_rank) <= limit))
    flag = 1.0 - in_base if unexpected else in_base
    bad = base_rank.is_not_null() & ~(f64(base_rank) >= 1.0)

    def build(rows: pl.LazyFrame) -> pl.LazyFrame:
        per_user = (
            rows.filter(p > 0)
            .group_by(keys)
            .agg(
                num=(p * weight * flag).sum(),
                den=p.sum(),
                bad=f64(bad).sum(),
                bad_item=pl.col(item).filter(bad).min(),
            )
        )

        def message(rows_bad: pl.DataFrame) -> str:
            return (
                f"metric {metric!r}: {int(rows_bad.get_column('bad').sum())} item(s) in the "
                f"top k of {rows_bad.height} user(s) have a baseline rank (column {base!r}) "
                f"that is not a number >= 1, e.g. {f.label(item)} "
                f"{examples(rows_bad.get_column('bad_item'))}"
            )

        den = pl.lit(limit) if divide_by_k else pl.col("den")
        checked = fail_if(per_user, "bad", message)
        return checked.select(*keys, (pl.col("num") / den).alias("value"))

    return FramePlan(build)


# --------------------------------------------------------------------------- unexpectedness
@register(
    "unexpectedness",
    absolute_positions=True,
    family="serendipity",
    normalized=False,
    summary="Share of the top k a baseline did not recommend, or its distance to the history.",
    definition=(
        "mode=base (RePlay Unexpectedness): 1 - #items of the top k within the baseline's "
        "top k (base= column: the item's rank in the baseline's list, null if absent) / k "
        "(denominator=k; denominator=list: / min(k, #recommended); without @k: / the "
        "list size). "
        "mode=history (item distance): mean over the top k of 1 - mean over the user's "
        "history= rows j of sim(i, j), similarity as for serendipity; null without "
        "history. Expected ties: exact expectation. Null for an empty list."
    ),
)
def _unexpectedness(
    f: Features,
    k: int | None,
    *,
    mode: UnexpectednessMode = "base",
    base: Base = "base_rank",
    denominator: Annotated[
        Literal["k", "list"],
        "mode=base: divide by k (RePlay; a short list counts its empty slots as expected) "
        "or by the list size",
    ] = "k",
    similarity: Similarity = "cooccurrence",
    features: Features_ = "features",
) -> FramePlan:
    metric = "unexpectedness"
    if mode == "history":
        return _history_mean(f, k, metric, similarity, features, pl.lit(1.0))
    # Without a cutoff the whole list is compared: k is its length.
    share = _base_share(
        f,
        k,
        metric,
        base,
        pl.lit(1.0),
        unexpected=False,
        divide_by_k=denominator == "k" and k is not None,
    )

    def build(rows: pl.LazyFrame) -> pl.LazyFrame:
        return share.build(rows).with_columns((1.0 - pl.col("value")).alias("value"))

    return FramePlan(build)
