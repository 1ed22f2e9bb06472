"""prk.largest_differences / largest_differences_per_user: the users behind a comparison."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import polars_rankeval as prk
from polars_rankeval.analysis.differences import DIFFERENCE_COLUMNS
from polars_rankeval.api.datasets import load_systems


def frame(metric: str, a: list[float | None], b: list[float | None]) -> pl.DataFrame:
    n = len(a)
    return pl.DataFrame(
        {"system": ["a"] * n + ["b"] * n, "user": list(range(n)) * 2, metric: a + b}
    )


def test_hand_computed_both_ways() -> None:
    # b - a: +0.5, +0.25, -0.25, 0 (tie, not listed), -0.5, undefined (left out)
    per_user = frame("ndcg@10", [0.0, 0.5, 0.5, 0.5, 1.0, 0.2], [0.5, 0.75, 0.25, 0.5, 0.5, None])
    out = prk.largest_differences_per_user(per_user, baseline="a", n=1)
    assert out.columns == list(DIFFERENCE_COLUMNS)
    assert out.select("user", "difference", "direction", "rank").rows() == [
        (0, 0.5 - 0.0, "better", 1),
        (4, 0.5 - 1.0, "worse", 1),
    ]
    wide = prk.largest_differences_per_user(per_user, baseline="a", n=10)
    assert wide.select("user", "rank").rows() == [(0, 1), (1, 2), (4, 1), (2, 2)]


def test_tied_differences_share_the_rank() -> None:
    # b - a: +0.5 for users 3, 1, 2 (tied), +0.25 for user 0
    per_user = frame("m", [0.25, 0.0, 0.0, 0.0], [0.5, 0.5, 0.5, 0.5])
    out = prk.largest_differences_per_user(per_user, baseline="a", n=2)
    # rank "min": the three tied users are all rank 1; the smallest ids are kept
    assert out.select("user", "rank", "direction").rows() == [(1, 1, "higher"), (2, 1, "higher")]
    everyone = prk.largest_differences_per_user(per_user, baseline="a", n=4)
    assert everyone.select("user", "rank").rows() == [(1, 1), (2, 1), (3, 1), (0, 4)]


def test_tolerance_and_lower_is_better() -> None:
    # fallout: lower is better. b - a: -0.5 (better), +1e-12 (a tie), +0.25 (worse)
    per_user = frame("fallout@3", [0.5, 0.25, 0.0], [0.0, 0.25 + 1e-12, 0.25])
    out = prk.largest_differences_per_user(per_user, baseline="a")
    assert out.select("user", "direction").rows() == [(0, "better"), (2, "worse")]
    exact = prk.largest_differences_per_user(per_user, baseline="a", tie_tolerance=0)
    assert exact.filter(pl.col("user") == 1)["direction"].to_list() == ["worse"]


def test_every_pair_in_compare_order() -> None:
    per_user = pl.concat(
        [
            frame("m", [0.0, 1.0], [1.0, 1.0]),
            pl.DataFrame({"system": ["c", "c"], "user": [0, 1], "m": [0.5, 0.0]}),
        ]
    )
    out = prk.largest_differences_per_user(per_user)
    pairs = list(dict.fromkeys(out.select("system", "baseline").rows()))
    compared = prk.compare_per_user(per_user, test="t").select("system", "baseline").rows()
    assert pairs == compared == [("b", "a"), ("c", "a"), ("c", "b")]


def test_numpy_cross_check_and_compare_counts() -> None:
    per_user = prk.evaluate(load_systems(), ["ndcg@10"], by="system", per_user=True)
    n = 5
    out = prk.largest_differences_per_user(per_user, baseline="bm25", n=n)
    result = prk.compare_per_user(per_user, baseline="bm25", test="t")
    for system in ["dense", "hybrid", "random"]:
        paired = (
            per_user.filter(pl.col("system") == system)
            .join(per_user.filter(pl.col("system") == "bm25"), on="user", suffix="_b")
            .drop_nulls()
            .sort("user")
        )
        d = (paired["ndcg@10"] - paired["ndcg@10_b"]).to_numpy()
        users = paired["user"].to_numpy()
        mine = out.filter(pl.col("system") == system)
        for direction, mask, key in (("better", d > 1e-9, -d), ("worse", d < -1e-9, d)):
            order = np.lexsort((users[mask], key[mask]))[:n]
            got = mine.filter(pl.col("direction") == direction)
            assert got["user"].to_list() == users[mask][order].tolist()
            np.testing.assert_allclose(got["difference"].to_numpy(), d[mask][order])
        row = result.filter(pl.col("system") == system)
        assert row["wins"][0] == int((d > 1e-9).sum())


def test_row_order_and_lazy_do_not_matter() -> None:
    per_user = prk.evaluate(load_systems(), ["ndcg@10", "recall@20"], by="system", per_user=True)
    systems = ["bm25", "dense", "hybrid", "random"]
    base = prk.largest_differences_per_user(per_user, systems=systems, n=3)
    shuffled = per_user.sample(fraction=1.0, shuffle=True, seed=1)
    assert_frame_equal(base, prk.largest_differences_per_user(shuffled, systems=systems, n=3))
    assert_frame_equal(
        base, prk.largest_differences_per_user(per_user.lazy(), systems=systems, n=3)
    )


def test_from_data_equals_from_per_user() -> None:
    data = load_systems()
    out = prk.largest_differences(data, ["ndcg@10"], baseline="bm25", n=3)
    # largest_differences evaluates a lazy plan; the same plan here. (A frame in memory
    # may read its ideal DCG from counts per grade: the same values to the last bit or
    # two, which can swap users whose differences are equal.)
    per_user = prk.evaluate(data.lazy(), ["ndcg@10"], by="system", per_user=True).collect()
    systems = data["system"].unique(maintain_order=True).to_list()
    expected = prk.largest_differences_per_user(per_user, baseline="bm25", systems=systems, n=3)
    assert_frame_equal(out, expected)
    assert_frame_equal(out, prk.largest_differences(data.lazy(), ["ndcg@10"], baseline="bm25", n=3))


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        (
            {"n": 0},
            ValueError,
            "'n' of largest_differences_per_user must be an integer >= 1, got 0",
        ),
        ({"n": 1.5}, TypeError, "'n' of largest_differences_per_user must be an integer >= 1"),
        ({"tie_tolerance": -1.0}, ValueError, "'tie_tolerance' of .* must be a number >= 0"),
        ({"baseline": "z"}, ValueError, "baseline 'z' not found among the systems"),
        ({"systems": ["a", "z"]}, ValueError, "system\\(s\\) 'z' not found in column 'system'"),
        ({"systems": ["a"]}, ValueError, "need at least 2 systems in column 'system'"),
        ({"metrics": ["x"]}, ValueError, "metric column 'x' not found in the per-user frame"),
        ({"user": "u"}, ValueError, "user column 'u' not found in the per-user frame"),
    ],
)
def test_errors(kwargs: dict[str, object], error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        prk.largest_differences_per_user(frame("m", [0.1], [0.2]), **kwargs)  # type: ignore[arg-type]


def test_duplicates_and_forwarding_are_refused() -> None:
    dup = pl.concat([frame("m", [0.1], [0.2]), frame("m", [0.1], [0.2])])
    with pytest.raises(ValueError, match=r"duplicate \(system, user\) rows, e.g."):
        prk.largest_differences_per_user(dup)
    with pytest.raises(TypeError, match="largest_differences\\(\\) does not take per_user="):
        prk.largest_differences(load_systems(), ["ndcg@10"], per_user=True)
