"""Shared type aliases and the column-name bundle used across the package."""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Integral
from typing import Literal, get_args

import polars as pl

from polars_rankeval._utils.ties import TIE_POLICIES as TIE_POLICIES


def is_spark_frame(value: object) -> bool:
    """``value`` is a Spark DataFrame (classic or Spark Connect); pyspark is not imported."""
    return type(value).__module__.startswith("pyspark.") and hasattr(value, "toArrow")


def type_label(value: object) -> str:
    """The type of ``value`` for an error message, unambiguous among frame libraries.

    ``polars.DataFrame``, ``pandas.DataFrame``, ``pyspark.sql.DataFrame`` (several are
    named ``DataFrame``); builtins bare (``list``). A Spark DataFrame adds where it is
    accepted and how to convert it.
    """
    kind = type(value)
    top = kind.__module__.split(".")[0]
    if is_spark_frame(value):
        return (
            f"pyspark.sql.{kind.__name__} (a Spark DataFrame: evaluate, compare and "
            "compare_per_user accept it; for this function convert it with "
            "polars.from_arrow(df.toArrow()))"
        )
    return kind.__name__ if top == "builtins" else f"{top}.{kind.__name__}"


TiePolicy = Literal["expected", "item_desc", "item_asc", "optimistic", "pessimistic"]
"""How tied scores are ordered.

``"expected"``
    The exact expected value of the metric over all orderings of the tied items
    (McSherry & Najork, 2008). Does not depend on row order.
``"item_desc"``
    Ties broken by item id descending, as trec_eval (and RePlay) do.
``"item_asc"``
    Ties broken by item id ascending.
``"optimistic"``
    The most relevant item first within a tie (an upper bound).
``"pessimistic"``
    The least relevant item first within a tie (a lower bound).

Every deterministic policy is a total order, so row order never matters: within equal
score and equal relevance, ``optimistic`` and ``pessimistic`` put judged rows before
unjudged ones, then order by item id ascending. Item ids order by their value:
integers numerically, String, Categorical and Enum ids alike by their text (never by
an Enum's category order). Each policy is one
:class:`polars_rankeval._utils.ties.Ties` object with its capabilities and tie-break keys
(:data:`polars_rankeval._utils.ties.POLICIES`); this alias names them for type checkers.
"""

EmptyPolicy = Literal["skip", "skip_row", "zero", "error"]
"""What an undefined per-user value (e.g. a user with no relevant item) becomes.

``"skip"``
    The user is left out of the aggregates of that metric only: each metric's mean
    covers the users for which it is defined (``n_users(<metric>)`` in the summary).
``"skip_row"``
    The user is left out of every aggregate of the summary row when any requested
    per-user metric is undefined for it, so that all the means of a row cover the
    same ``n_users - n_skipped`` users.
``"zero"``
    The value counts as 0.
``"error"``
    Raise a ``ValueError`` naming the users.
"""

SummaryForm = Literal["wide", "long"]
"""The shape of the summary: one row per by group, or one row per (by, metric, aggregation)."""

UserUniverse = Literal["truth", "recs", "both", "all"]
"""Which users are evaluated (a sequence of user ids is also accepted)."""

Aggregation = Literal["mean", "gmean", "hmean", "qmean", "median", "std"]
"""How the summary aggregates per-user values (see :func:`polars_rankeval.summarize`)."""

Strategy = Literal["auto", "memory", "buckets", "partition"]
"""How :func:`polars_rankeval.evaluate` runs: one plan in memory, or bucket by bucket."""

AGGREGATIONS: tuple[str, ...] = get_args(Aggregation)
STRATEGIES: tuple[str, ...] = get_args(Strategy)
EMPTY_POLICIES: tuple[str, ...] = get_args(EmptyPolicy)
SUMMARY_FORMS: tuple[str, ...] = get_args(SummaryForm)
USER_UNIVERSES: tuple[str, ...] = get_args(UserUniverse)

FrameLike = pl.DataFrame | pl.LazyFrame


@dataclass(frozen=True)
class Columns:
    """Names of the columns of the long evaluation frame.

    Exactly one of ``score`` (higher is better) and ``rank`` (1 is best) orders the
    items; a null in it marks a judged item that was not recommended.
    """

    user: str = "user"
    item: str = "item"
    score: str | None = "score"
    relevance: str = "relevance"
    rank: str | None = None

    def __post_init__(self) -> None:
        if self.rank is not None and self.score is not None:
            msg = (
                f"pass either score= or rank=, not both (got score={self.score!r}, "
                f"rank={self.rank!r}); use score=None with rank="
            )
            raise ValueError(msg)
        if self.rank is None and self.score is None:
            msg = "one of score= or rank= must name a column"
            raise ValueError(msg)

    @property
    def order(self) -> str:
        """The column that orders the items (score or rank)."""
        return self.rank if self.rank is not None else self.score  # type: ignore[return-value]


def make_columns(
    *,
    user: str = "user",
    item: str = "item",
    score: str | None = None,
    relevance: str = "relevance",
    rank: str | None = None,
) -> Columns:
    """Build a :class:`Columns`; ``score`` defaults to ``"score"`` unless ``rank=`` is given."""
    if rank is None and score is None:
        score = "score"
    return Columns(user=user, item=item, score=score, relevance=relevance, rank=rank)


def check_choice(name: str, value: object, choices: tuple[str, ...]) -> None:
    """Raise a ValueError unless ``value`` is one of ``choices``."""
    if value not in choices:
        msg = f"{name} must be one of {sorted(choices)}, got {value!r}"
        raise ValueError(msg)


def integer(argument: str, value: object, *, what: str = "an integer") -> int:
    """The one type rule of every public integer argument; ``value`` as a Python ``int``.

    A Python or NumPy integer (:class:`numbers.Integral`: ``5``, ``np.int32(5)``) is
    accepted; a bool, a float (even ``5.0``), a string (even ``"5"``) or anything else
    is a ``TypeError`` naming ``argument``: ``"{argument} must be {what}, got
    {type} {value!r}"``. Its range (positive, at least 2, ...) is the caller's check.
    """
    if isinstance(value, bool) or not isinstance(value, Integral):
        text = repr(value)
        text = text if len(text) <= 60 else text[:57] + "..."
        msg = f"{argument} must be {what}, got {type(value).__name__} {text}"
        raise TypeError(msg)
    return int(value)
