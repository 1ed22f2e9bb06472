"""Named presets that reproduce another library's numbers: ``conventions="rectools"``.

The same metric name means different numbers in different libraries (MAP@k's
denominator, nDCG's ideal list, what a user without relevant items scores, the tie
rule). A :class:`Convention` holds, for one library, which of its metric names maps to
which polars_rankeval metric with which options, and the tie rule, the empty-user rule
and the user set that library applies. Under a preset, metrics are named as the library
names them (``"map@10"``, ``"ndcg_burges@10"``, ``"AP@10"``), and the output columns say
which convention was used: ``map@10[rectools]``.

A library metric that polars_rankeval cannot reproduce faithfully is refused with the
reason (never a silently different number). Where a library's documentation and its
code disagree, the preset follows the code; every such case is listed in the preset's
``notes`` (README "Conventions of other libraries").

The mappings follow the code of the library versions named in :attr:`Convention.version`
and are tested against the values hard-coded in those libraries' own test suites
(``tests/conventions/test_conventions.py``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import polars as pl

from polars_rankeval.metrics.registry import expand_metric
from polars_rankeval.plan.positions import RankPositions

Cutoff = Literal["required", "optional", "none"]
Entry = Literal["evaluate", "rank_similarity"]


_PYNDEVAL = (
    "pyndeval provider (ndeval in C): ties by doc id ascending, so it needs "
    "ties='item_asc'; the truth's subtopics in a column (join(..., subtopic=))"
)
_AT1 = "; at @1 ndeval does not normalise (polars_rankeval does: ndeval's value / N)"


@dataclass(frozen=True)
class Mapped:
    """One metric of a library and the polars_rankeval metric that reproduces it.

    ``metric`` is in the metric grammar without the cutoff (``"map(denominator=k)"``);
    ``None`` means the library's metric cannot be reproduced and ``note`` says why.
    ``cutoff`` says whether the library's metric takes a cutoff. ``ties`` and ``users``
    are set when this metric needs another tie rule or user set than the preset's
    (one call has one rule: a tie rule must be passed explicitly; the user set is the
    call's when every requested metric has it and ``users=`` is left out).
    """

    name: str
    metric: str | None
    cutoff: Cutoff = "required"
    note: str = ""
    ties: str | None = None
    users: str | None = None
    ties_at_k: str | None = None
    """The tie policy the library uses when this metric is given a cutoff."""
    entry: Entry = "evaluate"
    """The function that computes it: ``evaluate`` (one run against the truth) or
    ``rank_similarity`` (a run against a reference run, e.g. RecTools' Intersection)."""
    options: tuple[str, ...] = ()
    """Library options passed through as the same option of ``metric``
    (``Intersection(ref_k=20)`` -> ``intersection(ref_k=20)``)."""


@dataclass(frozen=True)
class Spelled:
    """One metric of a library's own spelling of a measure (trec_eval's ``P.5,10``).

    ``name`` is the metric in the preset's table, ``cutoff`` its cutoff (``None``:
    none), ``options`` the options added to its polars_rankeval metric
    (``"level=0.1"``) and ``label`` the name the library prints (``P_5``), which names
    the output column.
    """

    name: str
    cutoff: int | None
    options: str
    label: str


@dataclass(frozen=True)
class Convention:
    """The conventions of one library: metric names, ties, empty users, user set.

    ``ties`` is the tie policy passed to ``evaluate``; ``ties_note`` says what the
    library does (several libraries have no defined tie order: their numbers on tied
    scores depend on a sort's internals, and the preset gives the expectation over the
    tied orderings). ``empty`` is what a user without relevant items becomes and
    ``users`` which users are averaged, as in ``evaluate``.
    """

    name: str
    library: str
    version: str
    ties: str
    ties_note: str
    empty: str
    users: str
    metrics: tuple[Mapped, ...]
    notes: tuple[str, ...] = field(default=())
    rank_positions: RankPositions = "relative"
    """How the library reads explicit ranks (``rank=``): as an order (``"relative"``)
    or as positions with gaps kept (``"absolute"``, RecTools); see ``evaluate``."""
    spelling: Callable[[str], list[Spelled] | None] | None = None
    """The library's own spelling of its measures, beside ``Name@k``: a name to the
    metrics it stands for, or ``None`` when it is not such a spelling (trec_eval's
    ``-m`` arguments and printed labels: ``P.5,10``, ``P_10``, ``gm_map``)."""

    def lookup(self, name: str, *, text: str | None = None) -> Mapped:
        """The library metric called ``name`` (case and spaces ignored).

        ``text`` is what the caller wrote, named in the error (default ``name``).
        """
        key = _key(name)
        for mapped in self.metrics:
            if _key(mapped.name) == key:
                return mapped
        text = name if text is None else text
        known = ", ".join(m.name for m in self.metrics if m.metric is not None)
        msg = (
            f"{self.library} has no metric {text!r} that conventions={self.name!r} "
            f"reproduces; its metrics here: {known}"
        )
        # A cutoff written into the name (MAP_10, NDCG.10): point to the grammar.
        cutoff = re.fullmatch(r"(.+?)[_.](\d+)", text.strip())
        if cutoff and any(_key(m.name) == _key(cutoff[1]) for m in self.metrics):
            msg += f"; a cutoff is written with @: {cutoff[1]}@{cutoff[2]}"
        raise ValueError(msg)


def _ndeval(name: str, metric: str, cutoff: Cutoff, extra: str = "") -> Mapped:
    """An ir_measures diversity measure (pyndeval provider: doc id ascending ties)."""
    return Mapped(name, metric, cutoff, _PYNDEVAL + extra, ties="item_asc")


def _key(name: str) -> str:
    return re.sub(r"\s+", "", name).lower()


def _trec_eval_spelling(text: str) -> list[Spelled] | None:
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
    for column in te._columns(te.parse_measures([spec])):
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


HISTORY_USERS = "history"
"""The user set of a metric averaged over the users of the training history (RePlay's
Novelty): no ``users=`` value of ``evaluate`` names it, so the call passes their ids."""


_UNDEFINED = (
    "no defined tie order ({how}): on tied scores the preset gives the expectation over "
    "the tied orderings; the library's value depends on its sort. Equal on tie-free data."
)

_PRESETS: tuple[Convention, ...] = (
    Convention(
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
        spelling=_trec_eval_spelling,
    ),
    Convention(
        "ranx",
        "ranx",
        "0.3.21",
        "expected",
        _UNDEFINED.format(how="numba np.argsort quicksort; long tie groups are scrambled"),
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
    ),
    Convention(
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
    ),
    Convention(
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
    ),
    Convention(
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
    ),
    Convention(
        "recommenders",
        "Microsoft Recommenders",
        "1.2.1",
        "expected",
        _UNDEFINED.format(how="pandas stable sort: tied items keep the input row order"),
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
    ),
    Convention(
        "lenskit",
        "LensKit",
        "2025.8.1",
        "expected",
        _UNDEFINED.format(how="np.argsort quicksort in argtopn"),
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
    ),
    Convention(
        "torchmetrics",
        "torchmetrics",
        "1.9.0",
        "expected",
        "RetrievalNormalizedDCG averages tie groups (= expected); the others sort with "
        "torch.topk/argsort (no defined order): expectation on tied scores",
        "zero",
        "all",
        (
            Mapped(
                "RetrievalMAP",
                "map(denominator=hits)",
                "optional",
                "mean precision over the hits within top_k",
            ),
            Mapped("RetrievalPrecision", "precision", "optional", "/ top_k (adaptive_k=False)"),
            Mapped("RetrievalRecall", "recall", "optional"),
            Mapped("RetrievalMRR", "mrr", "optional"),
            Mapped("RetrievalHitRate", "hit_rate", "optional"),
            Mapped("RetrievalRPrecision", "r_precision", "none"),
            Mapped("RetrievalNormalizedDCG", "ndcg", "optional", "linear gain, ties averaged"),
            Mapped(
                "RetrievalAUROC",
                "auc(degenerate=zero)",
                "optional",
                "over the top k (all candidates without top_k); 0 when a class is missing",
            ),
            Mapped(
                "RetrievalFallOut",
                "fallout(catalog=candidates, no_negative=one)",
                "optional",
                "negatives in the top k / the query's negative candidates; a query "
                "without a negative scores 1 (default empty_target_action='pos')",
            ),
            Mapped(
                "RetrievalFallOut(empty_target_action=neg)",
                "fallout(catalog=candidates, no_negative=zero)",
                "optional",
                "a query without a negative candidate scores 0",
            ),
        ),
        (
            "Every row of a query is a candidate (give every row a score); a query without "
            "a positive target scores 0 (empty_target_action='neg').",
            "The mean is over every distinct value of indexes (users='all'): a user whose "
            "rows are all unjudged (null relevance) is a query with target 0 everywhere.",
            "torchmetrics 1.9.0 counts relevant items scored <= 0 as not retrieved in AP, "
            "precision, recall and MRR (PR #3160), which a newer upstream test reverts: "
            "the preset follows the score-shift-invariant rule (give positive scores to "
            "match 1.9.0).",
            "Contradiction: AP@k's normalisation by the hits in the top k is undocumented.",
            "RetrievalFallOut defaults to empty_target_action='pos' (a query without a "
            "negative scores 1.0, the worst value), every other class to 'neg'.",
        ),
    ),
    Convention(
        "recbole",
        "RecBole",
        "1.2.1",
        "expected",
        _UNDEFINED.format(how="torch.topk"),
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
    ),
    Convention(
        "jurity",
        "Jurity",
        "2.1.0",
        "expected",
        _UNDEFINED.format(how="pandas quicksort"),
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
    ),
    Convention(
        "hivemall",
        "Hivemall",
        "0.6 (master)",
        "expected",
        "Hivemall takes the list in the order the query built it (to_ordered_list); "
        "tied scores have no rule: expectation over the tied orderings",
        "zero",
        "truth",
        (
            Mapped(
                "precision",
                "precision(denominator=retrieved)",
                "required",
                "/ min(#recommended, k); Hivemall requires k <= list size, where it is / k",
            ),
            Mapped("recall", "recall", "required"),
            Mapped("hitrate", "hit_rate", "required"),
            Mapped("mrr", "mrr", "required"),
            Mapped(
                "average_precision",
                "map(denominator=hits)",
                "required",
                "code: / #hits in the head (the docs say / #relevant)",
            ),
            Mapped(
                "auc",
                "auc(degenerate=half)",
                "required",
                "over the head; 1/2 when it holds no hit or only hits",
            ),
            Mapped("ndcg", "ndcg(gain=exp)", "required", "gain 2^rel - 1 (1 for binary)"),
        ),
        (
            "The UDAFs average the rows whose truth array is not null (a null "
            "recommendation array is an empty list, scoring 0): users='truth'. A user "
            "without relevant items (an empty truth array) scores 0 (empty='zero'); "
            "Hivemall gives precision, recall and AP 1.0 when the list is empty too, and "
            "auc 1/2 (no pair).",
            "Contradiction: docs/gitbook/eval/rank.md divides MAP by #relevant (0.5556 at "
            "top 4 in its table); the code divides by the hits in the head (0.8333, "
            "BinaryResponsesMeasuresTest.testAP).",
            "Contradiction: the docs describe AUC over all (relevant, non-relevant) pairs; "
            "the code counts the head only and returns 1/2 when it has one class.",
        ),
    ),
    Convention(
        "sklearn",
        "scikit-learn",
        "1.9.1",
        "expected",
        "dcg_score/ndcg_score average tie groups (ignore_ties=False): = expected",
        "zero",
        "all",
        (
            Mapped("ndcg_score", "ndcg", "optional", "linear gain; all-zero row scores 0"),
            Mapped("dcg_score", "dcg", "optional"),
            Mapped(
                "average_precision_score",
                "map(tie_group=threshold)",
                "none",
                "a tie group of scores is one threshold (constant scores give the positive "
                "rate): each positive gets the precision at the end of its group, whatever "
                "ties=; a row without a positive scores 0 (sklearn warns)",
            ),
        ),
        (
            "Every column of a row is a candidate: give every (user, item) a score.",
            "The mean is over every row of y_true (users='all'): a user without a relevant "
            "item, or with null relevance only, is an all-zero row scoring 0 (empty='zero').",
            "average_precision_score is reproduced as average='samples' (the mean over the "
            "rows); its default average='macro' averages over the columns (items).",
        ),
    ),
    Convention(
        "cornac",
        "Cornac",
        "3.0.1",
        "expected",
        _UNDEFINED.format(how="numpy argsort"),
        "skip",
        "truth",
        (
            Mapped("Precision", "precision", "optional", "/ k"),
            Mapped("Recall", "recall", "optional"),
            Mapped("FMeasure", "f1", "optional"),
            Mapped("HitRatio", "hit_rate", "optional"),
            Mapped("NDCG", "ndcg", "optional", "binary gain: 0/1 relevance"),
            Mapped(
                "MRR",
                "mrr",
                "none",
                "Cornac raises ValueError when no positive is ranked; here 0",
            ),
            Mapped(
                "AUC",
                "auc",
                "none",
                "a tied (positive, negative) pair counts 0: pass ties='pessimistic'",
                ties="pessimistic",
            ),
            Mapped(
                "MAP",
                "map(tie_group=threshold)",
                "none",
                "tied items take the maximum rank (rankdata 'max'): the precision at the "
                "end of the tie group, as scikit-learn's average_precision_score, whatever "
                "ties=; mean over the user's positives among the candidates",
            ),
            Mapped(
                "NCRR",
                "ncrr",
                "optional",
                "sum of 1 / rank of the hits in the top k / H(min(#positives, list length)); "
                "the list is Cornac's ranking of every candidate item: give every candidate "
                "a score",
            ),
        ),
        (
            "Users without a test positive are skipped (empty='skip').",
            "Undocumented in Cornac's docstrings (its code and tests): MRR raises "
            "ValueError when no positive is ranked; AUC counts a tied (positive, negative) "
            "pair 0 (ties='pessimistic'); MAP gives tied items the maximum rank. The "
            "docstrings' k=None ('all items') is not accepted by the code (k > 0 test).",
        ),
    ),
    Convention(
        "elliot",
        "Elliot",
        "GitHub master",
        "expected",
        _UNDEFINED.format(how="the model's top-k routine"),
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
    ),
)

PRESETS: dict[str, Convention] = {c.name: c for c in _PRESETS}
"""Every preset by name."""


def get_convention(name: str) -> Convention:
    """The preset called ``name``, or a ``ValueError`` listing them."""
    if not isinstance(name, str):
        msg = f"conventions must be a preset name (str), got {type(name).__name__}"
        raise TypeError(msg)
    if name not in PRESETS:
        msg = f"conventions must be one of {sorted(PRESETS)}, got {name!r}"
        raise ValueError(msg)
    return PRESETS[name]


def conventions(name: str | None = None) -> pl.DataFrame:
    """The metric mapping of a preset (or of every preset) as a table.

    One row per metric of the library: its name there, the polars_rankeval metric
    that reproduces it (null: not expressible, ``note`` says why), whether it takes
    a cutoff, the tie policy, empty-user rule and user set the library averages that
    metric over (``"history"``: the users of the training history, whose ids the call
    passes as ``users=``; RePlay's Novelty), and how
    it reads ``rank=`` values (``rank_positions``: ``"absolute"`` for RecTools), and
    the function that computes it (``entry``: ``evaluate``, or ``rank_similarity`` for
    a comparison of two recommendation tables such as RecTools' ``Intersection``).

    Examples
    --------
    >>> import polars_rankeval as prk
    >>> table = prk.conventions("rectools")
    >>> table.filter(table["library_metric"] == "MAP(divide_by_k=true)").row(0, named=True)[
    ...     "metric"
    ... ]
    'map(denominator=k)'
    >>> sorted(prk.conventions()["preset"].unique())[:3]
    ['cornac', 'elliot', 'hivemall']
    """
    chosen = [get_convention(name)] if name is not None else list(_PRESETS)
    rows = [
        {
            "preset": c.name,
            "library_metric": m.name,
            "metric": m.metric,
            "cutoff": m.cutoff,
            "ties": m.ties or c.ties,
            "empty": c.empty,
            "users": m.users or c.users,
            "rank_positions": c.rank_positions,
            "entry": m.entry,
            "note": m.note,
        }
        for c in chosen
        for m in c.metrics
    ]
    return pl.DataFrame(rows)


_SUFFIX = re.compile(r"^(?P<body>.*?)\s*\[(?P<preset>[A-Za-z_][A-Za-z0-9_]*)\]\s*$")
_NAME = re.compile(r"^\s*(?P<name>[^@]+?)\s*(?:@\s*(?P<k>.+?))?\s*$")


def _library_name(text: object, preset: str, *, kind: str, example: str) -> re.Match[str]:
    """Parse a library metric name (``Name@k``, optionally suffixed ``[preset]``).

    ``kind`` ("metric" or "measure") and ``example`` word the errors.
    """
    if not isinstance(text, str):
        msg = f"a {kind} must be a string such as {example!r}, got {type(text).__name__}"
        raise TypeError(msg)
    body = text
    suffix = _SUFFIX.match(text)
    if suffix is not None:
        if suffix["preset"].strip() != preset:
            msg = (
                f"{kind} {text!r} names convention {suffix['preset'].strip()!r} "
                f"but conventions={preset!r}"
            )
            raise ValueError(msg)
        body = suffix["body"]
    match = _NAME.match(body)
    if match is None:  # pragma: no cover - the pattern accepts any non-empty text
        msg = f"cannot parse {kind} {text!r}"
        raise ValueError(msg)
    return match


@dataclass(frozen=True)
class Resolved:
    """Library metric names resolved under a preset: what to pass to ``evaluate``."""

    metrics: list[str]
    ties: str
    empty: str
    users: Any
    names: dict[str, str]
    """polars_rankeval canonical name -> displayed name (``map@10[rectools]``)."""


def resolve(
    preset: str,
    metrics: str | Sequence[str],
    *,
    ties: str | None = None,
    empty: str | None = None,
    users: Any = None,
) -> Resolved:
    """Translate library metric names under ``preset`` into polars_rankeval metrics.

    ``ties``, ``empty`` and ``users`` are the values the caller passed explicitly
    (``None``: take the preset's). A metric whose library rule needs another tie policy
    or user set than the call's is refused with the value to pass; left out, the user
    set is the one the requested metrics average over (refused when they differ).
    """
    convention = get_convention(preset)
    texts = [metrics] if isinstance(metrics, str) else list(metrics)
    if ties is not None and ties != convention.ties:
        needed = {t for m in convention.metrics for t in (m.ties, m.ties_at_k) if t}
        if ties not in needed:
            msg = (
                f"conventions={preset!r} sets ties={convention.ties!r} ({convention.ties_note}); "
                f"got ties={ties!r}"
            )
            raise ValueError(msg)
    if empty is not None and empty != convention.empty:
        msg = f"conventions={preset!r} sets empty={convention.empty!r}; got empty={empty!r}"
        raise ValueError(msg)
    call_ties = ties if ties is not None else convention.ties
    out: list[str] = []
    names: dict[str, str] = {}
    universes: dict[str, list[str]] = {}  # the user set of each requested metric
    for text in texts:
        match = _library_name(text, preset, kind="metric", example="map@10")
        for mapped, cut, options, label in _spelled(convention, match["name"], match["k"]):
            shown_text = text if label is None else label
            need_users = _check(convention, mapped, cut, shown_text, call_ties, users)
            universes.setdefault(need_users, []).append(shown_text)
            ours = _with_options(mapped.metric or "", options) + (f"@{cut}" if cut else "")
            for metric in expand_metric(ours):
                shown = label or mapped.name + (f"@{metric.k}" if metric.k is not None else "")
                if metric.name in names:
                    msg = (
                        f"conventions={preset!r}: {text!r} and another requested metric are "
                        f"both {metric.name!r} here; request it once"
                    )
                    raise ValueError(msg)
                names[metric.name] = f"{shown}[{preset}]"
            out.append(ours)
    chosen = users if users is not None else _universe(convention, universes)
    return Resolved(out, call_ties, convention.empty, chosen, names)


def _spelled(
    convention: Convention, name: str, cut: str | None
) -> list[tuple[Mapped, str | None, str, str | None]]:
    """The metrics ``name@cut`` stands for: (mapped, cutoff, options, printed label).

    A name without ``@`` may be the library's own spelling (trec_eval's ``P.5,10``):
    each of its metrics is then labelled as the library prints it.
    """
    spelled = convention.spelling(name) if convention.spelling and cut is None else None
    if spelled is None:
        return [(convention.lookup(name), cut, "", None)]
    return [
        (
            convention.lookup(s.name, text=name),
            None if s.cutoff is None else str(s.cutoff),
            s.options,
            s.label,
        )
        for s in spelled
    ]


def _with_options(metric: str, options: str) -> str:
    """``metric`` with ``options`` added to its own (``map(aggregate=gmean)``)."""
    if not options:
        return metric
    if metric.endswith(")"):
        return f"{metric[:-1]},{options})"
    return f"{metric}({options})"


def _check(
    convention: Convention,
    mapped: Mapped,
    cut: str | None,
    text: str,
    call_ties: str,
    users: Any,
) -> str:
    """Refuse ``mapped`` at ``cut`` in this call with the reason; return its user set."""
    preset, library = convention.name, convention.library
    if mapped.entry != "evaluate":
        msg = (
            f"conventions={preset!r}: {library}'s {mapped.name} compares two "
            f"recommendation tables: prk.{mapped.entry}(reco, reference, [{text!r}], "
            f"conventions={preset!r})"
        )
        raise ValueError(msg)
    if mapped.metric is None:
        msg = (
            f"conventions={preset!r}: {library}'s {mapped.name} cannot be reproduced: {mapped.note}"
        )
        raise ValueError(msg)
    if cut is None and mapped.cutoff == "required":
        msg = f"{library}'s {mapped.name} needs a cutoff, e.g. {mapped.name}@10"
        raise ValueError(msg)
    if cut is not None and mapped.cutoff == "none":
        msg = f"{library}'s {mapped.name} takes no cutoff, got {text!r}"
        raise ValueError(msg)
    need_ties = mapped.ties_at_k if cut is not None and mapped.ties_at_k else mapped.ties
    if need_ties is not None and need_ties != call_ties:
        msg = (
            f"conventions={preset!r}: {library}'s {text} needs "
            f"ties={need_ties!r} ({mapped.note or convention.ties_note}); "
            "evaluate it in a call of its own with that ties="
        )
        raise ValueError(msg)
    if need_ties is None and call_ties != convention.ties:
        msg = (
            f"conventions={preset!r}: {library}'s {text} uses "
            f"ties={convention.ties!r}, the call has ties={call_ties!r}; "
            "evaluate it in a separate call"
        )
        raise ValueError(msg)
    need_users = mapped.users or convention.users
    if need_users == HISTORY_USERS and (users is None or isinstance(users, str)):
        msg = (
            f"conventions={preset!r}: {library}'s {mapped.name} averages over the users of "
            "train: pass users= their ids (users=train['user'].unique())"
            + ("" if users is None else f", got users={users!r}")
        )
        raise ValueError(msg)
    if need_users == HISTORY_USERS:
        return need_users
    if users is not None and not _same(users, need_users):
        msg = (
            f"conventions={preset!r}: {library}'s {mapped.name} averages over "
            f"users={need_users!r}, the call has users={users!r}; leave users= out or "
            f"pass users={need_users!r}"
        )
        raise ValueError(msg)
    return need_users


def _universe(convention: Convention, universes: dict[str, list[str]]) -> str:
    """The one user set of a call: the one every requested metric averages over.

    The library computes each metric over its own users (RecTools: MAP over the test
    users, MeanInvUserFreq over the users of the recommendations); one ``evaluate`` call
    has one user set, so metrics over different sets are refused together.
    """
    if len(universes) == 1:
        return next(iter(universes))
    if not universes:
        return convention.users
    parts = "; ".join(
        f"{', '.join(texts)} over users={universe!r}" for universe, texts in universes.items()
    )
    msg = (
        f"conventions={convention.name!r}: {convention.library} averages {parts}; one call "
        "evaluates one user set: evaluate each set in a call of its own"
    )
    raise ValueError(msg)


@dataclass(frozen=True)
class ResolvedPairs:
    """Library metric names resolved for ``rank_similarity`` under a preset."""

    metrics: list[str]
    ties: str
    users: str
    rank_positions: str
    names: dict[str, str]


_OPTIONS = re.compile(r"^\s*(?P<base>[^(]+?)\s*\((?P<options>[^)]*)\)\s*$")


def resolve_pairs(
    preset: str,
    metrics: str | Sequence[str],
    *,
    ties: str | None = None,
    users: str | None = None,
    rank: bool = False,
) -> ResolvedPairs:
    """Translate library metric names for ``rank_similarity`` under ``preset``.

    Only the library's metrics that compare two recommendation tables (``entry=
    "rank_similarity"``) are accepted; ``ties`` and ``users`` given explicitly must be
    the preset's. With explicit ranks (``rank``), they are read as the library reads
    them (``Convention.rank_positions``).
    """
    convention = get_convention(preset)
    texts = [metrics] if isinstance(metrics, str) else list(metrics)
    if ties is not None and ties != convention.ties:
        msg = f"conventions={preset!r} sets ties={convention.ties!r}; got ties={ties!r}"
        raise ValueError(msg)
    out: list[str] = []
    names: dict[str, str] = {}
    need_users: set[str] = set()
    for text in texts:
        match = _library_name(text, preset, kind="measure", example="Intersection@10")
        name, given = match["name"], ""
        try:
            mapped = convention.lookup(name)
        except ValueError:
            split = _OPTIONS.match(name)
            if split is None:
                raise
            mapped = convention.lookup(split["base"])
            given = split["options"].strip()
            allowed = {o.lower() for o in mapped.options}
            for pair in filter(None, (x.strip() for x in given.split(","))):
                option = pair.split("=", 1)[0].strip().lower()
                if option not in allowed:
                    msg = (
                        f"conventions={preset!r}: {convention.library}'s {mapped.name} takes "
                        f"{', '.join(mapped.options) or 'no option'} here, got {pair!r}"
                    )
                    raise ValueError(msg) from None
        if mapped.entry != "rank_similarity" or mapped.metric is None:
            msg = (
                f"conventions={preset!r}: {convention.library}'s {mapped.name} is not a "
                "comparison of two recommendation tables; evaluate it with "
                f"prk.evaluate(..., conventions={preset!r})"
            )
            raise ValueError(msg)
        cut = match["k"]
        if cut is None and mapped.cutoff == "required":
            msg = f"{convention.library}'s {mapped.name} needs a cutoff, e.g. {mapped.name}@10"
            raise ValueError(msg)
        ours = mapped.metric + (f"({given})" if given else "") + (f"@{cut}" if cut else "")
        for metric in expand_metric(ours):
            base = mapped.name + (f"({given})" if given else "")
            shown = base + (f"@{metric.k}" if metric.k is not None else "") + f"[{preset}]"
            if metric.name in names:
                msg = (
                    f"conventions={preset!r}: {text!r} and another requested measure are "
                    f"both {metric.name!r} here; request it once"
                )
                raise ValueError(msg)
            names[metric.name] = shown
        need_users.add(mapped.users or convention.users)
        out.append(ours)
    chosen = users if users is not None else (need_users.pop() if len(need_users) == 1 else None)
    if chosen is None or any(u != chosen for u in need_users):
        msg = (
            f"conventions={preset!r}: the measures compare users={sorted(need_users)}, "
            f"the call has users={users!r}; one call compares one user set"
        )
        raise ValueError(msg)
    positions = convention.rank_positions if rank else "relative"
    return ResolvedPairs(out, convention.ties, chosen, positions, names)


def rename(frame: Any, names: dict[str, str], *, long: bool) -> Any:
    """Rename the metric columns (and ``n_users(<metric>)`` etc.) to their shown names."""
    spark = not hasattr(frame, "collect_schema")  # a Spark DataFrame (engine="spark")
    columns = list(frame.columns) if spark else frame.collect_schema().names()
    mapping: dict[str, str] = {}
    for column in columns:
        new = column
        for ours, shown in names.items():
            if column == ours:
                new = shown
            elif column.endswith(f"({ours})"):
                new = column[: -len(ours) - 1] + shown + ")"
        if new != column:
            mapping[column] = new
    if spark:
        from pyspark.sql import functions as F  # noqa: N812

        out = frame.withColumnsRenamed(mapping)
        if long and "metric" in columns:
            table = F.create_map(*(F.lit(x) for pair in names.items() for x in pair))
            out = out.withColumn("metric", F.coalesce(table[F.col("metric")], F.col("metric")))
        return out
    out = frame.rename(mapping)
    if long and "metric" in columns:
        out = out.with_columns(pl.col("metric").replace(names))
    return out


_EVALUATE_DEFAULTS = {"ties": "expected", "empty": "skip", "users": "truth"}


def evaluate_under(evaluate: Callable[..., Any], args: dict[str, Any]) -> Any:
    """``evaluate(**args)`` under ``args["conventions"]``: rewrite, run, rename.

    ``args`` are every argument of the call (``locals()`` at its top). ``ties``,
    ``empty`` and ``users`` left at evaluate's defaults take the preset's values.
    """
    args = dict(args)
    preset = args.pop("conventions")
    resolved = resolve(preset, args["metrics"], **explicit_rules(args))
    args.update(
        metrics=resolved.metrics, ties=resolved.ties, empty=resolved.empty, users=resolved.users
    )
    if args.get("rank") is not None and get_convention(preset).rank_positions == "absolute":
        args["rank_positions"] = "absolute"  # RecTools: the ranks are positions, gaps kept
    result = evaluate(**args)
    return rename(result, resolved.names, long=args.get("summary") == "long")


def resolve_options(
    preset: str, metrics: str | Sequence[str], options: dict[str, Any]
) -> tuple[list[str], dict[str, str]]:
    """For ``compare``: resolve ``metrics`` and set ties/empty/users in ``options``.

    Returns the polars_rankeval metrics and the canonical -> shown name mapping.
    """
    given = {**_EVALUATE_DEFAULTS, **{k: v for k, v in options.items() if k in _EVALUATE_DEFAULTS}}
    resolved = resolve(preset, metrics, **explicit_rules(given))
    options.update(ties=resolved.ties, empty=resolved.empty, users=resolved.users)
    if options.get("rank") is not None and get_convention(preset).rank_positions == "absolute":
        options["rank_positions"] = "absolute"
    return resolved.metrics, resolved.names


def explicit_rules(values: Mapping[str, Any]) -> dict[str, Any]:
    """The ``ties``, ``empty`` and ``users`` of ``values`` not at evaluate's defaults.

    A value left at its default is not given: the preset's rule applies.
    """
    return {
        key: values[key]
        for key, default in _EVALUATE_DEFAULTS.items()
        if not _same(values[key], default)
    }


def _same(value: Any, default: str) -> bool:
    return isinstance(value, str) and value == default


def shown_names(preset: str, metrics: str | Sequence[str], **explicit: Any) -> list[str]:
    """The output names of ``metrics`` under ``preset``, in order (``map@10[rectools]``)."""
    resolved = resolve(preset, metrics, **explicit)
    return [resolved.names[m.name] for text in resolved.metrics for m in expand_metric(text)]
