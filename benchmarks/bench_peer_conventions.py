"""The presets' novelty / diversity / Surprisal / CategoricalDiversity beside the peers' code.

Issue 15 made MS Recommenders' ``novelty``, ``diversity`` and
``distributional_coverage`` and RePlay's ``Surprisal`` and ``CategoricalDiversity`` one
word under ``conventions=``. This script times each preset metric beside the library's
own code on the same data and compares the values (max absolute difference).

Data (numpy, seed 0, never written to disk): ``n_users`` users with 20 recommended
items each (scores on a grid of 50 values: tied), 5,003 items, a training history of
10 interactions per user with a popularity skew, a category per item (item % 40).
MS Recommenders refuses recommended (user, item) pairs already in train: they are
left out for both.

The peers run from their unpacked wheels (``--peers DIR``, default ``$PRK_PEERS``:
``pip download --no-deps recommenders==1.2.1 replay-rec==0.22.0`` and unzip): they
do not install beside polars 2 (RePlay pins polars < 2 and scikit-learn < 1.9; MS
Recommenders cornac < 3 and a notebook stack). RePlay's CategoricalDiversity sorts by
score only (no tie order): it gets tie-free scores (score + item / 1e6) for the value
check. Each case is timed in one process, interleaved with its peer, best of
``--repeat``.

Usage::

    python benchmarks/bench_peer_conventions.py --peers /tmp/peers
    python benchmarks/bench_peer_conventions.py --peers /tmp/peers --record
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import sys
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np
import polars as pl
from bench_core import best_of

import polars_rankeval as prk

HERE = Path(__file__).resolve().parent
N_ITEMS = 5_003  # prime: (a j + b) mod N is distinct within a user
PER_USER = 20
HIST = 10
K = 10


def make_data(n_users: int) -> tuple[pl.DataFrame, pl.DataFrame]:
    rng = np.random.default_rng(0)
    users = np.repeat(np.arange(n_users), PER_USER)
    a = rng.integers(1, N_ITEMS, n_users).repeat(PER_USER)
    b = rng.integers(0, N_ITEMS, n_users).repeat(PER_USER)
    j = np.tile(np.arange(PER_USER), n_users)
    items = (a * j + b) % N_ITEMS
    weights = 1.0 / np.arange(1, N_ITEMS + 1) ** 0.8
    weights /= weights.sum()
    train = pl.DataFrame(
        {
            "user": np.repeat(np.arange(n_users), HIST),
            "item": rng.choice(N_ITEMS, size=n_users * HIST, p=weights),
        }
    ).unique()
    recs = pl.DataFrame(
        {"user": users, "item": items, "score": rng.integers(0, 50, users.size) / 50.0}
    ).join(train, on=["user", "item"], how="anti")
    recs = recs.with_columns(relevance=pl.lit(None, dtype=pl.Float64), category=pl.col("item") % 40)
    return recs, train


def run(preset: str, df: pl.DataFrame, metric: str, train: pl.DataFrame) -> float:
    out = prk.evaluate(df, metric, conventions=preset, users="recs", history=train, validate=False)
    return float(out.item(0, 0))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--peers", default=os.environ.get("PRK_PEERS"))
    parser.add_argument("--record", action="store_true")
    args = parser.parse_args()
    if not args.peers:
        parser.error("--peers DIR (the unpacked recommenders / replay-rec wheels) is needed")
    sys.path.append(args.peers)
    warnings.simplefilter("ignore")
    from recommenders.evaluation.python_evaluation import (
        distributional_coverage,
        diversity,
        novelty,
    )
    from replay.metrics import CategoricalDiversity, Surprisal

    recs, train = make_data(args.users)
    ms_cols = {"user": "userID", "item": "itemID"}
    train_ms = train.rename(ms_cols).to_pandas()
    reco_ms = recs.select("user", "item").rename(ms_cols).to_pandas()
    rp_cols = {"user": "query_id", "item": "item_id", "score": "rating"}
    recs_rp = recs.select("user", "item", "score").rename(rp_cols)
    train_rp = train.rename({"user": "query_id", "item": "item_id"})
    distinct = recs.with_columns(score=pl.col("score") + pl.col("item") / 1e6)
    cats_rp = distinct.select(
        pl.col("user").alias("query_id"),
        pl.col("category").alias("category_id"),
        pl.col("score").alias("rating"),
    )

    cases: list[tuple[str, Callable[[], float], Callable[[], float]]] = [
        (
            "MS novelty (pooled, interaction share)",
            lambda: run("recommenders", recs, "novelty", train),
            lambda: float(novelty(train_ms, reco_ms)),
        ),
        (
            "MS diversity (co-occurrence cosine)",
            lambda: run("recommenders", recs, "diversity", train),
            lambda: float(diversity(train_ms, reco_ms)),
        ),
        (
            "MS distributional_coverage",
            lambda: run("recommenders", recs, "distributional_coverage", train),
            lambda: float(distributional_coverage(train_ms, reco_ms)),
        ),
        (
            f"RePlay Surprisal@{K} (polars path)",
            lambda: run("replay", recs, f"Surprisal@{K}", train),
            lambda: float(Surprisal([K])(recs_rp, train_rp)[f"Surprisal@{K}"]),
        ),
        (
            f"RePlay CategoricalDiversity@{K} (polars path, tie-free)",
            lambda: run("replay", distinct, f"CategoricalDiversity@{K}", train),
            lambda: float(CategoricalDiversity([K])(cats_rp)[f"CategoricalDiversity@{K}"]),
        ),
    ]
    lines = [
        "| case | rows | ours (s) | peer (s) | peer / ours | abs diff |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name, ours_fn, peer_fn in cases:
        ours_t, peer_t, ours_v, peer_v = [], [], 0.0, 0.0
        for _ in range(args.repeat):  # interleaved
            t, ours_v = best_of(ours_fn, 1)
            ours_t.append(t)
            t, peer_v = best_of(peer_fn, 1)
            peer_t.append(t)
        o, p = min(ours_t), min(peer_t)
        line = (
            f"| {name} | {recs.height:,} | {o:.2f} | {p:.2f} | {p / o:.1f}x | "
            f"{abs(ours_v - peer_v):.1e} |"
        )
        lines.append(line)
        print(line, flush=True)
    header = (
        f"`python benchmarks/bench_peer_conventions.py --peers <dir> --users {args.users}`, "
        f"{dt.date.today()}, Python {platform.python_version()}, polars {pl.__version__}, "
        f"{os.cpu_count()} CPUs (shared machine: ratios within one run).\n\n"
        f"{args.users:,} users x {PER_USER} recommendations (tied scores), train "
        f"{train.height:,} rows, {N_ITEMS:,} items; validate=False."
    )
    if args.record:
        text = (
            "# Peer conventions: MS Recommenders and RePlay metrics under conventions=\n\n"
            + header
            + "\n\n"
            + "\n".join(lines)
            + "\n"
        )
        (HERE / "RESULTS_PEER_CONVENTIONS.md").write_text(text)
        print("wrote RESULTS_PEER_CONVENTIONS.md")


if __name__ == "__main__":
    main()
