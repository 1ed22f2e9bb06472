"""Curve kernels: every cutoff of a metric in one pass (``ndcg@1..100``).

Each of these metrics at cutoff k is a sum over the positions p <= k of a per-position
contribution (divided by a per-user quantity that may depend on k). So, per user, the
contributions are ordered by position and summed cumulatively once, as a list; the
metric at k reads that list at position min(k, #rows). Positions are those of
:class:`~polars_rankeval.metrics.features.Features` (all of the user's rows; the
not-recommended ones contribute nothing).

Under ``ties="expected"`` a tie group occupying positions a .. a+n-1 (r relevant) is a
uniformly random ordering, so the expected contribution of position p depends only on
the group and on p, and summing it over p <= k gives the exact expectation of the
metric at k, for every k at once:

* hits: a position holds a relevant item with probability r / n;
* DCG: the expected gain at a position is the group's mean gain, times the discount;
* AP: E[rel(p) * hits(p)] / p with hits(p) = above + #relevant in a..p gives
  (r / n) * (above + 1 + (p - a) (r - 1) / (n - 1)) / p (above: relevant items before
  the group);
* reciprocal rank: the first relevant item sits at offset j of the first group holding
  a relevant item with probability C(n-1-j, r-1) / C(n, r);
* hit rate: 1 - prod over positions p <= k of P(no relevant item at p | none before),
  accumulated as a sum of logarithms.

Under a deterministic tie policy every group is one row (n = 1), and the same formulas
reduce to the row's own contribution. The values equal the single-cutoff kernels of
:mod:`~polars_rankeval.metrics.binary` and :mod:`~polars_rankeval.metrics.graded` up to
floating-point rounding (the sums run in another order); the tests check every cutoff.
"""

from __future__ import annotations

from typing import cast

import polars as pl

from polars_rankeval.metrics._common import (
    Discount,
    Gain,
    IdealCut,
    Rel,
    discount_at,
    gain_of,
    ideal_discount_sum,
)
from polars_rankeval.metrics.binary import APDenominator, PrecisionDenominator, _map
from polars_rankeval.metrics.features import Features
from polars_rankeval.metrics.registry import register_curve, registered
from polars_rankeval.metrics.spec import CurvePlan

_PREFIX = "__prk_curve"


def _cumulative(f: Features, contribution: pl.Expr) -> pl.Expr:
    """Per user: the cumulative sum of the contributions in position order (a list)."""
    return contribution.sort_by(f.o).cum_sum()


def at(name: str, k: int, empty: float = 0.0) -> pl.Expr:
    """The cumulative list ``name`` at position k (its last value beyond its end)."""
    values = pl.col(name)
    size = values.list.len()
    index = pl.min_horizontal(pl.lit(k, dtype=pl.UInt32), size) - 1
    return pl.when(size > 0).then(values.list.get(index, null_on_oob=True)).otherwise(empty)


def _scalar(name: str) -> pl.Expr:
    return pl.col(name)


def _counts(f: Features, rel: float) -> dict[str, pl.Expr]:
    """Per-user #relevant and #recommended."""
    return {
        f"{_PREFIX}[n_rel:{rel}]": f.is_rel(rel).sum(),
        f"{_PREFIX}[n_ret]": f.ret.cast(pl.Float64).sum(),
    }


def _hits(f: Features, rel: float) -> tuple[str, pl.Expr]:
    """Cumulative expected hits: a position holds a relevant item w.p. r / n."""
    share = f.gsum(f.is_rel(rel), f"rel>={rel}") / f.n
    return f"{_PREFIX}[hits:{rel}]", _cumulative(f, pl.when(f.ret).then(share).otherwise(0.0))


def _list_size(k: int, denominator: PrecisionDenominator) -> pl.Expr:
    if denominator == "k":
        return pl.lit(float(k))
    return pl.min_horizontal(_scalar(f"{_PREFIX}[n_ret]"), pl.lit(float(k)))


def _defined(rel: float, value: pl.Expr) -> pl.Expr:
    return pl.when(_scalar(f"{_PREFIX}[n_rel:{rel}]") > 0).then(value).otherwise(None)


@register_curve("precision")
def _precision_curve(
    f: Features, ks: tuple[int, ...], *, rel: Rel = 1.0, denominator: PrecisionDenominator = "k"
) -> CurvePlan:
    hits, cum = _hits(f, rel)

    def value(k: int) -> pl.Expr:
        size = _list_size(k, denominator)
        return _defined(rel, pl.when(size > 0).then(at(hits, k) / size).otherwise(0.0))

    return CurvePlan({hits: cum, **_counts(f, rel)}, value)


@register_curve("recall")
def _recall_curve(f: Features, ks: tuple[int, ...], *, rel: Rel = 1.0) -> CurvePlan:
    hits, cum = _hits(f, rel)
    n_rel = _scalar(f"{_PREFIX}[n_rel:{rel}]")
    return CurvePlan({hits: cum, **_counts(f, rel)}, lambda k: _defined(rel, at(hits, k) / n_rel))


@register_curve("f1")
def _f1_curve(
    f: Features, ks: tuple[int, ...], *, rel: Rel = 1.0, denominator: PrecisionDenominator = "k"
) -> CurvePlan:
    hits, cum = _hits(f, rel)
    n_rel = _scalar(f"{_PREFIX}[n_rel:{rel}]")

    def value(k: int) -> pl.Expr:
        return _defined(rel, 2.0 * at(hits, k) / (_list_size(k, denominator) + n_rel))

    return CurvePlan({hits: cum, **_counts(f, rel)}, value)


@register_curve("hit_rate")
def _hit_rate_curve(f: Features, ks: tuple[int, ...], *, rel: Rel = 1.0) -> CurvePlan:
    n, j = f.n, f.j
    r = f.gsum(f.is_rel(rel), f"rel>={rel}")
    # log P(no relevant item at offset j | none before it); -inf once one must be there.
    miss = ((n - r - j) / (n - j)).clip(0.0, 1.0)
    name = f"{_PREFIX}[log_miss:{rel}]"
    cum = _cumulative(f, pl.when(f.ret).then(miss).otherwise(1.0).log())
    return CurvePlan(
        {name: cum, **_counts(f, rel)},
        lambda k: _defined(rel, 1.0 - at(name, k).exp()),
    )


@register_curve("mrr")
def _mrr_curve(f: Features, ks: tuple[int, ...], *, rel: Rel = 1.0) -> CurvePlan:
    is_rel = f.is_rel(rel)
    position = f.o.cast(pl.Float64)
    if f.expected:
        a = f.a
        r = f.gsum(is_rel, f"rel>={rel}")
        first_a = f.user_min(pl.when(f.ret & (is_rel > 0)).then(a), f"first_rel_pos:{rel}")
        p_first = f.first_of(r, f"mrr_first_at_j:{rel}")
        contribution = pl.when(f.ret & (a == first_a)).then(p_first / position).otherwise(0.0)
    else:
        first = f.ret & (is_rel > 0) & (f.rel_above(rel) == 0)
        contribution = pl.when(first).then(1.0 / position).otherwise(0.0)
    name = f"{_PREFIX}[rr:{rel}]"
    return CurvePlan(
        {name: _cumulative(f, contribution), **_counts(f, rel)},
        lambda k: _defined(rel, at(name, k)),
    )


@register_curve("arhr")
def _arhr_curve(f: Features, ks: tuple[int, ...], *, rel: Rel = 1.0) -> CurvePlan:
    """Cumulative expected reciprocal hits: position p holds a relevant item w.p. r / n."""
    share = f.gsum(f.is_rel(rel), f"rel>={rel}") / f.n
    name = f"{_PREFIX}[rhits:{rel}]"
    contribution = pl.when(f.ret).then(share / f.o.cast(pl.Float64)).otherwise(0.0)
    return CurvePlan(
        {name: _cumulative(f, contribution), **_counts(f, rel)},
        lambda k: _defined(rel, at(name, k)),
    )


@register_curve("map")
def _map_curve(
    f: Features,
    ks: tuple[int, ...],
    *,
    rel: Rel = 1.0,
    denominator: APDenominator = "relevant",
    tie_group: str = "ordered",
) -> CurvePlan:
    # tie_group="threshold" takes no cutoff: the metric's kernel refuses it first.
    is_rel = f.is_rel(rel)
    n, j = f.n, f.j
    r = f.gsum(is_rel, f"rel>={rel}")
    c = pl.when(n > 1).then((r - 1) / (n - 1)).otherwise(0.0)
    # Relevant items above the group: the group's relevant rows all know it.
    above = f.gmax(f.rel_above(rel), f"relabove:{rel}")
    expected = r / n * (above + 1 + j * c) / f.o.cast(pl.Float64)
    contribution = pl.when(f.ret & (r > 0)).then(expected).otherwise(0.0)
    name = f"{_PREFIX}[ap:{rel}]"
    n_rel = _scalar(f"{_PREFIX}[n_rel:{rel}]")
    aggs = {name: _cumulative(f, contribution), **_counts(f, rel)}
    if denominator == "hits" and f.expected:
        # A tie group straddling k makes the hits random: E[sum / hits] is not a
        # ratio of cumulative sums, so each cutoff takes the single-cutoff kernel.
        singles = {
            f"{_PREFIX}[ap_hits:{rel}@{k}]": cast(pl.Expr, _map(f, k, rel=rel, denominator="hits"))
            for k in ks
        }
        return CurvePlan(
            {**singles, **_counts(f, rel)}, lambda k: pl.col(f"{_PREFIX}[ap_hits:{rel}@{k}]")
        )
    hits_name, hits_cum = _hits(f, rel)

    def value(k: int) -> pl.Expr:
        if denominator == "relevant":
            den = n_rel
        elif denominator == "k":
            den = pl.lit(float(k))
        elif denominator == "hits":
            den = at(hits_name, k)
        elif denominator == "min_list_relevant":
            size = pl.min_horizontal(_scalar(f"{_PREFIX}[n_ret]"), pl.lit(float(k)))
            den = pl.min_horizontal(n_rel, size)
        else:
            den = pl.min_horizontal(n_rel, pl.lit(float(k)))
        return _defined(rel, pl.when(den > 0).then(at(name, k) / den).otherwise(0.0))

    if denominator == "hits":
        aggs[hits_name] = hits_cum
    return CurvePlan(aggs, value)


def _dcg_list(
    f: Features, gain: Gain, discount: Discount, base: float, half_life: float | None
) -> tuple[str, pl.Expr]:
    mean_gain = f.gsum(gain_of(f, gain), f"gain:{gain}") / f.n
    disc = discount_at(f.o, discount, base, half_life)
    contribution = pl.when(f.ret).then(mean_gain * disc).otherwise(0.0)
    name = f"{_PREFIX}[dcg:{gain}:{discount}:{base}:{half_life}]"
    return name, _cumulative(f, contribution)


@register_curve("dcg")
def _dcg_curve(
    f: Features,
    ks: tuple[int, ...],
    *,
    gain: Gain = "linear",
    discount: Discount = "log",
    base: float = 2.0,
    half_life: float | None = None,
) -> CurvePlan:
    name, cum = _dcg_list(f, gain, discount, base, half_life)
    return CurvePlan({name: cum}, lambda k: at(name, k))


@register_curve("ndcg")
def _ndcg_curve(
    f: Features,
    ks: tuple[int, ...],
    *,
    gain: Gain = "linear",
    discount: Discount = "log",
    base: float = 2.0,
    half_life: float | None = None,
    idcg: IdealCut = "cut",
) -> CurvePlan:
    name, cum = _dcg_list(f, gain, discount, base, half_life)
    g = gain_of(f, gain)
    if idcg == "k":
        top = f"{_PREFIX}[maxgain:{gain}]"

        def value_k(k: int) -> pl.Expr:
            ideal = pl.col(top) * ideal_discount_sum(k, discount, base, half_life)
            return pl.when(ideal > 0).then(at(name, k) / ideal).otherwise(None)

        return CurvePlan({name: cum, top: g.max()}, value_k)
    irank = f.ideal_rank(g, f"gain:{gain}")
    positive = irank.is_not_null()
    # The ideal list: the positive gains in ideal order, one per ideal position.
    ideal_gain = (g * discount_at(irank, discount, base, half_life)).filter(positive)
    ideal_name = f"{_PREFIX}[idcg:{gain}:{discount}:{base}:{half_life}]"
    ideal_cum = ideal_gain.sort_by(irank.filter(positive)).cum_sum()

    def value(k: int) -> pl.Expr:
        ideal = at(ideal_name, k) if idcg == "cut" else at(ideal_name, 2**31 - 1)
        return pl.when(ideal > 0).then(at(name, k) / ideal).otherwise(None)

    return CurvePlan({name: cum, ideal_name: ideal_cum}, value)


def curve_metrics() -> tuple[str, ...]:
    """The metrics whose cutoff lists and ranges are computed in one pass (declared)."""
    return tuple(name for name, spec in registered().items() if spec.curve is not None)
