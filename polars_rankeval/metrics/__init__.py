"""Metric families. Importing this package registers every metric."""

from polars_rankeval.metrics import interpolated, judged, trec_gain  # noqa: F401 - register
from polars_rankeval.metrics.binary import (
    auc,
    f1,
    hit_rate,
    map,
    mrr,
    precision,
    r_precision,
    recall,
)
from polars_rankeval.metrics.counts import num_rel, num_rel_ret, num_ret
from polars_rankeval.metrics.graded import dcg, ndcg

__all__ = [
    "auc",
    "dcg",
    "f1",
    "hit_rate",
    "map",
    "mrr",
    "ndcg",
    "num_rel",
    "num_rel_ret",
    "num_ret",
    "precision",
    "r_precision",
    "recall",
]
