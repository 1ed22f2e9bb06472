"""Metric expressions read from a metric's sorted-head form.

A metric function (``prk.ndcg(10)``) returns one expression that aggregates one
group's rows. For a metric at a cutoff k whose declaration carries a sorted-head form
(:class:`~polars_rankeval.metrics.head_form.HeadForm`), that expression is the form's
value read from the same quantities the sorted-head path of ``evaluate`` sums
(:mod:`polars_rankeval.plan.head`), each computed inside the aggregation from the few
rows that can reach the top k rather than from all of the group's rows sorted:

- under a deterministic tie policy a quantity over the positions 1..k (hits,
  discounted gains, the terms of average precision, the reciprocal rank) is one row
  value sorted by the policy's order and cut at k, ``x.sort_by(keys).head(k)``, which
  Polars runs as a partial sort per group (it stops at the head); the per-position
  factor (the discount, 1 / p) is applied by a ``list.eval`` over those k values.
  Every position is its own tie group, so the first relevant position is read as the
  one nonzero term of the reciprocal-rank sum, and a hit within k makes the sum of
  log-misses ``-inf``: the reader presents its sums as expectations
  (:attr:`HeadReader.expected`) over orderings that are all the same;
- under ``ties="expected"`` the rows that can reach the top k are those scored at
  least as well as the k-th recommended row (a ``top_k`` of the scores): every tie
  group above it and the whole group holding position k. They are sorted inside a
  ``list.eval`` and each row's tie group (first position, size, relevant count or
  gain sum, relevant rows above it) is read from them as the sorted-head path reads
  it from its head rows; the contributions are the curve kernels' expectations;
- the user's totals (relevant rows per threshold, recommended rows) are plain
  reductions of the group, and the ideal gains its positive gains, best first (a
  ``top_k``).

Each quantity the form reads is one selection of the group (Polars does not share
common sub-expressions inside an aggregation); the core forms read one quantity and
the totals; several metrics over one selection are
:func:`~polars_rankeval.metrics.metric_struct.evaluate_expr`. Without a cutoff, with
an option the form does not cover, or for a metric without a head form, the metric's
kernel runs on the sort-once provider (:mod:`polars_rankeval.metrics.sorted_features`)
instead.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

import polars as pl

from polars_rankeval._utils.ties import Ties
from polars_rankeval._utils.types import Columns
from polars_rankeval.metrics._common import discount_at, gain_value
from polars_rankeval.metrics.features import f64
from polars_rankeval.metrics.head_form import (
    GainKey,
    HeadForm,
    HeadReader,
    Quantity,
    expected_contribution,
    none_before_from_log,
    none_before_log_step,
)
from polars_rankeval.metrics.sampled_estimators import SAMPLED_DEFAULTS

if TYPE_CHECKING:
    from polars_rankeval.metrics.spec import Metric


class _AggregationReader:
    """The head form's quantities as expressions over one group's rows.

    See :class:`~polars_rankeval.metrics.head_form.HeadReader` and the module docstring.
    """

    expected = True  # every quantity is read as a sum (see the module docstring)

    def __init__(
        self, cols: Columns, ties: Ties, keys: list[pl.Expr], descending: list[bool]
    ) -> None:
        self.cols = cols
        self.deterministic = ties.deterministic
        self.keys = keys
        self.descending = descending
        self.order = pl.col(cols.order)
        self.ret = self.order.is_not_null()
        self.rel = f64(pl.col(cols.relevance)).fill_null(0.0)

    # ------------------------------------------------------------------ deterministic
    def _head(self, value: pl.Expr, k: int) -> pl.Expr:
        """``value`` of the recommended rows (0.0 for the others), in ranking order, cut at k.

        Rows that were not recommended (a null score or rank) sort after every
        recommended one, so the recommended rows hold positions 1..#recommended.
        """
        masked = pl.when(self.ret).then(value).otherwise(0.0)
        return masked.sort_by(self.keys, descending=self.descending, nulls_last=True).head(k)

    def _deterministic(self, quantity: Quantity, k: int) -> pl.Expr:
        kind = quantity.kind
        position = f64(pl.element().cum_count())  # 1..len within each head (no nulls)
        if kind == "discounted_gain":
            gain, discount, base, half_life = cast(GainKey, quantity.gain)
            term = (pl.element() * discount_at(position, discount, base, half_life)).sum()
            return _over_list(self._head(gain_value(self.rel, gain), k).implode(), term)
        hits = self._head(self._is_rel(float(cast(float, quantity.threshold))), k)
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
        return _over_list(hits.implode(), term)

    # ------------------------------------------------------------------ expected ties
    def _expected(self, quantity: Quantity, k: int) -> pl.Expr:
        """``quantity`` over positions 1..k, its expectation over the tied orderings.

        The rows that can reach the top k are those scored at least as well as the
        k-th recommended row (a ``top_k`` of the scores): every tie group above it and
        the whole group holding position k, however far it extends. Those rows are
        sorted by the score inside ``list.eval`` (a few per group) and each row's tie
        group is read from them, as the sorted-head path of ``evaluate`` reads it
        from its head rows: the group's first position, size, relevant count or gain
        sum, and the relevant rows above it; each row's contribution is the curve
        kernels' expectation.
        """
        if self.cols.rank is None:
            kth = self.order.top_k(k).min()
            reach = self.order >= kth
        else:  # ranks: lower is better
            kth = self.order.bottom_k(k).max()
            reach = self.order <= kth
        gain = cast(GainKey, quantity.gain)[0] if quantity.gain is not None else None
        value = gain_value(self.rel, gain) if gain is not None else self.rel
        threshold = float(quantity.threshold) if quantity.threshold is not None else 0.0
        fields = [
            self.order.alias(_ORDER),
            (value if gain is not None else (self.rel >= threshold).cast(pl.Int64)).alias(_X),
        ]
        rows = pl.struct(fields).filter(reach).implode()
        best_first = self.cols.rank is None
        rows = rows.list.eval(pl.element().sort_by(_field(_ORDER), descending=best_first))
        return _expected_term(rows, quantity, k)

    # ------------------------------------------------------------------ the reader
    def _is_rel(self, threshold: float) -> pl.Expr:
        return (self.rel >= threshold).cast(pl.Float64)

    def sum_at(self, quantity: Quantity, k: int) -> pl.Expr:
        if quantity.kind == "ideal_gain":  # the ideal list has no ties
            gain, discount, base, half_life = cast(GainKey, quantity.gain)
            positive = gain_value(self.rel, gain).filter(self.rel > 0)
            best = positive.top_k(k) if quantity.idcg == "cut" else positive
            position = f64(pl.element().cum_count())
            term = (pl.element() * discount_at(position, discount, base, half_life)).sum()
            return _over_list(best.sort(descending=True).implode(), term)
        if self.deterministic:
            return self._deterministic(quantity, k)
        return self._expected(quantity, k)

    def n_relevant(self, threshold: float) -> pl.Expr:
        return self._is_rel(threshold).sum()

    def ratio(self, numerator: pl.Expr, denominator: pl.Expr) -> pl.Expr:
        # The denominator named once: each reference would compute it again.
        return numerator / denominator.replace(0.0, None)

    def n_retrieved(self) -> pl.Expr:
        return f64(self.order.count())

    def first_relevant(self, threshold: float) -> pl.Expr:  # pragma: no cover - expected
        msg = "the aggregation reader reads the first relevant position as a sum"
        raise NotImplementedError(msg)


_ORDER = "__prk_head_order"
_X = "__prk_head_value"


def _field(name: str) -> pl.Expr:
    return pl.element().struct.field(name)


def _over_list(values: pl.Expr, term: pl.Expr) -> pl.Expr:
    """``term`` (over ``pl.element()``) of the imploded ``values``; 0.0 for none."""
    return values.list.eval(term).list.first().fill_null(0.0)


def _expected_term(rows: pl.Expr, quantity: Quantity, k: int) -> pl.Expr:
    """The sum over positions 1..k of a quantity's expected contributions.

    ``rows``: per group, the rows that can reach the top k sorted by the score (struct
    fields ``_ORDER`` and ``_X``: the gain, or 1 for a relevant row). Tie-group values
    are running sums read at the group's bounds with fills (inside ``list.eval`` a
    gather by per-row indices does not run over all lists at once), added as fields in
    stages, so that each is computed once and read where it is needed.
    """
    order, x = _field(_ORDER), _field(_X)
    rows = _with_fields(
        rows,
        p=pl.element().cum_count(),  # 1..len: no nulls in the struct
        starts=order.ne_missing(order.shift(1)),
        ends=order.ne_missing(order.shift(-1)),
        running=x.cum_sum(),
    )
    p, starts, ends, running = (_field(name) for name in ("p", "starts", "ends", "running"))
    rows = _with_fields(
        rows,
        first=pl.when(starts).then(p).forward_fill(),
        last=pl.when(ends).then(p).backward_fill(),
        before=f64(pl.when(starts).then(running - x).forward_fill()),  # x above the group
        end_sum=pl.when(ends).then(running).backward_fill(),
    )
    first, last, before = _field("first"), _field("last"), _field("before")
    rows = _with_fields(
        rows,
        n=f64(last - first + 1),
        j=f64(p - first),  # the row's offset in its group
        total=f64(_field("end_sum")) - before,  # x of the group
    )
    n, j, total = _field("n"), _field("j"), _field("total")
    none_before = pl.lit(0.0)
    if quantity.kind == "reciprocal_rank":
        # P(no relevant row at the group's offsets before j): a running sum of log-steps
        # from the group's start.
        rows = _with_fields(rows, step=none_before_log_step(n, total, j))
        rows = _with_fields(rows, steps=_field("step").cum_sum())
        steps = _field("steps")
        rows = _with_fields(
            rows, at_start=pl.when(starts).then(steps - _field("step")).forward_fill()
        )
        none_before = none_before_from_log(steps - _field("at_start"), n, total, j)
    # One row's tie group, as the shared formulas read it: one value x per quantity.
    group = {"n": n, "j": j, "above": before, "none_before": none_before}
    term = expected_contribution(
        quantity, lambda name: group.get(name.split(":")[0], total), p, pl.lit(True)
    )
    return _over_list(rows, pl.when(p <= k).then(term).otherwise(0.0).sum())


def _with_fields(rows: pl.Expr, **fields: pl.Expr) -> pl.Expr:
    """``rows`` (a list of structs per group) with ``fields`` added to every row."""
    return rows.list.eval(pl.element().struct.with_fields(**fields))


def head_expression(
    metric: Metric, cols: Columns, ties: Ties, keys: tuple[list[pl.Expr], list[bool]]
) -> pl.Expr | None:
    """``metric`` from its sorted-head form over one group's rows, or ``None``.

    ``None`` when the form does not apply: no form, no cutoff, or options the form
    does not cover. ``keys``: the tie policy's sort
    keys and directions (:meth:`SortedFeatures.sort_keys
    <polars_rankeval.metrics.sorted_features.SortedFeatures.sort_keys>`).
    """
    form = applicable_form(metric)
    if form is None:
        return None
    reader = _AggregationReader(cols, ties, *keys)
    return form.value(reader, dict(metric.options), int(cast(int, metric.k)))


def applicable_form(metric: Metric) -> HeadForm | None:
    """``metric``'s sorted-head form when it applies, else ``None``.

    It applies when declared, with a cutoff ``k >= 1`` and options the form covers.
    """
    form = metric.spec.head
    if form is None or metric.k is None or metric.k < 1:
        return None
    return form if form.covers(dict(metric.options), SAMPLED_DEFAULTS) else None


def aggregation_reader(
    cols: Columns, ties: Ties, keys: tuple[list[pl.Expr], list[bool]]
) -> HeadReader:
    """The head form's quantities and totals as expressions over one group's rows.

    Each is its own selection or reduction of the group; :mod:`~polars_rankeval.metrics.
    metric_struct` reads the user's totals from it.
    """
    return _AggregationReader(cols, ties, *keys)
