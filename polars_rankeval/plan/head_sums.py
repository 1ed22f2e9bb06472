"""Step 2 of the head path: each quantity's contributions by position over the heads.

Under a deterministic tie policy every head position is its own tie group and the
contributions are arithmetic on each user's head, as Arrays or lists
(:func:`_deterministic_sums`). Under ``ties="expected"`` tie groups are runs of equal
scores in the head: a short head is read as one column per position
(:func:`_expected_sums_wide`), a deep one as a frame of exploded head rows
(:func:`_expected_sums`), with the group at the last cutoff counted exactly where the
head cut it (:func:`_fix_last_group`); both forms read one set of formulas
(:func:`_contributions`). Each gives per user either a quantity's sum or its list of
contributions by position, read at every cutoff by
:mod:`polars_rankeval.plan.head_cumulative`.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import cast

import polars as pl

from polars_rankeval.metrics._common import gain_value
from polars_rankeval.metrics.head_form import (
    GainKey,
    expected_contribution,
    none_before_factor,
)
from polars_rankeval.plan.head_cumulative import Sums, _prefix
from polars_rankeval.plan.head_request import (
    _END,
    _FIRST,
    _HEAD,
    _KEY,
    _LAST,
    _LAST_ROW,
    _N_RET,
    _NEW,
    _POS,
    _REL,
    _RET,
    _ROW,
    _UID,
    _VALUE,
    MARKER,
    _discount,
    _first,
    _name,
    _Positions,
    _reduce,
    _Request,
    _summed,
)

SPLIT: int | None = None
"""How many branches compute the head rows under ``ties="expected"`` (in memory: slices
of consecutive users; on a LazyFrame: users by their row number modulo the count; Polars
runs the branches of a ``concat`` in parallel). ``None``: one per thread of Polars' pool.
The fills and running sums over the rows are sequential scans; split by user they use
every core. Tests and benchmarks set it."""


def _deterministic_sums(users: pl.LazyFrame, need: _Request) -> pl.LazyFrame:
    """Each quantity over the head, every position its own tie group.

    The head holds the recommended rows (not-recommended ones sort last) with
    relevance 0 for unjudged rows, as Arrays of K positions when K is small (0 past a
    short list's end) or lists (:class:`~polars_rankeval.plan.head_request._Positions`),
    and every contribution is arithmetic between it and the positions or their
    discounts. The first relevant position is the least position holding a relevant
    item (the others pushed past K).
    """
    k = need.k
    form = _Positions(k)
    rel = form.of(pl.col(_HEAD).list.head(pl.col(_N_RET).cast(pl.Int64)))
    users = users.with_columns(
        form.map(rel, pl.element().cast(pl.Float64).fill_null(0.0)).alias(_REL)
    )
    rel = pl.col(_REL)
    # One 0/1 list per threshold, shared by every quantity at that threshold.
    users = users.with_columns(
        form.map(rel, (pl.element() >= t).cast(pl.Float64)).alias(_name("is_rel", t))
        for t in need.thresholds
    )
    position = form.at_positions(rel, pl.element())
    columns: dict[str, pl.Expr] = {}
    for name, quantity in need.quantities.items():
        kind = quantity.kind
        if kind == "discounted_gain":
            gain, discount, base, half_life = cast(GainKey, quantity.gain)
            gains = form.map(rel, gain_value(pl.element(), gain))
            discounts = form.at_positions(rel, _discount(pl.element(), discount, base, half_life))
            columns[name] = _reduce(need, name, gains * discounts, form=form)
            continue
        t = float(cast(float, quantity.threshold))
        is_rel = pl.col(_name("is_rel", t))
        if kind == "hits":
            columns[name] = _reduce(need, name, is_rel, form=form)
        elif kind == "reciprocal_hits":
            columns[name] = _reduce(need, name, is_rel / position, form=form)
        elif kind == "precision_sum":
            summed = _summed(need, name)
            terms = form.precision_terms(is_rel, position, summed=summed)
            columns[name] = terms if summed else form.as_list(terms)
        else:  # reciprocal_rank and log_miss: the position of the first relevant item
            first = form.min(position + (1.0 - is_rel) * (k + 1))
            columns[_first(t)] = pl.when(first <= k).then(first)
    return users.with_columns(**columns)


def _group_stat(name: str) -> str:
    return f"{MARKER}:fix[{name}]"


def _group_parts(need: _Request, rel: pl.Expr) -> dict[str, pl.Expr]:
    """Sums over a tie group: its size, relevant count per threshold, gain per gain."""
    parts = {"n": pl.len().cast(pl.Float64)}
    for t in need.thresholds:
        parts[f"r:{t}"] = (rel >= t).cast(pl.Float64).sum()
    for gain in need.gains:
        parts[f"g:{gain}"] = gain_value(rel, gain).sum()
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
    :func:`~polars_rankeval.plan.head.per_user`) and ``rows`` a frame in memory. The few
    users with such a group are then found at once: none (the usual case) -- no pass
    over the rows at all, and no columns of exact sums for the head rows to carry; some
    -- only their rows are joined (an ``is_in`` filter on the user column first, so the
    join never hashes every row: on 10M rows that join held ~150 MiB).
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
) -> tuple[pl.LazyFrame, Sums]:
    """Each quantity over the head under ``ties="expected"``, on a frame of head rows.

    A head of at most :data:`~polars_rankeval.plan.head_request.FIXED_WIDTH` rows is
    read as one column per position instead (:func:`_expected_sums_wide`). Otherwise
    the heads are exploded into rows (in head order, user after user) together with
    their positions, and everything is computed with vectorised operations over that
    frame, never per group (a window or ``list.eval`` per user or per tie group costs
    far more than the sort): a tie group is a run of equal keys within a user, its first
    and last row come from forward and backward fills of the row index, integer counts
    within a run from the running count read at both ends (again fills: a gather at the
    run's ends costs more), and sums or products of floats within a run from a log-step
    (Hillis-Steele) scan over the run's offsets. Per-user sums, or lists of
    contributions by position for cutoff lists (summed per cutoff by
    :func:`~polars_rankeval.plan.head_cumulative._prefix_sums`), aggregate on the
    row-numbered users declared sorted: Polars then slices the groups instead of hashing
    them, and no per-group sort is needed. The group at K takes its exact sums from
    :func:`_fix_last_group` when the head cut it; the contributions are the curve
    kernels'.

    Only the user's keys and row number, its head with the positions, and the exact
    sums of a cut group are exploded (any other per-user column would be copied to
    each of its head rows: with K = 100 the frame has as many rows as the input). The
    group at K that the head cut is the user's last run in a head of full ``length``
    (see :func:`_fix_last_group`): it is recognised from the run's last position. The
    rows are computed in :data:`SPLIT` branches of users, in parallel: the fills and
    running sums are sequential scans. ``collected``: ``users`` reads frames in memory
    (see :func:`polars_rankeval.plan.head.per_user`); the branches are then slices of it.
    """
    if _Positions(length).fixed:
        return _expected_sums_wide(users, need, length), "given"
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
    return pl.concat([users.drop(_HEAD), sums], how="horizontal"), "running"


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
        columns[f"gain:{gain}"] = gain_value(pl.col(_VALUE), gain)
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
        rows = rows.with_columns(
            none_before_factor(n, pl.col(f"r:{t}"), j).alias(f"none_before:{t}")
            for t in need.rr_thresholds
        )
        names = [f"none_before:{t}" for t in need.rr_thresholds]
        rows = _run_scan(rows, names, length, "product")
    rows = rows.filter(pos <= need.k)
    contributions = _contributions(need, pl.col, pos, ret)
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


def _contributions(
    need: _Request, value: Callable[[str], pl.Expr], pos: pl.Expr, ret: pl.Expr
) -> dict[str, pl.Expr]:
    """Each quantity's expected contribution at one head position, the curve kernels'.

    :func:`~polars_rankeval.metrics.head_form.expected_contribution` of every quantity
    (``value``, ``pos``, ``ret`` as there); read by both forms of
    :func:`_expected_sums`, so that they cannot differ.
    """
    return {
        name: expected_contribution(quantity, value, pos, ret)
        for name, quantity in need.quantities.items()
    }


def _wide(name: str, p: int) -> str:
    return f"{MARKER}:wide[{name}:{p}]"


def _expected_sums_wide(users: pl.LazyFrame, need: _Request, length: int) -> pl.LazyFrame:
    """:func:`_expected_sums` with one column per head position (a short head).

    The same tie groups and contributions as the frame of head rows, without
    exploding the heads: each position's key and value is a column (``list.get``),
    a tie group is a run of equal keys across the positions, and its size and sums
    are read in two passes over the positions, one ``with_columns`` per position:
    backwards, each position's count and sums to its run's end; forwards, the run's
    totals carried from its first position, the row's offset in the run and the
    relevant rows above it, and (reciprocal rank) the running product of
    :func:`~polars_rankeval.metrics.head_form.none_before_factor`. Every step is
    arithmetic between columns of one row per user (on 10M rows, 100k users, a head of
    13: ~0.03 s against ~0.25 s for the exploded rows). Past a short list's end a
    position's key is null, as a not-recommended row's: it contributes nothing.
    """
    keep = [name for name in users.collect_schema().names() if name != _HEAD]
    parts = list(_group_parts(need, pl.lit(0.0)))  # n, r:<t>, g:<gain>
    summed = parts[1:]
    above_thresholds = sorted(need.ap_thresholds | need.rr_thresholds)
    cut = _group_stat("n") in keep
    positions = range(length)

    def c(name: str, p: int) -> pl.Expr:
        return pl.col(_wide(name, p))

    fields: dict[str, pl.Expr] = {}
    for p in positions:
        row = pl.col(_HEAD).list.get(p, null_on_oob=True)
        key = row.struct.field(_KEY)
        fields[_wide("key", p)] = key + 0.0 if need.float_key else key  # -0.0 ties 0.0
        value = row.struct.field(_VALUE).cast(pl.Float64).fill_null(0.0)
        for t in need.thresholds:
            fields[_wide(f"x:r:{t}", p)] = (value >= t).cast(pl.Float64)
        for gain in need.gains:
            fields[_wide(f"x:g:{gain}", p)] = gain_value(value, gain)
    users = users.with_columns(**fields)
    users = users.with_columns(
        (pl.lit(True) if p == 0 else c("key", p).ne_missing(c("key", p - 1))).alias(_wide("new", p))
        for p in positions
    )
    for p in reversed(positions):  # counts and sums from the position to its run's end

        def to_end(x: pl.Expr, name: str, p: int = p) -> pl.Expr:
            if p == length - 1:
                return x
            return pl.when(c("new", p + 1)).then(x).otherwise(x + c(name, p + 1))

        stage = {_wide("s:n", p): to_end(pl.lit(1.0), "s:n")}
        stage.update({_wide(f"s:{s_}", p): to_end(c(f"x:{s_}", p), f"s:{s_}") for s_ in summed})
        users = users.with_columns(**stage)
    for p in positions:  # the run's totals, the offset, the relevant rows above
        new = c("new", p)
        # the group at K that the head cut: the run reaching the head's last position
        at_k = (c("s:n", p) + p == length) & pl.col(_group_stat("n")).is_not_null()

        def carried(part: str, p: int = p, new: pl.Expr = new, at_k: pl.Expr = at_k) -> pl.Expr:
            total = c(f"s:{part}", p)
            if p > 0:
                total = pl.when(new).then(total).otherwise(c(part, p - 1))
            return pl.when(at_k).then(pl.col(_group_stat(part))).otherwise(total) if cut else total

        stage = {_wide(part, p): carried(part) for part in parts}
        stage[_wide("j", p)] = (
            pl.lit(0.0) if p == 0 else pl.when(new).then(0.0).otherwise(c("j", p - 1) + 1.0)
        )
        for t in above_thresholds:
            before = pl.lit(0.0) if p == 0 else c(f"b:{t}", p - 1) + c(f"x:r:{t}", p - 1)
            stage[_wide(f"b:{t}", p)] = before
            stage[_wide(f"above:{t}", p)] = (
                before if p == 0 else pl.when(new).then(before).otherwise(c(f"above:{t}", p - 1))
            )
        users = users.with_columns(**stage)
    for p in positions[: need.k] if need.rr_thresholds else ():
        stage = {}
        for t in need.rr_thresholds:
            factor = none_before_factor(c("n", p), c(f"r:{t}", p), c("j", p))
            if p > 0:
                factor = (
                    pl.when(c("new", p))
                    .then(factor)
                    .otherwise(c(f"none_before:{t}", p - 1) * factor)
                )
            stage[_wide(f"none_before:{t}", p)] = factor
        users = users.with_columns(**stage)
    by_position = [
        _contributions(need, partial(c, p=p), pl.lit(p + 1), c("key", p).is_not_null())
        for p in positions[: need.k]
    ]
    sums = {}
    for name in need.quantities:
        terms = [contributions[name] for contributions in by_position]
        if _summed(need, name):
            sums[name] = pl.sum_horizontal(terms)
            continue
        # Each cutoff's sum at once (a list of the terms, concat_list, costs more than
        # the sums: measured 2x the whole step at 20 positions); ``+ 0.0``: no -0.0.
        for k in sorted(need.cutoffs[name]):
            sums[_prefix(name, k)] = pl.sum_horizontal(terms[:k]) + 0.0
    return users.select(*keep, **sums)


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
    """Per user: a quantity's sum (one cutoff at K) or its running sums by position."""
    if _summed(need, name):
        return [contrib.sum().alias(name)]
    return [contrib.cum_sum().alias(name)]  # rows in position order (see the caller)
