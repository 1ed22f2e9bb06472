"""The head path's reading at each cutoff: per-user lists summed up to every cutoff.

A quantity kept as a list of contributions by position (several cutoffs read it) is
summed cumulatively once per user and read at each cutoff's index
(:func:`_prefix_sums`); :class:`_Reader` hands a metric's head form the sum at its
cutoff, or the per-user totals. Separate from the sums themselves
(:mod:`polars_rankeval.plan.head_sums`): this is what makes 100 cutoffs cost 100
vectorised reads instead of 100 passes.
"""

from __future__ import annotations

from typing import Literal

import polars as pl

from polars_rankeval.metrics.head_form import Quantity
from polars_rankeval.plan.head_request import (
    _N_RET,
    MARKER,
    _first,
    _first_only,
    _name,
    _Request,
    _summed,
)

Sums = Literal["lists", "running", "given"]
"""What step 2 (:mod:`~polars_rankeval.plan.head_sums`) gives per user for a quantity
read at several cutoffs: its contributions by position, their running sums, or the
sum at each cutoff (see :func:`_prefix_sums`)."""


class _Reader:
    """The head path's per-user columns, as a head form reads them.

    See :class:`~polars_rankeval.metrics.head_form.HeadReader`.
    """

    def __init__(self, need: _Request, expected: bool) -> None:
        self.need = need
        self.expected = expected

    def sum_at(self, quantity: Quantity, k: int) -> pl.Expr:
        name = quantity.column
        if quantity.kind == "ideal_gain":
            cut = self.need.ideals[name][4]
            return _sum_at(self.need, name, k if quantity.idcg == "cut" else 2**32 - 1, cut)
        return _sum_at(self.need, name, k)

    def n_relevant(self, threshold: float) -> pl.Expr:
        return pl.col(_name("n_rel", float(threshold)))

    def ratio(self, numerator: pl.Expr, denominator: pl.Expr) -> pl.Expr:
        return pl.when(denominator != 0).then(numerator / denominator).otherwise(None)

    def n_retrieved(self) -> pl.Expr:
        return pl.col(_N_RET)

    def first_relevant(self, threshold: float) -> pl.Expr:
        return pl.col(_first(float(threshold)))


def _sum_at(need: _Request, name: str, k: int, cut: int | None = 0) -> pl.Expr:
    """Quantity ``name`` summed over the positions 1..k."""
    if _summed(need, name, cut):
        return pl.col(name)
    return pl.col(_prefix(name, k))


def _prefix(name: str, k: int) -> str:
    return f"{MARKER}:prefix[{name}@{k}]"


def _prefix_sums(
    users: pl.LazyFrame, need: _Request, expected: bool, *, quantities: Sums = "lists"
) -> pl.LazyFrame:
    """Every list of contributions summed up to each of its cutoffs.

    ``quantities``: what step 2 gave for each quantity read at several cutoffs
    (:data:`Sums`): its contributions by position (``"lists"``, summed here as below),
    their running sums by position (``"running"``: cutoff k reads position k), or its
    sum at each cutoff itself (``"given"``: nothing to read here). The ideal gains'
    lists are always contributions.

    Per list of contributions, the sums over the segments between consecutive cutoffs
    are put in one list and summed cumulatively, once (``cum_sum`` in a ``list.eval``); each cutoff
    then reads that list at its own index, all cutoffs in one ``with_columns``. So
    the plan holds a constant number of nodes and one read per cutoff: its size, and
    the memory Polars takes to optimise it, grow linearly with the number of cutoffs
    (a running sum chained over one plan node per cutoff, each node carrying every
    earlier cutoff's column, grew with their square: ~1.9 GB to plan ``ndcg@1..1000``).

    The segments: a cutoff list's leading segments are sums of ``list.slice`` (one
    ``list.get`` for a single position), one value each, so that the i-th cutoff is the
    i-th cumulative sum; a trailing run of consecutive cutoffs (``@1..100``, the
    ``..100`` of ``@[1,5..100]``) is the list's positions themselves (a slice, which
    ends with the list). A cutoff past the end of a list reads the list's total (the
    last cumulative sum; 0.0 for an empty list). The sums are those of a fold from 0.0
    over the segments (``+ 0.0``: an empty sum, or a sum of zeros, reads 0.0, not
    -0.0). (Under a deterministic policy mrr and hit_rate read the first relevant
    position instead.)
    """
    cumulative: dict[str, pl.Expr] = {}
    reads: dict[str, tuple[str, list[tuple[int, int]]]] = {}  # list, (index, cutoff)
    for name, cutoffs in need.cutoffs.items():
        cut = need.ideals[name][4] if name in need.ideals else 0
        if _summed(need, name, cut):
            continue
        if not expected and _first_only(need.quantities.get(name)):
            continue
        ks = sorted(cutoffs)
        if name in need.quantities and name not in need.ideals and quantities != "lists":
            if quantities == "running":  # running sums by position: cutoff k at k - 1
                reads[name] = (name, [(k - 1, k) for k in ks])
            continue  # "given": step 2 gave the sum at each cutoff
        cumulative[_cumulative(name)] = _segments(pl.col(name), ks).list.eval(
            pl.element().cum_sum() + 0.0
        )
        reads[name] = (_cumulative(name), list(enumerate(ks)))
    if not reads:
        return users
    users = users.with_columns(**cumulative)
    users = users.with_columns(
        pl.col(cum).list.last().fill_null(0.0).alias(_total(name))
        for name, (cum, _) in reads.items()
    )
    return users.with_columns(
        pl.col(cum)
        .list.get(i, null_on_oob=True)
        .fill_null(pl.col(_total(name)))
        .alias(_prefix(name, k))
        for name, (cum, at) in reads.items()
        for i, k in at
    ).drop([*cumulative, *(_total(name) for name in reads)])


def _segments(values: pl.Expr, ks: list[int]) -> pl.Expr:
    """Per user, the sums of the list ``values`` between consecutive cutoffs ``ks``.

    ``ks`` sorted: the i-th cumulative sum of the result is the sum of ``values`` over
    the positions 1..ks[i] (when ``values`` ends before ks[i], its last one is the
    total). A segment of one position is one ``list.get`` (0.0 past the list's end), a
    longer one a ``list.slice`` summed; the trailing run of segments of one position
    each is a slice of ``values`` (it ends with the list, after every other segment).
    """
    run = len(ks)  # the first cutoff of the trailing run of one-position segments
    while run > 0 and ks[run - 1] - (ks[run - 2] if run > 1 else 0) == 1:
        run -= 1
    start = ks[run - 1] if run else 0
    tail = values.list.slice(start, len(ks) - run)
    if run == 0:
        return tail
    segments: list[pl.Expr] = []
    previous = 0
    for k in ks[:run]:
        if k - previous == 1:
            segments.append(values.list.get(previous, null_on_oob=True).fill_null(0.0))
        else:
            segments.append(values.list.slice(previous, k - previous).list.sum())
        previous = k
    return pl.concat_list(segments if run == len(ks) else [*segments, tail])


def _cumulative(name: str) -> str:
    return f"{MARKER}:cumulative[{name}]"


def _total(name: str) -> str:
    return f"{MARKER}:total[{name}]"
