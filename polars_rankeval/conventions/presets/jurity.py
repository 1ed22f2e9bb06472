"""``conventions="jurity"``: the metric names and rules of Jurity 2.1.0."""

from __future__ import annotations

from polars_rankeval.conventions.convention import UNDEFINED_TIES, Convention, Mapped

CONVENTION = Convention(
    "jurity",
    "Jurity",
    "2.1.0",
    "expected",
    UNDEFINED_TIES.format(how="pandas quicksort"),
    "skip",
    "truth",
    (
        Mapped(
            "Precision",
            "precision(denominator=retrieved)",
            "required",
            "/ min(k, #recommended); users with a click and a recommendation (users='both')",
            users="both",
        ),
        Mapped("Recall", "recall", "required", "every clicked user"),
        Mapped(
            "MAP",
            "map(denominator=min_k_relevant)",
            "required",
            "users with a click and a recommendation (users='both')",
            users="both",
        ),
        Mapped("NDCG", "ndcg(idcg=all)", "required", "ideal over every click, not cut"),
        Mapped(
            "AUC",
            "auc(aggregate=pooled)",
            "none",
            "roc_auc_score over the matched (user, item) rows of actual and predicted, "
            "pooled over the users (the rows with a score and a relevance); NaN with "
            "one class only (here null); tied scores count 1/2 (ties='expected'). "
            "AUC with k pools each user's top k: not reproduced (which rows of a tie "
            "group straddling k enter the pool depends on pandas' sort)",
        ),
        *(
            Mapped(
                name,
                metric,
                "optional",
                "Jurity joins actual_results and predicted_results on (user, item): "
                "give the long frame both, a full join of them (predicted's score "
                "column as score, actual's click as relevance; see the ctr metric); "
                "the top k by score (all rows without k) of every recommended user "
                "(users='recs'); ips/dr read a propensity column (Jurity fills a "
                "missing one with 1 / #items of actual_results: add it yourself). "
                "Expected ties: exact for ips and dr, E[sum r] / E[#matches] for "
                "matching (Jurity's pandas quicksort has no tie order)",
                users="recs",
            )
            for name, metric in (
                ("CTR", "ctr"),
                ("CTR(estimation=matching)", "ctr"),
                ("CTR(estimation=ips)", "ctr(estimation=ips)"),
                ("CTR(estimation=dr)", "ctr(estimation=dr)"),
            )
        ),
        Mapped(
            "IntraListDiversity(metric=jaccard)",
            "intra_list_diversity(distance=jaccard)",
            "required",
            "mean over the pairs of a top k of scikit-learn's boolean jaccard distance "
            "of the item_features rows (non-zero = true; 0 for two zero vectors), then "
            "the mean over the users of the predictions (users='recs'); a one-item "
            "list is skipped. Jurity 2.1.0 itself fails with scikit-learn 1.9 (it "
            "passes a DataFrame to pairwise_distances, which reads X.dtype for a "
            "boolean metric): verified against Jurity's intralist_diversity with that "
            "DataFrame given to scikit-learn as an array",
            users="recs",
        ),
        *(
            Mapped(
                name,
                metric,
                "required",
                "mean pairwise distance of the item_features vectors in a top k (pass "
                "items= with the vectors in a 'features' column), then the mean over the "
                "users of the predictions (users='recs'); a one-item list is skipped "
                "(NaN); exact as Jurity with user_sample_size=None (by default it "
                "averages 10 runs over 10,000 sampled users)",
                users="recs",
            )
            for name, metric in (
                ("IntraListDiversity", "intra_list_diversity"),
                ("IntraListDiversity(metric=cosine)", "intra_list_diversity"),
                (
                    "IntraListDiversity(metric=euclidean)",
                    "intra_list_diversity(distance=euclidean)",
                ),
            )
        ),
    ),
    (
        "Users without a click are skipped (empty='skip'); Recall and NDCG count a "
        "clicked user without recommendations as 0, Precision and MAP leave them out: "
        "one call evaluates one user set (Precision and MAP alone take users='both').",
        "Contradiction: the MAP docstring averages over every clicked user; the code "
        "over users with clicks and recommendations.",
    ),
)
