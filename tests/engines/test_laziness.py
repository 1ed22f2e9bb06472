"""Lazy in, lazy out: ``evaluate`` of a LazyFrame reads nothing until it is collected.

The source is a Polars IO source that records every read; ``evaluate`` must leave it
unread on every path (in memory, bucketed, partitioned, sorted head, with data-wide
statistics) and give the in-memory numbers at ``collect``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import polars as pl
import pytest
from polars.io.plugins import register_io_source
from polars.testing import assert_frame_equal

import polars_rankeval as prk
from tests._reference import random_frame


class Watched:
    """A LazyFrame over ``frame`` that counts how often Polars reads it."""

    def __init__(self, frame: pl.DataFrame) -> None:
        self.frame = frame
        self.reads = 0

    def lazy(self) -> pl.LazyFrame:
        def source(
            with_columns: list[str] | None,
            predicate: pl.Expr | None,
            n_rows: int | None,
            batch_size: int | None,
        ) -> Iterator[pl.DataFrame]:
            self.reads += 1
            out = self.frame if with_columns is None else self.frame.select(with_columns)
            if predicate is not None:
                out = out.filter(predicate)
            yield out if n_rows is None else out.head(n_rows)

        return register_io_source(io_source=source, schema=self.frame.schema)


FRAME = random_frame(5, n_users=40, max_items=8)
HEAD = ["ndcg@3", "precision@2", "mrr@5"]
GENERAL = ["map", "ndcg", "fallout@3", "global_auc"]
STATISTICS = ["ndcg(gain=exp)@3", "nmae"]


@pytest.mark.parametrize(
    ("metrics", "engine"),
    [
        pytest.param(HEAD, "auto", id="head-auto"),
        pytest.param(HEAD, "memory", id="head-memory"),
        pytest.param(GENERAL, "memory", id="memory-statistics"),
        pytest.param(GENERAL, prk.Auto(memory_limit="1GB"), id="auto-memory"),
        pytest.param(GENERAL, prk.Auto(memory_limit=2_000), id="auto-partition"),
        pytest.param(GENERAL, prk.Buckets(n_buckets=3), id="buckets"),
        pytest.param(HEAD, prk.Buckets(n_buckets=3), id="head-buckets"),
        pytest.param(GENERAL, prk.Partition(n_buckets=4), id="partition"),
        pytest.param(HEAD, prk.Partition(n_buckets=4), id="head-partition"),
        pytest.param(STATISTICS, prk.Partition(n_buckets=2), id="statistics-partition"),
    ],
)
@pytest.mark.parametrize("per_user", [False, True])
def test_nothing_is_read_before_collect(metrics: list[str], engine: Any, per_user: bool) -> None:
    if per_user:
        metrics = [m for m in metrics if not m.startswith("global_")]
    watched = Watched(FRAME)
    result = prk.evaluate(watched.lazy(), metrics, engine=engine, per_user=per_user)
    assert isinstance(result, pl.LazyFrame)
    assert watched.reads == 0
    expected = prk.evaluate(FRAME, metrics, engine="memory", per_user=per_user)
    got = result.collect()
    assert watched.reads > 0
    sort = ["user"] if per_user else []
    assert_frame_equal(got.sort(sort), expected.sort(sort), abs_tol=1e-12)


def test_the_lazy_result_composes_with_other_queries() -> None:
    watched = Watched(FRAME)
    metrics = GENERAL[:3]
    result = prk.evaluate(watched.lazy(), metrics, per_user=True, engine=prk.Buckets(n_buckets=2))
    query = result.filter(pl.col("map") > 0.5).select("user", "map").sort("user")
    assert watched.reads == 0
    expected = prk.evaluate(FRAME, metrics, per_user=True)
    assert_frame_equal(
        query.collect(), expected.filter(pl.col("map") > 0.5).select("user", "map").sort("user")
    )


def test_errors_of_the_data_are_raised_at_collect() -> None:
    bad = pl.concat([FRAME, FRAME.head(1)])  # a duplicate (user, item) row
    for engine in ("auto", "memory", prk.Buckets(n_buckets=2), prk.Partition(n_buckets=3)):
        watched = Watched(bad)
        result = prk.evaluate(watched.lazy(), GENERAL, engine=engine)
        assert watched.reads == 0
        with pytest.raises(ValueError, match="share a"):
            result.collect()


def test_a_join_of_two_scans_is_not_computed_at_the_call() -> None:
    recs = Watched(FRAME.filter(pl.col("score").is_not_null()).select("user", "item", "score"))
    truth = Watched(FRAME.filter(pl.col("relevance") > 0).select("user", "item", "relevance"))
    joined = prk.join(recs.lazy(), truth.lazy())
    result = prk.evaluate(joined, ["ndcg@3", "fallout@3"])
    assert recs.reads == truth.reads == 0
    assert result.collect().height == 1


def test_engine_memory_returns_the_plan_itself() -> None:
    plan = prk.evaluate(FRAME.lazy(), HEAD, engine="memory")
    assert "PYTHON SCAN" not in plan.explain()
    deferred = prk.evaluate(FRAME.lazy(), HEAD)  # auto: decided when collected
    assert "PYTHON SCAN" in deferred.explain()
    assert_frame_equal(plan.collect(), deferred.collect())
