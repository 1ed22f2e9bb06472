"""The fusion methods that learn from training queries (relevance judgments).

Each kernel receives ``rows`` and ``runs`` as the other methods do, and ``hits``
(:data:`~polars_rankeval.fusion.registry.HIT_COLUMNS`): for every run and training
user, each retrieved position and whether its item is relevant (relevance >= 1, ranx's
level). What a method learns (a probability per position, per segment, a run's MAP)
is a small lazy frame joined back to ``rows``: training and fusion are one plan.
Averages over training queries divide by the number of users in the training
judgments (``_nq``), as ranx does when the judgments and the runs share their queries.
"""

from __future__ import annotations

import itertools
import math
from typing import Annotated

import polars as pl

from polars_rankeval.fusion.methods import KEY, P, S, combine
from polars_rankeval.fusion.registry import register_fusion
from polars_rankeval.metrics.params import Interval

HIT, NQ = pl.col("_hit"), pl.col("_nq")
LENSCHOT = "Lillis et al., ProbFuse: a probabilistic approach to data fusion, SIGIR (2006)"


def _position_probs(hits: pl.LazyFrame) -> pl.LazyFrame:
    """``_r, _p, _prob``: the share of the training lists reaching ``_p`` relevant there."""
    return hits.group_by("_r", "_p").agg(_prob=HIT.mean())


def _sum_learned(
    rows: pl.LazyFrame, learned: pl.LazyFrame, on: list[str], value: pl.Expr
) -> pl.LazyFrame:
    joined = rows.join(learned, on=on, how="left")
    return combine(joined, value.fill_null(0.0).sum())


@register_fusion(
    "posfuse",
    summary="sum of the probability, learned per run and position, that the item there is relevant",
    reference="Lillis et al., Estimating probabilities for effective data fusion, SIGIR (2010)",
    ranx="posfuse",
    trained=True,
)
def posfuse(rows: pl.LazyFrame, runs: pl.LazyFrame, hits: pl.LazyFrame) -> pl.LazyFrame:
    """Sum of the learned P(relevant | run, position)."""
    return _sum_learned(rows, _position_probs(hits), ["_r", "_p"], pl.col("_prob"))


@register_fusion(
    "probfuse",
    summary="each list cut in n_segments segments; sum of the learned probability of "
    "relevance of the item's segment k, divided by k",
    reference=LENSCHOT,
    ranx="probfuse",
    trained=True,
    grid={"n_segments": tuple(range(1, 101))},
)
def probfuse(
    rows: pl.LazyFrame,
    runs: pl.LazyFrame,
    hits: pl.LazyFrame,
    *,
    n_segments: Annotated[int, Interval(1, None), "segments per list"] = 10,
) -> pl.LazyFrame:
    """Sum of P(relevant | run, segment k) / k over n_segments segments per list."""

    def segment(frame: pl.LazyFrame) -> pl.LazyFrame:
        size = (pl.col("_n") + n_segments - 1) // n_segments  # ceil(n / n_segments)
        return frame.with_columns(_k=P // size)

    learned = (
        segment(hits)
        .group_by("_r", "_u", "_k")
        .agg(_share=HIT.mean(), _nq=NQ.first())
        .group_by("_r", "_k")
        .agg(_prob=pl.col("_share").sum() / pl.col("_nq").first())
    )
    value = pl.col("_prob") / (pl.col("_k") + 1)
    return _sum_learned(segment(rows), learned, ["_r", "_k"], value)


SEGFUSE_BOUNDS = (0, *(10 * 2 ** (k - 1) - 5 for k in range(1, 11)))
"""Segment k covers positions [b_k, b_k+1): 5, 10, 20, 40, ... positions (5115 in all)."""


def _bucket(bounds: tuple[int, ...]) -> pl.Expr:
    """The index of the segment holding position ``_p`` (``len(bounds) - 1``: beyond)."""
    return pl.sum_horizontal([P.ge(b).cast(pl.Int32) for b in bounds[1:]])


def _width(bounds: tuple[int, ...]) -> pl.Expr:
    widths = [b - a for a, b in itertools.pairwise(bounds)]
    return pl.col("_k").replace_strict(list(range(len(widths))), widths, default=None)


@register_fusion(
    "segfuse",
    summary="sum of (score + 1) times the learned probability of relevance of the item's "
    "segment (segments of 5, 10, 20, ... positions)",
    reference="Shokouhi, Segmentation of search engine results for effective data-fusion, "
    "ECIR (2007)",
    ranx="segfuse",
    trained=True,
)
def segfuse(rows: pl.LazyFrame, runs: pl.LazyFrame, hits: pl.LazyFrame) -> pl.LazyFrame:
    """Sum of (score + 1) * P(relevant | run, segment), segments of 5, 10, 20, ..."""
    beyond = len(SEGFUSE_BOUNDS) - 1
    learned = (
        hits.with_columns(_k=_bucket(SEGFUSE_BOUNDS))
        .filter(pl.col("_k") < beyond)
        .group_by("_r", "_k")
        .agg(_prob=HIT.sum() / _width(SEGFUSE_BOUNDS).first() / NQ.first())
    )
    keyed = rows.with_columns(_k=_bucket(SEGFUSE_BOUNDS))
    return _sum_learned(keyed, learned, ["_r", "_k"], pl.col("_prob") * (S + 1.0))


@register_fusion(
    "slidefuse",
    summary="sum of the mean learned probability of relevance over the positions within w "
    "of the item's (a window cut at the list's ends)",
    reference="Lillis et al., Extending probabilistic data fusion using sliding windows, "
    "ECIR (2008)",
    ranx="slidefuse",
    trained=True,
    grid={"w": tuple(range(1, 101))},
)
def slidefuse(
    rows: pl.LazyFrame,
    runs: pl.LazyFrame,
    hits: pl.LazyFrame,
    *,
    w: Annotated[int, Interval(0, None), "half width of the window"] = 5,
) -> pl.LazyFrame:
    """Sum of the mean learned P(relevant | run, position) over a window of +-w."""
    probs = _position_probs(hits)
    # prefix sums: _j positions summed (0 .. longest training list), a position beyond the
    # longest list adding 0.
    cumulative = pl.concat(
        [
            runs.select("_r", _j=pl.lit(0, pl.Int64), _c=pl.lit(0.0)),
            probs.sort("_r", "_p").select(
                "_r",
                _j=(pl.col("_p") + 1).cast(pl.Int64),
                _c=pl.col("_prob").cum_sum().over("_r"),
            ),
        ]
    )
    longest = cumulative.group_by("_r").agg(_len=pl.col("_j").max())
    a = pl.max_horizontal(P - w, pl.lit(0))
    b = pl.min_horizontal(P + w, pl.col("_n") - 1)
    keyed = rows.join(longest, on="_r", how="left").with_columns(
        _a=pl.min_horizontal(a, pl.col("_len")).cast(pl.Int64),
        _b=pl.min_horizontal(b + 1, pl.col("_len")).cast(pl.Int64),
        _width=(b - a + 1).cast(pl.Float64),
    )
    low = cumulative.select("_r", _a="_j", _ca="_c")
    high = cumulative.select("_r", _b="_j", _cb="_c")
    joined = keyed.join(low, on=["_r", "_a"], how="left").join(high, on=["_r", "_b"], how="left")
    value = (pl.col("_cb").fill_null(0.0) - pl.col("_ca").fill_null(0.0)) / pl.col("_width")
    return combine(joined, value.sum())


@register_fusion(
    "mapfuse",
    summary="sum of the run's MAP on the training queries divided by the rank",
    reference="Lillis et al., Estimating probabilities for effective data fusion, SIGIR (2010)",
    ranx="mapfuse",
    trained=True,
)
def mapfuse(rows: pl.LazyFrame, runs: pl.LazyFrame, hits: pl.LazyFrame) -> pl.LazyFrame:
    """Sum of the run's training MAP / rank."""
    precision = HIT.cum_sum().over("_r", "_u", order_by="_p") / (P + 1)
    learned = (
        hits.with_columns(_prec=precision)
        .group_by("_r", "_u")
        .agg(
            _ap=pl.when(pl.col("_nrel").first() > 0)
            .then((pl.col("_prec") * HIT).sum() / pl.col("_nrel").first())
            .otherwise(0.0),
            _nq=NQ.first(),
        )
        .group_by("_r")
        .agg(_map=pl.col("_ap").sum() / pl.col("_nq").first())
    )
    return _sum_learned(rows, learned, ["_r"], pl.col("_map") / (P + 1))


BAYES_CUTS = (0, 5, 10, 15, 20, 30, 100, 200, 500, 1000)
MIN_ODDS = math.log(0.001 / 0.999)
"""The log odds of an item a run lacks (or ranks below position 1000)."""


@register_fusion(
    "bayesfuse",
    summary="sum of the learned log odds of relevance of the item's rank bucket "
    "(1-5, 6-10, ..., 501-1000)",
    reference="Aslam & Montague, Models for Metasearch, SIGIR (2001)",
    ranx="bayesfuse",
    trained=True,
)
def bayesfuse(rows: pl.LazyFrame, runs: pl.LazyFrame, hits: pl.LazyFrame) -> pl.LazyFrame:
    """Sum of the learned log odds of relevance of the item's rank bucket."""
    beyond = len(BAYES_CUTS) - 1
    precision = HIT.sum() / _width(BAYES_CUTS).first() / NQ.first()
    floor = pl.when(pl.col("_pr") == 0.0).then(0.001).otherwise(pl.col("_pr"))
    against = pl.when(floor == 1.0).then(0.001).otherwise(1.0 - floor)
    learned = (
        hits.with_columns(_k=_bucket(BAYES_CUTS))
        .filter(pl.col("_k") < beyond)
        .group_by("_r", "_k")
        .agg(_pr=precision)
        .select("_r", "_k", _odds=(floor / against).log())
    )
    n_runs = runs.select(_nr=pl.len().cast(pl.Float64))
    keyed = rows.with_columns(_k=_bucket(BAYES_CUTS)).join(learned, on=["_r", "_k"], how="left")
    present = keyed.group_by(KEY).agg(
        _sum=pl.col("_odds").fill_null(MIN_ODDS).sum(), _count=pl.len().cast(pl.Float64)
    )
    return present.join(n_runs, how="cross").select(
        *KEY, score=pl.col("_sum") + (pl.col("_nr") - pl.col("_count")) * MIN_ODDS
    )
