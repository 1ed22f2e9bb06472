"""The public ``pl.Expr`` function of every metric, generated from its declaration.

Do not edit: ``python scripts/gen_metric_functions.py --write`` writes this module from
the metric registry (each metric's ``register(...)`` in its family file under
``polars_rankeval/metrics/``); ``tests/metrics/test_declarations.py`` fails when it is out of
date. Each function is a thin call of :func:`polars_rankeval.metrics._common.inline`.
"""

from __future__ import annotations

from typing import Literal

import polars as pl

from polars_rankeval._utils.types import TiePolicy
from polars_rankeval.metrics._common import inline

__all__ = [
    "accuracy",
    "arhr",
    "auc",
    "bin_g",
    "boolean_kendall_tau",
    "bpref",
    "dcg",
    "err",
    "f1",
    "fallout",
    "fbeta",
    "g",
    "hit_rate",
    "inf_ap",
    "informedness",
    "insq",
    "inst",
    "inverse_precision",
    "inverse_recall",
    "iprec_11pt",
    "iprec_at_recall",
    "judged_fraction",
    "lauc",
    "mae",
    "map",
    "markedness",
    "mcc",
    "mean_precision",
    "miss_rate",
    "mrr",
    "mse",
    "ncrr",
    "ndcg",
    "ndcg_rel",
    "nerr",
    "nmae",
    "num_nonrel_judged_ret",
    "num_rel",
    "num_rel_ret",
    "num_ret",
    "pap",
    "partial_auc",
    "precision",
    "r_precision",
    "r_precision_cut",
    "rbp",
    "rbp_resid",
    "recall",
    "relative_precision",
    "rmse",
    "rndcg",
    "set_map",
    "spearman",
    "unjudged",
    "utility",
]


def precision(
    k: int | None = None,
    *,
    rel: float = 1.0,
    denominator: Literal["k", "retrieved"] = "k",
    ties: TiePolicy = "expected",
    item: str = "item",
    score: str | None = None,
    relevance: str = "relevance",
    rank: str | None = None,
) -> pl.Expr:
    """Precision at k: relevant items in the top k, divided by k.

    Parameters
    ----------
    k
        Cutoff; ``None`` uses the whole recommendation list.
    rel
        Minimum relevance that counts as relevant (inclusive). A number > 0.
    denominator
        Divide by k (trec_eval P_k) or by min(k, #recommended) (Hivemall, Jurity). One of
        ``"k"``, ``"retrieved"``.
    ties
        Tie policy (see :func:`polars_rankeval.evaluate`).
    item, score, relevance, rank
        Column names (see :func:`polars_rankeval.evaluate`).

    Returns
    -------
    polars.Expr
        Aggregates one user's rows to one Float64 named after the metric; null where it is
        undefined, which depends only on the user's judged rows.

    Notes
    -----
    hits@k / k (trec_eval P_k: a list shorter than k is padded with non-relevant items);
    denominator=retrieved divides by min(k, #recommended) instead (Hivemall, Jurity).
    Without @k: hits / #recommended. 0 when nothing is recommended.

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
    """
    return inline(
        "precision",
        k,
        ties=ties,
        item=item,
        score=score,
        relevance=relevance,
        rank=rank,
        rel=rel,
        denominator=denominator,
    )


def recall(
    k: int | None = None,
    *,
    rel: float = 1.0,
    ties: TiePolicy = "expected",
    item: str = "item",
    score: str | None = None,
    relevance: str = "relevance",
    rank: str | None = None,
) -> pl.Expr:
    """Recall at k: relevant items in the top k over all of the user's relevant items.

    Relevant items that were never recommended (null score) count in the denominator.

    Parameters
    ----------
    k
        Cutoff; ``None`` uses the whole recommendation list.
    rel
        Minimum relevance that counts as relevant (inclusive). A number > 0.
    ties
        Tie policy (see :func:`polars_rankeval.evaluate`).
    item, score, relevance, rank
        Column names (see :func:`polars_rankeval.evaluate`).

    Returns
    -------
    polars.Expr
        Aggregates one user's rows to one Float64 named after the metric; null where it is
        undefined, which depends only on the user's judged rows.

    Notes
    -----
    hits@k / #relevant, relevant items never recommended included (trec_eval recall_k).

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
    """
    return inline(
        "recall",
        k,
        ties=ties,
        item=item,
        score=score,
        relevance=relevance,
        rank=rank,
        rel=rel,
    )


def f1(
    k: int | None = None,
    *,
    rel: float = 1.0,
    denominator: Literal["k", "retrieved"] = "k",
    ties: TiePolicy = "expected",
    item: str = "item",
    score: str | None = None,
    relevance: str = "relevance",
    rank: str | None = None,
) -> pl.Expr:
    """F1 at k, the harmonic mean of precision@k and recall@k.

    Parameters
    ----------
    k
        Cutoff; ``None`` uses the whole recommendation list.
    rel
        Minimum relevance that counts as relevant (inclusive). A number > 0.
    denominator
        Divide by k (trec_eval P_k) or by min(k, #recommended) (Hivemall, Jurity). One of
        ``"k"``, ``"retrieved"``.
    ties
        Tie policy (see :func:`polars_rankeval.evaluate`).
    item, score, relevance, rank
        Column names (see :func:`polars_rankeval.evaluate`).

    Returns
    -------
    polars.Expr
        Aggregates one user's rows to one Float64 named after the metric; null where it is
        undefined, which depends only on the user's judged rows.

    Notes
    -----
    2 * hits@k / (list size + #relevant), list size as in precision (k, or min(k,
    #recommended) with denominator=retrieved); 0 when there is no hit.

    Examples
    --------
    >>> import polars as pl
    >>> import polars_rankeval as prk
    >>> df = pl.DataFrame({"user": [1] * 5, "item": [1, 3, 2, 6, 4],
    ...                    "score": [10.0, 8.0, 6.0, 2.0, None], "relevance": [1, 0, 1, 0, 1]})
    >>> round(df.select(prk.f1(4)).item(), 6)  # 2 * 2 / (4 + 3)
    0.571429
    """
    return inline(
        "f1",
        k,
        ties=ties,
        item=item,
        score=score,
        relevance=relevance,
        rank=rank,
        rel=rel,
        denominator=denominator,
    )


def hit_rate(
    k: int | None = None,
    *,
    rel: float = 1.0,
    ties: TiePolicy = "expected",
    item: str = "item",
    score: str | None = None,
    relevance: str = "relevance",
    rank: str | None = None,
) -> pl.Expr:
    """Hit rate at k (trec_eval ``success_k``): 1 if a relevant item is in the top k.

    Parameters
    ----------
    k
        Cutoff; ``None`` uses the whole recommendation list.
    rel
        Minimum relevance that counts as relevant (inclusive). A number > 0.
    ties
        Tie policy (see :func:`polars_rankeval.evaluate`).
    item, score, relevance, rank
        Column names (see :func:`polars_rankeval.evaluate`).

    Returns
    -------
    polars.Expr
        Aggregates one user's rows to one Float64 named after the metric; null where it is
        undefined, which depends only on the user's judged rows.

    Notes
    -----
    [hits@k >= 1] (trec_eval success_k). Expected ties: 1 - P(no relevant item of the tie
    group straddling k lands in its m slots) = 1 - C(n-r, m) / C(n, m).

    Examples
    --------
    >>> import polars as pl
    >>> import polars_rankeval as prk
    >>> df = pl.DataFrame({"user": [1] * 3, "item": [1, 2, 3],
    ...                    "score": [1.0, 1.0, 1.0], "relevance": [0, 0, 1]})
    >>> round(df.select(prk.hit_rate(1)).item(), 6)  # the relevant one is first w.p. 1/3
    0.333333
    """
    return inline(
        "hit_rate",
        k,
        ties=ties,
        item=item,
        score=score,
        relevance=relevance,
        rank=rank,
        rel=rel,
    )


def r_precision(
    *,
    rel: float = 1.0,
    mult: float = 1.0,
    ties: TiePolicy = "expected",
    item: str = "item",
    score: str | None = None,
    relevance: str = "relevance",
    rank: str | None = None,
) -> pl.Expr:
    """R-precision: precision at R, where R is the user's number of relevant items.

    Parameters
    ----------
    rel
        Minimum relevance that counts as relevant (inclusive). A number > 0.
    mult
        Multiple of R to cut at: precision at c = floor(mult * R + 0.9) (Rprec_mult_<mult>).
        A number > 0.
    ties
        Tie policy (see :func:`polars_rankeval.evaluate`).
    item, score, relevance, rank
        Column names (see :func:`polars_rankeval.evaluate`).

    Returns
    -------
    polars.Expr
        Aggregates one user's rows to one Float64 named after the metric; null where it is
        undefined, which depends only on the user's judged rows.

    Notes
    -----
    hits@R / R with R = #relevant (trec_eval Rprec). With mult: hits@c / c at c = floor(mult
    * R + 0.9), 0 when c = 0 (trec_eval Rprec_mult_<mult>); a list shorter than c counts as
    padded with non-relevant items, so mult > 1 caps the value at R / c.

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
    """
    return inline(
        "r_precision",
        None,
        ties=ties,
        item=item,
        score=score,
        relevance=relevance,
        rank=rank,
        rel=rel,
        mult=mult,
    )


def r_precision_cut(
    k: int | None = None,
    *,
    rel: float = 1.0,
    no_hit: Literal["zero", "undefined"] = "zero",
    ties: TiePolicy = "expected",
    item: str = "item",
    score: str | None = None,
    relevance: str = "relevance",
    rank: str | None = None,
) -> pl.Expr:
    """R-precision cut at k: the hits within the first min(k, R) ranks, over R.

    It is r_precision for a user with at most k relevant items and recall@k for one
    with more. ``no_hit="undefined"`` reproduces Microsoft Recommenders'
    ``r_precision_at_k``: a user without a hit in the first min(k, R) ranks is NaN
    there and left out of the mean (its docstring says the value equals precision@k
    when every user has more than k relevant items; its code and tests give recall@k).
    That rule needs a deterministic tie policy.

    Parameters
    ----------
    k
        Cutoff; ``None`` uses the whole recommendation list.
    rel
        Minimum relevance that counts as relevant (inclusive). A number > 0.
    no_hit
        A user without a hit in the first min(k, R) ranks scores 0 (zero) or is undefined,
        skipped under empty='skip' (undefined: MS Recommenders r_precision_at_k;
        deterministic tie policies only). One of ``"zero"``, ``"undefined"``.
    ties
        Tie policy (see :func:`polars_rankeval.evaluate`).
    item, score, relevance, rank
        Column names (see :func:`polars_rankeval.evaluate`).

    Returns
    -------
    polars.Expr
        Aggregates one user's rows to one Float64 named after the metric; null where it is
        undefined (see Notes).

    Notes
    -----
    hits@min(k, R) / R with R = #relevant (MS Recommenders r_precision_at_k); equals
    r_precision when k >= R and recall@k when k <= R. A user without a hit in the first
    min(k, R) ranks scores 0 (no_hit=zero), or is undefined (no_hit=undefined: MS
    Recommenders, whose mean skips such users; deterministic tie policies only, the
    expectation of a value that exists only in some orderings has no closed form). Expected
    ties with no_hit=zero: exact (hits at a per-user cut).

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
    """
    return inline(
        "r_precision_cut",
        k,
        ties=ties,
        item=item,
        score=score,
        relevance=relevance,
        rank=rank,
        rel=rel,
        no_hit=no_hit,
    )


def mrr(
    k: int | None = None,
    *,
    rel: float = 1.0,
    ties: TiePolicy = "expected",
    item: str = "item",
    score: str | None = None,
    relevance: str = "relevance",
    rank: str | None = None,
) -> pl.Expr:
    """Reciprocal rank of the first relevant item; 0 if none is in the top k.

    Its mean over users is MRR.

    Parameters
    ----------
    k
        Cutoff; ``None`` uses the whole recommendation list.
    rel
        Minimum relevance that counts as relevant (inclusive). A number > 0.
    ties
        Tie policy (see :func:`polars_rankeval.evaluate`).
    item, score, relevance, rank
        Column names (see :func:`polars_rankeval.evaluate`).

    Returns
    -------
    polars.Expr
        Aggregates one user's rows to one Float64 named after the metric; null where it is
        undefined, which depends only on the user's judged rows.

    Notes
    -----
    1 / rank of the first relevant recommended item, 0 if it is not within the top k
    (trec_eval recip_rank). Expected ties: in the first tie group holding r relevant of n
    items, the first relevant sits at offset j with probability C(n-1-j, r-1) / C(n, r).

    Examples
    --------
    The lecture's example: the first relevant item is B, at rank 2.

    >>> import polars as pl
    >>> import polars_rankeval as prk
    >>> df = pl.DataFrame({"user": [1] * 4, "item": ["A", "B", "C", "D"],
    ...                    "score": [4.0, 3.0, 2.0, 1.0], "relevance": [0, 1, 0, 1]})
    >>> df.select(prk.mrr()).item()
    0.5
    """
    return inline(
        "mrr",
        k,
        ties=ties,
        item=item,
        score=score,
        relevance=relevance,
        rank=rank,
        rel=rel,
    )


def arhr(
    k: int | None = None,
    *,
    rel: float = 1.0,
    ties: TiePolicy = "expected",
    item: str = "item",
    score: str | None = None,
    relevance: str = "relevance",
    rank: str | None = None,
) -> pl.Expr:
    """Average reciprocal hit rank: the sum of 1 / rank over the relevant items in the top k.

    Every hit counts, weighted by the reciprocal of its rank (``mrr`` counts the first
    one only); with one relevant item per user the two agree. Its mean over users is
    the ARHR of Deshpande & Karypis (2004).

    Parameters
    ----------
    k
        Cutoff; ``None`` uses the whole recommendation list.
    rel
        Minimum relevance that counts as relevant (inclusive). A number > 0.
    ties
        Tie policy (see :func:`polars_rankeval.evaluate`).
    item, score, relevance, rank
        Column names (see :func:`polars_rankeval.evaluate`).

    Returns
    -------
    polars.Expr
        Aggregates one user's rows to one Float64 named after the metric; null where it is
        undefined, which depends only on the user's judged rows.

    Notes
    -----
    sum over the relevant recommended items within the top k of 1 / rank (average reciprocal
    hit rank, Deshpande & Karypis 2004: its mean over users); null without a relevant item.
    Expected ties: each position of a tie group of n items, r relevant, holds a relevant
    item with probability r / n.

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
    """
    return inline(
        "arhr",
        k,
        ties=ties,
        item=item,
        score=score,
        relevance=relevance,
        rank=rank,
        rel=rel,
    )


def map(
    k: int | None = None,
    *,
    rel: float = 1.0,
    denominator: Literal[
        "relevant", "min_k_relevant", "k", "hits", "min_list_relevant"
    ] = "relevant",
    tie_group: Literal["ordered", "threshold"] = "ordered",
    ties: TiePolicy = "expected",
    item: str = "item",
    score: str | None = None,
    relevance: str = "relevance",
    rank: str | None = None,
) -> pl.Expr:
    """Average precision at k; its mean over users is MAP.

    Parameters
    ----------
    k
        Cutoff; ``None`` uses the whole recommendation list.
    rel
        Minimum relevance that counts as relevant (inclusive). A number > 0.
    denominator
        Divide by #relevant (trec_eval map), min(k, #relevant) (Jurity, RePlay, RecBole), k
        (RecTools divide_by_k), the hits in the top k (Hivemall, torchmetrics AP@k) or
        min(#relevant, k, #recommended) (LensKit). One of ``"relevant"``,
        ``"min_k_relevant"``, ``"k"``, ``"hits"``, ``"min_list_relevant"``.
    tie_group
        A tie group of scores is ordered by the tie policy (ordered) or is one threshold:
        each relevant item gets the precision at the end of its group (scikit-learn
        average_precision_score, Cornac MAP; no cutoff). One of ``"ordered"``,
        ``"threshold"``.
    ties
        Tie policy (see :func:`polars_rankeval.evaluate`).
    item, score, relevance, rank
        Column names (see :func:`polars_rankeval.evaluate`).

    Returns
    -------
    polars.Expr
        Aggregates one user's rows to one Float64 named after the metric; null where it is
        undefined, which depends only on the user's judged rows.

    Notes
    -----
    sum over relevant items within the top k of precision at their rank, divided by
    #relevant (denominator=relevant: trec_eval map / map_cut, ranx, MS Recommenders map), by
    min(k, #relevant) (denominator=min_k_relevant: Jurity, RePlay, RecBole, MS Recommenders
    map_at_k), by k (denominator=k: RecTools divide_by_k), by the hits in the top k
    (denominator=hits: Hivemall's code, torchmetrics RetrievalMAP(top_k); 0 without a hit)
    or by min(#relevant, k, #recommended) (denominator=min_list_relevant: LensKit
    AveragePrecision, whose truncated list may be shorter than k). Without @k, relevant,
    min_k_relevant and k divide by #relevant. tie_group=threshold (no @k) reads a tie group
    of scores as one threshold: a relevant item's precision is (#relevant scored >= its
    score) / (#items scored >= its score), whatever ties= says (scikit-learn
    average_precision_score; Cornac MAP, whose tied items take the maximum rank).

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
    """
    return inline(
        "map",
        k,
        ties=ties,
        item=item,
        score=score,
        relevance=relevance,
        rank=rank,
        rel=rel,
        denominator=denominator,
        tie_group=tie_group,
    )


def auc(
    k: int | None = None,
    *,
    rel: float = 1.0,
    degenerate: Literal["zero_one", "half", "zero"] = "zero_one",
    ties: TiePolicy = "expected",
    item: str = "item",
    score: str | None = None,
    relevance: str = "relevance",
    rank: str | None = None,
) -> pl.Expr:
    """Area under the ROC curve of one user's ranking.

    With ``k``, the AUC over the recommended top k (Hivemall, RePlay; ``degenerate``
    picks the value of a head with one class only); without, over all the
    user's candidates (relevant items never recommended rank below every recommended
    item). The mean over users is cAUC.

    Parameters
    ----------
    k
        Cutoff; ``None`` uses the whole recommendation list.
    rel
        Minimum relevance that counts as relevant (inclusive). A number > 0.
    degenerate
        Auc@k of a head without a relevant or without a non-relevant item: 0 or 1 (RePlay),
        1/2 (Hivemall) or 0 (torchmetrics). One of ``"zero_one"``, ``"half"``, ``"zero"``.
    ties
        Tie policy (see :func:`polars_rankeval.evaluate`).
    item, score, relevance, rank
        Column names (see :func:`polars_rankeval.evaluate`).

    Returns
    -------
    polars.Expr
        Aggregates one user's rows to one Float64 named after the metric; null where it is
        undefined (see Notes).

    Notes
    -----
    With @k: over the recommended top k only (Hivemall, RePlay RocAuc, torchmetrics
    RetrievalAUROC(top_k)); a head without a relevant item scores 0 and one without a
    non-relevant item 1 (degenerate=zero_one: RePlay), both 1/2 (degenerate=half: Hivemall's
    code) or both 0 (degenerate=zero: torchmetrics). Without @k: over all the user's
    candidates, never-recommended items ranked below every recommended one and tied with
    each other; null when there is no non-relevant candidate. Ties count 1/2 under
    ties=expected (Mann-Whitney). aggregate=relevant_weighted weights the users by #relevant
    (RecBole gauc); aggregate=pooled is one AUC over every user's rows with a score and a
    relevance (= global_auc; MS Recommenders auc, Jurity AUC).

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
    """
    return inline(
        "auc",
        k,
        ties=ties,
        item=item,
        score=score,
        relevance=relevance,
        rank=rank,
        rel=rel,
        degenerate=degenerate,
    )


def partial_auc(
    k: int | None = None,
    *,
    rel: float = 1.0,
    insufficient: Literal["ignore", "exclude", "raise"] = "ignore",
    ties: TiePolicy = "expected",
    item: str = "item",
    score: str | None = None,
    relevance: str = "relevance",
    rank: str | None = None,
) -> pl.Expr:
    """Partial AUC of one user's ranking up to its k-th negative (pAUC@k).

    The share of the (relevant item, one of the top k non-relevant recommended items)
    pairs ranked in the right order, over all the user's relevant items (those never
    recommended rank last). ``k`` counts negatives, not positions: the list needs more
    than k items. RecTools ``PartialAUC(k, insufficient_handling=...)``.

    Parameters
    ----------
    k
        Cutoff; ``None`` uses the whole recommendation list.
    rel
        Minimum relevance that counts as relevant (inclusive). A number > 0.
    insufficient
        A user with fewer than k negatives in its list and a relevant item not recommended:
        scored as if the missing negatives ranked below the list (ignore), undefined
        (exclude: null, the empty= policy decides) or an error naming such users (raise:
        evaluate raises, else as exclude; a stand-alone expression marks them NaN);
        RecTools' insufficient_handling. One of ``"ignore"``, ``"exclude"``, ``"raise"``.
    ties
        Tie policy (see :func:`polars_rankeval.evaluate`).
    item, score, relevance, rank
        Column names (see :func:`polars_rankeval.evaluate`).

    Returns
    -------
    polars.Expr
        Aggregates one user's rows to one Float64 named after the metric; null where it is
        undefined (see Notes).

    Notes
    -----
    (1 / (k R)) * sum over the user's R relevant items of the number of the top k
    non-relevant recommended items ranked below it (RecTools PartialAUC); a relevant item
    not recommended adds 0, negatives missing from a short list count as below it
    (insufficient=ignore) or the user is undefined when it also misses a relevant item
    (insufficient=exclude), or an error naming such users (insufficient=raise). Gaps of
    absolute ranks are negatives. Without @k, k is the user's number of negatives in the
    list, at least 1 (the AUC of the list, relevant items not recommended last). Null
    without a relevant item. Exact expectation under ties=expected.

    Examples
    --------
    >>> import polars as pl
    >>> import polars_rankeval as prk
    >>> df = pl.DataFrame({"user": [1] * 5, "item": [1, 2, 3, 4, 5],
    ...                    "score": [5.0, 4.0, 3.0, 2.0, None], "relevance": [0, 1, 0, 1, 1]})
    >>> df.select(prk.partial_auc(2))  # ((2 - 1) + (2 - 2) + 0) / (2 * 3)
    shape: (1, 1)
    ┌───────────────┐
    │ partial_auc@2 │
    │ ---           │
    │ f64           │
    ╞═══════════════╡
    │ 0.166667      │
    └───────────────┘
    """
    return inline(
        "partial_auc",
        k,
        ties=ties,
        item=item,
        score=score,
        relevance=relevance,
        rank=rank,
        rel=rel,
        insufficient=insufficient,
    )


def pap(
    k: int | None = None,
    *,
    rel: float = 1.0,
    insufficient: Literal["ignore", "exclude", "raise"] = "ignore",
    ties: TiePolicy = "expected",
    item: str = "item",
    score: str | None = None,
    relevance: str = "relevance",
    rank: str | None = None,
) -> pl.Expr:
    """Partial AUC + precision at k (pAp@k) of one user's ranking.

    The share of the (relevant item, non-relevant item) pairs ranked in the right
    order among the first min(k, R) relevant items and the top k non-relevant
    recommended items. RecTools ``PAP(k, insufficient_handling=...)``.

    Parameters
    ----------
    k
        Cutoff; ``None`` uses the whole recommendation list.
    rel
        Minimum relevance that counts as relevant (inclusive). A number > 0.
    insufficient
        A user with fewer than k negatives in its list and a relevant item not recommended:
        scored as if the missing negatives ranked below the list (ignore), undefined
        (exclude: null, the empty= policy decides) or an error naming such users (raise:
        evaluate raises, else as exclude; a stand-alone expression marks them NaN);
        RecTools' insufficient_handling. One of ``"ignore"``, ``"exclude"``, ``"raise"``.
    ties
        Tie policy (see :func:`polars_rankeval.evaluate`).
    item, score, relevance, rank
        Column names (see :func:`polars_rankeval.evaluate`).

    Returns
    -------
    polars.Expr
        Aggregates one user's rows to one Float64 named after the metric; null where it is
        undefined (see Notes).

    Notes
    -----
    (1 / (k b)) * sum over the first b = min(k, R) relevant items of the number of the top k
    non-relevant recommended items ranked below it (RecTools PAP; Hiranandani et al., 2020):
    precision@k-like for users with more than k relevant items, partial_auc@k otherwise.
    insufficient and no @k as partial_auc. Null without a relevant item. Exact expectation
    under ties=expected.

    Examples
    --------
    >>> import polars as pl
    >>> import polars_rankeval as prk
    >>> df = pl.DataFrame({"user": [1] * 5, "item": [1, 2, 3, 4, 5],
    ...                    "score": [5.0, 4.0, 3.0, 2.0, 1.0], "relevance": [1, 0, 1, 1, 0]})
    >>> df.select(prk.pap(2))  # first 2 relevant: (2 - 0) + (2 - 1) over 2 * 2
    shape: (1, 1)
    ┌───────┐
    │ pap@2 │
    │ ---   │
    │ f64   │
    ╞═══════╡
    │ 0.75  │
    └───────┘
    """
    return inline(
        "pap",
        k,
        ties=ties,
        item=item,
        score=score,
        relevance=relevance,
        rank=rank,
        rel=rel,
        insufficient=insufficient,
    )


def ncrr(
    k: int | None = None,
    *,
    rel: float = 1.0,
    ties: TiePolicy = "expected",
    item: str = "item",
    score: str | None = None,
    relevance: str = "relevance",
    rank: str | None = None,
) -> pl.Expr:
    """Normalised cumulative reciprocal rank (Cornac ``NCRR``).

    The sum of the reciprocal ranks of the relevant items in the top k, over the same
    sum for an ideal list of min(#relevant, list length) relevant items.

    Parameters
    ----------
    k
        Cutoff; ``None`` uses the whole recommendation list.
    rel
        Minimum relevance that counts as relevant (inclusive). A number > 0.
    ties
        Tie policy (see :func:`polars_rankeval.evaluate`).
    item, score, relevance, rank
        Column names (see :func:`polars_rankeval.evaluate`).

    Returns
    -------
    polars.Expr
        Aggregates one user's rows to one Float64 named after the metric; null where it is
        undefined, which depends only on the user's judged rows.

    Notes
    -----
    sum over the relevant items in the top k of 1 / rank, divided by H(min(R, L)) = sum_{i
    <= min(R, L)} 1 / i, the same sum for an ideal list, R = #relevant, L = min(k,
    #recommended) (Cornac NCRR's code); 0 when no relevant item is in the top k. Null
    without a relevant item. Expected ties: each relevant item's mean 1 / rank over its tie
    group's ranks within the top k.

    Examples
    --------
    Cornac's test: relevant items 1 and 3, ranked 2, 3, 1: (1/3 + 1/2) / (1 + 1/2).

    >>> import polars as pl
    >>> import polars_rankeval as prk
    >>> df = pl.DataFrame({"user": [1] * 3, "item": [2, 3, 1],
    ...                    "score": [3.0, 2.0, 1.0], "relevance": [0, 1, 1]})
    >>> round(df.select(prk.ncrr()).item(), 6)  # (1/2 + 1/3) / (1 + 1/2)
    0.555556
    """
    return inline(
        "ncrr",
        k,
        ties=ties,
        item=item,
        score=score,
        relevance=relevance,
        rank=rank,
        rel=rel,
    )


def mean_precision(
    k: int | None = None,
    *,
    rel: float = 1.0,
    ties: TiePolicy = "expected",
    item: str = "item",
    score: str | None = None,
    relevance: str = "relevance",
    rank: str | None = None,
) -> pl.Expr:
    """Mean of precision@n over the cutoffs n = 1..k (Elliot's ``MAP``).

    Parameters
    ----------
    k
        Cutoff; ``None`` uses the whole recommendation list.
    rel
        Minimum relevance that counts as relevant (inclusive). A number > 0.
    ties
        Tie policy (see :func:`polars_rankeval.evaluate`).
    item, score, relevance, rank
        Column names (see :func:`polars_rankeval.evaluate`).

    Returns
    -------
    polars.Expr
        Aggregates one user's rows to one Float64 named after the metric; null where it is
        undefined, which depends only on the user's judged rows.

    Notes
    -----
    (1 / k) sum_{n=1..k} hits@n / n, a list shorter than n padded with non-relevant items =
    (1 / k) sum over the relevant items at rank p <= k of (H(k) - H(p - 1)) (Elliot MAP's
    code; its docstring describes the usual AP). Without @k, k is the number of recommended
    items (0 for an empty list). Null without a relevant item. Expected ties: exact (linear
    in the rows).

    Examples
    --------
    Relevant items at ranks 1 and 3: precision@1..3 = 1, 1/2, 2/3.

    >>> import polars as pl
    >>> import polars_rankeval as prk
    >>> df = pl.DataFrame({"user": [1] * 3, "item": [1, 2, 3],
    ...                    "score": [3.0, 2.0, 1.0], "relevance": [1, 0, 1]})
    >>> df.select(prk.mean_precision(3)).item() == (1 + 1 / 2 + 2 / 3) / 3
    True
    """
    return inline(
        "mean_precision",
        k,
        ties=ties,
        item=item,
        score=score,
        relevance=relevance,
        rank=rank,
        rel=rel,
    )


def fallout(
    k: int | None = None,
    *,
    n_items: int,
    rel: float = 1.0,
    catalog: Literal["n_items", "candidates"] = "n_items",
    no_negative: Literal["undefined", "one", "zero"] = "undefined",
    ties: TiePolicy = "expected",
    item: str = "item",
    score: str | None = None,
    relevance: str = "relevance",
    rank: str | None = None,
) -> pl.Expr:
    """Fallout (false positive rate) at k: fp / (fp + tn) over a catalog of ``n_items``.

    Every metric of the classification family reads the top-k list as a classifier of
    the whole catalog and takes the same arguments. ``catalog="candidates"`` reads it
    over the user's own rows instead (every row a candidate, unjudged rows counted as
    non-relevant; ``n_items`` is then not read): torchmetrics' ``RetrievalFallOut``, which
    scores a query without a negative candidate 1 by default (``no_negative="one"``).

    Parameters
    ----------
    k
        Cutoff; ``None`` uses the whole recommendation list.
    n_items
        The catalog size N: every catalog item the user has no row for is a true negative.
        The value is null for a user with more rows than N.
    rel
        Minimum relevance that counts as relevant (inclusive). A number > 0.
    catalog
        The negatives: the catalog of n_items less the relevant items (n_items), or the
        user's own non-relevant rows (candidates: torchmetrics RetrievalFallOut). One of
        ``"n_items"``, ``"candidates"``.
    no_negative
        A user without a negative item: undefined (null; empty= decides), 1 (torchmetrics
        RetrievalFallOut's default empty_target_action='pos') or 0. One of ``"undefined"``,
        ``"one"``, ``"zero"``.
    ties
        Tie policy (see :func:`polars_rankeval.evaluate`).
    item, score, relevance, rank
        Column names (see :func:`polars_rankeval.evaluate`).

    Returns
    -------
    polars.Expr
        Aggregates one user's rows to one Float64 named after the metric; null where it is
        undefined, which depends only on the user's judged rows.

    Notes
    -----
    fp / (fp + tn) = (L - hits@k) / (N - R) over a catalog of N items, L = min(k,
    #recommended), R = #relevant (Schröder 4.2); lower is better. catalog=candidates takes
    the user's own rows as the catalog, (L - hits@k) / #non-relevant rows (torchmetrics
    RetrievalFallOut, whose catalog is the query's candidates). Null without a negative item
    (N = R), or 1 or 0 with no_negative=one|zero. Expected ties: exact (linear in hits@k).

    Examples
    --------
    One user: items 1..5 scored 5..1, relevant 1, 3 and 6 (6 never recommended), a
    catalog of 10 items. At k = 2: L = 2, R = 3, tp = 1, fp = 1, fn = 2 and
    tn = 10 - 2 - 3 + 1 = 6.

    >>> import polars as pl
    >>> import polars_rankeval as prk
    >>> df = pl.DataFrame({"user": [1] * 6, "item": [1, 2, 3, 4, 5, 6],
    ...                    "score": [5.0, 4.0, 3.0, 2.0, 1.0, None],
    ...                    "relevance": [1, 0, 1, 0, 0, 1]})
    >>> df.select(prk.fallout(2, n_items=10)).item() == 1 / (1 + 6)
    True

    Over the user's 6 rows, 3 of them non-relevant: fp = 1 of 3.

    >>> df.select(prk.fallout(2, n_items=10, catalog="candidates")).item() == 1 / 3
    True
    """
    return inline(
        "fallout",
        k,
        ties=ties,
        item=item,
        score=score,
        relevance=relevance,
        rank=rank,
        n_items=n_items,
        rel=rel,
        catalog=catalog,
        no_negative=no_negative,
    )


def miss_rate(
    k: int | None = None,
    *,
    n_items: int,
    rel: float = 1.0,
    ties: TiePolicy = "expected",
    item: str = "item",
    score: str | None = None,
    relevance: str = "relevance",
    rank: str | None = None,
) -> pl.Expr:
    """Miss rate (false negative rate) at k: fn / (tp + fn) = 1 - recall@k.

    Parameters
    ----------
    k
        Cutoff; ``None`` uses the whole recommendation list.
    n_items
        The catalog size N: every catalog item the user has no row for is a true negative.
        The value is null for a user with more rows than N.
    rel
        Minimum relevance that counts as relevant (inclusive). A number > 0.
    ties
        Tie policy (see :func:`polars_rankeval.evaluate`).
    item, score, relevance, rank
        Column names (see :func:`polars_rankeval.evaluate`).

    Returns
    -------
    polars.Expr
        Aggregates one user's rows to one Float64 named after the metric; null where it is
        undefined, which depends only on the user's judged rows.

    Notes
    -----
    fn / (tp + fn) = (R - hits@k) / R = 1 - recall@k (Schröder 4.2); lower is better. Null
    without a relevant item.

    Examples
    --------
    >>> import polars as pl
    >>> import polars_rankeval as prk
    >>> df = pl.DataFrame({"user": [1] * 6, "item": [1, 2, 3, 4, 5, 6],
    ...                    "score": [5.0, 4.0, 3.0, 2.0, 1.0, None],
    ...                    "relevance": [1, 0, 1, 0, 0, 1]})
    >>> df.select(prk.miss_rate(2, n_items=10)).item() == 2 / 3
    True
    """
    return inline(
        "miss_rate",
        k,
        ties=ties,
        item=item,
        score=score,
        relevance=relevance,
        rank=rank,
        n_items=n_items,
        rel=rel,
    )


def inverse_precision(
    k: int | None = None,
    *,
    n_items: int,
    rel: float = 1.0,
    ties: TiePolicy = "expected",
    item: str = "item",
    score: str | None = None,
    relevance: str = "relevance",
    rank: str | None = None,
) -> pl.Expr:
    """Inverse precision at k: tn / (fn + tn), the irrelevant share of the items left out.

    Parameters
    ----------
    k
        Cutoff; ``None`` uses the whole recommendation list.
    n_items
        The catalog size N: every catalog item the user has no row for is a true negative.
        The value is null for a user with more rows than N.
    rel
        Minimum relevance that counts as relevant (inclusive). A number > 0.
    ties
        Tie policy (see :func:`polars_rankeval.evaluate`).
    item, score, relevance, rank
        Column names (see :func:`polars_rankeval.evaluate`).

    Returns
    -------
    polars.Expr
        Aggregates one user's rows to one Float64 named after the metric; null where it is
        undefined (see Notes).

    Notes
    -----
    tn / (fn + tn) = tn / (N - L) with tn = N - L - R + hits@k (Schröder 4.2, the negative
    predictive value). Null when the top k holds the whole catalog (N = L).

    Examples
    --------
    >>> import polars as pl
    >>> import polars_rankeval as prk
    >>> df = pl.DataFrame({"user": [1] * 6, "item": [1, 2, 3, 4, 5, 6],
    ...                    "score": [5.0, 4.0, 3.0, 2.0, 1.0, None],
    ...                    "relevance": [1, 0, 1, 0, 0, 1]})
    >>> df.select(prk.inverse_precision(2, n_items=10)).item() == 6 / (2 + 6)
    True
    """
    return inline(
        "inverse_precision",
        k,
        ties=ties,
        item=item,
        score=score,
        relevance=relevance,
        rank=rank,
        n_items=n_items,
        rel=rel,
    )


def inverse_recall(
    k: int | None = None,
    *,
    n_items: int,
    rel: float = 1.0,
    ties: TiePolicy = "expected",
    item: str = "item",
    score: str | None = None,
    relevance: str = "relevance",
    rank: str | None = None,
) -> pl.Expr:
    """Inverse recall (specificity) at k: tn / (fp + tn) = 1 - fallout@k.

    Parameters
    ----------
    k
        Cutoff; ``None`` uses the whole recommendation list.
    n_items
        The catalog size N: every catalog item the user has no row for is a true negative.
        The value is null for a user with more rows than N.
    rel
        Minimum relevance that counts as relevant (inclusive). A number > 0.
    ties
        Tie policy (see :func:`polars_rankeval.evaluate`).
    item, score, relevance, rank
        Column names (see :func:`polars_rankeval.evaluate`).

    Returns
    -------
    polars.Expr
        Aggregates one user's rows to one Float64 named after the metric; null where it is
        undefined, which depends only on the user's judged rows.

    Notes
    -----
    tn / (fp + tn) = tn / (N - R) = 1 - fallout@k (Schröder 4.2, true negative rate). Null
    when every catalog item is relevant (N = R).

    Examples
    --------
    >>> import polars as pl
    >>> import polars_rankeval as prk
    >>> df = pl.DataFrame({"user": [1] * 6, "item": [1, 2, 3, 4, 5, 6],
    ...                    "score": [5.0, 4.0, 3.0, 2.0, 1.0, None],
    ...                    "relevance": [1, 0, 1, 0, 0, 1]})
    >>> df.select(prk.inverse_recall(2, n_items=10)).item() == 6 / (1 + 6)
    True
    """
    return inline(
        "inverse_recall",
        k,
        ties=ties,
        item=item,
        score=score,
        relevance=relevance,
        rank=rank,
        n_items=n_items,
        rel=rel,
    )


def fbeta(
    k: int | None = None,
    *,
    n_items: int,
    beta: float = 1.0,
    rel: float = 1.0,
    denominator: Literal["retrieved", "k"] = "retrieved",
    ties: TiePolicy = "expected",
    item: str = "item",
    score: str | None = None,
    relevance: str = "relevance",
    rank: str | None = None,
) -> pl.Expr:
    """F-beta at k: (1 + beta^2) tp / ((1 + beta^2) tp + beta^2 fn + fp).

    ``beta`` > 0 weighs recall beta times as much as precision; ``beta=1`` is F1 over
    the actual list size min(k, #recommended), i.e. ``f1(denominator="retrieved")``.
    The value does not depend on ``n_items``; it is asked for so that every metric of
    the classification family takes the same arguments. ``denominator="k"`` takes the
    list to be k long even when fewer items were recommended, so that precision is
    hits@k / k: RecTools' ``F1Beta`` (1 + beta^2) hits@k / (beta^2 R + k).

    The other arguments as for :func:`fallout`.

    Parameters
    ----------
    k
        Cutoff; ``None`` uses the whole recommendation list.
    n_items
        The catalog size N: every catalog item the user has no row for is a true negative.
        The value is null for a user with more rows than N.
    beta
        Weight of recall against precision (> 0). A number > 0.
    rel
        Minimum relevance that counts as relevant (inclusive). A number > 0.
    denominator
        The list size L: min(k, #recommended) (retrieved) or k even for a shorter list (k:
        RecTools Accuracy, MCC, F1Beta, fp = k - tp). One of ``"retrieved"``, ``"k"``.
    ties
        Tie policy (see :func:`polars_rankeval.evaluate`).
    item, score, relevance, rank
        Column names (see :func:`polars_rankeval.evaluate`).

    Returns
    -------
    polars.Expr
        Aggregates one user's rows to one Float64 named after the metric; null where it is
        undefined, which depends only on the user's judged rows.

    Notes
    -----
    (1 + beta^2) * tp / ((1 + beta^2) * tp + beta^2 * fn + fp) = (1 + beta^2) * hits@k /
    (beta^2 * R + L), L = min(k, #recommended), beta > 0; fbeta@k equals
    f1(denominator=retrieved)@k; denominator=k sets L = k (RecTools F1Beta, whose precision
    is hits@k / k). Null without a relevant item; 0 when there is no hit. Does not depend on
    the catalog size. Expected ties: exact (linear in hits@k).

    Examples
    --------
    >>> import polars as pl
    >>> import polars_rankeval as prk
    >>> df = pl.DataFrame({"user": [1] * 6, "item": [1, 2, 3, 4, 5, 6],
    ...                    "score": [5.0, 4.0, 3.0, 2.0, 1.0, None],
    ...                    "relevance": [1, 0, 1, 0, 0, 1]})
    >>> df.select(prk.fbeta(2, n_items=10, beta=2.0)).item() == 5 * 1 / (4 * 3 + 2)
    True

    At k = 10 the list holds the 5 scored items (L = 5), or 10 with ``denominator="k"``:

    >>> df.select(prk.fbeta(10, n_items=10), prk.fbeta(10, n_items=10, denominator="k")).row(0)
    (0.5, 0.3076923076923077)
    """
    return inline(
        "fbeta",
        k,
        ties=ties,
        item=item,
        score=score,
        relevance=relevance,
        rank=rank,
        n_items=n_items,
        beta=beta,
        rel=rel,
        denominator=denominator,
    )


def markedness(
    k: int | None = None,
    *,
    n_items: int,
    rel: float = 1.0,
    ties: TiePolicy = "expected",
    item: str = "item",
    score: str | None = None,
    relevance: str = "relevance",
    rank: str | None = None,
) -> pl.Expr:
    """Markedness at k (Powers): precision + inverse precision - 1, in [-1, 1].

    Parameters
    ----------
    k
        Cutoff; ``None`` uses the whole recommendation list.
    n_items
        The catalog size N: every catalog item the user has no row for is a true negative.
        The value is null for a user with more rows than N.
    rel
        Minimum relevance that counts as relevant (inclusive). A number > 0.
    ties
        Tie policy (see :func:`polars_rankeval.evaluate`).
    item, score, relevance, rank
        Column names (see :func:`polars_rankeval.evaluate`).

    Returns
    -------
    polars.Expr
        Aggregates one user's rows to one Float64 named after the metric; null where it is
        undefined (see Notes).

    Notes
    -----
    tp / (tp + fp) + tn / (fn + tn) - 1 = hits@k / L + tn / (N - L) - 1 (Schröder 5.1). Null
    when nothing is recommended (L = 0) or the top k holds the whole catalog (L = N).

    Examples
    --------
    >>> import polars as pl
    >>> import polars_rankeval as prk
    >>> df = pl.DataFrame({"user": [1] * 6, "item": [1, 2, 3, 4, 5, 6],
    ...                    "score": [5.0, 4.0, 3.0, 2.0, 1.0, None],
    ...                    "relevance": [1, 0, 1, 0, 0, 1]})
    >>> df.select(prk.markedness(2, n_items=10)).item() == 1 / 2 + 6 / 8 - 1
    True
    """
    return inline(
        "markedness",
        k,
        ties=ties,
        item=item,
        score=score,
        relevance=relevance,
        rank=rank,
        n_items=n_items,
        rel=rel,
    )


def informedness(
    k: int | None = None,
    *,
    n_items: int,
    rel: float = 1.0,
    ties: TiePolicy = "expected",
    item: str = "item",
    score: str | None = None,
    relevance: str = "relevance",
    rank: str | None = None,
) -> pl.Expr:
    """Informedness at k (Powers; Youden's J): recall + inverse recall - 1, in [-1, 1].

    Parameters
    ----------
    k
        Cutoff; ``None`` uses the whole recommendation list.
    n_items
        The catalog size N: every catalog item the user has no row for is a true negative.
        The value is null for a user with more rows than N.
    rel
        Minimum relevance that counts as relevant (inclusive). A number > 0.
    ties
        Tie policy (see :func:`polars_rankeval.evaluate`).
    item, score, relevance, rank
        Column names (see :func:`polars_rankeval.evaluate`).

    Returns
    -------
    polars.Expr
        Aggregates one user's rows to one Float64 named after the metric; null where it is
        undefined, which depends only on the user's judged rows.

    Notes
    -----
    tp / (tp + fn) + tn / (fp + tn) - 1 = hits@k / R + tn / (N - R) - 1 (Schröder 5.1); 2 *
    AUC - 1 of the top-k list read as a 0/1 score. Null without a relevant item (R = 0) or
    without an irrelevant one (R = N).

    Examples
    --------
    >>> import polars as pl
    >>> import polars_rankeval as prk
    >>> df = pl.DataFrame({"user": [1] * 6, "item": [1, 2, 3, 4, 5, 6],
    ...                    "score": [5.0, 4.0, 3.0, 2.0, 1.0, None],
    ...                    "relevance": [1, 0, 1, 0, 0, 1]})
    >>> df.select(prk.informedness(2, n_items=10)).item() == 1 / 3 + 6 / 7 - 1
    True
    """
    return inline(
        "informedness",
        k,
        ties=ties,
        item=item,
        score=score,
        relevance=relevance,
        rank=rank,
        n_items=n_items,
        rel=rel,
    )


def mcc(
    k: int | None = None,
    *,
    n_items: int,
    rel: float = 1.0,
    denominator: Literal["retrieved", "k"] = "retrieved",
    ties: TiePolicy = "expected",
    item: str = "item",
    score: str | None = None,
    relevance: str = "relevance",
    rank: str | None = None,
) -> pl.Expr:
    """Matthews correlation at k of "in the top k" and "relevant" over the catalog.

    Null (undefined) when a margin of the contingency table is 0; scikit-learn's
    ``matthews_corrcoef`` and RecTools' ``MCC`` return 0 there instead.
    ``denominator="k"`` takes the list to be k long even when fewer items were
    recommended (fp = k - tp, tn = N - k - fn), as RecTools' ``MCC`` does.

    Parameters
    ----------
    k
        Cutoff; ``None`` uses the whole recommendation list.
    n_items
        The catalog size N: every catalog item the user has no row for is a true negative.
        The value is null for a user with more rows than N.
    rel
        Minimum relevance that counts as relevant (inclusive). A number > 0.
    denominator
        The list size L: min(k, #recommended) (retrieved) or k even for a shorter list (k:
        RecTools Accuracy, MCC, F1Beta, fp = k - tp). One of ``"retrieved"``, ``"k"``.
    ties
        Tie policy (see :func:`polars_rankeval.evaluate`).
    item, score, relevance, rank
        Column names (see :func:`polars_rankeval.evaluate`).

    Returns
    -------
    polars.Expr
        Aggregates one user's rows to one Float64 named after the metric; null where it is
        undefined (see Notes).

    Notes
    -----
    (tp * tn - fp * fn) / sqrt((tp + fp)(fn + tn)(tp + fn)(fp + tn)) = (N * hits@k - L * R)
    / sqrt(L * R * (N - L) * (N - R)), in [-1, 1] (Schröder 5.1). Null when a factor is 0 (L
    = 0, L = N, R = 0 or R = N), where scikit-learn and RecTools return 0. denominator=k
    sets L = k even for a shorter list (RecTools MCC: fp = k - tp, tn = N - k - fn).
    Expected ties: exact (linear in hits@k).

    Examples
    --------
    >>> import polars as pl
    >>> import polars_rankeval as prk
    >>> df = pl.DataFrame({"user": [1] * 6, "item": [1, 2, 3, 4, 5, 6],
    ...                    "score": [5.0, 4.0, 3.0, 2.0, 1.0, None],
    ...                    "relevance": [1, 0, 1, 0, 0, 1]})
    >>> value = df.select(prk.mcc(2, n_items=10)).item()
    >>> abs(value - (1 * 6 - 1 * 2) / (2 * 3 * 8 * 7) ** 0.5) < 1e-15
    True
    """
    return inline(
        "mcc",
        k,
        ties=ties,
        item=item,
        score=score,
        relevance=relevance,
        rank=rank,
        n_items=n_items,
        rel=rel,
        denominator=denominator,
    )


def boolean_kendall_tau(
    k: int | None = None,
    *,
    n_items: int,
    rel: float = 1.0,
    ties: TiePolicy = "expected",
    item: str = "item",
    score: str | None = None,
    relevance: str = "relevance",
    rank: str | None = None,
) -> pl.Expr:
    """Kendall's tau-b of "in the top k" and "relevant" over the catalog (Schröder 4.3).

    For two 0/1 variables tau-b is the phi coefficient, so this equals :func:`mcc`.

    Parameters
    ----------
    k
        Cutoff; ``None`` uses the whole recommendation list.
    n_items
        The catalog size N: every catalog item the user has no row for is a true negative.
        The value is null for a user with more rows than N.
    rel
        Minimum relevance that counts as relevant (inclusive). A number > 0.
    ties
        Tie policy (see :func:`polars_rankeval.evaluate`).
    item, score, relevance, rank
        Column names (see :func:`polars_rankeval.evaluate`).

    Returns
    -------
    polars.Expr
        Aggregates one user's rows to one Float64 named after the metric; null where it is
        undefined (see Notes).

    Notes
    -----
    tau-b of two 0/1 variables over the N catalog items (Schröder 4.3): concordant pairs tp
    * tn, discordant fp * fn, untied pairs L(N - L) and R(N - R), so it equals mcc@k.
    Relation to AUC: tau-b = (2 * AUC01 - 1) * sqrt(R (N - R) / (L (N - L))), AUC01 the AUC
    of the top-k list as a 0/1 score (the paper notes the two are highly correlated). Null
    when L or R is 0 or N.

    Examples
    --------
    >>> import polars as pl
    >>> import polars_rankeval as prk
    >>> df = pl.DataFrame({"user": [1] * 6, "item": [1, 2, 3, 4, 5, 6],
    ...                    "score": [5.0, 4.0, 3.0, 2.0, 1.0, None],
    ...                    "relevance": [1, 0, 1, 0, 0, 1]})
    >>> tau, phi = df.select(prk.boolean_kendall_tau(2, n_items=10), prk.mcc(2, n_items=10)).row(0)
    >>> tau == phi
    True
    """
    return inline(
        "boolean_kendall_tau",
        k,
        ties=ties,
        item=item,
        score=score,
        relevance=relevance,
        rank=rank,
        n_items=n_items,
        rel=rel,
    )


def accuracy(
    k: int | None = None,
    *,
    n_items: int,
    rel: float = 1.0,
    denominator: Literal["retrieved", "k"] = "retrieved",
    ties: TiePolicy = "expected",
    item: str = "item",
    score: str | None = None,
    relevance: str = "relevance",
    rank: str | None = None,
) -> pl.Expr:
    """Accuracy at k: (tp + tn) / N, the catalog items classified right.

    ``denominator="k"`` takes the list to be k long even when fewer items were
    recommended (fp = k - tp, tn = N - k - fn), as RecTools' ``Accuracy`` does.

    Parameters
    ----------
    k
        Cutoff; ``None`` uses the whole recommendation list.
    n_items
        The catalog size N: every catalog item the user has no row for is a true negative.
        The value is null for a user with more rows than N.
    rel
        Minimum relevance that counts as relevant (inclusive). A number > 0.
    denominator
        The list size L: min(k, #recommended) (retrieved) or k even for a shorter list (k:
        RecTools Accuracy, MCC, F1Beta, fp = k - tp). One of ``"retrieved"``, ``"k"``.
    ties
        Tie policy (see :func:`polars_rankeval.evaluate`).
    item, score, relevance, rank
        Column names (see :func:`polars_rankeval.evaluate`).

    Returns
    -------
    polars.Expr
        Aggregates one user's rows to one Float64 named after the metric; never null.

    Notes
    -----
    (tp + tn) / N = (N - L - R + 2 * hits@k) / N; dominated by the true negatives in a large
    catalog; denominator=k sets L = k even for a shorter list (RecTools Accuracy: fp = k -
    tp). Never undefined. Expected ties: exact (linear in hits@k).

    Examples
    --------
    >>> import polars as pl
    >>> import polars_rankeval as prk
    >>> df = pl.DataFrame({"user": [1] * 6, "item": [1, 2, 3, 4, 5, 6],
    ...                    "score": [5.0, 4.0, 3.0, 2.0, 1.0, None],
    ...                    "relevance": [1, 0, 1, 0, 0, 1]})
    >>> df.select(prk.accuracy(2, n_items=10)).item() == (1 + 6) / 10
    True

    At k = 8 the list holds the 5 scored items: tn = 10 - 5 - 3 + 2 = 4. Read as a list
    of k = 8 items (RecTools), tn = 10 - 8 - 3 + 2 = 1:

    >>> df.select(prk.accuracy(8, n_items=10), prk.accuracy(8, n_items=10, denominator="k")).row(0)
    (0.6, 0.3)
    """
    return inline(
        "accuracy",
        k,
        ties=ties,
        item=item,
        score=score,
        relevance=relevance,
        rank=rank,
        n_items=n_items,
        rel=rel,
        denominator=denominator,
    )


def lauc(
    k: int | None = None,
    *,
    n_items: int,
    rel: float = 1.0,
    ties: TiePolicy = "expected",
    item: str = "item",
    score: str | None = None,
    relevance: str = "relevance",
    rank: str | None = None,
) -> pl.Expr:
    """Limited area under the ROC curve at k (Schröder et al., 2011, section 5.2).

    The ROC curve (fallout on x, recall on y) of the first k recommendations, then a
    straight line from its end point to (1, 1): relevant items left out of the top k
    are assumed spread uniformly over the rest of the catalog. Changes below the top k
    do not matter; a swap of a relevant and an irrelevant item anywhere inside the top
    k moves the value by 1 / (R (N - R)).

    Parameters
    ----------
    k
        Cutoff; ``None`` uses the whole recommendation list.
    n_items
        The catalog size N: every catalog item the user has no row for is a true negative.
        The value is null for a user with more rows than N.
    rel
        Minimum relevance that counts as relevant (inclusive). A number > 0.
    ties
        Tie policy (see :func:`polars_rankeval.evaluate`).
    item, score, relevance, rank
        Column names (see :func:`polars_rankeval.evaluate`).

    Returns
    -------
    polars.Expr
        Aggregates one user's rows to one Float64 named after the metric; null where it is
        undefined, which depends only on the user's judged rows.

    Notes
    -----
    area under the ROC curve (fallout, recall) of the first k recommendations, closed by a
    straight line from its end point (fp / (N - R), tp / R) to (1, 1): (C + (N - R - fp)(tp
    + R) / 2) / (R (N - R)), C = (relevant, irrelevant) pairs of the top k in the right
    order. 1 when every relevant item is in the top k ahead of every irrelevant one, 0 when
    the top k holds only irrelevant items and all of them, 1/2 for an empty list. Null when
    R = 0 or R = N. Expected ties: exact (linear in hits@k and in the positions of the
    relevant items).

    Examples
    --------
    At k = 2 the curve steps up to recall 1/3 (item 1), right to fallout 1/7 (item 2),
    then runs straight to (1, 1): 1/3 * 1/7 plus a trapezoid of width 6/7 and heights
    1/3 and 1.

    >>> import polars as pl
    >>> import polars_rankeval as prk
    >>> df = pl.DataFrame({"user": [1] * 6, "item": [1, 2, 3, 4, 5, 6],
    ...                    "score": [5.0, 4.0, 3.0, 2.0, 1.0, None],
    ...                    "relevance": [1, 0, 1, 0, 0, 1]})
    >>> value = df.select(prk.lauc(2, n_items=10)).item()
    >>> abs(value - (1 / 3 * 1 / 7 + 6 / 7 * (1 / 3 + 1) / 2)) < 1e-15
    True
    """
    return inline(
        "lauc",
        k,
        ties=ties,
        item=item,
        score=score,
        relevance=relevance,
        rank=rank,
        n_items=n_items,
        rel=rel,
    )


def spearman(
    *,
    ties: TiePolicy = "expected",
    item: str = "item",
    score: str | None = None,
    relevance: str = "relevance",
    rank: str | None = None,
) -> pl.Expr:
    """Spearman's rank correlation between the scores and the true relevance.

    Over the user's items with both a score and a relevance: the Pearson correlation
    of their average ranks, as :func:`scipy.stats.spearmanr` computes it. Tied scores
    keep their average rank under every tie policy. ``kendall_tau`` and ``fcp`` count
    pairs in a sub-plan of their own: use them through :func:`polars_rankeval.evaluate`.

    Parameters
    ----------
    ties
        Tie policy (see :func:`polars_rankeval.evaluate`).
    item, score, relevance, rank
        Column names (see :func:`polars_rankeval.evaluate`).

    Returns
    -------
    polars.Expr
        Aggregates one user's rows to one Float64 named after the metric; null where it is
        undefined (see Notes).

    Notes
    -----
    Pearson correlation of the average ranks (ties get the mean of their ranks) of score and
    relevance over the user's items with both (scipy spearmanr), in [-1, 1]. Null with fewer
    than two such items or a constant score or relevance. The same under every tie policy.

    Examples
    --------
    Items ranked B, A, C by the score; true relevance orders them A, B, C. Rank
    differences 1, -1, 0: rho = 1 - 6 * 2 / (3 * (9 - 1)) = 1/2. Item D has no score.

    >>> import polars as pl
    >>> import polars_rankeval as prk
    >>> df = pl.DataFrame({"user": [1] * 4, "item": list("ABCD"),
    ...                    "score": [0.8, 0.9, 0.1, None], "relevance": [3, 2, 1, 3]})
    >>> df.select(prk.spearman()).item()
    0.5
    """
    return inline(
        "spearman",
        None,
        ties=ties,
        item=item,
        score=score,
        relevance=relevance,
        rank=rank,
    )


def num_ret(
    k: int | None = None,
    *,
    ties: TiePolicy = "expected",
    item: str = "item",
    score: str | None = None,
    relevance: str = "relevance",
    rank: str | None = None,
) -> pl.Expr:
    """Number of recommended items, at most ``k``.

    Parameters
    ----------
    k
        Cutoff; ``None`` uses the whole recommendation list.
    ties
        Tie policy (see :func:`polars_rankeval.evaluate`).
    item, score, relevance, rank
        Column names (see :func:`polars_rankeval.evaluate`).

    Returns
    -------
    polars.Expr
        Aggregates one user's rows to one Float64 named after the metric; never null.

    Notes
    -----
    min(k, #rows with a score); never undefined. aggregate=sum gives the total over the
    users (trec_eval's all line, ir_measures NumRet).

    Examples
    --------
    >>> import polars as pl
    >>> import polars_rankeval as prk
    >>> df = pl.DataFrame({"user": [1] * 3, "item": [1, 2, 3],
    ...                    "score": [0.3, 0.2, None], "relevance": [1, 0, 1]})
    >>> df.select(prk.num_ret(), prk.num_rel(), prk.num_rel_ret()).row(0)
    (2.0, 2.0, 1.0)
    """
    return inline(
        "num_ret",
        k,
        ties=ties,
        item=item,
        score=score,
        relevance=relevance,
        rank=rank,
    )


def num_rel(
    *,
    rel: float = 1.0,
    ties: TiePolicy = "expected",
    item: str = "item",
    score: str | None = None,
    relevance: str = "relevance",
    rank: str | None = None,
) -> pl.Expr:
    """Number of relevant items (relevance >= ``rel``), recommended or not.

    Parameters
    ----------
    rel
        Minimum relevance that counts as relevant (inclusive). A number > 0.
    ties
        Tie policy (see :func:`polars_rankeval.evaluate`).
    item, score, relevance, rank
        Column names (see :func:`polars_rankeval.evaluate`).

    Returns
    -------
    polars.Expr
        Aggregates one user's rows to one Float64 named after the metric; never null.

    Notes
    -----
    #rows with relevance >= rel; never undefined. aggregate=sum gives the total over the
    users (trec_eval's all line, ir_measures NumRel).

    Examples
    --------
    >>> import polars as pl
    >>> import polars_rankeval as prk
    >>> df = pl.DataFrame({"user": [1] * 3, "item": [1, 2, 3],
    ...                    "score": [0.3, 0.2, None], "relevance": [2, 1, 1]})
    >>> df.select(prk.num_rel(rel=2)).item()
    1.0
    """
    return inline(
        "num_rel",
        None,
        ties=ties,
        item=item,
        score=score,
        relevance=relevance,
        rank=rank,
        rel=rel,
    )


def num_rel_ret(
    k: int | None = None,
    *,
    rel: float = 1.0,
    ties: TiePolicy = "expected",
    item: str = "item",
    score: str | None = None,
    relevance: str = "relevance",
    rank: str | None = None,
) -> pl.Expr:
    """Number of relevant items among the top ``k`` recommendations.

    Parameters
    ----------
    k
        Cutoff; ``None`` uses the whole recommendation list.
    rel
        Minimum relevance that counts as relevant (inclusive). A number > 0.
    ties
        Tie policy (see :func:`polars_rankeval.evaluate`).
    item, score, relevance, rank
        Column names (see :func:`polars_rankeval.evaluate`).

    Returns
    -------
    polars.Expr
        Aggregates one user's rows to one Float64 named after the metric; never null.

    Notes
    -----
    hits@k; under ties=expected the expected number of hits. aggregate=sum gives the total
    over the users (trec_eval's all line, ir_measures NumRet(rel=1)).

    Examples
    --------
    >>> import polars as pl
    >>> import polars_rankeval as prk
    >>> df = pl.DataFrame({"user": [1] * 3, "item": [1, 2, 3],
    ...                    "score": [0.5, 0.5, 0.1], "relevance": [1, 0, 1]})
    >>> df.select(prk.num_rel_ret(1)).item()  # the tie puts the hit first half the time
    0.5
    """
    return inline(
        "num_rel_ret",
        k,
        ties=ties,
        item=item,
        score=score,
        relevance=relevance,
        rank=rank,
        rel=rel,
    )


def dcg(
    k: int | None = None,
    *,
    gain: Literal["linear", "exp"] = "linear",
    discount: Literal["log", "log_clipped", "half_life"] = "log",
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
        Gain of a relevance: itself (trec_eval) or 2**rel - 1. One of ``"linear"``,
        ``"exp"``.
    discount
        Discount of rank p: 1 / log_b(p + 1), 1 / max(1, log_b p), or the half_life decay.
        One of ``"log"``, ``"log_clipped"``, ``"half_life"``.
    base
        Logarithm base of the log discounts. A number > 1.
    half_life
        Rank (> 1) at which the half_life discount halves; only with discount=half_life. A
        number, or ``None``.
    ties
        Tie policy (see :func:`polars_rankeval.evaluate`).
    item, score, relevance, rank
        Column names (see :func:`polars_rankeval.evaluate`).

    Returns
    -------
    polars.Expr
        Aggregates one user's rows to one Float64 named after the metric; never null.

    Notes
    -----
    sum over ranks p <= k of gain(rel_p) * discount(p).

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
    gain: Literal["linear", "exp"] = "linear",
    discount: Literal["log", "log_clipped", "half_life"] = "log",
    base: float = 2.0,
    half_life: float | None = None,
    idcg: Literal["cut", "all", "k"] = "cut",
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
    gain
        Gain of a relevance: itself (trec_eval) or 2**rel - 1. One of ``"linear"``,
        ``"exp"``.
    discount
        Discount of rank p: 1 / log_b(p + 1), 1 / max(1, log_b p), or the half_life decay.
        One of ``"log"``, ``"log_clipped"``, ``"half_life"``.
    base
        Logarithm base of the log discounts. A number > 1.
    half_life
        Rank (> 1) at which the half_life discount halves; only with discount=half_life. A
        number, or ``None``.
    idcg
        Ideal DCG cut at k (trec_eval, scikit-learn), over all relevant items (Jurity), or
        of k items of the user's highest gain (RecTools: k relevant items; needs @k). One of
        ``"cut"``, ``"all"``, ``"k"``.
    ties
        Tie policy (see :func:`polars_rankeval.evaluate`).
    item, score, relevance, rank
        Column names (see :func:`polars_rankeval.evaluate`).

    Returns
    -------
    polars.Expr
        Aggregates one user's rows to one Float64 named after the metric; null where it is
        undefined, which depends only on the user's judged rows.

    Notes
    -----
    dcg@k / idcg, the ideal ordering built from all of the user's judged items (recommended
    or not), cut at k (idcg=cut: trec_eval ndcg_cut, Hivemall, scikit-learn) or over all
    relevant items (idcg=all: Jurity; the 'Personalized Recommendation Metrics' book
    chapter); idcg=k: the DCG of k items of the user's highest gain, the same for every user
    of binary relevance (RecTools' default NDCG: an ideal list of k relevant items; needs
    @k). Null when the ideal DCG is 0.

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


def err(
    k: int | None = None,
    *,
    max_grade: float,
    ties: TiePolicy = "item_desc",
    item: str = "item",
    score: str | None = None,
    relevance: str = "relevance",
    rank: str | None = None,
) -> pl.Expr:
    """Expected reciprocal rank at k (Chapelle, Metzler, Zhang & Grinspan, 2009).

    A user reads the list from the top and stops at an item of grade g with
    probability ``R = (2**g - 1) / 2**max_grade``; ERR is the expected reciprocal of
    the rank where they stop. A stand-alone expression sees one user's rows, so the
    grade scale ``max_grade`` is required here; :func:`polars_rankeval.evaluate`
    takes it from the whole input when it is not given (``err@10``).

    Parameters
    ----------
    k
        Cutoff; ``None`` uses the whole recommendation list.
    max_grade
        The highest grade of the scale; evaluate takes the highest relevance of the input if
        none. A number > 0. Required here: a stand-alone expression sees one user's rows
        only.
    ties
        Tie policy (see :func:`polars_rankeval.evaluate`); this metric supports
        ``"item_desc"``, ``"item_asc"``, ``"optimistic"``, ``"pessimistic"`` only.
    item, score, relevance, rank
        Column names (see :func:`polars_rankeval.evaluate`).

    Returns
    -------
    polars.Expr
        Aggregates one user's rows to one Float64 named after the metric; never null.

    Notes
    -----
    sum over ranks r <= k of (1 / r) * R_r * prod over i < r of (1 - R_i), with R = (2**g -
    1) / 2**max_grade the probability that the user is satisfied by an item of grade g
    (Chapelle et al., 2009; gdeval's err with max_grade=4). A grade is the relevance clipped
    to [0, max_grade]; max_grade defaults to the highest relevance of the whole input
    (evaluate's rating_range=). 0 when nothing relevant is recommended. Deterministic tie
    policies only: the product over the ranks above makes the expectation over a tie group's
    orderings a sum over its subsets.

    Examples
    --------
    Grades 3, 0, 2, 1 on a 0..3 scale: R = 7/8, 0, 3/8, 1/8.

    >>> import polars as pl
    >>> import polars_rankeval as prk
    >>> df = pl.DataFrame({"user": [1] * 4, "item": list("ABCD"),
    ...                    "score": [4.0, 3.0, 2.0, 1.0], "relevance": [3, 0, 2, 1]})
    >>> value = df.select(prk.err(max_grade=3)).item()
    >>> value == 7 / 8 + 1 / 3 * 3 / 8 * 1 / 8 + 1 / 4 * 1 / 8 * 1 / 8 * 5 / 8
    True
    """
    return inline(
        "err",
        k,
        ties=ties,
        item=item,
        score=score,
        relevance=relevance,
        rank=rank,
        max_grade=max_grade,
    )


def iprec_at_recall(
    *,
    level: float = 0.0,
    rel: float = 1.0,
    ties: TiePolicy = "item_desc",
    item: str = "item",
    score: str | None = None,
    relevance: str = "relevance",
    rank: str | None = None,
) -> pl.Expr:
    """Interpolated precision at a recall level (trec_eval ``iprec_at_recall``).

    The best precision at any rank of the list whose recall reaches ``level``, with the
    level counted in relevant items as trec_eval does: ``lround(level * R)``. It is 0
    when the list never reaches that recall.

    Notes
    -----
    Older trec_eval releases (including the one bundled with pytrec_eval-terrier 0.5)
    counted the level as ``(long)(level * R + 0.9)`` hits instead of
    ``lround(level * R)``, so for some R their values (and ``11pt_avg``) differ from
    today's trec_eval and from this metric.

    Parameters
    ----------
    level
        Recall level; 0 gives the best precision anywhere in the list. A number in [0, 1].
    rel
        Minimum relevance that counts as relevant (inclusive). A number > 0.
    ties
        Tie policy (see :func:`polars_rankeval.evaluate`); this metric supports
        ``"item_desc"``, ``"item_asc"``, ``"optimistic"``, ``"pessimistic"`` only.
    item, score, relevance, rank
        Column names (see :func:`polars_rankeval.evaluate`).

    Returns
    -------
    polars.Expr
        Aggregates one user's rows to one Float64 named after the metric; null where it is
        undefined, which depends only on the user's judged rows.

    Notes
    -----
    max of hits@p / p over the recommended ranks p with hits@p >= lround(level * R) (nearest
    integer, halves up), 0 if no rank reaches it (trec_eval iprec_at_recall_<level>); level
    in [0, 1]. Deterministic tie policies only: the expectation over tied orderings has no
    exact closed form.

    Examples
    --------
    Relevant items at ranks 1, 3 and 5 of five, and one relevant item never recommended
    (R = 4): precisions 1/1, 2/3 and 3/5 at the relevant ranks. Recall 0.5 needs
    lround(2.0) = 2 hits (best precision from rank 3 on: 2/3); recall 0.7 needs
    lround(2.8) = 3 (3/5); recall 1 is never reached.

    >>> import polars as pl
    >>> from polars_rankeval.metrics import iprec_at_recall
    >>> df = pl.DataFrame({"user": [1] * 6, "item": list("ABCDEF"),
    ...                    "score": [5.0, 4.0, 3.0, 2.0, 1.0, None],
    ...                    "relevance": [1, 0, 1, 0, 1, 1]})
    >>> df.select(iprec_at_recall(level=0.5), iprec_at_recall(level=0.7),
    ...           iprec_at_recall(level=1.0)).row(0) == (2 / 3, 3 / 5, 0.0)
    True
    """
    return inline(
        "iprec_at_recall",
        None,
        ties=ties,
        item=item,
        score=score,
        relevance=relevance,
        rank=rank,
        level=level,
        rel=rel,
    )


def iprec_11pt(
    *,
    rel: float = 1.0,
    ties: TiePolicy = "item_desc",
    item: str = "item",
    score: str | None = None,
    relevance: str = "relevance",
    rank: str | None = None,
) -> pl.Expr:
    """11-point interpolated average precision (trec_eval ``11pt_avg``).

    The mean of :func:`iprec_at_recall` at the recall levels 0, 0.1, ..., 1.

    Parameters
    ----------
    rel
        Minimum relevance that counts as relevant (inclusive). A number > 0.
    ties
        Tie policy (see :func:`polars_rankeval.evaluate`); this metric supports
        ``"item_desc"``, ``"item_asc"``, ``"optimistic"``, ``"pessimistic"`` only.
    item, score, relevance, rank
        Column names (see :func:`polars_rankeval.evaluate`).

    Returns
    -------
    polars.Expr
        Aggregates one user's rows to one Float64 named after the metric; null where it is
        undefined, which depends only on the user's judged rows.

    Notes
    -----
    mean of iprec_at_recall at the recall levels 0, 0.1, ..., 1 (trec_eval 11pt_avg).
    Deterministic tie policies only, as iprec_at_recall.

    Examples
    --------
    The list of :func:`iprec_at_recall` (R = 4): the levels need lround(level * 4) =
    0, 0, 1, 1, 2, 2, 2, 3, 3, 4, 4 hits, whose interpolated precisions are 1, 1, 1, 1,
    2/3, 2/3, 2/3, 3/5, 3/5, 0, 0.

    >>> import polars as pl
    >>> from polars_rankeval.metrics import iprec_11pt
    >>> df = pl.DataFrame({"user": [1] * 6, "item": list("ABCDEF"),
    ...                    "score": [5.0, 4.0, 3.0, 2.0, 1.0, None],
    ...                    "relevance": [1, 0, 1, 0, 1, 1]})
    >>> round(df.select(iprec_11pt()).item(), 6)  # (4 * 1 + 3 * 2/3 + 2 * 3/5) / 11
    0.654545
    """
    return inline(
        "iprec_11pt",
        None,
        ties=ties,
        item=item,
        score=score,
        relevance=relevance,
        rank=rank,
        rel=rel,
    )


def relative_precision(
    k: int | None = None,
    *,
    rel: float = 1.0,
    ties: TiePolicy = "expected",
    item: str = "item",
    score: str | None = None,
    relevance: str = "relevance",
    rank: str | None = None,
) -> pl.Expr:
    """Relative precision at k (trec_eval ``relative_P``): hits@k / min(k, R).

    Precision relative to the best precision a list can reach at k: precision while
    k <= R, recall after. Without ``k``, trec_eval's ``set_relative_P``: hits over
    min(#recommended, R).

    Parameters
    ----------
    k
        Cutoff; ``None`` uses the whole recommendation list.
    rel
        Minimum relevance that counts as relevant (inclusive). A number > 0.
    ties
        Tie policy (see :func:`polars_rankeval.evaluate`).
    item, score, relevance, rank
        Column names (see :func:`polars_rankeval.evaluate`).

    Returns
    -------
    polars.Expr
        Aggregates one user's rows to one Float64 named after the metric; null where it is
        undefined, which depends only on the user's judged rows.

    Notes
    -----
    hits@k / min(k, R) (trec_eval relative_P_k: precision up to R, recall after). Without
    @k: hits / min(#recommended, R) (trec_eval set_relative_P), 0 when nothing is
    recommended.

    Examples
    --------
    The list of :func:`iprec_at_recall`: relevant at ranks 1, 3, 5; R = 4.

    >>> import polars as pl
    >>> from polars_rankeval.metrics import relative_precision
    >>> df = pl.DataFrame({"user": [1] * 6, "item": list("ABCDEF"),
    ...                    "score": [5.0, 4.0, 3.0, 2.0, 1.0, None],
    ...                    "relevance": [1, 0, 1, 0, 1, 1]})
    >>> df.select(relative_precision(2), relative_precision(5))  # 1 / 2, 3 / 4
    shape: (1, 2)
    ┌──────────────────────┬──────────────────────┐
    │ relative_precision@2 ┆ relative_precision@5 │
    │ ---                  ┆ ---                  │
    │ f64                  ┆ f64                  │
    ╞══════════════════════╪══════════════════════╡
    │ 0.5                  ┆ 0.75                 │
    └──────────────────────┴──────────────────────┘
    """
    return inline(
        "relative_precision",
        k,
        ties=ties,
        item=item,
        score=score,
        relevance=relevance,
        rank=rank,
        rel=rel,
    )


def set_map(
    *,
    rel: float = 1.0,
    ties: TiePolicy = "expected",
    item: str = "item",
    score: str | None = None,
    relevance: str = "relevance",
    rank: str | None = None,
) -> pl.Expr:
    """Set MAP (trec_eval ``set_map``): set precision times set recall.

    ``hits**2 / (#recommended * R)`` over the whole list; the order of the list (and so
    the tie policy) does not matter.

    Parameters
    ----------
    rel
        Minimum relevance that counts as relevant (inclusive). A number > 0.
    ties
        Tie policy (see :func:`polars_rankeval.evaluate`).
    item, score, relevance, rank
        Column names (see :func:`polars_rankeval.evaluate`).

    Returns
    -------
    polars.Expr
        Aggregates one user's rows to one Float64 named after the metric; null where it is
        undefined, which depends only on the user's judged rows.

    Notes
    -----
    hits^2 / (#recommended * R) over the whole list, ignoring its order (trec_eval set_map);
    0 when nothing is recommended.

    Examples
    --------
    >>> import polars as pl
    >>> from polars_rankeval.metrics import set_map
    >>> df = pl.DataFrame({"user": [1] * 6, "item": list("ABCDEF"),
    ...                    "score": [5.0, 4.0, 3.0, 2.0, 1.0, None],
    ...                    "relevance": [1, 0, 1, 0, 1, 1]})
    >>> df.select(set_map()).item()  # (3 / 5) * (3 / 4) = 3 * 3 / (5 * 4)
    0.45
    """
    return inline(
        "set_map",
        None,
        ties=ties,
        item=item,
        score=score,
        relevance=relevance,
        rank=rank,
        rel=rel,
    )


def bpref(
    *,
    rel: float = 1.0,
    ties: TiePolicy = "expected",
    item: str = "item",
    score: str | None = None,
    relevance: str = "relevance",
    rank: str | None = None,
) -> pl.Expr:
    """Binary preference (Buckley & Voorhees, 2004), trec_eval's ``bpref``.

    Each relevant recommended item scores 1 minus the share of judged non-relevant items
    ranked above it (capped at R, over min(R, #judged non-relevant)); the sum is
    divided by R, the number of relevant items. Unjudged items (null relevance) are
    ignored instead of being read as non-relevant.

    Parameters
    ----------
    rel
        Minimum relevance that counts as relevant (inclusive). A number > 0.
    ties
        Tie policy (see :func:`polars_rankeval.evaluate`).
    item, score, relevance, rank
        Column names (see :func:`polars_rankeval.evaluate`).

    Returns
    -------
    polars.Expr
        Aggregates one user's rows to one Float64 named after the metric; null where it is
        undefined, which depends only on the user's judged rows.

    Notes
    -----
    sum over relevant recommended items r of 1 - min(N_r, R) / min(N, R), divided by R =
    #relevant; N_r = judged non-relevant recommended items above r, N = all judged
    non-relevant items (a term is 1 when N = 0); unjudged items are ignored (trec_eval
    bpref). Expected ties: of the m judged non-relevant items tied with r, a number uniform
    on 0..m precede it.

    Examples
    --------
    Relevant A and C, judged non-relevant B and D, unjudged U: A has no judged
    non-relevant item above it (1), C has one (1 - min(1, 2) / min(2, 2) = 1/2).

    >>> import polars as pl
    >>> from polars_rankeval.metrics import bpref
    >>> df = pl.DataFrame({"user": [1] * 5, "item": list("AUBCD"),
    ...                    "score": [5.0, 4.0, 3.0, 2.0, 1.0],
    ...                    "relevance": [1, None, 0, 1, 0]})
    >>> df.select(bpref()).item()  # (1 + 1/2) / 2
    0.75
    """
    return inline(
        "bpref",
        None,
        ties=ties,
        item=item,
        score=score,
        relevance=relevance,
        rank=rank,
        rel=rel,
    )


def inf_ap(
    *,
    rel: float = 1.0,
    pool: str | None = None,
    ties: TiePolicy = "item_desc",
    item: str = "item",
    score: str | None = None,
    relevance: str = "relevance",
    rank: str | None = None,
) -> pl.Expr:
    """Inferred average precision (Yilmaz & Aslam, 2006), trec_eval's ``infAP``.

    The precision above each relevant recommended item is estimated from the judged
    items above it only; with complete judgments it is AP up to trec_eval's epsilon
    (1e-5). Only deterministic tie policies are supported (default ``"item_desc"``).

    Parameters
    ----------
    rel
        Minimum relevance that counts as relevant (inclusive). A number > 0.
    pool
        Boolean column (from the data or items=) marking the items of the judgment pool: an
        unjudged row (null relevance) with a true value is pooled but not judged (trec_eval
        qrels relevance < 0), one without is outside the pool; none: every unjudged row is
        outside the pool. A string, or ``None``.
    ties
        Tie policy (see :func:`polars_rankeval.evaluate`); this metric supports
        ``"item_desc"``, ``"item_asc"``, ``"optimistic"``, ``"pessimistic"`` only.
    item, score, relevance, rank
        Column names (see :func:`polars_rankeval.evaluate`).

    Returns
    -------
    polars.Expr
        Aggregates one user's rows to one Float64 named after the metric; null where it is
        undefined, which depends only on the user's judged rows.

    Notes
    -----
    sum over relevant recommended items at rank p of (1 + P (Q + e) / (J + 2e)) / p, divided
    by #relevant; J = judged items above, Q = relevant items above, P = pooled items above
    (J plus the unjudged rows marked by the pool column: trec_eval qrels relevance < 0;
    without pool=, P = J), e = 1e-5 (trec_eval infAP; close to AP, not exactly 1 for a
    perfect ranking). Deterministic tie policies only.

    Examples
    --------
    Relevant A (rank 1) and C (rank 3) under an unjudged U: C scores
    (1 + 1 * (1 + e) / (1 + 2e)) / 3, about 2/3, so infAP is about (1 + 2/3) / 2.

    >>> import polars as pl
    >>> from polars_rankeval.metrics import inf_ap
    >>> df = pl.DataFrame({"user": [1] * 3, "item": list("AUC"),
    ...                    "score": [3.0, 2.0, 1.0], "relevance": [1, None, 1]})
    >>> round(df.select(inf_ap()).item(), 4)
    0.8333

    If U was in the judgment pool but not judged (trec_eval qrels relevance -1), it is
    one of the pooled items above C, of which the judged ones (A) are all relevant:
    C scores (1 + 2 * (1 + e) / (1 + 2e)) / 3, about 1, and infAP about 1.

    >>> pooled = df.with_columns(pool=pl.lit(True))
    >>> round(pooled.select(inf_ap(pool="pool")).item(), 4)
    1.0
    """
    return inline(
        "inf_ap",
        None,
        ties=ties,
        item=item,
        score=score,
        relevance=relevance,
        rank=rank,
        rel=rel,
        pool=pool,
    )


def num_nonrel_judged_ret(
    k: int | None = None,
    *,
    rel: float = 1.0,
    ties: TiePolicy = "expected",
    item: str = "item",
    score: str | None = None,
    relevance: str = "relevance",
    rank: str | None = None,
) -> pl.Expr:
    """Number of judged non-relevant items among the top ``k`` recommendations.

    Parameters
    ----------
    k
        Cutoff; ``None`` uses the whole recommendation list.
    rel
        Minimum relevance that counts as relevant (inclusive). A number > 0.
    ties
        Tie policy (see :func:`polars_rankeval.evaluate`).
    item, score, relevance, rank
        Column names (see :func:`polars_rankeval.evaluate`).

    Returns
    -------
    polars.Expr
        Aggregates one user's rows to one Float64 named after the metric; never null.

    Notes
    -----
    #recommended items within the top k with a relevance judgment below rel (trec_eval
    num_nonrel_judged_ret); never undefined.

    Examples
    --------
    >>> import polars as pl
    >>> from polars_rankeval.metrics import num_nonrel_judged_ret
    >>> df = pl.DataFrame({"user": [1] * 4, "item": [1, 2, 3, 4],
    ...                    "score": [0.9, 0.5, 0.5, None], "relevance": [0, None, 0, 0]})
    >>> df.select(num_nonrel_judged_ret(2)).item()  # 1 + item 3 in 1 of 2 tie orders
    1.5
    """
    return inline(
        "num_nonrel_judged_ret",
        k,
        ties=ties,
        item=item,
        score=score,
        relevance=relevance,
        rank=rank,
        rel=rel,
    )


def unjudged(
    k: int | None = None,
    *,
    denominator: Literal["k", "retrieved"] = "k",
    ties: TiePolicy = "expected",
    item: str = "item",
    score: str | None = None,
    relevance: str = "relevance",
    rank: str | None = None,
) -> pl.Expr:
    """Fraction of the top ``k`` recommendations without a judgment (trec_eval ``unj``).

    A list shorter than ``k`` counts as padded with judged items;
    ``denominator="retrieved"`` divides by min(k, #recommended) instead, as
    ir_measures' ``Judged@k`` does (see :func:`judged_fraction`).

    Parameters
    ----------
    k
        Cutoff; ``None`` uses the whole recommendation list.
    denominator
        Divide by k (trec_eval unj_k) or by min(k, #recommended) (ir_measures Judged@k). One
        of ``"k"``, ``"retrieved"``.
    ties
        Tie policy (see :func:`polars_rankeval.evaluate`).
    item, score, relevance, rank
        Column names (see :func:`polars_rankeval.evaluate`).

    Returns
    -------
    polars.Expr
        Aggregates one user's rows to one Float64 named after the metric; never null.

    Notes
    -----
    #unjudged recommended items within the top k / k, a list shorter than k padded with
    judged items (trec_eval unj_k); denominator=retrieved divides by min(k, #recommended)
    (ir_measures Judged@k = 1 - unjudged(denominator=retrieved)@k). Without @k over
    #recommended, 0 when nothing is recommended; never undefined. Expected ties: exact
    (linear in the membership probabilities).

    Examples
    --------
    >>> import polars as pl
    >>> from polars_rankeval.metrics import unjudged
    >>> df = pl.DataFrame({"user": [1] * 3, "item": [1, 2, 3],
    ...                    "score": [0.9, 0.8, 0.7], "relevance": [1, None, None]})
    >>> df.select(unjudged(2), unjudged(5)).row(0)  # 1/2 and 2/5
    (0.5, 0.4)
    >>> df.select(unjudged(5, denominator="retrieved")).item() == 2 / 3
    True
    """
    return inline(
        "unjudged",
        k,
        ties=ties,
        item=item,
        score=score,
        relevance=relevance,
        rank=rank,
        denominator=denominator,
    )


def judged_fraction(
    k: int | None = None,
    *,
    denominator: Literal["k", "retrieved"] = "retrieved",
    ties: TiePolicy = "expected",
    item: str = "item",
    score: str | None = None,
    relevance: str = "relevance",
    rank: str | None = None,
) -> pl.Expr:
    """Fraction of the top ``k`` recommendations with a judgment (ir_measures ``Judged``).

    With the default ``denominator="retrieved"`` it is 1 - ``unjudged(denominator=
    "retrieved")`` for a user with recommendations.

    Parameters
    ----------
    k
        Cutoff; ``None`` uses the whole recommendation list.
    denominator
        Divide by k (trec_eval unj_k) or by min(k, #recommended) (ir_measures Judged@k). One
        of ``"k"``, ``"retrieved"``.
    ties
        Tie policy (see :func:`polars_rankeval.evaluate`).
    item, score, relevance, rank
        Column names (see :func:`polars_rankeval.evaluate`).

    Returns
    -------
    polars.Expr
        Aggregates one user's rows to one Float64 named after the metric; never null.

    Notes
    -----
    #judged recommended items within the top k / min(k, #recommended)
    (denominator=retrieved, the default: ir_measures Judged@k, which its docstring calls
    'equivalent to P@k' though it divides by min(k, #retrieved)), or / k (denominator=k: a
    list shorter than k counts as padded with unjudged items). A judged item is one with a
    relevance, whatever its value. 0 when nothing is recommended; never undefined. Expected
    ties: exact (linear in the membership probabilities).

    Examples
    --------
    >>> import polars as pl
    >>> from polars_rankeval.metrics import judged_fraction
    >>> df = pl.DataFrame({"user": [1] * 3, "item": [1, 2, 3],
    ...                    "score": [0.9, 0.8, 0.7], "relevance": [0, None, None]})
    >>> exprs = [judged_fraction(2), judged_fraction(5), judged_fraction(5, denominator="k")]
    >>> df.select(exprs).row(0)  # 1/2, 1/3, 1/5
    (0.5, 0.3333333333333333, 0.2)
    """
    return inline(
        "judged_fraction",
        k,
        ties=ties,
        item=item,
        score=score,
        relevance=relevance,
        rank=rank,
        denominator=denominator,
    )


def utility(
    k: int | None = None,
    *,
    a: float = 1.0,
    b: float = -1.0,
    c: float = 0.0,
    d: float = 0.0,
    rel: float = 1.0,
    ties: TiePolicy = "expected",
    item: str = "item",
    score: str | None = None,
    relevance: str = "relevance",
    rank: str | None = None,
) -> pl.Expr:
    """Linear set utility of the recommended top ``k`` (trec_eval ``utility``).

    Parameters
    ----------
    k
        Cutoff; ``None`` uses the whole recommendation list.
    a
        Weight of one item of this kind (see the definition). A number.
    b
        Weight of one item of this kind (see the definition). A number.
    c
        Weight of one item of this kind (see the definition). A number.
    d
        Weight of one item of this kind (see the definition). A number.
    rel
        Minimum relevance that counts as relevant (inclusive). A number > 0.
    ties
        Tie policy (see :func:`polars_rankeval.evaluate`).
    item, score, relevance, rank
        Column names (see :func:`polars_rankeval.evaluate`).

    Returns
    -------
    polars.Expr
        Aggregates one user's rows to one Float64 named after the metric; never null.

    Notes
    -----
    a * relevant recommended + b * non-relevant recommended + c * relevant not recommended +
    d * non-relevant not recommended, recommended meaning within the top k (trec_eval
    utility, defaults 1, -1, 0, 0; unjudged items count as non-relevant); d counts the
    user's rows, where trec_eval counts the collection (-N). Can be negative; never
    undefined.

    Examples
    --------
    Two relevant and three non-relevant items recommended, one relevant item not.

    >>> import polars as pl
    >>> from polars_rankeval.metrics import utility
    >>> df = pl.DataFrame({"user": [1] * 6, "item": list("ABCDEF"),
    ...                    "score": [6.0, 5.0, 4.0, 3.0, 2.0, None],
    ...                    "relevance": [1, 0, None, 2, 0, 1]})
    >>> df.select(utility(), utility(c=-0.5)).row(0)  # 2 - 3, then - 0.5 * 1
    (-1.0, -1.5)
    """
    return inline(
        "utility",
        k,
        ties=ties,
        item=item,
        score=score,
        relevance=relevance,
        rank=rank,
        a=a,
        b=b,
        c=c,
        d=d,
        rel=rel,
    )


def mae(
    *,
    ties: TiePolicy = "expected",
    item: str = "item",
    score: str = "score",
    relevance: str = "relevance",
) -> pl.Expr:
    """Mean absolute error of one user's predicted ratings.

    Over the rows with both a score (the predicted rating) and a relevance (the true
    rating). This is the per-user error (``average="user"``); the error over all rows
    at once is ``mae(average=global)`` in :func:`polars_rankeval.evaluate`.

    Parameters
    ----------
    ties
        Tie policy (see :func:`polars_rankeval.evaluate`).
    item, score, relevance
        Column names (see :func:`polars_rankeval.evaluate`).

    Returns
    -------
    polars.Expr
        Aggregates one user's rows to one Float64 named after the metric; null where it is
        undefined (see Notes).

    Notes
    -----
    mean of |score - relevance| over the rows with both; average=user (default): per user,
    then the mean over users; average=global: over all rated rows of the by group (summary
    only). Null without a rated row. Needs a score, not rank=.

    Examples
    --------
    Errors 0.5, 1 and 0 (item D has no prediction, item E no rating).

    >>> import polars as pl
    >>> import polars_rankeval as prk
    >>> df = pl.DataFrame({"user": [1] * 5, "item": list("ABCDE"),
    ...                    "score": [3.5, 2.0, 5.0, None, 4.0],
    ...                    "relevance": [4, 3, 5, 2, None]})
    >>> df.select(prk.mae()).item() == (0.5 + 1 + 0) / 3
    True
    """
    return inline(
        "mae",
        None,
        ties=ties,
        item=item,
        score=score,
        relevance=relevance,
        rank=None,
    )


def mse(
    *,
    ties: TiePolicy = "expected",
    item: str = "item",
    score: str = "score",
    relevance: str = "relevance",
) -> pl.Expr:
    """Mean squared error of one user's predicted ratings.

    Parameters
    ----------
    ties
        Tie policy (see :func:`polars_rankeval.evaluate`).
    item, score, relevance
        Column names (see :func:`polars_rankeval.evaluate`).

    Returns
    -------
    polars.Expr
        Aggregates one user's rows to one Float64 named after the metric; null where it is
        undefined (see Notes).

    Notes
    -----
    mean of (score - relevance)^2 over the rows with both; average as for mae. Null without
    a rated row. Needs a score, not rank=.

    Examples
    --------
    >>> import polars as pl
    >>> import polars_rankeval as prk
    >>> df = pl.DataFrame({"user": [1] * 5, "item": list("ABCDE"),
    ...                    "score": [3.5, 2.0, 5.0, None, 4.0],
    ...                    "relevance": [4, 3, 5, 2, None]})
    >>> df.select(prk.mse()).item() == (0.5**2 + 1**2 + 0**2) / 3
    True
    """
    return inline(
        "mse",
        None,
        ties=ties,
        item=item,
        score=score,
        relevance=relevance,
        rank=None,
    )


def rmse(
    *,
    ties: TiePolicy = "expected",
    item: str = "item",
    score: str = "score",
    relevance: str = "relevance",
) -> pl.Expr:
    """Root mean squared error of one user's predicted ratings.

    Its mean over users is the default summary of ``rmse``; ``rmse(average=global)``
    in :func:`polars_rankeval.evaluate` is the RMSE over all rated rows at once.

    Parameters
    ----------
    ties
        Tie policy (see :func:`polars_rankeval.evaluate`).
    item, score, relevance
        Column names (see :func:`polars_rankeval.evaluate`).

    Returns
    -------
    polars.Expr
        Aggregates one user's rows to one Float64 named after the metric; null where it is
        undefined (see Notes).

    Notes
    -----
    sqrt(mse): per user, then the mean of the users' RMSE (average=user, default), or the
    square root of the global MSE of the by group (average=global, summary only). Null
    without a rated row. Needs a score, not rank=.

    Examples
    --------
    >>> import polars as pl
    >>> import polars_rankeval as prk
    >>> df = pl.DataFrame({"user": [1] * 5, "item": list("ABCDE"),
    ...                    "score": [3.5, 2.0, 5.0, None, 4.0],
    ...                    "relevance": [4, 3, 5, 2, None]})
    >>> df.select(prk.rmse()).item() == ((0.5**2 + 1**2 + 0**2) / 3) ** 0.5
    True
    """
    return inline(
        "rmse",
        None,
        ties=ties,
        item=item,
        score=score,
        relevance=relevance,
        rank=None,
    )


def nmae(
    *,
    low: float,
    high: float,
    ties: TiePolicy = "expected",
    item: str = "item",
    score: str = "score",
    relevance: str = "relevance",
) -> pl.Expr:
    """Normalised mean absolute error: MAE divided by the rating range ``high - low``.

    A stand-alone expression sees one user's rows only, so the rating range is
    required here; :func:`polars_rankeval.evaluate` derives a missing bound from the
    whole data.

    Parameters
    ----------
    low
        Lower end of the rating scale; evaluate takes the lowest relevance of the input if
        none. A number. Required here: a stand-alone expression sees one user's rows only.
    high
        Upper end of the rating scale; evaluate takes the highest relevance of the input if
        none. A number. Required here: a stand-alone expression sees one user's rows only.
    ties
        Tie policy (see :func:`polars_rankeval.evaluate`).
    item, score, relevance
        Column names (see :func:`polars_rankeval.evaluate`).

    Returns
    -------
    polars.Expr
        Aggregates one user's rows to one Float64 named after the metric; null where it is
        undefined (see Notes).

    Notes
    -----
    mae / (high - low), the range of the rating scale; a bound not given is the minimum /
    maximum relevance over the judged rows of the whole input (evaluate's rating_range=);
    high > low (an error when both are given, null when a bound from the data leaves an
    empty range). average as for mae. Null without a rated row. Needs a score, not rank=.

    Examples
    --------
    >>> import polars as pl
    >>> import polars_rankeval as prk
    >>> df = pl.DataFrame({"user": [1] * 5, "item": list("ABCDE"),
    ...                    "score": [3.5, 2.0, 5.0, None, 4.0],
    ...                    "relevance": [4, 3, 5, 2, None]})
    >>> df.select(prk.nmae(low=1, high=5)).item() == (0.5 + 1 + 0) / 3 / (5 - 1)
    True
    """
    return inline(
        "nmae",
        None,
        ties=ties,
        item=item,
        score=score,
        relevance=relevance,
        rank=None,
        low=low,
        high=high,
    )


def rbp(
    k: int | None = None,
    *,
    p: float = 0.9,
    gain: Literal["scaled", "raw", "binary"] = "scaled",
    rel: float = 1.0,
    normalize: bool = False,
    ties: TiePolicy = "expected",
    item: str = "item",
    score: str | None = None,
    relevance: str = "relevance",
    rank: str | None = None,
) -> pl.Expr:
    """Rank-biased precision (Moffat & Zobel, 2008), as trec_eval's ``rbp``.

    ``gain`` picks the convention: trec_eval's gains scaled into [0, 1] (default),
    ranx's raw graded relevance, or LensKit's binary relevance (with ``normalize``,
    LensKit's ``RBP(normalize=True)``).

    Parameters
    ----------
    k
        Cutoff; ``None`` uses the whole recommendation list.
    p
        Persistence: the probability that the user goes on to the next item. A number in (0,
        1).
    gain
        Gain of an item: relevance / max(1, the user's highest relevance) (scaled:
        trec_eval), the relevance itself when >= rel (raw: ranx) or 1 when >= rel (binary:
        LensKit). One of ``"scaled"``, ``"raw"``, ``"binary"``.
    rel
        Minimum relevance that counts as relevant (inclusive). A number > 0.
    normalize
        Divide by the RBP of a list whose first min(#relevant, list size) items are relevant
        (LensKit RBP(normalize=True); needs gain=binary). ``True`` or ``False``.
    ties
        Tie policy (see :func:`polars_rankeval.evaluate`).
    item, score, relevance, rank
        Column names (see :func:`polars_rankeval.evaluate`).

    Returns
    -------
    polars.Expr
        Aggregates one user's rows to one Float64 named after the metric; null where it is
        undefined, which depends only on the user's judged rows.

    Notes
    -----
    (1 - p) * sum over the list (its top k with @k) of gain * p**(rank - 1) (Moffat & Zobel,
    2008); gain=scaled (default): relevance / max(1, the user's highest relevance),
    trec_eval's scaling of gains into [0, 1]; gain=raw: the relevance itself for items with
    relevance >= rel (ranx rbp, which can exceed 1); gain=binary: 1 for relevance >= rel
    (LensKit RBP). normalize=true divides by the RBP of min(R, L) relevant items at the top,
    1 - p**min(R, L), R = #relevant, L = min(k, #recommended), 0 for an empty list (LensKit
    RBP(normalize=True)). Null when no item is relevant: with gain=scaled, no item of
    positive relevance (rel= does not apply); otherwise none of relevance >= rel. Expected
    ties: each gain times the mean of p**(rank - 1) over its tie group's ranks.

    Examples
    --------
    Relevant items at ranks 1 and 3, persistence 1/2.

    >>> import polars as pl
    >>> from polars_rankeval.metrics import rbp
    >>> df = pl.DataFrame({"user": [1] * 3, "item": list("ABC"),
    ...                    "score": [0.9, 0.8, 0.7], "relevance": [1, 0, 1]})
    >>> df.select(rbp(p=0.5)).item()  # (1 - 0.5) * (1 + 0.5**2)
    0.625
    >>> # LensKit normalize=True: 2 relevant items, the best is 1 + 0.5
    >>> df.select(rbp(p=0.5, gain="binary", normalize=True)).item()  # 1.25 / 1.5
    0.8333333333333334
    """
    return inline(
        "rbp",
        k,
        ties=ties,
        item=item,
        score=score,
        relevance=relevance,
        rank=rank,
        p=p,
        gain=gain,
        rel=rel,
        normalize=normalize,
    )


def rbp_resid(
    *,
    p: float = 0.9,
    ties: TiePolicy = "expected",
    item: str = "item",
    score: str | None = None,
    relevance: str = "relevance",
    rank: str | None = None,
) -> pl.Expr:
    """The RBP residual (trec_eval ``rbp_resid``): how much RBP could still grow.

    The weight of the unjudged recommended items plus the weight of the ranks past the
    end of the list; 0 when every recommended item is judged (as in trec_eval).

    Parameters
    ----------
    p
        Persistence: the probability that the user goes on to the next item. A number in (0,
        1).
    ties
        Tie policy (see :func:`polars_rankeval.evaluate`).
    item, score, relevance, rank
        Column names (see :func:`polars_rankeval.evaluate`).

    Returns
    -------
    polars.Expr
        Aggregates one user's rows to one Float64 named after the metric; never null.

    Notes
    -----
    p**#recommended + (1 - p) * sum over unjudged recommended items of p**(rank - 1)
    (trec_eval rbp_resid); 0 when no recommended item is unjudged, as in trec_eval. Expected
    ties: the mean of p**(rank - 1) over the tie group.

    Examples
    --------
    Three items, the second unjudged (null relevance), persistence 1/2.

    >>> import polars as pl
    >>> from polars_rankeval.metrics import rbp_resid
    >>> df = pl.DataFrame({"user": [1] * 3, "item": list("ABC"),
    ...                    "score": [0.9, 0.8, 0.7], "relevance": [1, None, 0]})
    >>> df.select(rbp_resid(p=0.5)).item()  # 0.5**3 + (1 - 0.5) * 0.5
    0.375
    """
    return inline(
        "rbp_resid",
        None,
        ties=ties,
        item=item,
        score=score,
        relevance=relevance,
        rank=rank,
        p=p,
    )


def bin_g(
    *,
    rel: float = 1.0,
    ties: TiePolicy = "expected",
    item: str = "item",
    score: str | None = None,
    relevance: str = "relevance",
    rank: str | None = None,
) -> pl.Expr:
    """Binary G (trec_eval ``binG``).

    Each relevant recommended item scores ``1 / log2(2 + #non-relevant items above
    it)``; the sum is divided by the number of relevant items.

    Parameters
    ----------
    rel
        Minimum relevance that counts as relevant (inclusive). A number > 0.
    ties
        Tie policy (see :func:`polars_rankeval.evaluate`).
    item, score, relevance, rank
        Column names (see :func:`polars_rankeval.evaluate`).

    Returns
    -------
    polars.Expr
        Aggregates one user's rows to one Float64 named after the metric; null where it is
        undefined, which depends only on the user's judged rows.

    Notes
    -----
    sum over relevant recommended items of 1 / log2(2 + #non-relevant or unjudged items
    ranked above it), divided by #relevant (trec_eval binG). Expected ties: within its tie
    group the number of non-relevant items above a relevant one is uniform on 0..(n - r).

    Examples
    --------
    Relevant items at ranks 1 and 3 (one non-relevant item above the second), and a
    third relevant item that was not recommended.

    >>> import polars as pl
    >>> from polars_rankeval.metrics import bin_g
    >>> df = pl.DataFrame({"user": [1] * 4, "item": list("ABCD"),
    ...                    "score": [0.9, 0.8, 0.7, None], "relevance": [1, 0, 1, 1]})
    >>> round(df.select(bin_g()).item(), 6)  # (1 / log2(2) + 1 / log2(3)) / 3
    0.543643
    """
    return inline(
        "bin_g",
        None,
        ties=ties,
        item=item,
        score=score,
        relevance=relevance,
        rank=rank,
        rel=rel,
    )


def g(
    *,
    ties: TiePolicy = "item_desc",
    item: str = "item",
    score: str | None = None,
    relevance: str = "relevance",
    rank: str | None = None,
) -> pl.Expr:
    """trec_eval's normalised gain ``G``.

    The item at rank i scores ``gain / log2(2 + cost(i) - got(i))``: ``got(i)`` is the
    gain of ranks 1..i, ``cost(i)`` that of the ideal ranks 1..i (each at least 1). The
    sum is divided by the total gain of the judged items. Deterministic tie policies
    only (the default is trec_eval's).

    Parameters
    ----------
    ties
        Tie policy (see :func:`polars_rankeval.evaluate`); this metric supports
        ``"item_desc"``, ``"item_asc"``, ``"optimistic"``, ``"pessimistic"`` only.
    item, score, relevance, rank
        Column names (see :func:`polars_rankeval.evaluate`).

    Returns
    -------
    polars.Expr
        Aggregates one user's rows to one Float64 named after the metric; null where it is
        undefined, which depends only on the user's judged rows.

    Notes
    -----
    sum over recommended items at rank i of gain / log2(2 + cost(i) - got(i)), got(i) = gain
    of ranks 1..i, cost(i) = sum over ideal ranks 1..i of max(1, ideal gain); divided by the
    total gain of the judged items (trec_eval G). Null when no item has a positive
    relevance. Deterministic tie policies only.

    Examples
    --------
    Gains 1, 0, 2 and an unrecommended item of gain 1: the ideal list is 2, 1, 1, so
    cost = 2, 3, 4 and got = 1, 1, 3.

    >>> import polars as pl
    >>> from polars_rankeval.metrics import g
    >>> df = pl.DataFrame({"user": [1] * 4, "item": list("ABCD"),
    ...                    "score": [0.9, 0.8, 0.7, None], "relevance": [1, 0, 2, 1]})
    >>> round(df.select(g()).item(), 6)  # (1 / log2(2 + 2 - 1) + 2 / log2(2 + 4 - 3)) / 4
    0.473197
    """
    return inline(
        "g",
        None,
        ties=ties,
        item=item,
        score=score,
        relevance=relevance,
        rank=rank,
    )


def ndcg_rel(
    *,
    ties: TiePolicy = "item_desc",
    item: str = "item",
    score: str | None = None,
    relevance: str = "relevance",
    rank: str | None = None,
) -> pl.Expr:
    """Normalised DCG averaged over the ranks of the relevant items (trec_eval ``ndcg_rel``).

    Each relevant recommended item at rank i contributes ``dcg@i / idcg@i``; each
    relevant item that was not recommended contributes the full-list ``dcg / idcg``.
    Deterministic tie policies only (the default is trec_eval's).

    Parameters
    ----------
    ties
        Tie policy (see :func:`polars_rankeval.evaluate`); this metric supports
        ``"item_desc"``, ``"item_asc"``, ``"optimistic"``, ``"pessimistic"`` only.
    item, score, relevance, rank
        Column names (see :func:`polars_rankeval.evaluate`).

    Returns
    -------
    polars.Expr
        Aggregates one user's rows to one Float64 named after the metric; null where it is
        undefined, which depends only on the user's judged rows.

    Notes
    -----
    (sum over relevant recommended items at rank i of dcg@i / idcg@i + #relevant
    unrecommended * dcg / idcg) / #relevant, relevant = positive relevance, gain =
    relevance, discount 1 / log2(rank + 1), idcg over all judged items. Null without a
    relevant item. Deterministic tie policies only.

    Examples
    --------
    Gains 1, 0, 2 and an unrecommended item of gain 1 (ideal list 2, 1, 1).

    >>> import polars as pl
    >>> from math import log2
    >>> from polars_rankeval.metrics import ndcg_rel
    >>> df = pl.DataFrame({"user": [1] * 4, "item": list("ABCD"),
    ...                    "score": [0.9, 0.8, 0.7, None], "relevance": [1, 0, 2, 1]})
    >>> dcg1, dcg3 = 1.0, 1 + 2 / log2(4)
    >>> idcg1, idcg3 = 2.0, 2 + 1 / log2(3) + 1 / log2(4)
    >>> expected = (dcg1 / idcg1 + dcg3 / idcg3 + dcg3 / idcg3) / 3
    >>> abs(df.select(ndcg_rel()).item() - expected) < 1e-12
    True
    """
    return inline(
        "ndcg_rel",
        None,
        ties=ties,
        item=item,
        score=score,
        relevance=relevance,
        rank=rank,
    )


def rndcg(
    *,
    ties: TiePolicy = "item_desc",
    item: str = "item",
    score: str | None = None,
    relevance: str = "relevance",
    rank: str | None = None,
) -> pl.Expr:
    """Normalised DCG averaged at the R-level cutoffs (trec_eval ``Rndcg``).

    For each distinct positive relevance v, ndcg at R_v = the number of items with
    relevance at least v; plus the full-list ndcg when more than R + 1 items are
    recommended (R = the number of items with a positive relevance), as trec_eval does.
    Deterministic tie policies only (the default is trec_eval's).

    Parameters
    ----------
    ties
        Tie policy (see :func:`polars_rankeval.evaluate`); this metric supports
        ``"item_desc"``, ``"item_asc"``, ``"optimistic"``, ``"pessimistic"`` only.
    item, score, relevance, rank
        Column names (see :func:`polars_rankeval.evaluate`).

    Returns
    -------
    polars.Expr
        Aggregates one user's rows to one Float64 named after the metric; null where it is
        undefined, which depends only on the user's judged rows.

    Notes
    -----
    mean of ndcg@R_v over the distinct positive relevances v, R_v = #items with relevance >=
    v (dcg cut at R_v, idcg cut at R_v; gain = relevance), plus the full-list dcg / idcg
    when #recommended > R + 1 (R = #positive items), as trec_eval computes it. Null without
    a relevant item. Deterministic tie policies only.

    Examples
    --------
    Gains 1, 0, 2, 0, 0 recommended and an unrecommended item of gain 1: R_2 = 1,
    R_1 = 3, and 5 > R + 1 = 4 recommended items add the full-list point.

    >>> import polars as pl
    >>> from math import log2
    >>> from polars_rankeval.metrics import rndcg
    >>> df = pl.DataFrame({"user": [1] * 6, "item": list("ABCDEF"),
    ...                    "score": [0.9, 0.8, 0.7, 0.6, 0.5, None],
    ...                    "relevance": [1, 0, 2, 0, 0, 1]})
    >>> dcg = 1 + 2 / log2(4)
    >>> idcg1, idcg3 = 2.0, 2 + 1 / log2(3) + 1 / log2(4)
    >>> expected = (1 / idcg1 + dcg / idcg3 + dcg / idcg3) / 3
    >>> abs(df.select(rndcg()).item() - expected) < 1e-12
    True
    """
    return inline(
        "rndcg",
        None,
        ties=ties,
        item=item,
        score=score,
        relevance=relevance,
        rank=rank,
    )


def nerr(
    k: int | None = None,
    *,
    max_grade: float,
    ties: TiePolicy = "item_desc",
    item: str = "item",
    score: str | None = None,
    relevance: str = "relevance",
    rank: str | None = None,
) -> pl.Expr:
    """Normalised expected reciprocal rank at k.

    ERR (see :func:`err`) divided by the ERR of the ideal ordering of the user's judged
    items (by grade, best first, cut at k), so that an ideal list scores 1 whatever the
    number and grades of the user's relevant items. The grade scale ``max_grade`` is
    required here; :func:`polars_rankeval.evaluate` takes it from the whole input when
    it is not given (``nerr@10``).

    Parameters
    ----------
    k
        Cutoff; ``None`` uses the whole recommendation list.
    max_grade
        The highest grade of the scale; evaluate takes the highest relevance of the input if
        none. A number > 0. Required here: a stand-alone expression sees one user's rows
        only.
    ties
        Tie policy (see :func:`polars_rankeval.evaluate`); this metric supports
        ``"item_desc"``, ``"item_asc"``, ``"optimistic"``, ``"pessimistic"`` only.
    item, score, relevance, rank
        Column names (see :func:`polars_rankeval.evaluate`).

    Returns
    -------
    polars.Expr
        Aggregates one user's rows to one Float64 named after the metric; null where it is
        undefined, which depends only on the user's judged rows.

    Notes
    -----
    err@k / the err@k of the user's judged items (recommended or not) ordered by grade, best
    first (Chapelle et al., 2009: R = (2**g - 1) / 2**max_grade, the grade clipped to [0,
    max_grade], max_grade by default the highest relevance of the whole input). In [0, 1]; 1
    for an ideal top k. Null when the user has no item of positive grade. Deterministic tie
    policies only.

    Examples
    --------
    Grades 0, 2, 1 ranked in that order on a 0..2 scale: R = 0, 3/4, 1/4. The ideal
    order is 2, 1, 0.

    >>> import polars as pl
    >>> import polars_rankeval as prk
    >>> df = pl.DataFrame({"user": [1] * 3, "item": list("ABC"),
    ...                    "score": [3.0, 2.0, 1.0], "relevance": [0, 2, 1]})
    >>> value = df.select(prk.nerr(max_grade=2)).item()
    >>> err = 1 / 2 * 3 / 4 + 1 / 3 * 1 / 4 * (1 / 4)
    >>> ideal = 3 / 4 + 1 / 2 * 1 / 4 * (1 / 4)
    >>> abs(value - err / ideal) < 1e-15
    True
    """
    return inline(
        "nerr",
        k,
        ties=ties,
        item=item,
        score=score,
        relevance=relevance,
        rank=rank,
        max_grade=max_grade,
    )


def inst(
    k: int | None = None,
    *,
    target: float = 1.0,
    max_grade: float,
    depth: int | None = None,
    ties: TiePolicy = "item_desc",
    item: str = "item",
    score: str | None = None,
    relevance: str = "relevance",
    rank: str | None = None,
) -> pl.Expr:
    """INST: the adaptive C/W/L measure (Moffat, Bailey, Scholer & Thomas, 2017).

    A user who expects to need ``T`` units of gain reads on from rank i with
    probability ``C(i) = ((i + T + T_i - 1) / (i + T + T_i))**2``, where ``T_i`` is the
    gain still missing after rank i; INST is the expected rate of gain per item read,
    ``sum_i W(i) * g_i`` with ``W`` proportional to the chance of reaching rank i.
    The ranking is read as going on with gain 0 past its end (or past ``@k``);
    ``depth`` ends the model at that rank, as ``cwl_eval`` does (``depth=1000``).
    The grade scale ``max_grade`` is required here; :func:`polars_rankeval.evaluate`
    takes it from the whole input when it is not given (``inst@10``).

    Parameters
    ----------
    k
        Cutoff; ``None`` uses the whole recommendation list.
    target
        T: the gain the user expects to need (relevant items, for binary relevance). A
        number in (0, 1000000].
    max_grade
        The highest grade of the scale; evaluate takes the highest relevance of the input if
        none. A number > 0. Required here: a stand-alone expression sees one user's rows
        only.
    depth
        Last rank of the user model (cwl_eval's -n, 1000 by default); none: no end. An
        integer >= 1, or ``None``.
    ties
        Tie policy (see :func:`polars_rankeval.evaluate`); this metric supports
        ``"item_desc"``, ``"item_asc"``, ``"optimistic"``, ``"pessimistic"`` only.
    item, score, relevance, rank
        Column names (see :func:`polars_rankeval.evaluate`).

    Returns
    -------
    polars.Expr
        Aggregates one user's rows to one Float64 named after the metric; never null.

    Notes
    -----
    sum over ranks i of W(i) * g_i, W(i) proportional to the product over j < i of C(j) =
    ((j + T + T_j - 1) / (j + T + T_j))**2, T_j = T - (gain of ranks 1..j); g = clip(rel, 0,
    max_grade) / max_grade (max_grade by default the highest relevance of the whole input);
    ranks past the list or @k have gain 0 and the weights are normalised over every rank
    (depth=none: the tail in closed form) or ranks 1..depth (cwl_eval: depth=1000). In [0,
    1]; 0 when nothing relevant is recommended. Deterministic tie policies only.

    Examples
    --------
    One relevant item at rank 1 and the model ended at rank 2, T = 1: C(1) = ((1 + 1 +
    0 - 1) / (1 + 1 + 0))**2 = 1/4, so W(1) = 1 / (1 + 1/4) = 4/5.

    >>> import polars as pl
    >>> import polars_rankeval as prk
    >>> df = pl.DataFrame({"user": [1] * 2, "item": list("AB"),
    ...                    "score": [2.0, 1.0], "relevance": [1, 0]})
    >>> df.select(prk.inst(max_grade=1, depth=2)).item()
    0.8
    """
    return inline(
        "inst",
        k,
        ties=ties,
        item=item,
        score=score,
        relevance=relevance,
        rank=rank,
        target=target,
        max_grade=max_grade,
        depth=depth,
    )


def insq(
    k: int | None = None,
    *,
    target: float = 1.0,
    max_grade: float,
    depth: int | None = None,
    ties: TiePolicy = "expected",
    item: str = "item",
    score: str | None = None,
    relevance: str = "relevance",
    rank: str | None = None,
) -> pl.Expr:
    """INSQ: the C/W/L measure of Moffat, Scholer & Thomas (2012), INST's predecessor.

    The user goes on from rank i with probability ``C(i) = ((i + 2T - 1) / (i + 2T))**2``,
    whatever they found: the weight of rank i is ``(2T / (i - 1 + 2T))**2`` over the sum
    of those weights, over every rank (``depth=None``) or ranks 1..depth.

    Parameters
    ----------
    k
        Cutoff; ``None`` uses the whole recommendation list.
    target
        T: the gain the user expects to need (relevant items, for binary relevance). A
        number in (0, 1000000].
    max_grade
        The highest grade of the scale; evaluate takes the highest relevance of the input if
        none. A number > 0. Required here: a stand-alone expression sees one user's rows
        only.
    depth
        Last rank of the user model (cwl_eval's -n, 1000 by default); none: no end. An
        integer >= 1, or ``None``.
    ties
        Tie policy (see :func:`polars_rankeval.evaluate`).
    item, score, relevance, rank
        Column names (see :func:`polars_rankeval.evaluate`).

    Returns
    -------
    polars.Expr
        Aggregates one user's rows to one Float64 named after the metric; never null.

    Notes
    -----
    sum over ranks i of W(i) * g_i, W(i) proportional to (2T / (i - 1 + 2T))**2, the product
    over j < i of C(j) = ((j + 2T - 1) / (j + 2T))**2; g = clip(rel, 0, max_grade) /
    max_grade; ranks past the list or @k have gain 0; the weights are normalised over every
    rank ((2T)**2 * zeta(2, 2T)) or over ranks 1..depth (cwl_eval: depth=1000). In [0, 1].
    Expected ties: each gain times the mean weight of its tie group's ranks.

    Examples
    --------
    T = 1, a relevant item at rank 2, the model ended at rank 2: weights 1 and (2/3)**2.

    >>> import polars as pl
    >>> import polars_rankeval as prk
    >>> df = pl.DataFrame({"user": [1] * 2, "item": list("AB"),
    ...                    "score": [2.0, 1.0], "relevance": [0, 1]})
    >>> value = df.select(prk.insq(max_grade=1, depth=2)).item()
    >>> abs(value - (4 / 9) / (1 + 4 / 9)) < 1e-15
    True
    """
    return inline(
        "insq",
        k,
        ties=ties,
        item=item,
        score=score,
        relevance=relevance,
        rank=rank,
        target=target,
        max_grade=max_grade,
        depth=depth,
    )
