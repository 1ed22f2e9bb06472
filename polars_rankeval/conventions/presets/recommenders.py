"""``conventions="recommenders"``: the metric names and rules of Microsoft Recommenders 1.2.1."""

from __future__ import annotations

from polars_rankeval.conventions.convention import UNDEFINED_TIES, Convention, Mapped

CONVENTION = Convention(
    "recommenders",
    "Microsoft Recommenders",
    "1.2.1",
    "expected",
    UNDEFINED_TIES.format(how="pandas stable sort: tied items keep the input row order"),
    "skip",
    "truth",
    (
        Mapped("precision_at_k", "precision", "required", "/ k; users='both'", users="both"),
        Mapped("recall_at_k", "recall", "required", "users='both'", users="both"),
        Mapped(
            "map_at_k",
            "map(denominator=min_k_relevant)",
            "required",
            "users='both'",
            users="both",
        ),
        Mapped("map", "map", "required", "/ #relevant, top k only; users='both'", users="both"),
        Mapped(
            "ndcg_at_k",
            "ndcg",
            "required",
            "score_type='binary' needs 0/1 relevance (every truth row is relevant); "
            "averaged over every truth user (users='truth')",
        ),
        Mapped(
            "ndcg_at_k(score_type=raw)",
            "ndcg",
            "required",
            "rating as linear gain; every truth user (users='truth')",
        ),
        Mapped(
            "ndcg_at_k(score_type=exp)",
            "ndcg(gain=exp)",
            "required",
            "gain 2^rating - 1; every truth user (users='truth')",
        ),
        Mapped(
            "r_precision_at_k",
            "r_precision_cut(no_hit=undefined)",
            "required",
            "hits within min(k, #relevant) ranks / #relevant; a user without such a "
            "hit is NaN and skipped; users='both'; needs ties='item_asc' (deterministic "
            "only: pandas' stable sort keeps the input row order among ties, which "
            "item_asc matches for input sorted by item id); no hit for any user: "
            "Recommenders returns 0, polars_rankeval null (no user)",
            ties="item_asc",
            users="both",
        ),
        Mapped(
            "auc",
            "auc(aggregate=pooled)",
            "none",
            "roc_auc_score over the (user, item) rows of both tables (inner merge), "
            "pooled over the users: the rows with a score and a relevance; the rating "
            "must be 0/1 (roc_auc_score refuses other labels; here relevance >= rel "
            "is positive); tied scores count 1/2 (ties='expected')",
        ),
        Mapped(
            "catalog_coverage",
            "coverage(outside_catalog=count)",
            "none",
            "#distinct items of reco_df (no cutoff) / #distinct train items: pass "
            "n_items=#train items as an int; items outside train are counted; over "
            "every user of reco_df (users='recs')",
            users="recs",
        ),
        Mapped(
            "novelty",
            "novelty(source=history_interactions,unknown=zero,aggregate=pooled)",
            "none",
            "sum over every row of reco_df (no cutoff) of -log2(#train rows of the item "
            "/ #train rows), / #rows of reco_df: pass history=train_df; an item absent "
            "from train adds 0 but counts in the denominator (MS's inner merge); pooled "
            "over the rows of every user of reco_df (users='recs')",
            users="recs",
        ),
        Mapped(
            "diversity",
            "intra_list_diversity(distance=cooccurrence)",
            "none",
            "1 - mean over the pairs of a user's reco_df items (no cutoff) of the "
            "co-occurrence cosine c(i, j) / sqrt(c(i) c(j)) in train (0 for pairs that "
            "never co-occur), then the mean over the users of reco_df with two items or "
            "more (users='recs'): pass history=train_df",
            users="recs",
        ),
        Mapped(
            "distributional_coverage",
            "exposure_entropy",
            "none",
            "-sum p(i) log2 p(i), p(i) the share of the rows of reco_df (no cutoff) "
            "holding item i; over every user of reco_df (users='recs')",
            users="recs",
        ),
        Mapped(
            "serendipity",
            "serendipity(mode=history)",
            "none",
            "mean over a user's reco_df items (no cutoff) of (1 - mean co-occurrence "
            "cosine to the user's train items) x relevance, then over the users: pass "
            "history=train_df and the 0/1 relevance; users without train rows are "
            "left out (null) as in MS's inner merge; over the users of reco_df",
            users="recs",
        ),
        Mapped(
            "serendipity(item_sim_measure=item_feature_vector)",
            "serendipity(mode=history,similarity=features)",
            "none",
            "as serendipity with the cosine of the item feature vectors: pass items= "
            "with the vectors in a 'features' column and history=train_df",
            users="recs",
        ),
        Mapped(
            "diversity(item_sim_measure=item_feature_vector)",
            "intra_list_diversity",
            "none",
            "1 - mean cosine similarity of the item feature vectors over the pairs of "
            "a user's reco_df items (no cutoff), then the mean over the users of "
            "reco_df (users='recs'); pass items= with the vectors in a 'features' column",
            users="recs",
        ),
    ),
    (
        "precision/recall/map average over the users with truth and predictions "
        "(users='both'); ndcg_at_k over all truth users (users='truth').",
        "Contradiction: r_precision_at_k's docstring says it equals precision@k; the "
        "code and its test give recall@k on their data, skipping users without a hit "
        "(the preset follows the code).",
        "Contradiction: merge_ranking_true_pred keeps common users, ndcg_at_k all truth users.",
        "novelty, diversity, serendipity and the coverages take no cutoff (reco_df as "
        "given) and refuse reco_df rows already in train_df; diversity and "
        "serendipity give never co-occurring pairs similarity 0 through a chained "
        "fillna(inplace=True), which holds under their pandas < 3 pin (under pandas 3 "
        "copy-on-write it would leave them out of the mean).",
    ),
)
