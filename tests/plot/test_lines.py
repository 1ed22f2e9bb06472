"""Coinciding curves: their gaps, and each drawn so that it stays visible."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from polars_rankeval import plot
from polars_rankeval.plot._lines import LINE_WIDTH
from tests.plot._charts import long_frame, renders, twins

pytest.importorskip("altair")
pytest.importorskip("vl_convert")


def test_curve_gaps_hand_computed() -> None:
    frame = pl.DataFrame(
        {
            "s": ["a", "a", "a", "b", "b", "c", "c"],
            "x": [0.0, 0.5, 1.0, 0.0, 1.0, 0.0, 1.0],
            "y": [0.0, 0.1, 1.0, 0.0, 1.0, 0.0, 0.9],
        }
    )
    gaps = plot.curve_gaps(frame, "s", "x", "y")
    # At x = 0.5: a 0.1, b 0.5, c 0.45; at x = 1: a 1, b 1, c 0.9.
    assert gaps.rows() == [
        ("a", "b", pytest.approx(0.5 - 0.1)),
        ("a", "c", pytest.approx(0.45 - 0.1)),
        ("b", "c", pytest.approx(1.0 - 0.9)),
    ]


def test_coinciding_curves_are_named_and_drawn_so_each_shows(tmp_path: Path) -> None:
    spec = renders(plot.lorenz(twins(), k=1), tmp_path, "twins")
    assert spec["title"]["subtitle"][0] == "coinciding curves (closer than 0.02 everywhere): a = b"
    lines = spec["layer"][1:]  # after the diagonal: one layer per system, in legend order
    widths = [layer["mark"]["strokeWidth"] for layer in lines]
    assert widths == [1.5 + 2.0, 1.5, LINE_WIDTH]  # a under b, c as usual
    dashes = lines[0]["encoding"]["strokeDash"]["scale"]["range"]
    assert len({tuple(d) for d in dashes}) == 3  # each system its own pattern
    assert spec["datasets"]  # every layer's data is in the spec
    assert "a (Gini 0.750)" in json.dumps(spec)  # (2 * 4 - 4 - 1) * 2 / (4 * 2), 3 decimals
    tail = renders(plot.long_tail(twins(), k=1), tmp_path, "twins_tail")
    assert tail["title"]["subtitle"][0] == "coinciding curves (closer than 0.02 everywhere): a = b"
    apart = renders(plot.lorenz(long_frame(), k=2), tmp_path, "apart")
    assert apart["title"] == "Lorenz curve of item exposure in the top 2"  # one curve: no note
    assert apart["layer"][1]["mark"]["type"] == "line"
