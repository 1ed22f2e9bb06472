"""Metric expressions read from the sorted-head form (deterministic ties, a cutoff).

Which expressions take the form (a partial sort per group, visible as the sort's
``limit`` in the plan) and which keep the sort-once provider, and the form's values by
hand on a user with tied scores, rows that were not recommended and fewer rows than
the cutoff. Every metric, option and policy against ``evaluate`` is the registry test
(``test_expressions_match_evaluate.py``).
"""

from __future__ import annotations

import math

import polars as pl
import pytest

import polars_rankeval as prk
from tests.frames import tied_user


def _plan(expr: pl.Expr) -> str:
    lf = pl.LazyFrame(
        {"user": [1], "item": [1], "score": [1.0], "relevance": [1]},
        schema_overrides={"relevance": pl.Int64},
    )
    return lf.group_by("user").agg(expr).explain()


_HEAD_METRICS = [("ndcg", 10), ("recall", 20), ("map", 10), ("mrr", 10), ("precision", 10)]


@pytest.mark.parametrize("ties", ["item_desc", "item_asc", "optimistic", "pessimistic"])
@pytest.mark.parametrize(("metric", "k"), [*_HEAD_METRICS, ("hit_rate", 3)])
def test_deterministic_ties_sort_only_the_head(metric: str, k: int, ties: str) -> None:
    plan = _plan(getattr(prk, metric)(k, ties=ties))
    assert f"limit: Some({k})" in plan  # a partial sort, stopped at the head
    assert "__prk_order" not in plan  # not the sort-once provider's struct of all rows


@pytest.mark.parametrize(("metric", "k"), [*_HEAD_METRICS, ("hit_rate", 3)])
def test_expected_ties_sort_the_rows_that_reach_the_top_k(metric: str, k: int) -> None:
    plan = _plan(getattr(prk, metric)(k))
    assert f"top_k([dyn int: {k}])" in plan  # the k-th score, then rows scored at least as well
    assert "__prk_head_order" in plan
    assert "__prk_order" not in plan


@pytest.mark.parametrize(
    "expr",
    [prk.ndcg(10, ties="item_desc", idcg="k"), prk.ndcg(ties="item_desc"), prk.ndcg()],
    ids=["an option the form does not cover", "no cutoff", "no cutoff, expected ties"],
)
def test_other_requests_keep_the_sort_once_provider(expr: pl.Expr) -> None:
    assert "__prk_order" in _plan(expr)


def _user() -> pl.DataFrame:
    # Scores: item 4 at 0.9, items 1, 2, 3 tied at 0.5, item 5 at 0.1, item 6 not
    # recommended (relevant, grade 2). Relevance: 4 -> 0, 1 -> 1, 2 -> 0, 3 -> 3, 5 -> 1.
    return tied_user()


def _one(expr: pl.Expr) -> float | None:
    value = _user().group_by("user").agg(expr).item(0, 1)
    return None if value is None else float(value)


def test_by_hand_item_desc() -> None:
    # item_desc breaks the tie by the item, highest first: 4, 3, 2, 1, 5 (6 not
    # recommended). Relevances in that order: 0, 3, 0, 1, 1; 4 relevant rows in all.
    ties = "item_desc"
    assert _one(prk.precision(3, ties=ties)) == pytest.approx(1 / 3, abs=1e-15)
    assert _one(prk.recall(4, ties=ties)) == pytest.approx(2 / 4, abs=1e-15)
    assert _one(prk.mrr(10, ties=ties)) == pytest.approx(1 / 2, abs=1e-15)
    assert _one(prk.hit_rate(1, ties=ties)) == 0.0
    assert _one(prk.hit_rate(2, ties=ties)) == 1.0
    # AP@10: hits at 2, 4, 5 -> (1/2 + 2/4 + 3/5) / 4 relevant.
    assert _one(prk.map(10, ties=ties)) == pytest.approx((1 / 2 + 2 / 4 + 3 / 5) / 4, abs=1e-15)
    assert _one(prk.arhr(10, ties=ties)) == pytest.approx(1 / 2 + 1 / 4 + 1 / 5, abs=1e-15)
    # nDCG@3: 3/log2(3) over the ideal 3, 2, 1 (the unrecommended grade 2 counts).
    dcg = 3 / math.log2(3)
    idcg = 3 / math.log2(2) + 2 / math.log2(3) + 1 / math.log2(4)
    assert _one(prk.ndcg(3, ties=ties)) == pytest.approx(dcg / idcg, abs=1e-15)
    # The cutoff past the list: the 5 recommended rows only.
    dcg10 = 3 / math.log2(3) + 1 / math.log2(5) + 1 / math.log2(6)
    idcg10 = idcg + 1 / math.log2(5)
    assert _one(prk.ndcg(10, ties=ties)) == pytest.approx(dcg10 / idcg10, abs=1e-15)
    assert _one(prk.precision(10, ties=ties, denominator="retrieved")) == pytest.approx(3 / 5)


def test_by_hand_the_other_deterministic_policies() -> None:
    # item_asc: 4, 1, 2, 3, 5 -> 0, 1, 0, 3, 1. optimistic: 4, 3, 1, 2, 5 -> 0, 3, 1, 0, 1.
    # pessimistic: 4, 2, 1, 3, 5 -> 0, 0, 1, 3, 1.
    assert _one(prk.precision(2, ties="item_asc")) == pytest.approx(1 / 2)
    assert _one(prk.mrr(10, ties="pessimistic")) == pytest.approx(1 / 3)
    dcg = 3 / math.log2(3) + 1 / math.log2(4)
    idcg = 3 + 2 / math.log2(3) + 1 / math.log2(4)
    assert _one(prk.ndcg(3, ties="optimistic")) == pytest.approx(dcg / idcg, abs=1e-15)
    assert _one(prk.map(3, ties="pessimistic")) == pytest.approx((1 / 3) / 4, abs=1e-15)


def test_by_hand_expected_ties() -> None:
    # Positions: item 4 at 1; the tie {1, 2, 3} (relevance 1, 0, 3) at 2-4; item 5 at 5.
    # Each position of the tie holds relevance 4/3 on average and a relevant row with
    # probability 2/3.
    assert _one(prk.precision(3)) == pytest.approx((2 / 3 + 2 / 3) / 3, abs=1e-15)
    assert _one(prk.recall(2)) == pytest.approx((2 / 3) / 4, abs=1e-15)
    dcg = 4 / 3 / math.log2(3) + 4 / 3 / math.log2(4)
    idcg = 3 / math.log2(2) + 2 / math.log2(3) + 1 / math.log2(4)
    assert _one(prk.ndcg(3)) == pytest.approx(dcg / idcg, abs=1e-15)
    # mrr: the first relevant row at position 2 with probability 2/3, else at 3 (1/3).
    assert _one(prk.mrr(10)) == pytest.approx(2 / 3 / 2 + 1 / 3 / 3, abs=1e-15)
    assert _one(prk.mrr(2)) == pytest.approx(2 / 3 / 2, abs=1e-15)
    assert _one(prk.hit_rate(2)) == pytest.approx(2 / 3, abs=1e-15)
    # A rank column instead of a score (lower is better): the same list.
    ranked = _user().with_columns(pl.Series("rank", [2, 2, 2, 1, 5, None], dtype=pl.Int64))
    mrr = ranked.group_by("user").agg(prk.mrr(10, rank="rank")).item(0, 1)
    assert mrr == pytest.approx(2 / 3 / 2 + 1 / 3 / 3, abs=1e-15)


def test_undefined_without_a_relevant_row_and_the_same_as_evaluate() -> None:
    df = _user().with_columns(pl.lit(0).alias("relevance"))
    metrics = ["ndcg@3", "recall@3", "map@3", "mrr@3", "precision@3", "hit_rate@3"]
    got = df.group_by("user").agg(
        prk.ndcg(3, ties="item_desc"),
        prk.recall(3, ties="item_desc"),
        prk.map(3, ties="item_desc"),
        prk.mrr(3, ties="item_desc"),
        prk.precision(3, ties="item_desc"),
        prk.hit_rate(3, ties="item_desc"),
    )
    assert got.select(metrics).row(0) == (None,) * 6
    expected = prk.evaluate(df, metrics, per_user=True, ties="item_desc")
    assert expected.select(metrics).row(0) == (None,) * 6


def test_select_and_over_give_the_group_values() -> None:
    other = _user().with_columns(pl.col("user") + 1, pl.lit(0.3).alias("score"))
    df = pl.concat([_user(), other])
    per_user = df.group_by("user").agg(prk.ndcg(3, ties="item_desc")).sort("user")
    over = df.select("user", prk.ndcg(3, ties="item_desc").over("user")).unique().sort("user")
    assert over.rows() == per_user.rows()
    alone = _user().select(prk.ndcg(3, ties="item_desc")).item()
    assert alone == per_user.item(0, 1)
