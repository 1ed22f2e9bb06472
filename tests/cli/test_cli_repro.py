"""The ``repro`` subcommand: the same frames as prk.reproducibility / prk.replicability."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import polars_rankeval as prk
from polars_rankeval.cli.app import main


def _write(run: pl.DataFrame, path: Path) -> Path:
    """A TREC run file, each topic by descending score."""
    (
        run.sort(["user", "score"], descending=[False, True])
        .select(
            "user",
            pl.lit("Q0").alias("q0"),
            "item",
            pl.int_range(1, pl.len() + 1).over("user").alias("rank"),
            "score",
            pl.lit("tag").alias("tag"),
        )
        .write_csv(path, separator=" ", include_header=False)
    )
    return path


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("repro")
    qrels, run_path = prk.datasets.example_paths()
    run = prk.trec.read_run(run_path).select("user", "item", "score")
    rng = np.random.default_rng(0)

    def noisy(scale: float) -> pl.DataFrame:
        return run.with_columns(pl.col("score") + rng.normal(0.0, scale, run.height))

    return {
        "qrels": qrels,
        "orig": _write(run, root / "orig.run"),
        "repr": _write(noisy(0.05), root / "repr.run"),
        "orig_base": _write(noisy(0.5), root / "orig_base.txt"),  # TREC without the suffix
        "repr_base": _write(noisy(0.5), root / "repr_base.run"),
    }


def _scan(path: Path) -> pl.LazyFrame:
    return prk.trec.scan_run(path).select("user", "item", "score")


def _csv(capsys: pytest.CaptureFixture[str], argv: list[str]) -> pl.DataFrame:
    assert main(argv) == 0
    return pl.read_csv(io.StringIO(capsys.readouterr().out))


def test_repro_parts_equal_python(
    capsys: pytest.CaptureFixture[str], files: dict[str, Path]
) -> None:
    argv = [
        "repro",
        "--qrels", str(files["qrels"]),
        "--orig-run", str(files["orig"]),
        "--repr-run", str(files["repr"]),
        "--orig-baseline", str(files["orig_base"]),
        "--repr-baseline", str(files["repr_base"]),
        "-m", "map", "ndcg@10",
        "--rbo-p", "0.9",
        "--format", "csv",
    ]  # fmt: skip
    expected = prk.reproducibility(
        _scan(files["orig"]),
        _scan(files["repr"]),
        qrels=prk.trec.scan_qrels(files["qrels"]).select("user", "item", "relevance"),
        baseline_original=_scan(files["orig_base"]),
        baseline_reproduced=_scan(files["repr_base"]),
        metrics=["map", "ndcg@10"],
        rbo_p=0.9,
    )
    assert expected.effects is not None
    for part, frame in (
        ("ordering", expected.ordering),
        ("topics", expected.ordering_per_topic.with_columns(pl.col("user").cast(pl.Int64))),
        ("effectiveness", expected.effectiveness),
        ("effects", expected.effects),
    ):
        out = _csv(capsys, [*argv, "--part", part])
        assert_frame_equal(out, frame, check_dtypes=False)


def test_repro_tables(capsys: pytest.CaptureFixture[str], files: dict[str, Path]) -> None:
    argv = ["repro", "--qrels", str(files["qrels"]), "--orig-run", str(files["orig"])]
    assert main([*argv, "--repr-run", str(files["repr"])]) == 0
    text = capsys.readouterr().out
    assert "Ordering of the documents (means over the topics):" in text
    assert "Per-topic scores (RMSE, paired t-test):" in text
    assert "Effect of the advanced run" not in text  # no baseline pair


def test_replication(capsys: pytest.CaptureFixture[str], files: dict[str, Path]) -> None:
    argv = [
        "repro",
        "--qrels", str(files["qrels"]),
        "--replicated-qrels", str(files["qrels"]),
        "--orig-run", str(files["orig"]),
        "--repr-run", str(files["repr"]),
        "-m", "precision@10",
        "--part", "effectiveness",
        "--format", "csv",
    ]  # fmt: skip
    judged = prk.trec.scan_qrels(files["qrels"]).select("user", "item", "relevance")
    expected = prk.replicability(
        _scan(files["orig"]),
        _scan(files["repr"]),
        qrels_original=judged,
        qrels_replicated=judged,
        metrics=["precision@10"],
    )
    assert_frame_equal(_csv(capsys, argv), expected.effectiveness, check_dtypes=False)


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--orig-baseline", "x.run"], "--orig-baseline and --repr-baseline go together"),
        (["--format", "csv"], "--format csv writes one table"),
        (["--part", "effects"], "--part effects needs the baseline pair"),
    ],
)
def test_usage_errors(
    capsys: pytest.CaptureFixture[str], files: dict[str, Path], extra: list[str], message: str
) -> None:
    argv = ["repro", "--qrels", str(files["qrels"]), "--orig-run", str(files["orig"])]
    assert main([*argv, "--repr-run", str(files["repr"]), *extra]) == 2
    assert message in capsys.readouterr().err
