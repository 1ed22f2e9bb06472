"""polars_rankeval: evaluation of rankings and recommendations as Polars expressions.

Every metric is a function returning a ``pl.Expr`` that aggregates one user's rows
(``lf.group_by("user").agg(prk.ndcg(k=10))``); :func:`evaluate` compiles many metrics
into one lazy plan; ``df.rankeval`` / ``lf.rankeval`` are the dataframe namespaces.
"""

from polars_rankeval import datasets, trec
from polars_rankeval import namespace as _namespace  # registers df.rankeval / lf.rankeval
from polars_rankeval._types import (
    EMPTY_POLICIES,
    TIE_POLICIES,
    USER_UNIVERSES,
    Columns,
    EmptyPolicy,
    TiePolicy,
    UserUniverse,
)
from polars_rankeval.datasets import load_example
from polars_rankeval.evaluate import evaluate, join
from polars_rankeval.metrics import (
    auc,
    dcg,
    f1,
    hit_rate,
    map,
    mrr,
    ndcg,
    num_rel,
    num_rel_ret,
    num_ret,
    precision,
    r_precision,
    recall,
)
from polars_rankeval.registry import Metric, bind, list_metrics, parse_metric

__version__ = "0.1.0"

__all__ = [
    "EMPTY_POLICIES",
    "TIE_POLICIES",
    "USER_UNIVERSES",
    "Columns",
    "EmptyPolicy",
    "Metric",
    "TiePolicy",
    "UserUniverse",
    "auc",
    "bind",
    "datasets",
    "dcg",
    "evaluate",
    "f1",
    "hit_rate",
    "join",
    "list_metrics",
    "load_example",
    "map",
    "mrr",
    "ndcg",
    "num_rel",
    "num_rel_ret",
    "num_ret",
    "parse_metric",
    "precision",
    "r_precision",
    "recall",
    "trec",
]

del _namespace
