"""``conventions="sklearn"``: the metric names and rules of scikit-learn 1.9.1."""

from __future__ import annotations

from polars_rankeval.conventions.convention import Convention, Mapped

CONVENTION = Convention(
    "sklearn",
    "scikit-learn",
    "1.9.1",
    "expected",
    "dcg_score/ndcg_score average tie groups (ignore_ties=False): = expected",
    "zero",
    "all",
    (
        Mapped("ndcg_score", "ndcg", "optional", "linear gain; all-zero row scores 0"),
        Mapped("dcg_score", "dcg", "optional"),
        Mapped(
            "average_precision_score",
            "map(tie_group=threshold)",
            "none",
            "a tie group of scores is one threshold (constant scores give the positive "
            "rate): each positive gets the precision at the end of its group, whatever "
            "ties=; a row without a positive scores 0 (sklearn warns)",
        ),
    ),
    (
        "Every column of a row is a candidate: give every (user, item) a score.",
        "The mean is over every row of y_true (users='all'): a user without a relevant "
        "item, or with null relevance only, is an all-zero row scoring 0 (empty='zero').",
        "average_precision_score is reproduced as average='samples' (the mean over the "
        "rows); its default average='macro' averages over the columns (items).",
    ),
)
