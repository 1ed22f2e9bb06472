"""``swap_rate``: how often two disjoint sets of users order a pair of systems oppositely.

Voorhees & Buckley (2002, "The effect of topic set size on retrieval experiment
error") and Sanderson & Zobel (2005): draw two disjoint sets of c users, compute every
system pair's mean difference on each; a *swap* is a pair the two sets order
oppositely. Binned by the size of the difference on the first set, the swap rate says
how large a difference on c users must be before the order it shows can be trusted
(the smallest difference whose swap rate is below 5%). Vectorised: per metric the
per-user values are a users x systems matrix, each trial's subsets are index arrays
and the subset means one gather and sum, drawn in blocks of trials so that memory stays
bounded.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np
import polars as pl

from polars_rankeval._utils.constraints import validate_params
from polars_rankeval._utils.stats import blocks
from polars_rankeval._utils.types import integer
from polars_rankeval.analysis._system_values import (
    FROM_DATA,
    FROM_PER_USER,
    SWAPS,
    all_pairs,
    evaluate_per_user,
    value_matrices,
)
from polars_rankeval.metrics.grammar import MetricsArg

__all__ = [
    "SWAP_BIN_COLUMNS",
    "SWAP_COLUMNS",
    "SwapRates",
    "swap_rate",
    "swap_rate_per_user",
    "swap_trials",
]

#: The columns of :attr:`SwapRates.summary`, in order.
SWAP_COLUMNS: tuple[str, ...] = (
    "metric",
    "subset_size",
    "n_trials",
    "n_pairs",
    "n_pair_trials",
    "n_swaps",
    "swap_rate",
    "min_difference",
    "max_swap_rate",
    "n_users",
    "seed",
)
#: The columns of :attr:`SwapRates.bins`, in order.
SWAP_BIN_COLUMNS: tuple[str, ...] = (
    "metric",
    "subset_size",
    "bin",
    "bin_low",
    "bin_high",
    "n_pair_trials",
    "n_swaps",
    "swap_rate",
)

#: The key of the subsets' draws (see :func:`polars_rankeval._utils.stats.blocks`): the
#: same for every metric, so metrics with the same paired users see the same subsets.
_DRAWS = "swap_rate"


class SwapRates(NamedTuple):
    """The result of :func:`swap_rate`: per (metric, subset size), and per bin."""

    #: One row per (metric, subset size): the overall swap rate and the smallest
    #: difference whose swap rate is below ``max_swap_rate``.
    summary: pl.DataFrame
    #: One row per (metric, subset size, bin of |difference| on the first subset).
    bins: pl.DataFrame


@validate_params({**FROM_DATA, **SWAPS})
def swap_rate(
    data: Any,
    metrics: MetricsArg,
    *,
    by: str = "system",
    systems: Sequence[Any] | None = None,
    subset_sizes: Sequence[int] | int | None = None,
    n_trials: int = 100,
    bins: int | Sequence[float] = 10,
    max_swap_rate: float = 0.05,
    tie_tolerance: float = 1e-9,
    seed: int = 0,
    **evaluate_options: Any,
) -> SwapRates:
    """Swap rates of system pairs between disjoint user subsets (Voorhees & Buckley 2002).

    The per-user values of every system come from one
    ``evaluate(data, metrics, by=by, per_user=True, **evaluate_options)`` plan (lazy for
    a LazyFrame); then :func:`swap_rate_per_user` draws the subsets.

    Parameters
    ----------
    data
        The long frame with a ``by`` column naming the system of each row (as for
        :func:`polars_rankeval.compare`).
    metrics
        Per-user metrics, e.g. ``["ndcg@10", "precision@5"]``.
    by
        The column that names the systems.
    systems, subset_sizes, n_trials, bins, max_swap_rate, tie_tolerance, seed
        As for :func:`swap_rate_per_user`.
    **evaluate_options
        Passed to :func:`polars_rankeval.evaluate` (``ties``, ``users``, ``empty``,
        ``user``, ``item``, ``score`` ...).

    Returns
    -------
    SwapRates
        ``(summary, bins)``: see :func:`swap_rate_per_user`.

    Examples
    --------
    >>> import polars_rankeval as prk
    >>> rates = prk.swap_rate(prk.load_systems(), ["ndcg@10"], subset_sizes=[10, 50])
    >>> rates.summary.select("subset_size", "n_pair_trials", "n_swaps", "swap_rate")
    shape: (2, 4)
    ┌─────────────┬───────────────┬─────────┬───────────┐
    │ subset_size ┆ n_pair_trials ┆ n_swaps ┆ swap_rate │
    │ ---         ┆ ---           ┆ ---     ┆ ---       │
    │ i64         ┆ i64           ┆ i64     ┆ f64       │
    ╞═════════════╪═══════════════╪═════════╪═══════════╡
    │ 10          ┆ 600           ┆ 59      ┆ 0.098333  │
    │ 50          ┆ 600           ┆ 25      ┆ 0.041667  │
    └─────────────┴───────────────┴─────────┴───────────┘
    """
    frame, names, order = evaluate_per_user(
        data, metrics, by=by, options=evaluate_options, caller="swap_rate"
    )
    return swap_rate_per_user(
        frame,
        names,
        by=by,
        user=evaluate_options.get("user", "user"),
        systems=order if systems is None else systems,
        subset_sizes=subset_sizes,
        n_trials=n_trials,
        bins=bins,
        max_swap_rate=max_swap_rate,
        tie_tolerance=tie_tolerance,
        seed=seed,
    )


@validate_params({**FROM_PER_USER, **SWAPS})
def swap_rate_per_user(
    per_user: Any,
    metrics: Sequence[str] | str | None = None,
    *,
    by: str = "system",
    user: str = "user",
    systems: Sequence[Any] | None = None,
    subset_sizes: Sequence[int] | int | None = None,
    n_trials: int = 100,
    bins: int | Sequence[float] = 10,
    max_swap_rate: float = 0.05,
    tie_tolerance: float = 1e-9,
    seed: int = 0,
) -> SwapRates:
    """Swap rates from a per-user frame the caller already has.

    For each subset size c and each of ``n_trials`` trials, two disjoint sets of c
    users are drawn at random from the paired users (those with a value for every
    compared system, compare's rule; so ``c <= n_users / 2``); for every pair of
    systems, its mean difference on each set, d1 and d2. The pair-trial is binned by
    ``|d1|``, and it is a *swap* when the two sets order the pair oppositely: ``d1 *
    d2 < 0`` once a difference within ``tie_tolerance`` of 0 is read as 0 (a tie on
    either set is no swap). Swap rate = swaps / pair-trials. Each trial draws one
    random order of the users, and every subset size c takes its first c and its
    next c users from it (each size's subsets are uniform; across sizes within a trial
    they are nested). The subsets depend only on the seed, the number of paired users
    and the trial, not on the metric: metrics with the same paired users are compared
    on the same subsets.

    ``min_difference`` is the smallest difference from which on the swap rate stays
    below ``max_swap_rate`` (5% by default, Voorhees & Buckley's threshold): the lower
    edge of the first bin such that it and every non-empty bin above it has a swap
    rate below ``max_swap_rate``; null when the last non-empty bin does not.

    Parameters
    ----------
    per_user
        One row per (system, user) with one numeric column per metric (a DataFrame or
        a LazyFrame: only the ``by``, ``user`` and metric columns are collected). A
        null is an undefined value; NaN and infinity are errors.
    metrics
        The metric columns (default: every numeric column except ``by`` and ``user``).
    by, user
        The columns naming the system and the user.
    systems
        The systems compared (at least 2; default: every value of ``by``, in order of
        appearance); every pair of them.
    subset_sizes
        The subset sizes c (ints >= 1, at most half the paired users of every metric);
        default: ``n/20, n/8, n/4, n/2`` (rounded down, at least 1, distinct) of the
        smallest number of paired users n over the metrics.
    n_trials
        Trials (pairs of disjoint subsets) per subset size, >= 1.
    bins
        The bins of ``|d1|``: an int b gives, per (metric, subset size), b bins of
        equal width over ``[0, D]``, D the largest ``|d1|`` drawn (the last bin
        closed); or the bins' lower edges, increasing, starting at 0 (the last bin
        open), the same for every subset size (Voorhees & Buckley used bins 0.01
        wide).
    max_swap_rate
        The swap rate ``min_difference`` is read at, in (0, 1).
    tie_tolerance
        A mean difference within this much of 0 is a tie (absolute, >= 0).
    seed
        Seed of the subsets' draws.

    Returns
    -------
    SwapRates
        ``summary``: one row per (metric, subset size): ``metric``, ``subset_size``,
        ``n_trials``, ``n_pairs``, ``n_pair_trials`` (= n_trials x n_pairs),
        ``n_swaps``, ``swap_rate``, ``min_difference``, ``max_swap_rate``, ``n_users``
        (paired users), ``seed``. ``bins``: one row per (metric, subset size, bin):
        ``bin`` (0-based), ``bin_low``, ``bin_high`` (null for the last bin of given
        edges, which is open), ``n_pair_trials``, ``n_swaps`` and ``swap_rate`` (null
        for an empty bin). Memory: the per-user matrix, one block of trials' subsets
        (bounded, see :func:`polars_rankeval._utils.stats.blocks`) and one value per
        pair-trial.

    Examples
    --------
    >>> import polars as pl
    >>> import polars_rankeval as prk
    >>> per_user = pl.DataFrame({
    ...     "system": ["a"] * 4 + ["b"] * 4,
    ...     "user": [1, 2, 3, 4] * 2,
    ...     "ndcg@10": [0.2, 0.4, 0.6, 0.8, 0.3, 0.5, 0.5, 0.6],
    ... })
    >>> rates = prk.swap_rate_per_user(per_user, subset_sizes=[1], n_trials=1000, bins=[0])
    >>> rates.summary.select("subset_size", "n_pair_trials", "swap_rate")
    shape: (1, 3)
    ┌─────────────┬───────────────┬───────────┐
    │ subset_size ┆ n_pair_trials ┆ swap_rate │
    │ ---         ┆ ---           ┆ ---       │
    │ i64         ┆ i64           ┆ f64       │
    ╞═════════════╪═══════════════╪═══════════╡
    │ 1           ┆ 1000          ┆ 0.651     │
    └─────────────┴───────────────┴───────────┘

    The differences b - a are +0.1, +0.1, -0.1 and -0.2: of the 12 ordered pairs of
    distinct users (the two one-user subsets of a trial), 8 have opposite signs, so
    the swap rate converges to 8 / 12 = 0.667.
    """
    chosen, canonical, prepared = value_matrices(
        per_user, metrics, by=by, user=user, systems=systems
    )
    pairs = all_pairs(chosen, canonical)
    sizes = _sizes(subset_sizes, prepared)
    summary: list[dict[str, Any]] = []
    binned: list[dict[str, Any]] = []
    for name, values, _ in prepared:
        n = values.shape[0]
        gaps = np.empty((len(sizes), n_trials, len(pairs)))
        swapped = np.empty((len(sizes), n_trials, len(pairs)), dtype=bool)
        width = values.shape[1] + 8  # the gather of a block is trials x c x systems
        for start, size, rng in blocks(seed, _DRAWS, "swap", n_trials, n, width=width):
            order = rng.permuted(np.tile(np.arange(n, dtype=np.intp), (size, 1)), axis=1)
            for s, c in enumerate(sizes):
                gap, swap = swap_trials(
                    values, pairs, order[:, :c], order[:, c : 2 * c], tie_tolerance
                )
                gaps[s, start : start + size] = gap
                swapped[s, start : start + size] = swap
        for s, c in enumerate(sizes):
            edges, top = _edges(bins, float(gaps[s].max()))
            where = np.searchsorted(edges, gaps[s].ravel(), side="right") - 1
            counts = np.bincount(where, minlength=len(edges))
            swaps = np.bincount(where, weights=swapped[s].ravel(), minlength=len(edges))
            rates = np.where(counts > 0, swaps / np.maximum(counts, 1), np.nan)
            total, n_swaps = int(counts.sum()), int(swaps.sum())
            summary.append(
                {
                    "metric": name,
                    "subset_size": c,
                    "n_trials": n_trials,
                    "n_pairs": len(pairs),
                    "n_pair_trials": total,
                    "n_swaps": n_swaps,
                    "swap_rate": n_swaps / total,
                    "min_difference": _min_difference(edges, counts, rates, max_swap_rate),
                    "max_swap_rate": float(max_swap_rate),
                    "n_users": n,
                    "seed": seed,
                }
            )
            highs = [*edges[1:], top]
            for i, low in enumerate(edges):
                binned.append(
                    {
                        "metric": name,
                        "subset_size": c,
                        "bin": i,
                        "bin_low": float(low),
                        "bin_high": None if highs[i] is None else float(highs[i]),
                        "n_pair_trials": int(counts[i]),
                        "n_swaps": int(swaps[i]),
                        "swap_rate": None if counts[i] == 0 else float(rates[i]),
                    }
                )
    summary_schema = {
        "metric": pl.String,
        "subset_size": pl.Int64,
        "n_trials": pl.Int64,
        "n_pairs": pl.Int64,
        "n_pair_trials": pl.Int64,
        "n_swaps": pl.Int64,
        "swap_rate": pl.Float64,
        "min_difference": pl.Float64,
        "max_swap_rate": pl.Float64,
        "n_users": pl.Int64,
        "seed": pl.Int64,
    }
    bin_schema = {
        "metric": pl.String,
        "subset_size": pl.Int64,
        "bin": pl.Int64,
        "bin_low": pl.Float64,
        "bin_high": pl.Float64,
        "n_pair_trials": pl.Int64,
        "n_swaps": pl.Int64,
        "swap_rate": pl.Float64,
    }
    return SwapRates(
        pl.DataFrame(summary, schema=summary_schema, orient="row"),
        pl.DataFrame(binned, schema=bin_schema, orient="row"),
    )


def swap_trials(
    values: np.ndarray,
    pairs: Sequence[tuple[int, int]],
    first: np.ndarray,
    second: np.ndarray,
    tie_tolerance: float = 1e-9,
) -> tuple[np.ndarray, np.ndarray]:
    """``(|d1|, swapped)`` of every pair-trial, for given subsets (:func:`swap_rate`'s kernel).

    ``values`` is users x systems; ``first`` and ``second`` are ``(trials, c)`` arrays
    of user rows (disjoint within a trial); ``pairs`` are ``(a, b)`` columns, the
    difference ``a - b``. Returns two ``(trials, pairs)`` arrays: the absolute mean
    difference on the first subset, and whether the two subsets order the pair
    oppositely (``d1 * d2 < 0``, a difference within ``tie_tolerance`` of 0 being 0).

    Examples
    --------
    Users 1, 2 against users 3, 4: b - a is +0.1 on the first (0.4 against 0.3) and
    -0.15 on the second (0.55 against 0.7): a swap.

    >>> import numpy as np
    >>> from polars_rankeval.analysis.swap_rate import swap_trials
    >>> values = np.array([[0.2, 0.3], [0.4, 0.5], [0.6, 0.5], [0.8, 0.6]])
    >>> gap, swapped = swap_trials(values, [(1, 0)], np.array([[0, 1]]), np.array([[2, 3]]))
    >>> gap.round(12).tolist(), swapped.tolist()
    ([[0.1]], [[True]])
    """
    a = np.array([p[0] for p in pairs], dtype=np.intp)
    b = np.array([p[1] for p in pairs], dtype=np.intp)
    c = first.shape[1]
    diffs = []
    for subset in (first, second):
        sums = values[subset].sum(axis=1)  # (trials, systems)
        diffs.append((sums[:, a] - sums[:, b]) / c)  # (trials, pairs)
    signs = [np.where(np.abs(d) <= tie_tolerance, 0.0, np.sign(d)) for d in diffs]
    return np.abs(diffs[0]), signs[0] * signs[1] < 0


def _sizes(
    subset_sizes: Sequence[int] | int | None, prepared: list[tuple[str, np.ndarray, int]]
) -> list[int]:
    """The subset sizes: given (checked against every metric's users) or the default."""
    fewest = min(values.shape[0] for _, values, _ in prepared)
    limit = fewest // 2
    if limit < 1:
        msg = (
            "swap_rate needs at least 2 paired users (two disjoint subsets of at least one "
            f"user each), got {fewest}"
        )
        raise ValueError(msg)
    if subset_sizes is None:
        return sorted({max(1, limit * 2 // d) for d in (20, 8, 4, 2)} - {0})
    given = [subset_sizes] if not isinstance(subset_sizes, Sequence) else list(subset_sizes)
    if not given:
        msg = "subset_sizes must name at least one size"
        raise ValueError(msg)
    sizes = []
    for value in given:
        size = integer("subset_sizes", value, what="a list of ints >= 1")
        if not 1 <= size <= limit:
            msg = (
                f"subset_sizes must be ints in [1, {limit}] (two disjoint subsets: at most "
                f"half of the {fewest} paired users of the metric with fewest), got {value!r}"
            )
            raise ValueError(msg)
        sizes.append(size)
    if len(set(sizes)) != len(sizes):
        msg = f"subset_sizes must be distinct, got {given!r}"
        raise ValueError(msg)
    return sorted(sizes)


def _edges(bins: int | Sequence[float], largest: float) -> tuple[np.ndarray, float | None]:
    """The bins' lower edges, and the upper edge of the last (``None``: open).

    An int b: b equal-width bins over ``[0, largest]`` (the last one closed); a
    sequence: the lower edges as given, the last bin open.
    """
    if isinstance(bins, bool):
        msg = f"bins must be an int >= 1 or a list of lower edges, got {bins!r}"
        raise TypeError(msg)
    if isinstance(bins, (int, np.integer)):
        if bins < 1:
            msg = f"bins must be an int >= 1 or a list of lower edges, got {bins!r}"
            raise ValueError(msg)
        if largest == 0:
            return np.zeros(1), 0.0
        edges = largest * np.arange(int(bins)) / int(bins)
        return edges, largest
    if isinstance(bins, str) or not isinstance(bins, Sequence):
        msg = f"bins must be an int >= 1 or a list of lower edges, got {bins!r}"
        raise TypeError(msg)
    edges = np.asarray([float(x) for x in bins], dtype=np.float64)
    if (
        edges.size == 0
        or edges[0] != 0
        or not np.all(np.isfinite(edges))
        or np.any(np.diff(edges) <= 0)
    ):
        msg = f"bins must be increasing finite lower edges starting at 0, got {list(bins)!r}"
        raise ValueError(msg)
    return edges, None


def _min_difference(
    edges: np.ndarray, counts: np.ndarray, rates: np.ndarray, threshold: float
) -> float | None:
    """The lower edge from which every non-empty bin's swap rate is below ``threshold``."""
    found = None
    for i in range(len(edges) - 1, -1, -1):
        if counts[i] == 0:
            continue
        if rates[i] >= threshold:
            break
        found = float(edges[i])
    return found
