"""categorical_diversity: by hand, RePlay's values, tied scores, properties, errors."""

from __future__ import annotations

import itertools
import math

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import polars_rankeval as prk


def long(rows: list[tuple[int, int, float]]) -> pl.DataFrame:
    return pl.DataFrame(rows, schema=["user", "item", "score"], orient="row").with_columns(
        relevance=pl.lit(None, dtype=pl.Float64)
    )


# RePlay docstring (replay/metrics/categorical_diversity.py) and tests/metrics
# test_metrics.py::test_diversity_metric: category rows (user, category, rating).
REPLAY_CATS = {
    1: [(3, 0.6), (7, 0.5), (10, 0.4), (11, 0.3), (2, 0.2)],
    2: [(5, 0.6), (8, 0.5), (11, 0.4), (1, 0.3), (3, 0.2)],
    3: [(4, 1.0), (9, 0.5), (2, 0.1)],
}


def replay_frame() -> tuple[pl.DataFrame, pl.DataFrame]:
    """One item per recommendation row, its category the row's category_id."""
    rows, cats = [], []
    for user, entries in REPLAY_CATS.items():
        for position, (cat, score) in enumerate(entries):
            item = 100 * user + position
            rows.append((user, item, score))
            cats.append((item, cat))
    items = pl.DataFrame(cats, schema=["item", "category"], orient="row")
    return long(rows), items


def test_replay_values() -> None:
    # CategoricalDiversity([3, 5]) -> {@3: 1.0, @5: 0.8666666666666667}; PerUser @5
    # {1: 1.0, 2: 1.0, 3: 0.6}: user 3 has 3 distinct categories in 3 rows, / k = 5.
    df, items = replay_frame()
    names = ["categorical_diversity(denominator=k)@3", "categorical_diversity(denominator=k)@5"]
    out = prk.evaluate(df, names, items=items, users="recs")
    assert out.row(0)[:2] == pytest.approx((1.0, (1 + 1 + 3 / 5) / 3))
    assert out.row(0)[1] == pytest.approx(0.8666666666666667)
    per = prk.evaluate(df, names[1], items=items, users="recs", per_user=True).sort("user")
    assert per[:, 1].to_list() == pytest.approx([1.0, 1.0, 0.6])
    # The preset: one word (users='recs': RePlay reads the recommendations only).
    preset = prk.evaluate(
        df, "CategoricalDiversity@[3,5]", conventions="replay", users="recs", items=items
    )
    assert preset.row(0)[:2] == pytest.approx((1.0, 0.8666666666666667))
    # test_offline_metrics_unexpectedness_and_diversity: category = item on the
    # conftest recommendations (the lists above as items), k = 2, 5, 10, 20 ->
    # [1, 0.86666, 0.43333, 0.21666]: users' distinct items 5, 5, 3 over k.
    as_items = df.with_columns(category=pl.col("item"))
    got = prk.evaluate(
        as_items, "CategoricalDiversity@[2,5,10,20]", conventions="replay", users="recs"
    )
    expected = [1.0, (1 + 1 + 3 / 5) / 3, (5 + 5 + 3) / 10 / 3, (5 + 5 + 3) / 20 / 3]
    assert got.row(0)[:4] == pytest.approx(expected)
    assert got.row(0)[:4] == pytest.approx([1, 0.86666, 0.43333, 0.21666], abs=1e-5)


def test_hand_computed_with_repeated_categories() -> None:
    # User 1: a b c d by score, categories 1 1 2 1: top 2 {1} -> 1/2; top 3 {1, 2} -> 2/3;
    # top 4 -> 2/4 (list) and 2/4 (k). User 2 (one item, category 3): @3 list 1/1, k 1/3.
    df = long([(1, 1, 4.0), (1, 2, 3.0), (1, 3, 2.0), (1, 4, 1.0), (2, 5, 1.0)])
    items = pl.DataFrame({"item": [1, 2, 3, 4, 5], "category": ["x", "x", "y", "x", "z"]})
    names = [
        "categorical_diversity@2",
        "categorical_diversity@3",
        "categorical_diversity@4",
        "categorical_diversity(denominator=k)@3",
        "categorical_diversity",
    ]
    per = prk.evaluate(df, names, items=items, users="recs", per_user=True).sort("user")
    assert per.row(0)[1:] == pytest.approx((1 / 2, 2 / 3, 2 / 4, 2 / 3, 2 / 4))
    assert per.row(1)[1:] == pytest.approx((1.0, 1.0, 1.0, 1 / 3, 1.0))
    # The category may also be a column of the data itself.
    inline = df.join(items, on="item")
    again = prk.evaluate(inline, names, users="recs", per_user=True).sort("user")
    assert again.rows() == per.rows()


def test_tied_scores_exact_expectation() -> None:
    # a (3.0, cat 1) then b, c, d tied (cat 1, 2, 2): top 2 = a + one of three:
    # P(cat 2 appears) = 1 - C(1, 1) / C(3, 1) = 2/3 -> (1 + 2/3) / 2. top 3 = a + two
    # of three: cat 2 is missed only by drawing two cat-1 items, C(1, 2) = 0 -> 2 / 3.
    df = long([(1, 1, 3.0), (1, 2, 2.0), (1, 3, 2.0), (1, 4, 2.0)])
    items = pl.DataFrame({"item": [1, 2, 3, 4], "category": [1, 1, 2, 2]})
    out = prk.evaluate(
        df,
        ["categorical_diversity@2", "categorical_diversity@3"],
        items=items,
        users="recs",
        per_user=True,
    )
    assert out.row(0)[1:] == pytest.approx(((1 + 2 / 3) / 2, 2 / 3))
    # Deterministic policies take one ordering: item_asc puts b (cat 1) second.
    asc = prk.evaluate(df, "categorical_diversity@2", items=items, users="recs", ties="item_asc")
    assert asc[:, 0].item() == pytest.approx(1 / 2)
    desc = prk.evaluate(df, "categorical_diversity@2", items=items, users="recs", ties="item_desc")
    assert desc[:, 0].item() == pytest.approx(2 / 2)


def brute_expected(rows: list[tuple[int, int, float]], cats: dict[int, int], k: int) -> float:
    """Mean over users of the mean over every ordering of tied scores."""
    values = []
    for user in sorted({r[0] for r in rows}):
        own = [r for r in rows if r[0] == user]
        total, count = 0.0, 0
        for perm in itertools.permutations(own):
            ordered = sorted(perm, key=lambda r: -r[2])  # stable: perm breaks the ties
            top = ordered[:k]
            total += len({cats[i] for _, i, _ in top}) / len(top)
            count += 1
        values.append(total / count)
    return float(np.mean(values))


@settings(max_examples=25, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 2), st.integers(0, 6), st.integers(0, 2)),
        min_size=1,
        max_size=12,
    ),
    st.integers(1, 4),
    st.integers(0, 10_000),
)
def test_properties(raw: list[tuple[int, int, int]], k: int, seed: int) -> None:
    # Exact expectation against the brute force over tied orderings (lists <= 5 rows),
    # bounds [1/m, 1], and invariance to the row order.
    seen: set[tuple[int, int]] = set()
    rows = []
    for user, item, score in raw:
        if (user, item) not in seen and sum(r[0] == user for r in rows) < 5:
            seen.add((user, item))
            rows.append((user, item, float(score)))
    cats = {i: i % 3 for i in range(7)}
    items = pl.DataFrame({"item": list(cats), "category": list(cats.values())})
    df = long(rows)
    name = f"categorical_diversity@{k}"
    got = prk.evaluate(df, name, items=items, users="recs")[:, 0].item()
    assert got == pytest.approx(brute_expected(rows, cats, k), abs=1e-9)
    per = prk.evaluate(df, name, items=items, users="recs", per_user=True)
    values = per[:, 1].to_numpy()
    sizes = [min(k, sum(r[0] == u for r in rows)) for u in per["user"].to_list()]
    assert np.all(values <= 1 + 1e-12)
    assert np.all(values >= 1 / np.array(sizes) - 1e-12)
    shuffled = df.sample(fraction=1.0, shuffle=True, seed=seed)
    again = prk.evaluate(shuffled, name, items=items, users="recs")[:, 0].item()
    assert again == pytest.approx(got, abs=1e-12)


def test_large_tie_group_is_stable() -> None:
    # 400 tied items, 100 of category 0 and 300 of category 1, k = 10: P(cat 0 absent)
    # = C(300, 10) / C(400, 10), P(cat 1 absent) = C(100, 10) / C(400, 10).
    n = 400
    df = long([(1, i, 1.0) for i in range(n)])
    items = pl.DataFrame({"item": range(n), "category": [0] * 100 + [1] * 300})
    got = prk.evaluate(df, "categorical_diversity@10", items=items, users="recs")[:, 0].item()
    miss0 = math.comb(300, 10) / math.comb(400, 10)
    miss1 = math.comb(100, 10) / math.comb(400, 10)
    assert got == pytest.approx((2 - miss0 - miss1) / 10, rel=1e-10)


def test_errors() -> None:
    df = long([(1, 1, 2.0), (1, 2, 1.0), (2, 3, 1.0)])
    with pytest.raises(ValueError, match=r"denominator=k\) needs a cutoff @k"):
        prk.evaluate(
            df,
            "categorical_diversity(denominator=k)",
            users="recs",
            items=pl.DataFrame({"item": [1, 2, 3], "category": [1, 1, 1]}),
        )
    missing = pl.DataFrame({"item": [1, 3], "category": [1, None]})
    with pytest.raises(
        ValueError,
        match=r"2 item\(s\) in the top k of 2 user\(s\) have no "
        r"category \(column 'category'.*e\.g\. item \[2, 3\]",
    ):
        prk.evaluate(df, "categorical_diversity@2", users="recs", items=missing)
    with pytest.raises(ValueError, match=r"column 'genre' .* not found in the data"):
        prk.evaluate(df, "categorical_diversity(category=genre)@2", users="recs")
    with pytest.raises(ValueError, match="'denominator' of metric 'categorical_diversity'"):
        prk.evaluate(
            df,
            "categorical_diversity(denominator=all)@2",
            users="recs",
            items=pl.DataFrame({"item": [1, 2, 3], "category": [1, 1, 1]}),
        )


def test_empty_list_is_null_and_skipped() -> None:
    df = pl.DataFrame(
        {
            "user": [1, 1, 2],
            "item": [1, 2, 3],
            "score": [2.0, 1.0, None],
            "relevance": [None, None, 1.0],
        }
    )
    items = pl.DataFrame({"item": [1, 2, 3], "category": [1, 2, 3]})
    per = prk.evaluate(df, "categorical_diversity@2", users="all", items=items, per_user=True)
    assert per.sort("user")[:, 1].to_list() == [1.0, None]
