"""``conventions="ranx"``: the metric names and rules of ranx 0.3.21."""

from __future__ import annotations

from polars_rankeval.conventions.convention import UNDEFINED_TIES, Convention, Mapped

CONVENTION = Convention(
    "ranx",
    "ranx",
    "0.3.21",
    "expected",
    UNDEFINED_TIES.format(how="numba np.argsort quicksort; long tie groups are scrambled"),
    "zero",
    "truth",
    (
        Mapped("precision", "precision", "optional", "/ k (no k: / list length)"),
        Mapped("recall", "recall", "optional"),
        Mapped("f1", "f1", "optional"),
        Mapped("hits", "num_rel_ret", "optional"),
        Mapped("hit_rate", "hit_rate", "optional"),
        Mapped("mrr", "mrr", "optional", "cut at k (the docstring says k is ignored)"),
        Mapped("map", "map", "optional", "/ #relevant"),
        Mapped("ndcg", "ndcg", "optional", "linear gain (Jarvelin)"),
        Mapped("ndcg_burges", "ndcg(gain=exp)", "optional", "gain 2^rel - 1"),
        Mapped("dcg", "dcg", "optional"),
        Mapped("dcg_burges", "dcg(gain=exp)", "optional"),
        Mapped("r-precision", "r_precision", "none"),
        *(
            Mapped(
                f"rbp.{digits}",
                f"rbp(gain=raw,p=0.{digits})",
                "none",
                f"persistence 0.{digits} (ranx's rbp.{digits}); the raw graded relevance "
                "as gain (can exceed 1), over the whole run; for another persistence "
                "evaluate rbp(gain=raw,p=...) outside the preset",
            )
            for digits in ("5", "8", "9", "95", "99")
        ),
        Mapped(
            "bpref",
            "bpref",
            "none",
            "as trec_eval; ranx divides 0 by 0 (NaN, which makes its mean NaN) for a "
            "query without a judged non-relevant document, where polars_rankeval "
            "follows trec_eval",
        ),
    ),
    (
        "A query without relevant document scores 0 and is averaged (empty='zero'); "
        "qrels and run must hold the same queries unless make_comparable=True, which "
        "scores queries missing from the run 0 (users='truth' does the same).",
        "Contradiction: reciprocal_rank's docstring says k is ignored; the code cuts "
        "at k. The preset follows the code.",
    ),
)
