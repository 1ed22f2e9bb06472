"""The evaluation job: every decision taken before the data is touched.

A :class:`Job` holds the metrics (parsed, and classified by their declarations:
:attr:`~polars_rankeval.metrics.spec.Metric.kind`; no kernel runs here, they run once,
when the plan is built),
the columns and their names inside the plan, the policies (ties, users, empty,
aggregations, summary form) and the data-wide statistics, which
:meth:`Job.compute_statistics` asks an engine for (:mod:`polars_rankeval.plan.interface`).

The layers of the plan, bottom up: :mod:`polars_rankeval.plan.interface` (the engine
interface), this module (the decisions), :mod:`polars_rankeval.plan.build` (rows of whole
users to per-user values and global partials), :mod:`polars_rankeval.plan.finish` (merge
the partials, summarize, the result) and :mod:`polars_rankeval.engines.memory` (the one sequence
every engine goes through).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import polars as pl

import polars_rankeval.metrics.sampled_estimators as _sampled
import polars_rankeval.plan.positions as _positions
from polars_rankeval._utils.ties import resolve_ties
from polars_rankeval._utils.types import (
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
    integer,
    type_label,
)
from polars_rankeval.metrics._checks import examples
from polars_rankeval.metrics.features import Features
from polars_rankeval.metrics.grammar import MetricsArg, parse_metrics
from polars_rankeval.metrics.spec import Metric
from polars_rankeval.plan.interface import Scalar, Scan
from polars_rankeval.plan.validate import check_schema, to_lazy

RESERVED = ("n_users", "n_skipped")
MAX_EXP_RELEVANCE = 512
"""gain=exp refuses relevance from this value on: 2^rel - 1 is infinite in float64 from
1024, and sums of 2^32 such gains from 992 (then ndcg would be inf / inf = NaN)."""
LONG_COLUMNS = ("metric", "aggregation", "value", "n_users", "n_skipped")
"""Columns of ``summary="long"`` after the by-columns."""

INTERNAL = "__prk@"
"""Prefix of the names the plan gives the input columns (see :func:`internal_names`)."""

UsersArg = UserUniverse | Sequence[Any] | pl.Series | pl.DataFrame
NItemsArg = int | pl.DataFrame | pl.LazyFrame | pl.Series | None


def aggregations(aggregate: Aggregation | Sequence[Aggregation]) -> list[Aggregation]:
    """Normalise ``aggregate=`` to a non-empty list of distinct aggregations."""
    aggs = [aggregate] if isinstance(aggregate, str) else list(aggregate)
    if not aggs:
        msg = f"aggregate must name at least one of {', '.join(sorted(AGGREGATIONS))}"
        raise ValueError(msg)
    for agg in aggs:
        check_choice("aggregate", agg, AGGREGATIONS)
    if len(set(aggs)) != len(aggs):
        msg = f"aggregate lists an aggregation twice: {aggs!r}"
        raise ValueError(msg)
    return aggs


def check_interval(ci: Any, confidence: Any) -> None:
    """``evaluate(ci=, confidence=)``: ``None``, ``"t"`` or ``"bootstrap"``; (0, 1)."""
    if ci is not None and ci not in ("bootstrap", "t"):
        msg = f"ci must be one of ['bootstrap', 't'] or None, got {ci!r}"
        raise ValueError(msg)
    if isinstance(confidence, bool) or not isinstance(confidence, int | float):
        msg = f"confidence must be a number in (0, 1), got {confidence!r}"
        raise TypeError(msg)
    if not 0.0 < float(confidence) < 1.0:
        msg = f"confidence must be in (0, 1), got {confidence!r}"
        raise ValueError(msg)


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
    history: pl.LazyFrame | None = None
    per_item: bool = False
    extra: list[str] = field(default_factory=list)
    order_dtype: pl.DataType | None = None
    names: dict[str, str] = field(default_factory=dict)
    ci: Literal["t", "bootstrap"] | None = None
    confidence: float = 0.95
    summary: SummaryForm = "wide"
    rank_positions: _positions.RankPositions = "relative"
    data_columns: tuple[str, ...] = ()
    history_checks: dict[str, tuple[str, int | None]] = field(default_factory=dict)

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
        history: Any = None,
        rank_positions: _positions.RankPositions = "relative",
        ci: Literal["t", "bootstrap"] | None = None,
        confidence: float = 0.95,
    ) -> Job:
        """Check the options against the schema and classify the metrics.

        From the metrics' declarations only: their kinds, the extra columns they read
        (a missing one is an error here), the history checks; kernels run when the
        plan is built.
        """
        parsed = parse_metrics(metrics)
        check_interval(ci, confidence)
        if ci is not None and (per_user or per_item):
            msg = (
                f"ci= gives intervals of the summary's means; per_user=True and "
                f"per_item=True return no mean, got ci={ci!r} with "
                f"{'per_user' if per_user else 'per_item'}=True"
            )
            raise ValueError(msg)
        resolve_ties(ties)
        check_choice("empty", empty, EMPTY_POLICIES)
        check_choice("summary", summary, SUMMARY_FORMS)
        check_choice("rank_positions", rank_positions, _positions.RANK_POSITIONS)
        if rank_positions == "absolute":
            _positions.check_rank_given(cols)
        if isinstance(users, str):
            check_choice("users", users, USER_UNIVERSES)
        by_cols = [by] if isinstance(by, str) else list(by or [])
        check_schema(schema, cols, by_cols)
        job = cls(cols, by_cols, parsed, ties, users, empty, aggregations(aggregate), per_user)
        job.items = _side_table(items, schema, cols.item)
        job.history = history_table(history, schema, cols)
        job.per_item = per_item
        job.summary = summary
        job.rank_positions = rank_positions
        job.ci, job.confidence = ci, float(confidence)
        if rank_positions == "absolute":
            _positions.check_dtype(schema, cols)
            _positions.check_metrics([(m.spec.name, m.name) for m in parsed])
        if summary == "long":
            check_long_names(by_cols)
        if per_user and per_item:
            msg = "per_user and per_item cannot both be True"
            raise ValueError(msg)
        parts = [*job.aggregate, *(("se", "ci_low", "ci_high") if ci is not None else ())]
        names = {summary_name(a, m.name) for a in parts for m in parsed}
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
        # The metrics' kinds, the columns they read and their history checks, from their
        # declarations (no kernel runs before the plan is built).
        job.order_dtype = schema[cols.order]
        job.data_columns = tuple(schema.names())
        side = job.items.collect_schema() if job.items is not None else pl.Schema()

        def present(name: str) -> bool:
            return name in schema or name in side

        has_history = job.history is not None
        reader: dict[str, str] = {}  # each extra column: the first metric that reads it
        hints: dict[str, str] = {}
        checked: set[str] = set()
        # The cutoffs of one list or range share their declarations: read them once.
        seen: set[tuple[Any, ...]] = set()
        for metric in parsed:
            metric.spec.check_ties(ties)
            job.kinds[metric.name] = metric.kind
            key = _request(metric)
            if metric.cutoffs and key in seen:
                continue
            seen.add(key)
            for name, hint in metric.reads(present, has_history).items():
                reader.setdefault(name, metric.name)
                if hint:
                    hints.setdefault(name, hint)
                if hint is not None:
                    checked.add(name)
            source = metric.history_source(present, has_history)
            if source is not None:
                job.history_checks.setdefault(metric.name, (source, metric.k))
        job.extra = list(reader)
        job.names = internal_names(cols, by_cols, job.extra)
        for name in job.extra:
            if name in checked and not present(name):
                where = "the data" + (" or the items= table" if job.items is not None else "")
                msg = f"column {name!r} (read by {reader[name]}) not found in {where}"
                if name in hints:
                    msg += f"; {hints[name]}"
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
        own = [m for m in parsed if m.aggregate != "mean"]
        if per_user and own:
            plain = own[0].spec.name + (f"@{own[0].k}" if own[0].k else "")
            msg = (
                f"metric(s) {', '.join(m.name for m in own)} are aggregated over users by "
                "their aggregate= option (one value per by group); for per-user values "
                "request them without it, e.g. "
                f"{parse_metrics(plain)[0].name!r}"
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
    def absolute(self) -> bool:
        """Whether positions are the rank column's values, gaps kept (RecTools)."""
        return self.rank_positions == "absolute"

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
        return {need for m in self.metrics for need in m.needs}

    def columns(self, schema: pl.Schema) -> list[str]:
        """The columns of the data the plan reads (extra ones included)."""
        cols = self.cols
        own = [c for c in self.extra if c in schema]
        return list(dict.fromkeys([*self.keys, cols.item, cols.order, cols.relevance, *own]))

    def curve_groups(self) -> list[list[Metric]]:
        """Metrics computed together by a curve kernel: the cutoffs of one request.

        A group is the metrics expanded from one list or range of cutoffs (same metric,
        same options) whose metric has a curve kernel; the others are computed alone.
        None under absolute positions: curve kernels index positions as list offsets.
        """
        groups: dict[tuple[Any, ...], list[Metric]] = {}
        if self.absolute:
            return []
        for metric in self.metrics:
            has_kernel = metric.spec.curve is not None and self.kinds[metric.name] == "expr"
            if metric.cutoffs and has_kernel:
                groups.setdefault(_request(metric), []).append(metric)
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
            items=self.items,
            history=self.history,
            absolute=self.absolute,
            empty=self.empty,
            data_columns=self.data_columns,
        )

    # ------------------------------------------------------------------ statistics
    def compute_statistics(
        self,
        engine: Scan,
        n_items: NItemsArg,
        rating_range: tuple[float, float] | None,
    ) -> None:
        """Fill in the data-wide statistics the metrics need (one pass at most).

        ``n_items``: an int; or a frame/series of catalog items (every item of the data
        must be in it); default the number of distinct items in the whole input (all
        rows, recommended or judged, over all by groups). ``rating_range``: default the
        minimum and maximum relevance over the judged rows. ``engine`` computes the
        aggregates (:meth:`polars_rankeval.plan.interface.Engine.scalars`).
        """
        needs = self.needs
        item = self.cols.item
        wanted: dict[str, Scalar] = {}
        if n_items is not None:
            if not isinstance(n_items, pl.DataFrame | pl.LazyFrame | pl.Series):
                n_items = integer(
                    "n_items", n_items, what="an int or a frame (or series) of catalog items"
                )
            # A metric may be defined with recommended items outside the catalog under
            # some options (its declared ``outside_catalog``): when only such metrics
            # read n_items, the data may hold items outside n_items.
            catalog_users = [m for m in self.metrics if "n_items" in m.spec.needs]
            lenient = bool(catalog_users) and all(
                m.spec.outside_catalog is not None and m.spec.outside_catalog(dict(m.options))
                for m in catalog_users
            )
            self.n_items = _catalog_size(n_items, engine, item, strict=not lenient)
            if isinstance(n_items, int) and not lenient:
                # An int catalog must hold the data's distinct items: counted below,
                # in the one pass of the other statistics.
                wanted["data_items"] = Scalar("n_unique", item)
        if n_items is None:  # never inferred from the data: a sample is not the catalog
            for metric in self.metrics:
                if _sampled.needs_catalog(dict(metric.options)):
                    raise ValueError(_sampled.missing_catalog(metric.name))
        if "n_items" in needs and self.n_items is None:
            wanted["n_items"] = Scalar("n_unique", item)
        if "rating_range" in needs and self.rating_range is None and rating_range is None:
            wanted["low"] = Scalar("min", self.cols.relevance, as_float=True)
            wanted["high"] = Scalar("max", self.cols.relevance, as_float=True)
        exp_gain = [m.name for m in self.metrics if dict(m.options).get("gain") == "exp"]
        if exp_gain:
            wanted["max_rel"] = Scalar("max", self.cols.relevance, as_float=True)
        self._check_history_items(engine)
        found = engine.scalars(wanted) if wanted else {}
        data_items = found.get("data_items")
        if data_items is not None and self.n_items is not None and data_items > self.n_items:
            msg = (
                f"n_items={self.n_items} is smaller than the {data_items} distinct items "
                "in the data"
            )
            raise ValueError(msg)
        if rating_range is not None:
            low, high = (float(v) for v in rating_range)
            if not (math.isfinite(low) and math.isfinite(high) and high > low):
                msg = f"rating_range must be (low, high) with low < high, got {rating_range!r}"
                raise ValueError(msg)
            self.rating_range = (low, high)
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

    def _check_history_items(self, engine: Scan) -> None:
        """Fail before the plan runs when a top k will hold an item without history.

        For ``novelty`` counting p(i) in ``history=`` with ``unknown=error`` (such an
        item has no finite self-information). The recommended items absent from the
        history are found first (one distinct pass); only if there are some are the
        rows of their users ranked, and the error raised when one of them is in a
        user's top k for sure (under ``ties="expected"``: with a positive chance, as
        the metric counts it). Cases left open (a deterministic tie policy across the
        cutoff, Spark) are reported by the plan itself, after the evaluation.
        """
        if not self.history_checks or self.history is None:
            return
        item, order, user = self.cols.item, self.cols.order, self.cols.user
        known = self.history.select(item).unique()
        cold = (
            engine.distinct([item], present=order)
            .join(known, on=item, how="anti")
            .collect(engine="streaming")
        )
        rows = engine.polars_rows()
        if cold.height == 0 or rows is None:
            return
        keys = self.keys
        affected = (
            rows.filter(pl.col(order).is_not_null())
            .join(cold.lazy(), on=item, how="semi")
            .select(user)
            .unique()
        )
        ranked = (
            rows.join(affected, on=user, how="semi")
            .filter(pl.col(order).is_not_null())
            .select(
                *keys,
                item,
                first=pl.col(order).rank("min", descending=self.cols.rank is None).over(keys),
                last=pl.col(order).rank("max", descending=self.cols.rank is None).over(keys),
                value=pl.col(order),
            )
            .join(cold.lazy(), on=item, how="semi")
        )
        if self.absolute:  # the rank column's values are the positions
            ranked = ranked.with_columns(first=pl.col("value"), last=pl.col("value"))
        place = pl.col("first") if self.ties == "expected" else pl.col("last")
        for metric, (source, k) in self.history_checks.items():
            hit = ranked if k is None else ranked.filter(place <= k)
            per_user = hit.group_by(keys).agg(n=pl.len(), first_item=pl.col(item).min())
            found = per_user.collect(engine="streaming")
            if found.height:
                # The text of the plan's own check (metrics.exposure._history_novelty).
                name = metric.split("@")[0].split("(")[0]
                msg = (
                    f"metric {name!r}: {int(found.get_column('n').sum())} item(s) in the "
                    f"top k of {found.height} user(s) have no interaction in history= "
                    f"(source={source!r}), e.g. {item} "
                    f"{examples(found.get_column('first_item'))}; pass unknown=one (as if "
                    "one user had it) or unknown=zero (it adds 0)"
                )
                raise ValueError(msg)


HAS_TRUTH = "__prk_has_truth"
"""The per-user flag: the user has a judged row (the user universe reads it)."""
HAS_RECS = "__prk_has_recs"
"""The per-user flag: the user has a recommended row."""


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
        msg = f"items must be a polars DataFrame or LazyFrame, got {type_label(items)}"
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


def history_table(history: Any, schema: pl.Schema, cols: Columns) -> pl.LazyFrame | None:
    """Check the interaction history (``history=``): the data's user and item columns.

    One row per past interaction of a user with an item (repeated interactions are
    kept: metrics that count interactions count them); other columns (a weight, a
    timestamp) are kept for the options that read them. Null user or item ids are an
    error.
    """
    if history is None:
        return None
    lf, _ = to_lazy(history, "history")
    hist_schema = lf.collect_schema()
    for column in (cols.user, cols.item):
        if column not in hist_schema:
            msg = (
                f"the history= table needs the {column!r} column of the data, got "
                f"{hist_schema.names()}"
            )
            raise ValueError(msg)
        if hist_schema[column] != schema[column]:
            msg = (
                f"column {column!r} has dtype {hist_schema[column]} in history= but "
                f"{schema[column]} in the data; cast one of them"
            )
            raise TypeError(msg)
    nulls = (
        lf.select(pl.any_horizontal(pl.col(cols.user, cols.item).is_null()).sum()).collect().item()
    )
    if nulls:
        msg = f"the history= table has {nulls} row(s) with a null {cols.user!r} or {cols.item!r}"
        raise ValueError(msg)
    return lf


def _catalog_size(
    n_items: int | pl.DataFrame | pl.LazyFrame | pl.Series,
    engine: Scan,
    item: str,
    *,
    strict: bool = True,
) -> int:
    """The catalog size; ``strict``: every item of the data must be in a catalog frame.

    An int catalog is checked against the data's distinct items by the caller
    (:meth:`Job.compute_statistics`, in the pass of the other statistics).
    """
    if isinstance(n_items, int):
        if n_items <= 0:
            msg = f"n_items must be a positive integer, got {n_items}"
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
    if strict:
        missing = engine.distinct([item]).join(catalog, on=item, how="anti")
        missing_items = missing.collect(engine="streaming")
        if missing_items.height:
            msg = (
                f"{missing_items.height} item(s) of the data are not in the catalog, e.g. "
                f"{missing_items.get_column(item).head(5).to_list()}"
            )
            raise ValueError(msg)
    if size == 0:
        msg = "the catalog frame is empty"
        raise ValueError(msg)
    return int(size)


def check_long_names(by: Sequence[str]) -> None:
    """A by-column may not be named like a column of the long summary."""
    clash = [b for b in by if b in LONG_COLUMNS]
    if clash:
        msg = (
            f"by column {clash[0]!r} collides with a column of summary='long' "
            f"({', '.join(LONG_COLUMNS)}); rename it or use summary='wide'"
        )
        raise ValueError(msg)


def _request(metric: Metric) -> tuple[Any, ...]:
    """The request a metric was expanded from: its metric, options and cutoff list.

    The list is known by its tuple's identity (the metrics of one request share that
    tuple, and hold it while the key is in use): hashing the cutoffs for each of the
    metrics of ``ndcg@1..5000`` would cost the square of their number.
    """
    return (metric.spec.name, metric.options, id(metric.cutoffs))
