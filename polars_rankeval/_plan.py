"""The evaluation plan: what ``evaluate`` builds once and runs on all data or per bucket.

A :class:`Job` holds every decision taken before the data is touched (metrics, columns,
policies). :meth:`Job.build` turns rows of whole users into a per-user frame and the
partial aggregates of the global metrics; :meth:`Job.finish` turns those into the result.
Because per-user values only depend on the user's own rows and global partials merge
exactly (sums, minima, maxima), running ``build`` on all rows at once or on disjoint
buckets of users and concatenating gives the same result: that is how the in-memory,
bucketed (out-of-core) and Spark engines share one code path.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from polars_rankeval._features import Features
from polars_rankeval._types import (
    AGGREGATIONS,
    EMPTY_POLICIES,
    TIE_POLICIES,
    USER_UNIVERSES,
    Aggregation,
    Columns,
    EmptyPolicy,
    TiePolicy,
    UserUniverse,
    check_choice,
)
from polars_rankeval._validate import check_schema
from polars_rankeval.registry import FramePlan, GlobalPlan, Metric, parse_metric

_HAS_TRUTH = "__prk_has_truth"
_HAS_RECS = "__prk_has_recs"
RESERVED = ("n_users", "n_skipped")
GMEAN_FLOOR = 1e-5
"""Values below this are raised to it before a geometric mean (trec_eval's gm_map)."""

MetricsArg = str | Metric | Iterable[str | Metric]
UsersArg = UserUniverse | Sequence[Any] | pl.Series | pl.DataFrame
NItemsArg = int | pl.DataFrame | pl.LazyFrame | pl.Series | None


def parse_metrics(metrics: MetricsArg) -> list[Metric]:
    """Parse one metric or a list of metrics; reject empty lists and duplicates."""
    items = [metrics] if isinstance(metrics, str | Metric) else list(metrics)
    if not items:
        msg = "metrics must name at least one metric, e.g. ['ndcg@10', 'recall@20']"
        raise ValueError(msg)
    parsed = [parse_metric(m) for m in items]
    seen: set[str] = set()
    for metric in parsed:
        if metric.name in seen:
            msg = f"metric {metric.name!r} is requested twice"
            raise ValueError(msg)
        seen.add(metric.name)
    return parsed


def aggregations(aggregate: Aggregation | Sequence[Aggregation]) -> list[Aggregation]:
    """Normalise ``aggregate=`` to a non-empty list of distinct aggregations."""
    aggs = [aggregate] if isinstance(aggregate, str) else list(aggregate)
    if not aggs:
        msg = f"aggregate must name at least one of {', '.join(AGGREGATIONS)}"
        raise ValueError(msg)
    for agg in aggs:
        check_choice("aggregate", agg, AGGREGATIONS)
    if len(set(aggs)) != len(aggs):
        msg = f"aggregate lists an aggregation twice: {aggs!r}"
        raise ValueError(msg)
    return aggs


def summary_name(aggregation: str, metric: str) -> str:
    """Column name of one aggregation of one metric: the plain name for the mean."""
    return metric if aggregation == "mean" else f"{aggregation}({metric})"


@dataclass
class Job:
    """Everything decided before the data is read; see the module docstring."""

    cols: Columns
    by: list[str]
    metrics: list[Metric]
    ties: TiePolicy = "expected"
    users: UsersArg = "truth"
    empty: EmptyPolicy = "skip"
    aggregate: list[Aggregation] = field(default_factory=lambda: ["mean"])
    per_user: bool = False
    n_items: int | None = None
    rating_range: tuple[float, float] | None = None
    kinds: dict[str, str] = field(default_factory=dict)
    items: pl.LazyFrame | None = None
    per_item: bool = False
    extra: list[str] = field(default_factory=list)

    @classmethod
    def create(
        cls,
        schema: pl.Schema,
        metrics: MetricsArg,
        cols: Columns,
        *,
        by: str | Sequence[str] | None,
        ties: TiePolicy,
        users: UsersArg,
        empty: EmptyPolicy,
        aggregate: Aggregation | Sequence[Aggregation],
        per_user: bool,
        per_item: bool = False,
        items: pl.DataFrame | pl.LazyFrame | None = None,
    ) -> Job:
        """Check the options against the schema and classify the metrics."""
        parsed = parse_metrics(metrics)
        check_choice("ties", ties, TIE_POLICIES)
        check_choice("empty", empty, EMPTY_POLICIES)
        if isinstance(users, str):
            check_choice("users", users, USER_UNIVERSES)
        by_cols = [by] if isinstance(by, str) else list(by or [])
        check_schema(schema, cols, by_cols)
        job = cls(cols, by_cols, parsed, ties, users, empty, aggregations(aggregate), per_user)
        job.items = _side_table(items, schema, cols.item)
        job.per_item = per_item
        if per_user and per_item:
            msg = "per_user and per_item cannot both be True"
            raise ValueError(msg)
        names = {summary_name(a, m.name) for a in job.aggregate for m in parsed}
        for name in sorted(names | {m.name for m in parsed}):
            if name in (*job.keys, *RESERVED):
                msg = f"metric name {name!r} collides with an output column"
                raise ValueError(msg)
        # Classify the metrics by what their kernels return (a dry run on a provider
        # with placeholder statistics: kernels only build expressions here).
        probe = Features(cols, ties, job.keys, n_items=1, rating_range=(0.0, 1.0))
        for metric in parsed:
            out = metric.plan(probe)
            job.kinds[metric.name] = (
                ("item" if metric.spec.scope == "item" else "global")
                if isinstance(out, GlobalPlan)
                else "frame"
                if isinstance(out, FramePlan)
                else "expr"
            )
        side = job.items.collect_schema() if job.items is not None else pl.Schema()
        job.extra = list(probe.extra)
        for name in probe.extra:
            if name not in schema and name not in side:
                where = "the data" + (" or the items= table" if job.items is not None else "")
                msg = f"column {name!r} (read by a requested metric) not found in {where}"
                raise ValueError(msg)
        item_names = [m.name for m in parsed if job.kinds[m.name] == "item"]
        if per_item and len(item_names) != len(parsed):
            others = [m.name for m in parsed if job.kinds[m.name] != "item"]
            msg = (
                f"per_item=True evaluates item metrics only; {', '.join(others)} are not "
                "item metrics (see list_metrics(), family 'item')"
            )
            raise ValueError(msg)
        if item_names and not per_item:
            msg = (
                f"metric(s) {', '.join(item_names)} have one value per item; evaluate them "
                "with per_item=True"
            )
            raise ValueError(msg)
        if per_user and job.global_names:
            msg = (
                f"metric(s) {', '.join(job.global_names)} have one value per by group, not "
                "per user; leave them out of a per-user evaluation"
            )
            raise ValueError(msg)
        return job

    # ------------------------------------------------------------------ properties
    @property
    def keys(self) -> list[str]:
        return [*self.by, self.cols.user]

    @property
    def user_names(self) -> list[str]:
        return [m.name for m in self.metrics if self.kinds[m.name] in ("expr", "frame")]

    @property
    def global_names(self) -> list[str]:
        return [m.name for m in self.metrics if self.kinds[m.name] == "global"]

    @property
    def item_names(self) -> list[str]:
        return [m.name for m in self.metrics if self.kinds[m.name] == "item"]

    @property
    def partial_names(self) -> list[str]:
        """Metrics computed from merged partials (global and item metrics)."""
        return [m.name for m in self.metrics if self.kinds[m.name] in ("global", "item")]

    @property
    def needs(self) -> set[str]:
        return {need for m in self.metrics for need in m.spec.needs}

    def columns(self, schema: pl.Schema) -> list[str]:
        """The columns of the data the plan reads (extra ones included)."""
        cols = self.cols
        own = [c for c in self.extra if c in schema]
        return list(dict.fromkeys([*self.keys, cols.item, cols.order, cols.relevance, *own]))

    def features(self) -> Features:
        """The window feature provider, with the data-wide statistics filled in."""
        return Features(
            self.cols, self.ties, self.keys, n_items=self.n_items, rating_range=self.rating_range
        )

    # ------------------------------------------------------------------ statistics
    def compute_statistics(
        self,
        lf: pl.LazyFrame,
        n_items: NItemsArg,
        rating_range: tuple[float, float] | None,
    ) -> None:
        """Fill in the data-wide statistics the metrics need (one streaming pass at most).

        ``n_items``: an int; or a frame/series of catalog items (every item of the data
        must be in it); default the number of distinct items in the whole input (all
        rows, recommended or judged, over all by groups). ``rating_range``: default the
        minimum and maximum relevance over the judged rows.
        """
        needs = self.needs
        item = self.cols.item
        if n_items is not None:
            self.n_items = _catalog_size(n_items, lf, item)
        if rating_range is not None:
            low, high = (float(v) for v in rating_range)
            if not (math.isfinite(low) and math.isfinite(high) and high > low):
                msg = f"rating_range must be (low, high) with low < high, got {rating_range!r}"
                raise ValueError(msg)
            self.rating_range = (low, high)
        wanted: dict[str, pl.Expr] = {}
        if "n_items" in needs and self.n_items is None:
            wanted["n_items"] = pl.col(item).n_unique()
        if "rating_range" in needs and self.rating_range is None:
            rel = pl.col(self.cols.relevance).cast(pl.Float64)
            wanted["low"], wanted["high"] = rel.min(), rel.max()
        if not wanted:
            return
        found = lf.select(**wanted).collect(engine="streaming").row(0, named=True)
        if "n_items" in found:
            self.n_items = int(found["n_items"])
        if "low" in found:
            low, high = found["low"], found["high"]
            if low is None or high is None or not high > low:
                msg = (
                    f"cannot derive the rating range from relevance column "
                    f"{self.cols.relevance!r} (min {low!r}, max {high!r}); pass rating_range="
                )
                raise ValueError(msg)
            self.rating_range = (float(low), float(high))

    # ------------------------------------------------------------------ the plan
    def build(
        self, lf: pl.LazyFrame, users: UsersArg | None = None
    ) -> tuple[pl.LazyFrame, dict[str, pl.LazyFrame]]:
        """Per-user values (keys + user-level metrics) and the global partials.

        ``lf`` holds whole users (all rows of every user in it). ``users`` overrides
        the job's user universe (the bucketed engine passes each bucket's share of an
        explicit list).
        """
        features = self.features()
        plans = {m.name: m.plan(features) for m in self.metrics}
        cols, keys = self.cols, self.keys
        schema = lf.collect_schema()
        base = lf.select(self.columns(schema))
        side = [c for c in features.extra if c not in schema]
        if side and self.items is not None:
            base = base.join(self.items.select(cols.item, *side), on=cols.item, how="left")
        rows = features.apply(base)
        if any(not isinstance(p, pl.Expr) for p in plans.values()):
            # Sub-plans read the same rows as the group_by: compute the features once.
            rows = rows.cache()
        exprs = [p for p in plans.values() if isinstance(p, pl.Expr)]
        per_user = rows.group_by(keys).agg(
            *exprs,
            pl.col(cols.relevance).is_not_null().any().alias(_HAS_TRUTH),
            pl.col(cols.order).is_not_null().any().alias(_HAS_RECS),
        )
        for name, plan in plans.items():
            if isinstance(plan, FramePlan):
                value = plan.build(rows).select(*keys, pl.col("value").cast(pl.Float64).alias(name))
                per_user = per_user.join(value, on=keys, how="left", nulls_equal=True)
        universe = self.users if users is None else users
        per_user = _restrict_users(per_user, universe, keys, self.by)
        per_user = per_user.select(*keys, *self.user_names)
        partials: dict[str, pl.LazyFrame] = {}
        global_plans = {n: p for n, p in plans.items() if isinstance(p, GlobalPlan)}
        if global_plans:
            scope = _user_rows(rows, universe, keys, cols)
            partials = {name: plan.partial(scope) for name, plan in global_plans.items()}
        return per_user, partials

    def finish(
        self, per_user: pl.LazyFrame, partials: dict[str, list[pl.LazyFrame]]
    ) -> pl.LazyFrame:
        """The result from per-user values and the (unmerged) partials of the globals."""
        names = self.user_names
        per_user = per_user.sort(self.keys)
        if self.empty == "zero":
            per_user = per_user.with_columns(pl.col(names).fill_null(0.0))
        elif self.empty == "error":
            # Checked when the result is collected (lazy in, lazy out): the callback
            # sees the per-user values, raises on an undefined one, else passes them on.
            keys, schema = self.keys, per_user.collect_schema()

            def check(frame: pl.DataFrame) -> pl.DataFrame:
                _raise_on_undefined(frame, names, keys)
                return frame

            per_user = per_user.map_batches(
                check,
                schema=schema,
                predicate_pushdown=False,
                projection_pushdown=False,
                slice_pushdown=False,
            )
        if self.per_user:
            return per_user
        if self.per_item:
            on = [*self.by, self.cols.item]
            return self.finalize_globals(partials, self.item_names, on).sort(on)
        summary = summarize(per_user, names, self.by, aggregate=self.aggregate)
        if self.global_names:
            values = self.finalize_globals(partials, self.global_names, self.by)
            if self.by:
                summary = summary.join(values, on=self.by, how="full", coalesce=True)
                summary = summary.sort(self.by)
            else:
                summary = pl.concat([summary, values], how="horizontal")
        columns = [
            *self.by,
            *[
                summary_name(agg, m.name) if self.kinds[m.name] != "global" else m.name
                for m in self.metrics
                for agg in (self.aggregate if self.kinds[m.name] != "global" else ["mean"])
            ],
            *RESERVED,
        ]
        out = summary.select(columns)
        if self.global_names:
            out = out.with_columns(pl.col(list(RESERVED)).fill_null(0))
        return out

    def finalize_globals(
        self,
        partials: dict[str, list[pl.LazyFrame]],
        names: list[str] | None = None,
        on: list[str] | None = None,
    ) -> pl.LazyFrame:
        """Merge the partials of global (or item) metrics and finalize them.

        Returns the ``on`` columns (default: the by-columns) and one column per metric.
        """
        features = self.features()
        names = self.global_names if names is None else names
        on = self.by if on is None else on
        values: pl.LazyFrame | None = None
        for name in names:
            metric = next(m for m in self.metrics if m.name == name)
            plan = metric.plan(features)
            if not isinstance(plan, GlobalPlan):  # pragma: no cover - classified in create
                msg = f"metric {name!r} is not a global metric"
                raise TypeError(msg)
            group = [*self.by, *plan.group]
            merged_input = pl.concat(partials.get(name, []), how="vertical_relaxed")
            combine = {
                "sum": lambda c: pl.col(c).sum(),
                "min": lambda c: pl.col(c).min(),
                "max": lambda c: pl.col(c).max(),
            }
            aggs = [combine[how](part).alias(part) for part, how in plan.combine.items()]
            merged = merged_input.group_by(group).agg(aggs) if group else merged_input.select(aggs)
            value = plan.finalize(merged, list(self.by)).select(
                *on, pl.col("value").cast(pl.Float64).alias(name)
            )
            if self.empty == "zero":
                value = value.with_columns(pl.col(name).fill_null(0.0))
            elif self.empty == "error":
                collected = value.collect()
                missing = collected.get_column(name).null_count()
                if missing:
                    msg = (
                        f"metric {name!r} is undefined for {missing} by group(s) (e.g. no "
                        "relevant or no non-relevant row); "
                        "pass empty='skip' or empty='zero'"
                    )
                    raise ValueError(msg)
                value = collected.lazy()
            if values is None:
                values = value
            elif on:
                values = values.join(value, on=on, how="full", coalesce=True, nulls_equal=True)
            else:
                values = pl.concat([values, value], how="horizontal")
        if values is None:  # pragma: no cover - only called with global metrics
            msg = "no global metric to finalize"
            raise ValueError(msg)
        return values


def _side_table(
    items: pl.DataFrame | pl.LazyFrame | None, schema: pl.Schema, item: str
) -> pl.LazyFrame | None:
    """Check the item side table: an item column of the data's dtype, one row per item."""
    if items is None:
        return None
    if not isinstance(items, pl.DataFrame | pl.LazyFrame):
        msg = f"items must be a polars DataFrame or LazyFrame, got {type(items).__name__}"
        raise TypeError(msg)
    side = items.lazy()
    side_schema = side.collect_schema()
    if item not in side_schema:
        msg = f"the items= table needs an {item!r} column, got {side_schema.names()}"
        raise ValueError(msg)
    if side_schema[item] != schema[item]:
        msg = (
            f"item column {item!r} has dtype {side_schema[item]} in items= but "
            f"{schema[item]} in the data; cast one of them"
        )
        raise TypeError(msg)
    dups = side.group_by(item).len().filter(pl.col("len") > 1).collect()
    if dups.height:
        msg = (
            f"the items= table has {dups.height} item(s) on more than one row, e.g. "
            f"{dups.get_column(item).head(3).to_list()}"
        )
        raise ValueError(msg)
    return side


def _catalog_size(n_items: NItemsArg, lf: pl.LazyFrame, item: str) -> int:
    if isinstance(n_items, bool) or not isinstance(
        n_items, int | pl.DataFrame | pl.LazyFrame | pl.Series
    ):
        msg = (
            "n_items must be an int or a frame (or series) of catalog items, "
            f"got {type(n_items).__name__}"
        )
        raise TypeError(msg)
    if isinstance(n_items, int):
        if n_items <= 0:
            msg = f"n_items must be a positive integer, got {n_items}"
            raise ValueError(msg)
        found = lf.select(pl.col(item).n_unique()).collect(engine="streaming").item()
        if found > n_items:
            msg = f"n_items={n_items} is smaller than the {found} distinct items in the data"
            raise ValueError(msg)
        return n_items
    if isinstance(n_items, pl.Series):
        catalog = n_items.rename(item).to_frame().lazy()
    else:
        catalog = n_items.lazy()
        if item not in catalog.collect_schema():
            msg = f"the catalog frame needs an {item!r} column"
            raise ValueError(msg)
        catalog = catalog.select(item)
    catalog = catalog.unique()
    size = catalog.select(pl.len()).collect().item()
    missing = (
        lf.select(item).unique().join(catalog, on=item, how="anti").collect(engine="streaming")
    )
    if missing.height:
        msg = (
            f"{missing.height} item(s) of the data are not in the catalog, e.g. "
            f"{missing.get_column(item).head(5).to_list()}"
        )
        raise ValueError(msg)
    if size == 0:
        msg = "the catalog frame is empty"
        raise ValueError(msg)
    return int(size)


def summarize(
    per_user: pl.LazyFrame,
    names: list[str],
    by: list[str],
    *,
    aggregate: Aggregation | Sequence[Aggregation] = "mean",
) -> pl.LazyFrame:
    """Aggregate per-user values per by-group, with ``n_users`` and ``n_skipped``.

    A user with any undefined (null) value is skipped from every aggregate of the row,
    so all the values of one summary row are over the same ``n_users - n_skipped``
    users. Aggregations: ``mean`` (named by the metric itself), ``gmean`` (geometric;
    values below ``1e-5`` are raised to ``1e-5`` first, as trec_eval's gm_map does;
    null if a value is negative), ``hmean`` (harmonic; 0 if a value is 0, null if one
    is negative), ``qmean`` (quadratic, the root mean square), ``median`` and ``std``
    (the sample standard deviation, ddof=1); all but the mean are named
    ``"<aggregation>(<metric>)"``, e.g. ``gmean(map)``.
    """
    aggs_wanted = aggregations(aggregate)
    # Without per-user metrics (only global ones requested) every user counts as defined.
    defined = pl.all_horizontal([pl.col(n).is_not_null() for n in names]) if names else pl.lit(True)
    aggs = [
        _aggregate(agg, pl.col(n).filter(defined)).alias(summary_name(agg, n))
        for n in names
        for agg in aggs_wanted
    ]
    aggs += [
        pl.len().cast(pl.Int64).alias("n_users"),
        (~defined).sum().cast(pl.Int64).alias("n_skipped"),
    ]
    if by:
        return per_user.group_by(by).agg(aggs).sort(by)
    return per_user.select(aggs)


def _aggregate(aggregation: str, x: pl.Expr) -> pl.Expr:
    negative = (x < 0).any()
    if aggregation == "gmean":
        value = x.clip(lower_bound=GMEAN_FLOOR).log().mean().exp()
        return pl.when(negative).then(None).otherwise(value)
    if aggregation == "hmean":
        value = pl.when((x == 0).any()).then(0.0).otherwise(x.len() / (1.0 / x).sum())
        return pl.when(negative).then(None).otherwise(value)
    if aggregation == "qmean":
        return (x * x).mean().sqrt()
    if aggregation == "median":
        return x.median()
    if aggregation == "std":
        return x.std(ddof=1)
    return x.mean()


def _user_rows(rows: pl.LazyFrame, users: UsersArg, keys: list[str], cols: Columns) -> pl.LazyFrame:
    """The rows of the evaluated users (what global and item metrics aggregate).

    Decided on the rows themselves (a window per user, or a semi join with an explicit
    list), not by joining back the per-user frame, which would compute it twice.
    """
    if isinstance(users, str):
        truth = pl.col(cols.relevance).is_not_null().any().over(keys)
        recs = pl.col(cols.order).is_not_null().any().over(keys)
        keep = {"truth": truth, "recs": recs, "both": truth & recs}.get(users)
        return rows if keep is None else rows.filter(keep)
    user = keys[-1]
    wanted = wanted_users(users, user, rows.collect_schema()[user]).to_frame().lazy()
    return rows.join(wanted, on=user, how="semi", nulls_equal=True)


def _restrict_users(
    lf: pl.LazyFrame, users: UsersArg, keys: list[str], by: list[str]
) -> pl.LazyFrame:
    if isinstance(users, str):
        check_choice("users", users, USER_UNIVERSES)
        keep = {
            "truth": pl.col(_HAS_TRUTH),
            "recs": pl.col(_HAS_RECS),
            "both": pl.col(_HAS_TRUTH) & pl.col(_HAS_RECS),
            "all": pl.lit(True),
        }[users]
        return lf.filter(keep)
    user = keys[-1]
    wanted = wanted_users(users, user, lf.collect_schema()[user])
    universe = wanted.to_frame().lazy()
    if by:
        universe = lf.select(by).unique().join(universe, how="cross")
    return universe.join(lf, on=keys, how="left", nulls_equal=True)


def wanted_users(users: Any, user: str, dtype: pl.DataType) -> pl.Series:
    """An explicit ``users=`` list as a distinct Series of the user column's dtype."""
    if isinstance(users, pl.DataFrame):
        if user not in users.columns:
            msg = f"users frame must have a {user!r} column, got columns {users.columns}"
            raise ValueError(msg)
        wanted = users.get_column(user)
    else:
        wanted = pl.Series(user, list(users))
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


def _raise_on_undefined(frame: pl.DataFrame, names: list[str], keys: list[str]) -> None:
    for name in names:
        bad = frame.filter(pl.col(name).is_null())
        if bad.height:
            example = bad.select(keys).head(5).rows()
            msg = (
                f"metric {name!r} is undefined for {bad.height} user(s) (e.g. no relevant "
                f"item), first {example}; pass empty='skip' or empty='zero'"
            )
            raise ValueError(msg)
