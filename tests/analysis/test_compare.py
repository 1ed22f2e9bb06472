"""prk.compare / compare_per_user: tests against scipy, statsmodels and ranx; hand cases.

The statistics kernels themselves are tested in ``tests/_utils/test_stats.py``; here one
test lowers their private ``POISSON_ABOVE`` to reach the Poisson bootstrap with few users.
"""

from __future__ import annotations

import itertools
import math
import sys

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal
from scipy import stats

import polars_rankeval as prk
import polars_rankeval._utils.stats as _stats
from polars_rankeval.analysis.compare_per_user import RESULT_COLUMNS
from polars_rankeval.api.datasets import load_systems

REQUIRED = (
    "metric",
    "system",
    "baseline",
    "mean",
    "baseline_mean",
    "diff",
    "ci_low",
    "ci_high",
    "effect_size",
    "p_value",
    "p_adjusted",
    "significant",
    "n_users",
)


def per_user_frame(values: dict[str, np.ndarray], metric: str = "m") -> pl.DataFrame:
    """A per-user frame: one row per (system, user) from arrays of equal length."""
    frames = [
        pl.DataFrame({"system": name, "user": np.arange(len(v)), metric: v})
        for name, v in values.items()
    ]
    return pl.concat(frames)


@pytest.fixture(scope="module")
def systems() -> pl.DataFrame:
    return load_systems()


@pytest.fixture(scope="module")
def systems_per_user(systems: pl.DataFrame) -> pl.DataFrame:
    return prk.evaluate(systems, ["ndcg@10", "recall@20"], by="system", per_user=True)


def arrays(per_user: pl.DataFrame, metric: str, system: str) -> np.ndarray:
    return per_user.filter(pl.col("system") == system).sort("user")[metric].to_numpy()


# ----------------------------------------------------------------- columns and hand cases
def test_columns_and_one_row_per_pair(systems: pl.DataFrame) -> None:
    out = prk.compare(systems, ["ndcg@10", "mrr"], baseline="bm25", test="t")
    assert out.columns == list(RESULT_COLUMNS)
    assert set(REQUIRED) <= set(out.columns)
    assert out.height == 2 * 3
    assert out["baseline"].unique().to_list() == ["bm25"]
    assert out.select("metric", "system").rows() == [
        (m, s) for m in ("ndcg@10", "mrr") for s in ("dense", "hybrid", "random")
    ]
    all_pairs = prk.compare(systems, ["ndcg@10"], test="t")
    assert all_pairs.height == math.comb(4, 2)
    assert all_pairs.select("system", "baseline").rows() == [
        ("dense", "bm25"),
        ("hybrid", "bm25"),
        ("random", "bm25"),
        ("hybrid", "dense"),
        ("random", "dense"),
        ("random", "hybrid"),
    ]


def test_hand_computed_small_case() -> None:
    # differences b - a: 0.3, 0.2, 0.3 (user 4 has no value for b: dropped)
    per_user = pl.DataFrame(
        {
            "system": ["a"] * 4 + ["b"] * 4,
            "user": [1, 2, 3, 4] * 2,
            "m": [0.2, 0.4, 0.1, 0.3, 0.5, 0.6, 0.4, None],
        }
    )
    t = prk.compare_per_user(per_user, baseline="a", test="t").row(0, named=True)
    mean_d = (0.3 + 0.2 + 0.3) / 3
    sd = math.sqrt(((0.3 - mean_d) ** 2 * 2 + (0.2 - mean_d) ** 2) / 2)
    assert t["mean"] == pytest.approx((0.5 + 0.6 + 0.4) / 3)
    assert t["baseline_mean"] == pytest.approx((0.2 + 0.4 + 0.1) / 3)
    assert t["diff"] == pytest.approx(mean_d)
    assert t["effect_size"] == pytest.approx(mean_d / sd)  # paired Cohen's d = 4.6188
    t_stat = mean_d / (sd / math.sqrt(3))
    assert t["p_value"] == pytest.approx(2 * stats.t.sf(t_stat, 2))
    half = stats.t.ppf(0.975, 2) * sd / math.sqrt(3)
    assert (t["ci_low"], t["ci_high"]) == pytest.approx((mean_d - half, mean_d + half))
    assert (t["n_users"], t["n_dropped"], t["ci_method"]) == (3, 1, "t")
    # randomization, exact: of the 2**3 sign vectors only all-plus and all-minus reach
    # |mean| = 0.8 / 3, so p = 2 / 8
    r = prk.compare_per_user(per_user, baseline="a").row(0, named=True)
    assert r["p_value"] == pytest.approx(2 / 8)
    assert (r["n_resamples"], r["resampling"]) == (8, "sign_flip_exact")
    # sign test: 3 positive of 3 -> p = 2 * (1/2)**3
    s = prk.compare_per_user(per_user, baseline="a", test="sign").row(0, named=True)
    assert s["p_value"] == pytest.approx(2 * 0.5**3)
    # wilcoxon: ranks of |d| = 2.5, 1, 2.5, all positive -> rank-biserial (6 - 0) / 6 = 1
    w = prk.compare_per_user(per_user, baseline="a", test="wilcoxon").row(0, named=True)
    assert w["effect_size"] == pytest.approx(1.0)
    assert w["effect_size_kind"] == "rank_biserial"


def test_rank_biserial_with_negative_and_zero_differences() -> None:
    # d = 2, -1, 0, 3, -3: zero dropped; |d| ranks: 2 -> 2, 1 -> 1, 3 -> 3.5, 3 -> 3.5
    # R+ = 2 + 3.5 = 5.5, R- = 1 + 3.5 = 4.5, r = (5.5 - 4.5) / 10 = 0.1
    base = np.array([1.0, 1.0, 1.0, 1.0, 4.0])
    frame = per_user_frame({"a": base, "b": base + np.array([2.0, -1.0, 0.0, 3.0, -3.0])})
    row = prk.compare_per_user(frame, baseline="a", test="wilcoxon").row(0, named=True)
    assert row["effect_size"] == pytest.approx(0.1)
    assert row["p_value"] == pytest.approx(stats.wilcoxon(frame["m"][5:], base).pvalue)


def test_identical_systems_give_p_one() -> None:
    x = np.array([0.1, 0.5, 0.2, 0.9, 0.0])
    frame = per_user_frame({"a": x, "b": x.copy()})
    for test in ("t", "wilcoxon", "sign", "randomization", "bootstrap"):
        row = prk.compare_per_user(frame, baseline="a", test=test, n_resamples=99).row(
            0, named=True
        )
        assert row["p_value"] == 1.0, test
        assert row["significant"] is False
        assert row["effect_size"] is None  # sd of the differences is 0


# ----------------------------------------------------------------- against scipy
def test_t_equals_scipy_ttest_rel(paired: dict[str, np.ndarray]) -> None:
    out = prk.compare_per_user(per_user_frame(paired), baseline="a", test="t", confidence=0.9)
    for row in out.iter_rows(named=True):
        x, y = paired[row["system"]], paired["a"]
        result = stats.ttest_rel(x, y)
        assert row["p_value"] == pytest.approx(result.pvalue, rel=1e-12)
        ci = result.confidence_interval(confidence_level=0.9)
        assert (row["ci_low"], row["ci_high"]) == pytest.approx((ci.low, ci.high), rel=1e-12)


def test_wilcoxon_and_sign_equal_scipy(paired: dict[str, np.ndarray]) -> None:
    frame = per_user_frame(paired)
    w = prk.compare_per_user(frame, baseline="a", test="wilcoxon")
    s = prk.compare_per_user(frame, baseline="a", test="sign")
    for row_w, row_s in zip(w.iter_rows(named=True), s.iter_rows(named=True), strict=True):
        x, y = paired[row_w["system"]], paired["a"]
        assert row_w["p_value"] == pytest.approx(stats.wilcoxon(x, y).pvalue, rel=1e-12)
        d = x - y
        expected = stats.binomtest(int((d > 0).sum()), int((d != 0).sum()), 0.5).pvalue
        assert row_s["p_value"] == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("n", [5, 9, 12])
def test_exact_randomization_equals_scipy_permutation_test(n: int) -> None:
    rng = np.random.default_rng(n)
    x = rng.integers(0, 4, n) / 4  # discrete: ties of |T*| and |T| happen
    y = rng.integers(0, 4, n) / 4
    out = prk.compare_per_user(per_user_frame({"x": x, "y": y}), baseline="y")
    row = out.row(0, named=True)
    assert row["resampling"] == "sign_flip_exact"
    expected = stats.permutation_test(
        (x, y),
        lambda a, b, axis: np.mean(a - b, axis=axis),
        permutation_type="samples",
        n_resamples=np.inf,
        vectorized=True,
    ).pvalue
    assert row["p_value"] == pytest.approx(expected, rel=1e-12)


def test_randomized_randomization_near_scipy() -> None:
    rng = np.random.default_rng(3)
    x = rng.random(40)
    y = x + rng.normal(0.08, 0.3, 40)
    out = prk.compare_per_user(per_user_frame({"x": x, "y": y}), baseline="x", n_resamples=20_000)
    row = out.row(0, named=True)
    assert row["resampling"] == "sign_flip"
    assert row["n_resamples"] == 20_000
    expected = stats.permutation_test(
        (y, x),
        lambda a, b, axis: np.mean(a - b, axis=axis),
        permutation_type="samples",
        n_resamples=20_000,
        vectorized=True,
        rng=np.random.default_rng(0),
    ).pvalue
    se = math.sqrt(expected * (1 - expected) / 20_000)
    assert abs(row["p_value"] - expected) < 5 * se * math.sqrt(2)


def test_bootstrap_interval_near_scipy(paired: dict[str, np.ndarray]) -> None:
    frame = per_user_frame(paired)
    for method, scipy_method in (("bca", "BCa"), ("percentile", "percentile")):
        out = prk.compare_per_user(
            frame, baseline="a", test="bootstrap", ci=method, n_resamples=20_000
        )
        for row in out.iter_rows(named=True):
            d = paired[row["system"]] - paired["a"]
            ref = stats.bootstrap(
                (d,), np.mean, n_resamples=20_000, method=scipy_method, rng=np.random.default_rng(1)
            ).confidence_interval
            tol = 0.1 * d.std(ddof=1) / math.sqrt(d.size)  # a tenth of the standard error
            assert row["ci_low"] == pytest.approx(ref.low, abs=tol)
            assert row["ci_high"] == pytest.approx(ref.high, abs=tol)
            assert row["resampling"] == "multinomial"


def test_poisson_scheme_above_its_threshold_keeps_the_standard_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Above POISSON_ABOVE users the bootstrap switches scheme; the standard error holds.
    monkeypatch.setattr(_stats, "POISSON_ABOVE", 100)
    rng = np.random.default_rng(5)
    x = rng.random(400)
    y = x + rng.normal(0.02, 0.1, 400)
    row = prk.compare_per_user(
        per_user_frame({"x": x, "y": y}), baseline="x", test="bootstrap", ci="percentile"
    ).row(0, named=True)
    assert row["resampling"] == "poisson"
    se = (y - x).std(ddof=1) / math.sqrt(400)
    assert row["ci_high"] - row["ci_low"] == pytest.approx(2 * 1.96 * se, rel=0.1)


# ----------------------------------------------------------------- tukey
def test_tukey_near_exact_enumeration() -> None:
    values = np.array([[0.1, 0.5, 0.3], [0.4, 0.9, 0.2], [0.0, 0.6, 0.7], [0.2, 0.3, 0.3]])
    n, m = values.shape
    perms = list(itertools.permutations(range(m)))
    means = values.mean(axis=0)
    ranges = []
    for choice in itertools.product(range(len(perms)), repeat=n):
        permuted = np.array([values[u, list(perms[c])] for u, c in enumerate(choice)])
        pm = permuted.mean(axis=0)
        ranges.append(pm.max() - pm.min())
    ranges_arr = np.array(ranges)
    frame = per_user_frame({f"s{j}": values[:, j] for j in range(m)})
    out = prk.compare_per_user(frame, test="tukey", n_resamples=20_000)
    assert out["correction"].unique().to_list() == ["none"]
    assert (out["p_adjusted"] == out["p_value"]).all()
    for row in out.iter_rows(named=True):
        i, j = int(row["baseline"][1]), int(row["system"][1])
        exact = (ranges_arr >= abs(means[i] - means[j]) - 1e-12).mean()
        se = math.sqrt(exact * (1 - exact) / 20_000)
        assert abs(row["p_value"] - exact) < 5 * se + 1e-4


def test_tukey_is_more_conservative_than_pairwise(systems_per_user: pl.DataFrame) -> None:
    kw = {"n_resamples": 2000, "metrics": "ndcg@10"}
    per = systems_per_user.drop("recall@20")
    tukey = prk.compare_per_user(per, test="tukey", **kw)
    pairwise = prk.compare_per_user(per, test="randomization", correction="none", **kw)
    assert (tukey["p_value"] >= pairwise["p_value"] - 1e-12).all()


def test_family_all_versus_metric(systems_per_user: pl.DataFrame) -> None:
    from statsmodels.stats.multitest import multipletests

    kw = {"baseline": "bm25", "test": "t", "correction": "bonferroni"}
    every = prk.compare_per_user(systems_per_user, family="all", **kw)
    per_metric = prk.compare_per_user(systems_per_user, family="metric", **kw)
    p = every["p_value"].to_numpy()
    np.testing.assert_allclose(every["p_adjusted"], multipletests(p, method="bonferroni")[1])
    for metric in ("ndcg@10", "recall@20"):
        part = per_metric.filter(pl.col("metric") == metric)
        expected = multipletests(part["p_value"].to_numpy(), method="bonferroni")[1]
        np.testing.assert_allclose(part["p_adjusted"], expected)
    assert every["family"][0] == "all"
    assert per_metric["family"][0] == "metric"


# ----------------------------------------------------------------- ranx
def test_ranx_tests_on_the_same_per_user_values(systems_per_user: pl.DataFrame) -> None:
    from ranx.statistical_tests import fisher_randomization_test, paired_student_t_test

    per = systems_per_user.select("system", "user", "ndcg@10")
    t = prk.compare_per_user(per, test="t", correction="none")
    r = prk.compare_per_user(per, test="randomization", correction="none", n_resamples=10_000)
    for row_t, row_r in zip(t.iter_rows(named=True), r.iter_rows(named=True), strict=True):
        x = arrays(per, "ndcg@10", row_t["baseline"])
        y = arrays(per, "ndcg@10", row_t["system"])
        assert row_t["p_value"] == pytest.approx(paired_student_t_test(x, y)[0], rel=1e-10)
        theirs = fisher_randomization_test(x, y, n_permutations=10_000, random_seed=1)[0]
        se = math.sqrt(max(theirs, 1e-4) * (1 - theirs) / 10_000)
        assert abs(row_r["p_value"] - theirs) < 5 * se * math.sqrt(2) + 2e-4


# ----------------------------------------------------------------- pairing and options
def test_pairing_drops_and_counts_users(systems: pl.DataFrame) -> None:
    # Remove every relevant row of user 1 for system "dense" only: its value is undefined
    # (not a judged user for that system) -> dropped with empty="skip".
    data = systems.filter(~((pl.col("system") == "dense") & (pl.col("user") == 1)))
    out = prk.compare(data, ["ndcg@10"], baseline="bm25", test="t")
    assert out["n_users"].unique().to_list() == [499]
    assert out["n_dropped"].unique().to_list() == [1]
    per = prk.evaluate(data, ["ndcg@10"], by="system", per_user=True)
    bm25 = per.filter(pl.col("system") == "bm25", pl.col("user") != 1)["ndcg@10"]
    assert out.filter(pl.col("system") == "hybrid")["baseline_mean"][0] == pytest.approx(
        bm25.mean()
    )


def test_empty_zero_keeps_users() -> None:
    long = pl.DataFrame(
        {
            "system": ["a", "a", "b", "b", "a", "b"],
            "user": [1, 1, 1, 1, 2, 2],
            "item": [1, 2, 1, 2, 3, 3],
            "score": [0.9, 0.1, 0.1, 0.9, 0.5, 0.5],
            "relevance": [1, 0, 1, 0, 0, 0],  # user 2 has no relevant item: mrr undefined
        }
    )
    skip = prk.compare(long, ["mrr"], baseline="a", test="t")
    assert (skip["n_users"][0], skip["n_dropped"][0]) == (1, 1)
    zero = prk.compare(long, ["mrr"], baseline="a", test="t", empty="zero")
    assert (zero["n_users"][0], zero["n_dropped"][0]) == (2, 0)
    assert zero["diff"][0] == pytest.approx((0.5 - 1.0 + 0.0) / 2)
    assert zero["conventions"][0] == "ties=expected, empty=zero, users=truth"


def test_evaluate_options_pass_through(systems: pl.DataFrame) -> None:
    out = prk.compare(systems, ["ndcg@10"], baseline="bm25", test="t", ties="item_desc")
    per = prk.evaluate(systems, ["ndcg@10"], by="system", per_user=True, ties="item_desc")
    x = arrays(per, "ndcg@10", "dense")
    assert out["mean"][0] == pytest.approx(x.mean())
    assert out["conventions"][0].startswith("ties=item_desc")


def test_namespaces_and_systems_order(systems: pl.DataFrame) -> None:
    kw = {"baseline": "bm25", "test": "t"}
    eager = systems.rankeval.compare(["ndcg@10"], **kw)
    lazy = systems.lazy().rankeval.compare(["ndcg@10"], **kw)
    assert isinstance(lazy, pl.DataFrame)
    assert_frame_equal(eager, lazy)
    subset = prk.compare(systems, ["ndcg@10"], systems=["hybrid", "bm25"], **kw)
    assert subset["system"].to_list() == ["hybrid"]


# ----------------------------------------------------------------- determinism
def test_same_seed_same_result_regardless_of_order(systems: pl.DataFrame) -> None:
    kw = {"n_resamples": 500, "test": "randomization", "correction": "none"}
    one = prk.compare(systems, ["ndcg@10", "recall@20"], seed=3, **kw)
    again = prk.compare(systems, ["ndcg@10", "recall@20"], seed=3, **kw)
    assert_frame_equal(one, again)
    swapped = prk.compare(
        systems,
        ["recall@20", "ndcg@10"],
        systems=["random", "hybrid", "dense", "bm25"],
        seed=3,
        **kw,
    )
    key = ["metric", "pair"]

    def pairs(frame: pl.DataFrame) -> pl.DataFrame:
        ordered = pl.concat_list(
            pl.min_horizontal("system", "baseline"), pl.max_horizontal("system", "baseline")
        )
        return frame.select(
            "metric", ordered.list.join("-").alias("pair"), pl.col("p_value"), pl.col("diff").abs()
        ).sort(key)

    assert_frame_equal(pairs(one), pairs(swapped))
    other = prk.compare(systems, ["ndcg@10", "recall@20"], seed=4, **kw)
    assert not one["p_value"].equals(other["p_value"]) or (one["p_value"] == 1 / 501).all()
    # A pair gets the same resamples with or without the other systems' pairs.
    base = prk.compare(
        systems, ["ndcg@10"], baseline="dense", seed=3, test="bootstrap", n_resamples=300
    )
    every = prk.compare(systems, ["ndcg@10"], seed=3, test="bootstrap", n_resamples=300)
    b = base.filter(pl.col("system") == "hybrid").row(0, named=True)
    e = every.filter(pl.col("system") == "hybrid", pl.col("baseline") == "dense").row(0, named=True)
    assert b["p_value"] == e["p_value"]
    assert (b["ci_low"], b["ci_high"]) == pytest.approx((e["ci_low"], e["ci_high"]), rel=1e-12)


def test_in_memory_equals_bucketed(systems: pl.DataFrame) -> None:
    kw = {"baseline": "bm25", "n_resamples": 300, "seed": 9}
    memory = prk.compare(systems, ["ndcg@10"], **kw)
    buckets = prk.compare(systems, ["ndcg@10"], engine=prk.Buckets(n_buckets=3), **kw)
    assert_frame_equal(memory, buckets, check_exact=False, rel_tol=1e-12)
    assert memory["p_value"].to_list() == buckets["p_value"].to_list()


# ----------------------------------------------------------------- progress and errors
def test_progress_on_stderr(
    paired: dict[str, np.ndarray], capsys: pytest.CaptureFixture[str]
) -> None:
    prk.compare_per_user(per_user_frame(paired), baseline="a", n_resamples=200, progress=True)
    err = capsys.readouterr().err
    assert "compare" in err
    assert "200" in err or "100%" in err


def test_progress_without_tqdm(
    paired: dict[str, np.ndarray],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)
    prk.compare_per_user(
        per_user_frame(paired), baseline="a", test="bootstrap", n_resamples=300, progress=True
    )
    err = capsys.readouterr().err
    assert "compare m: 300/300 resamples" in err
    assert err.endswith("\n")


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"baseline": "nope"}, ValueError, r"baseline 'nope' not found among the systems"),
        ({"systems": ["bm25"]}, ValueError, r"at least 2 systems in column 'system', got 1"),
        ({"systems": ["bm25", "x"]}, ValueError, r"system\(s\) 'x' not found in column 'system'"),
        ({"alpha": 0.0}, ValueError, r"'alpha' of compare\w* must be .*in \(0, 1\), got 0.0"),
        ({"alpha": 1.5}, ValueError, r"'alpha' of compare\w* must be .*in \(0, 1\), got 1.5"),
        (
            {"confidence": 1.0},
            ValueError,
            r"'confidence' of compare\w* must be .*in \(0, 1\), got 1.0",
        ),
        ({"confidence": "x"}, TypeError, r"'confidence' of compare\w* must be .*in \(0, 1\)"),
        ({"n_resamples": 0}, ValueError, r"'n_resamples' of compare\w* must be .*>= 1, got 0"),
        (
            {"n_resamples": 2.5},
            TypeError,
            r"'n_resamples' of compare\w* must be .*>= 1, got float 2.5",
        ),
        ({"seed": -1}, ValueError, r"'seed' of compare\w* must be .*>= 0, got -1"),
        ({"test": "z"}, ValueError, r"'test' of compare\w* must be one of"),
        ({"correction": "fdr"}, ValueError, r"'correction' of compare\w* must be one of"),
        ({"family": "pair"}, ValueError, r"'family' of compare\w* must be one of"),
        ({"ci": "normal"}, ValueError, r"'ci' of compare\w* must be one of"),
        ({"test": "tukey", "correction": "holm"}, ValueError, r"test='tukey' controls"),
        ({"per_user": True}, TypeError, r"compare\(\) does not take per_user="),
        ({"by": ["system"]}, TypeError, r"'by' of compare must be a column name \(str\), got list"),
    ],
)
def test_bad_input(systems: pl.DataFrame, kwargs: dict, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        prk.compare(systems, ["ndcg@10"], **kwargs)


@pytest.mark.parametrize("metric", ["global_auc", "coverage@10", "gini@10"])
def test_global_metrics_are_refused(systems: pl.DataFrame, metric: str) -> None:
    with pytest.raises(ValueError, match=rf"metric\(s\) {metric} have one value per system"):
        prk.compare(systems, ["ndcg@10", metric], baseline="bm25")


def test_item_metrics_are_refused(systems: pl.DataFrame) -> None:
    with pytest.raises(ValueError, match=r"item_hits@10 have one value per item, not per user"):
        prk.compare(systems, ["item_hits@10"], baseline="bm25")


def test_one_system_in_data(systems: pl.DataFrame) -> None:
    only = systems.filter(pl.col("system") == "bm25")
    with pytest.raises(
        ValueError, match=r"at least 2 systems in column 'system', got 1: \['bm25'\]"
    ):
        prk.compare(only, ["ndcg@10"])


def test_per_user_frame_errors() -> None:
    good = per_user_frame({"a": np.array([0.1, 0.2]), "b": np.array([0.3, 0.4])})
    with pytest.raises(ValueError, match=r"metric column 'x' not found in the per-user frame"):
        prk.compare_per_user(good, "x")
    with pytest.raises(ValueError, match=r"by column 'run' not found"):
        prk.compare_per_user(good, by="run")
    with pytest.raises(
        ValueError, match=r"has 1 NaN or infinite value\(s\) \(e.g. system='a', user=0\)"
    ):
        prk.compare_per_user(
            good.with_columns(
                pl.when(pl.col("m") == 0.1).then(float("nan")).otherwise("m").alias("m")
            )
        )
    with pytest.raises(ValueError, match=r"1 duplicate \(system, user\) row"):
        prk.compare_per_user(pl.concat([good, good.head(1)]))
    with pytest.raises(TypeError, match=r"metric column 'm' must be numeric, got String"):
        prk.compare_per_user(good.with_columns(pl.col("m").cast(pl.String)))
    no_pairs = pl.DataFrame({"system": ["a", "b"], "user": [1, 2], "m": [0.1, 0.2]})
    with pytest.raises(ValueError, match=r"no user has a value of 'm' for every compared system"):
        prk.compare_per_user(no_pairs)


def test_missing_scipy_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "scipy.stats", None)
    frame = per_user_frame({"a": np.array([0.1, 0.2]), "b": np.array([0.3, 0.5])})
    with pytest.raises(ImportError, match=r'pip install "polars-rankeval\[compare\]"'):
        prk.compare_per_user(frame, test="t")


def test_zero_differences_are_not_resampled_but_counted() -> None:
    # 16 users, 5 with equal values: 2**11 <= 10,000, so the test is exact, and equals
    # scipy's exact test over all 2**16 sign vectors (zeros do not change T*).
    rng = np.random.default_rng(21)
    x = rng.integers(0, 5, 16) / 4
    y = x.copy()
    y[5:] = rng.integers(0, 5, 11) / 4
    y[5:][y[5:] == x[5:]] += 0.25
    row = prk.compare_per_user(per_user_frame({"x": x, "y": y}), baseline="x").row(0, named=True)
    assert (row["resampling"], row["n_resamples"], row["n_users"]) == ("sign_flip_exact", 2**11, 16)
    expected = stats.permutation_test(
        (y, x),
        lambda a, b, axis: np.mean(a - b, axis=axis),
        permutation_type="samples",
        n_resamples=np.inf,
        vectorized=True,
    ).pvalue
    assert row["p_value"] == pytest.approx(expected, rel=1e-12)
    assert row["diff"] == pytest.approx((y - x).mean())


# ----------------------------------------------------------------- baseline order (#23)
def test_systems_in_order_of_appearance_first_is_the_baseline() -> None:
    # "zeta" comes first: it is the baseline of every pair it is in, not "alpha".
    values = {
        "zeta": np.array([0.2, 0.4, 0.1, 0.3]),
        "alpha": np.array([0.5, 0.6, 0.4, 0.7]),
        "mid": np.array([0.3, 0.45, 0.25, 0.4]),
    }
    frame = per_user_frame(values)
    out = prk.compare_per_user(frame, test="t")
    assert out.select("system", "baseline").rows() == [
        ("alpha", "zeta"),
        ("mid", "zeta"),
        ("mid", "alpha"),
    ]
    two = prk.compare_per_user(frame.filter(pl.col("system") != "mid"), test="t")
    assert two.select("system", "baseline").rows() == [("alpha", "zeta")]
    # compare(): the order of the data's rows, whatever evaluate's output order.
    data = load_systems()
    first = data.filter(pl.col("system") == "random")
    reordered = pl.concat([first, data.filter(pl.col("system") != "random")])
    result = prk.compare(reordered, ["ndcg@10"], test="t")
    assert result["baseline"].to_list()[:3] == ["random"] * 3
    assert result["system"].to_list()[:3] == ["bm25", "dense", "hybrid"]
    lazy = prk.compare(reordered.lazy(), ["ndcg@10"], test="t")
    assert_frame_equal(result, lazy)


def test_progress_by_default_only_on_a_terminal(
    paired: dict[str, np.ndarray],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    frame = per_user_frame(paired)
    prk.compare_per_user(frame, baseline="a", n_resamples=200)
    assert capsys.readouterr().err == ""  # not a terminal
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    prk.compare_per_user(frame, baseline="a", n_resamples=200)
    assert "compare" in capsys.readouterr().err
    prk.compare_per_user(frame, baseline="a", n_resamples=200, progress=False)
    assert capsys.readouterr().err == ""


def canonical_pairs(frame: pl.DataFrame) -> pl.DataFrame:
    """(metric, unordered pair) -> p_value, ci of |diff|: comparable across system orders."""
    low = pl.min_horizontal("system", "baseline")
    return frame.select(
        "metric",
        pl.concat_list(low, pl.max_horizontal("system", "baseline")).list.join("-").alias("pair"),
        "p_value",
        pl.col("diff").abs(),
    ).sort("metric", "pair")


@pytest.mark.parametrize("test", ["tukey", "randomization", "bootstrap"])
def test_p_values_do_not_depend_on_the_order_of_the_systems(
    systems: pl.DataFrame, test: str
) -> None:
    # Issue 24 item 7: Tukey's p-values moved with systems= (mrr bm25-dense 0.0230 ->
    # 0.0200): its permutations were drawn over the columns in the caller's order.
    kw = {"test": test, "n_resamples": 500, "seed": 1, "correction": "none"}
    metrics = ["mrr", "ndcg@10"]
    default = canonical_pairs(prk.compare(systems, metrics, **kw))
    for order in itertools.permutations(["random", "hybrid", "bm25", "dense"]):
        if order[0] not in ("random", "dense"):  # 12 of the 24 orders keep the test short
            continue
        got = canonical_pairs(prk.compare(systems, metrics, systems=list(order), **kw))
        assert got["p_value"].to_list() == default["p_value"].to_list(), order


# ----------------------------------------------------------------- few users
# (differences b - a, test) -> (p_value, words of the note); None: no p, the note says why.
# The sign-flip tests (randomization, sign, wilcoxon) reach at least 2 / 2**n; Tukey with
# 2 systems is the same permutation test (p estimated, at least 2 / 2**n); the bootstrap
# resolves no p below 1 / C(2n - 1, n) (n users give that many distinct resamples) and
# is undefined, as t is, when the differences do not vary.
FEW_USERS = {
    1: ([0.1], [0.6]),  # the case: d = 0.5
    2: ([0.1, 0.2], [0.6, 0.5]),  # d = 0.5, 0.3
    3: ([0.1, 0.2, 0.3], [0.6, 0.5, 0.7]),  # d = 0.5, 0.3, 0.4
}
FEW_EXPECTED: dict[tuple[int, str], float | None] = {
    (1, "t"): None,
    (1, "bootstrap"): None,
    (1, "randomization"): 1.0,
    (1, "sign"): 1.0,
    (1, "wilcoxon"): 1.0,
    (1, "tukey"): 1.0,
    (2, "bootstrap"): 1 / math.comb(3, 2),  # no resample reaches |T|: raised to 1 / 3
    (2, "randomization"): 2 / 2**2,
    (2, "sign"): 2 / 2**2,
    (2, "wilcoxon"): 2 / 2**2,
    (3, "bootstrap"): 1 / math.comb(5, 3),
    (3, "randomization"): 2 / 2**3,
    (3, "sign"): 2 / 2**3,
    (3, "wilcoxon"): 2 / 2**3,
}


@pytest.mark.parametrize("n", [1, 2, 3])
@pytest.mark.parametrize("test", ["t", "bootstrap", "randomization", "sign", "wilcoxon", "tukey"])
def test_what_each_test_concludes_with_few_users(n: int, test: str) -> None:
    a, b = FEW_USERS[n]
    frame = per_user_frame({"a": np.array(a), "b": np.array(b)})
    row = prk.compare_per_user(frame, baseline="a", test=test, n_resamples=999).row(0, named=True)
    if test == "t" and n > 1:
        d = np.array(b) - np.array(a)
        assert row["p_value"] == pytest.approx(stats.ttest_1samp(d, 0.0).pvalue)
        assert row["note"] is None  # continuous: any p can be reached
        return
    if test == "tukey" and n > 1:
        assert row["p_value"] >= 2 / 2**n  # an estimate, never below the exact minimum
        assert "cannot be significant" in row["note"]
        return
    expected = FEW_EXPECTED[(n, test)]
    if expected is None:
        assert row["p_value"] is None
        assert row["significant"] is None
        assert "differences vary" in row["note"]
    else:
        assert row["p_value"] == pytest.approx(expected)
        assert row["significant"] is False
        assert "cannot be significant" in row["note"], row["note"]
        assert f"{n} user" in row["note"]


def test_bootstrap_and_t_need_differences_that_vary() -> None:
    # 10 users, every difference 0.1: randomization and sign conclude (p = 2 / 2**10);
    # the bootstrap distribution is one point (it gave p = 1 / (B + 1)) and t has sd 0.
    x = np.linspace(0.0, 0.5, 10)
    frame = per_user_frame({"a": x, "b": x + 0.1})
    for test in ("randomization", "sign"):
        row = prk.compare_per_user(frame, baseline="a", test=test).row(0, named=True)
        assert row["p_value"] == pytest.approx(2 / 2**10), test
        assert row["note"] is None
    for test in ("bootstrap", "t"):
        row = prk.compare_per_user(frame, baseline="a", test=test, n_resamples=99)
        assert row["p_value"][0] is None, test
        assert "differences vary" in row["note"][0]
        assert row["effect_size"][0] is None  # d over an sd of rounding errors: undefined


def test_randomized_tests_never_go_below_the_exact_minimum() -> None:
    # 4 users, n_resamples=3 < 2**4: random sign flips; p = (1 + 0) / 4 would be below
    # the exact test's smallest p, 2 / 2**4 = 1 / 8 -- it is raised to it.
    frame = per_user_frame({"a": np.zeros(4), "b": np.array([0.5, 0.3, 0.4, 0.6])})
    row = prk.compare_per_user(frame, baseline="a", n_resamples=3).row(0, named=True)
    assert row["resampling"] == "sign_flip"
    assert row["p_value"] >= 2 / 2**4
    tukey = prk.compare_per_user(frame, baseline="a", test="tukey", n_resamples=3)
    assert tukey["p_value"][0] >= 2 / 2**4


def test_a_frame_of_another_library_is_named_with_it() -> None:
    # The message names the library ("got pandas.DataFrame"), not just "DataFrame".
    pandas = pytest.importorskip("pandas")
    with pytest.raises(TypeError, match=r"got pandas\.DataFrame$"):
        prk.report(pandas.DataFrame({"a": [1]}))
    with pytest.raises(
        TypeError, match=r"^argument 'per_user' of compare_per_user must be .*, got list \[1, 2\]$"
    ):
        prk.compare_per_user([1, 2])
