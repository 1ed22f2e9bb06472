"""The sorted-head path against Polars' per-user sort and against the general path.

Data: ``bench_core``'s generator (10M rows = 100,000 users x 100 candidates by
default, ~14% tied scores, 5% judged but not recommended rows). Metrics: the core
suite {ndcg, map, mrr, precision, recall}@10, and ``ndcg@1..100`` against ``ndcg@10``.

Every case runs once per round, rounds interleaved in one process (a slow spell of the
shared machine hits every case alike); the table gives medians and ratios:

* the primitives: ``group_by("user").agg(pl.col("relevance").sort_by("score",
  descending=True).head(10))`` and the same with ``item`` as a second sort key (the
  item_desc tie-break); both also on Polars' in-memory engine (``collect()`` runs
  the streaming engine by default; the head path collects its first stage on the
  in-memory engine, see ``_head.first_stage_engine``);
* the suite on the sorted-head path ("head") and on the general window path
  ("general", the path before this work; ``_head.ENABLED = False``), for
  ties="item_desc" and ties="expected", validate on and off;
* "where the time goes": the head path's first stage alone (the one ``group_by``: the
  per-user sort and the per-user totals, and under expected ties the exact count of
  the tie group at k) by replacing its second stage with a no-op;
* peak memory of ``prk.evaluate`` in fresh child processes (VmHWM after the data is
  generated) on both paths.

Usage::

    python benchmarks/bench_head.py                 # 10M rows
    python benchmarks/bench_head.py --users 20000   # 2M rows, quick
    python benchmarks/bench_head.py --record        # also write benchmarks/RESULTS_HEAD.md
"""

from __future__ import annotations

import argparse
import datetime as dt
import gc
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_core import METRICS, _proc_status_kib, _reset_peak_rss, make_data

import polars_rankeval as prk
import polars_rankeval.plan.head as _head
import polars_rankeval.plan.head_sums as _head_sums
from polars_rankeval.plan.head_request import _HEAD

RESULTS_PATH = Path(__file__).resolve().parent / "RESULTS_HEAD.md"
NOTES_MARKER = "<!-- hand-written notes: kept by --record -->"


def evaluate(
    df: pl.DataFrame,
    metrics: list[str],
    *,
    ties: str,
    validate: bool,
    head: bool,
    split: int | None = None,
) -> Callable[[], object]:
    def call() -> object:
        _head.ENABLED = head
        _head_sums.SPLIT = split
        try:
            return prk.evaluate(df, metrics, ties=ties, validate=validate)  # type: ignore[arg-type]
        finally:
            _head.ENABLED = True
            _head_sums.SPLIT = None

    return call


def first_stage(df: pl.DataFrame, ties: str) -> Callable[[], object]:
    """The head path with its second stage (the list/row arithmetic) skipped."""

    def call() -> object:
        saved = (_head._deterministic_sums, _head._expected_sums, _head._value)
        saved_prefix = _head._prefix_sums
        _head._deterministic_sums = lambda users, need: users  # type: ignore[assignment]
        _head._expected_sums = lambda users, need, length, keys, **_: users  # type: ignore[assignment]
        _head._prefix_sums = lambda users, need, expected: users  # type: ignore[assignment]
        # Keep the head in the plan (read its length), or projection pushdown drops it.
        _head._value = lambda reader, metric: pl.col(_HEAD).list.len()  # type: ignore[assignment]
        try:
            return prk.evaluate(df, METRICS, ties=ties, validate=False)  # type: ignore[arg-type]
        finally:
            _head._deterministic_sums, _head._expected_sums, _head._value = saved
            _head._prefix_sums = saved_prefix

    return call


def memory_child(users: int, candidates: int, ties: str, head: bool) -> None:
    df = make_data(users, candidates)
    gc.collect()
    after = _proc_status_kib("VmRSS")
    reset = _reset_peak_rss()
    _head.ENABLED = head
    t0 = time.perf_counter()
    prk.evaluate(df, METRICS, ties=ties)  # type: ignore[arg-type]
    seconds = time.perf_counter() - t0
    peak = _proc_status_kib("VmHWM") if reset else None
    print(
        json.dumps(
            {
                "after_kib": after,
                "peak_kib": peak,
                "mb": df.estimated_size("mb"),
                "seconds": seconds,
            }
        )
    )


def measure_memory(users: int, candidates: int, ties: str, head: bool) -> dict[str, Any]:
    cmd = [
        sys.executable,
        str(Path(__file__).resolve()),
        "--memory-child",
        f"--users={users}",
        f"--candidates={candidates}",
        f"--ties={ties}",
    ]
    if not head:
        cmd.append("--general")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run(cmd, capture_output=True, text=True, check=True, env=env)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=100_000)
    parser.add_argument("--candidates", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--ties", default="expected")
    parser.add_argument("--record", action="store_true")
    parser.add_argument("--no-memory", action="store_true")
    parser.add_argument("--memory-child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--general", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.memory_child:
        memory_child(args.users, args.candidates, args.ties, not args.general)
        return 0
    memory: list[tuple[str, dict[str, Any]]] = []
    if not args.no_memory:  # children first: a child inherits its parent's peak RSS
        for ties in ("item_desc", "expected"):
            for head in (True, False):
                label = f"{'head' if head else 'general'} path, ties={ties!r}, validate=True"
                memory.append((label, measure_memory(args.users, args.candidates, ties, head)))
    load0 = os.getloadavg()
    df = make_data(args.users, args.candidates)
    lf = df.lazy()
    cases: dict[str, Callable[[], object]] = {
        "prim1": lambda: (
            lf.group_by("user")
            .agg(pl.col("relevance").sort_by("score", descending=True).head(10))
            .collect()
        ),
        "prim2": lambda: (
            lf.group_by("user")
            .agg(pl.col("relevance").sort_by(["score", "item"], descending=True).head(10))
            .collect()
        ),
        # The same on Polars' in-memory engine (collect() picks the streaming engine
        # by default; the head path collects its first stage in memory on the
        # in-memory engine, see _head.first_stage_engine).
        "prim1:mem": lambda: (
            lf.group_by("user")
            .agg(pl.col("relevance").sort_by("score", descending=True).head(10))
            .collect(engine="in-memory")
        ),
        "prim2:mem": lambda: (
            lf.group_by("user")
            .agg(pl.col("relevance").sort_by(["score", "item"], descending=True).head(10))
            .collect(engine="in-memory")
        ),
    }
    for ties in ("item_desc", "expected"):
        for head in (True, False):
            for validate in (False, True):
                key = f"{'head' if head else 'general'}:{ties}:{'val' if validate else 'noval'}"
                cases[key] = evaluate(df, METRICS, ties=ties, validate=validate, head=head)
        cases[f"stage1:{ties}"] = first_stage(df, ties)
    for head in (True, False):
        name = "head" if head else "general"
        cases[f"{name}:ndcg@10"] = evaluate(
            df, ["ndcg@10"], ties="expected", validate=False, head=head
        )
        cases[f"{name}:ndcg@1..100"] = evaluate(
            df, ["ndcg@1..100"], ties="expected", validate=False, head=head
        )
    cases["head:ndcg@100"] = evaluate(df, ["ndcg@100"], ties="expected", validate=False, head=True)
    cases["head:ndcg@1..100:split1"] = evaluate(
        df, ["ndcg@1..100"], ties="expected", validate=False, head=True, split=1
    )
    for metric in ("map", "precision"):
        cases[f"head:{metric}@10"] = evaluate(
            df, [f"{metric}@10"], ties="expected", validate=False, head=True
        )
        cases[f"head:{metric}@1..100"] = evaluate(
            df, [f"{metric}@1..100"], ties="expected", validate=False, head=True
        )
    same = {}
    for ties in ("item_desc", "expected"):
        got = evaluate(df, METRICS, ties=ties, validate=False, head=True)()
        want = evaluate(df, METRICS, ties=ties, validate=False, head=False)()
        assert isinstance(got, pl.DataFrame)
        assert isinstance(want, pl.DataFrame)
        same[ties] = max(abs(got[m].item() - want[m].item()) for m in METRICS)
    times: dict[str, list[float]] = {key: [] for key in cases}
    cpu: dict[str, list[float]] = {key: [] for key in cases}
    loads = []
    for round_no in range(args.repeats):
        loads.append(os.getloadavg()[0])
        print(f"round {round_no + 1}/{args.repeats} (load {loads[-1]:.1f})", file=sys.stderr)
        for key, fn in cases.items():
            gc.collect()
            t0, c0 = time.perf_counter(), time.process_time()
            fn()
            times[key].append(time.perf_counter() - t0)
            cpu[key].append(time.process_time() - c0)
    med = {key: statistics.median(v) for key, v in times.items()}
    med_cpu = {key: statistics.median(v) for key, v in cpu.items()}
    lines = report(args, df, med, times, memory, same, load0, loads, med_cpu)
    print("\n".join(lines))
    if args.record:
        # the hand-written notes (from the marker on) are kept
        old = RESULTS_PATH.read_text() if RESULTS_PATH.exists() else ""
        notes = old[old.index(NOTES_MARKER) :] if NOTES_MARKER in old else NOTES_MARKER + "\n"
        RESULTS_PATH.write_text("\n".join(lines) + "\n\n" + notes)
        print(f"\nwrote {RESULTS_PATH}", file=sys.stderr)
    return 0


def report(
    args: argparse.Namespace,
    df: pl.DataFrame,
    med: dict[str, float],
    times: dict[str, list[float]],
    memory: list[tuple[str, dict[str, Any]]],
    same: dict[str, float],
    load0: tuple[float, float, float],
    loads: list[float],
    med_cpu: dict[str, float],
) -> list[str]:
    p1, p2 = med["prim1"], med["prim2"]
    c2 = med_cpu["prim2"]

    def row(key: str, label: str, extra: str = "") -> str:
        runs = ", ".join(f"{t:.3f}" for t in times[key])
        return (
            f"| {label} | {med[key]:.3f} | {runs} | {med[key] / p1:.2f}x | "
            f"{med[key] / p2:.2f}x | {med_cpu[key]:.3f} | {med_cpu[key] / c2:.2f}x | {extra} |"
        )

    def ratio(a: str, b: str) -> str:
        """Wall-clock ratio of the medians (CPU-time ratio in brackets)."""
        return f"{med[a] / med[b]:.2f}x (cpu {med_cpu[a] / med_cpu[b]:.2f}x)"

    revision = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"],
        capture_output=True,
        text=True,
        cwd=Path(__file__).resolve().parent,
        check=False,
    ).stdout.strip()
    lines = [
        "# Sorted-head path: benchmark results",
        "",
        "Generated by `python benchmarks/bench_head.py --record` (issue 14).",
        "",
        f"- date: {dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M} UTC; revision {revision}",
        f"- machine: {os.cpu_count()} cores (shared with other jobs), "
        f"{platform.platform()}; polars {pl.__version__} ({pl.thread_pool_size()} threads)",
        f"- load average at start {load0[0]:.1f}/{load0[1]:.1f}/{load0[2]:.1f}; 1-min load at "
        f"each round: {', '.join(f'{x:.1f}' for x in loads)}",
        f"- data: bench_core's generator, {df.height:,} rows = {args.users:,} users x "
        f"{args.candidates} candidates, {df.estimated_size('mb'):.0f} MB in Polars",
        f"- metrics: {', '.join(METRICS)}; median of {args.repeats} interleaved rounds",
        "- wall-clock seconds, and the process's CPU seconds (all threads; steadier than the "
        "wall clock when the machine is shared, but blind to parallelism)",
        "",
        "## Timings",
        "",
        "| what | median s | runs s | / prim1 | / prim2 | cpu s | cpu / prim2 | note |",
        "|---|---|---|---|---|---|---|---|",
        row("prim1", "prim1: `agg(relevance.sort_by(score).head(10))`"),
        row("prim2", "prim2: the same sorted by (score, item)"),
        row("prim1:mem", 'prim1 on the in-memory engine (`collect(engine="in-memory")`)'),
        row("prim2:mem", "prim2 on the in-memory engine"),
    ]
    for ties in ("item_desc", "expected"):
        for validate in ("noval", "val"):
            for path in ("head", "general"):
                key = f"{path}:{ties}:{validate}"
                label = f"suite, {path} path, ties={ties!r}, validate={validate == 'val'}"
                lines.append(row(key, label))
        lines.append(row(f"stage1:{ties}", f"head path first stage only, ties={ties!r}"))
    for path in ("head", "general"):
        lines.append(row(f"{path}:ndcg@10", f"ndcg@10 alone, {path} path (expected)"))
        lines.append(row(f"{path}:ndcg@1..100", f"ndcg@1..100, {path} path (expected)"))
        if path == "head":
            lines.append(row("head:ndcg@100", "ndcg@100 alone, head path (expected)"))
            lines.append(
                row(
                    "head:ndcg@1..100:split1",
                    "ndcg@1..100, head path (expected), rows in one branch (SPLIT=1)",
                )
            )
    for metric in ("map", "precision"):
        lines.append(row(f"head:{metric}@10", f"{metric}@10 alone, head path (expected)"))
        lines.append(row(f"head:{metric}@1..100", f"{metric}@1..100, head path (expected)"))
    lines += [
        "",
        "## Goals (issue 14)",
        "",
        "| goal | measured | target |",
        "|---|---|---|",
        f"| 1. suite, item_desc, validate=False / prim2 (/ prim1) | "
        f"{ratio('head:item_desc:noval', 'prim2')}; wall / prim1 "
        f"{med['head:item_desc:noval'] / p1:.2f}x "
        f"| <= 1.5x |",
        f"| 1'. the same / prim2 on the in-memory engine | "
        f"{ratio('head:item_desc:noval', 'prim2:mem')} | <= 1.5x |",
        f"| 2. expected / item_desc (validate=False) | "
        f"{ratio('head:expected:noval', 'head:item_desc:noval')} | <= 1.3x |",
        f"| 3. validate=True / validate=False (item_desc; expected) | "
        f"{ratio('head:item_desc:val', 'head:item_desc:noval')}; "
        f"{ratio('head:expected:val', 'head:expected:noval')} | <= 1.25x |",
        f"| 4. ndcg@1..100 / ndcg@10 (expected) | "
        f"{ratio('head:ndcg@1..100', 'head:ndcg@10')} | <= 3x |",
        f"| 4b. map@1..100 / map@10; precision@1..100 / precision@10 (expected) | "
        f"{ratio('head:map@1..100', 'head:map@10')}; "
        f"{ratio('head:precision@1..100', 'head:precision@10')} | <= 3x |",
        "",
        "Before (general path, same run): suite item_desc / prim2 "
        f"{ratio('general:item_desc:noval', 'prim2')}, expected / item_desc "
        f"{ratio('general:expected:noval', 'general:item_desc:noval')}, validate "
        f"{ratio('general:item_desc:val', 'general:item_desc:noval')}, ndcg@1..100 / ndcg@10 "
        f"{ratio('general:ndcg@1..100', 'general:ndcg@10')}. Speed-up of the head path: "
        f"item_desc {ratio('general:item_desc:noval', 'head:item_desc:noval')}, expected "
        f"{ratio('general:expected:noval', 'head:expected:noval')}, defaults (expected, "
        f"validate) {ratio('general:expected:val', 'head:expected:val')}.",
        "",
        "Same numbers: largest difference of the five means between the two paths: "
        + ", ".join(f"{t} {d:.1e}" for t, d in same.items())
        + ".",
    ]
    if memory:
        lines += [
            "",
            "## Peak memory of evaluate (fresh child process each)",
            "",
            "| child | frame MB | RSS after generation MiB | VmHWM during evaluate MiB "
            "| increment MiB | increment / frame | evaluate s |",
            "|---|---|---|---|---|---|---|",
        ]
        for label, m in memory:
            after, peak = m["after_kib"] / 1024, (m["peak_kib"] or 0) / 1024
            inc = peak - after
            lines.append(
                f"| {label} | {m['mb']:.0f} | {after:.0f} | {peak:.0f} | {inc:.0f} | "
                f"{inc / m['mb']:.1f}x | {m['seconds']:.2f} |"
            )
    return lines


if __name__ == "__main__":
    sys.exit(main())
