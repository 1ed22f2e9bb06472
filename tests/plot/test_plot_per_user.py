"""prk.plot.largest_differences and prk.plot.judgement_gaps: the charts of issue 29."""

from __future__ import annotations

import polars as pl
import pytest

import polars_rankeval as prk
from polars_rankeval.api.datasets import load_systems

pytest.importorskip("altair")


def _values(spec: dict, key: str) -> list[dict]:
    return spec["datasets"][key]


def test_largest_differences_chart_hand_case() -> None:
    per_user = pl.DataFrame(
        {
            "system": ["a"] * 3 + ["b"] * 3,
            "user": [1, 2, 3] * 2,
            "ndcg@10": [0.0, 0.5, 0.5, 0.5, 0.75, 0.25],
        }
    )
    top = prk.largest_differences_per_user(per_user, baseline="a")
    chart = prk.plot.largest_differences(top)
    spec = chart.to_dict()  # validates against the Vega-Lite schema
    panel = spec["vconcat"][0]
    assert panel["title"] == "ndcg@10: b vs a"
    # the users sorted by difference: +0.5 (user 1), +0.25 (user 2), -0.25 (user 3)
    assert panel["encoding"]["y"]["sort"] == ["1", "2", "3"]
    data = next(iter(spec["datasets"].values()))
    assert [row["difference"] for row in data] == [0.5 - 0.0, 0.75 - 0.5, 0.25 - 0.5]
    assert panel["encoding"]["color"]["scale"]["domain"] == ["better", "worse"]


def test_largest_differences_chart_panels_and_errors() -> None:
    top = prk.largest_differences(load_systems(), ["ndcg@10", "recall@20"], baseline="bm25", n=3)
    chart = prk.plot.largest_differences(top, title="t")
    assert len(chart.to_dict()["vconcat"]) == 2 * 3
    with pytest.raises(ValueError, match="lacks column\\(s\\) direction"):
        prk.plot.largest_differences(top.drop("direction"))


def test_judgement_gaps_chart() -> None:
    gaps = prk.judgement_gaps(load_systems(), ["ndcg@10", "precision@5"])
    spec = prk.plot.judgement_gaps(gaps).to_dict()
    assert [p["title"] for p in spec["vconcat"]] == ["ndcg@10", "precision@5"]
    same = prk.plot.judgement_gaps(gaps.summary).to_dict()
    assert same["vconcat"][0]["layer"][0]["encoding"] == spec["vconcat"][0]["layer"][0]["encoding"]
    with pytest.raises(ValueError, match="lacks column\\(s\\) condensed"):
        prk.plot.judgement_gaps(gaps.summary.drop("condensed"))


def test_power_curve_chart() -> None:
    from polars_rankeval.analysis.t_test_power import t_power

    sample = prk.sample_size(delta=[0.05, 0.1], sd=0.2)
    data = prk.plot.power_curve_data(sample)
    assert data["series"].unique(maintain_order=True).to_list() == ["delta 0.05", "delta 0.1"]
    # 1.5 x the largest n_users (128)
    assert data["n_users"].max() == 192
    row = data.filter((pl.col("series") == "delta 0.1") & (pl.col("n_users") == 34))
    assert row["power"][0] == pytest.approx(t_power(34, 0.5)[0])
    spec = prk.plot.power_curve(sample).to_dict()
    assert len(spec["layer"]) == 3
    # pairs from data: one line per pair; an sd of 0 has no curve
    tied = pl.DataFrame(
        {"system": ["a", "a", "b", "b"], "user": [1, 2, 1, 2], "m": [0.1, 0.3, 0.2, 0.4]}
    )
    with pytest.raises(ValueError, match="no rows"):
        prk.plot.power_curve(prk.sample_size_per_user(tied, delta=0.1))
    with pytest.raises(ValueError, match=r"prk\.sample_size"):
        prk.plot.power_curve(sample.drop("sd"))
