"""Beyond-accuracy benchmark 2: serendipity, calibration, popularity bias on 10M rows.

Data (numpy, seed 0, never written to disk): ``n_users`` users x 100 candidates (10M
rows at full size), continuous scores (no ties), 10% of the rows relevant; a history of
20 past interactions per user (2M rows) with a popularity skew; 5,003 items with 1-3
of 12 category labels, a provider (4 groups) and a long-tail flag from
``prk.long_tail_items(history)``; a baseline recommender's rank per row.

Rows of the table (each timed in one process, interleaved, best of ``--repeat``):

* ``ndcg@10 + precision@10``: the core suite on the same rows, for scale;
* each new family on the 10M rows (``serendipity@10`` RecTools definition,
  ``serendipity(mode=history)@10`` with co-occurrence, ``unexpectedness@10`` RePlay
  definition, ``miscalibration@10``, ``aplt@10 + reo@10 + rsp@10``,
  ``group_exposure + exposure_ratio``);
* against the peers that have the metric, run from their unpacked wheels (``--peers
  DIR``, default ``$PRK_PEERS``; not installed: RePlay needs polars < 2, MS
  Recommenders pins cornac < 3): RePlay ``Unexpectedness`` (polars path) on the same
  10M rows, MS Recommenders ``user_serendipity`` (pandas, O(|list| x |history|) per user
  plus the co-occurrence of every history pair) on a slice of users, and Elliot's
  ``APLT``/``PopREO``/``PopRSP`` loops (transliterated: Elliot is not on PyPI) on a
  slice. Values are compared (max absolute difference).

Usage::

    python benchmarks/bench_beyond2.py --peers /tmp/peers          # full sizes
    python benchmarks/bench_beyond2.py --quick                     # 1/10 of the users
    python benchmarks/bench_beyond2.py --record                    # write RESULTS_BEYOND2.md
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
from bench_core import best_of

import polars_rankeval as prk

HERE = Path(__file__).resolve().parent
N_ITEMS = 5_003
PER_USER = 100
HIST = 20
K = 10


def make_data(n_users: int) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    rng = np.random.default_rng(0)
    users = np.repeat(np.arange(n_users), PER_USER)
    a = rng.integers(1, N_ITEMS, n_users).repeat(PER_USER)
    b = rng.integers(0, N_ITEMS, n_users).repeat(PER_USER)
    j = np.tile(np.arange(PER_USER), n_users)
    items = (a * j + b) % N_ITEMS  # distinct within a user
    df = pl.DataFrame(
        {
            "user": users,
            "item": items,
            "score": rng.random(users.size),
            "relevant": rng.random(users.size) < 0.1,
            "in_base": rng.random(users.size) < 0.2,
            "base": rng.integers(1, 50, users.size),
        }
    ).select(
        "user",
        "item",
        "score",
        pl.when(pl.col("relevant")).then(pl.lit(1)).alias("relevance"),
        # The baseline ranks its own items 1, 2, ... (consecutive, by its score "base").
        pl.when(pl.col("in_base"))
        .then(
            pl.when(pl.col("in_base"))
            .then(pl.col("base") * 1_000_000 + pl.col("item"))
            .rank("ordinal")
            .over("user")
        )
        .cast(pl.Int64)
        .alias("base_rank"),
    )
    weights = 1.0 / np.arange(1, N_ITEMS + 1) ** 0.8
    weights /= weights.sum()
    hist_items = rng.choice(N_ITEMS, size=n_users * HIST, p=weights)
    history = pl.DataFrame(
        {"user": np.repeat(np.arange(n_users), HIST), "item": hist_items}
    ).unique()
    labels = np.array([f"g{c}" for c in range(12)])
    cats = [
        list(rng.choice(labels, size=rng.integers(1, 4), replace=False)) for _ in range(N_ITEMS)
    ]
    table = pl.DataFrame(
        {
            "item": np.arange(N_ITEMS),
            "categories": cats,
            "provider": [f"p{i % 4}" for i in range(N_ITEMS)],
        }
    )
    tail = prk.long_tail_items(history, catalog=pl.Series(np.arange(N_ITEMS)))
    table = table.join(tail.select("item", "long_tail"), on="item", how="left")
    return df, history, table


def run_ours(df: pl.DataFrame, metrics: list[str], **kwargs: Any) -> pl.DataFrame:
    return prk.evaluate(df, metrics, users="recs", validate=False, **kwargs)


# --------------------------------------------------------------------------- peers
def replay_unexpectedness(df: pl.DataFrame) -> float:
    from replay.metrics import Unexpectedness

    recs = df.select(
        pl.col("user").alias("query_id"),
        pl.col("item").alias("item_id"),
        pl.col("score").alias("rating"),
    )
    base = df.filter(pl.col("base_rank").is_not_null()).select(
        pl.col("user").alias("query_id"),
        pl.col("item").alias("item_id"),
        (1.0 / pl.col("base_rank")).alias("rating"),
    )
    return float(Unexpectedness([K])(recs, base)[f"Unexpectedness@{K}"])


def ms_serendipity(df: pl.DataFrame, history: pl.DataFrame) -> float:
    from recommenders.evaluation.python_evaluation import serendipity

    top = (
        df.sort("score", descending=True)
        .group_by("user", maintain_order=True)
        .head(K)
        .select("user", "item", pl.col("relevance").fill_null(0).alias("relevance"))
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(
            serendipity(
                history.to_pandas(),
                top.to_pandas(),
                col_user="user",
                col_item="item",
                col_relevance="relevance",
            )
        )


def elliot_bias(df: pl.DataFrame, history: pl.DataFrame, table: pl.DataFrame) -> dict[str, float]:
    """Elliot's APLT, PopREO and PopRSP loops (elliot/evaluation/metrics/bias)."""
    tail = set(table.filter(pl.col("long_tail"))["item"].to_list())
    head = set(table["item"].to_list()) - tail
    train: dict[int, set[int]] = {}
    for u, i in history.iter_rows():
        train.setdefault(u, set()).add(i)
    ranked = df.sort(["user", "score"], descending=[False, True])
    recs: dict[int, list[int]] = {}
    rel: dict[int, set[int]] = {}
    for u, i, r in ranked.select("user", "item", "relevance").iter_rows():
        recs.setdefault(u, []).append(i)
        if r is not None:
            rel.setdefault(u, set()).add(i)
    aplt = np.mean([len(set(r[:K]) & tail) / len(r[:K]) for r in recs.values()])
    num, den = [], []
    for u, r in recs.items():
        rv = rel.get(u, set())
        if rv:
            hit = {i for i in r[:K] if i in rv}
            num.append([len(hit & head), len(hit & tail)])
            t = train.get(u, set())
            den.append([len((head & rv) - t), len((tail & rv) - t)])
    pr = np.sum(num, axis=0) / np.sum(den, axis=0)
    reo = float(np.std(pr) / np.mean(pr))
    num, den = [], []
    for u, r in recs.items():
        rec = set(r[:K])
        t = train.get(u, set())
        num.append([len(rec & head), len(rec & tail)])
        den.append([len(head - t), len(tail - t)])
    pr = np.sum(num, axis=0) / np.sum(den, axis=0)
    rsp = float(np.std(pr) / np.mean(pr))
    return {"aplt": float(aplt), "reo": reo, "rsp": rsp}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--record", action="store_true")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--peers", default=os.environ.get("PRK_PEERS"))
    parser.add_argument("--slice-users", type=int, default=2_000)
    args = parser.parse_args()
    n_users = 10_000 if args.quick else 100_000
    if args.peers:
        sys.path.insert(0, args.peers)
    df, history, table = make_data(n_users)
    rows: list[tuple[str, str, str, str, str]] = []

    def add(case: str, n_rows: int, seconds: float, value: str, note: str = "") -> None:
        rows.append((case, f"{n_rows:,}", f"{seconds:.2f}", value, note))
        print(f"{case:<62} {n_rows:>12,} {seconds:>8.2f}s  {value}  {note}", flush=True)

    rep = args.repeat
    t, out = best_of(lambda: run_ours(df, [f"ndcg@{K}", f"precision@{K}"]), rep)
    add("core: ndcg@10 + precision@10", df.height, t, f"{out.item(0, 0):.6f}")
    kw: dict[str, Any] = {"history": history, "items": table, "n_items": N_ITEMS}
    cases = [
        ("serendipity@10 (RecTools definition)", [f"serendipity@{K}"], {}),
        (
            "serendipity(mode=history)@10 (MS, co-occurrence)",
            [f"serendipity(mode=history)@{K}"],
            {},
        ),
        ("unexpectedness@10 (RePlay definition)", [f"unexpectedness@{K}"], {}),
        ("miscalibration@10 (Steck, alpha 0.01)", [f"miscalibration@{K}"], {"ties": "item_desc"}),
        ("aplt@10 + reo@10 + rsp@10", [f"aplt@{K}", f"reo@{K}", f"rsp@{K}"], {}),
        (
            "group_exposure + exposure_ratio(per_item)@10",
            [
                f"group_exposure(group=provider,level=p0)@{K}",
                f"exposure_ratio(group=provider,numerator=p0,denominator=p1,per_item=true)@{K}",
            ],
            {},
        ),
    ]
    ours: dict[str, float] = {}
    for case, metrics, extra in cases:
        t, out = best_of(lambda m=metrics, e=extra: run_ours(df, m, **kw, **e), rep)
        ours.update({m: out.item(0, m) for m in out.columns if "(" not in m or m in metrics})
        add(case, df.height, t, f"{out.item(0, 0):.6f}")
    if args.peers:
        t, value = best_of(lambda: replay_unexpectedness(df), 1)
        diff = abs(value - ours[f"unexpectedness@{K}"])
        add(
            "RePlay Unexpectedness@10 (polars path)",
            df.height,
            t,
            f"{value:.6f}",
            f"abs diff {diff:.1e}",
        )
        # MS refuses recommendations of items the user has in train: leave them out.
        hist_part = history.filter(pl.col("user") < args.slice_users)
        part = df.filter(pl.col("user") < args.slice_users).join(
            hist_part, on=["user", "item"], how="anti"
        )
        t_ours, mine = best_of(
            lambda: run_ours(part, [f"serendipity(mode=history)@{K}"], history=hist_part), rep
        )
        add(
            "ours: serendipity(mode=history)@10, slice",
            part.height,
            t_ours,
            f"{mine.item(0, 0):.6f}",
        )
        t, value = best_of(lambda: ms_serendipity(part, hist_part), 1)
        diff = abs(value - mine.item(0, 0))
        add(
            "MS Recommenders serendipity (top 10 given), slice",
            part.height,
            t,
            f"{value:.6f}",
            f"abs diff {diff:.1e}",
        )
    # Elliot removes training items from the relevant ones: recommend unseen items only.
    hist_part = history.filter(pl.col("user") < args.slice_users)
    part = df.filter(pl.col("user") < args.slice_users).join(
        hist_part, on=["user", "item"], how="anti"
    )
    metrics = [f"aplt@{K}", f"reo@{K}", f"rsp@{K}"]
    t_ours, mine = best_of(lambda: run_ours(part, metrics, history=hist_part, items=table), rep)
    add("ours: aplt + reo + rsp @10, slice", part.height, t_ours, f"{mine.item(0, f'rsp@{K}'):.6f}")
    t, value = best_of(lambda: elliot_bias(part, hist_part, table), 1)
    diff = max(
        abs(value["aplt"] - mine.item(0, f"aplt@{K}")),
        abs(value["reo"] - mine.item(0, f"reo@{K}")),
        abs(value["rsp"] - mine.item(0, f"rsp@{K}")),
    )
    add(
        "Elliot APLT/PopREO/PopRSP loops (transliterated), slice",
        part.height,
        t,
        f"{value['rsp']:.6f}",
        f"max abs diff {diff:.1e}",
    )
    if args.record:
        lines = [
            "# Beyond-accuracy benchmark 2: serendipity, calibration, popularity bias",
            "",
            f"`python benchmarks/bench_beyond2.py{' --quick' if args.quick else ''} "
            f"--peers <dir> --record`, {dt.date.today().isoformat()}, Python "
            f"{platform.python_version()}, polars {pl.__version__}, {os.cpu_count()} CPUs "
            "(shared machine: timings are indicative; compare rows of one run).",
            "",
            f"{n_users:,} users x {PER_USER} candidates, history {history.height:,} rows, "
            f"{N_ITEMS:,} items; users='recs', validate=False. The value column shows the "
            "first metric of the row (rsp for the popularity-bias slices).",
            "",
            "| case | rows | seconds | value | vs ours |",
            "| --- | ---: | ---: | ---: | --- |",
            *[f"| {c} | {n} | {s} | {v} | {note} |" for c, n, s, v, note in rows],
            "",
        ]
        (HERE / "RESULTS_BEYOND2.md").write_text("\n".join(lines))


if __name__ == "__main__":
    main()
