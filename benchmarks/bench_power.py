"""Power and sample size from data at 1M users x 5 systems, beside compare on the same input.

**Per-user values of 1,000,000 users x 5 systems x 2 metrics** (numpy, seed 0: a user
difficulty shared by the systems, a small effect per system, noise; ``ndcg@10``
continuous, ``precision@10`` in tenths, many ties), as one DataFrame (10M rows). The
calls, each in a fresh process (``spawn``) that runs it once on 50 users (the imports),
builds the data, then runs the call once:

- ``compare_per_user(baseline="a", test="t", ci="none")``: the reference, the same
  pairing of the same users (4 pairs x 2 metrics);
- ``sample_size_per_user(delta=0.01, baseline="a")``, on the DataFrame and on a
  LazyFrame: the sd of the per-user differences of every pair, then the exact t
  answer;
- ``topic_set_size_per_user(design="anova", min_diff=0.01)``: the residual variance of
  a two-way ANOVA without replication (5 systems x 1M users);
- ``compare_per_user`` then ``achieved_power`` (the post-hoc power and the users needed).

The rounds are interleaved (compare, sample_size, compare, sample_size, ...) and the
ratio of each round's wall time to the compare of the same round is reported, with its
median. Peak memory: the process's peak RSS after the call, and its rise over the
peak after building the data (the call's own peak, data excluded).

Checked: the sd equals numpy's ``std(ddof=1)`` of the differences; the two-way residual
variance equals numpy's ``sum((x - row mean - column mean + grand mean)^2) / ((m - 1)(n
- 1))``; the sd of ``sample_size`` equals ``|diff / effect_size|`` of ``compare``; and
``n_users`` equals statsmodels' ``TTestPower().solve_power`` rounded up (when
installed).

Usage::

    python benchmarks/bench_power.py            # 1M users, 3 rounds
    python benchmarks/bench_power.py --quick    # 100k users, 1 round
    python benchmarks/bench_power.py --record   # also write RESULTS_POWER.md
"""

from __future__ import annotations

import argparse
import datetime as dt
import math
import multiprocessing as mp
import os
import platform
import resource
import statistics
import time
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

HERE = Path(__file__).resolve().parent
SYSTEMS = ("a", "b", "c", "d", "e")
EFFECTS = (0.0, 0.002, 0.005, 0.01, 0.02)


def per_user(n_users: int, seed: int = 0) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    base = rng.beta(2.0, 3.0, n_users)
    frames = []
    for system, effect in zip(SYSTEMS, EFFECTS, strict=True):
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


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _call(name: str, frame: pl.DataFrame) -> Any:
    import polars_rankeval as prk

    if name == "compare":
        return prk.compare_per_user(frame, baseline="a", test="t", ci="none")
    if name == "sample_size":
        return prk.sample_size_per_user(frame, delta=0.01, baseline="a")
    if name == "sample_size_lazy":
        return prk.sample_size_per_user(frame.lazy(), delta=0.01, baseline="a")
    if name == "topic_set_size":
        return prk.topic_set_size_per_user(frame, design="anova", min_diff=0.01)
    if name == "achieved_power":
        result = prk.compare_per_user(frame, baseline="a", test="t", ci="none")
        return prk.achieved_power(result)
    raise ValueError(name)


def _child(name: str, n_users: int, queue: Any) -> None:
    _call(name, per_user(50, seed=1))  # imports (scipy, the lazy public names) before timing
    frame = per_user(n_users)
    before = peak_rss_mb()
    start, cpu = time.perf_counter(), time.process_time()
    out = _call(name, frame)
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    queue.put((wall, cpu, peak_rss_mb(), peak_rss_mb() - before, out))


def run(name: str, n_users: int) -> tuple[float, float, float, float, Any]:
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    proc = ctx.Process(target=_child, args=(name, n_users, queue))
    proc.start()
    result = queue.get()
    proc.join()
    return result


def check(n_users: int, results: dict[str, Any]) -> list[str]:
    """The checks against numpy, compare and statsmodels; their lines for the report."""
    frame = per_user(n_users)
    sample = results["sample_size"]
    topic = results["topic_set_size"]
    compared = results["compare"]
    lines = []
    for metric in ("ndcg@10", "precision@10"):
        x = np.column_stack(
            [frame.filter(pl.col("system") == s).sort("user")[metric].to_numpy() for s in SYSTEMS]
        )
        for j, system in enumerate(SYSTEMS[1:], start=1):
            sd = float(np.std(x[:, j] - x[:, 0], ddof=1))
            row = sample.filter((pl.col("metric") == metric) & (pl.col("system") == system))
            assert math.isclose(row["sd"][0], sd, rel_tol=1e-9), (metric, system)
            crow = compared.filter((pl.col("metric") == metric) & (pl.col("system") == system))
            assert math.isclose(
                row["sd"][0], abs(crow["diff"][0] / crow["effect_size"][0]), rel_tol=1e-9
            )
        residual = x - x.mean(axis=1, keepdims=True) - x.mean(axis=0) + x.mean()
        v = float((residual**2).sum() / ((x.shape[1] - 1) * (x.shape[0] - 1)))
        got = topic.filter(pl.col("metric") == metric)["variance"][0]
        assert math.isclose(got, v, rel_tol=1e-9), (metric, got, v)
        lines.append(
            f"| {metric} | {v:.6f} | {topic.filter(pl.col('metric') == metric)['n_users'][0]:,} |"
        )
    try:
        from statsmodels.stats.power import TTestPower
    except ImportError:  # pragma: no cover - statsmodels is a test dependency
        return lines
    for row in sample.iter_rows(named=True):
        solved = TTestPower().solve_power(effect_size=row["effect_size"], alpha=0.05, power=0.8)
        if abs(solved - round(solved)) > 1e-6:
            assert row["n_users"] == math.ceil(solved), (row, solved)
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="100k users, 1 round")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds (default 3)")
    parser.add_argument("--record", action="store_true", help="write RESULTS_POWER.md")
    args = parser.parse_args()
    load = "/".join(f"{x:.1f}" for x in os.getloadavg())
    n_users = 100_000 if args.quick else 1_000_000
    rounds = 1 if args.quick else args.rounds
    calls = ("compare", "sample_size", "sample_size_lazy", "topic_set_size", "achieved_power")
    timings: dict[str, list[tuple[float, float, float, float]]] = {c: [] for c in calls}
    ratios: dict[str, list[float]] = {c: [] for c in calls[1:]}
    results: dict[str, Any] = {}
    for _ in range(rounds):
        reference = None
        for name in calls:
            wall, cpu, peak, rise, out = run(name, n_users)
            timings[name].append((wall, cpu, peak, rise))
            results[name] = out
            if name == "compare":
                reference = wall
            else:
                assert reference is not None
                ratios[name].append(wall / reference)
    lines = check(n_users, results)
    labels = {
        "compare": "compare_per_user(test='t', ci='none'), 4 pairs x 2 metrics",
        "sample_size": "sample_size_per_user(delta=0.01), DataFrame",
        "sample_size_lazy": "sample_size_per_user(delta=0.01), LazyFrame",
        "topic_set_size": "topic_set_size_per_user(design='anova'), two-way V_E",
        "achieved_power": "compare_per_user + achieved_power",
    }
    table = []
    for name in calls:
        walls = [t[0] for t in timings[name]]
        best = min(range(len(walls)), key=walls.__getitem__)
        wall, cpu, peak, rise = timings[name][best]
        ratio = f"{statistics.median(ratios[name]):.2f}" if name in ratios else "1"
        table.append(
            f"| {labels[name]} | {statistics.median(walls):.2f} | {cpu:.2f} | {ratio} | "
            f"{peak:,.0f} | {rise:,.0f} |"
        )
    sample = results["sample_size"]
    out = [
        "# Power and sample size: benchmark results",
        "",
        "Generated by `python benchmarks/bench_power.py --record`; each call in a fresh",
        f"process, {rounds} interleaved round(s); wall: the median over the rounds.",
        "",
        f"- date: {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC",
        f"- machine: {platform.machine()}, {os.cpu_count()} cores, {platform.platform()}",
        f"- versions: Python {platform.python_version()}, polars {pl.__version__}, "
        f"numpy {np.__version__}",
        f"- load average at start: {load} (shared machine)",
        f"- data: {n_users:,} users x {len(SYSTEMS)} systems x 2 metrics, "
        f"{n_users * len(SYSTEMS):,} per-user rows",
        "",
        "| call | wall s | CPU s | wall / compare (median of rounds) | peak RSS MB | "
        "rise over the data MB |",
        "|---|---|---|---|---|---|",
        *table,
        "",
        "Users needed to detect a difference of 0.01 (two-sided, alpha 0.05, power 0.8),",
        "from the observed sd of each pair's per-user differences; the sd equals numpy's",
        "and `compare`'s, `n_users` statsmodels' `TTestPower().solve_power` rounded up:",
        "",
        "| metric | system | baseline | sd | n_users |",
        "|---|---|---|---|---|",
        *(
            f"| {r['metric']} | {r['system']} | {r['baseline']} | {r['sd']:.6f} | "
            f"{r['n_users']:,} |"
            for r in sample.iter_rows(named=True)
        ),
        "",
        "Sakai's ANOVA design over the 5 systems (range 0.01), the variance the residual of",
        "a two-way ANOVA without replication, equal to numpy's:",
        "",
        "| metric | V_E | n_users |",
        "|---|---|---|",
        *lines,
        "",
    ]
    text = "\n".join(out)
    print(text)
    if args.record:
        (HERE / "RESULTS_POWER.md").write_text(text)


if __name__ == "__main__":
    main()
