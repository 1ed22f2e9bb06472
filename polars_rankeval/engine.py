"""The engines ``evaluate`` runs on, and the pieces of the plan they share.

One evaluation is one plan (:class:`polars_rankeval._job.Job`: metrics, columns,
policies), run on an *engine* through a handful of operations
(:class:`Engine`): the input's schema, data-wide scalars (:class:`Scalar`: the
statistics pass and the value checks), a map of the per-user build over whole users,
and the finish (merge the global partials, summarize). Three engines implement it:

* :class:`MemoryEngine`: one lazy Polars plan (``evaluate(strategy="memory")``);
* :class:`BucketedEngine`: users hashed into buckets, one Polars plan per bucket
  (``strategy="buckets"`` or ``"partition"``; ``"auto"`` picks by a memory budget);
* :class:`polars_rankeval.spark.SparkEngine`: each bucket of users is one Polars
  call inside Spark (``evaluate(spark_df, ..., engine="spark")`` or
  :func:`polars_rankeval.spark.evaluate`).

All three run the same checks, statistics, per-user build and summary, so they give the
same values. :func:`run` is that one sequence. :func:`summarize` (per-user values to
the summary), :func:`global_partials` and :func:`finalize_globals` (the global metrics'
partial aggregates of some users, and their merge) are the pieces an engine of one's
own would reuse.

Examples
--------
>>> import polars as pl
>>> import polars_rankeval as prk
>>> from polars_rankeval.engine import MemoryEngine, Scalar
>>> df = pl.DataFrame({"user": [1, 1, 2], "item": [1, 2, 1], "relevance": [1, 0, 2]})
>>> MemoryEngine(df.lazy(), eager=True).scalars(
...     {"items": Scalar("n_unique", "item"), "top": Scalar("max", "relevance")}
... )
{'items': 2, 'top': 2}
"""

from __future__ import annotations

from polars_rankeval._engine import Scalar, Scan, UserOutputs
from polars_rankeval._evaluate import finalize_globals, global_partials
from polars_rankeval._finish import summarize
from polars_rankeval._outofcore import BucketedEngine
from polars_rankeval._run import Engine, MemoryEngine, UserFn, run

__all__ = [
    "BucketedEngine",
    "Engine",
    "MemoryEngine",
    "Scalar",
    "Scan",
    "UserFn",
    "UserOutputs",
    "finalize_globals",
    "global_partials",
    "run",
    "summarize",
]
