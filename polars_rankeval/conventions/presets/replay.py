"""``conventions="replay"``: the metric names and rules of RePlay 0.22.0."""

from __future__ import annotations

from polars_rankeval.conventions.convention import HISTORY_USERS, Convention, Mapped

CONVENTION = Convention(
    "replay",
    "RePlay",
    "0.22.0",
    "item_desc",
    "score descending, then item id descending (pandas and polars paths)",
    "skip",
    "truth",
    (
        Mapped("Precision", "precision", "required", "/ k"),
        Mapped("Recall", "recall", "required"),
        Mapped("HitRate", "hit_rate", "required"),
        Mapped("MRR", "mrr", "required"),
        Mapped("MAP", "map(denominator=min_k_relevant)", "required", "/ min(k, #relevant)"),
        Mapped("NDCG", "ndcg", "required", "binary gain, ideal over min(k, #relevant)"),
        Mapped(
            "RocAuc",
            "auc",
            "required",
            "over the top k; 0 without a hit in the head, 1 without a non-relevant item",
        ),
        Mapped(
            "Coverage",
            "coverage(catalog=in_catalog,outside_catalog=ignore)",
            "required",
            "#distinct top-k items that are in train / #distinct train items: pass "
            "items= the train items with a boolean column in_catalog (true) and "
            "n_items=#train items as an int; recommended items outside train are left "
            "out (RePlay's inner join); over every recommended user (users='recs'); "
            "RePlay ranks coverage ties by row order: equal on tie-free data",
            users="recs",
        ),
        Mapped(
            "Novelty",
            "unseen_share",
            "required",
            "share of the top k outside the user's own train history, / the list "
            "length (the code): give each recommended row a boolean column seen "
            "(the user has the item in train). RePlay averages over the users of train "
            "(Metric._dict_call(list(train)); the polars path joins recommendations "
            "to train): pass users=<the train users' ids> (users='history'); a train "
            "user without recommendations scores 1 in RePlay, here null and left out "
            "(equal when every train user has recommendations)",
            users=HISTORY_USERS,
        ),
        Mapped(
            "Surprisal",
            "novelty(source=history_users,unknown=one,normalize=true,denominator=k)",
            "required",
            "sum over the top k of log(#train users / #train users with the item) / "
            "log(#train users), / k (a short list padded with 0): pass history=train; "
            "a cold item (not in train) weighs 1; over every recommended user "
            "(users='recs': the code iterates over the users of the recommendations)",
            users="recs",
        ),
        Mapped(
            "Unexpectedness",
            "unexpectedness",
            "required",
            "1 - |top k ∩ base top k| / k: give each row the item's rank in the base "
            "recommendations as a base_rank column (RePlay breaks tied base scores by "
            "item id descending); RePlay scores 0 for a user without base "
            "recommendations, polars_rankeval 1 (nothing of the list was expected); "
            "over the users of the recommendations (users='recs')",
            users="recs",
        ),
        Mapped(
            "CategoricalDiversity",
            "categorical_diversity(denominator=k)",
            "required",
            "#distinct categories in the top min(k, #recommended) / k: give each item "
            "its category in a 'category' column (of the data or items=; RePlay reads "
            "it from the recommendation rows, where a null category counts as one more, "
            "here an error); over every recommended user (users='recs'); RePlay sorts "
            "by score only (ties: undefined order; item_desc agrees on tie-free data)",
            users="recs",
        ),
    ),
    (
        "Ground-truth users are evaluated; one without recommendations scores 0; "
        "recommended users without ground truth are ignored (empty='skip').",
        "Binary relevance: every ground-truth item is relevant (relevance 1).",
        "Contradiction: Novelty's docstring divides by K, its code by the list length "
        "(and RePlay's torch builder by k); RocAuc's degenerate cases are undocumented.",
        "Contradiction: Surprisal's docstring calls it the average surprisal of the "
        "list; its formula and code divide by K (a short list padded with 0). Coverage's "
        "docstring divides by the train items; its numerator also drops recommended "
        "items outside train, undocumented (coverage(outside_catalog=ignore)).",
        "MAP and NDCG read len(ground_truth) (a duplicated ground-truth item counts "
        "twice), Recall len(set(ground_truth)); polars_rankeval refuses duplicated "
        "(user, item) rows.",
    ),
)
