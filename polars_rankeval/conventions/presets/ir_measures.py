"""``conventions="ir_measures"``: the metric names and rules of ir_measures 0.4.3."""

from __future__ import annotations

from polars_rankeval.conventions.convention import Convention, Cutoff, Mapped

_PYNDEVAL = (
    "pyndeval provider (ndeval in C): ties by doc id ascending, so it needs "
    "ties='item_asc'; the truth's subtopics in a column (join(..., subtopic=))"
)
_AT1 = "; at @1 ndeval does not normalise (polars_rankeval does: ndeval's value / N)"


def _ndeval(name: str, metric: str, cutoff: Cutoff, extra: str = "") -> Mapped:
    """An ir_measures diversity measure (pyndeval provider: doc id ascending ties)."""
    return Mapped(name, metric, cutoff, _PYNDEVAL + extra, ties="item_asc")


CONVENTION = Convention(
    "ir_measures",
    "ir_measures",
    "0.4.3",
    "item_desc",
    "per provider: pytrec_eval (P, R, AP, nDCG, RR, Rprec, Success, Bpref, infAP) "
    "breaks ties by doc id descending; msmarco (RR@k) by doc id ascending",
    "zero",
    "truth",
    (
        Mapped("P", "precision", "required"),
        Mapped("R", "recall", "required"),
        Mapped("AP", "map", "optional"),
        Mapped("nDCG", "ndcg", "optional", "linear gain, ideal cut at k"),
        Mapped(
            "RR",
            "mrr",
            "optional",
            "RR (pytrec_eval): ties doc id descending; RR@k (msmarco provider): "
            "ties doc id ascending, so RR@k needs ties='item_asc'",
            ties_at_k="item_asc",
        ),
        Mapped("Rprec", "r_precision", "none"),
        Mapped("Success", "hit_rate", "required"),
        Mapped("Bpref", "bpref", "none"),
        Mapped(
            "infAP",
            "inf_ap",
            "none",
            "pytrec_eval; unjudged rows are outside the pool (use infAP(pool=pooled) "
            "for qrels with relevance < 0)",
        ),
        Mapped(
            "infAP(pool=pooled)",
            "inf_ap(pool=pooled)",
            "none",
            "pytrec_eval with qrels relevance < 0 read as pooled but not judged: "
            "data = trec.pool_unjudged(join(run, qrels))",
        ),
        Mapped(
            "Judged",
            "judged_fraction",
            "required",
            "judged provider: #judged in the top k / min(k, #retrieved) (its docstring "
            "says 'as P@k'); ties by doc id ascending, so Judged@k needs ties='item_asc'",
            ties="item_asc",
        ),
        Mapped(
            "NumRet",
            "num_ret(aggregate=sum)",
            "none",
            "summed over the queries (aggregate=sum); a query without results adds 0",
        ),
        Mapped(
            "NumRet(rel=1)",
            "num_rel_ret(aggregate=sum)",
            "none",
            "NumRelRet: relevant retrieved documents summed over the queries",
        ),
        Mapped(
            "NumRelRet",
            "num_rel_ret(aggregate=sum)",
            "none",
            "= NumRet(rel=1), summed over the queries",
        ),
        Mapped(
            "NumRel",
            "num_rel(aggregate=sum)",
            "none",
            "summed over the queries with results: pytrec_eval fills a qrels query "
            "missing from the run with 0 for every measure, NumRel included, so the "
            "sum is over users='both'",
            users="both",
        ),
        _ndeval("alpha_nDCG", "alpha_ndcg", "required"),
        _ndeval("alpha_DCG", "alpha_ndcg(normalize=ideal_ideal)", "required", _AT1),
        _ndeval("ERR_IA", "err_ia", "required", _AT1),
        _ndeval("nERR_IA", "err_ia(normalize=ideal)", "required"),
        _ndeval("NRBP", "nrbp", "none"),
        _ndeval("nNRBP", "nrbp(normalize=ideal)", "none"),
        _ndeval("AP_IA", "map_ia", "none"),
        _ndeval("P_IA", "precision_ia", "required"),
        _ndeval("StRecall", "s_recall", "required"),
    ),
    (
        "Queries of the qrels missing from the run score 0 (like trec_eval -c): "
        "users='truth', empty='zero'.",
        "Contradiction: measures/judged.py says Judged@k is 'equivalent to P@k'; the "
        "judged provider divides by min(k, #retrieved) (the preset follows the code).",
    ),
)
