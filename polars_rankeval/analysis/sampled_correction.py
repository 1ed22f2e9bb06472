"""Sampled metrics and their corrections (Krichene & Rendle, KDD 2020; CACM 2022).

In a *sampled* evaluation each user's held-out positive is ranked among ``m`` sampled
negatives instead of the whole catalog of ``n`` items (see
:func:`polars_rankeval.sample_negatives`). The positive's sampled rank ``i`` (1 to
``m + 1``) is a random function of its full-catalog rank ``r`` (1 to ``n``): ``i - 1``
is the number of sampled negatives among the ``r - 1`` negatives ranked above it, a
hypergeometric variable (``m`` drawn without replacement from ``n - 1`` negatives) or,
in the paper's analysis, binomial ``Bin(m, (r - 1) / (n - 1))`` (with replacement). A
metric computed on the sample is then a biased estimate of the full-catalog metric, and
can even order two systems the other way round.

A *corrected* metric replaces the metric's value at sampled rank ``i`` by a value
``T(i)`` chosen for the full-catalog metric ``M(r)``. :func:`correction_table` gives
these values for four estimators:

``"sampled"``
    The metric of the sampled list as is: ``T(i) = M_{m+1}(i)`` (the metric for a
    catalog of ``m + 1`` items).
``"rank"``
    Rank rescaling: the full rank estimated from the sampled rank by the method of
    moments, ``E[i - 1 | r] = m (r - 1) / (n - 1)`` so ``r_hat = 1 + (i - 1)(n - 1) / m``,
    then ``T(i) = M(r_hat)`` (``r_hat`` real-valued: ``[r_hat <= k]``,
    ``1 / log2(1 + r_hat)``, ``1 / r_hat``).
``"mb"``
    Minimal bias (the paper's least-squares correction): ``T`` minimises
    ``sum_r p(r) (E[T(i) | r] - M(r))^2``.
``"bv"``
    Bias-variance trade-off: ``T`` minimises
    ``sum_r p(r) [(E[T(i) | r] - M(r))^2 + gamma Var[T(i) | r]]``, whose solution is
    ``T = ((1 - gamma) A' P A + gamma diag(c))^-1 A' P M`` with ``A[r, i] = P(i | r)``,
    ``P = diag(p)`` and ``c = A' p``. ``gamma = 0`` is ``"mb"``; ``gamma = 1`` is the
    posterior mean ``E[M(r) | i]`` under the prior ``p``.

``p(r)`` is a prior over the full-catalog rank: uniform by default (no knowledge of the
model), or given. The least-squares problems are solved once per (metric, n, m,
gamma, sampling, prior) with numpy (``O(n m^2)``, in row blocks of ``A``: a QR of the
stacked rows, so no normal equations are formed) and cached; each user's value is a
lookup of its sampled rank, in Polars.

The same estimators are metric options of the grammar (``ndcg(estimator=bv)@10``,
``hit_rate(estimator=rank,...)@k``; see :mod:`polars_rankeval.metrics.sampled_estimators`), so
that :func:`polars_rankeval.evaluate`, ``compare``, bucketed execution and Spark
compute them per user with the same tables and lookup as :func:`evaluate_sampled`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, overload

import numpy as np
import polars as pl

from polars_rankeval._utils.constraints import (
    COLUMN,
    COLUMNS,
    FLAG,
    Constraint,
    Frame,
    Integer,
    ListOf,
    Number,
    Options,
    Spec,
    Text,
    validate_params,
)
from polars_rankeval._utils.ties import id_order
from polars_rankeval._utils.types import TIE_POLICIES, TiePolicy
from polars_rankeval.metrics.grammar import expand_metric
from polars_rankeval.metrics.params import Interval
from polars_rankeval.metrics.sampled_estimators import (
    ESTIMATORS,
    SAMPLED_DEFAULTS,
    SAMPLINGS,
    Estimator,
    Sampling,
    Target,
    _cached_solve,
    _check_sizes,
    _estimator_values,
    _solve,
    check_target,
    cumulative_table,
    lookup,
    rank_distribution,
)
from polars_rankeval.metrics.spec import Metric
from polars_rankeval.plan.validate import to_lazy

__all__ = [
    "ESTIMATORS",
    "SAMPLINGS",
    "Estimator",
    "Sampling",
    "Target",
    "_cached_solve",
    "_solve",
    "correction_table",
    "evaluate_sampled",
    "rank_distribution",
    "target",
]

SummaryForm = Literal["long", "wide"]

_ESTIMATOR: Constraint = Options.of(Estimator)
CORRECTION: dict[str, Spec] = {
    "n_items": Integer(Interval(2, None)),
    "estimators": [_ESTIMATOR, ListOf(_ESTIMATOR, what="a list of estimator names")],
    "gamma": Number(Interval(0, 1)),
    "sampling": Options.of(Sampling),
    "prior": [ListOf(what="a list of weights, one per full-catalog rank"), None],
}
"""The options :func:`correction_table` and :func:`evaluate_sampled` share."""


def target(metric: str | Metric) -> Target:
    """The one-positive form of a metric name; ``ValueError`` for unsupported ones."""
    bound = expand_metric(metric)
    if len(bound) != 1:
        msg = f"metric {metric!r} names several cutoffs; pass them one by one"
        raise ValueError(msg)
    m = bound[0]
    if m.aggregate != "mean":
        msg = (
            f"sampled-metric corrections estimate the mean over users; {m.name!r} sets "
            "aggregate=: request it without"
        )
        raise ValueError(msg)
    options = dict(m.options)
    if any(options.get(key, value) != value for key, value in SAMPLED_DEFAULTS.items()):
        msg = (
            f"metric {m.name!r}: evaluate_sampled and correction_table choose the "
            "estimators with estimators=, gamma= and sampling=; name the plain metric "
            "(or pass the metric with its estimator option to evaluate)"
        )
        raise ValueError(msg)
    return check_target(m.spec.name, m.k, options, m.name, skip=tuple(SAMPLED_DEFAULTS))


def _prior(prior: Any, n: int) -> np.ndarray | None:
    if prior is None:
        return None
    w = np.asarray(prior, dtype=np.float64)
    if w.shape != (n,):
        msg = (
            f"prior must have one weight per full-catalog rank 1..n_items ({n}), "
            f"got shape {w.shape}"
        )
        raise ValueError(msg)
    if not np.all(np.isfinite(w)) or np.any(w < 0) or w.sum() <= 0:
        msg = "prior must be finite, non-negative weights with a positive sum"
        raise ValueError(msg)
    return w / w.sum()


def _check_estimators(estimators: Any) -> tuple[str, ...]:
    if isinstance(estimators, str):
        estimators = (estimators,)
    out = tuple(estimators)
    if not out:
        msg = "estimators must name at least one estimator"
        raise ValueError(msg)
    if len(set(out)) != len(out):
        msg = f"estimators has duplicates: {list(out)!r}"
        raise ValueError(msg)
    return out


@validate_params(
    {"metric": Text("a metric name (str)"), "n_negatives": Integer(Interval(1, None)), **CORRECTION}
)
def correction_table(
    metric: str,
    *,
    n_items: int,
    n_negatives: int,
    estimators: Estimator | Sequence[Estimator] = ("sampled", "rank", "mb", "bv"),
    gamma: float = 0.01,
    sampling: Sampling = "without_replacement",
    prior: Sequence[float] | np.ndarray | None = None,
) -> pl.DataFrame:
    """The value each estimator gives a positive at each sampled rank.

    Parameters
    ----------
    metric
        A one-positive metric: ``hit_rate@k``, ``recall@k``, ``precision@k``,
        ``ndcg@k`` (or ``ndcg``), ``dcg@k``, ``mrr`` / ``mrr@k``, ``map@k`` (``ap``) or
        ``auc`` (names as in :func:`polars_rankeval.evaluate`).
    n_items
        Size ``n`` of the full catalog the metric targets (the positive and its
        ``n - 1`` negatives).
    n_negatives
        Sampled negatives ``m`` per positive (``1 <= m <= n - 1``).
    estimators
        Which of ``"sampled"``, ``"rank"``, ``"mb"``, ``"bv"`` (see the module
        documentation), in the order of the columns.
    gamma
        The variance weight of ``"bv"``, in [0, 1].
    sampling
        ``"without_replacement"`` (default; what :func:`sample_negatives` does: the
        hypergeometric rank distribution) or ``"with_replacement"`` (the paper's
        binomial model).
    prior
        Weights of the full-catalog ranks ``1..n`` for ``"mb"`` and ``"bv"``
        (default: uniform).

    Returns
    -------
    polars.DataFrame
        ``sampled_rank`` (1 to ``m + 1``) and one Float64 column per estimator.

    Examples
    --------
    A catalog of 4 items, 2 sampled negatives, hit_rate@1. The full rank r gives the
    sampled rank by the hypergeometric law (rows r = 1..4: (1, 0, 0), (1/3, 2/3, 0),
    (0, 2/3, 1/3), (0, 0, 1)); the least-squares correction solves 4 equations in 3
    unknowns: (0.95, -0.25, 0.05).

    >>> import polars_rankeval as prk
    >>> prk.correction_table("hit_rate@1", n_items=4, n_negatives=2, gamma=1.0)
    shape: (3, 5)
    ┌──────────────┬─────────┬──────┬───────┬──────┐
    │ sampled_rank ┆ sampled ┆ rank ┆ mb    ┆ bv   │
    │ ---          ┆ ---     ┆ ---  ┆ ---   ┆ ---  │
    │ i64          ┆ f64     ┆ f64  ┆ f64   ┆ f64  │
    ╞══════════════╪═════════╪══════╪═══════╪══════╡
    │ 1            ┆ 1.0     ┆ 1.0  ┆ 0.95  ┆ 0.75 │
    │ 2            ┆ 0.0     ┆ 0.0  ┆ -0.25 ┆ 0.0  │
    │ 3            ┆ 0.0     ┆ 0.0  ┆ 0.05  ┆ 0.0  │
    └──────────────┴─────────┴──────┴───────┴──────┘
    """
    tgt = target(metric)
    n, m = _check_sizes(n_items, n_negatives)  # n_negatives <= n_items - 1
    g = float(gamma)
    names = _check_estimators(estimators)
    weights = _prior(prior, n)
    columns: dict[str, Any] = {"sampled_rank": np.arange(1, m + 2, dtype=np.int64)}
    for e in names:
        columns[e] = np.round(_estimator_values(tgt, e, n, m, g, sampling, weights), 15)
    return pl.DataFrame(columns)


@overload
def evaluate_sampled(
    data: pl.LazyFrame,
    metrics: str | Sequence[str],
    *,
    n_items: int,
    estimators: Estimator | Sequence[Estimator] = ...,
    gamma: float = ...,
    sampling: Sampling = ...,
    prior: Sequence[float] | np.ndarray | None = ...,
    by: str | Sequence[str] | None = ...,
    per_user: bool = ...,
    summary: SummaryForm = ...,
    ties: TiePolicy = ...,
    user: str = ...,
    item: str = ...,
    score: str | None = ...,
    rank: str | None = ...,
    relevance: str = ...,
    validate: bool = ...,
) -> pl.LazyFrame: ...
@overload
def evaluate_sampled(
    data: pl.DataFrame | Any,
    metrics: str | Sequence[str],
    *,
    n_items: int,
    estimators: Estimator | Sequence[Estimator] = ...,
    gamma: float = ...,
    sampling: Sampling = ...,
    prior: Sequence[float] | np.ndarray | None = ...,
    by: str | Sequence[str] | None = ...,
    per_user: bool = ...,
    summary: SummaryForm = ...,
    ties: TiePolicy = ...,
    user: str = ...,
    item: str = ...,
    score: str | None = ...,
    rank: str | None = ...,
    relevance: str = ...,
    validate: bool = ...,
) -> pl.DataFrame: ...
@validate_params(
    {
        "data": Frame(),
        "metrics": [
            Text("a metric name (str)"),
            ListOf(Text("a metric name (str)"), what="a list of metric names"),
        ],
        **CORRECTION,
        "by": [*COLUMNS, None],
        "per_user": FLAG,
        "summary": Options.of(SummaryForm),
        "ties": Options(*TIE_POLICIES),
        "user": COLUMN,
        "item": COLUMN,
        "score": [COLUMN, None],
        "rank": [COLUMN, None],
        "relevance": COLUMN,
        "validate": FLAG,
    }
)
def evaluate_sampled(
    data: Any,
    metrics: str | Sequence[str],
    *,
    n_items: int,
    estimators: Estimator | Sequence[Estimator] = ("sampled", "rank", "bv"),
    gamma: float = 0.01,
    sampling: Sampling = "without_replacement",
    prior: Sequence[float] | np.ndarray | None = None,
    by: str | Sequence[str] | None = None,
    per_user: bool = False,
    summary: SummaryForm = "long",
    ties: TiePolicy = "expected",
    user: str = "user",
    item: str = "item",
    score: str | None = None,
    rank: str | None = None,
    relevance: str = "relevance",
    validate: bool = True,
) -> pl.DataFrame | pl.LazyFrame:
    """Sampled metrics beside their full-catalog estimates (Krichene & Rendle 2020).

    ``data`` is a scored candidate frame of a sampled evaluation (e.g. the output of
    :func:`polars_rankeval.sample_negatives` with the model's scores): per user, the
    positives (relevance >= 1, the metrics' default ``rel=1``) and ``m`` sampled
    negatives (relevance < 1 or null). Each positive's sampled rank among the user's
    negatives is read from the scores, and every estimator's value at that rank is
    looked up in its :func:`correction_table` for the catalog size ``n_items`` and
    the user's ``m``.

    **One positive per user** is the paper's setting: the ``"sampled"`` value then
    equals :func:`polars_rankeval.evaluate` on the same frame (same tie policy).
    **Several positives**: each positive is ranked among the user's negatives only
    (the other positives left out, as if each were its own query), and the user's
    value is the mean over its positives; the estimators then target the mean
    over positives of the one-positive full-catalog metric, not the multi-positive
    metric of the whole list, and the ``"sampled"`` value differs from ``evaluate``.
    Users may have different ``m`` (one table per distinct ``m``); every user needs
    at least one negative. The negatives are assumed drawn from ``n_items - 1``
    items for every user; a user whose pool was smaller (history excluded, several
    positives) differs by a relative ``O(pool difference / n_items)``.

    **Ties** between the positive and negatives follow ``ties=``: ``"expected"``
    (default) averages the estimator over the sampled ranks the tie spans (the exact
    expectation over the orderings of the tie), ``"optimistic"`` / ``"pessimistic"``
    put the positive first / last in its tie, ``"item_asc"`` / ``"item_desc"`` order
    the tie by item id.

    Parameters
    ----------
    data
        The scored candidates (DataFrame, LazyFrame, pyarrow or pandas).
    metrics
        Metric names (see :func:`correction_table`; lists of cutoffs such as
        ``ndcg@[5,10]`` expand).
    n_items
        The full catalog size the corrected estimators target.
    estimators, gamma, sampling, prior
        As for :func:`correction_table`.
    by
        Columns whose groups are evaluated separately (e.g. ``"system"``).
    per_user
        Return one row per (by, user) with a column ``"<metric>[<estimator>]"`` per
        pair and ``n_positives`` (wide; ready for :func:`polars_rankeval.compare_per_user`).
    summary
        The summary shape: ``"long"`` (default; one row per by group, metric and
        estimator: ``metric``, ``estimator``, ``value``, ``n_users``, ``n_skipped``)
        or ``"wide"`` (one row per by group, a column per (metric, estimator)).
    ties
        Tie policy (see above).
    user, item, score, rank, relevance
        Column names; ``rank`` (1 is best) replaces ``score``.
    validate
        Check that no (by, user, item) row is duplicated (one more pass over the
        data); nulls and NaN in the score are always errors.

    Returns
    -------
    polars.DataFrame or polars.LazyFrame
        The summary (means over the users with a positive; ``n_skipped`` counts users
        without one) or the per-user values; a LazyFrame for a LazyFrame input.

    Examples
    --------
    One user, one positive ranked 2nd among 1 + 4 sampled candidates, a catalog of
    1,000 items: the sampled hit_rate@1 is 0, the rank estimator's full rank is
    1 + 1 * 999 / 4 = 250.75.

    >>> import polars as pl
    >>> import polars_rankeval as prk
    >>> scored = pl.DataFrame({"user": [1] * 5, "item": [1, 2, 3, 4, 5],
    ...                        "score": [0.9, 0.8, 0.5, 0.3, 0.1],
    ...                        "relevance": [0, 1, 0, 0, 0]})
    >>> out = prk.evaluate_sampled(scored, ["mrr"], n_items=1000, estimators=["sampled", "rank"])
    >>> out.select("metric", "estimator", pl.col("value").round(6))
    shape: (2, 3)
    ┌────────┬───────────┬──────────┐
    │ metric ┆ estimator ┆ value    │
    │ ---    ┆ ---       ┆ ---      │
    │ str    ┆ str       ┆ f64      │
    ╞════════╪═══════════╪══════════╡
    │ mrr    ┆ sampled   ┆ 0.5      │
    │ mrr    ┆ rank      ┆ 0.003988 │
    └────────┴───────────┴──────────┘
    """
    targets = _targets(metrics)
    g = float(gamma)
    names = _check_estimators(estimators)
    n = int(n_items)
    weights = _prior(prior, n)
    lf, eager = to_lazy(data, "data")
    by_cols = [by] if isinstance(by, str) else list(by or [])
    if score is not None and rank is not None:
        msg = "give score or rank, not both"
        raise ValueError(msg)
    order_col = rank if rank is not None else (score or "score")
    schema = lf.collect_schema()
    for col in [*by_cols, user, item, order_col, relevance]:
        if col not in schema:
            msg = f"data has no column {col!r} (columns: {schema.names()})"
            raise ValueError(msg)
    if not schema[order_col].is_numeric():
        msg = f"column {order_col!r} must be numeric, got {schema[order_col]}"
        raise TypeError(msg)
    keys = [*by_cols, user]
    order = pl.col(order_col).cast(pl.Float64)
    base = lf.select(
        *keys,
        item,
        _o=-order if rank is not None else order,
        _pos=pl.col(relevance).cast(pl.Float64).fill_null(0.0) >= 1.0,
    )
    _check_order_values(base, order_col)
    if validate:
        dup = base.group_by(*keys, item).agg(pl.len()).filter(pl.col("len") > 1).collect()
        if dup.height:
            example = dup.row(0, named=True)
            msg = (
                f"data has {dup.height} duplicated ({', '.join([*keys, item])}) key(s), e.g. "
                f"user {example[user]!r}, item {example[item]!r} ({example['len']} rows)"
            )
            raise ValueError(msg)

    users = (
        base.group_by(keys)
        .agg(_has=pl.col("_pos").any(), _np=pl.col("_pos").sum(), _m=(~pl.col("_pos")).sum())
        .collect()
    )
    no_negative = users.filter(pl.col("_has") & (pl.col("_m") == 0))
    if no_negative.height:
        example = no_negative.row(0, named=True)
        msg = (
            f"{no_negative.height} user(s) with a positive have no negative candidate "
            f"(relevance < 1), e.g. {example[user]!r}; a sampled evaluation needs "
            "negatives (see sample_negatives)"
        )
        raise ValueError(msg)
    if _FAST_PATH and (users.get_column("_np").max() or 0) <= 1:  # type: ignore[operator]
        positives = _one_positive(base, keys, item, ties)
    else:
        positives = _each_positive(base, keys, item, ties)
    lo = pl.col("_above") + 1 + pl.col("_off")
    hi = pl.col("_above") + 1 + pl.col("_neg") if ties == "expected" else lo
    pos = positives.select(*keys, _lo=lo, _hi=hi, _m=pl.col("_m")).collect()
    most = int(pos.get_column("_m").max() or 0) if pos.height else 0  # type: ignore[arg-type]
    if most > n - 1:
        msg = f"a user has {most} negatives but n_items={n} allows at most {n - 1}"
        raise ValueError(msg)

    value_cols: list[str] = []
    labels: list[tuple[str, str]] = []
    for tgt in targets:
        for e in names:
            value_cols.append(f"{tgt.name}[{e}]")
            labels.append((tgt.name, e))
    columns = [(f"{tgt.name}[{e}]", tgt, e) for tgt in targets for e in names]
    ms = sorted(pos.get_column("_m").unique().to_list())
    table = cumulative_table(ms, columns, n, g, sampling, weights)
    per_positive = lookup(pos.lazy(), table.lazy(), keys, value_cols).collect()
    per_user_df = (
        per_positive.group_by(keys, maintain_order=True)
        .agg(*[pl.col(c).mean() for c in value_cols], n_positives=pl.len())
        .sort(keys)
    )
    if per_user:
        out = per_user_df
    else:
        skipped = users.filter(~pl.col("_has")).select(keys)
        out = _summary(per_user_df, skipped, by_cols, value_cols, labels, summary)
    return out if eager else out.lazy()


_FAST_PATH = True
"""Use :func:`_one_positive` when no user has several positives (the tests turn it off)."""


def _one_positive(base: pl.LazyFrame, keys: list[str], item: str, ties: str) -> pl.LazyFrame:
    """One positive per user: its tie counts from one join and one aggregation.

    No sort: ``_above`` negatives scored higher, ``_neg`` tied, ``_m`` in all, ``_off``
    tied negatives placed before it by the tie policy.
    """
    neg = ~pl.col("_pos")
    tied = neg & (pl.col("_o") == pl.col("_po"))
    if ties == "item_asc":
        off = (tied & (id_order(item) < id_order("_pitem"))).sum()
    elif ties == "item_desc":
        off = (tied & (id_order(item) > id_order("_pitem"))).sum()
    elif ties == "pessimistic":
        off = tied.sum()
    else:
        off = pl.lit(0, pl.UInt32)
    positive = base.filter("_pos").select(*keys, _po="_o", _pitem=item)
    return (
        base.join(positive, on=keys, how="inner")
        .group_by(keys)
        .agg(
            _above=(neg & (pl.col("_o") > pl.col("_po"))).sum(),
            _neg=tied.sum(),
            _m=neg.sum(),
            _off=off,
        )
        .with_columns(pl.col("_above", "_neg", "_m", "_off").cast(pl.Int64))
    )


def _each_positive(base: pl.LazyFrame, keys: list[str], item: str, ties: str) -> pl.LazyFrame:
    """Any number of positives, each ranked among the user's negatives only.

    Per (user, score) counts, ranked by a window over the user's distinct scores.
    """
    groups = (
        base.group_by(*keys, "_o")
        .agg(_neg=(~pl.col("_pos")).sum().cast(pl.Int64), _npos=pl.col("_pos").sum().cast(pl.Int64))
        .with_columns(
            _above=(pl.col("_neg").cum_sum() - pl.col("_neg")).over(
                keys, order_by="_o", descending=True
            ),
            _m=pl.col("_neg").sum().over(keys),
        )
    )
    if ties in ("item_asc", "item_desc"):
        offsets = _item_offsets(base, groups, keys, item, ties)
        return (
            base.filter("_pos")
            .join(groups, on=[*keys, "_o"])
            .join(offsets, on=[*keys, item], how="left")
            .with_columns(pl.col("_off").fill_null(0))  # no tied negative: nothing before
        )
    return (
        base.filter("_pos")
        .join(groups, on=[*keys, "_o"])
        .with_columns(
            _off=pl.lit(0, pl.Int64) if ties in ("optimistic", "expected") else pl.col("_neg")
        )
    )


def _targets(metrics: str | Sequence[str]) -> list[Target]:
    if isinstance(metrics, str):
        metrics = [metrics]
    out: list[Target] = []
    for name in metrics:
        out.extend(target(m) for m in expand_metric(name))
    if not out:
        msg = "metrics must name at least one metric"
        raise ValueError(msg)
    seen = [t.name for t in out]
    if len(set(seen)) != len(seen):
        msg = f"metrics has duplicates: {seen!r}"
        raise ValueError(msg)
    return out


def _check_order_values(base: pl.LazyFrame, column: str) -> None:
    counts = base.select(
        nulls=pl.col("_o").null_count(), nans=pl.col("_o").is_nan().sum()
    ).collect()
    nulls, nans = counts.row(0)
    if nulls or nans:
        msg = (
            f"column {column!r} has {nulls} null(s) and {nans} NaN(s); every candidate "
            "of a sampled evaluation must be scored"
        )
        raise ValueError(msg)


def _item_offsets(
    base: pl.LazyFrame, groups: pl.LazyFrame, keys: list[str], item: str, ties: str
) -> pl.LazyFrame:
    """Per positive in a tie with negatives: the tied negatives placed before it."""
    tied = groups.filter((pl.col("_npos") > 0) & (pl.col("_neg") > 0)).select(*keys, "_o", "_neg")
    neg = (~pl.col("_pos")).cast(pl.Int64)
    before_asc = (neg.cum_sum() - neg).over([*keys, "_o"], order_by=id_order(item))
    return (
        base.join(tied, on=[*keys, "_o"], how="inner")
        .with_columns(_asc=before_asc)
        .filter("_pos")
        .select(
            *keys,
            item,
            _off=pl.col("_asc") if ties == "item_asc" else pl.col("_neg") - pl.col("_asc"),
        )
    )


def _summary(
    per_user: pl.DataFrame,
    skipped: pl.DataFrame,
    by: list[str],
    value_cols: list[str],
    labels: list[tuple[str, str]],
    form: str,
) -> pl.DataFrame:
    means = [pl.col(c).mean() for c in value_cols]
    if by:
        wide = per_user.group_by(by, maintain_order=True).agg(*means, n_users=pl.len())
        n_skip = skipped.group_by(by).agg(n_skipped=pl.len())
        groups = pl.concat([per_user.select(by), skipped.select(by)]).unique(maintain_order=True)
        wide = (
            groups.join(wide, on=by, how="left")
            .join(n_skip, on=by, how="left")
            .with_columns(
                pl.col("n_users").fill_null(0).cast(pl.Int64),
                pl.col("n_skipped").fill_null(0).cast(pl.Int64),
            )
            .sort(by)
        )
    else:
        wide = per_user.select(*means, n_users=pl.len().cast(pl.Int64)).with_columns(
            n_skipped=pl.lit(skipped.height, pl.Int64)
        )
    if form == "wide":
        return wide
    order = {c: j for j, c in enumerate(value_cols)}
    label = dict(zip(value_cols, labels, strict=True))
    long = wide.unpivot(index=[*by, "n_users", "n_skipped"], on=value_cols, variable_name="_col")
    return (
        long.with_columns(
            metric=pl.col("_col").replace_strict({c: lab[0] for c, lab in label.items()}),
            estimator=pl.col("_col").replace_strict({c: lab[1] for c, lab in label.items()}),
            _ord=pl.col("_col").replace_strict(order, return_dtype=pl.Int64),
        )
        .sort([*by, "_ord"])
        .select(*by, "metric", "estimator", "value", "n_users", "n_skipped")
    )
