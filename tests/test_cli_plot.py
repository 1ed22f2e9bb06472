"""The ``plot`` subcommand of the command line."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from polars_rankeval import plot
from polars_rankeval.cli import PLOT_KINDS, main
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
        (["curves", "-m", "recall", "-m", "ndcg", "--ks", "[1,5,10]"], ".png"),
        (["pr_curves", "--levels", "6"], ".svg"),
        (["distribution", "-m", "P@5", "--kind", "ecdf"], ".png"),
        (["topic_differences", "-m", "ndcg@10", "--baseline", "bm25"], ".svg"),
        (["lorenz", "--k", "5"], ".png"),
        (["long_tail", "--k", "5"], ".svg"),
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
        (
            ["topic_differences", "-m", "ndcg@10"],
            "plot topic_differences needs one --by column and --baseline",
        ),
        (["curves", "-m", "ndcg@10"], "metric 'ndcg@10' names its cutoffs already"),
        (["curves", "--ks", "0..3"], "must be positive integers"),
        (["distribution", "-m", "gini@10"], "one value per by group, not per user"),
        (["distribution", "-m", "ndgc@10"], "unknown metric 'ndgc'"),
    ],
)
def test_plot_errors(
    argv: list[str], message: str, data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "chart.png"
    assert main(["plot", *argv, "--data", str(data), "--by", "system", "--out", str(out)]) == 2
    assert message in capsys.readouterr().err
    assert not out.exists()


@pytest.mark.parametrize("kind", ["histogram", "ecdf"])
def test_plot_of_a_metric_undefined_for_every_user_is_one_line(
    kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # No relevant item anywhere: ndcg@10 is null for every user (was a ZeroDivisionError).
    path = tmp_path / "none.parquet"
    load_systems().filter(pl.col("user") <= 5).with_columns(relevance=pl.lit(0)).write_parquet(path)
    out = tmp_path / "chart.png"
    argv = ["plot", "distribution", "-m", "ndcg@10", "--kind", kind, "--data", str(path)]
    assert main([*argv, "--by", "system", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("polars-rankeval: error: distribution: metric 'ndcg@10' is undefined")
    assert len(err.strip().splitlines()) == 1
    assert not out.exists()


def test_plot_kinds_are_the_function_names(capsys: pytest.CaptureFixture[str]) -> None:
    assert all(callable(getattr(plot, kind)) and kind in plot.__all__ for kind in PLOT_KINDS)
    charts = {"curves", "pr_curves", "distribution", "topic_differences", "lorenz", "long_tail"}
    assert set(PLOT_KINDS) == charts
    assert main(["plot", "curve", "--out", "x.png"]) == 2  # the old names are gone
    assert "invalid choice: 'curve'" in capsys.readouterr().err
