"""Charts of a metric over k and of precision over recall: their data and rendering."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import polars_rankeval as prk
from polars_rankeval import plot
from polars_rankeval.plot import metric_curves
from tests.plot._charts import renders

pytest.importorskip("altair")
pytest.importorskip("vl_convert")


def test_curves_data_and_render(tmp_path: Path) -> None:
    df = prk.load_systems().filter(pl.col("user") <= 40)
    long = prk.curve(df, ["ndcg", "recall"], ks=range(1, 6), by="system")
    wide = prk.evaluate(df, ["ndcg@1..5", "recall@1..5"], by="system")
    tidy, by = metric_curves._tidy_curves(wide)
    assert by == ["system"]
    assert_frame_equal(
        tidy.sort("system", "metric", "k"),
        long.drop("n_users").sort("system", "metric", "k"),
    )
    chart = plot.curves(long)
    spec = renders(chart, tmp_path, "curves")
    assert spec["title"] == "ndcg, recall at k = 1..5 per system"
    assert spec["spec"]["encoding"]["x"]["title"] == "k (cutoff)"
    assert spec["facet"]["field"] == "metric"
    single = df.filter(pl.col("system") == "bm25").drop("system")
    one = plot.curves(prk.curve(single, "ndcg", ks=[1, 3]))  # no system column, one panel
    assert renders(one, tmp_path, "one")["encoding"]["y"]["title"] == "ndcg"


def test_pr_curves_data_and_render(tmp_path: Path) -> None:
    df = prk.load_systems().filter(pl.col("user") <= 40)
    frame = prk.pr_curve(df, by="system")
    chart = plot.pr_curves(frame)
    assert_frame_equal(chart.data.drop("system"), frame.drop("system"))  # type: ignore[union-attr]
    spec = renders(chart, tmp_path, "pr")
    assert spec["encoding"]["color"]["field"] == "system"
    assert spec["encoding"]["y"]["title"] == "interpolated precision"
