"""``conventions="trec_eval"``: the metric names and rules of trec_eval 10.0-rc3."""

from __future__ import annotations

import re

from polars_rankeval.conventions.convention import Convention, Mapped, Spelled


def _spelling(text: str) -> list[Spelled] | None:
    """trec_eval's own names, parsed by the trec-eval command's own parser.

    ``-m`` arguments (``P.5,10``, ``iprec_at_recall.0.1``, a bare ``P`` for its default
    cutoffs) and the printed labels (``P_10``, ``iprec_at_recall_0.10``).
    """
    import polars_rankeval.trec_eval.measures as te

    known = {m.name: m for m in te.MEASURES}
    spec = text.strip()
    if spec.partition(".")[0] not in known:
        label = re.fullmatch(r"(?P<base>\w+?)_(?P<param>\d+(?:\.\d+)?)", spec)
        if label is None or label["base"] not in known:
            return None
        if known[label["base"]].kind not in ("cut_long", "cut_double"):
            return None
        spec = f"{label['base']}.{label['param']}"
    out = []
    for column in te.columns_of(te.parse_measures([spec])):
        measure = column.measure
        if measure.kind in ("pairs", "p_double") and column.raw is not None:
            msg = (
                f"conventions='trec_eval': {measure.name} with parameters ({column.raw!r}, "
                f"in {text!r}) is not reproduced; {measure.name} without parameters is "
                "(ndcg's gain values: evaluate ndcg with a relevance already mapped to gains)"
            )
            raise ValueError(msg)
        if measure.kind == "cut_long":
            out.append(Spelled(measure.name, int(column.param), "", column.label))
        elif measure.kind == "cut_double":
            out.append(Spelled(measure.name, None, f"level={column.param!r}", column.label))
        else:
            out.append(Spelled(measure.name, None, "", column.label))
    return out


CONVENTION = Convention(
    "trec_eval",
    "trec_eval",
    "10.0-rc3",
    "item_desc",
    "score descending, then docno descending as strings (form_res_rels.c; give "
    "string item ids: integer ids sort as numbers)",
    "zero",
    "both",
    (
        Mapped("map", "map", "none", "m_map.c: / #relevant"),
        Mapped("map_cut", "map", "required", "m_map_cut.c: / #relevant"),
        Mapped("P", "precision", "required", "m_P.c: / k, a short list padded"),
        Mapped("recall", "recall", "required"),
        Mapped("relative_P", "relative_precision", "required"),
        Mapped("ndcg", "ndcg", "none", "linear gain, ideal over all judged items"),
        Mapped("ndcg_cut", "ndcg", "required", "ideal cut at k"),
        Mapped("recip_rank", "mrr", "none", "no cutoff"),
        Mapped(
            "gm_map",
            "map(aggregate=gmean)",
            "none",
            "m_gm_map.c: exp of the mean over the queries of log(max(AP, 1e-5))",
        ),
        Mapped(
            "iprec_at_recall",
            "iprec_at_recall",
            "none",
            "m_iprec_at_recall.c: written as trec_eval writes it, iprec_at_recall_0.10 "
            "or iprec_at_recall.0.1,0.5 (the bare name: its 11 levels 0.0 .. 1.0)",
            options=("level",),
        ),
        Mapped("11pt_avg", "iprec_11pt", "none", "m_11pt_avg.c, its 11 default levels"),
        Mapped("Rprec", "r_precision", "none"),
        Mapped("success", "hit_rate", "required"),
        Mapped("bpref", "bpref", "none"),
        Mapped(
            "gm_bpref",
            "bpref(aggregate=gmean)",
            "none",
            "exp of the mean over the queries of log(max(bpref, 1e-5))",
        ),
        Mapped(
            "infAP",
            "inf_ap",
            "none",
            "every unjudged row (null relevance) is outside the pool, as trec_eval's "
            "documents absent from the qrels; for qrels with relevance < 0 use "
            "infAP(pool=pooled)",
        ),
        Mapped(
            "infAP(pool=pooled)",
            "inf_ap(pool=pooled)",
            "none",
            "m_infap.c with qrels relevance < 0 read as pooled but not judged: "
            "data = trec.pool_unjudged(join(run, qrels)) gives null relevance and a "
            "'pooled' column",
        ),
        Mapped(
            "num_ret",
            "num_ret(aggregate=sum)",
            "none",
            "the all line sums over the queries (aggregate=sum)",
        ),
        Mapped(
            "num_rel",
            "num_rel(aggregate=sum)",
            "none",
            "the all line sums over the queries (aggregate=sum)",
        ),
        Mapped(
            "num_rel_ret",
            "num_rel_ret(aggregate=sum)",
            "none",
            "the all line sums over the queries (aggregate=sum)",
        ),
    ),
    (
        "Queries in both qrels and run are averaged (users='both'); trec_eval -c "
        "(every qrels query, missing ones 0) is evaluate(ties='item_desc', "
        "empty='zero', users='truth') or `polars-rankeval trec-eval -c`.",
        "A query whose judged documents are all non-relevant scores 0 (empty='zero').",
        "trec_eval's own spellings are read as the trec-eval command reads them: "
        "P.5,10 (P_5 and P_10), P_10, ndcg_cut.10, recall_100, iprec_at_recall_0.10, "
        "a bare P (its default cutoffs 5 .. 1000); the columns take trec_eval's labels "
        "(P_10[trec_eval]).",
    ),
    spelling=_spelling,
)
