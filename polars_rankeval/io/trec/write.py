"""TREC run and qrels files written from Polars frames, and the checks that they read back.

The writers refuse what a TREC reader would read differently: an id that is empty, holds
white space or a NUL, a query id starting with ``#`` or a byte order mark, scores that
collide as 64-bit floats, relevance that is not a 64-bit integer.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from polars_rankeval._utils.constraints import (
    COLUMN,
    PATH,
    Frame,
    Text,
    validate_params,
)
from polars_rankeval._utils.files import write_atomically


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
