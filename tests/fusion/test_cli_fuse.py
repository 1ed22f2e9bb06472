"""polars-rankeval fuse: TREC runs in, one TREC run out, the same as prk.fuse."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import polars_rankeval as prk
from polars_rankeval.cli.app import main

A = pl.DataFrame({"user": ["q1", "q1", "q2"], "item": ["x", "y", "x"], "score": [3.0, 1.0, 2.0]})
B = pl.DataFrame({"user": ["q1", "q1"], "item": ["y", "z"], "score": [5.0, 4.0]})


def _write(tmp_path: Path) -> tuple[Path, Path]:
    a, b = tmp_path / "a.run", tmp_path / "b.run"
    prk.trec.write_run(A, a)
    prk.trec.write_run(B, b)
    return a, b


def test_fuse_rrf_writes_the_fused_run(tmp_path: Path) -> None:
    a, b = _write(tmp_path)
    out = tmp_path / "fused.run"
    status = main(
        [
            "fuse",
            "--run",
            str(a),
            "--run",
            str(b),
            "--method",
            "rrf",
            "--param",
            "k=1",
            "--out",
            str(out),
        ]
    )
    assert status == 0
    got = prk.trec.read_run(out).select("user", "item", "score")
    expected = prk.fuse({"a": A, "b": B}, method="rrf", params={"k": 1})
    assert isinstance(expected, pl.DataFrame)
    key = ["user", "item"]
    assert_frame_equal(got.sort(key), expected.sort(key))
    # by hand: y is 2nd in a and 1st in b
    assert got.filter(item="y")["score"].item() == pytest.approx(1 / 3 + 1 / 2)


def test_fuse_weighted_with_names(tmp_path: Path) -> None:
    a, b = _write(tmp_path)
    out = tmp_path / "fused.run"
    status = main(
        [
            "fuse",
            "--run",
            f"bm25={a}",
            "--run",
            f"dense={b}",
            "--method",
            "wsum",
            "--weight",
            "0.7",
            "--weight",
            "0.3",
            "--norm",
            "max",
            "--out",
            str(out),
        ]
    )
    assert status == 0
    got = prk.trec.read_run(out)
    # q1: a max-normalised x=1, y=1/3; b y=1, z=0.8
    assert dict(got.filter(user="q1").select("item", "score").iter_rows()) == pytest.approx(
        {"x": 0.7, "y": 0.7 / 3 + 0.3, "z": 0.3 * 0.8}
    )


def test_fuse_errors_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a, b = _write(tmp_path)
    status = main(
        [
            "fuse",
            "--run",
            str(a),
            "--run",
            str(b),
            "--method",
            "nope",
            "--out",
            str(tmp_path / "x.run"),
        ]
    )
    assert status == 2
    assert "method must be one of" in capsys.readouterr().err
