"""The sort-once feature provider of the stand-alone metric expressions.

A metric function (``prk.ndcg(10)``) returns one expression aggregating one group
(one user) to one value, for ``group_by(...).agg(...)``, ``select(...)`` and
``.over(...)``. It is the metric's kernel (the same kernel ``evaluate`` runs) over
the features of :class:`SortedFeatures`, which computes them from the group's rows
sorted once:

1. the columns the kernel reads (score or rank, relevance, item, and any extra
   column) are packed into one struct and sorted by the tie policy's order
   (:data:`polars_rankeval.metrics.features.TIE_ORDER`; under ``ties="expected"``
   by the score alone), then imploded into one list per group;
2. the kernel's expression runs inside ``list.eval`` over that list, where each
   column is a field of the sorted rows: positions are one ``int_range`` field, tie
   groups come from the sorted score (a change from the previous row starts a group),
   and tie-group sums, counts of relevant rows above a row and running products inside
   a tie group (:meth:`SortedFeatures.first_of`) are running sums read back at the
   group's bounds with fills.

Why a list. Polars does not eliminate common sub-expressions inside an aggregation
context, so an expression that names a sorted column ten times sorts ten times. Inside
``list.eval`` the sorted rows are one materialised list that every reference reads,
and Polars evaluates the inner expression over all groups' lists at once. So a metric
expression sorts its group once, whatever its kernel reads; several metric expressions
of one ``agg`` sort once each (each is a separate expression).

A metric at a cutoff that declares a sorted-head form is read from that form instead
(:mod:`polars_rankeval.metrics.head_expression`): only the rows that can reach the
top k are sorted.

A kernel that reads a column by ``pl.col`` rather than through the provider cannot
run inside ``list.eval``: :func:`metric_expression` builds such a metric with the
plain inline provider instead (same numbers, the previous cost).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import polars as pl

from polars_rankeval._utils.ties import Ties, id_order
from polars_rankeval._utils.types import Columns
from polars_rankeval.metrics.features import Features, PosFn, f64
from polars_rankeval.metrics.head_expression import head_expression

if TYPE_CHECKING:
    from polars_rankeval.metrics.spec import Metric

_ORDER = "__prk_order"
_REL = "__prk_relevance"
_EXTRA = "__prk_column:"


def _field(name: str) -> pl.Expr:
    return pl.element().struct.field(name)


class SortedFeatures(Features):
    """Features of one group's rows sorted once by the tie policy's order.

    Every expression it returns reads the fields of ``pl.element()``: it is valid
    inside the ``list.eval`` that :meth:`wrap` builds, and nowhere else.

    Parameters
    ----------
    cols
        Column names of the long frame.
    ties
        Tie policy.
    n_items
        The catalog size N, for metrics over the whole catalog.
    """

    def __init__(self, cols: Columns, ties: str | Ties, *, n_items: int | None = None) -> None:
        super().__init__(cols, ties, keys=None, n_items=n_items)  # type: ignore[arg-type]

    # ------------------------------------------------------------------ the wrapper
    def sort_keys(self) -> tuple[list[pl.Expr], list[bool]]:
        """The sort keys of the tie policy (agg context), and whether each descends."""
        order = pl.col(self.cols.order)
        keys, descending = [order], [self.cols.rank is None]
        if self.expected:  # tie groups only: any order inside them
            return keys, descending
        relevance = pl.col(self.cols.relevance)
        for name in self.tie.breaks:
            if name in ("relevance_desc", "relevance_asc"):
                keys.append(f64(relevance).fill_null(0.0))
                descending.append(name == "relevance_desc")
            elif name == "judged_first":
                keys.append(relevance.is_null())
                descending.append(False)
            else:
                keys.append(id_order(self.cols.item))
                descending.append(name == "item_desc")
        return keys, descending

    def wrap(self, body: pl.Expr) -> pl.Expr:
        """``body`` (built on this provider) as one expression over a group's rows.

        The rows are sorted and imploded once; the features registered while the
        kernel was built are added as fields in the window provider's dependency order
        (each stage one ``list.eval``), so that ``body`` reads each of them as a field
        instead of recomputing it wherever it appears.
        """
        fields = [
            pl.col(self.cols.order).alias(_ORDER),
            pl.col(self.cols.relevance).alias(_REL),
            *(pl.col(name).alias(_EXTRA + name) for name in self.extra),
        ]
        keys, descending = self.sort_keys()
        rows = pl.struct(fields).sort_by(keys, descending=descending, nulls_last=True).implode()
        tied = [{n: t for n, (t, _) in level.items()} for level in self.tie_levels]
        for stage in (*self.stages[:2], self.positive, *tied, self.stages[2]):
            if stage:
                rows = rows.list.eval(pl.element().struct.with_fields(**stage))
        return rows.list.eval(body).list.first()

    def _reg(self, stage: int, name: str, expr: pl.Expr) -> pl.Expr:
        self.stages[stage].setdefault(name, expr)
        return _field(name)

    def _tie(self, level: int, name: str, tied: pl.Expr, singleton: pl.Expr) -> pl.Expr:
        """A tie-group value, computed on every row (``tied`` holds for singletons too)."""
        self.tie_levels[level].setdefault(name, (tied, singleton))
        return _field(name)

    def _positive(self, name: str, expr: pl.Expr) -> pl.Expr:
        self.positive.setdefault(name, expr)
        return _field(name)

    # ------------------------------------------------------------------ base rows
    def column(self, name: str) -> pl.Expr:
        """Another column of the rows, as a field of the sorted rows."""
        self.extra.setdefault(name, None)
        return _field(_EXTRA + name)

    @property
    def _order(self) -> pl.Expr:
        return _field(_ORDER)

    @property
    def ret(self) -> pl.Expr:
        """True for recommended (retrieved) rows."""
        return self._order.is_not_null()

    @property
    def rel(self) -> pl.Expr:
        """Graded relevance as Float64, null read as 0."""
        return f64(_field(_REL)).fill_null(0.0)

    @property
    def judged(self) -> pl.Expr:
        """True for rows with a relevance judgment (a non-null relevance)."""
        return _field(_REL).is_not_null()

    @property
    def _starts(self) -> pl.Expr:
        """True on the first row of each tie group (rows sorted by the score)."""
        order = self._order
        # The first row explicitly: a null order (not recommended) equals the shifted-in null.
        first = pl.int_range(pl.len()) == 0
        return self._reg(0, "__prk_start", first | order.ne_missing(order.shift(1)))

    @property
    def key(self) -> pl.Expr:
        """Ordering key, higher is better; not-recommended rows are ``-inf``.

        The dense rank of the score among the user's recommended rows (1 for the
        lowest score), as the inline provider of :class:`Features` gives it.
        """
        group = self._starts.cast(pl.Int64).cum_sum()
        distinct = pl.when(self.ret).then(group).max()
        key = pl.when(self.ret).then(f64(distinct - group + 1)).otherwise(float("-inf"))
        return self._reg(1, "__prk_key", key)

    # ------------------------------------------------------------------ positions
    @property
    def o(self) -> pl.Expr:
        """The row's 1-based position in the sorted rows (a field: read, not recomputed)."""
        return self._reg(0, "__prk_o", pl.int_range(1, pl.len() + 1, dtype=pl.Int64))

    @property
    def a(self) -> pl.Expr:
        """First position of the row's tie group."""
        if not self.expected:
            return self.o
        return self._reg(1, "__prk_a", pl.when(self._starts).then(self.o).forward_fill())

    @property
    def _ends(self) -> pl.Expr:
        """True on the last row of each tie group."""
        order = self._order
        last = pl.int_range(pl.len()) == pl.len() - 1
        return self._reg(0, "__prk_end", last | order.ne_missing(order.shift(-1)))

    @property
    def _b(self) -> pl.Expr:
        return self._reg(1, "__prk_b", pl.when(self._ends).then(self.o).backward_fill())

    def _group_sum(self, x: pl.Expr) -> pl.Expr:
        """Sum of ``x`` over the row's tie group: running sums read at the group's bounds.

        Fills rather than ``gather``: inside ``list.eval`` a gather by per-row indices
        does not run over all groups at once.
        """
        running = x.cum_sum()
        at_end = pl.when(self._ends).then(running).backward_fill()
        before = pl.when(self._starts).then(running - x).forward_fill()
        return at_end - before

    # ------------------------------------------------------------------ tie-group sums
    def gsum(self, x: pl.Expr, name: str) -> pl.Expr:
        """Sum of the row value ``x`` over the row's tie group."""
        if not self.expected:
            return x
        return self._tie(1, f"__prk_gsum[{name}]", self._group_sum(x), x)

    def gmean_pos(self, f: PosFn, k: int | pl.Expr | None, name: str) -> pl.Expr:
        """Mean of ``f(p) * [p <= k]`` over the positions p of the row's tie group."""

        def masked(p: pl.Expr) -> pl.Expr:
            v = f64(f(p))
            return v if k is None else pl.when(p <= k).then(v).otherwise(0.0)

        if not self.expected:
            return masked(self.o)
        mean = self._group_sum(masked(self.o)) / f64(self.n)
        return self._tie(1, f"__prk_gmean[{name}@{k}]", mean, masked(self.o))

    def first_of(self, r: pl.Expr, name: str) -> pl.Expr:
        """Probability that the row comes first among the ``r`` marked rows of its tie group.

        ``C(n-1-j, r-1) / C(n, r)`` as ``r/n`` times the running product over the
        group's offsets ``1..j`` of ``(n-r-i+1) / (n-i)`` (a running sum of logs read
        from the group's start): one logarithm a row instead of six log-gammas.
        """
        if not self.expected:
            return pl.lit(1.0)
        n, j = self.n, self.j
        valid = (r >= 1) & (j <= n - r)
        ratio = f64(n - r - j + 1) / f64(n - j)
        log_ratio = pl.when(valid & (j >= 1)).then(ratio.log()).otherwise(0.0)
        step = self._tie(2, f"{name}:step", log_ratio, pl.lit(0.0))
        running = step.cum_sum()
        before = pl.when(self._starts).then(running - step).forward_fill()
        value = pl.when(valid).then(f64(r) / f64(n) * (running - before).exp()).otherwise(0.0)
        return self._tie(3, name, value, pl.lit(1.0))

    def tie_row(
        self, name: str, expr: pl.Expr, singleton: pl.Expr, *, after: bool = False
    ) -> pl.Expr:
        """A row-wise value that only differs from ``singleton`` for rows in real ties."""
        if not self.expected:
            return singleton
        return self._tie(3 if after else 2, name, expr, singleton)

    def user_window(self, expr: pl.Expr, name: str) -> pl.Expr:
        """A row value computed from all of the user's rows, added once as a field."""
        return self._reg(2, f"__prk_window[{name}]", expr)

    def _above(self, mask: pl.Expr) -> pl.Expr:
        """For rows where ``mask`` holds: such rows strictly above the row's tie group."""
        count = mask.cast(pl.Int64)
        if self.expected:
            above = pl.when(self._starts).then(count.cum_sum() - count).forward_fill()
        else:
            above = count.cum_sum() - count
        return pl.when(mask).then(above)

    def rel_above(self, threshold: float) -> pl.Expr:
        """For relevant rows: relevant rows strictly above the row's tie group."""
        return self._positive(f"__prk_relabove[{threshold}]", self._above(self.rel >= threshold))

    def rows_above(self, mask: pl.Expr, name: str) -> pl.Expr:
        """For rows where ``mask`` holds: rows with the mask strictly above the tie group."""
        return self._reg(2, f"__prk_above[{name}]", self._above(mask))


def metric_expression(metric: Metric, cols: Columns, ties: Ties, n_items: int | None) -> pl.Expr:
    """The expression of ``metric`` over one group's rows (see the module docstring).

    From its sorted-head form when it has one that applies
    (:func:`~polars_rankeval.metrics.head_expression.head_expression`); otherwise
    sorted once (:class:`SortedFeatures`) when its kernel reads the rows through the
    provider only, else with the plain inline provider.
    """
    features = SortedFeatures(cols, ties, n_items=n_items)
    head = head_expression(metric, cols, ties, features.sort_keys())
    if head is not None:
        return head.alias(metric.name)
    body = metric.expr(features)
    if set(body.meta.root_names()) <= {""}:
        return features.wrap(body).alias(metric.name)
    plain: Any = Features(cols, ties, keys=None, n_items=n_items)
    return metric.expr(plain)
