"""Generate the bundled multi-system example (polars_rankeval/data/systems_*.parquet).

A TREC-like setting: 500 queries ("users") over a collection of 5,000 documents
("items"); each query has 3-12 relevant documents (grade 1 or 2) and 5-20 judged
non-relevant ones. Four systems return their top 20 documents per query from a
candidate pool of the query's judged documents plus 150 random unjudged ones:

- ``random``: scores ignore relevance (a floor);
- ``bm25``: score = quality x grade + noise, quality 1.0;
- ``dense``: quality 1.25;
- ``hybrid``: quality 1.4, close to dense: some differences between them are
  significant, some are not.

Every system draws its own noise (standard normal) for every candidate.

Each query has a difficulty factor (log-normal) that scales every system's quality,
so per-query values are correlated across systems, as in real runs. Scores are
rounded to 3 decimals (some ties). Deterministic: numpy Generator(PCG64(20261123)).

Run from the repository root: ``python scripts/make_systems.py``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl

SEED = 20261123
N_USERS = 500
N_ITEMS = 5_000
POOL = 150
TOP = 20
SYSTEMS = {"random": 0.0, "bm25": 1.0, "dense": 1.25, "hybrid": 1.4}
OUT = Path(__file__).resolve().parents[1] / "polars_rankeval" / "data"


def main() -> None:
    """Write the two Parquet files and print their sizes."""
    rng = np.random.Generator(np.random.PCG64(SEED))
    qrels_rows: list[tuple[int, int, int]] = []
    run_rows: list[tuple[str, int, int, float]] = []
    for user in range(1, N_USERS + 1):
        n_rel = int(rng.integers(3, 13))
        n_non = int(rng.integers(5, 21))
        judged = rng.choice(N_ITEMS, size=n_rel + n_non, replace=False) + 1
        grades = np.concatenate([rng.choice([1, 2], size=n_rel, p=[0.6, 0.4]), np.zeros(n_non)])
        qrels_rows += [(user, int(i), int(g)) for i, g in zip(judged, grades, strict=True)]
        others = np.setdiff1d(rng.choice(N_ITEMS, size=POOL, replace=False) + 1, judged)
        pool = np.concatenate([judged, others])
        gain = np.concatenate([grades, np.zeros(others.size)])
        difficulty = float(rng.lognormal(0.0, 0.5))
        scores = {}
        for system, quality in SYSTEMS.items():
            noise = rng.normal(0.0, 1.0, size=pool.size)
            scores[system] = quality * difficulty * gain + noise
        for system, score in scores.items():
            top = np.argsort(-score, kind="stable")[:TOP]
            run_rows += [(system, user, int(pool[i]), round(float(score[i]), 3)) for i in top]
    qrels = pl.DataFrame(
        qrels_rows, schema={"user": pl.Int32, "item": pl.Int32, "relevance": pl.Int8}, orient="row"
    ).sort("user", "item")
    runs = pl.DataFrame(
        run_rows,
        schema={"system": pl.String, "user": pl.Int32, "item": pl.Int32, "score": pl.Float64},
        orient="row",
    ).sort("system", "user", "item")
    qrels.write_parquet(OUT / "systems_qrels.parquet", compression="zstd", compression_level=22)
    runs.write_parquet(OUT / "systems_runs.parquet", compression="zstd", compression_level=22)
    for name in ("systems_qrels.parquet", "systems_runs.parquet"):
        print(name, (OUT / name).stat().st_size, "bytes")


if __name__ == "__main__":
    main()
