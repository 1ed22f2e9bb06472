"""Tests the private unit polars_rankeval._utils.stats on purpose: its kernels directly.

The bootstrap's interval, p-value and resampling weights, the multiple-testing
corrections and the per-block seeding, each against scipy / statsmodels or by hand;
``tests/analysis/test_compare.py`` tests them through ``prk.compare``.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

import polars_rankeval._utils.stats as _stats


# ----------------------------------------------------------------- bootstrap
def test_bca_formula_matches_scipy_internal(paired: dict[str, np.ndarray]) -> None:
    # The same bootstrap means in, the same interval out as scipy's BCa.
    from scipy.stats._resampling import _bca_interval

    d = (paired["b"] - paired["a"])[:, None]
    means = _stats.bootstrap_means(d, 5000, 0, "m")
    low, high = _stats.bootstrap_ci(d, means, 0.95, "bca")
    a1, a2, _ = _bca_interval(
        (d[:, 0],), np.mean, axis=-1, alpha=0.025, theta_hat_b=means[:, 0], batch=None, xp=np
    )
    expected = stats.quantile(means[:, 0], np.array([a1, a2]))
    assert (low[0], high[0]) == pytest.approx(tuple(expected), rel=1e-12)


def test_bootstrap_p_by_hand_and_the_poisson_weights() -> None:
    d = np.array([[1.0], [2.0], [3.0]])
    # shifted means |T* - 2| >= 2 only for the resamples (1,1,1) and (3,3,3)
    means = np.array([[1.0], [3.0], [2.0], [5 / 3]])
    assert _stats.bootstrap_p(d, means)[0] == pytest.approx((1 + 0) / (4 + 1))
    means = np.array([[0.0], [4.0], [2.0]])
    assert _stats.bootstrap_p(d, means)[0] == pytest.approx((1 + 2) / (3 + 1))
    # The Poisson weights: P(w = 0..5) = (95, 92, 49, 15, 4, 1) / 256, mean = var = 1.
    w = _stats._weights(np.arange(256, dtype=np.uint8)).astype(float)
    assert np.bincount(w.astype(int)).tolist() == [95, 92, 49, 15, 4, 1]
    assert (w.mean(), w.var()) == (1.0, 1.0)


# ----------------------------------------------------------------- corrections
@pytest.mark.parametrize(
    ("ours", "theirs"),
    [
        ("bonferroni", "bonferroni"),
        ("holm", "holm"),
        ("hochberg", "simes-hochberg"),
        ("bh", "fdr_bh"),
        ("by", "fdr_by"),
    ],
)
def test_corrections_equal_statsmodels(ours: str, theirs: str) -> None:
    from statsmodels.stats.multitest import multipletests

    rng = np.random.default_rng(11)
    p = np.concatenate([rng.random(15) ** 3, [0.01, 0.01, 0.2, 1.0]])  # ties included
    reject, expected, _, _ = multipletests(p, alpha=0.05, method=theirs)
    adjusted = _stats.adjust(p, ours)
    np.testing.assert_allclose(adjusted, expected, rtol=1e-12)
    np.testing.assert_array_equal(adjusted <= 0.05, reject)


def test_correction_hand_case_and_families() -> None:
    # holm on (0.01, 0.04, 0.03): sorted 0.01, 0.03, 0.04 -> 3 * 0.01, max(0.03, 2 * 0.03),
    # max(0.06, 1 * 0.04) = 0.03, 0.06, 0.06
    np.testing.assert_allclose(
        _stats.adjust(np.array([0.01, 0.04, 0.03]), "holm"), [0.03, 0.06, 0.06]
    )
    # bh: 3/1 * 0.01, 3/3 * 0.04, 3/2 * 0.03 -> step-up min: 0.03, 0.04, 0.04
    np.testing.assert_allclose(
        _stats.adjust(np.array([0.01, 0.04, 0.03]), "bh"), [0.03, 0.04, 0.04]
    )
    assert np.isnan(_stats.adjust(np.array([np.nan, 0.2]), "bonferroni")[0])
    assert _stats.adjust(np.array([np.nan, 0.2]), "bonferroni")[1] == pytest.approx(0.2)


def test_blocks_are_seeded_per_block() -> None:
    first = [g.integers(0, 10**9) for _, _, g in _stats.blocks(0, "m", "test", 40, 2**22)]
    assert len(first) == 10  # 4 resamples of 2**22 users per block of 2**24 values
    again = [g.integers(0, 10**9) for _, _, g in _stats.blocks(0, "m", "test", 40, 2**22)]
    assert first == again
    other = [g.integers(0, 10**9) for _, _, g in _stats.blocks(0, "m", "ci", 40, 2**22)]
    assert first != other
