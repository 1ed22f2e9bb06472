"""Cross-checks against independent implementations: pytrec_eval and scikit-learn."""

from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl
import pytest

import polars_rankeval as prk

pytrec_eval = pytest.importorskip("pytrec_eval")
sklearn_metrics = pytest.importorskip("sklearn.metrics")

CUTOFFS = (1, 3, 5, 10)


def trec_like(seed: int, *, ties: bool, n_users: int = 40) -> pl.DataFrame:
    """Random graded qrels with relevant items outside the lists; string doc ids."""
    rng = np.random.default_rng(seed)
    rows: list[tuple[str, str, float | None, int | None]] = []
    for u in range(n_users):
        n_docs = int(rng.integers(3, 30))
        docs = rng.choice(200, size=n_docs, replace=False)
        judged = rng.random(n_docs) < 0.6
        for doc, is_judged in zip(docs, judged, strict=True):
            score = float(rng.integers(0, 6)) if ties else float(rng.random())
            rel = int(rng.choice([0, 0, 1, 2, 3])) if is_judged else None
            rows.append((f"q{u:03d}", f"d{doc:04d}", score, rel))
        for doc in rng.choice(np.arange(200, 260), size=int(rng.integers(0, 4)), replace=False):
            rows.append((f"q{u:03d}", f"d{doc:04d}", None, int(rng.integers(1, 4))))
    return pl.DataFrame(
        rows,
        schema={"user": pl.String, "item": pl.String, "score": pl.Float64, "relevance": pl.Int64},
        orient="row",
    )


def run_pytrec(df: pl.DataFrame, measures: set[str]) -> dict[str, dict[str, float]]:
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for user, item, score, rel in df.iter_rows():
        if rel is not None:
            qrels.setdefault(user, {})[item] = rel
        if score is not None:
            run.setdefault(user, {})[item] = score
    return pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)


PAIRS = (
    [(f"P_{k}", f"precision@{k}") for k in CUTOFFS]
    + [(f"recall_{k}", f"recall@{k}") for k in CUTOFFS]
    + [(f"map_cut_{k}", f"map@{k}") for k in CUTOFFS]
    + [(f"ndcg_cut_{k}", f"ndcg@{k}") for k in CUTOFFS]
    + [(f"success_{k}", f"hit_rate@{k}") for k in (1, 5, 10)]
    + [("map", "map"), ("recip_rank", "mrr"), ("Rprec", "r_precision"), ("ndcg", "ndcg")]
    + [("num_ret", "num_ret"), ("num_rel_ret", "num_rel_ret")]
)


@pytest.mark.parametrize("ties", [False, True], ids=["no-ties", "ties"])
@pytest.mark.parametrize("seed", range(3))
def test_per_user_agreement_with_pytrec_eval(seed: int, ties: bool) -> None:
    df = trec_like(seed, ties=ties)
    cuts = ",".join(map(str, CUTOFFS))
    trec = run_pytrec(
        df,
        {
            f"P.{cuts}",
            f"recall.{cuts}",
            f"map_cut.{cuts}",
            f"ndcg_cut.{cuts}",
            "success.1,5,10",
            "map",
            "recip_rank",
            "Rprec",
            "ndcg",
            "num_ret",
            "num_rel_ret",
        },
    )
    ours = prk.evaluate(df, [m for _, m in PAIRS], ties="item_desc", per_user=True, users="recs")
    checked = 0
    for row in ours.iter_rows(named=True):
        per_query = trec.get(row["user"])
        if per_query is None or row["recall@1"] is None:  # no relevant item: trec skips it
            continue
        for trec_name, ours_name in PAIRS:
            assert row[ours_name] == pytest.approx(per_query[trec_name], abs=1e-12), (
                row["user"],
                trec_name,
            )
            checked += 1
    assert checked > 20 * len(PAIRS)


def test_ties_change_the_numbers_and_item_desc_is_trec_eval() -> None:
    # Guard against a tie option "verified" on data without ties.
    df = trec_like(7, ties=True)
    assert (
        df.filter(pl.col("score").is_not_null())
        .select(pl.struct("user", "score").is_duplicated().any())
        .item()
    )
    trec = run_pytrec(df, {"ndcg_cut.5"})
    per_user = {
        ties: prk.evaluate(df, ["ndcg@5"], ties=ties, per_user=True, users="recs")  # type: ignore[arg-type]
        for ties in ("item_desc", "item_asc")
    }
    diffs = {
        ties: max(
            abs((row["ndcg@5"] or 0.0) - trec[row["user"]]["ndcg_cut_5"])
            for row in frame.iter_rows(named=True)
            if row["user"] in trec and row["ndcg@5"] is not None
        )
        for ties, frame in per_user.items()
    }
    assert diffs["item_desc"] < 1e-12
    assert diffs["item_asc"] > 1e-3


def _dense(df: pl.DataFrame, user: Any) -> tuple[np.ndarray, np.ndarray]:
    sub = df.filter(pl.col("user") == user)
    return (
        sub["relevance"].fill_null(0).to_numpy().astype(float),
        sub["score"].to_numpy().astype(float),
    )


@pytest.mark.parametrize("k", [None, 1, 3, 5])
@pytest.mark.parametrize("gain_exp", [False, True])
def test_expected_ties_equal_scikit_learn_ndcg(k: int | None, gain_exp: bool) -> None:
    # scikit-learn's ndcg_score averages DCG over tied scores (McSherry & Najork).
    df = trec_like(11, ties=True).filter(pl.col("score").is_not_null())
    metric = f"ndcg{'(gain=exp)' if gain_exp else ''}{'' if k is None else f'@{k}'}"
    ours = prk.evaluate(df, [metric], per_user=True, users="all")
    compared = 0
    for user, value in ours.iter_rows():
        y_true, y_score = _dense(df, user)
        if value is None or len(y_true) < 2:
            continue
        gains = 2.0**y_true - 1.0 if gain_exp else y_true
        expected = sklearn_metrics.ndcg_score([gains], [y_score], k=k)
        assert value == pytest.approx(expected, abs=1e-12), user
        compared += 1
    assert compared > 10


def test_expected_ties_equal_scikit_learn_dcg() -> None:
    df = trec_like(12, ties=True).filter(pl.col("score").is_not_null())
    ours = prk.evaluate(df, ["dcg@5"], per_user=True, users="all")
    for user, value in ours.iter_rows():
        y_true, y_score = _dense(df, user)
        if len(y_true) < 2:
            continue
        assert value == pytest.approx(
            sklearn_metrics.dcg_score([y_true], [y_score], k=5), abs=1e-12
        )


def test_expected_ties_auc_equals_scikit_learn_roc_auc() -> None:
    # Over all candidates (every item scored), tied pairs count 1/2 as in roc_auc_score.
    df = trec_like(13, ties=True).filter(pl.col("score").is_not_null())
    ours = prk.evaluate(df, ["auc"], per_user=True, users="all")
    compared = 0
    for user, value in ours.iter_rows():
        y_true, y_score = _dense(df, user)
        labels = (y_true >= 1).astype(int)
        if labels.min() == labels.max():
            assert value is None
            continue
        assert value == pytest.approx(sklearn_metrics.roc_auc_score(labels, y_score), abs=1e-12)
        compared += 1
    assert compared > 10
