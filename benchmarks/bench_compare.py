"""Comparing systems at scale: ``prk.compare_per_user`` on 1M users, beside ranx.

1. **1,000,000 users x 4 systems x 3 metrics**, every system against the baseline
   (3 metrics x 3 pairs = 9 comparisons): the randomization test (10,000 random sign
   vectors, no interval), the paired bootstrap (10,000 resamples, BCa interval from the
   same resamples) and the t test (analytic, t interval) for reference. Reported: wall
   time of the call, time per (metric, pair), and the process's peak RSS after the
   run (it only grows; the per-user frame itself is about 130 MB). CPU seconds (all
   threads of the process) are shown too: on a shared machine they are the better
   measure of the work, wall time depends on the other processes.
2. **Beside ranx** on the same per-user values: ranx's ``compare`` evaluates its own
   runs and then calls ``ranx.statistical_tests.compute_statistical_significance``
   on the per-query scores; that function is timed here on our per-user arrays (so
   the numbers compared are exactly the same), for the Fisher randomization test
   and the t test. ranx permutes each query's pair of values with ``np.random.
   permutation`` in a numba loop: O(n) Python-free work per permutation but slow, so
   it runs on 100,000 users x 1,000 permutations (and its time at 1M x 10,000 is
   extrapolated linearly); prk runs the same size beside it, interleaved.

Per-user values are generated with numpy (seed 0), never written to disk: a user
difficulty ``b ~ Beta(2, 3)`` shared by the systems, plus each system's effect and
its own noise (sd 0.2), clipped to [0, 1]; "ndcg@10" is continuous, "precision@10"
rounded to tenths and "recall@20" to twentieths (many ties). The effects (+0.0003,
+0.0008, +0.02 over the baseline for ndcg) give p-values from large to tiny.

Usage::

    python benchmarks/bench_compare.py            # full sizes
    python benchmarks/bench_compare.py --quick    # 1/10 of the users, 1/10 of resamples
    python benchmarks/bench_compare.py --record   # also write RESULTS_COMPARE.md
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib.metadata
import os
import platform
import resource
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

import polars_rankeval as prk

HERE = Path(__file__).resolve().parent
SYSTEMS = ("s0", "s1", "s2", "s3")
EFFECTS = (0.0, 0.0003, 0.0008, 0.02)
METRICS = {"ndcg@10": None, "precision@10": 10, "recall@20": 20}


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def timed_cpu(fn: Callable[[], Any]) -> tuple[float, float, Any]:
    """(wall seconds, CPU seconds of this process: all its threads), result."""
    cpu = time.process_time()
    wall, out = timed(fn)
    return wall, time.process_time() - cpu, out


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def per_user(n_users: int, seed: int = 0) -> pl.DataFrame:
    """One row per (system, user), one column per metric."""
    rng = np.random.default_rng(seed)
    base = rng.beta(2.0, 3.0, n_users)
    frames = []
    for system, effect in zip(SYSTEMS, EFFECTS, strict=True):
        columns: dict[str, Any] = {"system": system, "user": np.arange(n_users)}
        for metric, grid in METRICS.items():
            value = np.clip(
                base + effect * (1 if grid is None else 5) + rng.normal(0, 0.2, n_users), 0, 1
            )
            columns[metric] = value if grid is None else np.round(value * grid) / grid
        frames.append(pl.DataFrame(columns))
    return pl.concat(frames)


def arrays(frame: pl.DataFrame, metric: str) -> dict[str, np.ndarray]:
    return {s: frame.filter(pl.col("system") == s).sort("user")[metric].to_numpy() for s in SYSTEMS}


def run_prk(
    frame: pl.DataFrame, test: str, n_resamples: int, ci: str
) -> tuple[float, float, pl.DataFrame]:
    return timed_cpu(
        lambda: prk.compare_per_user(
            frame,
            list(METRICS),
            baseline="s0",
            test=test,
            n_resamples=n_resamples,
            ci=ci,
            correction="none",
            progress=False,
        )
    )


def ranx_significance(
    values: dict[str, np.ndarray], test: str, n_permutations: int
) -> tuple[float, float, dict]:
    from ranx.statistical_tests import compute_statistical_significance

    scores = {name: {"m": v} for name, v in values.items()}
    return timed_cpu(
        lambda: compute_statistical_significance(
            list(values),
            scores,
            stat_test=test,
            n_permutations=n_permutations,
            max_p=0.05,
            random_seed=42,
        )
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--record", action="store_true")
    args = parser.parse_args()
    scale = 10 if args.quick else 1
    n_users, n_resamples = 1_000_000 // scale, 10_000 // scale
    ranx_users, ranx_perms = 100_000 // scale, 1_000
    warnings.filterwarnings("ignore")
    out: list[str] = []

    def emit(line: str = "") -> None:
        print(line, flush=True)
        out.append(line)

    load = os.getloadavg()
    versions = {
        name: importlib.metadata.version(name) for name in ("polars", "numpy", "scipy", "ranx")
    }
    emit("# Comparing systems: benchmark results")
    emit()
    emit(
        "Generated by `python benchmarks/bench_compare.py"
        + (" --quick" if args.quick else "")
        + " --record`; one run each, wall time."
    )
    emit()
    emit(f"- date: {dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M} UTC")
    emit(f"- machine: {platform.machine()}, {os.cpu_count()} cores, {platform.platform()}")
    emit(
        f"- versions: Python {platform.python_version()}, "
        + ", ".join(f"{k} {v}" for k, v in versions.items())
    )
    emit(f"- load average at start: {load[0]:.1f}/{load[1]:.1f}/{load[2]:.1f} (shared machine)")
    emit()

    import scipy.stats  # noqa: F401  (imported once, before the timings)

    gen_time, frame = timed(lambda: per_user(n_users))
    emit(
        f"### 1. {n_users:,} users x {len(SYSTEMS)} systems x {len(METRICS)} metrics, "
        f"{len(SYSTEMS) - 1} systems against the baseline s0 ({len(METRICS) * 3} comparisons)"
    )
    emit()
    emit(
        f"Per-user frame: {frame.height:,} rows, {frame.estimated_size('mb'):.0f} MB, generated "
        f"in {gen_time:.1f} s; peak RSS before the tests {peak_rss_mb():,.0f} MB."
    )
    emit()
    emit(
        "| test | resamples | interval | wall s | wall s per (metric, pair) | CPU s per "
        "(metric, pair) | peak RSS MB |"
    )
    emit("|---|---|---|---|---|---|---|")
    results: dict[str, pl.DataFrame] = {}
    for test, ci in (("t", "t"), ("randomization", "none"), ("bootstrap", "bca")):
        seconds, cpu, result = run_prk(frame, test, n_resamples, ci)
        results[test] = result
        resamples = "-" if test == "t" else f"{n_resamples:,}"
        emit(
            f"| {test} | {resamples} | {ci} | {seconds:.1f} | {seconds / result.height:.2f} | "
            f"{cpu / result.height:.2f} | {peak_rss_mb():,.0f} |"
        )
    emit()
    emit("p-values (uncorrected) and the bootstrap BCa interval of the difference:")
    emit()
    emit("| metric | system | diff | p t | p randomization | p bootstrap | BCa 95% interval |")
    emit("|---|---|---|---|---|---|---|")
    for k, row in enumerate(results["t"].iter_rows(named=True)):
        r = results["randomization"].row(k, named=True)
        b = results["bootstrap"].row(k, named=True)
        emit(
            f"| {row['metric']} | {row['system']} | {row['diff']:+.5f} | {row['p_value']:.4g} | "
            f"{r['p_value']:.4g} | {b['p_value']:.4g} | [{b['ci_low']:+.5f}, {b['ci_high']:+.5f}] |"
        )
    emit()

    # ------------------------------------------------------------------ ranx
    try:
        import ranx  # noqa: F401
    except ImportError:
        emit("ranx is not installed: section 2 skipped.")
        return
    emit(
        f"### 2. Beside ranx on the same per-user values: ndcg@10, {ranx_users:,} users, "
        f"{ranx_perms:,} permutations, the 6 pairs of the 4 systems (as ranx's compare does)"
    )
    emit()
    small = frame.filter(pl.col("user") < ranx_users).select("system", "user", "ndcg@10")
    values = arrays(small, "ndcg@10")
    # compile ranx's numba functions first (not timed)
    ranx_significance({k: v[:100] for k, v in values.items()}, "fisher", 10)
    rows = []
    for _ in range(2):  # interleaved: prk, ranx, prk, ranx
        prk_s, prk_cpu, prk_r = timed_cpu(
            lambda: prk.compare_per_user(
                small,
                "ndcg@10",
                n_resamples=ranx_perms,
                ci="none",
                correction="none",
                progress=False,
            )
        )
        ranx_s, ranx_cpu, ranx_r = ranx_significance(values, "fisher", ranx_perms)
        rows.append((prk_s, prk_cpu, ranx_s, ranx_cpu))
    prk_s, prk_cpu = min((r[0], r[1]) for r in rows)
    ranx_s, ranx_cpu = min((r[2], r[3]) for r in rows)
    t_prk, t_prk_cpu, t_res = timed_cpu(
        lambda: prk.compare_per_user(small, "ndcg@10", test="t", correction="none")
    )
    t_ranx, t_ranx_cpu, t_ranx_r = ranx_significance(values, "student", 0)
    emit(
        "| what | wall s (best of 2) | wall s per pair | CPU s per pair | CPU s per pair "
        "extrapolated to 1M users x 10,000 |"
    )
    emit("|---|---|---|---|---|")
    scale_up = (1_000_000 / ranx_users) * (10_000 / ranx_perms)
    emit(
        f"| prk randomization | {prk_s:.2f} | {prk_s / 6:.2f} | {prk_cpu / 6:.2f} | "
        "measured in 1. |"
    )
    emit(
        f"| ranx Fisher randomization (`compute_statistical_significance`) | {ranx_s:.2f} | "
        f"{ranx_s / 6:.2f} | {ranx_cpu / 6:.2f} | {ranx_cpu / 6 * scale_up:,.0f} |"
    )
    emit(f"| prk t | {t_prk:.3f} | {t_prk / 6:.3f} | {t_prk_cpu / 6:.3f} | |")
    emit(f"| ranx t | {t_ranx:.3f} | {t_ranx / 6:.3f} | {t_ranx_cpu / 6:.3f} | |")
    emit()
    emit("| pair | diff | p prk randomization | p ranx Fisher | p prk t | p ranx t |")
    emit("|---|---|---|---|---|---|")
    for k, row in enumerate(prk_r.iter_rows(named=True)):
        key = (row["system"], row["baseline"])
        emit(
            f"| {key[0]} vs {key[1]} | {row['diff']:+.5f} | {row['p_value']:.4f} | "
            f"{ranx_r[key]['m']['p_value']:.4f} | {t_res['p_value'][k]:.4g} | "
            f"{t_ranx_r[key]['m']['p_value']:.4g} |"
        )
    emit()
    emit(
        "The randomization p-values differ by resampling error only (standard error "
        f"sqrt(p(1-p)/{ranx_perms:,}), about 0.016 at p = 0.5); ranx reports count / R "
        "(0 when no permutation reaches the observed difference), prk (1 + count) / (R + 1). "
        "The t p-values are equal (both are scipy's ttest_rel)."
    )
    if args.record:
        (HERE / "RESULTS_COMPARE.md").write_text("\n".join(out) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
