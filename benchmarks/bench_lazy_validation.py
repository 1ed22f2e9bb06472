"""Lazy validation: what ``evaluate(LazyFrame)`` costs at the call and at ``collect``.

Before, ``evaluate`` on a LazyFrame ran the value checks (nulls, NaN, negative
relevance, duplicate (user, item) rows) eagerly, at the call: a full read of the
source before the caller even asked for the result. Now the checks are a branch of
the result's query and run at ``collect``. This script measures, on a Parquet scan
(``users x 50`` rows, ties, graded relevance) with {ndcg, recall, mrr}@10, interleaved
in one process (median of ``--repeat`` runs):

* ``eager checks`` -- the old way: ``check_values`` at the call, then ``collect``;
* ``checks in the plan`` -- the new way: the call returns at once, ``collect`` runs
  the checks and the evaluation in one query;
* ``no checks`` -- ``validate=False``, the floor.

Usage::

    python benchmarks/bench_lazy_validation.py --rows 5M [--record]
"""

from __future__ import annotations

import argparse
import datetime as dt
import platform
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
import polars as pl

import polars_rankeval as prk
from polars_rankeval._utils.types import make_columns
from polars_rankeval.plan.validate import check_values

METRICS = ["ndcg@10", "recall@10", "mrr@10"]
CANDIDATES = 50
HERE = Path(__file__).resolve().parent


def parse_rows(text: str) -> int:
    scale = {"k": 10**3, "m": 10**6}
    text = text.strip().lower()
    return int(float(text[:-1]) * scale[text[-1]]) if text[-1] in scale else int(text)


def write_data(path: Path, rows: int) -> None:
    rng = np.random.default_rng(7)
    users = rows // CANDIDATES
    pl.DataFrame(
        {
            "user": np.repeat(np.arange(users, dtype=np.int64), CANDIDATES),
            "item": rng.integers(0, 10**9, users * CANDIDATES, dtype=np.int64),
            "score": np.round(rng.random(users * CANDIDATES), 3),
            "relevance": rng.choice(np.array([0, 0, 0, 1, 2], dtype=np.int8), users * CANDIDATES),
        }
    ).write_parquet(path)


def eager_checks(path: Path) -> tuple[float, float]:
    start = time.perf_counter()
    lf = pl.scan_parquet(path)
    check_values(lf, make_columns(), [])
    result = prk.evaluate(lf, METRICS, engine="memory", validate=False)
    call = time.perf_counter() - start
    result.collect()
    return call, time.perf_counter() - start


def checks_in_plan(path: Path) -> tuple[float, float]:
    start = time.perf_counter()
    result = prk.evaluate(pl.scan_parquet(path), METRICS, engine="memory")
    call = time.perf_counter() - start
    result.collect()
    return call, time.perf_counter() - start


def no_checks(path: Path) -> tuple[float, float]:
    start = time.perf_counter()
    result = prk.evaluate(pl.scan_parquet(path), METRICS, engine="memory", validate=False)
    call = time.perf_counter() - start
    result.collect()
    return call, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", default="5M")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--record", action="store_true", help="append to RESULTS_LAZY.md")
    args = parser.parse_args()
    rows = parse_rows(args.rows)
    runs = {"eager checks (before)": eager_checks, "checks in the plan (now)": checks_in_plan,
            "no checks (validate=False)": no_checks}  # fmt: skip
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in runs}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "data.parquet"
        write_data(path, rows)
        for _ in range(args.repeat):  # interleaved
            for name, fn in runs.items():
                times[name].append(fn(path))
    floor = statistics.median(t[1] for t in times["no checks (validate=False)"])
    lines = [
        f"{rows:,} rows, {len(METRICS)} metrics, Parquet scan, median of {args.repeat} "
        f"interleaved runs; {platform.machine()}, {dt.date.today()}",
        "",
        "| variant | at the call (s) | call + collect (s) | vs no checks |",
        "| --- | ---: | ---: | ---: |",
    ]
    for name, values in times.items():
        call = statistics.median(v[0] for v in values)
        total = statistics.median(v[1] for v in values)
        lines.append(f"| {name} | {call:.3f} | {total:.3f} | {total / floor:.2f}x |")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.record:
        out = HERE / "RESULTS_LAZY.md"
        header = "" if out.exists() else (
            "# Lazy validation\n\nWritten by `benchmarks/bench_lazy_validation.py --record`.\n\n"
        )  # fmt: skip
        with out.open("a") as fh:
            fh.write(header + text + "\n")


if __name__ == "__main__":
    main()
