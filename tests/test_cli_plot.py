"""The ``plot`` subcommand of the command line."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from polars_rankeval.cli import main
from polars_rankeval.datasets import load_systems

pytest.importorskip("altair")
pytest.importorskip("vl_convert")


@pytest.fixture
def data(tmp_path: Path) -> Path:
    path = tmp_path / "long.parquet"
    load_systems().filter(pl.col("user") <= 30).write_parquet(path)
    return path


@pytest.mark.parametrize(
    ("argv", "suffix"),
    [
        (["curve", "-m", "recall", "-m", "ndcg", "--ks", "[1,5,10]"], ".png"),
        (["pr", "--levels", "6"], ".svg"),
        (["distribution", "-m", "P@5", "--kind", "ecdf"], ".png"),
        (["differences", "-m", "ndcg@10", "--baseline", "bm25"], ".svg"),
        (["lorenz", "--k", "5"], ".png"),
        (["long-tail", "--k", "5"], ".svg"),
    ],
)
def test_plot_writes_the_chart(argv: list[str], suffix: str, data: Path, tmp_path: Path) -> None:
    out = tmp_path / f"chart{suffix}"
    assert main(["plot", *argv, "--data", str(data), "--by", "system", "--out", str(out)]) == 0
    head = out.read_bytes()[:200]
    assert head.startswith(b"\x89PNG") if suffix == ".png" else b"<svg" in head


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["differences", "-m", "ndcg@10"], "plot differences needs one --by column and --baseline"),
        (["curve", "-m", "ndcg@10"], "metric 'ndcg@10' names its cutoffs already"),
        (["curve", "--ks", "0..3"], "must be positive integers"),
        (["distribution", "-m", "gini@10"], "one value per by group, not per user"),
        (["distribution", "-m", "ndgc@10"], "unknown metric 'ndgc@10'; did you mean 'ndcg@10'?"),
    ],
)
def test_plot_errors(
    argv: list[str], message: str, data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "chart.png"
    assert main(["plot", *argv, "--data", str(data), "--by", "system", "--out", str(out)]) == 2
    assert message in capsys.readouterr().err
    assert not out.exists()
