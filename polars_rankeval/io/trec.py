"""TREC run and qrels files as Polars frames.

A run line is ``qid Q0 docno rank score tag`` and a qrels line ``qid iter docno rel``,
fields separated by any white space. Reading is a lazy scan (one text column split by
a regular expression inside Polars, no Python loop over lines), so large files stream.
The rank column of a run is kept but not used for ordering: trec_eval orders by score
descending, then docno descending (``ties="item_desc"`` on the String docno column).
These readers read text: a UTF-8 byte order mark at the start of a file is dropped.
trec_eval reads bytes and keeps the mark as the start of the first query id;
:func:`read_trec_eval_run` and :func:`read_trec_eval_qrels` (the ``trec-eval`` command)
read it as trec_eval does.

Examples
--------
>>> import polars_rankeval as prk
>>> from polars_rankeval.io import trec
>>> qrels, run = prk.datasets.example_paths()
>>> trec.scan_run(run).head(2).collect()
shape: (2, 6)
┌──────┬─────┬──────────────────┬──────┬──────────┬──────────┐
│ user ┆ q0  ┆ item             ┆ rank ┆ score    ┆ tag      │
│ ---  ┆ --- ┆ ---              ┆ ---  ┆ ---      ┆ ---      │
│ str  ┆ str ┆ str              ┆ i64  ┆ f64      ┆ str      │
╞══════╪═════╪══════════════════╪══════╪══════════╪══════════╡
│ 301  ┆ Q0  ┆ FR940202-2-00150 ┆ 104  ┆ 2.129133 ┆ STANDARD │
│ 301  ┆ Q0  ┆ FR940202-2-00151 ┆ 414  ┆ 1.72476  ┆ STANDARD │
└──────┴─────┴──────────────────┴──────┴──────────┴──────────┘
"""

from __future__ import annotations

import mmap
from pathlib import Path
from typing import Any

import polars as pl

from polars_rankeval._utils.constraints import (
    COLUMN,
    FLAG,
    PATH,
    Frame,
    Instance,
    Text,
    validate_params,
)
from polars_rankeval._utils.files import write_atomically
from polars_rankeval.io.cnumbers import C_SPACE, c_atof, c_atol

RUN_FIELDS = ("user", "q0", "item", "rank", "score", "tag")
QRELS_FIELDS = ("user", "iter", "item", "relevance")
DIVERSITY_QRELS_FIELDS = ("user", "subtopic", "item", "relevance")
_LINE = "__prk_line"
_LINENO = "__prk_lineno"


def _scan_fields(path: str | Path, fields: tuple[str, ...]) -> pl.LazyFrame:
    """Each non-blank line split on white space into ``fields`` (all String).

    White space is ASCII's (C's ``isspace``, as trec_eval and the CSV fast path read
    it): a no-break space or another Unicode space is part of a field. Lines with the
    wrong number of fields get nulls and ``__prk_ok = False``; the 1-based line number
    is kept in ``__prk_lineno`` for error messages.
    """
    space, field = "[ \t\n\x0b\x0c\r]", "([^ \t\n\x0b\x0c\r]+)"
    pattern = f"^{space}*" + f"{space}+".join([field] * len(fields)) + f"{space}*$"
    line = pl.col(_LINE)
    return (
        pl.scan_csv(
            path,
            has_header=False,
            separator="\x1f",
            quote_char=None,
            new_columns=[_LINE],
            schema_overrides={_LINE: pl.String},
            comment_prefix=None,
        )
        .with_row_index(_LINENO, offset=1)
        .filter(line.str.strip_chars(" \t\n\x0b\x0c\r") != "")
        .with_columns(
            line.str.extract_groups(pattern).struct.rename_fields(list(fields)).alias("__f")
        )
        .unnest("__f")
        .with_columns(pl.col(fields[0]).is_not_null().alias("__prk_ok"))
    )


def _check(
    lf: pl.LazyFrame, path: str | Path, fields: tuple[str, ...], numeric: dict[str, pl.DataType]
) -> None:
    """Raise a ValueError naming the file and line of the first malformed line."""
    casts = [
        pl.col(name).cast(dtype, strict=False).is_null() & pl.col(name).is_not_null()
        for name, dtype in numeric.items()
    ]
    bad = lf.filter(~pl.col("__prk_ok") | pl.any_horizontal(casts)).select(_LINENO, _LINE)
    first = bad.head(1).collect()
    if first.height:
        lineno, text = first.row(0)
        msg = (
            f"{path}:{lineno}: malformed line {text.strip()!r}; expected "
            f"{len(fields)} white-space separated fields ({' '.join(fields)})"
        )
        for name, dtype in numeric.items():
            msg += f", {name} as {dtype}"
        raise ValueError(msg)


@validate_params({"path": PATH, "validate": FLAG})
def scan_run(path: str | Path, *, validate: bool = True) -> pl.LazyFrame:
    """Scan a TREC run file lazily: ``user, q0, item, rank, score, tag``.

    Parameters
    ----------
    path
        The run file.
    validate
        Scan the file once now and raise ``ValueError`` with the file name and line
        number of the first malformed line (wrong field count, non-numeric rank or
        score). ``False`` defers all work to ``collect`` (malformed lines then fail
        there with Polars' own error).

    Returns
    -------
    polars.LazyFrame
        user (qid), q0, item (docno) and tag as String, rank Int64, score Float64.
    """
    numeric: dict[str, pl.DataType] = {"rank": pl.Int64(), "score": pl.Float64()}
    lf = _scan_fields(path, RUN_FIELDS)
    if validate:
        _check(lf, path, RUN_FIELDS, numeric)
    return lf.select(
        "user",
        "q0",
        "item",
        pl.col("rank").cast(pl.Int64),
        pl.col("score").cast(pl.Float64),
        "tag",
    )


@validate_params({"path": PATH, "validate": FLAG})
def scan_qrels(path: str | Path, *, validate: bool = True) -> pl.LazyFrame:
    """Scan a TREC qrels file lazily: ``user, iter, item, relevance``.

    Parameters
    ----------
    path
        The qrels file.
    validate
        As in :func:`scan_run` (relevance must be an integer).

    Returns
    -------
    polars.LazyFrame
        user (qid), iter and item (docno) as String, relevance Int64 (negative
        judgments are kept; trec_eval reads them as not relevant).
    """
    numeric: dict[str, pl.DataType] = {"relevance": pl.Int64()}
    lf = _scan_fields(path, QRELS_FIELDS)
    if validate:
        _check(lf, path, QRELS_FIELDS, numeric)
    return lf.select("user", "iter", "item", pl.col("relevance").cast(pl.Int64))


@validate_params({"path": PATH, "validate": FLAG})
def scan_diversity_qrels(path: str | Path, *, validate: bool = True) -> pl.LazyFrame:
    """Scan TREC Web track diversity qrels lazily: ``user, subtopic, item, relevance``.

    A line is ``qid subtopic docno rel`` (the qrels of ndeval), fields separated by any
    white space: one judgment of a document for one subtopic (intent) of a query.
    Join it to a run with ``prk.join(run, qrels, subtopic="subtopic")`` for the
    intent-aware metrics (``alpha_ndcg``, ``err_ia``, ``nrbp``, ``s_recall``,
    ``precision_ia``, ``map_ia``; see :mod:`polars_rankeval.metrics.intent`).

    Parameters
    ----------
    path
        The qrels file.
    validate
        As in :func:`scan_run` (relevance must be an integer).

    Returns
    -------
    polars.LazyFrame
        user (qid), subtopic and item (docno) as String, relevance Int64. ndeval reads
        a judgment as binary (``> 0``), as the metrics' default ``rel=1`` does; grades
        are kept for ``rel=`` (negative ones are not relevant).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> import polars_rankeval as prk
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "qrels.div"
    >>> _ = path.write_text(chr(10).join(["1 1 d1 1", "1 2 d1 0", "1 2 d2 1"]))
    >>> prk.trec.read_diversity_qrels(path).row(0)
    ('1', '1', 'd1', 1)
    """
    numeric: dict[str, pl.DataType] = {"relevance": pl.Int64()}
    lf = _scan_fields(path, DIVERSITY_QRELS_FIELDS)
    if validate:
        _check(lf, path, DIVERSITY_QRELS_FIELDS, numeric)
    return lf.select("user", "subtopic", "item", pl.col("relevance").cast(pl.Int64))


_RUN_SCHEMA = {
    "user": pl.String, "q0": pl.String, "item": pl.String,
    "rank": pl.Int64, "score": pl.Float64, "tag": pl.String,
}  # fmt: skip
_QRELS_SCHEMA = {"user": pl.String, "iter": pl.String, "item": pl.String, "relevance": pl.Int64}


def _read(
    path: str | Path, fields: tuple[str, ...], schema: dict[str, Any], validate: bool
) -> pl.DataFrame:
    """Parse a TREC file once into a DataFrame.

    Files with one separator character (a space or a tab) between fields go through
    Polars' CSV reader; anything else (runs of white space) through the general scan,
    materialised once and checked on the frame.
    """
    for separator in (" ", "\t"):
        try:
            frame = pl.read_csv(
                path, separator=separator, has_header=False, new_columns=list(fields),
                schema_overrides=schema, quote_char=None, truncate_ragged_lines=False,
            )  # fmt: skip
        except (pl.exceptions.PolarsError, ValueError):
            continue
        if frame.width == len(fields) and frame.null_count().sum_horizontal().item() == 0:
            return frame.cast(schema)  # type: ignore[arg-type]
    lf = _scan_fields(path, fields)
    numeric = {name: dtype for name, dtype in schema.items() if dtype != pl.String}
    raw = lf.collect()
    if validate:
        _check(raw.lazy(), path, fields, {n: d() for n, d in numeric.items()})
    return raw.select([pl.col(n).cast(d) for n, d in schema.items()])


@validate_params({"path": PATH, "validate": FLAG})
def read_run(path: str | Path, *, validate: bool = True) -> pl.DataFrame:
    """Read a TREC run into memory, parsing the file once (see :func:`scan_run`)."""
    return _read(path, RUN_FIELDS, _RUN_SCHEMA, validate)


@validate_params({"path": PATH, "validate": FLAG})
def read_qrels(path: str | Path, *, validate: bool = True) -> pl.DataFrame:
    """Read TREC qrels into memory, parsing the file once (see :func:`scan_qrels`)."""
    return _read(path, QRELS_FIELDS, _QRELS_SCHEMA, validate)


@validate_params({"data": Frame("polars"), "relevance": COLUMN, "pool": COLUMN})
def pool_unjudged(
    data: pl.DataFrame | pl.LazyFrame,
    *,
    relevance: str = "relevance",
    pool: str = "pooled",
) -> pl.DataFrame | pl.LazyFrame:
    """Read negative qrels judgments as trec_eval does for infAP: pooled, not judged.

    trec_eval reads a qrels relevance < 0 as "in the judgment pool but not judged"
    and a document absent from the qrels as "outside the pool"; only ``infAP`` tells
    them apart. ``evaluate`` refuses negative relevance, so this turns a long frame
    (e.g. ``join(run, qrels)``, negative judgments kept) into one it accepts: the
    relevance of a negative judgment becomes null (unjudged) and a boolean column
    ``pool`` is true for every row with a judgment in the qrels (negative ones
    included), false for the rows without one. Evaluate with
    ``inf_ap(pool=<pool>)`` (``"infAP(pool=pooled)"`` under
    ``conventions="trec_eval"`` or ``"ir_measures"``); every other metric reads the
    null relevance as unjudged, as before. A query whose judgments are all negative
    then has no judged row, so it is not one of ``users="truth"``/``"both"``;
    trec_eval scores it 0 (it has no relevant document): pass its id in ``users=`` to
    average it in.

    Examples
    --------
    >>> import polars as pl
    >>> import polars_rankeval as prk
    >>> run = pl.DataFrame({"user": ["q"] * 3, "item": ["a", "u", "c"],
    ...                     "score": [3.0, 2.0, 1.0]})
    >>> qrels = pl.DataFrame({"user": ["q"] * 3, "item": ["a", "u", "c"],
    ...                       "relevance": [1, -1, 1]})
    >>> data = pool_unjudged(prk.join(run, qrels, relevance="relevance"))
    >>> data.sort("score", descending=True).rows()
    [('q', 'a', 3.0, 1, True), ('q', 'u', 2.0, None, True), ('q', 'c', 1.0, 1, True)]
    >>> round(prk.evaluate(data, "infAP(pool=pooled)", conventions="trec_eval")[0, 0], 4)
    1.0
    """
    if not isinstance(data, pl.DataFrame | pl.LazyFrame):
        msg = f"data must be a polars DataFrame or LazyFrame, got {type(data).__name__}"
        raise TypeError(msg)
    names = data.collect_schema().names()
    if relevance not in names:
        msg = f"relevance column {relevance!r} not found in the data; columns: {names}"
        raise ValueError(msg)
    if pool in names:
        msg = f"the pool column {pool!r} is already a column of the data; pass another pool="
        raise ValueError(msg)
    rel = pl.col(relevance)
    return data.with_columns(
        pl.when(rel >= 0).then(rel).alias(relevance), rel.is_not_null().alias(pool)
    )


@validate_params({"path": PATH, "validate": FLAG})
def read_diversity_qrels(path: str | Path, *, validate: bool = True) -> pl.DataFrame:
    """Read TREC diversity qrels into memory (see :func:`scan_diversity_qrels`)."""
    schema = {"user": pl.String, "subtopic": pl.String, "item": pl.String, "relevance": pl.Int64}
    return _read(path, DIVERSITY_QRELS_FIELDS, schema, validate)


@validate_params(
    {
        "frame": Frame("polars"),
        "path": PATH,
        "tag": Text("a run tag (str)"),
        "user": COLUMN,
        "item": COLUMN,
        "score": COLUMN,
    }
)
def write_run(
    frame: pl.DataFrame | pl.LazyFrame,
    path: str | Path,
    *,
    tag: str = "polars_rankeval",
    user: str = "user",
    item: str = "item",
    score: str = "score",
) -> None:
    """Write recommendations as a TREC run, ranked by score within each user.

    Ranks are 1-based positions after ordering by score descending, then item
    descending (trec_eval's order); rows with a null score are left out. Scores are
    written exactly: integers and decimals as their digits, floats as the shortest text
    that reads back to the same 64-bit float (a Float32 score as its exact Float64
    value). Readers (:func:`read_run`, trec_eval) read a score as a 64-bit float, so the
    file reads back to the same ranking, with the same values for float scores.

    Parameters
    ----------
    frame
        One row per (user, item) with a score.
    path
        The file to write; nothing is written when the frame is refused.
    tag
        The run tag (last field of every line): a non-empty string without white space.
    user, item, score
        The columns of the query id, the document id and the score.

    Raises
    ------
    TypeError
        A score column that is not numeric (integer, float or decimal); a tag that is
        not a string.
    ValueError
        An id or tag that would not read back (see :func:`write_qrels`), named with its
        row (counted from 0, as ``frame.row``); an item twice for one user (trec_eval
        refuses the file); two distinct scores of one user that are
        the same 64-bit float (integers beyond 2**53, decimals with more than about 16
        significant digits), which every reader would tie: rank them first, e.g.
        ``pl.col("score").rank("dense").over("user")``.
    """
    _check_text(tag, "tag")
    schema = frame.lazy().collect_schema()
    dtype = schema.get(score)
    if dtype is not None and not (dtype.is_integer() or dtype.is_float() or dtype.is_decimal()):
        msg = f"score column {score!r} must be numeric (integer, float or decimal), got {dtype}"
        raise TypeError(msg)
    data = _ids_and(frame, user, item, score, "score")
    _check_ids(data, {"user": user, "item": item}, "run")
    twice = data.filter(pl.struct("user", "item").is_duplicated())
    if twice.height:
        first = twice.filter(
            (pl.col("user") == twice["user"][0]) & (pl.col("item") == twice["item"][0])
        )
        msg = (
            f"item {twice['item'][0]!r} of user {twice['user'][0]!r} is in rows "
            f"{first[_ROW][0]} and {first[_ROW][1]}; trec_eval refuses a run that lists a "
            "document twice for one query"
        )
        raise ValueError(msg)
    if dtype is not None and dtype.is_float():
        data = data.with_columns(pl.col("score").cast(pl.Float64))
    else:
        _check_distinct_floats(data, score)
    out = data.sort(["user", "score", "item"], descending=[False, True, True]).select(
        "user",
        pl.lit("Q0").alias("q0"),
        "item",
        pl.int_range(1, pl.len() + 1).over("user").alias("rank"),
        "score",
        pl.lit(tag).alias("tag"),
    )
    _write_lines(out, path)


@validate_params(
    {
        "frame": Frame("polars"),
        "path": PATH,
        "user": COLUMN,
        "item": COLUMN,
        "relevance": COLUMN,
    }
)
def write_qrels(
    frame: pl.DataFrame | pl.LazyFrame,
    path: str | Path,
    *,
    user: str = "user",
    item: str = "item",
    relevance: str = "relevance",
) -> None:
    r"""Write judgments as a TREC qrels file (rows with a null relevance are left out).

    Relevance is written as an integer, as trec_eval reads it (C's ``atol``): integer and
    boolean columns (1/0) as they are, floats and decimals when every value is integral
    (``2.0`` is written ``2``). A fractional grade is refused, not truncated: round or
    map the grades first (e.g. ``pl.col("relevance").round()``).

    Ids must read back: an id that is null or empty, or contains white space (ASCII's or
    Unicode's: some readers split fields on either) or a NUL character, is refused with a
    ``ValueError`` naming its row (counted from 0, as ``frame.row``); so is a query id
    starting with ``#`` (trec_eval reads the line as a comment) or with a byte order
    mark (readers drop it at the start of a file).

    Raises
    ------
    TypeError
        A relevance column that is not numeric or boolean.
    ValueError
        An id that would not read back, a relevance that is not an integer or does not
        fit a 64-bit integer (NaN, 1e30), named with its row.
    """
    schema = frame.lazy().collect_schema()
    dtype = schema.get(relevance)
    if dtype is not None and not (
        dtype.is_integer() or dtype.is_float() or dtype.is_decimal() or dtype == pl.Boolean
    ):
        msg = (
            f"relevance column {relevance!r} must be numeric (integer, float, decimal or "
            f"boolean), got {dtype}"
        )
        raise TypeError(msg)
    data = _ids_and(frame, user, item, relevance, "relevance")
    _check_ids(data, {"user": user, "item": item}, "qrels")
    rel = pl.col("relevance")
    as_int = rel.cast(pl.Int64, strict=False)
    if dtype is not None and dtype != pl.Boolean:
        bad = data.filter(as_int.is_null() | (as_int.cast(dtype) != rel)).head(1)
        if bad.height:
            row, user_id, item_id, value = bad.row(0)
            msg = (
                f"relevance {value!r} in row {row} (user {user_id!r}, item {item_id!r}) is not "
                "a 64-bit integer; trec_eval reads relevance as one (C's atol): round "
                f"or map the grades first (e.g. pl.col({relevance!r}).round())"
            )
            raise ValueError(msg)
    out = data.sort(["user", "item"]).select(
        "user", pl.lit("0").alias("iter"), "item", as_int.alias("relevance")
    )
    _write_lines(out, path)


_ROW = "__prk_row"


def _ids_and(
    frame: pl.DataFrame | pl.LazyFrame, user: str, item: str, value: str, name: str
) -> pl.DataFrame:
    """``row, user, item`` (ids as String) and ``value`` as ``name``, rows with a value."""
    return (
        frame.lazy()
        .select(
            pl.col(user).cast(pl.String).alias("user"),
            pl.col(item).cast(pl.String).alias("item"),
            pl.col(value).alias(name),
        )
        .with_row_index(_ROW)
        .filter(pl.col(name).is_not_null())
        .collect()
    )


def _text_problems(value: pl.Expr, *, first: bool) -> list[tuple[pl.Expr, str]]:
    """Conditions under which a field does not read back from a TREC file, with their text.

    ``first``: the line's first field (the query id), which trec_eval reads as a comment
    when it starts with ``#``, and whose leading byte order mark readers drop.
    """
    problems = [
        (value.is_null(), "is null"),
        (value == "", "is empty"),
        (value.str.contains(r"\s"), "contains white space, which separates the fields"),
        (value.str.contains("\x00", literal=True), "contains a NUL character"),
    ]
    if first:
        problems += [
            (value.str.starts_with("#"), "starts with '#' (trec_eval skips the line as a comment)"),
            (
                value.str.starts_with("\ufeff"),
                "starts with a byte order mark (U+FEFF), which readers drop at a file's start",
            ),
        ]
    return problems


def _check_text(text: object, name: str) -> None:
    """A field written as given (the run tag): a string that reads back."""
    if not isinstance(text, str):
        msg = f"{name} must be a str, got {type(text).__name__}"
        raise TypeError(msg)
    frame = pl.DataFrame({name: [text]}, schema={name: pl.String})
    for bad, problem in _text_problems(pl.col(name), first=False):
        if frame.select(bad).item():
            msg = f"{name} {text!r} {problem}; TREC readers would not read it back"
            raise ValueError(msg)


def _check_ids(data: pl.DataFrame, columns: dict[str, str], kind: str) -> None:
    """Raise a ValueError naming the first row whose user or item id would not read back.

    ``columns`` maps ``user``/``item`` to the caller's column names (for the message).
    """
    checks = {role: _text_problems(pl.col(role), first=role == "user") for role in columns}
    bad = pl.any_horizontal([c for problems in checks.values() for c, _ in problems])
    first = data.filter(bad).head(1)
    if not first.height:
        return
    for role, problems in checks.items():
        for condition, problem in problems:
            if first.select(condition).item() is True:
                value, row = first[role].item(), first[_ROW].item()
                msg = (
                    f"{role} id {value!r} in row {row} {problem} (column {columns[role]!r}); "
                    f"TREC {kind} readers would not read it back"
                )
                raise ValueError(msg)


def _check_distinct_floats(data: pl.DataFrame, score: str) -> None:
    """Refuse two distinct integer or decimal scores of a user that are one 64-bit float.

    Readers parse the written digits as a double: such scores would read back as a tie.
    """
    value = pl.col("score")
    if data.schema["score"].is_integer():
        limit = 2**53  # every integer up to 2**53 in magnitude is a distinct double
        if not data.select(((value > limit) | (value < -limit)).any()).item():
            return
    text = value.cast(pl.String)
    clash = (
        data.group_by("user", text.cast(pl.Float64).alias("__prk_float"))
        .agg(text.sort_by(value, descending=True).unique(maintain_order=True).head(2))
        .filter(pl.col("score").list.len() > 1)
        .head(1)
    )
    if clash.height:
        user, as_float, (high, low) = clash.row(0)
        msg = (
            f"scores {high} and {low} of user {user!r} are distinct but read back as the "
            f"same 64-bit float {as_float!r} (TREC readers, read_run and trec_eval, read "
            "scores as doubles), so the file would tie them; rank them first, e.g. "
            f"pl.col({score!r}).rank('dense').over(<user column>)"
        )
        raise ValueError(msg)


def _write_lines(frame: pl.DataFrame, path: str | Path) -> None:
    """Write the lines whole or not at all (a failed write keeps the old file)."""
    write_atomically(
        path, lambda p: frame.write_csv(p, separator=" ", include_header=False, quote_style="never")
    )


# --------------------------------------------------------------------------- trec_eval's reader
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
) -> pl.DataFrame | None:
    """The common, clean file: one space (or one tab) between exactly ``width`` fields.

    Returns the fields ``keep`` (0-based) as columns ``column_<k + 1>`` (String, or the
    type ``typed`` gives a field when every value of it parses as that type; a field
    that does not keeps String), or ``None`` (use the general reader) unless every line
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
            schema = {f"column_{k + 1}": types.get(k, pl.String()) for k in range(width)}
            # the fields kept, and per line whether any field is null or it is a comment
            flag = pl.any_horizontal(pl.all().is_null()) | pl.col("column_1").str.starts_with("#")
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


@validate_params({"source": [PATH, Instance(bytes, what="the file's bytes")]})
def read_trec_eval_run(source: str | Path | bytes) -> tuple[pl.DataFrame, str]:
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

    Returns
    -------
    tuple[polars.DataFrame, str]
        Columns ``qid``, ``docno`` (String) and ``sim`` (Float64), in file order, and the
        run id.

    Examples
    --------
    >>> frame, runid = read_trec_eval_run(b"# a run\n q1 Q0 d1 1 1e-3 tagA extra\n")
    >>> frame.rows(), runid
    ([('q1', 'd1', 0.001)], 'tagA')
    """
    fast_source = _fast_source(source, "run")
    # the rank field is not used; read as an integer it costs less than as a string
    # the run id is the last line's tag: the tags are not kept (read off the last line)
    fast = _fast_fields(fast_source, 6, (0, 2, 4), typed={3: pl.Int64(), 4: pl.Float64()})
    if fast is not None:
        tag = _last_field(fast_source, 5)
        frame = fast.select(
            pl.col("column_1").alias("qid"),
            pl.col("column_3").alias("docno"),
            _atof_column(fast, "column_5").alias("sim"),
        )
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
