"""Cost of the per-metric ``empty="skip"`` summary beside the former row rule.

``empty="skip"`` (each metric's aggregates over its own defined users, plus one
``n_users(<metric>)`` count per metric) and ``empty="skip_row"`` (the former default:
one filter shared by every aggregate) are run interleaved in one process, on the same
data, and the median times are compared:

* ``summarize`` alone on a per-user frame (the part that changed);
* the whole ``evaluate`` (per-user values + summary), in memory.

Data: ``users x 50`` candidate rows, scores rounded to 2 decimals (ties), 5% relevant,
a third of the users with a constant score (Kendall's tau undefined for them).

Usage::

    python benchmarks/bench_empty.py            # print the table
    python benchmarks/bench_empty.py --record   # also write RESULTS_EMPTY.md
"""

from __future__ import annotations

import argparse
import datetime as dt
import platform
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import polars as pl

import polars_rankeval as prk
from polars_rankeval.api.evaluate import summarize

METRICS = ["ndcg@10", "map@10", "mrr@10", "precision@10", "recall@10", "auc", "kendall_tau"]
HERE = Path(__file__).resolve().parent


def make_data(n_users: int, per_user: int = 50, seed: int = 0) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    user = np.repeat(np.arange(n_users, dtype=np.int64), per_user)
    item = np.tile(np.arange(per_user, dtype=np.int64), n_users)
    latent = rng.random(user.size)
    score = np.round(latent + rng.normal(0.0, 0.4, user.size), 2)
    score = np.where(user % 3 == 0, 0.0, score)
    relevance = (latent > 0.95).astype(np.int8)
    return pl.DataFrame({"user": user, "item": item, "score": score, "relevance": relevance})


def _once(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def interleaved(cases: dict[str, Callable[[], object]], repeat: int) -> dict[str, float]:
    """Median seconds per case, the cases alternating within each repetition."""
    times: dict[str, list[float]] = {name: [] for name in cases}
    for fn in cases.values():  # warm-up
        fn()
    for _ in range(repeat):
        for name, fn in cases.items():
            times[name].append(_once(fn))
    return {name: statistics.median(t) for name, t in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--record", action="store_true")
    args = parser.parse_args()
    df = make_data(args.users)
    per_user = prk.evaluate(df, METRICS, per_user=True)
    names = per_user.columns[1:]
    rows = []
    summary = interleaved(
        {
            empty: (lambda e=empty: summarize(per_user.lazy(), names, [], empty=e).collect())
            for empty in ("skip", "skip_row")
        },
        args.repeat,
    )
    rows.append(("summarize only", per_user.height, summary))
    whole = interleaved(
        {
            empty: (lambda e=empty: prk.evaluate(df, METRICS, empty=e))
            for empty in ("skip", "skip_row")
        },
        args.repeat,
    )
    rows.append(("evaluate (whole)", df.height, whole))
    lines = [
        "| step | rows | skip (s) | skip_row (s) | skip / skip_row |",
        "|---|---:|---:|---:|---:|",
    ]
    for step, n, t in rows:
        lines.append(
            f"| {step} | {n:,} | {t['skip']:.4f} | {t['skip_row']:.4f} | "
            f"{t['skip'] / t['skip_row']:.2f} |"
        )
    table = "\n".join(lines)
    print(table)
    if args.record:
        header = (
            "# Per-metric skip benchmark (benchmarks/bench_empty.py)\n\n"
            f"Recorded {dt.date.today()} on {platform.machine()}, Python "
            f"{platform.python_version()}, Polars {pl.__version__}. Metrics: "
            f"{', '.join(METRICS)}; {args.users:,} users x 50 rows; median of "
            f"{args.repeat} interleaved runs.\n\n"
        )
        (HERE / "RESULTS_EMPTY.md").write_text(header + table + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
