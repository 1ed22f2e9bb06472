"""Cascade and C/W/L user-model measures: nERR, INST and INSQ.

``err`` (Chapelle et al., 2009) is declared in :mod:`polars_rankeval.metrics.graded`;
this module adds its normalised form and two adaptive measures of the C/W/L framework
(Moffat, Bailey, Scholer & Thomas, 2017): a user reads the ranking from the top and
goes on from rank i to rank i + 1 with probability ``C(i)``; the weight of rank i is
``W(i) = prod_{j < i} C(j) / sum_{i'} prod_{j < i'} C(j)``, and the measure is the
expected rate of gain ``sum_i W(i) * g_i``, in [0, 1] for gains in [0, 1].

* ``inst``: ``C(i) = ((i + T + T_i - 1) / (i + T + T_i))**2`` with ``T_i = T - sum_{j <= i}
  g_j``, the gain still wanted after rank i: the user who set out to find ``T`` units of
  gain is more likely to stop once they have it.
* ``insq``: ``C(i) = ((i + 2T - 1) / (i + 2T))**2``, INST without the adaptation (Moffat,
  Scholer & Thomas, 2012); its weights depend on the rank only.

The ranking is read as infinite, the ranks past the end of the list (or past ``@k``)
having gain 0. ``depth=None`` (default) sums the weights over all of those ranks: the
tail has a closed form through the Hurwitz zeta function ``zeta(2, x)`` (computed here
to ~1e-14 by 10 steps of its recurrence and its asymptotic series). ``depth=D`` ends
the user model at rank D, as ``cwl_eval`` does (its ``-n``, 1000 by default): the
weights are normalised over ranks 1..D. The gain of an item is its relevance over the
grade scale, ``clip(rel, 0, max_grade) / max_grade``; ``max_grade`` defaults, as for
``err``, to the highest relevance of the whole input.

Ties: ``insq`` has the exact expectation over tied orderings (each gain times the mean
of its tie group's weights). ``nerr`` and ``inst`` multiply over the ranks above (the
probability of reaching a rank, the gain found so far), so their expectation over a tie
group's orderings is a sum over its subsets: they require a deterministic tie policy.
"""

from __future__ import annotations

import math
from typing import Annotated

import polars as pl

from polars_rankeval.metrics._common import defined_if, f64
from polars_rankeval.metrics.features import Features
from polars_rankeval.metrics.graded import MaxGrade
from polars_rankeval.metrics.params import Interval
from polars_rankeval.metrics.registry import register
from polars_rankeval.metrics.spec import Public

FAMILY = "cascade"
Target = Annotated[
    float,
    Interval(0, 1e6, closed="right"),
    "T: the gain the user expects to need (relevant items, for binary relevance)",
]
Depth = Annotated[
    int | None,
    Interval(1, None),
    "last rank of the user model (cwl_eval's -n, 1000 by default); none: no end",
]
_ZETA_STEPS = 10
_DIRECT_DEPTH = 100_000
# Bernoulli numbers B_2 .. B_10 of the asymptotic series of zeta(2, y).
_BERNOULLI = (1.0 / 6.0, -1.0 / 30.0, 1.0 / 42.0, -1.0 / 30.0, 5.0 / 66.0)


def hurwitz_zeta2(x: pl.Expr) -> pl.Expr:
    """``zeta(2, x) = sum_{n >= 0} 1 / (x + n)**2`` for ``x > 0``, as an expression.

    ``zeta(2, x) = sum_{n < 10} 1 / (x + n)**2 + zeta(2, x + 10)`` and, for ``y >= 10``,
    ``zeta(2, y) ~ 1/y + 1/(2 y**2) + sum_j B_2j / y**(2j + 1)`` (Euler-Maclaurin;
    the first omitted term is below 3e-14).
    """
    x = f64(x)
    head = pl.sum_horizontal(*(1.0 / (x + float(n)) ** 2 for n in range(_ZETA_STEPS)))
    y = x + float(_ZETA_STEPS)
    tail = 1.0 / y + 0.5 / y**2
    for j, b in enumerate(_BERNOULLI, start=1):
        tail = tail + b / y ** (2 * j + 1)
    return head + tail


def _grade_scale(f: Features, max_grade: float | None) -> float:
    top = f.rating_range[1] if max_grade is None else max_grade
    return max(float(top), 0.0)


def _gain(f: Features, k: int | None, max_grade: float | None) -> pl.Expr:
    """``clip(rel, 0, max_grade) / max_grade`` on the recommended rows within ``@k``."""
    top = _grade_scale(f, max_grade)
    within = f.ret if k is None else f.ret & (f.o <= k)
    if top <= 0.0:
        return pl.lit(0.0)
    return pl.when(within).then(f.rel.clip(0.0, top) / top).otherwise(0.0)


def _stop(f: Features, top: float, grade: pl.Expr) -> pl.Expr:
    """ERR's satisfaction probability ``(2**g - 1) / 2**max_grade`` of a grade."""
    return (2.0 ** grade.clip(0.0, top) - 1.0) / 2.0**top


def _err_of(stop: pl.Expr, position: pl.Expr) -> pl.Expr:
    """ERR of satisfaction probabilities given in rank order, with their positions."""
    reach = (1.0 - stop).cum_prod().shift(1, fill_value=1.0)
    return (stop * reach / f64(position)).sum()


# --------------------------------------------------------------------------- nERR
@register(
    "nerr",
    needs=("rating_range",),
    needs_met_by=("max_grade",),
    defined="truth",
    family=FAMILY,
    ties_require=("deterministic",),
    public=Public(required=("max_grade",)),
    summary="ERR@k over the ERR@k of the ideal ordering.",
    definition=(
        "err@k / the err@k of the user's judged items (recommended or not) ordered by "
        "grade, best first (Chapelle et al., 2009: R = (2**g - 1) / 2**max_grade, the "
        "grade clipped to [0, max_grade], max_grade by default the highest relevance of "
        "the whole input). In [0, 1]; 1 for an ideal top k. Null when the user has no "
        "item of positive grade. Deterministic tie policies only."
    ),
    doc="""
    Normalised expected reciprocal rank at k.

    ERR (see :func:`err`) divided by the ERR of the ideal ordering of the user's judged
    items (by grade, best first, cut at k), so that an ideal list scores 1 whatever the
    number and grades of the user's relevant items. The grade scale ``max_grade`` is
    required here; :func:`polars_rankeval.evaluate` takes it from the whole input when
    it is not given (``nerr@10``).

    Examples
    --------
    Grades 0, 2, 1 ranked in that order on a 0..2 scale: R = 0, 3/4, 1/4. The ideal
    order is 2, 1, 0.

    >>> import polars as pl
    >>> import polars_rankeval as prk
    >>> df = pl.DataFrame({"user": [1] * 3, "item": list("ABC"),
    ...                    "score": [3.0, 2.0, 1.0], "relevance": [0, 2, 1]})
    >>> value = df.select(prk.nerr(max_grade=2)).item()
    >>> err = 1 / 2 * 3 / 4 + 1 / 3 * 1 / 4 * (1 / 4)
    >>> ideal = 3 / 4 + 1 / 2 * 1 / 4 * (1 / 4)
    >>> abs(value - err / ideal) < 1e-15
    True
    """,
)
def _nerr(f: Features, k: int | None, *, max_grade: MaxGrade = None) -> pl.Expr:
    top = _grade_scale(f, max_grade)
    if top <= 0.0:
        return pl.lit(None, dtype=pl.Float64)
    within = f.ret if k is None else f.ret & (f.o <= k)
    stop = _stop(f, top, f.rel)
    position = pl.int_range(1, pl.len() + 1, dtype=pl.Int64)  # f.o sorted: 1..m
    err = _err_of(pl.when(within).then(stop).otherwise(0.0).sort_by(f.o), position)
    ideal_order = stop.sort(descending=True)
    if k is not None:
        ideal_order = pl.when(position <= k).then(ideal_order).otherwise(0.0)
    ideal = _err_of(ideal_order, position)
    return defined_if(ideal > 0, err / ideal)


# --------------------------------------------------------------------------- INST
@register(
    "inst",
    needs=("rating_range",),
    needs_met_by=("max_grade",),
    defined="always",
    family=FAMILY,
    normalized=False,
    bounds=(0.0, 1.0),
    ties_require=("deterministic",),
    public=Public(required=("max_grade",)),
    summary="INST: the adaptive C/W/L measure with target T (Moffat et al., 2017).",
    definition=(
        "sum over ranks i of W(i) * g_i, W(i) proportional to the product over j < i of "
        "C(j) = ((j + T + T_j - 1) / (j + T + T_j))**2, T_j = T - (gain of ranks 1..j); "
        "g = clip(rel, 0, max_grade) / max_grade (max_grade by default the highest "
        "relevance of the whole input); ranks past the list or @k have gain 0 and the "
        "weights are normalised over every rank (depth=none: the tail in closed form) or "
        "ranks 1..depth (cwl_eval: depth=1000). In [0, 1]; 0 when nothing relevant is "
        "recommended. Deterministic tie policies only."
    ),
    doc="""
    INST: the adaptive C/W/L measure (Moffat, Bailey, Scholer & Thomas, 2017).

    A user who expects to need ``T`` units of gain reads on from rank i with
    probability ``C(i) = ((i + T + T_i - 1) / (i + T + T_i))**2``, where ``T_i`` is the
    gain still missing after rank i; INST is the expected rate of gain per item read,
    ``sum_i W(i) * g_i`` with ``W`` proportional to the chance of reaching rank i.
    The ranking is read as going on with gain 0 past its end (or past ``@k``);
    ``depth`` ends the model at that rank, as ``cwl_eval`` does (``depth=1000``).
    The grade scale ``max_grade`` is required here; :func:`polars_rankeval.evaluate`
    takes it from the whole input when it is not given (``inst@10``).

    Examples
    --------
    One relevant item at rank 1 and the model ended at rank 2, T = 1: C(1) = ((1 + 1 +
    0 - 1) / (1 + 1 + 0))**2 = 1/4, so W(1) = 1 / (1 + 1/4) = 4/5.

    >>> import polars as pl
    >>> import polars_rankeval as prk
    >>> df = pl.DataFrame({"user": [1] * 2, "item": list("AB"),
    ...                    "score": [2.0, 1.0], "relevance": [1, 0]})
    >>> df.select(prk.inst(max_grade=1, depth=2)).item()
    0.8
    """,
)
def _inst(
    f: Features,
    k: int | None,
    *,
    target: Target = 1.0,
    max_grade: MaxGrade = None,
    depth: Depth = None,
) -> pl.Expr:
    gain = _gain(f, k, max_grade).sort_by(f.o)
    # f.o numbers every row of the user 1..m: in that order the ranks are 1..m.
    rank = f64(pl.int_range(1, pl.len() + 1, dtype=pl.Int64))
    found = gain.cum_sum()
    wanted = 2.0 * target - found  # T + T_i
    cont = ((rank + wanted - 1.0) / (rank + wanted)) ** 2
    reach = cont.cum_prod().shift(1, fill_value=1.0)  # prod_{j < i} C(j)
    if depth is not None:
        reach = pl.when(rank <= depth).then(reach).otherwise(0.0)
    # Past the user's rows the gain is 0: C(i) = ((i + a - 1) / (i + a))**2 with
    # a = 2T - (all gain), so prod_{j < i} C(j) = reach(m + 1) * ((m + a) / (i - 1 + a))**2
    # and the tail sums to reach(m + 1) * (m + a)**2 * (zeta(2, m + a) - zeta(2, depth + a)).
    m = f64(pl.len())
    a = 2.0 * target - gain.sum()
    after = cont.product() * (m + a) ** 2
    tail = hurwitz_zeta2(m + a)
    if depth is not None:
        tail = pl.when(m < depth).then(tail - hurwitz_zeta2(depth + a)).otherwise(0.0)
    total = reach.sum() + after * tail
    return (reach * gain).sum() / total


# --------------------------------------------------------------------------- INSQ
def _insq_weight(target: float) -> float:
    return 2.0 * target


@register(
    "insq",
    needs=("rating_range",),
    needs_met_by=("max_grade",),
    defined="always",
    family=FAMILY,
    normalized=False,
    bounds=(0.0, 1.0),
    public=Public(required=("max_grade",)),
    summary="INSQ: the C/W/L measure with target T, not adaptive (Moffat et al., 2012).",
    definition=(
        "sum over ranks i of W(i) * g_i, W(i) proportional to (2T / (i - 1 + 2T))**2, the "
        "product over j < i of C(j) = ((j + 2T - 1) / (j + 2T))**2; g = clip(rel, 0, "
        "max_grade) / max_grade; ranks past the list or @k have gain 0; the weights are "
        "normalised over every rank ((2T)**2 * zeta(2, 2T)) or over ranks 1..depth "
        "(cwl_eval: depth=1000). In [0, 1]. Expected ties: each gain times the mean "
        "weight of its tie group's ranks."
    ),
    doc="""
    INSQ: the C/W/L measure of Moffat, Scholer & Thomas (2012), INST's predecessor.

    The user goes on from rank i with probability ``C(i) = ((i + 2T - 1) / (i + 2T))**2``,
    whatever they found: the weight of rank i is ``(2T / (i - 1 + 2T))**2`` over the sum
    of those weights, over every rank (``depth=None``) or ranks 1..depth.

    Examples
    --------
    T = 1, a relevant item at rank 2, the model ended at rank 2: weights 1 and (2/3)**2.

    >>> import polars as pl
    >>> import polars_rankeval as prk
    >>> df = pl.DataFrame({"user": [1] * 2, "item": list("AB"),
    ...                    "score": [2.0, 1.0], "relevance": [0, 1]})
    >>> value = df.select(prk.insq(max_grade=1, depth=2)).item()
    >>> abs(value - (4 / 9) / (1 + 4 / 9)) < 1e-15
    True
    """,
)
def _insq(
    f: Features,
    k: int | None,
    *,
    target: Target = 1.0,
    max_grade: MaxGrade = None,
    depth: Depth = None,
) -> pl.Expr:
    two_t = _insq_weight(target)
    cut: int | None = k if depth is None else (depth if k is None else min(k, depth))

    def weight(pos: pl.Expr) -> pl.Expr:
        return (two_t / (f64(pos) - 1.0 + two_t)) ** 2

    w = f.gmean_pos(weight, cut, f"insq:{target}")
    gain = _gain(f, None, max_grade)
    if depth is None:
        norm = two_t**2 * _zeta2_value(two_t)
    elif depth <= _DIRECT_DEPTH:  # the weights of ranks 1..depth, summed exactly
        norm = math.fsum((two_t / (i - 1.0 + two_t)) ** 2 for i in range(1, depth + 1))
    else:
        norm = two_t**2 * (_zeta2_value(two_t) - _zeta2_value(depth + two_t))
    return (gain * w).sum() / norm


def _zeta2_value(x: float) -> float:
    """``zeta(2, x)`` for a number (the same series as :func:`hurwitz_zeta2`)."""
    head = sum(1.0 / (x + n) ** 2 for n in range(_ZETA_STEPS))
    y = x + _ZETA_STEPS
    tail = 1.0 / y + 0.5 / y**2
    for j, b in enumerate(_BERNOULLI, start=1):
        tail += b / y ** (2 * j + 1)
    return head + tail
