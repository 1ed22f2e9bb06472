"""The distribution of a per-user metric: its data, the users left out, rendering."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from polars_rankeval import plot
from polars_rankeval.plot import per_user
from tests.plot._charts import all_null, per_user_frame, renders

pytest.importorskip("altair")
pytest.importorskip("vl_convert")


def test_distribution_data_hand_computed() -> None:
    out = plot.distribution_data(per_user_frame(), "ndcg@10")
    expected = pl.DataFrame(
        {
            "system": ["a", "a", "b", "b", "b"],
            "value": [0.5, 1.0, 0.25, 0.75, 0.75],
            "ecdf": [1 / 2, 2 / 2, 1 / 3, 3 / 3, 3 / 3],
            "n_users": [3, 3, 3, 3, 3],
            "n_undefined": [1, 1, 0, 0, 0],
        }
    )
    assert_frame_equal(out, expected)
    hist = per_user.histogram_data(out, "system", bins=2, low=0.0, high=1.0)
    assert hist["count"].to_list() == [0, 2, 1, 2]  # a: 0.5 and 1.0 in [0.5, 1]
    assert hist["share"].to_list() == [0 / 2, 2 / 2, 1 / 3, 2 / 3]
    assert hist["bin_start"].to_list() == [0.0, 0.5, 0.0, 0.5]
    box = per_user.box_data(out, "system")  # linear quantiles: q at position q * (n - 1)
    assert box.row(0) == ("a", 2, 0.5, 0.5 + 0.25 * 0.5, 0.75, 0.5 + 0.75 * 0.5, 1.0)
    assert box.row(1) == ("b", 3, 0.25, 0.25 + 0.5 * 0.5, 0.75, 0.75, 0.75)


@pytest.mark.parametrize("kind", ["histogram", "ecdf"])
def test_distribution_states_the_users_left_out(kind: str, tmp_path: Path) -> None:
    chart = plot.distribution(per_user_frame(), "ndcg@10", kind=kind)  # type: ignore[arg-type]
    spec = renders(chart, tmp_path, f"dist_{kind}")
    assert spec["title"]["subtitle"] == [
        "1 of 6 user rows left out: ndcg@10 undefined (empty='skip')"
    ]


@pytest.mark.parametrize("kind", ["histogram", "ecdf"])
def test_distribution_of_a_metric_undefined_for_every_user(kind: str) -> None:
    # Neither a ZeroDivisionError (histogram) nor an empty chart (ecdf): a clear error.
    with pytest.raises(ValueError, match=r"'ndcg@10' is undefined \(null\) for every user") as e:
        plot.distribution(all_null(), "ndcg@10", kind=kind)  # type: ignore[arg-type]
    assert "(6 rows)" in str(e.value)
    assert "without a relevant item" in str(e.value)
    no_system = all_null().filter(pl.col("system") == "a").drop("system")
    with pytest.raises(ValueError, match=r"undefined \(null\) for every user"):
        plot.distribution(no_system, "ndcg@10", by=None)


def test_distribution_names_a_system_without_a_defined_value(tmp_path: Path) -> None:
    per_user = per_user_frame().with_columns(
        pl.when(pl.col("system") == "a").then(None).otherwise(pl.col("ndcg@10")).alias("ndcg@10")
    )
    spec = renders(plot.distribution(per_user, "ndcg@10"), tmp_path, "absent")
    assert spec["title"]["subtitle"] == [
        "3 of 6 user rows left out: ndcg@10 undefined (empty='skip'); no defined value for system a"
    ]
