"""The ``differences`` and ``judgements`` subcommands: the same frames as the Python calls."""

from __future__ import annotations

import io
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import polars_rankeval as prk
from polars_rankeval.api.datasets import load_systems
from polars_rankeval.cli.app import main


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("runs") / "runs.parquet"
    load_systems().write_parquet(path)
    return path


def read(text: str) -> pl.DataFrame:
    return pl.read_csv(io.StringIO(text))


def test_differences_csv_equals_python(capsys: pytest.CaptureFixture[str], runs: Path) -> None:
    argv = ["differences", "--data", str(runs), "-m", "ndcg@10", "--baseline", "bm25"]
    assert main([*argv, "-n", "3", "--format", "csv"]) == 0
    out = read(capsys.readouterr().out)
    expected = prk.largest_differences(load_systems(), ["ndcg@10"], baseline="bm25", n=3)
    assert_frame_equal(out, expected, check_dtypes=False)


def test_judgements_parts(capsys: pytest.CaptureFixture[str], runs: Path) -> None:
    argv = ["judgements", "--data", str(runs), "-m", "ndcg@10", "-n", "2"]
    summary, users = prk.judgement_gaps(load_systems(), ["ndcg@10"], n=2)
    assert main([*argv, "--part", "summary", "--format", "csv"]) == 0
    assert_frame_equal(read(capsys.readouterr().out), summary, check_dtypes=False)
    assert main([*argv, "--part", "users", "--format", "csv"]) == 0
    assert_frame_equal(read(capsys.readouterr().out), users, check_dtypes=False)
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert "Per system and metric:" in text
    assert "The users where the two differ most (up to 2 each):" in text


def test_judgements_csv_needs_one_part(capsys: pytest.CaptureFixture[str], runs: Path) -> None:
    assert main(["judgements", "--data", str(runs), "--format", "csv"]) == 2
    assert "--format csv writes one table: pass --part summary or --part users" in (
        capsys.readouterr().err
    )
