"""A rank repeated within a user under ``rank_positions="absolute"`` (RecTools).

RecTools never checks that a user's ranks are distinct. Its own test suite repeats a
rank in ``tests/metrics/test_catalog.py`` (``TestCatalogCoverage``: user 2 has items 1
and 2 both at rank 1; CatalogCoverage@2 over a catalog of 5 is 0.4) and in the
reference list of ``tests/metrics/test_intersection.py`` (user 5: ranks 1, 2, 2, 9).
The decision here: a repeated rank is accepted when every requested metric reads only
whether an item is within the top k (``_positions.repeat_safe_metrics()``: coverage, recall,
hit_rate and the counts), and refused with a message otherwise (order-sensitive
metrics have no position for two items at one rank; RecTools' MAP, NDCG and Precision
then give artefacts).

Tests the private unit polars_rankeval.plan.positions on purpose (its REPEAT_SAFE).
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

import polars_rankeval as prk
from polars_rankeval.plan.positions import repeat_safe_metrics

ABSOLUTE = {"rank": "rank", "score": None, "rank_positions": "absolute"}


def test_rectools_catalog_coverage_vector() -> None:
    # RecTools tests/metrics/test_catalog.py, TestCatalogCoverage (k=2, catalog 0..4):
    # items ranked <= 2 are {1, 2} (user 2 has both at rank 1): 2 / 5 = 0.4.
    reco = pl.DataFrame(
        {
            "user": [1, 1, 1, 2, 2, 3, 4],
            "item": [1, 2, 3, 1, 2, 1, 1],
            "rank": [1, 2, 3, 1, 1, 3, 2],
        }
    ).with_columns(relevance=pl.lit(None, dtype=pl.Int64))
    out = prk.evaluate(
        reco,
        ["CatalogCoverage(normalize=true)@2"],
        conventions="rectools",
        users="recs",
        rank="rank",
        n_items=5,
    )
    assert out.item(0, "CatalogCoverage(normalize=true)@2[rectools]") == pytest.approx(2 / 5)


def test_hand_computed_membership() -> None:
    # Items a and b share rank 1, c is at rank 3, d (relevant) was not recommended.
    df = pl.DataFrame(
        {
            "user": [1, 1, 1, 1],
            "item": ["a", "b", "c", "d"],
            "rank": [1, 1, 3, None],
            "relevance": [1, 0, 1, 1],
        }
    )
    metrics = ["recall@1", "hit_rate@1", "num_rel_ret@1", "num_ret@1", "recall@3", "num_ret@2"]
    out = prk.evaluate(df, metrics, **ABSOLUTE).row(0, named=True)
    assert out["recall@1"] == pytest.approx(1 / 3)  # a within rank 1, of a, c, d
    assert out["hit_rate@1"] == 1.0
    assert out["num_rel_ret@1"] == 1.0
    assert out["num_ret@1"] == 2.0  # a and b share rank 1
    assert out["recall@3"] == pytest.approx(2 / 3)  # a and c
    assert out["num_ret@2"] == 2.0  # rank 3 is outside @2 (gaps kept)


@pytest.mark.parametrize("ties", ["expected", "item_desc", "pessimistic"])
def test_random_membership_matches_direct_counts(ties: str) -> None:
    rng = np.random.default_rng(8)
    rows = []
    for user in range(80):
        n = int(rng.integers(1, 8))
        for item, rank in zip(rng.choice(40, n, replace=False), rng.integers(1, 6, n), strict=True):
            rows.append((user, int(item), int(rank), int(rng.random() < 0.4)))
        rows.append((user, 100 + user, None, 1))  # a relevant item never recommended
    df = pl.DataFrame(rows, schema=["user", "item", "rank", "relevance"], orient="row")
    got = prk.evaluate(
        df,
        ["recall@3", "hit_rate@3", "num_rel_ret@3", "num_ret@3"],
        per_user=True,
        ties=ties,
        **ABSOLUTE,
    ).sort("user")
    top, rel = pl.col("rank").fill_null(99) <= 3, pl.col("relevance") >= 1
    direct = (
        df.group_by("user")
        .agg(
            recall=(top & rel).sum() / rel.sum(),
            hit=((top & rel).sum() > 0).cast(pl.Float64),
            hits=(top & rel).sum().cast(pl.Float64),
            size=top.sum().cast(pl.Float64),
        )
        .sort("user")
    )
    assert got["recall@3"].to_list() == pytest.approx(direct["recall"].to_list())
    assert got["hit_rate@3"].to_list() == direct["hit"].to_list()
    assert got["num_rel_ret@3"].to_list() == direct["hits"].to_list()
    assert got["num_ret@3"].to_list() == direct["size"].to_list()
    coverage = prk.evaluate(df, ["coverage@3"], users="recs", ties=ties, **ABSOLUTE).item(0, 0)
    assert coverage == pytest.approx(
        df.filter(pl.col("rank") <= 3)["item"].n_unique() / df["item"].n_unique()
    )


def test_order_sensitive_metrics_refuse_a_repeated_rank() -> None:
    df = pl.DataFrame(
        {"user": [1, 1, 1], "item": [1, 2, 3], "rank": [1, 1, 2], "relevance": [1, 1, 0]}
    )
    assert set(repeat_safe_metrics()) == {
        "coverage",
        "hit_rate",
        "num_rel",
        "num_rel_ret",
        "num_ret",
        "recall",
    }
    for metric in ("map@3", "ndcg@3", "mrr@3", "precision@2"):
        with pytest.raises(ValueError, match="repeats a rank within a user 1 time") as err:
            prk.evaluate(df, ["recall@2", metric], **ABSOLUTE)
        assert f"must be distinct for {metric.split('@')[0]} " in str(err.value)
        assert "rank_positions='relative'" in str(err.value)
    # The same ranks read as an order: a and b are tied at the top.
    relative = prk.evaluate(df, ["map@3"], rank="rank", score=None, ties="expected")
    assert relative.item(0, 0) == pytest.approx(1.0)  # both relevant items fill ranks 1-2
    with pytest.raises(ValueError, match="must be distinct for map "):
        prk.evaluate(df, ["MAP@3"], conventions="rectools", rank="rank")
