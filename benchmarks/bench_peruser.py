"""The users behind a comparison at 1M users: wins/ties/losses, largest differences, gaps.

1. **Per-user values of 1,000,000 users x 2 systems x 2 metrics** (numpy, seed 0: a
   user difficulty shared by the systems plus noise; ``ndcg@10`` continuous,
   ``precision@10`` in tenths, many ties): ``compare_per_user(test="t")`` with its
   ``wins``/``ties``/``losses`` (checked against a numpy count), and
   ``largest_differences_per_user(n=10)`` on the DataFrame and on a LazyFrame
   (checked against numpy's ``lexsort``).
2. **Long data of 1,000,000 users x 2 systems x 5 items** (10M rows, about 40% of the
   items unjudged): ``judgement_gaps(["ndcg@5"])``, two ``evaluate`` plans (as given,
   and on the judged rows: condensed lists) joined per user; checked: the condensed
   means equal ``evaluate`` on the judged rows.

Reported: wall and CPU seconds of each call and the process's peak RSS after it (it
only grows). Data are generated in memory, never written.

Usage::

    python benchmarks/bench_peruser.py            # 1M users
    python benchmarks/bench_peruser.py --quick    # 100k users
    python benchmarks/bench_peruser.py --record   # also write RESULTS_PERUSER.md
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import resource
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

import polars_rankeval as prk

HERE = Path(__file__).resolve().parent


def timed(fn: Callable[[], Any]) -> tuple[float, float, Any]:
    """(wall seconds, CPU seconds of this process: all its threads), result."""
    cpu, start = time.process_time(), time.perf_counter()
    out = fn()
    return time.perf_counter() - start, time.process_time() - cpu, out


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def per_user(n_users: int, seed: int = 0) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    base = rng.beta(2.0, 3.0, n_users)
    frames = []
    for system, effect in (("a", 0.0), ("b", 0.01)):
        ndcg = np.clip(base + effect + rng.normal(0, 0.2, n_users), 0, 1)
        precision = np.round(np.clip(base + effect + rng.normal(0, 0.2, n_users), 0, 1), 1)
        frames.append(
            pl.DataFrame(
                {
                    "system": system,
                    "user": np.arange(n_users),
                    "ndcg@10": ndcg,
                    "precision@10": precision,
                }
            )
        )
    return pl.concat(frames)


def long_data(n_users: int, depth: int = 5, seed: int = 0) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    users = np.repeat(np.arange(n_users), depth)
    items = np.tile(np.arange(depth), n_users)
    rel = rng.integers(0, 3, n_users * depth).astype(float)
    rel[rng.random(n_users * depth) < 0.4] = np.nan  # unjudged
    frames = [
        pl.DataFrame(
            {
                "system": system,
                "user": users,
                "item": items,
                "score": rng.random(n_users * depth),
                "relevance": rel,
            }
        ).with_columns(pl.col("relevance").fill_nan(None).cast(pl.Int64))
        for system in ("a", "b")
    ]
    return pl.concat(frames)


def numpy_top(d: np.ndarray, users: np.ndarray, n: int, tol: float) -> tuple[list, list]:
    up, down = d > tol, d < -tol
    best = users[up][np.lexsort((users[up], -d[up]))][:n].tolist()
    worst = users[down][np.lexsort((users[down], d[down]))][:n].tolist()
    return best, worst


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="100k users")
    parser.add_argument("--record", action="store_true", help="write RESULTS_PERUSER.md")
    args = parser.parse_args()
    load = "/".join(f"{x:.1f}" for x in os.getloadavg())
    n_users = 100_000 if args.quick else 1_000_000
    rows: list[tuple[str, float, float, float]] = []
    lines: list[str] = []

    frame = per_user(n_users)
    wall, cpu, result = timed(lambda: prk.compare_per_user(frame, baseline="a", test="t"))
    rows.append(
        ("compare_per_user(test='t'), 2 metrics, with wins/ties/losses", wall, cpu, peak_rss_mb())
    )
    a = frame.filter(pl.col("system") == "a").sort("user")
    b = frame.filter(pl.col("system") == "b").sort("user")
    for metric in ("ndcg@10", "precision@10"):
        d = (b[metric] - a[metric]).to_numpy()
        expected = (int((d > 1e-9).sum()), int((np.abs(d) <= 1e-9).sum()), int((d < -1e-9).sum()))
        got = result.filter(pl.col("metric") == metric).select("wins", "ties", "losses").row(0)
        assert got == expected, (metric, got, expected)
        lines.append(f"| {metric} | {got[0]:,} | {got[1]:,} | {got[2]:,} |")

    wall, cpu, top = timed(lambda: prk.largest_differences_per_user(frame, baseline="a", n=10))
    rows.append(("largest_differences_per_user(n=10), DataFrame", wall, cpu, peak_rss_mb()))
    wall, cpu, lazy_top = timed(
        lambda: prk.largest_differences_per_user(frame.lazy(), baseline="a", n=10)
    )
    rows.append(("largest_differences_per_user(n=10), LazyFrame", wall, cpu, peak_rss_mb()))
    assert top.equals(lazy_top)
    users = a["user"].to_numpy()
    for metric in ("ndcg@10", "precision@10"):
        d = (b[metric] - a[metric]).to_numpy()
        best, worst = numpy_top(d, users, 10, 1e-9)
        mine = top.filter(pl.col("metric") == metric)
        assert mine.filter(pl.col("direction") == "better")["user"].to_list() == best
        assert mine.filter(pl.col("direction") == "worse")["user"].to_list() == worst

    data = long_data(n_users)
    wall, cpu, gaps = timed(lambda: prk.judgement_gaps(data, ["ndcg@5"], n=10))
    rows.append((f"judgement_gaps(['ndcg@5']), {data.height:,} rows", wall, cpu, peak_rss_mb()))
    expected_gaps = prk.evaluate(
        data.filter(pl.col("relevance").is_not_null()), ["ndcg@5"], by="system"
    )
    np.testing.assert_allclose(
        gaps.summary.sort("system")["condensed"].to_numpy(),
        expected_gaps.sort("system")["ndcg@5"].to_numpy(),
    )

    out = [
        "# The users behind a comparison: benchmark results",
        "",
        "Generated by `python benchmarks/bench_peruser.py --record`; one run each.",
        "",
        f"- date: {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC",
        f"- machine: {platform.machine()}, {os.cpu_count()} cores, {platform.platform()}",
        f"- versions: Python {platform.python_version()}, polars {pl.__version__}, "
        f"numpy {np.__version__}",
        f"- load average at start: {load} (shared machine)",
        f"- users: {n_users:,}",
        "",
        "| call | wall s | CPU s | peak RSS MB |",
        "|---|---|---|---|",
        *(f"| {name} | {w:.1f} | {c:.1f} | {r:,.0f} |" for name, w, c, r in rows),
        "",
        "Wins / ties / losses of b against a (tie tolerance 1e-9), equal to a numpy count:",
        "",
        "| metric | wins | ties | losses |",
        "|---|---|---|---|",
        *lines,
        "",
        "The largest differences equal numpy's lexsort of the paired differences (both",
        "ways, ties by user id); the condensed means equal `evaluate` on the judged rows.",
        "",
        "Judgement gaps (summary):",
        "",
        "| system | unjudged | condensed | as non-relevant | n_users | n_differ |",
        "|---|---|---|---|---|---|",
        *(
            f"| {r['system']} | {r['unjudged']:.4f} | {r['condensed']:.4f} | "
            f"{r['as_nonrelevant']:.4f} | {r['n_users']:,} | {r['n_differ']:,} |"
            for r in gaps.summary.iter_rows(named=True)
        ),
        "",
    ]
    text = "\n".join(out)
    print(text)
    if args.record:
        (HERE / "RESULTS_PERUSER.md").write_text(text)


if __name__ == "__main__":
    main()
