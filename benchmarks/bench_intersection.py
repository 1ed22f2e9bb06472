"""Intersection (RecTools ``Intersection``) in ``rank_similarity``: speed beside RBO and RecTools.

Two runs over the same candidates (``--users`` users x 100 candidates, continuous scores,
numpy seed 0; never written to disk), each also given as an ordinal rank column.
Interleaved over ``--rounds`` rounds (best of them), ``prk.rank_similarity`` of:

* ``rbo@10`` (the measure it already had: the reference of the ratios);
* ``intersection@10`` and ``intersection(ref_k=20)@10`` (item-id tie rule);
* ``intersection@10`` under ``ties="expected"`` on scores rounded to one decimal (heavy
  ties: the expectation over the tied orderings of both runs);
* ``Intersection(ref_k=20)@10`` under ``conventions="rectools"`` from the rank columns
  (absolute positions);

and RecTools' own ``Intersection(k=10, ref_k=20).calc`` on the same rank tables (pandas)
when ``rectools.metrics.intersection`` imports, with the largest per-user difference.
RecTools 0.19.0 pins numpy<2 on Python 3.11, so it is not a dependency of this project;
the recorded run imported the metric modules of its 0.19.0 wheel directly (see the
results file).

Usage::

    python benchmarks/bench_intersection.py            # 20,000 users (2M rows per run)
    python benchmarks/bench_intersection.py --quick    # 2,000 users
    python benchmarks/bench_intersection.py --record   # also write RESULTS_INTERSECTION.md
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib.metadata
import os
import platform
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

import polars_rankeval as prk

HERE = Path(__file__).resolve().parent
PER_USER = 100
NOTES = """
### Notes

- `rank_similarity` validates both runs before computing (repeated (user, item) rows are
  an error, ranks below 1 under absolute positions too): one hash pass over each run,
  a good part of the time against RecTools, which checks neither. The intersection
  itself is one join of the two runs' top-k rows and two group-bys.
- On the shared 2-core machine (load average above) the timings are noisy: ratios
  between runs of the same round move by 20-30 % from one run of the script to another.
- The values agree exactly (max abs diff 0 over every user); also checked ad hoc on 200
  random pairs of tables with gaps, repeated ranks and users missing from either run
  (3599 user values, all equal; see tests/metrics/test_intersection.py).
"""


def runs(n_users: int) -> tuple[pl.DataFrame, pl.DataFrame]:
    rng = np.random.default_rng(0)
    n = n_users * PER_USER
    user = np.repeat(np.arange(n_users, dtype=np.int64), PER_USER)
    item = np.tile(np.arange(PER_USER, dtype=np.int64), n_users)
    base = rng.random(n)
    frames = []
    for noise in (0.3, 0.6):
        score = base + noise * rng.random(n)
        frame = pl.DataFrame({"user": user, "item": item, "score": score}).with_columns(
            rank=pl.col("score").rank("ordinal", descending=True).over("user").cast(pl.Int64)
        )
        frames.append(frame)
    return frames[0], frames[1]


def best(fn: Callable[[], Any], times: list[float]) -> Any:
    start = time.perf_counter()
    out = fn()
    times.append(time.perf_counter() - start)
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--users", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--record", action="store_true")
    args = parser.parse_args()
    n_users = args.users // 10 if args.quick else args.users
    a, b = runs(n_users)
    ta = a.with_columns(pl.col("score").round(1))
    tb = b.with_columns(pl.col("score").round(1))
    ra, rb = a.drop("score"), b.drop("score")
    cases: dict[str, Callable[[], pl.DataFrame]] = {
        "rbo@10": lambda: prk.rank_similarity(a, b, ["rbo@10"]),
        "intersection@10": lambda: prk.rank_similarity(a, b, ["intersection@10"]),
        "intersection(ref_k=20)@10": lambda: prk.rank_similarity(
            a, b, ["intersection(ref_k=20)@10"]
        ),
        "intersection@10, ties='expected', scores rounded": lambda: prk.rank_similarity(
            ta, tb, ["intersection@10"], ties="expected"
        ),
        "Intersection(ref_k=20)@10, conventions='rectools', rank=": lambda: prk.rank_similarity(
            ra, rb, ["Intersection(ref_k=20)@10"], rank="rank", conventions="rectools"
        ),
    }
    peer: Callable[[], Any] | None = None
    peer_version = "not importable"
    try:
        import pandas as pd
        from rectools import Columns
        from rectools.metrics.intersection import Intersection

        pa = pd.DataFrame(
            {Columns.User: ra["user"], Columns.Item: ra["item"], Columns.Rank: ra["rank"]}
        )
        pb = pd.DataFrame(
            {Columns.User: rb["user"], Columns.Item: rb["item"], Columns.Rank: rb["rank"]}
        )
        metric = Intersection(k=10, ref_k=20)
        peer = lambda: metric.calc_per_user(pa, pb)  # noqa: E731
        try:
            peer_version = importlib.metadata.version("rectools")
        except importlib.metadata.PackageNotFoundError:
            peer_version = os.environ.get("RECTOOLS_VERSION", "metric modules, version unknown")
    except ImportError:
        pass
    times: dict[str, list[float]] = {name: [] for name in cases}
    peer_times: list[float] = []
    values: dict[str, float] = {}
    peer_out = None
    for _ in range(args.rounds):
        for name, fn in cases.items():
            out = best(fn, times[name])
            values[name] = float(out[out.columns[0]].item())
        if peer is not None:
            peer_out = best(peer, peer_times)
    base = min(times["rbo@10"])
    rows = [
        f"| `{name}` | {min(t):.3f} | {min(t) / base:.2f} | {values[name]:.6f} |"
        for name, t in times.items()
    ]
    lines = [
        "# Intersection benchmark results",
        "",
        "Generated by `python benchmarks/bench_intersection.py --record`; wall time in one "
        "process, the best of the interleaved rounds.",
        "",
        f"- date: {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC",
        f"- machine: {platform.machine()}, {os.cpu_count()} cores, {platform.platform()}",
        f"- versions: Python {platform.python_version()}, polars {pl.__version__} "
        f"({pl.thread_pool_size()} threads), RecTools {peer_version}",
        "- load average at start: " + "/".join(f"{x:.1f}" for x in os.getloadavg()),
        "",
        f"### Two runs of {n_users * PER_USER:,} rows ({n_users:,} users x {PER_USER})",
        "",
        "| `rank_similarity` request | seconds | x rbo@10 | mean |",
        "|---|---|---|---|",
        *rows,
    ]
    if peer is not None and peer_out is not None:
        mine = prk.rank_similarity(
            ra, rb, ["Intersection(ref_k=20)@10"], rank="rank", conventions="rectools",
            per_user=True,
        )  # fmt: skip
        want = peer_out.to_numpy()
        got = mine[mine.columns[1]].to_numpy()
        diff = float(np.max(np.abs(got - want))) if len(want) == len(got) else float("nan")
        prk_seconds = min(times["Intersection(ref_k=20)@10, conventions='rectools', rank="])
        lines += [
            "",
            "### Against RecTools (the same rank tables, pandas)",
            "",
            "| measure | RecTools seconds | prk seconds | RecTools mean | prk mean | "
            "max abs diff (per user) |",
            "|---|---|---|---|---|---|",
            f"| Intersection(k=10, ref_k=20) | {min(peer_times):.3f} | {prk_seconds:.3f} | "
            f"{float(want.mean()):.6f} | {float(got.mean()):.6f} | {diff:.1e} |",
        ]
    text = "\n".join(lines) + "\n" + NOTES
    print(text)
    if args.record:
        (HERE / "RESULTS_INTERSECTION.md").write_text(text)


if __name__ == "__main__":
    main()
