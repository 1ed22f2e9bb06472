"""``conventions="recbole"``: the metric names and rules of RecBole 1.2.1."""

from __future__ import annotations

from polars_rankeval.conventions.convention import UNDEFINED_TIES, Convention, Mapped

CONVENTION = Convention(
    "recbole",
    "RecBole",
    "1.2.1",
    "expected",
    UNDEFINED_TIES.format(how="torch.topk"),
    "skip",
    "truth",
    (
        Mapped("hit", "hit_rate", "required"),
        Mapped("mrr", "mrr", "required"),
        Mapped("map", "map(denominator=min_k_relevant)", "required"),
        Mapped("recall", "recall", "required"),
        Mapped("ndcg", "ndcg", "required", "binary gain: 0/1 relevance"),
        Mapped("precision", "precision", "required"),
        Mapped(
            "gauc",
            "auc(aggregate=relevant_weighted)",
            "none",
            "per-user AUC over every candidate (tied scores take the mean rank: "
            "ties='expected'), weighted by the user's #positives; users without a "
            "positive or without a negative are left out (empty='skip')",
        ),
        Mapped(
            "itemcoverage",
            "coverage(outside_catalog=count)",
            "required",
            "#distinct items in the top k / num_items: pass n_items=num_items",
        ),
        Mapped(
            "shannonentropy",
            "exposure_entropy(unit=nats,per_exposed_item=true)",
            "required",
            "-sum p ln p over the recommended items, p = count / (#users k), divided by "
            "#distinct recommended items (the code; RecBole's lists hold k items, so "
            "#users k is the number of slots)",
        ),
    ),
    (
        "Contradiction: MAP's docstring normalises by min(|recommendation list|, K); "
        "the code by min(#test items, K).",
        "Contradiction: ShannonEntropy's docstring is -sum p log p; the code (and its "
        "test) divide that sum by the number of distinct recommended items "
        "(per_exposed_item=true follows the code).",
    ),
)
