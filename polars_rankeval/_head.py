"""The sorted-head path of ``evaluate``: sort each user's rows once, read the top.

The general path (:class:`~polars_rankeval._features.Features`, window provider)
materialises positions, tie groups and per-user totals as window columns over every
row, then reduces them with one ``group_by``. For the cutoff metrics of the binary and
graded core (precision, recall, f1, hit_rate, mrr, map, dcg and ndcg at a cutoff, and
their cutoff lists and ranges) most of that work is wasted: a metric at cutoff k only
reads the positions 1..k. This path instead runs

1. **one** ``group_by(by + user).agg(...)`` over the rows, holding per user: the head of
   the list sorted by the tie policy's order (Polars sorts inside the aggregation and
   stops at the head, a partial sort), the user's totals (#relevant per threshold,
   #recommended) and the ideal gains (a top-k by gain among the positive gains);
2. a small frame of the head rows (users x K rows, K the largest cutoff) on which each
   position's contribution is computed with the formulas of the curve kernels
   (:mod:`polars_rankeval.metrics.curves`), summed cumulatively per user, and read at
   every cutoff.

Ties. Under a deterministic policy the sort itself breaks ties (:data:`TIE_ORDER`) and
every position is its own tie group. Under ``ties="expected"`` the head is sorted by
the score alone and its tie groups are read from it; only the group holding position K
may extend beyond the head. The head is therefore ``K + margin`` rows long: when the
group at K ends inside it, every group that touches a position <= K is complete. For
the few users whose group at K fills the whole margin, that one group's size, relevant
counts and gain sums are counted exactly on the user's rows with the group's score (a
join restricted to those users; empty on most data).

The values equal those of the general path up to floating-point rounding (sums run in
another order); ``tests/test_head_path.py`` pins them for every metric, option, tie
policy and cutoff form. :func:`applies` decides, from the job alone, whether every
requested metric can be evaluated here; otherwise the general path runs (a job is
never split between the two). Every column of this path is named with the prefix
:data:`MARKER`, which is how tests check from the plan that the path is taken.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import polars as pl

from polars_rankeval._features import Features, comb_ratio, order_kind

if TYPE_CHECKING:
    from polars_rankeval._plan import Job

HEAD_METRICS = frozenset({"precision", "recall", "f1", "hit_rate", "mrr", "map", "dcg", "ndcg"})
"""The metrics this path evaluates (each at a cutoff: ``@k``, a list or a range)."""
MARKER = "__prk_head"
"""Prefix of every column this path adds: visible in ``LazyFrame.explain()``."""
TIE_MARGIN = 6
"""Extra head rows under ``ties="expected"``, so that the tie group at K usually ends
inside the head (see the module docstring); a larger group is counted exactly."""

ENABLED = True
"""Switch for tests and benchmarks: ``False`` sends every job to the general path."""

_UID = f"{MARKER}:uid"
_HEAD = f"{MARKER}:head"
_POS = f"{MARKER}:pos"
_VALUE = f"{MARKER}:value"
_KEY = f"{MARKER}:key"
_LAST = f"{MARKER}:last"


def applies(job: Job) -> bool:
    """True when every metric of ``job`` is evaluated by this path.

    That is: each is one of :data:`HEAD_METRICS` with a cutoff ``k >= 1`` (metrics
    without ``@k`` read the whole list and stay on the general path), the score/rank
    column's order is exact without a window (:func:`order_kind` ``f64`` or ``i128``),
    and no metric reads an extra column.
    """
    if not ENABLED or job.extra or order_kind(job.order_dtype) == "dense":
        return False
    return all(
        m.spec.name in HEAD_METRICS
        and m.k is not None
        and m.k >= 1
        and job.kinds.get(m.name) == "expr"
        for m in job.metrics
    )


def _name(*parts: Any) -> str:
    return f"{MARKER}[{':'.join(str(p) for p in parts)}]"


def _gain(rel: pl.Expr, gain: str) -> pl.Expr:
    return rel if gain == "linear" else 2.0**rel - 1.0


def _discount(p: pl.Expr, discount: str, base: float, half_life: float | None) -> pl.Expr:
    """The discount of position ``p``, as the graded kernels define it."""
    # Imported here: the metrics package imports evaluate, which imports this module.
    from polars_rankeval.metrics.graded import _discount as discount_of

    return discount_of(p, discount, base, half_life)  # type: ignore[arg-type]


def _sum_at(need: _Request, name: str, k: int) -> pl.Expr:
    """Quantity ``name`` summed over the positions 1..k (see :func:`_sums`)."""
    if len(need.cutoffs[name]) > MAX_SUMS:
        return _at(name, k)
    return pl.col(f"{name}@{k}")


def _at(name: str, k: int, empty: float = 0.0) -> pl.Expr:
    """The cumulative list ``name`` at position k (its last value beyond its end)."""
    values = pl.col(name)
    size = values.list.len()
    index = pl.min_horizontal(pl.lit(min(k, 2**32 - 1), dtype=pl.UInt32), size) - 1
    return pl.when(size > 0).then(values.list.get(index, null_on_oob=True)).otherwise(empty)


class _Request:
    """What the requested metrics need: thresholds, gains, discounts and cutoffs."""

    def __init__(self, job: Job) -> None:
        self.thresholds: dict[float, None] = {}
        self.quantities: dict[str, tuple[Any, ...]] = {}
        self.cutoffs: dict[str, set[int]] = {}
        self.ideals: dict[str, tuple[str, str, float, float | None, int | None]] = {}
        self.n_ret = False
        self.k = 1
        for metric in job.metrics:
            options = dict(metric.options)
            k = int(metric.k or 1)
            self.k = max(self.k, k)
            name = metric.spec.name
            if name in ("dcg", "ndcg"):
                disc = (options["gain"], options["discount"], options["base"])
                key = (*disc, options["half_life"])
                self.quantities[_name("dcg", *key)] = ("dcg", *key)
                self.cutoffs.setdefault(_name("dcg", *key), set()).add(k)
                if name == "ndcg":
                    ideal = _name("idcg", *key)
                    cut = k if options["idcg"] == "cut" else None
                    old = self.ideals.get(ideal)
                    if old is not None:
                        cut = None if old[4] is None or cut is None else max(old[4], cut)
                    self.ideals[ideal] = (*key, cut)
                continue
            rel = float(options["rel"])
            self.thresholds[rel] = None
            if options.get("denominator") == "retrieved":
                self.n_ret = True
            kind = {"mrr": "rr", "map": "ap", "hit_rate": "logmiss"}.get(name, "hits")
            self.quantities[_name(kind, rel)] = (kind, rel)
            self.cutoffs.setdefault(_name(kind, rel), set()).add(k)


def per_user(job: Job, rows: pl.LazyFrame) -> pl.LazyFrame:
    """Per-user values of every metric of ``job`` (and the truth/recs flags).

    ``rows`` holds whole users with the plan's column names (see
    :func:`polars_rankeval._plan.internal_names`). Returns one row per user with the
    key columns, one Float64 column per metric and the two boolean flags the user
    universe is decided on (named as :meth:`polars_rankeval._plan.Job.build` names
    them).
    """
    from polars_rankeval._plan import _HAS_RECS, _HAS_TRUTH

    cols, keys = job.icols, job.ikeys
    need = _Request(job)
    f = Features(cols, job.ties, None, order_dtype=job.order_dtype)
    key, rel, ret = f.key, f.rel, f.ret
    expected = job.ties == "expected"
    length = need.k + TIE_MARGIN if expected else need.k
    value = pl.when(ret).then(rel)
    if expected:
        head = pl.struct(value.alias(_VALUE), key.alias(_KEY)).sort_by(key, descending=True)
    else:
        by, descending = _tie_order(job, f)
        head = value.sort_by(by, descending=descending)
    totals: dict[str, pl.Expr] = {_HEAD: head.head(length)}
    for t in need.thresholds:
        totals[_name("n_rel", t)] = (rel >= t).cast(pl.Float64).sum()
    if need.n_ret:
        totals[_name("n_ret")] = ret.cast(pl.Float64).sum()
    for ideal, (gain, _, _, _, cut) in need.ideals.items():
        g = _gain(rel, gain)
        top = g.filter(g > 0).sort(descending=True)
        totals[ideal] = top if cut is None else top.head(cut)
    totals[_HAS_TRUTH] = pl.col(cols.relevance).is_not_null().any()
    totals[_HAS_RECS] = pl.col(cols.order).is_not_null().any()
    users = rows.group_by(keys).agg(**totals)
    if expected:
        users = _fix_last_group(users, rows, keys, key, rel, need, length)
    users = users.with_row_index(_UID)
    heads = _head_rows(users, need, expected)
    contributions = _contributions(heads, need, expected)
    sums = heads.group_by(_UID).agg(_sums(need, contributions))
    users = users.join(sums, on=_UID, how="left")
    users = users.with_columns(
        pl.col(ideal).list.eval(
            (pl.element() * _discount(pl.int_range(1, pl.len() + 1), *rest[1:4])).cum_sum()
        )
        for ideal, rest in need.ideals.items()
    )
    values = [_value(need, m.spec.name, dict(m.options), int(m.k or 1)).alias(m.name) for m in job.metrics]
    return users.select(*keys, *values, _HAS_TRUTH, _HAS_RECS)


MAX_SUMS = 4
"""Up to this many cutoffs of one quantity are masked sums; more, a cumulative list."""


def _sums(need: _Request, contributions: dict[str, pl.Expr]) -> list[pl.Expr]:
    """Per user: each quantity summed up to each of its cutoffs (rows are in order)."""
    out = []
    for name, contrib in contributions.items():
        ks = sorted(need.cutoffs[name])
        if len(ks) > MAX_SUMS:
            out.append(contrib.cum_sum().alias(name))
            continue
        for k in ks:
            inside = contrib if k >= need.k else contrib.filter(pl.col(_POS) <= k)
            out.append(inside.sum().alias(f"{name}@{k}"))
    return out


def _tie_order(job: Job, f: Features) -> tuple[list[pl.Expr], list[bool]]:
    """Sort keys and directions of a deterministic policy (as :data:`TIE_ORDER`)."""
    item = pl.col(job.icols.item)
    if job.ties == "item_desc":
        return [f.key, item], [True, True]
    if job.ties == "item_asc":
        return [f.key, item], [True, False]
    optimistic = job.ties == "optimistic"
    return [f.key, f.rel, ~f.judged, item], [True, optimistic, False, False]


def _group_stat(name: str) -> str:
    return f"{MARKER}:fix[{name}]"


def _group_parts(need: _Request, rel: pl.Expr) -> dict[str, pl.Expr]:
    """Sums over a tie group: its size, relevant count per threshold, gain per gain."""
    parts = {"n": pl.len().cast(pl.Float64)}
    for t in need.thresholds:
        parts[f"r:{t}"] = (rel >= t).cast(pl.Float64).sum()
    for gain in {q[1] for q in need.quantities.values() if q[0] == "dcg"}:
        parts[f"g:{gain}"] = _gain(rel, gain).sum()
    return parts


def _fix_last_group(
    users: pl.LazyFrame,
    rows: pl.LazyFrame,
    keys: list[str],
    key: pl.Expr,
    rel: pl.Expr,
    need: _Request,
    length: int,
) -> pl.LazyFrame:
    """Exact sums of the tie group at position K for users whose head it fills.

    The group at K is complete in the head unless it reaches the head's last row;
    for those users its rows are those with its score, counted on all their rows.
    """
    at_k = pl.col(_HEAD).list.get(need.k - 1, null_on_oob=True).struct.field(_KEY)
    at_end = pl.col(_HEAD).list.get(length - 1, null_on_oob=True).struct.field(_KEY)
    users = users.with_columns(at_k.alias(_LAST))
    open_groups = users.filter(at_end == pl.col(_LAST)).select(*keys, _LAST)
    parts = _group_parts(need, rel)
    fixed = (
        rows.join(open_groups, on=keys, how="inner", nulls_equal=True)
        .filter(key == pl.col(_LAST))
        .group_by(keys)
        .agg(**{_group_stat(n): e for n, e in parts.items()})
    )
    return users.join(fixed, on=keys, how="left", nulls_equal=True)


def _head_rows(users: pl.LazyFrame, need: _Request, expected: bool) -> pl.LazyFrame:
    """One row per head position with the row's tie-group sums (``n``, ``r:t``, ``g:gain``)."""
    head = pl.col(_HEAD)
    carried = [_LAST, *(_group_stat(n) for n in _group_parts(need, pl.lit(0.0)))] if expected else []
    rows = users.select(
        _UID, head, pl.int_ranges(1, head.list.len() + 1).alias(_POS), *carried
    ).explode([_HEAD, _POS])
    if expected:
        rows = rows.unnest(_HEAD)
    else:
        rows = rows.rename({_HEAD: _VALUE})
    rel = pl.col(_VALUE).fill_null(0.0)
    columns: dict[str, pl.Expr] = {}
    for t in need.thresholds:
        columns[f"is_rel:{t}"] = (rel >= t).cast(pl.Float64)
    for gain in {q[1] for q in need.quantities.values() if q[0] == "dcg"}:
        columns[f"gain:{gain}"] = _gain(rel, gain)
    rows = rows.with_columns(**columns)
    if not expected:
        return rows
    # Tie groups of the head: the rows of the user with one score.
    group = [_UID, _KEY]
    stats = {"n": pl.len().cast(pl.Float64).over(group), "a": pl.col(_POS).min().over(group)}
    for t in need.thresholds:
        stats[f"r:{t}"] = pl.col(f"is_rel:{t}").sum().over(group)
        above = pl.col(f"is_rel:{t}").cum_sum().over(_UID) - pl.col(f"is_rel:{t}")
        stats[f"above:{t}"] = above
    for gain in {q[1] for q in need.quantities.values() if q[0] == "dcg"}:
        stats[f"g:{gain}"] = pl.col(f"gain:{gain}").sum().over(group)
    rows = rows.with_columns(**stats)
    last = pl.col(_group_stat("n")).is_not_null() & (pl.col(_KEY) == pl.col(_LAST))
    fixed = {
        name: pl.when(last).then(pl.col(_group_stat(name))).otherwise(pl.col(name))
        for name in _group_parts(need, pl.lit(0.0))
    }
    rows = rows.with_columns(**fixed)
    # Relevant items above a group: the count before the group's first head row.
    return rows.with_columns(
        **{f"above:{t}": pl.col(f"above:{t}").min().over(group) for t in need.thresholds}
    ).filter(pl.col(_POS) <= need.k)


def _contributions(rows: pl.LazyFrame, need: _Request, expected: bool) -> dict[str, pl.Expr]:
    """Each quantity's contribution at each head position (see the curve kernels)."""
    p = pl.col(_POS).cast(pl.Float64)
    ret = pl.col(_VALUE).is_not_null()
    out: dict[str, pl.Expr] = {}
    for name, quantity in need.quantities.items():
        kind = quantity[0]
        if kind == "dcg":
            gain, discount, base, half_life = quantity[1:]
            g = pl.col(f"gain:{gain}")
            mean_gain = pl.col(f"g:{gain}") / pl.col("n") if expected else g
            disc = _discount(pl.col(_POS), discount, base, half_life)
            out[name] = pl.when(ret).then(mean_gain * disc).otherwise(0.0)
            continue
        t = quantity[1]
        is_rel = pl.col(f"is_rel:{t}")
        if not expected:
            cum = is_rel.cum_sum().over(_UID)
            if kind == "hits":
                out[name] = pl.when(ret).then(is_rel).otherwise(0.0)
            elif kind == "ap":
                out[name] = pl.when(ret & (is_rel > 0)).then(cum / p).otherwise(0.0)
            elif kind == "rr":
                first = ret & (is_rel > 0) & (cum == 1.0)
                out[name] = pl.when(first).then(1.0 / p).otherwise(0.0)
            else:
                out[name] = pl.when(ret).then(1.0 - is_rel).otherwise(1.0).log()
            continue
        n, r, a = pl.col("n"), pl.col(f"r:{t}"), pl.col("a")
        j = pl.col(_POS) - a
        if kind == "hits":
            out[name] = pl.when(ret).then(r / n).otherwise(0.0)
        elif kind == "ap":
            c = pl.when(n > 1).then((r - 1) / (n - 1)).otherwise(0.0)
            expected_ap = r / n * (pl.col(f"above:{t}") + 1 + j * c) / p
            out[name] = pl.when(ret & (r > 0)).then(expected_ap).otherwise(0.0)
        elif kind == "rr":
            first_a = pl.when(ret & (r > 0)).then(a).min().over(_UID)
            p_first = comb_ratio([(n - 1 - j, r - 1)], [(n, r)])
            out[name] = pl.when(ret & (a == first_a)).then(p_first / p).otherwise(0.0)
        else:
            miss = ((n - r - j) / (n - j)).clip(0.0, 1.0)
            out[name] = pl.when(ret).then(miss).otherwise(1.0).log()
    return out


def _value(need: _Request, name: str, options: dict[str, Any], k: int) -> pl.Expr:
    """One metric at cutoff k from the per-user cumulative lists and totals."""
    if name in ("dcg", "ndcg"):
        key = (options["gain"], options["discount"], options["base"], options["half_life"])
        dcg = _sum_at(need, _name("dcg", *key), k)
        if name == "dcg":
            return dcg
        ideal_list = _name("idcg", *key)
        ideal = _at(ideal_list, k if options["idcg"] == "cut" else 2**32 - 1)
        return pl.when(ideal > 0).then(dcg / ideal).otherwise(None)
    t = float(options["rel"])
    n_rel = pl.col(_name("n_rel", t))

    def defined(value: pl.Expr) -> pl.Expr:
        return pl.when(n_rel > 0).then(value).otherwise(None)

    def size() -> pl.Expr:
        if options.get("denominator") == "retrieved":
            return pl.min_horizontal(pl.col(_name("n_ret")), pl.lit(float(k)))
        return pl.lit(float(k))

    def hits() -> pl.Expr:
        return _sum_at(need, _name("hits", t), k)

    formulas: dict[str, Callable[[], pl.Expr]] = {
        "precision": lambda: pl.when(size() > 0).then(hits() / size()).otherwise(0.0),
        "recall": lambda: hits() / n_rel,
        "f1": lambda: 2.0 * hits() / (size() + n_rel),
        "hit_rate": lambda: 1.0 - _sum_at(need, _name("logmiss", t), k).exp(),
        "mrr": lambda: _sum_at(need, _name("rr", t), k),
        "map": lambda: _sum_at(need, _name("ap", t), k)
        / (
            n_rel
            if options["denominator"] == "relevant"
            else pl.min_horizontal(n_rel, pl.lit(float(k)))
        ),
    }
    return defined(formulas[name]().cast(pl.Float64))


