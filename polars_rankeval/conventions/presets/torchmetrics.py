"""``conventions="torchmetrics"``: the metric names and rules of torchmetrics 1.9.0."""

from __future__ import annotations

from polars_rankeval.conventions.convention import Convention, Mapped

CONVENTION = Convention(
    "torchmetrics",
    "torchmetrics",
    "1.9.0",
    "expected",
    "RetrievalNormalizedDCG averages tie groups (= expected); the others sort with "
    "torch.topk/argsort (no defined order): expectation on tied scores",
    "zero",
    "all",
    (
        Mapped(
            "RetrievalMAP",
            "map(denominator=hits)",
            "optional",
            "mean precision over the hits within top_k",
        ),
        Mapped("RetrievalPrecision", "precision", "optional", "/ top_k (adaptive_k=False)"),
        Mapped("RetrievalRecall", "recall", "optional"),
        Mapped("RetrievalMRR", "mrr", "optional"),
        Mapped("RetrievalHitRate", "hit_rate", "optional"),
        Mapped("RetrievalRPrecision", "r_precision", "none"),
        Mapped("RetrievalNormalizedDCG", "ndcg", "optional", "linear gain, ties averaged"),
        Mapped(
            "RetrievalAUROC",
            "auc(degenerate=zero)",
            "optional",
            "over the top k (all candidates without top_k); 0 when a class is missing",
        ),
        Mapped(
            "RetrievalFallOut",
            "fallout(catalog=candidates, no_negative=one)",
            "optional",
            "negatives in the top k / the query's negative candidates; a query "
            "without a negative scores 1 (default empty_target_action='pos')",
        ),
        Mapped(
            "RetrievalFallOut(empty_target_action=neg)",
            "fallout(catalog=candidates, no_negative=zero)",
            "optional",
            "a query without a negative candidate scores 0",
        ),
    ),
    (
        "Every row of a query is a candidate (give every row a score); a query without "
        "a positive target scores 0 (empty_target_action='neg').",
        "The mean is over every distinct value of indexes (users='all'): a user whose "
        "rows are all unjudged (null relevance) is a query with target 0 everywhere.",
        "torchmetrics 1.9.0 counts relevant items scored <= 0 as not retrieved in AP, "
        "precision, recall and MRR (PR #3160), which a newer upstream test reverts: "
        "the preset follows the score-shift-invariant rule (give positive scores to "
        "match 1.9.0).",
        "Contradiction: AP@k's normalisation by the hits in the top k is undocumented.",
        "RetrievalFallOut defaults to empty_target_action='pos' (a query without a "
        "negative scores 1.0, the worst value), every other class to 'neg'.",
    ),
)
