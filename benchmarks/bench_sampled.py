"""Sampled evaluation benchmark: sample_negatives and evaluate_sampled on 10M rows.

The data is generated on the fly (nothing is written to disk): ``--users`` users, each
with one held-out positive in a catalog of ``--items`` items; ``prk.sample_negatives``
adds ``--negatives`` negatives per user (default 100,000 x (1 + 99) = 10M rows). A
synthetic model scores every item of the catalog: ``score(u, i) = quality(i) + noise``
from a hash of (u, i), so that the full-catalog rank of each positive is known
exactly (computed in Polars from the same hash over the catalog, for a subset of
users).

Measured (median of ``--repeats`` interleaved rounds):

1. ``prk.sample_negatives`` (10M output rows);
2. ``prk.evaluate`` of the core suite {ndcg, map, mrr, precision, recall}@10 on the
   scored candidates (ties="expected");
3. ``prk.evaluate_sampled`` of the same suite with the estimators sampled, rank and
   bv (gamma=0.01), tables warm (cached) and, once, cold (the numpy solve per metric);
   and ``prk.evaluate`` of the same 15 (metric, estimator) pairs in the grammar form
   (``ndcg(estimator=bv)@10``, ...), whose values must equal evaluate_sampled's;
4. the values: the sampled value, the corrections, and the exact full-catalog value
   on ``--exact-users`` users (each scored against the whole catalog).

No peer is timed: RecBole (``uni100`` evaluation), recpack and Elliot sample negatives
but do not correct the metrics, and Jurity's ``UnbiasedRankEstimation`` is an empty
stub (not in the installed 2.1.0).

Usage::

    python benchmarks/bench_sampled.py                  # 10M rows
    python benchmarks/bench_sampled.py --users 10000    # 1M rows, quick
    python benchmarks/bench_sampled.py --record         # also rewrite RESULTS_SAMPLED.md
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import statistics
import time
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

import polars_rankeval as prk
import polars_rankeval.analysis.sampled_correction as sampled_correction
from polars_rankeval.analysis.negatives import mix64

METRICS = ["ndcg@10", "map@10", "mrr@10", "precision@10", "recall@10"]
ESTIMATORS: list[Any] = ["sampled", "rank", "bv"]
RESULTS = Path(__file__).with_name("RESULTS_SAMPLED.md")
GRAMMAR = {
    prk.parse_metric(m.replace("@", f"(estimator={e})@")).name: f"{m}[{e}]"
    for m in METRICS
    for e in ESTIMATORS
}


def score_expr(user: str = "user", item: str = "item") -> pl.Expr:
    """The synthetic model: item quality (lower id = better) plus per-(user, item) noise."""
    h = mix64(
        pl.col(user).cast(pl.UInt64) * pl.lit(0x9E3779B97F4A7C15, pl.UInt64)
        + pl.col(item).cast(pl.UInt64)
    )
    noise = (h % pl.lit(1 << 20, pl.UInt64)).cast(pl.Float64) / float(1 << 20)
    return (-pl.col(item).cast(pl.Float64) / 100.0 + 0.5 * noise).alias("score")


def make_truth(users: int, items: int, seed: int) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    # positives skewed towards good (low id) items, as a decent model would see them
    pos = np.minimum(items - 1, rng.geometric(1 / 200, size=users) - 1)
    return pl.DataFrame({"user": np.arange(users, dtype=np.int64), "item": pos.astype(np.int64)})


def exact_full_catalog(truth: pl.DataFrame, items: int) -> dict[str, float]:
    """The full-catalog metrics of the users of ``truth``: every catalog item scored."""
    full = (
        truth.select("user")
        .join(pl.DataFrame({"item": np.arange(items, dtype=np.int64)}), how="cross")
        .join(truth.with_columns(relevance=pl.lit(1)), on=["user", "item"], how="left")
        .with_columns(score_expr(), pl.col("relevance").fill_null(0))
    )
    out = prk.evaluate(full, METRICS)
    return {m: out[m].item() for m in METRICS}


def timed(fn: Any) -> tuple[float, Any]:
    start = time.perf_counter()
    value = fn()
    return time.perf_counter() - start, value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=100_000)
    parser.add_argument("--items", type=int, default=50_000)
    parser.add_argument("--negatives", type=int, default=99)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--exact-users", type=int, default=200)
    parser.add_argument("--record", action="store_true")
    args = parser.parse_args()
    load = os.getloadavg()
    truth = make_truth(args.users, args.items, 0)
    catalog = np.arange(args.items, dtype=np.int64)

    def sample() -> pl.DataFrame:
        return prk.sample_negatives(truth, n_negatives=args.negatives, catalog=catalog, seed=1)

    cands = sample()
    scored = cands.with_columns(score_expr())
    rows = scored.height

    def core() -> pl.DataFrame:
        return prk.evaluate(scored, METRICS)

    def corrected() -> pl.DataFrame:
        return prk.evaluate_sampled(scored, METRICS, n_items=args.items, estimators=ESTIMATORS)

    def grammar() -> pl.DataFrame:
        return prk.evaluate(scored, list(GRAMMAR), n_items=args.items)

    sampled_correction._cached_solve.cache_clear()
    cold, _ = timed(corrected)
    setup = []
    for metric in METRICS:
        sampled_correction._cached_solve.cache_clear()
        t, _ = timed(
            lambda metric=metric: prk.correction_table(
                metric, n_items=args.items, n_negatives=args.negatives, estimators="bv"
            )
        )
        setup.append(t)
    corrected()  # warm the cache again
    grammar()
    times: dict[str, list[float]] = {"sample": [], "core": [], "corrected": [], "grammar": []}
    for _ in range(args.repeats):
        times["sample"].append(timed(sample)[0])
        times["core"].append(timed(core)[0])
        times["corrected"].append(timed(corrected)[0])
        times["grammar"].append(timed(grammar)[0])
    med = {k: statistics.median(v) for k, v in times.items()}
    core_values = core()
    summary = corrected()
    wide = prk.evaluate_sampled(
        scored, METRICS, n_items=args.items, estimators=ESTIMATORS, summary="wide"
    )
    in_grammar = grammar()
    gap = max(abs(in_grammar[g].item() - wide[c].item()) for g, c in GRAMMAR.items())
    exact = exact_full_catalog(truth.head(args.exact_users), args.items)
    subset = prk.evaluate_sampled(
        scored.filter(pl.col("user") < args.exact_users),
        METRICS,
        n_items=args.items,
        estimators=["sampled", "rank", "mb", "bv"],
        summary="wide",
    )

    lines = [
        "# Sampled evaluation benchmark results",
        "",
        "Generated by `python benchmarks/bench_sampled.py --record`.",
        "",
        f"- date: {dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M} UTC",
        f"- machine: {platform.machine()}, {os.cpu_count()} cores, {platform.platform()}",
        f"- versions: Python {platform.python_version()}, polars {pl.__version__} "
        f"({pl.thread_pool_size()} threads), numpy {np.__version__}",
        f"- load average at start: {load[0]:.1f}/{load[1]:.1f}/{load[2]:.1f} "
        "(a shared machine: ratios of interleaved runs are the robust figures)",
        f"- {args.users:,} users x (1 positive + {args.negatives} sampled negatives) = "
        f"{rows:,} rows; catalog {args.items:,} items; median of {args.repeats} "
        "interleaved rounds",
        "",
        "### Time",
        "",
        "| what | seconds | vs core evaluate |",
        "|---|---|---|",
        f"| `sample_negatives` ({rows:,} output rows, seed 1) | {med['sample']:.2f} | "
        f"{med['sample'] / med['core']:.2f}x |",
        f"| `evaluate` core suite @10 (ties=expected) | {med['core']:.2f} | 1.00x |",
        f"| `evaluate_sampled` core suite, estimators sampled+rank+bv, tables cached | "
        f"{med['corrected']:.2f} | {med['corrected'] / med['core']:.2f}x |",
        f"| same, first call (solves the 5 bv tables) | {cold:.2f} | {cold / med['core']:.2f}x |",
        f"| `evaluate` of the same 15 in the grammar (`ndcg(estimator=bv)@10`, ...), cached | "
        f"{med['grammar']:.2f} | {med['grammar'] / med['core']:.2f}x |",
        f"| one bv table (n={args.items:,}, m={args.negatives}), mean of the 5 | "
        f"{statistics.mean(setup):.2f} | |",
        "",
        "### Values",
        "",
        f"All {args.users:,} users: the sampled metric (prk.evaluate on the candidates, which "
        "equals evaluate_sampled's `sampled` with one positive per user) and the corrections.",
        "",
        "| metric | evaluate (sampled) | sampled | rank | bv |",
        "|---|---|---|---|---|",
    ]
    for m in METRICS:
        vals = dict(summary.filter(pl.col("metric") == m).select("estimator", "value").iter_rows())
        lines.append(
            f"| {m} | {core_values[m].item():.4f} | {vals['sampled']:.4f} | {vals['rank']:.4f} "
            f"| {vals['bv']:.4f} |"
        )
    lines += [
        "",
        f"The grammar form gives the same means: largest difference {gap:.1e}.",
        "",
        f"The first {args.exact_users:,} users, against the exact full-catalog value (each "
        f"user's positive ranked among all {args.items:,} items by the same model):",
        "",
        "| metric | exact (full catalog) | sampled | rank | mb | bv |",
        "|---|---|---|---|---|---|",
    ]
    for m in METRICS:
        row = [subset[f"{m}[{e}]"].item() for e in ("sampled", "rank", "mb", "bv")]
        lines.append(f"| {m} | {exact[m]:.4f} | " + " | ".join(f"{v:.4f}" for v in row) + " |")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.record:
        RESULTS.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
