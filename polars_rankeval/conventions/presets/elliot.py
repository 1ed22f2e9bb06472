"""``conventions="elliot"``: the metric names and rules of Elliot GitHub master."""

from __future__ import annotations

from polars_rankeval.conventions.convention import UNDEFINED_TIES, Convention, Mapped

CONVENTION = Convention(
    "elliot",
    "Elliot",
    "GitHub master",
    "expected",
    UNDEFINED_TIES.format(how="the model's top-k routine"),
    "skip",
    "both",
    (
        Mapped("Precision", "precision", "required", "/ cutoff"),
        Mapped("MRR", "mrr", "required"),
        Mapped(
            "nDCG",
            "ndcg(gain=exp)",
            "required",
            "gain 2^(rel - t + 1) - 1 with the default threshold t = 1 and integer "
            "ratings; ideal over min(#relevant, cutoff)",
        ),
        Mapped(
            "MAP",
            "mean_precision",
            "required",
            "the code averages precision@1..N over every cutoff n (a short list "
            "padded), not over the relevant ranks: mean_precision (the docstring says "
            "/ min(m, N))",
        ),
        Mapped(
            "APLT",
            "aplt",
            "required",
            "share of the top k in the long tail: pass items=long_tail_items(train) "
            "(head_share=0.8 is Elliot's pop_ratio; popularity = #users, ties by item "
            "id); Elliot averages over every user with recommendations (users='recs')",
            users="recs",
        ),
        Mapped(
            "ACLT",
            "aclt",
            "required",
            "number of long-tail items in the top k: items=long_tail_items(train)",
            users="recs",
        ),
        Mapped(
            "PopREO",
            "reo",
            "required",
            "std / mean over the head and the tail of #relevant top-k items / "
            "#relevant items, with items=long_tail_items(train); Elliot also removes "
            "the user's training items from the relevant ones (none in a proper "
            "train/test split)",
        ),
        Mapped(
            "PopRSP",
            "rsp",
            "required",
            "std / mean over the head and the tail of #top-k items / #group items not "
            "in the user's training items: items=long_tail_items(train), "
            "history=train; over every user with recommendations (users='recs')",
            users="recs",
        ),
    ),
    (
        "Users present in the recommendations with at least one relevant test item "
        "(users='both', empty='skip').",
        "Contradiction: MAP's docstring (1/min(m, N)) sum P(k) rel(k) vs the code's "
        "mean of P@1..N; nDCG's docstring binary with a k-ideal vs the code's graded "
        "gains with an ideal over min(#relevant, K).",
    ),
)
