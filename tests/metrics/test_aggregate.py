"""The ``aggregate=`` metric option: sum, geometric mean, relevant-weighted mean, pooled AUC.

Hand-computed values (the arithmetic in the assertions), tied scores, the empty-user
rules, bucketed evaluation, ``by`` groups, errors, and the peers: trec_eval's ``all``
line (our trec-eval engine, itself checked byte for byte against trec_eval),
ir_measures' NumRet/NumRel, RecBole's GAUC rule (its ``GAUC.metric_info`` written out
with scipy's average ranks, as RecBole's ``rec.meanrank`` gives tied items), and
scikit-learn's ``roc_auc_score`` / Jurity's ``AUC`` on the pooled rows.
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

import polars_rankeval as prk

# user 1: relevant 1 (3.0) and 3 (1.0), non-relevant 2 (2.0)
# user 2: relevant 2 (1.0), non-relevant 1 (2.0)
# user 3: relevant 1, 2 (3.0, 3.0), non-relevant 3 (1.0)
DF = pl.DataFrame(
    {
        "user": [1, 1, 1, 2, 2, 3, 3, 3],
        "item": [1, 2, 3, 1, 2, 1, 2, 3],
        "score": [3.0, 2, 1, 2, 1, 3, 3, 1],
        "relevance": [1, 0, 1, 0, 1, 1, 1, 0],
    }
)


def value(df: pl.DataFrame, metric: str, **kwargs: object) -> float | None:
    out = prk.evaluate(df, [metric], **kwargs)
    return out.get_column(prk.parse_metric(metric).name).item()


def test_canonical_names() -> None:
    assert prk.parse_metric("num_ret(aggregate=sum)").name == "num_ret(aggregate=sum)"
    assert prk.parse_metric("num_ret(aggregate=mean)@5").name == "num_ret@5"
    name = prk.parse_metric("auc( rel=2 , aggregate=relevant_weighted)").name
    assert name == "auc(aggregate=relevant_weighted,rel=2)"
    assert prk.parse_metric(name) == prk.parse_metric("auc(aggregate=relevant_weighted,rel=2.0)")
    assert prk.parse_metric("auc(aggregate=pooled)") != prk.parse_metric("auc")


def test_hand_computed() -> None:
    # sums: 3 + 2 + 3 recommended, 2 + 1 + 2 relevant, hits@2: 1 + 1 + 2
    assert value(DF, "num_ret(aggregate=sum)") == 3 + 2 + 3
    assert value(DF, "num_rel(aggregate=sum)") == 2 + 1 + 2
    assert value(DF, "num_rel_ret(aggregate=sum)@2") == 1 + 1 + 2
    assert value(DF, "num_ret(aggregate=sum)@2") == 2 + 2 + 2
    # per-user AUC: 1/2 (item 1 above 2, item 3 below), 0, 1; weights 2, 1, 2
    assert value(DF, "auc") == pytest.approx((1 / 2 + 0 + 1) / 3)
    assert value(DF, "auc(aggregate=relevant_weighted)") == pytest.approx(
        (2 * 1 / 2 + 1 * 0 + 2 * 1) / (2 + 1 + 2)
    )
    # pooled: positives scored 3, 1, 1, 3, 3; negatives 2, 2, 1. The three 3s beat every
    # negative (9 pairs); each 1 loses to both 2s and ties the 1 (1/2): 9 + 2 * 1/2 of 15.
    assert value(DF, "auc(aggregate=pooled)") == pytest.approx((9 + 2 * 0.5) / (5 * 3))
    assert value(DF, "auc(aggregate=pooled)") == value(DF, "global_auc")
    # the mean of a sum-aggregated recall is not touched: recall@1's sum is 1/2 + 0 + 1/2
    assert value(DF, "recall(aggregate=sum)@1") == pytest.approx(1 / 2 + 0 + 1 / 2)


def test_rel_threshold_weights() -> None:
    graded = DF.with_columns(relevance=pl.Series([2, 0, 1, 0, 2, 2, 1, 0]))
    # rel=2: user 1 has 1 relevant (item 1 above both others: AUC 1), user 2 has item 2
    # below item 1 (0), user 3 has item 1 tied with item 2 (non-relevant at rel=2) and
    # above item 3: (1/2 + 1) / 2. Weights 1, 1, 1.
    got = value(graded, "auc(aggregate=relevant_weighted,rel=2)")
    assert got == pytest.approx((1 + 0 + (0.5 + 1) / 2) / 3)
    assert value(graded, "num_rel(aggregate=sum,rel=2)") == 3


def test_tied_scores() -> None:
    tied = pl.DataFrame(
        {
            "user": [1, 1, 1, 2, 2],
            "item": [1, 2, 3, 1, 2],
            "score": [1.0, 1.0, 0.0, 5.0, 5.0],
            "relevance": [1, 0, 0, 1, 0],
        }
    )
    # user 1: its positive ties one negative (1/2) and beats the other: 3/4; user 2: 1/2.
    assert value(tied, "auc(aggregate=relevant_weighted)") == pytest.approx((3 / 4 + 1 / 2) / 2)
    # pooled: the positives (1.0, 5.0) against the negatives (1.0, 0.0, 5.0):
    # 1.0 ties 1.0, beats 0.0, loses to 5.0 -> 1.5; 5.0 beats 1.0 and 0.0, ties 5.0 -> 2.5
    assert value(tied, "auc(aggregate=pooled)") == pytest.approx((1.5 + 2.5) / 6)
    assert value(tied, "auc(aggregate=pooled)", ties="optimistic") == pytest.approx(5 / 6)
    assert value(tied, "auc(aggregate=pooled)", ties="pessimistic") == pytest.approx(3 / 6)
    # expected hits@1 of user 1: 1/2; user 2: 1/2
    assert value(tied, "num_rel_ret(aggregate=sum)@1") == pytest.approx(1 / 2 + 1 / 2)


def test_empty_users() -> None:
    # user 4 has only relevant rows: its AUC is undefined (RecBole leaves it out).
    extra = pl.DataFrame({"user": [4, 4], "item": [1, 2], "score": [1.0, 0.5], "relevance": [1, 1]})
    df = pl.concat([DF, extra])
    weighted = "auc(aggregate=relevant_weighted)"
    assert value(df, weighted) == pytest.approx((1 + 0 + 2) / 5)  # skip: as without user 4
    # zero: user 4 counts 0 with its weight 2
    assert value(df, weighted, empty="zero") == pytest.approx((1 + 0 + 2 + 2 * 0) / (5 + 2))
    with pytest.raises(ValueError, match=r"auc\(aggregate=relevant_weighted\)' is undefined"):
        prk.evaluate(df, [weighted], empty="error")
    # a sum over nobody: null under skip, 0 under zero
    only = extra.with_columns(relevance=pl.lit(0))
    assert value(only, "map(aggregate=sum)") is None
    assert value(only, "map(aggregate=sum)", empty="zero") == 0.0
    assert value(df, "map(aggregate=sum)", users="truth") == pytest.approx(
        (1 + 2 / 3) / 2 + 1 / 2 + 1 + 1
    )


def test_gmean() -> None:
    # trec_eval's gm_map: exp(mean(log(max(AP, 1e-5)))). AP per user: user 1 (1 + 2/3) / 2,
    # user 2 1/2, user 3 1; user 4 (no relevant item) is undefined.
    ap = [(1 + 2 / 3) / 2, 1 / 2, 1.0]
    assert value(DF, "map(aggregate=gmean)") == pytest.approx(np.exp(np.log(ap).mean()))
    # the same as evaluate's own gmean of the per-user values
    summary = prk.evaluate(DF, ["map"], aggregate=["gmean"])
    assert value(DF, "map(aggregate=gmean)") == pytest.approx(summary["gmean(map)"].item())
    only_negatives = pl.DataFrame({"user": [4], "item": [1], "score": [1.0], "relevance": [0]})
    df = pl.concat([DF, only_negatives])
    assert value(df, "map(aggregate=gmean)") == pytest.approx(np.exp(np.log(ap).mean()))
    # zero: user 4 counts as the floor 1e-5 (trec_eval's query without a relevant item)
    assert value(df, "map(aggregate=gmean)", empty="zero") == pytest.approx(
        np.exp(np.log([*ap, 1e-5]).mean())
    )
    assert value(only_negatives, "map(aggregate=gmean)") is None  # nobody: null
    # a value below the floor is raised to it: user 2's precision@1 is 0
    assert value(DF, "precision(aggregate=gmean)@1") == pytest.approx(
        np.exp(np.log([1, 1e-5, 1]).mean())
    )
    bucketed = prk.evaluate(DF, ["map(aggregate=gmean)"], engine=prk.Buckets(n_buckets=2))
    assert bucketed.item(0, 0) == pytest.approx(value(DF, "map(aggregate=gmean)"))


def test_by_groups_buckets_and_long_summary() -> None:
    rng = np.random.default_rng(3)
    n = 3000
    df = pl.DataFrame(
        {
            "system": rng.choice(["a", "b"], n),
            "user": rng.integers(0, 300, n),
            "item": rng.integers(0, 40, n),
            "score": rng.integers(0, 4, n).astype(float),
            "relevance": rng.integers(0, 3, n),
        }
    ).unique(["system", "user", "item"])
    metrics = [
        "ndcg@5",
        "num_ret(aggregate=sum)",
        "num_rel_ret(aggregate=sum)@3",
        "auc(aggregate=relevant_weighted)",
        "auc(aggregate=pooled)",
        "kendall_tau(aggregate=sum)",  # a metric computed by a sub-plan (FramePlan)
        "map(aggregate=gmean)",
    ]
    memory = prk.evaluate(df, metrics, by="system")
    buckets = prk.evaluate(df, metrics, by="system", engine=prk.Buckets(n_buckets=5))
    from polars.testing import assert_frame_equal

    assert_frame_equal(memory, buckets, abs_tol=1e-9)
    per_user = prk.evaluate(
        df, ["num_ret", "auc", "num_rel", "kendall_tau"], by="system", per_user=True
    )
    check = (
        per_user.group_by("system")
        .agg(
            pl.col("num_ret").sum(),
            (
                (pl.col("auc") * pl.col("num_rel")).filter(pl.col("auc").is_not_null()).sum()
                / pl.col("num_rel").filter(pl.col("auc").is_not_null()).sum()
            ).alias("w"),
            pl.col("kendall_tau").sum(),
        )
        .sort("system")
    )
    assert memory["num_ret(aggregate=sum)"].to_list() == check["num_ret"].to_list()
    assert memory["auc(aggregate=relevant_weighted)"].to_list() == pytest.approx(check["w"])
    assert memory["kendall_tau(aggregate=sum)"].to_list() == pytest.approx(check["kendall_tau"])
    long = prk.evaluate(df, metrics, by="system", summary="long")
    aggregations = dict(zip(long["metric"], long["aggregation"], strict=False))
    assert aggregations["num_ret(aggregate=sum)"] == "sum"
    assert aggregations["auc(aggregate=relevant_weighted)"] == "relevant_weighted"
    assert aggregations["auc(aggregate=pooled)"] == "pooled"
    assert aggregations["ndcg@5"] == "mean"
    # evaluate's own aggregate= list applies to the mean-aggregated metrics only
    wide = prk.evaluate(
        df, ["ndcg@5", "num_ret(aggregate=sum)"], by="system", aggregate=["mean", "median"]
    )
    assert wide.columns[:4] == ["system", "ndcg@5", "median(ndcg@5)", "num_ret(aggregate=sum)"]


def test_errors() -> None:
    with pytest.raises(ValueError, match=r"parameter 'aggregate' of metric 'auc' must be one of"):
        prk.parse_metric("auc(aggregate=median)")
    with pytest.raises(ValueError, match="aggregate='pooled' is defined for auc, novelty only"):
        prk.parse_metric("map(aggregate=pooled)")
    with pytest.raises(ValueError, match="aggregate='pooled' takes no cutoff"):
        prk.parse_metric("auc(aggregate=pooled)@10")
    with pytest.raises(ValueError, match="'coverage' already has one value per by group"):
        prk.parse_metric("coverage(aggregate=sum)@10")
    with pytest.raises(ValueError, match="already has one value per by group"):
        prk.evaluate(DF, ["mae(average=global,aggregate=sum)"])
    with pytest.raises(ValueError, match="valid parameters: aggregate, degenerate, estimator"):
        prk.parse_metric("auc(weights=x)")
    with pytest.raises(ValueError, match=r"request them without it, e\.g\. 'num_ret@3'"):
        prk.evaluate(DF, ["num_ret(aggregate=sum)@3"], per_user=True)
    with pytest.raises(ValueError, match=r"ties='expected'.*got ties='item_desc'"):
        prk.evaluate(DF, ["auc(aggregate=pooled)"], ties="item_desc")
    with pytest.raises(ValueError, match="it takes rel= only, got degenerate=half"):
        prk.evaluate(DF, ["auc(aggregate=pooled,degenerate=half)"])
    with pytest.raises(ValueError, match="estimate the mean over users"):
        prk.evaluate_sampled(DF, ["hit_rate(aggregate=sum)@2"], n_items=10)
    with pytest.raises(ValueError, match=r"compare's paired tests.*e\.g\. 'num_ret'"):
        prk.compare(DF.with_columns(system=pl.lit("a")), ["num_ret(aggregate=sum)"], by="system")


# ----------------------------------------------------------------------------- peers
def test_trec_eval_all_line() -> None:
    from polars_rankeval.trec_eval.program import trec_eval

    qrels, run = prk.datasets.example_paths()
    theirs = trec_eval(qrels, run, ["num_ret", "num_rel", "num_rel_ret"])
    expected = dict(zip(theirs["measure"], theirs["value"], strict=True))
    data = prk.join(
        prk.trec.scan_run(run).select("user", "item", "score"), prk.trec.scan_qrels(qrels)
    )
    ours = prk.evaluate(data, ["num_ret", "num_rel", "num_rel_ret"], conventions="trec_eval")
    ours = ours.collect()
    assert ours.row(0)[:3] == (1500.0, 561.0, 131.0)  # trec_eval's all line on its test run
    assert [expected[m] for m in ("num_ret", "num_rel", "num_rel_ret")] == [1500, 561, 131]
    assert ours.columns[:3] == [
        "num_ret[trec_eval]",
        "num_rel[trec_eval]",
        "num_rel_ret[trec_eval]",
    ]


def test_ir_measures_counts() -> None:
    ir_measures = pytest.importorskip("ir_measures")
    rng = np.random.default_rng(7)
    qrels, run = [], []
    for q in range(30):
        for d in rng.choice(40, size=12, replace=False):
            if rng.random() < 0.7:
                qrels.append(ir_measures.Qrel(str(q), f"d{d}", int(rng.integers(0, 3))))
            if q % 7 != 0 and rng.random() < 0.6:  # some queries without results
                run.append(ir_measures.ScoredDoc(str(q), f"d{d}", float(rng.integers(0, 3))))
    run.append(ir_measures.ScoredDoc("99", "d1", 1.0))  # a query without judgments
    names = ["NumRet", "NumRet(rel=1)"]
    theirs = ir_measures.calc_aggregate(
        [ir_measures.NumRet, ir_measures.NumRet(rel=1), ir_measures.NumRel], qrels, run
    )
    recs = pl.DataFrame(
        [(r.query_id, r.doc_id, r.score) for r in run],
        schema=["user", "item", "score"],
        orient="row",
    )
    truth = pl.DataFrame(
        [(r.query_id, r.doc_id, r.relevance) for r in qrels],
        schema=["user", "item", "relevance"],
        orient="row",
    )
    data = prk.join(recs, truth)
    ours = prk.evaluate(data, names, conventions="ir_measures")
    assert ours.item(0, "NumRet[ir_measures]") == theirs[ir_measures.NumRet]
    assert ours.item(0, "NumRet(rel=1)[ir_measures]") == theirs[ir_measures.NumRet(rel=1)]
    num_rel = prk.evaluate(data, ["NumRel"], conventions="ir_measures", users="both")
    assert num_rel.item(0, "NumRel[ir_measures]") == theirs[ir_measures.NumRel]
    alone = prk.evaluate(data, ["NumRel"], conventions="ir_measures")  # its own users='both'
    assert alone.item(0, "NumRel[ir_measures]") == theirs[ir_measures.NumRel]
    with pytest.raises(ValueError, match="averages over users='both', the call has users='recs'"):
        prk.evaluate(data, ["NumRel"], conventions="ir_measures", users="recs")


def recbole_gauc(df: pl.DataFrame) -> float:
    """RecBole 1.2.1's GAUC.metric_info with rec.meanrank's average (descending) ranks."""
    from scipy.stats import rankdata

    pos_rank_sum, user_len, pos_len = [], [], []
    for _, rows in df.group_by("user"):
        ranks = rankdata(-rows["score"].to_numpy(), method="average")  # descending
        positive = rows["relevance"].to_numpy() >= 1
        pos_rank_sum.append(ranks[positive].sum())
        user_len.append(rows.height)
        pos_len.append(positive.sum())
    s, n, p = (np.array(x, dtype=float) for x in (pos_rank_sum, user_len, pos_len))
    neg = n - p
    keep = (p != 0) & (neg != 0)
    s, n, p, neg = s[keep], n[keep], p[keep], neg[keep]
    pair_num = (n + 1) * p - p * (p + 1) / 2 - s
    user_auc = pair_num / (neg * p)
    return float((user_auc * p).sum() / p.sum())


def test_recbole_gauc_rule() -> None:
    rng = np.random.default_rng(11)
    rows = []
    for user in range(200):
        n = int(rng.integers(1, 12))
        scores = np.round(rng.random(n) * 4) / 4  # heavy ties (and ties at 1e-12 apart)
        scores[: n // 3] += 1e-12 * rng.integers(0, 2, n // 3)
        rel = rng.random(n) < rng.random()
        pairs = zip(scores, rel, strict=True)
        rows += [(user, i, float(s), int(r)) for i, (s, r) in enumerate(pairs)]
    df = pl.DataFrame(rows, schema=["user", "item", "score", "relevance"], orient="row")
    got = prk.evaluate(df, ["gauc"], conventions="recbole")
    assert got.item(0, "gauc[recbole]") == pytest.approx(recbole_gauc(df), abs=1e-12)


def test_pooled_auc_matches_sklearn_and_jurity() -> None:
    from sklearn.metrics import roc_auc_score

    rng = np.random.default_rng(5)
    n = 400
    recs = pl.DataFrame(
        {
            "user": rng.integers(0, 40, n),
            "item": rng.integers(0, 30, n),
            "score": np.round(rng.random(n), 1),  # many ties, within and across users
        }
    ).unique(["user", "item"])
    truth = pl.DataFrame(
        {
            "user": rng.integers(0, 40, n),
            "item": rng.integers(0, 30, n),
            "relevance": rng.integers(0, 2, n),
        }
    ).unique(["user", "item"])
    matched = recs.join(truth, on=["user", "item"])  # both tables: MS's merge, Jurity's join
    expected = roc_auc_score(matched["relevance"], matched["score"])
    data = prk.join(recs, truth)
    ms = prk.evaluate(data, ["auc"], conventions="recommenders").item(0, "auc[recommenders]")
    assert ms == pytest.approx(expected, abs=1e-12)
    jurity_metrics = pytest.importorskip("jurity.recommenders")
    auc = jurity_metrics.AUC(click_column="click")
    theirs = auc.get_score(
        truth.rename({"user": "user_id", "item": "item_id", "relevance": "click"}).to_pandas(),
        recs.rename({"user": "user_id", "item": "item_id", "score": "click"}).to_pandas(),
    )
    ours = prk.evaluate(data, ["AUC"], conventions="jurity").item(0, "AUC[jurity]")
    assert ours == pytest.approx(theirs, abs=1e-12)
    with pytest.raises(ValueError, match="takes no cutoff"):
        prk.evaluate(data, ["AUC@5"], conventions="jurity")
