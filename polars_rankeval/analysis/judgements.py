"""``judgement_gaps``: what the unjudged items of a ranking hide.

A row with a null relevance is unjudged. ``evaluate`` reads it as not relevant, the
usual convention (trec_eval's default). With incomplete judgments that convention
penalises a system for retrieving what nobody judged; the *condensed list* (Sakai,
2007: "Alternatives to Bpref", SIGIR) removes the unjudged items from each ranking
before the metric is computed, so the items below them move up (trec_eval ``-J``). A
large gap between the two values says the metric depends on the judgements more than
on the system. Per system and metric: the share of unjudged items in the top k, both
values side by side, and the users where they differ most.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import polars as pl

from polars_rankeval._utils.constraints import COLUMN, Frame, Integer, validate_params
from polars_rankeval.analysis.compare_options import TIE_TOLERANCE
from polars_rankeval.metrics.grammar import METRICS, MetricsArg, parse_metrics
from polars_rankeval.metrics.params import Interval
from polars_rankeval.plan.validate import to_lazy

__all__ = ["GAP_COLUMNS", "USER_GAP_COLUMNS", "JudgementGaps", "judgement_gaps"]

#: The columns of :attr:`JudgementGaps.summary`, in order.
GAP_COLUMNS: tuple[str, ...] = (
    "metric",
    "system",
    "unjudged",
    "condensed",
    "as_nonrelevant",
    "difference",
    "n_users",
    "n_differ",
)
#: The columns of :attr:`JudgementGaps.users`, in order (``user`` is the user column).
USER_GAP_COLUMNS: tuple[str, ...] = (
    "metric",
    "system",
    "user",
    "unjudged",
    "condensed",
    "as_nonrelevant",
    "difference",
    "rank",
)

_NOT_FORWARDED = ("per_user", "per_item", "aggregate", "by", "conventions")


class JudgementGaps(NamedTuple):
    """The result of :func:`judgement_gaps`: ``summary, users = judgement_gaps(...)``."""

    summary: pl.DataFrame
    """One row per (metric, system): unjudged share, both values, their difference."""
    users: pl.DataFrame
    """Per (metric, system), the ``n`` users whose two values differ most."""


@validate_params(
    {
        "data": Frame("polars", "pyarrow", "pandas", "pyspark"),
        "metrics": METRICS,
        "by": COLUMN,
        "n": Integer(Interval(1, None)),
        "tie_tolerance": TIE_TOLERANCE,
    }
)
def judgement_gaps(
    data: Any,
    metrics: MetricsArg,
    *,
    by: str = "system",
    n: int = 10,
    tie_tolerance: float = 1e-9,
    **evaluate_options: Any,
) -> JudgementGaps:
    """Metrics with unjudged items removed (condensed lists) and as non-relevant.

    Two ``evaluate(..., by=by, per_user=True)`` plans over the same input: one as
    given (an unjudged row, null relevance, is not relevant) and one on the rows with
    a relevance only -- each user's ranking with its unjudged items removed, the
    items below moving up (Sakai's condensed list; trec_eval ``-J``,
    ``pytrec_eval``'s ``judged_docs_only_flag``). The first plan also computes each
    user's share of unjudged items in the metric's top k. The per-user values are
    joined by (system, user) and reduced in one lazy query: only they are held.

    Parameters
    ----------
    data
        The long frame with a ``by`` column naming the system of each row, a
        LazyFrame too (as for :func:`polars_rankeval.evaluate`).
    metrics
        Per-user metrics, e.g. ``["ndcg@10", "map@100"]``.
    by
        The column that names the systems.
    n
        Users listed per (metric, system) in ``users``, >= 1.
    tie_tolerance
        A user whose two values differ by at most this much is not a gap: counted
        out of ``n_differ`` and never listed.
    **evaluate_options
        Passed to both plans of :func:`polars_rankeval.evaluate` (``ties``,
        ``users``, ``empty``, ``user``, ``item``, ``score``, ``relevance`` ...).
        ``rank_positions="absolute"`` is refused: a condensed list renumbers its
        positions.

    Returns
    -------
    JudgementGaps
        ``summary``: one row per (metric, system), metrics in the given order, systems
        sorted: ``metric``; ``system`` (as text); ``unjudged``, the mean share of
        unjudged items among each user's top k recommendations (k of the metric, or
        every recommendation for a metric without one; over min(k, #recommended):
        ``unjudged(denominator=retrieved)@k``, 1 - ir_measures' ``Judged@k``);
        ``condensed`` and ``as_nonrelevant``, the metric's means; ``difference =
        condensed - as_nonrelevant``; ``n_users``, the users the three means are
        over (defined both ways); ``n_differ``, those whose two values differ by more
        than ``tie_tolerance``. ``users``: per (metric, system) the ``n`` users with
        the largest ``|difference|``, columns ``metric``, ``system``, the user column
        (its own name and type, to join on), ``unjudged`` (the user's share),
        ``condensed``, ``as_nonrelevant``, ``difference`` and ``rank`` (1 = largest,
        ties sharing the smallest rank; ties crossing the ``n``-th place keep the
        smallest user ids), sorted by metric, system, rank, user.

    Examples
    --------
    System ``s``, user 1 ranks A (relevant), U (unjudged), B (relevant): read as
    non-relevant, U costs B a place; condensed, B is second. Precision at 2:
    as non-relevant 1/2, condensed 2/2; one of the top 2 is unjudged.

    >>> import polars as pl
    >>> import polars_rankeval as prk
    >>> data = pl.DataFrame({"system": "s", "user": 1, "item": ["A", "U", "B"],
    ...                      "score": [3.0, 2.0, 1.0], "relevance": [1, None, 1]})
    >>> summary, users = prk.judgement_gaps(data, ["precision@2"])
    >>> summary.drop("metric")
    shape: (1, 7)
    ┌────────┬──────────┬───────────┬────────────────┬────────────┬─────────┬──────────┐
    │ system ┆ unjudged ┆ condensed ┆ as_nonrelevant ┆ difference ┆ n_users ┆ n_differ │
    │ ---    ┆ ---      ┆ ---       ┆ ---            ┆ ---        ┆ ---     ┆ ---      │
    │ str    ┆ f64      ┆ f64       ┆ f64            ┆ f64        ┆ u32     ┆ u32      │
    ╞════════╪══════════╪═══════════╪════════════════╪════════════╪═════════╪══════════╡
    │ s      ┆ 0.5      ┆ 1.0       ┆ 0.5            ┆ 0.5        ┆ 1       ┆ 1        │
    └────────┴──────────┴───────────┴────────────────┴────────────┴─────────┴──────────┘
    >>> users.select("user", "difference", "rank").rows()
    [(1, 0.5, 1)]
    """
    from polars_rankeval.api.evaluate import evaluate

    for name in _NOT_FORWARDED:
        if name in evaluate_options:
            msg = (
                f"judgement_gaps() does not take {name}=; it evaluates per user over "
                f"by={by!r} with the library's own metric names"
            )
            raise TypeError(msg)
    if evaluate_options.get("rank_positions", "relative") != "relative":
        msg = (
            "judgement_gaps() needs rank_positions='relative': a condensed list "
            f"renumbers its positions, got rank_positions={evaluate_options['rank_positions']!r}"
        )
        raise ValueError(msg)
    n = int(n)
    parsed = parse_metrics(metrics)
    names = [m.name for m in parsed]
    scoped = [m.name for m in parsed if m.spec.scope != "user"]
    if scoped:
        msg = (
            f"metric(s) {', '.join(scoped)} have no per-user value; judgement_gaps takes "
            "per-user metrics (see list_metrics())"
        )
        raise ValueError(msg)
    share = {
        m.name: parse_metrics(
            "unjudged(denominator=retrieved)" + (f"@{m.k}" if m.k is not None else "")
        )[0].name
        for m in parsed
    }
    shares = list(dict.fromkeys(share.values()))
    user = evaluate_options.get("user", "user")
    relevance = evaluate_options.get("relevance", "relevance")
    source, _ = to_lazy(data)
    if relevance not in source.collect_schema():
        msg = (
            f"relevance column {relevance!r} not found; available columns: "
            f"{', '.join(source.collect_schema().names())}"
        )
        raise ValueError(msg)
    full = _lazy(evaluate(source, [*names, *shares], by=by, per_user=True, **evaluate_options))
    condensed = _lazy(
        evaluate(
            source.filter(pl.col(relevance).is_not_null()),
            names,
            by=by,
            per_user=True,
            **evaluate_options,
        )
    )
    keys = [by, user]
    paired = full.select(
        pl.col(by).cast(pl.String),
        user,
        *(pl.col(m).alias(f"full:{m}") for m in names),
        *(pl.col(s).alias(f"share:{s}") for s in shares),
    ).join(
        condensed.select(
            pl.col(by).cast(pl.String), user, *(pl.col(m).alias(f"cond:{m}") for m in names)
        ),
        on=keys,
        how="left",
    )
    long = pl.concat(
        [
            paired.select(
                pl.lit(m).alias("metric"),
                pl.col(by).alias("system"),
                user,
                pl.col(f"share:{share[m]}").cast(pl.Float64).alias("unjudged"),
                pl.col(f"cond:{m}").cast(pl.Float64).alias("condensed"),
                pl.col(f"full:{m}").cast(pl.Float64).alias("as_nonrelevant"),
            )
            for m in names
        ]
    ).drop_nulls(["condensed", "as_nonrelevant"])
    long = long.with_columns(difference=pl.col("condensed") - pl.col("as_nonrelevant"))
    group = ["metric", "system"]
    differ = (pl.col("difference").abs() > tie_tolerance).sum().alias("n_differ")
    summary_plan = long.group_by(group).agg(
        pl.col("unjudged").mean(),
        pl.col("condensed").mean(),
        pl.col("as_nonrelevant").mean(),
        pl.col("difference").mean(),
        pl.len().alias("n_users"),
        differ,
    )
    users_plan = (
        long.filter(pl.col("difference").abs() > tie_tolerance)
        .with_columns(gap=pl.col("difference").abs())
        .with_columns(rank=pl.col("gap").rank("min", descending=True).over(group))
        .filter(pl.col("rank") <= n)
        .sort([*group, "gap", user], descending=[False, False, True, False])
        .group_by(group, maintain_order=True)
        .head(n)
    )
    summary, users = pl.collect_all([summary_plan, users_plan])
    position = pl.col("metric").replace_strict(names, list(range(len(names))))
    summary = summary.sort(position, "system").select(GAP_COLUMNS)
    users = users.sort(position, "system", "rank", user).select(
        "metric", "system", user, *USER_GAP_COLUMNS[3:]
    )
    return JudgementGaps(summary, users)


def _lazy(frame: Any) -> pl.LazyFrame:
    return frame if isinstance(frame, pl.LazyFrame) else frame.lazy()
