"""Rank correlations per user: spearman, kendall_tau (tau-b) and fcp.

Checked by hand with ties, against scipy's spearmanr / kendalltau and a pairwise brute
force on random data with ties, on a large user (many bit levels of the pair count),
and for their undefined cases.

Tests the private units Features and FramePlan on purpose (a user's kernel alone).
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import polars_rankeval as prk
from polars_rankeval._utils.types import make_columns
from polars_rankeval.metrics.features import Features
from polars_rankeval.metrics.grammar import parse_metric
from polars_rankeval.metrics.spec import FramePlan

scipy_stats = pytest.importorskip("scipy.stats")
sklearn_metrics = pytest.importorskip("sklearn.metrics")

METRICS = ["spearman", "kendall_tau", "fcp", "fcp(score_ties=discordant)"]

# User 1 rates A, B, C, D (E has no score, F no relevance): scores 3, 1, 2, 2 and
# relevance 2, 0, 1, 2. Pairs: AB, AC, BC, BD concordant; AD tied in relevance; CD tied
# in score. User 2: scores 1, 2, 3 against relevance 3, 1, 2: two discordant pairs, one
# concordant.
HAND = pl.DataFrame(
    {
        "user": [1, 1, 1, 1, 1, 1, 2, 2, 2],
        "item": list("ABCDEF") + list("ABC"),
        "score": [3.0, 1.0, 2.0, 2.0, None, 5.0, 1.0, 2.0, 3.0],
        "relevance": [2, 0, 1, 2, 1, None, 3, 1, 2],
    }
)


def test_hand_computed() -> None:
    got = prk.evaluate(HAND, METRICS, per_user=True)
    # User 1, Spearman: average ranks of the scores 4, 1, 2.5, 2.5 and of the relevance
    # 3.5, 1, 2, 3.5, both centred on 2.5: (1.5 * 1 + 1.5 * 1.5) / sqrt(4.5 * 4.5).
    # Kendall: (4 - 0) / sqrt((6 - 1) * (6 - 1)). fcp: of the 5 pairs with different
    # relevance, 4 concordant and CD tied in score (1/2, or 0 when ties are discordant).
    # User 2, Spearman: rank differences -2, 1, 1: 1 - 6 * 6 / (3 * 8); Kendall
    # (1 - 2) / 3; fcp 1 / 3.
    want = pl.DataFrame(
        {
            "user": [1, 2],
            "spearman": [(1.5 * 1 + 1.5 * 1.5) / 4.5, 1 - 6 * 6 / (3 * 8)],
            "kendall_tau": [4 / math.sqrt(5 * 5), (1 - 2) / 3],
            "fcp": [(4 + 0.5) / 5, 1 / 3],
            "fcp(score_ties=discordant)": [4 / 5, 1 / 3],
        }
    )
    assert_frame_equal(got, want, abs_tol=1e-15)


def test_the_same_under_every_tie_policy_and_with_ranks() -> None:
    base = prk.evaluate(HAND, METRICS, per_user=True)
    for ties in prk.TIE_POLICIES:
        got = prk.evaluate(HAND, METRICS, ties=ties, per_user=True)  # type: ignore[arg-type]
        assert_frame_equal(got, base)
    # Ranks (1 = best) order the items as the scores do; ties stay ties.
    ranks = HAND.with_columns(
        rank=pl.col("score").rank("dense", descending=True).over("user")
    ).drop("score")
    got = prk.evaluate(ranks, METRICS, score=None, rank="rank", per_user=True)
    assert_frame_equal(got, base)


def test_spearman_expression() -> None:
    inline = HAND.group_by("user").agg(prk.spearman()).sort("user")
    assert_frame_equal(inline, prk.evaluate(HAND, ["spearman"], per_user=True))


# --------------------------------------------------------------------------- references
def rated_frame(seed: int, n_users: int = 40, max_items: int = 25) -> pl.DataFrame:
    """Heavy ties in both scores (0..5) and relevance (0..4), nulls in both."""
    rng = np.random.default_rng(seed)
    rows = []
    for user in range(n_users):
        size = int(rng.integers(0, max_items))
        grades = int(rng.integers(1, 6))
        for item in range(size):
            score = None if rng.random() < 0.15 else float(rng.integers(0, 6))
            rel = None if rng.random() < 0.15 else int(rng.integers(0, grades))
            rows.append((user, item, score, rel))
    return pl.DataFrame(
        rows,
        schema={"user": pl.Int64, "item": pl.Int64, "score": pl.Float64, "relevance": pl.Int64},
        orient="row",
    )


def pairs_fcp(x: list[float], y: list[float], tie: float) -> float | None:
    total = right = 0.0
    for (xi, yi), (xj, yj) in itertools.combinations(zip(x, y, strict=True), 2):
        if yi == yj:
            continue
        total += 1
        if xi == xj:
            right += tie
        elif (xi > xj) == (yi > yj):
            right += 1
    return right / total if total else None


def finite(value: float) -> float | None:
    return None if math.isnan(value) else float(value)


def reference(df: pl.DataFrame) -> dict[Any, dict[str, float | None]]:
    out = {}
    rated = df.filter(pl.col("score").is_not_null() & pl.col("relevance").is_not_null())
    for user in df["user"].unique().sort():
        rows = rated.filter(pl.col("user") == user)
        x, y = rows["score"].to_list(), rows["relevance"].cast(pl.Float64).to_list()
        defined = len(set(x)) > 1 and len(set(y)) > 1
        out[user] = {
            "spearman": finite(scipy_stats.spearmanr(x, y).statistic) if defined else None,
            "kendall_tau": finite(scipy_stats.kendalltau(x, y).statistic) if defined else None,
            "fcp": pairs_fcp(x, y, 0.5),
            "fcp(score_ties=discordant)": pairs_fcp(x, y, 0.0),
        }
    return out


def check(got: pl.DataFrame, want: dict[Any, dict[str, float | None]]) -> None:
    assert got.height == len(want)
    for row in got.iter_rows(named=True):
        for name, value in want[row["user"]].items():
            if value is None:
                assert row[name] is None, (row["user"], name)
            else:
                assert row[name] == pytest.approx(value, abs=1e-12), (row["user"], name)


@pytest.mark.parametrize("seed", range(5))
def test_agreement_with_scipy_and_pairs(seed: int) -> None:
    df = rated_frame(seed)
    check(prk.evaluate(df, METRICS, per_user=True, users="all"), reference(df))


@pytest.mark.parametrize("grades", [2, 3, 37, 1000])
def test_large_user_against_scipy(grades: int) -> None:
    # 3000 rated items: the discordant pairs are counted over up to 10 bit levels of the
    # relevance rank (one level for binary relevance); a fractional rating scale too.
    rng = np.random.default_rng(grades)
    n = 3000
    df = pl.DataFrame(
        {
            "user": [7] * n,
            "item": list(range(n)),
            "score": rng.integers(0, 200, size=n).astype(float),
            "relevance": rng.integers(0, grades, size=n) / 2.0,
        }
    )
    check(prk.evaluate(df, METRICS, per_user=True), reference(df))


def test_binary_fcp_is_the_auc_of_the_rated_items() -> None:
    df = rated_frame(11).with_columns(pl.col("relevance").clip(upper_bound=1))
    got = prk.evaluate(df, ["fcp"], per_user=True, users="all")
    rated = df.filter(pl.col("score").is_not_null() & pl.col("relevance").is_not_null())
    for user, value in got.iter_rows():
        rows = rated.filter(pl.col("user") == user)
        if rows["relevance"].n_unique() < 2:
            assert value is None
        else:
            assert value == pytest.approx(
                sklearn_metrics.roc_auc_score(rows["relevance"], rows["score"]), abs=1e-12
            )


def test_by_groups_and_user_universe() -> None:
    df = pl.concat(
        [
            HAND.with_columns(system=pl.lit("a")),
            HAND.with_columns(system=pl.lit("b"), score=-pl.col("score")),
        ]
    )
    got = prk.evaluate(df, METRICS, by="system", per_user=True, users=[1, 2, 3])
    assert got.columns == ["system", "user", *METRICS]
    a = got.filter(pl.col("system") == "a")
    b = got.filter(pl.col("system") == "b")
    # Reversed scores flip both correlations; user 3 has no rows: null.
    assert a["kendall_tau"].to_list()[:2] == pytest.approx([0.8, -1 / 3])
    assert b["kendall_tau"].to_list()[:2] == pytest.approx([-0.8, 1 / 3])
    assert b["spearman"].to_list()[:2] == pytest.approx([-(3.75 / 4.5), 0.5])
    assert a.row(2)[2:] == (None, None, None, None)


# --------------------------------------------------------------------------- undefined
UNDEFINED = [
    # (scores, relevance): every metric null
    ([1.0], [1]),  # one rated item
    ([None, 2.0], [1, 0]),  # one rated item after dropping the unscored one
    ([2.0, 2.0, 2.0], [0, 1, 2]),  # constant score (fcp is defined: all ties, 1/2)
    ([1.0, 2.0, 3.0], [1, 1, 1]),  # constant relevance
    ([], []),
]


@pytest.mark.parametrize(("scores", "rels"), UNDEFINED)
def test_undefined_cases(scores: list[float | None], rels: list[int]) -> None:
    df = pl.DataFrame(
        {
            "user": [1] * len(scores),
            "item": list(range(len(scores))),
            "score": scores,
            "relevance": rels,
        },
        schema={"user": pl.Int64, "item": pl.Int64, "score": pl.Float64, "relevance": pl.Int64},
    )
    df = pl.concat([df, pl.DataFrame({"user": [2], "item": [0], "score": [1.0], "relevance": [1]})])
    got = prk.evaluate(df, METRICS, per_user=True, users=[1]).row(0)[1:]
    if scores == [2.0, 2.0, 2.0]:
        assert got == (None, None, 0.5, 0.0)
    else:
        assert got == (None, None, None, None)


def test_skipped_users_follow_the_empty_policy() -> None:
    df = HAND.with_columns(relevance=pl.when(pl.col("user") == 2).then(1).otherwise("relevance"))
    summary = prk.evaluate(df, ["kendall_tau"])
    assert summary.row(0) == (pytest.approx(0.8), 1, 2, 1)  # n_users(kendall_tau) = 1
    assert prk.evaluate(df, ["kendall_tau"], empty="zero").row(0) == (pytest.approx(0.4), 2, 2, 0)


# --------------------------------------------------------------------------- plans, errors
def test_pair_metrics_are_frame_plans() -> None:
    f = Features(make_columns(), "expected", ["user"])
    for name in ("kendall_tau", "fcp"):
        plan = parse_metric(name).plan(f)
        assert isinstance(plan, FramePlan)
        out = plan.build(f.apply(HAND.lazy())).collect()
        assert out.columns == ["user", "value"]
    with pytest.raises(ValueError, match=r"use polars_rankeval\.evaluate"):
        parse_metric("kendall_tau").expr(Features(make_columns(), "expected", None))


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("fcp(score_ties=random)", "'score_ties' of metric 'fcp' must be one of"),
        ("kendall_tau@5", "takes no cutoff"),
        ("spearman(rel=2)", "unknown parameter 'rel'"),
    ],
)
def test_errors(text: str, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        parse_metric(text)


def test_bucketed_runs_agree_with_one_pass() -> None:
    df = rated_frame(4)
    one = prk.evaluate(df, METRICS, users="all")
    split = prk.evaluate(df, METRICS, users="all", engine=prk.Buckets(n_buckets=3))
    assert_frame_equal(split, one, abs_tol=1e-12)
