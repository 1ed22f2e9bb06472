"""Compatibility module: ``from polars_rankeval.evaluate import evaluate, join, ...``.

The package attribute ``polars_rankeval.evaluate`` is the *function* (it shadows this
module: ``import polars_rankeval.evaluate as m`` gives the function), so the
implementation lives in :mod:`polars_rankeval._evaluate` and the engine interface in
:mod:`polars_rankeval.engine`. This module keeps the old import path working and
re-exports the same objects; new code uses ``prk.evaluate`` / ``prk.join`` and
:mod:`polars_rankeval.engine` (``summarize``, ``global_partials``,
``finalize_globals``).
"""

from __future__ import annotations

from polars_rankeval import _evaluate
from polars_rankeval._evaluate import *  # noqa: F403 - the names of __all__

__all__ = list(_evaluate.__all__)
