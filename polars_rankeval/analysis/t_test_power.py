"""The power of the paired t test, and the smallest number of users that reaches a power.

The exact computations behind :func:`~polars_rankeval.sample_size`,
:func:`~polars_rankeval.achieved_power` and Sakai's topic set size design
(:mod:`polars_rankeval.analysis.topic_set_size`): the noncentral t distribution of
:mod:`scipy.stats`, and a search over the integers for the smallest ``n`` with a
property that is monotone in it. Kept apart from the reading of per-user values
(:mod:`polars_rankeval.analysis.power`) because they are plain numbers in, numbers out,
shared by both analyses and by the power chart.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, Literal

import numpy as np

from polars_rankeval._utils.stats import scipy_stats

__all__ = ["MAX_USERS", "t_power"]

Alternative = Literal["two-sided", "one-sided"]

#: The largest number of users searched: beyond it ``n_users`` is null (with a note).
MAX_USERS = 2**53


def t_power(
    n: Any, effect_size: float, *, alpha: float = 0.05, alternative: Alternative = "two-sided"
) -> np.ndarray:
    """Power of the paired t test with ``n`` users for a standardized difference ``effect_size``.

    ``effect_size`` is the true mean difference over the sd of the per-user differences
    (Cohen's d_z, >= 0). The test statistic has a noncentral t distribution with ``n - 1``
    degrees of freedom and noncentrality ``sqrt(n) * effect_size``; the power is its
    probability beyond the critical values: ``P(T > t_{1-alpha/2}) + P(T < -t_{1-alpha/2})``
    two-sided, ``P(T > t_{1-alpha})`` one-sided (in the direction of the difference).

    Parameters
    ----------
    n
        Users (an int or an array of ints >= 2).
    effect_size
        The standardized difference, >= 0.
    alpha
        Significance level in (0, 1).
    alternative
        ``"two-sided"`` (default) or ``"one-sided"``.

    Returns
    -------
    numpy.ndarray
        The power, one value per ``n``.

    Examples
    --------
    >>> from polars_rankeval.analysis.t_test_power import t_power
    >>> round(float(t_power(34, 0.5)[0]), 4)
    0.8078
    """
    st = scipy_stats("power needs scipy (the noncentral t distribution)")
    n = np.atleast_1d(np.asarray(n, dtype=np.float64))
    df = n - 1.0
    nc = np.sqrt(n) * effect_size
    if alternative == "two-sided":
        crit = st.t.ppf(1.0 - alpha / 2.0, df)
        # scipy's nct gives NaN for the far tail when the noncentrality is large (from
        # about 5 on). That tail, P(Z + nc < -crit S) with S >= 0, is at most
        # Phi(-nc) < 3e-7 there, beside a near tail of about 1: its normal
        # approximation Phi(-crit - nc) stands in.
        far = np.asarray(st.nct.cdf(-crit, df, nc), dtype=np.float64)
        far = np.where(np.isnan(far), st.norm.cdf(-crit - nc), far)
        return np.asarray(st.nct.sf(crit, df, nc) + far)
    return np.asarray(st.nct.sf(st.t.ppf(1.0 - alpha, df), df, nc))


def _smallest_n(ok: Callable[[int], bool], start: int, low: int = 2) -> int | None:
    """The smallest integer ``n >= low`` with ``ok(n)``, ``ok`` monotone; ``None`` past MAX_USERS.

    Doubling up from ``start`` (or bisecting down to ``low``), then bisection: about
    ``2 log2(n)`` evaluations.
    """
    start = max(low, min(start, MAX_USERS))
    if ok(start):
        if start == low or ok(low):
            return low
        bad, good = low, start
    else:
        bad, good = start, 2 * start
        while not ok(good):
            if good >= MAX_USERS:
                return None
            bad, good = good, min(2 * good, MAX_USERS)
    while good - bad > 1:
        mid = (bad + good) // 2
        bad, good = (bad, mid) if ok(mid) else (mid, good)
    return good


def _t_sample_size(
    effect_size: float, alpha: float, power: float, alternative: str
) -> tuple[int | None, float | None]:
    """(users, power at those users) of the paired t test; ``effect_size > 0``."""
    st = scipy_stats()
    za = st.norm.ppf(1.0 - (alpha / 2.0 if alternative == "two-sided" else alpha))
    zb = st.norm.ppf(power)
    guess = ((za + zb) / effect_size) ** 2
    start = int(min(math.ceil(guess), MAX_USERS)) if math.isfinite(guess) else MAX_USERS
    n = _smallest_n(
        lambda k: bool(t_power(k, effect_size, alpha=alpha, alternative=alternative)[0] >= power),  # type: ignore[arg-type]
        start,
    )
    if n is None:
        return None, None
    return n, float(t_power(n, effect_size, alpha=alpha, alternative=alternative)[0])  # type: ignore[arg-type]
