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
   #recommended) and the positive relevances (the ideal gains: sorted, or with an
   integer relevance of few grades counted per grade, :func:`_ideal_from_grades`);
2. each position's contribution to each quantity the metrics read
   (:class:`~polars_rankeval.metrics.head_form.Quantity`), computed with the formulas
   of the curve kernels (:mod:`polars_rankeval.metrics.cutoff_kernels`) over every
   user's head at once (:mod:`~polars_rankeval.plan.head_sums`: a short head as
   per-position Arrays or columns, a deep one as lists or a frame of head rows), per
   user either summed or summed up to every cutoff (one cumulative list per user, read
   once per cutoff: 100 cutoffs cost 100 vectorised reads of the users' lists, not 100
   passes over the rows).

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
:data:`~polars_rankeval.plan.head_request.MARKER`, which is how tests check from the
plan that the path is taken.

This module holds the decision (:func:`applies`), step 1 (:func:`per_user`: the head
aggregation, with the checks folded into it, :func:`check_counts`) and the metrics'
values; :mod:`~polars_rankeval.plan.head_request` what the metrics read and the column
names, :mod:`~polars_rankeval.plan.head_sums` step 2 and
:mod:`~polars_rankeval.plan.head_cumulative` the reading at each cutoff.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Literal

import polars as pl

from polars_rankeval._utils.ties import id_order, resolve_ties
from polars_rankeval.metrics._common import gain_value
from polars_rankeval.metrics.features import Features, order_kind
from polars_rankeval.metrics.head_expression import applicable_form
from polars_rankeval.plan.head_cumulative import Sums, _prefix_sums, _Reader
from polars_rankeval.plan.head_request import (
    _EXTRA,
    _HEAD,
    _KEY,
    _N_JUDGED,
    _N_RET,
    _POSITIVE,
    _VALUE,
    LISTS,
    _discount,
    _name,
    _Positions,
    _reduce,
    _Request,
    _summed,
)
from polars_rankeval.plan.head_sums import (
    _deterministic_sums,
    _expected_sums,
    _fix_last_group,
)
from polars_rankeval.plan.job import HAS_RECS as _HAS_RECS
from polars_rankeval.plan.job import HAS_TRUTH as _HAS_TRUTH
from polars_rankeval.plan.validate import row_screen

if TYPE_CHECKING:
    from polars_rankeval.metrics.spec import Metric
    from polars_rankeval.plan.job import Job

TIE_MARGIN = 3
"""Extra head rows under ``ties="expected"``, so that the tie group at K usually ends
inside the head (see the module docstring); a larger group is counted exactly."""

ENABLED = True
"""Switch for tests and benchmarks: ``False`` sends every job to the general path."""

MAX_GRADES = 16
"""Integer relevance up to this grade: an ideal DCG summed at one cutoff is read from
the count of positive items per grade, with no sort (:func:`_ideal_from_grades`)."""


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
        applicable_form(m) is not None and job.kinds.get(m.name) == "expr" for m in job.metrics
    )


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
        _N_RET: order.count(),
        _N_JUDGED: relevance.count(),
        # The positive relevances (few): #relevant per threshold and the ideal gains
        # (measured: cheaper than a sum per threshold in this aggregation).
        _POSITIVE: relevance.filter(relevance > 0),
    }
    if checks is not None:
        # The duplicate-key check on the same groups: rows minus distinct items.
        aggs[_EXTRA] = (pl.len() - pl.col(cols.item).n_unique()).cast(pl.Int64)
    users = rows.group_by(keys).agg(**aggs)
    grades = None
    if collect_first:
        users = users.collect(engine=first_stage_engine()).lazy()
        grades = _top_grade(users, need)
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
            name: _ideal_gains(need, name, positive, *spec, grades=grades)
            for name, spec in need.ideals.items()
        },
    ).drop(_POSITIVE)
    sums: Sums = "lists"  # what step 2 gives for a quantity read at several cutoffs
    if expected:
        users = _fix_last_group(
            users, rows, keys, order, relevance, need, length, collected=collect_first
        )
        users, sums = _expected_sums(users, need, length, keys, collected=collect_first)
    else:
        users = _deterministic_sums(users, need)
    users = _prefix_sums(users, need, expected, quantities=sums)
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
    need: _Request,
    name: str,
    positive: pl.Expr,
    gain: str,
    discount: str,
    base: float,
    half_life: float | None,
    cut: int | None,
    *,
    grades: int | None = None,
) -> pl.Expr:
    """The ideal list's discounted gains (their sum, or the list of them by position).

    The positive gains, best first, cut at ``cut`` (``None``, ``idcg="all"``: all of
    them). Summed at a cut of few positions they are an Array of ``cut``
    (:class:`~polars_rankeval.plan.head_request._Positions`); a list read at several
    cutoffs stays as long as the user's positive items (padded to the cut, most
    users' few positives would be many zeros). ``grades``: the relevance is integer
    with no grade above it (:func:`_top_grade`); the sum at one cut is then read from
    counts per grade (:func:`_ideal_from_grades`).
    """
    if grades is not None and cut is not None and _summed(need, name, cut):
        return _ideal_from_grades(positive, grades, gain, discount, base, half_life, cut)
    gains = positive.list.eval(gain_value(pl.element(), gain)).list.sort(descending=True)
    form = LISTS
    if cut is not None:
        gains = gains.list.head(cut)
        if _summed(need, name, cut):
            form = _Positions(cut)
    gains = form.of(gains)
    ideal = gains * form.at_positions(gains, _discount(pl.element(), discount, base, half_life))
    return _reduce(need, name, form.map(ideal, pl.element().fill_null(0.0)), cut, form=form)


def _top_grade(users: pl.LazyFrame, need: _Request) -> int | None:
    """The highest positive grade of an integer relevance, if at most :data:`MAX_GRADES`.

    ``users``: the first stage, collected (a small frame: one list of positive
    relevances per user); ``None`` for another relevance type or higher grades.
    """
    if not need.ideals or not need.integer_relevance:
        return None
    top = users.select(pl.col(_POSITIVE).list.max().max()).collect().item()
    grade = int(top or 0)  # None: no positive item at all
    return grade if grade <= MAX_GRADES else None


def _ideal_from_grades(
    positive: pl.Expr,
    grades: int,
    gain: str,
    discount: str,
    base: float,
    half_life: float | None,
    cut: int,
) -> pl.Expr:
    """The ideal DCG at ``cut`` of integer grades 1..``grades``, from counts per grade.

    Best first, the items of grade >= g hold the first c_g positions (c_g: their
    count), and each gain is a sum of steps, ``gain(r) = sum over g <= r of
    (gain(g) - gain(g - 1))`` (``gain(0) = 0``; both gains increase with the grade). So
    the ideal DCG is ``sum over g of (gain(g) - gain(g - 1)) * D(min(c_g, cut))``, D(m)
    the sum of the first m discounts: one count and one lookup per grade, where the
    sorted form sorts every user's positive gains (measured on 10M rows, 100k users:
    3 ms against 45 ms).
    """
    discounts = _discount(pl.int_range(1, cut + 1), discount, base, half_life)
    prefix = pl.select(discounts.cum_sum()).to_series()
    table = pl.lit(pl.concat([pl.Series([0.0]), prefix]))  # D(0..cut)
    terms = []
    for g in range(1, grades + 1):
        step = gain_value(pl.lit(float(g)), gain) - gain_value(pl.lit(float(g - 1)), gain)
        count = positive.list.eval(pl.element() >= g).list.sum()
        terms.append(step * table.gather(pl.min_horizontal(count, cut)))
    return pl.sum_horizontal(terms) if terms else pl.lit(0.0)


def _value(reader: _Reader, metric: Metric) -> pl.Expr:
    """One metric at its cutoff, from its head form."""
    form = metric.spec.head
    if form is None:  # pragma: no cover - applies() admits head forms only
        msg = f"metric {metric.name!r} has no sorted-head form"
        raise ValueError(msg)
    return form.value(reader, dict(metric.options), int(metric.k or 1))
