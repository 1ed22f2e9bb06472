"""Stand-alone metric expressions against ``evaluate(per_user=True)`` (issue 26).

Usage::

    python benchmarks/bench_expr.py [--users 20000] [--rounds 3] [--no-per-metric] [--contexts]
                                    [--record | --record-append]

Data: bench_core's generator, users x 100 candidates (scores rounded to 3 decimals,
about 14% of recommended rows tied, 5% not recommended). For every tie policy, in
interleaved rounds in one process:

1. ``prk.evaluate(df, METRICS, per_user=True, ties=...)``;
2. ``df.lazy().group_by("user").agg(prk.ndcg(10), prk.recall(20), ...)`` with the
   same ``ties=``, checked equal to 1. per user (1e-12);
2b. ``df.lazy().group_by("user").agg(prk.evaluate_expr(METRICS, ties=...))``, the five
   metrics as one struct expression (one selection shared), checked equal to 1.;
3. the per-user sort primitive
   ``group_by("user").agg(pl.col("relevance").sort_by(["score", "item"]).head(10))``;
4. unless ``--no-per-metric``: each metric alone, its expression against ``evaluate``
   of that metric;
5. with ``--contexts``: the five expressions per row with ``.over("user")`` (against
   ``evaluate(per_user=True)``) and under ``group_by(["system", "user"])`` (against
   ``evaluate(per_user=True, by="system")``), two systems by user parity.

Wall-clock and CPU seconds (``time.process_time``, both threads) are recorded: the
machine is shared, and the CPU time of a run is the steadier of the two. Prints the
tables of medians; ``--record`` writes ``benchmarks/RESULTS_EXPR.md`` (keeping its
``## Findings`` section), ``--record-append`` adds the tables of another data size.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path

import polars as pl

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_core import describe_data, make_data

import polars_rankeval as prk

METRICS = ["ndcg@10", "recall@20", "map@10", "mrr@10", "precision@10"]
RESULTS = Path(__file__).resolve().parent / "RESULTS_EXPR.md"
FINDINGS = "## Findings"


def expression(metric: str, ties: str) -> pl.Expr:
    """The metric function of one of METRICS with ``ties=``."""
    name, k = metric.split("@")
    return getattr(prk, name)(int(k), ties=ties)  # type: ignore[no-any-return]


def difference(ev: pl.DataFrame, ex: pl.DataFrame, metrics: list[str]) -> float:
    """The largest per-user difference between the expressions and evaluate."""
    joined = ev.join(ex, on="user", suffix="_x")
    assert joined.height == ev.height == ex.height
    return max(
        joined.select((pl.col(m) - pl.col(m + "_x")).abs().max()).item() or 0.0 for m in metrics
    )


def _table(rows: list[tuple[str, list[float], list[float], str]]) -> str:
    lines = [
        "| what | median s | runs s | median CPU s | expressions / evaluate (wall; CPU) |",
        "|---|---|---|---|---|",
    ]
    for name, wall, cpu, ratio in rows:
        shown = ", ".join(f"{x:.3f}" for x in wall)
        lines.append(
            f"| {name} | {statistics.median(wall):.3f} | {shown} | "
            f"{statistics.median(cpu):.3f} | {ratio} |"
        )
    return "\n".join(lines)


def _ratio(wall: dict[str, list[float]], cpu: dict[str, list[float]], a: str, b: str) -> str:
    w = statistics.median(wall[a]) / statistics.median(wall[b])
    c = statistics.median(cpu[a]) / statistics.median(cpu[b])
    return f"{w:.2f}x; {c:.2f}x"


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; print the tables, and write them with ``--record``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--no-per-metric", action="store_true")
    parser.add_argument(
        "--contexts",
        action="store_true",
        help="also .over('user') and group_by(['system', 'user']) (two systems by user parity)",
    )
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--record", action="store_true")
    group.add_argument("--record-append", action="store_true")
    args = parser.parse_args(argv)
    df = make_data(args.users, 100)
    info = describe_data(df)
    lf = df.lazy()
    prim = pl.col("relevance").sort_by(["score", "item"], descending=True, nulls_last=True)
    cases: dict[str, Callable[[], pl.DataFrame]] = {
        "primitive: agg(relevance.sort_by([score, item]).head(10))": lambda: (
            lf.group_by("user").agg(prim.head(10)).collect()
        )
    }
    for ties in prk.TIE_POLICIES:
        cases[f"evaluate(per_user=True), ties={ties!r}"] = (
            lambda t=ties: prk.evaluate(df, METRICS, per_user=True, ties=t)  # type: ignore[misc]
        )
        cases[f"group_by('user').agg(5 expressions), ties={ties!r}"] = lambda t=ties: (
            lf.group_by("user").agg([expression(m, t) for m in METRICS]).collect()
        )
        cases[f"group_by('user').agg(evaluate_expr(5)), ties={ties!r}"] = lambda t=ties: (
            lf.group_by("user")
            .agg(prk.evaluate_expr(METRICS, ties=t))  # type: ignore[arg-type]
            .unnest("metrics")
            .collect()
        )
        for metric in [] if args.no_per_metric else METRICS:
            cases[f"{metric}: evaluate, ties={ties!r}"] = (
                lambda t=ties, m=metric: prk.evaluate(df, [m], per_user=True, ties=t)  # type: ignore[misc]
            )
            cases[f"{metric}: expression, ties={ties!r}"] = lambda t=ties, m=metric: (
                lf.group_by("user").agg(expression(m, t)).collect()
            )
    contexts: list[tuple[str, str]] = []  # (case, the evaluate case it is measured against)
    if args.contexts:
        systems = lf.with_columns((pl.col("user") % 2).alias("system"))
        for ties in ("expected", "item_desc"):
            exprs = [expression(m, ties) for m in METRICS]
            base = f"evaluate(per_user=True), ties={ties!r}"
            over = f"with_columns(e.over('user') for the 5), ties={ties!r}"
            cases[over] = lambda e=exprs: lf.with_columns(x.over("user") for x in e).collect()
            by = f"evaluate(per_user=True, by='system'), ties={ties!r}"
            cases[by] = lambda t=ties: prk.evaluate(  # type: ignore[misc]
                systems, METRICS, per_user=True, by="system", ties=t
            ).collect()
            two = f"group_by(['system', 'user']).agg(5 expressions), ties={ties!r}"
            cases[two] = lambda e=exprs: systems.group_by(["system", "user"]).agg(e).collect()
            one = prk.evaluate_expr(METRICS, ties=ties)  # type: ignore[arg-type]
            over1 = f"with_columns(evaluate_expr(5).over('user')), ties={ties!r}"
            cases[over1] = lambda e=one: lf.with_columns(e.over("user")).collect()
            two1 = f"group_by(['system', 'user']).agg(evaluate_expr(5)), ties={ties!r}"
            cases[two1] = lambda e=one: (
                systems.group_by(["system", "user"]).agg(e).unnest("metrics").collect()
            )
            contexts += [(over, base), (by, base), (two, by), (over1, base), (two1, by)]
    wall: dict[str, list[float]] = {name: [] for name in cases}
    cpu: dict[str, list[float]] = {name: [] for name in cases}
    last: dict[str, pl.DataFrame] = {}
    for _ in range(args.rounds):
        for name, fn in cases.items():
            start, start_cpu = time.perf_counter(), time.process_time()
            last[name] = fn()
            wall[name].append(time.perf_counter() - start)
            cpu[name].append(time.process_time() - start_cpu)
    diffs = {}
    five: list[tuple[str, list[float], list[float], str]] = []
    alone: list[tuple[str, list[float], list[float], str]] = []
    first = next(iter(cases))
    five.append((first, wall[first], cpu[first], ""))
    for ties in prk.TIE_POLICIES:
        ev, ex = (
            f"evaluate(per_user=True), ties={ties!r}",
            f"group_by('user').agg(5 expressions), ties={ties!r}",
        )
        st = f"group_by('user').agg(evaluate_expr(5)), ties={ties!r}"
        diffs[ties] = max(
            difference(last[ev], last[ex], METRICS), difference(last[ev], last[st], METRICS)
        )
        five.append((ev, wall[ev], cpu[ev], ""))
        five.append((ex, wall[ex], cpu[ex], _ratio(wall, cpu, ex, ev)))
        five.append((st, wall[st], cpu[st], _ratio(wall, cpu, st, ev)))
        for metric in [] if args.no_per_metric else METRICS:
            ev1, ex1 = f"{metric}: evaluate, ties={ties!r}", f"{metric}: expression, ties={ties!r}"
            diffs[ties] = max(diffs[ties], difference(last[ev1], last[ex1], [metric]))
            alone.append((ex1, wall[ex1], cpu[ex1], _ratio(wall, cpu, ex1, ev1)))
    around = [(name, wall[name], cpu[name], _ratio(wall, cpu, name, ref)) for name, ref in contexts]
    tables = (
        [_table(five)] + ([_table(alone)] if alone else []) + ([_table(around)] if around else [])
    )
    print("\n\n".join(tables))
    print("max |expression - evaluate| per policy:", diffs)
    if args.record or args.record_append:
        rev = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False
        ).stdout.strip()
        load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
        section = [
            f"## {info['rows']:,} rows",
            "",
            f"- date: {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC; revision {rev}",
            f"- machine: {os.cpu_count()} cores (shared with other jobs), {platform.platform()}; "
            f"polars {pl.__version__} ({pl.thread_pool_size()} threads); load at end {load}",
            f"- data: {info['rows']:,} rows = {info['users']:,} users x 100, tied share of "
            f"recommended rows {info['tied_share']:.1%}",
            f"- metrics: {', '.join(METRICS)}; median of {args.rounds} interleaved rounds",
            f"- same numbers: max per-user |expression - evaluate| = "
            f"{max(diffs.values()):.1e} over every tie policy",
            "",
            *(part for table in tables for part in (table, "")),
        ]
        old = RESULTS.read_text("utf-8") if RESULTS.exists() else ""
        findings = old[old.index(FINDINGS) :] if FINDINGS in old else ""
        if args.record_append and old:
            head = old[: old.index(FINDINGS)] if findings else old
            text = head.rstrip("\n") + "\n\n" + "\n".join(section)
        else:
            text = "\n".join(
                [
                    "# Stand-alone metric expressions: benchmark results",
                    "",
                    "Generated by `python benchmarks/bench_expr.py --record` (issue 26); "
                    "the findings below are written by hand.",
                    "",
                    *section,
                ]
            )
        RESULTS.write_text(
            text.rstrip("\n") + "\n" + ("\n" + findings if findings else ""), "utf-8"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
