"""Counts: recommended, relevant, and relevant recommended items per user."""

from __future__ import annotations

import polars as pl

from polars_rankeval.metrics._common import Rel, hits, list_size, num_relevant
from polars_rankeval.metrics.features import Features
from polars_rankeval.metrics.registry import register


@register(
    "num_ret",
    absolute_positions=True,
    repeated_ranks=True,
    higher_is_better=None,
    defined="always",
    family="count",
    normalized=False,
    summary="Number of recommended items (at most k).",
    definition=(
        "min(k, #rows with a score); never undefined. aggregate=sum gives the total over "
        "the users (trec_eval's all line, ir_measures NumRet)."
    ),
    doc="""
    Number of recommended items, at most ``k``.

    Examples
    --------
    >>> import polars as pl
    >>> import polars_rankeval as prk
    >>> df = pl.DataFrame({"user": [1] * 3, "item": [1, 2, 3],
    ...                    "score": [0.3, 0.2, None], "relevance": [1, 0, 1]})
    >>> df.select(prk.num_ret(), prk.num_rel(), prk.num_rel_ret()).row(0)
    (2.0, 2.0, 1.0)
    """,
)
def _num_ret(f: Features, k: int | None) -> pl.Expr:
    return list_size(f, k)


@register(
    "num_rel",
    absolute_positions=True,
    repeated_ranks=True,
    higher_is_better=None,
    defined="always",
    family="count",
    normalized=False,
    takes_k=False,
    summary="Number of relevant items, recommended or not.",
    definition=(
        "#rows with relevance >= rel; never undefined. aggregate=sum gives the total over "
        "the users (trec_eval's all line, ir_measures NumRel)."
    ),
    doc="""
    Number of relevant items (relevance >= ``rel``), recommended or not.

    Examples
    --------
    >>> import polars as pl
    >>> import polars_rankeval as prk
    >>> df = pl.DataFrame({"user": [1] * 3, "item": [1, 2, 3],
    ...                    "score": [0.3, 0.2, None], "relevance": [2, 1, 1]})
    >>> df.select(prk.num_rel(rel=2)).item()
    1.0
    """,
)
def _num_rel(f: Features, k: None, *, rel: Rel = 1.0) -> pl.Expr:
    return num_relevant(f, rel)


@register(
    "num_rel_ret",
    absolute_positions=True,
    repeated_ranks=True,
    defined="always",
    family="count",
    normalized=False,
    summary="Number of relevant items in the top k (expected count under ties).",
    definition=(
        "hits@k; under ties=expected the expected number of hits. aggregate=sum gives the "
        "total over the users (trec_eval's all line, ir_measures NumRet(rel=1))."
    ),
    doc="""
    Number of relevant items among the top ``k`` recommendations.

    Examples
    --------
    >>> import polars as pl
    >>> import polars_rankeval as prk
    >>> df = pl.DataFrame({"user": [1] * 3, "item": [1, 2, 3],
    ...                    "score": [0.5, 0.5, 0.1], "relevance": [1, 0, 1]})
    >>> df.select(prk.num_rel_ret(1)).item()  # the tie puts the hit first half the time
    0.5
    """,
)
def _num_rel_ret(f: Features, k: int | None, *, rel: Rel = 1.0) -> pl.Expr:
    return hits(f, k, rel)
