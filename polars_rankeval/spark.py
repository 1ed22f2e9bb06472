"""Evaluation on Apache Spark: a Spark engine for the package's own Polars plan.

:func:`evaluate` takes a Spark DataFrame (the long frame: one row per (user, item)) and
returns a Spark DataFrame with what :func:`polars_rankeval.evaluate` returns for the same
rows. It *is* :func:`polars_rankeval.evaluate` with ``engine=SparkEngine(...)``: the
arguments, checks, statistics, per-user build and summary are the shared plan's
(:mod:`polars_rankeval._engine` describes the interface). :class:`SparkEngine` only
provides the operations: data-wide scalars with Spark SQL aggregates, and the map over
whole users: the users are hashed into ``n_partitions`` buckets,
``groupBy(pmod(xxhash64(user), n)).applyInArrow(...)`` hands each bucket to Python as
one Arrow table (after ``repartition(n, bucket)``, so that adaptive execution cannot
merge the buckets into a few tasks) and the plan's Polars build runs on it. The global
metrics' partials are merged by a Spark ``groupBy`` and finalized on the driver; the
summary is a second ``applyInArrow``, one call per by group.

Spark stays optional (``pip install 'polars-rankeval[spark]'``): importing this module
does not import pyspark; :func:`evaluate` does. The executors need ``polars_rankeval``
installed too. Only the plain DataFrame API is used, so Spark Connect works as well.

For a local session, set ``spark.driver.memory`` in the builder before the first
``getOrCreate()`` (the JVM reads it once, at start), point ``PYSPARK_PYTHON`` at the
Python that has ``polars_rankeval``, and set ``SPARK_LOCAL_IP=127.0.0.1`` where the
host name does not resolve. ``benchmarks/bench_spark.py`` shows a complete setup.
"""

from __future__ import annotations

import contextlib
import functools
import operator
import re
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import polars as pl
import pyarrow as pa

from polars_rankeval._build import build, wanted_users
from polars_rankeval._engine import Scalar, UserFn, UserOutputs
from polars_rankeval._evaluate import evaluate as _evaluate
from polars_rankeval._finish import fill_empty, finalize, summary_of, undefined_message
from polars_rankeval._job import Job, MetricsArg
from polars_rankeval._types import make_columns
from polars_rankeval._validate import (
    duplicate_details,
    raise_first_problem,
    row_checks,
    sort_duplicates,
    top_duplicates,
)
from polars_rankeval.registry import GlobalPlan

if TYPE_CHECKING:
    from pyspark.sql import Column, GroupedData
    from pyspark.sql import DataFrame as SparkDataFrame
    from pyspark.sql.types import StructType

__all__ = ["SparkEngine", "evaluate"]

INSTALL_HINT = "pip install 'polars-rankeval[spark]' (pyspark>=4.0, pandas>=2.2,<3)"
DEFAULT_PARTITIONS = 200
"""Buckets when ``n_partitions`` is not given and the session's
``spark.sql.shuffle.partitions`` is not a number (e.g. ``auto``)."""
SIDE_COLUMNS = (
    "__prk_duplicates",
    "__prk_convert_seconds",
    "__prk_polars_seconds",
    "__prk_check_seconds",
)
"""Columns of the one side row each per-user call adds when validating (null on the real
rows): rows of the call sharing a (by, user, item) key with another, then the seconds
spent converting Arrow to Polars, in the Polars build and counting those duplicates."""
_TAG, _WANTED, _REAL, _POS = "__prk_tag", "__prk_wanted", "__prk_real", "__prk_pos"


def evaluate(
    data: SparkDataFrame, metrics: MetricsArg, *, n_partitions: int | None = None, **options: Any
) -> SparkDataFrame:
    """Evaluate many metrics over a Spark DataFrame with the Polars plan.

    ``polars_rankeval.evaluate(data, metrics, engine=SparkEngine(n_partitions), **options)``:
    the same arguments, checks and values, as a Spark DataFrame. Each of
    ``n_partitions`` hash buckets of users is one Polars call (``applyInArrow``)
    holding all the rows of its users.

    Parameters
    ----------
    data
        The long frame as a Spark DataFrame (classic or Spark Connect).
    metrics
        Metric names in the grammar ``name[(key=value,...)][@k]``.
    n_partitions
        Number of hash buckets of users: of Polars calls and of Spark tasks. Each call
        holds about 1/n of the rows in memory at once and costs about 15 ms besides its
        rows. Default: the session's ``spark.sql.shuffle.partitions`` (200 if that is
        not a number).
    **options
        The keywords of :func:`polars_rankeval.evaluate`. ``users=``, ``items=`` and
        ``n_items=`` may also be (small) Spark DataFrames: they are collected to the
        driver. ``strategy=``, ``memory_limit=``, ``n_buckets=``, ``temp_dir=`` and
        ``progress=`` choose among the Polars engines and have no effect here;
        ``per_item=True`` is not supported yet.

    Returns
    -------
    pyspark.sql.DataFrame
        The per-user values (``per_user=True``: one row per (by, user), in no
        particular order) or the summary (sorted by ``by``), with the columns of
        :func:`polars_rankeval.evaluate`. It is lazy, except for what needs the data
        at the call: data-wide statistics, global metrics, and ``validate=True`` or
        ``empty="error"``, which compute the per-user values once at the call and keep
        them with ``localCheckpoint``. A ``ValueError`` of a Polars call is raised as
        such by these parts; from the lazy frame it comes as Spark's
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
    result: Any = _evaluate(data, metrics, engine=SparkEngine(n_partitions=n_partitions), **options)
    return result


class SparkEngine:
    """The engine operations (:class:`polars_rankeval._engine.Engine`) on Spark.

    ``SparkEngine(n_partitions=...)`` is passed as ``evaluate(..., engine=...)``, which
    binds it to the data (:meth:`bind`).
    """

    def __init__(self, *, n_partitions: int | None = None) -> None:
        if n_partitions is not None and (
            isinstance(n_partitions, bool) or not isinstance(n_partitions, int)
        ):
            msg = f"n_partitions must be a positive integer or None, got {n_partitions!r}"
            raise TypeError(msg)
        if n_partitions is not None and n_partitions < 1:
            msg = f"n_partitions must be a positive integer, got {n_partitions!r}"
            raise ValueError(msg)
        self.n_partitions = n_partitions
        self.partitions = n_partitions or DEFAULT_PARTITIONS
        self._data: SparkDataFrame | None = None
        self._schema = pl.Schema()
        self._layouts: dict[str, list[str]] = {}
        self._partial_schemas: dict[str, pl.Schema] = {}

    def bind(self, data: SparkDataFrame) -> SparkEngine:
        """A copy of this engine over ``data`` (a new object; the number of buckets resolved)."""
        _require_pyspark()
        bound = SparkEngine(n_partitions=self.n_partitions)
        bound._data = data
        if self.n_partitions is None:
            value = data.sparkSession.conf.get("spark.sql.shuffle.partitions")
            digits = value is not None and value.isdigit()
            bound.partitions = int(value) if value is not None and digits else DEFAULT_PARTITIONS
        bound._schema = _polars_schema(data.schema)
        return bound

    @property
    def data(self) -> SparkDataFrame:
        if self._data is None:
            msg = "this SparkEngine is not bound to data; pass it as evaluate(..., engine=)"
            raise ValueError(msg)
        return self._data

    def local(self, value: Any) -> Any:
        """A Spark DataFrame argument (``users=``, ``items=``, ``n_items=``) as Polars."""
        from pyspark.sql import DataFrame

        return _to_polars(value) if isinstance(value, DataFrame) else value

    # ------------------------------------------------------------------ the operations
    def schema(self) -> pl.Schema:
        return self._schema

    def scalars(
        self, wanted: Mapping[str, Scalar], frame: SparkDataFrame | None = None
    ) -> dict[str, Any]:
        source = self.data if frame is None else frame
        row = source.agg(*[_spark(s).alias(f"__prk_s{i}") for i, s in enumerate(wanted.values())])
        found = row.collect()[0]
        return {name: found[i] for i, name in enumerate(wanted)}

    def distinct(self, columns: Sequence[str]) -> pl.LazyFrame:
        return _to_polars(self.data.select(*[_col(c) for c in columns]).distinct()).lazy()

    def rows(self, where: Scalar | Mapping[str, Any], n: int = 3) -> list[dict[str, Any]]:
        """Up to ``n`` rows where a check holds, or whose columns equal the values."""
        from pyspark.sql import functions as sf

        if isinstance(where, Scalar):
            condition = _spark(where, predicate=True)
        else:
            parts = [_col(c) == sf.lit(v) for c, v in where.items()]
            condition = functools.reduce(operator.and_, parts)
        return [row.asDict() for row in self.data.filter(condition).limit(n).collect()]

    def map_users(self, job: Job, fn: UserFn, *, validate: bool) -> UserOutputs:
        from pyspark.sql import functions as sf

        counts: dict[str, Any] = {}
        if validate:  # row-level problems first: one job, no shuffle
            counts = self.scalars(row_checks(self._schema, job.cols, job.by))
            raise_first_problem(counts, job.cols, job.by, functools.partial(self._example, job))
        out = self.user_pass(job, fn, side=validate)
        if validate or job.empty == "error":
            with worker_errors():
                out = out.localCheckpoint(eager=True)
        if validate:  # the calls counted the duplicates: they see every row of their users
            counts["dup"] = int(out.agg(sf.sum(_col(SIDE_COLUMNS[0]))).collect()[0][0] or 0)
            raise_first_problem(counts, job.cols, job.by, functools.partial(self._example, job))
            out = out.filter(_col(SIDE_COLUMNS[0]).isNull())
        per_user = out.filter(_col(_TAG).isNull()).select(
            *[_col(c) for c in [*job.keys, *job.user_names]]
        )
        partials = self._merge(job, out) if job.global_names else {}
        if job.empty == "error":
            self._check_defined(job, per_user)
        return UserOutputs(per_user, partials)

    def finish(self, job: Job, outputs: UserOutputs) -> SparkDataFrame:
        """The per-user values, or the summary: :func:`summary_of` once per by group."""
        from pyspark.sql import functions as sf

        per_user: SparkDataFrame = outputs.per_user
        if job.per_user:
            return per_user
        values = None
        if job.global_names:
            values = finalize(job, outputs.partials, job.global_names, job.iby).collect()
        empty = pl.LazyFrame(
            schema={job.names[k]: self._schema[k] for k in job.keys}
            | {n: pl.Float64 for n in job.user_names}
        )
        dry = summary_of(job, empty, None if values is None else values.lazy())
        schema = job.outer(dry.with_row_index(_POS)).collect_schema()

        def kernel(frame: pl.DataFrame) -> pl.DataFrame:
            real = job.inner(frame.lazy().filter(pl.col(_REAL)).drop(_REAL))
            mine = None
            if values is not None:
                mine = values.lazy()
                if job.by:  # this call's by group
                    group = (
                        frame.lazy()
                        .select(job.by)
                        .unique()
                        .rename(dict(zip(job.by, job.iby, strict=True)))
                    )
                    mine = mine.join(group, on=job.iby, how="semi", nulls_equal=True)
            return job.outer(summary_of(job, real, mine).with_row_index(_POS)).collect()

        rows = per_user.withColumn(_REAL, sf.lit(True))
        if not job.by:  # one call even without a user
            rows = rows.unionByName(
                self.data.sparkSession.range(1).select(sf.lit(False).alias(_REAL)),
                allowMissingColumns=True,
            )
        elif values is not None:  # a group with global values but no user: its row too
            groups = job.outer(values.lazy().select(job.iby)).collect()
            extra = self._create(groups).withColumn(_REAL, sf.lit(False))
            rows = rows.unionByName(extra, allowMissingColumns=True)
        result = self._map(rows, kernel, schema, group=job.by)
        return result.orderBy(*[_col(b) for b in job.by], _POS).drop(_POS)

    # ------------------------------------------------------------------ the Spark passes
    def user_pass(self, job: Job, fn: UserFn, *, side: bool = False) -> SparkDataFrame:
        """One ``applyInArrow`` over the user buckets: per-user values and partials.

        Per-user rows have a null :data:`_TAG`; metric ``i``'s partial rows the tag
        ``i`` and their columns under positional names (:func:`_slots`); with ``side``
        each call adds one row with the :data:`SIDE_COLUMNS`. An explicit user list
        travels with the rows (rows flagged :data:`_WANTED`), so that each call gets
        the share of it that hashes into its bucket.
        """
        from pyspark.sql import functions as sf

        needed = job.columns(self._schema)
        rows = self.data.select(*[_col(c) for c in needed])
        groups = None
        if not isinstance(job.users, str):
            user = job.cols.user
            ids = wanted_users(job.users, user, self._schema[user]).to_frame()
            wanted = self._create(ids).withColumn(_WANTED, sf.lit(True))
            rows = rows.withColumn(_WANTED, sf.lit(False))
            rows = rows.unionByName(wanted, allowMissingColumns=True)
            groups = self.distinct(job.by).collect() if job.by else None
        empty = pl.LazyFrame(schema={c: self._schema[c] for c in needed})
        dry_user, dry_partials = fn(empty, None, None)
        names = list(dry_partials)
        self._partial_schemas = {n: job.outer(p).collect_schema() for n, p in dry_partials.items()}
        layouts = {
            n: [c for c in p.names() if c not in job.by] for n, p in self._partial_schemas.items()
        }
        self._layouts = layouts
        schema = dict(job.outer(dry_user).collect_schema()) | {_TAG: pl.Int32()}
        for i, name in enumerate(names):
            part = self._partial_schemas[name]
            slots = _slots(i, layouts[name])
            schema |= {s: part[c] for c, s in zip(layouts[name], slots, strict=True)}
        clock: dict[str, float] = {}
        if side:
            schema |= {SIDE_COLUMNS[0]: pl.Int64()} | {c: pl.Float64() for c in SIDE_COLUMNS[1:]}

        def kernel(frame: pl.DataFrame) -> pl.DataFrame:
            start = time.perf_counter()
            share = None
            if _WANTED in frame.columns:
                share = frame.filter(pl.col(_WANTED)).select(job.cols.user)
                frame = frame.filter(~pl.col(_WANTED)).drop(_WANTED)
            lazy_groups = None if groups is None else groups.lazy()
            per_user, partials = fn(frame.lazy(), share, lazy_groups)
            queries = [job.outer(fill_empty(job, per_user))]
            queries += [job.outer(partials[name]) for name in names]
            found = pl.collect_all(queries)
            done = time.perf_counter()
            parts = [found[0]] + [
                part.rename(dict(zip(layouts[n], _slots(i, layouts[n]), strict=True))).with_columns(
                    pl.lit(i, pl.Int32).alias(_TAG)
                )
                for i, (n, part) in enumerate(zip(names, found[1:], strict=True))
            ]
            if side:
                keys = [*job.by, job.cols.user, job.cols.item]
                size = pl.col("len")
                dups = frame.group_by(keys).agg(pl.len()).select(size.filter(size > 1).sum())
                spent = [clock.get("convert", 0.0), done - start, time.perf_counter() - done]
                found_dups = int(dups.item() or 0)
                parts.append(pl.DataFrame([[found_dups], *([t] for t in spent)], SIDE_COLUMNS))
            return pl.concat(parts, how="diagonal_relaxed")

        return self._map(rows, kernel, pl.Schema(schema), user=job.cols.user, clock=clock)

    def _merge(self, job: Job, out: SparkDataFrame) -> dict[str, list[pl.LazyFrame]]:
        """The global partials merged by Spark (sum, min or max per part), to the driver."""
        from pyspark.sql import functions as sf

        features = job.features()
        combine = {"sum": sf.sum, "min": sf.min, "max": sf.max}
        keys, aggs = [_TAG, *job.by], []
        for i, (name, layout) in enumerate(self._layouts.items()):
            plan = next(m for m in job.metrics if m.name == name).plan(features)
            parts = plan.combine if isinstance(plan, GlobalPlan) else {}
            for column, slot in zip(layout, _slots(i, layout), strict=True):
                if column in parts:
                    aggs.append(combine[parts[column]](_col(slot)).alias(slot))
                else:
                    keys.append(slot)
        partials = out.filter(_col(_TAG).isNotNull())
        with worker_errors():
            merged = _to_polars(partials.groupBy(*[_col(k) for k in keys]).agg(*aggs))
        result = {}
        for i, (name, layout) in enumerate(self._layouts.items()):
            renamed = [pl.col(s).alias(c) for s, c in zip(_slots(i, layout), layout, strict=True)]
            part = merged.filter(pl.col(_TAG) == i).select(*job.by, *renamed)
            result[name] = [job.inner(part.cast(self._partial_schemas[name]).lazy())]
        return result

    def _example(self, job: Job, key: str) -> str:
        """The example rows of a problem's message, as the Polars checks show them."""
        if key.startswith("null_by:"):
            return ""
        if key != "dup":
            return f"; e.g. {self.rows(row_checks(self._schema, job.cols, job.by)[key])}"
        keys = [*job.by, job.cols.user, job.cols.item]
        schema = top_duplicates(pl.LazyFrame(schema=self._schema), job.cols, job.by)
        found = self._map(
            self.data.select(*[_col(k) for k in keys]),
            lambda f: top_duplicates(f.lazy(), job.cols, job.by).collect(),
            schema.collect_schema(),
            user=job.cols.user,
        )
        with worker_errors():
            top = sort_duplicates(_to_polars(found).lazy(), keys).collect()
        return duplicate_details(top, self._schema, job.cols, job.by, self.rows, self.scalars)

    def _check_defined(self, job: Job, values: SparkDataFrame) -> None:
        """``empty="error"``: the Polars message, from two small jobs."""
        names = job.user_names
        counts = self.scalars({n: Scalar("count", n, "null") for n in names}, values)
        for name in names:
            if counts[name]:
                keys = [_col(k) for k in job.keys]
                bad = values.filter(_col(name).isNull()).select(*keys).orderBy(*keys).limit(5)
                example = [tuple(row) for row in bad.collect()]
                raise ValueError(undefined_message(name, counts[name], example))

    def _create(self, frame: pl.DataFrame) -> SparkDataFrame:
        """A small Polars frame of input columns as a Spark DataFrame of their types."""
        from pyspark.sql.types import StructType

        fields = [self.data.schema[c] for c in frame.columns]
        return self.data.sparkSession.createDataFrame(frame.to_arrow(), StructType(fields))

    def _map(
        self,
        rows: SparkDataFrame,
        fn: Callable[[pl.DataFrame], pl.DataFrame],
        schema: pl.Schema,
        *,
        group: list[str] | None = None,
        user: str = "",
        clock: dict[str, float] | None = None,
    ) -> SparkDataFrame:
        """``fn`` over buckets of whole users, or by groups (``group``).

        Buckets hash the ``user`` column; ``group=[]`` is one call for all the rows. Input columns keep their Spark types in the result; the others get the type
        of their Polars dtype in ``schema``. ``clock["convert"]``: the seconds each call
        spends turning its Arrow table into a Polars frame.
        """
        from pyspark.sql import functions as sf
        from pyspark.sql.types import StructField, StructType

        columns = rows.columns
        inputs = rows.select(*[_col(c).alias(f"__prk_c{i}") for i, c in enumerate(columns)])
        fields = [
            StructField(n, rows.schema[n].dataType if n in columns else _spark_type(t), True)
            for n, t in schema.items()
        ]

        def kernel(table: pa.Table) -> pa.Table:
            start = time.perf_counter()
            names = [*columns, *table.column_names[len(columns) :]]
            frame = _frame(pl.from_arrow(table.rename_columns(names)))
            if clock is not None:
                clock["convert"] = time.perf_counter() - start
            out = fn(frame.select(columns))
            missing = [pl.lit(None, t).alias(n) for n, t in schema.items() if n not in out.columns]
            out = out.with_columns(missing).select(schema.names()).cast(schema)
            given = dict(zip(columns, table.schema.types, strict=False))
            types = [given[n] if n in given else _arrow(t) for n, t in schema.items()]
            return out.to_arrow().cast(pa.schema(list(zip(schema.names(), types, strict=True))))

        if group is None:
            grouped = _by_bucket(inputs, f"__prk_c{columns.index(user)}", self.partitions)
        elif group:
            grouped = inputs.groupBy(*[f"__prk_c{columns.index(b)}" for b in group])
        else:
            grouped = inputs.withColumn("__prk_group", sf.lit(0)).groupBy("__prk_group")
        return grouped.applyInArrow(kernel, StructType(fields))


# --------------------------------------------------------------------------- helpers
def _slots(i: int, columns: Sequence[str]) -> list[str]:
    """Positional names of metric ``i``'s partial columns in the shared output."""
    return [f"__prk_g{i}_{j}" for j in range(len(columns))]


def _by_bucket(inputs: SparkDataFrame, user: str, n: int) -> GroupedData:
    """The rows grouped by ``pmod(xxhash64(user), n)``, one bucket per Polars call.

    The explicit ``repartition(n, bucket)`` (which the ``groupBy`` reuses: one shuffle)
    keeps adaptive query execution from coalescing the shuffle partitions: it merges
    them by bytes, and this stage is compute-heavy, so a few large tasks would leave
    most cores idle.
    """
    from pyspark.sql import functions as sf

    bucket = sf.pmod(sf.xxhash64(sf.col(user)), sf.lit(n)).alias("__prk_bucket")
    return inputs.select("*", bucket).repartition(n, "__prk_bucket").groupBy("__prk_bucket")


def _spark(scalar: Scalar, *, predicate: bool = False) -> Column:
    """A :class:`Scalar` as a Spark aggregate (or, ``predicate=True``, its row condition)."""
    from pyspark.sql import functions as sf

    if scalar.op == "len":
        return sf.count(sf.lit(1))
    if isinstance(scalar.column, tuple):
        x = sf.struct(*[_col(c) for c in scalar.column])
    else:
        x = _col(str(scalar.column))
        x = x.cast("double") if scalar.as_float else x
    if scalar.op == "n_unique":  # Spark leaves nulls out of a distinct count; Polars not
        nulls = sf.coalesce(sf.max(x.isNull().cast("long")), sf.lit(0))
        return sf.count_distinct(x) + (0 if isinstance(scalar.column, tuple) else nulls)
    if scalar.op in ("min", "max"):
        return sf.min(x) if scalar.op == "min" else sf.max(x)
    inf = (x == float("inf")) | (x == float("-inf"))
    condition = {
        "null": x.isNull(),
        "nan": sf.isnan(x),
        "inf": inf,
        "nan_or_inf": sf.isnan(x) | inf,
        "below": x < scalar.bound,
    }[str(scalar.where)]
    return condition if predicate else sf.count_if(condition)


@contextlib.contextmanager
def worker_errors() -> Iterator[None]:
    """Re-raise a ``ValueError`` / ``TypeError`` of a Polars call as itself.

    Spark wraps an exception of a Python worker into a ``PythonException`` whose text
    ends with the worker's traceback; the last ``ValueError: ...`` or ``TypeError: ...``
    line is the Polars message. Its counts cover the users of that one call, which the
    message says.
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


def _col(name: str) -> Column:
    """A column by its exact name (dots, parentheses and backticks quoted)."""
    from pyspark.sql import functions as sf

    return sf.col("`" + name.replace("`", "``") + "`")


def _frame(out: pl.DataFrame | pl.Series) -> pl.DataFrame:
    return out.to_frame() if isinstance(out, pl.Series) else out


def _to_polars(frame: SparkDataFrame) -> pl.DataFrame:
    """A (small) Spark DataFrame collected to the driver as a Polars frame."""
    return _frame(pl.from_arrow(frame.toArrow()))


def _polars_schema(schema: StructType) -> pl.Schema:
    """The Polars schema that Arrow conversion gives a Spark schema (Object if none)."""
    from pyspark.sql.pandas.types import to_arrow_type

    out = {}
    for f in schema.fields:
        try:
            arrow = to_arrow_type(f.dataType, timezone="UTC")
            out[f.name] = _frame(pl.from_arrow(pa.table({f.name: pa.array([], arrow)}))).dtypes[0]
        except (TypeError, ValueError, pa.ArrowException, NotImplementedError):
            out[f.name] = pl.Object()
    return pl.Schema(out)


def _arrow(dtype: pl.DataType) -> pa.DataType:
    """The Arrow type Spark takes for a result column of ``dtype`` (signed, small strings)."""
    arrow = pl.Series([], dtype=dtype).to_arrow().type
    if pa.types.is_large_string(arrow):
        return pa.string()
    widen = {pa.uint8(): pa.int16(), pa.uint16(): pa.int32(), pa.uint32(): pa.int64()}
    return widen.get(arrow, arrow)


def _spark_type(dtype: pl.DataType) -> Any:
    from pyspark.sql.pandas.types import from_arrow_type

    return from_arrow_type(_arrow(dtype))


# --------------------------------------------------------------------------- benchmarks
class Plan:
    """A job bound to a :class:`SparkEngine`, for ``benchmarks/bench_spark.py``.

    ``Plan.create`` takes the keywords of :func:`evaluate`; :func:`per_user_values`
    runs the instrumented per-user pass of that plan.
    """

    def __init__(self, job: Job, engine: SparkEngine) -> None:
        self.job, self.engine = job, engine
        self.n_partitions = engine.partitions

    @classmethod
    def create(cls, data: SparkDataFrame, metrics: MetricsArg, **kwargs: Any) -> Plan:
        options = kwargs.pop("options", {})
        engine = SparkEngine(n_partitions=kwargs.pop("n_partitions", None)).bind(data)
        columns = {k: kwargs.pop(k) for k in ("user", "item", "score", "relevance", "rank")}
        job = Job.create(
            engine.schema(), metrics, make_columns(**columns), aggregate="mean", **kwargs
        )
        job.compute_statistics(engine, options.get("n_items"), options.get("rating_range"))
        return cls(job, engine)

    def input_rows(self, data: SparkDataFrame) -> SparkDataFrame:
        return data


def per_user_values(rows: SparkDataFrame, plan: Plan, *, side: bool = False) -> SparkDataFrame:
    """The per-user pass of ``plan`` (with ``side``: one :data:`SIDE_COLUMNS` row per call)."""
    job = plan.job
    out = plan.engine.user_pass(job, functools.partial(build, job), side=side)
    return out.select(
        *[_col(c) for c in [*job.keys, *job.user_names, *(SIDE_COLUMNS if side else ())]]
    )
