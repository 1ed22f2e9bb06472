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
from typing import Any, Literal

import polars as pl

from polars_rankeval import _head
from polars_rankeval._features import Features
from polars_rankeval._ties import resolve_ties
from polars_rankeval._types import (
    AGGREGATIONS,
    EMPTY_POLICIES,
    SUMMARY_FORMS,
    USER_UNIVERSES,
    Aggregation,
    Columns,
    EmptyPolicy,
    SummaryForm,
    TiePolicy,
    UserUniverse,
    check_choice,
)
from polars_rankeval._validate import check_schema
from polars_rankeval.registry import CurvePlan, FramePlan, GlobalPlan, Metric, expand_metric

_HAS_TRUTH = "__prk_has_truth"
_HAS_RECS = "__prk_has_recs"
RESERVED = ("n_users", "n_skipped")
MAX_EXP_RELEVANCE = 512
"""gain=exp refuses relevance from this value on: 2^rel - 1 is infinite in float64 from
1024, and sums of 2^32 such gains from 992 (then ndcg would be inf / inf = NaN)."""
LONG_COLUMNS = ("metric", "aggregation", "value", "n_users", "n_skipped")
"""Columns of ``summary="long"`` after the by-columns."""
GLOBAL_AGGREGATION = "global"
"""The ``aggregation`` of a global metric's row in the long summary (its one value)."""
GMEAN_FLOOR = 1e-5
"""Values below this are raised to it before a geometric mean (trec_eval's gm_map)."""

INTERNAL = "__prk@"
"""Prefix of the names the plan gives the input columns (see :func:`internal_names`)."""

MetricsArg = str | Metric | Iterable[str | Metric]
UsersArg = UserUniverse | Sequence[Any] | pl.Series | pl.DataFrame
NItemsArg = int | pl.DataFrame | pl.LazyFrame | pl.Series | None


def parse_metrics(metrics: MetricsArg) -> list[Metric]:
    """Parse one metric or a list of metrics; reject empty lists and duplicates.

    A list or range of cutoffs (``ndcg@1..100``) gives one metric per cutoff.
    """
    items = [metrics] if isinstance(metrics, str | Metric) else list(metrics)
    if not items:
        msg = "metrics must name at least one metric, e.g. ['ndcg@10', 'recall@20']"
        raise ValueError(msg)
    parsed = [metric for m in items for metric in expand_metric(m)]
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


def count_name(metric: str) -> str:
    """Column name of the number of users a per-user metric's aggregates cover."""
    return f"n_users({metric})"


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
    order_dtype: pl.DataType | None = None
    names: dict[str, str] = field(default_factory=dict)
    summary: SummaryForm = "wide"

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
        summary: SummaryForm = "wide",
    ) -> Job:
        """Check the options against the schema and classify the metrics."""
        parsed = parse_metrics(metrics)
        resolve_ties(ties)
        check_choice("empty", empty, EMPTY_POLICIES)
        check_choice("summary", summary, SUMMARY_FORMS)
        if isinstance(users, str):
            check_choice("users", users, USER_UNIVERSES)
        by_cols = [by] if isinstance(by, str) else list(by or [])
        check_schema(schema, cols, by_cols)
        job = cls(cols, by_cols, parsed, ties, users, empty, aggregations(aggregate), per_user)
        job.items = _side_table(items, schema, cols.item)
        job.per_item = per_item
        job.summary = summary
        if summary == "long":
            check_long_names(by_cols)
        if per_user and per_item:
            msg = "per_user and per_item cannot both be True"
            raise ValueError(msg)
        names = {summary_name(a, m.name) for a in job.aggregate for m in parsed}
        names |= {count_name(m.name) for m in parsed}
        taken = [*job.keys, cols.item] if per_item else job.keys
        for name in sorted(names | {m.name for m in parsed}):
            if name in (*taken, *RESERVED):
                msg = (
                    f"metric name {name!r} collides with the output column {name!r} "
                    "(a by, user or item column, or n_users / n_skipped); rename that column"
                )
                raise ValueError(msg)
        for column in by_cols if not per_user else []:
            if column in RESERVED:
                msg = (
                    f"by column {column!r} collides with the summary's {column!r} column; rename it"
                )
                raise ValueError(msg)
        # Classify the metrics by what their kernels return (a dry run on a provider
        # with placeholder statistics: kernels only build expressions here).
        job.order_dtype = schema[cols.order]
        probe = Features(
            cols, ties, job.keys, n_items=1, rating_range=(0.0, 1.0), order_dtype=job.order_dtype
        )
        # The cutoffs of one list or range share their kind: one dry run for them all.
        seen: dict[tuple[Any, ...], str] = {}
        for metric in parsed:
            key = (metric.spec.name, metric.options, metric.cutoffs)
            if metric.cutoffs and key in seen:
                job.kinds[metric.name] = seen[key]
                continue
            out = metric.plan(probe)
            job.kinds[metric.name] = seen[key] = (
                ("item" if metric.spec.scope == "item" else "global")
                if isinstance(out, GlobalPlan)
                else "frame"
                if isinstance(out, FramePlan)
                else "expr"
            )
        side = job.items.collect_schema() if job.items is not None else pl.Schema()
        job.extra = list(probe.extra)
        job.names = internal_names(cols, by_cols, job.extra)
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
    def icols(self) -> Columns:
        """The column names inside the plan (:func:`internal_names`)."""
        c, n = self.cols, self.names
        return Columns(
            user=n[c.user],
            item=n[c.item],
            score=n[c.order] if c.score is not None else None,
            relevance=n[c.relevance],
            rank=n[c.order] if c.rank is not None else None,
        )

    @property
    def iby(self) -> list[str]:
        return [self.names[b] for b in self.by]

    @property
    def ikeys(self) -> list[str]:
        return [*self.iby, self.names[self.cols.user]]

    def outer(self, lf: pl.LazyFrame) -> pl.LazyFrame:
        """``lf`` with the plan's column names turned back into the user's."""
        present = set(lf.collect_schema().names())
        back = {inner: outer for outer, inner in self.names.items() if inner in present}
        return lf.rename(back)

    def inner(self, lf: pl.LazyFrame) -> pl.LazyFrame:
        """``lf`` (user names, e.g. partials of :func:`global_partials`) with plan names."""
        present = set(lf.collect_schema().names())
        return lf.rename({o: i for o, i in self.names.items() if o in present})

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

    def curve_groups(self) -> list[list[Metric]]:
        """Metrics computed together by a curve kernel: the cutoffs of one request.

        A group is the metrics expanded from one list or range of cutoffs (same metric,
        same options) whose metric has a curve kernel; the others are computed alone.
        """
        groups: dict[tuple[Any, ...], list[Metric]] = {}
        for metric in self.metrics:
            has_kernel = metric.spec.curve is not None and self.kinds[metric.name] == "expr"
            if metric.cutoffs and has_kernel:
                key = (metric.spec.name, metric.options, metric.cutoffs)
                groups.setdefault(key, []).append(metric)
        return list(groups.values())

    def features(self) -> Features:
        """The window feature provider, with the data-wide statistics filled in."""
        return Features(
            self.icols,
            self.ties,
            self.ikeys,
            n_items=self.n_items,
            rating_range=self.rating_range,
            order_dtype=self.order_dtype,
            columns=self.names,
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
        exp_gain = [m.name for m in self.metrics if dict(m.options).get("gain") == "exp"]
        if exp_gain:
            wanted["max_rel"] = pl.col(self.cols.relevance).cast(pl.Float64).max()
        if not wanted:
            return
        found = lf.select(**wanted).collect(engine="streaming").row(0, named=True)
        top = found.get("max_rel")
        if top is not None and top >= MAX_EXP_RELEVANCE:
            msg = (
                f"relevance column {self.cols.relevance!r} holds {top!r}: gain=exp (2^rel - 1) "
                f"takes relevance below {MAX_EXP_RELEVANCE} (beyond, sums of gains overflow "
                f"float64) in {', '.join(exp_gain)}; use gain=linear or rescale the relevance"
            )
            raise ValueError(msg)
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
        self,
        lf: pl.LazyFrame,
        users: UsersArg | None = None,
        groups: pl.LazyFrame | None = None,
    ) -> tuple[pl.LazyFrame, dict[str, pl.LazyFrame]]:
        """Per-user values (keys + user-level metrics) and the global partials.

        ``lf`` holds whole users (all rows of every user in it). ``users`` overrides
        the job's user universe (the bucketed engine passes each bucket's share of an
        explicit list). ``groups``: the distinct by values of the *whole* input, which
        an explicit user list is crossed with (default: those of ``lf``; a bucket
        holds only some of them).
        """
        features = self.features()
        together = self.curve_groups()
        in_curves = {m.name for group in together for m in group}
        plans = {m.name: m.plan(features) for m in self.metrics if m.name not in in_curves}
        curves: list[tuple[CurvePlan, list[Metric]]] = []
        for group in together:
            first = group[0]
            kernel = first.spec.curve
            if kernel is None:  # pragma: no cover - curve_groups keeps kernels only
                continue
            ks = tuple(m.k for m in group if m.k is not None)
            curves.append((kernel(features, ks, **dict(first.options)), group))
        curve_aggs = {name: agg for plan, _ in curves for name, agg in plan.aggs.items()}
        cols, keys, names = self.icols, self.ikeys, self.names
        schema = lf.collect_schema()
        # The plan renames the input columns (internal_names): its own columns (ranks,
        # counts, partial sums, "value", "len", ...) can never collide with them.
        base = lf.select([pl.col(c).alias(names[c]) for c in self.columns(schema)])
        side = [c for c in features.extra if c not in schema]
        if side and self.items is not None:
            side_cols = [pl.col(c).alias(names[c]) for c in side]
            table = self.items.select(pl.col(self.cols.item).alias(cols.item), *side_cols)
            base = base.join(table, on=cols.item, how="left")
        rows = features.apply(base)
        if any(not isinstance(p, pl.Expr) for p in plans.values()):
            # Sub-plans read the same rows as the group_by: compute the features once.
            rows = rows.cache()
        exprs = [p for p in plans.values() if isinstance(p, pl.Expr)]
        per_user = rows.group_by(keys).agg(
            *exprs,
            *[agg.alias(name) for name, agg in curve_aggs.items()],
            pl.col(cols.relevance).is_not_null().any().alias(_HAS_TRUTH),
            pl.col(cols.order).is_not_null().any().alias(_HAS_RECS),
        )
        if _head.applies(self):  # the sorted-head path: every metric reads the top k
            per_user = _head.per_user(self, base)
        elif curves:
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
        universe = self.users if users is None else users
        if not isinstance(universe, str):
            ids = wanted_users(universe, self.cols.user, schema[self.cols.user])
            universe = ids.rename(cols.user)
        if groups is not None:
            groups = groups.select([pl.col(b).alias(names[b]) for b in self.by])
        per_user = _restrict_users(per_user, universe, keys, self.iby, groups)
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
        """The result from per-user values and the (unmerged) partials of the globals.

        ``empty=`` is applied here: ``zero`` fills, ``error`` raises, ``skip`` and
        ``skip_row`` are :func:`summarize`'s rules (the in-memory and bucketed engines
        end here; Spark runs the same :func:`summarize` per by group).
        """
        names = self.user_names
        by, keys = self.iby, self.ikeys
        per_user = per_user.sort(keys)
        if self.empty == "zero":
            per_user = per_user.with_columns(pl.col(names).fill_null(0.0))
        elif self.empty == "error":
            # Checked when the result is collected (lazy in, lazy out): the callback
            # sees the per-user values, raises on an undefined one, else passes them on.
            schema = per_user.collect_schema()

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
            return self.outer(per_user)
        if self.per_item:
            on = [*by, self.icols.item]
            return self.outer(self._finalize(partials, self.item_names, on).sort(on))
        empty: Literal["skip", "skip_row"] = "skip_row" if self.empty == "skip_row" else "skip"
        summary = summarize(per_user, names, by, aggregate=self.aggregate, empty=empty)
        if self.global_names:
            values = self._finalize(partials, self.global_names, by)
            if by:
                summary = summary.join(values, on=by, how="full", coalesce=True)
                summary = summary.sort(by)
            else:
                summary = pl.concat([summary, values], how="horizontal")
        out = summary.select(summary_columns(self.metrics, self.kinds, by, self.aggregate))
        if self.global_names:
            counts = [count_name(n) for n in names]
            out = out.with_columns(pl.col([*counts, *RESERVED]).fill_null(0))
        if self.summary == "long":
            out = long_summary(out, by, names, self.aggregate, self.global_names)
        return self.outer(out)

    @property
    def summary_columns(self) -> list[str]:
        """The columns of the wide summary, in order (the user's names)."""
        return summary_columns(self.metrics, self.kinds, self.by, self.aggregate)

    def user_partials(self, lf: pl.LazyFrame) -> dict[str, pl.LazyFrame]:
        """The global partials of :meth:`build`, with the user's column names."""
        return {name: self.outer(part) for name, part in self.build(lf)[1].items()}

    def finalize_globals(self, partials: dict[str, list[pl.LazyFrame]]) -> pl.LazyFrame:
        """Merge partials of :meth:`user_partials` and finalize the global metrics.

        Returns the by-columns and one column per global metric (the user's names).
        """
        inner = {name: [self.inner(p) for p in parts] for name, parts in partials.items()}
        return self.outer(self._finalize(inner, self.global_names, self.iby))

    def _finalize(
        self,
        partials: dict[str, list[pl.LazyFrame]],
        names: list[str],
        on: list[str],
    ) -> pl.LazyFrame:
        """Merge the partials of global (or item) metrics and finalize them.

        Returns the ``on`` columns (plan names) and one column per metric.
        """
        features = self.features()
        values: pl.LazyFrame | None = None
        for name in names:
            metric = next(m for m in self.metrics if m.name == name)
            plan = metric.plan(features)
            if not isinstance(plan, GlobalPlan):  # pragma: no cover - classified in create
                msg = f"metric {name!r} is not a global metric"
                raise TypeError(msg)
            group = [*self.iby, *plan.group]
            merged_input = pl.concat(partials.get(name, []), how="vertical_relaxed")
            combine = {
                "sum": lambda c: pl.col(c).sum(),
                "min": lambda c: pl.col(c).min(),
                "max": lambda c: pl.col(c).max(),
            }
            aggs = [combine[how](part).alias(part) for part, how in plan.combine.items()]
            merged = merged_input.group_by(group).agg(aggs) if group else merged_input.select(aggs)
            value = plan.finalize(merged, list(self.iby)).select(
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


def internal_names(cols: Columns, by: list[str], extra: list[str]) -> dict[str, str]:
    """The name each input column gets inside the plan: ``user name -> plan name``.

    Every column the plan reads is renamed to a name with the prefix
    :data:`INTERNAL`, which no other column of the plan has (ranks, counts, partial
    sums, ``"value"``, ``"len"``...): whatever the user's columns are called (even
    ``__prk_key`` or ``value``), they never collide with the engine's own. The
    columns of a role are distinct (checked by :func:`check_schema`); an extra
    column read by a metric (e.g. ``predicted=score``) may be one of them.
    """
    names = {
        cols.user: f"{INTERNAL}user",
        cols.item: f"{INTERNAL}item",
        cols.order: f"{INTERNAL}order",
        cols.relevance: f"{INTERNAL}relevance",
    }
    for i, column in enumerate(by):
        names[column] = f"{INTERNAL}by{i}"
    for i, column in enumerate(extra):
        names.setdefault(column, f"{INTERNAL}extra{i}")
    return names


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
    count = f"{INTERNAL}count"
    dups = side.group_by(item).agg(pl.len().alias(count)).filter(pl.col(count) > 1).collect()
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
    empty: Literal["skip", "skip_row", "zero"] = "skip",
) -> pl.LazyFrame:
    """Aggregate per-user values per by-group, with the user counts.

    Each metric's aggregates cover the users for which that metric is defined
    (non-null), counted in ``n_users(<metric>)``: a metric's value does not depend on
    the other metrics of the call. ``n_users`` counts the users of the group and
    ``n_skipped`` those left out of at least one metric's aggregates (an undefined
    value for at least one of ``names``).

    Parameters
    ----------
    per_user
        One row per (by, user) with one column per metric in ``names``.
    names
        The per-user metrics to aggregate.
    by
        The by-columns (one summary row per group).
    aggregate
        ``mean`` (named by the metric itself), ``gmean`` (geometric; values below
        ``1e-5`` are raised to ``1e-5`` first, as trec_eval's gm_map does; null if a
        value is negative), ``hmean`` (harmonic; 0 if a value is 0, null if one is
        negative), ``qmean`` (quadratic, the root mean square), ``median`` and
        ``std`` (the sample standard deviation, ddof=1), or a list of them; all but
        the mean are named ``"<aggregation>(<metric>)"``, e.g. ``gmean(map)``.
    empty
        ``"skip"`` (default): a metric's aggregates leave out the users for which it
        is undefined. ``"skip_row"``: a user undefined for any metric of ``names`` is
        left out of every aggregate, so all of them cover ``n_users - n_skipped``
        users (the former default). ``"zero"``: an undefined value counts as 0.

    Returns
    -------
    polars.LazyFrame
        The by-columns, one column per metric and aggregation, ``n_users(<metric>)``
        per metric, ``n_users`` and ``n_skipped`` (Int64).

    Examples
    --------
    >>> import polars as pl
    >>> from polars_rankeval.evaluate import summarize
    >>> per_user = pl.LazyFrame({"ndcg": [1.0, 0.5, None], "tau": [None, 0.2, 0.4]})
    >>> summarize(per_user, ["ndcg", "tau"], []).collect()
    shape: (1, 6)
    ┌──────┬─────┬───────────────┬──────────────┬─────────┬───────────┐
    │ ndcg ┆ tau ┆ n_users(ndcg) ┆ n_users(tau) ┆ n_users ┆ n_skipped │
    │ ---  ┆ --- ┆ ---           ┆ ---          ┆ ---     ┆ ---       │
    │ f64  ┆ f64 ┆ i64           ┆ i64          ┆ i64     ┆ i64       │
    ╞══════╪═════╪═══════════════╪══════════════╪═════════╪═══════════╡
    │ 0.75 ┆ 0.3 ┆ 2             ┆ 2            ┆ 3       ┆ 2         │
    └──────┴─────┴───────────────┴──────────────┴─────────┴───────────┘
    >>> summarize(per_user, ["ndcg", "tau"], [], empty="skip_row").collect()
    shape: (1, 6)
    ┌──────┬─────┬───────────────┬──────────────┬─────────┬───────────┐
    │ ndcg ┆ tau ┆ n_users(ndcg) ┆ n_users(tau) ┆ n_users ┆ n_skipped │
    │ ---  ┆ --- ┆ ---           ┆ ---          ┆ ---     ┆ ---       │
    │ f64  ┆ f64 ┆ i64           ┆ i64          ┆ i64     ┆ i64       │
    ╞══════╪═════╪═══════════════╪══════════════╪═════════╪═══════════╡
    │ 0.5  ┆ 0.2 ┆ 1             ┆ 1            ┆ 3       ┆ 2         │
    └──────┴─────┴───────────────┴──────────────┴─────────┴───────────┘
    """
    aggs_wanted = aggregations(aggregate)
    check_choice("empty", empty, ("skip", "skip_row", "zero"))
    if empty == "zero":
        per_user = per_user.with_columns(pl.col(names).fill_null(0.0))
    # Without per-user metrics (only global ones requested) every user counts as defined.
    # A column, not an expression repeated in every aggregation (many metrics, e.g. a
    # cutoff range, would make the plan quadratic in size).
    flag = "__prk_defined"
    per_user = per_user.with_columns(
        (
            pl.all_horizontal([pl.col(n).is_not_null() for n in names]) if names else pl.lit(True)
        ).alias(flag)
    )
    every = pl.col(flag)

    def defined(name: str) -> pl.Expr:
        return every if empty == "skip_row" else pl.col(name).is_not_null()

    aggs = [
        _aggregate(agg, pl.col(n).filter(defined(n))).alias(summary_name(agg, n))
        for n in names
        for agg in aggs_wanted
    ]
    aggs += [defined(n).sum().cast(pl.Int64).alias(count_name(n)) for n in names]
    aggs += [
        pl.len().cast(pl.Int64).alias("n_users"),
        (~every).sum().cast(pl.Int64).alias("n_skipped"),
    ]
    if by:
        return per_user.group_by(by).agg(aggs).sort(by)
    return per_user.select(aggs)


def summary_columns(
    metrics: Sequence[Metric], kinds: dict[str, str], by: list[str], aggregate: list[Aggregation]
) -> list[str]:
    """The columns of the wide summary: by, metrics x aggregations, counts."""
    values = [
        summary_name(agg, m.name) if kinds[m.name] != "global" else m.name
        for m in metrics
        for agg in (aggregate if kinds[m.name] != "global" else ["mean"])
    ]
    counts = [count_name(m.name) for m in metrics if kinds[m.name] in ("expr", "frame")]
    return [*by, *values, *counts, *RESERVED]


def check_long_names(by: Sequence[str]) -> None:
    """A by-column may not be named like a column of the long summary."""
    clash = [b for b in by if b in LONG_COLUMNS]
    if clash:
        msg = (
            f"by column {clash[0]!r} collides with a column of summary='long' "
            f"({', '.join(LONG_COLUMNS)}); rename it or use summary='wide'"
        )
        raise ValueError(msg)


def long_summary(
    wide: pl.LazyFrame,
    by: list[str],
    names: list[str],
    aggregate: Sequence[Aggregation],
    global_names: Sequence[str] = (),
) -> pl.LazyFrame:
    """The wide summary as one row per (by, metric, aggregation).

    Columns: the by-columns, ``metric``, ``aggregation`` (``"global"`` for a global
    metric's one value), ``value``, ``n_users`` (the users the value covers) and
    ``n_skipped`` (the users of the group it leaves out: undefined for that metric, or
    under ``empty="skip_row"`` for any per-user metric; 0 for global metrics).
    Rows are ordered by the by-columns, then as the metrics and aggregations were
    requested.
    """
    parts = []
    for name in names:
        for agg in aggregate:
            parts.append(
                wide.select(
                    *by,
                    pl.lit(name, pl.String).alias("metric"),
                    pl.lit(agg, pl.String).alias("aggregation"),
                    pl.col(summary_name(agg, name)).cast(pl.Float64).alias("value"),
                    pl.col(count_name(name)).alias("n_users"),
                    (pl.col("n_users") - pl.col(count_name(name))).alias("n_skipped"),
                )
            )
    for name in global_names:
        parts.append(
            wide.select(
                *by,
                pl.lit(name, pl.String).alias("metric"),
                pl.lit(GLOBAL_AGGREGATION, pl.String).alias("aggregation"),
                pl.col(name).cast(pl.Float64).alias("value"),
                pl.col("n_users"),
                pl.lit(0, pl.Int64).alias("n_skipped"),
            )
        )
    out = pl.concat(parts, how="vertical")
    return out.sort(by, maintain_order=True) if by else out


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


def _raise_on_undefined(frame: pl.DataFrame, names: list[str], keys: list[str]) -> None:
    for name in names:
        bad = frame.filter(pl.col(name).is_null())
        if bad.height:
            example = bad.select(keys).head(5).rows()
            raise ValueError(undefined_message(name, bad.height, example))


def undefined_message(name: str, count: int, example: list[tuple[Any, ...]]) -> str:
    """The ``empty="error"`` message (shared by the Polars and the Spark engines)."""
    return (
        f"metric {name!r} is undefined for {count} user(s) (e.g. no relevant "
        f"item), first {example}; pass empty='skip' (each metric's mean over the users "
        "it is defined for), empty='skip_row' or empty='zero'"
    )
