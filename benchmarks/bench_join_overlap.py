"""What ``join``'s overlap check costs on in-memory input.

``join(recs, truth)`` on DataFrames counts the users, items and rows of the
recommendations found in the truth (``check_overlap=None``: on for in-memory input)
to warn when ids barely meet. This script times ``join`` with ``check_overlap=False``
and ``True`` on ``users x 50`` recommendations and ``users x 10`` truth rows,
interleaved in one process, median of ``--repeat`` runs.

Usage::

    python benchmarks/bench_join_overlap.py --users 100k [--record]
"""

from __future__ import annotations

import argparse
import datetime as dt
import platform
import statistics
import time
from pathlib import Path

import numpy as np
import polars as pl

import polars_rankeval as prk

HERE = Path(__file__).resolve().parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", default="100k")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--record", action="store_true", help="append to RESULTS_LAZY.md")
    args = parser.parse_args()
    text = args.users.lower()
    users = int(float(text[:-1]) * 1000) if text.endswith("k") else int(text)
    rng = np.random.default_rng(3)
    recs = pl.DataFrame(
        {
            "user": np.repeat(np.arange(users, dtype=np.int64), 50),
            "item": rng.integers(0, 100_000, users * 50, dtype=np.int64),
            "score": rng.random(users * 50),
        }
    ).unique(["user", "item"])
    truth = pl.DataFrame(
        {
            "user": np.repeat(np.arange(users, dtype=np.int64), 10),
            "item": rng.integers(0, 100_000, users * 10, dtype=np.int64),
        }
    ).unique(["user", "item"])
    times: dict[str, list[float]] = {"check_overlap=False": [], "check_overlap=True": []}
    for _ in range(args.repeat):
        for name in times:
            start = time.perf_counter()
            prk.join(recs, truth, check_overlap=name.endswith("True"))
            times[name].append(time.perf_counter() - start)
    base = statistics.median(times["check_overlap=False"])
    lines = [
        f"join: {recs.height:,} recommended rows, {truth.height:,} truth rows, in memory; "
        f"median of {args.repeat} interleaved runs; {platform.machine()}, {dt.date.today()}",
        "",
        "| variant | join (s) | ratio |",
        "| --- | ---: | ---: |",
    ]
    for name, values in times.items():
        median = statistics.median(values)
        lines.append(f"| {name} | {median:.3f} | {median / base:.2f}x |")
    out = "\n".join(lines) + "\n"
    print(out)
    if args.record:
        with (HERE / "RESULTS_LAZY.md").open("a") as fh:
            fh.write(out + "\n")


if __name__ == "__main__":
    main()
