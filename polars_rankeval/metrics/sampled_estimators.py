"""Sampled-metric corrections as a metric option: the estimator tables and their plan.

The numeric core of :mod:`polars_rankeval.analysis.sampled_correction` (Krichene & Rendle, KDD
2020), kept in the bottom layer so that the metric kernels can use it: the one-positive
target of a metric (:class:`Target`), the law of the sampled rank given the full rank
(:func:`rank_distribution`), the ``mb`` / ``bv`` least-squares tables (:func:`_solve`,
cached) and the per-sampled-rank values of each estimator (:func:`_estimator_values`).

:func:`correctable` gives a metric kernel the options ``estimator=``, ``gamma=`` and
``sampling=`` (``ndcg(estimator=bv)@10`` in the grammar). With an estimator, the kernel
returns a :class:`~polars_rankeval.metrics.spec.FramePlan`: each relevant row (a positive)
gets its sampled rank among the user's non-relevant rows (its negatives) from the
shared features (first position of its tie group minus the relevant rows above, and
the tied negatives under ``ties="expected"``), the correction table of the distinct
negative counts ``m`` is built by one small :meth:`polars.LazyFrame.map_batches` on the
frame of distinct ``m`` (the numpy solve, cached) and joined on ``(m, sampled rank)``
(:func:`lookup`), and the user's value is the mean over its positives. It is one lazy
plan over whole users, so it runs in memory, bucket by bucket and on Spark alike.
"""

from __future__ import annotations

import functools
import inspect
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal

import numpy as np
import polars as pl

from polars_rankeval._utils.types import check_choice, integer
from polars_rankeval.metrics.features import Features
from polars_rankeval.metrics.grammar import bind
from polars_rankeval.metrics.params import Interval
from polars_rankeval.metrics.registry import get_spec, registered
from polars_rankeval.metrics.spec import FramePlan, Kernel, Sampled

Estimator = Literal["sampled", "rank", "mb", "bv"]
ESTIMATORS: tuple[str, ...] = ("sampled", "rank", "mb", "bv")
Sampling = Literal["without_replacement", "with_replacement"]
SAMPLINGS: tuple[str, ...] = ("without_replacement", "with_replacement")

_BLOCK = 4_000_000
"""Entries of ``A`` per block of rows in the least-squares solve."""


@dataclass(frozen=True)
class Target:
    """A metric of one positive as a function of its rank: kind, cutoff and name."""

    name: str
    kind: str
    k: int | None

    def values(self, rank: np.ndarray, n: int) -> np.ndarray:
        """The metric of one positive at (possibly real-valued) ``rank`` among ``n`` items."""
        r = np.asarray(rank, dtype=np.float64)
        inside = np.ones_like(r, dtype=bool) if self.k is None else r <= self.k
        if self.kind == "hit":
            out = inside.astype(np.float64)
        elif self.kind == "precision":
            out = inside / float(self.k or 1)
        elif self.kind in ("ndcg", "dcg"):
            out = np.where(inside, 1.0 / np.log2(1.0 + r), 0.0)
        elif self.kind == "rr":
            out = np.where(inside, 1.0 / r, 0.0)
        else:  # auc: the share of the n - 1 negatives ranked below the positive
            out = (n - r) / (n - 1) if n > 1 else np.ones_like(r)
        return np.asarray(out, dtype=np.float64)


def _check_sizes(n_items: Any, n_negatives: Any) -> tuple[int, int]:
    n = integer("n_items", n_items, what="an int")
    m = integer("n_negatives", n_negatives, what="an int")
    if n < 2:
        msg = f"n_items must be at least 2, got {n}"
        raise ValueError(msg)
    if not 1 <= m <= n - 1:
        msg = (
            f"n_negatives must be between 1 and n_items - 1 = {n - 1} (the negatives of "
            f"a catalog of n_items items with one positive), got {m}"
        )
        raise ValueError(msg)
    return n, m


def _check_gamma(gamma: Any) -> float:
    if isinstance(gamma, bool) or not isinstance(gamma, int | float | np.floating):
        msg = f"gamma must be a number, got {type(gamma).__name__}"
        raise TypeError(msg)
    if not 0.0 <= float(gamma) <= 1.0:
        msg = f"gamma must be in [0, 1], got {gamma!r}"
        raise ValueError(msg)
    return float(gamma)


def _log_comb_rows(a: np.ndarray, m: int) -> np.ndarray:
    """``log C(a, b)`` for each ``a`` (rows) and ``b = 0..m`` (columns); -inf if b > a.

    ``sum_{j<b} log(a - j) - log b!``: a short cumulative sum per row, exact to
    rounding for the large ``a`` of a catalog (no difference of huge log-factorials).
    """
    j = np.arange(m, dtype=np.float64)
    terms = a[:, None].astype(np.float64) - j[None, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        logs = np.where(terms > 0, np.log(np.maximum(terms, 1.0)), -np.inf)
    out = np.zeros((a.shape[0], m + 1))
    out[:, 1:] = np.cumsum(logs, axis=1)
    lfact = np.array([math.lgamma(b + 1.0) for b in range(m + 1)])
    return out - lfact[None, :]


def rank_distribution(
    ranks: np.ndarray, n_items: int, n_negatives: int, sampling: Sampling
) -> np.ndarray:
    """``P(sampled rank = i | full rank = r)``: rows ``ranks``, columns ``i = 1..m+1``.

    Without replacement, ``i - 1`` is hypergeometric: ``C(r-1, x) C(n-r, m-x) /
    C(n-1, m)``; with replacement, binomial ``Bin(m, (r-1)/(n-1))``.
    """
    n, m = n_items, n_negatives
    r = np.asarray(ranks, dtype=np.int64)
    x = np.arange(m + 1)
    if sampling == "with_replacement":
        p = (r - 1) / (n - 1)
        lc = np.array(
            [math.lgamma(m + 1.0) - math.lgamma(v + 1.0) - math.lgamma(m - v + 1.0) for v in x]
        )
        with np.errstate(divide="ignore", invalid="ignore"):
            lp = np.where(x[None, :] > 0, x[None, :] * np.log(p)[:, None], 0.0)
            lq = np.where(x[None, :] < m, (m - x)[None, :] * np.log1p(-p)[:, None], 0.0)
        return np.exp(lc[None, :] + lp + lq)
    above = _log_comb_rows(r - 1, m)  # log C(r-1, x)
    below = _log_comb_rows(n - r, m)[:, ::-1]  # log C(n-r, m-x)
    total = math.lgamma(n) - math.lgamma(m + 1.0) - math.lgamma(n - m)  # log C(n-1, m)
    return np.exp(above + below - total)


def _solve(
    tgt: Target, n: int, m: int, gamma: float, sampling: Sampling, weights: np.ndarray | None
) -> np.ndarray:
    """The ``bv`` values ``T(1..m+1)`` (``gamma = 0``: ``mb``)."""
    block = max(256, _BLOCK // (m + 2))
    p = m + 1
    numer = np.zeros(p)  # A' P M (gamma = 1) ...
    c = np.zeros(p)  # ... and A' p
    rfac = np.zeros((0, p + 1))
    for start in range(1, n + 1, block):
        ranks = np.arange(start, min(n, start + block - 1) + 1)
        a = rank_distribution(ranks, n, m, sampling)
        w = np.full(ranks.shape[0], 1.0 / n) if weights is None else weights[ranks - 1]
        full = tgt.values(ranks, n)
        c += w @ a
        if gamma == 1.0:
            numer += (w * full) @ a
            continue
        rows = np.empty((ranks.shape[0], p + 1))
        rows[:, :p] = np.sqrt(w * (1.0 - gamma))[:, None] * a
        rows[:, p] = np.sqrt(w / (1.0 - gamma)) * full
        rfac = np.asarray(np.linalg.qr(np.vstack([rfac, rows]), mode="r"))
    if gamma == 1.0:
        return np.divide(numer, c, out=np.zeros(p), where=c > 0)
    if gamma > 0.0:  # the variance term: rows sqrt(gamma c_i) e_i with target 0
        ridge = np.zeros((p, p + 1))
        ridge[:, :p] = np.diag(np.sqrt(gamma * c))
        rfac = np.asarray(np.linalg.qr(np.vstack([rfac, ridge]), mode="r"))
    rmat = rfac[:p, :p]
    rhs = rfac[:p, p]
    return np.linalg.lstsq(rmat, rhs, rcond=None)[0]


@functools.lru_cache(maxsize=64)
def _cached_solve(tgt: Target, n: int, m: int, gamma: float, sampling: Sampling) -> np.ndarray:
    out = _solve(tgt, n, m, gamma, sampling, None)
    out.setflags(write=False)
    return out


def _estimator_values(
    tgt: Target,
    estimator: str,
    n: int,
    m: int,
    gamma: float,
    sampling: Sampling,
    weights: np.ndarray | None,
) -> np.ndarray:
    i = np.arange(1, m + 2, dtype=np.float64)
    if estimator == "sampled":
        return tgt.values(i, m + 1)
    if estimator == "rank":
        return tgt.values(1.0 + (i - 1.0) * (n - 1) / m, n)
    g = 0.0 if estimator == "mb" else gamma
    if weights is None:
        return np.array(_cached_solve(tgt, n, m, g, sampling))
    return _solve(tgt, n, m, g, sampling, weights)


# ------------------------------------------------------------------ metric options
EstimatorOption = Annotated[
    Literal["sampled", "rank", "mb", "bv"] | None,
    "sampled evaluation (Krichene & Rendle 2020): none (the metric itself) or an "
    "estimate from each positive's rank among the user's negatives: sampled (the "
    "one-positive metric of the sampled list), rank, mb or bv (full-catalog estimates; "
    "need n_items=, the catalog size)",
]
GammaOption = Annotated[
    float, Interval(0, 1), "variance weight of estimator=bv (0 is mb, 1 the posterior mean)"
]
SamplingOption = Annotated[
    Literal["without_replacement", "with_replacement"],
    "how the negatives were drawn, for estimator=mb and bv (sample_negatives: "
    "without_replacement; the paper's binomial model: with_replacement)",
]
SAMPLED_DEFAULTS: dict[str, Any] = {
    "estimator": None,
    "gamma": 0.01,
    "sampling": "without_replacement",
}
"""The options :func:`correctable` adds, with their defaults (the plain metric)."""
NEEDS_CATALOG = ("rank", "mb", "bv")
"""The estimators that target the full catalog and so need ``n_items``."""


def check_target(
    name: str, k: int | None, options: dict[str, Any], label: str, *, skip: Sequence[str] = ()
) -> Target:
    """The one-positive form of metric ``name``; ``ValueError`` for unsupported ones.

    ``options`` are the bound options (every option of the metric); those in ``skip``
    are not checked. ``label`` names the metric in the messages.
    """
    spec = get_spec(name)
    declared = spec.sampled
    if declared is None:
        supported = sorted(n for n, s in registered().items() if s.sampled is not None)
        msg = f"sampled-metric corrections support {supported}, got {label!r}"
        raise ValueError(msg)
    neutral = declared.neutral
    for key, value in options.items():
        if key in skip:
            continue
        default = spec.params[key].default
        allowed = neutral.get(key, ()) if key in neutral else ()
        if value == default or (key in neutral and (allowed is None or value in allowed)):
            continue
        msg = (
            f"sampled-metric corrections need {name!r} with its default {key}={default!r} "
            f"(the one-positive value is not covered otherwise), got {label!r}"
        )
        raise ValueError(msg)
    if declared.cutoff == "required" and k is None:
        msg = f"sampled-metric corrections need {name} with a cutoff ({name}@k)"
        raise ValueError(msg)
    if declared.cutoff == "refused" and k is not None:
        msg = f"sampled-metric corrections support {name} over all candidates, not {label!r}"
        raise ValueError(msg)
    return Target(label, declared.kind, k)


def needs_catalog(options: dict[str, Any]) -> bool:
    """Whether bound ``options`` ask for an estimator that needs ``n_items``."""
    return options.get("estimator") in NEEDS_CATALOG


def cumulative_table(
    ms: Sequence[int],
    columns: Sequence[tuple[str, Target, str]],
    n: int,
    gamma: float,
    sampling: Sampling,
    weights: np.ndarray | None,
) -> pl.DataFrame:
    """Per negative count ``m``: ``_m``, ``_i`` (0..m+1) and each estimator's cumsum.

    ``columns`` are (output column, target, estimator); a column holds
    ``sum_{j <= i} T(j)`` (0 at ``i = 0``), so that the mean of ``T`` over the sampled
    ranks ``lo..hi`` of a tie is ``(C[hi] - C[lo - 1]) / (hi - lo + 1)``.
    """
    tables = []
    for m in ms:
        cols: dict[str, Any] = {"_m": np.full(m + 2, m, dtype=np.int64), "_i": np.arange(m + 2)}
        for name, tgt, e in columns:
            vals = _estimator_values(tgt, e, n, m, gamma, sampling, weights)
            cols[name] = np.concatenate([[0.0], np.cumsum(vals)])
        tables.append(pl.DataFrame(cols))
    if tables:
        return pl.concat(tables)
    names = [c[0] for c in columns]
    return pl.DataFrame(schema={"_m": pl.Int64, "_i": pl.Int64, **dict.fromkeys(names, pl.Float64)})


def lookup(
    positives: pl.LazyFrame, table: pl.LazyFrame, keys: list[str], value_cols: list[str]
) -> pl.LazyFrame:
    """Each positive's value: the mean of ``T`` over its sampled ranks ``_lo.._hi``.

    ``positives`` has ``keys``, ``_m``, ``_lo`` and ``_hi``; ``table`` is a
    :func:`cumulative_table`. Two joins on ``(m, rank)``; no loop.
    """
    low = table.select("_m", "_i", *[pl.col(c).alias(f"{c}#lo") for c in value_cols])
    joined = positives.join(
        table, left_on=["_m", "_hi"], right_on=["_m", "_i"], how="left", maintain_order="left"
    ).join(
        low,
        left_on=["_m", pl.col("_lo") - 1],
        right_on=["_m", "_i"],
        how="left",
        maintain_order="left",
    )
    width = (pl.col("_hi") - pl.col("_lo") + 1).cast(pl.Float64)
    return joined.select(
        *keys, *[((pl.col(c) - pl.col(f"{c}#lo")) / width).alias(c) for c in value_cols]
    )


def correctable(name: str, sampled: Sampled) -> Callable[[Kernel], Kernel]:
    """Give the kernel of metric ``name`` the options ``estimator``, ``gamma``, ``sampling``.

    ``sampled`` declares the metric's one-positive form (:class:`Sampled`), which
    ``register`` records in the metric's spec.

    With ``estimator=None`` (default, ``none`` in the grammar) the kernel runs as
    before; otherwise the metric is the sampled-evaluation estimate (see the module
    documentation). The options are left out of the metric's public ``pl.Expr``
    function (they need the whole plan) and of its curve kernel
    (``__prk_plan_options__``).
    """

    def decorate(kernel: Kernel) -> Kernel:
        sig = inspect.signature(kernel)
        extra = [
            inspect.Parameter(key, inspect.Parameter.KEYWORD_ONLY, default=value, annotation=ann)
            for (key, value), ann in zip(
                SAMPLED_DEFAULTS.items(),
                (EstimatorOption, GammaOption, SamplingOption),
                strict=True,
            )
        ]

        @functools.wraps(kernel)
        def wrapper(
            f: Features,
            k: int | None,
            *,
            estimator: str | None = None,
            gamma: float = 0.01,
            sampling: str = "without_replacement",
            **options: Any,
        ) -> Any:
            if estimator is None:
                _unused(name, k, options, gamma, sampling, estimator)
                return kernel(f, k, **options)
            return corrected_plan(f, name, k, options, estimator, gamma, sampling)

        wrapper.__signature__ = sig.replace(  # type: ignore[attr-defined]
            parameters=[*sig.parameters.values(), *extra]
        )
        wrapper.__annotations__ = {
            **kernel.__annotations__,
            "estimator": EstimatorOption,
            "gamma": GammaOption,
            "sampling": SamplingOption,
        }
        wrapper.__prk_plan_options__ = tuple(SAMPLED_DEFAULTS)  # type: ignore[attr-defined]
        wrapper.__prk_sampled__ = sampled  # type: ignore[attr-defined]
        return wrapper

    return decorate


def _unused(
    name: str,
    k: int | None,
    options: dict[str, Any],
    gamma: float,
    sampling: str,
    estimator: str | None,
) -> None:
    """Refuse ``gamma=`` / ``sampling=`` where the estimator does not read them."""
    for key, value, readers in (("gamma", gamma, ("bv",)), ("sampling", sampling, ("mb", "bv"))):
        if value != SAMPLED_DEFAULTS[key] and estimator not in readers:
            label = bind(name, k, estimator=estimator, **{key: value}, **options).name
            msg = (
                f"parameter {key!r} of metric {label!r} applies to "
                f"estimator={' or '.join(readers)} only, got estimator={estimator or 'none'}"
            )
            raise ValueError(msg)


def corrected_plan(
    f: Features,
    name: str,
    k: int | None,
    options: dict[str, Any],
    estimator: str,
    gamma: float,
    sampling: str,
) -> FramePlan:
    """The per-user sampled estimate of metric ``name``: a plan over the positives."""
    _unused(name, k, options, gamma, sampling, estimator)
    chosen = {"estimator": estimator, "gamma": gamma, "sampling": sampling}
    label = bind(name, k, **chosen, **options).name
    plain = bind(name, k, **options).name
    tgt = check_target(name, k, options, plain, skip=("rel",))
    check_choice("sampling", sampling, SAMPLINGS)
    if f.absolute:
        msg = (
            f"metric {label!r} ranks each positive among the user's negatives; it does not "
            "support rank_positions='absolute'"
        )
        raise ValueError(msg)
    if not f.window:
        msg = f"metric {label!r} is computed by a plan of its own; use polars_rankeval.evaluate"
        raise ValueError(msg)
    n = f.catalog_size
    if estimator in NEEDS_CATALOG and n is None:
        raise ValueError(missing_catalog(label))
    threshold = float(options.get("rel", 1.0))
    is_rel = f.is_rel(threshold)
    positive = is_rel > 0
    # Sampled rank span of a positive: its negatives strictly above, + 1, through the
    # negatives tied with it (expected ties; a single rank under a total order).
    lo = f.a - f.rel_above(threshold)
    tied_pos = f.gsum(is_rel, f"rel>={threshold}").cast(pl.Int64)
    hi = lo + f.n - tied_pos
    m = f.user_total(1.0 - is_rel, f"sampled_negatives:{threshold}").cast(pl.Int64)
    keys = f.keys
    user = keys[-1]
    user_label = f.label(user)
    size = 2 if n is None else n  # "sampled" does not read n
    shared = f.shared

    def make_table(counts: pl.DataFrame) -> pl.DataFrame:
        empty = counts.filter(pl.col("_m") == 0)
        if empty.height:
            msg = (
                f"metric {label!r}: {int(empty['_count'][0])} user(s) with a positive "
                f"(relevance >= {threshold:g}) have no negative candidate, e.g. "
                f"{user_label} {empty[user][0]!r}; a sampled evaluation needs negatives "
                "(see sample_negatives)"
            )
            raise ValueError(msg)
        most = counts.sort("_m", descending=True).row(0, named=True) if counts.height else None
        if most is not None and n is not None and most["_m"] > n - 1:
            msg = (
                f"metric {label!r}: {user_label} {most[user]!r} has {most['_m']} negatives "
                f"but n_items={n} allows at most n_items - 1 = {n - 1}"
            )
            raise ValueError(msg)
        ms = sorted(int(v) for v in counts["_m"].to_list())
        table = [("value", tgt, estimator)]
        return cumulative_table(ms, table, size, gamma, sampling, None)  # type: ignore[arg-type]

    def build(rows: pl.LazyFrame) -> pl.LazyFrame:
        # One frame of positives for every corrected metric of the build (same rows,
        # same threshold): the rows are filtered once, whatever the number of metrics.
        key = ("sampled_positives", threshold, id(rows))
        if key not in shared:
            frame = rows.filter(positive).select(*keys, _m=m, _lo=lo, _hi=hi).cache()
            shared[key] = (rows, frame)  # rows kept alive: its id stays its own
        positives = shared[key][1]
        counts = positives.group_by("_m").agg(
            pl.col(user).first(), _count=pl.struct(keys).n_unique()
        )
        schema = {"_m": pl.Int64, "_i": pl.Int64, "value": pl.Float64}
        table = counts.map_batches(make_table, schema=schema)
        per_positive = lookup(positives, table, keys, ["value"])
        return per_positive.group_by(keys).agg(pl.col("value").mean())

    return FramePlan(build)


def missing_catalog(label: str) -> str:
    """The error for an estimator of the full catalog without ``n_items``."""
    return (
        f"metric {label!r} estimates the full-catalog value and needs the catalog size: "
        "pass n_items= (--n-items on the command line: the number of items the negatives "
        "were drawn from, the positive included)"
    )
