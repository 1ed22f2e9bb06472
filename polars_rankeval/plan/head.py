"""The sorted-head path of ``evaluate``: sort each user's rows once, read the top.

The general path (:class:`~polars_rankeval.metrics.features.Features`, window provider)
materialises positions, tie groups and per-user totals as window columns over every
row, then reduces them with one ``group_by``. For the cutoff metrics that declare a
sorted-head form (:class:`~polars_rankeval.metrics.head_form.HeadForm`: the binary and
graded core, at a cutoff, and their cutoff lists and ranges) most of that work is
wasted: a metric at cutoff k only reads the positions 1..k. This path instead runs

1. **one** ``group_by(by + user).agg(...)`` over the rows, holding per user: the head of
   the list sorted by the tie policy's order (Polars sorts inside the aggregation and
   stops at the head, a partial sort), the user's totals (#relevant per threshold,
   #recommended) and the ideal gains (a top-k by gain among the positive gains);
2. a small frame of the head rows (users x K rows, K the largest cutoff) on which each
   position's contribution to each quantity the metrics read
   (:class:`~polars_rankeval.metrics.head_form.Quantity`) is computed with the formulas
   of the curve kernels (:mod:`polars_rankeval.metrics.cutoff_kernels`), collected per
   user and summed up to every cutoff (one cumulative list per user, read once per
   cutoff: 100 cutoffs cost 100 vectorised reads of the users' lists, not 100 passes
   over the rows).

Ties. Under a deterministic policy the sort itself breaks ties (:data:`TIE_ORDER`) and
every position is its own tie group. Under ``ties="expected"`` the head is sorted by
the score alone and its tie groups are read from it; only the group holding position K
may extend beyond the head. The head is therefore ``K + margin`` rows long: when the
group at K ends inside it, every group that touches a position <= K is complete. For
the few users whose group at K fills the whole margin, that one group's size, relevant
counts and gain sums are counted exactly on the user's rows with the group's score (a
join restricted to those users; empty on most data).

Validation. With ``validate=True`` the in-memory engine folds the value checks into
step 1 (:func:`check_counts`): the duplicate-key count is ``len - n_unique(item)`` in
the same ``group_by``, and the row-level checks are data-wide reductions (null counts,
NaN-poisoning minima and maxima; no pass of row predicates); only on a problem do the
full checks run, so the message is the general path's.

The values equal those of the general path up to floating-point rounding (sums run in
another order); ``tests/plan/test_head_path.py`` pins them for every metric, option, tie
policy and cutoff form. :func:`applies` decides, from the job alone, whether every
requested metric can be evaluated here; otherwise the general path runs (a job is
never split between the two). Every column of this path is named with the prefix
:data:`MARKER`, which is how tests check from the plan that the path is taken.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Literal, cast

import polars as pl

from polars_rankeval._utils.ties import id_order, resolve_ties
from polars_rankeval.metrics._common import discount_at
from polars_rankeval.metrics.features import Features, order_kind
from polars_rankeval.metrics.head_form import GainKey, HeadForm, Quantity
from polars_rankeval.metrics.sampled_estimators import SAMPLED_DEFAULTS
from polars_rankeval.plan.job import HAS_RECS as _HAS_RECS
from polars_rankeval.plan.job import HAS_TRUTH as _HAS_TRUTH
from polars_rankeval.plan.validate import row_screen

if TYPE_CHECKING:
    from polars_rankeval.metrics.spec import Metric
    from polars_rankeval.plan.job import Job

MARKER = "__prk_head"
"""Prefix of every column this path adds: visible in ``LazyFrame.explain()``."""
TIE_MARGIN = 3
"""Extra head rows under ``ties="expected"``, so that the tie group at K usually ends
inside the head (see the module docstring); a larger group is counted exactly."""

ENABLED = True
"""Switch for tests and benchmarks: ``False`` sends every job to the general path."""
SPLIT: int | None = None
"""How many branches compute the head rows under ``ties="expected"`` (in memory: slices
of consecutive users; on a LazyFrame: users by their row number modulo the count; Polars
runs the branches of a ``concat`` in parallel). ``None``: one per thread of Polars' pool.
The fills and running sums over the rows are sequential scans; split by user they use
every core. Tests and benchmarks set it."""

_HEAD = f"{MARKER}:head"
_NO_DEFAULT = object()
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


def applies(job: Job) -> bool:
    """True when every metric of ``job`` is evaluated by this path.

    That is: each declares a sorted-head form (:attr:`MetricSpec.head
    <polars_rankeval.metrics.spec.MetricSpec>`) covering its options, with a cutoff
    ``k >= 1`` (metrics without ``@k`` read the whole list and stay on the general
    path), the score/rank column's order is exact without a window
    (:func:`order_kind` ``f64`` or ``i128``), and no metric reads an extra column.
    """
    if not ENABLED or job.extra or order_kind(job.order_dtype) == "dense":
        return False
    if job.absolute:  # ranks with gaps: positions are not offsets in the sorted head
        return False
    return all(
        m.spec.head is not None
        and m.k is not None
        and m.k >= 1
        and job.kinds.get(m.name) == "expr"
        and _supported(m.spec.head, dict(m.options))
        for m in job.metrics
    )


def _supported(form: HeadForm, options: dict[str, Any]) -> bool:
    """Whether the head form covers these options.

    The options of the sampled estimators at their defaults (the plain metric) pass.
    """
    allowed = form.options
    for option, value in options.items():
        if SAMPLED_DEFAULTS.get(option, _NO_DEFAULT) == value:  # the plain metric
            continue
        if option not in allowed:
            return False
        values = allowed[option]
        if values is not None and value not in values:
            return False
    return True


def _name(*parts: Any) -> str:
    return f"{MARKER}[{':'.join(str(p) for p in parts)}]"


def _gain(rel: pl.Expr, gain: str) -> pl.Expr:
    return rel if gain == "linear" else 2.0**rel - 1.0


def _discount(p: pl.Expr, discount: str, base: float, half_life: float | None) -> pl.Expr:
    """The discount of position ``p``, as the graded kernels define it."""
    return discount_at(p, discount, base, half_life)


def _discounts(values: pl.Expr, discount: str, base: float, half_life: float | None) -> pl.Expr:
    """The discounts of positions 1 .. len, one list per row of the list ``values``.

    The positions come from ``int_ranges`` and the discount is an elementwise
    ``list.eval`` (a ``list.eval`` with ``int_range`` runs per list: ~50x slower).
    """
    positions = pl.int_ranges(1, values.list.len() + 1)
    return positions.list.eval(_discount(pl.element(), discount, base, half_life))


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

    def n_retrieved(self) -> pl.Expr:
        return pl.col(_N_RET)

    def first_relevant(self, threshold: float) -> pl.Expr:
        return pl.col(_first(float(threshold)))


def per_user(
    job: Job,
    rows: pl.LazyFrame,
    checks: list[pl.LazyFrame] | None = None,
    *,
    collect_first: bool = False,
) -> pl.LazyFrame:
    """Per-user values of every metric of ``job`` (and the truth/recs flags).

    ``rows`` holds whole users with the plan's column names (see
    :func:`polars_rankeval.plan.job.internal_names`). Returns one row per user with the
    key columns, one Float64 column per metric and the two boolean flags the user
    universe is decided on (named as :func:`polars_rankeval.plan.build.build` names
    them).

    ``checks``: when a list is given, the value checks of
    :mod:`polars_rankeval.plan.validate` are folded into this path's aggregation and a
    one-row frame of problem counts is appended to it (:func:`check_counts`).

    ``collect_first``: ``rows`` is a frame in memory; the first stage (the per-user
    sort and totals: a small frame, one row per user) is collected at once, with
    Polars' in-memory engine (:func:`first_stage_engine`), and the rest of the plan
    reads the result. On 10M rows that engine runs this ``group_by`` in ~100 MiB
    where the streaming engine (Polars' default for ``collect()``) takes ~290 MiB,
    and ~20% faster; and the checks' counts read the collected frame, so they can
    never cost a second aggregation. A LazyFrame stays lazy (``False``).
    """
    cols, keys = job.icols, job.ikeys
    need = _Request(job, rows.collect_schema()[cols.relevance])
    expected = not resolve_ties(job.ties).deterministic
    length = need.k + TIE_MARGIN if expected else need.k
    relevance, order = pl.col(cols.relevance), pl.col(cols.order)
    descending = cols.rank is None
    if expected:
        head = pl.struct(relevance.alias(_VALUE), order.alias(_KEY)).sort_by(
            order, descending=descending, nulls_last=True
        )
    else:
        by, directions = _tie_order(job)
        head = relevance.sort_by(by, descending=directions, nulls_last=True)
    aggs: dict[str, pl.Expr] = {
        _HEAD: head.head(length),
        # The positive relevances (few): #relevant per threshold and the ideal gains.
        _POSITIVE: relevance.filter(relevance > 0),
        _N_RET: order.count(),
        _N_JUDGED: relevance.count(),
    }
    if checks is not None:
        # The duplicate-key check on the same groups: rows minus distinct items.
        aggs[_EXTRA] = (pl.len() - pl.col(cols.item).n_unique()).cast(pl.Int64)
    users = rows.group_by(keys).agg(**aggs)
    if collect_first:
        users = users.collect(engine=first_stage_engine()).lazy()
    elif checks is not None:
        users = users.cache()  # read by the checks and by the metrics: computed once
    if checks is not None:
        checks.append(check_counts(job, rows, users))
    users = users.with_columns(pl.col(_POSITIVE).list.eval(pl.element().cast(pl.Float64)))
    positive = pl.col(_POSITIVE)
    totals = {
        _name("n_rel", t): positive.list.eval(pl.element() >= t).list.sum().cast(pl.Float64)
        for t in need.thresholds  # rel > 0 (checked by the registry)
    }
    users = users.with_columns(
        pl.col(_N_RET).cast(pl.Float64),
        (pl.col(_N_JUDGED) > 0).alias(_HAS_TRUTH),
        (pl.col(_N_RET) > 0).alias(_HAS_RECS),
        **totals,
        **{
            name: _reduce(need, name, _ideal_gains(positive, *spec), spec[4])
            for name, spec in need.ideals.items()
        },
    )
    if expected:
        users = _fix_last_group(
            users, rows, keys, order, relevance, need, length, collected=collect_first
        )
        users = _expected_sums(users, need, length, keys, collected=collect_first)
    else:
        users = _deterministic_sums(users, need)
    users = _prefix_sums(users, need, expected)
    reader = _Reader(need, expected)
    values = [_value(reader, m).alias(m.name) for m in job.metrics]
    return users.select(*keys, *values, _HAS_TRUTH, _HAS_RECS)


def first_stage_engine() -> Literal["auto", "in-memory"]:
    """The Polars engine :func:`per_user` collects its first stage with (in memory).

    ``"in-memory"``, unless the user chose an engine for Polars
    (``pl.Config.set_engine_affinity`` or ``POLARS_ENGINE_AFFINITY``): then that one.
    Measured on 10M rows (benchmarks/RESULTS_HEAD.md): for this ``group_by`` (a sort
    and a head inside the aggregation, implodes) the in-memory engine takes a third of
    the streaming engine's peak memory and ~20% less CPU time. Only the first stage:
    the rest of the plan is small or reads the rows once (the general path, by
    contrast, is ~1.8x slower on the in-memory engine), and collected whole with the
    in-memory engine the head path's peak memory was higher (1.2x the input instead
    of 1.0x under ``ties="expected"``).
    """
    if os.environ.get("POLARS_ENGINE_AFFINITY"):
        return "auto"
    try:  # an engine object given to set_engine_affinity (no public getter)
        from polars.lazyframe.engine_config import get_engine_affinity_override
    except ImportError:  # pragma: no cover - another Polars version
        return "in-memory"
    return "auto" if get_engine_affinity_override() is not None else "in-memory"


def check_counts(job: Job, rows: pl.LazyFrame, users: pl.LazyFrame) -> pl.LazyFrame:
    """The value checks' counts from this path's own aggregation: one row, two counts.

    ``bad``: how many row-level checks of :func:`polars_rankeval.plan.validate.row_checks`
    (null ids, NaN/inf scores, bad relevance, ranks below 1) some row may fail, read
    from data-wide reductions of ``rows`` (:func:`polars_rankeval.plan.validate.row_screen`:
    null counts, NaN-poisoning minima and maxima; no pass of row predicates, no
    column cast); ``dup``: rows beyond the first of each (by, user, item) key, summed
    from the per-user counts of the head aggregation ``users`` (no group_by of its
    own). Both zero: the data passes every check. Otherwise
    :func:`polars_rankeval.plan.validate.check_values` runs on the input and raises the
    first problem with its usual message and examples.
    """
    screen = row_screen(rows.collect_schema(), job.icols, job.iby)
    bad = rows.select(pl.sum_horizontal(screen).cast(pl.Int64).alias("bad"))
    dup = users.select(pl.col(_EXTRA).sum().cast(pl.Int64).alias("dup"))
    return bad.join(dup, how="cross")


def _tie_order(job: Job) -> tuple[list[pl.Expr], list[bool]]:
    """Sort keys and directions of a deterministic policy: the score, then its breaks.

    The score (or rank) itself sorts exactly (``-0.0`` ties with ``0.0``) and its
    nulls, the rows that were not recommended, come last; the tie-break keys are the
    policy's (:attr:`polars_rankeval._utils.ties.Ties.breaks`), as the general path orders
    positions.
    """
    cols = job.icols
    f = Features(cols, job.ties, None, order_dtype=job.order_dtype)
    item = id_order(cols.item)
    keys: dict[str, tuple[pl.Expr, bool]] = {
        "item_desc": (item, True),
        "item_asc": (item, False),
        "relevance_desc": (f.rel, True),
        "relevance_asc": (f.rel, False),
        "judged_first": (~f.judged, False),
    }
    breaks = [keys[key] for key in resolve_ties(job.ties).breaks]
    by = [pl.col(cols.order), *(expr for expr, _ in breaks)]
    return by, [cols.rank is None, *(descending for _, descending in breaks)]


def _ideal_gains(
    positive: pl.Expr,
    gain: str,
    discount: str,
    base: float,
    half_life: float | None,
    cut: int | None,
) -> pl.Expr:
    """The ideal list's discounted gains: positive gains, best first, cut at ``cut``."""
    gains = positive.list.eval(_gain(pl.element(), gain)).list.sort(descending=True)
    if cut is not None:
        gains = gains.list.head(cut)
    return gains * _discounts(gains, discount, base, half_life)


def _reduce(need: _Request, name: str, values: pl.Expr, cut: int | None = 0) -> pl.Expr:
    """Per user: a list of contributions by position, or its sum.

    With one cutoff at the end of the head (or ``cut=None``, the whole list) the sum
    is enough; otherwise the list is kept and summed up to each cutoff
    (:func:`_prefix_sums`).
    """
    if _summed(need, name, cut):
        return values.list.sum()
    return values


def _summed(need: _Request, name: str, cut: int | None = 0) -> bool:
    if cut is None:
        return True
    return need.cutoffs.get(name, set()) <= {need.k} and (cut == 0 or cut >= need.k)


def _sum_at(need: _Request, name: str, k: int, cut: int | None = 0) -> pl.Expr:
    """Quantity ``name`` summed over the positions 1..k."""
    if _summed(need, name, cut):
        return pl.col(name)
    return pl.col(_prefix(name, k))


def _prefix(name: str, k: int) -> str:
    return f"{MARKER}:prefix[{name}@{k}]"


def _prefix_sums(users: pl.LazyFrame, need: _Request, expected: bool) -> pl.LazyFrame:
    """Every list of contributions summed up to each of its cutoffs.

    Per list, the sums over the segments between consecutive cutoffs are put in one
    list and summed cumulatively, once (``cum_sum`` in a ``list.eval``); each cutoff
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
    reads: dict[str, tuple[str, list[int]]] = {}
    for name, cutoffs in need.cutoffs.items():
        cut = need.ideals[name][4] if name in need.ideals else 0
        if _summed(need, name, cut):
            continue
        if not expected and _first_only(need.quantities.get(name)):
            continue
        ks = sorted(cutoffs)
        cumulative[_cumulative(name)] = _segments(pl.col(name), ks).list.eval(
            pl.element().cum_sum() + 0.0
        )
        reads[name] = (_cumulative(name), ks)
    if not cumulative:
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
        for name, (cum, ks) in reads.items()
        for i, k in enumerate(ks)
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


def _deterministic_sums(users: pl.LazyFrame, need: _Request) -> pl.LazyFrame:
    """Each quantity over the head, every position its own tie group (list operations)."""
    # The recommended rows of the head (not-recommended ones sort last), relevance 0
    # for unjudged rows.
    rel = pl.col(_HEAD).list.head(pl.col(_N_RET).cast(pl.Int64))
    rel = rel.list.eval(pl.element().cast(pl.Float64).fill_null(0.0))
    users = users.with_columns(rel.alias(_REL))
    rel = pl.col(_REL)
    # One 0/1 list per threshold (and its running count, when map reads it), shared by
    # every quantity at that threshold.
    users = users.with_columns(
        rel.list.eval((pl.element() >= t).cast(pl.Float64)).alias(_name("is_rel", t))
        for t in need.thresholds
    )
    running = {
        t: pl.col(_name("is_rel", t)).list.eval(pl.element().cum_sum()).alias(_name("hits", t))
        for t in need.ap_thresholds
    }
    users = users.with_columns(running.values())
    columns: dict[str, pl.Expr] = {}
    positions = pl.int_ranges(1, rel.list.len() + 1)
    for name, quantity in need.quantities.items():
        kind = quantity.kind
        if kind == "discounted_gain":
            gain, discount, base, half_life = cast(GainKey, quantity.gain)
            gains = rel.list.eval(_gain(pl.element(), gain))
            discounts = _discounts(rel, discount, base, half_life)
            columns[name] = _reduce(need, name, gains * discounts)
            continue
        t = float(cast(float, quantity.threshold))
        is_rel = pl.col(_name("is_rel", t))
        if kind == "hits":
            columns[name] = _reduce(need, name, is_rel)
        elif kind == "reciprocal_hits":
            columns[name] = _reduce(need, name, is_rel / positions)
        elif kind == "precision_sum":
            hits = pl.col(_name("hits", t))
            columns[name] = _reduce(need, name, is_rel * hits / positions)
        else:  # reciprocal_rank and log_miss: the position of the first relevant item
            columns[_first(t)] = pl.when(is_rel.list.max() > 0).then(is_rel.list.arg_max() + 1)
    return users.with_columns(**columns)


def _first_only(quantity: Quantity | None) -> bool:
    """Whether a deterministic policy reads the quantity from the first relevant position.

    (No list of contributions then.)
    """
    return quantity is not None and quantity.kind in ("reciprocal_rank", "log_miss")


def _first(t: float) -> str:
    return _name("first", t)


def _group_stat(name: str) -> str:
    return f"{MARKER}:fix[{name}]"


def _group_parts(need: _Request, rel: pl.Expr) -> dict[str, pl.Expr]:
    """Sums over a tie group: its size, relevant count per threshold, gain per gain."""
    parts = {"n": pl.len().cast(pl.Float64)}
    for t in need.thresholds:
        parts[f"r:{t}"] = (rel >= t).cast(pl.Float64).sum()
    for gain in need.gains:
        parts[f"g:{gain}"] = _gain(rel, gain).sum()
    return parts


def _fix_last_group(
    users: pl.LazyFrame,
    rows: pl.LazyFrame,
    keys: list[str],
    order: pl.Expr,
    relevance: pl.Expr,
    need: _Request,
    length: int,
    *,
    collected: bool = False,
) -> pl.LazyFrame:
    """Exact sums of the tie group at position K for users whose head it fills.

    The group at K is complete in the head unless it reaches the head's last row;
    for those users its rows are those with its score, counted on all their rows.

    ``collected``: ``users`` is a collected frame (the first stage ran, see
    :func:`per_user`) and ``rows`` a frame in memory. The few users with such a group
    are then found at once: none (the usual case) -- no pass over the rows at all,
    and no columns of exact sums for the head rows to carry; some -- only their rows
    are joined (an ``is_in`` filter on the user column first, so the join never
    hashes every row: on 10M rows that join held ~150 MiB).
    """
    at_k = pl.col(_HEAD).list.get(need.k - 1, null_on_oob=True).struct.field(_KEY)
    at_end = pl.col(_HEAD).list.get(length - 1, null_on_oob=True).struct.field(_KEY)
    rel = relevance.cast(pl.Float64).fill_null(0.0)
    parts = _group_parts(need, rel)
    if collected:
        users = users.with_columns(at_k.alias(_LAST)).collect().lazy()
        found = users.filter(at_end == pl.col(_LAST)).select(*keys, _LAST).collect()
        if not found.height:  # no column of exact sums: the head rows need none
            return users
        user = keys[-1]
        ids = found.get_column(user).unique().implode()
        rows = rows.filter(pl.col(user).is_in(ids, nulls_equal=True))
        open_groups = found.lazy()
    else:
        # Read twice (the open groups, then the join): computed once.
        users = users.with_columns(at_k.alias(_LAST)).cache()
        open_groups = users.filter(at_end == pl.col(_LAST)).select(*keys, _LAST)
    fixed = (
        rows.join(open_groups, on=keys, how="inner", nulls_equal=True)
        .filter(order == pl.col(_LAST))
        .group_by(keys)
        .agg(**{_group_stat(n): e for n, e in parts.items()})
    )
    return users.join(fixed, on=keys, how="left", nulls_equal=True)


def _expected_sums(
    users: pl.LazyFrame, need: _Request, length: int, keys: list[str], *, collected: bool
) -> pl.LazyFrame:
    """Each quantity over the head under ``ties="expected"``, on a frame of head rows.

    The heads are exploded into rows (in head order, user after user) together with
    their positions, and everything is computed with vectorised operations over that
    frame, never per group (a window or ``list.eval`` per user or per tie group costs
    far more than the sort): a tie group is a run of equal keys within a user, its
    first and last row come from forward and backward fills of the row index, integer
    counts within a run from the running count read at both ends (again fills: a
    gather at the run's ends costs more), and sums or products of floats within a run
    from a log-step (Hillis-Steele) scan over the run's offsets. Per-user sums, or lists
    of contributions by position for cutoff lists (summed per cutoff by
    :func:`_prefix_sums`), aggregate on the row-numbered users declared sorted: Polars
    then slices the groups instead of hashing them, and no per-group sort is needed.
    The group at K takes its exact sums from :func:`_fix_last_group` when the head cut
    it; the contributions are the curve kernels'.

    Only the user's keys and row number, its head with the positions, and the exact
    sums of a cut group are exploded (any other per-user column would be copied to
    each of its head rows: with K = 100 the frame has as many rows as the input). The
    group at K that the head cut is the user's last run in a head of full ``length``
    (see :func:`_fix_last_group`): it is recognised from the run's last position. The
    rows are computed in :data:`SPLIT` branches of users, in parallel: the fills and
    running sums are sequential scans. ``collected``: ``users`` reads frames in memory
    (see :func:`per_user`); the branches are then slices of it.
    """
    n_parts = max(1, SPLIT if SPLIT is not None else pl.thread_pool_size())
    users = users.with_row_index(_UID)
    if collected:
        # In memory: the branches are zero-copy slices of consecutive users (a filter
        # would copy their heads).
        frame = users.collect()
        step = max(1, -(-frame.height // n_parts))
        users = frame.lazy()
        starts = range(0, frame.height, step)
        branches = [frame.slice(start, step).lazy() for start in starts] or [users]
    else:
        # Read by every branch and beside their sums: computed once, so that all see
        # the same row numbers (a join above may order its rows differently on each run).
        users = users.cache()
        uid = pl.col(_UID)
        branches = [users.filter(uid % n_parts == part) for part in range(n_parts)]
        if n_parts == 1:
            branches = [users]
    sums = pl.concat([_expected_user_sums(b, need, length, keys) for b in branches])
    # Every numbered user has a row in ``sums`` (a head is never empty: a user's
    # group has a row, and position 1 is within any cutoff), so the sums in row-number
    # order line up with ``users``: placed beside it, not joined (a join gathers every
    # column of ``users``, its heads too).
    sums = sums.sort(_UID).drop(_UID, *keys)
    return pl.concat([users.drop(_HEAD), sums], how="horizontal")


def _expected_user_sums(
    users: pl.LazyFrame, need: _Request, length: int, keys: list[str]
) -> pl.LazyFrame:
    """The per-user sums of :func:`_expected_sums` for some of the numbered users."""
    parts = list(_group_parts(need, pl.lit(0.0)))
    # Users whose group at K the head cut have its exact sums (no such column: none).
    cut = _group_stat("n") in users.collect_schema()
    stats = [_group_stat(name) for name in parts] if cut else []
    positions = pl.int_ranges(1, pl.col(_HEAD).list.len() + 1).alias(_POS)
    rows = users.select(*keys, _UID, _HEAD, positions, *stats).explode([_HEAD, _POS]).unnest(_HEAD)
    row = pl.int_range(pl.len(), dtype=pl.Int64)
    uid, key, pos = pl.col(_UID), pl.col(_KEY), pl.col(_POS)
    value = pl.col(_VALUE).cast(pl.Float64).fill_null(0.0)
    normal = key + 0.0 if need.float_key else key  # -0.0 ties with 0.0
    rows = rows.with_columns(
        normal.alias(_KEY),
        value.alias(_VALUE),
        row.alias(_ROW),
        (normal.ne_missing(normal.shift(1)) | (pos == 1)).alias(_NEW),
    )
    r_ = pl.col(_ROW)
    is_new = pl.col(_NEW)
    is_end = is_new.shift(-1).fill_null(True)
    rows = rows.with_columns(
        pl.when(is_new).then(r_).forward_fill().alias(_FIRST),
        pl.when(is_end).then(r_).backward_fill().alias(_LAST_ROW),
        is_end.alias(_END),
        key.is_not_null().alias(_RET),
    )
    first, last_row, end = pl.col(_FIRST), pl.col(_LAST_ROW), pl.col(_END)

    def at_end(x: pl.Expr) -> pl.Expr:
        """``x`` at the last row of the row's run (a backward fill: no gather)."""
        return pl.when(end).then(x).backward_fill()

    def before(running: pl.Expr, at: pl.Expr) -> pl.Expr:
        """The running sum before the last row where ``at`` held, carried forward."""
        return pl.when(at).then(running.shift(1, fill_value=0)).forward_fill()

    columns: dict[str, pl.Expr] = {
        "n": (last_row - first + 1).cast(pl.Float64),
        "j": (r_ - first),
    }
    for gain in need.gains:
        columns[f"gain:{gain}"] = _gain(pl.col(_VALUE), gain)
    # Integer counts within a run: the running count (exact; a column of its own, read
    # by two or three fills) at the run's end minus the count before its first row,
    # with fills in row order (sequential; a gather at the run's ends costs ~3x). So
    # are the gain sums of linear gains of an integer relevance of at most 32 bits;
    # other gains (floats, gain=exp): a log-step scan over the run, read at its end.
    # ``above``: the relevant rows of the user before the run (map's hits above the
    # group; zero for the first group holding a relevant item, mrr's and hit_rate's).
    above_thresholds = need.ap_thresholds | need.rr_thresholds
    exact = {gain for gain in need.gains if gain == "linear" and need.small_int_relevance}
    counted = {f"r:{t}": (pl.col(_VALUE) >= t).cast(pl.Int64) for t in need.thresholds}
    counted.update({f"g:{gain}": pl.col(_VALUE).cast(pl.Int64) for gain in exact})
    rows = rows.with_columns(x.cum_sum().alias(_running(name)) for name, x in counted.items())
    for name in counted:
        running = pl.col(_running(name))
        columns[name] = (at_end(running) - before(running, is_new)).cast(pl.Float64)
    for t in sorted(above_thresholds):
        running = pl.col(_running(f"r:{t}"))
        above = before(running, is_new) - before(running, pos == 1)
        columns[f"above:{t}"] = above.cast(pl.Float64)
    rows = rows.with_columns(**columns)
    scans = {f"g:{gain}": pl.col(f"gain:{gain}") for gain in need.gains - exact}
    if scans:
        rows = _run_scan(rows.with_columns(**scans), list(scans), length, "sum")
        rows = rows.with_columns(at_end(pl.col(name)) for name in scans)
    # The group at K: its exact sums where the head cut it (the user's last run, which
    # then ends at the head's last position).
    if cut:
        at_k = pl.col(_group_stat("n")).is_not_null() & (pos + (last_row - r_) == length)
        rows = rows.with_columns(
            pl.when(at_k).then(pl.col(_group_stat(name))).otherwise(pl.col(name)).alias(name)
            for name in parts
        )
    # Only what the contributions read from here on: the row order, the fills' helper
    # columns and the cut group's sums are dropped (with K = 100 each column is as long
    # as the input).
    above_names = [f"above:{t}" for t in sorted(above_thresholds)]
    rows = rows.select(*keys, _UID, _POS, _RET, "j", *parts, *above_names)
    n, j = pl.col("n"), pl.col("j")
    ret = pl.col(_RET)
    if need.rr_thresholds:
        factors: dict[str, pl.Expr] = {}
        for t in need.rr_thresholds:
            r = pl.col(f"r:{t}")
            # P(no relevant item at the offsets before the row's), a product over the
            # run: each row carries the previous offset's factor.
            factor = ((n - r - j + 1) / (n - j + 1)).clip(0.0, 1.0)
            factors[f"none_before:{t}"] = pl.when(j > 0).then(factor).otherwise(1.0)
        rows = rows.with_columns(**factors)
        names = [f"none_before:{t}" for t in need.rr_thresholds]
        rows = _run_scan(rows, names, length, "product")
    rows = rows.filter(pos <= need.k)
    p = pos.cast(pl.Float64)
    contributions: dict[str, pl.Expr] = {}
    for name, quantity in need.quantities.items():
        kind = quantity.kind
        if kind == "discounted_gain":
            gain, discount, base, half_life = cast(GainKey, quantity.gain)
            disc = _discount(pos, discount, base, half_life)
            contributions[name] = pl.when(ret).then(pl.col(f"g:{gain}") / n * disc).otherwise(0.0)
            continue
        t = float(cast(float, quantity.threshold))
        r = pl.col(f"r:{t}")
        if kind == "hits":
            contributions[name] = pl.when(ret).then(r / n).otherwise(0.0)
        elif kind == "reciprocal_hits":
            contributions[name] = pl.when(ret).then(r / n / p).otherwise(0.0)
        elif kind == "precision_sum":
            c = pl.when(n > 1).then((r - 1) / (n - 1)).otherwise(0.0)
            ap = r / n * (pl.col(f"above:{t}") + 1 + j * c) / p
            contributions[name] = pl.when(ret & (r > 0)).then(ap).otherwise(0.0)
        elif kind == "log_miss":
            miss = ((n - r - j) / (n - j)).clip(0.0, 1.0)
            contributions[name] = pl.when(ret).then(miss).otherwise(1.0).log()
        else:  # reciprocal_rank
            # The user's first group holding a relevant item: no relevant row above it.
            in_first = ret & (r > 0) & (pl.col(f"above:{t}") == 0)
            p_first = pl.col(f"none_before:{t}") * r / (n - j)
            contributions[name] = pl.when(in_first).then(p_first / p).otherwise(0.0)
    # The rows are in user order (the exploded heads of the numbered users), positions
    # ascending within each user: declared sorted, the group_by slices instead of
    # hashing, and a user's rows reach its aggregation in position order.
    return (
        rows.with_columns(uid.set_sorted())
        .group_by(_UID)
        .agg(
            *(pl.col(key).first() for key in keys),
            *(
                agg
                for name, contrib in contributions.items()
                for agg in _user_sums(need, name, contrib)
            ),
        )
    )


def _running(name: str) -> str:
    return f"{MARKER}:running[{name}]"


def _run_scan(rows: pl.LazyFrame, names: list[str], length: int, how: str) -> pl.LazyFrame:
    """Inclusive sums or products of ``names`` over each run's rows (offsets ``j``).

    Hillis-Steele: after the step of width s every row holds the result over its
    last 2s rows of the run; ceil(log2(length)) steps cover any run of the head.
    """
    if not names:
        return rows
    j = pl.col("j")
    step = 1
    while step < length:
        rows = rows.with_columns(
            pl.when(j >= step)
            .then(
                pl.col(name) + pl.col(name).shift(step)
                if how == "sum"
                else pl.col(name) * pl.col(name).shift(step)
            )
            .otherwise(pl.col(name))
            .alias(name)
            for name in names
        )
        step *= 2
    return rows


def _user_sums(need: _Request, name: str, contrib: pl.Expr) -> list[pl.Expr]:
    """Per user: a quantity's sum (one cutoff at K) or its list by position."""
    if _summed(need, name):
        return [contrib.sum().alias(name)]
    return [contrib.alias(name)]  # rows in position order (see the caller)


def _value(reader: _Reader, metric: Metric) -> pl.Expr:
    """One metric at its cutoff, from its head form."""
    form = metric.spec.head
    if form is None:  # pragma: no cover - applies() admits head forms only
        msg = f"metric {metric.name!r} has no sorted-head form"
        raise ValueError(msg)
    return form.value(reader, dict(metric.options), int(metric.k or 1))
