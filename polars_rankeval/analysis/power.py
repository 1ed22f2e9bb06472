"""Power and sample size: how many users a comparison needs, and what one already run could see.

- :func:`sample_size`: the users a paired t test needs to detect a difference ``delta``
  with a given power, from a standard deviation of the per-user differences given or
  observed per compared pair of systems;
- :func:`achieved_power`: the post-hoc power of the rows of a
  :func:`polars_rankeval.compare` result, beside the users needed for their observed
  difference.

Sakai's topic set size design is in :mod:`polars_rankeval.analysis.topic_set_size`.
Every computation is exact: the noncentral t distribution of :mod:`scipy.stats`, and
the smallest integer number of users found by a search over the integers (the power
is monotone in it). The per-user values are read as ``compare`` reads them: one
``evaluate(per_user=True)`` plan, collected once (a row per system and user), then one
lazy query that joins one frame per system on the user and aggregates per metric;
only the per-metric sums are kept.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import polars as pl

from polars_rankeval._utils.constraints import (
    COLUMN,
    Frame,
    Instance,
    ListOf,
    Number,
    Options,
    Spec,
    Text,
    validate_params,
)
from polars_rankeval._utils.types import check_choice
from polars_rankeval.analysis._system_values import metric_columns
from polars_rankeval.analysis.compare_options import TEST_OPTIONS
from polars_rankeval.analysis.differences import compared_pairs
from polars_rankeval.analysis.paired_values import _local
from polars_rankeval.analysis.t_test_power import Alternative, _t_sample_size, t_power
from polars_rankeval.metrics.grammar import METRICS, MetricsArg, parse_metrics
from polars_rankeval.metrics.params import Interval
from polars_rankeval.plan.validate import to_lazy

__all__ = [
    "ACHIEVED_COLUMNS",
    "SAMPLE_SIZE_COLUMNS",
    "achieved_power",
    "sample_size",
    "sample_size_per_user",
]

PROBABILITY = Number(Interval(0, 1, closed="neither"))
"""``alpha=`` and ``power=``."""

DATA: dict[str, Spec] = {
    "data": [Frame("polars", "pyarrow", "pandas"), None],
    "metrics": [*METRICS, None],
    "by": COLUMN,
    "systems": TEST_OPTIONS["systems"],
}
"""Per-user values from the long frame (``evaluate``'s options pass on)."""

PER_USER: dict[str, Spec] = {
    "per_user": Frame("polars", "pyarrow", "pandas"),
    "metrics": [Text("a metric column name (str)"), ListOf(what="a list of metric columns"), None],
    "by": COLUMN,
    "user": COLUMN,
    "systems": TEST_OPTIONS["systems"],
}
"""Per-user values given."""

DIFFERENCES = [Number(), ListOf(Number(), what="a list of numbers")]

_SAMPLE: dict[str, Spec] = {
    "delta": DIFFERENCES,
    "alpha": PROBABILITY,
    "power": PROBABILITY,
    "alternative": Options.of(Alternative),
    "baseline": TEST_OPTIONS["baseline"],
}

ALTERNATIVES: tuple[str, ...] = ("one-sided", "two-sided")

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


_NOT_FORWARDED = ("per_user", "per_item", "aggregate", "by")


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
    lazy, names = metric_columns(per_user, metrics, by, user)
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


@validate_params({**DATA, **_SAMPLE, "sd": [Number(Interval(0, None, closed="neither")), None]})
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


@validate_params({**PER_USER, **_SAMPLE})
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


@validate_params(
    {
        "result": Instance(pl.DataFrame, what="the DataFrame returned by compare()"),
        "alpha": [PROBABILITY, None],
        "power": PROBABILITY,
        "alternative": Options.of(Alternative),
    }
)
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
        (``note`` says why); a ``diff`` of 0 (an effect size of at most 1e-9, rounding)
        with differences that vary has the power ``alpha`` and no users needed (null).

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
        elif abs(d) <= 1e-9:  # 0 up to rounding: its users needed would pass 2**53 anyway
            achieved = float(t_power(n, 0.0, alpha=a, alternative=alternative)[0])  # type: ignore[arg-type]
            note = "the mean difference is 0 (up to rounding): no difference to detect"
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
