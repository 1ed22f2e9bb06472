"""Test helpers: random runs as frames and as ranx runs holding the same order."""

from __future__ import annotations

import numpy as np
import polars as pl

ranx = __import__("pytest").importorskip("ranx")
from numba import types  # noqa: E402
from numba.typed import Dict as TypedDict  # noqa: E402


def random_runs(
    seed: int,
    n_runs: int = 3,
    n_queries: int = 8,
    pool: int = 14,
    *,
    full: bool = False,
    every_query: bool = False,
) -> dict[str, pl.DataFrame]:
    """Runs with tied scores (one decimal), items missing from some lists and queries
    present in one run only (``full``: every run ranks every item of the pool;
    ``every_query``: every run has a list for every query)."""
    rng = np.random.default_rng(seed)
    runs = {}
    for r in range(n_runs):
        rows = []
        for q in range(n_queries):
            lacks = not (full or every_query)
            if lacks and q == n_queries - 1 and r > 0:
                continue  # the last query is in the first run only
            if lacks and rng.random() < 0.1:
                continue
            size = pool if full else int(rng.integers(1, pool))
            items = rng.choice(pool, size=size, replace=False)
            scale = [1.0, 10.0, 0.1][r % 3]
            for i in items:
                rows.append((f"q{q}", f"d{i:02d}", round(float(rng.random()), 1) * scale))
        runs[f"run{r}"] = pl.DataFrame(rows, schema=["user", "item", "score"], orient="row")
    return runs


def random_qrels(seed: int, n_queries: int = 8, pool: int = 14) -> pl.DataFrame:
    rng = np.random.default_rng(seed + 1000)
    rows = []
    for q in range(n_queries):
        items = rng.choice(pool, size=int(rng.integers(1, pool)), replace=False)
        rows += [(f"q{q}", f"d{i:02d}", int(rng.integers(0, 3))) for i in items]
    return pl.DataFrame(rows, schema=["user", "item", "relevance"], orient="row")


def to_ranx(frame: pl.DataFrame, queries: list[str]) -> ranx.Run:
    """A ranx Run in our order (score descending, then item descending) with an empty
    list for each query the frame lacks: ranx.fuse wants the same queries in every run,
    and breaks ties in its own (unstable quicksort) order, which a test cannot predict."""
    inner = types.DictType(types.unicode_type, types.float64)
    table = TypedDict.empty(key_type=types.unicode_type, value_type=inner)
    ordered = frame.sort(["user", "score", "item"], descending=[False, True, True])
    by_user = {u: g for (u,), g in ordered.group_by("user", maintain_order=True)}
    for q in sorted(queries):
        results = TypedDict.empty(key_type=types.unicode_type, value_type=types.float64)
        if q in by_user:
            for item, score in by_user[q].select("item", "score").iter_rows():
                results[item] = float(score)
        table[q] = results
    run = ranx.Run()
    run.run = table
    run.sorted = True
    return run


def to_ranx_qrels(qrels: pl.DataFrame) -> ranx.Qrels:
    table: dict[str, dict[str, int]] = {}
    for user, item, rel in qrels.iter_rows():
        table.setdefault(user, {})[item] = rel
    return ranx.Qrels(table)


def ranx_frame(run: ranx.Run) -> pl.DataFrame:
    rows = [(q, d, s) for q, docs in run.to_dict().items() for d, s in docs.items()]
    return pl.DataFrame(rows, schema=["user", "item", "score"], orient="row")
