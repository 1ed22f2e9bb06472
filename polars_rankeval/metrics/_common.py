"""What every metric family shares: the inline builder and small reductions."""

from __future__ import annotations

from typing import Any

import polars as pl

from polars_rankeval._features import Features
from polars_rankeval._types import TIE_POLICIES, TiePolicy, check_choice, make_columns
from polars_rankeval.registry import bind


def inline(
    name: str,
    k: int | None,
    *,
    ties: TiePolicy,
    item: str,
    score: str | None,
    relevance: str,
    rank: str | None,
    **options: Any,
) -> pl.Expr:
    """Build a metric expression that aggregates one group (one user) to one value."""
    check_choice("ties", ties, TIE_POLICIES)
    metric = bind(name, k, **options)
    cols = make_columns(item=item, score=score, relevance=relevance, rank=rank)
    return metric.expr(Features(cols, ties, keys=None))


def num_relevant(f: Features, rel: float) -> pl.Expr:
    """Relevant rows of the user, recommended or not."""
    return f.is_rel(rel).sum()


def hits(f: Features, k: int | pl.Expr | None, rel: float) -> pl.Expr:
    """Relevant items among the recommended top k (their expected number under ties)."""
    return (f.is_rel(rel) * f.p_in(k)).sum()


def defined_if(condition: pl.Expr, value: pl.Expr) -> pl.Expr:
    """``value`` where ``condition`` holds, else null (undefined; see ``empty=``)."""
    return pl.when(condition).then(value).otherwise(None)


def safe_div(num: pl.Expr, den: pl.Expr) -> pl.Expr:
    """``num / den``, 0 where ``den`` is 0."""
    return pl.when(den > 0).then(num / den).otherwise(0.0)
