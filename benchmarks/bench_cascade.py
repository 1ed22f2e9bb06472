"""Cascade (nerr, inst, insq) and rank-similarity (rbo) benchmark.

1. **10M rows beside the core suite** (100,000 users x 100 candidates, graded relevance
   0..4 on ~10% of the rows, continuous scores): ``prk.evaluate`` of the five-metric
   core suite @10 (ndcg, map, mrr, precision, recall) and of each new measure on its
   own (err@10, nerr@10, inst, inst@10, insq, rbo@10), interleaved over the rounds (the
   best of ``--rounds``), as a ratio to the core suite; and ``prk.rank_similarity`` of
   two runs (the same candidates scored twice) at rbo@10 and rbo@100.
2. **Against the peers** on a subset (``--peer-users`` users x 100 candidates):
   ir_measures' ERR@10 (gdeval, the TREC Web track's Perl script) against ``err@10``;
   ir_measures' INST and INSQ (the ``cwl_eval`` package, depth 1000) against
   ``inst(depth=1000)`` / ``insq(depth=1000)``; the ``rbo`` package's ``rbo_ext`` (a
   Python loop over users) against ``rank_similarity``. Time and the mean value, and
   the largest per-query difference.

Data are generated with numpy (seed 0) and never written to disk.

Usage::

    python benchmarks/bench_cascade.py            # full sizes
    python benchmarks/bench_cascade.py --quick    # 1/10 of the users
    python benchmarks/bench_cascade.py --record   # also write RESULTS_CASCADE.md
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib.metadata
import os
import platform
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

import polars_rankeval as prk

HERE = Path(__file__).resolve().parent
PER_USER = 100
CORE = ["ndcg@10", "map@10", "mrr@10", "precision@10", "recall@10"]
NOTES = """### Notes

- The core suite takes the sorted-head path (one partial sort per user, the top 10 only);
  `err`, `nerr`, `inst`, `insq` and `rbo` run on the general path (window features over
  every row), which is most of their ratio: `err@10`, present before this family, costs
  the same order. `inst` reads the whole ranking (its weights are normalised over every
  rank, with the gain found so far), so `inst@10` is not cheaper than `inst`.
- On a shared machine (see the load average above; 7-14 during the recorded run) the
  timings are noisy: in the recorded run `rank_similarity` with one measure took longer
  than with two.
- Values: gdeval prints 5 decimals (differences up to 5e-6); `cwl_eval` and `rbo` agree
  to 1e-15. The peers run on 500,000 rows: gdeval and cwl_eval through ir_measures (which
  writes files and runs a Perl script or a Python loop per query), the `rbo` package as a
  Python loop over users (its top-10 lists cut by Polars).
"""
NEW = ["err@10", "nerr@10", "inst", "inst@10", "insq", "rbo@10"]


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def frame(n_users: int, seed: int = 0) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    n = n_users * PER_USER
    grade = np.where(rng.random(n) < 0.1, rng.integers(0, 5, n), -1)
    return pl.DataFrame(
        {
            "user": np.repeat(np.arange(n_users, dtype=np.int64), PER_USER),
            "item": np.tile(np.arange(PER_USER, dtype=np.int64), n_users),
            "score": rng.random(n) + 0.3 * np.maximum(grade, 0),
            "relevance": pl.Series(grade).replace(-1, None).cast(pl.Int64),
        }
    )


def version(name: str) -> str:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


# --------------------------------------------------------------------------- 10M rows
def bench_scale(n_users: int, rounds: int, lines: list[str]) -> None:
    df = frame(n_users)
    lines.append(
        f"### {df.height:,} rows ({n_users:,} users x {PER_USER} candidates), ties='item_desc'"
    )
    lines.append("")
    requests = {"core suite (5 metrics @10)": CORE, **{m: [m] for m in NEW}}
    best: dict[str, float] = {}
    values: dict[str, float] = {}
    for _ in range(rounds):
        for label, metrics in requests.items():
            seconds, out = timed(lambda m=metrics: prk.evaluate(df, m, ties="item_desc"))
            best[label] = min(best.get(label, float("inf")), seconds)
            values[label] = float(out[metrics[0]].item())
    lines.append("| request | seconds (best of rounds) | x core suite | mean value |")
    lines.append("|---|---|---|---|")
    for label in requests:
        ratio = best[label] / best["core suite (5 metrics @10)"]
        lines.append(f"| `{label}` | {best[label]:.2f} | {ratio:.2f} | {values[label]:.6f} |")
        print(lines[-1], flush=True)
    other = df.with_columns(
        score=pl.col("score") + np.random.default_rng(1).normal(0, 0.3, df.height)
    )
    run_a, run_b = df.select("user", "item", "score"), other.select("user", "item", "score")
    lines.append("")
    lines.append("| `rank_similarity` of two runs of this size | seconds | mean |")
    lines.append("|---|---|---|")
    for measures in (["rbo@10"], ["rbo@100"], ["rbo@10", "rbo(estimate=res)@10"]):
        seconds, out = timed(lambda m=measures: prk.rank_similarity(run_a, run_b, m))
        lines.append(f"| {', '.join(measures)} | {seconds:.2f} | {out[measures[0]].item():.6f} |")
        print(lines[-1], flush=True)
    lines.append("")


# --------------------------------------------------------------------------- peers
def bench_peers(n_users: int, lines: list[str]) -> None:
    df = frame(n_users, seed=2)
    lines.append(f"### Against the peers: {df.height:,} rows ({n_users:,} users x {PER_USER})")
    lines.append("")
    lines.append(
        "| measure | peer | peer seconds | prk seconds | peer mean | prk mean | max abs diff |"
    )
    lines.append("|---|---|---|---|---|---|---|")
    try:
        import ir_measures
    except ImportError:
        ir_measures = None
    if ir_measures is not None:
        judged = df.filter(pl.col("relevance").is_not_null())
        qrels = pl.DataFrame(
            {
                "query_id": judged["user"].cast(pl.String),
                "doc_id": judged["item"].cast(pl.String),
                "relevance": judged["relevance"],
            }
        ).to_pandas()
        run = pl.DataFrame(
            {
                "query_id": df["user"].cast(pl.String),
                "doc_id": df["item"].cast(pl.String),
                "score": df["score"],
            }
        ).to_pandas()
        cases = []
        if shutil.which("perl"):
            cases.append(
                ("ERR@10 (gdeval)", ir_measures.ERR @ 10, "err(max_grade=4)@10", ir_measures.gdeval)
            )
        cases += [
            (
                "INST(T=1) (cwl_eval)",
                ir_measures.INST(T=1, min_rel=0, max_rel=4),
                "inst(depth=1000,max_grade=4)",
                ir_measures.cwl_eval,
            ),
            (
                "INSQ(T=1) (cwl_eval)",
                ir_measures.INSQ(T=1, min_rel=0, max_rel=4),
                "insq(depth=1000,max_grade=4)",
                ir_measures.cwl_eval,
            ),
        ]
        for label, measure, ours, provider in cases:
            t_peer, theirs = timed(
                lambda m=measure, p=provider: {
                    r.query_id: r.value for r in p.iter_calc([m], qrels, run)
                }
            )
            t_prk, out = timed(
                lambda o=ours: prk.evaluate(df, [o], ties="item_desc", per_user=True, users="all")
            )
            got = dict(zip(out["user"].cast(pl.String), out[ours], strict=True))
            diff = max(abs(got[q] - v) for q, v in theirs.items())
            peer_mean = float(np.mean(list(theirs.values())))
            prk_mean = float(np.mean([got[q] for q in theirs]))
            lines.append(
                f"| `{ours}` | {label} | {t_peer:.2f} | {t_prk:.2f} | {peer_mean:.6f} "
                f"| {prk_mean:.6f} | {diff:.1e} |"
            )
            print(lines[-1], flush=True)
    try:
        import rbo
    except ImportError:
        rbo = None
    if rbo is not None:
        other = df.with_columns(
            score=pl.col("score") + np.random.default_rng(3).normal(0, 0.3, df.height)
        )
        run_a, run_b = df.select("user", "item", "score"), other.select("user", "item", "score")

        def lists(run: pl.DataFrame) -> dict[int, list[int]]:
            top = (
                run.sort(["user", "score"], descending=[False, True])
                .group_by("user", maintain_order=True)
                .head(10)
            )
            return dict(top.group_by("user", maintain_order=True).agg("item").rows())

        def peer() -> dict[int, float]:
            la, lb = lists(run_a), lists(run_b)
            return {u: rbo.RankingSimilarity(la[u], lb[u]).rbo_ext(p=0.9) for u in la}

        t_peer, theirs = timed(peer)
        t_prk, out = timed(lambda: prk.rank_similarity(run_a, run_b, ["rbo@10"], per_user=True))
        got = dict(out.rows())
        diff = max(abs(got[u] - v) for u, v in theirs.items())
        lines.append(
            "| `rank_similarity(..., ['rbo@10'])` | rbo package `rbo_ext(p=0.9)` (per-user loop) "
            f"| {t_peer:.2f} | {t_prk:.2f} | {np.mean(list(theirs.values())):.6f} "
            f"| {np.mean(list(got.values())):.6f} | {diff:.1e} |"
        )
        print(lines[-1], flush=True)
    lines.append("")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--record", action="store_true")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--peer-users", type=int, default=5_000)
    args = parser.parse_args()
    n_users = 10_000 if args.quick else 100_000
    lines = [
        "# Cascade and rank-similarity benchmark results",
        "",
        "Generated by `python benchmarks/bench_cascade.py --record`; wall time in one process.",
        "",
        f"- date: {dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M} UTC",
        f"- machine: {platform.machine()}, {os.cpu_count()} cores, {platform.platform()}",
        f"- versions: Python {platform.python_version()}, polars {pl.__version__} "
        f"({pl.thread_pool_size()} threads), ir_measures {version('ir_measures')}, "
        f"cwl-eval {version('cwl-eval')}, rbo {version('rbo')}",
        f"- load average at start: {'/'.join(f'{x:.1f}' for x in os.getloadavg())}",
        "",
    ]
    bench_scale(n_users, args.rounds, lines)
    bench_peers(args.peer_users // (10 if args.quick else 1), lines)
    if args.record:
        text = "\n".join(lines).rstrip() + "\n\n" + NOTES
        (HERE / "RESULTS_CASCADE.md").write_text(text)
        print("wrote", HERE / "RESULTS_CASCADE.md")


if __name__ == "__main__":
    main()
