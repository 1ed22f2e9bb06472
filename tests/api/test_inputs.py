"""No silent wrong numbers from the inputs: relevance, ids, overlap, runs, duplicates.

Each test guards an input that would otherwise give a plausible but wrong number.

Tests the private unit engines.buckets.BucketProgress on purpose (its lines).
"""

from __future__ import annotations

import io
import re
import warnings
from pathlib import Path

import polars as pl
import pytest

import polars_rankeval as prk
from polars_rankeval.cli.app import main
from polars_rankeval.engines.buckets import BucketProgress

RECS = pl.DataFrame(
    {
        "user": [1, 1, 1, 2, 2],
        "item": [10, 11, 12, 10, 13],
        "score": [0.9, 0.8, 0.1, 0.7, 0.6],
    }
)
TRUTH = pl.DataFrame({"user": [1, 1, 2, 3], "item": [11, 14, 13, 10], "grade": [2, 1, 1, 1]})


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


# --------------------------------------------------------------------------- relevance
def test_join_refuses_a_named_relevance_column_that_does_not_exist() -> None:
    with pytest.raises(ValueError, match=r"column 'relevance' not found in truth.*leave"):
        prk.join(RECS, TRUTH.drop("grade"), relevance="relevance")
    with pytest.raises(ValueError, match=r"column 'grad' not found in truth"):
        prk.join(RECS, TRUTH, relevance="grad")


def test_join_default_relevance_marks_every_row_relevant_only_when_not_named() -> None:
    long = prk.join(RECS, TRUTH.drop("grade"))
    assert isinstance(long, pl.DataFrame)
    # 4 truth rows, each relevant (1); 5 - 2 = 3 recommended rows not in the truth: null.
    assert long["relevance"].to_list().count(1) == 4
    assert long["relevance"].null_count() == 3
    graded = prk.join(RECS, TRUTH, relevance="grade").sort("user", "item")
    assert graded.columns == ["user", "item", "score", "grade"]
    assert graded.filter(pl.col("item") == 11)["grade"].item() == 2


def test_evaluate_refuses_a_missing_relevance_column() -> None:
    long = prk.join(RECS, TRUTH, relevance="grade")
    with pytest.raises(ValueError, match=r"column 'relevance' not found in the data"):
        prk.evaluate(long, ["recall@2"])


def test_cli_missing_relevance_column_is_an_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    RECS.write_csv(tmp_path / "recs.csv")
    TRUTH.write_csv(tmp_path / "truth.csv")
    files = ["--recs", str(tmp_path / "recs.csv"), "--truth", str(tmp_path / "truth.csv")]
    code, _, err = run(capsys, *files, "--relevance", "relevance", "-m", "recall@2")
    assert code == 2
    assert "column 'relevance' not found in truth" in err
    code, out, _ = run(capsys, *files, "--relevance", "grade", "-m", "recall@2", "--format", "csv")
    assert code == 0
    # users 1, 2, 3 of the truth: recall@2 = 1/2 (11 of {11, 14}), 1/1 (13), 0/1 -> mean 0.5
    row = pl.read_csv(io.StringIO(out)).row(0, named=True)
    assert (row["recall@2"], row["n_users"]) == (0.5, 3)


# --------------------------------------------------------------------------- overlap
def test_overlap_counts_by_hand() -> None:
    got = prk.overlap(RECS, TRUTH).row(0, named=True)
    assert got == {
        "truth_users": 3,  # 1, 2, 3
        "recs_users": 2,  # 1, 2
        "users_matched": 2,  # 1, 2
        "truth_items": 4,  # 10, 11, 13, 14
        "recs_items": 4,  # 10, 11, 12, 13
        "items_matched": 3,  # 10, 11, 13
        "truth_rows": 4,
        "recs_rows": 5,
        "rows_matched": 2,  # (1, 11), (2, 13)
    }
    by = prk.overlap(
        pl.concat(
            [RECS.with_columns(system=pl.lit("a")), RECS.head(1).with_columns(system=pl.lit("b"))]
        ),
        TRUTH,
        by="system",
    )
    assert by["system"].to_list() == ["a", "b"]
    assert by["rows_matched"].to_list() == [2, 0]  # b recommends only (1, 10)


def test_join_warns_when_ids_read_differently_do_not_meet() -> None:
    # Leading zeros: the same users, read as text in one table and text without zeros
    # in the other: no user in common, every metric would be 0.
    recs = RECS.with_columns(pl.format("00{}", "user").alias("user"))
    truth = TRUTH.with_columns(pl.col("user").cast(pl.String))
    with pytest.warns(prk.OverlapWarning, match=r"no user of the recommendations is in the truth"):
        prk.join(recs, truth, relevance="grade")


def test_join_warns_for_a_tiny_overlap_and_not_for_a_normal_one() -> None:
    truth = pl.DataFrame({"user": list(range(300)), "item": [1] * 300})
    recs = pl.DataFrame({"user": [0, 0], "item": [1, 2], "score": [1.0, 0.5]})
    # 1 of 300 truth users (0.33% < 1%) has recommendations.
    with pytest.warns(prk.OverlapWarning, match=r"only 1 of the 300 truth users \(0.33%\)"):
        prk.join(recs, truth)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        prk.join(RECS, TRUTH, relevance="grade")  # 2 of 3 users: fine


def test_join_warns_per_by_group() -> None:
    recs = pl.concat(
        [
            RECS.with_columns(system=pl.lit("good")),
            RECS.with_columns(system=pl.lit("off"), item=pl.col("item") + 1000),
        ]
    )
    with pytest.warns(prk.OverlapWarning, match=r"\(system='off'\): no recommended item"):
        prk.join(recs, TRUTH, relevance="grade", by="system")


def test_join_reads_a_lazy_input_only_when_asked() -> None:
    def explode(frame: pl.DataFrame) -> pl.DataFrame:
        raise RuntimeError("the lazy input was read")

    lazy = RECS.lazy().map_batches(explode, schema=RECS.schema)
    out = prk.join(lazy, TRUTH, relevance="grade")  # not read: no check, no scan
    assert isinstance(out, pl.LazyFrame)
    with pytest.raises(Exception, match="the lazy input was read"):
        prk.join(lazy, TRUTH, relevance="grade", check_overlap=True)
    with pytest.warns(prk.OverlapWarning):
        prk.join(RECS.lazy().with_columns(user=pl.col("user") + 100), TRUTH, check_overlap=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        prk.join(RECS.with_columns(user=pl.col("user") + 100), TRUTH, check_overlap=False)


def test_cli_warns_on_stderr_when_nothing_matches(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    RECS.with_columns(pl.format("u{}", "user").alias("user")).write_csv(tmp_path / "recs.csv")
    TRUTH.with_columns(pl.format("U{}", "user").alias("user")).write_csv(tmp_path / "truth.csv")
    code, out, err = run(
        capsys,
        *["--recs", str(tmp_path / "recs.csv"), "--truth", str(tmp_path / "truth.csv")],
        *["--relevance", "grade", "-m", "recall@2", "--format", "csv"],
    )
    assert code == 0
    row = pl.read_csv(io.StringIO(out)).row(0, named=True)
    assert (row["recall@2"], row["n_users"]) == (0.0, 3)  # the numbers are printed, and ...
    assert "polars-rankeval: warning: recommendations and truth barely overlap" in err
    assert "0 of 3 truth users" in err


# --------------------------------------------------------------------------- id dtypes
def test_join_id_rule() -> None:
    with pytest.raises(TypeError, match=r"dtype Float64 in recs but Int64 in truth.*float id"):
        prk.join(RECS.with_columns(pl.col("user").cast(pl.Float64)), TRUTH)
    with pytest.raises(TypeError, match=r"'007' would not match 7"):
        prk.join(RECS, TRUTH.with_columns(pl.col("item").cast(pl.String)))
    narrow = prk.join(RECS.with_columns(pl.col("item").cast(pl.UInt8)), TRUTH, relevance="grade")
    assert narrow.schema["item"] == pl.Int64
    assert narrow.height == 7  # 5 recommended + 2 judged not recommended... see below
    # (1,10) (1,11)* (1,12) (2,10) (2,13)* | (1,14) (3,10): 7 rows, * in both
    cat = prk.join(
        RECS.with_columns(pl.col("user").cast(pl.String).cast(pl.Categorical)),
        TRUTH.with_columns(pl.col("user").cast(pl.String)),
        relevance="grade",
    )
    assert cat.schema["user"] == pl.String
    assert cat.height == 7


def test_cli_float_and_integer_ids_are_an_error_as_in_join(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # "1.0" (Float64) against "1" (Int64): compared as text they never match (recall 0).
    RECS.with_columns(pl.col("user").cast(pl.Float64)).write_csv(tmp_path / "recs.csv")
    TRUTH.write_csv(tmp_path / "truth.csv")
    code, _, err = run(
        capsys,
        *["--recs", str(tmp_path / "recs.csv"), "--truth", str(tmp_path / "truth.csv")],
        *["--relevance", "grade", "-m", "recall@2"],
    )
    assert code == 2
    assert "column 'user' has dtype Float64 in recs but Int64 in truth" in err
    assert len(err.strip().splitlines()) == 1


def test_cli_id_type_string_keeps_leading_zeros(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # "007" and "7" are different users when read as text; inferred, both are 7.
    pl.DataFrame({"user": ["007", "7"], "item": [1, 1], "score": [1.0, 1.0]}).write_csv(
        tmp_path / "recs.csv"
    )
    pl.DataFrame({"user": ["007"], "item": [1]}).write_csv(tmp_path / "truth.csv")
    files = ["--recs", str(tmp_path / "recs.csv"), "--truth", str(tmp_path / "truth.csv")]
    code, _, err = run(capsys, *files, "-m", "mrr", "--per-user", "--users", "all")
    assert code == 2  # inferred as integers, both are user 7: a duplicate (7, 1) row
    assert "(user=7, item=1) appears 2 times" in err
    code, out, _ = run(
        capsys,
        *files,
        "--id-type",
        "string",
        "-m",
        "mrr",
        "--per-user",
        "--format",
        "csv",
        "--users",
        "all",
    )
    assert code == 0
    assert out.splitlines()[1:] == ["007,1.0", "7,"]


# --------------------------------------------------------------------------- several runs
def _write_runs(tmp_path: Path) -> tuple[list[str], pl.DataFrame]:
    runs = tmp_path / "runs"
    runs.mkdir()
    a = RECS
    b = RECS.with_columns(score=-pl.col("score"))
    a.write_csv(runs / "bm25.csv")
    b.write_csv(runs / "dense.csv")
    TRUTH.write_csv(tmp_path / "truth.csv")
    both = pl.concat(
        [a.with_columns(system=pl.lit("bm25")), b.with_columns(system=pl.lit("dense"))]
    )
    expected = prk.evaluate(
        prk.join(both, TRUTH, relevance="grade", by="system", check_overlap=False),
        ["mrr", "ndcg@2"],
        by="system",
        relevance="grade",
    )
    return [str(runs / "bm25.csv"), str(runs / "dense.csv")], expected


def test_cli_several_recs_files_are_systems(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    paths, expected = _write_runs(tmp_path)
    common = ["--truth", str(tmp_path / "truth.csv"), "--relevance", "grade"]
    common += ["-m", "mrr", "-m", "ndcg@2", "--format", "csv"]
    code, out, err = run(capsys, "--recs", paths[0], "--recs", paths[1], *common)
    assert code == 0, err
    got = pl.read_csv(io.StringIO(out))
    assert got["system"].to_list() == ["bm25", "dense"]
    assert got["mrr"].to_list() == pytest.approx(expected["mrr"].to_list())
    # bm25: user 1 hit at rank 2, user 2 at rank 2, user 3 none: (1/2 + 1/2 + 0) / 3
    assert got["mrr"][0] == pytest.approx((1 / 2 + 1 / 2 + 0) / 3)
    # a glob is ONE system: these two files share (user, item) keys
    code, _, err = run(capsys, "--recs", str(Path(paths[0]).parent / "*.csv"), *common)
    assert code == 2
    assert "matched 2 files, read as one system" in err
    # one glob per system, named, gives the same
    globs = [f"{Path(p).stem}={Path(p).parent / (Path(p).stem + '*.csv')}" for p in paths]
    code, out_glob, _ = run(capsys, "--recs", globs[0], "--recs", globs[1], *common)
    assert code == 0
    assert out_glob == out
    code, out, _ = run(
        capsys, "--recs", paths[0], "--recs", paths[1], "--system", "x", "--system", "y", *common
    )
    assert code == 0
    assert pl.read_csv(io.StringIO(out))["system"].to_list() == ["x", "y"]


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--system", "only-one"], r"--system is given 1 time\(s\) but --recs names 2 system"),
        (["--system", "s", "--system", "s"], r"the system name 's'"),
        (["--by", "system"], r"--by system is implied"),
    ],
)
def test_cli_several_recs_files_errors(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, extra: list[str], message: str
) -> None:
    paths, _ = _write_runs(tmp_path)
    code, _, err = run(
        capsys,
        "--recs",
        paths[0],
        "--recs",
        paths[1],
        "--truth",
        str(tmp_path / "truth.csv"),
        *extra,
    )
    assert code == 2
    assert re.search(message, err), err


def test_cli_recs_glob_without_match_and_same_stem(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    paths, _ = _write_runs(tmp_path)
    truth = ["--truth", str(tmp_path / "truth.csv")]
    code, _, err = run(capsys, "--recs", str(tmp_path / "none-*.csv"), *truth)
    assert code == 2
    assert "matches no file" in err
    other = tmp_path / "other"
    other.mkdir()
    RECS.write_csv(other / "bm25.csv")
    code, _, err = run(capsys, "--recs", paths[0], "--recs", str(other / "bm25.csv"), *truth)
    assert code == 2
    assert "system name 'bm25'" in err


# --------------------------------------------------------------------------- duplicates
def test_duplicate_error_shows_real_pairs_and_suggests_by() -> None:
    two = pl.concat(
        [
            RECS.with_columns(system=pl.lit("a"), stamp=pl.int_range(pl.len())),
            RECS.with_columns(system=pl.lit("b"), stamp=pl.int_range(pl.len()) + 5),
        ]
    )
    long = prk.join(two, TRUTH, relevance="grade", by="system", check_overlap=False)
    long = long.join(
        two.select("system", "user", "item", "stamp"), on=["system", "user", "item"], how="left"
    )
    with pytest.raises(ValueError, match=r"rows share a \(user, item\) key") as info:
        prk.evaluate(long.drop("stamp"), ["mrr"], relevance="grade")
    text = str(info.value)
    # The pairs shown are real duplicates: each key with the rows that carry it.
    first = re.search(r"\(user=(\d+), item=(\d+)\) appears 2 times: (\[.*?\])", text)
    assert first is not None
    user, item = int(first[1]), int(first[2])
    rows = eval(first[3])  # a list of dicts, printed by Python
    assert {(r["user"], r["item"]) for r in rows} == {(user, item)}
    assert {r["system"] for r in rows} == {"a", "b"}
    assert "pass by='system' (--by system on the command line)" in text
    # A column with a value per row (stamp: 10 values for 14 rows... none unique here)
    # is not suggested: only few-valued columns name systems.
    with pytest.raises(ValueError, match=r"by='system'") as info:
        prk.evaluate(long, ["mrr"], relevance="grade")
    assert "Column 'system' makes every row unique:" in str(info.value)  # stamp not named


def test_duplicate_error_without_a_fixing_column_has_no_hint() -> None:
    dup = pl.concat([RECS, RECS.head(1)]).with_columns(relevance=pl.lit(1))
    with pytest.raises(ValueError, match=r"2 rows share") as info:
        prk.evaluate(dup, ["mrr"])
    assert "(user=1, item=10) appears 2 times" in str(info.value)
    assert "pass by=" not in str(info.value)


# --------------------------------------------------------------------------- progress
class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_is_plain_lines_in_a_log_file() -> None:
    log = io.StringIO()
    report = BucketProgress(3, True, log)
    for rows in (10, 20, 30):
        report.step(rows)
    text = log.getvalue()
    assert "\r" not in text
    lines = text.splitlines()
    assert len(lines) == 3
    assert lines[2].startswith("[polars-rankeval] bucket 3/3, 60 rows")


def test_progress_rewrites_one_line_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    import builtins

    real_import = builtins.__import__

    def no_tqdm(name: str, *args: object, **kwargs: object) -> object:
        if name.startswith("tqdm"):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(builtins, "__import__", no_tqdm)
    tty = _Tty()
    report = BucketProgress(2, True, tty)
    report.step(1)
    report.step(2)
    assert tty.getvalue().count("\r") == 2
    assert tty.getvalue().endswith("left\n")


# --------------------------------------------------------------------------- lazy checks
LONG = pl.DataFrame(
    {
        "user": [1, 1, 2, 2],
        "item": [1, 2, 1, 2],
        "score": [0.9, 0.1, 0.2, 0.8],
        "relevance": [1, 0, 0, 0],
    }
)


def _unreadable(frame: pl.DataFrame) -> pl.LazyFrame:
    """A LazyFrame that raises when it is read: proves that a call did not read it."""

    def explode(_: pl.DataFrame) -> pl.DataFrame:
        raise RuntimeError("the input was read")

    return frame.lazy().map_batches(explode, schema=frame.schema)


@pytest.mark.parametrize("empty", ["skip", "error"])
def test_evaluate_lazy_reads_nothing_at_the_call(empty: str) -> None:
    result = prk.evaluate(_unreadable(LONG), ["mrr"], engine="memory", empty=empty)
    assert isinstance(result, pl.LazyFrame)
    assert result.collect_schema().names() == ["mrr", "n_users(mrr)", "n_users", "n_skipped"]
    with pytest.raises(Exception, match="the input was read"):
        result.collect()


def test_evaluate_lazy_checks_run_at_collect_with_the_eager_message() -> None:
    bad = pl.concat([LONG, LONG.head(1)])
    with pytest.raises(ValueError, match="rows share") as eager:
        prk.evaluate(bad, ["mrr"])
    result = prk.evaluate(bad.lazy(), ["mrr"], engine="memory")  # no error yet
    for collect in (result.collect, result.head(1).collect, result.select("mrr").collect):
        with pytest.raises(ValueError, match="rows share") as lazy:
            collect()
        assert str(lazy.value) == str(eager.value)
    negative = LONG.with_columns(relevance=pl.Series([1, -1, 0, 0]))
    per_user = prk.evaluate(negative.lazy(), ["mrr"], per_user=True, engine="memory")
    with pytest.raises(ValueError, match=r"relevance column 'relevance' has 1 negative value"):
        per_user.collect()


def test_evaluate_lazy_valid_input_gives_the_eager_result() -> None:
    # user 1: relevant item 1 at rank 1 -> mrr 1; user 2: no relevant item -> skipped.
    eager = prk.evaluate(LONG, ["mrr", "ndcg@2"])
    lazy = prk.evaluate(LONG.lazy(), ["mrr", "ndcg@2"], engine="memory").collect()
    assert lazy.equals(eager)
    assert lazy.row(0, named=True) == {
        "mrr": 1.0,
        "ndcg@2": 1.0,
        "n_users(mrr)": 1,  # user 2 is undefined for both
        "n_users(ndcg@2)": 1,
        "n_users": 2,
        "n_skipped": 1,
    }


def test_empty_error_is_checked_at_collect() -> None:
    result = prk.evaluate(LONG.lazy(), ["mrr"], empty="error", engine="memory")
    with pytest.raises(ValueError, match=r"metric 'mrr' is undefined for 1 user\(s\).*\[\(2,\)\]"):
        result.collect()
    with pytest.raises(ValueError, match=r"metric 'mrr' is undefined"):  # eager: at the call
        prk.evaluate(LONG, ["mrr"], empty="error")
    fine = prk.evaluate(LONG.filter(pl.col("user") == 1).lazy(), ["mrr"], empty="error")
    assert fine.collect()["mrr"].item() == 1.0


def test_cli_several_recs_files_refuse_a_system_column(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    paths, _ = _write_runs(tmp_path)
    with_system = tmp_path / "with_system.csv"
    RECS.with_columns(system=pl.lit("x")).write_csv(with_system)
    code, _, err = run(
        capsys,
        "--recs",
        paths[0],
        "--recs",
        str(with_system),
        "--truth",
        str(tmp_path / "truth.csv"),
    )
    assert code == 2
    assert "already has a 'system' column" in err
    # One file with its own system column is evaluated as before, with --by system.
    code, out, err = run(
        capsys,
        *["--recs", str(with_system), "--truth", str(tmp_path / "truth.csv"), "--by", "system"],
        *["--relevance", "grade", "-m", "mrr", "--format", "csv"],
    )
    assert code == 0, err
    assert out.splitlines()[1].startswith("x,")


def test_cli_compare_recs_and_truth_follow_the_id_rule(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    two = pl.concat(
        [
            RECS.with_columns(system=pl.lit("a")),
            RECS.with_columns(system=pl.lit("b"), score=-pl.col("score")),
        ]
    )
    two.write_parquet(tmp_path / "recs.parquet")
    TRUTH.rename({"grade": "relevance"}).write_parquet(tmp_path / "truth.parquet")
    argv = ["compare", "--recs", str(tmp_path / "recs.parquet"), "-m", "mrr", "--by", "system"]
    argv += ["--baseline", "a", "--test", "t"]
    code, out, err = run(capsys, *argv, "--truth", str(tmp_path / "truth.parquet"))
    assert code == 0, err
    assert out
    TRUTH.rename({"grade": "relevance"}).with_columns(pl.col("user").cast(pl.String)).write_parquet(
        tmp_path / "truth_text.parquet"
    )
    code, _, err = run(capsys, *argv, "--truth", str(tmp_path / "truth_text.parquet"))
    assert code == 2
    assert "column 'user' has dtype Int64 in recs but String in truth" in err


def test_a_warning_names_the_callers_line() -> None:
    """Through @validate_params and the helpers, the warning points at the user's call."""
    recs = pl.DataFrame({"user": [1], "item": [1], "score": [1.0]})
    truth = pl.DataFrame({"user": [1], "item": [2], "relevance": [1]})
    with pytest.warns(prk.OverlapWarning) as caught:
        prk.join(recs, truth)
    assert caught[0].filename == __file__
