"""ARHR (average reciprocal hit rank, Deshpande & Karypis 2004): hand-computed, ties, paths."""

from __future__ import annotations

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import polars_rankeval as prk
import polars_rankeval.plan.head as _head
from tests.plan.test_head_path import TIES, both, frame, uses_head_path


def _df() -> pl.DataFrame:
    return pl.DataFrame(
        {
            "user": [1, 1, 1, 1, 1, 2, 2, 2, 3, 3],
            "item": [1, 2, 3, 4, 5, 1, 2, 3, 1, 2],
            "score": [5.0, 4.0, 3.0, 2.0, None, 3.0, 2.0, 1.0, 2.0, 1.0],
            "relevance": [0, 1, 0, 2, 1, 1, 1, 1, 0, 0],
        }
    )


def test_hand_computed() -> None:
    out = prk.evaluate(_df(), ["arhr@3", "arhr@10", "arhr(rel=2)@10", "arhr"], per_user=True)
    rows = {row["user"]: row for row in out.iter_rows(named=True)}
    # User 1: hits at ranks 2 and 4 (item 5 was not recommended).
    assert rows[1]["arhr@3"] == pytest.approx(1 / 2)
    assert rows[1]["arhr@10"] == pytest.approx(1 / 2 + 1 / 4)
    assert rows[1]["arhr(rel=2)@10"] == pytest.approx(1 / 4)
    assert rows[1]["arhr"] == pytest.approx(1 / 2 + 1 / 4)
    # User 2: every item relevant.
    assert rows[2]["arhr@3"] == pytest.approx(1 + 1 / 2 + 1 / 3)
    assert rows[2]["arhr(rel=2)@10"] is None  # no item with relevance >= 2
    assert rows[3]["arhr@3"] is None  # no relevant item: undefined
    summary = prk.evaluate(_df(), ["arhr@3"])
    assert summary["arhr@3"].item() == pytest.approx((1 / 2 + (1 + 1 / 2 + 1 / 3)) / 2)


def test_one_relevant_item_equals_mrr() -> None:
    df = _df().filter(pl.col("user") == 1).with_columns(pl.col("relevance").clip(0, 1) * 0)
    df = df.with_columns(pl.when(pl.col("item") == 4).then(1).otherwise(0).alias("relevance"))
    out = prk.evaluate(df, ["arhr@5", "mrr@5"])
    assert out["arhr@5"].item() == pytest.approx(out["mrr@5"].item()) == pytest.approx(1 / 4)


def test_tied_scores() -> None:
    # Three items tied at the top, one relevant: each position 1..3 holds it w.p. 1/3.
    df = pl.DataFrame(
        {"user": [1] * 4, "item": [1, 2, 3, 4], "score": [1.0, 1.0, 1.0, 0.5],
         "relevance": [0, 1, 0, 1]}
    )  # fmt: skip
    expected = prk.evaluate(df, ["arhr@2", "arhr@4"], ties="expected")
    assert expected["arhr@2"].item() == pytest.approx((1 + 1 / 2) / 3)
    assert expected["arhr@4"].item() == pytest.approx((1 + 1 / 2 + 1 / 3) / 3 + 1 / 4)
    # item_desc: item 3, 2, 1 then 4: the relevant item 2 at rank 2.
    desc = prk.evaluate(df, ["arhr@4"], ties="item_desc")
    assert desc["arhr@4"].item() == pytest.approx(1 / 2 + 1 / 4)
    optimistic = prk.evaluate(df, ["arhr@1"], ties="optimistic")
    assert optimistic["arhr@1"].item() == pytest.approx(1.0)


@pytest.mark.parametrize("ties", TIES)
def test_head_path_equals_the_general_path(ties: str) -> None:
    df = frame(3)
    metrics = ["arhr(rel=2)@3", "arhr@1..12", "arhr@50", "precision@4"]
    assert uses_head_path(df, metrics, ties=ties)
    fast, slow = both(df, metrics, ties=ties, per_user=True, users="all")
    assert_frame_equal(fast, slow, abs_tol=1e-12)


@pytest.mark.parametrize("ties", ["expected", "item_desc"])
def test_curve_equals_single_cutoffs(ties: str) -> None:
    df = frame(5)
    _head.ENABLED = False
    try:
        curve = prk.evaluate(df, ["arhr@1..8"], ties=ties, per_user=True)
        single = prk.evaluate(df, [f"arhr@{k}" for k in range(1, 9)], ties=ties, per_user=True)
    finally:
        _head.ENABLED = True
    assert_frame_equal(curve, single, abs_tol=1e-12)


def test_absolute_positions() -> None:
    df = pl.DataFrame({"user": [1, 1], "item": [1, 2], "rank": [2, 5], "relevance": [1, 1]})
    out = prk.evaluate(df, ["arhr@4", "arhr@5"], rank="rank", score=None,
                       rank_positions="absolute")  # fmt: skip
    assert out["arhr@4"].item() == pytest.approx(1 / 2)
    assert out["arhr@5"].item() == pytest.approx(1 / 2 + 1 / 5)


def test_expression_function() -> None:
    value = _df().filter(pl.col("user") == 1).select(prk.arhr(10)).item()
    assert value == pytest.approx(1 / 2 + 1 / 4)
