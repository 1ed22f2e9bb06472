"""Beyond-accuracy benchmark: diversity exactly and fast.

1. **Inter-list diversity@10 on 10M rows** (100,000 users x 100 candidates): the exact
   value (``prk.evaluate(..., "inter_list_diversity@10")``, O(rows)) beside Jurity's
   default sampled estimate (10 runs of 10,000 users, pairwise cosine distances with
   scikit-learn: ``jurity.recommenders.InterListDiversity``, when ``jurity`` is
   installed) and this package's reproduction of that sampling
   (``prk.inter_list_diversity_sampled``), with the estimates' errors against the exact
   value. An exact pairwise computation over 100,000 users (5e9 pairs) is what the
   sampling avoids; the tests check the exact formula against pairwise brute force.
2. **Intra-list diversity@10 with 64-dimensional features** (50,000 users x 20
   candidates, 10,007 items): this package's O(k·d) per user (sum of unit vectors;
   features as an Array and as a List column) beside straightforward O(k²·d) versions:
   every pair of the top 10 by a Polars self-join, the same pairs as a dense numpy
   Gram tensor (``einsum``), and Jurity's ``IntraListDiversity`` (all users, no
   sampling) when installed. All must agree.

Data are generated on the fly with numpy (seed 0) and never written to disk. Scores
are continuous (no ties), so every implementation sees the same top 10.

Usage::

    python benchmarks/bench_beyond.py            # full sizes
    python benchmarks/bench_beyond.py --quick    # 1/10 of the users
    python benchmarks/bench_beyond.py --record   # also write RESULTS_BEYOND.md
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib.metadata
import os
import platform
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

import polars_rankeval as prk

HERE = Path(__file__).resolve().parent
N_ITEMS = 10_007  # a prime: (a * j + b) mod N_ITEMS gives distinct items per user
K = 10
DIM = 64


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def candidates(n_users: int, per_user: int, seed: int) -> pl.DataFrame:
    """``per_user`` distinct items per user; popular (low-id) items score higher."""
    rng = np.random.default_rng(seed)
    a = rng.integers(1, N_ITEMS, n_users)
    b = rng.integers(0, N_ITEMS, n_users)
    j = np.arange(per_user)
    item = ((a[:, None] * j[None, :] + b[:, None]) % N_ITEMS).ravel()
    score = -0.5 * np.log1p(item) + rng.normal(size=item.size)
    return pl.DataFrame(
        {
            "user": np.repeat(np.arange(n_users, dtype=np.int64), per_user),
            "item": item.astype(np.int64),
            "score": score,
            "relevance": pl.Series(dtype=pl.Int8).extend_constant(None, item.size),
        }
    )


# --------------------------------------------------------------------------- inter-list
def bench_inter(n_users: int, lines: list[str]) -> None:
    df = candidates(n_users, 100, seed=0)
    lines.append(
        f"### Inter-list diversity@{K}: {df.height:,} rows ({n_users:,} users x 100 "
        f"candidates, {N_ITEMS:,} items)\n"
    )
    rows = [("| what | seconds | value | error vs exact |", "|---|---|---|---|")]
    metric = f"inter_list_diversity@{K}"
    t_exact, out = timed(lambda: prk.evaluate(df, metric, users="recs"))
    exact = out.item(0, metric)
    t_fast, _ = timed(lambda: prk.evaluate(df, metric, users="recs", validate=False))
    table = [
        f"| prk exact, `evaluate(..., '{metric}')` (validate=True) | {t_exact:.2f} | "
        f"{exact:.6f} | 0 |",
        f"| prk exact, validate=False | {t_fast:.2f} | {exact:.6f} | 0 |",
    ]
    t_sampled, sampled = timed(lambda: prk.inter_list_diversity_sampled(df, K))
    table.append(
        f"| prk `inter_list_diversity_sampled` (10 runs x 10,000 users, seed 1) | "
        f"{t_sampled:.2f} | {sampled:.6f} | {sampled - exact:+.2e} |"
    )
    spread = [prk.inter_list_diversity_sampled(df, K, seed=s) - exact for s in range(2, 7)]
    table.append(
        f"| same, seeds 2..6: error range | | | {min(spread):+.2e} .. {max(spread):+.2e} |"
    )
    try:
        from jurity.recommenders import InterListDiversity
    except ImportError:
        table.append("| Jurity `InterListDiversity` (default sampling) | not installed | | |")
    else:
        pdf = df.select("user", "item", "score").to_pandas()
        jurity = InterListDiversity(
            click_column="score", k=K, user_id_column="user", item_id_column="item"
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t_jurity, value = timed(lambda: float(jurity.get_score(None, pdf)))
        table.append(
            f"| Jurity `InterListDiversity(k={K})` (defaults: 10 runs x 10,000 users) | "
            f"{t_jurity:.2f} | {value:.6f} | {value - exact:+.2e} |"
        )
    lines += [rows[0][0], rows[0][1], *table, ""]


# --------------------------------------------------------------------------- intra-list
def top_k(df: pl.DataFrame, k: int) -> pl.DataFrame:
    return (
        df.sort(["user", "score"], descending=[False, True])
        .group_by("user", maintain_order=True)
        .head(k)
    )


def pairwise_polars(df: pl.DataFrame, unit: pl.DataFrame, k: int) -> float:
    """O(k²·d): every pair of the top k by a self-join, dot products of unit vectors."""
    top = top_k(df, k).select("user", "item")
    pairs = top.join(top, on="user", suffix="_q").filter(pl.col("item") < pl.col("item_q"))
    pairs = pairs.join(unit, on="item").join(
        unit.rename({"item": "item_q", "u": "u_q"}), on="item_q"
    )
    cos = (pl.col("u") * pl.col("u_q")).arr.sum()
    per_user = pairs.group_by("user").agg((1.0 - cos).mean().alias("value"))
    return float(per_user.get_column("value").mean())  # type: ignore[arg-type]


def gram_numpy(df: pl.DataFrame, vectors: np.ndarray, k: int) -> float:
    """O(k²·d) dense: a (users, k, d) tensor of unit vectors and its per-user Gram."""
    top = top_k(df, k)
    items = top.get_column("item").to_numpy().reshape(-1, k)
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    x = unit[items]
    gram = np.einsum("ukd,ujd->ukj", x, x)
    upper = np.triu_indices(k, 1)
    return float(np.mean(1.0 - gram[:, upper[0], upper[1]].mean(axis=1)))


def bench_intra(n_users: int, per_user: int, k: int, lines: list[str]) -> None:
    df = candidates(n_users, per_user, seed=1)
    rng = np.random.default_rng(2)
    vectors = rng.normal(size=(N_ITEMS, DIM))
    array = pl.DataFrame({"item": np.arange(N_ITEMS, dtype=np.int64), "features": vectors})
    listed = array.with_columns(pl.col("features").cast(pl.List(pl.Float64)))
    unit = pl.DataFrame(
        {
            "item": np.arange(N_ITEMS, dtype=np.int64),
            "u": vectors / np.linalg.norm(vectors, axis=1, keepdims=True),
        }
    )
    metric = f"intra_list_diversity@{k}"
    lines.append(
        f"### Intra-list diversity@{k}: {df.height:,} rows ({n_users:,} users x {per_user} "
        f"candidates), {DIM}-dimensional features for {N_ITEMS:,} items\n"
    )
    lines += ["| what | complexity per user | seconds | value |", "|---|---|---|---|"]

    def ours(items: pl.DataFrame) -> float:
        out = prk.evaluate(df, metric, items=items, users="recs", validate=False)
        return float(out.item(0, metric))

    results = []
    for label, fn, cost in [
        ("prk `evaluate`, features as Array(Float64, 64)", lambda: ours(array), "O(k·d)"),
        ("prk `evaluate`, features as List(Float64)", lambda: ours(listed), "O(k·d)"),
        ("Polars self-join of the top-k pairs", lambda: pairwise_polars(df, unit, k), "O(k²·d)"),
        ("numpy dense Gram tensor (einsum)", lambda: gram_numpy(df, vectors, k), "O(k²·d)"),
    ]:
        seconds, value = timed(fn)
        results.append(value)
        lines.append(f"| {label} | {cost} | {seconds:.2f} | {value:.9f} |")
    try:
        from jurity.recommenders import IntraListDiversity
    except ImportError:
        lines.append("| Jurity `IntraListDiversity` | O(k²·d) | not installed | |")
    else:
        features = pl.DataFrame(
            {"item": np.arange(N_ITEMS, dtype=np.int64)}
            | {f"f{i}": vectors[:, i] for i in range(DIM)}
        ).to_pandas()
        jurity = IntraListDiversity(
            features,
            click_column="score",
            k=k,
            user_id_column="user",
            item_id_column="item",
            user_sample_size=None,
        )
        pdf = df.select("user", "item", "score").to_pandas()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            seconds, value = timed(lambda: float(jurity.get_score(None, pdf)))
        results.append(value)
        lines.append(
            f"| Jurity `IntraListDiversity` (all users; item x item distance matrix) | "
            f"O(k²) lookups + O(items²·d) | {seconds:.2f} | {value:.9f} |"
        )
    spread = max(results) - min(results)
    lines += ["", f"Largest difference between the values: {spread:.1e}.", ""]
    if spread > 1e-9:
        msg = f"intra-list implementations disagree by {spread}"
        raise AssertionError(msg)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1/10 of the users")
    parser.add_argument("--record", action="store_true", help="write RESULTS_BEYOND.md")
    args = parser.parse_args()
    scale = 10 if args.quick else 1
    load = os.getloadavg()
    lines = [
        "# Beyond-accuracy benchmark results",
        "",
        "Generated by `python benchmarks/bench_beyond.py --record`; one run each, wall "
        "time including the top-k selection.",
        "",
        f"- date: {dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M} UTC",
        f"- machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
        f"{platform.platform()}",
        f"- versions: Python {platform.python_version()}, polars {pl.__version__} "
        f"({pl.thread_pool_size()} threads), numpy {np.__version__}, jurity "
        f"{_version('jurity')}, scikit-learn {_version('scikit-learn')}",
        f"- load average at start: {load[0]:.1f}/{load[1]:.1f}/{load[2]:.1f}",
        "",
    ]
    bench_inter(100_000 // scale, lines)
    bench_intra(50_000 // scale, 20, 10, lines)
    bench_intra(2_000 // scale, 100, 50, lines)
    text = "\n".join(lines)
    print(text)
    if args.record:
        (HERE / "RESULTS_BEYOND.md").write_text(text + _notes(), encoding="utf-8")


def _version(distribution: str) -> str:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def _notes() -> str:
    path = HERE / "RESULTS_BEYOND.md"
    if path.exists():
        text = path.read_text(encoding="utf-8")
        start = text.find("<!-- notes:start -->")
        if start >= 0:
            return "\n" + text[start:]
    return "\n<!-- notes:start -->\n<!-- notes:end -->\n"


if __name__ == "__main__":
    main()
