"""The ``meta`` subcommand: the same frames as the Python calls."""

from __future__ import annotations

import io
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import polars_rankeval as prk
from polars_rankeval.api.datasets import load_systems
from polars_rankeval.cli.app import main

METRICS = ["ndcg@10", "mrr@10"]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("runs") / "runs.parquet"
    load_systems().filter(pl.col("user") <= 60).write_parquet(path)
    return path


def read(text: str) -> pl.DataFrame:
    return pl.read_csv(io.StringIO(text))


def argv(runs: Path, *more: str) -> list[str]:
    return ["meta", "--data", str(runs), "-m", METRICS[0], "-m", METRICS[1], *more]


def test_meta_parts_equal_python(capsys: pytest.CaptureFixture[str], runs: Path) -> None:
    data = pl.read_parquet(runs)
    power = prk.discriminative_power(data, METRICS, test="tukey", n_resamples=300, seed=2)
    swaps = prk.swap_rate(data, METRICS, subset_sizes=[5, 20], n_trials=30, bins=5, seed=2)
    agreement = prk.metric_agreement(data, METRICS)
    options = ["--test", "tukey", "--resamples", "300", "--seed", "2", "--format", "csv"]
    swap_options = ["--subset-size", "5", "--subset-size", "20", "--trials", "30", "--bins", "5"]
    for part, expected in (
        ("power", power.summary),
        ("asl", power.asl),
        ("swaps", swaps.summary),
        ("swap-bins", swaps.bins),
        ("agreement", agreement),
    ):
        assert main(argv(runs, "--part", part, *options, *swap_options)) == 0
        out = read(capsys.readouterr().out)
        assert_frame_equal(out, expected, check_dtypes=False, check_exact=False, rel_tol=1e-12)


def test_meta_all_tables(capsys: pytest.CaptureFixture[str], runs: Path) -> None:
    assert main(argv(runs, "--resamples", "100", "--trials", "10")) == 0
    text = capsys.readouterr().out
    assert "Discriminative power (share of system pairs with ASL <= alpha):" in text
    assert "Swap rates between disjoint user subsets:" in text
    assert "Agreement of the metrics' system orderings:" in text
    one = ["meta", "--data", str(runs), "-m", "ndcg@10", "--resamples", "50", "--trials", "5"]
    assert main(one) == 0
    assert "(needs at least 2 metrics: give -m more than once)" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("more", "message"),
    [
        (["--format", "csv"], "--format csv writes one table: pass --part power"),
        (["--test", "t"], "invalid choice: 't'"),
        (["--subset-size", "1000"], "subset_sizes must be ints in [1, 30]"),
    ],
)
def test_meta_errors(
    capsys: pytest.CaptureFixture[str], runs: Path, more: list[str], message: str
) -> None:
    assert main(argv(runs, *more)) == 2
    assert message in capsys.readouterr().err
