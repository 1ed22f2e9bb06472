"""``compare_per_user``: the paired tests over a per-user frame, and the table of their results.

Each metric's users x systems matrix (:mod:`polars_rankeval.analysis.paired_values`)
goes through the tests of :mod:`polars_rankeval._utils.stats`; this module turns their
statistics into one row per (metric, system, baseline): means, wins, ties and losses,
the p-values corrected within their family, and a note where the number of users
limits what a test can conclude.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import polars as pl

from polars_rankeval._utils.constraints import (
    COLUMN,
    Frame,
    Instance,
    ListOf,
    Text,
    validate_params,
)
from polars_rankeval._utils.stats import (
    CIMethod,
    CorrectionName,
    PairStats,
    TestName,
    adjust,
    resamples_needed,
    resampling_progress,
    run_tests,
    scipy_stats,
)
from polars_rankeval.analysis.compare_options import TEST_OPTIONS, Family, _check_options
from polars_rankeval.analysis.paired_values import _chosen_pairs, _pair_values, _read_per_user

__all__ = ["RESULT_COLUMNS", "compare_per_user", "win_tie_loss"]

#: The columns of a comparison, in order.
RESULT_COLUMNS: tuple[str, ...] = (
    "metric",
    "higher_is_better",
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
    "n_dropped",
    "wins",
    "ties",
    "losses",
    "tie_tolerance",
    "test",
    "correction",
    "family",
    "alpha",
    "confidence",
    "ci_method",
    "effect_size_kind",
    "n_resamples",
    "resampling",
    "seed",
    "conventions",
    "note",
)


@validate_params(
    {
        "per_user": Frame("polars", "pyarrow", "pandas", "pyspark"),
        "metrics": [Text("a metric column name (str)"), ListOf(what="a list of them"), None],
        "by": COLUMN,
        "user": COLUMN,
        "conventions": [Text("a description of the conventions (str)"), None],
        "higher_is_better": [Instance(Mapping, what="a mapping of metric to a flag"), None],
        **TEST_OPTIONS,
    }
)
def compare_per_user(
    per_user: Any,
    metrics: Sequence[str] | str | None = None,
    *,
    by: str = "system",
    user: str = "user",
    baseline: Any = None,
    systems: Sequence[Any] | None = None,
    test: TestName = "randomization",
    correction: CorrectionName | None = None,
    family: Family = "all",
    alpha: float = 0.05,
    n_resamples: int = 10_000,
    seed: int = 0,
    confidence: float = 0.95,
    ci: CIMethod = "auto",
    tie_tolerance: float = 1e-9,
    progress: bool | None = None,
    conventions: str | None = None,
    higher_is_better: Mapping[str, bool | None] | None = None,
) -> pl.DataFrame:
    """Compare systems on a per-user frame the caller already has.

    Parameters
    ----------
    per_user
        One row per (system, user) with one numeric column per metric, e.g. the
        output of ``evaluate(..., by="system", per_user=True)`` (a Spark DataFrame is
        collected). A null is an undefined value; NaN and infinity are errors.
    metrics
        The metric columns to compare (default: every column except ``by`` and
        ``user``).
    by, user
        The columns naming the system and the user.
    conventions
        Free text recorded in the ``conventions`` column (how the values were
        computed); :func:`compare` fills it in.
    higher_is_better
        The direction of metric columns, ``{column: True | False | None}`` (``None``:
        neither, e.g. a count). A column not given takes the declaration of the
        metric it names (:func:`metric_direction`: ``ndcg@10``, or a preset's
        ``RetrievalFallOut@3[torchmetrics]``), else ``None``.
    baseline, systems, test, correction, family, alpha, n_resamples, seed, confidence, ci
        As for :func:`compare`; by default the systems are in the order they first
        appear in ``per_user``.
    tie_tolerance, progress
        As for :func:`compare`.

    Returns
    -------
    polars.DataFrame
        One row per (metric, system, baseline), metrics in the given order, then the systems
        in order (pairs ``(systems[j], systems[i])`` with ``i < j`` without a baseline).
        Columns: ``metric``; ``higher_is_better`` (the metric's direction, null for none:
        what :func:`polars_rankeval.report` reads to call a difference better or worse);
        ``system``, ``baseline`` (the ``by`` values, as strings); ``mean``,
        ``baseline_mean`` and ``diff = mean - baseline_mean`` over the ``n_users`` paired
        users; ``ci_low``, ``ci_high`` (interval of ``diff``); ``effect_size`` (paired
        Cohen's d = mean / sd of the differences, or for wilcoxon the matched-pairs
        rank-biserial correlation; ``effect_size_kind`` says which); ``p_value``;
        ``p_adjusted`` (corrected within the ``family``); ``significant`` (``p_adjusted <=
        alpha``); ``n_users``; ``n_dropped`` (users with a value for some but not all
        compared systems, or no row for some system); ``wins``, ``ties``, ``losses`` (of the
        ``n_users`` paired users, those where ``system`` is better than ``baseline``, within
        ``tie_tolerance`` of it, worse: by the metric's direction, and for a metric without
        one, higher counts as a win), ``tie_tolerance``; ``test``, ``correction``,
        ``family``, ``alpha``, ``confidence``, ``ci_method``, ``n_resamples`` (drawn; null
        for analytic tests), ``resampling`` (``sign_flip``, ``sign_flip_exact`` when every
        sign vector is enumerated, ``multinomial`` or ``poisson`` bootstrap, ``permutation``
        for Tukey; null for analytic tests), ``seed``, ``conventions``, ``note``. A pair
        whose differences are all zero has ``p_value`` 1; an undefined statistic (e.g. sd 0)
        is null. ``note`` says what the test can conclude when the number of users limits
        it: why ``p_value`` is null, that the smallest p it can reach is above ``alpha``, or
        that a p below what it resolves was raised to that minimum (the policy, one for
        every test: :mod:`polars_rankeval._utils.stats`, "What a test can conclude with few
        users").

    Examples
    --------
    >>> import polars as pl
    >>> import polars_rankeval as prk
    >>> per_user = pl.DataFrame({
    ...     "system": ["a"] * 4 + ["b"] * 4,
    ...     "user": [1, 2, 3, 4] * 2,
    ...     "ndcg@10": [0.2, 0.4, 0.1, 0.3, 0.5, 0.6, 0.4, None],
    ... })
    >>> out = prk.compare_per_user(per_user, baseline="a", test="randomization")
    >>> out.select("system", "mean", "baseline_mean", "diff", "p_value", "n_users",
    ...            "n_dropped", "resampling")
    shape: (1, 8)
    ┌────────┬──────┬───────────────┬──────────┬─────────┬─────────┬───────────┬─────────────────┐
    │ system ┆ mean ┆ baseline_mean ┆ diff     ┆ p_value ┆ n_users ┆ n_dropped ┆ resampling      │
    │ ---    ┆ ---  ┆ ---           ┆ ---      ┆ ---     ┆ ---     ┆ ---       ┆ ---             │
    │ str    ┆ f64  ┆ f64           ┆ f64      ┆ f64     ┆ i64     ┆ i64       ┆ str             │
    ╞════════╪══════╪═══════════════╪══════════╪═════════╪═════════╪═══════════╪═════════════════╡
    │ b      ┆ 0.5  ┆ 0.233333      ┆ 0.266667 ┆ 0.25    ┆ 3       ┆ 1         ┆ sign_flip_exact │
    └────────┴──────┴───────────────┴──────────┴─────────┴─────────┴───────────┴─────────────────┘

    The differences are 0.3, 0.2 and 0.3, all positive: of the 2**3 sign flips only
    "all +" and "all -" reach |mean| = 0.8 / 3, so p = 2 / 8.
    """
    _check_options(
        test=test,
        correction=correction,
        family=family,
        alpha=alpha,
        n_resamples=n_resamples,
        seed=seed,
        confidence=confidence,
        ci=ci,
    )
    frame, names, directions = _read_per_user(per_user, metrics, by, user, higher_is_better)
    labels = frame.get_column(by).cast(pl.String)
    chosen, pairs = _chosen_pairs(labels, by, systems, baseline)

    ci_method = ("t" if test == "t" else "bca") if ci == "auto" else ci
    correction_name = (
        correction if correction is not None else ("none" if test == "tukey" else "holm")
    )
    scipy_stats()  # a clear ImportError before any work

    # The columns of the value matrices are the systems in sorted order, whatever the
    # order of systems=: Tukey's permutations (and every sum over systems) are drawn
    # over the columns, so the p-values do not depend on the order in the call.
    canonical = sorted(chosen)
    position = [canonical.index(s) for s in chosen]
    pairs = [(position[a], position[b]) for a, b in pairs]
    prepared = _pair_values(frame.with_columns(labels.alias(by)), names, by, user, canonical)

    show = progress if progress is not None else sys.stderr.isatty()
    total = sum(resamples_needed(test, ci_method, v.shape[0], n_resamples) for _, v, _ in prepared)
    bar = resampling_progress(total, show)
    records: list[dict[str, Any]] = []
    try:
        for name, values, dropped in prepared:
            stats = run_tests(
                values,
                pairs,
                test=test,
                ci=ci_method,
                confidence=confidence,
                n_resamples=n_resamples,
                seed=seed,
                metric=name,
                progress=bar,
            )
            means = values.mean(axis=0)
            sign = -1.0 if directions[name] is False else 1.0
            for k, (a, b) in enumerate(pairs):
                wins, ties, losses = win_tie_loss(
                    sign * values[:, a], sign * values[:, b], tie_tolerance
                )
                records.append(
                    {
                        "metric": name,
                        "higher_is_better": directions[name],
                        "system": canonical[a],
                        "baseline": canonical[b],
                        "mean": float(means[a]),
                        "baseline_mean": float(means[b]),
                        "diff": float(means[a] - means[b]),
                        "ci_low": _num(stats.ci_low[k]),
                        "ci_high": _num(stats.ci_high[k]),
                        "effect_size": _num(stats.effect_size[k]),
                        "p_value": _num(stats.p_value[k]),
                        "n_users": values.shape[0],
                        "n_dropped": dropped,
                        "wins": wins,
                        "ties": ties,
                        "losses": losses,
                        "n_resamples": stats.n_resamples,
                        "resampling": stats.resampling,
                        "note": _note(stats, k, test, alpha, values.shape[0]),
                    }
                )
    finally:
        bar.close()

    p = np.array([np.nan if r["p_value"] is None else r["p_value"] for r in records])
    adjusted = np.full(p.shape, np.nan)
    if family == "all":
        adjusted = adjust(p, correction_name)
    else:
        metric_of = np.array([r["metric"] for r in records], dtype=object)
        for name in names:
            mask = metric_of == name
            adjusted[mask] = adjust(p[mask], correction_name)
    schema = {
        "metric": pl.String,
        "higher_is_better": pl.Boolean,
        "system": pl.String,
        "baseline": pl.String,
        "mean": pl.Float64,
        "baseline_mean": pl.Float64,
        "diff": pl.Float64,
        "ci_low": pl.Float64,
        "ci_high": pl.Float64,
        "effect_size": pl.Float64,
        "p_value": pl.Float64,
        "n_users": pl.Int64,
        "n_dropped": pl.Int64,
        "wins": pl.Int64,
        "ties": pl.Int64,
        "losses": pl.Int64,
        "n_resamples": pl.Int64,
        "resampling": pl.String,
        "note": pl.String,
    }
    out = pl.DataFrame(records, schema=schema, orient="row")
    out = out.with_columns(
        p_adjusted=pl.Series(adjusted, dtype=pl.Float64).fill_nan(None),
        test=pl.lit(test),
        correction=pl.lit(correction_name),
        family=pl.lit(family),
        alpha=pl.lit(float(alpha)),
        tie_tolerance=pl.lit(float(tie_tolerance)),
        confidence=pl.lit(float(confidence)),
        ci_method=pl.lit(ci_method),
        effect_size_kind=pl.lit("rank_biserial" if test == "wilcoxon" else "cohen_d"),
        seed=pl.lit(seed, dtype=pl.Int64),
        conventions=pl.lit(conventions, dtype=pl.String),
    ).with_columns(significant=pl.col("p_adjusted") <= pl.col("alpha"))
    return out.select(RESULT_COLUMNS)


def win_tie_loss(
    values: np.ndarray, baseline: np.ndarray, tolerance: float
) -> tuple[int, int, int]:
    """Users where ``values`` is above ``baseline`` by more than ``tolerance``, within it, below.

    Higher is a win: the caller negates both sides of a lower-is-better metric.

    Examples
    --------
    >>> import numpy as np
    >>> from polars_rankeval.analysis.compare_per_user import win_tie_loss
    >>> win_tie_loss(np.array([0.5, 0.2, 0.3]), np.array([0.25, 0.2, 0.4]), 1e-9)
    (1, 1, 1)
    """
    diff = values - baseline
    wins = int(np.count_nonzero(diff > tolerance))
    losses = int(np.count_nonzero(diff < -tolerance))
    return wins, diff.shape[0] - wins - losses, losses


def _note(stats: PairStats, k: int, test: str, alpha: float, n: int) -> str | None:
    """What the test can conclude on these users, when it is limited by their number.

    The policy is in :mod:`polars_rankeval._utils.stats` ("What a test can conclude with few
    users"); this is its one sentence per pair.
    """
    if stats.note[k] is not None:
        return stats.note[k]
    floor = float(stats.smallest_p[k])
    if floor > alpha:
        return (
            f"cannot be significant at alpha={alpha:g}: with these {n} user(s) the "
            f"smallest p {test!r} can reach is {floor:.4g}"
        )
    if stats.raised[k]:
        return (
            f"p raised to {floor:.4g}, the smallest p {test!r} can resolve with these {n} user(s)"
        )
    return None


def _num(value: float) -> float | None:
    return None if value is None or not math.isfinite(value) else float(value)
