"""Fusion beside ranx: prk.fuse and prk.optimize_fusion against ranx.fuse / optimize_fusion.

Data, generated on the fly: ``--lines`` lines in all, split over 2, 5 and 10 runs; each
run ranks 100 items (of a catalog of 200) per query, with scores rounded to 3 decimals
(ties), so a query's lists overlap partly. Both libraries get their runs already
built (Polars DataFrames; ranx Runs, built once beforehand, not timed); timed is the
fusion into a materialised result (``prk.fuse`` returns a DataFrame; ``ranx.fuse`` a
Run). Rounds are interleaved (ours, ranx, ours, ...) in one process; the table shows the
median. ``optimize_fusion``: RBC over 99 values of phi (0.01 .. 0.99) on two runs,
evaluated with ndcg@10 (ours also runs its 5-fold cross-validated choice).

Usage::

    python benchmarks/bench_fusion.py --lines 1000000 --rounds 3
    python benchmarks/bench_fusion.py --lines 10000000 --rounds 1 --record
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

import polars_rankeval as prk

PER_QUERY = 100
CATALOG = 200


def make_runs(lines: int, n_runs: int, seed: int = 0) -> dict[str, pl.DataFrame]:
    rng = np.random.default_rng(seed)
    n_queries = max(1, lines // (n_runs * PER_QUERY))
    runs = {}
    for r in range(n_runs):
        items = np.argsort(rng.random((n_queries, CATALOG)), axis=1)[:, :PER_QUERY]
        runs[f"run{r}"] = pl.DataFrame(
            {
                "user": np.repeat(np.arange(n_queries), PER_QUERY).astype(str),
                "item": items.ravel().astype(str),
                "score": np.round(rng.random(n_queries * PER_QUERY), 3),
            }
        )
    return runs


def make_qrels(runs: dict[str, pl.DataFrame], seed: int = 1) -> pl.DataFrame:
    first = next(iter(runs.values()))
    rng = np.random.default_rng(seed)
    picked = first.sample(fraction=0.1, seed=seed)
    return picked.select("user", "item").with_columns(
        relevance=pl.Series(rng.integers(1, 3, picked.height))
    )


def to_ranx(frame: pl.DataFrame):  # type: ignore[no-untyped-def]
    import ranx

    return ranx.Run.from_df(
        frame.to_pandas(), q_id_col="user", doc_id_col="item", score_col="score"
    )


def timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--lines", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--runs", type=int, nargs="+", default=[2, 5, 10])
    parser.add_argument("--optimize-lines", type=int, default=200_000)
    parser.add_argument(
        "--skip-ranx-above",
        type=int,
        default=10**9,
        help="leave ranx out when lines x runs exceeds this",
    )
    parser.add_argument(
        "--skip-optimize",
        action="store_true",
        help="time fuse only (the 10M-line run: optimize is timed at 1M)",
    )
    parser.add_argument("--record", action="store_true")
    args = parser.parse_args()
    import ranx

    # Warm-up on small runs: numba compiles ranx's kernels on first call (not timed).
    small = make_runs(2_000, 2)
    small_ranx = [to_ranx(f) for f in small.values()]
    for method, ranx_name in (
        ("rrf", "rrf"),
        ("wsum", "wsum"),
        ("comb_mnz", "mnz"),
        ("rbc", "rbc"),
    ):
        prk.fuse(small, method=method)
        extra = (
            {"weights": [1.0, 1.0]}
            if method == "wsum"
            else ({"phi": 0.5} if method == "rbc" else {})
        )
        for norm in ("min-max", "zmuv"):
            ranx.fuse(small_ranx, norm=norm, method=ranx_name, params=extra)
    small_qrels = make_qrels(small)
    warm: dict[str, dict[str, int]] = {}
    for u, i, r in small_qrels.iter_rows():
        warm.setdefault(u, {})[i] = r
    small_ranx = [to_ranx(f.filter(pl.col("user").is_in(list(warm)))) for f in small.values()]
    ranx.optimize_fusion(
        ranx.Qrels(warm),
        small_ranx,
        method="rbc",
        metric="ndcg@10",
        show_progress=False,
        min_phi=0.5,
        max_phi=0.5,
        step=0.01,
    )
    rows = []
    for n_runs in args.runs:
        runs = make_runs(args.lines, n_runs)
        with_ranx = args.lines <= args.skip_ranx_above
        theirs = [to_ranx(f) for f in runs.values()] if with_ranx else []
        for method, norm in (("rrf", "min-max"), ("wsum", "min-max"), ("comb_mnz", "zmuv")):
            ranx_name = {"comb_mnz": "mnz"}.get(method, method)
            ours_t, ranx_t = [], []
            params: dict = {"weights": [1.0] * n_runs} if method == "wsum" else {}
            for _ in range(args.rounds):
                ours_t.append(timed(lambda m=method, n=norm, r=runs: prk.fuse(r, method=m, norm=n)))
                if with_ranx:
                    ranx_t.append(
                        timed(
                            lambda m=ranx_name, n=norm, p=params, t=theirs: ranx.fuse(
                                t, norm=n, method=m, params=p
                            )
                        )
                    )
            rows.append(
                {
                    "task": f"fuse {method} ({norm})",
                    "runs": n_runs,
                    "lines": args.lines,
                    "polars_rankeval_s": statistics.median(ours_t),
                    "ranx_s": statistics.median(ranx_t) if ranx_t else None,
                }
            )
            print(rows[-1], flush=True)
        del theirs

    if not args.skip_optimize:
        rows.append(optimize_row(args, ranx))
    report(rows, args, ranx)


def optimize_row(args: argparse.Namespace, ranx: Any) -> dict[str, Any]:
    """Time optimize_fusion (RBC, 99 values of phi) beside ranx's."""
    runs = make_runs(args.optimize_lines, 2)
    qrels = make_qrels(runs)
    queries = sorted(qrels["user"].unique())
    runs = {k: f.filter(pl.col("user").is_in(queries)) for k, f in runs.items()}
    theirs = [to_ranx(f) for f in runs.values()]
    table: dict[str, dict[str, int]] = {}
    for u, i, r in qrels.iter_rows():
        table.setdefault(u, {})[i] = r
    ranx_qrels = ranx.Qrels(table)
    phis = [round(0.01 * i, 2) for i in range(1, 100)]
    ours_t, ranx_t = [], []
    for _ in range(args.rounds):
        ours_t.append(
            timed(
                lambda: prk.optimize_fusion(
                    runs, qrels, method="rbc", metric="ndcg@10", search={"phi": phis}
                )
            )
        )
        ranx_t.append(
            timed(
                lambda: ranx.optimize_fusion(
                    ranx_qrels,
                    theirs,
                    method="rbc",
                    metric="ndcg@10",
                    show_progress=False,
                    min_phi=0.01,
                    max_phi=0.99,
                    step=0.01,
                )
            )
        )
    row = {
        "task": "optimize_fusion rbc, 99 candidates, ndcg@10",
        "runs": 2,
        "lines": sum(f.height for f in runs.values()),
        "polars_rankeval_s": statistics.median(ours_t),
        "ranx_s": statistics.median(ranx_t),
    }
    print(row, flush=True)
    return row


def report(rows: list[dict[str, Any]], args: argparse.Namespace, ranx: Any) -> None:
    """Print the table; with --record, append it to RESULTS_FUSION.md."""
    result = pl.DataFrame(rows).with_columns(
        (pl.col("ranx_s") / pl.col("polars_rankeval_s")).round(2).alias("ranx / ours")
    )
    with pl.Config(tbl_rows=-1, tbl_width_chars=160):
        print(result)
    if args.record:
        path = Path(__file__).with_name("RESULTS_FUSION.md")
        header = (
            ""
            if path.exists()
            else (
                "# Fusion beside ranx\n\nProduced by `benchmarks/bench_fusion.py` (see its "
                "docstring for the data and what is timed). Seconds, median of the rounds.\n"
            )
        )
        with path.open("a", encoding="utf-8") as out:
            out.write(header)
            out.write(
                f"\n## {dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M} UTC — "
                f"{args.lines:,} lines, {args.rounds} round(s), {platform.machine()}, "
                f"{os.cpu_count()} cores (shared), polars {pl.__version__}, "
                f"ranx {ranx.__version__ if hasattr(ranx, '__version__') else '0.3.21'}\n\n"
            )
            out.write("| task | runs | lines | polars_rankeval s | ranx s | ranx / ours |\n")
            out.write("|---|---:|---:|---:|---:|---:|\n")
            for r in result.iter_rows(named=True):
                ranx_s = "—" if r["ranx_s"] is None else f"{r['ranx_s']:.2f}"
                ratio = "—" if r["ranx / ours"] is None else f"{r['ranx / ours']:.2f}"
                out.write(
                    f"| {r['task']} | {r['runs']} | {r['lines']:,} | "
                    f"{r['polars_rankeval_s']:.2f} | {ranx_s} | {ratio} |\n"
                )


if __name__ == "__main__":
    main()
