"""TREC run and qrels files read exactly as trec_eval (10.0-rc3) reads them.

The readers of the ``trec-eval`` command: C's ``isspace`` separators, ``atof`` scores,
``atol`` relevance, comment and blank-line rules, a byte order mark kept as the start of
the first query id. A clean file goes through Polars' CSV reader; anything else through
Polars string expressions over its lines.
"""

from __future__ import annotations

import mmap
from pathlib import Path
from typing import Any

import polars as pl

from polars_rankeval._utils.constraints import (
    FLAG,
    PATH,
    Instance,
    validate_params,
)
from polars_rankeval.io.cnumbers import C_SPACE, c_atof, c_atol

# trec_eval (10.0-rc3, get_trec_results.c / get_qrels.c) reads its files byte by byte with
# C's isspace() (space, \t, \n, \v, \f, \r) as the only separators, atof() for scores and
# atol() for relevance (both in polars_rankeval.io.cnumbers). The functions below reproduce
# that reading with Polars string expressions (no Python loop over lines).
_FIELD = r"[^ \t\n\x0b\x0c\r]+"


_OTHER_SPACE = (b"\t", b"\r", b"\x0b", b"\x0c")


def _has_other_space(source: bytes | Path) -> bool:
    """Whether a file has white space other than spaces and newlines.

    ``source``: its bytes, or a non-empty file's path (scanned through a memory map).
    """
    if isinstance(source, bytes):
        return any(c in source for c in _OTHER_SPACE)
    with source.open("rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as m:
        return any(m.find(c) >= 0 for c in _OTHER_SPACE)


_BOM = b"\xef\xbb\xbf"


def _starts_with_bom(source: bytes | Path) -> bool:
    """Whether a file (its bytes or its path) starts with a UTF-8 byte order mark."""
    if isinstance(source, bytes):
        return source.startswith(_BOM)
    with source.open("rb") as handle:
        return handle.read(len(_BOM)) == _BOM


def _fast_source(source: str | Path | bytes, what: str) -> bytes | Path:
    """A regular file's path (read by Polars, not copied), else the bytes (a pipe ...).

    A missing or empty file raises the usual error.
    """
    if isinstance(source, bytes):
        return _read_bytes(source, what)
    path = Path(source)
    if not path.is_file() or path.stat().st_size == 0:
        return _read_bytes(source, what)
    return path


def _read_csv(
    source: bytes | Path, *, select: list[pl.Expr] | None = None, **options: Any
) -> pl.DataFrame:
    """``pl.read_csv`` of bytes, or a lazy scan of a path (no copy of the file).

    ``select``: the expressions kept of the fields read; from a path they are computed
    by Polars' streaming engine batch by batch, so that the fields not kept are never
    held whole in memory.
    """
    if isinstance(source, bytes):
        frame = pl.read_csv(source, **options)
        return frame if select is None else frame.select(select)
    if select is None:
        return pl.scan_csv(source, **options).collect()
    return pl.scan_csv(source, **options).select(select).collect(engine="streaming")


def _last_field(source: bytes | Path, index: int) -> str:
    """Field ``index`` (0-based) of the last line of a file :func:`_fast_fields` read.

    Such a file has no blank line and no white space inside a field, so its last line is
    its last record and splits at white space; the tail of a path is read, not the file.
    """
    if isinstance(source, bytes):
        tail = source[-65536:]
    else:
        with source.open("rb") as handle:
            size = handle.seek(0, 2)
            start = max(size - 65536, 0)
            handle.seek(start)
            tail = handle.read()
            while b"\n" not in tail.rstrip(b"\n") and start > 0:  # a line over 64 KiB
                start = max(start - 65536, 0)
                handle.seek(start)
                tail = handle.read()
    line = tail[:-1] if tail.endswith(b"\n") else tail
    line = line[line.rfind(b"\n") + 1 :]
    return line.split()[index].decode("utf-8", errors="replace")


def _fast_fields(
    data: bytes | Path,
    width: int,
    keep: tuple[int, ...],
    *,
    typed: dict[int, pl.DataType] | None = None,
    categorical: tuple[int, ...] = (),
) -> pl.DataFrame | None:
    """The common, clean file: one space (or one tab) between exactly ``width`` fields.

    Returns the fields ``keep`` (0-based) as columns ``column_<k + 1>`` (String, or the
    type ``typed`` gives a field when every value of it parses as that type; a field
    that does not keeps String; Categorical for the fields ``categorical`` of a file
    with single spaces, see :func:`_categorical`), or ``None`` (use the general
    reader) unless every line
    has exactly ``width`` non-empty fields with no other white space, no comment and no
    blank line. A file starting with a UTF-8 byte order mark also goes to the general
    reader: Polars' CSV reader drops the mark, trec_eval keeps its bytes as the start of
    the first query id (they are not white space to C's ``isspace``).
    """
    if _starts_with_bom(data):
        return None
    if not _has_other_space(data):
        # single spaces only: every field is read (none is empty in a clean file), so an
        # empty field (two spaces in a row, a space at a line's start or end) or a blank
        # line shows as a null, and a line with too many or too few fields as a parse
        # error or nulls; the checks run inside Polars' reader, not over the bytes.
        for types in (typed or {}, {}) if typed else ({},):
            # (each attempt codes into new categories)
            schema = {
                f"column_{k + 1}": _categorical() if k in categorical else types.get(k, pl.String())
                for k in range(width)
            }  # fmt: skip
            # the fields kept, and per line whether any field is null or it is a comment
            # (a Categorical first field: its categories are checked below)
            flag = pl.any_horizontal(pl.all().is_null())
            if 0 not in categorical:
                flag = flag | pl.col("column_1").str.starts_with("#")
            select = [*(pl.col(f"column_{k + 1}") for k in keep), flag.alias("__bad")]
            try:
                frame = _read_csv(
                    data, select=select, separator=" ", has_header=False, quote_char=None,
                    schema=schema, truncate_ragged_lines=False,
                )  # fmt: skip
            except (pl.exceptions.PolarsError, ValueError):
                continue
            if frame.height == 0 or frame["__bad"].any():
                return None
            if 0 in categorical and categories_of(frame["column_1"]).str.starts_with("#").any():
                return None
            return frame.drop("__bad")
        return None
    for separator in (" ", "\t"):
        try:
            frame = _read_csv(
                data, separator=separator, has_header=False, quote_char=None,
                infer_schema=False, truncate_ragged_lines=False,
            )  # fmt: skip
        except (pl.exceptions.PolarsError, ValueError):
            continue
        if frame.width != width or frame.height == 0:
            continue
        frame.columns = [f"column_{i + 1}" for i in range(width)]
        blank = [
            c.is_null() | (c == "") | c.str.contains_any([" ", "\t", "\r", "\x0b", "\x0c"])
            for c in (pl.col(name) for name in frame.columns)
        ]
        bad = frame.select(
            pl.any_horizontal(blank).any() | pl.col(frame.columns[0]).str.starts_with("#").any()
        ).item()
        if not bad:
            return frame.select(f"column_{k + 1}" for k in keep)
    return None


def _categorical() -> pl.Categorical:
    """A Categorical type with new categories of its own.

    A column read as it holds each distinct value once in its categories (no other
    column shares them) and 4 bytes per row: far less than a String column (16 bytes per
    row) when values repeat, as a run's query ids and docnos do.
    """
    return pl.Categorical(pl.Categories.random())


def categories_of(column: pl.Series) -> pl.Series:
    """The categories of a Categorical column, in the order of their physical codes."""
    return column.dtype.categories.to_series()  # type: ignore[attr-defined]


def _as_categorical(column: pl.Series) -> pl.Series:
    """A String column as a Categorical one with new categories (:func:`_categorical`)."""
    return column.cast(_categorical())


def _atof_column(frame: pl.DataFrame, name: str) -> pl.Series:
    """``c_atof`` of a column, with a plain cast when that reads every value the same."""
    col = frame[name]
    if col.dtype == pl.Float64:  # parsed by the reader: the same parser as the cast
        return col
    plain = col.cast(pl.Float64, strict=False)
    if plain.null_count() == 0 and not col.str.contains_any(["x", "X"]).any():
        return plain
    return frame.select(c_atof(pl.col(name))).to_series()


def _atol_column(frame: pl.DataFrame, name: str) -> pl.Series:
    if frame[name].dtype == pl.Int64:  # parsed by the reader
        return frame[name]
    plain = frame[name].cast(pl.Int64, strict=False)
    if plain.null_count() == 0:
        return plain
    return frame.select(c_atol(pl.col(name))).to_series()


def _lines(data: bytes) -> pl.DataFrame:
    """The lines of a file (``line`` String, ``lineno`` 1-based), as trec_eval splits them."""
    text = data.decode("utf-8", errors="replace")
    if text.endswith("\n"):
        text = text[:-1]
    return (
        pl.DataFrame({"line": [text]})
        .select(pl.col("line").str.split("\n"))
        .explode("line")
        .with_row_index("lineno", offset=1)
    )


def _read_bytes(source: str | Path | bytes, what: str) -> bytes:
    data = source if isinstance(source, bytes) else Path(source).read_bytes()
    if not data:
        msg = f"{what} file {str(source)!r} is empty"
        raise ValueError(msg)
    return data


def _malformed(frame: pl.DataFrame, source: object, what: str, expected: str) -> None:
    if frame.height:
        lineno, text = frame.row(0)
        name = "<stdin>" if isinstance(source, bytes) else str(source)
        msg = f"{name}:{lineno}: malformed {what} line {text.strip()!r}; expected {expected}"
        raise ValueError(msg)


@validate_params({"source": [PATH, Instance(bytes, what="the file's bytes")], "categorical": FLAG})
def read_trec_eval_run(
    source: str | Path | bytes, *, categorical: bool = False
) -> tuple[pl.DataFrame, str]:
    r"""Read a run file exactly as trec_eval does; return ``(qid, docno, sim)`` and the run id.

    Leading white space, blank lines and lines whose first non-blank character is ``#``
    are skipped (a UTF-8 byte order mark is not white space: it starts the first query
    id); a line needs at least six white-space separated fields
    (``qid iter docno rank sim run_id``), anything after the sixth is ignored; the rank
    field is not read; ``sim`` is read as C's ``atof`` does (``1e-3``, ``+1``, ``inf``,
    ``nan``, ``1.5abc`` -> 1.5). The run id trec_eval prints is the tag of the last line.

    Parameters
    ----------
    source
        A path, or the file's bytes (e.g. standard input).
    categorical
        ``qid`` and ``docno`` as Categorical instead of String, each column with
        categories of its own that hold its distinct values (in no particular order):
        4 bytes per line instead of 16 (the ``trec-eval`` command reads runs so).

    Returns
    -------
    tuple[polars.DataFrame, str]
        Columns ``qid``, ``docno`` (String, or Categorical: see ``categorical``) and
        ``sim`` (Float64), in file order, and the run id.

    Examples
    --------
    >>> frame, runid = read_trec_eval_run(b"# a run\n q1 Q0 d1 1 1e-3 tagA extra\n")
    >>> frame.rows(), runid
    ([('q1', 'd1', 0.001)], 'tagA')
    """
    fast_source = _fast_source(source, "run")
    # the rank field is not used; read as an integer it costs less than as a string
    # the run id is the last line's tag: the tags are not kept (read off the last line)
    fast = _fast_fields(
        fast_source, 6, (0, 2, 4), typed={3: pl.Int64(), 4: pl.Float64()},
        categorical=(0, 2) if categorical else (),
    )  # fmt: skip
    if fast is not None:
        tag = _last_field(fast_source, 5)
        frame = fast.select(
            pl.col("column_1").alias("qid"),
            pl.col("column_3").alias("docno"),
            _atof_column(fast, "column_5").alias("sim"),
        )
        if categorical and frame["qid"].dtype == pl.String:  # a file with tabs
            frame = frame.with_columns(_as_categorical(frame[c]) for c in ("qid", "docno"))
        return frame, tag
    data = _read_bytes(fast_source, "run")  # the general reader reads bytes
    lines = _lines(data)
    body = pl.col("line").str.strip_chars_start(C_SPACE)
    lines = lines.filter((body != "") & ~body.str.starts_with("#"))
    fields = lines.with_columns(pl.col("line").str.extract_all(_FIELD).alias("f"))
    _malformed(
        fields.filter(pl.col("f").list.len() < 6).select("lineno", "line"),
        source,
        "run",
        "at least 6 white-space separated fields (qid iter docno rank sim run_id)",
    )
    if fields.height == 0:
        msg = "run file has no result lines"
        raise ValueError(msg)
    f = pl.col("f")
    frame = fields.select(
        f.list.get(0).alias("qid"),
        f.list.get(2).alias("docno"),
        c_atof(f.list.get(4)).alias("sim"),
    )
    runid = fields.select(f.list.get(5).last()).item()
    if categorical:
        frame = frame.with_columns(_as_categorical(frame[c]) for c in ("qid", "docno"))
    return frame, runid


@validate_params({"source": [PATH, Instance(bytes, what="the file's bytes")]})
def read_trec_eval_qrels(source: str | Path | bytes) -> pl.DataFrame:
    r"""Read a qrels file exactly as trec_eval does: ``(qid, docno, rel)``.

    A line is exactly four white-space separated fields ``qid iter docno rel`` (leading
    and trailing white space allowed, blank lines are errors); ``rel`` is read as C's
    ``atol`` (``1.0`` -> 1, ``+2`` -> 2, ``-1`` stays -1: judged, "in the pool but not
    judged" for infAP). A line starting with ``#`` is a comment, except the line right
    after a comment, which trec_eval always reads as data.

    Examples
    --------
    >>> read_trec_eval_qrels(b"q1 0 d1 1.0\n# note\nq1\t0 d2 -1 \n").rows()
    [('q1', 'd1', 1), ('q1', 'd2', -1)]
    """
    fast_source = _fast_source(source, "qrels")
    fast = _fast_fields(fast_source, 4, (0, 2, 3), typed={3: pl.Int64()})
    if fast is not None:
        return fast.select(
            pl.col("column_1").alias("qid"),
            pl.col("column_3").alias("docno"),
            _atol_column(fast, "column_4").alias("rel"),
        )
    data = _read_bytes(fast_source, "qrels")  # the general reader reads bytes
    lines = _lines(data)
    hashed = pl.col("line").str.starts_with("#")
    block = (hashed != hashed.shift(1, fill_value=False)).cum_sum()
    position = pl.int_range(pl.len()).over(block)
    lines = lines.filter(~(hashed & (position % 2 == 0)))
    fields = lines.with_columns(pl.col("line").str.extract_all(_FIELD).alias("f"))
    _malformed(
        fields.filter(pl.col("f").list.len() != 4).select("lineno", "line"),
        source,
        "qrels",
        "4 white-space separated fields (qid iter docno rel)",
    )
    f = pl.col("f")
    return fields.select(
        f.list.get(0).alias("qid"), f.list.get(2).alias("docno"), c_atol(f.list.get(3)).alias("rel")
    )
