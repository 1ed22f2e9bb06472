"""The seeds' accuracy metrics beyond top-k ranking, in one evaluate call, on 10M rows.

Data: ``benchmarks/bench_core.make_data`` (100,000 users x 100 candidates, graded
relevance, scores rounded to 3 decimals so there are ties, 5% judged but not
recommended), generated on the fly. Timed, as the median of ``--repeats`` runs:

1. the floor: ``group_by("user").agg(pl.col("relevance").sum())``;
2. ``prk.evaluate`` of the full set of the full-catalog classification, LAUC,
   rank-correlation, rating-error and AUC metrics (``SUITE``), with every
   aggregation over users (mean, gmean, hmean, qmean, median, std), ties="expected",
   ``validate=False`` and ``validate=True``;
3. the same per family, to show where the time goes.

Usage::

    python benchmarks/bench_accuracy.py               # 10M rows
    python benchmarks/bench_accuracy.py --users 10000 # 1M rows, quick
    python benchmarks/bench_accuracy.py --record      # also write RESULTS_ACCURACY.md
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import polars as pl
from bench_core import make_data

import polars_rankeval as prk

FAMILIES: dict[str, list[str]] = {
    "classification": [
        "fallout@10",
        "miss_rate@10",
        "inverse_precision@10",
        "inverse_recall@10",
        "fbeta(beta=2)@10",
        "markedness@10",
        "informedness@10",
        "mcc@10",
        "accuracy@10",
        "boolean_kendall_tau@10",
        "lauc@10",
    ],
    "auc": ["auc", "cauc@10", "global_auc"],
    "correlation": ["spearman", "kendall_tau", "fcp"],
    "rating error": ["mae", "mse", "rmse", "nmae", "rmse(average=global)"],
}
SUITE = [m for metrics in FAMILIES.values() for m in metrics]
AGGREGATIONS = ["mean", "gmean", "hmean", "qmean", "median", "std"]
HERE = Path(__file__).resolve().parent


def median_seconds(fn: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=100_000)
    parser.add_argument("--candidates", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--record", action="store_true")
    args = parser.parse_args()

    df = make_data(args.users, args.candidates)
    # The score doubles as the predicted rating: rescale to the 0..3 relevance scale.
    df = df.with_columns(pl.col("score") * 3)
    lazy = df.lazy()
    floor = median_seconds(
        lambda: lazy.group_by("user").agg(pl.col("relevance").sum()).collect(), args.repeats
    )

    def run(metrics: list[str], validate: bool = False, aggregate: list[str] | None = None):
        return lambda: prk.evaluate(
            df,
            metrics,
            validate=validate,
            aggregate=aggregate or "mean",
            engine="memory",
        )

    rows = [("group_by floor", floor)]
    rows.append(
        (
            f"all {len(SUITE)} metrics x 6 aggregations",
            median_seconds(run(SUITE, aggregate=AGGREGATIONS), args.repeats),
        )
    )
    rows.append(
        (
            f"all {len(SUITE)} metrics x 6 aggregations, validate=True",
            median_seconds(run(SUITE, validate=True, aggregate=AGGREGATIONS), args.repeats),
        )
    )
    for family, metrics in FAMILIES.items():
        rows.append((f"{family} ({len(metrics)})", median_seconds(run(metrics), args.repeats)))
    result = run(SUITE)()

    table = ["| what | seconds | x floor |", "|---|---:|---:|"]
    for name, seconds in rows:
        table.append(f"| {name} | {seconds:.3f} | {seconds / floor:.1f} |")
    print(f"{df.height:,} rows, {args.users:,} users")
    print("\n".join(table))
    print(result)
    if args.record:
        header = [
            "# Accuracy metrics benchmark (benchmarks/bench_accuracy.py)",
            "",
            f"Recorded {dt.date.today()} on {platform.machine()}, {os.cpu_count()} cores, "
            f"Python {platform.python_version()}, Polars {pl.__version__}. "
            f"{df.height:,} rows ({args.users:,} users x {args.candidates}), in memory; "
            f"median of {args.repeats} runs; ties='expected'.",
            "",
            f"Suite: {', '.join(SUITE)}.",
            "",
        ]
        path = HERE / "RESULTS_ACCURACY.md"
        notes = ""
        if path.exists() and "<!-- notes -->" in path.read_text():
            old = path.read_text()
            notes = old[old.index("<!-- notes -->") :]
        path.write_text("\n".join([*header, *table, "", notes or "<!-- notes -->\n"]))


if __name__ == "__main__":
    main()
