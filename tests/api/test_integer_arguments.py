"""One type rule for every public integer argument (``polars_rankeval._utils.types.integer``).

A Python or NumPy integer is accepted; a bool, a float (even ``5.0``) or a string
(even ``"5"``) is a ``TypeError`` naming the argument. The table below lists every
public integer argument once: (call taking the value, argument name, a valid value).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import polars as pl
import pytest

import polars_rankeval as prk
from polars_rankeval import plot
from polars_rankeval.api.spark import SparkEngine

DF = pl.DataFrame(
    {
        "user": [1, 1, 1, 2, 2, 2],
        "item": [1, 2, 3, 1, 2, 4],
        "score": [3.0, 2.0, 1.0, 3.0, 2.0, 1.0],
        "relevance": [1, 0, 1, 0, 1, 0],
    }
)
SYSTEMS = pl.concat([DF.with_columns(system=pl.lit(s)) for s in ("a", "b")])
TRUTH = DF.filter(pl.col("relevance") > 0).select("user", "item", "relevance")


CATALOG = [1, 2, 3, 4, 5, 6]


def _negatives(**options: Any) -> Any:
    return prk.sample_negatives(TRUTH, catalog=CATALOG, **{"n_negatives": 1, **options})


def _table(**options: Any) -> Any:
    return prk.correction_table("hit_rate@1", **{"n_items": 4, "n_negatives": 2, **options})


def _compare(**options: Any) -> Any:
    return prk.compare(SYSTEMS, ["ndcg@3"], **{"n_resamples": 20, **options})


def _ild(**options: Any) -> Any:
    return prk.inter_list_diversity_sampled(DF, **{"k": 3, **options})


def _report(digits: Any) -> Any:
    return prk.report(prk.compare(SYSTEMS, ["ndcg@3"], n_resamples=20), digits=digits)


CASES: list[tuple[str, Callable[[Any], Any], str, int]] = [
    ("metric-k", lambda v: prk.recall(v), "cutoff k", 5),
    ("metric-k-ndcg", lambda v: prk.ndcg(v), "cutoff k", 10),
    ("metric-option", lambda v: prk.inst(depth=v, max_grade=3), "depth", 5),
    ("fallout-n-items", lambda v: prk.fallout(3, n_items=v), "n_items", 10),
    ("evaluate-n-items", lambda v: prk.evaluate(DF, ["ndcg@3"], n_items=v), "n_items", 10),
    (
        "evaluate-n-buckets",
        lambda v: prk.evaluate(DF, ["ndcg@3"], engine=prk.Buckets(n_buckets=v)),
        "n_buckets",
        2,
    ),
    (
        "memory-limit",
        lambda v: prk.evaluate(DF, ["ndcg@3"], engine=prk.Auto(memory_limit=v)),
        "memory_limit",
        10**9,
    ),
    ("curve-ks", lambda v: prk.curve(DF, "recall", ks=v), "ks", 5),
    ("curve-ks-entry", lambda v: prk.curve(DF, "recall", ks=[1, v]), "ks", 2),
    ("negatives-n", lambda v: _negatives(n_negatives=v), "n_negatives", 3),
    ("negatives-seed", lambda v: _negatives(seed=v), "seed", 3),
    ("sampled-n-items", lambda v: prk.evaluate_sampled(DF, "recall@3", n_items=v), "n_items", 9),
    ("table-n-items", lambda v: _table(n_items=v), "n_items", 4),
    ("table-n-negatives", lambda v: _table(n_negatives=v), "n_negatives", 2),
    ("compare-n-resamples", lambda v: _compare(n_resamples=v), "n_resamples", 20),
    ("compare-seed", lambda v: _compare(seed=v), "seed", 1),
    ("report-digits", _report, "digits", 3),
    ("ild-k", lambda v: _ild(k=v), "k", 3),
    ("ild-sample-size", lambda v: _ild(sample_size=v), "sample_size", 2),
    ("ild-runs", lambda v: _ild(runs=v), "runs", 2),
    ("ild-seed", lambda v: _ild(seed=v), "seed", 2),
    ("spark-partitions", lambda v: SparkEngine(n_partitions=v), "n_partitions", 4),
    ("lorenz-k", lambda v: plot.lorenz_data(SYSTEMS, k=v), "k", 2),
    ("lorenz-max-points", lambda v: plot.lorenz_data(SYSTEMS, max_points=v), "max_points", 5),
    ("lorenz-n-items", lambda v: plot.lorenz_data(SYSTEMS, n_items=v), "n_items", 10),
]  # fmt: skip
IDS = [case[0] for case in CASES]


@pytest.mark.parametrize(("name", "call", "argument", "valid"), CASES, ids=IDS)
@pytest.mark.parametrize("kind", [int, np.int32, np.int64, np.uint32])
def test_python_and_numpy_integers_are_accepted(
    name: str, call: Callable[[Any], Any], argument: str, valid: int, kind: Any
) -> None:
    call(kind(valid))


@pytest.mark.parametrize(("name", "call", "argument", "valid"), CASES, ids=IDS)
@pytest.mark.parametrize("bad", ["str", "float", "bool"])
def test_strings_floats_and_bools_are_refused(
    name: str, call: Callable[[Any], Any], argument: str, valid: int, bad: str
) -> None:
    if bad == "str" and argument == "memory_limit":
        return  # memory_limit also reads '4GB'
    value = {"str": str(valid), "float": float(valid), "bool": True}[bad]
    got = rf"got (an entry )?{type(value).__name__} "  # a list's entry is named as one
    with pytest.raises(TypeError, match=rf"{argument}\b.* must be .*, {got}"):
        call(value)


def test_numpy_cutoff_arrays() -> None:
    want = prk.curve(DF, "recall", ks=[1, 2, 3, 4, 5])
    assert prk.curve(DF, "recall", ks=np.arange(1, 6)).equals(want)
    assert prk.curve(DF, "recall", ks=range(1, 6)).equals(want)
    assert prk.curve(DF, "recall", ks=np.int64(5)).equals(want)
