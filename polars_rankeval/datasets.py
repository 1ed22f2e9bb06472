"""The small bundled example: trec_eval's own test run and its relevance judgments."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import polars as pl

from polars_rankeval.trec import scan_qrels, scan_run


def example_paths() -> tuple[Path, Path]:
    """Paths of the bundled TREC qrels and run files (3 queries, 1,500 ranked documents)."""
    root = resources.files("polars_rankeval") / "data"
    return Path(str(root / "qrels.test")), Path(str(root / "results.test"))


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
    joined = join(scan_run(run).select("user", "item", "score"), scan_qrels(qrels))
    assert isinstance(joined, pl.LazyFrame)
    return joined.collect().sort("user", "item")
