"""Metric names the layers above read as defaults, declared here with the metrics.

Outside :mod:`polars_rankeval.metrics`, :mod:`polars_rankeval.conventions` and
:mod:`polars_rankeval.trec_eval` no code writes a metric's name
(``tests/metrics/test_declared_once.py``): a default names its metric through these.
"""

from __future__ import annotations

CURVE_DEFAULT = "ndcg"
"""The metric ``polars-rankeval plot --kind curves`` draws when none is named."""
EVALUATE_DEFAULTS: tuple[str, ...] = (
    "ndcg@10",
    "map@10",
    "mrr@10",
    "precision@10",
    "recall@10",
    "hit_rate@10",
    "auc",
)
"""The metrics ``polars-rankeval evaluate`` computes when none is named."""
INTERPOLATED_PRECISION = "iprec_at_recall"
"""The metric ``pr_curve`` reads at each recall level."""
RANK_SIMILARITY: tuple[str, ...] = ("rbo", "intersection")
"""The measures ``rank_similarity`` compares two runs with."""
RBO = "rbo"
"""Rank-biased overlap, which ``rank_similarity`` computes on the two runs' lists."""
REPRODUCIBILITY: tuple[str, ...] = ("map", "ndcg@10", "precision@10")
"""The metrics ``reproducibility`` and ``replicability`` compare per topic by default."""
INTER_LIST_DIVERSITY = "inter_list_diversity"
"""The metric ``inter_list_diversity_sampled`` estimates on a sample of users."""
