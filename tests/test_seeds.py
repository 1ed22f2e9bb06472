"""The numbers printed in the seed documents, reproduced with the arithmetic written out."""

from __future__ import annotations

import math

import polars as pl
import pytest

import polars_rankeval as prk
from tests.frames import HIVEMALL_RECS, HIVEMALL_TRUTH, LECTURE_AP

LOG2_3 = math.log2(3)

# --------------------------------------------------------------------------- Hivemall
# dummy_truth: items 1, 2, 4 for users 1..3; dummy_rec: 1 (10.0), 3 (8.0), 2 (6.0), 6 (2.0).


def hivemall() -> pl.DataFrame:
    joined = prk.join(HIVEMALL_RECS, HIVEMALL_TRUTH)
    assert isinstance(joined, pl.DataFrame)
    return joined


@pytest.mark.parametrize(
    ("metric", "printed", "arithmetic"),
    [
        ("recall@4", 0.6666666666666666, 2 / 3),
        ("recall@2", 0.3333333333333333, 1 / 3),
        ("precision@4", 0.5, 2 / 4),
        ("precision@2", 0.5, 1 / 2),
        ("map@4", 0.5555555555555555, (1 / 1 + 2 / 3) / 3),
        ("map@2", 0.3333333333333333, (1 / 1) / 3),
        ("auc@4", 0.75, 3 / 4),  # pairs (1,3) (1,6) (2,6) right, (2,3) wrong
        ("auc@2", 1.0, 1 / 1),
        ("mrr@4", 1.0, 1 / 1),
        ("mrr@2", 1.0, 1 / 1),
        ("ndcg@4", 0.7039180890341349, (1 + 1 / 2) / (1 + 1 / LOG2_3 + 1 / 2)),
        ("ndcg@2", 0.6131471927654585, 1 / (1 + 1 / LOG2_3)),
    ],
)
@pytest.mark.parametrize("ties", ["expected", "item_desc"])
def test_hivemall_binary_table(metric: str, printed: float, arithmetic: float, ties: str) -> None:
    result = prk.evaluate(hivemall(), [metric], ties=ties)  # type: ignore[arg-type]
    assert result[metric].item() == pytest.approx(arithmetic, abs=1e-15)
    assert result[metric].item() == pytest.approx(printed, abs=1e-15)
    assert result["n_users"].item() == 3


def test_hivemall_map_over_full_lists() -> None:
    # MAP({1,2,4}, [1,3,2,6,4,5]) = (1/1 + 2/3 + 3/5) / 3 ~ 0.756 and [1,3,2,4,6,5] ~ 0.806.
    def ap(order: list[int]) -> float:
        df = pl.DataFrame(
            {
                "user": [1] * 6,
                "item": order,
                "score": [6.0, 5.0, 4.0, 3.0, 2.0, 1.0],
                "relevance": [int(i in (1, 2, 4)) for i in order],
            }
        )
        return df.select(prk.map()).item()

    assert ap([1, 3, 2, 6, 4, 5]) == pytest.approx((1 / 1 + 2 / 3 + 3 / 5) / 3)
    assert round(ap([1, 3, 2, 6, 4, 5]), 3) == 0.756
    assert ap([1, 3, 2, 4, 6, 5]) == pytest.approx((1 / 1 + 2 / 3 + 3 / 4) / 3)
    assert round(ap([1, 3, 2, 4, 6, 5]), 3) == 0.806


def test_hivemall_graded_ndcg_exponential_gain() -> None:
    # dummy_recrel: item (score, relscore) = 1 (10, 5), 3 (8, 2), 2 (6, 4), 6 (2, 1), 4 (1, 3).
    df = pl.DataFrame(
        {
            "user": [u for u in (1, 2, 3) for _ in range(5)],
            "item": [1, 3, 2, 6, 4] * 3,
            "score": [10.0, 8.0, 6.0, 2.0, 1.0] * 3,
            "relevance": [5.0, 2.0, 4.0, 1.0, 3.0] * 3,
        }
    )
    out = prk.evaluate(df, ["ndcg(gain=exp)@2", "ndcg(gain=exp)@3"])
    at2 = (31 / 1 + 3 / LOG2_3) / (31 / 1 + 15 / LOG2_3)
    at3 = (31 / 1 + 3 / LOG2_3 + 15 / 2) / (31 / 1 + 15 / LOG2_3 + 7 / 2)
    assert out["ndcg(gain=exp)@2"].item() == pytest.approx(at2, abs=1e-15)
    assert out["ndcg(gain=exp)@2"].item() == pytest.approx(0.8128912838590544, abs=1e-15)
    assert out["ndcg(gain=exp)@3"].item() == pytest.approx(at3, abs=1e-15)
    assert out["ndcg(gain=exp)@3"].item() == pytest.approx(0.9187707805346093, abs=1e-15)


# --------------------------------------------------------------------------- the lecture
def test_lecture_dcg_and_ndcg_with_clipped_discount() -> None:
    # A 4, B 3, C 0, D 5; disc(i) = 1 for i <= 2, log2(i) otherwise.
    df = pl.DataFrame(
        {
            "user": [1] * 4,
            "item": list("ABCD"),
            "score": [4.0, 3.0, 2.0, 1.0],
            "relevance": [4, 3, 0, 5],
        }
    )
    row = df.select(prk.dcg(discount="log_clipped"), prk.ndcg(discount="log_clipped")).row(0)
    assert row[0] == 4 / 1 + 3 / 1 + 0 / LOG2_3 + 5 / 2 == 9.5
    assert row[1] == pytest.approx(9.5 / (5 / 1 + 4 / 1 + 3 / LOG2_3 + 0 / 2), abs=1e-15)
    assert round(row[1], 3) == 0.872


def test_lecture_average_precision_and_reciprocal_rank() -> None:
    # AP: relevant A, C, D among A..E -> (1 + 2/3 + 3/4) / 3. RR: first relevant B at 2.
    assert LECTURE_AP.select(prk.map()).item() == pytest.approx((1 + 2 / 3 + 3 / 4) / 3, abs=1e-15)
    rr_df = pl.DataFrame(
        {
            "user": [1] * 4,
            "item": list("ABCD"),
            "score": [4.0, 3.0, 2.0, 1.0],
            "relevance": [0, 1, 0, 0],
        }
    )
    assert rr_df.select(prk.mrr()).item() == 1 / 2


def test_lecture_half_life_discount() -> None:
    # Breese's utility: 2^(-(rank - 1) / (alpha - 1)); alpha = 3 halves every 2 ranks.
    df = pl.DataFrame(
        {"user": [1] * 3, "item": [1, 2, 3], "score": [3.0, 2.0, 1.0], "relevance": [1, 1, 1]}
    )
    value = df.select(prk.dcg(discount="half_life", half_life=3)).item()
    assert value == pytest.approx(1 + 2 ** (-1 / 2) + 2 ** (-2 / 2), abs=1e-15)


# --------------------------------------------------------------------------- the book chapter
def test_book_chapter_map_and_mrr_examples() -> None:
    # Algorithm A: relevant at 2, 3 and 5 of five -> (1/2 + 2/3 + 3/5) / 3 ("0.6"), MRR 1/2.
    # Algorithm B ranks them perfectly -> 1 and 1.
    df = pl.DataFrame(
        {
            "user": ["A"] * 5 + ["B"] * 5,
            "item": list(range(5)) * 2,
            "score": [5.0, 4.0, 3.0, 2.0, 1.0] * 2,
            "relevance": [0, 1, 1, 0, 1, 1, 1, 1, 0, 0],
        }
    )
    out = prk.evaluate(df, ["map", "mrr", "ndcg@5"], per_user=True)
    a, b = out.row(0, named=True), out.row(1, named=True)
    assert a["map"] == pytest.approx((1 / 2 + 2 / 3 + 3 / 5) / 3, abs=1e-15)
    assert round(a["map"], 1) == 0.6
    assert a["mrr"] == 1 / 2
    assert b["map"] == (1 / 1 + 2 / 2 + 3 / 3) / 3 == 1.0
    assert b["mrr"] == 1.0
    # NDCG@5 of A: (1/log2 3 + 1/log2 4 + 1/log2 6) / (1/log2 2 + 1/log2 3 + 1/log2 4) ~ 0.71
    dcg_a = 1 / math.log2(3) + 1 / math.log2(4) + 1 / math.log2(6)
    idcg = 1 / math.log2(2) + 1 / math.log2(3) + 1 / math.log2(4)
    assert a["ndcg@5"] == pytest.approx(dcg_a / idcg, abs=1e-15)
    assert round(a["ndcg@5"], 2) == 0.71
    assert b["ndcg@5"] == 1.0


def test_book_chapter_idcg_over_all_relevant_items() -> None:
    # The chapter (and Jurity) sum the ideal DCG over all relevant items, not cut at k.
    df = pl.DataFrame(
        {
            "user": [1] * 4,
            "item": [1, 2, 3, 4],
            "score": [4.0, 3.0, 2.0, 1.0],
            "relevance": [1, 0, 1, 1],
        }
    )
    all_rel = df.select(prk.ndcg(2, idcg="all")).item()
    cut = df.select(prk.ndcg(2)).item()
    assert all_rel == pytest.approx(1 / (1 + 1 / LOG2_3 + 1 / 2), abs=1e-15)
    assert cut == pytest.approx(1 / (1 + 1 / LOG2_3), abs=1e-15)


# --------------------------------------------------------------------------- Jurity
def test_jurity_map_denominator_min_k_relevant() -> None:
    # MAP@k = 1/min(k, |A_i|) * sum_{n<=k} P(n) rel(n); k = 2, relevant {1, 2, 4}, list 1,3,2,6.
    out = prk.evaluate(hivemall(), ["map(denominator=min_k_relevant)@2"])
    assert out.item(0, 0) == pytest.approx((1 / 1) / min(2, 3), abs=1e-15)


def test_jurity_precision_over_short_lists() -> None:
    # Jurity divides by |P_i[1:k]|: a 2-item list evaluated at k = 5.
    df = pl.DataFrame(
        {"user": [1] * 3, "item": [1, 2, 3], "score": [2.0, 1.0, None], "relevance": [1, 0, 1]}
    )
    row = df.select(prk.precision(5), prk.precision(5, denominator="retrieved")).row(0)
    assert row == (1 / 5, 1 / 2)
