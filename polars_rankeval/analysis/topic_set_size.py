"""``topic_set_size``: Sakai's topic set size design, for one pair of systems or several.

How many topics (users) a test collection needs to meet one statistical requirement
(T. Sakai, "Topic set size design", Information Retrieval Journal 19(3), 2016, after
Nagata 2003): a paired t test's power for a minimum detectable difference, a one-way
ANOVA's power for a minimum detectable range over several systems, or a cap on the
expected width of the interval of a mean difference. The variance is given or
estimated from past per-user values as Sakai does: the residual variance of a two-way
ANOVA without replication (systems x users), or of a one-way ANOVA. The answers are
exact (the noncentral t and F distributions of :mod:`scipy.stats`); the search over
the integers is :mod:`polars_rankeval.analysis.t_test_power`'s and the reading of the
data :mod:`polars_rankeval.analysis.power`'s.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Literal

import polars as pl

from polars_rankeval._utils.constraints import (
    Integer,
    ListOf,
    Number,
    Options,
    Spec,
    validate_params,
)
from polars_rankeval._utils.stats import scipy_stats
from polars_rankeval._utils.types import check_choice, integer
from polars_rankeval.analysis.power import (
    DATA,
    PER_USER,
    PROBABILITY,
    _evaluated,
    _positive,
    _positives,
    _probability,
    _wide,
)
from polars_rankeval.analysis.t_test_power import MAX_USERS, _smallest_n, _t_sample_size
from polars_rankeval.metrics.grammar import MetricsArg
from polars_rankeval.metrics.params import Interval

__all__ = [
    "DESIGNS",
    "TOPIC_SET_COLUMNS",
    "VARIANCE_ESTIMATES",
    "topic_set_size",
    "topic_set_size_per_user",
]

Design = Literal["anova", "ci", "paired_t"]
VarianceEstimate = Literal["one_way", "two_way"]
_POSITIVE = Number(Interval(0, None, closed="neither"))
_DESIGN: dict[str, Spec] = {
    "design": Options.of(Design),
    "min_diff": [_POSITIVE, ListOf(_POSITIVE, what="a list of numbers > 0"), None],
    "half_width": [_POSITIVE, ListOf(_POSITIVE, what="a list of numbers > 0"), None],
    "n_systems": [Integer(Interval(2, None)), None],
    "alpha": PROBABILITY,
    "power": PROBABILITY,
    "variance_estimate": Options.of(VarianceEstimate),
}
DESIGNS: tuple[str, ...] = ("anova", "ci", "paired_t")
VARIANCE_ESTIMATES: tuple[str, ...] = ("one_way", "two_way")

#: The columns of :func:`topic_set_size`, in order.
TOPIC_SET_COLUMNS: tuple[str, ...] = (
    "metric",
    "design",
    "n_systems",
    "min_diff",
    "half_width",
    "variance",
    "variance_estimate",
    "n_observed",
    "alpha",
    "power",
    "n_users",
    "power_at_n",
    "half_width_at_n",
    "note",
)


@validate_params({**DATA, **_DESIGN, "variance": [Number(Interval(0, None)), None]})
def topic_set_size(
    data: Any = None,
    metrics: MetricsArg | None = None,
    *,
    design: Design = "paired_t",
    min_diff: float | Sequence[float] | None = None,
    half_width: float | Sequence[float] | None = None,
    variance: float | None = None,
    n_systems: int | None = None,
    alpha: float = 0.05,
    power: float = 0.8,
    variance_estimate: VarianceEstimate = "two_way",
    by: str = "system",
    systems: Sequence[Any] | None = None,
    **evaluate_options: Any,
) -> pl.DataFrame:
    """Sakai's topic set size design: the users (topics) a test collection needs.

    Three designs (Sakai 2016, "Topic set size design", Information Retrieval Journal
    19(3); after Nagata 2003), each the smallest integer ``n >= 2`` that meets its
    requirement, computed exactly:

    - ``"paired_t"``: a two-sided paired t test detects a mean difference of
      ``min_diff`` (Sakai's minD_t) with power ``power``; ``variance`` is that of the
      per-user differences (sigma_t^2). The same answer as :func:`polars_rankeval.sample_size` with
      ``delta=min_diff, sd=sqrt(variance)``.
    - ``"anova"``: a one-way ANOVA over ``n_systems`` systems (m) detects a range
      ``max - min`` of the system means of ``min_diff`` (minD) with power ``power``;
      ``variance`` is the within-system variance (sigma^2). The power is that of the
      noncentral F with ``m - 1`` and ``m (n - 1)`` degrees of freedom and
      noncentrality ``lambda = n minD^2 / (2 sigma^2)``: the least favourable means
      with that range (two systems at +-minD/2 from the rest), so every configuration
      with a range of at least minD has at least this power.
    - ``"ci"``: the expected half-width of the ``1 - alpha`` t interval of a mean
      difference is at most ``half_width`` (Sakai's cap delta on the width is ``2 x
      half_width``); ``variance`` as for ``paired_t``. No power is involved.

    From data, the variance is estimated as Sakai does from a past topic-by-run
    matrix: ``V_E`` of a two-way ANOVA without replication (systems x users, the
    default, ``variance_estimate="two_way"``: the user effect removed) or the
    within-system mean square of a one-way ANOVA (``"one_way"``), over the users with
    a value for every system; ``anova`` takes ``V_E`` and the paired designs
    ``2 V_E``, the variance of a difference of two systems under that model.

    Parameters
    ----------
    data
        The long frame with a ``by`` column naming the systems (as for
        :func:`polars_rankeval.compare`); ``None`` with ``variance=``.
    metrics
        Per-user metrics (with ``data``).
    design
        ``"paired_t"`` (default), ``"anova"`` or ``"ci"``.
    min_diff
        The minimum detectable difference (``paired_t``) or range (``anova``), > 0, or
        a sequence of them (one row each).
    half_width
        The largest expected half-width (``ci``), > 0, or a sequence of them.
    variance
        The design's variance (see above), > 0, without ``data``.
    n_systems
        The systems of the ANOVA (m >= 2); from data, default the systems compared.
    alpha
        Significance level in (0, 1) (the interval's level is ``1 - alpha``).
    power
        Target power in (0, 1) (1 - beta), ``paired_t`` and ``anova``.
    variance_estimate
        ``"two_way"`` (default) or ``"one_way"``, with data.
    by, systems
        The column naming the systems and the systems used (default: all).
    **evaluate_options
        Passed to :func:`polars_rankeval.evaluate`.

    Returns
    -------
    polars.DataFrame
        One row per (metric, requirement): ``metric`` (null without data),
        ``design``, ``n_systems`` (2 for the paired designs), ``min_diff``,
        ``half_width`` (null where the design has none), ``variance`` (the design's),
        ``variance_estimate`` (``"given"``, ``"two_way"`` or ``"one_way"``),
        ``n_observed`` (users the variance is estimated from), ``alpha``, ``power``
        (null for ``ci``), ``n_users`` (the answer), ``power_at_n`` (the exact power
        with ``n_users``), ``half_width_at_n`` (``ci``: its expected half-width),
        ``note`` (why ``n_users`` is null: a variance of 0 or undefined).

    Examples
    --------
    Ten systems, a range of 0.1 between the best and the worst, sigma^2 = 0.05:

    >>> import polars_rankeval as prk
    >>> prk.topic_set_size(design="anova", min_diff=0.1, variance=0.05, n_systems=10
    ...                    ).select("design", "n_systems", "min_diff", "n_users")
    shape: (1, 4)
    ┌────────┬───────────┬──────────┬─────────┐
    │ design ┆ n_systems ┆ min_diff ┆ n_users │
    │ ---    ┆ ---       ┆ ---      ┆ ---     │
    │ str    ┆ i64       ┆ f64      ┆ i64     │
    ╞════════╪═══════════╪══════════╪═════════╡
    │ anova  ┆ 10        ┆ 0.1      ┆ 158     │
    └────────┴───────────┴──────────┴─────────┘
    """
    check_choice("design", design, DESIGNS)
    check_choice("variance_estimate", variance_estimate, VARIANCE_ESTIMATES)
    targets = _targets(design, min_diff, half_width)
    alpha = _probability("alpha", alpha)
    power = _probability("power", power)
    m = _n_systems(design, n_systems, required=data is None)
    if data is None:
        if variance is None:
            msg = "topic_set_size() needs variance= (the design's variance) or data"
            raise TypeError(msg)
        if metrics is not None:
            msg = f"metrics= is read from data; without data, got metrics={metrics!r}"
            raise TypeError(msg)
        v = _positive("variance", variance)
        records = [
            _design_row(None, design, m or 2, t, v, "given", None, alpha, power) for t in targets
        ]
        return _design_frame(records)
    if variance is not None:
        msg = "topic_set_size() takes variance= or data, not both: with data it is estimated"
        raise TypeError(msg)
    if metrics is None:
        msg = "topic_set_size() with data needs metrics (e.g. ['ndcg@10'])"
        raise TypeError(msg)
    per_user, names, user = _evaluated("topic_set_size", data, metrics, by, evaluate_options)
    return topic_set_size_per_user(
        per_user,
        names,
        design=design,
        min_diff=min_diff,
        half_width=half_width,
        n_systems=n_systems,
        alpha=alpha,
        power=power,
        variance_estimate=variance_estimate,
        by=by,
        user=user,
        systems=systems,
    )


@validate_params({**PER_USER, **_DESIGN})
def topic_set_size_per_user(
    per_user: Any,
    metrics: Sequence[str] | str | None = None,
    *,
    design: Design = "paired_t",
    min_diff: float | Sequence[float] | None = None,
    half_width: float | Sequence[float] | None = None,
    n_systems: int | None = None,
    alpha: float = 0.05,
    power: float = 0.8,
    variance_estimate: VarianceEstimate = "two_way",
    by: str = "system",
    user: str = "user",
    systems: Sequence[Any] | None = None,
) -> pl.DataFrame:
    """Sakai's topic set size design from a per-user frame the caller already has.

    The variance is estimated per metric over the users with a value for every
    system, in one lazy query (see :func:`topic_set_size`).

    Parameters
    ----------
    per_user
        One row per (system, user) with one numeric column per metric, a DataFrame or
        a LazyFrame; at least 2 systems.
    metrics
        The metric columns (default: every column except ``by`` and ``user``).
    design, min_diff, half_width, n_systems, alpha, power, variance_estimate
        As for :func:`topic_set_size`.
    by, user, systems
        The columns naming the system and the user; the systems used (default: all).

    Returns
    -------
    polars.DataFrame
        As :func:`topic_set_size`, one row per (metric, requirement).

    Examples
    --------
    Users 1 and 2 differ by 0.2, and so do the systems on every user but one: the
    residual of the two-way ANOVA is small.

    >>> import polars as pl
    >>> import polars_rankeval as prk
    >>> per_user = pl.DataFrame({
    ...     "system": ["a"] * 3 + ["b"] * 3,
    ...     "user": [1, 2, 3] * 2,
    ...     "ndcg@10": [0.2, 0.4, 0.5, 0.4, 0.6, 0.8],
    ... })
    >>> out = prk.topic_set_size_per_user(per_user, min_diff=0.1)
    >>> out.select("variance", "n_observed", "n_users").with_columns(pl.col("variance").round(4))
    shape: (1, 3)
    ┌──────────┬────────────┬─────────┐
    │ variance ┆ n_observed ┆ n_users │
    │ ---      ┆ ---        ┆ ---     │
    │ f64      ┆ i64        ┆ i64     │
    ╞══════════╪════════════╪═════════╡
    │ 0.0033   ┆ 3          ┆ 5       │
    └──────────┴────────────┴─────────┘
    """
    check_choice("design", design, DESIGNS)
    check_choice("variance_estimate", variance_estimate, VARIANCE_ESTIMATES)
    targets = _targets(design, min_diff, half_width)
    alpha = _probability("alpha", alpha)
    power = _probability("power", power)
    given_m = _n_systems(design, n_systems, required=False)
    names, m, variances = _variances(per_user, metrics, by, user, systems, variance_estimate)
    records = []
    for name in names:
        n, v = variances[name]
        scale = 1.0 if design == "anova" else 2.0
        m_design = (given_m or m) if design == "anova" else 2
        for t in targets:
            records.append(
                _design_row(
                    name, design, m_design, t, scale * v, variance_estimate, n, alpha, power
                )
            )
    return _design_frame(records)


def _targets(design: str, min_diff: Any, half_width: Any) -> list[float]:
    if design == "ci":
        if min_diff is not None:
            msg = "design='ci' takes half_width=, not min_diff= (no power is involved)"
            raise TypeError(msg)
        if half_width is None:
            msg = "design='ci' needs half_width= (the largest expected half-width)"
            raise TypeError(msg)
        return _positives("half_width", half_width)
    if half_width is not None:
        msg = f"design={design!r} takes min_diff=, not half_width= (that is design='ci')"
        raise TypeError(msg)
    if min_diff is None:
        msg = f"design={design!r} needs min_diff= (the minimum detectable difference)"
        raise TypeError(msg)
    return _positives("min_diff", min_diff)


def _n_systems(design: str, n_systems: Any, *, required: bool) -> int | None:
    if design != "anova":
        if n_systems is not None:
            msg = f"n_systems= is for design='anova'; design={design!r} compares 2 systems"
            raise TypeError(msg)
        return None
    if n_systems is None:
        if required:
            msg = "design='anova' without data needs n_systems= (the systems compared, >= 2)"
            raise TypeError(msg)
        return None
    m = integer("n_systems", n_systems, what="an int >= 2")
    if m < 2:
        msg = f"n_systems must be an int >= 2, got {n_systems!r}"
        raise ValueError(msg)
    return m


def _design_row(
    metric: str | None,
    design: str,
    m: int,
    target: float,
    variance: float,
    estimate: str,
    n_observed: int | None,
    alpha: float,
    power: float,
) -> dict[str, Any]:
    n: int | None = None
    at_power = at_width = None
    note = None
    if math.isnan(variance):
        note = f"variance undefined: {n_observed} user(s) with a value for every system"
    elif variance == 0.0:
        note = (
            "variance 0: the per-user values add up exactly (every residual 0), "
            "the test is undefined and no sample size follows"
        )
    elif design == "paired_t":
        n, at_power = _t_sample_size(target / math.sqrt(variance), alpha, power, "two-sided")
    elif design == "anova":
        n = _smallest_n(
            lambda k: _anova_power(k, m, target, variance, alpha) >= power,
            _anova_start(m, target, variance, alpha, power),
        )
        at_power = None if n is None else _anova_power(n, m, target, variance, alpha)
    else:
        st = scipy_stats()
        start = int(min((st.norm.ppf(1 - alpha / 2) ** 2) * variance / target**2, MAX_USERS))
        n = _smallest_n(lambda k: _expected_half_width(k, variance, alpha) <= target, start)
        at_width = None if n is None else _expected_half_width(n, variance, alpha)
    if note is None and n is None:
        note = "more than 2**53 users needed"
    return {
        "metric": metric,
        "design": design,
        "n_systems": m,
        "min_diff": None if design == "ci" else target,
        "half_width": target if design == "ci" else None,
        "variance": None if math.isnan(variance) else variance,
        "variance_estimate": estimate,
        "n_observed": n_observed,
        "alpha": alpha,
        "power": None if design == "ci" else power,
        "n_users": n,
        "power_at_n": at_power,
        "half_width_at_n": at_width,
        "note": note,
    }


def _anova_start(m: int, min_diff: float, variance: float, alpha: float, power: float) -> int:
    """A first guess of the ANOVA's users: the noncentral chi-square limit (phi_E -> inf)."""
    st = scipy_stats()
    crit = st.chi2.ppf(1.0 - alpha, m - 1)
    try:
        from scipy.optimize import brentq

        lam = brentq(lambda x: st.ncx2.sf(crit, m - 1, x) - power, 1e-9, 1e6)
    except (ValueError, ImportError):  # pragma: no cover - a power beyond the bracket
        return 2
    return int(min(max(2.0, lam * 2.0 * variance / min_diff**2), MAX_USERS))


def _design_frame(records: list[dict[str, Any]]) -> pl.DataFrame:
    schema = {
        "metric": pl.String,
        "design": pl.String,
        "n_systems": pl.Int64,
        "min_diff": pl.Float64,
        "half_width": pl.Float64,
        "variance": pl.Float64,
        "variance_estimate": pl.String,
        "n_observed": pl.Int64,
        "alpha": pl.Float64,
        "power": pl.Float64,
        "n_users": pl.Int64,
        "power_at_n": pl.Float64,
        "half_width_at_n": pl.Float64,
        "note": pl.String,
    }
    return pl.DataFrame(records, schema=schema, orient="row").select(TOPIC_SET_COLUMNS)


def _anova_power(n: int, m: int, min_diff: float, variance: float, alpha: float) -> float:
    """Power of one-way ANOVA over ``m`` systems of ``n`` users for a range ``min_diff``."""
    st = scipy_stats("power needs scipy (the noncentral F distribution)")
    df1, df2 = m - 1, m * (n - 1)
    lam = n * min_diff**2 / (2.0 * variance)
    return float(st.ncf.sf(st.f.ppf(1.0 - alpha, df1, df2), df1, df2, lam))


def _expected_half_width(n: int, variance: float, alpha: float) -> float:
    """Expected half-width of the t interval of a mean difference over ``n`` users.

    ``t_{1-alpha/2}(n-1) * E[s] / sqrt(n)`` with ``E[s] = sigma * sqrt(2 / (n - 1)) *
    Gamma(n/2) / Gamma((n-1)/2)`` for the sample sd ``s`` of normal differences.
    """
    st = scipy_stats("power needs scipy (the t distribution)")
    c = math.sqrt(2.0 / (n - 1)) * math.exp(math.lgamma(n / 2.0) - math.lgamma((n - 1) / 2.0))
    return float(st.t.ppf(1.0 - alpha / 2.0, n - 1) * c * math.sqrt(variance / n))


def _variances(
    per_user: Any,
    metrics: Sequence[str] | str | None,
    by: str,
    user: str,
    systems: Sequence[Any] | None,
    estimate: str,
) -> tuple[list[str], int, dict[str, tuple[int, float]]]:
    """Per metric: (users, within-system variance) and the number of systems.

    ``two_way``: the residual mean square of a two-way ANOVA without replication
    (systems x users), ``sum (x_ij - x_i. - x_.j + x_..)^2 / ((m - 1)(n - 1))``;
    ``one_way``: the within-system mean square ``sum (x_ij - x_i.)^2 / (m (n - 1))``.
    """
    wide, names, chosen = _wide(per_user, metrics, by, user, systems)
    columns = [f"__s{i}" for i in range(len(chosen))]
    m = len(chosen)
    row_mean = pl.mean_horizontal(columns)
    if estimate == "two_way":
        residual = [
            pl.col(c) - pl.col(c).mean().over("metric") - row_mean + row_mean.mean().over("metric")
            for c in columns
        ]
    else:
        residual = [pl.col(c) - pl.col(c).mean().over("metric") for c in columns]
    out = (
        wide.with_columns(pl.sum_horizontal(r.pow(2) for r in residual).alias("__ss"))
        .group_by("metric")
        .agg(
            pl.len().alias("__n"),
            pl.col("__ss").sum(),
            pl.sum_horizontal(pl.col(c).pow(2) for c in columns).mean().alias("__scale"),
        )
        .collect()
    )
    rows = {r["metric"]: r for r in out.iter_rows(named=True)}
    result: dict[str, tuple[int, float]] = {}
    for name in names:
        row = rows.get(name)
        n = 0 if row is None else int(row["__n"])
        df = (m - 1) * (n - 1) if estimate == "two_way" else m * (n - 1)
        if row is None or df <= 0:
            result[name] = (n, math.nan)
            continue
        v = float(row["__ss"]) / df
        # residuals of rounding only (values that add up exactly): compare's rule for
        # differences that do not vary, a spread of at most 1e-9 of the values' scale
        result[name] = (n, 0.0 if v <= 1e-18 * float(row["__scale"]) / m else v)
    return names, m, result
