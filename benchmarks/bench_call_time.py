"""Seconds spent inside ``evaluate(LazyFrame)`` before anything is collected.

The input is ``join`` of two Parquet scans (recommendations: ``users x 20`` rows,
truth: ``users x 5``), so counting its rows or computing a statistic runs the join.
For each way of running (``auto``, ``memory`` with a data-wide statistic, bucketed,
partitioned) the script times the call alone and then the ``collect``; median of
``--repeat`` runs. It runs against whichever ``polars_rankeval`` is importable, with
the engine options of its ``evaluate`` (``engine=`` objects, or the former
``strategy=``/``n_buckets=`` keywords), so the same script measures before and after.

Usage::

    PYTHONPATH=. python benchmarks/bench_call_time.py --users 100k [--record LABEL]
"""

from __future__ import annotations

import argparse
import datetime as dt
import inspect
import platform
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

import polars_rankeval as prk

HERE = Path(__file__).resolve().parent
METRICS = ["ndcg@10", "recall@10", "fallout@10"]  # fallout: the catalog size (n_items)


def _options(kind: str) -> dict[str, Any]:
    if "strategy" in inspect.signature(prk.evaluate).parameters:  # the former keywords
        return {
            "auto": {},
            "memory": {"strategy": "memory"},
            "buckets": {"strategy": "buckets", "n_buckets": 4},
            "partition": {"strategy": "partition", "n_buckets": 4},
        }[kind]
    engines = {
        "auto": "auto",
        "memory": "memory",
        "buckets": prk.Buckets(n_buckets=4),  # type: ignore[attr-defined]
        "partition": prk.Partition(n_buckets=4),  # type: ignore[attr-defined]
    }
    return {"engine": engines[kind]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", default="100k")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--record", metavar="LABEL", help="append to RESULTS_CALL_TIME.md")
    args = parser.parse_args()
    text = args.users.lower()
    users = int(float(text[:-1]) * 1000) if text.endswith("k") else int(text)
    rng = np.random.default_rng(7)
    work = Path(tempfile.mkdtemp(prefix="bench-call-time-"))
    pl.DataFrame(
        {
            "user": np.repeat(np.arange(users, dtype=np.int64), 20),
            "item": rng.integers(0, 50_000, users * 20, dtype=np.int64),
            "score": rng.random(users * 20),
        }
    ).unique(["user", "item"]).write_parquet(work / "recs.parquet")
    pl.DataFrame(
        {
            "user": np.repeat(np.arange(users, dtype=np.int64), 5),
            "item": rng.integers(0, 50_000, users * 5, dtype=np.int64),
        }
    ).unique(["user", "item"]).write_parquet(work / "truth.parquet")
    joined = prk.join(
        pl.scan_parquet(work / "recs.parquet"), pl.scan_parquet(work / "truth.parquet")
    )
    rows = joined.select(pl.len()).collect().item()
    lines = [
        f"evaluate(join(scan, scan)) of {rows:,} rows, {METRICS}; "
        f"median of {args.repeat}; {args.record or 'unlabelled'}; {platform.machine()}, "
        f"{dt.date.today()}",
        "",
        "| engine | call (s) | collect (s) |",
        "| --- | ---: | ---: |",
    ]
    for kind in ("auto", "memory", "buckets", "partition"):
        calls, collects = [], []
        for _ in range(args.repeat):
            start = time.perf_counter()
            result = prk.evaluate(joined, METRICS, **_options(kind))
            calls.append(time.perf_counter() - start)
            start = time.perf_counter()
            result.collect()
            collects.append(time.perf_counter() - start)
        lines.append(
            f"| {kind} | {statistics.median(calls):.3f} | {statistics.median(collects):.3f} |"
        )
    out = "\n".join(lines) + "\n"
    print(out)
    if args.record:
        with (HERE / "RESULTS_CALL_TIME.md").open("a") as fh:
            fh.write(out + "\n")


if __name__ == "__main__":
    main()
