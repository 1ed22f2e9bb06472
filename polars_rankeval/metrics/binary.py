"""Binary-relevance ranking metrics.

An item is relevant when its relevance is at least ``rel`` (inclusive, default 1).
Every metric returns null for a user without any relevant item (undefined; the
``empty=`` policy of :func:`polars_rankeval.evaluate` decides what that becomes).
Under ``ties="expected"`` each value is the exact expectation over all orderings of
tied scores; the closed forms are noted per kernel.
"""

from __future__ import annotations

from typing import Annotated, Literal

import polars as pl

from polars_rankeval.metrics._common import (
    Rel,
    defined_if,
    f64,
    hits,
    list_size,
    num_relevant,
    safe_div,
)
from polars_rankeval.metrics.features import Features, comb_ratio
from polars_rankeval.metrics.head_form import (
    HeadForm,
    HeadReader,
    Options,
    Quantity,
    first_within,
    head_size,
    if_relevant,
)
from polars_rankeval.metrics.params import Interval
from polars_rankeval.metrics.registry import register
from polars_rankeval.metrics.sampled_estimators import correctable
from polars_rankeval.metrics.spec import Sampled

PrecisionDenominator = Annotated[
    Literal["k", "retrieved"],
    "divide by k (trec_eval P_k) or by min(k, #recommended) (Hivemall, Jurity)",
]
APDenominator = Annotated[
    Literal["relevant", "min_k_relevant", "k", "hits", "min_list_relevant"],
    "divide by #relevant (trec_eval map), min(k, #relevant) (Jurity, RePlay, RecBole), "
    "k (RecTools divide_by_k), the hits in the top k (Hivemall, torchmetrics AP@k) or "
    "min(#relevant, k, #recommended) (LensKit)",
]
APTieGroup = Annotated[
    Literal["ordered", "threshold"],
    "a tie group of scores is ordered by the tie policy (ordered) or is one threshold: "
    "each relevant item gets the precision at the end of its group (scikit-learn "
    "average_precision_score, Cornac MAP; no cutoff)",
]
AUCDegenerate = Annotated[
    Literal["zero_one", "half", "zero"],
    "auc@k of a head without a relevant or without a non-relevant item: 0 or 1 (RePlay), "
    "1/2 (Hivemall) or 0 (torchmetrics)",
]
NoHit = Annotated[
    Literal["zero", "undefined"],
    "a user without a hit in the first min(k, R) ranks scores 0 (zero) or is undefined, "
    "skipped under empty='skip' (undefined: MS Recommenders r_precision_at_k; "
    "deterministic tie policies only)",
]
Mult = Annotated[
    float,
    Interval(0, None, closed="neither"),
    "multiple of R to cut at: precision at c = floor(mult * R + 0.9) (Rprec_mult_<mult>)",
]


# --------------------------------------------------------------------------- kernels
def _precision_head(h: HeadReader, o: Options, k: int) -> pl.Expr:
    size = head_size(h, o["denominator"], k)
    hits = h.sum_at(Quantity("hits", float(o["rel"])), k)
    return if_relevant(h, float(o["rel"]), pl.when(size > 0).then(hits / size).otherwise(0.0))


_PRECISION_HEAD = HeadForm(
    {"rel": None, "denominator": frozenset({"k", "retrieved"})},
    lambda o: (Quantity("hits", float(o["rel"])),),
    _precision_head,
)


@register(
    "precision",
    head=_PRECISION_HEAD,
    absolute_positions=True,
    defined="truth",
    family="binary",
    aliases=("P",),
    summary="Relevant items in the top k over k.",
    definition=(
        "hits@k / k (trec_eval P_k: a list shorter than k is padded with non-relevant "
        "items); denominator=retrieved divides by min(k, #recommended) instead "
        "(Hivemall, Jurity). Without @k: hits / #recommended. 0 when nothing is recommended."
    ),
    doc="""
    Precision at k: relevant items in the top k, divided by k.

    Examples
    --------
    Hivemall's example: recommendations 1, 3, 2, 6 for a user who likes 1, 2 and 4.

    >>> import polars as pl
    >>> import polars_rankeval as prk
    >>> df = pl.DataFrame({
    ...     "user": [1, 1, 1, 1, 1],
    ...     "item": [1, 3, 2, 6, 4],
    ...     "score": [10.0, 8.0, 6.0, 2.0, None],
    ...     "relevance": [1, 0, 1, 0, 1],
    ... })
    >>> df.group_by("user").agg(prk.precision(2), prk.precision(4))
    shape: (1, 3)
    ┌──────┬─────────────┬─────────────┐
    │ user ┆ precision@2 ┆ precision@4 │
    │ ---  ┆ ---         ┆ ---         │
    │ i64  ┆ f64         ┆ f64         │
    ╞══════╪═════════════╪═════════════╡
    │ 1    ┆ 0.5         ┆ 0.5         │
    └──────┴─────────────┴─────────────┘

    With ties the default is the expected value over the tied orderings: two tied
    items, one relevant, give precision@1 = 1/2.

    >>> tied = pl.DataFrame({"user": [1, 1], "item": [1, 2], "score": [1.0, 1.0],
    ...                      "relevance": [1, 0]})
    >>> tied.select(prk.precision(1)).item(), tied.select(prk.precision(1, ties="item_desc")).item()
    (0.5, 0.0)
    """,
)
@correctable("precision", Sampled("precision", cutoff="required"))
def _precision(
    f: Features, k: int | None, *, rel: Rel = 1.0, denominator: PrecisionDenominator = "k"
) -> pl.Expr:
    value = safe_div(hits(f, k, rel), list_size(f, k, denominator))
    return defined_if(num_relevant(f, rel) > 0, value)


def _recall_head(h: HeadReader, o: Options, k: int) -> pl.Expr:
    t = float(o["rel"])
    return if_relevant(h, t, h.sum_at(Quantity("hits", t), k) / h.n_relevant(t))


_RECALL_HEAD = HeadForm({"rel": None}, lambda o: (Quantity("hits", float(o["rel"])),), _recall_head)


@register(
    "recall",
    head=_RECALL_HEAD,
    absolute_positions=True,
    repeated_ranks=True,
    defined="truth",
    family="binary",
    summary="Relevant items in the top k over all relevant items.",
    definition=(
        "hits@k / #relevant, relevant items never recommended included (trec_eval recall_k)."
    ),
    doc="""
    Recall at k: relevant items in the top k over all of the user's relevant items.

    Relevant items that were never recommended (null score) count in the denominator.

    Examples
    --------
    >>> import polars as pl
    >>> import polars_rankeval as prk
    >>> df = pl.DataFrame({"user": [1] * 5, "item": [1, 3, 2, 6, 4],
    ...                    "score": [10.0, 8.0, 6.0, 2.0, None], "relevance": [1, 0, 1, 0, 1]})
    >>> df.select(prk.recall(2), prk.recall(4))  # 1/3 and 2/3
    shape: (1, 2)
    ┌──────────┬──────────┐
    │ recall@2 ┆ recall@4 │
    │ ---      ┆ ---      │
    │ f64      ┆ f64      │
    ╞══════════╪══════════╡
    │ 0.333333 ┆ 0.666667 │
    └──────────┴──────────┘
    """,
)
@correctable("recall", Sampled("hit"))
def _recall(f: Features, k: int | None, *, rel: Rel = 1.0) -> pl.Expr:
    n_rel = num_relevant(f, rel)
    return defined_if(n_rel > 0, hits(f, k, rel) / n_rel)


def _f1_head(h: HeadReader, o: Options, k: int) -> pl.Expr:
    t = float(o["rel"])
    hits = h.sum_at(Quantity("hits", t), k)
    return if_relevant(h, t, 2.0 * hits / (head_size(h, o["denominator"], k) + h.n_relevant(t)))


_F1_HEAD = HeadForm(
    {"rel": None, "denominator": frozenset({"k", "retrieved"})},
    lambda o: (Quantity("hits", float(o["rel"])),),
    _f1_head,
)


@register(
    "f1",
    head=_F1_HEAD,
    absolute_positions=True,
    defined="truth",
    family="binary",
    summary="Harmonic mean of precision@k and recall@k.",
    definition=(
        "2 * hits@k / (list size + #relevant), list size as in precision (k, or "
        "min(k, #recommended) with denominator=retrieved); 0 when there is no hit."
    ),
    doc="""
    F1 at k, the harmonic mean of precision@k and recall@k.

    Examples
    --------
    >>> import polars as pl
    >>> import polars_rankeval as prk
    >>> df = pl.DataFrame({"user": [1] * 5, "item": [1, 3, 2, 6, 4],
    ...                    "score": [10.0, 8.0, 6.0, 2.0, None], "relevance": [1, 0, 1, 0, 1]})
    >>> round(df.select(prk.f1(4)).item(), 6)  # 2 * 2 / (4 + 3)
    0.571429
    """,
)
def _f1(
    f: Features, k: int | None, *, rel: Rel = 1.0, denominator: PrecisionDenominator = "k"
) -> pl.Expr:
    n_rel = num_relevant(f, rel)
    value = 2.0 * hits(f, k, rel) / (list_size(f, k, denominator) + n_rel)
    return defined_if(n_rel > 0, value)


def _hit_rate_head(h: HeadReader, o: Options, k: int) -> pl.Expr:
    t = float(o["rel"])
    if not h.expected:
        return if_relevant(h, t, pl.when(first_within(h, t, k)).then(1.0).otherwise(0.0))
    return if_relevant(h, t, 1.0 - h.sum_at(Quantity("log_miss", t), k).exp())


_HIT_RATE_HEAD = HeadForm(
    {"rel": None}, lambda o: (Quantity("log_miss", float(o["rel"])),), _hit_rate_head
)


@register(
    "hit_rate",
    head=_HIT_RATE_HEAD,
    absolute_positions=True,
    repeated_ranks=True,
    defined="truth",
    family="binary",
    aliases=("success",),
    summary="1 if any relevant item is in the top k, else 0.",
    definition=(
        "[hits@k >= 1] (trec_eval success_k). Expected ties: 1 - P(no relevant item of the "
        "tie group straddling k lands in its m slots) = 1 - C(n-r, m) / C(n, m)."
    ),
    doc="""
    Hit rate at k (trec_eval ``success_k``): 1 if a relevant item is in the top k.

    Examples
    --------
    >>> import polars as pl
    >>> import polars_rankeval as prk
    >>> df = pl.DataFrame({"user": [1] * 3, "item": [1, 2, 3],
    ...                    "score": [1.0, 1.0, 1.0], "relevance": [0, 0, 1]})
    >>> round(df.select(prk.hit_rate(1)).item(), 6)  # the relevant one is first w.p. 1/3
    0.333333
    """,
)
@correctable("hit_rate", Sampled("hit"))
def _hit_rate(f: Features, k: int | None, *, rel: Rel = 1.0) -> pl.Expr:
    is_rel = f.is_rel(rel)
    n, j, a = f.n, f.j, f.a
    r = f.gsum(is_rel, f"rel>={rel}")
    slots = n if k is None else (k - a + 1).clip(0, n)
    # P(no relevant item at group offset j | none before it) = (n - r - j) / (n - j).
    miss = ((n - r - j) / (n - j)).clip(0.0, 1.0)
    term = pl.when(f.ret & (j < slots)).then(miss).otherwise(1.0)
    # prod(term) as exp(sum(log(term))): a plain sum keeps the group_by on its fast path.
    return defined_if(num_relevant(f, rel) > 0, 1.0 - term.log().sum().exp())


@register(
    "r_precision",
    absolute_positions=True,
    defined="truth",
    family="binary",
    aliases=("Rprec",),
    takes_k=False,
    summary="Precision at R, the number of relevant items (or at a multiple of R).",
    definition=(
        "hits@R / R with R = #relevant (trec_eval Rprec). With mult: hits@c / c at "
        "c = floor(mult * R + 0.9), 0 when c = 0 (trec_eval Rprec_mult_<mult>); a list "
        "shorter than c counts as padded with non-relevant items, so mult > 1 caps the "
        "value at R / c."
    ),
    doc="""
    R-precision: precision at R, where R is the user's number of relevant items.

    Examples
    --------
    >>> import polars as pl
    >>> import polars_rankeval as prk
    >>> df = pl.DataFrame({"user": [1] * 5, "item": [1, 3, 2, 6, 4],
    ...                    "score": [10.0, 8.0, 6.0, 2.0, None], "relevance": [1, 0, 1, 0, 1]})
    >>> round(df.select(prk.r_precision()).item(), 6)  # R = 3, top 3 holds 2 relevant
    0.666667

    ``mult=0.5`` cuts at floor(1.5 + 0.9) = 2 (1 hit), ``mult=2`` at floor(6.9) = 6,
    beyond the 4 recommended items (2 hits).

    >>> df.select(prk.r_precision(mult=0.5), prk.r_precision(mult=2.0)).row(0) == (1 / 2, 2 / 6)
    True
    """,
)
def _r_precision(f: Features, k: None, *, rel: Rel = 1.0, mult: Mult = 1.0) -> pl.Expr:
    n_rel = num_relevant(f, rel)
    per_row_r = f.user_total(f.is_rel(rel), f"rel>={rel}")
    if mult == 1.0:
        return defined_if(n_rel > 0, hits(f, per_row_r, rel) / n_rel)
    # trec_eval's cutoff: (long)(mult * R + 0.9), per row (for p_in) and per user.
    per_row_cut = (mult * per_row_r + 0.9).floor()
    cut = (mult * n_rel + 0.9).floor()
    return defined_if(n_rel > 0, safe_div(hits(f, per_row_cut, rel), cut))


@register(
    "r_precision_cut",
    defined="ranking",
    family="binary",
    summary="R-precision cut at k: hits within the first min(k, R) ranks over R.",
    definition=(
        "hits@min(k, R) / R with R = #relevant (MS Recommenders r_precision_at_k); equals "
        "r_precision when k >= R and recall@k when k <= R. A user without a hit in the "
        "first min(k, R) ranks scores 0 (no_hit=zero), or is undefined (no_hit=undefined: "
        "MS Recommenders, whose mean skips such users; deterministic tie policies only, "
        "the expectation of a value that exists only in some orderings has no closed "
        "form). Expected ties with no_hit=zero: exact (hits at a per-user cut)."
    ),
    doc="""
    R-precision cut at k: the hits within the first min(k, R) ranks, over R.

    It is r_precision for a user with at most k relevant items and recall@k for one
    with more. ``no_hit="undefined"`` reproduces Microsoft Recommenders'
    ``r_precision_at_k``: a user without a hit in the first min(k, R) ranks is NaN
    there and left out of the mean (its docstring says the value equals precision@k
    when every user has more than k relevant items; its code and tests give recall@k).
    That rule needs a deterministic tie policy.

    Examples
    --------
    R = 3, relevant at ranks 1 and 3 of the 4 recommended items (item 4 never
    recommended): at k = 2 one hit within min(2, 3) = 2 ranks, at k = 5 two within 3.

    >>> import polars as pl
    >>> import polars_rankeval as prk
    >>> df = pl.DataFrame({"user": [1] * 5, "item": [1, 3, 2, 6, 4],
    ...                    "score": [10.0, 8.0, 6.0, 2.0, None], "relevance": [1, 0, 1, 0, 1]})
    >>> df.select(prk.r_precision_cut(2), prk.r_precision_cut(5)).row(0) == (1 / 3, 2 / 3)
    True

    At k = 1 the only rank holds item 1, a hit; had it not been relevant, the value
    would be undefined with ``no_hit="undefined"``:

    >>> miss = df.with_columns(relevance=pl.Series([0, 0, 1, 0, 1]))
    >>> miss.select(prk.r_precision_cut(1, no_hit="undefined", ties="item_desc")).item() is None
    True
    """,
)
def _r_precision_cut(
    f: Features, k: int | None, *, rel: Rel = 1.0, no_hit: NoHit = "zero"
) -> pl.Expr:
    if no_hit == "undefined" and not f.tie.has("deterministic"):
        msg = (
            "metric 'r_precision_cut' with no_hit='undefined' needs a deterministic tie "
            f"policy (item_desc, item_asc, optimistic, pessimistic), got ties={f.ties!r}"
        )
        raise ValueError(msg)
    n_rel = num_relevant(f, rel)
    per_row_r = f.user_total(f.is_rel(rel), f"rel>={rel}")
    cut = per_row_r if k is None else pl.min_horizontal(per_row_r, pl.lit(float(k)))
    found = hits(f, cut, rel)
    value = found / n_rel
    if no_hit == "undefined":
        return defined_if((n_rel > 0) & (found > 0), value)
    return defined_if(n_rel > 0, value)


def _mrr_head(h: HeadReader, o: Options, k: int) -> pl.Expr:
    t = float(o["rel"])
    if not h.expected:
        hit = 1.0 / h.first_relevant(t).cast(pl.Float64)
        return if_relevant(h, t, pl.when(first_within(h, t, k)).then(hit).otherwise(0.0))
    return if_relevant(h, t, h.sum_at(Quantity("reciprocal_rank", t), k))


_MRR_HEAD = HeadForm(
    {"rel": None}, lambda o: (Quantity("reciprocal_rank", float(o["rel"])),), _mrr_head
)


@register(
    "mrr",
    head=_MRR_HEAD,
    absolute_positions=True,
    defined="truth",
    family="binary",
    aliases=("recip_rank",),
    summary="Reciprocal rank of the first relevant item (0 if none in the top k).",
    definition=(
        "1 / rank of the first relevant recommended item, 0 if it is not within the top k "
        "(trec_eval recip_rank). Expected ties: in the first tie group holding r "
        "relevant "
        "of n items, the first relevant sits at offset j with probability "
        "C(n-1-j, r-1) / C(n, r)."
    ),
    doc="""
    Reciprocal rank of the first relevant item; 0 if none is in the top k.

    Its mean over users is MRR.

    Examples
    --------
    The lecture's example: the first relevant item is B, at rank 2.

    >>> import polars as pl
    >>> import polars_rankeval as prk
    >>> df = pl.DataFrame({"user": [1] * 4, "item": ["A", "B", "C", "D"],
    ...                    "score": [4.0, 3.0, 2.0, 1.0], "relevance": [0, 1, 0, 1]})
    >>> df.select(prk.mrr()).item()
    0.5
    """,
)
@correctable("mrr", Sampled("rr"))
def _mrr(f: Features, k: int | None, *, rel: Rel = 1.0) -> pl.Expr:
    is_rel = f.is_rel(rel)
    if not f.expected:
        # Distinct positions: the first relevant item has the largest 1 / position.
        within = f.ret & (is_rel > 0) if k is None else f.ret & (is_rel > 0) & (f.o <= k)
        best = pl.when(within).then(1.0 / f.o.cast(pl.Float64)).max().fill_null(0.0)
        return defined_if(num_relevant(f, rel) > 0, best)
    a, j = f.a, f.j
    r = f.gsum(is_rel, f"rel>={rel}")
    first_a = f.user_min(pl.when(f.ret & (is_rel > 0)).then(a), f"first_rel_pos:{rel}")
    p_first = f.first_of(r, f"mrr_first_at_j:{rel}")
    position = (a + j).cast(pl.Float64)
    within = pl.lit(True) if k is None else position <= k
    contrib = pl.when(f.ret & (a == first_a) & within).then(p_first / position).otherwise(0.0)
    return defined_if(num_relevant(f, rel) > 0, contrib.sum())


def _arhr_head(h: HeadReader, o: Options, k: int) -> pl.Expr:
    t = float(o["rel"])
    return if_relevant(h, t, h.sum_at(Quantity("reciprocal_hits", t), k))


_ARHR_HEAD = HeadForm(
    {"rel": None}, lambda o: (Quantity("reciprocal_hits", float(o["rel"])),), _arhr_head
)


@register(
    "arhr",
    head=_ARHR_HEAD,
    absolute_positions=True,
    defined="truth",
    family="binary",
    normalized=False,
    bounds=(0.0, None),
    summary="Sum of 1 / rank over the relevant items in the top k.",
    definition=(
        "sum over the relevant recommended items within the top k of 1 / rank "
        "(average reciprocal hit rank, Deshpande & Karypis 2004: its mean over users); "
        "null without a relevant item. Expected ties: each position of a tie group of n "
        "items, r relevant, holds a relevant item with probability r / n."
    ),
    doc="""
    Average reciprocal hit rank: the sum of 1 / rank over the relevant items in the top k.

    Every hit counts, weighted by the reciprocal of its rank (``mrr`` counts the first
    one only); with one relevant item per user the two agree. Its mean over users is
    the ARHR of Deshpande & Karypis (2004).

    Examples
    --------
    >>> import polars as pl
    >>> import polars_rankeval as prk
    >>> df = pl.DataFrame({"user": [1] * 4, "item": ["A", "B", "C", "D"],
    ...                    "score": [4.0, 3.0, 2.0, 1.0], "relevance": [0, 1, 0, 1]})
    >>> df.select(prk.arhr()).item()  # 1/2 + 1/4
    0.75
    >>> df.select(prk.arhr(3)).item()  # 1/2
    0.5
    """,
)
def _arhr(f: Features, k: int | None, *, rel: Rel = 1.0) -> pl.Expr:
    share = f.gsum(f.is_rel(rel), f"rel>={rel}") / f.n  # P(a relevant item at a position)
    within = f.ret if k is None else f.ret & (f.o <= k)
    value = pl.when(within).then(share / f.o.cast(pl.Float64)).otherwise(0.0).sum()
    return defined_if(num_relevant(f, rel) > 0, value)


def _map_head(h: HeadReader, o: Options, k: int) -> pl.Expr:
    t = float(o["rel"])
    n_rel = h.n_relevant(t)
    den = n_rel if o["denominator"] == "relevant" else pl.min_horizontal(n_rel, k)
    return if_relevant(h, t, h.sum_at(Quantity("precision_sum", t), k) / den)


_MAP_HEAD = HeadForm(
    {
        "rel": None,
        "denominator": frozenset({"relevant", "min_k_relevant"}),
        "tie_group": frozenset({"ordered"}),
    },
    lambda o: (Quantity("precision_sum", float(o["rel"])),),
    _map_head,
)


@register(
    "map",
    head=_MAP_HEAD,
    absolute_positions=True,
    defined="truth",
    family="binary",
    aliases=("ap",),
    summary="Average precision over the relevant items (mean over users: MAP).",
    definition=(
        "sum over relevant items within the top k of precision at their rank, divided by "
        "#relevant (denominator=relevant: trec_eval map / map_cut, ranx, MS Recommenders "
        "map), by min(k, #relevant) (denominator=min_k_relevant: Jurity, RePlay, RecBole, "
        "MS Recommenders map_at_k), by k (denominator=k: RecTools divide_by_k), by the "
        "hits in the top k (denominator=hits: Hivemall's code, torchmetrics "
        "RetrievalMAP(top_k); 0 without a hit) or by min(#relevant, k, #recommended) "
        "(denominator=min_list_relevant: LensKit AveragePrecision, whose truncated list "
        "may be shorter than k). Without @k, relevant, min_k_relevant and k divide by "
        "#relevant. tie_group=threshold (no @k) reads a tie group of scores as one "
        "threshold: a relevant item's precision is (#relevant scored >= its score) / "
        "(#items scored >= its score), whatever ties= says (scikit-learn "
        "average_precision_score; Cornac MAP, whose tied items take the maximum rank)."
    ),
    doc="""
    Average precision at k; its mean over users is MAP.

    Examples
    --------
    The lecture's example: relevant items at ranks 1, 3 and 4 of five.

    >>> import polars as pl
    >>> import polars_rankeval as prk
    >>> df = pl.DataFrame({"user": [1] * 5, "item": list("ABCDE"),
    ...                    "score": [5.0, 4.0, 3.0, 2.0, 1.0], "relevance": [1, 0, 1, 1, 0]})
    >>> df.select(prk.map()).item() == (1 + 2 / 3 + 3 / 4) / 3
    True

    With ``tie_group="threshold"`` a tie group is one threshold (scikit-learn's
    ``average_precision_score``, Cornac's MAP): B, C and D tied, each relevant item
    of the group gets the precision at its end, 3/4.

    >>> tied = df.with_columns(score=pl.Series([5.0, 3.0, 3.0, 3.0, 1.0]))
    >>> tied.select(prk.map(tie_group="threshold")).item() == (1 + 3 / 4 + 3 / 4) / 3
    True
    """,
)
@correctable(
    "map",
    Sampled("rr", {"denominator": ("relevant", "min_k_relevant", "hits", "min_list_relevant")}),
)
def _map(
    f: Features,
    k: int | None,
    *,
    rel: Rel = 1.0,
    denominator: APDenominator = "relevant",
    tie_group: APTieGroup = "ordered",
) -> pl.Expr:
    if tie_group == "threshold":
        return _map_threshold(f, k, rel, denominator)
    # A relevant item in tie group [a, a+n-1] holding r relevant, with `above` relevant
    # items before the group, sits at p uniform on the group; the other r-1 relevant
    # items of the group precede it with probability (p-a)/(n-1). So
    # E[prec at p * [p<=k]] = (above + 1 - c*a) * mean([p<=k]/p) + c * P(p<=k),
    # c = (r-1)/(n-1).
    is_rel = f.is_rel(rel)
    a, n = f.a, f.n
    r = f.gsum(is_rel, f"rel>={rel}")
    c = pl.when(n > 1).then((r - 1) / (n - 1)).otherwise(0.0)
    inv_pos = f.gmean_pos(lambda p: 1.0 / p.cast(pl.Float64), k, "inv")
    p_within = pl.lit(1.0) if k is None else (k - a + 1).clip(0, n) / n
    expected = (f.rel_above(rel) + 1 - c * a) * inv_pos + c * p_within
    total = pl.when(f.ret & (is_rel > 0)).then(expected).otherwise(0.0).sum()
    n_rel = num_relevant(f, rel)
    if denominator == "hits":
        value = _ap_by_hits(f, k, rel, is_rel, r, expected, inv_pos, total)
        return defined_if(n_rel > 0, value)
    if denominator == "min_list_relevant":
        size = list_size(f, k)
        return defined_if(n_rel > 0, safe_div(total, pl.min_horizontal(n_rel, size)))
    if denominator == "relevant" or k is None:
        den = n_rel
    elif denominator == "k":
        den = pl.lit(float(k))
    else:
        den = pl.min_horizontal(n_rel, k)
    return defined_if(n_rel > 0, total / den)


def _map_threshold(f: Features, k: int | None, rel: float, denominator: str) -> pl.Expr:
    """AP with every tie group of scores one threshold (scikit-learn, Cornac).

    A relevant recommended item scored s contributes L / R: L the relevant recommended
    items scored >= s, R all the recommended items scored >= s (ranks with method
    ``max``, Cornac's ``rankdata(-scores, "max")``). It does not depend on the tie
    policy. Relevant items never recommended contribute 0.
    """
    if k is not None:
        msg = (
            "map(tie_group=threshold) takes no cutoff: scikit-learn's average_precision_score "
            f"and Cornac's MAP read every candidate, got @{k}"
        )
        raise ValueError(msg)
    if f.absolute:
        msg = (
            "map(tie_group=threshold) reads tie groups of scores; absolute ranks "
            "(rank_positions='absolute') are distinct: use map"
        )
        raise ValueError(msg)
    is_rel = f.is_rel(rel)
    scored = f.score
    end = f.user_window(scored.rank("max", descending=True), "ap_threshold_end")
    rel_scored = pl.when(is_rel > 0).then(scored)
    hits_at = f.user_window(rel_scored.rank("max", descending=True), f"ap_threshold_hits:{rel}")
    total = pl.when(f.ret & (is_rel > 0)).then(f64(hits_at) / f64(end)).otherwise(0.0).sum()
    n_rel = num_relevant(f, rel)
    if denominator == "hits":
        den = f64(f.ret & (is_rel > 0)).sum()
        return defined_if(n_rel > 0, safe_div(total, den))
    if denominator == "min_list_relevant":
        return defined_if(n_rel > 0, safe_div(total, pl.min_horizontal(n_rel, list_size(f, k))))
    return defined_if(n_rel > 0, total / n_rel)


def _ap_by_hits(
    f: Features,
    k: int | None,
    rel: float,
    is_rel: pl.Expr,
    r: pl.Expr,
    expected: pl.Expr,
    inv_pos: pl.Expr,
    total: pl.Expr,
) -> pl.Expr:
    """AP divided by the hits in the top k (Hivemall, torchmetrics AP@k); 0 without a hit.

    The hits are fixed unless a tie group straddles k (at most one does). Then, with
    h0 relevant items in the groups above it (all inside the top k) and X ~
    Hypergeometric(n, r, m) relevant items of the group in its m = k - a + 1 slots
    inside, E[AP] = sum_x P(X=x) * (S_full + E[S_G | x]) / (h0 + x), where S_full is the
    expected precision sum over the groups above and, the x relevant items being
    uniform over the m slots, E[S_G | x] = (x / m) * ((h0 + 1) * H + (x - 1) / (m - 1) *
    (m - a * H)) with H = sum_{p=a..k} 1 / p.
    """
    deterministic = safe_div(total, hits(f, k, rel))
    if k is None or not f.expected:
        return deterministic
    a, n, j = f.a, f.n, f.j
    end = a + n - 1
    full = f.ret & (end <= k)
    straddle = f.ret & (a <= k) & (end > k)
    h0 = f.user_total(pl.when(full).then(is_rel).otherwise(0.0), f"ap_h0:{rel}@{k}")
    s_full = f.user_total(
        pl.when(full & (is_rel > 0)).then(expected).otherwise(0.0), f"ap_sfull:{rel}@{k}"
    )
    m = (k - a + 1).cast(pl.Float64)
    x = j.cast(pl.Float64)
    harmonic = inv_pos * n
    spread = pl.when(m > 1).then((x - 1) / (m - 1) * (m - a * harmonic)).otherwise(0.0)
    s_group = x / m * ((h0 + 1) * harmonic + spread)
    h = f.tie_row(
        f"ap_hypergeom:{rel}@{k}", comb_ratio([(r, j), (n - r, m - j)], [(n, m)]), pl.lit(0.0)
    )
    mixed = pl.when(straddle).then(h * safe_div(s_full + s_group, h0 + x)).otherwise(0.0).sum()
    has_straddle = straddle.cast(pl.Int64).sum() > 0
    return pl.when(has_straddle).then(mixed).otherwise(deterministic)


@register(
    "auc",
    family="binary",
    aliases=("cauc",),
    summary="Fraction of (relevant, non-relevant) pairs ranked in the right order.",
    definition=(
        "With @k: over the recommended top k only (Hivemall, RePlay RocAuc, torchmetrics "
        "RetrievalAUROC(top_k)); a head without a relevant item scores 0 and one without "
        "a non-relevant item 1 (degenerate=zero_one: RePlay), both 1/2 (degenerate=half: "
        "Hivemall's code) or both 0 (degenerate=zero: torchmetrics). Without @k: over all "
        "the user's "
        "candidates, never-recommended items ranked below every recommended one and tied "
        "with each other; null when there is no non-relevant candidate. Ties count 1/2 "
        "under ties=expected (Mann-Whitney). aggregate=relevant_weighted weights the users "
        "by #relevant (RecBole gauc); aggregate=pooled is one AUC over every user's rows "
        "with a score and a relevance (= global_auc; MS Recommenders auc, Jurity AUC)."
    ),
    doc="""
    Area under the ROC curve of one user's ranking.

    With ``k``, the AUC over the recommended top k (Hivemall, RePlay; ``degenerate``
    picks the value of a head with one class only); without, over all the
    user's candidates (relevant items never recommended rank below every recommended
    item). The mean over users is cAUC.

    Examples
    --------
    >>> import polars as pl
    >>> import polars_rankeval as prk
    >>> df = pl.DataFrame({"user": [1] * 5, "item": [1, 3, 2, 6, 4],
    ...                    "score": [10.0, 8.0, 6.0, 2.0, None], "relevance": [1, 0, 1, 0, 1]})
    >>> df.select(prk.auc(4), prk.auc(2), prk.auc())  # 3/4, 1, and 3/6 over all candidates
    shape: (1, 3)
    ┌───────┬───────┬─────┐
    │ auc@4 ┆ auc@2 ┆ auc │
    │ ---   ┆ ---   ┆ --- │
    │ f64   ┆ f64   ┆ f64 │
    ╞═══════╪═══════╪═════╡
    │ 0.75  ┆ 1.0   ┆ 0.5 │
    └───────┴───────┴─────┘
    """,
)
@correctable("auc", Sampled("auc", {"degenerate": None}, cutoff="refused"))
def _auc(
    f: Features, k: int | None, *, rel: Rel = 1.0, degenerate: AUCDegenerate = "zero_one"
) -> pl.Expr:
    is_rel = f.is_rel(rel)
    a, n = f.a, f.n
    n_rel = num_relevant(f, rel)
    if k is None:
        total = pl.len().cast(pl.Float64)
        n_non = total - n_rel
        mean_pos = a + (n - 1) / 2.0
        u = n_rel * (total + 1.0) - (is_rel * mean_pos).sum() - n_rel * (n_rel + 1.0) / 2.0
        return defined_if((n_rel > 0) & (n_non > 0), u / (n_rel * n_non))
    return defined_if(n_rel > 0, _auc_at_k(f, k, is_rel, rel, degenerate))


def _auc_at_k(
    f: Features, k: int, is_rel: pl.Expr, rel: float, degenerate: AUCDegenerate
) -> pl.Expr:
    # Tie groups entirely inside the top k are fixed; at most one group straddles k.
    # Of its m slots inside, X ~ Hypergeometric(n, r, m) go to relevant items.
    a, n, j = f.a, f.n, f.j
    r = f.gsum(is_rel, f"rel>={rel}")
    end = a + n - 1
    full = f.ret & (end <= k)
    straddle = f.ret & (a <= k) & (end > k)
    # Totals over the groups inside the top k, broadcast to the straddling group's rows.
    p0 = f.user_total(pl.when(full).then(is_rel).otherwise(0.0), f"auc_p0:{rel}@{k}")
    n0 = f.user_total(pl.when(full).then(1.0 - is_rel).otherwise(0.0), f"auc_n0:{rel}@{k}")
    # Right pairs inside: each relevant item beats the non-relevant ones below its group
    # and half of those tied with it.
    nonrel_above = (a - 1) - f.rel_above(rel)
    wrong = pl.when(full & (is_rel > 0)).then(nonrel_above + (n - r) / 2.0).otherwise(0.0)
    c0 = p0 * n0 - f.user_total(wrong, f"auc_wrong:{rel}@{k}")

    no_pos, no_neg = {"zero_one": (0.0, 1.0), "half": (0.5, 0.5), "zero": (0.0, 0.0)}[degenerate]

    def value(pos: pl.Expr, neg: pl.Expr, correct: pl.Expr) -> pl.Expr:
        return (
            pl.when(pos <= 0)
            .then(no_pos)
            .when(neg <= 0)
            .then(no_neg)
            .otherwise(correct / (pos * neg).clip(lower_bound=1.0))
        )

    m = k - a + 1
    x = j.cast(pl.Float64)
    h = f.tie_row(
        f"auc_hypergeom:{rel}@{k}", comb_ratio([(r, j), (n - r, m - j)], [(n, m)]), pl.lit(0.0)
    )
    correct = c0 + p0 * (m - x) + x * (m - x) / 2.0
    mixed = pl.when(straddle).then(h * value(p0 + x, n0 + m - x, correct)).otherwise(0.0).sum()
    has_straddle = straddle.cast(pl.Int64).sum() > 0
    return pl.when(has_straddle).then(mixed).otherwise(value(p0, n0, c0).first())
