"""Graded-relevance metrics: discounted cumulative gain and its normalised form.

Gain: ``linear`` (the relevance itself, as trec_eval) or ``exp`` (``2**rel - 1``, as
Hivemall and Burges et al.). Discount of rank p: ``log`` ``1 / log_b(p + 1)``;
``log_clipped`` ``1 / max(1, log_b p)`` (the "Rank-Aware Top-N Metrics" lecture: no
discount for ranks 1..b); ``half_life`` ``2 ** (-(p - 1) / (half_life - 1))``
(Breese's expected utility).
Under ``ties="expected"`` each tied item gets the mean discount of its group's
positions (McSherry & Najork, 2008).
"""

from __future__ import annotations

import polars as pl

from polars_rankeval._features import Features
from polars_rankeval.metrics._common import (
    Base,
    Discount,
    Gain,
    HalfLife,
    IdealCut,
    check_half_life,
    dcg_sum,
    defined_if,
    discount_at,
    gain_of,
)
from polars_rankeval.registry import register


@register(
    "dcg",
    defined="always",
    family="graded",
    normalized=False,
    summary="Discounted cumulative gain of the top k.",
    definition="sum over ranks p <= k of gain(rel_p) * discount(p).",
    check=check_half_life,
    doc="""
    Discounted cumulative gain at k.

    Examples
    --------
    The "Rank-Aware Top-N Metrics" lecture's example: relevances 4, 3, 0, 5 with the
    clipped log2 discount.

    >>> import polars as pl
    >>> import polars_rankeval as prk
    >>> df = pl.DataFrame({"user": [1] * 4, "item": list("ABCD"),
    ...                    "score": [4.0, 3.0, 2.0, 1.0], "relevance": [4, 3, 0, 5]})
    >>> df.select(prk.dcg(discount="log_clipped")).item()  # 4/1 + 3/1 + 0 + 5/2
    9.5
    """,
)
def _dcg(
    f: Features,
    k: int | None,
    *,
    gain: Gain = "linear",
    discount: Discount = "log",
    base: Base = 2.0,
    half_life: HalfLife = None,
) -> pl.Expr:
    return dcg_sum(f, k, gain, discount, base, half_life)


@register(
    "ndcg",
    defined="truth",
    family="graded",
    summary="DCG@k over the ideal DCG@k.",
    definition=(
        "dcg@k / idcg, the ideal ordering built from all of the user's judged items "
        "(recommended or not), cut at k (idcg=cut: trec_eval ndcg_cut, Hivemall, "
        "scikit-learn) or over all relevant items (idcg=all: Jurity; the 'Personalized "
        "Recommendation Metrics' book chapter). "
        "Null when the ideal DCG is 0."
    ),
    check=check_half_life,
    doc="""
    Normalised discounted cumulative gain at k.

    Examples
    --------
    Hivemall's graded example with exponential gain.

    >>> import polars as pl
    >>> import polars_rankeval as prk
    >>> df = pl.DataFrame({"user": [1] * 5, "item": [1, 3, 2, 6, 4],
    ...                    "score": [10.0, 8.0, 6.0, 2.0, 1.0],
    ...                    "relevance": [5.0, 2.0, 4.0, 1.0, 3.0]})
    >>> df.select(prk.ndcg(2, gain="exp"), prk.ndcg(3, gain="exp"))
    shape: (1, 2)
    ┌──────────────────┬──────────────────┐
    │ ndcg(gain=exp)@2 ┆ ndcg(gain=exp)@3 │
    │ ---              ┆ ---              │
    │ f64              ┆ f64              │
    ╞══════════════════╪══════════════════╡
    │ 0.812891         ┆ 0.918771         │
    └──────────────────┴──────────────────┘
    """,
)
def _ndcg(
    f: Features,
    k: int | None,
    *,
    gain: Gain = "linear",
    discount: Discount = "log",
    base: Base = 2.0,
    half_life: HalfLife = None,
    idcg: IdealCut = "cut",
) -> pl.Expr:
    dcg = dcg_sum(f, k, gain, discount, base, half_life)
    g = gain_of(f, gain)
    irank = f.ideal_rank(g, f"gain:{gain}")
    ideal_disc = discount_at(irank, discount, base, half_life)
    keep = irank.is_not_null() if (k is None or idcg == "all") else irank <= k
    ideal = pl.when(keep).then(g * ideal_disc).otherwise(0.0).sum()
    return defined_if(ideal > 0, dcg / ideal)
