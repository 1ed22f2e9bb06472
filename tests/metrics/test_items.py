"""Item-side metrics (evaluate(per_item=True)): by hand, ties, brute force, consistency
with the user side, bucket invariance and errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import polars_rankeval as prk
from tests._engines import engine_of
from tests._reference import orderings, random_frame, rows_by_user

ITEM_METRICS = ["item_exposure@1", "item_hits@1", "item_recall@1", "item_precision@1"]
DF = pl.DataFrame(
    {
        "user": [1, 1, 1, 2, 2, 3, 3],
        "item": ["a", "b", "c", "a", "c", "a", "b"],
        "score": [3.0, 2.0, None, 2.0, 1.0, 1.0, 2.0],
        "relevance": [1, None, 1, None, 1, 1, None],
    }
)


def as_dict(frame: pl.DataFrame, metric: str) -> dict[Any, Any]:
    return dict(frame.select("item", metric).rows())


def test_by_hand() -> None:
    got = prk.evaluate(DF, ITEM_METRICS, per_item=True)
    assert got.columns == ["item", *ITEM_METRICS]
    # top 1: user 1 -> a (relevant), user 2 -> a (unjudged), user 3 -> b (unjudged)
    assert as_dict(got, "item_exposure@1") == {"a": 2.0, "b": 1.0, "c": 0.0}
    assert as_dict(got, "item_hits@1") == {"a": 1.0, "b": 0.0, "c": 0.0}
    # a is relevant to users 1 and 3, c to users 1 and 2, b to no one
    assert as_dict(got, "item_recall@1") == {"a": 1 / 2, "b": None, "c": 0 / 2}
    assert as_dict(got, "item_precision@1") == {"a": 1 / 2, "b": 0 / 1, "c": None}
    whole = prk.evaluate(DF, ["item_exposure", "item_recall"], per_item=True)
    # without a cutoff: every recommended row; c is recommended to user 2 only
    assert as_dict(whole, "item_exposure") == {"a": 3.0, "b": 2.0, "c": 1.0}
    assert as_dict(whole, "item_recall") == {"a": 2 / 2, "b": None, "c": 1 / 2}


def test_rel_threshold_and_users() -> None:
    graded = DF.with_columns(
        pl.when(pl.col("user") == 3).then(2).otherwise("relevance").alias("relevance")
    )
    got = prk.evaluate(graded, ["item_hits(rel=2)@2", "item_recall(rel=2)@2"], per_item=True)
    # rel >= 2: only user 3's rows (a, b); top 2 of user 3 is b, a
    assert as_dict(got, "item_hits(rel=2)@2") == {"a": 1.0, "b": 1.0, "c": 0.0}
    assert as_dict(got, "item_recall(rel=2)@2") == {"a": 1.0, "b": 1.0, "c": None}
    only_1 = prk.evaluate(DF, ["item_exposure@1"], per_item=True, users=[1])
    assert as_dict(only_1, "item_exposure@1") == {"a": 1.0, "b": 0.0, "c": 0.0}


def test_by_groups() -> None:
    a = DF.with_columns(system=pl.lit("a"))
    b = DF.with_columns(system=pl.lit("b"), score=-pl.col("score"))
    got = prk.evaluate(
        pl.concat([a, b]), ["item_exposure@1", "item_hits@1"], by="system", per_item=True
    )
    assert got.columns == ["system", "item", "item_exposure@1", "item_hits@1"]
    # b's top 1: user 1 -> b, user 2 -> c (relevant), user 3 -> a (relevant)
    b_rows = got.filter(pl.col("system") == "b")
    assert as_dict(b_rows, "item_exposure@1") == {"a": 1.0, "b": 1.0, "c": 1.0}
    assert as_dict(b_rows, "item_hits@1") == {"a": 1.0, "b": 0.0, "c": 1.0}


def test_ties_expected() -> None:
    user_1 = (pl.col("user") == 1) & pl.col("score").is_not_null()
    tied = DF.with_columns(score=pl.when(user_1).then(1.0).otherwise("score"))
    got = prk.evaluate(tied, ITEM_METRICS, per_item=True)
    # user 1 ties a and b (c not recommended): each is its top 1 with probability 1/2
    assert as_dict(got, "item_exposure@1") == pytest.approx(
        {"a": 1 / 2 + 1, "b": 1 / 2 + 1, "c": 0.0}
    )
    assert as_dict(got, "item_hits@1") == pytest.approx({"a": 1 / 2, "b": 0.0, "c": 0.0})
    assert as_dict(got, "item_recall@1")["a"] == pytest.approx((1 / 2) / 2)
    assert as_dict(got, "item_precision@1")["a"] == pytest.approx((1 / 2) / (3 / 2))
    asc = prk.evaluate(tied, ["item_exposure@1"], per_item=True, ties="item_asc")
    assert as_dict(asc, "item_exposure@1") == {"a": 2.0, "b": 1.0, "c": 0.0}


def brute_force(df: pl.DataFrame, k: int, ties: str, rel: float = 1.0) -> dict[Any, tuple]:
    exposure: dict[Any, float] = {}
    hits: dict[Any, float] = {}
    relevant: dict[Any, float] = {}
    for rows in rows_by_user(df).values():
        orders = orderings(rows, ties)
        for r in rows:
            exposure.setdefault(r.item, 0.0)
            hits.setdefault(r.item, 0.0)
            relevant[r.item] = relevant.get(r.item, 0.0) + (r.rel >= rel)
        for ranked, _ in orders:
            for r in ranked[:k]:
                exposure[r.item] += 1 / len(orders)
                hits[r.item] += (r.rel >= rel) / len(orders)
    return {
        i: (
            exposure[i],
            hits[i],
            hits[i] / relevant[i] if relevant[i] else None,
            hits[i] / exposure[i] if exposure[i] else None,
        )
        for i in exposure
    }


@pytest.mark.parametrize("ties", prk.TIE_POLICIES)
@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("k", [1, 3])
def test_matches_brute_force(seed: int, ties: str, k: int) -> None:
    df = random_frame(seed)
    metrics = [f"item_exposure@{k}", f"item_hits@{k}", f"item_recall@{k}", f"item_precision@{k}"]
    got = prk.evaluate(df, metrics, per_item=True, ties=ties, users="all")
    expected = brute_force(df, k, ties)
    assert sorted(got.get_column("item").to_list()) == sorted(expected)
    for item, *values in got.iter_rows():
        for value, reference in zip(values, expected[item], strict=True):
            if reference is None:
                assert value is None
            else:
                assert value == pytest.approx(reference, abs=1e-12)


@pytest.mark.parametrize("ties", ["expected", "item_desc"])
def test_item_side_sums_to_user_side(ties: str) -> None:
    df = random_frame(9, n_users=40)
    items = prk.evaluate(
        df, ["item_exposure@3", "item_hits@3"], per_item=True, ties=ties, users="all"
    )
    users = prk.evaluate(df, ["num_ret@3", "num_rel_ret@3"], per_user=True, ties=ties, users="all")
    assert items.get_column("item_exposure@3").sum() == pytest.approx(
        users.get_column("num_ret@3").sum()
    )
    assert items.get_column("item_hits@3").sum() == pytest.approx(
        users.get_column("num_rel_ret@3").sum()
    )


@pytest.mark.parametrize("ties", ["expected", "item_asc"])
def test_bucket_invariance_with_by(ties: str) -> None:
    a = random_frame(3, n_users=40).with_columns(system=pl.lit("a"))
    b = random_frame(4, n_users=40).with_columns(system=pl.lit("b"))
    df = pl.concat([a, b]).with_columns(pl.format("u{}", "user").alias("user"))
    metrics = ["item_exposure@3", "item_hits(rel=2)@2", "item_recall@3", "item_precision"]
    options = {"by": "system", "per_item": True, "ties": ties}
    expected = prk.evaluate(df, metrics, engine="memory", **options)  # type: ignore[arg-type]
    for strategy, n in (("buckets", 3), ("partition", 7)):
        got = prk.evaluate(df, metrics, engine=engine_of(strategy, n_buckets=n), **options)  # type: ignore[arg-type]
        assert_frame_equal(got, expected, check_exact=False, rel_tol=1e-12)


def test_items_never_recommended_are_listed() -> None:
    df = random_frame(2, n_users=30)
    got = prk.evaluate(df, "item_exposure@1", per_item=True, users="all")
    never = got.filter(pl.col("item_exposure@1") == 0).get_column("item").to_list()
    tops = {
        r.item
        for rows in rows_by_user(df).values()
        for ranked, _ in orderings(rows, "expected")
        for r in ranked[:1]
    }
    assert set(never) == set(df.get_column("item").unique()) - tops
    assert np.all(got.get_column("item_exposure@1").to_numpy() >= 0)


@pytest.mark.parametrize(
    ("metrics", "kwargs", "match"),
    [
        (["item_exposure@3"], {}, "evaluate them with per_item=True"),
        (["item_exposure@3", "ndcg@3"], {"per_item": True}, "ndcg@3 are not item metrics"),
        (["item_exposure@3"], {"per_item": True, "per_user": True}, "cannot both"),
        (["item_recall(rel=0)@3"], {"per_item": True}, "'rel' of metric 'item_recall' must be > 0"),
    ],
)
def test_errors(metrics: list[str], kwargs: dict[str, Any], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        prk.evaluate(DF, metrics, **kwargs)
