"""The engines ``evaluate`` runs on, and the pieces of the plan they share.

One evaluation is one plan (:class:`polars_rankeval.plan.job.Job`: metrics, columns,
policies), run on an *engine* through a handful of operations
(:class:`~polars_rankeval.engines.memory.Engine`): the input's schema, data-wide scalars
(:class:`~polars_rankeval.plan.interface.Scalar`: the
statistics pass and the value checks), a map of the per-user build over whole users,
and the finish (merge the global partials, summarize). Three engines implement it:

* :class:`~polars_rankeval.engines.memory.MemoryEngine`: one lazy Polars plan
  (``evaluate(engine="memory")``);
* :class:`~polars_rankeval.engines.buckets.BucketedEngine`: users hashed into buckets, one Polars
  plan per bucket
  (``engine="buckets"`` or ``"partition"``; ``"auto"`` picks by a memory budget);
* :class:`polars_rankeval.api.spark.SparkEngine`: each bucket of users is one Polars
  call inside Spark (``evaluate(spark_df, ..., engine="spark")`` or
  :func:`polars_rankeval.api.spark.evaluate`).

``evaluate``'s ``engine=`` names one of them or passes its options as an object
(:mod:`~polars_rankeval.engines.choice`: ``Auto``, ``Memory``, ``Buckets``,
``Partition``, ``Spark``); :func:`~polars_rankeval.engines.choice.decide` is the one
place that chooses the path of a request (where it runs, how many buckets, the sorted
head or the general per-user plan), and
:mod:`~polars_rankeval.engines.execute` runs it -- for a LazyFrame, when the result is
collected.

All three run the same checks, statistics, per-user build and summary, so they give the
same values. :func:`~polars_rankeval.engines.memory.run` is that one sequence.
:func:`~polars_rankeval.plan.finish.summarize` (per-user values to
the summary), :func:`~polars_rankeval.api.evaluate.global_partials` and
:func:`~polars_rankeval.api.evaluate.finalize_globals` (the global metrics'
partial aggregates of some users, and their merge) are the pieces an engine of one's
own would reuse.

Examples
--------
>>> import polars as pl
>>> import polars_rankeval as prk
>>> from polars_rankeval.engines.memory import MemoryEngine
>>> from polars_rankeval.plan.interface import Scalar
>>> df = pl.DataFrame({"user": [1, 1, 2], "item": [1, 2, 1], "relevance": [1, 0, 2]})
>>> MemoryEngine(df.lazy(), eager=True).scalars(
...     {"items": Scalar("n_unique", "item"), "top": Scalar("max", "relevance")}
... )
{'items': 2, 'top': 2}

May import: ``conventions`` and the layers below it.
"""
