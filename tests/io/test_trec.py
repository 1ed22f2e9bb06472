"""TREC run and qrels files: reading, writing, and clear errors for malformed lines."""

from __future__ import annotations

import re
from decimal import Decimal
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import polars_rankeval as prk
import polars_rankeval.io.trec as trec

DATA = Path(__file__).parents[1] / "data"


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


# --------------------------------------------------------------------------- writing exactly
def _three(scores: pl.Series) -> pl.DataFrame:
    items = ["a", "b", "c"][: len(scores)]
    return pl.DataFrame({"user": ["q"] * len(scores), "item": items, "score": scores})


@pytest.mark.parametrize(
    ("scores", "shown"),
    [
        (pl.Series([2**60 + 1, 2**60]), r"1152921504606846977 and 1152921504606846976"),
        (
            pl.Series([Decimal("1.00000000000000000001"), Decimal("1")]),
            r"1\.00000000000000000001 and 1\.00000000000000000000",
        ),
        (pl.Series([2**64 - 1, 2**64 - 2], dtype=pl.UInt64), "18446744073709551615 and "),
    ],
)
def test_write_run_refuses_distinct_scores_that_read_back_as_a_tie(
    tmp_path: Path, scores: pl.Series, shown: str
) -> None:
    # In memory 'a' is ranked first (mrr 1.0 with 'a' relevant). A TREC file's scores are
    # read as 64-bit floats (read_run, trec_eval's atof), where these two are equal, so
    # the file would rank 'b' first (docno descending) and read back a different ranking.
    path = tmp_path / "run"
    with pytest.raises(ValueError, match=rf"scores {shown}.* of user 'q' .*same 64-bit float"):
        trec.write_run(_three(scores), path)
    assert not path.exists()


def test_write_run_distinct_scores_in_different_users_are_not_a_tie(tmp_path: Path) -> None:
    frame = pl.DataFrame({"user": ["q", "r"], "item": ["a", "a"], "score": [2**60 + 1, 2**60]})
    trec.write_run(frame, tmp_path / "run")
    assert trec.read_run(tmp_path / "run").height == 2


@pytest.mark.parametrize(
    ("scores", "written"),
    [
        (pl.Series([2**53, 2**53 - 1, -3]), ["9007199254740992", "9007199254740991", "-3"]),
        (pl.Series([2**60 + 512, 2**60, 7]), ["1152921504606847488", "1152921504606846976", "7"]),
        (
            pl.Series([Decimal("1.25"), Decimal("0.10"), Decimal("-2")]),
            ["1.25", "0.10", "-2.00"],
        ),
        (pl.Series([0.1, 1 / 3, 5e-324]), ["0.3333333333333333", "0.1", "5e-324"]),
        (pl.Series([0.1, 0.2, 0.3], dtype=pl.Float32), None),
    ],
)
def test_write_run_writes_exact_scores_that_read_back_to_the_same_ranking(
    tmp_path: Path, scores: pl.Series, written: list[str] | None
) -> None:
    frame = _three(scores)
    path = tmp_path / "run"
    trec.write_run(frame, path)
    fields = [line.split() for line in path.read_text().splitlines()]
    if written is not None:
        assert [f[4] for f in fields] == written
    back = trec.read_run(path)
    # every score reads back as the float64 it is in memory: the same order, the same values
    expected = frame.select("item", pl.col("score").cast(pl.Float64)).sort("item")
    assert_frame_equal(back.select("item", "score").sort("item"), expected)
    for relevant in ("a", "b", "c"):
        qrels = pl.DataFrame({"user": ["q"], "item": [relevant], "relevance": [1]})
        metrics = ["mrr", "ndcg@3", "map"]
        in_memory = prk.evaluate(prk.join(frame, qrels), metrics, ties="item_desc")
        from_file = prk.evaluate(
            prk.join(back.select("user", "item", "score"), qrels), metrics, ties="item_desc"
        )
        assert_frame_equal(from_file, in_memory)


@pytest.mark.parametrize(
    "scores", [pl.Series(["1", "2"]), pl.Series([True, False]), pl.Series([[1], [2]])]
)
def test_write_run_refuses_a_score_column_that_is_not_numeric(
    tmp_path: Path, scores: pl.Series
) -> None:
    with pytest.raises(TypeError, match=r"score column 'score' must be numeric"):
        trec.write_run(_three(scores), tmp_path / "run")


@pytest.mark.parametrize(
    ("relevance", "shown"),
    [
        (pl.Series([0.5, 1.0]), "0.5"),
        (pl.Series([2.0, 1.7]), "1.7"),
        (pl.Series([1.0, float("nan")]), "nan"),
        (pl.Series([Decimal("1.5"), Decimal("2")]), "Decimal('1.5')"),
        (pl.Series([1e30, 1.0]), "1e+30"),
    ],
)
def test_write_qrels_refuses_relevance_that_is_not_an_integer(
    tmp_path: Path, relevance: pl.Series, shown: str
) -> None:
    # trec_eval reads a relevance with atol: 0.5 would become 0, 1.7 would become 1
    frame = pl.DataFrame({"user": ["q", "q"], "item": ["a", "b"]}).with_columns(
        relevance.alias("relevance")
    )
    path = tmp_path / "qrels"
    expected = rf"relevance {re.escape(shown)} in row \d \(user 'q', item '[ab]'\) is not a 64-bit"
    with pytest.raises(ValueError, match=expected):
        trec.write_qrels(frame, path)
    assert not path.exists()


@pytest.mark.parametrize(
    "relevance",
    [
        pl.Series([2.0, 0.0, -1.0]),
        pl.Series([Decimal("2.00"), Decimal("0"), Decimal("-1")]),
        pl.Series([2, 0, -1], dtype=pl.Int8),
    ],
)
def test_write_qrels_writes_integral_relevance_as_integers(
    tmp_path: Path, relevance: pl.Series
) -> None:
    frame = pl.DataFrame({"user": ["q"] * 3, "item": ["a", "b", "c"]}).with_columns(
        relevance.alias("relevance")
    )
    trec.write_qrels(frame, tmp_path / "qrels")
    assert (tmp_path / "qrels").read_text() == "q 0 a 2\nq 0 b 0\nq 0 c -1\n"


def test_write_qrels_writes_booleans_as_one_and_zero(tmp_path: Path) -> None:
    frame = pl.DataFrame({"user": ["q", "q"], "item": ["a", "b"], "relevance": [True, False]})
    trec.write_qrels(frame, tmp_path / "qrels")
    assert (tmp_path / "qrels").read_text() == "q 0 a 1\nq 0 b 0\n"


def test_write_qrels_refuses_a_relevance_column_that_is_not_numeric(tmp_path: Path) -> None:
    frame = pl.DataFrame({"user": ["q"], "item": ["a"], "relevance": ["1"]})
    with pytest.raises(TypeError, match=r"relevance column 'relevance' must be numeric"):
        trec.write_qrels(frame, tmp_path / "qrels")


# --------------------------------------------------------------------------- ids that read back
_BAD_IDS = [
    ("user", "q 1", r"contains white space"),
    ("item", "d\t1", r"contains white space"),
    ("item", "d\u00a01", r"contains white space"),
    ("user", "q\n", r"contains white space"),
    ("user", None, r"is null"),
    ("item", None, r"is null"),
    ("user", "", r"is empty"),
    ("item", "", r"is empty"),
    ("item", "d\x001", r"contains a NUL character"),
    ("user", "#q", r"starts with '#'"),
    ("user", "\ufeffq", r"starts with a byte order mark"),
]


@pytest.mark.parametrize(("column", "value", "problem"), _BAD_IDS)
@pytest.mark.parametrize("writer", ["run", "qrels"])
def test_writers_refuse_ids_that_do_not_read_back(
    tmp_path: Path, writer: str, column: str, value: str | None, problem: str
) -> None:
    frame = pl.DataFrame(
        {"user": ["q", "q"], "item": ["a", "b"], "score": [2.0, 1.0], "relevance": [1, 0]}
    ).with_columns(
        pl.when(pl.int_range(pl.len()) == 1)
        .then(pl.lit(value, dtype=pl.String))
        .otherwise(pl.col(column))
        .alias(column)
    )
    path = tmp_path / writer
    write = trec.write_run if writer == "run" else trec.write_qrels
    expected = rf"{column} id {re.escape(repr(value))} in row 1 {problem}"
    with pytest.raises(ValueError, match=expected):
        write(frame, path)
    assert not path.exists()


def test_a_user_id_starting_with_hash_is_refused_only_in_the_first_field(tmp_path: Path) -> None:
    frame = pl.DataFrame({"user": ["q"], "item": ["#d"], "score": [1.0], "relevance": [1]})
    trec.write_run(frame, tmp_path / "run")
    trec.write_qrels(frame, tmp_path / "qrels")
    assert trec.read_trec_eval_run(tmp_path / "run")[0]["docno"].to_list() == ["#d"]
    assert trec.read_trec_eval_qrels(tmp_path / "qrels")["docno"].to_list() == ["#d"]


def test_rows_left_out_are_not_checked(tmp_path: Path) -> None:
    # a row with a null score (run) or a null relevance (qrels) is not written
    frame = pl.DataFrame(
        {"user": ["q", "q x"], "item": ["a", "b"], "score": [1.0, None], "relevance": [1, None]}
    )
    trec.write_run(frame, tmp_path / "run")
    trec.write_qrels(frame, tmp_path / "qrels")
    assert (tmp_path / "qrels").read_text() == "q 0 a 1\n"


@pytest.mark.parametrize(
    ("tag", "error", "message"),
    [
        ("my run", ValueError, r"tag 'my run' contains white space"),
        ("", ValueError, r"tag '' is empty"),
        ("a\tb", ValueError, r"tag 'a\\tb' contains white space"),
        ("#x\x00", ValueError, r"contains a NUL character"),
        (None, TypeError, r"argument 'tag' of write_run must be a run tag \(str\), got None"),
    ],
)
def test_write_run_refuses_a_tag_that_does_not_read_back(
    tmp_path: Path, tag: object, error: type[Exception], message: str
) -> None:
    frame = pl.DataFrame({"user": ["q"], "item": ["a"], "score": [1.0]})
    with pytest.raises(error, match=message):
        trec.write_run(frame, tmp_path / "run", tag=tag)  # type: ignore[arg-type]
    assert not (tmp_path / "run").exists()


# --------------------------------------------------------------------------- byte order mark
_BOM = b"\xef\xbb\xbf"


@pytest.mark.parametrize(
    "body",
    [b"q1 Q0 d1 1 2.5 t\nq2 Q0 d1 1 1.5 t\n", b"q1  Q0 d1 1 2.5 t\nq2\tQ0 d1 1 1.5 t\n"],
    ids=["fast path", "general path"],
)
@pytest.mark.parametrize("as_bytes", [False, True], ids=["file", "stdin"])
def test_trec_eval_readers_keep_a_byte_order_mark_in_the_first_query_id(
    tmp_path: Path, body: bytes, as_bytes: bool
) -> None:
    # trec_eval reads bytes: the BOM is not white space, so it starts the first qid
    qrels = _BOM + body.replace(b" Q0 d1 1 2.5 t", b" 0 d1 1").replace(b"Q0 d1 1 1.5 t", b"0 d1 1")
    (tmp_path / "run").write_bytes(_BOM + body)
    (tmp_path / "qrels").write_bytes(qrels)
    run_source = (tmp_path / "run").read_bytes() if as_bytes else tmp_path / "run"
    qrels_source = (tmp_path / "qrels").read_bytes() if as_bytes else tmp_path / "qrels"
    assert trec.read_trec_eval_run(run_source)[0]["qid"].to_list() == ["\ufeffq1", "q2"]
    assert trec.read_trec_eval_qrels(qrels_source)["qid"].to_list() == ["\ufeffq1", "q2"]


def test_trec_eval_command_prints_the_byte_order_mark_of_the_first_query(
    tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    from polars_rankeval.trec_eval.command import command_line

    (tmp_path / "run").write_bytes(_BOM + b"q1 Q0 d1 1 2.5 t\nq2 Q0 d1 1 1.5 t\n")
    (tmp_path / "qrels").write_bytes(b"q1 0 d1 1\nq2 0 d1 1\n")
    # the run's first query is '\ufeffq1', not the qrels' 'q1': only q2 is evaluated
    code = command_line(["-q", "-m", "num_ret", str(tmp_path / "qrels"), str(tmp_path / "run")])
    assert code == 0
    assert capsysbinary.readouterr().out.splitlines() == [
        b"num_ret               \tq2\t1",
        b"num_ret               \tall\t1",
    ]
    (tmp_path / "qrels").write_bytes(_BOM + b"q1 0 d1 1\nq2 0 d1 1\n")
    command_line(["-q", "-m", "num_ret", str(tmp_path / "qrels"), str(tmp_path / "run")])
    # trec_eval orders queries by strcmp: the BOM's first byte 0xEF sorts after 'q'
    assert capsysbinary.readouterr().out.splitlines() == [
        b"num_ret               \tq2\t1",
        b"num_ret               \t" + _BOM + b"q1\t1",
        b"num_ret               \tall\t2",
    ]


def test_python_readers_drop_a_byte_order_mark(tmp_path: Path) -> None:
    # read_run/scan_run (and the qrels readers) read text: a leading BOM is an encoding
    # mark, not part of the first query id (trec-eval, the drop-in, keeps it)
    (tmp_path / "run").write_bytes(_BOM + b"q1 Q0 d1 1 2.5 t\nq2  Q0 d1 1 1.5 t\n")
    assert trec.read_run(tmp_path / "run")["user"].to_list() == ["q1", "q2"]
    assert trec.scan_run(tmp_path / "run").collect()["user"].to_list() == ["q1", "q2"]
    (tmp_path / "qrels").write_bytes(_BOM + b"q1 0 d1 1\n")
    assert trec.read_qrels(tmp_path / "qrels")["user"].to_list() == ["q1"]


@pytest.mark.parametrize(
    "text",
    [
        "q\u00a0x Q0 d1 1 2.5 t\nq\u00a0x Q0 d2 2 1.5 t\n",  # one space: the CSV reader
        "q\u00a0x\tQ0 d1 1 2.5 t\nq\u00a0x Q0 d2 2 1.5 t\n",  # mixed: the general reader
    ],
)
def test_fields_are_separated_by_ascii_white_space_only(tmp_path: Path, text: str) -> None:
    # as trec_eval (C's isspace): a no-break space is part of an id, on every path
    path = tmp_path / "run"
    path.write_text(text)
    assert trec.read_run(path)["user"].to_list() == ["q\u00a0x"] * 2
    assert trec.scan_run(path).collect()["user"].to_list() == ["q\u00a0x"] * 2
    assert trec.read_trec_eval_run(path)[0]["qid"].to_list() == ["q\u00a0x"] * 2


def test_write_run_refuses_a_document_twice_in_one_query(tmp_path: Path) -> None:
    # trec_eval refuses such a run ("duplicate docs", status 4); in one query only
    frame = pl.DataFrame(
        {"user": ["q", "r", "q", "q"], "item": ["a", "a", "b", "a"], "score": [3.0, 2, 1, 0]}
    )
    with pytest.raises(ValueError, match=r"item 'a' of user 'q' is in rows 0 and 3"):
        trec.write_run(frame, tmp_path / "run")
    assert not (tmp_path / "run").exists()
