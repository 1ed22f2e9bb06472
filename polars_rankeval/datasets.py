"""The small bundled example: trec_eval's own test run and its relevance judgments."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import polars as pl


def example_paths() -> tuple[Path, Path]:
    """Paths of the bundled TREC qrels and run files (3 queries, 1,500 ranked documents)."""
    root = resources.files("polars_rankeval") / "data"
    return Path(str(root / "qrels.test")), Path(str(root / "results.test"))


def _split(path: str | Path, names: list[str]) -> pl.LazyFrame:
    """Read a whitespace-separated text file lazily, one column per field."""
    line = pl.col("line").str.strip_chars()
    parts = line.str.split_exact(" ", len(names) - 1)
    return (
        pl.scan_csv(
            path,
            has_header=False,
            separator="\x1f",
            quote_char=None,
            new_columns=["line"],
            schema_overrides={"line": pl.String},
        )
        .with_columns(pl.col("line").str.replace_all(r"\s+", " "))
        .filter(pl.col("line").str.strip_chars() != "")
        .select(parts.struct.rename_fields(names).alias("fields"))
        .unnest("fields")
    )


def read_qrels(path: str | Path) -> pl.LazyFrame:
    """TREC qrels (``qid iter docno rel``) as a LazyFrame ``user, item, relevance``."""
    return _split(path, ["user", "iter", "item", "relevance"]).select(
        "user", "item", pl.col("relevance").cast(pl.Int64)
    )


def read_run(path: str | Path) -> pl.LazyFrame:
    """TREC run (``qid Q0 docno rank score tag``) as a LazyFrame ``user, item, score, tag``."""
    return _split(path, ["user", "q0", "item", "rank", "score", "tag"]).select(
        "user", "item", pl.col("score").cast(pl.Float64), "tag"
    )


def load_example() -> pl.DataFrame:
    """The bundled example as one long frame ``user, item, score, relevance``.

    Examples
    --------
    >>> from polars_rankeval.datasets import load_example
    >>> df = load_example()
    >>> df.columns, df.height, df["user"].n_unique()
    (['user', 'item', 'score', 'relevance'], 4443, 3)
    """
    from polars_rankeval.evaluate import join

    qrels, run = example_paths()
    joined = join(read_run(run).select("user", "item", "score"), read_qrels(qrels))
    assert isinstance(joined, pl.LazyFrame)
    return joined.collect().sort("user", "item")
