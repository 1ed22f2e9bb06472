"""``conventions="rectools"``: the metric names and rules of RecTools 0.19.0."""

from __future__ import annotations

from polars_rankeval.conventions.convention import Convention, Mapped

CONVENTION = Convention(
    "rectools",
    "RecTools",
    "0.19.0",
    "expected",
    "RecTools reads explicit ranks (pass rank=) as absolute positions, gaps kept "
    "(an item at rank 9 is outside k=3): the preset sets rank_positions='absolute' "
    "(integer ranks >= 1). RecTools does not reject a rank repeated within a user: "
    "the preset accepts one when every requested metric reads only top-k membership "
    "(Recall, HitRate, CatalogCoverage, the counts: RecTools' own CatalogCoverage "
    "test gives user 2 two items at rank 1) and refuses it otherwise, where "
    "RecTools' numbers are artefacts (MAP counts the precision of a repeated rank "
    "once for all its hits, NDCG gives each item the full weight and can exceed 1, "
    "Precision can exceed 1). Given scores instead, tied scores take the expectation",
    "skip",
    "truth",
    (
        Mapped("Precision", "precision", "required", "tp / k"),
        Mapped(
            "Precision(r_precision=true)",
            "relative_precision",
            "required",
            "tp / min(k, #relevant)",
        ),
        Mapped("Recall", "recall", "required"),
        Mapped("HitRate", "hit_rate", "required"),
        Mapped("MAP", "map", "required", "/ #relevant (divide_by_k=False)"),
        Mapped("MAP(divide_by_k=true)", "map(denominator=k)", "required", "/ k"),
        Mapped(
            "NDCG",
            "ndcg(idcg=k)",
            "required",
            "ideal list of k relevant items, the same for every user",
        ),
        Mapped(
            "NDCG(divide_by_achievable=true)",
            "ndcg",
            "required",
            "ideal over min(#relevant, k) items",
        ),
        Mapped("MRR", "mrr", "required"),
        Mapped(
            "Accuracy",
            "accuracy(denominator=k)",
            "required",
            "(tp + tn) / #catalog with fp = k - tp even for a shorter list; pass "
            "n_items= (len(catalog))",
        ),
        Mapped(
            "MCC",
            "mcc(denominator=k)",
            "required",
            "fp = k - tp as Accuracy; pass n_items=; RecTools scores 0 where a margin "
            "is 0 (only when k or #relevant equals the catalog size), polars_rankeval null",
        ),
        Mapped(
            "F1Beta",
            "fbeta(denominator=k)",
            "required",
            "beta=1; precision hits / k; for another beta use fbeta(beta=b, denominator=k)",
        ),
        *(
            Mapped(
                f"{name}{option}",
                f"{metric}{ours}",
                "required",
                f"k counts negatives (the top k non-relevant items, gaps of the ranks "
                f"included), over {over}; insufficient_handling={handling}",
            )
            for name, metric, over in (
                ("PartialAUC", "partial_auc", "all #relevant items"),
                ("PAP", "pap", "the first min(k, #relevant) relevant items"),
            )
            for option, ours, handling in (
                ("", "", "'ignore' (a short list as if the missing negatives were last)"),
                (
                    "(insufficient_handling=exclude)",
                    "(insufficient=exclude)",
                    "'exclude': a user with fewer than k negatives and a relevant item "
                    "not recommended is undefined and skipped",
                ),
                (
                    "(insufficient_handling=raise)",
                    "(insufficient=raise)",
                    "'raise': such a user is a ValueError naming the metric, how many "
                    "users and the first ones (at collect for a lazy input); otherwise "
                    "the values of 'exclude'",
                ),
            )
        ),
        Mapped(
            "Intersection",
            "intersection",
            "required",
            "|top k of reco ∩ top ref_k of ref_reco| / |top k of reco| (ref_k default "
            "k; the docstring's 'share of reco present in ref_reco'): "
            "rank_similarity(reco, ref_reco, ['Intersection(ref_k=20)@10'], "
            "rank='rank', conventions='rectools'); over the users of reco with an item "
            "within k (users='a': a user missing from ref_reco scores 0); an empty "
            "ref_reco gives no user (null). RecTools' shortcut for ref_reco being the "
            "same object as reco (1 for every user of reco, even one without an item "
            "within k) is not reproduced: the same table gives 1 to the users with an "
            "item within k",
            users="a",
            entry="rank_similarity",
            options=("ref_k",),
        ),
        Mapped(
            "MeanInvUserFreq",
            "novelty",
            "required",
            "mean over the top k of -log2(users(i) / n_users): pass items="
            "item_popularity(prev_interactions, catalog=<recommended items>, "
            "unseen='one') (cold items count as one user, as RecTools does); over "
            "every user of reco (MeanInvUserFreq.fit: reco[Columns.User].unique(), "
            "users='recs'), one without an item within k left out (NaN in RecTools)",
            users="recs",
        ),
        Mapped(
            "Serendipity",
            "serendipity",
            "required",
            "mean over the top k of max(p(i) - pu(i), 0) for the relevant items, pu from "
            "the dense popularity rank of the item's rows in prev_interactions: pass "
            "history=prev_interactions and n_items=len(catalog); over the users of reco "
            "(users='recs')",
            users="recs",
        ),
        Mapped(
            "IntraListDiversity",
            "intra_list_diversity(distance=hamming,short=zero)",
            "required",
            "PairwiseHammingDistanceCalculator: mean number of differing features over "
            "the pairs of the top k (pass items= with the feature vectors in a "
            "'features' column; an item without features is an error, where RecTools "
            "gives NaN); a top k of one item scores 0 and is averaged in; over the "
            "users of reco with an item in the top k (users='recs')",
            users="recs",
        ),
        Mapped(
            "CatalogCoverage(normalize=true)",
            "coverage(outside_catalog=count)",
            "required",
            "#distinct items with rank <= k / len(catalog): pass n_items=len(catalog) "
            "as an int; items outside the catalog are counted (can exceed 1); over every "
            "user of reco (users='recs')",
            users="recs",
        ),
        Mapped(
            "CatalogCoverage",
            "coverage(normalize=false,outside_catalog=count)",
            "required",
            "normalize=False (the default): the number of distinct items with rank <= k "
            "over every user of reco (users='recs')",
            users="recs",
        ),
    ),
    (
        "Users are the test users (with at least one relevant item); a test user "
        "without recommendations scores 0; recommended users outside the test set are "
        "ignored (users='truth', empty='skip').",
        "Relevance is binary (any test interaction is relevant): give relevance 1.",
        "Duplicated test interactions count twice in RecTools' #relevant; "
        "polars_rankeval refuses duplicated (user, item) rows.",
        "Contradiction: the Accuracy/MCC docstrings count fp among the first k "
        "recommended items; the code uses fp = k - tp even for a shorter list "
        "(denominator=k follows the code).",
        "Contradiction: the MeanInvUserFreq, Serendipity and IntraListDiversity "
        "docstrings divide by k; the code averages over the items present.",
        "Ranks are absolute positions with gaps (rank_positions='absolute' with rank=): "
        "in RecTools' TestMAP an item at rank 9 is outside MAP@3, and a relevant item "
        "at rank 3 adds precision hits@3 / 3 even when it is the user's first item.",
    ),
    rank_positions="absolute",
)
