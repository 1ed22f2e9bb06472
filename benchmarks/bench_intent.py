"""Intent-aware (diversity) measures benchmark: 10M rows beside the core suite, and ndeval.

1. **10,000,000 rows** (100,000 users x 100 candidates; 20 judged items per user, each
   judged for 3 subtopics with probability 1/3 of relevance): the time of
   ``prk.join(recs, qrels, subtopic="subtopic")``, of the core 5-metric suite @10
   (ndcg, map, recall, precision, mrr), of ndeval's 21 measures (ERR-IA, nERR-IA,
   alpha-DCG, alpha-nDCG @5/10/20, NRBP, nNRBP, MAP-IA, P-IA and strec @5/10/20) in one
   ``evaluate`` call, and of ``alpha_ndcg@10`` and ``s_recall@10`` alone. Runs are
   interleaved (A B A B ...) and the best of each is reported, with ratios to the core
   suite.
2. **Against pyndeval** (TREC's ndeval in C, as ir_measures calls it) and ir_measures
   on 1,000,000 rows (10,000 users): time (pyndeval's from Python tuples, which it
   needs, and separately the conversion from the frame) and the mean of every measure
   (the largest absolute difference over the 21 measures).

Scores are continuous (no ties); ``ties="item_asc"`` is pyndeval's order (score, then
doc id ascending; ids are zero-padded text so that text and number order agree). Data
are generated with numpy (seed 0), never written to disk.

Usage::

    python benchmarks/bench_intent.py            # full sizes
    python benchmarks/bench_intent.py --quick    # 1/10 of the users
    python benchmarks/bench_intent.py --record   # also write RESULTS_INTENT.md
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib.metadata
import os
import platform
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

import polars_rankeval as prk

HERE = Path(__file__).resolve().parent
N_ITEMS = 10_007
PER_USER = 100
JUDGED = 20
SUBTOPICS = 3
CORE = ["ndcg@10", "map@10", "recall@10", "precision@10", "mrr@10"]
NDEVAL = {
    **{f"err_ia@{k}": f"ERR-IA@{k}" for k in (5, 10, 20)},
    **{f"err_ia(normalize=ideal)@{k}": f"nERR-IA@{k}" for k in (5, 10, 20)},
    **{f"alpha_ndcg(normalize=ideal_ideal)@{k}": f"alpha-DCG@{k}" for k in (5, 10, 20)},
    **{f"alpha_ndcg@{k}": f"alpha-nDCG@{k}" for k in (5, 10, 20)},
    "nrbp": "NRBP",
    "nrbp(normalize=ideal)": "nNRBP",
    "map_ia": "MAP-IA",
    **{f"precision_ia@{k}": f"P-IA@{k}" for k in (5, 10, 20)},
    **{f"s_recall@{k}": f"strec@{k}" for k in (5, 10, 20)},
}
OPTIONS: dict[str, Any] = {"ties": "item_asc", "users": "both", "empty": "zero"}


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def data(n_users: int, seed: int = 0) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Recommendations (user, item, score) and diversity qrels (user, subtopic, item, rel)."""
    rng = np.random.default_rng(seed)
    a = rng.integers(1, N_ITEMS, n_users)
    b = rng.integers(0, N_ITEMS, n_users)
    j = np.arange(PER_USER)
    item = (a[:, None] * j[None, :] + b[:, None]) % N_ITEMS
    users = np.repeat(np.arange(n_users), PER_USER)
    recs = pl.DataFrame(
        {
            "user": pl.Series(users).cast(pl.String).str.zfill(6),
            "item": pl.Series(item.ravel()).cast(pl.String).str.zfill(5),
            "score": rng.normal(size=item.size),
        }
    )
    judged = item[:, :JUDGED]  # random with respect to the score
    q_items = np.repeat(judged.ravel(), SUBTOPICS)
    q_users = np.repeat(np.arange(n_users), JUDGED * SUBTOPICS)
    q_sub = np.tile(np.arange(SUBTOPICS), n_users * JUDGED)
    rel = (rng.random(q_items.size) < 1 / 3).astype(np.int64)
    qrels = pl.DataFrame(
        {
            "user": pl.Series(q_users).cast(pl.String).str.zfill(6),
            "subtopic": pl.Series(q_sub).cast(pl.String),
            "item": pl.Series(q_items).cast(pl.String).str.zfill(5),
            "relevance": rel,
        }
    )
    return recs, qrels


def interleaved(cases: dict[str, Callable[[], Any]], rounds: int) -> dict[str, float]:
    best = dict.fromkeys(cases, float("inf"))
    for _ in range(rounds):
        for name, fn in cases.items():
            seconds, _ = timed(fn)
            best[name] = min(best[name], seconds)
    return best


def bench_scale(n_users: int, rounds: int, lines: list[str]) -> None:
    recs, qrels = data(n_users)
    t_join, long = timed(lambda: prk.join(recs, qrels, subtopic="subtopic", check_overlap=False))
    lines.append(
        f"### {long.height:,} rows ({n_users:,} users x {PER_USER} candidates; {JUDGED} "
        f"judged items x {SUBTOPICS} subtopics per user: {qrels.height:,} qrels rows)\n"
    )
    metrics = list(NDEVAL)
    cases = {
        f"core suite: {', '.join(CORE)}": lambda: prk.evaluate(long, CORE, **OPTIONS),
        "ndeval's 21 measures (one evaluate call)": lambda: prk.evaluate(long, metrics, **OPTIONS),
        "alpha_ndcg@10 alone (greedy ideal, 10 steps)": lambda: prk.evaluate(
            long, ["alpha_ndcg@10"], **OPTIONS
        ),
        "s_recall@10 alone": lambda: prk.evaluate(long, ["s_recall@10"], **OPTIONS),
        "core suite + alpha_ndcg@10 + err_ia@10": lambda: prk.evaluate(
            long, [*CORE, "alpha_ndcg@10", "err_ia@10"], **OPTIONS
        ),
    }
    best = interleaved(cases, rounds)
    core = best[next(iter(cases))]
    lines += [
        f"`prk.join(recs, qrels, subtopic='subtopic')`: {t_join:.2f} s.\n",
        f"| `evaluate` (ties=item_asc), best of {rounds} interleaved | seconds | / core suite |",
        "|---|---|---|",
        *(f"| {name} | {s:.2f} | {s / core:.2f}x |" for name, s in best.items()),
        "",
    ]


def bench_reference(n_users: int, lines: list[str]) -> None:
    recs, qrels = data(n_users, seed=1)
    lines.append(
        f"### Against pyndeval and ir_measures: {recs.height:,} rows ({n_users:,} users), "
        "the 21 ndeval measures\n"
    )
    metrics = list(NDEVAL)
    t_prk, ours = timed(
        lambda: prk.evaluate(
            prk.join(recs, qrels, subtopic="subtopic", check_overlap=False), metrics, **OPTIONS
        )
    )
    rows = [f"| polars_rankeval (join + evaluate) | {t_prk:.2f} | — |"]
    try:
        import pyndeval
    except ImportError:
        rows.append("| pyndeval | not installed | |")
        lines += ["| what | seconds | max abs difference of the means |", "|---|---|---|", *rows]
        return
    t_conv, (q_tuples, r_tuples) = timed(
        lambda: (list(qrels.iter_rows()), list(recs.sort("user").iter_rows()))
    )
    t_nd, per_query = timed(
        lambda: pyndeval.ndeval(q_tuples, r_tuples, measures=list(NDEVAL.values()))
    )
    diff = 0.0
    for ours_name, ref_name in NDEVAL.items():
        mean = float(np.mean([v[ref_name] for v in per_query.values()]))
        diff = max(diff, abs(mean - ours[ours_name].item()))
    rows.append(
        f"| pyndeval {importlib.metadata.version('pyndeval')} (C), from Python tuples | "
        f"{t_nd:.2f} | {diff:.1e} |"
    )
    rows.append(f"| (conversion of the frames to tuples for pyndeval) | {t_conv:.2f} | |")
    try:
        import ir_measures
    except ImportError:
        rows.append("| ir_measures | not installed | |")
    else:
        qdf = qrels.select(
            pl.col("user").alias("query_id"),
            pl.col("item").alias("doc_id"),
            "relevance",
            pl.col("subtopic").alias("iteration"),
        ).to_pandas()
        rdf = recs.select(
            pl.col("user").alias("query_id"), pl.col("item").alias("doc_id"), "score"
        ).to_pandas()
        parsed = {ours: ir_measures.parse_measure(_ir_name(ref)) for ours, ref in NDEVAL.items()}
        t_ir, agg = timed(lambda: ir_measures.calc_aggregate(list(parsed.values()), qdf, rdf))
        diff_ir = max(abs(agg[m] - ours[name].item()) for name, m in parsed.items())
        rows.append(
            f"| ir_measures {ir_measures.__version__} (pyndeval provider, from pandas) | "
            f"{t_ir:.2f} | {diff_ir:.1e} |"
        )
    lines += [
        "| what | seconds | max abs difference of the means |",
        "|---|---|---|",
        *rows,
        "",
        f"polars_rankeval / pyndeval time: {t_prk / t_nd:.2f}x (pyndeval excluding the "
        f"conversion), {t_prk / (t_nd + t_conv):.2f}x (including it).",
        "",
    ]


def _ir_name(ref: str) -> str:
    name, _, cut = ref.partition("@")
    name = {"strec": "StRecall", "MAP-IA": "AP_IA"}.get(name, name.replace("-", "_"))
    return f"{name}@{cut}" if cut else name


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1/10 of the users")
    parser.add_argument("--record", action="store_true", help="write RESULTS_INTENT.md")
    parser.add_argument("--rounds", type=int, default=2, help="interleaved rounds (default 2)")
    args = parser.parse_args()
    scale = 10 if args.quick else 1
    load = " / ".join(f"{x:.1f}" for x in os.getloadavg())
    lines = [
        "# Intent-aware measures benchmark results",
        "",
        "Generated by `python benchmarks/bench_intent.py --record`.",
        "",
        f"- date: {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC",
        f"- machine: {platform.machine()}, {os.cpu_count()} cores, {platform.platform()}",
        f"- versions: Python {platform.python_version()}, polars {pl.__version__} "
        f"({pl.thread_pool_size()} threads), numpy {np.__version__}",
        f"- load average at start: {load}",
        "",
    ]
    bench_scale(100_000 // scale, args.rounds, lines)
    bench_reference(10_000 // scale, lines)
    text = "\n".join(lines) + "\n"
    print(text)
    if args.record:
        (HERE / "RESULTS_INTENT.md").write_text(text)


if __name__ == "__main__":
    main()
