"""Power and sample size: how many users a comparison needs, and what one already run could see.

- :func:`sample_size`: the users a paired t test needs to detect a difference ``delta``
  with a given power, from a standard deviation of the per-user differences given or
  observed per compared pair of systems;
- :func:`topic_set_size`: Sakai's topic set size design (Sakai 2016, after Nagata
  2003) for a paired t test, a one-way ANOVA over several systems, or a cap on the
  width of the interval of a mean difference, with the variance given or estimated
  from past data as Sakai does (the residual variance of a two-way ANOVA without
  replication, systems x users);
- :func:`achieved_power`: the post-hoc power of the rows of a
  :func:`polars_rankeval.compare` result, beside the users needed for their observed
  difference.

Every computation is exact: the noncentral t and F distributions of
:mod:`scipy.stats`, and the smallest integer number of users found by a search over
the integers (the power and the expected interval width are monotone in it). The
per-user values are read as ``compare`` reads them: one ``evaluate(per_user=True)``
plan, collected once (a row per system and user), then one lazy query that joins one
frame per system on the user and aggregates per metric; only the per-metric sums are
kept.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, Literal

import numpy as np
import polars as pl

from polars_rankeval._utils.stats import scipy_stats
from polars_rankeval._utils.types import check_choice, integer, is_spark_frame
from polars_rankeval.analysis.compare import _local
from polars_rankeval.analysis.differences import compared_pairs
from polars_rankeval.plan.job import MetricsArg, parse_metrics
from polars_rankeval.plan.validate import to_lazy

__all__ = [
    "ACHIEVED_COLUMNS",
    "SAMPLE_SIZE_COLUMNS",
    "TOPIC_SET_COLUMNS",
    "achieved_power",
    "sample_size",
    "sample_size_per_user",
    "t_power",
    "topic_set_size",
    "topic_set_size_per_user",
]

Alternative = Literal["two-sided", "one-sided"]
Design = Literal["anova", "ci", "paired_t"]
VarianceEstimate = Literal["one_way", "two_way"]
ALTERNATIVES: tuple[str, ...] = ("one-sided", "two-sided")
DESIGNS: tuple[str, ...] = ("anova", "ci", "paired_t")
VARIANCE_ESTIMATES: tuple[str, ...] = ("one_way", "two_way")

#: The columns of :func:`sample_size`, in order.
SAMPLE_SIZE_COLUMNS: tuple[str, ...] = (
    "metric",
    "system",
    "baseline",
    "delta",
    "sd",
    "effect_size",
    "n_observed",
    "alpha",
    "power",
    "alternative",
    "n_users",
    "power_at_n",
    "note",
)

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

#: The columns of :func:`achieved_power`, in order.
ACHIEVED_COLUMNS: tuple[str, ...] = (
    "metric",
    "system",
    "baseline",
    "diff",
    "sd",
    "effect_size",
    "n_users",
    "p_value",
    "alpha",
    "alternative",
    "achieved_power",
    "power",
    "n_users_needed",
    "note",
)

#: The largest number of users searched: beyond it ``n_users`` is null (with a note).
MAX_USERS = 2**53

_NOT_FORWARDED = ("per_user", "per_item", "aggregate", "by")


# ------------------------------------------------------------------ kernels
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
    >>> from polars_rankeval.analysis.power import t_power
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


# ------------------------------------------------------------------ checks
def _probability(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        msg = f"{name} must be a number in (0, 1), got {value!r}"
        raise TypeError(msg)
    if not 0.0 < float(value) < 1.0:
        msg = f"{name} must be in (0, 1), got {value!r}"
        raise ValueError(msg)
    return float(value)


def _positive(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        msg = f"{name} must be a number > 0, got {value!r}"
        raise TypeError(msg)
    if not (math.isfinite(value) and value > 0):
        msg = f"{name} must be a finite number > 0, got {value!r}"
        raise ValueError(msg)
    return float(value)


def _positives(name: str, value: Any) -> list[float]:
    """One number > 0 or a non-empty sequence of them, as a list."""
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        return [_positive(name, value)]
    values = list(value)
    if not values:
        msg = f"{name} must be a number > 0 or a non-empty sequence of them, got {value!r}"
        raise ValueError(msg)
    return [_positive(name, v) for v in values]


# ------------------------------------------------------------------ per-user data
def _wide(
    per_user: Any,
    metrics: Sequence[str] | str | None,
    by: str,
    user: str,
    systems: Sequence[Any] | None,
) -> tuple[pl.LazyFrame, list[str], list[str]]:
    """(one row per metric and user with a column ``__s{i}`` per system, metrics, systems).

    Only the users with a value of the metric for every chosen system are kept (as
    ``compare`` pairs them); NaN is undefined like null.
    """
    if is_spark_frame(per_user):
        per_user = _local(per_user)
    lazy, _ = to_lazy(per_user, "per_user")
    schema = lazy.collect_schema()
    for column, role in ((by, "by"), (user, "user")):
        if column not in schema:
            msg = (
                f"{role} column {column!r} not found in the per-user frame; available "
                f"columns: {', '.join(schema.names()) or 'none'}"
            )
            raise ValueError(msg)
    if metrics is None:
        names = [c for c in schema.names() if c not in (by, user)]
    else:
        names = [metrics] if isinstance(metrics, str) else list(metrics)
    if not names:
        msg = "metrics must name at least one metric column"
        raise ValueError(msg)
    if len(set(names)) != len(names):
        msg = f"metrics must be distinct, got {names!r}"
        raise ValueError(msg)
    for name in names:
        if name not in schema:
            msg = (
                f"metric column {name!r} not found in the per-user frame; available "
                f"columns: {', '.join(schema.names())}"
            )
            raise ValueError(msg)
        if not (schema[name].is_numeric() or schema[name] == pl.Null):
            msg = f"metric column {name!r} must be numeric, got {schema[name]}"
            raise TypeError(msg)
    lazy = lazy.with_columns(pl.col(by).cast(pl.String))
    # The systems in order of appearance and, per system, its rows and distinct users:
    # one cheap query (a duplicate (system, user) row is looked up only when there is one).
    found = (
        lazy.filter(pl.col(by).is_not_null())
        .group_by(by, maintain_order=True)
        .agg(pl.len().alias("__rows"), pl.col(user).n_unique().alias("__users"))
        .collect()
    )
    if (found.get_column("__rows") != found.get_column("__users")).any():
        duplicate = lazy.group_by(by, user).len().filter(pl.col("len") > 1).head(1).collect()
        msg = (
            f"the per-user frame has duplicate ({by}, {user}) rows, e.g. "
            f"{by}={duplicate[by][0]!r}, {user}={duplicate[user][0]!r}"
        )
        raise ValueError(msg)
    available = found.get_column(by).to_list()
    compared_pairs(available, systems, None, by)  # the systems: distinct, present, >= 2
    chosen = available if systems is None else [str(s) for s in systems]
    columns = [f"__s{i}" for i in range(len(chosen))]
    # One frame per system (user, its metric columns), joined on the user: a user with
    # no row for some system is left out, as with no value.
    sides = [
        lazy.filter(pl.col(by) == s).select(
            user, *(pl.col(name).cast(pl.Float64).alias(f"{name}\x00{i}") for name in names)
        )
        for i, s in enumerate(chosen)
    ]
    joined = sides[0]
    for side in sides[1:]:
        joined = joined.join(side, on=user, how="inner")
    wide = pl.concat(
        [
            joined.select(
                pl.lit(name).alias("metric"),
                *(pl.col(f"{name}\x00{i}").fill_nan(None).alias(c) for i, c in enumerate(columns)),
            ).drop_nulls(columns)
            for name in names
        ]
    )
    return wide, names, chosen


def _pair_stats(
    per_user: Any,
    metrics: Sequence[str] | str | None,
    by: str,
    user: str,
    baseline: Any,
    systems: Sequence[Any] | None,
) -> tuple[list[str], list[tuple[str, str]], dict[tuple[str, str, str], tuple[int, float, float]]]:
    """Per (metric, system, baseline): (paired users, mean difference, sd of the differences).

    The sd is 0 when the differences are equal up to rounding (compare's rule: a range
    of at most 1e-9 times their mean absolute value), NaN with fewer than 2 users.
    """
    wide, names, chosen = _wide(per_user, metrics, by, user, systems)
    pairs = compared_pairs(chosen, chosen, baseline, by)
    column = {s: f"__s{i}" for i, s in enumerate(chosen)}
    aggs: list[pl.Expr] = [pl.len().alias("__n")]
    for k, (a, b) in enumerate(pairs):
        d = pl.col(column[a]) - pl.col(column[b])
        aggs += [
            d.mean().alias(f"__mean{k}"),
            d.std(ddof=1).alias(f"__sd{k}"),
            (d.max() - d.min()).alias(f"__range{k}"),
            d.abs().mean().alias(f"__scale{k}"),
        ]
    out = wide.group_by("metric").agg(aggs).collect()
    rows = {r["metric"]: r for r in out.iter_rows(named=True)}
    stats: dict[tuple[str, str, str], tuple[int, float, float]] = {}
    for name in names:
        row = rows.get(name)
        for k, (a, b) in enumerate(pairs):
            if row is None:
                stats[(name, a, b)] = (0, math.nan, math.nan)
                continue
            n = int(row["__n"])
            sd = row[f"__sd{k}"]
            sd = math.nan if sd is None or n < 2 else float(sd)
            if n >= 2 and row[f"__range{k}"] <= 1e-9 * max(row[f"__scale{k}"], 1e-300):
                sd = 0.0
            stats[(name, a, b)] = (n, float(row[f"__mean{k}"]), sd)
    return names, pairs, stats


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


def _evaluated(
    caller: str, data: Any, metrics: MetricsArg, by: str, options: dict[str, Any]
) -> tuple[Any, list[str], str]:
    """The per-user values of ``data`` (one evaluate plan), the metric names, the user column."""
    from polars_rankeval.api.evaluate import evaluate

    for name in _NOT_FORWARDED:
        if name in options:
            msg = f"{caller}() does not take {name}=; it evaluates per user over by={by!r}"
            raise TypeError(msg)
    if not isinstance(by, str):
        msg = f"by must be one column name (str), got {by!r}"
        raise TypeError(msg)
    source, _ = to_lazy(data)
    # Collected once (one row per system and user, as compare holds them): the pairing
    # then reads it several times without running the evaluate plan again.
    per_user = _local(evaluate(source, metrics, by=by, per_user=True, **options))
    return per_user, [m.name for m in parse_metrics(metrics)], options.get("user", "user")


def _first_order(data: Any, by: str, systems: Sequence[Any] | None) -> list[Any] | None:
    """The systems in the order they first appear in ``data`` (evaluate's output is grouped)."""
    if systems is not None:
        return list(systems)
    source, _ = to_lazy(data)
    return (
        source.select(pl.col(by).cast(pl.String).drop_nulls().unique(maintain_order=True))
        .collect()
        .get_column(by)
        .to_list()
    )


# ------------------------------------------------------------------ sample_size
def sample_size(
    data: Any = None,
    metrics: MetricsArg | None = None,
    *,
    delta: float | Sequence[float],
    sd: float | None = None,
    alpha: float = 0.05,
    power: float = 0.8,
    alternative: Alternative = "two-sided",
    by: str = "system",
    baseline: Any = None,
    systems: Sequence[Any] | None = None,
    **evaluate_options: Any,
) -> pl.DataFrame:
    """Users a paired t test needs to detect a mean difference ``delta`` with power ``power``.

    Either from a standard deviation of the per-user differences given (``sd=``, no
    ``data``), or from data: the observed sd of the per-user differences of every pair
    of systems ``compare`` would test (one ``evaluate(data, metrics, by=by,
    per_user=True, **evaluate_options)`` plan, then :func:`sample_size_per_user`).

    The answer is the smallest integer ``n >= 2`` whose exact power (noncentral t,
    :func:`t_power`) reaches ``power``; it is at least the normal approximation
    ``((z_{1-alpha/2} + z_{power}) sd / delta)^2`` and, like it, scales as
    ``(sd / delta)^2``: half the difference needs four times the users.

    Parameters
    ----------
    data
        The long frame with a ``by`` column naming the systems (as for
        :func:`polars_rankeval.compare`); ``None`` with ``sd=``.
    metrics
        Per-user metrics (with ``data``).
    delta
        The mean difference to detect, in the metric's units (> 0), or a sequence of
        them (one row each).
    sd
        The standard deviation of the per-user differences (> 0), without ``data``.
    alpha
        Significance level in (0, 1).
    power
        The probability of detecting ``delta``, in (0, 1) (1 - beta).
    alternative
        ``"two-sided"`` (default, as ``compare``'s tests) or ``"one-sided"`` (a test of
        a difference in one direction, the direction of ``delta``).
    by, baseline, systems
        The pairs, as :func:`polars_rankeval.compare` makes them (with ``data``).
    **evaluate_options
        Passed to :func:`polars_rankeval.evaluate` (``ties``, ``users``, ``empty``,
        ``user`` ...).

    Returns
    -------
    polars.DataFrame
        One row per (metric, pair, delta), or per delta with ``sd=`` (``metric``,
        ``system``, ``baseline`` null). Columns: see :func:`sample_size_per_user`.

    Examples
    --------
    A difference of half the sd of the per-user differences, two-sided at 5%, 80% power:

    >>> import polars_rankeval as prk
    >>> out = prk.sample_size(delta=0.05, sd=0.1)
    >>> out.select("delta", "sd", "effect_size", "n_users")
    shape: (1, 4)
    ┌───────┬─────┬─────────────┬─────────┐
    │ delta ┆ sd  ┆ effect_size ┆ n_users │
    │ ---   ┆ --- ┆ ---         ┆ ---     │
    │ f64   ┆ f64 ┆ f64         ┆ i64     │
    ╞═══════╪═════╪═════════════╪═════════╡
    │ 0.05  ┆ 0.1 ┆ 0.5         ┆ 34      │
    └───────┴─────┴─────────────┴─────────┘
    >>> round(out["power_at_n"][0], 4)
    0.8078
    """
    deltas = _positives("delta", delta)
    alpha = _probability("alpha", alpha)
    power = _probability("power", power)
    check_choice("alternative", alternative, ALTERNATIVES)
    if data is None:
        if sd is None:
            msg = "sample_size() needs sd= (the sd of the per-user differences) or data"
            raise TypeError(msg)
        if metrics is not None:
            msg = f"metrics= is read from data; without data, got metrics={metrics!r}"
            raise TypeError(msg)
        sd_value = _positive("sd", sd)
        records = [
            _sample_row(None, None, None, d, sd_value, None, alpha, power, alternative)
            for d in deltas
        ]
        return _sample_frame(records)
    if sd is not None:
        msg = "sample_size() takes sd= or data, not both: with data, sd is observed per pair"
        raise TypeError(msg)
    if metrics is None:
        msg = "sample_size() with data needs metrics (e.g. ['ndcg@10'])"
        raise TypeError(msg)
    order = _first_order(data, by, systems)
    per_user, names, user = _evaluated("sample_size", data, metrics, by, evaluate_options)
    return sample_size_per_user(
        per_user,
        names,
        delta=deltas,
        alpha=alpha,
        power=power,
        alternative=alternative,
        by=by,
        user=user,
        baseline=baseline,
        systems=order,
    )


def sample_size_per_user(
    per_user: Any,
    metrics: Sequence[str] | str | None = None,
    *,
    delta: float | Sequence[float],
    alpha: float = 0.05,
    power: float = 0.8,
    alternative: Alternative = "two-sided",
    by: str = "system",
    user: str = "user",
    baseline: Any = None,
    systems: Sequence[Any] | None = None,
) -> pl.DataFrame:
    """Users a paired t test needs, from a per-user frame the caller already has.

    The sd of each compared pair is the sample sd (ddof 1) of its per-user
    differences over the users with a value for every compared system (as
    ``compare`` pairs them); the frame is read in one lazy query.

    Parameters
    ----------
    per_user
        One row per (system, user) with one numeric column per metric (the output of
        ``evaluate(..., by="system", per_user=True)``), a DataFrame or a LazyFrame.
    metrics
        The metric columns (default: every column except ``by`` and ``user``).
    delta, alpha, power, alternative
        As for :func:`sample_size`.
    by, user
        The columns naming the system and the user.
    baseline, systems
        The pairs, as :func:`polars_rankeval.compare` makes them (default systems: in
        the order they first appear).

    Returns
    -------
    polars.DataFrame
        One row per (metric, system, baseline, delta): ``metric``, ``system``,
        ``baseline``; ``delta``; ``sd`` (of the per-user differences); ``effect_size =
        delta / sd``; ``n_observed`` (the paired users the sd is from; null when ``sd``
        was given); ``alpha``, ``power`` (the target), ``alternative``; ``n_users`` (the
        users needed); ``power_at_n`` (the exact power with ``n_users``, at least
        ``power``); ``note``. When the sd is 0 (every user differs by the same amount)
        or undefined (fewer than 2 users), or the users needed exceed ``2**53``,
        ``n_users`` is null and ``note`` says why.

    Examples
    --------
    >>> import polars as pl
    >>> import polars_rankeval as prk
    >>> per_user = pl.DataFrame({
    ...     "system": ["a"] * 4 + ["b"] * 4,
    ...     "user": [1, 2, 3, 4] * 2,
    ...     "ndcg@10": [0.2, 0.4, 0.6, 0.8, 0.3, 0.4, 0.8, 0.9],
    ... })
    >>> prk.sample_size_per_user(per_user, delta=0.05, baseline="a").select(
    ...     "system", "baseline", "sd", "n_observed", "n_users")
    shape: (1, 5)
    ┌────────┬──────────┬─────────┬────────────┬─────────┐
    │ system ┆ baseline ┆ sd      ┆ n_observed ┆ n_users │
    │ ---    ┆ ---      ┆ ---     ┆ ---        ┆ ---     │
    │ str    ┆ str      ┆ f64     ┆ i64        ┆ i64     │
    ╞════════╪══════════╪═════════╪════════════╪═════════╡
    │ b      ┆ a        ┆ 0.08165 ┆ 4          ┆ 23      │
    └────────┴──────────┴─────────┴────────────┴─────────┘
    """
    deltas = _positives("delta", delta)
    alpha = _probability("alpha", alpha)
    power = _probability("power", power)
    check_choice("alternative", alternative, ALTERNATIVES)
    names, pairs, stats = _pair_stats(per_user, metrics, by, user, baseline, systems)
    records = []
    for name in names:
        for a, b in pairs:
            n, _, sd = stats[(name, a, b)]
            for d in deltas:
                records.append(_sample_row(name, a, b, d, sd, n, alpha, power, alternative))
    return _sample_frame(records)


def _sample_row(
    metric: str | None,
    system: str | None,
    baseline: str | None,
    delta: float,
    sd: float,
    n_observed: int | None,
    alpha: float,
    power: float,
    alternative: str,
) -> dict[str, Any]:
    note = None
    n = achieved = effect = None
    if math.isnan(sd):
        note = f"sd undefined: {n_observed} paired user(s), the sd needs at least 2"
    elif sd == 0.0:
        note = (
            "sd 0: every user differs by the same amount, the t test is undefined "
            "(no sample size follows; any 2 users show the same difference)"
        )
    else:
        effect = delta / sd
        n, achieved = _t_sample_size(effect, alpha, power, alternative)
        if n is None:
            note = f"more than 2**53 users needed (effect size {effect:.3g})"
    return {
        "metric": metric,
        "system": system,
        "baseline": baseline,
        "delta": delta,
        "sd": None if math.isnan(sd) else sd,
        "effect_size": effect,
        "n_observed": n_observed,
        "alpha": alpha,
        "power": power,
        "alternative": alternative,
        "n_users": n,
        "power_at_n": achieved,
        "note": note,
    }


def _sample_frame(records: list[dict[str, Any]]) -> pl.DataFrame:
    schema = {
        "metric": pl.String,
        "system": pl.String,
        "baseline": pl.String,
        "delta": pl.Float64,
        "sd": pl.Float64,
        "effect_size": pl.Float64,
        "n_observed": pl.Int64,
        "alpha": pl.Float64,
        "power": pl.Float64,
        "alternative": pl.String,
        "n_users": pl.Int64,
        "power_at_n": pl.Float64,
        "note": pl.String,
    }
    return pl.DataFrame(records, schema=schema, orient="row").select(SAMPLE_SIZE_COLUMNS)


# ------------------------------------------------------------------ topic_set_size
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
      per-user differences (sigma_t^2). The same answer as :func:`sample_size` with
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


# ------------------------------------------------------------------ achieved_power
def achieved_power(
    result: pl.DataFrame,
    *,
    alpha: float | None = None,
    power: float = 0.8,
    alternative: Alternative = "two-sided",
) -> pl.DataFrame:
    """Post-hoc power of a comparison already run, and the users its difference would need.

    For every row of a :func:`polars_rankeval.compare` result: the power a paired t
    test with the row's ``n_users`` had to detect a true difference equal to the
    observed ``diff``, given the observed sd of the per-user differences (recovered
    from ``diff / effect_size``, compare's paired Cohen's d); and ``n_users_needed``,
    the users a new study needs to detect that difference with power ``power``
    (:func:`sample_size` with ``delta=|diff|`` and that sd).

    Post-hoc ("observed") power is a one-to-one function of the p-value for a given
    number of users (Hoenig & Heisey 2001, "The abuse of power", The American
    Statistician 55(1)): a non-significant result always has a low observed power
    (about 0.5 at ``p = alpha``), so it adds nothing to the p-value and does not say
    the test "could not see" a difference. What it is good for is planning: how
    far the users of this study are from those a study of this difference needs
    (``n_users_needed``), and the sd to plan with.

    Parameters
    ----------
    result
        The frame :func:`polars_rankeval.compare` or
        :func:`polars_rankeval.compare_per_user` returned, with a paired Cohen's d
        effect size (any test but ``"wilcoxon"``, whose effect size is a rank-biserial
        correlation).
    alpha
        Significance level in (0, 1); default: each row's ``alpha`` (the unadjusted
        level, as the power is of one test).
    power
        The target power of ``n_users_needed``, in (0, 1).
    alternative
        ``"two-sided"`` (default, as compare's tests) or ``"one-sided"``.

    Returns
    -------
    polars.DataFrame
        One row per row of ``result``: ``metric``, ``system``, ``baseline``, ``diff``,
        ``sd`` (of the per-user differences), ``effect_size``, ``n_users``,
        ``p_value``, ``alpha``, ``alternative``, ``achieved_power``, ``power`` (the
        target), ``n_users_needed``, ``note``. When every difference is 0 or all are
        equal (sd 0), or fewer than 2 users, the power and the users needed are null
        (``note`` says why); a ``diff`` of exactly 0 with differences that vary has the
        power ``alpha`` (two-sided) and no users needed (null).

    Examples
    --------
    >>> import polars_rankeval as prk
    >>> result = prk.compare(prk.load_systems(), ["ndcg@10"], baseline="bm25",
    ...                      systems=["bm25", "dense"], test="t")
    >>> prk.achieved_power(result).select("system", "n_users", "achieved_power").shape
    (1, 3)
    """
    if not isinstance(result, pl.DataFrame):
        msg = f"result must be the DataFrame compare() returned, got {type(result).__name__}"
        raise TypeError(msg)
    needed = (
        "metric",
        "system",
        "baseline",
        "diff",
        "effect_size",
        "n_users",
        "p_value",
        "alpha",
        "effect_size_kind",
    )
    missing = [c for c in needed if c not in result.columns]
    if missing:
        msg = (
            f"result lacks column(s) {', '.join(missing)}: pass the frame compare() or "
            "compare_per_user() returned"
        )
        raise ValueError(msg)
    kinds = sorted(set(result.get_column("effect_size_kind").drop_nulls().to_list()) - {"cohen_d"})
    if kinds:
        msg = (
            f"achieved_power needs compare's paired Cohen's d (effect_size_kind 'cohen_d'), "
            f"got {', '.join(map(repr, kinds))}: run compare with another test than "
            "'wilcoxon' (e.g. test='t')"
        )
        raise ValueError(msg)
    if alpha is not None:
        alpha = _probability("alpha", alpha)
    power = _probability("power", power)
    check_choice("alternative", alternative, ALTERNATIVES)
    records = []
    for row in result.iter_rows(named=True):
        a = alpha if alpha is not None else float(row["alpha"])
        diff, d, n = row["diff"], row["effect_size"], row["n_users"]
        sd = achieved = needed_n = None
        note = None
        if n is None or n < 2:
            note = f"{n} paired user(s): the t test needs at least 2"
        elif d is None:
            note = (
                "every per-user difference is 0: no difference to detect"
                if diff == 0
                else "sd 0: every user differs by the same amount, the t test is undefined"
            )
        elif d == 0:
            achieved = float(t_power(n, 0.0, alpha=a, alternative=alternative)[0])  # type: ignore[arg-type]
            note = "the mean difference is 0: no difference to detect"
        else:
            sd = abs(diff / d)
            achieved = float(t_power(n, abs(d), alpha=a, alternative=alternative)[0])  # type: ignore[arg-type]
            needed_n, _ = _t_sample_size(abs(d), a, power, alternative)
            if needed_n is None:
                note = "more than 2**53 users needed"
        records.append(
            {
                "metric": row["metric"],
                "system": row["system"],
                "baseline": row["baseline"],
                "diff": diff,
                "sd": sd,
                "effect_size": d,
                "n_users": n,
                "p_value": row["p_value"],
                "alpha": a,
                "alternative": alternative,
                "achieved_power": achieved,
                "power": power,
                "n_users_needed": needed_n,
                "note": note,
            }
        )
    schema = {
        "metric": pl.String,
        "system": pl.String,
        "baseline": pl.String,
        "diff": pl.Float64,
        "sd": pl.Float64,
        "effect_size": pl.Float64,
        "n_users": pl.Int64,
        "p_value": pl.Float64,
        "alpha": pl.Float64,
        "alternative": pl.String,
        "achieved_power": pl.Float64,
        "power": pl.Float64,
        "n_users_needed": pl.Int64,
        "note": pl.String,
    }
    return pl.DataFrame(records, schema=schema, orient="row").select(ACHIEVED_COLUMNS)
