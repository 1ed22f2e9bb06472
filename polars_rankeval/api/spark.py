"""Evaluation on Apache Spark: the package's own Polars plan, run inside Spark.

:func:`evaluate` is :func:`polars_rankeval.evaluate` with
``engine=prk.Spark(n_partitions=...)``: the arguments, checks, statistics, per-user
build and summary are the shared plan's; :class:`SparkEngine`
(:mod:`polars_rankeval.engines.spark_engine`) provides the engine operations only. Importing
this module does not import pyspark (``pip install 'polars-rankeval[spark]'``); the
executors need ``polars_rankeval`` installed too. Only the DataFrame API is used, so
Spark Connect works. For a local session, set ``spark.driver.memory`` before the first
``getOrCreate()``, point ``PYSPARK_PYTHON`` at the Python that has
``polars_rankeval`` and set ``SPARK_LOCAL_IP=127.0.0.1`` where the host name does not
resolve; ``benchmarks/bench_spark.py`` shows a complete setup.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

from polars_rankeval._utils.constraints import Frame, Integer, Rejection, validate_params
from polars_rankeval._utils.types import make_columns
from polars_rankeval.api.evaluate import evaluate as _evaluate
from polars_rankeval.engines.choice import decide
from polars_rankeval.engines.spark_engine import DEFAULT_PARTITIONS, SIDE_COLUMNS, SparkEngine
from polars_rankeval.engines.spark_ops import INSTALL_HINT, col, require_pyspark, worker_errors
from polars_rankeval.metrics.grammar import METRICS, MetricsArg
from polars_rankeval.metrics.params import Interval
from polars_rankeval.plan.build import build
from polars_rankeval.plan.job import Job

if TYPE_CHECKING:
    from pyspark.sql import DataFrame as SparkDataFrame

__all__ = [
    "DEFAULT_PARTITIONS",
    "INSTALL_HINT",
    "SIDE_COLUMNS",
    "SparkEngine",
    "evaluate",
    "worker_errors",
]


class _SparkFrame(Frame):
    """A Spark DataFrame; without pyspark, how to install it (whatever the value)."""

    def reject(self, value: Any) -> Rejection | None:
        require_pyspark()
        return super().reject(value)


@validate_params(
    {
        "data": _SparkFrame("pyspark"),
        "metrics": METRICS,
        "n_partitions": [Integer(Interval(1, None)), None],
    }
)  # options: checked by polars_rankeval.evaluate
def evaluate(
    data: SparkDataFrame, metrics: MetricsArg, *, n_partitions: int | None = None, **options: Any
) -> SparkDataFrame:
    """Evaluate many metrics over a Spark DataFrame with the Polars plan.

    ``polars_rankeval.evaluate(data, metrics, engine=prk.Spark(n_partitions=...),
    **options)``: the same arguments, checks and values, as a Spark DataFrame.

    Parameters
    ----------
    data
        The long frame as a Spark DataFrame (classic or Spark Connect).
    metrics
        Metric names in the grammar ``name[(key=value,...)][@k]``.
    n_partitions
        Hash buckets of users: Polars calls and Spark tasks. Each call holds about 1/n
        of the rows at once and has a fixed cost besides them, so more buckets hold
        less memory but cost more calls. Default: the session's
        ``spark.sql.shuffle.partitions`` (200 if that is not a number).
    **options
        The keywords of :func:`polars_rankeval.evaluate`. ``users=``, ``items=``,
        ``n_items=`` and ``history=`` may be (small) Spark DataFrames, collected to the
        driver.
        ``engine=`` is this function's (``prk.Spark(n_partitions=n_partitions)``).
        ``per_item=True`` is not supported yet.

    Returns
    -------
    pyspark.sql.DataFrame
        The per-user values (in no particular order) or the summary (sorted by ``by``).
        Lazy, except for the statistics, the global metrics and ``validate=True`` or
        ``empty="error"``, which compute the per-user values at the call (kept with
        ``localCheckpoint``). A Polars ``ValueError`` of those parts is raised as such;
        from the lazy frame it is Spark's ``PythonException``.

    Examples
    --------
    >>> from pyspark.sql import SparkSession  # doctest: +SKIP
    >>> from polars_rankeval.api import spark as prk_spark
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
    require_pyspark()
    result: Any = _evaluate(data, metrics, engine=SparkEngine(n_partitions=n_partitions), **options)
    return result


# --------------------------------------------------------------------------- plans
class Plan:
    """A job bound to a :class:`SparkEngine` (``benchmarks/bench_spark.py``, tests)."""

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
    fn = functools.partial(build, job, head=decide(job, plan.engine).head)
    out = plan.engine.user_pass(job, fn, side=side)
    return out.select(
        *[col(c) for c in [*job.keys, *job.user_names, *(SIDE_COLUMNS if side else ())]]
    )
