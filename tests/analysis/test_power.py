"""prk.sample_size, prk.topic_set_size, prk.achieved_power: power and sample size."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import polars_rankeval as prk
from polars_rankeval.analysis.power import ACHIEVED_COLUMNS, SAMPLE_SIZE_COLUMNS
from polars_rankeval.analysis.t_test_power import t_power
from polars_rankeval.analysis.topic_set_size import (
    TOPIC_SET_COLUMNS,
    _anova_power,
    _expected_half_width,
)

stats = pytest.importorskip("scipy.stats")


def frame(a: list[float | None], b: list[float | None], metric: str = "m") -> pl.DataFrame:
    n = len(a)
    return pl.DataFrame(
        {"system": ["a"] * n + ["b"] * n, "user": list(range(n)) * 2, metric: a + b}
    )


# ------------------------------------------------------------------ hand computed
def test_t_power_by_integration_over_the_sample_variance() -> None:
    # T' = (Z + sqrt(n) d) / sqrt(V / nu), V ~ chi2(nu): the power is the expectation over V
    # of Phi(sqrt(n) d - c sqrt(V/nu)) + Phi(-c sqrt(V/nu) - sqrt(n) d), c = t_{1-alpha/2}(nu).
    integrate = pytest.importorskip("scipy.integrate")
    for n, d in ((2, 1.5), (5, 0.8), (12, 0.3)):
        nu, lam = n - 1, math.sqrt(n) * d
        c = stats.t.ppf(0.975, nu)

        def integrand(v: float, c: float = c, nu: int = nu, lam: float = lam) -> float:
            s = math.sqrt(v / nu)
            return (stats.norm.cdf(lam - c * s) + stats.norm.cdf(-c * s - lam)) * stats.chi2.pdf(
                v, nu
            )

        expected = integrate.quad(integrand, 0, np.inf)[0]
        assert t_power(n, d)[0] == pytest.approx(expected, abs=1e-7)


def test_no_difference_has_the_power_alpha() -> None:
    # df 1: t is Cauchy, P(|T| > tan(0.475 pi)) = 0.05 exactly
    assert stats.t.ppf(0.975, 1) == pytest.approx(math.tan(0.475 * math.pi))
    assert t_power([2, 10, 1000], 0.0).tolist() == pytest.approx([0.05, 0.05, 0.05])
    assert t_power(7, 0.0, alpha=0.1, alternative="one-sided")[0] == pytest.approx(0.1)


def test_half_the_sd_needs_34_users() -> None:
    # d = 0.5, two-sided 5%, 80%: the normal approximation ((1.95996 + 0.84162) / 0.5)^2 =
    # 31.4 is a lower bound; the exact t answer is 34 (power 0.8078), 33 falls short.
    out = prk.sample_size(delta=0.05, sd=0.1)
    assert out.columns == list(SAMPLE_SIZE_COLUMNS)
    normal = ((stats.norm.ppf(0.975) + stats.norm.ppf(0.8)) / 0.5) ** 2
    assert normal == pytest.approx(31.40, abs=0.01)
    assert out["n_users"][0] == 34 >= math.ceil(normal)
    assert out["effect_size"][0] == pytest.approx(0.05 / 0.1)
    assert t_power(33, 0.5)[0] < 0.8 <= t_power(34, 0.5)[0] == out["power_at_n"][0]


@pytest.mark.parametrize("d", [0.05, 0.1, 0.25, 0.5, 1.0, 2.0])
@pytest.mark.parametrize("alternative", ["two-sided", "one-sided"])
def test_between_the_normal_bound_and_its_correction(d: float, alternative: str) -> None:
    # z-test n <= t-test n <= z-test n + z_a^2 / 2 + 2 (the usual correction, with room)
    a = 0.025 if alternative == "two-sided" else 0.05
    z = (stats.norm.ppf(1 - a) + stats.norm.ppf(0.8)) / d
    n = prk.sample_size(delta=d, sd=1.0, alternative=alternative)["n_users"][0]
    assert max(2, math.ceil(z**2)) <= n <= math.ceil(z**2 + stats.norm.ppf(1 - a) ** 2 / 2) + 2


def test_smaller_difference_needs_more_users() -> None:
    out = prk.sample_size(delta=[0.2, 0.1, 0.05, 0.025], sd=0.3)
    n = out["n_users"].to_list()
    assert n == sorted(n)
    assert len(set(n)) == 4
    # about four times the users for half the difference
    assert 3.5 < n[3] / n[2] < 4.5


# ------------------------------------------------------------------ statsmodels
@pytest.mark.parametrize("alternative", ["two-sided", "one-sided"])
@pytest.mark.parametrize("alpha", [0.01, 0.05, 0.1])
@pytest.mark.parametrize("power", [0.8, 0.9])
def test_statsmodels_ttest_power(alternative: str, alpha: float, power: float) -> None:
    smp = pytest.importorskip("statsmodels.stats.power")
    sm_alt = "two-sided" if alternative == "two-sided" else "larger"
    for d in (0.1, 0.2, 0.35, 0.5, 0.8, 1.2):
        ours = prk.sample_size(delta=d, sd=1.0, alpha=alpha, power=power, alternative=alternative)
        n = ours["n_users"][0]
        solved = smp.TTestPower().solve_power(
            effect_size=d, alpha=alpha, power=power, alternative=sm_alt
        )
        if abs(solved - round(solved)) > 1e-6:  # not at an integer: the ceil is exact
            assert n == max(2, math.ceil(solved)), (d, solved)
        sm_power = smp.TTestPower().power
        assert sm_power(d, n, alpha, alternative=sm_alt) == pytest.approx(
            ours["power_at_n"][0], abs=1e-9
        )
        if n > 2:
            assert sm_power(d, n - 1, alpha, alternative=sm_alt) < power


@pytest.mark.parametrize("m", [2, 3, 5, 10])
def test_statsmodels_anova_power(m: int) -> None:
    # statsmodels' FTestAnovaPower takes Cohen's f and the total users N = m n, with
    # noncentrality f^2 N and df (m - 1, N - m). Sakai's least favourable means of range
    # minD (two systems at +-minD/2, the rest at the grand mean) have
    # f^2 = sum (mu_i - mu)^2 / (m sigma^2) = minD^2 / (2 m sigma^2), so f^2 N =
    # n minD^2 / (2 sigma^2) = lambda and N - m = m (n - 1): the same noncentral F.
    smp = pytest.importorskip("statsmodels.stats.power")
    for min_diff, variance in ((0.1, 0.05), (0.2, 0.03), (0.05, 0.01)):
        f = math.sqrt(min_diff**2 / (2 * m * variance))
        out = prk.topic_set_size(design="anova", min_diff=min_diff, variance=variance, n_systems=m)
        n = out["n_users"][0]
        sm = smp.FTestAnovaPower().power
        assert sm(f, m * n, 0.05, k_groups=m) == pytest.approx(out["power_at_n"][0], abs=1e-9)
        assert out["power_at_n"][0] >= 0.8 > sm(f, m * (n - 1), 0.05, k_groups=m)
        assert _anova_power(n, m, min_diff, variance, 0.05) == pytest.approx(
            sm(f, m * n, 0.05, k_groups=m)
        )


def test_anova_with_two_systems_is_the_two_sample_f() -> None:
    # m = 2: range minD, lambda = n minD^2 / (2 sigma^2) = (minD / sqrt(2 sigma^2 / n))^2,
    # the squared noncentrality of the two-sample t with n users a side.
    n, min_diff, variance = 20, 0.1, 0.04
    nc = min_diff / math.sqrt(2 * variance / n)
    crit = stats.t.ppf(0.975, 2 * n - 2)
    two_sample = stats.nct.sf(crit, 2 * n - 2, nc) + stats.nct.cdf(-crit, 2 * n - 2, nc)
    assert _anova_power(n, 2, min_diff, variance, 0.05) == pytest.approx(two_sample)


def test_sakai_evia_2014_table_is_one_variance() -> None:
    # Sakai, "Topic set size design with variance estimates from two-way ANOVA", EVIA 2014:
    # his table for TREC adhoc/news (alpha 0.05, beta 0.20, m = 10 systems, measurement
    # depth 1000) gives n for minD = 0.10 / 0.20 / 0.25: AP 166/42/27, Q 168/43/28,
    # nDCG 176/45/29, nERR 377/95/61 (as quoted in a public design note; the variances
    # are not in the quote). n grows with the variance, so the variances that give the
    # first number are an interval; one of them gives the other two numbers as well: the
    # exact noncentral F reproduces the table's shape n ~ minD^-2 up to the F's df. AP at
    # minD 0.25 is 28 here, 27 in the table, for no variance: probably the approximation of
    # the noncentral F in Sakai's Excel tool (Nagata's), one user off at small n.
    table = {"AP": (166, 42, 28), "Q": (168, 43, 28), "nDCG": (176, 45, 29), "nERR": (377, 95, 61)}

    def n_at(variance: float, min_diff: list[float]) -> list[int]:
        out = prk.topic_set_size(design="anova", min_diff=min_diff, variance=variance, n_systems=10)
        return out["n_users"].to_list()

    def first_variance(n: int) -> float:
        # the smallest variance whose n at minD 0.10 is at least n (n grows with it)
        lo, hi = 0.001, 1.0
        for _ in range(40):
            mid = (lo + hi) / 2
            lo, hi = (lo, mid) if n_at(mid, [0.1])[0] >= n else (mid, hi)
        return hi

    for measure, expected in table.items():
        lo, hi = first_variance(expected[0]), first_variance(expected[0] + 1)
        assert lo < hi, measure
        grid = np.linspace(lo, hi, 12, endpoint=False)
        assert any(n_at(float(v), [0.1, 0.2, 0.25]) == list(expected) for v in grid), measure


def test_ci_half_width_by_hand() -> None:
    # n = 3: t_{0.975}(2) = 4.302653, E[s] = sigma sqrt(2/2) Gamma(3/2) / Gamma(1)
    # = sigma sqrt(pi) / 2; half-width = 4.302653 * 0.886227 * sigma / sqrt(3)
    assert _expected_half_width(3, 0.04, 0.05) == pytest.approx(
        4.302652729911275 * math.sqrt(math.pi) / 2 * 0.2 / math.sqrt(3)
    )
    out = prk.topic_set_size(design="ci", half_width=0.05, variance=0.1)
    n = out["n_users"][0]
    assert out["half_width_at_n"][0] <= 0.05 < _expected_half_width(n - 1, 0.1, 0.05)
    # above the known-variance answer z^2 sigma^2 / h^2 = 153.7
    assert n >= math.ceil(stats.norm.ppf(0.975) ** 2 * 0.1 / 0.05**2)
    assert out["power"][0] is None
    assert out["min_diff"][0] is None


def test_paired_t_design_is_sample_size() -> None:
    design = prk.topic_set_size(min_diff=[0.05, 0.1], variance=0.09)
    plain = prk.sample_size(delta=[0.05, 0.1], sd=0.3)
    assert design.columns == list(TOPIC_SET_COLUMNS)
    assert design["n_users"].to_list() == plain["n_users"].to_list()
    assert design["n_systems"].to_list() == [2, 2]


# ------------------------------------------------------------------ from data
def test_sd_of_the_paired_differences() -> None:
    # b - a: 0.1, 0, 0.2, 0.1; user 4 has no value for b: left out
    per_user = frame([0.2, 0.4, 0.6, 0.8, 0.5], [0.3, 0.4, 0.8, 0.9, None])
    out = prk.sample_size_per_user(per_user, delta=0.05, baseline="a")
    d = np.array([0.1, 0.0, 0.2, 0.1])
    assert out.select("system", "baseline", "n_observed").row(0) == ("b", "a", 4)
    assert out["sd"][0] == pytest.approx(math.sqrt(((d - d.mean()) ** 2).sum() / 3))
    assert out["n_users"][0] == prk.sample_size(delta=0.05, sd=out["sd"][0])["n_users"][0]
    lazy = prk.sample_size_per_user(per_user.lazy(), delta=0.05, baseline="a")
    assert_frame_equal(out, lazy)


def test_every_pair_and_complete_cases() -> None:
    per_user = pl.concat(
        [
            frame([0.1, 0.5, 0.9], [0.2, 0.5, 1.0]),
            pl.DataFrame({"system": ["c"] * 3, "user": [0, 1, 2], "m": [0.3, None, 0.4]}),
        ]
    )
    out = prk.sample_size_per_user(per_user, delta=0.1)
    # compare's pairs without a baseline, each against the one given first
    assert out.select("system", "baseline").rows() == [("b", "a"), ("c", "a"), ("c", "b")]
    # user 1 lacks c: out of every pair (as compare pairs users)
    assert out["n_observed"].to_list() == [2, 2, 2]
    only_ab = prk.sample_size_per_user(per_user, delta=0.1, systems=["a", "b"])
    assert only_ab["n_observed"].to_list() == [3]


def test_from_data_matches_compare() -> None:
    runs = prk.load_systems()
    out = prk.sample_size(runs, ["ndcg@10", "recall@10"], delta=0.02, baseline="bm25")
    result = prk.compare(runs, ["ndcg@10", "recall@10"], baseline="bm25", test="t")
    assert (
        out.select("metric", "system", "baseline").rows()
        == result.select("metric", "system", "baseline").rows()
    )
    sd = (result["diff"] / result["effect_size"]).abs()
    assert out["sd"].to_list() == pytest.approx(sd.to_list(), rel=1e-9)
    assert out["n_observed"].to_list() == result["n_users"].to_list()


def test_two_way_residual_variance() -> None:
    # statsmodels: the residual mean square of OLS on C(system) + C(user)
    smf = pytest.importorskip("statsmodels.formula.api")
    rng = np.random.default_rng(1)
    n, systems = 30, ["a", "b", "c", "d"]
    base = rng.beta(2, 3, n)
    per_user = pl.concat(
        pl.DataFrame(
            {"system": s, "user": np.arange(n), "m": base + 0.05 * i + rng.normal(0, 0.1, n)}
        )
        for i, s in enumerate(systems)
    )
    fit = smf.ols("m ~ C(system) + C(user)", data=per_user.to_pandas()).fit()
    two_way = prk.topic_set_size_per_user(per_user, design="anova", min_diff=0.1)
    assert two_way["variance"][0] == pytest.approx(fit.mse_resid)
    assert two_way["n_systems"][0] == 4
    assert two_way["n_observed"][0] == n
    one = smf.ols("m ~ C(system)", data=per_user.to_pandas()).fit()
    one_way = prk.topic_set_size_per_user(
        per_user, design="anova", min_diff=0.1, variance_estimate="one_way"
    )
    assert one_way["variance"][0] == pytest.approx(one.mse_resid)
    # the paired designs take the variance of a difference: 2 V_E
    paired = prk.topic_set_size_per_user(per_user, min_diff=0.1)
    assert paired["variance"][0] == pytest.approx(2 * fit.mse_resid)
    planned = prk.topic_set_size_per_user(per_user, design="anova", min_diff=0.1, n_systems=20)
    assert planned["n_systems"][0] == 20
    assert planned["n_users"][0] > two_way["n_users"][0]


def test_topic_set_size_from_data() -> None:
    runs = prk.load_systems()
    out = prk.topic_set_size(runs, ["ndcg@10"], design="anova", min_diff=[0.05, 0.1])
    assert out["n_systems"].to_list() == [4, 4]
    assert out["n_observed"].to_list() == [500, 500]
    assert out["n_users"][0] > out["n_users"][1]


# ------------------------------------------------------------------ ties
def test_identical_differences_have_no_sample_size() -> None:
    # b - a = 0.1 for every user (up to rounding): sd 0, the t test is undefined
    per_user = frame([0.1, 0.3, 0.7], [0.2, 0.4, 0.8])
    out = prk.sample_size_per_user(per_user, delta=0.05)
    assert out["sd"][0] == 0.0
    assert out["n_users"][0] is None
    assert out["effect_size"][0] is None
    assert "sd 0" in out["note"][0]
    same = prk.sample_size_per_user(frame([0.5, 0.5], [0.5, 0.5]), delta=0.05)
    assert same["sd"][0] == 0.0
    assert same["n_users"][0] is None
    one = prk.sample_size_per_user(frame([0.5], [0.7]), delta=0.05)
    assert one["sd"][0] is None
    assert "at least 2" in one["note"][0]


def test_additive_values_have_no_residual() -> None:
    per_user = frame([0.1, 0.3, 0.7], [0.2, 0.4, 0.8])
    out = prk.topic_set_size_per_user(per_user, design="anova", min_diff=0.1)
    assert out["variance"][0] == 0.0
    assert out["n_users"][0] is None
    assert "variance 0" in out["note"][0]


def test_achieved_power_ties() -> None:
    # m: b - a = 0.1 for every user; n: every difference 0
    per_user = frame([0.1, 0.3, 0.7], [0.2, 0.4, 0.8]).with_columns(n=pl.lit(0.5))
    result = prk.compare_per_user(per_user, baseline="a", test="t")
    out = prk.achieved_power(result)
    assert out["achieved_power"].to_list() == [None, None]
    assert "sd 0" in out["note"][0]
    assert "every per-user difference is 0" in out["note"][1]


# ------------------------------------------------------------------ achieved power
def test_achieved_power_is_a_function_of_p() -> None:
    rng = np.random.default_rng(3)
    n = 40
    a = rng.normal(0.5, 0.2, n)
    per_user = pl.concat(
        pl.DataFrame({"system": s, "user": np.arange(n), "m": a + shift + rng.normal(0, 0.1, n)})
        for s, shift in (("a", 0.0), ("b", 0.01), ("c", 0.03), ("d", 0.05), ("e", 0.08))
    )
    result = prk.compare_per_user(per_user, baseline="a", test="t")
    out = prk.achieved_power(result)
    assert out.columns == list(ACHIEVED_COLUMNS)
    # one n: the lower the p-value, the higher the power (Hoenig & Heisey 2001)
    ordered = out.sort("p_value")
    assert ordered["achieved_power"].to_list() == sorted(ordered["achieved_power"], reverse=True)
    for row in out.iter_rows(named=True):
        d = abs(row["diff"]) / row["sd"]
        assert row["achieved_power"] == pytest.approx(t_power(n, d)[0])
        # the t statistic is sqrt(n) d; its p-value is compare's
        assert 2 * stats.t.sf(math.sqrt(n) * d, n - 1) == pytest.approx(row["p_value"])
        needed = prk.sample_size(delta=abs(row["diff"]), sd=row["sd"])["n_users"][0]
        assert row["n_users_needed"] == needed


def test_power_at_p_equal_alpha_is_about_one_half() -> None:
    # observed d with sqrt(n) d = t_{0.975}(n - 1): p = 0.05 exactly, power about 0.5
    n = 50
    d = stats.t.ppf(0.975, n - 1) / math.sqrt(n)
    assert t_power(n, d)[0] == pytest.approx(0.5, abs=0.02)


def test_achieved_power_from_compare_on_data() -> None:
    result = prk.compare(
        prk.load_systems(), ["ndcg@10"], baseline="bm25", systems=["bm25", "dense"], n_resamples=200
    )
    out = prk.achieved_power(result, alpha=0.01, power=0.9)
    assert out["alpha"].to_list() == [0.01]
    assert out["power"].to_list() == [0.9]
    assert 0 < out["achieved_power"][0] <= 1
    # large effects (random against bm25: d about -1.4 over 500 users): power 1, not NaN
    every = prk.achieved_power(
        prk.compare(prk.load_systems(), ["ndcg@10"], baseline="bm25", test="t")
    )
    assert every["achieved_power"].is_nan().sum() == 0
    assert every.filter(pl.col("system") == "random")["achieved_power"][0] == pytest.approx(1.0)


# ------------------------------------------------------------------ errors
ERRORS: list[tuple[dict[str, Any], type[Exception], str]] = [
    ({"delta": 0.1}, TypeError, "needs sd="),
    ({"delta": 0, "sd": 1}, ValueError, r"delta must be a finite number > 0, got 0"),
    ({"delta": [], "sd": 1}, ValueError, "non-empty sequence"),
    (
        {"delta": "0.1", "sd": 1},
        TypeError,
        "'delta' of sample_size must be a number or a list of numbers, got str '0.1'",
    ),
    (
        {"delta": 0.1, "sd": -1.0},
        ValueError,
        r"'sd' of sample_size must be a number > 0 or None, got -1.0",
    ),
    (
        {"delta": 0.1, "sd": float("inf")},
        ValueError,
        "'sd' of sample_size must be a number > 0 or None, got inf",
    ),
    (
        {"delta": 0.1, "sd": 1, "alpha": 1.0},
        ValueError,
        r"'alpha' of sample_size must be a number in \(0, 1\), got 1.0",
    ),
    (
        {"delta": 0.1, "sd": 1, "power": True},
        TypeError,
        "'power' of sample_size must be a number in \\(0, 1\\), got bool True",
    ),
    (
        {"delta": 0.1, "sd": 1, "alternative": "larger"},
        ValueError,
        "'alternative' of sample_size must be one of .*got 'larger'",
    ),
    ({"delta": 0.1, "sd": 1, "metrics": ["ndcg@10"]}, TypeError, "metrics= is read from data"),
]


@pytest.mark.parametrize(("kwargs", "error", "match"), ERRORS)
def test_sample_size_errors(kwargs: dict[str, Any], error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        prk.sample_size(**kwargs)


DESIGN_ERRORS: list[tuple[dict[str, Any], type[Exception], str]] = [
    (
        {"design": "z", "min_diff": 0.1, "variance": 1},
        ValueError,
        "'design' of topic_set_size must be one of \\['anova', 'ci', 'paired_t'\\]",
    ),
    ({"min_diff": 0.1}, TypeError, "needs variance="),
    ({"variance": 1}, TypeError, "needs min_diff="),
    ({"design": "ci", "min_diff": 0.1, "variance": 1}, TypeError, "takes half_width="),
    ({"design": "ci", "variance": 1}, TypeError, "needs half_width="),
    ({"half_width": 0.1, "variance": 1}, TypeError, "takes min_diff=, not half_width="),
    ({"design": "anova", "min_diff": 0.1, "variance": 1}, TypeError, "needs n_systems="),
    (
        {"design": "anova", "min_diff": 0.1, "variance": 1, "n_systems": 1},
        ValueError,
        "'n_systems' of topic_set_size must be an integer >= 2 or None, got 1",
    ),
    (
        {"design": "anova", "min_diff": 0.1, "variance": 1, "n_systems": 2.0},
        TypeError,
        "'n_systems' of topic_set_size must be .*, got float 2.0",
    ),
    ({"min_diff": 0.1, "variance": 1, "n_systems": 3}, TypeError, "n_systems= is for"),
    (
        {"min_diff": 0.1, "variance": 1, "variance_estimate": "x"},
        ValueError,
        "'variance_estimate' of topic_set_size must be one of \\['one_way', 'two_way'\\]",
    ),
    ({"min_diff": 0.1, "variance": 0.0}, ValueError, "variance must be a finite number > 0"),
]


@pytest.mark.parametrize(("kwargs", "error", "match"), DESIGN_ERRORS)
def test_topic_set_size_errors(kwargs: dict[str, Any], error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        prk.topic_set_size(**kwargs)


def test_data_errors() -> None:
    per_user = frame([0.1, 0.2], [0.3, 0.5])
    with pytest.raises(ValueError, match="duplicate \\(system, user\\)"):
        prk.sample_size_per_user(pl.concat([per_user, per_user]), delta=0.1)
    with pytest.raises(ValueError, match="need at least 2 systems"):
        prk.sample_size_per_user(per_user.filter(pl.col("system") == "a"), delta=0.1)
    with pytest.raises(ValueError, match="baseline 'z' not found"):
        prk.sample_size_per_user(per_user, delta=0.1, baseline="z")
    with pytest.raises(ValueError, match="metric column 'x' not found"):
        prk.sample_size_per_user(per_user, ["x"], delta=0.1)
    with pytest.raises(TypeError, match="not both"):
        prk.sample_size(prk.load_systems(), ["ndcg@10"], delta=0.1, sd=0.2)
    with pytest.raises(TypeError, match="does not take per_user="):
        prk.sample_size(prk.load_systems(), ["ndcg@10"], delta=0.1, per_user=True)
    with pytest.raises(TypeError, match="needs metrics"):
        prk.topic_set_size(prk.load_systems(), min_diff=0.1)
    wilcoxon = prk.compare_per_user(per_user, test="wilcoxon")
    with pytest.raises(ValueError, match="effect_size_kind 'cohen_d'"):
        prk.achieved_power(wilcoxon)
    with pytest.raises(ValueError, match="lacks column"):
        prk.achieved_power(per_user)
    with pytest.raises(TypeError, match="must be the DataFrame"):
        prk.achieved_power(per_user.lazy())  # type: ignore[arg-type]


def test_large_noncentrality_is_not_nan() -> None:
    # scipy's nct.cdf of the far tail is NaN past a noncentrality of about 11
    assert t_power([500, 10_000], 0.51).tolist() == pytest.approx([1.0, 1.0])
    assert t_power(500, 0.51)[0] == pytest.approx(
        stats.nct.sf(stats.t.ppf(0.975, 499), 499, math.sqrt(500) * 0.51)
    )


def test_power_is_finite_over_a_grid() -> None:
    # scipy's far tail is NaN from a noncentrality of about 5; the power stays finite,
    # within 3e-7 of the near tail alone there
    for n in (2, 3, 6, 30, 101, 100_001):
        c = stats.t.ppf(0.975, n - 1)
        for nc in np.linspace(0, 60, 121):
            p = t_power(n, nc / math.sqrt(n))[0]
            assert math.isfinite(p)
            assert p == pytest.approx(stats.nct.sf(c, n - 1, nc), abs=3e-7) or nc < 5


def test_smallest_n_property() -> None:
    # n is the smallest number of users >= 2 whose power reaches the target
    rng = np.random.default_rng(7)
    for _ in range(40):
        d = float(rng.uniform(0.05, 2.0))
        alpha = float(rng.choice([0.01, 0.05, 0.1]))
        power = float(rng.uniform(0.5, 0.95))
        alternative = str(rng.choice(["two-sided", "one-sided"]))
        out = prk.sample_size(delta=d, sd=1.0, alpha=alpha, power=power, alternative=alternative)
        n = out["n_users"][0]
        assert t_power(n, d, alpha=alpha, alternative=alternative)[0] >= power  # type: ignore[arg-type]
        if n > 2:
            assert t_power(n - 1, d, alpha=alpha, alternative=alternative)[0] < power  # type: ignore[arg-type]


def test_lazy_equals_eager_for_the_designs() -> None:
    rng = np.random.default_rng(2)
    per_user = pl.concat(
        pl.DataFrame({"system": s, "user": np.arange(50), "m": rng.random(50)}) for s in "abc"
    )
    for design in ("paired_t", "anova"):
        eager = prk.topic_set_size_per_user(per_user, design=design, min_diff=0.1)  # type: ignore[arg-type]
        lazy = prk.topic_set_size_per_user(per_user.lazy(), design=design, min_diff=0.1)  # type: ignore[arg-type]
        assert_frame_equal(eager, lazy)


def test_zero_mean_difference_has_the_power_alpha() -> None:
    # b - a: +0.1, -0.1: mean 0, sd > 0; compare's d is 0
    result = prk.compare_per_user(frame([0.2, 0.4], [0.3, 0.3]), baseline="a", test="t")
    out = prk.achieved_power(result)
    assert out["achieved_power"][0] == pytest.approx(0.05)
    assert out["n_users_needed"][0] is None
    assert "mean difference is 0" in out["note"][0]
