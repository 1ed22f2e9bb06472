"""``evaluate`` (many metrics, one lazy plan) and ``join`` (recommendations + truth).

The implementation behind ``polars_rankeval.evaluate`` and ``polars_rankeval.join``.
It lives in this private module because the package attribute ``evaluate`` is the
function, which shadows a module of the same name; ``polars_rankeval.evaluate`` (the
module) still exists and re-exports these names for ``from polars_rankeval.evaluate
import ...``. :func:`evaluate` reads its ``engine=`` (:mod:`polars_rankeval.engines.choice`)
and runs the plan with :func:`polars_rankeval.engines.execute.execute` (a LazyFrame: when
the result is collected) or on Spark with :func:`polars_rankeval.engines.memory.run`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, overload

import polars as pl

import polars_rankeval.plan.positions as _positions
from polars_rankeval._utils.constraints import (
    COLUMN,
    COLUMNS,
    FLAG,
    Frame,
    Instance,
    Integer,
    ListOf,
    Number,
    Options,
    validate_params,
)
from polars_rankeval._utils.ties import POLICIES, Ties
from polars_rankeval._utils.types import (
    EMPTY_POLICIES,
    Aggregation,
    EmptyPolicy,
    SummaryForm,
    TiePolicy,
    UserUniverse,
    check_choice,
    make_columns,
)
from polars_rankeval.api.overlap import (
    OverlapWarning,
    flag_names,
    flagged_join,
    overlap_from_joined,
    report_overlap,
)
from polars_rankeval.conventions.presets import PRESETS
from polars_rankeval.engines.choice import ENGINE, EngineArg, decide, engine_of, spark_engine
from polars_rankeval.engines.execute import execute, lazy_result
from polars_rankeval.engines.memory import run
from polars_rankeval.metrics.grammar import METRICS, MetricsArg, parse_metrics
from polars_rankeval.metrics.params import Interval
from polars_rankeval.plan.build import user_partials
from polars_rankeval.plan.finish import finalize_globals as _finalize_globals
from polars_rankeval.plan.finish import summarize
from polars_rankeval.plan.job import RESERVED, Job, NItemsArg, UsersArg
from polars_rankeval.plan.positions import RankPositions
from polars_rankeval.plan.validate import align_ids, to_lazy

__all__ = [
    "RESERVED",
    "MetricsArg",
    "OverlapWarning",
    "UsersArg",
    "evaluate",
    "finalize_globals",
    "global_partials",
    "join",
    "parse_metrics",
    "summarize",
]


@overload
def evaluate(
    data: pl.LazyFrame,
    metrics: MetricsArg,
    *,
    user: str = ...,
    item: str = ...,
    score: str | None = ...,
    relevance: str = ...,
    rank: str | None = ...,
    rank_positions: RankPositions = ...,
    ties: TiePolicy = ...,
    by: str | Sequence[str] | None = ...,
    per_user: bool = ...,
    per_item: bool = ...,
    users: UsersArg = ...,
    empty: EmptyPolicy = ...,
    aggregate: Aggregation | Sequence[Aggregation] = ...,
    summary: SummaryForm = ...,
    ci: Literal["t", "bootstrap"] | None = ...,
    confidence: float = ...,
    n_items: NItemsArg = ...,
    items: pl.DataFrame | pl.LazyFrame | None = ...,
    history: Any = ...,
    rating_range: tuple[float, float] | None = ...,
    validate: bool = ...,
    engine: EngineArg = ...,
    conventions: str | None = ...,
) -> pl.LazyFrame: ...
@overload
def evaluate(
    data: pl.DataFrame | Any,
    metrics: MetricsArg,
    *,
    user: str = ...,
    item: str = ...,
    score: str | None = ...,
    relevance: str = ...,
    rank: str | None = ...,
    rank_positions: RankPositions = ...,
    ties: TiePolicy = ...,
    by: str | Sequence[str] | None = ...,
    per_user: bool = ...,
    per_item: bool = ...,
    users: UsersArg = ...,
    empty: EmptyPolicy = ...,
    aggregate: Aggregation | Sequence[Aggregation] = ...,
    summary: SummaryForm = ...,
    ci: Literal["t", "bootstrap"] | None = ...,
    confidence: float = ...,
    n_items: NItemsArg = ...,
    items: pl.DataFrame | pl.LazyFrame | None = ...,
    history: Any = ...,
    rating_range: tuple[float, float] | None = ...,
    validate: bool = ...,
    engine: EngineArg = ...,
    conventions: str | None = ...,
) -> pl.DataFrame: ...


@validate_params(
    {
        "data": Frame("polars", "pyarrow", "pandas", "pyspark"),
        "metrics": METRICS,
        "user": COLUMN,
        "item": COLUMN,
        "score": [COLUMN, None],
        "relevance": COLUMN,
        "rank": [COLUMN, None],
        "rank_positions": Options.of(RankPositions),
        "ties": [Options(live=POLICIES), Instance(Ties, what="a Ties policy")],
        "by": [*COLUMNS, None],
        "per_user": FLAG,
        "per_item": FLAG,
        "users": [
            Options.of(UserUniverse),
            Instance(pl.Series, pl.DataFrame, what="a polars Series or DataFrame of user ids"),
            ListOf(what="a list of user ids"),
            Frame("pyspark"),
        ],
        "empty": Options.of(EmptyPolicy),
        "aggregate": [
            Options.of(Aggregation),
            ListOf(Options.of(Aggregation), what="a list of aggregation names"),
        ],
        "summary": Options.of(SummaryForm),
        "ci": [Options("bootstrap", "t"), None],
        "confidence": Number(Interval(0, 1, closed="neither")),
        "n_items": [
            Integer(Interval(1, None)),
            Frame("polars", "pyspark"),
            Instance(pl.Series, what="a polars Series of catalog items"),
            None,
        ],
        "items": [Frame("polars", "pyspark"), None],
        "history": [Frame("polars", "pyarrow", "pandas", "pyspark"), None],
        "rating_range": [
            ListOf(Number(), what="a pair (low, high) of numbers", length=2),
            None,
        ],
        "validate": FLAG,
        "conventions": [Options(*PRESETS), None],
        "engine": ENGINE,
    }
)
def evaluate(
    data: Any,
    metrics: MetricsArg,
    *,
    user: str = "user",
    item: str = "item",
    score: str | None = None,
    relevance: str = "relevance",
    rank: str | None = None,
    rank_positions: RankPositions = "relative",
    ties: TiePolicy = "expected",
    by: str | Sequence[str] | None = None,
    per_user: bool = False,
    per_item: bool = False,
    users: UsersArg = "truth",
    empty: EmptyPolicy = "skip",
    aggregate: Aggregation | Sequence[Aggregation] = "mean",
    summary: SummaryForm = "wide",
    ci: Literal["t", "bootstrap"] | None = None,
    confidence: float = 0.95,
    n_items: NItemsArg = None,
    items: pl.DataFrame | pl.LazyFrame | None = None,
    history: Any = None,
    rating_range: tuple[float, float] | None = None,
    validate: bool = True,
    engine: EngineArg = "auto",
    conventions: str | None = None,
) -> pl.DataFrame | pl.LazyFrame:
    """Evaluate many metrics in one lazy plan, in memory or bucket by bucket.

    Ranking within each user, tie groups and relevant counts are computed once, as
    window columns, and shared by every requested metric; the metrics then reduce one
    user's rows with scalar sums in a single ``group_by``. When the input does not fit
    the memory budget, the users are hashed into buckets evaluated one at a time, with
    exactly the same result.

    Parameters
    ----------
    data
        The long frame: one row per (user, item) with a score (or rank) and a
        relevance. A null score marks a judged item that was not recommended; a null
        relevance means not relevant. Polars DataFrame / LazyFrame (e.g.
        ``pl.scan_parquet("runs/*.parquet")``), pyarrow Table or pandas DataFrame.
        Build it with :func:`join` from separate tables.
    metrics
        Metric names in the grammar ``name[(key=value,...)][@k]``, e.g.
        ``["ndcg@10", "precision(rel=2)@5"]``; see :func:`list_metrics`. A list or
        range of cutoffs (``"ndcg@[1,5,10]"``, ``"ndcg@1..100"``) gives one column per
        cutoff, computed in one pass for the metrics with a curve kernel (see
        :func:`polars_rankeval.metrics.grammar.expand_metric`).
    user, item, score, relevance, rank
        Column names; ``score`` defaults to ``"score"``. Pass ``rank=`` (1 = best)
        instead of ``score=``.
    rank_positions
        How ``rank=`` values become positions: ``"relative"`` (default: the ranks only
        order each user's items, renumbered 1..n; equal ranks are ties) or
        ``"absolute"`` (the ranks are the positions, gaps kept, as RecTools reads
        them: an item at rank 9 is outside ``mrr@3`` even when the user has only two
        recommended items). Absolute ranks must be distinct integers >= 1 within a
        user (checked at the call, also with ``validate=False``: a ``ValueError``
        names the column and a value), and only the metrics whose kernels read
        positions as positions are accepted (precision, recall, f1, hit_rate, mrr,
        map, ndcg, dcg, r_precision, relative_precision, the counts, the
        classification metrics over the catalog, coverage, novelty, popularity_bias;
        see ``polars_rankeval.plan.positions.absolute_metrics()``); the list size of
        ``precision(denominator=retrieved)`` and the classification metrics is then
        the number of recommended items ranked within the top k.
    ties
        ``"expected"`` (default: exact expectation over the orderings of tied scores),
        ``"item_desc"`` (trec_eval), ``"item_asc"``, ``"optimistic"``, ``"pessimistic"``.
    by
        Extra grouping columns (e.g. ``"system"``): every metric is computed per
        (by, user) and summarised per by-group, in the same pass.
    per_user
        Return one row per (by, user) with one column per metric instead of the summary.
    per_item
        Return one row per (by, item) for item metrics (family ``item``: how often
        an item is recommended, a hit, its recall over the users it is relevant to).
    users
        Which users are evaluated: ``"truth"`` (default; users with at least one judged
        row, i.e. a non-null relevance), ``"recs"`` (users with a recommendation),
        ``"both"``, ``"all"`` (every user in the data), or an explicit list of user ids
        (users absent from the data are included, without relevant items). Global
        metrics aggregate over the rows of these users. With ``by``, ``"recs"`` (and
        the recommendation half of ``"both"``) is decided over all the by groups: a
        user recommended to in one group is evaluated in every group holding rows of
        it, so that systems are compared on the same users (in a frame from
        :func:`join` a system that recommended nothing to that user scores it as an
        empty list over its truth rows).
    empty
        What an undefined value becomes (a user without relevant items, ...):
        ``"skip"`` (default): the user is left out of that metric's aggregates only,
        so each metric's value covers the users it is defined for (counted in
        ``n_users(<metric>)``) and does not depend on the other metrics requested.
        ``"skip_row"``: a user undefined for any requested per-user metric is left
        out of every aggregate of the row (all cover ``n_users - n_skipped`` users;
        the former default). ``"zero"``: counts as 0. ``"error"``: raise
        ``ValueError`` naming the users (for a LazyFrame when the result is
        collected).
    aggregate
        How the summary aggregates per-user values: ``"mean"`` (default), ``"gmean"``,
        ``"hmean"``, ``"qmean"``, ``"median"``, ``"std"``, or a list of them; see
        :func:`summarize` for the definitions and the column names. Every aggregation
        of a metric covers the same users as its mean. Global metrics (one value per
        by group, e.g. ``global_auc``) are not aggregated.
    summary
        ``"wide"`` (default): one row per by group, one column per metric and
        aggregation. ``"long"``: one row per (by, metric, aggregation) with the
        columns ``metric``, ``aggregation`` (``"global"`` for a global metric),
        ``value``, ``n_users`` (the users the value covers) and ``n_skipped`` (the
        users of the group it leaves out), for plotting and comparing runs.
    ci
        Also the uncertainty of each per-user metric's mean, over the users the mean
        is over: ``se(<metric>)`` (standard error, sd / sqrt(n)) and the interval
        ``ci_low(<metric>)``, ``ci_high(<metric>)`` at ``confidence`` -- ``"t"``
        (Student t; needs scipy) or ``"bootstrap"`` (percentile interval of 10,000
        bootstrap means, seed 0: the same whatever the row order or engine). Null
        with fewer than 2 users. Default ``None``: no intervals. See
        :func:`summarize`; to compare systems, :func:`polars_rankeval.compare`.
    confidence
        The level of the ``ci`` intervals, in (0, 1) (default 0.95).
    n_items
        Catalog size for the metrics that count true negatives over the catalog
        (``fallout``, ``mcc``, ...): an int, or a frame/series of catalog items (every
        item of the data must be in it, unless the only metrics reading it are
        ``coverage(outside_catalog=ignore|count)``, which are defined with items outside
        the catalog). Default: the number of distinct items in the whole input (all
        rows, all by groups) -- a lower bound of the real catalog. The sampled-metric
        estimators ``estimator=rank|mb|bv`` (``ndcg(estimator=bv)@10``) read it as the
        catalog the negatives were drawn from and require it (never inferred).
    items
        An item side table (one row per item) whose columns metrics read by name,
        e.g. item feature vectors or popularity; joined on the item column.
    history
        The users' past interactions (e.g. the training data): a frame with the
        data's user and item columns, one row per interaction (repeats kept), plus any
        column an option names (a weight). Read by the metrics that compare a list with
        what the user already knew: ``serendipity``, ``unexpectedness``,
        ``miscalibration``, ``rsp``. Polars, pyarrow or pandas (a Spark DataFrame on
        Spark, collected).
    rating_range
        ``(low, high)`` of the rating scale for range-normalised errors (``nmae``);
        default: the minimum and maximum relevance over the judged rows.
    validate
        Check the input values (null ids, NaN/inf scores, negative or NaN
        relevance, duplicate (user, item) rows) and raise ``ValueError`` on the first
        problem. In-memory input: at the call. A LazyFrame: when the result is
        collected (in memory, the checks are part of the returned plan and read the
        source in the same query as the evaluation; bucketed, bucket by bucket).
        Costs one hash aggregation over (user, item) (about 30% of a three-metric
        evaluation, see ``benchmarks/RESULTS_LAZY.md``); pass ``False`` to skip it in
        a trusted pipeline.
    engine
        How the evaluation runs (:mod:`polars_rankeval.engines.choice`); the values do
        not depend on it. ``"auto"`` (default; :class:`~polars_rankeval.Auto`): in
        memory if the estimated working memory (rows x bytes per row) fits a budget,
        else bucketed; Spark for a Spark DataFrame. ``"memory"``
        (:class:`~polars_rankeval.Memory`): one lazy plan, never bucketed.
        ``"buckets"`` (:class:`~polars_rankeval.Buckets`): one pass over the input per
        bucket of users, each filtered on a hash of the user. ``"partition"``
        (:class:`~polars_rankeval.Partition`): the input written once to temporary
        Parquet files partitioned by bucket, then each bucket evaluated. ``"spark"``
        (:class:`~polars_rankeval.Spark`): ``data`` is a Spark DataFrame and so is the
        result (:mod:`polars_rankeval.api.spark`). An object sets the options: the
        budget, the number of buckets, the temporary directory, progress on stderr
        (``prk.Buckets(n_buckets=8, temp_dir="/scratch", progress=True)``,
        ``prk.Auto(memory_limit="4GB")``). Polars' own engines (``"streaming"``,
        ``"gpu"``) choose how a query is collected: pass them to the result's
        ``collect`` (a ``ValueError`` here).
    conventions
        A library's conventions (``"trec_eval"``, ``"ranx"``, ``"rectools"``, ...; see
        :func:`polars_rankeval.conventions`): ``metrics`` are then that library's
        metric names (``"MAP@10"``), ``ties``, ``empty`` and ``users`` default to its
        rules, and the output columns are named ``<name>@k[<preset>]``. A metric the
        library computes in a way no option reproduces is refused with the reason.

    Returns
    -------
    polars.DataFrame or polars.LazyFrame
        LazyFrame in, LazyFrame out; anything else in, DataFrame out. A LazyFrame is
        not read at the call: with ``engine="memory"`` the result is the evaluation's
        plan; when rows must be read before the plan can be built (the row count of
        ``"auto"``, a data-wide statistic such as the default ``n_items``, a bucketed
        run) its rows come from a Polars IO source that runs the evaluation when the
        result is collected (:mod:`polars_rankeval.engines.execute`). The
        summary has the by-columns, one column per metric and aggregation (the mean
        named by the metric's canonical string), then ``n_users(<metric>)`` per
        per-user metric (the users its aggregates cover), ``n_users`` (the users
        evaluated) and ``n_skipped`` (the users left out of at least one metric's
        aggregates: undefined for at least one requested per-user metric; under
        ``empty="skip_row"`` they are left out of all of them).

    Examples
    --------
    >>> import polars as pl
    >>> import polars_rankeval as prk
    >>> df = pl.DataFrame({
    ...     "user": [1, 1, 1, 1, 1, 2, 2, 3],
    ...     "item": [1, 3, 2, 6, 4, 1, 2, 1],
    ...     "score": [10.0, 8.0, 6.0, 2.0, None, 0.5, 0.5, 1.0],
    ...     "relevance": [1, 0, 1, 0, 1, 0, 1, 0],
    ... })
    >>> prk.evaluate(df, ["ndcg@2", "mrr"])
    shape: (1, 6)
    ┌──────────┬───────┬─────────────────┬──────────────┬─────────┬───────────┐
    │ ndcg@2   ┆ mrr   ┆ n_users(ndcg@2) ┆ n_users(mrr) ┆ n_users ┆ n_skipped │
    │ ---      ┆ ---   ┆ ---             ┆ ---          ┆ ---     ┆ ---       │
    │ f64      ┆ f64   ┆ i64             ┆ i64          ┆ i64     ┆ i64       │
    ╞══════════╪═══════╪═════════════════╪══════════════╪═════════╪═══════════╡
    │ 0.714306 ┆ 0.875 ┆ 2               ┆ 2            ┆ 3       ┆ 1         │
    └──────────┴───────┴─────────────────┴──────────────┴─────────┴───────────┘

    User 3 has no relevant item: ndcg and mrr are undefined for it. Kendall's tau is
    also undefined for user 2 (a constant score); each metric's mean covers its own
    users, so mrr stays 0.875 beside it (``empty="skip_row"`` would give 1.0, user 1
    alone):

    >>> prk.evaluate(df, ["mrr", "kendall_tau"], per_user=True)
    shape: (3, 3)
    ┌──────┬──────┬─────────────┐
    │ user ┆ mrr  ┆ kendall_tau │
    │ ---  ┆ ---  ┆ ---         │
    │ i64  ┆ f64  ┆ f64         │
    ╞══════╪══════╪═════════════╡
    │ 1    ┆ 1.0  ┆ 0.408248    │
    │ 2    ┆ 0.75 ┆ null        │
    │ 3    ┆ null ┆ null        │
    └──────┴──────┴─────────────┘
    >>> prk.evaluate(df, ["mrr", "kendall_tau"], summary="long")
    shape: (2, 5)
    ┌─────────────┬─────────────┬──────────┬─────────┬───────────┐
    │ metric      ┆ aggregation ┆ value    ┆ n_users ┆ n_skipped │
    │ ---         ┆ ---         ┆ ---      ┆ ---     ┆ ---       │
    │ str         ┆ str         ┆ f64      ┆ i64     ┆ i64       │
    ╞═════════════╪═════════════╪══════════╪═════════╪═══════════╡
    │ mrr         ┆ mean        ┆ 0.875    ┆ 2       ┆ 1         │
    │ kendall_tau ┆ mean        ┆ 0.408248 ┆ 1       ┆ 2         │
    └─────────────┴─────────────┴──────────┴─────────┴───────────┘
    >>> prk.evaluate(df, "mrr", aggregate=["mean", "median"], engine=prk.Buckets(n_buckets=2))
    shape: (1, 5)
    ┌───────┬─────────────┬──────────────┬─────────┬───────────┐
    │ mrr   ┆ median(mrr) ┆ n_users(mrr) ┆ n_users ┆ n_skipped │
    │ ---   ┆ ---         ┆ ---          ┆ ---     ┆ ---       │
    │ f64   ┆ f64         ┆ i64          ┆ i64     ┆ i64       │
    ╞═══════╪═════════════╪══════════════╪═════════╪═══════════╡
    │ 0.875 ┆ 0.875       ┆ 2            ┆ 3       ┆ 1         │
    └───────┴─────────────┴──────────────┴─────────┴───────────┘
    """
    names: dict[str, str] | None = None
    if conventions is not None:  # a library's conventions: metric names and rules, once
        from polars_rankeval.conventions.resolve import under

        rules: dict[str, Any] = {"ties": ties, "empty": empty, "users": users}
        metrics, rules, absolute, names = under(conventions, metrics, rules, rank, evaluate)
        ties, empty, users = rules["ties"], rules["empty"], rules["users"]
        rank_positions = "absolute" if absolute else rank_positions
    runner = engine_of(engine)
    spark = spark_engine(runner, data)
    if spark is not None:
        users, items, n_items, history = (spark.local(v) for v in (users, items, n_items, history))
        lf, eager = pl.LazyFrame(), False
    else:
        lf, eager = to_lazy(data)
    cols = make_columns(user=user, item=item, score=score, relevance=relevance, rank=rank)
    if spark is not None and per_item:
        msg = (
            "per_item=True (item metrics) is not supported on Spark yet; evaluate item "
            "metrics with the Polars engine"
        )
        raise ValueError(msg)
    job = Job.create(
        spark.schema() if spark is not None else lf.collect_schema(),
        metrics,
        cols,
        by=by,
        ties=ties,
        users=users,
        empty=empty,
        aggregate=aggregate,
        per_user=per_user,
        per_item=per_item,
        items=items,
        summary=summary,
        history=history,
        rank_positions=rank_positions,
        ci=ci,
        confidence=confidence,
    )
    if ci == "t":  # a clear ImportError at the call, not when the plan is collected
        from polars_rankeval._utils.stats import scipy_stats

        scipy_stats("evaluate(ci='t') needs scipy for the t quantile")
    options: dict[str, Any] = {
        "n_items": n_items,
        "rating_range": rating_range,
        "validate": validate,
    }
    result: Any
    if spark is not None:
        if job.absolute:  # the ranks are the positions: they must define them
            names_ = [m.spec.name for m in job.metrics]
            _positions.check_ranks(data, cols, job.by, names_)
        result = run(job, spark, head=decide(job, runner).head, **options)
    elif eager:
        result = execute(job, lf, runner, eager=True, **options)
    else:
        result = lazy_result(job, lf, runner, **options)
    if names is None:
        return result  # type: ignore[no-any-return]
    from polars_rankeval.conventions.resolve import rename

    return rename(result, names, long=summary == "long")  # type: ignore[no-any-return]


def global_partials(
    data: Any,
    metrics: MetricsArg,
    *,
    user: str = "user",
    item: str = "item",
    score: str | None = None,
    relevance: str = "relevance",
    rank: str | None = None,
    ties: TiePolicy = "expected",
    by: str | Sequence[str] | None = None,
    users: UsersArg = "truth",
    n_items: int | None = None,
    rating_range: tuple[float, float] | None = None,
) -> dict[str, pl.LazyFrame]:
    """Partial aggregates of the global metrics over rows of whole users.

    For code that splits the users itself (the built-in engines use the engine
    interface, :mod:`polars_rankeval.engines`): compute the partials of each subset of
    whole users, then pass the lists to
    :func:`finalize_globals` with the same options. Per-user metrics in ``metrics``
    are ignored. ``n_items`` and ``rating_range`` must be the data-wide values.
    """
    lf, _ = to_lazy(data)
    job = _global_job(lf.collect_schema(), metrics, user, item, score, relevance, rank, ties, by)
    job.users = users
    job.n_items, job.rating_range = n_items, rating_range
    return user_partials(job, lf)


def finalize_globals(
    partials: dict[str, list[pl.LazyFrame]],
    metrics: MetricsArg,
    *,
    schema: pl.Schema,
    user: str = "user",
    item: str = "item",
    score: str | None = None,
    relevance: str = "relevance",
    rank: str | None = None,
    ties: TiePolicy = "expected",
    by: str | Sequence[str] | None = None,
    n_items: int | None = None,
    rating_range: tuple[float, float] | None = None,
    empty: EmptyPolicy = "skip",
) -> pl.LazyFrame:
    """Merge the partials of :func:`global_partials` and compute the global metrics.

    ``partials`` maps each global metric's name to the partial frames of every subset;
    ``schema`` is the input's schema; ``empty`` is applied to undefined values as
    :func:`evaluate` does. Returns the by-columns and one column per global metric.
    """
    check_choice("empty", empty, EMPTY_POLICIES)
    job = _global_job(schema, metrics, user, item, score, relevance, rank, ties, by)
    job.n_items, job.rating_range, job.empty = n_items, rating_range, empty
    return _finalize_globals(job, partials)


def _global_job(
    schema: pl.Schema,
    metrics: MetricsArg,
    user: str,
    item: str,
    score: str | None,
    relevance: str,
    rank: str | None,
    ties: TiePolicy,
    by: str | Sequence[str] | None,
) -> Job:
    cols = make_columns(user=user, item=item, score=score, relevance=relevance, rank=rank)
    job = Job.create(
        schema,
        metrics,
        cols,
        by=by,
        ties=ties,
        users="all",
        empty="skip",
        aggregate="mean",
        per_user=False,
    )
    job.metrics = [m for m in job.metrics if job.kinds[m.name] == "global"]
    return job


@validate_params(
    {
        "recs": Frame(),
        "truth": Frame(),
        "user": COLUMN,
        "item": COLUMN,
        "score": [COLUMN, None],
        "relevance": [COLUMN, None],
        "rank": [COLUMN, None],
        "by": [*COLUMNS, None],
        "check_overlap": [FLAG, None],
        "subtopic": [COLUMN, None],
    }
)
def join(
    recs: Any,
    truth: Any,
    *,
    user: str = "user",
    item: str = "item",
    score: str | None = None,
    relevance: str | None = None,
    rank: str | None = None,
    by: str | Sequence[str] | None = None,
    check_overlap: bool | None = None,
    subtopic: str | None = None,
) -> pl.DataFrame | pl.LazyFrame:
    """Build the long evaluation frame from recommendations and ground truth.

    A full outer join on (user, item): recommended items that are not in the truth
    get a null relevance (not relevant), judged items that were not recommended get a
    null score.

    Parameters
    ----------
    recs
        Recommendations: user, item and score (or ``rank=``), plus any ``by`` columns.
    truth
        Ground truth: user, item and optionally relevance.
    user, item, score, rank
        Column names; pass ``rank=`` (1 = best) instead of ``score=``.
    relevance
        The truth's relevance column. ``None`` (default): the column ``"relevance"``
        if the truth has one, else every truth row is relevant (1). A name given
        explicitly must exist in the truth (else a ``ValueError``): a misspelt column
        never silently turns every judgment into "relevant". The output column has
        this name (``"relevance"`` by default).
    by
        Columns of ``recs`` that identify several systems or segments; the truth is
        joined to each of them.
    check_overlap
        Count the users, items and rows of the recommendations found in the truth
        (:func:`polars_rankeval.overlap`; logged at INFO level on the
        ``"polars_rankeval"`` logger) and warn with :class:`OverlapWarning` when the
        overlap of any ``by`` group is empty or tiny (no user, item or row in common,
        or fewer than 1% of the truth's users or items recommended). ``None``
        (default): only when both inputs are in memory (two aggregations over the
        joined rows: about the cost of the join itself); a LazyFrame is never read
        by ``join`` unless ``check_overlap=True``, which reads the inputs once at the
        call. ``False``: never.
    subtopic
        The truth's subtopic (intent) column, for the intent-aware metrics
        (``alpha_ndcg``, ``err_ia``, ...): the truth then has one row per (user, item,
        subtopic), grouped by :func:`polars_rankeval.group_subtopics` into one row per
        (user, item) whose relevance is the highest of its subtopic judgments and
        whose ``subtopics`` column lists them (a null subtopic or a (user, item,
        subtopic) judged twice is an error).

    Returns
    -------
    polars.DataFrame or polars.LazyFrame
        A LazyFrame if either input is a LazyFrame, else a DataFrame. Columns: by,
        user, item, score (or rank), relevance (and ``subtopics`` with ``subtopic=``).

    Raises
    ------
    TypeError
        If the id columns are of different kinds in recs and truth: ids are compared
        when they have the same dtype, are integers of different widths (cast to the
        common integer type) or are strings and categoricals (cast to strings);
        integers against strings, and float ids, are refused rather than cast.

    Examples
    --------
    >>> import polars as pl
    >>> import polars_rankeval as prk
    >>> recs = pl.DataFrame({"user": [1, 1], "item": [10, 11], "score": [0.9, 0.8]})
    >>> truth = pl.DataFrame({"user": [1, 1], "item": [11, 12]})
    >>> prk.join(recs, truth).sort("item")
    shape: (3, 4)
    ┌──────┬──────┬───────┬───────────┐
    │ user ┆ item ┆ score ┆ relevance │
    │ ---  ┆ ---  ┆ ---   ┆ ---       │
    │ i64  ┆ i64  ┆ f64   ┆ i32       │
    ╞══════╪══════╪═══════╪═══════════╡
    │ 1    ┆ 10   ┆ 0.9   ┆ null      │
    │ 1    ┆ 11   ┆ 0.8   ┆ 1         │
    │ 1    ┆ 12   ┆ null  ┆ 1         │
    └──────┴──────┴───────┴───────────┘
    """
    recs_lf, recs_eager = to_lazy(recs, "recs")
    truth_lf, truth_eager = to_lazy(truth, "truth")
    extra: list[str] = []
    if subtopic is not None:
        from polars_rankeval.api.subtopics import SUBTOPICS, group_subtopics

        truth_lf = group_subtopics(  # type: ignore[assignment]
            truth_lf, user=user, item=item, subtopic=subtopic, relevance=relevance
        )
        relevance = relevance or "relevance"
        extra = [SUBTOPICS]
    explicit_relevance = relevance is not None
    cols = make_columns(
        user=user, item=item, score=score, relevance=relevance or "relevance", rank=rank
    )
    by_cols = [by] if isinstance(by, str) else list(by or [])
    recs_schema, truth_schema = recs_lf.collect_schema(), truth_lf.collect_schema()
    roles = {cols.user, cols.item, cols.order, cols.relevance}
    for column in by_cols:
        if column in roles:
            msg = (
                f"by column {column!r} is also the user, item, score/rank or relevance "
                "column; by= names extra columns of recs such as 'system'"
            )
            raise ValueError(msg)
    if len({cols.user, cols.item, cols.order}) < 3 or cols.relevance in (cols.user, cols.item):
        msg = (
            f"user, item, score/rank and relevance must be different columns, got "
            f"user={cols.user!r}, item={cols.item!r}, order={cols.order!r}, "
            f"relevance={cols.relevance!r}"
        )
        raise ValueError(msg)
    truth_needed = [cols.user, cols.item, *([cols.relevance] if explicit_relevance else [])]
    for frame, schema, needed in (
        ("recs", recs_schema, [*by_cols, cols.user, cols.item, cols.order]),
        ("truth", truth_schema, truth_needed),
    ):
        for name in needed:
            if name not in schema:
                msg = (
                    f"column {name!r} not found in {frame}; available columns: "
                    f"{', '.join(schema.names()) or 'none'}"
                )
                if frame == "truth" and name == cols.relevance:
                    msg += (
                        " (leave relevance= out to mark every truth row relevant when the "
                        "truth has no relevance column)"
                    )
                raise ValueError(msg)
    recs_lf, truth_lf = align_ids(recs_lf, truth_lf, [cols.user, cols.item])
    if cols.relevance in truth_schema:
        truth_sel = truth_lf.select(cols.user, cols.item, cols.relevance, *extra)
    else:
        truth_sel = truth_lf.select(
            cols.user, cols.item, pl.lit(1, dtype=pl.Int32).alias(cols.relevance)
        )
    recs_sel = recs_lf.select(*by_cols, cols.user, cols.item, cols.order)
    eager = recs_eager and truth_eager
    keys = [*by_cols, cols.user, cols.item]
    output = [*keys, cols.order, cols.relevance, *extra]
    in_recs, in_truth = flag_names(set(output))
    flagged = flagged_join(recs_sel, truth_sel, cols.user, cols.item, by_cols, in_recs, in_truth)
    if not (check_overlap or (check_overlap is None and eager)):
        joined = flagged.select(output)  # the flags are projected away
        return joined.collect() if eager else joined

    def counts(frame: pl.LazyFrame) -> pl.DataFrame:
        query = overlap_from_joined(frame, cols.user, cols.item, by_cols, in_recs, in_truth)
        # Lazy sources may be larger than memory: stream the count (joins and group_bys).
        return query.collect(engine="auto" if eager else "streaming")

    if eager:  # the join is computed anyway: count on its result
        done = flagged.collect()
        report_overlap(counts(done.lazy()), by_cols)
        return done.select(output)
    report_overlap(counts(flagged), by_cols)
    return flagged.select(output)
