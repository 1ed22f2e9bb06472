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
    bin_g,
    bpref,
    dcg,
    f1,
    g,
    hit_rate,
    inf_ap,
    iprec_11pt,
    iprec_at_recall,
    map,
    mrr,
    ndcg,
    ndcg_rel,
    num_nonrel_judged_ret,
    num_rel,
    num_rel_ret,
    num_ret,
    precision,
    r_precision,
    rbp,
    rbp_resid,
    recall,
    relative_precision,
    rndcg,
    set_map,
    unjudged,
    utility,
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
    "bin_g",
    "bind",
    "bpref",
    "datasets",
    "dcg",
    "evaluate",
    "f1",
    "g",
    "hit_rate",
    "inf_ap",
    "iprec_11pt",
    "iprec_at_recall",
    "join",
    "list_metrics",
    "load_example",
    "map",
    "mrr",
    "ndcg",
    "ndcg_rel",
    "num_nonrel_judged_ret",
    "num_rel",
    "num_rel_ret",
    "num_ret",
    "parse_metric",
    "precision",
    "r_precision",
    "rbp",
    "rbp_resid",
    "recall",
    "relative_precision",
    "rndcg",
    "set_map",
    "trec",
    "unjudged",
    "utility",
]

del _namespace
