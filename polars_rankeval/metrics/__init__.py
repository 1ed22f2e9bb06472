"""Metric declarations. Importing this package registers every metric.

The registry (:mod:`~polars_rankeval.metrics.registry`), the metric-name grammar
(:mod:`~polars_rankeval.metrics.grammar`), the declarations (:mod:`~polars_rankeval.metrics.spec`,
:mod:`~polars_rankeval.metrics.params`),
the per-row ranking features (:mod:`~polars_rankeval.metrics.features`), the
``aggregate=`` option (:mod:`~polars_rankeval.metrics.aggregate`) and the family
modules. May import: ``_utils``.

Each metric is declared once, by ``register(...)`` on its kernel in its family module;
:mod:`polars_rankeval.metrics.functions` holds the public ``pl.Expr`` functions
generated from those declarations (``scripts/gen_metric_functions.py``).
"""

from __future__ import annotations

import importlib

FAMILIES = (
    "ctr",
    "exposure",
    "items",
    "binary",
    "partial_auc",
    "ncrr",
    "mean_precision",
    "classification",
    "correlation",
    "counts",
    "diversity",
    "serendipity",
    "categorical",
    "calibration",
    "popularity_bias",
    "graded",
    "interpolated",
    "judged",
    "rating",
    "trec_gain",
    "intent",
    "cascade",
    "similarity",
    "intersection",
    "cutoff_kernels",
)
"""The family modules. Importing one registers its metrics, and the registry (so
``list_metrics``, the README table and the generated functions) keeps this order;
``cutoff_kernels`` (the one-pass kernels of cutoff lists) comes after the metrics it speeds up.
"""
for _family in FAMILIES:
    importlib.import_module(f"{__name__}.{_family}")

from polars_rankeval.metrics.functions import *  # noqa: E402, F403
from polars_rankeval.metrics.functions import __all__ as _functions  # noqa: E402

__all__ = list(_functions)
