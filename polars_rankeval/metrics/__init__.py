"""Metric families. Importing this package registers every metric."""

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
from polars_rankeval.metrics.interpolated import (
    iprec_11pt,
    iprec_at_recall,
    relative_precision,
    set_map,
)
from polars_rankeval.metrics.judged import (
    bpref,
    inf_ap,
    num_nonrel_judged_ret,
    unjudged,
    utility,
)
from polars_rankeval.metrics.trec_gain import bin_g, g, ndcg_rel, rbp, rbp_resid, rndcg

__all__ = [
    "auc",
    "bin_g",
    "bpref",
    "dcg",
    "f1",
    "g",
    "hit_rate",
    "inf_ap",
    "iprec_11pt",
    "iprec_at_recall",
    "map",
    "mrr",
    "ndcg",
    "ndcg_rel",
    "num_nonrel_judged_ret",
    "num_rel",
    "num_rel_ret",
    "num_ret",
    "precision",
    "r_precision",
    "rbp",
    "rbp_resid",
    "recall",
    "relative_precision",
    "rndcg",
    "set_map",
    "unjudged",
    "utility",
]
