"""Reproducibility and replicability (Breuer et al., SIGIR 2020), as repro_eval computes them.

An experiment is *reproduced* when it is run again on the same test collection (the
same topics and qrels) and *replicated* when it is run on another one. Breuer, Ferro,
Fuhr, Maistro, Sakai, Schaer and Soboroff ("How to Measure the Reproducibility of
System-oriented IR Experiments", SIGIR 2020) measure how close a reproduction comes at
three levels, and the ``repro_eval`` package implements them; the definitions here are
that package's (its ``RpdEvaluator`` and ``RplEvaluator``), checked against it to 1e-9:

* the order of the documents (reproducibility only): Kendall's tau Union (KTU) and
  rank-biased overlap (RBO) between the original and the reproduced ranking of each
  topic (:func:`reproducibility`);
* the effectiveness per topic: the root mean square error (RMSE) between the original
  and reproduced per-topic scores of a metric and its normalised form (nRMSE), and the
  paired t-test between them; for a replication (other topics) only the unpaired
  t-test (:func:`replicability`);
* the overall effect of an advanced run over a baseline: the effect ratio (ER, the
  reproduced mean improvement over the original one) and the delta relative
  improvement (DeltaRI, the original relative improvement minus the reproduced one).

Where repro_eval's code and its paper or docstrings part ways, the code is followed
(the numbers are compared with it); the guide page lists each place.
"""

from __future__ import annotations

import math
import os
import warnings
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np
import polars as pl

from polars_rankeval._utils.constraints import (
    COLUMN,
    Integer,
    Number,
    Spec,
    Unchecked,
    validate_params,
)
from polars_rankeval._utils.types import integer, type_label
from polars_rankeval.analysis.rank_similarity import _check, _ranked
from polars_rankeval.api.evaluate import METRICS
from polars_rankeval.metrics.defaults import REPRODUCIBILITY
from polars_rankeval.metrics.params import Interval
from polars_rankeval.plan.job import MetricsArg

__all__ = [
    "EFFECT_COLUMNS",
    "ORDERING_COLUMNS",
    "Replicability",
    "Reproducibility",
    "replicability",
    "reproducibility",
]

RunArg = pl.DataFrame | pl.LazyFrame
"""A run: a frame of (user, item, score) rows (``prk.trec.scan_run`` reads a TREC file)."""

#: The columns of :attr:`Reproducibility.ordering`, in order.
ORDERING_COLUMNS: tuple[str, ...] = (
    "run",
    "ktu",
    "rbo",
    "n_topics",
    "n_topics(ktu)",
    "n_topics_only_original",
    "n_topics_only_reproduced",
)
#: The columns of the ``effects`` frames, in order.
EFFECT_COLUMNS: tuple[str, ...] = (
    "metric",
    "improvement_original",
    "improvement_reproduced",
    "er",
    "ri_original",
    "ri_reproduced",
    "delta_ri",
    "n_topics_original",
    "n_topics_reproduced",
)
DEFAULT_METRICS: tuple[str, ...] = REPRODUCIBILITY
_RUNS = ("advanced", "baseline")
_NOT_FORWARDED = ("per_user", "per_item", "aggregate", "by", "score", "rank", "item", "user")
_CHUNK = 1 << 22  # padded positions per chunk of the KTU kernel


class Reproducibility(NamedTuple):
    """The frames of :func:`reproducibility`.

    Attributes
    ----------
    ordering
        One row per run pair (``run``: ``"advanced"``, then ``"baseline"`` when the
        baseline pair is given): the mean KTU and RBO over the topics both runs rank
        (``n_topics``; ``n_topics(ktu)`` of them with a defined KTU) and the topics
        found in one run only.
    ordering_per_topic
        One row per (run, topic) ranked by both runs: the list lengths compared
        (``n_original``, ``n_reproduced``, after ``depth``), ``ktu`` and ``rbo``.
    effectiveness
        One row per (run, metric): the means of the original and reproduced per-topic
        scores, ``rmse``, ``nrmse``, the paired t-test's ``p_value``, ``n_topics``
        (with a value for both runs) and of them those each run does not rank
        (``n_unranked_original``, ``n_unranked_reproduced``: scored as empty rankings).
    effects
        One row per metric: the mean improvements of the advanced run over the
        baseline, ``er``, the relative improvements and ``delta_ri``; ``None`` without
        the baseline pair.
    """

    ordering: pl.DataFrame
    ordering_per_topic: pl.DataFrame
    effectiveness: pl.DataFrame
    effects: pl.DataFrame | None


class Replicability(NamedTuple):
    """The frames of :func:`replicability`.

    Attributes
    ----------
    effectiveness
        One row per (run, metric): the mean scores over the original and the
        replicated topics, the unpaired t-test's ``p_value``, both topic counts and
        the topics each run does not rank (``n_unranked_*``).
    effects
        As :attr:`Reproducibility.effects` (``*_replicated`` for ``*_reproduced``);
        ``None`` without the baseline pair.
    """

    effectiveness: pl.DataFrame
    effects: pl.DataFrame | None



_RUN = Unchecked("a polars DataFrame or LazyFrame (a path gets a pointer to prk.trec)")
_RUN_OPTIONS: dict[str, Spec] = {
    "metrics": METRICS,
    "depth": [Integer(Interval(1, None)), None],
    "user": COLUMN,
    "item": COLUMN,
    "score": COLUMN,
    "relevance": COLUMN,
}

# --------------------------------------------------------------------------- inputs
def _frame(value: Any, name: str, columns: dict[str, str]) -> pl.LazyFrame:
    """The frame's ``columns`` (caller's name -> ours), lazily."""
    if isinstance(value, str | os.PathLike):
        reader = "scan_qrels" if "relevance" in columns.values() else "scan_run"
        msg = (
            f"{name} must be a polars DataFrame or LazyFrame, got a path ({str(value)!r}); "
            f"read a TREC file lazily with prk.trec.{reader}(path)"
        )
        raise TypeError(msg)
    if not isinstance(value, pl.DataFrame | pl.LazyFrame):
        msg = f"{name} must be a polars DataFrame or LazyFrame, got {type_label(value)}"
        raise TypeError(msg)
    lf = value.lazy()
    names = lf.collect_schema().names()
    for column in columns:
        if column not in names:
            msg = f"{name} has no column {column!r}; its columns: {', '.join(names)}"
            raise ValueError(msg)
    return lf.select(pl.col(theirs).alias(ours) for theirs, ours in columns.items())


def _pairs(
    pairs: Mapping[str, tuple[Any, Any]], names: Mapping[str, tuple[str, str]]
) -> dict[str, tuple[Any, Any]]:
    """The run pairs given: the advanced pair always, the baseline pair only whole."""
    out = {"advanced": pairs["advanced"]}
    first, second = pairs["baseline"]
    if (first is None) != (second is None):
        given, missing = names["baseline"] if second is None else names["baseline"][::-1]
        msg = f"{given} is given but {missing} is not; pass both (for ER and DeltaRI) or neither"
        raise ValueError(msg)
    if first is not None:
        out["baseline"] = pairs["baseline"]
    return out


def _name(run: str, side: str) -> str:
    """The argument that holds a run: ``original``, ``baseline_reproduced`` ..."""
    return side if run == "advanced" else f"baseline_{side}"


def _check_options(depth: int | None, rbo_p: float | None, rbo_depth: int | None) -> None:
    if depth is not None and integer("depth", depth) < 1:
        msg = f"depth must be an integer >= 1 or None, got {depth!r}"
        raise ValueError(msg)
    if rbo_depth is not None and integer("rbo_depth", rbo_depth) < 1:
        msg = f"rbo_depth must be an integer >= 1, got {rbo_depth!r}"
        raise ValueError(msg)
    if rbo_p is not None:
        if isinstance(rbo_p, bool) or not isinstance(rbo_p, int | float):
            msg = f"rbo_p must be a float in (0, 1), got {type(rbo_p).__name__} {rbo_p!r}"
            raise TypeError(msg)
        if not 0.0 < rbo_p < 1.0:
            msg = f"rbo_p must be in (0, 1), got {rbo_p!r}"
            raise ValueError(msg)


def _rank(
    runs: dict[tuple[str, str], pl.LazyFrame], depth: int | None
) -> tuple[dict[tuple[str, str], pl.LazyFrame], dict[tuple[str, str], pl.Series]]:
    """Each run's ranking ``__prk_user, item, pos`` (score desc, then item id desc), cut at depth.

    The positions are :func:`polars_rankeval.analysis.rank_similarity`'s (trec_eval's
    order); duplicated (topic, document) rows are an error. The inputs are read once:
    the rankings and the checks of all runs are collected together, and every measure
    reads the rankings (as large as the runs cut at ``depth``) from memory. Also
    returns the topics each run ranks.
    """
    ranked, checks, names = [], [], []
    for key, lf in runs.items():
        name = f"{key[1]} run ({key[0]})"
        out, check = _ranked(
            lf,
            name,
            user="user",
            item="item",
            score="score",
            rank=None,
            ties="item_desc",
            absolute=False,
        )
        if depth is not None:
            out = out.filter(pl.col("pos") <= depth)
        ranked.append(out.select("__prk_user", "item", pl.col("pos").cast(pl.Int32)))
        checks.append(check)
        names.append(name)
    frames = pl.collect_all([*checks, *ranked])
    for seen, name in zip(frames[: len(checks)], names, strict=True):
        _check(seen.row(0, named=True), name, "score")
    collected = dict(zip(runs, frames[len(checks) :], strict=True))
    topics = {key: frame.get_column("__prk_user").unique() for key, frame in collected.items()}
    return {key: frame.lazy() for key, frame in collected.items()}, topics


def _scores(
    groups: Sequence[Sequence[tuple[str, pl.LazyFrame, pl.LazyFrame]]],
    metrics: MetricsArg,
    evaluate_options: dict[str, Any],
) -> tuple[pl.DataFrame, list[str]]:
    """Per-topic scores of every run: ``__prk_run, user, <metric>...``.

    Each group, (label, ranking, qrels) per run, is one ``evaluate`` plan over the runs
    as ``by`` groups: its runs are scored on the same topics, the judged topics any of
    them ranks, a run without a ranking for one of them scoring it as an empty list
    (as ``compare`` pairs systems). The rankings are evaluated by their positions
    (``rank=``), the order the ordering measures read.
    """
    from polars_rankeval.api.evaluate import evaluate, join

    for name in _NOT_FORWARDED:
        if name in evaluate_options:
            msg = f"reproducibility() does not take {name}=; it evaluates each run per topic"
            raise TypeError(msg)
    options = dict(evaluate_options)
    if options.get("conventions") is None:
        options.pop("conventions", None)
        for key, value in (("ties", "item_desc"), ("users", "both"), ("empty", "zero")):
            options.setdefault(key, value)
    frames = []
    for group in groups:
        parts = []
        for label, ranking, qrels in group:
            recs = ranking.select(pl.col("__prk_user").alias("user"), "item", "pos")
            joined = join(recs, qrels, rank="pos", check_overlap=False)
            assert isinstance(joined, pl.LazyFrame)  # lazy in, lazy out
            parts.append(joined.with_columns(__prk_run=pl.lit(label)))
        data = pl.concat(parts, how="vertical_relaxed")
        out = evaluate(data, metrics, rank="pos", by="__prk_run", per_user=True, **options)
        frames.append(out.collect() if isinstance(out, pl.LazyFrame) else out)
    frame = pl.concat(frames, how="vertical_relaxed")
    names = [c for c in frame.columns if c not in ("__prk_run", "user")]
    return frame, names


# --------------------------------------------------------------------------- ordering
def _inversions(perm: np.ndarray) -> np.ndarray:
    """Inversions per row of ``perm`` (values distinct within a row), by merge sort.

    The width is a power of two. Each level merges sorted blocks of ``w`` pairwise: a
    stable sort of each pair of blocks, and each element of the right block passes the
    left-block elements that sort after it (the cross inversions).
    """
    rows, width = perm.shape
    out = np.zeros(rows, dtype=np.int64)
    if width < 2:
        return out
    # Level 1 directly: adjacent pairs.
    left, right = perm[:, 0::2], perm[:, 1::2]
    out += (left > right).sum(axis=1)
    a = np.empty_like(perm)
    a[:, 0::2], a[:, 1::2] = np.minimum(left, right), np.maximum(left, right)
    w = 2
    while w < width:
        blocks = a.reshape(rows, width // (2 * w), 2 * w)
        order = np.argsort(blocks, axis=-1, kind="stable")
        from_left = order < w
        left_before = np.cumsum(from_left, axis=-1)
        out += ((w - left_before) * ~from_left).sum(axis=(1, 2))
        a = np.take_along_axis(blocks, order, axis=-1).reshape(rows, width)
        w *= 2
    return out


def _ktu(lists: pl.DataFrame) -> np.ndarray:
    """KTU per row of ``lists`` (``n`` and the two lists' ``sa``, ``sb``), as repro_eval.

    repro_eval pairs the two lists position by position: the i-th document of the
    original and the i-th of the reproduced list, each replaced by its index in the
    sorted union of the two lists, and Kendall's tau of those two index sequences. An
    index in a sorted union orders documents by id, so that is Kendall's tau between the
    ids found at each rank. Both lists are cut to the shorter one (repro_eval needs
    equal lengths). The ids are distinct within a list (no ties): tau = 1 - 4 D /
    (n (n - 1)) with D the discordant pairs, the inversions of the reproduced ids'
    ranks read in the order of the original ids. ``sa`` and ``sb`` are each list's
    positions (0-based) in id order; NaN for n < 2.
    """
    n_of = lists["n"].to_numpy().astype(np.int64)
    topics = len(n_of)
    discordant = np.zeros(topics, dtype=np.int64)
    width = 1 << max(0, (int(n_of.max(initial=1)) - 1).bit_length())
    step = max(1, _CHUNK // width)
    ends = np.cumsum(n_of)
    sa_all = lists["sa"].explode().to_numpy().astype(np.int32)
    sb_all = lists["sb"].explode().to_numpy().astype(np.int32)
    for start in range(0, topics, step):
        stop = min(topics, start + step)
        n = n_of[start:stop]
        lo, hi = int(ends[start] - n_of[start]), int(ends[stop - 1])
        rows = np.repeat(np.arange(stop - start), n)
        cols = np.arange(hi - lo) - np.repeat(np.cumsum(n) - n, n)
        # rank_b[r, p]: the rank (0-based) of the reproduced id at position p
        rank_b = np.zeros((stop - start, width), dtype=np.int32)
        rank_b[rows, sb_all[lo:hi]] = cols
        # Read in the original ids' order; pads after, larger and increasing: no
        # inversion with them.
        seq = np.broadcast_to(width + np.arange(width, dtype=np.int32), rank_b.shape).copy()
        seq[rows, cols] = rank_b[rows, sa_all[lo:hi]]
        discordant[start:stop] = _inversions(seq)
    with np.errstate(divide="ignore", invalid="ignore"):
        tau = 1.0 - 4.0 * discordant / (n_of * (n_of - 1))
    return np.where(n_of >= 2, tau, np.nan)


def _rbo(
    a: pl.LazyFrame, b: pl.LazyFrame, both: pl.LazyFrame, p: float, depth: int
) -> pl.LazyFrame:
    """repro_eval's RBO per topic of ``both``: the agreements to ``depth``, weights normalised.

    ``sum_{d=1}^{D} p^(d-1) |A_:d ∩ B_:d| / d / sum_{d=1}^{D} p^(d-1)`` (Clarke et al.'s
    normalisation, the code repro_eval copies): no extrapolation past the lists, and a
    list shorter than D keeps its overlap while d grows. A common document first
    counted at depth m = max of its two ranks adds ``tail(m) = sum_{d=m}^{D}
    p^(d-1) / d``: one table lookup per common document.
    """
    d = np.arange(1, depth + 1, dtype=np.float64)
    weight = p ** (d - 1)
    tail = np.cumsum((weight / d)[::-1])[::-1]
    norm = float(weight.sum())
    table = pl.LazyFrame({"m": np.arange(1, depth + 1, dtype=np.int64), "tail": tail})
    sums = (
        a.join(b, on=["__prk_user", "item"], how="inner", nulls_equal=True)
        .select("__prk_user", m=pl.max_horizontal("pos", "pos_right").cast(pl.Int64))
        .filter(pl.col("m") <= depth)
        .join(table, on="m", how="inner")
        .group_by("__prk_user")
        .agg(s=pl.col("tail").sum())
    )
    return both.join(sums, on="__prk_user", how="left", nulls_equal=True).select(
        "__prk_user", rbo=pl.col("s").fill_null(0.0) / norm
    )


def _ordering(
    a: pl.LazyFrame, b: pl.LazyFrame, rbo_p: float, rbo_depth: int
) -> tuple[pl.DataFrame, dict[str, int]]:
    """Per-topic KTU and RBO of one pair, and the counts of topics in one run only.

    One aggregation per run gives each topic's list (by position), from which the
    lengths, the topics in one run only and KTU's id orders come.
    """

    def listed(lf: pl.LazyFrame, name: str) -> pl.LazyFrame:
        return lf.group_by("__prk_user").agg(pl.col("item").sort_by("pos").alias(name))

    la, lb = listed(a, "la"), listed(b, "lb")
    n = pl.min_horizontal("n_original", "n_reproduced")
    first_n = pl.element().arg_sort()
    both, counts = pl.collect_all(
        [
            la.join(lb, on="__prk_user", how="inner", nulls_equal=True)
            .sort("__prk_user")
            .with_columns(
                n_original=pl.col("la").list.len().cast(pl.Int64),
                n_reproduced=pl.col("lb").list.len().cast(pl.Int64),
            )
            .with_columns(n=n)
            .select(
                "__prk_user",
                "n_original",
                "n_reproduced",
                "n",
                sa=pl.col("la").list.head(pl.col("n")).list.eval(first_n),
                sb=pl.col("lb").list.head(pl.col("n")).list.eval(first_n),
            ),
            pl.concat(
                [
                    la.join(lb, on="__prk_user", how="anti", nulls_equal=True).select(
                        only_original=pl.len()
                    ),
                    lb.join(la, on="__prk_user", how="anti", nulls_equal=True).select(
                        only_reproduced=pl.len()
                    ),
                ],
                how="horizontal",
            ),
        ]
    )
    ktu = _ktu(both)
    topics = both.select("__prk_user", "n_original", "n_reproduced").with_columns(
        ktu=pl.Series(ktu).fill_nan(None)
    )
    rbo = _rbo(a, b, topics.lazy().select("__prk_user"), rbo_p, rbo_depth).collect()
    per = topics.join(rbo, on="__prk_user", how="left", nulls_equal=True, maintain_order="left")
    return per, counts.row(0, named=True)


# --------------------------------------------------------------------------- scores
def _pvalue(statistic_p: float, same: bool) -> float | None:
    """The p-value, 1.0 where the two samples are identical (scipy's 0 / 0), else null for NaN."""
    if same:
        return 1.0
    return None if math.isnan(statistic_p) else float(statistic_p)


def _paired(
    scores: pl.DataFrame, names: list[str], first: str, second: str
) -> dict[str, tuple[np.ndarray, np.ndarray, pl.Series]]:
    """Per metric, the two runs' scores on the topics both have a value for, and those topics."""
    x = scores.filter(pl.col("__prk_run") == first).drop("__prk_run")
    y = scores.filter(pl.col("__prk_run") == second).drop("__prk_run")
    # In topic order: repro_eval sums the topics sorted, and so does this (the same
    # rounding, which matters where an improvement is 0 up to it).
    joined = x.join(y, on="user", how="inner", suffix="__y", nulls_equal=True).sort("user")
    out = {}
    for name in names:
        pair = joined.select(
            "user", pl.col(name).cast(pl.Float64), pl.col(f"{name}__y").cast(pl.Float64)
        ).drop_nulls()
        out[name] = (pair[:, 1].to_numpy(), pair[:, 2].to_numpy(), pair["user"])
    return out


def _values(scores: pl.DataFrame, name: str, run: str) -> tuple[np.ndarray, pl.Series]:
    """One run's defined scores of a metric, in topic order, and their topics."""
    frame = (
        scores.filter(pl.col("__prk_run") == run)
        .select("user", pl.col(name).cast(pl.Float64))
        .drop_nulls()
        .sort("user")
    )
    return frame[name].to_numpy(), frame["user"]


def _unranked(topics: pl.Series, ranked: pl.Series) -> int:
    """How many of ``topics`` the run did not rank (scored as an empty list)."""
    return int((~topics.is_in(ranked.implode())).sum())


def _effectiveness_rpd(
    scores: pl.DataFrame,
    names: list[str],
    runs: Sequence[str],
    ranked: Mapping[tuple[str, str], pl.Series],
) -> pl.DataFrame:
    from polars_rankeval._utils.stats import scipy_stats

    stats = scipy_stats()
    rows = []
    for run in runs:
        paired = _paired(scores, names, f"{run}/original", f"{run}/reproduced")
        for name in names:
            o, r, topics = paired[name]
            n = len(o)
            row: dict[str, Any] = {"run": run, "metric": name, "n_topics": n}
            row["n_unranked_original"] = _unranked(topics, ranked[run, "original"])
            row["n_unranked_reproduced"] = _unranked(topics, ranked[run, "reproduced"])
            if n == 0:
                rows.append(row)
                continue
            diff = o - r
            rmse = math.sqrt(float(np.mean(diff * diff)))
            worst = np.maximum(o, 1.0 - o)
            max_rmse = math.sqrt(float(np.mean(worst * worst)))
            with np.errstate(all="ignore"), warnings.catch_warnings():
                # scipy warns of identical or constant data; that case is handled here
                warnings.simplefilter("ignore", RuntimeWarning)
                p = float(stats.ttest_rel(o, r).pvalue) if n >= 2 else math.nan
            row |= {
                "mean_original": float(o.mean()),
                "mean_reproduced": float(r.mean()),
                "rmse": rmse,
                "nrmse": rmse / max_rmse if max_rmse > 0 else None,
                "p_value": _pvalue(p, bool(np.array_equal(o, r))),
            }
            rows.append(row)
    schema = {
        "run": pl.String, "metric": pl.String, "mean_original": pl.Float64,
        "mean_reproduced": pl.Float64, "rmse": pl.Float64, "nrmse": pl.Float64,
        "p_value": pl.Float64, "n_topics": pl.Int64, "n_unranked_original": pl.Int64,
        "n_unranked_reproduced": pl.Int64,
    }  # fmt: skip
    return pl.DataFrame(rows, schema=schema)


def _effectiveness_rpl(
    scores: pl.DataFrame,
    names: list[str],
    runs: Sequence[str],
    ranked: Mapping[tuple[str, str], pl.Series],
) -> pl.DataFrame:
    from polars_rankeval._utils.stats import scipy_stats

    stats = scipy_stats()
    rows = []
    for run in runs:
        for name in names:
            o, topics_o = _values(scores, name, f"{run}/original")
            r, topics_r = _values(scores, name, f"{run}/replicated")
            row: dict[str, Any] = {"run": run, "metric": name}
            row["n_topics_original"], row["n_topics_replicated"] = len(o), len(r)
            row["n_unranked_original"] = _unranked(topics_o, ranked[run, "original"])
            row["n_unranked_replicated"] = _unranked(topics_r, ranked[run, "replicated"])
            if len(o) and len(r):
                with np.errstate(all="ignore"), warnings.catch_warnings():
                    warnings.simplefilter("ignore", RuntimeWarning)
                    p = float(stats.ttest_ind(o, r).pvalue) if len(o) + len(r) > 2 else math.nan
                same = bool(np.ptp(o) == 0 and np.ptp(r) == 0 and o[0] == r[0])
                row |= {
                    "mean_original": float(o.mean()),
                    "mean_replicated": float(r.mean()),
                    "p_value": _pvalue(p, same),
                }
            rows.append(row)
    schema = {
        "run": pl.String, "metric": pl.String, "mean_original": pl.Float64,
        "mean_replicated": pl.Float64, "p_value": pl.Float64,
        "n_topics_original": pl.Int64, "n_topics_replicated": pl.Int64,
        "n_unranked_original": pl.Int64, "n_unranked_replicated": pl.Int64,
    }  # fmt: skip
    return pl.DataFrame(rows, schema=schema)


ZERO = 1e-12
"""An improvement or mean within this of 0 is 0 up to rounding: a ratio over it is null."""


def _ratio(num: float, den: float) -> float | None:
    return num / den if abs(den) > ZERO else None


def _effects(scores: pl.DataFrame, names: list[str], second: str) -> pl.DataFrame:
    """ER and DeltaRI per metric; ``second`` is ``"reproduced"`` or ``"replicated"``.

    Per side, the advanced and baseline scores are paired by topic: the mean
    improvement is the mean of the per-topic differences and the relative improvement
    ``(mean_a - mean_b) / mean_b`` over those topics. ER = reproduced improvement /
    original improvement, DeltaRI = original RI - reproduced RI; null where the
    denominator is 0 (within :data:`ZERO`: an improvement summed from differences
    that cancel is 0 up to rounding, and a ratio over that rounding is noise).
    """
    rows = []
    sides = {}
    for side in ("original", second):
        sides[side] = _paired(scores, names, f"advanced/{side}", f"baseline/{side}")
    for name in names:
        row: dict[str, Any] = {"metric": name}
        stats = {}
        for side in ("original", second):
            adv, base, _ = sides[side][name]
            row[f"n_topics_{side}"] = len(adv)
            if len(adv):
                stats[side] = (float(np.mean(adv - base)), float(adv.mean()), float(base.mean()))
        if len(stats) == 2:
            mi_o, a_o, b_o = stats["original"]
            mi_r, a_r, b_r = stats[second]
            ri_o, ri_r = _ratio(a_o - b_o, b_o), _ratio(a_r - b_r, b_r)
            row |= {
                "improvement_original": mi_o,
                f"improvement_{second}": mi_r,
                "er": _ratio(mi_r, mi_o),
                "ri_original": ri_o,
                f"ri_{second}": ri_r,
                "delta_ri": None if ri_o is None or ri_r is None else ri_o - ri_r,
            }
        rows.append(row)
    columns = [c.replace("reproduced", second) for c in EFFECT_COLUMNS]
    schema = {
        c: (pl.String if c == "metric" else pl.Int64 if c.startswith("n_") else pl.Float64)
        for c in columns
    }
    return pl.DataFrame(rows, schema=schema)


# --------------------------------------------------------------------------- public
@validate_params(
    {
        "original": _RUN,
        "reproduced": _RUN,
        "qrels": _RUN,
        "baseline_original": _RUN,
        "baseline_reproduced": _RUN,
        "rbo_p": Number(Interval(0, 1, closed="neither")),
        "rbo_depth": Integer(Interval(1, None)),
        **_RUN_OPTIONS,
    }
)
def reproducibility(
    original: RunArg,
    reproduced: RunArg,
    *,
    qrels: Any,
    baseline_original: RunArg | None = None,
    baseline_reproduced: RunArg | None = None,
    metrics: MetricsArg = DEFAULT_METRICS,
    depth: int | None = 1000,
    rbo_p: float = 0.95,
    rbo_depth: int = 1000,
    user: str = "user",
    item: str = "item",
    score: str = "score",
    relevance: str = "relevance",
    **evaluate_options: Any,
) -> Reproducibility:
    """How closely a reproduction (same topics, same qrels) matches the original runs.

    The measures of Breuer et al. (SIGIR 2020) as the ``repro_eval`` package computes
    them (its ``RpdEvaluator`` after ``trim()`` and ``evaluate()``):

    * ordering of the documents, per topic ranked by both runs: Kendall's tau Union
      (``ktu``: repro_eval's position-wise Kendall's tau, see below) and rank-biased
      overlap (``rbo``, to ``rbo_depth`` with persistence ``rbo_p``, normalised by the
      weights to that depth: no extrapolation), and their means over the topics;
    * effectiveness, per metric over the topics (below): the RMSE of the per-topic
      scores, the nRMSE (the RMSE over its largest value given the
      original scores, ``sqrt(mean(max(x, 1 - x)^2))``: scores in [0, 1]) and the
      two-sided paired t-test (:func:`scipy.stats.ttest_rel`);
    * with the baseline pair, the effect of the advanced run (``original``) over the
      baseline: ER (reproduced mean improvement / original mean improvement) and
      DeltaRI (original relative improvement - reproduced one).

    Each run is ranked by score descending, then document id descending (trec_eval's
    order, and repro_eval's for a run file listed by descending score), and cut to its
    top ``depth`` (repro_eval's ``trim``) before anything is measured. The metrics are
    :func:`polars_rankeval.evaluate`'s per topic, with trec_eval's rules by default
    (``ties="item_desc"``, ``users="both"``, ``empty="zero"``): ``map``, ``ndcg@10``,
    ``precision@10`` ... give trec_eval's ``map``, ``ndcg_cut_10``, ``P_10``;
    ``conventions="trec_eval"`` takes trec_eval's names (``P_10``) instead. All runs
    are scored on the same topics, as ``compare`` scores systems: the judged topics
    that any of the runs ranks; a run that does not rank one of them scores it as an
    empty ranking (0 for trec_eval's measures, as ``trec_eval -c``; repro_eval fails
    there), counted in ``n_unranked_*``. The document ordering compares the topics
    both runs of a pair rank.

    KTU: repro_eval pairs the lists by position and replaces each document by its
    index in the sorted union of the two lists; Kendall's tau of the two index
    sequences is then Kendall's tau between the document ids found at each rank, so it
    changes when documents are renamed. Lists of different lengths are compared over
    the shorter length (repro_eval raises there); a topic with fewer than 2 documents
    has no KTU (null, left out of the mean).

    Parameters
    ----------
    original, reproduced
        The original and the reproduced (advanced) run: frames of ``user, item,
        score`` (DataFrame or LazyFrame; ``prk.trec.scan_run(path)`` reads a TREC
        run lazily).
    qrels
        The relevance judgments: a frame of ``user, item, relevance``
        (``prk.trec.scan_qrels(path)``).
    baseline_original, baseline_reproduced
        The baseline pair, both or neither: adds its ordering and effectiveness rows
        (``run="baseline"``) and the ``effects`` frame.
    metrics
        Per-topic metrics (``evaluate``'s names).
    depth
        The top documents kept of each run per topic (``None``: all).
    rbo_p, rbo_depth
        RBO's persistence and the depth it sums to.
    user, item, score, relevance
        Column names of the frames (``prk.trec``'s readers give these).
    **evaluate_options
        Passed to :func:`polars_rankeval.evaluate` (``ties``, ``users``, ``empty``,
        ``conventions`` ...).

    Returns
    -------
    Reproducibility
        ``ordering``, ``ordering_per_topic``, ``effectiveness`` and ``effects`` (see
        :class:`Reproducibility`); the topic column is named ``user``.

    Examples
    --------
    >>> import polars as pl
    >>> import polars_rankeval as prk
    >>> qrels = pl.DataFrame({"user": ["q1"] * 3, "item": ["a", "b", "c"], "relevance": [1, 0, 1]})
    >>> orig = pl.DataFrame({"user": ["q1"] * 4, "item": list("abcd"), "score": [4.0, 3, 2, 1]})
    >>> rep = pl.DataFrame({"user": ["q1"] * 4, "item": list("bacd"), "score": [4.0, 3, 2, 1]})
    >>> out = prk.reproducibility(orig, rep, qrels=qrels, metrics=["precision@2"])
    >>> out.ordering_per_topic["ktu"].item()  # one discordant pair of six: 1 - 4 * 1 / 12
    0.6666666666666667
    """
    _check_options(depth, rbo_p, rbo_depth)
    pairs = _pairs(
        {"advanced": (original, reproduced), "baseline": (baseline_original, baseline_reproduced)},
        {"baseline": ("baseline_original", "baseline_reproduced")},
    )
    run_columns = {user: "user", item: "item", score: "score"}
    runs = {
        (run, side): _frame(value, _name(run, side), run_columns)
        for run, pair in pairs.items()
        for side, value in zip(("original", "reproduced"), pair, strict=True)
    }
    judged = _frame(qrels, "qrels", {user: "user", item: "item", relevance: "relevance"})
    ranked, topics = _rank(runs, depth)
    scores, names = _scores(
        [[(f"{run}/{side}", lf, judged) for (run, side), lf in ranked.items()]],
        metrics,
        evaluate_options,
    )
    ordering_rows, per_topic = [], []
    for run in pairs:
        per, counts = _ordering(
            ranked[(run, "original")], ranked[(run, "reproduced")], rbo_p, rbo_depth
        )
        per_topic.append(per.select(pl.lit(run).alias("run"), pl.all()))
        ordering_rows.append(
            {
                "run": run,
                "ktu": per["ktu"].mean(),
                "rbo": per["rbo"].mean(),
                "n_topics": per.height,
                "n_topics(ktu)": per["ktu"].count(),
                "n_topics_only_original": counts["only_original"],
                "n_topics_only_reproduced": counts["only_reproduced"],
            }
        )
    schema = dict.fromkeys(ORDERING_COLUMNS, pl.Int64) | {
        "run": pl.String,
        "ktu": pl.Float64,
        "rbo": pl.Float64,
    }
    ordering = pl.DataFrame(ordering_rows, schema=schema)
    ordering_per_topic = pl.concat(per_topic).rename({"__prk_user": user})
    effectiveness = _effectiveness_rpd(scores, names, list(pairs), topics)
    effects = _effects(scores, names, "reproduced") if "baseline" in pairs else None
    return Reproducibility(ordering, ordering_per_topic, effectiveness, effects)


@validate_params(
    {
        "original": _RUN,
        "replicated": _RUN,
        "qrels_original": _RUN,
        "qrels_replicated": _RUN,
        "baseline_original": _RUN,
        "baseline_replicated": _RUN,
        **_RUN_OPTIONS,
    }
)
def replicability(
    original: RunArg,
    replicated: RunArg,
    *,
    qrels_original: Any,
    qrels_replicated: Any,
    baseline_original: RunArg | None = None,
    baseline_replicated: RunArg | None = None,
    metrics: MetricsArg = DEFAULT_METRICS,
    depth: int | None = 1000,
    user: str = "user",
    item: str = "item",
    score: str = "score",
    relevance: str = "relevance",
    **evaluate_options: Any,
) -> Replicability:
    """How closely a replication (other topics and qrels) matches the original runs.

    The replicability measures of Breuer et al. (SIGIR 2020) as the ``repro_eval``
    package computes them (its ``RplEvaluator``): the topics differ, so the documents'
    order and the per-topic errors are not compared; per metric, the two-sided
    unpaired t-test between the original and the replicated per-topic scores
    (:func:`scipy.stats.ttest_ind`, equal variances: Student's test) and, with the
    baseline pair, ER and DeltaRI (as in :func:`reproducibility`). The runs are ranked,
    cut to ``depth`` and evaluated as there: the original runs against
    ``qrels_original`` and the replicated ones against ``qrels_replicated``, one plan
    per collection (the two may use the same topic ids), each on the judged topics
    that either of its runs ranks.

    Parameters
    ----------
    original, replicated
        The original and the replicated (advanced) run: frames of ``user, item,
        score``.
    qrels_original, qrels_replicated
        The judgments of each collection: frames of ``user, item, relevance``.
    baseline_original, baseline_replicated
        The baseline pair, both or neither (adds ``run="baseline"`` rows and the
        ``effects`` frame).
    metrics, depth, user, item, score, relevance, **evaluate_options
        As for :func:`reproducibility`.

    Returns
    -------
    Replicability
        ``effectiveness`` and ``effects`` (see :class:`Replicability`).

    Examples
    --------
    >>> import polars as pl
    >>> import polars_rankeval as prk
    >>> q1 = pl.DataFrame({"user": ["q1", "q2"], "item": ["a", "a"], "relevance": [1, 1]})
    >>> q2 = pl.DataFrame({"user": ["r1", "r2"], "item": ["x", "x"], "relevance": [1, 1]})
    >>> run1 = pl.DataFrame({"user": ["q1", "q2"], "item": ["a", "b"], "score": [1.0, 1.0]})
    >>> run2 = pl.DataFrame({"user": ["r1", "r2"], "item": ["x", "x"], "score": [1.0, 1.0]})
    >>> out = prk.replicability(run1, run2, qrels_original=q1, qrels_replicated=q2,
    ...                         metrics=["precision@1"])
    >>> out.effectiveness.select("mean_original", "mean_replicated").row(0)
    (0.5, 1.0)
    """
    _check_options(depth, None, None)
    pairs = _pairs(
        {"advanced": (original, replicated), "baseline": (baseline_original, baseline_replicated)},
        {"baseline": ("baseline_original", "baseline_replicated")},
    )
    run_columns = {user: "user", item: "item", score: "score"}
    runs = {
        (run, side): _frame(value, _name(run, side), run_columns)
        for run, pair in pairs.items()
        for side, value in zip(("original", "replicated"), pair, strict=True)
    }
    qrels_columns = {user: "user", item: "item", relevance: "relevance"}
    judged = {
        "original": _frame(qrels_original, "qrels_original", qrels_columns),
        "replicated": _frame(qrels_replicated, "qrels_replicated", qrels_columns),
    }
    ranked, topics = _rank(runs, depth)
    # One plan per collection: the topic ids of the two need not be distinct.
    scores, names = _scores(
        [
            [(f"{run}/{side}", lf, judged[side]) for (run, s), lf in ranked.items() if s == side]
            for side in ("original", "replicated")
        ],
        metrics,
        evaluate_options,
    )
    effectiveness = _effectiveness_rpl(scores, names, list(pairs), topics)
    effects = _effects(scores, names, "replicated") if "baseline" in pairs else None
    return Replicability(effectiveness, effects)
