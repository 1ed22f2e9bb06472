"""Rank correlation between the predicted scores and the true relevance, per user.

Over the user's *rated* items: rows with both a score and a relevance (recommended and
judged). Unlike the top-k metrics these compare two orderings as a whole (the lecture's
rank correlation, Schröder et al. 4.3), so no cutoff applies. Ties are the data's own:
tied scores get average ranks (Spearman), are left out of the concordance counts
(Kendall's tau-b) or count as half concordant (fcp), so the value is the same under
every tie policy. With ``rank=`` instead of a score the ranks are used (1 = best).

Undefined (null; the ``empty=`` policy decides) with fewer than two rated items or when
the scores or the relevances are all equal (no pair to compare).

``kendall_tau`` and ``fcp`` count pairs. They are computed by a sub-plan
(:class:`~polars_rankeval.metrics.spec.FramePlan`) without a self-join: the discordant pairs
are counted bit by bit of the dense relevance rank (pairs that split on bit b share the
higher bits), one cumulative count per bit, in O(n log d) rows per user of n rated
items with d distinct relevance values (one pass for binary relevance), not O(n^2).
They are available through :func:`polars_rankeval.evaluate` and the grammar only.
"""

from __future__ import annotations

from typing import Annotated, Literal

import polars as pl

from polars_rankeval.metrics._common import defined_if, f64
from polars_rankeval.metrics.features import Features
from polars_rankeval.metrics.registry import register
from polars_rankeval.metrics.spec import FramePlan

FAMILY = "correlation"
ScoreTies = Annotated[
    Literal["half", "discordant"], "a pair with equal scores counts 1/2, or as discordant"
]


def _score(f: Features) -> pl.Expr:
    """The predicted score, higher is better (minus the rank for ``rank=``).

    Ordered exactly (:attr:`Features.score`): never cast to Float64 before ranking.
    """
    return f.score


def _truth(f: Features) -> pl.Expr:
    return pl.col(f.cols.relevance).cast(pl.Float64) + 0.0


def _rated(f: Features) -> pl.Expr:
    """Rows with both a score and a relevance."""
    return pl.col(f.cols.order).is_not_null() & pl.col(f.cols.relevance).is_not_null()


# --------------------------------------------------------------------------- kernels
@register(
    "spearman",
    bounds=(-1.0, 1.0),
    family=FAMILY,
    takes_k=False,
    normalized=False,
    summary="Spearman's rho between scores and relevance over the rated items.",
    definition=(
        "Pearson correlation of the average ranks (ties get the mean of their ranks) of "
        "score and relevance over the user's items with both (scipy spearmanr), in "
        "[-1, 1]. Null with fewer than two such items or a constant score or relevance. "
        "The same under every tie policy."
    ),
    doc="""
    Spearman's rank correlation between the scores and the true relevance.

    Over the user's items with both a score and a relevance: the Pearson correlation
    of their average ranks, as :func:`scipy.stats.spearmanr` computes it. Tied scores
    keep their average rank under every tie policy. ``kendall_tau`` and ``fcp`` count
    pairs in a sub-plan of their own: use them through :func:`polars_rankeval.evaluate`.

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
    """,
)
def _spearman(f: Features, k: None) -> pl.Expr:
    rated = _rated(f)
    n = f.user_total(f64(rated), "rated")
    # Average ranks of n values always have mean (n + 1) / 2: centring on it is exact.
    mid = (n + 1.0) / 2.0
    rx = f.user_window(pl.when(rated).then(_score(f)).rank("average"), "spearman_x") - mid
    ry = f.user_window(pl.when(rated).then(_truth(f)).rank("average"), "spearman_y") - mid
    sxx, syy, sxy = (rx * rx).sum(), (ry * ry).sum(), (rx * ry).sum()
    return defined_if((sxx > 0) & (syy > 0), sxy / (sxx * syy).sqrt())


def _pair_counts(f: Features) -> FramePlan:
    """Per user: n, tied pairs in x (n1), in y (n2), in both (n3), and discordant D."""
    keys = f.keys
    x, y, rated = _score(f), _truth(f), _rated(f)

    def build(rows: pl.LazyFrame) -> pl.LazyFrame:
        # Sorted once by (x, y) within the user: the windows below keep this row order.
        base = rows.filter(rated).select(*keys, x.alias("x"), y.alias("y")).sort([*keys, "x", "y"])
        # rho: dense rank of the relevance from 0; bits: how many bits rho needs.
        base = base.with_columns(
            rho=pl.col("y").rank("dense").over(keys).cast(pl.Int64) - 1,
        ).with_columns(
            bits=64 - pl.col("rho").max().over(keys).bitwise_leading_zeros().cast(pl.Int64),
        )
        # A row in a group of t tied values adds (t - 1) / 2: t(t - 1) / 2 per group.
        counts = (
            base.with_columns(
                t1=pl.len().over([*keys, "x"]),
                t2=pl.len().over([*keys, "y"]),
                t3=pl.len().over([*keys, "x", "y"]),
            )
            .group_by(keys)
            .agg(
                n=pl.len().cast(pl.Float64),
                n1=((pl.col("t1") - 1) / 2.0).sum(),
                n2=((pl.col("t2") - 1) / 2.0).sum(),
                n3=((pl.col("t3") - 1) / 2.0).sum(),
            )
        )
        # Discordant pairs (x_i < x_j, y_i > y_j): in the order (x, y) ascending, a row
        # preceded by a row of higher rho. Two rhos first differ at one bit b, where the
        # higher has a 1: count, per level b and per prefix rho >> (b + 1), the rows with
        # bit 1 that precede each row with bit 0. Rows of equal x come in y order, so they
        # never count; rows of equal y share every bit.
        level = pl.col("level")
        levels = (
            base.with_columns(level=pl.int_ranges(0, pl.col("bits")))
            .explode("level")
            .drop_nulls("level")
            .with_columns(
                prefix=pl.col("rho") // pl.lit(2, dtype=pl.Int64).pow(level + 1),
                bit=(pl.col("rho") // pl.lit(2, dtype=pl.Int64).pow(level)) % 2,
            )
        )
        higher_before = pl.col("bit").cum_sum().over([*keys, "level", "prefix"])
        discordant = levels.group_by(keys).agg(
            d=pl.when(pl.col("bit") == 0).then(higher_before).otherwise(0).sum().cast(pl.Float64)
        )
        return counts.join(discordant, on=keys, how="left", nulls_equal=True).with_columns(
            pl.col("d").fill_null(0.0)
        )

    return FramePlan(build)


def _finish(plan: FramePlan, keys: list[str], value: pl.Expr) -> FramePlan:
    """A FramePlan whose per-user counts (n, n1, n2, n3, d) become ``value``."""

    def build(rows: pl.LazyFrame) -> pl.LazyFrame:
        n = pl.col("n")
        return plan.build(rows).with_columns(pairs=n * (n - 1.0) / 2.0).select(*keys, value)

    return FramePlan(build)


@register(
    "kendall_tau",
    bounds=(-1.0, 1.0),
    family=FAMILY,
    takes_k=False,
    normalized=False,
    summary="Kendall's tau-b between scores and relevance over the rated items.",
    definition=(
        "tau-b = (concordant - discordant) / sqrt((n0 - n1)(n0 - n2)) over the pairs of the "
        "user's items with both a score and a relevance, n0 = all pairs, n1 / n2 = pairs "
        "tied in score / relevance (scipy kendalltau), in [-1, 1]. Null with fewer than "
        "two such items or a constant score or relevance. The same under every tie policy."
    ),
)
def _kendall_tau(f: Features, k: None) -> FramePlan:
    pairs, n1, n2, n3, d = (pl.col(c) for c in ("pairs", "n1", "n2", "n3", "d"))
    net = pairs - n1 - n2 + n3 - 2.0 * d  # concordant - discordant
    den = (pairs - n1) * (pairs - n2)
    return _finish(_pair_counts(f), f.keys, defined_if(den > 0, net / den.sqrt()).alias("value"))


@register(
    "fcp",
    family=FAMILY,
    takes_k=False,
    summary="Fraction of concordant pairs among the pairs with different relevance.",
    definition=(
        "over the pairs of the user's items with both a score and a relevance whose "
        "relevances differ: the fraction ordered the same way by the score; a pair with "
        "tied scores counts 1/2 (score_ties=half, the expectation over tie orderings) or 0 "
        "(score_ties=discordant). With half, fcp = (1 + Somers' d) / 2, the AUC of the "
        "rated items for binary relevance. Null without a pair of different relevance. "
        "The same under every tie policy."
    ),
)
def _fcp(f: Features, k: None, *, score_ties: ScoreTies = "half") -> FramePlan:
    pairs, n1, n2, n3, d = (pl.col(c) for c in ("pairs", "n1", "n2", "n3", "d"))
    different = pairs - n2  # pairs with different relevance
    concordant = pairs - n1 - n2 + n3 - d
    weight = 0.5 if score_ties == "half" else 0.0
    value = (concordant + weight * (n1 - n3)) / different
    return _finish(_pair_counts(f), f.keys, defined_if(different > 0, value).alias("value"))
