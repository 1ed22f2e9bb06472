"""The small bundled example: trec_eval's own test run and its relevance judgments."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import polars as pl

from polars_rankeval._utils.constraints import validate_params
from polars_rankeval.io.trec.read import scan_qrels, scan_run


@validate_params({})  # no parameter
def example_paths() -> tuple[Path, Path]:
    """Paths of the bundled TREC qrels and run files (3 queries, 1,500 ranked documents)."""
    root = resources.files("polars_rankeval") / "data"
    return Path(str(root / "qrels.test")), Path(str(root / "results.test"))


@validate_params({})  # no parameter
def load_example() -> pl.DataFrame:
    """The bundled example as one long frame ``user, item, score, relevance``.

    Examples
    --------
    >>> from polars_rankeval.api.datasets import load_example
    >>> df = load_example()
    >>> df.columns, df.height, df["user"].n_unique()
    (['user', 'item', 'score', 'relevance'], 4443, 3)
    """
    from polars_rankeval.api.evaluate import join

    qrels, run = example_paths()
    joined = join(scan_run(run).select("user", "item", "score"), scan_qrels(qrels))
    assert isinstance(joined, pl.LazyFrame)
    return joined.collect().sort("user", "item")


@validate_params({})  # no parameter
def systems_paths() -> tuple[Path, Path]:
    """Paths of the bundled multi-system example: (qrels, runs) Parquet files.

    ``systems_qrels.parquet`` has ``user, item, relevance`` (grades 0-2) and
    ``systems_runs.parquet`` has ``system, user, item, score`` (top 20 per user).
    """
    root = resources.files("polars_rankeval") / "data"
    return Path(str(root / "systems_qrels.parquet")), Path(str(root / "systems_runs.parquet"))


@validate_params({})  # no parameter
def load_systems() -> pl.DataFrame:
    """Four systems ranking for the same 500 users: ``system, user, item, score, relevance``.

    A small TREC-like example for comparing systems (:func:`polars_rankeval.compare`):
    500 queries ("users") with graded judgments over 5,000 documents, and the top 20
    of four systems of increasing quality: ``random`` (ignores relevance), ``bm25``,
    ``dense`` and ``hybrid`` (close to ``dense``: some of their differences are
    significant, some are not). Each query's difficulty scales every system's quality, so
    per-user values are correlated across systems. Generated deterministically by
    ``scripts/make_systems.py`` (synthetic scores from the judgments plus noise); the
    frame is :func:`polars_rankeval.join` of the runs and the qrels by system.

    Examples
    --------
    >>> from polars_rankeval.api.datasets import load_systems
    >>> df = load_systems()
    >>> df.columns, df["system"].unique().sort().to_list(), df["user"].n_unique()
    (['system', 'user', 'item', 'score', 'relevance'], ['bm25', 'dense', 'hybrid', 'random'], 500)
    """
    from polars_rankeval.api.evaluate import join

    qrels, runs = systems_paths()
    joined = join(pl.scan_parquet(runs), pl.scan_parquet(qrels), by="system")
    assert isinstance(joined, pl.LazyFrame)
    return joined.collect().sort("system", "user", "item")
