"""Sampled estimates that other libraries report, computed here for comparison.

Not metrics (no expression, no registry entry): functions that run
:func:`polars_rankeval.evaluate` on samples of users. They live above ``evaluate``,
outside the ``metrics`` package, which never imports it.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import polars as pl

from polars_rankeval._utils.constraints import (
    COLUMN,
    Frame,
    Instance,
    Integer,
    Options,
    validate_params,
)
from polars_rankeval._utils.ties import POLICIES, Ties
from polars_rankeval._utils.types import TiePolicy, make_columns
from polars_rankeval.api.evaluate import evaluate
from polars_rankeval.metrics.defaults import INTER_LIST_DIVERSITY
from polars_rankeval.metrics.params import Interval
from polars_rankeval.plan.validate import to_lazy


@validate_params(
    {
        "data": Frame(),
        "k": [Integer(Interval(1, None)), None],
        "sample_size": [Integer(Interval(1, None)), None],
        "runs": Integer(Interval(1, None)),
        "seed": Integer(),
        "user": COLUMN,
        "item": COLUMN,
        "score": [COLUMN, None],
        "rank": [COLUMN, None],
        "relevance": COLUMN,
        "ties": [Options(live=POLICIES), Instance(Ties, what="a Ties policy")],
    }
)
def inter_list_diversity_sampled(
    data: Any,
    k: int | None,
    *,
    sample_size: int | None = 10_000,
    runs: int = 10,
    seed: int = 1,
    user: str = "user",
    item: str = "item",
    score: str | None = None,
    rank: str | None = None,
    relevance: str = "relevance",
    ties: TiePolicy = "expected",
) -> float:
    """Jurity's sampled estimate of inter-list diversity@k, for comparison.

    Each of ``runs`` runs draws ``sample_size`` distinct users (without replacement)
    among the users with a recommendation and computes the inter-list diversity of
    their lists; the estimate is the mean over the runs (Jurity's defaults: 10 runs of
    10,000 users). The draws come from ``numpy.random.default_rng(seed)``; each run is
    computed exactly, like ``inter_list_diversity@k``, so the difference to the exact
    value is the sampling error alone. ``sample_size=None``, or a sample size of at
    least the number of users, gives the exact value.

    Parameters
    ----------
    data
        The long frame (DataFrame or LazyFrame); rows with a score (or rank) are the
        recommendations, the relevance is not read.
    k
        The cutoff (``None``: whole lists).
    sample_size
        Users per run (``None``: all users, one run).
    runs
        Number of runs averaged.
    seed
        Seed of the random generator.
    user, item, score, rank, relevance
        Column names, as in :func:`polars_rankeval.evaluate`.
    ties
        Tie policy for the top k.

    Returns
    -------
    float
        The mean over the runs; NaN when fewer than 2 users have a recommendation.

    Examples
    --------
    >>> import polars as pl
    >>> import polars_rankeval as prk
    >>> recs = pl.DataFrame({
    ...     "user": [1, 1, 2, 2, 3, 3],
    ...     "item": ["a", "b", "a", "c", "c", "d"],
    ...     "score": [2.0, 1.0, 2.0, 1.0, 2.0, 1.0],
    ... })
    >>> round(prk.inter_list_diversity_sampled(recs, 2, sample_size=None), 6)
    0.666667
    >>> round(prk.inter_list_diversity_sampled(recs, 2, sample_size=2, runs=4, seed=0), 6)
    0.75
    """
    sample_size = None if sample_size is None else int(sample_size)
    runs, seed, k = int(runs), int(seed), None if k is None else int(k)
    cols = make_columns(user=user, item=item, score=score, relevance=relevance, rank=rank)
    lf, _ = to_lazy(data)
    schema = lf.collect_schema()
    if cols.relevance not in schema:
        lf = lf.with_columns(pl.lit(None, dtype=pl.Int64).alias(cols.relevance))
    lf = lf.select(cols.user, cols.item, cols.order, cols.relevance)
    users = (
        lf.filter(pl.col(cols.order).is_not_null())
        .select(pl.col(cols.user).unique().sort())
        .collect()
        .get_column(cols.user)
    )
    if users.len() < 2:
        return math.nan
    metric = INTER_LIST_DIVERSITY + (f"@{k}" if k is not None else "")
    options: dict[str, Any] = {
        "user": user,
        "item": item,
        "score": score,
        "rank": rank,
        "relevance": relevance,
        "ties": ties,
        "users": "recs",
        "engine": "memory",
    }
    if sample_size is None or sample_size >= users.len():
        return float(evaluate(lf.collect(), metric, **options).item(0, metric))
    rng = np.random.default_rng(seed)
    values = []
    for _ in range(runs):
        chosen = users.gather(rng.choice(users.len(), size=sample_size, replace=False))
        sample = lf.filter(pl.col(cols.user).is_in(chosen.implode())).collect()
        value = evaluate(sample, metric, validate=False, **options).item(0, metric)
        values.append(math.nan if value is None else float(value))
    return float(np.mean(values))
