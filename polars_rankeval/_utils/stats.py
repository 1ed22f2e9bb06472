"""Paired significance tests, resampling, confidence intervals and p-value corrections.

The numeric kernels behind :func:`polars_rankeval.compare`. Everything works on a
matrix ``diffs`` of shape ``(n_users, n_pairs)`` (one column per compared pair of a
metric, rows the paired users in user order) or, for Tukey's HSD, on the matrix of
per-user values ``(n_users, n_systems)``.

Random numbers
--------------
Resamples are drawn in blocks of ``S = max(1, 2**24 // (n_users * width))``
consecutive resamples (``width`` 1, or the number of systems for Tukey), block ``b``
from its own PCG64 generator seeded by ``SeedSequence(seed, spawn_key=(h1, h2,
purpose, b))``, with ``h1, h2`` from a BLAKE2b hash of the metric's name and
``purpose`` 0 for the test and 1 for a bootstrap interval (see :func:`blocks`). The
draws therefore depend only on the seed, the metric's name, the number of paired
users and the block: not on the order of the metrics or systems in the call, on the
other pairs compared, or on where the per-user values were computed (in memory,
bucketed or on Spark: they are sorted by user first). All the pairs of one metric
share the resamples, as in a matched design. Memory is bounded by the block: about
``S x n_users`` values (128 MB of float64) at a time.

What a test can conclude with few users
---------------------------------------
One policy for every test (:func:`smallest_p`, applied in :func:`run_tests`), with n
the paired users and n' those whose difference for the pair is not zero:

- every difference zero: ``p = 1`` (no evidence of a difference), whatever the test;
- ``t``: needs n >= 2 and differences that vary (sd > 0), else ``p`` is null; any
  p > 0 can be reached;
- ``randomization``, ``sign``, ``wilcoxon``: sign-flip tests; the smallest p is
  ``2 / 2**n'`` (exact), so one user gives ``p = 1``. A p estimated from random sign
  flips, or Wilcoxon's normal approximation, is raised to that minimum;
- ``bootstrap``: needs differences that vary (else its resampling distribution is one
  point and ``p`` is null); n users give at most ``C(2n - 1, n)`` distinct resamples,
  so a p below ``1 / C(2n - 1, n)`` is not resolved and is raised to it (1/3 with 2
  users, 1/10 with 3);
- ``tukey``: a permutation test over the m systems; permuting every user's row alike
  keeps the range, so the exact p is at least ``(m!)**(1 - n'')`` (n'' users whose
  values differ between systems; ``2 / 2**n`` for 2 systems), and the estimate is
  raised to it;
- a resampling test also never reports less than ``1 / (R + 1)``.

:func:`run_tests` returns, per pair, the smallest p the test can reach and the reason
of a null p; ``compare`` writes them into its ``note`` column.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal, TextIO

import numpy as np

from polars_rankeval._utils.progress import Progress

TestName = Literal["t", "wilcoxon", "sign", "randomization", "bootstrap", "tukey"]
CorrectionName = Literal["none", "bonferroni", "holm", "hochberg", "bh", "by"]
CIMethod = Literal["auto", "bca", "percentile", "t", "none"]

TESTS: tuple[str, ...] = ("t", "wilcoxon", "sign", "randomization", "bootstrap", "tukey")
CORRECTIONS: tuple[str, ...] = ("none", "bonferroni", "holm", "hochberg", "bh", "by")
CI_METHODS: tuple[str, ...] = ("auto", "bca", "percentile", "t", "none")

#: Values (resamples x users x width) one resampling block holds; fixed, because the
#: block size is part of the random-number scheme.
BLOCK_VALUES = 2**24

#: Above this many paired users the bootstrap draws Poisson(1) weights instead of
#: multinomial counts (Chamandy et al. 2012); see :func:`bootstrap_means`.
POISSON_ABOVE = 50_000

_PURPOSE = {"test": 0, "ci": 1, "swap": 2}


def scipy_stats(
    purpose: str = "comparing systems needs scipy (t, normal and binomial distributions, "
    "the Wilcoxon test)",
) -> Any:
    """Import :mod:`scipy.stats`, or explain (``purpose``) which extra installs it."""
    try:
        import scipy.stats
    except ImportError as error:  # pragma: no cover - scipy is installed in the tests
        msg = f'{purpose}; install it with: pip install "polars-rankeval[compare]"'
        raise ImportError(msg) from error
    return scipy.stats


def _name_key(metric: str) -> tuple[int, int]:
    digest = hashlib.blake2b(metric.encode(), digest_size=8).digest()
    return int.from_bytes(digest[:4], "little"), int.from_bytes(digest[4:], "little")


def blocks(
    seed: int,
    metric: str,
    purpose: Literal["test", "ci", "swap"],
    n_resamples: int,
    n: int,
    width: int = 1,
) -> Iterator[tuple[int, int, np.random.Generator]]:
    """Blocks ``(first resample, size, generator)`` of one metric's resamples.

    ``size = max(1, BLOCK_VALUES // (n * width))``; block ``b`` is drawn from
    ``PCG64(SeedSequence(seed, spawn_key=(h1, h2, purpose, b)))``, ``h1, h2`` the two
    32-bit halves of BLAKE2b-64(metric name) and ``purpose`` 0 (test), 1 (interval) or
    2 (the user subsets of :func:`polars_rankeval.swap_rate`).
    """
    size = max(1, BLOCK_VALUES // max(1, n * width))
    key = (*_name_key(metric), _PURPOSE[purpose])
    for number, start in enumerate(range(0, n_resamples, size)):
        sequence = np.random.SeedSequence(seed, spawn_key=(*key, number))
        yield start, min(size, n_resamples - start), np.random.Generator(np.random.PCG64(sequence))


# ----------------------------------------------------------------------------- progress
def resampling_progress(total: int, enabled: bool, stream: TextIO | None = None) -> Progress:
    """Resamples done on stderr (``tqdm`` when installed), for long resampling runs.

    Shown only when ``enabled`` and there is something to resample; the line is rewritten
    in place (at most twice a second) wherever it goes.
    """
    return Progress(
        total,
        enabled and total > 0,
        stream,
        line=_resampling_line,
        unit="resample",
        desc="compare",
        interactive=True,
        every=0.5,
    )


def _resampling_line(report: Progress, label: str) -> str:
    elapsed = report.elapsed
    return (
        f"compare {label}: {report.done:,}/{report.total:,} resamples, "
        f"{elapsed:.0f}s elapsed, ~{report.left(elapsed):.0f}s left"
    )


def _tolerance(diffs: np.ndarray) -> np.ndarray:
    """Absolute tolerance on mean differences: ties of resampled and observed means."""
    scale = np.abs(diffs).mean(axis=0) if diffs.shape[0] else np.zeros(diffs.shape[1])
    return 1e-9 * np.maximum(scale, 1e-300)


# ------------------------------------------------------------------ randomization
def randomization(
    diffs: np.ndarray,
    n_resamples: int,
    seed: int,
    metric: str,
    progress: Progress | None = None,
) -> tuple[np.ndarray, int, str]:
    """Two-sided paired randomization (sign-flip) test of the mean difference.

    Only the n users with a non-zero difference in some pair are resampled (a zero
    difference is the same under either sign; the means still divide by all users).
    Returns ``(p_values, resamples used, scheme)``. When ``2**n <= n_resamples`` every
    sign vector is enumerated (``scheme="sign_flip_exact"``) and ``p = #{|T*| >= |T|} /
    2**n``, equal to ``scipy.stats.permutation_test(permutation_type="samples")``;
    otherwise (``"sign_flip"``) ``p = (1 + #{|T*| >= |T|}) / (R + 1)`` over R random
    sign vectors (Phipson & Smyth 2010: never 0). ``T`` is the mean difference; a
    resampled mean within 1e-9 x mean |d| of ``|T|`` counts as reaching it (ties are
    common with discrete metrics). Each resample's signs are the bits of
    ``ceil(n / 64)`` raw 64-bit words; ``sum(s d) = sum(d) - 2 bits @ d`` is one
    matrix product per block.
    """
    n_users, n_pairs = diffs.shape
    observed = np.abs(diffs.sum(axis=0) / n_users)
    tol = _tolerance(diffs)
    # A zero difference is the same under either sign: only the users with a non-zero
    # difference in some pair are resampled (T* still divides by all n_users).
    nonzero = np.any(diffs != 0, axis=1)
    if not nonzero.all():
        diffs = np.asfortranarray(diffs[nonzero])
    n = diffs.shape[0]
    total = diffs.sum(axis=0)
    if n <= 30 and 2**n <= n_resamples:
        codes = np.arange(2**n, dtype=np.int64)
        signs = ((codes[:, None] >> np.arange(n, dtype=np.int64)) & 1).astype(np.float64)
        flipped = (total - 2.0 * (signs @ diffs)) / n_users
        count = (np.abs(flipped) >= observed - tol).sum(axis=0)
        if progress is not None:
            progress.step(label=metric, n=n_resamples)
        return count / 2**n, 2**n, "sign_flip_exact"
    words = (n + 63) // 64
    count = np.zeros(n_pairs, dtype=np.int64)
    for _, size, rng in blocks(seed, metric, "test", n_resamples, n):
        raw = rng.bit_generator.random_raw(size * words).astype("<u8", copy=False)
        bits = np.unpackbits(
            raw.view(np.uint8).reshape(size, words * 8), axis=1, count=n, bitorder="little"
        )
        flipped = (total - 2.0 * (bits.astype(np.float64) @ diffs)) / n_users
        count += (np.abs(flipped) >= observed - tol).sum(axis=0)
        if progress is not None:
            progress.step(label=metric, n=size)
    return (count + 1) / (n_resamples + 1), n_resamples, "sign_flip"


# ------------------------------------------------------------------ bootstrap
#: Byte thresholds of the bootstrap weights above POISSON_ABOVE users: a uniform byte
#: u gives the weight #{t in _WEIGHT_STEPS: u >= t}, so P(w = 0..5) = (95, 92, 49, 15,
#: 4, 1) / 256 -- Poisson(1) rounded to 1/256 with mean and variance exactly 1 (third
#: central moment 0.96 against 1).
_WEIGHT_STEPS = (95, 187, 236, 251, 255)


def _weights(raw: np.ndarray) -> np.ndarray:
    """Bootstrap weights from uniform bytes (see ``_WEIGHT_STEPS``)."""
    weights = (raw >= _WEIGHT_STEPS[0]).astype(np.uint8)
    for step in _WEIGHT_STEPS[1:]:
        weights += raw >= step
    return weights


def _poisson_weights(rng: np.random.Generator, size: int, n: int) -> np.ndarray:
    """``(size, n)`` Poisson(1)-like bootstrap weights from one block's raw bytes."""
    raw = rng.bit_generator.random_raw((size * n + 7) // 8).astype("<u8", copy=False)
    weights = _weights(raw.view(np.uint8)[: size * n]).astype(np.float64)
    return weights.reshape(size, n)


def bootstrap_scheme(n: int) -> str:
    """``"multinomial"`` (the classical bootstrap) up to POISSON_ABOVE users, else ``"poisson"``."""
    return "multinomial" if n <= POISSON_ABOVE else "poisson"


def bootstrap_means(
    diffs: np.ndarray,
    n_resamples: int,
    seed: int,
    metric: str,
    purpose: Literal["test", "ci"] = "test",
    progress: Progress | None = None,
) -> np.ndarray:
    """Paired bootstrap: the mean of each column over ``n_resamples`` resamples of users.

    Returns ``(n_resamples, n_pairs)``; every pair of the metric uses the same
    resamples. Up to ``POISSON_ABOVE`` users it is the classical bootstrap: n user
    indices drawn uniformly with replacement (``Generator.integers``), the mean of the
    drawn differences. Above, it is the Poisson bootstrap (Hanley & MacGibbon 2006;
    Chamandy et al. 2012): each user gets an independent weight w with Poisson(1)'s
    probabilities rounded to 1/256 (mean and variance exactly 1; from one uniform byte,
    see ``_WEIGHT_STEPS``), and the resampled mean is ``sum(w d) / sum(w)``: the same
    large-sample distribution as the multinomial counts, but one matrix product per
    block instead of a gather per user and pair.
    """
    n, n_pairs = diffs.shape
    out = np.empty((n_resamples, n_pairs), dtype=np.float64)
    poisson = bootstrap_scheme(n) == "poisson"
    label = metric if purpose == "test" else f"{metric} (interval)"
    for start, size, rng in blocks(seed, metric, purpose, n_resamples, n):
        if poisson:
            weights = _poisson_weights(rng, size, n)
            total = weights.sum(axis=1)
            total[total == 0] = np.nan
            out[start : start + size] = (weights @ diffs) / total[:, None]
        else:
            index = rng.integers(0, n, size=(size, n), dtype=np.int64)
            for j in range(n_pairs):
                out[start : start + size, j] = np.take(diffs[:, j], index).mean(axis=1)
        if progress is not None:
            progress.step(label=label, n=size)
    return out


def bootstrap_p(diffs: np.ndarray, means: np.ndarray) -> np.ndarray:
    """Two-sided bootstrap p-value of a zero mean difference (shift method).

    The bootstrap distribution is centred on the null: ``p = (1 + #{|T*_b - T| >= |T|})
    / (B + 1)`` (Efron & Tibshirani 1993, 16.4; Sakai 2006).
    """
    observed = diffs.mean(axis=0)
    tol = _tolerance(diffs)
    count = (np.abs(means - observed) >= np.abs(observed) - tol).sum(axis=0)
    return (count + 1) / (means.shape[0] + 1)


def bootstrap_t(
    diffs: np.ndarray,
    n_resamples: int,
    seed: int,
    metric: str,
    progress: Progress | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Studentized paired bootstrap test (Sakai 2006): ASLs and the null |t| values.

    The differences ``z`` of a pair are shifted to a zero mean, ``w = z - mean(z)``
    (the null hypothesis made true); each resample ``w*`` of the users gives ``t(w*) =
    mean(w*) / (sd(w*) / sqrt(n))`` (sd with ddof 1), and the two-sided achieved
    significance level of the observed ``t(z)`` is ``(1 + #{|t(w*)| >= |t(z)|}) / (B +
    1)`` (Sakai counts ``#{...} / B``, which can be 0; the +1 makes it a p-value that
    is never 0, as for every resampling test here, Phipson & Smyth 2010). The users are
    drawn exactly as :func:`bootstrap_means` draws them (same blocks, generators and
    scheme: multinomial counts, or Poisson(1) weights above ``POISSON_ABOVE`` users,
    where a resample of total weight W has ``t = mean_w / sqrt(var_w / W)``, ``var_w``
    the weighted variance with W - 1 degrees of freedom). A resample whose sd is 0 has
    ``|t| = inf`` (or NaN when its mean is 0 too, which never counts).

    Returns ``(p, |t*|)``: the ASL per pair and the ``(n_resamples, n_pairs)`` null
    values, from which :func:`polars_rankeval.discriminative_power` reads the
    difference required.
    """
    n, n_pairs = diffs.shape
    shifted = np.asfortranarray(diffs - diffs.mean(axis=0))
    out = np.empty((n_resamples, n_pairs), dtype=np.float64)
    poisson = bootstrap_scheme(n) == "poisson"
    squared = shifted**2 if poisson else None
    with np.errstate(divide="ignore", invalid="ignore"):
        for start, size, rng in blocks(seed, metric, "test", n_resamples, n):
            if poisson:
                weights = _poisson_weights(rng, size, n)
                total = weights.sum(axis=1)[:, None]
                mean = (weights @ shifted) / total
                var = ((weights @ squared) / total - mean**2) * total / (total - 1.0)
                out[start : start + size] = np.abs(mean / np.sqrt(np.maximum(var, 0.0) / total))
            else:
                index = rng.integers(0, n, size=(size, n), dtype=np.int64)
                for j in range(n_pairs):
                    drawn = np.take(shifted[:, j], index)
                    mean = drawn.mean(axis=1)
                    sd = drawn.std(axis=1, ddof=1)
                    out[start : start + size, j] = np.abs(mean / (sd / math.sqrt(n)))
            if progress is not None:
                progress.step(label=metric, n=size)
        observed = np.abs(diffs.mean(axis=0) / (diffs.std(axis=0, ddof=1) / math.sqrt(n)))
    count = (out >= observed * (1.0 - 1e-9)).sum(axis=0)
    return (count + 1) / (n_resamples + 1), out


def bootstrap_ci(
    diffs: np.ndarray, means: np.ndarray, confidence: float, method: Literal["bca", "percentile"]
) -> tuple[np.ndarray, np.ndarray]:
    """Percentile or BCa interval of the mean difference from bootstrap means.

    BCa follows Efron & Tibshirani (1993) 14.3 as ``scipy.stats.bootstrap`` does: bias
    ``z0 = Phi^-1((#{T* < T} + #{T* <= T}) / 2B)`` and acceleration, for the mean,
    ``a = sum (d - mean)^3 / (6 (sum (d - mean)^2)^1.5)`` (the jackknife formula in
    closed form); the interval is the quantiles (linear interpolation) of the bootstrap
    means at the adjusted levels.
    """
    st = scipy_stats()
    alpha = (1.0 - confidence) / 2.0
    n_pairs = diffs.shape[1]
    low = np.full(n_pairs, np.nan)
    high = np.full(n_pairs, np.nan)
    for j in range(n_pairs):
        column = means[:, j]
        if method == "percentile":
            low[j], high[j] = np.quantile(column, [alpha, 1.0 - alpha])
            continue
        theta = diffs[:, j].mean()
        share = ((column < theta).sum() + (column <= theta).sum()) / (2.0 * column.size)
        z0 = st.norm.ppf(share)
        centred = diffs[:, j] - theta
        den = (centred**2).sum()
        accel = (centred**3).sum() / (6.0 * den**1.5) if den > 0 else 0.0
        levels = []
        for z in (st.norm.ppf(alpha), st.norm.ppf(1.0 - alpha)):
            num = z0 + z
            levels.append(st.norm.cdf(z0 + num / (1.0 - accel * num)))
        if not np.all(np.isfinite(levels)):
            continue
        low[j], high[j] = np.quantile(column, levels)
    return low, high


# ------------------------------------------------------------------ tukey
def tukey_ranges(
    values: np.ndarray,
    n_resamples: int,
    seed: int,
    metric: str,
    progress: Progress | None = None,
) -> np.ndarray:
    """The randomized Tukey HSD null distribution: the range of permuted system means.

    Under the null the systems are exchangeable within a user: each resample permutes
    every user's row of ``values`` (n_users x m systems) at random and records the
    range (max - min) of the m permuted system means (``n_resamples`` of them). A
    permutation is one of the m! (``Generator.integers``) for m <= 7, else the argsort
    of m uniform keys. Costs O(R n m). The draws depend on the order of the columns:
    :func:`polars_rankeval.compare_per_user` passes the systems sorted by name.
    """
    import itertools

    n, m = values.shape
    table = np.array(list(itertools.permutations(range(m))), dtype=np.intp) if m <= 7 else None
    ranges = np.empty(n_resamples, dtype=np.float64)
    rows = np.arange(n, dtype=np.intp)[None, :, None]
    for start, size, rng in blocks(seed, metric, "test", n_resamples, n, width=m):
        if table is not None:
            columns = table[rng.integers(0, table.shape[0], size=(size, n))]
        else:
            columns = np.argsort(rng.random((size, n, m)), axis=2)
        permuted = values[rows, columns].mean(axis=1)  # (size, m)
        ranges[start : start + size] = permuted.max(axis=1) - permuted.min(axis=1)
        if progress is not None:
            progress.step(label=metric, n=size)
    return ranges


def tukey_p(values: np.ndarray, ranges: np.ndarray) -> np.ndarray:
    """``p[i, j] = (1 + #{range* >= |mean_i - mean_j|}) / (R + 1)`` from :func:`tukey_ranges`."""
    means = values.mean(axis=0)
    observed = np.abs(means[:, None] - means[None, :])
    tol = 1e-9 * max(float(np.abs(values).mean()), 1e-300)
    count = (ranges[:, None, None] >= observed[None] - tol).sum(axis=0)
    return np.asarray((count + 1) / (ranges.shape[0] + 1))


def tukey_hsd(
    values: np.ndarray,
    n_resamples: int,
    seed: int,
    metric: str,
    progress: Progress | None = None,
) -> np.ndarray:
    """Randomized Tukey HSD (Carterette 2012): p-values of all pairs of systems.

    ``p[i, j] = (1 + #{range* >= |mean_i - mean_j|}) / (R + 1)`` over the ranges of
    :func:`tukey_ranges`: the family-wise error over all pairs is controlled by
    construction. The draws depend on the order of the columns:
    :func:`polars_rankeval.compare_per_user` passes the systems sorted by name, so the
    p-values do not depend on the order of ``systems=``.
    """
    return tukey_p(values, tukey_ranges(values, n_resamples, seed, metric, progress))


# ------------------------------------------------------------------ analytic tests
def t_test(diffs: np.ndarray) -> np.ndarray:
    """Two-sided paired Student t (``scipy.stats.ttest_rel``) for each column."""
    import warnings

    st = scipy_stats()
    with np.errstate(divide="ignore", invalid="ignore"), warnings.catch_warnings():
        # Nearly equal differences: scipy warns of precision loss; run_tests nulls the p.
        warnings.simplefilter("ignore", RuntimeWarning)
        result = st.ttest_1samp(diffs, 0.0, axis=0)
    return np.asarray(result.pvalue, dtype=np.float64)


def t_interval(diffs: np.ndarray, confidence: float) -> tuple[np.ndarray, np.ndarray]:
    """Student t interval of the mean difference: mean -+ t_{(1+c)/2, n-1} sd / sqrt(n)."""
    st = scipy_stats()
    n = diffs.shape[0]
    mean = diffs.mean(axis=0)
    if n < 2:
        nan = np.full(diffs.shape[1], np.nan)
        return nan, nan.copy()
    half = st.t.ppf((1.0 + confidence) / 2.0, n - 1) * diffs.std(axis=0, ddof=1) / math.sqrt(n)
    return mean - half, mean + half


def wilcoxon(diffs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``scipy.stats.wilcoxon`` with its defaults, and the matched-pairs rank-biserial r.

    ``r = (R+ - R-) / (R+ + R-)``, with R+ and R- the sums of the ranks of |d| (average
    ranks for ties) over the positive and negative non-zero differences (Kerby 2014);
    zero differences are dropped as by ``zero_method="wilcox"``.
    """
    st = scipy_stats()
    p = np.full(diffs.shape[1], np.nan)
    r = np.full(diffs.shape[1], np.nan)
    for j in range(diffs.shape[1]):
        d = diffs[:, j]
        nonzero = d[d != 0]
        if nonzero.size == 0:
            continue
        p[j] = st.wilcoxon(d).pvalue
        ranks = st.rankdata(np.abs(nonzero))
        plus = ranks[nonzero > 0].sum()
        minus = ranks[nonzero < 0].sum()
        r[j] = (plus - minus) / (plus + minus)
    return p, r


def sign_test(diffs: np.ndarray) -> np.ndarray:
    """Two-sided sign test: exact binomial(#positive, #non-zero, 1/2); zeros dropped."""
    st = scipy_stats()
    p = np.full(diffs.shape[1], np.nan)
    for j in range(diffs.shape[1]):
        positive = int((diffs[:, j] > 0).sum())
        nonzero = positive + int((diffs[:, j] < 0).sum())
        if nonzero:
            p[j] = st.binomtest(positive, nonzero, 0.5).pvalue
    return p


def cohen_d(diffs: np.ndarray) -> np.ndarray:
    """Paired Cohen's d (d_z): mean difference / sample std (ddof=1) of the differences.

    Undefined (NaN) when the differences do not vary (:func:`differences_vary`): an sd
    of rounding errors would give an arbitrary, huge d.
    """
    if diffs.shape[0] < 2:
        return np.full(diffs.shape[1], np.nan)
    sd = diffs.std(axis=0, ddof=1)
    ok = differences_vary(diffs) & (sd > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(ok, diffs.mean(axis=0) / np.where(ok, sd, 1.0), np.nan)


# ------------------------------------------------------------------ corrections
def adjust(p: np.ndarray, method: str) -> np.ndarray:
    """Adjusted p-values of one family (NaN entries stay NaN and are not counted).

    ``bonferroni`` min(1, m p); ``holm`` step-down max_{j<=i} (m - j + 1) p_(j);
    ``hochberg`` step-up min_{j>=i} (m - j + 1) p_(j); ``bh`` (Benjamini-Hochberg)
    min_{j>=i} m p_(j) / j; ``by`` (Benjamini-Yekutieli) bh times sum_{k<=m} 1/k; all
    capped at 1 (statsmodels ``multipletests`` ``bonferroni``, ``holm``,
    ``simes-hochberg``, ``fdr_bh``, ``fdr_by``).
    """
    out = np.full(p.shape, np.nan)
    keep = np.flatnonzero(~np.isnan(p))
    m = keep.size
    if m == 0:
        return out
    values = p[keep]
    if method == "none":
        adjusted = values.copy()
    elif method == "bonferroni":
        adjusted = values * m
    else:
        order = np.argsort(values, kind="stable")
        ranked = values[order]
        position = np.arange(1, m + 1)
        if method == "holm":
            stepped = np.maximum.accumulate((m - position + 1) * ranked)
        elif method == "hochberg":
            stepped = np.minimum.accumulate(((m - position + 1) * ranked)[::-1])[::-1]
        elif method in ("bh", "by"):
            factor = float(np.sum(1.0 / position)) if method == "by" else 1.0
            stepped = np.minimum.accumulate((factor * m * ranked / position)[::-1])[::-1]
        else:  # pragma: no cover - checked by the caller
            msg = f"correction must be one of {sorted(CORRECTIONS)}, got {method!r}"
            raise ValueError(msg)
        adjusted = np.empty(m)
        adjusted[order] = stepped
    out[keep] = np.minimum(adjusted, 1.0)
    return out


@dataclass
class PairStats:
    """The statistics of the pairs of one metric (arrays over pairs).

    ``smallest_p``: the smallest p-value the test can reach on these users (see the
    module docstring); ``raised``: the p-value was below it and was raised to it;
    ``note``: why ``p_value`` is null or 1 whatever the data (``None`` otherwise).
    """

    p_value: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray
    effect_size: np.ndarray
    n_resamples: int | None
    resampling: str | None
    smallest_p: np.ndarray
    raised: np.ndarray
    note: list[str | None]


#: The reasons of a null p-value (see the module docstring).
NEEDS_VARIATION = {
    "t": "t needs at least 2 users whose differences vary (sd > 0)",
    "bootstrap": (
        "the bootstrap needs users whose differences vary: with {n} user(s) and one "
        "difference its resamples are all the same"
    ),
}


def differences_vary(diffs: np.ndarray) -> np.ndarray:
    """Per column: the differences are not all equal.

    Differences equal up to rounding (``x + 0.1 - x``) do not vary: the tolerance is
    the resampling tests' one for ties.
    """
    if diffs.shape[0] == 0:
        return np.zeros(diffs.shape[1], dtype=bool)
    return np.asarray(np.ptp(diffs, axis=0) > _tolerance(diffs))


def distinct_resamples(n: int) -> float:
    """``C(2n - 1, n)``: the distinct bootstrap resamples (multisets) of n users."""
    if n >= 40:  # C(79, 40) > 1e22: beyond any number of resamples
        return math.inf
    return float(math.comb(2 * n - 1, n)) if n > 0 else 1.0


def smallest_p(
    test: str,
    values: np.ndarray,
    diffs: np.ndarray,
    n_resamples: int,
) -> tuple[np.ndarray, list[str | None]]:
    """Per pair: the smallest p ``test`` can reach, and why it has no p (or ``None``).

    See the module docstring for the policy. ``values`` (users x systems) is read by
    Tukey only.
    """
    n, n_pairs = diffs.shape
    nonzero = (diffs != 0).sum(axis=0)
    varies = differences_vary(diffs)
    floor = np.zeros(n_pairs)
    reason: list[str | None] = [None] * n_pairs
    if test in ("t", "bootstrap"):
        for j in np.flatnonzero(~varies & (nonzero > 0)):
            reason[j] = NEEDS_VARIATION[test].format(n=n)
        if test == "bootstrap":
            floor[:] = 1.0 / distinct_resamples(n)
    elif test == "tukey":
        moving = int((values.max(axis=1) > values.min(axis=1)).sum())
        log_perms = math.lgamma(values.shape[1] + 1)
        floor[:] = math.exp(max(-700.0, (1 - moving) * log_perms))
    else:  # the sign-flip tests
        floor = np.ldexp(2.0, -nonzero.astype(np.int64))
    if test in ("randomization", "bootstrap", "tukey"):
        floor = np.maximum(floor, 1.0 / (n_resamples + 1))
    return np.minimum(floor, 1.0), reason


def conclude(
    test: str, values: np.ndarray, diffs: np.ndarray, p: np.ndarray, n_resamples: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[str | None]]:
    """What the test can conclude on these users: the policy applied to raw p-values.

    Returns ``(p, smallest p, raised, note)`` per pair (see the module docstring): a p
    below the smallest the test can reach is raised to it, a p the test cannot give is
    null, and a pair whose differences are all zero has p = 1.
    """
    floor, note = smallest_p(test, values, diffs, n_resamples)
    raised = p < floor
    p = np.maximum(p, floor)  # NaN (undefined) stays NaN
    p[[r is not None for r in note]] = np.nan
    zero = np.all(diffs == 0, axis=0) & (diffs.shape[0] > 0)
    p = np.where(zero, 1.0, p)
    floor = np.where(zero, 1.0, floor)
    raised &= ~zero
    for j in np.flatnonzero(zero):
        note[j] = "every difference is zero: p = 1"
    return p, floor, raised, note


def run_tests(
    values: np.ndarray,
    pairs: list[tuple[int, int]],
    *,
    test: str,
    ci: str,
    confidence: float,
    n_resamples: int,
    seed: int,
    metric: str,
    progress: Progress | None,
) -> PairStats:
    """Test every (system, baseline) column pair of ``values`` (n_users x m systems)."""
    # Column-major: every column is contiguous, so its sums (pairwise summation) do not
    # depend on which other pairs or systems are in the call.
    values = np.asfortranarray(values)
    diffs = np.asfortranarray(np.stack([values[:, a] - values[:, b] for a, b in pairs], axis=1))
    n_pairs = len(pairs)
    effect = cohen_d(diffs)
    used: int | None = None
    scheme: str | None = None
    boot: np.ndarray | None = None
    if test == "t":
        p = t_test(diffs)
    elif test == "wilcoxon":
        p, effect = wilcoxon(diffs)
    elif test == "sign":
        p = sign_test(diffs)
    elif test == "randomization":
        p, used, scheme = randomization(diffs, n_resamples, seed, metric, progress)
    elif test == "bootstrap":
        boot = bootstrap_means(diffs, n_resamples, seed, metric, "test", progress)
        p = bootstrap_p(diffs, boot)
        used, scheme = n_resamples, bootstrap_scheme(diffs.shape[0])
    else:  # tukey
        table = tukey_hsd(values, n_resamples, seed, metric, progress)
        p = np.array([table[a, b] for a, b in pairs])
        used, scheme = n_resamples, "permutation"
    p, floor, raised, note = conclude(test, values, diffs, p, n_resamples)
    if ci == "t":
        low, high = t_interval(diffs, confidence)
    elif ci in ("bca", "percentile"):
        if boot is None:
            boot = bootstrap_means(diffs, n_resamples, seed, metric, "ci", progress)
        low, high = bootstrap_ci(diffs, boot, confidence, ci)  # type: ignore[arg-type]
    else:
        low, high = np.full(n_pairs, np.nan), np.full(n_pairs, np.nan)
    return PairStats(p, low, high, effect, used, scheme, floor, raised, note)


def resamples_needed(test: str, ci: str, n_users: int, n_resamples: int) -> int:
    """Resamples one metric will draw (for the progress total)."""
    total = 0
    if test in ("randomization", "bootstrap", "tukey"):
        total += n_resamples
    if ci in ("bca", "percentile") and test != "bootstrap":
        total += n_resamples
    return total
