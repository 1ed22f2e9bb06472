"""What the metrics of a job read from the sorted head, and the head path's column names.

The head path (:mod:`polars_rankeval.plan.head`) gathers, from the metrics' head forms
(:class:`~polars_rankeval.metrics.head_form.HeadForm`), each quantity once with its
thresholds, gains and cutoffs (:class:`_Request`); every stage of the path reads that
request and names its columns with the prefix :data:`MARKER`. Kept apart so that the
head aggregation, the per-position sums and the reading at each cutoff share one
declaration of both.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

import polars as pl

from polars_rankeval.metrics._common import discount_at
from polars_rankeval.metrics.head_form import GainKey, Quantity

if TYPE_CHECKING:
    from polars_rankeval.plan.job import Job


MARKER = "__prk_head"
"""Prefix of every column this path adds: visible in ``LazyFrame.explain()``."""

_HEAD = f"{MARKER}:head"
_VALUE = f"{MARKER}:value"
_KEY = f"{MARKER}:key"
_LAST = f"{MARKER}:last"
_UID = f"{MARKER}:uid"
_ROW = f"{MARKER}:row"
_FIRST = f"{MARKER}:first"
_LAST_ROW = f"{MARKER}:last_row"
_POS = f"{MARKER}:pos"
_POSITIVE = f"{MARKER}:positive"
_N_RET = f"{MARKER}:n_ret"
_N_JUDGED = f"{MARKER}:n_judged"
_REL = f"{MARKER}:rel"
_RET = f"{MARKER}:ret"
_EXTRA = f"{MARKER}:extra"
_NEW = f"{MARKER}:new"
_END = f"{MARKER}:end"


def _name(*parts: Any) -> str:
    return f"{MARKER}[{':'.join(str(p) for p in parts)}]"


def _discount(p: pl.Expr, discount: str, base: float, half_life: float | None) -> pl.Expr:
    """The discount of position ``p``, as the graded kernels define it."""
    return discount_at(p, discount, base, half_life)


FIXED_WIDTH = 32
"""Heads of at most this many positions are fixed-width Arrays (:class:`_Positions`)."""


class _Positions:
    """Per-position values of a head, as Arrays of ``width`` or as lists.

    Arithmetic between Arrays of one width, or with a literal Array of the positions'
    values, runs over their flat values, never per list: the discounts, the running
    hits and the sums over a short head are then vectorised operations (a
    ``list.eval`` that depends on the list, a ``cum_sum`` or an ``int_range``, costs
    Polars ~1 us per list; on 10M rows, 100k users, the totals and contributions
    of a head of 10 as Arrays took 0.10 s against 0.17 s as lists). A wide head is
    kept as lists: there padding every list to the width, and the flat running sums,
    cost more than they save (measured at 100 positions, benchmarks/RESULTS_HEAD.md).
    Both forms hold the same values; past a list's end the Array holds null
    (:meth:`of`).
    """

    def __init__(self, width: int, *, fixed: bool | None = None) -> None:
        self.width = width
        self.fixed = width <= FIXED_WIDTH if fixed is None else fixed

    def of(self, values: pl.Expr) -> pl.Expr:
        """The list ``values`` in this form (its first ``width`` values)."""
        if not self.fixed:
            return values
        indices = pl.lit(list(range(self.width)))
        return values.list.gather(indices, null_on_oob=True).list.to_array(self.width)

    def map(self, values: pl.Expr, element: pl.Expr) -> pl.Expr:
        """The expression ``element`` (of ``pl.element()``) of every value."""
        return values.arr.eval(element) if self.fixed else values.list.eval(element)

    def at_positions(self, like: pl.Expr, element: pl.Expr) -> pl.Expr:
        """The expression ``element`` of every position p (``pl.element()``) of ``like``.

        Fixed: a literal Array, computed by the same expression as the lists' values,
        so both agree exactly. Lists: the positions from ``int_ranges`` and an
        elementwise ``list.eval`` (a ``list.eval`` with ``int_range`` runs per list:
        ~50x slower).
        """
        element = element.cast(pl.Float64)
        if self.fixed:
            positions = pl.int_range(1, self.width + 1).implode().list.eval(element)
            values = pl.select(positions).to_series().explode()
            return pl.lit(values.reshape((1, self.width)))
        return pl.int_ranges(1, like.list.len() + 1).list.eval(element)

    def precision_terms(self, is_rel: pl.Expr, position: pl.Expr, *, summed: bool) -> pl.Expr:
        """Average precision's terms ``is_rel(p) * hits(p) / p`` (or their sum).

        ``position``: the head's positions (:meth:`at_positions`, shared with the
        other quantities). ``hits(p)``: the relevant items at positions 1..p. Lists: a
        running sum per list. Fixed: one column per position (``arr.get``) and each running count a
        horizontal sum of the positions before, never an Array of the counts (a flat
        ``cum_sum`` reshaped to Arrays cost 21 ms for 100k heads of 10 and 300 ms of
        32, these columns 8 ms and 53 ms; ``summed``: the sum alone, no Array built).
        """
        if not self.fixed:
            terms = is_rel * is_rel.list.eval(pl.element().cum_sum()) / position
            return terms.list.sum() if summed else terms
        at = [is_rel.arr.get(p) for p in range(self.width)]
        per_position = [
            at[p] * pl.sum_horizontal(at[: p + 1]) / float(p + 1) for p in range(self.width)
        ]
        return pl.sum_horizontal(per_position) if summed else pl.concat_arr(per_position)

    def min(self, values: pl.Expr) -> pl.Expr:
        return values.arr.min() if self.fixed else values.list.min()

    def sum(self, values: pl.Expr) -> pl.Expr:
        return values.arr.sum() if self.fixed else values.list.sum()

    def as_list(self, values: pl.Expr) -> pl.Expr:
        return values.arr.to_list() if self.fixed else values


LISTS = _Positions(0, fixed=False)
"""The list form, whatever the width: values as long as each user's list."""


class _Request:
    """What the requested metrics read: thresholds, gains, quantities and cutoffs.

    Gathered from the metrics' head forms
    (:class:`~polars_rankeval.metrics.head_form.HeadForm`): each quantity once, however
    many metrics and cutoffs read it.
    """

    def __init__(self, job: Job, relevance_dtype: pl.DataType | None = None) -> None:
        self.thresholds: dict[float, None] = {}
        self.quantities: dict[str, Quantity] = {}
        self.cutoffs: dict[str, set[int]] = {}
        self.ideals: dict[str, tuple[str, str, float, float | None, int | None]] = {}
        self.gains: set[str] = set()
        self.ap_thresholds: set[float] = set()
        self.rr_thresholds: set[float] = set()
        self.float_key = job.order_dtype is not None and job.order_dtype.is_float()
        small_ints = (pl.Int8, pl.Int16, pl.Int32, pl.UInt8, pl.UInt16, pl.UInt32, pl.Boolean)
        self.small_int_relevance = relevance_dtype in small_ints
        self.integer_relevance = relevance_dtype is not None and (
            relevance_dtype.is_integer() or relevance_dtype == pl.Boolean
        )
        self.k = 1
        for metric in job.metrics:
            k = int(metric.k or 1)
            self.k = max(self.k, k)
            form = metric.spec.head
            if form is None:  # pragma: no cover - applies() admits head forms only
                msg = f"metric {metric.name!r} has no sorted-head form"
                raise ValueError(msg)
            for quantity in form.quantities(dict(metric.options)):
                self._add(quantity, k)

    def _add(self, quantity: Quantity, k: int) -> None:
        name = quantity.column
        self.cutoffs.setdefault(name, set()).add(k)
        if quantity.kind == "ideal_gain":
            cut = k if quantity.idcg == "cut" else None
            old = self.ideals.get(name)
            if old is not None and cut is not None and old[4] is not None:
                cut = max(old[4], cut)
            self.ideals[name] = (*cast(GainKey, quantity.gain), cut)
            return
        self.quantities[name] = quantity
        if quantity.kind == "discounted_gain":
            self.gains.add(cast(GainKey, quantity.gain)[0])
            return
        t = float(quantity.threshold or 0.0)
        self.thresholds[t] = None
        if quantity.kind == "precision_sum":
            self.ap_thresholds.add(t)
        elif quantity.kind == "reciprocal_rank":
            self.rr_thresholds.add(t)


def _reduce(
    need: _Request,
    name: str,
    values: pl.Expr,
    cut: int | None = 0,
    *,
    form: _Positions = LISTS,
) -> pl.Expr:
    """Per user: a list of contributions by position, or its sum.

    With one cutoff at the end of the head (or ``cut=None``, the whole list) the sum
    is enough; otherwise the list is kept and summed up to each cutoff
    (:func:`~polars_rankeval.plan.head_cumulative._prefix_sums`). ``form``: how
    ``values`` is held (:class:`_Positions`; default: a list).
    """
    if _summed(need, name, cut):
        return form.sum(values)
    return form.as_list(values)


def _summed(need: _Request, name: str, cut: int | None = 0) -> bool:
    if cut is None:
        return True
    return need.cutoffs.get(name, set()) <= {need.k} and (cut == 0 or cut >= need.k)


def _first(t: float) -> str:
    return _name("first", t)


def _first_only(quantity: Quantity | None) -> bool:
    """Whether a deterministic policy reads the quantity from the first relevant position.

    (No list of contributions then.)
    """
    return quantity is not None and quantity.kind in ("reciprocal_rank", "log_miss")
