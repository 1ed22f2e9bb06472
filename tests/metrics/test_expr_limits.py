"""Honest limits of the stand-alone metric expressions (issue 26).

A metric needing a statistic beyond one user's rows either takes it as an argument of
its function (the catalog size ``n_items``, the grade scale ``max_grade``, the rating
range ``low``/``high``), or has no function: ``polars_rankeval.NAME`` then raises a
``ValueError`` saying why and to use ``evaluate`` (with what to pass to it).
"""

from __future__ import annotations

import inspect
from typing import Any

import polars as pl
import pytest

import polars_rankeval as prk
from polars_rankeval.metrics._common import NoExpressionError
from polars_rankeval.metrics.registry import registered

WITHOUT_FUNCTION = sorted(name for name, spec in registered().items() if spec.public is None)
# The statistic each public function takes for a declared need (Public.required).
NEED_ARGUMENTS = {"n_items": ("n_items",), "rating_range": ("max_grade", "low", "high")}
WITH_NEEDS = sorted(
    name for name, spec in registered().items() if spec.public is not None and spec.needs
)


def test_the_lists_are_not_empty() -> None:
    assert {"novelty", "aclt", "serendipity", "coverage", "global_auc"} <= set(WITHOUT_FUNCTION)
    assert {"fallout", "mcc", "err", "nmae"} <= set(WITH_NEEDS)


@pytest.mark.parametrize("name", WITHOUT_FUNCTION)
def test_a_metric_without_a_function_says_to_use_evaluate(name: str) -> None:
    spec = registered()[name]
    with pytest.raises(ValueError, match=r"use polars_rankeval\.evaluate\(data, \[") as caught:
        getattr(prk, name)
    error = caught.value
    assert isinstance(error, NoExpressionError)
    assert isinstance(error, AttributeError)  # hasattr stays False
    assert not hasattr(prk, name)
    text = str(error)
    assert text.startswith(f"metric {name!r} has no stand-alone pl.Expr function: ")
    if spec.scope == "global":
        assert "one number per system" in text
    elif spec.scope == "item":
        assert "one number per item" in text
    else:
        assert "it " in text.split(": ", 1)[1]
    if "n_items" in spec.needs:
        assert "pass n_items=" in text


@pytest.mark.parametrize(
    ("name", "needle"),
    [
        ("novelty", "popularity"),
        ("aclt", "long-tail"),
        ("serendipity", "history="),
        ("miscalibration", "history="),
        ("coverage", "n_items="),
        ("global_auc", "per system"),
        ("item_recall", "per item"),
    ],
)
def test_the_reason_names_the_data_wide_statistic(name: str, needle: str) -> None:
    with pytest.raises(ValueError, match=needle):
        getattr(prk, name)


def test_other_missing_names_stay_plain_attribute_errors() -> None:
    with pytest.raises(AttributeError, match="has no attribute 'not_a_metric'") as caught:
        prk.not_a_metric  # type: ignore[attr-defined]  # noqa: B018
    assert not isinstance(caught.value, ValueError)
    assert not hasattr(prk, "_private_name")


@pytest.mark.parametrize("name", WITH_NEEDS)
def test_a_function_takes_the_data_wide_statistic_as_an_argument(name: str) -> None:
    spec = registered()[name]
    fn = getattr(prk, name)
    parameters = inspect.signature(fn).parameters
    wanted = [p for need in spec.needs for p in NEED_ARGUMENTS[need] if p in parameters]
    assert wanted, f"{name}: none of {spec.needs} is an argument"
    for argument in wanted:
        assert parameters[argument].default is inspect.Parameter.empty  # required
    with pytest.raises(TypeError, match=wanted[0]):
        fn()


def test_the_catalog_size_changes_the_value() -> None:
    # One user, 4 rows, top 2 = {0 relevant, 1 not}: fp = 1; the negatives are the
    # catalog less the 2 relevant items, so fallout@2 = 1 / (N - 2).
    df = pl.DataFrame(
        {"user": [1] * 4, "item": [0, 1, 2, 3], "score": [4.0, 3.0, 2.0, 1.0]}
        | {"relevance": [1, 0, 1, 0]}
    )
    values: dict[int, Any] = {n: df.select(prk.fallout(2, n_items=n)).item() for n in (10, 100)}
    assert values == {10: 1 / (10 - 2), 100: 1 / (100 - 2)}
    expected = prk.evaluate(df, ["fallout@2"], n_items=10, per_user=True).item(0, "fallout@2")
    assert expected == values[10]
