"""The Lorenz curve and the long tail of item exposure: data by hand, rendering."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

import polars_rankeval as prk
from polars_rankeval import plot
from tests.plot._charts import long_frame, renders

pytest.importorskip("altair")
pytest.importorskip("vl_convert")


def _trapezoid_gini(points: pl.DataFrame) -> float:
    x, y = points["item_share"].to_list(), points["exposure_share"].to_list()
    area = sum((x[i] - x[i - 1]) * (y[i] + y[i - 1]) / 2 for i in range(1, len(x)))
    return 1 - 2 * area


def test_lorenz_data_hand_computed(tmp_path: Path) -> None:
    # Catalog x, y, z, w (N = 4). Top 1: x twice. Top 2: x 2, y 1, z 1, w 0.
    one = plot.lorenz_data(long_frame(), k=1)
    assert one["item_share"].to_list() == [0.0, 3 / 4, 1.0]
    assert one["exposure_share"].to_list() == [0.0, 0.0, 1.0]
    assert one["gini"].to_list() == pytest.approx([(2 * 4 - 4 - 1) * 2 / (4 * 2)] * 3)
    two = plot.lorenz_data(long_frame(), k=2)
    assert two["item_share"].to_list() == [0.0, 1 / 4, 2 / 4, 3 / 4, 1.0]
    assert two["exposure_share"].to_list() == [0.0, 0.0, 1 / 4, 2 / 4, 1.0]
    gini = ((2 - 5) * 0 + (4 - 5) * 1 + (6 - 5) * 1 + (8 - 5) * 2) / (4 * 4)
    assert two["gini"][0] == pytest.approx(gini)
    assert _trapezoid_gini(two) == pytest.approx(gini, abs=1e-12)
    spec = renders(plot.lorenz(long_frame(), k=2), tmp_path, "lorenz")
    assert "a (Gini 0.375)" in json.dumps(spec)


def test_lorenz_gini_matches_evaluate_on_the_example() -> None:
    df = prk.load_systems().filter(pl.col("user") <= 50)
    data = plot.lorenz_data(df, k=5, max_points=None)
    gini = prk.evaluate(df, ["gini@5"], by="system")
    for system, points in data.group_by("system"):
        want = gini.filter(pl.col("system") == system[0])["gini@5"].item()
        assert points["gini"][0] == want
        assert _trapezoid_gini(points.sort("item_share", "exposure_share")) == pytest.approx(
            want, abs=1e-12
        )


def test_long_tail_data_hand_computed(tmp_path: Path) -> None:
    # Popularity (users with relevance >= 1): w 1, x 1, y 0, z 0 -> order w, x, y, z.
    out = plot.long_tail_data(long_frame(), k=1)
    catalog = out.filter(pl.col("series") == "catalog")
    assert catalog["item_share"].to_list() == [0.0, 1 / 4, 2 / 4, 3 / 4, 1.0]
    assert catalog["share"].to_list() == [0.0, 1 / 2, 2 / 2, 2 / 2, 2 / 2]
    system = out.filter(pl.col("series") == "a")  # top 1: x for both users
    assert system["share"].to_list() == [0.0, 0 / 2, 2 / 2, 2 / 2, 2 / 2]
    popularity = pl.DataFrame({"item": ["z", "y"], "popularity": [3.0, 1.0]})
    given = plot.long_tail_data(long_frame(), k=1, popularity=popularity)
    catalog = given.filter(pl.col("series") == "catalog")  # z, y, then w, x at 0
    assert catalog["share"].to_list() == [0.0, 3 / 4, 4 / 4, 4 / 4, 4 / 4]
    renders(plot.long_tail(long_frame(), k=1), tmp_path, "tail")
