"""Data checks that metrics run inside their plans, raising a clear error at collect time.

A kernel never sees the data, and an expression cannot raise; so a metric whose input
can be invalid in a way the engine's validation cannot know (a missing propensity, an
item without a feature vector or a popularity) counts the bad rows into a column of a
small frame of its plan (one row per user or per by group) and passes that frame
through :func:`fail_if`: one vectorised check per frame (per bucket when bucketed),
never a Python call per user.
"""

from __future__ import annotations

from collections.abc import Callable

import polars as pl


def fail_if(
    frame: pl.LazyFrame, count: str, message: Callable[[pl.DataFrame], str]
) -> pl.LazyFrame:
    """``frame`` unchanged, or a ``ValueError`` when a row has ``count > 0``.

    ``message`` receives the offending rows and builds the error text.
    """

    def check(df: pl.DataFrame) -> pl.DataFrame:
        bad = df.filter(pl.col(count) > 0)
        if bad.height:
            raise ValueError(message(bad))
        return df

    # No pushdown through the check: it must see the count column and every row.
    return frame.map_batches(check, streamable=False)


def examples(values: pl.Series, n: int = 5) -> list[object]:
    """A few distinct, sorted values of a column, for an error message."""
    return values.drop_nulls().unique().sort().head(n).to_list()
