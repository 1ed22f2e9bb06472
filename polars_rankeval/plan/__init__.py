"""The plan: one evaluation request -> one lazy plan, knowing no engine.

:mod:`~polars_rankeval.plan.interface` is what the plan asks of an engine;
:mod:`~polars_rankeval.plan.job` takes every decision before the data is read,
:mod:`~polars_rankeval.plan.build` (with :mod:`~polars_rankeval.plan.head`) maps whole
users to per-user values, :mod:`~polars_rankeval.plan.finish` merges and summarizes.

May import: ``metrics``, ``_utils``.
"""
