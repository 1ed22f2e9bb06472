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

import math
from typing import Literal

import polars as pl

from polars_rankeval._features import Features
from polars_rankeval._types import TiePolicy
from polars_rankeval.metrics._common import defined_if, inline
from polars_rankeval.registry import register

Gain = Literal["linear", "exp"]
Discount = Literal["log", "log_clipped", "half_life"]
IdealCut = Literal["cut", "all"]


def _gain(f: Features, gain: Gain) -> pl.Expr:
    return f.rel if gain == "linear" else 2.0**f.rel - 1.0


def _discount(p: pl.Expr, discount: Discount, base: float, half_life: float | None) -> pl.Expr:
    p = p.cast(pl.Float64)
    if discount == "log":
        return math.log(base) / (p + 1.0).log()
    if discount == "log_clipped":
        return 1.0 / pl.max_horizontal(pl.lit(1.0), p.log() / math.log(base))
    return 2.0 ** (-(p - 1.0) / (float(half_life) - 1.0))  # type: ignore[arg-type]


def _dcg_sum(
    f: Features, k: int | None, gain: Gain, discount: Discount, base: float, hl: float | None
) -> pl.Expr:
    # Sum over rows of (mean gain of the row's tie group) * discount(position): over a
    # group this equals sum(gain) * mean(discount over the group's positions).
    mean_gain = f.gsum(_gain(f, gain), f"gain:{gain}") / f.n
    disc = _discount(f.o, discount, base, hl)
    within = f.ret if k is None else f.ret & (f.o <= k)
    return pl.when(within).then(mean_gain * disc).otherwise(0.0).sum()


@register(
    "dcg",
    defined="always",
    family="graded",
    normalized=False,
    summary="Discounted cumulative gain of the top k.",
    definition="sum over ranks p <= k of gain(rel_p) * discount(p).",
)
def _dcg(
    f: Features,
    k: int | None,
    *,
    gain: Gain = "linear",
    discount: Discount = "log",
    base: float = 2.0,
    half_life: float | None = None,
) -> pl.Expr:
    return _dcg_sum(f, k, gain, discount, base, half_life)


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
)
def _ndcg(
    f: Features,
    k: int | None,
    *,
    gain: Gain = "linear",
    discount: Discount = "log",
    base: float = 2.0,
    half_life: float | None = None,
    idcg: IdealCut = "cut",
) -> pl.Expr:
    dcg = _dcg_sum(f, k, gain, discount, base, half_life)
    g = _gain(f, gain)
    irank = f.ideal_rank(g, f"gain:{gain}")
    ideal_disc = _discount(irank, discount, base, half_life)
    keep = irank.is_not_null() if (k is None or idcg == "all") else irank <= k
    ideal = pl.when(keep).then(g * ideal_disc).otherwise(0.0).sum()
    return defined_if(ideal > 0, dcg / ideal)


def dcg(
    k: int | None = None,
    *,
    gain: Gain = "linear",
    discount: Discount = "log",
    base: float = 2.0,
    half_life: float | None = None,
    ties: TiePolicy = "expected",
    item: str = "item",
    score: str | None = None,
    relevance: str = "relevance",
    rank: str | None = None,
) -> pl.Expr:
    """Discounted cumulative gain at k.

    Parameters
    ----------
    k
        Cutoff; ``None`` uses the whole recommendation list.
    gain
        ``"linear"`` or ``"exp"`` (``2**rel - 1``).
    discount
        ``"log"``, ``"log_clipped"`` or ``"half_life"`` (needs ``half_life``).
    base
        Logarithm base of the log discounts.
    half_life
        Rank at which the ``half_life`` discount halves (> 1).
    ties, item, score, relevance, rank
        Tie policy and column names (see :func:`polars_rankeval.evaluate`).

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
    """
    return inline(
        "dcg",
        k,
        ties=ties,
        item=item,
        score=score,
        relevance=relevance,
        rank=rank,
        gain=gain,
        discount=discount,
        base=base,
        half_life=half_life,
    )


def ndcg(
    k: int | None = None,
    *,
    gain: Gain = "linear",
    discount: Discount = "log",
    base: float = 2.0,
    half_life: float | None = None,
    idcg: IdealCut = "cut",
    ties: TiePolicy = "expected",
    item: str = "item",
    score: str | None = None,
    relevance: str = "relevance",
    rank: str | None = None,
) -> pl.Expr:
    """Normalised discounted cumulative gain at k.

    Parameters
    ----------
    k
        Cutoff; ``None`` uses the whole recommendation list.
    gain, discount, base, half_life
        As in :func:`dcg`.
    idcg
        ``"cut"``: the ideal list is cut at k (trec_eval, Hivemall, scikit-learn);
        ``"all"``: the ideal DCG sums over all relevant items (Jurity).
    ties, item, score, relevance, rank
        Tie policy and column names (see :func:`polars_rankeval.evaluate`).

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
    """
    return inline(
        "ndcg",
        k,
        ties=ties,
        item=item,
        score=score,
        relevance=relevance,
        rank=rank,
        gain=gain,
        discount=discount,
        base=base,
        half_life=half_life,
        idcg=idcg,
    )
