"""The ``polars-rankeval`` command line: ``main(argv)`` directly, plus one real process."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

import polars_rankeval as prk
from polars_rankeval.api.datasets import load_example
from polars_rankeval.cli.app import main
from polars_rankeval.cli.evaluate import DEFAULT_METRICS


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def read_csv(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def assert_one_line_error(err: str, *needles: str) -> None:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("polars-rankeval: error: ")
    assert "Traceback" not in err
    for needle in needles:
        assert needle in lines[0]


# --------------------------------------------------------------------------- example
def test_default_run_prints_table(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys)
    assert code == 0
    for name in DEFAULT_METRICS:
        assert name in out
    assert "n_users" in out
    assert "0.3016" in out  # ndcg@10 of trec_eval's test run, 4 decimals
    assert len(err.strip().splitlines()) == 1
    assert "bundled example" in err


def test_evaluate_subcommand_is_the_default(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "--format", "csv")[1] == run(capsys, "evaluate", "--format", "csv")[1]


def test_csv_output_has_the_metric_column(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "-m", "ndcg@5", "--format", "csv")
    assert code == 0
    rows = read_csv(out)
    assert len(rows) == 1
    assert list(rows[0]) == ["ndcg@5", "n_users(ndcg@5)", "n_users", "n_skipped"]
    expected = prk.evaluate(load_example(), ["ndcg@5"])["ndcg@5"].item()
    assert float(rows[0]["ndcg@5"]) == pytest.approx(expected)
    assert rows[0]["n_users"] == "3"


def test_repeated_metrics_and_grammar(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        capsys, "-m", "ndcg(gain=exp)@10", "-m", "P@5", "-m", "map", "--format", "csv"
    )
    assert code == 0
    assert list(read_csv(out)[0])[:3] == ["ndcg(gain=exp)@10", "precision@5", "map"]


def test_per_user_prints_three_users(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--per-user")
    assert code == 0
    assert "shape: (3, 8)" in out
    user_rows = [line for line in out.splitlines() if line.startswith(("│ 30", "| 30"))]
    assert len(user_rows) == 3
    code, out, _ = run(capsys, "--per-user", "--format", "csv")
    assert [row["user"] for row in read_csv(out)] == ["301", "302", "303"]


def test_json_and_markdown(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "-m", "mrr@10", "--format", "json")
    assert code == 0
    assert json.loads(out)[0]["mrr@10"] == pytest.approx(7 / 18)
    code, out, _ = run(capsys, "-m", "mrr@10", "--per-user", "--format", "markdown")
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "| user | mrr@10 |"
    assert lines[1] == "| --- | ---: |"
    assert lines[2] == "| 301 | 0.1667 |"
    assert len(lines) == 5


def test_tie_policy_option(capsys: pytest.CaptureFixture[str]) -> None:
    values = {}
    for ties in ("expected", "optimistic", "pessimistic"):
        code, out, _ = run(capsys, "-m", "ndcg", "--ties", ties, "--format", "csv")
        assert code == 0
        values[ties] = float(read_csv(out)[0]["ndcg"])
    assert values["pessimistic"] <= values["expected"] <= values["optimistic"]


def test_metrics_subcommand(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "metrics")
    assert code == 0
    for name in prk.list_metrics()["name"]:
        assert name in out
    assert "ndcg" in out
    code, out, _ = run(capsys, "metrics", "--width", "250")
    assert "idcg=cut" in out
    code, out, _ = run(capsys, "metrics", "--format", "csv")
    names = [row["name"] for row in read_csv(out)]
    assert names == sorted(prk.list_metrics()["name"].to_list())


def test_help_and_version(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--help")
    assert code == 0
    assert "evaluate" in out
    assert "metrics" in out
    code, out, _ = run(capsys, "--version")
    assert code == 0
    assert prk.__version__ in out


# --------------------------------------------------------------------------- errors
def test_unknown_metric_is_a_one_line_error(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "-m", "ndcgg@10")
    assert code == 2
    assert out == ""
    assert_one_line_error(err, "unknown metric 'ndcgg@10'", "did you mean 'ndcg@10'?")


def test_bad_option_is_a_one_line_error(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "-m", "precision(rel=0)@5")
    assert code == 2
    assert_one_line_error(err, "'rel'")


def test_bad_choice_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "--ties", "random")
    assert code == 2
    assert "invalid choice" in err
    assert "Traceback" not in err


def test_missing_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = run(
        capsys, "--recs", str(tmp_path / "nope.parquet"), "--truth", str(tmp_path / "t.csv")
    )
    assert code == 2
    assert_one_line_error(err, "no such file", "nope.parquet")


def test_unknown_extension(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    recs = tmp_path / "recs.xlsx"
    recs.write_text("x")
    truth = tmp_path / "truth.csv"
    truth.write_text("user,item\n1,1\n")
    code, _, err = run(capsys, "--recs", str(recs), "--truth", str(truth))
    assert code == 2
    assert_one_line_error(err, "extension")


def test_recs_without_truth(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = run(capsys, "--recs", str(tmp_path / "recs.parquet"))
    assert code == 2
    assert_one_line_error(err, "--recs and --truth")


# --------------------------------------------------------------------------- files
RECS = pl.DataFrame(
    {
        "user": [1, 1, 1, 2, 2, 2],
        "item": [10, 11, 12, 10, 13, 14],
        "score": [0.9, 0.8, 0.7, 0.6, 0.5, 0.4],
    }
)
TRUTH = pl.DataFrame({"user": [1, 1, 2], "item": [11, 15, 14], "relevance": [1, 2, 1]})


def test_recs_and_truth_parquet(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    RECS.write_parquet(tmp_path / "recs.parquet")
    TRUTH.write_parquet(tmp_path / "truth.parquet")
    files = ["--recs", str(tmp_path / "recs.parquet"), "--truth", str(tmp_path / "truth.parquet")]
    code, out, err = run(capsys, *files, "-m", "mrr", "-m", "recall@3", "--format", "csv")
    assert code == 0
    assert err == ""
    row = read_csv(out)[0]
    # user 1: first hit at rank 2, 1 of 2 relevant in the top 3; user 2: rank 3, 1 of 1.
    assert float(row["mrr"]) == pytest.approx((1 / 2 + 1 / 3) / 2)
    assert float(row["recall@3"]) == pytest.approx((1 / 2 + 1) / 2)
    expected = prk.evaluate(prk.join(RECS, TRUTH), list(DEFAULT_METRICS))
    code, out, _ = run(capsys, *files, "--format", "json")
    assert code == 0
    got = json.loads(out)[0]
    for name in DEFAULT_METRICS:
        assert got[name] == pytest.approx(expected[name].item(), nan_ok=True)


def test_recs_and_truth_csv_other_columns(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    recs = RECS.rename({"user": "qid", "item": "doc", "score": "sim"})
    truth = TRUTH.rename({"user": "qid", "item": "doc"}).drop("relevance")
    recs.write_csv(tmp_path / "recs.tsv", separator="\t")
    # String ids in the truth, integer ids in the recs: join's rule refuses to compare
    # them as text unless asked (--id-type string), as prk.join does.
    truth.with_columns(pl.col("doc").cast(pl.String)).write_ndjson(tmp_path / "truth.ndjson")
    argv = [
        *["--recs", str(tmp_path / "recs.tsv"), "--truth", str(tmp_path / "truth.ndjson")],
        *["--user", "qid", "--item", "doc", "--score", "sim"],
        *["-m", "mrr", "--per-user", "--format", "csv"],
    ]
    code, _, err = run(capsys, *argv)
    assert code == 2
    assert_one_line_error(err, "column 'doc' has dtype Int64 in recs but String", "--id-type")
    code, out, _ = run(capsys, *argv, "--id-type", "string")
    assert code == 0
    assert [(r["qid"], float(r["mrr"])) for r in read_csv(out)] == [("1", 0.5), ("2", 1 / 3)]


def test_rank_column(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    recs = RECS.with_columns(pos=pl.col("score").rank(descending=True).over("user").cast(pl.Int64))
    recs.drop("score").write_csv(tmp_path / "recs.csv")
    TRUTH.write_csv(tmp_path / "truth.csv")
    code, out, _ = run(
        capsys,
        *["--recs", str(tmp_path / "recs.csv"), "--truth", str(tmp_path / "truth.csv")],
        *["--rank", "pos", "-m", "mrr", "--format", "csv"],
    )
    assert code == 0
    assert float(read_csv(out)[0]["mrr"]) == pytest.approx((1 / 2 + 1 / 3) / 2)


def test_by_two_systems(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    recs = pl.concat(
        [
            RECS.with_columns(system=pl.lit("a")),
            RECS.with_columns(system=pl.lit("b"), score=-pl.col("score")),
        ]
    )
    recs.write_parquet(tmp_path / "recs.parquet")
    TRUTH.write_csv(tmp_path / "truth.csv")
    code, out, _ = run(
        capsys,
        *["--recs", str(tmp_path / "recs.parquet"), "--truth", str(tmp_path / "truth.csv")],
        *["--by", "system", "-m", "mrr", "--format", "csv"],
    )
    assert code == 0
    rows = read_csv(out)
    assert [r["system"] for r in rows] == ["a", "b"]
    assert float(rows[1]["mrr"]) == pytest.approx((1 / 2 + 1) / 2)


def test_invalid_data_is_a_one_line_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    pl.concat([RECS, RECS.head(1)]).write_parquet(tmp_path / "recs.parquet")
    TRUTH.write_parquet(tmp_path / "truth.parquet")
    code, _, err = run(
        capsys, "--recs", str(tmp_path / "recs.parquet"), "--truth", str(tmp_path / "truth.parquet")
    )
    assert code == 2
    assert_one_line_error(err, "each (user, item) must appear once")


def test_missing_column_is_a_one_line_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    RECS.write_parquet(tmp_path / "recs.parquet")
    TRUTH.write_parquet(tmp_path / "truth.parquet")
    code, _, err = run(
        capsys,
        *["--recs", str(tmp_path / "recs.parquet"), "--truth", str(tmp_path / "truth.parquet")],
        *["--score", "prediction"],
    )
    assert code == 2
    assert_one_line_error(err, "'prediction'")


# --------------------------------------------------------------------------- process
def test_python_dash_m() -> None:
    ok = subprocess.run(
        [sys.executable, "-m", "polars_rankeval", "-m", "ndcg@10", "--format", "csv"],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert ok.returncode == 0, ok.stderr
    assert read_csv(ok.stdout)[0]["n_users"] == "3"
    assert "bundled example" in ok.stderr
    bad = subprocess.run(
        [sys.executable, "-m", "polars_rankeval", "-m", "ndcgg@10"],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert bad.returncode == 2
    assert "Traceback" not in bad.stderr
    assert_one_line_error(bad.stderr, "unknown metric")


# ----------------------------------------------------------- TREC input, --per-user FILE
def test_trec_files_as_input(capsys: pytest.CaptureFixture[str]) -> None:
    from polars_rankeval.api.datasets import example_paths

    qrels, run = example_paths()
    assert (
        main(
            [
                "--recs",
                str(run),
                "--recs-format",
                "trec-run",
                "--truth",
                str(qrels),
                "--truth-format",
                "trec-qrels",
                "-m",
                "P@10",
                "--ties",
                "item_desc",
                "--format",
                "csv",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "precision@10,n_users(precision@10),n_users,n_skipped"
    value, n_defined, n_users, n_skipped = out[1].split(",")
    assert float(value) == pytest.approx((0.2 + 0.7 + 0.0) / 3)  # trec_eval P_10 per query
    assert (n_defined, n_users, n_skipped) == ("3", "3", "0")


def test_trec_suffixes_pick_the_reader(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "x.run"
    qrels = tmp_path / "x.qrels"
    run.write_text("q1 Q0 a 1 0.9 t\nq1 Q0 b 2 0.5 t\n")
    qrels.write_text("q1 0 b 1\n")
    assert main(["--recs", str(run), "--truth", str(qrels), "-m", "mrr", "--format", "csv"]) == 0
    assert capsys.readouterr().out.splitlines()[1].startswith("0.5,1,1,0")


def test_per_user_file_is_written_and_means_printed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "per_user.csv"
    assert main(["-m", "ndcg@10", "--per-user", str(target), "--format", "csv"]) == 0
    summary = capsys.readouterr().out.splitlines()
    assert summary[0] == "ndcg@10,n_users(ndcg@10),n_users,n_skipped"
    per_user = pl.read_csv(target)
    assert per_user.columns == ["user", "ndcg@10"]
    assert per_user.height == 3
    assert float(summary[1].split(",")[0]) == pytest.approx(per_user["ndcg@10"].mean())
    assert not list(tmp_path.glob("*.partial"))


def test_per_user_file_with_unknown_extension_fails_cleanly(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--per-user", str(tmp_path / "out.xlsx")]) == 2
    assert "use a .csv, .tsv, .parquet, .json or .ndjson file" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())


def test_progress_only_on_a_terminal(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["-m", "mrr", "--format", "csv"]) == 0
    assert "metric(s)" not in capsys.readouterr().err  # not a terminal: silent
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True, raising=False)
    assert main(["-m", "mrr", "--format", "csv"]) == 0
    assert "evaluating 1 metric(s)" in capsys.readouterr().err


# --------------------------------------------------------------------------- scale
def test_long_parquet_bucketed_with_aggregations(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    data = tmp_path / "long.parquet"
    load_example().write_parquet(data)
    args = ["-m", "map", "--format", "csv", "--data", str(data)]
    code, plain, _ = run(capsys, *args)
    assert code == 0
    code, out, _ = run(
        capsys,
        *args,
        "--strategy",
        "partition",
        "--buckets",
        "3",
        "--temp-dir",
        str(tmp_path),
        "--aggregate",
        "mean",
        "--aggregate",
        "gmean",
        "--memory-limit",
        "1GB",
    )
    assert code == 0
    row, base = read_csv(out)[0], read_csv(plain)[0]
    assert list(row) == ["map", "gmean(map)", "n_users(map)", "n_users", "n_skipped"]
    assert float(row["map"]) == pytest.approx(float(base["map"]), rel=1e-12)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["long.parquet"]  # temp files gone


def test_data_and_recs_are_exclusive(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    data = tmp_path / "long.parquet"
    load_example().write_parquet(data)
    code, _, err = run(capsys, "--data", str(data), "--recs", str(data), "--truth", str(data))
    assert code == 2
    assert_one_line_error(err, "--data cannot be combined")


def test_bad_memory_limit_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "--memory-limit", "lots")
    assert code == 2
    assert_one_line_error(err.split("\n", 1)[1], "cannot read memory_limit 'lots'")


def test_markdown_output_escapes_names() -> None:
    from polars_rankeval.cli.output import to_markdown

    # An _ between letters (b_c, n_users) cannot start emphasis and stays; _d_ is escaped.
    frame = pl.DataFrame({"sys|tem": ["a*b_c _d_", "x\ny|z"], "ndcg@10": [0.5, 0.25]})
    assert to_markdown(frame).splitlines() == [
        r"| sys\|tem | ndcg@10 |",
        "| --- | ---: |",
        r"| a\*b_c \_d\_ | 0.5000 |",
        r"| x y\|z | 0.2500 |",
    ]


def test_evaluate_ci_prints_each_means_interval(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    data = tmp_path / "long.parquet"
    load_example().write_parquet(data)
    args = ["-m", "map", "--format", "csv", "--data", str(data)]
    code, out, _ = run(capsys, *args, "--ci", "t", "--confidence", "0.9")
    assert code == 0
    row = read_csv(out)[0]
    assert list(row) == [
        "map", "se(map)", "ci_low(map)", "ci_high(map)", "n_users(map)", "n_users", "n_skipped"
    ]  # fmt: skip
    expected = prk.evaluate(load_example(), "map", ci="t", confidence=0.9).row(0, named=True)
    for column, value in row.items():
        assert float(value) == pytest.approx(expected[column], rel=1e-9)
    # With --per-user FILE the means (and their intervals) come from the per-user values.
    code, again, _ = run(
        capsys, *args, "--ci", "t", "--confidence", "0.9", "--per-user", str(tmp_path / "u.csv")
    )
    assert code == 0
    # The same values up to the last bits of threaded float sums.
    (first,), (second,) = read_csv(out), read_csv(again)
    assert list(second) == list(first)
    for column, value in first.items():
        assert float(second[column]) == pytest.approx(float(value), rel=1e-12), column
    code, _, err = run(capsys, *args, "--ci", "t", "--per-user")
    assert code == 2
    assert_one_line_error(err, "--ci t gives intervals of the means")
    code, _, err = run(capsys, *args, "--ci", "normal")
    assert code == 2
