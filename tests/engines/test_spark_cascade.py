"""The cascade measures (nerr, inst, insq) and rbo on Spark give the Polars values (1e-12)."""

from __future__ import annotations

import pytest
from polars.testing import assert_frame_equal

from tests.engines.test_spark import SparkSession, both, spark, systems

__all__ = ["spark"]  # the session fixture of test_spark.py

pytestmark = pytest.mark.spark

CASCADE = ["insq", "insq(depth=5,target=2)@3"]
DETERMINISTIC = [
    "nerr",
    "nerr@3",
    "inst",
    "inst(depth=4,target=2)@5",
    "rbo@3",
    "rbo(estimate=res,p=0.5)",
]


@pytest.mark.parametrize("ties", ["expected", "item_desc"])
def test_cascade_measures_match_polars(spark: SparkSession, ties: str) -> None:
    df = systems(20)
    metrics = CASCADE + (DETERMINISTIC if ties == "item_desc" else [])
    got, expected = both(spark, df, metrics, ties=ties, by="system", per_user=True)
    assert expected.height > 90
    assert_frame_equal(got, expected, abs_tol=1e-12, rel_tol=1e-12)
    got, expected = both(spark, df, metrics, ties=ties, by="system")
    assert_frame_equal(got, expected, abs_tol=1e-12, rel_tol=1e-12)
