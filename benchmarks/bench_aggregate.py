"""Cost of the ``aggregate=`` option and of ``map(tie_group=threshold)``.

One frame of ``--users`` users x ``--items`` candidates with tied scores (a tenth of a
point grid) and binary relevance. Interleaved in one process (median of ``--repeats``),
each row of the table against the plain metric it reads:

* ``auc`` vs ``auc(aggregate=relevant_weighted)`` (RecBole gauc: a global plan over the
  per-user values) and ``auc(aggregate=pooled)`` (MS Recommenders / Jurity AUC),
  beside scikit-learn's ``roc_auc_score`` on the same rows (the pooled competitor);
* ``num_ret`` vs ``num_ret(aggregate=sum)`` (trec_eval's all line);
* ``map`` vs ``map(tie_group=threshold)``, beside scikit-learn's
  ``average_precision_score`` called per user on ``--sk-users`` users (scaled up).

Usage::

    python benchmarks/bench_aggregate.py            # 100,000 users x 20 items
    python benchmarks/bench_aggregate.py --record   # also write RESULTS_AGGREGATE.md
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import polars as pl

import polars_rankeval as prk


def frame(users: int, items: int, seed: int = 0) -> pl.DataFrame:
    """Every candidate scored on a 0.1 grid (ties), 20% relevant."""
    rng = np.random.default_rng(seed)
    n = users * items
    return pl.DataFrame(
        {
            "user": np.repeat(np.arange(users), items),
            "item": np.tile(np.arange(items), users),
            "score": np.round(rng.random(n), 1),
            "relevance": (rng.random(n) < 0.2).astype(np.int64),
        }
    )


def timed(fn: Callable[[], object]) -> float:
    """Seconds one call takes."""
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main() -> None:
    """Time the cases, print the table; --record writes RESULTS_AGGREGATE.md."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=100_000)
    parser.add_argument("--items", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--sk-users", type=int, default=2_000)
    parser.add_argument("--record", action="store_true")
    args = parser.parse_args()
    from sklearn.metrics import average_precision_score, roc_auc_score

    df = frame(args.users, args.items)
    small = df.filter(pl.col("user") < args.sk_users)
    scale = args.users / args.sk_users

    def sk_ap() -> None:
        for _, rows in small.group_by("user"):
            labels = rows["relevance"].to_numpy()
            if labels.any():
                average_precision_score(labels, rows["score"].to_numpy())

    cases: dict[str, Callable[[], object]] = {
        "auc": lambda: prk.evaluate(df, ["auc"]),
        "auc(aggregate=relevant_weighted)": lambda: prk.evaluate(
            df, ["auc(aggregate=relevant_weighted)"]
        ),
        "auc(aggregate=pooled)": lambda: prk.evaluate(df, ["auc(aggregate=pooled)"]),
        "sklearn roc_auc_score (pooled)": lambda: roc_auc_score(df["relevance"], df["score"]),
        "num_ret": lambda: prk.evaluate(df, ["num_ret"]),
        "num_ret(aggregate=sum)": lambda: prk.evaluate(df, ["num_ret(aggregate=sum)"]),
        "map": lambda: prk.evaluate(df, ["map"]),
        "map(tie_group=threshold)": lambda: prk.evaluate(df, ["map(tie_group=threshold)"]),
        "sklearn average_precision_score per user (scaled)": sk_ap,
    }
    for fn in cases.values():  # warm-up: imports, caches
        fn()
    times: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(args.repeats):
        for name, fn in cases.items():
            times[name].append(timed(fn))
    median = {name: statistics.median(t) for name, t in times.items()}
    median["sklearn average_precision_score per user (scaled)"] *= scale
    against = {
        "auc(aggregate=relevant_weighted)": "auc",
        "auc(aggregate=pooled)": "auc",
        "sklearn roc_auc_score (pooled)": "auc(aggregate=pooled)",
        "num_ret(aggregate=sum)": "num_ret",
        "map(tie_group=threshold)": "map",
        "sklearn average_precision_score per user (scaled)": "map(tie_group=threshold)",
    }
    lines = [
        f"{args.users:,} users x {args.items} candidates ({args.users * args.items:,} rows), "
        f"scores on a 0.1 grid (ties), median of {args.repeats} interleaved runs.",
        "",
        "| case | seconds | ratio | against |",
        "| --- | ---: | ---: | --- |",
    ]
    for name, seconds in median.items():
        base = against.get(name)
        ratio = f"{seconds / median[base]:.2f}x" if base else "—"
        lines.append(f"| `{name}` | {seconds:.3f} | {ratio} | {f'`{base}`' if base else '—'} |")
    table = "\n".join(lines)
    print(table)
    if args.record:
        path = Path(__file__).with_name("RESULTS_AGGREGATE.md")
        head = (
            "# aggregate= and map(tie_group=threshold)\n\n"
            "`python benchmarks/bench_aggregate.py --record` (sklearn's per-user AP on "
            f"{args.sk_users:,} users, scaled to all).\n\n"
        )
        path.write_text(head + table + "\n")
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
