"""The fast paths of the trec_eval reader and ranking: hash lookups and the clean-file check.

Each fast path has an exact fallback; these tests force the fallback (hash collisions)
and compare, and check that the clean-file reader turns down every file it must.
"""

from __future__ import annotations

import polars as pl
import pytest

from polars_rankeval import trec_eval as te
from polars_rankeval.trec import _fast_fields, read_trec_eval_qrels, read_trec_eval_run

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
    docnos, codes = te._docno_codes(DOCNOS)
    # distinct in byte order: a, d1, d2, d3 -> codes 0, 1, 2, 3
    assert docnos["docno"].to_list() == ["a", "d1", "d2", "d3"]
    assert codes.to_list() == [3, 1, 2, 1, 0, 3]
    qrels = pl.DataFrame({"qid": [0, 0, 1], "docno": ["d2", "zz", "a"], "rel": [1, 2, 0]})
    judged = te._judged_codes(qrels, docnos)
    # "zz" is not in the run: dropped even when its hash equals a run docno's
    assert sorted(judged.select("docno", "__dc").rows()) == [("a", 0), ("d2", 2)]


@pytest.mark.parametrize("collide", [False, True])
def test_string_codes_and_distinct(monkeypatch: pytest.MonkeyPatch, collide: bool) -> None:
    if collide:
        _collide(monkeypatch)
    keys = pl.Series(["q1", "q2", "q3"])
    values = pl.Series(["q3", "q9", "q1", "q3"])
    # q3 is key 2, q9 is no key (null), q1 is key 0
    assert te._string_codes(values, keys).to_list() == [2, None, 0, 2]
    assert sorted(te._distinct_strings(values).to_list()) == ["q1", "q3", "q9"]


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
