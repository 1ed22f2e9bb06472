"""Input conversion and validation: every bad input gets a precise error."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import polars as pl

from polars_rankeval._utils.types import Columns, type_label
from polars_rankeval.plan.interface import Scalar

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
        f"DataFrame, got {type_label(data)}"
    )
    raise TypeError(msg)


_TEXT_IDS = (pl.String, pl.Categorical, pl.Enum)


def id_kind(dtype: pl.DataType) -> str:
    """``"integer"``, ``"text"`` (String, Categorical, Enum) or ``"other"``."""
    if dtype.is_integer():
        return "integer"
    if isinstance(dtype, _TEXT_IDS):
        return "text"
    return "other"


def common_id_dtype(
    name: str, left: pl.DataType, right: pl.DataType, labels: tuple[str, str] = ("recs", "truth")
) -> pl.DataType:
    """The dtype two id columns are compared in, or a ``TypeError``.

    One rule for :func:`polars_rankeval.join`, :func:`polars_rankeval.overlap` and the
    command line: the same dtype; integers of different widths (the lossless common
    integer type); strings and categoricals (as strings). Anything else -- integers
    against strings, floats -- is refused, because a silent cast would compare ``"1.0"``
    with ``"1"`` or ``"007"`` with ``"7"`` and match nothing.
    """
    if left == right:
        return left
    kinds = (id_kind(left), id_kind(right))
    if kinds == ("integer", "integer"):
        probe = [pl.DataFrame(schema={name: left}), pl.DataFrame(schema={name: right})]
        return pl.concat(probe, how="vertical_relaxed").schema[name]
    if kinds == ("text", "text"):
        return pl.String()
    msg = (
        f"column {name!r} has dtype {left} in {labels[0]} but {right} in {labels[1]}; cast "
        "one of them"
    )
    if "other" in kinds:
        msg += " (ids must be integers or strings: a float id such as 1.0 is usually a parsing "
        msg += "artefact)"
    else:
        msg += (
            f" (integer and string ids are never compared as text: '007' would not match 7), "
            f"e.g. pl.col({name!r}).cast(pl.String)"
        )
    raise TypeError(msg)


def align_ids(
    left: pl.LazyFrame,
    right: pl.LazyFrame,
    names: list[str],
    labels: tuple[str, str] = ("recs", "truth"),
) -> tuple[pl.LazyFrame, pl.LazyFrame]:
    """Cast the id columns ``names`` of two frames to their common dtype.

    See :func:`common_id_dtype` for the rule.
    """
    left_schema, right_schema = left.collect_schema(), right.collect_schema()
    for name in names:
        target = common_id_dtype(name, left_schema[name], right_schema[name], labels)
        if left_schema[name] != target:
            left = left.with_columns(pl.col(name).cast(target))
        if right_schema[name] != target:
            right = right.with_columns(pl.col(name).cast(target))
    return left, right


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


def raising_on_collect(
    result: pl.LazyFrame, counts: pl.LazyFrame, check: Callable[[pl.DataFrame], None]
) -> pl.LazyFrame:
    """``result`` behind a guard: ``check`` reads ``counts`` at collect time and raises.

    ``counts``: a small frame of problem counts, a branch of the same query. A
    ``map_batches`` over it calls ``check`` (which raises on a problem) and returns no
    rows; it is concatenated before the result, so that a slice of the result (head)
    still runs it, and nothing is read before ``collect``. The Python callback sees
    only the counts.
    """
    schema = result.collect_schema()

    def run(found: pl.DataFrame) -> pl.DataFrame:
        check(found)
        return pl.DataFrame(schema=schema)

    guard = counts.map_batches(
        run,
        schema=schema,
        predicate_pushdown=False,
        projection_pushdown=False,
        slice_pushdown=False,
    )
    return pl.concat([guard, result], how="vertical")


def checked_on_collect(
    result: pl.LazyFrame, lf: pl.LazyFrame, cols: Columns, by: list[str]
) -> pl.LazyFrame:
    """``result`` with the value checks of ``lf`` in its plan: they raise at collect time.

    The checks (:func:`value_checks`) become a branch of the result's query
    (:func:`raising_on_collect`) that raises the first problem as
    :func:`check_values` would. Both branches read ``lf``; Polars evaluates them in
    one query, so a scanned source is read once (common subplan elimination).
    """
    stats, dups = value_checks(lf, cols, by)
    return raising_on_collect(
        result,
        stats.join(dups, how="cross"),
        lambda found: raise_on_problems(lf, cols, by, found, found.select("dup")),
    )


def raise_on_counts(counts: pl.DataFrame, lf: pl.LazyFrame, cols: Columns, by: list[str]) -> None:
    """Raise the first problem when folded counts (``bad``, ``dup``) found any.

    ``counts``: the one-row frame of :func:`polars_rankeval.plan.head.check_counts` (rows
    failing any row check, rows beyond the first of each key). Any problem: the full
    checks run on ``lf`` (:func:`check_values`) and raise it with the same message and
    examples as without folding; none (the usual case): nothing more is read.
    """
    if counts.height and any(counts.row(0)):
        check_values(lf, cols, by)


def guarded(
    result: pl.LazyFrame, counts: pl.LazyFrame, lf: pl.LazyFrame, cols: Columns, by: list[str]
) -> pl.LazyFrame:
    """``result`` behind a guard on folded check counts: they raise at collect time.

    As :func:`checked_on_collect`, but the counts (:func:`raise_on_counts`) come from
    the evaluation's own aggregation (a cached branch of the same query), so the
    checks add no second pass over the rows.
    """
    return raising_on_collect(result, counts, lambda found: raise_on_counts(found, lf, cols, by))


def row_checks(schema: pl.Schema, cols: Columns, by: list[str]) -> dict[str, Scalar]:
    """The row-level value checks as counts any engine computes (see :func:`problem_templates`)."""
    rel = cols.relevance
    checks = {
        "null_user": Scalar("count", cols.user, "null"),
        "null_item": Scalar("count", cols.item, "null"),
        "nan_rel": Scalar("count", rel, "nan", as_float=True),
        "inf_rel": Scalar("count", rel, "inf", as_float=True),
        "neg_rel": Scalar("count", rel, "below", 0.0, as_float=True),
    }
    if schema[cols.order].is_float():
        checks["bad_order"] = Scalar("count", cols.order, "nan_or_inf", as_float=True)
    for column in by:
        checks[f"null_by:{column}"] = Scalar("count", column, "null")
    if cols.rank is not None:
        checks["bad_rank"] = Scalar("count", cols.order, "below", 1.0)
    return checks


def row_screen(schema: pl.Schema, cols: Columns, by: list[str]) -> list[pl.Expr]:
    """The row-level checks of :func:`row_checks` as data-wide reductions.

    Each expression is one boolean: ``True`` when some row may fail a check (then
    :func:`check_values` runs and reports the problem with its usual message and
    examples; a false alarm costs that pass and reports nothing). Checks the dtype
    makes impossible are left out (NaN or infinite relevance of an integer or
    boolean column, negative relevance of an unsigned or boolean one), and the
    others are the cheapest reductions that see the problem:

    - nulls in ids: ``null_count`` (kept in the chunks' metadata: free on a frame in
      memory);
    - NaN or infinite floats: the column's ``sum`` is not finite (a NaN or an
      infinity makes it NaN or infinite; an overflow of huge finite values is a false
      alarm): one pass with no mask, cheaper than ``is_infinite``, ``is_finite`` or
      ``nan_max``;
    - negative relevance, ranks below 1: ``any`` of the comparison, on the column
      as it is (no Float64 copy of an integer column).
    """
    found: list[pl.Expr] = [pl.col(c).null_count() > 0 for c in (cols.user, cols.item, *by)]
    order, rel = pl.col(cols.order), pl.col(cols.relevance)
    order_dtype, rel_dtype = schema[cols.order], schema[cols.relevance]

    def not_finite(x: pl.Expr) -> pl.Expr:
        return ~x.sum().is_finite()

    if order_dtype.is_float():
        found.append(not_finite(order))
    if cols.rank is not None:
        found.append((order < 1).any())
    if rel_dtype.is_float():
        found.append(not_finite(rel) | (rel < 0).any())
    elif rel_dtype.is_signed_integer():
        found.append((rel < 0).any())
    elif not (rel_dtype.is_unsigned_integer() or rel_dtype == pl.Boolean):
        # Decimal and any other numeric dtype: the row checks' own Float64 reading.
        value = rel.cast(pl.Float64)
        found.append(not_finite(value) | (value < 0).any())
    # Named apart (two reductions may read one column); null (no values): no problem.
    return [problem.fill_null(False).alias(f"__prk_screen{i}") for i, problem in enumerate(found)]


def value_checks(
    lf: pl.LazyFrame, cols: Columns, by: list[str]
) -> tuple[pl.LazyFrame, pl.LazyFrame]:
    """The two queries of :func:`check_values`: counts of each problem, duplicate rows.

    For callers that collect them together with other queries over the same rows.
    """
    checks = row_checks(lf.collect_schema(), cols, by)
    counts = {key: check.polars() for key, check in checks.items()}
    # Duplicate keys: per (by, user), its rows minus its distinct items. Counting within
    # each user's group hashes the items of one user at a time, cheaper than a group_by
    # on (by, user, item) or is_duplicated on a struct; the number of rows sharing a key, which
    # the message reports, is counted only when there is a duplicate (raise_on_problems).
    # Named apart from the key columns (one of them may be called "len").
    count = _free_name("__prk_count", [*by, cols.user, cols.item])
    extra = pl.len() - pl.col(cols.item).n_unique()
    per_user = lf.group_by([*by, cols.user]).agg(extra.cast(pl.Int64).alias(count))
    dups = per_user.select(pl.col(count).sum().alias("dup"))
    return lf.select(**counts, n_rows=pl.len()), dups


def problem_templates(cols: Columns, by: list[str]) -> list[tuple[str, str]]:
    """The value checks in reporting order: (key, message template with ``{n}``).

    Shared by the Polars checks and :mod:`polars_rankeval.api.spark`, so both engines
    report the same first problem with the same words.
    """
    role = "rank" if cols.rank is not None else "score"
    return [
        ("null_user", f"user column {cols.user!r} has {{n}} null value(s)"),
        ("null_item", f"item column {cols.item!r} has {{n}} null value(s)"),
        ("bad_order", f"{role} column {cols.order!r} has {{n}} NaN or infinite value(s)"),
        ("nan_rel", f"relevance column {cols.relevance!r} has {{n}} NaN value(s)"),
        ("inf_rel", f"relevance column {cols.relevance!r} has {{n}} infinite value(s)"),
        (
            "neg_rel",
            f"relevance column {cols.relevance!r} has {{n}} negative value(s) (trec_eval's "
            "qrels -1, 'pooled but not judged': polars_rankeval.trec.pool_unjudged turns "
            "them into null relevance and a pool column for inf_ap(pool=))",
        ),
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
    if found["dup"]:  # rows beyond the first of each key: count the rows sharing a key
        found["dup"] = _rows_sharing_a_key(lf, cols, by)
    raise_first_problem(found, cols, by, lambda key: _example(lf, cols, by, key))


def raise_first_problem(
    counts: Mapping[str, Any], cols: Columns, by: list[str], example: Callable[[str], str]
) -> None:
    """Raise the first problem with a non-zero count, in the order of the checks.

    ``counts`` maps the keys of :func:`problem_templates` to counts; without a
    ``"dup"`` count (not counted yet) the problems reported after duplicates are not
    looked at. ``example(key)`` gives the text appended to the message (offending
    rows). Every engine reports its problems through this function.
    """
    for key, template in problem_templates(cols, by):
        if key == "dup" and counts.get("dup") is None:
            return
        count = counts.get(key, 0) or 0
        if count:
            raise ValueError(template.format(n=count) + example(key))


def _rows_sharing_a_key(lf: pl.LazyFrame, cols: Columns, by: list[str]) -> int:
    count = _free_name("__prk_count", [*by, cols.user, cols.item])
    key_counts = lf.group_by([*by, cols.user, cols.item]).agg(pl.len().alias(count))
    shared = key_counts.select(pl.col(count).filter(pl.col(count) > 1).sum())
    return int(shared.collect().item() or 0)


MAX_BY_SUGGESTION = 1000
"""A column is suggested as ``by=`` for duplicates only with at most this many values."""


def top_duplicates(lf: pl.LazyFrame, cols: Columns, by: list[str]) -> pl.LazyFrame:
    """The (up to) 3 keys with the most rows, with their count in ``__prk_n``.

    Keys hold one user each, so the top keys of disjoint groups of whole users, sorted
    again, give the top keys of all of them (:func:`sort_duplicates`).
    """
    keys = [*by, cols.user, cols.item]
    count = _free_name("__prk_n", keys)
    counts = lf.group_by(keys).agg(pl.len().alias(count))
    return sort_duplicates(counts.filter(pl.col(count) > 1), keys)


def sort_duplicates(top: pl.LazyFrame, keys: list[str]) -> pl.LazyFrame:
    """The 3 keys with the most rows first (then by key); the count is the other column."""
    count = next(c for c in top.collect_schema().names() if c not in keys)
    return top.sort([count, *keys], descending=[True, *([False] * len(keys))]).head(3)


def duplicate_details(
    top: pl.DataFrame,
    schema: pl.Schema,
    cols: Columns,
    by: list[str],
    rows_of: Callable[[dict[str, Any]], list[dict[str, Any]]],
    scalars: Callable[[dict[str, Scalar]], dict[str, Any]],
) -> str:
    """Duplicate pairs (each key with up to 3 of its rows) and a ``by=`` hint.

    ``top``: :func:`top_duplicates`; ``rows_of(key)``: up to 3 rows whose columns equal
    the key's values; ``scalars``: an engine's data-wide aggregates.
    """
    keys = [*by, cols.user, cols.item]
    count = next(c for c in top.columns if c not in keys)
    examples = []
    for found in top.iter_rows(named=True):
        n = found[count]
        key = {k: found[k] for k in keys}
        examples.append((key, n, rows_of(key)))
    candidates = by_candidates(schema, cols, by)
    stats: dict[str, int] = {}
    if candidates:
        wanted = {"rows": Scalar("len")}
        for c in candidates:
            wanted[f"key:{c}"] = Scalar("n_unique", (*keys, c))
            wanted[f"values:{c}"] = Scalar("n_unique", c)
        stats = {name: int(value) for name, value in scalars(wanted).items()}
    return format_duplicates(examples) + format_by_hint(stats, candidates, by)


def _duplicates(lf: pl.LazyFrame, cols: Columns, by: list[str]) -> str:
    """Real duplicate pairs (up to 3 keys, each with its rows) and a ``by=`` hint."""
    schema = lf.collect_schema()
    top = top_duplicates(lf, cols, by).collect()

    def rows_of(key: dict[str, Any]) -> list[dict[str, Any]]:
        match = lf.filter(pl.all_horizontal(pl.col(c) == v for c, v in key.items()))
        return match.head(3).collect().rows(named=True)

    def scalars(wanted: dict[str, Scalar]) -> dict[str, Any]:
        exprs = {name: scalar.polars() for name, scalar in wanted.items()}
        return lf.select(**exprs).collect().row(0, named=True)

    return duplicate_details(top, schema, cols, by, rows_of, scalars)


def _free_name(name: str, taken: list[str]) -> str:
    while name in taken:
        name += "_"
    return name


def by_candidates(schema: pl.Schema, cols: Columns, by: list[str]) -> list[str]:
    """Columns that could name systems or segments (integer, boolean or text; 20 at most)."""
    own = {cols.user, cols.item, cols.order, cols.relevance, *by}
    return [
        c
        for c, dtype in schema.items()
        if c not in own
        and (dtype.is_integer() or dtype == pl.Boolean or isinstance(dtype, _TEXT_IDS))
    ][:20]


def format_duplicates(examples: list[tuple[dict[str, Any], int, list[dict[str, Any]]]]) -> str:
    """``; e.g. (user=1, item=2) appears 2 times: [rows]; ...`` for (key, count, rows).

    Shared by the Polars checks and :mod:`polars_rankeval.api.spark`; the rows of a key are
    shown sorted (by their text), so both engines print the same message.
    """
    shown = []
    for key, n, rows in examples:
        label = ", ".join(f"{c}={v!r}" for c, v in key.items())
        shown.append(f"({label}) appears {n} times: {sorted(rows, key=repr)}")
    return "; e.g. " + "; ".join(shown)


def format_by_hint(stats: dict[str, int], candidates: list[str], by: list[str]) -> str:
    """Suggest a ``by=`` column that makes every (by, user, item) key unique.

    ``stats``: ``rows`` (the number of rows), ``key:<c>`` (distinct (by, user, item, c))
    and ``values:<c>`` (distinct values of c, null included) for each candidate c.
    """
    if not candidates:
        return ""
    # A system or segment column has few values: at most MAX_BY_SUGGESTION and at most
    # half the rows (a timestamp or a row id also makes rows unique, but is no grouping).
    limit = min(MAX_BY_SUGGESTION, stats["rows"] // 2)
    fits = sorted(
        (
            c
            for c in candidates
            if stats[f"key:{c}"] == stats["rows"] and stats[f"values:{c}"] <= limit
        ),
        key=lambda c: stats[f"values:{c}"],
    )
    if not fits:
        return ""
    best = fits[0]
    value = repr([*by, best]) if by else repr(best)
    flags = " ".join(f"--by {c}" for c in [*by, best])
    others = f" (so does {', '.join(map(repr, fits[1:3]))})" if len(fits) > 1 else ""
    return (
        f". Column {best!r} makes every row unique{others}: if it names systems or "
        f"segments, pass by={value} ({flags} on the command line)"
    )


def _example(lf: pl.LazyFrame, cols: Columns, by: list[str], key: str) -> str:
    """A short excerpt of offending rows, to make the error actionable."""
    if key == "dup":
        return _duplicates(lf, cols, by)
    if key.startswith("null_by:"):
        return ""
    predicate = row_checks(lf.collect_schema(), cols, by)[key].predicate()
    rows = lf.filter(predicate).head(3).collect().rows(named=True)
    return f"; e.g. {rows}"
