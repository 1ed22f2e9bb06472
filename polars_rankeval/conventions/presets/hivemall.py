"""``conventions="hivemall"``: the metric names and rules of Hivemall 0.6 (master)."""

from __future__ import annotations

from polars_rankeval.conventions.convention import Convention, Mapped

CONVENTION = Convention(
    "hivemall",
    "Hivemall",
    "0.6 (master)",
    "expected",
    "Hivemall takes the list in the order the query built it (to_ordered_list); "
    "tied scores have no rule: expectation over the tied orderings",
    "zero",
    "truth",
    (
        Mapped(
            "precision",
            "precision(denominator=retrieved)",
            "required",
            "/ min(#recommended, k); Hivemall requires k <= list size, where it is / k",
        ),
        Mapped("recall", "recall", "required"),
        Mapped("hitrate", "hit_rate", "required"),
        Mapped("mrr", "mrr", "required"),
        Mapped(
            "average_precision",
            "map(denominator=hits)",
            "required",
            "code: / #hits in the head (the docs say / #relevant)",
        ),
        Mapped(
            "auc",
            "auc(degenerate=half)",
            "required",
            "over the head; 1/2 when it holds no hit or only hits",
        ),
        Mapped("ndcg", "ndcg(gain=exp)", "required", "gain 2^rel - 1 (1 for binary)"),
    ),
    (
        "The UDAFs average the rows whose truth array is not null (a null "
        "recommendation array is an empty list, scoring 0): users='truth'. A user "
        "without relevant items (an empty truth array) scores 0 (empty='zero'); "
        "Hivemall gives precision, recall and AP 1.0 when the list is empty too, and "
        "auc 1/2 (no pair).",
        "Contradiction: docs/gitbook/eval/rank.md divides MAP by #relevant (0.5556 at "
        "top 4 in its table); the code divides by the hits in the head (0.8333, "
        "BinaryResponsesMeasuresTest.testAP).",
        "Contradiction: the docs describe AUC over all (relevant, non-relevant) pairs; "
        "the code counts the head only and returns 1/2 when it has one class.",
    ),
)
