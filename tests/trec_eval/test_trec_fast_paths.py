"""The fast paths of the trec_eval reader and ranking: string codes, the clean-file check,
reads of running values at cutoffs and G's running cost.

String codes are Enum casts (exact); the tests with every hash colliding check that no
code depends on a hash. The clean-file reader must turn down every file it cannot read
as trec_eval does; G has a closed form for integer gains and C's sum otherwise.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest

from polars_rankeval.io.trec.bytewise import _fast_fields, read_trec_eval_qrels, read_trec_eval_run
from polars_rankeval.trec_eval.errors import TrecEvalError
from polars_rankeval.trec_eval.output import format_doubles, format_trec
from polars_rankeval.trec_eval.program import trec_eval
from polars_rankeval.trec_eval.ranking import (
    _in_trec_order,
    _judged_codes,
    _score_ranks,
    docno_codes,
    rank_keys,
    run_order,
    string_codes,
    value_after,
    values_after,
)

DOCNOS = pl.Series(["d3", "d1", "d2", "d1", "a", "d3"])


def _collide(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every string hashes to 7: every lookup by hash collides."""

    def series_hash(self: pl.Series, *args: object, **kwargs: object) -> pl.Series:
        return pl.Series([7] * self.len(), dtype=pl.UInt64)

    def expr_hash(self: pl.Expr, *args: object, **kwargs: object) -> pl.Expr:
        return (self.is_null() & False).cast(pl.UInt64) + 7

    monkeypatch.setattr(pl.Series, "hash", series_hash)
    monkeypatch.setattr(pl.Expr, "hash", expr_hash)


@pytest.mark.parametrize("collide", [False, True])
def test_docno_codes_are_byte_order_ranks(monkeypatch: pytest.MonkeyPatch, collide: bool) -> None:
    if collide:
        _collide(monkeypatch)
    docnos, codes = docno_codes(DOCNOS)
    # distinct in byte order: a, d1, d2, d3 -> codes 0, 1, 2, 3
    assert docnos["docno"].to_list() == ["a", "d1", "d2", "d3"]
    assert codes.to_list() == [3, 1, 2, 1, 0, 3]
    qrels = pl.DataFrame({"qid": [0, 0, 1], "docno": ["d2", "zz", "a"], "rel": [1, 2, 0]})
    judged = _judged_codes(qrels, docnos)
    # "zz" is not in the run: dropped even when its hash equals a run docno's
    assert sorted(judged.select("docno", "__dc").rows()) == [("a", 0), ("d2", 2)]


@pytest.mark.parametrize("collide", [False, True])
def test_string_codes(monkeypatch: pytest.MonkeyPatch, collide: bool) -> None:
    if collide:
        _collide(monkeypatch)
    keys = pl.Series(["q1", "q2", "q3"])
    values = pl.Series(["q3", "q9", "q1", "q3"])
    # q3 is key 2, q9 is no key (null), q1 is key 0
    assert string_codes(values, keys).to_list() == [2, None, 0, 2]


@pytest.mark.parametrize(
    "data",
    [
        b"a b c d e\n",  # a field too many
        b"a b c\n",  # a field too few
        b"a b c d\nx y\n",  # a later line too short
        b"a b c d\nx y z w v\n",  # a later line too long
        b"a b c d\n\n",  # a blank line
        b"#a b c d\n",  # a comment
        b"a b c d \n",  # trailing white space
        b" a b c d\n",  # leading white space
        b"a  b c d\n",  # an empty field
        b"a\tb c d\n",  # a tab inside a field
    ],
)
def test_clean_reader_turns_down_unusual_files(data: bytes) -> None:
    assert _fast_fields(data, 4, (0, 2, 3)) is None


def test_clean_reader_keeps_the_asked_fields() -> None:
    frame = _fast_fields(b"a b c d\nx y z w", 4, (0, 2, 3))
    assert frame is not None
    assert frame.rows() == [("a", "c", "d"), ("x", "z", "w")]


def test_unusual_files_read_as_trec_eval_reads_them() -> None:
    # the general reader takes over: extra run fields ignored, white space collapsed
    frame, runid = read_trec_eval_run(b"q1  Q0 d1 1 0.5 tagA extra\nq1 Q0 d2 2 0.25 tagB\n")
    assert frame.rows() == [("q1", "d1", 0.5), ("q1", "d2", 0.25)]
    assert runid == "tagB"
    assert read_trec_eval_qrels(b"q1 0 d1 1\n q1 0 d2 2 \n").rows() == [
        ("q1", "d1", 1),
        ("q1", "d2", 2),
    ]


@pytest.mark.parametrize(
    "data",
    [
        b"q2 Q0 d1 1 0.5 t\nq1 Q0 d2 2 0.25 t\nq2 Q0 d2 3 0.1 u\n",  # the clean reader
        b"q2\tQ0 d1 1 0.5 t\nq1 Q0 d2 2 0.25 t\nq2 Q0 d2 3 0.1 u\n",  # a tab
        b"# c\nq2 Q0 d1 1 0.5 t\n q1 Q0 d2 2 0.25 t\nq2 Q0 d2 3 0.1 u\n",  # the general one
        b"#x Q0 d1 1 0.5 t\nq2 Q0 d1 1 0.5 t\nq1 Q0 d2 2 0.25 t\nq2 Q0 d2 3 0.1 u\n",
    ],
)
def test_run_read_as_categorical(data: bytes) -> None:
    # the same rows as String; each column has categories of its own holding its values
    frame, runid = read_trec_eval_run(data, categorical=True)
    plain, plain_runid = read_trec_eval_run(data)
    assert runid == plain_runid == "u"
    assert all(isinstance(frame[c].dtype, pl.Categorical) for c in ("qid", "docno"))
    assert frame.cast({"qid": pl.String, "docno": pl.String}).equals(plain)
    qid_categories = frame["qid"].dtype.categories  # type: ignore[attr-defined]
    assert qid_categories != frame["docno"].dtype.categories  # type: ignore[attr-defined]
    assert sorted(qid_categories.to_series().to_list()) == ["q1", "q2"]
    # codes read off the categories are the String lookups
    keys = pl.Series(["q2", "q1"])
    assert string_codes(frame["qid"], keys).to_list() == [0, 1, 0]
    docnos, codes = docno_codes(frame["docno"])
    assert docnos["docno"].to_list() == ["d1", "d2"]
    assert codes.to_list() == docno_codes(plain["docno"])[1].to_list() == [0, 1, 1]


def test_judgments_beyond_int32() -> None:
    # the ranked lists' judgments are Int32 when they fit, else Int64: same values
    run = b"q1 Q0 d1 1 0.5 t\nq1 Q0 d2 2 0.4 t\nq1 Q0 d3 3 0.3 t\nq1 Q0 d4 4 0.3 t\n"
    big = trec_eval(b"q1 0 d1 3000000000\nq1 0 d2 1\nq1 0 d3 -5\n", run, ["map", "P.5"])
    small = trec_eval(b"q1 0 d1 3\nq1 0 d2 1\nq1 0 d3 -5\n", run, ["map", "P.5"])
    assert format_trec(big) == format_trec(small)
    # a gain map naming a level beyond Int32 while every judgment fits in it: that
    # level matches no judgment, the rest of the map applies as without it
    # (d1 judged 1 ranks above d2 judged 2: ndcg = (1 + 9 / log2 3) / (9 + 1 / log2 3))
    qrels = b"q1 0 d1 1\nq1 0 d2 2\n"
    wide = trec_eval(qrels, run, ["ndcg.3000000000=5,2=9"])["text"].to_list()
    narrow = trec_eval(qrels, run, ["ndcg.2=9"])["text"].to_list()
    plain = trec_eval(qrels, run, ["ndcg"])["text"].to_list()
    log3 = math.log2(3)
    assert wide == narrow == [f"{(1 + 9 / log3) / (9 + 1 / log3):.4f}"] != plain


def test_value_after_reads_the_last_row_before_each_cutoff() -> None:
    # a subset of two rankings: query 0 has rows at ranks 1 and 4, query 2 at rank 0;
    # query 1 has none (its value after any rank is 0)
    frame = pl.DataFrame(
        {"qid": [0, 0, 2], "i": [1, 4, 0], "x": [10.0, 30.0, 7.0]},
        schema={"qid": pl.UInt32, "i": pl.Int64, "x": pl.Float64},
    )
    keys = rank_keys(frame)
    qid = pl.Series([0, 0, 0, 0, 1, 2, 2], dtype=pl.UInt32)
    k = pl.Series([0, 1, 2, 5, 3, 1, 9])
    got = value_after(frame, keys, "x", qid, k).to_list()
    # k=0: no rank read (null); after 1 rank (rank 0): no row yet -> 0; after 2 ranks
    # (ranks 0-1): the row at rank 1 -> 10; after 5: rank 4's row -> 30; query 1: 0;
    # query 2 after 1 rank: 7, after 9: still 7
    assert got == [None, 0.0, 10.0, 30.0, 0.0, 7.0, 7.0]


G_QRELS = b"q1 0 d1 1\nq1 0 d2 2\n"


def _g(run: bytes, measure: str) -> float:
    out = trec_eval(G_QRELS, run, [measure], summary=False, per_query=True)
    return out.filter(pl.col("query") == "q1")["value"].item()


def test_g_integer_gains_past_the_ideal_list() -> None:
    # ranking d3 d4 (unjudged), d1 (gain 1), d2 (gain 2); ideal gains 2, 1 (L = 2).
    # cost per rank: max(ideal gain, 1) = 2, 1, then 1, 1 past the ideal list:
    # running cost 2, 3, 4, 5; running gain 0, 0, 1, 3.
    # rank 2: 1 / log2(2 + 4 - 1) = 1 / log2(5); rank 3: 2 / log2(2 + 5 - 3) = 2 / 2
    run = b"q1 Q0 d3 1 4 t\nq1 Q0 d4 2 3 t\nq1 Q0 d1 3 2 t\nq1 Q0 d2 4 1 t\n"
    assert _g(run, "G") == (1 / math.log2(5) + 2 / 2) / (2 + 1)


def test_g_fractional_gains_sum_over_every_rank() -> None:
    # gains 1.5 (d1) and 3 (d2): not integers, so the running cost is C's sum over
    # every rank. Ranking d1, d3 (unjudged), d2; ideal gains 3, 1.5.
    # cost 3, 1.5, 1 -> running 3, 4.5, 5.5; running gain 1.5, 1.5, 4.5.
    # rank 0: 1.5 / log2(2 + 3 - 1.5); rank 2: 3 / log2(2 + 5.5 - 4.5); ideal sum 4.5
    run = b"q1 Q0 d1 1 3 t\nq1 Q0 d3 2 2 t\nq1 Q0 d2 3 1 t\n"
    expected = (1.5 / math.log2(3.5) + 3 / math.log2(3.0)) / 4.5
    assert _g(run, "G.1=1.5,2=3") == expected


# --------------------------------------------------------------------------- runs in trec order
# A run whose queries' lines are contiguous and by score descending skips the sort
# (run_order / _in_trec_order); anything else falls back to sorting every row.
ORDER_QRELS = b"q1 0 d1 1\nq1 0 d2 2\nq1 0 d4 0\nq2 0 d3 1\nq2 0 d1 1\n"
# q1: d4 and d2 tie at 2.0 (trec_eval: docno descending, d4 before d2), then d1, d3;
# q2: d3, d1 tie at 1.0 -> d3, d1
TREC_ORDER = [
    "q1 Q0 d4 1 2.0 t", "q1 Q0 d2 2 2.0 t", "q1 Q0 d1 3 1.5 t", "q1 Q0 d3 4 -0 t",
    "q2 Q0 d3 1 1.0 t", "q2 Q0 d1 2 1.0 t", "q2 Q0 d5 3 nan t",
]  # fmt: skip


def _lines(lines: list[str]) -> bytes:
    return ("\n".join(lines) + "\n").encode()


def _output(run: bytes) -> str:
    result = trec_eval(ORDER_QRELS, run, ["all_trec"], per_query=True)
    return format_trec(result)


def _frame(lines: list[str]) -> pl.DataFrame:
    frame, _ = read_trec_eval_run(_lines(lines))
    codes = {"q1": 0, "q2": 1}
    return frame.with_columns(pl.col("qid").replace_strict(codes, return_dtype=pl.UInt32))


def test_order_of_a_run_in_trec_order() -> None:
    order = run_order(_frame(TREC_ORDER))
    # contiguous, scores not increasing: no score ranks, blocks already in code order
    assert order.blocks is not None
    assert order.blocks.len() == 0
    assert order.score_rank is None
    # queries listed q2 first: the blocks are gathered back, rows 4-6 then 0-3
    order = run_order(_frame(TREC_ORDER[4:] + TREC_ORDER[:4]))
    assert order.blocks is not None
    assert order.blocks.to_list() == [3, 4, 5, 6, 0, 1, 2]


@pytest.mark.parametrize(
    "lines",
    [
        TREC_ORDER[2:3] + TREC_ORDER[:2] + TREC_ORDER[3:],  # 1.5 before 2.0 in q1
        TREC_ORDER[:2] + TREC_ORDER[4:5] + TREC_ORDER[2:4] + TREC_ORDER[5:],  # q1 split by q2
        TREC_ORDER[:5] + TREC_ORDER[6:] + TREC_ORDER[5:6],  # nan above a number
    ],
)
def test_order_falls_back_to_the_sort(lines: list[str]) -> None:
    order = run_order(_frame(lines))
    assert order.blocks is None
    # score ranks for the sort: 2.0 -> 0, 1.5 -> 1, 1.0 -> 2, 0.0 -> 3, nan last (4)
    assert order.score_rank is not None
    ranks = dict(zip(_frame(lines)["sim"].to_list(), order.score_rank.to_list(), strict=True))
    assert [ranks[2.0], ranks[1.5], ranks[1.0], ranks[0.0]] == [0, 1, 2, 3]


def test_ties_out_of_docno_order_are_sorted_among_themselves() -> None:
    # q1's tie d2/d4 listed d2 first, q2's d1/d3 too: only those rows are reordered
    lines = [TREC_ORDER[i] for i in (1, 0, 2, 3, 5, 4, 6)]
    frame = _frame(lines)
    docnos, codes = docno_codes(frame["docno"])
    order = run_order(frame)
    assert order.blocks is not None
    assert order.sim is not None
    ranked = _in_trec_order(frame["qid"], order.sim, order.blocks, codes, docnos.height)
    assert ranked is not None
    names = docnos["docno"].gather(ranked["__dc"]).to_list()
    assert names == ["d4", "d2", "d1", "d3", "d3", "d1", "d5"]


@pytest.mark.parametrize("seed", range(6))
def test_sorted_and_shuffled_runs_give_the_same_output(seed: int) -> None:
    import random

    rng = random.Random(seed)
    expected = _output(_lines(TREC_ORDER))
    lines = list(TREC_ORDER)
    rng.shuffle(lines)  # the sort
    assert _output(_lines(lines)) == expected
    # the fast path with tie groups reordered and query blocks swapped
    q1, q2 = TREC_ORDER[:4], TREC_ORDER[4:]
    q1 = [q1[1], q1[0], *q1[2:]] if seed % 2 else q1
    assert _output(_lines(q2 + q1 if seed % 3 else q1 + q2)) == expected


def test_a_duplicate_in_a_run_in_trec_order_is_refused() -> None:
    for docno, lines in (
        ("d2", [*TREC_ORDER[:2], TREC_ORDER[1], *TREC_ORDER[2:]]),  # adjacent, tied
        ("d4", [*TREC_ORDER[:3], "q1 Q0 d4 4 0.5 t", *TREC_ORDER[3:]]),  # lower score
    ):
        with pytest.raises(TrecEvalError, match=f"duplicate docno '{docno}'"):
            _output(_lines(lines))


def test_values_after_several_cutoffs_at_once_equal_one_at_a_time() -> None:
    frame = pl.DataFrame(
        {"qid": [0, 0, 2], "i": [1, 4, 0], "x": [10.0, 30.0, 7.0]},
        schema={"qid": pl.UInt32, "i": pl.Int64, "x": pl.Float64},
    )
    keys = rank_keys(frame)
    qid = pl.Series([0, 1, 2], dtype=pl.UInt32)
    ks = [pl.Series([0, 3, 1]), pl.Series([2, 2, 2]), pl.Series([5, 0, 9])]
    batched = values_after(frame, keys, "x", qid, ks)
    single = [value_after(frame, keys, "x", qid, k) for k in ks]
    assert [s.to_list() for s in batched] == [s.to_list() for s in single]
    # by hand: query 0 after 0/2/5 ranks: null, 10, 30; query 1: 0, 0, null; query 2: 7
    assert [s.to_list() for s in batched] == [[None, 0.0, 7.0], [10.0, 0.0, 7.0], [30.0, None, 7.0]]


def _long_ranking(n: int, swap_at: int | None) -> pl.DataFrame:
    """One query, ``n`` rows by score descending; rows ``swap_at`` and the next swapped."""
    sims = [float(n - j) for j in range(n)]
    if swap_at is not None:
        sims[swap_at], sims[swap_at + 1] = sims[swap_at + 1], sims[swap_at]
    return pl.DataFrame({"qid": pl.Series([0] * n, dtype=pl.UInt32), "sim": sims})


@pytest.mark.parametrize(("swap_at", "in_order"), [(None, True), (10, False), (9000, False)])
def test_order_reads_past_a_sorted_head(swap_at: int | None, in_order: bool) -> None:
    # the first 4,096 rows decide alone only when they are out of order; a run sorted
    # there and out of order further down is still sorted in full
    order = run_order(_long_ranking(10_000, swap_at))
    assert (order.blocks is not None) is in_order
    assert (order.score_rank is None) is in_order


GOOD_RUN = b"q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 1.0 t\n"
GOOD_QRELS = b"q1 0 d1 1\n"
BAD_QRELS = b"q1 0 d1\n"  # three fields
BAD_RUN = b"q1 Q0 d1 1\n"  # four fields


@pytest.mark.parametrize("as_path", [False, True])
@pytest.mark.parametrize("run", [GOOD_RUN, BAD_RUN])
def test_a_bad_qrels_file_is_the_error_reported(tmp_path: Path, as_path: bool, run: bytes) -> None:
    # the run is read (and coded) in a second thread that waits for the qrels: a qrels
    # error must reach the caller, not leave that thread waiting
    qrels_arg: bytes | Path = BAD_QRELS
    run_arg: bytes | Path = run
    if as_path:
        qrels_arg, run_arg = tmp_path / "qrels", tmp_path / "run"
        qrels_arg.write_bytes(BAD_QRELS)
        run_arg.write_bytes(run)
    with pytest.raises(ValueError, match="malformed qrels line"):
        trec_eval(qrels_arg, run_arg, ["map"])


def test_a_bad_run_file_is_reported() -> None:
    with pytest.raises(ValueError, match="malformed run line"):
        trec_eval(GOOD_QRELS, BAD_RUN, ["map"])


@pytest.mark.parametrize(
    "content",
    [
        b"q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 1.0 t\n",  # clean: the fast reader
        b"q1\tQ0\td1\t1\t2.0\tt\nq1\tQ0\td2\t2\t1.0\tt\n",  # tabs
        b"q1 Q0 d1 1 2.0 t\r\nq1 Q0 d2 2 1.0 t\r\n",  # CR LF
        b"# comment\nq1 Q0 d1 1 2.0 t\n q1 Q0 d2 2 1e0 t extra\n",  # general reader
        b"q1 Q0 d1 1 2.0 t\nq1  d2 2 1.0 t\n",  # an empty field: five fields
    ],
)
def test_a_run_file_reads_the_same_from_its_path_as_from_its_bytes(
    tmp_path: Path, content: bytes
) -> None:
    # a path is read by Polars from the file (no copy); its bytes (standard input) as
    # before: both take the same route to the same frame, or to the same error
    path = tmp_path / "run"
    path.write_bytes(content)
    results = []
    for source in (content, path):
        try:
            frame, runid = read_trec_eval_run(source)
            results.append((frame.rows(), runid))
        except ValueError as error:
            results.append(str(error).split(": ", 1)[-1])
    assert results[0] == results[1]


def test_a_duplicate_in_a_shuffled_run_is_refused_unless_cut_off_by_max_docs() -> None:
    # the duplicate check runs beside the sort (on the unsorted rows); with -M only the
    # kept ranks count, as in trec_eval (checked against 10.0-rc3: -M 2 prints map
    # 1.0000, without -M it exits 4)
    qrels = b"q1 0 d1 1\nq1 0 d2 1\n"
    run = b"q1 Q0 d3 3 1.0 t\nq1 Q0 d1 4 0.5 t\nq1 Q0 d2 2 2.0 t\nq1 Q0 d1 1 3.0 t\n"
    with pytest.raises(TrecEvalError, match="duplicate docno 'd1' in the results of query"):
        trec_eval(qrels, run, ["map"])
    result = trec_eval(qrels, run, ["map"], max_docs=2)
    assert result.filter(pl.col("measure") == "map")["value"].to_list() == [1.0]  # (1/1 + 2/2) / 2


@pytest.mark.parametrize("with_nan", [False, True])
def test_score_ranks_of_mostly_distinct_scores(
    monkeypatch: pytest.MonkeyPatch, with_nan: bool
) -> None:
    # over a million mostly distinct scores the dense ranks come from a sort (a lookup
    # table as big as the run costs more); with a NaN (ranked last) from the lookup
    import numpy as np

    ranked: list[str] = []
    rank = pl.Series.rank

    def spy(self: pl.Series, *args: Any, **kwargs: Any) -> pl.Series:
        ranked.append(self.name)
        return rank(self, *args, **kwargs)

    monkeypatch.setattr(pl.Series, "rank", spy)

    rng = np.random.default_rng(5)
    values = np.round(rng.random(1_200_000) * 4 - 2, 9)
    values[::7] = values[1::7][: len(values[::7])]  # some ties
    if with_nan:
        values[3] = np.nan
    sim = pl.Series(values) + 0.0  # -0.0 read as 0.0, as run_order does
    got = _score_ranks(sim)
    distinct = sim.filter(sim.is_not_nan()).unique().sort(descending=True)
    expected = sim.replace_strict(
        distinct,
        pl.int_range(distinct.len(), dtype=pl.UInt32, eager=True),
        default=pl.lit(distinct.len(), pl.UInt32),
        return_dtype=pl.UInt32,
    )
    assert got.dtype == pl.UInt32
    assert got.equals(expected.alias(got.name))
    assert len(ranked) == (0 if with_nan else 1)
    if with_nan:
        assert got[3] == distinct.len()  # NaN after every number


def test_format_doubles_is_printf_6_4f() -> None:
    # The -q values: [0, 1] read from a table by the correctly rounded value * 10000,
    # the rest from their digits; both must print as C's printf("%6.4f") (Python's
    # %-formatting rounds the same way: correctly, half to even on exact ties).
    rng = np.random.default_rng(5)
    values = [
        *rng.random(3000),
        *(rng.random(500) * 2000 - 1000),
        *(i / 10000 for i in range(10001)),
        *((i + 0.5) / 10000 for i in range(0, 10001, 7)),  # ties at the 5th decimal
        0.0, 1.0, 0.99995, 0.99994999, 1.00005, 0.00005, 0.00015, 0.12345, 10000.00005,
        0.000049999999999999996, 5e-324, 1e300,
    ]  # fmt: skip
    got = format_doubles(pl.Series("v", values)).to_list()
    assert got == [f"{x:6.4f}" for x in values]
    specials = pl.Series("v", [-0.0, -5e-324, -1e300, math.inf, -math.inf, math.nan, None])
    assert format_doubles(specials).to_list() == [
        "-0.0000", "-0.0000", f"{-1e300:6.4f}", "   inf", "  -inf", "  -nan", None,
    ]  # fmt: skip


def test_values_beyond_64_bit_integers_are_printed() -> None:
    # utility with a gain of 1e300 per relevant retrieved document: trec_eval prints the
    # whole number (its line used to be dropped: the digits went through an Int64).
    result = trec_eval(b"q 0 d1 1\n", b"q Q0 d1 1 0.5 t\n", ["utility.1e300,0,0,0"])
    text = f"{1e300:6.4f}"  # C's printf("%6.4f"), correctly rounded like Python's
    assert format_trec(result) == f"{'utility_1e300,0,0,0':<22}\tall\t{text}\n"
    per_query = trec_eval(
        b"q 0 d1 1\n", b"q Q0 d1 1 0.5 t\n", ["utility.1e300,0,0,0"], per_query=True
    )
    assert per_query["text"].to_list() == [text, text]
