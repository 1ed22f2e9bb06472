"""Several metrics as one expression: ``evaluate_expr``, one selection shared by all.

Polars does not share common sub-expressions inside ``group_by().agg()``: five metric
functions in one ``agg`` (``prk.ndcg(10)``, ``prk.recall(20)``, ...) select and sort
each group's rows five times. :func:`evaluate_expr` returns **one** expression, a
struct with one field per metric, in which every metric with a sorted-head form
(:class:`~polars_rankeval.metrics.head_form.HeadForm`, the form the sorted-head path
of ``evaluate`` reads, :mod:`polars_rankeval.plan.head`) is read from one selection
of the group's rows:

1. in the aggregation, the rows that can reach the top K (K the largest cutoff: the
   rows scored at least as well as the K-th recommended row, so every tie group
   touching the top K is whole) and every positive row (the user's relevant counts
   and ideal gains are read from them), imploded; a data-wide total that these rows
   do not hold (the recommended rows, when a form reads it) is added to them as a
   field;
2. one ``list.eval`` sorts them by the tie policy's order (the top K first; a positive
   row that does not reach sorts after them, beyond every cutoff) and adds each row's
   fields once for every quantity: its position, relevant flags and gains, running
   hits, its position in the ideal list; under ``ties="expected"`` two more stages add
   its tie group (first position, size, relevant rows or gains in it and above it,
   read from running sums at the group's bounds), each stage keeping only the fields
   read after it;
3. one ``list.eval`` gives every metric's value from its head form, a quantity at
   cutoff k being a sum over the positions 1..k.

Every other piece of work between the selection and the values is one pass over the
selected rows of all groups; but each per-group operation (a sort, a running sum, a
fill) costs a few microseconds per group in Polars' aggregation, which sets what this
expression costs against ``evaluate`` (see ``benchmarks/RESULTS_EXPR.md``). Metrics the
selection does not cover (no head form, no cutoff, an option the form does not cover)
are their own expressions (:func:`~polars_rankeval.metrics.sorted_features.
metric_expression`), placed in the struct after it is built.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

import polars as pl

from polars_rankeval._utils.constraints import (
    COLUMN,
    Instance,
    Integer,
    Options,
    Text,
    validate_params,
)
from polars_rankeval._utils.ties import POLICIES, Ties
from polars_rankeval._utils.types import Columns, TiePolicy, make_columns
from polars_rankeval.metrics._common import (
    catalog_size,
    discount_at,
    gain_value,
    no_expression_error,
)
from polars_rankeval.metrics.features import f64
from polars_rankeval.metrics.grammar import METRICS, MetricsArg, parse_metrics
from polars_rankeval.metrics.head_expression import aggregation_reader, applicable_form
from polars_rankeval.metrics.head_form import (
    GainKey,
    HeadForm,
    Quantity,
    expected_contribution,
    none_before_from_log,
    none_before_log_step,
)
from polars_rankeval.metrics.params import Interval
from polars_rankeval.metrics.sorted_features import SortedFeatures, metric_expression
from polars_rankeval.metrics.spec import Metric

_P = "__prk_s:p"
_ORDER = "__prk_s:order"
_REL = "__prk_s:rel"
_N_RET = "__prk_s:n_ret"


def _x(name: str) -> str:
    return f"__prk_s:x[{name}]"


def _f(name: str) -> pl.Expr:
    return pl.element().struct.field(name)


class _Need:
    """What the covered metrics read: cutoffs, thresholds, gains and ideals."""

    def __init__(self, forms: Sequence[tuple[Metric, HeadForm]]) -> None:
        self.k = 1
        self.thresholds: dict[float, None] = {}
        self.gains: dict[str, None] = {}
        self.rr: dict[float, None] = {}  # thresholds of reciprocal_rank (expected ties)
        self.ap: dict[float, None] = {}  # thresholds of precision_sum (running hits)
        self.ideal_gains: dict[str, None] = {}
        for metric, form in forms:
            k = int(cast(int, metric.k))
            self.k = max(self.k, k)
            for quantity in form.quantities(dict(metric.options)):
                self._add(quantity, k)

    def _add(self, quantity: Quantity, k: int) -> None:
        if quantity.kind == "ideal_gain":
            self.ideal_gains[cast(GainKey, quantity.gain)[0]] = None
        elif quantity.kind == "discounted_gain":
            self.gains[cast(GainKey, quantity.gain)[0]] = None
        else:
            t = float(cast(float, quantity.threshold))
            self.thresholds[t] = None
            if quantity.kind == "reciprocal_rank":
                self.rr[t] = None
            elif quantity.kind == "precision_sum":
                self.ap[t] = None


def covered(metric: Metric) -> bool:
    """Whether ``metric`` is read from the shared selection (its head form applies)."""
    return applicable_form(metric) is not None


class _StructReader:
    """The head form's quantities over one group's selected rows, inside ``list.eval``.

    See :class:`~polars_rankeval.metrics.head_form.HeadReader`. Every quantity is read
    as a sum (:attr:`expected`) of the rows' fields (:func:`_row_fields`,
    :func:`_tie_fields`); the relevant counts and the ideal over all the selected rows
    (every positive row is one of them).
    """

    expected = True

    def __init__(self, deterministic: bool) -> None:
        self.deterministic = deterministic
        self.ret = _f(_ORDER).is_not_null()
        self.p = f64(_f(_P))

    def _deterministic(self, quantity: Quantity, k: int) -> pl.Expr:
        p, kind = self.p, quantity.kind
        if kind == "discounted_gain":
            gain, discount, base, half_life = cast(GainKey, quantity.gain)
            x = _f(_x(f"val:g:{gain}"))
            return (x * discount_at(p, discount, base, half_life)).head(k).sum()
        t = float(cast(float, quantity.threshold))
        x = _f(_x(f"val:t:{t}"))
        if kind == "hits":
            return x.head(k).sum()
        if kind == "log_miss":  # log P(no relevant item in the top k): 0 or -inf
            return pl.when(x.head(k).max() > 0).then(float("-inf")).otherwise(0.0)
        if kind == "reciprocal_hits":
            return (x / p).head(k).sum()
        if kind == "precision_sum":
            return (x * _f(_x(f"run:t:{t}")) / p).head(k).sum()
        return (x / p).head(k).max().fill_null(0.0)  # reciprocal_rank: 1 / first position

    def sum_at(self, quantity: Quantity, k: int) -> pl.Expr:
        if quantity.kind == "ideal_gain":
            # The selected rows hold every positive one: the ideal from their gains.
            gain, discount, base, half_life = cast(GainKey, quantity.gain)
            rank = _f(_x(f"irank:{gain}"))
            term = gain_value(_f(_REL), gain) * discount_at(rank, discount, base, half_life)
            within = rank.is_not_null() if quantity.idcg != "cut" else rank <= k
            return pl.when(within).then(term).otherwise(0.0).sum()
        if self.deterministic:
            return self._deterministic(quantity, k)
        term = _expected_contribution(quantity, self.ret)
        return pl.when(self.p <= k).then(term).otherwise(0.0).sum()

    def n_relevant(self, threshold: float) -> pl.Expr:
        return (_f(_REL) >= float(threshold)).cast(pl.Float64).sum()

    def n_retrieved(self) -> pl.Expr:
        return _f(_N_RET).first()

    def ratio(self, numerator: pl.Expr, denominator: pl.Expr) -> pl.Expr:
        return pl.when(denominator != 0).then(numerator / denominator).otherwise(None)

    def first_relevant(self, threshold: float) -> pl.Expr:  # pragma: no cover - expected
        msg = "the shared reader reads the first relevant position as a sum"
        raise NotImplementedError(msg)


class _Recorder:
    """A head reader that records which totals the forms read (values: placeholders)."""

    expected = True

    def __init__(self) -> None:
        self.reads_retrieved = False

    def sum_at(self, quantity: Quantity, k: int) -> pl.Expr:
        return pl.lit(0.0)

    def n_relevant(self, threshold: float) -> pl.Expr:
        return pl.lit(0.0)

    def n_retrieved(self) -> pl.Expr:
        self.reads_retrieved = True
        return pl.lit(0.0)

    def ratio(self, numerator: pl.Expr, denominator: pl.Expr) -> pl.Expr:
        return numerator

    def first_relevant(self, threshold: float) -> pl.Expr:  # pragma: no cover - expected
        return pl.lit(0.0)


def _values(need: _Need) -> dict[str, pl.Expr]:
    """Each row's value per threshold (its relevant flag) and per gain; 0.0 unless recommended.

    Read in the first stage (:func:`_first_stage`), from the sorted rows' fields.
    """
    ret, rel = pl.field(_ORDER).is_not_null(), pl.field(_REL)
    values: dict[str, pl.Expr] = {}
    for t in need.thresholds:
        values[f"t:{t}"] = pl.when(ret & (rel >= t)).then(1.0).otherwise(0.0)
    for gain in need.gains:
        values[f"g:{gain}"] = pl.when(ret).then(gain_value(rel, gain)).otherwise(0.0)
    return values


def _first_stage(rows: pl.Expr, keys: tuple[list[str], list[bool]], **fields: pl.Expr) -> pl.Expr:
    """``rows`` sorted by the fields ``keys`` (best first), with ``fields`` added.

    One ``list.eval``: the fields read the sorted rows through ``pl.field``.
    """
    names, descending = keys
    ordered = pl.element().sort_by([_f(n) for n in names], descending=descending, nulls_last=True)
    return rows.list.eval(ordered.struct.with_fields(**fields))


def _position() -> pl.Expr:
    return pl.field(_REL).cum_count()  # 1..len: the relevance has no nulls


def _ideal_ranks(need: _Need) -> dict[str, pl.Expr]:
    """Each positive row's position in the ideal list (by gain, best first); null otherwise."""
    rel = pl.field(_REL)
    return {
        _x(f"irank:{gain}"): pl.when(rel > 0)
        .then(gain_value(rel, gain))
        .rank("ordinal", descending=True)
        for gain in need.ideal_gains
    }


def _row_fields(rows: pl.Expr, need: _Need, keys: tuple[list[str], list[bool]]) -> pl.Expr:
    """Under a deterministic policy: the rows sorted, with positions, values, running hits."""
    values = _values(need)
    return _first_stage(
        rows,
        keys,
        **{_P: _position()},
        **{_x(f"val:{name}"): x for name, x in values.items()},
        **{_x(f"run:t:{t}"): values[f"t:{t}"].cum_sum() for t in need.ap},
        **_ideal_ranks(need),
    )


def _tie_fields(
    rows: pl.Expr, need: _Need, keys: tuple[list[str], list[bool]], carry: list[str]
) -> pl.Expr:
    """Under ``ties="expected"``: each selected row's tie group, as fields, in stages.

    ``rows``: per group, the selected rows, sorted here by the score ``keys``
    (recommended rows first; a row that was not recommended has no score and forms the
    last group). For each value x (a threshold's relevant flag, a gain): the group's x
    (``total``) and the x above the group (``before``), from running sums read at the
    group's bounds with fills; the group's first position, size and the row's offset in
    it.
    """
    order = pl.field(_ORDER)
    values = _values(need)
    rows = _first_stage(
        rows,
        keys,
        **{_P: _position()},
        **{_x("starts"): order.ne_missing(order.shift(1))},
        **{_x("ends"): order.ne_missing(order.shift(-1))},
        **{_x(f"val:{name}"): x for name, x in values.items()},
        **{_x(f"run:{name}"): x.cum_sum() for name, x in values.items()},
        **_ideal_ranks(need),
    )
    names = list(values)  # the values are fields from here on
    p, starts, ends = _f(_P), _f(_x("starts")), _f(_x("ends"))
    # Read at the group's first row and carried forward, at its last row and carried
    # backward: one fill each, of a struct (a fill per field costs one pass each).
    at_start = {_x("first"): p}
    at_end = {_x("last"): p}
    for name in names:
        run, x = _f(_x(f"run:{name}")), _f(_x(f"val:{name}"))
        at_start[_x(f"before:{name}")] = run - x
        at_end[_x(f"end:{name}")] = run
    fills = {
        _x("at_start"): pl.when(starts).then(_struct(at_start)).forward_fill(),
        _x("at_end"): pl.when(ends).then(_struct(at_end)).backward_fill(),
    }
    # Each stage keeps only the fields read after it (a stage copies what it keeps).
    carry = [*carry, _P, _x("starts"), *_ideal_ranks(need)]
    rows = _stage(rows, carry, **fills)

    def start(name: str) -> pl.Expr:
        return _f(_x("at_start")).struct.field(name)

    def end(name: str) -> pl.Expr:
        return _f(_x("at_end")).struct.field(name)

    first, last = start(_x("first")), end(_x("last"))
    group: dict[str, pl.Expr] = {
        _x("n"): f64(last - first + 1),
        _x("j"): f64(p - first),  # the row's offset in its group
    }
    for name in names:
        before = start(_x(f"before:{name}"))
        group[_x(f"before:{name}")] = before
        group[_x(f"total:{name}")] = end(_x(f"end:{name}")) - before
    # P(no relevant row at the group's offsets before j): a running sum of log-steps,
    # read from the group's start (head_form.none_before_from_log).
    n, j = group[_x("n")], group[_x("j")]
    for t in need.rr:
        total = group[_x(f"total:t:{t}")]
        step = none_before_log_step(n, total, j)
        group[_x(f"step:{t}")] = step
        group[_x(f"steps:{t}")] = step.cum_sum()
    rows = _stage(rows, carry, **group)
    if need.rr:
        at_group_start = _struct(
            {_x(f"rr0:{t}"): _f(_x(f"steps:{t}")) - _f(_x(f"step:{t}")) for t in need.rr}
        )
        rows = _with_fields(
            rows, **{_x("rr0"): pl.when(starts).then(at_group_start).forward_fill()}
        )
    return rows


def _expected_contribution(quantity: Quantity, ret: pl.Expr) -> pl.Expr:
    """A row's expected contribution to ``quantity``, from the shared formulas.

    :func:`~polars_rankeval.metrics.head_form.expected_contribution` over the fields of
    :func:`_tie_fields`.
    """
    n, j = _f(_x("n")), _f(_x("j"))

    def value(name: str) -> pl.Expr:
        part, _, key = name.partition(":")  # n, j, r:<t>, g:<gain>, above:<t>, ...
        if part in ("n", "j"):
            return n if part == "n" else j
        if part == "g":
            return _f(_x(f"total:g:{key}"))
        if part == "r":
            return _f(_x(f"total:t:{key}"))
        if part == "above":
            return _f(_x(f"before:t:{key}"))
        # none_before: the running sum of the log-steps from the group's start
        steps = _f(_x(f"steps:{key}")) - _f(_x("rr0")).struct.field(_x(f"rr0:{key}"))
        return none_before_from_log(steps, n, _f(_x(f"total:t:{key}")), j)

    return expected_contribution(quantity, value, _f(_P), ret)


def _struct(fields: dict[str, pl.Expr]) -> pl.Expr:
    return pl.struct([expr.alias(name) for name, expr in fields.items()])


def _stage(rows: pl.Expr, keep: list[str], **fields: pl.Expr) -> pl.Expr:
    """``rows`` with the fields ``keep`` and the new ``fields`` only."""
    kept = [_f(name) for name in keep]
    return rows.list.eval(pl.struct([*kept, *(expr.alias(n) for n, expr in fields.items())]))


def _with_fields(rows: pl.Expr, **fields: pl.Expr) -> pl.Expr:
    return rows.list.eval(pl.element().struct.with_fields(**fields))


def shared_expression(
    metrics: Sequence[Metric],
    cols: Columns,
    ties: Ties,
    keys: tuple[list[pl.Expr], list[bool]],
) -> pl.Expr:
    """``metrics`` as one struct expression over a group, one Float64 field each.

    The fields of the metrics :func:`covered` are read from the shared selection;
    the others are null, for the caller to set. ``keys``: the tie policy's sort keys
    and directions (:meth:`SortedFeatures.sort_keys
    <polars_rankeval.metrics.sorted_features.SortedFeatures.sort_keys>`).
    """
    forms = [(metric, applicable_form(metric)) for metric in metrics]
    applied = [(metric, form) for metric, form in forms if form is not None]
    need = _Need(applied)
    totals_reader = aggregation_reader(cols, ties, keys)
    order = pl.col(cols.order)
    rel = f64(pl.col(cols.relevance)).fill_null(0.0)
    recorder = _Recorder()
    for metric, form in applied:
        form.value(recorder, dict(metric.options), int(cast(int, metric.k)))
    totals: dict[str, pl.Expr] = {}
    if recorder.reads_retrieved:
        totals[_N_RET] = totals_reader.n_retrieved()
    # The rows scored at least as well as the K-th recommended row (the top K, and
    # every tie group touching it whole) and every positive row (the user's totals and
    # ideal gains are read from them), sorted by the policy's order: the top K come
    # first, a positive row that does not reach sorts after them, beyond every cutoff.
    # (``kth`` named once: each reference would compute it again.)
    best_first = cols.rank is None
    kth = order.sort(descending=best_first, nulls_last=True).head(need.k)
    reach = (order >= kth.min()) if best_first else (order <= kth.max())
    by, descending = keys
    breaks = {f"__prk_s:key{i}": key for i, key in enumerate(by[1:])}
    rows = pl.struct(
        order.alias(_ORDER), rel.alias(_REL), *(key.alias(name) for name, key in breaks.items())
    )
    rows = rows.filter(reach.fill_null(False) | (rel > 0))
    if totals:
        rows = rows.struct.with_fields(**totals)
    rows = rows.implode()
    sort_keys = ([_ORDER, *breaks], descending)
    if ties.deterministic:
        rows = _row_fields(rows, need, sort_keys)
    else:
        rows = _tie_fields(rows, need, sort_keys, [_ORDER, _REL, *totals])
    reader = _StructReader(ties.deterministic)
    values = []
    for metric, applies in forms:
        if applies is not None:
            value = applies.value(reader, dict(metric.options), int(cast(int, metric.k)))
        else:  # a field of its own expression, set by the caller
            value = pl.lit(None)
        values.append(value.cast(pl.Float64).alias(metric.name))
    return rows.list.eval(pl.struct(values)).list.first()


@validate_params(
    {
        "metrics": METRICS,
        "ties": [Options(live=POLICIES), Instance(Ties, what="a Ties policy")],
        "item": COLUMN,
        "score": [COLUMN, None],
        "relevance": COLUMN,
        "rank": [COLUMN, None],
        "n_items": [Integer(Interval(1, None)), None],
        "name": Text("the struct's name (str)"),
    }
)
def evaluate_expr(
    metrics: MetricsArg,
    *,
    ties: TiePolicy | Ties = "expected",
    item: str = "item",
    score: str | None = None,
    relevance: str = "relevance",
    rank: str | None = None,
    n_items: int | None = None,
    name: str = "metrics",
) -> pl.Expr:
    """Several metrics as one expression over a group's rows: a struct, a field each.

    ``evaluate(per_user=True)`` as an expression for one's own ``group_by``: the rows
    that can reach the largest cutoff are selected (and sorted) once per group and
    every metric with a sorted-head form (precision, recall, f1, hit_rate, mrr, arhr,
    map, dcg, ndcg at a cutoff) is read from them, as the sorted-head path of
    ``evaluate`` reads its plan. Polars does not share common sub-expressions inside
    an aggregation, so the same metrics as separate functions (``prk.ndcg(10)``,
    ``prk.recall(20)``, ...) select and sort the rows once each.

    Parameters
    ----------
    metrics
        Metric names of the grammar (``"ndcg@10"``, ``"ndcg(gain=exp)@[5,10]"``,
        ``"P@1..3"``) or bound :class:`~polars_rankeval.Metric` objects; a metric with
        no per-user expression (a value per system or per item, or one reading the
        whole data) raises, naming what to use instead.
    ties
        Tie policy (see :func:`polars_rankeval.evaluate`), one for every metric.
    item, score, relevance, rank
        Column names (see :func:`polars_rankeval.evaluate`).
    n_items
        The catalog size, for the metrics that need it (``fallout``, ...).
    name
        The struct's name (unnest it to get a column per metric).

    Returns
    -------
    polars.Expr
        Aggregates one group's rows (one user's) to a struct of one Float64 per metric,
        named as ``evaluate`` names its columns, in the order given; null where a metric
        is undefined (see :func:`polars_rankeval.evaluate`).

    Examples
    --------
    >>> import polars as pl
    >>> import polars_rankeval as prk
    >>> df = pl.DataFrame({"user": [1, 1, 1, 2, 2], "item": [1, 2, 3, 1, 2],
    ...                    "score": [0.9, 0.8, 0.7, 0.6, 0.5],
    ...                    "relevance": [0, 1, 1, 1, 0]})
    >>> per_user = (df.group_by("user").agg(prk.evaluate_expr(["precision@2", "mrr@2"]))
    ...             .unnest("metrics").sort("user"))
    >>> per_user  # user 1: 1 hit in the top 2, first at 2; user 2: first at 1
    shape: (2, 3)
    ┌──────┬─────────────┬───────┐
    │ user ┆ precision@2 ┆ mrr@2 │
    │ ---  ┆ ---         ┆ ---   │
    │ i64  ┆ f64         ┆ f64   │
    ╞══════╪═════════════╪═══════╡
    │ 1    ┆ 0.5         ┆ 0.5   │
    │ 2    ┆ 0.5         ┆ 1.0   │
    └──────┴─────────────┴───────┘
    """
    bound = parse_metrics(metrics)  # evaluate's parsing: no empty list, no duplicate
    for metric in bound:
        error = no_expression_error(metric.spec.name)
        if error is not None:
            raise error
        if "n_items" in metric.spec.needs:
            catalog_size(metric.name, n_items)
    policy = bound[0].spec.check_ties(ties)
    for metric in bound[1:]:
        metric.spec.check_ties(ties)
    cols = make_columns(item=item, score=score, relevance=relevance, rank=rank)
    others = {
        metric.name: metric_expression(metric, cols, policy, n_items)
        for metric in bound
        if not covered(metric)
    }
    if len(others) == len(bound):
        return pl.struct(list(others.values())).alias(name)
    keys = SortedFeatures(cols, policy, n_items=n_items).sort_keys()
    struct = shared_expression(bound, cols, policy, keys)
    if others:
        struct = struct.struct.with_fields(**others)
    return struct.alias(name)
