"""Sampled-metric corrections as a metric option: ``ndcg(estimator=bv)@10`` in evaluate.

The grammar form must give :func:`polars_rankeval.evaluate_sampled`'s numbers (the same
tables, looked up inside evaluate's plan), per user, so that ``compare``, bucketed
execution and Spark (tests/engines/test_spark.py) work as for every other metric.

Tests the private units plan.job.Job and plan.head on purpose (which path a job takes).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import polars_rankeval as prk
import polars_rankeval.plan.head as _head
from polars_rankeval._utils.types import make_columns
from polars_rankeval.plan.job import Job
from tests._engines import engine_of
from tests.frames import TWO_POSITIVES

ESTIMATORS = ("sampled", "rank", "mb", "bv")
METRICS = ("hit_rate@2", "recall@3", "precision@2", "ndcg@3", "dcg@2", "mrr", "map@4", "auc")
TIES = ("expected", "optimistic", "pessimistic", "item_asc", "item_desc")


def grammar(metric: str, estimator: str, **options: Any) -> str:
    """``ndcg@3`` + ``bv`` -> ``ndcg(estimator=bv)@3`` (canonical)."""
    base, _, k = metric.partition("@")
    opts = ",".join([f"estimator={estimator}", *(f"{key}={v}" for key, v in options.items())])
    return prk.parse_metric(f"{base}({opts})" + (f"@{k}" if k else "")).name


def candidates(seed: int, n_users: int = 30, *, several: bool = True) -> pl.DataFrame:
    """Sampled candidates with heavy ties, 1-3 positives and 2-9 negatives per user."""
    rng = np.random.default_rng(seed)
    rows = []
    for u in range(n_users):
        n_pos = int(rng.integers(1, 4)) if several else 1
        n_neg = int(rng.integers(2, 10))
        items = rng.choice(np.arange(1, 41), size=n_pos + n_neg, replace=False)
        for j, item in enumerate(items):
            rows.append((u, int(item), float(rng.integers(0, 4)), int(j < n_pos)))
    return pl.DataFrame(rows, schema=["user", "item", "score", "relevance"], orient="row")


def per_user_columns(df: pl.DataFrame, **options: Any) -> dict[str, pl.Series]:
    names = [grammar(m, e) for m in METRICS for e in ESTIMATORS]
    got = prk.evaluate(df, names, per_user=True, **options).sort("user")
    return {name: got[name] for name in names}


# ---------------------------------------------------------------- by hand


def test_hand_computed_values() -> None:
    # A catalog of 4 items, 2 negatives per user (correction_table's worked example:
    # hit_rate@1 mb table (0.95, -0.25, 0.05), bv with gamma = 1/2 (109/132, -1/12,
    # 1/132)). User 1's positive is first of the 3 candidates (sampled rank 1),
    # user 2's second (rank 2), user 3's ties with both negatives (ranks 1..3).
    df = pl.DataFrame(
        {
            "user": [1, 1, 1, 2, 2, 2, 3, 3, 3],
            "item": [1, 2, 3, 1, 2, 3, 1, 2, 3],
            "score": [3.0, 2.0, 1.0, 3.0, 2.0, 1.0, 1.0, 1.0, 1.0],
            "relevance": [1, 0, 0, 0, 1, 0, 0, 1, 0],
        }
    )
    names = ["hit_rate(estimator=mb)@1", "hit_rate(estimator=bv,gamma=0.5)@1"]
    out = prk.evaluate(df, names, n_items=4, per_user=True).sort("user")
    mb = [0.95, -0.25, (0.95 - 0.25 + 0.05) / 3]
    bv = [109 / 132, -1 / 12, (109 / 132 - 1 / 12 + 1 / 132) / 3]
    np.testing.assert_allclose(out[names[0]].to_numpy(), mb, atol=1e-12)
    np.testing.assert_allclose(out[names[1]].to_numpy(), bv, atol=1e-12)
    summary = prk.evaluate(df, names, n_items=4)
    assert summary[names[0]].item() == pytest.approx((0.95 - 0.25 + 0.25) / 3, abs=1e-12)
    # Deterministic ties: optimistic puts user 3's positive first (rank 1: 0.95),
    # item_asc after negative 1 (rank 2: -0.25).
    opt = prk.evaluate(df, names[:1], n_items=4, per_user=True, ties="optimistic")
    asc = prk.evaluate(df, names[:1], n_items=4, per_user=True, ties="item_asc")
    assert opt.sort("user")[names[0]][2] == pytest.approx(0.95, abs=1e-12)
    assert asc.sort("user")[names[0]][2] == pytest.approx(-0.25, abs=1e-12)


def test_several_positives_by_hand() -> None:
    # positives at 0.9 and 0.5, negatives 0.8, 0.4, 0.1 (m = 3), a catalog of 10:
    # sampled ranks 1 and 2 among the negatives; rank estimator r_hat = 1 and
    # 1 + 1 * 9 / 3 = 4 -> mrr (1 + 1/4) / 2; sampled (1 + 1/2) / 2.
    df = TWO_POSITIVES
    out = prk.evaluate(df, ["mrr(estimator=rank)", "mrr(estimator=sampled)", "mrr"], n_items=10)
    assert out["mrr(estimator=rank)"].item() == pytest.approx((1 + 1 / 4) / 2, abs=1e-12)
    assert out["mrr(estimator=sampled)"].item() == pytest.approx((1 + 1 / 2) / 2, abs=1e-12)
    assert out["mrr"].item() == 1.0  # the plain metric: the first relevant item is first


def test_rank_estimator_ndcg_by_hand_and_unscored_rows() -> None:
    # One positive ranked 2nd of 1 + 4 candidates, a catalog of 1,000: r_hat =
    # 1 + 1 * 999 / 4 = 250.75 -> ndcg@300 = 1 / log2(251.75); @100: 0.
    # An unscored candidate ranks below every scored one (as in evaluate): the
    # positive stays 2nd when the last negative's score is removed.
    df = pl.DataFrame(
        {
            "user": [1] * 5,
            "item": [1, 2, 3, 4, 5],
            "score": [0.9, 0.8, 0.5, 0.3, 0.1],
            "relevance": [0, 1, 0, 0, 0],
        }
    )
    names = ["ndcg(estimator=rank)@300", "ndcg(estimator=rank)@100", "ndcg(estimator=sampled)@2"]
    out = prk.evaluate(df, names, n_items=1000)
    assert out[names[0]].item() == pytest.approx(1 / math.log2(251.75), abs=1e-12)
    assert out[names[1]].item() == 0.0
    assert out[names[2]].item() == pytest.approx(1 / math.log2(3), abs=1e-12)
    unscored = df.with_columns(score=pl.when(pl.col("item") == 5).then(None).otherwise("score"))
    assert_frame_equal(prk.evaluate(unscored, names, n_items=1000), out)


# ---------------------------------------------------------------- = evaluate_sampled


@pytest.mark.parametrize("ties", TIES)
def test_grammar_equals_evaluate_sampled(ties: Any) -> None:
    df = candidates(0)
    ref = prk.evaluate_sampled(
        df, list(METRICS), n_items=60, estimators=ESTIMATORS, per_user=True, ties=ties
    )
    got = per_user_columns(df, n_items=60, ties=ties)
    for metric in METRICS:
        for e in ESTIMATORS:
            np.testing.assert_allclose(
                got[grammar(metric, e)].to_numpy(),
                ref[f"{metric}[{e}]"].to_numpy(),
                rtol=1e-12,
                atol=1e-12,
                err_msg=f"{metric} {e} {ties}",
            )


def test_grammar_options_by_lazy_and_summary() -> None:
    # gamma and sampling reach the tables; by groups; a LazyFrame in, out; the
    # summary's means and counts are evaluate_sampled's.
    df = candidates(1, several=False)
    two = pl.concat(
        [
            df.with_columns(system=pl.lit("a")),
            df.with_columns(system=pl.lit("b"), score=-pl.col("score")),
        ]
    )
    names = {
        "ndcg(estimator=bv,gamma=0.3,sampling=with_replacement)@3": "ndcg@3[bv]",
        "hit_rate(estimator=mb,sampling=with_replacement)@2": "hit_rate@2[mb]",
    }
    got = prk.evaluate(two.lazy(), list(names), n_items=45, by="system").collect()
    for name, col in names.items():
        metric, est = col[:-1].split("[")
        ref = prk.evaluate_sampled(
            two,
            metric,
            n_items=45,
            estimators=est,
            gamma=0.3,
            sampling="with_replacement",
            by="system",
            summary="wide",
        )
        np.testing.assert_allclose(got[name].to_numpy(), ref[col].to_numpy(), atol=1e-12)
        assert got[f"n_users({name})"].to_list() == ref["n_users"].to_list()


def test_rel_option_chooses_the_positives() -> None:
    # hit_rate(rel=2): rows of relevance >= 2 are the positives, the others negatives;
    # the same as evaluate_sampled on the relevance recoded to 1 / 0.
    df = candidates(2).with_columns(relevance=pl.col("relevance") + (pl.col("item") % 2))
    got = prk.evaluate(df, ["hit_rate(estimator=bv,rel=2)@3"], n_items=60, per_user=True)
    recoded = df.with_columns(relevance=(pl.col("relevance") >= 2).cast(pl.Int64))
    ref = prk.evaluate_sampled(recoded, "hit_rate@3", n_items=60, estimators="bv", per_user=True)
    got = got.drop_nulls().sort("user")
    assert got["user"].to_list() == ref["user"].to_list()
    np.testing.assert_allclose(
        got["hit_rate(estimator=bv,rel=2)@3"].to_numpy(), ref["hit_rate@3[bv]"].to_numpy()
    )


def test_sampled_estimator_is_the_plain_metric_for_one_positive() -> None:
    # estimator=sampled needs no catalog size, and with one positive per user it is
    # the metric itself.
    df = candidates(3, several=False)
    plain = prk.evaluate(df, list(METRICS), per_user=True).sort("user")
    sampled = prk.evaluate(df, [grammar(m, "sampled") for m in METRICS], per_user=True)
    for metric in METRICS:
        np.testing.assert_allclose(
            sampled.sort("user")[grammar(metric, "sampled")].to_numpy(),
            plain[metric].to_numpy(),
            atol=1e-12,
        )


# ---------------------------------------------------------------- plan: buckets, compare


@pytest.mark.parametrize("strategy", ["buckets", "partition"])
def test_bucketed_equals_in_memory(strategy: Any, tmp_path: Any) -> None:
    df = pl.concat(
        [candidates(4).with_columns(system=pl.lit(s), score=pl.col("score") * w) for s, w in
         (("a", 1.0), ("b", -1.0))]
    )  # fmt: skip
    names = ["ndcg(estimator=bv)@3", "mrr(estimator=rank)", "auc(estimator=mb)"]
    memory = prk.evaluate(df, names, n_items=60, by="system", per_user=True, engine="memory")
    bucketed = prk.evaluate(
        df,
        names,
        n_items=60,
        by="system",
        per_user=True,
        engine=engine_of(strategy, n_buckets=4, temp_dir=tmp_path),
    )
    key = ["system", "user"]
    assert_frame_equal(bucketed.sort(key), memory.sort(key), abs_tol=1e-12)
    summary = prk.evaluate(
        df, names, n_items=60, by="system", engine=engine_of(strategy, n_buckets=3)
    )
    assert_frame_equal(summary, prk.evaluate(df, names, n_items=60, by="system"), abs_tol=1e-12)


def test_compare_two_systems_with_bv() -> None:
    # compare runs the per-user plan: its test is the one of compare_per_user on
    # evaluate_sampled's per-user bv values.
    df = candidates(5, n_users=40, several=False)
    rng = np.random.default_rng(9)
    two = pl.concat(
        [
            df.with_columns(system=pl.lit("base")),
            df.with_columns(
                system=pl.lit("new"),
                score=pl.col("score") + pl.Series(rng.normal(0, 2, df.height)),
            ),
        ]
    )
    name = "ndcg(estimator=bv)@3"
    got = prk.compare(two, [name], by="system", baseline="base", test="t", n_items=60)
    per_user = prk.evaluate_sampled(
        two, "ndcg@3", n_items=60, estimators="bv", by="system", per_user=True
    )
    ref = prk.compare_per_user(
        per_user.drop("n_positives").rename({"ndcg@3[bv]": name}), baseline="base", test="t"
    )
    for column in ("mean", "baseline_mean", "diff", "p_value"):
        assert got[column].item() == pytest.approx(ref[column].item(), abs=1e-12), column
    means = per_user.group_by("system").agg(pl.col("ndcg@3[bv]").mean()).sort("system")
    assert got["diff"].item() == pytest.approx(means["ndcg@3[bv]"][1] - means["ndcg@3[bv]"][0])


def test_plain_metrics_keep_their_names_and_fast_path() -> None:
    assert prk.parse_metric("ndcg(estimator=none)@10").name == "ndcg@10"
    assert prk.parse_metric("ndcg(sampling=without_replacement)@10").name == "ndcg@10"
    schema = pl.Schema({"user": pl.Int64, "item": pl.Int64, "score": pl.Float64,
                        "relevance": pl.Int64})  # fmt: skip
    options: dict[str, Any] = {
        "by": None, "ties": "expected", "users": "truth", "empty": "skip",
        "aggregate": "mean", "per_user": False,
    }  # fmt: skip
    plain = Job.create(schema, ["ndcg@10", "hit_rate@5"], make_columns(), **options)
    assert _head.applies(plain)
    corrected = Job.create(schema, ["ndcg(estimator=bv)@10"], make_columns(), **options)
    assert corrected.kinds == {"ndcg(estimator=bv)@10": "frame"}
    assert not _head.applies(corrected)
    # cutoff lists of a corrected metric: one plan per cutoff, the same values
    df = candidates(6)
    lists = prk.evaluate(df, ["ndcg(estimator=bv)@[2,3]"], n_items=60)
    each = prk.evaluate(df, ["ndcg(estimator=bv)@2", "ndcg(estimator=bv)@3"], n_items=60)
    assert_frame_equal(lists, each)


# ---------------------------------------------------------------- errors


def _one_user() -> pl.DataFrame:
    return pl.DataFrame(
        {"user": [1, 1, 1], "item": [1, 2, 3], "score": [3.0, 2.0, 1.0], "relevance": [0, 1, 0]}
    )


@pytest.mark.parametrize(
    ("metrics", "options", "message"),
    [
        (["ndcg(estimator=bv)@10"], {}, r"metric 'ndcg\(estimator=bv\)@10' estimates the "
         r"full-catalog value and needs the catalog size: pass n_items="),
        # not inferred from the data when another metric reads the catalog size
        (["coverage@2", "hit_rate(estimator=rank)@1"], {}, r"hit_rate\(estimator=rank\)@1.*"
         r"pass n_items="),
        (["ndcg(estimator=rank,gamma=0.5)@10"], {"n_items": 9}, r"parameter 'gamma' of metric "
         r"'ndcg\(estimator=rank,gamma=0.5\)@10' applies to estimator=bv only"),
        (["mrr(gamma=0.5)"], {"n_items": 9}, r"applies to estimator=bv only, got estimator=none"),
        (["mrr(estimator=sampled,sampling=with_replacement)"], {}, r"parameter 'sampling' .* "
         r"applies to estimator=mb or bv only, got estimator=sampled"),
        (["ndcg(estimator=bv,discount=log_clipped)@3"], {"n_items": 9}, r"default discount='log'"),
        (["dcg(base=10,estimator=bv)@3"], {"n_items": 9}, r"default base=2"),
        (["precision(estimator=mb)"], {"n_items": 9}, r"precision with a cutoff"),
        (["auc(estimator=mb)@3"], {"n_items": 9}, r"auc over all candidates"),
        (["ndcg(estimator=best)@3"], {"n_items": 9}, r"parameter 'estimator' of metric 'ndcg' "
         r"must be one of"),
        (["ndcg(estimator=bv,gamma=1.5)@3"], {"n_items": 9}, r"parameter 'gamma' of metric "
         r"'ndcg' must be in \[0, 1\], got 1.5"),
    ],
)  # fmt: skip
def test_errors(metrics: list[str], options: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        prk.evaluate(_one_user(), metrics, **options)


def test_data_errors() -> None:
    # a user whose candidates are all positive: no sampled rank
    all_positive = _one_user().with_columns(user=pl.lit(2, pl.Int64), relevance=pl.lit(1, pl.Int64))
    df = pl.concat([_one_user(), all_positive])
    with pytest.raises(ValueError, match=r"'mrr\(estimator=bv\)': 1 user\(s\) with a positive "
                       r"\(relevance >= 1\) have no negative candidate, e.g. user 2"):  # fmt: skip
        prk.evaluate(df, ["mrr(estimator=bv)"], n_items=9)
    # ...also under bucketed execution and with the estimator that needs no catalog
    with pytest.raises(ValueError, match="have no negative candidate"):
        prk.evaluate(df, ["mrr(estimator=sampled)"], engine=prk.Buckets(n_buckets=2))
    ranked = _one_user().with_columns(rank=pl.Series([1, 2, 3])).drop("score")
    with pytest.raises(ValueError, match="does not support rank_positions='absolute'"):
        prk.evaluate(ranked, ["mrr(estimator=rank)"], n_items=9, rank="rank",
                     rank_positions="absolute")  # fmt: skip
    with pytest.raises(ValueError, match=r"evaluate_sampled and correction_table choose the "
                       r"estimators with estimators="):  # fmt: skip
        prk.evaluate_sampled(_one_user(), ["ndcg(estimator=bv)@3"], n_items=9)
    with pytest.raises(TypeError, match="estimator"):
        prk.ndcg(3, estimator="bv")  # type: ignore[call-arg]
