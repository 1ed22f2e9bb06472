"""The command line's input reading: globs, NAME=PATH arguments, CSV files, side inputs.

Each test here failed before the fix it guards (issue 24, items 9, 13, 14 and 19).
"""

from __future__ import annotations

import io
from pathlib import Path

import polars as pl
import pytest

import polars_rankeval as prk
from polars_rankeval.cli import main

RECS = pl.DataFrame(
    {
        "user": [1, 1, 1, 2, 2, 3, 3, 4],
        "item": [10, 11, 12, 10, 13, 11, 12, 10],
        "score": [0.9, 0.8, 0.1, 0.7, 0.6, 0.5, 0.4, 0.3],
    }
)
TRUTH = pl.DataFrame({"user": [1, 1, 2, 3, 4], "item": [11, 14, 13, 10, 10]})


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _csv(out: str) -> pl.DataFrame:
    return pl.read_csv(io.StringIO(out))


def _expected(recs: pl.DataFrame, metrics: list[str]) -> pl.DataFrame:
    return prk.evaluate(prk.join(recs, TRUTH, check_overlap=False), metrics)


def _partitions(directory: Path, recs: pl.DataFrame, prefix: str) -> None:
    """Write ``recs`` as one Parquet file per user (partitions of one system)."""
    directory.mkdir(exist_ok=True)
    for i, part in enumerate(recs.partition_by("user", maintain_order=True)):
        part.write_parquet(directory / f"{prefix}-{i}.parquet")


# --------------------------------------------------------------------------- item 9: globs
def test_a_glob_of_partitions_is_one_system(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    _partitions(tmp_path / "recs", RECS, "recs")
    TRUTH.write_parquet(tmp_path / "truth.parquet")
    metrics = ["-m", "ndcg@10", "-m", "mrr", "--format", "csv"]
    truth = ["--truth", str(tmp_path / "truth.parquet")]
    code, out, err = run(
        capsys, "--recs", str(tmp_path / "recs" / "recs-*.parquet"), *truth, *metrics
    )
    assert code == 0, err
    got = _csv(out)
    want = _expected(RECS, ["ndcg@10", "mrr"])
    assert "system" not in got.columns
    assert got.height == 1
    assert got["ndcg@10"].item() == pytest.approx(want["ndcg@10"].item(), rel=1e-12)
    # mrr: users 1 and 2 hit at rank 2, user 3 none, user 4 at rank 1: (1/2 + 1/2 + 0 + 1) / 4
    assert got["mrr"].item() == pytest.approx((1 / 2 + 1 / 2 + 0 + 1) / 4)
    assert got["n_users"].item() == 4


def test_several_globs_are_several_named_systems(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    other = RECS.with_columns(score=-pl.col("score"))
    _partitions(tmp_path / "a", RECS, "part")
    _partitions(tmp_path / "b", other, "part")
    TRUTH.write_parquet(tmp_path / "truth.parquet")
    argv = ["--truth", str(tmp_path / "truth.parquet"), "-m", "mrr", "--format", "csv"]
    a, b = str(tmp_path / "a" / "*.parquet"), str(tmp_path / "b" / "*.parquet")
    code, out, err = run(capsys, "--recs", f"up={a}", "--recs", f"down={b}", *argv)
    assert code == 0, err
    got = _csv(out)
    assert got["system"].to_list() == ["down", "up"]
    assert got["mrr"].to_list() == pytest.approx(
        [_expected(other, ["mrr"])["mrr"].item(), _expected(RECS, ["mrr"])["mrr"].item()]
    )
    # --system names them in order too
    code, out, err = run(capsys, "--recs", a, "--recs", b, "--system", "x", "--system", "y", *argv)
    assert code == 0, err
    assert _csv(out)["system"].to_list() == ["x", "y"]
    # unnamed globs of several systems have no name: an error, not '*'
    code, _, err = run(capsys, "--recs", a, "--recs", b, *argv)
    assert code == 2
    assert "name it" in err
    assert "NAME=" in err


def test_a_glob_over_files_of_several_systems_is_an_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    runs = tmp_path / "runs"
    runs.mkdir()
    RECS.write_csv(runs / "bm25.csv")
    RECS.with_columns(score=-pl.col("score")).write_csv(runs / "dense.csv")
    TRUTH.write_csv(tmp_path / "truth.csv")
    code, _, err = run(
        capsys, "--recs", str(runs / "*.csv"), "--truth", str(tmp_path / "truth.csv"), "-m", "mrr"
    )
    assert code == 2
    assert "rows share a (user, item) key" in err
    assert "matched 2 files, read as one system" in err
    assert "--recs NAME=PATH" in err


def test_data_takes_a_glob(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    long = prk.join(RECS, TRUTH, check_overlap=False)
    _partitions(tmp_path / "long", long, "long")
    code, out, err = run(
        capsys, "--data", str(tmp_path / "long" / "*.parquet"), "-m", "mrr", "--format", "csv"
    )
    assert code == 0, err
    assert _csv(out)["mrr"].item() == pytest.approx((1 / 2 + 1 / 2 + 0 + 1) / 4)
    code, _, err = run(capsys, "--data", str(tmp_path / "none-*.parquet"))
    assert code == 2
    assert "--data" in err
    assert "matches no file" in err


def test_compare_recs_globs_are_systems(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    other = RECS.with_columns(score=-pl.col("score"))
    _partitions(tmp_path / "a", RECS, "part")
    _partitions(tmp_path / "b", other, "part")
    TRUTH.write_parquet(tmp_path / "truth.parquet")
    a, b = str(tmp_path / "a" / "*.parquet"), str(tmp_path / "b" / "*.parquet")
    argv = ["compare", "--recs", f"up={a}", "--recs", f"down={b}", "-m", "mrr"]
    argv += ["--truth", str(tmp_path / "truth.parquet"), "--test", "t", "--format", "csv"]
    code, out, err = run(capsys, *argv, "--baseline", "up")
    assert code == 0, err
    got = _csv(out)
    assert got["system"].to_list() == ["down"]
    want = _expected(other, ["mrr"])["mrr"].item() - _expected(RECS, ["mrr"])["mrr"].item()
    assert got["diff"].item() == pytest.approx(want)


# --------------------------------------------------------------------------- item 13: CSV
@pytest.mark.parametrize(("suffix", "sep"), [(".csv", ","), (".tsv", "\t")])
@pytest.mark.parametrize("id_type", ["infer", "string"])
def test_csv_ending_with_blank_lines(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, suffix: str, sep: str, id_type: str
) -> None:
    recs, truth = tmp_path / f"recs{suffix}", tmp_path / f"truth{suffix}"
    recs.write_text(RECS.write_csv(separator=sep) + "\n\n")
    truth.write_text(TRUTH.write_csv(separator=sep) + "\n")
    argv = ["--recs", str(recs), "--truth", str(truth), "-m", "mrr", "--format", "csv"]
    code, out, err = run(capsys, *argv, "--id-type", id_type)
    assert code == 0, err
    assert _csv(out)["mrr"].item() == pytest.approx((1 / 2 + 1 / 2 + 0 + 1) / 4)
    # --data reads CSV the same way
    data = tmp_path / f"long{suffix}"
    data.write_text(prk.join(RECS, TRUTH, check_overlap=False).write_csv(separator=sep) + "\n\n")
    code, out, err = run(capsys, "--data", str(data), "-m", "mrr", "--format", "csv")
    assert code == 0, err
    assert _csv(out)["mrr"].item() == pytest.approx((1 / 2 + 1 / 2 + 0 + 1) / 4)


def test_csv_with_a_genuinely_null_id_still_fails(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    recs, truth = tmp_path / "recs.csv", tmp_path / "truth.csv"
    recs.write_text(RECS.write_csv() + ",15,0.2\n\n")
    TRUTH.write_csv(truth)
    code, _, err = run(capsys, "--recs", str(recs), "--truth", str(truth), "-m", "mrr")
    assert code == 2
    assert "user column 'user' has 1 null value(s)" in err


# --------------------------------------------------------------------------- item 14: NAME=PATH
def _write_run(path: Path, recs: pl.DataFrame) -> None:
    lines = [f"{u} Q0 {i} {r + 1} {s} t\n" for r, (u, i, s) in enumerate(recs.iter_rows())]
    path.write_text("".join(lines))


def _qrels(path: Path) -> None:
    path.write_text("".join(f"{u} 0 {i} 1\n" for u, i in TRUTH.iter_rows()))


def test_compare_run_path_with_an_equals_sign(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    runs = tmp_path / "runs"
    runs.mkdir()
    _write_run(runs / "bm25_k1=0.9.run", RECS)
    _write_run(runs / "bm25_k1=1.2.run", RECS.with_columns(score=-pl.col("score")))
    _qrels(tmp_path / "q.qrels")
    argv = ["compare", "--qrels", str(tmp_path / "q.qrels"), "-m", "mrr", "--test", "t"]
    argv += ["--format", "csv", "--baseline", "bm25_k1=0.9"]
    code, out, err = run(
        capsys,
        *argv,
        "--run",
        str(runs / "bm25_k1=0.9.run"),
        "--run",
        str(runs / "bm25_k1=1.2.run"),
    )
    assert code == 0, err
    assert _csv(out)["system"].to_list() == ["bm25_k1=1.2"]
    # NAME=PATH where PATH itself holds '=': split on the first '='
    code, out, err = run(
        capsys,
        *argv[:-2],
        "--baseline",
        "slow",
        "--run",
        f"slow={runs / 'bm25_k1=0.9.run'}",
        "--run",
        f"fast={runs / 'bm25_k1=1.2.run'}",
    )
    assert code == 0, err
    assert _csv(out)["system"].to_list() == ["fast"]


def test_name_equals_path_that_matches_nothing_lists_both_readings(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    _qrels(tmp_path / "q.qrels")
    _write_run(tmp_path / "y.run", RECS)
    missing = tmp_path / "x.run"
    code, _, err = run(
        capsys,
        *["compare", "--qrels", str(tmp_path / "q.qrels"), "--run", str(tmp_path / "y.run")],
        *["--run", f"fast={missing}"],
    )
    assert code == 2
    assert f"no file {f'fast={missing}'!r}" in err
    assert f"no file {str(missing)!r} for a system named 'fast'" in err
    TRUTH.write_csv(tmp_path / "truth.csv")
    code, _, err = run(capsys, "--recs", f"fast={missing}", "--truth", str(tmp_path / "truth.csv"))
    assert code == 2
    assert "for a system named 'fast'" in err
