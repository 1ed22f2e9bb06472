"""``compare``: paired significance tests between systems, with effect sizes and intervals.

Per-user values come from one ``evaluate(per_user=True, by=...)`` plan over all
systems (or from a per-user frame the caller already has, :func:`compare_per_user`);
the tests, resampling, intervals and corrections are in :mod:`polars_rankeval._utils.stats`.
"""

from __future__ import annotations

import math
import re
import sys
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import numpy as np
import polars as pl

from polars_rankeval._utils.constraints import (
    COLUMN,
    FLAG,
    Frame,
    Instance,
    Integer,
    ListOf,
    Number,
    Options,
    Spec,
    Text,
    Unchecked,
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
from polars_rankeval._utils.types import is_spark_frame, make_columns
from polars_rankeval.api.evaluate import METRICS
from polars_rankeval.metrics.params import Interval
from polars_rankeval.plan.job import Job, MetricsArg, parse_metrics
from polars_rankeval.plan.validate import to_lazy

__all__ = [
    "RESULT_COLUMNS",
    "compare",
    "compare_per_user",
    "metric_direction",
    "win_tie_loss",
]

Family = Literal["all", "metric"]
FAMILIES: tuple[str, ...] = ("all", "metric")

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

_NOT_FORWARDED = ("per_user", "per_item", "aggregate")


_PROBABILITY = Number(Interval(0, 1, closed="neither"))
TIE_TOLERANCE = Number(Interval(0, None))
"""``tie_tolerance``: two values this close are a tie (compare, differences, judgements)."""
TEST_OPTIONS: dict[str, Spec] = {
    "baseline": Unchecked("a system id, looked up in the data"),
    "systems": [ListOf(what="a list of system ids"), None],
    "test": Options.of(TestName),
    "correction": [Options.of(CorrectionName), None],
    "family": Options.of(Family),
    "alpha": _PROBABILITY,
    "n_resamples": Integer(Interval(1, None)),
    "seed": Integer(Interval(0, None)),
    "confidence": _PROBABILITY,
    "ci": Options.of(CIMethod),
    "progress": [FLAG, None],
    "tie_tolerance": TIE_TOLERANCE,
}
"""The options of the paired tests, shared by :func:`compare` and :func:`compare_per_user`."""


@validate_params(
    {
        "data": Frame("polars", "pyarrow", "pandas", "pyspark"),
        "metrics": METRICS,
        "by": COLUMN,
        **TEST_OPTIONS,
    }
)
def compare(
    data: Any,
    metrics: MetricsArg,
    *,
    by: str = "system",
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
    **evaluate_options: Any,
) -> pl.DataFrame:
    """Compare systems on paired per-user metric values: tests, effect sizes, intervals.

    The per-user values of every system come from one
    ``evaluate(data, metrics, by=by, per_user=True, **evaluate_options)`` plan; then
    :func:`compare_per_user` pairs them by user and tests every system against
    ``baseline`` (or every pair of systems).

    Parameters
    ----------
    data
        The long frame with a ``by`` column naming the system of each row (as for
        :func:`polars_rankeval.evaluate`); a LazyFrame is executed. A Spark DataFrame
        is evaluated per user on Spark (:mod:`polars_rankeval.api.spark`); the per-user
        values (one row per system and user) are collected and tested here.
    metrics
        Per-user metrics (global metrics such as ``global_auc`` or ``coverage`` have
        no per-user value and are refused, and so are metrics with an ``aggregate=``
        option other than the mean, e.g. ``num_ret(aggregate=sum)``: the tests are of
        the mean of paired per-user values).
    by
        The column that names the systems.
    baseline
        The system every other system is compared with; ``None`` (default) compares
        every pair of systems, each pair against the one of the two that comes first
        in ``systems`` (with two systems, the first is the baseline).
    systems
        The systems to compare, in this order (default: every value of ``by``, in the
        order they first appear in ``data``).
    test
        ``"randomization"`` (default: Fisher's paired randomization test of the mean
        difference, exact when ``2**n_users <= n_resamples``), ``"bootstrap"`` (paired
        bootstrap, shift method), ``"t"`` (paired Student t), ``"wilcoxon"``
        (signed-rank, ``scipy.stats.wilcoxon`` defaults), ``"sign"`` (exact binomial)
        or ``"tukey"`` (randomized Tukey HSD over all the compared systems, Carterette
        2012). All two-sided.
    correction
        Multiple-comparison correction of the p-values within each family:
        ``"holm"`` (the default, except for ``tukey``), ``"bonferroni"``,
        ``"hochberg"``, ``"bh"`` (Benjamini-Hochberg), ``"by"``
        (Benjamini-Yekutieli) or ``"none"``. ``tukey`` controls the family-wise error
        by construction and takes ``"none"`` only.
    family
        Which comparisons form one family for the correction: ``"all"`` (default:
        every comparison of the call, all metrics and pairs) or ``"metric"`` (the
        pairs of each metric separately).
    alpha
        Significance level in (0, 1): ``significant`` is ``p_adjusted <= alpha``.
    n_resamples
        Resamples of the randomization, bootstrap and Tukey tests and of the bootstrap
        intervals (>= 1).
    seed
        Seed of the resampling; see Notes.
    confidence
        Level of the interval of the mean difference, in (0, 1).
    ci
        ``"auto"`` (default: ``"t"`` for the t test, else ``"bca"``), ``"bca"``
        (bootstrap, bias-corrected and accelerated), ``"percentile"`` (bootstrap),
        ``"t"`` (Student t interval) or ``"none"``.
    tie_tolerance
        A user is a tie of a pair when its two values differ by at most this much
        (absolute, >= 0; default ``1e-9``, so that values computed along different
        float paths still tie); else a win or a loss of ``system`` against
        ``baseline`` (the ``wins``, ``ties``, ``losses`` columns).
    progress
        Report the resamples done on stderr: ``True`` (a ``tqdm`` bar when installed,
        the ``[progress]`` extra, else a line rewritten in place), ``False``, or
        ``None`` (default): when stderr is a terminal.
    **evaluate_options
        Passed to :func:`polars_rankeval.evaluate` (``ties``, ``users``, ``empty``,
        ``user``, ``item``, ``score``, ``engine`` ...).

    Returns
    -------
    polars.DataFrame
        One row per (metric, system, baseline): see :func:`compare_per_user`. The
        ``conventions`` column records ``ties``, ``empty`` and ``users`` (and the
        preset of ``conventions=``, passed on to ``evaluate``: the metrics are then
        that library's names and the rows name them ``<name>@k[<preset>]``).

    Notes
    -----
    A user counts for a metric when every compared system has a defined (non-null)
    value for it, by the ``users=`` and ``empty=`` rules of ``evaluate``: with the
    default ``empty="skip"`` a user whose value is undefined for one system is left out
    of that metric's comparison (``n_dropped``); ``empty="zero"`` keeps them as 0.
    ``mean`` and ``baseline_mean`` are over the ``n_users`` paired users.

    Examples
    --------
    >>> import polars_rankeval as prk
    >>> from polars_rankeval.api.datasets import load_systems
    >>> runs = load_systems()
    >>> result = prk.compare(runs, ["ndcg@10"], baseline="bm25", n_resamples=1000)
    >>> result.select("system", "baseline", "n_users", "significant")
    shape: (3, 4)
    ┌────────┬──────────┬─────────┬─────────────┐
    │ system ┆ baseline ┆ n_users ┆ significant │
    │ ---    ┆ ---      ┆ ---     ┆ ---         │
    │ str    ┆ str      ┆ i64     ┆ bool        │
    ╞════════╪══════════╪═════════╪═════════════╡
    │ dense  ┆ bm25     ┆ 500     ┆ true        │
    │ hybrid ┆ bm25     ┆ 500     ┆ true        │
    │ random ┆ bm25     ┆ 500     ┆ true        │
    └────────┴──────────┴─────────┴─────────────┘
    """
    from polars_rankeval.api.evaluate import evaluate

    for name in (*_NOT_FORWARDED, "by"):
        if name in evaluate_options:
            msg = f"compare() does not take {name}=; it evaluates per user over by={by!r}"
            raise TypeError(msg)
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
    preset = evaluate_options.pop("conventions", None)
    shown: dict[str, str] = {}
    if preset is not None:  # a library's conventions (polars_rankeval.conventions)
        from polars_rankeval.conventions.resolve import resolve_options

        metrics, shown = resolve_options(
            preset,
            metrics,  # type: ignore[arg-type]
            evaluate_options,
            evaluate,
        )
    source: Any
    if is_spark_frame(data):  # per-user values on Spark, the tests here on the driver
        from polars_rankeval.engines.spark_engine import SparkEngine

        source, schema = data, SparkEngine().bind(data).schema()
    else:
        source, _ = to_lazy(data)
        schema = source.collect_schema()
    _refuse_global(schema, metrics, by, evaluate_options)
    order = None
    if systems is None and by in schema and not is_spark_frame(source):
        # The order the systems come in (evaluate's output is grouped, not in this order).
        order = (
            source.select(pl.col(by).cast(pl.String).drop_nulls().unique(maintain_order=True))
            .collect()
            .get_column(by)
            .to_list()
        )
    frame = _local(evaluate(source, metrics, by=by, per_user=True, **evaluate_options))
    if order is not None:  # the systems with per-user values (users= may leave some out)
        present = set(frame.get_column(by).cast(pl.String).to_list())
        systems = [s for s in order if s in present]
    parsed = parse_metrics(metrics)
    names = [m.name for m in parsed]
    if shown:
        frame = frame.rename({name: shown[name] for name in names})
        names = [shown[name] for name in names]
    # The direction of each column is its metric's declaration, whatever it is called.
    directions = {name: m.spec.higher_is_better for name, m in zip(names, parsed, strict=True)}
    users = evaluate_options.get("users", "truth")
    conventions = (
        (f"{preset}: " if preset is not None else "")
        + f"ties={evaluate_options.get('ties', 'expected')}, "
        f"empty={evaluate_options.get('empty', 'skip')}, "
        f"users={users if isinstance(users, str) else 'list'}"
    )
    return compare_per_user(
        frame,
        names,
        by=by,
        user=evaluate_options.get("user", "user"),
        baseline=baseline,
        systems=systems,
        test=test,
        correction=correction,
        family=family,
        alpha=alpha,
        n_resamples=n_resamples,
        seed=seed,
        confidence=confidence,
        ci=ci,
        tie_tolerance=tie_tolerance,
        progress=progress,
        conventions=conventions,
        higher_is_better=directions,
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
    frame = _local(per_user if is_spark_frame(per_user) else to_lazy(per_user, "per_user")[0])
    for column, role in ((by, "by"), (user, "user")):
        if column not in frame.columns:
            msg = (
                f"{role} column {column!r} not found in the per-user frame; available "
                f"columns: {', '.join(frame.columns) or 'none'}"
            )
            raise ValueError(msg)
    if metrics is None:
        names = [c for c in frame.columns if c not in (by, user)]
    else:
        names = [metrics] if isinstance(metrics, str) else list(metrics)
    if not names:
        msg = "metrics must name at least one metric column"
        raise ValueError(msg)
    if len(set(names)) != len(names):
        msg = f"metrics must be distinct, got {names!r}"
        raise ValueError(msg)
    for name in names:
        if name not in frame.columns:
            msg = (
                f"metric column {name!r} not found in the per-user frame; available "
                f"columns: {', '.join(frame.columns)}"
            )
            raise ValueError(msg)
        dtype = frame.schema[name]
        if not (dtype.is_numeric() or dtype == pl.Null):
            msg = f"metric column {name!r} must be numeric, got {dtype}"
            raise TypeError(msg)
        value = pl.col(name).cast(pl.Float64)
        bad = frame.filter(value.is_nan() | value.is_infinite())
        if bad.height:
            msg = (
                f"metric column {name!r} has {bad.height} NaN or infinite value(s) (e.g. "
                f"{by}={bad[by][0]!r}, {user}={bad[user][0]!r}); use null for an undefined "
                "value"
            )
            raise ValueError(msg)
    directions = _directions(names, higher_is_better)
    if frame.get_column(user).null_count():
        msg = f"user column {user!r} has null ids in the per-user frame"
        raise ValueError(msg)

    labels = frame.get_column(by).cast(pl.String)
    available = labels.drop_nulls().unique(maintain_order=True).to_list()
    if systems is None:
        chosen = available
    else:
        chosen = [str(s) for s in systems]
        if len(set(chosen)) != len(chosen):
            msg = f"systems must be distinct, got {list(systems)!r}"
            raise ValueError(msg)
        unknown = [s for s in chosen if s not in available]
        if unknown:
            msg = (
                f"system(s) {', '.join(map(repr, unknown))} not found in column {by!r}; "
                f"systems: {', '.join(sorted(available))}"
            )
            raise ValueError(msg)
    if len(chosen) < 2:
        msg = f"compare needs at least 2 systems in column {by!r}, got {len(chosen)}: {chosen!r}"
        raise ValueError(msg)
    if baseline is not None:
        base = str(baseline)
        if base not in chosen:
            msg = (
                f"baseline {baseline!r} not found among the systems of column {by!r}: "
                f"{', '.join(sorted(chosen))}"
            )
            raise ValueError(msg)
        index = chosen.index(base)
        pairs = [(j, index) for j in range(len(chosen)) if j != index]
    else:
        pairs = [(j, i) for i in range(len(chosen)) for j in range(i + 1, len(chosen))]

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


_PRESET_NAME = re.compile(r"(?P<name>.+?)(?:@(?P<k>\d+))?\[(?P<preset>[^\[\]]+)\]")


def metric_direction(column: str) -> bool | None:
    """The declared direction of the metric a column is named after.

    ``True`` when a higher value is better, ``False`` when lower is better, ``None``
    when neither (counts such as ``num_ret``) or when ``column`` names no registered
    metric. Both the canonical names (``fallout@3``, ``ndcg(gain=exp)@10``) and the
    names of a library's preset (``RetrievalFallOut@3[torchmetrics]``, as
    ``conventions=`` names its columns) resolve to the registry's declaration.

    Examples
    --------
    >>> from polars_rankeval.analysis.compare import metric_direction
    >>> metric_direction("ndcg@10"), metric_direction("RetrievalFallOut@3[torchmetrics]")
    (True, False)
    >>> metric_direction("num_ret@10") is None, metric_direction("latency") is None
    (True, True)
    """
    from polars_rankeval.metrics.grammar import parse_metric

    try:
        return parse_metric(column).spec.higher_is_better
    except (ValueError, TypeError):
        pass
    match = _PRESET_NAME.fullmatch(column)
    if match is None:
        return None
    from polars_rankeval.conventions.resolve import get_convention

    try:
        mapped = get_convention(match["preset"]).lookup(match["name"])
        if mapped.metric is None:
            return None
        k = f"@{match['k']}" if match["k"] is not None else ""
        return parse_metric(mapped.metric + k).spec.higher_is_better
    except (ValueError, TypeError):
        return None


def _directions(
    names: list[str], given: Mapping[str, bool | None] | None
) -> dict[str, bool | None]:
    """The direction of every metric column: ``given``, else :func:`metric_direction`."""
    given = {} if given is None else given
    if not isinstance(given, Mapping):
        msg = f"higher_is_better must be a dict of column -> bool or None, got {given!r}"
        raise TypeError(msg)
    unknown = sorted(str(c) for c in given if c not in names)
    if unknown:
        msg = (
            f"higher_is_better names column(s) {', '.join(map(repr, unknown))} that are "
            f"not compared; metric columns: {', '.join(sorted(names))}"
        )
        raise ValueError(msg)
    for column, value in given.items():
        if value is not None and not isinstance(value, bool):
            msg = f"higher_is_better[{column!r}] must be True, False or None, got {value!r}"
            raise TypeError(msg)
    return {name: given[name] if name in given else metric_direction(name) for name in names}


def _pair_values(
    frame: pl.DataFrame, names: list[str], by: str, user: str, chosen: list[str]
) -> list[tuple[str, np.ndarray, int]]:
    """Per metric: (name, values of the paired users x systems, users dropped).

    Users are numbered by their sorted ids (a dense rank), systems by their position in
    ``chosen``; the values are scattered into a users x systems matrix (NaN = no row or
    a null value), and the users with a value for every system are kept, in user order.
    """
    m = len(chosen)
    rows = frame.filter(pl.col(by).is_in(chosen)).select(
        (pl.col(user).rank("dense") - 1).cast(pl.Int64).alias("__user"),
        pl.col(by).replace_strict(chosen, list(range(m)), return_dtype=pl.Int64).alias("__system"),
        *(pl.col(name).cast(pl.Float64).fill_null(float("nan")) for name in names),
    )
    user_pos = rows.get_column("__user").to_numpy()
    system_pos = rows.get_column("__system").to_numpy()
    n = int(user_pos.max()) + 1 if user_pos.size else 0
    cell = user_pos * m + system_pos
    counts = np.bincount(cell, minlength=n * m)
    if counts.max(initial=0) > 1:
        first = int(np.flatnonzero(counts > 1)[0])
        where = np.flatnonzero(cell == first)[0]
        dup = frame.filter(pl.col(by).is_in(chosen)).row(int(where), named=True)
        msg = (
            f"the per-user frame has {int((counts > 1).sum())} duplicate ({by}, {user}) "
            f"row(s), e.g. {by}={dup[by]!r}, {user}={dup[user]!r}"
        )
        raise ValueError(msg)
    prepared = []
    for name in names:
        matrix = np.full((n, m), np.nan, order="F")
        matrix[user_pos, system_pos] = rows.get_column(name).to_numpy()
        complete = ~np.isnan(matrix).any(axis=1)
        values = np.asfortranarray(matrix[complete])
        dropped = n - values.shape[0]
        if values.shape[0] == 0:
            msg = (
                f"no user has a value of {name!r} for every compared system "
                f"({', '.join(chosen)}); {dropped} user(s) have a value for some of them"
            )
            raise ValueError(msg)
        prepared.append((name, values, dropped))
    return prepared


def win_tie_loss(
    values: np.ndarray, baseline: np.ndarray, tolerance: float
) -> tuple[int, int, int]:
    """Users where ``values`` is above ``baseline`` by more than ``tolerance``, within it, below.

    Higher is a win: the caller negates both sides of a lower-is-better metric.

    Examples
    --------
    >>> import numpy as np
    >>> from polars_rankeval.analysis.compare import win_tie_loss
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


def _local(frame: Any) -> pl.DataFrame:
    """A per-user frame in memory: a LazyFrame collected, a Spark DataFrame too.

    One row per (system, user): small enough for the driver, where the tests run.
    """
    if is_spark_frame(frame):
        from polars_rankeval.engines.spark_ops import to_polars

        return to_polars(frame)
    return frame.collect() if isinstance(frame, pl.LazyFrame) else frame


def _num(value: float) -> float | None:
    return None if value is None or not math.isfinite(value) else float(value)


def _check_options(
    *,
    test: str,
    correction: str | None,
    family: str,
    alpha: float,
    n_resamples: int,
    seed: int,
    confidence: float,
    ci: str,
) -> None:
    # The values themselves are declared (TEST_OPTIONS); this is their one relation.
    if test == "tukey" and correction not in (None, "none"):
        msg = (
            f"test='tukey' controls the family-wise error over all pairs by construction; "
            f"it takes correction='none' (or no correction=), got {correction!r}"
        )
        raise ValueError(msg)


def _refuse_global(
    schema: pl.Schema, metrics: MetricsArg, by: str, options: dict[str, Any]
) -> None:
    parsed = parse_metrics(metrics)
    own = [m for m in parsed if m.aggregate != "mean"]
    if own:
        plain = own[0].spec.name + (f"@{own[0].k}" if own[0].k is not None else "")
        msg = (
            f"metric(s) {', '.join(m.name for m in own)} are aggregated over users by "
            "their aggregate= option, not by the mean: compare's paired tests, means, "
            "differences and intervals are of the mean of per-user values. Compare the "
            f"per-user values without the option (e.g. {parse_metrics(plain)[0].name!r}; "
            "for aggregate=sum, over paired users the sum is n_users x the mean, the same "
            "test), or evaluate the aggregate per system with evaluate(by=...)"
        )
        raise ValueError(msg)
    items = [m.name for m in parsed if m.spec.scope == "item"]
    if items:
        msg = (
            f"metric(s) {', '.join(items)} have one value per item, not per user, so there "
            "is nothing to pair; compare takes per-user metrics (see list_metrics())"
        )
        raise ValueError(msg)
    cols = make_columns(
        user=options.get("user", "user"),
        item=options.get("item", "item"),
        score=options.get("score"),
        relevance=options.get("relevance", "relevance"),
        rank=options.get("rank"),
    )
    job = Job.create(
        schema,
        metrics,
        cols,
        by=by,
        ties=options.get("ties", "expected"),
        users="all",
        empty="skip",
        aggregate="mean",
        per_user=False,
        items=options.get("items"),
        history=options.get("history"),
    )
    if job.global_names:
        msg = (
            f"metric(s) {', '.join(job.global_names)} have one value per system, not per "
            "user, so there is nothing to pair; compare takes per-user metrics "
            "(see list_metrics())"
        )
        raise ValueError(msg)
