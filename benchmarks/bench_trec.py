"""trec_eval from files: polars_rankeval beside pytrec_eval and ranx.

Generates a TREC run (default 10k queries x 1,000 documents = 10M lines, tied scores
included) and graded qrels into a temporary directory (removed afterwards), then times
end to end (parsing + evaluation):

* ``polars_rankeval.trec_eval.trec_eval(qrels, run, ["all_trec"])``;
* pytrec_eval: ``parse_qrel`` / ``parse_run`` + ``RelevanceEvaluator`` over the same
  measures + per-query means;
* ranx: ``Qrels.from_file`` / ``Run.from_file`` + ``evaluate`` on the measures it has.

and checks that the numbers agree. Results are printed and, with ``--record``, written
to ``benchmarks/RESULTS_TREC.md``.

Usage: ``python benchmarks/bench_trec.py [--queries 10000] [--docs 1000] [--record]``.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from polars_rankeval.trec_eval import trec_eval

HERE = Path(__file__).parent
COMMON = {  # trec_eval name -> ranx name
    "map": "map",
    "P_10": "precision@10",
    "recall_100": "recall@100",
    "ndcg_cut_10": "ndcg@10",
    "recip_rank": "mrr",
}


def generate(tmp: Path, queries: int, docs: int, seed: int = 0) -> tuple[Path, Path]:
    """Write a run (scores with ties) and graded qrels; return their paths."""
    rng = np.random.default_rng(seed)
    n = queries * docs
    qid = np.repeat(np.arange(queries), docs)
    doc = rng.integers(0, 50 * docs, size=n)
    run = (
        pl.DataFrame({"q": qid, "d": doc, "s": np.round(rng.random(n), 3)})
        .unique(["q", "d"], keep="first")
        .with_columns(pl.col("s").rank("ordinal", descending=True).over("q").alias("r"))
        .select(
            pl.format("{}", pl.col("q")).alias("qid"), pl.lit("Q0").alias("q0"),
            pl.format("D{}", pl.col("d")).alias("docno"), "r", "s", pl.lit("bench").alias("tag"),
        )
    )  # fmt: skip
    judged = run.group_by("qid").head(docs // 5)
    qrels = judged.select(
        "qid",
        pl.lit("0").alias("iter"),
        "docno",
        pl.Series("rel", rng.choice([0, 0, 0, 1, 1, 2, 3], size=judged.height)),
    )
    run_path, qrels_path = tmp / "run.txt", tmp / "qrels.txt"
    run.write_csv(run_path, separator=" ", include_header=False)
    qrels.write_csv(qrels_path, separator=" ", include_header=False)
    return qrels_path, run_path


def timed(fn: Callable[[], Any], repeats: int) -> tuple[float, Any]:
    times, out = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), out


def run_prk(qrels: Path, run: Path) -> dict[str, float]:
    result = trec_eval(qrels, run, ["all_trec"])
    return {m: v for m, q, v, _ in result.iter_rows() if q == "all" and v is not None}


def run_pytrec(qrels: Path, run: Path) -> dict[str, float]:
    import pytrec_eval

    with qrels.open() as fq:
        q = pytrec_eval.parse_qrel(fq)
    with run.open() as fr:
        r = pytrec_eval.parse_run(fr)
    evaluator = pytrec_eval.RelevanceEvaluator(q, pytrec_eval.supported_measures)
    per_query = evaluator.evaluate(r)
    names = next(iter(per_query.values())).keys()
    means = {m: float(np.mean([v[m] for v in per_query.values()])) for m in names}
    # pytrec_eval's per-query gm_* values are logs: their mean is the log of the mean.
    return {m: float(np.exp(v)) if m.startswith("gm_") else v for m, v in means.items()}


def run_ranx(qrels: Path, run: Path) -> dict[str, float]:
    from ranx import Qrels, Run, evaluate

    q = Qrels.from_file(str(qrels), kind="trec")
    r = Run.from_file(str(run), kind="trec")
    scores = evaluate(q, r, list(COMMON.values()))
    return {trec: float(scores[name]) for trec, name in COMMON.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--docs", type=int, default=1_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--record", action="store_true")
    parser.add_argument("--no-competitors", action="store_true")
    args = parser.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="prk-bench-trec-"))
    try:
        start = time.perf_counter()
        qrels, run = generate(tmp, args.queries, args.docs)
        lines = sum(1 for _ in run.open())
        print(f"generated {lines:,} run lines in {time.perf_counter() - start:.1f} s")
        rows: list[tuple[str, float]] = []
        t_prk, prk = timed(lambda: run_prk(qrels, run), args.repeats)
        rows.append(("polars_rankeval trec_eval all_trec (files -> numbers)", t_prk))
        checks: list[str] = []
        if not args.no_competitors:
            for label, fn in (
                ("pytrec_eval all measures (parse + evaluate + means)", run_pytrec),
                ("ranx 5 measures (from_file + evaluate)", run_ranx),
            ):
                try:
                    seconds, theirs = timed(lambda fn=fn: fn(qrels, run), 1)  # type: ignore[misc]
                except ImportError as exc:
                    print(f"skipped {label}: {exc}")
                    continue
                rows.append((label, seconds))
                # Means only: trec_eval sums the counts (num_*) in its "all" line.
                shared = [m for m in theirs if m in prk and not m.startswith("num_")]
                diffs = {m: abs(prk[m] - theirs[m]) for m in shared}
                worst = sorted(diffs, key=diffs.__getitem__, reverse=True)[:3]
                checks.append(
                    f"{label.split()[0]}: {len(shared)} shared averaged measures, max abs "
                    f"difference of means {max(diffs.values(), default=float('nan')):.1e} "
                    f"(largest: {', '.join(f'{m} {diffs[m]:.1e}' for m in worst)})"
                )
        table = ["| what | median s | prk speed-up |", "|---|---|---|"]
        for label, seconds in rows:
            table.append(f"| {label} | {seconds:.2f} | {seconds / t_prk:.1f}x |")
        text = "\n".join(table)
        print(text)
        print("\n".join(checks))
        if args.record:
            header = (
                "# trec_eval benchmark\n\nGenerated by `python benchmarks/bench_trec.py "
                "--record`.\n\n"
                f"- {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
                f"polars {pl.__version__}\n"
                f"- {lines:,} run lines ({args.queries:,} queries x {args.docs:,} docs, "
                "tied scores), graded qrels (20% of each list judged)\n"
                "- end to end: parsing the files and evaluating; ranx is ties-unaware and "
                "computes 5 measures only; the targets: >= 5x faster than pytrec_eval\n\n"
            )
            target = HERE / "RESULTS_TREC.md"
            # Keep the hand-written notes across re-recordings.
            previous = target.read_text() if target.exists() else ""
            notes = previous[previous.find("## Notes") :] if "## Notes" in previous else ""
            body = header + text + "\n\n" + "\n".join(f"- {c}" for c in checks) + "\n"
            target.write_text(body + ("\n" + notes if notes else ""))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
