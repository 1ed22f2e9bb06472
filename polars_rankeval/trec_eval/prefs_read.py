"""Readers of trec_eval's relation files: ``qrels_jg``, ``prefs`` and ``qrels_prefs``.

Lines are split on C's white space and read as trec_eval's ``get_qrels_jg``,
``get_prefs`` and ``get_qrels_prefs`` read them: a line with too few fields is
"Malformed line N" (exit 2), relevance is C's ``atol`` and preference levels C's
``atof`` (:mod:`polars_rankeval.io.cnumbers`), a repeated (qid, jg, docno) of a
``qrels_jg`` file is trec_eval's "duplicate docs".
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from polars_rankeval.io.cnumbers import c_atof, c_atol
from polars_rankeval.trec_eval.errors import TrecEvalError
from polars_rankeval.trec_eval.prefs_labels import RELATION_FORMATS, RelationFormat

_FIELDS: dict[str, tuple[str, ...]] = {
    "qrels_jg": ("user", "jg", "item", "relevance"),
    "prefs": ("user", "jg", "jsg", "item", "rel_level"),
    "qrels_prefs": ("user", "jg", "item", "rel_level"),
}
_READER = {"qrels_jg": "get_qrels_jg", "prefs": "get_prefs", "qrels_prefs": "get_qrels_prefs"}
_WS = "[ \t\r\x0b\x0c]"
_NOT_WS = "[^ \t\r\x0b\x0c]+"


def check_format(relation_format: str) -> None:
    """Raise ``ValueError`` unless ``relation_format`` is one of ``RELATION_FORMATS``."""
    if relation_format not in RELATION_FORMATS:
        raise ValueError(
            f"relation_format must be one of {', '.join(sorted(RELATION_FORMATS))}, "
            f"got {relation_format!r}"
        )


def read_relations(
    source: str | Path | pl.DataFrame, relation_format: RelationFormat
) -> pl.DataFrame:
    """Read a ``-R qrels_jg``, ``prefs`` or ``qrels_prefs`` file as trec_eval does.

    Parameters
    ----------
    source
        A file path, or a frame with the output columns (see below).
    relation_format
        ``"qrels_jg"`` (``qid jg docno rel``), ``"prefs"`` (``qid jg jsg docno rel_level``)
        or ``"qrels_prefs"`` (``qid jg docno rel_level``, one sub-group ``"0"``).

    Returns
    -------
    polars.DataFrame
        qrels_jg: ``user, jg, item`` (String), ``relevance`` (Int64, C ``atol``).
        prefs, qrels_prefs: ``user, jg, jsg, item`` (String), ``rel_level`` (Float64,
        C ``atof``). Rows in file order.

    Raises
    ------
    TrecEvalError
        An empty or unreadable file, a malformed line (trec_eval's line number counts
        parsed lines), a repeated (qid, jg, docno) in qrels_jg.

    Examples
    --------
    >>> import io, tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "prefs")
    >>> _ = open(path, "w").write(chr(10).join(["q1 u1 s1 d1 3", "# note", "q1 u1 s1 d2 1e0", ""]))
    >>> read_relations(path, "prefs").rows()
    [('q1', 'u1', 's1', 'd1', 3.0), ('q1', 'u1', 's1', 'd2', 1.0)]
    """
    check_format(relation_format)
    if isinstance(source, pl.DataFrame):
        return _relations_from_frame(source, relation_format)
    if not isinstance(source, (str, Path)):
        raise TypeError(f"source must be a path or a polars DataFrame, got {type(source).__name__}")
    reader = _READER[relation_format]
    kind = "qrels" if relation_format == "qrels_jg" else "prefs"
    try:
        data = Path(source).read_bytes()
    except OSError:
        data = b""
    if not data:
        raise TrecEvalError(
            f"trec_eval.{reader}: Cannot read {kind} file '{source}'\n"
            f"trec_eval: Quit in file '{source}'",
            status=2,
        )
    lines = data.decode("utf-8", errors="replace").split("\n")
    if data.endswith(b"\n"):
        lines.pop()
    fields = _FIELDS[relation_format]
    frame = pl.DataFrame({"line": lines}, schema={"line": pl.String})
    line = pl.col("line")
    is_comment = line.str.starts_with("#")
    # a '#' line is skipped, then the next line is parsed whatever it holds: in a run of
    # consecutive '#' lines the 1st, 3rd, ... are skipped and the others parsed
    run_id = (is_comment != is_comment.shift(1, fill_value=False)).cum_sum()
    frame = (
        frame.with_columns(is_comment.alias("c"), run_id.alias("r"))
        .with_columns(pl.int_range(pl.len()).over("r").alias("k"))
        .filter(~(pl.col("c") & (pl.col("k") % 2 == 0)))
        .with_columns(line.str.extract_all(_NOT_WS).alias("f"))
    )
    bad = frame.with_row_index("n", offset=1).filter(pl.col("f").list.len() != len(fields))
    if bad.height:
        number = bad["n"][0]
        raise TrecEvalError(
            f"trec_eval.{reader}: Malformed line {number}\ntrec_eval: Quit in file '{source}'",
            status=2,
        )
    out = frame.select(pl.col("f").list.get(i).alias(name) for i, name in enumerate(fields))
    if relation_format == "qrels_jg":
        out = out.with_columns(c_atol(pl.col("relevance")).alias("relevance"))
        _check_qrels_jg_duplicates(out, source)
        return out
    out = out.with_columns(c_atof(pl.col("rel_level")).alias("rel_level"))
    if relation_format == "qrels_prefs":
        out = out.select("user", "jg", pl.lit("0").alias("jsg"), "item", "rel_level")
    return out


def _check_qrels_jg_duplicates(frame: pl.DataFrame, source: object) -> None:
    dup = (
        frame.filter(pl.struct("user", "jg", "item").is_duplicated())
        .sort("user", "jg", "item")
        .head(1)
    )
    if dup.height:
        raise TrecEvalError(
            f"trec_eval.get_qrels: duplicate docs {dup['item'][0]}\n"
            f"trec_eval: Quit in file '{source}'",
            status=2,
        )


def _relations_from_frame(frame: pl.DataFrame, relation_format: str) -> pl.DataFrame:
    cols = set(frame.columns)
    if relation_format == "qrels_jg" and "jg" not in cols and "iter" in cols:
        frame = frame.rename({"iter": "jg"})  # a qrels frame: its iter field is the group
    if relation_format == "qrels_prefs" and "jsg" not in cols:
        if "jg" not in cols and "iter" in cols:
            frame = frame.rename({"iter": "jg"})
        if "rel_level" not in cols and "relevance" in frame.columns:
            frame = frame.rename({"relevance": "rel_level"})
        frame = frame.with_columns(pl.lit("0").alias("jsg"))
    fields = _FIELDS["prefs" if relation_format == "qrels_prefs" else relation_format]
    missing = [c for c in fields if c not in frame.columns]
    if missing:
        raise ValueError(
            f"relations frame for {relation_format!r} is missing column(s) {', '.join(missing)}; "
            f"expected {', '.join(fields)}"
        )
    value = fields[-1]
    dtype = pl.Int64 if relation_format == "qrels_jg" else pl.Float64
    out = frame.select(*(pl.col(c).cast(pl.String) for c in fields[:-1]), pl.col(value).cast(dtype))
    nulls = [c for c in fields if out[c].null_count()]
    if nulls:
        raise ValueError(f"relations frame has null values in column(s) {', '.join(nulls)}")
    if relation_format == "qrels_jg":
        _check_qrels_jg_duplicates(out, "<frame>")
    return out


# Evaluation
