"""Sampled negatives for sampled evaluation: each user's positives plus m random items.

:func:`sample_negatives` builds the candidate frame of a *sampled* evaluation
(Krichene & Rendle, "On Sampled Metrics for Item Recommendation", KDD 2020): for each
user, the positives of the truth plus ``n_negatives`` items drawn uniformly without
replacement from the catalog minus the user's positives (and minus ``exclude``, e.g.
the training history). The model scores these candidates, and
:func:`polars_rankeval.evaluate_sampled` reports the sampled metrics beside estimates
of the full-catalog metrics.

The draws are a counter-based random generator written as Polars expressions
(SplitMix64, Steele et al. 2014, in wrapping ``UInt64`` arithmetic), so no per-user
Python runs and the negatives do not depend on row order, on lazy or eager input, or
on the other users: a user's negatives are a function of the seed, the user id, the
sorted catalog and the user's excluded items.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any, Literal, overload

import numpy as np
import polars as pl

from polars_rankeval._utils.constraints import (
    COLUMN,
    Frame,
    Instance,
    Integer,
    ListOf,
    Options,
    validate_params,
)
from polars_rankeval._utils.stack import user_stacklevel
from polars_rankeval._utils.ties import id_order
from polars_rankeval._utils.types import type_label
from polars_rankeval.metrics.params import Interval
from polars_rankeval.plan.validate import to_lazy

Insufficient = Literal["error", "all"]
INSUFFICIENT: tuple[str, ...] = ("error", "all")

_U64 = pl.UInt64
_MASK = (1 << 64) - 1
_GOLDEN = 0x9E3779B97F4A7C15
_MIX1 = 0xBF58476D1CE4E5B9
_MIX2 = 0x94D049BB133111EB
_MAX_ROUNDS = 30
"""Rounds of draws before the remaining (unlucky) users take the full-pool path."""


class NegativeSamplingWarning(UserWarning):
    """Some users have fewer catalog items to sample from than ``n_negatives``."""


def _u64(value: int) -> pl.Expr:
    return pl.lit(value & _MASK, dtype=_U64)


def mix64(z: pl.Expr) -> pl.Expr:
    """SplitMix64's finaliser on a ``UInt64`` expression (wrapping arithmetic).

    ``z ^= z >> 30; z *= 0xBF58476D1CE4E5B9; z ^= z >> 27; z *= 0x94D049BB133111EB;
    z ^= z >> 31`` (a shift right by s is an unsigned floor division by ``2**s``).
    """
    z = z.xor(z // _u64(1 << 30)) * _u64(_MIX1)
    z = z.xor(z // _u64(1 << 27)) * _u64(_MIX2)
    return z.xor(z // _u64(1 << 31))


def mix64_int(z: int) -> int:
    """The same finaliser on a Python int (the reference for :func:`mix64`)."""
    z &= _MASK
    z = ((z ^ (z >> 30)) * _MIX1) & _MASK
    z = ((z ^ (z >> 27)) * _MIX2) & _MASK
    return z ^ (z >> 31)


def _user_key(dtype: pl.DataType, user: str, seed: int) -> pl.Expr:
    """A user's 64-bit generator state: mix64(id ^ mix64(seed)).

    Integer ids enter as their two's-complement 64-bit pattern (stable across Polars
    versions); other ids through ``Expr.hash`` of their text (stable within a Polars
    version only).
    """
    col = pl.col(user)
    if dtype == pl.UInt64:
        raw = col
    elif dtype.is_integer():
        raw = col.cast(pl.Int64).reinterpret(signed=False)
    else:
        raw = col.cast(pl.String).hash(seed=0)
    return mix64(raw.xor(_u64(mix64_int(seed))))


def _draw(key: pl.Expr, counter: pl.Expr, n: int) -> pl.Expr:
    """Catalog index of draw ``counter`` of the SplitMix64 stream with state ``key``."""
    state = key + (counter.cast(_U64) + _u64(1)) * _u64(_GOLDEN)
    return mix64(state) % _u64(n)


def _as_catalog(catalog: Any, item: str, dtype: pl.DataType) -> pl.DataFrame:
    """The catalog as a sorted frame of distinct items with their index ``_idx``."""
    if isinstance(catalog, pl.LazyFrame | pl.DataFrame):
        if item not in catalog.collect_schema().names():
            msg = f"catalog has no column {item!r}"
            raise ValueError(msg)
        series = catalog.lazy().select(item).collect().to_series()
    elif isinstance(catalog, pl.Series):
        series = catalog
    elif isinstance(catalog, Sequence | np.ndarray) and not isinstance(catalog, str):
        series = pl.Series(item, catalog)
    else:
        msg = (
            "catalog must be a polars Series, DataFrame or LazyFrame (with the item "
            f"column) or a sequence of items, got {type_label(catalog)}"
        )
        raise TypeError(msg)
    if series.len() == 0:
        msg = "catalog is empty"
        raise ValueError(msg)
    if series.null_count():
        msg = f"catalog has {series.null_count()} null item(s)"
        raise ValueError(msg)
    if series.dtype != dtype:
        if series.dtype.is_integer() and dtype.is_integer():
            series = series.cast(dtype, strict=True)
        elif not (series.dtype == pl.String and isinstance(dtype, pl.Categorical)):
            msg = (
                f"catalog items are {series.dtype} but the truth's {item!r} column is "
                f"{dtype}; give the catalog in the same id type"
            )
            raise TypeError(msg)
    items = series.alias(item).unique().to_frame().sort(id_order(item))  # by text (Enum too)
    return items.with_row_index("_idx").with_columns(pl.col("_idx").cast(_U64))


def _frame_columns(lf: pl.LazyFrame, what: str, names: Sequence[str]) -> pl.Schema:
    schema = lf.collect_schema()
    for name in names:
        if name not in schema:
            msg = f"{what} has no column {name!r} (columns: {schema.names()})"
            raise ValueError(msg)
    return schema


@overload
def sample_negatives(
    truth: pl.LazyFrame,
    *,
    n_negatives: int,
    catalog: Any,
    seed: int = ...,
    exclude: Any = ...,
    user: str = ...,
    item: str = ...,
    relevance: str = ...,
    insufficient: Insufficient = ...,
) -> pl.LazyFrame: ...
@overload
def sample_negatives(
    truth: pl.DataFrame | Any,
    *,
    n_negatives: int,
    catalog: Any,
    seed: int = ...,
    exclude: Any = ...,
    user: str = ...,
    item: str = ...,
    relevance: str = ...,
    insufficient: Insufficient = ...,
) -> pl.DataFrame: ...
@validate_params(
    {
        "truth": Frame(),
        "n_negatives": Integer(Interval(1, None)),
        "catalog": [
            Instance(
                pl.Series,
                pl.DataFrame,
                pl.LazyFrame,
                what="a polars Series, DataFrame or LazyFrame (with the item column)",
            ),
            ListOf(what="a sequence of items"),
        ],
        "seed": Integer(),
        "exclude": [Frame(), None],
        "user": COLUMN,
        "item": COLUMN,
        "relevance": COLUMN,
        "insufficient": Options.of(Insufficient),
    }
)
def sample_negatives(
    truth: Any,
    *,
    n_negatives: int,
    catalog: Any,
    seed: int = 0,
    exclude: Any = None,
    user: str = "user",
    item: str = "item",
    relevance: str = "relevance",
    insufficient: Insufficient = "error",
) -> pl.DataFrame | pl.LazyFrame:
    """Each user's positives plus ``n_negatives`` items sampled from the catalog.

    For every user of ``truth``, the rows of ``truth`` (its positives, with their
    relevance) and ``n_negatives`` catalog items drawn uniformly without replacement
    among the catalog items that are neither in the user's truth nor in ``exclude``
    for that user, with relevance 0. The result is the candidate frame of a sampled
    evaluation: score it with the model, then pass it to
    :func:`polars_rankeval.evaluate_sampled` (or :func:`polars_rankeval.evaluate`).

    **Determinism.** A user's negatives are the first ``n_negatives`` distinct
    eligible items of the user's own random stream: draw ``j = 0, 1, 2, ...`` is
    catalog item number ``mix64(key + (j + 1) * 0x9E3779B97F4A7C15) mod n`` of the
    sorted distinct catalog, where ``key = mix64(id ^ mix64(seed))`` and ``mix64`` is
    SplitMix64's finaliser (modulo bias below ``n / 2**64``). Draws of excluded or
    already drawn items are rejected, which makes the sample uniform without
    replacement. Everything is Polars expressions: rounds of draws over all the
    pending users at once (a handful of rounds, no per-user Python). So the same seed
    gives the same negatives between runs, for a DataFrame or a LazyFrame, whatever
    the row order, the catalog order or the other users. For integer user ids the
    stream uses the id's 64-bit pattern and wrapping ``UInt64`` arithmetic, so it is
    stable across Polars versions too; for string (or categorical) ids the key comes
    from ``Expr.hash``, which Polars keeps stable within a version only. A user whose
    eligible pool is at most twice ``n_negatives`` (rare) instead gets the
    ``n_negatives`` eligible items with the smallest ``mix64(key + (idx + 1) *
    0x9E3779B97F4A7C15)`` (idx: the item's catalog index), drawn in one step;
    deterministic the same way.

    Parameters
    ----------
    truth
        The positives: one row per (user, item), with an optional relevance column
        (absent: every row has relevance 1). Polars DataFrame or LazyFrame, pyarrow
        Table or pandas DataFrame. Every row is kept, whatever its relevance, and its
        item is never drawn as a negative of that user.
    n_negatives
        Negatives per user (m), at least 1.
    catalog
        The items negatives are drawn from: a Series, a sequence, or a frame with the
        ``item`` column; taken as a set (duplicates count once), in the truth's id
        type (integer widths are converted).
    seed
        Seed of the random streams (any int, taken modulo ``2**64``).
    exclude
        Optional (user, item) pairs never drawn as negatives of that user (e.g. the
        training interactions, so that seen items are not negatives); other columns
        are ignored.
    user, item, relevance
        Column names (of ``truth``, ``exclude``, ``catalog`` and the result).
    insufficient
        What happens when a user has fewer eligible items than ``n_negatives``:
        ``"error"`` (default) raises a ``ValueError`` naming the count and one such
        user; ``"all"`` gives that user every eligible item and warns
        (:class:`NegativeSamplingWarning`) with the number of such users.

    Returns
    -------
    polars.DataFrame or polars.LazyFrame
        Columns ``user``, ``item``, ``relevance`` (the truth's relevance type; Int64
        without one), sorted by user; each user's positives first (by item), then the
        negatives in draw order. A LazyFrame for a LazyFrame input (computed by the
        call: the rounds of draws need the counts of the previous round).

    Examples
    --------
    >>> import polars as pl
    >>> import polars_rankeval as prk
    >>> truth = pl.DataFrame({"user": [1, 2], "item": [3, 7]})
    >>> cands = prk.sample_negatives(truth, n_negatives=3, catalog=range(10), seed=42)
    >>> cands.group_by("user").agg(pl.len(), pl.col("relevance").sum()).sort("user")
    shape: (2, 3)
    ┌──────┬─────┬───────────┐
    │ user ┆ len ┆ relevance │
    │ ---  ┆ --- ┆ ---       │
    │ i64  ┆ u32 ┆ i64       │
    ╞══════╪═════╪═══════════╡
    │ 1    ┆ 4   ┆ 1         │
    │ 2    ┆ 4   ┆ 1         │
    └──────┴─────┴───────────┘
    >>> again = prk.sample_negatives(truth.reverse(), n_negatives=3, catalog=range(10), seed=42)
    >>> cands.equals(again)  # the same negatives, whatever the row order
    True
    """
    n_negatives = int(n_negatives)
    if isinstance(catalog, range):
        catalog = list(catalog)
    truth_lf, eager = to_lazy(truth, "truth")
    schema = _frame_columns(truth_lf, "truth", [user, item])
    has_relevance = relevance in schema
    rel_dtype = schema[relevance] if has_relevance else pl.Int64
    if has_relevance and not rel_dtype.is_numeric():
        msg = f"truth column {relevance!r} must be numeric, got {rel_dtype}"
        raise TypeError(msg)
    cat = _as_catalog(catalog, item, schema[item])
    n = cat.height
    seed = int(seed) & _MASK

    positives = truth_lf.select(
        user,
        item,
        (pl.col(relevance) if has_relevance else pl.lit(1, dtype=pl.Int64)).alias(relevance),
    ).collect()
    _check_ids(positives, "truth", user, item)
    dup = positives.select(pl.struct(user, item).is_duplicated().sum()).item()
    if dup:
        msg = f"truth has {dup} rows with a duplicated ({user!r}, {item!r}) pair"
        raise ValueError(msg)
    pairs = positives.select(user, item)
    if exclude is not None:
        ex_lf, _ = to_lazy(exclude, "exclude")
        ex_schema = _frame_columns(ex_lf, "exclude", [user, item])
        for name in (user, item):
            if ex_schema[name] != schema[name] and not (
                ex_schema[name].is_integer() and schema[name].is_integer()
            ):
                msg = (
                    f"exclude column {name!r} is {ex_schema[name]} but the truth's is "
                    f"{schema[name]}"
                )
                raise TypeError(msg)
        ex = ex_lf.select(pl.col(user).cast(schema[user]), pl.col(item).cast(schema[item]))
        ex_df = ex.collect()
        _check_ids(ex_df, "exclude", user, item)
        pairs = pl.concat([pairs, ex_df.join(pairs.select(user).unique(), on=user, how="semi")])
    # Excluded catalog items per user: the pool is the rest of the catalog.
    excluded = pairs.unique().join(cat, on=item, how="inner")
    key = _user_key(schema[user], user, seed)
    users = (
        positives.select(user)
        .unique()
        .join(excluded.group_by(user).agg(pl.len().alias("_excl")), on=user, how="left")
        .with_columns(
            _pool=pl.lit(n, dtype=pl.Int64) - pl.col("_excl").fill_null(0).cast(pl.Int64),
            _key=key,
        )
    )
    short = users.filter(pl.col("_pool") < n_negatives)
    if short.height:
        example = short.sort("_pool", user).row(0, named=True)
        if insufficient == "error":
            msg = (
                f"n_negatives={n_negatives} is more than the catalog items available to "
                f"{short.height} user(s) (e.g. user {example[user]!r}: {example['_pool']} "
                f"of {n} catalog items are neither positives nor excluded); lower "
                "n_negatives or pass insufficient='all'"
            )
            raise ValueError(msg)
        warnings.warn(
            f"{short.height} user(s) have fewer than n_negatives={n_negatives} catalog "
            f"items available (e.g. user {example[user]!r}: {example['_pool']}); they get "
            "all of them",
            NegativeSamplingWarning,
            stacklevel=user_stacklevel(),
        )
    users = users.with_columns(_need=pl.min_horizontal("_pool", pl.lit(n_negatives, pl.Int64)))
    users = users.filter(pl.col("_need") > 0)
    small = users.filter(pl.col("_pool") <= 2 * pl.col("_need"))
    streamed = users.filter(pl.col("_pool") > 2 * pl.col("_need"))
    chosen, leftover = _draw_rounds(streamed, cat, excluded, user, item, n)
    small = pl.concat([small, leftover]) if leftover.height else small
    parts = [chosen]
    if small.height:
        parts.append(_draw_pool(small, cat, excluded, user, item))
    negatives = pl.concat(parts).sort(id_order(user), "_j")
    result = pl.concat(
        [
            positives.sort(id_order(user), id_order(item)),
            negatives.select(user, item, pl.lit(0).cast(rel_dtype).alias(relevance)),
        ]
    ).sort(id_order(user), maintain_order=True)
    return result if eager else result.lazy()


def _check_ids(frame: pl.DataFrame, what: str, user: str, item: str) -> None:
    for name in (user, item):
        nulls = frame.get_column(name).null_count()
        if nulls:
            msg = f"{what} column {name!r} has {nulls} null(s)"
            raise ValueError(msg)


def _draw_rounds(
    users: pl.DataFrame, cat: pl.DataFrame, excluded: pl.DataFrame, user: str, item: str, n: int
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """First ``_need`` distinct eligible items of each user's stream, in rounds.

    Each round draws a block of the stream for every pending user (sized from the
    user's pool so that one round usually suffices), rejects excluded items, keeps the
    first occurrence of each item, and cuts each user at ``_need``; users still short
    continue from the end of their block. A (user, item) pair is one ``UInt64``
    ``_u * n + _idx`` (``_u``: the user's row here), so rejection and de-duplication are
    single-column hash lookups. Returns (user, item, _j) and the users left after
    ``_MAX_ROUNDS`` rounds.
    """
    users = users.sort(user).with_row_index("_u").with_columns(pl.col("_u").cast(_U64))
    nn = _u64(n)
    excl = (
        excluded.join(users.select(user, "_u"), on=user, how="inner")
        .join(cat, on=item, how="inner")
        .select(_ck=pl.col("_u") * nn + pl.col("_idx"))
        .to_series()
    )
    items = cat.get_column(item)
    chosen = pl.DataFrame(schema={"_u": _U64, "_ck": _U64, "_j": pl.Int64})
    pending = users.select("_u", "_key", "_pool", "_need", _start=pl.lit(0, pl.Int64))
    for _ in range(_MAX_ROUNDS):
        if pending.height == 0:
            break
        have = chosen.group_by("_u").agg(_have=pl.len())
        block = (
            pending.join(have, on="_u", how="left")
            .with_columns(_have=pl.col("_have").fill_null(0).cast(pl.Int64))
            .with_columns(
                _len=(
                    (pl.col("_need") - pl.col("_have")).cast(pl.Float64)
                    * (n / pl.col("_pool").cast(pl.Float64))
                    * 1.3
                )
                .ceil()
                .cast(pl.Int64)
                + 16
            )
        )
        draws = (
            block.lazy()
            .select(
                "_u", "_key", "_need", _j=pl.int_ranges("_start", pl.col("_start") + pl.col("_len"))
            )
            .explode("_j")
            .select(
                "_u", "_need", "_j", _ck=pl.col("_u") * nn + _draw(pl.col("_key"), pl.col("_j"), n)
            )
            .filter(~pl.col("_ck").is_in(excl.implode()))
        )
        if chosen.height:  # later rounds: this user's earlier picks come first
            previous = chosen.join(block.select("_u", "_need"), on="_u", how="inner")
            names = draws.collect_schema().names()
            draws = pl.concat([previous.lazy().select(names), draws]).sort("_u", "_j")
        # Rows are in (user, draw) order (int_ranges then explode keep it): the first
        # occurrence of a pair is its earliest draw.
        fresh = (
            draws.filter(pl.col("_ck").is_first_distinct())
            .filter(pl.int_range(pl.len()).over("_u") < pl.col("_need"))
            .select("_u", "_ck", "_j")
            .collect()
        )
        chosen = pl.concat([chosen.join(block.select("_u"), on="_u", how="anti"), fresh])
        counts = fresh.group_by("_u").agg(_got=pl.len())
        pending = (
            block.join(counts, on="_u", how="left")
            .filter(pl.col("_got").fill_null(0) < pl.col("_need"))
            .select("_u", "_key", "_pool", "_need", _start=pl.col("_start") + pl.col("_len"))
        )
    leftover = users.join(pending.select("_u"), on="_u", how="semi").select(
        user, "_key", "_pool", "_need"
    )
    if leftover.height:
        chosen = chosen.join(pending.select("_u"), on="_u", how="anti")
    out = chosen.join(users.select("_u", user), on="_u", how="inner")
    out = out.with_columns(items.gather(out.get_column("_ck") % n).alias(item))
    return out.select(user, item, "_j"), leftover


def _draw_pool(
    users: pl.DataFrame, cat: pl.DataFrame, excluded: pl.DataFrame, user: str, item: str
) -> pl.DataFrame:
    """Users with a small pool: the ``_need`` eligible items of smallest random key."""
    return (
        users.lazy()
        .select(user, "_key", "_need")
        .join(cat.lazy(), how="cross")
        .join(excluded.lazy(), on=[user, item], how="anti")
        .with_columns(_h=mix64(pl.col("_key") + (pl.col("_idx") + _u64(1)) * _u64(_GOLDEN)))
        .filter(pl.struct("_h", "_idx").rank("ordinal").over(user) <= pl.col("_need"))
        .with_columns(_j=pl.struct("_h", "_idx").rank("ordinal").over(user).cast(pl.Int64))
        .select(user, item, "_j")
        .collect()
    )
