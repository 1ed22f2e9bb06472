"""``conventions="lenskit"``: the metric names and rules of LensKit 2025.8.1."""

from __future__ import annotations

from polars_rankeval.conventions.convention import UNDEFINED_TIES, Convention, Mapped

CONVENTION = Convention(
    "lenskit",
    "LensKit",
    "2025.8.1",
    "expected",
    UNDEFINED_TIES.format(how="np.argsort quicksort in argtopn"),
    "zero",
    "all",
    (
        Mapped(
            "Precision",
            "precision(denominator=retrieved)",
            "optional",
            "/ min(n, #recommended); a user without recommendations scores 0 (RunAnalysis)",
        ),
        Mapped(
            "Recall",
            "relative_precision",
            "required",
            "hits / min(#relevant, n); without n LensKit's Recall is hits / #relevant, "
            "polars_rankeval's recall metric",
        ),
        Mapped(
            "NDCG",
            "ndcg(discount=log_clipped)",
            "optional",
            "binary gain needs 0/1 relevance; weight 1 / max(1, log2 rank)",
        ),
        Mapped(
            "NDCG(gain=rating)",
            "ndcg(discount=log_clipped)",
            "optional",
            "the rating as linear gain",
        ),
        Mapped("DCG", "dcg(discount=log_clipped)", "optional"),
        Mapped("RecipRank", "mrr", "optional"),
        Mapped("Hit", "hit_rate", "optional"),
        Mapped(
            "AveragePrecision",
            "map(denominator=min_list_relevant)",
            "optional",
            "/ min(#relevant, len(truncated list)); 0 without recommendations",
        ),
        Mapped(
            "RBP",
            "rbp(gain=binary,p=0.85)",
            "optional",
            "patience 0.85 (the default), binary gain, (1 - p) sum p**(rank - 1); for "
            "another patience evaluate rbp(gain=binary,p=...) outside the preset",
        ),
        Mapped(
            "RBP(normalize=true)",
            "rbp(gain=binary,normalize=true,p=0.85)",
            "optional",
            "divided by the RBP of min(#relevant, list length) relevant items at the "
            "top (LensKit calls it experimental); an empty list scores 0",
        ),
    ),
    (
        "RunAnalysis.measure measures every output list: one without test data against "
        "an empty test list (NaN for most metrics, with a warning), and list_summary "
        "fills each NaN with the metric's default 0 (users='all', empty='zero'). "
        "lenskit.batch.recommend gives every requested test user a list, an empty one "
        "counting 0; a test user without an output list is not measured at all (outputs "
        "built from a recommendation table): evaluate without conventions= with "
        "users='recs', empty='zero' for that.",
        "Contradiction: the NDCG docstring writes the base-2 log discount; the default "
        "LogRankWeight clips the rank at 2 (1 / max(1, log2 rank)).",
    ),
)
