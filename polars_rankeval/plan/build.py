"""The per-user build: rows of whole users to per-user values and global partials.

:func:`build` is what every engine runs on the rows it holds (all of them, one bucket,
or one Spark partition): per-user values only depend on the user's own rows, and the
partial aggregates of the global metrics merge exactly (sums, minima, maxima), so
running it on all rows at once or on disjoint groups of whole users and concatenating
gives the same result. The user universe (``users=``) is applied here too.
"""

from __future__ import annotations

from typing import Any

import polars as pl

import polars_rankeval.plan.head as _head
from polars_rankeval._utils.types import USER_UNIVERSES, Columns, check_choice
from polars_rankeval.metrics.spec import CurvePlan, FramePlan, GlobalPlan, Metric
from polars_rankeval.plan.job import HAS_RECS as _HAS_RECS
from polars_rankeval.plan.job import HAS_TRUTH as _HAS_TRUTH
from polars_rankeval.plan.job import Job, UsersArg


def build(
    job: Job,
    lf: pl.LazyFrame,
    users: UsersArg | None = None,
    groups: pl.LazyFrame | None = None,
    *,
    checks: list[pl.LazyFrame] | None = None,
    collect_first: bool = False,
    head: bool = False,
) -> tuple[pl.LazyFrame, dict[str, pl.LazyFrame]]:
    """Per-user values (keys + user-level metrics) and the global partials.

    ``lf`` holds whole users (all rows of every user in it). ``users`` overrides
    the job's user universe (the bucketed engine passes each bucket's share of an
    explicit list). ``groups``: the distinct by values of the *whole* input, which
    an explicit user list is crossed with (default: those of ``lf``; a bucket
    holds only some of them). Column names are the plan's (:meth:`Job.outer` turns
    them back into the user's).

    ``head``: run the sorted-head path (:mod:`polars_rankeval.plan.head`), as decided
    by :func:`polars_rankeval.engines.choice.decide` (the caller's one decision;
    ``True`` only where :func:`polars_rankeval.plan.head.applies`).

    ``checks``: a list to fold the value checks into the build. When the sorted-head
    path runs it counts the problems in its
    own aggregation and appends a one-row frame of counts
    (:func:`polars_rankeval.plan.head.check_counts`); otherwise nothing is appended and
    the caller runs :func:`polars_rankeval.plan.validate.check_values` itself.

    ``collect_first``: ``lf`` is a frame in memory and the sorted-head path may collect
    its first stage (the per-user sort) at once (see :func:`polars_rankeval.plan.head.per_user`);
    the general path ignores it.
    """
    features = job.features()
    together = job.curve_groups()
    in_curves = {m.name for group in together for m in group}
    plans = {m.name: m.plan(features) for m in job.metrics if m.name not in in_curves}
    curves: list[tuple[CurvePlan, list[Metric]]] = []
    for group in together:
        first = group[0]
        kernel = first.spec.curve
        if kernel is None:  # pragma: no cover - curve_groups keeps kernels only
            continue
        ks = tuple(m.k for m in group if m.k is not None)
        curves.append((kernel(features, ks, **dict(first.options)), group))
    curve_aggs = {name: agg for plan, _ in curves for name, agg in plan.aggs.items()}
    cols, keys, names = job.icols, job.ikeys, job.names
    schema = lf.collect_schema()
    # The plan renames the input columns (internal_names): its own columns (ranks,
    # counts, partial sums, "value", "len", ...) can never collide with them.
    base = lf.select([pl.col(c).alias(names[c]) for c in job.columns(schema)])
    side = [c for c in features.extra if c not in schema]
    if side and job.items is not None:
        side_cols = [pl.col(c).alias(names[c]) for c in side]
        table = job.items.select(pl.col(job.cols.item).alias(cols.item), *side_cols)
        base = base.join(table, on=cols.item, how="left")
    rows = features.apply(base)
    if any(not isinstance(p, pl.Expr) for p in plans.values()):
        # Sub-plans read the same rows as the group_by: compute the features once.
        rows = rows.cache()
    if head:  # the sorted-head path: every metric reads the top k
        per_user = _head.per_user(job, base, checks, collect_first=collect_first)
    else:
        exprs = [p for p in plans.values() if isinstance(p, pl.Expr)]
        per_user = rows.group_by(keys).agg(
            *exprs,
            *[agg.alias(name) for name, agg in curve_aggs.items()],
            pl.col(cols.relevance).is_not_null().any().alias(_HAS_TRUTH),
            pl.col(cols.order).is_not_null().any().alias(_HAS_RECS),
        )
        if curves:
            per_user = per_user.with_columns(
                plan.at(m.k).cast(pl.Float64).alias(m.name)
                for plan, group in curves
                for m in group
                if m.k is not None
            )
    for name, plan in plans.items():
        if isinstance(plan, FramePlan):
            value = plan.build(rows).select(*keys, pl.col("value").cast(pl.Float64).alias(name))
            per_user = per_user.join(value, on=keys, how="left", nulls_equal=True)
    universe = job.users if users is None else users
    if not isinstance(universe, str):
        ids = wanted_users(universe, job.cols.user, schema[job.cols.user])
        universe = ids.rename(cols.user)
    if groups is not None:
        groups = groups.select([pl.col(b).alias(names[b]) for b in job.by])
    per_user = _restrict_users(per_user, universe, keys, job.iby, groups)
    per_user = per_user.select(*keys, *job.user_names)
    partials: dict[str, pl.LazyFrame] = {}
    global_plans = {n: p for n, p in plans.items() if isinstance(p, GlobalPlan)}
    if global_plans:
        scope = _user_rows(rows, universe, keys, cols)
        partials = {name: plan.partial(scope) for name, plan in global_plans.items()}
    return per_user, partials


def user_partials(job: Job, lf: pl.LazyFrame) -> dict[str, pl.LazyFrame]:
    """The global partials of :func:`build`, with the user's column names."""
    return {name: job.outer(part) for name, part in build(job, lf)[1].items()}


def _user_rows(rows: pl.LazyFrame, users: UsersArg, keys: list[str], cols: Columns) -> pl.LazyFrame:
    """The rows of the evaluated users (what global and item metrics aggregate).

    Decided on the rows themselves (a window per user, or a semi join with an explicit
    list), not by joining back the per-user frame, which would compute it twice.
    """
    if isinstance(users, str):
        truth = pl.col(cols.relevance).is_not_null().any().over(keys)
        # recs: recommended to in any by group (see universe_filter).
        recs = pl.col(cols.order).is_not_null().any().over(keys[-1])
        keep = {"truth": truth, "recs": recs, "both": truth & recs}.get(users)
        return rows if keep is None else rows.filter(keep)
    user = keys[-1]
    wanted = wanted_users(users, user, rows.collect_schema()[user]).to_frame().lazy()
    return rows.join(wanted, on=user, how="semi", nulls_equal=True)


def _restrict_users(
    lf: pl.LazyFrame,
    users: UsersArg,
    keys: list[str],
    by: list[str],
    groups: pl.LazyFrame | None = None,
) -> pl.LazyFrame:
    if isinstance(users, str):
        check_choice("users", users, USER_UNIVERSES)
        # "recs" is decided over the whole by: a user recommended to by any system is
        # evaluated for every system whose rows hold it (its truth rows, in a frame
        # from join(by=)), so that systems are compared on the same users. Buckets and
        # Spark partitions hold whole users, so the window sees all of a user's groups.
        recs = pl.col(_HAS_RECS).any().over(keys[-1]) if by else pl.col(_HAS_RECS)
        keep = {
            "truth": pl.col(_HAS_TRUTH),
            "recs": recs,
            "both": pl.col(_HAS_TRUTH) & recs,
            "all": pl.lit(True),
        }[users]
        return lf.filter(keep)
    user = keys[-1]
    wanted = wanted_users(users, user, lf.collect_schema()[user])
    universe = wanted.to_frame().lazy()
    if by:
        every_group = lf.select(by).unique() if groups is None else groups.select(by)
        universe = every_group.join(universe, how="cross")
    return universe.join(lf, on=keys, how="left", nulls_equal=True)


def wanted_users(users: Any, user: str, dtype: pl.DataType) -> pl.Series:
    """An explicit ``users=`` list as a distinct Series of the user column's dtype."""
    if isinstance(users, pl.DataFrame):
        if user not in users.columns:
            msg = f"users frame must have a {user!r} column, got columns {users.columns}"
            raise ValueError(msg)
        wanted = users.get_column(user)
    elif isinstance(users, pl.Series):
        wanted = users
    else:
        wanted = pl.Series(user, list(users))
    if wanted.null_count():
        msg = (
            f"users= holds {wanted.null_count()} null id(s); list user ids only (a null "
            "would be evaluated as a user of its own)"
        )
        raise ValueError(msg)
    return _cast_ids(wanted.rename(user), dtype).unique()


def _cast_ids(ids: pl.Series, dtype: pl.DataType) -> pl.Series:
    """Cast user ids to the user column's dtype, refusing lossy or cross-kind casts."""
    textual = (pl.String, pl.Categorical, pl.Enum)
    same_kind = (
        ids.dtype == dtype
        or (ids.dtype.is_integer() and dtype.is_integer())
        or (isinstance(ids.dtype, textual) and isinstance(dtype, textual))
        or (ids.dtype == pl.Null)
    )
    if not same_kind:
        msg = f"users= ids must have the user column's dtype {dtype}, got {ids.dtype}"
        raise TypeError(msg)
    try:
        return ids.cast(dtype, strict=True)
    except pl.exceptions.PolarsError:
        msg = f"users= ids do not fit the user column's dtype {dtype}: {ids.head(3).to_list()}"
        raise TypeError(msg) from None
