"""The options of ``evaluate`` and ``join``, each checked against hand-computed values."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest
from polars.testing import assert_frame_equal

import polars_rankeval as prk

LOG2_3 = math.log2(3)

# user 1: a hit at rank 1, a miss at rank 2, a relevant item that was not recommended
# user 2: one relevant item and no recommendation at all
# user 3: a recommendation without any judgement (null relevance): not in the truth
# user 4: a judged, non-relevant recommendation: in the truth, but nothing relevant
DATA = pl.DataFrame(
    {
        "user": [1, 1, 1, 2, 3, 4],
        "item": [1, 2, 3, 1, 1, 1],
        "score": [0.9, 0.5, None, None, 0.4, 0.3],
        "relevance": [1, 0, 1, 1, None, 0],
    }
)
METRICS = ["recall@2", "ndcg@2", "precision@2", "mrr"]
USER1 = {
    "recall@2": 1 / 2,
    "ndcg@2": 1 / (1 + 1 / LOG2_3),  # dcg = 1/log2(2); ideal: two relevant at ranks 1, 2
    "precision@2": 1 / 2,
    "mrr": 1 / 1,
}
ZERO = dict.fromkeys(METRICS, 0.0)
NULL = dict.fromkeys(METRICS)


def per_user(data: pl.DataFrame, **kwargs: object) -> dict[object, dict[str, float | None]]:
    """``evaluate(per_user=True)`` as {user: {metric: value}}."""
    out = prk.evaluate(data, METRICS, per_user=True, **kwargs)  # type: ignore[arg-type]
    return {row.pop("user"): row for row in out.rows(named=True)}


def approx_rows(rows: dict[object, dict[str, float | None]]) -> object:
    return {
        user: {m: (None if v is None else pytest.approx(v)) for m, v in vals.items()}
        for user, vals in rows.items()
    }


# --------------------------------------------------------------------------- users=
def test_users_truth_is_the_default() -> None:
    # Users with at least one non-null relevance: 1, 2 and 4 (user 3 has none).
    assert per_user(DATA) == approx_rows({1: USER1, 2: ZERO, 4: NULL})
    summary = prk.evaluate(DATA, METRICS).row(0, named=True)
    assert summary["recall@2"] == pytest.approx((1 / 2 + 0) / 2)
    assert summary["ndcg@2"] == pytest.approx((USER1["ndcg@2"] + 0) / 2)
    assert summary["precision@2"] == pytest.approx((1 / 2 + 0) / 2)
    assert summary["mrr"] == pytest.approx((1 + 0) / 2)
    assert summary["n_users"] == 3  # users 1, 2, 4
    assert summary["n_skipped"] == 1  # user 4 has no relevant item
    assert_frame_equal(prk.evaluate(DATA, METRICS, users="truth"), prk.evaluate(DATA, METRICS))


def test_user_with_relevant_items_but_no_recommendations_scores_zero() -> None:
    # User 2 never vanishes: every metric is 0 (recommending nothing earns nothing).
    for users in ("truth", "all"):
        assert per_user(DATA, users=users)[2] == ZERO


def test_users_recs() -> None:
    # Users with at least one non-null score: 1, 3, 4; only user 1 is defined.
    assert per_user(DATA, users="recs") == approx_rows({1: USER1, 3: NULL, 4: NULL})
    summary = prk.evaluate(DATA, METRICS, users="recs").row(0, named=True)
    assert summary["recall@2"] == pytest.approx(1 / 2)
    assert summary["mrr"] == pytest.approx(1 / 1)
    assert (summary["n_users"], summary["n_skipped"]) == (3, 2)


def test_users_both() -> None:
    # Judged and recommended: users 1 and 4.
    assert per_user(DATA, users="both") == approx_rows({1: USER1, 4: NULL})
    summary = prk.evaluate(DATA, METRICS, users="both").row(0, named=True)
    assert summary["precision@2"] == pytest.approx(1 / 2)
    assert (summary["n_users"], summary["n_skipped"]) == (2, 1)


def test_users_all() -> None:
    assert per_user(DATA, users="all") == approx_rows({1: USER1, 2: ZERO, 3: NULL, 4: NULL})
    summary = prk.evaluate(DATA, METRICS, users="all").row(0, named=True)
    assert summary["recall@2"] == pytest.approx((1 / 2 + 0) / 2)
    assert (summary["n_users"], summary["n_skipped"]) == (4, 2)


def test_users_explicit_list_with_an_absent_user() -> None:
    # User 9 is not in the data: evaluated without relevant items (null), still counted.
    assert per_user(DATA, users=[1, 2, 9]) == approx_rows({1: USER1, 2: ZERO, 9: NULL})
    summary = prk.evaluate(DATA, METRICS, users=[9, 2, 1]).row(0, named=True)
    assert summary["recall@2"] == pytest.approx((1 / 2 + 0) / 2)
    assert summary["mrr"] == pytest.approx((1 + 0) / 2)
    assert (summary["n_users"], summary["n_skipped"]) == (3, 1)


@pytest.mark.parametrize(
    "users",
    [pl.Series([3, 1]), pl.DataFrame({"user": [3, 1], "other": ["x", "y"]}), (1, 3, 1)],
    ids=["series", "frame", "tuple-with-repeat"],
)
def test_users_explicit_series_frame_or_tuple(users: object) -> None:
    # User 3 is selected even though users="truth" would leave it out; repeats collapse.
    assert per_user(DATA, users=users) == approx_rows({1: USER1, 3: NULL})


def test_users_explicit_list_with_by_crosses_every_system() -> None:
    two = pl.concat([DATA.with_columns(system=pl.lit("x")), DATA.with_columns(system=pl.lit("y"))])
    out = prk.evaluate(two, ["recall@2"], by="system", users=[1, 9], per_user=True)
    assert out.rows() == [("x", 1, 1 / 2), ("x", 9, None), ("y", 1, 1 / 2), ("y", 9, None)]


# --------------------------------------------------------------------------- empty=
def test_empty_skip_means_over_defined_users() -> None:
    out = prk.evaluate(DATA, ["recall@2", "mrr"], users="all", empty="skip").row(0, named=True)
    assert out == {
        "recall@2": pytest.approx((1 / 2 + 0) / 2),  # users 1 and 2; 3 and 4 skipped
        "mrr": pytest.approx((1 + 0) / 2),
        "n_users(recall@2)": 2,
        "n_users(mrr)": 2,
        "n_users": 4,
        "n_skipped": 2,
    }


def test_empty_zero_counts_undefined_as_zero() -> None:
    out = prk.evaluate(DATA, ["recall@2", "mrr"], users="all", empty="zero").row(0, named=True)
    assert out == {
        "recall@2": pytest.approx((1 / 2 + 0 + 0 + 0) / 4),
        "mrr": pytest.approx((1 + 0 + 0 + 0) / 4),
        "n_users(recall@2)": 4,
        "n_users(mrr)": 4,
        "n_users": 4,
        "n_skipped": 0,
    }
    rows = prk.evaluate(DATA, ["mrr"], users="all", empty="zero", per_user=True).rows()
    assert rows == [(1, 1.0), (2, 0.0), (3, 0.0), (4, 0.0)]


def test_empty_error_raises_naming_the_users() -> None:
    with pytest.raises(ValueError, match=r"undefined for 2 user\(s\).*\(3,\), \(4,\)"):
        prk.evaluate(DATA, ["recall@2"], users="all", empty="error")


def test_empty_error_passes_when_every_value_is_defined() -> None:
    out = prk.evaluate(DATA, ["recall@2"], users=[1, 2], empty="error").row(0, named=True)
    assert out == {
        "recall@2": pytest.approx((1 / 2 + 0) / 2),
        "n_users(recall@2)": 2,
        "n_users": 2,
        "n_skipped": 0,
    }
    lazy = prk.evaluate(DATA.lazy(), ["recall@2"], users=[1, 2], empty="error")
    assert isinstance(lazy, pl.LazyFrame)
    assert lazy.collect()["recall@2"].item() == pytest.approx(1 / 4)


def test_metrics_that_are_never_undefined_are_not_skipped() -> None:
    out = prk.evaluate(DATA, ["num_ret@1", "num_rel"], users="all").row(0, named=True)
    assert out["num_ret@1"] == pytest.approx((1 + 0 + 1 + 1) / 4)
    assert out["num_rel"] == pytest.approx((2 + 1 + 0 + 0) / 4)
    assert out["n_skipped"] == 0


# --------------------------------------------------------------------------- by=
# System "b" comes first in the data; the summary is sorted by system.
SYSTEMS = pl.DataFrame(
    {
        "system": ["b", "b", "b", "b", "a", "a", "a", "a"],
        "user": [1, 1, 2, 2, 1, 1, 2, 2],
        "item": [1, 2, 1, 2, 1, 2, 1, 2],
        "score": [0.1, 0.9, 0.3, 0.8, 0.9, 0.1, 0.2, 0.8],
        "relevance": [1, 0, 1, 0, 1, 0, 1, 0],
    }
)


def test_by_gives_one_summary_row_per_system_sorted() -> None:
    out = prk.evaluate(SYSTEMS, ["ndcg@1", "mrr"], by="system")
    counts = ["n_users(ndcg@1)", "n_users(mrr)", "n_users", "n_skipped"]
    assert out.columns == ["system", "ndcg@1", "mrr", *counts]
    assert out.rows(named=True) == [
        {"system": "a", "ndcg@1": (1 + 0) / 2, "mrr": (1 + 1 / 2) / 2, **dict.fromkeys(counts, 2)}
        | {"n_skipped": 0},
        {
            "system": "b",
            "ndcg@1": (0 + 0) / 2,
            "mrr": (1 / 2 + 1 / 2) / 2,
            **dict.fromkeys(counts, 2),
        }
        | {"n_skipped": 0},
    ]


def test_by_equals_evaluating_each_system_separately() -> None:
    metrics = ["ndcg@1", "mrr", "recall@1", "map"]
    together = prk.evaluate(SYSTEMS, metrics, by="system")
    for system in ("a", "b"):
        alone = prk.evaluate(SYSTEMS.filter(pl.col("system") == system).drop("system"), metrics)
        assert_frame_equal(together.filter(pl.col("system") == system).drop("system"), alone)
    together_pu = prk.evaluate(SYSTEMS, metrics, by="system", per_user=True)
    for system in ("a", "b"):
        alone_pu = prk.evaluate(
            SYSTEMS.filter(pl.col("system") == system).drop("system"), metrics, per_user=True
        )
        assert_frame_equal(together_pu.filter(pl.col("system") == system).drop("system"), alone_pu)


def test_by_per_user_has_the_by_column() -> None:
    out = prk.evaluate(SYSTEMS, ["mrr"], by="system", per_user=True)
    assert out.columns == ["system", "user", "mrr"]
    assert out.rows() == [("a", 1, 1.0), ("a", 2, 1 / 2), ("b", 1, 1 / 2), ("b", 2, 1 / 2)]


def test_by_accepts_a_list_of_columns() -> None:
    data = SYSTEMS.with_columns(split=pl.lit("test"))
    out = prk.evaluate(data, ["mrr"], by=["system", "split"])
    assert out.select("system", "split", "mrr").rows() == [
        ("a", "test", (1 + 1 / 2) / 2),
        ("b", "test", (1 / 2 + 1 / 2) / 2),
    ]


# --------------------------------------------------------------------------- input types
def test_lazyframe_in_lazyframe_out() -> None:
    lazy = prk.evaluate(DATA.lazy(), METRICS)
    assert isinstance(lazy, pl.LazyFrame)
    assert_frame_equal(lazy.collect(), prk.evaluate(DATA, METRICS))
    lazy_pu = prk.evaluate(DATA.lazy(), METRICS, per_user=True, users="all")
    assert isinstance(lazy_pu, pl.LazyFrame)
    assert_frame_equal(lazy_pu.collect(), prk.evaluate(DATA, METRICS, per_user=True, users="all"))


@pytest.mark.parametrize(
    "convert",
    [lambda df: df.to_arrow(), lambda df: df.to_pandas()],
    ids=["pyarrow", "pandas"],
)
def test_pyarrow_and_pandas_in_dataframe_out(convert: object) -> None:
    data = convert(DATA)  # type: ignore[operator]
    assert isinstance(data, pa.Table | pd.DataFrame)
    out = prk.evaluate(data, METRICS)
    assert isinstance(out, pl.DataFrame)
    assert_frame_equal(out, prk.evaluate(DATA, METRICS))


def test_streaming_engine_gives_the_same_result() -> None:
    lf = SYSTEMS.lazy()
    for kwargs in ({}, {"per_user": True}, {"users": [1, 9]}, {"empty": "zero"}):
        plan = prk.evaluate(lf, ["ndcg@1", "mrr", "map", "recall@2"], by="system", **kwargs)
        assert_frame_equal(plan.collect(engine="streaming"), plan.collect())
    plan = prk.evaluate(DATA.lazy(), METRICS, users="all", per_user=True)
    assert_frame_equal(plan.collect(engine="streaming"), plan.collect())


# --------------------------------------------------------------------------- columns
RANKED = pl.DataFrame(
    {
        "user": [1, 1, 1, 2, 2],
        "item": [1, 2, 3, 1, 2],
        "rank": [1, 2, None, 2, 1],
        "relevance": [0, 1, 1, 1, 0],
    }
)


def test_rank_instead_of_score() -> None:
    out = prk.evaluate(RANKED, ["ndcg@2", "recall@2", "mrr"], rank="rank", per_user=True)
    assert out.rows(named=True) == [
        {
            "user": 1,
            "ndcg@2": pytest.approx((1 / LOG2_3) / (1 + 1 / LOG2_3)),
            "recall@2": pytest.approx(1 / 2),  # item 3 (null rank) was not recommended
            "mrr": pytest.approx(1 / 2),
        },
        {
            "user": 2,
            "ndcg@2": pytest.approx((1 / LOG2_3) / 1),
            "recall@2": pytest.approx(1 / 1),
            "mrr": pytest.approx(1 / 2),
        },
    ]


def test_rank_equals_the_equivalent_scores() -> None:
    metrics = ["ndcg@2", "recall@1", "mrr", "map", "precision@1", "auc"]
    scored = RANKED.with_columns(score=-pl.col("rank").cast(pl.Float64)).drop("rank")
    for per_user_ in (False, True):
        assert_frame_equal(
            prk.evaluate(RANKED, metrics, rank="rank", per_user=per_user_),
            prk.evaluate(scored, metrics, per_user=per_user_),
        )


def test_custom_column_names() -> None:
    renamed = DATA.rename({"user": "uid", "item": "iid", "score": "s", "relevance": "r"})
    out = prk.evaluate(
        renamed, METRICS, user="uid", item="iid", score="s", relevance="r", per_user=True
    )
    assert out.columns == ["uid", *METRICS]
    expected = prk.evaluate(DATA, METRICS, per_user=True).rename({"user": "uid"})
    assert_frame_equal(out, expected)
    assert out.row(0, named=True) == {"uid": 1, **approx_rows({1: USER1})[1]}  # type: ignore[index]


def test_boolean_relevance_reads_true_as_one() -> None:
    booleans = DATA.with_columns(pl.col("relevance").cast(pl.Boolean))
    assert booleans.schema["relevance"] == pl.Boolean
    assert_frame_equal(
        prk.evaluate(booleans, METRICS, per_user=True, users="all"),
        prk.evaluate(DATA, METRICS, per_user=True, users="all"),
    )
    assert per_user(booleans) == approx_rows({1: USER1, 2: ZERO, 4: NULL})


def test_string_user_and_item_ids() -> None:
    strings = DATA.with_columns(
        pl.col("user").cast(pl.String).replace({"1": "ann", "2": "bob", "3": "cy", "4": "dee"}),
        pl.format("item-{}", pl.col("item")),
    )
    out = prk.evaluate(strings, METRICS, per_user=True)
    assert out.schema["user"] == pl.String
    assert per_user(strings) == approx_rows({"ann": USER1, "bob": ZERO, "dee": NULL})
    assert per_user(strings, users=["ann", "zed"]) == approx_rows({"ann": USER1, "zed": NULL})


def test_categorical_user_and_item_ids() -> None:
    cats = DATA.with_columns(
        pl.col("user").cast(pl.String).cast(pl.Categorical),
        pl.col("item").cast(pl.String).cast(pl.Categorical),
    )
    out = prk.evaluate(cats, METRICS, per_user=True)
    assert out.schema["user"] == pl.Categorical
    assert per_user(cats) == approx_rows({"1": USER1, "2": ZERO, "4": NULL})
    assert_frame_equal(prk.evaluate(cats, METRICS), prk.evaluate(DATA, METRICS))


# --------------------------------------------------------------------------- join
RECS = pl.DataFrame(
    {
        "user": [1, 1, 1, 2],
        "item": [10, 11, 12, 10],
        "score": [0.9, 0.8, 0.7, 0.5],
    }
)
TRUTH = pl.DataFrame({"user": [1, 1, 3], "item": [11, 13, 10], "relevance": [2, 1, 1]})


def test_join_is_a_full_outer_join() -> None:
    out = prk.join(RECS, TRUTH)
    assert isinstance(out, pl.DataFrame)
    assert out.columns == ["user", "item", "score", "relevance"]
    assert out.sort("user", "item").rows() == [
        (1, 10, 0.9, None),  # recommended, not relevant: null relevance
        (1, 11, 0.8, 2),
        (1, 12, 0.7, None),
        (1, 13, None, 1),  # relevant, not recommended: null score
        (2, 10, 0.5, None),
        (3, 10, None, 1),  # a truth-only user
    ]


def test_join_then_evaluate() -> None:
    out = prk.evaluate(prk.join(RECS, TRUTH), ["recall@2", "precision@2", "num_rel"], per_user=True)
    # User 1: relevant 11 (rank 2) and 13 (never recommended); user 3: nothing recommended.
    assert out.rows() == [(1, 1 / 2, 1 / 2, 2.0), (3, 0.0, 0.0, 1.0)]


def test_join_truth_without_relevance_marks_every_row_relevant() -> None:
    out = prk.join(RECS, TRUTH.drop("relevance"))
    assert out.schema["relevance"] == pl.Int32
    assert out.sort("user", "item")["relevance"].to_list() == [None, 1, None, 1, None, 1]


def test_join_by_replicates_the_truth_per_system() -> None:
    recs = pl.DataFrame(
        {
            "system": ["a", "a", "b"],
            "user": [1, 1, 1],
            "item": [10, 11, 12],
            "score": [0.9, 0.8, 0.7],
        }
    )
    truth = pl.DataFrame({"user": [1, 1, 2], "item": [11, 12, 13]})
    out = prk.join(recs, truth, by="system")
    assert out.columns == ["system", "user", "item", "score", "relevance"]
    assert out.sort("system", "user", "item").rows() == [
        ("a", 1, 10, 0.9, None),
        ("a", 1, 11, 0.8, 1),
        ("a", 1, 12, None, 1),
        ("a", 2, 13, None, 1),
        ("b", 1, 11, None, 1),
        ("b", 1, 12, 0.7, 1),
        ("b", 2, 13, None, 1),
    ]
    summary = prk.evaluate(out, ["recall@1", "hit_rate@1"], by="system")
    assert summary.rows() == [
        ("a", (0 + 0) / 2, (0 + 0) / 2, 2, 2, 2, 0),  # user 1 of "a": rank 1 is item 10
        ("b", (1 / 2 + 0) / 2, (1 + 0) / 2, 2, 2, 2, 0),  # user 1 of "b": item 12, 1 of 2
    ]


def test_join_with_rank_and_custom_names() -> None:
    recs = pl.DataFrame({"uid": ["u"], "iid": ["x"], "pos": [1]})
    truth = pl.DataFrame({"uid": ["u", "u"], "iid": ["x", "y"], "grade": [3, 1]})
    out = prk.join(recs, truth, user="uid", item="iid", rank="pos", relevance="grade")
    assert out.columns == ["uid", "iid", "pos", "grade"]
    assert out.sort("iid").rows() == [("u", "x", 1, 3), ("u", "y", None, 1)]


@pytest.mark.parametrize(
    ("recs_lazy", "truth_lazy", "expected"),
    [
        (False, False, pl.DataFrame),
        (True, False, pl.LazyFrame),
        (False, True, pl.LazyFrame),
        (True, True, pl.LazyFrame),
    ],
)
def test_join_output_type(recs_lazy: bool, truth_lazy: bool, expected: type) -> None:
    recs = RECS.lazy() if recs_lazy else RECS
    truth = TRUTH.lazy() if truth_lazy else TRUTH
    out = prk.join(recs, truth)
    assert isinstance(out, expected)
    collected = out.collect() if isinstance(out, pl.LazyFrame) else out
    assert_frame_equal(collected.sort("user", "item"), prk.join(RECS, TRUTH).sort("user", "item"))


@pytest.mark.parametrize(
    ("recs", "truth"),
    [
        (RECS.to_pandas(), TRUTH.to_pandas()),
        (RECS.to_arrow(), TRUTH.to_arrow()),
        (RECS.to_pandas(), TRUTH.to_arrow()),
    ],
    ids=["pandas", "pyarrow", "pandas-pyarrow"],
)
def test_join_pandas_and_pyarrow(recs: object, truth: object) -> None:
    out = prk.join(recs, truth)
    assert isinstance(out, pl.DataFrame)
    assert_frame_equal(out.sort("user", "item"), prk.join(RECS, TRUTH).sort("user", "item"))


def test_join_lazy_with_pandas_is_lazy() -> None:
    assert isinstance(prk.join(RECS.lazy(), TRUTH.to_pandas()), pl.LazyFrame)


# --------------------------------------------------------------------------- namespaces
def test_dataframe_namespace_evaluate_and_per_user() -> None:
    assert_frame_equal(DATA.rankeval.evaluate(METRICS), prk.evaluate(DATA, METRICS))
    assert_frame_equal(
        DATA.rankeval.per_user(METRICS, users="all"),
        prk.evaluate(DATA, METRICS, per_user=True, users="all"),
    )
    assert DATA.rankeval.per_user(["mrr"]).rows() == [(1, 1.0), (2, 0.0), (4, None)]


def test_lazyframe_namespace_returns_a_lazyframe() -> None:
    lazy = DATA.lazy().rankeval.evaluate(["mrr"])
    assert isinstance(lazy, pl.LazyFrame)
    assert lazy.collect().rows() == [((1 + 0) / 2, 2, 3, 1)]
    lazy_pu = DATA.lazy().rankeval.per_user(["mrr"], users="recs")
    assert isinstance(lazy_pu, pl.LazyFrame)
    assert lazy_pu.collect().rows() == [(1, 1.0), (3, None), (4, None)]


# --------------------------------------------------------------------------- names
@pytest.mark.parametrize(
    ("requested", "column"),
    [
        ("ndcg(base=2)@10", "ndcg@10"),
        ("ndcg(gain=linear, discount=log)@10", "ndcg@10"),
        ("precision(rel=2.0)@5", "precision(rel=2)@5"),
        ("ndcg(idcg=all,gain=exp) @ 3", "ndcg(gain=exp,idcg=all)@3"),
        ("P@5", "precision@5"),
        ("recip_rank", "mrr"),
        ("map(rel=1.5)", "map(rel=1.5)"),
    ],
)
def test_output_columns_are_canonical_metric_names(requested: str, column: str) -> None:
    out = prk.evaluate(DATA, [requested])
    assert out.columns == [column, f"n_users({column})", "n_users", "n_skipped"]
    assert prk.evaluate(DATA, [requested], per_user=True).columns == ["user", column]


def test_metric_objects_and_strings_mix() -> None:
    out = prk.evaluate(DATA, [prk.parse_metric("mrr"), "recall@2", prk.bind("ndcg", 2)])
    counts = ["n_users(mrr)", "n_users(recall@2)", "n_users(ndcg@2)", "n_users", "n_skipped"]
    assert out.columns == ["mrr", "recall@2", "ndcg@2", *counts]
    assert out.row(0)[:3] == pytest.approx([(1 + 0) / 2, (1 / 2 + 0) / 2, USER1["ndcg@2"] / 2])


def test_a_single_metric_string_is_accepted() -> None:
    assert prk.evaluate(DATA, "mrr").columns == ["mrr", "n_users(mrr)", "n_users", "n_skipped"]


def test_skip_row_uses_one_user_set_for_every_mean_of_a_row() -> None:
    # User 1: relevant and non-relevant items -> auc and ndcg defined.
    # User 2: only relevant candidates -> auc undefined (no negative), ndcg = 1.
    df = pl.DataFrame(
        {
            "user": [1, 1, 2, 2],
            "item": [1, 2, 1, 2],
            "score": [0.2, 0.9, 0.5, 0.4],
            "relevance": [1, 0, 1, 1],
        }
    )
    per_user = prk.evaluate(df, ["ndcg@1", "auc"], per_user=True)
    assert per_user["auc"].to_list() == [0.0, None]
    assert per_user["ndcg@1"].to_list() == [0.0, 1.0]
    summary = prk.evaluate(df, ["ndcg@1", "auc"], empty="skip_row")
    # Only user 1 is defined for both metrics: both means are over user 1 alone.
    assert summary.row(0, named=True) == {
        "ndcg@1": 0.0,
        "auc": 0.0,
        "n_users(ndcg@1)": 1,
        "n_users(auc)": 1,
        "n_users": 2,
        "n_skipped": 1,
    }
    # The default skip: ndcg@1 is defined for both users, beside auc as alone: (0 + 1) / 2.
    per_metric = prk.evaluate(df, ["ndcg@1", "auc"]).row(0, named=True)
    assert per_metric == {
        "ndcg@1": (0.0 + 1.0) / 2,
        "auc": 0.0,
        "n_users(ndcg@1)": 2,
        "n_users(auc)": 1,
        "n_users": 2,
        "n_skipped": 1,
    }
    assert prk.evaluate(df, ["ndcg@1"])["ndcg@1"].item() == (0.0 + 1.0) / 2


# ---------------------------------------------------------------- intervals of the means
def ci_frame() -> pl.DataFrame:
    """Two systems, users with and without relevant items (undefined mrr under skip)."""
    rows = []
    for system, shift in (("a", 0), ("b", 1)):
        for user in range(12):
            for item in range(4):
                score = float((user * 7 + item * 3 + shift) % 5)
                relevance = int((user + item + shift) % 3 == 0) if user % 5 else 0
                rows.append((system, user, item, score, relevance))
    return pl.DataFrame(rows, schema=["system", "user", "item", "score", "relevance"], orient="row")


def test_t_interval_and_standard_error_of_each_mean() -> None:
    from scipy import stats

    df = ci_frame()
    out = prk.evaluate(df, ["mrr", "ndcg@3"], by="system", ci="t", confidence=0.9)
    assert out.columns == [
        "system",
        "mrr",
        "se(mrr)",
        "ci_low(mrr)",
        "ci_high(mrr)",
        "ndcg@3",
        "se(ndcg@3)",
        "ci_low(ndcg@3)",
        "ci_high(ndcg@3)",
        "n_users(mrr)",
        "n_users(ndcg@3)",
        "n_users",
        "n_skipped",
    ]
    per = prk.evaluate(df, ["mrr", "ndcg@3"], by="system", per_user=True)
    for row in out.iter_rows(named=True):
        for name in ("mrr", "ndcg@3"):
            x = per.filter(pl.col("system") == row["system"])[name].drop_nulls().to_numpy()
            assert row[f"n_users({name})"] == x.size  # the users the mean is over
            se = x.std(ddof=1) / math.sqrt(x.size)
            assert row[f"se({name})"] == pytest.approx(se, rel=1e-12)
            low, high = stats.t.interval(0.9, x.size - 1, loc=x.mean(), scale=se)
            assert row[f"ci_low({name})"] == pytest.approx(low, rel=1e-12)
            assert row[f"ci_high({name})"] == pytest.approx(high, rel=1e-12)
    # The mean itself is unchanged by ci=.
    plain = prk.evaluate(df, ["mrr", "ndcg@3"], by="system")
    assert_frame_equal(out.select(plain.columns), plain)


def test_bootstrap_interval_of_each_mean_near_scipy() -> None:
    from scipy import stats

    df = ci_frame()
    out = prk.evaluate(df, "ndcg@3", by="system", ci="bootstrap", aggregate=["median"])
    assert out.columns[1:5] == ["median(ndcg@3)", "se(ndcg@3)", "ci_low(ndcg@3)", "ci_high(ndcg@3)"]
    per = prk.evaluate(df, "ndcg@3", by="system", per_user=True)
    for row in out.iter_rows(named=True):
        x = per.filter(pl.col("system") == row["system"])["ndcg@3"].drop_nulls().to_numpy()
        assert row["n_users(ndcg@3)"] == x.size  # the users the mean is over
        ref = stats.bootstrap(
            (x,), np.mean, method="percentile", n_resamples=10_000, random_state=1
        ).confidence_interval
        width = ref.high - ref.low
        assert row["ci_low(ndcg@3)"] == pytest.approx(ref.low, abs=0.1 * width)
        assert row["ci_high(ndcg@3)"] == pytest.approx(ref.high, abs=0.1 * width)
        assert row["ci_low(ndcg@3)"] <= x.mean() <= row["ci_high(ndcg@3)"]
    # Seeded: the same interval whatever the row order, in memory or bucketed.
    shuffled = df.sample(fraction=1.0, shuffle=True, seed=3)
    again = prk.evaluate(shuffled, "ndcg@3", by="system", ci="bootstrap", aggregate=["median"])
    assert_frame_equal(again, out)
    buckets = prk.evaluate(df, "ndcg@3", by="system", ci="bootstrap", aggregate=["median"],
                           engine=prk.Buckets(n_buckets=3))  # fmt: skip
    assert_frame_equal(buckets, out, check_exact=False, rel_tol=1e-12)


def test_interval_with_one_user_is_null_and_long_summary() -> None:
    one = DATA.filter(pl.col("user") == 1)
    for ci in ("t", "bootstrap"):
        row = prk.evaluate(one, "mrr", ci=ci).row(0, named=True)
        assert row["mrr"] == 1.0
        assert (row["se(mrr)"], row["ci_low(mrr)"], row["ci_high(mrr)"]) == (None, None, None)
    long = prk.evaluate(ci_frame(), "mrr", by="system", ci="t", summary="long")
    assert long.filter(pl.col("system") == "a")["aggregation"].to_list() == [
        "mean",
        "se",
        "ci_low",
        "ci_high",
    ]
    wide = prk.evaluate(ci_frame(), "mrr", by="system", ci="t")
    assert long.filter(aggregation="ci_low")["value"].to_list() == wide["ci_low(mrr)"].to_list()


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        (
            {"ci": "normal"},
            ValueError,
            r"^argument 'ci' of evaluate must be one of \['bootstrap', 't'\] or None, got 'no",
        ),
        (
            {"ci": "t", "confidence": 1.0},
            ValueError,
            r"^argument 'confidence' of evaluate must be a number in \(0, 1\), got 1\.0",
        ),
        (
            {"ci": "t", "confidence": "95%"},
            TypeError,
            r"^argument 'confidence' of evaluate must be a number in \(0, 1\)",
        ),
        ({"ci": "t", "per_user": True}, ValueError, r"^ci= gives intervals of the summary's means"),
    ],
)
def test_interval_options_are_checked(kwargs: dict, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        prk.evaluate(DATA, "mrr", **kwargs)


def test_t_interval_without_scipy_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "scipy.stats", None)
    with pytest.raises(ImportError, match=r"ci='t'.*pip install \"polars-rankeval\[compare\]\""):
        prk.evaluate(DATA, "mrr", ci="t")


@pytest.mark.parametrize("empty", ["zero", "skip_row"])
def test_interval_covers_the_users_of_the_mean(empty: str) -> None:
    df = ci_frame()
    # ndcg@2 is undefined for users without relevant items; under skip_row they leave
    # mrr's mean (and its interval) too, under zero they count as 0.
    out = prk.evaluate(df, ["mrr", "ndcg@2"], by="system", ci="t", empty=empty)
    per = prk.evaluate(df, ["mrr", "ndcg@2"], by="system", per_user=True, empty=empty)
    per = per.drop_nulls(["mrr", "ndcg@2"])
    for row in out.iter_rows(named=True):
        x = per.filter(pl.col("system") == row["system"])["mrr"].to_numpy()
        assert row["n_users(mrr)"] == x.size
        assert row["mrr"] == pytest.approx(x.mean())
        assert row["se(mrr)"] == pytest.approx(x.std(ddof=1) / math.sqrt(x.size))
        assert row["se(mrr)"] > 0


@pytest.mark.parametrize("empty", ["skip", "skip_row"])
def test_summary_aggregates_without_a_filter_per_metric(empty: str) -> None:
    # Each aggregate covers the users its metric is defined for as a null-skipping
    # aggregate of when(defined).then(value): a filter per metric is lowered by the
    # streaming engine (collect's default) to a branch of its own per aggregate, and
    # the summary of ndcg@1..2000 took seconds growing with the square of the metrics.
    from polars_rankeval.api.evaluate import summarize

    per_user = pl.LazyFrame({"a": [0.5, None, 0.25, 2.0], "b": [1.0, 0.0, None, 4.0]})
    aggregate = ["mean", "gmean", "hmean", "qmean", "median", "std"]
    summary = summarize(per_user, ["a", "b"], [], aggregate=aggregate, empty=empty)  # type: ignore[arg-type]
    assert ".filter(" not in summary.explain()
    got = summary.collect(engine="streaming").row(0, named=True)
    # skip: a over 0.5, 0.25, 2 and b over 1, 0, 4; skip_row: users 1 and 4 only.
    a, b = ([0.5, 0.25, 2.0], [1.0, 0.0, 4.0]) if empty == "skip" else ([0.5, 2.0], [1.0, 4.0])
    assert got["a"] == pytest.approx(sum(a) / len(a))
    assert got["gmean(a)"] == pytest.approx(math.prod(a) ** (1 / len(a)))
    assert got["hmean(a)"] == pytest.approx(len(a) / sum(1 / x for x in a))
    assert got["hmean(b)"] == (0.0 if empty == "skip" else pytest.approx(2 / (1 + 1 / 4)))
    assert got["qmean(b)"] == pytest.approx(math.sqrt(sum(x * x for x in b) / len(b)))
    assert got["median(a)"] == pytest.approx(sorted(a)[len(a) // 2] if len(a) % 2 else 1.25)
    mean_b = sum(b) / len(b)
    assert got["std(b)"] == pytest.approx(
        math.sqrt(sum((x - mean_b) ** 2 for x in b) / (len(b) - 1))
    )
    assert (got["n_users(a)"], got["n_users(b)"]) == (len(a), len(b))
    assert (got["n_users"], got["n_skipped"]) == (4, 2)


def _long_plan_length(n: int) -> int:
    """Characters of the unoptimized plan of ``ndcg@1..n`` in the long summary."""
    lf = prk.evaluate(
        DATA.lazy(), [f"ndcg@1..{n}", "auc"], summary="long", aggregate=["mean", "std"]
    )
    return len(lf.explain(optimized=False))


def test_long_summary_plan_grows_linearly_with_the_metrics() -> None:
    # The long summary is one select of lists, exploded: a select of the wide summary
    # per (metric, aggregation), concatenated, held a copy of the whole plan each
    # (ndcg@1..400: 68 s to explain and 2.2 GB).
    assert _long_plan_length(100) / _long_plan_length(50) < 2.5
    got = prk.evaluate(DATA, ["ndcg@1..3", "auc"], summary="long", aggregate=["mean", "std"])
    wide = prk.evaluate(DATA, ["ndcg@1..3", "auc"], aggregate=["mean", "std"])
    assert got.columns == ["metric", "aggregation", "value", "n_users", "n_skipped"]
    names = [f"ndcg@{k}" for k in (1, 2, 3)] + ["auc"]
    assert got.select("metric", "aggregation").rows() == [
        (m, a) for m in names for a in ("mean", "std")
    ]
    for metric, aggregation, value, n_users, n_skipped in got.rows():
        column = metric if aggregation == "mean" else f"{aggregation}({metric})"
        assert value == wide.get_column(column).item()
        assert n_users == wide.get_column(f"n_users({metric})").item()
        assert n_skipped == wide.get_column("n_users").item() - n_users
