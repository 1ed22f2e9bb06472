"""Metric expressions read from a metric's sorted-head form, under deterministic ties.

A metric function (``prk.ndcg(10, ties="item_desc")``) returns one expression that
aggregates one group's rows. For a metric at a cutoff k whose declaration carries a
sorted-head form (:class:`~polars_rankeval.metrics.head_form.HeadForm`), under a
deterministic tie policy, that expression is the form's value read from the same
quantities the sorted-head path of ``evaluate`` sums (:mod:`polars_rankeval.plan.head`),
computed inside the aggregation:

- a quantity over the positions 1..k (hits, discounted gains, the terms of average
  precision, the reciprocal rank) is one row value, sorted by the tie policy's order
  and cut at k: ``x.sort_by(keys).head(k)``, which Polars runs as a partial sort per
  group (it stops at the head) rather than sorting every row; the per-position factor
  (the discount, 1 / p) is applied by a ``list.eval`` over those at most k values;
- the user's totals (relevant rows per threshold, recommended rows) are plain
  reductions of the group;
- the ideal gains are the group's positive gains, best first (a ``top_k``).

Each quantity the form reads is one sort of the group (Polars does not share common
sub-expressions inside an aggregation); the core forms read one quantity and the
totals. Every position is its own tie group (the sort breaks ties), so the first
relevant position is read as the one nonzero term of the reciprocal-rank sum, and a
hit within k makes the sum of log-misses ``-inf``: the reader presents its sums as
expectations (:attr:`HeadReader.expected`) over orderings that are all the same.

Under ``ties="expected"``, without a cutoff, or for a metric without a head form, the
metric's kernel runs on the sort-once provider
(:mod:`polars_rankeval.metrics.sorted_features`) instead.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

import polars as pl

from polars_rankeval._utils.ties import Ties
from polars_rankeval._utils.types import Columns
from polars_rankeval.metrics._common import discount_at, gain_value
from polars_rankeval.metrics.features import f64
from polars_rankeval.metrics.head_form import GainKey, Quantity
from polars_rankeval.metrics.sampled_estimators import SAMPLED_DEFAULTS

if TYPE_CHECKING:
    from polars_rankeval.metrics.spec import Metric

_ALL = 2**32 - 1
"""The cut of an ideal list over all relevant items (``idcg="all"``)."""


class _AggregationReader:
    """The head form's quantities as expressions over one group's rows.

    See :class:`~polars_rankeval.metrics.head_form.HeadReader` and the module docstring.
    """

    expected = True  # the sums are read as (degenerate) expectations: see the module

    def __init__(self, cols: Columns, keys: list[pl.Expr], descending: list[bool]) -> None:
        self.cols = cols
        self.keys = keys
        self.descending = descending
        self.ret = pl.col(cols.order).is_not_null()
        self.rel = f64(pl.col(cols.relevance)).fill_null(0.0)

    def _head(self, value: pl.Expr, k: int) -> pl.Expr:
        """``value`` of the recommended rows (0.0 for the others), in ranking order, cut at k.

        Rows that were not recommended (a null score or rank) sort after every
        recommended one, so the recommended rows hold positions 1..#recommended.
        """
        masked = pl.when(self.ret).then(value).otherwise(0.0)
        return masked.sort_by(self.keys, descending=self.descending, nulls_last=True).head(k)

    def _is_rel(self, threshold: float) -> pl.Expr:
        return (self.rel >= threshold).cast(pl.Float64)

    def sum_at(self, quantity: Quantity, k: int) -> pl.Expr:
        kind = quantity.kind
        position = f64(pl.element().cum_count())  # 1..len within each head (no nulls)
        if kind in ("discounted_gain", "ideal_gain"):
            gain, discount, base, half_life = cast(GainKey, quantity.gain)
            disc = discount_at(position, discount, base, half_life)
            if kind == "ideal_gain":
                cut = k if quantity.idcg == "cut" else _ALL
                positive = gain_value(self.rel, gain).filter(self.rel > 0)
                values = positive.top_k(cut).sort(descending=True)
            else:
                values = self._head(gain_value(self.rel, gain), k)
            return self._over_positions(values, (pl.element() * disc).sum())
        threshold = float(cast(float, quantity.threshold))
        hits = self._head(self._is_rel(threshold), k)
        if kind == "hits":
            return hits.sum()
        if kind == "log_miss":  # log P(no relevant item in the top k): 0 or -inf
            return pl.when(hits.max() > 0).then(float("-inf")).otherwise(0.0)
        if kind == "reciprocal_hits":
            term = (pl.element() / position).sum()
        elif kind == "precision_sum":
            term = (pl.element() * pl.element().cum_sum() / position).sum()
        else:  # reciprocal_rank: 1 / the first relevant position, 0 without one
            term = (pl.element() / position).max()
        return self._over_positions(hits, term)

    @staticmethod
    def _over_positions(values: pl.Expr, term: pl.Expr) -> pl.Expr:
        """``term`` (over ``pl.element()``, positions 1..len) of the group's ``values``."""
        return values.implode().list.eval(term).list.first().fill_null(0.0)

    def n_relevant(self, threshold: float) -> pl.Expr:
        return self._is_rel(threshold).sum()

    def n_retrieved(self) -> pl.Expr:
        return f64(pl.col(self.cols.order).count())

    def first_relevant(self, threshold: float) -> pl.Expr:  # pragma: no cover - expected
        msg = "the aggregation reader reads the first relevant position as a sum"
        raise NotImplementedError(msg)


def head_expression(
    metric: Metric, cols: Columns, ties: Ties, keys: tuple[list[pl.Expr], list[bool]]
) -> pl.Expr | None:
    """``metric`` from its sorted-head form over one group's rows, or ``None``.

    ``None`` when the form does not apply: no form, no cutoff, options the form does
    not cover, or ties that are not deterministic. ``keys``: the tie policy's sort
    keys and directions (:meth:`SortedFeatures.sort_keys
    <polars_rankeval.metrics.sorted_features.SortedFeatures.sort_keys>`).
    """
    form = metric.spec.head
    if form is None or metric.k is None or metric.k < 1 or not ties.deterministic:
        return None
    options = dict(metric.options)
    if not form.covers(options, SAMPLED_DEFAULTS):
        return None
    reader = _AggregationReader(cols, *keys)
    return form.value(reader, options, int(metric.k))
