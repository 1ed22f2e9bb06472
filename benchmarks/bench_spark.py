"""Spark benchmark: ``polars_rankeval.api.spark.evaluate`` on a local Spark vs the Polars evaluate.

The data is the core benchmark's (``bench_core.make_data``: by default 100,000 users x
100 candidates = 10M rows, graded relevance, ties, 5% judged-but-not-recommended rows),
generated with numpy, written once to Parquet in a temporary directory (removed at the
end, also on error) and read by Spark; the Spark input is cached in memory before the
timings so that Spark and Polars both start from memory.

Measured, as the median of ``--repeats`` interleaved rounds, for {ndcg, map, mrr, precision,
recall}@10 with ``ties="expected"``:

1. the Polars ``prk.evaluate`` on the in-memory frame (validate=False / True);
2. ``prk_spark.evaluate`` summary (validate=False / True) and per-user values (written
   to Spark's ``noop`` sink, so every row is computed and nothing is collected);
3. the time split of one per-user pass: the kernel's own seconds, measured inside
   every ``applyInArrow`` call (Arrow -> Polars conversion, Polars ``evaluate``), against
   Spark's task time per stage (from the Spark UI's REST API: run time, shuffle bytes,
   shuffle write and fetch-wait times); the rest of the task time is Spark's own work
   (scan, shuffle, sort by bucket, JVM -> Arrow -> Python transfer);
4. ``--sweep``: the summary for several ``n_partitions``, as shipped (``repartition(n,
   bucket)`` then ``groupBy(bucket)``) and with a plain ``groupBy`` whose shuffle
   partitions adaptive query execution (AQE) coalesces;
5. same numbers: the Spark summary and per-user values against the Polars ones.

Usage::

    python benchmarks/bench_spark.py                  # 10M rows
    python benchmarks/bench_spark.py --users 10000    # 1M rows, quick
    python benchmarks/bench_spark.py --sweep --record # also rewrite RESULTS_SPARK.md
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_core import (  # noqa: E402
    describe_data,
    fmt_s,
    machine_info,
    make_data,
    markdown_table,
)

import polars_rankeval as prk  # noqa: E402
import polars_rankeval.api.spark as prk_spark  # noqa: E402
import polars_rankeval.engines.spark_ops as _spark_ops  # noqa: E402

METRICS: list[str] = ["ndcg@10", "map@10", "mrr@10", "precision@10", "recall@10"]
RESULTS_PATH = HERE / "RESULTS_SPARK.md"
NOTES_START = "<!-- notes:start -->"
NOTES_END = "<!-- notes:end -->"


# --------------------------------------------------------------------------- spark
def start_spark(args: argparse.Namespace) -> Any:
    """A local session; driver memory and the local IP must be set before the JVM starts."""
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    from pyspark.sql import SparkSession

    session = (
        SparkSession.builder.master(f"local[{args.cores}]")
        .appName("polars-rankeval-bench")
        .config("spark.driver.memory", args.driver_memory)
        .config("spark.sql.shuffle.partitions", str(args.shuffle_partitions))
        .config("spark.ui.showConsoleProgress", "false")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    return session


class StageMetrics:
    """Task metrics of the stages of the jobs run under one job group (Spark UI REST API)."""

    def __init__(self, session: Any) -> None:
        self.sc = session.sparkContext
        self.url = f"{self.sc.uiWebUrl}/api/v1/applications/{self.sc.applicationId}"

    def get(self, path: str) -> Any:
        with urllib.request.urlopen(f"{self.url}/{path}", timeout=30) as response:
            return json.load(response)

    def stages(self, group: str) -> list[dict[str, Any]]:
        # The listener bus is asynchronous: wait until the group's jobs are all done.
        for _ in range(100):
            jobs = [j for j in self.get("jobs") if j.get("jobGroup") == group]
            if jobs and all(j["status"] != "RUNNING" for j in jobs):
                break
            time.sleep(0.1)
        ids = sorted({s for j in jobs for s in j["stageIds"]})
        out = []
        for stage_id in ids:
            for attempt in self.get(f"stages/{stage_id}"):
                if attempt["status"] == "COMPLETE":
                    out.append(attempt)
        return out


@dataclass
class Row:
    key: str
    label: str
    times: list[float] = field(default_factory=list)

    @property
    def median(self) -> float:
        return statistics.median(self.times)


def timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def spark_plan(sdf: Any, **kwargs: Any) -> prk_spark.Plan:
    """The driver-side plan of ``prk_spark.evaluate`` (for the instrumented pass)."""
    options = {
        "user": "user",
        "item": "item",
        "score": None,
        "relevance": "relevance",
        "rank": None,
        "ties": "expected",
        "by": None,
        "per_user": True,
        "users": "truth",
        "empty": "skip",
        "n_partitions": None,
        "options": {},
        **kwargs,
    }
    return prk_spark.Plan.create(sdf, METRICS, **options)


def split_run(session: Any, sdf: Any, ui: StageMetrics, run: int) -> dict[str, Any]:
    """One per-user pass with the kernel timing columns; task time per stage."""
    from pyspark.sql import functions as sf

    plan = spark_plan(sdf)
    values = prk_spark.per_user_values(plan.input_rows(sdf), plan, side=True)
    duplicates, convert, polars_s, check_s = (sf.col(c) for c in prk_spark.SIDE_COLUMNS)
    group = f"split-{run}"
    session.sparkContext.setJobGroup(group, "instrumented per-user pass")
    start = time.perf_counter()
    found = (
        values.agg(
            sf.sum(convert).alias("convert"),
            sf.sum(polars_s).alias("polars"),
            sf.sum(check_s).alias("check"),
            sf.count(duplicates).alias("calls"),
            sf.count_if(duplicates.isNull()).alias("users"),
        )
        .collect()[0]
        .asDict()
    )
    wall = time.perf_counter() - start
    session.sparkContext.setLocalProperty("spark.jobGroup.id", None)
    stages = [
        {
            "id": s["stageId"],
            "tasks": s["numTasks"],
            "run_s": s["executorRunTime"] / 1000,
            "cpu_s": s["executorCpuTime"] / 1e9,
            "gc_s": s["jvmGcTime"] / 1000,
            "shuffle_write_mb": s["shuffleWriteBytes"] / 1e6,
            "shuffle_write_s": s["shuffleWriteTime"] / 1e9,
            "shuffle_read_mb": s["shuffleReadBytes"] / 1e6,
            "fetch_wait_s": s["shuffleFetchWaitTime"] / 1000,
            "input_mb": s["inputBytes"] / 1e6,
            "memory_mb": s["memoryBytesSpilled"] / 1e6,
        }
        for s in ui.stages(group)
    ]
    return {"wall": wall, **found, "stages": stages, "partitions": plan.n_partitions}


def group_by_only(inputs: Any, user: str, n: int) -> Any:
    """``by_bucket`` without the repartition: ``groupBy(pmod(xxhash64(user), n))``."""
    from pyspark.sql import functions as sf

    return inputs.groupBy(sf.pmod(sf.xxhash64(sf.col(user)), sf.lit(n)))


def sweep_point(session: Any, sdf: Any, ui: StageMetrics, n: int, variant: str) -> dict[str, Any]:
    """One timed summary with ``n_partitions=n`` (after a warm-up), and its kernel stage."""

    def run() -> object:
        return prk_spark.evaluate(sdf, METRICS, validate=False, n_partitions=n).toArrow()

    run()
    group = f"sweep-{variant}-{n}"
    session.sparkContext.setJobGroup(group, "sweep")
    seconds = timed(run)
    kernel_stage = max(ui.stages(group), key=lambda s: s["executorRunTime"])
    return {
        "n_partitions": n,
        "variant": variant,
        "seconds": seconds,
        "tasks": kernel_stage["numTasks"],
    }


# --------------------------------------------------------------------------- reporting
@dataclass
class Report:
    args: argparse.Namespace
    info: dict[str, Any]
    versions: dict[str, str]
    data: dict[str, Any]
    rows: dict[str, Row]
    split: dict[str, Any]
    sweep: list[dict[str, Any]]
    same: dict[str, float]
    load: tuple[tuple[float, float, float], tuple[float, float, float]]
    setup_s: dict[str, float]

    def main_table(self) -> str:
        base = self.rows["polars_noval"].median
        out = []
        for row in self.rows.values():
            out.append(
                [
                    row.label,
                    fmt_s(row.median),
                    ", ".join(fmt_s(t) for t in row.times),
                    f"{row.median / base:.1f}x",
                ]
            )
        return markdown_table(["what", "median s", "runs s", "vs Polars (validate=False)"], out)

    def split_table(self) -> str:
        s = self.split
        stages = s["stages"]
        task = sum(st["run_s"] for st in stages)
        kernel_stage = max(stages, key=lambda st: st["run_s"])
        kernel = s["convert"] + s["polars"] + s["check"]

        def row(label: str, seconds: float) -> list[str]:
            return [label, fmt_s(seconds), f"{seconds / task:.0%}"]

        rows = []
        for st in stages:
            if st is not kernel_stage:
                what = "scan + shuffle write" if st["shuffle_write_mb"] >= 1 else "final count"
                rows.append(row(f"Spark, stage {st['id']}: {what}", st["run_s"]))
                continue
            rows += [
                row(
                    f"Spark, stage {st['id']}: shuffle read, sort by bucket, rows -> Arrow, "
                    "to Python and back",
                    st["run_s"] - kernel,
                ),
                row(f"kernel (stage {st['id']}): Arrow -> Polars", s["convert"]),
                row(f"kernel (stage {st['id']}): Polars evaluate", s["polars"]),
                row(
                    f"kernel (stage {st['id']}): duplicate count (validate=True only)",
                    s["check"],
                ),
            ]
        rows += [
            row("task time, all stages (both cores)", task),
            ["wall time of the pass", fmt_s(s["wall"]), ""],
        ]
        table = markdown_table(["time split of one per-user pass", "task-seconds", "share"], rows)
        header = [
            "stage",
            "tasks",
            "run s",
            "CPU s",
            "GC s",
            "shuffle write MB",
            "shuffle write s",
            "shuffle read MB",
            "fetch wait s",
        ]
        stage_rows = [
            [
                str(st["id"]),
                str(st["tasks"]),
                fmt_s(st["run_s"]),
                fmt_s(st["cpu_s"]),
                fmt_s(st["gc_s"]),
                f"{st['shuffle_write_mb']:.0f}",
                fmt_s(st["shuffle_write_s"]),
                f"{st['shuffle_read_mb']:.0f}",
                fmt_s(st["fetch_wait_s"]),
            ]
            for st in stages
        ]
        return table + "\n\n" + markdown_table(header, stage_rows)

    def sweep_table(self) -> str:
        rows = [
            [str(r["n_partitions"]), r["variant"], str(r["tasks"]), fmt_s(r["seconds"])]
            for r in self.sweep
        ]
        header = ["n_partitions", "grouping", "tasks of the kernel stage", "summary s"]
        return markdown_table(header, rows)

    def same_table(self) -> str:
        rows = [[k, f"{v:.1e}"] for k, v in self.same.items()]
        return markdown_table(["Spark vs Polars", "max abs diff"], rows)

    def interpretation(self) -> list[str]:
        r, s = self.rows, self.split
        task = sum(st["run_s"] for st in s["stages"])
        kernel = s["convert"] + s["polars"] + s["check"]
        spark_s, polars_s = r["spark_noval"].median, r["polars_noval"].median
        out = [
            f"Spark (local[{self.args.cores}]) takes {spark_s / polars_s:.1f}x the in-process "
            f"Polars evaluate for the summary ({fmt_s(spark_s)} s vs {fmt_s(polars_s)} s, "
            "validate=False).",
            f"Of the task time of a per-user pass ({fmt_s(task)} task-seconds over "
            f"{self.args.cores} cores), the Polars kernel is {kernel / task:.0%} "
            f"({fmt_s(s['polars'])} s evaluate + {fmt_s(s['convert'])} s Arrow -> Polars + "
            f"{fmt_s(s['check'])} s counting duplicates, {s['calls']} calls); the other "
            f"{(task - kernel) / task:.0%} is Spark's own work.",
        ]
        if self.sweep:
            best = min(self.sweep, key=lambda x: x["seconds"])
            worst = max(self.sweep, key=lambda x: x["seconds"])
            out.append(
                f"Partitioning: fastest n_partitions={best['n_partitions']} "
                f"({best['variant']}, {fmt_s(best['seconds'])} s), slowest "
                f"n_partitions={worst['n_partitions']} ({worst['variant']}, "
                f"{fmt_s(worst['seconds'])} s)."
            )
        return out

    def render(self, notes: str) -> str:
        i, d, a, v = self.info, self.data, self.args, self.versions
        load0, load1 = self.load
        lines = [
            "# Spark benchmark results",
            "",
            "Generated by `python benchmarks/bench_spark.py "
            + " ".join(sys.argv[1:]).strip()
            + "`; do not edit outside the notes block (it is kept on re-recording).",
            "",
            f"- date: {i['date']}",
            f"- machine: {i['cpu']}, {i['cores']} cores, {i['ram_gib']} GiB RAM, {i['platform']}",
            f"- load average (1/5/15 min) at start {load0[0]:.1f}/{load0[1]:.1f}/{load0[2]:.1f}, "
            f"at end {load1[0]:.1f}/{load1[1]:.1f}/{load1[2]:.1f}",
            f"- polars_rankeval revision: {i['revision']}",
            f"- versions: Python {i['python']}, polars {i['polars']} "
            f"({i['polars_threads']} threads in the driver), pyarrow {v['pyarrow']}, "
            f"pyspark {v['pyspark']}, Java {v['java']}",
            f"- Spark: `local[{a.cores}]`, driver memory {a.driver_memory}, "
            f"spark.sql.shuffle.partitions={a.shuffle_partitions}, adaptive query execution on "
            f"(Spark's default); n_partitions default ({self.split['partitions']})",
            f"- data: {d['rows']:,} rows = {d['users']:,} users x {a.candidates} candidates "
            f"(seed {a.seed}, bench_core.make_data), {d['size_mb']:.0f} MB in Polars; "
            f"{d['users_without_relevant']:,} users without a relevant item; "
            f"{d['tied_share']:.1%} of recommended rows tied; Parquet written in "
            f"{fmt_s(self.setup_s['write'])} s, cached in Spark in "
            f"{fmt_s(self.setup_s['cache'])} s (not timed below)",
            f"- median of {a.repeats} interleaved rounds (every row once per round), after "
            "one untimed warm-up per row; metrics "
            f"{', '.join(METRICS)}, ties='expected'",
            "",
            "## Timings",
            "",
            self.main_table(),
            "",
            "## Where the time goes",
            "",
            self.split_table(),
            "",
            "Kernel seconds are measured inside every `applyInArrow` call "
            "(`time.perf_counter()` around `pl.from_arrow`, `prk.evaluate` and the "
            "duplicate count that validate=True adds) and returned on one side row per call "
            "(`prk_spark.SIDE_COLUMNS`), then summed by Spark. "
            "Task times come from the Spark UI's REST API for the stages of that one job. "
            "Both are task-seconds: with 2 tasks in parallel they add up to about twice the "
            "wall time. 'Everything else' is the scan of the cached input, the shuffle write "
            "and read, the sort by bucket that `groupBy(...).applyInArrow` requires, the "
            "conversion of rows to Arrow in the JVM, the transfer to the Python worker and "
            "back, the cast of the result and the final count.",
            "",
        ]
        if self.sweep:
            lines += ["## Partitioning", "", self.sweep_table(), ""]
        lines += [
            "## Same numbers",
            "",
            self.same_table(),
            "",
            "## Interpretation (generated)",
            "",
            *[f"- {x}" for x in self.interpretation()],
            "",
            NOTES_START,
            notes.strip("\n"),
            NOTES_END,
            "",
        ]
        return "\n".join(lines)


def existing_notes(path: Path) -> str:
    if path.exists():
        text = path.read_text()
        if NOTES_START in text and NOTES_END in text:
            return text.split(NOTES_START, 1)[1].split(NOTES_END, 1)[0]
    return "\n## Notes\n\n(hand-written observations go here; kept when re-recording)\n"


def versions(session: Any) -> dict[str, str]:
    import pyarrow
    import pyspark

    java = session.sparkContext._jvm.java.lang.System.getProperty("java.version")
    return {"pyspark": pyspark.__version__, "pyarrow": pyarrow.__version__, "java": str(java)}


def max_abs_diff(a: pl.DataFrame, b: pl.DataFrame, columns: list[str]) -> float:
    return max(
        (a.get_column(c) - b.get_column(c)).abs().max() or 0.0  # type: ignore[operator]
        for c in columns
    )


# --------------------------------------------------------------------------- main
def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--users", type=int, default=100_000, help="users (default 100000)")
    parser.add_argument("--candidates", type=int, default=100, help="candidates per user")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs per row (median)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cores", type=int, default=2, help="local[N]")
    parser.add_argument("--driver-memory", default="8g")
    parser.add_argument("--shuffle-partitions", type=int, default=8, help="and n_partitions")
    parser.add_argument("--sweep", action="store_true", help="n_partitions x AQE sweep")
    parser.add_argument("--sweep-partitions", default="2,8,64,512")
    parser.add_argument("--record", action="store_true", help="rewrite RESULTS_SPARK.md")
    parser.add_argument("--results", type=Path, default=RESULTS_PATH)
    return parser.parse_args(argv)


def log(message: str) -> None:
    print(message, flush=True)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    load0 = os.getloadavg()
    info = machine_info()
    log(f"machine: {info}")
    df = make_data(args.users, args.candidates, args.seed)
    data = describe_data(df)
    log(f"data: {data}")
    session = start_spark(args)
    from pyspark import StorageLevel

    ui = StageMetrics(session)
    setup: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="prk-bench-spark-") as tmp:
        path = Path(tmp) / "data.parquet"
        setup["write"] = timed(lambda: df.write_parquet(path))
        sdf = session.read.parquet(str(path)).persist(StorageLevel.MEMORY_ONLY)
        setup["cache"] = timed(sdf.count)
        log(f"setup: {setup}")

        rows: dict[str, Row] = {}
        cases: list[tuple[str, str, Callable[[], object]]] = [
            (
                "polars_noval",
                "Polars `prk.evaluate`, validate=False (in-process, 2 threads)",
                lambda: prk.evaluate(df, METRICS, validate=False),
            ),
            (
                "polars_val",
                "Polars `prk.evaluate`, validate=True",
                lambda: prk.evaluate(df, METRICS),
            ),
            (
                "spark_noval",
                "Spark summary, validate=False",
                lambda: prk_spark.evaluate(sdf, METRICS, validate=False).toArrow(),
            ),
            (
                "spark_val",
                "Spark summary, validate=True (row-check job + duplicates counted in the kernel)",
                lambda: prk_spark.evaluate(sdf, METRICS).toArrow(),
            ),
            (
                "spark_per_user",
                "Spark per-user values, validate=False (`noop` sink)",
                lambda: (
                    prk_spark.evaluate(sdf, METRICS, validate=False, per_user=True)
                    .write.format("noop")
                    .mode("overwrite")
                    .save()
                ),
            ),
        ]
        for key, label, fn in cases:
            log(f"{label}: warm-up ...")
            fn()
            rows[key] = Row(key, label)
        # Interleaved rounds: a slow spell of the shared machine hits every row alike.
        for round_no in range(1, args.repeats + 1):
            log(f"round {round_no}/{args.repeats} (load {os.getloadavg()[0]:.1f})")
            for key, label, fn in cases:
                rows[key].times.append(timed(fn))
                log(f"  {label}: {rows[key].times[-1]:.3f} s")

        log("instrumented per-user pass ...")
        split_run(session, sdf, ui, 0)  # warm-up
        splits = [split_run(session, sdf, ui, run) for run in range(1, args.repeats + 1)]
        split = sorted(splits, key=lambda s: s["wall"])[len(splits) // 2]
        log(json.dumps(split, indent=1))

        sweep: list[dict[str, Any]] = []
        if args.sweep:
            shipped = _spark_ops.by_bucket
            for variant in ("repartition", "groupBy only"):
                # "groupBy only" drops the repartition by bucket (the grouping is built on
                # the driver, so patching it here changes the plan): AQE then coalesces.
                if variant != "repartition":
                    _spark_ops.by_bucket = group_by_only
                try:
                    for n in [int(x) for x in args.sweep_partitions.split(",")]:
                        sweep.append(sweep_point(session, sdf, ui, n, variant))
                        log(f"  sweep {sweep[-1]}")
                finally:
                    _spark_ops.by_bucket = shipped

        log("same numbers ...")
        polars_summary = prk.evaluate(df, METRICS, validate=False)
        spark_summary = pl.from_arrow(prk_spark.evaluate(sdf, METRICS).toArrow())
        polars_users = prk.evaluate(df, METRICS, per_user=True, validate=False)
        spark_users = pl.from_arrow(
            prk_spark.evaluate(sdf, METRICS, per_user=True, validate=False).toArrow()
        )
        assert isinstance(spark_summary, pl.DataFrame)
        assert isinstance(spark_users, pl.DataFrame)
        spark_users = spark_users.sort("user")
        if spark_users.get_column("user").equals(polars_users.get_column("user")):
            user_diff = max_abs_diff(spark_users, polars_users, METRICS)
        else:
            user_diff = float("inf")
        same = {
            "summary means": max_abs_diff(spark_summary, polars_summary, METRICS),
            "n_users, n_skipped": max_abs_diff(
                spark_summary, polars_summary, ["n_users", "n_skipped"]
            ),
            f"per-user values ({polars_users.height:,} users)": user_diff,
        }
        log(f"same: {same}")
        version_info = versions(session)
        sdf.unpersist()
    session.stop()

    report = Report(
        args=args,
        info=info,
        versions=version_info,
        data=data,
        rows=rows,
        split=split,
        sweep=sweep,
        same=same,
        load=(load0, os.getloadavg()),
        setup_s=setup,
    )
    print()
    print(report.main_table())
    print()
    print(report.split_table())
    if sweep:
        print()
        print(report.sweep_table())
    print()
    print(report.same_table())
    print()
    for sentence in report.interpretation():
        print(sentence)
    if args.record:
        args.results.write_text(report.render(existing_notes(args.results)))
        log(f"\nwrote {args.results}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
