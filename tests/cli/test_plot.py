"""The ``plot`` subcommand of the command line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl
import pytest

from polars_rankeval import plot
from polars_rankeval.api.datasets import load_systems
from polars_rankeval.cli.app import main
from polars_rankeval.cli.plot import PLOT_KINDS

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
        (["curves", "--ks", "1..3"], ".pdf"),
    ],
)
def test_plot_writes_the_chart(argv: list[str], suffix: str, data: Path, tmp_path: Path) -> None:
    out = tmp_path / f"chart{suffix}"
    assert main(["plot", *argv, "--data", str(data), "--by", "system", "--out", str(out)]) == 0
    head = out.read_bytes()[:200]
    magic = {".png": b"\x89PNG", ".pdf": b"%PDF"}
    assert head.startswith(magic[suffix]) if suffix in magic else b"<svg" in head
    assert [p.name for p in out.parent.glob("chart*")] == [out.name]


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
    assert not list(tmp_path.glob("chart.*"))


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


@pytest.mark.parametrize("suffix", [".png", ".svg"])
@pytest.mark.parametrize("existing", [True, False])
def test_a_failed_write_keeps_the_old_chart_and_leaves_no_partial_file(
    suffix: str,
    existing: bool,
    data: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    import altair as alt

    charts = tmp_path / "charts"
    charts.mkdir()
    out = charts / f"chart{suffix}"
    if existing:
        out.write_bytes(b"the old chart")

    def full_disk(self: Any, fp: Any, *args: Any, **kwargs: Any) -> None:
        Path(fp).write_bytes(b"half a chart")  # the renderer got this far
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(alt.TopLevelMixin, "save", full_disk)
    argv = ["plot", "lorenz", "--k", "5", "--data", str(data), "--by", "system"]
    assert main([*argv, "--out", str(out)]) == 2
    assert "No space left on device" in capsys.readouterr().err
    assert [p.name for p in charts.iterdir()] == ([out.name] if existing else [])
    if existing:
        assert out.read_bytes() == b"the old chart"


def test_an_unknown_chart_format_fails_before_reading_the_data(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "chart.jpg"
    missing = tmp_path / "missing.parquet"  # never read: the format is checked first
    assert main(["plot", "lorenz", "--data", str(missing), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "use a .html, .json, .pdf, .png, .svg file" in err
    assert not list(tmp_path.iterdir())
