"""The ``power`` subcommand: the same frames as prk.sample_size, topic_set_size, achieved_power."""

from __future__ import annotations

import io
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import polars_rankeval as prk
from polars_rankeval.analysis import power as analysis
from polars_rankeval.analysis import topic_set_size as design
from polars_rankeval.api.datasets import load_systems
from polars_rankeval.cli import power as cli
from polars_rankeval.cli.app import main


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("runs") / "runs.parquet"
    load_systems().write_parquet(path)
    return path


def read(text: str) -> pl.DataFrame:
    return pl.read_csv(io.StringIO(text))


def test_choices_are_the_analysis_ones() -> None:
    assert cli.ALTERNATIVES == analysis.ALTERNATIVES
    assert cli.DESIGNS == design.DESIGNS
    assert cli.VARIANCE_ESTIMATES == design.VARIANCE_ESTIMATES


def test_given_sd(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["power", "--delta", "0.05", "--delta", "0.1", "--sd", "0.2", "--format", "csv"]
    assert main(argv) == 0
    out = read(capsys.readouterr().out)
    assert out["n_users"].to_list() == [128, 34]
    expected = prk.sample_size(delta=[0.05, 0.1], sd=0.2)
    assert_frame_equal(out, expected, check_dtypes=False)


def test_from_data(capsys: pytest.CaptureFixture[str], runs: Path) -> None:
    argv = ["power", "--data", str(runs), "-m", "ndcg@10", "--delta", "0.02"]
    assert main([*argv, "--baseline", "bm25", "--alternative", "one-sided", "--format", "csv"]) == 0
    out = read(capsys.readouterr().out)
    expected = prk.sample_size(
        load_systems(), ["ndcg@10"], delta=0.02, baseline="bm25", alternative="one-sided"
    )
    assert_frame_equal(out, expected, check_dtypes=False)


def test_design(capsys: pytest.CaptureFixture[str], runs: Path) -> None:
    argv = ["power", "--design", "anova", "--delta", "0.1", "--variance", "0.05"]
    assert main([*argv, "--n-systems", "10", "--format", "csv"]) == 0
    out = read(capsys.readouterr().out)
    assert out["n_users"].to_list() == [158]
    argv = ["power", "--design", "ci", "--half-width", "0.02", "--data", str(runs)]
    assert main([*argv, "--variance-estimate", "one_way", "--format", "csv"]) == 0
    out = read(capsys.readouterr().out)
    expected = prk.topic_set_size(
        load_systems(), ["ndcg@10"], design="ci", half_width=0.02, variance_estimate="one_way"
    )
    assert_frame_equal(out, expected, check_dtypes=False)


def test_achieved(capsys: pytest.CaptureFixture[str], runs: Path) -> None:
    argv = ["power", "--achieved", "--data", str(runs), "--baseline", "bm25", "--format", "csv"]
    assert main(argv) == 0
    out = read(capsys.readouterr().out)
    result = prk.compare(load_systems(), ["ndcg@10"], baseline="bm25", test="t", ci="none")
    assert_frame_equal(out, prk.achieved_power(result), check_dtypes=False)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--sd", "0.2"], "power needs --delta"),
        (["--delta", "0.1"], "power needs --sd or data"),
        (["--delta", "0.1", "--sd", "0.2", "--data", "x.parquet"], "not both"),
        (["--delta", "0.1", "--variance", "0.2"], "--variance is for --design"),
        (["--design", "anova", "--delta", "0.1"], "--design needs --variance or data"),
        (["--design", "anova", "--delta", "0.1", "--sd", "1"], "takes --variance"),
        (["--achieved", "--delta", "0.1"], "--achieved reads the difference"),
        (["--achieved"], "--achieved needs data"),
        (["--delta", "-1", "--sd", "0.2"], "delta must be a finite number > 0, got -1.0"),
        (["--design", "anova", "--delta", "0.1", "--variance", "1"], "needs n_systems="),
    ],
)
def test_errors(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["power", *argv]) == 2
    assert message in capsys.readouterr().err
