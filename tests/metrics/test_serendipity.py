"""serendipity and unexpectedness: by hand, peers' test vectors, ties, errors."""

from __future__ import annotations

import random

import polars as pl
import pytest

import polars_rankeval as prk
from tests._tie_brute import brute_per_user, per_user
from tests.frames import (
    MS_TRAIN,
    RECTOOLS_PREV,
    RECTOOLS_RECO,
    RECTOOLS_TEST,
)


def rt_example() -> pl.DataFrame:
    """RecTools' Serendipity docstring example (tests.frames) joined into one long frame."""
    truth = RECTOOLS_TEST.with_columns(relevance=pl.lit(1))
    return prk.join(RECTOOLS_RECO, truth, rank="rank", relevance="relevance")


def test_serendipity_rectools_docstring_vectors() -> None:
    df = rt_example()
    for k, expected in ((1, [0.0, 0.25, 0.0, 0.25]), (2, [0.0, 0.5, 0.0, 0.125])):
        out = prk.evaluate(
            df,
            [f"serendipity@{k}"],
            rank="rank",
            history=RECTOOLS_PREV,
            n_items=4,
            per_user=True,
            users="recs",
        ).sort("user")
        assert out.get_column(f"serendipity@{k}").to_list() == pytest.approx(expected)


def test_serendipity_popularity_by_hand() -> None:
    # Popularity ranks in the history: i1 (3 rows) 1, i2 (2 rows) 2; i3 cold: N + 1 = 5.
    # u2 at k=2: i2 at rank 1, relevant: max(2 - 1, 0) / 4; i3 at rank 2, relevant:
    # (5 - 2) / 4. Mean over the 2 items.
    out = per_user(rt_example(), "serendipity@2", rank="rank", history=RECTOOLS_PREV, n_items=4)
    assert out["u2"] == pytest.approx(((2 - 1) / 4 + (5 - 2) / 4) / 2)
    # u4: i2 relevant (1/4), i3 not relevant.
    assert out["u4"] == pytest.approx((1 / 4 + 0) / 2)


# MS Recommenders' diversity/serendipity test data (tests/unit/.../conftest.py).
MS_RECO = pl.DataFrame(
    {
        "user": [1, 1, 2, 2, 3, 3],
        "item": [3, 5, 2, 5, 1, 2],
        "score": [2.0, 1.0, 2.0, 1.0, 2.0, 1.0],
        "relevance": [1, 0, 1, 1, 1, 0],
    }
)
MS_FEATURES = pl.DataFrame(
    {
        "item": [1, 2, 3, 4, 5],
        "features": [
            [0.0, 1, 1, 0, 0],
            [0.0, 1, 0, 1, 0],
            [0.0, 0, 1, 1, 0],
            [0.0, 0, 1, 0, 1],
            [0.0, 0, 0, 1, 1],
        ],
    }
)


def test_serendipity_history_matches_ms_recommenders_tests() -> None:
    # test_user_serendipity (co-occurrence) and test_user_serendipity_item_feature_vector.
    got = per_user(MS_RECO, "serendipity(mode=history)", history=MS_TRAIN)
    assert [got[u] for u in (1, 2, 3)] == pytest.approx([0.363915, 0.53455, 0.403775], abs=1e-5)
    got = per_user(
        MS_RECO,
        "serendipity(mode=history,similarity=features)",
        history=MS_TRAIN,
        items=MS_FEATURES,
    )
    assert [got[u] for u in (1, 2, 3)] == pytest.approx([0.25, 0.625, 1 / 3], abs=1e-4)
    summary = prk.evaluate(MS_RECO, ["serendipity(mode=history)"], history=MS_TRAIN)
    assert summary.item(0, "serendipity(mode=history)") == pytest.approx(0.43408, abs=1e-5)


def test_unexpectedness_history_by_hand() -> None:
    # User 1 history {1, 2, 4}; item 3 co-occurs with 4 in users 2 and 3: c(3) = 2,
    # c(4) = 3, c(3, 4) = 2; with 1 and 2 never. Mean similarity (0 + 0 + 2/sqrt(6)) / 3.
    # Item 5: c(5) = 1, c(4, 5) = 1: (0 + 0 + 1/sqrt(3)) / 3.
    got = per_user(MS_RECO, "unexpectedness(mode=history)", history=MS_TRAIN)
    s3 = (2 / (2 * 3) ** 0.5) / 3
    s5 = (1 / 3**0.5) / 3
    assert got[1] == pytest.approx(((1 - s3) + (1 - s5)) / 2)
    # Features: item 3 = (0,0,1,1,0) against 1, 2, 4: cos 1/2, 1/2, 1/2.
    got = per_user(
        MS_RECO,
        "unexpectedness(mode=history,similarity=features)@1",
        history=MS_TRAIN,
        items=MS_FEATURES,
    )
    assert got[1] == pytest.approx(1 - (0.5 + 0.5 + 0.5) / 3)


# RePlay's Unexpectedness docstring (replay-rec 0.22.0); base ties broken by item id
# descending (their pandas/polars path): u1 base 2 (0.7), 7, 3 (0.5 each).
RP_RECS = pl.DataFrame(
    {
        "user": [1] * 5 + [2] * 5 + [3] * 3,
        "item": [3, 7, 10, 11, 2, 5, 8, 11, 1, 3, 4, 9, 2],
        "score": [0.6, 0.5, 0.4, 0.3, 0.2, 0.6, 0.5, 0.4, 0.3, 0.2, 1.0, 0.5, 0.1],
    }
)
RP_BASE = pl.DataFrame(
    {
        "user": [1, 1, 1, 2, 2, 2, 3, 3],
        "item": [2, 7, 3, 8, 5, 3, 4, 9],
        "base_rank": [1, 2, 3, 1, 2, 3, 1, 2],
    }
)


def replay_frame() -> pl.DataFrame:
    return RP_RECS.join(RP_BASE, on=["user", "item"], how="left").with_columns(
        relevance=pl.lit(None, pl.Int64)
    )


def test_unexpectedness_replay_docstring_vectors() -> None:
    df = replay_frame()
    got2 = per_user(df, "unexpectedness@2")
    got4 = per_user(df, "unexpectedness@4")
    # @2: u1 top {3, 7}, base top 2 {2, 7}: 1 - 1/2; u2 {5, 8} = {8, 5}; u3 {4, 9}.
    assert [got2[u] for u in (1, 2, 3)] == pytest.approx([1 - 1 / 2, 0.0, 0.0])
    # @4: u1 shares 7, 3 with the base's 3 items: 1 - 2/4; u3 has 3 items: 1 - 2/4.
    assert [got4[u] for u in (1, 2, 3)] == pytest.approx([0.5, 0.5, 0.5])
    mean = prk.evaluate(df, ["unexpectedness@2"], users="all").item(0, "unexpectedness@2")
    assert mean == pytest.approx(0.16666666666666666)
    # denominator=list: u3's list of 3 at @4 holds 2 base items: 1 - 2/3.
    assert per_user(df, "unexpectedness(denominator=list)@4")[3] == pytest.approx(1 - 2 / 3)


def test_serendipity_base_by_hand() -> None:
    df = replay_frame().with_columns(relevance=pl.when(pl.col("item") >= 5).then(1))
    # u1 @4: 3, 7, 10, 11; relevant 7, 10, 11; 7 is in the base top 4: 2 of 4.
    got = per_user(df, "serendipity(mode=base)@4")
    assert got[1] == pytest.approx(2 / 4)
    # u3 @4: 4, 9, 2; relevant 9 (in the base): 0 of 3.
    assert got[3] == pytest.approx(0.0)


def tied_frame(seed: int) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    rng = random.Random(seed)
    rows = []
    for user in range(1, 4):
        items = rng.sample(range(8), 5)
        for item in items:
            rows.append(
                {
                    "user": user,
                    "item": item,
                    "score": float(rng.choice([1, 2, 2, 3])),
                    "relevance": rng.choice([None, 1, 2]),
                    "base_rank": rng.choice([None, 1, 2, 3, 4]),
                }
            )
    df = pl.DataFrame(rows)
    history = pl.DataFrame(
        {
            "user": [rng.randint(1, 4) for _ in range(20)],
            "item": [rng.randrange(8) for _ in range(20)],
        }
    )
    feats = pl.DataFrame(
        {"item": list(range(8)), "features": [[rng.random(), rng.random(), 0.0] for _ in range(8)]}
    )
    return df, history, feats


@pytest.mark.parametrize(
    "metric",
    [
        "serendipity@2",
        "serendipity(rel=2)@3",
        "serendipity(mode=history)@2",
        "serendipity(mode=history,similarity=features)@3",
        "serendipity(mode=base)@2",
        "unexpectedness@3",
        "unexpectedness(mode=history)@2",
        "unexpectedness(mode=history,similarity=features)@2",
    ],
)
def test_expected_ties_match_brute_force(metric: str) -> None:
    df, history, feats = tied_frame(3)
    kwargs = {"history": history, "items": feats, "n_items": 8}
    got = per_user(df, metric, **kwargs)
    want = brute_per_user(df, metric, **kwargs)
    assert got.keys() == want.keys()
    for user, value in want.items():
        assert got[user] == pytest.approx(value, abs=1e-12), user


@pytest.mark.parametrize("seed", range(4))
def test_bounds_and_serendipity_below_unexpectedness(seed: int) -> None:
    df, history, feats = tied_frame(seed)
    kwargs = {"history": history, "items": feats, "n_items": 8, "ties": "item_desc"}
    for sim in ("cooccurrence", "features"):
        ser = per_user(df, f"serendipity(mode=history,similarity={sim})@3", **kwargs)
        unexp = per_user(df, f"unexpectedness(mode=history,similarity={sim})@3", **kwargs)
        for user, value in ser.items():
            if value is not None:
                assert -1e-12 <= value <= unexp[user] + 1e-12 <= 1 + 1e-12
    pop = per_user(df, "serendipity@3", **kwargs)
    assert all(v is None or 0 <= v <= 1 for v in pop.values())


def test_bucketed_equals_in_memory() -> None:
    df, history, feats = tied_frame(7)
    metrics = [
        "serendipity@2",
        "serendipity(mode=history)@3",
        "unexpectedness(mode=history,similarity=features)@3",
        "unexpectedness@2",
    ]
    kwargs = {"history": history, "items": feats, "n_items": 8, "users": "all"}
    mem = prk.evaluate(df, metrics, **kwargs)
    buckets = prk.evaluate(df, metrics, engine=prk.Buckets(n_buckets=3), **kwargs)
    for name in metrics:
        assert buckets.item(0, name) == pytest.approx(mem.item(0, name))


def test_users_without_history_are_undefined() -> None:
    got = per_user(
        MS_RECO, "unexpectedness(mode=history)", history=MS_TRAIN.filter(pl.col("user") != 2)
    )
    assert got[2] is None
    assert got[1] is not None


def test_errors() -> None:
    with pytest.raises(
        ValueError, match="metric 'serendipity' reads the users' past interactions: pass history="
    ):
        prk.evaluate(MS_RECO, ["serendipity@2"])
    with pytest.raises(
        ValueError, match="metric 'serendipity' reads the item side table: pass items="
    ):
        prk.evaluate(MS_RECO, ["serendipity(mode=history,similarity=features)"], history=MS_TRAIN)
    short = MS_FEATURES.filter(pl.col("item") != 5)
    with pytest.raises(
        ValueError,
        match=r"metric 'serendipity': 2 item\(s\) .* no usable feature vector .* e.g. item \[5\]",
    ):
        prk.evaluate(
            MS_RECO,
            ["serendipity(mode=history,similarity=features)"],
            history=MS_TRAIN,
            items=short,
        )
    bad = replay_frame().with_columns(
        base_rank=pl.when(pl.col("item") == 3).then(0).otherwise(pl.col("base_rank"))
    )
    with pytest.raises(
        ValueError,
        match=r"baseline rank \(column 'base_rank'\) that is not a number >= 1, e.g. item \[3\]",
    ):
        prk.evaluate(bad, ["unexpectedness@3"], users="all")
    # Without a cutoff the whole list is compared (u3: 3 items, 2 in the base).
    assert per_user(replay_frame(), "unexpectedness")[3] == pytest.approx(1 - 2 / 3)
    with pytest.raises(TypeError, match="dtype String in history= but Int64 in the data"):
        prk.evaluate(MS_RECO, ["serendipity"], history=MS_TRAIN.cast({"item": pl.String}))
    with pytest.raises(ValueError, match="history= table needs the 'user' column"):
        prk.evaluate(MS_RECO, ["serendipity"], history=MS_TRAIN.rename({"user": "u"}))
    with pytest.raises(ValueError, match="1 row"):
        prk.evaluate(
            MS_RECO, ["serendipity"], history=pl.DataFrame({"user": [1, None], "item": [1, 2]})
        )


def test_presets_map_the_peer_metrics() -> None:
    out = prk.evaluate(
        rt_example(),
        ["Serendipity@2"],
        rank="rank",
        conventions="rectools",
        history=RECTOOLS_PREV,
        n_items=4,
        users="recs",
    )
    assert out.item(0, 0) == pytest.approx((0 + 0.5 + 0 + 0.125) / 4)
    out = prk.evaluate(replay_frame(), ["Unexpectedness@2"], conventions="replay", users="recs")
    assert out.item(0, 0) == pytest.approx(0.16666666666666666)
    out = prk.evaluate(
        MS_RECO, ["serendipity"], conventions="recommenders", history=MS_TRAIN, users="recs"
    )
    assert out.item(0, 0) == pytest.approx(0.43408, abs=1e-5)


def test_compare_passes_history_through() -> None:
    df, history, _ = tied_frame(11)
    two = pl.concat(
        [
            df.with_columns(system=pl.lit("a")),
            df.with_columns(system=pl.lit("b"), score=-pl.col("score")),
        ]
    )
    metric = "unexpectedness(mode=history)@2"
    out = prk.compare(two, [metric], history=history, n_resamples=200, users="all")
    per_system = prk.evaluate(two, [metric], by="system", history=history, users="all")
    means = dict(zip(per_system["system"], per_system[metric], strict=True))
    assert out.height == 1
    row = out.row(0, named=True)
    diff = [v for k, v in row.items() if "diff" in k.lower() or "delta" in k.lower()]
    assert diff, row
    assert any(abs(abs(d) - abs(means["b"] - means["a"])) < 1e-12 for d in diff if d is not None)


def test_serendipity_with_rectools_rank_gaps() -> None:
    # RecTools keeps the gaps of explicit ranks: u1's i3 at rank 3 (i2 at 1) and an item
    # at rank 9 outside k=3. Popularity ranks from RECTOOLS_PREV: i1 1, i2 2; i3 cold (N + 1 = 5).
    reco = pl.DataFrame({"user": ["u1", "u1", "u1"], "item": ["i2", "i3", "i4"], "rank": [1, 3, 9]})
    truth = pl.DataFrame({"user": ["u1"] * 3, "item": ["i2", "i3", "i4"], "relevance": [1] * 3})
    df = prk.join(reco, truth, rank="rank", relevance="relevance")
    out = prk.evaluate(
        df,
        ["Serendipity@3"],
        rank="rank",
        conventions="rectools",
        history=RECTOOLS_PREV,
        n_items=4,
        users="recs",
    )
    # i2 at rank 1: max(2 - 1, 0) / 4; i3 at rank 3: (5 - 3) / 4; mean over the 2 items.
    assert out.item(0, 0) == pytest.approx((1 / 4 + 2 / 4) / 2)
