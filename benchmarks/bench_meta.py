"""Meta-evaluation at 1M users: discriminative power, swap rates, metric agreement.

**Per-user values of 1,000,000 users x 5 systems x 2 metrics** (numpy, seed 0: a user
difficulty shared by the systems, a small effect per system and noise; ``ndcg@10``
continuous, ``precision@10`` in tenths, many ties), as ``compare_per_user`` takes them:
a 5M-row frame. Each call runs in its own process on freshly generated data, so that
its peak memory is its own: the resident set before the call, and its peak during the
call (``VmHWM`` after resetting it through ``/proc/self/clear_refs``).

Each call is timed beside its reference, interleaved (ours, reference, ours,
reference), and checked against it:

- ``discriminative_power_per_user(statistic="mean")`` against
  ``compare_per_user(test="bootstrap")``: the same resamples, the ASLs equal the
  p-values; the studentized default (``statistic="t"``, Sakai 2006) on the same draws;
- ``discriminative_power_per_user(test="tukey")`` against
  ``compare_per_user(test="tukey")``: equal p-values;
- ``swap_rate_per_user`` (trials drawn in blocks, subset means by one gather per block)
  against a loop over trials with numpy means on the same subsets: equal swap counts;
- ``metric_agreement_per_user`` against Polars means and ``scipy.stats.kendalltau``:
  equal tau-b.

Usage::

    python benchmarks/bench_meta.py            # 1M users
    python benchmarks/bench_meta.py --quick    # 100k users
    python benchmarks/bench_meta.py --record   # also write RESULTS_META.md
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

HERE = Path(__file__).resolve().parent
METRICS = ["ndcg@10", "precision@10"]
SYSTEMS = ["s1", "s2", "s3", "s4", "s5"]
B_BOOTSTRAP = 1000
B_TUKEY = 200
TRIALS = 100


def per_user(n_users: int, seed: int = 0) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    base = rng.beta(2.0, 3.0, n_users)
    frames = []
    for system, effect in zip(SYSTEMS, (0.0, 0.001, 0.003, 0.01, 0.03), strict=True):
        ndcg = np.clip(base + effect + rng.normal(0, 0.2, n_users), 0, 1)
        precision = np.round(np.clip(base + effect + rng.normal(0, 0.2, n_users), 0, 1), 1)
        frames.append(
            pl.DataFrame(
                {
                    "system": system,
                    "user": np.arange(n_users, dtype=np.int64),
                    "ndcg@10": ndcg,
                    "precision@10": precision,
                }
            )
        )
    return pl.concat(frames)


def _status(field: str) -> float:
    """A memory field of /proc/self/status, in MB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return float("nan")


def swap_loop(frame: pl.DataFrame, seed: int = 0) -> dict[str, int]:
    """The reference swap counts: one trial at a time, numpy means on compare's draws."""
    from polars_rankeval._utils.stats import blocks
    from polars_rankeval.analysis._system_values import all_pairs, value_matrices

    chosen, canonical, prepared = value_matrices(
        frame, METRICS, by="system", user="user", systems=SYSTEMS
    )
    pairs = all_pairs(chosen, canonical)
    out = {}
    for name, values, _ in prepared:
        n = values.shape[0]
        sizes = sorted({max(1, (n // 2) * 2 // d) for d in (20, 8, 4, 2)})
        swaps = 0
        for _, size, rng in blocks(seed, "swap_rate", "swap", TRIALS, n, width=values.shape[1] + 8):
            order = rng.permuted(np.tile(np.arange(n, dtype=np.intp), (size, 1)), axis=1)
            for trial in order:
                for c in sizes:
                    first = values[trial[:c]].mean(axis=0)
                    second = values[trial[c : 2 * c]].mean(axis=0)
                    for a, b in pairs:
                        d1, d2 = first[a] - first[b], second[a] - second[b]
                        if abs(d1) > 1e-9 and abs(d2) > 1e-9 and (d1 > 0) != (d2 > 0):
                            swaps += 1
        out[name] = swaps
    return out


def run_case(case: str, n_users: int) -> dict[str, Any]:
    """One call on fresh data: wall and CPU seconds, memory, and what is checked."""
    import polars_rankeval as prk

    frame = per_user(n_users)
    Path("/proc/self/clear_refs").write_text("5")  # reset the peak resident set
    before = _status("VmRSS")
    cpu, start = time.process_time(), time.perf_counter()
    check: Any
    if case in ("power_t", "power_mean", "power_tukey"):
        test = "tukey" if case == "power_tukey" else "bootstrap"
        result = prk.discriminative_power_per_user(
            frame,
            METRICS,
            systems=SYSTEMS,
            test=test,  # type: ignore[arg-type]
            statistic="t" if case == "power_t" else "mean",
            n_resamples=B_TUKEY if test == "tukey" else B_BOOTSTRAP,
        )
        check = {
            "asl": sorted(result.asl.select("metric", "system", "baseline", "asl").rows()),
            "summary": result.summary.select(
                "metric", "n_significant", "discriminative_power", "difference_required"
            ).rows(),
        }
    elif case in ("compare_bootstrap", "compare_tukey"):
        test = "tukey" if case == "compare_tukey" else "bootstrap"
        result = prk.compare_per_user(
            frame,
            METRICS,
            systems=SYSTEMS,
            test=test,  # type: ignore[arg-type]
            n_resamples=B_TUKEY if test == "tukey" else B_BOOTSTRAP,
            ci="none",
            correction="none",
        )
        check = {"asl": sorted(result.select("metric", "system", "baseline", "p_value").rows())}
    elif case == "swap":
        rates = prk.swap_rate_per_user(frame, METRICS, systems=SYSTEMS, n_trials=TRIALS)
        check = {
            "swaps": {
                m: int(rates.summary.filter(pl.col("metric") == m)["n_swaps"].sum())
                for m in METRICS
            },
            "summary": rates.summary.select(
                "metric", "subset_size", "swap_rate", "min_difference"
            ).rows(),
        }
    elif case == "swap_loop":
        check = {"swaps": swap_loop(frame)}
    elif case == "agreement":
        out = prk.metric_agreement_per_user(frame, METRICS)
        check = {"tau_b": out["tau_b"].item(), "row": out.drop("note").rows()}
    elif case == "agreement_ref":
        from scipy.stats import kendalltau

        means = frame.group_by("system").agg(pl.col(METRICS).mean()).sort("system")
        check = {"tau_b": float(kendalltau(means[METRICS[0]], means[METRICS[1]]).statistic)}
    else:
        msg = f"unknown case {case!r}"
        raise ValueError(msg)
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    return {
        "wall": wall,
        "cpu": cpu,
        "rss_before": before,
        "rss_peak": _status("VmHWM"),
        "check": check,
    }


def in_process(case: str, n_users: int) -> dict[str, Any]:
    """Run one case in a fresh Python process; its JSON result."""
    done = subprocess.run(
        [sys.executable, __file__, "--case", case, "--users", str(n_users)],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": str(HERE.parent)},
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


PAIRS = (
    (
        "power_mean",
        "compare_bootstrap",
        "discriminative_power_per_user(statistic='mean')",
        "compare_per_user(test='bootstrap')",
    ),
    (
        "power_t",
        "compare_bootstrap",
        "discriminative_power_per_user() (studentized, Sakai)",
        "compare_per_user(test='bootstrap')",
    ),
    (
        "power_tukey",
        "compare_tukey",
        "discriminative_power_per_user(test='tukey')",
        "compare_per_user(test='tukey')",
    ),
    ("swap", "swap_loop", "swap_rate_per_user()", "a loop over trials, numpy means"),
    (
        "agreement",
        "agreement_ref",
        "metric_agreement_per_user()",
        "Polars means + scipy.stats.kendalltau",
    ),
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="100k users")
    parser.add_argument("--record", action="store_true", help="write RESULTS_META.md")
    parser.add_argument("--rounds", type=int, default=2, help="interleaved rounds (2)")
    parser.add_argument("--case", help=argparse.SUPPRESS)
    parser.add_argument("--users", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.case:
        print(json.dumps(run_case(args.case, args.users)))
        return
    load = "/".join(f"{x:.1f}" for x in os.getloadavg())
    n_users = 100_000 if args.quick else 1_000_000
    results: dict[str, list[dict[str, Any]]] = {}
    for round_ in range(args.rounds):
        for ours, ref, _, _ in PAIRS:
            for case in (ours, ref):
                if case == "compare_bootstrap" and len(results.get(case, [])) > round_:
                    continue  # one reference run per round serves both bootstrap rows
                results.setdefault(case, []).append(in_process(case, n_users))
                print(case, f"{results[case][-1]['wall']:.1f}s", file=sys.stderr)

    def best(case: str) -> dict[str, Any]:
        return min(results[case], key=lambda r: r["wall"])

    # The checks: our results equal the references'.
    assert best("power_mean")["check"]["asl"] == best("compare_bootstrap")["check"]["asl"]
    assert best("power_tukey")["check"]["asl"] == best("compare_tukey")["check"]["asl"]
    assert best("swap")["check"]["swaps"] == best("swap_loop")["check"]["swaps"]
    tau, tau_ref = best("agreement")["check"]["tau_b"], best("agreement_ref")["check"]["tau_b"]
    assert abs(tau - tau_ref) < 1e-12, (tau, tau_ref)

    rows = []
    for ours, ref, label, ref_label in PAIRS:
        a, b = best(ours), best(ref)
        rows.append(
            f"| {label} | {a['wall']:.1f} | {a['cpu']:.1f} | {a['rss_before']:,.0f} | "
            f"{a['rss_peak']:,.0f} | {ref_label} | {b['wall']:.1f} | {b['cpu']:.1f} | "
            f"{b['rss_peak']:,.0f} | {a['wall'] / b['wall']:.2f} | {a['cpu'] / b['cpu']:.2f} |"
        )
    summaries = []
    for name, label in (
        ("power_t", "bootstrap, studentized (Sakai)"),
        ("power_mean", "bootstrap, mean (compare's)"),
        ("power_tukey", "randomized Tukey HSD"),
    ):
        for metric, n_sig, share, required in best(name)["check"]["summary"]:
            req = "null" if required is None else f"{required:.5f}"
            summaries.append(f"| {label} | {metric} | {n_sig} of 10 | {share:.1f} | {req} |")
    swap_rows = [
        f"| {m} | {c:,} | {rate:.4f} | {'null' if d is None else f'{d:.5f}'} |"
        for m, c, rate, d in best("swap")["check"]["summary"]
    ]
    out = [
        "# Meta-evaluation: benchmark results",
        "",
        "Generated by `python benchmarks/bench_meta.py --record`: each call in its own process",
        f"on freshly generated data, interleaved with its reference, best of {args.rounds}.",
        "",
        f"- date: {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC",
        f"- machine: {platform.machine()}, {os.cpu_count()} cores, {platform.platform()}",
        f"- versions: Python {platform.python_version()}, polars {pl.__version__}, "
        f"numpy {np.__version__}",
        f"- load average at start: {load} (shared machine)",
        f"- data: per-user values of {n_users:,} users x {len(SYSTEMS)} systems x "
        f"{len(METRICS)} metrics ({n_users * len(SYSTEMS):,} rows), 10 system pairs",
        f"- bootstrap resamples {B_BOOTSTRAP}, Tukey permutations {B_TUKEY}, swap trials "
        f"{TRIALS} per subset size (4 sizes: n/20 to n/2)",
        "",
        "RSS before: the process with its data, before the call; peak: the largest resident",
        "set during the call (both MB). Ratios: ours / the reference's, wall and CPU time (on",
        "a shared machine the CPU ratio is the steadier one).",
        "",
        "| call | wall s | CPU s | RSS before | peak RSS | reference | wall s | CPU s | peak RSS "
        "| wall ratio | CPU ratio |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
        *rows,
        "",
        "Checked: the ASLs of `statistic='mean'` and of Tukey equal compare's p-values; the",
        "swap counts equal the loop's on the same subsets; tau-b equals scipy's.",
        "",
        "Discriminative power at alpha = 0.05:",
        "",
        "| test | metric | significant pairs | power | difference required |",
        "|---|---|---|---|---|",
        *summaries,
        "",
        "Swap rates:",
        "",
        "| metric | subset size | swap rate | min difference (swap rate < 5%) |",
        "|---|---|---|---|",
        *swap_rows,
        "",
    ]
    text = "\n".join(out)
    print(text)
    if args.record:
        (HERE / "RESULTS_META.md").write_text(text)


if __name__ == "__main__":
    main()
