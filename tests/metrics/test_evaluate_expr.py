"""``prk.evaluate_expr``: several metrics as one struct expression over a group's rows.

By hand on one user with a three-way tie; against ``evaluate(per_user=True)`` for every
public per-user metric at once under every tie policy (eager and lazy, by user and by
system and user, at a cutoff and without), and for a request of many head forms
(cutoff lists, thresholds, gains, discounts, denominators); properties (row order,
a perfect ranking, ``.over``); the plan (one selection for all); and the errors.
"""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest

import polars_rankeval as prk
from polars_rankeval.metrics.registry import registered
from tests.frames import tied_user
from tests.metrics.test_expressions_match_evaluate import (
    N_ITEMS,
    _by_policy,
    _call,
    _compare,
    _evaluate,
    _frame,
)

HEAD_REQUEST = [
    "ndcg@[1,3,5]",
    "ndcg(gain=exp,idcg=all)@4",
    "ndcg(discount=half_life,half_life=3)@4",
    "dcg(discount=log_clipped)@3",
    "precision(rel=2)@3",
    "precision(denominator=retrieved)@5",
    "recall(rel=2)@2",
    "recall@9",
    "map(denominator=min_k_relevant)@3",
    "map@6",
    "mrr(rel=2)@4",
    "mrr@1",
    "hit_rate@2",
    "f1@3",
    "arhr@5",
]


def _user() -> pl.DataFrame:
    # Scores: item 4 at 0.9, items 1, 2, 3 tied at 0.5, item 5 at 0.1, item 6 not
    # recommended (relevant, grade 2). Relevance: 4 -> 0, 1 -> 1, 2 -> 0, 3 -> 3, 5 -> 1.
    return tied_user()


def _values(metrics: list[str], **options: object) -> dict[str, float | None]:
    expr = prk.evaluate_expr(metrics, **options)  # type: ignore[arg-type]
    row = _user().group_by("user").agg(expr).unnest("metrics")
    return {name: row.item(0, name) for name in row.columns if name != "user"}


def test_by_hand_item_desc() -> None:
    # item_desc breaks the tie by the item, highest first: 4, 3, 2, 1, 5 (6 not
    # recommended). Relevances in that order: 0, 3, 0, 1, 1; 4 relevant rows in all.
    got = _values(
        ["precision@3", "recall@4", "mrr@10", "hit_rate@1", "map@10", "ndcg@3", "ndcg@10"],
        ties="item_desc",
    )
    assert list(got) == [
        "precision@3",
        "recall@4",
        "mrr@10",
        "hit_rate@1",
        "map@10",
        "ndcg@3",
        "ndcg@10",
    ]
    assert got["precision@3"] == pytest.approx(1 / 3, abs=1e-15)
    assert got["recall@4"] == pytest.approx(2 / 4, abs=1e-15)
    assert got["mrr@10"] == pytest.approx(1 / 2, abs=1e-15)
    assert got["hit_rate@1"] == 0.0
    # AP@10: hits at 2, 4, 5 -> (1/2 + 2/4 + 3/5) / 4 relevant.
    assert got["map@10"] == pytest.approx((1 / 2 + 2 / 4 + 3 / 5) / 4, abs=1e-15)
    # nDCG@3: 3/log2(3) over the ideal 3, 2, 1 (the unrecommended grade 2 counts).
    idcg3 = 3 / math.log2(2) + 2 / math.log2(3) + 1 / math.log2(4)
    assert got["ndcg@3"] == pytest.approx(3 / math.log2(3) / idcg3, abs=1e-15)
    dcg10 = 3 / math.log2(3) + 1 / math.log2(5) + 1 / math.log2(6)
    idcg10 = idcg3 + 1 / math.log2(5)
    assert got["ndcg@10"] == pytest.approx(dcg10 / idcg10, abs=1e-15)


def test_by_hand_expected_ties() -> None:
    # Positions: item 4 at 1; the tie {1, 2, 3} (relevance 1, 0, 3) at 2-4; item 5 at 5.
    # Each position of the tie holds relevance 4/3 on average and a relevant row with
    # probability 2/3.
    got = _values(["precision@3", "recall@2", "ndcg@3", "mrr@10", "mrr@2", "hit_rate@2"])
    assert got["precision@3"] == pytest.approx((2 / 3 + 2 / 3) / 3, abs=1e-15)
    assert got["recall@2"] == pytest.approx((2 / 3) / 4, abs=1e-15)
    dcg = 4 / 3 / math.log2(3) + 4 / 3 / math.log2(4)
    idcg = 3 / math.log2(2) + 2 / math.log2(3) + 1 / math.log2(4)
    assert got["ndcg@3"] == pytest.approx(dcg / idcg, abs=1e-15)
    # mrr: the first relevant row at position 2 with probability 2/3, else at 3 (1/3).
    assert got["mrr@10"] == pytest.approx(2 / 3 / 2 + 1 / 3 / 3, abs=1e-15)
    assert got["mrr@2"] == pytest.approx(2 / 3 / 2, abs=1e-15)
    assert got["hit_rate@2"] == pytest.approx(2 / 3, abs=1e-15)
    # A rank column instead of a score (lower is better): the same list.
    ranked = _user().with_columns(pl.Series("rank", [2, 2, 2, 1, 5, None], dtype=pl.Int64))
    expr = prk.evaluate_expr("mrr@10", rank="rank")
    mrr = ranked.group_by("user").agg(expr).unnest("metrics").item(0, "mrr@10")
    assert mrr == pytest.approx(2 / 3 / 2 + 1 / 3 / 3, abs=1e-15)


def test_no_relevant_row_is_undefined_and_no_recommendation_scores_zero() -> None:
    metrics = ["ndcg@3", "recall@3", "map@3", "mrr@3", "precision@3", "dcg@3"]
    none_relevant = _user().with_columns(pl.lit(0).alias("relevance"))
    unscored = _user().with_columns(pl.lit(None, pl.Float64).alias("score"))
    for ties in ("expected", "item_desc"):
        expr = prk.evaluate_expr(metrics, ties=ties)
        got = none_relevant.group_by("user").agg(expr).unnest("metrics")
        # dcg is defined for every user (0.0); the others need a relevant row.
        assert got.row(0)[1:] == (None, None, None, None, None, 0.0)
        expected = prk.evaluate(none_relevant, metrics, per_user=True, ties=ties)
        assert expected.select(metrics).row(0) == got.select(metrics).row(0)
        got = unscored.group_by("user").agg(expr).unnest("metrics")
        assert got.row(0)[1:] == (0.0,) * 6
        expected = prk.evaluate(unscored, metrics, per_user=True, ties=ties)
        assert expected.select(metrics).row(0) == got.select(metrics).row(0)


@pytest.mark.parametrize("ties", prk.TIE_POLICIES)
@pytest.mark.parametrize("lazy", [False, True], ids=["eager", "lazy"])
@pytest.mark.parametrize("keys", [["user"], ["system", "user"]], ids=["user", "system_user"])
@pytest.mark.parametrize("cutoff", [True, False], ids=["at_k", "no_cutoff"])
def test_every_public_metric_in_one_struct_matches_evaluate(
    ties: str, lazy: bool, keys: list[str], cutoff: bool
) -> None:
    # The metrics with a head form share one selection; the others are their own
    # expressions placed in the same struct.
    specs = _by_policy()[ties]
    names = [_call(spec, ties, cutoff)[0] for spec in specs]
    df = _frame()
    if keys == ["user"]:
        df = df.filter(pl.col("system") == "a").drop("system")
    data: pl.DataFrame | pl.LazyFrame = df.lazy() if lazy else df
    expected = _evaluate(data, names, ties, "system" if len(keys) == 2 else None)
    expr = prk.evaluate_expr(names, ties=ties, n_items=N_ITEMS)  # type: ignore[arg-type]
    grouped = data.group_by(keys).agg(expr)
    got = (grouped.collect() if isinstance(grouped, pl.LazyFrame) else grouped).unnest("metrics")
    assert got.columns == [*keys, *names]
    _compare(expected.select(*keys, *names), got, keys, names, f"ties={ties}")


@pytest.mark.parametrize("ties", prk.TIE_POLICIES)
def test_many_head_forms_in_one_selection_match_evaluate(ties: str) -> None:
    names = [m.name for text in HEAD_REQUEST for m in prk.expand_metric(text)]
    for seed in (7, 8, 9):
        df = _frame(seed)
        expected = _evaluate(df, names, ties, "system")
        expr = prk.evaluate_expr(HEAD_REQUEST, ties=ties)  # type: ignore[arg-type]
        got = df.group_by(["system", "user"]).agg(expr).unnest("metrics")
        assert got.columns == ["system", "user", *names]
        _compare(expected.select("system", "user", *names), got, ["system", "user"], names, ties)


@pytest.mark.parametrize("ties", ["expected", "item_desc"])
def test_larger_groups_with_long_ties_match_evaluate(ties: str) -> None:
    # 60 users x 40 rows on a grid of 6 scores: tie groups straddle every cutoff.
    rng = np.random.default_rng(3)
    n = 60 * 40
    df = pl.DataFrame(
        {
            "user": np.repeat(np.arange(60), 40),
            "item": np.tile(np.arange(40), 60),
            "score": rng.integers(0, 6, n) / 5,
            "relevance": rng.integers(0, 4, n) * (rng.random(n) < 0.3),
        }
    )
    names = ["ndcg@10", "recall@20", "map@10", "mrr@10", "precision@10", "ndcg@[1..5]"]
    flat = [m.name for text in names for m in prk.expand_metric(text)]
    expected = prk.evaluate(df, names, per_user=True, ties=ties)
    got = df.group_by("user").agg(prk.evaluate_expr(names, ties=ties)).unnest("metrics")
    _compare(expected, got, ["user"], flat, ties)


@pytest.mark.parametrize("ties", ["expected", "item_desc", "pessimistic"])
def test_row_order_does_not_matter_and_a_perfect_ranking_scores_one(ties: str) -> None:
    df = _frame().filter(pl.col("system") == "a").drop("system")
    expr = prk.evaluate_expr(["ndcg@4", "map@4", "mrr@4", "recall@9"], ties=ties)  # type: ignore[arg-type]
    one = df.group_by("user").agg(expr).unnest("metrics").sort("user")
    shuffled = df.sample(fraction=1.0, shuffle=True, seed=1)
    two = shuffled.group_by("user").agg(expr).unnest("metrics").sort("user")
    assert one.equals(two)
    perfect = df.with_columns(pl.col("relevance").fill_null(0).cast(pl.Float64).alias("score"))
    best = perfect.group_by("user").agg(prk.evaluate_expr(["ndcg@4", "ndcg@9"], ties=ties))  # type: ignore[arg-type]
    values = best.unnest("metrics").drop("user").to_numpy()
    assert np.all(values[~np.isnan(values)] == pytest.approx(1.0, abs=1e-12))


def test_over_and_select() -> None:
    other = _user().with_columns(pl.col("user") + 1, pl.lit(0.3).alias("score"))
    df = pl.concat([_user(), other])
    expr = prk.evaluate_expr(["ndcg@3", "mrr@3"], ties="item_desc")
    per_user = df.group_by("user").agg(expr).unnest("metrics").sort("user")
    over = df.select("user", expr.over("user")).unnest("metrics").unique().sort("user")
    assert over.rows() == per_user.rows()
    alone = _user().select(expr).unnest("metrics")
    assert alone.row(0) == per_user.row(0)[1:]


def _plan(expr: pl.Expr) -> str:
    return _user().lazy().group_by("user").agg(expr).explain()


def test_the_head_metrics_share_one_selection() -> None:
    # Under every policy: one selection of the K-th score (a sort cut at K) and one
    # sort of the selected rows, for every metric.
    five = ["ndcg@10", "recall@20", "map@10", "mrr@10", "precision@10"]
    for ties in ("item_desc", "expected"):
        plan = _plan(prk.evaluate_expr(five, ties=ties))
        assert plan.count(".sort(") == 1
        assert plan.count("sort_by(") == 1
    # The same metrics as separate functions: a selection each.
    separate = _user().lazy().group_by("user").agg(prk.ndcg(10), prk.recall(20)).explain()
    assert separate.count("sort_by(") == 2


def test_errors_name_the_problem() -> None:
    with pytest.raises(ValueError, match="at least one metric"):
        prk.evaluate_expr([])
    with pytest.raises(ValueError, match="'ndcg@10' is requested twice"):
        prk.evaluate_expr(["ndcg@10", "ndcg(base=2)@10"])
    with pytest.raises(ValueError, match=r"no stand-alone pl\.Expr"):
        prk.evaluate_expr(["ndcg@10", "coverage@10"])
    with pytest.raises(ValueError, match="needs the catalog size: pass n_items="):
        prk.evaluate_expr(["fallout@5"])
    with pytest.raises(ValueError, match="ties"):
        prk.evaluate_expr(["ndcg@10", "ndcg_rel"])  # ndcg_rel: deterministic only
    with pytest.raises(ValueError, match="unknown metric"):
        prk.evaluate_expr(["ndgc@10"])
    with pytest.raises(TypeError, match="metrics"):
        prk.evaluate_expr(10)  # type: ignore[arg-type]


def test_every_public_per_user_metric_is_accepted() -> None:
    specs = [s for s in registered().values() if s.public is not None and s.scope == "user"]
    assert len(specs) > 40
    names = [_call(spec, "expected")[0] for spec in specs if "expected" in spec.tie_policies]
    assert isinstance(prk.evaluate_expr(names, n_items=N_ITEMS), pl.Expr)


@pytest.mark.parametrize("ties", ["expected", "item_desc", "optimistic"])
@pytest.mark.parametrize(
    "dtype", [pl.Int32, pl.UInt16, pl.Float32, pl.Int64], ids=["i32", "u16", "f32", "i64"]
)
@pytest.mark.parametrize("column", ["score", "rank"])
def test_score_and_rank_dtypes_match_evaluate(ties: str, dtype: pl.DataType, column: str) -> None:
    # Scores on a coarse integer grid (ties), or their ranks (lower is better).
    df = _frame().filter(pl.col("system") == "a").drop("system")
    order = (pl.col("score") * 2).round().cast(dtype)
    if column == "rank":
        order = (10 - order.cast(pl.Int64)).cast(dtype)
    df = df.with_columns(order.alias(column))
    if column == "rank":
        df = df.drop("score")
    options = {"rank": "rank"} if column == "rank" else {}
    names = ["ndcg@3", "map@4", "mrr@4", "recall@2", "precision(denominator=retrieved)@5"]
    expected = prk.evaluate(df, names, per_user=True, ties=ties, **options)  # type: ignore[arg-type]
    expr = prk.evaluate_expr(names, ties=ties, **options)  # type: ignore[arg-type]
    got = df.group_by("user").agg(expr).unnest("metrics")
    flat = [m.name for text in names for m in prk.expand_metric(text)]
    _compare(expected.select("user", *flat), got, ["user"], flat, f"{column}:{dtype}:{ties}")
