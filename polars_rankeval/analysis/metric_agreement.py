"""``metric_agreement``: whether two metrics order the systems alike.

The system means of every metric come from one ``evaluate(by=...)`` plan (or from a
per-user frame, :func:`metric_agreement_per_user`); for every pair of metrics,
Kendall's tau-b and the AP correlation tau_ap (Yilmaz, Aslam & Robertson 2008, both
directions) between the two system orderings, with the kernels of
:func:`polars_rankeval.rank_correlation`. Each ordering is best system first by the
metric's own direction, so a lower-is-better metric (``fallout``, ``mae``) is read
reversed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import polars as pl

from polars_rankeval._utils.constraints import validate_params
from polars_rankeval.analysis._system_values import (
    DIRECTIONS,
    FROM_DATA,
    FROM_PER_USER,
    metric_columns,
)
from polars_rankeval.analysis.metric_direction import _directions
from polars_rankeval.analysis.paired_values import _local, choose_systems
from polars_rankeval.analysis.rank_similarity import _tau_ap, _tau_b
from polars_rankeval.metrics.grammar import MetricsArg, parse_metrics
from polars_rankeval.plan.validate import to_lazy

__all__ = ["AGREEMENT_COLUMNS", "metric_agreement", "metric_agreement_per_user"]

#: The columns of :func:`metric_agreement`, in order.
AGREEMENT_COLUMNS: tuple[str, ...] = (
    "metric_a",
    "metric_b",
    "n_systems",
    "n_discordant",
    "tau_b",
    "tau_ap_ref_a",
    "tau_ap_ref_b",
    "note",
)

_NOT_FORWARDED = ("per_user", "per_item", "by", "conventions")


@validate_params(FROM_DATA)
def metric_agreement(
    data: Any,
    metrics: MetricsArg,
    *,
    by: str = "system",
    systems: Sequence[Any] | None = None,
    **evaluate_options: Any,
) -> pl.DataFrame:
    """Kendall's tau and tau_ap between the system orderings of every pair of metrics.

    The system scores come from one ``evaluate(data, metrics, by=by,
    **evaluate_options)`` plan (lazy for a LazyFrame): the mean over each system's users
    (or the metric's own aggregate: a global metric such as ``coverage@10`` orders the
    systems too). See :func:`metric_agreement_per_user` for what is computed.

    Parameters
    ----------
    data
        The long frame with a ``by`` column naming the system of each row.
    metrics
        At least two metrics, e.g. ``["ndcg@10", "precision@5", "recall@20"]``.
    by
        The column that names the systems.
    systems
        The systems ordered (default: every one evaluated).
    **evaluate_options
        Passed to :func:`polars_rankeval.evaluate` (``ties``, ``users``, ``empty``,
        ``user``, ``item``, ``score`` ...).

    Returns
    -------
    polars.DataFrame
        See :func:`metric_agreement_per_user`.

    Examples
    --------
    The accuracy metrics order the bundled systems alike; catalog coverage does not.

    >>> import polars_rankeval as prk
    >>> out = prk.metric_agreement(prk.load_systems(), ["ndcg@10", "mrr@10", "coverage@10"])
    >>> out.select("metric_a", "metric_b", "tau_b", "tau_ap_ref_a", "tau_ap_ref_b")
    shape: (3, 5)
    ┌──────────┬─────────────┬──────────┬──────────────┬──────────────┐
    │ metric_a ┆ metric_b    ┆ tau_b    ┆ tau_ap_ref_a ┆ tau_ap_ref_b │
    │ ---      ┆ ---         ┆ ---      ┆ ---          ┆ ---          │
    │ str      ┆ str         ┆ f64      ┆ f64          ┆ f64          │
    ╞══════════╪═════════════╪══════════╪══════════════╪══════════════╡
    │ ndcg@10  ┆ mrr@10      ┆ 1.0      ┆ 1.0          ┆ 1.0          │
    │ ndcg@10  ┆ coverage@10 ┆ 0.333333 ┆ 0.444444     ┆ 0.555556     │
    │ mrr@10   ┆ coverage@10 ┆ 0.333333 ┆ 0.444444     ┆ 0.555556     │
    └──────────┴─────────────┴──────────┴──────────────┴──────────────┘
    """
    from polars_rankeval.api.evaluate import evaluate

    for name in _NOT_FORWARDED:
        if name in evaluate_options:
            msg = f"metric_agreement() does not take {name}=; it evaluates per {by!r}"
            raise TypeError(msg)
    if not isinstance(by, str):
        msg = f"by must be one column name (str), got {by!r}"
        raise TypeError(msg)
    source, _ = to_lazy(data)
    parsed = parse_metrics(metrics)
    names = [m.name for m in parsed]
    means = _local(evaluate(source, metrics, by=by, **evaluate_options))
    directions = {m.name: m.spec.higher_is_better for m in parsed}
    return _agreement(means, names, by, systems, directions)


@validate_params({**FROM_PER_USER, "higher_is_better": DIRECTIONS})
def metric_agreement_per_user(
    per_user: Any,
    metrics: Sequence[str] | str | None = None,
    *,
    by: str = "system",
    user: str = "user",
    systems: Sequence[Any] | None = None,
    higher_is_better: Mapping[str, bool | None] | None = None,
) -> pl.DataFrame:
    """Agreement of the metrics' system orderings, from a per-user frame.

    Each system's score for a metric is the mean of its non-null per-user values (the
    mean ``evaluate(by=...)`` reports, ``empty="skip"``), computed lazily. For every
    pair of metrics (a, b), in the order given, over the systems both score:

    * ``tau_b``: Kendall's tau-b between the two orderings, ties in either counted as
      :func:`scipy.stats.kendalltau` counts them (symmetric);
    * ``tau_ap_ref_a``: the AP correlation (Yilmaz, Aslam & Robertson 2008) of b's
      ordering against a's, a the reference: ``2 / (n - 1) * sum_{i=2}^n C(i) / (i - 1)
      - 1``, C(i) the systems above b's i-th system that a also ranks above it; a swap
      near the top of b's ordering costs more than one near the bottom;
      ``tau_ap_ref_b`` the same with b the reference. tau_ap is defined for orderings
      without ties: null (and ``note`` says why) when either metric ties two systems;
    * ``n_discordant``: the system pairs the two metrics order oppositely (a tie in
      either is not discordant).

    Orderings are best system first by each metric's direction: a metric whose
    ``higher_is_better`` is False is ordered by its negated values (a metric without a
    direction, e.g. a count, is read as higher first).

    Parameters
    ----------
    per_user
        One row per (system, user) with one numeric column per metric (a DataFrame or a
        LazyFrame), or already one row per system (the means are then the values).
    metrics
        At least two metric columns (default: every numeric column except ``by`` and
        ``user``).
    by, user
        The columns naming the system and the user (a frame of one row per system may
        have no user column).
    systems
        The systems ordered (default: every one, at least 2).
    higher_is_better
        The direction of metric columns (default: the metric a column is named after,
        :func:`~polars_rankeval.analysis.metric_direction.metric_direction`).

    Returns
    -------
    polars.DataFrame
        One row per pair of metrics: ``metric_a``, ``metric_b``, ``n_systems``,
        ``n_discordant``, ``tau_b``, ``tau_ap_ref_a``, ``tau_ap_ref_b``, ``note``.

    Examples
    --------
    Four systems; map swaps the top two of ndcg@10 and error (lower is better) orders
    them as ndcg@10 does.

    >>> import polars as pl
    >>> import polars_rankeval as prk
    >>> scores = pl.DataFrame({
    ...     "system": ["s1", "s2", "s3", "s4"],
    ...     "ndcg@10": [0.4, 0.3, 0.2, 0.1],
    ...     "map": [0.3, 0.4, 0.2, 0.1],
    ...     "error": [0.1, 0.2, 0.3, 0.4],
    ... })
    >>> prk.metric_agreement_per_user(scores, higher_is_better={"error": False}).drop("note")
    shape: (3, 7)
    ┌──────────┬──────────┬───────────┬──────────────┬──────────┬──────────────┬──────────────┐
    │ metric_a ┆ metric_b ┆ n_systems ┆ n_discordant ┆ tau_b    ┆ tau_ap_ref_a ┆ tau_ap_ref_b │
    │ ---      ┆ ---      ┆ ---       ┆ ---          ┆ ---      ┆ ---          ┆ ---          │
    │ str      ┆ str      ┆ i64       ┆ i64          ┆ f64      ┆ f64          ┆ f64          │
    ╞══════════╪══════════╪═══════════╪══════════════╪══════════╪══════════════╪══════════════╡
    │ ndcg@10  ┆ map      ┆ 4         ┆ 1            ┆ 0.666667 ┆ 0.333333     ┆ 0.333333     │
    │ ndcg@10  ┆ error    ┆ 4         ┆ 0            ┆ 1.0      ┆ 1.0          ┆ 1.0          │
    │ map      ┆ error    ┆ 4         ┆ 1            ┆ 0.666667 ┆ 0.333333     ┆ 0.333333     │
    └──────────┴──────────┴───────────┴──────────────┴──────────┴──────────────┴──────────────┘

    tau_b = (5 - 1) / 6; tau_ap: the swap is at the top, C(2) = 0, C(3) = 2, C(4) = 3:
    2 / 3 * (0 + 1 + 1) - 1 = 1/3.
    """
    lazy, _ = to_lazy(per_user, "per_user")
    has_user = user in lazy.collect_schema()
    lazy, names = metric_columns(per_user, metrics, by, user if has_user else None)
    means = (
        lazy.group_by(pl.col(by).cast(pl.String))
        .agg(pl.col(names).cast(pl.Float64).fill_nan(None).mean())
        .collect()
    )
    return _agreement(means, names, by, systems, _directions(names, higher_is_better))


def _agreement(
    means: pl.DataFrame,
    names: list[str],
    by: str,
    systems: Sequence[Any] | None,
    directions: Mapping[str, bool | None],
) -> pl.DataFrame:
    """The table of :func:`metric_agreement_per_user` from one row of scores per system."""
    if len(names) < 2:
        msg = f"metric agreement needs at least 2 metrics, got {len(names)}: {names!r}"
        raise ValueError(msg)
    means = means.with_columns(pl.col(by).cast(pl.String))
    available = sorted(means.get_column(by).drop_nulls().to_list())
    chosen = choose_systems(available, systems, by)
    means = means.filter(pl.col(by).is_in(chosen)).sort(by)
    scores = {
        name: means.get_column(name).cast(pl.Float64).to_numpy()
        * (-1.0 if directions.get(name) is False else 1.0)
        for name in names
    }
    rows = []
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            keep = ~(np.isnan(scores[a]) | np.isnan(scores[b]))
            x, y = scores[a][keep], scores[b][keep]
            n = int(keep.sum())
            upper = np.triu_indices(n, 1)
            dx = np.sign(x[:, None] - x[None, :])[upper]
            dy = np.sign(y[:, None] - y[None, :])[upper]
            note = None
            tau_ap: tuple[float | None, float | None] = (None, None)
            if n < 2:
                note = f"{n} system(s) scored by both metrics: no ordering to compare"
            elif len(np.unique(x)) < n or len(np.unique(y)) < n:
                tied = [m for m, v in ((a, x), (b, y)) if len(np.unique(v)) < n]
                note = f"tau_ap is defined without ties; {' and '.join(tied)} ties systems"
            else:
                tau_ap = (_tau_ap(x, y), _tau_ap(y, x))
            tau = _tau_b(x, y) if n >= 2 else float("nan")
            rows.append(
                {
                    "metric_a": a,
                    "metric_b": b,
                    "n_systems": n,
                    "n_discordant": int(np.sum(dx * dy < 0)),
                    "tau_b": None if np.isnan(tau) else tau,
                    "tau_ap_ref_a": tau_ap[0],
                    "tau_ap_ref_b": tau_ap[1],
                    "note": note
                    if note is not None or not np.isnan(tau)
                    else "tau_b is undefined: a metric gives every system the same score",
                }
            )
    schema = {
        "metric_a": pl.String,
        "metric_b": pl.String,
        "n_systems": pl.Int64,
        "n_discordant": pl.Int64,
        "tau_b": pl.Float64,
        "tau_ap_ref_a": pl.Float64,
        "tau_ap_ref_b": pl.Float64,
        "note": pl.String,
    }
    return pl.DataFrame(rows, schema=schema, orient="row")
