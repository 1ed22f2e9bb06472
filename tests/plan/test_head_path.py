"""The sorted-head path (``polars_rankeval.plan.head``) against the general path.

The general path (window features over every row) is the oracle here: it is pinned
by the brute-force, hand-computed and reference-tool tests. These tests run the same
evaluation twice, once with the sorted-head path and once with it switched off, and
require the same values (1e-12) on random data with ties, under every tie policy,
for every metric and option the path covers; and they check from the plan that the
path is really taken (so it cannot silently fall back).

Tests the private units polars_rankeval.plan.head (its ENABLED switch) and
plan.head_sums (its SPLIT switch) on purpose.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import polars_rankeval as prk
import polars_rankeval.plan.head as _head
import polars_rankeval.plan.head_request as _head_request
import polars_rankeval.plan.head_sums as _head_sums
from polars_rankeval.plan.head_request import MARKER

TIES = ["expected", "item_desc", "item_asc", "optimistic", "pessimistic"]
METRICS = [
    "ndcg@10",
    "map@10",
    "mrr@10",
    "precision@10",
    "recall@10",
    "hit_rate@3",
    "f1@4",
    "precision(denominator=retrieved)@7",
    "f1(denominator=retrieved,rel=2)@3",
    "map(denominator=min_k_relevant)@6",
    "recall(rel=2)@5",
    "mrr(rel=3)@2",
    "dcg@5",
    "dcg(gain=exp)@8",
    "ndcg(gain=exp)@3",
    "ndcg(idcg=all)@4",
    "ndcg(discount=log_clipped)@5",
    "ndcg(base=10,discount=half_life,half_life=3)@6",
    "precision(rel=0.5)@3",
    "ndcg@50",  # beyond every list
]


def frame(seed: int, *, users: int = 60, decimals: int = 1, by: bool = False) -> pl.DataFrame:
    """Random long frame: lists of 0..25 items, heavy ties, unjudged and judged-only rows."""
    rng = np.random.default_rng(seed)
    rows: list[dict[str, Any]] = []
    for system in ("a", "b") if by else ("a",):
        for user in range(users):
            n = int(rng.integers(0, 26))
            for item in rng.choice(1000, size=n, replace=False):
                roll = rng.random()
                score = None if roll < 0.1 else float(np.round(rng.random(), decimals))
                relevance = None if rng.random() < 0.2 else int(rng.choice([0, 0, 0, 1, 2, 3]))
                rows.append(
                    {
                        "system": system,
                        "user": user,
                        "item": int(item),
                        "score": score,
                        "relevance": relevance,
                    }
                )
    df = pl.DataFrame(
        rows,
        schema={
            "system": pl.String,
            "user": pl.Int64,
            "item": pl.Int64,
            "score": pl.Float64,
            "relevance": pl.Int32,
        },
    )
    return df if by else df.drop("system")


def both(df: pl.DataFrame | pl.LazyFrame, metrics: list[str], **options: Any) -> tuple[Any, Any]:
    """(sorted-head path, general path) results of one evaluation."""
    assert _head.ENABLED
    fast = prk.evaluate(df, metrics, **options)
    _head.ENABLED = False
    try:
        slow = prk.evaluate(df, metrics, **options)
    finally:
        _head.ENABLED = True
    return fast, slow


def uses_head_path(df: pl.DataFrame, metrics: list[str], **options: Any) -> bool:
    """The evaluation builds the sorted-head plan (its per-user stage is called)."""
    calls: list[int] = []
    original = _head.per_user

    def spy(*args: Any, **kwargs: Any) -> pl.LazyFrame:
        calls.append(1)
        return original(*args, **kwargs)

    options.setdefault("validate", False)  # the path does not depend on the checks
    _head.per_user = spy  # type: ignore[assignment]
    try:
        prk.evaluate(df.lazy(), metrics, **options).collect()
    finally:
        _head.per_user = original  # type: ignore[assignment]
    return bool(calls)


@pytest.mark.parametrize("ties", TIES)
@pytest.mark.parametrize("decimals", [0, 1, 3])
def test_same_values_as_the_general_path(ties: str, decimals: int) -> None:
    df = frame(decimals, decimals=decimals)
    assert uses_head_path(df, METRICS, ties=ties)
    fast, slow = both(df, METRICS, ties=ties, per_user=True, users="all")
    assert_frame_equal(fast, slow, abs_tol=1e-12)


@pytest.mark.parametrize("grades", [0, 16])
@pytest.mark.parametrize("width", [0, 64])
@pytest.mark.parametrize("ties", ["item_desc", "pessimistic", "expected"])
def test_heads_as_arrays_and_as_lists(width: int, grades: int, ties: str, monkeypatch: Any) -> None:
    """A head of at most FIXED_WIDTH positions is held as Arrays, a wider one as lists.

    Width 0: every head a list; 64: every head of METRICS (K = 50) an Array, short
    lists padded. Both against the general path, single cutoffs and cutoff lists.
    Grades 0: every ideal DCG from the sorted gains; 16: those summed at one cutoff
    (the third request) from the counts per grade (relevance 0..3 here).
    """
    monkeypatch.setattr(_head_request, "FIXED_WIDTH", width)
    monkeypatch.setattr(_head, "MAX_GRADES", grades)
    df = frame(11)
    for metrics in (
        METRICS,
        ["ndcg@[1,3,10]", "map@1..5", "P@[2,4]", "mrr@4", "mrr@10", "hit_rate@10"],
        ["ndcg@10", "ndcg(gain=exp)@10", "map@10", "P@10"],  # each ideal summed at K
    ):
        head, general = both(df, metrics, ties=ties)
        assert_frame_equal(head, general, abs_tol=1e-12, rel_tol=0)


@pytest.mark.parametrize("relevance", [[0, 0, 0], [0, 5, 0], [2, 0, 40], [1.0, 0.0, 2.5]])
def test_ideal_from_counts_per_grade(relevance: list[float]) -> None:
    """The ideal DCG read from counts per grade, at its edges, equals the sorted one.

    No positive item (grade 0: no count at all), one grade, a grade above MAX_GRADES
    (the sorted gains instead) and a float relevance (always sorted): per user, as
    the general path computes them, at one cutoff and at several (a list read at each).
    Hand-computed for the one-grade list: with gains (2**5 - 1) = 31 and one relevant
    item ranked 2nd of 3, ndcg@3 = (31 / log2(3)) / 31; with the discount
    1 / max(1, log2(p)) (1 at positions 1 and 2), ndcg@1, @2 and @3 are 0 / 5, 5 / 5
    and 5 / 5.
    """
    dtype = pl.Float64 if isinstance(relevance[0], float) else pl.Int32
    df = pl.DataFrame(
        {
            "user": [1, 1, 1, 2, 2, 2],
            "item": [1, 2, 3, 1, 2, 3],
            "score": [0.9, 0.5, 0.1, 0.3, 0.2, 0.1],
            "relevance": pl.Series([*relevance, *relevance[::-1]], dtype=dtype),
        }
    )
    metrics = ["ndcg(gain=exp)@3", "ndcg@2", "ndcg(idcg=all)@1", "ndcg(discount=log_clipped)@1..3"]
    fast, slow = both(df, metrics, per_user=True, users="all")
    assert_frame_equal(fast, slow, abs_tol=1e-12)
    if relevance == [0, 5, 0]:
        assert fast["ndcg(gain=exp)@3"][0] == pytest.approx((31 / np.log2(3)) / 31, abs=1e-15)
        # log_clipped: discount 1 / max(1, log2(p)), 1 at positions 1 and 2
        by_cutoff = [fast[f"ndcg(discount=log_clipped)@{k}"][0] for k in (1, 2, 3)]
        assert by_cutoff == pytest.approx([0 / 5, (5 / 1) / 5, (5 / 1) / 5], abs=1e-15)


@pytest.mark.parametrize("ties", ["expected", "item_desc", "optimistic"])
def test_cutoff_lists_and_ranges(ties: str) -> None:
    df = frame(7)
    metrics = [
        "ndcg@1..30",
        "map@[1,2,5,40]",
        "mrr@1..12",
        "hit_rate@[1..6]",
        "precision@[2,3]",
        "recall@[3,9,27]",
        "f1@1..4",
        "dcg(gain=exp)@[1,5]",
        "ndcg(idcg=all)@[2,6]",
    ]
    assert uses_head_path(df, metrics, ties=ties)
    fast, slow = both(df, metrics, ties=ties, per_user=True)
    assert_frame_equal(fast, slow, abs_tol=1e-12)


@pytest.mark.parametrize("ties", TIES)
def test_by_groups_user_universes_and_summaries(ties: str) -> None:
    df = frame(11, by=True)
    metrics = ["ndcg@5", "mrr@3", "map@4", "recall@2"]
    for users in ("truth", "recs", "both", "all", [0, 3, 5, 999]):
        fast, slow = both(df, metrics, ties=ties, by="system", users=users)
        assert_frame_equal(fast, slow, abs_tol=1e-12)
    fast, slow = both(df, metrics, ties=ties, by="system", empty="zero", aggregate=["mean", "std"])
    assert_frame_equal(fast, slow, abs_tol=1e-12)


def test_tie_group_beyond_the_head_margin() -> None:
    # 30 tied recommended items, 4 relevant: the group at k fills the whole head, so
    # its size and relevant count come from all of the user's rows.
    df = pl.DataFrame(
        {
            "user": [1] * 31,
            "item": list(range(31)),
            "score": [0.5] * 30 + [None],
            "relevance": [1, 0, 0, 1, 0, 0, 1] + [0] * 22 + [1, 1],
        }
    )
    out = prk.evaluate(df, ["precision@2", "recall@2", "hit_rate@2", "mrr@2"], per_user=True)
    # r = 4 relevant among n = 30 tied items (the 5th relevant item is not recommended).
    row = out.row(0, named=True)
    assert row["precision@2"] == pytest.approx(2 * (4 / 30) / 2, abs=1e-15)
    assert row["recall@2"] == pytest.approx(2 * (4 / 30) / 5, abs=1e-15)
    # P(no relevant in two slots) = (26/30) * (25/29).
    assert row["hit_rate@2"] == pytest.approx(1 - (26 / 30) * (25 / 29), abs=1e-15)
    # E[RR@2] = P(first relevant at 1) / 1 + P(first at 2) / 2 = 4/30 + (26/30)(4/29)/2.
    assert row["mrr@2"] == pytest.approx(4 / 30 + (26 / 30) * (4 / 29) / 2, abs=1e-15)
    fast, slow = both(
        df, ["precision@2", "recall@2", "hit_rate@2", "mrr@2", "map@2"], per_user=True
    )
    assert_frame_equal(fast, slow, abs_tol=1e-12)


@pytest.mark.parametrize("ties", TIES)
def test_rank_column_and_integer_scores(ties: str) -> None:
    df = frame(5, decimals=1)
    ranked = df.with_columns(
        rank=pl.col("score").rank("dense", descending=True).over("user").cast(pl.Int64)
    ).drop("score")
    fast, slow = both(ranked, METRICS[:8], ties=ties, score=None, rank="rank", per_user=True)
    assert_frame_equal(fast, slow, abs_tol=1e-12)
    large = df.with_columns((pl.col("score") * 10).cast(pl.Int64) + 2**60)
    assert uses_head_path(large, METRICS, ties=ties)
    fast, slow = both(large, METRICS, ties=ties, per_user=True)
    assert_frame_equal(fast, slow, abs_tol=1e-12)


@pytest.mark.parametrize("ties", TIES)
def test_negative_zero_ties_with_zero(ties: str) -> None:
    df = pl.DataFrame(
        {"user": [1, 1, 1], "item": [1, 2, 3], "score": [0.0, -0.0, -1.0], "relevance": [0, 1, 1]}
    )
    fast, slow = both(df, ["mrr@1", "precision@1", "map@2", "ndcg@1"], ties=ties, per_user=True)
    assert_frame_equal(fast, slow, abs_tol=1e-12)


def test_engines_and_buckets_agree() -> None:
    df = frame(3, users=80)
    lazy = prk.evaluate(df.lazy(), METRICS, per_user=True)
    eager = prk.evaluate(df, METRICS, per_user=True)
    assert_frame_equal(eager, lazy.collect(engine="in-memory"), abs_tol=1e-12)
    assert_frame_equal(eager, lazy.collect(engine="streaming"), abs_tol=1e-12)
    buckets = prk.evaluate(df, METRICS, per_user=True, engine=prk.Buckets(n_buckets=3))
    assert_frame_equal(eager, buckets, abs_tol=1e-12)


def test_empty_users_and_frames() -> None:
    judged_only = pl.DataFrame(
        {
            "user": [1, 1, 2],
            "item": [1, 2, 3],
            "score": [None, None, 0.5],
            "relevance": [1, 0, None],
        },
        schema={"user": pl.Int64, "item": pl.Int64, "score": pl.Float64, "relevance": pl.Int64},
    )
    fast, slow = both(judged_only, METRICS, per_user=True, users="all")
    assert_frame_equal(fast, slow, abs_tol=1e-12)
    empty = judged_only.clear()
    fast, slow = both(empty, METRICS)
    assert_frame_equal(fast, slow)


def test_path_is_taken_only_for_cutoff_core_metrics() -> None:
    df = frame(1)
    assert uses_head_path(df, ["ndcg@10", "P@5", "success@3", "recip_rank@2"])
    assert not uses_head_path(df, ["ndcg@10", "auc"])
    assert not uses_head_path(df, ["ndcg"])  # no cutoff: the whole list
    assert not uses_head_path(df, ["r_precision"])
    # Options beyond the ones the path implements (conventions added later) fall back.
    assert not uses_head_path(df, ["map(denominator=hits)@3", "ndcg@3"])
    assert not uses_head_path(df, ["ndcg(idcg=k)@3"])
    decimal = df.with_columns(pl.col("score").cast(pl.Decimal(10, 3)))
    assert not uses_head_path(decimal, ["ndcg@10"])


def _set(df: pl.DataFrame, column: str, rows: list[int], value: Any) -> pl.DataFrame:
    """``df`` with ``column`` set to ``value`` on the rows ``rows``."""
    at = pl.int_range(pl.len()).is_in(rows)
    return df.with_columns(pl.when(at).then(pl.lit(value)).otherwise(pl.col(column)).alias(column))


def bad_frames() -> dict[str, tuple[pl.DataFrame, str]]:
    """Frames failing one value check each, and the start of the expected message."""
    base = frame(13, users=12)
    grades = base.with_columns(pl.col("relevance").cast(pl.Float64))
    # duplicate: the first 2 rows appended again, so 2 keys x 2 rows share a key.
    return {
        "duplicate": (pl.concat([base, base.head(2)]), "4 rows share a (user, item) key"),
        "null-item": (_set(base, "item", [3], None), "item column 'item' has 1 null value"),
        "null-user": (_set(base, "user", [5, 6], None), "user column 'user' has 2 null value"),
        "nan-score": (_set(base, "score", [0, 1], float("nan")), "score column 'score' has 2 NaN"),
        "inf-score": (_set(base, "score", [4], float("-inf")), "score column 'score' has 1 NaN"),
        "negative": (_set(base, "relevance", [1], -1), "relevance column 'relevance' has 1 neg"),
        "nan-grade": (
            _set(grades, "relevance", [2], float("nan")),
            "relevance column 'relevance' has 1 NaN",
        ),
        "inf-grade": (
            _set(grades, "relevance", [2], float("inf")),
            "relevance column 'relevance' has 1 inf",
        ),
    }


@pytest.mark.parametrize("case", list(bad_frames()))
@pytest.mark.parametrize("ties", ["expected", "item_desc"])
def test_validation_errors_are_identical_on_both_paths(case: str, ties: str) -> None:
    # The head path folds the checks into its own aggregation; the message (with its
    # example rows) must be the general path's, eager at the call and lazy at collect.
    df, start = bad_frames()[case]
    metrics = ["ndcg@3", "mrr@5"]
    assert uses_head_path(df, metrics, ties=ties, validate=False)
    messages = []
    for head in (True, False):
        _head.ENABLED = head
        try:
            with pytest.raises(ValueError, match=re.escape(start)) as eager:
                prk.evaluate(df, metrics, ties=ties)
            lazy = prk.evaluate(df.lazy(), metrics, ties=ties, per_user=True)  # no error yet
            with pytest.raises(ValueError, match=re.escape(start)) as deferred:
                lazy.collect()
        finally:
            _head.ENABLED = True
        messages += [str(eager.value), str(deferred.value)]
    assert len(set(messages)) == 1, messages


def test_validation_with_by_groups_and_valid_data() -> None:
    df = frame(17, by=True)  # the same (user, item) under two systems: no duplicate
    metrics = ["ndcg@5", "precision@3"]
    fast, slow = both(df, metrics, by="system", validate=True)
    assert_frame_equal(fast, slow, abs_tol=1e-12)
    plan = prk.evaluate(df.lazy(), metrics, by="system", engine="memory")
    # The duplicate count is read from the head path's own aggregation.
    assert f"{MARKER}:extra" in plan.explain()
    assert_frame_equal(plan.collect(), fast)
    with pytest.raises(ValueError, match=re.escape("by column 'system' has 1 null value")):
        prk.evaluate(_set(df, "system", [0], None), metrics, by="system")
    dup = pl.concat([df, df.filter(pl.col("system") == "b").head(1)])
    with pytest.raises(ValueError, match=re.escape("2 rows share a (system, user, item) key")):
        prk.evaluate(dup, metrics, by="system")


@pytest.mark.parametrize("ties", ["expected", "item_desc", "pessimistic"])
@pytest.mark.parametrize("grades", ["int", "float"])
def test_many_cutoffs_over_whole_lists(ties: str, grades: str) -> None:
    # Cutoff ranges past every list (up to 25 items): the head is the whole list, tie
    # groups straddle many cutoffs, and every cutoff reads the cumulative lists (also
    # past their end). Float grades take the log-step sums instead of integer counts.
    df = frame(21, decimals=1)
    if grades == "float":
        df = df.with_columns(pl.col("relevance").cast(pl.Float64) * 0.75)
    metrics = [
        "ndcg@1..30",
        "ndcg(gain=exp)@1..30",
        "dcg@[1,7,29]",
        "map@1..30",
        "mrr@1..30",
        "precision@1..30",
        "precision(denominator=retrieved)@1..30",
        "recall(rel=2)@1..30",
        "hit_rate@1..30",
        "f1@[1,3,30]",
    ]
    assert uses_head_path(df, metrics, ties=ties)
    fast, slow = both(df, metrics, ties=ties, per_user=True, users="all")
    assert_frame_equal(fast, slow, abs_tol=1e-12)


def test_tie_group_straddling_cutoffs_by_hand() -> None:
    # Scores 0.9 | 0.5 0.5 0.5 | 0.1; relevance 0 | 1 0 0 | 1. Under expected ties
    # each of positions 2-4 holds a relevant item with probability 1/3.
    df = pl.DataFrame(
        {
            "user": [1] * 5,
            "item": [1, 2, 3, 4, 5],
            "score": [0.9, 0.5, 0.5, 0.5, 0.1],
            "relevance": [0, 1, 0, 0, 1],
        }
    )
    out = prk.evaluate(df, ["precision@1..5", "dcg@1..5"], per_user=True).row(0, named=True)
    precision = [0.0, (1 / 3) / 2, (2 / 3) / 3, 1 / 4, 2 / 5]
    dcg = np.cumsum([0.0, (1 / 3) / np.log2(3), (1 / 3) / 2, (1 / 3) / np.log2(5), 1 / np.log2(6)])
    for k in range(1, 6):
        assert out[f"precision@{k}"] == pytest.approx(precision[k - 1], abs=1e-15)
        assert out[f"dcg@{k}"] == pytest.approx(dcg[k - 1], abs=1e-15)
    fast, slow = both(df, ["precision@1..5", "dcg@1..5", "map@1..5", "mrr@1..5"], per_user=True)
    assert_frame_equal(fast, slow, abs_tol=1e-12)


@pytest.mark.parametrize("split", [1, 3])
def test_expected_ranges_with_groups_straddling_cutoffs(split: int, monkeypatch: Any) -> None:
    # Scores rounded to 0 decimals: a user's recommended items share 2 scores, so every
    # tie group straddles many cutoffs; ranges and sparse lists run past the lists (up
    # to 25 items), read from the users' lists of contributions segment by segment;
    # the head rows are computed in `split` branches of users.
    monkeypatch.setattr(_head_sums, "SPLIT", split)
    df = frame(31, by=True, decimals=0)
    metrics = [
        "ndcg@1..40",
        "ndcg(idcg=all,gain=exp)@[3,9,40]",
        "map@[2,5,6,40]",
        "precision@1..40",
        "recall(rel=2)@[4,26]",
        "mrr@[1,3,30]",
        "hit_rate@2..5",
        "f1(denominator=retrieved)@[7,8]",
    ]
    assert uses_head_path(df.drop("system"), metrics)
    for users in ("all", "truth", [0, 3, 999]):
        fast, slow = both(df, metrics, by="system", users=users, per_user=True)
        assert_frame_equal(fast, slow, abs_tol=1e-12)
    fast, slow = both(df, metrics, by="system", empty="zero", aggregate=["mean", "std"])
    assert_frame_equal(fast, slow, abs_tol=1e-12)


@pytest.mark.parametrize("split", [0, 1, 2, 5])
@pytest.mark.parametrize("lazy", [False, True])
def test_expected_sums_line_up_with_their_users(split: int, lazy: bool, monkeypatch: Any) -> None:
    # The head rows' sums are placed beside the users in row-number order (not joined):
    # every user must have exactly one row of sums, in every branch count, on the
    # collected path and on a LazyFrame (the plan built without a first collect), with
    # users of one row, users whose group at K the head cut, users without a score and
    # more branches than some users. Split 0: the short head's form, one column per
    # position (no head rows, no branches); else the head rows (FIXED_WIDTH 0).
    if split:
        monkeypatch.setattr(_head_request, "FIXED_WIDTH", 0)
        monkeypatch.setattr(_head_sums, "SPLIT", split)
    cut = pl.DataFrame(  # one score for 12 items: the head (K + 3 rows) cuts the group
        {"user": [100] * 12, "item": range(12), "score": [0.5] * 12, "relevance": [1, 0, 2] * 4}
    )
    single = pl.DataFrame({"user": [101], "item": [0], "score": [0.1], "relevance": [1]})
    unscored = pl.DataFrame(
        {"user": [102, 102], "item": [0, 1], "score": [None, None], "relevance": [2, 0]}
    )
    df = pl.concat(
        [
            frame(41, users=23),
            cut.cast({"score": pl.Float64, "relevance": pl.Int32}),
            single.cast({"relevance": pl.Int32}),
            unscored.cast({"score": pl.Float64, "relevance": pl.Int32}),
        ]
    )
    metrics = ["ndcg@1..8", "map@[3,8]", "precision@8", "mrr@8", "dcg@8"]
    assert uses_head_path(df, metrics)
    data = df.lazy() if lazy else df
    fast, slow = both(data, metrics, per_user=True, users="all")
    if lazy:
        fast, slow = fast.collect(), slow.collect()
    assert fast.height == df.get_column("user").n_unique()
    assert_frame_equal(fast.sort("user"), slow.sort("user"), abs_tol=1e-12)
    # ndcg@8 of the cut user by hand: 12 tied items with gains 1,0,2 x4 (mean 1);
    # every position holds the mean gain, the ideal list is 2,2,2,2,1,1,1,1.
    row = fast.filter(pl.col("user") == 100).row(0, named=True)
    disc = 1 / np.log2(np.arange(2, 10))
    ideal = 2 * disc[:4].sum() + 1 * disc[4:].sum()
    assert row["ndcg@8"] == pytest.approx(1 * disc.sum() / ideal, abs=1e-14)


@pytest.mark.parametrize("width", [0, 32])
def test_expected_prefix_sums_by_hand(width: int, monkeypatch: Any) -> None:
    # Scores 0.9 0.9 | 0.5 0.5 0.5 (relevance 1 0 | 1 1 0) and one unscored row.
    # precision@k under expected ties: hits@1 = 1/2, @2 = 1, @3 = 1 + 2/3,
    # @4 = 1 + 4/3, @5 = 3; beyond the list (k = 9) the total over 5 recommended.
    # Width 0: the head rows give running sums by position, each cutoff reads its
    # own (k - 1) or, past the list, the last; 32: one column per position.
    monkeypatch.setattr(_head_request, "FIXED_WIDTH", width)
    df = pl.DataFrame(
        {
            "user": [1] * 6,
            "item": [1, 2, 3, 4, 5, 6],
            "score": [0.9, 0.9, 0.5, 0.5, 0.5, None],
            "relevance": [1, 0, 1, 1, 0, 1],
        }
    )
    out = prk.evaluate(df, ["precision@[1,2,3,4,5,9]", "recall@[3,9]"], per_user=True)
    row = out.row(0, named=True)
    hits = {1: 1 / 2, 2: 1.0, 3: 1 + 2 / 3, 4: 1 + 4 / 3, 5: 3.0, 9: 3.0}
    for k, h in hits.items():
        assert row[f"precision@{k}"] == pytest.approx(h / k, abs=1e-15)
    assert row["recall@3"] == pytest.approx((1 + 2 / 3) / 4, abs=1e-15)
    assert row["recall@9"] == pytest.approx(3 / 4, abs=1e-15)
    fast, slow = both(df, ["precision@[1,2,3,4,5,9]", "ndcg@[2,4,9]", "map@1..9"], per_user=True)
    assert_frame_equal(fast, slow, abs_tol=1e-12)


def _screen_and_rows(df: pl.DataFrame, **columns: Any) -> tuple[bool, bool]:
    """(any data-wide screen fires, any row fails a row check) for one frame."""
    from polars_rankeval._utils.types import make_columns
    from polars_rankeval.plan.validate import row_checks, row_screen

    cols = make_columns(**columns)
    by = [c for c in df.columns if c == "system"]
    screen = df.select(pl.any_horizontal(row_screen(df.schema, cols, by))).item()
    predicates = [c.predicate() for c in row_checks(df.schema, cols, by).values()]
    rows = df.select(pl.any_horizontal(predicates).fill_null(False).any()).item()
    return bool(screen), bool(rows)


NAN, INF = float("nan"), float("inf")
SCREEN_CASES: dict[str, tuple[dict[str, Any], pl.DataType, pl.DataType, bool]] = {
    # name: (column values, score dtype, relevance dtype, some row is bad)
    "clean": ({}, pl.Float64, pl.Int32, False),
    "null score and relevance": ({"score": None, "relevance": None}, pl.Float64, pl.Int32, False),
    "nan score": ({"score": NAN}, pl.Float64, pl.Int32, True),
    "-inf score": ({"score": -INF}, pl.Float64, pl.Int32, True),
    "float32 inf score": ({"score": INF}, pl.Float32, pl.Int32, True),
    "integer score": ({"score": 7}, pl.Int64, pl.Int32, False),
    "negative int8 relevance": ({"relevance": -1}, pl.Float64, pl.Int8, True),
    "uint8 relevance": ({"relevance": 200}, pl.Float64, pl.UInt8, False),
    "boolean relevance": ({"relevance": True}, pl.Float64, pl.Boolean, False),
    "-0.0 relevance": ({"relevance": -0.0}, pl.Float64, pl.Float64, False),
    "nan relevance": ({"relevance": NAN}, pl.Float64, pl.Float32, True),
    "inf relevance": ({"relevance": INF}, pl.Float64, pl.Float64, True),
    "negative float relevance": ({"relevance": -0.5}, pl.Float64, pl.Float64, True),
    "negative decimal relevance": ({"relevance": -1}, pl.Float64, pl.Decimal(10, 2), True),
    "decimal relevance": ({"relevance": 2}, pl.Float64, pl.Decimal(10, 2), False),
    "null user": ({"user": None}, pl.Float64, pl.Int32, True),
    "null item": ({"item": None}, pl.Float64, pl.Int32, True),
    "null system": ({"system": None}, pl.Float64, pl.Int32, True),
    "huge finite scores": ({"score": 1.7e308}, pl.Float64, pl.Int32, False),
}


@pytest.mark.parametrize("case", list(SCREEN_CASES))
def test_row_screen_agrees_with_the_row_checks(case: str) -> None:
    # The folded checks read data-wide reductions (null counts, sums, any) instead of
    # one pass of row predicates: they must fire exactly when some row fails a check
    # (a false alarm is allowed only for finite sums that overflow).
    values, score_dtype, rel_dtype, bad = SCREEN_CASES[case]
    df = pl.DataFrame(
        {
            "system": ["a", "a", "b"],
            "user": [1, 1, 2],
            "item": [1, 2, 1],
            "score": pl.Series([0.5, 0.25, 1.0]).cast(score_dtype),
            "relevance": pl.Series([1, 0, 2]).cast(rel_dtype),
        }
    )
    for column, value in values.items():
        dtype = df.schema[column]
        new = pl.Series(column, [value, *df[column][1:]], dtype=dtype, strict=False)
        df = df.with_columns(new)
    screen, rows = _screen_and_rows(df, score="score")
    assert rows is bad
    if case == "huge finite scores":  # 1.7e308 + 1.0 is finite; two would overflow
        assert screen is False
        twice = df.with_columns(score=pl.lit(1.7e308))
        assert _screen_and_rows(twice, score="score") == (True, False)  # the false alarm
    else:
        assert screen is bad
    ranked = df.with_columns(rank=pl.Series([1, 2, 0]).cast(pl.Int32)).drop("score")
    assert _screen_and_rows(ranked, score=None, rank="rank")[0] is True  # a rank below 1
    ranked = ranked.with_columns(rank=pl.Series([1.0, NAN, 1.0]))
    assert _screen_and_rows(ranked, score=None, rank="rank") == (True, True)


def test_a_false_alarm_runs_the_full_checks_and_evaluates() -> None:
    # Two huge finite scores overflow the screen's sum: the full checks run, find
    # nothing, and the evaluation goes on with the values of validate=False.
    df = frame(29).with_columns(
        score=pl.when(pl.col("score") > 0.5).then(1.7e308).otherwise(pl.col("score"))
    )
    checked = prk.evaluate(df, METRICS, per_user=True)
    assert_frame_equal(checked, prk.evaluate(df, METRICS, per_user=True, validate=False))


def test_first_stage_engine_honours_a_chosen_engine(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("POLARS_ENGINE_AFFINITY", raising=False)
    assert _head.first_stage_engine() == "in-memory"
    monkeypatch.setenv("POLARS_ENGINE_AFFINITY", "streaming")
    assert _head.first_stage_engine() == "auto"
    df = frame(31)
    fast, slow = both(df, METRICS, per_user=True)
    assert_frame_equal(fast, slow, abs_tol=1e-12)


def test_collected_first_stage_with_open_tie_groups_by_system_and_null_users() -> None:
    # A frame in memory collects the first stage and finds the users whose tie group
    # at k fills the head at once; only their rows are joined (an is_in on the user
    # column first, null users included). Two systems share user ids: the join keys
    # are (system, user); user 1 of system "a" has an open group, of "b" none.
    tied = {"score": [0.5] * 8 + [0.1], "relevance": [1, 0, 0, 1, 0, 0, 0, 1, 1]}
    parts = [
        pl.DataFrame({"system": "a", "user": 1, "item": range(9), **tied}),
        pl.DataFrame(
            {
                "system": "b",
                "user": 1,
                "item": range(9),
                "score": [0.9 - i / 10 for i in range(9)],
                "relevance": tied["relevance"],
            }
        ),
        pl.DataFrame({"system": "a", "user": None, "item": range(9), **tied}),
    ]
    df = pl.concat(parts, how="vertical_relaxed").with_columns(pl.col("user").cast(pl.Int64))
    metrics = ["precision@2", "recall@2", "mrr@2", "map@2", "ndcg@2"]
    fast, slow = both(df, metrics, by="system", per_user=True, validate=False)
    assert_frame_equal(fast, slow, abs_tol=1e-12)
    row = fast.filter((pl.col("system") == "a") & (pl.col("user") == 1)).row(0, named=True)
    assert row["precision@2"] == pytest.approx(2 * (3 / 8) / 2, abs=1e-15)  # r = 3 of n = 8
    lazy = prk.evaluate(df.lazy(), metrics, by="system", per_user=True, validate=False)
    assert_frame_equal(lazy.collect(), fast)


@pytest.mark.parametrize("ties", ["expected", "item_desc"])
def test_cutoff_lists_run_without_python_callbacks(ties: str) -> None:
    # the running sums over a cutoff list are native columns: ``pl.cum_sum_horizontal``
    # would fold with a Python function (a callback holding the GIL on every batch)
    df = pl.DataFrame(
        {
            "user": [1, 1, 1, 2, 2],
            "item": [1, 2, 3, 1, 2],
            "score": [0.3, 0.3, 0.1, 0.5, 0.2],
            "relevance": [1.0, 0.0, 1.0, 0.0, 1.0],
        }
    )
    lf = prk.evaluate(
        df.lazy(), ["ndcg@1..3", "map@[1,3]"], ties=ties, validate=False, engine="memory"
    )
    plan = lf.explain()
    assert uses_head_path(df, ["ndcg@1..3", "map@[1,3]"])
    assert "cum_fold" not in plan
    assert "python" not in plan.lower()
    # user 1 under item_desc: items 2, 1, 3 (tie 0.3 by item descending), gains 0, 1, 1;
    # ndcg@3 = (1/log2(3) + 1/log2(4)) / (1 + 1/log2(3))
    if ties == "item_desc":
        got = lf.collect()
        user1 = (1 / np.log2(3) + 1 / np.log2(4)) / (1 + 1 / np.log2(3))
        user2 = (1 / np.log2(3)) / 1.0  # items 1, 2: gains 0, 1
        assert got["ndcg@3"][0] == pytest.approx((user1 + user2) / 2, rel=1e-12)


def _plan_length(n: int, ties: str) -> int:
    """Characters of the plan of five metrics at the cutoffs 1..n (a LazyFrame)."""
    df = frame(5, users=4)
    metrics = [f"{m}@1..{n}" for m in ("ndcg", "map", "precision", "mrr", "hit_rate")]
    lf = prk.evaluate(df.lazy(), metrics, ties=ties, validate=False, engine="memory")
    plan = lf.explain()
    assert MARKER in plan
    return len(plan)


@pytest.mark.parametrize("ties", ["expected", "item_desc"])
def test_plan_grows_linearly_with_the_number_of_cutoffs(ties: str) -> None:
    # Every cutoff reads the per-user cumulative lists once: doubling the cutoffs
    # doubles the plan (a running sum chained over one plan node per cutoff made it
    # grow with their square: 2.7M characters and ~1.9 GB for ndcg@1..1000).
    assert _plan_length(800, ties) / _plan_length(400, ties) < 2.5


def test_thousands_of_cutoffs_equal_the_single_cutoffs() -> None:
    # The example's 3 queries hold 1197 to 1949 rows: 5000 cutoffs run past every
    # list (tie groups straddle cutoffs under the default ties="expected"). curve()
    # evaluates ndcg at the 5000 cutoffs (evaluate(example, ["ndcg@1..5000"]) was
    # killed at 23 GB); each equals the metric evaluated alone (one sum over the head).
    example = prk.load_example()
    curve = prk.curve(example, "ndcg", ks=range(1, 5001))
    assert curve.get_column("k").to_list() == list(range(1, 5001))
    for k in [1, 2, 3, 10, 100, 1196, 1197, 1949, 5000]:
        alone = prk.evaluate(example, [f"ndcg@{k}"]).row(0, named=True)
        row = curve.row(k - 1, named=True)
        assert row["value"] == pytest.approx(alone[f"ndcg@{k}"], abs=1e-12)
        assert row["n_users"] == alone[f"n_users(ndcg@{k})"] == 3
