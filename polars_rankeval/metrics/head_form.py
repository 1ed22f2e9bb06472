"""A metric's sorted-head form: the sums over its top positions, and its value from them.

The sorted-head path of ``evaluate`` (:mod:`polars_rankeval.plan.head`) sorts each
user's rows once, keeps the head of the list and computes a few per-position
quantities on it (:class:`Quantity`: relevant hits, discounted gains, the terms of
average precision, ...), summed up to each cutoff. A metric that can be read from
those sums declares a :class:`HeadForm` in its ``register(...)`` call: the options
(and option values) the form covers, the quantities it reads, and its value at
cutoff k from a :class:`HeadReader`. The plan reads the form from the metric's
declaration; it names no metric.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, Protocol, cast

import polars as pl

Kind = Literal[
    "hits",
    "reciprocal_hits",
    "discounted_gain",
    "ideal_gain",
    "precision_sum",
    "reciprocal_rank",
    "log_miss",
]
"""The per-position quantities the head path computes (see :class:`Quantity`)."""

_LABELS: dict[str, str] = {
    "hits": "hits",
    "reciprocal_hits": "rhits",
    "discounted_gain": "dcg",
    "ideal_gain": "idcg",
    "precision_sum": "ap",
    "reciprocal_rank": "rr",
    "log_miss": "logmiss",
}
"""Each quantity's label in its column name, as the curve kernels name theirs."""

GainKey = tuple[str, str, float, "float | None"]
"""A discounted gain: ``(gain, discount, base, half_life)``."""


@dataclass(frozen=True)
class Quantity:
    """A per-position quantity of the sorted head, summed over the positions 1..k.

    ``"hits"``: the relevant items (relevance >= ``threshold``); ``"reciprocal_hits"``:
    the same, each divided by its position; ``"discounted_gain"``: the gains times the
    discounts (``gain``: :data:`GainKey`); ``"ideal_gain"``: the same over the ideal
    list, cut at k (``idcg="cut"``) or whole (``idcg="all"``); ``"precision_sum"``: the
    precision at each relevant position (average precision's numerator);
    ``"reciprocal_rank"``: the reciprocal of the first relevant position;
    ``"log_miss"``: the log-probability that no position so far holds a relevant item.
    Under ``ties="expected"`` each is its expectation over the tied orderings.
    """

    kind: Kind
    threshold: float | None = None
    gain: GainKey | None = None
    idcg: str | None = None

    @property
    def column(self) -> str:
        """The column the head path holds this quantity in (its content names it)."""
        parts: tuple[Any, ...] = (self.threshold,)
        if self.gain is not None:
            parts = self.gain if self.idcg is None else (*self.gain, self.idcg)
        return f"__prk_curve[{':'.join(str(p) for p in (_LABELS[self.kind], *parts))}]"


class HeadReader(Protocol):
    """What a head form reads: the quantities' sums and the user's totals, per user."""

    expected: bool
    """Ties are ``"expected"`` (the sums are expectations); otherwise every position
    is its own tie group and :meth:`first_relevant` is defined."""

    def sum_at(self, quantity: Quantity, k: int) -> pl.Expr:
        """``quantity`` summed over the positions 1..k."""
        ...

    def n_relevant(self, threshold: float) -> pl.Expr:
        """The user's relevant items (relevance >= ``threshold``), recommended or not."""
        ...

    def n_retrieved(self) -> pl.Expr:
        """The user's recommended items."""
        ...

    def ratio(self, numerator: pl.Expr, denominator: pl.Expr) -> pl.Expr:
        """``numerator / denominator``, null where the denominator is 0.

        A reader whose columns are free to read twice tests the denominator; one whose
        every reference is computed again (an expression over a group's rows) names it
        once.
        """
        ...

    def first_relevant(self, threshold: float) -> pl.Expr:
        """The position of the first relevant item (null: none); deterministic ties only."""
        ...


Options = dict[str, Any]


@dataclass(frozen=True)
class HeadForm:
    """A metric's sorted-head form (see the module documentation).

    ``options``: the options the form covers, each with the values it covers
    (``None``: any value); a metric bound to another option or value takes the general
    path. ``quantities(options)``: the quantities it reads. ``value(reader, options,
    k)``: the metric at cutoff k, one expression per user.
    """

    options: Mapping[str, frozenset[Any] | None]
    quantities: Callable[[Options], tuple[Quantity, ...]]
    value: Callable[[HeadReader, Options, int], pl.Expr]

    def covers(self, options: Mapping[str, Any], plain: Mapping[str, Any]) -> bool:
        """Whether the form covers a metric bound to ``options``.

        ``plain``: options that leave the metric as it is at these values (the sampled
        estimators' options at their defaults), which any form covers.
        """
        missing = object()
        for option, value in options.items():
            if plain.get(option, missing) == value:
                continue
            if option not in self.options:
                return False
            values = self.options[option]
            if values is not None and value not in values:
                return False
        return True


def if_relevant(reader: HeadReader, threshold: float, value: pl.Expr) -> pl.Expr:
    """``value`` for a user with a relevant item, null (undefined) otherwise."""
    has = reader.n_relevant(threshold) > 0
    return pl.when(has).then(value.cast(pl.Float64)).otherwise(None)


def head_size(reader: HeadReader, denominator: str, k: int) -> pl.Expr:
    """The list size dividing the hits: k, or ``denominator="retrieved"``: min(k, #ret)."""
    if denominator == "retrieved":
        return pl.min_horizontal(reader.n_retrieved(), pl.lit(float(k)))
    return pl.lit(float(k))


def first_within(reader: HeadReader, threshold: float, k: int) -> pl.Expr:
    """Whether the first relevant position is within the top k (deterministic ties)."""
    first = reader.first_relevant(threshold)
    return first.is_not_null() & (first <= k)


def none_before_factor(n: pl.Expr, r: pl.Expr, j: pl.Expr) -> pl.Expr:
    """P(the row's offset j holds no relevant item | none at the offsets before it).

    In a tie group of ``n`` rows, ``r`` of them relevant; 1 at the group's first row.
    The product of these factors over the group's rows up to j is P(no relevant item
    at offsets 0..j - 1): reciprocal rank's chance that the first relevant item is
    further down.
    """
    factor = ((n - r - j + 1) / (n - j + 1)).clip(0.0, 1.0)
    return pl.when(j > 0).then(factor).otherwise(1.0)


def none_before_log_step(n: pl.Expr, r: pl.Expr, j: pl.Expr) -> pl.Expr:
    """``log`` of :func:`none_before_factor`, 0.0 where it has no finite value.

    A running sum of these steps from a tie group's start, read back with
    :func:`none_before_from_log`, is the product of the factors where a list of rows
    cannot hold a running product (the expressions' ``list.eval`` stages). A factor is
    0 only past offset ``n - r``, where :func:`none_before_from_log` gives 0 itself.
    """
    return pl.when((j >= 1) & (j <= n - r)).then(none_before_factor(n, r, j).log()).otherwise(0.0)


def none_before_from_log(log_sum: pl.Expr, n: pl.Expr, r: pl.Expr, j: pl.Expr) -> pl.Expr:
    """The product of :func:`none_before_factor` up to offset j, from its steps' sum.

    ``log_sum``: the sum of :func:`none_before_log_step` over the group's offsets up to
    j; 0.0 past offset ``n - r`` (every such product holds a zero factor).
    """
    return pl.when(j <= n - r).then(log_sum.exp()).otherwise(0.0)


def expected_contribution(
    quantity: Quantity, value: Callable[[str], pl.Expr], pos: pl.Expr, ret: pl.Expr
) -> pl.Expr:
    """A quantity's expected contribution at one position under ``ties="expected"``.

    The curve kernels' expectations over the orderings of the row's tie group, read
    by every place that computes them from a sorted head, so that they cannot differ:
    the sorted-head path of ``evaluate`` (:mod:`polars_rankeval.plan.head_sums`), a
    metric function's expression (:mod:`polars_rankeval.metrics.head_expression`) and
    :func:`~polars_rankeval.metrics.metric_struct.evaluate_expr`.

    ``value(name)`` reads the row's tie group: ``n`` (its size), ``j`` (the row's offset
    in it), ``r:<t>`` (its relevant rows at threshold t), ``g:<gain>`` (its gains),
    ``above:<t>`` (the user's relevant rows above it) and ``none_before:<t>`` (the
    product of :func:`none_before_factor` up to the row); ``pos``: the position
    (1-based), ``ret``: whether the row was recommended. Not for ``"ideal_gain"`` (the
    ideal list has no ties).
    """
    # Here, not at the top: metrics._common imports the registry, which reads this module.
    from polars_rankeval.metrics._common import discount_at

    n, j = value("n"), value("j")
    p = pos.cast(pl.Float64)
    kind = quantity.kind
    if kind == "discounted_gain":
        gain, discount, base, half_life = cast(GainKey, quantity.gain)
        disc = discount_at(pos, discount, base, half_life)
        return pl.when(ret).then(value(f"g:{gain}") / n * disc).otherwise(0.0)
    t = float(cast(float, quantity.threshold))
    r = value(f"r:{t}")
    if kind == "hits":
        return pl.when(ret).then(r / n).otherwise(0.0)
    if kind == "reciprocal_hits":
        return pl.when(ret).then(r / n / p).otherwise(0.0)
    if kind == "precision_sum":
        c = pl.when(n > 1).then((r - 1) / (n - 1)).otherwise(0.0)
        ap = r / n * (value(f"above:{t}") + 1 + j * c) / p
        return pl.when(ret & (r > 0)).then(ap).otherwise(0.0)
    if kind == "log_miss":
        miss = ((n - r - j) / (n - j)).clip(0.0, 1.0)
        return pl.when(ret).then(miss).otherwise(1.0).log()
    if kind == "reciprocal_rank":
        # The user's first group holding a relevant item: no relevant row above it.
        in_first = ret & (r > 0) & (value(f"above:{t}") == 0)
        p_first = value(f"none_before:{t}") * r / (n - j)
        return pl.when(in_first).then(p_first / p).otherwise(0.0)
    msg = f"no expected contribution of the quantity {kind!r}"
    raise ValueError(msg)
