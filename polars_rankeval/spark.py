"""Evaluation on Apache Spark: the project's own Polars plan, run inside Spark.

:func:`evaluate` takes a Spark DataFrame (the long frame: one row per (user, item)) and
returns a Spark DataFrame with what :func:`polars_rankeval.evaluate` returns for the
same rows. The metrics are not re-implemented in Spark SQL: the users are hashed into
``n_partitions`` buckets, ``groupBy(pmod(xxhash64(user), n)).applyInArrow(...)`` hands
each bucket to Python as one Arrow table (after ``repartition(n, bucket)``, so that
adaptive execution cannot merge the buckets into a few tasks), and the kernel runs
:func:`polars_rankeval.evaluate` on it with ``per_user=True``. Every user's rows land
in one call, so the per-user values are exact. The summary is
:func:`polars_rankeval.evaluate.summarize` run per by group by a second
``applyInArrow``; global metrics merge the partial aggregates of
:func:`polars_rankeval.evaluate.global_partials` with Spark and are finalized with
Polars on the driver.

Spark stays optional (``pip install 'polars-rankeval[spark]'``): importing this module
does not import pyspark; :func:`evaluate` does. The executors need
``polars_rankeval`` installed too. Only the plain DataFrame API is used, so a Spark
Connect session works as well as a classic one.

For a local session, set ``spark.driver.memory`` in the builder before the first
``getOrCreate()`` (the JVM reads it once, at start), point ``PYSPARK_PYTHON`` at the
Python that has ``polars_rankeval``, and set ``SPARK_LOCAL_IP=127.0.0.1`` where the
host name does not resolve. ``benchmarks/bench_spark.py`` shows a complete setup.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import operator
import re
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import polars as pl
import pyarrow as pa

from polars_rankeval import _args
from polars_rankeval._features import Features
from polars_rankeval._plan import (
    GLOBAL_AGGREGATION,
    check_long_names,
    count_name,
    summary_name,
    undefined_message,
    wanted_users,
)
from polars_rankeval._ties import resolve_ties
from polars_rankeval._types import (
    EMPTY_POLICIES,
    SUMMARY_FORMS,
    Columns,
    EmptyPolicy,
    SummaryForm,
    TiePolicy,
    check_choice,
    make_columns,
)
from polars_rankeval._validate import (
    by_candidates,
    format_by_hint,
    format_duplicates,
    problem_templates,
)
from polars_rankeval.evaluate import (
    MetricsArg,
    UsersArg,
    finalize_globals,
    global_partials,
    parse_metrics,
    summarize,
)
from polars_rankeval.evaluate import evaluate as polars_evaluate
from polars_rankeval.registry import GlobalPlan, Metric

if TYPE_CHECKING:
    from pyspark.sql import Column, GroupedData, SparkSession
    from pyspark.sql import DataFrame as SparkDataFrame
    from pyspark.sql.types import DataType, StructField, StructType

__all__ = ["evaluate"]

INSTALL_HINT = "pip install 'polars-rankeval[spark]' (pyspark>=4.0, pandas>=2.2,<3)"
DEFAULT_PARTITIONS = 200
"""Buckets when ``n_partitions`` is not given and the session's
``spark.sql.shuffle.partitions`` is not a number (e.g. ``auto``)."""

# Keywords of polars_rankeval.evaluate that this module handles itself.
_OWN = frozenset(
    {
        "data",
        "metrics",
        "user",
        "item",
        "score",
        "relevance",
        "rank",
        "ties",
        "by",
        "per_user",
        "users",
        "empty",
        "summary",
        "validate",
    }
)
# Data-wide statistics: resolved once over the whole Spark input and passed to every
# Polars call, so that the result does not depend on the partitioning.
_STATISTICS = ("n_items", "rating_range")
# Stand-ins for the statistics in the driver's dry runs on an empty frame.
_PLACEHOLDERS: dict[str, Any] = {"n_items": 1, "rating_range": (0.0, 1.0)}
_TAG = "__prk_metric"
_REAL = "__prk_real"
_GROUP = "__prk_group"
_BUCKET = "__prk_bucket"
SIDE_COLUMNS = (
    "__prk_duplicates",
    "__prk_convert_seconds",
    "__prk_polars_seconds",
    "__prk_check_seconds",
)
"""Columns of the one side row each per-user call adds with ``side=True`` (null on the
real rows): rows of the call sharing a (by, user, item) key with another, then the
seconds spent converting Arrow to Polars, in the Polars ``evaluate`` and counting
those duplicates."""


# --------------------------------------------------------------------------- entry point
def evaluate(
    data: SparkDataFrame,
    metrics: MetricsArg,
    *,
    user: str = "user",
    item: str = "item",
    score: str | None = None,
    relevance: str = "relevance",
    rank: str | None = None,
    ties: TiePolicy = "expected",
    by: str | Sequence[str] | None = None,
    per_user: bool = False,
    users: UsersArg | SparkDataFrame = "truth",
    empty: EmptyPolicy = "skip",
    summary: SummaryForm = "wide",
    validate: bool = True,
    n_partitions: int | None = None,
    **options: Any,
) -> SparkDataFrame:
    """Evaluate many metrics over a Spark DataFrame with the Polars plan.

    The same arguments and the same result as :func:`polars_rankeval.evaluate`, as a
    Spark DataFrame. Each of ``n_partitions`` hash buckets of users is one Polars call
    (``applyInArrow``) that holds all the rows of its users.

    Parameters
    ----------
    data
        The long frame as a Spark DataFrame (classic or Spark Connect): one row per
        (user, item) with a score (or rank) and a relevance.
    metrics
        Metric names in the grammar ``name[(key=value,...)][@k]``, e.g.
        ``["ndcg@10", "precision(rel=2)@5"]``.
    user, item, score, relevance, rank, ties, by, per_user, empty, summary
        As in :func:`polars_rankeval.evaluate` (``empty="skip"``: each metric's mean
        over the users it is defined for, counted in ``n_users(<metric>)``).
    users
        As in :func:`polars_rankeval.evaluate`. An explicit list of ids (a sequence,
        a Polars Series or DataFrame, or a Spark DataFrame with a column named like
        the user column) includes the ids absent from the data, each once.
    validate
        Check the input values first (null ids, NaN/inf scores, negative or NaN
        relevance, duplicate (user, item) rows), with the messages of
        :func:`polars_rankeval.evaluate`: one Spark job for the row-level checks, and
        the per-user calls count the duplicates (they hold every row of their users),
        so the per-user pass runs at the call. ``False`` skips both.
    n_partitions
        Number of hash buckets of users: of Polars calls and of Spark tasks. Each
        call holds about 1/n of the rows in memory at once, and costs about 15 ms
        besides its rows; on small data a few per core are fastest. Default: the
        session's ``spark.sql.shuffle.partitions`` (200 if that is not a number).
    **options
        Any other keyword of :func:`polars_rankeval.evaluate`. ``aggregate=`` goes to
        the summary; ``n_items=`` (an int, or a Polars or Spark frame of catalog
        items) and ``rating_range=`` are resolved over the whole input when a metric
        needs them; ``items=`` (a Polars or a small Spark frame) and the others
        (e.g. ``strategy=``, ``memory_limit=``) go to every Polars call.
        ``per_item=True`` is not supported yet.

    Returns
    -------
    pyspark.sql.DataFrame
        The per-user values (``per_user=True``: one row per (by, user), in no
        particular order) or the summary (one row per by group, sorted by ``by``),
        with the columns of :func:`polars_rankeval.evaluate` and the matching Spark
        types. It is lazy like any Spark DataFrame, except for what needs the data at
        the call: data-wide statistics, global metrics, and ``validate=True`` or
        ``empty="error"``, which compute the per-user values once at the call and
        keep them with ``localCheckpoint`` (as Polars collects them once). A
        ``ValueError`` of a Polars call (e.g. an item without a popularity) is raised
        as such by these parts; from the lazy frame it comes as Spark's
        ``PythonException`` when the frame is computed.

    Examples
    --------
    >>> from pyspark.sql import SparkSession  # doctest: +SKIP
    >>> from polars_rankeval import spark as prk_spark
    >>> session = SparkSession.builder.master("local[2]").getOrCreate()  # doctest: +SKIP
    >>> df = session.createDataFrame(
    ...     [(1, 1, 0.9, 1), (1, 2, 0.5, 0), (2, 1, 0.3, 0), (2, 3, 0.8, 1)],
    ...     "user long, item long, score double, relevance long",
    ... )  # doctest: +SKIP
    >>> prk_spark.evaluate(df, ["ndcg@2", "mrr"]).show()  # doctest: +SKIP
    +------+---+---------------+------------+-------+---------+
    |ndcg@2|mrr|n_users(ndcg@2)|n_users(mrr)|n_users|n_skipped|
    +------+---+---------------+------------+-------+---------+
    |   1.0|1.0|              2|           2|      2|        0|
    +------+---+---------------+------------+-------+---------+
    """
    _require_pyspark()
    from pyspark.sql import DataFrame

    if not isinstance(data, DataFrame):
        msg = f"data must be a pyspark DataFrame, got {type(data).__name__}"
        raise TypeError(msg)
    # The types of the arguments, as polars_rankeval.evaluate checks them.
    _args.metrics(metrics)
    _args.columns(
        user=user, item=item, score=score, relevance=relevance, rank=rank, relevance_optional=False
    )
    _args.choice("ties", ties)
    _args.choice("empty", empty)
    _args.by(by)
    _args.flag("per_user", per_user)
    _args.flag("validate", validate)
    _args.count("n_partitions", n_partitions)
    if not isinstance(users, DataFrame):
        _args.users(users)
    plan = Plan.create(
        data,
        metrics,
        user=user,
        item=item,
        score=score,
        relevance=relevance,
        rank=rank,
        ties=ties,
        by=by,
        per_user=per_user,
        users=users,
        empty=empty,
        summary=summary,
        n_partitions=n_partitions,
        options=options,
    )
    problems = row_problems(data, plan) if validate else {}
    raise_first_problem(data, plan, problems, before_duplicates=True)
    plan.resolve_statistics(data)
    if validate:
        # Duplicates are counted by the per-user calls themselves, which see every row
        # of their users: the pass runs now, once, and its values are kept.
        values = per_user_values(plan.input_rows(data, every_user=True), plan, side=True)
        with worker_errors():
            values = values.localCheckpoint(eager=True)
        raise_first_problem(data, plan, {**problems, "dup": _duplicates(values)})
        values = values.filter(_col(SIDE_COLUMNS[0]).isNull()).drop(*SIDE_COLUMNS)
    else:
        values = per_user_values(plan.input_rows(data), plan)
    values = plan.restrict(values, data)
    if empty == "error":
        with worker_errors():
            values = values.localCheckpoint(eager=True)
        _raise_on_undefined(values, plan)
    if per_user:
        return values
    result = summary_values(values, plan)
    if plan.global_names:
        with worker_errors():
            globals_ = global_values(plan.input_rows(data), plan)
        result = plan.join_globals(result, globals_)
    if plan.summary == "long":
        return long_summary(result, plan)
    if plan.by:
        result = result.orderBy(*[_col(b) for b in plan.by])
    return result


@contextlib.contextmanager
def worker_errors() -> Iterator[None]:
    """Re-raise a ``ValueError`` / ``TypeError`` of a Polars call as itself.

    Spark wraps an exception of a Python worker into a ``PythonException`` whose text
    ends with the worker's traceback; the last ``ValueError: ...`` or
    ``TypeError: ...`` line is the Polars message. Its counts cover the users of that
    one call, which the message says.
    """
    from pyspark.errors import PythonException

    try:
        yield
    except PythonException as error:
        found = re.findall(r"^(ValueError|TypeError): (.+)$", str(error), flags=re.MULTILINE)
        if not found:
            raise
        kind, message = found[-1]
        message = f"{message.strip()} (in one Polars call on Spark: counts cover its users)"
        raise (ValueError if kind == "ValueError" else TypeError)(message) from error


def _require_pyspark() -> None:
    try:
        import pyspark
    except ImportError:
        msg = f"polars_rankeval.spark needs pyspark: {INSTALL_HINT}"
        raise ImportError(msg) from None
    if int(pyspark.__version__.split(".")[0]) < 4:
        msg = (
            f"polars_rankeval.spark needs pyspark>=4.0, found {pyspark.__version__}: {INSTALL_HINT}"
        )
        raise ImportError(msg)


# --------------------------------------------------------------------------- the plan
@dataclass
class Plan:
    """Everything decided on the driver before a Spark job runs."""

    session: SparkSession
    spark_schema: StructType
    polars_schema: pl.Schema
    metrics: list[Metric]
    global_plans: dict[str, GlobalPlan]
    columns: dict[str, str | None]  # user, item, score, relevance, rank
    ties: TiePolicy
    by: list[str]
    users: UsersArg | SparkDataFrame
    empty: EmptyPolicy
    summary: SummaryForm
    n_partitions: int
    kernel_options: dict[str, Any]  # to every Polars evaluate call
    summary_options: dict[str, Any]  # to summarize
    statistics: dict[str, Any]  # n_items / rating_range: as given, then resolved
    per_user_schema: pl.Schema  # what the per-user kernel returns
    result_schema: pl.Schema  # what the Polars evaluate returns (per-user or summary)
    extra: list[str] = field(default_factory=list)  # more data columns the metrics read
    wanted: SparkDataFrame | None = field(default=None)  # explicit users: distinct ids

    @classmethod
    def create(
        cls,
        data: SparkDataFrame,
        metrics: MetricsArg,
        *,
        user: str,
        item: str,
        score: str | None,
        relevance: str,
        rank: str | None,
        ties: TiePolicy,
        by: str | Sequence[str] | None,
        per_user: bool,
        users: UsersArg | SparkDataFrame,
        empty: EmptyPolicy,
        n_partitions: int | None,
        options: dict[str, Any],
        summary: SummaryForm = "wide",
    ) -> Plan:
        """Check everything on the driver with a dry run of the Polars evaluate.

        The Polars evaluate on an empty frame with the data's schema raises exactly
        the errors of :func:`polars_rankeval.evaluate` (unknown metric, bad option,
        missing column, bad dtype, ...) and gives the schema of the result.
        """
        from pyspark.sql import DataFrame

        cols = make_columns(user=user, item=item, score=score, relevance=relevance, rank=rank)
        parsed = parse_metrics(metrics)
        resolve_ties(ties)
        check_choice("empty", empty, EMPTY_POLICIES)
        check_choice("summary", summary, SUMMARY_FORMS)
        by_cols = [by] if isinstance(by, str) else list(by or [])
        if summary == "long":
            check_long_names(by_cols)
        session = data.sparkSession
        partitions = _partitions(session, n_partitions)
        spark_schema = data.schema
        polars_schema = polars_schema_of(spark_schema)
        kernel_options, summary_options, statistics = _split_options(options)
        if kernel_options.get("per_item"):
            msg = (
                "per_item=True (item metrics) is not supported on Spark yet; evaluate item "
                "metrics with polars_rankeval.evaluate"
            )
            raise ValueError(msg)
        if isinstance(kernel_options.get("items"), DataFrame):
            # The item side table goes to every Polars call, as a Polars frame.
            kernel_options["items"] = _to_polars(kernel_options["items"])
        columns: dict[str, str | None] = {
            "user": cols.user,
            "item": cols.item,
            "score": cols.score,
            "relevance": cols.relevance,
            "rank": cols.rank,
        }
        needs = {need for metric in parsed for need in metric.spec.needs}
        dry_statistics = {
            name: _PLACEHOLDERS[name]
            if (name in needs and value is None) or isinstance(value, DataFrame)
            else value
            for name, value in statistics.items()
        }
        dry: dict[str, Any] = {
            **columns,
            "ties": ties,
            "by": by_cols,
            "validate": False,
            **_memory_strategy(),
            **kernel_options,
            **dry_statistics,
        }
        empty_frame = pl.DataFrame(schema=polars_schema)
        result = polars_evaluate(
            empty_frame,
            parsed,
            per_user=per_user,
            users="all" if isinstance(users, DataFrame) else users,
            empty="skip" if empty == "error" else empty,
            **dry,
            **summary_options,
        )
        probe = Features(cols, ties, [*by_cols, cols.user], **_PLACEHOLDERS)
        global_plans: dict[str, GlobalPlan] = {}
        for metric in parsed:
            out = metric.plan(probe)
            if isinstance(out, GlobalPlan):
                global_plans[metric.name] = out
        # Columns the kernels read besides the long frame's (e.g. a propensity), when in
        # the data; the others come from items=, which every Polars call receives.
        extra = [c for c in getattr(probe, "extra", {}) if c in polars_schema]
        user_metrics = [m for m in parsed if m.name not in global_plans] or [_keys_only()]
        per_user_frame = polars_evaluate(
            empty_frame, user_metrics, per_user=True, users="all", empty="skip", **dry
        )
        plan = cls(
            session=session,
            spark_schema=spark_schema,
            polars_schema=polars_schema,
            metrics=parsed,
            global_plans=global_plans,
            columns=columns,
            ties=ties,
            by=by_cols,
            users=users,
            empty=empty,
            summary=summary,
            n_partitions=partitions,
            kernel_options=kernel_options,
            summary_options=summary_options,
            statistics=statistics,
            per_user_schema=per_user_frame.schema,
            result_schema=result.schema,
            extra=extra,
        )
        if not isinstance(users, str):
            plan.wanted = plan.wanted_ids(users)
        return plan

    # ---------------------------------------------------------------- properties
    @property
    def user(self) -> str:
        return str(self.columns["user"])

    @property
    def keys(self) -> list[str]:
        return [*self.by, self.user]

    @property
    def order(self) -> str:
        return str(self.columns["rank"] or self.columns["score"])

    @property
    def user_names(self) -> list[str]:
        """The per-user metrics (what the per-user kernel computes)."""
        return [m.name for m in self.metrics if m.name not in self.global_plans]

    @property
    def global_names(self) -> list[str]:
        return list(self.global_plans)

    @property
    def wide_columns(self) -> list[str]:
        """The columns of the wide summary (the driver's dry run is always wide)."""
        return self.result_schema.names()

    @property
    def aggregations(self) -> list[str]:
        aggregate = self.summary_options.get("aggregate", "mean")
        return [aggregate] if isinstance(aggregate, str) else list(aggregate)

    @property
    def needed(self) -> list[str]:
        """The input columns every Polars call reads."""
        item, rel = str(self.columns["item"]), str(self.columns["relevance"])
        return list(dict.fromkeys([*self.keys, item, self.order, rel, *self.extra]))

    def field(self, name: str) -> StructField:
        """The input's Spark field of a column, nullable in every result."""
        from pyspark.sql.types import StructField

        return StructField(name, self.spark_schema[name].dataType, True)

    def call_options(self) -> dict[str, Any]:
        """Keywords shared by the per-user and the global Polars calls."""
        resolved = {k: v for k, v in self.statistics.items() if v is not None}
        return {
            **self.columns,
            "ties": self.ties,
            "by": self.by,
            "users": "all" if self.wanted is not None else self.users,
            **resolved,
        }

    # ---------------------------------------------------------------- users
    def wanted_ids(self, users: Any) -> SparkDataFrame:
        """An explicit user list as a Spark DataFrame of distinct ids (one column).

        Ids are checked and cast by the Polars rules (:func:`wanted_users`); a Spark
        DataFrame of ids is checked by the dtype of its user column and cast by Spark.
        """
        from pyspark.sql import DataFrame
        from pyspark.sql.types import StructType

        user, dtype = self.user, self.polars_schema[self.user]
        spark_type = self.field(user).dataType
        if isinstance(users, DataFrame):
            if user not in users.columns:
                msg = f"users frame must have a {user!r} column, got columns {users.columns}"
                raise ValueError(msg)
            ids_dtype = polars_schema_of(users.select(_col(user)).schema)[user]
            wanted_users(pl.Series(user, [], dtype=ids_dtype), user, dtype)  # dtype check
            return users.select(_col(user).cast(spark_type).alias(user)).distinct()
        ids = wanted_users(users, user, dtype).to_frame()
        schema = StructType([self.field(user)])
        return self.session.createDataFrame(ids.to_arrow(), schema=schema)

    def input_rows(self, data: SparkDataFrame, *, every_user: bool = False) -> SparkDataFrame:
        """The columns the Polars calls read; for a user list, only those users' rows.

        ``every_user=True`` keeps the other users' rows too (to check them).
        """
        from pyspark.sql import functions as sf

        rows = data.select(*[_col(c) for c in self.needed])
        if self.wanted is not None and not every_user:
            wanted = self.wanted.select(_col(self.user).alias("__prk_u"))
            condition = sf.col("__prk_u").eqNullSafe(_col(self.user))
            rows = rows.join(wanted, condition, "left_semi")
        return rows

    def restrict(self, values: SparkDataFrame, data: SparkDataFrame) -> SparkDataFrame:
        """Apply an explicit user list: every listed id once per by group, as Polars does."""
        from pyspark.sql import functions as sf

        if self.wanted is None:
            return values
        universe = self.wanted.select(_col(self.user).alias("__prk_u"))
        if self.by:
            groups = data.select(*[_col(b).alias(f"__prk_b{i}") for i, b in enumerate(self.by)])
            universe = groups.distinct().crossJoin(universe)
        conditions = [sf.col("__prk_u").eqNullSafe(_col(self.user))] + [
            sf.col(f"__prk_b{i}").eqNullSafe(_col(b)) for i, b in enumerate(self.by)
        ]
        joined = universe.join(values, functools.reduce(operator.and_, conditions), "left")
        metric_cols = [_col(n) for n in self.user_names]
        if self.empty == "zero":
            metric_cols = [sf.coalesce(_col(n), sf.lit(0.0)).alias(n) for n in self.user_names]
        return joined.select(
            *[sf.col(f"__prk_b{i}").alias(b) for i, b in enumerate(self.by)],
            sf.col("__prk_u").alias(self.user),
            *metric_cols,
        )

    # ---------------------------------------------------------------- statistics
    def resolve_statistics(self, data: SparkDataFrame) -> None:
        """Compute ``n_items`` / ``rating_range`` over the whole input where needed.

        The defaults and checks of the Polars evaluate: ``n_items`` is the number of
        distinct items in the whole input, or the size of a catalog frame that must
        hold every item of the data; ``rating_range`` the min and max relevance.
        """
        from pyspark.sql import DataFrame
        from pyspark.sql import functions as sf

        needs = {need for metric in self.metrics for need in metric.spec.needs}
        item, rel = str(self.columns["item"]), str(self.columns["relevance"])
        n_items = self.statistics.get("n_items")
        rating_range = self.statistics.get("rating_range")
        if n_items is not None:
            needs.add("n_items")  # as Polars: a given catalog is checked against the data
        wanted: dict[str, Column] = {}
        if "n_items" in needs and (n_items is None or isinstance(n_items, int)):
            wanted["items"] = sf.count_distinct(_col(item))
        if "rating_range" in needs and rating_range is None:
            wanted["low"] = sf.min(_col(rel).cast("double"))
            wanted["high"] = sf.max(_col(rel).cast("double"))
        found: dict[str, Any] = {}
        if wanted:
            found = data.agg(*[e.alias(n) for n, e in wanted.items()]).collect()[0].asDict()
        if n_items is None and "n_items" in needs:
            self.statistics["n_items"] = int(found["items"])
        elif isinstance(n_items, int):
            if found["items"] > n_items:
                msg = (
                    f"n_items={n_items} is smaller than the {found['items']} distinct items "
                    "in the data"
                )
                raise ValueError(msg)
        elif n_items is not None:
            catalog = n_items
            if not isinstance(catalog, DataFrame):
                catalog = self.session.createDataFrame(_catalog_table(n_items, item))
            self.statistics["n_items"] = _catalog_size(catalog, data, item)
        if "rating_range" in needs and rating_range is None:
            low, high = found["low"], found["high"]
            if low is None or high is None or not high > low:
                msg = (
                    f"cannot derive the rating range from relevance column {rel!r} "
                    f"(min {low!r}, max {high!r}); pass rating_range="
                )
                raise ValueError(msg)
            self.statistics["rating_range"] = (float(low), float(high))

    # ---------------------------------------------------------------- globals
    def join_globals(self, summary: SparkDataFrame, values: pl.DataFrame) -> SparkDataFrame:
        """The summary with the global metrics joined on (a full join on by, as Polars)."""
        from pyspark.sql import functions as sf
        from pyspark.sql.types import StructType

        fields = [
            self.field(n) if n in self.by else _spark_field(n, values.schema[n])
            for n in values.columns
        ]
        extra = self.session.createDataFrame(values.to_arrow(), schema=StructType(fields))
        if self.by:
            renamed = extra.select(
                *[_col(b).alias(f"__prk_b{i}") for i, b in enumerate(self.by)],
                *[_col(n) for n in self.global_names],
            )
            condition = functools.reduce(
                operator.and_,
                [sf.col(f"__prk_b{i}").eqNullSafe(_col(b)) for i, b in enumerate(self.by)],
            )
            joined = summary.join(renamed, condition, "full")
            by_cols = [
                sf.coalesce(_col(b), sf.col(f"__prk_b{i}")).alias(b) for i, b in enumerate(self.by)
            ]
        else:
            joined = summary.crossJoin(extra)
            by_cols = []
        counts = {"n_users", "n_skipped", *[count_name(n) for n in self.user_names]}
        rest = [
            sf.coalesce(_col(n), sf.lit(0).cast("long")).alias(n) if n in counts else _col(n)
            for n in self.wide_columns
            if n not in self.by
        ]
        return joined.select(*by_cols, *rest)


def _keys_only() -> Metric:
    """A never-undefined metric, computed only to list the users when none is per user."""
    return parse_metrics("num_ret")[0]


def _memory_strategy() -> dict[str, Any]:
    """``strategy="memory"`` where the Polars evaluate has that option (dry runs)."""
    return {"strategy": "memory"} if "strategy" in _evaluate_parameters() else {}


@functools.cache
def _evaluate_parameters() -> tuple[str, ...]:
    return tuple(inspect.signature(polars_evaluate).parameters)


@functools.cache
def _summarize_parameters() -> tuple[str, ...]:
    params = inspect.signature(summarize).parameters.values()
    return tuple(p.name for p in params if p.kind is inspect.Parameter.KEYWORD_ONLY)


def _split_options(
    options: dict[str, Any],
) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """Route extra keywords: (every Polars call, summarize, data-wide statistics)."""
    accepted = set(_evaluate_parameters()) - _OWN
    kernel: dict[str, Any] = {}
    summary: dict[str, Any] = {}
    statistics: dict[str, Any] = {name: None for name in _STATISTICS if name in accepted}
    for name, value in options.items():
        if name not in accepted:
            msg = f"evaluate() got an unexpected keyword argument {name!r}"
            raise TypeError(msg)
        if name in statistics:
            statistics[name] = value
        elif name in _summarize_parameters():
            summary[name] = value
        else:
            kernel[name] = value
    return kernel, summary, statistics


def _partitions(session: SparkSession, n_partitions: int | None) -> int:
    if n_partitions is None:
        value = session.conf.get("spark.sql.shuffle.partitions")
        return int(value) if value is not None and value.isdigit() else DEFAULT_PARTITIONS
    if isinstance(n_partitions, bool) or not isinstance(n_partitions, int):
        msg = f"n_partitions must be a positive integer, got {n_partitions!r}"
        raise TypeError(msg)
    if n_partitions < 1:
        msg = f"n_partitions must be a positive integer, got {n_partitions!r}"
        raise ValueError(msg)
    return n_partitions


def _to_polars(frame: SparkDataFrame) -> pl.DataFrame:
    """A (small) Spark DataFrame collected to the driver as a Polars frame."""
    out = pl.from_arrow(frame.toArrow())
    if isinstance(out, pl.Series):  # pragma: no cover - a table gives a frame
        out = out.to_frame()
    return out


def _catalog_table(n_items: Any, item: str) -> pa.Table:
    """A Polars catalog (frame, lazy frame or series) as an Arrow table."""
    if isinstance(n_items, pl.Series):
        return n_items.rename(item).to_frame().to_arrow()
    if isinstance(n_items, pl.LazyFrame):
        n_items = n_items.collect()
    if item not in n_items.columns:
        msg = f"the catalog frame needs an {item!r} column"
        raise ValueError(msg)
    return n_items.select(item).to_arrow()


def _catalog_size(catalog: SparkDataFrame, data: SparkDataFrame, item: str) -> int:
    """Distinct items of a catalog frame, which must hold every item of the data."""
    from pyspark.sql import functions as sf

    if item not in catalog.columns:
        msg = f"the catalog frame needs an {item!r} column"
        raise ValueError(msg)
    items = catalog.select(_col(item).alias("__prk_i")).distinct()
    size = items.count()
    condition = sf.col("__prk_i") == _col(item)
    missing = data.select(_col(item)).distinct().join(items, condition, "left_anti")
    n_missing = missing.count()
    if n_missing:
        example = [row[0] for row in missing.limit(5).collect()]
        msg = f"{n_missing} item(s) of the data are not in the catalog, e.g. {example}"
        raise ValueError(msg)
    if size == 0:
        msg = "the catalog frame is empty"
        raise ValueError(msg)
    return int(size)


# --------------------------------------------------------------------------- kernels
@dataclass(frozen=True)
class _Call:
    """What one ``applyInArrow`` call needs; pickled to the executors with the kernel."""

    columns: tuple[str, ...]  # the input columns' real names (they arrive as __prk_c<i>)
    metrics: tuple[str, ...]
    options: tuple[tuple[str, Any], ...]
    outputs: tuple[tuple[str, pa.DataType | None], ...]  # None: the input column's type
    side: bool = False


def _safe_columns(frame: SparkDataFrame, columns: Sequence[str]) -> SparkDataFrame:
    """``columns`` under positional names: ``applyInArrow`` resolves names unquoted."""
    return frame.select(*[_col(c).alias(f"__prk_c{i}") for i, c in enumerate(columns)])


def _frame(call: _Call, table: pa.Table) -> pl.DataFrame:
    names = [*call.columns, *table.column_names[len(call.columns) :]]
    frame = pl.from_arrow(table.rename_columns(names))
    if isinstance(frame, pl.Series):  # pragma: no cover - a table gives a frame
        frame = frame.to_frame()
    return frame


def _finish(
    call: _Call, table: pa.Table, out: pl.DataFrame, side: Sequence[float] = ()
) -> pa.Table:
    """The declared columns, cast to the declared Arrow types, and the side row if any.

    Polars emits ``large_string``; the key columns get the input's own Arrow type
    (what Spark sent, so what it expects back), the others the declared one.
    """
    inputs = dict(zip(call.columns, table.schema.types, strict=False))
    fields = [pa.field(n, inputs[n] if t is None else t) for n, t in call.outputs]
    out = out.select([n for n, _ in call.outputs])
    if call.side:
        fields += [pa.field(SIDE_COLUMNS[0], pa.int64())]
        fields += [pa.field(n, pa.float64()) for n in SIDE_COLUMNS[1:]]
        row = pl.DataFrame(
            [pl.Series(SIDE_COLUMNS[0], [int(side[0])], pl.Int64)]
            + [
                pl.Series(n, [float(v)], pl.Float64)
                for n, v in zip(SIDE_COLUMNS[1:], side[1:], strict=True)
            ]
        )
        out = pl.concat([out, row], how="diagonal_relaxed")
    return out.to_arrow().cast(pa.schema(fields))


def _per_user_kernel(call: _Call) -> Callable[[pa.Table], pa.Table]:
    def kernel(table: pa.Table) -> pa.Table:
        start = time.perf_counter()
        frame = _frame(call, table)
        converted = time.perf_counter()
        options = dict(call.options)
        out = polars_evaluate(frame, list(call.metrics), per_user=True, **options)
        done = time.perf_counter()
        if not call.side:
            return _finish(call, table, out)
        keys = [*options["by"], options["user"], options["item"]]
        size = pl.col("len")
        counts = frame.lazy().group_by(keys).agg(pl.len()).select(size.filter(size > 1).sum())
        duplicates = int(counts.collect().item() or 0)
        checked = time.perf_counter()
        side = [duplicates, converted - start, done - converted, checked - done]
        return _finish(call, table, out, side)

    return kernel


def _summary_kernel(call: _Call) -> Callable[[pa.Table], pa.Table]:
    def kernel(table: pa.Table) -> pa.Table:
        options = dict(call.options)
        by: list[str] = options.pop("by")
        frame = _frame(call, table)
        if _REAL in frame.columns:  # no by: drop the sentinel row
            frame = frame.filter(pl.col(_REAL)).drop(_REAL, _GROUP)
        out = summarize(frame.lazy(), list(call.metrics), by, **options).collect()
        return _finish(call, table, out)

    return kernel


def _global_kernel(call: _Call) -> Callable[[pa.Table], pa.Table]:
    def kernel(table: pa.Table) -> pa.Table:
        options = dict(call.options)
        layouts: dict[str, list[str]] = options.pop("layouts")
        partials = global_partials(_frame(call, table), list(call.metrics), **options)
        frames = pl.collect_all([partials[name] for name in call.metrics])
        tagged = [
            part.rename(
                dict(zip(layouts[name], _slots(i, layouts[name]), strict=True))
            ).with_columns(pl.lit(i, pl.Int32).alias(_TAG))
            for i, (name, part) in enumerate(zip(call.metrics, frames, strict=True))
        ]
        return _finish(call, table, pl.concat(tagged, how="diagonal_relaxed"))

    return kernel


def _slots(i: int, columns: Sequence[str]) -> list[str]:
    """Positional names of metric ``i``'s partial columns in the shared output."""
    return [f"__prk_g{i}_{j}" for j in range(len(columns))]


def _by_bucket(rows: SparkDataFrame, plan: Plan) -> GroupedData:
    """The rows grouped by ``pmod(xxhash64(user), n)``, one bucket per Polars call.

    The explicit ``repartition(n, bucket)`` (which the ``groupBy`` reuses: one shuffle)
    keeps adaptive query execution from coalescing the shuffle partitions: it merges
    them by bytes, and this stage is compute-heavy, so a few large tasks would leave
    most cores idle.
    """
    from pyspark.sql import functions as sf

    user_slot = sf.col(f"__prk_c{plan.needed.index(plan.user)}")
    bucket = sf.pmod(sf.xxhash64(user_slot), sf.lit(plan.n_partitions)).alias(_BUCKET)
    inputs = _safe_columns(rows, plan.needed).select("*", bucket)
    return inputs.repartition(plan.n_partitions, _BUCKET).groupBy(_BUCKET)


# --------------------------------------------------------------------------- stages
def per_user_values(rows: SparkDataFrame, plan: Plan, *, side: bool = False) -> SparkDataFrame:
    """One ``applyInArrow`` over the user buckets: the Polars per-user values.

    ``rows`` comes from :meth:`Plan.input_rows`. With ``side=True`` every call adds
    one side row with the :data:`SIDE_COLUMNS` (duplicate count and seconds spent),
    null on the real rows, whose columns are then null on the side rows.
    """
    explicit = plan.wanted is not None
    options = {
        **plan.call_options(),
        "empty": "zero" if plan.empty == "zero" and not explicit else "skip",
        "validate": False,
        **plan.kernel_options,
    }
    names = [*plan.keys, *plan.user_names]
    schema = plan.per_user_schema
    outputs = tuple((n, None if n in plan.keys else _arrow_type(schema[n])) for n in names)
    metrics = plan.user_names or [_keys_only().name]
    call = _Call(tuple(plan.needed), tuple(metrics), tuple(options.items()), outputs, side)
    fields = [plan.field(n) if n in plan.keys else _spark_field(n, schema[n]) for n in names]
    if side:
        fields.append(_spark_field(SIDE_COLUMNS[0], pl.Int64))
        fields += [_spark_field(n, pl.Float64) for n in SIDE_COLUMNS[1:]]
    grouped = _by_bucket(rows, plan)
    return grouped.applyInArrow(_per_user_kernel(call), _struct(fields))


def summary_values(values: SparkDataFrame, plan: Plan) -> SparkDataFrame:
    """A second ``applyInArrow``, one call per by group, running :func:`summarize`."""
    from pyspark.sql import functions as sf

    columns = [*plan.by, *plan.user_names]
    inputs = _safe_columns(values, columns)
    if plan.by:
        grouped = inputs.groupBy(*[f"__prk_c{i}" for i in range(len(plan.by))])
    else:
        # One call even when there is no user: a sentinel row, dropped by the kernel.
        slots = [f"__prk_c{i}" for i in range(len(columns))]
        real = inputs.select(*slots, sf.lit(True).alias(_REAL), sf.lit(0).alias(_GROUP))
        sentinel = plan.session.range(0, 1, 1, 1).select(
            *[sf.lit(None).cast("double").alias(s) for s in slots],
            sf.lit(False).alias(_REAL),
            sf.lit(0).alias(_GROUP),
        )
        grouped = real.unionByName(sentinel).groupBy(_GROUP)
    empty_values = pl.LazyFrame(schema={n: plan.per_user_schema[n] for n in columns})
    # zero and error were applied to the per-user values already.
    summary_options = {
        **plan.summary_options,
        "empty": "skip_row" if plan.empty == "skip_row" else "skip",
    }
    schema = summarize(empty_values, plan.user_names, plan.by, **summary_options).collect_schema()
    outputs = tuple((n, None if n in plan.by else _arrow_type(schema[n])) for n in schema)
    options = {"by": plan.by, **summary_options}
    call = _Call(tuple(columns), tuple(plan.user_names), tuple(options.items()), outputs)
    fields = [plan.field(n) if n in plan.by else _spark_field(n, schema[n]) for n in schema]
    return grouped.applyInArrow(_summary_kernel(call), _struct(fields))


def global_values(rows: SparkDataFrame, plan: Plan) -> pl.DataFrame:
    """Global metrics: partials per call, merged by Spark, finalized on the driver.

    Every call emits the partials of all global metrics in one frame: a tag column
    (the metric's index), the by columns and each metric's own columns under
    positional names (null in the other metrics' rows). One Spark ``groupBy`` over
    the tag, by and every group column merges them with each part's combine (sum,
    min or max); the merged partials are small and go to the driver.
    """
    from pyspark.sql import functions as sf

    names = plan.global_names
    options = plan.call_options()
    empty_frame = pl.DataFrame(schema=plan.polars_schema)
    dry = global_partials(empty_frame, names, **{**options, "users": "all"})
    schemas = {name: dry[name].collect_schema() for name in names}
    layouts = {name: [c for c in schemas[name].names() if c not in plan.by] for name in names}
    outputs: list[tuple[str, pa.DataType | None]] = [(_TAG, pa.int32())]
    fields = [_spark_field(_TAG, pl.Int32)]
    for b in plan.by:
        outputs.append((b, None))
        fields.append(plan.field(b))
    for i, name in enumerate(names):
        for column, slot in zip(layouts[name], _slots(i, layouts[name]), strict=True):
            outputs.append((slot, _arrow_type(schemas[name][column])))
            fields.append(_spark_field(slot, schemas[name][column]))
    call_options = {**options, "layouts": layouts}
    call = _Call(tuple(plan.needed), tuple(names), tuple(call_options.items()), tuple(outputs))
    grouped = _by_bucket(rows, plan)
    partials = grouped.applyInArrow(_global_kernel(call), _struct(fields))
    combine = {"sum": sf.sum, "min": sf.min, "max": sf.max}
    keys, aggs = [_TAG, *plan.by], []
    for i, name in enumerate(names):
        parts = plan.global_plans[name].combine
        for column, slot in zip(layouts[name], _slots(i, layouts[name]), strict=True):
            if column in parts:
                aggs.append(combine[parts[column]](_col(slot)).alias(slot))
            else:
                keys.append(slot)
    merged = pl.from_arrow(partials.groupBy(*[_col(k) for k in keys]).agg(*aggs).toArrow())
    if isinstance(merged, pl.Series):  # pragma: no cover - a table gives a frame
        merged = merged.to_frame()
    by_metric: dict[str, list[pl.LazyFrame]] = {}
    for i, name in enumerate(names):
        renamed = [
            pl.col(s).alias(c) for s, c in zip(_slots(i, layouts[name]), layouts[name], strict=True)
        ]
        part = merged.filter(pl.col(_TAG) == i).select(*plan.by, *renamed)
        by_metric[name] = [part.cast(schemas[name]).lazy()]
    options.pop("users")
    return finalize_globals(
        by_metric, names, schema=plan.polars_schema, empty=plan.empty, **options
    ).collect()


def _raise_on_undefined(values: SparkDataFrame, plan: Plan) -> None:
    """``empty="error"``: the message of the Polars evaluate, from two small jobs."""
    from pyspark.sql import functions as sf

    names = plan.user_names
    if not names:
        return
    counts = values.agg(
        *[sf.count_if(_col(n).isNull()).alias(f"__prk_c{i}") for i, n in enumerate(names)]
    ).collect()[0]
    for i, name in enumerate(names):
        count = counts[f"__prk_c{i}"]
        if count:
            keys = [_col(k) for k in plan.keys]
            bad = values.filter(_col(name).isNull()).select(*keys).orderBy(*keys).limit(5)
            example = [tuple(row) for row in bad.collect()]
            raise ValueError(undefined_message(name, count, example))


def long_summary(wide: SparkDataFrame, plan: Plan) -> SparkDataFrame:
    """``summary="long"``: the wide summary unpivoted as :func:`polars_rankeval._plan.long_summary`.

    One row per (by, metric, aggregation), in the order of the Polars engine: by,
    then the metrics and aggregations as requested (a position column sorts them).
    """
    from pyspark.sql import functions as sf

    rows: list[Column] = []
    for name in plan.user_names:
        for agg in plan.aggregations:
            rows.append(
                sf.struct(
                    sf.lit(len(rows)).alias("__prk_pos"),
                    sf.lit(name).alias("metric"),
                    sf.lit(agg).alias("aggregation"),
                    _col(summary_name(agg, name)).cast("double").alias("value"),
                    _col(count_name(name)).alias("n_users"),
                    (_col("n_users") - _col(count_name(name))).alias("n_skipped"),
                )
            )
    for name in plan.global_names:
        rows.append(
            sf.struct(
                sf.lit(len(rows)).alias("__prk_pos"),
                sf.lit(name).alias("metric"),
                sf.lit(GLOBAL_AGGREGATION).alias("aggregation"),
                _col(name).cast("double").alias("value"),
                _col("n_users").alias("n_users"),
                sf.lit(0).cast("long").alias("n_skipped"),
            )
        )
    by = [_col(b) for b in plan.by]
    exploded = wide.select(*by, sf.explode(sf.array(*rows)).alias("__prk_row"))
    flat = exploded.select(*by, "__prk_row.*")
    ordered = flat.orderBy(*by, "__prk_pos")
    return ordered.select(*by, "metric", "aggregation", "value", "n_users", "n_skipped")


# --------------------------------------------------------------------------- validation
def _predicates(plan: Plan) -> dict[str, Column]:
    """Row-level problems of :func:`polars_rankeval._validate.check_values`."""
    from pyspark.sql import functions as sf

    cols = plan.columns
    order, rel = _col(plan.order), _col(str(cols["relevance"])).cast("double")
    predicates: dict[str, Column] = {
        "null_user": _col(plan.user).isNull(),
        "null_item": _col(str(cols["item"])).isNull(),
        "nan_rel": sf.isnan(rel),
        "inf_rel": (rel == float("inf")) | (rel == float("-inf")),
        "neg_rel": rel < 0,
    }
    if plan.polars_schema[plan.order].is_float():
        predicates["bad_order"] = (
            sf.isnan(order) | (order == float("inf")) | (order == float("-inf"))
        )
    if cols["rank"] is not None:
        predicates["bad_rank"] = order < 1
    for i, b in enumerate(plan.by):
        predicates[f"null_by:{i}"] = _col(b).isNull()
    return predicates


def row_problems(data: SparkDataFrame, plan: Plan) -> dict[str, int]:
    """Counts of the row-level problems, in one Spark job without a shuffle.

    Duplicate (by, user, item) keys are counted by the per-user calls instead (see
    :data:`SIDE_COLUMNS`): they see all the rows of their users, so their counts add
    up to the count over the whole input without a shuffle of its own.
    """
    from pyspark.sql import functions as sf

    predicates = _predicates(plan)
    row = data.agg(
        *[sf.count_if(p).alias(f"__prk_c{i}") for i, p in enumerate(predicates.values())]
    )
    found = row.collect()[0]
    return {name: int(found[i] or 0) for i, name in enumerate(predicates)}


def _duplicates(values: SparkDataFrame) -> int:
    """The duplicate count summed over the side rows of a per-user pass."""
    from pyspark.sql import functions as sf

    total = values.agg(sf.sum(_col(SIDE_COLUMNS[0]))).collect()[0][0]
    return int(total or 0)


def raise_first_problem(
    data: SparkDataFrame, plan: Plan, counts: dict[str, int], *, before_duplicates: bool = False
) -> None:
    """Raise the first problem in the order and with the message of the Polars checks.

    ``before_duplicates=True`` (duplicates not counted yet) only raises the problems
    that the Polars checks report before duplicates; up to 3 offending rows are shown,
    as Polars does (none for null by values).
    """
    cols = plan.columns
    item = str(cols["item"])
    keys = [*plan.by, plan.user, item]
    columns = Columns(plan.user, item, cols["score"], str(cols["relevance"]), cols["rank"])
    # The Spark counts name a by column by its position: null_by:<i>.
    by_key = {f"null_by:{b}": f"null_by:{i}" for i, b in enumerate(plan.by)}
    problems = [(by_key.get(key, key), text) for key, text in problem_templates(columns, plan.by)]
    for key, template in problems:
        if key == "dup" and before_duplicates:
            return
        count = counts.get(key, 0)
        if not count:
            continue
        message = template.format(n=count)
        if key.startswith("null_by:"):  # Polars shows no rows for these
            raise ValueError(message)
        if key == "dup":
            raise ValueError(message + _duplicate_details(data, plan, columns, keys))
        offending = data.filter(_predicates(plan)[key])
        rows = [row.asDict() for row in offending.limit(3).collect()]
        raise ValueError(f"{message}; e.g. {rows}")


def _duplicate_details(data: SparkDataFrame, plan: Plan, columns: Columns, keys: list[str]) -> str:
    """The duplicate pairs and the ``by=`` hint of the Polars checks, computed by Spark."""
    from pyspark.sql import functions as sf

    counts = data.groupBy(*[_col(k) for k in keys]).agg(sf.count(sf.lit(1)).alias("__prk_n"))
    top = (
        counts.filter(sf.col("__prk_n") > 1)
        .orderBy(sf.desc("__prk_n"), *[_col(k).asc_nulls_first() for k in keys])
        .limit(3)
        .collect()
    )
    examples = []
    for found in top:
        key = {k: found[i] for i, k in enumerate(keys)}
        match = [_col(k) == sf.lit(v) for k, v in key.items()]
        condition = match[0]
        for part in match[1:]:
            condition = condition & part
        rows = [row.asDict() for row in data.filter(condition).limit(3).collect()]
        examples.append((key, int(found["__prk_n"]), rows))
    candidates = by_candidates(plan.polars_schema, columns, plan.by)
    stats: dict[str, int] = {}
    if candidates:
        found_stats = data.agg(
            sf.count(sf.lit(1)).alias("rows"),
            *[
                sf.count_distinct(sf.struct(*[_col(k) for k in [*keys, c]])).alias(f"k{i}")
                for i, c in enumerate(candidates)
            ],
            *[
                sf.count_distinct(sf.struct(_col(c))).alias(f"v{i}")
                for i, c in enumerate(candidates)
            ],
        ).collect()[0]
        stats["rows"] = int(found_stats["rows"])
        for i, c in enumerate(candidates):
            stats[f"key:{c}"] = int(found_stats[f"k{i}"])
            stats[f"values:{c}"] = int(found_stats[f"v{i}"])
    return format_duplicates(examples) + format_by_hint(stats, candidates, plan.by)


# --------------------------------------------------------------------------- types
def _col(name: str) -> Column:
    """A column by its exact name (dots, parentheses and backticks quoted)."""
    from pyspark.sql import functions as sf

    return sf.col("`" + name.replace("`", "``") + "`")


def _struct(fields: list[StructField]) -> StructType:
    from pyspark.sql.types import StructType

    return StructType(fields)


def polars_schema_of(schema: StructType) -> pl.Schema:
    """The Polars schema matching a Spark schema (what Arrow conversion gives)."""
    return pl.Schema({f.name: _polars_dtype(f.dataType) for f in schema.fields})


def _polars_dtype(dtype: DataType) -> pl.DataType:
    from pyspark.sql import types as st

    simple: list[tuple[type[st.DataType], pl.DataType]] = [
        (st.BooleanType, pl.Boolean()),
        (st.ByteType, pl.Int8()),
        (st.ShortType, pl.Int16()),
        (st.IntegerType, pl.Int32()),
        (st.LongType, pl.Int64()),
        (st.FloatType, pl.Float32()),
        (st.DoubleType, pl.Float64()),
        (st.StringType, pl.String()),
        (st.CharType, pl.String()),
        (st.VarcharType, pl.String()),
        (st.BinaryType, pl.Binary()),
        (st.DateType, pl.Date()),
        (st.TimestampType, pl.Datetime("us", "UTC")),
        (st.TimestampNTZType, pl.Datetime("us")),
        (st.NullType, pl.Null()),
    ]
    for spark_type, polars_type in simple:
        if isinstance(dtype, spark_type):
            return polars_type
    if isinstance(dtype, st.DecimalType):
        return pl.Decimal(dtype.precision, dtype.scale)
    if isinstance(dtype, st.ArrayType):
        return pl.List(_polars_dtype(dtype.elementType))
    if isinstance(dtype, st.StructType):
        return pl.Struct({f.name: _polars_dtype(f.dataType) for f in dtype.fields})
    if isinstance(dtype, st.MapType):
        inner = {"key": _polars_dtype(dtype.keyType), "value": _polars_dtype(dtype.valueType)}
        return pl.List(pl.Struct(inner))
    return pl.Object()  # intervals, variants, ...: no use as a column of the long frame


def _spark_field(name: str, dtype: pl.DataType | type[pl.DataType]) -> StructField:
    """The Spark field of a result column that is not an input column."""
    from pyspark.sql import types as st

    spark: dict[Any, st.DataType] = {
        pl.Float64: st.DoubleType(),
        pl.Float32: st.FloatType(),
        pl.Int64: st.LongType(),
        pl.Int32: st.IntegerType(),
        pl.Int16: st.ShortType(),
        pl.Int8: st.ByteType(),
        pl.UInt32: st.LongType(),
        pl.UInt16: st.IntegerType(),
        pl.UInt8: st.ShortType(),
        pl.Boolean: st.BooleanType(),
        pl.String: st.StringType(),
    }
    for polars_type, spark_type in spark.items():
        if dtype == polars_type:
            return st.StructField(name, spark_type, True)
    msg = f"column {name!r} has dtype {dtype}, which has no Spark type here"
    raise TypeError(msg)


def _arrow_type(dtype: pl.DataType | type[pl.DataType]) -> pa.DataType:
    """The Arrow type Spark expects for :func:`_spark_field`'s type of ``dtype``."""
    arrow: dict[Any, pa.DataType] = {
        pl.Float64: pa.float64(),
        pl.Float32: pa.float32(),
        pl.Int64: pa.int64(),
        pl.Int32: pa.int32(),
        pl.Int16: pa.int16(),
        pl.Int8: pa.int8(),
        pl.UInt32: pa.int64(),
        pl.UInt16: pa.int32(),
        pl.UInt8: pa.int16(),
        pl.Boolean: pa.bool_(),
        pl.String: pa.string(),
    }
    for polars_type, arrow_type in arrow.items():
        if dtype == polars_type:
            return arrow_type
    msg = f"dtype {dtype} has no Spark type here"
    raise TypeError(msg)
