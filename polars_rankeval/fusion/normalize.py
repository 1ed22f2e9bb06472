"""Score normalisations applied to each run before fusion, as Polars expressions.

Each is computed per (run, user) list, as ranx defines it (``ranx.normalization``),
plus ``dbsf`` (Qdrant's distribution-based score fusion: the mean plus or minus three
sample standard deviations mapped to 0 and 1). ``rank`` and ``borda`` read positions;
``borda`` also gives every item another run retrieved for the user (the query's
candidates) a score in this run (:func:`borda_fill`).
"""

from __future__ import annotations

from typing import Literal, get_args

import polars as pl

Norm = Literal["borda", "dbsf", "max", "min-max", "min-max-inverted", "rank", "sum", "zmuv"]
NORMS: tuple[str, ...] = tuple(sorted(get_args(Norm)))
EPS = 1e-9
"""ranx's floor of every denominator (a list of equal scores divides by it)."""

LIST = ["_r", "_u"]


def norm_expr(norm: str | None) -> pl.Expr:
    """The normalised score of a row of the stacked runs (``_s`` before, ``_raw``)."""
    s = pl.col("_s")
    lo, hi = s.min().over(LIST), s.max().over(LIST)
    if norm is None:
        return s
    if norm == "min-max":
        return (s - lo) / pl.max_horizontal(hi - lo, pl.lit(EPS))
    if norm == "min-max-inverted":
        return (hi - s) / pl.max_horizontal(hi - lo, pl.lit(EPS))
    if norm == "max":
        return s / pl.max_horizontal(hi, pl.lit(EPS))
    if norm == "sum":
        total = s.sum().over(LIST) - lo * pl.col("_n")
        return (s - lo) / pl.max_horizontal(total, pl.lit(EPS))
    if norm == "zmuv":
        return (s - s.mean().over(LIST)) / pl.max_horizontal(s.std(ddof=0).over(LIST), pl.lit(EPS))
    if norm == "rank":
        return 1.0 - pl.col("_p") / pl.col("_n")
    if norm == "borda":
        return 1.0 - pl.col("_p") / pl.col("_nc")
    if norm == "dbsf":
        sd = s.std(ddof=1).over(LIST)
        low = s.mean().over(LIST) - 3.0 * sd
        return pl.when((pl.col("_n") < 2) | (sd == 0.0)).then(0.5).otherwise((s - low) / (6.0 * sd))
    msg = f"norm must be one of {list(NORMS)!r} or None, got {norm!r}"
    raise ValueError(msg)


def check_norm(norm: object, where: str = "norm") -> str | None:
    """``norm`` if it names a normalisation (or is ``None``); a ``ValueError`` otherwise."""
    if norm is None or (isinstance(norm, str) and norm in NORMS):
        return norm  # type: ignore[return-value]
    msg = f"{where} must be one of {list(NORMS)!r} or None, got {norm!r}"
    raise ValueError(msg)


def fill(
    rows: pl.LazyFrame, runs: pl.LazyFrame, value: pl.Expr, *, only: list[str] | None = None
) -> pl.LazyFrame:
    """Rows for every (run, user, candidate item) a run lacks, with score ``value``.

    The candidates of a user are the items any run retrieved for it; ``value`` may read
    ``_n`` (the run's list length for the user, 0 when it has none) and ``_nc`` (the
    number of candidates). ``only``: the runs to fill (all when ``None``).
    """
    candidates = rows.select("_u", "_i", "_nc").unique(["_u", "_i"])
    wanted = runs if only is None else runs.filter(pl.col("_r").is_in(only))
    lengths = rows.group_by(LIST).agg(pl.len().cast(pl.Int64).alias("_n"))
    missing = (
        candidates.join(wanted, how="cross")
        .join(rows.select("_r", "_u", "_i"), on=["_r", "_u", "_i"], how="anti")
        .join(lengths, on=LIST, how="left")
        .with_columns(pl.col("_n").fill_null(0))
    )
    added = missing.select(
        "_u",
        "_i",
        "_r",
        "_w",
        pl.lit(None, pl.Float64).alias("_raw"),
        value.cast(pl.Float64).alias("_s"),
        pl.lit(None, pl.Int64).alias("_p"),
        "_n",
        "_nc",
    )
    return pl.concat([rows, added], how="diagonal_relaxed")


def borda_value() -> pl.Expr:
    """The Borda score (ranx's) of an item a run lacks: ``0.5 - (n - 1) / (2 nc)``."""
    return 0.5 - (pl.col("_n") - 1) / (2.0 * pl.col("_nc"))
