"""The effectiveness per topic: RMSE, nRMSE and the t-tests between original and new runs.

The second level of :func:`~polars_rankeval.reproducibility` and
:func:`~polars_rankeval.replicability`: each run's per-topic scores (one ``evaluate``
plan per group of runs scored on the same topics), compared per metric by the root
mean square error and the paired t-test (same topics) or the unpaired one (other
topics), as ``repro_eval``'s ``RpdEvaluator`` and ``RplEvaluator`` do.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import polars as pl

from polars_rankeval.metrics.grammar import MetricsArg

_NOT_FORWARDED = ("per_user", "per_item", "aggregate", "by", "score", "rank", "item", "user")


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
