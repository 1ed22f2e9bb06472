"""TREC run and qrels files: reading, writing, and clear errors for malformed lines."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import polars_rankeval as prk
from polars_rankeval import trec

DATA = Path(__file__).parent / "data"


def test_scan_the_conformance_files() -> None:
    run = trec.scan_run(DATA / "results.test").collect()
    qrels = trec.scan_qrels(DATA / "qrels.test").collect()
    assert run.height == 1500
    assert qrels.height == 3681
    assert run.schema == pl.Schema(
        {
            "user": pl.String,
            "q0": pl.String,
            "item": pl.String,
            "rank": pl.Int64,
            "score": pl.Float64,
            "tag": pl.String,
        }
    )
    assert sorted(run["user"].unique().to_list()) == ["301", "302", "303"]
    assert qrels["relevance"].min() >= 0


def test_white_space_tabs_and_blank_lines(tmp_path: Path) -> None:
    path = tmp_path / "run.txt"
    path.write_text("1 Q0 d1 1 2.5 tag\n\n  1\tQ0   d2 2  1e-3\ttag  \n")
    run = trec.scan_run(path).collect()
    assert run.select("user", "item", "rank", "score").rows() == [
        ("1", "d1", 1, 2.5),
        ("1", "d2", 2, 0.001),
    ]


@pytest.mark.parametrize(
    ("text", "line", "kind"),
    [
        ("1 Q0 d1 1 2.5 t\n1 Q0 d2 2 t\n", 2, "run"),
        ("1 Q0 d1 1 2.5 t\n\n1 Q0 d2 2 abc t\n", 3, "run"),
        ("1 Q0 d1 x 2.5 t\n", 1, "run"),
        ("1 0 d1 1\n1 0 d2 1 extra\n", 2, "qrels"),
        ("1 0 d1 1\n1 0 d2 high\n", 2, "qrels"),
    ],
)
def test_malformed_lines_name_the_file_and_line(
    tmp_path: Path, text: str, line: int, kind: str
) -> None:
    path = tmp_path / f"{kind}.txt"
    path.write_text(text)
    scan = trec.scan_run if kind == "run" else trec.scan_qrels
    with pytest.raises(ValueError, match=rf"{kind}\.txt:{line}: malformed line"):
        scan(path)


def test_scan_without_validation_is_lazy(tmp_path: Path) -> None:
    path = tmp_path / "run.txt"
    path.write_text("1 Q0 d1 1 2.5 t\n")
    lf = trec.scan_run(path, validate=False)
    assert isinstance(lf, pl.LazyFrame)
    path.write_text("2 Q0 d9 1 0.5 t\n")  # read at collect time, not before
    assert lf.collect()["user"].to_list() == ["2"]


def test_write_and_read_back(tmp_path: Path) -> None:
    long = prk.load_example()
    run_path, qrels_path = tmp_path / "run", tmp_path / "qrels"
    trec.write_run(long, run_path, tag="mine")
    trec.write_qrels(long, qrels_path)
    back = prk.join(
        trec.scan_run(run_path).select("user", "item", "score"), trec.scan_qrels(qrels_path)
    )
    assert isinstance(back, pl.LazyFrame)
    assert_frame_equal(
        back.collect().sort("user", "item"), long.sort("user", "item"), check_dtypes=False
    )
    ranks = trec.scan_run(run_path).collect()
    # Ranks follow trec_eval's order: score descending, then docno descending.
    first = ranks.filter(pl.col("user") == "301").sort("rank").head(3)
    assert first["rank"].to_list() == [1, 2, 3]
    assert first["score"].is_sorted(descending=True)
    assert set(ranks["tag"]) == {"mine"}


def test_rank_column_is_not_used_for_ordering(tmp_path: Path) -> None:
    # The run's rank column disagrees with its scores; trec_eval (and we) use scores.
    path = tmp_path / "run.txt"
    path.write_text("q Q0 a 1 0.1 t\nq Q0 b 2 0.9 t\n")
    qrels = pl.DataFrame({"user": ["q"], "item": ["b"], "relevance": [1]})
    long = prk.join(trec.scan_run(path).select("user", "item", "score"), qrels.lazy())
    assert prk.evaluate(long, ["mrr"], ties="item_desc").collect()["mrr"].item() == 1.0


@pytest.mark.parametrize(
    "text",
    [
        "1 Q0 d1 1 2.5 tag\n1 Q0 d2 2 0.5 tag\n",  # one space: the CSV reader's fast path
        "1\tQ0\td1\t1\t2.5\ttag\n1\tQ0\td2\t2\t0.5\ttag\n",  # tabs
        "1  Q0 d1\t1   2.5 tag\n1 Q0 d2 2 0.5 tag  \n",  # runs of white space: general path
    ],
)
def test_read_run_parses_once_and_equals_the_scan(tmp_path: Path, text: str) -> None:
    path = tmp_path / "run.txt"
    path.write_text(text)
    assert_frame_equal(trec.read_run(path), trec.scan_run(path).collect())


def test_read_equals_scan_on_the_conformance_files() -> None:
    assert_frame_equal(
        trec.read_run(DATA / "results.test"), trec.scan_run(DATA / "results.test").collect()
    )
    assert_frame_equal(
        trec.read_qrels(DATA / "qrels.test"), trec.scan_qrels(DATA / "qrels.test").collect()
    )


def test_read_run_reports_malformed_lines(tmp_path: Path) -> None:
    path = tmp_path / "run.txt"
    path.write_text("1 Q0 d1 1 2.5 t\n1 Q0 d2 2 x t\n")
    with pytest.raises(ValueError, match=r"run\.txt:2: malformed line '1 Q0 d2 2 x t'"):
        trec.read_run(path)
