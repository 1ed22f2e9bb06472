"""Meta-evaluation: discriminative_power, swap_rate and metric_agreement."""

from __future__ import annotations

import itertools
import math

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import polars_rankeval as prk
from polars_rankeval._utils.stats import blocks, tukey_ranges
from polars_rankeval.analysis.discriminative import ASL_COLUMNS, POWER_COLUMNS, _kth_largest
from polars_rankeval.analysis.metric_agreement import AGREEMENT_COLUMNS
from polars_rankeval.analysis.swap_rate import (
    SWAP_BIN_COLUMNS,
    SWAP_COLUMNS,
    _min_difference,
    swap_trials,
)

# The hand example: 4 users x 3 systems, ties in per-user values (c = a for users 1, 3
# and 4; a = b = c for nobody; b = a on no user) and in the subset means.
A = [0.2, 0.4, 0.6, 0.8]
B = [0.3, 0.5, 0.5, 0.6]
C = [0.2, 0.6, 0.6, 0.8]


def per_user(columns: dict[str, dict[str, list[float | None]]]) -> pl.DataFrame:
    """``{metric: {system: values per user}}`` as a per-user frame."""
    systems = list(next(iter(columns.values())))
    n = len(next(iter(next(iter(columns.values())).values())))
    return pl.DataFrame(
        {
            "system": [s for s in systems for _ in range(n)],
            "user": list(range(1, n + 1)) * len(systems),
            **{m: [v for s in systems for v in per[s]] for m, per in columns.items()},
        }
    )


HAND = per_user({"ndcg@10": {"a": A, "b": B, "c": C}})


def subset_runs(n_users: int = 40) -> pl.DataFrame:
    runs = prk.load_systems()
    return runs.filter(pl.col("user") <= n_users)


# ------------------------------------------------------------------ discriminative power
@pytest.mark.parametrize("test", ["tukey", "bootstrap"])
def test_asl_equals_compare_p_value(test: str) -> None:
    runs = subset_runs()
    metrics = ["ndcg@10", "precision@5"]
    options = {"statistic": "mean"} if test == "bootstrap" else {}
    result = prk.discriminative_power(runs, metrics, test=test, n_resamples=500, seed=3, **options)
    compared = prk.compare(runs, metrics, test=test, n_resamples=500, seed=3, ci="none")
    joined = result.asl.join(
        compared.select("metric", "system", "baseline", "p_value", "diff", "note"),
        on=["metric", "system", "baseline"],
        how="full",
    )
    assert joined.height == result.asl.height == compared.height == 12
    assert joined["asl"].to_list() == joined["p_value"].to_list()
    assert joined["note"].to_list() == joined["note_right"].to_list()
    assert np.allclose(joined["diff"].to_numpy(), joined["diff_right"].to_numpy(), atol=1e-15)


def test_asl_equals_compare_with_ties_and_dropped_users() -> None:
    frame = per_user(
        {
            "m": {
                "a": [0.0, 0.5, 0.5, 1.0, 0.0, 0.5, None, 1.0],
                "b": [0.5, 0.5, 1.0, 1.0, 0.5, 1.0, 0.5, 1.0],
                "c": [0.0, 0.5, 0.5, 1.0, 0.5, 0.5, 0.5, 0.0],
            }
        }
    )
    for test in ("tukey", "bootstrap"):
        options = {"statistic": "mean"} if test == "bootstrap" else {}
        got = prk.discriminative_power_per_user(frame, test=test, n_resamples=300, **options)
        want = prk.compare_per_user(frame, test=test, n_resamples=300, ci="none")
        p = {(s, b): v for s, b, v in want.select("system", "baseline", "p_value").rows()}
        assert {(s, b): v for s, b, v in got.asl.select("system", "baseline", "asl").rows()} == p
        assert got.summary["n_users"].item() == 7
        assert got.summary["n_dropped"].item() == 1


def sakai_asl(z: np.ndarray, index: np.ndarray) -> tuple[float, np.ndarray]:
    """Sakai (2006), Figure 1, one resample at a time: the ASL count and the |t*| values."""
    n = len(z)
    t_obs = abs(z.mean() / (z.std(ddof=1) / math.sqrt(n)))
    w = z - z.mean()
    null = []
    for row in index:
        drawn = w[row]
        with np.errstate(divide="ignore", invalid="ignore"):
            null.append(abs(drawn.mean() / (drawn.std(ddof=1) / math.sqrt(n))))
    values = np.array(null)
    return t_obs, values


def test_studentized_asl_follows_sakai_figure_1() -> None:
    rng = np.random.default_rng(5)
    n, m, b = 30, 3, 400
    values = rng.beta(2, 3, size=(n, m)) + np.array([0.0, 0.05, 0.2])
    frame = pl.DataFrame(
        {
            "system": np.repeat(["a", "b", "c"], n),
            "user": np.tile(np.arange(n), m),
            "m": values.T.ravel(),
        }
    )
    out = prk.discriminative_power_per_user(frame, n_resamples=b, seed=11)
    # The users each resample draws: compare's bootstrap blocks for this metric.
    index = np.concatenate(
        [rng_.integers(0, n, size=(size, n)) for _, size, rng_ in blocks(11, "m", "test", b, n)]
    )
    pairs = {("b", "a"): (1, 0), ("c", "a"): (2, 0), ("c", "b"): (2, 1)}
    k = math.floor(b * 0.05)
    required = []
    for system, baseline, asl in out.asl.select("system", "baseline", "asl").rows():
        i, j = pairs[(system, baseline)]
        z = values[:, i] - values[:, j]
        t_obs, null = sakai_asl(z, index)
        count = int(np.sum(null >= t_obs * (1 - 1e-9)))
        assert asl == pytest.approx(max((count + 1) / (b + 1), 1 / (b + 1)), rel=1e-12)
        # Figure 3: the B*alpha-th largest |t*| times sd(z) / sqrt(n)
        required.append(np.sort(null)[::-1][k - 1] * z.std(ddof=1) / math.sqrt(n))
    assert out.summary["difference_required"].item() == pytest.approx(max(required), rel=1e-12)


def test_studentized_asl_poisson_weights_above_50k_users() -> None:
    rng = np.random.default_rng(2)
    n = 50_001
    a = rng.random(n)
    frame = pl.DataFrame(
        {
            "system": ["a"] * n + ["b"] * n,
            "user": list(range(n)) * 2,
            "m": np.concatenate([a, a + rng.normal(0.003, 0.3, n)]),
        }
    )
    out = prk.discriminative_power_per_user(frame, n_resamples=20, seed=1)
    assert out.summary["resampling"].item() == "poisson"
    # the same weights, one resample at a time: t = mean_w / sqrt(var_w / W)
    from polars_rankeval._utils.stats import _poisson_weights

    z = frame.filter(pl.col("system") == "b")["m"].to_numpy() - a
    w = z - z.mean()
    t_obs = abs(z.mean() / (z.std(ddof=1) / math.sqrt(n)))
    count = 0
    for _, size, rng_ in blocks(1, "m", "test", 20, n):
        for weights in _poisson_weights(rng_, size, n):
            total = weights.sum()
            mean = (weights * w).sum() / total
            var = (weights * (w - mean) ** 2).sum() / (total - 1)
            count += abs(mean / math.sqrt(var / total)) >= t_obs * (1 - 1e-9)
    assert out.asl["asl"].item() == pytest.approx((count + 1) / 21, rel=1e-12)


def test_studentized_asl_converges_to_the_exact_bootstrap() -> None:
    # 4 users: every one of the 4**4 ordered resamples, equally likely (Sakai's ASL is
    # their share reaching |t(z)|); a resample of one repeated user has sd 0: |t| = inf
    # (mean != 0) or NaN (mean 0, never counted), as in the implementation.
    frame = per_user({"m": {"a": A, "b": B}})
    z = np.array(B) - np.array(A)
    index = np.array(list(itertools.product(range(4), repeat=4)))
    t_obs, null = sakai_asl(z, index)
    exact = np.sum(null >= t_obs * (1 - 1e-9)) / len(index)
    out = prk.discriminative_power_per_user(frame, n_resamples=40_000, seed=0)
    assert out.asl["asl"].item() == pytest.approx(exact, abs=0.006)


def test_hand_computed_power_and_rules() -> None:
    # b = a + 0.1 for every user (constant differences: no ASL, the bootstrap cannot
    # resample them), c = a (every difference zero: ASL 1), d far above all of them
    # with varying differences: d - a = .7, .6, .35, .19 (mean .46), and no shifted
    # resample mean reaches .46 in absolute value (the shifted values are at most .24
    # and at least -.27), so the p is 1 / 2001, raised to the floor of the bootstrap
    # with 4 users: 1 / C(7, 4) = 1/35.
    frame = per_user(
        {
            "m": {
                "a": A,
                "b": [x + 0.1 for x in A],
                "c": A,
                "d": [0.9, 1.0, 0.95, 0.99],
            }
        }
    )
    out = prk.discriminative_power_per_user(frame, statistic="mean", n_resamples=2000)
    asl = {(s, b): v for s, b, v in out.asl.select("system", "baseline", "asl").rows()}
    assert asl[("b", "a")] is None
    assert asl[("c", "b")] is None
    assert asl[("c", "a")] == 1.0
    assert asl[("d", "a")] == pytest.approx(1 / 35)  # raised to the floor
    diffs = {(s, b): d for s, b, d in out.asl.select("system", "baseline", "diff").rows()}
    assert diffs[("d", "a")] == pytest.approx((0.9 + 1.0 + 0.95 + 0.99) / 4 - 0.5)
    # d differs significantly from a, b and c (each at 1/35 <= 0.05): 3 of 6 pairs
    summary = out.summary.row(0, named=True)
    assert summary["n_pairs"] == 4 * 3 // 2
    assert summary["n_significant"] == 3
    assert summary["discriminative_power"] == 3 / 6
    # rank: the three significant pairs first, in the pairs' order (d-a, d-b, d-c),
    # then c-a (1.0), then the pairs without an ASL
    ranked = out.asl.sort("rank").select("system", "baseline").rows()
    assert ranked == [("d", "a"), ("d", "b"), ("d", "c"), ("c", "a"), ("b", "a"), ("c", "b")]
    notes = {(s, b): v for s, b, v in out.asl.select("system", "baseline", "note").rows()}
    assert "needs users whose differences vary" in notes[("b", "a")]
    assert notes[("c", "a")] == "every difference is zero: p = 1"


def test_hand_example_tukey_difference_required() -> None:
    values = np.column_stack([A, B, C])
    out = prk.discriminative_power_per_user(HAND, test="tukey", n_resamples=999, seed=4)
    ranges = tukey_ranges(values, 999, 4, "ndcg@10")
    # the floor(999 * 0.05) = 49th largest permuted range
    assert out.summary["difference_required"].item() == np.sort(ranges)[::-1][48]
    # every ASL of the 4-user example is at least (3!)**(1 - 4) = 1/216 (Tukey's floor)
    assert out.asl["asl"].min() >= 1 / 216
    means = values.mean(axis=0)  # a 0.5, b 0.475, c 0.55
    got = {(s, b): v for s, b, v in out.asl.select("system", "baseline", "diff").rows()}
    assert got[("b", "a")] == pytest.approx(0.475 - 0.5)
    assert got[("c", "a")] == pytest.approx(0.55 - 0.5)
    assert got[("c", "b")] == pytest.approx(means[2] - means[1])


def test_kth_largest() -> None:
    null = np.array([[3.0, np.nan], [1.0, 2.0], [2.0, 5.0]])
    assert _kth_largest(null, 1).tolist() == [3.0, 5.0]
    assert _kth_largest(null, 2).tolist() == [2.0, 2.0]
    assert np.isnan(_kth_largest(null, 0)).all()
    out = prk.discriminative_power_per_user(HAND, n_resamples=10)  # 10 * 0.05 < 1
    assert out.summary["difference_required"].item() is None


def test_columns_lazy_and_evaluate_input() -> None:
    runs = subset_runs(30)
    direct = prk.discriminative_power(runs, ["ndcg@10"], n_resamples=200)
    assert direct.summary.columns == list(POWER_COLUMNS)
    assert direct.asl.columns == list(ASL_COLUMNS)
    values = prk.evaluate(runs, ["ndcg@10"], by="system", per_user=True)
    systems = runs["system"].unique(maintain_order=True).to_list()
    for frame in (values, values.lazy(), values.sample(fraction=1.0, shuffle=True, seed=1)):
        got = prk.discriminative_power_per_user(frame, systems=systems, n_resamples=200)
        assert_frame_equal(got.summary, direct.summary)
        assert_frame_equal(got.asl, direct.asl)
    lazy = prk.discriminative_power(runs.lazy(), ["ndcg@10"], n_resamples=200)
    assert_frame_equal(lazy.asl, direct.asl)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        (
            {"test": "t"},
            ValueError,
            r"'test' of discriminative_power_per_user must be one of \['bootstrap', 'tukey'\]",
        ),
        (
            {"statistic": "median"},
            ValueError,
            r"'statistic' of discriminative_power_per_user must be one of \['mean', 't'\]",
        ),
        (
            {"alpha": 1.5},
            ValueError,
            r"'alpha' of discriminative_power_per_user must be a number in \(0, 1\), got 1.5",
        ),
        (
            {"alpha": "x"},
            TypeError,
            r"'alpha' of discriminative_power_per_user must be a number in \(0, 1\), got str",
        ),
        (
            {"n_resamples": 0},
            ValueError,
            r"'n_resamples' of discriminative_power_per_user must be an integer >= 1, got 0",
        ),
        (
            {"n_resamples": 2.0},
            TypeError,
            r"'n_resamples' of discriminative_power_per_user must be an integer >= 1, got float",
        ),
        (
            {"seed": -1},
            ValueError,
            r"'seed' of discriminative_power_per_user must be an integer >= 0, got -1",
        ),
        ({"systems": ["a"]}, ValueError, r"need at least 2 systems"),
        ({"systems": ["a", "z"]}, ValueError, r"system\(s\) 'z' not found"),
        ({"metrics": "nope"}, ValueError, r"metric column 'nope' not found"),
        ({"user": "who"}, ValueError, r"user column 'who' not found"),
    ],
)
def test_power_errors(kwargs: dict[str, object], error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        prk.discriminative_power_per_user(HAND, **kwargs)  # type: ignore[arg-type]


def test_power_refuses_what_compare_refuses() -> None:
    runs = subset_runs(5)
    with pytest.raises(TypeError, match=r"discriminative_power\(\) does not take per_user="):
        prk.discriminative_power(runs, ["ndcg@10"], per_user=True)
    with pytest.raises(ValueError, match=r"coverage@10 have one value per system"):
        prk.discriminative_power(runs, ["coverage@10"])
    with pytest.raises(ValueError, match=r"NaN or infinite"):
        prk.discriminative_power_per_user(per_user({"m": {"a": [0.1, np.nan], "b": [0, 1]}}))


# ------------------------------------------------------------------ swap rate
def test_swap_trials_hand_computed() -> None:
    values = np.column_stack([A, B, C])
    pairs = [(1, 0), (2, 0), (2, 1)]  # b - a, c - a, c - b
    # trial 1: users {1, 2} | {3, 4}; trial 2: users {1, 3} | {2, 4}
    first = np.array([[0, 1], [0, 2]])
    second = np.array([[2, 3], [1, 3]])
    gaps, swapped = swap_trials(values, pairs, first, second)
    # trial 1, first subset: a (0.2 + 0.4) / 2 = 0.3, b 0.4, c 0.4: d1 = 0.1, 0.1, 0 (a tie)
    # second subset: a 0.7, b 0.55, c 0.7: d2 = -0.15, 0 (a tie), 0.15
    # trial 2, first subset: a 0.4, b 0.4, c 0.4: every d1 is 0, nothing swaps
    assert np.allclose(gaps, [[0.4 - 0.3, 0.4 - 0.3, 0.0], [0.0, 0.0, 0.0]], atol=1e-12)
    # only b - a on trial 1 swaps (+0.1 then -0.15); a tie on either side never does
    assert swapped.tolist() == [[True, False, False], [False, False, False]]


def test_swap_rate_converges_to_the_hand_expectation() -> None:
    # Subsets of 1 user: the 12 ordered pairs of distinct users. Per-user differences
    # b - a: +.1 +.1 -.1 -.2 (2 x 2 x 2 = 8 opposite-sign pairs), c - a: 0 .2 0 0 (none),
    # c - b: -.1 +.1 +.1 +.2 (1 x 3 x 2 = 6): 14 swaps of 36 pair-trials.
    # Subsets of 2 users: the 6 ordered splits; {1,2}|{3,4} and {3,4}|{1,2} swap b - a
    # once each, the other 4 splits never (a zero mean difference on either side):
    # 2 swaps of 18.
    out = prk.swap_rate_per_user(HAND, subset_sizes=[1, 2], n_trials=30_000, bins=[0.0])
    rates = dict(zip(out.summary["subset_size"], out.summary["swap_rate"], strict=True))
    assert rates[1] == pytest.approx(14 / 36, abs=0.01)
    assert rates[2] == pytest.approx(2 / 18, abs=0.01)
    assert out.summary["n_pair_trials"].to_list() == [30_000 * 3, 30_000 * 3]
    assert out.summary.columns == list(SWAP_COLUMNS)
    assert out.bins.columns == list(SWAP_BIN_COLUMNS)
    # one open bin: it holds every pair-trial
    assert out.bins["n_pair_trials"].to_list() == [90_000, 90_000]
    assert out.bins["bin_high"].to_list() == [None, None]


def test_swap_bins_and_min_difference() -> None:
    edges = np.array([0.0, 0.05, 0.1, 0.2])
    counts = np.array([10, 20, 0, 5])
    rates = np.array([0.5, 0.04, np.nan, 0.0])
    # bins 1 (0.04) and 3 (0.0) are below 5%, the empty bin 2 is skipped: from 0.05 on
    assert _min_difference(edges, counts, rates, 0.05) == 0.05
    assert _min_difference(edges, counts, np.array([0.5, 0.04, np.nan, 0.2]), 0.05) is None
    assert _min_difference(edges, counts, np.array([0.0, 0.0, np.nan, 0.0]), 0.05) == 0.0
    # int bins: equal widths up to the largest |d1| drawn, the last bin closed at it
    out = prk.swap_rate_per_user(HAND, subset_sizes=[2], n_trials=50, bins=4)
    bins = out.bins
    top = bins["bin_high"][-1]
    assert bins["bin_low"].to_list() == pytest.approx([0, top / 4, top / 2, 3 * top / 4])
    assert bins["n_pair_trials"].sum() == 150
    assert bins["n_swaps"].sum() == out.summary["n_swaps"].item()
    # the largest |d1| of 2-user subsets: c - b on {3, 4} | {1, 2}: (0.7 - 0.55)
    assert top == pytest.approx(0.15)


def test_swap_rate_same_subsets_for_every_metric_and_deterministic() -> None:
    frame = per_user({"m1": {"a": A, "b": B, "c": C}, "m2": {"a": A, "b": B, "c": C}})
    out = prk.swap_rate_per_user(frame, subset_sizes=[1, 2], n_trials=40, seed=7)
    first = out.summary.filter(pl.col("metric") == "m1").drop("metric")
    second = out.summary.filter(pl.col("metric") == "m2").drop("metric")
    assert_frame_equal(first, second)
    again = prk.swap_rate_per_user(frame, subset_sizes=[1, 2], n_trials=40, seed=7)
    assert_frame_equal(out.summary, again.summary)
    assert_frame_equal(out.bins, again.bins)


def test_swap_rate_default_sizes_and_evaluate_input() -> None:
    runs = subset_runs(40)
    direct = prk.swap_rate(runs, ["ndcg@10"], n_trials=20)
    # n/20, n/8, n/4, n/2 of 40 users
    assert direct.summary["subset_size"].to_list() == [2, 5, 10, 20]
    values = prk.evaluate(runs.lazy(), ["ndcg@10"], by="system", per_user=True)
    systems = runs["system"].unique(maintain_order=True).to_list()
    got = prk.swap_rate_per_user(values, systems=systems, n_trials=20)
    assert_frame_equal(got.summary, direct.summary)
    assert_frame_equal(got.bins, direct.bins)
    # large subsets of these clearly different systems swap less than small ones
    rates = direct.summary["swap_rate"].to_list()
    assert rates[-1] <= rates[0]


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"subset_sizes": [3]}, ValueError, r"subset_sizes must be ints in \[1, 2\]"),
        (
            {"subset_sizes": [0]},
            ValueError,
            r"'subset_sizes' of swap_rate_per_user must be .*got an entry 0",
        ),
        ({"subset_sizes": [1, 1]}, ValueError, r"subset_sizes must be distinct"),
        (
            {"subset_sizes": [1.5]},
            TypeError,
            r"'subset_sizes' of swap_rate_per_user must be .*got an entry float 1.5",
        ),
        (
            {"bins": 0},
            ValueError,
            r"'bins' of swap_rate_per_user must be an integer >= 1 or a list of bin edges, got 0",
        ),
        ({"bins": [0.1, 0.2]}, ValueError, r"starting at 0"),
        ({"bins": [0.0, 0.2, 0.1]}, ValueError, r"increasing"),
        (
            {"bins": "x"},
            TypeError,
            r"'bins' of swap_rate_per_user must be an integer >= 1 or a list of bin edges, got str",
        ),
        (
            {"n_trials": 0},
            ValueError,
            r"'n_trials' of swap_rate_per_user must be an integer >= 1, got 0",
        ),
        (
            {"max_swap_rate": 0.0},
            ValueError,
            r"'max_swap_rate' of swap_rate_per_user must be a number in \(0, 1\)",
        ),
        (
            {"tie_tolerance": -1.0},
            ValueError,
            r"'tie_tolerance' of swap_rate_per_user must be a number >= 0",
        ),
    ],
)
def test_swap_errors(kwargs: dict[str, object], error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        prk.swap_rate_per_user(HAND, **kwargs)  # type: ignore[arg-type]


# ------------------------------------------------------------------ metric agreement
def test_agreement_hand_computed_tau_ap_both_ways() -> None:
    # reference "r": s1 > s2 > s3 > s4; "cand" (lower is better): s1, s3, s4, s2
    scores = pl.DataFrame(
        {
            "system": ["s1", "s2", "s3", "s4"],
            "r": [0.4, 0.3, 0.2, 0.1],
            "cand": [0.1, 0.4, 0.2, 0.3],
        }
    )
    out = prk.metric_agreement_per_user(scores, higher_is_better={"cand": False})
    assert out.columns == list(AGREEMENT_COLUMNS)
    row = out.row(0, named=True)
    # discordant: (s2, s3) and (s2, s4): tau_b = (4 - 2) / 6
    assert row["n_discordant"] == 2
    assert row["tau_b"] == pytest.approx((4 - 2) / 6)
    # r the reference, cand's order s1, s3, s4, s2: C = 1, 2, 1 (Yilmaz et al. 2008)
    assert row["tau_ap_ref_a"] == pytest.approx(2 / 3 * (1 / 1 + 2 / 2 + 1 / 3) - 1)
    # cand the reference, r's order s1, s2, s3, s4: C = 1, 1, 2
    assert row["tau_ap_ref_b"] == pytest.approx(2 / 3 * (1 / 1 + 1 / 2 + 2 / 3) - 1)
    # read as higher-is-better instead, cand's order is reversed: s2, s4, s3, s1
    plain = prk.metric_agreement_per_user(scores, higher_is_better={"cand": True}).row(0)
    assert plain[4] == pytest.approx((2 - 4) / 6)


def test_agreement_hand_example_means_and_ties() -> None:
    # system means of ndcg@10: a 0.5, b 0.475, c 0.55; of p@1: a 1/2, b 1/2, c 3/4 (a tie)
    frame = per_user(
        {
            "ndcg@10": {"a": A, "b": B, "c": C},
            "precision@1": {"a": [1, 0, 1, 0], "b": [0, 1, 0, 1], "c": [1, 1, 1, 0]},
        }
    )
    row = prk.metric_agreement_per_user(frame).row(0, named=True)
    # pairs: (a, b) ndcg a > b, p@1 tied; (a, c) c > a both; (b, c) c > b both
    # tau-b = (2 - 0) / sqrt(3 * 2)
    assert row["tau_b"] == pytest.approx(2 / math.sqrt(3 * 2))
    assert row["n_discordant"] == 0
    assert row["tau_ap_ref_a"] is None
    assert row["tau_ap_ref_b"] is None
    assert row["note"] == "tau_ap is defined without ties; precision@1 ties systems"
    scipy_stats = pytest.importorskip("scipy.stats")
    assert row["tau_b"] == pytest.approx(
        scipy_stats.kendalltau([0.5, 0.475, 0.55], [0.5, 0.5, 0.75]).statistic
    )


def test_agreement_tau_b_against_scipy_with_ties() -> None:
    scipy_stats = pytest.importorskip("scipy.stats")
    rng = np.random.default_rng(0)
    for _ in range(20):
        n = int(rng.integers(3, 12))
        x = rng.integers(0, 5, n) / 4  # many ties
        y = rng.integers(0, 5, n) / 4
        scores = pl.DataFrame({"system": [f"s{i:02d}" for i in range(n)], "x": x, "y": y})
        got = prk.metric_agreement_per_user(scores)["tau_b"].item()
        want = scipy_stats.kendalltau(x, y).statistic
        if np.isnan(want):
            assert got is None
        else:
            assert got == pytest.approx(want, abs=1e-12)


def test_agreement_tau_ap_equals_rank_correlation() -> None:
    rng = np.random.default_rng(1)
    scores = pl.DataFrame(
        {"system": [f"s{i}" for i in range(8)], "x": rng.random(8), "y": rng.random(8)}
    )
    out = prk.metric_agreement_per_user(scores).row(0, named=True)
    assert out["tau_ap_ref_a"] == prk.rank_correlation(scores, method="tau_ap")["value"].item()
    swapped = scores.select("system", pl.col("y").alias("a"), pl.col("x").alias("b"))
    assert out["tau_ap_ref_b"] == prk.rank_correlation(swapped, method="tau_ap")["value"].item()


def test_agreement_from_evaluate_equals_per_user_means() -> None:
    runs = prk.load_systems()
    metrics = ["ndcg@10", "mrr@10", "fallout@10"]
    direct = prk.metric_agreement(runs, metrics)
    values = prk.evaluate(runs, metrics, by="system", per_user=True)
    assert_frame_equal(prk.metric_agreement_per_user(values), direct)
    # fallout is lower-is-better: read reversed, it orders the systems as ndcg does
    assert direct.filter(pl.col("metric_b") == "fallout@10")["tau_b"].to_list() == [1.0, 1.0]
    lazy = prk.metric_agreement(runs.lazy(), metrics)
    assert_frame_equal(lazy, direct)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"metrics": ["ndcg@10"]}, ValueError, r"at least 2 metrics, got 1"),
        ({"systems": ["a"]}, ValueError, r"need at least 2 systems"),
        ({"higher_is_better": {"zz": True}}, ValueError, r"higher_is_better names column"),
    ],
)
def test_agreement_errors(kwargs: dict[str, object], error: type[Exception], match: str) -> None:
    frame = per_user({"ndcg@10": {"a": A, "b": B}, "mrr@10": {"a": B, "b": A}})
    with pytest.raises(error, match=match):
        prk.metric_agreement_per_user(frame, **kwargs)  # type: ignore[arg-type]


def test_asl_curves_chart() -> None:
    pytest.importorskip("altair")
    result = prk.discriminative_power_per_user(HAND, test="tukey", n_resamples=100)
    chart = prk.plot.asl_curves(result)
    spec = chart.to_dict()
    assert len(spec["layer"]) == 2
    assert spec["layer"][1]["mark"]["type"] == "rule"
    with pytest.raises(ValueError, match=r"lacks column\(s\)"):
        prk.plot.asl_curves(result.summary)


def test_hand_example_discriminative_power_by_hand() -> None:
    # The unstudentized bootstrap on the 4-user example. c - a = 0, .2, 0, 0 (mean .05);
    # shifted: -.05, .15, -.05, -.05. A resample drawing user 2 k times has mean
    # .05 (k - 1): it reaches |.05| unless k = 1, P(k = 1) = 4 (1/4) (3/4)**3 = 27/64,
    # so the exact ASL is 37/64. b - a and c - b: the exact ASL over the 4**4 resamples.
    out = prk.discriminative_power_per_user(HAND, statistic="mean", n_resamples=40_000)
    asl = {(s, b): v for s, b, v in out.asl.select("system", "baseline", "asl").rows()}
    assert asl[("c", "a")] == pytest.approx(37 / 64, abs=0.01)
    index = np.array(list(itertools.product(range(4), repeat=4)))
    for (s, b), (x, y) in {("b", "a"): (B, A), ("c", "b"): (C, B)}.items():
        z = np.array(x) - np.array(y)
        shifted_means = (z - z.mean())[index].mean(axis=1)
        exact = np.mean(np.abs(shifted_means) >= abs(z.mean()) - 1e-12)
        assert asl[(s, b)] == pytest.approx(exact, abs=0.01)
    # no pair at or below 0.05: a discriminative power of 0 / 3
    assert min(asl.values()) > 0.05
    summary = out.summary.row(0, named=True)
    assert (summary["n_pairs"], summary["n_significant"]) == (3, 0)
    assert summary["discriminative_power"] == 0 / 3
