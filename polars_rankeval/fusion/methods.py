"""The fusion methods that need no training data, each a kernel over the stacked runs.

Every kernel receives ``rows`` (:data:`~polars_rankeval.fusion.registry.ROW_COLUMNS`,
one row per run, user and retrieved item, after normalisation) and ``runs`` (``_r,
_w``: every run with its weight) and returns ``_u, _i, score``: one row per user and
item any run retrieved. Formulas follow ranx (``ranx.fusion``, v0.3.21) except where
it has no defined answer (ties, set orders); the docstring of
:mod:`polars_rankeval.fusion` lists those places.
"""

from __future__ import annotations

from typing import Annotated

import polars as pl

from polars_rankeval.fusion.registry import register_fusion
from polars_rankeval.metrics.params import Interval

KEY = ["_u", "_i"]
FOX = "Fox & Shaw, Combination of Multiple Searches, TREC-2 (1993)"
WU = "Wu & Crestani, Data fusion with estimated weights, CIKM (2002)"
MOURAO = "Mourão et al., Multimodal medical IR with unsupervised rank fusion, CMIG (2015)"
WEIGHTS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
"""ranx's weight grid (step 0.1); optimize_fusion keeps the combinations summing to 1."""


def combine(rows: pl.LazyFrame, value: pl.Expr) -> pl.LazyFrame:
    """One row per (user, item): ``value``, an aggregation over the item's rows."""
    return rows.group_by(KEY).agg(value.cast(pl.Float64).alias("score"))


def with_candidates(rows: pl.LazyFrame) -> pl.LazyFrame:
    """``rows`` with ``_nc``: the number of distinct items any run retrieved for the user."""
    if "_nc" in rows.collect_schema():
        return rows
    return rows.with_columns(_nc=pl.col("_i").n_unique().over("_u").cast(pl.Int64))


S, W, P = pl.col("_s"), pl.col("_w"), pl.col("_p")
IN = pl.col("_in")  # 1.0: the row is in its run's list; 0.0: a score fuse(missing=) gave
COUNT = IN.sum()  # the runs retrieving the item


# ------------------------------------------------------------------ score combinations
@register_fusion(
    "comb_sum", summary="sum of the scores", reference=FOX, ranx="sum", score_based=True
)
def comb_sum(rows: pl.LazyFrame, runs: pl.LazyFrame) -> pl.LazyFrame:
    """Sum of the item's scores over the runs retrieving it."""
    return combine(rows, S.sum())


@register_fusion(
    "comb_min",
    summary="lowest score among the runs retrieving the item",
    reference=FOX,
    ranx="min",
    score_based=True,
)
def comb_min(rows: pl.LazyFrame, runs: pl.LazyFrame) -> pl.LazyFrame:
    """Lowest of the item's scores (ranx: min with 1e9 for a missing score)."""
    return combine(rows, S.min())


@register_fusion(
    "comb_max",
    summary="highest score among the runs retrieving the item",
    reference=FOX,
    ranx="max",
    score_based=True,
)
def comb_max(rows: pl.LazyFrame, runs: pl.LazyFrame) -> pl.LazyFrame:
    """Highest of the item's scores (ranx: max with -1e9 for a missing score)."""
    return combine(rows, S.max())


@register_fusion(
    "comb_med",
    summary="median score among the runs retrieving the item",
    reference=FOX,
    ranx="med",
    score_based=True,
)
def comb_med(rows: pl.LazyFrame, runs: pl.LazyFrame) -> pl.LazyFrame:
    """Median of the item's scores over the runs retrieving it."""
    return combine(rows, S.median())


@register_fusion(
    "comb_anz",
    summary="mean score among the runs retrieving the item",
    reference=FOX,
    ranx="anz",
    score_based=True,
)
def comb_anz(rows: pl.LazyFrame, runs: pl.LazyFrame) -> pl.LazyFrame:
    """Mean of the item's scores over the runs retrieving it (CombSUM / count)."""
    return combine(rows, S.sum() / COUNT)


@register_fusion(
    "comb_mnz",
    summary="sum of the scores times the number of runs retrieving it",
    reference=FOX,
    ranx="mnz",
    score_based=True,
)
def comb_mnz(rows: pl.LazyFrame, runs: pl.LazyFrame) -> pl.LazyFrame:
    """CombSUM times the number of runs retrieving the item."""
    return combine(rows, S.sum() * COUNT)


@register_fusion(
    "comb_gmnz",
    summary="sum of the scores times (number of runs retrieving it) ** gamma",
    reference="Lee, Analyses of Multiple Evidence Combination, SIGIR (1997)",
    ranx="gmnz",
    score_based=True,
    grid={"gamma": tuple(round(0.01 * i, 2) for i in range(1, 101))},
)
def comb_gmnz(
    rows: pl.LazyFrame,
    runs: pl.LazyFrame,
    *,
    gamma: Annotated[float, "exponent of the count"] = 1.0,
) -> pl.LazyFrame:
    """CombSUM times (number of runs retrieving the item) ** gamma."""
    return combine(rows, S.sum() * COUNT.pow(gamma))


@register_fusion(
    "wsum",
    summary="weighted sum of the scores (a missing score counts 0)",
    reference="the linear combination of scores",
    ranx="wsum",
    weighted=True,
    score_based=True,
)
def wsum(rows: pl.LazyFrame, runs: pl.LazyFrame) -> pl.LazyFrame:
    """Sum of weight * score over the runs (a run lacking the item adds 0)."""
    return combine(rows, (W * S).sum())


@register_fusion(
    "wmnz",
    summary="sum of the scores times the sum of the weights of the runs retrieving the item",
    reference=WU,
    ranx="wmnz",
    weighted=True,
    score_based=True,
)
def wmnz(rows: pl.LazyFrame, runs: pl.LazyFrame) -> pl.LazyFrame:
    """Sum of the scores times the sum of the weights of the runs retrieving the item."""
    return combine(rows, S.sum() * (W * IN).sum())


@register_fusion(
    "mixed",
    summary="weighted sum of the scores times the square root of the "
    "number of runs retrieving the item",
    reference=WU,
    ranx="mixed",
    weighted=True,
    score_based=True,
)
def mixed(rows: pl.LazyFrame, runs: pl.LazyFrame) -> pl.LazyFrame:
    """Sum of weight * score times sqrt(number of runs retrieving the item)."""
    return combine(rows, (W * S).sum() * COUNT.sqrt())


@register_fusion(
    "dbsf",
    summary="Qdrant's distribution-based score fusion: weighted sum of the scores "
    "normalised with mean +- 3 sample standard deviations (norm='dbsf')",
    reference="Qdrant, Hybrid Queries: distribution-based score fusion (v1.11, 2024)",
    weighted=True,
    score_based=True,
    default_norm="dbsf",
)
def dbsf(rows: pl.LazyFrame, runs: pl.LazyFrame) -> pl.LazyFrame:
    """Sum of weight * score, the scores normalised by ``norm='dbsf'`` (Qdrant)."""
    return combine(rows, (W * S).sum())


# ------------------------------------------------------------------ positions
RANK = P + 1  # 1-based position


@register_fusion(
    "isr",
    summary="sum of 1 / rank ** 2 times the number of runs retrieving it",
    reference=MOURAO,
    ranx="isr",
)
def isr(rows: pl.LazyFrame, runs: pl.LazyFrame) -> pl.LazyFrame:
    """Sum of 1 / rank ** 2 times the number of runs retrieving the item."""
    return combine(rows, (1.0 / RANK.cast(pl.Float64).pow(2)).sum() * COUNT)


@register_fusion(
    "log_isr",
    summary="sum of 1 / rank ** 2 times log(number of runs retrieving it)",
    reference=MOURAO,
    ranx="log_isr",
)
def log_isr(rows: pl.LazyFrame, runs: pl.LazyFrame) -> pl.LazyFrame:
    """Sum of 1 / rank ** 2 times log(number of runs retrieving the item)."""
    return combine(rows, (1.0 / RANK.cast(pl.Float64).pow(2)).sum() * COUNT.log())


@register_fusion(
    "logn_isr",
    summary="sum of 1 / rank ** 2 times log(number of runs retrieving it + sigma)",
    reference=MOURAO,
    ranx="logn_isr",
    grid={"sigma": tuple(round(0.01 * i, 2) for i in range(1, 101))},
)
def logn_isr(
    rows: pl.LazyFrame,
    runs: pl.LazyFrame,
    *,
    sigma: Annotated[float, Interval(0, 1), "added to the count inside the log"] = 0.01,
) -> pl.LazyFrame:
    """Sum of 1 / rank ** 2 times log(number of runs retrieving the item + sigma)."""
    return combine(rows, (1.0 / RANK.cast(pl.Float64).pow(2)).sum() * (COUNT + sigma).log())


RRF_REF = "Cormack et al., Reciprocal rank fusion outperforms Condorcet, SIGIR (2009)"
K_GRID = {"k": tuple(range(10, 101, 10))}


@register_fusion("rrf", summary="sum of 1 / (k + rank)", reference=RRF_REF, ranx="rrf", grid=K_GRID)
def rrf(
    rows: pl.LazyFrame,
    runs: pl.LazyFrame,
    *,
    k: Annotated[int, Interval(1, None), "added to every rank"] = 60,
) -> pl.LazyFrame:
    """Sum of 1 / (k + rank) over the runs retrieving the item."""
    return combine(rows, (1.0 / (k + RANK).cast(pl.Float64)).sum())


@register_fusion(
    "w_rrf",
    summary="weighted sum of 1 / (k + rank), as hybrid search engines weight their lists",
    reference=RRF_REF,
    weighted=True,
    grid=K_GRID,
)
def w_rrf(
    rows: pl.LazyFrame,
    runs: pl.LazyFrame,
    *,
    k: Annotated[int, Interval(1, None), "added to every rank"] = 60,
) -> pl.LazyFrame:
    """Sum of weight / (k + rank) over the runs retrieving the item."""
    return combine(rows, (W / (k + RANK).cast(pl.Float64)).sum())


@register_fusion(
    "rbc",
    summary="rank-biased centroid: sum of (1 - phi) * phi ** (rank - 1)",
    reference="Bailey et al., Retrieval Consistency in the Presence of Query Variations, "
    "SIGIR (2017)",
    ranx="rbc",
    grid={"phi": tuple(round(0.01 * i, 2) for i in range(1, 100))},
)
def rbc(
    rows: pl.LazyFrame,
    runs: pl.LazyFrame,
    *,
    phi: Annotated[float, Interval(0, 1, closed="neither"), "persistence"] = 0.8,
) -> pl.LazyFrame:
    """Sum of (1 - phi) * phi ** (rank - 1) over the runs retrieving the item."""
    return combine(rows, ((1.0 - phi) * pl.lit(phi).pow(P)).sum())


# ------------------------------------------------------------------ votes
BORDA_REF = "Aslam & Montague, Models for Metasearch, SIGIR (2001)"
CONDORCET_REF = "Montague & Aslam, Condorcet Fusion for Improved Retrieval, CIKM (2002)"


def _borda(rows: pl.LazyFrame, runs: pl.LazyFrame, weighted: bool) -> pl.LazyFrame:
    # In a run, the item at rank r scores nc - r + 1; an item the run lacks scores
    # (nc - n + 1) / 2 (the mean of the points left). The sum over the runs lacking an
    # item is the sum over all runs minus the runs having it, so no row is added:
    # sum_r w_r (nc - n_r + 1) / 2 = W (nc + 1) / 2 - (sum of w over the user's rows) / 2.
    rows = with_candidates(rows)
    w = W if weighted else pl.lit(1.0)
    total_w = runs.select(pl.col("_w").sum() if weighted else pl.len().cast(pl.Float64))
    nc = pl.col("_nc").cast(pl.Float64)
    absent = (nc - pl.col("_n") + 1) / 2.0
    per_user = rows.group_by("_u").agg(_sw=W.sum() if weighted else pl.len().cast(pl.Float64))
    out = (
        rows.group_by(KEY)
        .agg(_v=(w * (nc - P - absent)).sum(), _nc=pl.col("_nc").first())
        .join(per_user, on="_u")
        .join(total_w.select(pl.first().alias("_tw")), how="cross")
    )
    return out.select(
        *KEY,
        score=pl.col("_v") + pl.col("_tw") * (pl.col("_nc") + 1) / 2.0 - pl.col("_sw") / 2.0,
    )


@register_fusion(
    "bordafuse",
    summary="Borda count: nc - rank + 1 points per run, an item "
    "a run lacks gets the mean of the points left",
    reference=BORDA_REF,
    ranx="bordafuse",
)
def bordafuse(rows: pl.LazyFrame, runs: pl.LazyFrame) -> pl.LazyFrame:
    """Sum of Borda points: nc - rank + 1 in a run, (nc - n + 1) / 2 if it lacks it."""
    return _borda(rows, runs, weighted=False)


@register_fusion(
    "w_bordafuse",
    summary="weighted Borda count",
    reference=BORDA_REF,
    ranx="w_bordafuse",
    weighted=True,
)
def w_bordafuse(rows: pl.LazyFrame, runs: pl.LazyFrame) -> pl.LazyFrame:
    """Weighted sum of Borda points (see ``bordafuse``)."""
    return _borda(rows, runs, weighted=True)


def _condorcet(rows: pl.LazyFrame, runs: pl.LazyFrame, weighted: bool) -> pl.LazyFrame:
    # Copeland's rule over the majority graph: x beats y when the (weighted) runs
    # ranking x strictly above y outvote those ranking y strictly above x (an item a run
    # lacks is below all it retrieved; two items it lacks are tied in it). Score:
    # 1 + wins + draws / 2, so that when the majority relation is a strict order the
    # top item scores nc and the last 1, ranx's Condorcet scores.
    candidates = rows.select(KEY).unique()
    w = pl.col("_w") if weighted else pl.lit(1.0)
    positions = (
        candidates.join(runs, how="cross")
        .join(rows.select("_u", "_i", "_r", "_p"), on=["_u", "_i", "_r"], how="left")
        .with_columns(_p=pl.col("_p").cast(pl.Float64).fill_null(float("inf")), _v=w)
    )
    pairs = (
        positions.join(positions.select("_u", "_r", _j="_i", _q="_p"), on=["_u", "_r"])
        .filter(pl.col("_i") != pl.col("_j"))
        .group_by("_u", "_i", "_j")
        .agg(
            _for=pl.col("_v").filter(pl.col("_p") < pl.col("_q")).sum(),
            _against=pl.col("_v").filter(pl.col("_p") > pl.col("_q")).sum(),
        )
    )
    points = (
        pl.when(pl.col("_for") > pl.col("_against"))
        .then(1.0)
        .when(pl.col("_for") == pl.col("_against"))
        .then(0.5)
        .otherwise(0.0)
    )
    won = pairs.group_by(KEY).agg(_won=points.sum())
    return candidates.join(won, on=KEY, how="left").select(
        *KEY, score=1.0 + pl.col("_won").fill_null(0.0)
    )


@register_fusion(
    "condorcet",
    summary="Condorcet fusion (Copeland's rule over pairwise majorities)",
    reference=CONDORCET_REF,
    ranx="condorcet",
)
def condorcet(rows: pl.LazyFrame, runs: pl.LazyFrame) -> pl.LazyFrame:
    """1 + pairwise majority wins + draws / 2 (Copeland's rule)."""
    return _condorcet(rows, runs, weighted=False)


@register_fusion(
    "w_condorcet",
    summary="weighted Condorcet fusion",
    reference=CONDORCET_REF,
    ranx="w_condorcet",
    weighted=True,
)
def w_condorcet(rows: pl.LazyFrame, runs: pl.LazyFrame) -> pl.LazyFrame:
    """Copeland's rule with each run's vote weighted."""
    return _condorcet(rows, runs, weighted=True)
