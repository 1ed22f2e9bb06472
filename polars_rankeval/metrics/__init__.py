"""Metric families. Importing this package registers every metric.

Each metric is declared once, by ``register(...)`` on its kernel in its family module;
:mod:`polars_rankeval.metrics.functions` holds the public ``pl.Expr`` functions
generated from those declarations (``scripts/gen_metric_functions.py``).
"""

from __future__ import annotations

import importlib
import sys
from typing import Any

from polars_rankeval.registry import get_spec

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
    "curves",
)
"""The family modules. Importing one registers its metrics, and the registry (so
``list_metrics``, the README table and the generated functions) keeps this order;
``curves`` (the one-pass kernels of cutoff lists) comes after the metrics it speeds up.
"""
for _family in FAMILIES:
    importlib.import_module(f"{__name__}.{_family}")

from polars_rankeval.metrics.functions import *  # noqa: E402, F403
from polars_rankeval.metrics.functions import __all__ as _functions  # noqa: E402

__all__ = [*_functions, "inter_list_diversity_sampled"]  # noqa: F405 - see __getattr__

# The functions' former home, the family module of their kernel, keeps working:
# ``from polars_rankeval.metrics.binary import precision``.
for _name in _functions:
    setattr(sys.modules[get_spec(_name).kernel.__module__], _name, globals()[_name])


def __getattr__(name: str) -> Any:
    """``inter_list_diversity_sampled``, which now lives in :mod:`polars_rankeval.sampled`.

    Imported on use: it runs ``evaluate``, a layer above ``metrics`` (which must not
    import it at module level; tests/test_layers.py checks the import graph).
    """
    if name == "inter_list_diversity_sampled":
        from polars_rankeval.sampled import inter_list_diversity_sampled

        return inter_list_diversity_sampled
    msg = f"module {__name__!r} has no attribute {name!r}"
    raise AttributeError(msg)
