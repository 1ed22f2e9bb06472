"""Metric families. Importing this package registers every metric."""

# Families reached through evaluate only (global and item metrics): imported to register.
from polars_rankeval.metrics import ctr, exposure, items  # noqa: F401
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
from polars_rankeval.metrics.classification import (
    accuracy,
    boolean_kendall_tau,
    fallout,
    fbeta,
    informedness,
    inverse_precision,
    inverse_recall,
    lauc,
    markedness,
    mcc,
    miss_rate,
)
from polars_rankeval.metrics.correlation import spearman
from polars_rankeval.metrics.counts import num_rel, num_rel_ret, num_ret
from polars_rankeval.metrics.diversity import inter_list_diversity_sampled
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
from polars_rankeval.metrics.rating import mae, mse, nmae, rmse
from polars_rankeval.metrics.trec_gain import bin_g, g, ndcg_rel, rbp, rbp_resid, rndcg

__all__ = [
    "accuracy",
    "auc",
    "bin_g",
    "boolean_kendall_tau",
    "bpref",
    "dcg",
    "f1",
    "fallout",
    "fbeta",
    "g",
    "hit_rate",
    "inf_ap",
    "informedness",
    "inter_list_diversity_sampled",
    "inverse_precision",
    "inverse_recall",
    "iprec_11pt",
    "iprec_at_recall",
    "lauc",
    "mae",
    "map",
    "markedness",
    "mcc",
    "miss_rate",
    "mrr",
    "mse",
    "ndcg",
    "ndcg_rel",
    "nmae",
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
    "rmse",
    "rndcg",
    "set_map",
    "spearman",
    "unjudged",
    "utility",
]

# The one-pass kernels of cutoff lists, registered last (the registry keeps its order).
from polars_rankeval.metrics import curves  # noqa: F401
