"""Corrected sampled metrics on Spark: :func:`evaluate_sampled` of :mod:`polars_rankeval.spark`.

The users are hashed into buckets (``groupBy(pmod(xxhash64(user), n)).applyInArrow``,
as the Spark engine does); each bucket runs the Polars
:func:`polars_rankeval.sampled_correction.evaluate_sampled` with ``per_user=True``
(every check of a user sees all its rows, since a user is in one bucket), and adds one
row per user without a positive (null values) so that Spark can count ``n_skipped``.
The means, ``n_users`` and ``n_skipped`` per ``by`` group, and the long form, are Spark
aggregates. The output schema comes from a dry run of the Polars function on an empty
frame of the data's dtypes, which also checks the arguments on the driver.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import polars as pl

from polars_rankeval._spark_engine import SparkEngine
from polars_rankeval._spark_ops import col, map_groups, require_pyspark, worker_errors
from polars_rankeval.sampled_correction import _targets
from polars_rankeval.sampled_correction import evaluate_sampled as _polars_sampled

if TYPE_CHECKING:
    from pyspark.sql import DataFrame as SparkDataFrame

_SKIP = "__prk_skipped"


def evaluate_sampled(
    data: SparkDataFrame,
    metrics: str | Sequence[str],
    *,
    n_partitions: int | None = None,
    **options: Any,
) -> SparkDataFrame:
    """:func:`polars_rankeval.evaluate_sampled` over a Spark DataFrame.

    The same arguments, checks and values (to rounding of the means), as a Spark
    DataFrame: the summary (long or wide, sorted by ``by``, then metric and estimator
    in the order given) or, with ``per_user=True``, the per-user rows in no particular
    order (``n_positives`` as a Spark ``long``).

    Parameters
    ----------
    data
        The scored candidates as a Spark DataFrame.
    metrics
        Metric names, as for :func:`polars_rankeval.evaluate_sampled`.
    n_partitions
        Hash buckets of users (Polars calls). Default: the session's
        ``spark.sql.shuffle.partitions`` (200 if that is not a number).
    **options
        The keywords of :func:`polars_rankeval.evaluate_sampled` (``n_items=`` is
        required).

    Returns
    -------
    pyspark.sql.DataFrame
        The per-user values are computed at the call (kept with ``localCheckpoint``),
        so that a Polars ``ValueError`` of the data checks (null or NaN scores,
        duplicates, users without negatives) is raised as such, with the counts of the
        one Polars call that found it; the summary above them is lazy. Argument and
        column errors are raised on the driver before any Spark job. Each Python
        worker solves the ``mb`` / ``bv`` correction tables once per (metric, n, m,
        gamma, sampling) and caches them (Spark reuses its Python workers); with
        ``prior=`` they are solved in every call.

    Examples
    --------
    >>> from pyspark.sql import SparkSession  # doctest: +SKIP
    >>> from polars_rankeval import spark as prk_spark
    >>> session = SparkSession.builder.master("local[2]").getOrCreate()  # doctest: +SKIP
    >>> df = session.createDataFrame(
    ...     [(1, i, 1.0 - i / 10, int(i == 2)) for i in range(1, 6)],
    ...     "user long, item long, score double, relevance long",
    ... )  # doctest: +SKIP
    >>> prk_spark.evaluate_sampled(df, ["mrr"], n_items=1000).show()  # doctest: +SKIP
    """
    require_pyspark()
    engine = SparkEngine(n_partitions=n_partitions).bind(data)
    options = dict(options)
    per_user = options.pop("per_user", False)
    summary = options.pop("summary", "long")
    if not isinstance(per_user, bool):
        msg = f"per_user must be a bool, got {type(per_user).__name__}"
        raise TypeError(msg)
    by = options.get("by")
    by_cols = [by] if isinstance(by, str) else list(by or [])
    user = options.get("user", "user")
    item = options.get("item", "item")
    rank = options.get("rank")
    order = rank if rank is not None else (options.get("score") or "score")
    relevance = options.get("relevance", "relevance")
    schema = engine.schema()
    # The dry run: every argument and column check of the Polars function, and the
    # per-user schema.
    dry_input = pl.DataFrame(schema={c: schema[c] for c in schema.names()})
    dry = _polars_sampled(dry_input, metrics, per_user=True, summary="wide", **options)
    _polars_sampled(dry_input, metrics, per_user=False, summary=summary, **options)
    keys = [*by_cols, user]
    needed = list(dict.fromkeys([*keys, item, order, relevance]))
    value_cols = [c for c in dry.columns if c not in keys and c != "n_positives"]
    out_schema = pl.Schema(
        {c: dry.schema[c] for c in keys}
        | dict.fromkeys(value_cols, pl.Float64())
        | {"n_positives": pl.Int64(), _SKIP: pl.Boolean()}
    )

    def kernel(frame: pl.DataFrame) -> pl.DataFrame:
        values = _polars_sampled(frame, metrics, per_user=True, summary="wide", **options)
        skipped = frame.select(keys).unique().join(values.select(keys), on=keys, how="anti")
        return pl.concat(
            [
                values.with_columns(pl.lit(False).alias(_SKIP)),
                skipped.with_columns(pl.lit(True).alias(_SKIP)),
            ],
            how="diagonal_relaxed",
        )

    rows = data.select(*[col(c) for c in needed])
    out = map_groups(rows, kernel, out_schema, user=user, partitions=engine.partitions)
    with worker_errors():
        out = out.localCheckpoint(eager=True)
    if per_user:
        return out.filter(~col(_SKIP)).drop(_SKIP)
    return _summary(out, by_cols, value_cols, metrics, options, summary)


def _summary(
    out: SparkDataFrame,
    by: list[str],
    value_cols: list[str],
    metrics: str | Sequence[str],
    options: dict[str, Any],
    form: str,
) -> SparkDataFrame:
    """The Polars summary in Spark: means over users with a positive, counts, long form."""
    from pyspark.sql import functions as sf

    skip = col(_SKIP)
    aggs = [sf.avg(sf.when(~skip, col(c))).alias(c) for c in value_cols]
    aggs += [
        sf.count_if(~skip).cast("long").alias("n_users"),
        sf.count_if(skip).cast("long").alias("n_skipped"),
    ]
    wide = out.groupBy(*[col(b) for b in by]).agg(*aggs) if by else out.agg(*aggs)
    if form == "wide":
        return wide.orderBy(*[col(b) for b in by]) if by else wide
    estimators = options.get("estimators", ("sampled", "rank", "bv"))
    estimators = (estimators,) if isinstance(estimators, str) else tuple(estimators)
    labels = [(t.name, e) for t in _targets(metrics) for e in estimators]
    pairs = [
        sf.struct(
            sf.lit(m).alias("metric"),
            sf.lit(e).alias("estimator"),
            col(c).alias("value"),
            sf.lit(j).alias("__prk_ord"),
        )
        for j, (c, (m, e)) in enumerate(zip(value_cols, labels, strict=True))
    ]
    long = wide.select(
        *[col(b) for b in by], "n_users", "n_skipped", sf.explode(sf.array(*pairs)).alias("__prk_p")
    )
    long = long.select(
        *[col(b) for b in by],
        "__prk_p.metric",
        "__prk_p.estimator",
        "__prk_p.value",
        "n_users",
        "n_skipped",
        "__prk_p.__prk_ord",
    )
    return long.orderBy(*[col(b) for b in by], "__prk_ord").drop("__prk_ord")
