"""Sampled negatives and the corrected sampled metrics (Krichene & Rendle, KDD 2020)."""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import polars_rankeval as prk
import polars_rankeval.analysis.sampled_correction as sampled_correction
from polars_rankeval.analysis.negatives import NegativeSamplingWarning, mix64_int
from polars_rankeval.analysis.sampled_correction import rank_distribution, target
from tests.frames import ONE_ROW, TWO_POSITIVES

scipy_stats = pytest.importorskip("scipy.stats")

GOLDEN = 0x9E3779B97F4A7C15
MASK = (1 << 64) - 1


# ---------------------------------------------------------------- the rank law


def test_hypergeometric_rank_law_by_hand() -> None:
    # n = 4 items: 3 negatives, m = 2 drawn without replacement. Full rank r has r - 1
    # negatives above; P(x above drawn) = C(r-1, x) C(4-r, 2-x) / C(3, 2).
    third = 1 / 3
    expected = np.array(
        [
            [1, 0, 0],  # r = 1: nothing above
            [third, 2 * third, 0],  # r = 2: C(1,0)C(2,2)/3, C(1,1)C(2,1)/3
            [0, 2 * third, third],  # r = 3: C(2,1)C(1,1)/3, C(2,2)C(1,0)/3
            [0, 0, 1],  # r = 4: both drawn are above
        ]
    )
    got = rank_distribution(np.arange(1, 5), 4, 2, "without_replacement")
    np.testing.assert_allclose(got, expected, atol=1e-15)


def test_binomial_rank_law_by_hand() -> None:
    # With replacement: x ~ Bin(2, (r-1)/3); r = 2: p = 1/3 -> (4/9, 4/9, 1/9).
    expected = np.array([[1, 0, 0], [4 / 9, 4 / 9, 1 / 9], [1 / 9, 4 / 9, 4 / 9], [0, 0, 1]])
    got = rank_distribution(np.arange(1, 5), 4, 2, "with_replacement")
    np.testing.assert_allclose(got, expected, atol=1e-15)


@pytest.mark.parametrize("sampling", ["without_replacement", "with_replacement"])
def test_rank_law_against_scipy(sampling: Any) -> None:
    n, m = 5000, 37
    ranks = np.array([1, 2, 3, 50, 777, 2500, 4999, 5000])
    got = rank_distribution(ranks, n, m, sampling)
    x = np.arange(m + 1)
    for row, r in zip(got, ranks, strict=True):
        if sampling == "without_replacement":
            ref = scipy_stats.hypergeom.pmf(x, n - 1, r - 1, m)
        else:
            ref = scipy_stats.binom.pmf(x, m, (r - 1) / (n - 1))
        np.testing.assert_allclose(row, ref, rtol=1e-9, atol=1e-300)
        assert row.sum() == pytest.approx(1.0)
        # E[i - 1 | r] = m (r - 1) / (n - 1): what the rank estimator inverts
        assert row @ x == pytest.approx(m * (r - 1) / (n - 1))


# ------------------------------------------------------------ correction table


def test_correction_table_by_hand() -> None:
    # hit_rate@1, n = 4, m = 2; A as in test_hypergeometric_rank_law_by_hand, M = (1,0,0,0).
    # mb: 9 A'A = [[10,2,0],[2,8,2],[0,2,10]], 9 A'M = (9,0,0) -> x3 = -x2/5,
    # x1 = -3.8 x2, -38 x2 + 2 x2 = 9 -> x2 = -1/4, x1 = 0.95, x3 = 0.05.
    # bv, gamma = 1/2: c = A'p = (1/3, 1/3, 1/3) (p = 1/4), so
    # (A'A + diag(4/3)) x = 2 A'M -> [[22,2,0],[2,20,2],[0,2,22]] x = (18,0,0):
    # x2 = -1/12, x1 = 109/132, x3 = 1/132.  bv, gamma = 1: posterior mean
    # P(r = 1 | i = 1) = 1 / (1 + 1/3) = 3/4.
    # rank: r_hat = 1 + (i-1) 3/2 = (1, 2.5, 4) -> hit@1 = (1, 0, 0).
    mb = prk.correction_table("hit_rate@1", n_items=4, n_negatives=2, estimators="mb")
    np.testing.assert_allclose(mb["mb"].to_numpy(), [0.95, -0.25, 0.05], atol=1e-12)
    half = prk.correction_table(
        "hit_rate@1", n_items=4, n_negatives=2, estimators=["bv"], gamma=0.5
    )
    np.testing.assert_allclose(half["bv"].to_numpy(), [109 / 132, -1 / 12, 1 / 132], atol=1e-12)
    one = prk.correction_table("success@1", n_items=4, n_negatives=2, gamma=1.0)
    np.testing.assert_allclose(one["bv"].to_numpy(), [0.75, 0.0, 0.0], atol=1e-12)
    assert one["sampled"].to_list() == [1.0, 0.0, 0.0]
    assert one["rank"].to_list() == [1.0, 0.0, 0.0]
    assert one["sampled_rank"].to_list() == [1, 2, 3]
    # ndcg@3, rank estimator: 1/log2(1 + r_hat) for r_hat = 1, 2.5 (<= 3), 4 (> 3).
    nd = prk.correction_table("ndcg@3", n_items=4, n_negatives=2, estimators=["sampled", "rank"])
    np.testing.assert_allclose(nd["rank"].to_numpy(), [1.0, 1 / math.log2(3.5), 0.0])
    np.testing.assert_allclose(nd["sampled"].to_numpy(), [1.0, 1 / math.log2(3), 1 / 2])


@pytest.mark.parametrize("metric", ["hit_rate@5", "ndcg@10", "mrr", "map@20", "auc", "P@5"])
@pytest.mark.parametrize("gamma", [0.0, 0.01, 0.3, 1.0])
@pytest.mark.parametrize("sampling", ["without_replacement", "with_replacement"])
def test_bv_matches_the_closed_form(metric: str, gamma: float, sampling: Any) -> None:
    # The paper's closed form ((1-g) A'PA + g diag(c))^-1 A'P M with scipy's pmfs.
    n, m = 400, 12
    r = np.arange(1, n + 1)
    x = np.arange(m + 1)
    if sampling == "without_replacement":
        a = scipy_stats.hypergeom.pmf(x[None, :], n - 1, (r - 1)[:, None], m)
    else:
        a = scipy_stats.binom.pmf(x[None, :], m, ((r - 1) / (n - 1))[:, None])
    rng = np.random.default_rng(3)
    for prior in (None, rng.random(n)):
        p = np.full(n, 1 / n) if prior is None else prior / prior.sum()
        full = target(metric).values(r, n)
        c = a.T @ p
        lhs = (1 - gamma) * a.T @ (p[:, None] * a) + gamma * np.diag(c)
        rhs = a.T @ (p * full)
        ref = np.linalg.lstsq(lhs, rhs, rcond=None)[0] if gamma == 0 else np.linalg.solve(lhs, rhs)
        got = prk.correction_table(
            metric,
            n_items=n,
            n_negatives=m,
            estimators="bv",
            gamma=gamma,
            sampling=sampling,
            prior=prior,
        )["bv"].to_numpy()
        # compare the expected corrected values (what the estimator is judged on)
        np.testing.assert_allclose(a @ got, a @ ref, atol=1e-6)
        if gamma > 0:
            np.testing.assert_allclose(got, ref, atol=1e-8)


def test_full_sample_is_exact() -> None:
    # m = n - 1: the sample is the catalog, the sampled rank is the full rank; every
    # estimator gives the full metric.
    tab = prk.correction_table("ndcg@3", n_items=6, n_negatives=5, gamma=0.0)
    full = target("ndcg@3").values(np.arange(1, 7), 6)
    for e in ("sampled", "rank", "mb", "bv"):
        np.testing.assert_allclose(tab[e].to_numpy(), full, atol=1e-12)


def _expected(metric: str, ranks: np.ndarray, n: int, m: int, estimator: Any) -> float:
    tab = prk.correction_table(metric, n_items=n, n_negatives=m, estimators=estimator)
    law = rank_distribution(ranks, n, m, "without_replacement")
    return float((law @ tab[estimator].to_numpy()).mean())


def test_paper_sampled_metrics_invert_the_order_and_bv_restores_it() -> None:
    # Krichene & Rendle's central observation: A puts 40% of the positives first and
    # the rest far down; B puts every positive around rank 30-80 of 10,000. Exactly,
    # A is far better at top 10; sampled with m = 100 (expectations over the sampling
    # law), B looks better. The bias-variance correction restores A > B.
    n, m = 10_000, 100
    ranks_a = np.r_[np.ones(40, dtype=int), np.linspace(2000, 10000, 60).astype(int)]
    ranks_b = np.linspace(30, 80, 100).astype(int)
    for metric in ("hit_rate@10", "ndcg@10", "mrr"):
        tgt = target(metric)
        assert tgt.values(ranks_a, n).mean() > tgt.values(ranks_b, n).mean() + 0.3
        assert _expected(metric, ranks_a, n, m, "sampled") < _expected(
            metric, ranks_b, n, m, "sampled"
        )
        assert _expected(metric, ranks_a, n, m, "bv") > _expected(metric, ranks_b, n, m, "bv")


def test_paper_one_sample_collapses_every_metric_to_auc() -> None:
    # m = 1: P(i = 1 | r) = (n - r)/(n - 1) = AUC(r), so every expected sampled metric
    # is M(2) + (M(1) - M(2)) AUC: it orders systems like AUC, whatever the metric.
    n = 1000
    ranks_a = np.r_[np.ones(30, dtype=int), np.full(70, 900)]  # top-heavy, poor AUC
    ranks_b = np.full(100, 20)  # never top 10, good AUC
    auc = target("auc")
    assert auc.values(ranks_a, n).mean() < auc.values(ranks_b, n).mean()
    for metric in ("hit_rate@1", "ndcg@10", "mrr", "map@5"):
        tgt = target(metric)
        assert tgt.values(ranks_a, n).mean() > tgt.values(ranks_b, n).mean()
        a = _expected(metric, ranks_a, n, 1, "sampled")
        b = _expected(metric, ranks_b, n, 1, "sampled")
        assert a < b  # the order of AUC, not of the metric
        m1, m2 = tgt.values(np.array([1, 2]), 2)
        assert a == pytest.approx(m2 + (m1 - m2) * auc.values(ranks_a, n).mean())


# ------------------------------------------------------------ evaluate_sampled


def test_simulation_corrected_estimates_are_closer() -> None:
    # A synthetic model with known full-catalog ranks: n = 400 items, 600 users; the
    # model's score of each item is fixed, so the full ranks are known, the pipeline
    # samples m = 20 negatives, scores them and corrects.
    n, users, m = 400, 600, 20
    rng = np.random.default_rng(7)
    full_rank = np.minimum(n, 1 + rng.geometric(0.04, size=users))
    truth = pl.DataFrame({"user": np.arange(users), "item": (full_rank - 1).astype(np.int64)})
    # the score of item j is -j for every user: item j has full rank j + 1
    cands = prk.sample_negatives(truth, n_negatives=m, catalog=np.arange(n), seed=11)
    scored = cands.with_columns(score=-pl.col("item").cast(pl.Float64))
    out = prk.evaluate_sampled(
        scored, ["hit_rate@10", "ndcg@10", "mrr"], n_items=n, estimators=["sampled", "bv"]
    )
    full = pl.DataFrame(
        {"user": np.repeat(np.arange(users), n), "item": np.tile(np.arange(n), users)}
    )
    full = full.join(truth.with_columns(relevance=pl.lit(1)), on=["user", "item"], how="left")
    full = full.with_columns(
        score=-pl.col("item").cast(pl.Float64), relevance=pl.col("relevance").fill_null(0)
    )
    exact = prk.evaluate(full, ["hit_rate@10", "ndcg@10", "mrr"])
    for metric in ("hit_rate@10", "ndcg@10", "mrr"):
        true = exact[metric].item()
        assert true == pytest.approx(target(metric).values(full_rank, n).mean())
        value = dict(
            out.filter(pl.col("metric") == metric).select("estimator", "value").iter_rows()
        )
        assert abs(value["bv"] - true) < 0.25 * abs(value["sampled"] - true), (metric, true, value)


def _one_positive_frame(seed: int) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for u in range(40):
        k = int(rng.integers(3, 9))
        scores = rng.integers(0, 4, size=k).astype(float)  # many ties
        pos = int(rng.integers(0, k))
        for j in range(k):
            rows.append((u, 100 + j * 7 % 13 + j, scores[j], int(j == pos)))
    return pl.DataFrame(rows, schema=["user", "item", "score", "relevance"], orient="row")


@pytest.mark.parametrize("fast", [True, False])
@pytest.mark.parametrize("ties", ["expected", "optimistic", "pessimistic", "item_asc", "item_desc"])
def test_sampled_equals_evaluate_under_every_tie_policy(
    ties: Any, fast: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    # both paths: one positive per user (one join + aggregation) and the general one
    monkeypatch.setattr(sampled_correction, "_FAST_PATH", fast)
    df = _one_positive_frame(0)
    metrics = ["hit_rate@2", "recall@3", "precision@2", "ndcg@3", "dcg@2", "mrr", "map@4", "auc"]
    got = prk.evaluate_sampled(
        df,
        metrics,
        n_items=50,
        estimators="sampled",
        ties=ties,
        summary="wide",
    )
    ref = prk.evaluate(df, metrics, ties=ties)
    for metric in metrics:
        assert got[f"{metric}[sampled]"].item() == pytest.approx(ref[metric].item(), abs=1e-12)


def test_ties_by_hand() -> None:
    # one negative above, the positive tied with two negatives, one below: m = 4, the
    # positive spans sampled ranks 2, 3, 4. hit_rate@2: expected 1/3, optimistic 1,
    # pessimistic 0; item_asc puts the negatives 1 (< 5) first: rank 3; item_desc puts
    # negative 9 (> 5) first: rank 3 as well.  bv (expected) = mean of T(2), T(3), T(4).
    df = pl.DataFrame(
        {
            "user": [1] * 5,
            "item": [7, 5, 1, 9, 3],
            "score": [2.0, 1.0, 1.0, 1.0, 0.0],
            "relevance": [0, 1, 0, 0, 0],
        }
    )
    values = {}
    ties: Any
    for ties in ("expected", "optimistic", "pessimistic", "item_asc", "item_desc"):
        out = prk.evaluate_sampled(
            df,
            "hit_rate@2",
            n_items=100,
            estimators=["sampled", "bv"],
            ties=ties,
            summary="wide",
        )
        values[ties] = (out["hit_rate@2[sampled]"].item(), out["hit_rate@2[bv]"].item())
    assert values["expected"][0] == pytest.approx(1 / 3)
    assert values["optimistic"][0] == 1.0
    assert values["pessimistic"][0] == 0.0
    assert values["item_asc"][0] == 0.0
    assert values["item_desc"][0] == 0.0
    bv = prk.correction_table("hit_rate@2", n_items=100, n_negatives=4, estimators="bv")["bv"]
    assert values["expected"][1] == pytest.approx(bv.slice(1, 3).mean())
    assert values["optimistic"][1] == pytest.approx(bv[1])
    assert values["item_asc"][1] == pytest.approx(bv[2])


def test_several_positives_each_ranked_against_the_negatives() -> None:
    # positives at scores 0.9 and 0.5, negatives 0.8, 0.4, 0.1 (m = 3): ranks among
    # the negatives only: 1 and 2 (the other positive left out) -> mrr (1 + 1/2)/2.
    df = TWO_POSITIVES
    out = prk.evaluate_sampled(df, "mrr", n_items=10, estimators=["sampled", "rank"], per_user=True)
    assert out["mrr[sampled]"].item() == pytest.approx(0.75)
    # rank: r_hat = 1 and 1 + 1 * 9 / 3 = 4 -> (1 + 1/4) / 2
    assert out["mrr[rank]"].item() == pytest.approx(0.625)
    assert out["n_positives"].item() == 2


def test_by_rank_column_lazy_and_compare() -> None:
    df = _one_positive_frame(1)
    two = pl.concat(
        [
            df.with_columns(system=pl.lit("a")),
            df.with_columns(system=pl.lit("b"), score=-pl.col("score")),
        ]
    )
    per_user = prk.evaluate_sampled(two, ["ndcg@3"], n_items=60, by="system", per_user=True)
    assert per_user.columns == [
        "system",
        "user",
        "ndcg@3[sampled]",
        "ndcg@3[rank]",
        "ndcg@3[bv]",
        "n_positives",
    ]
    result = prk.compare_per_user(per_user.drop("n_positives"), baseline="a", test="t")
    assert result.height == 3
    summary = prk.evaluate_sampled(two, ["ndcg@3"], n_items=60, by="system")
    assert summary.columns == ["system", "metric", "estimator", "value", "n_users", "n_skipped"]
    lazy = prk.evaluate_sampled(two.lazy(), ["ndcg@3"], n_items=60, by="system")
    assert isinstance(lazy, pl.LazyFrame)
    assert_frame_equal(lazy.collect(), summary)
    ranked = df.with_columns(rank=(-pl.col("score")).rank("ordinal").over("user")).drop("score")
    by_rank = prk.evaluate_sampled(ranked, "mrr", n_items=60, rank="rank", ties="optimistic")
    ref = prk.evaluate(ranked, ["mrr"], rank="rank")
    assert by_rank.filter(pl.col("estimator") == "sampled")["value"].item() == pytest.approx(
        ref["mrr"].item()
    )


def test_users_without_positive_are_counted() -> None:
    df = pl.DataFrame(
        {
            "user": [1, 1, 2, 2],
            "item": [1, 2, 1, 2],
            "score": [1.0, 0.0, 1.0, 0.0],
            "relevance": [1, 0, 0, 0],
        }
    )
    out = prk.evaluate_sampled(df, "mrr", n_items=10, estimators="sampled")
    assert out.select("value", "n_users", "n_skipped").row(0) == (1.0, 1, 1)


@pytest.mark.parametrize(
    ("kwargs", "error", "pattern"),
    [
        ({"metrics": "f1@10"}, ValueError, "support"),
        ({"metrics": "ndcg(idcg=k)@10"}, ValueError, "default idcg"),
        ({"metrics": "auc@5"}, ValueError, "auc over all candidates"),
        ({"metrics": "precision"}, ValueError, "precision with a cutoff"),
        ({"metrics": "nope@3"}, ValueError, "nope"),
        (
            {"gamma": 1.5},
            ValueError,
            r"'gamma' of evaluate_sampled must be a number in \[0, 1\], got 1\.5",
        ),
        (
            {"gamma": "x"},
            TypeError,
            r"'gamma' of evaluate_sampled must be a number in \[0, 1\], got str 'x'",
        ),
        (
            {"estimators": ["bv", "magic"]},
            ValueError,
            r"'estimators' of evaluate_sampled must be one of "
            r"\['bv', 'mb', 'rank', 'sampled'\] or a list of estimator names, "
            r"got an entry 'magic'",
        ),
        (
            {"sampling": "poisson"},
            ValueError,
            r"'sampling' of evaluate_sampled must be one of "
            r"\['with_replacement', 'without_replacement'\], got 'poisson'",
        ),
        (
            {"ties": "random"},
            ValueError,
            r"'ties' of evaluate_sampled must be one of \[.*\], got 'random'",
        ),
        ({"n_items": 3}, ValueError, "allows at most 2"),
        (
            {"n_items": 3.5},
            TypeError,
            r"'n_items' of evaluate_sampled must be an integer >= 2, got float 3\.5",
        ),
        ({"score": "nope"}, ValueError, "no column 'nope'"),
        ({"prior": [1.0, 2.0]}, ValueError, "one weight per full-catalog rank"),
    ],
)
def test_evaluate_sampled_errors(
    kwargs: dict[str, Any], error: type[Exception], pattern: str
) -> None:
    df = pl.DataFrame(
        {
            "user": [1] * 4,
            "item": [1, 2, 3, 4],
            "score": [1.0, 0.5, 0.2, 0.1],
            "relevance": [1, 0, 0, 0],
        }
    )
    args: dict[str, Any] = {"metrics": "mrr", "n_items": 100, **kwargs}
    with pytest.raises(error, match=pattern):
        prk.evaluate_sampled(df, **args)


def test_evaluate_sampled_data_errors() -> None:
    no_neg = ONE_ROW
    with pytest.raises(ValueError, match="no negative candidate"):
        prk.evaluate_sampled(no_neg, "mrr", n_items=10)
    null_score = pl.DataFrame(
        {"user": [1, 1], "item": [1, 2], "score": [1.0, None], "relevance": [1, 0]}
    )
    with pytest.raises(ValueError, match="1 null"):
        prk.evaluate_sampled(null_score, "mrr", n_items=10)
    dup = pl.DataFrame(
        {"user": [1, 1, 1], "item": [1, 2, 2], "score": [1.0, 0.5, 0.5], "relevance": [1, 0, 0]}
    )
    with pytest.raises(
        ValueError, match=r"1 duplicated \(user, item\) key\(s\), e.g. user 1, item 2"
    ):
        prk.evaluate_sampled(dup, "mrr", n_items=10)
    lenient = prk.evaluate_sampled(dup, "mrr", n_items=10, validate=False, estimators="sampled")
    assert lenient["value"].item() == 1.0
    with pytest.raises(ValueError, match="n_negatives must be between 1 and n_items - 1 = 3"):
        prk.correction_table("mrr", n_items=4, n_negatives=4)


# ------------------------------------------------------------ sample_negatives


def _reference_negatives(
    user: int, seed: int, catalog: list[int], excluded: set[int], m: int
) -> list[int]:
    """The documented stream in plain Python: first m distinct eligible draws."""
    items = sorted(set(catalog))
    n = len(items)
    key = mix64_int((user & MASK) ^ mix64_int(seed))
    pool = n - len(excluded & set(items))
    if pool <= 2 * m:  # the small-pool rule: smallest keys
        keyed = sorted(
            (mix64_int(key + (i + 1) * GOLDEN), i) for i in range(n) if items[i] not in excluded
        )
        return [items[i] for _, i in keyed[:m]]
    out: list[int] = []
    j = 0
    while len(out) < m:
        it = items[mix64_int(key + (j + 1) * GOLDEN) % n]
        if it not in excluded and it not in out:
            out.append(it)
        j += 1
    return out


def test_sample_negatives_matches_the_documented_stream() -> None:
    # Pins the draws independently of Polars: the same negatives on every version.
    catalog = list(range(100, 160))
    truth = pl.DataFrame({"user": [3, 3, -8, 2**40], "item": [101, 150, 120, 100]})
    history = pl.DataFrame({"user": [3, -8, -8], "item": [102, 121, 122]})
    seed = 2024
    out = prk.sample_negatives(
        truth, n_negatives=7, catalog=catalog[::-1], seed=seed, exclude=history
    )
    for u, ex in ((3, {101, 150, 102}), (-8, {120, 121, 122}), (2**40, {100})):
        got = out.filter((pl.col("user") == u) & (pl.col("relevance") == 0))["item"].to_list()
        assert got == _reference_negatives(u, seed, catalog, ex, 7)
    # small pool: 10 items, user excludes 4 -> pool 6 <= 2 * 3
    small_truth = pl.DataFrame({"user": [5] * 4, "item": [0, 1, 2, 3]})
    small = prk.sample_negatives(small_truth, n_negatives=3, catalog=range(10), seed=1)
    assert small.filter(pl.col("relevance") == 0)["item"].to_list() == _reference_negatives(
        5, 1, list(range(10)), {0, 1, 2, 3}, 3
    )


def test_sample_negatives_determinism_and_invariance() -> None:
    rng = np.random.default_rng(0)
    truth = pl.DataFrame(
        {"user": rng.integers(0, 300, 600), "item": rng.integers(0, 500, 600)}
    ).unique(maintain_order=True)
    kw: dict[str, Any] = {"n_negatives": 25, "catalog": np.arange(500), "seed": 5}
    a = prk.sample_negatives(truth, **kw)
    assert_frame_equal(a, prk.sample_negatives(truth, **kw))
    assert_frame_equal(
        a, prk.sample_negatives(truth.sample(fraction=1.0, shuffle=True, seed=3), **kw)
    )
    lazy = prk.sample_negatives(truth.lazy(), **kw)
    assert isinstance(lazy, pl.LazyFrame)
    assert_frame_equal(a, lazy.collect())
    # the other users do not matter
    some = truth.filter(pl.col("user") < 100)
    assert_frame_equal(a.filter(pl.col("user") < 100), prk.sample_negatives(some, **kw))
    other = prk.sample_negatives(truth, n_negatives=25, catalog=np.arange(500), seed=6)
    assert not a.equals(other)
    # structure: exactly m negatives per user, none a positive, no duplicates
    neg = a.filter(pl.col("relevance") == 0)
    assert neg.group_by("user").len()["len"].unique().to_list() == [25]
    assert neg.join(truth, on=["user", "item"], how="semi").height == 0
    assert a.select(pl.struct("user", "item").is_duplicated().any()).item() is False
    assert a.filter(pl.col("relevance") == 1).height == truth.height


def test_sample_negatives_is_uniform() -> None:
    # 4,000 users, each with item 0 as positive and items 1..4 excluded: the 45
    # eligible items of 50 should each be drawn 4,000 * 5 / 45 times (chi-square test).
    users = 4000
    truth = pl.DataFrame({"user": np.arange(users), "item": np.zeros(users, dtype=np.int64)})
    history = pl.DataFrame(
        {"user": np.repeat(np.arange(users), 4), "item": np.tile(np.arange(1, 5), users)}
    )
    out = prk.sample_negatives(truth, n_negatives=5, catalog=np.arange(50), seed=9, exclude=history)
    counts = out.filter(pl.col("relevance") == 0).group_by("item").len().sort("item")
    assert counts["item"].to_list() == list(range(5, 50))
    stat, p = scipy_stats.chisquare(counts["len"].to_numpy())
    assert p > 1e-3, (stat, p)


def test_sample_negatives_string_ids_and_relevance() -> None:
    truth = pl.DataFrame({"user": ["u", "v"], "item": ["a", "b"], "relevance": [2.0, 1.0]})
    out = prk.sample_negatives(truth, n_negatives=2, catalog=list("abcdefgh"), seed=0)
    assert out.schema == pl.Schema({"user": pl.String, "item": pl.String, "relevance": pl.Float64})
    assert out.filter(pl.col("relevance") > 0)["relevance"].to_list() == [2.0, 1.0]
    assert out.height == 6


def test_sample_negatives_insufficient() -> None:
    truth = pl.DataFrame({"user": [1, 2], "item": [0, 0]})
    history = pl.DataFrame({"user": [1] * 6, "item": [1, 2, 3, 4, 5, 6]})
    with pytest.raises(
        ValueError, match=r"n_negatives=4 is more than .* 1 user\(s\) \(e.g. user 1: 3 of 10"
    ):
        prk.sample_negatives(truth, n_negatives=4, catalog=range(10), exclude=history)
    with pytest.warns(NegativeSamplingWarning, match="1 user"):
        out = prk.sample_negatives(
            truth, n_negatives=4, catalog=range(10), exclude=history, insufficient="all"
        )
    assert sorted(out.filter((pl.col("user") == 1) & (pl.col("relevance") == 0))["item"]) == [
        7,
        8,
        9,
    ]
    assert out.filter((pl.col("user") == 2) & (pl.col("relevance") == 0)).height == 4
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        prk.sample_negatives(truth, n_negatives=3, catalog=range(10), exclude=history)


@pytest.mark.parametrize(
    ("kwargs", "error", "pattern"),
    [
        (
            {"n_negatives": 0},
            ValueError,
            r"'n_negatives' of sample_negatives must be an integer >= 1, got 0",
        ),
        (
            {"n_negatives": 2.0},
            TypeError,
            r"'n_negatives' of sample_negatives must be an integer >= 1, got float 2\.0",
        ),
        ({"seed": "x"}, TypeError, r"'seed' of sample_negatives must be an integer, got str 'x'"),
        (
            {"insufficient": "some"},
            ValueError,
            r"'insufficient' of sample_negatives must be one of \['all', 'error'\], got 'some'",
        ),
        ({"catalog": ["a", "b", "c"]}, TypeError, "catalog items are String"),
        ({"catalog": [1, None, 3]}, ValueError, "catalog has 1 null"),
        ({"catalog": []}, ValueError, "catalog is empty"),
        (
            {"catalog": 7},
            TypeError,
            r"'catalog' of sample_negatives must be .* or a sequence of items, got int 7",
        ),
        ({"catalog": pl.DataFrame({"x": [1]})}, ValueError, "catalog has no column 'item'"),
        ({"exclude": pl.DataFrame({"user": [1]})}, ValueError, "exclude has no column 'item'"),
        ({"user": "uid"}, ValueError, "truth has no column 'uid'"),
    ],
)
def test_sample_negatives_errors(
    kwargs: dict[str, Any], error: type[Exception], pattern: str
) -> None:
    truth = pl.DataFrame({"user": [1, 2], "item": [1, 2]})
    args: dict[str, Any] = {"n_negatives": 1, "catalog": list(range(10)), **kwargs}
    with pytest.raises(error, match=pattern):
        prk.sample_negatives(truth, **args)


def test_sample_negatives_data_errors() -> None:
    with pytest.raises(ValueError, match="duplicated"):
        prk.sample_negatives(
            pl.DataFrame({"user": [1, 1], "item": [2, 2]}), n_negatives=1, catalog=range(5)
        )
    with pytest.raises(ValueError, match="truth column 'item' has 1 null"):
        prk.sample_negatives(
            pl.DataFrame({"user": [1, 1], "item": [2, None]}), n_negatives=1, catalog=range(5)
        )
