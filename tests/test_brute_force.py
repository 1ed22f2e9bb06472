"""Every metric, every tie policy, both engines: equal to the brute-force reference."""

from __future__ import annotations

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import polars_rankeval as prk
from tests._reference import inline_per_user, random_frame, reference_frame

METRICS = [
    "precision@1",
    "precision@3",
    "precision(denominator=retrieved)@3",
    "precision",
    "precision(rel=2)@3",
    "recall@2",
    "recall",
    "f1@3",
    "f1(denominator=retrieved)@3",
    "hit_rate@1",
    "hit_rate@3",
    "hit_rate(rel=2)@2",
    "r_precision",
    "mrr",
    "mrr@2",
    "mrr(rel=2)",
    "map",
    "map@3",
    "map(denominator=min_k_relevant)@3",
    "map(rel=2)",
    "auc",
    "auc@3",
    "auc@2",
    "auc(rel=2)@3",
    "dcg@3",
    "dcg(gain=exp)",
    "dcg(discount=log_clipped)@4",
    "dcg(discount=half_life,half_life=2)@4",
    "ndcg",
    "ndcg@3",
    "ndcg(base=10,gain=exp)@2",
    "ndcg(idcg=all)@2",
    "num_ret@3",
    "num_rel",
    "num_rel_ret@2",
]


@pytest.mark.parametrize("ties", prk.TIE_POLICIES)
@pytest.mark.parametrize("seed", range(6))
def test_engine_matches_brute_force(ties: str, seed: int) -> None:
    df = random_frame(seed)
    expected = reference_frame(df, METRICS, ties)
    got = prk.evaluate(df, METRICS, ties=ties, per_user=True, users="all")
    assert_frame_equal(got, expected, abs_tol=1e-9, check_dtypes=False)


@pytest.mark.parametrize("ties", prk.TIE_POLICIES)
@pytest.mark.parametrize("seed", range(3))
def test_inline_expressions_match_brute_force(ties: str, seed: int) -> None:
    df = random_frame(100 + seed)
    expected = reference_frame(df, METRICS, ties)
    got = inline_per_user(df, METRICS, ties)
    assert_frame_equal(got, expected, abs_tol=1e-9, check_dtypes=False)


@pytest.mark.slow
def test_large_tie_groups_expected_values() -> None:
    # One user, a 9-way tie straddling every cutoff: 9! orderings in the reference.
    df = pl.DataFrame(
        {
            "user": [1] * 10,
            "item": list(range(10)),
            "score": [2.0] + [1.0] * 9,
            "relevance": [0, 1, 0, 2, 0, 0, 1, 0, 0, 3],
        }
    )
    metrics = ["precision@4", "hit_rate@3", "mrr@5", "map@6", "auc@4", "ndcg@5", "auc"]
    expected = reference_frame(df, metrics, "expected")
    got = prk.evaluate(df, metrics, per_user=True)
    assert_frame_equal(got, expected, abs_tol=1e-12, check_dtypes=False)
