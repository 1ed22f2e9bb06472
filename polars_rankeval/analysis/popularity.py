"""Item popularity from an interactions (training) frame, for novelty and popularity bias."""

from __future__ import annotations

from typing import Any, Literal

import polars as pl

from polars_rankeval._utils.constraints import (
    COLUMN,
    Frame,
    Instance,
    Number,
    Options,
    validate_params,
)
from polars_rankeval._utils.types import type_label
from polars_rankeval.metrics.params import Interval
from polars_rankeval.plan.validate import to_lazy

PopularityBasis = Literal["users", "interactions"]
BASES: tuple[str, ...] = ("users", "interactions")
Unseen = Literal["zero", "one"]
UNSEEN: tuple[str, ...] = ("zero", "one")


_CATALOG = Instance(
    pl.Series, pl.DataFrame, pl.LazyFrame, what="a polars Series or frame of catalog items"
)


@validate_params(
    {
        "interactions": Frame(),
        "user": COLUMN,
        "item": COLUMN,
        "basis": Options.of(PopularityBasis),
        "catalog": [_CATALOG, None],
        "unseen": [Options.of(Unseen), None],
        "name": COLUMN,
    }
)
def item_popularity(
    interactions: Any,
    *,
    user: str = "user",
    item: str = "item",
    basis: PopularityBasis = "users",
    catalog: pl.Series | pl.DataFrame | pl.LazyFrame | None = None,
    unseen: Unseen | None = None,
    name: str = "popularity",
) -> pl.DataFrame | pl.LazyFrame:
    """Each item's popularity in an interactions frame: one row per item.

    Pass the result as ``items=`` to :func:`polars_rankeval.evaluate` for the
    ``novelty`` and ``popularity_bias`` metrics (they read the column ``name``).

    Parameters
    ----------
    interactions
        The interactions the popularity is measured on (typically the training data):
        one row per interaction with at least the user and item columns (Polars
        DataFrame or LazyFrame, pyarrow Table or pandas DataFrame).
    user, item
        Column names.
    basis
        ``"users"`` (default): the share of the distinct users of ``interactions``
        who interacted with the item at least once, ``|{u : (u, i)}| / |U|``, in
        (0, 1]. ``"interactions"``: the item's share of the interaction rows,
        ``#rows with i / #rows`` (repeated interactions count; the shares sum to 1).
    catalog
        Optional catalog items (a Series, or a frame with the item column): items of
        the catalog without any interaction get popularity 0 (``popularity_bias``
        accepts 0; ``novelty`` raises for it, since ``-log2 0`` is infinite). Without
        it, only items with an interaction are listed, and ``evaluate`` raises for a
        recommended item missing from the table.
    unseen
        The popularity of a catalog item without any interaction (needs ``catalog=``,
        which lists those items): ``"zero"`` (the default with a catalog), or
        ``"one"``: as if one user (``basis="users"``: ``1 / |U|``) or
        one interaction (``basis="interactions"``: ``1 / #rows``) had it -- RecTools'
        ``MeanInvUserFreq`` and RePlay's ``Surprisal`` count cold items as one user,
        so their self-information is finite (``novelty``).
    name
        Name of the popularity column.

    Returns
    -------
    polars.DataFrame or polars.LazyFrame
        Columns ``item`` and ``name`` (Float64), sorted by item; a LazyFrame for a
        LazyFrame input.

    Examples
    --------
    >>> import polars as pl
    >>> import polars_rankeval as prk
    >>> logs = pl.DataFrame({"user": [1, 1, 1, 2, 3], "item": ["a", "a", "b", "a", "c"]})
    >>> prk.item_popularity(logs)
    shape: (3, 2)
    ┌──────┬────────────┐
    │ item ┆ popularity │
    │ ---  ┆ ---        │
    │ str  ┆ f64        │
    ╞══════╪════════════╡
    │ a    ┆ 0.666667   │
    │ b    ┆ 0.333333   │
    │ c    ┆ 0.333333   │
    └──────┴────────────┘
    >>> prk.item_popularity(logs, basis="interactions", catalog=pl.Series(["a", "b", "c", "d"]))
    shape: (4, 2)
    ┌──────┬────────────┐
    │ item ┆ popularity │
    │ ---  ┆ ---        │
    │ str  ┆ f64        │
    ╞══════╪════════════╡
    │ a    ┆ 0.6        │
    │ b    ┆ 0.2        │
    │ c    ┆ 0.2        │
    │ d    ┆ 0.0        │
    └──────┴────────────┘
    """
    if unseen is not None and catalog is None:
        msg = (
            f"unseen={unseen!r} sets the popularity of the catalog's items without "
            "interactions, so it needs catalog= (the items to list, e.g. "
            "catalog=recs['item'] for every recommended item)"
        )
        raise ValueError(msg)
    lf, eager = to_lazy(interactions, "interactions")
    schema = lf.collect_schema()
    needed = [item] if basis == "interactions" else [user, item]
    for column in needed:
        if column not in schema:
            msg = (
                f"column {column!r} not found in interactions; available columns: "
                f"{', '.join(schema.names()) or 'none'}"
            )
            raise ValueError(msg)
    lf = lf.select(needed)
    null_ids = pl.any_horizontal(pl.col(c).is_null() for c in needed).sum()
    if basis == "users":
        counts = lf.unique().group_by(item).agg(pl.len().alias("__n"))
        size = pl.col(user).n_unique()
    else:
        counts = lf.group_by(item).agg(pl.len().alias("__n"))
        size = pl.len()
    stats = lf.select(null_ids.alias("nulls"), size.alias("total")).collect().row(0)
    if stats[0]:
        msg = f"interactions has {stats[0]} row(s) with a null {' or '.join(needed)}"
        raise ValueError(msg)
    total = int(stats[1])
    out = counts.select(item, (pl.col("__n") / max(total, 1)).cast(pl.Float64).alias(name))
    if catalog is not None:
        items = _catalog(catalog, item)
        if items.collect_schema()[item] != schema[item]:
            msg = (
                f"item column {item!r} has dtype {items.collect_schema()[item]} in catalog "
                f"but {schema[item]} in interactions; cast one of them"
            )
            raise TypeError(msg)
        out = (
            items.join(out, on=item, how="full", coalesce=True)
            .with_columns(pl.col(name).fill_null(1.0 / max(total, 1) if unseen == "one" else 0.0))
            .select(item, name)
        )
    out = out.sort(item)
    return out.collect() if eager else out


def _catalog(catalog: Any, item: str) -> pl.LazyFrame:
    if isinstance(catalog, pl.Series):
        return catalog.rename(item).to_frame().lazy().unique()
    if isinstance(catalog, pl.DataFrame | pl.LazyFrame):
        frame = catalog.lazy()
        if item not in frame.collect_schema():
            msg = f"the catalog frame needs an {item!r} column"
            raise ValueError(msg)
        return frame.select(item).unique()
    msg = f"catalog must be a polars Series or frame of items, got {type_label(catalog)}"
    raise TypeError(msg)


@validate_params(
    {
        "interactions": Frame(),
        "user": COLUMN,
        "item": COLUMN,
        "head_share": Number(Interval(0, 1, closed="right")),
        "basis": Options.of(PopularityBasis),
        "catalog": [_CATALOG, None],
        "name": COLUMN,
    }
)
def long_tail_items(
    interactions: Any,
    *,
    user: str = "user",
    item: str = "item",
    head_share: float = 0.8,
    basis: PopularityBasis = "users",
    catalog: pl.Series | pl.DataFrame | pl.LazyFrame | None = None,
    name: str = "long_tail",
) -> pl.DataFrame | pl.LazyFrame:
    """Split the items into the popular short head and the long tail (one row per item).

    The short head is the most popular items that together hold ``head_share`` of the
    interactions: items sorted by their count (descending; ties by item id ascending)
    are taken while the count of the items before them is below ``head_share`` times
    the total, so the item crossing the threshold belongs to the head (Elliot's
    ``Popularity.get_short_head`` with ``pop_ratio``; Abdollahpouri et al. 2019). The
    rest is the long tail. Pass the result as ``items=`` for ``aplt``, ``aclt``,
    ``reo`` and ``rsp`` (they read the column ``name``).

    Parameters
    ----------
    interactions
        The interactions (typically the training data), one row per interaction with
        the user and item columns (Polars, pyarrow or pandas).
    user, item
        Column names.
    head_share
        Share of the interactions the short head holds, in (0, 1]; default 0.8
        (Elliot's default: the popular items holding 80% of the interactions).
    basis
        ``"users"`` (default; Elliot): an item's count is its number of distinct
        users, and the total is the number of distinct (user, item) pairs.
        ``"interactions"``: rows (repeated interactions count).
    catalog
        Optional catalog items (a Series, or a frame with the item column): items
        without any interaction are added with count 0, in the long tail.
    name
        Name of the boolean long-tail column.

    Returns
    -------
    polars.DataFrame or polars.LazyFrame
        Columns ``item``, ``count`` (UInt32) and ``name`` (Boolean), sorted by item.

    Examples
    --------
    >>> import polars as pl
    >>> import polars_rankeval as prk
    >>> logs = pl.DataFrame({"user": [1, 2, 3, 1, 2, 3], "item": ["a", "a", "a", "b", "b", "c"]})
    >>> prk.long_tail_items(logs, head_share=0.5).get_column("long_tail").to_list()
    [False, True, True]

    a holds 3 of the 6 interactions, reaching half of them: the head is {a}.
    """
    lf, eager = to_lazy(interactions, "interactions")
    schema = lf.collect_schema()
    needed = [user, item] if basis == "users" else [item]
    for column in needed:
        if column not in schema:
            msg = (
                f"column {column!r} not found in interactions; available columns: "
                f"{', '.join(schema.names()) or 'none'}"
            )
            raise ValueError(msg)
    rows = lf.select(needed)
    nulls = rows.select(pl.any_horizontal(pl.col(c).is_null() for c in needed).sum()).collect()
    if nulls.item():
        msg = f"interactions has {nulls.item()} row(s) with a null {' or '.join(needed)}"
        raise ValueError(msg)
    if basis == "users":
        rows = rows.unique()
    counts = rows.group_by(item).agg(pl.len().cast(pl.UInt32).alias("count"))
    if catalog is not None:
        items = _catalog(catalog, item)
        counts = items.join(counts, on=item, how="full", coalesce=True).with_columns(
            pl.col("count").fill_null(0)
        )
    ordered = counts.sort(["count", item], descending=[True, False])
    before = pl.col("count").cum_sum() - pl.col("count")
    limit = pl.col("count").sum() * float(head_share)
    out = ordered.with_columns((~(before < limit) | (pl.col("count") == 0)).alias(name)).sort(item)
    out = out.select(item, "count", name)
    return out.collect() if eager else out
