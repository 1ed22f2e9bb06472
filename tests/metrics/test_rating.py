"""Rating prediction error: mae, mse, rmse and nmae, per user or over all rows.

Checked by hand (both averages), against scikit-learn's regression metrics on random
data, through the partial / finalize steps of the global plan, and for their errors.

Tests the private units Features and GlobalPlan on purpose (the partial / finalize steps).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import polars_rankeval as prk
from polars_rankeval._utils.types import make_columns
from polars_rankeval.metrics.features import Features
from polars_rankeval.metrics.grammar import parse_metric
from polars_rankeval.metrics.registry import registered
from polars_rankeval.metrics.spec import GlobalPlan

sklearn_metrics = pytest.importorskip("sklearn.metrics")

# User 1: predictions 3.5, 2, 5 for ratings 4, 3, 5 (errors 0.5, 1, 0); D is rated but not
# predicted, E predicted but not rated. User 2: predictions 1, 2 for ratings 3, 2 (errors
# 2, 0). User 3 has a rating and no prediction: no rated row. Ratings range over 2..5.
DF = pl.DataFrame(
    {
        "user": [1, 1, 1, 1, 1, 2, 2, 3],
        "item": list("ABCDE") + list("AB") + ["A"],
        "score": [3.5, 2.0, 5.0, None, 4.0, 1.0, 2.0, None],
        "relevance": [4, 3, 5, 2, None, 3, 2, 4],
    }
)
MSE_1, MSE_2 = (0.5**2 + 1**2 + 0**2) / 3, (2**2 + 0**2) / 2

CASES = [
    # metric, per user (users 1, 2, 3), summary
    ("mae", [(0.5 + 1 + 0) / 3, (2 + 0) / 2, None], ((0.5 + 1 + 0) / 3 + 1) / 2),
    ("mse", [MSE_1, MSE_2, None], (MSE_1 + MSE_2) / 2),
    ("rmse", [math.sqrt(MSE_1), math.sqrt(MSE_2), None], (math.sqrt(MSE_1) + math.sqrt(MSE_2)) / 2),
    # The range from the data: relevance 2..5 over every judged row.
    ("nmae", [0.5 / 3, 1 / 3, None], (0.5 / 3 + 1 / 3) / 2),
    ("nmae(high=5,low=1)", [0.5 / 4, 1 / 4, None], (0.5 / 4 + 1 / 4) / 2),
    ("nmae(low=0)", [0.5 / 5, 1 / 5, None], (0.5 / 5 + 1 / 5) / 2),
]


@pytest.mark.parametrize(("metric", "per_user", "mean"), CASES, ids=[c[0] for c in CASES])
def test_per_user_average_by_hand(metric: str, per_user: list[Any], mean: float) -> None:
    got = prk.evaluate(DF, [metric], per_user=True)
    assert got[metric].to_list() == pytest.approx(per_user, abs=1e-15)
    summary = prk.evaluate(DF, [metric])
    assert summary.row(0) == (pytest.approx(mean, abs=1e-15), 2, 3, 1)  # 2 of 3 users rated


GLOBAL_CASES = [
    # Over the five rated rows at once: errors 0.5, 1, 0, 2, 0.
    ("mae(average=global)", (0.5 + 1 + 0 + 2 + 0) / 5),
    ("mse(average=global)", (0.25 + 1 + 0 + 4 + 0) / 5),
    ("rmse(average=global)", math.sqrt((0.25 + 1 + 0 + 4 + 0) / 5)),
    ("nmae(average=global)", (0.5 + 1 + 0 + 2 + 0) / 5 / (5 - 2)),
    ("nmae(average=global,high=5,low=1)", (0.5 + 1 + 0 + 2 + 0) / 5 / (5 - 1)),
]


@pytest.mark.parametrize(("metric", "value"), GLOBAL_CASES, ids=[c[0] for c in GLOBAL_CASES])
def test_global_average_by_hand(metric: str, value: float) -> None:
    summary = prk.evaluate(DF, [metric, "mae"])
    assert summary[metric].item() == pytest.approx(value, abs=1e-15)
    # The per-user mean weighs user 2's two ratings like user 1's three.
    assert summary["mae"].item() != pytest.approx(summary[metric].item())


def test_expressions_match_evaluate() -> None:
    inline = DF.group_by("user").agg(prk.mae(), prk.mse(), prk.rmse()).sort("user")
    assert_frame_equal(inline, prk.evaluate(DF, ["mae", "mse", "rmse"], per_user=True, users="all"))
    value = DF.filter(pl.col("user") == 1).select(prk.nmae(low=1, high=5)).item()
    assert value == pytest.approx((0.5 + 1 + 0) / 3 / 4, abs=1e-15)


def test_rating_range_argument_and_empty_derived_range() -> None:
    got = prk.evaluate(DF, ["nmae"], rating_range=(1, 5))["nmae"].item()
    assert got == pytest.approx((0.5 / 4 + 1 / 4) / 2, abs=1e-15)
    # low=6 above every rating: the derived high (5) leaves no range, undefined.
    assert prk.evaluate(DF, ["nmae(low=6)"], per_user=True)["nmae(low=6)"].null_count() == 3


# --------------------------------------------------------------------------- scikit-learn
def ratings(seed: int, n_users: int = 30) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for user in range(n_users):
        for item in range(int(rng.integers(0, 15))):
            score = None if rng.random() < 0.2 else float(np.round(rng.uniform(0.5, 5.5), 1))
            rel = None if rng.random() < 0.2 else int(rng.integers(1, 6))
            rows.append((user % 3, user, item, score, rel))
    return pl.DataFrame(
        rows,
        schema={
            "system": pl.Int64,
            "user": pl.Int64,
            "item": pl.Int64,
            "score": pl.Float64,
            "relevance": pl.Int64,
        },
        orient="row",
    )


@pytest.mark.parametrize("seed", range(3))
def test_agreement_with_scikit_learn(seed: int) -> None:
    df = ratings(seed)
    m = sklearn_metrics
    rated = df.filter(pl.col("score").is_not_null() & pl.col("relevance").is_not_null())
    per_user = prk.evaluate(df, ["mae", "mse", "rmse"], by="system", per_user=True, users="all")
    for system, user, mae, mse, rmse in per_user.iter_rows():
        rows = rated.filter((pl.col("user") == user) & (pl.col("system") == system))
        if rows.height == 0:
            assert (mae, mse, rmse) == (None, None, None)
            continue
        y, p = rows["relevance"], rows["score"]
        assert mae == pytest.approx(m.mean_absolute_error(y, p), abs=1e-12)
        assert mse == pytest.approx(m.mean_squared_error(y, p), abs=1e-12)
        assert rmse == pytest.approx(m.root_mean_squared_error(y, p), abs=1e-12)
    names = ["mae(average=global)", "mse(average=global)", "rmse(average=global)", "nmae"]
    summary = prk.evaluate(df, [*names, "nmae(average=global)"], by="system", users="all")
    for row in summary.iter_rows(named=True):
        rows = rated.filter(pl.col("system") == row["system"])
        y, p = rows["relevance"], rows["score"]
        assert row[names[0]] == pytest.approx(m.mean_absolute_error(y, p), abs=1e-12)
        assert row[names[1]] == pytest.approx(m.mean_squared_error(y, p), abs=1e-12)
        assert row[names[2]] == pytest.approx(m.root_mean_squared_error(y, p), abs=1e-12)
        assert row["nmae(average=global)"] == pytest.approx(
            m.mean_absolute_error(y, p) / (5 - 1), abs=1e-12
        )


def test_global_plan_merges_partials_of_disjoint_users() -> None:
    df = ratings(5)
    f = Features(make_columns(), "expected", ["system", "user"])
    plan = parse_metric("rmse(average=global)").plan(f)
    assert isinstance(plan, GlobalPlan)
    assert plan.group == ()
    assert plan.combine == {"total": "sum", "count": "sum"}
    parts = pl.concat([plan.partial(df.lazy().filter(pl.col("user") % 2 == i)) for i in (0, 1)])
    merged = parts.group_by("system").agg(pl.col("total").sum(), pl.col("count").sum())
    split = plan.finalize(merged, ["system"]).collect()
    whole = prk.evaluate(df, ["rmse(average=global)"], by="system", users="all")
    assert split["value"].to_list() == pytest.approx(whole["rmse(average=global)"].to_list())


def test_global_average_without_rated_rows() -> None:
    unrated = DF.filter(pl.col("user") == 3)
    got = prk.evaluate(unrated, ["mae(average=global)", "mae"])
    assert got.row(0) == (None, None, 0, 1, 1)  # n_users(mae) = 0
    got = prk.evaluate(unrated, ["mae(average=global)", "mae"], empty="zero")
    assert got.row(0) == (0.0, 0.0, 1, 1, 0)


# --------------------------------------------------------------------------- errors
ERRORS = [
    (
        lambda: prk.evaluate(DF.rename({"score": "rank"}), ["mae"], score=None, rank="rank"),
        ValueError,
        "metric 'mae' compares predicted ratings with true ones and needs a score column",
    ),
    (
        lambda: prk.evaluate(DF, ["rmse(average=item)"]),
        ValueError,
        "parameter 'average' of metric 'rmse' must be one of",
    ),
    (lambda: prk.evaluate(DF, ["nmae(low=5,high=1)"]), ValueError, "needs high > low"),
    (lambda: prk.nmae(low=3, high=3), ValueError, "needs high > low"),
    (
        lambda: prk.evaluate(DF, ["mae(average=global)"], per_user=True),
        ValueError,
        "one value per by group, not per user",
    ),
    (
        lambda: prk.evaluate(DF.with_columns(relevance=pl.lit(3)), ["nmae"]),
        ValueError,
        "cannot derive the rating range",
    ),
    (
        lambda: parse_metric("nmae").expr(Features(make_columns(), "expected", None)),
        ValueError,
        "divides by the rating range",
    ),
    (lambda: prk.evaluate(DF, ["mae@5"]), ValueError, "takes no cutoff"),
]


@pytest.mark.parametrize(("call", "exc", "match"), ERRORS)
def test_errors(call: Any, exc: type[Exception], match: str) -> None:
    with pytest.raises(exc, match=match):
        call()


def test_family_is_registered() -> None:
    specs = registered()
    for name in ("mae", "mse", "rmse", "nmae"):
        assert specs[name].family == "rating"
        assert not specs[name].normalized
        assert specs[name].params["average"].choices == ("user", "global")
        assert specs[name].params["average"].default == "user"
    assert specs["nmae"].needs == ("rating_range",)


def test_bucketed_runs_agree_with_one_pass() -> None:
    # The rating range is derived once over all the data, not per bucket.
    df = ratings(2)
    metrics = ["mae", "nmae", "rmse(average=global)", "nmae(average=global)"]
    one = prk.evaluate(df, metrics, by="system", users="all")
    split = prk.evaluate(df, metrics, by="system", users="all", engine=prk.Buckets(n_buckets=4))
    assert_frame_equal(split, one, abs_tol=1e-12)


def test_nmae_with_both_bounds_needs_no_rating_range() -> None:
    # Ratings all 2.0 (no range in the data); low=0, high=4 given:
    # (|1 - 2| + |0.5 - 2|) / 2 / (4 - 0) = 1.25 / 4.
    df = pl.DataFrame(
        {"user": ["u", "u"], "item": ["a", "b"], "score": [1.0, 0.5], "relevance": [2.0, 2.0]}
    )
    assert prk.evaluate(df, ["nmae(low=0,high=4)"])["nmae(high=4,low=0)"][0] == 1.25 / 4
    with pytest.raises(ValueError, match="cannot derive the rating range"):
        prk.evaluate(df, ["nmae(low=0)"])
