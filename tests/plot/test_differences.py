"""Per-user differences against a baseline: the data, the compare line, the colours."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import polars_rankeval as prk
from polars_rankeval import plot
from polars_rankeval.plot import differences
from tests.plot._charts import compare_frame, per_user_frame, renders

pytest.importorskip("altair")
pytest.importorskip("vl_convert")


def test_topic_differences_data_hand_computed() -> None:
    out = plot.topic_differences_data(per_user_frame(), "ndcg@10", baseline="b")
    expected = pl.DataFrame(
        {
            "system": ["a", "a"],
            "user": [1, 3],
            "value": [0.5, 1.0],
            "baseline_value": [0.25, 0.75],
            "diff": [0.5 - 0.25, 1.0 - 0.75],
            "position": [1, 2],
            "n_left_out": [1, 1],  # user 2 is undefined for a
        }
    )
    assert_frame_equal(out, expected)


def test_topic_differences_carry_the_compare_result(tmp_path: Path) -> None:
    chart = plot.topic_differences(
        per_user_frame(), "ndcg@10", baseline="b", compare=compare_frame()
    )
    spec = renders(chart, tmp_path, "topic")
    subtitle = spec["vconcat"][0]["title"]["subtitle"]
    assert subtitle == [
        "2 users better, 0 worse, 0 equal; 1 left out (undefined)",
        "mean difference +0.2500 (95% CI +0.1000 .. +0.4000); randomization test p = 0.01, "
        "holm-adjusted p = 0.02: significant at alpha 0.05",
    ]
    assert spec["vconcat"][0]["encoding"]["y"]["title"] == "ndcg@10 − b"


def test_topic_differences_with_the_real_compare() -> None:
    df = prk.load_systems().filter(pl.col("user") <= 30, pl.col("system").is_in(["bm25", "dense"]))
    per_user = prk.evaluate(df, ["ndcg@10"], by="system", per_user=True)
    result = prk.compare(df, ["ndcg@10"], baseline="bm25", n_resamples=200)
    data = plot.topic_differences_data(per_user, "ndcg@10", baseline="bm25")
    row = result.row(0, named=True)
    assert data["diff"].mean() == pytest.approx(row["diff"], abs=1e-12)
    plot.topic_differences(per_user, "ndcg@10", baseline="bm25", compare=result).to_dict()


def test_topic_differences_of_many_users_is_an_area(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(differences, "MAX_POINTS", 4)
    n = 9
    per_user = pl.DataFrame(
        {
            "system": ["a"] * n + ["b"] * n,
            "user": list(range(n)) * 2,
            "ndcg@10": [i / 10 for i in range(n)] + [0.4] * n,
        }
    )
    chart = plot.topic_differences(per_user, "ndcg@10", baseline="b")
    spec = renders(chart, tmp_path, "many")
    assert spec["vconcat"][0]["mark"]["type"] == "area"
    rows = chart.data  # one panel: Altair lifts its data to the top
    # Positions 1, 4, 7 (every third of 9) and the last, 9; differences sorted descending.
    assert rows["position"].to_list() == [1, 4, 7, 9]
    assert rows["diff"].to_list() == pytest.approx([0.8 - 0.4, 0.5 - 0.4, 0.2 - 0.4, 0.0 - 0.4])


def test_topic_differences_color_by_the_metric_direction() -> None:
    # fallout: lower is better, so a's lower values are gains over b.
    per_user = per_user_frame().rename({"ndcg@10": "fallout@3"})
    chart = plot.topic_differences(per_user, "fallout@3", baseline="b").to_dict()
    panel = chart["vconcat"][0]
    subtitle = panel["title"]["subtitle"][0]
    assert subtitle == "0 users better, 2 worse, 0 equal; 1 left out (undefined)"
    # With a compare result, its direction is the one read (here told: lower is better).
    per_user = per_user_frame()
    result = prk.compare_per_user(
        per_user, baseline="b", test="wilcoxon", higher_is_better={"ndcg@10": False}
    )
    chart = plot.topic_differences(per_user, "ndcg@10", baseline="b", compare=result).to_dict()
    assert chart["vconcat"][0]["title"]["subtitle"][0].startswith("0 users better, 2 worse")
    # No direction (a count): higher and lower.
    per_user = per_user_frame().rename({"ndcg@10": "num_ret@10"})
    chart = plot.topic_differences(per_user, "num_ret@10", baseline="b").to_dict()
    assert chart["vconcat"][0]["title"]["subtitle"][0].startswith("2 users higher, 0 lower")


def test_topic_differences_write_an_underflowed_p_value_as_a_bound(tmp_path: Path) -> None:
    # A t test this clear underflows to p = 0.0; the subtitle says p < 1e-300, not p = 0.
    n = 400
    per_user = pl.DataFrame(
        {
            "system": ["a"] * n + ["b"] * n,
            "user": list(range(n)) * 2,
            "ndcg@10": [0.9 + (i % 7) / 100 for i in range(n)]
            + [0.1 + (i % 5) / 100 for i in range(n)],
        }
    )
    result = prk.compare_per_user(per_user, baseline="b", test="t")
    assert result["p_value"].to_list() == [0.0]
    chart = plot.topic_differences(per_user, "ndcg@10", baseline="b", compare=result)
    line = renders(chart, tmp_path, "p0")["vconcat"][0]["title"]["subtitle"][1]
    assert "t test p < 1e-300, holm-adjusted p < 1e-300: significant" in line
