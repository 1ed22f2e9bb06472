"""The command line's input reading: globs, NAME=PATH arguments, CSV files, side inputs.

Each test guards an input the command line could otherwise misread without a word.
"""

from __future__ import annotations

import io
import math
from pathlib import Path

import polars as pl
import pytest

import polars_rankeval as prk
from polars_rankeval.cli.app import main

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


# --------------------------------------------------------------------------- item 19: side inputs
TRAIN = pl.DataFrame({"user": [7, 7, 8, 9, 9], "item": [10, 11, 10, 12, 13]})
# 3 training users; holding: 10 -> 2, 11 -> 1, 12 -> 1, 13 -> 1


def _novelty_by_hand() -> tuple[float, float]:
    """novelty@2 and arp@2 of RECS over its 4 users, p(i) = share of TRAIN's 3 users."""
    p = {10: 2 / 3, 11: 1 / 3, 12: 1 / 3, 13: 1 / 3}
    tops = [[10, 11], [10, 13], [11, 12], [10]]  # top 2 of users 1..4 by score
    novelty = sum(sum(-math.log2(p[i]) for i in t) / len(t) for t in tops) / 4
    arp = sum(sum(p[i] for i in t) / len(t) for t in tops) / 4
    return novelty, arp


@pytest.mark.parametrize("suffix", [".parquet", ".csv"])
def test_cli_history_gives_novelty_and_arp(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, suffix: str
) -> None:
    RECS.write_parquet(tmp_path / "recs.parquet")
    TRUTH.write_parquet(tmp_path / "truth.parquet")
    history = tmp_path / f"train{suffix}"
    if suffix == ".csv":
        history.write_text(TRAIN.write_csv() + "\n")  # a blank line at the end too
    else:
        TRAIN.write_parquet(history)
    argv = ["--recs", str(tmp_path / "recs.parquet"), "--truth", str(tmp_path / "truth.parquet")]
    argv += ["-m", "novelty@2", "-m", "arp@2", "--format", "csv", "--history", str(history)]
    code, out, err = run(capsys, *argv)
    assert code == 0, err
    novelty, arp = _novelty_by_hand()
    got = _csv(out)
    assert got["novelty@2"].item() == pytest.approx(novelty)
    assert got["popularity_bias@2"].item() == pytest.approx(arp)
    # --items: the same numbers from an item_popularity() table
    prk.item_popularity(TRAIN).write_parquet(tmp_path / "pop.parquet")
    argv_items = [*argv[:-2], "--items", str(tmp_path / "pop.parquet")]
    code, out, err = run(capsys, *argv_items)
    assert code == 0, err
    assert _csv(out)["novelty@2"].item() == pytest.approx(novelty)


def test_cli_compare_takes_history(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    two = pl.concat(
        [
            RECS.with_columns(system=pl.lit("a")),
            RECS.with_columns(system=pl.lit("b"), score=-pl.col("score")),
        ]
    )
    two.write_parquet(tmp_path / "recs.parquet")
    TRUTH.write_parquet(tmp_path / "truth.parquet")
    TRAIN.write_parquet(tmp_path / "train.parquet")
    argv = ["compare", "--recs", str(tmp_path / "recs.parquet"), "--by", "system"]
    argv += ["--truth", str(tmp_path / "truth.parquet"), "-m", "novelty@2", "--test", "t"]
    argv += ["--baseline", "a", "--format", "csv", "--users", "recs"]
    code, out, err = run(capsys, *argv, "--history", str(tmp_path / "train.parquet"))
    assert code == 0, err
    want = prk.compare(
        prk.join(two, TRUTH, by="system", check_overlap=False),
        ["novelty@2"],
        baseline="a",
        test="t",
        users="recs",
        history=TRAIN,
    )
    assert _csv(out)["diff"].item() == pytest.approx(want["diff"].item())


def test_cli_history_errors(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    RECS.write_parquet(tmp_path / "recs.parquet")
    TRUTH.write_parquet(tmp_path / "truth.parquet")
    argv = ["--recs", str(tmp_path / "recs.parquet"), "--truth", str(tmp_path / "truth.parquet")]
    code, _, err = run(capsys, *argv, "-m", "novelty@2", "--history", str(tmp_path / "no.parquet"))
    assert code == 2
    assert "no such file" in err
    # items 11, 12 and 13 recommended but never in this history: an error naming the options
    TRAIN.filter(pl.col("item") == 10).write_parquet(tmp_path / "small.parquet")
    code, _, err = run(
        capsys, *argv, "-m", "novelty@2", "--history", str(tmp_path / "small.parquet")
    )
    assert code == 2
    # top 2: user 1 {10, 11}, user 2 {10, 13}, user 3 {11, 12}: 4 cold rows, 3 users
    assert "4 item(s) in the top k of 3 user(s) have no interaction in history=" in err
    assert "pass unknown=one" in err
    # string ids in the history, integers in the data: the --id-type hint
    TRAIN.with_columns(pl.col("item").cast(pl.String)).write_parquet(tmp_path / "text.parquet")
    code, _, err = run(capsys, *argv, "-m", "arp@2", "--history", str(tmp_path / "text.parquet"))
    assert code == 2
    assert "has dtype String in history= but Int64 in the data" in err
    assert "pass --id-type string" in err
    # ... which reads the ids of every file as text, so they match
    code, out, err = run(
        capsys, *argv, "-m", "arp@2", "--history", str(tmp_path / "text.parquet"), "--id-type",
        "string", "--format", "csv",
    )  # fmt: skip
    assert code == 0, err
    assert _csv(out)["popularity_bias@2"].item() == pytest.approx(_novelty_by_hand()[1])


def test_compare_run_glob_is_one_system(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    for name, recs in (("up", RECS), ("down", RECS.with_columns(score=-pl.col("score")))):
        (tmp_path / name).mkdir()
        for i, part in enumerate(recs.partition_by("user", maintain_order=True)):
            _write_run(tmp_path / name / f"part{i}.run", part)
    _qrels(tmp_path / "q.qrels")
    up, down = str(tmp_path / "up" / "*.run"), str(tmp_path / "down" / "*.run")
    argv = ["compare", "--qrels", str(tmp_path / "q.qrels"), "-m", "mrr", "--test", "t"]
    code, out, err = run(
        capsys, *argv, "--run", f"up={up}", "--run", f"down={down}", "--baseline", "up",
        "--format", "csv",
    )  # fmt: skip
    assert code == 0, err
    got = _csv(out)
    assert got["system"].to_list() == ["down"]
    # TREC ids are text: user 4's only item is relevant in both systems
    assert got["n_users"].item() == 4


def test_a_system_column_inside_the_files_splits(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # two systems recommending different items to user 1: one list each, never merged
    recs = pl.DataFrame(
        {
            "system": ["a", "a", "b", "b"],
            "user": [1, 1, 1, 1],
            "item": [10, 11, 12, 13],
            "score": [2.0, 1.0, 2.0, 1.0],
        }
    )
    _partitions(tmp_path / "recs", recs, "part")  # one file: one user
    pl.DataFrame({"user": [1], "item": [12]}).write_parquet(tmp_path / "truth.parquet")
    argv = ["--recs", str(tmp_path / "recs" / "*.parquet"), "-m", "mrr", "--format", "csv"]
    code, out, err = run(capsys, *argv, "--truth", str(tmp_path / "truth.parquet"))
    assert code == 0, err
    got = _csv(out)
    assert got["system"].to_list() == ["a", "b"]
    assert got["mrr"].to_list() == [0.0, 1.0]
    long = prk.join(recs, pl.DataFrame({"user": [1], "item": [12]}), by="system")
    long.write_parquet(tmp_path / "long.parquet")
    code, out, err = run(capsys, "--data", str(tmp_path / "long.parquet"), "-m", "mrr")
    assert code == 0, err
    assert "system" in out


def test_ids_of_one_dtype_across_files_and_systems(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    RECS.write_parquet(tmp_path / "a.parquet")
    RECS.with_columns(pl.col("item").cast(pl.String)).write_parquet(tmp_path / "b.parquet")
    TRUTH.write_parquet(tmp_path / "truth.parquet")
    truth = ["--truth", str(tmp_path / "truth.parquet")]
    for recs in (
        ["--recs", str(tmp_path / "[ab].parquet")],  # one system, two files
        ["--recs", str(tmp_path / "a.parquet"), "--recs", str(tmp_path / "b.parquet")],
        ["compare", "--recs", str(tmp_path / "a.parquet"), "--recs", str(tmp_path / "b.parquet")],
    ):
        code, _, err = run(capsys, *recs, *truth)
        assert code == 2
        assert "column 'item' has dtype Int64 in" in err
        assert "but String in" in err
