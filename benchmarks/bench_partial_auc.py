"""pap@k against partial_auc@k and precision@k: the cost of pap's straddling tie group.

``pap`` keeps only the first min(k, R) relevant items of a user; under
``ties="expected"`` the tie group holding the k-th relevant item needs an exact
expectation over its orderings (see :mod:`polars_rankeval.metrics.partial_auc`). This
script times that metric beside its siblings on data where such groups are common.

Data: ``--users`` users x ``--candidates`` candidates (default 10,000 x 100 = 1M rows),
integer scores 0..19 (about 5 tied rows per score value and user, so most cutoffs fall
inside a tie group), 15% relevant (about 15 relevant items per user: the 10th relevant
item usually sits in a tie group with more relevant items below it).

Cases, each once per round, rounds interleaved in one process (a slow spell of the
shared machine hits every case alike); medians of wall-clock and process CPU seconds:

* ``evaluate(df, [m])`` for m in pap@10, partial_auc@10, precision@10 and pap without
  a cutoff (k = the user's negatives) on the 1M rows (ties="expected");
* the fixed cost per call: the same on a 50-row frame (median of ``--tiny-calls`` calls
  per round).

Usage::

    python benchmarks/bench_partial_auc.py                # 1M rows, 5 rounds
    python benchmarks/bench_partial_auc.py --record NOTE  # append a section to RESULTS_PAP.md
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import statistics
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import polars as pl

import polars_rankeval as prk

RESULTS_PATH = Path(__file__).resolve().parent / "RESULTS_PAP.md"
METRICS = ("pap@10", "partial_auc@10", "precision@10", "pap")


def make_data(users: int, candidates: int, seed: int = 0) -> pl.DataFrame:
    """Long frame with heavy ties: integer scores 0..19, 15% relevant."""
    rng = np.random.default_rng(seed)
    n = users * candidates
    return pl.DataFrame(
        {
            "user": np.repeat(np.arange(users, dtype=np.int64), candidates),
            "item": np.tile(np.arange(candidates, dtype=np.int64), users),
            "score": rng.integers(0, 20, n).astype(np.float64),
            "relevance": (rng.random(n) < 0.15).astype(np.float64),
        }
    )


def timed(fn: Callable[[], object]) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - wall, time.process_time() - cpu


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--users", type=int, default=10_000)
    ap.add_argument("--candidates", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--tiny-calls", type=int, default=10)
    ap.add_argument("--record", metavar="NOTE", help="append the table to RESULTS_PAP.md")
    args = ap.parse_args()

    big = make_data(args.users, args.candidates)
    tiny = make_data(5, 10, seed=1)
    # Warm-up (imports, plan caches) outside the timings.
    for m in METRICS:
        prk.evaluate(tiny, [m])

    cases: dict[str, Callable[[], object]] = {}
    for m in METRICS:

        def big_call(m: str = m) -> None:
            prk.evaluate(big, [m])

        cases[f"{m}, {big.height:,} rows"] = big_call
    for m in METRICS:

        def tiny_calls(m: str = m) -> None:
            for _ in range(args.tiny_calls):
                prk.evaluate(tiny, [m])

        cases[f"{m}, 50 rows (per call)"] = tiny_calls

    runs: dict[str, list[tuple[float, float]]] = {name: [] for name in cases}
    loads = []
    for _ in range(args.rounds):
        loads.append(os.getloadavg()[0])
        for name, fn in cases.items():
            wall, cpu = timed(fn)
            if "per call" in name:
                wall, cpu = wall / args.tiny_calls, cpu / args.tiny_calls
            runs[name].append((wall, cpu))

    base = {
        "big": f"partial_auc@10, {big.height:,} rows",
        "tiny": "partial_auc@10, 50 rows (per call)",
    }
    lines = [
        "| case | median s | runs s | cpu s | / partial_auc@10 (wall) |",
        "|---|---|---|---|---|",
    ]
    med = {n: statistics.median(w for w, _ in r) for n, r in runs.items()}
    for name, r in runs.items():
        ref = base["tiny" if "per call" in name else "big"]
        cpu = statistics.median(c for _, c in r)
        lines.append(
            f"| {name} | {med[name]:.3f} | {', '.join(f'{w:.3f}' for w, _ in r)} | "
            f"{cpu:.3f} | {med[name] / med[ref]:.2f}x |"
        )
    rev = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False
    ).stdout.strip()
    header = (
        f"- date: {dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M} UTC; revision {rev}; "
        f"polars {pl.__version__}; {os.cpu_count()} cores (shared), {platform.platform()}\n"
        f"- 1-min load at each round: {', '.join(f'{x:.1f}' for x in loads)}; "
        f"{args.rounds} interleaved rounds, ties='expected'\n"
    )
    table = "\n".join(lines)
    print(header)
    print(table)
    if args.record:
        if not RESULTS_PATH.exists():
            RESULTS_PATH.write_text(
                "# pap@k: benchmark results\n\n"
                "Generated by `python benchmarks/bench_partial_auc.py --record NOTE`.\n"
            )
        with RESULTS_PATH.open("a") as fh:
            fh.write(f"\n## {args.record}\n\n{header}\n{table}\n")


if __name__ == "__main__":
    main()
