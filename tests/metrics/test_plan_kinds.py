"""The plan's metric kinds: sub-plans per user, global and item metrics, extra columns.

Small metrics are registered for these tests only (and removed afterwards), so the
engine's plumbing is tested independently of any family.

Tests the private unit polars_rankeval.metrics.registry on purpose (its plan kinds).
"""

from __future__ import annotations

from collections.abc import Iterator

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import polars_rankeval as prk
import polars_rankeval.metrics.registry as registry
from polars_rankeval.metrics.features import Features
from polars_rankeval.metrics.registry import register
from polars_rankeval.metrics.spec import FramePlan, GlobalPlan

DATA = pl.DataFrame(
    {
        "system": ["a"] * 6 + ["b"] * 6,
        "user": [1, 1, 1, 2, 2, 3] * 2,
        "item": [10, 11, 12, 10, 13, 11] * 2,
        "score": [3.0, 2.0, 1.0, 2.0, 1.0, 5.0, 1.0, 2.0, 3.0, 1.0, 2.0, 5.0],
        "relevance": [1, 0, 1, None, 1, 0] * 2,
        "weight": [0.5, 1.0, 2.0, 1.0, 1.0, 4.0] * 2,
    }
)
ITEMS = pl.DataFrame({"item": [10, 11, 12, 13], "pop": [0.1, 0.2, 0.3, 0.4]})


@pytest.fixture(scope="module", autouse=True)
def toy_metrics() -> Iterator[None]:
    names = ["t_rows", "t_hits_share", "t_item_hits", "t_pop", "t_weight"]

    @register(
        "t_rows", family="test", summary="rows", definition="rows", takes_k=False, normalized=False
    )
    def _rows(f: Features, k: int | None) -> FramePlan:
        keys = f.keys
        return FramePlan(lambda rows: rows.group_by(keys).agg(pl.len().alias("value")))

    @register("t_hits_share", family="test", summary="s", definition="s", scope="global")
    def _share(f: Features, k: int | None) -> GlobalPlan:
        hit, ret = (f.is_rel(1.0) * f.p_in(k)).alias("h"), f.p_in(k).alias("r")
        by = f.by

        def partial(rows: pl.LazyFrame) -> pl.LazyFrame:
            aggs = [hit.sum(), ret.sum()]
            return rows.group_by(by).agg(aggs) if by else rows.select(aggs)

        def finalize(merged: pl.LazyFrame, by: list[str]) -> pl.LazyFrame:
            return merged.select(*by, (pl.col("h") / pl.col("r")).alias("value"))

        return GlobalPlan(partial, (), {"h": "sum", "r": "sum"}, finalize)

    @register(
        "t_item_hits", family="item", summary="s", definition="s", scope="item", normalized=False
    )
    def _item_hits(f: Features, k: int | None) -> GlobalPlan:
        hit = (f.is_rel(1.0) * f.p_in(k)).alias("h")
        group = [*f.by, f.cols.item]

        def partial(rows: pl.LazyFrame) -> pl.LazyFrame:
            return rows.group_by(group).agg(hit.sum())

        def finalize(merged: pl.LazyFrame, by: list[str]) -> pl.LazyFrame:
            return merged.rename({"h": "value"})

        return GlobalPlan(partial, (f.cols.item,), {"h": "sum"}, finalize)

    @register("t_pop", family="test", summary="s", definition="s", normalized=False, reads=("pop",))
    def _pop(f: Features, k: int | None) -> pl.Expr:
        return (f.column("pop") * f.p_in(k)).sum()

    @register(
        "t_weight", family="test", summary="s", definition="s", normalized=False, reads=("weight",)
    )
    def _weight(f: Features, k: int | None) -> pl.Expr:
        return (f.column("weight") * f.p_in(k)).sum()

    yield
    for name in names:
        del registry._REGISTRY[name]


@pytest.mark.parametrize("n_buckets", [None, 2, 5])
def test_frame_global_and_extra_columns(n_buckets: int | None) -> None:
    engine = "auto" if n_buckets is None else prk.Buckets(n_buckets=n_buckets)
    options = {"by": "system", "items": ITEMS, "engine": engine}
    metrics = ["t_rows", "t_hits_share@2", "t_pop@1", "t_weight@2"]
    got = prk.evaluate(DATA, metrics, **options)
    # system a: users 1 (items 10,11,12 scores 3,2,1), 2 (10,13), 3 (11: relevance 0).
    # top 2: u1 {10 rel, 11}, u2 {10 unjudged, 13 rel}, u3 {11}: 2 hits in 5 -> 0.4
    # t_pop@1 (top item's pop): u1 10 -> 0.1, u2 10 -> 0.1, u3 11 -> 0.2 -> mean 0.4/3
    # t_weight@2: u1 0.5+1.0, u2 1.0+1.0, u3 4.0 -> mean 7.5/3
    # t_rows: 3, 2, 1 rows -> mean 2
    row_a = got.filter(pl.col("system") == "a").row(0, named=True)
    assert row_a["t_rows"] == pytest.approx((3 + 2 + 1) / 3)
    assert row_a["t_hits_share@2"] == pytest.approx(2 / 5)
    assert row_a["t_pop@1"] == pytest.approx((0.1 + 0.1 + 0.2) / 3)
    assert row_a["t_weight@2"] == pytest.approx((1.5 + 2.0 + 4.0) / 3)
    # system b reverses user 1: top 2 {12 rel, 11}; u2 {13 rel, 10}: 2 hits in 5
    row_b = got.filter(pl.col("system") == "b").row(0, named=True)
    assert row_b["t_hits_share@2"] == pytest.approx(2 / 5)
    per_user = [m for m in metrics if m != "t_hits_share@2"]  # the global one has no count
    counts = [f"n_users({m})" for m in per_user]
    assert got.columns == ["system", *metrics, *counts, "n_users", "n_skipped"]


@pytest.mark.parametrize("n_buckets", [None, 3])
def test_per_item(n_buckets: int | None) -> None:
    got = prk.evaluate(
        DATA,
        "t_item_hits@1",
        by="system",
        per_item=True,
        engine=prk.Buckets(n_buckets=n_buckets) if n_buckets else "auto",
    )
    # a: top 1 per user: u1 10 (rel) u2 10 (unjudged) u3 11 -> item 10: 1 hit, 11: 0
    # (items never in a top 1 still appear: their partial sums are 0)
    a = dict(got.filter(pl.col("system") == "a").select("item", "t_item_hits@1").rows())
    assert a == {10: 1.0, 11: 0.0, 12: 0.0, 13: 0.0}
    assert got.columns == ["system", "item", "t_item_hits@1"]


def test_bucketed_equals_memory_with_users_list() -> None:
    options = {"by": "system", "items": ITEMS, "users": [1, 3, 99]}
    metrics = ["t_rows", "t_hits_share@2", "t_pop@1"]
    expected = prk.evaluate(DATA, metrics, engine="memory", **options)
    got = prk.evaluate(DATA, metrics, engine=prk.Partition(n_buckets=3), **options)
    assert_frame_equal(got, expected, check_exact=False, rel_tol=1e-13)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"metrics": "t_pop@1"}, ValueError, "column 'pop' .* not found in the data"),
        ({"metrics": "t_hits_share", "per_user": True}, ValueError, "one value per by group"),
        ({"metrics": "t_item_hits"}, ValueError, "evaluate them with per_item=True"),
        ({"metrics": ["t_item_hits", "map"], "per_item": True}, ValueError, "map are not"),
        ({"metrics": "map", "per_user": True, "per_item": True}, ValueError, "cannot both"),
        (
            {"metrics": "t_pop", "items": ITEMS.with_columns(pl.col("item").cast(pl.Utf8))},
            TypeError,
            "has dtype String in items=",
        ),
        ({"metrics": "t_pop", "items": pl.concat([ITEMS, ITEMS])}, ValueError, "more than one"),
        ({"metrics": "t_pop", "items": ITEMS.drop("item")}, ValueError, "needs an 'item'"),
        ({"metrics": "t_pop", "items": {"item": [1]}}, TypeError, "must be a polars"),
    ],
)
def test_errors(kwargs: dict[str, object], error: type[Exception], match: str) -> None:
    metrics = kwargs.pop("metrics")
    with pytest.raises(error, match=match):
        prk.evaluate(DATA, metrics, **kwargs)  # type: ignore[arg-type]


def test_frame_plan_metric_is_not_an_expression() -> None:
    with pytest.raises(ValueError, match="plan of its own"):
        prk.parse_metric("t_rows").expr(Features(prk.Columns(), "expected", None))
