"""TREC run and qrels files read into Polars frames, lazily (``scan_*``) or at once (``read_*``).

Fields are split on ASCII white space by a regular expression inside Polars (or Polars'
CSV reader for files with one separator between fields); with ``validate=True`` each
line's field count and numeric fields are checked and a bad line is named.
:func:`pool_unjudged` turns trec_eval's negative judgments into a pool column.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl

from polars_rankeval._utils.constraints import (
    COLUMN,
    FLAG,
    PATH,
    Frame,
    validate_params,
)

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
