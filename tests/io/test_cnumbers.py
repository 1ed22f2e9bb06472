"""C's ``atof``/``atol``: one reader for trec_eval's files, options and relation formats.

Every reader goes through them, not through Python's or Rust's ``\\s`` and ``\\d`` (which
take Unicode spaces and digits, and no hexadecimal): C reads a preference level ``0x10``
as 16 and a relevance ``1`` followed by an Arabic-Indic digit as 1.
"""

from __future__ import annotations

import polars as pl
import pytest

from polars_rankeval.io.cnumbers import atof, atol, c_atof, c_atol
from polars_rankeval.trec_eval.prefs_read import read_relations


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("0x10", 16.0),  # strtod reads hexadecimal
        ("-0x10", -16.0),
        (" \t1e-3x", 1e-3),
        ("1\u0663", 1.0),  # an Arabic-Indic digit is no digit for C
        ("\u00a05", 0.0),  # a no-break space is no C space
        ("inf", float("inf")),
        ("abc", 0.0),
    ],
)
def test_atof_reads_as_c(text: str, expected: float) -> None:
    assert atof(text) == expected
    assert pl.select(c_atof(pl.lit(text.lstrip(" \t")))).item() == expected


@pytest.mark.parametrize(
    ("text", "expected"), [("+7.9", 7), ("1\u0663", 1), ("\u00a05", 0), (" -3", -3)]
)
def test_atol_reads_as_c(text: str, expected: int) -> None:
    assert atol(text) == expected
    assert pl.select(c_atol(pl.lit(text.strip(" ")))).item() == expected


def test_relation_files_read_numbers_as_c(tmp_path: object) -> None:
    from pathlib import Path

    folder = Path(str(tmp_path))
    prefs = folder / "prefs"
    prefs.write_text("q j s d1 0x10\nq j s d2 1\u0663\n", encoding="utf-8")
    assert read_relations(prefs, "prefs")["rel_level"].to_list() == [16.0, 1.0]
    jg = folder / "jg"
    jg.write_text("q j d1 1\u0663\nq j d2 0x2\n", encoding="utf-8")
    assert read_relations(jg, "qrels_jg")["relevance"].to_list() == [1, 0]
