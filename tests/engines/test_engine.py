"""The engine interface: ``evaluate(engine=)``, the scalar vocabulary, ``run``.

Spark's side of the same interface is tested in ``tests/engines/test_spark.py``.

Tests the private units of polars_rankeval.engines and plan.interface on purpose.
"""

from __future__ import annotations

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import polars_rankeval as prk
from polars_rankeval._utils.types import make_columns
from polars_rankeval.engines.buckets import BucketedEngine
from polars_rankeval.engines.choice import Path, decide
from polars_rankeval.engines.memory import MemoryEngine, run
from polars_rankeval.plan.interface import Scalar
from polars_rankeval.plan.job import Job
from tests._reference import random_frame

METRICS = ["ndcg@3", "map", "mrr", "fallout@3", "global_auc"]


def test_engine_auto_is_the_default() -> None:
    df = random_frame(1, n_users=30, max_items=6)
    expected = prk.evaluate(df, METRICS)
    assert_frame_equal(prk.evaluate(df, METRICS, engine="auto"), expected)
    assert_frame_equal(prk.evaluate(df, METRICS, engine="memory"), expected)
    assert_frame_equal(prk.evaluate(df, METRICS, engine=prk.Memory()), expected)
    assert_frame_equal(prk.evaluate(df, METRICS, engine=prk.Buckets(n_buckets=3)), expected)


@pytest.mark.parametrize(
    ("engine", "error", "match"),
    [
        ("dask", ValueError, "'engine' of evaluate must be one of"),
        ("polars", ValueError, r"'engine' of evaluate must be one of \['auto', 'buckets'"),
        ("streaming", ValueError, r"got 'streaming', one of Polars' engines.*collect\(engine="),
        (5, TypeError, r"'engine' of evaluate must be one of .* or an engine object .*got int 5$"),
    ],
)
def test_bad_engine(engine: object, error: type[Exception], match: str) -> None:
    df = random_frame(1, n_users=3, max_items=3)
    with pytest.raises(error, match=match):
        prk.evaluate(df, "mrr", engine=engine)


def test_scalars_hand_computed() -> None:
    lf = pl.LazyFrame(
        {
            "user": [1, 1, None, 2],
            "item": [1, 2, 1, 1],
            "score": [0.5, float("nan"), float("inf"), 1.0],
            "relevance": [1, 0, 3, -1],
        }
    )
    found = MemoryEngine(lf, eager=False).scalars(
        {
            "rows": Scalar("len"),
            "users": Scalar("n_unique", "user"),  # 1, 2 and null
            "pairs": Scalar("n_unique", ("user", "item")),  # (1,1) (1,2) (null,1) (2,1)
            "null_users": Scalar("count", "user", "null"),
            "nan": Scalar("count", "score", "nan"),
            "bad": Scalar("count", "score", "nan_or_inf"),
            "negative": Scalar("count", "relevance", "below", 0.0, as_float=True),
            "top": Scalar("max", "relevance", as_float=True),
        }
    )
    assert found == {
        "rows": 4,
        "users": 3,
        "pairs": 4,
        "null_users": 1,
        "nan": 1,
        "bad": 2,
        "negative": 1,
        "top": 3.0,
    }


@pytest.mark.parametrize("per_user", [False, True])
def test_run_on_each_polars_engine_gives_evaluate(per_user: bool, tmp_path: object) -> None:
    df = random_frame(2, n_users=40, max_items=6)
    metrics = METRICS[:4] if per_user else METRICS
    expected = prk.evaluate(df, metrics, per_user=per_user)
    cols = make_columns(user="user", item="item", score=None, relevance="relevance", rank=None)

    def job() -> Job:
        return Job.create(
            df.schema,
            metrics,
            cols,
            by=None,
            ties="expected",
            users="truth",
            empty="skip",
            aggregate="mean",
            per_user=per_user,
        )

    head = decide(job(), prk.Memory()).head
    memory = run(job(), MemoryEngine(df.lazy(), eager=True), head=head).collect()
    engine = BucketedEngine(df.lazy(), k=3, mode="buckets", temp_dir=None, progress=False)
    bucketed = run(job(), engine, head=head)
    assert_frame_equal(memory, expected)
    assert_frame_equal(bucketed, expected, abs_tol=1e-12)


def test_decide_gives_the_path_of_every_engine() -> None:
    df = random_frame(3, n_users=30, max_items=6)
    cols = make_columns(user="user", item="item", score=None, relevance="relevance", rank=None)

    def job(metrics: list[str]) -> Job:
        return Job.create(
            df.schema,
            metrics,
            cols,
            by=None,
            ties="expected",
            users="truth",
            empty="skip",
            aggregate="mean",
            per_user=False,
        )

    head, general = job(["ndcg@3", "mrr@2"]), job(["ndcg", "map"])
    lf = df.lazy()
    assert decide(head, prk.Memory(), rows=lf) == Path("memory", True)
    assert decide(general, prk.Memory(), rows=lf) == Path("memory", False)
    assert decide(head, prk.Buckets(n_buckets=3), rows=lf) == Path("buckets", True, 3)
    assert decide(general, prk.Partition(n_buckets=4), rows=lf) == Path("partition", False, 4)
    assert decide(general, prk.Auto(memory_limit="1GB"), rows=lf) == Path("memory", False)
    # 1,000 bytes for the rows: bucketed; a scan over 2 buckets is partitioned
    tiny = decide(general, prk.Auto(memory_limit=1_000), rows=lf)
    assert tiny.where == "partition"
    assert tiny.k > 2
    eager = decide(general, prk.Auto(memory_limit=1_000), rows=lf, eager=True)
    assert eager.where == "buckets"
    assert eager.k == tiny.k
    # a bucket budget without a count: the count follows the budget and the rows
    assert decide(general, prk.Buckets(memory_limit=1_000), rows=lf).k == tiny.k
    assert decide(head, prk.Spark()).where == "spark"
