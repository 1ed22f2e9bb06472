"""Input conversion and validation: every bad input gets a precise error."""

from __future__ import annotations

from typing import Any

import polars as pl

from polars_rankeval._types import Columns

_ORDER_DTYPES = "a numeric dtype"


def to_lazy(data: Any, what: str = "data") -> tuple[pl.LazyFrame, bool]:
    """Convert Polars, pyarrow or pandas input to a LazyFrame; return (frame, was_eager)."""
    if isinstance(data, pl.LazyFrame):
        return data, False
    if isinstance(data, pl.DataFrame):
        return data.lazy(), True
    module = type(data).__module__.split(".")[0]
    if module in ("pyarrow", "pandas"):
        frame = pl.from_arrow(data) if module == "pyarrow" else pl.from_pandas(data)
        if isinstance(frame, pl.Series):
            frame = frame.to_frame()
        return frame.lazy(), True
    msg = (
        f"{what} must be a polars DataFrame or LazyFrame, a pyarrow Table or a pandas "
        f"DataFrame, got {type(data).__name__}"
    )
    raise TypeError(msg)


def check_schema(schema: pl.Schema, cols: Columns, by: list[str]) -> None:
    """Check that every named column exists and has a usable dtype.

    The user, item, score/rank and relevance columns must be four different columns,
    and by-columns none of them.
    """
    roles = {
        "user": cols.user,
        "item": cols.item,
        "rank" if cols.rank is not None else "score": cols.order,
        "relevance": cols.relevance,
    }
    seen: dict[str, str] = {}
    for role, column in roles.items():
        if column in seen:
            msg = (
                f"the {seen[column]} and {role} columns are both {column!r}; each role "
                "needs a column of its own"
            )
            raise ValueError(msg)
        seen[column] = role
    for column in by:
        if column in (cols.user, cols.item, cols.order, cols.relevance):
            msg = (
                f"by column {column!r} is also the user, item, score/rank or relevance "
                "column; by= names extra grouping columns such as 'system'"
            )
            raise ValueError(msg)
    if len(set(by)) != len(by):
        msg = f"by columns must be distinct, got {by!r}"
        raise ValueError(msg)
    names = [cols.user, cols.item, cols.order, cols.relevance, *by]
    for name in names:
        if name not in schema:
            available = ", ".join(schema.names()) or "none"
            msg = f"column {name!r} not found in the data; available columns: {available}"
            raise ValueError(msg)
    role = "rank" if cols.rank is not None else "score"
    for column, label in ((cols.order, role), (cols.relevance, "relevance")):
        dtype = schema[column]
        if not (dtype.is_numeric() or (label == "relevance" and dtype == pl.Boolean)):
            msg = f"{label} column {column!r} must have {_ORDER_DTYPES}, got {dtype}"
            raise TypeError(msg)
    for column in (cols.user, cols.item):
        dtype = schema[column]
        if dtype.is_float() or dtype.is_nested() or dtype == pl.Null:
            msg = f"id column {column!r} must hold integer, string or categorical ids, got {dtype}"
            raise TypeError(msg)


def check_values(lf: pl.LazyFrame, cols: Columns, by: list[str]) -> None:
    """One pass over the data: nulls in ids, NaN/inf order values, bad relevance, duplicates."""
    stats, dups = value_checks(lf, cols, by)
    found, dup = pl.collect_all([stats, dups])
    raise_on_problems(lf, cols, by, found, dup)


def value_checks(
    lf: pl.LazyFrame, cols: Columns, by: list[str]
) -> tuple[pl.LazyFrame, pl.LazyFrame]:
    """The two queries of :func:`check_values`: counts of each problem, duplicate rows.

    For callers that collect them together with other queries over the same rows.
    """
    order = pl.col(cols.order)
    is_float = lf.collect_schema()[cols.order].is_float()
    rel = pl.col(cols.relevance).cast(pl.Float64)
    checks: dict[str, pl.Expr] = {
        "null_user": pl.col(cols.user).null_count(),
        "null_item": pl.col(cols.item).null_count(),
        "bad_order": (order.is_nan() | order.is_infinite()).sum() if is_float else pl.lit(0),
        "nan_rel": rel.is_nan().sum(),
        "inf_rel": rel.is_infinite().sum(),
        "neg_rel": (rel < 0).sum(),
        "n_rows": pl.len(),
    }
    for column in by:
        checks[f"null_by:{column}"] = pl.col(column).null_count()
    if cols.rank is not None:
        checks["bad_rank"] = (order < 1).sum()
    # A hash group_by finds duplicate keys about 3x faster than is_duplicated on a struct.
    # Named apart from the key columns (one of them may be called "len").
    count = "__prk_count"
    while count in (*by, cols.user, cols.item):
        count += "_"
    key_counts = lf.group_by([*by, cols.user, cols.item]).agg(pl.len().alias(count))
    dups = key_counts.select(pl.col(count).filter(pl.col(count) > 1).sum().alias("dup"))
    return lf.select(**checks), dups


def problem_templates(cols: Columns, by: list[str]) -> list[tuple[str, str]]:
    """The value checks in reporting order: (key, message template with ``{n}``).

    Shared by the Polars checks and :mod:`polars_rankeval.spark`, so both engines
    report the same first problem with the same words.
    """
    role = "rank" if cols.rank is not None else "score"
    return [
        ("null_user", f"user column {cols.user!r} has {{n}} null value(s)"),
        ("null_item", f"item column {cols.item!r} has {{n}} null value(s)"),
        ("bad_order", f"{role} column {cols.order!r} has {{n}} NaN or infinite value(s)"),
        ("nan_rel", f"relevance column {cols.relevance!r} has {{n}} NaN value(s)"),
        ("inf_rel", f"relevance column {cols.relevance!r} has {{n}} infinite value(s)"),
        ("neg_rel", f"relevance column {cols.relevance!r} has {{n}} negative value(s)"),
        ("bad_rank", f"rank column {cols.order!r} has {{n}} value(s) below 1"),
        (
            "dup",
            f"{{n}} rows share a ({', '.join([*by, cols.user, cols.item])}) key with another "
            "row; each (user, item) must appear once",
        ),
    ] + [(f"null_by:{c}", f"by column {c!r} has {{n}} null value(s)") for c in by]


def raise_on_problems(
    lf: pl.LazyFrame, cols: Columns, by: list[str], stats: pl.DataFrame, dups: pl.DataFrame
) -> None:
    """Raise the first problem found by :func:`value_checks`, with example rows."""
    found = stats.row(0, named=True)
    found["dup"] = dups.item()
    problems = problem_templates(cols, by)
    for key, template in problems:
        count = found.get(key, 0) or 0
        if count:
            example = _example(lf, cols, by, key)
            raise ValueError(template.format(n=count) + example)


def _example(lf: pl.LazyFrame, cols: Columns, by: list[str], key: str) -> str:
    """A short excerpt of offending rows, to make the error actionable."""
    order = pl.col(cols.order)
    rel = pl.col(cols.relevance).cast(pl.Float64)
    predicate = {
        "null_user": pl.col(cols.user).is_null(),
        "null_item": pl.col(cols.item).is_null(),
        "bad_order": order.cast(pl.Float64).is_nan() | order.cast(pl.Float64).is_infinite(),
        "nan_rel": rel.is_nan(),
        "inf_rel": rel.is_infinite(),
        "neg_rel": rel < 0,
        "bad_rank": order < 1,
        "dup": pl.struct([*by, cols.user, cols.item]).is_duplicated(),
    }.get(key)
    if predicate is None:
        return ""
    rows = lf.filter(predicate).head(3).collect().rows(named=True)
    return f"; e.g. {rows}"
