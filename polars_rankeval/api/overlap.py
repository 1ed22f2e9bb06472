"""How well recommendations and ground truth match: ids, users, items, rows.

Recommendations and truth whose ids do not meet (ids read as integers in one file and
as text in the other, ``"007"`` against ``7``, users of another data set) give
all-zero metrics that look like a bad recommender. :func:`overlap` counts what
matches; :func:`join` warns with :class:`OverlapWarning` when the overlap is empty or
tiny (see :func:`overlap_problems` for the thresholds).
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Sequence
from typing import Any

import polars as pl

from polars_rankeval._utils.constraints import COLUMN, COLUMNS, Frame, validate_params
from polars_rankeval._utils.stack import user_stacklevel
from polars_rankeval.plan.validate import align_ids, to_lazy

LOGGER = logging.getLogger("polars_rankeval")

TINY_SHARE = 0.01
"""The overlap is *tiny* when fewer than this share of the truth's users, or of the
truth's distinct items, occur in the recommendations (of a ``by`` group)."""

OVERLAP_COLUMNS: tuple[str, ...] = (
    "truth_users",
    "recs_users",
    "users_matched",
    "truth_items",
    "recs_items",
    "items_matched",
    "truth_rows",
    "recs_rows",
    "rows_matched",
)


class OverlapWarning(UserWarning):
    """Recommendations and ground truth (almost) do not match: metrics will be ~0.

    Raised as a warning by :func:`polars_rankeval.join` (and printed by the command
    line) when no user, no item or no (user, item) row of the recommendations is in
    the truth, or when fewer than 1% of the truth's users or items are; silence it
    with ``warnings.filterwarnings("ignore", category=prk.OverlapWarning)``.
    """


@validate_params(
    {"recs": Frame(), "truth": Frame(), "user": COLUMN, "item": COLUMN, "by": [*COLUMNS, None]}
)
def overlap(
    recs: Any,
    truth: Any,
    *,
    user: str = "user",
    item: str = "item",
    by: str | Sequence[str] | None = None,
) -> pl.DataFrame:
    """Count the users, items and rows of the recommendations found in the truth.

    Reads both inputs once (a LazyFrame is collected). The id columns follow the same
    rule as :func:`polars_rankeval.join`: the same dtype, integers of different
    widths, or strings and categoricals; anything else is a ``TypeError``.

    Parameters
    ----------
    recs
        Recommendations: user and item columns, plus any ``by`` columns.
    truth
        Ground truth: user and item columns.
    user, item
        Column names (the same in both).
    by
        Columns of ``recs`` naming systems or segments: one row per group.

    Returns
    -------
    polars.DataFrame
        The by-columns, then ``truth_users``, ``recs_users``, ``users_matched`` (distinct
        users in both), ``truth_items``, ``recs_items``, ``items_matched`` (distinct
        truth items recommended to anyone), ``truth_rows``, ``recs_rows`` and
        ``rows_matched`` (recommended rows whose (user, item) is in the truth).

    Examples
    --------
    >>> import polars as pl
    >>> import polars_rankeval as prk
    >>> recs = pl.DataFrame({"user": [1, 1, 9], "item": [10, 11, 10], "score": [3, 2, 1]})
    >>> truth = pl.DataFrame({"user": [1, 2], "item": [11, 12]})
    >>> prk.overlap(recs, truth).row(0, named=True)  # doctest: +NORMALIZE_WHITESPACE
    {'truth_users': 2, 'recs_users': 2, 'users_matched': 1, 'truth_items': 2,
     'recs_items': 2, 'items_matched': 1, 'truth_rows': 2, 'recs_rows': 3,
     'rows_matched': 1}
    """
    recs_lf, _ = to_lazy(recs, "recs")
    truth_lf, _ = to_lazy(truth, "truth")
    by_cols = [by] if isinstance(by, str) else list(by or [])
    for frame, schema, needed in (
        ("recs", recs_lf.collect_schema(), [*by_cols, user, item]),
        ("truth", truth_lf.collect_schema(), [user, item]),
    ):
        for name in needed:
            if name not in schema:
                msg = (
                    f"column {name!r} not found in {frame}; available columns: "
                    f"{', '.join(schema.names()) or 'none'}"
                )
                raise ValueError(msg)
    recs_lf, truth_lf = align_ids(recs_lf, truth_lf, [user, item])
    return overlap_query(recs_lf, truth_lf, user, item, by_cols).collect()


def overlap_query(
    recs: pl.LazyFrame, truth: pl.LazyFrame, user: str, item: str, by: list[str]
) -> pl.LazyFrame:
    """The lazy query of :func:`overlap` (ids already aligned, columns checked)."""
    in_recs, in_truth = flag_names({user, item, *by})
    flagged = flagged_join(
        recs.select(*by, user, item), truth.select(user, item), user, item, by, in_recs, in_truth
    )
    return overlap_from_joined(flagged, user, item, by, in_recs, in_truth)


def flag_names(taken: set[str]) -> tuple[str, str]:
    """Two internal column names (row from the recs, row from the truth), not in ``taken``."""
    return _free("in_recs", taken), _free("in_truth", taken)


def flagged_join(
    recs: pl.LazyFrame,
    truth: pl.LazyFrame,
    user: str,
    item: str,
    by: list[str],
    in_recs: str,
    in_truth: str,
) -> pl.LazyFrame:
    """The full outer join of :func:`polars_rankeval.join`, with a flag for each side."""
    recs = recs.with_columns(pl.lit(True).alias(in_recs))
    truth = truth.with_columns(pl.lit(True).alias(in_truth))
    keys = [user, item]
    if by:
        truth = recs.select(by).unique().join(truth, how="cross")
        keys = [*by, *keys]
    return recs.join(truth, on=keys, how="full", coalesce=True, nulls_equal=False)


def overlap_from_joined(
    joined: pl.LazyFrame, user: str, item: str, by: list[str], in_recs: str, in_truth: str
) -> pl.LazyFrame:
    """The counts of :func:`overlap` from the flagged join (no other pass over the data).

    One aggregation per user and one per item (is it in the recs, in the truth), then
    sums; a user (item) is matched when it is on both sides.
    """
    r = pl.col(in_recs).fill_null(False)
    t = pl.col(in_truth).fill_null(False)
    rows = joined.group_by(by).agg(
        t.sum().alias("truth_rows"), r.sum().alias("recs_rows"), (r & t).sum().alias("rows_matched")
    ) if by else joined.select(
        t.sum().alias("truth_rows"), r.sum().alias("recs_rows"), (r & t).sum().alias("rows_matched")
    )  # fmt: skip
    parts = [rows]
    for column, kind in ((user, "users"), (item, "items")):
        sides = joined.group_by([*by, column]).agg(r.any().alias("r"), t.any().alias("t"))
        counts = [
            pl.col("t").sum().alias(f"truth_{kind}"),
            pl.col("r").sum().alias(f"recs_{kind}"),
            (pl.col("r") & pl.col("t")).sum().alias(f"{kind}_matched"),
        ]
        parts.append(sides.group_by(by).agg(counts) if by else sides.select(counts))
    out = parts[0]
    for part in parts[1:]:
        out = out.join(part, on=by, how="left") if by else pl.concat([out, part], how="horizontal")
    if by:
        out = out.sort(by)
    return out.select(*by, *(pl.col(c).cast(pl.Int64) for c in OVERLAP_COLUMNS))


def _free(name: str, taken: set[str]) -> str:
    """An internal column name that is none of the user's columns."""
    candidate = f"__prk_{name}"
    while candidate in taken:
        candidate += "_"
    return candidate


def overlap_problems(row: dict[str, Any]) -> list[str]:
    """What is wrong with one row of :func:`overlap` (empty when the overlap is fine).

    Empty: no row in the recommendations or the truth, no user, no item or no
    (user, item) row of the recommendations in the truth. Tiny: fewer than
    :data:`TINY_SHARE` (1%) of the truth's users, or of its distinct items, occur in
    the recommendations.
    """
    problems = []
    if not row["recs_rows"]:
        problems.append("the recommendations are empty")
    if not row["truth_rows"]:
        problems.append("the truth is empty")
    if problems:
        return problems
    if not row["users_matched"]:
        problems.append("no user of the recommendations is in the truth")
    elif row["users_matched"] < TINY_SHARE * row["truth_users"]:
        problems.append(
            f"only {row['users_matched']} of the {row['truth_users']} truth users "
            f"({row['users_matched'] / row['truth_users']:.2%}) have recommendations"
        )
    if not row["items_matched"]:
        problems.append("no recommended item is in the truth")
    elif row["items_matched"] < TINY_SHARE * row["truth_items"]:
        problems.append(
            f"only {row['items_matched']} of the {row['truth_items']} truth items "
            f"({row['items_matched'] / row['truth_items']:.2%}) are ever recommended"
        )
    if row["users_matched"] and row["items_matched"] and not row["rows_matched"]:
        problems.append("no recommended (user, item) row is in the truth")
    return problems


def describe(row: dict[str, Any]) -> str:
    """One line: users, items and rows matched."""
    return (
        f"{row['users_matched']} of {row['truth_users']} truth users, "
        f"{row['items_matched']} of {row['truth_items']} truth items and "
        f"{row['rows_matched']} of {row['recs_rows']} recommended rows are in the truth"
    )


def report_overlap(summary: pl.DataFrame, by: list[str]) -> None:
    """Log the overlap of every group; warn with :class:`OverlapWarning` where it is bad."""
    for row in summary.iter_rows(named=True):
        group = ", ".join(f"{c}={row[c]!r}" for c in by)
        where = f" ({group})" if group else ""
        LOGGER.info("join%s: %s", where, describe(row))
        problems = overlap_problems(row)
        if problems:
            msg = (
                f"recommendations and truth barely overlap{where}: {'; '.join(problems)} "
                f"({describe(row)}); metrics will be 0 or undefined. Check that the user "
                "and item ids are of one kind in both (e.g. '007' as text in one and 7 as "
                "an integer in the other)"
            )
            warnings.warn(msg, OverlapWarning, stacklevel=user_stacklevel())
