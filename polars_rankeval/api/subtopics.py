"""Subtopic (intent) judgments: from one row per (user, item, subtopic) to a list column.

The intent-aware metrics (``alpha_ndcg``, ``err_ia``, ``nrbp``, ``s_recall``,
``precision_ia``, ``map_ia``; see :mod:`polars_rankeval.metrics.intent`) read each
item's subtopic judgments from a list column of the long frame, which stays one row per
(user, item) so that every other metric, the checks, buckets and Spark see the usual
frame. :func:`group_subtopics` builds that column from a truth with a subtopic column;
:func:`polars_rankeval.join` calls it when given ``subtopic=``.
"""

from __future__ import annotations

from typing import Any

import polars as pl

from polars_rankeval._utils.constraints import COLUMN, Frame, validate_params
from polars_rankeval.metrics._checks import fail_if
from polars_rankeval.plan.validate import to_lazy

SUBTOPICS = "subtopics"
"""The name of the list column (the intent metrics' default ``subtopics=``)."""


@validate_params(
    {
        "truth": Frame(),
        "user": COLUMN,
        "item": COLUMN,
        "subtopic": COLUMN,
        "relevance": [COLUMN, None],
        "output": COLUMN,
    }
)
def group_subtopics(
    truth: Any,
    *,
    user: str = "user",
    item: str = "item",
    subtopic: str = "subtopic",
    relevance: str | None = None,
    output: str = SUBTOPICS,
) -> pl.DataFrame | pl.LazyFrame:
    """One row per (user, item) with its subtopic judgments in a list column.

    Parameters
    ----------
    truth
        One row per (user, item, subtopic), with a relevance column (or none: every
        row relevant, 1).
    user, item, subtopic
        Column names.
    relevance
        The relevance column; ``None``: ``"relevance"`` if the truth has one.
    output
        Name of the list column (``List(Struct{subtopic, relevance})``).

    Returns
    -------
    polars.DataFrame or polars.LazyFrame
        Columns user, item, relevance and ``output``. The item's ``relevance`` is the
        highest of its subtopic judgments: an item relevant to any subtopic is
        relevant to the query (ndeval's rule for its non-intent-aware MAP), so the
        ordinary metrics evaluate the same frame. A DataFrame in, a DataFrame out.

    Raises
    ------
    ValueError
        If a column is missing; a subtopic is null, or a (user, item, subtopic) is
        judged twice (raised when the result is collected, for a LazyFrame).

    Examples
    --------
    >>> import polars as pl
    >>> import polars_rankeval as prk
    >>> qrels = pl.DataFrame({"user": [1, 1, 1], "item": ["d1", "d1", "d2"],
    ...                       "subtopic": [1, 2, 2], "relevance": [1, 0, 1]})
    >>> prk.group_subtopics(qrels).sort("item")["relevance"].to_list()
    [1, 1]
    """
    lf, eager = to_lazy(truth, "truth")
    schema = lf.collect_schema()
    rel_col = relevance if relevance is not None else "relevance"
    needed = [user, item, subtopic, *([relevance] if relevance is not None else [])]
    for name in needed:
        if name not in schema:
            msg = (
                f"column {name!r} not found in truth; available columns: "
                f"{', '.join(schema.names()) or 'none'}"
            )
            raise ValueError(msg)
    grade = pl.col(rel_col) if rel_col in schema else pl.lit(1, dtype=pl.Int32)
    pair = pl.struct(pl.col(subtopic).alias("subtopic"), grade.alias("relevance"))
    grouped = lf.group_by(user, item).agg(
        grade.max().alias(rel_col),
        pair.sort_by(pl.col(subtopic)).alias(output),
        (pl.col(subtopic).null_count() + pl.len() - pl.col(subtopic).drop_nulls().n_unique()).alias(
            "__prk_bad"
        ),
    )

    def message(bad: pl.DataFrame) -> str:
        pairs = bad.select(user, item).sort(user, item).head(5).rows()
        return (
            f"truth column {subtopic!r} is null, or one subtopic is judged twice, for "
            f"({user}, {item}) in {pairs!r}"
        )

    checked = fail_if(grouped, "__prk_bad", message).drop("__prk_bad")
    return checked.collect() if eager else checked
