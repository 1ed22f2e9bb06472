"""``conventions="cornac"``: the metric names and rules of Cornac 3.0.1."""

from __future__ import annotations

from polars_rankeval.conventions.convention import UNDEFINED_TIES, Convention, Mapped

CONVENTION = Convention(
    "cornac",
    "Cornac",
    "3.0.1",
    "expected",
    UNDEFINED_TIES.format(how="numpy argsort"),
    "skip",
    "truth",
    (
        Mapped("Precision", "precision", "optional", "/ k"),
        Mapped("Recall", "recall", "optional"),
        Mapped("FMeasure", "f1", "optional"),
        Mapped("HitRatio", "hit_rate", "optional"),
        Mapped("NDCG", "ndcg", "optional", "binary gain: 0/1 relevance"),
        Mapped(
            "MRR",
            "mrr",
            "none",
            "Cornac raises ValueError when no positive is ranked; here 0",
        ),
        Mapped(
            "AUC",
            "auc",
            "none",
            "a tied (positive, negative) pair counts 0: pass ties='pessimistic'",
            ties="pessimistic",
        ),
        Mapped(
            "MAP",
            "map(tie_group=threshold)",
            "none",
            "tied items take the maximum rank (rankdata 'max'): the precision at the "
            "end of the tie group, as scikit-learn's average_precision_score, whatever "
            "ties=; mean over the user's positives among the candidates",
        ),
        Mapped(
            "NCRR",
            "ncrr",
            "optional",
            "sum of 1 / rank of the hits in the top k / H(min(#positives, list length)); "
            "the list is Cornac's ranking of every candidate item: give every candidate "
            "a score",
        ),
    ),
    (
        "Users without a test positive are skipped (empty='skip').",
        "Undocumented in Cornac's docstrings (its code and tests): MRR raises "
        "ValueError when no positive is ranked; AUC counts a tied (positive, negative) "
        "pair 0 (ties='pessimistic'); MAP gives tied items the maximum rank. The "
        "docstrings' k=None ('all items') is not accepted by the code (k > 0 test).",
    ),
)
