"""The Spark engine: the engine operations (:mod:`polars_rankeval.plan.interface`) on Spark.

:class:`SparkEngine` computes data-wide scalars with Spark SQL aggregates and maps the
plan's Polars build over whole users: the users are hashed into ``n_partitions``
buckets and ``groupBy(pmod(xxhash64(user), n)).applyInArrow`` hands each bucket to
Polars as one Arrow table (after ``repartition(n, bucket)``, so that adaptive
execution cannot merge buckets into a few tasks). Global partials are merged by a Spark
``groupBy``; the summary is one Polars call per by group. The checks, statistics,
build and summary are the shared plan's; :mod:`polars_rankeval.api.spark` is the entry
point.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import polars as pl

import polars_rankeval.plan.args as _args
from polars_rankeval._utils.types import type_label
from polars_rankeval.engines.memory import UserFn
from polars_rankeval.engines.spark_ops import (
    col,
    create_frame,
    map_groups,
    merge,
    polars_schema,
    require_pyspark,
    slots,
    spark_rows,
    spark_scalars,
    to_polars,
    worker_errors,
)
from polars_rankeval.metrics.spec import GlobalPlan
from polars_rankeval.plan.build import wanted_users
from polars_rankeval.plan.finish import (
    fill_empty,
    finalize,
    raise_message,
    raising,
    summary_of,
    undefined_message,
)
from polars_rankeval.plan.interface import Scalar, UserOutputs
from polars_rankeval.plan.job import Job
from polars_rankeval.plan.validate import (
    duplicate_details,
    raise_first_problem,
    row_checks,
    sort_duplicates,
    top_duplicates,
)

if TYPE_CHECKING:
    from pyspark.sql import DataFrame as SparkDataFrame

DEFAULT_PARTITIONS = 200
"""Buckets when ``n_partitions`` is not given and the session's
``spark.sql.shuffle.partitions`` is not a number (e.g. ``auto``)."""
SIDE_COLUMNS = (
    "__prk_duplicates",
    "__prk_convert_seconds",
    "__prk_polars_seconds",
    "__prk_check_seconds",
)
"""The side row of each per-user call when validating: its duplicate rows, its seconds in
the Arrow to Polars conversion, the Polars build and the duplicate count."""
_TAG, _WANTED, _REAL, _POS = "__prk_tag", "__prk_wanted", "__prk_real", "__prk_pos"


class SparkEngine:
    """The engine operations (:class:`polars_rankeval.plan.interface.Engine`) on Spark.

    Pass ``SparkEngine(n_partitions=...)`` as ``evaluate(..., engine=)``, which binds it
    to the data (:meth:`bind`).
    """

    def __init__(self, *, n_partitions: int | None = None) -> None:
        n_partitions = _args.count("n_partitions", n_partitions)
        if n_partitions is not None and n_partitions < 1:
            msg = f"n_partitions must be a positive integer, got {n_partitions!r}"
            raise ValueError(msg)
        self.n_partitions = n_partitions
        self.partitions = n_partitions or DEFAULT_PARTITIONS
        self.data: Any = None  # the Spark DataFrame, once bound
        self._schema = pl.Schema()
        self._layouts: dict[str, list[str]] = {}
        self._partial_schemas: dict[str, pl.Schema] = {}

    def bind(self, data: SparkDataFrame) -> SparkEngine:
        """A copy of this engine over ``data`` (a new object; the number of buckets resolved)."""
        require_pyspark()
        from pyspark.sql import DataFrame

        if not isinstance(data, DataFrame):
            msg = f"data must be a pyspark DataFrame, got {type_label(data)}"
            raise TypeError(msg)
        bound = SparkEngine(n_partitions=self.n_partitions)
        bound.data = data
        if self.n_partitions is None:
            value = str(data.sparkSession.conf.get("spark.sql.shuffle.partitions"))
            bound.partitions = int(value) if value.isdigit() else DEFAULT_PARTITIONS
        bound._schema = polars_schema(data.schema)
        return bound

    def local(self, value: Any) -> Any:
        """A Spark DataFrame argument (``users=``, ``items=``, ``n_items=``) as Polars."""
        return to_polars(value) if hasattr(value, "toArrow") else value

    # ------------------------------------------------------------------ the operations
    def schema(self) -> pl.Schema:
        """The Polars schema Arrow conversion gives the Spark schema."""
        return self._schema

    def scalars(
        self, wanted: Mapping[str, Scalar], frame: SparkDataFrame | None = None
    ) -> dict[str, Any]:
        """The aggregates over the data (or ``frame``) in one Spark job."""
        return spark_scalars(self.data if frame is None else frame, wanted)

    def distinct(self, columns: Sequence[str], *, present: str | None = None) -> pl.LazyFrame:
        """The distinct rows of ``columns``, collected to the driver."""
        rows = self.data if present is None else self.data.filter(col(present).isNotNull())
        return to_polars(rows.select(*[col(c) for c in columns]).distinct()).lazy()

    def polars_rows(self) -> pl.LazyFrame | None:
        """None: the rows stay in Spark (the plan's own checks report there)."""
        return None

    def rows(self, where: Scalar | Mapping[str, Any], n: int = 3) -> list[dict[str, Any]]:
        """Up to ``n`` rows where a check holds, or whose columns equal the values."""
        return spark_rows(self.data, where, n)

    def map_users(self, job: Job, fn: UserFn, *, validate: bool) -> UserOutputs:
        """Row checks, the per-user pass (duplicates counted by its calls), the merge."""
        from pyspark.sql import functions as sf

        counts: dict[str, Any] = {}
        if validate:  # row-level problems first: one job, no shuffle
            counts = self.scalars(row_checks(self._schema, job.cols, job.by))
            raise_first_problem(counts, job.cols, job.by, functools.partial(self._example, job))
        out = self.user_pass(job, fn, side=validate)
        reasons = raising(job)
        if validate or job.empty == "error" or reasons:
            with worker_errors():
                out = out.localCheckpoint(eager=True)
        if validate:  # the calls counted the duplicates: they see every row of their users
            counts["dup"] = int(out.agg(sf.sum(col(SIDE_COLUMNS[0]))).collect()[0][0] or 0)
            raise_first_problem(counts, job.cols, job.by, functools.partial(self._example, job))
            out = out.filter(col(SIDE_COLUMNS[0]).isNull())
        per_user = out.filter(col(_TAG).isNull()).select(
            *[col(c) for c in [*job.keys, *job.user_names]]
        )
        partials = self._merge(job, out) if job.global_names else {}
        if reasons:
            per_user = self._check_raising(job, per_user, reasons)
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
            mine = None if values is None else values.lazy()
            if mine is not None and job.by:  # this call's by group
                group = job.inner(frame.lazy().select(job.by).unique())
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
            extra = create_frame(self.data, groups).withColumn(_REAL, sf.lit(False))
            rows = rows.unionByName(extra, allowMissingColumns=True)
        result = map_groups(rows, kernel, schema, group=job.by)
        if job.summary == "long" or job.by:  # a global sort costs a job of its own
            order = [*job.by, _POS] if job.summary == "long" else job.by
            result = result.orderBy(*[col(c) for c in order])
        return result.drop(_POS)

    # ------------------------------------------------------------------ the Spark passes
    def user_pass(self, job: Job, fn: UserFn, *, side: bool = False) -> SparkDataFrame:
        """One ``applyInArrow`` over the user buckets: per-user values and partials.

        Per-user rows have a null :data:`_TAG`; metric ``i``'s partial rows the tag
        ``i`` and their columns under positional names
        (:func:`polars_rankeval.engines.spark_ops.slots`); with ``side`` each call adds one row
        with the :data:`SIDE_COLUMNS`. An explicit user list
        travels with the rows (rows flagged :data:`_WANTED`), so that each call gets
        the share of it that hashes into its bucket.
        """
        from pyspark.sql import functions as sf

        needed = job.columns(self._schema)
        rows = self.data.select(*[col(c) for c in needed])
        groups = None
        if not isinstance(job.users, str):
            user = job.cols.user
            ids = create_frame(
                self.data, wanted_users(job.users, user, self._schema[user]).to_frame()
            )
            if not side:  # only the listed users' rows (checks need every user's)
                listed = ids.select(col(user).alias("__prk_u"))
                on = sf.col("__prk_u").eqNullSafe(col(user))
                rows = rows.join(listed, on, "left_semi")
            wanted = ids.withColumn(_WANTED, sf.lit(True))
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
            named = zip(layouts[name], slots(i, layouts[name]), strict=True)
            schema |= {slot: part[c] for c, slot in named}
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
                part.rename(dict(zip(layouts[n], slots(i, layouts[n]), strict=True))).with_columns(
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

        return map_groups(
            rows,
            kernel,
            pl.Schema(schema),
            user=job.cols.user,
            partitions=self.partitions,
            clock=clock,
        )

    def _merge(self, job: Job, out: SparkDataFrame) -> dict[str, list[pl.LazyFrame]]:
        """The global partials merged by Spark (sum, min or max per part), to the driver."""
        features, how = job.features(), dict[str, str | None]()
        for i, (name, layout) in enumerate(self._layouts.items()):
            plan = next(m for m in job.metrics if m.name == name).plan(features)
            parts = plan.combine if isinstance(plan, GlobalPlan) else {}
            how |= {s: parts.get(c) for c, s in zip(layout, slots(i, layout), strict=True)}
        with worker_errors():
            merged = merge(out.filter(col(_TAG).isNotNull()), [_TAG, *job.by], how)
        result = {}
        for i, (name, layout) in enumerate(self._layouts.items()):
            renamed = [pl.col(s).alias(c) for s, c in zip(slots(i, layout), layout, strict=True)]
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
        found = map_groups(
            self.data.select(*[col(k) for k in keys]),
            lambda f: top_duplicates(f.lazy(), job.cols, job.by).collect(),
            schema.collect_schema(),
            user=job.cols.user,
            partitions=self.partitions,
        )
        with worker_errors():
            top = sort_duplicates(to_polars(found).lazy(), keys).collect()
        return duplicate_details(top, self._schema, job.cols, job.by, self.rows, self.scalars)

    def _check_raising(
        self, job: Job, values: SparkDataFrame, reasons: dict[str, str]
    ) -> SparkDataFrame:
        """``insufficient=raise``-like options: the Polars message, else NaN -> null."""
        from pyspark.sql import functions as sf

        found = values.agg(
            *(sf.sum(sf.isnan(col(n)).cast("long")).alias(n) for n in reasons)
        ).collect()[0]
        for name, reason in reasons.items():
            count = int(found[name] or 0)
            if count:
                keys = [col(k) for k in job.keys]
                bad = values.filter(sf.isnan(col(name))).select(*keys).orderBy(*keys).limit(5)
                example = [tuple(row) for row in bad.collect()]
                raise ValueError(raise_message(name, reason, count, example))
        return values.withColumns(
            {n: sf.when(sf.isnan(col(n)), sf.lit(None)).otherwise(col(n)) for n in reasons}
        )

    def _check_defined(self, job: Job, values: SparkDataFrame) -> None:
        """``empty="error"``: the Polars message, from two small jobs."""
        names = job.user_names
        counts = self.scalars({n: Scalar("count", n, "null") for n in names}, values)
        for name in names:
            if counts[name]:
                keys = [col(k) for k in job.keys]
                bad = values.filter(col(name).isNull()).select(*keys).orderBy(*keys).limit(5)
                example = [tuple(row) for row in bad.collect()]
                raise ValueError(undefined_message(name, counts[name], example))
