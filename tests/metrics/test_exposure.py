"""Coverage, exposure entropy, Gini, popularity bias and novelty; item_popularity.

By hand, against brute force over every tie ordering (coverage: the exact expectation;
entropy and Gini: of the expected exposure, with Gini as the mean absolute difference),
bucket invariance with by groups, and clear errors.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import polars_rankeval as prk
from tests._engines import engine_of
from tests._reference import orderings, rows_by_user
from tests.frames import TIED_TOP_TWO
from tests.metrics.test_diversity import small_frame, top_sets

RECS = pl.DataFrame(
    {
        "user": [1, 1, 2, 2, 3, 3],
        "item": [10, 11, 10, 12, 10, 11],
        "score": [2.0, 1.0, 2.0, 1.0, 2.0, 1.0],
        "relevance": [1, None, None, 1, None, None],
    }
)
LOGS = pl.DataFrame({"user": [7, 7, 8, 9], "item": [10, 11, 10, 12]})
POPULARITY = pl.DataFrame({"item": [10, 11, 12], "popularity": [2 / 3, 1 / 3, 1 / 3]})


def one(df: pl.DataFrame, metric: str, **kwargs: Any) -> float | None:
    return prk.evaluate(df, metric, users="recs", **kwargs).item(0, prk.parse_metric(metric).name)


# ---------------------------------------------------------------------- by hand
def test_coverage_by_hand() -> None:
    assert one(RECS, "coverage@2", n_items=5) == pytest.approx(3 / 5)
    assert one(RECS, "coverage@1", n_items=5) == pytest.approx(1 / 5)  # only item 10
    assert one(RECS, "coverage@2") == pytest.approx(3 / 3)  # N = distinct items of the input
    catalog = pl.DataFrame({"item": list(range(10, 20))})
    assert one(RECS, "coverage@2", n_items=catalog) == pytest.approx(3 / 10)


def test_coverage_outside_the_catalog_by_hand() -> None:
    # Top 2: items 10, 11, 12; the catalog column marks 10, 11 (and 13, never recommended).
    items = pl.DataFrame({"item": [10, 11, 13], "cat": [True, True, True]})
    ignore = "coverage(catalog=cat,outside_catalog=ignore)@2"
    assert one(RECS, ignore, items=items, n_items=3) == pytest.approx(2 / 3)  # 12 left out
    count = "coverage(catalog=cat,outside_catalog=count)@2"
    assert one(RECS, count, items=items, n_items=3) == pytest.approx(3 / 3)  # 12 counted
    assert one(RECS, "coverage(outside_catalog=count)@2", n_items=2) == pytest.approx(3 / 2)
    small = pl.Series([10, 11])  # a catalog frame: its size, items outside it allowed
    assert one(RECS, "coverage(outside_catalog=count)@2", n_items=small) == pytest.approx(3 / 2)
    # Another metric reading n_items keeps the check that the catalog holds every item.
    with pytest.raises(ValueError, match="n_items=2 is smaller than the 3 distinct items"):
        prk.evaluate(RECS, ["coverage(outside_catalog=count)@2", "fallout@2"], n_items=2)
    with pytest.raises(ValueError, match="n_items=2 is smaller"):
        one(RECS, "coverage@2", n_items=2)
    # false = outside too; @1 only item 10 is recommended: nothing outside, no error
    marked = pl.DataFrame({"item": [10, 11, 12], "cat": [True, False, True]})
    assert one(RECS, ignore, items=marked, n_items=3) == pytest.approx(2 / 3)  # 11 left out
    assert one(RECS, "coverage(catalog=cat)@1", items=items, n_items=3) == pytest.approx(1 / 3)
    with pytest.raises(ValueError, match=r"1 recommended item\(s\) are outside the catalog"):
        one(RECS, "coverage(catalog=cat)@2", items=items, n_items=3)
    with pytest.raises(ValueError, match="needs catalog=<column>"):
        one(RECS, "coverage(outside_catalog=ignore)@2", n_items=3)


def test_coverage_outside_the_catalog_with_tied_scores() -> None:
    # a (2.0), then b and c tied (1.0): @2 gets a and one of b, c; b is outside.
    df = pl.DataFrame(
        {"user": [1, 1, 1], "item": ["a", "b", "c"], "score": [2.0, 1.0, 1.0], "relevance": [1] * 3}
    )
    items = pl.DataFrame({"item": ["a", "c"], "cat": [True, True]})
    ignore = "coverage(catalog=cat,outside_catalog=ignore)@2"
    count = "coverage(catalog=cat,outside_catalog=count)@2"
    kw: dict[str, Any] = {"items": items, "n_items": 4}
    assert one(df, ignore, ties="expected", **kw) == pytest.approx((1 + 1 / 2) / 4)
    assert one(df, count, ties="expected", **kw) == pytest.approx((1 + 1 / 2 + 1 / 2) / 4)
    assert one(df, ignore, ties="item_desc", **kw) == pytest.approx(2 / 4)  # a, c
    assert one(df, ignore, ties="item_asc", **kw) == pytest.approx(1 / 4)  # a, b (outside)
    assert one(df, count, ties="item_asc", **kw) == pytest.approx(2 / 4)


def test_entropy_by_hand() -> None:
    # @2 exposures 3, 2, 1 over 6 slots
    q = np.array([3, 2, 1]) / 6
    h = float(-(q * np.log2(q)).sum())
    assert one(RECS, "exposure_entropy@2", n_items=5) == pytest.approx(h)
    assert one(RECS, "distributional_coverage@2", n_items=5) == pytest.approx(h)
    assert one(RECS, "exposure_entropy(normalize=true)@2", n_items=5) == pytest.approx(
        h / math.log2(5)
    )
    assert one(RECS, "exposure_entropy@1", n_items=5) == 0.0  # all on item 10
    # discount=log: item 10 at rank 1 three times (weight 1), 11 and 12 at rank 2
    w = 1 / math.log2(3)
    e = np.array([3.0, 2 * w, w])
    q = e / e.sum()
    assert one(RECS, "exposure_entropy(discount=log)@2", n_items=5) == pytest.approx(
        float(-(q * np.log2(q)).sum())
    )


def test_entropy_in_nats_and_per_exposed_item_by_hand() -> None:
    # @2 exposures 3, 2, 1 over 6 slots
    q = np.array([3, 2, 1]) / 6
    nats = float(-(q * np.log(q)).sum())
    assert one(RECS, "exposure_entropy(unit=nats)@2", n_items=5) == pytest.approx(nats)
    assert one(RECS, "exposure_entropy(unit=nats,normalize=true)@2", n_items=5) == pytest.approx(
        nats / math.log(5)
    )
    per_item = "exposure_entropy(unit=nats,per_exposed_item=true)@2"
    assert one(RECS, per_item, n_items=5) == pytest.approx(nats / 3)  # 3 exposed items
    bits = float(-(q * np.log2(q)).sum())
    assert one(RECS, "exposure_entropy(per_exposed_item=true)@2", n_items=5) == pytest.approx(
        bits / 3
    )
    with pytest.raises(ValueError, match="two normalisations"):
        one(RECS, "exposure_entropy(normalize=true,per_exposed_item=true)@2")


def test_entropy_per_exposed_item_with_tied_scores() -> None:
    # a (2.0) then b, c tied: @2 exposures a 1, b 1/2, c 1/2 (expected), 3 exposed items;
    # item_desc gives a, c: 2 items of 1/2 each.
    df = pl.DataFrame(
        {"user": [1, 1, 1], "item": ["a", "b", "c"], "score": [2.0, 1.0, 1.0], "relevance": [1] * 3}
    )
    metric = "exposure_entropy(unit=nats,per_exposed_item=true)@2"
    q = np.array([1.0, 0.5, 0.5]) / 2
    expected = float(-(q * np.log(q)).sum()) / 3
    assert one(df, metric, ties="expected") == pytest.approx(expected)
    assert one(df, metric, ties="item_desc") == pytest.approx(math.log(2) / 2)


def test_gini_by_hand() -> None:
    # exposures sorted 0, 0, 1, 2, 3 (N = 5, sum 6), weights 2i - N - 1 = -4, -2, 0, 2, 4
    assert one(RECS, "gini@2", n_items=5) == pytest.approx((0 * 1 + 2 * 2 + 4 * 3) / (5 * 6))
    # N = 3: 1, 2, 3 with weights -2, 0, 2
    assert one(RECS, "gini@2") == pytest.approx((-2 * 1 + 0 * 2 + 2 * 3) / (3 * 6))
    # @1: everything on one item of 5: (N - 1) / N
    assert one(RECS, "gini@1", n_items=5) == pytest.approx(4 / 5)
    w = 1 / math.log2(3)  # discount=log: 12 -> w, 11 -> 2w, 10 -> 3
    expected = (0 * w + 2 * 2 * w + 4 * 3) / (5 * (3 + 3 * w))
    assert one(RECS, "gini(discount=log)@2", n_items=5) == pytest.approx(expected)


def test_equal_exposure_is_zero_gini_and_full_entropy() -> None:
    df = pl.DataFrame(
        {"user": [1, 2, 3], "item": [1, 2, 3], "score": [1.0] * 3, "relevance": [1] * 3}
    )
    assert one(df, "gini@1") == pytest.approx(0.0)
    assert one(df, "exposure_entropy(normalize=true)@1") == pytest.approx(1.0)
    assert one(df, "coverage@1") == pytest.approx(1.0)


def test_popularity_bias_and_novelty_by_hand() -> None:
    got = prk.evaluate(
        RECS,
        ["popularity_bias@2", "arp@1", "novelty@2"],
        items=POPULARITY,
        users="recs",
        per_user=True,
    )
    assert got.columns == ["user", "popularity_bias@2", "popularity_bias@1", "novelty@2"]
    assert got.get_column("popularity_bias@2").to_list() == pytest.approx([1 / 2, 1 / 2, 1 / 2])
    assert got.get_column("popularity_bias@1").to_list() == pytest.approx([2 / 3] * 3)
    novelty = (math.log2(3 / 2) + math.log2(3)) / 2
    assert got.get_column("novelty@2").to_list() == pytest.approx([novelty] * 3)
    summary = prk.evaluate(RECS, "novelty@2", items=POPULARITY, users="recs")
    assert summary.item(0, "novelty@2") == pytest.approx(novelty)


def test_popularity_from_the_data_and_other_column_names() -> None:
    df = RECS.join(POPULARITY.rename({"popularity": "pop"}), on="item", how="left")
    got = one(df, "novelty(popularity=pop)@2")
    assert got == pytest.approx((math.log2(3 / 2) + math.log2(3)) / 2)


def test_novelty_divided_by_k_and_other_log_bases_by_hand() -> None:
    # Every list holds item 10 (p = 2/3) and one of 11, 12 (p = 1/3).
    t10, t11 = math.log2(3 / 2), math.log2(3)
    got = one(RECS, "novelty(denominator=k)@3", items=POPULARITY)
    assert got == pytest.approx((t10 + t11) / 3)  # lists of 2 padded to k = 3
    got = one(RECS, "novelty(denominator=k)@2", items=POPULARITY)
    assert got == pytest.approx((t10 + t11) / 2)  # full lists: = the mean
    # log base 3: -log3(2/3) = log3(3/2), -log3(1/3) = 1
    got = one(RECS, "novelty(log_base=3)@2", items=POPULARITY)
    assert got == pytest.approx((math.log(3 / 2, 3) + 1.0) / 2)
    with pytest.raises(ValueError, match=r"novelty\(denominator=k\) needs a cutoff"):
        one(RECS, "novelty(denominator=k)", items=POPULARITY)
    with pytest.raises(ValueError, match="log_base"):
        one(RECS, "novelty(log_base=1)@2", items=POPULARITY)


def test_novelty_divided_by_k_with_tied_scores() -> None:
    # User 1: a (2.0) then b, c tied at 1.0; k = 2 takes a and one of b, c (1/2 each).
    df = pl.DataFrame(
        {
            "user": [1, 1, 1],
            "item": ["a", "b", "c"],
            "score": [2.0, 1.0, 1.0],
            "relevance": [1, 0, 0],
        }
    )
    pop = pl.DataFrame({"item": ["a", "b", "c"], "popularity": [1 / 2, 1 / 4, 1 / 8]})
    # expected: (1 + (2 + 3) / 2) / 2 = 1.75; over k = 4: (1 + 2 + 3) / 4 = 1.5
    assert one(df, "novelty(denominator=k)@2", items=pop, ties="expected") == pytest.approx(
        (1 + (2 + 3) / 2) / 2
    )
    assert one(df, "novelty(denominator=k)@4", items=pop, ties="expected") == pytest.approx(1.5)
    # deterministic policies: item_desc puts c before b -> (1 + 3) / 2
    assert one(df, "novelty(denominator=k)@2", items=pop, ties="item_desc") == pytest.approx(2.0)
    assert one(df, "novelty(denominator=k)@2", items=pop, ties="item_asc") == pytest.approx(1.5)


def test_item_popularity_unseen_items_as_one_user() -> None:
    catalog = pl.Series([10, 11, 12, 13])
    got = prk.item_popularity(LOGS, catalog=catalog, unseen="one")
    assert got.get_column("popularity").to_list() == pytest.approx([2 / 3, 1 / 3, 1 / 3, 1 / 3])
    got = prk.item_popularity(LOGS, basis="interactions", catalog=catalog, unseen="one")
    assert got.get_column("popularity").to_list() == pytest.approx([2 / 4, 1 / 4, 1 / 4, 1 / 4])
    with pytest.raises(ValueError, match="'unseen' of item_popularity must be one of"):
        prk.item_popularity(LOGS, catalog=catalog, unseen="two")  # type: ignore[arg-type]


def test_unseen_share_by_hand_and_with_ties() -> None:
    # User 1: a (2.0, seen), then b (seen) and c (not seen) tied at 1.0; user 2: d only.
    df = pl.DataFrame(
        {
            "user": [1, 1, 1, 2],
            "item": ["a", "b", "c", "d"],
            "score": [2.0, 1.0, 1.0, 1.0],
            "relevance": [1, 0, 0, 1],
            "seen": [True, True, False, False],
        }
    )
    got = prk.evaluate(df, ["unseen_share@1", "unseen_share@3"], per_user=True).sort("user")
    assert got["unseen_share@1"].to_list() == [0.0, 1.0]
    assert got["unseen_share@3"].to_list() == pytest.approx([1 / 3, 1.0])
    # @2 under expected ties: a and one of b, c: (0 + 1/2) / 2 = 1/4
    per_user = prk.evaluate(df, "unseen_share@2", ties="expected", per_user=True).sort("user")
    assert per_user["unseen_share@2"].to_list() == pytest.approx([1 / 4, 1.0])
    desc = prk.evaluate(df, "unseen_share@2", ties="item_desc", per_user=True).sort("user")
    assert desc["unseen_share@2"].to_list() == [0.5, 1.0]  # a, c
    # denominator=k: user 2's one item over k = 3
    by_k = prk.evaluate(df, "unseen_share(denominator=k)@3", per_user=True).sort("user")
    assert by_k[:, 1].to_list() == pytest.approx([1 / 3, 1 / 3])
    with pytest.raises(ValueError, match="needs a cutoff"):
        prk.evaluate(df, "unseen_share(denominator=k)")
    with pytest.raises(ValueError, match="no true/false seen value"):
        prk.evaluate(df.with_columns(seen=pl.lit(None, dtype=pl.Boolean)), "unseen_share@2")


def test_by_groups() -> None:
    a = RECS.with_columns(system=pl.lit("a"))
    b = RECS.with_columns(system=pl.lit("b"), score=-pl.col("score"))
    got = prk.evaluate(
        pl.concat([a, b]),
        ["coverage@1", "gini@1", "novelty@1"],
        by="system",
        users="recs",
        n_items=5,
        items=POPULARITY,
    )
    # b's top 1: users 1 and 3 get item 11, user 2 gets 12: 2 items; exposures 0,0,0,1,2
    assert got.get_column("coverage@1").to_list() == pytest.approx([1 / 5, 2 / 5])
    assert got.get_column("gini@1").to_list() == pytest.approx([4 / 5, (2 * 1 + 4 * 2) / (5 * 3)])
    assert got.get_column("novelty@1").to_list() == pytest.approx([math.log2(3 / 2), math.log2(3)])


def test_no_exposure_at_all() -> None:
    judged_only = RECS.with_columns(score=pl.lit(None, dtype=pl.Float64))
    got = prk.evaluate(
        judged_only, ["coverage@2", "gini@2", "exposure_entropy@2"], users="all", n_items=5
    )
    assert got.row(0)[:3] == (0.0, None, None)


# ---------------------------------------------------------------------- ties
TIED_POP = pl.DataFrame({"item": ["a", "b", "c", "d"], "popularity": [0.5, 0.25, 0.125, 1.0]})


def test_ties_by_hand() -> None:
    # coverage@2: a, d sure; b and c each covered with probability 2/3
    assert one(TIED_TOP_TWO, "coverage@2", n_items=4) == pytest.approx((2 + 2 / 3 + 2 / 3) / 4)
    # coverage@1: user 1 gets one of a, b, c; user 2 gets a: E = 1 + 2 * (1/3)
    assert one(TIED_TOP_TWO, "coverage@1", n_items=4) == pytest.approx((1 + 2 / 3) / 4)
    # expected exposure @2: a 1 + 2/3, b 2/3, c 2/3, d 1 (sum 4)
    e = np.array([2 / 3, 2 / 3, 1, 5 / 3])
    gini = sum(abs(x - y) for x in e for y in e) / (2 * 4 * e.sum())
    assert one(TIED_TOP_TWO, "gini@2") == pytest.approx(gini)
    q = e / e.sum()
    assert one(TIED_TOP_TWO, "exposure_entropy@2") == pytest.approx(float(-(q * np.log2(q)).sum()))
    # novelty@2 of user 1: the mean over its 3 pairs = the mean of the 3 items' values
    u1 = (1 + 2 + 3) / 3
    u2 = (1 + 0) / 2
    assert one(TIED_TOP_TWO, "novelty@2", items=TIED_POP) == pytest.approx((u1 + u2) / 2)
    assert one(TIED_TOP_TWO, "popularity_bias@2", items=TIED_POP) == pytest.approx(
        ((0.5 + 0.25 + 0.125) / 3 + (0.5 + 1.0) / 2) / 2
    )
    # deterministic: item_desc picks c, b for user 1
    assert one(TIED_TOP_TWO, "coverage@2", n_items=4, ties="item_desc") == pytest.approx(4 / 4)
    assert one(TIED_TOP_TWO, "novelty@2", items=TIED_POP, ties="item_desc") == pytest.approx(
        ((3 + 2) / 2 + u2) / 2
    )


# ---------------------------------------------------------------------- brute force
def expected_exposure(
    df: pl.DataFrame, k: int | None, ties: str, discount: str
) -> dict[Any, float]:
    out: dict[Any, float] = {}
    for rows in rows_by_user(df).values():
        orders = orderings(rows, ties)
        for ranked, _ in orders:
            for rank, row in enumerate(ranked if k is None else ranked[:k], start=1):
                weight = 1.0 if discount == "none" else 1 / math.log2(1 + rank)
                out[row.item] = out.get(row.item, 0.0) + weight / len(orders)
    return out


def expected_coverage(df: pl.DataFrame, k: int | None, ties: str) -> float:
    total = 0.0
    for combo in itertools.product(*top_sets(df, k, ties).values()):
        covered = {i for s, _ in combo for i in s}
        total += len(covered) * math.prod(p for _, p in combo)
    return total


@pytest.mark.parametrize("ties", prk.TIE_POLICIES)
@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("k", [1, 2, 3, None])
def test_global_metrics_match_brute_force(seed: int, ties: str, k: int | None) -> None:
    df = small_frame(seed)
    n = 12
    suffix = f"@{k}" if k else ""
    metrics = [f"coverage{suffix}", f"gini{suffix}", f"gini(discount=log){suffix}"]
    metrics += [f"exposure_entropy(discount=log,normalize=true){suffix}"]
    got = prk.evaluate(df, metrics, ties=ties, n_items=n).row(0, named=True)
    assert got[f"coverage{suffix}"] == pytest.approx(expected_coverage(df, k, ties) / n, abs=1e-12)
    for discount, name in (("none", f"gini{suffix}"), ("log", f"gini(discount=log){suffix}")):
        e = np.array(list(expected_exposure(df, k, ties, discount).values()) + [0.0] * n)[:n]
        e = np.concatenate([e[e > 0], np.zeros(n - (e > 0).sum())])
        gini = np.abs(e[:, None] - e[None, :]).sum() / (2 * n * e.sum())
        assert got[name] == pytest.approx(gini, abs=1e-12)
    e = np.array([v for v in expected_exposure(df, k, ties, "log").values() if v > 0])
    q = e / e.sum()
    entropy = float(-(q * np.log2(q)).sum()) / math.log2(n)
    assert got[f"exposure_entropy(discount=log,normalize=true){suffix}"] == pytest.approx(
        entropy, abs=1e-12
    )


@pytest.mark.parametrize("ties", prk.TIE_POLICIES)
@pytest.mark.parametrize("seed", range(3))
def test_per_user_metrics_match_brute_force(seed: int, ties: str) -> None:
    df = small_frame(seed, n_users=6, max_len=6)
    rng = np.random.default_rng(seed)
    pop = dict(enumerate(rng.uniform(0.01, 1.0, size=8)))
    table = pl.DataFrame({"item": list(pop), "popularity": list(pop.values())})
    got = prk.evaluate(
        df, ["novelty@3", "popularity_bias@3"], ties=ties, items=table, per_user=True
    )
    for user, novelty, bias in got.iter_rows():
        orders = orderings(rows_by_user(df)[user], ties)
        tops = [ranked[:3] for ranked, _ in orders]
        if not tops[0]:
            assert novelty is None
            assert bias is None
            continue
        assert novelty == pytest.approx(
            np.mean([np.mean([-math.log2(pop[r.item]) for r in top]) for top in tops]), abs=1e-12
        )
        assert bias == pytest.approx(
            np.mean([np.mean([pop[r.item] for r in top]) for top in tops]), abs=1e-12
        )


@pytest.mark.parametrize("ties", ["expected", "item_desc"])
def test_bucket_invariance_with_by(ties: str) -> None:
    a = small_frame(1, n_users=30).with_columns(system=pl.lit("a"))
    b = small_frame(2, n_users=30).with_columns(system=pl.lit("b"))
    df = pl.concat([a, b])
    table = pl.DataFrame({"item": list(range(8)), "popularity": [0.1 * (i + 1) for i in range(8)]})
    metrics = [
        "coverage@2",
        "exposure_entropy@3",
        "exposure_entropy(discount=log,normalize=true)",
        "gini@2",
        "gini(discount=log)@3",
        "popularity_bias@2",
        "novelty@3",
    ]
    options = {"by": "system", "items": table, "ties": ties, "n_items": 10}
    expected = prk.evaluate(df, metrics, engine="memory", **options)  # type: ignore[arg-type]
    for strategy, n in (("buckets", 3), ("partition", 5)):
        got = prk.evaluate(df, metrics, engine=engine_of(strategy, n_buckets=n), **options)  # type: ignore[arg-type]
        assert_frame_equal(got, expected, check_exact=False, rel_tol=1e-12)


# ---------------------------------------------------------------------- errors
@pytest.mark.parametrize(
    ("metric", "table", "match"),
    [
        (
            "novelty@2",
            POPULARITY.filter(pl.col("item") != 12),
            r"metric 'novelty': 1 item\(s\) in the top k of 1 user\(s\) have no popularity in "
            r"\(0, 1\] \(column 'popularity', from the data or items=\), e.g. item \[12\]",
        ),
        (
            "popularity_bias@2",
            POPULARITY.filter(pl.col("item") != 11),
            r"2 item\(s\) in the top k of 2 user\(s\) have no finite, non-negative popularity",
        ),
        ("novelty@2", POPULARITY.with_columns(popularity=pl.lit(0.0)), r"6 item.*e.g. item \[10\]"),
        ("novelty@2", POPULARITY.with_columns(popularity=pl.lit(2.0)), "in \\(0, 1\\]"),
        ("popularity_bias@2", POPULARITY.with_columns(popularity=pl.lit(-1.0)), "non-negative"),
        ("popularity_bias@2", POPULARITY.with_columns(popularity=pl.lit(None)), "non-negative"),
        ("novelty@2", POPULARITY.with_columns(popularity=pl.lit(float("nan"))), "novelty"),
        ("novelty(popularity=pop)@2", POPULARITY, "column 'pop' .* not found in the data or the"),
    ],
)
def test_items_without_popularity(metric: str, table: pl.DataFrame, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        prk.evaluate(RECS, metric, items=table, users="recs")


def test_zero_popularity_is_fine_for_popularity_bias_and_outside_the_top_k() -> None:
    table = POPULARITY.with_columns(
        pl.when(pl.col("item") == 11).then(0.0).otherwise("popularity").alias("popularity")
    )
    assert one(RECS, "popularity_bias@2", items=table) == pytest.approx(
        (2 / 3 + 0 + 2 / 3 + 1 / 3 + 2 / 3 + 0) / 6
    )
    assert one(RECS, "novelty@1", items=table) == pytest.approx(math.log2(3 / 2))


def test_global_metrics_reject_per_user() -> None:
    with pytest.raises(ValueError, match="one value per by group"):
        prk.evaluate(RECS, ["coverage@2", "map"], per_user=True)


# ---------------------------------------------------------------------- item_popularity
def test_item_popularity_bases() -> None:
    logs = pl.DataFrame({"user": [1, 1, 1, 2, 3], "item": ["a", "a", "b", "a", "c"]})
    users = prk.item_popularity(logs)
    assert users.rows() == [
        ("a", pytest.approx(2 / 3)),
        ("b", pytest.approx(1 / 3)),
        ("c", pytest.approx(1 / 3)),
    ]
    rows = prk.item_popularity(logs, basis="interactions", name="p")
    assert rows.columns == ["item", "p"]
    assert rows.get_column("p").to_list() == pytest.approx([3 / 5, 1 / 5, 1 / 5])
    with_catalog = prk.item_popularity(logs, catalog=pl.DataFrame({"item": ["a", "z"]}))
    assert with_catalog.rows() == [
        ("a", pytest.approx(2 / 3)),
        ("b", pytest.approx(1 / 3)),
        ("c", pytest.approx(1 / 3)),
        ("z", 0.0),
    ]
    lazy = prk.item_popularity(logs.lazy())
    assert isinstance(lazy, pl.LazyFrame)
    assert_frame_equal(lazy.collect(), users)
    assert_frame_equal(prk.item_popularity(logs.to_pandas()), users)


def test_item_popularity_feeds_novelty() -> None:
    got = one(RECS, "novelty@2", items=prk.item_popularity(LOGS))
    assert got == pytest.approx((math.log2(3 / 2) + math.log2(3)) / 2)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"basis": "sessions"}, ValueError, "'basis' of item_popularity must be one of"),
        ({"item": "product"}, ValueError, "column 'product' not found in interactions"),
        ({"catalog": [1, 2]}, TypeError, "'catalog' of item_popularity must be a polars Series"),
        ({"catalog": pl.Series(["a"])}, TypeError, "has dtype String in catalog"),
        ({"catalog": pl.DataFrame({"x": [1]})}, ValueError, "needs an 'item' column"),
    ],
)
def test_item_popularity_errors(kwargs: dict[str, Any], error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        prk.item_popularity(LOGS, **kwargs)


def test_item_popularity_rejects_null_ids() -> None:
    logs = pl.DataFrame({"user": [1, None], "item": [1, 2]})
    with pytest.raises(ValueError, match="1 row\\(s\\) with a null user or item"):
        prk.item_popularity(logs)
    with pytest.raises(TypeError, match="'interactions' of item_popularity must be a polars"):
        prk.item_popularity({"user": [1]})
