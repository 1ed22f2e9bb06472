"""Diversity of the recommendation lists: between users' lists and within each list.

* ``inter_list_diversity@k`` (global: one value per ``by`` group): the mean cosine
  distance between the binary top-k vectors of every pair of users with a non-empty
  list (Jurity's Inter-List Diversity). Jurity samples users (10 runs of 10,000)
  because the pairwise sum is O(U²); here it is exact in O(rows): with
  ``w_u = 1 / sqrt(|R_u|)``, ``cos(u, v) = w_u w_v |R_u ∩ R_v|``, so the sum over
  pairs of users is ``sum over items of ((sum_u w_u)² - sum_u w_u²) / 2`` over the
  users u whose top k holds the item. Its partials are those per-item sums, which
  merge across buckets exactly. Jurity's sampled estimate, for comparison, is
  :func:`polars_rankeval.analysis.sampled_diversity.inter_list_diversity_sampled`.
* ``intra_list_diversity(features=<column>)@k`` (per user): the mean cosine distance
  between the feature vectors of every pair of items in the user's top k (Jurity's
  Intra-List Diversity), in O(k·d) per user from the sum of the unit vectors:
  ``sum_{p<q} cos(v_p, v_q) = (‖sum_p v̂_p‖² - sum_p ‖v̂_p‖²) / 2``. Other distances
  (``distance=euclidean|hamming|jaccard``; Hamming counts the differing components as
  RecTools does) are summed over the explicit pairs of a list, O(k²·d) per user.

**Feature vectors** come from a column of the data or of the ``items=`` side table
(one row per item), named by ``features=`` (default ``"features"``): a List or Array
of numbers, or a Struct of numeric fields (pack separate columns with
``pl.concat_arr`` or ``pl.struct``). Every item in a top k needs a vector of finite
numbers of the same length within a list: an item without one (missing from
``items=``, a null, an empty list, a null element, NaN or infinity) raises a
``ValueError`` naming examples. A zero vector has cosine similarity 0 with every
item, so distance 1 (scikit-learn's convention, which Jurity uses).

**Undefined.** Inter-list: null with fewer than 2 users with a non-empty list.
Intra-list: null for a user whose top k holds fewer than 2 items (Jurity leaves such
users out of the mean; ``empty="skip"`` does the same).

**Ties.** Under ``ties="expected"`` both are the exact expectations over the
orderings of tied scores. The list sizes ``min(k, #recommended)`` do not depend on
the order, so the distances' denominators and weights are fixed; the memberships of
different users are independent, so inter-list uses ``P(i in R_u) P(i in R_v)``;
within one list the only dependent pairs are those of the tie group straddling the
cutoff (``s`` of its ``n`` items make the list: both of a pair with probability
``s(s-1) / (n(n-1))`` instead of ``(s/n)²``), a correction computed from that
group's own sum of unit vectors.

**Users.** Like every global metric these aggregate over the rows of the evaluated
users: ``users="truth"`` (the default) keeps users with at least one judged row; pass
``users="recs"`` to include every user with a recommendation, as Jurity does.

Examples
--------
>>> import polars as pl
>>> import polars_rankeval as prk
>>> recs = pl.DataFrame({
...     "user": [1, 1, 2, 2, 3, 3],
...     "item": ["a", "b", "a", "c", "c", "d"],
...     "score": [2.0, 1.0, 2.0, 1.0, 2.0, 1.0],
...     "relevance": [None] * 6,
... }, schema_overrides={"relevance": pl.Int64})
>>> items = pl.DataFrame({
...     "item": ["a", "b", "c", "d"],
...     "features": [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [1.0, 0.0]],
... })
>>> prk.evaluate(
...     recs, ["inter_list_diversity@2", "intra_list_diversity@2"], items=items, users="recs"
... ).drop("n_users(intra_list_diversity@2)")
shape: (1, 4)
┌────────────────────────┬────────────────────────┬─────────┬───────────┐
│ inter_list_diversity@2 ┆ intra_list_diversity@2 ┆ n_users ┆ n_skipped │
│ ---                    ┆ ---                    ┆ ---     ┆ ---       │
│ f64                    ┆ f64                    ┆ i64     ┆ i64       │
╞════════════════════════╪════════════════════════╪═════════╪═══════════╡
│ 0.666667               ┆ 0.528595               ┆ 3       ┆ 0         │
└────────────────────────┴────────────────────────┴─────────┴───────────┘

Lists {a, b}, {a, c}, {c, d}: the pairs (1, 2) and (2, 3) share one of two items
(cosine 1/2), (1, 3) none: 1 - (1/2 + 1/2 + 0) / 3 = 2/3. Within the lists:
cos(a, b) = 0, cos(a, c) = cos(c, d) = 1/√2: (1 + 2 (1 - 1/√2)) / 3.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Literal

import polars as pl

from polars_rankeval.metrics._checks import examples, fail_if
from polars_rankeval.metrics._common import defined_if, f64, partial_sums
from polars_rankeval.metrics.features import Features
from polars_rankeval.metrics.params import ColumnOption
from polars_rankeval.metrics.registry import register
from polars_rankeval.metrics.spec import FramePlan, GlobalPlan

_P, _G, _LAM, _V = "__prk_div_p", "__prk_div_g", "__prk_div_lam", "__prk_div_v"

Distance = Annotated[
    Literal["cosine", "euclidean", "hamming", "jaccard", "cooccurrence"],
    "distance between two items' vectors: 1 - cosine similarity (Jurity's default, "
    "MS Recommenders with item features), Euclidean, Hamming = the number of "
    "differing components (RecTools PairwiseHammingDistanceCalculator; scikit-learn's "
    "'hamming' divides it by the length), or Jaccard of the non-zero components "
    "(scikit-learn's boolean 'jaccard'; 0 for two zero vectors); or, without vectors, "
    "1 - the co-occurrence cosine c(i, j) / sqrt(c(i) c(j)) of the items in history= "
    "(MS Recommenders diversity; 1 for items that never co-occur)",
]
Short = Annotated[
    Literal["undefined", "zero"],
    "a top k of a single item (no pair): undefined (null; Jurity, MS Recommenders) or "
    "0 (RecTools IntraListDiversity, which averages it in)",
]


# --------------------------------------------------------------------------- inter-list
@register(
    "inter_list_diversity",
    family="diversity",
    scope="global",
    normalized=False,
    summary="Mean cosine distance between the top-k lists of every pair of users (exact).",
    definition=(
        "1 - (sum over pairs of users {u, v} with non-empty top k of |R_u ∩ R_v| / "
        "sqrt(|R_u| |R_v|)) / (N (N - 1) / 2), N = #users with a non-empty top k (Jurity's "
        "inter-list diversity, computed exactly in O(rows) as sum over items of "
        "((sum w_u)² - sum w_u²) / 2, w_u = 1 / sqrt(|R_u|)). Expected ties: exact "
        "expectation. Null when N < 2."
    ),
)
def _inter_list_diversity(f: Features, k: int | None) -> GlobalPlan:
    by, item = f.by, f.cols.item
    p = f.p_in(k)
    size = f.user_total(p, f"list_size@{k}")
    w = pl.when(size > 0).then(1.0 / size.sqrt()).otherwise(0.0)
    pw = p * w
    # s1, s2: the item's sum of weights and of squared weights over the users who got
    # it (their expectations under ties); sn sums p / |R_u| to the number of users.
    aggs = [pw.sum().alias("s1"), (pw * pw).sum().alias("s2"), (pw * w).sum().alias("sn")]

    def partial(rows: pl.LazyFrame) -> pl.LazyFrame:
        return partial_sums(rows.filter(p > 0), [*by, item], aggs)

    def finalize(merged: pl.LazyFrame, by_cols: list[str]) -> pl.LazyFrame:
        return _inter_value(merged, by_cols)

    return GlobalPlan(partial, (item,), {"s1": "sum", "s2": "sum", "sn": "sum"}, finalize)


def _inter_value(merged: pl.LazyFrame, by_cols: list[str]) -> pl.LazyFrame:
    cos = ((pl.col("s1") * pl.col("s1") - pl.col("s2")) / 2.0).sum()
    n = pl.col("sn").sum().round()
    value = defined_if(n >= 2, 1.0 - cos / (n * (n - 1.0) / 2.0)).alias("value")
    if by_cols:
        return merged.group_by(by_cols).agg(value).sort(by_cols)
    return merged.select(value)


# --------------------------------------------------------------------------- intra-list
@register(
    "intra_list_diversity",
    absolute_positions=True,
    family="diversity",
    normalized=False,
    summary="Mean distance between the feature vectors of the items of a top k.",
    definition=(
        "mean over the m (m - 1) / 2 pairs of items {p, q} of the top k of d(v_p, v_q), "
        "m = min(k, #recommended), v = the features column (a List, Array or Struct of "
        "numbers, from the data or items=). distance=cosine (default; Jurity's intra-list "
        "diversity, MS Recommenders diversity with item features): 1 - cos, in O(k·d) as "
        "(‖sum v̂‖² - sum ‖v̂‖²) / 2, a zero vector has cosine 0; euclidean; hamming: the "
        "number of differing components (RecTools); jaccard of the non-zero components "
        "(0 for two zero vectors); those three from the pairs, O(k²·d); cooccurrence: 1 - "
        "c(i, j) / sqrt(c(i) c(j)) with c counting the rows of history= (c(i, j): pairs "
        "of rows of one user; MS Recommenders diversity), no vectors. An item of a top "
        "k without a finite vector is an error. Expected ties: exact expectation. Null "
        "when m < 2 (short=undefined), or 0 (short=zero: RecTools IntraListDiversity, "
        "which averages such a user in); a user without an item in the top k is null."
    ),
)
def _intra_list_diversity(
    f: Features,
    k: int | None,
    *,
    features: Annotated[
        str,
        ColumnOption(when=(("distance", ("cosine", "euclidean", "hamming", "jaccard")),)),
        "column of the item feature vectors (from the data or items=)",
    ] = "features",
    distance: Distance = "cosine",
    short: Short = "undefined",
) -> FramePlan:
    keys, item = f.keys, f.cols.item
    p = f.p_in(k)
    if distance == "cooccurrence":
        history = f.history("intra_list_diversity").select(keys[-1], item)
    else:
        f.column(features)
    source = f.column_name(features)
    labels = (f.label(item), f.label(keys[-1]))
    straddling = f.expected and k is not None
    if f.expected and k is not None:  # = straddling (spelled out for the type checker)
        # The tie group straddling the cutoff: s of its n items make the list.
        n = f64(f.n)
        s = f64(f.within(k))
        in_group = (p > 0) & (p < 1)
        g = f64(in_group)
        both = s * (s - 1.0) / (n * (n - 1.0))  # P(two given items of the group both make it)
        lam = pl.when(in_group).then(both - (s / n) ** 2).otherwise(0.0)
    else:
        g, lam = pl.lit(0.0), pl.lit(0.0)

    def build(rows: pl.LazyFrame) -> pl.LazyFrame:
        if distance == "cooccurrence":
            top = rows.filter(p > 0).select(*keys, item, p.alias(_P), g.alias(_G), lam.alias(_LAM))
            out = _cooccurrence_value(top, keys, item, history)
            if short == "zero":
                out = out.with_columns(pl.col("value").fill_null(0.0))
            return out
        dtype = rows.collect_schema()[source]
        top = rows.filter(p > 0).select(
            *keys, item, p.alias(_P), g.alias(_G), lam.alias(_LAM), pl.col(source).alias(_V)
        )
        if distance == "cosine":
            out = _intra_value(top, keys, item, features, dtype, straddling, labels)
        else:
            out = _pairwise_value(top, keys, item, features, dtype, distance, labels)
        if short == "zero":  # a top k of one item (no pair) scores 0 (RecTools)
            out = out.with_columns(pl.col("value").fill_null(0.0))
        return out

    return FramePlan(build)


def _vector_parts(
    features: str, dtype: pl.DataType
) -> tuple[pl.Expr, pl.Expr, pl.Expr, Callable[[pl.Expr], list[pl.Expr]] | None]:
    """``(norm², length, has a null component, scaled components)`` of the vectors.

    Arrays and structs have a fixed width: their components become columns (summed per
    user by a plain ``group_by``); a list's width is only known from the data, so it is
    exploded instead (``None``).
    """
    v = pl.col(_V)
    if isinstance(dtype, pl.Array) and len(dtype.shape) == 1 and dtype.inner.is_numeric():  # type: ignore[union-attr]
        width = dtype.size
        vec = v.cast(pl.Array(pl.Float64, width))
        holes = vec.arr.eval(pl.element().is_null()).arr.any()
        length = pl.lit(width, dtype=pl.UInt32)

        def array_parts(scale: pl.Expr) -> list[pl.Expr]:
            return [(vec.arr.get(i) * scale).alias(f"__prk_c{i}") for i in range(width)]

        return (vec * vec).arr.sum(), length, holes, array_parts
    if isinstance(dtype, pl.Struct) and all(fld.dtype.is_numeric() for fld in dtype.fields):
        comps = [f64(v.struct.field(fld.name)) for fld in dtype.fields]
        norm2 = pl.sum_horizontal(c * c for c in comps)
        holes = pl.any_horizontal(c.is_null() for c in comps)
        length = pl.lit(len(comps), dtype=pl.UInt32)

        def struct_parts(scale: pl.Expr) -> list[pl.Expr]:
            return [(c * scale).alias(f"__prk_c{i}") for i, c in enumerate(comps)]

        return norm2, length, holes, struct_parts
    if isinstance(dtype, pl.List) and dtype.inner is not None and dtype.inner.is_numeric():
        vec = v.cast(pl.List(pl.Float64))
        length = vec.list.len()
        return (vec * vec).list.sum(), length, vec.list.drop_nulls().list.len() < length, None
    msg = (
        f"column {features!r} must hold numeric feature vectors (a List or Array of numbers, "
        f"or a Struct of numeric fields), got {dtype}"
    )
    raise TypeError(msg)


def _squared_norm_of_sums(
    rows: pl.LazyFrame,
    keys: list[str],
    scale: pl.Expr,
    parts: Callable[[pl.Expr], list[pl.Expr]] | None,
) -> pl.LazyFrame:
    """Per user: ``‖sum over rows of scale * v‖²``."""
    if parts is not None:
        columns = parts(scale)
        summed = rows.select(*keys, *columns).group_by(keys).agg(pl.exclude(keys).sum())
        square = pl.sum_horizontal(pl.exclude(keys) * pl.exclude(keys))
        return summed.select(*keys, square.alias("value"))
    # A list: one row per (user, component).
    x = (pl.col(_V).cast(pl.List(pl.Float64)) * scale).alias(_V)
    dims = pl.int_ranges(0, pl.col(_V).list.len()).alias("__prk_dim")
    flat = rows.select(*keys, x, dims).explode([_V, "__prk_dim"])
    per_dim = flat.group_by([*keys, "__prk_dim"]).agg(pl.col(_V).sum())
    return per_dim.group_by(keys).agg((pl.col(_V) * pl.col(_V)).sum().alias("value"))


def _intra_value(
    top: pl.LazyFrame,
    keys: list[str],
    item: str,
    features: str,
    dtype: pl.DataType,
    straddling: bool,
    labels: tuple[str, str],
) -> pl.LazyFrame:
    """``labels``: the user's names of the item and user columns, for error messages."""
    p, g, lam = pl.col(_P), pl.col(_G), pl.col(_LAM)
    norm2, length, holes, parts = _vector_parts(features, dtype)
    bad = norm2.is_null() | ~norm2.is_finite() | (length == 0) | holes
    inv = pl.when(bad | (norm2 <= 0)).then(0.0).otherwise(1.0 / norm2.sqrt())
    unit2 = f64(~bad & (norm2 > 0))
    top = top.with_columns(__prk_inv=inv, __prk_unit2=unit2, __prk_bad=bad, __prk_len=length)
    inv_c, unit2_c, bad_c = pl.col("__prk_inv"), pl.col("__prk_unit2"), pl.col("__prk_bad")
    scalars = top.group_by(keys).agg(
        m=p.sum().round(),
        q=(p * p * unit2_c).sum(),
        qg=(g * unit2_c).sum(),
        # lambda < 0 on the straddling group's rows (s < n), 0 elsewhere
        lam=lam.min(),
        bad=f64(bad_c).sum(),
        bad_item=pl.col(item).filter(bad_c).min(),
        lengths=pl.col("__prk_len").filter(~bad_c).n_unique(),
    )
    clean = top.filter(~bad_c)
    # ‖sum p v̂‖² over the list and ‖sum v̂‖² over the tie group straddling the cutoff.
    sums = _squared_norm_of_sums(clean, keys, p * inv_c, parts).rename({"value": "S2"})
    if straddling:
        group = _squared_norm_of_sums(clean.filter(g > 0), keys, inv_c, parts)
        sums = sums.join(group.rename({"value": "SG2"}), on=keys, how="left", nulls_equal=True)
    else:
        sums = sums.with_columns(SG2=pl.lit(0.0))
    out = scalars.join(sums, on=keys, how="left", nulls_equal=True).with_columns(
        pl.col("S2", "SG2").fill_null(0.0),
        mixed=f64(pl.col("lengths") > 1),
    )
    out = fail_if(out, "bad", _missing_message(features, labels[0]))
    out = fail_if(out, "mixed", _mixed_message(features, keys[-1], labels[1]))
    m = pl.col("m")
    within = (pl.col("S2") - pl.col("q")) / 2.0
    correction = pl.col("lam") * (pl.col("SG2") - pl.col("qg")) / 2.0
    value = defined_if(m >= 2, 1.0 - (within + correction) / (m * (m - 1.0) / 2.0))
    return out.select(*keys, value.alias("value"))


def _as_list(features: str, dtype: pl.DataType) -> pl.Expr:
    """The vectors as ``List(Float64)`` (arrays and structs converted)."""
    v = pl.col(_V)
    if isinstance(dtype, pl.Array):
        return v.cast(pl.Array(pl.Float64, dtype.size)).arr.to_list()  # type: ignore[union-attr]
    if isinstance(dtype, pl.Struct):
        return pl.concat_list([f64(v.struct.field(fld.name)) for fld in dtype.fields])
    return v.cast(pl.List(pl.Float64))


def _pair_distance(a: pl.Expr, b: pl.Expr, distance: str) -> pl.Expr:
    diff = a - b
    if distance == "euclidean":
        return (diff * diff).list.sum().sqrt()
    if distance == "hamming":
        return diff.list.eval(pl.element() != 0).list.sum().cast(pl.Float64)
    # jaccard of the non-zero components
    a01 = a.list.eval(f64(pl.element() != 0))
    b01 = b.list.eval(f64(pl.element() != 0))
    both = (a01 * b01).list.sum()
    either = (a01 + b01 - a01 * b01).list.sum()
    return pl.when(either > 0).then(1.0 - both / either).otherwise(0.0)


def _pairwise_value(
    top: pl.LazyFrame,
    keys: list[str],
    item: str,
    features: str,
    dtype: pl.DataType,
    distance: str,
    labels: tuple[str, str],
) -> pl.LazyFrame:
    """Mean distance over the pairs of a list, from an explicit self-join (O(k² d)).

    Under expected ties a pair's weight is ``P(both in the top k)``: ``p_a p_b``, plus
    ``lambda`` when both are in the tie group straddling the cutoff.
    """
    p, g, lam = pl.col(_P), pl.col(_G), pl.col(_LAM)
    norm2, length, holes, _ = _vector_parts(features, dtype)
    bad = norm2.is_null() | ~norm2.is_finite() | (length == 0) | holes
    top = top.with_columns(__prk_bad=bad, __prk_len=length)
    bad_c = pl.col("__prk_bad")
    scalars = top.group_by(keys).agg(
        m=p.sum().round(),
        bad=f64(bad_c).sum(),
        bad_item=pl.col(item).filter(bad_c).min(),
        lengths=pl.col("__prk_len").filter(~bad_c).n_unique(),
    )
    clean = top.filter(~bad_c).select(*keys, item, p, g, lam, _as_list(features, dtype).alias(_V))
    right = clean.rename({item: "__prk_b", _P: "__prk_pb", _G: "__prk_gb", _V: "__prk_vb"}).drop(
        _LAM
    )
    pairs = clean.join(right, on=keys, how="inner", nulls_equal=True).filter(
        # pairs of different lengths are reported by the check below, not computed
        (pl.col(item) < pl.col("__prk_b"))
        & (pl.col(_V).list.len() == pl.col("__prk_vb").list.len())
    )
    weight = p * pl.col("__prk_pb") + g * pl.col("__prk_gb") * lam
    d = _pair_distance(pl.col(_V), pl.col("__prk_vb"), distance)
    sums = pairs.group_by(keys).agg((weight * d).sum().alias("D"))
    out = scalars.join(sums, on=keys, how="left", nulls_equal=True).with_columns(
        pl.col("D").fill_null(0.0), mixed=f64(pl.col("lengths") > 1)
    )
    out = fail_if(out, "bad", _missing_message(features, labels[0]))
    out = fail_if(out, "mixed", _mixed_message(features, keys[-1], labels[1]))
    m = pl.col("m")
    value = defined_if(m >= 2, pl.col("D") / (m * (m - 1.0) / 2.0))
    return out.select(*keys, value.alias("value"))


def _cooccurrence_value(
    top: pl.LazyFrame, keys: list[str], item: str, history: pl.LazyFrame
) -> pl.LazyFrame:
    """Mean ``1 - co-occurrence cosine`` over the pairs of a list (weights as above)."""
    # Imported here: the registry keeps the import order of the family modules.
    from polars_rankeval.metrics.serendipity import cooccurrence_cosine

    p, g, lam = pl.col(_P), pl.col(_G), pl.col(_LAM)
    scalars = top.group_by(keys).agg(m=p.sum().round())
    right = top.rename({item: "__prk_b", _P: "__prk_pb", _G: "__prk_gb"}).drop(_LAM)
    pairs = top.join(right, on=keys, how="inner", nulls_equal=True).filter(
        pl.col(item) < pl.col("__prk_b")
    )
    sims = cooccurrence_cosine(
        history, keys[-1], item, top.select(item).unique(), "__prk_sim", within=True
    ).rename({"__prk_j": "__prk_b"})
    weight = p * pl.col("__prk_pb") + g * pl.col("__prk_gb") * lam
    d = 1.0 - pl.col("__prk_sim").fill_null(0.0)
    sums = (
        pairs.join(sims, on=[item, "__prk_b"], how="left")
        .group_by(keys)
        .agg((weight * d).sum().alias("D"))
    )
    out = scalars.join(sums, on=keys, how="left", nulls_equal=True)
    m = pl.col("m")
    value = defined_if(m >= 2, pl.col("D").fill_null(0.0) / (m * (m - 1.0) / 2.0))
    return out.select(*keys, value.alias("value"))


def _missing_message(features: str, item: str) -> Callable[[pl.DataFrame], str]:
    def build(bad: pl.DataFrame) -> str:
        return (
            f"metric 'intra_list_diversity': {int(bad.get_column('bad').sum())} item(s) in "
            f"the top k of {bad.height} user(s) have no usable feature vector in column "
            f"{features!r} (missing from items=, null, empty, or with a null, NaN or "
            f"infinite component), e.g. {item} {examples(bad.get_column('bad_item'))}"
        )

    return build


def _mixed_message(features: str, user: str, label: str) -> Callable[[pl.DataFrame], str]:
    """``user``: the user column of the rows; ``label``: the user's name for it."""

    def build(bad: pl.DataFrame) -> str:
        return (
            f"metric 'intra_list_diversity': the feature vectors (column {features!r}) of "
            f"the top k of {bad.height} user(s) differ in length, e.g. {label} "
            f"{examples(bad.get_column(user))}"
        )

    return build
