"""Compatibility: the names of the former ``_plan`` module, now split by concept.

The plan is in layers (each module's docstring says what it holds):
:mod:`polars_rankeval._engine` (the engine interface), :mod:`polars_rankeval._job` (the
decisions), :mod:`polars_rankeval._build` (the per-user build),
:mod:`polars_rankeval._finish` (merge, summarize, result) and
:mod:`polars_rankeval._run` (the sequence every engine goes through). New code imports
from those; this module only re-exports them for code written against ``_plan``.
"""

from __future__ import annotations

from polars_rankeval._build import _HAS_RECS, _HAS_TRUTH, build, user_partials, wanted_users
from polars_rankeval._finish import (
    GLOBAL_AGGREGATION,
    GMEAN_FLOOR,
    finalize,
    finalize_globals,
    finish,
    long_summary,
    summarize,
    summary_columns,
    undefined_message,
)
from polars_rankeval._job import (
    INTERNAL,
    LONG_COLUMNS,
    MAX_EXP_RELEVANCE,
    RESERVED,
    Job,
    MetricsArg,
    NItemsArg,
    UsersArg,
    aggregations,
    check_long_names,
    count_name,
    internal_names,
    parse_metrics,
    summary_name,
)

__all__ = [
    "GLOBAL_AGGREGATION",
    "GMEAN_FLOOR",
    "INTERNAL",
    "LONG_COLUMNS",
    "MAX_EXP_RELEVANCE",
    "RESERVED",
    "_HAS_RECS",
    "_HAS_TRUTH",
    "Job",
    "MetricsArg",
    "NItemsArg",
    "UsersArg",
    "aggregations",
    "build",
    "check_long_names",
    "count_name",
    "finalize",
    "finalize_globals",
    "finish",
    "internal_names",
    "long_summary",
    "parse_metrics",
    "summarize",
    "summary_columns",
    "summary_name",
    "undefined_message",
    "user_partials",
    "wanted_users",
]
