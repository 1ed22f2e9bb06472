"""``compare``: paired significance tests between systems, evaluated from the long frame.

Per-user values come from one ``evaluate(per_user=True, by=...)`` plan over all
systems; the metrics that have no per-user mean (global, per-item, or aggregated
otherwise) are refused before any work. The tests and their result table are
:func:`~polars_rankeval.analysis.compare_per_user.compare_per_user`'s, which also takes
a per-user frame the caller already has.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import polars as pl

from polars_rankeval._utils.constraints import COLUMN, Frame, validate_params
from polars_rankeval._utils.stats import CIMethod, CorrectionName, TestName
from polars_rankeval._utils.types import is_spark_frame, make_columns
from polars_rankeval.analysis.compare_options import TEST_OPTIONS, Family, _check_options
from polars_rankeval.analysis.compare_per_user import compare_per_user
from polars_rankeval.analysis.paired_values import _local
from polars_rankeval.metrics.grammar import METRICS, MetricsArg, parse_metrics
from polars_rankeval.plan.job import Job
from polars_rankeval.plan.validate import to_lazy

__all__ = ["compare"]

_NOT_FORWARDED = ("per_user", "per_item", "aggregate")


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
