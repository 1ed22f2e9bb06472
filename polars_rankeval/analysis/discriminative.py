"""``discriminative_power``: how many system pairs a metric tells apart (Sakai 2006).

A metric (on a set of users) is *discriminative* when a significance test finds many of
the differences between the systems evaluated; Sakai's discriminative power is the share
of all system pairs whose achieved significance level (ASL, the p-value) is at most
``alpha``, and the ASL curve (every pair's ASL, sorted) shows it at every level. The
tests are :func:`polars_rankeval.compare`'s own resampling (same draws, same policy for
what a test can conclude with few users): Sakai's studentized paired bootstrap, the
unstudentized one of ``compare(test="bootstrap")``, or compare's randomized Tukey HSD
over all the systems.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence
from typing import Any, Literal, NamedTuple

import numpy as np
import polars as pl

from polars_rankeval._utils.constraints import validate_params
from polars_rankeval._utils.stats import (
    PairStats,
    bootstrap_means,
    bootstrap_p,
    bootstrap_scheme,
    bootstrap_t,
    conclude,
    resampling_progress,
    tukey_p,
    tukey_ranges,
)
from polars_rankeval.analysis._system_values import (
    FROM_DATA,
    FROM_PER_USER,
    RESAMPLING,
    all_pairs,
    evaluate_per_user,
    value_matrices,
)
from polars_rankeval.analysis.compare_per_user import _note, _num
from polars_rankeval.metrics.grammar import MetricsArg

__all__ = [
    "ASL_COLUMNS",
    "POWER_COLUMNS",
    "DiscriminativePower",
    "discriminative_power",
    "discriminative_power_per_user",
]

PowerTest = Literal["bootstrap", "tukey"]
Statistic = Literal["t", "mean"]

#: The columns of :attr:`DiscriminativePower.summary`, in order.
POWER_COLUMNS: tuple[str, ...] = (
    "metric",
    "test",
    "statistic",
    "alpha",
    "n_systems",
    "n_pairs",
    "n_significant",
    "discriminative_power",
    "difference_required",
    "n_users",
    "n_dropped",
    "n_resamples",
    "resampling",
    "seed",
)
#: The columns of :attr:`DiscriminativePower.asl`, in order.
ASL_COLUMNS: tuple[str, ...] = (
    "metric",
    "system",
    "baseline",
    "diff",
    "asl",
    "significant",
    "rank",
    "note",
)


class DiscriminativePower(NamedTuple):
    """The result of :func:`discriminative_power`: one summary row per metric, the ASLs."""

    #: One row per metric: the share of system pairs significantly different.
    summary: pl.DataFrame
    #: One row per (metric, system pair): its ASL and its rank by ASL (the ASL curve).
    asl: pl.DataFrame


@validate_params({**FROM_DATA, **RESAMPLING})
def discriminative_power(
    data: Any,
    metrics: MetricsArg,
    *,
    by: str = "system",
    systems: Sequence[Any] | None = None,
    test: PowerTest = "bootstrap",
    statistic: Statistic = "t",
    alpha: float = 0.05,
    n_resamples: int = 1000,
    seed: int = 0,
    progress: bool | None = None,
    **evaluate_options: Any,
) -> DiscriminativePower:
    """The share of system pairs a metric finds significantly different (Sakai 2006).

    The per-user values of every system come from one
    ``evaluate(data, metrics, by=by, per_user=True, **evaluate_options)`` plan (lazy for
    a LazyFrame: only the per-user values are held); then
    :func:`discriminative_power_per_user` tests every pair of systems.

    Parameters
    ----------
    data
        The long frame with a ``by`` column naming the system of each row (as for
        :func:`polars_rankeval.compare`).
    metrics
        Per-user metrics, e.g. ``["ndcg@10", "precision@5"]`` (global metrics and
        ``aggregate=`` options are refused, as by compare).
    by
        The column that names the systems.
    systems, test, statistic, alpha, n_resamples, seed, progress
        As for :func:`discriminative_power_per_user`.
    **evaluate_options
        Passed to :func:`polars_rankeval.evaluate` (``ties``, ``users``, ``empty``,
        ``user``, ``item``, ``score`` ...).

    Returns
    -------
    DiscriminativePower
        ``(summary, asl)``: see :func:`discriminative_power_per_user`.

    Examples
    --------
    The bundled systems on their first 40 users: nDCG@10 tells apart 4 of the 6 pairs
    at alpha = 0.05, MRR@10 only 3.

    >>> import polars as pl
    >>> import polars_rankeval as prk
    >>> runs = prk.load_systems().filter(pl.col("user") <= 40)
    >>> result = prk.discriminative_power(runs, ["ndcg@10", "mrr@10"])
    >>> result.summary.select("metric", "n_significant", "discriminative_power",
    ...                       "difference_required")
    shape: (2, 4)
    ┌─────────┬───────────────┬──────────────────────┬─────────────────────┐
    │ metric  ┆ n_significant ┆ discriminative_power ┆ difference_required │
    │ ---     ┆ ---           ┆ ---                  ┆ ---                 │
    │ str     ┆ i64           ┆ f64                  ┆ f64                 │
    ╞═════════╪═══════════════╪══════════════════════╪═════════════════════╡
    │ ndcg@10 ┆ 4             ┆ 0.666667             ┆ 0.096543            │
    │ mrr@10  ┆ 3             ┆ 0.5                  ┆ 0.137687            │
    └─────────┴───────────────┴──────────────────────┴─────────────────────┘
    """
    frame, names, order = evaluate_per_user(
        data, metrics, by=by, options=evaluate_options, caller="discriminative_power"
    )
    return discriminative_power_per_user(
        frame,
        names,
        by=by,
        user=evaluate_options.get("user", "user"),
        systems=order if systems is None else systems,
        test=test,
        statistic=statistic,
        alpha=alpha,
        n_resamples=n_resamples,
        seed=seed,
        progress=progress,
    )


@validate_params({**FROM_PER_USER, **RESAMPLING})
def discriminative_power_per_user(
    per_user: Any,
    metrics: Sequence[str] | str | None = None,
    *,
    by: str = "system",
    user: str = "user",
    systems: Sequence[Any] | None = None,
    test: PowerTest = "bootstrap",
    statistic: Statistic = "t",
    alpha: float = 0.05,
    n_resamples: int = 1000,
    seed: int = 0,
    progress: bool | None = None,
) -> DiscriminativePower:
    """Discriminative power and ASL curve from a per-user frame the caller already has.

    Every pair of the compared systems is tested on its paired users (those with a value
    for every compared system, compare's rule), and a pair is *significant* when its
    ASL (achieved significance level: the p-value) is at most ``alpha``.

    * ``test="bootstrap"``, ``statistic="t"`` (the default): Sakai's (2006) paired
      bootstrap test. For a pair with per-user differences ``z`` (n users), ``t(z) =
      mean(z) / (sd(z) / sqrt(n))``; the differences are shifted to a zero mean, ``w =
      z - mean(z)``, and each of ``n_resamples`` (B) resamples ``w*`` of the users gives
      ``t(w*)``; ``ASL = (1 + #{|t(w*)| >= |t(z)|}) / (B + 1)`` (Sakai writes
      ``#{...} / B``; the +1 is compare's rule for every resampling test, so that an
      ASL is never 0). With very few users the studentized ASL cannot be small: a
      resample of one repeated user has sd 0 and an infinite ``|t|``, always counted
      (4 of the 256 resamples of 4 users).
    * ``test="bootstrap"``, ``statistic="mean"``: the same resamples, the mean
      difference unstudentized: exactly ``compare(test="bootstrap")``'s p-values.
    * ``test="tukey"``: the randomized Tukey HSD over all the compared systems
      (Carterette 2012): exactly ``compare(test="tukey")``'s p-values.

    The users resampled, the draws and the policy for what a test can conclude with few
    users (p raised to the smallest the test can reach, null when the differences do
    not vary, 1 when they are all zero) are compare's, so a pair's ASL equals the
    ``p_value`` of :func:`polars_rankeval.compare_per_user` on the same systems with
    the same test, ``n_resamples`` and ``seed``.

    ``difference_required`` is Sakai's estimated difference required for significance
    at ``alpha``: per pair, the ``floor(B * alpha)``-th largest null value of the
    statistic, in the metric's unit (``|t(w*)|`` times ``sd(z) / sqrt(n)`` for the
    studentized bootstrap, ``|mean(z*) - mean(z)|`` for the unstudentized one), and the
    largest over the pairs: a difference of the system means at least this large is
    (about) always significant. For Tukey it is the ``floor(B * alpha)``-th largest
    range of the permuted system means, the same for every pair. Null when ``B *
    alpha < 1``.

    Parameters
    ----------
    per_user
        One row per (system, user) with one numeric column per metric, e.g. the output
        of ``evaluate(..., by="system", per_user=True)``; a DataFrame or a LazyFrame
        (only the ``by``, ``user`` and metric columns are collected). A null is an
        undefined value; NaN and infinity are errors.
    metrics
        The metric columns (default: every numeric column except ``by`` and ``user``).
    by, user
        The columns naming the system and the user.
    systems
        The systems compared (at least 2; default: every value of ``by``, in the order
        they first appear). Each pair is reported as (later, earlier) in this order, as
        compare pairs them without a baseline.
    test
        ``"bootstrap"`` (default) or ``"tukey"``.
    statistic
        The bootstrap's statistic: ``"t"`` (default: studentized, Sakai 2006) or
        ``"mean"`` (compare's). Not read by Tukey.
    alpha
        Significance level in (0, 1).
    n_resamples
        Bootstrap resamples or Tukey permutations (>= 1; Sakai used 1000).
    seed
        Seed of the resampling (the draws of :mod:`polars_rankeval._utils.stats`: they
        depend on the seed, the metric's name and the number of users only).
    progress
        Report the resamples done on stderr (as for compare); default: when stderr is a
        terminal.

    Returns
    -------
    DiscriminativePower
        ``summary``: one row per metric, with ``metric``, ``test``, ``statistic`` (null
        for Tukey), ``alpha``, ``n_systems``, ``n_pairs``, ``n_significant`` (pairs with
        ASL <= alpha), ``discriminative_power = n_significant / n_pairs``,
        ``difference_required``, ``n_users`` (paired users), ``n_dropped`` (users with
        a value for some systems only), ``n_resamples``, ``resampling`` (as compare's
        column) and ``seed``. ``asl``: one row per (metric, pair), with ``metric``,
        ``system``, ``baseline``, ``diff = mean(system) - mean(baseline)`` over the
        paired users, ``asl``, ``significant``, ``rank`` (1 for the smallest ASL; ties
        in the pairs' order) and ``note`` (compare's: what the test can conclude with
        these users); sorted by metric and rank, the data of the ASL curve
        (:func:`polars_rankeval.plot.asl_curves`).

    Examples
    --------
    Three users; b is above a for every user, c is a with one user changed.

    >>> import polars as pl
    >>> import polars_rankeval as prk
    >>> per_user = pl.DataFrame({
    ...     "system": ["a"] * 3 + ["b"] * 3 + ["c"] * 3,
    ...     "user": [1, 2, 3] * 3,
    ...     "ndcg@10": [0.2, 0.4, 0.3, 0.5, 0.6, 0.7, 0.2, 0.4, 0.4],
    ... })
    >>> result = prk.discriminative_power_per_user(per_user, test="tukey")
    >>> result.asl.select("system", "baseline", "diff", "asl", "rank")
    shape: (3, 5)
    ┌────────┬──────────┬───────────┬──────────┬──────┐
    │ system ┆ baseline ┆ diff      ┆ asl      ┆ rank │
    │ ---    ┆ ---      ┆ ---       ┆ ---      ┆ ---  │
    │ str    ┆ str      ┆ f64       ┆ f64      ┆ i64  │
    ╞════════╪══════════╪═══════════╪══════════╪══════╡
    │ b      ┆ a        ┆ 0.3       ┆ 0.094905 ┆ 1    │
    │ c      ┆ b        ┆ -0.266667 ┆ 0.094905 ┆ 2    │
    │ c      ┆ a        ┆ 0.033333  ┆ 1.0      ┆ 3    │
    └────────┴──────────┴───────────┴──────────┴──────┘

    With 3 users and 3 systems no pair can reach 0.05: permuting every user's row
    alike leaves the range unchanged, so a Tukey p is at least (3!)**(1 - 3) = 1/36,
    and c - a (0.033) is below every permuted range.
    """
    chosen, canonical, prepared = value_matrices(
        per_user, metrics, by=by, user=user, systems=systems
    )
    pairs = all_pairs(chosen, canonical)
    show = progress if progress is not None else sys.stderr.isatty()
    bar = resampling_progress(n_resamples * len(prepared), show)
    k = math.floor(n_resamples * alpha)  # Sakai's B * alpha-th largest null value
    summary: list[dict[str, Any]] = []
    rows: list[dict[str, Any]] = []
    try:
        for name, values, dropped in prepared:
            values = np.asfortranarray(values)
            diffs = np.asfortranarray(np.stack([values[:, a] - values[:, b] for a, b in pairs], 1))
            n = values.shape[0]
            if test == "tukey":
                ranges = tukey_ranges(values, n_resamples, seed, name, bar)
                table = tukey_p(values, ranges)
                p = np.array([table[a, b] for a, b in pairs])
                required = _kth_largest(ranges[:, None], k)
                scheme = "permutation"
            else:
                if statistic == "t":
                    p, null = bootstrap_t(diffs, n_resamples, seed, name, bar)
                    with np.errstate(invalid="ignore", divide="ignore"):
                        scale = diffs.std(axis=0, ddof=1) / math.sqrt(n) if n > 1 else np.nan
                        required = _kth_largest(null, k) * scale
                else:
                    means = bootstrap_means(diffs, n_resamples, seed, name, "test", bar)
                    p = bootstrap_p(diffs, means)
                    required = _kth_largest(np.abs(means - diffs.mean(axis=0)), k)
                scheme = bootstrap_scheme(n)
            p, floor, raised, notes = conclude(
                "bootstrap" if test != "tukey" else test, values, diffs, p, n_resamples
            )
            stats = PairStats(p, p, p, p, n_resamples, scheme, floor, raised, notes)
            means = values.mean(axis=0)
            significant = np.nan_to_num(p, nan=2.0) <= alpha
            order = np.argsort(np.nan_to_num(p, nan=np.inf), kind="stable")
            rank = np.empty(len(pairs), dtype=np.int64)
            rank[order] = np.arange(1, len(pairs) + 1)
            for j, (a, b) in enumerate(pairs):
                rows.append(
                    {
                        "metric": name,
                        "system": canonical[a],
                        "baseline": canonical[b],
                        "diff": float(means[a] - means[b]),
                        "asl": _num(p[j]),
                        "significant": bool(significant[j]),
                        "rank": int(rank[j]),
                        "note": _note(stats, j, test, alpha, n),
                    }
                )
            finite = required[np.isfinite(required)] if k >= 1 else required[:0]
            summary.append(
                {
                    "metric": name,
                    "test": test,
                    "statistic": statistic if test == "bootstrap" else None,
                    "alpha": float(alpha),
                    "n_systems": len(chosen),
                    "n_pairs": len(pairs),
                    "n_significant": int(significant.sum()),
                    "discriminative_power": float(significant.mean()),
                    "difference_required": float(finite.max()) if finite.size else None,
                    "n_users": n,
                    "n_dropped": dropped,
                    "n_resamples": n_resamples,
                    "resampling": scheme,
                    "seed": seed,
                }
            )
    finally:
        bar.close()
    summary_schema = {
        "metric": pl.String,
        "test": pl.String,
        "statistic": pl.String,
        "alpha": pl.Float64,
        "n_systems": pl.Int64,
        "n_pairs": pl.Int64,
        "n_significant": pl.Int64,
        "discriminative_power": pl.Float64,
        "difference_required": pl.Float64,
        "n_users": pl.Int64,
        "n_dropped": pl.Int64,
        "n_resamples": pl.Int64,
        "resampling": pl.String,
        "seed": pl.Int64,
    }
    asl_schema = {
        "metric": pl.String,
        "system": pl.String,
        "baseline": pl.String,
        "diff": pl.Float64,
        "asl": pl.Float64,
        "significant": pl.Boolean,
        "rank": pl.Int64,
        "note": pl.String,
    }
    metric_order = [name for name, _, _ in prepared]
    asl = (
        pl.DataFrame(rows, schema=asl_schema, orient="row")
        .with_columns(
            pl.col("metric")
            .replace_strict(metric_order, list(range(len(metric_order))))
            .alias("__order")
        )
        .sort("__order", "rank")
        .drop("__order")
    )
    return DiscriminativePower(pl.DataFrame(summary, schema=summary_schema, orient="row"), asl)


def _kth_largest(null: np.ndarray, k: int) -> np.ndarray:
    """Per column, the ``k``-th largest value (NaN when ``k < 1``; NaNs count as smallest)."""
    if k < 1 or null.shape[0] < k:
        return np.full(null.shape[1], np.nan)
    filled = np.where(np.isnan(null), -np.inf, null)
    return np.asarray(-np.partition(-filled, k - 1, axis=0)[k - 1])
