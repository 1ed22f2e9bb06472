"""Reproducibility measures at 1M topics, and beside repro_eval where it can run.

1. **1,000,000 topics x 20 documents, an original and a reproduced run** (40M rows,
   integer ids, numpy seed 0: scores in hundredths, so many ties; the reproduced run
   perturbs the scores and swaps a tenth of the documents; 5 judgments per topic):
   ``prk.reproducibility(metrics=["map", "ndcg@10"])`` on LazyFrames: KTU and RBO of
   every topic, RMSE, nRMSE and the paired t-test. Checked: KTU and RBO of 500 random
   topics equal repro_eval's own ``KTU`` and ``RBO`` functions on those topics.
2. **Beside repro_eval** on TREC files it can read (2,000 topics x 100 documents, the
   four runs of a baseline and an advanced pair): the whole ``RpdEvaluator`` sequence
   (load, trim, evaluate its ~60 trec_eval measures, KTU, RBO, RMSE, nRMSE, ER,
   DeltaRI, t-tests) against ``prk.reproducibility`` from the same files with 40
   trec_eval measures (``map``, ``r_precision``, ``bpref``, ``mrr``, ``ndcg`` and
   ``precision``, ``recall``, ``ndcg``, ``map`` at 5 .. 1000); and the document
   ordering alone (repro_eval: load, trim, ``ktu()``, ``rbo()``; here with one
   metric). Interleaved, each call in a fresh process (its own peak RSS); the
   numbers are compared (KTU, RBO, RMSE and p-values to 1e-9).

Reported: wall and CPU seconds and the peak RSS of each call's process. Data are
generated on the fly (the TREC files of part 2 in a temporary directory).

Usage::

    python benchmarks/bench_repro.py            # 1M topics; 2,000 beside repro_eval
    python benchmarks/bench_repro.py --quick    # 100k topics; 300 beside repro_eval
    python benchmarks/bench_repro.py --record   # also write RESULTS_REPRO.md
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

HERE = Path(__file__).resolve().parent
CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
METRICS = [
    "map",
    "r_precision",
    "bpref",
    "mrr",
    "ndcg",
    *(f"{name}@{k}" for name in ("precision", "recall", "ndcg", "map") for k in CUTOFFS),
]
REPEATS = 3


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def runs(
    n_topics: int, depth: int, *, seed: int = 0, baseline: bool = True
) -> dict[str, pl.DataFrame]:
    """Original and reproduced runs of an advanced and a baseline system, and qrels.

    Document ``3 j + r`` (r in 0..2) fills slot j of a topic: the ids are distinct
    within a topic without a per-topic draw. Scores in hundredths (ties).
    """
    rng = np.random.default_rng(seed)
    topics = np.repeat(np.arange(n_topics, dtype=np.int64), depth)
    slot = np.tile(np.arange(depth, dtype=np.int64), n_topics)
    out: dict[str, pl.DataFrame] = {}
    systems = (("advanced", 1.0), ("baseline", 0.6)) if baseline else (("advanced", 1.0),)
    for system, quality in systems:
        items = 3 * slot + rng.integers(0, 3, topics.size)
        score = np.round(rng.random(topics.size) + quality * (slot < 10) * 0.3, 2)
        swapped = rng.random(topics.size) < 0.1
        rep_items = np.where(swapped, 3 * slot + (items - 3 * slot + 1) % 3, items)
        rep_score = np.round(score + rng.normal(0.0, 0.05, topics.size), 2)
        out[f"{system}/original"] = pl.DataFrame({"user": topics, "item": items, "score": score})
        out[f"{system}/reproduced"] = pl.DataFrame(
            {"user": topics, "item": rep_items, "score": rep_score}
        )
    judged = np.repeat(np.arange(n_topics, dtype=np.int64), 5)
    out["qrels"] = pl.DataFrame(
        {
            "user": judged,
            "item": 3 * np.tile(np.arange(0, 10, 2, dtype=np.int64), n_topics)
            + rng.integers(0, 3, judged.size),
            "relevance": rng.integers(0, 3, judged.size),
        }
    ).unique(["user", "item"])
    return out


def write_trec(data: dict[str, pl.DataFrame], root: Path) -> dict[str, Path]:
    """TREC files of the runs (each topic by descending score) and the qrels."""
    paths = {}
    for name, frame in data.items():
        path = root / name.replace("/", "_")
        item = ("d" + pl.col("item").cast(pl.String)).alias("item")
        text = frame.select(pl.col("user").cast(pl.String), item)
        if name == "qrels":
            text.with_columns(frame["relevance"]).select(
                "user", pl.lit("0").alias("iter"), "item", "relevance"
            ).write_csv(path, separator=" ", include_header=False)
        else:
            (
                text.with_columns(frame["score"])
                .sort(["user", "score"], descending=[False, True])
                .select(
                    "user",
                    pl.lit("Q0").alias("q0"),
                    "item",
                    pl.int_range(1, pl.len() + 1).over("user").alias("rank"),
                    "score",
                    pl.lit("bench").alias("tag"),
                )
                .write_csv(path, separator=" ", include_header=False)
            )
        paths[name] = path
    return paths


# --------------------------------------------------------------------------- children
def child_large(n_topics: int, depth: int) -> dict[str, Any]:
    from repro_eval.measure.document_order import KTU, RBO

    import polars_rankeval as prk

    data = runs(n_topics, depth, baseline=False)
    orig, rep, qrels = data["advanced/original"], data["advanced/reproduced"], data["qrels"]
    rss_data = peak_rss_mb()
    cpu, start = time.process_time(), time.perf_counter()
    out = prk.reproducibility(
        orig.lazy(), rep.lazy(), qrels=qrels.lazy(), metrics=["map", "ndcg@10"]
    )
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    # KTU and RBO of 500 topics against repro_eval's functions (string ids sort as
    # text; these are integers, ordered as numbers by both).
    sample = np.random.default_rng(1).choice(n_topics, 500, replace=False)

    def nested(frame: pl.DataFrame) -> dict[str, dict[int, float]]:
        part = frame.filter(pl.col("user").is_in(sample)).sort(
            ["user", "score", "item"], descending=[False, True, True]
        )
        result: dict[str, dict[int, float]] = {}
        for user, item, score in part.iter_rows():
            result.setdefault(str(user), {})[item] = score
        return result

    ktu = KTU(nested(orig), nested(rep), per_topic=True)
    rbo = RBO(nested(orig), nested(rep), p=0.95, depth=1000, pbar=False, per_topic=True)
    mine = out.ordering_per_topic.filter(pl.col("user").is_in(sample))
    worst = max(
        max(abs(k - ktu[str(u)]), abs(r - rbo[str(u)]))
        for u, k, r in mine.select("user", "ktu", "rbo").iter_rows()
    )
    assert mine.height == 500
    assert worst < 1e-9, worst
    return {
        "wall": wall,
        "cpu": cpu,
        "rss": peak_rss_mb(),
        "rss_data": rss_data,
        "rows": orig.height + rep.height,
        "ordering": out.ordering.row(0, named=True),
        "effectiveness": out.effectiveness.select("metric", "rmse", "nrmse", "p_value").rows(),
        "checked": worst,
    }


def child_small(tool: str, part: str, root: Path) -> dict[str, Any]:
    warnings.simplefilter("ignore")
    paths = {p.name: p for p in root.iterdir()}
    # Each tool's imports first (and scipy's, for the t-tests): only the work is timed,
    # and each process holds one tool's modules.
    import scipy.stats  # noqa: F401

    if tool == "repro_eval":
        from repro_eval.Evaluator import RpdEvaluator
    else:
        import polars_rankeval as prk
        import polars_rankeval.analysis.reproducibility
        import polars_rankeval.api.evaluate

    cpu, start = time.process_time(), time.perf_counter()
    if tool == "repro_eval":
        ev = RpdEvaluator(
            qrels_orig_path=str(paths["qrels"]),
            run_b_orig_path=str(paths["baseline_original"]),
            run_a_orig_path=str(paths["advanced_original"]),
            run_b_rep_path=str(paths["baseline_reproduced"]),
            run_a_rep_path=str(paths["advanced_reproduced"]),
        )
        ev.trim()
        values: dict[str, Any] = {}
        if part == "all":
            ev.evaluate()
            rmse, ttest = ev.rmse(), ev.ttest()
            ev.nrmse(), ev.er(), ev.dri()
            values["rmse_ap"] = rmse["advanced"]["AP"]
            values["p_ap"] = ttest["advanced"]["AP"]
        values["ktu"] = ev.ktu()["advanced"]
        values["rbo"] = ev.rbo()["advanced"]
    else:

        def scan(name: str) -> pl.LazyFrame:
            return prk.trec.scan_run(paths[name]).select("user", "item", "score")

        out = prk.reproducibility(
            scan("advanced_original"),
            scan("advanced_reproduced"),
            qrels=prk.trec.scan_qrels(paths["qrels"]).select("user", "item", "relevance"),
            baseline_original=scan("baseline_original"),
            baseline_reproduced=scan("baseline_reproduced"),
            metrics=METRICS if part == "all" else ["map"],
        )
        advanced = out.ordering.row(0, named=True)
        values = {"ktu": advanced["ktu"], "rbo": advanced["rbo"]}
        if part == "all":
            ap = out.effectiveness.filter(
                (pl.col("run") == "advanced") & (pl.col("metric") == "map")
            ).row(0, named=True)
            values["rmse_ap"], values["p_ap"] = ap["rmse"], ap["p_value"]
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    return {"wall": wall, "cpu": cpu, "rss": peak_rss_mb(), "values": values}


def spawn(*args: str) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(HERE.parent)}
    done = subprocess.run(
        [sys.executable, __file__, "--child", *args],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    if done.returncode:
        raise RuntimeError(done.stderr)
    return json.loads(done.stdout.strip().splitlines()[-1])


# --------------------------------------------------------------------------- main
def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="100k topics; 300 beside")
    parser.add_argument("--record", action="store_true", help="write RESULTS_REPRO.md")
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        kind, *rest = args.child
        result = (
            child_large(int(rest[0]), int(rest[1]))
            if kind == "large"
            else child_small(kind, rest[0], Path(rest[1]))
        )
        print(json.dumps(result))
        return
    load = "/".join(f"{x:.1f}" for x in os.getloadavg())
    n_large, n_small = (100_000, 300) if args.quick else (1_000_000, 2_000)
    depth_large, depth_small = 20, 100

    large = spawn("large", str(n_large), str(depth_large))

    side: dict[tuple[str, str], list[dict[str, Any]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        write_trec(runs(n_small, depth_small, seed=2), Path(tmp))
        for _ in range(REPEATS):
            for part in ("all", "ordering"):
                for tool in ("ours", "repro_eval"):
                    side.setdefault((tool, part), []).append(spawn(tool, part, tmp))
    for part in ("all", "ordering"):
        ours, theirs = side["ours", part][0]["values"], side["repro_eval", part][0]["values"]
        for key, value in theirs.items():
            assert abs(ours[key] - value) < 1e-9, (part, key, ours[key], value)

    def median(tool: str, part: str, key: str) -> float:
        return statistics.median(r[key] for r in side[tool, part])

    rows = []
    for part, label in (
        ("all", f"all measures ({len(METRICS)} metrics here, ~60 in repro_eval)"),
        ("ordering", "document ordering (KTU, RBO)"),
    ):
        mine, ref = median("ours", part, "wall"), median("repro_eval", part, "wall")
        rows.append(
            f"| {label} | {mine:.2f} | {ref:.2f} | {ref / mine:.1f}x | "
            f"{median('ours', part, 'rss'):,.0f} | {median('repro_eval', part, 'rss'):,.0f} |"
        )
    ordering = large["ordering"]
    out = [
        "# Reproducibility measures: benchmark results",
        "",
        "Generated by `python benchmarks/bench_repro.py --record`.",
        "",
        f"- date: {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC",
        f"- machine: {platform.machine()}, {os.cpu_count()} cores, {platform.platform()}",
        f"- versions: Python {platform.python_version()}, polars {pl.__version__}, "
        f"numpy {np.__version__}",
        f"- load average at start: {load} (shared machine)",
        "",
        f"## {n_large:,} topics x {depth_large} documents, one run pair",
        "",
        "| call | rows | wall s | CPU s | peak RSS MB | RSS of the data MB |",
        "|---|---|---|---|---|---|",
        f"| reproducibility(metrics=['map', 'ndcg@10']), LazyFrames | {large['rows']:,} | "
        f"{large['wall']:.1f} | {large['cpu']:.1f} | {large['rss']:,.0f} | "
        f"{large['rss_data']:,.0f} |",
        "",
        f"Mean KTU {ordering['ktu']:.4f}, mean RBO {ordering['rbo']:.4f} over "
        f"{ordering['n_topics']:,} topics; KTU and RBO of 500 random topics equal repro_eval's "
        f"`KTU` and `RBO` functions (largest difference {large['checked']:.1e}).",
        "",
        "| metric | RMSE | nRMSE | p-value |",
        "|---|---|---|---|",
        *(f"| {m} | {r:.4f} | {n:.4f} | {p:.3g} |" for m, r, n, p in large["effectiveness"]),
        "",
        f"## Beside repro_eval: {n_small:,} topics x {depth_small} documents, 4 runs",
        "",
        f"Median of {REPEATS} interleaved runs, each in a fresh process (wall seconds,",
        "peak RSS MB of that process); the same TREC files; KTU, RBO, RMSE and the",
        "p-value of AP equal repro_eval's to 1e-9.",
        "",
        "| what | polars_rankeval s | repro_eval s | ratio | polars_rankeval MB | repro_eval MB |",
        "|---|---|---|---|---|---|",
        *rows,
        "",
    ]
    text = "\n".join(out)
    print(text)
    if args.record:
        (HERE / "RESULTS_REPRO.md").write_text(text)


if __name__ == "__main__":
    main()
